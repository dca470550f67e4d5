"""Rules for ``np.meshgrid`` and ``np.block``: both are linear, so the pushforward is the
function applied to the tangents and the pullback its adjoint.

- ``meshgrid(*xi)`` broadcasts each 1-d ``xi`` along the other axes: the cotangent of
  ``xi`` sums its output's cotangent over those axes (``indexing``, ``sparse`` and
  ``copy`` are honoured; the axes come from the sparse grid's shapes).
- ``block(arrays)`` assembles blocks: the pullback cuts the cotangent back into blocks
  by assembling, once, the same layout from blocks of element positions.

Examples:
    >>> import numpy as np
    >>> from chainrules import rrule
    >>> (X, Y), pullback = rrule(np.meshgrid, np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0]))
    >>> pullback((np.ones((2, 3)), np.zeros((2, 3))))[1:]
    (array([2., 2., 2.]), array([0., 0.]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.core import NoTangent, Tangent, ZeroTangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit


def _items(y_bar: Any, n: int) -> list:
    """The items of a tuple output's cotangent, unthunked; None for zeros."""
    items = y_bar.backing if isinstance(y_bar, Tangent) else y_bar
    return [kit.nonzero(b) for b in items][:n]


# ----------------------------------------------------------------------------- meshgrid


def _sparse_shapes(xi: tuple, kwargs: dict) -> list[tuple]:
    """Each input's shape inside the grid: one axis of its length, the others 1."""
    grid = np.meshgrid(*(np.zeros(np.size(x)) for x in xi),
                       **{**kwargs, "sparse": True, "copy": False})
    return [g.shape for g in grid]


@frule.register(np.meshgrid)
def meshgrid_frule(dargs: tuple, *xi: Any, **kwargs: Any) -> Any:
    y = np.meshgrid(*xi, **kwargs)
    dots = []
    for t, x, yi, shape in zip(dargs[1:], xi, y, _sparse_shapes(xi, kwargs)):
        t = kit.nonzero(t)
        if t is None or not kit.is_differentiable(x):
            dots.append(kit.zero_for(yi))
        else:
            d = kit.dense_tangent(t, x).reshape(shape)
            dots.append(kit.fit_output(np.broadcast_to(d, yi.shape), yi))
    return y, Tangent[type(y)](*dots)


@rrule.register(np.meshgrid)
def meshgrid_rrule(*xi: Any, **kwargs: Any) -> Any:
    y = np.meshgrid(*xi, **kwargs)
    shapes = _sparse_shapes(xi, kwargs)
    projectors = [kit.array_projector(x) for x in xi]

    @kit.zero_guard(lambda: (NoTangent(), *(kit.zero_for(x) for x in xi)))
    def meshgrid_pullback(y_bar: Any) -> tuple:
        bars: list = [NoTangent()]
        for b, x, shape, project_x in zip(_items(y_bar, len(xi)), xi, shapes, projectors):
            if b is None or not kit.is_differentiable(x):
                bars.append(kit.zero_for(x))
                continue
            b = np.asarray(b)
            axes = tuple(i for i, n in enumerate(shape) if n == 1 and b.shape[i] != 1)
            summed = b.sum(axis=axes, keepdims=True) if axes else b
            bars.append(project_x(summed.reshape(np.shape(x))))
        return tuple(bars)

    return y, meshgrid_pullback


# -------------------------------------------------------------------------------- block


def _leaves(arrays: Any) -> list:
    """The blocks of ``np.block``'s nested lists, depth first."""
    if type(arrays) is list:
        return [leaf for a in arrays for leaf in _leaves(a)]
    return [arrays]


def _rebuild(arrays: Any, values: Any) -> Any:
    """``arrays``' nesting with its blocks replaced by ``next(values)``."""
    if type(arrays) is list:
        return [_rebuild(a, values) for a in arrays]
    return next(values)


def _tangent_leaves(t: Any, arrays: Any) -> list:
    """The tangents of the blocks, depth first (None for zeros)."""
    t = unthunk(t)
    if type(arrays) is list:
        if t is None or isinstance(t, (ZeroTangent, NoTangent)):
            return [None] * len(_leaves(arrays))
        items = t.backing if isinstance(t, Tangent) else t
        return [leaf for ti, a in zip(items, arrays) for leaf in _tangent_leaves(ti, a)]
    return [kit.nonzero(t)]


def _nest_tangent(arrays: Any, bars: Any) -> Any:
    if type(arrays) is list:
        return Tangent[list](*(_nest_tangent(a, bars) for a in arrays))
    return next(bars)


@frule.register(np.block, object)
def block_frule(dargs: tuple, arrays: Any) -> Any:
    y = np.block(arrays)
    leaves = _leaves(arrays)
    dots = _tangent_leaves(dargs[1], arrays)
    if all(d is None or not kit.is_differentiable(x) for d, x in zip(dots, leaves)):
        return y, kit.zero_for(y)
    dense = (np.zeros(np.shape(x)) if d is None or not kit.is_differentiable(x)
             else kit.dense_tangent(d, x) for d, x in zip(dots, leaves))
    return y, kit.fit_output(np.block(_rebuild(arrays, dense)), y)


@rrule.register(np.block, object)
def block_rrule(arrays: Any) -> Any:
    y = np.block(arrays)
    leaves = _leaves(arrays)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent()))
    def block_pullback(y_bar: Any) -> tuple:
        # assemble the layout once more from blocks of element positions
        starts = np.cumsum([0] + [np.size(x) for x in leaves])
        positions = (np.arange(s, s + np.size(x)).reshape(np.shape(x))
                     for s, x in zip(starts, leaves))
        layout = np.block(_rebuild(arrays, positions))
        flat = np.zeros(starts[-1], np.result_type(np.asarray(y_bar), np.float64))
        flat[layout.reshape(-1)] = np.broadcast_to(y_bar, y.shape).reshape(-1)
        bars = (kit.array_projector(x)(flat[s:s + np.size(x)].reshape(np.shape(x)))
                for s, x in zip(starts, leaves))
        return NoTangent(), _nest_tangent(arrays, bars)

    return y, block_pullback
