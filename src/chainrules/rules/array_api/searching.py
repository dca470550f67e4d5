"""Rules for the searching, sorting and indexing functions of the array API standard.

``where``, ``take``, ``take_along_axis``, ``sort`` and ``diff``, written once against ``xp``.
Scatter-adds (the adjoints of ``take`` and ``take_along_axis``) are one-hot contractions,
not in-place writes, so the pullbacks trace under ``jax.jit`` and are differentiable again;
repeated indices add up. ``sort`` moves the cotangent back through the inverse
permutation (ties are broken by the stable sort). Index-valued and boolean functions
(``argsort``, ``argmax``, ``argmin``, ``nonzero``, ``searchsorted``, ``count_nonzero``,
``all``, ``any``, ``isin``, ``unique_*``) are non-differentiable.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, Thunk, ZeroTangent, array_namespace
from chainrules.rules import _kit as kit

__all__ = ["register"]


def _where_rules(f: Any) -> None:
    def where_rrule(condition: Any, x1: Any, x2: Any) -> Any:
        y = f(condition, x1, x2)
        project_x1 = ProjectTo(x1)
        project_x2 = ProjectTo(x2)

        @kit.zero_guard(lambda: (NoTangent(), NoTangent(), project_x1(ZeroTangent()),
                                 project_x2(ZeroTangent())))
        def where_pullback(y_bar: Any) -> tuple:
            xp = array_namespace(y_bar)
            zero = xp.zeros_like(y_bar)

            def where_x1_bar() -> Any:
                return project_x1(xp.where(condition, y_bar, zero))

            def where_x2_bar() -> Any:
                return project_x2(xp.where(condition, zero, y_bar))

            return NoTangent(), NoTangent(), Thunk(where_x1_bar), Thunk(where_x2_bar)

        return y, where_pullback

    def where_frule(dargs: tuple, condition: Any, x1: Any, x2: Any) -> Any:
        y = f(condition, x1, x2)
        x1_dot, x2_dot = kit.nonzero(dargs[2]), kit.nonzero(dargs[3])
        if x1_dot is None and x2_dot is None:
            return y, ZeroTangent()
        xp = array_namespace(y)
        zero = xp.zeros_like(y)
        y_dot = xp.where(condition, zero if x1_dot is None else x1_dot,
                         zero if x2_dot is None else x2_dot)
        return y, xp.broadcast_to(y_dot, tuple(y.shape))

    kit.define_rules(f, object, object, object, frule_fn=where_frule, rrule_fn=where_rrule)


def _one_hot(xp: Any, indices: Any, n: int, dtype: Any) -> Any:
    """``one_hot[..., k, j] = (indices[..., k] % n == j)``: the matrix of a gather."""
    positions = xp.arange(n, dtype=indices.dtype)
    wrapped = xp.where(indices < 0, indices + n, indices)
    return xp.astype(xp.expand_dims(wrapped, axis=-1) == positions, dtype)


def scatter_add(xp: Any, g: Any, indices: Any, n: int, axis: int) -> Any:
    """The adjoint of ``take(x, indices, axis=axis)`` (1-D ``indices``, ``x.shape[axis]
    == n``): adds the entries of ``g`` into the positions they were taken from."""
    moved = xp.moveaxis(g, axis, -1)
    out = xp.matmul(moved, _one_hot(xp, indices, n, g.dtype))
    return xp.moveaxis(out, -1, axis)


def _take_rules(f: Any) -> None:
    def take_rrule(x: Any, indices: Any, *, axis: Any = None) -> Any:
        y = f(x, indices, axis=axis)
        project_x = ProjectTo(x)

        @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent()), NoTangent()))
        def take_pullback(y_bar: Any) -> tuple:
            xp = array_namespace(x)
            if axis is None:
                flat = scatter_add(xp, y_bar, indices, math.prod(x.shape), 0)
                return NoTangent(), project_x(xp.reshape(flat, tuple(x.shape))), NoTangent()
            ax = axis % x.ndim
            return (NoTangent(), project_x(scatter_add(xp, y_bar, indices, x.shape[ax], ax)),
                    NoTangent())

        return y, take_pullback

    def take_frule(dargs: tuple, x: Any, indices: Any, *, axis: Any = None) -> Any:
        y = f(x, indices, axis=axis)
        x_dot = kit.nonzero(dargs[1])
        return y, ZeroTangent() if x_dot is None else f(x_dot, indices, axis=axis)

    kit.define_rules(f, object, object, frule_fn=take_frule, rrule_fn=take_rrule)


def _take_along_axis_rules(f: Any) -> None:
    def take_along_axis_rrule(x: Any, indices: Any, *rest: Any, **kw: Any) -> Any:
        y = f(x, indices, *rest, **kw)
        project_x = ProjectTo(x)
        axis = rest[0] if rest else kw.get("axis", -1)

        extra = (NoTangent(),) * len(rest)

        @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent()), NoTangent(), *extra))
        def take_along_axis_pullback(y_bar: Any) -> tuple:
            xp = array_namespace(x)
            ax = axis % x.ndim
            n = x.shape[ax]
            idx = xp.moveaxis(indices, ax, -1)
            g = xp.moveaxis(y_bar, ax, -1)
            # sum over the gathered positions k of g[..., k] * one_hot[..., k, j]
            x_bar = xp.sum(xp.expand_dims(g, axis=-1) * _one_hot(xp, idx, n, g.dtype), axis=-2)
            return (NoTangent(), project_x(xp.moveaxis(x_bar, -1, ax)), NoTangent(), *extra)

        return y, take_along_axis_pullback

    def take_along_axis_frule(dargs: tuple, x: Any, indices: Any, *rest: Any,
                              **kw: Any) -> Any:
        y = f(x, indices, *rest, **kw)
        x_dot = kit.nonzero(dargs[1])
        return y, ZeroTangent() if x_dot is None else f(x_dot, indices, *rest, **kw)

    kit.define_rules(f, object, object, ..., frule_fn=take_along_axis_frule,
                     rrule_fn=take_along_axis_rrule)


def _sort_rules(f: Any, argsort: Any, take_along_axis: Any) -> None:
    def sort_rrule(x: Any, *rest: Any, **kw: Any) -> Any:
        y = f(x, *rest, **kw)
        project_x = ProjectTo(x)
        axis = rest[0] if rest else kw.get("axis", -1)
        descending = kw.get("descending", False)

        extra = (NoTangent(),) * len(rest)

        @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent()), *extra))
        def sort_pullback(y_bar: Any) -> tuple:
            perm = argsort(x, axis=axis, descending=descending, stable=True)
            inverse = argsort(perm, axis=axis, stable=True)
            return NoTangent(), project_x(take_along_axis(y_bar, inverse, axis=axis)), *extra

        return y, sort_pullback

    def sort_frule(dargs: tuple, x: Any, *rest: Any, **kw: Any) -> Any:
        y = f(x, *rest, **kw)
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None:
            return y, ZeroTangent()
        axis = rest[0] if rest else kw.get("axis", -1)
        perm = argsort(x, axis=axis, descending=kw.get("descending", False), stable=True)
        return y, take_along_axis(x_dot, perm, axis=axis)

    kit.define_rules(f, object, ..., frule_fn=sort_frule, rrule_fn=sort_rrule)


def _diff_rules(f: Any) -> None:
    # diff(x, axis=-1, n=1, prepend=None, append=None) is linear in x (and in prepend,
    # append); only x is differentiated here: prepend/append get NoTangent
    def diff_rrule(x: Any, *, axis: int = -1, n: int = 1, prepend: Any = None,
                   append: Any = None) -> Any:
        kw = {"axis": axis, "n": n, "prepend": prepend, "append": append}
        y = f(x, **{k: v for k, v in kw.items() if v is not None})
        project_x = ProjectTo(x)

        @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent())))
        def diff_pullback(y_bar: Any) -> tuple:
            xp = array_namespace(x)
            ax = axis % x.ndim
            g = y_bar
            for _ in range(n):
                # adjoint of one difference: pad with a zero each side, negative difference
                zshape = list(g.shape)
                zshape[ax] = 1
                zero = xp.zeros(tuple(zshape), dtype=g.dtype)
                g = -xp.diff(xp.concat([zero, g, zero], axis=ax), axis=ax)
            # n=0 returns x as it is, without prepend/append (NumPy, PyTorch)
            lo = 0 if prepend is None or n == 0 else _extent(prepend, ax)
            index = (slice(None),) * ax + (slice(lo, lo + x.shape[ax]), Ellipsis)
            return NoTangent(), project_x(g[index])

        return y, diff_pullback

    def diff_frule(dargs: tuple, x: Any, *, axis: int = -1, n: int = 1, prepend: Any = None,
                   append: Any = None) -> Any:
        kw = {"axis": axis, "n": n, "prepend": prepend, "append": append}
        y = f(x, **{k: v for k, v in kw.items() if v is not None})
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None:
            return y, ZeroTangent()
        xp = array_namespace(x)
        zeros = {k: xp.zeros_like(v) for k, v in (("prepend", prepend), ("append", append))
                 if v is not None and hasattr(v, "shape")}
        return y, f(x_dot, axis=axis, n=n, **zeros)

    kit.define_rules(f, object, frule_fn=diff_frule, rrule_fn=diff_rrule)


def _extent(v: Any, axis: int) -> int:
    return v.shape[axis] if hasattr(v, "shape") and v.ndim else 1


NON_DIFFERENTIABLE = (
    "argsort", "argmax", "argmin", "nonzero", "searchsorted", "count_nonzero", "all", "any",
    "isin", "unique_all", "unique_counts", "unique_inverse", "unique_values",
)


def register(xp: Any, fresh: Callable[[Any], bool]) -> list[str]:
    """Register the searching and sorting rules on ``xp``'s functions that ``fresh`` accepts."""
    done = []
    for name, make in (("where", _where_rules), ("take", _take_rules),
                       ("take_along_axis", _take_along_axis_rules), ("diff", _diff_rules)):
        f = getattr(xp, name, None)
        if f is not None and fresh(f):
            make(f)
            done.append(name)
    sort = getattr(xp, "sort", None)
    argsort = getattr(xp, "argsort", None)
    take_along_axis = getattr(xp, "take_along_axis", None)
    if sort is not None and argsort is not None and take_along_axis is not None and fresh(sort):
        _sort_rules(sort, argsort, take_along_axis)
        done.append("sort")
    for name in NON_DIFFERENTIABLE:
        f = getattr(xp, name, None)
        if f is not None and fresh(f):
            core.non_differentiable(f)
            done.append(name)
    return done
