"""Rules for multivariate ``scipy.stats`` distributions: ``multivariate_normal`` and
``dirichlet``, methods ``logpdf`` and ``pdf``.

Registered on ``multivariate_normal_gen.logpdf`` and so on, with the distribution first;
``scipy.stats.multivariate_normal.logpdf(x, mean, cov)`` reaches the rule as described
in ``stats_continuous.py``. Frozen multivariate distributions (``multivariate_normal(mean,
cov).logpdf(x)``) have no rules of their own (SciPy factorizes the covariance when
freezing and evaluates private helpers); the reference AD traces through that code.

**multivariate_normal** ``logpdf(x, mean=None, cov=1, allow_singular=False)``: ``x`` holds
points along its last axis (SciPy's conventions for ``d = 1`` and single points apply),
``mean`` is a vector (or a scalar, or omitted), ``cov`` a matrix, a vector (the
diagonal) or a scalar (times the identity). With ``r = x - mean``:
``d/dx = -cov^{-1} r``, ``d/dmean = cov^{-1} r`` and
``d/dcov = -(cov^{-1} - cov^{-1} r r^T cov^{-1}) / 2``.

*Convention for cov:* a covariance is symmetric, and SciPy reads only one triangle of
it. The cotangent of a matrix ``cov`` is the **symmetric gradient** above (the
gradient w.r.t. the entries treated as independent, which is symmetric): paired with
a symmetric tangent it gives the exact derivative; the pushforward of a tangent
``cov_dot`` uses its symmetric part. A vector ``cov`` gets the diagonal of it, a
scalar its trace. With ``allow_singular=True`` and a singular ``cov``, the derivatives
w.r.t. ``x`` and ``mean`` use the pseudo-inverse and the one w.r.t. ``cov`` is
``not_implemented`` (the pseudo-determinant is not differentiable there).

**dirichlet** ``logpdf(x, alpha)``: ``x`` holds the ``K`` components along its *first*
axis (``(K,)`` or ``(K, n)``), or ``K - 1`` of them (the last is ``1 - sum``).
``d/dalpha_i = log x_i - digamma(alpha_i) + digamma(sum(alpha))``. *Convention for x:*
``x`` lies on the simplex and SciPy rejects points off it, so only tangents whose
components sum to 0 exist: the cotangent of all ``K`` components is the gradient
``(alpha_i - 1) / x_i`` projected onto them (its mean over the components
subtracted); given ``K - 1`` components, the last one's dependence is folded in.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.special as sc
import scipy.stats as st

from chainrules.core import NoTangent, ProjectTo, Thunk, ZeroTangent, not_implemented, unthunk
from chainrules.rules import _kit as kit

from ._stats import as_float, check_real

_MVN = type(st.multivariate_normal)
_DIRICHLET = type(st.dirichlet)
_SINGULAR = ("the derivative of multivariate_normal w.r.t. a singular covariance (its "
             "pseudo-determinant) is not implemented")

# --- multivariate_normal -----------------------------------------------------------------


class _MVNState:
    """The pieces the derivatives share, computed once per call."""

    def __init__(self, x: Any, mean: Any, cov: Any) -> None:
        cov_a = as_float(cov)
        mean_a = None if mean is None else as_float(mean)
        if mean_a is not None and mean_a.ndim == 1:
            d = mean_a.size
        elif cov_a.ndim == 2:
            d = cov_a.shape[0]
        else:
            d = max(cov_a.size, 1) if cov_a.ndim == 1 else 1
        self.d = d
        self.cov_ndim = cov_a.ndim
        if cov_a.ndim == 0:
            full = cov_a * np.eye(d)
        elif cov_a.ndim == 1:
            full = np.diag(cov_a) if cov_a.size == d else cov_a * np.eye(d)
        else:
            full = cov_a
        xa = as_float(x)
        if xa.ndim == 0:
            xa = xa[np.newaxis]
        if xa.ndim == 1:
            xa = xa[:, np.newaxis] if d == 1 else xa[np.newaxis, :]
        self.x_shape = np.shape(x)
        self.batch = xa.shape[:-1]
        r = xa - (0.0 if mean_a is None else mean_a)
        try:
            factor = sla.cho_factor(full, lower=True)
            self.inv = sla.cho_solve(factor, np.eye(d))
            self.singular = False
        except np.linalg.LinAlgError:
            self.inv = np.linalg.pinv(full, hermitian=True)
            self.singular = True
        self.sol = r @ self.inv  # cov^{-1} r per point (cov is symmetric)

    def weights(self, y_bar: Any, y: Any, pdf: bool) -> np.ndarray:
        w = np.reshape(np.asarray(y_bar, dtype=np.float64), self.batch)
        return w * np.reshape(np.asarray(y), self.batch) if pdf else w

    def cov_grad(self, w: np.ndarray) -> np.ndarray:
        sol = self.sol.reshape(-1, self.d)
        wf = w.reshape(-1)
        g = -0.5 * (wf.sum() * self.inv - (sol * wf[:, None]).T @ sol)
        return g

    def cov_cotangent(self, g: np.ndarray) -> Any:
        if self.cov_ndim == 0:
            return np.trace(g)
        if self.cov_ndim == 1:
            return np.diag(g).copy()
        return g

    def cov_tangent(self, cov_dot: Any) -> np.ndarray:
        c = np.asarray(cov_dot, dtype=np.float64)
        if c.ndim == 0:
            return c * np.eye(self.d)
        return np.diag(c) if c.ndim == 1 else c


_MVN_PARAMS = ("x", "mean", "cov", "allow_singular")


def _bind(params: tuple, defaults: dict, args: tuple, kwargs: dict) -> dict:
    values = dict(defaults)
    values.update(zip(params, args))
    values.update((k, v) for k, v in kwargs.items() if k in params)
    return values


def _mvn_mean_cotangent(s: _MVNState, w: np.ndarray, mean: Any) -> Any:
    total = np.sum(np.reshape(w[..., None] * s.sol, (-1, s.d)), axis=0)
    return total if np.ndim(mean) else np.sum(total)


def _mvn_rules(method: Any, pdf: bool) -> None:
    label = "multivariate_normal_" + ("pdf" if pdf else "logpdf")
    defaults = {"mean": None, "cov": 1, "allow_singular": False}

    def mvn_rrule(dist: Any, *args: Any, **kwargs: Any) -> Any:
        v = _bind(_MVN_PARAMS, defaults, args, kwargs)
        if type(dist) is not _MVN or isinstance(v["cov"], st.Covariance):
            return None
        check_real(f"multivariate_normal.{method.__name__}", list(_MVN_PARAMS), args, kwargs)
        y = method(dist, *args, **kwargs)
        s = _MVNState(v["x"], v["mean"], v["cov"])
        projectors = [ProjectTo(a) for a in args[:3]]
        n = len(args)

        def mvn_zeros() -> tuple:
            return (NoTangent(), NoTangent(), *(
                NoTangent() if a is None or i >= 3 else ZeroTangent()
                for i, a in enumerate(args)))

        @kit.zero_guard(mvn_zeros)
        def mvn_pullback(y_bar: Any) -> tuple:
            w = s.weights(y_bar, y, pdf)
            out: list = [NoTangent(), NoTangent(), Thunk(
                lambda: projectors[0](np.reshape(-w[..., None] * s.sol, s.x_shape)))]
            if n >= 2:
                out.append(NoTangent() if args[1] is None else Thunk(
                    lambda: projectors[1](_mvn_mean_cotangent(s, w, args[1]))))
            if n >= 3:
                out.append(not_implemented(_SINGULAR) if s.singular else Thunk(
                    lambda: projectors[2](s.cov_cotangent(s.cov_grad(w)))))
            out.extend(NoTangent() for _ in args[3:])
            return tuple(out)

        return y, mvn_pullback

    def mvn_frule(dargs: tuple, dist: Any, *args: Any, **kwargs: Any) -> Any:
        v = _bind(_MVN_PARAMS, defaults, args, kwargs)
        if type(dist) is not _MVN or isinstance(v["cov"], st.Covariance):
            return None
        check_real(f"multivariate_normal.{method.__name__}", list(_MVN_PARAMS), args, kwargs)
        y = method(dist, *args, **kwargs)
        dots = [unthunk(d) for d in dargs[2:5]]
        if all(kit.is_zero(d) for d in dots):
            return y, ZeroTangent()
        s = _MVNState(v["x"], v["mean"], v["cov"])
        y_dot = np.zeros(s.batch)
        if not kit.is_zero(dots[0]):
            x_dot = np.reshape(np.asarray(dots[0], dtype=np.float64), s.sol.shape)
            y_dot = y_dot - np.sum(s.sol * x_dot, axis=-1)
        if len(dots) > 1 and not kit.is_zero(dots[1]):
            y_dot = y_dot + np.sum(s.sol * np.asarray(dots[1], dtype=np.float64), axis=-1)
        if len(dots) > 2 and not kit.is_zero(dots[2]):
            if s.singular:
                return y, not_implemented(_SINGULAR)
            c = s.cov_tangent(dots[2])
            y_dot = y_dot + (-0.5 * np.sum(s.inv * c)
                             + 0.5 * np.einsum("...i,ij,...j->...", s.sol, c, s.sol))
        if pdf:
            y_dot = y_dot * np.reshape(np.asarray(y), s.batch)
        return y, kit.fit_output(np.reshape(y_dot, np.shape(y)), y)

    kit.define_rules(method, _MVN, ..., frule_fn=mvn_frule, rrule_fn=mvn_rrule, name=label)


_mvn_rules(_MVN.logpdf, pdf=False)
_mvn_rules(_MVN.pdf, pdf=True)

# --- dirichlet ------------------------------------------------------------------------------


class _DirichletState:
    def __init__(self, x: Any, alpha: Any) -> None:
        self.alpha = as_float(alpha)
        xa = as_float(x)
        self.x_shape = xa.shape
        self.implied = xa.shape[0] == self.alpha.shape[0] - 1
        if self.implied:
            xa = np.concatenate([xa, (1 - np.sum(xa, axis=0))[np.newaxis]], axis=0)
        self.x = xa
        self.a_col = self.alpha.reshape((-1,) + (1,) * (xa.ndim - 1))
        self.batch = xa.shape[1:]

    def weights(self, y_bar: Any, y: Any, pdf: bool) -> np.ndarray:
        w = np.reshape(np.asarray(y_bar, dtype=np.float64), self.batch)
        return w * np.reshape(np.asarray(y), self.batch) if pdf else w

    def dx(self) -> np.ndarray:
        """d logpdf / d x per component and point: with the implied component folded
        in, or projected onto the simplex's tangent space (components summing to 0)."""
        am1 = self.a_col - 1
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(am1 == 0, 0.0, am1 / self.x)
        return g[:-1] - g[-1:] if self.implied else g - np.mean(g, axis=0)

    def dalpha(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return (np.log(self.x) - sc.digamma(self.a_col)
                    + sc.digamma(np.sum(self.alpha)))


def _dirichlet_rules(method: Any, pdf: bool) -> None:
    label = "dirichlet_" + ("pdf" if pdf else "logpdf")

    def dirichlet_rrule(dist: Any, x: Any, alpha: Any) -> Any:
        if type(dist) is not _DIRICHLET:
            return None
        check_real(f"dirichlet.{method.__name__}", ["x", "alpha"], (x, alpha), {})
        y = method(dist, x, alpha)
        s = _DirichletState(x, alpha)
        project_x, project_alpha = ProjectTo(x), ProjectTo(alpha)

        @kit.zero_guard((NoTangent(), NoTangent(), ZeroTangent(), ZeroTangent()))
        def dirichlet_pullback(y_bar: Any) -> tuple:
            w = s.weights(y_bar, y, pdf)
            x_bar = Thunk(lambda: project_x(s.dx() * w))
            alpha_bar = Thunk(lambda: project_alpha(np.reshape(
                np.sum(np.reshape(s.dalpha() * w, (s.alpha.size, -1)), axis=1),
                np.shape(alpha))))
            return NoTangent(), NoTangent(), x_bar, alpha_bar

        return y, dirichlet_pullback

    def dirichlet_frule(dargs: tuple, dist: Any, x: Any, alpha: Any) -> Any:
        if type(dist) is not _DIRICHLET:
            return None
        check_real(f"dirichlet.{method.__name__}", ["x", "alpha"], (x, alpha), {})
        y = method(dist, x, alpha)
        x_dot, alpha_dot = unthunk(dargs[2]), unthunk(dargs[3])
        if kit.is_zero(x_dot) and kit.is_zero(alpha_dot):
            return y, ZeroTangent()
        s = _DirichletState(x, alpha)
        y_dot = np.zeros(s.batch)
        if not kit.is_zero(x_dot):
            y_dot = y_dot + np.sum(s.dx() * np.asarray(x_dot, dtype=np.float64), axis=0)
        if not kit.is_zero(alpha_dot):
            a_dot = np.reshape(np.asarray(alpha_dot, dtype=np.float64), s.a_col.shape)
            y_dot = y_dot + np.sum(s.dalpha() * a_dot, axis=0)
        if pdf:
            y_dot = y_dot * np.reshape(np.asarray(y), s.batch)
        return y, kit.fit_output(np.reshape(y_dot, np.shape(y)), y)

    kit.define_rules(method, _DIRICHLET, object, object, frule_fn=dirichlet_frule,
                     rrule_fn=dirichlet_rrule, name=label)


_dirichlet_rules(_DIRICHLET.logpdf, pdf=False)
_dirichlet_rules(_DIRICHLET.pdf, pdf=True)
