"""The rule builder for NumPy functions linear in their first argument, and the
gather/scatter kernel their adjoints share (used by ``shape``, ``joining``,
``indexing`` and ``methods``; not a rule module: ``_`` names are skipped).

Functions that only pick elements (``tile``, ``repeat``, ``diag``, ``x[idx]``...) share
one adjoint, :func:`gather_adjoint`: the function is applied to an array of element
positions, and the cotangent is scattered back with ``np.bincount`` (so repeated picks
accumulate).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import NoTangent, Tangent, ZeroTangent, unthunk
from chainrules.rules import _kit as kit
from chainrules.rules.array_api import _adjoints as adjoints

__all__ = [
    "argument",
    "astype_rules",
    "fresh",
    "gather_adjoint",
    "gather_rules",
    "generic_rules",
    "item_cotangents",
    "linear_rules",
    "memory_order",
    "positions",
    "ravel_adjoint",
    "ravel_pushforward",
    "reshape_back",
    "scalar_type_rules",
    "scatter",
    "unbroadcast",
    "zero_given_output",
]


def zero_given_output(x: Any, y: Any) -> Any:
    """The cotangent of ``x`` when the output ``y`` carries none: ``NoTangent()`` for an
    integer or bool output (casting to an integer is not differentiable), else (an
    empty output) a zero."""
    y_kind = np.asarray(y).dtype.kind if isinstance(y, (np.ndarray, np.generic)) else "f"
    return kit.zero_for(x) if y_kind in "fc" else NoTangent()


def fresh(x_bar: Any, y_bar: Any) -> Any:
    """``x_bar``, copied if it shares memory with ``y_bar`` (an AD may accumulate into a
    returned cotangent in place, which must never write into ``y_bar``)."""
    if isinstance(x_bar, np.ndarray) and isinstance(y_bar, np.ndarray) and np.may_share_memory(
            x_bar, y_bar):
        return x_bar.copy()
    return x_bar


def item_cotangents(y_bar: Any, n: int) -> list:
    """The items of the cotangent of a tuple or list output."""
    y_bar = unthunk(y_bar)
    if kit.is_zero(y_bar):
        return [ZeroTangent()] * n
    items = y_bar.backing if isinstance(y_bar, Tangent) else y_bar
    return [unthunk(b) for b in items]


def scatter(y_bar: Any, src: np.ndarray, size: int) -> np.ndarray:
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


def unbroadcast(dx: Any, shape: tuple) -> np.ndarray:
    """Sum ``dx`` over the dimensions that broadcasting to its shape added to ``shape``."""
    return adjoints.sum_to(np, np.asarray(dx), tuple(shape))


def positions(shape: tuple) -> np.ndarray:
    """Element positions 1..n in C order (0 is left for 'no element' in a gather)."""
    return np.arange(1, math.prod(shape) + 1, dtype=np.intp).reshape(shape)


def gather_adjoint(x: Any, gather: Callable[[np.ndarray], Any]) -> Callable[[Any], Any]:
    """The adjoint of a function that only picks (and repeats, or zero-fills) elements.

    ``gather(positions)`` applies the function to an integer array shaped like ``x``;
    the returned pullback core scatters ``y_bar`` back with accumulation.
    """
    shape = np.shape(x)

    def gather_pullback(y_bar: Any) -> np.ndarray:
        src = np.asarray(gather(positions(shape))) - 1
        return scatter(y_bar, src, math.prod(shape)).reshape(shape)

    return gather_pullback


def linear_rules(f: Any, adjoint: Callable[..., Callable[[Any], Any]],
                 pushforward: Callable[..., Any] | None = None,
                 out_at: int | None = None) -> tuple:
    """Register the frule and rrule of ``f``, linear in its first argument, and return
    them (for registering on other names of ``f``).

    The other positional arguments (shapes, axes, indices) get ``NoTangent()``.
    ``adjoint(x, *args, **kwargs)`` runs in the rrule and returns the pullback core
    ``y_bar -> x_bar`` (an array shaped like ``np.asarray(x)``), closing over what it
    needs of ``x`` (shape, layout), not over ``x`` itself. The pushforward applies
    ``f`` to the tangent, or calls ``pushforward(x, x_dot, *args, **kwargs)`` (for
    functions whose result depends on the memory layout of ``x``, which the tangent
    does not share). ``out_at`` is the position of a positional ``out`` argument in
    ``args`` (refused, like ``out=``).
    """

    def linear_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        kit.refuse_out(f, kwargs, args, out_at)
        y = f(x, *args, **kwargs)
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None or not kit.is_differentiable(x) or not kit.is_differentiable(y):
            return y, kit.zero_for(y)
        x_dot = kit.dense_tangent(x_dot, x)
        if pushforward is None:
            return y, kit.fit_output(f(x_dot, *args, **kwargs), y)
        return y, kit.fit_output(pushforward(x, x_dot, *args, **kwargs), y)

    def linear_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        kit.refuse_out(f, kwargs, args, out_at)
        y = f(x, *args, **kwargs)
        rest = (NoTangent(),) * len(args)
        if not kit.is_differentiable(x) or not kit.is_differentiable(y):
            x_zero = zero_given_output(x, y)

            def no_tangent_pullback(y_bar: Any) -> tuple:
                return (NoTangent(), x_zero, *rest)

            return y, no_tangent_pullback
        core = adjoint(x, *args, **kwargs)
        project_x = kit.array_projector(x)

        @kit.zero_guard((NoTangent(), ZeroTangent(), *rest))
        def linear_pullback(y_bar: Any) -> tuple:
            return (NoTangent(), project_x(fresh(core(y_bar), y_bar)), *rest)

        return y, linear_pullback

    kit.define_rules(f, frule_fn=linear_frule, rrule_fn=linear_rrule)
    return linear_frule, linear_rrule


class _ShapeOf:
    """What the shared adjoints read of ``x``: its shape (a NumPy rule's pullback keeps
    this, never ``x`` itself, which may be a large array or a list)."""

    __slots__ = ("ndim", "shape")

    def __init__(self, shape: tuple) -> None:
        self.shape = shape
        self.ndim = len(shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def generic_rules(f: Any, adjoint: Callable[..., Any]) -> tuple:
    """:func:`linear_rules` for ``f`` whose adjoint is one of the array-API adjoints
    (``rules/array_api/_adjoints.py``, written once with ``xp``), run with NumPy."""

    def adjoint_of(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        like = _ShapeOf(np.shape(x))

        def generic_pullback(y_bar: Any) -> np.ndarray:
            return adjoint(np, y_bar, like, *args, **kwargs)

        return generic_pullback

    return linear_rules(f, adjoint_of)


def reshape_back(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """Adjoint of any function that only changes the shape (C order), or converts like
    ``np.array`` (maybe more leading dims with ``ndmin``, another dtype: the projection
    casts back)."""
    shape = np.shape(x)

    def reshape_back_pullback(y_bar: Any) -> np.ndarray:
        return np.reshape(y_bar, shape)

    return reshape_back_pullback


def argument(args: tuple, kwargs: dict, i: int, name: str, default: Any) -> Any:
    """Argument ``name`` given at position ``i`` (after the array) or by keyword."""
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


# ------------------------------------------------------------------------------ ravel


def memory_order(x: Any, order: str | None) -> str:
    """The order ``"C"``, ``"F"`` or ``"K"`` that ``order`` means for ``x``."""
    if order in (None, "C", "c"):
        return "C"
    if order in ("F", "f"):
        return "F"
    xa = np.asarray(x)
    if order in ("A", "a"):
        return "F" if xa.flags.f_contiguous and not xa.flags.c_contiguous else "C"
    return "K"


def _ravel_k_positions(x: Any) -> np.ndarray:
    """Positions (1-based, C order) of the elements of ``x`` in ``np.ravel(x, 'K')`` order."""
    xa = np.asarray(x)
    pos = positions(xa.shape)
    if any(st == 0 and n > 1 for st, n in zip(xa.strides, xa.shape)):
        # Broadcast axes: nditer follows ravel's order there (but not for negative strides).
        it = np.nditer(xa, flags=["multi_index", "refs_ok", "zerosize_ok"], order="K")
        return np.array([pos[it.multi_index] for _ in it], dtype=np.intp)
    # Otherwise ravel(order="K") walks the axes by decreasing |stride|, each in logical
    # order, and empty_like keeps that axis order.
    layout = np.empty_like(xa, dtype=np.intp)
    layout[...] = pos
    return np.ravel(layout, order="K")


def ravel_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """The adjoint of ``np.ravel(x, order)`` (and of ``x.flatten(order)``)."""
    shape = np.shape(x)
    order = memory_order(x, argument(args, kwargs, 0, "order", "C"))
    if order == "K":
        src = _ravel_k_positions(x) - 1

        def ravel_k_pullback(y_bar: Any) -> np.ndarray:
            return scatter(y_bar, src, math.prod(shape)).reshape(shape)

        return ravel_k_pullback

    def ravel_pullback(y_bar: Any) -> np.ndarray:
        return np.reshape(y_bar, shape, order=order)

    return ravel_pullback


def ravel_pushforward(x: Any, x_dot: np.ndarray, *args: Any, **kwargs: Any) -> Any:
    """The pushforward of ``np.ravel(x, order)``: the layout of ``x`` decides order "K"."""
    order = memory_order(x, argument(args, kwargs, 0, "order", "C"))
    if order == "K":
        return x_dot.ravel()[_ravel_k_positions(x) - 1]
    return np.ravel(x_dot, order=order)


# ------------------------------------------------------------------------------ astype


def astype_rules(f: Any) -> None:
    """Rules for ``f(x, dtype, ...)`` casting ``x`` (``np.astype``, ``ndarray.astype``):
    to a real dtype the tangent's imaginary part is dropped (the cast drops it), to an
    integer dtype the output has no tangent."""

    def astype_frule(dargs: tuple, x: Any, dtype: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(x, dtype, *args, **kwargs)
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None or not kit.is_differentiable(x) or not kit.is_differentiable(y):
            return y, kit.zero_for(y)
        y_dot = kit.dense_tangent(x_dot, x)
        if y.dtype.kind == "f":
            y_dot = y_dot.real
        return y, y_dot.astype(y.dtype)

    def astype_rrule(x: Any, dtype: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(x, dtype, *args, **kwargs)
        rest = (NoTangent(),) * len(args)
        diff = kit.is_differentiable(x) and kit.is_differentiable(y)
        project_x = kit.array_projector(x)
        zeros = (NoTangent(), zero_given_output(x, y), NoTangent(), *rest)

        @kit.zero_guard(zeros)
        def astype_pullback(y_bar: Any) -> tuple:
            if not diff:
                return zeros
            return (NoTangent(), project_x(fresh(np.asarray(y_bar), y_bar)), NoTangent(),
                    *rest)

        return y, astype_pullback

    kit.define_rules(f, frule_fn=astype_frule, rrule_fn=astype_rrule)


def scalar_type_rules(t: type) -> None:
    """Rules for a NumPy scalar type called as a cast (``np.float32(x)`` of a number or
    an array): a float or complex type as `astype_rules`; an integer or bool type is not
    differentiable (the AD passes its result on as a constant, as for ``astype(int)``)."""
    if not issubclass(t, np.inexact):
        core.non_differentiable(t)
        return

    def cast_frule(dargs: tuple, x: Any) -> Any:
        y = t(x)
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None or not kit.is_differentiable(x):
            return y, kit.zero_for(y)
        y_dot = np.asarray(kit.dense_tangent(x_dot, x))
        if y.dtype.kind == "f":
            y_dot = y_dot.real
        return y, kit.fit_output(y_dot.astype(y.dtype), y)

    def cast_rrule(x: Any) -> Any:
        y = t(x)
        project_x = core.ProjectTo(x)
        zeros = (NoTangent(), kit.zero_for(x))

        @kit.zero_guard(zeros)
        def cast_pullback(y_bar: Any) -> tuple:
            if not kit.is_differentiable(x):
                return zeros
            return NoTangent(), project_x(fresh(np.asarray(y_bar), y_bar))

        return y, cast_pullback

    kit.define_rules(t, object, frule_fn=cast_frule, rrule_fn=cast_rrule)


def gather_rules(f: Any, drop: tuple = (), out_at: int | None = None) -> None:
    """:func:`linear_rules` for ``f(x, *args, **kwargs)`` that only picks elements of
    ``x``: its adjoint applies ``f`` to element positions (without the keywords in
    ``drop``, which an integer array refuses) and scatters back."""

    def gather_adjoint_of(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        index_kwargs = {k: v for k, v in kwargs.items() if k not in drop}
        return gather_adjoint(x, lambda pos: f(pos, *args, **index_kwargs))

    linear_rules(f, gather_adjoint_of, out_at=out_at)
