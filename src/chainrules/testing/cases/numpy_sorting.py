"""Rule cases for ``np.partition`` and ``np.sort_complex`` (``chainrules.rules.numpy.sorting``)."""

from __future__ import annotations

import numpy as np

from chainrules.testing import Case


def _distinct(rng, dt, shape):
    """Values at least 1 apart, so that no perturbation changes their order."""
    n = int(np.prod(shape))
    values = rng.permutation(n).astype(np.float64) - n / 2
    if np.dtype(dt).kind == "c":
        values = values + 1j * rng.permutation(n)
    return values.astype(dt).reshape(shape)


_ALL = ("float64", "float32", "complex128")

CASES: list[Case] = [
    Case(np.partition, lambda rng, dt: (_distinct(rng, dt, (6,)), 2), dtypes=_ALL),
    Case(np.partition, lambda rng, dt: (_distinct(rng, dt, (3, 4)), [0, 2]), dtypes=_ALL,
         name="partition(2-d, kth=[0, 2])"),
    Case(np.partition, lambda rng, dt: (_distinct(rng, dt, (3, 4)), 1, 0), dtypes=_ALL,
         name="partition(axis=0)"),
    Case(np.partition, lambda rng, dt: (_distinct(rng, dt, (2, 3)), 4, None), dtypes=_ALL,
         name="partition(axis=None)"),
    Case(np.partition, lambda rng, dt: (_distinct(rng, dt, (4, 6))[:, ::2], -1),
         dtypes=_ALL, name="partition(non-contiguous)"),
    Case(np.sort_complex, lambda rng, dt: (_distinct(rng, dt, (5,)),), dtypes=_ALL),
    Case(np.sort_complex, lambda rng, dt: (_distinct(rng, dt, (2, 3)),), dtypes=_ALL,
         name="sort_complex(2-d)"),
]
