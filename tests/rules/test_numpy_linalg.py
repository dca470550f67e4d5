"""Tests of the numpy.linalg rules: the case table plus targeted checks."""

import numpy as np
import pytest

from chainrules import NoTangent, frule, rrule
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("numpy_linalg"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


# ------------------------------------------------------------------ targeted tests

from chainrules.testing import fd_vjp, test_frule, test_rrule  # noqa: E402

SCOPE = [
    "inv", "pinv", "solve", "lstsq", "det", "slogdet", "cholesky", "qr", "svd", "svdvals",
    "eigh", "eigvalsh", "eig", "eigvals", "matrix_power", "norm", "vector_norm",
    "matrix_norm", "cond", "multi_dot", "tensorsolve", "tensorinv", "trace", "diagonal",
    "outer", "cross", "matmul", "vecdot", "matrix_transpose", "tensordot", "matrix_rank",
]


def test_scope_has_frule_and_rrule():
    a = np.eye(3) + 0.1
    args = {"multi_dot": ([a, a],), "outer": (a[0], a[1]), "cross": (a[0], a[1]),
            "matmul": (a, a), "vecdot": (a, a), "tensordot": (a, a),
            "solve": (a, a), "lstsq": (a, a), "matrix_power": (a, 2),
            "tensorsolve": (a, a[0]), "tensorinv": (a,)}
    missing = []
    for name in SCOPE:
        f = getattr(np.linalg, name)
        xs = args.get(name, (a,))
        if name == "tensorinv":
            xs = (a.reshape(3, 3),)
            kw = {"ind": 1}
        else:
            kw = {}
        if rrule(f, *xs, **kw) is None:
            missing.append(f"rrule {name}")
        dargs = (NoTangent(), *(np.zeros_like(x) if isinstance(x, np.ndarray) else NoTangent()
                                for x in xs))
        if frule(dargs, f, *xs, **kw) is None:
            missing.append(f"frule {name}")
    assert not missing, missing


def test_matrix_rank_is_non_differentiable():
    a = np.arange(9.0).reshape(3, 3)
    y, pullback = rrule(np.linalg.matrix_rank, a)
    assert y == 2
    assert pullback(1.0) == (NoTangent(), NoTangent())
    assert frule((NoTangent(), np.ones((3, 3))), np.linalg.matrix_rank, a)[1] == NoTangent()


def _degenerate(n_rep=2):
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    w = np.array([1.0] * n_rep + [2.5, 4.0][: 4 - n_rep])
    return (q * w) @ q.T, q


def test_eigh_degenerate_eigenvalue_cotangent_finite_and_correct():
    a, _ = _degenerate()
    y, pullback = rrule(np.linalg.eigh, a)
    # a cotangent constant over the repeated pair makes the loss smooth there
    w_bar = np.array([0.7, 0.7, -1.3, 0.4])
    (_, a_bar) = pullback(Tangent[type(y)](eigenvalues=w_bar))
    assert np.all(np.isfinite(a_bar))
    (want,) = fd_vjp(np.linalg.eigvalsh, w_bar, (a,))
    np.testing.assert_allclose(a_bar, want, atol=1e-6)


def test_eigh_degenerate_vector_cotangent_of_invariant_loss():
    """Vectors in a degenerate eigenspace: F = 0 there, exact for losses of the projector."""
    a, _ = _degenerate()
    rng = np.random.default_rng(5)
    c = rng.standard_normal((4, 4))

    def projector_loss(m):
        v = np.linalg.eigh(m).eigenvectors[:, :2]
        return np.sum(c * (v @ v.T))

    y, pullback = rrule(np.linalg.eigh, a)
    v = y.eigenvectors
    v_bar = np.zeros_like(v)
    v_bar[:, :2] = (c + c.T) @ v[:, :2]
    (_, a_bar) = pullback(Tangent[type(y)](eigenvectors=v_bar))
    assert np.all(np.isfinite(a_bar))
    (want,) = fd_vjp(projector_loss, 1.0, (a,))
    np.testing.assert_allclose(a_bar, want, atol=1e-6)


def test_eigvalsh_degenerate_no_nan():
    a = np.eye(3)
    y, pullback = rrule(np.linalg.eigvalsh, a)
    (_, a_bar) = pullback(np.ones(3))
    assert np.all(np.isfinite(a_bar))
    _, y_dot = frule((NoTangent(), np.ones((3, 3))), np.linalg.eigh, a)
    assert np.all(np.isfinite(y_dot.eigenvalues)) and np.all(np.isfinite(y_dot.eigenvectors))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 2), (4, 1)])
def test_qr_complete_tall_differentiates_lapacks_completion(shape, dtype):
    # the last m - n columns of Q: LAPACK's Householder completion, a smooth function of A
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    test_rrule(np.linalg.qr, a, fkwargs={"mode": "complete"})
    test_frule(np.linalg.qr, a, fkwargs={"mode": "complete"})


def test_svd_full_matrices_non_square_pushforward_is_not_implemented():
    a = np.random.default_rng(0).standard_normal((4, 3))
    with pytest.raises(pytest.xfail.Exception):
        test_frule(np.linalg.svd, a)


def test_svd_full_matrices_non_square_pullback_ignores_the_extra_columns():
    # the extra columns of U are not a function of A: their cotangent counts as zero
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3))
    y = np.linalg.svd(a)
    u_bar = rng.standard_normal((4, 4))
    u_bar[:, 3:] = 0
    y_bar = Tangent[type(y)](U=u_bar, S=rng.standard_normal(3), Vh=rng.standard_normal((3, 3)))
    test_rrule(np.linalg.svd, a, output_tangent=y_bar)
    _, pullback = rrule(np.linalg.svd, a)
    noisy = Tangent[type(y)](U=u_bar + np.pad(np.ones((4, 1)), ((0, 0), (3, 0))),
                             S=y_bar.S, Vh=y_bar.Vh)
    np.testing.assert_allclose(pullback(noisy)[1], pullback(y_bar)[1])


def test_pullbacks_do_not_mutate_inputs_or_cotangents():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    a0, b0 = a.copy(), b.copy()
    for f, xs in ((np.linalg.solve, (a, b)), (np.linalg.inv, (a,)), (np.linalg.det, (a,)),
                  (np.linalg.cholesky, (a @ a.T,)), (np.linalg.qr, (a,)), (np.linalg.eigh, (a,))):
        y, pullback = rrule(f, *xs)
        y_bar = rand_like(y)
        snapshot = _copy(y_bar)
        bars = pullback(y_bar)
        [unthunk(x) for x in bars]
        assert _equal(y_bar, snapshot), f.__name__
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


def test_solve_pullback_reuses_the_factorization(monkeypatch):
    """The adjoint solve uses the LU factors of the forward pass: no second factorization."""
    import scipy.linalg as sla

    rng = np.random.default_rng(2)
    a = rng.standard_normal((5, 5)) + 5 * np.eye(5)
    b = rng.standard_normal(5)
    y, pullback = rrule(np.linalg.solve, a, b)

    def forbidden(*args, **kwargs):
        raise AssertionError("the pullback factored the matrix again")

    for module, name in ((np.linalg, "solve"), (np.linalg, "inv"), (sla, "lu_factor"),
                         (sla, "lu"), (sla.lapack, "get_lapack_funcs")):
        monkeypatch.setattr(module, name, forbidden)
    _, a_bar, b_bar = pullback(np.ones(5))
    unthunk(a_bar)
    monkeypatch.undo()
    np.testing.assert_allclose(y, np.linalg.solve(a, b))
    np.testing.assert_allclose(b_bar, np.linalg.solve(a.T, np.ones(5)))


def test_thunks_not_computed_when_unused():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    _, pullback = rrule(np.linalg.solve, a, np.ones(3))
    _, a_bar, _ = pullback(np.ones(3))
    assert isinstance(a_bar, Thunk)


def rand_like(y):
    from chainrules.testing import rand_tangent

    return rand_tangent(y, 0)


def _copy(t):
    # copy.deepcopy(Tangent[...]) raises (Tangent is immutable): copy the fields
    if isinstance(t, Tangent):
        return {k: np.copy(v) for k, v in t.backing.items()}
    return np.copy(t)


def _equal(t, u):
    if isinstance(t, np.ndarray):
        return np.array_equal(t, u)
    if isinstance(t, Tangent):
        return all(_equal(x, u[k]) for k, x in t.backing.items())
    return t == u


from chainrules import Tangent, Thunk, unthunk  # noqa: E402


@pytest.mark.parametrize("f", [np.linalg.eigh, np.linalg.svd, np.linalg.qr, np.linalg.slogdet,
                               np.linalg.eig])
def test_structured_cotangent_as_tuple_or_with_zero_entries(f):
    """A pullback takes a Tangent of the result type, a plain tuple, or ZeroTangent entries."""
    from chainrules import ZeroTangent
    from chainrules.testing import rand_tangent

    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    a = a + a.T if f is np.linalg.eigh else a
    y, pullback = rrule(f, a)
    t = rand_tangent(y, 0)
    items = [t.backing[k] for k in y._fields]
    want = unthunk(pullback(t)[1])
    np.testing.assert_allclose(unthunk(pullback(tuple(items))[1]), want)
    first_only = unthunk(pullback(Tangent[type(y)](**{y._fields[0]: items[0]}))[1])
    zeros_after = unthunk(pullback(tuple([items[0]] + [ZeroTangent()] * (len(items) - 1)))[1])
    if isinstance(first_only, ZeroTangent):  # slogdet's sign of a real matrix
        assert isinstance(zeros_after, ZeroTangent)
    else:
        np.testing.assert_allclose(zeros_after, first_only)


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 2, -2, 1, np.inf])
@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (2, 0)])
def test_matrix_norm_of_an_empty_matrix(ord, shape):
    x = np.zeros(shape)
    try:
        y = np.linalg.norm(x, ord)
    except ValueError:
        pytest.skip(f"NumPy's own norm(ord={ord}) refuses shape {shape}")
    test_rrule(np.linalg.norm, x, ord)
    test_frule(np.linalg.norm, x, ord)
    assert rrule(np.linalg.norm, x, ord)[0] == y


@pytest.mark.parametrize("hermitian", [False, True])
def test_pinv_of_an_empty_matrix(hermitian):
    test_rrule(np.linalg.pinv, np.zeros((0, 0)), fkwargs={"hermitian": hermitian})
    test_frule(np.linalg.pinv, np.zeros((0, 0)), fkwargs={"hermitian": hermitian})
