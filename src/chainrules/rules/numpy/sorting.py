"""Rules for ``np.partition`` and ``np.sort_complex``: the output rearranges the input's
values, so the tangent is rearranged the same way and the cotangent is scattered back.

The rearrangement is recovered from the primal's own output (never from a second
partition, whose order of the unsorted elements may differ): matching a stable sort of
the input with a stable sort of the output gives, for every output position, the input
position holding the same value. Where values tie, the function is not differentiable,
and any of the tied positions is a valid choice.

Examples:
    >>> import numpy as np
    >>> from chainrules import frule, NoTangent
    >>> frule((NoTangent(), np.array([10.0, 20.0, 30.0]), NoTangent()),
    ...       np.partition, np.array([3.0, 1.0, 2.0]), 0)
    (array([1., 2., 3.]), array([20., 30., 10.]))
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from chainrules.core import NoTangent, frule, rrule
from chainrules.rules import _kit as kit


def _source_positions(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    """``idx`` with ``take_along_axis(x, idx, axis) == y``, for ``y`` a rearrangement of
    ``x`` along ``axis``."""
    sx = np.argsort(x, axis=axis, kind="stable")
    sy = np.argsort(y, axis=axis, kind="stable")
    idx = np.empty_like(sx)
    np.put_along_axis(idx, sy, sx, axis=axis)
    return idx


def _partition_axis(args: tuple, kwargs: dict) -> Any:
    bound = inspect.signature(np.partition).bind(None, *args, **kwargs)
    bound.apply_defaults()
    if bound.arguments["order"] is not None:
        raise NotImplementedError(
            "the rule for numpy.partition does not support order= (structured arrays "
            "have no tangent)")
    return bound.arguments["axis"]


def _flat_if_none(x: Any, axis: Any) -> tuple[Any, int]:
    # no np.asarray(x): a higher-order derivative runs the rules on traced values
    return (np.reshape(x, -1), 0) if axis is None else (x, axis)


def _as_dtype(a: Any, dtype: np.dtype) -> Any:
    # a.astype, not np.asarray: a higher-order derivative runs the rules on traced values
    return a.astype(dtype) if hasattr(a, "astype") else np.asarray(a, dtype=dtype)


def _scatter_back(y_bar: Any, idx: np.ndarray, axis: int) -> Any:
    """``x_bar`` with ``x_bar[idx] = y_bar`` along ``axis`` (``idx`` a permutation), as a
    gather by the inverse permutation: differentiable again, unlike a write."""
    return np.take_along_axis(y_bar, np.argsort(idx, axis=axis), axis)


@frule.register(np.partition, object, ...)
def partition_frule(dargs: tuple, a: Any, *args: Any, **kwargs: Any) -> Any:
    axis = _partition_axis(args, kwargs)
    y = np.partition(a, *args, **kwargs)
    a_dot = kit.nonzero(dargs[1])
    if a_dot is None:
        return y, kit.zero_for(y)
    x, ax = _flat_if_none(a, axis)
    idx = _source_positions(x, y, ax)
    t, _ = _flat_if_none(kit.dense_tangent(a_dot, a), axis)
    return y, kit.fit_output(np.take_along_axis(np.broadcast_to(t, np.shape(x)), idx, ax), y)


@rrule.register(np.partition, object, ...)
def partition_rrule(a: Any, *args: Any, **kwargs: Any) -> Any:
    axis = _partition_axis(args, kwargs)
    y = np.partition(a, *args, **kwargs)
    project_a = kit.array_projector(a)
    rest = (NoTangent(),) * len(args)

    @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(a), *rest))
    def partition_pullback(y_bar: Any) -> tuple:
        x, ax = _flat_if_none(a, axis)
        idx = _source_positions(x, y, ax)
        x_bar = _scatter_back(np.broadcast_to(y_bar, np.shape(y)), idx, ax)
        return (NoTangent(), project_a(np.reshape(x_bar, np.shape(a))), *rest)

    return y, partition_pullback


@frule.register(np.sort_complex, object)
def sort_complex_frule(dargs: tuple, a: Any) -> Any:
    y = np.sort_complex(a)
    a_dot = kit.nonzero(dargs[1])
    if a_dot is None:
        return y, kit.zero_for(y)
    idx = _source_positions(_as_dtype(a, y.dtype), y, -1)
    t = np.broadcast_to(kit.dense_tangent(a_dot, a), np.shape(a))
    return y, kit.fit_output(np.take_along_axis(t, idx, -1), y)


@rrule.register(np.sort_complex, object)
def sort_complex_rrule(a: Any) -> Any:
    y = np.sort_complex(a)
    project_a = kit.array_projector(a)

    @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(a)))
    def sort_complex_pullback(y_bar: Any) -> tuple:
        idx = _source_positions(_as_dtype(a, y.dtype), y, -1)
        x_bar = _scatter_back(np.broadcast_to(y_bar, np.shape(y)), idx, -1)
        # a real input's cotangent is the real part (its values entered as x + 0j)
        return NoTangent(), project_a(x_bar)

    return y, sort_complex_pullback
