"""Rule cases for NumPy shape manipulation and construction (``chainrules.rules.numpy.shape``)."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from chainrules.testing import Case, arr, integers, scalar

_ALL = ("float64", "float32", "complex128")

# A float64 input with a float32 output: the finite differences see float32 rounding, so
# the tolerances are float32's defaults (the testers derive them from the inputs only;
# with float64 ones seed 3 fails for a correct rule).
F32_OUT = {"rtol": 2e-3, "atol": 1e-5}

# The testers rebuild perturbed inputs as C-contiguous arrays, so a function whose result
# depends on the memory layout of its input is differentiated as another function.
# tests/rules/test_numpy_shape.py checks these rules with the layout made inside f.
_LAYOUT = ("tester: perturbed inputs are rebuilt C-contiguous, so the finite differences "
           "of a layout-dependent function (order='A'/'K' of a non-C-contiguous array) "
           "differentiate another function")

def _a(*shape: int):
    """args builder: one random array of ``shape``."""
    return lambda rng, dt: (arr(rng, dt, shape),)


def _py(rng, dt):
    """A nested Python list of Python scalars of the dtype's kind."""
    x = arr(rng, dt, (2, 3))
    return [[complex(v) if dt.kind == "c" else float(v) for v in row] for row in x]


CASES: list[Case] = [
    # ---------------------------------------------------------------- reshaping
    Case(np.reshape, lambda rng, dt: (arr(rng, dt, (2, 3)), (3, 2)), dtypes=_ALL),
    Case(np.reshape, lambda rng, dt: (arr(rng, dt, (2, 3)), (-1,)), kwargs={"order": "F"},
         dtypes=_ALL),
    Case(np.reshape, lambda rng, dt: (arr(rng, dt, (4, 3)).T, (2, 6)), kwargs={"order": "A"},
         dtypes=_ALL, name="numpy.reshape(order='A', F-contiguous)", xfail=_LAYOUT),
    Case(np.reshape, lambda rng, dt: (arr(rng, dt, (6, 2))[::2], (2, 3)), dtypes=_ALL,
         name="numpy.reshape(strided view)"),
    Case(np.reshape, lambda rng, dt: (arr(rng, dt, ()), (1, 1)), dtypes=_ALL,
         name="numpy.reshape(0-d)"),
    Case(np.reshape, lambda rng, dt: (arr(rng, dt, (0, 3)), (3, 0)), dtypes=_ALL,
         name="numpy.reshape(empty)"),
    Case(np.reshape, lambda rng, dt: (_py(rng, dt), (3, 2)), dtypes=_ALL,
         name="numpy.reshape(nested list)"),
    Case(np.ravel, _a(2, 3), dtypes=_ALL),
    Case(np.ravel, lambda rng, dt: (arr(rng, dt, (2, 3)), "F"), dtypes=_ALL,
         name="numpy.ravel('F')"),
    Case(np.ravel, lambda rng, dt: (arr(rng, dt, (3, 4)).T[::-1],), kwargs={"order": "K"},
         dtypes=_ALL, name="numpy.ravel(order='K', negative strides)", xfail=_LAYOUT),
    Case(np.ravel, lambda rng, dt: (arr(rng, dt, (4, 3)).T,), kwargs={"order": "A"},
         dtypes=_ALL, xfail=_LAYOUT),
    Case(np.ravel, _a(3, 4), kwargs={"order": "K"}, dtypes=_ALL,
         name="numpy.ravel(order='K', C-contiguous)"),
    Case(np.squeeze, _a(1, 3, 1), dtypes=_ALL),
    Case(np.squeeze, lambda rng, dt: (arr(rng, dt, (1, 3, 1)), 2), dtypes=_ALL,
         name="numpy.squeeze(axis=2)"),
    Case(np.squeeze, _a(1,), dtypes=_ALL, name="numpy.squeeze(to 0-d)"),
    Case(np.expand_dims, lambda rng, dt: (arr(rng, dt, (2, 3)), (0, 2)), dtypes=_ALL),
    Case(np.atleast_1d, lambda rng, dt: (scalar(rng, dt),), dtypes=_ALL),
    Case(np.atleast_2d, _a(3,), dtypes=_ALL),
    Case(np.atleast_3d, _a(2, 3), dtypes=_ALL),
    Case(np.atleast_3d, lambda rng, dt: (arr(rng, dt, (3,)), arr(rng, dt, ()),
                                         arr(rng, dt, (2, 2, 2))), dtypes=_ALL,
         name="numpy.atleast_3d(three arrays)"),
    # ---------------------------------------------------------------- axes
    Case(np.transpose, _a(2, 3, 4), dtypes=_ALL),
    Case(np.transpose, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), (1, -1, 0)), dtypes=_ALL,
         name="numpy.transpose(axes)"),
    Case(np.matrix_transpose, _a(2, 3, 4), dtypes=_ALL),
    Case(np.swapaxes, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), 0, -1), dtypes=_ALL),
    Case(np.moveaxis, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), 0, -1), dtypes=_ALL),
    Case(np.moveaxis, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), (0, 1), (2, 0)),
         dtypes=_ALL, name="numpy.moveaxis(several)"),
    Case(np.flip, _a(2, 3), dtypes=_ALL),
    Case(np.flip, lambda rng, dt: (arr(rng, dt, (2, 3, 2)), (0, 2)), dtypes=_ALL,
         name="numpy.flip(axes)"),
    Case(np.fliplr, _a(2, 3), dtypes=_ALL),
    Case(np.flipud, lambda rng, dt: (arr(rng, dt, (3, 4))[:, ::2],), dtypes=_ALL),
    Case(np.roll, lambda rng, dt: (arr(rng, dt, (2, 3)), 2), dtypes=_ALL),
    Case(np.roll, lambda rng, dt: (arr(rng, dt, (2, 3)), -1, 1), dtypes=_ALL,
         name="numpy.roll(axis=1)"),
    Case(np.roll, lambda rng, dt: (arr(rng, dt, (2, 3)), (1, 2), (0, 1)), dtypes=_ALL,
         name="numpy.roll(tuple shift)"),
    Case(np.rot90, _a(2, 3), dtypes=_ALL),
    Case(np.rot90, lambda rng, dt: (arr(rng, dt, (2, 3, 2)), 3, (2, 1)), dtypes=_ALL,
         name="numpy.rot90(k=3, axes)"),
    # ---------------------------------------------------------------- broadcasting
    Case(np.broadcast_to, lambda rng, dt: (arr(rng, dt, (3, 1)), (2, 3, 4)), dtypes=_ALL),
    Case(np.broadcast_to, lambda rng, dt: (scalar(rng, dt), (2,)), dtypes=_ALL,
         name="numpy.broadcast_to(scalar)"),
    Case(np.broadcast_arrays, lambda rng, dt: (arr(rng, dt, (3, 1)), arr(rng, dt, (4,)),
                                               scalar(rng, dt)), dtypes=_ALL),
    # ---------------------------------------------------------------- joining
    Case(np.concatenate, lambda rng, dt: ([arr(rng, dt, (2, 3)), arr(rng, dt, (1, 3))],),
         dtypes=_ALL),
    Case(np.concatenate, lambda rng, dt: ((arr(rng, dt, (2, 3)), arr(rng, dt, (2, 1)).T.T),
                                          1), dtypes=_ALL, name="numpy.concatenate(tuple, 1)"),
    Case(np.concatenate, lambda rng, dt: ([arr(rng, dt, (2, 2)), arr(rng, dt, (3,))],),
         kwargs={"axis": None}, dtypes=_ALL),
    Case(np.concatenate, lambda rng, dt: ([arr(rng, dt, (2, 3)), integers(rng, (1, 3))],),
         dtypes=_ALL, name="numpy.concatenate(with an integer array)"),
    Case(np.concatenate, lambda rng, dt: ([arr(rng, dt, (2, 3)), arr(rng, dt, (0, 3))],),
         dtypes=_ALL, name="numpy.concatenate(with empty)"),
    Case(np.concatenate, lambda rng, dt: (arr(rng, dt, (2, 3, 2)),), dtypes=_ALL,
         name="numpy.concatenate(array)"),
    Case(np.stack, lambda rng, dt: ([arr(rng, dt, (2, 3)), arr(rng, dt, (4, 3))[::2]],),
         dtypes=_ALL),
    Case(np.stack, lambda rng, dt: ([arr(rng, dt, (2,)), arr(rng, dt, (2,))], -1),
         dtypes=_ALL, name="numpy.stack(axis=-1)"),
    Case(np.hstack, lambda rng, dt: ([arr(rng, dt, (2,)), arr(rng, dt, (3,))],), dtypes=_ALL),
    Case(np.hstack, lambda rng, dt: ((arr(rng, dt, (2, 1)), arr(rng, dt, (2, 2))),),
         dtypes=_ALL, name="numpy.hstack(2-d)"),
    Case(np.vstack, lambda rng, dt: ([arr(rng, dt, (3,)), arr(rng, dt, (2, 3))],), dtypes=_ALL),
    Case(np.dstack, lambda rng, dt: ([arr(rng, dt, (2,)), arr(rng, dt, (1, 2, 2))],),
         dtypes=_ALL),
    Case(np.column_stack, lambda rng, dt: ([arr(rng, dt, (3,)), arr(rng, dt, (3, 2))],),
         dtypes=_ALL),
    Case(np.append, lambda rng, dt: (arr(rng, dt, (2, 2)), arr(rng, dt, (3,))), dtypes=_ALL),
    Case(np.append, lambda rng, dt: (arr(rng, dt, (2, 2)), arr(rng, dt, (1, 2)), 0),
         dtypes=_ALL, name="numpy.append(axis=0)"),
    # ---------------------------------------------------------------- splitting
    Case(np.split, lambda rng, dt: (arr(rng, dt, (6, 2)), 3), dtypes=_ALL),
    Case(np.split, lambda rng, dt: (arr(rng, dt, (2, 5)), [1, 3], 1), dtypes=_ALL,
         name="numpy.split(indices, axis=1)"),
    Case(np.array_split, lambda rng, dt: (arr(rng, dt, (5,)), 3), dtypes=_ALL),
    Case(np.hsplit, lambda rng, dt: (arr(rng, dt, (2, 4)), 2), dtypes=_ALL),
    Case(np.hsplit, lambda rng, dt: (arr(rng, dt, (4,)), [1]), dtypes=_ALL,
         name="numpy.hsplit(1-d)"),
    Case(np.vsplit, lambda rng, dt: (arr(rng, dt, (4, 2)), 2), dtypes=_ALL),
    Case(np.dsplit, lambda rng, dt: (arr(rng, dt, (1, 2, 4)), [1]), dtypes=_ALL),
    Case(np.unstack, _a(3, 2), dtypes=_ALL),
    Case(np.unstack, _a(3, 2), kwargs={"axis": 1}, dtypes=_ALL),
    # ---------------------------------------------------------------- repeating
    Case(np.tile, lambda rng, dt: (arr(rng, dt, (2, 3)), 2), dtypes=_ALL),
    Case(np.tile, lambda rng, dt: (arr(rng, dt, (3,)), (2, 1, 2)), dtypes=_ALL,
         name="numpy.tile(reps tuple)"),
    Case(np.repeat, lambda rng, dt: (arr(rng, dt, (2, 3)), 2), dtypes=_ALL),
    Case(np.repeat, lambda rng, dt: (arr(rng, dt, (2, 3)), np.array([0, 2, 3]), 1),
         dtypes=_ALL, name="numpy.repeat(array repeats, axis=1)"),
    Case(np.repeat, lambda rng, dt: (arr(rng, dt, (3,)), 2), kwargs={"axis": 0}, dtypes=_ALL),
    Case(np.resize, lambda rng, dt: (arr(rng, dt, (2, 3)), (4, 4)), dtypes=_ALL),
    Case(np.resize, lambda rng, dt: (arr(rng, dt, (5,)), 3), dtypes=_ALL,
         name="numpy.resize(shrink)"),
    Case(np.delete, lambda rng, dt: (arr(rng, dt, (5,)), [0, 0, 3]), dtypes=_ALL),
    Case(np.delete, lambda rng, dt: (arr(rng, dt, (3, 4)), slice(1, None, 2), 1),
         dtypes=_ALL, name="numpy.delete(slice, axis=1)"),
    Case(np.insert, lambda rng, dt: (arr(rng, dt, (4,)), [1, 1, 4], arr(rng, dt, (3,))),
         dtypes=_ALL),
    Case(np.insert, lambda rng, dt: (arr(rng, dt, (2, 3)), 1, arr(rng, dt, ())), kwargs={},
         dtypes=_ALL, name="numpy.insert(broadcast value)"),
    Case(np.insert, lambda rng, dt: (arr(rng, dt, (2, 3)), 2, arr(rng, dt, (2, 1)), 1),
         dtypes=_ALL, name="numpy.insert(axis=1)"),
    Case(np.rollaxis, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), 2), dtypes=_ALL),
    Case(np.rollaxis, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), 0, 2), dtypes=_ALL,
         name="numpy.rollaxis(start=2)"),
    Case(sliding_window_view, lambda rng, dt: (arr(rng, dt, (6,)), 3), dtypes=_ALL),
    Case(sliding_window_view, lambda rng, dt: (arr(rng, dt, (4, 5)), (2, 3)), dtypes=_ALL,
         name="sliding_window_view(2-d)"),
    Case(sliding_window_view, lambda rng, dt: (arr(rng, dt, (3, 5)), 2),
         kwargs={"axis": 1}, dtypes=_ALL),
    # ---------------------------------------------------------------- padding
    Case(np.pad, lambda rng, dt: (arr(rng, dt, (2, 3)), 1), dtypes=_ALL),
    Case(np.pad, lambda rng, dt: (arr(rng, dt, (2, 3)), ((1, 0), (2, 1))),
         kwargs={"constant_values": 3.0}, dtypes=_ALL),
    Case(np.pad, lambda rng, dt: (arr(rng, dt, (3, 3)), ((1, 2), (2, 1)), "edge"), dtypes=_ALL,
         name="numpy.pad('edge')"),
    Case(np.pad, lambda rng, dt: (arr(rng, dt, (3, 3)), 2, "wrap"), dtypes=_ALL,
         name="numpy.pad('wrap')"),
    Case(np.pad, lambda rng, dt: (arr(rng, dt, (3, 4)), ((2, 1), (3, 2))),
         kwargs={"mode": "reflect"}, dtypes=_ALL),
    Case(np.pad, lambda rng, dt: (arr(rng, dt, (3, 4)), ((2, 1), (3, 2))),
         kwargs={"mode": "symmetric", "reflect_type": "odd"}, dtypes=_ALL),
    Case(np.pad, lambda rng, dt: (arr(rng, dt, (3, 2)), (2, 1)),
         kwargs={"mode": "linear_ramp", "end_values": (1.0, -1.0)}, dtypes=_ALL),
    Case(np.pad, lambda rng, dt: (arr(rng, dt, (4, 3)), ((1, 2), (1, 1))),
         kwargs={"mode": "mean", "stat_length": ((2, 3), (1, 2))}, dtypes=_ALL),
    Case(np.pad, lambda rng, dt: (arr(rng, dt, (4,)), 2),
         kwargs={"mode": "maximum"}, dtypes=("float64",),
         xfail="not_implemented: pad mode 'maximum' is not linear"),
    # ---------------------------------------------------------------- diagonals
    Case(np.diag, _a(3,), dtypes=_ALL, name="numpy.diag(vector)"),
    Case(np.diag, lambda rng, dt: (arr(rng, dt, (3,)), -1), dtypes=_ALL,
         name="numpy.diag(vector, k=-1)"),
    Case(np.diag, _a(3, 4), dtypes=_ALL, name="numpy.diag(matrix)"),
    Case(np.diag, lambda rng, dt: (arr(rng, dt, (3, 4)), 2), dtypes=_ALL,
         name="numpy.diag(matrix, k=2)"),
    Case(np.diagonal, _a(3, 4), dtypes=_ALL),
    Case(np.diagonal, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), 1, 2, 0), dtypes=_ALL,
         name="numpy.diagonal(offset, axes)"),
    Case(np.diagflat, lambda rng, dt: (arr(rng, dt, (2, 2)), 1), dtypes=_ALL),
    Case(np.triu, _a(3, 4), dtypes=_ALL),
    Case(np.triu, lambda rng, dt: (arr(rng, dt, (2, 3, 3)), -1), dtypes=_ALL,
         name="numpy.triu(stacked, k=-1)"),
    Case(np.tril, lambda rng, dt: (arr(rng, dt, (3, 4)), 1), dtypes=_ALL),
    Case(np.tril, _a(3,), dtypes=_ALL, name="numpy.tril(1-d)"),
    # ---------------------------------------------------------------- construction
    Case(np.array, _a(2, 3), dtypes=_ALL),
    Case(np.array, lambda rng, dt: (_py(rng, dt),), dtypes=_ALL, name="numpy.array(list)"),
    Case(np.array, lambda rng, dt: ([arr(rng, dt, (2,)), arr(rng, dt, (2,))],), dtypes=_ALL,
         name="numpy.array(list of arrays)"),
    Case(np.array, lambda rng, dt: (arr(rng, dt, (3,)),), kwargs={"ndmin": 3}, dtypes=_ALL),
    Case(np.array, lambda rng, dt: (arr(rng, dt, (3,)), np.float32), dtypes=("float64",),
         name="numpy.array(float64 -> float32)", **F32_OUT),
    Case(np.asarray, lambda rng, dt: ((scalar(rng, dt), float(scalar(rng, np.dtype("float64"))),
                                       3),), dtypes=_ALL, name="numpy.asarray(tuple)"),
    Case(np.asarray, lambda rng, dt: (arr(rng, dt, (2,)),), kwargs={"dtype": np.complex128},
         dtypes=("float64", "float32"), name="numpy.asarray(real -> complex)"),
    Case(np.asanyarray, _a(2, 2), dtypes=_ALL),
    Case(np.ascontiguousarray, lambda rng, dt: (arr(rng, dt, (3, 4)).T,), dtypes=_ALL),
    Case(np.asfortranarray, _a(3, 2), dtypes=_ALL),
    Case(np.copy, lambda rng, dt: (arr(rng, dt, (4, 3))[::2],), dtypes=_ALL),
    Case(np.astype, lambda rng, dt: (arr(rng, dt, (3,)), np.float32), dtypes=("float64",),
         name="numpy.astype(float64 -> float32)", **F32_OUT),
    Case(np.astype, lambda rng, dt: (arr(rng, dt, (3,)), np.float64), dtypes=("float32",),
         name="numpy.astype(float32 -> float64)"),
    Case(np.astype, lambda rng, dt: (arr(rng, dt, (3,)), np.complex128),
         dtypes=("float64", "float32"), name="numpy.astype(real -> complex)"),
]
