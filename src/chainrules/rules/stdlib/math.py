"""Rules for the standard library's ``math`` module.

Arguments are Python floats, Python ints (differentiable like floats when given a
float tangent, DESIGN §2) or NumPy real scalars; cotangents are projected back to
each argument's type (``np.float32`` stays ``np.float32``).

Covered with frule + rrule:

- ``scalar_rule``: ``sin``, ``cos``, ``tan``, ``asin``, ``acos``, ``atan``,
  ``atan2``, ``sinh``, ``cosh``, ``tanh``, ``asinh``, ``acosh``, ``atanh``,
  ``exp``, ``exp2``, ``expm1``, ``log1p``, ``log2``, ``log10``, ``sqrt``, ``cbrt``,
  ``pow``, ``erf``, ``erfc``, ``gamma``, ``lgamma``, ``fabs``, ``copysign``,
  ``fmod``, ``remainder``, ``degrees``, ``radians``, ``modf``, ``nextafter``,
  ``fma`` (3.13+);
- hand-written: ``log`` (with and without base), ``hypot`` (n-ary), ``dist``,
  ``prod``, ``fsum``, ``sumprod`` (3.12+), ``ldexp``, ``frexp`` (the integer
  exponent gets ``NoTangent()``).

Non-differentiable (integer or boolean results): ``ceil``, ``floor``, ``trunc``,
``factorial``, ``comb``, ``perm``, ``gcd``, ``lcm``, ``isqrt``, ``isclose``,
``isfinite``, ``isinf``, ``isnan``, ``ulp``.

Conventions at non-smooth points and domain edges:

- ``fabs(0)``: 0. ``copysign(x, s)``: ``sign(x) * sign(s)`` w.r.t. ``x`` (0 at
  ``x == 0``), 0 w.r.t. ``s``.
- ``hypot`` and ``dist`` at the origin, ``atan2(0, 0)``: all partials 0.
- ``fmod(x, m)``, ``remainder(x, m)``: ``1`` and ``-n`` with ``n`` the integer
  quotient used (valid away from the jumps). ``modf``: fractional part slope 1,
  integer part 0. ``nextafter(x, t)``: 1 w.r.t. ``x``, 0 w.r.t. ``t``.
- Infinite slopes at domain edges (``sqrt(0)``, ``cbrt(0)``, ``asin(±1)``,
  ``acos(±1)``, ``acosh(1)``, ``pow(0, p)`` with ``0 < p < 1``) give ``inf``,
  never an exception.
- ``pow(x, p)`` w.r.t. ``p`` at ``x == 0``: 0; for ``x < 0`` (then ``p`` is an
  integer): ``y * log|x|``, the real part of ``y * log(x)``. W.r.t. ``x`` at
  ``p == 0``: 0.
- ``gamma`` and ``lgamma`` at non-positive integers (poles): ``nan``.
"""

from __future__ import annotations

import math
from typing import Any

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, ZeroTangent, frule, rrule, scalar_rule, unthunk
from chainrules.rules import _kit as kit

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _recip(d: Any) -> Any:
    """1 / d, or +inf where d is 0 (an infinite slope at a domain edge)."""
    return 1.0 / d if d else math.inf


def _sign(x: Any) -> float:
    """sign(x) with sign(0) == 0 (and nan for nan)."""
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return 0.0 if x == 0 else math.nan



def digamma(x: float) -> float:
    """The digamma function ψ(x) = Γ'(x)/Γ(x) for real ``x`` (``nan`` at the poles).

    Recurrence up to ``x >= 10``, then the asymptotic series (relative error
    about 1e-16); reflection for ``x < 0.5``.

    >>> round(digamma(1.0), 12)   # -Euler's gamma
    -0.577215664902
    """
    x = float(x)
    if x <= 0 and x == math.floor(x):
        return math.nan
    if x < 0.5:
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (-1 / 12 + f * (1 / 120 + f * (-1 / 252 + f * (1 / 240 + f * (
        -1 / 132 + f * (691 / 32760 - f / 12))))))
    return acc + math.log(x) - 0.5 / x + series


# ------------------------------------------------------------------ one argument

scalar_rule(math.sin, lambda x: math.cos(x))
scalar_rule(math.cos, lambda x: -math.sin(x))
scalar_rule(math.tan, lambda x, *, y: 1.0 + y * y)
scalar_rule(math.asin, lambda x: _recip(math.sqrt((1.0 - x) * (1.0 + x))))
scalar_rule(math.acos, lambda x: -_recip(math.sqrt((1.0 - x) * (1.0 + x))))
scalar_rule(math.atan, lambda x: 1.0 / (1.0 + x * x))
scalar_rule(math.sinh, lambda x: math.cosh(x))
scalar_rule(math.cosh, lambda x: math.sinh(x))
scalar_rule(math.tanh, lambda x, *, y: 1.0 - y * y)
scalar_rule(math.asinh, lambda x: 1.0 / math.hypot(x, 1.0))
scalar_rule(math.acosh, lambda x: _recip(math.sqrt((x - 1.0) * (x + 1.0))))
scalar_rule(math.atanh, lambda x: 1.0 / ((1.0 - x) * (1.0 + x)))
scalar_rule(math.exp, lambda x, *, y: y)
scalar_rule(math.expm1, lambda x, *, y: y + 1.0)
scalar_rule(math.log1p, lambda x: 1.0 / (1.0 + x))
scalar_rule(math.log2, lambda x: 1.0 / (x * _LN2))
scalar_rule(math.log10, lambda x: 1.0 / (x * _LN10))
scalar_rule(math.sqrt, lambda x, *, y: 0.5 * _recip(y))
scalar_rule(math.erf, lambda x: _TWO_OVER_SQRT_PI * math.exp(-x * x))
scalar_rule(math.erfc, lambda x: -_TWO_OVER_SQRT_PI * math.exp(-x * x))
scalar_rule(math.gamma, lambda x, *, y: y * digamma(x))
scalar_rule(math.lgamma, lambda x: digamma(x))
scalar_rule(math.fabs, _sign)
scalar_rule(math.degrees, lambda x: 180.0 / math.pi)
scalar_rule(math.radians, lambda x: math.pi / 180.0)
scalar_rule(math.modf, lambda x: (1.0, 0.0), nout=2)
if hasattr(math, "exp2"):  # 3.11+
    scalar_rule(math.exp2, lambda x, *, y: y * _LN2)
if hasattr(math, "cbrt"):  # 3.11+
    scalar_rule(math.cbrt, lambda x, *, y: _recip(3.0 * y * y))


# ---------------------------------------------------------------- two arguments


def _atan2_partials(a: Any, b: Any) -> tuple:
    r2 = a * a + b * b
    if not r2:
        return 0.0, 0.0
    return b / r2, -a / r2


scalar_rule(math.atan2, _atan2_partials)
scalar_rule(math.copysign, lambda x, s: (_sign(x) * math.copysign(1.0, s), 0.0))
def _minus_quotient(x: float, m: float, y: float) -> float:
    """``-n`` for ``y = x - n m``; NaN when an input is NaN (``round`` would raise)."""
    q = (x - y) / m
    return -float(round(q)) if math.isfinite(q) else math.nan


scalar_rule(math.fmod, lambda x, m, *, y: (1.0, _minus_quotient(x, m, y)))
scalar_rule(math.remainder, lambda x, m, *, y: (1.0, _minus_quotient(x, m, y)))
scalar_rule(math.nextafter, lambda x, t: (1.0, 0.0))
if hasattr(math, "fma"):  # 3.13+
    scalar_rule(math.fma, lambda x, z, c: (z, x, 1.0))


def _pow_dx(x: Any, p: Any) -> Any:
    if p == 0:
        return 0.0
    try:
        return p * math.pow(x, p - 1.0)
    except ValueError:  # 0 ** (p - 1) with 0 < p < 1: infinite slope
        return math.inf


def _pow_dp(x: Any, y: Any) -> Any:
    if x == 0:
        return 0.0
    return y * math.log(abs(x))  # x < 0 (p integer): the real part of y * log(x)


scalar_rule(math.pow, lambda x, p, *, y: (_pow_dx(x, p), _pow_dp(x, y)))


# ------------------------------------------------------------------- hand-written


@rrule.register(math.log)
def log_rrule(x, *base) -> Any:
    y = math.log(x, *base)
    project_x = ProjectTo(x)
    project_base = [ProjectTo(b) for b in base]

    @kit.zero_guard((NoTangent(), ZeroTangent(), *(ZeroTangent() for _ in base)))
    def log_pullback(y_bar: Any) -> tuple:
        if not base:
            return NoTangent(), project_x(y_bar / x)
        b = base[0]
        log_b = math.log(b)
        return (NoTangent(), project_x(y_bar / (x * log_b)),
                project_base[0](-y * y_bar / (b * log_b)))

    return y, log_pullback


@frule.register(math.log)
def log_frule(dargs: tuple, x, *base) -> Any:
    y = math.log(x, *base)
    x_dot = unthunk(dargs[1])
    y_dot: Any = ZeroTangent()
    log_b = math.log(base[0]) if base else 1.0
    if not kit.is_zero(x_dot):
        y_dot = x_dot / (x * log_b)
    if base:
        b_dot = unthunk(dargs[2])
        if not kit.is_zero(b_dot):
            y_dot = y_dot + (-y * b_dot / (base[0] * log_b))
    return y, y_dot


@rrule.register(math.hypot)
def hypot_rrule(*coords) -> Any:
    y = math.hypot(*coords)
    projectors = [ProjectTo(c) for c in coords]

    @kit.zero_guard((NoTangent(), *(ZeroTangent() for _ in coords)))
    def hypot_pullback(y_bar: Any) -> tuple:
        s = y_bar / y if y else 0.0  # at the origin: 0
        return (NoTangent(), *(p(c * s) for p, c in zip(projectors, coords)))

    return y, hypot_pullback


@frule.register(math.hypot)
def hypot_frule(dargs: tuple, *coords) -> Any:
    y = math.hypot(*coords)
    y_dot: Any = ZeroTangent()
    for c, c_dot in zip(coords, dargs[1:]):
        c_dot = unthunk(c_dot)
        if not kit.is_zero(c_dot) and y:
            y_dot = y_dot + c * c_dot / y
    return y, y_dot


def _coords(t: Any, n: int) -> list:
    """The item tangents of a sequence tangent, 0.0 where absent."""
    t = unthunk(t)
    if kit.is_zero(t):
        return [0.0] * n
    items = list(t.backing) if isinstance(t, core.Tangent) else list(t)
    return [0.0 if kit.is_zero(unthunk(i)) else unthunk(i) for i in items]


@rrule.register(math.dist)
def dist_rrule(p, q) -> Any:
    y = math.dist(p, q)
    project_p = ProjectTo(p)
    project_q = ProjectTo(q)

    @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent()))
    def dist_pullback(y_bar: Any) -> tuple:
        s = y_bar / y if y else 0.0  # at p == q: 0
        p_bar = [(a - b) * s for a, b in zip(p, q)]
        return NoTangent(), project_p(p_bar), project_q([-g for g in p_bar])

    return y, dist_pullback


@frule.register(math.dist)
def dist_frule(dargs: tuple, p, q) -> Any:
    y = math.dist(p, q)
    p_dot, q_dot = unthunk(dargs[1]), unthunk(dargs[2])
    if (kit.is_zero(p_dot) and kit.is_zero(q_dot)) or not y:
        return y, ZeroTangent()
    n = len(p)
    y_dot = sum((a - b) * (da - db) for a, b, da, db in zip(
        p, q, _coords(p_dot, n), _coords(q_dot, n))) / y
    return y, float(y_dot)


def _partial_products(items: list, start: Any) -> list:
    """``start * prod(items[j] for j != i)`` for each ``i``, without dividing."""
    n = len(items)
    prefix = [start]
    for v in items[:-1]:
        prefix.append(prefix[-1] * v)
    suffix: list = [1] * n
    for i in range(n - 2, -1, -1):
        suffix[i] = items[i + 1] * suffix[i + 1]
    return [a * b for a, b in zip(prefix, suffix)]


@rrule.register(math.prod)
def prod_rrule(x: tuple | list, *, start=1) -> Any:
    y = math.prod(x, start=start)
    project_x = ProjectTo(x)

    def prod_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if not x:
            return NoTangent(), NoTangent()
        if kit.is_zero(y_bar):
            return NoTangent(), ZeroTangent()
        partials = _partial_products(list(x), start)
        return NoTangent(), project_x([kit.conj(g) * y_bar for g in partials])

    return y, prod_pullback


@frule.register(math.prod)
def prod_frule(dargs: tuple, x: tuple | list, *, start=1) -> Any:
    y = math.prod(x, start=start)
    x_dot = unthunk(dargs[1])
    if kit.is_zero(x_dot):
        return y, ZeroTangent()
    partials = _partial_products(list(x), start)
    y_dot: Any = ZeroTangent()
    for g, t in zip(partials, _coords(x_dot, len(x))):
        y_dot = y_dot + g * t
    return y, y_dot


@rrule.register(math.fsum)
def fsum_rrule(x: tuple | list) -> Any:
    y = math.fsum(x)
    project_x = ProjectTo(x)
    n = len(x)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def fsum_pullback(y_bar: Any) -> tuple:
        return NoTangent(), project_x([y_bar] * n)

    return y, fsum_pullback


@frule.register(math.fsum)
def fsum_frule(dargs: tuple, x: tuple | list) -> Any:
    y = math.fsum(x)
    x_dot = unthunk(dargs[1])
    if kit.is_zero(x_dot):
        return y, ZeroTangent()
    return y, math.fsum(float(t) for t in _coords(x_dot, len(x)))


if hasattr(math, "sumprod"):  # 3.12+

    @rrule.register(math.sumprod)
    def sumprod_rrule(p: tuple | list, q: tuple | list) -> Any:
        y = math.sumprod(p, q)
        project_p = ProjectTo(p)
        project_q = ProjectTo(q)

        @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent()))
        def sumprod_pullback(y_bar: Any) -> tuple:
            return (NoTangent(), project_p([kit.conj(b) * y_bar for b in q]),
                    project_q([kit.conj(a) * y_bar for a in p]))

        return y, sumprod_pullback

    @frule.register(math.sumprod)
    def sumprod_frule(dargs: tuple, p: tuple | list, q: tuple | list) -> Any:
        y = math.sumprod(p, q)
        n = len(p)
        p_dot, q_dot = unthunk(dargs[1]), unthunk(dargs[2])
        if kit.is_zero(p_dot) and kit.is_zero(q_dot):
            return y, ZeroTangent()
        y_dot = sum(da * b + a * db for a, b, da, db in zip(
            p, q, _coords(p_dot, n), _coords(q_dot, n)))
        return y, y_dot


@rrule.register(math.ldexp)
def ldexp_rrule(x, i: int) -> Any:
    y = math.ldexp(x, i)
    project_x = ProjectTo(x)

    @kit.zero_guard((NoTangent(), ZeroTangent(), NoTangent()))
    def ldexp_pullback(y_bar: Any) -> tuple:
        return NoTangent(), project_x(math.ldexp(y_bar, i)), NoTangent()

    return y, ldexp_pullback


@frule.register(math.ldexp)
def ldexp_frule(dargs: tuple, x, i: int) -> Any:
    y = math.ldexp(x, i)
    x_dot = unthunk(dargs[1])
    if kit.is_zero(x_dot):
        return y, ZeroTangent()
    return y, math.ldexp(x_dot, i)


@rrule.register(math.frexp)
def frexp_rrule(x) -> Any:
    y = math.frexp(x)
    e = y[1]
    project_x = ProjectTo(x)

    def frexp_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        m_bar = ZeroTangent() if kit.is_zero(y_bar) else unthunk(y_bar[0])
        if kit.is_zero(m_bar):
            return NoTangent(), ZeroTangent()
        return NoTangent(), project_x(math.ldexp(m_bar, -e))

    return y, frexp_pullback


@frule.register(math.frexp)
def frexp_frule(dargs: tuple, x) -> Any:
    y = math.frexp(x)
    x_dot = unthunk(dargs[1])
    if kit.is_zero(x_dot):
        return y, ZeroTangent()
    return y, core.Tangent[tuple](math.ldexp(x_dot, -y[1]), NoTangent())


# ------------------------------------------------------------ non-differentiable

for _f in (math.ceil, math.floor, math.trunc, math.factorial, math.comb, math.perm,
           math.gcd, math.lcm, math.isqrt, math.isclose, math.isfinite, math.isinf,
           math.isnan, math.ulp):
    core.non_differentiable(_f)
del _f
