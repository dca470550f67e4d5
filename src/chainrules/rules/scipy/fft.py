"""Rules for ``scipy.fft``.

The twins of ``numpy.fft`` (``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``,
``ihfft``, ``fft2``, ``ifft2``, ``fftn``, ``ifftn``, ``rfft2``, ``irfft2``,
``rfftn``, ``irfftn``, ``fftshift``, ``ifftshift``, ``fftfreq``, ``rfftfreq``)
use the same rule builders (``rules/numpy/_fft.py``); SciPy adds ``hfft2``,
``ihfft2``, ``hfftn`` and ``ihfftn`` (``hfftn(x) = irfftn(conj(x))`` and
``ihfftn(x) = conj(rfftn(x))`` with swapped norms). ``workers`` is passed on;
``overwrite_x=True`` is accepted and not exercised (SciPy is called with
``overwrite_x=False``, which gives the same values): rules never destroy the
caller's input or tangent. ``plan`` is refused by SciPy itself.

The real trigonometric transforms ``dct``, ``idct``, ``dst``, ``idst`` and their
n-D forms ``dctn``, ``idctn``, ``dstn``, ``idstn`` are covered for every ``type``
(1-4), ``norm`` and ``orthogonalize``, with ``n`` / ``s`` and ``axis`` / ``axes``.
Each variant is ``A = s * diag(L) @ B_t @ diag(R)``: the unnormalised
(``norm="backward"``, not orthogonalised) transform ``B_t`` of the same type, a
scalar ``s`` from the norm (``1/K`` for ``"forward"``, ``1/sqrt(K)`` for
``"ortho"``, with ``K = 2N``, ``2(N-1)`` for DCT-I and ``2(N+1)`` for DST-I) and
the end-point factors ``L``, ``R`` of ``orthogonalize`` (``sqrt(2)`` on the first
and/or last entries). The transpose of ``B_t`` is a weighted transform of the
transposed type: ``B_1^T = diag(w) B_1 diag(1/w)`` (DCT-I: ``w`` is 1 at both ends,
2 inside), ``B_2^T = B_3 diag(e)`` (``e`` doubles the first entry for the DCT, the
last for the DST), ``B_3^T = diag(1/e) B_2``, and ``B_4`` and DST-I are symmetric.
So the pullback of ``dct`` is one ``dct`` of the transposed type between two
diagonal scalings; ``idct`` is ``A^-1``, whose adjoint ``(A^T)^-1`` is one
``idct`` of the transposed type. Complex inputs: the matrices are real, so the
same adjoint applies to complex cotangents. SciPy ignores a non-default
``orthogonalize`` for complex inputs, so that combination raises
`UnsupportedOptionError` rather than differentiate a transform SciPy does not compute.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.fft as sf

from chainrules.core import non_differentiable
from chainrules.rules.numpy import _fft
from chainrules.rules.numpy._fft import along, cook_1d, cook_nd, resize
from chainrules.rules.scipy._errors import UnsupportedOptionError

# ----------------------------------------------------- the numpy.fft twins

for _f, _adjoint, _cook in (
    (sf.fft, _fft.fft_adjoint, _fft.cook_1d),
    (sf.ifft, _fft.ifft_adjoint, _fft.cook_1d),
    (sf.rfft, _fft.rfft_adjoint, _fft.cook_1d),
    (sf.irfft, _fft.irfft_adjoint, _fft.cook_1d_inverse_real),
    (sf.hfft, _fft.hfft_adjoint, _fft.cook_1d_inverse_real),
    (sf.ihfft, _fft.ihfft_adjoint, _fft.cook_1d),
    (sf.fft2, _fft.fftn_adjoint, _fft.cook_nd),
    (sf.ifft2, _fft.ifftn_adjoint, _fft.cook_nd),
    (sf.fftn, _fft.fftn_adjoint, _fft.cook_nd),
    (sf.ifftn, _fft.ifftn_adjoint, _fft.cook_nd),
    (sf.rfft2, _fft.rfftn_adjoint, _fft.cook_nd),
    (sf.irfft2, _fft.irfftn_adjoint, _fft.cook_nd_inverse_real),
    (sf.rfftn, _fft.rfftn_adjoint, _fft.cook_nd),
    (sf.irfftn, _fft.irfftn_adjoint, _fft.cook_nd_inverse_real),
    (sf.hfft2, _fft.hfftn_adjoint, _fft.cook_nd_inverse_real),
    (sf.hfftn, _fft.hfftn_adjoint, _fft.cook_nd_inverse_real),
    (sf.ihfft2, _fft.ihfftn_adjoint, _fft.cook_nd),
    (sf.ihfftn, _fft.ihfftn_adjoint, _fft.cook_nd),
):
    _fft.transform_rules(_f, _adjoint, _cook)

_fft.shift_rules(sf.fftshift, sf.ifftshift)
_fft.shift_rules(sf.ifftshift, sf.fftshift)
_fft.freq_rules(sf.fftfreq)
_fft.freq_rules(sf.rfftfreq)
for _f in (sf.next_fast_len, sf.prev_fast_len, sf.fhtoffset):
    non_differentiable(_f)

# ------------------------------------------- DCT / DST: the pieces of A


def _scale(kind: str, t: int, n: int, norm: str) -> float:
    if norm == "backward":
        return 1.0
    k = 2 * (n - 1) if (kind, t) == ("dct", 1) else 2 * (n + 1) if (kind, t) == ("dst", 1) \
        else 2 * n
    return 1.0 / k if norm == "forward" else 1.0 / math.sqrt(k)


def _ends(n: int, kind: str, first: float, last: float) -> np.ndarray:
    """Ones, with ``first`` / ``last`` at the end the DCT / DST uses."""
    v = np.ones(n)
    v[0 if kind == "dct" else -1] = first if kind == "dct" else last
    return v


def _orthogonal_ends(kind: str, t: int, n: int, orthogonalize: bool) -> tuple:
    """``(L, R)``: the factors ``orthogonalize`` puts on the output and the input."""
    one = np.ones(n)
    if not orthogonalize:
        return one, one
    r2 = math.sqrt(2.0)
    if (kind, t) == ("dct", 1):
        lo, ro = one.copy(), one.copy()
        lo[0] = lo[-1] = 1 / r2
        ro[0] = ro[-1] = r2
        return lo, ro
    if t == 2:
        return _ends(n, kind, 1 / r2, 1 / r2), one
    if t == 3:
        return one, _ends(n, kind, r2, r2)
    return one, one


def _transposed(kind: str, t: int, n: int) -> tuple:
    """``(D, E, t')`` with ``B_t^T = diag(D) @ B_t' @ diag(E)``."""
    one = np.ones(n)
    if (kind, t) == ("dct", 1):
        w = np.full(n, 2.0)
        w[0] = w[-1] = 1.0
        return w, 1 / w, 1
    if t == 2:
        return one, _ends(n, kind, 2.0, 2.0), 3
    if t == 3:
        return _ends(n, kind, 0.5, 0.5), one, 2
    return one, one, t


def _trig_adjoint(kind: str, inverse: bool) -> Any:
    forward_f = getattr(sf, kind)
    inverse_f = getattr(sf, "i" + kind)

    def adjoint_1d(y_bar: np.ndarray, m: int, n: int, axis: int, t: int, norm: str,
                   orthogonalize: bool) -> np.ndarray:
        s = _scale(kind, t, n, norm)
        lo, ro = _orthogonal_ends(kind, t, n, orthogonalize)
        d, e, t_prime = _transposed(kind, t, n)
        nd = y_bar.ndim
        if inverse:  # (A^T)^-1 = (1/s) L^-1 E^-1 B_t'^-1 D^-1 R^-1
            z = inverse_f(y_bar * along(1 / (d * ro), axis, nd), type=t_prime, axis=axis)
            z = z * along(1 / (s * lo * e), axis, nd)
        else:  # A^T = s R D B_t' E L
            z = forward_f(y_bar * along(e * lo, axis, nd), type=t_prime, axis=axis)
            z = z * along(s * ro * d, axis, nd)
        return resize(z, axis, m)

    return adjoint_1d


def _trig_options(params: dict) -> tuple:
    norm = _fft._norm(params.get("norm"))
    orthogonalize = params.get("orthogonalize")
    if orthogonalize is None:
        orthogonalize = norm == "ortho"
    return params.get("type", 2), norm, bool(orthogonalize)


def _check_trig(f: Any, x: Any, params: dict) -> None:
    orthogonalize = params.get("orthogonalize")
    if orthogonalize is None or not np.iscomplexobj(x):
        return
    if bool(orthogonalize) != (_fft._norm(params.get("norm")) == "ortho"):
        # SciPy 1.17 ignores a non-default orthogonalize for complex inputs (it applies
        # the norm's default instead), so the documented transform is not what it computes
        raise UnsupportedOptionError(
            f, "orthogonalize", orthogonalize,
            "SciPy does not apply a non-default orthogonalize to complex inputs",
            "Transform the real and imaginary parts separately, or leave orthogonalize "
            "at its default")


def _cook_trig_1d(f: Any, x: np.ndarray, params: dict) -> tuple:
    return (*cook_1d(f, x, params)[:3], *_trig_options(params))


def _cook_trig_nd(f: Any, x: np.ndarray, params: dict) -> tuple:
    shape, s, axes, _ = cook_nd(f, x, params)
    return (shape, s, axes, *_trig_options(params))


def _nd_adjoint(adjoint_1d: Any) -> Any:
    def adjoint_nd(y_bar: np.ndarray, shape: tuple, s: list, axes: list, t: int, norm: str,
                   orthogonalize: bool) -> np.ndarray:
        # the 1-D transforms act on distinct axes and commute, and so do their adjoints
        for a, n in zip(axes, s):
            y_bar = adjoint_1d(y_bar, shape[a], n, a, t, norm, orthogonalize)
        return y_bar

    return adjoint_nd


for _kind in ("dct", "dst"):
    for _inverse in (False, True):
        _name = ("i" if _inverse else "") + _kind
        _adjoint_1d = _trig_adjoint(_kind, _inverse)
        _fft.transform_rules(getattr(sf, _name), _adjoint_1d, _cook_trig_1d, _check_trig)
        _fft.transform_rules(getattr(sf, _name + "n"), _nd_adjoint(_adjoint_1d), _cook_trig_nd,
                             _check_trig)
