"""What running a peer AD's test suite on chainrules.ad found (HIPS autograd's tests,
whose ``check_grads`` differentiates every jvp and vjp once more): rules that were not
differentiable again, and casts by NumPy's scalar types. Second derivatives are checked
against finite differences of the first ones, in all four nestings."""

from __future__ import annotations

import numpy as np
import pytest

from chainrules.ad import grad, jvp, vjp
from chainrules.testing import fd_jvp

X = np.array([0.3, -1.2, 0.5, 2.0, -0.7, 1.1])
U = np.array([1.0, -2.0, 0.5, 3.0, 1.5, -1.0])
W = np.array([0.2, 1.0, -0.4, 0.8, 2.0, -1.5])

REARRANGEMENTS = {
    "sort": np.sort,
    "sort axis=None": lambda x: np.sort(x.reshape(2, 3), axis=None),
    "sort rows": lambda x: np.sort(x.reshape(2, 3), axis=1).ravel(),
    "partition": lambda x: np.partition(x, 2),
    "partition axis=None": lambda x: np.partition(x.reshape(3, 2), 1, axis=None),
    "sort_complex": lambda x: np.real(np.sort_complex(x) * (1 - 2j)),
}


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", REARRANGEMENTS)
def test_rearrangements_are_differentiable_again(name):
    f = REARRANGEMENTS[name]

    def pushforward(x, u):
        return jvp(f, (x,), (u,))[1]

    def pullback(x, w):
        return vjp(f, x)[1](w)[0]

    # forward over forward, w.r.t. the tangent and the primal
    _close(jvp(lambda u: pushforward(X, u), (U,), (W,))[1], fd_jvp(f, (X,), (W,)))
    _close(jvp(lambda x: pushforward(x, U), (X,), (W,))[1],
           fd_jvp(lambda x: pushforward(x, U), (X,), (W,)))
    # reverse over reverse, w.r.t. the cotangent (its pullback is the pushforward)
    _close(vjp(lambda w: pullback(X, w), W)[1](U)[0], fd_jvp(f, (X,), (U,)))
    # forward over reverse (the Hessian's way) and reverse over reverse, w.r.t. x
    _close(jvp(lambda x: pullback(x, W), (X,), (U,))[1],
           fd_jvp(lambda x: pullback(x, W), (X,), (U,)))
    _close(vjp(lambda x: pullback(x, W), X)[1](U)[0],
           np.zeros_like(X))  # piecewise linear: pullback(x, w) is constant in x


@pytest.mark.parametrize("cast", [np.int64, np.intp, np.int32, np.uint8, np.bool_])
def test_integer_scalar_types_are_casts_without_derivative(cast):
    # an index from traced values: a constant, as for x.astype(int)
    m = np.arange(12.0).reshape(3, 4) / 7
    m[:, -1] = [1.5, 0.25, 2.5]  # rows 1, 0, 2, away from where the cast jumps

    def f(m):
        return np.sum(m[:, :-1][cast(m[:, -1])] ** 2)

    g = grad(f)(m)
    for k in range(m.size):  # the finite-difference gradient, entry by entry
        e = np.zeros(m.size)
        e[k] = 1.0
        _close(g.ravel()[k], fd_jvp(f, (m,), (e.reshape(m.shape),)))


@pytest.mark.parametrize("cast", [np.float32, np.float64, np.complex128, np.longdouble])
def test_float_scalar_types_are_differentiable_casts(cast):
    def f(x):
        return np.real(np.sum(cast(x) ** 2 * W)).astype(np.float64)

    x = X.astype(np.float32) if cast is np.float64 else X
    g = grad(f)(x)
    assert g.dtype == x.dtype
    rtol = 1e-3 if cast is np.float32 or x.dtype == np.float32 else 1e-7
    np.testing.assert_allclose(g @ U, fd_jvp(f, (x,), (U.astype(x.dtype),)), rtol=rtol)
    # and again: the cast's pushforward is linear, so the Hessian is f's
    h = jvp(lambda x: grad(f)(x), (X,), (U,))[1]
    np.testing.assert_allclose(h, fd_jvp(lambda x: grad(f)(x), (X,), (U,)),
                               rtol=1e-6, atol=1e-2 if cast is np.float32 else 1e-8)


_A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, -0.2], [0.5, -0.2, 2.0]])
_V = np.array([[0.3, -1.0, 0.2], [-1.0, 0.5, 0.7], [0.2, 0.7, -0.4]])


@pytest.mark.parametrize("kwargs", [{}, {"eigvals_only": True}, {"subset_by_index": [1, 2]},
                                    {"subset_by_value": [2.5, 10.0]}])
def test_scipy_eigh_is_differentiable_again(kwargs):
    sla = pytest.importorskip("scipy.linalg")

    def f(a):
        out = sla.eigh(a, **kwargs)
        w = out if kwargs.get("eigvals_only") else out[0]
        total = np.sum(w ** 3)
        if not kwargs.get("eigvals_only"):
            total = total + np.sum(out[1][0] ** 2 * w)
        return total

    def gradient(a):
        return vjp(f, a)[1](1.0)[0]

    want = fd_jvp(gradient, (_A,), (_V,))
    _close(jvp(gradient, (_A,), (_V,))[1], want)  # forward over reverse
    # reverse over reverse: <V, H U> = <H V, U> for the symmetric Hessian
    u = _V[::-1]
    assert np.isclose(np.sum(vjp(gradient, _A)[1](u)[0] * _V), np.sum(want * u), rtol=1e-6)


def test_odeint_second_derivatives():
    si = pytest.importorskip("scipy.integrate")
    t = np.linspace(0.1, 0.2, 4)
    a = np.array([0.5, -0.3])
    y0 = np.array([1.0, 2.0])
    v = np.array([1.0, -0.5])

    def f(y0):
        return np.sum(si.odeint(lambda y, t, a: -y * y + a, y0, t, (a,)) ** 2)

    # forward over forward: differentiable again
    def pushforward(y):
        return jvp(f, (y,), (v,))[1]

    got = jvp(pushforward, (y0,), (v,))[1]
    assert np.isclose(got, fd_jvp(pushforward, (y0,), (v,)), rtol=1e-5)
    # reverse's pullback too (sensitivities by odeint, which the outer AD follows)
    h = 1e-5
    g = grad(f)
    want = (g(y0 + h * v) - g(y0 - h * v)) / (2 * h)
    assert np.allclose(jvp(lambda y: grad(f)(y), (y0,), (v,))[1], want, rtol=1e-5)
    assert np.allclose(vjp(lambda y: grad(f)(y), y0)[1](v)[0], want, rtol=1e-5)


def test_spence_second_derivative_at_one():
    # the partial's special value at z = 1 must carry its own slope (the second
    # derivative there), not be a constant
    sp = pytest.importorskip("scipy.special")

    def gradient(z):
        return grad(lambda z: np.sum(sp.spence(z)))(z)

    for z in (np.array([1.0, 0.5, 2.0]), 1.0):
        dz = np.ones_like(z)
        _close(jvp(gradient, (z,), (dz,))[1], fd_jvp(gradient, (z,), (dz,)))


@pytest.mark.parametrize("roots", [np.array([0.7]), np.array([0.7, -0.3])])
def test_poly_second_derivative_with_one_root(roots):
    # poly of the other roots is poly([]) = 1.0 for one root: a scalar cotangent
    def gradient(r):
        return grad(lambda r: np.sum(np.poly(r) ** 2))(r)

    _close(jvp(gradient, (roots,), (np.ones_like(roots),))[1],
           fd_jvp(gradient, (roots,), (np.ones_like(roots),)))
    assert np.isclose(grad(lambda r: np.sum(gradient(r) ** 2))(roots) @ np.ones_like(roots),
                      fd_jvp(lambda r: np.sum(gradient(r) ** 2), (roots,),
                             (np.ones_like(roots),)), rtol=1e-6)


_B = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])


def _delegating():
    sla = pytest.importorskip("scipy.linalg")
    return {
        "ndarray.sum": lambda x: np.ndarray.sum(x ** 3),
        "ndarray.cumprod": lambda x: np.sum(np.ndarray.cumprod(x) ** 2),
        "ndarray.clip": lambda x: np.sum(np.ndarray.clip(x, -1, 0.5) ** 2),
        "linalg.tensordot": lambda x: np.linalg.tensordot(x, x ** 2, axes=1),
        "linalg.outer": lambda x: np.sum(np.linalg.outer(x, x ** 2) ** 2),
        "linalg.trace": lambda x: np.linalg.trace(np.outer(x, x ** 2)),
        "linalg.vecdot": lambda x: np.linalg.vecdot(x, x ** 3),
        "scipy.linalg.det": lambda x: sla.det(_B * x),
        "scipy.linalg.cholesky": lambda x: np.sum(sla.cholesky(_B + np.diag(x ** 2))),
        "scipy.linalg.eigvalsh": lambda x: np.sum(sla.eigvalsh(_B + np.diag(x)) ** 3),
        "scipy.linalg.lstsq": lambda x: np.sum(sla.lstsq(_B * x, x)[0]),
    }


@pytest.mark.parametrize("name", ["ndarray.sum", "ndarray.cumprod", "ndarray.clip",
                                  "linalg.tensordot", "linalg.outer", "linalg.trace",
                                  "linalg.vecdot", "scipy.linalg.det", "scipy.linalg.cholesky",
                                  "scipy.linalg.eigvalsh", "scipy.linalg.lstsq"])
def test_rules_that_delegate_are_differentiable_again(name):
    # an alias or a method whose rule is another function's (np.linalg.outer, ndarray.sum,
    # scipy.linalg.det): the AD traces into that function's rule
    f = _delegating()[name]
    x = np.array([0.3, -1.2, 0.7])
    u = np.array([1.0, 0.5, -2.0])

    def gradient(x):
        return grad(f)(x)

    def pushforward(x):
        return jvp(f, (x,), (u,))[1]

    _close(jvp(gradient, (x,), (u,))[1], fd_jvp(gradient, (x,), (u,)))
    assert np.isclose(jvp(pushforward, (x,), (u,))[1], fd_jvp(pushforward, (x,), (u,)),
                      rtol=1e-6, atol=1e-8)


def _abs_of(x):
    return abs(x)


def _max_of_squares(x):
    return np.max(x * x)


def _clipped(x):
    return np.sum(np.clip(x, -0.5, 0.5) ** 2)


@pytest.mark.parametrize("f", [_abs_of, _max_of_squares, _clipped])
def test_a_jvp_inside_a_jvp_is_no_solver(f):
    # the inner jvp is handed a Python function: not a solver whose answer depends on
    # the traced values only through comparisons; the slope of abs, max or clip is
    # piecewise constant and its own derivative is zero (not an error)
    x = 1.4 if f is _abs_of else np.array([0.3, -1.2, 0.7])
    u = 0.5 if f is _abs_of else np.array([1.0, 0.5, -2.0])

    def pushforward(x):
        return jvp(f, (x,), (u,))[1]

    assert np.isclose(jvp(pushforward, (x,), (u,))[1], fd_jvp(pushforward, (x,), (u,)),
                      atol=1e-8)


def test_root_finders_are_differentiable_again():
    so = pytest.importorskip("scipy.optimize")

    def cubic(t, a, b):
        return t ** 3 + b * t - a

    def root(a, b):
        return so.brentq(cubic, 0.0, 3.0, args=(a, b), xtol=1e-14)

    gradient = grad(root)
    _close(jvp(gradient, (2.0, 0.5), (1.0, 0.0))[1], fd_jvp(gradient, (2.0, 0.5), (1.0, 0.0)))


def test_a_users_own_solver_is_still_watched():
    from chainrules.ad import ControlFlowError

    def solver(fn, a):
        t = 0.0
        while fn(t, a) < 0:
            t += 0.25
        return t

    with pytest.raises(ControlFlowError):
        grad(lambda a: solver(lambda t, a: t - a, a))(1.1)
