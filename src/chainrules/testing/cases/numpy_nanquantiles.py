"""Rule cases for ``np.nanquantile`` and ``np.nanpercentile``
(``chainrules.rules.numpy.nanquantiles``)."""

from __future__ import annotations

import numpy as np

from chainrules.testing import Case

_REAL = ("float64", "float32")


def _with_nans(rng, dt, shape, all_nan_row=False):
    """Distinct values (at least 1 apart: no perturbation reorders them), a few NaNs."""
    n = int(np.prod(shape))
    x = (rng.permutation(n).astype(np.float64) - n / 2).reshape(shape)
    x.reshape(-1)[rng.choice(n, size=max(1, n // 4), replace=False)] = np.nan
    if all_nan_row:
        x[0] = np.nan
    return x.astype(dt)


# q (n - 1) is never a whole number for these q and the slices' counts: there the
# derivative with respect to q jumps (from one gap between order statistics to the next)


def _q(*values):
    return np.array(values)


CASES: list[Case] = [
    Case(np.nanquantile, lambda rng, dt: (_with_nans(rng, dt, (8,)), 0.31), dtypes=_REAL),
    Case(np.nanquantile, lambda rng, dt: (_with_nans(rng, dt, (8,)), _q(0.13, 0.58, 0.93)),
         dtypes=_REAL, name="nanquantile(q array)"),
    Case(np.nanquantile, lambda rng, dt: (_with_nans(rng, dt, (3, 5)), _q(0.23, 0.71), 1),
         dtypes=_REAL, name="nanquantile(axis=1)"),
    Case(np.nanquantile, lambda rng, dt: (_with_nans(rng, dt, (4, 5)).T, 0.41, 0),
         kwargs={"keepdims": True}, dtypes=_REAL, name="nanquantile(axis=0, keepdims)"),
    Case(np.nanquantile, lambda rng, dt: (_with_nans(rng, dt, (2, 3, 4)), 0.61, (0, 2)),
         dtypes=_REAL, name="nanquantile(axis=(0, 2))"),
    Case(np.nanpercentile, lambda rng, dt: (_with_nans(rng, dt, (7,)), 37.3), dtypes=_REAL),
    Case(np.nanpercentile, lambda rng, dt: (_with_nans(rng, dt, (3, 4)), _q(11.3, 89.1), 1),
         dtypes=_REAL, name="nanpercentile(q array, axis=1)"),
]
