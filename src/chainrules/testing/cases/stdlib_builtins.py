"""Rule cases for Python builtins (``abs`` and ``pow`` are in ``stdlib_operator``).

Numbers are Python ``float`` (float64 runs), Python ``complex`` (complex128) or
NumPy ``float32`` scalars; sequences mix numbers and arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.testing import Case, arr, with_tangent

_ALL = ("float64", "float32", "complex128")
_REAL = ("float64", "float32")


def _n(rng: np.random.Generator, dt: np.dtype, low: float = -2.0, high: float = 2.0) -> Any:
    """A Python float / complex for float64 / complex128, a NumPy scalar otherwise."""
    v = arr(rng, dt, (), low, high)
    if dt == np.float64:
        return float(v)
    if dt == np.complex128:
        return complex(v)
    return v


def _distinct(rng: np.random.Generator, dt: np.dtype, n: int) -> list:
    """n real numbers at least 0.2 apart (min/max/sorted are smooth there)."""
    base = rng.permutation(n) * 0.5 - n * 0.25
    vals = base + rng.uniform(-0.1, 0.1, n)
    return [float(v) if dt == np.float64 else dt.type(v) for v in vals]


CASES: list[Case] = [
    Case(sum, lambda rng, dt: ([_n(rng, dt) for _ in range(4)],), dtypes=_ALL),
    Case(sum, lambda rng, dt: ((_n(rng, dt), _n(rng, dt)), _n(rng, dt)), dtypes=_ALL,
         name="sum(tuple, start)"),
    Case(sum, lambda rng, dt: ([arr(rng, dt, (2, 3)), arr(rng, dt, (3,)), _n(rng, dt)],),
         dtypes=_ALL, name="sum(arrays, broadcasting)"),
    Case(sum, lambda rng, dt: ([arr(rng, dt, (3,))], arr(rng, dt, (2, 3))), dtypes=_ALL,
         name="sum(arrays, array start)"),
    Case(sum, lambda rng, dt: ([_n(rng, dt), _n(rng, dt)],), kwargs={"start": 1.5},
         dtypes=_ALL),
    Case(sum, lambda rng, dt: (arr(rng, dt, (4, 2)),), dtypes=_ALL, name="sum(array)"),
    Case(sum, lambda rng, dt: (arr(rng, dt, (3,)), arr(rng, dt, (2, 1))), dtypes=_ALL,
         name="sum(array, broadcasting start)"),
    Case(sum, lambda rng, dt: (arr(rng, dt, (0, 2)), arr(rng, dt, (2,))), dtypes=_ALL,
         name="sum(empty array, start)"),
    Case(sum, lambda rng, dt: ([], _n(rng, dt)), dtypes=_ALL, name="sum(empty list, start)"),
    Case(sum, lambda rng, dt: ([(_n(rng, dt),), (arr(rng, dt, (2,)), _n(rng, dt))], ()),
         dtypes=_ALL, name="sum(tuples, () start): concatenation"),
    Case(sum, lambda rng, dt: ([[_n(rng, dt)], [_n(rng, dt), "a"]], [_n(rng, dt)]),
         dtypes=_ALL, name="sum(lists, list start): concatenation"),
    Case(sum, lambda rng, dt: ([[_n(rng, dt)], [_n(rng, dt)]],), kwargs={"start": [1.0]},
         dtypes=_ALL, name="sum(lists, start=[1.0]): concatenation"),
    Case(max, lambda rng, dt: tuple(_distinct(rng, dt, 3)), dtypes=_REAL, name="max(3 args)"),
    Case(min, lambda rng, dt: tuple(_distinct(rng, dt, 2)), dtypes=_REAL, name="min(2 args)"),
    Case(max, lambda rng, dt: (_distinct(rng, dt, 5),), dtypes=_REAL, name="max(list)"),
    Case(min, lambda rng, dt: (tuple(_distinct(rng, dt, 4)),), dtypes=_REAL, name="min(tuple)"),
    Case(max, lambda rng, dt: (np.asarray(_distinct(rng, dt, 4), dtype=dt),), dtypes=_REAL,
         name="max(array)"),
    Case(min, lambda rng, dt: (_distinct(rng, dt, 4),), kwargs={"key": abs}, dtypes=_REAL,
         name="min(list, key=abs)"),
    Case(max, lambda rng, dt: ([(_n(rng, dt, 0, 1), "a"), (_n(rng, dt, 2, 3), "b")],),
         kwargs={"key": lambda t: t[0]}, dtypes=_REAL, name="max(list of tuples, key)"),
    Case(max, lambda rng, dt: ([],), kwargs={"default": 0.0}, dtypes=_REAL,
         name="max(empty, default)"),
    Case(sorted, lambda rng, dt: (_distinct(rng, dt, 5),), dtypes=_REAL),
    Case(sorted, lambda rng, dt: (tuple(_distinct(rng, dt, 4)),),
         kwargs={"key": abs, "reverse": True}, dtypes=_REAL,
         name="sorted(tuple, key=abs, reverse=True)"),
    Case(float, lambda rng, dt: (_n(rng, dt),), dtypes=_REAL),
    Case(float, lambda rng, dt: (np.asarray(arr(rng, dt, ())),), dtypes=_REAL,
         name="float(0-d array)"),
    Case(float, lambda rng, dt: (with_tangent(3, 0.5),), name="float(int)"),
    Case(complex, lambda rng, dt: (_n(rng, dt),), dtypes=_ALL),
    Case(complex, lambda rng, dt: (_n(rng, dt), _n(rng, dt)), dtypes=_ALL,
         name="complex(real, imag)"),
    Case(divmod, lambda rng, dt: (_n(rng, dt, 0.1, 1.5), _n(rng, dt, 1.6, 2.0)), dtypes=_REAL),
    # x / m in (-1.65, -1.15): floor(x / m) = -2 with room on both sides (x up to 3.5
    # reached x / m = -2, a jump of the quotient, at seed 28)
    Case(divmod, lambda rng, dt: (_n(rng, dt, 2.2, 2.8), _n(rng, dt, -1.9, -1.7)),
         dtypes=_REAL, name="divmod(x > 0, m < 0)"),
    Case(divmod, lambda rng, dt: (arr(rng, dt, (3, 1), 0.1, 1.5), arr(rng, dt, (2,), 1.6, 2.0)),
         dtypes=_REAL, name="divmod(arrays, broadcasting)"),
]
