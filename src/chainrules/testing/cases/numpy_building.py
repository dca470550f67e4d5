"""Rule cases for ``np.meshgrid`` and ``np.block`` (``chainrules.rules.numpy.building``)."""

from __future__ import annotations

import numpy as np

from chainrules.testing import Case, arr

_ALL = ("float64", "float32", "complex128")


def _vectors(*ns):
    return lambda rng, dt: tuple(arr(rng, dt, (n,)) for n in ns)


CASES: list[Case] = [
    Case(np.meshgrid, _vectors(3, 2), dtypes=_ALL),
    Case(np.meshgrid, _vectors(3, 2), kwargs={"indexing": "ij"}, dtypes=_ALL),
    Case(np.meshgrid, _vectors(2, 3, 4), dtypes=_ALL, name="meshgrid(three axes)"),
    Case(np.meshgrid, _vectors(3, 2), kwargs={"sparse": True}, dtypes=_ALL),
    Case(np.meshgrid, _vectors(4), dtypes=_ALL, name="meshgrid(one axis)"),
    Case(np.meshgrid, lambda rng, dt: (arr(rng, dt, (2, 2)), arr(rng, dt, (3,))),
         dtypes=_ALL, name="meshgrid(2-d input, flattened)"),
    Case(np.block, lambda rng, dt: ([arr(rng, dt, (2, 2)), arr(rng, dt, (2, 1))],),
         dtypes=_ALL, name="block([A, b])"),
    Case(np.block, lambda rng, dt: ([[arr(rng, dt, (2, 2)), arr(rng, dt, (2, 3))],
                                     [arr(rng, dt, (1, 2)), arr(rng, dt, (1, 3))]],),
         dtypes=_ALL, name="block([[A, B], [C, D]])"),
    Case(np.block, lambda rng, dt: ([[arr(rng, dt, (2, 2)), np.zeros((2, 1), dt)],
                                     [arr(rng, dt, ()), arr(rng, dt, (1, 2))]],),
         dtypes=_ALL, name="block(with a scalar and a constant)"),
    Case(np.block, lambda rng, dt: ([arr(rng, dt, (3,)), arr(rng, dt, (2,))],), dtypes=_ALL,
         name="block(1-d)"),
]
