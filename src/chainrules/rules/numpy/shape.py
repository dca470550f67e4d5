"""Rules for NumPy's shape manipulation and array construction functions.

Covered (frule and rrule):

- reshaping: ``reshape``, ``ravel`` (orders C, F, A, K), ``squeeze``, ``expand_dims``,
  ``atleast_1d/2d/3d``;
- axes: ``transpose`` (= ``permute_dims``), ``matrix_transpose``, ``swapaxes``,
  ``moveaxis``, ``flip``, ``fliplr``, ``flipud``, ``roll``, ``rot90``;
- broadcasting: ``broadcast_to``, ``broadcast_arrays`` (tuple output);
- joining: ``concatenate`` (= ``concat``), ``stack``, ``hstack``, ``vstack``, ``dstack``,
  ``column_stack``, ``append``;
- splitting (list / tuple outputs): ``split``, ``array_split``, ``hsplit``, ``vsplit``,
  ``dsplit``, ``unstack``;
- picking and repeating: ``tile``, ``repeat``, ``resize``, ``delete``, ``insert`` (w.r.t.
  the array and the values), ``rollaxis``, ``lib.stride_tricks.sliding_window_view``
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

All of these functions are linear in their array arguments. Their pushforward applies
the function to the tangent; their pullback is the adjoint. Functions that only pick
elements (``tile``, ``repeat``, ``diag``...) share one adjoint: the function is applied to
an array of element positions, and the cotangent is scattered back with ``np.bincount``
(so repeated picks accumulate).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from chainrules.core import (
    NoTangent,
    OutArgumentError,
    ProjectTo,
    Tangent,
    Thunk,
    ZeroTangent,
    array_namespace,
    frule,
    is_foreign_array,
    non_differentiable,
    not_implemented,
    rrule,
    unthunk,
)

# ------------------------------------------------------------------------------ helpers
# Shared by indexing.py and methods.py.

_ZEROS = (ZeroTangent, NoTangent)


def _is_zero(t: Any) -> bool:
    return isinstance(t, _ZEROS) or t is None


def _refuse_out(f: Any, kwargs: dict, args: tuple = (), at: int | None = None) -> None:
    """Raise for an ``out=`` argument (keyword, or positional at ``args[at]``)."""
    if kwargs.get("out") is not None or (at is not None and len(args) > at
                                         and args[at] is not None):
        raise OutArgumentError(f)


def _is_diff(x: Any) -> bool:
    """Whether ``x`` can carry a tangent: float/complex arrays and scalars, and (nested)
    lists and tuples holding one (an empty float array too). Integers, bools and index
    arrays cannot."""
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fc"
    if isinstance(x, (float, complex, np.floating, np.complexfloating)):
        return True
    if type(x) in (list, tuple):
        return any(_is_diff(i) for i in x)
    if is_foreign_array(x):
        # never a silent zero for another library's array: the rule runs NumPy on it,
        # which a traced value refuses loudly
        return array_namespace(x).isdtype(x.dtype, ("real floating", "complex floating"))
    return False


def _zero_for(x: Any) -> Any:
    """The cotangent of ``x`` for a zero ``y_bar``."""
    return ZeroTangent() if _is_diff(x) else NoTangent()


def _zero_given_output(x: Any, y: Any) -> Any:
    """The cotangent of ``x`` when the output ``y`` carries none: ``NoTangent()`` for an
    integer or bool output (casting to an integer is not differentiable), else (an
    empty output) a zero."""
    y_kind = np.asarray(y).dtype.kind if isinstance(y, (np.ndarray, np.generic)) else "f"
    return _zero_for(x) if y_kind in "fc" else NoTangent()


def _no_tangent(dx: Any) -> Any:
    return NoTangent()


def _projector(x: Any) -> Callable[[Any], Any]:
    """Map an array cotangent shaped like ``np.asarray(x)`` into the tangent space of ``x``.

    Arrays and scalars use ``ProjectTo``; (nested) lists and tuples give a ``Tangent``
    of the items; non-differentiable ``x`` gives ``NoTangent()``.
    """
    if not _is_diff(x):
        return _no_tangent
    if isinstance(x, np.ndarray):
        return _lazy_array_projector(x.shape, x.dtype)
    if type(x) in (list, tuple):
        items = [_projector(i) for i in x]
        T = type(x)

        def project_sequence(dx: Any) -> Any:
            dx = unthunk(dx)
            if _is_zero(dx):
                return ZeroTangent()
            dx = np.asarray(dx)
            return Tangent[T](*(p(dx[i]) for i, p in enumerate(items)))

        return project_sequence
    return ProjectTo(x)


def _lazy_array_projector(shape: tuple, dtype: np.dtype) -> Callable[[Any], Any]:
    """``ProjectTo`` of an array of this shape and dtype, built on first use.

    Building a ``ProjectTo`` costs tens of microseconds (it formats a description with
    ``str(dtype)``), more than most of these rules; a pullback that is never called, or
    whose cotangent is added in place, never pays for it.
    """
    built: list = []

    def project_array(dx: Any) -> Any:
        if not built:
            built.append(ProjectTo(np.broadcast_to(np.zeros((), dtype), shape)))
        return built[0](dx)

    return project_array


def _fresh(x_bar: Any, y_bar: Any) -> Any:
    """``x_bar``, copied if it shares memory with ``y_bar`` (an AD may accumulate into a
    returned cotangent in place, which must never write into ``y_bar``)."""
    if isinstance(x_bar, np.ndarray) and isinstance(y_bar, np.ndarray) and np.may_share_memory(
            x_bar, y_bar):
        return x_bar.copy()
    return x_bar


def _dense(x_dot: Any, x: Any) -> np.ndarray:
    """A tangent of ``x`` as an array shaped like ``np.asarray(x)``: zeros for
    ``ZeroTangent``/``NoTangent``, the items stacked for a ``Tangent`` of a list."""
    x_dot = unthunk(x_dot)
    if _is_zero(x_dot):
        xa = np.asarray(x)
        dtype = xa.dtype if xa.dtype.kind in "fc" else np.dtype(np.float64)
        return np.zeros(xa.shape, dtype)
    if type(x) in (list, tuple):
        items = x_dot.backing if isinstance(x_dot, Tangent) else x_dot
        return np.asarray([_dense(t, xi) for t, xi in zip(items, x)])
    return np.asarray(x_dot)


def _fit(y_dot: Any, y: Any) -> Any:
    """Give a pushforward the output's dtype (float32 stays float32)."""
    if isinstance(y, (np.ndarray, np.generic)) and y.dtype.kind in "fc":
        y_dot = np.asarray(y_dot)
        if y_dot.dtype != y.dtype and not (y_dot.dtype.kind == "c" and y.dtype.kind == "f"):
            y_dot = y_dot.astype(y.dtype)
        if isinstance(y, np.generic):
            return y_dot[()]
    return y_dot


def _out_zero(y: Any) -> Any:
    """The pushforward of zero tangents: ``ZeroTangent()``, or ``NoTangent()`` for an
    output that cannot carry a tangent (integer arrays)."""
    return ZeroTangent() if _is_diff(y) else NoTangent()


def _seq_bars(y_bar: Any, n: int) -> list:
    """The items of the cotangent of a tuple or list output."""
    y_bar = unthunk(y_bar)
    if _is_zero(y_bar):
        return [ZeroTangent()] * n
    items = y_bar.backing if isinstance(y_bar, Tangent) else y_bar
    return [unthunk(b) for b in items]


def _scatter(y_bar: Any, src: np.ndarray, size: int) -> np.ndarray:
    """Sum ``y_bar`` into a flat vector of ``size`` at positions ``src`` (-1: nowhere)."""
    src = np.asarray(src)
    w = np.broadcast_to(np.asarray(y_bar), src.shape).ravel()
    src = src.ravel()
    if src.size and src.min() < 0:
        keep = src >= 0
        src, w = src[keep], w[keep]
    if w.dtype.kind == "c":
        return (np.bincount(src, w.real, minlength=size)
                + 1j * np.bincount(src, w.imag, minlength=size))
    return np.bincount(src, w.astype(np.float64, copy=False), minlength=size)


def _unbroadcast(dx: Any, shape: tuple) -> np.ndarray:
    """Sum ``dx`` over the dimensions that broadcasting to its shape added to ``shape``."""
    dx = np.asarray(dx)
    lead = dx.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and dx.shape[lead + i] != 1)
    return (dx.sum(axis=axes, keepdims=True) if axes else dx).reshape(shape)


def _positions(shape: tuple) -> np.ndarray:
    """Element positions 1..n in C order (0 is left for 'no element' in a gather)."""
    return np.arange(1, math.prod(shape) + 1, dtype=np.intp).reshape(shape)


def gather_adjoint(x: Any, gather: Callable[[np.ndarray], Any]) -> Callable[[Any], Any]:
    """The adjoint of a function that only picks (and repeats, or zero-fills) elements.

    ``gather(positions)`` applies the function to an integer array shaped like ``x``;
    the returned pullback core scatters ``y_bar`` back with accumulation.
    """
    shape = np.shape(x)

    def gather_pullback(y_bar: Any) -> np.ndarray:
        src = np.asarray(gather(_positions(shape))) - 1
        return _scatter(y_bar, src, math.prod(shape)).reshape(shape)

    return gather_pullback


def linear_rules(f: Any, adjoint: Callable[..., Callable[[Any], Any]],
                 pushforward: Callable[..., Any] | None = None,
                 out_at: int | None = None) -> None:
    """Register the frule and rrule of ``f``, linear in its first argument.

    The other positional arguments (shapes, axes, indices) get ``NoTangent()``.
    ``adjoint(x, *args, **kwargs)`` runs in the rrule and returns the pullback core
    ``y_bar -> x_bar`` (an array shaped like ``np.asarray(x)``), closing over what it
    needs of ``x`` (shape, layout), not over ``x`` itself. The pushforward applies
    ``f`` to the tangent, or calls ``pushforward(x, x_dot, *args, **kwargs)`` (for
    functions whose result depends on the memory layout of ``x``, which the tangent
    does not share). ``out_at`` is the position of a positional ``out`` argument in
    ``args`` (refused, like ``out=``).
    """
    name = getattr(f, "__name__", "f")
    push = f if pushforward is None else None

    def linear_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        _refuse_out(f, kwargs, args, out_at)
        y = f(x, *args, **kwargs)
        x_dot = unthunk(dargs[1])
        if _is_zero(x_dot) or not _is_diff(x) or not _is_diff(y):
            return y, _out_zero(y)
        if push is None:
            return y, _fit(pushforward(x, _dense(x_dot, x), *args, **kwargs), y)
        return y, _fit(push(_dense(x_dot, x), *args, **kwargs), y)

    def linear_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        _refuse_out(f, kwargs, args, out_at)
        y = f(x, *args, **kwargs)
        rest = (NoTangent(),) * len(args)
        if not _is_diff(x) or not _is_diff(y):
            x_zero = _zero_given_output(x, y)

            def no_tangent_pullback(y_bar: Any) -> tuple:
                return (NoTangent(), x_zero, *rest)

            no_tangent_pullback.__qualname__ = f"{name}_pullback"
            return y, no_tangent_pullback
        core = adjoint(x, *args, **kwargs)
        project_x = _projector(x)

        def linear_pullback(y_bar: Any) -> tuple:
            y_bar = unthunk(y_bar)
            if _is_zero(y_bar):
                return (NoTangent(), ZeroTangent(), *rest)
            return (NoTangent(), project_x(_fresh(core(y_bar), y_bar)), *rest)

        linear_pullback.__qualname__ = f"{name}_pullback"
        return y, linear_pullback

    linear_frule.__qualname__ = f"{name}_frule"
    linear_rrule.__qualname__ = f"{name}_rrule"
    frule.register(f)(linear_frule)
    rrule.register(f)(linear_rrule)


def _reshape_back(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """Adjoint of any function that only changes the shape (C order)."""
    shape = np.shape(x)

    def reshape_back(y_bar: Any) -> np.ndarray:
        return np.reshape(y_bar, shape)

    return reshape_back


def _arg(args: tuple, kwargs: dict, i: int, name: str, default: Any) -> Any:
    """Argument ``name`` given at position ``i`` (after the array) or by keyword."""
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


# ------------------------------------------------------------------------------ reshaping


def _memory_order(x: Any, order: str | None) -> str:
    if order in (None, "C", "c"):
        return "C"
    if order in ("F", "f"):
        return "F"
    xa = np.asarray(x)
    if order in ("A", "a"):
        return "F" if xa.flags.f_contiguous and not xa.flags.c_contiguous else "C"
    return "K"


def _reshape_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    shape = np.shape(x)
    order = _memory_order(x, _arg(args, kwargs, 1, "order", "C"))

    def reshape_pullback(y_bar: Any) -> np.ndarray:
        return np.reshape(y_bar, shape, order=order)

    return reshape_pullback


def _reshape_pushforward(x: Any, x_dot: np.ndarray, *args: Any, **kwargs: Any) -> Any:
    order = _memory_order(x, _arg(args, kwargs, 1, "order", "C"))
    kwargs = {k: v for k, v in kwargs.items() if k != "order"}
    return np.reshape(x_dot, *args[:1], **kwargs, order=order)


linear_rules(np.reshape, _reshape_adjoint, _reshape_pushforward)


def _ravel_k_positions(x: Any) -> np.ndarray:
    """Positions (1-based, C order) of the elements of ``x`` in ``np.ravel(x, 'K')`` order."""
    xa = np.asarray(x)
    pos = _positions(xa.shape)
    if any(st == 0 and n > 1 for st, n in zip(xa.strides, xa.shape)):
        # Broadcast axes: nditer follows ravel's order there (but not for negative strides).
        it = np.nditer(xa, flags=["multi_index", "refs_ok", "zerosize_ok"], order="K")
        return np.array([pos[it.multi_index] for _ in it], dtype=np.intp)
    # Otherwise ravel(order="K") walks the axes by decreasing |stride|, each in logical
    # order, and empty_like keeps that axis order.
    layout = np.empty_like(xa, dtype=np.intp)
    layout[...] = pos
    return np.ravel(layout, order="K")


def _ravel_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    shape = np.shape(x)
    order = _memory_order(x, _arg(args, kwargs, 0, "order", "C"))
    if order == "K":
        src = _ravel_k_positions(x) - 1

        def ravel_k_pullback(y_bar: Any) -> np.ndarray:
            return _scatter(y_bar, src, math.prod(shape)).reshape(shape)

        return ravel_k_pullback

    def ravel_pullback(y_bar: Any) -> np.ndarray:
        return np.reshape(y_bar, shape, order=order)

    return ravel_pullback


def _ravel_pushforward(x: Any, x_dot: np.ndarray, *args: Any, **kwargs: Any) -> Any:
    order = _memory_order(x, _arg(args, kwargs, 0, "order", "C"))
    if order == "K":
        return x_dot.ravel()[_ravel_k_positions(x) - 1]
    return np.ravel(x_dot, order=order)


linear_rules(np.ravel, _ravel_adjoint, _ravel_pushforward)
linear_rules(np.squeeze, _reshape_back)
linear_rules(np.expand_dims, _reshape_back)


def _atleast_rules(f: Any) -> None:
    """``atleast_nd(*arys)``: one array in, one out; several in, a tuple out."""
    name = f.__name__

    def atleast_frule(dargs: tuple, *arys: Any) -> Any:
        y = f(*arys)
        ys = [y] if len(arys) == 1 else list(y)
        dots = [_out_zero(yi) if _is_zero(unthunk(t)) or not _is_diff(x) or not _is_diff(yi)
                else _fit(f(_dense(t, x)), yi) for t, x, yi in zip(dargs[1:], arys, ys)]
        if len(arys) == 1:
            return y, dots[0]
        return y, Tangent[type(y)](*dots)

    def atleast_rrule(*arys: Any) -> Any:
        y = f(*arys)
        shapes = [np.shape(x) for x in arys]
        projectors = [_projector(x) for x in arys]

        def atleast_pullback(y_bar: Any) -> tuple:
            bars = [unthunk(y_bar)] if len(arys) == 1 else _seq_bars(y_bar, len(arys))
            out = []
            for b, shape, project, x in zip(bars, shapes, projectors, arys):
                if _is_zero(b):
                    out.append(_zero_for(x))
                else:
                    out.append(project(_fresh(np.reshape(b, shape), b)))
            return (NoTangent(), *out)

        atleast_pullback.__qualname__ = f"{name}_pullback"
        return y, atleast_pullback

    atleast_frule.__qualname__ = f"{name}_frule"
    atleast_rrule.__qualname__ = f"{name}_rrule"
    frule.register(f)(atleast_frule)
    rrule.register(f)(atleast_rrule)


for _f in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    _atleast_rules(_f)


# ------------------------------------------------------------------------------ axes


def _transpose_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    axes = _arg(args, kwargs, 0, "axes", None)
    ndim = np.ndim(x)
    inverse = None if axes is None else tuple(np.argsort([a % ndim for a in axes]))

    def transpose_pullback(y_bar: Any) -> np.ndarray:
        return np.transpose(y_bar, inverse)

    return transpose_pullback


linear_rules(np.transpose, _transpose_adjoint)  # also np.permute_dims


def _matrix_transpose_adjoint(x: Any) -> Callable[[Any], Any]:
    def matrix_transpose_pullback(y_bar: Any) -> np.ndarray:
        return np.swapaxes(y_bar, -1, -2)

    return matrix_transpose_pullback


linear_rules(np.matrix_transpose, _matrix_transpose_adjoint)


def _swapaxes_adjoint(x: Any, axis1: Any, axis2: Any) -> Callable[[Any], Any]:
    def swapaxes_pullback(y_bar: Any) -> np.ndarray:
        return np.swapaxes(y_bar, axis1, axis2)

    return swapaxes_pullback


linear_rules(np.swapaxes, _swapaxes_adjoint)


def _moveaxis_adjoint(x: Any, source: Any, destination: Any) -> Callable[[Any], Any]:
    def moveaxis_pullback(y_bar: Any) -> np.ndarray:
        return np.moveaxis(y_bar, destination, source)

    return moveaxis_pullback


linear_rules(np.moveaxis, _moveaxis_adjoint)


def _flip_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    axis = _arg(args, kwargs, 0, "axis", None)

    def flip_pullback(y_bar: Any) -> np.ndarray:
        return np.flip(y_bar, axis)

    return flip_pullback


linear_rules(np.flip, _flip_adjoint)


def _fliplr_adjoint(x: Any) -> Callable[[Any], Any]:
    def fliplr_pullback(y_bar: Any) -> np.ndarray:
        return np.fliplr(y_bar)

    return fliplr_pullback


linear_rules(np.fliplr, _fliplr_adjoint)


def _flipud_adjoint(x: Any) -> Callable[[Any], Any]:
    def flipud_pullback(y_bar: Any) -> np.ndarray:
        return np.flipud(y_bar)

    return flipud_pullback


linear_rules(np.flipud, _flipud_adjoint)


def _roll_adjoint(x: Any, shift: Any, axis: Any = None) -> Callable[[Any], Any]:
    back = np.negative(shift)

    def roll_pullback(y_bar: Any) -> np.ndarray:
        return np.roll(y_bar, back, axis)

    return roll_pullback


linear_rules(np.roll, _roll_adjoint)


def _rot90_adjoint(x: Any, k: int = 1, axes: Any = (0, 1)) -> Callable[[Any], Any]:
    def rot90_pullback(y_bar: Any) -> np.ndarray:
        return np.rot90(y_bar, -k, axes)

    return rot90_pullback


linear_rules(np.rot90, _rot90_adjoint)


# ------------------------------------------------------------------------------ broadcasting


def _broadcast_to_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    shape = np.shape(x)

    def broadcast_to_pullback(y_bar: Any) -> np.ndarray:
        return _unbroadcast(y_bar, shape)

    return broadcast_to_pullback


linear_rules(np.broadcast_to, _broadcast_to_adjoint)


@frule.register(np.broadcast_arrays)
def broadcast_arrays_frule(dargs: tuple, *args: Any, **kwargs: Any) -> Any:
    y = np.broadcast_arrays(*args, **kwargs)
    dots = []
    for t, x, yi in zip(dargs[1:], args, y):
        t = unthunk(t)
        if _is_zero(t) or not _is_diff(x) or not _is_diff(yi):
            dots.append(_out_zero(yi))
        else:
            dots.append(_fit(np.broadcast_to(_dense(t, x), yi.shape), yi))
    return y, Tangent[type(y)](*dots)


@rrule.register(np.broadcast_arrays)
def broadcast_arrays_rrule(*args: Any, **kwargs: Any) -> Any:
    y = np.broadcast_arrays(*args, **kwargs)
    projectors = [_projector(x) for x in args]
    shapes = [np.shape(x) for x in args]

    def broadcast_arrays_pullback(y_bar: Any) -> tuple:
        bars = _seq_bars(y_bar, len(y))
        out = []
        for b, project, x, shape in zip(bars, projectors, args, shapes):
            if _is_zero(b) or not _is_diff(x):
                out.append(_zero_for(x))
            else:
                out.append(Thunk(lambda b=b, project=project, shape=shape: project(
                    _fresh(_unbroadcast(b, shape), b))))
        return (NoTangent(), *out)

    return y, broadcast_arrays_pullback


# ------------------------------------------------------------------------------ joining


def _seq_dense(dxs: Any, xs: Any) -> list:
    """Per-item dense tangents of a sequence argument (zeros where missing)."""
    dxs = unthunk(dxs)
    if _is_zero(dxs):
        return [_dense(ZeroTangent(), x) for x in xs]
    items = dxs.backing if isinstance(dxs, Tangent) else dxs
    return [_dense(t, x) for t, x in zip(items, xs)]


def _seq_pullback_result(xs: Any, pieces: Callable[[], list]) -> Any:
    """The cotangent of a sequence argument: a ``Tangent`` of one thunk per item."""
    T = type(xs)
    projectors = [_projector(x) for x in xs]
    cache: list = []

    def piece(i: int) -> Any:
        if not cache:
            cache.append(pieces())
        return projectors[i](cache[0][i])

    items = [Thunk(lambda i=i: piece(i)) if _is_diff(x) else NoTangent()
             for i, x in enumerate(xs)]
    return Tangent[T](*items)


def _direct_pieces(f: Any, shapes: list, args: tuple,
                   kwargs: dict) -> Callable[[np.ndarray], list] | None:
    """Cut ``y_bar`` of ``concatenate``/``stack`` into the items' cotangents by slicing
    (copies: an item's cotangent must not be a view of ``y_bar``); None for the other
    joining functions, which scatter element positions instead."""
    axis = _arg(args, kwargs, 0, "axis", 0)
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
    name = f.__name__
    out_at = 1 if f in (np.concatenate, np.stack) else None  # f(arrays, axis, out)

    def joining_frule(dargs: tuple, xs: Any, *args: Any, **kwargs: Any) -> Any:
        _refuse_out(f, kwargs, args, out_at)
        y = f(xs, *args, **kwargs)
        if not _is_diff(xs) or not _is_diff(y) or _is_zero(unthunk(dargs[1])):
            return y, _out_zero(y)
        dense = _seq_dense(dargs[1], xs) if type(xs) in (list, tuple) else _dense(dargs[1], xs)
        return y, _fit(f(dense, *args, **kwargs), y)

    def joining_rrule(xs: Any, *args: Any, **kwargs: Any) -> Any:
        _refuse_out(f, kwargs, args, out_at)
        y = f(xs, *args, **kwargs)
        rest = (NoTangent(),) * len(args)
        if not _is_diff(xs) or not _is_diff(y):
            def no_tangent_pullback(y_bar: Any) -> tuple:
                return (NoTangent(), NoTangent(), *rest)

            return y, no_tangent_pullback
        index_kwargs = {k: v for k, v in kwargs.items() if k not in ("dtype", "casting")}
        if type(xs) not in (list, tuple):  # an array: joined along its first axis
            core = gather_adjoint(xs, lambda pos: f(pos, *args, **index_kwargs))
            project_x = _projector(xs)

            def joining_array_pullback(y_bar: Any) -> tuple:
                y_bar = unthunk(y_bar)
                if _is_zero(y_bar):
                    return (NoTangent(), ZeroTangent(), *rest)
                return (NoTangent(), project_x(core(y_bar)), *rest)

            return y, joining_array_pullback
        shapes = [np.shape(x) for x in xs]
        sizes = [math.prod(s) for s in shapes]
        offsets = np.cumsum([0, *sizes])
        direct = _direct_pieces(f, shapes, args, kwargs)

        def joining_pullback(y_bar: Any) -> tuple:
            y_bar = unthunk(y_bar)
            if _is_zero(y_bar):
                return (NoTangent(), ZeroTangent(), *rest)

            def pieces() -> list:
                if direct is not None:
                    return direct(np.asarray(y_bar))
                positions = [np.arange(o + 1, o + n + 1, dtype=np.intp).reshape(s)
                             for o, n, s in zip(offsets, sizes, shapes)]
                src = np.asarray(f(type(xs)(positions), *args, **index_kwargs)) - 1
                flat = _scatter(y_bar, src, int(offsets[-1]))
                return [flat[o:o + n].reshape(s) for o, n, s in zip(offsets, sizes, shapes)]

            return (NoTangent(), _seq_pullback_result(xs, pieces), *rest)

        joining_pullback.__qualname__ = f"{name}_pullback"
        return y, joining_pullback

    joining_frule.__qualname__ = f"{name}_frule"
    joining_rrule.__qualname__ = f"{name}_rrule"
    frule.register(f)(joining_frule)
    rrule.register(f)(joining_rrule)


for _f in (np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack):
    _joining_rules(_f)


@frule.register(np.append)
def append_frule(dargs: tuple, arr: Any, values: Any, axis: Any = None) -> Any:
    y = np.append(arr, values, axis)
    if not _is_diff(y) or (_is_zero(unthunk(dargs[1])) and _is_zero(unthunk(dargs[2]))):
        return y, _out_zero(y)
    return y, _fit(np.append(_dense(dargs[1], arr), _dense(dargs[2], values), axis), y)


@rrule.register(np.append)
def append_rrule(arr: Any, values: Any, axis: Any = None) -> Any:
    y = np.append(arr, values, axis)
    given_axis = (NoTangent(),) if axis is not None else ()
    shapes = (np.shape(arr), np.shape(values))
    n_arr = math.prod(shapes[0])
    project_arr, project_values = _projector(arr), _projector(values)

    def append_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if _is_zero(y_bar):
            return (NoTangent(), _zero_for(arr), _zero_for(values), *given_axis)
        cache: list = []

        def flat() -> np.ndarray:
            if not cache:
                pos = _positions((n_arr + math.prod(shapes[1]),))
                src = np.append(pos[:n_arr].reshape(shapes[0]), pos[n_arr:].reshape(shapes[1]),
                                axis) - 1
                cache.append(_scatter(y_bar, src, pos.size))
            return cache[0]

        arr_bar = Thunk(lambda: project_arr(flat()[:n_arr].reshape(shapes[0])))
        values_bar = Thunk(lambda: project_values(flat()[n_arr:].reshape(shapes[1])))
        return (NoTangent(), arr_bar if _is_diff(arr) else NoTangent(),
                values_bar if _is_diff(values) else NoTangent(), *given_axis)

    return y, append_pullback


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
    name = f.__name__
    unstack = f is getattr(np, "unstack", None)

    def splitting_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(x, *args, **kwargs)
        x_dot = unthunk(dargs[1])
        if _is_zero(x_dot) or not _is_diff(x):
            return y, Tangent[type(y)](*(_out_zero(yi) for yi in y))
        return y, Tangent[type(y)](*(_fit(d, yi) for d, yi in zip(
            f(_dense(x_dot, x), *args, **kwargs), y)))

    def splitting_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(x, *args, **kwargs)
        rest = (NoTangent(),) * len(args)
        dtypes = [yi.dtype if yi.dtype.kind in "fc" else np.dtype(np.float64) for yi in y]
        shapes = [yi.shape for yi in y]
        if unstack:
            axis = kwargs.get("axis", 0)
        else:
            axis = _split_axis(f, x, _arg(args, kwargs, 1, "axis", 0))
        project_x = _projector(x)

        def splitting_pullback(y_bar: Any) -> tuple:
            bars = _seq_bars(y_bar, len(shapes))
            if all(_is_zero(b) for b in bars) or not _is_diff(x):
                return (NoTangent(), _zero_for(x), *rest)
            pieces = [np.zeros(s, dt) if _is_zero(b) else np.asarray(b)
                      for b, s, dt in zip(bars, shapes, dtypes)]
            joined = np.stack(pieces, axis) if unstack else np.concatenate(pieces, axis)
            return (NoTangent(), project_x(joined), *rest)

        splitting_pullback.__qualname__ = f"{name}_pullback"
        return y, splitting_pullback

    splitting_frule.__qualname__ = f"{name}_frule"
    splitting_rrule.__qualname__ = f"{name}_rrule"
    frule.register(f)(splitting_frule)
    rrule.register(f)(splitting_rrule)


for _f in (np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, np.unstack):
    _splitting_rules(_f)


# ------------------------------------------------------------------------------ repeating


def _tile_adjoint(x: Any, reps: Any) -> Callable[[Any], Any]:
    return gather_adjoint(x, lambda pos: np.tile(pos, reps))


linear_rules(np.tile, _tile_adjoint)


def _repeat_adjoint(x: Any, repeats: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    return gather_adjoint(x, lambda pos: np.repeat(pos, repeats, *args, **kwargs))


linear_rules(np.repeat, _repeat_adjoint)


def _resize_adjoint(x: Any, new_shape: Any) -> Callable[[Any], Any]:
    return gather_adjoint(x, lambda pos: np.resize(pos, new_shape))


linear_rules(np.resize, _resize_adjoint)


def _delete_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    return gather_adjoint(x, lambda pos: np.delete(pos, *args, **kwargs))


linear_rules(np.delete, _delete_adjoint)


def _rollaxis_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    return gather_adjoint(x, lambda pos: np.rollaxis(pos, *args, **kwargs))


linear_rules(np.rollaxis, _rollaxis_adjoint)


def _sliding_window_view_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    kwargs = {k: v for k, v in kwargs.items() if k not in ("subok", "writeable")}
    return gather_adjoint(x, lambda pos: sliding_window_view(pos, *args, **kwargs))


linear_rules(sliding_window_view, _sliding_window_view_adjoint)  # overlaps accumulate


@frule.register(np.insert)
def insert_frule(dargs: tuple, arr: Any, obj: Any, values: Any, *args: Any,
                 **kwargs: Any) -> Any:
    y = np.insert(arr, obj, values, *args, **kwargs)
    arr_dot, values_dot = unthunk(dargs[1]), unthunk(dargs[3])
    if not _is_diff(y) or (_is_zero(arr_dot) and _is_zero(values_dot)):
        return y, _out_zero(y)
    y_dot = np.insert(_dense(arr_dot, arr).astype(y.dtype), obj, _dense(values_dot, values),
                      *args, **kwargs)
    return y, _fit(y_dot, y)


@rrule.register(np.insert)
def insert_rrule(arr: Any, obj: Any, values: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.insert(arr, obj, values, *args, **kwargs)
    rest = (NoTangent(),) * len(args)
    shapes = (np.shape(arr), np.shape(values))
    n_arr = math.prod(shapes[0])
    n_all = n_arr + math.prod(shapes[1])
    project_arr, project_values = _projector(arr), _projector(values)
    diff = _is_diff(y)

    def insert_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if _is_zero(y_bar) or not diff:
            return (NoTangent(), _zero_for(arr), NoTangent(), _zero_for(values), *rest)
        cache: list = []

        def flat() -> np.ndarray:
            if not cache:
                pos = _positions((n_all,))
                src = np.insert(pos[:n_arr].reshape(shapes[0]), obj,
                                pos[n_arr:].reshape(shapes[1]), *args, **kwargs) - 1
                cache.append(_scatter(y_bar, src, n_all))
            return cache[0]

        arr_bar = Thunk(lambda: project_arr(flat()[:n_arr].reshape(shapes[0])))
        values_bar = Thunk(lambda: project_values(flat()[n_arr:].reshape(shapes[1])))
        return (NoTangent(), arr_bar if _is_diff(arr) else NoTangent(), NoTangent(),
                values_bar if _is_diff(values) else NoTangent(), *rest)

    return y, insert_pullback


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
    return _arg(args, kwargs, 0, "mode", "constant")


@frule.register(np.pad)
def pad_frule(dargs: tuple, array: Any, pad_width: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.pad(array, pad_width, *args, **kwargs)
    x_dot = unthunk(dargs[1])
    if _is_zero(x_dot) or not _is_diff(array):
        return y, _out_zero(y)
    if _pad_mode(args, kwargs) not in _PAD_LINEAR:
        return y, not_implemented(f"pad mode {_pad_mode(args, kwargs)!r} is not linear")
    return y, _fit(np.pad(_dense(x_dot, array), pad_width, *args, **_pad_linear_kwargs(kwargs)),
                   y)


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
    project_x = _projector(array)
    linear_kwargs = _pad_linear_kwargs(kwargs)
    linear_kwargs.pop("mode", None)
    stat_length = linear_kwargs.pop("stat_length", None)

    def pad_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if _is_zero(y_bar) or not _is_diff(array):
            return (NoTangent(), _zero_for(array), NoTangent(), *rest)
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
        return (NoTangent(), project_x(_fresh(x_bar, y_bar)), NoTangent(), *rest)

    return y, pad_pullback


# ------------------------------------------------------------------------------ diagonals


def _diag_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    return gather_adjoint(x, lambda pos: np.diag(pos, *args, **kwargs))


linear_rules(np.diag, _diag_adjoint)


def _diagonal_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    return gather_adjoint(x, lambda pos: np.diagonal(pos, *args, **kwargs))


linear_rules(np.diagonal, _diagonal_adjoint)


def _diagflat_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    return gather_adjoint(x, lambda pos: np.diagflat(pos, *args, **kwargs))


linear_rules(np.diagflat, _diagflat_adjoint)


def _triu_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    return gather_adjoint(x, lambda pos: np.triu(pos, *args, **kwargs))


linear_rules(np.triu, _triu_adjoint)


def _tril_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    return gather_adjoint(x, lambda pos: np.tril(pos, *args, **kwargs))


linear_rules(np.tril, _tril_adjoint)


# ------------------------------------------------------------------------------ construction


def _conversion_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """Adjoint of ``array``-like conversions: the same values, maybe more leading dims
    (``ndmin``) and another dtype (the projection casts back)."""
    return _reshape_back(x)


for _f in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray,
           np.copy):
    linear_rules(_f, _conversion_adjoint)


def _astype_frule(f: Any) -> Callable:
    def astype_frule(dargs: tuple, x: Any, dtype: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(x, dtype, *args, **kwargs)
        x_dot = unthunk(dargs[1])
        if _is_zero(x_dot) or not _is_diff(x) or not _is_diff(y):
            return y, _out_zero(y)
        y_dot = np.asarray(_dense(x_dot, x))
        if y.dtype.kind == "f":
            y_dot = y_dot.real
        return y, y_dot.astype(y.dtype)

    return astype_frule


def _astype_rrule(f: Any) -> Callable:
    def astype_rrule(x: Any, dtype: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(x, dtype, *args, **kwargs)
        rest = (NoTangent(),) * len(args)
        diff = _is_diff(x) and _is_diff(y)
        project_x = _projector(x)

        def astype_pullback(y_bar: Any) -> tuple:
            y_bar = unthunk(y_bar)
            if _is_zero(y_bar) or not diff:
                return (NoTangent(), _zero_given_output(x, y), NoTangent(), *rest)
            return (NoTangent(), project_x(_fresh(np.asarray(y_bar), y_bar)), NoTangent(),
                    *rest)

        return y, astype_pullback

    return astype_rrule


frule.register(np.astype)(_astype_frule(np.astype))
rrule.register(np.astype)(_astype_rrule(np.astype))


# (shape, ndim, size, zeros, ones, empty, *_like, eye, identity, tri, full and full_like
# are in reductions.py.)
for _f in (np.indices, np.unravel_index, np.ravel_multi_index, np.tril_indices,
           np.triu_indices, np.tril_indices_from, np.triu_indices_from, np.diag_indices,
           np.diag_indices_from):
    non_differentiable(_f)

del _f
