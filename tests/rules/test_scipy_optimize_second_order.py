"""Second derivatives through scipy.optimize's solver rules in ``chainrules.ad``, against
finite differences of the AD's own gradient (the solver's tolerance bounds both)."""

import functools
import re

import numpy as np
import pytest

so = pytest.importorskip("scipy.optimize")
si = pytest.importorskip("scipy.integrate")

from chainrules.ad import grad, hessian  # noqa: E402


def central(g, a, h=1e-4):
    return (g(a + h) - g(a - h)) / (2 * h)


def newton_root(a):
    return so.newton(lambda t: t ** 3 + 0.5 * t - a, 1.0, tol=1e-14)


def test_hessian_through_newton():
    # newton's iteration is plain arithmetic the AD follows at the outer level
    h = hessian(newton_root)(2.0)
    assert float(np.squeeze(h)) == pytest.approx(central(lambda t: float(grad(newton_root)(t)),
                                                         2.0), rel=1e-6)


# Second derivatives that the implicit-function rules give through the reference AD,
# and those still refused (docs/guide/solvers.md lists the same, with the reasons).
def _cubic(t, a):
    return t ** 3 + 0.5 * t - a


def _bracketed(solver, a):
    return solver(_cubic, 0.0, 3.0, args=(a,), xtol=1e-14)


SECOND_ORDER = {
    **{s.__name__: functools.partial(_bracketed, s)
       for s in (so.brentq, so.brenth, so.bisect, so.ridder, so.toms748)},
    "newton": lambda a: so.newton(lambda t: _cubic(t, a), 1.0, tol=1e-14),
    "root df-sane": lambda a: so.root(lambda t: _cubic(t, a), np.ones(1), method="df-sane",
                                      options={"fatol": 1e-14}).x[0],
    "fixed_point": lambda a: so.fixed_point(lambda t: np.cos(t) * a, 0.5, xtol=1e-14),
    "minimize": lambda a: so.minimize(lambda t: np.sum(np.cosh(t - a) + 0.3 * t ** 4),
                                      np.zeros(1), tol=1e-12).x[0],
    "quad (limit)": lambda a: si.quad(lambda t: np.exp(-t * t), 0.0, a)[0],
}


def _minimize_scalar(a):
    return so.minimize_scalar(lambda t: np.cosh(t - a) + 0.3 * t ** 4).x


def _quad_parameter(a):
    return si.quad(lambda t: np.exp(-a * t * t), 0.0, 1.0)[0]


def _root_scalar(a):
    return so.root_scalar(lambda t: _cubic(t, a), bracket=(0.0, 3.0)).root


def _least_squares(a):
    return so.least_squares(lambda t: np.array([t[0] - a, 0.3 * t[0] ** 2]), np.zeros(1)).x[0]


def _root_hybr(a):
    # (MINPACK swallows the tracer's refusal and raised its own raw "not a proper array
    # of floats" error; the AD reports the refusal, naming the C function)
    return so.root(lambda t: _cubic(t, a), np.array([0.5])).x[0]


# each still refused with a named error (the AD's own: the rule's solve or pullback, run on
# the outer derivative's traced values, reaches SciPy code the AD cannot follow)
REFUSED = {
    "minimize_scalar": (_minimize_scalar, "scipy.optimize.bracket"),
    "quad (integrand parameter)": (_quad_parameter, "scipy.integrate._qagse"),
    "root_scalar": (_root_scalar, "scipy.optimize._brentq"),
    "least_squares": (_least_squares, "scipy.optimize"),
    "root (hybr)": (_root_hybr, "scipy.optimize._hybrd"),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_hessian_through_a_solver_rule_matches_differences_of_the_gradient(name):
    f = SECOND_ORDER[name]
    h = float(np.squeeze(hessian(f)(1.3)))
    want = float(np.squeeze(central(grad(f), 1.3, 1e-5)))
    assert h == pytest.approx(want, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_hessian_through_a_solver_rule_still_refused_is_named(name):
    from chainrules.core import ChainRulesError

    f, where = REFUSED[name]
    assert np.isfinite(grad(f)(1.3))  # first order answers
    with pytest.raises(ChainRulesError, match=re.escape(where)):
        hessian(f)(1.3)
