"""scipy.optimize's result objects: a cotangent on a field the rules do not differentiate
raises instead of being dropped (it would be a silently wrong derivative)."""

import re

import numpy as np
import pytest

so = pytest.importorskip("scipy.optimize")

from chainrules.ad import grad, jvp  # noqa: E402
from chainrules.core import NotImplementedDerivativeError  # noqa: E402
from chainrules.rules.scipy.optimize import SolverError  # noqa: E402

TS = np.linspace(0.0, 1.0, 5)


def test_least_squares_residuals_field_error():
    def residual_sum(d):
        res = so.least_squares(lambda p: p[0] * TS + p[1] - d, np.zeros(2), xtol=1e-12)
        return np.sum(res.fun)

    with pytest.raises(SolverError, match=re.escape(
            "scipy.optimize.least_squares: the result's field 'fun' is not differentiated; "
            "expected cotangents on the fields x, cost only")):
        grad(residual_sum)(np.sin(TS))


def test_minimize_inverse_hessian_field_error():
    def inverse_hessian_trace(a):
        res = so.minimize(lambda x: np.sum(a * x ** 2) + np.sum(x), np.ones(2), method="BFGS")
        return np.trace(res.hess_inv)

    with pytest.raises(SolverError, match=re.escape("the result's field 'hess_inv'")):
        grad(inverse_hessian_trace)(np.array([1.0, 2.0]))


def test_root_factorization_field_error():
    with pytest.raises(SolverError, match=re.escape("the result's field 'r'")):
        grad(lambda a: np.sum(so.root(lambda x: x ** 3 - a, np.ones(2)).r))(np.ones(2) * 2)


def test_differentiated_fields_still_work():
    g = grad(lambda d: so.least_squares(lambda p: p[0] * TS + p[1] - d, np.zeros(2),
                                        xtol=1e-12).x[1])(np.sin(TS))
    assert np.all(np.isfinite(g))


def bfgs_inverse_hessian_trace(a):
    res = so.minimize(lambda x: np.sum(a * x ** 2) + np.sum(x), np.ones(2), method="BFGS")
    return np.trace(res.hess_inv)


def test_minimize_inverse_hessian_field_forward_error():
    # forward mode: the field's tangent is not_implemented, so using it fails loudly
    with pytest.raises(NotImplementedDerivativeError, match=re.escape(
            "scipy.optimize.minimize does not differentiate the result's field 'hess_inv'")):
        jvp(bfgs_inverse_hessian_trace, (np.array([1.0, 2.0]),), (np.ones(2),))


def hybr_factor_sum(a):
    return np.sum(so.root(lambda x: x ** 3 - a, np.ones(2)).r)


def test_root_factorization_field_forward_error():
    with pytest.raises(NotImplementedDerivativeError, match=re.escape(
            "scipy.optimize.root does not differentiate the result's field 'r'")):
        jvp(hybr_factor_sum, (np.ones(2) * 2,), (np.ones(2),))


def test_minimize_forward_solution_still_works():
    def solution(a):
        return so.minimize(lambda x: np.sum(a * x ** 2) + np.sum(x), np.ones(2),
                           method="BFGS", options={"gtol": 1e-10}).x

    _, x_dot = jvp(solution, (np.array([1.0, 2.0]),), (np.ones(2),))
    # x = -1 / (2 a): dx = dA / (2 a^2)
    np.testing.assert_allclose(x_dot, [0.5, 0.125], rtol=1e-6)


def test_nelder_mead_unread_fields_need_no_cotangent():
    # issue #29: only res.x is read; final_simplex (a tuple of arrays) gets a structural
    # zero from the AD, which must not be refused as "not differentiated"
    import scipy.optimize as so

    def solve(p):
        res = so.minimize(lambda x: np.sum((x - p) ** 2) + 0.1 * np.sum(x ** 4), np.zeros(2),
                          method="Nelder-Mead",
                          options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 4000})
        return res.x

    p = np.array([0.5, 1.0])
    x = solve(p)
    # stationarity x - p + 0.2 x^3 = 0: dx/dp = 1 / (1 + 0.6 x^2), elementwise
    np.testing.assert_allclose(grad(lambda p: np.sum(solve(p)))(p), 1 / (1 + 0.6 * x ** 2),
                               rtol=1e-6)


def test_bfgs_precision_loss_at_a_stationary_point_is_differentiated():
    # issue #29: gtol=1e-10 ends in "precision loss" although the optimum is accurate;
    # the rule checks the first-order condition (|grad| <= SciPy's default gtol) instead
    import scipy.optimize as so

    def solve(p, gtol):
        return so.minimize(lambda x: np.sum((x - p) ** 2) + 0.1 * np.sum(x ** 4), np.zeros(2),
                           method="BFGS", options={"gtol": gtol}).x

    p = np.array([0.5, 1.0])
    assert not so.minimize(lambda x: np.sum((x - p) ** 2) + 0.1 * np.sum(x ** 4), np.zeros(2),
                           method="BFGS", options={"gtol": 1e-10}).success
    x = solve(p, 1e-10)
    np.testing.assert_allclose(grad(lambda p: np.sum(solve(p, 1e-10)))(p),
                               1 / (1 + 0.6 * x ** 2), rtol=1e-6)


def test_bfgs_precision_loss_away_from_a_stationary_point_error():
    import scipy.optimize as so

    def solve(p):
        return so.minimize(lambda x: np.sum(np.abs(x - p)), np.zeros(2) + 0.3,
                           method="BFGS").x

    with pytest.raises(SolverError, match=re.escape("the solve did not converge")):
        grad(lambda p: np.sum(solve(p)))(np.array([0.5, 1.0]))


@pytest.mark.parametrize("solver", ["golden", "brent"])
def test_bracketing_minimizers_are_differentiated(solver):
    # golden/brent: the implicit-function rule of minimize_scalar (closure and args=);
    # the minimizer of (t - a^2)^2 + (t - a^2)^4 is a^2
    import scipy.optimize as so

    minimize = getattr(so, solver)
    g = grad(lambda a: minimize(lambda t: (t - a ** 2) ** 2 + (t - a ** 2) ** 4))(1.5)
    np.testing.assert_allclose(g, 3.0, rtol=1e-6)
    g = grad(lambda a: minimize(lambda t, b: (t - b) ** 2, args=(a,), tol=1e-10))(1.3)
    np.testing.assert_allclose(g, 1.0, rtol=1e-6)
