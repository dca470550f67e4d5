"""Rule cases for NumPy's polynomial functions (``chainrules.rules.numpy.polynomial``)."""

from __future__ import annotations

import numpy as np

from chainrules.testing import Case, arr

_ALL = ("float64", "float32", "complex128")
_REAL = ("float64", "float32")
# polydiv trims leading remainder coefficients within 1e-8 of zero: in float32 the
# round-off of those coefficients is larger, so the remainder's length (the output's
# shape) changes under the finite difference's perturbations
_DIV = ("float64", "complex128")


def _two(n1, n2):
    return lambda rng, dt: (arr(rng, dt, (n1,)), arr(rng, dt, (n2,)))


def _divisor(rng, dt, n):
    """A divisor whose leading coefficient is far from zero (the quotient divides by it)."""
    v = arr(rng, dt, (n,))
    v[0] = v[0] + (2 if np.real(v[0]) >= 0 else -2)
    return v


def _separated_roots(rng, dt, n):
    """Real roots at least 0.5 apart: a simple root moves smoothly with the coefficients."""
    r = np.cumsum(0.5 + rng.random(n)) - n / 2
    return np.poly(r).astype(dt)


CASES: list[Case] = [
    Case(np.polyadd, _two(3, 3), dtypes=_ALL),
    Case(np.polyadd, _two(2, 4), dtypes=_ALL, name="polyadd(shorter, longer)"),
    Case(np.polyadd, lambda rng, dt: (arr(rng, dt, (4,)), [0.5, 1.5]), dtypes=_REAL,
         name="polyadd(array, list)"),
    Case(np.polysub, _two(4, 2), dtypes=_ALL),
    Case(np.polymul, _two(3, 2), dtypes=_ALL),
    Case(np.polymul, _two(1, 4), dtypes=_ALL, name="polymul(constant, cubic)"),
    Case(np.polydiv, lambda rng, dt: (arr(rng, dt, (5,)), _divisor(rng, dt, 3)), dtypes=_DIV),
    Case(np.polydiv, lambda rng, dt: (arr(rng, dt, (4,)), _divisor(rng, dt, 1)), dtypes=_DIV,
         name="polydiv(by a constant)"),
    Case(np.polydiv, lambda rng, dt: (arr(rng, dt, (2,)), _divisor(rng, dt, 3)), dtypes=_ALL,
         name="polydiv(lower degree)"),
    Case(np.polyder, lambda rng, dt: (arr(rng, dt, (5,)),), dtypes=_ALL),
    Case(np.polyder, lambda rng, dt: (arr(rng, dt, (5,)), 2), dtypes=_ALL,
         name="polyder(m=2)"),
    Case(np.polyder, lambda rng, dt: (arr(rng, dt, (2,)), 3), dtypes=_REAL,
         name="polyder(m > degree)"),
    Case(np.polyint, lambda rng, dt: (arr(rng, dt, (4,)),), dtypes=_ALL),
    Case(np.polyint, lambda rng, dt: (arr(rng, dt, (3,)), 2), dtypes=_ALL,
         name="polyint(m=2)"),
    Case(np.polyint, lambda rng, dt: (arr(rng, dt, (3,)), 2, arr(rng, dt, (2,))), dtypes=_ALL,
         name="polyint(m=2, k)"),
    Case(np.polyint, lambda rng, dt: (arr(rng, dt, (3,)), 1, arr(rng, dt, ())), dtypes=_REAL,
         name="polyint(m=1, scalar k)"),
    Case(np.poly, lambda rng, dt: (arr(rng, dt, (4,)),), dtypes=_ALL),
    Case(np.poly, lambda rng, dt: (arr(rng, dt, (1,)),), dtypes=_REAL, name="poly(one root)"),
    Case(np.roots, lambda rng, dt: (_separated_roots(rng, dt, 3),), dtypes=("float64",),
         name="roots(real roots)"),
    Case(np.roots, lambda rng, dt: (np.array([1.0, 0.4, 2.0]).astype(dt),), dtypes=_REAL,
         name="roots(complex pair)"),
    Case(np.roots, lambda rng, dt: (arr(rng, dt, (4,)) + np.array([3, 0, 0, 0]),),
         dtypes=("complex128",)),
    Case(np.vander, lambda rng, dt: (arr(rng, dt, (3,)),), dtypes=_ALL),
    Case(np.vander, lambda rng, dt: (arr(rng, dt, (3,)), 4, True), dtypes=_ALL,
         name="vander(N=4, increasing)"),
    Case(np.vander, lambda rng, dt: (np.array([0.0, 1.5], dt),), dtypes=_REAL,
         name="vander(with a zero)"),
]
