"""Rule cases for NumPy indexing, selection and sorting (``chainrules.rules.numpy.indexing``)."""

from __future__ import annotations

import operator

import numpy as np

from chainrules.testing import Case, arr, scalar

_ALL = ("float64", "float32", "complex128")


def _getitem(idx, shape=(3, 4), name=None, f=operator.getitem):
    label = name or repr(idx)
    return Case(f, lambda rng, dt: (arr(rng, dt, shape), idx), dtypes=_ALL,
                name=f"{'operator.getitem' if f is operator.getitem else 'ndarray.__getitem__'}"
                     f"[{label}]")


def _distinct(rng, dt, shape):
    """Entries far apart, so that sorting is not sensitive to the perturbations."""
    n = int(np.prod(shape))
    values = rng.permutation(n).astype(np.float64) - n / 2
    if dt.kind == "c":
        return (values + 1j * rng.uniform(-1, 1, n)).astype(dt).reshape(shape)
    return values.astype(dt).reshape(shape) + rng.uniform(-0.1, 0.1, shape).astype(dt)


CASES: list[Case] = [
    # ---------------------------------------------------------------- x[idx]
    _getitem(1),
    _getitem(-1, shape=(4,), name="-1 of 1-d"),
    _getitem((1, 2), name="scalar element"),
    _getitem(slice(1, None)),
    _getitem((Ellipsis, slice(None, None, 2))),
    _getitem((None, 0, None, slice(1, 3))),
    _getitem(()),
    _getitem(np.array([0, 2, 0, 0])),
    _getitem([2, 1, 2], name="list [2, 1, 2]"),
    _getitem((np.array([0, 2, 2]), np.array([1, 1, 3])), name="two index arrays"),
    _getitem((slice(None), np.array([[3, 3], [0, 3]])), name="slice and 2-d index array"),
    _getitem(np.array([True, False, True]), name="row mask"),
    _getitem(np.array([[True, False, True, True]] * 3), name="full mask"),
    _getitem((np.array([1, 1]), None, slice(None, 2)), name="index array, None, slice"),
    _getitem((Ellipsis, np.array([0, 0])), shape=(2, 3, 4), name="ellipsis, repeated"),
    _getitem(slice(2, 2), name="empty slice"),
    _getitem((1, np.array([0, 0, 1])), f=np.ndarray.__getitem__),
    _getitem((slice(None, None, -1), 1), f=np.ndarray.__getitem__),
    Case(operator.getitem, lambda rng, dt: (arr(rng, dt, (4, 3)).T[::2], (1, slice(None))),
         dtypes=_ALL, name="operator.getitem[non-contiguous view]"),
    # ---------------------------------------------------------------- take
    Case(np.take, lambda rng, dt: (arr(rng, dt, (3, 4)), np.array([5, 0, 5, 11])), dtypes=_ALL),
    Case(np.take, lambda rng, dt: (arr(rng, dt, (3, 4)), [[1, 1], [0, 2]], 1), dtypes=_ALL,
         name="numpy.take(axis=1)"),
    Case(np.take, lambda rng, dt: (arr(rng, dt, (3, 4)), 2), kwargs={"axis": 0}, dtypes=_ALL),
    Case(np.take, lambda rng, dt: (arr(rng, dt, (4,)), np.array([-1, 5, 9])),
         kwargs={"mode": "wrap"}, dtypes=_ALL),
    Case(np.take, lambda rng, dt: (arr(rng, dt, (4,)), np.array([-3, 1, 9])),
         kwargs={"mode": "clip"}, dtypes=_ALL),
    Case(np.take_along_axis, lambda rng, dt: (arr(rng, dt, (3, 4)),
                                              np.array([[0, 0], [3, 1], [2, 2]]), 1),
         dtypes=_ALL),
    Case(np.take_along_axis, lambda rng, dt: (arr(rng, dt, (3, 2)), np.array([[2, 0]])),
         kwargs={"axis": 0}, dtypes=_ALL),
    Case(np.take_along_axis, lambda rng, dt: (arr(rng, dt, (2, 3)), np.array([5, 0, 0]), None),
         dtypes=_ALL, name="numpy.take_along_axis(axis=None)"),
    Case(np.compress, lambda rng, dt: (np.array([True, False, True]), arr(rng, dt, (3, 2))),
         dtypes=_ALL),
    Case(np.compress, lambda rng, dt: ([False, True], arr(rng, dt, (3, 2)), 1), dtypes=_ALL,
         name="numpy.compress(axis=1)"),
    Case(np.extract, lambda rng, dt: (np.array([[1, 0, 2], [0, 0, 3]]), arr(rng, dt, (2, 3))),
         dtypes=_ALL),
    # ---------------------------------------------------------------- where, select, choose
    Case(np.where, lambda rng, dt: (np.array([True, False, True]), arr(rng, dt, (3,)),
                                    arr(rng, dt, (3,))), dtypes=_ALL),
    Case(np.where, lambda rng, dt: (np.array([[True], [False]]), arr(rng, dt, (3,)),
                                    scalar(rng, dt)), dtypes=_ALL,
         name="numpy.where(broadcast, scalar)"),
    Case(np.where, lambda rng, dt: (np.array([True, False]), 2.0, arr(rng, dt, (2, 1))),
         dtypes=_ALL, name="numpy.where(python float)"),
    Case(np.select, lambda rng, dt: ([np.array([True, False, False]),
                                      np.array([True, True, False])],
                                     [arr(rng, dt, (3,)), arr(rng, dt, (2, 3))]), dtypes=_ALL),
    Case(np.select, lambda rng, dt: ([np.array([True, False, False]),
                                      np.array([[False, True, False]])],
                                     (arr(rng, dt, (3,)), arr(rng, dt, ())),
                                     arr(rng, dt, (2, 1))),
         dtypes=_ALL, name="numpy.select(default)"),
    Case(np.choose, lambda rng, dt: (np.array([0, 2, 1, 0]),
                                     [arr(rng, dt, (4,)), arr(rng, dt, (4,)), scalar(rng, dt)]),
         dtypes=_ALL),
    Case(np.choose, lambda rng, dt: (np.array([[0, 3, 1]]), arr(rng, dt, (2, 2, 3))),
         kwargs={"mode": "clip"}, dtypes=_ALL, name="numpy.choose(array choices, clip)"),
    Case(np.choose, lambda rng, dt: (np.array([0, -1, 4]), [arr(rng, dt, (3,)),
                                                             arr(rng, dt, (3,))]),
         kwargs={"mode": "wrap"}, dtypes=_ALL),
    # ---------------------------------------------------------------- sort
    Case(np.sort, lambda rng, dt: (_distinct(rng, dt, (3, 4)),), dtypes=_ALL),
    Case(np.sort, lambda rng, dt: (_distinct(rng, dt, (3, 4)), 0), dtypes=_ALL,
         name="numpy.sort(axis=0)"),
    Case(np.sort, lambda rng, dt: (_distinct(rng, dt, (3, 4)),), kwargs={"axis": None},
         dtypes=_ALL),
    Case(np.sort, lambda rng, dt: (_distinct(rng, dt, (4, 3)).T[::2],),
         kwargs={"kind": "stable"}, dtypes=_ALL),
]
