"""Rules for the banded solvers of ``scipy.linalg``: ``solve_banded`` and ``solveh_banded``.

``x = A^-1 b`` as for ``solve``: ``dx = A^-1 (db - dA x)``, ``b_bar = A^-H x_bar`` and
``A_bar = -b_bar x^H``, kept in band storage throughout (``O(n (l + u))`` memory, one more
banded solve with the conjugate transpose). Entries of ``ab`` that are not in the matrix
(the corners of the band storage) get zero cotangents. ``solveh_banded`` reads the upper
(or ``lower=True``: lower) triangle of a Hermitian matrix: the mirrored entries' cotangents
are added to the stored ones, and the imaginary part of the diagonal, which LAPACK
ignores, gets zero.

>>> import numpy as np
>>> import scipy.linalg as sla
>>> from chainrules import rrule
>>> ab = np.array([[0.0, 1.0], [2.0, 2.0]])  # A = [[2, 1], [0, 2]], l = 0, u = 1
>>> x, solve_banded_pullback = rrule(sla.solve_banded, (0, 1), ab, np.array([3.0, 2.0]))
>>> solve_banded_pullback(np.array([1.0, 0.0]))[3]  # b_bar = A^-T x_bar
array([ 0.5 , -0.25])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from chainrules.core import NoTangent, ProjectTo, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit
from chainrules.rules import _linalg_kernel as kernel


def _band_rows(l: int, u: int, n: int):
    """``(k, j, i)`` for each stored diagonal: ``ab[k, j] = A[i, j]`` on valid ``j``."""
    for k in range(l + u + 1):
        shift = k - u
        j = np.arange(max(0, -shift), min(n, n - shift))
        yield k, j, j + shift


# The helpers below build their results from padded pieces, summed or stacked, not by
# writes into arrays of zeros: run on values of an outer trace (a second derivative),
# they stay differentiable.


def _placed(v: np.ndarray, start: int, n: int) -> np.ndarray:
    """``v`` as rows ``start, start + 1, ...`` of ``n`` rows, zeros elsewhere."""
    return np.pad(v, [(start, n - start - v.shape[0])] + [(0, 0)] * (v.ndim - 1))


def _band_matmul(l: int, u: int, ab: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``A @ x`` for ``A`` in band storage and a matrix ``x``."""
    dtype = np.result_type(ab, x)
    out = np.zeros(x.shape, dtype=dtype)
    for k, j, i in _band_rows(l, u, ab.shape[1]):
        if j.size:
            out = out + _placed(ab[k, j][:, None] * x[j], int(i[0]), x.shape[0])
    return out.astype(dtype, copy=False)


def _band_adjoint(l: int, u: int, ab: np.ndarray) -> np.ndarray:
    """Band storage (bandwidths ``(u, l)``) of ``A^H``."""
    n = ab.shape[1]
    rows = [np.zeros(n, dtype=ab.dtype)] * ab.shape[0]
    for k, j, i in _band_rows(l, u, n):
        if j.size:
            # A^H[j, i] = conj(A[i, j]), stored at row l + j - i of column i
            rows[l + u - k] = _placed(np.conj(ab[k, j]), int(i[0]), n)
    return np.stack(rows).astype(ab.dtype, copy=False)


def _band_outer(l: int, u: int, g: np.ndarray, x: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The band entries of ``g @ x^H``."""
    n = like.shape[1]
    dtype = np.result_type(g, x, like)
    rows = [np.zeros(n, dtype=dtype)] * like.shape[0]
    for k, j, i in _band_rows(l, u, n):
        if j.size:
            rows[k] = _placed(np.sum(g[i] * np.conj(x[j]), axis=-1), int(j[0]), n)
    return np.stack(rows).astype(dtype, copy=False)


def _solve_banded_parts(l_and_u: Any, ab: Any, b: Any, args: tuple, kwargs: dict) -> tuple:
    y = sla.solve_banded(l_and_u, ab, b, *args, **kwargs)
    l, u = (int(v) for v in l_and_u)
    return y, l, u, np.asarray(ab)


def _solve_banded_tangent(l: int, u: int, ab: np.ndarray, x: np.ndarray, ab_dot: Any,
                          b_dot: Any) -> np.ndarray:
    xm, vec = kernel.col(x)
    rhs = 0 if b_dot is None else kernel.col(b_dot)[0]
    if ab_dot is not None:
        rhs = rhs - _band_matmul(l, u, np.asarray(ab_dot), xm)
    x_dot = sla.solve_banded((l, u), ab, np.asarray(rhs, dtype=np.result_type(ab, xm)))
    return x_dot[:, 0] if vec else x_dot


def _solve_banded_cotangent(l: int, u: int, ab: np.ndarray, x: np.ndarray,
                            x_bar: Any) -> tuple:
    xm, vec = kernel.col(x)
    g = sla.solve_banded((u, l), _band_adjoint(l, u, ab), kernel.col(x_bar)[0])
    ab_bar = -_band_outer(l, u, g, xm, ab)
    return ab_bar, (g[:, 0] if vec else g)


@frule.register(sla.solve_banded)
def solve_banded_frule(dargs, l_and_u, ab, b, *args, **kwargs):
    y, l, u, ab_arr = _solve_banded_parts(l_and_u, ab, b, args, kwargs)
    ab_dot, b_dot = kit.nonzero(dargs[2]), kit.nonzero(dargs[3])
    if ab_dot is None and b_dot is None:
        return y, ZeroTangent()
    return y, ProjectTo(y)(_solve_banded_tangent(l, u, ab_arr, y, ab_dot, b_dot))


@rrule.register(sla.solve_banded)
def solve_banded_rrule(l_and_u, ab, b, *args, **kwargs):
    y, l, u, ab_arr = _solve_banded_parts(l_and_u, ab, b, args, kwargs)
    project_ab, project_b = ProjectTo(ab), ProjectTo(b)

    @kit.zero_guard(
        lambda: (NoTangent(), NoTangent(), ZeroTangent(), ZeroTangent(), *kernel.nots(args))
    )
    def solve_banded_pullback(y_bar):
        ab_bar, b_bar = _solve_banded_cotangent(l, u, ab_arr, y, np.asarray(y_bar))
        return (NoTangent(), NoTangent(), project_ab(ab_bar), project_b(b_bar),
                *kernel.nots(args))

    return y, solve_banded_pullback


# ------------------------------------------------------------------------ solveh_banded


def _lower(args: tuple, kwargs: dict) -> bool:
    return bool(args[2]) if len(args) > 2 else bool(kwargs.get("lower", False))


def _her_full(ab: np.ndarray, lower: bool) -> tuple:
    """General band storage ``(l, u, full)`` of the Hermitian matrix stored in ``ab``."""
    w = ab.shape[0] - 1
    upper = _band_adjoint(w, 0, ab) if lower else ab  # the upper triangle, rows 0..w
    # the lower triangle is the conjugate transpose of the upper one; the diagonal (row
    # w) is real
    lower_rows = _band_adjoint(0, w, upper)
    diagonal = np.real(upper[w])[None].astype(ab.dtype)
    return w, np.concatenate([upper[:w], diagonal, lower_rows[1:]]).astype(ab.dtype,
                                                                            copy=False)


def _her_full_adjoint(w: int, full_bar: np.ndarray, lower: bool) -> np.ndarray:
    """Adjoint of `_her_full`: cotangent of the stored triangle."""
    # _band_adjoint is a real-linear involution up to conjugation: its adjoint is itself
    upper_bar = full_bar[:w + 1] + _band_adjoint(w, 0, full_bar[w:])
    # only the real part of the diagonal is read
    upper_bar = np.concatenate([upper_bar[:w],
                                np.real(full_bar[w])[None].astype(upper_bar.dtype)])
    return _band_adjoint(0, w, upper_bar) if lower else upper_bar


@frule.register(sla.solveh_banded)
def solveh_banded_frule(dargs, ab, b, *args, **kwargs):
    y = sla.solveh_banded(ab, b, *args, **kwargs)
    ab_dot, b_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
    if ab_dot is None and b_dot is None:
        return y, ZeroTangent()
    lower = _lower(args, kwargs)
    w, full = _her_full(np.asarray(ab), lower)
    full_dot = None if ab_dot is None else _her_full(np.asarray(ab_dot), lower)[1]
    return y, ProjectTo(y)(_solve_banded_tangent(w, w, full, y, full_dot, b_dot))


@rrule.register(sla.solveh_banded)
def solveh_banded_rrule(ab, b, *args, **kwargs):
    y = sla.solveh_banded(ab, b, *args, **kwargs)
    lower = _lower(args, kwargs)
    w, full = _her_full(np.asarray(ab), lower)
    project_ab, project_b = ProjectTo(ab), ProjectTo(b)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), ZeroTangent(), *kernel.nots(args)))
    def solveh_banded_pullback(y_bar):
        full_bar, b_bar = _solve_banded_cotangent(w, w, full, y, np.asarray(y_bar))
        return (NoTangent(), project_ab(_her_full_adjoint(w, full_bar, lower)),
                project_b(b_bar), *kernel.nots(args))

    return y, solveh_banded_pullback
