"""Rules specific to this AD (registered with ``config=ADConfig``, so tried first).

``x[i]`` of a float array with an integer index: the built-in rule's pullback
allocates a zero array per element read, so a loop reading every element of an
array of ``n`` costs ``O(n^2)`` memory traffic in the backward pass (the
reference document's "in-place accumulation" example). This rule returns an
``InplaceableThunk`` instead: the AD adds ``y_bar`` into one accumulator per
array, in place.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from chainrules.core import InplaceableThunk, NoTangent, ZeroTangent, frule, rrule, unthunk

from . import _trace
from ._api import ADConfig

__all__: list[str] = []

_NO = NoTangent()


class FreshInplaceableThunk(InplaceableThunk):
    """An ``InplaceableThunk`` whose value is a newly allocated array (the AD may own it).

    ``index`` and ``value`` say what it adds where (``acc[index] += value``), so the
    AD can accumulate it without calling ``add_fn``.
    """

    __slots__ = ("index", "value")


@rrule.register(operator.getitem, np.ndarray, int, config=ADConfig)
def getitem_index_rrule(config: ADConfig, x: np.ndarray, i: int) -> Any:
    """``x[i]`` of a float/complex array; the cotangent adds into ``x_bar[i]`` in place."""
    y = x[i]
    if x.dtype.kind not in "fc":
        return y, lambda y_bar: (_NO, _NO, _NO)
    shape, dtype = x.shape, x.dtype
    real = dtype.kind == "f"

    def getitem_index_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if type(y_bar) is _trace.Tracer:
            # a cotangent of an outer trace (higher-order derivatives): stay traceable
            return _NO, _trace.call(index_scatter, shape, dtype, i, y_bar), _NO

        if real and isinstance(y_bar, (complex, np.complexfloating, np.ndarray)):
            y_bar = np.real(y_bar)  # project onto the real array's tangent space

        def add_into(acc: np.ndarray) -> np.ndarray:
            acc[i] += y_bar
            return acc

        def dense() -> np.ndarray:
            x_bar = np.zeros(shape, dtype=dtype)
            x_bar[i] = y_bar
            return x_bar

        x_bar = FreshInplaceableThunk(add_into, dense)
        x_bar.index = i
        x_bar.value = y_bar
        return _NO, x_bar, _NO

    return y, getitem_index_pullback


def index_scatter(shape: tuple, dtype: Any, i: int, v: Any) -> np.ndarray:
    """Zeros of ``shape`` with ``v`` at ``i``: the adjoint of ``x[i]``, linear in ``v``."""
    if type(v) is _trace.Tracer:
        return _trace.call(index_scatter, shape, dtype, i, v)
    out = np.zeros(shape, dtype=np.result_type(dtype, _trace.deep_primal(v)))
    out[i] = v
    return out


@rrule.register(index_scatter)
def index_scatter_rrule(shape: tuple, dtype: Any, i: int, v: Any) -> Any:
    def index_scatter_pullback(out_bar: Any) -> tuple:
        return _NO, _NO, _NO, _NO, unthunk(out_bar)[i]

    return index_scatter(shape, dtype, i, v), index_scatter_pullback


@frule.register(index_scatter)
def index_scatter_frule(dargs: tuple, shape: tuple, dtype: Any, i: int, v: Any) -> Any:
    v_dot = unthunk(dargs[4])
    y = index_scatter(shape, dtype, i, v)
    if isinstance(v_dot, (ZeroTangent, NoTangent)):
        return y, ZeroTangent()
    return y, index_scatter(shape, dtype, i, v_dot)


_trace._FreshThunk = FreshInplaceableThunk
