"""The derivations of the matrix factorizations, shared by ``numpy.linalg``'s and
``scipy.linalg``'s rules: ``pinv`` (Golub-Pereyra), ``qr``, ``svd``, ``eigh``, ``eig``
(tangent and cotangent of each) and the norms (``norm_rules`` registers a norm function's
rules). The conventions (gauges, degenerate spectra) are written down in
``chainrules.rules.numpy.linalg``. Not a rule module: it registers only what its callers
ask for.

Example: the derivative of the eigenvalues of a symmetric matrix along ``A_dot``.

>>> import numpy as np
>>> w, v = np.linalg.eigh(np.diag([1.0, 2.0]))
>>> eigh_tangent(w, v, np.array([[0.5, 1.0], [1.0, -1.0]]), "L")[0]
array([ 0.5, -1. ])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.core import NoTangent, ProjectTo, ZeroTangent
from chainrules.rules import _kit as kit
from chainrules.rules import _linalg_kernel as kernel
from chainrules.rules.array_api.decompositions import finite_svd

# ---------------------------------------------------------------------------------- pinv


def pinv_tangent(a: np.ndarray, y: np.ndarray, a_dot: np.ndarray) -> np.ndarray:
    """Golub-Pereyra: derivative of the pseudo-inverse at constant rank."""
    m, n = a.shape[-2:]
    proj_rows = np.eye(m, dtype=y.dtype) - a @ y  # I - A A+
    proj_cols = np.eye(n, dtype=y.dtype) - y @ a  # I - A+ A
    a_dot_h = kernel.H(a_dot)
    return (-(y @ a_dot @ y) + (y @ kernel.H(y)) @ a_dot_h @ proj_rows
            + proj_cols @ a_dot_h @ (kernel.H(y) @ y))


def pinv_cotangent(a: np.ndarray, y: np.ndarray, y_bar: np.ndarray) -> np.ndarray:
    m, n = a.shape[-2:]
    y_h = kernel.H(y)
    y_bar_h = kernel.H(y_bar)
    proj_rows = np.eye(m, dtype=y.dtype) - a @ y
    proj_cols = np.eye(n, dtype=y.dtype) - y @ a
    return (-(y_h @ y_bar @ y_h) + proj_rows @ y_bar_h @ (y @ y_h)
            + (y_h @ y) @ y_bar_h @ proj_cols)


# ------------------------------------------------------------------------------------ qr


def qr_square_tangent(q: np.ndarray, r: np.ndarray, a_dot: np.ndarray) -> tuple:
    """(dQ, dR) of A = QR, m >= n, R with a real diagonal (LAPACK's gauge)."""
    x = kernel.tri_solve(r, a_dot, lower=False, side="right")  # dA R^-1
    c = kernel.H(q) @ x
    low = np.tril(c, -1)
    omega = low - kernel.H(low)
    if omega.dtype.kind == "c":
        omega = omega + kernel.diag_embed(1j * kernel.diag(c).imag)
    r_dot = (c - omega) @ r
    q_dot = q @ (omega - c) + x
    return q_dot, r_dot


def qr_square_cotangent(q: np.ndarray, r: np.ndarray, q_bar: Any, r_bar: Any) -> np.ndarray:
    """Adjoint of `qr_square_tangent`."""
    m = 0
    if r_bar is not None:
        m = r_bar @ kernel.H(r)
    if q_bar is not None:
        m = m - kernel.H(q) @ q_bar
    m = np.asarray(m)
    # M - Omega^*(M): upper triangle of M with a real diagonal, mirrored below
    k = (
        np.triu(m, 1)
        + kernel.H(np.triu(m, 1))
        + kernel.diag_embed(kernel.diag(m).real.astype(m.dtype))
    )
    x_bar = q @ k
    if q_bar is not None:
        x_bar = x_bar + q_bar
    return kernel.tri_solve(r, x_bar, lower=False, trans=2, side="right")  # X_bar R^-H


def _qr_completion(q: np.ndarray, n: int) -> np.ndarray:
    """``Z^H = (Q_nn - I)^-H Q_pn^H`` of a complete Householder ``Q`` (m x m, m > n):
    the derivative of its last m - n columns is a function of that of its first n."""
    q_nn_minus_i = q[..., :n, :n] - np.eye(n, dtype=q.dtype)
    return np.linalg.solve(kernel.H(q_nn_minus_i), kernel.H(q[..., n:, :n]))


def qr_complete_tangent(q: np.ndarray, r: np.ndarray, a_dot: np.ndarray) -> tuple:
    """(dQ, dR) of ``qr(mode="complete")`` of a tall matrix (m > n). The last m - n
    columns of ``Q`` are not a function of ``A`` alone; LAPACK's (Householder) choice is,
    and this is its derivative (JAX's convention, arXiv:2409.13374, eqs. 32-33)."""
    m, n = a_dot.shape[-2:]
    if n == 0:  # no reflector: Q = I whatever A is
        return np.zeros(q.shape, dtype=q.dtype), np.zeros(r.shape, dtype=r.dtype)
    q_mn, q_mp = q[..., :, :n], q[..., :, n:]
    dq_mn, dr_nn = qr_square_tangent(q_mn, r[..., :n, :], a_dot)
    z_h = _qr_completion(q, n)
    z = kernel.H(z_h)
    s_dq = dq_mn[..., n:, :] - z @ dq_mn[..., :n, :]
    dq_mp = dq_mn @ z_h - (q_mn + q_mp @ z) @ kernel.H(s_dq)
    dr = np.concatenate([dr_nn, np.zeros((*dr_nn.shape[:-2], m - n, n), dr_nn.dtype)], -2)
    return np.concatenate([dq_mn, dq_mp], axis=-1), dr


def qr_complete_cotangent(q: np.ndarray, r: np.ndarray, q_bar: Any, r_bar: Any) -> np.ndarray:
    """Adjoint of `qr_complete_tangent`."""
    n = r.shape[-1]
    if n == 0:
        return np.zeros((*q.shape[:-1], 0), dtype=q.dtype)
    q_mn, q_mp = q[..., :, :n], q[..., :, n:]
    r_nn_bar = None if r_bar is None else r_bar[..., :n, :]
    q_mn_bar = None
    if q_bar is not None:
        z_h = _qr_completion(q, n)
        z = kernel.H(z_h)
        g = q_bar[..., :, n:]
        # dQ_mp = dQ_mn Z^H - C (S dQ_mn)^H with C = Q_mn + Q_mp Z, S = [-Z I]
        x = kernel.H(g) @ (q_mn + q_mp @ z)
        s_h_x = np.concatenate([-(z_h @ x), x], axis=-2)
        q_mn_bar = q_bar[..., :, :n] + g @ z - s_h_x
    return qr_square_cotangent(q_mn, r[..., :n, :], q_mn_bar, r_nn_bar)


def qr_tangent(q: np.ndarray, r: np.ndarray, a: np.ndarray, a_dot: np.ndarray) -> tuple:
    m, n = a.shape[-2:]
    if m > n and q.shape[-1] == m:
        return qr_complete_tangent(q, r, a_dot)
    if m >= n:
        return qr_square_tangent(q, r, a_dot)
    q_dot, r1_dot = qr_square_tangent(q, r[..., :, :m], a_dot[..., :, :m])
    r2_dot = kernel.H(q_dot) @ a[..., :, m:] + kernel.H(q) @ a_dot[..., :, m:]
    return q_dot, np.concatenate([r1_dot, r2_dot], axis=-1)


def qr_cotangent(q: np.ndarray, r: np.ndarray, a: np.ndarray, q_bar: Any,
                  r_bar: Any) -> np.ndarray:
    m, n = a.shape[-2:]
    if m > n and q.shape[-1] == m:
        return qr_complete_cotangent(q, r, q_bar, r_bar)
    if m >= n:
        return qr_square_cotangent(q, r, q_bar, r_bar)
    y = a[..., :, m:]
    r1_bar = None if r_bar is None else r_bar[..., :, :m]
    y_bar = np.zeros(y.shape, dtype=q.dtype)
    if r_bar is not None:
        r2_bar = r_bar[..., :, m:]
        y_bar = q @ r2_bar
        extra = y @ kernel.H(r2_bar)
        q_bar = extra if q_bar is None else q_bar + extra
    x_bar = qr_square_cotangent(q, r[..., :, :m], q_bar, r1_bar)
    return np.concatenate([x_bar, y_bar], axis=-1)


def qr_defined(a: np.ndarray, mode: str) -> str | None:
    if mode == "raw":
        return "qr(mode='raw') returns Householder reflectors; their derivative is not written"
    return None


# ----------------------------------------------------------------------------------- svd


def svd_gaps(s: np.ndarray) -> np.ndarray:
    s2 = s * s
    return kernel.inv_gaps(s2[..., None, :] - s2[..., :, None], kernel.max_abs(s2), s.dtype)


def svd_tangent(u: np.ndarray, s: np.ndarray, vh: np.ndarray, a_dot: np.ndarray) -> tuple:
    """(dU, ds, dVh) of the thin SVD; complex phases split evenly between U and V."""
    v = kernel.H(vh)
    p = kernel.H(u) @ a_dot @ v
    s_dot = kernel.diag(p).real
    f = svd_gaps(s)
    sm = s[..., None, :]  # right-multiplication by S
    sc = s[..., :, None]  # left-multiplication by S
    ph = kernel.H(p)
    omega_u = f * (p * sm + sc * ph)
    omega_v = f * (sc * p + ph * sm)
    if p.dtype.kind == "c":
        half = kernel.diag_embed(1j * kernel.diag(p).imag / (2 * s))
        omega_u = omega_u + half
        omega_v = omega_v - half
    inv_s = 1 / s[..., None, :]
    u_dot = u @ omega_u + (a_dot @ v - u @ p) * inv_s
    v_dot = v @ omega_v + (kernel.H(a_dot) @ u - v @ ph) * inv_s
    return u_dot, s_dot, kernel.H(v_dot)


def svd_cotangent(u: np.ndarray, s: np.ndarray, vh: np.ndarray, u_bar: Any, s_bar: Any,
                   vh_bar: Any) -> np.ndarray:
    v = kernel.H(vh)
    sm = s[..., None, :]
    sc = s[..., :, None]
    core = np.zeros(u.shape[:-2] + (s.shape[-1],) * 2, dtype=u.dtype)
    if s_bar is not None:
        core = core + kernel.diag_embed(np.real(s_bar).astype(s.dtype))
    out = 0
    if u_bar is not None or vh_bar is not None:
        f = svd_gaps(s)
        inv_s = 1 / sm
        if u_bar is not None:
            g = kernel.H(u) @ u_bar
            core = core + (f * (g - kernel.H(g))) * sm
            if g.dtype.kind == "c":
                core = core + kernel.diag_embed(1j * kernel.diag(g).imag / (2 * s))
            out = out + ((u_bar - u @ g) * inv_s) @ vh
        if vh_bar is not None:
            v_bar = kernel.H(vh_bar)
            k = kernel.H(v) @ v_bar
            core = core + sc * (f * (k - kernel.H(k)))
            if k.dtype.kind == "c":
                core = core - kernel.diag_embed(1j * kernel.diag(k).imag / (2 * s))
            out = out + u @ kernel.H((v_bar - v @ k) * inv_s)
    return u @ core @ vh + out


def svd_reason(a: np.ndarray, opts: dict) -> str | None:
    m, n = a.shape[-2:]
    if opts["compute_uv"] and opts["full_matrices"] and m != n:
        return ("svd(full_matrices=True) of a non-square matrix: the extra singular "
                "vectors span the complement of the range and are not a function of A; "
                "use full_matrices=False")
    return None


# ---------------------------------------------------------------------------------- eigh


def eigh_gaps(w: np.ndarray) -> np.ndarray:
    return kernel.inv_gaps(w[..., None, :] - w[..., :, None], kernel.max_abs(w), w.dtype)


def eigh_tangent(w: np.ndarray, v: np.ndarray, a_dot: np.ndarray, uplo: str) -> tuple:
    """(dw, dV) of ``eigh`` (gauge ``diag(V^H dV) = 0``)."""
    m = kernel.H(v) @ kernel.her_input(a_dot, uplo) @ v
    return kernel.diag(m).real, v @ (eigh_gaps(w) * m)


def eigh_cotangent(w: np.ndarray, v: np.ndarray, w_bar: Any, v_bar: Any,
                    uplo: str) -> np.ndarray:
    core = np.zeros(v.shape, dtype=v.dtype)
    if w_bar is not None:
        core = core + kernel.diag_embed(np.real(w_bar).astype(w.dtype))
    if v_bar is not None:
        core = core + eigh_gaps(w) * (kernel.H(v) @ v_bar)
    return kernel.her_cotangent(v @ core @ kernel.H(v), uplo)


# ----------------------------------------------------------------------------------- eig


def eig_gaps(w: np.ndarray) -> np.ndarray:
    return kernel.inv_gaps(w[..., None, :] - w[..., :, None], kernel.max_abs(w), w.real.dtype)


def largest(v: np.ndarray) -> tuple:
    """Row of each column's largest component (NumPy makes it real) and its value."""
    k = np.argmax(np.abs(v), axis=-2)[..., None, :]
    return k, np.take_along_axis(v, k, axis=-2)[..., 0, :].real


def eig_tangent(w: np.ndarray, v: np.ndarray, a_dot: np.ndarray) -> tuple:
    m = np.linalg.solve(v, a_dot @ v)  # V^-1 dA V
    w_dot = kernel.diag(m)
    x = v @ (eig_gaps(w) * m)
    # unit 2-norm and NumPy's "largest component real" gauge
    re = -kernel.rdot(v, x, axis=-2)
    dv = x + v * re[..., None, :]
    if np.iscomplexobj(dv):
        k, vk = largest(v)
        im = -np.take_along_axis(dv, k, axis=-2)[..., 0, :].imag / vk
        dv = dv + v * (1j * im)[..., None, :]
    return w_dot, dv


def eig_cotangent(w: np.ndarray, v: np.ndarray, w_bar: Any, v_bar: Any) -> np.ndarray:
    core = np.zeros(v.shape, dtype=np.result_type(v, w))
    if w_bar is not None:
        core = core + kernel.diag_embed(np.asarray(w_bar, dtype=core.dtype))
    if v_bar is not None:
        rho = kernel.rdot(v, v_bar, axis=-2)
        x_bar = v_bar - v * rho[..., None, :]
        if np.iscomplexobj(x_bar) or np.iscomplexobj(v):
            x_bar = x_bar.astype(np.result_type(x_bar, np.complex64))
            tau = np.sum(np.conj(v_bar) * v, axis=-2).imag
            k, vk = largest(v)
            col = np.take_along_axis(x_bar, k, axis=-2) + (1j * tau / vk)[..., None, :]
            # row k of each column replaced by col, with where (differentiable again)
            rows = np.arange(x_bar.shape[-2])[:, None] == k
            x_bar = np.where(rows, col, x_bar)
        core = core + np.conj(eig_gaps(w)) * (kernel.H(v) @ x_bar)
    return np.linalg.solve(kernel.H(v), core @ kernel.H(v))


def eig_matching(a: np.ndarray, y: np.ndarray) -> tuple:
    """Eigenvectors ordered like ``eigvals(a)`` (a separate LAPACK call)."""
    w, v = np.linalg.eig(a)
    order = np.argmin(np.abs(y[..., :, None] - w[..., None, :]), axis=-1)
    return (np.take_along_axis(w, order, axis=-1),
            np.take_along_axis(v, order[..., None, :], axis=-1))


# --------------------------------------------------------------------------------- norms


def sgn(x: np.ndarray) -> np.ndarray:
    """x / |x| (0 where x == 0)."""
    ax = np.abs(x)
    # no out=/where=, so the expression can itself be differentiated (Hessians)
    nz = ax != 0
    return np.where(nz, x / np.where(nz, ax, 1), 0)


def norm_axes(x: np.ndarray, ord: Any, axis: Any) -> tuple:
    """('vector' | 'matrix', axes) as NumPy's ``norm`` reads them."""
    nd = x.ndim
    if axis is None:
        if ord is None or nd == 1:
            return "vector", tuple(range(nd))
        return "matrix", (0, 1)
    if isinstance(axis, (int, np.integer)):
        return "vector", (int(axis) % nd,)
    axis = tuple(int(ax) % nd for ax in axis)
    return ("vector" if len(axis) == 1 else "matrix"), axis


def vector_norm_grad(x: np.ndarray, yk: np.ndarray, ord: Any, axes: tuple) -> Any:
    """d||x|| / dx (keepdims layout); None where the norm is locally constant."""
    if ord is None or ord == 2:
        # no out=/where=, so the expression can itself be differentiated (Hessians)
        nz = yk != 0
        return np.where(nz, x / np.where(nz, yk, 1), 0)
    if ord == 0:
        return None
    ax = np.abs(x)
    if ord == 1:
        return sgn(x)
    if ord in (np.inf, -np.inf):
        mask = ax == yk
        count = np.sum(mask, axis=axes, keepdims=True)
        return sgn(x) * mask / count
    p = float(ord)
    # (|x| / ||x||)^(p-1) sgn(x), 0 where x == 0 or ||x|| == 0; no out=/where=, so the
    # expression can itself be differentiated (Hessians)
    nz = (ax != 0) & (yk != 0)
    scale = np.where(nz, ax / np.where(yk != 0, yk, 1), 1)
    return np.where(nz, sgn(x) * scale ** (p - 1), 0)


def matrix_norm_grad(x: np.ndarray, ord: Any, axes: tuple) -> Any:
    r, c = axes
    if x.size == 0:
        return np.zeros(x.shape, dtype=x.dtype)  # (max/min over no columns would raise)
    if ord in (None, "fro"):
        yk = np.sqrt(np.sum(np.abs(x) ** 2, axis=axes, keepdims=True))
        return vector_norm_grad(x, yk, None, axes)
    if ord in ("nuc", 2, -2):
        xm = np.moveaxis(x, (r, c), (-2, -1))
        u, s, vh = finite_svd(np, xm)
        if ord == "nuc":
            w = np.ones_like(s)
        else:
            # ties of the largest (smallest) singular value share the cotangent equally,
            # as in JAX and PyTorch; no writes into w, so the rule differentiates again
            best = (np.max if ord == 2 else np.min)(s, axis=-1, keepdims=True)
            hit = (s == best).astype(s.dtype)
            w = hit / np.sum(hit, axis=-1, keepdims=True)
        g = (u * w[..., None, :]) @ vh
        return np.moveaxis(g, (-2, -1), (r, c))
    # 1 / -1: max / min over columns of column sums; inf / -inf: over rows
    sum_axis, pick_axis = (r, c) if ord in (1, -1) else (c, r)
    sums = np.sum(np.abs(x), axis=sum_axis, keepdims=True)
    best = (np.max if ord in (1, np.inf) else np.min)(sums, axis=pick_axis, keepdims=True)
    mask = sums == best
    return sgn(x) * (mask / np.sum(mask, axis=pick_axis, keepdims=True))


def norm_grad(x: np.ndarray, y: Any, ord: Any, axis: Any, keepdims: bool,
               vector: bool = False) -> tuple:
    """(gradient in x's layout, the reduced axes) for ``norm(x, ord, axis)``;
    ``vector``: a vector norm over all of ``axis`` (``vector_norm``)."""
    if vector:
        axes = tuple(int(ax) % x.ndim for ax in axis)
        kind = "vector"
    else:
        kind, axes = norm_axes(x, ord, axis)
    if kind == "vector":
        yk = np.asarray(y) if keepdims else np.expand_dims(np.asarray(y), axes)
        return vector_norm_grad(x, yk, ord, axes), axes
    return matrix_norm_grad(x, ord, axes), axes


def norm_rules(f: Any, names: tuple) -> None:
    """Register frule and rrule of a norm function ``f(x, *names)``."""

    def read(x: np.ndarray, args: tuple, kwargs: dict) -> tuple:
        o = kernel.options(args, kwargs, *names)
        if f is np.linalg.vector_norm:
            axis = o["axis"] if o["axis"] is not None else tuple(range(np.ndim(x)))
            return o["ord"], (axis,) if np.isscalar(axis) else axis, o["keepdims"]
        if f is np.linalg.matrix_norm:
            return o["ord"], (-2, -1), o["keepdims"]
        return o["ord"], o["axis"], o["keepdims"]

    vector = f is np.linalg.vector_norm

    def norm_frule(dargs, x, *args, **kwargs):
        x_dot = kit.nonzero(dargs[1])
        y = f(x, *args, **kwargs)
        if x_dot is None:
            return y, ZeroTangent()
        ord, axis, keepdims = read(x, args, kwargs)
        g, axes = norm_grad(kernel.as_float(x), y, ord, axis, keepdims, vector)
        if g is None:
            return y, ZeroTangent()
        return y, ProjectTo(y)(kernel.rdot(g, x_dot, axis=axes, keepdims=keepdims))

    def norm_rrule(x, *args, **kwargs):
        y = f(x, *args, **kwargs)
        project_x = ProjectTo(x)

        @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
        def norm_pullback(y_bar):
            ord, axis, keepdims = read(x, args, kwargs)
            g, axes = norm_grad(kernel.as_float(x), y, ord, axis, keepdims, vector)
            if g is None:
                return NoTangent(), ZeroTangent(), *kernel.nots(args)
            y_bar = np.real(np.asarray(y_bar))
            if not keepdims:
                y_bar = np.expand_dims(y_bar, axes)
            return NoTangent(), project_x(y_bar * g), *kernel.nots(args)

        return y, norm_pullback

    kit.define_rules(f, frule_fn=norm_frule, rrule_fn=norm_rrule)
