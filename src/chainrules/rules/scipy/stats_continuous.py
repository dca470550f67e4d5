"""Rules for continuous ``scipy.stats`` distributions.

Covered: ``norm, gamma, beta, t, expon, laplace, logistic, cauchy, chi2, uniform,
lognorm, truncnorm, gumbel_r, gumbel_l, pareto, gennorm, vonmises``; methods ``logpdf,
pdf, logcdf, cdf, logsf, sf, ppf, isf``; derivatives w.r.t. ``x`` (``q``), the shape
parameters, ``loc`` and ``scale``, with broadcasting. Real inputs only (SciPy's
distributions do not take complex numbers); float32 inputs get float32 cotangents
(SciPy computes in float64).

**Where the rules are registered.** ``scipy.stats.norm`` is an *instance* of
``norm_gen``, and ``norm.logpdf`` is a bound method of ``rv_continuous.logpdf``: a new
object on every attribute access. So the rules are registered on the function
``rv_continuous.logpdf`` (shared by all continuous distributions), with the
distribution's class as the first dispatch type: the rule for ``norm_gen`` receives
the distribution first, ``(norm, x, loc, scale)``. All three call paths reach it:

- ``rrule(scipy.stats.norm.logpdf, x, loc, scale)``: the core's entry points look up a
  bound method without rules of its own under its function (``__func__``), with the
  instance first, and drop the function's own entry from the pullback;
- ``chainrules.ad``: a traced call of a bound method falls back to the rule of
  ``type(obj).method`` with the instance first (the same convention);
- frozen distributions, ``scipy.stats.norm(loc, scale).logpdf(x)``: SciPy's frozen
  method calls ``self.dist.logpdf(x, *self.args, **self.kwds)``, which the AD traces
  into and which finds the rule above. Parameters given to the frozen distribution
  by position are differentiated; by keyword (``norm(loc=m)``) the AD cannot pass
  them to a rule and says so (keyword arguments are never differentiated). A frozen
  method has no rule of its own: ``rrule(norm(0, 1).logpdf, x)`` is None, since its
  ``self_bar`` would have to carry the parameters' cotangents.

The rule applies to instances of exactly the registered class: a subclass (SciPy's
``erlang`` subclasses ``gamma``) may redefine the density, so it gets no rule rather
than a wrong one (SciPy's own subclasses are opted out; the rule returns None for
any other). The bound method's ``self_bar`` is ``NoTangent()``.

**Derivatives.** With ``z = (x - loc) / scale`` and the standardized density
``f0(z; shapes)``: ``logpdf = log f0(z) - log(scale)``, ``cdf = F0(z)``, ``sf = 1 - F0(z)``,
``ppf(q) = loc + scale * F0^{-1}(q)``. Each distribution below gives
``d log f0 / dz``, ``d log f0 / d shape`` and ``d F0 / d shape``; everything else
follows: ``d cdf / dx = pdf(x)``, ``d cdf / dscale = -pdf(x) z``, ``d logcdf = d cdf /
cdf`` (evaluated as ``exp(logpdf - logcdf)``), ``d ppf / dq = 1 / pdf(ppf(q))`` and
``d ppf / d shape = -scale (d F0 / d shape) / f0`` (the inverse-function rule). Outside the
support the derivatives are 0 (the functions are constant there).

The cdf's derivative w.r.t. the shape of ``gamma`` (``a``), ``chi2`` (``df``) and
``gennorm`` (``beta``) comes from `special_params.gammainc_da`, the derivative of the
regularized incomplete gamma function in its parameter. Those that need the derivative
of an incomplete beta function or the von Mises series w.r.t. a parameter (beta ``a, b``,
t ``df``, vonmises ``kappa``) have no closed form SciPy can evaluate: they are
``not_implemented`` (``NoTangent()`` for an integer-valued parameter) for ``logcdf, cdf,
logsf, sf, ppf, isf``; the other arguments still work.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.special as sc
import scipy.stats as st
from scipy.stats import rv_continuous

from ._stats import cdf_scale, masked, opt_out_subclasses, register_method, shape_names
from .special_params import gammainc_da

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


@dataclass(frozen=True)
class _Spec:
    """The standardized density's derivatives (functions of ``z, *shapes``).

    ``dlogpdf_dshape`` / ``dcdf_dshape``: one entry per shape parameter; an entry of
    ``dcdf_dshape`` may be a string saying why that derivative is not implemented.
    """

    dlogpdf_dz: Callable
    dlogpdf_dshape: tuple = ()
    dcdf_dshape: tuple = ()
    # the standardized support as a function of the shapes, when they move it
    # (``dist.support`` costs more than the derivatives of a scalar)
    support: Callable | None = None


def _no_cdf(dist: str, shape: str, special: str) -> str:
    return (f"the derivative of scipy.stats.{dist}'s cdf with respect to {shape} needs "
            f"the derivative of {special} with respect to its parameter, which has no "
            f"closed form in SciPy")


def _log_phi(z: Any) -> Any:
    return -0.5 * z * z - _LOG_SQRT_2PI


def _log_gauss_mass(a: Any, b: Any) -> Any:
    """log(Phi(b) - Phi(a)) for a < b, in the tail where it is accurate."""
    left, right = b <= 0, a >= 0
    # Each formula on its own elements, chosen by np.where (no writes into an array: run
    # on values of an outer trace, for a second derivative, this stays differentiable).
    # The other elements get harmless stand-ins (a < b, both finite), so that a formula
    # not chosen never makes an infinite or NaN partial that a zero cotangent would turn
    # into NaN.
    with np.errstate(divide="ignore"):
        al, bl = np.where(left, a, -1.0), np.where(left, b, 0.0)
        lo = sc.log_ndtr(bl) + np.log1p(-np.exp(sc.log_ndtr(al) - sc.log_ndtr(bl)))
        ar, br = np.where(right, a, 0.0), np.where(right, b, 1.0)
        hi = sc.log_ndtr(-ar) + np.log1p(-np.exp(sc.log_ndtr(-br) - sc.log_ndtr(-ar)))
        mid = left | right
        am, bm = np.where(mid, -1.0, a), np.where(mid, 1.0, b)
        between = np.log1p(-sc.ndtr(am) - sc.ndtr(-bm))
        return np.where(left, lo, np.where(right, hi, between))


def _phi_over_mass(c: Any, a: Any, b: Any) -> Any:
    """phi(c) / (Phi(b) - Phi(a)); zero where c is infinite."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(c), 0.0, np.exp(_log_phi(c) - _log_gauss_mass(a, b)))


def _t_dlogpdf_ddf(z: Any, df: Any) -> Any:
    return (0.5 * (sc.digamma((df + 1) / 2) - sc.digamma(df / 2)) - 0.5 / df
            - 0.5 * np.log1p(z * z / df) + (df + 1) * z * z / (2 * df * (df + z * z)))


def _gennorm_dlogpdf_dbeta(z: Any, beta: Any) -> Any:
    az = np.abs(z)
    return 1 / beta + sc.digamma(1 / beta) / (beta * beta) - sc.xlogy(az**beta, az)


def _gennorm_dcdf_dbeta(z: Any, beta: Any) -> Any:
    # F0(z) = 1/2 + sign(z) / 2 * gammainc(1 / beta, |z|^beta)
    az = np.abs(z)
    safe = np.where(az > 0, az, 1.0)
    t = safe**beta
    d_t = np.exp(-t + (1 / beta - 1) * np.log(t) - sc.gammaln(1 / beta)) * t * np.log(safe)
    d = -gammainc_da(1 / beta, t) / (beta * beta) + d_t
    return np.where(az > 0, np.sign(z) / 2 * d, 0.0 * z)


def _lognorm_dcdf_ds(z: Any, s: Any) -> Any:
    with np.errstate(divide="ignore"):
        w = np.log(z) / s
    return np.where(np.isfinite(w), -np.exp(_log_phi(w)) * w / s, 0.0)


def _truncnorm_dcdf_da(z: Any, a: Any, b: Any) -> Any:
    return -_phi_over_mass(a, a, b) * st.truncnorm.sf(z, a, b)


def _truncnorm_dcdf_db(z: Any, a: Any, b: Any) -> Any:
    return -_phi_over_mass(b, a, b) * st.truncnorm.cdf(z, a, b)


def _pareto_dcdf_db(z: Any, b: Any) -> Any:
    log_z = np.log(z)
    return np.exp(-b * log_z) * log_z


_SPECS: dict[type, _Spec] = {
    type(st.norm): _Spec(lambda z: -z),
    type(st.expon): _Spec(lambda z: -np.ones_like(z)),
    type(st.laplace): _Spec(lambda z: -np.sign(z)),
    type(st.logistic): _Spec(lambda z: -np.tanh(z / 2)),
    type(st.cauchy): _Spec(lambda z: -2 * z / (1 + z * z)),
    type(st.uniform): _Spec(lambda z: np.zeros_like(z)),
    type(st.gumbel_r): _Spec(lambda z: np.expm1(-z)),
    type(st.gumbel_l): _Spec(lambda z: -np.expm1(z)),
    type(st.gamma): _Spec(
        lambda z, a: (a - 1) / z - 1,
        (lambda z, a: np.log(z) - sc.digamma(a),),
        (lambda z, a: gammainc_da(a, z),)),
    type(st.beta): _Spec(
        lambda z, a, b: (a - 1) / z - (b - 1) / (1 - z),
        (lambda z, a, b: np.log(z) - sc.digamma(a) + sc.digamma(a + b),
         lambda z, a, b: np.log1p(-z) - sc.digamma(b) + sc.digamma(a + b)),
        (_no_cdf("beta", "a", "betainc"), _no_cdf("beta", "b", "betainc"))),
    type(st.t): _Spec(
        lambda z, df: -(df + 1) * z / (df + z * z),
        (_t_dlogpdf_ddf,),
        (_no_cdf("t", "df", "betainc"),)),
    type(st.chi2): _Spec(
        lambda z, df: (df / 2 - 1) / z - 0.5,
        (lambda z, df: 0.5 * (np.log(z / 2) - sc.digamma(df / 2)),),
        (lambda z, df: 0.5 * gammainc_da(df / 2, z / 2),)),
    type(st.lognorm): _Spec(
        lambda z, s: -(1 + np.log(z) / (s * s)) / z,
        (lambda z, s: (np.log(z) ** 2 / (s * s) - 1) / s,),
        (_lognorm_dcdf_ds,)),
    type(st.truncnorm): _Spec(
        lambda z, a, b: -z,
        (lambda z, a, b: _phi_over_mass(a, a, b),
         lambda z, a, b: -_phi_over_mass(b, a, b)),
        (_truncnorm_dcdf_da, _truncnorm_dcdf_db),
        lambda a, b: (a, b)),
    type(st.pareto): _Spec(
        lambda z, b: -(b + 1) / z,
        (lambda z, b: 1 / b - np.log(z),),
        (_pareto_dcdf_db,)),
    type(st.gennorm): _Spec(
        lambda z, beta: -beta * np.abs(z) ** (beta - 1) * np.sign(z),
        (_gennorm_dlogpdf_dbeta,),
        (_gennorm_dcdf_dbeta,)),
    type(st.vonmises): _Spec(
        lambda z, kappa: -kappa * np.sin(z),
        (lambda z, kappa: np.cos(z) - sc.i1e(kappa) / sc.i0e(kappa),),
        (_no_cdf("vonmises", "kappa", "the von Mises cdf series"),)),
}

_DEFAULTS = {"loc": 0.0, "scale": 1.0}


def _names(first: str) -> Callable[[Any], list[str]]:
    def names(dist: Any) -> list[str]:
        return [first, *shape_names(dist), "loc", "scale"]

    return names


def _inside(dist: Any, z: Any, shapes: list) -> Any:
    support = _SPECS[type(dist)].support
    lo, hi = (dist.a, dist.b) if support is None else support(*shapes)
    # written as "not outside": a NaN (in the data or a parameter) is not outside the
    # support, so the partials' formulas carry it into the derivative as the primal
    # carries it into the value, instead of a mask turning it into a 0
    return ~((z <= lo) | (z >= hi))


def _density_partials(method: str) -> Callable:
    """Partials of logpdf, pdf, logcdf, cdf, logsf, sf at ``x``."""

    def partials(dist: Any, v: dict, y: Any) -> dict:
        spec = _SPECS[type(dist)]
        names = shape_names(dist)
        shapes = [v[n] for n in names]
        x, loc, scale = v["x"], v["loc"], v["scale"]
        with np.errstate(all="ignore"):
            z = (x - loc) / scale
        inside = _inside(dist, z, shapes)
        out: dict = {}
        if method in ("logpdf", "pdf"):
            factor = 1.0 if method == "logpdf" else np.asarray(y)

            def dz() -> Any:
                return factor * spec.dlogpdf_dz(z, *shapes) / scale

            out["x"] = masked(inside, dz)
            out["loc"] = masked(inside, lambda: -dz())
            out["scale"] = masked(inside, lambda: -(dz() * z + factor / scale))
            for name, d in zip(names, spec.dlogpdf_dshape):
                out[name] = masked(inside, lambda d=d: factor * d(z, *shapes))
            return out
        # cdf family: d F0(z) = f0(z) dz + dF0/dshape dshape; `r` rescales to the
        # method (1 for cdf, -1 for sf, 1/cdf and -1/sf in log space).
        with np.errstate(all="ignore"):
            logpdf = dist.logpdf(z, *shapes) - np.log(scale)
        r = cdf_scale(method, y)
        pdf_r = {"cdf": lambda: np.exp(logpdf), "sf": lambda: -np.exp(logpdf),
                 "logcdf": lambda: np.exp(logpdf - y), "logsf": lambda: -np.exp(logpdf - y)}

        def dx() -> Any:
            return pdf_r[method]()

        out["x"] = masked(inside, dx)
        out["loc"] = masked(inside, lambda: -dx())
        out["scale"] = masked(inside, lambda: -dx() * z)
        for name, d in zip(names, spec.dcdf_dshape):
            out[name] = d if isinstance(d, str) else masked(
                inside, lambda d=d: r * d(z, *shapes))
        return out

    return partials


def _quantile_partials(method: str) -> Callable:
    """Partials of ppf and isf at ``q`` (the inverse-function rule)."""

    def partials(dist: Any, v: dict, y: Any) -> dict:
        spec = _SPECS[type(dist)]
        names = shape_names(dist)
        shapes = [v[n] for n in names]
        loc, scale = v["loc"], v["scale"]
        with np.errstate(all="ignore"):
            z = (np.asarray(y) - loc) / scale
        sign = 1.0 if method == "ppf" else -1.0

        def inv_pdf0() -> Any:
            with np.errstate(all="ignore"):
                return np.exp(-dist.logpdf(z, *shapes))

        out: dict = {
            "q": lambda: sign * scale * inv_pdf0(),
            "loc": lambda: np.ones_like(z),
            "scale": lambda: z,
        }
        for name, d in zip(names, spec.dcdf_dshape):
            out[name] = d if isinstance(d, str) else (
                lambda d=d: -scale * d(z, *shapes) * inv_pdf0())
        return out

    return partials


_METHODS = {
    "logpdf": ("x", _density_partials("logpdf")),
    "pdf": ("x", _density_partials("pdf")),
    "logcdf": ("x", _density_partials("logcdf")),
    "cdf": ("x", _density_partials("cdf")),
    "logsf": ("x", _density_partials("logsf")),
    "sf": ("x", _density_partials("sf")),
    "ppf": ("q", _quantile_partials("ppf")),
    "isf": ("q", _quantile_partials("isf")),
}

for _dist_type in _SPECS:
    for _method, (_first, _partials) in _METHODS.items():
        register_method(getattr(rv_continuous, _method), _dist_type, _names(_first),
                        _DEFAULTS, _partials,
                        _dist_type.__name__.removesuffix("_gen"))
opt_out_subclasses([getattr(rv_continuous, m) for m in _METHODS], _SPECS)
