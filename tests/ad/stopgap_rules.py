"""Rules the AD tests need, registered only where ``chainrules.rules`` has none yet.

The rule set lands progressively; until it covers these calls, the tests (and the
benchmark) register minimal rules here. ``ensure()`` registers a rule for a call
only when the core finds none for those argument types, so the real rules win as
soon as they exist and nothing is registered twice.
"""

from __future__ import annotations

import cmath
import math
import operator

import numpy as np

from chainrules import AbstractTangent, NoTangent, ProjectTo, frule, rrule, scalar_rule, unthunk

_F = float
_A = np.ndarray
_NUMBER_TYPES = [(_F,), (complex,), (_A,), (np.float64,)]


def _missing(f, *types):
    return rrule.lookup(f, types) is None or frule.lookup(f, types) is None


def _scalar(f, partials, nargs, types=None):
    combos = types or ([(_F,) * nargs, (_A,) * nargs, (complex,) * nargs,
                        (np.float64,) * nargs])
    if any(_missing(f, *c) for c in combos):
        if rrule.has_rules(f):
            return  # partial coverage from the real rule set: leave it alone
        scalar_rule(f, partials)


def _scatter(like, key, y_bar):
    """The adjoint of ``x[key]``: zeros shaped like ``like`` with ``y_bar`` added at ``key``."""
    x_bar = np.zeros(np.shape(like), dtype=np.result_type(like, y_bar))
    np.add.at(x_bar, key, y_bar)
    return x_bar


def _scatter_rrule(like, key, y_bar):
    def scatter_pullback(x_bar_bar):
        return NoTangent(), NoTangent(), NoTangent(), ProjectTo(y_bar)(unthunk(x_bar_bar)[key])

    return _scatter(like, key, y_bar), scatter_pullback


def _scatter_frule(dargs, like, key, y_bar):
    return _scatter(like, key, y_bar), _scatter(like, key, unthunk(dargs[3]))


def _getitem_rrule(x, key):
    y = x[key]
    project_x = ProjectTo(x)

    def getitem_pullback(y_bar):
        return NoTangent(), project_x(_scatter(x, key, unthunk(y_bar))), NoTangent()

    return y, getitem_pullback


def _getitem_frule(dargs, x, key):
    x_dot = unthunk(dargs[1])
    if isinstance(x_dot, (NoTangent,)) or not hasattr(x_dot, "__getitem__"):
        return x[key], x_dot
    return x[key], x_dot[key]


def _unbroadcast(g, x):
    return ProjectTo(x)(g)


def _sum_rrule(x, axis=None, keepdims=False):
    y = np.sum(x, axis=axis, keepdims=keepdims)

    def sum_pullback(y_bar):
        y_bar = unthunk(y_bar)
        if axis is not None and not keepdims:
            y_bar = np.expand_dims(y_bar, axis)
        return NoTangent(), np.broadcast_to(y_bar, np.shape(x)).astype(np.result_type(x))

    return y, sum_pullback


def _sum_frule(dargs, x, axis=None, keepdims=False):
    return np.sum(x, axis=axis, keepdims=keepdims), np.sum(unthunk(dargs[1]), axis=axis,
                                                          keepdims=keepdims)


def _matmul_rrule(a, b):
    y = a @ b

    def matmul_pullback(y_bar):
        y_bar = unthunk(y_bar)
        a_bar = y_bar @ np.swapaxes(b, -1, -2) if np.ndim(b) > 1 else np.outer(y_bar, b)
        b_bar = np.swapaxes(a, -1, -2) @ y_bar if np.ndim(a) > 1 else np.outer(a, y_bar)
        return NoTangent(), ProjectTo(a)(a_bar), ProjectTo(b)(b_bar)

    return y, matmul_pullback


def _where_rrule(cond, a, b):
    y = np.where(cond, a, b)
    project_a, project_b = ProjectTo(a), ProjectTo(b)

    def where_pullback(y_bar):
        y_bar = unthunk(y_bar)
        return (NoTangent(), NoTangent(), project_a(np.where(cond, y_bar, 0.0)),
                project_b(np.where(cond, 0.0, y_bar)))

    return y, where_pullback


def _where_frule(dargs, cond, a, b):
    a_dot, b_dot = unthunk(dargs[2]), unthunk(dargs[3])
    a_dot = 0.0 if isinstance(a_dot, AbstractTangent) else a_dot
    b_dot = 0.0 if isinstance(b_dot, AbstractTangent) else b_dot
    y = np.where(cond, a, b)
    return y, np.broadcast_to(np.where(cond, a_dot, b_dot), np.shape(y)) + 0.0 * y


def ensure():
    """Register the stopgap rules that are still missing."""
    _scalar(operator.add, lambda a, b: (1.0, 1.0), 2)
    _scalar(operator.sub, lambda a, b: (1.0, -1.0), 2)
    _scalar(operator.mul, lambda a, b: (b, a), 2)
    _scalar(operator.truediv, lambda a, b: (1 / b, -a / b ** 2), 2)
    _scalar(operator.pow, lambda a, b, *, y: (b * a ** (b - 1), y * np.log(a)
                                              if np.all(a > 0) else 0.0 * y), 2)
    _scalar(operator.neg, lambda a: -1.0, 1)
    _scalar(operator.abs, lambda a: np.sign(a) if not np.iscomplexobj(a) else np.conj(a) / abs(a), 1)
    for uf, nargs, part in [
        (np.add, 2, lambda a, b: (1.0, 1.0)),
        (np.subtract, 2, lambda a, b: (1.0, -1.0)),
        (np.multiply, 2, lambda a, b: (b, a)),
        (np.true_divide, 2, lambda a, b: (1 / b, -a / b ** 2)),
        (np.power, 2, lambda a, b, *, y: (b * a ** (b - 1), y * np.log(a) if np.all(a > 0) else 0.0 * y)),
        (np.negative, 1, lambda a: -1.0),
        (np.sin, 1, lambda x: np.cos(x)),
        (np.cos, 1, lambda x: -np.sin(x)),
        (np.exp, 1, lambda x, *, y: y),
        (np.log, 1, lambda x: 1 / x),
        (np.tanh, 1, lambda x, *, y: 1 - y * y),
        (np.sqrt, 1, lambda x, *, y: 0.5 / y),
        (np.absolute, 1, lambda x: np.sign(x)),
    ]:
        _scalar(uf, part, nargs, [(_A,) * nargs])
    for fn, part in [
        (math.sin, lambda x: math.cos(x)),
        (math.cos, lambda x: -math.sin(x)),
        (math.asin, lambda x: 1 / math.sqrt(1 - x * x)),
        (math.exp, lambda x, *, y: y),
        (math.log, lambda x: 1 / x),
        (math.sqrt, lambda x, *, y: 0.5 / y),
        (math.tanh, lambda x, *, y: 1 - y * y),
        (cmath.exp, lambda x, *, y: y),
        (cmath.sin, lambda x: cmath.cos(x)),
        (cmath.cos, lambda x: -cmath.sin(x)),
    ]:
        _scalar(fn, part, 1, [(_F,)])
    if _missing(operator.getitem, _A, int):
        rrule.register(operator.getitem, _A, object)(_getitem_rrule)
        frule.register(operator.getitem, _A, object)(_getitem_frule)
    if not rrule.has_rules(np.where):
        rrule.register(np.where, object, object, object)(_where_rrule)
        frule.register(np.where, object, object, object)(_where_frule)
    if not rrule.has_rules(_scatter):
        rrule.register(_scatter)(_scatter_rrule)
        frule.register(_scatter)(_scatter_frule)
    if _missing(np.sum, _A):
        rrule.register(np.sum, _A)(_sum_rrule)
        frule.register(np.sum, _A)(_sum_frule)
    if rrule.lookup(np.matmul, (_A, _A)) is None:
        rrule.register(np.matmul, _A, _A)(_matmul_rrule)
    if rrule.lookup(operator.matmul, (_A, _A)) is None:
        rrule.register(operator.matmul, _A, _A)(_matmul_rrule)
