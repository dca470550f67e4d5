"""Rule builders shared by ``numpy.fft`` and ``scipy.fft`` (not a rule module: the
loader skips ``_`` names). `transform_rules`, `shift_rules` and `freq_rules` register
the frule and rrule of one function; ``rules/numpy/fft.py`` and ``rules/scipy/fft.py``
call them once per function of their namespace.

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
  whose adjoints follow; likewise ``scipy.fft.hfftn`` / ``ihfftn`` from
  ``irfftn`` / ``rfftn``;
- the n-dimensional transforms apply the 1-D adjoints axis by axis.

SciPy's ``overwrite_x=True`` only *allows* SciPy to destroy the input; the rules
call SciPy with ``overwrite_x=False`` (same values), so neither the caller's input
nor a tangent handed to the frule is ever overwritten.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from chainrules.core import NoTangent, OutArgumentError, ProjectTo, ZeroTangent
from chainrules.rules import _kit as kit
from chainrules.rules.array_api import _adjoints as adjoints

SWAP = adjoints.DUAL_NORM


def _norm(norm: Any) -> str:
    # the primal call, made first, has already rejected any other value
    return "backward" if norm is None else norm


def resize(z: np.ndarray, axis: int, m: int) -> np.ndarray:
    """Truncate or zero-pad ``z`` along ``axis`` (non-negative) to length ``m``."""
    return adjoints.fit_axis(np, z, axis, m)


def along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A 1-D weight vector shaped to broadcast along ``axis`` of an ``ndim`` array."""
    return adjoints.along(np, v, axis, ndim)


# ------------------------------------------------------------- 1-D adjoints
# Each maps y_bar to the cotangent of the input (complex; projected by the rule),
# given the input length m along `axis`, the transform length n and the norm.


def fft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    return resize(np.fft.ifft(y_bar, axis=axis, norm=SWAP[norm]), axis, m)


def ifft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    return resize(np.fft.fft(y_bar, axis=axis, norm=SWAP[norm]), axis, m)


def rfft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    full = resize(y_bar, axis, n)  # the outputs rfft drops have zero cotangent
    return resize(np.fft.ifft(full, axis=axis, norm=SWAP[norm]).real, axis, m)


def irfft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    z = np.fft.rfft(y_bar, n=n, axis=axis, norm=SWAP[norm])
    weights = np.full(z.shape[axis], 2.0, dtype=z.real.dtype)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    return resize(z * along(weights, axis, z.ndim), axis, m)


def hfft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    return np.conj(irfft_adjoint(y_bar, m, n, axis, SWAP[norm]))


def ihfft_adjoint(y_bar: np.ndarray, m: int, n: int, axis: int, norm: str) -> np.ndarray:
    return rfft_adjoint(np.conj(y_bar), m, n, axis, SWAP[norm])


# ------------------------------------------------------------- n-D adjoints
# Given the input shape, the resolved lengths s, the axes and the norm.


def fftn_adjoint(y_bar: np.ndarray, shape: tuple, s: list, axes: list,
                 norm: str) -> np.ndarray:
    return adjoints.fit_axes(np, np.fft.ifftn(y_bar, axes=axes, norm=SWAP[norm]), axes, shape)


def ifftn_adjoint(y_bar: np.ndarray, shape: tuple, s: list, axes: list,
                  norm: str) -> np.ndarray:
    return adjoints.fit_axes(np, np.fft.fftn(y_bar, axes=axes, norm=SWAP[norm]), axes, shape)


def rfftn_adjoint(y_bar: np.ndarray, shape: tuple, s: list, axes: list,
                  norm: str) -> np.ndarray:
    last, others = axes[-1], axes[:-1]
    z = np.fft.ifftn(y_bar, axes=others, norm=SWAP[norm]) if others else y_bar
    z = rfft_adjoint(z, shape[last], s[-1], last, norm)
    return adjoints.fit_axes(np, z, others, shape)


def irfftn_adjoint(y_bar: np.ndarray, shape: tuple, s: list, axes: list,
                   norm: str) -> np.ndarray:
    last, others = axes[-1], axes[:-1]
    z = irfft_adjoint(y_bar, shape[last], s[-1], last, norm)
    if others:
        z = np.fft.fftn(z, axes=others, norm=SWAP[norm])
    return adjoints.fit_axes(np, z, others, shape)


def hfftn_adjoint(y_bar: np.ndarray, shape: tuple, s: list, axes: list,
                  norm: str) -> np.ndarray:
    return np.conj(irfftn_adjoint(y_bar, shape, s, axes, SWAP[norm]))


def ihfftn_adjoint(y_bar: np.ndarray, shape: tuple, s: list, axes: list,
                   norm: str) -> np.ndarray:
    return rfftn_adjoint(np.conj(y_bar), shape, s, axes, SWAP[norm])


# ------------------------------------------------- resolving n, s, axis, axes


def cook_1d(f: Any, x: np.ndarray, params: dict, inverse_real: bool = False) -> tuple:
    """``(m, n, axis, norm)`` of a 1-D transform, as NumPy and SciPy resolve them."""
    axis = params.get("axis", -1)
    axis = axis % x.ndim if x.ndim else axis
    m = x.shape[axis]
    n = params.get("n")
    if n is None:
        n = 2 * (m - 1) if inverse_real else m
    return m, n, axis, _norm(params.get("norm"))


def cook_1d_inverse_real(f: Any, x: np.ndarray, params: dict) -> tuple:
    return cook_1d(f, x, params, inverse_real=True)


def cook_nd(f: Any, x: np.ndarray, params: dict, inverse_real: bool = False) -> tuple:
    """``(shape, s, axes, norm)`` of an n-D transform, as NumPy and SciPy resolve them."""
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
    return x.shape, s, axes, _norm(params.get("norm"))


def cook_nd_inverse_real(f: Any, x: np.ndarray, params: dict) -> tuple:
    return cook_nd(f, x, params, inverse_real=True)


# ------------------------------------------------------------------- rules


def _bind(f: Any, sig: inspect.Signature, args: tuple, kwargs: dict,
          check: Any) -> inspect.BoundArguments:
    bound = sig.bind(*args, **kwargs)
    if check is not None:
        check(f, args[0], bound.arguments)
    if bound.arguments.get("out") is not None:
        raise OutArgumentError(f)
    if bound.arguments.get("overwrite_x"):
        bound.arguments["overwrite_x"] = False
    return bound


def _call_on(f: Any, bound: inspect.BoundArguments, x: Any) -> Any:
    """``f`` called with the bound arguments, ``x`` in place of the first one."""
    args = bound.args
    return f(x, *args[1:], **bound.kwargs)


def transform_rules(f: Any, adjoint: Any, cook: Any, check: Any = None) -> None:
    """Register the frule and rrule of the linear transform ``f(x, ...)``.

    ``cook(f, x, params)`` resolves the bound parameters into the tuple that
    ``adjoint(y_bar, *resolved)`` takes; the adjoint returns the (complex or real)
    cotangent of ``x``, projected by the rule. ``check(f, x, params)``, if given,
    raises for calls the rules do not support.
    """
    sig = inspect.signature(f)

    def fft_rrule(x: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        bound = _bind(f, sig, (x, *args), kwargs, check)
        y = _call_on(f, bound, x)
        resolved = cook(f, x, bound.arguments)
        project_x = kit.array_projector(x)
        rest = (NoTangent(),) * len(args)

        @kit.zero_guard((NoTangent(), ZeroTangent(), *rest))
        def fft_pullback(y_bar: Any) -> tuple:
            return (NoTangent(), project_x(adjoint(np.asarray(y_bar), *resolved)), *rest)

        return y, fft_pullback

    def fft_frule(dargs: tuple, x: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        bound = _bind(f, sig, (x, *args), kwargs, check)
        y = _call_on(f, bound, x)
        x_dot = kit.dense_tangent(dargs[1], x, zeros=False)
        if x_dot is None:
            return y, ZeroTangent()
        return y, _call_on(f, bound, x_dot).astype(y.dtype, copy=False)

    kit.define_rules(f, frule_fn=fft_frule, rrule_fn=fft_rrule)


def shift_rules(f: Any, inverse: Any) -> None:
    """Register the rules of the permutation ``f`` (``fftshift``) given its inverse."""

    def shift_rrule(x: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        y = f(x, *args, **kwargs)
        project_x = kit.array_projector(x)
        rest = (NoTangent(),) * len(args)

        @kit.zero_guard((NoTangent(), ZeroTangent(), *rest))
        def shift_pullback(y_bar: Any) -> tuple:
            return (NoTangent(), project_x(inverse(np.asarray(y_bar), *args, **kwargs)), *rest)

        return y, shift_pullback

    def shift_frule(dargs: tuple, x: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        y = f(x, *args, **kwargs)
        x_dot = kit.dense_tangent(dargs[1], x, zeros=False)
        if x_dot is None:
            return y, ZeroTangent()
        return y, f(x_dot, *args, **kwargs)

    kit.define_rules(f, frule_fn=shift_frule, rrule_fn=shift_rrule)


def freq_rules(f: Any) -> None:
    """``f(n, d)`` is ``k / (n * d)``: the count ``n`` gets ``NoTangent()``, the sample
    spacing ``d`` (when passed positionally) the derivative ``-y / d``."""

    def freq_rrule(n: int, *args: Any, **kwargs: Any) -> Any:
        y = f(n, *args, **kwargs)
        if not args:
            def freq_no_spacing_pullback(y_bar: Any) -> tuple:
                return NoTangent(), NoTangent()

            return y, freq_no_spacing_pullback
        d = args[0]
        project_d = ProjectTo(d)  # a Python int spacing is differentiable like a float

        @kit.zero_guard((NoTangent(), NoTangent(), ZeroTangent()))
        def freq_pullback(y_bar: Any) -> tuple:
            return NoTangent(), NoTangent(), project_d(-np.vdot(y, np.asarray(y_bar)).real / d)

        return y, freq_pullback

    def freq_frule(dargs: tuple, n: int, *args: Any, **kwargs: Any) -> Any:
        y = f(n, *args, **kwargs)
        d_dot = kit.dense_tangent(dargs[2], args[0], zeros=False) if args else None
        if d_dot is None:
            return y, ZeroTangent()
        return y, y * (-d_dot / args[0])

    kit.define_rules(f, frule_fn=freq_frule, rrule_fn=freq_rrule)
