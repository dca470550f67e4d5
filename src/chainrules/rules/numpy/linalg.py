"""Rules for ``numpy.linalg``: solves, factorizations, decompositions, norms.

Covered (frule and rrule each): ``inv``, ``pinv``, ``solve``, ``lstsq``, ``det``,
``slogdet``, ``cholesky``, ``qr``, ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``,
``eig``, ``eigvals``, ``matrix_power``, ``norm``, ``vector_norm``, ``matrix_norm``,
``cond``, ``multi_dot``, ``tensorsolve``, ``tensorinv``, ``trace``, ``diagonal``,
``outer``, ``cross``, ``matmul``, ``vecdot``, ``matrix_transpose``, ``tensordot``;
``matrix_rank`` is non-differentiable. Stacked (batched) matrices are supported
wherever NumPy accepts them.

Conventions:

- Complex: the cotangent of a real loss ``L`` w.r.t. ``Z`` is
  ``dL/dRe Z + i dL/dIm Z``; the pullback of a linear map is its adjoint under
  ``<X, Y> = Re sum(conj(X) * Y)``.
- Functions that read one triangle (``eigh``/``eigvalsh`` with ``UPLO``,
  ``cholesky``, ``pinv(hermitian=True)``) are differentiated as functions of
  that triangle: the other triangle gets a zero cotangent, and the imaginary
  part of the diagonal (ignored by LAPACK) too.
- ``solve``, ``det``, ``slogdet`` factor the matrix once (LU via SciPy for a
  single matrix when SciPy is installed) and reuse the factors in the
  pullback (adjoint solves cost O(n^2) per right-hand side).
- Degenerate spectra: ``eigh``, ``eig`` and ``svd`` use the matrix
  ``F[i, j] = 1 / (lambda_j - lambda_i)`` (``1 / (s_j^2 - s_i^2)`` for ``svd``);
  pairs closer than ``n * eps * max|lambda|`` get ``F = 0``. The eigenvalue
  (singular value) parts are always finite and exact; the eigenvector parts
  are then those of a loss invariant under rotations inside each degenerate
  eigenspace (the only case where they exist).
- Gauge of eigen- and singular vectors: real vectors are differentiated with
  their sign held fixed (the derivative of NumPy's own output). Complex
  ``eigh``/``svd`` vectors have a free phase per vector that LAPACK fixes in
  no documented way: the frule picks ``Im diag(U^H dU) = 0`` (eigh) and splits
  the phase evenly between ``u_i`` and ``v_i`` (svd); pullbacks are exact for
  every loss invariant under those phases. ``eig`` follows NumPy's
  documented gauge exactly (unit 2-norm, largest component real).
- ``svd(full_matrices=True)`` of a non-square matrix: the extra columns of
  ``U`` (rows of ``Vh``) are not determined by the matrix; their derivative is
  ``not_implemented`` (a pullback whose cotangent ignores them works).
  ``svd(hermitian=True)`` is ``not_implemented``.
- ``qr``: ``mode="reduced"`` and ``"r"`` for any shape, ``"complete"`` where
  it coincides with ``"reduced"`` (``m <= n``); ``"complete"`` with ``m > n``
  (the extra columns of ``Q`` are arbitrary) and ``"raw"`` are
  ``not_implemented``. Needs full rank.
- ``lstsq``, ``pinv``: rank assumed constant near the input (full rank in the
  tests); ``lstsq`` differentiates ``x``, ``residuals`` and ``s``.
- ``svd``/``svdvals``/``cond`` need nonzero singular values where they divide
  by them (the vectors' derivatives, ``cond``); ``det``/``slogdet`` of an
  exactly singular matrix: the value is returned, the derivative is
  ``not_implemented`` (it is the adjugate).
- ``norm``: ``ord`` 0 has derivative zero; at ties (``inf`` norms, matrix
  1/inf norms) the subgradient is averaged over the tied entries.

Example: the pullback of ``det`` reuses the forward LU factors.

>>> import numpy as np
>>> from chainrules import rrule
>>> y, det_pullback = rrule(np.linalg.det, np.array([[2.0, 1.0], [0.0, 3.0]]))
>>> float(y)
6.0
>>> det_pullback(1.0)[1]  # det(A) * inv(A).T
array([[ 3.,  0.],
       [-1.,  2.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.core import (
    NoTangent,
    ProjectTo,
    Tangent,
    Thunk,
    ZeroTangent,
    frule,
    non_differentiable,
    not_implemented,
    rrule,
    unthunk,
)

# ------------------------------------------------------------------------ helpers


def _sla() -> Any:
    """scipy.linalg when installed (it is optional), else None."""
    try:
        import scipy.linalg as sla
    except ImportError:  # pragma: no cover - scipy is an optional extra
        return None
    return sla


def _H(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2).conj()


def _T(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _is_zero(t: Any) -> bool:
    return isinstance(t, (ZeroTangent, NoTangent))


def _value(t: Any) -> Any:
    """Unthunked tangent, or None for a hard zero."""
    t = unthunk(t)
    return None if _is_zero(t) else t


def _field(t: Any, name: str, index: int) -> Any:
    """Field ``name`` (item ``index``) of a structured (co)tangent; None when zero."""
    t = unthunk(t)
    if _is_zero(t):
        return None
    if isinstance(t, Tangent) and hasattr(t.primal_type, "_fields"):
        return _value(getattr(t, name))
    return _value(t[index])


def _nots(args: tuple) -> tuple:
    return tuple(NoTangent() for _ in args)


def _options(args: tuple, kwargs: dict, *spec: tuple[str, Any]) -> dict:
    """Options given positionally (``args``) or by keyword, with defaults."""
    out = {name: default for name, default in spec}
    for (name, _), value in zip(spec, args):
        out[name] = value
    out.update(kwargs)
    return out


def _float(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x if x.dtype.kind in "fc" else x.astype(np.float64)


def _diag_embed(v: np.ndarray) -> np.ndarray:
    n = v.shape[-1]
    return v[..., :, None] * np.eye(n, dtype=v.dtype)


def _diag(x: np.ndarray) -> np.ndarray:
    return np.diagonal(x, axis1=-2, axis2=-1)


def _trace(x: np.ndarray) -> Any:
    return np.trace(x, axis1=-2, axis2=-1)


def _eye_like(a: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)


def _rdot(a: np.ndarray, b: np.ndarray, axis: Any = None, keepdims: bool = False) -> Any:
    """Real inner product ``Re sum(conj(a) * b)``."""
    return np.sum((np.conj(a) * b).real, axis=axis, keepdims=keepdims)


def _her_input(a: np.ndarray, uplo: str) -> np.ndarray:
    """The Hermitian matrix LAPACK sees when it reads triangle ``uplo`` of ``a``."""
    tri = np.tril if uplo.upper() == "L" else np.triu
    k = -1 if uplo.upper() == "L" else 1
    out = tri(a) + _H(tri(a, k))
    if out.dtype.kind == "c":
        d = _diag(out)
        out = out - _diag_embed(1j * d.imag)
    return out


def _her_tangent(a_dot: np.ndarray, uplo: str) -> np.ndarray:
    return _her_input(a_dot, uplo)


def _her_cotangent(s: np.ndarray, uplo: str) -> np.ndarray:
    """Adjoint of ``_her_input``: cotangent on the read triangle from one on the matrix."""
    tri = np.tril if uplo.upper() == "L" else np.triu
    k = -1 if uplo.upper() == "L" else 1
    out = tri(s, k) + tri(_H(s), k)
    d = _diag(s).real
    return out + _diag_embed(d.astype(out.dtype))


def _inv_gaps(gaps: np.ndarray, scale: np.ndarray, dtype: Any) -> np.ndarray:
    """``1 / gaps`` off the diagonal; 0 on it and where the gap is at round-off level."""
    n = gaps.shape[-1]
    eps = np.finfo(np.dtype(dtype)).eps
    tol = n * eps * scale[..., None, None]
    keep = np.abs(gaps) > tol
    keep &= ~np.eye(n, dtype=bool)
    # where, not np.divide(out=, where=): the rule's code stays differentiable (Hessians)
    return np.where(keep, 1 / np.where(keep, gaps, 1), 0)


def _max_abs(v: np.ndarray) -> np.ndarray:
    m = np.max(np.abs(v), axis=-1) if v.shape[-1] else np.zeros(v.shape[:-1])
    return np.maximum(m, np.finfo(np.float64).tiny)


_SlogdetResult = type(np.linalg.slogdet(np.eye(1)))


class _LU:
    """Factorization of a square matrix (stack), solving with ``A`` and ``A^H``.

    A single matrix is LU-factored once with LAPACK (via SciPy, when installed)
    and the factors are reused: each later solve costs O(n^2) per right-hand
    side. A stack falls back to ``np.linalg.solve`` per call. ``strict``:
    raise ``LinAlgError`` for an exactly singular matrix (as ``np.linalg.solve``).
    """

    def __init__(self, a: np.ndarray, strict: bool = True) -> None:
        self.a = a
        self.factors = None
        self.singular = False
        sla = _sla()
        # Factor plain arrays only: the methods' fallbacks (np.linalg.solve, det, inv)
        # have rules themselves, so a rule run again on an AD's traced values (for a
        # second derivative) stays differentiable.
        if type(a) is np.ndarray and a.ndim == 2 and sla is not None and a.shape[0] > 0:
            # LAPACK directly: SciPy's lu_factor/lu_solve wrappers cost more than an
            # O(n^2) solve for n ~ 100
            getrf, self.getrs, self.getri = sla.lapack.get_lapack_funcs(
                ("getrf", "getrs", "getri"), (a,))
            lu, piv, info = getrf(a)
            self.singular = info > 0
            if self.singular and strict:
                raise np.linalg.LinAlgError("Singular matrix")
            self.factors = (lu, piv)

    def slogdet(self) -> Any:
        if self.factors is None:
            return np.linalg.slogdet(self.a)
        lu, piv = self.factors
        d = np.diagonal(lu)
        swaps = np.count_nonzero(piv != np.arange(piv.shape[0]))
        ad = np.abs(d)
        if self.singular:
            sign, logabsdet = d.dtype.type(0), ad.dtype.type(-np.inf)
        else:
            sign = np.prod(d / ad) * (-1 if swaps % 2 else 1)
            logabsdet = np.sum(np.log(ad))
        return _SlogdetResult(sign, logabsdet)

    def solve(self, b: np.ndarray, adjoint: bool = False) -> np.ndarray:
        """``A^-1 b`` (``A^-H b``) for ``b`` of shape ``(..., n, k)``."""
        if self.factors is None or type(b) is not np.ndarray:
            # (a right-hand side that is an AD's traced value, in a second derivative:
            # np.linalg.solve has a rule, LAPACK's getrs would need a plain array)
            return np.linalg.solve(_H(self.a) if adjoint else self.a, b)
        lu = self.factors[0]
        n = self.a.shape[-1]
        batch = b.shape[:-2]
        k = b.shape[-1]
        flat = b if not batch else np.moveaxis(b, -2, 0).reshape(n, -1)
        if np.iscomplexobj(flat) and not np.iscomplexobj(lu):
            # real factors: solve for the real and imaginary parts
            x = self._getrs(flat.real, adjoint) + 1j * self._getrs(flat.imag, adjoint)
        else:
            x = self._getrs(flat, adjoint)
        return self._unflat(x, batch, k)

    def _getrs(self, b: np.ndarray, adjoint: bool) -> np.ndarray:
        lu, piv = self.factors
        x, info = self.getrs(lu, piv, np.asarray(b, dtype=lu.dtype), trans=2 if adjoint else 0)
        if info != 0:  # pragma: no cover - argument errors only
            raise np.linalg.LinAlgError(f"getrs failed (info={info})")
        return x

    def _unflat(self, x: np.ndarray, batch: tuple, k: int) -> np.ndarray:
        if not batch:
            return x
        n = self.a.shape[-1]
        return np.moveaxis(x.reshape((n, *batch, k)), 0, -2)

    def det(self) -> Any:
        if self.factors is None:
            return np.linalg.det(self.a)
        lu, piv = self.factors
        swaps = np.count_nonzero(piv != np.arange(piv.shape[0]))
        d = np.prod(np.diagonal(lu))
        return -d if swaps % 2 else d

    def inv_h(self) -> np.ndarray:
        """``A^-H`` (from the stored factors with LAPACK ``getri`` when there are some)."""
        if self.factors is None:
            return _H(np.linalg.inv(self.a))
        lu, piv = self.factors
        inv, info = self.getri(lu, piv)
        if info != 0:
            raise np.linalg.LinAlgError("Singular matrix")
        return _H(inv)


def _outer(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``g @ y^H`` for stacks of matrices; a broadcast product for single columns
    (``matmul`` with an inner dimension of 1 is far slower than that)."""
    if g.shape[-1] == 1:
        return g * _H(y)
    return g @ _H(y)


def _tri_solve(t: np.ndarray, b: np.ndarray, lower: bool, trans: int = 0,
               side: str = "left") -> np.ndarray:
    """Solve ``op(T) X = B`` (``side="left"``) or ``X op(T) = B`` with ``T`` triangular;
    ``trans`` 0: ``T``, 2: ``T^H``."""
    sla = _sla()
    if side == "right":
        # X op(T) = B  <=>  op(T)^H X^H = B^H
        return _H(_tri_solve(t, _H(b), lower, 2 - trans, "left"))
    if sla is not None and type(t) is np.ndarray and type(b) is np.ndarray and t.ndim == 2:
        # one matrix (SciPy before 1.16 takes no stacks; an AD's traced values take the
        # np.linalg.solve path, which has a rule)
        return sla.solve_triangular(t, b, lower=lower, trans=trans, check_finite=False)
    return np.linalg.solve(_H(t) if trans else t, b)


# ------------------------------------------------------------------------ inv


@frule.register(np.linalg.inv)
def inv_frule(dargs, a):
    a_dot = _value(dargs[1])
    y = np.linalg.inv(a)
    if a_dot is None:
        return y, ZeroTangent()
    return y, ProjectTo(y)(-(y @ a_dot @ y))



@rrule.register(np.linalg.inv)
def inv_rrule(a):
    y = np.linalg.inv(a)
    project_a = ProjectTo(a)

    def inv_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent()
        y_h = _H(y)
        return NoTangent(), project_a(-(y_h @ y_bar @ y_h))

    return y, inv_pullback


# ------------------------------------------------------------------------ solve


def _solve_parts(a: np.ndarray, b: np.ndarray) -> tuple:
    """(factor, b as a matrix stack, whether b is a vector)."""
    vec = np.ndim(b) == 1
    bm = b[:, None] if vec else b
    dtype = np.result_type(_float(a), _float(b))  # NumPy solves in the common type
    return _LU(_float(a).astype(dtype, copy=False)), bm, vec


@frule.register(np.linalg.solve)
def solve_frule(dargs, a, b):
    a_dot, b_dot = _value(dargs[1]), _value(dargs[2])
    lu, bm, vec = _solve_parts(a, b)
    ym = lu.solve(_float(bm))
    y = ym[..., 0] if vec else ym
    project_y = ProjectTo(y)
    if a_dot is None and b_dot is None:
        return y, ZeroTangent()
    rhs = 0
    if b_dot is not None:
        rhs = b_dot[:, None] if vec else b_dot
    if a_dot is not None:
        rhs = rhs - a_dot @ ym
    y_dot = lu.solve(np.asarray(rhs))
    return y, project_y(y_dot[..., 0] if vec else y_dot)


@rrule.register(np.linalg.solve)
def solve_rrule(a, b):
    lu, bm, vec = _solve_parts(a, b)
    ym = lu.solve(_float(bm))
    y = ym[..., 0] if vec else ym
    project_a, project_b = ProjectTo(a), ProjectTo(b)

    def solve_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), ZeroTangent()
        g = lu.solve(y_bar[..., None] if vec else y_bar, adjoint=True)
        b_bar = project_b(g[..., 0] if vec else g)
        a_bar = Thunk(lambda: project_a(-_outer(g, ym)))
        return NoTangent(), a_bar, b_bar

    return y, solve_pullback


# ------------------------------------------------------------------------ det, slogdet


_SINGULAR = ("gradient of det/slogdet at an exactly singular matrix (the adjugate) is not "
             "written")


@frule.register(np.linalg.det)
def det_frule(dargs, a):
    a_dot = _value(dargs[1])
    lu = _LU(_float(a), strict=False)
    y = lu.det()
    if a_dot is None:
        return y, ZeroTangent()
    if lu.singular:
        return y, not_implemented(_SINGULAR)
    return y, ProjectTo(y)(y * _trace(lu.solve(a_dot)))


@rrule.register(np.linalg.det)
def det_rrule(a):
    lu = _LU(_float(a), strict=False)
    y = lu.det()
    project_a = ProjectTo(a)

    def det_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent()
        if lu.singular:
            return NoTangent(), not_implemented(_SINGULAR)
        # d det = det * tr(A^-1 dA): adjoint conj(det) * y_bar * A^-H (from the LU factors)
        c = np.asarray(y_bar * np.conj(y))[..., None, None]
        return NoTangent(), project_a(c * lu.inv_h())

    return y, det_pullback


def _slogdet_tangent(y: Any, t: Any) -> Any:
    """Tangent of ``slogdet`` given ``t = tr(A^-1 dA)``."""
    t = np.asarray(t)
    sign_dot: Any
    if np.iscomplexobj(y.sign):
        sign_dot = ProjectTo(y.sign)(y.sign * 1j * t.imag)
    else:
        sign_dot = ZeroTangent()
    logabsdet_dot = ProjectTo(y.logabsdet)(t.real)
    return Tangent[type(y)](sign=sign_dot, logabsdet=logabsdet_dot)


@frule.register(np.linalg.slogdet)
def slogdet_frule(dargs, a):
    a_dot = _value(dargs[1])
    lu = _LU(_float(a), strict=False)
    y = lu.slogdet()
    if a_dot is None:
        return y, ZeroTangent()
    if lu.singular:
        return y, not_implemented(_SINGULAR)
    return y, _slogdet_tangent(y, _trace(lu.solve(a_dot)))


@rrule.register(np.linalg.slogdet)
def slogdet_rrule(a):
    lu = _LU(_float(a), strict=False)
    y = lu.slogdet()
    project_a = ProjectTo(a)
    complex_sign = np.iscomplexobj(y.sign)

    def slogdet_pullback(y_bar):
        sign_bar = _field(y_bar, "sign", 0)
        logabsdet_bar = _field(y_bar, "logabsdet", 1)
        if logabsdet_bar is None and (sign_bar is None or not complex_sign):
            return NoTangent(), ZeroTangent()
        if lu.singular:
            return NoTangent(), not_implemented(_SINGULAR)
        # the loss is Re(g * tr(A^-1 dA)) with g below; its gradient is conj(g) A^-H
        g = np.zeros(np.shape(y.logabsdet), dtype=np.result_type(lu.a.dtype, np.complex64))
        if logabsdet_bar is not None:
            g = g + np.real(logabsdet_bar)
        if complex_sign and sign_bar is not None:
            g = g + 1j * np.imag(np.conj(sign_bar) * y.sign)
        return NoTangent(), project_a(np.conj(g)[..., None, None] * lu.inv_h())

    return y, slogdet_pullback


# ------------------------------------------------------------------------ pinv


def _pinv_tangent(a: np.ndarray, y: np.ndarray, a_dot: np.ndarray) -> np.ndarray:
    """Golub-Pereyra: derivative of the pseudo-inverse at constant rank."""
    m, n = a.shape[-2:]
    proj_rows = np.eye(m, dtype=y.dtype) - a @ y  # I - A A+
    proj_cols = np.eye(n, dtype=y.dtype) - y @ a  # I - A+ A
    a_dot_h = _H(a_dot)
    return (-(y @ a_dot @ y) + (y @ _H(y)) @ a_dot_h @ proj_rows
            + proj_cols @ a_dot_h @ (_H(y) @ y))


def _pinv_cotangent(a: np.ndarray, y: np.ndarray, y_bar: np.ndarray) -> np.ndarray:
    m, n = a.shape[-2:]
    y_h = _H(y)
    y_bar_h = _H(y_bar)
    proj_rows = np.eye(m, dtype=y.dtype) - a @ y
    proj_cols = np.eye(n, dtype=y.dtype) - y @ a
    return (-(y_h @ y_bar @ y_h) + proj_rows @ y_bar_h @ (y @ y_h)
            + (y_h @ y) @ y_bar_h @ proj_cols)


@frule.register(np.linalg.pinv)
def pinv_frule(dargs, a, *args, **kwargs):
    a_dot = _value(dargs[1])
    y = np.linalg.pinv(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    herm = _options(args, kwargs, ("rcond", None), ("hermitian", False))["hermitian"]
    a_eff = _her_input(a, "L") if herm else a
    a_dot = _her_tangent(a_dot, "L") if herm else a_dot
    return y, ProjectTo(y)(_pinv_tangent(a_eff, y, a_dot))


@rrule.register(np.linalg.pinv)
def pinv_rrule(a, *args, **kwargs):
    y = np.linalg.pinv(a, *args, **kwargs)
    herm = _options(args, kwargs, ("rcond", None), ("hermitian", False))["hermitian"]
    project_a = ProjectTo(a)

    def pinv_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), *_nots(args)
        if herm:
            s = _pinv_cotangent(_her_input(a, "L"), y, y_bar)
            return NoTangent(), project_a(_her_cotangent(s, "L")), *_nots(args)
        return NoTangent(), project_a(_pinv_cotangent(a, y, y_bar)), *_nots(args)

    return y, pinv_pullback


# ------------------------------------------------------------------------ lstsq


def _lstsq_parts(a: np.ndarray, b: np.ndarray, args: tuple, kwargs: dict) -> tuple:
    y = np.linalg.lstsq(a, b, *args, **kwargs)
    x, residuals, rank, s = y
    p = np.linalg.pinv(a)
    return y, x, residuals, rank, s, p


@frule.register(np.linalg.lstsq)
def lstsq_frule(dargs, a, b, *args, **kwargs):
    a_dot, b_dot = _value(dargs[1]), _value(dargs[2])
    y, x, residuals, _rank, s, p = _lstsq_parts(a, b, args, kwargs)
    if a_dot is None and b_dot is None:
        return y, ZeroTangent()
    vec = np.ndim(b) == 1
    xm = x[:, None] if vec else x
    bm = b[:, None] if vec else b
    r = bm - a @ xm
    rhs = 0
    if b_dot is not None:
        rhs = b_dot[:, None] if vec else b_dot
    if a_dot is not None:
        rhs = rhs - a_dot @ xm
    x_dot = p @ rhs
    res_dot: Any = ZeroTangent()
    s_dot: Any = ZeroTangent()
    if a_dot is not None:
        # d x = A+ (db - dA x) + A+ A+^H dA^H r + (I - A+ A) dA^H A+^H x
        n = a.shape[-1]
        x_dot = x_dot + p @ (_H(p) @ (_H(a_dot) @ r))
        x_dot = x_dot + (np.eye(n, dtype=p.dtype) - p @ a) @ (_H(a_dot) @ (_H(p) @ xm))
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        s_dot = ProjectTo(s)(_diag(_H(u) @ a_dot @ _H(vh)).real)
    if residuals.size:
        # residuals = |b - A x|^2 per column; A^H r = 0 removes the dx term
        res_dot = ProjectTo(residuals)(2 * _rdot(r, np.asarray(rhs), axis=0))
    x_dot = ProjectTo(x)(x_dot[:, 0] if vec else x_dot)
    return y, Tangent[tuple](x_dot, res_dot, NoTangent(), s_dot)


@rrule.register(np.linalg.lstsq)
def lstsq_rrule(a, b, *args, **kwargs):
    y, x, residuals, _rank, _s, p = _lstsq_parts(a, b, args, kwargs)
    project_a, project_b = ProjectTo(a), ProjectTo(b)
    vec = np.ndim(b) == 1
    xm = x[:, None] if vec else x
    bm = b[:, None] if vec else b

    def lstsq_pullback(y_bar):
        x_bar = _field(y_bar, "x", 0)
        res_bar = _field(y_bar, "residuals", 1)
        s_bar = _field(y_bar, "s", 3)
        if x_bar is None and res_bar is None and s_bar is None:
            return NoTangent(), ZeroTangent(), ZeroTangent(), *_nots(args)
        r = bm - a @ xm
        # cotangent of the right-hand side rhs = db - dA x (x part, then residuals part)
        g = 0
        xm_bar = None
        if x_bar is not None:
            xm_bar = x_bar[:, None] if vec else x_bar
            g = _H(p) @ xm_bar
        if res_bar is not None and residuals.size:
            g = g + 2 * np.real(res_bar) * r
        g = np.asarray(g)

        def a_cotangent():
            a_bar = np.zeros(np.shape(a), dtype=np.result_type(a, xm, np.float32))
            if g.ndim:
                a_bar = a_bar - g @ _H(xm)
            if xm_bar is not None:
                n = a.shape[-1]
                # adjoints of A+ A+^H dA^H r and (I - A+ A) dA^H A+^H x
                a_bar = a_bar + r @ _H(xm_bar) @ (p @ _H(p))
                proj_cols = np.eye(n, dtype=p.dtype) - p @ a
                a_bar = a_bar + (_H(p) @ xm) @ _H(xm_bar) @ proj_cols
            if s_bar is not None:
                u, _, vh = np.linalg.svd(a, full_matrices=False)
                a_bar = a_bar + (u * np.real(s_bar)[None, :]) @ vh
            return project_a(a_bar)

        if g.ndim:
            b_bar: Any = project_b(g[:, 0] if vec else g)
        else:
            b_bar = ZeroTangent()
        return NoTangent(), Thunk(a_cotangent), b_bar, *_nots(args)

    return y, lstsq_pullback


# ------------------------------------------------------------------------ cholesky


def _phi(x: np.ndarray) -> np.ndarray:
    """Lower triangle with the diagonal halved."""
    return np.tril(x) - 0.5 * _diag_embed(_diag(x))


@frule.register(np.linalg.cholesky)
def cholesky_frule(dargs, a, *args, **kwargs):
    a_dot = _value(dargs[1])
    y = np.linalg.cholesky(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    upper = _options(args, kwargs, ("upper", False))["upper"]
    low = _H(y) if upper else y
    m = _her_tangent(a_dot, "U" if upper else "L")
    # dL = L Phi(L^-1 dA L^-H)
    m = _tri_solve(low, m, lower=True)
    m = _tri_solve(low, m, lower=True, trans=2, side="right")
    low_dot = low @ _phi(m)
    return y, ProjectTo(y)(_H(low_dot) if upper else low_dot)


@rrule.register(np.linalg.cholesky)
def cholesky_rrule(a, *args, **kwargs):
    y = np.linalg.cholesky(a, *args, **kwargs)
    upper = _options(args, kwargs, ("upper", False))["upper"]
    low = _H(y) if upper else y
    project_a = ProjectTo(a)

    def cholesky_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), *_nots(args)
        low_bar = _H(y_bar) if upper else y_bar
        # S = L^-H Phi(L^H L_bar) L^-1, then onto the triangle that was read
        s = _phi(_H(low) @ low_bar)
        s = _tri_solve(low, s, lower=True, trans=2)
        s = _tri_solve(low, s, lower=True, side="right")
        return NoTangent(), project_a(_her_cotangent(s, "U" if upper else "L")), *_nots(args)

    return y, cholesky_pullback


# ------------------------------------------------------------------------ qr


def _qr_mode(args: tuple, kwargs: dict) -> str:
    return _options(args, kwargs, ("mode", "reduced"))["mode"]


def _qr_square_tangent(q: np.ndarray, r: np.ndarray, a_dot: np.ndarray) -> tuple:
    """(dQ, dR) of A = QR, m >= n, R with a real diagonal (LAPACK's gauge)."""
    x = _tri_solve(r, a_dot, lower=False, side="right")  # dA R^-1
    c = _H(q) @ x
    low = np.tril(c, -1)
    omega = low - _H(low)
    if omega.dtype.kind == "c":
        omega = omega + _diag_embed(1j * _diag(c).imag)
    r_dot = (c - omega) @ r
    q_dot = q @ (omega - c) + x
    return q_dot, r_dot


def _qr_square_cotangent(q: np.ndarray, r: np.ndarray, q_bar: Any, r_bar: Any) -> np.ndarray:
    """Adjoint of `_qr_square_tangent`."""
    m = 0
    if r_bar is not None:
        m = r_bar @ _H(r)
    if q_bar is not None:
        m = m - _H(q) @ q_bar
    m = np.asarray(m)
    # M - Omega^*(M): upper triangle of M with a real diagonal, mirrored below
    k = np.triu(m, 1) + _H(np.triu(m, 1)) + _diag_embed(_diag(m).real.astype(m.dtype))
    x_bar = q @ k
    if q_bar is not None:
        x_bar = x_bar + q_bar
    return _tri_solve(r, x_bar, lower=False, trans=2, side="right")  # X_bar R^-H


def _qr_tangent(q: np.ndarray, r: np.ndarray, a: np.ndarray, a_dot: np.ndarray) -> tuple:
    m, n = a.shape[-2:]
    if m >= n:
        return _qr_square_tangent(q, r, a_dot)
    q_dot, r1_dot = _qr_square_tangent(q, r[..., :, :m], a_dot[..., :, :m])
    r2_dot = _H(q_dot) @ a[..., :, m:] + _H(q) @ a_dot[..., :, m:]
    return q_dot, np.concatenate([r1_dot, r2_dot], axis=-1)


def _qr_cotangent(q: np.ndarray, r: np.ndarray, a: np.ndarray, q_bar: Any,
                  r_bar: Any) -> np.ndarray:
    m, n = a.shape[-2:]
    if m >= n:
        return _qr_square_cotangent(q, r, q_bar, r_bar)
    y = a[..., :, m:]
    r1_bar = None if r_bar is None else r_bar[..., :, :m]
    y_bar = np.zeros(y.shape, dtype=q.dtype)
    if r_bar is not None:
        r2_bar = r_bar[..., :, m:]
        y_bar = q @ r2_bar
        extra = y @ _H(r2_bar)
        q_bar = extra if q_bar is None else q_bar + extra
    x_bar = _qr_square_cotangent(q, r[..., :, :m], q_bar, r1_bar)
    return np.concatenate([x_bar, y_bar], axis=-1)


def _qr_defined(a: np.ndarray, mode: str) -> str | None:
    m, n = a.shape[-2:]
    if mode == "raw":
        return "qr(mode='raw') returns Householder reflectors; their derivative is not written"
    if mode == "complete" and m > n:
        return ("qr(mode='complete') with m > n: the last m - n columns of Q are any "
                "orthonormal basis of the complement of range(A), not a function of A")
    return None


@frule.register(np.linalg.qr)
def qr_frule(dargs, a, *args, **kwargs):
    a_dot = _value(dargs[1])
    mode = _qr_mode(args, kwargs)
    y = np.linalg.qr(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    reason = _qr_defined(a, mode)
    if reason:
        return y, not_implemented(reason)
    if mode == "r":
        q, r = np.linalg.qr(a)
        return y, ProjectTo(y)(_qr_tangent(q, r, a, a_dot)[1])
    q, r = y
    q_dot, r_dot = _qr_tangent(q, r, a, a_dot)
    return y, Tangent[type(y)](Q=ProjectTo(q)(q_dot), R=ProjectTo(r)(r_dot))


@rrule.register(np.linalg.qr)
def qr_rrule(a, *args, **kwargs):
    mode = _qr_mode(args, kwargs)
    y = np.linalg.qr(a, *args, **kwargs)
    project_a = ProjectTo(a)
    reason = _qr_defined(a, mode)
    if mode == "r":
        q, r = np.linalg.qr(a)
    elif not reason:
        q, r = y

    def qr_pullback(y_bar):
        if mode == "r":
            q_bar, r_bar = None, _value(y_bar)
        else:
            q_bar, r_bar = _field(y_bar, "Q", 0), _field(y_bar, "R", 1)
        if q_bar is None and r_bar is None:
            return NoTangent(), ZeroTangent(), *_nots(args)
        if reason:
            return NoTangent(), not_implemented(reason), *_nots(args)
        return NoTangent(), project_a(_qr_cotangent(q, r, a, q_bar, r_bar)), *_nots(args)

    return y, qr_pullback


# ------------------------------------------------------------------------ svd


def _svd_f(s: np.ndarray) -> np.ndarray:
    s2 = s * s
    return _inv_gaps(s2[..., None, :] - s2[..., :, None], _max_abs(s2), s.dtype)


def _svd_tangent(u: np.ndarray, s: np.ndarray, vh: np.ndarray, a_dot: np.ndarray) -> tuple:
    """(dU, ds, dVh) of the thin SVD; complex phases split evenly between U and V."""
    v = _H(vh)
    p = _H(u) @ a_dot @ v
    s_dot = _diag(p).real
    f = _svd_f(s)
    sm = s[..., None, :]  # right-multiplication by S
    sc = s[..., :, None]  # left-multiplication by S
    ph = _H(p)
    omega_u = f * (p * sm + sc * ph)
    omega_v = f * (sc * p + ph * sm)
    if p.dtype.kind == "c":
        half = _diag_embed(1j * _diag(p).imag / (2 * s))
        omega_u = omega_u + half
        omega_v = omega_v - half
    inv_s = 1 / s[..., None, :]
    u_dot = u @ omega_u + (a_dot @ v - u @ p) * inv_s
    v_dot = v @ omega_v + (_H(a_dot) @ u - v @ ph) * inv_s
    return u_dot, s_dot, _H(v_dot)


def _svd_cotangent(u: np.ndarray, s: np.ndarray, vh: np.ndarray, u_bar: Any, s_bar: Any,
                   vh_bar: Any) -> np.ndarray:
    v = _H(vh)
    sm = s[..., None, :]
    sc = s[..., :, None]
    core = np.zeros(u.shape[:-2] + (s.shape[-1],) * 2, dtype=u.dtype)
    if s_bar is not None:
        core = core + _diag_embed(np.real(s_bar).astype(s.dtype))
    out = 0
    if u_bar is not None or vh_bar is not None:
        f = _svd_f(s)
        inv_s = 1 / sm
        if u_bar is not None:
            g = _H(u) @ u_bar
            core = core + (f * (g - _H(g))) * sm
            if g.dtype.kind == "c":
                core = core + _diag_embed(1j * _diag(g).imag / (2 * s))
            out = out + ((u_bar - u @ g) * inv_s) @ vh
        if vh_bar is not None:
            v_bar = _H(vh_bar)
            k = _H(v) @ v_bar
            core = core + sc * (f * (k - _H(k)))
            if k.dtype.kind == "c":
                core = core - _diag_embed(1j * _diag(k).imag / (2 * s))
            out = out + u @ _H((v_bar - v @ k) * inv_s)
    return u @ core @ vh + out


def _svd_options(args: tuple, kwargs: dict) -> dict:
    return _options(args, kwargs, ("full_matrices", True), ("compute_uv", True),
                    ("hermitian", False))


def _svd_reason(a: np.ndarray, opts: dict) -> str | None:
    m, n = a.shape[-2:]
    if opts["compute_uv"] and opts["full_matrices"] and m != n:
        return ("svd(full_matrices=True) of a non-square matrix: the extra singular "
                "vectors span the complement of the range and are not a function of A; "
                "use full_matrices=False")
    return None


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
        w_dot, v_dot = _eigh_tangent(self.w, self.v, a_dot, "L")
        s_dot = self.sgn * self._sorted(w_dot, False)
        if not compute_uv:
            return s_dot
        u_dot = self._sorted(v_dot, True)
        return u_dot, s_dot, _H(u_dot * self.sgn[..., None, :])

    def cotangent(self, u_bar: Any, s_bar: Any, vh_bar: Any) -> np.ndarray:
        w_bar = None if s_bar is None else self._unsorted(np.real(s_bar) * self.sgn, False)
        ub = None
        if u_bar is not None:
            ub = u_bar
        if vh_bar is not None:
            extra = _H(vh_bar) * self.sgn[..., None, :]
            ub = extra if ub is None else ub + extra
        v_bar = None if ub is None else self._unsorted(np.asarray(ub), True)
        return _eigh_cotangent(self.w, self.v, w_bar, v_bar, "L")


@frule.register(np.linalg.svd)
def svd_frule(dargs, a, *args, **kwargs):
    a_dot = _value(dargs[1])
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
    if opts["compute_uv"] and _svd_reason(a, opts):
        return y, not_implemented(_svd_reason(a, opts))
    if not opts["compute_uv"]:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        return y, ProjectTo(y)(_diag(_H(u) @ a_dot @ _H(vh)).real)
    u, s, vh = y
    u_dot, s_dot, vh_dot = _svd_tangent(u, s, vh, a_dot)
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
        u, s, vh = np.linalg.svd(a, full_matrices=False)

    def svd_pullback(y_bar):
        if not opts["compute_uv"]:
            u_bar, s_bar, vh_bar = None, _value(y_bar), None
        else:
            u_bar, s_bar = _field(y_bar, "U", 0), _field(y_bar, "S", 1)
            vh_bar = _field(y_bar, "Vh", 2)
        if u_bar is None and s_bar is None and vh_bar is None:
            return NoTangent(), ZeroTangent(), *_nots(args)
        if opts["hermitian"]:
            return NoTangent(), project_a(herm.cotangent(u_bar, s_bar, vh_bar)), *_nots(args)
        if u_bar is not None and u_bar.shape[-1] > k:
            if np.any(u_bar[..., :, k:]):
                return NoTangent(), not_implemented(_svd_reason(a, opts)), *_nots(args)
            u_bar = u_bar[..., :, :k]
        if vh_bar is not None and vh_bar.shape[-2] > k:
            if np.any(vh_bar[..., k:, :]):
                return NoTangent(), not_implemented(_svd_reason(a, opts)), *_nots(args)
            vh_bar = vh_bar[..., :k, :]
        return NoTangent(), project_a(_svd_cotangent(u, s, vh, u_bar, s_bar, vh_bar)), \
            *_nots(args)

    return y, svd_pullback


@frule.register(np.linalg.svdvals)
def svdvals_frule(dargs, a):
    a_dot = _value(dargs[1])
    y = np.linalg.svdvals(a)
    if a_dot is None:
        return y, ZeroTangent()
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return y, ProjectTo(y)(_diag(_H(u) @ a_dot @ _H(vh)).real)


@rrule.register(np.linalg.svdvals)
def svdvals_rrule(a):
    u, _s, vh = np.linalg.svd(a, full_matrices=False)
    y = np.linalg.svdvals(a)
    project_a = ProjectTo(a)

    def svdvals_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent()
        return NoTangent(), project_a((u * np.real(y_bar)[..., None, :]) @ vh)

    return y, svdvals_pullback


# ------------------------------------------------------------------------ eigh


def _eigh_f(w: np.ndarray) -> np.ndarray:
    return _inv_gaps(w[..., None, :] - w[..., :, None], _max_abs(w), w.dtype)


def _uplo(args: tuple, kwargs: dict) -> str:
    return _options(args, kwargs, ("UPLO", "L"))["UPLO"]


def _eigh_tangent(w: np.ndarray, v: np.ndarray, a_dot: np.ndarray, uplo: str) -> tuple:
    """(dw, dV) of ``eigh`` (gauge ``diag(V^H dV) = 0``)."""
    m = _H(v) @ _her_tangent(a_dot, uplo) @ v
    return _diag(m).real, v @ (_eigh_f(w) * m)


def _eigh_cotangent(w: np.ndarray, v: np.ndarray, w_bar: Any, v_bar: Any,
                    uplo: str) -> np.ndarray:
    core = np.zeros(v.shape, dtype=v.dtype)
    if w_bar is not None:
        core = core + _diag_embed(np.real(w_bar).astype(w.dtype))
    if v_bar is not None:
        core = core + _eigh_f(w) * (_H(v) @ v_bar)
    return _her_cotangent(v @ core @ _H(v), uplo)


@frule.register(np.linalg.eigh)
def eigh_frule(dargs, a, *args, **kwargs):
    a_dot = _value(dargs[1])
    y = np.linalg.eigh(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    w, v = y
    w_dot, v_dot = _eigh_tangent(w, v, a_dot, _uplo(args, kwargs))
    return y, Tangent[type(y)](eigenvalues=ProjectTo(w)(w_dot),
                               eigenvectors=ProjectTo(v)(v_dot))


@rrule.register(np.linalg.eigh)
def eigh_rrule(a, *args, **kwargs):
    y = np.linalg.eigh(a, *args, **kwargs)
    w, v = y
    uplo = _uplo(args, kwargs)
    project_a = ProjectTo(a)

    def eigh_pullback(y_bar):
        w_bar = _field(y_bar, "eigenvalues", 0)
        v_bar = _field(y_bar, "eigenvectors", 1)
        if w_bar is None and v_bar is None:
            return NoTangent(), ZeroTangent(), *_nots(args)
        return NoTangent(), project_a(_eigh_cotangent(w, v, w_bar, v_bar, uplo)), *_nots(args)

    return y, eigh_pullback


@frule.register(np.linalg.eigvalsh)
def eigvalsh_frule(dargs, a, *args, **kwargs):
    a_dot = _value(dargs[1])
    y = np.linalg.eigvalsh(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    _, v = np.linalg.eigh(a, *args, **kwargs)
    m = _H(v) @ _her_tangent(a_dot, _uplo(args, kwargs)) @ v
    return y, ProjectTo(y)(_diag(m).real)


@rrule.register(np.linalg.eigvalsh)
def eigvalsh_rrule(a, *args, **kwargs):
    y = np.linalg.eigvalsh(a, *args, **kwargs)
    _, v = np.linalg.eigh(a, *args, **kwargs)
    uplo = _uplo(args, kwargs)
    project_a = ProjectTo(a)

    def eigvalsh_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), *_nots(args)
        s = (v * np.real(y_bar)[..., None, :]) @ _H(v)
        return NoTangent(), project_a(_her_cotangent(s, uplo)), *_nots(args)

    return y, eigvalsh_pullback


# ------------------------------------------------------------------------ eig


def _eig_f(w: np.ndarray) -> np.ndarray:
    return _inv_gaps(w[..., None, :] - w[..., :, None], _max_abs(w), w.real.dtype)


def _largest(v: np.ndarray) -> tuple:
    """Row of each column's largest component (NumPy makes it real) and its value."""
    k = np.argmax(np.abs(v), axis=-2)[..., None, :]
    return k, np.take_along_axis(v, k, axis=-2)[..., 0, :].real


def _eig_tangent(w: np.ndarray, v: np.ndarray, a_dot: np.ndarray) -> tuple:
    m = np.linalg.solve(v, a_dot @ v)  # V^-1 dA V
    w_dot = _diag(m)
    x = v @ (_eig_f(w) * m)
    # unit 2-norm and NumPy's "largest component real" gauge
    re = -_rdot(v, x, axis=-2)
    dv = x + v * re[..., None, :]
    if np.iscomplexobj(dv):
        k, vk = _largest(v)
        im = -np.take_along_axis(dv, k, axis=-2)[..., 0, :].imag / vk
        dv = dv + v * (1j * im)[..., None, :]
    return w_dot, dv


def _eig_cotangent(w: np.ndarray, v: np.ndarray, w_bar: Any, v_bar: Any) -> np.ndarray:
    core = np.zeros(v.shape, dtype=np.result_type(v, w))
    if w_bar is not None:
        core = core + _diag_embed(np.asarray(w_bar, dtype=core.dtype))
    if v_bar is not None:
        rho = _rdot(v, v_bar, axis=-2)
        x_bar = v_bar - v * rho[..., None, :]
        if np.iscomplexobj(x_bar) or np.iscomplexobj(v):
            x_bar = x_bar.astype(np.result_type(x_bar, np.complex64))
            tau = np.sum(np.conj(v_bar) * v, axis=-2).imag
            k, vk = _largest(v)
            col = np.take_along_axis(x_bar, k, axis=-2) + (1j * tau / vk)[..., None, :]
            # row k of each column replaced by col, with where (differentiable again)
            rows = np.arange(x_bar.shape[-2])[:, None] == k
            x_bar = np.where(rows, col, x_bar)
        core = core + np.conj(_eig_f(w)) * (_H(v) @ x_bar)
    return np.linalg.solve(_H(v), core @ _H(v))


@frule.register(np.linalg.eig)
def eig_frule(dargs, a):
    a_dot = _value(dargs[1])
    y = np.linalg.eig(a)
    if a_dot is None:
        return y, ZeroTangent()
    w, v = y
    w_dot, v_dot = _eig_tangent(w, v, a_dot)
    return y, Tangent[type(y)](eigenvalues=ProjectTo(w)(w_dot),
                               eigenvectors=ProjectTo(v)(v_dot))


@rrule.register(np.linalg.eig)
def eig_rrule(a):
    y = np.linalg.eig(a)
    w, v = y
    project_a = ProjectTo(a)

    def eig_pullback(y_bar):
        w_bar = _field(y_bar, "eigenvalues", 0)
        v_bar = _field(y_bar, "eigenvectors", 1)
        if w_bar is None and v_bar is None:
            return NoTangent(), ZeroTangent()
        return NoTangent(), project_a(_eig_cotangent(w, v, w_bar, v_bar))

    return y, eig_pullback


def _eig_matching(a: np.ndarray, y: np.ndarray) -> tuple:
    """Eigenvectors ordered like ``eigvals(a)`` (a separate LAPACK call)."""
    w, v = np.linalg.eig(a)
    order = np.argmin(np.abs(y[..., :, None] - w[..., None, :]), axis=-1)
    return (np.take_along_axis(w, order, axis=-1),
            np.take_along_axis(v, order[..., None, :], axis=-1))


@frule.register(np.linalg.eigvals)
def eigvals_frule(dargs, a):
    a_dot = _value(dargs[1])
    y = np.linalg.eigvals(a)
    if a_dot is None:
        return y, ZeroTangent()
    _, v = _eig_matching(a, y)
    return y, ProjectTo(y)(_diag(np.linalg.solve(v, a_dot @ v)))


@rrule.register(np.linalg.eigvals)
def eigvals_rrule(a):
    y = np.linalg.eigvals(a)
    w, v = _eig_matching(a, y)
    project_a = ProjectTo(a)

    def eigvals_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent()
        return NoTangent(), project_a(_eig_cotangent(w, v, y_bar, None))

    return y, eigvals_pullback


# ------------------------------------------------------------------------ matrix_power


def _powers(a: np.ndarray, n: int) -> tuple:
    """(base, [base^0 .. base^|n|]) with base = A or inv(A) for negative n."""
    base = np.linalg.inv(a) if n < 0 else a
    out = [_eye_like(base)]
    for _ in range(abs(n)):
        out.append(out[-1] @ base)
    return base, out


def _power_tangent(base: np.ndarray, pw: list, base_dot: np.ndarray) -> np.ndarray:
    k = len(pw) - 1
    return sum((pw[i] @ base_dot @ pw[k - 1 - i] for i in range(k)), np.zeros_like(pw[0]))


@frule.register(np.linalg.matrix_power)
def matrix_power_frule(dargs, a, n):
    a_dot = _value(dargs[1])
    y = np.linalg.matrix_power(a, n)
    if a_dot is None or n == 0:
        return y, ZeroTangent()
    base, pw = _powers(_float(a), n)
    base_dot = -(base @ a_dot @ base) if n < 0 else a_dot
    return y, ProjectTo(y)(_power_tangent(base, pw, base_dot))


@rrule.register(np.linalg.matrix_power)
def matrix_power_rrule(a, n):
    y = np.linalg.matrix_power(a, n)
    project_a = ProjectTo(a)

    def matrix_power_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None or n == 0:
            return NoTangent(), ZeroTangent(), NoTangent()
        base, pw = _powers(_float(a), n)
        k = abs(n)
        base_bar = sum((_H(pw[i]) @ y_bar @ _H(pw[k - 1 - i]) for i in range(k)),
                       np.zeros_like(pw[0]))
        if n < 0:
            base_bar = -(_H(base) @ base_bar @ _H(base))
        return NoTangent(), project_a(base_bar), NoTangent()

    return y, matrix_power_pullback


# ------------------------------------------------------------------------ norms


def _sgn(x: np.ndarray) -> np.ndarray:
    """x / |x| (0 where x == 0)."""
    ax = np.abs(x)
    # no out=/where=, so the expression can itself be differentiated (Hessians)
    nz = ax != 0
    return np.where(nz, x / np.where(nz, ax, 1), 0)


def _norm_axes(x: np.ndarray, ord: Any, axis: Any) -> tuple:
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


def _vector_norm_grad(x: np.ndarray, yk: np.ndarray, ord: Any, axes: tuple) -> Any:
    """d||x|| / dx (keepdims layout); None where the norm is locally constant."""
    if ord is None or ord == 2:
        # no out=/where=, so the expression can itself be differentiated (Hessians)
        nz = yk != 0
        return np.where(nz, x / np.where(nz, yk, 1), 0)
    if ord == 0:
        return None
    ax = np.abs(x)
    if ord == 1:
        return _sgn(x)
    if ord in (np.inf, -np.inf):
        mask = ax == yk
        count = np.sum(mask, axis=axes, keepdims=True)
        return _sgn(x) * mask / count
    p = float(ord)
    # (|x| / ||x||)^(p-1) sgn(x), 0 where x == 0 or ||x|| == 0; no out=/where=, so the
    # expression can itself be differentiated (Hessians)
    nz = (ax != 0) & (yk != 0)
    scale = np.where(nz, ax / np.where(yk != 0, yk, 1), 1)
    return np.where(nz, _sgn(x) * scale ** (p - 1), 0)


def _matrix_norm_grad(x: np.ndarray, ord: Any, axes: tuple) -> Any:
    r, c = axes
    if x.size == 0:
        return np.zeros(x.shape, dtype=x.dtype)  # (max/min over no columns would raise)
    if ord in (None, "fro"):
        yk = np.sqrt(np.sum(np.abs(x) ** 2, axis=axes, keepdims=True))
        return _vector_norm_grad(x, yk, None, axes)
    if ord in ("nuc", 2, -2):
        xm = np.moveaxis(x, (r, c), (-2, -1))
        u, s, vh = np.linalg.svd(xm, full_matrices=False)
        w = np.zeros(s.shape, dtype=s.dtype)
        if ord == "nuc":
            w[...] = 1
        elif s.shape[-1] == 0:
            pass  # an empty matrix: an empty gradient
        elif ord == 2:
            w[..., 0] = 1
        else:
            w[..., -1] = 1
        g = (u * w[..., None, :]) @ vh
        return np.moveaxis(g, (-2, -1), (r, c))
    # 1 / -1: max / min over columns of column sums; inf / -inf: over rows
    sum_axis, pick_axis = (r, c) if ord in (1, -1) else (c, r)
    sums = np.sum(np.abs(x), axis=sum_axis, keepdims=True)
    best = (np.max if ord in (1, np.inf) else np.min)(sums, axis=pick_axis, keepdims=True)
    mask = sums == best
    return _sgn(x) * (mask / np.sum(mask, axis=pick_axis, keepdims=True))


def _norm_grad(x: np.ndarray, y: Any, ord: Any, axis: Any, keepdims: bool,
               vector: bool = False) -> tuple:
    """(gradient in x's layout, the reduced axes) for ``norm(x, ord, axis)``;
    ``vector``: a vector norm over all of ``axis`` (``vector_norm``)."""
    if vector:
        axes = tuple(int(ax) % x.ndim for ax in axis)
        kind = "vector"
    else:
        kind, axes = _norm_axes(x, ord, axis)
    if kind == "vector":
        yk = np.asarray(y) if keepdims else np.expand_dims(np.asarray(y), axes)
        return _vector_norm_grad(x, yk, ord, axes), axes
    return _matrix_norm_grad(x, ord, axes), axes


def _norm_rules(f: Any, names: tuple) -> None:
    """Register frule and rrule of a norm function ``f(x, *names)``."""

    def read(x: np.ndarray, args: tuple, kwargs: dict) -> tuple:
        o = _options(args, kwargs, *names)
        if f is np.linalg.vector_norm:
            axis = o["axis"] if o["axis"] is not None else tuple(range(np.ndim(x)))
            return o["ord"], (axis,) if np.isscalar(axis) else axis, o["keepdims"]
        if f is np.linalg.matrix_norm:
            return o["ord"], (-2, -1), o["keepdims"]
        return o["ord"], o["axis"], o["keepdims"]

    vector = f is np.linalg.vector_norm

    def norm_frule(dargs, x, *args, **kwargs):
        x_dot = _value(dargs[1])
        y = f(x, *args, **kwargs)
        if x_dot is None:
            return y, ZeroTangent()
        ord, axis, keepdims = read(x, args, kwargs)
        g, axes = _norm_grad(_float(x), y, ord, axis, keepdims, vector)
        if g is None:
            return y, ZeroTangent()
        return y, ProjectTo(y)(_rdot(g, x_dot, axis=axes, keepdims=keepdims))

    def norm_rrule(x, *args, **kwargs):
        y = f(x, *args, **kwargs)
        project_x = ProjectTo(x)

        def norm_pullback(y_bar):
            y_bar = _value(y_bar)
            if y_bar is None:
                return NoTangent(), ZeroTangent(), *_nots(args)
            ord, axis, keepdims = read(x, args, kwargs)
            g, axes = _norm_grad(_float(x), y, ord, axis, keepdims, vector)
            if g is None:
                return NoTangent(), ZeroTangent(), *_nots(args)
            y_bar = np.real(np.asarray(y_bar))
            if not keepdims:
                y_bar = np.expand_dims(y_bar, axes)
            return NoTangent(), project_x(y_bar * g), *_nots(args)

        return y, norm_pullback

    name = f.__name__
    norm_frule.__name__ = norm_frule.__qualname__ = f"{name}_frule"
    norm_rrule.__name__ = norm_rrule.__qualname__ = f"{name}_rrule"
    frule.register(f)(norm_frule)
    rrule.register(f)(norm_rrule)


_norm_rules(np.linalg.norm, (("ord", None), ("axis", None), ("keepdims", False)))
_norm_rules(np.linalg.vector_norm, (("axis", None), ("keepdims", False), ("ord", 2)))
_norm_rules(np.linalg.matrix_norm, (("keepdims", False), ("ord", "fro")))


# ------------------------------------------------------------------------ cond


def _cond_grad(x: np.ndarray, p: Any) -> np.ndarray:
    """d cond(x, p) / dx for a stack of square (or, for p in None/2/-2, any) matrices."""
    if p in (None, 2, -2):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        hi, lo = s[..., :1], s[..., -1:]
        g_hi = u[..., :, :1] @ vh[..., :1, :]
        g_lo = u[..., :, -1:] @ vh[..., -1:, :]
        if p == -2:
            hi, lo, g_hi, g_lo = lo, hi, g_lo, g_hi
        # cond = hi / lo
        return (g_hi / lo[..., None] - g_lo * (hi / lo**2)[..., None])
    xi = np.linalg.inv(x)
    n1 = np.linalg.norm(x, p, axis=(-2, -1))[..., None, None]
    n2 = np.linalg.norm(xi, p, axis=(-2, -1))[..., None, None]
    g1 = _matrix_norm_grad(x, p, (x.ndim - 2, x.ndim - 1))
    g2 = _matrix_norm_grad(xi, p, (x.ndim - 2, x.ndim - 1))
    return n2 * g1 - n1 * (_H(xi) @ g2 @ _H(xi))


@frule.register(np.linalg.cond)
def cond_frule(dargs, x, *args, **kwargs):
    x_dot = _value(dargs[1])
    y = np.linalg.cond(x, *args, **kwargs)
    if x_dot is None:
        return y, ZeroTangent()
    g = _cond_grad(_float(x), _options(args, kwargs, ("p", None))["p"])
    return y, ProjectTo(y)(_rdot(g, x_dot, axis=(-2, -1)))


@rrule.register(np.linalg.cond)
def cond_rrule(x, *args, **kwargs):
    y = np.linalg.cond(x, *args, **kwargs)
    project_x = ProjectTo(x)

    def cond_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), *_nots(args)
        g = _cond_grad(_float(x), _options(args, kwargs, ("p", None))["p"])
        return NoTangent(), project_x(np.real(np.asarray(y_bar))[..., None, None] * g), \
            *_nots(args)

    return y, cond_pullback


# ------------------------------------------------------------------------ multi_dot


def _as_chain(arrays: list) -> tuple:
    """Matrices of the chain (1-D ends promoted) and whether each end was a vector."""
    mats = [np.asarray(m) for m in arrays]
    first_vec, last_vec = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_vec:
        mats[0] = mats[0][None, :]
    if last_vec:
        mats[-1] = mats[-1][:, None]
    return mats, first_vec, last_vec


def _chain(mats: list) -> np.ndarray:
    return mats[0] if len(mats) == 1 else np.linalg.multi_dot(mats)


@frule.register(np.linalg.multi_dot)
def multi_dot_frule(dargs, arrays, *args, **kwargs):
    y = np.linalg.multi_dot(arrays, *args, **kwargs)
    dots = unthunk(dargs[1])
    if _is_zero(dots):
        return y, ZeroTangent()
    mats, first_vec, last_vec = _as_chain(list(arrays))
    total: Any = 0
    for i in range(len(mats)):
        d = _value(dots[i])
        if d is None:
            continue
        d = np.asarray(d)
        if i == 0 and first_vec:
            d = d[None, :]
        if i == len(mats) - 1 and last_vec:
            d = d[:, None]
        total = total + _chain([*mats[:i], d, *mats[i + 1:]])
    if isinstance(total, int):
        return y, ZeroTangent()
    if first_vec:
        total = total[0]
    if last_vec:
        total = total[..., 0]
    return y, ProjectTo(y)(total)


@rrule.register(np.linalg.multi_dot)
def multi_dot_rrule(arrays, *args, **kwargs):
    y = np.linalg.multi_dot(arrays, *args, **kwargs)
    project_arrays = ProjectTo(list(arrays))
    mats, first_vec, last_vec = _as_chain(list(arrays))

    def multi_dot_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), *_nots(args)
        y_bar = np.asarray(y_bar)
        if first_vec:
            y_bar = y_bar[None, ...]
        if last_vec:
            y_bar = y_bar[..., None]
        k = len(mats)
        bars = []
        for i in range(k):
            left = y_bar if i == 0 else _H(_chain(mats[:i])) @ y_bar
            bar = left if i == k - 1 else left @ _H(_chain(mats[i + 1:]))
            if i == 0 and first_vec:
                bar = bar[0]
            if i == k - 1 and last_vec:
                bar = bar[:, 0]
            bars.append(bar)
        return NoTangent(), project_arrays(bars), *_nots(args)

    return y, multi_dot_pullback


# ------------------------------------------------------------------------ tensorsolve, tensorinv


def _tensorsolve_layout(a: np.ndarray, b: np.ndarray, axes: Any) -> tuple:
    """(permutation NumPy applies to a, matrix shape, x shape)."""
    perm = list(range(a.ndim))
    if axes is not None:
        for k in axes:
            perm.remove(k)
            perm.insert(a.ndim, k)
    shape = tuple(a.shape[i] for i in perm)
    x_shape = shape[-(a.ndim - b.ndim):]
    n = int(np.prod(x_shape))
    return perm, (int(np.prod(b.shape)), n), x_shape


@frule.register(np.linalg.tensorsolve)
def tensorsolve_frule(dargs, a, b, *args, **kwargs):
    a_dot, b_dot = _value(dargs[1]), _value(dargs[2])
    y = np.linalg.tensorsolve(a, b, *args, **kwargs)
    if a_dot is None and b_dot is None:
        return y, ZeroTangent()
    perm, mshape, _ = _tensorsolve_layout(a, b, _options(args, kwargs, ("axes", None))["axes"])
    am = np.transpose(a, perm).reshape(mshape)
    rhs = np.zeros(mshape[0], dtype=np.result_type(y, np.float32))
    if b_dot is not None:
        rhs = rhs + np.reshape(b_dot, -1)
    if a_dot is not None:
        rhs = rhs - np.transpose(a_dot, perm).reshape(mshape) @ y.reshape(-1)
    return y, ProjectTo(y)(np.linalg.solve(am, rhs).reshape(y.shape))


@rrule.register(np.linalg.tensorsolve)
def tensorsolve_rrule(a, b, *args, **kwargs):
    y = np.linalg.tensorsolve(a, b, *args, **kwargs)
    perm, mshape, _ = _tensorsolve_layout(a, b, _options(args, kwargs, ("axes", None))["axes"])
    lu = _LU(_float(np.transpose(a, perm).reshape(mshape)))
    project_a, project_b = ProjectTo(a), ProjectTo(b)

    def tensorsolve_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), ZeroTangent(), *_nots(args)
        g = lu.solve(np.reshape(y_bar, (-1, 1)), adjoint=True)[:, 0]

        def a_cotangent() -> Any:
            am_bar = -np.outer(g, np.conj(y.reshape(-1)))
            shape = tuple(a.shape[i] for i in perm)
            return project_a(np.transpose(am_bar.reshape(shape), np.argsort(perm)))

        return (NoTangent(), Thunk(a_cotangent), project_b(g.reshape(np.shape(b))),
                *_nots(args))

    return y, tensorsolve_pullback


def _tensorinv_ind(args: tuple, kwargs: dict) -> int:
    return _options(args, kwargs, ("ind", 2))["ind"]


@frule.register(np.linalg.tensorinv)
def tensorinv_frule(dargs, a, *args, **kwargs):
    a_dot = _value(dargs[1])
    y = np.linalg.tensorinv(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    ind = _tensorinv_ind(args, kwargs)
    n = int(np.prod(a.shape[:ind]))
    ym = y.reshape(-1, n)
    y_dot = -(ym @ np.reshape(a_dot, (n, -1)) @ ym)
    return y, ProjectTo(y)(y_dot.reshape(y.shape))


@rrule.register(np.linalg.tensorinv)
def tensorinv_rrule(a, *args, **kwargs):
    y = np.linalg.tensorinv(a, *args, **kwargs)
    ind = _tensorinv_ind(args, kwargs)
    n = int(np.prod(a.shape[:ind]))
    ym = y.reshape(-1, n)
    project_a = ProjectTo(a)

    def tensorinv_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), *_nots(args)
        a_bar = -(_H(ym) @ np.reshape(y_bar, ym.shape) @ _H(ym))
        return NoTangent(), project_a(a_bar.reshape(np.shape(a))), *_nots(args)

    return y, tensorinv_pullback


# ------------------------------------------------------------------------ array-API helpers

non_differentiable(np.linalg.matrix_rank)


def _trace_eye(x: np.ndarray, offset: int) -> np.ndarray:
    return np.eye(x.shape[-2], x.shape[-1], k=offset, dtype=x.dtype)


@frule.register(np.linalg.trace)
def trace_frule(dargs, x, *, offset=0, dtype=None):
    x_dot = _value(dargs[1])
    y = np.linalg.trace(x, offset=offset, dtype=dtype)
    if x_dot is None:
        return y, ZeroTangent()
    return y, ProjectTo(y)(np.linalg.trace(np.asarray(x_dot), offset=offset))


@rrule.register(np.linalg.trace)
def trace_rrule(x, *, offset=0, dtype=None):
    y = np.linalg.trace(x, offset=offset, dtype=dtype)
    project_x = ProjectTo(x)

    def trace_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent()
        eye = _trace_eye(_float(x), offset)
        return NoTangent(), project_x(np.asarray(y_bar)[..., None, None] * eye)

    return y, trace_pullback


def _diagonal_cotangent(shape: tuple, dtype: Any, y_bar: np.ndarray, offset: int) -> np.ndarray:
    # y_bar[..., k] lands on (k + max(-offset, 0), k + max(offset, 0)): a product with a
    # 0/1 matrix, not an assignment, so an AD's traced y_bar stays differentiable
    k, s = y_bar.shape[-1], max(offset, 0)
    rows = np.eye(shape[-2], k, k=-max(-offset, 0), dtype=dtype)
    cols = y_bar[..., None, :] * rows  # column j: y_bar[..., j] in row j + max(-offset, 0)
    batch = np.shape(cols)[:-1]
    pad = [np.zeros((*batch, s), dtype=dtype), cols,
           np.zeros((*batch, shape[-1] - k - s), dtype=dtype)]
    return np.concatenate(pad, axis=-1)  # column j moves to j + max(offset, 0)


@frule.register(np.linalg.diagonal)
def diagonal_frule(dargs, x, *, offset=0):
    x_dot = _value(dargs[1])
    y = np.linalg.diagonal(x, offset=offset)
    if x_dot is None:
        return y, ZeroTangent()
    return y, ProjectTo(y)(np.linalg.diagonal(np.asarray(x_dot), offset=offset).copy())


@rrule.register(np.linalg.diagonal)
def diagonal_rrule(x, *, offset=0):
    y = np.linalg.diagonal(x, offset=offset)
    project_x = ProjectTo(x)

    def diagonal_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent()
        x_bar = _diagonal_cotangent(np.shape(x), _float(x).dtype, np.asarray(y_bar), offset)
        return NoTangent(), project_x(x_bar)

    return y, diagonal_pullback


@frule.register(np.linalg.matrix_transpose)
def matrix_transpose_frule(dargs, x):
    x_dot = _value(dargs[1])
    y = np.linalg.matrix_transpose(x)
    return y, (ZeroTangent() if x_dot is None else _T(np.asarray(x_dot)))


@rrule.register(np.linalg.matrix_transpose)
def matrix_transpose_rrule(x):
    y = np.linalg.matrix_transpose(x)
    project_x = ProjectTo(x)

    def matrix_transpose_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent()
        return NoTangent(), project_x(_T(np.asarray(y_bar)))

    return y, matrix_transpose_pullback


@frule.register(np.linalg.outer)
def outer_frule(dargs, x1, x2):
    d1, d2 = _value(dargs[1]), _value(dargs[2])
    y = np.linalg.outer(x1, x2)
    if d1 is None and d2 is None:
        return y, ZeroTangent()
    y_dot = 0
    if d1 is not None:
        y_dot = y_dot + np.outer(d1, x2)
    if d2 is not None:
        y_dot = y_dot + np.outer(x1, d2)
    return y, ProjectTo(y)(y_dot)


@rrule.register(np.linalg.outer)
def outer_rrule(x1, x2):
    y = np.linalg.outer(x1, x2)
    project_x1, project_x2 = ProjectTo(x1), ProjectTo(x2)

    def outer_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), ZeroTangent()
        return (NoTangent(), Thunk(lambda: project_x1(y_bar @ np.conj(x2))),
                Thunk(lambda: project_x2(_T(y_bar) @ np.conj(x1))))

    return y, outer_pullback


def _cross_axis(args: tuple, kwargs: dict) -> int:
    return _options(args, kwargs, ("axis", -1))["axis"]


@frule.register(np.linalg.cross)
def cross_frule(dargs, x1, x2, *args, **kwargs):
    d1, d2 = _value(dargs[1]), _value(dargs[2])
    y = np.linalg.cross(x1, x2, *args, **kwargs)
    if d1 is None and d2 is None:
        return y, ZeroTangent()
    axis = _cross_axis(args, kwargs)
    y_dot = 0
    if d1 is not None:
        y_dot = y_dot + np.cross(d1, x2, axis=axis)
    if d2 is not None:
        y_dot = y_dot + np.cross(x1, d2, axis=axis)
    return y, ProjectTo(y)(y_dot)


@rrule.register(np.linalg.cross)
def cross_rrule(x1, x2, *args, **kwargs):
    y = np.linalg.cross(x1, x2, *args, **kwargs)
    axis = _cross_axis(args, kwargs)
    project_x1, project_x2 = ProjectTo(x1), ProjectTo(x2)

    def cross_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), ZeroTangent(), *_nots(args)
        # <y_bar, a x b> = <conj(b) x y_bar, a> = <y_bar x conj(a), b>
        return (NoTangent(),
                Thunk(lambda: project_x1(np.cross(np.conj(x2), y_bar, axis=axis))),
                Thunk(lambda: project_x2(np.cross(y_bar, np.conj(x1), axis=axis))),
                *_nots(args))

    return y, cross_pullback


def _matmul_parts(x1: Any, x2: Any) -> tuple:
    a, b = np.asarray(x1), np.asarray(x2)
    return (a[None, :] if a.ndim == 1 else a), (b[:, None] if b.ndim == 1 else b), \
        a.ndim == 1, b.ndim == 1


@frule.register(np.linalg.matmul)
def matmul_frule(dargs, x1, x2):
    d1, d2 = _value(dargs[1]), _value(dargs[2])
    y = np.linalg.matmul(x1, x2)
    if d1 is None and d2 is None:
        return y, ZeroTangent()
    y_dot = 0
    if d1 is not None:
        y_dot = y_dot + np.matmul(d1, x2)
    if d2 is not None:
        y_dot = y_dot + np.matmul(x1, d2)
    return y, ProjectTo(y)(y_dot)


@rrule.register(np.linalg.matmul)
def matmul_rrule(x1, x2):
    y = np.linalg.matmul(x1, x2)
    a, b, vec1, vec2 = _matmul_parts(x1, x2)
    project_x1, project_x2 = ProjectTo(x1), ProjectTo(x2)

    def x1_cotangent(yb: np.ndarray) -> Any:
        g = yb @ _H(b)
        if vec1:
            g = np.sum(g, axis=tuple(range(g.ndim - 2)))[0]
        return project_x1(g)

    def x2_cotangent(yb: np.ndarray) -> Any:
        g = _H(a) @ yb
        if vec2:
            g = np.sum(g, axis=tuple(range(g.ndim - 2)))[:, 0]
        return project_x2(g)

    def matmul_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), ZeroTangent()
        yb = np.asarray(y_bar)
        if vec1:
            yb = yb[..., None, :]
        if vec2:
            yb = yb[..., None]
        return NoTangent(), Thunk(lambda: x1_cotangent(yb)), Thunk(lambda: x2_cotangent(yb))

    return y, matmul_pullback


def _vecdot_axis(kwargs: dict) -> int:
    return kwargs.get("axis", -1)


@frule.register(np.linalg.vecdot)
def vecdot_frule(dargs, x1, x2, **kwargs):
    d1, d2 = _value(dargs[1]), _value(dargs[2])
    y = np.linalg.vecdot(x1, x2, **kwargs)
    if d1 is None and d2 is None:
        return y, ZeroTangent()
    axis = _vecdot_axis(kwargs)
    y_dot = 0
    if d1 is not None:
        y_dot = y_dot + np.sum(np.conj(d1) * x2, axis=axis)
    if d2 is not None:
        y_dot = y_dot + np.sum(np.conj(x1) * d2, axis=axis)
    return y, ProjectTo(y)(y_dot)


@rrule.register(np.linalg.vecdot)
def vecdot_rrule(x1, x2, **kwargs):
    y = np.linalg.vecdot(x1, x2, **kwargs)
    axis = _vecdot_axis(kwargs)
    project_x1, project_x2 = ProjectTo(x1), ProjectTo(x2)

    def vecdot_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), ZeroTangent()
        yb = np.expand_dims(np.asarray(y_bar), axis)
        # y = sum(conj(x1) * x2): conjugate-linear in x1
        return (NoTangent(), Thunk(lambda: project_x1(np.conj(yb) * x2)),
                Thunk(lambda: project_x2(yb * x1)))

    return y, vecdot_pullback


def _tensordot_axes(a: np.ndarray, b: np.ndarray, axes: Any) -> tuple:
    if isinstance(axes, (int, np.integer)):
        k = int(axes)
        return list(range(a.ndim - k, a.ndim)), list(range(k))
    ax_a, ax_b = axes
    ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
    ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    return [int(i) % a.ndim for i in ax_a], [int(i) % b.ndim for i in ax_b]


@frule.register(np.linalg.tensordot)
def tensordot_frule(dargs, x1, x2, *args, **kwargs):
    d1, d2 = _value(dargs[1]), _value(dargs[2])
    y = np.linalg.tensordot(x1, x2, *args, **kwargs)
    if d1 is None and d2 is None:
        return y, ZeroTangent()
    axes = _options(args, kwargs, ("axes", 2))["axes"]
    y_dot = 0
    if d1 is not None:
        y_dot = y_dot + np.tensordot(d1, x2, axes)
    if d2 is not None:
        y_dot = y_dot + np.tensordot(x1, d2, axes)
    return y, ProjectTo(y)(y_dot)


@rrule.register(np.linalg.tensordot)
def tensordot_rrule(x1, x2, *args, **kwargs):
    y = np.linalg.tensordot(x1, x2, *args, **kwargs)
    a, b = np.asarray(x1), np.asarray(x2)
    ax_a, ax_b = _tensordot_axes(a, b, _options(args, kwargs, ("axes", 2))["axes"])
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    project_x1, project_x2 = ProjectTo(x1), ProjectTo(x2)

    def x1_cotangent(yb: np.ndarray) -> Any:
        # y[free_a, free_b] = sum a[free_a, ax_a] b[ax_b, free_b]
        g = np.tensordot(yb, np.conj(b), (list(range(len(free_a), yb.ndim)), free_b))
        # g's axes: free_a, then b's contracted axes in increasing order
        order = free_a + [ax_a[ax_b.index(j)] for j in sorted(ax_b)]
        return project_x1(np.transpose(g, np.argsort(order)))

    def x2_cotangent(yb: np.ndarray) -> Any:
        g = np.tensordot(np.conj(a), yb, (free_a, list(range(len(free_a)))))
        # g's axes: a's contracted axes in increasing order, then free_b
        order = [ax_b[ax_a.index(i)] for i in sorted(ax_a)] + free_b
        return project_x2(np.transpose(g, np.argsort(order)))

    def tensordot_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), ZeroTangent(), *_nots(args)
        yb = np.asarray(y_bar)
        return (NoTangent(), Thunk(lambda: x1_cotangent(yb)),
                Thunk(lambda: x2_cotangent(yb)), *_nots(args))

    return y, tensordot_pullback

