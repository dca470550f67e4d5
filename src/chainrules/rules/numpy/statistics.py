"""Rules for NumPy's statistics: ``mean``, ``nanmean``, ``var``, ``std``, ``nanvar``,
``nanstd``, ``median``, ``nanmedian``, ``quantile`` and ``percentile``
(``method="linear"``; w.r.t. ``a`` and ``q``), ``average`` (w.r.t. ``a`` and
``weights``, ``returned=``), ``cov`` (w.r.t. ``m`` and ``y``; ``rowvar``, ``bias``,
``ddof``, ``fweights``, ``aweights``) and ``corrcoef`` (w.r.t. ``x`` and ``y``).

Conventions (and those of ``reductions.py`` for ``axis``, ``keepdims``, ``out=``,
``where=``):

- ``ddof`` / ``correction`` are supported, ``var``/``std``'s ``mean=`` raises
  ``NotImplementedError``; ``var``/``std`` of complex ``x`` are real (``mean |x - mean
  x|^2``) and their gradient is ``2 (x - mean x) y_bar / (N - ddof)``.
- ``std`` at a zero standard deviation gives 0 (every element equals the mean there:
  a subgradient of the convex ``std`` at its minimum).
- ``median``: the cotangent goes to the middle element, or half to each of the two
  middle elements of an even count, as ranked by a stable ``argsort`` (ties: the
  elements at those ranks).
- ``quantile``/``percentile``: the cotangent goes to the two order statistics that
  are interpolated; where ``q (n - 1)`` is an integer, the derivative w.r.t. ``q`` is
  the one from above (the slope to the next order statistic; 0 at ``q = 1``).
- ``nan*`` functions: elements that are NaN get a zero cotangent.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from chainrules.core import NoTangent, Tangent, Thunk, ZeroTangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit

from . import _reduce_kernel as kernel
from ._linear import scatter

# ----------------------------------------------------------------------------- mean, var


def _mean_weights(x: np.ndarray, y: Any, p: dict, axes: tuple, keepdims: bool) -> Any:
    return 1.0 / max(kernel.count_of(x.shape, axes), 1)


def _nanmean_weights(x: np.ndarray, y: Any, p: dict, axes: tuple, keepdims: bool) -> Any:
    finite = ~np.isnan(x)
    return finite / np.sum(finite, axis=axes, keepdims=True)


def _mean_whole(a: np.ndarray) -> Any:
    """``np.mean(a)``: what NumPy's ``_mean`` computes for a non-empty float or complex
    array of at least single precision (the sum, divided by the count as an ``intp``,
    in the sum's type); NumPy's own code for the rest (float16, integers, empty)."""
    if a.dtype.kind not in "fc" or a.dtype.itemsize < 4 or a.size == 0:
        return np.mean(a)
    total = np.add.reduce(a, None)
    return total.dtype.type(total / np.intp(a.size))


kernel.reduction_rule(np.mean, _mean_weights, whole=_mean_whole)
kernel.reduction_rule(np.nanmean, _nanmean_weights, nan=True)


def _refuse_mean(f: Any, p: dict) -> None:
    if kernel.is_given(p.get("mean")):
        raise NotImplementedError(
            f"the rule for {kit.qualified_name(f)} does not support mean=: a precomputed mean "
            f"would be treated as a constant. Call {kit.qualified_name(f)} without mean=."
        )


def _var_weights(nan: bool, std: bool) -> Any:
    """``2 conj(x - mean x) / (N - ddof)``; for ``std`` over ``2 std``, and 0 where the
    standard deviation is 0 (there ``x - mean x`` is 0 too)."""

    def var_weights(x: np.ndarray, y: Any, p: dict, axes: tuple, keepdims: bool) -> Any:
        ddof = p["correction"] if kernel.is_given(p.get("correction")) else p["ddof"]
        if nan:
            finite = ~np.isnan(x)
            denom = np.sum(finite, axis=axes, keepdims=True) - ddof
            centred = np.zeros(x.shape, x.dtype) if x.size == 0 else np.where(
                finite, x - np.nanmean(x, axis=axes, keepdims=True), 0)
        else:
            denom = kernel.count_of(x.shape, axes) - ddof
            # (the mean of an empty slice warns; the primal has warned already)
            centred = np.zeros(x.shape, x.dtype) if x.size == 0 else \
                x - np.mean(x, axis=axes, keepdims=True)
        # No degrees of freedom (an empty slice, ddof >= N): the primal is nan or inf,
        # and so is its derivative; an empty input has an empty one.
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.divide(2.0, denom) * np.conj(centred)
        if not std:
            return w
        s = kernel.expand(np.asarray(y), x.shape, axes, keepdims)
        return np.where(s == 0, 0, w / (2 * np.where(s == 0, 1, s)))

    return var_weights


for _f, _nan, _std in ((np.var, False, False), (np.std, False, True),
                       (np.nanvar, True, False), (np.nanstd, True, True)):
    kernel.reduction_rule(_f, _var_weights(_nan, _std), nan=_nan, real=True, check=_refuse_mean)


# -------------------------------------------------------------------------------- median


def _median_weights(x: np.ndarray, y: Any, p: dict, axes: tuple, keepdims: bool) -> Any:
    """Weight 1 on the middle element of each slice (1/2 on each of two for even counts)."""
    xt, back = kernel.to_end(x, axes)
    n = xt.shape[-1]
    order = np.argsort(xt, axis=-1, kind="stable")
    w = np.zeros(xt.shape)
    if n % 2:
        np.put_along_axis(w, order[..., n // 2: n // 2 + 1], 1.0, axis=-1)
    else:
        np.put_along_axis(w, order[..., n // 2 - 1: n // 2 + 1], 0.5, axis=-1)
    return back(w)


def _nanmedian_weights(x: np.ndarray, y: Any, p: dict, axes: tuple, keepdims: bool) -> Any:
    """As `_median_weights`, over the non-NaN elements of each slice (NaNs sort last)."""
    xt, back = kernel.to_end(x, axes)
    order = np.argsort(xt, axis=-1, kind="stable")
    m = np.sum(~np.isnan(xt), axis=-1, keepdims=True)
    lo = np.maximum((m - 1) // 2, 0)
    hi = np.maximum(m // 2, 0)
    w = np.zeros(xt.shape)
    if xt.shape[-1]:
        np.put_along_axis(w, np.take_along_axis(order, lo, -1), 0.5, axis=-1)
        idx = np.take_along_axis(order, np.minimum(hi, xt.shape[-1] - 1), -1)
        np.put_along_axis(w, idx, np.take_along_axis(w, idx, -1) + 0.5, axis=-1)
        w = np.where(m > 0, w, 0.0)
    return back(w)


# a copy: overwrite_input must not touch `a`
kernel.reduction_rule(np.median, _median_weights, call=lambda a, p: np.median(
    np.array(a), axis=p["axis"], keepdims=bool(p["keepdims"])))
kernel.reduction_rule(np.nanmedian, _nanmedian_weights, nan=True, call=lambda a, p: np.nanmedian(
    np.array(a), axis=p["axis"], keepdims=kernel.keepdims_of(p)))


# ------------------------------------------------------------------- quantile, percentile


class _Quantile:
    """Order statistics that ``quantile(a, q, method="linear")`` interpolates between.

    For each q: the virtual index v = q (n - 1) between sorted positions f = floor(v)
    and c = min(f + 1, n - 1) with fraction t = v - f; y = (1 - t) x_(f) + t x_(c)."""

    def __init__(self, x: np.ndarray, q: Any, axes: tuple, keepdims: bool,
                 scale: float) -> None:
        self.x, self.axes, self.keepdims, self.scale = x, axes, keepdims, scale
        self.xt, self.back = kernel.to_end(x, axes)
        n = self.xt.shape[-1]
        self.order = np.argsort(self.xt, axis=-1, kind="stable")
        self.q_shape = np.shape(q)
        v = np.clip(np.asarray(q, dtype=np.float64).reshape(-1) * scale, 0, 1) * (n - 1)
        self.f = np.floor(v).astype(np.intp)
        self.c = np.minimum(self.f + 1, n - 1)
        self.t = v - self.f
        self.n = n
        # y = quantile has shape q.shape + reduced shape (with kept ones for keepdims)
        self.red_shape = np.sum(np.zeros(x.shape), axis=axes, keepdims=keepdims).shape

    def _stat(self, arr: np.ndarray, pos: int) -> np.ndarray:
        idx = np.broadcast_to(np.intp(pos), self.xt.shape[:-1])[..., None]
        return np.take_along_axis(arr, np.take_along_axis(self.order, idx, -1), -1)[..., 0]

    def _out(self, per_q: list) -> np.ndarray:
        if not per_q:  # an empty q: an empty result
            return np.zeros(self.q_shape + self.red_shape)
        return np.stack([v.reshape(self.red_shape) for v in per_q]).reshape(
            self.q_shape + self.red_shape)

    def pushforward(self, x_dot: Any, q_dot: Any) -> np.ndarray:
        out = []
        qd = None if q_dot is None else np.asarray(q_dot, dtype=np.float64).reshape(-1)
        dt = None if x_dot is None else kernel.to_end(np.broadcast_to(x_dot, self.x.shape),
                                                  self.axes)[0]
        for i, (f, c, t) in enumerate(zip(self.f, self.c, self.t)):
            v = np.zeros(self.xt.shape[:-1])
            if dt is not None:
                v = (1 - t) * self._stat(dt, f) + t * self._stat(dt, c)
            if qd is not None:
                v = v + qd[i] * self._slope(f, c)
            out.append(v)
        return self._out(out)

    def _slope(self, f: int, c: int) -> np.ndarray:
        """dy/dq: (n - 1) (x_(c) - x_(f)) times the q scale (1/100 for percentiles)."""
        return (self.n - 1) * self.scale * (self._stat(self.xt, c) - self._stat(self.xt, f))

    def x_bar(self, y_bar: np.ndarray) -> np.ndarray:
        g = np.broadcast_to(y_bar, self.q_shape + self.red_shape).reshape(
            (len(self.f), *self.xt.shape[:-1]))
        rows = self.xt.shape[:-1]
        if not len(self.f):  # an empty q reads no order statistic
            return np.zeros(self.x.shape)
        # each weighted cotangent summed into its order statistic's flat position (by
        # np.bincount, not writes into an array: run on values of an outer trace, for a
        # second derivative, this stays differentiable)
        base = np.arange(math.prod(rows), dtype=np.intp).reshape(rows) * self.n
        parts, srcs = [], []
        for gi, f, c, t in zip(g, self.f, self.c, self.t):
            for pos, w in ((f, 1 - t), (c, t)):
                idx = np.broadcast_to(np.intp(pos), rows)[..., None]
                srcs.append(base + np.take_along_axis(self.order, idx, -1)[..., 0])
                parts.append(w * gi)
        out = scatter(np.stack(parts), np.stack(srcs), self.xt.size)
        return self.back(out.reshape(self.xt.shape))

    def q_bar(self, y_bar: np.ndarray) -> np.ndarray:
        g = np.broadcast_to(y_bar, self.q_shape + self.red_shape).reshape(
            (len(self.f), *self.xt.shape[:-1]))
        return np.array([np.sum(gi * self._slope(f, c))
                         for gi, f, c in zip(g, self.f, self.c)]).reshape(self.q_shape)


def _quantile_rules(f: Any, name: str, scale: float) -> None:
    sig = inspect.signature(f)

    def setup(a: Any, q: Any, args: tuple, kwargs: dict) -> tuple:
        p = kernel.bind(sig, (a, q, *args), kwargs)
        kernel.refuse(f, p)
        if p["method"] != "linear" or p.get("weights") is not None:
            raise NotImplementedError(
                f"the rule for {kit.qualified_name(f)} supports method='linear' "
                "without weights only"
            )
        y = f(np.array(a), q, axis=p["axis"], keepdims=bool(p["keepdims"]))
        x = np.asarray(a)
        return y, _Quantile(x, q, kernel.axes_of(p["axis"], x.ndim), bool(p["keepdims"]), scale)

    def quantile_rrule(a, q, *args, **kwargs):
        y, quant = setup(a, q, args, kwargs)
        project_a, project_q = kit.array_projector(a), kit.array_projector(q)

        def quantile_pullback(y_bar):
            y_bar = kit.nonzero_array(y_bar)
            if y_bar is None:
                return (NoTangent(), project_a(ZeroTangent()), project_q(ZeroTangent()),
                        *kernel.rest_bars(args))
            return (NoTangent(), Thunk(lambda: project_a(quant.x_bar(y_bar))),
                    Thunk(lambda: project_q(quant.q_bar(y_bar))), *kernel.rest_bars(args))

        return y, quantile_pullback

    def quantile_frule(dargs, a, q, *args, **kwargs):
        y, quant = setup(a, q, args, kwargs)
        a_dot = kit.dense_tangent(dargs[1], a, zeros=False)
        q_dot = kit.dense_tangent(dargs[2], q, zeros=False)
        if a_dot is None and q_dot is None:
            return y, ZeroTangent()
        return y, kit.fit_output(quant.pushforward(a_dot, q_dot), y)

    kit.define_rules(f, frule_fn=quantile_frule, rrule_fn=quantile_rrule, name=name)


_quantile_rules(np.quantile, "quantile", 1.0)
_quantile_rules(np.percentile, "percentile", 0.01)


# ------------------------------------------------------------------------------- average

_AVERAGE_SIG = inspect.signature(np.average)


def _average_parts(a: Any, p: dict) -> tuple:
    """(x, axes, keepdims, w_full, w_back, total): weights broadcast to ``x``'s shape,
    the map of a full-shape weight cotangent back to the weights, their sums."""
    x = np.asarray(a)
    axes, keepdims = kernel.axes_of(p["axis"], x.ndim), kernel.keepdims_of(p)
    w = p["weights"]
    if w is None:
        return x, axes, keepdims, None, None, None
    w = np.asarray(w)
    if w.shape != x.shape:
        # NumPy: 1-d weights along a single axis
        shaped = np.moveaxis(w.reshape((1,) * (x.ndim - 1) + w.shape), -1, axes[0])
    else:
        shaped = w
    w_full = np.broadcast_to(shaped, x.shape)

    def w_back(g: np.ndarray) -> np.ndarray:
        sums = tuple(i for i in range(x.ndim) if shaped.shape[i] == 1 and x.shape[i] != 1)
        g = np.sum(g, axis=sums, keepdims=True) if sums else g
        return g.reshape(w.shape)

    total = np.sum(w_full, axis=axes, keepdims=True)
    return x, axes, keepdims, w_full, w_back, total


def _reduce_out(g: np.ndarray, axes: tuple, keepdims: bool) -> np.ndarray:
    return np.sum(g, axis=axes, keepdims=keepdims)


@rrule.register(np.average)
def average_rrule(a, *args, **kwargs):
    p = kernel.bind(_AVERAGE_SIG, (a, *args), kwargs)
    y = np.average(a, *args, **kwargs)
    x, axes, keepdims, w_full, w_back, total = _average_parts(a, p)
    returned = bool(p["returned"])
    avg = y[0] if returned else y
    project_a = kit.array_projector(a)
    project_w = kit.array_projector(p["weights"]) if len(args) >= 2 else None
    nargs = len(args)

    def average_pullback(y_bar):
        y_bar = unthunk(y_bar)
        if returned:
            if isinstance(y_bar, (ZeroTangent, NoTangent)):
                return kernel.zero_pullback_result(nargs)
            parts = y_bar.backing if isinstance(y_bar, Tangent) else y_bar
            avg_bar, total_bar = kit.nonzero_array(parts[0]), kit.nonzero_array(parts[1])
        else:
            avg_bar, total_bar = kit.nonzero_array(y_bar), None
        if avg_bar is None and total_bar is None:
            return kernel.zero_pullback_result(nargs)
        avg_full = (kernel.expand(avg_bar, x.shape, axes, keepdims)
                    if avg_bar is not None else None)
        if w_full is None:
            a_bar = (ZeroTangent() if avg_full is None
                     else project_a(avg_full / kernel.count_of(x.shape, axes)))
            return (NoTangent(), a_bar, *kernel.rest_bars(args))

        def a_bar_thunk():
            if avg_full is None:
                return ZeroTangent()
            return project_a(np.conj(w_full / total) * avg_full)

        def w_bar_thunk():
            g = 0
            if avg_full is not None:
                centred = x - kernel.expand(np.asarray(avg), x.shape, axes, keepdims)
                g = np.conj(centred / total) * avg_full
            if total_bar is not None:
                g = g + kernel.expand(total_bar, x.shape, axes, keepdims)
            return project_w(w_back(np.broadcast_to(g, x.shape)))

        bars = [NoTangent(), Thunk(a_bar_thunk), *kernel.rest_bars(args)]
        if project_w is not None:
            bars[3] = Thunk(w_bar_thunk)
        return tuple(bars)

    return y, average_pullback


@frule.register(np.average)
def average_frule(dargs, a, *args, **kwargs):
    p = kernel.bind(_AVERAGE_SIG, (a, *args), kwargs)
    y = np.average(a, *args, **kwargs)
    x, axes, keepdims, w_full, _, total = _average_parts(a, p)
    returned = bool(p["returned"])
    avg = y[0] if returned else y
    a_dot = kit.dense_tangent(dargs[1], a, zeros=False)
    w_dot = kit.dense_tangent(dargs[3], p["weights"], zeros=False) if len(dargs) > 3 else None
    avg_dot: Any = 0
    total_dot: Any = 0
    if w_full is None:
        if a_dot is not None:
            avg_dot = np.mean(a_dot, axis=axes, keepdims=keepdims)
    else:
        if a_dot is not None:
            avg_dot = _reduce_out(w_full * a_dot / total, axes, keepdims)
        if w_dot is not None:
            w_dot_full = np.broadcast_to(
                np.asarray(w_dot).reshape(np.shape(w_dot))
                if np.shape(w_dot) == x.shape else
                np.moveaxis(np.asarray(w_dot).reshape((1,) * (x.ndim - 1) + np.shape(w_dot)),
                            -1, axes[0]),
                x.shape)
            centred = x - kernel.expand(np.asarray(avg), x.shape, axes, keepdims)
            avg_dot = avg_dot + _reduce_out(w_dot_full * centred / total, axes, keepdims)
            total_dot = _reduce_out(w_dot_full, axes, keepdims)
    if a_dot is None and w_dot is None:
        return y, ZeroTangent()
    avg_dot = kit.fit_output(avg_dot, avg)
    if not returned:
        return y, avg_dot
    total_dot = kit.fit_output(total_dot, y[1]) if not isinstance(total_dot, int) else (
        kit.fit_output(np.zeros(np.shape(y[1])), y[1]))
    return y, Tangent[tuple](avg_dot, total_dot)




# --------------------------------------------------------------------------------- cov

_COV_SIG = inspect.signature(np.cov)


def _cov_rows(v: Any, rowvar: bool, dtype: Any) -> tuple[np.ndarray, Any]:
    """``v`` as NumPy's cov reads it: variables in rows, observations in columns; and
    the map of a cotangent in that layout back to ``v``'s shape."""
    a = np.asarray(v)
    x = np.array(a, ndmin=2, dtype=dtype)
    transposed = not rowvar and x.shape[0] != 1
    if transposed:
        x = x.T

    def back(g: np.ndarray) -> np.ndarray:
        return (g.T if transposed else g).reshape(a.shape)

    return x, back


def _cov_parts(m: Any, p: dict) -> tuple:
    """(X, rows of m, back maps, weights or None, normalisation) of ``np.cov``."""
    dtype = p["dtype"]
    if dtype is None:
        dtype = np.result_type(m, np.float64) if p["y"] is None else \
            np.result_type(m, p["y"], np.float64)
    x, back_m = _cov_rows(m, p["rowvar"], dtype)
    nm, back_y = x.shape[0], None
    if p["y"] is not None:
        xy, back_y = _cov_rows(p["y"], p["rowvar"], dtype)
        x = np.concatenate((x, xy), axis=0)
    ddof = p["ddof"]
    if ddof is None:
        ddof = 1 if not p["bias"] else 0
    w = None
    if p["fweights"] is not None:
        w = np.asarray(p["fweights"], dtype=float)
    if p["aweights"] is not None:
        aw = np.asarray(p["aweights"], dtype=float)
        w = aw if w is None else w * aw
    if w is None:
        fact = x.shape[1] - ddof
    elif ddof == 0:
        fact = w.sum()
    elif p["aweights"] is None:
        fact = w.sum() - ddof
    else:
        fact = w.sum() - ddof * np.sum(w * np.asarray(p["aweights"], dtype=float)) / w.sum()
    # a NumPy float: no degrees of freedom (no observations, ddof >= N) give inf and NaN,
    # as in the primal, not Python's ZeroDivisionError
    return x, nm, back_m, back_y, w, np.float64(max(fact, 0))


def _cov_centred(x: np.ndarray, w: Any) -> np.ndarray:
    """The map ``dX -> dX - (dX w / sum w) 1^T`` (centring; also its own adjoint's
    transpose: see ``_cov_uncentre``)."""
    if x.size == 0:  # no variables or no observations (np.average divides 0 by 0)
        return x
    avg = np.average(x, axis=1, weights=w)
    return x - avg[:, None]


def _cov_uncentre(g: np.ndarray, w: Any) -> np.ndarray:
    """The adjoint of centring: ``G -> G - (G 1) w^T / sum w``."""
    n = g.shape[1]
    if n == 0:  # no observations: nothing to centre
        return g
    weights = np.full(n, 1.0 / n) if w is None else w / w.sum()
    return g - g.sum(axis=1, keepdims=True) * weights[None, :]


@rrule.register(np.cov)
def cov_rrule(m, *args, **kwargs):
    p = kernel.bind(_COV_SIG, (m, *args), kwargs)
    y = np.cov(m, *args, **kwargs)
    x, nm, back_m, back_y, w, fact = _cov_parts(m, p)
    xc = _cov_centred(x, w)
    xcw = xc if w is None else xc * w[None, :]
    project_m = kit.array_projector(m)
    project_y = kit.array_projector(p["y"]) if len(args) >= 1 and p["y"] is not None else None
    nargs = len(args)

    def cov_pullback(c_bar):
        c_bar = kit.nonzero_array(c_bar)
        if c_bar is None:
            return kernel.zero_pullback_result(nargs)
        if np.size(y) == 0:  # an empty m: NumPy returns an empty result whatever y is
            bars = [NoTangent(), ZeroTangent(), *kernel.rest_bars(args)]
            if project_y is not None:
                bars[2] = ZeroTangent()
            return tuple(bars)
        c_bar = np.reshape(c_bar, (x.shape[0], x.shape[0]))
        # C = Xc W Xc^H / fact: Xc_bar = (C_bar + C_bar^H) Xc W / fact
        g = _cov_uncentre((c_bar + np.conj(c_bar.T)) @ xcw / fact, w)
        bars = [NoTangent(), project_m(back_m(g[:nm])), *kernel.rest_bars(args)]
        if project_y is not None:
            bars[2] = project_y(back_y(g[nm:]))
        return tuple(bars)

    return y, cov_pullback


@frule.register(np.cov)
def cov_frule(dargs, m, *args, **kwargs):
    p = kernel.bind(_COV_SIG, (m, *args), kwargs)
    y = np.cov(m, *args, **kwargs)
    has_y = len(args) >= 1 and p["y"] is not None
    m_dot = kit.dense_tangent(dargs[1], m, zeros=False)
    yv_dot = kit.dense_tangent(dargs[2], p["y"], zeros=False) if has_y else None
    if kernel.no_tangent_output(y) or (m_dot is None and yv_dot is None) or np.size(y) == 0:
        return y, ZeroTangent()
    x, _, _, _, w, fact = _cov_parts(m, p)
    parts = [_cov_rows(np.zeros(np.shape(m)) if m_dot is None else m_dot, p["rowvar"],
                       None)[0]]
    if p["y"] is not None:
        parts.append(_cov_rows(np.zeros(np.shape(p["y"])) if yv_dot is None else yv_dot,
                               p["rowvar"], None)[0])
    dxc = _cov_centred(np.concatenate(parts, axis=0), w)
    # dC = (dXc W Xc^H + Xc W dXc^H) / fact
    d = (dxc if w is None else dxc * w[None, :]) @ np.conj(_cov_centred(x, w).T)
    return y, kit.fit_output(np.reshape((d + np.conj(d.T)) / fact, np.shape(y)), y)


# ---------------------------------------------------------------------------- corrcoef

_CORRCOEF_SIG = inspect.signature(np.corrcoef)


def _corrcoef_cov_args(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """np.cov's arguments for a corrcoef call (bias= and ddof= have no effect there)."""
    cov_args = args[:2]  # y, rowvar
    cov_kwargs = {k: v for k, v in kwargs.items() if k in ("y", "rowvar", "dtype")}
    return cov_args, cov_kwargs


@rrule.register(np.corrcoef)
def corrcoef_rrule(x, *args, **kwargs):
    r = np.corrcoef(x, *args, **kwargs)
    cov_args, cov_kwargs = _corrcoef_cov_args(args, kwargs)
    c, cov_pullback = cov_rrule(x, *cov_args, **cov_kwargs)
    nargs = len(args)
    if np.ndim(c) == 0:  # one variable: c / c
        return r, lambda r_bar: kernel.zero_pullback_result(nargs)
    s = np.sqrt(np.diagonal(c).real)
    rn = c / s[:, None] / s[None, :]  # r before NumPy clips it to [-1, 1]

    def corrcoef_pullback(r_bar):
        r_bar = kit.nonzero_array(r_bar)
        if r_bar is None:
            return kernel.zero_pullback_result(nargs)
        # r = c / (s s^T), s = sqrt(Re diag(c))
        c_bar = r_bar / s[:, None] / s[None, :]
        t = np.real(np.conj(r_bar) * rn)
        s_bar = -(t.sum(axis=1) + t.sum(axis=0)) / s
        c_bar = c_bar + np.diag(s_bar / (2 * s))
        bars = cov_pullback(c_bar)
        return (NoTangent(), bars[1], *bars[2:2 + len(cov_args)],
                *kernel.rest_bars(args[len(cov_args):]))

    return r, corrcoef_pullback


@frule.register(np.corrcoef)
def corrcoef_frule(dargs, x, *args, **kwargs):
    r = np.corrcoef(x, *args, **kwargs)
    cov_args, cov_kwargs = _corrcoef_cov_args(args, kwargs)
    c, c_dot = cov_frule(dargs[:2 + len(cov_args)], x, *cov_args, **cov_kwargs)
    if np.ndim(c) == 0 or isinstance(c_dot, (ZeroTangent, NoTangent)):
        return r, ZeroTangent()
    s = np.sqrt(np.diagonal(c).real)
    rn = c / s[:, None] / s[None, :]
    s_dot = np.diagonal(c_dot).real / (2 * s)
    r_dot = c_dot / s[:, None] / s[None, :] - rn * (s_dot[:, None] / s[:, None]
                                                    + s_dot[None, :] / s[None, :])
    return r, kit.fit_output(r_dot, r)

