"""Rules for higher-order functions, registered with ``config=HasReverseMode``.

Each rule receives the AD's config and differentiates the function it was given by
calling back into the AD with `chainrules.rrule_via_ad`. They serve any AD
whose config has reverse mode (the reference AD's `ADConfig`, the bridges).

Python's lazy ``map`` and ``itertools.accumulate`` return lists under these rules
(an iterator of differentiated values cannot be recorded); ``list(...)``,
iteration and ``sum`` over them behave as before.

A rule returns ``None`` (no rule) when the values it receives still hold tracers
(a generator argument cannot be unboxed by the AD), so the AD traces the call
instead; that is correct, only slower.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import (
    AbstractTangent,
    HasReverseMode,
    NoTangent,
    ProjectTo,
    Tangent,
    ZeroTangent,
    rrule,
    rrule_via_ad,
    unthunk,
)

from ._tracer import Tracer

__all__: list[str] = []

_NO = NoTangent()
_ZERO = ZeroTangent()


def _holds_tracer(items: Any) -> bool:
    for v in items:
        if type(v) is Tracer:
            return True
        if type(v) in (list, tuple) and _holds_tracer(v):
            return True
    return False


def _items_of_cotangent(y_bar: Any, n: int) -> list:
    """The per-item cotangents of a list output (natural list, Tangent, or zero)."""
    y_bar = unthunk(y_bar)
    if isinstance(y_bar, AbstractTangent) and not isinstance(y_bar, Tangent):
        return [_ZERO] * n
    if isinstance(y_bar, Tangent):
        return [unthunk(y_bar[i]) for i in range(n)]
    return [unthunk(b) for b in y_bar]


def _sequence_cotangent(xs: Any, bars: list) -> Any:
    """The cotangent of the sequence argument ``xs`` from its items' cotangents."""
    if isinstance(xs, np.ndarray):
        if xs.dtype.kind not in "fc":
            return _NO
        out = np.zeros(xs.shape, dtype=xs.dtype)
        for k, b in enumerate(bars):
            if not isinstance(b, AbstractTangent):
                out[k] = ProjectTo(xs[k])(b)
        return out
    if isinstance(xs, (list, tuple)):
        return Tangent[type(xs)](*bars)
    return _NO


def _materialize(xs: Any) -> Any:
    return xs if isinstance(xs, (list, tuple, np.ndarray)) else list(xs)


def _captures(f: Any) -> bool:
    """Whether ``f`` is a closure (its cotangent has a field per captured variable)."""
    return getattr(f, "__closure__", None) is not None


def _add_function_bar(f_bar: Any, g: Any) -> Any:
    """Accumulate the cotangents of a function called several times (its ``self_bar``s)."""
    g = unthunk(g)
    if isinstance(g, (ZeroTangent, NoTangent)):
        return f_bar
    if isinstance(f_bar, (ZeroTangent, NoTangent)):
        return g
    return f_bar + g


# ---------------------------------------------------------------------------------------
# map


@rrule.register(map, config=HasReverseMode)
def map_rrule(config: Any, f: Callable, *iterables: Any) -> Any:
    """``map(f, *xs)``: one ``rrule_via_ad`` per element; the output is a list."""
    seqs = [_materialize(xs) for xs in iterables]
    if any(_holds_tracer(s) for s in seqs):
        return None
    results = [rrule_via_ad(config, f, *elems) for elems in zip(*seqs)]
    y = [r[0] for r in results]
    n = len(results)

    def map_pullback(y_bar: Any) -> tuple:
        bars = _items_of_cotangent(y_bar, n)
        per_arg: list[list] = [[_ZERO] * n for _ in seqs]
        f_bar: Any = _NO if not _captures(f) else _ZERO
        for k, ((_, pullback), b) in enumerate(zip(results, bars)):
            if isinstance(b, AbstractTangent) and not isinstance(b, Tangent):
                continue
            grads = pullback(b)
            f_bar = _add_function_bar(f_bar, grads[0])
            for j in range(len(seqs)):
                per_arg[j][k] = unthunk(grads[j + 1])
        return (_NO, f_bar, *(_sequence_cotangent(s, b) for s, b in zip(seqs, per_arg)))

    return y, map_pullback


# ---------------------------------------------------------------------------------------
# functools.reduce and itertools.accumulate


_EMPTY = object()


def _fold(config: Any, f: Callable, xs: list, acc: Any) -> tuple[list, list]:
    """Left fold recording each step's ``(y, pullback)``; returns (accumulators, pullbacks)."""
    accs, pullbacks = [], []
    for x in xs:
        acc, pullback = rrule_via_ad(config, f, acc, x)
        accs.append(acc)
        pullbacks.append(pullback)
    return accs, pullbacks


def _unfold(pullbacks: list, acc_bars: list, n_items: int,
            f_bar: Any = _NO) -> tuple[Any, list, Any]:
    """Walk a fold backwards: ``acc_bars[k]`` is the extra cotangent of step k's output.
    Returns the initial accumulator's cotangent, the items' and the function's."""
    x_bars: list = [_ZERO] * n_items
    carry: Any = _ZERO
    for k in range(len(pullbacks) - 1, -1, -1):
        carry = carry + acc_bars[k] if not isinstance(carry, ZeroTangent) else acc_bars[k]
        if isinstance(carry, AbstractTangent) and not isinstance(carry, Tangent):
            carry = _ZERO
            continue
        step_f_bar, acc_bar, x_bar = pullbacks[k](carry)
        f_bar = _add_function_bar(f_bar, step_f_bar)
        carry = unthunk(acc_bar)
        x_bars[k] = unthunk(x_bar)
    return carry, x_bars, f_bar


@rrule.register(functools.reduce, config=HasReverseMode)
def reduce_rrule(config: Any, f: Callable, xs: Any, initial: Any = _EMPTY) -> Any:
    """``functools.reduce(f, xs[, initial])``: a fold of ``rrule_via_ad`` steps."""
    seq = _materialize(xs)
    if _holds_tracer(seq) or type(initial) is Tracer:
        return None
    if initial is _EMPTY:
        if len(seq) == 0:
            return None  # reduce raises TypeError; let it
        start, rest, offset = seq[0], seq[1:], 1
    else:
        start, rest, offset = initial, seq, 0
    accs, pullbacks = _fold(config, f, rest, start)
    y = accs[-1] if accs else start
    n = len(seq)

    def reduce_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        acc_bars = [_ZERO] * len(pullbacks)
        f_bar: Any = _ZERO if _captures(f) else _NO
        if pullbacks:
            acc_bars[-1] = y_bar
            start_bar, step_bars, f_bar = _unfold(pullbacks, acc_bars, len(rest), f_bar)
        else:
            start_bar, step_bars = y_bar, []
        bars = [_ZERO] * n
        for k, b in enumerate(step_bars):
            bars[k + offset] = b
        if offset:
            bars[0] = start_bar
        x_bar = _sequence_cotangent(seq, bars)
        if initial is _EMPTY:
            return _NO, f_bar, x_bar
        return _NO, f_bar, x_bar, ProjectTo(initial)(start_bar) if offset == 0 else _ZERO

    return y, reduce_pullback


@rrule.register(itertools.accumulate, config=HasReverseMode)
def accumulate_rrule(config: Any, xs: Any, *rest: Any, initial: Any = None) -> Any:
    """``itertools.accumulate(xs[, func], initial=...)`` as a list of running results."""
    func = rest[0] if rest else operator.add
    seq = _materialize(xs)
    if _holds_tracer(seq) or type(initial) is Tracer or len(seq) == 0 or func is None:
        return None
    if initial is None:
        start, items, offset = seq[0], seq[1:], 1
    else:
        start, items, offset = initial, seq, 0
    accs, pullbacks = _fold(config, func, items, start)
    y = [start, *accs]
    n = len(seq)

    def accumulate_pullback(y_bar: Any) -> tuple:
        bars_out = _items_of_cotangent(y_bar, len(y))
        start_bar, step_bars, f_bar = _unfold(pullbacks, bars_out[1:], len(items),
                                              _ZERO if _captures(func) else _NO)
        if isinstance(start_bar, ZeroTangent):
            start_bar = bars_out[0]
        elif not isinstance(bars_out[0], AbstractTangent):
            start_bar = start_bar + bars_out[0]
        bars = [_ZERO] * n
        for k, b in enumerate(step_bars):
            bars[k + offset] = b
        if offset:
            bars[0] = start_bar
        return (_NO, _sequence_cotangent(seq, bars), *((f_bar,) if rest else ()))

    return y, accumulate_pullback


# ---------------------------------------------------------------------------------------
# sorted with key


@rrule.register(sorted, config=HasReverseMode)
def sorted_rrule(config: Any, xs: Any, *, key: Callable | None = None,
                 reverse: bool = False) -> Any:
    """``sorted(xs, key=..., reverse=...)``: a permutation; the key only orders."""
    seq = _materialize(xs)
    if _holds_tracer(seq):
        return None
    order = sorted(range(len(seq)), key=(lambda i: key(seq[i])) if key is not None
                   else seq.__getitem__, reverse=reverse)
    y = [seq[i] for i in order]

    def sorted_pullback(y_bar: Any) -> tuple:
        bars_out = _items_of_cotangent(y_bar, len(y))
        bars = [_ZERO] * len(seq)
        for pos, i in enumerate(order):
            bars[i] = bars_out[pos]
        return _NO, _sequence_cotangent(seq, bars)

    return y, sorted_pullback


# ---------------------------------------------------------------------------------------
# NumPy: vectorize, apply_along_axis, piecewise


def _elementwise(config: Any, f: Callable, arrays: list) -> tuple[np.ndarray, Callable]:
    """Apply scalar ``f`` elementwise (broadcasting) with one ``rrule_via_ad`` per element."""
    arrays = [np.asarray(a) for a in arrays]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    flat = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
    results = [rrule_via_ad(config, f, *(a[k] for a in flat)) for k in range(int(np.prod(shape)))]
    y = np.array([r[0] for r in results]).reshape(shape)

    def elementwise_pullback(y_bar: Any) -> list:
        y_bar = unthunk(y_bar)
        if isinstance(y_bar, AbstractTangent):
            return [_ZERO for _ in arrays]
        y_bar = np.broadcast_to(y_bar, shape).reshape(-1)
        grads = [np.zeros(shape, dtype=np.result_type(a, y_bar, float)).reshape(-1)
                 for a in arrays]
        for k, (_, pullback) in enumerate(results):
            g = pullback(y_bar[k])
            for j in range(len(arrays)):
                gj = unthunk(g[j + 1])
                if not isinstance(gj, AbstractTangent):
                    grads[j][k] = gj
        return [ProjectTo(a)(gr.reshape(shape)) if a.dtype.kind in "fc" else _NO
                for a, gr in zip(arrays, grads)]

    return y, elementwise_pullback


@rrule.register_call(np.vectorize, config=HasReverseMode)
def vectorize_rrule(config: Any, vec: np.vectorize, *args: Any, **kwargs: Any) -> Any:
    """Calls of ``np.vectorize(f)`` objects: ``f`` differentiated per element."""
    if kwargs or vec.signature is not None or vec.excluded:
        return None
    y, pullback = _elementwise(config, vec.pyfunc, list(args))
    project = [ProjectTo(a) for a in args]

    def vectorize_pullback(y_bar: Any) -> tuple:
        grads = pullback(y_bar)
        return (_NO, *(p(g) for p, g in zip(project, grads)))

    return y, vectorize_pullback


@rrule.register(np.apply_along_axis, config=HasReverseMode)
def apply_along_axis_rrule(config: Any, func1d: Callable, axis: int, arr: np.ndarray,
                           *args: Any, **kwargs: Any) -> Any:
    """``np.apply_along_axis(func1d, axis, arr)``: ``rrule_via_ad`` per 1-D slice."""
    if args or kwargs:
        return None
    arr = np.asarray(arr)
    moved = np.moveaxis(arr, axis, -1)
    outer = moved.shape[:-1]
    results = [rrule_via_ad(config, func1d, moved[idx]) for idx in np.ndindex(*outer)]
    outs = [np.asarray(r[0]) for r in results]
    inner_shape = outs[0].shape if outs else ()
    y_moved = np.stack(outs).reshape(outer + inner_shape) if outs else np.zeros(outer)
    # NumPy puts the function's output dimensions where the axis was.
    y = np.moveaxis(y_moved, list(range(len(outer), len(outer) + len(inner_shape))),
                    list(range(axis % arr.ndim, axis % arr.ndim + len(inner_shape)))) \
        if inner_shape else y_moved
    project_arr = ProjectTo(arr)

    def apply_along_axis_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        f_bar: Any = _ZERO if _captures(func1d) else _NO
        if isinstance(y_bar, AbstractTangent):
            return _NO, f_bar, _NO, _ZERO
        y_bar = np.asarray(y_bar)
        if inner_shape:
            a = axis % arr.ndim
            y_bar = np.moveaxis(y_bar, list(range(a, a + len(inner_shape))),
                                list(range(len(outer), len(outer) + len(inner_shape))))
        x_bar = np.zeros(moved.shape, dtype=np.result_type(arr, float))
        for (_, pullback), idx in zip(results, np.ndindex(*outer)):
            grads = pullback(y_bar[idx])
            f_bar = _add_function_bar(f_bar, grads[0])
            g = unthunk(grads[1])
            if not isinstance(g, AbstractTangent):
                x_bar[idx] = g
        return _NO, f_bar, _NO, project_arr(np.moveaxis(x_bar, -1, axis))

    return y, apply_along_axis_pullback


@rrule.register(np.piecewise, config=HasReverseMode)
def piecewise_rrule(config: Any, x: np.ndarray, condlist: Any, funclist: Any,
                    *args: Any, **kwargs: Any) -> Any:
    """``np.piecewise(x, condlist, funclist)``: each piece differentiated by the AD."""
    if args or kwargs:
        return None
    x = np.asarray(x)
    conds = [np.asarray(c, dtype=bool) for c in
             (condlist if isinstance(condlist, list) else [condlist])]
    if len(funclist) == len(conds) + 1:
        otherwise = ~np.any(conds, axis=0) if conds else np.ones(x.shape, dtype=bool)
        conds = [*conds, otherwise]
    y = np.zeros(x.shape, dtype=np.result_type(x, float))
    pieces = []
    for cond, fn in zip(conds, funclist):
        if not np.any(cond):
            continue
        if callable(fn):
            yk, pullback = rrule_via_ad(config, fn, x[cond])
            y[cond] = yk
            pieces.append((cond, pullback))
        else:
            y[cond] = fn
    project_x = ProjectTo(x)
    # a constant piece's value is a parameter too: its cotangent sums y_bar over its part
    constants = [(k, cond) for k, (cond, fn) in enumerate(zip(conds, funclist))
                 if not callable(fn) and isinstance(fn, (float, complex, np.inexact))]

    def piecewise_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if isinstance(y_bar, AbstractTangent):
            return _NO, _ZERO, _NO, _ZERO if constants else _NO
        y_bar = np.broadcast_to(y_bar, x.shape)
        x_bar = np.zeros(x.shape, dtype=y.dtype)
        for cond, pullback in pieces:
            g = unthunk(pullback(y_bar[cond])[1])
            if not isinstance(g, AbstractTangent):
                x_bar[cond] += g
        funclist_bar: Any = _NO
        if constants:
            bars: list = [_NO] * len(funclist)
            for k, cond in constants:
                bars[k] = ProjectTo(funclist[k])(np.sum(y_bar[cond]))
            funclist_bar = Tangent[type(funclist)](*bars)
        return _NO, project_x(x_bar), _NO, funclist_bar

    return y, piecewise_pullback
