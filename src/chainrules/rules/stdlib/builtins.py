"""Rules for Python builtins.

Covered with frule + rrule:

- ``sum(x[, start])`` of a tuple or list of numbers or arrays (items may
  broadcast against each other and ``start``), or of an array (sums over its
  first axis, as iteration does), or of tuples / lists with a tuple / list
  ``start`` (concatenation); ``start`` passed positionally is differentiated,
  passed by keyword it is not (keyword arguments never are);
- ``min`` / ``max`` of several arguments or of one tuple, list or array, with
  ``key=`` and ``default=``;
- ``float(x)`` and ``complex(x[, imag])`` of numbers and 0-d arrays;
- ``divmod(x, m)`` of real numbers and arrays: the remainder
  ``r = x - q * m`` has partials ``1`` and ``-q``; the quotient ``q`` is
  piecewise constant (zero tangent);
- ``sorted(x)`` of a tuple or list (with ``key=``, ``reverse=``): the
  cotangent is permuted back;
- ``abs`` and ``pow`` share the rules of ``operator.abs`` / ``operator.pow``
  and are registered with them in ``chainrules.rules.stdlib.operator``.

Non-differentiable: ``round``, ``int``, ``len``, ``bool``, ``range``, ``hash``,
``id``, ``isinstance``, ``issubclass``, ``any``, ``all``, ``ord``, ``chr``,
``str``, ``repr``, ``format``, ``bin``, ``oct``, ``hex``, ``ascii``, ``callable``,
``hasattr``; ``float`` and ``complex`` of a ``str``.

Conventions at non-smooth points:

- ``min`` / ``max`` ties: the whole cotangent goes to the element Python returns,
  which is the *first* minimal / maximal one (in argument or iteration order,
  after ``key``); the other tied elements get zero.
- ``divmod``: valid away from the jumps where ``x / m`` is an integer.
- ``sorted`` ties: Python's sort is stable, so tied elements keep their order and
  each gets the cotangent of the position it was sorted to.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, Tangent, ZeroTangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit

_NUM = int | float | complex | np.number | np.ndarray
_SEQ = tuple | list



def _items(t: Any, n: int) -> list:
    """The item tangents of a sequence tangent (ZeroTangent() where absent)."""
    t = unthunk(t)
    if kit.is_zero(t):
        return [ZeroTangent()] * n
    if isinstance(t, Tangent):
        return list(t.backing)
    return list(t)


# -------------------------------------------------------------------------- sum


def _sum_start(args: tuple, kwargs: dict) -> Any:
    return args[0] if args else kwargs.get("start", 0)


def _concat_sum_rrule(x: Any, args: tuple, start: Any, y: Any) -> Any:
    """sum(x, start) of tuples or lists: a concatenation; y_bar is split back."""
    bounds = []
    offset = len(start)
    for item in x:
        bounds.append((offset, offset + len(item)))
        offset += len(item)
    projectors = [ProjectTo(item) for item in x]
    project_start = ProjectTo(start)

    @kit.zero_guard((NoTangent(), ZeroTangent(), *(ZeroTangent() for _ in args)))
    def sum_pullback(y_bar: Any) -> tuple:
        items = _items(y_bar, len(y))
        x_bar = Tangent[type(x)](*(p(Tangent[type(item)](*items[a:b]))
                                   for p, item, (a, b) in zip(projectors, x, bounds)))
        start_bar = project_start(Tangent[type(start)](*items[:len(start)])) if len(
            start) else NoTangent()
        return (NoTangent(), x_bar if len(x) else NoTangent(), *(start_bar for _ in args))

    return y, sum_pullback


@rrule.register(builtins.sum)
def sum_rrule(x: _SEQ | np.ndarray, *args, **kwargs) -> Any:
    y = builtins.sum(x, *args, **kwargs)
    start = _sum_start(args, kwargs)
    if isinstance(start, (tuple, list)):
        return _concat_sum_rrule(x, args, start, y)
    n = len(x)
    if isinstance(x, np.ndarray):
        project_row = ProjectTo(np.zeros(x.shape[1:], x.dtype))
    else:
        projectors = [ProjectTo(i) for i in x]
    project_start = [ProjectTo(s) for s in args]

    @kit.zero_guard((NoTangent(), ZeroTangent(), *(ZeroTangent() for _ in args)))
    def sum_pullback(y_bar: Any) -> tuple:
        if isinstance(x, np.ndarray):
            row_bar = project_row(y_bar)
            x_bar: Any = np.broadcast_to(row_bar, x.shape).copy()
        else:
            x_bar = Tangent[type(x)](*(p(y_bar) for p in projectors)) if n else NoTangent()
        return (NoTangent(), x_bar, *(p(y_bar) for p in project_start))

    return y, sum_pullback


@frule.register(builtins.sum)
def sum_frule(dargs: tuple, x: _SEQ | np.ndarray, *args, **kwargs) -> Any:
    y = builtins.sum(x, *args, **kwargs)
    x_dot = unthunk(dargs[1])
    start = _sum_start(args, kwargs)
    if isinstance(start, (tuple, list)):  # concatenation
        if kit.is_zero(x_dot) and all(kit.is_zero(unthunk(d)) for d in dargs[2:]):
            return y, ZeroTangent()
        start_items = _items(dargs[2], len(start)) if args else [ZeroTangent()] * len(start)
        item_dots = _items(x_dot, len(x))
        parts = [t for item, d in zip(x, item_dots) for t in _items(d, len(item))]
        return y, Tangent[type(y)](*start_items, *parts)
    y_dot: Any = ZeroTangent()
    if not kit.is_zero(x_dot):
        if isinstance(x, np.ndarray):
            y_dot = np.sum(x_dot, axis=0)
        else:
            for t in _items(x_dot, len(x)):
                t = unthunk(t)
                if not kit.is_zero(t):
                    y_dot = y_dot + t
    for s_dot in dargs[2:]:
        s_dot = unthunk(s_dot)
        if not kit.is_zero(s_dot):
            y_dot = y_dot + s_dot
    if isinstance(y, np.ndarray) and not kit.is_zero(y_dot) and np.shape(y_dot) != y.shape:
        y_dot = np.broadcast_to(y_dot, y.shape).astype(y.dtype)
    return y, y_dot


# ---------------------------------------------------------------------- min, max


def _arg_extreme(pick: Any, items: Any, key: Any) -> int:
    """The index of the element ``pick`` (min or max) returns: the first extreme one."""
    values = list(items)
    if key is None:
        return pick(range(len(values)), key=values.__getitem__)
    return pick(range(len(values)), key=lambda i: key(values[i]))


def _extreme_rules(f: Any) -> None:
    name = f.__name__

    def extreme_rrule(*args, key=None, **kwargs) -> Any:
        y = f(*args, key=key, **kwargs)
        if len(args) == 1:
            x = args[0]
            n = len(x)
            i = _arg_extreme(f, x, key) if n else None
            project_item = ProjectTo(x[i]) if n else None

            def extreme_pullback(y_bar: Any) -> tuple:
                y_bar = unthunk(y_bar)
                if i is None:  # empty: y is `default`, a keyword argument
                    return NoTangent(), NoTangent()
                if kit.is_zero(y_bar):
                    return NoTangent(), ZeroTangent()
                if isinstance(x, np.ndarray):
                    # the item's cotangent between zeros (joined, not written into an
                    # array: run on values of an outer trace this stays differentiable)
                    item = np.reshape(project_item(y_bar), (1, *x.shape[1:]))
                    x_bar = np.concatenate([np.zeros_like(x[:i]), item,
                                            np.zeros_like(x[i + 1:])])
                    return NoTangent(), x_bar.astype(x.dtype, copy=False)
                items: list = [ZeroTangent()] * n
                items[i] = project_item(y_bar)
                return NoTangent(), Tangent[type(x)](*items)
        else:
            i = _arg_extreme(f, args, key)
            project_item = ProjectTo(args[i])

            def extreme_pullback(y_bar: Any) -> tuple:
                y_bar = unthunk(y_bar)
                bars: list = [ZeroTangent()] * len(args)
                if not kit.is_zero(y_bar):
                    bars[i] = project_item(y_bar)
                return (NoTangent(), *bars)

        extreme_pullback.__qualname__ = f"{name}_pullback"
        return y, extreme_pullback

    def extreme_frule(dargs: tuple, *args, key=None, **kwargs) -> Any:
        y = f(*args, key=key, **kwargs)
        if len(args) == 1:
            x = args[0]
            if not len(x):
                return y, NoTangent()
            x_dot = unthunk(dargs[1])
            if kit.is_zero(x_dot):
                return y, ZeroTangent()
            i = _arg_extreme(f, x, key)
            return y, (x_dot[i] if isinstance(x_dot, np.ndarray) else _items(x_dot, len(x))[i])
        i = _arg_extreme(f, args, key)
        return y, unthunk(dargs[1 + i])

    extreme_rrule.__qualname__ = f"{name}_rrule"
    extreme_frule.__qualname__ = f"{name}_frule"
    rrule.register(f, _SEQ | np.ndarray)(extreme_rrule)
    frule.register(f, _SEQ | np.ndarray)(extreme_frule)
    rrule.register(f, object, object, ...)(extreme_rrule)
    frule.register(f, object, object, ...)(extreme_frule)


_extreme_rules(builtins.min)
_extreme_rules(builtins.max)


# ------------------------------------------------------------------ conversions


@rrule.register(builtins.float)
def float_rrule(x: _NUM) -> Any:
    y = builtins.float(x)
    project_x = ProjectTo(x)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def float_pullback(y_bar: Any) -> tuple:
        return NoTangent(), project_x(y_bar)

    return y, float_pullback


@frule.register(builtins.float)
def float_frule(dargs: tuple, x: _NUM) -> Any:
    y = builtins.float(x)
    x_dot = unthunk(dargs[1])
    if kit.is_zero(x_dot):
        return y, ZeroTangent()
    return y, builtins.float(np.real(x_dot))


@rrule.register(builtins.complex)
def complex_rrule(x: _NUM, *imag) -> Any:
    y = builtins.complex(x, *imag)
    project_x = ProjectTo(x)
    project_imag = [ProjectTo(b) for b in imag]

    @kit.zero_guard((NoTangent(), ZeroTangent(), *(ZeroTangent() for _ in imag)))
    def complex_pullback(y_bar: Any) -> tuple:
        # y = x + i * imag: holomorphic in both, so imag_bar = conj(i) * y_bar
        return (NoTangent(), project_x(y_bar), *(p(-1j * y_bar) for p in project_imag))

    return y, complex_pullback


@frule.register(builtins.complex)
def complex_frule(dargs: tuple, x: _NUM, *imag) -> Any:
    y = builtins.complex(x, *imag)
    y_dot: Any = ZeroTangent()
    x_dot = unthunk(dargs[1])
    if not kit.is_zero(x_dot):
        y_dot = builtins.complex(np.asarray(x_dot).reshape(()).item())
    for b_dot in dargs[2:]:
        b_dot = unthunk(b_dot)
        if not kit.is_zero(b_dot):
            y_dot = y_dot + 1j * builtins.complex(np.asarray(b_dot).reshape(()).item())
    return y, y_dot


core.non_differentiable(builtins.float, str)
core.non_differentiable(builtins.float, bytes)
core.non_differentiable(builtins.complex, str)


# ----------------------------------------------------------------------- divmod


@rrule.register(builtins.divmod)
def divmod_rrule(x: _NUM, m: _NUM) -> Any:
    y = builtins.divmod(x, m)
    q = y[0]
    project_x = ProjectTo(x)
    project_m = ProjectTo(m)

    def divmod_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        r_bar = ZeroTangent() if kit.is_zero(y_bar) else unthunk(_items(y_bar, 2)[1])
        if kit.is_zero(r_bar):
            return NoTangent(), ZeroTangent(), ZeroTangent()
        return NoTangent(), project_x(r_bar), project_m(-q * r_bar)

    return y, divmod_pullback


@frule.register(builtins.divmod)
def divmod_frule(dargs: tuple, x: _NUM, m: _NUM) -> Any:
    y = builtins.divmod(x, m)
    q, r = y
    x_dot, m_dot = unthunk(dargs[1]), unthunk(dargs[2])
    r_dot: Any = ZeroTangent()
    if not kit.is_zero(x_dot):
        r_dot = x_dot
    if not kit.is_zero(m_dot):
        r_dot = r_dot + (-q * m_dot)
    if isinstance(r, np.ndarray) and not kit.is_zero(r_dot):
        r_dot = np.broadcast_to(r_dot, r.shape).astype(r.dtype)
    elif isinstance(r, builtins.float) and not kit.is_zero(r_dot):
        r_dot = builtins.float(r_dot)
    return y, Tangent[tuple](ZeroTangent(), r_dot)


# ----------------------------------------------------------------------- sorted


def _sort_order(x: _SEQ, key: Any, reverse: bool) -> tuple[list, list[int]]:
    """``x``'s items and the positions that ``sorted(x, key=key, reverse=reverse)`` takes
    them from (stable, as ``sorted`` is)."""
    values = list(x)
    by = values.__getitem__ if key is None else (lambda i: key(values[i]))
    return values, builtins.sorted(range(len(values)), key=by, reverse=reverse)


@rrule.register(builtins.sorted)
def sorted_rrule(x: _SEQ, *, key=None, reverse=False) -> Any:
    values, order = _sort_order(x, key, reverse)
    y = [values[i] for i in order]
    project_x = ProjectTo(x)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def sorted_pullback(y_bar: Any) -> tuple:
        items: list = [ZeroTangent()] * len(values)
        for pos, t in zip(order, _items(y_bar, len(values))):
            items[pos] = t
        return NoTangent(), project_x(Tangent[type(x)](*items))

    return y, sorted_pullback


@frule.register(builtins.sorted)
def sorted_frule(dargs: tuple, x: _SEQ, *, key=None, reverse=False) -> Any:
    values, order = _sort_order(x, key, reverse)
    y = [values[i] for i in order]
    x_dot = unthunk(dargs[1])
    if kit.is_zero(x_dot):
        return y, ZeroTangent()
    items = _items(x_dot, len(values))
    return y, Tangent[list](*(items[i] for i in order))


# ------------------------------------------------------------ non-differentiable

for _f in (builtins.round, builtins.int, builtins.len, builtins.bool, builtins.range,
           builtins.hash, builtins.id, builtins.isinstance, builtins.issubclass, builtins.any,
           builtins.all, builtins.ord, builtins.chr, builtins.str, builtins.repr,
           builtins.format, builtins.bin, builtins.oct, builtins.hex, builtins.ascii,
           builtins.callable, builtins.hasattr):
    core.non_differentiable(_f)
del _f
