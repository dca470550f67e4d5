"""quad_vec (issue 29: the AD traced into SciPy's code and stopped at its ``+=``)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.integrate as si

from chainrules.ad import ADConfig, grad, jacobian
from chainrules.rules.scipy.optimize import SolverError
from chainrules.testing import no_tangent, test_frule, test_rrule

CONFIG = ADConfig()
P = np.array([0.7, 1.3, 0.9, 1.5])


def program(p):
    # a closure (p[0], p[1]), a traced upper limit (p[2]) and a traced keyword-only args=
    return si.quad_vec(lambda t, c: np.array([np.exp(-p[0] * t), np.sin(p[1] * t) * c]),
                       0.0, p[2], args=(p[3],), epsrel=1e-12)[0]


def _fd_jacobian(f, p, eps=1e-5):
    return np.stack([(f(p + e) - f(p - e)) / (2 * eps) for e in np.eye(p.size) * eps], -1)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_quad_vec_jacobian_against_finite_differences(mode):
    # the traced args= used to make the AD trace into SciPy's code, which gave a zero
    # derivative for the limit
    np.testing.assert_allclose(jacobian(program, mode=mode)(P), _fd_jacobian(program, P),
                               rtol=1e-7, atol=1e-9)


def integrand(t, k):
    return np.array([1.0, t, t * t]) * np.exp(-k * t)


def test_quad_vec_rules_with_args_and_limits():
    test_rrule(si.quad_vec, no_tangent(integrand), 0.2, 1.3, fkwargs={"args": (0.8,)},
               config=CONFIG, check_thunked_output_tangent=False)
    test_frule(si.quad_vec, no_tangent(integrand), 0.2, 1.3, fkwargs={"args": (0.8,)},
               config=CONFIG)


def test_quad_vec_infinite_limit():
    def tail(k):
        return si.quad_vec(lambda t: np.array([np.exp(-k * t), t * np.exp(-k * t)]),
                           0.0, np.inf)[0]

    # the integrals are 1/k and 1/k^2: derivatives -1/k^2 and -2/k^3
    np.testing.assert_allclose([grad(lambda k: tail(k)[0])(2.0),
                                grad(lambda k: tail(k)[1])(2.0)], [-1 / 4, -2 / 8],
                               rtol=1e-7)


def test_quad_vec_workers_error():
    with pytest.raises(SolverError, match=re.escape(
            "scipy.integrate.quad_vec: workers other than 1 are not differentiated")):
        grad(lambda k: si.quad_vec(lambda t: np.array([k * t]), 0.0, 1.0,
                                   workers=2)[0][0])(1.0)
