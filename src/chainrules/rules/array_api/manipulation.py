"""Rules for the manipulation functions of the array API standard, written once against ``xp``.

All are linear: the pushforward applies the function to the tangent, the pullback applies
its adjoint (``reshape`` back, inverse permutation, ``flip`` again, ``roll`` back, slices of
a ``concat``, sums over the copies of ``tile``/``repeat``/``broadcast_to``/``meshgrid``).
Also the linear creation and conversion functions ``tril``, ``triu``, ``meshgrid``,
``astype``, ``asarray`` and ``from_dlpack`` (of an array: the cotangent is projected back
onto it, dtype included).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from chainrules.core import NoTangent, ProjectTo, Tangent, ZeroTangent, array_namespace, unthunk
from chainrules.rules import _kit as kit
from chainrules.rules.array_api import _adjoints as adjoints

__all__ = ["register"]


def linear_rules(f: Any, name: str, adjoint: Callable[..., Any], nargs: int = 1) -> None:
    """Rules for ``f(x, *rest, **kw)`` linear in ``x`` (the ``rest`` are not
    differentiated): the pushforward is ``f(x_dot, *rest, **kw)``, the pullback
    ``adjoint(xp, y_bar, x, *rest, **kw)``, projected onto ``x``."""

    def linear_rrule(x: Any, *rest: Any, **kw: Any) -> Any:
        y = f(x, *rest, **kw)
        project_x = ProjectTo(x)

        extra = (NoTangent(),) * len(rest)

        @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent()), *extra))
        def linear_pullback(y_bar: Any) -> tuple:
            xp = array_namespace(x, y_bar)
            return NoTangent(), project_x(adjoint(xp, y_bar, x, *rest, **kw)), *extra

        return y, linear_pullback

    def linear_frule(dargs: tuple, x: Any, *rest: Any, **kw: Any) -> Any:
        y = f(x, *rest, **kw)
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None:
            return y, ZeroTangent()
        return y, f(x_dot, *rest, **kw)

    kit.define_rules(f, object, ..., frule_fn=linear_frule, rrule_fn=linear_rrule, name=name)


def _reshape_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    return xp.reshape(g, tuple(x.shape))


def _same_as(f: Any) -> Callable[..., Any]:
    """The adjoint of a function that is its own adjoint (``tril``, ``triu``)."""

    def self_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
        return f(g, *args, **kw)

    return self_adjoint


def _broadcast_to_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    return g  # ProjectTo(x) sums the broadcast dimensions away


def _astype_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    return g  # ProjectTo(x) restores x's dtype (and takes the real part for a real x)


_LINEAR = {
    "reshape": _reshape_adjoint,
    "expand_dims": _reshape_adjoint,
    "squeeze": _reshape_adjoint,
    "permute_dims": adjoints.permute_dims_adjoint,
    "flip": adjoints.flip_adjoint,
    "roll": adjoints.roll_adjoint,
    "moveaxis": adjoints.moveaxis_adjoint,
    "broadcast_to": _broadcast_to_adjoint,
    "astype": _astype_adjoint,
    "asarray": _astype_adjoint,
    "from_dlpack": _astype_adjoint,
    "tile": adjoints.tile_adjoint,
    "repeat": adjoints.repeat_adjoint,
    "matrix_transpose": adjoints.matrix_transpose_adjoint,
}


# ----------------------------------------------------------- functions of several arrays


def _items_cotangent(y_bar: Any, n: int) -> list:
    """A multi-output cotangent (tuple, list or Tangent) as a list of ``n`` entries."""
    y_bar = unthunk(y_bar)
    if kit.is_zero(y_bar):
        return [ZeroTangent()] * n
    if isinstance(y_bar, Tangent):
        y_bar = y_bar.backing
    return [unthunk(t) for t in y_bar]


def _sequence_rules(f: Any, name: str, split: Callable[..., list]) -> None:
    """Rules for ``f(arrays, *, axis)`` (``concat``, ``stack``): the cotangent of the
    sequence is ``split(xp, y_bar, arrays, axis)``, one entry per array."""

    def sequence_rrule(arrays: Any, *rest: Any, **kw: Any) -> Any:
        y = f(arrays, *rest, **kw)
        project = ProjectTo(arrays)
        axis = rest[0] if rest else kw.get("axis", 0)

        extra = (NoTangent(),) * len(rest)

        @kit.zero_guard(lambda: (NoTangent(), project(ZeroTangent()), *extra))
        def sequence_pullback(y_bar: Any) -> tuple:
            xp = array_namespace(y_bar)
            parts = split(xp, y_bar, arrays, axis)
            return NoTangent(), project(type(arrays)(parts)), *extra

        return y, sequence_pullback

    def sequence_frule(dargs: tuple, arrays: Any, *rest: Any, **kw: Any) -> Any:
        y = f(arrays, *rest, **kw)
        items = _items_cotangent(dargs[1], len(arrays))
        if all(kit.is_zero(t) for t in items):
            return y, ZeroTangent()
        xp = array_namespace(*arrays)
        dense_items = [xp.zeros_like(a) if kit.is_zero(t) else t
                       for t, a in zip(items, arrays)]
        return y, f(dense_items, *rest, **kw)

    kit.define_rules(f, object, ..., frule_fn=sequence_frule, rrule_fn=sequence_rrule, name=name)


def _concat_split(xp: Any, g: Any, arrays: Any, axis: Any) -> list:
    if axis is None:
        sizes = [math.prod(a.shape) for a in arrays]
        g = xp.reshape(g, (-1,))
        shapes = [tuple(a.shape) for a in arrays]
        axis_ = 0
    else:
        axis_ = axis % arrays[0].ndim
        sizes = [a.shape[axis_] for a in arrays]
        shapes = [tuple(a.shape) for a in arrays]
    parts = []
    start = 0
    for n, shape in zip(sizes, shapes):
        index = (slice(None),) * axis_ + (slice(start, start + n), Ellipsis)
        parts.append(xp.reshape(g[index], shape))
        start += n
    return parts


def _stack_split(xp: Any, g: Any, arrays: Any, axis: Any) -> list:
    return list(xp.unstack(g, axis=axis))


def _unstack_rules(f: Any) -> None:
    def unstack_rrule(x: Any, *rest: Any, **kw: Any) -> Any:
        y = f(x, *rest, **kw)
        project_x = ProjectTo(x)
        axis = rest[0] if rest else kw.get("axis", 0)

        def unstack_pullback(y_bar: Any) -> tuple:
            items = _items_cotangent(y_bar, len(y))
            extra = (NoTangent(),) * len(rest)
            if all(kit.is_zero(t) for t in items):
                return NoTangent(), project_x(ZeroTangent()), *extra
            xp = array_namespace(x)
            dense_items = [xp.zeros_like(v) if kit.is_zero(t) else t
                           for t, v in zip(items, y)]
            return NoTangent(), project_x(xp.stack(dense_items, axis=axis)), *extra

        return y, unstack_pullback

    def unstack_frule(dargs: tuple, x: Any, *rest: Any, **kw: Any) -> Any:
        y = f(x, *rest, **kw)
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None:
            return y, ZeroTangent()
        return y, Tangent[tuple](*f(x_dot, *rest, **kw))

    kit.define_rules(f, object, ..., frule_fn=unstack_frule, rrule_fn=unstack_rrule)


def _broadcast_arrays_rules(f: Any) -> None:
    def broadcast_arrays_rrule(*arrays: Any) -> Any:
        y = f(*arrays)
        projectors = [ProjectTo(a) for a in arrays]

        def broadcast_arrays_pullback(y_bar: Any) -> tuple:
            items = _items_cotangent(y_bar, len(arrays))
            return NoTangent(), *(p(t) for p, t in zip(projectors, items))

        return y, broadcast_arrays_pullback

    def broadcast_arrays_frule(dargs: tuple, *arrays: Any) -> Any:
        y = f(*arrays)
        xp = array_namespace(*arrays)
        y_dots = []
        for t, out in zip(dargs[1:], y):
            t = kit.nonzero(t)
            y_dots.append(ZeroTangent() if t is None else xp.broadcast_to(t, tuple(out.shape)))
        return y, Tangent[type(y)](*y_dots) if type(y) in (tuple, list) else tuple(y_dots)

    kit.define_rules(f, ..., frule_fn=broadcast_arrays_frule, rrule_fn=broadcast_arrays_rrule)


def _meshgrid_rules(f: Any) -> None:
    def grid_axis(i: int, n: int, indexing: str) -> int:
        if indexing == "xy" and n >= 2 and i < 2:
            return 1 - i
        return i

    def meshgrid_rrule(*arrays: Any, indexing: str = "xy") -> Any:
        y = f(*arrays, indexing=indexing)
        projectors = [ProjectTo(a) for a in arrays]
        n = len(arrays)

        def meshgrid_pullback(y_bar: Any) -> tuple:
            items = _items_cotangent(y_bar, n)
            bars = []
            for i, (t, project) in enumerate(zip(items, projectors)):
                if kit.is_zero(t):
                    bars.append(project(ZeroTangent()))
                    continue
                xp = array_namespace(t)
                keep = grid_axis(i, n, indexing)
                others = tuple(a for a in range(t.ndim) if a != keep)
                bars.append(project(xp.sum(t, axis=others)))
            return NoTangent(), *bars

        return y, meshgrid_pullback

    def meshgrid_frule(dargs: tuple, *arrays: Any, indexing: str = "xy") -> Any:
        y = f(*arrays, indexing=indexing)
        xp = array_namespace(*arrays)
        tangents = [xp.zeros_like(a) if kit.nonzero(t) is None else kit.nonzero(t)
                    for t, a in zip(dargs[1:], arrays)]
        return y, Tangent[type(y)](*f(*tangents, indexing=indexing))

    kit.define_rules(f, ..., frule_fn=meshgrid_frule, rrule_fn=meshgrid_rrule)


def register(xp: Any, fresh: Callable[[Any], bool]) -> list[str]:
    """Register the manipulation rules on ``xp``'s functions that ``fresh`` accepts."""
    done = []
    for name, adjoint in _LINEAR.items():
        f = getattr(xp, name, None)
        if f is not None and fresh(f):
            linear_rules(f, name, adjoint)
            done.append(name)
    for name in ("tril", "triu"):
        f = getattr(xp, name, None)
        if f is not None and fresh(f):
            linear_rules(f, name, _same_as(f))
            done.append(name)
    for name, split in (("concat", _concat_split), ("stack", _stack_split)):
        f = getattr(xp, name, None)
        if f is not None and fresh(f):
            _sequence_rules(f, name, split)
            done.append(name)
    f = getattr(xp, "unstack", None)
    if f is not None and fresh(f):
        _unstack_rules(f)
        done.append("unstack")
    f = getattr(xp, "broadcast_arrays", None)
    if f is not None and fresh(f):
        _broadcast_arrays_rules(f)
        done.append("broadcast_arrays")
    f = getattr(xp, "meshgrid", None)
    if f is not None and fresh(f):
        _meshgrid_rules(f)
        done.append("meshgrid")
    return done
