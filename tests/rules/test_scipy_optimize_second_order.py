"""Second derivatives through scipy.optimize's solver rules in ``chainrules.ad``, against
finite differences of the AD's own gradient (the solver's tolerance bounds both)."""

import numpy as np
import pytest

so = pytest.importorskip("scipy.optimize")

from chainrules.ad import ControlFlowError, grad, hessian  # noqa: E402


def central(g, a, h=1e-4):
    return (g(a + h) - g(a - h)) / (2 * h)


def newton_root(a):
    return so.newton(lambda t: t ** 3 + 0.5 * t - a, 1.0, tol=1e-14)


def test_hessian_through_newton():
    # newton's iteration is plain arithmetic the AD follows at the outer level
    h = hessian(newton_root)(2.0)
    assert float(np.squeeze(h)) == pytest.approx(central(lambda t: float(grad(newton_root)(t)),
                                                         2.0), rel=1e-6)


@pytest.mark.xfail(raises=ControlFlowError, strict=True, reason=(
    "the minimize_scalar rule solves with the closure it is given: under a second "
    "differentiation the closure holds the outer AD's values, and Brent's bracketing "
    "compares them (the rule would have to call the solver through the AD)"))
def test_hessian_through_minimize_scalar():
    hessian(lambda a: so.minimize_scalar(lambda t: np.cosh(t - a) + 0.3 * t ** 4).x)(1.0)
