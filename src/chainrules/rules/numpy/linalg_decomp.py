"""Rules for the factorizations of ``numpy.linalg``: ``cholesky``, ``qr``, ``svd``,
``svdvals``, ``eigh``, ``eigvalsh``, ``eig``, ``eigvals`` (conventions, gauges and what is
``not_implemented``: ``chainrules.rules.numpy.linalg``; the derivations:
``rules/_linalg_derivatives.py``).

>>> import numpy as np
>>> from chainrules import rrule
>>> y, eigvalsh_pullback = rrule(np.linalg.eigvalsh, np.diag([1.0, 3.0]))
>>> eigvalsh_pullback(np.array([1.0, 0.0]))[1]
array([[1., 0.],
       [0., 0.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, Tangent, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit
from chainrules.rules import _linalg_derivatives as deriv
from chainrules.rules import _linalg_kernel as kernel
from chainrules.rules.array_api.decompositions import finite_svd

# ------------------------------------------------------------------------------ cholesky


def _phi(x: np.ndarray) -> np.ndarray:
    """Lower triangle with the diagonal halved."""
    return np.tril(x) - 0.5 * kernel.diag_embed(kernel.diag(x))


@frule.register(np.linalg.cholesky)
def cholesky_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    y = np.linalg.cholesky(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    upper = kernel.options(args, kwargs, ("upper", False))["upper"]
    low = kernel.H(y) if upper else y
    m = kernel.her_input(a_dot, "U" if upper else "L")
    # dL = L Phi(L^-1 dA L^-H)
    m = kernel.tri_solve(low, m, lower=True)
    m = kernel.tri_solve(low, m, lower=True, trans=2, side="right")
    low_dot = low @ _phi(m)
    return y, ProjectTo(y)(kernel.H(low_dot) if upper else low_dot)


@rrule.register(np.linalg.cholesky)
def cholesky_rrule(a, *args, **kwargs):
    y = np.linalg.cholesky(a, *args, **kwargs)
    upper = kernel.options(args, kwargs, ("upper", False))["upper"]
    low = kernel.H(y) if upper else y
    project_a = ProjectTo(a)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
    def cholesky_pullback(y_bar):
        low_bar = kernel.H(y_bar) if upper else y_bar
        # S = L^-H Phi(L^H L_bar) L^-1, then onto the triangle that was read
        s = _phi(kernel.H(low) @ low_bar)
        s = kernel.tri_solve(low, s, lower=True, trans=2)
        s = kernel.tri_solve(low, s, lower=True, side="right")
        return (
            NoTangent(),
            project_a(kernel.her_cotangent(s, "U" if upper else "L")),
            *kernel.nots(args),
        )

    return y, cholesky_pullback


# ------------------------------------------------------------------------------------ qr


def _qr_mode(args: tuple, kwargs: dict) -> str:
    return kernel.options(args, kwargs, ("mode", "reduced"))["mode"]


@frule.register(np.linalg.qr)
def qr_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    mode = _qr_mode(args, kwargs)
    y = np.linalg.qr(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    reason = deriv.qr_defined(a, mode)
    if reason:
        return y, core.not_implemented(reason)
    if mode == "r":
        q, r = np.linalg.qr(a)
        return y, ProjectTo(y)(deriv.qr_tangent(q, r, a, a_dot)[1])
    q, r = y
    q_dot, r_dot = deriv.qr_tangent(q, r, a, a_dot)
    return y, Tangent[type(y)](Q=ProjectTo(q)(q_dot), R=ProjectTo(r)(r_dot))


@rrule.register(np.linalg.qr)
def qr_rrule(a, *args, **kwargs):
    mode = _qr_mode(args, kwargs)
    y = np.linalg.qr(a, *args, **kwargs)
    project_a = ProjectTo(a)
    reason = deriv.qr_defined(a, mode)
    if mode == "r":
        q, r = np.linalg.qr(a)
    elif not reason:
        q, r = y

    def qr_pullback(y_bar):
        if mode == "r":
            q_bar, r_bar = None, kit.nonzero(y_bar)
        else:
            q_bar, r_bar = kernel.field(y_bar, "Q", 0), kernel.field(y_bar, "R", 1)
        if q_bar is None and r_bar is None:
            return NoTangent(), ZeroTangent(), *kernel.nots(args)
        if reason:
            return NoTangent(), core.not_implemented(reason), *kernel.nots(args)
        return NoTangent(), project_a(deriv.qr_cotangent(q, r, a, q_bar, r_bar)), *kernel.nots(args)

    return y, qr_pullback


# ----------------------------------------------------------------------------------- svd


def _svd_options(args: tuple, kwargs: dict) -> dict:
    return kernel.options(args, kwargs, ("full_matrices", True), ("compute_uv", True),
                          ("hermitian", False))


class _HermitianSVD:
    """``svd(hermitian=True)`` as NumPy computes it: ``eigh`` (lower triangle), singular
    values ``|w|`` sorted in decreasing order, the signs of ``w`` moved into ``Vh``."""

    def __init__(self, a: np.ndarray) -> None:
        self.w, self.v = np.linalg.eigh(a)
        self.order = np.argsort(np.abs(self.w), axis=-1)[..., ::-1]
        self.sgn = np.take_along_axis(np.sign(self.w), self.order, axis=-1)

    def _sorted(self, x: np.ndarray, columns: bool) -> np.ndarray:
        idx = self.order[..., None, :] if columns else self.order
        return np.take_along_axis(x, idx, axis=-1)

    def _unsorted(self, x: np.ndarray, columns: bool) -> np.ndarray:
        # the inverse permutation, gathered (no put_along_axis: a write into an array
        # would make the rule's code non-differentiable for a second derivative)
        inv = np.argsort(self.order, axis=-1)
        idx = inv[..., None, :] if columns else inv
        return np.take_along_axis(x, np.broadcast_to(idx, x.shape), axis=-1)

    def tangent(self, a_dot: np.ndarray, compute_uv: bool) -> Any:
        w_dot, v_dot = deriv.eigh_tangent(self.w, self.v, a_dot, "L")
        s_dot = self.sgn * self._sorted(w_dot, False)
        if not compute_uv:
            return s_dot
        u_dot = self._sorted(v_dot, True)
        return u_dot, s_dot, kernel.H(u_dot * self.sgn[..., None, :])

    def cotangent(self, u_bar: Any, s_bar: Any, vh_bar: Any) -> np.ndarray:
        w_bar = None if s_bar is None else self._unsorted(np.real(s_bar) * self.sgn, False)
        ub = None
        if u_bar is not None:
            ub = u_bar
        if vh_bar is not None:
            extra = kernel.H(vh_bar) * self.sgn[..., None, :]
            ub = extra if ub is None else ub + extra
        v_bar = None if ub is None else self._unsorted(np.asarray(ub), True)
        return deriv.eigh_cotangent(self.w, self.v, w_bar, v_bar, "L")


@frule.register(np.linalg.svd)
def svd_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    opts = _svd_options(args, kwargs)
    y = np.linalg.svd(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    if opts["hermitian"]:
        t = _HermitianSVD(a).tangent(a_dot, opts["compute_uv"])
        if not opts["compute_uv"]:
            return y, ProjectTo(y)(t)
        return y, Tangent[type(y)](U=ProjectTo(y[0])(t[0]), S=ProjectTo(y[1])(t[1]),
                                   Vh=ProjectTo(y[2])(t[2]))
    if opts["compute_uv"] and deriv.svd_reason(a, opts):
        return y, core.not_implemented(deriv.svd_reason(a, opts))
    if not opts["compute_uv"]:
        u, _, vh = finite_svd(np, a)
        return y, ProjectTo(y)(kernel.diag(kernel.H(u) @ a_dot @ kernel.H(vh)).real)
    u, s, vh = y
    u_dot, s_dot, vh_dot = deriv.svd_tangent(u, s, vh, a_dot)
    return y, Tangent[type(y)](U=ProjectTo(u)(u_dot), S=ProjectTo(s)(s_dot),
                               Vh=ProjectTo(vh)(vh_dot))


@rrule.register(np.linalg.svd)
def svd_rrule(a, *args, **kwargs):
    opts = _svd_options(args, kwargs)
    y = np.linalg.svd(a, *args, **kwargs)
    project_a = ProjectTo(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    if opts["hermitian"]:
        herm = _HermitianSVD(a)
    elif opts["compute_uv"]:
        u, s, vh = y[0][..., :, :k], y[1], y[2][..., :k, :]
    else:
        u, s, vh = finite_svd(np, a)

    def svd_pullback(y_bar):
        if not opts["compute_uv"]:
            u_bar, s_bar, vh_bar = None, kit.nonzero(y_bar), None
        else:
            u_bar, s_bar = kernel.field(y_bar, "U", 0), kernel.field(y_bar, "S", 1)
            vh_bar = kernel.field(y_bar, "Vh", 2)
        if u_bar is None and s_bar is None and vh_bar is None:
            return NoTangent(), ZeroTangent(), *kernel.nots(args)
        if opts["hermitian"]:
            return NoTangent(), project_a(herm.cotangent(u_bar, s_bar, vh_bar)), *kernel.nots(args)
        # full_matrices=True of a non-square matrix: the extra columns of U (rows of Vh)
        # are not a function of A; their cotangent is taken as zero, as PyTorch does
        if u_bar is not None and u_bar.shape[-1] > k:
            u_bar = u_bar[..., :, :k]
        if vh_bar is not None and vh_bar.shape[-2] > k:
            vh_bar = vh_bar[..., :k, :]
        return NoTangent(), project_a(deriv.svd_cotangent(u, s, vh, u_bar, s_bar, vh_bar)), \
            *kernel.nots(args)

    return y, svd_pullback


@frule.register(np.linalg.svdvals)
def svdvals_frule(dargs, a):
    a_dot = kit.nonzero(dargs[1])
    y = np.linalg.svdvals(a)
    if a_dot is None:
        return y, ZeroTangent()
    u, _, vh = finite_svd(np, a)
    return y, ProjectTo(y)(kernel.diag(kernel.H(u) @ a_dot @ kernel.H(vh)).real)


@rrule.register(np.linalg.svdvals)
def svdvals_rrule(a):
    u, _s, vh = finite_svd(np, a)
    y = np.linalg.svdvals(a)
    project_a = ProjectTo(a)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def svdvals_pullback(y_bar):
        return NoTangent(), project_a((u * np.real(y_bar)[..., None, :]) @ vh)

    return y, svdvals_pullback


# ---------------------------------------------------------------------------------- eigh


def _uplo(args: tuple, kwargs: dict) -> str:
    return kernel.options(args, kwargs, ("UPLO", "L"))["UPLO"]


@frule.register(np.linalg.eigh)
def eigh_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    y = np.linalg.eigh(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    w, v = y
    w_dot, v_dot = deriv.eigh_tangent(w, v, a_dot, _uplo(args, kwargs))
    return y, Tangent[type(y)](eigenvalues=ProjectTo(w)(w_dot),
                               eigenvectors=ProjectTo(v)(v_dot))


@rrule.register(np.linalg.eigh)
def eigh_rrule(a, *args, **kwargs):
    y = np.linalg.eigh(a, *args, **kwargs)
    w, v = y
    uplo = _uplo(args, kwargs)
    project_a = ProjectTo(a)

    def eigh_pullback(y_bar):
        w_bar = kernel.field(y_bar, "eigenvalues", 0)
        v_bar = kernel.field(y_bar, "eigenvectors", 1)
        if w_bar is None and v_bar is None:
            return NoTangent(), ZeroTangent(), *kernel.nots(args)
        return (
            NoTangent(),
            project_a(deriv.eigh_cotangent(w, v, w_bar, v_bar, uplo)),
            *kernel.nots(args),
        )

    return y, eigh_pullback


@frule.register(np.linalg.eigvalsh)
def eigvalsh_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    y = np.linalg.eigvalsh(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    _, v = np.linalg.eigh(a, *args, **kwargs)
    m = kernel.H(v) @ kernel.her_input(a_dot, _uplo(args, kwargs)) @ v
    return y, ProjectTo(y)(kernel.diag(m).real)


@rrule.register(np.linalg.eigvalsh)
def eigvalsh_rrule(a, *args, **kwargs):
    y = np.linalg.eigvalsh(a, *args, **kwargs)
    _, v = np.linalg.eigh(a, *args, **kwargs)
    uplo = _uplo(args, kwargs)
    project_a = ProjectTo(a)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
    def eigvalsh_pullback(y_bar):
        s = (v * np.real(y_bar)[..., None, :]) @ kernel.H(v)
        return NoTangent(), project_a(kernel.her_cotangent(s, uplo)), *kernel.nots(args)

    return y, eigvalsh_pullback


# ----------------------------------------------------------------------------------- eig


@frule.register(np.linalg.eig)
def eig_frule(dargs, a):
    a_dot = kit.nonzero(dargs[1])
    y = np.linalg.eig(a)
    if a_dot is None:
        return y, ZeroTangent()
    w, v = y
    w_dot, v_dot = deriv.eig_tangent(w, v, a_dot)
    return y, Tangent[type(y)](eigenvalues=ProjectTo(w)(w_dot),
                               eigenvectors=ProjectTo(v)(v_dot))


@rrule.register(np.linalg.eig)
def eig_rrule(a):
    y = np.linalg.eig(a)
    w, v = y
    project_a = ProjectTo(a)

    def eig_pullback(y_bar):
        w_bar = kernel.field(y_bar, "eigenvalues", 0)
        v_bar = kernel.field(y_bar, "eigenvectors", 1)
        if w_bar is None and v_bar is None:
            return NoTangent(), ZeroTangent()
        return NoTangent(), project_a(deriv.eig_cotangent(w, v, w_bar, v_bar))

    return y, eig_pullback


@frule.register(np.linalg.eigvals)
def eigvals_frule(dargs, a):
    a_dot = kit.nonzero(dargs[1])
    y = np.linalg.eigvals(a)
    if a_dot is None:
        return y, ZeroTangent()
    _, v = deriv.eig_matching(a, y)
    return y, ProjectTo(y)(kernel.diag(np.linalg.solve(v, a_dot @ v)))


@rrule.register(np.linalg.eigvals)
def eigvals_rrule(a):
    y = np.linalg.eigvals(a)
    w, v = deriv.eig_matching(a, y)
    project_a = ProjectTo(a)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def eigvals_pullback(y_bar):
        return NoTangent(), project_a(deriv.eig_cotangent(w, v, y_bar, None))

    return y, eigvals_pullback
