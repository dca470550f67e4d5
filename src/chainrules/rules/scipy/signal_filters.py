"""Rules for the recursive filters of ``scipy.signal``: ``lfilter`` and ``sosfilt``.

``lfilter(b, a, x, axis, zi)`` solves ``A y = B x`` along ``axis`` (``A``, ``B`` the
polynomials in the delay with coefficients ``a``, ``b``), differentiable in ``b``,
``a``, ``x`` and the initial state ``zi``; with ``zi`` it returns ``(y, zf)`` and
both are differentiable. Real and complex, float32 kept. Writing ``w`` for the
time-reversed all-pole filter of the output cotangent, ``w = (1/A)^H y_bar`` =
``flip(lfilter([1], conj(a), flip(y_bar)))``:

- ``x_bar = B^H w``: the time-reversed FIR ``flip(lfilter(conj(b), [1], flip(w)))``;
- ``b_bar[k] = sum_n w[n] conj(x[n - k])`` (``dy = (1/A) z^-k x db_k``);
- ``a_bar[k] = -sum_n w[n] conj(y[n - k])`` (differentiating ``A y = B x``);
- the initial state ``zi`` (SciPy's transposed direct form II, normalised by
  ``a[0]``) acts as an input ``e`` with ``e[n] = zi[n]``: ``A y = B x + a[0] e``, so
  ``zi_bar = conj(a[0]) w[:K]`` and ``a_bar[0]`` gains ``sum conj(e) w``;
- the final state ``zf[i] = sum_j (b'[i+1+j] x[N-1-j] - a'[i+1+j] y[N-1-j])``
  (``b' = b / a[0]``, ``a' = a / a[0]``, plus ``zi[i+N]`` for signals shorter than
  the state) is bilinear in the coefficients and the tails of ``x`` and ``y``: its
  cotangent adds to ``y_bar`` before ``w`` is formed, and to ``x_bar``, ``b_bar``,
  ``a_bar`` and ``zi_bar`` directly.

The frule follows from the same recursion: the tangent is
``lfilter(b, a, x_dot, zi_dot) + lfilter(b_dot - b' a0_dot, a, x) +
lfilter(-(a_dot - a' a0_dot), a, y)`` (zero initial states), outputs and final
states alike.

``sosfilt(sos, x, axis, zi)`` is the cascade of ``lfilter`` over the sections; its
rules chain those of ``lfilter`` (``sos_bar`` row ``i`` is ``(b_bar, a_bar)`` of
section ``i``). SciPy requires ``sos[:, 3] == 1``, so that column cannot be
perturbed: its tangent is ignored and its cotangent is 0.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import scipy.signal as ss

from chainrules.core import NoTangent, Tangent, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit


def _item(t: Any, index: int) -> Any:
    """Item ``index`` of a tuple output's cotangent, as an array, or None when zero."""
    t = kit.nonzero(t)
    return None if t is None else kit.nonzero_array(t[index])


def _output_bars(out_bar: Any, has_state: bool) -> tuple:
    """The cotangents of ``y`` and of the final state ``zf`` (the output is ``(y, zf)``
    when an initial state is given), each None when zero."""
    if not has_state:
        return kit.nonzero_array(out_bar), None
    return _item(out_bar, 0), _item(out_bar, 1)


def _lags(w: np.ndarray, u: np.ndarray, m: int) -> np.ndarray:
    """``r[k] = sum w[..., n] conj(u[..., n - k])`` for ``k < m`` (0 past the signal)."""
    n = w.shape[-1]
    terms = [np.sum(w[..., k:] * np.conj(u[..., :n - k])) for k in range(min(m, n))]
    r = np.stack(terms) if terms else np.zeros(0, dtype=np.result_type(w, u))
    return np.pad(r, (0, m - r.shape[0])) if r.shape[0] < m else r


def _pad_to(v: np.ndarray, m: int) -> np.ndarray:
    return np.pad(v, (0, m - v.shape[0])) if v.shape[0] < m else v


def _reverse_filter(num: Any, den: Any, g: np.ndarray) -> np.ndarray:
    """The adjoint of the causal filter ``num / den`` (last axis): anti-causal, conjugated."""
    return np.flip(ss.lfilter(np.conj(num), np.conj(den), np.flip(g, -1), axis=-1), -1)


class _Filter:
    """One ``lfilter`` call, its output, and its pullback along the last axis."""

    def __init__(self, b: Any, a: Any, x: Any, axis: int, zi: Any) -> None:
        self.b, self.a = np.asarray(b), np.asarray(a)
        self.axis = axis
        self.x = np.asarray(x)
        self.zi = None if zi is None else np.asarray(zi)
        out = ss.lfilter(self.b, self.a, self.x, axis=axis, zi=self.zi)
        self.y = out[0] if zi is not None else out
        self.out = out
        self.k = max(self.a.shape[0], self.b.shape[0]) - 1

    def bars(self, y_bar: Any, zf_bar: Any) -> tuple:
        """``(b_bar, a_bar, x_bar, zi_bar)``, unprojected (``zi_bar`` None without zi)."""
        b, a, k = self.b, self.a, self.k
        xm = np.moveaxis(self.x, self.axis, -1)
        ym = np.moveaxis(self.y, self.axis, -1)
        n = xm.shape[-1]
        a0 = a[0]
        g = np.zeros_like(ym) if y_bar is None else np.moveaxis(y_bar, self.axis, -1)
        x_direct = zi_direct = 0
        bn_bar = an_bar = np.zeros(k + 1, dtype=np.result_type(g, b, a, xm))
        if zf_bar is not None and k > 0:
            zfm = np.moveaxis(zf_bar, self.axis, -1)
            bn = _pad_to(b / a0, 2 * k + 1)
            an = _pad_to(a / a0, 2 * k + 1)
            tail = min(k, n)
            j = np.arange(tail)[:, None]
            i = np.arange(k)[None, :]
            used = (i + j + 1) <= k  # zf[i] reads x and y at time N-1-j through b'[i+1+j]
            hb = np.where(used, bn[i + j + 1], 0)
            ha = np.where(used, an[i + j + 1], 0)
            x_tail = np.flip(np.tensordot(zfm, np.conj(hb), axes=([-1], [1])), -1)
            y_tail = np.flip(np.tensordot(zfm, np.conj(ha), axes=([-1], [1])), -1)
            x_direct = np.pad(x_tail, [(0, 0)] * (xm.ndim - 1) + [(n - tail, 0)])
            g = g - np.pad(y_tail, [(0, 0)] * (ym.ndim - 1) + [(n - tail, 0)])
            # P[j, i] = sum over the batch of conj(x[N-1-j]) zf_bar[i], then summed
            # along the anti-diagonals i + j + 1 = m into the coefficient m
            onehot = ((i + j + 1)[:, :, None] == np.arange(k + 1)) & used[:, :, None]
            xr = np.flip(xm[..., n - tail:], -1)
            yr = np.flip(ym[..., n - tail:], -1)
            batch = tuple(range(xm.ndim - 1))
            # (np.outer of the 1-D signal and state, not np.multiply.outer: the AD has
            # rules for np.outer, so this stays differentiable for a second derivative)
            px = np.tensordot(np.conj(xr), zfm, axes=(batch, batch)) if batch else \
                np.outer(np.conj(xr), zfm)
            py = np.tensordot(np.conj(yr), zfm, axes=(batch, batch)) if batch else \
                np.outer(np.conj(yr), zfm)
            bn_bar = np.einsum("ji,jim->m", px, onehot)
            an_bar = -np.einsum("ji,jim->m", py, onehot)
            if n < k:  # a short signal passes part of zi straight through to zf
                zi_direct = np.pad(zfm[..., :k - n], [(0, 0)] * (zfm.ndim - 1) + [(n, 0)])
        w = _reverse_filter(np.ones(1), a, g)
        x_bar = _reverse_filter(b, np.ones(1), w) + x_direct
        b_bar = _lags(w, xm, b.shape[0])
        a_bar = -_lags(w, ym, a.shape[0])
        # b' = b / a0 and a' = a / a0: chain the final state's coefficient cotangents
        ca0 = np.conj(a0)
        b_bar = b_bar + bn_bar[:b.shape[0]] / ca0
        a_bar = a_bar + np.concatenate([np.zeros(1, an_bar.dtype), an_bar[1:a.shape[0]]]) / ca0
        a0_bar = -(np.sum(np.conj(b / a0) * bn_bar[:b.shape[0]])
                   + np.sum(np.conj(a[1:] / a0) * an_bar[1:a.shape[0]])) / ca0
        zi_bar = None
        if self.zi is not None:
            zim = np.moveaxis(self.zi, self.axis, -1)
            m = min(k, n)
            a0_bar = a0_bar + np.sum(np.conj(zim[..., :m]) * w[..., :m])
            zi_bar = ca0 * np.pad(w[..., :m], [(0, 0)] * (w.ndim - 1) + [(0, k - m)])
            zi_bar = np.moveaxis(zi_bar + zi_direct, -1, self.axis)
        a_bar = a_bar + a0_bar * (np.arange(a.shape[0]) == 0)
        return b_bar, a_bar, np.moveaxis(x_bar, -1, self.axis), zi_bar


_LFILTER = inspect.signature(ss.lfilter)


def _lfilter_options(b: Any, a: Any, x: Any, args: tuple, kwargs: dict) -> tuple:
    params = _LFILTER.bind(b, a, x, *args, **kwargs).arguments
    return params.get("axis", -1), params.get("zi")


def _zero_state(y_like: np.ndarray, axis: int, k: int) -> np.ndarray:
    shape = list(y_like.shape)
    shape[axis] = k
    return np.zeros(shape, dtype=y_like.dtype)


@rrule.register(ss.lfilter)
def lfilter_rrule(b: Any, a: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
    axis, zi = _lfilter_options(b, a, x, args, kwargs)
    filt = _Filter(b, a, x, axis, zi)
    project_b, project_a, project_x = (
        kit.array_projector(b),
        kit.array_projector(a),
        kit.array_projector(x),
    )
    project_zi = None if zi is None else kit.array_projector(zi)
    zi_position = 4 if len(args) >= 2 else None  # zi given positionally gets a tangent
    rest = tuple(project_zi if i + 3 == zi_position else None for i in range(len(args)))

    def lfilter_pullback(out_bar: Any) -> tuple:
        y_bar, zf_bar = _output_bars(out_bar, zi is not None)
        if y_bar is None and zf_bar is None:
            return (NoTangent(), ZeroTangent(), ZeroTangent(), ZeroTangent(),
                    *(NoTangent() if p is None else ZeroTangent() for p in rest))
        b_bar, a_bar, x_bar, zi_bar = filt.bars(y_bar, zf_bar)
        return (NoTangent(), project_b(b_bar), project_a(a_bar), project_x(x_bar),
                *(NoTangent() if p is None else p(zi_bar) for p in rest))

    return filt.out, lfilter_pullback


def _filter_tangent(b: np.ndarray, a: np.ndarray, x: np.ndarray, y: np.ndarray, axis: int,
                    zi: Any, b_dot: Any, a_dot: Any, x_dot: Any, zi_dot: Any) -> tuple:
    """``(y_dot, zf_dot)`` of ``lfilter`` (``zf_dot`` None without ``zi``)."""
    k = max(a.shape[0], b.shape[0]) - 1
    with_state = zi is not None

    def run(num: Any, signal: Any, state: Any) -> tuple:
        if with_state:
            state = _zero_state(y, axis, k) if state is None else state
            return ss.lfilter(num, a, signal, axis=axis, zi=state)
        return ss.lfilter(num, a, signal, axis=axis), None

    parts = []
    if x_dot is not None or zi_dot is not None:
        parts.append(run(b, np.zeros_like(x) if x_dot is None else x_dot, zi_dot))
    a0_dot = 0 if a_dot is None else a_dot[0]
    if b_dot is not None or a_dot is not None:
        num = (0 if b_dot is None else b_dot) - b / a[0] * a0_dot
        parts.append(run(_pad_to(np.asarray(num) * np.ones(b.shape[0]), k + 1), x, None))
    if a_dot is not None:
        num = -(a_dot - a / a[0] * a0_dot)
        parts.append(run(_pad_to(num, k + 1), y, None))
    y_dot = sum(p[0] for p in parts[1:]) + parts[0][0] if parts else None
    zf_dot = (sum(p[1] for p in parts[1:]) + parts[0][1]) if parts and with_state else None
    return y_dot, zf_dot


@frule.register(ss.lfilter)
def lfilter_frule(dargs: tuple, b: Any, a: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
    axis, zi = _lfilter_options(b, a, x, args, kwargs)
    filt = _Filter(b, a, x, axis, zi)
    zi_dot = (kit.dense_tangent(dargs[5], zi, zeros=False) if len(args) >= 2 and zi is not None
              else None)
    y_dot, zf_dot = _filter_tangent(
        filt.b, filt.a, filt.x, filt.y, axis, zi, *(kit.dense_tangent(dargs[i + 1], v, zeros=False)
                                                    for i, v in enumerate((b, a, x))), zi_dot)
    if y_dot is None:
        return filt.out, ZeroTangent()
    y_dot = y_dot.astype(filt.y.dtype, copy=False)
    if zi is None:
        return filt.out, y_dot
    return filt.out, Tangent[tuple](y_dot, zf_dot.astype(filt.out[1].dtype, copy=False))


_SOSFILT = inspect.signature(ss.sosfilt)
# SciPy requires sos[:, 3] == 1 exactly, so that column cannot move: its tangent is
# ignored and its cotangent is 0 (the projection onto the directions sosfilt accepts)
_FREE_A = np.array([0.0, 1.0, 1.0])


def _sections(sos: np.ndarray, x: np.ndarray, axis: int, zi: Any) -> list:
    """The ``lfilter`` of each section, run on the previous one's output."""
    filters = []
    signal = x
    for i in range(sos.shape[0]):
        filt = _Filter(sos[i, :3], sos[i, 3:], signal, axis, None if zi is None else zi[i])
        filters.append(filt)
        signal = filt.y
    return filters


@rrule.register(ss.sosfilt)
def sosfilt_rrule(sos: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
    params = _SOSFILT.bind(sos, x, *args, **kwargs).arguments
    axis, zi = params.get("axis", -1), params.get("zi")
    out = ss.sosfilt(sos, x, *args, **kwargs)
    sos_arr, x_arr = np.asarray(sos), np.asarray(x)
    zi_arr = None if zi is None else np.asarray(zi)
    filters = _sections(sos_arr, x_arr, axis, zi_arr)
    project_sos, project_x = kit.array_projector(sos), kit.array_projector(x)
    zi_positional = len(args) >= 2
    project_zi = kit.array_projector(zi) if zi_positional and zi is not None else None
    rest = [NoTangent()] * len(args)

    def sosfilt_pullback(out_bar: Any) -> tuple:
        y_bar, zf_bar = _output_bars(out_bar, zi is not None)
        if y_bar is None and zf_bar is None:
            zeros = [ZeroTangent() if project_zi is not None and i == 1 else t
                     for i, t in enumerate(rest)]
            return (NoTangent(), ZeroTangent(), ZeroTangent(), *zeros)
        rows, zi_bars = [], []
        g = y_bar
        for i in reversed(range(len(filters))):
            b_bar, a_bar, g, zi_bar = filters[i].bars(g, None if zf_bar is None else zf_bar[i])
            rows.append(np.concatenate([b_bar, a_bar * _FREE_A]))
            zi_bars.append(zi_bar)
        sos_bar = np.stack(rows[::-1])
        bars = list(rest)
        if project_zi is not None:
            bars[1] = project_zi(np.stack(zi_bars[::-1]))
        return (NoTangent(), project_sos(sos_bar), project_x(g), *bars)

    return out, sosfilt_pullback


@frule.register(ss.sosfilt)
def sosfilt_frule(dargs: tuple, sos: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
    params = _SOSFILT.bind(sos, x, *args, **kwargs).arguments
    axis, zi = params.get("axis", -1), params.get("zi")
    out = ss.sosfilt(sos, x, *args, **kwargs)
    sos_arr = np.asarray(sos)
    zi_arr = None if zi is None else np.asarray(zi)
    sos_dot = kit.dense_tangent(dargs[1], sos, zeros=False)
    x_dot = kit.dense_tangent(dargs[2], x, zeros=False)
    zi_dot = (kit.dense_tangent(dargs[4], zi, zeros=False) if len(args) >= 2 and zi is not None
              else None)
    if sos_dot is None and x_dot is None and zi_dot is None:
        return out, ZeroTangent()
    filters = _sections(sos_arr, np.asarray(x), axis, zi_arr)
    signal_dot, zf_dots = x_dot, []
    for i, filt in enumerate(filters):
        row_dot = None if sos_dot is None else sos_dot[i]
        signal_dot, zf_dot = _filter_tangent(
            filt.b, filt.a, filt.x, filt.y, axis, filt.zi,
            None if row_dot is None else row_dot[:3],
            None if row_dot is None else row_dot[3:] * _FREE_A,
            signal_dot, None if zi_dot is None else zi_dot[i])
        if zf_dot is None and zi is not None:
            zf_dot = np.zeros_like(filt.out[1])
        zf_dots.append(zf_dot)
    y = out[0] if zi is not None else out
    y_dot = np.zeros_like(y) if signal_dot is None else signal_dot.astype(y.dtype, copy=False)
    if zi is None:
        return out, y_dot
    return out, Tangent[tuple](y_dot, np.stack(zf_dots).astype(out[1].dtype, copy=False))
