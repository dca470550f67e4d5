"""In-place updates in differentiated code (``chainrules.ad._inplace``): each construct
against JAX's functional transcription with ``.at[]``, in reverse mode, forward mode
and a Hessian-vector product (forward over reverse)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from chainrules.ad import MutationError, grad, jvp

X = np.array([0.3, 0.7, -1.2, 0.5])
V = np.array([0.2, -0.4, 1.1, 0.6])


def check(f, f_jax, jax, x=X, v=V):
    """grad, jvp and an HVP of ``f`` (NumPy, written in place) against ``f_jax``."""
    jnp_x = jax.numpy.asarray(x)
    np.testing.assert_allclose(grad(f)(x), np.asarray(jax.grad(f_jax)(jnp_x)),
                               rtol=1e-12, atol=1e-12)
    y, y_dot = jvp(f, (x,), (v,))
    y_ref, y_dot_ref = jax.jvp(f_jax, (jnp_x,), (jax.numpy.asarray(v),))
    np.testing.assert_allclose(y, float(y_ref), rtol=1e-12)
    np.testing.assert_allclose(y_dot, float(y_dot_ref), rtol=1e-12, atol=1e-12)
    hvp = jvp(grad(f), (x,), (v,))[1]
    hvp_ref = jax.jvp(jax.grad(f_jax), (jnp_x,), (jax.numpy.asarray(v),))[1]
    np.testing.assert_allclose(hvp, np.asarray(hvp_ref), rtol=1e-10, atol=1e-12)


# -- the issue's two examples -----------------------------------------------------------


def test_issue_example_preallocated(jax):
    jnp = jax.numpy

    def f(x):
        y = np.zeros(3)
        y[0] = x[0] * 2
        y[1:] = np.sin(x[1:3])
        return np.sum(y ** 2)

    def f_jax(x):
        y = jnp.zeros(3).at[0].set(x[0] * 2).at[1:].set(jnp.sin(x[1:3]))
        return jnp.sum(y ** 2)

    check(f, f_jax, jax)


def test_issue_example_augmented(jax):
    jnp = jax.numpy

    def g(x):
        y = x * 1.0
        y += np.sin(x)
        return np.sum(y * y)

    check(g, lambda x: jnp.sum((x + jnp.sin(x)) ** 2), jax)


# -- item, slice, mask and integer-array assignment ------------------------------------


def test_item_assignment(jax):
    jnp = jax.numpy

    def f(x):
        y = x * 2.0
        y[1] = x[0] * x[2]
        return np.sum(y ** 3)

    check(f, lambda x: jnp.sum((x * 2.0).at[1].set(x[0] * x[2]) ** 3), jax)


def test_slice_assignment_with_broadcast_value(jax):
    jnp = jax.numpy

    def f(x):
        y = np.exp(x)
        y[1:-1] = x[0] ** 2  # a scalar broadcast to the slice
        return np.sum(y * x)

    check(f, lambda x: jnp.sum(jnp.exp(x).at[1:-1].set(x[0] ** 2) * x), jax)


def test_boolean_mask_assignment(jax):
    jnp = jax.numpy
    mask = np.array([True, False, True, False])

    def f(x):
        y = x ** 2
        y[mask] = 0.0
        y[~mask] *= np.cos(x[~mask])
        return np.sum(y * x)

    def f_jax(x):
        y = (x ** 2).at[mask].set(0.0)
        y = y.at[~mask].set(y[~mask] * jnp.cos(x[~mask]))
        return jnp.sum(y * x)

    check(f, f_jax, jax)


def test_integer_array_assignment_last_write_wins(jax):
    jnp = jax.numpy
    idx = np.array([2, 0, 2])  # index 2 written twice: the last value stays

    def f(x):
        y = x * 1.0
        y[idx] = np.array([1.0, 2.0, 3.0]) * x[1]
        return np.sum(y ** 2)

    def f_jax(x):
        # JAX's scatter order for repeats is unspecified: write the surviving values
        y = x.at[0].set(2.0 * x[1]).at[2].set(3.0 * x[1])
        return jnp.sum(y ** 2)

    check(f, f_jax, jax)


def test_two_dimensional_column_update(jax):
    jnp = jax.numpy

    def f(x):
        a = np.outer(x, x)
        for j in range(a.shape[1]):
            a[:, j] -= x[j] * a[:, 0]
        return np.sum(a * a)

    def f_jax(x):
        a = jnp.outer(x, x)
        for j in range(a.shape[1]):
            a = a.at[:, j].set(a[:, j] - x[j] * a[:, 0])
        return jnp.sum(a * a)

    check(f, f_jax, jax)


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/=", "**="])
def test_augmented_item_assignment(jax, op):
    jnp = jax.numpy
    ns: dict = {"np": np}
    exec(f"def f(x):\n    y = x + 2.0\n    y[1] {op} x[0]\n    return np.sum(y * y)\n", ns)
    ops = {"+=": jnp.add, "-=": jnp.subtract, "*=": jnp.multiply, "/=": jnp.divide,
           "**=": jnp.power}

    def f_jax(x):
        y = x + 2.0
        return jnp.sum(y.at[1].set(ops[op](y[1], x[0])) ** 2)

    check(ns["f"], f_jax, jax)


def test_augmented_whole_array(jax):
    jnp = jax.numpy

    def f(x):
        y = x * x
        y *= np.sin(x)
        y -= x[0]
        y /= 2.0
        return np.sum(y)

    check(f, lambda x: jnp.sum((x * x * jnp.sin(x) - x[0]) / 2.0), jax)


def test_copy_then_write(jax):
    jnp = jax.numpy

    def f(x):
        y = x.copy()
        y[0] = 0.0
        return np.sum(y * x)

    check(f, lambda x: jnp.sum(x.at[0].set(0.0) * x), jax)


def test_copy_keeps_the_original_unchanged(jax):
    jnp = jax.numpy

    def f(x):
        y = x.copy()
        y[1:] = 5.0 * y[:-1]
        return np.sum(y * x) + np.sum(x ** 3)  # x itself is not written

    check(f, lambda x: jnp.sum(x.at[1:].set(5.0 * x[:-1]) * x) + jnp.sum(x ** 3), jax)


def _fill_squares(out, x):
    for i in range(len(x)):
        out[i] = x[i] ** 2
    out *= 2.0


def test_writes_inside_a_traced_helper(jax):
    jnp = jax.numpy

    def f(x):
        y = x * 0.0  # a traced array: the helper writes into the same object
        _fill_squares(y, x)
        return np.sum(np.sin(y))

    check(f, lambda x: jnp.sum(jnp.sin(2.0 * x ** 2)), jax)


@pytest.mark.parametrize("make", ["zeros", "empty", "empty_like", "zeros_like", "ones"])
def test_preallocated_plain_array_becomes_traced(jax, make):
    jnp = jax.numpy

    def f(x):
        if make == "empty_like":
            y = np.empty_like(x)
        elif make == "zeros_like":
            y = np.zeros_like(x)
        else:
            y = getattr(np, make)(len(x))
        for i in range(len(x)):
            y[i] = np.sin(x[i]) * x[-1 - i]
        return np.sum(y * y)

    check(f, lambda x: jnp.sum((jnp.sin(x) * x[::-1]) ** 2), jax)


def test_preallocated_loop_with_recurrence(jax):
    jnp = jax.numpy

    def f(x):
        y = np.empty(len(x))
        y[0] = x[0]
        for i in range(1, len(x)):
            y[i] = y[i - 1] * x[i] + 1.0
        return np.sum(y ** 2)

    def f_jax(x):
        y = jnp.zeros(len(x)).at[0].set(x[0])
        for i in range(1, len(x)):
            y = y.at[i].set(y[i - 1] * x[i] + 1.0)
        return jnp.sum(y ** 2)

    check(f, f_jax, jax)


def test_saved_value_before_a_write_is_kept(jax):
    jnp = jax.numpy

    def f(x):
        y = x * 1.0
        s = np.sum(y * y)  # the multiply's pullback saved y
        y[0] = 10.0  # a later write must not change what it saw
        y[1] = 3.0 * x[2]
        return s + np.sum(y * x)

    def f_jax(x):
        return jnp.sum(x * x) + jnp.sum(x.at[0].set(10.0).at[1].set(3.0 * x[2]) * x)

    check(f, f_jax, jax)


def test_zeros_like_of_traced_array_same_in_both_modes(jax):
    jnp = jax.numpy

    def f(x):
        y = np.zeros_like(x)
        y[::2] = x[::2] ** 2
        y += x
        return np.sum(y * y)

    check(f, lambda x: jnp.sum((jnp.zeros_like(x).at[::2].set(x[::2] ** 2) + x) ** 2), jax)


def test_list_of_traced_values_written_into_slice(jax):
    jnp = jax.numpy

    def f(x):
        y = np.zeros(4)
        y[:2] = [x[0] * x[1], x[2]]
        return np.sum(y ** 2)

    check(f, lambda x: jnp.sum(jnp.zeros(4).at[:2].set(jnp.stack([x[0] * x[1], x[2]])) ** 2),
          jax)


def test_plain_accumulator_with_augmented_assignment(jax):
    jnp = jax.numpy

    def f(x):
        acc = np.zeros(4)
        acc += x * x
        acc *= 3.0
        return np.sum(np.sin(acc))

    check(f, lambda x: jnp.sum(jnp.sin(3.0 * x * x)), jax)


def test_nested_grad_writes_at_each_level():
    # a write inside the inner function of a nested grad, into its own array
    def inner(a, x):
        y = np.zeros(2)
        y[0] = a * x
        y[1] = a * a
        return np.sum(y * y)

    def outer(x):
        return grad(inner)(x, 2.0)  # d/da at a = x, with the inner x = 2

    # d/da (4 a^2 + a^4) = 8 a + 4 a^3, whose derivative is 8 + 12 a^2
    np.testing.assert_allclose(grad(outer)(0.7), 8.0 + 12.0 * 0.7 ** 2)


# -- aliasing: exact or a named error -------------------------------------------------


def test_write_through_view_updates_base(jax):
    jnp = jax.numpy

    def f(x):
        y = x * 2.0
        v = y[::2]
        v += 1.0
        v[1] = x[1] * x[3]
        return np.sum(y * y)

    def f_jax(x):
        y = (x * 2.0).at[::2].add(1.0)
        return jnp.sum(y.at[2].set(x[1] * x[3]) ** 2)

    check(f, f_jax, jax)


def test_view_refreshed_after_base_write(jax):
    jnp = jax.numpy

    def f(x):
        y = x * 1.0
        v = y[1:3]  # a view, read after its base is written
        y[1] = x[0] ** 2
        return np.sum(v * v) + v[1]

    def f_jax(x):
        y = x.at[1].set(x[0] ** 2)
        return jnp.sum(y[1:3] ** 2) + y[2]

    check(f, f_jax, jax)


def test_transpose_and_reshape_views(jax):
    jnp = jax.numpy

    def f(x):
        a = np.outer(x, x[::-1])
        t = a.T
        r = a.reshape(-1)
        t[0, 1] = x[2] ** 3  # a[1, 0]
        r[5] = np.sin(x[0])  # a[1, 1]
        return np.sum(a * t) + np.sum(r)

    def f_jax(x):
        a = jnp.outer(x, x[::-1]).at[1, 0].set(x[2] ** 3).at[1, 1].set(jnp.sin(x[0]))
        return jnp.sum(a * a.T) + jnp.sum(a)

    check(f, f_jax, jax)


def test_view_of_a_view(jax):
    jnp = jax.numpy

    def f(x):
        y = x ** 2
        v = y[1:]
        w = v[::2]
        w[1] = x[0]  # y[3]
        return np.sum(y * x) + np.sum(v) + np.sum(w)

    def f_jax(x):
        y = (x ** 2).at[3].set(x[0])
        return jnp.sum(y * x) + jnp.sum(y[1:]) + jnp.sum(y[1:][::2])

    check(f, f_jax, jax)


def test_write_into_input_error():
    def f(x):
        x[0] = 1.0
        return np.sum(x)

    x = np.ones(2)
    with pytest.raises(MutationError, match=re.escape(
            "`a[...] = value` on a traced array mutates an array in place (it is an "
            "argument of the differentiated function")):
        grad(f)(x)
    assert x[0] == 1.0
    with pytest.raises(MutationError, match="argument of the differentiated function"):
        jvp(f, (x,), (np.ones(2),))


def test_write_into_input_through_view_error():
    def f(x):
        v = x[1:]
        v *= 2.0
        return np.sum(x)

    with pytest.raises(MutationError, match=re.escape(
            "`x *= ...` on a traced array mutates an array in place (it is an argument")):
        grad(f)(np.ones(3))


def test_plain_array_held_by_caller_error():
    def fill(out, x):
        out[0] = x[0]

    def f(x):
        y = np.zeros(2)
        fill(y, x)  # the caller's y would not see the traced value
        return np.sum(y)

    with pytest.raises(MutationError, match=re.escape(
            "`a[...] = value` with a traced value into a plain array mutates an array in "
            "place (the array is also referred to elsewhere")):
        grad(f)(np.ones(2))


def test_plain_array_with_second_name_error():
    def f(x):
        y = np.zeros(2)
        z = y
        y[0] = x[0]
        return np.sum(z)

    with pytest.raises(MutationError, match="also referred to elsewhere"):
        grad(f)(np.ones(2))


def test_view_of_plain_array_error():
    def f(x):
        y = np.zeros(4)
        v = y[::2]
        v[0] = x[0]
        return np.sum(y)

    with pytest.raises(MutationError, match=re.escape(
            "with a traced value into a view of a plain array")):
        grad(f)(np.ones(2))


def test_inner_value_into_outer_array_error():
    def outer(x):
        buf = x * 1.0

        def inner(a):
            buf[0] = a * 2.0  # an inner perturbation into an outer array
            return a * a

        grad(inner)(1.0)
        return np.sum(buf)

    with pytest.raises(MutationError, match=re.escape(
            "of a value of an inner differentiation into an array of an outer one")):
        grad(outer)(np.ones(2))


def test_sort_of_input_error():
    with pytest.raises(MutationError, match=re.escape(
            "x.sort() on a traced array mutates an array in place (it is an argument")):
        grad(lambda x: x.sort())(np.ones(2))


def test_loop_of_writes_reuses_the_buffer():
    # O(n): after the first write (a copy of the plain array), the writes go into the
    # traced array's own memory, which nothing else refers to
    from chainrules.ad._tracer import deep_primal

    seen = []

    def f(x):
        out = np.empty(len(x))
        for i in range(len(x)):
            out[i] = np.sin(x[i]) * x[i]
            seen.append(id(deep_primal(out)))
        return np.sum(out ** 2)

    x = np.linspace(0.1, 1.0, 6)
    g = grad(f)(x)
    assert len(set(seen)) == 1
    np.testing.assert_allclose(g, 2 * np.sin(x) * x * (np.cos(x) * x + np.sin(x)))
    seen.clear()
    _, y_dot = jvp(f, (x,), (np.ones(6),))
    assert len(set(seen)) == 1
    np.testing.assert_allclose(y_dot, np.sum(g))


def _written_everywhere(x):
    y = np.zeros(3)
    y[0] = x[0] * 2
    y[1:] = np.sin(x[1:])
    v = y[::2]
    v *= x[1]
    np.add.at(y, [0, 0], x[2])
    return np.sum(y ** 3)


def test_second_derivative_every_mode_agrees():
    x, d = np.array([0.3, 0.7, -1.2]), np.array([0.1, 0.2, 0.3])
    f = _written_everywhere
    reverse_over_reverse = grad(lambda t: np.dot(grad(f)(x + t * d), d))(0.0)
    forward_over_reverse = jvp(grad(f), (x,), (d,))[1] @ d
    forward_over_forward = jvp(lambda t: jvp(f, (x + t * d,), (d,))[1], (0.0,), (1.0,))[1]
    eps = 1e-5
    fd = (np.dot(grad(f)(x + eps * d), d) - np.dot(grad(f)(x - eps * d), d)) / (2 * eps)
    np.testing.assert_allclose(reverse_over_reverse, fd, rtol=1e-7)
    np.testing.assert_allclose(forward_over_reverse, reverse_over_reverse, rtol=1e-12)
    np.testing.assert_allclose(forward_over_forward, reverse_over_reverse, rtol=1e-12)


def test_view_held_in_a_list_is_refreshed(jax):
    jnp = jax.numpy

    def f(x):
        y = x * 1.0
        views = [y[:2], y[2:]]
        y[1] = x[3] ** 2
        y[2] = 0.5 * x[0]
        return np.sum(views[0] * views[1])

    def f_jax(x):
        y = x.at[1].set(x[3] ** 2).at[2].set(0.5 * x[0])
        return jnp.sum(y[:2] * y[2:])

    check(f, f_jax, jax)


def test_view_of_rule_output_writes_through(jax):
    jnp = jax.numpy

    def f(x):
        a = np.outer(x, x)
        d = np.diagonal(a)  # a read-only view in NumPy: it sees the write below
        col = a[:, 1]
        col[:] = np.cos(x)
        return np.sum(a) + np.sum(d)

    def f_jax(x):
        a = jnp.outer(x, x).at[:, 1].set(jnp.cos(x))
        return jnp.sum(a) + jnp.sum(jnp.diagonal(a))

    check(f, f_jax, jax)


def test_zeros_like_is_plain_in_both_modes():
    kinds = []

    def f(x):
        kinds.extend(type(make(x)).__name__ for make in (np.zeros_like, np.empty_like,
                                                         np.ones_like))
        kinds.append(type(np.zeros_like(x, dtype=float)).__name__)
        return np.sum(x)

    grad(f)(np.ones(2))
    jvp(f, (np.ones(2),), (np.ones(2),))
    assert kinds == ["ndarray"] * 8


def test_copy_module_copies_are_written_apart(jax):
    # copy.copy / copy.deepcopy of a tracer are copies: a write into one never reaches
    # the original (the tracer itself is updated in place by writes)
    import copy

    jnp = jax.numpy

    def f(x):
        y = copy.copy(x)
        y[0] = 0.0
        z = copy.deepcopy(x)
        z[1] = 5.0 * z[2]
        return np.sum(x * x) + np.sum(y * x) + np.sum(z ** 2)

    def f_jax(x):
        y = x.at[0].set(0.0)
        z = x.at[1].set(5.0 * x[2])
        return jnp.sum(x * x) + jnp.sum(y * x) + jnp.sum(z ** 2)

    check(f, f_jax, jax)


class _Holder:
    pass


def test_views_held_in_attributes_and_nested_containers_see_writes(jax):
    # a view kept in an object's attribute (self.view) or a dict of lists is refreshed
    # after a write into its base, as NumPy's would change
    jnp = jax.numpy

    def f(x):
        y = x * 1.0
        h = _Holder()
        h.v = y[::2]
        state = {"rows": [y[1:3]]}
        y[0] = 5.0 * x[1]
        y[2] = np.sin(x[3])
        return np.sum(h.v * x[::2]) + np.sum(state["rows"][0] ** 2)

    def f_jax(x):
        y = x.at[0].set(5.0 * x[1]).at[2].set(jnp.sin(x[3]))
        return jnp.sum(y[::2] * x[::2]) + jnp.sum(y[1:3] ** 2)

    check(f, f_jax, jax)
