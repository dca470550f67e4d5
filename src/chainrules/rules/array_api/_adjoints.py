"""Adjoints of linear array functions, written once against ``xp`` and shared by the
array-API rules and the NumPy rules (``xp`` is then ``numpy``); not a rule module.

Each ``*_adjoint(xp, g, x, *args, **kw)`` maps the cotangent ``g`` of ``f(x, *args, **kw)``
to the cotangent of ``x`` (before projection). They read only the shape of ``x``, so a
caller may pass a stand-in of the same shape.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "DUAL_NORM",
    "along",
    "argument_values",
    "fit_axes",
    "fit_axis",
    "flip_adjoint",
    "matrix_transpose_adjoint",
    "moveaxis_adjoint",
    "permute_dims_adjoint",
    "repeat_adjoint",
    "roll_adjoint",
    "sum_to",
    "tile_adjoint",
]

#: The norm of the adjoint of a discrete Fourier transform with a given norm.
DUAL_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def argument_values(args: tuple, kw: dict, names: tuple, defaults: tuple) -> tuple:
    """The values of the parameters ``names`` (each a name, or a tuple of the names it
    has in different libraries) from positional ``args`` then keywords ``kw``."""
    if len(args) >= len(names):
        return tuple(args[:len(names)])
    out = []
    for i, (n, d) in enumerate(zip(names, defaults)):
        if i < len(args):
            out.append(args[i])
            continue
        keys = n if isinstance(n, tuple) else (n,)
        out.append(next((kw[k] for k in keys if k in kw), d))
    return tuple(out)


def sum_to(xp: Any, v: Any, shape: tuple) -> Any:
    """``v`` summed back to ``shape`` over the dimensions broadcasting added: the leading
    ones it has beyond ``shape`` and those where ``shape`` has 1."""
    lead = v.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and v.shape[lead + i] != 1)
    if not axes:
        return v
    return xp.reshape(xp.sum(v, axis=axes, keepdims=True), tuple(shape))


# ------------------------------------------------------------------------ axes and order


def permute_dims_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    """``permute_dims(x, axes)`` (NumPy: ``transpose``, ``axes=None`` reverses them)."""
    (axes,) = argument_values(args, kw, ("axes",), (None,))
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    inverse = [0] * len(axes)
    for i, a in enumerate(axes):
        inverse[a % len(axes)] = i
    return xp.permute_dims(g, tuple(inverse))


def matrix_transpose_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    """``matrix_transpose(x)``: its own adjoint."""
    return xp.matrix_transpose(g)


def flip_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    """``flip(x, axis)``: its own adjoint."""
    (axis,) = argument_values(args, kw, ("axis",), (None,))
    return xp.flip(g, axis=axis)


def roll_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    """``roll(x, shift, axis)``: rolled back by ``-shift``."""
    shift, axis = argument_values(args, kw, ("shift", "axis"), (0, None))
    back = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return xp.roll(g, back, axis=axis)


def moveaxis_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    """``moveaxis(x, source, destination)``: moved back."""
    source, destination = argument_values(args, kw, ("source", "destination"), (None, None))
    return xp.moveaxis(g, destination, source)


# ------------------------------------------------------------------------------ copies


def tile_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    """``tile(x, repetitions)`` (NumPy: ``reps``, an int or a sequence): the copies
    summed."""
    (reps,) = argument_values(args, kw, (("repetitions", "reps"),), ((),))
    reps = tuple(int(r) for r in reps) if hasattr(reps, "__len__") else (int(reps),)
    d = max(x.ndim, len(reps))
    shape = (1,) * (d - x.ndim) + tuple(x.shape)
    reps = (1,) * (d - len(reps)) + reps
    interleaved = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    summed = xp.sum(xp.reshape(g, interleaved), axis=tuple(range(0, 2 * d, 2)))
    return xp.reshape(summed, tuple(x.shape))


def repeat_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    """``repeat(x, repeats, axis)``: the copies of each element summed (``axis=None``:
    over the flattened ``x``)."""
    repeats, axis = argument_values(args, kw, ("repeats", "axis"), (1, None))
    shape = tuple(x.shape)
    if axis is None:
        shape = (math.prod(x.shape),) if x.ndim else (1,)
        axis = 0
    axis %= len(shape)
    n = shape[axis]
    if isinstance(repeats, int):
        folded = (*shape[:axis], n, repeats, *shape[axis + 1:])
        return xp.reshape(xp.sum(xp.reshape(g, folded), axis=axis + 1), tuple(x.shape))
    # segment sums: differences of the running sum at the segments' ends
    csum = xp.cumulative_sum(g, axis=axis, include_initial=True)
    ends = xp.cumulative_sum(xp.broadcast_to(xp.asarray(repeats), (n,)), include_initial=True)
    segments = xp.take(csum, ends[1:], axis=axis) - xp.take(csum, ends[:-1], axis=axis)
    return xp.reshape(segments, tuple(x.shape))


# --------------------------------------------------------------------------------- fft


def fit_axis(xp: Any, v: Any, axis: int, length: int) -> Any:
    """``v`` cropped or zero-padded to ``length`` along ``axis`` (negative counts from
    the end)."""
    axis = axis % v.ndim
    have = v.shape[axis]
    if have > length:
        return v[(slice(None),) * axis + (slice(0, length), Ellipsis)]
    if have < length:
        shape = list(v.shape)
        shape[axis] = length - have
        return xp.concat([v, xp.zeros(tuple(shape), dtype=v.dtype)], axis=axis)
    return v


def fit_axes(xp: Any, v: Any, axes: list, shape: tuple) -> Any:
    """``v`` cropped or zero-padded to ``shape`` along each of ``axes``."""
    for a in axes:
        v = fit_axis(xp, v, a, shape[a])
    return v


def along(xp: Any, w: Any, axis: int, ndim: int) -> Any:
    """A 1-D weight ``w`` shaped to broadcast along ``axis`` of an ``ndim`` array."""
    shape = [1] * ndim
    shape[axis] = w.shape[0]
    return xp.reshape(w, tuple(shape))
