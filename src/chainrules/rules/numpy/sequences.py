"""Rules for NumPy's one-dimensional sequence products and interpolation (the
polynomial functions, ``polyval`` among them, are in `polynomial`).

Covered (frule and rrule): ``convolve`` and ``correlate`` (modes full/same/valid) and
``interp`` (w.r.t. ``x``, ``xp``, ``fp``, and ``left``/``right`` when passed
positionally; ``period`` gets ``NoTangent()``).

Conventions:

- Complex inputs (DESIGN §2): the pullback of a linear map is its adjoint.
  ``correlate`` conjugates its second argument, so it is antilinear in it: its
  cotangent is the conjugate of the one of the unconjugated product.
- ``interp``: at a knot, the derivatives w.r.t. ``x`` and ``xp`` are those of the
  segment to its right (of the last segment at ``xp[-1]``); outside
  ``[xp[0], xp[-1]]`` the value is ``left``/``right``/an end value, so the derivative
  w.r.t. ``x`` and ``xp`` is 0 there. ``period`` gets ``NoTangent()`` (moving the
  period moves the wrapped query points discontinuously).

Examples:
    >>> import numpy as np
    >>> from chainrules import rrule, unthunk
    >>> y, convolve_pullback = rrule(np.convolve, np.array([1.0, 2.0]), np.array([1.0, -1.0]))
    >>> y, unthunk(convolve_pullback(np.array([1.0, 0.0, 0.0]))[1])
    (array([ 1.,  1., -2.]), array([1., 0.]))
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from chainrules.core import NoTangent, Thunk, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit
from chainrules.rules.numpy import _einsum as einsum_kernel
from chainrules.rules.numpy._linear import scatter

__all__: list[str] = []


# ------------------------------------------------------------ convolve and correlate

_MODES = {0: "valid", 1: "same", 2: "full", "valid": "valid", "same": "same", "full": "full"}


def _window(mode: Any, m: int, n: int, correlate: bool) -> int:
    """Where NumPy's ``mode`` output starts within the full result."""
    mode = _MODES[mode]
    k = min(m, n)
    if mode == "full":
        return 0
    if mode == "valid":
        return k - 1
    if correlate and m < n:
        return k // 2
    return (k - 1) // 2


def _conv_rules(f: Any, correlate: bool) -> None:
    sig = inspect.signature(f)

    def conv_rrule(a, v, *args, **kwargs):
        p = sig.bind(a, v, *args, **kwargs)
        p.apply_defaults()
        mode = p.arguments["mode"]
        y = f(a, v, *args, **kwargs)
        x = np.atleast_1d(np.asarray(a))
        w = np.atleast_1d(np.asarray(v))
        # correlate(a, v) is convolve(a, conj(v[::-1]))
        kernel = np.conj(w[::-1]) if correlate else w
        start = _window(mode, len(x), len(w), correlate)
        full_len = len(x) + len(w) - 1
        project_a, project_v = kit.array_projector(a), kit.array_projector(v)
        nargs = len(args)

        @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent(), *(NoTangent(),) * nargs))
        def conv_pullback(y_bar):
            y_bar = np.asarray(y_bar)
            dtype = np.result_type(y_bar, x, w)
            # y_bar placed in the full-length result by concatenation, not by a write
            # into zeros: run on traced values (a Hessian) this stays differentiable
            full = np.concatenate([np.zeros(start, dtype), y_bar.astype(dtype),
                                   np.zeros(full_len - start - len(y_bar), dtype)])

            def a_bar_thunk():
                return project_a(np.correlate(full, kernel, "valid").reshape(np.shape(a)))

            def v_bar_thunk():
                k_bar = np.correlate(full, x, "valid")
                v_bar = np.conj(k_bar[::-1]) if correlate else k_bar
                return project_v(v_bar.reshape(np.shape(v)))

            return (NoTangent(), Thunk(a_bar_thunk), Thunk(v_bar_thunk),
                    *(NoTangent(),) * nargs)

        return y, conv_pullback

    def conv_frule(dargs, a, v, *args, **kwargs):
        return einsum_kernel.bilinear_frule(f, dargs, a, v, *args, **kwargs)

    kit.define_rules(f, frule_fn=conv_frule, rrule_fn=conv_rrule)


_conv_rules(np.convolve, correlate=False)
_conv_rules(np.correlate, correlate=True)


# ---------------------------------------------------------------------------- interp

_INTERP_SIG = inspect.signature(np.interp)


class _Interp:
    """Which samples each query point mixes, with which weights, and the slope."""

    def __init__(self, x: Any, xp: Any, fp: Any, left: Any, right: Any, period: Any) -> None:
        xq = np.asarray(x, dtype=np.float64)
        xp = np.asarray(xp, dtype=np.float64)
        fp = np.asarray(fp)
        index = np.arange(len(xp))
        if period is not None:
            period = abs(float(period))
            xq = xq % period
            xp = xp % period
            order = np.argsort(xp, kind="stable")
            xp = np.concatenate([xp[order][-1:] - period, xp[order], xp[order][:1] + period])
            index = np.concatenate([order[-1:], order, order[:1]])
            left = right = None
            self.below = self.above = np.zeros(xq.shape, dtype=bool)
        else:
            self.below = xq < xp[0]
            self.above = xq > xp[-1]
        inside = ~(self.below | self.above)
        if len(xp) == 1:
            j = np.zeros(xq.shape, dtype=np.intp)
            self.lo, self.hi = index[j], index[j]
            self.w_lo = np.where(inside, 1.0, 0.0)
            self.w_hi = np.zeros(xq.shape)
            self.slope = np.zeros(xq.shape, dtype=np.result_type(fp, np.float64))
            self.d_xp_lo = self.d_xp_hi = self.slope
        else:
            j = np.clip(np.searchsorted(xp, xq, side="right") - 1, 0, len(xp) - 2)
            dx = xp[j + 1] - xp[j]
            t = np.where(inside, (xq - xp[j]) / dx, 0.0)
            self.lo, self.hi = index[j], index[j + 1]
            self.w_lo = np.where(inside, 1 - t, 0.0)
            self.w_hi = np.where(inside, t, 0.0)
            self.slope = np.where(inside, (fp[index[j + 1]] - fp[index[j]]) / dx, 0)
            # y = fp_lo + slope (x - xp_lo): dy/dxp_lo = slope (t - 1), dy/dxp_hi = -slope t
            self.d_xp_lo = self.slope * (t - 1)
            self.d_xp_hi = -self.slope * t
        self.n = len(fp)
        self.left_is_fp = left is None
        self.right_is_fp = right is None

    # (sums by np.bincount, not np.add.at, which writes into an array: run on values of
    # an outer trace, for a second derivative, these stay differentiable)
    def xp_bar(self, y_bar: np.ndarray) -> np.ndarray:
        return (scatter(np.real(np.conj(self.d_xp_lo) * y_bar), self.lo, self.n)
                + scatter(np.real(np.conj(self.d_xp_hi) * y_bar), self.hi, self.n))

    def xp_pushforward(self, xp_dot: np.ndarray) -> np.ndarray:
        return self.d_xp_lo * xp_dot[self.lo] + self.d_xp_hi * xp_dot[self.hi]

    def fp_bar(self, y_bar: np.ndarray) -> np.ndarray:
        # (float64 or complex128 sums: an integer y_bar, the cotangent 1, does not
        # truncate the interpolation weights)
        out = scatter(self.w_lo * y_bar, self.lo, self.n) + scatter(self.w_hi * y_bar,
                                                                      self.hi, self.n)
        if self.left_is_fp:
            out = out + scatter(np.sum(y_bar[self.below]), np.zeros(1, np.intp), self.n)
        if self.right_is_fp:
            out = out + scatter(np.sum(y_bar[self.above]), np.full(1, self.n - 1, np.intp),
                                self.n)
        return out


@rrule.register(np.interp)
def interp_rrule(x, xp, fp, *args, **kwargs):
    p = _INTERP_SIG.bind(x, xp, fp, *args, **kwargs)
    p.apply_defaults()
    q = p.arguments
    y = np.interp(x, xp, fp, *args, **kwargs)
    geometry = _Interp(x, xp, fp, q["left"], q["right"], q["period"])
    project_x, project_xp, project_fp = (
        kit.array_projector(x),
        kit.array_projector(xp),
        kit.array_projector(fp),
    )
    extra = [
        kit.array_projector(v) if i < 2 and v is not None else None for i, v in enumerate(args)
    ]
    nargs = len(args)

    @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent()), project_xp(ZeroTangent()),
                             project_fp(ZeroTangent()),
                             *(NoTangent() if e is None else ZeroTangent() for e in extra)))
    def interp_pullback(y_bar):
        y_bar = np.broadcast_to(np.asarray(y_bar), np.shape(geometry.below))
        x_bar = Thunk(lambda: project_x(np.real(np.conj(geometry.slope) * y_bar)))
        xp_bar = Thunk(lambda: project_xp(geometry.xp_bar(y_bar)))
        fp_bar = Thunk(lambda: project_fp(geometry.fp_bar(y_bar)))
        rest: list = [NoTangent()] * nargs
        for i, (project, mask) in enumerate(zip(extra, (geometry.below, geometry.above))):
            if project is not None and q["period"] is None:
                rest[i] = project(np.sum(y_bar[mask]))
            elif project is not None:
                rest[i] = project(ZeroTangent())
        return (NoTangent(), x_bar, xp_bar, fp_bar, *rest)

    return y, interp_pullback


@frule.register(np.interp)
def interp_frule(dargs, x, xp, fp, *args, **kwargs):
    p = _INTERP_SIG.bind(x, xp, fp, *args, **kwargs)
    p.apply_defaults()
    q = p.arguments
    y = np.interp(x, xp, fp, *args, **kwargs)
    geometry = _Interp(x, xp, fp, q["left"], q["right"], q["period"])
    x_dot, xp_dot, fp_dot = (kit.dense_tangent(t, v, zeros=False)
                             for t, v in zip(dargs[1:4], (x, xp, fp)))
    y_dot: Any = 0
    any_tangent = False
    if xp_dot is not None:
        y_dot = y_dot + geometry.xp_pushforward(np.asarray(xp_dot))
        any_tangent = True
    if x_dot is not None:
        y_dot = y_dot + geometry.slope * x_dot
        any_tangent = True
    if fp_dot is not None:
        fp_dot = np.asarray(fp_dot)
        y_dot = y_dot + (fp_dot[geometry.lo] * geometry.w_lo + fp_dot[geometry.hi] * geometry.w_hi)
        if geometry.left_is_fp:
            y_dot = y_dot + np.where(geometry.below, fp_dot[0], 0)
        if geometry.right_is_fp:
            y_dot = y_dot + np.where(geometry.above, fp_dot[-1], 0)
        any_tangent = True
    if q["period"] is None:
        for i, mask in enumerate((geometry.below, geometry.above)):
            if i < len(args) and args[i] is not None:
                d = kit.dense_tangent(dargs[4 + i], args[i], zeros=False)
                if d is not None:
                    y_dot = y_dot + np.where(mask, d, 0)
                    any_tangent = True
    if not any_tangent:
        return y, ZeroTangent()
    return y, kit.fit_output(y_dot, y)
