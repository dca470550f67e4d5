"""Rules for the spectral analysis of ``scipy.signal``: ``stft``, ``istft``, ``welch``.

Both cut the signal into overlapping segments: boundary extension by
``nperseg // 2`` (``stft``'s ``"zeros"``, ``"even"``, ``"odd"``, ``"constant"`` are
``np.pad``'s ``constant``, ``reflect``, odd ``reflect`` and ``edge``), zero padding to
whole segments (``padded``), framing, per-segment ``detrend`` (``False``,
``"constant"``, ``"linear"``), window, then ``rfft`` (``fft`` for two-sided
spectra) of length ``nfft``. That chain ``S = F(x)`` is linear; its adjoint runs
the steps backwards: the FFT adjoint of ``rules/numpy/_fft.py``, the window, the
self-adjoint detrend projection, an overlap-add of the segments, the truncation of
the padding and the fold of the boundary extension back onto the signal.

- ``stft`` returns ``(f, t, Zxx)`` with ``Zxx = scale * F(x)``: ``x_bar =
  F^H(scale * Zxx_bar)``.
- ``istft`` (linear in ``Zxx``) runs the inverse FFT of each segment, windows
  them, overlap-adds and divides by the overlap-added squared window; its adjoint
  divides, cuts the segments back out, windows them and applies the inverse FFT's
  adjoint.
- ``welch`` returns ``(f, Pxx)`` with ``Pxx = c * w * mean_s |F(x)_s|^2`` (``w``
  doubles the one-sided bins that stand for two): ``S_bar = 2 c w S Pxx_bar /
  n_segments``, then ``x_bar = F^H(S_bar)``; ``average="median"`` raises
  `UnsupportedOptionError`.

The sample rate ``fs`` (positional) is differentiable: ``f`` scales with it, ``t``
with its inverse, and the ``"psd"`` / ``"density"`` scalings with its inverse
square root / inverse. A window given as an array positionally gets a
``not_implemented`` cotangent; a callable ``detrend`` raises
`UnsupportedOptionError` (its derivative is unknown). The rules rebuild ``F(x)``
and check it against SciPy's output, so a SciPy change in the segmentation raises
an error instead of producing a wrong derivative.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import scipy.signal as ss

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, Tangent, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit
from chainrules.rules.numpy._fft import fft_adjoint, ifft_adjoint, irfft_adjoint, rfft_adjoint
from chainrules.rules.scipy._errors import UnsupportedOptionError
from chainrules.rules.scipy._padding import extension_adjoint

_EXTENSIONS = {"zeros": {"mode": "constant"}, "even": {"mode": "reflect"},
               "odd": {"mode": "reflect", "reflect_type": "odd"},
               "constant": {"mode": "edge"}}
_FOLDS = {"zeros": "constant", "even": "reflect", "odd": "odd", "constant": "edge"}


class _Segments:
    """The linear map ``F`` from a signal (last axis) to its windowed segment spectra."""

    def __init__(self, f: Any, x: np.ndarray, params: dict, boundary: Any,
                 padded: bool) -> None:
        window = params.get("window", "hann_periodic")
        nperseg = params.get("nperseg")
        n = x.shape[-1]
        if isinstance(window, (str, tuple)):
            nperseg = 256 if nperseg is None else int(nperseg)
            nperseg = min(nperseg, n)  # SciPy warns and shortens it the same way
            self.win = ss.get_window(window, nperseg)
        else:
            self.win = np.asarray(window)
            nperseg = self.win.shape[0]
        self.nperseg = nperseg
        noverlap = params.get("noverlap")
        self.nstep = nperseg - (nperseg // 2 if noverlap is None else int(noverlap))
        nfft = params.get("nfft")
        self.nfft = nperseg if nfft is None else int(nfft)
        detrend = params.get("detrend", False)
        if callable(detrend):
            raise UnsupportedOptionError(
                f, "detrend", detrend, "the derivative of a custom detrend function is "
                "unknown", "Use detrend=False, 'constant' or 'linear', or detrend the "
                "signal yourself first")
        self.detrend = detrend or None
        self.twosided = not params.get("return_onesided", True) or np.iscomplexobj(x)
        self.boundary = boundary
        self.n = n
        ext = n + (2 * (nperseg // 2) if boundary is not None else 0)
        self.nadd = (-(ext - nperseg) % self.nstep) % nperseg if padded else 0
        self.length = ext + self.nadd
        self.nseg = (self.length - nperseg) // self.nstep + 1

    def __call__(self, x: np.ndarray) -> tuple:
        """``(F(x), pad_pullback)``: the segment spectra ``(..., nseg, nfreq)``."""
        pad_pullback = None
        if self.boundary is not None:
            x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(self.nperseg // 2, self.nperseg // 2)],
                       **_EXTENSIONS[self.boundary])
            pad_pullback = self.boundary
        if self.nadd:
            x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, self.nadd)])
        idx = np.arange(self.nseg)[:, None] * self.nstep + np.arange(self.nperseg)
        segs = x[..., idx]
        if self.detrend is not None:
            segs = ss.detrend(segs, type=self.detrend, axis=-1)
        segs = segs * self.win
        spectrum = np.fft.fft if self.twosided else np.fft.rfft
        return spectrum(segs, n=self.nfft, axis=-1), pad_pullback

    def adjoint(self, s_bar: np.ndarray, pad_pullback: Any) -> np.ndarray:
        adjoint = fft_adjoint if self.twosided else rfft_adjoint
        seg_bar = adjoint(s_bar, self.nperseg, self.nfft, -1, "backward")
        seg_bar = seg_bar * np.conj(self.win)
        if self.detrend is not None:  # an orthogonal projection: its own adjoint
            seg_bar = ss.detrend(seg_bar, type=self.detrend, axis=-1)
        x_bar = self._overlap_add(seg_bar)[..., :self.length - self.nadd]
        if pad_pullback is not None:
            x_bar = extension_adjoint(x_bar, self.n, self.nperseg // 2, _FOLDS[pad_pullback])
        return x_bar

    def _overlap_add(self, seg_bar: np.ndarray) -> np.ndarray:
        return _overlap_add(seg_bar, self.nstep, self.length)


def _overlap_add(seg_bar: np.ndarray, nstep: int, length: int) -> np.ndarray:
    """Sum segments ``(..., nseg, nperseg)`` starting every ``nstep`` into ``length``
    samples: in ``nstep``-long blocks, block ``k`` of every segment landing on one
    strided stretch (no in-place writes, so the AD can trace it)."""
    nseg, nperseg = seg_bar.shape[-2:]
    batch = [(0, 0)] * (seg_bar.ndim - 2)
    blocks = -(-nperseg // nstep)
    stop = max(length, (nseg + blocks) * nstep)
    total: Any = 0
    for k in range(blocks):
        block = seg_bar[..., k * nstep:(k + 1) * nstep]
        block = np.pad(block, [*batch, (0, 0), (0, nstep - block.shape[-1])])
        flat = block.reshape(*block.shape[:-2], nseg * nstep)
        start = k * nstep
        total = total + np.pad(flat, [*batch, (start, stop - start - flat.shape[-1])])
    return total[..., :length]


def _check(f: Any, ours: np.ndarray, theirs: np.ndarray) -> None:
    if ours.shape != theirs.shape or not np.allclose(ours, theirs, rtol=1e-4, atol=1e-6 * (
            1 + float(np.max(np.abs(theirs), initial=0.0)))):
        raise UnsupportedOptionError(
            f, "segmentation", "as called", "the rule's rebuilt segment spectra do not match "
            "SciPy's output for these options", "Please report the call; differentiate "
            "a NumPy version of the transform meanwhile")


def _moved(z: np.ndarray, axis: int) -> np.ndarray:
    """SciPy's layout (frequency at ``axis``, segments last) -> ours (..., seg, freq)."""
    return np.moveaxis(z, axis - 1 if axis < 0 else axis, -1)


def _unmoved(z: np.ndarray, axis: int) -> np.ndarray:
    return np.moveaxis(z, -1, axis - 1 if axis < 0 else axis)


def _window_bar(args: tuple) -> Any:
    window = args[1] if len(args) >= 2 else None
    if window is None or isinstance(window, (str, tuple)):
        return NoTangent()
    return core.not_implemented("the derivative of stft/welch with respect to the window array")


def _argument_bars(args: tuple, first_bar: Any, project_fs: Any, fs_terms: Any) -> tuple:
    """The cotangents of ``f(first, fs, window, ...)``: ``fs`` gets the sum of
    ``fs_terms()`` (only when given), a window array ``not_implemented``, the options
    nothing."""
    bars = [first_bar]
    if args:
        bars.append(project_fs(sum(fs_terms(), 0.0)))
    bars += [_window_bar(args)] if len(args) >= 2 else []
    bars += [NoTangent()] * (len(args) + 1 - len(bars))
    return (NoTangent(), *bars[:len(args) + 1])


def _first_and_fs_tangents(dargs: tuple, first: Any, args: tuple) -> tuple:
    """The tangents of ``f(first, fs, ...)``'s first argument and of ``fs`` (None when
    zero or not given)."""
    return (kit.dense_tangent(dargs[1], first, zeros=False),
            kit.dense_tangent(dargs[2], args[0], zeros=False) if args else None)


# -------------------------------------------------------------------- stft

_STFT = inspect.signature(ss.stft)


def _stft_parts(x: Any, args: tuple, kwargs: dict) -> tuple:
    params = _STFT.bind(x, *args, **kwargs).arguments
    out = ss.stft(x, *args, **kwargs)
    x_arr = np.asarray(x)
    axis = params.get("axis", -1)
    xm = np.moveaxis(x_arr, axis, -1)
    seg = _Segments(ss.stft, xm, params, params.get("boundary", "zeros"),
                    params.get("padded", True))
    fs = params.get("fs", 1.0)
    win = seg.win
    psd = params.get("scaling", "spectrum") == "psd"
    scale = 1 / np.sqrt(fs * np.sum(win * win)) if psd else 1 / np.sum(win)
    spectra, pad_pullback = seg(xm)
    _check(ss.stft, scale * spectra, _moved(out[2], axis))
    return out, x_arr, axis, seg, fs, scale, psd, pad_pullback


@rrule.register(ss.stft)
def stft_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
    out, _, axis, seg, fs, scale, psd, pad_pullback = _stft_parts(x, args, kwargs)
    f, t, z = out
    project_x = kit.array_projector(x)
    project_fs = ProjectTo(args[0]) if args else None

    @kit.zero_guard((NoTangent(), *[ZeroTangent()] * (len(args) + 1)))
    def stft_pullback(out_bar: Any) -> tuple:
        f_bar, t_bar, z_bar = (kit.nonzero_array(out_bar[i]) for i in range(3))
        x_bar: Any = ZeroTangent()
        if z_bar is not None:
            s_bar = _moved(z_bar, axis) * scale
            x_bar = project_x(np.moveaxis(seg.adjoint(s_bar, pad_pullback), -1, axis))

        def fs_terms() -> list:  # f = k fs / nfft, t = (...) / fs, Zxx ~ fs^(-1/2) under "psd"
            return [np.sum(f_bar * f) / fs if f_bar is not None else 0.0,
                    -np.sum(t_bar * t) / fs if t_bar is not None else 0.0,
                    -np.real(np.vdot(z, z_bar)) / (2 * fs) if psd and z_bar is not None
                    else 0.0]

        return _argument_bars(args, x_bar, project_fs, fs_terms)

    return out, stft_pullback


@frule.register(ss.stft)
def stft_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
    out, _, axis, seg, fs, scale, psd, _ = _stft_parts(x, args, kwargs)
    f, t, z = out
    x_dot, fs_dot = _first_and_fs_tangents(dargs, x, args)
    if x_dot is None and fs_dot is None:
        return out, ZeroTangent()
    z_dot = np.zeros_like(z)
    if x_dot is not None:
        spectra, _ = seg(np.moveaxis(x_dot, axis, -1))
        z_dot = z_dot + _unmoved(scale * spectra, axis)
    f_dot, t_dot = np.zeros_like(f), np.zeros_like(t)
    if fs_dot is not None:
        f_dot, t_dot = f * (fs_dot / fs), t * (-fs_dot / fs)
        if psd:
            z_dot = z_dot - z * (fs_dot / (2 * fs))
    return out, Tangent[tuple](f_dot, t_dot, z_dot.astype(z.dtype, copy=False))


# ------------------------------------------------------------------- welch

_WELCH = inspect.signature(ss.welch)


def _welch_parts(x: Any, args: tuple, kwargs: dict) -> tuple:
    params = _WELCH.bind(x, *args, **kwargs).arguments
    average = params.get("average", "mean")
    if average != "mean":
        raise UnsupportedOptionError(
            ss.welch, "average", average, "only the mean of the segment periodograms has "
            "a rule", "Use average='mean'")
    out = ss.welch(x, *args, **kwargs)
    x_arr = np.asarray(x)
    axis = params.get("axis", -1)
    xm = np.moveaxis(x_arr, axis, -1)
    params.setdefault("detrend", "constant")
    seg = _Segments(ss.welch, xm, params, None, False)
    fs = params.get("fs", 1.0)
    win = seg.win
    density = params.get("scaling", "density") == "density"
    scale = 1 / (fs * np.sum(win * win)) if density else 1 / np.sum(win) ** 2
    weights = np.ones(seg.nfft // 2 + 1 if not seg.twosided else seg.nfft)
    if not seg.twosided:  # the one-sided bins that also stand for their mirror image
        weights[1:] = 2.0
        if seg.nfft % 2 == 0:
            weights[-1] = 1.0
    spectra, _ = seg(xm)
    c = scale * weights / seg.nseg
    _check(ss.welch, np.sum(c * np.abs(spectra) ** 2, axis=-2), np.moveaxis(out[1], axis, -1))
    return out, x_arr, axis, seg, fs, density, spectra, c


@rrule.register(ss.welch)
def welch_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
    out, _, axis, seg, fs, density, spectra, c = _welch_parts(x, args, kwargs)
    f, p = out
    project_x = kit.array_projector(x)
    project_fs = ProjectTo(args[0]) if args else None

    @kit.zero_guard((NoTangent(), *[ZeroTangent()] * (len(args) + 1)))
    def welch_pullback(out_bar: Any) -> tuple:
        f_bar, p_bar = kit.nonzero_array(out_bar[0]), kit.nonzero_array(out_bar[1])
        x_bar: Any = ZeroTangent()
        if p_bar is not None:
            # d|S|^2 = 2 Re(conj(S) dS): the cotangent of S is 2 S times that of |S|^2
            pm_bar = np.real(np.moveaxis(p_bar, axis, -1))[..., None, :]
            s_bar = 2 * c * pm_bar * spectra
            x_bar = project_x(np.moveaxis(seg.adjoint(s_bar, None), -1, axis))

        def fs_terms() -> list:  # f = k fs / nfft; the "density" scaling is 1 / fs
            return [np.sum(f_bar * f) / fs if f_bar is not None else 0.0,
                    -np.sum(np.real(p_bar) * p) / fs if density and p_bar is not None
                    else 0.0]

        return _argument_bars(args, x_bar, project_fs, fs_terms)

    return out, welch_pullback


@frule.register(ss.welch)
def welch_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
    out, _, axis, seg, fs, density, spectra, c = _welch_parts(x, args, kwargs)
    f, p = out
    x_dot, fs_dot = _first_and_fs_tangents(dargs, x, args)
    if x_dot is None and fs_dot is None:
        return out, ZeroTangent()
    p_dot = np.zeros_like(p)
    if x_dot is not None:
        s_dot, _ = seg(np.moveaxis(x_dot, axis, -1))
        pm_dot = np.sum(2 * c * np.real(np.conj(spectra) * s_dot), axis=-2)
        p_dot = p_dot + np.moveaxis(pm_dot, -1, axis)
    f_dot = np.zeros_like(f)
    if fs_dot is not None:
        f_dot = f * (fs_dot / fs)
        if density:
            p_dot = p_dot - p * (fs_dot / fs)
    return out, Tangent[tuple](f_dot, p_dot.astype(p.dtype, copy=False))


# ------------------------------------------------------------------- istft

_ISTFT = inspect.signature(ss.istft)


class _Inverse:
    """``istft``'s map from ``Zxx`` (as ``(..., freq, seg)``) to the signal (last axis)."""

    def __init__(self, z: np.ndarray, params: dict) -> None:
        ndim = z.ndim
        fa = int(params.get("freq_axis", -2)) % ndim
        ta = int(params.get("time_axis", -1)) % ndim
        self.perm = [i for i in range(ndim) if i not in (fa, ta)] + [fa, ta]
        # where SciPy puts the time axis of x
        self.x_axis = None if ta == ndim - 1 or ndim == 2 else (ta - 1 if fa < ta else ta)
        self.onesided = params.get("input_onesided", True)
        nfreq, self.nseg = z.shape[fa], z.shape[ta]
        self.nfreq = nfreq
        n_default = 2 * (nfreq - 1) if self.onesided else nfreq
        nperseg = params.get("nperseg")
        window = params.get("window", "hann_periodic")
        nperseg = n_default if nperseg is None else int(nperseg)
        nfft = params.get("nfft")
        if nfft is None:
            nfft = nperseg if self.onesided and nperseg == n_default + 1 else n_default
        self.nperseg, self.nfft = nperseg, int(nfft)
        noverlap = params.get("noverlap")
        self.nstep = nperseg - (nperseg // 2 if noverlap is None else int(noverlap))
        self.win = ss.get_window(window, nperseg) if isinstance(window, (str, tuple)) \
            else np.asarray(window)
        fs = params.get("fs", 1.0)
        self.fs = fs
        self.psd = params.get("scaling", "spectrum") == "psd"
        self.scale = np.sqrt(fs * np.sum(self.win ** 2)) if self.psd else np.sum(self.win)
        self.length = nperseg + (self.nseg - 1) * self.nstep
        norm = _overlap_add(np.broadcast_to(self.win ** 2, (self.nseg, nperseg)), self.nstep,
                            self.length)
        self.cut = nperseg // 2 if params.get("boundary", True) else 0
        norm = norm[self.cut:self.length - self.cut]
        self.norm = np.where(norm > 1e-10, norm, 1.0)

    def __call__(self, z: np.ndarray) -> np.ndarray:
        zm = np.transpose(z, self.perm)
        inverse = np.fft.irfft if self.onesided else np.fft.ifft
        subs = inverse(zm, n=self.nfft, axis=-2)[..., :self.nperseg, :] * self.scale
        x = _overlap_add(np.swapaxes(subs, -1, -2) * self.win, self.nstep, self.length)
        return x[..., self.cut:self.length - self.cut] / self.norm

    def adjoint(self, x_bar: np.ndarray) -> np.ndarray:
        g = x_bar / self.norm
        g = np.pad(g, [(0, 0)] * (g.ndim - 1) + [(self.cut, self.cut)])
        idx = np.arange(self.nseg)[:, None] * self.nstep + np.arange(self.nperseg)
        frames = g[..., idx] * np.conj(self.win) * self.scale  # (..., seg, nperseg)
        subs_bar = np.pad(np.swapaxes(frames, -1, -2),
                          [(0, 0)] * (g.ndim - 1) + [(0, self.nfft - self.nperseg), (0, 0)])
        adjoint = irfft_adjoint if self.onesided else ifft_adjoint
        zm_bar = adjoint(subs_bar, self.nfreq, self.nfft, -2, "backward")
        return np.transpose(zm_bar, np.argsort(self.perm))

    def to_last(self, x: np.ndarray) -> np.ndarray:
        return x if self.x_axis is None else np.moveaxis(x, self.x_axis, -1)


@rrule.register(ss.istft)
def istft_rrule(zxx: Any, *args: Any, **kwargs: Any) -> Any:
    params = _ISTFT.bind(zxx, *args, **kwargs).arguments
    out = ss.istft(zxx, *args, **kwargs)
    t, x = out
    z_arr = np.asarray(zxx)
    inv = _Inverse(z_arr, params)
    _check(ss.istft, inv(z_arr), inv.to_last(x))
    project_z = kit.array_projector(zxx)
    project_fs = ProjectTo(args[0]) if args else None

    @kit.zero_guard((NoTangent(), *[ZeroTangent()] * (len(args) + 1)))
    def istft_pullback(out_bar: Any) -> tuple:
        t_bar, x_bar = kit.nonzero_array(out_bar[0]), kit.nonzero_array(out_bar[1])
        z_bar: Any = ZeroTangent()
        if x_bar is not None:
            z_bar = project_z(inv.adjoint(inv.to_last(x_bar)))

        def fs_terms() -> list:  # t = n / fs; the "psd" scaling is sqrt(fs)
            return [-np.sum(t_bar * t) / inv.fs if t_bar is not None else 0.0,
                    np.real(np.vdot(x, x_bar)) / (2 * inv.fs) if inv.psd and x_bar is not None
                    else 0.0]

        return _argument_bars(args, z_bar, project_fs, fs_terms)

    return out, istft_pullback


@frule.register(ss.istft)
def istft_frule(dargs: tuple, zxx: Any, *args: Any, **kwargs: Any) -> Any:
    params = _ISTFT.bind(zxx, *args, **kwargs).arguments
    out = ss.istft(zxx, *args, **kwargs)
    t, x = out
    z_dot, fs_dot = _first_and_fs_tangents(dargs, zxx, args)
    if z_dot is None and fs_dot is None:
        return out, ZeroTangent()
    # linear in Zxx: the pushforward is istft of the tangent
    x_dot = np.zeros_like(x) if z_dot is None else ss.istft(z_dot, *args, **kwargs)[1]
    t_dot = np.zeros_like(t)
    if fs_dot is not None:
        fs = params.get("fs", 1.0)
        t_dot = t * (-fs_dot / fs)
        if params.get("scaling", "spectrum") == "psd":
            x_dot = x_dot + x * (fs_dot / (2 * fs))
    return out, Tangent[tuple](t_dot, np.asarray(x_dot).astype(x.dtype, copy=False))
