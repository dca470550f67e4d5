"""Rules for scipy.sparse, checked with the project's finite differences.

The testers perturb dense primals; a sparse argument is perturbed through its stored
values (`data`), which is exactly its tangent space (the sparsity pattern is fixed).
"""

import operator

import numpy as np
import pytest

sp = pytest.importorskip("scipy.sparse")

from chainrules import NoTangent, Tangent, ZeroTangent, frule, rrule, scoped_rules, unthunk  # noqa: E402
from chainrules.testing import fd_jvp, test_rrule  # noqa: E402
from chainrules.testing.pytest_plugin import catalog_params, check_case  # noqa: E402


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("scipy_sparse"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


def scaled(A, x):
    return A @ x


@pytest.mark.parametrize("mistake", ["sign", "outside the pattern"])
def test_wrong_sparse_rule_is_caught(mistake):
    with scoped_rules():

        @rrule.register(scaled)
        def scaled_rrule(A, x):
            def scaled_pullback(y_bar):
                if mistake == "sign":
                    A_bar = -unthunk(rrule(operator.matmul, A, x)[1](y_bar)[1])
                else:  # a dense outer product: entries outside A's pattern
                    A_bar = np.outer(y_bar, x)
                return NoTangent(), A_bar, A.T @ y_bar

            return A @ x, scaled_pullback

        A = sp.random(4, 3, density=0.5, format="csr", random_state=0)
        with pytest.raises(AssertionError, match="argument 1"):
            test_rrule(scaled, A, np.ones(3))

FORMATS = ["csr", "csc", "coo"]
CLASSES = [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array, sp.csc_array, sp.coo_array]


def make(fmt, dtype, array=False, seed=0):
    A = sp.random(4, 3, density=0.5, format=fmt, random_state=seed, dtype=np.float64)
    if np.dtype(dtype).kind == "c":
        A.data = A.data + 1j * np.random.default_rng(seed).normal(size=A.data.shape)
    A = A.astype(dtype)
    return sp.coo_array(A).asformat(fmt) if array else A


def with_data(A, data):
    B = A.copy()
    B.data = data
    return B


def inner(a, b):
    return float(np.real(np.vdot(np.asarray(a), np.asarray(b))))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("x_shape", [(3,), (3, 2)])
@pytest.mark.parametrize("array", [False, True])
def test_sparse_times_dense(fmt, dtype, x_shape, array):
    rng = np.random.default_rng(1)
    A = make(fmt, dtype, array)
    X = rng.normal(size=x_shape).astype(dtype)
    data_dot = rng.normal(size=A.data.shape).astype(dtype)
    X_dot = rng.normal(size=x_shape).astype(dtype)
    fd = fd_jvp(lambda d, x: with_data(A, d) @ x, (A.data, X), (data_dot, X_dot))

    y, y_dot = frule((NoTangent(), with_data(A, data_dot), X_dot), operator.matmul, A, X)
    np.testing.assert_allclose(y_dot, fd, rtol=1e-7, atol=1e-9)

    y, pullback = rrule(operator.matmul, A, X)
    y_bar = rng.normal(size=np.shape(y)).astype(dtype)
    self_bar, A_bar, X_bar = (unthunk(t) for t in pullback(y_bar))
    assert self_bar is NoTangent()
    assert sp.issparse(A_bar) and A_bar.format == A.format and A_bar.nnz == A.nnz
    assert isinstance(A_bar, sp.sparray) == array
    lhs = inner(y_bar, fd)
    rhs = inner(A_bar.toarray(), with_data(A, data_dot).toarray()) + inner(X_bar, X_dot)
    assert lhs == pytest.approx(rhs, rel=1e-7)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("x_shape", [(4,), (2, 4)])
def test_dense_times_sparse(fmt, x_shape):
    rng = np.random.default_rng(2)
    A = make(fmt, np.float64)
    X = rng.normal(size=x_shape)
    data_dot = rng.normal(size=A.data.shape)
    X_dot = rng.normal(size=x_shape)
    fd = fd_jvp(lambda x, d: x @ with_data(A, d), (X, A.data), (X_dot, data_dot))
    _, y_dot = frule((NoTangent(), X_dot, with_data(A, data_dot)), operator.matmul, X, A)
    np.testing.assert_allclose(y_dot, fd, rtol=1e-7, atol=1e-9)
    y, pullback = rrule(operator.matmul, X, A)
    y_bar = rng.normal(size=np.shape(y))
    _, X_bar, A_bar = (unthunk(t) for t in pullback(y_bar))
    assert A_bar.nnz == A.nnz
    rhs = inner(X_bar, X_dot) + inner(A_bar.toarray(), with_data(A, data_dot).toarray())
    assert inner(y_bar, fd) == pytest.approx(rhs, rel=1e-7)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sum(fmt, axis):
    rng = np.random.default_rng(3)
    A = make(fmt, np.float64)
    data_dot = rng.normal(size=A.data.shape)
    fd = fd_jvp(lambda d: np.asarray(with_data(A, d).sum(axis=axis)), (A.data,), (data_dot,))
    method = type(A).sum
    y, y_dot = frule((NoTangent(), with_data(A, data_dot), NoTangent()), method, A, axis)
    np.testing.assert_allclose(np.asarray(y_dot), fd, rtol=1e-7, atol=1e-9)
    y, pullback = rrule(method, A, axis)
    y_bar = rng.normal(size=np.shape(y))
    _, A_bar = pullback(y_bar)[:2]
    assert A_bar.format == A.format
    assert inner(y_bar, fd) == pytest.approx(inner(A_bar.toarray(), with_data(A, data_dot).toarray()), rel=1e-7)


@pytest.mark.parametrize("cls", CLASSES)
def test_constructor_from_data(cls):
    rng = np.random.default_rng(4)
    fmt = cls.__name__[:3]
    template = make(fmt, np.float64)
    if fmt == "coo":
        arg = (template.data, (template.row, template.col))
    else:
        arg = (template.data, template.indices, template.indptr)
    data_dot = rng.normal(size=template.data.shape)
    fd = fd_jvp(lambda d: cls((d, *arg[1:]), shape=(4, 3)).toarray(), (template.data,), (data_dot,))
    arg_dot = Tangent[tuple](data_dot, *(NoTangent() for _ in arg[1:]))
    y, y_dot = frule((NoTangent(), arg_dot), cls, arg, shape=(4, 3))
    np.testing.assert_allclose(y_dot.toarray(), fd)
    y, pullback = rrule(cls, arg, shape=(4, 3))
    y_bar = rng.normal(size=(4, 3))
    self_bar, arg_bar = pullback(y_bar)
    assert self_bar is NoTangent()
    assert all(t is NoTangent() for t in arg_bar.backing[1:])
    assert inner(y_bar, fd) == pytest.approx(inner(arg_bar[0], data_dot), rel=1e-7)
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent())


def test_inputs_not_mutated():
    A = make("csr", np.float64)
    data = A.data.copy()
    X = np.ones(3)
    y_bar = np.ones(4)
    _, pullback = rrule(operator.matmul, A, X)
    [unthunk(t) for t in pullback(y_bar)]
    np.testing.assert_array_equal(A.data, data)
    np.testing.assert_array_equal(y_bar, np.ones(4))
