"""Rule cases for the standard library's ``math`` module.

``math`` takes real scalars only: the ``float64`` runs use Python ``float``
arguments, the ``float32`` runs NumPy ``float32`` scalars (their cotangents must
come back as ``float32``). Python ``int`` arguments are run with an explicit
float tangent (ints are differentiable like floats when given one).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrules.testing import Case, no_tangent, with_tangent

_REAL = ("float64", "float32")


def _s(rng: np.random.Generator, dtype: np.dtype, low: float = -2.0, high: float = 2.0,
       away: float = 0.0) -> Any:
    """A real scalar in (low, high), at least ``away`` from 0: Python float for
    float64, ``np.float32`` for float32."""
    v = rng.uniform(low, high)
    if away and abs(v) < away:
        v = away if v >= 0 else -away
    return float(v) if dtype == np.float64 else dtype.type(v)


def _one(f: Any, low: float = -2.0, high: float = 2.0, name: str | None = None,
         **kw: Any) -> Case:
    return Case(f, lambda rng, dt: (_s(rng, dt, low, high),), dtypes=_REAL, name=name, **kw)


def _two(f: Any, lo1: float, hi1: float, lo2: float, hi2: float, name: str | None = None,
         **kw: Any) -> Case:
    return Case(f, lambda rng, dt: (_s(rng, dt, lo1, hi1), _s(rng, dt, lo2, hi2)),
                dtypes=_REAL, name=name, **kw)


CASES: list[Case] = [
    _one(math.sin), _one(math.cos), _one(math.tan, -1.2, 1.2),
    _one(math.asin, -0.9, 0.9), _one(math.acos, -0.9, 0.9), _one(math.atan, -3.0, 3.0),
    _one(math.sinh), _one(math.cosh), _one(math.tanh),
    _one(math.asinh, -3.0, 3.0), _one(math.acosh, 1.1, 4.0), _one(math.atanh, -0.9, 0.9),
    _one(math.exp), _one(math.expm1), _one(math.log1p, -0.9, 3.0),
    _one(math.log2, 0.1, 4.0), _one(math.log10, 0.1, 4.0), _one(math.sqrt, 0.1, 4.0),
    _one(math.erf), _one(math.erfc),
    _one(math.gamma, 0.2, 4.0), _one(math.gamma, -1.9, -1.1, name="math.gamma(negative)"),
    _one(math.lgamma, 0.2, 6.0), _one(math.lgamma, -2.9, -2.1, name="math.lgamma(negative)"),
    _one(math.lgamma, 12.0, 30.0, name="math.lgamma(large)"),
    _one(math.fabs, 0.1, 2.0, name="math.fabs(positive)"),
    _one(math.fabs, -2.0, -0.1, name="math.fabs(negative)"),
    _one(math.degrees), _one(math.radians),
    _one(math.modf, 0.1, 3.7), _one(math.modf, -3.7, -0.1, name="math.modf(negative)"),
    _one(math.frexp, 0.3, 40.0), _one(math.frexp, -40.0, -0.3, name="math.frexp(negative)"),
    Case(math.log, lambda rng, dt: (_s(rng, dt, 0.1, 4.0),), dtypes=_REAL),
    Case(math.log, lambda rng, dt: (_s(rng, dt, 0.1, 4.0), _s(rng, dt, 1.5, 5.0)),
         dtypes=_REAL, name="math.log(x, base)"),
    Case(math.log, lambda rng, dt: (with_tangent(7, 0.5),), name="math.log(int)"),
    Case(math.sin, lambda rng, dt: (with_tangent(3, -1.25),), name="math.sin(int)"),
    _two(math.atan2, -2.0, 2.0, 0.2, 2.0),
    _two(math.atan2, -2.0, 2.0, -2.0, -0.2, name="math.atan2(x<0)"),
    _two(math.copysign, 0.2, 2.0, -2.0, -0.2),
    _two(math.copysign, -2.0, -0.2, 0.2, 2.0, name="math.copysign(x<0, s>0)"),
    _two(math.fmod, 0.3, 5.0, 0.7, 1.3),
    _two(math.fmod, -5.0, -0.3, -1.3, -0.7, name="math.fmod(negative)"),
    _two(math.remainder, 0.3, 5.0, 0.7, 1.3),
    _two(math.nextafter, -2.0, 2.0, 3.0, 4.0),
    _two(math.pow, 0.2, 3.0, -2.0, 2.0),
    # x < 0: x ** p is defined for integer p only, so p is held fixed (no_tangent)
    Case(math.pow, lambda rng, dt: (_s(rng, dt, -3.0, -0.5), no_tangent(3.0)),
         dtypes=_REAL, name="math.pow(x<0, integer p fixed)"),
    Case(math.pow, lambda rng, dt: (with_tangent(3, 0.5), with_tangent(2, -0.25)),
         name="math.pow(int, int)"),
    Case(math.hypot, lambda rng, dt: (_s(rng, dt), _s(rng, dt), _s(rng, dt)),
         dtypes=_REAL, name="math.hypot(3 args)"),
    Case(math.hypot, lambda rng, dt: (_s(rng, dt, away=0.3),), dtypes=_REAL,
         name="math.hypot(1 arg)"),
    Case(math.hypot, lambda rng, dt: (), name="math.hypot()"),
    Case(math.dist, lambda rng, dt: (tuple(_s(rng, dt) for _ in range(3)),
                                     tuple(_s(rng, dt) for _ in range(3))), dtypes=_REAL),
    Case(math.dist, lambda rng, dt: ([_s(rng, dt) for _ in range(2)],
                                     [_s(rng, dt) for _ in range(2)]),
         dtypes=_REAL, name="math.dist(lists)"),
    Case(math.prod, lambda rng, dt: (tuple(_s(rng, dt) for _ in range(4)),), dtypes=_REAL),
    Case(math.prod, lambda rng, dt: ([_s(rng, dt) for _ in range(3)],),
         kwargs={"start": 2.5}, dtypes=_REAL),
    Case(math.prod, lambda rng, dt: ((_s(rng, dt), 0.0, _s(rng, dt)),), dtypes=_REAL,
         name="math.prod(with a zero)"),
    Case(math.prod, lambda rng, dt: ((np.asarray(rng.uniform(-2, 2, (2, 3)), dtype=dt),
                                      np.asarray(rng.uniform(-2, 2, (3,)), dtype=dt)),),
         dtypes=_REAL, name="math.prod(arrays, broadcasting)"),
    Case(math.fsum, lambda rng, dt: ([_s(rng, dt) for _ in range(5)],), dtypes=_REAL),
    Case(math.fsum, lambda rng, dt: (tuple(_s(rng, dt) for _ in range(2)),), dtypes=_REAL,
         name="math.fsum(tuple)"),
    Case(math.ldexp, lambda rng, dt: (_s(rng, dt), 3), dtypes=_REAL),
    Case(math.ldexp, lambda rng, dt: (_s(rng, dt), -2), dtypes=_REAL,
         name="math.ldexp(negative exponent)"),
]

if hasattr(math, "exp2"):
    CASES.append(_one(math.exp2))
if hasattr(math, "cbrt"):
    CASES += [_one(math.cbrt, 0.1, 3.0), _one(math.cbrt, -3.0, -0.1, name="math.cbrt(negative)")]
if hasattr(math, "sumprod"):
    CASES.append(Case(math.sumprod, lambda rng, dt: ([_s(rng, dt) for _ in range(3)],
                                                     (_s(rng, dt), _s(rng, dt), _s(rng, dt))),
                      dtypes=_REAL))
if hasattr(math, "fma"):
    CASES.append(Case(math.fma, lambda rng, dt: (_s(rng, dt), _s(rng, dt), _s(rng, dt)),
                      dtypes=_REAL))
