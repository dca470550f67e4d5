"""Rules for ``scipy.signal.savgol_filter``: the Savitzky-Golay filter is linear in
``x`` (affine with ``cval`` for ``mode="constant"``), so its pushforward is the filter
of ``x_dot`` and its pullback the adjoint filter.

Along ``axis`` the filter is a matrix ``L`` (the signal's length ``N`` squared): a
Toeplitz convolution ``T`` with ``savgol_coeffs`` in the rows whose window fits
inside the signal, and other rows near the two ends, where ``mode`` decides
(``"interp"`` fits a polynomial to the first or last ``window_length`` samples;
``"mirror"``, ``"nearest"``, ``"wrap"``, ``"constant"`` extend the signal). A Toeplitz
matrix is persymmetric (``T^T = J T J``, ``J`` the flip), so ``T^T y_bar`` is the
filter of the flipped cotangent, flipped back; the edge rows are read off the filter
applied to the identity of a short signal (``4 * window_length + 4`` samples, whose
two ends see what the long signal's do; ``"wrap"`` too, its columns mapped to the
long signal's ends). ``delta`` scales the output by ``delta^-deriv``:
``d/d delta = -deriv / delta * y``; ``cval`` adds ``cval * savgol_filter(0, cval=1)``.
Real input only, float32 kept.

Example:
    >>> import numpy as np
    >>> import scipy.signal
    >>> from chainrules.ad import grad
    >>> x = np.linspace(0.0, 1.0, 9) ** 2
    >>> g = grad(lambda x: scipy.signal.savgol_filter(x, 5, 2)[0])(x)
    >>> bool(np.allclose(g[:5] @ x[:5], scipy.signal.savgol_filter(x, 5, 2)[0]))
    True
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import scipy.signal as ss

from chainrules.core import NoTangent, ProjectTo, ZeroTangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit

__all__: list[str] = []

_NO = NoTangent()
_ZERO = ZeroTangent()
_SIGNATURE = inspect.signature(ss.savgol_filter)
_NAMES = list(_SIGNATURE.parameters)


def _params(x: Any, args: tuple, kwargs: dict) -> dict:
    bound = _SIGNATURE.bind(x, *args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def _filter(v: Any, params: dict, **changes: Any) -> np.ndarray:
    p = {**params, **changes}
    return np.asarray(ss.savgol_filter(v, p["window_length"], p["polyorder"],
                                       deriv=p["deriv"], delta=p["delta"], axis=-1,
                                       mode=p["mode"], cval=p["cval"]))


def _adjoint(y_bar: np.ndarray, params: dict) -> np.ndarray:
    """``L^T y_bar`` along the last axis."""
    n = y_bar.shape[-1]
    w = int(params["window_length"])
    m = min(n, 4 * w + 4)
    probe = _filter(np.eye(m), params, cval=0.0)  # rows: outputs, after the transpose
    probe = np.swapaxes(probe, 0, 1)  # probe[r, j] = L_m[r, j]
    if m == n:
        return y_bar @ probe
    # the interior rows: the Toeplitz part; T^T = J T J
    inner = y_bar.copy()
    inner[..., :w] = 0
    inner[..., n - w:] = 0
    x_bar = _filter(inner[..., ::-1], params, mode="constant", cval=0.0)[..., ::-1]
    x_bar = np.ascontiguousarray(x_bar, dtype=np.result_type(x_bar, probe))
    # the edge rows, columns j of the short signal mapped to the long one's
    cols = np.arange(m)
    cols = np.where(cols < m // 2, cols, n - m + cols)
    edge = y_bar[..., :w] @ probe[:w] + y_bar[..., n - w:] @ probe[m - w:]
    # (cols has no repeats, m < n: a fancy-index add is exact)
    x_bar[..., cols] += edge
    return x_bar


def _cval_response(x: np.ndarray, params: dict) -> np.ndarray:
    return _filter(np.zeros(x.shape[-1]), params, cval=1.0)


@rrule.register(ss.savgol_filter)
def savgol_filter_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
    params = _params(x, args, kwargs)
    y = ss.savgol_filter(x, *args, **kwargs)
    x_arr = np.asarray(x)
    axis = int(params["axis"])
    project_x = ProjectTo(x)

    def savgol_filter_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if kit.is_zero(y_bar):
            return (_NO, *[kit.zero_for(a) for a in (x, *args)])
        y_bar = np.real(np.asarray(y_bar))
        bars: dict = {}
        last = np.moveaxis(y_bar, axis, -1)
        bars["x"] = project_x(np.moveaxis(_adjoint(last, params), -1, axis).astype(
            np.result_type(x_arr, np.float32)))
        if params["mode"] == "constant":
            bars["cval"] = float(np.sum(last * _cval_response(x_arr, params)))
        if params["deriv"]:
            bars["delta"] = float(-params["deriv"] / params["delta"] * np.sum(y_bar * y))
        return (_NO, *[bars[name] if name in bars else kit.zero_for(a)
                       for name, a in zip(_NAMES, (x, *args))])

    return y, savgol_filter_pullback


@frule.register(ss.savgol_filter)
def savgol_filter_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
    params = _params(x, args, kwargs)
    y = np.asarray(ss.savgol_filter(x, *args, **kwargs))
    dots = dict(zip(_NAMES, (unthunk(d) for d in dargs[1:])))
    y_dot: Any = _ZERO
    x_dot = dots.get("x", _ZERO)
    if not kit.is_zero(x_dot):
        y_dot = _filter_axis(np.real(np.asarray(x_dot)), params)
    c_dot = dots.get("cval", _ZERO)
    if params["mode"] == "constant" and not kit.is_zero(c_dot):
        response = np.moveaxis(np.broadcast_to(_cval_response(np.asarray(x), params),
                                               np.moveaxis(np.asarray(y), params["axis"],
                                                           -1).shape), -1, params["axis"])
        y_dot = y_dot + float(c_dot) * response
    d_dot = dots.get("delta", _ZERO)
    if params["deriv"] and not kit.is_zero(d_dot):
        y_dot = y_dot + (-params["deriv"] / params["delta"] * float(d_dot)) * y
    if kit.is_zero(y_dot):
        return y, _ZERO
    return y, np.asarray(y_dot, dtype=y.dtype)


def _filter_axis(v: np.ndarray, params: dict) -> np.ndarray:
    return np.moveaxis(_filter(np.moveaxis(v, params["axis"], -1), params, cval=0.0), -1,
                       params["axis"])
