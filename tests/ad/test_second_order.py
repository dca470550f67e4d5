"""Second and higher derivatives through the built-in rules (issue #12).

Every rule's own code must be differentiable again: a pushforward w.r.t. its tangent
(forward over forward), a pullback w.r.t. its cotangent and primal (a Hessian). Values
are checked against JAX (or autograd where JAX gives NaN at a smooth point).
"""

from __future__ import annotations

import numpy as np
import pytest

from chainrules.ad import grad, hessian, jacobian, jvp

RNG = np.random.default_rng(12)
M = RNG.standard_normal((3, 3))
N = RNG.standard_normal((3, 3))


def _fof_cases(jnp):
    """(numpy function, the same in jax.numpy) of one 3x3 argument."""
    return {
        "sum": (np.sum, jnp.sum),
        "mean": (np.mean, jnp.mean),
        "max": (np.max, jnp.max),
        "min": (np.min, jnp.min),
        "prod": (np.prod, jnp.prod),
        "var": (np.var, jnp.var),
        "std": (np.std, jnp.std),
        "trace": (np.trace, jnp.trace),
        "dot": (lambda a: np.dot(a[0], a[1]), lambda a: jnp.dot(a[0], a[1])),
        "inner": (lambda a: np.inner(a[0], a[1]), lambda a: jnp.inner(a[0], a[1])),
        "matmul": (lambda a: np.matmul(a[0], a[1]), lambda a: jnp.matmul(a[0], a[1])),
        "einsum": (lambda a: np.einsum("ij,ij->", a, a), lambda a: jnp.einsum("ij,ij->", a, a)),
        "kron": (lambda a: np.sum(np.kron(a, a)), lambda a: jnp.sum(jnp.kron(a, a))),
        "vdot": (lambda a: np.vdot(a, a), lambda a: jnp.vdot(a, a)),
        "tensordot": (lambda a: np.tensordot(a, a), lambda a: jnp.tensordot(a, a)),
        "scalar abs": (lambda a: abs(np.sum(a)), lambda a: abs(jnp.sum(a))),
        "conj": (lambda a: np.conj(np.sum(a * a)), lambda a: jnp.conj(jnp.sum(a * a))),
        "angle": (lambda a: np.angle(np.sum(a) * (1 + 1j)),
                  lambda a: jnp.angle(jnp.sum(a) * (1 + 1j))),
        "det": (np.linalg.det, jnp.linalg.det),
        "slogdet": (lambda a: np.linalg.slogdet(a)[1], lambda a: jnp.linalg.slogdet(a)[1]),
        "float": (lambda a: float(np.sum(a)) * 2, lambda a: jnp.sum(a) * 2),
    }


FOF_NAMES = list(_fof_cases(np))


@pytest.mark.parametrize("name", FOF_NAMES)
def test_forward_over_forward(name, jax):
    # the pushforward is differentiable w.r.t. its tangent (it is linear in it) and
    # w.r.t. the primal (a second derivative)
    jnp = jax.numpy
    f, jf = _fof_cases(jnp)[name]
    got = jvp(lambda v: jvp(f, (M,), (v,))[1], (M,), (N,))
    want = jax.jvp(lambda v: jax.jvp(jf, (jnp.asarray(M),), (v,))[1],
                   (jnp.asarray(M),), (jnp.asarray(N),))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-12)
    got2 = jvp(lambda x: jvp(f, (x,), (N,))[1], (M,), (M,))[1]
    want2 = jax.jvp(lambda x: jax.jvp(jf, (x,), (jnp.asarray(N),))[1],
                    (jnp.asarray(M),), (jnp.asarray(M),))[1]
    np.testing.assert_allclose(got2, want2, rtol=1e-10, atol=1e-12)


def test_forward_over_forward_of_sum_issue_example():
    x = np.ones((2, 2))
    y, y_dot = jvp(lambda v: jvp(np.sum, (x,), (v,))[1], (x,), (x,))
    assert (y, y_dot) == (4.0, 4.0)


@pytest.mark.parametrize("idx", [(), None, Ellipsis], ids=["()", "None", "..."])
def test_index_traced_numpy_scalar(idx):
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(grad(lambda x: np.sum(np.sum(x)[idx]))(x), [1.0, 1.0])
    h = hessian(lambda x: np.sum(np.sum(x * x)[idx]))(x)
    np.testing.assert_allclose(h, 2 * np.eye(2))


def test_hessian_of_solve_wrt_right_hand_side(jax):
    a = np.array([[3.0, 1.0], [0.5, 2.0]])
    b = np.array([1.0, -1.0])
    got = hessian(lambda b: np.sum(np.linalg.solve(a, b) ** 2))(b)
    want = jax.hessian(lambda b: jax.numpy.sum(jax.numpy.linalg.solve(a, b) ** 2))(b)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got, [[0.281, -0.231], [-0.231, 0.661]], atol=1e-3)
