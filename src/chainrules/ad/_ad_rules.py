"""Rules the AD itself defines: for its own helper functions (``x.astype`` as
``_astype``, ``np.array`` of traced values as ``_stack_nested``), and rules specific to
this AD (registered with ``config=ADConfig``, so tried first).

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

from chainrules.core import (
    AbstractTangent,
    NoTangent,
    ProjectTo,
    Tangent,
    ZeroTangent,
    frule,
    rrule,
    unthunk,
)

from . import _reverse
from ._api import ADConfig
from ._dispatch import _array_of, _stack_nested, _unstack_cotangent, call, project_traced
from ._reverse import FreshInplaceableThunk
from ._tracer import Tracer, _astype, deep_primal
from ._tree import _top_trace_deep

__all__: list[str] = []

_NO = NoTangent()
_ZERO = ZeroTangent()


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
        if type(y_bar) is Tracer:
            # a cotangent of an outer trace (higher-order derivatives): stay traceable
            return _NO, call(index_scatter, shape, dtype, i, y_bar), _NO

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


_reverse._INDEX_RULE[0] = getitem_index_rrule  # the reverse trace's index nodes


def index_scatter(shape: tuple, dtype: Any, i: int, v: Any) -> np.ndarray:
    """Zeros of ``shape`` with ``v`` at ``i``: the adjoint of ``x[i]``, linear in ``v``."""
    if type(v) is Tracer:
        return call(index_scatter, shape, dtype, i, v)
    out = np.zeros(shape, dtype=np.result_type(dtype, deep_primal(v)))
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


@rrule.register(_astype)
def _astype_rrule(x: Any, dtype: Any) -> Any:
    # run again on values of an outer trace (second derivatives), this code is not
    # rewritten (it is the AD's own), so it calls the outer trace explicitly
    project_x = ProjectTo(deep_primal(x))
    y = x.astype(dtype) if type(x) is Tracer else np.asarray(x).astype(dtype)

    def astype_pullback(y_bar: Any) -> tuple:
        return _NO, project_traced(project_x, unthunk(y_bar)), _NO

    return y, astype_pullback


@frule.register(_astype)
def _astype_frule(dargs: tuple, x: Any, dtype: Any) -> Any:
    x_dot = unthunk(dargs[1])
    y = np.asarray(x).astype(dtype)
    if isinstance(x_dot, AbstractTangent):
        return y, x_dot
    if y.dtype.kind == "f":
        x_dot = np.real(x_dot)
    return y, np.asarray(x_dot).astype(y.dtype)

@rrule.register(_stack_nested)
def _stack_nested_rrule(x: Any, dtype: Any = None) -> Any:
    y = _array_of(x, dtype)

    def stack_nested_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if isinstance(y_bar, AbstractTangent):
            return _NO, y_bar, _NO
        return _NO, _unstack_cotangent(x, y_bar), _NO

    return y, stack_nested_pullback


@frule.register(_stack_nested)
def _stack_nested_frule(dargs: tuple, x: Any, dtype: Any = None) -> Any:
    y = _array_of(x, dtype)

    def tangent_of(xv: Any, d: Any) -> Any:
        if type(xv) is list or type(xv) is tuple:
            items = d.backing if isinstance(d, Tangent) else [_ZERO] * len(xv)
            return np.stack([tangent_of(v, di) for v, di in zip(xv, items)])
        d = unthunk(d)
        if isinstance(d, AbstractTangent):
            return np.zeros(np.shape(deep_primal(xv)), dtype=y.dtype)
        return d

    y_dot = tangent_of(x, dargs[1])
    if _top_trace_deep(y_dot, None) is not None:
        return y, _stack_nested(y_dot, y.dtype)
    return y, np.asarray(y_dot, dtype=y.dtype)
