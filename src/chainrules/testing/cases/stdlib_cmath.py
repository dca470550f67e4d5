"""Rule cases for the standard library's ``cmath`` module.

The complex128 runs use Python ``complex`` arguments, the float64 runs Python
``float`` arguments (the results are complex; real arguments get real
cotangents). Inputs avoid the branch cuts of the principal branches.
"""

from __future__ import annotations

import cmath
from typing import Any

import numpy as np

from chainrules.testing import Case, with_tangent

_BOTH = ("float64", "complex128")


def _z(rng: np.random.Generator, dt: np.dtype, re: tuple = (-2.0, 2.0),
       im: tuple = (-2.0, 2.0)) -> Any:
    """A Python complex with parts drawn from ``re`` and ``im`` (complex128), or a
    Python float drawn from ``re`` (float64)."""
    x = rng.uniform(*re)
    if dt.kind != "c":
        return float(x)
    return complex(x, rng.uniform(*im))


def _signed(rng: np.random.Generator, low: float, high: float) -> float:
    return float(rng.uniform(low, high) * rng.choice([-1.0, 1.0]))


def _case(f: Any, re: tuple = (-2.0, 2.0), im: tuple = (-2.0, 2.0), name: str | None = None,
          dtypes: tuple = _BOTH, away_im: float = 0.0) -> Case:
    def args(rng: np.random.Generator, dt: np.dtype) -> tuple:
        z = _z(rng, dt, re, im)
        if away_im and dt.kind == "c":
            z = complex(z.real, _signed(rng, away_im, im[1]))
        return (z,)

    return Case(f, args, dtypes=dtypes, name=name)


CASES: list[Case] = [
    _case(cmath.sin), _case(cmath.cos), _case(cmath.tan, (-1.2, 1.2), (-1.0, 1.0)),
    _case(cmath.sinh), _case(cmath.cosh), _case(cmath.tanh, (-1.0, 1.0), (-1.2, 1.2)),
    _case(cmath.exp),
    # cuts of log, log10, sqrt, phase, polar: the negative real axis
    _case(cmath.log, (0.1, 2.0)), _case(cmath.log10, (0.1, 2.0)), _case(cmath.sqrt, (0.1, 2.0)),
    _case(cmath.sqrt, (-2.0, -0.1), (-2.0, 2.0), name="cmath.sqrt(left half-plane)",
          dtypes=("complex128",), away_im=0.2),
    _case(cmath.log, (-2.0, -0.1), (-2.0, 2.0), name="cmath.log(left half-plane)",
          dtypes=("complex128",), away_im=0.2),
    # cuts of asin, acos, atanh: real axis outside (-1, 1); of acosh: real axis below 1
    _case(cmath.asin, (-0.9, 0.9), (-0.5, 0.5)),
    _case(cmath.asin, (-3.0, 3.0), (-2.0, 2.0), name="cmath.asin(off the real axis)",
          dtypes=("complex128",), away_im=0.2),
    _case(cmath.acos, (-0.9, 0.9), (-0.5, 0.5)),
    _case(cmath.acos, (-3.0, 3.0), (-2.0, 2.0), name="cmath.acos(off the real axis)",
          dtypes=("complex128",), away_im=0.2),
    _case(cmath.atanh, (-0.9, 0.9), (-0.5, 0.5)),
    _case(cmath.atanh, (-3.0, 3.0), (-2.0, 2.0), name="cmath.atanh(off the real axis)",
          dtypes=("complex128",), away_im=0.2),
    _case(cmath.acosh, (1.1, 3.0), (-0.5, 0.5)),
    _case(cmath.acosh, (-3.0, 3.0), (-2.0, 2.0), name="cmath.acosh(off the real axis)",
          dtypes=("complex128",), away_im=0.2),
    # cuts of atan, asinh: imaginary axis outside (-i, i)
    _case(cmath.atan, (0.2, 2.0), (-2.0, 2.0)),
    _case(cmath.atan, (-2.0, -0.2), (-2.0, 2.0), name="cmath.atan(left half-plane)"),
    _case(cmath.asinh, (0.2, 2.0), (-2.0, 2.0)),
    _case(cmath.asinh, (-2.0, -0.2), (-2.0, 2.0), name="cmath.asinh(left half-plane)"),
    _case(cmath.phase, (0.1, 2.0)),
    _case(cmath.phase, (-2.0, -0.1), (-2.0, 2.0), name="cmath.phase(left half-plane)",
          dtypes=("complex128",), away_im=0.2),
    _case(cmath.polar, (0.1, 2.0)),
    _case(cmath.polar, (-2.0, -0.1), (-2.0, 2.0), name="cmath.polar(left half-plane)",
          dtypes=("complex128",), away_im=0.2),
    Case(cmath.log, lambda rng, dt: (_z(rng, dt, (0.1, 2.0)), _z(rng, dt, (1.5, 4.0),
                                                                   (-0.5, 0.5))),
         dtypes=_BOTH, name="cmath.log(z, base)"),
    Case(cmath.rect, lambda rng, dt: (float(rng.uniform(0.1, 2.0)), float(rng.uniform(-3, 3))),
         dtypes=("float64",)),
    Case(cmath.exp, lambda rng, dt: (with_tangent(2, 0.5),), name="cmath.exp(int)"),
    Case(cmath.sin, lambda rng, dt: (np.float32(rng.uniform(-2, 2)),), dtypes=("float32",),
         name="cmath.sin(float32)"),
]
