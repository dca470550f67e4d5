"""Second derivatives through quadrature: a value, or a named refusal, never a silent zero.

A Hessian with respect to an integrand parameter passed in ``args=`` once came out as
0.0 through both ``quad`` and ``quad_vec`` (the parameter integral runs through SciPy's
adaptive quadrature, where the outer derivative was lost); it is now refused by name.
"""

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

from chainrules.ad import grad, hessian, jvp  # noqa: E402
from chainrules.rules.scipy.integrate import SolverError  # noqa: E402


def _gradient_difference(f, k, h=1e-4):
    return (grad(f)(k + h) - grad(f)(k - h)) / (2 * h)


def _quad_args(k):
    return si.quad(lambda t, k: np.exp(-k * t), 0.0, 1.0, args=(k,))[0]


def _quad_vec_args(k):
    return si.quad_vec(lambda t, k: np.exp(-k * t), 0.0, 1.0, args=(k,))[0]


@pytest.mark.parametrize("f, name", [(_quad_args, "scipy.integrate.quad"),
                                     (_quad_vec_args, "scipy.integrate.quad_vec")])
@pytest.mark.parametrize("second", [
    lambda f: hessian(f)(0.7),
    lambda f: jvp(grad(f), (0.7,), (1.0,)),
    lambda f: jvp(lambda k: jvp(f, (k,), (1.0,))[1], (0.7,), (1.0,)),
], ids=["hessian", "jvp of grad", "jvp of jvp"])
def test_second_derivative_through_args_is_refused_by_name(f, name, second):
    assert grad(f)(0.7) == pytest.approx(-0.3179693541930691, rel=1e-8)  # first order works
    with pytest.raises(SolverError, match=rf"{name}: a second derivative with respect to "
                                          r"the integrand's parameters passed in args="):
        second(f)


@pytest.mark.parametrize("f", [
    lambda k: si.quad(lambda t: np.exp(-t * t), 0.0, k)[0],
    lambda k: si.quad_vec(lambda t: np.exp(-k * t), 0.0, 1.0)[0],
], ids=["quad limit", "quad_vec closure"])
def test_second_derivative_that_works_matches_differences_of_the_gradient(f):
    expected = _gradient_difference(f, 0.7)
    assert hessian(f)(0.7) == pytest.approx(expected, rel=1e-6)
    assert jvp(grad(f), (0.7,), (1.0,))[1] == pytest.approx(expected, rel=1e-6)
