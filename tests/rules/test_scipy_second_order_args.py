"""Second derivatives through SciPy's solvers with the parameter passed in ``args=``.

Each either matches central differences of the AD's gradient or raises a named error:
never a silent zero (``quad`` with ``args=`` once returned 0.0 here; see
``test_scipy_quad_second_order.py``).
"""

import numpy as np
import pytest

so = pytest.importorskip("scipy.optimize")
si = pytest.importorskip("scipy.integrate")

from chainrules.ad import grad, hessian  # noqa: E402
from chainrules.core import ChainRulesError  # noqa: E402


def _cubic(t, k):
    return t ** 3 + 0.5 * t - k


ANSWERS = {
    "brentq": lambda k: so.brentq(_cubic, 0.0, 3.0, args=(k,)),
    "newton": lambda k: so.newton(_cubic, 1.0, args=(k,)),
    "fixed_point": lambda k: so.fixed_point(lambda t, k: np.cos(t) * k, 0.5, args=(k,)),
    "minimize": lambda k: so.minimize(lambda t, k: np.sum(np.cosh(t - k) + 0.3 * t ** 4),
                                      np.zeros(1), args=(k,)).x[0],
    "root df-sane": lambda k: so.root(_cubic, np.array([0.5]), args=(k,),
                                      method="df-sane").x[0],
    "root hybr": lambda k: so.root(_cubic, np.array([0.5]), args=(k,)).x[0],
    "least_squares": lambda k: so.least_squares(
        lambda t, k: np.array([t[0] - k, 0.3 * t[0] ** 2]), np.zeros(1), args=(k,)).x[0],
    "odeint": lambda k: si.odeint(lambda y, t, k: -k * y, 1.0, [0.0, 1.0], args=(k,))[-1, 0],
    "solve_ivp": lambda k: si.solve_ivp(lambda t, y, k: -k * y, (0.0, 1.0), [1.0], args=(k,),
                                        rtol=1e-9, atol=1e-12).y[0, -1],
}

REFUSED = {
    "quad": lambda k: si.quad(lambda t, k: np.exp(-k * t), 0.0, 1.0, args=(k,))[0],
    "quad_vec": lambda k: si.quad_vec(lambda t, k: np.exp(-k * t), 0.0, 1.0, args=(k,))[0],
    "dblquad": lambda k: si.dblquad(lambda y, x, k: np.exp(-k * x * y), 0, 1, 0, 1,
                                    args=(k,))[0],
}


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_hessian_through_args_matches_differences_of_the_gradient(name):
    f, k, h = ANSWERS[name], 1.3, 1e-4
    want = float(np.squeeze((grad(f)(k + h) - grad(f)(k - h)) / (2 * h)))
    assert float(np.squeeze(hessian(f)(k))) == pytest.approx(want, rel=1e-3, abs=1e-6)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_hessian_through_args_is_refused_by_name(name):
    f = REFUSED[name]
    assert np.isfinite(grad(f)(1.3))  # first order answers
    with pytest.raises(ChainRulesError, match=r"second derivative|not twice differentiable"):
        hessian(f)(1.3)
