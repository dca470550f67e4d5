"""Rules for indexing, selecting and sorting NumPy arrays.

Covered (frule and rrule):

- ``x[idx]`` for an ndarray ``x``: ``operator.getitem(x, idx)`` and
  ``np.ndarray.__getitem__(x, idx)`` (rules dispatch on an ``np.ndarray`` first argument),
  with ints, slices, ``Ellipsis``, ``None``, boolean masks, integer arrays or lists and
  tuples mixing them; repeated integer indices accumulate in the cotangent; ``s[()]``
  of a NumPy float or complex scalar;
- ``take`` (``axis``, ``mode``), ``take_along_axis``, ``compress``, ``extract``;
- ``where(condition, x, y)`` w.r.t. both branches (broadcasting summed back; the
  condition gets ``NoTangent()``), ``select`` w.r.t. the choices and a positional
  ``default``, ``choose`` (``mode``) w.r.t. the choices;
- ``sort`` (``axis``, ``axis=None``): the output picks ``x[argsort(x)]``. At ties the
  derivative does not exist; the rule sends each output's cotangent to the element a
  stable ``argsort`` puts there (the first of the tied elements in index order goes
  first).

Non-differentiable: ``where(condition)`` (one argument). ``argsort``, ``nonzero``,
``argwhere``, ``flatnonzero`` and ``searchsorted`` are declared in ``reductions.py``.
Mutating functions (``put``, ``place``, ``put_along_axis``, ``ndarray.sort``) have no
rules: an AD must not differentiate through them.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import NoTangent, Tangent, Thunk, ZeroTangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit
from chainrules.rules.numpy import _linear as linear

# ------------------------------------------------------------------------------ x[idx]


def _is_basic_index(idx: Any) -> bool:
    """Whether ``x[idx]`` is basic indexing (a view; each element picked at most once)."""
    for i in idx if type(idx) is tuple else (idx,):
        if i is None or i is Ellipsis or isinstance(i, slice):
            continue
        if isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)):
            continue
        return False
    return True


def getitem_frule(dargs: tuple, x: np.ndarray, idx: Any) -> Any:
    y = x[idx]
    x_dot = kit.nonzero(dargs[1])
    if x_dot is None or not kit.is_differentiable(x) or not kit.is_differentiable(y):
        return y, kit.zero_for(y)
    return y, kit.fit_output(kit.dense_tangent(x_dot, x)[idx], y)


def getitem_rrule(x: np.ndarray, idx: Any) -> Any:
    y = x[idx]
    if not kit.is_differentiable(x) or not kit.is_differentiable(y):
        x_zero = linear.zero_given_output(x, y)

        def getitem_no_tangent_pullback(y_bar: Any) -> tuple:
            return (NoTangent(), x_zero, NoTangent())

        return y, getitem_no_tangent_pullback
    project_x = kit.array_projector(x)
    shape, dtype = x.shape, x.dtype
    basic = _is_basic_index(idx)
    scatter = None if basic else linear.gather_adjoint(x, lambda pos: pos[idx])

    @kit.zero_guard((NoTangent(), ZeroTangent(), NoTangent()))
    def getitem_pullback(y_bar: Any) -> tuple:
        y_bar = np.asarray(y_bar)
        if type(y_bar) is not np.ndarray:
            # an AD's traced cotangent (a second derivative runs this pullback on traced
            # values): scatter with operations that have rules, never by assignment
            back = scatter or linear.gather_adjoint(x, lambda pos: pos[idx])
            return (NoTangent(), project_x(back(y_bar)), NoTangent())

        def getitem_add(acc: np.ndarray) -> np.ndarray:
            # Adds into the accumulator only where x[idx] reads: an AD summing the
            # cotangents of many x[i] pays for the elements, not for the whole of x.
            v = y_bar.real if acc.dtype.kind != "c" and y_bar.dtype.kind == "c" else y_bar
            if basic:
                acc[idx] += v
            else:
                np.add.at(acc, idx, v)  # repeated indices accumulate
            return acc

        def getitem_dense() -> Any:
            if scatter is not None:
                return project_x(scatter(y_bar))
            x_bar = np.zeros(shape, np.result_type(dtype, y_bar.dtype))
            x_bar[idx] = y_bar
            return project_x(x_bar)

        return (NoTangent(), core.InplaceableThunk(getitem_add, getitem_dense), NoTangent())

    return y, getitem_pullback


for _f in (operator.getitem, np.ndarray.__getitem__):
    frule.register(_f, np.ndarray, object)(getitem_frule)
    rrule.register(_f, np.ndarray, object)(getitem_rrule)
# a NumPy scalar indexes like a 0-d array (x[()], x[None], x[...]): np.sum(x)[()], and
# NumPy's own code writes np.reshape(x, shape)[()] to turn a 0-d result into a scalar
frule.register(operator.getitem, np.generic, object)(getitem_frule)
rrule.register(operator.getitem, np.generic, object)(getitem_rrule)


# ------------------------------------------------------------------------------ take


linear.gather_rules(np.take, drop=("out",), out_at=2)  # take(a, indices, axis, out, mode)
linear.gather_rules(np.take_along_axis)


def _selection_rules(f: Any) -> None:
    """Rules for ``f(condition, x, *args)``: picks elements of ``x`` where ``condition``."""
    out_at = 1 if f is np.compress else None  # compress(condition, a, axis, out)

    def selection_frule(dargs: tuple, condition: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        kit.refuse_out(f, kwargs, args, out_at)
        y = f(condition, x, *args, **kwargs)
        x_dot = kit.nonzero(dargs[2])
        if x_dot is None or not kit.is_differentiable(x) or not kit.is_differentiable(y):
            return y, kit.zero_for(y)
        return y, kit.fit_output(f(condition, kit.dense_tangent(x_dot, x), *args, **kwargs), y)

    def selection_rrule(condition: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        kit.refuse_out(f, kwargs, args, out_at)
        y = f(condition, x, *args, **kwargs)
        rest = (NoTangent(),) * len(args)
        project_x = kit.array_projector(x)
        diff = kit.is_differentiable(x) and kit.is_differentiable(y)
        scatter = linear.gather_adjoint(x, lambda pos: f(condition, pos, *args, **kwargs))

        zeros = (NoTangent(), NoTangent(), kit.zero_for(x), *rest)

        @kit.zero_guard(zeros)
        def selection_pullback(y_bar: Any) -> tuple:
            if not diff:
                return zeros
            return (NoTangent(), NoTangent(), project_x(scatter(y_bar)), *rest)

        return y, selection_pullback

    kit.define_rules(f, frule_fn=selection_frule, rrule_fn=selection_rrule)


_selection_rules(np.compress)
_selection_rules(np.extract)


# ------------------------------------------------------------------------------ where


@frule.register(np.where)
def where_frule(dargs: tuple, condition: Any, x: Any, y: Any) -> Any:
    out = np.where(condition, x, y)
    x_dot, y_dot = unthunk(dargs[2]), unthunk(dargs[3])
    if not kit.is_differentiable(out) or (kit.is_zero(x_dot) and kit.is_zero(y_dot)):
        return out, kit.zero_for(out)
    out_dot = np.where(condition, kit.dense_tangent(x_dot, x), kit.dense_tangent(y_dot, y))
    return out, kit.fit_output(np.broadcast_to(out_dot, out.shape).copy(), out)


@rrule.register(np.where)
def where_rrule(condition: Any, x: Any, y: Any) -> Any:
    out = np.where(condition, x, y)
    mask = np.asarray(condition).astype(bool)
    project_x, project_y = kit.array_projector(x), kit.array_projector(y)
    shape_x, shape_y = np.shape(x), np.shape(y)
    diff_out = kit.is_differentiable(out)
    diff_x, diff_y = diff_out and kit.is_differentiable(x), diff_out and kit.is_differentiable(y)

    @kit.zero_guard(lambda: (NoTangent(), NoTangent(), kit.zero_for(x), kit.zero_for(y)))
    def where_pullback(out_bar: Any) -> tuple:
        out_bar = np.asarray(out_bar)
        x_bar = Thunk(lambda: project_x(linear.unbroadcast(np.where(mask, out_bar, 0), shape_x)))
        y_bar = Thunk(lambda: project_y(linear.unbroadcast(np.where(mask, 0, out_bar), shape_y)))
        return (NoTangent(), NoTangent(), x_bar if diff_x else NoTangent(),
                y_bar if diff_y else NoTangent())

    return out, where_pullback


core.non_differentiable(np.where, object)  # where(condition): indices


# ------------------------------------------------------------------------------ select, choose


def _choice_cotangents(choices: Any, masks: Callable[[], list], out_bar: np.ndarray) -> Any:
    """The cotangent of a sequence (or stacked array) of choices: item ``k`` gets
    ``out_bar`` where ``masks()[k]`` holds, summed back to the item's shape."""
    items = list(choices)
    shapes = [np.shape(c) for c in items]
    cache: list = []

    def piece(k: int) -> np.ndarray:
        if not cache:
            cache.append(masks())
        return linear.unbroadcast(np.where(cache[0][k], out_bar, 0), shapes[k])

    if isinstance(choices, np.ndarray):
        project = kit.array_projector(choices)
        return Thunk(lambda: project(np.stack([piece(k) for k in range(len(items))])))
    projectors = [kit.array_projector(c) for c in items]
    return Tangent[type(choices)](*(
        Thunk(lambda k=k: projectors[k](piece(k))) if kit.is_differentiable(c) else NoTangent()
        for k, c in enumerate(items)))


def _choice_dots(d_choices: Any, choices: Any) -> list:
    d_choices = unthunk(d_choices)
    if kit.is_zero(d_choices):
        return [kit.dense_tangent(ZeroTangent(), c) for c in choices]
    if isinstance(choices, np.ndarray):
        return list(np.asarray(d_choices))
    items = d_choices.backing if isinstance(d_choices, Tangent) else d_choices
    return [kit.dense_tangent(t, c) for t, c in zip(items, choices)]


@frule.register(np.select)
def select_frule(dargs: tuple, condlist: Any, choicelist: Any, *args: Any,
                 **kwargs: Any) -> Any:
    y = np.select(condlist, choicelist, *args, **kwargs)
    default_dot = unthunk(dargs[3]) if args else ZeroTangent()
    if not kit.is_differentiable(y) or (
        kit.is_zero(unthunk(dargs[2])) and kit.is_zero(default_dot)
    ):
        return y, kit.zero_for(y)
    default_dense = kit.dense_tangent(default_dot, args[0]) if args else 0
    return y, kit.fit_output(
        np.select(condlist, _choice_dots(dargs[2], choicelist), default_dense), y
    )


@rrule.register(np.select)
def select_rrule(condlist: Any, choicelist: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.select(condlist, choicelist, *args, **kwargs)
    shape = y.shape
    conds = [np.asarray(c, dtype=bool) for c in condlist]
    default = args[0] if args else None
    project_default = kit.array_projector(default)

    def select_masks() -> list:
        taken = np.zeros(shape, dtype=bool)
        out = []
        for c in conds:
            c = np.broadcast_to(c, shape)
            out.append(c & ~taken)
            taken = taken | c
        out.append(~taken)
        return out

    def select_zeros() -> tuple:
        zero = (kit.zero_for(default),) if args else ()
        return (NoTangent(), NoTangent(), kit.zero_for(choicelist), *zero)

    @kit.zero_guard(select_zeros)
    def select_pullback(y_bar: Any) -> tuple:
        if not kit.is_differentiable(y):
            return select_zeros()
        y_bar = np.asarray(y_bar)
        choices_bar = _choice_cotangents(choicelist, select_masks, y_bar)
        if not args:
            return (NoTangent(), NoTangent(), choices_bar)
        default_bar = Thunk(lambda: project_default(linear.unbroadcast(
            np.where(select_masks()[-1], y_bar, 0), np.shape(default))))
        return (NoTangent(), NoTangent(), choices_bar,
                default_bar if kit.is_differentiable(default) else NoTangent())

    return y, select_pullback


@frule.register(np.choose)
def choose_frule(dargs: tuple, a: Any, choices: Any, *args: Any, **kwargs: Any) -> Any:
    kit.refuse_out(np.choose, kwargs, args, 0)  # choose(a, choices, out, mode)
    y = np.choose(a, choices, *args, **kwargs)
    if not kit.is_differentiable(y) or kit.is_zero(unthunk(dargs[2])):
        return y, kit.zero_for(y)
    return y, kit.fit_output(np.choose(a, _choice_dots(dargs[2], choices), *args, **kwargs), y)


@rrule.register(np.choose)
def choose_rrule(a: Any, choices: Any, *args: Any, **kwargs: Any) -> Any:
    kit.refuse_out(np.choose, kwargs, args, 0)  # choose(a, choices, out, mode)
    y = np.choose(a, choices, *args, **kwargs)
    rest = (NoTangent(),) * len(args)
    mode = linear.argument(args, kwargs, 1, "mode", "raise")
    n = len(choices)
    shape = y.shape

    def choose_masks() -> list:
        chosen = np.broadcast_to(np.choose(a, list(range(n)), mode=mode), shape)
        return [chosen == k for k in range(n)]

    zeros = (NoTangent(), NoTangent(), kit.zero_for(choices), *rest)

    @kit.zero_guard(zeros)
    def choose_pullback(y_bar: Any) -> tuple:
        if not kit.is_differentiable(y):
            return zeros
        return (NoTangent(), NoTangent(),
                _choice_cotangents(choices, choose_masks, np.asarray(y_bar)), *rest)

    return y, choose_pullback


# ------------------------------------------------------------------------------ sort


def _sort_gather(x: Any, args: tuple, kwargs: dict) -> Callable[[np.ndarray], np.ndarray]:
    """``pos -> pos`` sorted like ``x`` (by a stable argsort of ``x``)."""
    axis = linear.argument(args, kwargs, 0, "axis", -1)
    # argsort of x itself, not of np.asarray(x): a higher-order derivative runs this on
    # traced values, whose argsort is a constant
    perm = np.argsort(x, axis=axis, kind="stable")
    if axis is None:

        def sort_flat_gather(pos: np.ndarray) -> np.ndarray:
            return np.ravel(pos)[perm]

        return sort_flat_gather

    def sort_gather(pos: np.ndarray) -> np.ndarray:
        return np.take_along_axis(pos, perm, axis)

    return sort_gather


def _sort_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    return linear.gather_adjoint(x, _sort_gather(x, args, kwargs))


def _sort_pushforward(x: Any, x_dot: np.ndarray, *args: Any, **kwargs: Any) -> Any:
    return _sort_gather(x, args, kwargs)(x_dot)


linear.linear_rules(np.sort, _sort_adjoint, _sort_pushforward)

