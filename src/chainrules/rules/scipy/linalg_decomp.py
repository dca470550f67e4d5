"""Rules for the ``scipy.linalg`` twins of ``numpy.linalg``: ``svd``, ``svdvals``, ``qr``,
``eig``, ``eigvals``, ``eigvalsh``, ``pinv``, ``norm``, and for ``expm_frechet``.

Each computes its primal with SciPy and its derivatives with the helpers of the NumPy
rules (``rules/_linalg_derivatives.py``), so the two stay one implementation with the
same conventions and gauges (SciPy's ``eig`` returns LAPACK's eigenvectors, like NumPy's:
unit norm, largest component real). ``eigvalsh`` is ``eigh(eigvals_only=True)`` in SciPy
and uses its rule. Not covered (``not_implemented``, with the reason): ``svd`` with
``full_matrices=True`` of a non-square matrix (as in NumPy), ``qr(mode="raw")``,
``eig``/``eigvals`` with ``b`` (generalized),
``left=True`` or ``homogeneous_eigvals=True``. ``qr(pivoting=True)`` is differentiated at
the fixed column permutation; ``qr(mode="full")`` of a tall matrix as NumPy's
``mode="complete"`` (the derivative of LAPACK's Householder completion, JAX's convention).

``expm_frechet(A, E)`` returns ``expm(A)`` and its Fréchet derivative ``L(A, E)``; both are
blocks of ``expm([[A, E], [0, A]])``, so their tangents are blocks of one more Fréchet
derivative of ``expm`` at that block matrix, and the pullback is the same at its adjoint.

>>> import numpy as np
>>> import scipy.linalg as sla
>>> from chainrules import rrule
>>> y, svdvals_pullback = rrule(sla.svdvals, np.diag([3.0, 2.0]))
>>> svdvals_pullback(np.array([1.0, 0.0]))[1]
array([[1., 0.],
       [0., 0.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, ZeroTangent, frule, not_implemented, rrule
from chainrules.rules import _kit as kit
from chainrules.rules import _linalg_derivatives as deriv
from chainrules.rules import _linalg_kernel as kernel

# ------------------------------------------------------------------------ svd, svdvals

_SVD = (("full_matrices", True), ("compute_uv", True), ("overwrite_a", False),
        ("check_finite", True), ("lapack_driver", "gesdd"))


def _thin_svd(a: Any) -> tuple:
    return sla.svd(a, full_matrices=False)


@frule.register(sla.svd)
def svd_frule(dargs, a, *args, **kwargs):
    opts = kernel.options(args, kwargs, *_SVD)
    y = sla.svd(a, *args, **kwargs)
    a_dot = kit.nonzero(dargs[1])
    if a_dot is None:
        return y, ZeroTangent()
    a, a_dot = np.asarray(a), np.asarray(a_dot)
    if not opts["compute_uv"]:
        u, _, vh = _thin_svd(a)
        return y, ProjectTo(y)(kernel.diag(kernel.H(u) @ a_dot @ kernel.H(vh)).real)
    reason = deriv.svd_reason(a, opts)
    if reason:
        return y, not_implemented(reason)
    u, s, vh = y
    u_dot, s_dot, vh_dot = deriv.svd_tangent(u, s, vh, a_dot)
    return y, core.Tangent[tuple](ProjectTo(u)(u_dot), ProjectTo(s)(s_dot), ProjectTo(vh)(vh_dot))


@rrule.register(sla.svd)
def svd_rrule(a, *args, **kwargs):
    opts = kernel.options(args, kwargs, *_SVD)
    y = sla.svd(a, *args, **kwargs)
    project_a = ProjectTo(a)
    reason = deriv.svd_reason(np.asarray(a), opts)
    u, s, vh = y if opts["compute_uv"] and not reason else _thin_svd(a)

    def svd_pullback(y_bar):
        if opts["compute_uv"]:
            u_bar, s_bar, vh_bar = (kernel.item(y_bar, i) for i in range(3))
        else:
            u_bar, s_bar, vh_bar = None, kit.nonzero(y_bar), None
        if u_bar is None and s_bar is None and vh_bar is None:
            return NoTangent(), ZeroTangent(), *kernel.nots(args)
        if reason and (u_bar is not None or vh_bar is not None):
            return NoTangent(), not_implemented(reason), *kernel.nots(args)
        a_bar = deriv.svd_cotangent(u, s, vh, None if u_bar is None else np.asarray(u_bar), s_bar,
                               None if vh_bar is None else np.asarray(vh_bar))
        return NoTangent(), project_a(a_bar), *kernel.nots(args)

    return y, svd_pullback


@frule.register(sla.svdvals)
def svdvals_frule(dargs, a, *args, **kwargs):
    y = sla.svdvals(a, *args, **kwargs)
    a_dot = kit.nonzero(dargs[1])
    if a_dot is None:
        return y, ZeroTangent()
    u, _, vh = _thin_svd(a)
    return y, ProjectTo(y)(kernel.diag(kernel.H(u) @ np.asarray(a_dot) @ kernel.H(vh)).real)


@rrule.register(sla.svdvals)
def svdvals_rrule(a, *args, **kwargs):
    y = sla.svdvals(a, *args, **kwargs)
    u, s, vh = _thin_svd(a)
    project_a = ProjectTo(a)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
    def svdvals_pullback(y_bar):
        return NoTangent(), project_a(deriv.svd_cotangent(u, s, vh, None, y_bar, None)), \
            *kernel.nots(args)

    return y, svdvals_pullback


# ------------------------------------------------------------------------ qr

_QR = (("overwrite_a", False), ("lwork", None), ("mode", "full"), ("pivoting", False),
       ("check_finite", True))
_QR_MODES = {"full": "complete", "economic": "reduced", "r": "r", "raw": "raw"}


def _qr_parts(a: Any, args: tuple, kwargs: dict) -> tuple:
    """(y, Q, R, column permutation or None, reason or None) of SciPy's ``qr`` call."""
    opts = kernel.options(args, kwargs, *_QR)
    y = sla.qr(a, *args, **kwargs)
    a = np.asarray(a)
    # mode="r" returns the m x n R of mode="full"; its extra rows are zero whatever A is
    reason = None if opts["mode"] == "r" else deriv.qr_defined(a, _QR_MODES[opts["mode"]])
    if reason or opts["mode"] in ("r", "raw"):
        economic = sla.qr(a, mode="economic", pivoting=opts["pivoting"])
    else:
        economic = y
    perm = economic[2] if opts["pivoting"] else None
    return y, economic[0], economic[1], perm, reason, opts


@frule.register(sla.qr)
def qr_frule(dargs, a, *args, **kwargs):
    y, q, r, perm, reason, opts = _qr_parts(a, args, kwargs)
    a_dot = kit.nonzero(dargs[1])
    if a_dot is None:
        return y, ZeroTangent()
    if reason:
        return y, not_implemented(reason)
    a, a_dot = np.asarray(a), np.asarray(a_dot)
    if perm is not None:  # A P = Q R at the fixed permutation P
        a, a_dot = a[:, perm], a_dot[:, perm]
    q_dot, r_dot = deriv.qr_tangent(q, r, a, a_dot)
    if opts["mode"] == "r":
        # R's tangent above zero rows (stacked, not written into zeros: run on values of
        # an outer trace this stays differentiable)
        below = np.zeros((y[0].shape[0] - r_dot.shape[0], y[0].shape[1]), dtype=r_dot.dtype)
        dots: tuple = (ProjectTo(y[0])(np.concatenate([r_dot, below])),)
    else:
        dots = (ProjectTo(y[0])(q_dot), ProjectTo(y[1])(r_dot))
    return y, core.Tangent[tuple](*dots, *((NoTangent(),) if perm is not None else ()))


@rrule.register(sla.qr)
def qr_rrule(a, *args, **kwargs):
    y, q, r, perm, reason, opts = _qr_parts(a, args, kwargs)
    project_a = ProjectTo(a)

    def qr_pullback(y_bar):
        if opts["mode"] == "r":
            q_bar, r_bar = None, kernel.item(y_bar, 0)
            r_bar = None if r_bar is None else np.asarray(r_bar)[:r.shape[0]]
        else:
            q_bar, r_bar = kernel.item(y_bar, 0), kernel.item(y_bar, 1)
        if q_bar is None and r_bar is None:
            return NoTangent(), ZeroTangent(), *kernel.nots(args)
        if reason:
            return NoTangent(), not_implemented(reason), *kernel.nots(args)
        a_arr = np.asarray(a)
        a_p = a_arr if perm is None else a_arr[:, perm]
        g = deriv.qr_cotangent(q, r, a_p, None if q_bar is None else np.asarray(q_bar),
                          None if r_bar is None else np.asarray(r_bar))
        if perm is not None:  # columns back in A's order, by the inverse permutation
            g = g[:, np.argsort(perm)]
        return NoTangent(), project_a(g), *kernel.nots(args)

    return y, qr_pullback


# ------------------------------------------------------------------------ eig, eigvals

_EIG = (("b", None), ("left", False), ("right", True), ("overwrite_a", False),
        ("overwrite_b", False), ("check_finite", True), ("homogeneous_eigvals", False))


def _eig_reason(opts: dict) -> str | None:
    if opts["b"] is not None:
        return "the generalized eigenproblem (b given) has no rule yet"
    if opts["left"] or not opts["right"] or opts["homogeneous_eigvals"]:
        return ("eig with left=True, right=False or homogeneous_eigvals=True has no rule; "
                "use the default outputs (w, vr)")
    return None


@frule.register(sla.eig)
def eig_frule(dargs, a, *args, **kwargs):
    opts = kernel.options(args, kwargs, *_EIG)
    y = sla.eig(a, *args, **kwargs)
    a_dot = kit.nonzero(dargs[1])
    if a_dot is None and (opts["b"] is None or kit.nonzero(dargs[2]) is None):
        return y, ZeroTangent()
    reason = _eig_reason(opts)
    if reason:
        return y, not_implemented(reason)
    w, v = y
    w_dot, v_dot = deriv.eig_tangent(w, v, np.asarray(a_dot))
    return y, core.Tangent[tuple](ProjectTo(w)(w_dot), ProjectTo(v)(v_dot))


@rrule.register(sla.eig)
def eig_rrule(a, *args, **kwargs):
    opts = kernel.options(args, kwargs, *_EIG)
    y = sla.eig(a, *args, **kwargs)
    reason = _eig_reason(opts)
    project_a = ProjectTo(a)

    def eig_pullback(y_bar):
        w_bar, v_bar = kernel.item(y_bar, 0), kernel.item(y_bar, 1)
        if w_bar is None and v_bar is None:
            return NoTangent(), ZeroTangent(), *kernel.nots(args)
        if reason:
            return NoTangent(), not_implemented(reason), *kernel.nots(args)
        w, v = y
        return NoTangent(), project_a(deriv.eig_cotangent(w, v, w_bar, v_bar)), *kernel.nots(args)

    return y, eig_pullback


_EIGVALS = (("b", None), ("overwrite_a", False), ("check_finite", True),
            ("homogeneous_eigvals", False))


def _eigvals_reason(opts: dict) -> str | None:
    return _eig_reason({**opts, "left": False, "right": True})


@frule.register(sla.eigvals)
def eigvals_frule(dargs, a, *args, **kwargs):
    opts = kernel.options(args, kwargs, *_EIGVALS)
    y = sla.eigvals(a, *args, **kwargs)
    a_dot = kit.nonzero(dargs[1])
    if a_dot is None and (opts["b"] is None or kit.nonzero(dargs[2]) is None):
        return y, ZeroTangent()
    reason = _eigvals_reason(opts)
    if reason:
        return y, not_implemented(reason)
    _, v = deriv.eig_matching(np.asarray(a), y)
    return y, ProjectTo(y)(kernel.diag(np.linalg.solve(v, np.asarray(a_dot) @ v)))


@rrule.register(sla.eigvals)
def eigvals_rrule(a, *args, **kwargs):
    opts = kernel.options(args, kwargs, *_EIGVALS)
    y = sla.eigvals(a, *args, **kwargs)
    reason = _eigvals_reason(opts)
    w, v = (None, None) if reason else deriv.eig_matching(np.asarray(a), y)
    if not reason:  # NumPy's eig is real for real eigenvalues; SciPy's eigvals never is
        w, v = w.astype(y.dtype), v.astype(np.result_type(v, y))
    project_a = ProjectTo(a)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
    def eigvals_pullback(y_bar):
        if reason:
            return NoTangent(), not_implemented(reason), *kernel.nots(args)
        return NoTangent(), project_a(deriv.eig_cotangent(w, v, y_bar, None)), *kernel.nots(args)

    return y, eigvals_pullback


# ------------------------------------------------------------------------ eigvalsh


@frule.register(sla.eigvalsh)
def eigvalsh_frule(dargs, a, *args, **kwargs):
    return kit.delegate(frule, sla.eigh, (dargs,), (a, *args), {**kwargs, "eigvals_only": True})


@rrule.register(sla.eigvalsh)
def eigvalsh_rrule(a, *args, **kwargs):
    return kit.delegate(rrule, sla.eigh, (), (a, *args), {**kwargs, "eigvals_only": True})


# ------------------------------------------------------------------------ pinv, norm


def _pinv_rank(kwargs: dict) -> bool:
    return bool(kwargs.get("return_rank", False))


@frule.register(sla.pinv)
def pinv_frule(dargs, a, **kwargs):
    out = sla.pinv(a, **kwargs)
    a_dot = kit.nonzero(dargs[1])
    if a_dot is None:
        return out, ZeroTangent()
    y = out[0] if _pinv_rank(kwargs) else out
    y_dot = ProjectTo(y)(deriv.pinv_tangent(np.asarray(a), y, np.asarray(a_dot)))
    return out, core.Tangent[tuple](y_dot, NoTangent()) if _pinv_rank(kwargs) else y_dot


@rrule.register(sla.pinv)
def pinv_rrule(a, **kwargs):
    out = sla.pinv(a, **kwargs)
    y = out[0] if _pinv_rank(kwargs) else out
    project_a = ProjectTo(a)

    def pinv_pullback(y_bar):
        y_bar = kernel.item(y_bar, 0) if _pinv_rank(kwargs) else kit.nonzero(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent()
        return NoTangent(), project_a(deriv.pinv_cotangent(np.asarray(a), y, np.asarray(y_bar)))

    return out, pinv_pullback


deriv.norm_rules(sla.norm, (("ord", None), ("axis", None), ("keepdims", False),
                       ("check_finite", True)))


# ------------------------------------------------------------------------ expm_frechet


def _block(a: np.ndarray, e: np.ndarray, diagonal: bool = True) -> np.ndarray:
    """``[[A, E], [0, A]]``, or ``[[A, E], [0, 0]]`` when not ``diagonal``."""
    z = np.zeros(a.shape, dtype=np.result_type(a, e))
    return np.block([[a, e], [z, a if diagonal else z]])


@frule.register(sla.expm_frechet)
def expm_frechet_frule(dargs, a, e, *args, **kwargs):
    y = sla.expm_frechet(a, e, *args, **kwargs)
    a_dot, e_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
    if a_dot is None and e_dot is None:
        return y, ZeroTangent()
    a, e = np.asarray(a), np.asarray(e)
    n = a.shape[-1]
    dtype = np.result_type(a, e, 1.0)
    a_dot = np.zeros(a.shape, dtype) if a_dot is None else np.asarray(a_dot)
    e_dot = np.zeros(e.shape, dtype) if e_dot is None else np.asarray(e_dot)
    big = sla.expm_frechet(_block(a, e), _block(a_dot, e_dot), compute_expm=False)
    expm_dot, frechet_dot = big[:n, :n], big[:n, n:]
    compute_expm = kernel.options(args, kwargs, ("method", None), ("compute_expm", True),
                            ("check_finite", True))["compute_expm"]
    if not compute_expm:
        return y, ProjectTo(y)(frechet_dot)
    return y, core.Tangent[tuple](ProjectTo(y[0])(expm_dot), ProjectTo(y[1])(frechet_dot))


@rrule.register(sla.expm_frechet)
def expm_frechet_rrule(a, e, *args, **kwargs):
    y = sla.expm_frechet(a, e, *args, **kwargs)
    compute_expm = kernel.options(args, kwargs, ("method", None), ("compute_expm", True),
                            ("check_finite", True))["compute_expm"]
    project_a, project_e = ProjectTo(a), ProjectTo(e)

    def expm_frechet_pullback(y_bar):
        if compute_expm:
            expm_bar, frechet_bar = kernel.item(y_bar, 0), kernel.item(y_bar, 1)
        else:
            expm_bar, frechet_bar = None, kit.nonzero(y_bar)
        if expm_bar is None and frechet_bar is None:
            return NoTangent(), ZeroTangent(), ZeroTangent(), *kernel.nots(args)
        a_arr, e_arr = np.asarray(a), np.asarray(e)
        n = a_arr.shape[-1]
        dtype = np.result_type(a_arr, e_arr, 1.0)
        top_left = np.zeros((n, n), dtype) if expm_bar is None else np.asarray(expm_bar)
        top_right = np.zeros((n, n), dtype) if frechet_bar is None else np.asarray(frechet_bar)
        # adjoint of the Frechet derivative of expm at X is the one at X^H
        g = sla.expm_frechet(
            kernel.H(_block(a_arr, e_arr)),
            _block(top_left, top_right, diagonal=False),
            compute_expm=False,
        )
        a_bar = g[:n, :n] + g[n:, n:]
        return NoTangent(), project_a(a_bar), project_e(g[:n, n:]), *kernel.nots(args)

    return y, expm_frechet_pullback
