"""Forward rules for the higher-order functions of `_higher_order` (``map``,
``functools.reduce``, ``itertools.accumulate``, ``np.vectorize`` calls,
``np.apply_along_axis``, ``np.piecewise``), registered with ``config=HasForwardsMode``.

Each pushes the tangents through the function it was given with
`chainrules.frule_via_ad`, one call per element, step or slice, so the outputs match
the reverse rules' (lists for ``map`` and ``accumulate``). The function argument's own
tangent (a closure's captured values) enters every call.

A rule returns ``None`` (no rule) for the calls its reverse twin declines, so the AD
traces them instead.
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
    HasForwardsMode,
    NoTangent,
    Tangent,
    ZeroTangent,
    frule,
    frule_via_ad,
    unthunk,
)

from ._higher_order import _EMPTY, _holds_tracer, _materialize

_ZERO = ZeroTangent()


def _item_tangents(xs: Any, t: Any, n: int) -> list:
    """The tangents of the items of a sequence argument (zero for a zero tangent)."""
    t = unthunk(t)
    if isinstance(t, AbstractTangent) and not isinstance(t, Tangent):
        return [_ZERO] * n
    if isinstance(t, Tangent):
        return [unthunk(t[i]) for i in range(n)]
    return [t[i] for i in range(n)]


def _list_tangent(dots: list) -> Any:
    return Tangent[list](*dots)


@frule.register(map, config=HasForwardsMode)
def map_frule(config: Any, dargs: tuple, f: Callable, *iterables: Any) -> Any:
    seqs = [_materialize(xs) for xs in iterables]
    if any(_holds_tracer(s) for s in seqs):
        return None
    n = min((len(s) for s in seqs), default=0)
    dots = [_item_tangents(s, t, n) for s, t in zip(seqs, dargs[2:])]
    f_dot = dargs[1]
    results = [frule_via_ad(config, (f_dot, *(d[k] for d in dots)), f, *(s[k] for s in seqs))
               for k in range(n)]
    return [r[0] for r in results], _list_tangent([r[1] for r in results])


def _fold_forward(config: Any, f: Callable, f_dot: Any, acc: Any, acc_dot: Any,
                  items: list, dots: list) -> tuple[list, list]:
    accs, acc_dots = [], []
    for x, x_dot in zip(items, dots):
        acc, acc_dot = frule_via_ad(config, (f_dot, acc_dot, x_dot), f, acc, x)
        accs.append(acc)
        acc_dots.append(acc_dot)
    return accs, acc_dots


@frule.register(functools.reduce, config=HasForwardsMode)
def reduce_frule(config: Any, dargs: tuple, f: Callable, xs: Any,
                 initial: Any = _EMPTY) -> Any:
    seq = _materialize(xs)
    if len(seq) == 0 and initial is _EMPTY:
        return None  # reduce raises TypeError; let it
    dots = _item_tangents(seq, dargs[2], len(seq))
    if initial is _EMPTY:
        start, start_dot, items, item_dots = seq[0], dots[0], seq[1:], dots[1:]
    else:
        start, start_dot, items, item_dots = initial, dargs[3], seq, dots
    accs, acc_dots = _fold_forward(config, f, dargs[1], start, start_dot, items, item_dots)
    return (accs[-1], acc_dots[-1]) if accs else (start, start_dot)


@frule.register(itertools.accumulate, config=HasForwardsMode)
def accumulate_frule(config: Any, dargs: tuple, xs: Any, *rest: Any,
                     initial: Any = None) -> Any:
    func = rest[0] if rest else operator.add
    seq = _materialize(xs)
    if len(seq) == 0 or func is None:
        return None
    f_dot = dargs[2] if rest else NoTangent()
    dots = _item_tangents(seq, dargs[1], len(seq))
    if initial is None:
        start, start_dot, items, item_dots = seq[0], dots[0], seq[1:], dots[1:]
    else:  # a keyword argument: it has no tangent
        start, start_dot, items, item_dots = initial, _ZERO, seq, dots
    accs, acc_dots = _fold_forward(config, func, f_dot, start, start_dot, items, item_dots)
    return [start, *accs], _list_tangent([start_dot, *acc_dots])


def _dense(t: Any, shape: tuple) -> np.ndarray:
    t = unthunk(t)
    if isinstance(t, AbstractTangent):
        return np.zeros(shape)
    return np.broadcast_to(np.asarray(t), shape)


@frule.register_call(np.vectorize, config=HasForwardsMode)
def vectorize_frule(config: Any, dargs: tuple, vec: np.vectorize, *args: Any,
                    **kwargs: Any) -> Any:
    if kwargs or vec.signature is not None or vec.excluded:
        return None
    arrays = [np.asarray(a) for a in args]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    flat = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
    flat_dots = [_dense(t, shape).reshape(-1) for t in dargs[1:]]
    results = [frule_via_ad(config, (NoTangent(), *(d[k] for d in flat_dots)), vec.pyfunc,
                            *(a[k] for a in flat)) for k in range(int(np.prod(shape)))]
    y = np.array([r[0] for r in results]).reshape(shape)
    y_dot = np.array([0.0 if isinstance(unthunk(r[1]), AbstractTangent) else unthunk(r[1])
                      for r in results]).reshape(shape)
    return y, y_dot


@frule.register(np.apply_along_axis, config=HasForwardsMode)
def apply_along_axis_frule(config: Any, dargs: tuple, func1d: Callable, axis: int,
                           arr: Any, *args: Any, **kwargs: Any) -> Any:
    if args or kwargs:
        return None
    arr = np.asarray(arr)
    moved = np.moveaxis(arr, axis, -1)
    moved_dot = np.moveaxis(_dense(dargs[3], arr.shape), axis, -1)
    outer = moved.shape[:-1]
    results = [frule_via_ad(config, (dargs[1], moved_dot[idx]), func1d, moved[idx])
               for idx in np.ndindex(*outer)]
    if not results:
        return None
    outs = [np.asarray(r[0]) for r in results]
    dots = [np.broadcast_to(_dense(r[1], o.shape), o.shape) for r, o in zip(results, outs)]
    inner = outs[0].shape
    a = axis % arr.ndim

    def assemble(parts: list) -> np.ndarray:
        stacked = np.stack(parts).reshape(outer + inner)
        if not inner:
            return stacked
        return np.moveaxis(stacked, list(range(len(outer), len(outer) + len(inner))),
                           list(range(a, a + len(inner))))

    return assemble(outs), assemble(dots)


@frule.register(np.piecewise, config=HasForwardsMode)
def piecewise_frule(config: Any, dargs: tuple, x: Any, condlist: Any, funclist: Any,
                    *args: Any, **kwargs: Any) -> Any:
    if args or kwargs:
        return None
    x = np.asarray(x)
    x_dot = _dense(dargs[1], x.shape)
    conds = [np.asarray(c, dtype=bool) for c in
             (condlist if isinstance(condlist, list) else [condlist])]
    if len(funclist) == len(conds) + 1:
        otherwise = ~np.any(conds, axis=0) if conds else np.ones(x.shape, dtype=bool)
        conds = [*conds, otherwise]
    y = np.zeros(x.shape, dtype=np.result_type(x, float))
    y_dot = np.zeros(x.shape, dtype=np.result_type(x, x_dot, float))
    f_dots = _item_tangents(funclist, dargs[3], len(funclist))
    for cond, fn, fn_dot in zip(conds, funclist, f_dots):
        if not np.any(cond):
            continue
        if callable(fn):
            yk, yk_dot = frule_via_ad(config, (NoTangent(), x_dot[cond]), fn, x[cond])
            y[cond] = yk
            y_dot[cond] = _dense(yk_dot, np.shape(yk))
        else:  # a constant piece: its value's tangent
            y[cond] = fn
            y_dot[cond] = _dense(fn_dot, ())
    return y, y_dot
