"""Rules for ``np.nanquantile`` and ``np.nanpercentile`` (``method="linear"``), with
respect to ``a`` and ``q``.

Each slice along the reduced axes has its own count ``n`` of numbers (NaNs are ignored).
For a quantile ``q`` the virtual index ``v = q (n - 1)`` lies between the sorted positions
``f = floor(v)`` and ``c = min(f + 1, n - 1)``, and with ``t = v - f`` the result is
``(1 - t) x_(f) + t x_(c)``. So the tangent of ``a`` enters through those two order
statistics, and ``dy/dq = (n - 1) (x_(c) - x_(f))`` (divided by 100 for percentiles). A
slice with no numbers gives NaN, whatever ``a`` holds: its derivative is zero.

Examples:
    >>> import numpy as np
    >>> from chainrules import rrule
    >>> y, pullback = rrule(np.nanquantile, np.array([1.0, np.nan, 3.0, 2.0]), 0.25)
    >>> y, pullback(1.0)[1]
    (np.float64(1.5), array([0.5, 0. , 0. , 0.5]))
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from chainrules.core import NoTangent, frule, rrule

try:
    from numpy.lib.array_utils import normalize_axis_tuple
except ImportError:  # NumPy < 2
    from numpy.core.numeric import normalize_axis_tuple  # type: ignore[no-redef]
from chainrules.rules import _kit as kit
from chainrules.rules.numpy._linear import scatter


class _NanOrderStatistics:
    """The two order statistics and the weight of every (q, slice) of a nanquantile."""

    def __init__(self, x: np.ndarray, q: Any, axis: Any, scale: float) -> None:
        axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim)
        kept = [i for i in range(x.ndim) if i not in axes]
        self.perm = kept + list(axes)
        self.shape = x.shape
        xt = np.transpose(x, self.perm)
        self.batch = xt.shape[:len(kept)]
        self.xt = xt.reshape((*self.batch, math.prod(xt.shape[len(kept):])))
        # an empty reduction is an all-NaN slice (NaN value, zero derivative): one NaN
        # column stands in for it, so the order statistics below have an index to point at
        self.width = self.xt.shape[-1]
        probe = self.xt if self.width else np.full((*self.batch, 1), np.nan, self.xt.dtype)
        order = np.argsort(probe, axis=-1, kind="stable")  # NaNs sort last
        n = np.sum(~np.isnan(probe), axis=-1)
        self.empty = n == 0
        qf = np.asarray(q, dtype=np.float64).reshape((-1,) + (1,) * len(self.batch))
        v = np.clip(qf * scale, 0, 1) * np.maximum(n - 1, 0)
        f = np.floor(v).astype(np.intp)
        c = np.minimum(f + 1, np.maximum(n - 1, 0))
        self.t = np.where(self.empty, 0.0, v - f)
        self.keep = np.where(self.empty, 0.0, 1.0)  # an all-NaN slice: zero derivative
        # positions in the flattened slice of the f-th and c-th smallest numbers
        self.i_f = np.take_along_axis(order[None], f[..., None], -1)[..., 0]
        self.i_c = np.take_along_axis(order[None], c[..., None], -1)[..., 0]
        self.slope = np.where(self.empty, 0.0, scale * (n - 1) * (
            self._at(probe, self.i_c) - self._at(probe, self.i_f)))

    def _at(self, values: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return np.take_along_axis(values[None], idx[..., None], -1)[..., 0]

    def pushforward(self, a_dot: Any, q_dot: Any) -> np.ndarray:
        out: Any = np.zeros(self.t.shape)
        if a_dot is not None and self.width:
            dt = np.transpose(np.broadcast_to(a_dot, self.shape), self.perm).reshape(
                self.xt.shape)
            out = self.keep * ((1 - self.t) * self._at(dt, self.i_f)
                               + self.t * self._at(dt, self.i_c))
        if q_dot is not None:
            qd = np.asarray(q_dot, dtype=np.float64).reshape(self.t.shape[:1] + (1,) * len(
                self.batch))
            out = out + qd * self.slope
        return np.asarray(out)

    def a_bar(self, y_bar: np.ndarray) -> np.ndarray:
        if not self.width:
            return np.zeros(self.shape, dtype=np.result_type(self.xt, y_bar))
        g = np.broadcast_to(y_bar.reshape(self.t.shape), self.t.shape)
        rows = self.xt.shape[:-1]
        # summed into flat positions by np.bincount (positions may repeat), not written
        # into an array: run on values of an outer trace this stays differentiable
        base = np.arange(math.prod(rows), dtype=np.intp).reshape(rows) * self.xt.shape[-1]
        out = (scatter(self.keep * (1 - self.t) * g, base + self.i_f, self.xt.size)
               + scatter(self.keep * self.t * g, base + self.i_c, self.xt.size))
        out = out.reshape(self.xt.shape)
        kept_shape = tuple(self.shape[i] for i in self.perm)
        return np.transpose(out.reshape(kept_shape), np.argsort(self.perm))

    def q_bar(self, y_bar: np.ndarray, q_shape: tuple) -> np.ndarray:
        if not self.width:  # (NumPy drops q's axes from an empty reduction's result)
            return np.zeros(q_shape)
        g = y_bar.reshape(self.t.shape)
        return np.sum(g * self.slope, axis=tuple(range(1, g.ndim))).reshape(q_shape)


def _nanquantile_rules(f: Any, scale: float) -> None:
    sig = inspect.signature(f)
    name = f.__name__

    def setup(a: Any, q: Any, args: tuple, kwargs: dict) -> tuple:
        bound = sig.bind(a, q, *args, **kwargs)
        bound.apply_defaults()
        p = bound.arguments
        kit.refuse_out(f, p)
        if p["method"] != "linear" or p.get("weights") is not None:
            raise NotImplementedError(
                f"the rule for {kit.qualified_name(f)} supports method='linear' without "
                f"weights only (the other methods are not differentiable in q, or pick a "
                f"single order statistic: use method='linear' or np.nanmedian)")
        y = f(np.array(a), q, *args, **kwargs)  # a copy: overwrite_input may sort it
        return y, _NanOrderStatistics(np.asarray(a), q, p["axis"], scale)

    def nanquantile_rrule(a: Any, q: Any, *args: Any, **kwargs: Any) -> Any:
        y, stats = setup(a, q, args, kwargs)
        project_a, project_q = kit.array_projector(a), kit.array_projector(q)
        rest = (NoTangent(),) * len(args)

        @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(a), kit.zero_for(q), *rest))
        def nanquantile_pullback(y_bar: Any) -> tuple:
            y_bar = np.broadcast_to(np.asarray(y_bar), np.shape(y))
            return (NoTangent(), project_a(stats.a_bar(y_bar)),
                    project_q(stats.q_bar(y_bar, np.shape(q))), *rest)

        nanquantile_pullback.__qualname__ = f"{name}_pullback"
        return y, nanquantile_pullback

    def nanquantile_frule(dargs: tuple, a: Any, q: Any, *args: Any, **kwargs: Any) -> Any:
        y, stats = setup(a, q, args, kwargs)
        a_dot, q_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
        if a_dot is None and q_dot is None:
            return y, kit.zero_for(y)
        a_dot = None if a_dot is None else kit.dense_tangent(a_dot, a)
        q_dot = None if q_dot is None else kit.dense_tangent(q_dot, q)
        if not stats.width:  # an empty reduction: NaN values, zero derivatives
            return y, kit.fit_output(np.zeros(np.shape(y)), y)
        return y, kit.fit_output(stats.pushforward(a_dot, q_dot).reshape(np.shape(y)), y)

    nanquantile_rrule.__qualname__ = f"{name}_rrule"
    nanquantile_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(nanquantile_rrule)
    frule.register(f)(nanquantile_frule)


_nanquantile_rules(np.nanquantile, 1.0)
_nanquantile_rules(np.nanpercentile, 0.01)
