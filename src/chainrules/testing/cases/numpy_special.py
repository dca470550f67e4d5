"""Rule cases for ``np.i0`` and ``np.unwrap`` (``chainrules.rules.numpy.special``)."""

from __future__ import annotations

import numpy as np

from chainrules.rules.numpy.special import _i1
from chainrules.testing import Case, arr

_REAL = ("float64", "float32")


def _phases(rng, dt, shape):
    """Phases with jumps of about 2 pi, far from the +-pi threshold of a jump."""
    steps = rng.uniform(-1.0, 1.0, shape) + 2 * np.pi * rng.integers(-1, 2, shape)
    return np.cumsum(steps, axis=-1).astype(dt)


CASES: list[Case] = [
    Case(np.i0, lambda rng, dt: (arr(rng, dt, (5,)) * 3,), dtypes=_REAL),
    Case(np.i0, lambda rng, dt: (np.array([-25.0, -0.5, 0.0, 7.0, 19.9, 20.1, 40.0], dt),),
         dtypes=("float64",), name="i0(both series, 0, negative)"),
    Case(np.i0, lambda rng, dt: (arr(rng, dt, ()),), dtypes=_REAL, name="i0(0-d)"),
    # I1, i0's derivative, has a rule of its own (so i0 is differentiable twice)
    Case(_i1, lambda rng, dt: (arr(rng, dt, (5,)) * 3,), dtypes=("float64",),
         name="i0's derivative I1"),
    Case(_i1, lambda rng, dt: (np.array([-25.0, -0.5, 0.0, 7.0, 19.9, 20.1, 40.0], dt),),
         dtypes=("float64",), name="i0's derivative I1(both series, 0, negative)"),
    Case(np.unwrap, lambda rng, dt: (_phases(rng, dt, (8,)),), dtypes=_REAL),
    Case(np.unwrap, lambda rng, dt: (_phases(rng, dt, (3, 6)).T, np.pi, 0), dtypes=_REAL,
         name="unwrap(discont, axis=0)"),
    Case(np.unwrap, lambda rng, dt: (np.cumsum(rng.uniform(-1, 1, 7) + 6 * rng.integers(
        -1, 2, 7)).astype(dt),), kwargs={"period": 6.0}, dtypes=_REAL,
        name="unwrap(period=6)"),
]
