"""Rules for NumPy's shape manipulation and array construction functions.

Covered (frule and rrule):

- reshaping: ``reshape``, ``ravel`` (orders C, F, A, K), ``squeeze``, ``expand_dims``,
  ``atleast_1d/2d/3d``;
- axes: ``transpose`` (= ``permute_dims``), ``matrix_transpose``, ``swapaxes``,
  ``moveaxis``, ``flip``, ``fliplr``, ``flipud``, ``roll``, ``rot90``;
- broadcasting: ``broadcast_to``, ``broadcast_arrays`` (tuple output);
- picking and repeating: ``tile``, ``repeat``, ``resize``, ``delete``, ``rollaxis``,
  ``lib.stride_tricks.sliding_window_view``
  (overlapping windows accumulate);
- padding: ``pad`` (modes constant, edge, wrap,
  reflect and symmetric (even and odd), linear_ramp, mean; the others (maximum,
  minimum, median, empty, callables) give ``not_implemented``);
- diagonals and triangles: ``diag`` (both directions), ``diagonal``, ``diagflat``,
  ``triu``, ``tril``;
- construction and conversion: ``array``, ``asarray``, ``asanyarray``,
  ``ascontiguousarray``, ``asfortranarray``, ``copy`` (of arrays and of nested
  lists/tuples of scalars or arrays: the cotangent of a list is a ``Tangent[list]``),
  ``astype`` (float64 <-> float32, real -> complex, complex -> real; to an integer
  dtype the output has no tangent).

Non-differentiable: ``indices``, ``unravel_index``, ``ravel_multi_index``,
``tril_indices``, ``triu_indices``, ``tril_indices_from``, ``triu_indices_from``,
``diag_indices``, ``diag_indices_from``.

Joining and splitting (``concatenate``, ``split``...) are in ``joining.py``.

All of these functions are linear in their array arguments. Their pushforward applies
the function to the tangent; their pullback is the adjoint. Functions that only pick
elements (``tile``, ``repeat``, ``diag``...) share one adjoint (``_linear.gather_rules``):
the function is applied to an array of element positions, and the cotangent is scattered
back with ``np.bincount`` (so repeated picks accumulate).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from chainrules import core
from chainrules.core import NoTangent, Tangent, Thunk, frule, not_implemented, rrule, unthunk
from chainrules.rules import _kit as kit
from chainrules.rules.array_api import _adjoints as adjoints
from chainrules.rules.numpy import _linear as linear

# ------------------------------------------------------------------------------ reshaping


def _reshape_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    shape = np.shape(x)
    order = linear.memory_order(x, linear.argument(args, kwargs, 1, "order", "C"))

    def reshape_pullback(y_bar: Any) -> np.ndarray:
        return np.reshape(y_bar, shape, order=order)

    return reshape_pullback


def _reshape_pushforward(x: Any, x_dot: np.ndarray, *args: Any, **kwargs: Any) -> Any:
    order = linear.memory_order(x, linear.argument(args, kwargs, 1, "order", "C"))
    kwargs = {k: v for k, v in kwargs.items() if k != "order"}
    return np.reshape(x_dot, *args[:1], **kwargs, order=order)


linear.linear_rules(np.reshape, _reshape_adjoint, _reshape_pushforward)
linear.linear_rules(np.ravel, linear.ravel_adjoint, linear.ravel_pushforward)
linear.linear_rules(np.squeeze, linear.reshape_back)
linear.linear_rules(np.expand_dims, linear.reshape_back)


def _atleast_rules(f: Any) -> None:
    """``atleast_nd(*arys)``: one array in, one out; several in, a tuple out."""

    def atleast_frule(dargs: tuple, *arys: Any) -> Any:
        y = f(*arys)
        ys = [y] if len(arys) == 1 else list(y)
        dots = []
        for t, x, yi in zip(dargs[1:], arys, ys):
            t = kit.nonzero(t)
            if t is None or not kit.is_differentiable(x) or not kit.is_differentiable(yi):
                dots.append(kit.zero_for(yi))
            else:
                dots.append(kit.fit_output(f(kit.dense_tangent(t, x)), yi))
        if len(arys) == 1:
            return y, dots[0]
        return y, Tangent[type(y)](*dots)

    def atleast_rrule(*arys: Any) -> Any:
        y = f(*arys)
        shapes = [np.shape(x) for x in arys]
        projectors = [kit.array_projector(x) for x in arys]

        def atleast_pullback(y_bar: Any) -> tuple:
            bars = [unthunk(y_bar)] if len(arys) == 1 else linear.item_cotangents(y_bar, len(arys))
            out = []
            for b, shape, project, x in zip(bars, shapes, projectors, arys):
                if kit.is_zero(b):
                    out.append(kit.zero_for(x))
                else:
                    out.append(project(linear.fresh(np.reshape(b, shape), b)))
            return (NoTangent(), *out)

        return y, atleast_pullback

    kit.define_rules(f, frule_fn=atleast_frule, rrule_fn=atleast_rrule)


for _f in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    _atleast_rules(_f)


# ------------------------------------------------------------------------------ axes


def _transpose_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    # NumPy's own (not the shared permute_dims_adjoint): the inverse permutation is
    # computed once here, not in each pullback call (measured 2x faster for small arrays)
    axes = linear.argument(args, kwargs, 0, "axes", None)
    ndim = np.ndim(x)
    inverse = None if axes is None else tuple(np.argsort([a % ndim for a in axes]))

    def transpose_pullback(y_bar: Any) -> np.ndarray:
        return np.transpose(y_bar, inverse)

    return transpose_pullback


linear.linear_rules(np.transpose, _transpose_adjoint)  # also np.permute_dims


def _swapaxes_adjoint(x: Any, axis1: Any, axis2: Any) -> Callable[[Any], Any]:
    def swapaxes_pullback(y_bar: Any) -> np.ndarray:
        return np.swapaxes(y_bar, axis1, axis2)

    return swapaxes_pullback


linear.linear_rules(np.swapaxes, _swapaxes_adjoint)
# public: numpy.linalg.matrix_transpose is the same function
matrix_transpose_frule, matrix_transpose_rrule = linear.generic_rules(np.matrix_transpose,
                                                               adjoints.matrix_transpose_adjoint)
linear.generic_rules(np.moveaxis, adjoints.moveaxis_adjoint)
linear.generic_rules(np.flip, adjoints.flip_adjoint)
linear.generic_rules(np.roll, adjoints.roll_adjoint)


def _fliplr_adjoint(x: Any) -> Callable[[Any], Any]:
    def fliplr_pullback(y_bar: Any) -> np.ndarray:
        return np.fliplr(y_bar)

    return fliplr_pullback


linear.linear_rules(np.fliplr, _fliplr_adjoint)


def _flipud_adjoint(x: Any) -> Callable[[Any], Any]:
    def flipud_pullback(y_bar: Any) -> np.ndarray:
        return np.flipud(y_bar)

    return flipud_pullback


linear.linear_rules(np.flipud, _flipud_adjoint)


def _rot90_adjoint(x: Any, k: int = 1, axes: Any = (0, 1)) -> Callable[[Any], Any]:
    def rot90_pullback(y_bar: Any) -> np.ndarray:
        return np.rot90(y_bar, -k, axes)

    return rot90_pullback


linear.linear_rules(np.rot90, _rot90_adjoint)


# ------------------------------------------------------------------------------ broadcasting


def _broadcast_to_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    shape = np.shape(x)

    def broadcast_to_pullback(y_bar: Any) -> np.ndarray:
        return linear.unbroadcast(y_bar, shape)

    return broadcast_to_pullback


linear.linear_rules(np.broadcast_to, _broadcast_to_adjoint)


@frule.register(np.broadcast_arrays)
def broadcast_arrays_frule(dargs: tuple, *args: Any, **kwargs: Any) -> Any:
    y = np.broadcast_arrays(*args, **kwargs)
    dots = []
    for t, x, yi in zip(dargs[1:], args, y):
        t = unthunk(t)
        if kit.is_zero(t) or not kit.is_differentiable(x) or not kit.is_differentiable(yi):
            dots.append(kit.zero_for(yi))
        else:
            dots.append(kit.fit_output(np.broadcast_to(kit.dense_tangent(t, x), yi.shape), yi))
    return y, Tangent[type(y)](*dots)


@rrule.register(np.broadcast_arrays)
def broadcast_arrays_rrule(*args: Any, **kwargs: Any) -> Any:
    y = np.broadcast_arrays(*args, **kwargs)
    projectors = [kit.array_projector(x) for x in args]
    shapes = [np.shape(x) for x in args]

    def broadcast_arrays_pullback(y_bar: Any) -> tuple:
        bars = linear.item_cotangents(y_bar, len(y))
        out = []
        for b, project, x, shape in zip(bars, projectors, args, shapes):
            if kit.is_zero(b) or not kit.is_differentiable(x):
                out.append(kit.zero_for(x))
            else:
                out.append(Thunk(lambda b=b, project=project, shape=shape: project(
                    linear.fresh(linear.unbroadcast(b, shape), b))))
        return (NoTangent(), *out)

    return y, broadcast_arrays_pullback


# ------------------------------------------------------------------------------ repeating


linear.generic_rules(np.tile, adjoints.tile_adjoint)
linear.generic_rules(np.repeat, adjoints.repeat_adjoint)
for _f in (np.resize, np.delete, np.rollaxis):
    linear.gather_rules(_f)
linear.gather_rules(sliding_window_view, drop=("subok", "writeable"))  # overlaps accumulate


# ------------------------------------------------------------------------------ padding

_PAD_LINEAR = ("constant", "edge", "wrap", "reflect", "symmetric", "linear_ramp", "mean")


def _pad_linear_kwargs(kwargs: dict) -> dict:
    """The keyword arguments of the linear part of ``pad`` (constants set to zero)."""
    out = dict(kwargs)
    if "constant_values" in out:
        out["constant_values"] = 0
    if "end_values" in out:
        out["end_values"] = 0
    return out


def _pad_mode(args: tuple, kwargs: dict) -> Any:
    return linear.argument(args, kwargs, 0, "mode", "constant")


@frule.register(np.pad)
def pad_frule(dargs: tuple, array: Any, pad_width: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.pad(array, pad_width, *args, **kwargs)
    x_dot = kit.nonzero(dargs[1])
    if x_dot is None or not kit.is_differentiable(array):
        return y, kit.zero_for(y)
    if _pad_mode(args, kwargs) not in _PAD_LINEAR:
        return y, not_implemented(f"pad mode {_pad_mode(args, kwargs)!r} is not linear")
    y_dot = np.pad(kit.dense_tangent(x_dot, array), pad_width, *args, **_pad_linear_kwargs(kwargs))
    return y, kit.fit_output(y_dot, y)


def _per_axis(value: Any, ndim: int, axis: int) -> Any:
    """The (before, after) entry of a per-axis ``pad`` argument for ``axis``."""
    return tuple(np.broadcast_to(np.asarray(value), (ndim, 2))[axis].tolist())


def _pad_widths(pad_width: Any, ndim: int) -> np.ndarray:
    """``pad_width`` in any of its forms as an ``(ndim, 2)`` array."""
    if isinstance(pad_width, dict):  # {axis: width or (before, after)}
        widths = np.zeros((ndim, 2), dtype=np.intp)
        for axis, w in pad_width.items():
            widths[axis] = np.broadcast_to(np.asarray(w), (2,))
        return widths
    return np.broadcast_to(np.asarray(pad_width), (ndim, 2))


@rrule.register(np.pad)
def pad_rrule(array: Any, pad_width: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.pad(array, pad_width, *args, **kwargs)
    rest = (NoTangent(),) * len(args)
    mode = _pad_mode(args, kwargs)
    shape = np.shape(array)
    ndim = len(shape)
    widths = _pad_widths(pad_width, ndim)
    project_x = kit.array_projector(array)
    linear_kwargs = _pad_linear_kwargs(kwargs)
    linear_kwargs.pop("mode", None)
    stat_length = linear_kwargs.pop("stat_length", None)

    zeros = (NoTangent(), kit.zero_for(array), NoTangent(), *rest)

    @kit.zero_guard(zeros)
    def pad_pullback(y_bar: Any) -> tuple:
        if not kit.is_differentiable(array):
            return zeros
        if mode not in _PAD_LINEAR:
            return (NoTangent(), not_implemented(f"pad mode {mode!r} is not linear"),
                    NoTangent(), *rest)
        # pad works axis by axis: y = P_{d-1}(... P_0(x)), each P_k a matrix along axis k.
        x_bar = np.asarray(y_bar)
        for k in reversed(range(ndim)):
            n = shape[k]
            axis_kwargs = dict(linear_kwargs)
            if stat_length is not None:
                axis_kwargs["stat_length"] = (_per_axis(stat_length, ndim, k), (1, 1))
            M = np.pad(np.eye(n), (tuple(widths[k].tolist()), (0, 0)), mode, **axis_kwargs)
            x_bar = np.moveaxis(np.moveaxis(x_bar, k, -1) @ M, -1, k)
        return (NoTangent(), project_x(linear.fresh(x_bar, y_bar)), NoTangent(), *rest)

    return y, pad_pullback


# ------------------------------------------------------------------------------ diagonals


for _f in (np.diag, np.diagonal, np.diagflat, np.triu, np.tril):
    linear.gather_rules(_f)


# ------------------------------------------------------------------------------ construction


for _f in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray,
           np.copy):
    linear.linear_rules(_f, linear.reshape_back)
linear.astype_rules(np.astype)
# np.float32(x), np.int64(x): casts too
for _t in {np.dtype(c).type for c in "efdgFDGbhilqBHILQ?"}:
    linear.scalar_type_rules(_t)


# (shape, ndim, size, zeros, ones, empty, *_like, eye, identity, tri, full and full_like
# are in reductions.py.)
for _f in (np.indices, np.unravel_index, np.ravel_multi_index, np.tril_indices,
           np.triu_indices, np.tril_indices_from, np.triu_indices_from, np.diag_indices,
           np.diag_indices_from):
    core.non_differentiable(_f)

del _f
