"""Rules for the standard library's ``operator`` module (what ``x + y``, ``x[k]``... call).

An AD sees ``x + y`` as ``operator.add(x, y)`` whatever the operands, so the
arithmetic rules cover Python numbers, NumPy scalars and NumPy arrays alike:

- ``add``, ``sub``, ``mul``, ``truediv``, ``neg``, ``pos``, ``pow``, ``mod``:
  ``scalar_rule`` (broadcasting, dtype-correct cotangents, complex by the
  holomorphic convention) for operands that are ``numbers.Number`` or
  ``np.ndarray``;
- ``abs`` (also registered for the builtin ``abs``): hand-written, real and
  complex (DESIGN §2: the cotangent of ``z`` is ``y_bar * z / |z|``);
- ``matmul`` of two arrays: hand-written, with NumPy's 1-d and batched semantics;
- ``getitem`` of tuples, lists (index or slice) and dicts; ``add`` / ``concat``
  of two tuples or two lists; ``mul`` of a tuple or list by an ``int``
  (repetition). ``getitem`` of arrays is registered elsewhere (numpy indexing);
- ``iadd``, ``isub``, ``imul``, ``itruediv``, ``ipow``, ``imod`` of two numbers (for
  immutable scalars they are the plain operators; arrays, which they would
  mutate, get no rule), ``iadd`` / ``iconcat`` of two tuples;
- non-differentiable: comparisons (``lt``, ``le``, ``eq``, ``ne``, ``ge``,
  ``gt``), ``not_``, ``truth``, ``is_``, ``is_not``, ``contains``, ``countOf``,
  ``indexOf``, ``floordiv``, bitwise ``and_``, ``or_``, ``xor``, ``invert``,
  ``lshift``, ``rshift``, ``index``, ``length_hint``, ``inv``, and the in-place
  ``ifloordiv``, ``iand``, ``ior``, ``ixor``, ``ilshift``, ``irshift``; ``add`` of
  two ``str`` or
  ``bytes``, ``mod`` with a ``str`` / ``bytes`` format (string formatting),
  ``getitem`` of a ``str``, ``bytes`` or ``range``.

Conventions at non-smooth points:

- ``abs(x)`` at ``x == 0`` (real or complex): derivative 0.
- ``x ** p`` w.r.t. ``x`` at ``p == 0``: 0 (``x ** 0`` is constant); at
  ``x == 0`` with ``0 < p < 1``: ``inf``.
- ``x ** p`` w.r.t. ``p`` at ``x == 0``: 0 (``0 ** p`` is constant for
  ``p > 0``); for real ``x < 0`` with a real result (integer ``p``): the real
  part of ``y * log(x)``, i.e. ``y * log|x|`` (the function is undefined for
  nearby non-integer ``p``). For Python numbers whose power is complex
  (``(-8.0) ** 0.5``) the principal branch ``y * log(x)`` is used.
- ``x % m``: derivatives ``1`` and ``-(x // m)`` (valid away from the jumps
  where ``x / m`` is an integer).
"""

from __future__ import annotations

import cmath
import math
import numbers
import operator
from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import NoTangent, Tangent, ZeroTangent, frule, rrule, scalar_rule, unthunk
from chainrules.rules import _kit as kit

_NUM = numbers.Number | np.ndarray
_PY_NUMBERS = (int, float, complex, bool)
_SEQ = tuple | list



# ------------------------------------------------------------------- arithmetic

def _truediv_partials(x: Any, z: Any, *, y: Any, wrt: tuple = (True, True)) -> tuple:
    """Partials of ``x / z``, each only where ``wrt`` asks (``x / 64.0`` needs no
    ``-y / z``, an array operation)."""
    return (1 / z if wrt[0] else None), (-y / z if wrt[1] else None)


def _mod_partials(x: Any, m: Any, *, wrt: tuple = (True, True)) -> tuple:
    """Partials of ``x % m``: the modulus's, ``-(x // m)``, only where ``wrt`` asks."""
    return 1.0, (-operator.floordiv(x, m) if wrt[1] else None)


scalar_rule(operator.add, lambda x, z: (1.0, 1.0), types=(_NUM, _NUM))
scalar_rule(operator.sub, lambda x, z: (1.0, -1.0), types=(_NUM, _NUM))
scalar_rule(operator.mul, lambda x, z: (z, x), types=(_NUM, _NUM))
scalar_rule(operator.truediv, _truediv_partials, types=(_NUM, _NUM))
scalar_rule(operator.neg, lambda x: -1.0, types=(_NUM,))
scalar_rule(operator.pos, lambda x: 1.0, types=(_NUM,))
scalar_rule(operator.mod, _mod_partials, types=(_NUM, _NUM))

# In-place forms: for immutable Python and NumPy scalars they are the plain operators
# (``s += x`` on a float). On arrays they write into their first argument, so they
# get no rule there.
_SCALAR = numbers.Number
scalar_rule(operator.iadd, lambda x, z: (1.0, 1.0), types=(_SCALAR, _SCALAR))
scalar_rule(operator.isub, lambda x, z: (1.0, -1.0), types=(_SCALAR, _SCALAR))
scalar_rule(operator.imul, lambda x, z: (z, x), types=(_SCALAR, _SCALAR))
scalar_rule(operator.itruediv, _truediv_partials, types=(_SCALAR, _SCALAR))
scalar_rule(operator.imod, _mod_partials, types=(_SCALAR, _SCALAR))


def _py_pow_dx(x: Any, p: Any) -> Any:
    if p == 0:
        return 0.0
    try:
        return p * x ** (p - 1)
    except ZeroDivisionError:  # 0 ** (p - 1) with 0 < p < 1: infinite slope
        return math.inf


def _py_pow_dp(x: Any, p: Any, y: Any) -> Any:
    if x == 0:
        return 0.0
    if isinstance(x, complex) or isinstance(p, complex) or isinstance(y, complex):
        return y * cmath.log(x)
    if x > 0:
        return y * math.log(x)
    return y * math.log(-x)  # real x < 0, integer p: the real part of y * log(x)


def _np_pow_partials(x: Any, p: Any, y: Any, need_dp: bool = True) -> tuple:
    dt = np.result_type(y, 1.0)
    xf = np.asarray(x).astype(dt, copy=False)
    pf = np.asarray(p).astype(np.result_type(p, 1.0), copy=False)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # masked where-branches get harmless inputs, so that zero cotangents times
        # infinite partials (log 0) do not make second derivatives NaN
        dx = np.where(pf == 0, 0, pf * np.where(pf == 0, 1, xf) ** (pf - 1))
        if not need_dp:
            return dx, None
        x_safe = np.where(xf == 0, 1, xf)
        # real x < 0 (integer p): the real part of y * log(x)
        logx = np.log(x_safe) if dt.kind == "c" else np.log(np.abs(x_safe))
        dp = np.where(xf == 0, 0, y * logx)
    return dx, dp


def pow_partials(x: Any, p: Any, *, y: Any, wrt: tuple = (True, True)) -> tuple:
    """Partials of ``x ** p`` (conventions in the module docstring); the exponent's
    (a logarithm) only when ``wrt`` asks for it, which ``x ** 2`` with a constant 2 does
    not."""
    need_dp = wrt[1]
    if type(p) in _PY_NUMBERS and (type(x) in _PY_NUMBERS or (  # np.float64 ** 2.0: fast path
            type(x) is np.float64 and type(p) is not complex and p >= 1 and abs(y) < 1e150
            and (x > 0 or (x < 0 and p == int(p))))):
        return _py_pow_dx(x, p), _py_pow_dp(x, p, y) if need_dp else None
    if (type(p) is float or type(p) is int) and type(x) is np.ndarray \
            and type(y) is np.ndarray and x.dtype.kind == "f" and x.dtype == y.dtype:
        return _real_array_pow_partials(x, p, y, need_dp)
    return _np_pow_partials(x, p, y, need_dp)


def _real_array_pow_partials(x: np.ndarray, p: float, y: np.ndarray,
                             need_dp: bool = True) -> tuple:
    """`_np_pow_partials` for a real array to a Python number (``x ** 2``, the common
    case): the same values in four NumPy calls instead of ten."""
    if p == 2:  # the square, without np.errstate (2 µs): nothing here can warn
        if not need_dp:
            return 2 * x, None
        ax = np.abs(x)
        zero = ax == 0
        if zero.any():
            ax[zero] = 1  # log|x| = 0 there: dp is 0 at x = 0, as below
        return 2 * x, y * np.log(ax)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        dx = np.zeros_like(x) if p == 0 else p * x ** (p - 1)
        if not need_dp:
            return dx, None
        dp = y * np.log(np.abs(x))
    zero = x == 0
    if zero.any():
        dp[zero] = 0
    return dx, dp


scalar_rule(operator.pow, pow_partials, types=(_NUM, _NUM))
scalar_rule(operator.ipow, pow_partials, types=(_SCALAR, _SCALAR))
scalar_rule(pow, pow_partials, types=(_NUM, _NUM))
core.non_differentiable(pow, int, int, int)  # pow(x, p, mod): modular, integers only


# -------------------------------------------------------------------------- abs


def _abs_slope(x: Any, y: Any) -> Any:
    """d|x|/dx for real x (sign, 0 at 0); z/|z| for complex z (0 at 0)."""
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        x = np.asarray(x)
        if x.dtype.kind == "c":
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(y == 0, 0, x / np.where(y == 0, 1, y))
        return np.sign(x)
    if isinstance(x, complex):
        return x / y if y else 0j
    return float((x > 0) - (x < 0))


def abs_rrule(x: _NUM) -> Any:
    y = abs(x)
    project_x = core.ProjectTo(x)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def abs_pullback(y_bar: Any) -> tuple:
        return NoTangent(), project_x(_abs_slope(x, y) * np.real(y_bar))

    return y, abs_pullback


def abs_frule(dargs: tuple, x: _NUM) -> Any:
    y = abs(x)
    x_dot = unthunk(dargs[1])
    if kit.is_zero(x_dot):
        return y, ZeroTangent()
    s = _abs_slope(x, y)
    if np.iscomplexobj(s) or isinstance(s, complex):
        return y, _fit(np.real(np.conj(s) * x_dot), y)
    return y, _fit(s * x_dot, y)


def _fit(y_dot: Any, y: Any) -> Any:
    """Give a pushforward the output's type: Python float for a Python float output,
    the array dtype for an array output."""
    if isinstance(y, np.ndarray):
        return np.asarray(y_dot, dtype=y.dtype)
    if isinstance(y, np.generic):
        # not y.dtype.type(y_dot): a traced tangent (forward over forward) stays traced
        return np.asarray(y_dot).astype(y.dtype)[()]
    if isinstance(y, float):
        return float(y_dot)
    return y_dot


for _f in (operator.abs, abs):
    rrule.register(_f)(abs_rrule)
    frule.register(_f)(abs_frule)


# ----------------------------------------------------------------------- matmul


def _matmul_a_bar(y_bar: Any, a: np.ndarray, b: np.ndarray) -> Any:
    y_bar = np.asarray(y_bar)
    bc = b if b.dtype.kind in "fiub" else b.conj()  # (conj copies a real array)
    if a.ndim == 1 and b.ndim == 1:
        return y_bar * bc
    if b.ndim == 1:  # y[..., m] = a[..., m, n] b[n]
        return y_bar[..., :, None] * bc
    if a.ndim == 1:  # y[..., p] = a[n] b[..., n, p]
        return (bc @ y_bar[..., :, None])[..., 0]
    return y_bar @ np.swapaxes(bc, -1, -2)


def _matmul_b_bar(y_bar: Any, a: np.ndarray, b: np.ndarray) -> Any:
    y_bar = np.asarray(y_bar)
    ac = a if a.dtype.kind in "fiub" else a.conj()  # (conj copies a real array)
    if a.ndim == 1 and b.ndim == 1:
        return ac * y_bar
    if a.ndim == 1:  # y[..., p] = a[n] b[..., n, p]
        return ac[:, None] * y_bar[..., None, :]
    if b.ndim == 1:  # y[..., m] = a[..., m, n] b[n]
        return (np.swapaxes(ac, -1, -2) @ y_bar[..., :, None])[..., 0]
    return np.swapaxes(ac, -1, -2) @ y_bar


@rrule.register(operator.matmul)
def matmul_rrule(a: np.ndarray, b: np.ndarray) -> Any:
    y = a @ b
    project_a = core.ProjectTo(a)
    project_b = core.ProjectTo(b)

    @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent()))
    def matmul_pullback(y_bar: Any) -> tuple:
        return (NoTangent(),
                core.Thunk(lambda: project_a(_matmul_a_bar(y_bar, a, b))),
                core.Thunk(lambda: project_b(_matmul_b_bar(y_bar, a, b))))

    return y, matmul_pullback


@frule.register(operator.matmul)
def matmul_frule(dargs: tuple, a: np.ndarray, b: np.ndarray) -> Any:
    y = a @ b
    a_dot, b_dot = unthunk(dargs[1]), unthunk(dargs[2])
    y_dot: Any = ZeroTangent()
    if not kit.is_zero(a_dot):
        y_dot = np.asarray(a_dot) @ b
    if not kit.is_zero(b_dot):
        term = a @ np.asarray(b_dot)
        y_dot = term if isinstance(y_dot, ZeroTangent) else y_dot + term
    if isinstance(y_dot, ZeroTangent):
        return y, y_dot
    return y, _fit(y_dot, y)


# -------------------------------------------------------------- sequences, dicts


def _items(t: Any, n: int) -> list:
    """The item tangents of a sequence tangent (ZeroTangent() where absent)."""
    t = unthunk(t)
    if kit.is_zero(t):
        return [ZeroTangent()] * n
    if isinstance(t, Tangent):
        b = t.backing
        if isinstance(b, dict):  # namedtuple: fields in order
            P = t.primal_type
            return [b.get(k, ZeroTangent()) for k in P._fields]
        return list(b)
    return list(t)


def _sequence_tangent(x: Any, items: list) -> Tangent:
    T = type(x)
    fields = getattr(T, "_fields", None)
    if isinstance(x, tuple) and fields is not None:
        return Tangent[T](**dict(zip(fields, items)))
    return Tangent[T](*items)


@rrule.register(operator.getitem)
def getitem_rrule(x: _SEQ, key: Any) -> Any:
    y = x[key]
    n = len(x)
    project_y = core.ProjectTo(y)

    @kit.zero_guard((NoTangent(), ZeroTangent(), NoTangent()))
    def getitem_pullback(y_bar: Any) -> tuple:
        items: list = [ZeroTangent()] * n
        if isinstance(key, slice):
            for i, t in zip(range(n)[key], _items(project_y(y_bar), len(y))):
                items[i] = t
        else:
            items[range(n)[key]] = project_y(y_bar)
        return NoTangent(), _sequence_tangent(x, items), NoTangent()

    return y, getitem_pullback


@frule.register(operator.getitem)
def getitem_frule(dargs: tuple, x: _SEQ, key: Any) -> Any:
    y = x[key]
    x_dot = unthunk(dargs[1])
    if kit.is_zero(x_dot):
        return y, ZeroTangent()
    items = _items(x_dot, len(x))
    if isinstance(key, slice):
        return y, Tangent[type(y)](*items[key])
    return y, items[key]


@rrule.register(operator.getitem)
def getitem_dict_rrule(x: dict, key: Any) -> Any:
    y = x[key]
    project_y = core.ProjectTo(y)

    @kit.zero_guard((NoTangent(), ZeroTangent(), NoTangent()))
    def getitem_dict_pullback(y_bar: Any) -> tuple:
        return NoTangent(), Tangent[type(x)]({key: project_y(y_bar)}), NoTangent()

    return y, getitem_dict_pullback


@frule.register(operator.getitem)
def getitem_dict_frule(dargs: tuple, x: dict, key: Any) -> Any:
    y = x[key]
    x_dot = unthunk(dargs[1])
    if kit.is_zero(x_dot):
        return y, ZeroTangent()
    if isinstance(x_dot, Tangent):
        return y, x_dot[key]
    return y, x_dot.get(key, ZeroTangent())


def concat_rrule(a: _SEQ, b: _SEQ) -> Any:
    y = a + b
    n = len(a)
    project_a = core.ProjectTo(a)
    project_b = core.ProjectTo(b)

    @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent()))
    def concat_pullback(y_bar: Any) -> tuple:
        items = _items(y_bar, len(y))
        return (NoTangent(), project_a(_sequence_tangent(a, items[:n])),
                project_b(_sequence_tangent(b, items[n:])))

    return y, concat_pullback


def concat_frule(dargs: tuple, a: _SEQ, b: _SEQ) -> Any:
    y = a + b
    a_dot, b_dot = unthunk(dargs[1]), unthunk(dargs[2])
    if kit.is_zero(a_dot) and kit.is_zero(b_dot):
        return y, ZeroTangent()
    return y, Tangent[type(y)](*_items(a_dot, len(a)), *_items(b_dot, len(b)))


for _f in (operator.add, operator.concat):
    # same-type operands only: tuple + list raises in Python
    rrule.register(_f, tuple, tuple)(concat_rrule)
    frule.register(_f, tuple, tuple)(concat_frule)
    rrule.register(_f, list, list)(concat_rrule)
    frule.register(_f, list, list)(concat_frule)
for _f in (operator.iadd, operator.iconcat):  # tuples are immutable: a new tuple
    rrule.register(_f, tuple, tuple)(concat_rrule)
    frule.register(_f, tuple, tuple)(concat_frule)


def _repeat_rrule(x: Any, k: int, x_first: bool) -> Any:
    y = x * k
    n = len(x)
    project_x = core.ProjectTo(x)

    def repeat_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if kit.is_zero(y_bar):
            x_bar: Any = ZeroTangent()
        else:
            items = _items(y_bar, len(y))
            sums: list = [ZeroTangent()] * n
            for j, t in enumerate(items):
                sums[j % n] = sums[j % n] + t
            x_bar = project_x(_sequence_tangent(x, sums))
        return (NoTangent(), x_bar, NoTangent()) if x_first else (NoTangent(), NoTangent(), x_bar)

    return y, repeat_pullback


def _repeat_frule(x_dot: Any, x: Any, k: int) -> Any:
    y = x * k
    x_dot = unthunk(x_dot)
    if kit.is_zero(x_dot):
        return y, ZeroTangent()
    return y, Tangent[type(y)](*(_items(x_dot, len(x)) * k))


@rrule.register(operator.mul)
def repeat_rrule(x: _SEQ, k: int) -> Any:
    return _repeat_rrule(x, k, True)


@frule.register(operator.mul)
def repeat_frule(dargs: tuple, x: _SEQ, k: int) -> Any:
    return _repeat_frule(dargs[1], x, k)


@rrule.register(operator.mul)
def repeat_left_rrule(k: int, x: _SEQ) -> Any:
    return _repeat_rrule(x, k, False)


@frule.register(operator.mul)
def repeat_left_frule(dargs: tuple, k: int, x: _SEQ) -> Any:
    return _repeat_frule(dargs[2], x, k)


# ------------------------------------------------------------ non-differentiable

for _f in (operator.lt, operator.le, operator.eq, operator.ne, operator.ge, operator.gt,
           operator.not_, operator.truth, operator.is_, operator.is_not, operator.contains,
           operator.countOf, operator.indexOf, operator.floordiv, operator.and_,
           operator.or_, operator.xor, operator.invert, operator.lshift, operator.rshift,
           operator.index, operator.length_hint, operator.inv, operator.ifloordiv,
           operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift):
    core.non_differentiable(_f)

for _t in (str, bytes, range):
    core.non_differentiable(operator.getitem, _t, object)
for _t in (str, bytes):
    core.non_differentiable(operator.add, _t, _t)
    core.non_differentiable(operator.concat, _t, _t)
    core.non_differentiable(operator.mod, _t, object)  # string formatting

del _f, _t
