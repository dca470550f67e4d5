"""Rules for the elementwise functions of the array API standard, written once against ``xp``.

``PARTIALS`` maps a standard name (``"sin"``, ``"atan2"``) to its partial derivatives,
written with the namespace ``xp`` that ``scalar_rule`` passes; the same table serves
NumPy's ufuncs (``rules/numpy/ufuncs.py`` registers it on ``np.sin`` …) and any
namespace given to `register_namespace`. The non-holomorphic
functions (``abs``, ``sign``, ``conj``, ``real``, ``imag``) and ``clip`` are written out
here for the other namespaces; NumPy keeps its own rules for them, which also take
``out=``, lists and NumPy's extra arguments.

Conventions are NumPy's (``rules/numpy/ufuncs.py``): ties of ``maximum``/``minimum``
split the cotangent equally, ``abs``, ``hypot``, ``atan2``, ``copysign`` and complex
``sign`` give 0 at their non-smooth points, the rounding functions and ``floor_divide``
have zero derivative, ``remainder`` has ``d/dx2 = -round((x1 - y) / x2)``, ``pow``'s
``d/dp`` is 0 where ``x == 0`` and uses ``log|x|`` for real ``x < 0``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, Thunk, ZeroTangent, non_differentiable, unthunk
from chainrules.rules import _kit as kit
from chainrules.rules.array_api._common import as_arrays, is_complex, linear_unary

__all__ = ["NON_DIFFERENTIABLE", "PARTIALS", "register"]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

#: standard name -> partials(*args, [y=], xp=), one entry per argument
PARTIALS: dict[str, Callable[..., Any]] = {}


def _partials(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def add(fn: Callable[..., Any]) -> Callable[..., Any]:
        PARTIALS[name] = fn
        return fn

    return add


# ----------------------------------------------------------------------------- arithmetic


@_partials("add")
def _add_partials(x1: Any, x2: Any, *, xp: Any) -> tuple:
    return 1.0, 1.0


@_partials("subtract")
def _subtract_partials(x1: Any, x2: Any, *, xp: Any) -> tuple:
    return 1.0, -1.0


@_partials("multiply")
def _multiply_partials(x1: Any, x2: Any, *, xp: Any) -> tuple:
    return x2, x1


@_partials("divide")
def _divide_partials(x1: Any, x2: Any, *, y: Any, xp: Any, wrt: tuple = (True, True)) -> tuple:
    (x2,) = as_arrays(xp, x2)
    return (1 / x2 if wrt[0] else None), (-y / x2 if wrt[1] else None)


@_partials("negative")
def _negative_partial(x: Any, *, xp: Any) -> float:
    return -1.0


@_partials("positive")
def _positive_partial(x: Any, *, xp: Any) -> float:
    return 1.0


@_partials("pow")
def _pow_partials(x: Any, p: Any, *, y: Any, xp: Any, wrt: tuple = (True, True)) -> tuple:
    x, p = as_arrays(xp, x, p)
    # The masked branch of each where gets a harmless input (1 for a zero x or p): a
    # where passes a zero cotangent to its masked branch, and zero times an infinite
    # partial (log 0, 0 ** -1) would turn the second derivative into NaN.
    dx = p * xp.where(p == 0, xp.ones_like(x), x) ** (p - 1)
    dx = xp.where(p == 0, xp.zeros_like(dx), dx)
    if not wrt[1]:  # a constant exponent: its partial (a logarithm) is not needed
        return dx, None
    x_safe = xp.where(x == 0, xp.ones_like(x), x)
    if is_complex(xp, x, p, y):
        log_x = xp.log(x_safe if is_complex(xp, x) else xp.astype(x_safe, y.dtype))
    else:
        log_x = xp.log(xp.abs(x_safe))
    dp = y * log_x
    dp = xp.where(x == 0, xp.zeros_like(dp), dp)
    return dx, dp


@_partials("square")
def _square_partial(x: Any, *, xp: Any) -> Any:
    return 2 * x


@_partials("sqrt")
def _sqrt_partial(x: Any, *, y: Any, xp: Any) -> Any:
    return 0.5 / y


@_partials("reciprocal")
def _reciprocal_partial(x: Any, *, y: Any, xp: Any) -> Any:
    return -(y * y)


@_partials("remainder")
def _remainder_partials(x1: Any, x2: Any, *, y: Any, xp: Any,
                        wrt: tuple = (True, True)) -> tuple:
    if not wrt[1]:  # a constant modulus (x % 2.0)
        return 1.0, None
    # x1 == k * x2 + y with an integer k, exact: round, not floor, absorbs rounding error
    x1, x2 = as_arrays(xp, x1, x2)
    return 1.0, -xp.round((x1 - y) / x2)


@_partials("floor_divide")
def _floor_divide_partials(x1: Any, x2: Any, *, xp: Any) -> tuple:
    return ZeroTangent(), ZeroTangent()


def _zero_partial(x: Any, *, xp: Any) -> Any:
    return ZeroTangent()


for _name in ("floor", "ceil", "trunc", "round"):
    PARTIALS[_name] = _zero_partial


# -------------------------------------------------------------- exponentials, logarithms


@_partials("exp")
def _exp_partial(x: Any, *, y: Any, xp: Any) -> Any:
    return y


@_partials("expm1")
def _expm1_partial(x: Any, *, y: Any, xp: Any) -> Any:
    return y + 1


@_partials("log")
def _log_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return 1 / x


@_partials("log2")
def _log2_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return 1 / (x * _LN2)


@_partials("log10")
def _log10_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return 1 / (x * _LN10)


@_partials("log1p")
def _log1p_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return 1 / (1 + x)


@_partials("logaddexp")
def _logaddexp_partials(x1: Any, x2: Any, *, y: Any, xp: Any) -> tuple:
    x1, x2 = as_arrays(xp, x1, x2)
    return xp.exp(x1 - y), xp.exp(x2 - y)


# --------------------------------------------------------------- trigonometric, hyperbolic


@_partials("sin")
def _sin_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return xp.cos(x)


@_partials("cos")
def _cos_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return -xp.sin(x)


@_partials("tan")
def _tan_partial(x: Any, *, y: Any, xp: Any) -> Any:
    return 1 + y * y


@_partials("asin")
def _asin_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return 1 / xp.sqrt((1 - x) * (1 + x))


@_partials("acos")
def _acos_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return -1 / xp.sqrt((1 - x) * (1 + x))


@_partials("atan")
def _atan_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return 1 / (1 + x * x)


@_partials("sinh")
def _sinh_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return xp.cosh(x)


@_partials("cosh")
def _cosh_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return xp.sinh(x)


@_partials("tanh")
def _tanh_partial(x: Any, *, y: Any, xp: Any) -> Any:
    return 1 - y * y


@_partials("asinh")
def _asinh_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return 1 / xp.sqrt(1 + x * x)


@_partials("acosh")
def _acosh_partial(x: Any, *, xp: Any) -> Any:
    # sqrt(x-1)*sqrt(x+1), not sqrt(x*x-1): the same branch cut as acosh for complex x
    (x,) = as_arrays(xp, x)
    return 1 / (xp.sqrt(x - 1) * xp.sqrt(x + 1))


@_partials("atanh")
def _atanh_partial(x: Any, *, xp: Any) -> Any:
    (x,) = as_arrays(xp, x)
    return 1 / ((1 - x) * (1 + x))


def _safe_divide(xp: Any, a: Any, b: Any) -> Any:
    """``a / b``, and 0 where ``b == 0``."""
    zero = b == 0
    q = a / xp.where(zero, xp.ones_like(b), b)
    return xp.where(zero, xp.zeros_like(q), q)


@_partials("atan2")
def _atan2_partials(x1: Any, x2: Any, *, xp: Any) -> tuple:
    # x2 / r / r rather than x2 / (x1^2 + x2^2): no underflow or overflow of the square
    x1, x2 = as_arrays(xp, x1, x2)
    r = xp.hypot(x1, x2)
    return (_safe_divide(xp, _safe_divide(xp, x2, r), r),
            -_safe_divide(xp, _safe_divide(xp, x1, r), r))


@_partials("hypot")
def _hypot_partials(x1: Any, x2: Any, *, y: Any, xp: Any) -> tuple:
    x1, x2 = as_arrays(xp, x1, x2)
    return _safe_divide(xp, x1, y), _safe_divide(xp, x2, y)


# ---------------------------------------------------------------------- piecewise functions


def _first_weight(xp: Any, x1: Any, x2: Any, greater: bool) -> Any:
    """The share of the cotangent of ``maximum``/``minimum`` that goes to ``x1``: 1 where
    ``x1`` is selected or NaN, 0 where ``x2`` is, 1/2 at ties."""
    x1, x2 = as_arrays(xp, x1, x2)
    dtype = xp.result_type(x1, x2)
    if not xp.isdtype(dtype, "real floating"):
        dtype = xp.float64
    wins = (x1 > x2) if greater else (x1 < x2)
    w = xp.astype(wins, dtype) + 0.5 * xp.astype(x1 == x2, dtype)
    if xp.isdtype(xp.result_type(x1, x2), "real floating"):
        w = xp.where(xp.isnan(x1), xp.ones_like(w), xp.where(xp.isnan(x2), xp.zeros_like(w), w))
    return w


@_partials("maximum")
def _maximum_partials(x1: Any, x2: Any, *, xp: Any) -> tuple:
    w = _first_weight(xp, x1, x2, greater=True)
    return w, 1 - w


@_partials("minimum")
def _minimum_partials(x1: Any, x2: Any, *, xp: Any) -> tuple:
    w = _first_weight(xp, x1, x2, greater=False)
    return w, 1 - w


@_partials("copysign")
def _copysign_partials(x1: Any, x2: Any, *, xp: Any) -> tuple:
    x1, x2 = as_arrays(xp, x1, x2)
    s = xp.sign(x1)
    return xp.where(xp.signbit(x2), -s, s), ZeroTangent()


# ------------------------------------------------------------ non-holomorphic functions


def _abs_direction(xp: Any, x: Any, y: Any) -> Any:
    """``x / |x|`` (0 at 0): the gradient of ``|x|``, real or complex."""
    if is_complex(xp, x):
        return _safe_divide(xp, x, xp.astype(y, x.dtype))
    return xp.sign(x)


def _abs_pushforward(xp: Any, x: Any, y: Any, x_dot: Any) -> Any:
    # d|z| = Re(conj(z / |z|) dz)
    d = _abs_direction(xp, x, y)
    return xp.real(xp.conj(d) * x_dot) if is_complex(xp, d, x_dot) else d * x_dot


def _abs_pullback(xp: Any, x: Any, y: Any, y_bar: Any) -> Any:
    return _abs_direction(xp, x, y) * (xp.real(y_bar) if is_complex(xp, y_bar) else y_bar)


def _sign_tangent(xp: Any, x: Any, y: Any, t: Any) -> Any:
    # y = z/|z| is the real-linear map dz -> (dz - y Re(conj(y) dz)) / |z|, self-adjoint
    if not is_complex(xp, x):
        return xp.zeros_like(x)
    t = xp.astype(t, x.dtype) if not is_complex(xp, t) else t
    return _safe_divide(xp, t - y * xp.astype(xp.real(xp.conj(y) * t), x.dtype),
                        xp.astype(xp.abs(x), x.dtype))


def _conj_tangent(xp: Any, x: Any, y: Any, t: Any) -> Any:
    return xp.conj(t) if is_complex(xp, t) else t


def _real_tangent(xp: Any, x: Any, y: Any, t: Any) -> Any:
    return xp.real(t) if is_complex(xp, t) else t


def _imag_pushforward(xp: Any, x: Any, y: Any, x_dot: Any) -> Any:
    return xp.imag(x_dot) if is_complex(xp, x_dot) else xp.zeros_like(x_dot)


def _imag_pullback(xp: Any, x: Any, y: Any, y_bar: Any) -> Any:
    # Im is dz -> Im(dz); its adjoint maps a real y_bar to i*y_bar
    if not is_complex(xp, x):
        return xp.zeros_like(y_bar)
    y_bar = xp.real(y_bar) if is_complex(xp, y_bar) else y_bar
    return xp.astype(y_bar, x.dtype) * 1j


_LINEAR_UNARY = {
    "abs": (_abs_pushforward, _abs_pullback),
    "sign": (_sign_tangent, _sign_tangent),
    "conj": (_conj_tangent, _conj_tangent),
    "real": (_real_tangent, _real_tangent),
    "imag": (_imag_pushforward, _imag_pullback),
}


def _clip_weights(xp: Any, x: Any, lo: Any, hi: Any) -> tuple:
    """Masks of the output elements taken from ``x``, ``min`` and ``max`` (ties go to
    ``x``), following ``clip(x, lo, hi) == minimum(maximum(x, lo), hi)``."""
    t = x
    take_lo = xp.zeros(x.shape, dtype=xp.bool)
    if lo is not None:
        take_lo = lo > x
        t = xp.where(take_lo, lo, x)
    take_hi = xp.zeros(t.shape, dtype=xp.bool)
    if hi is not None:
        take_hi = hi < t
    take_lo = xp.logical_and(take_lo, xp.logical_not(take_hi))
    take_x = xp.logical_not(xp.logical_or(take_lo, take_hi))
    return take_x, take_lo, take_hi


def _register_clip(xp: Any, clip: Any) -> None:
    def clip_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        y = clip(x, *args, **kwargs)
        lo = args[0] if len(args) > 0 else kwargs.get("min")
        hi = args[1] if len(args) > 1 else kwargs.get("max")
        values = (x, lo, hi)[: 1 + len(args)]
        projectors = [ProjectTo(v) for v in values]

        @kit.zero_guard(lambda: (NoTangent(), *(p(ZeroTangent()) for p in projectors)))
        def clip_pullback(y_bar: Any) -> tuple:
            def clip_cotangent(i: int) -> Any:
                w = _clip_weights(xp, x, lo, hi)[i]
                return projectors[i](xp.where(w, y_bar, xp.zeros_like(y_bar)))

            return NoTangent(), *(
                NoTangent() if values[i] is None
                else Thunk(lambda i=i: clip_cotangent(i))
                for i in range(len(values)))

        return y, clip_pullback

    def clip_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        y = clip(x, *args, **kwargs)
        lo = args[0] if len(args) > 0 else kwargs.get("min")
        hi = args[1] if len(args) > 1 else kwargs.get("max")
        ws = _clip_weights(xp, x, lo, hi)
        y_dot: Any = ZeroTangent()
        for w, v, v_dot in zip(ws, (x, *args), dargs[1:]):
            v_dot = unthunk(v_dot)
            if v is None or isinstance(v_dot, ZeroTangent) or not hasattr(v_dot, "shape"):
                continue
            term = xp.where(w, v_dot, xp.zeros_like(v_dot))
            y_dot = term if isinstance(y_dot, ZeroTangent) else y_dot + term
        if not isinstance(y_dot, ZeroTangent) and tuple(y_dot.shape) != tuple(y.shape):
            y_dot = xp.broadcast_to(y_dot, tuple(y.shape))
        return y, y_dot

    kit.define_rules(clip, object, ..., frule_fn=clip_frule, rrule_fn=clip_rrule)


#: comparisons, logical and bitwise functions, tests of values
NON_DIFFERENTIABLE = (
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_left_shift",
    "bitwise_right_shift", "isnan", "isinf", "isfinite", "signbit", "nextafter",
)


def register(xp: Any, fresh: Callable[[Any], bool]) -> list[str]:
    """Register the elementwise rules on the functions of namespace ``xp`` that ``fresh``
    accepts (those without rules yet); returns the names registered."""
    done = []
    for name, partials in PARTIALS.items():
        f = getattr(xp, name, None)
        if f is not None and fresh(f):
            core.scalar_rule(f, partials)
            done.append(name)
    for name, (pushforward, pullback) in _LINEAR_UNARY.items():
        f = getattr(xp, name, None)
        if f is not None and fresh(f):
            linear_unary(f, name, pushforward, pullback)
            done.append(name)
    clip = getattr(xp, "clip", None)
    if clip is not None and fresh(clip):
        _register_clip(xp, clip)
        done.append("clip")
    for name in NON_DIFFERENTIABLE:
        f = getattr(xp, name, None)
        if f is not None and fresh(f):
            non_differentiable(f)
            done.append(name)
    return done
