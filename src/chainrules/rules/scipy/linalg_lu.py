"""Rules for the LU factorization of ``scipy.linalg``: ``lu``, ``lu_factor`` and
``lu_solve`` (conventions as in ``chainrules.rules.scipy.linalg``).

``lu``/``lu_factor`` of an m x n matrix (and stacks): ``P^T A = L U`` with ``L`` m x k
(unit diagonal) and ``U`` k x n, ``k = min(m, n)``; the first k rows (tall) or columns
(wide) are a square LU, the rest is ``L2 = A2 U^-1`` or ``U2 = L^-1 A2`` (PyTorch's
``linalg.lu`` derivative, which the oracle tests compare with). The permutation is held
fixed (piecewise constant), and ``lu_factor``'s ``lu`` packs the strict lower part of
``L`` and ``U``; ``piv`` gets ``NoTangent``. ``lu_solve`` is differentiated w.r.t. the
factors too. The factors of an empty matrix are constants (derivative zero).

>>> import numpy as np
>>> import scipy.linalg as sla
>>> from chainrules import frule, NoTangent
>>> a = np.array([[4.0, 1.0], [2.0, 3.0], [1.0, 1.0]])
>>> (p, low, up), (_, low_dot, up_dot) = frule((NoTangent(), np.eye(3, 2)), sla.lu, a)
>>> float(up_dot[1, 1])  # u22 = a22 - a21 a12 / a11
1.125
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, Thunk, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit
from chainrules.rules import _linalg_kernel as kernel
from chainrules.rules.scipy.linalg import _op, _trans_code


def _perm(piv: np.ndarray, m: int | None = None) -> np.ndarray:
    """Row order ``p`` with ``A[p] = L U`` from LAPACK's pivot indices (``m`` rows; a
    stack of pivots gives a stack of orders)."""
    piv = np.asarray(piv)
    rows: int = piv.shape[-1] if m is None else m
    out = np.empty((*piv.shape[:-1], rows), dtype=np.intp)
    for index in np.ndindex(piv.shape[:-1]):
        p = np.arange(rows)
        for i, j in enumerate(piv[index]):
            p[i], p[j] = p[j], p[i]
        out[index] = p
    return out


# ------------------------------------------------------------------------------------ lu


def _unpack(lu: np.ndarray) -> tuple:
    """(L, U) packed in ``lu_factor``'s m x n ``lu``: L is m x k with a unit diagonal, U is
    k x n, k = min(m, n)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    low = np.tril(lu, -1)[..., :, :k] + np.eye(m, k, dtype=lu.dtype)
    return low, np.triu(lu)[..., :k, :]


def _pack(l_dot: np.ndarray, u_dot: np.ndarray) -> np.ndarray:
    """``lu_factor``'s packing of (dL, dU): dL's strict lower part, dU on and above the
    diagonal (stacked, not written into an array: differentiable again)."""
    m, k = l_dot.shape[-2:]
    n = u_dot.shape[-1]
    low = np.tril(l_dot, -1)
    if n > k:
        low = np.concatenate([low, np.zeros((*low.shape[:-1], n - k), low.dtype)], -1)
    if m > k:
        u_dot = np.concatenate([u_dot, np.zeros((*u_dot.shape[:-2], m - k, n), u_dot.dtype)],
                               -2)
    return low + u_dot


def _right_solve_upper(up: np.ndarray, b: np.ndarray, adjoint: bool = False) -> np.ndarray:
    """``B U^-1`` (``B U^-H`` with ``adjoint``), ``U`` upper triangular."""
    return kernel.tri_solve(up, b, lower=False, trans=2 if adjoint else 0, side="right")


def _lu_square_tangent(low: np.ndarray, up: np.ndarray, pa_dot: np.ndarray) -> tuple:
    x = kernel.tri_solve(low, pa_dot, lower=True, unit=True)
    x = _right_solve_upper(up, x)  # L^-1 d(P^T A) U^-1
    return low @ np.tril(x, -1), np.triu(x) @ up


def _lu_tangent(low: np.ndarray, up: np.ndarray, pa_dot: np.ndarray) -> tuple:
    """(dL, dU) of P^T A = L U given d(P^T A); A m x n, L m x k, U k x n. Tall: the
    first k rows are a square LU and L2 = A2 U^-1; wide: the first k columns are, and
    U2 = L^-1 A2 (PyTorch's derivation)."""
    m, n = pa_dot.shape[-2:]
    k = min(m, n)
    l1, u1 = low[..., :k, :], up[..., :, :k]
    l_dot, u_dot = _lu_square_tangent(l1, u1, pa_dot[..., :k, :k])
    if m > k:  # dL2 = (dA2 - L2 dU) U^-1
        l2_dot = _right_solve_upper(u1, pa_dot[..., k:, :] - low[..., k:, :] @ u_dot)
        l_dot = np.concatenate([l_dot, l2_dot], axis=-2)
    if n > k:  # dU2 = L^-1 (dA2 - dL U2)
        u2_dot = kernel.tri_solve(l1, pa_dot[..., :, k:] - l_dot @ up[..., :, k:],
                                  lower=True, unit=True)
        u_dot = np.concatenate([u_dot, u2_dot], axis=-1)
    return l_dot, u_dot


def _lu_square_cotangent(low: np.ndarray, up: np.ndarray, l_bar: Any,
                         u_bar: Any) -> np.ndarray:
    x_bar = np.zeros(up.shape, dtype=np.result_type(low, up))
    if l_bar is not None:
        x_bar = x_bar + np.tril(kernel.H(low) @ l_bar, -1)
    if u_bar is not None:
        x_bar = x_bar + np.triu(u_bar @ kernel.H(up))
    x_bar = _right_solve_upper(up, x_bar, adjoint=True)  # X_bar U^-H
    return kernel.tri_solve(low, x_bar, lower=True, trans=2, unit=True)  # L^-H X_bar U^-H


def _lu_cotangent(low: np.ndarray, up: np.ndarray, l_bar: Any, u_bar: Any) -> np.ndarray:
    """Cotangent of P^T A from those of L and U (the adjoint of `_lu_tangent`)."""
    m, n = low.shape[-2], up.shape[-1]
    k = min(m, n)
    l1, u1 = low[..., :k, :], up[..., :, :k]
    dtype = np.result_type(low, up)
    rest = None
    if m > k:
        l2_bar = None if l_bar is None else l_bar[..., k:, :]
        l_bar = None if l_bar is None else l_bar[..., :k, :]
        rest = np.zeros((*low.shape[:-2], m - k, n), dtype)
        if l2_bar is not None:
            rest = _right_solve_upper(u1, l2_bar, adjoint=True)  # A2_bar = L2_bar U^-H
            extra = -(kernel.H(low[..., k:, :]) @ rest)
            u_bar = extra if u_bar is None else u_bar + extra
    if n > k:
        u2_bar = None if u_bar is None else u_bar[..., :, k:]
        u_bar = None if u_bar is None else u_bar[..., :, :k]
        rest = np.zeros((*low.shape[:-2], m, n - k), dtype)
        if u2_bar is not None:
            rest = kernel.tri_solve(l1, u2_bar, lower=True, trans=2, unit=True)  # L^-H U2_bar
            extra = -(rest @ kernel.H(up[..., :, k:]))
            l_bar = extra if l_bar is None else l_bar + extra
    first = _lu_square_cotangent(l1, u1, l_bar, u_bar)
    if rest is None:
        return first
    return np.concatenate([first, rest.astype(first.dtype)], axis=-2 if m > k else -1)


def _rows_back(pa: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """``A`` from ``A[perm]`` (a stack: per matrix), gathered by the inverse permutation
    (not written into an array: run on values of an outer trace this stays
    differentiable)."""
    inverse = np.argsort(perm, axis=-1)
    if inverse.ndim == 1:
        return pa[inverse]
    return np.take_along_axis(pa, inverse[..., :, None], axis=-2)


def _rows_forward(a: np.ndarray, perm: np.ndarray) -> np.ndarray:
    if perm.ndim == 1:
        return a[perm]
    return np.take_along_axis(a, perm[..., :, None], axis=-2)


@frule.register(sla.lu_factor)
def lu_factor_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    y = sla.lu_factor(a, *args, **kwargs)
    if a_dot is None or np.size(a) == 0:  # SciPy's factors of an empty matrix: constants
        return y, ZeroTangent()
    lu, piv = y
    low, up = _unpack(lu)
    pa_dot = _rows_forward(np.asarray(a_dot), _perm(piv, lu.shape[-2]))
    l_dot, u_dot = _lu_tangent(low, up, pa_dot)
    return y, core.Tangent[tuple](ProjectTo(lu)(_pack(l_dot, u_dot)), NoTangent())


@rrule.register(sla.lu_factor)
def lu_factor_rrule(a, *args, **kwargs):
    y = sla.lu_factor(a, *args, **kwargs)
    lu, piv = y
    project_a = ProjectTo(a)

    def lu_factor_pullback(y_bar):
        lu_bar = kernel.item(y_bar, 0)
        if lu_bar is None or np.size(a) == 0:
            return NoTangent(), ZeroTangent(), *kernel.nots(args)
        low, up = _unpack(lu)
        k = min(lu.shape[-2:])
        lu_bar = np.asarray(lu_bar)
        pa_bar = _lu_cotangent(low, up, np.tril(lu_bar, -1)[..., :, :k],
                               np.triu(lu_bar)[..., :k, :])
        a_bar = _rows_back(pa_bar, _perm(piv, lu.shape[-2]))
        return NoTangent(), project_a(a_bar), *kernel.nots(args)

    return y, lu_factor_pullback


def _lu_solve_trans(args: tuple, kwargs: dict) -> int:
    return _trans_code(kernel.options(args, kwargs, ("trans", 0))["trans"])


@frule.register(sla.lu_solve)
def lu_solve_frule(dargs, lu_and_piv, b, *args, **kwargs):
    y = sla.lu_solve(lu_and_piv, b, *args, **kwargs)
    lu_dot = kernel.item(dargs[1], 0)
    b_dot = kit.nonzero(dargs[2])
    if lu_dot is None and b_dot is None:
        return y, ZeroTangent()
    lu, piv = lu_and_piv
    trans = _lu_solve_trans(args, kwargs)
    ym, vec = kernel.col(y)
    rhs = 0
    if b_dot is not None:
        rhs = kernel.col(b_dot)[0]
    if lu_dot is not None:
        low, up = _unpack(lu)
        pa_dot = np.tril(lu_dot, -1) @ up + low @ np.triu(lu_dot)
        a_dot = np.empty_like(pa_dot)
        a_dot[_perm(piv)] = pa_dot
        rhs = rhs - _op(a_dot, trans) @ ym
    y_dot = sla.lu_solve((lu, piv), np.asarray(rhs), trans=trans, check_finite=False)
    return y, ProjectTo(y)(y_dot[..., 0] if vec else y_dot)


@rrule.register(sla.lu_solve)
def lu_solve_rrule(lu_and_piv, b, *args, **kwargs):
    y = sla.lu_solve(lu_and_piv, b, *args, **kwargs)
    lu, piv = lu_and_piv
    trans = _lu_solve_trans(args, kwargs)
    project_lu, project_b = ProjectTo(lu), ProjectTo(b)
    ym, vec = kernel.col(y)

    def lu_cotangent(g: np.ndarray) -> Any:
        a_bar = _op(-kernel.outer_h(g, ym), trans)
        pa_bar = a_bar[_perm(piv)]
        low, up = _unpack(lu)
        lu_bar = np.tril(pa_bar @ kernel.H(up), -1) + np.triu(kernel.H(low) @ pa_bar)
        return core.Tangent[tuple](project_lu(lu_bar), NoTangent())

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), ZeroTangent(), *kernel.nots(args)))
    def lu_solve_pullback(y_bar):
        yb = kernel.col(y_bar)[0]
        # g = op(A)^-H y_bar with the same factors
        if trans == 1:
            g = np.conj(sla.lu_solve((lu, piv), np.conj(yb), trans=0, check_finite=False))
        else:
            g = sla.lu_solve((lu, piv), yb, trans=2 - trans, check_finite=False)
        return (NoTangent(), Thunk(lambda: lu_cotangent(g)),
                project_b(g[..., 0] if vec else g), *kernel.nots(args))

    return y, lu_solve_pullback


def _lu_opts(args: tuple, kwargs: dict) -> tuple:
    o = kernel.options(args, kwargs, ("permute_l", False), ("overwrite_a", False),
                 ("check_finite", True), ("p_indices", False))
    return bool(o["permute_l"]), bool(o["p_indices"])


def _lu_parts(a: np.ndarray, y: tuple, permute_l: bool, p_indices: bool) -> tuple:
    """(P, L, U) whatever form ``lu`` returned."""
    if permute_l or p_indices:
        return sla.lu(a)
    return y


@frule.register(sla.lu)
def lu_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    y: Any = sla.lu(a, *args, **kwargs)
    if a_dot is None or np.size(a) == 0:  # SciPy's factors of an empty matrix: constants
        return y, ZeroTangent()
    permute_l, p_indices = _lu_opts(args, kwargs)
    p, low, up = _lu_parts(a, y, permute_l, p_indices)
    l_dot, u_dot = _lu_tangent(low, up, kernel.T(p) @ a_dot)
    if permute_l:
        return y, core.Tangent[tuple](ProjectTo(y[0])(p @ l_dot), ProjectTo(y[1])(u_dot))
    p_dot = NoTangent() if p_indices else ZeroTangent()
    return y, core.Tangent[tuple](p_dot, ProjectTo(y[1])(l_dot), ProjectTo(y[2])(u_dot))


@rrule.register(sla.lu)
def lu_rrule(a, *args, **kwargs):
    y = sla.lu(a, *args, **kwargs)
    permute_l, p_indices = _lu_opts(args, kwargs)
    project_a = ProjectTo(a)

    def lu_pullback(y_bar):
        if permute_l:
            pl_bar, u_bar = kernel.item(y_bar, 0), kernel.item(y_bar, 1)
            l_bar = None
        else:
            l_bar, u_bar = kernel.item(y_bar, 1), kernel.item(y_bar, 2)
            pl_bar = None
        if (l_bar is None and u_bar is None and pl_bar is None) or np.size(a) == 0:
            return NoTangent(), ZeroTangent(), *kernel.nots(args)
        p, low, up = _lu_parts(a, y, permute_l, p_indices)
        if pl_bar is not None:
            l_bar = kernel.T(p) @ pl_bar
        return NoTangent(), project_a(p @ _lu_cotangent(low, up, l_bar, u_bar)), *kernel.nots(args)

    return y, lu_pullback
