"""Rules for ``numpy.fft``.

Covered with frule + rrule, for ``np.ndarray`` inputs (real or complex, float32
kept), with every form of ``n`` / ``s`` (padding or truncation), ``axis`` /
``axes`` and ``norm`` (``"backward"``, ``"ortho"``, ``"forward"``):
``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ``ihfft``, ``fft2``, ``ifft2``,
``rfft2``, ``irfft2``, ``fftn``, ``ifftn``, ``rfftn``, ``irfftn``, and the
permutations ``fftshift`` and ``ifftshift``. ``out=`` is refused
(:class:`~chainrules.OutArgumentError`). Also ``fftfreq(n, d)`` and
``rfftfreq(n, d)``: differentiable in the sample spacing ``d`` (``n`` is a count).

Every transform is linear over the reals, so the pushforward is the transform of
the tangent, and the pullback is the adjoint (DESIGN §2: for ``y = A x``,
``x_bar = A^H y_bar``, real part for a real ``x``):

- ``fft`` / ``ifft`` with norm ``N``: ``ifft`` / ``fft`` with the swapped norm
  (``"backward"`` <-> ``"forward"``, ``"ortho"`` unchanged), then the adjoint of
  the padding or truncation to ``n`` (truncate or zero-pad back to the input's
  length);
- ``rfft``: the half spectrum is zero-padded to the full length ``n`` before the
  inverse transform, and the real part taken: the Hermitian-symmetric half is not
  doubled here, because the primal only *keeps* the first ``n // 2 + 1`` outputs;
- ``irfft``: the primal uses each of the bins ``0 < k < n / 2`` twice (``X_k``
  and its conjugate mirror ``X_{n-k}``), the zero-frequency bin and, for even
  ``n``, the Nyquist bin once and only through their real parts. So the
  cotangent is ``rfft`` of ``y_bar`` (swapped norm) with those bins doubled,
  padded or truncated back to the input's length;
- ``hfft(a) = irfft(conj(a))`` and ``ihfft(a) = conj(rfft(a))`` (swapped norms),
  whose adjoints follow;
- the n-dimensional transforms apply the 1-D adjoints axis by axis.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from chainrules.core import (
    NoTangent,
    OutArgumentError,
    ProjectTo,
    ZeroTangent,
    frule,
    rrule,
    unthunk,
)

_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _is_zero(t: Any) -> bool:
    return isinstance(t, (ZeroTangent, NoTangent))


def _norm(norm: Any) -> str:
    # the primal call, made first, has already rejected any other value
    return "backward" if norm is None else norm


def _resize(z: np.ndarray, axis: int, m: int) -> np.ndarray:
    """Truncate or zero-pad ``z`` along ``axis`` to length ``m``."""
    n = z.shape[axis]
    if n == m:
        return z
    if n > m:
        index = [slice(None)] * z.ndim
        index[axis] = slice(0, m)
        return z[tuple(index)]
    pad = [(0, 0)] * z.ndim
    pad[axis] = (0, m - n)
    return np.pad(z, pad)


# ------------------------------------------------------------- 1-D adjoints
# Each maps y_bar to the cotangent of the input (complex; projected by the rule),
# given the input length m along `axis`, the transform length n and the norm.


def _fft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    return _resize(np.fft.ifft(y_bar, axis=axis, norm=_SWAP[norm]), axis, m)


def _ifft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    return _resize(np.fft.fft(y_bar, axis=axis, norm=_SWAP[norm]), axis, m)


def _rfft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    full = _resize(y_bar, axis, n)  # the outputs rfft drops have zero cotangent
    return _resize(np.fft.ifft(full, axis=axis, norm=_SWAP[norm]).real, axis, m)


def _irfft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    z = np.fft.rfft(y_bar, n=n, axis=axis, norm=_SWAP[norm])
    weights = np.full(z.shape[axis], 2.0, dtype=z.real.dtype)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * z.ndim
    shape[axis] = -1
    return _resize(z * weights.reshape(shape), axis, m)


def _hfft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    return np.conj(_irfft_adjoint(y_bar, m, n, axis, _SWAP[norm]))


def _ihfft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    return _rfft_adjoint(np.conj(y_bar), m, n, axis, _SWAP[norm])


# ------------------------------------------------------------- n-D adjoints


def _resize_axes(z: np.ndarray, axes: list, shape: tuple) -> np.ndarray:
    for a in axes:
        z = _resize(z, a, shape[a])
    return z


def _fftn_adjoint(y_bar: np.ndarray, shape: tuple, s: list, axes: list,
                  norm: str) -> np.ndarray:
    return _resize_axes(np.fft.ifftn(y_bar, axes=axes, norm=_SWAP[norm]), axes, shape)


def _ifftn_adjoint(y_bar: np.ndarray, shape: tuple, s: list, axes: list,
                   norm: str) -> np.ndarray:
    return _resize_axes(np.fft.fftn(y_bar, axes=axes, norm=_SWAP[norm]), axes, shape)


def _rfftn_adjoint(y_bar: np.ndarray, shape: tuple, s: list, axes: list,
                   norm: str) -> np.ndarray:
    last, others = axes[-1], axes[:-1]
    z = np.fft.ifftn(y_bar, axes=others, norm=_SWAP[norm]) if others else y_bar
    z = _rfft_adjoint(z, shape[last], s[-1], last, norm)
    return _resize_axes(z, others, shape)


def _irfftn_adjoint(y_bar: np.ndarray, shape: tuple, s: list, axes: list,
                    norm: str) -> np.ndarray:
    last, others = axes[-1], axes[:-1]
    z = _irfft_adjoint(y_bar, shape[last], s[-1], last, norm)
    if others:
        z = np.fft.fftn(z, axes=others, norm=_SWAP[norm])
    return _resize_axes(z, others, shape)


# ------------------------------------------------------------------- rules


def _refuse_out(f: Any, params: dict) -> None:
    if params.get("out") is not None:
        raise OutArgumentError(f)


def _cook_1d(f: Any, x: np.ndarray, params: dict, inverse_real: bool) -> tuple:
    axis = params.get("axis", -1)
    axis = axis % x.ndim if x.ndim else axis
    m = x.shape[axis]
    n = params.get("n")
    if n is None:
        n = 2 * (m - 1) if inverse_real else m
    return m, n, axis, _norm(params.get("norm"))


def _cook_nd(f: Any, x: np.ndarray, params: dict, inverse_real: bool) -> tuple:
    """The resolved (s, axes) of an n-D transform, as NumPy resolves them."""
    s = params.get("s")
    axes = params.get("axes", inspect.signature(f).parameters["axes"].default)
    if axes is None:
        axes = list(range(-len(s), 0)) if s is not None else list(range(x.ndim))
    axes = [a % x.ndim for a in axes]
    if s is None:
        s = [x.shape[a] for a in axes]
        if inverse_real:
            s[-1] = 2 * (x.shape[axes[-1]] - 1)
    else:
        s = list(s)
        for i, (v, a) in enumerate(zip(s, axes)):
            if v is None or v == -1:
                last_inverse = inverse_real and i == len(s) - 1 and v is None
                s[i] = 2 * (x.shape[a] - 1) if last_inverse else x.shape[a]
    return s, axes, _norm(params.get("norm"))


def _fit(y_dot: np.ndarray, y: np.ndarray) -> np.ndarray:
    return y_dot.astype(y.dtype, copy=False)


def _transform_rules(f: Any, adjoint: Any, cook: Any, inverse_real: bool) -> None:
    sig = inspect.signature(f)
    name = f.__name__
    nd = cook is _cook_nd

    def fft_rrule(a: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        params = sig.bind(a, *args, **kwargs).arguments
        _refuse_out(f, params)
        y = f(a, *args, **kwargs)
        # 1-D: (m, n, axis, norm); n-D: (shape, s, axes, norm)
        resolved = (a.shape, *cook(f, a, params, inverse_real)) if nd else cook(
            f, a, params, inverse_real)
        project_a = ProjectTo(a)
        rest = (NoTangent(),) * len(args)

        def fft_pullback(y_bar: Any) -> tuple:
            y_bar = unthunk(y_bar)
            if _is_zero(y_bar):
                return (NoTangent(), ZeroTangent(), *rest)
            a_bar = adjoint(np.asarray(y_bar), *resolved)
            return (NoTangent(), project_a(a_bar), *rest)

        fft_pullback.__qualname__ = f"{name}_pullback"
        return y, fft_pullback

    def fft_frule(dargs: tuple, a: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        params = sig.bind(a, *args, **kwargs).arguments
        _refuse_out(f, params)
        y = f(a, *args, **kwargs)
        a_dot = unthunk(dargs[1])
        if _is_zero(a_dot):
            return y, ZeroTangent()
        return y, _fit(f(np.asarray(a_dot), *args, **kwargs), y)

    fft_rrule.__qualname__ = f"{name}_rrule"
    fft_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(fft_rrule)
    frule.register(f)(fft_frule)


_transform_rules(np.fft.fft, _fft_adjoint, _cook_1d, False)
_transform_rules(np.fft.ifft, _ifft_adjoint, _cook_1d, False)
_transform_rules(np.fft.rfft, _rfft_adjoint, _cook_1d, False)
_transform_rules(np.fft.irfft, _irfft_adjoint, _cook_1d, True)
_transform_rules(np.fft.hfft, _hfft_adjoint, _cook_1d, True)
_transform_rules(np.fft.ihfft, _ihfft_adjoint, _cook_1d, False)
_transform_rules(np.fft.fft2, _fftn_adjoint, _cook_nd, False)
_transform_rules(np.fft.ifft2, _ifftn_adjoint, _cook_nd, False)
_transform_rules(np.fft.fftn, _fftn_adjoint, _cook_nd, False)
_transform_rules(np.fft.ifftn, _ifftn_adjoint, _cook_nd, False)
_transform_rules(np.fft.rfft2, _rfftn_adjoint, _cook_nd, False)
_transform_rules(np.fft.irfft2, _irfftn_adjoint, _cook_nd, True)
_transform_rules(np.fft.rfftn, _rfftn_adjoint, _cook_nd, False)
_transform_rules(np.fft.irfftn, _irfftn_adjoint, _cook_nd, True)


# ---------------------------------------------------------------- shifts


def _shift_rules(f: Any, inverse: Any) -> None:
    name = f.__name__

    def shift_rrule(x: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        y = f(x, *args, **kwargs)
        project_x = ProjectTo(x)
        rest = (NoTangent(),) * len(args)

        def shift_pullback(y_bar: Any) -> tuple:
            y_bar = unthunk(y_bar)
            if _is_zero(y_bar):
                return (NoTangent(), ZeroTangent(), *rest)
            return (NoTangent(), project_x(inverse(np.asarray(y_bar), *args, **kwargs)), *rest)

        shift_pullback.__qualname__ = f"{name}_pullback"
        return y, shift_pullback

    def shift_frule(dargs: tuple, x: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        y = f(x, *args, **kwargs)
        x_dot = unthunk(dargs[1])
        if _is_zero(x_dot):
            return y, ZeroTangent()
        return y, f(np.asarray(x_dot), *args, **kwargs)

    shift_rrule.__qualname__ = f"{name}_rrule"
    shift_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(shift_rrule)
    frule.register(f)(shift_frule)


_shift_rules(np.fft.fftshift, np.fft.ifftshift)
_shift_rules(np.fft.ifftshift, np.fft.fftshift)


# ------------------------------------------------------------ frequencies


def _freq_rules(f: Any) -> None:
    """``f(n, d)`` is ``k / (n * d)``: the count ``n`` gets ``NoTangent()``, the sample
    spacing ``d`` the derivative ``-y / d``."""
    name = f.__name__

    def freq_rrule(n: int, *args: Any, **kwargs: Any) -> Any:
        y = f(n, *args, **kwargs)
        d = args[0] if args else None
        project_d = ProjectTo(d) if args else None

        def freq_pullback(y_bar: Any) -> tuple:
            y_bar = unthunk(y_bar)
            if not args:
                return NoTangent(), NoTangent()
            if _is_zero(y_bar):
                return NoTangent(), NoTangent(), ZeroTangent()
            return NoTangent(), NoTangent(), project_d(-np.vdot(y, y_bar).real / d)

        freq_pullback.__qualname__ = f"{name}_pullback"
        return y, freq_pullback

    def freq_frule(dargs: tuple, n: int, *args: Any, **kwargs: Any) -> Any:
        y = f(n, *args, **kwargs)
        d_dot = unthunk(dargs[2]) if args else ZeroTangent()
        if _is_zero(d_dot):
            return y, ZeroTangent()
        return y, y * (-d_dot / args[0])

    freq_rrule.__qualname__ = f"{name}_rrule"
    freq_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(freq_rrule)
    frule.register(f)(freq_frule)


_freq_rules(np.fft.fftfreq)
_freq_rules(np.fft.rfftfreq)
