"""scipy.optimize's solvers: the solution differentiated by the implicit function theorem,
checked against finite differences of the solver itself (tight tolerances)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.optimize as so

from chainrules import frule, frule_via_ad, rrule, rrule_via_ad
from chainrules.ad import ADConfig, ControlFlowError, grad, jvp
from chainrules.rules.scipy.optimize import SolverError
from chainrules.testing import no_tangent, test_frule, test_rrule

CONFIG = ADConfig()


def cubic(t, a, b):
    return t ** 3 + b * t - a


@pytest.mark.parametrize("solver", [so.brentq, so.brenth, so.bisect, so.ridder, so.toms748])
def test_bracketing_root_wrt_args(solver):
    # the bracket gets a zero cotangent: the root does not move with it
    kw = {"xtol": 1e-14} if solver is so.bisect else {}
    test_rrule(solver, no_tangent(cubic), 0.0, 3.0, (2.0, 0.5), config=CONFIG, fkwargs=kw)
    test_frule(solver, no_tangent(cubic), 0.0, 3.0, (2.0, 0.5), config=CONFIG, fkwargs=kw)


def test_brentq_full_output():
    test_rrule(so.brentq, no_tangent(cubic), 0.0, 3.0, (2.0, 0.5), config=CONFIG,
               fkwargs={"full_output": True}, check_thunked_output_tangent=False)


def brentq_closure(a, b):
    return so.brentq(lambda t: t ** 3 + b * t - a, 0.0, 3.0)


def root_scalar_closure(a, b):
    return so.root_scalar(lambda t: np.exp(t) + b * t - a, bracket=(-5.0, 5.0),
                          xtol=1e-14).root


def newton_closure(a, b):
    # fprime closes over b too: passed positionally, the AD hands it to the rule detached
    return so.newton(lambda t: t ** 3 + b * t - a, 1.0, lambda t: 3 * t * t + b, tol=1e-14)


def newton_args(a, b):
    return so.newton(cubic, 1.0, args=(a, b), tol=1e-14)


@pytest.mark.parametrize("program", [brentq_closure, root_scalar_closure, newton_closure,
                                     newton_args])
def test_scalar_root_programs(program):
    test_rrule(program, 2.0, 0.5, rrule_f=rrule_via_ad, config=CONFIG)
    test_frule(program, 2.0, 0.5, frule_f=frule_via_ad, config=CONFIG)


def test_required_example_minimize_scalar():
    g = grad(lambda a: so.minimize_scalar(lambda t: (t - a) ** 2).x)(1.0)
    assert g == pytest.approx(1.0, abs=1e-8)


def minimize_scalar_program(a, c):
    res = so.minimize_scalar(lambda t: (t - a) ** 2 + c * t ** 4, options={"xtol": 1e-12})
    return res.x + 0.5 * res.fun


def minimize_scalar_args(a, c):
    res = so.minimize_scalar(lambda t, a, c: np.cosh(t - a) + c * t * t, args=(a, c),
                             options={"xtol": 1e-12})
    return res.x


def minimize_scalar_bounded(a, c):
    res = so.minimize_scalar(lambda t: (t - a) ** 2 + c * t ** 4, bounds=(-3.0, 3.0),
                             method="bounded", options={"xatol": 1e-12})
    return res.x


@pytest.mark.parametrize("program", [minimize_scalar_program, minimize_scalar_args,
                                     minimize_scalar_bounded])
def test_minimize_scalar_programs(program):
    # a minimizer is found to about sqrt(eps) (f is flat there): finite differences of
    # the solver are that noisy divided by the step, hence the tolerance
    test_rrule(program, 1.0, 0.3, rrule_f=rrule_via_ad, config=CONFIG, rtol=1e-4)
    test_frule(program, 1.0, 0.3, frule_f=frule_via_ad, config=CONFIG, rtol=1e-4)


def minimize_program(a, w):
    def f(x):
        return np.sum(w * (x - a) ** 2) + np.sum(x ** 4) + x[0] * x[1]

    def jac(x):
        return 2 * w * (x - a) + 4 * x ** 3 + np.array([x[1], x[0], 0.0])

    def hess(x):
        return np.diag(2 * w + 12 * x ** 2) + np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0.0]])

    # jac and hess close over the traced a and w: passed positionally, the rule gets
    # them detached
    res = so.minimize(f, np.zeros(3), (), "Newton-CG", jac, hess, options={"xtol": 1e-14})
    return np.sum(res.x * np.arange(1.0, 4.0)) + res.fun


def minimize_args(a, w):
    res = so.minimize(lambda x, a, w: np.sum(w * np.cosh(x - a)) + np.sum(x ** 2),
                      np.zeros(2), args=(a, w), method="trust-exact",
                      jac=lambda x, a, w: w * np.sinh(x - a) + 2 * x,
                      hess=lambda x, a, w: np.diag(w * np.cosh(x - a) + 2),
                      options={"gtol": 1e-13})
    return res.x


def test_minimize_programs():
    a, w = np.array([1.0, -0.5, 0.25]), np.array([1.0, 2.0, 1.5])
    test_rrule(minimize_program, a, w, rrule_f=rrule_via_ad, config=CONFIG, rtol=1e-6)
    test_frule(minimize_program, a, w, frule_f=frule_via_ad, config=CONFIG, rtol=1e-6)
    a2, w2 = np.array([0.5, -0.3]), np.array([1.0, 2.0])
    test_rrule(minimize_args, a2, w2, rrule_f=rrule_via_ad, config=CONFIG, rtol=1e-6)
    test_frule(minimize_args, a2, w2, frule_f=frule_via_ad, config=CONFIG, rtol=1e-6)


TS = np.linspace(0.0, 1.0, 6)


def least_squares_program(a, d):
    # linear in p with an exact Jacobian (passed positionally: it closes over a), so the
    # solver converges to rounding; with the default finite-difference Jacobian its
    # answer carries errors of ~1e-8, too noisy for finite differences of the solver
    def jac(p):
        return np.stack([np.exp(-a * TS), TS], axis=1)

    res = so.least_squares(lambda p: p[0] * np.exp(-a * TS) + p[1] * TS - d,
                           np.array([1.0, 1.0]), jac, xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return np.concatenate([res.x, [res.cost]])


def test_least_squares_program():
    d = np.exp(-1.3 * TS) + 0.05 * np.sin(7 * TS)
    test_rrule(least_squares_program, 1.2, d, rrule_f=rrule_via_ad, config=CONFIG, rtol=1e-6)


def test_least_squares_robust_loss_error():
    with pytest.raises(SolverError, match=re.escape("only loss='linear'")):
        grad(lambda a: so.least_squares(lambda p: p - a, np.zeros(2), loss="huber").x[0])(
            np.ones(2))


def root_program(a):
    res = so.root(lambda x: np.array([x[0] ** 3 + x[1] - a[0], x[1] ** 3 - x[0] - a[1]]),
                  np.ones(2), tol=1e-12)
    return res.x


def fixed_point_program(a, b):
    return so.fixed_point(lambda x, b: np.cos(x) * a + b, np.array([0.5, 0.2]), args=(b,),
                          xtol=1e-14)


def test_root_and_fixed_point_programs():
    a = np.array([2.0, 1.0])
    test_rrule(root_program, a, rrule_f=rrule_via_ad, config=CONFIG, rtol=1e-6)
    test_frule(root_program, a, frule_f=frule_via_ad, config=CONFIG, rtol=1e-6)
    test_rrule(fixed_point_program, 1.0, np.array([0.1, 0.3]), rrule_f=rrule_via_ad,
               config=CONFIG, rtol=1e-6)


def test_float32_args_keep_their_dtype():
    _, pullback = rrule(CONFIG, so.brentq, cubic, 0.0, 3.0, (np.float32(2.0), 0.5))
    args_bar = pullback(1.0)[4]
    assert type(args_bar[0]) is np.float32


def test_unconverged_solve_error():
    with pytest.raises(SolverError, match=re.escape(
            "scipy.optimize.brentq: the solve did not converge")):
        grad(lambda a: so.brentq(lambda t: t ** 3 - a, 0.0, 2.0, maxiter=2, disp=False))(1.3)


def test_minimize_not_converged_error():
    with pytest.raises(SolverError, match=re.escape(
            "scipy.optimize.minimize: the solve did not converge")):
        grad(lambda a: so.minimize(lambda x: np.sum((x - a) ** 4), np.zeros(2),
                                   options={"maxiter": 1}).x[0])(np.ones(2))


def test_double_root_error():
    with pytest.raises(SolverError, match=re.escape("derivative at the root is zero")):
        grad(lambda a: so.newton(lambda t: (t - 1.0) ** 2 * a, 1.0, tol=1e-14))(1.0)


def test_minimum_at_active_bound_error():
    with pytest.raises(SolverError, match=re.escape("the minimum is at")):
        grad(lambda a: so.minimize_scalar(lambda t: (t - a) ** 2, bounds=(0.0, 0.5),
                                          method="bounded").x)(1.0)


def test_constraints_error():
    cons = [{"type": "eq", "fun": lambda x: x[0] - 0.5}]
    with pytest.raises(SolverError, match=re.escape("constraints are not differentiated")):
        grad(lambda a: so.minimize(lambda x: np.sum((x - a) ** 2), np.zeros(2),
                                   constraints=cons).x[1])(np.ones(2))


def test_singular_hessian_error():
    with pytest.raises(SolverError, match=re.escape("the Hessian at the minimum is singular")):
        grad(lambda a: so.minimize(lambda x: (x[0] + x[1] - a) ** 2, np.zeros(2),
                                   method="BFGS").x[0])(1.0)


def test_traced_derivative_by_keyword_error():
    with pytest.raises(SolverError, match=re.escape(
            "scipy.optimize.newton: fprime returned a traced value")):
        grad(lambda b: so.newton(lambda t: t ** 3 + b * t - 2.0, 1.0,
                                 fprime=lambda t: 3 * t * t + b))(0.5)


def test_rules_are_config_rules():
    assert rrule(so.brentq, cubic, 0.0, 3.0, (2.0, 0.5)) is None  # needs an AD
    assert frule((None, None, 0.0, 0.0, None), so.brentq, cubic, 0.0, 3.0, (2.0,
                                                                             0.5)) is None


def test_solvers_without_rules_fail_loudly():
    # brent(full_output=True) has no rrule; golden has no frule
    with pytest.raises(ControlFlowError):
        grad(lambda a: so.brent(lambda t: (t - a) ** 2, full_output=True)[0])(1.0)
    with pytest.raises(Exception, match="comparisons"):
        jvp(lambda a: so.golden(lambda t: (t - a) ** 2), (1.0,), (1.0,))


def minimize_scalar_dict(a, c):
    p = {"a": a, "c": [c, 2.0]}  # the closure captures a structure of parameters
    return so.minimize_scalar(lambda t: (t - p["a"]) ** 2 + p["c"][0] * t ** 4,
                              options={"xtol": 1e-12}).x


def brentq_list(a, b):
    ps = [a, b]
    return so.brentq(lambda t: t ** 3 + ps[1] * t - ps[0], 0.0, 3.0)


def test_closures_capturing_structures():
    test_rrule(minimize_scalar_dict, 1.0, 0.3, rrule_f=rrule_via_ad, config=CONFIG, rtol=1e-4)
    test_rrule(brentq_list, 2.0, 0.5, rrule_f=rrule_via_ad, config=CONFIG)
    test_frule(brentq_list, 2.0, 0.5, frule_f=frule_via_ad, config=CONFIG)
