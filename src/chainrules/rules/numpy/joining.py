"""Rules for joining NumPy arrays and cutting them apart.

Covered (frule and rrule):

- joining: ``concatenate`` (= ``concat``), ``stack``, ``hstack``, ``vstack``, ``dstack``,
  ``column_stack`` (of a list or tuple of arrays, or of one array joined along its first
  axis), ``append``, ``insert`` (w.r.t. the array and the values);
- splitting (list / tuple outputs): ``split``, ``array_split``, ``hsplit``, ``vsplit``,
  ``dsplit``, ``unstack``.

All are linear. The pushforward joins (or cuts) the tangents. The pullback of
``concatenate`` and ``stack`` slices ``y_bar``; the other joining functions scatter
``y_bar`` back by element positions (``_linear.scatter``); a splitting function's pullback
joins the pieces' cotangents (zeros for pieces that received none).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import NoTangent, Tangent, Thunk, ZeroTangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit
from chainrules.rules.numpy import _linear as linear

# ------------------------------------------------------------------------------ joining


def _seq_dense(dxs: Any, xs: Any) -> list:
    """Per-item dense tangents of a sequence argument (zeros where missing)."""
    dxs = unthunk(dxs)
    if kit.is_zero(dxs):
        return [kit.dense_tangent(ZeroTangent(), x) for x in xs]
    items = dxs.backing if isinstance(dxs, Tangent) else dxs
    return [kit.dense_tangent(t, x) for t, x in zip(items, xs)]


def _seq_pullback_result(xs: Any, pieces: Callable[[], list]) -> Any:
    """The cotangent of a sequence argument: a ``Tangent`` of one thunk per item."""
    T = type(xs)
    projectors = [kit.array_projector(x) for x in xs]
    cache: list = []

    def piece(i: int) -> Any:
        if not cache:
            cache.append(pieces())
        return projectors[i](cache[0][i])

    items = [Thunk(lambda i=i: piece(i)) if kit.is_differentiable(x) else NoTangent()
             for i, x in enumerate(xs)]
    return Tangent[T](*items)


def _direct_pieces(f: Any, shapes: list, args: tuple,
                   kwargs: dict) -> Callable[[np.ndarray], list] | None:
    """Cut ``y_bar`` of ``concatenate``/``stack`` into the items' cotangents by slicing
    (copies: an item's cotangent must not be a view of ``y_bar``); None for the other
    joining functions, which scatter element positions instead."""
    axis = linear.argument(args, kwargs, 0, "axis", 0)
    if f is np.concatenate and axis is not None:
        def concatenate_pieces(y_bar: np.ndarray) -> list:
            ax = axis % y_bar.ndim
            bounds = np.cumsum([0, *(s[ax] for s in shapes)])
            return [y_bar[(slice(None),) * ax + (slice(lo, hi),)].copy()
                    for lo, hi in itertools.pairwise(bounds)]

        return concatenate_pieces
    if f is np.stack:
        def stack_pieces(y_bar: np.ndarray) -> list:
            return [np.take(y_bar, k, axis=axis) for k in range(len(shapes))]

        return stack_pieces
    return None


def _joining_rules(f: Any) -> None:
    """Rules for ``f(arrays, *args, **kwargs)`` joining a sequence of arrays.

    The pushforward joins the tangents; the pullback cuts ``y_bar`` into the items by a
    scatter of element positions (each item gets its own range of positions).
    """
    out_at = 1 if f in (np.concatenate, np.stack) else None  # f(arrays, axis, out)

    def joining_frule(dargs: tuple, xs: Any, *args: Any, **kwargs: Any) -> Any:
        kit.refuse_out(f, kwargs, args, out_at)
        y = f(xs, *args, **kwargs)
        if (
            not kit.is_differentiable(xs)
            or not kit.is_differentiable(y)
            or kit.is_zero(unthunk(dargs[1]))
        ):
            return y, kit.zero_for(y)
        if type(xs) in (list, tuple):
            return y, kit.fit_output(f(_seq_dense(dargs[1], xs), *args, **kwargs), y)
        return y, kit.fit_output(f(kit.dense_tangent(dargs[1], xs), *args, **kwargs), y)

    def joining_rrule(xs: Any, *args: Any, **kwargs: Any) -> Any:
        kit.refuse_out(f, kwargs, args, out_at)
        y = f(xs, *args, **kwargs)
        rest = (NoTangent(),) * len(args)
        if not kit.is_differentiable(xs) or not kit.is_differentiable(y):
            def no_tangent_pullback(y_bar: Any) -> tuple:
                return (NoTangent(), NoTangent(), *rest)

            return y, no_tangent_pullback
        index_kwargs = {k: v for k, v in kwargs.items() if k not in ("dtype", "casting")}
        if type(xs) not in (list, tuple):  # an array: joined along its first axis
            core = linear.gather_adjoint(xs, lambda pos: f(pos, *args, **index_kwargs))
            project_x = kit.array_projector(xs)

            @kit.zero_guard((NoTangent(), ZeroTangent(), *rest))
            def joining_array_pullback(y_bar: Any) -> tuple:
                return (NoTangent(), project_x(core(y_bar)), *rest)

            return y, joining_array_pullback
        shapes = [np.shape(x) for x in xs]
        sizes = [math.prod(s) for s in shapes]
        offsets = np.cumsum([0, *sizes])
        direct = _direct_pieces(f, shapes, args, kwargs)

        @kit.zero_guard((NoTangent(), ZeroTangent(), *rest))
        def joining_pullback(y_bar: Any) -> tuple:
            def pieces() -> list:
                if direct is not None:
                    return direct(np.asarray(y_bar))
                items = [np.arange(o + 1, o + n + 1, dtype=np.intp).reshape(s)
                         for o, n, s in zip(offsets, sizes, shapes)]
                src = np.asarray(f(type(xs)(items), *args, **index_kwargs)) - 1
                flat = linear.scatter(y_bar, src, int(offsets[-1]))
                return [flat[o:o + n].reshape(s) for o, n, s in zip(offsets, sizes, shapes)]

            return (NoTangent(), _seq_pullback_result(xs, pieces), *rest)

        return y, joining_pullback

    kit.define_rules(f, frule_fn=joining_frule, rrule_fn=joining_rrule)


for _f in (np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack):
    _joining_rules(_f)


@frule.register(np.append)
def append_frule(dargs: tuple, arr: Any, values: Any, axis: Any = None) -> Any:
    y = np.append(arr, values, axis)
    if not kit.is_differentiable(y) or (
        kit.is_zero(unthunk(dargs[1])) and kit.is_zero(unthunk(dargs[2]))
    ):
        return y, kit.zero_for(y)
    y_dot = np.append(kit.dense_tangent(dargs[1], arr), kit.dense_tangent(dargs[2], values), axis)
    return y, kit.fit_output(y_dot, y)


@rrule.register(np.append)
def append_rrule(arr: Any, values: Any, axis: Any = None) -> Any:
    y = np.append(arr, values, axis)
    given_axis = (NoTangent(),) if axis is not None else ()
    shapes = (np.shape(arr), np.shape(values))
    n_arr = math.prod(shapes[0])
    project_arr, project_values = kit.array_projector(arr), kit.array_projector(values)

    @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(arr), kit.zero_for(values), *given_axis))
    def append_pullback(y_bar: Any) -> tuple:
        cache: list = []

        def flat() -> np.ndarray:
            if not cache:
                pos = linear.positions((n_arr + math.prod(shapes[1]),))
                src = np.append(pos[:n_arr].reshape(shapes[0]), pos[n_arr:].reshape(shapes[1]),
                                axis) - 1
                cache.append(linear.scatter(y_bar, src, pos.size))
            return cache[0]

        arr_bar = Thunk(lambda: project_arr(flat()[:n_arr].reshape(shapes[0])))
        values_bar = Thunk(lambda: project_values(flat()[n_arr:].reshape(shapes[1])))
        return (NoTangent(), arr_bar if kit.is_differentiable(arr) else NoTangent(),
                values_bar if kit.is_differentiable(values) else NoTangent(), *given_axis)

    return y, append_pullback


# ------------------------------------------------------------------------------ insert


@frule.register(np.insert)
def insert_frule(dargs: tuple, arr: Any, obj: Any, values: Any, *args: Any,
                 **kwargs: Any) -> Any:
    y = np.insert(arr, obj, values, *args, **kwargs)
    arr_dot, values_dot = unthunk(dargs[1]), unthunk(dargs[3])
    if not kit.is_differentiable(y) or (kit.is_zero(arr_dot) and kit.is_zero(values_dot)):
        return y, kit.zero_for(y)
    y_dot = np.insert(kit.dense_tangent(arr_dot, arr).astype(y.dtype), obj,
                      kit.dense_tangent(values_dot, values), *args, **kwargs)
    return y, kit.fit_output(y_dot, y)


@rrule.register(np.insert)
def insert_rrule(arr: Any, obj: Any, values: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.insert(arr, obj, values, *args, **kwargs)
    rest = (NoTangent(),) * len(args)
    shapes = (np.shape(arr), np.shape(values))
    n_arr = math.prod(shapes[0])
    n_all = n_arr + math.prod(shapes[1])
    project_arr, project_values = kit.array_projector(arr), kit.array_projector(values)
    diff = kit.is_differentiable(y)
    zeros = (NoTangent(), kit.zero_for(arr), NoTangent(), kit.zero_for(values), *rest)

    @kit.zero_guard(zeros)
    def insert_pullback(y_bar: Any) -> tuple:
        if not diff:
            return zeros
        cache: list = []

        def flat() -> np.ndarray:
            if not cache:
                pos = linear.positions((n_all,))
                src = np.insert(pos[:n_arr].reshape(shapes[0]), obj,
                                pos[n_arr:].reshape(shapes[1]), *args, **kwargs) - 1
                cache.append(linear.scatter(y_bar, src, n_all))
            return cache[0]

        arr_bar = Thunk(lambda: project_arr(flat()[:n_arr].reshape(shapes[0])))
        values_bar = Thunk(lambda: project_values(flat()[n_arr:].reshape(shapes[1])))
        return (NoTangent(), arr_bar if kit.is_differentiable(arr) else NoTangent(), NoTangent(),
                values_bar if kit.is_differentiable(values) else NoTangent(), *rest)

    return y, insert_pullback


# ------------------------------------------------------------------------------ splitting


def _split_axis(f: Any, x: Any, axis: Any) -> int:
    if f is np.hsplit:
        return 1 if np.ndim(x) > 1 else 0
    if f is np.vsplit:
        return 0
    if f is np.dsplit:
        return 2
    return axis


def _splitting_rules(f: Any) -> None:
    """Rules for ``f(x, *args)`` returning a list (or tuple) of pieces of ``x``."""
    unstack = f is getattr(np, "unstack", None)

    def splitting_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(x, *args, **kwargs)
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None or not kit.is_differentiable(x):
            return y, Tangent[type(y)](*(kit.zero_for(yi) for yi in y))
        return y, Tangent[type(y)](*(kit.fit_output(d, yi) for d, yi in zip(
            f(kit.dense_tangent(x_dot, x), *args, **kwargs), y)))

    def splitting_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(x, *args, **kwargs)
        rest = (NoTangent(),) * len(args)
        dtypes = [yi.dtype if yi.dtype.kind in "fc" else np.dtype(np.float64) for yi in y]
        shapes = [yi.shape for yi in y]
        if unstack:
            axis = kwargs.get("axis", 0)
        else:
            axis = _split_axis(f, x, linear.argument(args, kwargs, 1, "axis", 0))
        project_x = kit.array_projector(x)

        def splitting_pullback(y_bar: Any) -> tuple:
            bars = linear.item_cotangents(y_bar, len(shapes))
            if all(kit.is_zero(b) for b in bars) or not kit.is_differentiable(x):
                return (NoTangent(), kit.zero_for(x), *rest)
            pieces = [np.zeros(s, dt) if kit.is_zero(b) else np.asarray(b)
                      for b, s, dt in zip(bars, shapes, dtypes)]
            joined = np.stack(pieces, axis) if unstack else np.concatenate(pieces, axis)
            return (NoTangent(), project_x(joined), *rest)

        return y, splitting_pullback

    kit.define_rules(f, frule_fn=splitting_frule, rrule_fn=splitting_rrule)


for _f in (np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, np.unstack):
    _splitting_rules(_f)

del _f
