"""Issue #26: the derivatives JAX and PyTorch give on edge inputs (singular and
rank-deficient matrices, ties, every ``ord``), compared with the rules' pullbacks and
pushforwards, on NumPy and on the generic (array API) rules run on tensors.

Conventions where the peers differ: ``|x|``'s derivative at 0 is 0 (PyTorch's; JAX's
``abs`` gives 1 there), so the matrix 1/inf norms are compared with JAX only away from
zeros; ties of a max/min split the cotangent equally (both peers).
"""

from __future__ import annotations

import numpy as np
import pytest

from chainrules import NoTangent, frule, rrule
from chainrules.rules import register_namespace

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
tx = pytest.importorskip("array_api_compat.torch")
xs = pytest.importorskip("array_api_strict")

register_namespace(tx)
register_namespace(xs)

RANK_ONE = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 0.0]])
RNG = np.random.default_rng(26)
GENERIC = RNG.normal(size=(2, 3, 4))
ORDS = ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf)


def _torch_grad(f, a, y_bar=None):
    t = torch.tensor(a, requires_grad=True)
    y = f(t)
    (g,) = torch.autograd.grad(y, t, torch.ones_like(y) if y_bar is None else y_bar,
                               allow_unused=True)
    return np.zeros_like(a) if g is None else g.numpy()


def _ours_grad(f, a, make=np.asarray, **kwargs):
    y, pullback = rrule(f, make(a), **kwargs)
    ones = np.ones(np.shape(np.asarray(y)), dtype=np.asarray(y).dtype)
    return np.asarray(pullback(make(ones))[1])


@pytest.mark.parametrize("ord", ORDS, ids=str)
@pytest.mark.parametrize("a", [RANK_ONE, GENERIC, np.eye(3)], ids=["rank-one", "generic", "eye"])
def test_matrix_norm_every_ord_matches_torch(ord, a):
    want = _torch_grad(lambda t: torch.linalg.matrix_norm(t, ord=ord), a)
    generic = _ours_grad(tx.linalg.matrix_norm, a, torch.asarray, ord=ord)
    np.testing.assert_allclose(generic, want, atol=1e-12)
    numpy_rule = _ours_grad(np.linalg.matrix_norm, a, ord=ord)
    np.testing.assert_allclose(numpy_rule, want, atol=1e-12)


@pytest.mark.parametrize("ord", ORDS, ids=str)
def test_matrix_norm_every_ord_matches_jax(ord):
    # a complex matrix with no zero entries (JAX's |x|' at 0 differs) and no ties
    a = GENERIC + 1j * RNG.normal(size=GENERIC.shape)
    want = np.conj(np.asarray(jax.grad(
        lambda x: jnp.sum(jnp.linalg.matrix_norm(x, ord=ord)))(jnp.asarray(a))))
    x = xs.asarray(a)
    y, pullback = rrule(xs.linalg.matrix_norm, x, ord=ord)
    np.testing.assert_allclose(np.asarray(pullback(xs.ones(2, dtype=xs.float64))[1]), want,
                               atol=1e-12)
    a_dot = RNG.normal(size=a.shape) + 1j * RNG.normal(size=a.shape)
    _, y_dot = frule((NoTangent(), xs.asarray(a_dot)), xs.linalg.matrix_norm, x, ord=ord)
    _, want_dot = jax.jvp(lambda v: jnp.linalg.matrix_norm(v, ord=ord), (jnp.asarray(a),),
                          (jnp.asarray(a_dot),))
    np.testing.assert_allclose(np.asarray(y_dot), np.asarray(want_dot), atol=1e-12)


def test_vector_norm_ord0_has_derivative_zero():
    a = np.array([[0.0, 1.5, -2.0], [3.0, 0.0, 0.0]])
    want = _torch_grad(lambda t: torch.linalg.vector_norm(t, ord=0, dim=1), a)
    assert not want.any()
    for f, make in ((xs.linalg.vector_norm, xs.asarray), (tx.linalg.vector_norm, torch.asarray)):
        y, pullback = rrule(f, make(a), ord=0, axis=1)
        np.testing.assert_array_equal(np.asarray(pullback(make(np.ones(2)))[1]), want)
        _, y_dot = frule((NoTangent(), make(np.ones_like(a))), f, make(a), ord=0, axis=1)
        np.testing.assert_array_equal(np.asarray(y_dot), np.zeros(2))


SINGULAR = [np.zeros((3, 3)), np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),
            np.stack([np.zeros((3, 3)), RNG.normal(size=(3, 3))]),
            np.array([[1.0, 2.0], [2.0, 4.0]]) * (1 + 1j)]


@pytest.mark.parametrize("a", SINGULAR, ids=["zero", "rank-two", "stack", "complex"])
def test_det_at_a_singular_matrix_is_the_adjugate_as_jax(a):
    def jax_loss(v):
        return jnp.sum(jnp.real(jnp.linalg.det(v)))

    want = np.conj(np.asarray(jax.grad(jax_loss)(jnp.asarray(a))))
    a_dot = np.ones_like(a)
    _, want_dot = jax.jvp(jnp.linalg.det, (jnp.asarray(a),), (jnp.asarray(a_dot),))
    for f, make in ((np.linalg.det, np.asarray), (xs.linalg.det, xs.asarray),
                    (tx.linalg.det, torch.asarray)):
        y, pullback = rrule(f, make(a))
        x_bar = pullback(make(np.ones(np.shape(np.asarray(y)), dtype=np.asarray(y).dtype)))[1]
        np.testing.assert_allclose(np.asarray(x_bar), want, atol=1e-12)
        _, y_dot = frule((NoTangent(), make(a_dot)), f, make(a))
        np.testing.assert_allclose(np.asarray(y_dot), np.asarray(want_dot), atol=1e-12)


def test_det_of_the_zero_matrix_stack_raises_no_linalg_error():
    from chainrules.testing import test_frule, test_rrule

    a = np.zeros((2, 3, 3))
    test_rrule(np.linalg.det, a)
    test_frule(np.linalg.det, a)


@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 4)])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_qr_of_a_wide_matrix_matches_torch(shape, dtype):
    from chainrules import Tangent

    rng = np.random.default_rng(5)
    a = rng.normal(size=shape) + (1j * rng.normal(size=shape) if dtype == "complex128" else 0)
    t = torch.tensor(a, requires_grad=True)
    q, r = torch.linalg.qr(t)
    q_bar, r_bar = rng.normal(size=q.shape), rng.normal(size=r.shape)
    ((q * torch.tensor(q_bar)).sum().real + (r * torch.tensor(r_bar)).sum().real).backward()
    y, pullback = rrule(tx.linalg.qr, torch.tensor(a))
    y_bar = Tangent[type(y)](torch.tensor(q_bar, dtype=y[0].dtype),
                             torch.tensor(r_bar, dtype=y[1].dtype))
    np.testing.assert_allclose(pullback(y_bar)[1].numpy(), t.grad.numpy(), atol=1e-12)


def _complete_qr_input(shape, dtype, seed=7):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=shape)
    return a + 1j * rng.normal(size=shape) if dtype == "complex128" else a


@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 2), (3, 1)])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_qr_complete_of_a_tall_matrix_matches_jax(shape, dtype):
    # the last m - n columns of Q are LAPACK's Householder completion; JAX differentiates
    # that choice (PyTorch refuses), and so do the rules
    import scipy.linalg as sla

    from chainrules import Tangent

    a = _complete_qr_input(shape, dtype)
    m, n = shape[-2:]
    q_bar = _complete_qr_input((*shape[:-2], m, m), dtype, 9)
    r_bar = _complete_qr_input(shape, dtype, 10)
    a_dot = _complete_qr_input(shape, dtype, 11)

    def jax_loss(v):
        q, r = jnp.linalg.qr(v, mode="complete")
        return jnp.sum(jnp.real(jnp.conj(q_bar) * q)) + jnp.sum(jnp.real(jnp.conj(r_bar) * r))

    want = np.conj(np.asarray(jax.grad(jax_loss)(jnp.asarray(a))))
    _, (q_dot, r_dot) = jax.jvp(lambda v: tuple(jnp.linalg.qr(v, mode="complete")),
                                (jnp.asarray(a),), (jnp.asarray(a_dot),))
    rules = [(np.linalg.qr, np.asarray, {"mode": "complete"}),
             (xs.linalg.qr, xs.asarray, {"mode": "complete"}),
             (tx.linalg.qr, torch.asarray, {"mode": "complete"})]
    if len(shape) == 2:
        rules.append((sla.qr, np.asarray, {}))
    for f, make, kw in rules:
        y, pullback = rrule(f, make(a), **kw)
        y_bar = Tangent[type(y)](make(q_bar), make(r_bar))
        np.testing.assert_allclose(np.asarray(pullback(y_bar)[1]), want, atol=1e-10)
        _, y_dot = frule((NoTangent(), make(a_dot)), f, make(a), **kw)
        np.testing.assert_allclose(np.asarray(y_dot[0]), np.asarray(q_dot), atol=1e-10)
        np.testing.assert_allclose(np.asarray(y_dot[1]), np.asarray(r_dot), atol=1e-10)


def test_qr_complete_of_a_matrix_with_no_columns_has_zero_derivative():
    from chainrules.testing import test_frule, test_rrule

    for a in (np.zeros((3, 0)), np.zeros((0, 4, 2))):
        test_rrule(np.linalg.qr, a, fkwargs={"mode": "complete"})
        test_frule(np.linalg.qr, a, fkwargs={"mode": "complete"})


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 3), (2, 3, 4)])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_lu_of_a_rectangular_matrix_matches_torch(shape, dtype):
    import scipy.linalg as sla

    from chainrules import Tangent

    a = _complete_qr_input(shape, dtype, 12)
    t = torch.tensor(a, requires_grad=True)
    _, low, up = torch.linalg.lu(t)
    l_bar = _complete_qr_input(tuple(low.shape), dtype, 13)
    u_bar = _complete_qr_input(tuple(up.shape), dtype, 14)
    ((low * torch.tensor(l_bar).conj()).sum().real
     + (up * torch.tensor(u_bar).conj()).sum().real).backward()
    y, pullback = rrule(sla.lu, a)
    np.testing.assert_allclose(y[1], low.detach().numpy(), atol=1e-12)
    a_bar = pullback(Tangent[tuple](NoTangent(), l_bar, u_bar))[1]
    np.testing.assert_allclose(a_bar, t.grad.numpy(), atol=1e-10)
    a_dot = _complete_qr_input(shape, dtype, 15)
    _, (l_dot, u_dot) = torch.func.jvp(lambda v: tuple(torch.linalg.lu(v)[1:]),
                                       (torch.tensor(a),), (torch.tensor(a_dot),))
    _, y_dot = frule((NoTangent(), a_dot), sla.lu, a)
    np.testing.assert_allclose(y_dot[1], l_dot.numpy(), atol=1e-10)
    np.testing.assert_allclose(y_dot[2], u_dot.numpy(), atol=1e-10)


def _slogdet_cotangent(y, make):
    from chainrules import Tangent, ZeroTangent

    return Tangent[type(y)](ZeroTangent(), make(np.ones(np.shape(np.asarray(y[1])))))


@pytest.mark.parametrize("a", [*SINGULAR, np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0],
                                                    [3.0, 6.0, 9.0]])],
                         ids=["zero", "rank-two", "stack", "complex", "rank-one"])
def test_slogdet_at_a_singular_matrix_has_no_finite_derivative(a):
    # sign 0 and logabsdet -inf as JAX; the derivative of logabsdet tends to
    # +inf adj(A)^H on one side of the singular matrices and -inf adj(A)^H on the other,
    # so it is NaN here. JAX gives NaN or +-inf (signs from LAPACK's zero pivot),
    # PyTorch the same or, where its LU pivot is round-off instead of 0, a finite
    # 1e15-sized value; PyTorch's own inverse then refuses the matrix, and the rule on
    # tensors gives NaN rather than a raw LinAlgError
    singular = np.asarray(np.linalg.slogdet(a)[0]) == 0
    want_grad = np.conj(np.asarray(jax.grad(
        lambda v: jnp.sum(jnp.linalg.slogdet(v)[1]))(jnp.asarray(a))))
    a_dot = np.ones_like(a)
    _, want_dot = jax.jvp(lambda v: jnp.linalg.slogdet(v)[1], (jnp.asarray(a),),
                          (jnp.asarray(a_dot),))
    assert not np.isfinite(want_grad[singular]).any()
    assert not np.isfinite(np.asarray(want_dot)[singular]).any()
    for f, make in ((np.linalg.slogdet, np.asarray), (xs.linalg.slogdet, xs.asarray),
                    (tx.linalg.slogdet, torch.asarray)):
        y, pullback = rrule(f, make(a))
        if f is not tx.linalg.slogdet:
            np.testing.assert_array_equal(np.asarray(y[0])[singular], 0)
            np.testing.assert_array_equal(np.asarray(y[1])[singular], -np.inf)
        a_bar = np.asarray(pullback(_slogdet_cotangent(y, make))[1])
        assert np.isnan(a_bar[singular]).all()
        np.testing.assert_allclose(a_bar[~singular], want_grad[~singular], rtol=1e-10)
        _, y_dot = frule((NoTangent(), make(a_dot)), f, make(a))
        logabsdet_dot = np.asarray(y_dot[1])
        assert np.isnan(logabsdet_dot[singular]).all()
        np.testing.assert_allclose(logabsdet_dot[~singular], np.asarray(want_dot)[~singular],
                                   rtol=1e-10)
        if np.iscomplexobj(a):  # the phase's tangent: NaN, as both peers
            assert np.isnan(np.asarray(y_dot[0])).all()
