"""Rules for ``scipy.signal``: convolutions, ``detrend`` and discrete outputs.

Covered with frule + rrule, every ``mode`` (``"full"``, ``"same"``, ``"valid"``),
n-D, real and complex, float32 kept:

- ``convolve`` and ``correlate`` (every ``method``), ``fftconvolve`` and
  ``oaconvolve`` (with ``axes``, and the broadcasting of the other axes);
- ``convolve2d`` and ``correlate2d`` with every ``boundary``: ``"fill"`` with any
  ``fillvalue``, ``"wrap"`` and ``"symm"``;
- ``detrend`` (``"linear"`` with breakpoints ``bp``, ``"constant"``):
  subtracting a least-squares fit is an orthogonal projection, its own adjoint, so
  the pullback is ``detrend`` of the cotangent.

Every output is a window of the full convolution ``conv(a, c)`` with ``c = b``, or
``c = conj(flip(b))`` for a correlation: centred for ``"same"`` and ``"valid"``
(``correlate2d``'s ``"same"`` window starts at ``len(b) // 2``, one later for even
kernels; its ``"valid"`` with the larger array second is the flipped correlation
of the swapped pair). The convolution is bilinear, so with ``y_bar`` zero-padded
to the full window: ``a_bar = correlate(y_bar, c, "valid")`` and ``c_bar =
correlate(y_bar, a, "valid")`` (``b_bar = conj(flip(c_bar))`` for a correlation).
A ``fillvalue`` ``v`` extends ``a`` by ``v`` outside: ``y = conv_0(a - v, c) + v
sum(c)`` (not in ``"valid"`` mode, which never reads it); ``"wrap"`` and
``"symm"`` make ``y`` a window of ``conv(np.pad(a, mode="wrap" or "symmetric"), c,
"valid")``, whose padding the pullback folds back (``_padding.extension_adjoint``).
The pullbacks call ``scipy.signal`` and NumPy functions that have rules, so second
derivatives work through ``chainrules.ad``.

``argrelextrema``, ``argrelmax``, ``argrelmin``, ``correlation_lags``,
``check_COLA``, ``check_NOLA``, ``choose_conv_method``, ``max_len_seq`` and
``unit_impulse`` return indices, flags or fixed sequences: non-differentiable.

The filters ``lfilter`` and ``sosfilt`` are in ``signal_filters.py``, ``stft`` and
``welch`` in ``signal_spectral.py``.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import scipy.signal as ss

from chainrules.core import NoTangent, Thunk, ZeroTangent, frule, non_differentiable, rrule
from chainrules.rules import _kit as kit
from chainrules.rules.scipy._padding import extension_adjoint


def _flipconj(v: np.ndarray, axes: list) -> np.ndarray:
    return np.conj(np.flip(v, axis=tuple(axes))) if axes else np.conj(v)


# ------------------------------------------------ what each function computes


def _all_axes(params: dict, a: np.ndarray) -> list:
    return list(range(a.ndim))


def _given_axes(params: dict, a: np.ndarray) -> list:
    axes = params.get("axes")
    if axes is None:
        return list(range(a.ndim))
    axes = [axes] if np.ndim(axes) == 0 else list(axes)
    return sorted(ax % a.ndim for ax in axes)


def _correlate_valid(u: np.ndarray, v: np.ndarray, axes: list, params: dict) -> np.ndarray:
    return ss.correlate(u, v, mode="valid", method=params.get("method", "auto"))


def _correlate2d_valid(u: np.ndarray, v: np.ndarray, axes: list, params: dict) -> np.ndarray:
    return ss.correlate2d(u, v, mode="valid")


def _fft_correlate_valid(conv: Any) -> Any:
    def correlate_valid(u: np.ndarray, v: np.ndarray, axes: list, params: dict) -> np.ndarray:
        return conv(u, _flipconj(v, axes), mode="valid", axes=axes)

    return correlate_valid


# ---------------------------------------------------------------- the maths


def _window(y_shape: tuple, a_shape: tuple, b_shape: tuple, axes: list,
            kernel_start: bool) -> list:
    """``(start, stop)`` padding of ``y`` inside the full convolution, per axis."""
    pads = [(0, 0)] * len(y_shape)
    for ax in range(len(y_shape)):
        if ax not in axes:
            # broadcast axes: "same" keeps a's length even there, centred like the others
            full = max(a_shape[ax], b_shape[ax])
            start = (full - y_shape[ax]) // 2
            pads[ax] = (start, full - start - y_shape[ax])
            continue
        full = a_shape[ax] + b_shape[ax] - 1
        if kernel_start and y_shape[ax] == a_shape[ax] and full != y_shape[ax]:
            start = b_shape[ax] // 2  # correlate2d's "same" window
        else:
            start = (full - y_shape[ax]) // 2
        pads[ax] = (start, full - start - y_shape[ax])
    return pads


_EXTENSIONS = {"wrap": "wrap", "circular": "wrap", "symm": "symmetric",
               "symmetric": "symmetric"}  # convolve2d's boundary -> np.pad's mode


def _conv_bars(y_bar: np.ndarray, a: np.ndarray, b: np.ndarray, y_shape: tuple, spec: dict,
               params: dict) -> tuple:
    """Thunks of ``(a_bar, b_bar)``, unprojected, for ``y`` a window of ``conv(a, c)``."""
    axes = spec["axes"](params, a)
    corr_valid = spec["correlate_valid"]
    c = _flipconj(b, axes) if spec["correlation"] else b
    pads = _window(y_shape, a.shape, b.shape, axes, spec["kernel_start"])
    # "valid" never reads outside a: not even when the kernel is the larger array
    outside = spec["two_d"] and params.get("mode", "full") != "valid"
    extension = _EXTENSIONS.get(params.get("boundary", "fill")) if outside else None
    fill = params.get("fillvalue", 0) if outside and extension is None else 0
    base = a
    if extension is not None:
        # y is a window of conv(np.pad(a, mode=extension), c, "valid"): pad a by the
        # kernel's length less one and shift the window by as much
        base = np.pad(a, [(n - 1, n - 1) for n in b.shape], mode=extension)
        pads = [(start + n - 1, stop + n - 1) for (start, stop), n in zip(pads, b.shape)]

    def fullnonzero_array() -> np.ndarray:
        return np.pad(y_bar, pads) if any(p != (0, 0) for p in pads) else y_bar

    def conv_a_bar() -> np.ndarray:
        base_bar = corr_valid(fullnonzero_array(), c, axes, params)
        if extension is None:
            return base_bar
        for ax, n in enumerate(b.shape):
            folded = extension_adjoint(np.moveaxis(base_bar, ax, -1), a.shape[ax], n - 1,
                                        extension)
            base_bar = np.moveaxis(folded, -1, ax)
        return base_bar

    def conv_b_bar() -> np.ndarray:
        c_bar = corr_valid(fullnonzero_array(), base - fill if fill != 0 else base, axes, params)
        if fill != 0:
            c_bar = c_bar + np.conj(fill) * np.sum(y_bar)
        return _flipconj(c_bar, axes) if spec["correlation"] else c_bar

    return conv_a_bar, conv_b_bar


def _swapped(spec: dict, a: Any, b: Any, params: dict) -> bool:
    """correlate2d's "valid" mode with the larger array second: SciPy returns
    ``flip(correlate2d(b, a))``."""
    if not spec["swaps"] or params.get("mode", "full") != "valid":
        return False
    return not all(p >= q for p, q in zip(np.shape(a), np.shape(b)))


def _conv_rules(f: Any, spec: dict) -> None:
    sig = inspect.signature(f)

    def conv_rrule(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
        params = sig.bind(a, b, *args, **kwargs).arguments
        y = f(a, b, *args, **kwargs)
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        project_a, project_b = kit.array_projector(a), kit.array_projector(b)
        swapped = _swapped(spec, a_arr, b_arr, params)
        rest = (NoTangent(),) * len(args)

        @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent(), *rest))
        def conv_pullback(y_bar: Any) -> tuple:
            y_bar = np.asarray(y_bar)
            if swapped:
                b_thunk, a_thunk = _conv_bars(np.flip(y_bar), b_arr, a_arr, np.shape(y),
                                              spec, params)
            else:
                a_thunk, b_thunk = _conv_bars(y_bar, a_arr, b_arr, np.shape(y), spec, params)

            def a_bar() -> Any:
                return project_a(a_thunk())

            def b_bar() -> Any:
                return project_b(b_thunk())

            return (NoTangent(),
                    Thunk(a_bar) if kit.is_differentiable(a_arr) else NoTangent(),
                    Thunk(b_bar) if kit.is_differentiable(b_arr) else NoTangent(), *rest)

        return y, conv_pullback

    def conv_frule(dargs: tuple, a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
        params = sig.bind(a, b, *args, **kwargs).arguments
        y = f(a, b, *args, **kwargs)
        a_dot = kit.dense_tangent(dargs[1], a, zeros=False)
        b_dot = kit.dense_tangent(dargs[2], b, zeros=False)
        y_dot: Any = ZeroTangent()
        if a_dot is not None:
            # the fill value does not move with a: the a-direction sees a zero fill
            # (wrap and symm extensions are linear in a and move with it)
            zero_fill = {"fillvalue": 0} if spec["two_d"] and "fillvalue" in params else {}
            bound = sig.bind(a_dot, b, *args, **kwargs)
            bound.arguments.update(zero_fill)
            y_dot = f(*bound.args, **bound.kwargs)
        if b_dot is not None:
            y_dot = y_dot + f(a, b_dot, *args, **kwargs)
        return y, kit.fit_output(y_dot, y)

    kit.define_rules(f, object, object, ..., frule_fn=conv_frule, rrule_fn=conv_rrule)


def _spec(axes: Any, correlate_valid: Any, correlation: bool = False, two_d: bool = False,
          kernel_start: bool = False, swaps: bool = False) -> dict:
    return {"axes": axes, "correlate_valid": correlate_valid, "correlation": correlation,
            "two_d": two_d, "kernel_start": kernel_start, "swaps": swaps}


_conv_rules(ss.convolve, _spec(_all_axes, _correlate_valid))
_conv_rules(ss.correlate, _spec(_all_axes, _correlate_valid, correlation=True))
_conv_rules(ss.fftconvolve, _spec(_given_axes, _fft_correlate_valid(ss.fftconvolve)))
_conv_rules(ss.oaconvolve, _spec(_given_axes, _fft_correlate_valid(ss.oaconvolve)))
_conv_rules(ss.convolve2d, _spec(_all_axes, _correlate2d_valid, two_d=True))
_conv_rules(ss.correlate2d, _spec(_all_axes, _correlate2d_valid, correlation=True, two_d=True,
                                  kernel_start=True, swaps=True))


# ------------------------------------------------------------------ detrend

_DETREND = inspect.signature(ss.detrend)


def _detrend_call(x: Any, params: dict) -> Any:
    # overwrite_data only allows SciPy to reuse x's memory; never let it
    options = {k: v for k, v in params.items() if k not in ("data", "overwrite_data")}
    return ss.detrend(x, **options)


@rrule.register(ss.detrend)
def detrend_rrule(data: Any, *args: Any, **kwargs: Any) -> Any:
    params = _DETREND.bind(data, *args, **kwargs).arguments
    y = _detrend_call(data, params)
    project_data = kit.array_projector(data)
    rest = (NoTangent(),) * len(args)

    @kit.zero_guard((NoTangent(), ZeroTangent(), *rest))
    def detrend_pullback(y_bar: Any) -> tuple:
        return (NoTangent(), project_data(_detrend_call(y_bar, params)), *rest)

    return y, detrend_pullback


@frule.register(ss.detrend)
def detrend_frule(dargs: tuple, data: Any, *args: Any, **kwargs: Any) -> Any:
    params = _DETREND.bind(data, *args, **kwargs).arguments
    y = _detrend_call(data, params)
    data_dot = kit.dense_tangent(dargs[1], data, zeros=False)
    if data_dot is None:
        return y, ZeroTangent()
    return y, kit.fit_output(_detrend_call(data_dot, params), y)


# ------------------------------------------------------- discrete outputs
# indices, lags, booleans, method names and 0/1 sequences: nothing to differentiate
for _f in (ss.argrelextrema, ss.argrelmax, ss.argrelmin, ss.correlation_lags, ss.check_COLA,
           ss.check_NOLA, ss.choose_conv_method, ss.max_len_seq, ss.unit_impulse):
    non_differentiable(_f)
