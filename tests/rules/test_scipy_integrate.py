"""scipy.integrate: quad by Leibniz's rule, odeint and solve_ivp by adjoints (reverse)
and forward sensitivities (forward), against finite differences of the integrators
run with tight tolerances."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.integrate as si

from chainrules import frule_via_ad, rrule_via_ad
from chainrules.ad import ADConfig, grad, jvp
from chainrules.rules.scipy.integrate import SolverError
from chainrules.testing import no_tangent, test_frule, test_rrule

CONFIG = ADConfig()
TIGHT = {"epsabs": 1e-13, "epsrel": 1e-13}


def integrand(t, k, c):
    return np.exp(-k * t) * np.cos(c * t)


def test_quad_wrt_limits_and_args():
    test_rrule(si.quad, no_tangent(integrand), 0.2, 1.5, (0.7, 2.0), config=CONFIG,
               fkwargs=TIGHT)
    test_frule(si.quad, no_tangent(integrand), 0.2, 1.5, (0.7, 2.0), config=CONFIG,
               fkwargs=TIGHT)


def quad_closure(k, b):
    return si.quad(lambda t: np.sin(k * t) / (1 + t * t), 0.0, b, **TIGHT)[0]


def quad_infinite(k):
    return si.quad(lambda t: np.exp(-k * t * t), -np.inf, np.inf, **TIGHT)[0]


def test_quad_programs():
    test_rrule(quad_closure, 1.3, 2.0, rrule_f=rrule_via_ad, config=CONFIG)
    test_frule(quad_closure, 1.3, 2.0, frule_f=frule_via_ad, config=CONFIG)
    test_rrule(quad_infinite, 0.8, rrule_f=rrule_via_ad, config=CONFIG)
    test_frule(quad_infinite, 0.8, frule_f=frule_via_ad, config=CONFIG)


def test_quad_gradient_value():
    g = grad(lambda k: si.quad(lambda t: np.exp(-k * t), 0.0, 1.0, **TIGHT)[0])(1.0)
    assert g == pytest.approx(2 * np.exp(-1) - 1, rel=1e-10)  # -integral of t exp(-t)


ODE_TOL = {"rtol": 1e-11, "atol": 1e-11}


def oscillator(y, t, k, c):
    return np.array([y[1], -k * y[0] - c * y[1] + np.sin(t)])


def odeint_program(y0, k, c):
    Y = si.odeint(oscillator, y0, np.linspace(0.0, 2.0, 5), args=(k, c), **ODE_TOL)
    return Y * np.array([1.0, 0.5])


def odeint_closure(y0, k):
    Y = si.odeint(lambda y, t: -k * y * (1 + 0.1 * y * y), y0, [0.0, 0.5, 1.5], **ODE_TOL)
    return np.sum(Y[1:] ** 2)


def test_odeint_programs():
    y0 = np.array([1.0, -0.5])
    test_rrule(odeint_program, y0, 2.0, 0.3, rrule_f=rrule_via_ad, config=CONFIG, rtol=1e-7)
    test_frule(odeint_program, y0, 2.0, 0.3, frule_f=frule_via_ad, config=CONFIG, rtol=1e-7)
    test_rrule(odeint_closure, np.array([1.0, 0.3]), 0.7, rrule_f=rrule_via_ad,
               config=CONFIG, rtol=1e-7)
    test_frule(odeint_closure, np.array([1.0, 0.3]), 0.7, frule_f=frule_via_ad,
               config=CONFIG, rtol=1e-7)


def test_required_example_odeint_wrt_y0():
    # y' = -k y: y(t) = y0 exp(-k t), so d sum(Y) / d y0 = sum over t of exp(-k t)
    ts = [0.0, 1.0, 2.0]
    g = grad(lambda y0: np.sum(si.odeint(lambda y, t: -0.5 * y, y0, ts, **ODE_TOL)))(
        np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, np.sum(np.exp(-0.5 * np.array(ts))) * np.ones(2),
                               rtol=1e-9)


def solve_ivp_program(y0, k):
    res = si.solve_ivp(lambda t, y, k: np.array([y[1], -k * np.sin(y[0])]), (0.0, 2.0), y0,
                       method="DOP853", t_eval=[0.5, 1.0, 2.0], args=(k,), **ODE_TOL)
    return res.y


def solve_ivp_closure(y0, k):
    res = si.solve_ivp(lambda t, y: -k * y + np.cos(t), (0.0, 1.0), y0, method="DOP853",
                       **ODE_TOL)
    return res.y[:, -1]


def test_solve_ivp_programs():
    y0 = np.array([1.0, 0.0])
    test_rrule(solve_ivp_program, y0, 1.5, rrule_f=rrule_via_ad, config=CONFIG, rtol=1e-7)
    test_frule(solve_ivp_program, y0, 1.5, frule_f=frule_via_ad, config=CONFIG, rtol=1e-7)
    test_rrule(solve_ivp_closure, np.array([0.5]), 0.8, rrule_f=rrule_via_ad, config=CONFIG,
               rtol=1e-7)
    test_frule(solve_ivp_closure, np.array([0.5]), 0.8, frule_f=frule_via_ad, config=CONFIG,
               rtol=1e-7)


def test_odeint_failure_error():
    with pytest.raises(SolverError, match=re.escape(
            "scipy.integrate.odeint: the solve did not converge")):
        grad(lambda k: np.sum(si.odeint(lambda y, t: -k * y, np.ones(1), [0.0, 100.0],
                                        mxstep=2)))(1.0)


def test_quad_weight_error():
    with pytest.raises(SolverError, match=re.escape("weighted or complex integrals")):
        grad(lambda k: si.quad(lambda t: k * t, 0.0, 1.0, weight="cos", wvar=2.0)[0])(1.0)


def test_solve_ivp_events_error():
    with pytest.raises(SolverError, match=re.escape("events and dense_output")):
        grad(lambda k: np.sum(si.solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.ones(1),
                                           dense_output=True).y))(1.0)


def odeint_times(t1, t2, k):
    Y = si.odeint(lambda y, t: np.array([y[1], -k * y[0] + np.cos(t)]), np.array([1.0, 0.0]),
                  np.array([0.3, t1, t2]), **ODE_TOL)
    return Y[1:]


def test_odeint_wrt_times():
    test_rrule(odeint_times, 1.0, 2.2, 1.5, rrule_f=rrule_via_ad, config=CONFIG, rtol=1e-7)
    test_frule(odeint_times, 1.0, 2.2, 1.5, frule_f=frule_via_ad, config=CONFIG, rtol=1e-7)
    # moving the start time: y(t) for y' = -y from y(t0) = 1 is exp(t0 - t)
    g = grad(lambda t0: si.odeint(lambda y, t: -y, np.ones(1), [t0, 2.0], **ODE_TOL)[1, 0])
    assert g(0.5) == pytest.approx(np.exp(-1.5), rel=1e-8)


def test_solve_ivp_times_not_differentiated():
    with pytest.raises(Exception, match=re.escape("w.r.t. the times")):
        grad(lambda t1: np.sum(si.solve_ivp(lambda t, y: -y, (0.0, t1), np.ones(1)).y))(1.0)
    with pytest.raises(SolverError, match=re.escape("w.r.t. the times")):
        jvp(lambda t1: np.sum(si.solve_ivp(lambda t, y: -y, (0.0, t1), np.ones(1)).y),
            (1.0,), (1.0,))
