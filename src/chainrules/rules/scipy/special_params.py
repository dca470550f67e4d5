"""Derivatives of ``scipy.special`` functions with respect to a shape parameter or an
exponent, which SciPy does not evaluate itself, and the rules that use them.

- ``gammainc(a, x)`` / ``gammaincc(a, x)`` w.r.t. ``a``: `gammainc_da`, the method of
  XLA and JAX (Cephes' series and continued fraction differentiated term by term in
  ``a``): the series of ``P`` where ``x <= 1`` or ``x <= a``, else the continued fraction
  of ``Q``, so each side is summed where it has no cancellation (``dQ/da = -dP/da``).
  At ``a == 0`` (where SciPy gives ``P = 1`` for ``x > 0``) the one-sided limit
  ``-E1(x)``.
- ``zeta(x, q)`` w.r.t. ``x``: `zeta_dx`, Euler-Maclaurin summation of
  ``-sum_n log(n + q) (n + q)^-x`` for ``x > 1`` and ``q > 0``. The Riemann zeta ``zeta(x)``
  at ``x < 1`` (SciPy continues it analytically) and a Hurwitz zeta at ``q <= 0`` (SciPy
  answers for integer ``x``) are ``not_implemented``.
- ``factorial(n, exact=False)``: ``Gamma(n + 1) psi(n + 1)``; 0 where SciPy's default
  ``extend="zero"`` gives 0 (``n < 0``).

Second derivatives: the derivative of `gammainc_da` in ``x`` is exact (``d/dx dP/da =
dP/dx (log x - psi(a))``); in ``a`` it is ``not_implemented`` (JAX has none either).
`zeta_dx` gives every order in ``x`` (``zeta_dx(x, q, m)``), and in ``q`` by
``d/dq zeta = -x zeta(x + 1, q)``. Second derivatives of ``hyp1f1`` / ``hyp2f1`` that
involve a parameter are ``not_implemented``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.special as sc

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, ZeroTangent, not_implemented, scalar_rule
from chainrules.rules import _kit as kit

__all__ = ["gammainc_da", "hyp1f1_dparams", "hyp2f1_dparams", "zeta_dx"]

_EPS = np.finfo(np.float64).eps
# enough for a up to about 10^6 near x = a, where both series need ~ 8 sqrt(a) terms
_MAX_ITER = 10000

# --- gammainc, gammaincc w.r.t. a ---------------------------------------------------------


def _series_da(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dP/da from P = x^a e^-x / Gamma(a + 1) sum_n c_n, c_n = x^n / ((a+1)...(a+n))."""
    r, c, ans = a.copy(), np.ones_like(a), np.ones_like(a)
    dc, dans = np.zeros_like(a), np.zeros_like(a)
    live = np.arange(a.size)
    for _ in range(_MAX_ITER):
        if live.size == 0:
            break
        xl, rl = x[live], r[live] + 1
        dc[live] = dc[live] * (xl / rl) - c[live] * xl / (rl * rl)
        c[live] *= xl / rl
        r[live] = rl
        ans[live] += c[live]
        dans[live] += dc[live]
        going = ((np.abs(c[live]) > _EPS * np.abs(ans[live]))
                 | (np.abs(dc[live]) > _EPS * np.abs(dans[live])))
        live = live[going]
    log_ax = a * np.log(x) - x - sc.gammaln(a + 1)
    out = np.exp(log_ax) * (ans * (np.log(x) - sc.digamma(a + 1)) + dans)
    out[live] = np.nan  # not converged: for the rule to refuse, never a wrong value
    return out


def _fraction_da(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dQ/da from Cephes' continued fraction of Q = x^a e^-x / Gamma(a) * ans, with the
    convergents' numerators and denominators differentiated in a."""
    y = 1 - a
    z = x + y + 1
    c = np.zeros_like(a)
    pkm2, qkm2 = np.ones_like(a), x.copy()
    pkm1, qkm1 = x + 1, z * x
    ans = pkm1 / qkm1
    dpkm2, dqkm2 = np.zeros_like(a), np.zeros_like(a)
    dpkm1, dqkm1 = np.zeros_like(a), -x
    dans = (dpkm1 - ans * dqkm1) / qkm1
    live = np.arange(a.size)
    big = 1 / _EPS
    for _ in range(_MAX_ITER):
        if live.size == 0:
            break
        i = live
        c[i] += 1
        y[i] += 1
        z[i] += 2
        yc = y[i] * c[i]
        pk = pkm1[i] * z[i] - pkm2[i] * yc
        qk = qkm1[i] * z[i] - qkm2[i] * yc
        dpk = dpkm1[i] * z[i] - pkm1[i] - dpkm2[i] * yc + pkm2[i] * c[i]
        dqk = dqkm1[i] * z[i] - qkm1[i] - dqkm2[i] * yc + qkm2[i] * c[i]
        nonzero = qk != 0
        safe_qk = np.where(nonzero, qk, 1.0)
        r = pk / safe_qk
        new_ans = np.where(nonzero, r, ans[i])
        new_dans = np.where(nonzero, (dpk - new_ans * dqk) / safe_qk, dans[i])
        going = ~nonzero | (np.abs(new_ans - ans[i]) > _EPS * np.abs(new_ans)) | (
            np.abs(new_dans - dans[i]) > _EPS * np.abs(new_dans))
        ans[i], dans[i] = new_ans, new_dans
        pkm2[i], pkm1[i], qkm2[i], qkm1[i] = pkm1[i], pk, qkm1[i], qk
        dpkm2[i], dpkm1[i], dqkm2[i], dqkm1[i] = dpkm1[i], dpk, dqkm1[i], dqk
        scale = np.where(np.abs(pk) > big, _EPS, 1.0)
        for v in (pkm2, pkm1, qkm2, qkm1, dpkm2, dpkm1, dqkm2, dqkm1):
            v[i] *= scale
        live = i[going]
    log_ax = a * np.log(x) - x - sc.gammaln(a)
    out = np.exp(log_ax) * (ans * (np.log(x) - sc.digamma(a)) + dans)
    out[live] = np.nan  # not converged
    return out


def gammainc_da(a: Any, x: Any) -> np.ndarray:
    """The derivative of the regularized lower incomplete gamma function
    ``scipy.special.gammainc(a, x)`` with respect to ``a`` (float64, broadcast).

    NaN where SciPy's value is NaN (``a < 0``, ``x < 0``, a NaN argument), and where the
    series do not converge in ``_MAX_ITER`` terms (``a`` beyond about ``10^6`` with ``x``
    near ``a``), which the rules refuse; 0 at ``x == 0`` and ``x == inf``. The derivative
    of ``gammaincc`` is its negative.

    Examples:
        >>> import numpy as np
        >>> bool(np.isclose(gammainc_da(2.0, 3.0), -0.19742541957920232, rtol=1e-12))
        True
    """
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        ok = (a > 0) & np.isfinite(a) & (x > 0) & np.isfinite(x)
        fraction = ok & (x > 1) & (x > a)
        series = ok & ~fraction
        if series.any():
            out[series] = _series_da(a[series], x[series])
        if fraction.any():
            out[fraction] = -_fraction_da(a[fraction], x[fraction])
        edge = (a > 0) & ((x == 0) | (x == np.inf))
        out[edge] = 0.0
        # P(a, x) = 1 - a E1(x) + O(a^2) as a -> 0+
        at_zero = (a == 0) & (x > 0)
        out[at_zero] = -sc.exp1(x[at_zero])
    return out[()] if out.ndim == 0 else out


def _gammainc_dx(a: Any, x: Any) -> Any:
    # x^(a-1) e^-x / Gamma(a), in log space
    return np.exp(-x + (a - 1) * np.log(x) - sc.gammaln(a))


_GAMMAINC_DA2 = ("the second derivative of the regularized incomplete gamma function with "
                 "respect to a (the derivative of gammainc_da in a) is not implemented; its "
                 "derivative in x is exact")


@core.rrule.register(gammainc_da)
def gammainc_da_rrule(a, x):
    y = gammainc_da(a, x)
    project_x = ProjectTo(x)

    @kit.zero_guard((NoTangent(), kit.zero_for(a), kit.zero_for(x)))
    def gammainc_da_pullback(y_bar):
        a_bar = not_implemented(_GAMMAINC_DA2) if kit.is_differentiable(a) else NoTangent()
        # d/dx dP/da = d/da dP/dx = dP/dx (log x - psi(a))
        x_bar = project_x(_gammainc_dx(a, x) * (np.log(x) - sc.digamma(a)) * y_bar)
        return NoTangent(), a_bar, x_bar

    return y, gammainc_da_pullback


@core.frule.register(gammainc_da)
def gammainc_da_frule(dargs, a, x):
    y = gammainc_da(a, x)
    if kit.nonzero(dargs[1]) is not None:
        return y, not_implemented(_GAMMAINC_DA2)
    x_dot = kit.nonzero(dargs[2])
    if x_dot is None:
        return y, ZeroTangent()
    return y, kit.fit_output(_gammainc_dx(a, x) * (np.log(x) - sc.digamma(a)) * x_dot, y)


_GAMMAINC_SLOW = ("the derivative of gammainc / gammaincc with respect to a is given where "
                  "its series converge (a up to about 1e6 near x = a); these arguments are "
                  "outside that")


def _gammainc_da_checked(a: Any, x: Any) -> Any:
    d = gammainc_da(a, x)
    with np.errstate(invalid="ignore"):
        slow = np.isnan(d) & (np.asarray(a) > 0) & (np.asarray(x) >= 0)
    return not_implemented(_GAMMAINC_SLOW) if np.any(slow) else d


scalar_rule(sc.gammainc, lambda a, x, *, wrt: (
    _gammainc_da_checked(a, x) if wrt[0] else None, _gammainc_dx(a, x)))
scalar_rule(sc.gammaincc, lambda a, x, *, wrt: (
    -_gammainc_da_checked(a, x) if wrt[0] else None, -_gammainc_dx(a, x)))


# --- zeta w.r.t. x ----------------------------------------------------------------------------

# B_2k / (2k)!, k = 1..12, for the Euler-Maclaurin corrections
_BERNOULLI = tuple(float(sc.bernoulli(2 * k)[2 * k] / sc.factorial(2 * k)) for k in range(1, 13))


def zeta_dx(x: Any, q: Any = 1.0, m: int = 1) -> np.ndarray:
    """The derivative (the ``m``-th, m >= 1) of the Hurwitz zeta function
    ``scipy.special.zeta(x, q)`` with respect to its exponent ``x`` (float64, broadcast),
    for ``x > 1`` and ``q > 0``: the Euler-Maclaurin formula of ``zeta(x, q) = sum_n
    (n + q)^-x``, differentiated ``m`` times in ``x``.

    NaN where the series diverges (``x <= 1``, where SciPy's Hurwitz zeta is NaN or inf)
    or an argument is NaN; ``q <= 0`` is for the rule to refuse.

    Examples:
        >>> import numpy as np
        >>> bool(np.isclose(zeta_dx(2.0), -0.9375482543158437, rtol=1e-14))
        True
    """
    if not (isinstance(m, (int, np.integer)) and m >= 1):
        raise ValueError(f"zeta_dx: m is the order of the derivative, an int >= 1; got {m!r}")
    return _zeta_derivative(x, q, int(m))


def _zeta_derivative(x: Any, q: Any, m: int) -> np.ndarray:
    """The m-th derivative of zeta(x, q) in x: the Euler-Maclaurin formula differentiated
    m times (each part by Leibniz' rule)."""
    x, q = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(q, dtype=np.float64))
    with np.errstate(all="ignore"):
        ok = (x > 1) & (q > 0)
        xs, qs = np.where(ok, x, 2.0), np.where(ok, q, 1.0)
        # enough direct terms that (x + 2k) / (2 pi w) is small in the corrections
        n_direct = np.clip(np.ceil(xs), 16, 64)
        total = np.zeros_like(xs)
        for n in range(int(n_direct.max()) if xs.size else 0):
            log_t = np.log(qs + n)
            total += np.where(n < n_direct, (-log_t) ** m * np.exp(-xs * log_t), 0.0)
        w = qs + n_direct
        minus_log_w = -np.log(w)
        w_x = np.exp(-xs * np.log(w))
        # w^(1-x) / (x - 1) = e^(-u log w) / u with u = x - 1
        u = xs - 1
        total += w * w_x * sum(math.comb(m, j) * minus_log_w ** (m - j) * (-1) ** j
                               * math.factorial(j) / u ** (j + 1) for j in range(m + 1))
        total += minus_log_w**m * w_x / 2
        # the corrections B_2k / (2k)! R_k(x) w^(-x-2k+1), R_k = (x)_(2k-1); rising[i] is
        # the i-th derivative of R_k
        rising = [np.ones_like(xs)] + [np.zeros_like(xs) for _ in range(m)]
        power = w_x / w
        for k, b in enumerate(_BERNOULLI, start=1):
            for j in ((0,) if k == 1 else (2 * k - 3, 2 * k - 2)):
                rising = [rising[i] * (xs + j) + (i * rising[i - 1] if i else 0)
                          for i in range(m + 1)]
            total += b * power * sum(math.comb(m, i) * rising[i] * minus_log_w ** (m - i)
                                     for i in range(m + 1))
            power = power / (w * w)
        out = np.where(ok, total, np.nan)
        out = np.where(np.isnan(x) | np.isnan(q), np.nan, out)
    return out[()] if out.ndim == 0 else out


def _zeta_x_refusal(x: Any, q: Any, y: Any) -> str | None:
    """Why the derivative in x is not given at these arguments, or None."""
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(y)
        if q is None and np.any(finite & (np.asarray(x) < 1)):
            return ("the derivative of the Riemann zeta(x) with respect to x is implemented "
                    "for x > 1 only (the Euler-Maclaurin sum); at x < 1 it is not")
        if q is not None and np.any(finite & (np.asarray(q) <= 0)):
            return ("the derivative of zeta(x, q) with respect to x is implemented for q > 0 "
                    "only; SciPy's values at q <= 0 (integer x) have none here")
    return None


def _zeta_dq(x: Any, q: Any) -> Any:
    # d/dq zeta(x, q) = -x zeta(x + 1, q)
    return -x * sc.zeta(x + 1, q)


@core.rrule.register(sc.zeta)
def zeta_rrule(x, q=None, **kwargs):
    kit.refuse_out(sc.zeta, kwargs)
    has_q = q is not None
    y = sc.zeta(x, q, **kwargs)
    project_x = ProjectTo(x)
    project_q = ProjectTo(q)  # (of None: unused)
    zeros = (NoTangent(), kit.zero_for(x), kit.zero_for(q))[:2 + has_q]

    @kit.zero_guard(zeros)
    def zeta_pullback(y_bar):
        x_bar: Any = NoTangent()
        if kit.is_differentiable(x):
            why = _zeta_x_refusal(x, q, y)
            x_bar = not_implemented(why) if why else core.Thunk(
                lambda: project_x(zeta_dx(x, 1.0 if q is None else q) * y_bar))
        if not has_q:
            return NoTangent(), x_bar
        return NoTangent(), x_bar, core.Thunk(lambda: project_q(_zeta_dq(x, q) * y_bar))

    return y, zeta_pullback


@core.frule.register(sc.zeta)
def zeta_frule(dargs, x, q=None, **kwargs):
    kit.refuse_out(sc.zeta, kwargs)
    y = sc.zeta(x, q, **kwargs)
    x_dot = kit.nonzero(dargs[1])
    q_dot = None if q is None else kit.nonzero(dargs[2])
    y_dot: Any = ZeroTangent()
    if x_dot is not None:
        why = _zeta_x_refusal(x, q, y)
        if why:
            return y, not_implemented(why)
        y_dot = zeta_dx(x, 1.0 if q is None else q) * x_dot
    if q_dot is not None:
        y_dot = y_dot + _zeta_dq(x, q) * q_dot
    return y, kit.fit_output(y_dot, y)


def _zeta_dx_dq(x: Any, q: Any, m: int) -> Any:
    # d/dq d^m/dx^m zeta(x, q) = d^m/dx^m (-x zeta(x + 1, q))
    return -(m * (sc.zeta(x + 1, q) if m == 1 else zeta_dx(x + 1, q, m - 1))
             + x * zeta_dx(x + 1, q, m))


@core.rrule.register(zeta_dx)
def zeta_dx_rrule(x, q=1.0, m=1):
    y = zeta_dx(x, q, m)
    project_x, project_q = ProjectTo(x), ProjectTo(q)

    @kit.zero_guard((NoTangent(), kit.zero_for(x), kit.zero_for(q), NoTangent()))
    def zeta_dx_pullback(y_bar):
        x_bar = core.Thunk(lambda: project_x(zeta_dx(x, q, m + 1) * y_bar))
        q_bar = core.Thunk(lambda: project_q(_zeta_dx_dq(x, q, m) * y_bar))
        return NoTangent(), x_bar, q_bar, NoTangent()

    return y, zeta_dx_pullback


@core.frule.register(zeta_dx)
def zeta_dx_frule(dargs, x, q=1.0, m=1):
    y = zeta_dx(x, q, m)
    x_dot = kit.nonzero(dargs[1])
    q_dot = kit.nonzero(dargs[2]) if len(dargs) > 2 else None
    y_dot: Any = ZeroTangent()
    if x_dot is not None:
        y_dot = zeta_dx(x, q, m + 1) * x_dot
    if q_dot is not None:
        y_dot = y_dot + _zeta_dx_dq(x, q, m) * q_dot
    return y, kit.fit_output(y_dot, y)


# --- factorial, factorial2, factorialk -------------------------------------------------------

_FACTORIAL_K = ("the derivative of factorialk with respect to a non-integer k (extend="
                "'complex') is not implemented; differentiate with respect to n only")


def _factorial_dn(n: Any, y: Any, k: Any, extend: str) -> Any:
    """d/dn of SciPy's approximate multifactorial ``y = k^((n-1)/k) Gamma(n/k + 1) /
    Gamma(1/k + 1)`` (``Gamma(n + 1)`` for k = 1): ``y (log k + psi(n/k + 1)) / k``;
    0 where ``extend="zero"`` makes the value 0 (n < 0), NaN where n is NaN."""
    n = np.asarray(n)
    with np.errstate(all="ignore"):
        d = y * sc.digamma(n + 1) if k == 1 else y * (np.log(k) + sc.digamma(n / k + 1)) / k
        if extend == "zero":
            d = np.where(n < 0, 0.0, d)
    return d


def _factorial_rules(f: Any, with_k: bool, k_default: int = 1) -> None:
    """frule and rrule of ``f(n[, k], exact=False, extend="zero")``, differentiable in
    ``n`` when ``exact`` is False (an exact factorial is an integer)."""

    def bind(args: tuple, kwargs: dict) -> tuple:
        names = ("n", "k", "exact", "extend") if with_k else ("n", "exact", "extend")
        values = {"k": k_default, "exact": False, "extend": "zero", **dict(zip(names, args)),
                  **kwargs}
        return values["n"], values["k"], values["exact"], values["extend"]

    def factorial_rrule(*args: Any, **kwargs: Any) -> Any:
        y = f(*args, **kwargs)
        n, k, exact, extend = bind(args, kwargs)
        project_n = ProjectTo(n)
        k_bar = not_implemented(_FACTORIAL_K) if with_k and kit.is_differentiable(k) else (
            NoTangent())
        rest = [k_bar if i == 0 and with_k else NoTangent() for i in range(len(args) - 1)]
        differentiable = not exact and kit.is_differentiable(n)

        def factorial_pullback(y_bar: Any) -> tuple:
            y_bar = core.unthunk(y_bar)
            if not differentiable:
                return NoTangent(), NoTangent(), *rest
            if kit.is_zero(y_bar):
                return NoTangent(), ZeroTangent(), *rest
            return (NoTangent(), project_n(kit.conj(_factorial_dn(n, y, k, extend)) * y_bar),
                    *rest)

        return y, factorial_pullback

    def factorial_frule(dargs: tuple, *args: Any, **kwargs: Any) -> Any:
        y = f(*args, **kwargs)
        n, k, exact, extend = bind(args, kwargs)
        if with_k and len(args) > 1 and kit.nonzero(dargs[2]) is not None \
                and kit.is_differentiable(k):
            return y, not_implemented(_FACTORIAL_K)
        n_dot = kit.nonzero(dargs[1])
        if exact or n_dot is None or not kit.is_differentiable(n):
            return y, ZeroTangent() if not exact and kit.is_differentiable(n) else NoTangent()
        return y, kit.fit_output(_factorial_dn(n, y, k, extend) * n_dot, y)

    kit.define_rules(f, object, ..., frule_fn=factorial_frule, rrule_fn=factorial_rrule)


_factorial_rules(sc.factorial, with_k=False)
_factorial_rules(sc.factorial2, with_k=False, k_default=2)
_factorial_rules(sc.factorialk, with_k=True)


# --- hyp1f1, hyp2f1 w.r.t. their parameters ---------------------------------------------------
# The power series, differentiated term by term: a term t_n = prod_j (a + j) ... z^n / n! has
# d t_n / da = t_n sum_(j<n) 1 / (a + j). A sum of terms of both signs loses digits; the rule
# measures the loss (the sum of the terms' magnitudes against the result) and refuses, rather
# than return a derivative accurate to fewer than about 9 digits.

_HYP_MAX_TERMS = 5000
# the most digits the cancellation may take: eps * magnitudes <= _HYP_LOSS * |derivative|
_HYP_LOSS = 1e-10 / _EPS


def _hyp_series(tops: tuple, bottoms: tuple, z: np.ndarray, radius: float,
                cross: tuple = (0, -1)) -> dict | None:
    """Sums of the series ``sum_n t_n``, ``t_n = prod (tops)_n / prod (bottoms)_n z^n / n!``
    (elementwise, float64), and of its terms times ``sigma_p = sum_(j<n) 1 / (p + j)`` for
    each parameter p (tops then bottoms): ``{"value", "sums": [S_p], "mags": [sum |t_n
    sigma_p|], "cross": sum |t_n (sigma_i - sigma_j)| for (i, j) = cross, "absval": sum
    |t_n|}``; None when it does not converge in ``_HYP_MAX_TERMS`` terms."""
    params = [*tops, *bottoms]
    t = np.ones_like(z)
    value, absval = np.ones_like(z), np.ones_like(z)
    sig = [np.zeros_like(z) for _ in params]
    sums = [np.zeros_like(z) for _ in params]
    mags = [np.zeros_like(z) for _ in params]  # the magnitudes, for the loss estimate
    crossed = np.zeros_like(z)
    tail = 1 / (1 - radius) if radius < 1 else 1.0
    for n in range(_HYP_MAX_TERMS):
        ratio = z / (n + 1)
        for p in tops:
            ratio = ratio * (p + n)
        for p in bottoms:
            ratio = ratio / (p + n)
        for i, p in enumerate(params):
            sig[i] = sig[i] + 1 / (p + n)
        t = t * ratio
        value = value + t
        absval = absval + np.abs(t)
        for i in range(len(params)):
            sums[i] = sums[i] + t * sig[i]
            mags[i] = mags[i] + np.abs(t * sig[i])
        crossed = crossed + np.abs(t * (sig[cross[0]] - sig[cross[1]]))
        size = np.abs(t) * (1 + sum(np.abs(s) for s in sig)) * tail
        scale = np.abs(value) + sum(np.abs(s) for s in sums)
        if n > 2 and np.all((size <= _EPS * scale) | ~np.isfinite(scale)) and np.all(
                np.abs(ratio) < 1):
            return {"value": value, "sums": sums, "mags": mags, "cross": crossed,
                    "absval": absval}
    return None


def _loss(ds: tuple, mags: tuple) -> np.ndarray:
    """How many times the derivatives' size their terms' magnitudes are (the worst of
    ``ds``): the digits that cancellation takes."""
    with np.errstate(all="ignore"):
        return np.max([np.where(m == 0, 0.0, m / np.abs(d)) for d, m in zip(ds, mags)], axis=0)


def _accurate(d: np.ndarray, mag: np.ndarray) -> bool:
    with np.errstate(invalid="ignore"):
        return bool(np.all((mag <= _HYP_LOSS * np.abs(d)) | (mag == 0) | np.isnan(d)))


_HYP1F1_PARAMS = (
    "the derivative of hyp1f1(a, b, x) with respect to a and b is given for real arguments "
    "where its power series (Kummer-transformed for x < 0) converges and keeps at least 9 "
    "digits, with a and b not non-positive integers; these arguments are outside that "
    "(the derivative in x is exact everywhere)")


def hyp1f1_dparams(a: Any, b: Any, x: Any) -> tuple | None:
    """The derivatives of ``scipy.special.hyp1f1(a, b, x)`` with respect to ``a`` and
    ``b`` (float64, broadcast), or None where they are not given accurately (see
    `_HYP1F1_PARAMS`).

    Examples:
        >>> import numpy as np
        >>> d_a, d_b = hyp1f1_dparams(1.0, 2.0, 0.5)
        >>> bool(np.isclose(d_a, 0.3232409123032298, rtol=1e-12))
        True
    """
    if any(np.iscomplexobj(v) for v in (a, b, x)):
        return None
    a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, x)))
    bad = np.isnan(a) | np.isnan(b) | np.isnan(x)
    with np.errstate(all="ignore"):
        for p in (a, b):
            if np.any(~bad & (p <= 0) & (p == np.round(p))):
                return None
        if np.any(~bad & ~np.isfinite(a + b + x)):
            return None
        a, b, x = (np.where(bad, 1.0, v) for v in (a, b, x))
        # M(a, b, x) = e^x M(b - a, b, -x): a series of positive terms where b > a (not
        # where b - a is a non-positive integer: a polynomial, whose derivative in its
        # parameter the terminated series does not carry)
        kummer = (x < 0) & ~((b - a <= 0) & (b - a == np.round(b - a)))
        top = np.where(kummer, b - a, a)
        s = _hyp_series((top,), (b,), np.where(kummer, -x, x), 0.0)
        if s is None:
            return None
        s_top, s_b = s["sums"]
        m_top, m_b = s["mags"]
        e = np.exp(np.where(kummer, x, 0.0))
        d_a = np.where(kummer, -e * s_top, s_top)
        d_b = np.where(kummer, e * (s_top - s_b), -s_b)
        mag_a = e * m_top
        mag_b = np.where(kummer, e * s["cross"], m_b)
        if not (_accurate(d_a, mag_a) and _accurate(d_b, mag_b)):
            return None
        return np.where(bad, np.nan, d_a), np.where(bad, np.nan, d_b)


_HYP2F1_PARAMS = (
    "the derivative of hyp2f1(a, b, c, z) with respect to a, b and c is given for real "
    "arguments with |z| <= 0.9 where its power series keeps at least 9 digits, with a, b, c "
    "not non-positive integers; these arguments are outside that (the derivative in z is "
    "exact everywhere)")


def hyp2f1_dparams(a: Any, b: Any, c: Any, z: Any) -> tuple | None:
    """The derivatives of ``scipy.special.hyp2f1(a, b, c, z)`` with respect to ``a``, ``b``
    and ``c`` (float64, broadcast), or None where they are not given accurately (see
    `_HYP2F1_PARAMS`). For ``z < 0``, of the power series in ``z`` and of Pfaff's
    transformation (a series in ``z / (z - 1)``), the one that loses fewer digits.

    Examples:
        >>> import numpy as np
        >>> d_a, d_b, d_c = hyp2f1_dparams(1.0, 1.0, 2.0, 0.5)
        >>> bool(np.isclose(d_c, -0.258639705728336, rtol=1e-10))
        True
    """
    if any(np.iscomplexobj(v) for v in (a, b, c, z)):
        return None
    a, b, c, z = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, c, z)))
    bad = np.isnan(a) | np.isnan(b) | np.isnan(c) | np.isnan(z)
    with np.errstate(all="ignore"):
        for p in (a, b, c):
            if np.any(~bad & (p <= 0) & (p == np.round(p))):
                return None
        if np.any(~bad & ~(np.isfinite(a + b + c) & (np.abs(z) <= 0.9))):
            return None
        a, b, c, z = (np.where(bad, v0, v) for v, v0 in zip((a, b, c, z), (1.0, 1.0, 2.0, 0.0)))
        s = _hyp_series((a, b), (c,), z, 0.9)
        if s is None:
            return None
        d_a, d_b, s_c = s["sums"]
        ds = (d_a, d_b, -s_c)
        loss = _loss(ds, s["mags"])
        # Pfaff: F(a, b, c, z) = (1 - z)^-a F(a, c - b, c, z / (z - 1)), for z < 0 a series
        # in w in (0, 0.48) (not where c - b is a non-positive integer: see hyp1f1)
        pfaff = (z < 0) & ~((c - b <= 0) & (c - b == np.round(c - b)))
        if np.any(pfaff):
            w = np.where(pfaff, z / (z - 1), 0.0)
            p = _hyp_series((a, c - b), (c,), w, 0.5, cross=(1, 2))
            if p is not None:
                scale, log1mz = np.exp(-a * np.log1p(-z)), np.log1p(-z)
                s_a, s_cb, s_c2 = p["sums"]
                m_a, m_cb, _ = p["mags"]
                pds = (scale * (s_a - log1mz * p["value"]), -scale * s_cb,
                       scale * (s_cb - s_c2))
                p_loss = _loss(pds, (scale * (m_a + log1mz * p["absval"]), scale * m_cb,
                                     scale * p["cross"]))
                use = pfaff & (p_loss < loss)
                ds = tuple(np.where(use, pd, d) for pd, d in zip(pds, ds))
                loss = np.where(use, p_loss, loss)
        if np.any(~bad & ~(loss <= _HYP_LOSS)):
            return None
        return tuple(np.where(bad, np.nan, d) for d in ds)


_HYP_SECOND = ("second derivatives of hyp1f1 / hyp2f1 involving a parameter (the derivative "
               "of hyp1f1_dparams or hyp2f1_dparams) are not implemented")


def _params_rules(f: Any) -> None:
    """Rules of the parameter-derivative kernels themselves: a second derivative through
    them is a named refusal, not the AD tracing into their loops."""

    def params_rrule(*args: Any) -> Any:
        y = f(*args)

        def params_pullback(y_bar: Any) -> tuple:
            return NoTangent(), *(not_implemented(_HYP_SECOND) if kit.is_differentiable(v)
                                  else NoTangent() for v in args)

        return y, params_pullback

    def params_frule(dargs: tuple, *args: Any) -> Any:
        y = f(*args)
        if all(kit.nonzero(d) is None for d in dargs[1:]):
            return y, ZeroTangent()
        return y, not_implemented(_HYP_SECOND)

    kit.define_rules(f, ..., frule_fn=params_frule, rrule_fn=params_rrule)


_params_rules(hyp1f1_dparams)
_params_rules(hyp2f1_dparams)


def _hyp1f1_partials(a: Any, b: Any, x: Any, *, wrt: tuple) -> tuple:
    d_x = a / b * sc.hyp1f1(a + 1, b + 1, x)
    if not (wrt[0] or wrt[1]):
        return None, None, d_x
    d = hyp1f1_dparams(a, b, x)
    if d is None:
        return not_implemented(_HYP1F1_PARAMS), not_implemented(_HYP1F1_PARAMS), d_x
    return d[0], d[1], d_x


def _hyp2f1_partials(a: Any, b: Any, c: Any, z: Any, *, wrt: tuple) -> tuple:
    d_z = a * b / c * sc.hyp2f1(a + 1, b + 1, c + 1, z)
    if not (wrt[0] or wrt[1] or wrt[2]):
        return None, None, None, d_z
    d = hyp2f1_dparams(a, b, c, z)
    if d is None:
        return (*(not_implemented(_HYP2F1_PARAMS),) * 3, d_z)
    return (*d, d_z)


scalar_rule(sc.hyp1f1, _hyp1f1_partials)
scalar_rule(sc.hyp2f1, _hyp2f1_partials)
