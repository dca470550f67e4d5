"""dblquad and nquad differentiated as nested quad calls (issue 29: dblquad ended in a
TracerConversionError inside scipy.integrate._qagse); tplquad refused by name."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.integrate as si

from chainrules.ad import grad, jvp
from chainrules.rules.scipy.optimize import SolverError

P = np.array([0.7, 1.3, 0.2, 1.5])


def _fd_gradient(f, p, eps=1e-3):
    # five points: the integrals are accurate to ~1e-10 here, the step is large
    out = []
    for e in np.eye(p.size) * eps:
        out.append((8 * (f(p + e) - f(p - e)) - (f(p + 2 * e) - f(p - 2 * e))) / (12 * eps))
    return np.array(out)


def dblquad_everything(p):
    # the integrand's closure (p[0]), a limit function's closure (p[2]), a constant limit
    # (p[1]) and args (p[3])
    return si.dblquad(lambda y, x, k: np.exp(-p[0] * x * y) * k, 0.0, p[1],
                      lambda x: p[2] * x, lambda x: 1.0 + x, args=(p[3],),
                      epsabs=1e-11, epsrel=1e-11)[0]


def test_dblquad_gradient_and_jvp_against_finite_differences():
    g = grad(dblquad_everything)(P)
    np.testing.assert_allclose(g, _fd_gradient(dblquad_everything, P), rtol=1e-7,
                               atol=1e-9)
    direction = np.array([0.3, -1.0, 0.5, 2.0])
    _, v_dot = jvp(dblquad_everything, (P,), (direction,))
    np.testing.assert_allclose(v_dot, g @ direction, rtol=1e-8)


def test_dblquad_closed_form():
    # the integral of c x y over the triangle 0 < y < x < b is c b^4 / 8
    def triangle(c, b):
        return si.dblquad(lambda y, x: c * x * y, 0.0, b, 0.0, lambda x: x)[0]

    gc, gb = grad(triangle, argnums=(0, 1))(2.0, 1.5)
    np.testing.assert_allclose([gc, gb], [1.5 ** 4 / 8, 2.0 * 1.5 ** 3 / 2], rtol=1e-10)


def test_nquad_two_levels_against_finite_differences():
    def program(p):
        return si.nquad(lambda x0, x1, a: np.exp(-p[0] * x0 * x1) * a,
                        [lambda x1, a: (0.0, 1.3 * x1), [0.0, p[2]]], args=(p[3],),
                        opts={"epsabs": 1e-11, "epsrel": 1e-11})[0]

    g = grad(program)(P)
    np.testing.assert_allclose(g, _fd_gradient(program, P), rtol=1e-7, atol=1e-9)
    direction = np.array([0.3, -1.0, 0.5, 2.0])
    np.testing.assert_allclose(jvp(program, (P,), (direction,))[1], g @ direction,
                               rtol=1e-8)


def test_tplquad_is_refused_error():
    with pytest.raises(SolverError, match=re.escape(
            "scipy.integrate.tplquad: the derivative of a 3-dimensional integral by nested "
            "adaptive quadratures would take minutes, so it is not computed; expected a "
            "double integral")):
        grad(lambda c: si.tplquad(lambda z, y, x: c * x, 0.0, 1.0, 0.0, 1.0, 0.0,
                                  1.0)[0])(1.0)


def test_nquad_options_error():
    with pytest.raises(SolverError, match=re.escape(
            "scipy.integrate.nquad: the options ['points'] are not differentiated")):
        grad(lambda c: si.nquad(lambda x0, x1: c * x0 * x1, [[0.0, 1.0], [0.0, 1.0]],
                                opts={"points": [0.5]})[0])(1.0)


def test_nquad_range_function_parameters_through_args():
    # a range function receives the outer variables and args: a parameter given there
    # is differentiated (one captured in its closure is not handed over detached)
    def program(p):
        return si.nquad(lambda x0, x1, a, b: np.exp(-p[0] * x0 * x1) * a,
                        [lambda x1, a, b: (0.0, b * x1), [0.0, p[2]]], args=(p[3], p[1]))[0]

    np.testing.assert_allclose(grad(program)(P), _fd_gradient(program, P), rtol=1e-6,
                               atol=1e-8)
