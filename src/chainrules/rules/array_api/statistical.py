"""Rules for the statistical functions of the array API standard, written once against ``xp``.

``sum``, ``prod``, ``mean``, ``var``, ``std``, ``max``, ``min``, ``cumulative_sum`` and
``cumulative_prod``, with the standard's keywords (``axis``, ``keepdims``, ``dtype``,
``correction``, ``include_initial``). Conventions are NumPy's
(``rules/numpy/reductions.py``): ``max``/``min`` split the cotangent equally among tied
maximisers; ``prod`` is exact with zeros in the input (products of the other elements from
two exclusive scans, never ``y / x``); ``cumulative_prod`` is exact with zeros too, as
PyTorch's ``cumprod`` is: on short scans (``n * n * batch <= 2**22`` elements) it uses the
O(n^2) table of products-but-one, exact to every order; on longer scans an O(n) formula
that masks the elements from each slice's first zero on (exact to first order; its own
derivative misses the terms through the zero, so longer scans with zeros are not
differentiated twice correctly -- the reason for the table on short ones).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from chainrules.core import NoTangent, ProjectTo, ZeroTangent
from chainrules.rules import _kit as kit
from chainrules.rules.array_api._common import conj, is_complex

__all__ = ["register"]


def axes_of(axis: Any, ndim: int) -> tuple:
    """``axis`` (None, an int or a tuple, maybe negative) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(sorted(a % ndim if ndim else a for a in axis))


def unreduce(xp: Any, g: Any, x: Any, axes: tuple, keepdims: bool) -> Any:
    """A reduced cotangent broadcast back to ``x``'s shape."""
    if not keepdims:
        for a in axes:
            g = xp.expand_dims(g, axis=a)
    return xp.broadcast_to(g, tuple(x.shape))


def _count(x: Any, axes: tuple) -> int:
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def _namespace(x: Any) -> Any:
    from chainrules.core import array_namespace

    return array_namespace(x)


def _reduction(f: Any, name: str, pullback: Callable[..., Any],
               pushforward: Callable[..., Any]) -> None:
    """Rules for ``f(x, *, axis=None, keepdims=False, **kw)``: ``pullback(xp, x, y, g,
    axes, kw)`` gets the cotangent ``g`` already broadcast back to ``x``'s shape;
    ``pushforward(xp, x, y, x_dot, axes, keepdims, kw)`` gives ``y_dot``."""

    def reduction_rrule(x: Any, *, axis: Any = None, keepdims: bool = False,
                        **kw: Any) -> Any:
        y = f(x, axis=axis, keepdims=keepdims, **kw)
        project_x = ProjectTo(x)
        axes = axes_of(axis, x.ndim)

        @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent())))
        def reduction_pullback(y_bar: Any) -> tuple:
            xp = _namespace(x)
            g = unreduce(xp, y_bar, x, axes, keepdims)
            # the pullbacks see keepdims among the keywords (std needs it for y)
            return NoTangent(), project_x(pullback(xp, x, y, g, axes,
                                                   dict(kw, keepdims=keepdims)))

        return y, reduction_pullback

    def reduction_frule(dargs: tuple, x: Any, *, axis: Any = None, keepdims: bool = False,
                        **kw: Any) -> Any:
        y = f(x, axis=axis, keepdims=keepdims, **kw)
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None:
            return y, ZeroTangent()
        xp = _namespace(x)
        y_dot = pushforward(xp, x, y, x_dot, axis, keepdims, kw)
        return y, xp.astype(y_dot, y.dtype) if y_dot.dtype != y.dtype else y_dot

    kit.define_rules(f, object, frule_fn=reduction_frule, rrule_fn=reduction_rrule, name=name)


# ------------------------------------------------------------------------- reductions


def _sum_pullback(xp: Any, x: Any, y: Any, g: Any, axes: tuple, kw: dict) -> Any:
    return g


def _sum_pushforward(xp: Any, x: Any, y: Any, x_dot: Any, axis: Any, keepdims: bool,
                     kw: dict) -> Any:
    return xp.sum(x_dot, axis=axis, keepdims=keepdims, **kw)


def _mean_pullback(xp: Any, x: Any, y: Any, g: Any, axes: tuple, kw: dict) -> Any:
    return g / _count(x, axes)


def _mean_pushforward(xp: Any, x: Any, y: Any, x_dot: Any, axis: Any, keepdims: bool,
                      kw: dict) -> Any:
    return xp.mean(x_dot, axis=axis, keepdims=keepdims)


def others_product(xp: Any, x: Any, axes: tuple) -> Any:
    """For each element, the product of the other elements of its reduction: exact with
    zeros (two exclusive scans over the reduced axes, flattened into one)."""
    keep = [a for a in range(x.ndim) if a not in axes]
    moved = xp.permute_dims(x, (*keep, *axes))
    kept_shape = tuple(moved.shape[: len(keep)])
    flat = xp.reshape(moved, (*kept_shape, _count(x, axes)))
    n = flat.shape[-1]
    before = xp.cumulative_prod(flat, axis=-1, include_initial=True)[..., :n]
    after = xp.flip(xp.cumulative_prod(xp.flip(flat, axis=-1), axis=-1, include_initial=True)
                    [..., :n], axis=-1)
    others = xp.reshape(before * after, tuple(moved.shape))
    inverse = [0] * x.ndim
    for i, a in enumerate((*keep, *axes)):
        inverse[a] = i
    return xp.permute_dims(others, tuple(inverse))


def _prod_pullback(xp: Any, x: Any, y: Any, g: Any, axes: tuple, kw: dict) -> Any:
    return conj(xp, others_product(xp, x, axes)) * g


def _prod_pushforward(xp: Any, x: Any, y: Any, x_dot: Any, axis: Any, keepdims: bool,
                      kw: dict) -> Any:
    axes = axes_of(axis, x.ndim)
    return xp.sum(others_product(xp, x, axes) * x_dot, axis=axes, keepdims=keepdims)


def _centered(xp: Any, x: Any, axes: tuple) -> Any:
    return x - xp.mean(x, axis=axes, keepdims=True)


def _var_pullback(xp: Any, x: Any, y: Any, g: Any, axes: tuple, kw: dict) -> Any:
    correction = kw.get("correction", 0.0)
    return 2 * _centered(xp, x, axes) * g / (_count(x, axes) - correction)


def _var_pushforward(xp: Any, x: Any, y: Any, x_dot: Any, axis: Any, keepdims: bool,
                     kw: dict) -> Any:
    axes = axes_of(axis, x.ndim)
    correction = kw.get("correction", 0.0)
    c = _centered(xp, x, axes)
    prod = xp.real(conj(xp, c) * x_dot) if is_complex(xp, c, x_dot) else c * x_dot
    return 2 * xp.sum(prod, axis=axes, keepdims=keepdims) / (_count(x, axes) - correction)


def _std_pullback(xp: Any, x: Any, y: Any, g: Any, axes: tuple, kw: dict) -> Any:
    s = unreduce(xp, y, x, axes, kw["keepdims"])
    return _var_pullback(xp, x, y, g, axes, kw) / (2 * s)


def _std_pushforward(xp: Any, x: Any, y: Any, x_dot: Any, axis: Any, keepdims: bool,
                     kw: dict) -> Any:
    return _var_pushforward(xp, x, y, x_dot, axis, keepdims, kw) / (2 * y)


def _tie_weights(xp: Any, x: Any, y: Any, axes: tuple, keepdims: bool) -> Any:
    """1/k on each of the k elements equal to the extremum of their reduction, else 0."""
    hit = xp.astype(x == unreduce(xp, y, x, axes, keepdims), x.dtype)
    return hit / xp.sum(hit, axis=axes, keepdims=True)


def _extremum_pullback(xp: Any, x: Any, y: Any, g: Any, axes: tuple, kw: dict) -> Any:
    return _tie_weights(xp, x, y, axes, kw["keepdims"]) * g


def _extremum_pushforward(xp: Any, x: Any, y: Any, x_dot: Any, axis: Any, keepdims: bool,
                          kw: dict) -> Any:
    axes = axes_of(axis, x.ndim)
    return xp.sum(_tie_weights(xp, x, y, axes, keepdims) * x_dot, axis=axes, keepdims=keepdims)


# -------------------------------------------------------------------------------- scans


def _scan_axis(x: Any, axis: Any) -> int:
    return 0 if axis is None else axis % x.ndim


def _drop_initial(y_bar: Any, axis: int, include_initial: bool) -> Any:
    """The cotangent of the scan's entries that depend on ``x``."""
    if not include_initial:
        return y_bar
    return y_bar[(slice(None),) * axis + (slice(1, None), Ellipsis)]


def _reverse_cumsum(xp: Any, g: Any, axis: int) -> Any:
    return xp.flip(xp.cumulative_sum(xp.flip(g, axis=axis), axis=axis), axis=axis)


#: Largest ``batch * n * n`` for which ``cumulative_prod`` uses the exact O(n^2) table.
_TABLE_LIMIT = 2**22


def _products_but_one(xp: Any, xm: Any) -> Any:
    """``E[..., i, k] = prod_{j <= k, j != i} x_j`` for ``k >= i``, else 0 (last axis).

    Exact with zeros in value and in every derivative (no division, no mask on values)."""
    n = xm.shape[-1]
    idx = xp.arange(n)
    eye = idx[:, None] == idx[None, :]
    rows = xp.where(eye, xp.ones_like(xm[..., None, :]), xm[..., None, :])
    terms = xp.cumulative_prod(rows, axis=-1)
    upper = idx[:, None] <= idx[None, :]
    return xp.where(upper, terms, xp.zeros_like(terms))


def _zero_masks(xp: Any, xm: Any) -> tuple:
    """Along the last axis: ``before`` (no zero up to here, inclusive), ``at`` (the
    slice's first zero), ``past`` (from the first zero on) and ``x`` with 1 from the
    first zero on; from the standard's functions only."""
    is_zero = xm == 0
    count = xp.cumulative_sum(xp.astype(is_zero, xp.int32), axis=-1)
    before = count == 0
    at = is_zero & (count == 1)
    one = xp.ones_like(xm)
    return before, at, ~before, xp.where(before, xm, one)


def _use_table(xm: Any) -> bool:
    return math.prod(xm.shape) * xm.shape[-1] <= _TABLE_LIMIT


def _cumprod_pullback(xp: Any, x: Any, g: Any, ax: int) -> Any:
    """x_bar of ``cumulative_prod(x, axis=ax)`` for the cotangent ``g``, exact with zeros:
    before a slice's first zero z, ``sum_{k>=i} g_k conj(y_k / x_i)``; at z,
    ``sum_{k>=z} g_k conj(prod_{j<=k, j!=z} x_j)``; after z, 0."""
    xm, gm = xp.moveaxis(x, ax, -1), xp.moveaxis(g, ax, -1)
    if xm.shape[-1] == 0:
        return xp.zeros_like(x) if g.dtype == x.dtype else xp.zeros(x.shape, dtype=g.dtype)
    if _use_table(xm):
        out = xp.sum(gm[..., None, :] * conj(xp, _products_but_one(xp, xm)), axis=-1)
        return xp.moveaxis(out, -1, ax)
    before, at, past, safe = _zero_masks(xp, xm)
    y = xp.cumulative_prod(xm, axis=-1)
    zero = xp.zeros_like(gm * conj(xp, y))
    head = _reverse_cumsum(xp, gm * conj(xp, y), -1) / conj(xp, safe)
    y1 = xp.cumulative_prod(xp.where(at, xp.ones_like(xm), xm), axis=-1)
    tail = _reverse_cumsum(xp, xp.where(past, gm * conj(xp, y1), zero), -1)
    out = xp.where(before, head, xp.where(at, tail, zero))
    return xp.moveaxis(out, -1, ax)


def _cumprod_pushforward(xp: Any, x: Any, x_dot: Any, ax: int) -> Any:
    """y_dot of ``cumulative_prod(x, axis=ax)`` (no initial entry), exact with zeros."""
    xm, dm = xp.moveaxis(x, ax, -1), xp.moveaxis(x_dot, ax, -1)
    if xm.shape[-1] == 0:
        return xp.zeros_like(x_dot)
    if _use_table(xm):
        out = xp.sum(dm[..., :, None] * _products_but_one(xp, xm), axis=-2)
        return xp.moveaxis(out, -1, ax)
    before, at, _, safe = _zero_masks(xp, xm)
    y = xp.cumulative_prod(xm, axis=-1)
    zero = xp.zeros_like(dm * y)
    head = y * xp.cumulative_sum(xp.where(before, dm / safe, zero), axis=-1)
    y1 = xp.cumulative_prod(xp.where(at, xp.ones_like(xm), xm), axis=-1)
    dz = xp.sum(xp.where(at, dm, xp.zeros_like(dm)), axis=-1, keepdims=True)
    out = xp.where(before, head, y1 * dz)
    return xp.moveaxis(out, -1, ax)


def _scan_rules(f: Any, name: str, product: bool) -> None:
    def scan_rrule(x: Any, *, axis: Any = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
        y = f(x, axis=axis, dtype=dtype, include_initial=include_initial)
        project_x = ProjectTo(x)
        ax = _scan_axis(x, axis)

        @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent())))
        def scan_pullback(y_bar: Any) -> tuple:
            xp = _namespace(x)
            g = _drop_initial(y_bar, ax, include_initial)
            if product:
                return NoTangent(), project_x(_cumprod_pullback(xp, x, g, ax))
            return NoTangent(), project_x(_reverse_cumsum(xp, g, ax))

        return y, scan_pullback

    def scan_frule(dargs: tuple, x: Any, *, axis: Any = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
        y = f(x, axis=axis, dtype=dtype, include_initial=include_initial)
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None:
            return y, ZeroTangent()
        xp = _namespace(x)
        if product:
            ax = _scan_axis(x, axis)
            y_dot = _cumprod_pushforward(xp, x, x_dot, ax)
            if include_initial:
                shape = list(y_dot.shape)
                shape[ax] = 1
                y_dot = xp.concat([xp.zeros(tuple(shape), dtype=y_dot.dtype), y_dot], axis=ax)
        else:
            y_dot = xp.cumulative_sum(x_dot, axis=axis, include_initial=include_initial)
        return y, xp.astype(y_dot, y.dtype) if y_dot.dtype != y.dtype else y_dot

    kit.define_rules(f, object, frule_fn=scan_frule, rrule_fn=scan_rrule, name=name)


_REDUCTIONS = {
    "sum": (_sum_pullback, _sum_pushforward),
    "mean": (_mean_pullback, _mean_pushforward),
    "prod": (_prod_pullback, _prod_pushforward),
    "var": (_var_pullback, _var_pushforward),
    "std": (_std_pullback, _std_pushforward),
}


def register(xp: Any, fresh: Callable[[Any], bool]) -> list[str]:
    """Register the statistical rules on ``xp``'s functions that ``fresh`` accepts."""
    done = []
    for name, (pullback, pushforward) in _REDUCTIONS.items():
        f = getattr(xp, name, None)
        if f is not None and fresh(f):
            _reduction(f, name, pullback, pushforward)
            done.append(name)
    for name in ("max", "min"):
        f = getattr(xp, name, None)
        if f is not None and fresh(f):
            _reduction(f, name, _extremum_pullback, _extremum_pushforward)
            done.append(name)
    for name, product in (("cumulative_sum", False), ("cumulative_prod", True)):
        f = getattr(xp, name, None)
        if f is not None and fresh(f):
            _scan_rules(f, name, product)
            done.append(name)
    return done
