"""Rule cases for ``np.ndarray`` methods (``chainrules.rules.numpy.methods``).

Most method rules delegate to the function's rules (``np.ndarray.sum`` -> ``np.sum``),
so these rows also check that the delegation passes the arguments through unchanged.
"""

from __future__ import annotations

import numpy as np

from chainrules.testing import Case, arr, positive

_ALL = ("float64", "float32", "complex128")
_REAL = ("float64", "float32")
M = np.ndarray


def _a(*shape):
    return lambda rng, dt: (arr(rng, dt, shape),)


def _distinct(rng, dt, shape):
    """Entries far apart, so that max/min are not sensitive to the perturbations."""
    n = int(np.prod(shape))
    values = rng.permutation(n).astype(np.float64) - n / 2
    return values.astype(dt).reshape(shape)


def _off_unit(rng: np.random.Generator, dtype: np.dtype, shape: tuple) -> np.ndarray:
    """Moduli in [0, 0.8) or (1.2, 2.2): at least 0.2 from the ``clip`` bounds +-1 (at
    seed 12, an element 0.004 from a bound put the kink within the difference's reach)."""
    u = rng.uniform(0, 1.8, size=shape)
    return (np.where(u < 0.8, u, u + 0.4) * rng.choice([-1.0, 1.0], size=shape)).astype(dtype)


CASES: list[Case] = [
    # ---------------------------------------------------------------- delegating
    Case(M.sum, _a(2, 3), dtypes=_ALL),
    Case(M.sum, lambda rng, dt: (arr(rng, dt, (2, 3)), 1), dtypes=_ALL,
         name="ndarray.sum(axis=1)"),
    Case(M.sum, _a(2, 3), kwargs={"axis": 0, "keepdims": True}, dtypes=_ALL),
    Case(M.mean, lambda rng, dt: (arr(rng, dt, (2, 3)).T, 0), dtypes=_ALL,
         name="ndarray.mean(axis=0)"),
    Case(M.prod, _a(2, 3), kwargs={"axis": -1}, dtypes=_ALL),
    Case(M.max, lambda rng, dt: (_distinct(rng, dt, (2, 3)),), dtypes=_REAL),
    Case(M.max, lambda rng, dt: (_distinct(rng, dt, (2, 3)), 1), dtypes=_REAL,
         name="ndarray.max(axis=1)"),
    Case(M.min, lambda rng, dt: (_distinct(rng, dt, (2, 3)),), kwargs={"axis": 0},
         dtypes=_REAL),
    Case(M.std, _a(2, 3), dtypes=_ALL),
    Case(M.var, _a(2, 3), kwargs={"axis": 1, "ddof": 1}, dtypes=_ALL),
    Case(M.cumsum, _a(2, 3), dtypes=_ALL),
    Case(M.cumsum, lambda rng, dt: (arr(rng, dt, (2, 3)), 1), dtypes=_ALL,
         name="ndarray.cumsum(axis=1)"),
    Case(M.cumprod, lambda rng, dt: (positive(rng, dt, (4,)),), dtypes=_ALL),
    Case(M.dot, lambda rng, dt: (arr(rng, dt, (2, 3)), arr(rng, dt, (3,))), dtypes=_ALL),
    Case(M.conj, _a(3,), dtypes=_ALL),
    Case(M.conjugate, _a(2, 2), dtypes=_ALL),
    Case(M.clip, lambda rng, dt: (_off_unit(rng, dt, (5,)), -1.0, 1.0), dtypes=_REAL),
    Case(M.trace, _a(3, 3), dtypes=_ALL),
    Case(M.trace, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), 1, 1, 2), dtypes=_ALL,
         name="ndarray.trace(offset, axes)"),
    Case(M.diagonal, _a(3, 4), dtypes=_ALL),
    Case(M.diagonal, lambda rng, dt: (arr(rng, dt, (3, 4)), -1), dtypes=_ALL,
         name="ndarray.diagonal(offset=-1)"),
    Case(M.take, lambda rng, dt: (arr(rng, dt, (3, 2)), [0, 0, 5]), dtypes=_ALL),
    Case(M.take, lambda rng, dt: (arr(rng, dt, (3, 2)), np.array([1, 1]), 1), dtypes=_ALL,
         name="ndarray.take(axis=1)"),
    Case(M.repeat, lambda rng, dt: (arr(rng, dt, (2, 2)), 3), dtypes=_ALL),
    Case(M.repeat, lambda rng, dt: (arr(rng, dt, (2, 2)), [1, 2], 0), dtypes=_ALL,
         name="ndarray.repeat(array repeats, axis=0)"),
    Case(M.squeeze, _a(1, 3, 1), dtypes=_ALL),
    Case(M.squeeze, lambda rng, dt: (arr(rng, dt, (1, 3, 1)), 0), dtypes=_ALL,
         name="ndarray.squeeze(axis=0)"),
    Case(M.swapaxes, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), 2, 0), dtypes=_ALL),
    Case(M.ravel, lambda rng, dt: (arr(rng, dt, (3, 2))[::2],), dtypes=_ALL),
    Case(M.ravel, _a(2, 3), kwargs={"order": "F"}, dtypes=_ALL),
    # ---------------------------------------------------------------- own rules
    Case(M.reshape, lambda rng, dt: (arr(rng, dt, (2, 3)), 3, 2), dtypes=_ALL,
         name="ndarray.reshape(3, 2)"),
    Case(M.reshape, lambda rng, dt: (arr(rng, dt, (2, 3)), (-1,)), dtypes=_ALL,
         name="ndarray.reshape((-1,))"),
    Case(M.reshape, lambda rng, dt: (arr(rng, dt, (2, 3)), 6), kwargs={"order": "F"},
         dtypes=_ALL),
    Case(M.transpose, _a(2, 3, 4), dtypes=_ALL),
    Case(M.transpose, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), 1, 2, 0), dtypes=_ALL,
         name="ndarray.transpose(1, 2, 0)"),
    Case(M.transpose, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), (2, 0, 1)), dtypes=_ALL,
         name="ndarray.transpose((2, 0, 1))"),
    Case(M.transpose, lambda rng, dt: (arr(rng, dt, (2, 3)), None), dtypes=_ALL,
         name="ndarray.transpose(None)"),
    Case(M.flatten, _a(2, 3), dtypes=_ALL),
    Case(M.flatten, lambda rng, dt: (arr(rng, dt, (2, 3)), "F"), dtypes=_ALL,
         name="ndarray.flatten('F')"),
    Case(M.copy, lambda rng, dt: (arr(rng, dt, (4, 3)).T,), dtypes=_ALL),
    Case(M.astype, lambda rng, dt: (arr(rng, dt, (3,)), np.float64), dtypes=("float32",),
         name="ndarray.astype(float32 -> float64)"),
    Case(M.astype, lambda rng, dt: (arr(rng, dt, (3,)), np.complex64), dtypes=_REAL,
         name="ndarray.astype(real -> complex64)"),
    Case(M.astype, lambda rng, dt: (arr(rng, dt, (2, 2)), dt), dtypes=_ALL,
         name="ndarray.astype(same dtype)"),
    Case(M.compress, lambda rng, dt: (arr(rng, dt, (3, 2)), [True, False, True]), dtypes=_ALL),
    Case(M.compress, lambda rng, dt: (arr(rng, dt, (3, 2)), [False, True], 1), dtypes=_ALL,
         name="ndarray.compress(axis=1)"),
    Case(M.item, _a(1, 1), dtypes=_ALL),
    Case(M.item, lambda rng, dt: (arr(rng, dt, (2, 3)), 4), dtypes=_ALL,
         name="ndarray.item(4)"),
    Case(M.item, lambda rng, dt: (arr(rng, dt, (2, 3)), 1, 2), dtypes=_ALL,
         name="ndarray.item(1, 2)"),
    Case(M.item, lambda rng, dt: (arr(rng, dt, (2, 3)), (0, 1)), dtypes=_ALL,
         name="ndarray.item((0, 1))"),
]
