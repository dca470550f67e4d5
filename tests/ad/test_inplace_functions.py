"""NumPy functions that write into an argument, differentiated in place: ``out=``,
``np.add.at`` / ``subtract.at`` / ``multiply.at``, ``np.put``, ``np.place``,
``np.putmask``, ``np.put_along_axis``, ``np.fill_diagonal``, ``np.copyto``,
``ndarray.fill`` (reverse, forward and a Hessian-vector product against JAX)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from chainrules.ad import MutationError, NoRuleError, grad, jvp

from .test_inplace import check


def test_ufunc_out_into_traced_array(jax):
    jnp = jax.numpy

    def f(x):
        y = x * 1.0
        np.multiply(y, np.sin(x), out=y)
        np.add(y, x[0], out=y)
        return np.sum(y * y)

    check(f, lambda x: jnp.sum((x * jnp.sin(x) + x[0]) ** 2), jax)


def test_ufunc_out_into_preallocated_plain_array(jax):
    jnp = jax.numpy

    def f(x):
        y = np.empty_like(x)
        np.exp(x, out=y)
        return np.sum(y * x)

    check(f, lambda x: jnp.sum(jnp.exp(x) * x), jax)


def test_ufunc_out_returns_the_written_array():
    def f(x):
        y = x * 1.0
        z = np.multiply(x, 3.0, out=y)
        assert z is y
        return np.sum(z)

    np.testing.assert_allclose(grad(f)(np.ones(3)), 3.0 * np.ones(3))


def test_function_with_out_argument(jax):
    jnp = jax.numpy

    def f(x):
        y = np.zeros(2)
        np.sum(np.outer(x[:2], x[2:]), axis=1, out=y)
        return np.sum(y ** 2)

    check(f, lambda x: jnp.sum(jnp.sum(jnp.outer(x[:2], x[2:]), axis=1) ** 2), jax)


def test_add_at_scatter(jax):
    jnp = jax.numpy
    idx = np.array([0, 2, 0, 1, 2, 2])

    def f(x):
        acc = np.zeros(3)
        np.add.at(acc, idx, np.concatenate([x, x[:2]]))
        return np.sum(acc ** 2)

    check(f, lambda x: jnp.sum(jnp.zeros(3).at[idx].add(jnp.concatenate([x, x[:2]])) ** 2),
          jax)


def test_add_at_and_subtract_at_on_traced_array(jax):
    jnp = jax.numpy
    idx = np.array([1, 1, 3])

    def f(x):
        y = x ** 2
        np.add.at(y, idx, x[:3])
        np.subtract.at(y, [0, 0], x[3])
        return np.sum(y * x)

    def f_jax(x):
        y = (x ** 2).at[idx].add(x[:3]).at[jnp.array([0, 0])].add(-x[3])
        return jnp.sum(y * x)

    check(f, f_jax, jax)


def test_multiply_at_with_repeats_and_zero(jax):
    jnp = jax.numpy

    def f(x):
        y = x + 1.0
        np.multiply.at(y, [0, 0, 2], np.array([x[1], 0.0, x[3]]))
        return np.sum(y * x)

    def f_jax(x):
        y = (x + 1.0).at[0].multiply(x[1] * 0.0).at[2].multiply(x[3])
        return jnp.sum(y * x)

    check(f, f_jax, jax)


def test_other_ufunc_at_error_names_the_method():
    def f(x):
        y = x * 1.0
        np.maximum.at(y, [0], 2.0)
        return np.sum(y)

    with pytest.raises(NoRuleError, match=re.escape("no rule for numpy.maximum.at(")):
        grad(f)(np.ones(2))


def test_put(jax):
    jnp = jax.numpy

    def f(x):
        y = x * 2.0
        np.put(y, [0, 3], x[1:3] ** 2)
        return np.sum(y * y)

    check(f, lambda x: jnp.sum((x * 2.0).at[jnp.array([0, 3])].set(x[1:3] ** 2) ** 2), jax)


def test_place_and_putmask(jax):
    jnp = jax.numpy
    mask = np.array([True, False, True, True])

    def f(x):
        y = x * 1.0
        np.place(y, mask, x[1:3] * 5.0)  # 3 places, 2 values: cycled
        z = x ** 2
        np.putmask(z, mask, np.sin(x))
        return np.sum(y * z)

    def f_jax(x):
        vals = x[1:3] * 5.0
        y = x.at[jnp.array([0, 2, 3])].set(jnp.stack([vals[0], vals[1], vals[0]]))
        z = jnp.where(mask, jnp.sin(x), x ** 2)
        return jnp.sum(y * z)

    check(f, f_jax, jax)


def test_put_along_axis(jax):
    jnp = jax.numpy

    def f(x):
        a = np.outer(x, x)
        np.put_along_axis(a, np.array([[1], [0], [3], [2]]), x[:, None] * 3.0, axis=1)
        return np.sum(a * a)

    def f_jax(x):
        a = jnp.outer(x, x).at[jnp.arange(4), jnp.array([1, 0, 3, 2])].set(x * 3.0)
        return jnp.sum(a * a)

    check(f, f_jax, jax)


def test_fill_diagonal(jax):
    jnp = jax.numpy

    def f(x):
        a = np.outer(x, x)
        np.fill_diagonal(a, np.cos(x))
        return np.sum(a * a)

    def f_jax(x):
        a = jnp.outer(x, x)
        return jnp.sum(a.at[jnp.arange(4), jnp.arange(4)].set(jnp.cos(x)) ** 2)

    check(f, f_jax, jax)


def test_copyto_with_where(jax):
    jnp = jax.numpy
    where = np.array([True, False, False, True])

    def f(x):
        y = x ** 2
        np.copyto(y, np.sin(x), where=where)
        z = np.empty(4)
        np.copyto(z, x[0])
        return np.sum(y * z)

    check(f, lambda x: jnp.sum(jnp.where(where, jnp.sin(x), x ** 2) * x[0]), jax)


def test_fill(jax):
    jnp = jax.numpy

    def f(x):
        y = x * 1.0
        y.fill(x[0])
        return np.sum(y * x)

    check(f, lambda x: jnp.sum(x[0] * x), jax)


def test_add_at_into_input_error():
    def f(x):
        np.add.at(x, [0], 1.0)
        return np.sum(x)

    with pytest.raises(MutationError, match=re.escape(
            "numpy.add.at(a, ...) on a traced array mutates an array in place (it is an "
            "argument")):
        grad(f)(np.ones(2))


def test_out_into_plain_array_not_a_local_error():
    buf = [np.zeros(2)]

    def f(x):
        np.multiply(x, 2.0, out=buf[0])
        return np.sum(buf[0])

    with pytest.raises(MutationError, match=re.escape(
            "numpy.multiply(..., out=x) with traced values into a plain array mutates an "
            "array in place")):
        grad(f)(np.ones(2))


def test_forward_mode_out_and_add_at():
    def f(x):
        acc = np.zeros(2)
        np.add.at(acc, [0, 1, 1], x)
        y = np.empty(2)
        np.multiply(acc, acc, out=y)
        return np.sum(y)

    # acc = (x0, x1 + x2); y = acc^2
    x = np.array([1.0, 2.0, 3.0])
    _, y_dot = jvp(f, (x,), (np.array([1.0, 0.0, 1.0]),))
    np.testing.assert_allclose(y_dot, 2 * 1.0 + 2 * 5.0)
