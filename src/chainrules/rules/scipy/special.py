"""Rules for ``scipy.special``.

Elementwise functions are ``scalar_rule`` one-liners (broadcasting, dtypes and the
complex convention come from the core); complex inputs are supported where SciPy
accepts them and the derivative is holomorphic (gamma, loggamma, erf, erfc, erfcx,
ndtr, log_ndtr, xlogy, xlog1py, wofz, dawsn, exp1, expi, expm1, log1p).

Derivatives with respect to an order (``jv``, ``yv``, ``iv``, ``kv`` w.r.t. ``v``) exist
but have no closed form SciPy can evaluate: they are ``not_implemented`` (with the
reason), unless the order is an integer (a Python int or an integer array), which cannot
be perturbed and gets ``NoTangent()``. ``polygamma``'s order ``n`` is an integer by
definition. Likewise the shape parameters of ``betainc`` and ``betaincinv`` (a, b) are
``not_implemented``; their derivatives in x (``betaincinv``: in p, by the inverse-function
rule) are exact. ``gammainc`` / ``gammaincc`` (w.r.t. ``a`` too), ``zeta`` (w.r.t. ``x``
too), ``hyp1f1`` / ``hyp2f1`` (w.r.t. their parameters too, where a series gives them
accurately) and ``factorial`` have their rules in ``special_params.py``, with the series
that give those derivatives.
``boxcox``, ``boxcox1p``, ``inv_boxcox`` and
``inv_boxcox1p`` switch to a series in ``lmbda`` near 0, where the closed form cancels;
its first term is the limit at ``lmbda == 0``.

``logsumexp``, ``softmax`` and ``log_softmax`` have hand-written rules using the
stable forms (``exp(a - logsumexp(a))`` rather than ``exp(a) / sum(exp(a))``), and
support ``axis``, ``keepdims``, ``b`` and ``return_sign`` (real inputs).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.special as sc

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, ZeroTangent, frule, not_implemented, scalar_rule
from chainrules.rules import _kit as kit

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)

# --- gamma family ------------------------------------------------------------------------

scalar_rule(sc.gamma, lambda x, *, y: y * sc.digamma(x))
scalar_rule(sc.gammaln, lambda x: sc.digamma(x))
scalar_rule(sc.loggamma, lambda x: sc.psi(x))
scalar_rule(sc.digamma, lambda x: sc.polygamma(1, x))  # sc.psi is the same ufunc
scalar_rule(sc.beta, lambda a, b, *, y: (y * (sc.digamma(a) - sc.digamma(a + b)),
                                         y * (sc.digamma(b) - sc.digamma(a + b))))
scalar_rule(sc.betaln, lambda a, b: (sc.digamma(a) - sc.digamma(a + b),
                                     sc.digamma(b) - sc.digamma(a + b)))
core.non_differentiable(sc.gammasgn)

# --- error functions and the normal distribution ----------------------------------------

scalar_rule(sc.erf, lambda x: 2 / _SQRT_PI * np.exp(-(x * x)))
scalar_rule(sc.erfc, lambda x: -2 / _SQRT_PI * np.exp(-(x * x)))
scalar_rule(sc.erfinv, lambda x, *, y: _SQRT_PI / 2 * np.exp(y * y))
scalar_rule(sc.erfcinv, lambda x, *, y: -_SQRT_PI / 2 * np.exp(y * y))
scalar_rule(sc.erfcx, lambda x, *, y: 2 * x * y - 2 / _SQRT_PI)
scalar_rule(sc.ndtr, lambda x: np.exp(-(x * x) / 2) / _SQRT_2PI)
# d/dx log Phi(x) = phi(x) / Phi(x), evaluated in log space for large negative x.
scalar_rule(sc.log_ndtr, lambda x, *, y: np.exp(-(x * x) / 2 - y) / _SQRT_2PI)
scalar_rule(sc.ndtri, lambda x, *, y: _SQRT_2PI * np.exp(y * y / 2))
scalar_rule(sc.wofz, lambda z, *, y: -2 * z * y + 2j / _SQRT_PI)
scalar_rule(sc.dawsn, lambda x, *, y: 1 - 2 * x * y)

# --- logistic ------------------------------------------------------------------------------

scalar_rule(sc.expit, lambda x, *, y: y * (1 - y))
scalar_rule(sc.logit, lambda x: 1 / (x * (1 - x)))
scalar_rule(sc.log_expit, lambda x: sc.expit(-x))
if hasattr(sc, "softplus"):  # SciPy >= 1.15
    scalar_rule(sc.softplus, lambda x: sc.expit(x))

# --- x log y and entropies ----------------------------------------------------------------

scalar_rule(sc.xlogy, lambda x, y: (np.log(y), x / y))
scalar_rule(sc.xlog1py, lambda x, y: (np.log1p(y), x / (1 + y)))
scalar_rule(sc.entr, lambda x: -(np.log(x) + 1))
scalar_rule(sc.rel_entr, lambda x, y: (np.log(x / y) + 1, -x / y))
scalar_rule(sc.kl_div, lambda x, y: (np.log(x / y), 1 - x / y))

# --- exponential integrals, elementary functions ------------------------------------------

scalar_rule(sc.exp1, lambda x: -np.exp(-x) / x)
scalar_rule(sc.expi, lambda x: np.exp(x) / x)
scalar_rule(sc.expm1, lambda x, *, y: y + 1)
scalar_rule(sc.log1p, lambda x: 1 / (1 + x))
scalar_rule(sc.cbrt, lambda x, *, y: 1 / (3 * y * y))

# --- Bessel functions -----------------------------------------------------------------------
# I1'(x) = (I0 + I2) / 2 is finite at 0 where I0 - I1/x is not; likewise J1' = (J0 - J2) / 2.

scalar_rule(sc.i0, lambda x: sc.i1(x))
scalar_rule(sc.i0e, lambda x, *, y: sc.i1e(x) - np.sign(x) * y)
scalar_rule(sc.i1, lambda x: (sc.i0(x) + sc.iv(2, x)) / 2)
scalar_rule(sc.i1e, lambda x, *, y: (sc.i0e(x) + sc.ive(2, x)) / 2 - np.sign(x) * y)
scalar_rule(sc.j0, lambda x: -sc.j1(x))
scalar_rule(sc.j1, lambda x: (sc.j0(x) - sc.jv(2, x)) / 2)
scalar_rule(sc.y0, lambda x: -sc.y1(x))
scalar_rule(sc.y1, lambda x: (sc.y0(x) - sc.yv(2, x)) / 2)
scalar_rule(sc.k0, lambda x: -sc.k1(x))
scalar_rule(sc.k1, lambda x: -(sc.k0(x) + sc.kv(2, x)) / 2)


def _no_order_derivative(v: Any, why: str) -> Any:
    # an order given as a Python int or an integer array cannot be perturbed
    return not_implemented(why) if kit.is_differentiable(v) else NoTangent()


def _order_rules(f: Any, d_dx: Any, why: str) -> None:
    """frule and rrule for ``f(v, x)``, differentiable in ``x`` only (see module doc)."""
    def order_rrule(v: Any, x: Any, **kwargs: Any) -> Any:
        kit.refuse_out(f, kwargs, where=True)
        y = f(v, x, **kwargs)
        project_x = ProjectTo(x)
        v_bar = _no_order_derivative(v, why)

        @kit.zero_guard(lambda: (NoTangent(), v_bar, ZeroTangent()))
        def order_pullback(y_bar: Any) -> tuple:
            d = d_dx(v, x)
            if isinstance(d, core.NotImplementedTangent):
                return NoTangent(), v_bar, d
            return NoTangent(), v_bar, project_x(np.conj(d) * y_bar)

        return y, order_pullback

    def order_frule(dargs: tuple, v: Any, x: Any, **kwargs: Any) -> Any:
        kit.refuse_out(f, kwargs, where=True)
        y = f(v, x, **kwargs)
        _, v_dot, x_dot = dargs
        if kit.nonzero(v_dot) is not None:
            return y, not_implemented(why)
        x_dot = kit.nonzero(x_dot)
        if x_dot is None:
            return y, ZeroTangent()
        d = d_dx(v, x)
        if isinstance(d, core.NotImplementedTangent):
            return y, d
        return y, kit.fit_output(d * x_dot, y)

    kit.define_rules(f, object, object, frule_fn=order_frule, rrule_fn=order_rrule)


_BESSEL_ORDER = ("the derivative of a Bessel function with respect to its order has no "
                 "closed form in SciPy")
_order_rules(sc.jv, lambda v, x: (sc.jv(v - 1, x) - sc.jv(v + 1, x)) / 2, _BESSEL_ORDER)
_order_rules(sc.yv, lambda v, x: (sc.yv(v - 1, x) - sc.yv(v + 1, x)) / 2, _BESSEL_ORDER)
_order_rules(sc.iv, lambda v, x: (sc.iv(v - 1, x) + sc.iv(v + 1, x)) / 2, _BESSEL_ORDER)
_order_rules(sc.kv, lambda v, x: -(sc.kv(v - 1, x) + sc.kv(v + 1, x)) / 2, _BESSEL_ORDER)
_order_rules(sc.polygamma, lambda n, x: sc.polygamma(n + 1, x),
             "polygamma's order n is an integer and cannot be perturbed")
# gammainc and gammaincc (with their derivatives in a): special_params.py


_IVE_COMPLEX = ("ive(v, z) = iv(v, z) exp(-|Re z|) is not holomorphic in a complex z; its "
                "derivative there has no rule")


def _ive_dx(v: Any, x: Any) -> Any:
    if np.iscomplexobj(x):
        return not_implemented(_IVE_COMPLEX)
    return (sc.ive(v - 1, x) + sc.ive(v + 1, x)) / 2 - np.sign(x) * sc.ive(v, x)


_order_rules(sc.ive, _ive_dx, _BESSEL_ORDER)
_order_rules(sc.yn, lambda n, x: (sc.yn(n - 1, x) - sc.yn(n + 1, x)) / 2,
             "yn's order n is an integer and cannot be perturbed")


def _expn_dx(n: Any, x: Any) -> Any:
    # E_n' = -E_{n-1}, and E_0(x) = exp(-x) / x, whose derivative SciPy cannot shift to n = -1.
    with np.errstate(divide="ignore", invalid="ignore"):
        e0_dx = -np.exp(-x) * (x + 1) / (x * x)
        return np.where(np.asarray(n) == 0, e0_dx, -sc.expn(np.maximum(n - 1, 0), x))


_order_rules(sc.expn, _expn_dx, "expn's order n is an integer and cannot be perturbed")


# --- zeta: special_params.py ----------------------------------------------------------------


# --- logsumexp, softmax, log_softmax ---------------------------------------------------------


def _expand(r: Any, axis: Any, keepdims: bool, ndim: int) -> Any:
    """Re-insert reduced axes (size 1) so a reduced result broadcasts against the input."""
    if keepdims or (axis is None and ndim == 0):
        return r
    if axis is None:
        return np.reshape(r, (1,) * ndim)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    axes = tuple(a % ndim for a in axes)
    return np.expand_dims(r, axes)


def _sum_over(x: Any, axis: Any, keepdims: bool) -> Any:
    return np.sum(x, axis=None if axis is None else axis, keepdims=keepdims)


_LSE_PARAMS = ("axis", "b", "keepdims", "return_sign")


def _lse_options(args: tuple, kwargs: dict) -> dict:
    if len(args) > len(_LSE_PARAMS):
        raise TypeError(f"logsumexp takes at most {len(_LSE_PARAMS) + 1} positional arguments")
    options = {"axis": None, "b": None, "keepdims": False, "return_sign": False}
    options.update(zip(_LSE_PARAMS, args))
    options.update(kwargs)
    return options


def _lse_weights(a: Any, y: Any, axis: Any, keepdims: bool) -> np.ndarray:
    """exp(a - logsumexp(a)): the softmax weights along the reduced axes."""
    a_arr = np.asarray(a)
    return np.exp(a_arr - _expand(y, axis, keepdims, a_arr.ndim))


@core.rrule.register(sc.logsumexp)
def logsumexp_rrule(a, *args, **kwargs):
    opts = _lse_options(args, kwargs)
    axis, b, keepdims, return_sign = (opts[k] for k in _LSE_PARAMS)
    out = sc.logsumexp(a, *args, **kwargs)
    y = out[0] if return_sign else out
    ndim = np.ndim(a)
    project_a = ProjectTo(a)
    b_positional = len(args) >= 2 and b is not None
    project_b = ProjectTo(b) if b_positional else None

    def logsumexp_pullback(y_bar):
        y_bar = core.unthunk(y_bar)
        if return_sign:  # the sign output is piecewise constant
            y_bar = core.unthunk(y_bar[0]) if isinstance(y_bar, (core.Tangent, tuple)) else y_bar
        rest = [NoTangent()] * len(args)
        if kit.is_zero(y_bar):
            if b_positional:
                rest[1] = ZeroTangent()
            return (NoTangent(), ZeroTangent(), *rest)
        g = _expand(y_bar, axis, keepdims, ndim)
        weights = _lse_weights(a, y, axis, keepdims)
        scale = 1 if b is None else b
        a_bar = core.Thunk(lambda: project_a(g * np.conj(weights * scale)))
        if b_positional:
            rest[1] = core.Thunk(lambda: project_b(g * np.conj(weights)))
        return (NoTangent(), a_bar, *rest)

    return out, logsumexp_pullback


@frule.register(sc.logsumexp)
def logsumexp_frule(dargs, a, *args, **kwargs):
    opts = _lse_options(args, kwargs)
    axis, b, keepdims, return_sign = (opts[k] for k in _LSE_PARAMS)
    out = sc.logsumexp(a, *args, **kwargs)
    y = out[0] if return_sign else out
    weights = _lse_weights(a, y, axis, keepdims)
    a_dot = core.unthunk(dargs[1])
    b_dot = core.unthunk(dargs[3]) if len(args) >= 2 and b is not None else ZeroTangent()
    y_dot: Any = ZeroTangent()
    if not kit.is_zero(a_dot):
        y_dot = _sum_over(weights * (1 if b is None else b) * a_dot, axis, keepdims)
    if not kit.is_zero(b_dot):
        y_dot = y_dot + _sum_over(weights * b_dot, axis, keepdims)
    if not kit.is_zero(y_dot):
        y_dot = np.asarray(y_dot, dtype=np.result_type(y))
        y_dot = y_dot[()] if y_dot.ndim == 0 and not isinstance(y, np.ndarray) else y_dot
    if return_sign:
        return out, core.Tangent[tuple](y_dot, NoTangent())
    return out, y_dot


def _normalizer_rules(f: Any, pullback_of: Any, pushforward_of: Any) -> None:
    """frule and rrule of ``f(x, axis=None)`` (softmax, log_softmax): both derivatives
    are linear maps of the (co)tangent given ``y``, along ``axis``."""

    def normalizer_rrule(x: Any, axis: Any = None) -> Any:
        y = f(x, axis=axis)
        project_x = ProjectTo(x)

        @kit.zero_guard((NoTangent(), ZeroTangent()))
        def normalizer_pullback(y_bar: Any) -> tuple:
            return NoTangent(), project_x(pullback_of(y_bar, y, axis))

        return y, normalizer_pullback

    def normalizer_frule(dargs: tuple, x: Any, axis: Any = None) -> Any:
        y = f(x, axis=axis)
        x_dot = kit.nonzero(dargs[1])
        return y, ZeroTangent() if x_dot is None else kit.fit_output(
            pushforward_of(x_dot, y, axis), y
        )

    kit.define_rules(f, object, ..., frule_fn=normalizer_frule, rrule_fn=normalizer_rrule)


def _softmax_linear(t: Any, y: Any, axis: Any) -> Any:
    # the Jacobian diag(y) - y y^T is symmetric: one map for both directions
    ty = t * y
    return ty - y * np.sum(ty, axis=axis, keepdims=True)


_normalizer_rules(sc.softmax, _softmax_linear, _softmax_linear)
_normalizer_rules(
    sc.log_softmax,
    lambda y_bar, y, axis: y_bar - np.exp(y) * np.sum(y_bar, axis=axis, keepdims=True),
    lambda x_dot, y, axis: x_dot - np.sum(np.exp(y) * x_dot, axis=axis, keepdims=True))


# --- incomplete beta, hypergeometric functions --------------------------------------------

_BETAINC_AB = ("the derivative of the regularized incomplete beta function with respect to a "
               "or b has no stable closed form in SciPy")
_BETAINCINV_AB = ("the derivative of the inverse incomplete beta function with respect to a or "
                  "b has no stable closed form in SciPy")


def _log_beta_density(a: Any, b: Any, x: Any) -> Any:
    """log of x^(a-1) (1-x)^(b-1) / B(a, b), the derivative of betainc in x."""
    return sc.xlogy(a - 1, x) + sc.xlog1py(b - 1, -x) - sc.betaln(a, b)


scalar_rule(sc.betainc, lambda a, b, x: (not_implemented(_BETAINC_AB),
                                         not_implemented(_BETAINC_AB),
                                         np.exp(_log_beta_density(a, b, x))))
# The inverse-function rule: dx/dp = 1 / betainc'(x) at x = betaincinv(a, b, p).
scalar_rule(sc.betaincinv, lambda a, b, p, *, y: (not_implemented(_BETAINCINV_AB),
                                                  not_implemented(_BETAINCINV_AB),
                                                  np.exp(-_log_beta_density(a, b, y))))
# hyp1f1 and hyp2f1 (with their derivatives in the parameters): special_params.py

# --- more gamma, elementary and integral functions -----------------------------------------

scalar_rule(sc.rgamma, lambda x, *, y: -y * sc.psi(x))
scalar_rule(sc.poch, lambda z, m, *, y: (y * (sc.digamma(z + m) - sc.digamma(z)),
                                         y * sc.digamma(z + m)))
# d is the (integer) dimension; multigammaln refuses a non-integer d.
scalar_rule(sc.multigammaln, lambda a, d: (
    sum(sc.digamma(a - j / 2) for j in range(int(d))), NoTangent()))
scalar_rule(sc.exp2, lambda x, *, y: y * math.log(2))
scalar_rule(sc.exp10, lambda x, *, y: y * math.log(10))
scalar_rule(sc.sindg, lambda x: math.pi / 180 * sc.cosdg(x))
scalar_rule(sc.cosdg, lambda x: -math.pi / 180 * sc.sindg(x))


def _spence_dz(z: Any) -> Any:
    # spence(z) = int_1^z log(t) / (1 - t) dt; the integrand tends to -1 at t = 1.
    # At 1 the limit's own Taylor line, -1 + (z - 1) / 2: its value is the limit and its
    # slope the second derivative there (a constant -1 would make that 0).
    one = z == 1
    safe = np.where(one, 2, z)
    return np.where(one, -1 + (z - 1) / 2, np.log(safe) / (1 - safe))


scalar_rule(sc.spence, _spence_dz)
# T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + t^2) / 2) / (1 + t^2) dt.
scalar_rule(sc.owens_t, lambda h, a: (
    -np.exp(-(h * h) / 2) / _SQRT_2PI * sc.erf(h * a / math.sqrt(2)) / 2,
    np.exp(-(h * h) * (1 + a * a) / 2) / (2 * math.pi * (1 + a * a))))
scalar_rule(sc.fresnel, lambda z: (np.sin(math.pi / 2 * z * z),
                                   np.cos(math.pi / 2 * z * z)), nout=2)
# sinc keeps Si' = sin(x) / x finite at 0.
scalar_rule(sc.sici, lambda x: (np.sinc(x / math.pi), np.cos(x) / x), nout=2)

# --- Box-Cox transforms ----------------------------------------------------------------------
# d/dlmbda of (x^l - 1) / l is (x^l log x - y) / l, which cancels as l -> 0: within
# |l log x| < 1e-2 the series sum_k (k-1) l^(k-2) L^k / k! is used instead (L = log x), whose
# first term L^2 / 2 is the limit at l = 0.

_SERIES_SMALL = 1e-2


def _boxcox_dlmbda(log_x: Any, lmbda: Any, y: Any) -> Any:
    u = lmbda * log_x
    series = log_x * log_x * sum((k - 1) * u ** (k - 2) / math.factorial(k) for k in range(2, 9))
    small = np.abs(u) < _SERIES_SMALL
    safe = np.where(small, 1, lmbda)
    exact = (np.exp(u) * log_x - y) / safe
    return np.where(small, series, exact)


scalar_rule(sc.boxcox, lambda x, lmbda, *, y: (
    np.exp((lmbda - 1) * np.log(x)), _boxcox_dlmbda(np.log(x), lmbda, y)))
scalar_rule(sc.boxcox1p, lambda x, lmbda, *, y: (
    np.exp((lmbda - 1) * np.log1p(x)), _boxcox_dlmbda(np.log1p(x), lmbda, y)))


def _inv_boxcox_dlmbda(y: Any, lmbda: Any, x: Any) -> Any:
    # log x = log1p(l y) / l; d/dl = (u / (1 + u) - log1p(u)) / l^2 (u = l y), which cancels
    # as u -> 0: there the series y^2 sum_k (-1)^k k / (k + 1) u^(k-1) is used.
    u = lmbda * y
    series = y * y * sum((-1) ** k * k / (k + 1) * u ** (k - 1) for k in range(1, 9))
    small = np.abs(u) < _SERIES_SMALL
    safe = np.where(small, 1, lmbda)
    safe_u = np.where(small, 1, u)
    exact = (safe_u / (1 + safe_u) - np.log1p(safe_u)) / (safe * safe)
    return x * np.where(small, series, exact)


# inv_boxcox(t, l) = (1 + l t)^(1/l) (SciPy names t "y"; here y is the output), so
# dy/dt = y / (1 + l t).
scalar_rule(sc.inv_boxcox, lambda t, lmbda, *, y: (y / (1 + lmbda * t),
                                                   _inv_boxcox_dlmbda(t, lmbda, y)))
scalar_rule(sc.inv_boxcox1p, lambda t, lmbda, *, y: ((1 + y) / (1 + lmbda * t),
                                                     _inv_boxcox_dlmbda(t, lmbda, 1 + y)))

# --- spherical harmonics ---------------------------------------------------------------------


def _sph_harm_y_partials(n: Any, m: Any, theta: Any, phi: Any) -> tuple:
    # SciPy evaluates the gradient in (theta, phi) itself; n and m are integer degrees.
    _, jac = sc.sph_harm_y(n, m, theta, phi, diff_n=1)
    return NoTangent(), NoTangent(), jac[..., 0], jac[..., 1]


_SPH_DIFF_N = ("sph_harm_y(diff_n=...) returns derivatives as extra outputs; their own "
               "derivatives have no rule; differentiate sph_harm_y without diff_n")


def _sph_harm_y(n: Any, m: Any, theta: Any, phi: Any) -> Any:
    return sc.sph_harm_y(n, m, theta, phi)


if hasattr(sc, "sph_harm_y"):  # SciPy >= 1.15
    # The rules live on a keyword-free twin so that diff_n=... (tuple outputs) is refused.
    scalar_rule(_sph_harm_y, _sph_harm_y_partials)

    @core.rrule.register(sc.sph_harm_y)
    def sph_harm_y_rrule(n, m, theta, phi, **kwargs):
        if kwargs.get("diff_n", 0):
            y = sc.sph_harm_y(n, m, theta, phi, **kwargs)

            def sph_harm_y_pullback(y_bar):
                why = not_implemented(_SPH_DIFF_N)
                return NoTangent(), NoTangent(), NoTangent(), why, why

            return y, sph_harm_y_pullback
        kit.refuse_out(sc.sph_harm_y, kwargs, where=True)
        return core.rrule(_sph_harm_y, n, m, theta, phi)

    @frule.register(sc.sph_harm_y)
    def sph_harm_y_frule(dargs, n, m, theta, phi, **kwargs):
        if kwargs.get("diff_n", 0):
            return sc.sph_harm_y(n, m, theta, phi, **kwargs), not_implemented(_SPH_DIFF_N)
        kit.refuse_out(sc.sph_harm_y, kwargs, where=True)
        return frule(dargs, _sph_harm_y, n, m, theta, phi)
