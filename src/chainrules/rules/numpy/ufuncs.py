"""Rules for NumPy's elementwise functions: the ufuncs, their ``reduce``/``accumulate``
methods for ``add``, ``multiply``, ``maximum``, ``minimum``, and the elementwise
functions ``np.real``, ``np.imag``, ``np.angle``, ``np.clip``, ``np.sinc``,
``np.nan_to_num``.

Covered with frule and rrule (broadcasting, 0-d and empty arrays, Python and
NumPy scalars, float32 kept float32, complex wherever NumPy accepts it):

- arithmetic: ``add``, ``subtract``, ``multiply``, ``divide`` (``true_divide``),
  ``negative``, ``positive``, ``power`` (``pow``), ``float_power``, ``reciprocal``,
  ``square``, ``sqrt``, ``cbrt``, ``fmod``, ``remainder`` (``mod``),
  ``floor_divide``, ``divmod``, ``absolute`` (``abs``), ``fabs``, ``sign``,
  ``conjugate`` (``conj``);
- exponentials and logarithms: ``exp``, ``exp2``, ``expm1``, ``log``, ``log2``,
  ``log10``, ``log1p``, ``logaddexp``, ``logaddexp2``;
- trigonometric and hyperbolic functions and their inverses, ``arctan2``,
  ``hypot``, ``deg2rad``/``radians``, ``rad2deg``/``degrees``;
- piecewise: ``maximum``, ``minimum``, ``fmax``, ``fmin``, ``copysign``, ``ldexp``,
  ``frexp``, ``modf``, ``heaviside``, ``floor``, ``ceil``, ``trunc``, ``rint``, and
  the functions ``np.round`` (``np.around``) and ``np.fix``;
- ``np.add.reduce``, ``np.add.accumulate`` and the same for ``multiply``,
  ``maximum``, ``minimum`` live in ``ufunc_methods.py``.

Declared non-differentiable: comparisons, logical and bitwise ufuncs, ``isnan``,
``isinf``, ``isfinite``, ``isnat``, ``signbit``, ``spacing``, ``nextafter``,
``gcd``, ``lcm``. ``matmul``, ``vecdot``, ``matvec``, ``vecmat`` are contractions
and live with the reductions.

Conventions:

- the elementwise rules are ``scalar_rule`` definitions (an AD can fuse them
  through ``derivatives_given_output``; ``scalar_rule`` also takes lists and tuples
  used as arrays and refuses a positional ``out``); the others are written out below;
- complex numbers follow DESIGN §2 (the gradient of a real loss is
  ``dL/dRe z + i dL/dIm z``); holomorphic functions use ``conj(partial)`` in the
  pullback, ``abs``, ``sign``, ``conj``, ``real``, ``imag``, ``angle`` and
  ``nan_to_num`` are written out as real-linear maps;
- non-smooth points: ``abs``/``fabs`` at 0, ``hypot`` and ``arctan2`` at the
  origin, ``copysign`` at ``x1 == 0`` and complex ``sign`` at 0 give 0; ``sign``
  (real), ``floor``, ``ceil``, ``trunc``, ``rint``, ``round``, ``fix``,
  ``floor_divide`` have zero
  derivative (a ``ZeroTangent()``); ``fmod`` and ``remainder`` have derivative 1
  in ``x1`` and ``-k`` in ``x2`` where ``x1 = k*x2 + y``, the jumps ignored;
  ``heaviside(x1, x2)`` has derivative 0 in ``x1`` and ``x1 == 0`` in ``x2``;
- ties: ``maximum``, ``minimum``, ``fmax``, ``fmin`` split the cotangent equally
  between equal arguments (as JAX and PyTorch do); their ``reduce`` and
  ``accumulate`` split it equally among all the tied maximisers (an ``initial``
  value counts as one of them and absorbs its share). ``clip`` gives ties to ``x``
  (``x == a_min`` or ``x == a_max`` propagates to ``x``);
- NaN: ``maximum``/``minimum`` send the cotangent to the NaN argument they
  propagate, ``fmax``/``fmin`` to the non-NaN argument they keep;
- ``power(x, p)``: ``d/dp`` is 0 where ``x == 0`` (the limit from ``p > 0``) and
  ``Re(y log x) = y log|x|`` for real ``x < 0``, as in ChainRules.jl; ``d/dx`` is 0
  where ``p == 0``;
- integer and bool arrays, ``ldexp``'s exponent and the exponent output of
  ``frexp`` get ``NoTangent()``; a Python ``int`` argument projects like a float
  (DESIGN §2);
- ``out=`` and ``where=`` are refused with `OutArgumentError`,
  and so is ``nan_to_num(x, copy=False)`` on an array (it writes into ``x``);
- the derivative formulas run under ``np.errstate(all="ignore")``: an infinite
  derivative (``sqrt`` at 0) is returned as ``inf`` without a warning;
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import NoTangent, OutArgumentError, Tangent, ZeroTangent, scalar_rule
from chainrules.rules import _kit as kit
from chainrules.rules.array_api.elementwise import PARTIALS

_LN2 = math.log(2.0)


# ------------------------------------------------------------------------ local helpers


def _tangent(t: Any, x: Any) -> Any:
    """The tangent of ``x`` as something NumPy multiplies (a list's ``Tangent`` stacked),
    or None when it is zero or ``x`` cannot carry one."""
    t = kit.nonzero(t)
    if t is None or not kit.is_differentiable(x):
        return None
    return kit.dense_tangent(t, x) if isinstance(t, Tangent) else t


def _refuse(f: Any, args: tuple, kwargs: dict) -> None:
    """``out=`` and ``where=``, and for a ufunc its output array passed positionally."""
    kit.refuse_out(f, kwargs, args, f.nin if isinstance(f, np.ufunc) else None, where=True)


def _safe_ratio(a: Any, r: Any) -> Any:
    """``a / r``, 0 where ``r == 0`` (the non-smooth points of ``abs``, ``sign``, ``angle``)."""
    with np.errstate(all="ignore"):
        return np.where(r == 0, 0, a / np.where(r == 0, 1, r))


def _real_linear(f: Any, pushforward: Callable[..., Any], pullback: Callable[..., Any],
                 guard: Callable[..., None] = _refuse) -> None:
    """Rules of a one-argument function whose derivative is a real-linear map of the
    tangent (``abs``, ``sign``, ``conj``, ``real``...), not a complex multiplication:
    ``pushforward(x, y, x_dot, *args, **kwargs)`` and its adjoint ``pullback(x, y,
    y_bar, *args, **kwargs)``; further positional arguments get ``NoTangent()``."""

    def real_linear_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        guard(f, (x, *args), kwargs)
        y = f(x, *args, **kwargs)
        project_x = kit.array_projector(x)
        rest = (NoTangent(),) * len(args)
        zeros = (NoTangent(), kit.zero_for(x), *rest)

        @kit.zero_guard(zeros)
        def real_linear_pullback(y_bar: Any) -> tuple:
            if not kit.is_differentiable(x):
                return zeros
            return NoTangent(), project_x(pullback(x, y, y_bar, *args, **kwargs)), *rest

        return y, real_linear_pullback

    def real_linear_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        guard(f, (x, *args), kwargs)
        y = f(x, *args, **kwargs)
        x_dot = _tangent(dargs[1], x)
        if x_dot is None:
            return y, kit.zero_for(y)
        return y, kit.fit_output(pushforward(x, y, x_dot, *args, **kwargs), y)

    kit.define_rules(f, object, ..., frule_fn=real_linear_frule, rrule_fn=real_linear_rrule)


# ----------------------------------------------------------------------------- arithmetic


for _name in ("add", "subtract", "multiply", "divide", "negative", "positive", "reciprocal",
              "square", "sqrt"):
    scalar_rule(getattr(np, _name), PARTIALS[_name])
scalar_rule(np.power, PARTIALS["pow"])
# float_power computes in double precision: so do its partials
scalar_rule(np.float_power, lambda x, p, *, y, wrt: PARTIALS["pow"](
    np.asarray(x, np.result_type(x, p, np.float64)),
    np.asarray(p, np.result_type(x, p, np.float64)), y=y, xp=np, wrt=wrt))
scalar_rule(np.cbrt, lambda x, *, y: 1 / (3 * y * y))
# fmod and remainder: x1 == k * x2 + y with an integer k in both
scalar_rule(np.fmod, PARTIALS["remainder"])
scalar_rule(np.remainder, PARTIALS["remainder"])
scalar_rule(np.floor_divide, PARTIALS["floor_divide"])


def _quotient(x1: Any, x2: Any, y: Any) -> Any:
    """The integer ``k`` with ``x1 == k * x2 + y`` (exact: ``x1 - y`` is a multiple)."""
    with np.errstate(all="ignore"):
        return np.rint((x1 - y) / x2)


def divmod_rrule(x1: Any, x2: Any, *args: Any, **kwargs: Any) -> Any:
    _refuse(np.divmod, (x1, x2, *args), kwargs)
    y = np.divmod(x1, x2, **kwargs)
    project_x1 = kit.array_projector(x1)
    project_x2 = kit.array_projector(x2)
    zeros = (NoTangent(), kit.zero_for(x1), kit.zero_for(x2))

    @kit.zero_guard(zeros)
    def divmod_pullback(y_bar: Any) -> tuple:
        mod_bar = kit.nonzero(y_bar[1])
        if mod_bar is None or not kit.is_differentiable(y[1]):
            return zeros
        x2_bar = (project_x2(-_quotient(x1, x2, y[1]) * mod_bar) if kit.is_differentiable(x2)
                  else NoTangent())
        return NoTangent(), project_x1(mod_bar), x2_bar

    return y, divmod_pullback


def divmod_frule(dargs: tuple, x1: Any, x2: Any, *args: Any, **kwargs: Any) -> Any:
    _refuse(np.divmod, (x1, x2, *args), kwargs)
    y = np.divmod(x1, x2, **kwargs)
    if not kit.is_differentiable(y[1]):
        return y, Tangent[tuple](NoTangent(), NoTangent())
    x1_dot = _tangent(dargs[1], x1)
    x2_dot = _tangent(dargs[2], x2)
    mod_dot: Any = ZeroTangent() if x1_dot is None else x1_dot
    if x2_dot is not None:
        mod_dot = mod_dot - _quotient(x1, x2, y[1]) * x2_dot
    return y, Tangent[tuple](ZeroTangent(), kit.fit_output(mod_dot, y[1]))


kit.define_rules(np.divmod, object, object, ..., frule_fn=divmod_frule, rrule_fn=divmod_rrule)


# ------------------------------------------------------------ non-holomorphic functions


def _abs_direction(x: Any, y: Any) -> Any:
    """``x / |x|`` (0 at 0): the gradient of ``|x|``, real or complex."""
    return _safe_ratio(x, y) if np.iscomplexobj(x) else np.sign(x)


# d|z| = Re(conj(z / |z|) dz), whose adjoint is z / |z| Re(y_bar)
_real_linear(np.absolute,
             lambda x, y, x_dot: np.real(np.conj(_abs_direction(x, y)) * x_dot),
             lambda x, y, y_bar: _abs_direction(x, y) * np.real(y_bar))
scalar_rule(np.fabs, lambda x: np.sign(x))


def _sign_tangent(x: Any, y: Any, t: Any) -> Any:
    # y = z/|z| is the real-linear map dz -> (dz - y Re(conj(y) dz)) / |z|, self-adjoint
    if not np.iscomplexobj(x):
        return ZeroTangent()
    return _safe_ratio(t - y * np.real(np.conj(y) * t), np.abs(x))


_real_linear(np.sign, _sign_tangent, _sign_tangent)
_real_linear(np.conjugate, lambda x, y, t: np.conj(t), lambda x, y, t: np.conj(t))


def _real_cotangent(x: Any, y: Any, t: Any) -> Any:
    """``Re(t)`` in the space of ``x``: complex for a complex ``x``, explicitly, so that
    differentiating the pullback (forward over reverse) gives a complex tangent too
    (``ProjectTo`` leaves an AD's traced values as they are)."""
    r = np.real(t)
    return r * np.ones((), dtype=np.result_type(x, r)) if np.iscomplexobj(x) else r


_real_linear(np.real, lambda x, y, t: np.real(t), _real_cotangent)
# Im is dz -> Im(dz); its adjoint maps a real y_bar to i*y_bar
_real_linear(np.imag, lambda x, y, t: np.imag(t), lambda x, y, t: 1j * np.real(t))


def _angle_tangent(z: Any, y: Any, z_dot: Any, deg: bool = False) -> Any:
    # d angle = Im(conj(z) dz) / |z|^2; a real z has angle 0 or pi: locally constant
    if not np.iscomplexobj(z):
        return ZeroTangent()
    scale = 180.0 / np.pi if deg else 1.0
    return scale * _safe_ratio(np.imag(np.conj(z) * z_dot), np.real(z * np.conj(z)))


def _angle_cotangent(z: Any, y: Any, y_bar: Any, deg: bool = False) -> Any:
    # the adjoint of the tangent map: y_bar * i z / |z|^2
    if not np.iscomplexobj(z):
        return ZeroTangent()
    scale = 180.0 / np.pi if deg else 1.0
    return _safe_ratio(1j * z, np.real(z * np.conj(z))) * (scale * np.real(y_bar))


_real_linear(np.angle, _angle_tangent, _angle_cotangent)


# -------------------------------------------------------------- exponentials, logarithms


for _name in ("exp", "expm1", "log", "log2", "log10", "log1p", "logaddexp"):
    scalar_rule(getattr(np, _name), PARTIALS[_name])
scalar_rule(np.exp2, lambda x, *, y: y * _LN2)
scalar_rule(np.logaddexp2, lambda x1, x2, *, y: (np.exp2(x1 - y), np.exp2(x2 - y)))


# --------------------------------------------------------------- trigonometric, hyperbolic


for _f, _name in ((np.sin, "sin"), (np.cos, "cos"), (np.tan, "tan"), (np.arcsin, "asin"),
                  (np.arccos, "acos"), (np.arctan, "atan"), (np.sinh, "sinh"),
                  (np.cosh, "cosh"), (np.tanh, "tanh"), (np.arcsinh, "asinh"),
                  (np.arccosh, "acosh"), (np.arctanh, "atanh"), (np.arctan2, "atan2"),
                  (np.hypot, "hypot")):
    scalar_rule(_f, PARTIALS[_name])
for _f in (np.deg2rad, np.radians):
    scalar_rule(_f, lambda x: np.pi / 180)
for _f in (np.rad2deg, np.degrees):
    scalar_rule(_f, lambda x: 180 / np.pi)


def _sinc_partial(x: Any) -> Any:
    # d/dx sin(pi x)/(pi x) = pi g(pi x), g(t) = (t cos t - sin t) / t^2, computed in
    # double precision with its Taylor series near 0 (the direct form cancels there)
    x = np.asarray(x)
    t = np.pi * x.astype(np.result_type(x, np.float64))
    small = np.abs(t) < 0.1
    ts = np.where(small, t, 0)
    t2 = ts * ts
    series = ts * (-1 / 3 + t2 * (1 / 30 + t2 * (-1 / 840 + t2 * (1 / 45360
                                                                   - t2 / 3991680))))
    tl = np.where(small, 1, t)
    direct = (tl * np.cos(tl) - np.sin(tl)) / (tl * tl)
    return np.pi * np.where(small, series, direct)


scalar_rule(np.sinc, _sinc_partial, elementwise=True)


# ---------------------------------------------------------------------- piecewise functions


def _fmax_weight(x1: Any, x2: Any, greater: bool) -> Any:
    """The share of ``fmax``/``fmin``'s cotangent that goes to ``x1``: 1 where it is
    selected, 1/2 at ties, and NaN is ignored (the other argument is kept)."""
    x1 = np.asarray(x1)
    x2 = np.asarray(x2)
    wins = (x1 > x2) if greater else (x1 < x2)
    w = np.where(wins, 1.0, np.where(x1 == x2, 0.5, 0.0))
    if x1.dtype.kind in "fc" or x2.dtype.kind in "fc":
        w = np.where(np.isnan(x2), 1.0, np.where(np.isnan(x1), 0.0, w))
    return w


scalar_rule(np.maximum, PARTIALS["maximum"])
scalar_rule(np.minimum, PARTIALS["minimum"])
scalar_rule(np.fmax, lambda x1, x2: (w := _fmax_weight(x1, x2, True), 1 - w))
scalar_rule(np.fmin, lambda x1, x2: (w := _fmax_weight(x1, x2, False), 1 - w))
scalar_rule(np.copysign, PARTIALS["copysign"])
scalar_rule(np.heaviside, lambda x1, x2: (
    ZeroTangent(), (np.asarray(x1) == 0).astype(np.result_type(x1, x2, np.float16))))
for _f in (np.floor, np.ceil, np.trunc):
    scalar_rule(_f, PARTIALS[_f.__name__])
scalar_rule(np.rint, PARTIALS["round"])


def _rounding_rules(f: Any, max_args: int) -> None:
    """Rules for a rounding function (``np.round``, ``np.fix``): zero derivative away
    from the jumps; at most ``max_args`` positional arguments (a further one is ``out``)."""

    def rounding_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        kit.refuse_out(f, kwargs, (x, *args), max_args, where=True)
        y = f(x, *args, **kwargs)
        result = (NoTangent(), kit.zero_for(x), *((NoTangent(),) * len(args)))

        def rounding_pullback(y_bar: Any) -> tuple:
            return result

        return y, rounding_pullback

    def rounding_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        kit.refuse_out(f, kwargs, (x, *args), max_args, where=True)
        y = f(x, *args, **kwargs)
        return y, kit.zero_for(y)

    kit.define_rules(f, object, ..., frule_fn=rounding_frule, rrule_fn=rounding_rrule)


_rounding_rules(np.round, 2)
_rounding_rules(np.around, 2)
_rounding_rules(np.fix, 1)


def ldexp_rrule(x1: Any, x2: Any, *args: Any, **kwargs: Any) -> Any:
    _refuse(np.ldexp, (x1, x2, *args), kwargs)
    y = np.ldexp(x1, x2, **kwargs)
    project_x1 = kit.array_projector(x1)
    # the exponent is an integer: it gets NoTangent(), whatever its Python type
    zeros = (NoTangent(), kit.zero_for(x1), NoTangent())

    @kit.zero_guard(zeros)
    def ldexp_pullback(y_bar: Any) -> tuple:
        if not kit.is_differentiable(x1):
            return zeros
        return NoTangent(), project_x1(np.ldexp(y_bar, x2)), NoTangent()

    return y, ldexp_pullback


def ldexp_frule(dargs: tuple, x1: Any, x2: Any, *args: Any, **kwargs: Any) -> Any:
    _refuse(np.ldexp, (x1, x2, *args), kwargs)
    y = np.ldexp(x1, x2, **kwargs)
    x1_dot = _tangent(dargs[1], x1)
    if x1_dot is None:
        return y, ZeroTangent()
    return y, kit.fit_output(np.ldexp(x1_dot, x2), y)


kit.define_rules(np.ldexp, object, object, ..., frule_fn=ldexp_frule, rrule_fn=ldexp_rrule)


def _two_output_rules(f: Any, tangent: Callable[[Any, Any, Any], Any], second: Any) -> None:
    """Rules of ``frexp`` and ``modf``: the first output's tangent is ``tangent(x, y,
    x_dot)``, self-adjoint; the second output is piecewise constant (its tangent is
    ``second``)."""

    def two_output_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        _refuse(f, (x, *args), kwargs)
        y = f(x, **kwargs)
        project_x = kit.array_projector(x)
        zeros = (NoTangent(), kit.zero_for(x))

        @kit.zero_guard(zeros)
        def two_output_pullback(y_bar: Any) -> tuple:
            first_bar = kit.nonzero(y_bar[0])
            if first_bar is None or not kit.is_differentiable(x):
                return zeros
            return NoTangent(), project_x(tangent(x, y, first_bar))

        return y, two_output_pullback

    def two_output_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        _refuse(f, (x, *args), kwargs)
        y = f(x, **kwargs)
        x_dot = _tangent(dargs[1], x)
        if x_dot is None:
            return y, Tangent[tuple](ZeroTangent(), second)
        return y, Tangent[tuple](kit.fit_output(tangent(x, y, x_dot), y[0]), second)

    kit.define_rules(f, object, ..., frule_fn=two_output_frule, rrule_fn=two_output_rrule)


# mantissa = x * 2**-e with e piecewise constant (an integer: NoTangent)
_two_output_rules(np.frexp, lambda x, y, t: np.ldexp(t, -y[1]), NoTangent())
# the integral part is piecewise constant; the fractional part is x minus it
_two_output_rules(np.modf, lambda x, y, t: t, ZeroTangent())


# ------------------------------------------------------------------------ clip, nan_to_num


def _clip_bounds(args: tuple, kwargs: dict) -> tuple:
    lo = args[0] if len(args) > 0 else kwargs.get("min", kwargs.get("a_min", np._NoValue))
    hi = args[1] if len(args) > 1 else kwargs.get("max", kwargs.get("a_max", np._NoValue))
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    return lo, hi


def _clip_weights(a: Any, lo: Any, hi: Any) -> tuple:
    """Which of ``a``, ``lo``, ``hi`` each output element comes from (ties go to ``a``),
    following ``clip(a, lo, hi) == minimum(maximum(a, lo), hi)``."""
    a = np.asarray(a)
    t = a
    take_lo = np.zeros(a.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        if lo is not None:
            lo = np.asarray(lo)
            take_lo = (lo > a) | (np.isnan(lo) & ~np.isnan(a))
            t = np.where(take_lo, lo, a)
        take_hi = np.zeros(np.shape(t), dtype=bool)
        if hi is not None:
            hi = np.asarray(hi)
            take_hi = (hi < t) | (np.isnan(hi) & ~np.isnan(t))
    take_lo = take_lo & ~take_hi
    take_a = ~take_lo & ~take_hi
    return take_a, take_lo, take_hi


def clip_rrule(a: Any, *args: Any, **kwargs: Any) -> Any:
    kit.refuse_out(np.clip, kwargs, args, 2, where=True)
    y = np.clip(a, *args, **kwargs)
    lo, hi = _clip_bounds(args, kwargs)
    values = (a, *args)
    zeros = (NoTangent(), *(kit.zero_for(v) for v in values))

    @kit.zero_guard(zeros)
    def clip_pullback(y_bar: Any) -> tuple:
        if not kit.is_differentiable(y):
            return zeros
        weights = _clip_weights(a, lo, hi)
        return NoTangent(), *(
            kit.array_projector(v)(np.where(w, y_bar, 0)) if kit.is_differentiable(v) else zero
            for v, w, zero in zip(values, weights, zeros[1:]))

    return y, clip_pullback


def clip_frule(dargs: tuple, a: Any, *args: Any, **kwargs: Any) -> Any:
    kit.refuse_out(np.clip, kwargs, args, 2, where=True)
    y = np.clip(a, *args, **kwargs)
    if not kit.is_differentiable(y):
        return y, NoTangent()
    weights = _clip_weights(a, *_clip_bounds(args, kwargs))
    y_dot: Any = ZeroTangent()
    for w, x, x_dot in zip(weights, (a, *args), dargs[1:]):
        x_dot = _tangent(x_dot, x)
        if x_dot is not None:
            y_dot = y_dot + np.where(w, x_dot, 0)
    return y, kit.fit_output(y_dot, y)


kit.define_rules(np.clip, object, ..., frule_fn=clip_frule, rrule_fn=clip_rrule)


def _finite_parts(x: Any, y: Any, t: Any, *args: Any, **kwargs: Any) -> Any:
    """``t`` where the matching real or imaginary part of ``x`` is finite, else 0."""
    if np.iscomplexobj(x):
        re = np.where(np.isfinite(np.real(x)), np.real(t), 0)
        im = np.where(np.isfinite(np.imag(x)), np.imag(t), 0)
        return re + 1j * im
    return np.where(np.isfinite(x), t, 0)


def _nan_to_num_guard(f: Any, args: Any, kwargs: dict) -> None:
    copy = args[1] if len(args) > 1 else kwargs.get("copy", True)
    if not copy and isinstance(args[0], np.ndarray):
        raise OutArgumentError(np.nan_to_num)


_real_linear(np.nan_to_num, _finite_parts, _finite_parts, guard=_nan_to_num_guard)


# ------------------------------------------------------------------ non-differentiable


for _f in (
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift,
    np.right_shift, np.bitwise_count, np.gcd, np.lcm,
    np.isnan, np.isinf, np.isfinite, np.isnat, np.signbit, np.spacing, np.nextafter,
):
    core.non_differentiable(_f)
