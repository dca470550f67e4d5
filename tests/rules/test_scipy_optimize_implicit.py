"""fixed_point and least_squares in forward mode, and curve_fit (issue 29): the
implicit-function rules of `chainrules.rules.scipy.optimize_implicit`, checked with the
testers and against finite differences of the solver itself (tight tolerances)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.optimize as so

from chainrules import frule, frule_via_ad, rrule_via_ad
from chainrules.ad import ADConfig, grad, jacobian, jvp
from chainrules.rules.scipy.optimize import SolverError
from chainrules.testing import FDMethod, test_frule, test_rrule

CONFIG = ADConfig()


def _fd_jacobian(f, x, eps=1e-3):
    """Five-point central differences: the solvers stop ~1e-9 from the exact solution,
    so the step is large (truncation ~eps^4, the solver's noise ~1e-9 / eps)."""
    x = np.asarray(x, dtype=float)
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.reshape(-1)[k] = eps
        f1 = np.asarray(f(x + e)) - np.asarray(f(x - e))
        f2 = np.asarray(f(x + 2 * e)) - np.asarray(f(x - 2 * e))
        cols.append((8 * f1 - f2) / (12 * eps))
    return np.stack(cols, axis=-1)


# the solvers' solutions are accurate to ~1e-9 relative, not to rounding
FDM = FDMethod(eps=1e-9)


# ---------------------------------------------------------------------------- fixed_point


def fixed_point_program(a, b):
    # a closure (a) and args (b)
    return so.fixed_point(lambda x, b: np.cos(x) * a + b, np.array([0.5, 0.2]), args=(b,),
                          xtol=1e-14)


def test_fixed_point_has_a_forward_rule():
    dargs = (None, 0.0, np.zeros(2), (1.0,))
    out = frule(CONFIG, dargs, so.fixed_point, lambda x, a: np.cos(x) * a,
                np.array([0.5, 0.2]), (0.7,))
    assert out is not None
    test_frule(fixed_point_program, 0.8, np.array([0.1, 0.3]), frule_f=frule_via_ad,
               config=CONFIG, rtol=1e-6, atol=1e-8)


def test_fixed_point_jvp_against_finite_differences():
    a = np.linspace(0.3, 0.6, 12)

    def program(a):
        # coupled: each entry's map reads its neighbour
        return so.fixed_point(lambda x: np.cos(np.roll(x, 1)) * a + 0.1,
                              np.full(a.shape, 0.5), xtol=1e-14)

    a_dot = np.cos(np.arange(12.0))
    _, x_dot = jvp(program, (a,), (a_dot,))
    np.testing.assert_allclose(x_dot, _fd_jacobian(program, a) @ a_dot, rtol=1e-6,
                               atol=1e-9)
    np.testing.assert_allclose(jacobian(program, mode="forward")(a),
                               jacobian(program, mode="reverse")(a), rtol=1e-10, atol=1e-12)


def test_fixed_point_scalar_jvp():
    def program(a):
        return so.fixed_point(lambda x: np.cos(x) * a, 0.5, xtol=1e-14)

    _, x_dot = jvp(program, (0.4,), (1.0,))
    np.testing.assert_allclose(x_dot, _fd_jacobian(program, 0.4)[()], rtol=1e-6)


# -------------------------------------------------------------------------- least_squares


def _least_squares_program(p):
    def residuals(x):
        return np.array([x[0] - p[0], x[1] ** 2 - p[1], x[0] * x[1] - p[0] * p[1],
                         np.sin(x[0]) - 0.3 * p[1]])

    return so.least_squares(residuals, np.ones(2), xtol=1e-15, ftol=1e-15,
                            gtol=1e-15).x


def test_least_squares_jacobian_forward_mode():
    # two parameters and two outputs: jacobian picks forward mode, which used to end in
    # a TracerConversionError inside scipy.optimize.VectorFunction
    p = np.array([1.0, 2.0])
    jac = jacobian(_least_squares_program)(p)
    np.testing.assert_allclose(jac, _fd_jacobian(_least_squares_program, p), rtol=1e-5,
                               atol=1e-8)
    np.testing.assert_allclose(jac, jacobian(_least_squares_program, mode="reverse")(p),
                               rtol=1e-10, atol=1e-12)


def test_least_squares_frule_with_args_and_cost():
    def program(p, q):
        res = so.least_squares(lambda x, q: np.array([x[0] - p, x[0] * x[1] - q,
                                                      x[1] - 0.5 * p * q]),
                               np.ones(2), args=(q,), xtol=1e-15, ftol=1e-15, gtol=1e-15)
        return res.x, res.cost

    test_frule(program, 1.3, 0.7, frule_f=frule_via_ad, config=CONFIG, rtol=1e-5,
               atol=1e-8, fdm=FDM)


# ------------------------------------------------------------------------------ curve_fit

T = np.linspace(0.0, 2.0, 15)


def _decay(x, a, b):
    return a * np.exp(-b * x)


def _data(rng=None):
    noise = 0.05 * np.sin(7.0 * T)  # nonzero residuals: the full Hessian matters
    return 2.0 * np.exp(-0.8 * T) + noise


def test_curve_fit_wrt_ydata_against_finite_differences():
    y = _data()

    def popt(y):
        return so.curve_fit(_decay, T, y, p0=[1.0, 1.0], xtol=1e-15, ftol=1e-15,
                            gtol=1e-15)[0]

    jac_fd = _fd_jacobian(popt, y)
    # atol: the differences' noise, ~1e-9 / step (the rule is exact at its solution)
    np.testing.assert_allclose(jacobian(popt)(y), jac_fd, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(jacobian(popt, mode="forward")(y), jacobian(popt)(y),
                               rtol=1e-10, atol=1e-12)


def test_curve_fit_wrt_xdata_sigma_and_captured_values():
    y = _data()
    sigma = 0.1 + 0.02 * T

    def program(xdata, s, c):
        # c is captured by the model; sigma by keyword, moved to its positional place
        return so.curve_fit(lambda x, a, b: a * np.exp(-b * x) + c, xdata, y,
                            p0=[1.0, 1.0], sigma=s, xtol=1e-15, ftol=1e-15,
                            gtol=1e-15)[0]

    test_rrule(program, T, sigma, 0.05, rrule_f=rrule_via_ad, config=CONFIG, rtol=1e-5,
               atol=1e-8, fdm=FDM)
    test_frule(program, T, sigma, 0.05, frule_f=frule_via_ad, config=CONFIG, rtol=1e-5,
               atol=1e-8, fdm=FDM)
    g = grad(lambda c: np.sum(program(T, sigma, c) ** 2))(0.05)
    fd = _fd_jacobian(lambda c: np.sum(program(T, sigma, c) ** 2), 0.05)
    np.testing.assert_allclose(g, fd, rtol=1e-5)


def test_curve_fit_closed_over_parameters_generate_the_data():
    def fitted(p):
        y = p[0] * np.exp(-p[1] * T) + 0.05 * np.cos(5 * T) * p[2]
        return so.curve_fit(_decay, T, y, p0=[1.0, 1.0], xtol=1e-15, ftol=1e-15,
                            gtol=1e-15)[0]

    p = np.array([2.0, 0.5, 1.0])
    np.testing.assert_allclose(jacobian(fitted)(p), _fd_jacobian(fitted, p), rtol=1e-5,
                               atol=2e-6)


def test_curve_fit_pcov_is_not_differentiated_error():
    y = _data()
    with pytest.raises(SolverError, match=re.escape(
            "scipy.optimize.curve_fit: its output 'pcov' is not differentiated; expected "
            "a cotangent on popt only")):
        grad(lambda y: np.sum(so.curve_fit(_decay, T, y, p0=[1.0, 1.0])[1]))(y)


def test_curve_fit_two_dimensional_sigma_error():
    y = _data()
    with pytest.raises(SolverError, match=re.escape(
            "a 2-D sigma (a covariance of ydata) is not differentiated; expected a 1-D "
            "sigma")):
        grad(lambda y: so.curve_fit(_decay, T, y, p0=[1.0, 1.0],
                                    sigma=np.eye(T.size))[0][0])(y)


def test_curve_fit_jac_function_error():
    y = _data()
    with pytest.raises(SolverError, match=re.escape("a jac function is not differentiated")):
        grad(lambda y: so.curve_fit(_decay, T, y, p0=[1.0, 1.0],
                                    jac=lambda x, a, b: np.stack(
                                        [np.exp(-b * x), -a * x * np.exp(-b * x)], 1))[0][0])(y)


def test_curve_fit_active_bound_error():
    y = _data()
    with pytest.raises(SolverError, match=r"the minimum is at .* a bound"):
        grad(lambda y: so.curve_fit(_decay, T, y, p0=[1.0, 0.5],
                                    bounds=([0.0, 0.0], [1.5, 5.0]))[0][0])(y)


# ------------------------------------------------------------- minimize, jac by keyword


def _minimize_with_keyword_jac(a):
    # jac closes over the traced a and is passed by keyword (not detached by the AD):
    # the solve uses the AD's gradient of fun instead
    def fun(x):
        return np.sum((x - a) ** 2) + np.sum(x ** 4)

    def gradient(x):
        return 2 * (x - a) + 4 * x ** 3

    return so.minimize(fun, np.zeros(2), jac=gradient, method="BFGS",
                       options={"gtol": 1e-12}).x


def test_minimize_jac_by_keyword_closing_over_traced_values():
    a = np.array([0.5, -0.3])
    x = _minimize_with_keyword_jac(a)
    expected = np.diag(2 / (2 + 12 * x ** 2))  # d/da of 2 (x - a) + 4 x^3 = 0
    np.testing.assert_allclose(jacobian(_minimize_with_keyword_jac, mode="reverse")(a),
                               expected, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(jacobian(_minimize_with_keyword_jac, mode="forward")(a),
                               expected, rtol=1e-8, atol=1e-10)


def test_root_jac_by_keyword_closing_over_traced_values_error():
    def program(a):
        return so.root(lambda x: x ** 3 - a, np.ones(1),
                       jac=lambda x: np.diag(3 * x ** 2) + 0 * a).x[0]

    with pytest.raises(SolverError, match=re.escape(
            "scipy.optimize.root: jac returned a traced value (it closes over traced "
            "values and was passed by keyword); pass jac positionally")):
        grad(program)(np.array([2.0]))
