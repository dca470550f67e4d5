"""Rules for discrete ``scipy.stats`` distributions.

Covered: ``poisson, binom, nbinom, geom, bernoulli, betabinom``; methods ``logpmf, pmf,
logcdf, cdf, logsf, sf``, differentiated w.r.t. the continuous parameters (``mu``,
``p``, nbinom's real ``n``, betabinom's ``a`` and ``b``), with broadcasting. The
integer ``k``, the integer shift ``loc`` and the counts ``n`` of binom and betabinom
get ``NoTangent()``. Registered on ``rv_discrete.logpmf`` and so on, with the
distribution's class first; ``scipy.stats.poisson.logpmf(k, mu)`` reaches the rule
as described in ``stats_continuous.py``.

The cdf derivatives have closed forms (``d/dmu poisson.cdf(k) = -poisson.pmf(k)``,
``d/dp binom.cdf(k; n, p) = -n binom.pmf(k; n - 1, p)``, ``d/dp nbinom.cdf`` is the
integrand of the regularized incomplete beta function...), except w.r.t. nbinom's ``n``
and betabinom's ``a`` and ``b``: ``not_implemented`` there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.special as sc
import scipy.stats as st
from scipy.stats import rv_discrete

from ._stats import cdf_scale, masked, opt_out_subclasses, register_method, shape_names


@dataclass(frozen=True)
class _Spec:
    """Derivatives at integer ``k`` (functions of ``k, *shapes``), one per shape
    parameter: None for a count (``NoTangent()``), a string for ``not_implemented``."""

    dlogpmf: tuple
    dcdf: tuple
    # the support as a function of the shapes, when they move it (``dist.support``
    # costs more than the derivatives of a scalar)
    support: Callable | None = None


def _no_cdf(dist: str, shape: str) -> str:
    return (f"the derivative of scipy.stats.{dist}'s cdf with respect to {shape} needs "
            f"the derivative of the incomplete beta function with respect to its "
            f"parameters, which has no closed form in SciPy")


def _nbinom_dcdf_dp(k: Any, n: Any, p: Any) -> Any:
    return np.exp((n - 1) * np.log(p) + k * np.log1p(-p) - sc.betaln(n, k + 1))


def _betabinom_da(k: Any, n: Any, a: Any, b: Any) -> Any:
    return sc.digamma(k + a) - sc.digamma(n + a + b) - sc.digamma(a) + sc.digamma(a + b)


def _betabinom_db(k: Any, n: Any, a: Any, b: Any) -> Any:
    return sc.digamma(n - k + b) - sc.digamma(n + a + b) - sc.digamma(b) + sc.digamma(a + b)


_SPECS: dict[type, _Spec] = {
    type(st.poisson): _Spec(
        (lambda k, mu: k / mu - 1,),
        (lambda k, mu: -st.poisson.pmf(k, mu),)),
    type(st.binom): _Spec(
        (None, lambda k, n, p: k / p - (n - k) / (1 - p)),
        (None, lambda k, n, p: -n * st.binom.pmf(k, n - 1, p)),
        lambda n, p: (0, n)),
    type(st.nbinom): _Spec(
        (lambda k, n, p: sc.digamma(k + n) - sc.digamma(n) + np.log(p),
         lambda k, n, p: n / p - k / (1 - p)),
        (_no_cdf("nbinom", "n"), _nbinom_dcdf_dp)),
    type(st.geom): _Spec(
        (lambda k, p: 1 / p - (k - 1) / (1 - p),),
        (lambda k, p: k * (1 - p) ** (k - 1),)),
    type(st.bernoulli): _Spec(
        (lambda k, p: k / p - (1 - k) / (1 - p),),
        (lambda k, p: np.where(k == 0, -1.0, 0.0),)),
    type(st.betabinom): _Spec(
        (None, _betabinom_da, _betabinom_db),
        (None, _no_cdf("betabinom", "a"), _no_cdf("betabinom", "b")),
        lambda n, a, b: (0, n)),
}


def _names(dist: Any) -> list[str]:
    return ["k", *shape_names(dist), "loc"]


def _partials(method: str) -> Callable:
    def partials(dist: Any, v: dict, y: Any) -> dict:
        spec = _SPECS[type(dist)]
        names = shape_names(dist)
        shapes = [v[n] for n in names]
        y = np.asarray(y)
        k = np.floor(v["k"] - v["loc"])
        lo, hi = (dist.a, dist.b) if spec.support is None else spec.support(*shapes)
        out: dict = {}
        if method in ("logpmf", "pmf"):
            # "not outside", so that a NaN stays in the partials (see stats_continuous)
            inside = ~((k < lo) | (k > hi) | (y == (-np.inf if method == "logpmf" else 0)))
            factor = 1.0 if method == "logpmf" else y
            for name, d in zip(names, spec.dlogpmf):
                out[name] = d if d is None else masked(
                    inside, lambda d=d: factor * d(k, *shapes))
            return out
        inside = ~((k < lo) | (k >= hi))
        r = cdf_scale(method, y)
        for name, d in zip(names, spec.dcdf):
            out[name] = d if d is None or isinstance(d, str) else masked(
                inside, lambda d=d: r * d(k, *shapes))
        return out

    return partials


_METHODS = ("logpmf", "pmf", "logcdf", "cdf", "logsf", "sf")
for _dist_type in _SPECS:
    for _method in _METHODS:
        register_method(getattr(rv_discrete, _method), _dist_type, _names, {"loc": 0.0},
                        _partials(_method),
                        _dist_type.__name__.removesuffix("_gen"))
opt_out_subclasses([getattr(rv_discrete, m) for m in _METHODS], _SPECS)
