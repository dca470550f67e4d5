"""Rules for ``scipy.linalg`` (loaded only when SciPy imports).

Covered (frule and rrule each): ``solve_triangular``, ``cho_factor``,
``cho_solve``, ``eigh``
(standard and generalized, ``type=1``, subsets), ``det``, ``inv``,
``block_diag``, ``solve``, ``cholesky``. The other modules of this folder named
``linalg_*`` hold more of ``scipy.linalg``: ``linalg_lu`` (``lu``, ``lu_factor``,
``lu_solve``), ``linalg_decomp`` (``svd``, ``svdvals``, ``qr``,
``eig``, ``eigvals``, ``eigvalsh``, ``pinv``, ``norm``, ``expm_frechet``), ``linalg_polar``
(``lstsq``, ``polar``), ``linalg_matfuncs`` (``expm``, ``sqrtm``, ``logm``,
``solve_sylvester``, ``solve_continuous_lyapunov``, ``cosm``, ``sinm``, ``tanm``, ``coshm``,
``sinhm``, ``tanhm``, ``signm``, ``fractional_matrix_power``), ``linalg_structured``
(``toeplitz``, ``circulant``, ``hankel``, ``companion``), ``linalg_banded``
(``solve_banded``, ``solveh_banded``) and ``linalg_funm`` (``funm``, for ADs: the
derivative of its scalar function comes from ``rrule_via_ad`` / ``frule_via_ad``).

Conventions (as for ``numpy.linalg``, see ``chainrules.rules.numpy.linalg``):

- complex cotangents are ``dL/dRe Z + i dL/dIm Z``; pullbacks of linear maps
  are adjoints under ``<X, Y> = Re sum(conj(X) * Y)``;
- functions that read one triangle (``lower=``, ``assume_a`` in ``sym``,
  ``her``, ``pos``, triangular) are differentiated as functions of the entries
  they read: the others get zero cotangents (for ``her``/``pos`` the imaginary
  part of the diagonal too, which LAPACK ignores);
- factor outputs: ``cho_factor``'s ``c`` holds the factor in one triangle and
  ``a``'s own entries in the other (as SciPy up to 1.17 returns it; zeros from
  1.18, and the rules follow the installed SciPy); ``lower`` gets ``NoTangent``;
  ``cho_solve`` is differentiated w.r.t. the factor too (the LU factors: see
  ``linalg_lu``);
- ``expm`` uses ``expm_frechet``; ``sqrtm`` a Sylvester solve; ``logm`` the
  block-triangular identity ``log([[A, E], [0, A]]) = [[log A, L(A, E)], [0, log A]]``;
  the pullback of each is the Fréchet derivative at ``A^H`` (these functions
  have real Taylor coefficients);
- ``eigh``: degenerate eigenvalues as in NumPy's rule (``F = 0`` for gaps at
  round-off level); generalized vectors are ``B``-orthonormal; complex vectors
  have a free phase (frule: ``Im diag(V^H B dV) = 0``);
- ``eigh(type=2 or 3)``, ``solve``/``inv`` with ``assume_a`` banded or
  tridiagonal (and ``inv(assume_a="diagonal")``): ``not_implemented``.

Example: ``det``'s pullback is ``det(A) A^-H``.

>>> import numpy as np
>>> import scipy.linalg as sla
>>> from chainrules import rrule
>>> y, det_pullback = rrule(sla.det, np.diag([2.0, 4.0]))
>>> det_pullback(1.0)[1]
array([[ 4.,  0.],
       [-0.,  2.]])
"""


from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, Thunk, ZeroTangent, frule, not_implemented, rrule
from chainrules.rules import _kit as kit
from chainrules.rules import _linalg_derivatives as deriv
from chainrules.rules import _linalg_kernel as kernel

# ------------------------------------------------------------------------------- helpers


def _trans_code(trans: Any) -> int:
    return {"N": 0, "T": 1, "C": 2, 0: 0, 1: 1, 2: 2}[trans]


def _op(x: np.ndarray, trans: int) -> np.ndarray:
    return x if trans == 0 else (kernel.T(x) if trans == 1 else kernel.H(x))


# ---------------------------------------------------------------------- solve_triangular


def _st_opts(args: tuple, kwargs: dict) -> tuple:
    o = kernel.options(args, kwargs, ("trans", 0), ("lower", False), ("unit_diagonal", False))
    return _trans_code(o["trans"]), bool(o["lower"]), bool(o["unit_diagonal"])


def _tri_part(a: np.ndarray, lower: bool, unit: bool) -> np.ndarray:
    k = (-1 if lower else 1) if unit else 0
    return np.tril(a, k) if lower else np.triu(a, k)


@frule.register(sla.solve_triangular)
def solve_triangular_frule(dargs, a, b, *args, **kwargs):
    a_dot, b_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
    y = sla.solve_triangular(a, b, *args, **kwargs)
    if a_dot is None and b_dot is None:
        return y, ZeroTangent()
    trans, lower, unit = _st_opts(args, kwargs)
    ym, vec = kernel.col(y)
    rhs = 0
    if b_dot is not None:
        rhs = kernel.col(b_dot)[0]
    if a_dot is not None:
        rhs = rhs - _op(_tri_part(a_dot, lower, unit), trans) @ ym
    y_dot = kernel.tri_solve(a, np.asarray(rhs), lower, trans, unit)
    return y, ProjectTo(y)(y_dot[..., 0] if vec else y_dot)


@rrule.register(sla.solve_triangular)
def solve_triangular_rrule(a, b, *args, **kwargs):
    y = sla.solve_triangular(a, b, *args, **kwargs)
    trans, lower, unit = _st_opts(args, kwargs)
    project_a, project_b = ProjectTo(a), ProjectTo(b)
    ym, vec = kernel.col(y)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), ZeroTangent(), *kernel.nots(args)))
    def solve_triangular_pullback(y_bar):
        yb = kernel.col(y_bar)[0]
        # g = op(T)^-H y_bar
        if trans == 0:
            g = kernel.tri_solve(a, yb, lower, 2, unit)
        elif trans == 2:
            g = kernel.tri_solve(a, yb, lower, 0, unit)
        else:
            g = np.conj(kernel.tri_solve(a, np.conj(yb), lower, 0, unit))
        b_bar = project_b(g[..., 0] if vec else g)
        a_bar = Thunk(lambda: project_a(_tri_part(_op(-kernel.outer_h(g, ym), trans), lower, unit)))
        return NoTangent(), a_bar, b_bar, *kernel.nots(args)

    return y, solve_triangular_pullback


# ------------------------------------------------------- cholesky, cho_factor, cho_solve


def _lower_opt(args: tuple, kwargs: dict) -> bool:
    return bool(kernel.options(args, kwargs, ("lower", False))["lower"])


@frule.register(sla.cholesky)
def cholesky_frule(dargs, a, *args, **kwargs):
    y = sla.cholesky(a, *args, **kwargs)
    _, y_dot = kit.delegate(frule, np.linalg.cholesky, ((NoTangent(), dargs[1]),), (a,),
                            {"upper": not _lower_opt(args, kwargs)})
    return y, ProjectTo(y)(y_dot)


@rrule.register(sla.cholesky)
def cholesky_rrule(a, *args, **kwargs):
    y = sla.cholesky(a, *args, **kwargs)
    _, pullback = kit.delegate(rrule, np.linalg.cholesky, (), (a,),
                               {"upper": not _lower_opt(args, kwargs)})

    def cholesky_pullback(y_bar):
        return NoTangent(), pullback(y_bar)[1], *kernel.nots(args)

    return y, cholesky_pullback


_CHO_KEEPS_OTHER = bool(sla.cho_factor(np.array([[2.0, 1.0], [1.0, 2.0]]))[0][1, 0] != 0)


def _other(x: np.ndarray, lower: bool) -> Any:
    """The strict triangle that ``cho_factor`` leaves as ``a`` had it (0 when SciPy
    zeroes it)."""
    if not _CHO_KEEPS_OTHER:
        return 0
    return np.triu(x, 1) if lower else np.tril(x, -1)


@frule.register(sla.cho_factor)
def cho_factor_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    y = sla.cho_factor(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    lower = _lower_opt(args, kwargs)
    _, f_dot = kit.delegate(frule, np.linalg.cholesky, ((NoTangent(), a_dot),), (a,),
                            {"upper": not lower})
    c_dot = ProjectTo(y[0])(core.unthunk(f_dot) + _other(np.asarray(a_dot), lower))
    return y, core.Tangent[tuple](c_dot, NoTangent())


@rrule.register(sla.cho_factor)
def cho_factor_rrule(a, *args, **kwargs):
    y = sla.cho_factor(a, *args, **kwargs)
    lower = _lower_opt(args, kwargs)
    _, pullback = kit.delegate(rrule, np.linalg.cholesky, (), (a,), {"upper": not lower})
    project_a = ProjectTo(a)

    def cho_factor_pullback(y_bar):
        c_bar = kernel.item(y_bar, 0)
        if c_bar is None:
            return NoTangent(), ZeroTangent(), *kernel.nots(args)
        tri = np.tril if lower else np.triu
        a_bar = core.unthunk(pullback(tri(c_bar))[1]) + _other(c_bar, lower)
        return NoTangent(), project_a(a_bar), *kernel.nots(args)

    return y, cho_factor_pullback


def _cho_parts(c_and_lower: tuple) -> tuple:
    c, lower = c_and_lower
    c = np.asarray(c)
    return c, bool(lower), (np.tril(c) if lower else np.triu(c))


@frule.register(sla.cho_solve)
def cho_solve_frule(dargs, c_and_lower, b, *args, **kwargs):
    y = sla.cho_solve(c_and_lower, b, *args, **kwargs)
    c_dot = kernel.item(dargs[1], 0)
    b_dot = kit.nonzero(dargs[2])
    if c_dot is None and b_dot is None:
        return y, ZeroTangent()
    c, lower, f = _cho_parts(c_and_lower)
    ym, vec = kernel.col(y)
    rhs = 0
    if b_dot is not None:
        rhs = kernel.col(b_dot)[0]
    if c_dot is not None:
        f_dot = np.tril(c_dot) if lower else np.triu(c_dot)
        # A = L L^H (lower) or U^H U (upper)
        a_dot = (
            f_dot @ kernel.H(f) + f @ kernel.H(f_dot)
            if lower
            else kernel.H(f_dot) @ f + kernel.H(f) @ f_dot
        )
        rhs = rhs - a_dot @ ym
    y_dot = sla.cho_solve((c, lower), np.asarray(rhs), check_finite=False)
    return y, ProjectTo(y)(y_dot[..., 0] if vec else y_dot)


@rrule.register(sla.cho_solve)
def cho_solve_rrule(c_and_lower, b, *args, **kwargs):
    y = sla.cho_solve(c_and_lower, b, *args, **kwargs)
    c, lower, f = _cho_parts(c_and_lower)
    project_c, project_b = ProjectTo(c), ProjectTo(b)
    ym, vec = kernel.col(y)

    def c_cotangent(g: np.ndarray) -> Any:
        a_bar = -kernel.outer_h(g, ym)
        s = a_bar + kernel.H(a_bar)
        return project_c(np.tril(s @ f) if lower else np.triu(f @ s))

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), ZeroTangent(), *kernel.nots(args)))
    def cho_solve_pullback(y_bar):
        g = sla.cho_solve((c, lower), kernel.col(y_bar)[0], check_finite=False)
        c_bar = Thunk(lambda: core.Tangent[tuple](c_cotangent(g), NoTangent()))
        return NoTangent(), c_bar, project_b(g[..., 0] if vec else g), *kernel.nots(args)

    return y, cho_solve_pullback


# ---------------------------------------------------------------------------------- eigh


def _eigh_opts(args: tuple, kwargs: dict) -> dict:
    o = kernel.options(args, kwargs, ("b", None))
    o.setdefault("lower", True)
    o.setdefault("eigvals_only", False)
    o.setdefault("type", 1)
    return o


def _eigh_full(a: Any, o: dict, y: Any) -> tuple:
    """All eigenpairs and the span ``(start, stop)`` of those the call returned (``y``).

    The returned vectors replace their counterparts so that signs and phases,
    which LAPACK drivers choose differently, are those of ``y``. Nothing is written
    into an array (a higher-order derivative runs this on traced values).
    """
    full = o.get("subset_by_index") is None and o.get("subset_by_value") is None
    if full and not o["eigvals_only"]:
        w, v = y
        return w, v, (0, np.shape(w)[-1])
    w, v = sla.eigh(a, o["b"], lower=o["lower"], type=1, check_finite=False)
    n = np.shape(w)[-1]
    if o.get("subset_by_index") is not None:
        lo, hi = o["subset_by_index"]
        span = (int(lo), int(hi) + 1)
    elif o.get("subset_by_value") is not None:
        lo, hi = o["subset_by_value"]
        inside = np.flatnonzero((w > lo) & (w <= hi))  # ascending w: one run
        span = (int(inside[0]), int(inside[-1]) + 1) if inside.size else (0, 0)
    else:
        span = (0, n)
    if not o["eigvals_only"]:
        s, e = span
        v = np.concatenate([v[:, :s], y[1], v[:, e:]], axis=1)
    return w, v, span


def _widen(part: Any, n: int, span: tuple, dtype: Any) -> Any:
    """``part`` (the entries ``span`` of the last axis) within zeros of length ``n``."""
    s, e = span
    part = part.astype(dtype) if np.result_type(part.dtype, dtype) != part.dtype else part
    if (s, e) == (0, n):
        return part
    lead = np.shape(part)[:-1]
    return np.concatenate([np.zeros((*lead, s), dtype), part, np.zeros((*lead, n - e), dtype)],
                          axis=-1)


_EIGH_TYPE = "eigh(type=2 or 3): derivative not written (only type=1, A v = w B v)"


@frule.register(sla.eigh)
def eigh_frule(dargs, a, *args, **kwargs):
    y = sla.eigh(a, *args, **kwargs)
    a_dot = kit.nonzero(dargs[1])
    b_dot = kit.nonzero(dargs[2]) if len(dargs) > 2 else None
    if a_dot is None and b_dot is None:
        return y, ZeroTangent()
    o = _eigh_opts(args, kwargs)
    if o["type"] != 1:
        return y, not_implemented(_EIGH_TYPE)
    w, v, (start, stop) = _eigh_full(a, o, y)
    uplo_kind = ("her", bool(o["lower"]))
    m_a = 0 if a_dot is None else kernel.H(v) @ kernel.structured(np.asarray(a_dot), *uplo_kind) @ v
    m_b = 0 if b_dot is None else kernel.H(v) @ kernel.structured(np.asarray(b_dot), *uplo_kind) @ v
    m_a, m_b = np.asarray(m_a), np.asarray(m_b)
    w_dot = (np.real(kernel.diag(m_a)) if m_a.ndim else 0) - (
        w * np.real(kernel.diag(m_b)) if m_b.ndim else 0)
    w_dot = ProjectTo(w[start:stop])(np.broadcast_to(w_dot, w.shape)[start:stop])
    if o["eigvals_only"]:
        return y, w_dot
    c = deriv.eigh_gaps(w) * (m_a - (m_b * w[None, :] if m_b.ndim else 0))
    if m_b.ndim:
        c = c - 0.5 * kernel.diag_embed(np.real(kernel.diag(m_b)).astype(c.dtype))
    v_dot = (v @ c)[:, start:stop]
    return y, core.Tangent[tuple](w_dot, ProjectTo(y[1])(v_dot))


@rrule.register(sla.eigh)
def eigh_rrule(a, *args, **kwargs):
    y = sla.eigh(a, *args, **kwargs)
    o = _eigh_opts(args, kwargs)
    project_a = ProjectTo(a)
    b = o["b"]
    project_b = ProjectTo(b) if b is not None else None
    b_positional = len(args) > 0

    def eigh_pullback(y_bar):
        if o["eigvals_only"]:
            w_bar, v_bar = kit.nonzero(y_bar), None
        else:
            w_bar, v_bar = kernel.item(y_bar, 0), kernel.item(y_bar, 1)
        rest = kernel.nots(args[1:]) if b_positional else kernel.nots(args)
        b_out = (ZeroTangent(),) if b_positional else ()
        if w_bar is None and v_bar is None:
            return NoTangent(), ZeroTangent(), *b_out, *rest
        if o["type"] != 1:
            b_out = (not_implemented(_EIGH_TYPE),) if b_positional else ()
            return NoTangent(), not_implemented(_EIGH_TYPE), *b_out, *rest
        w, v, span = _eigh_full(a, o, y)
        n = np.shape(w)[-1]
        wb = np.zeros(n) if w_bar is None else _widen(np.real(w_bar), n, span, np.float64)
        g = np.zeros((n, n), dtype=v.dtype)
        if v_bar is not None:
            g = kernel.H(v) @ _widen(v_bar, n, span, v.dtype)
        fg = deriv.eigh_gaps(w) * g
        lower = bool(o["lower"])

        def a_cotangent() -> Any:
            m_a = kernel.diag_embed(wb.astype(v.dtype)) + fg
            return project_a(kernel.structured_bar(v @ m_a @ kernel.H(v), "her", lower))

        def b_cotangent() -> Any:
            m_b = -kernel.diag_embed((wb * w).astype(v.dtype)) - fg * w[None, :]
            m_b = m_b - 0.5 * kernel.diag_embed(np.real(kernel.diag(g)).astype(v.dtype))
            return project_b(kernel.structured_bar(v @ m_b @ kernel.H(v), "her", lower))

        if b_positional:
            return NoTangent(), Thunk(a_cotangent), Thunk(b_cotangent), *rest
        return NoTangent(), a_cotangent(), *rest

    return y, eigh_pullback


# ----------------------------------------------------------------------- det, inv, solve


@frule.register(sla.det)
def det_frule(dargs, a, *args, **kwargs):
    y = sla.det(a, *args, **kwargs)
    _, y_dot = kit.delegate(frule, np.linalg.det, ((NoTangent(), dargs[1]),), (a,), {})
    # SciPy returns float64 for float32 input where NumPy keeps float32
    return y, ProjectTo(y)(y_dot)


@rrule.register(sla.det)
def det_rrule(a, *args, **kwargs):
    y = sla.det(a, *args, **kwargs)
    _, pullback = kit.delegate(rrule, np.linalg.det, (), (a,), {})

    def det_pullback(y_bar):
        return NoTangent(), pullback(y_bar)[1], *kernel.nots(args)

    return y, det_pullback


def _kind(kwargs: dict) -> tuple:
    kind = kernel.KINDS.get(kwargs.get("assume_a"))
    return kind, bool(kwargs.get("lower", False))


def _not_structured(kwargs: dict) -> Any:
    return not_implemented(f"assume_a={kwargs.get('assume_a')!r}: derivative not written")


@frule.register(sla.inv)
def inv_frule(dargs, a, *args, **kwargs):
    y = sla.inv(a, *args, **kwargs)
    a_dot = kit.nonzero(dargs[1])
    if a_dot is None:
        return y, ZeroTangent()
    kind, lower = _kind(kwargs)
    if kind in (None, "diag"):
        return y, _not_structured(kwargs)
    return y, ProjectTo(y)(-(y @ kernel.structured(np.asarray(a_dot), kind, lower) @ y))


@rrule.register(sla.inv)
def inv_rrule(a, *args, **kwargs):
    y = sla.inv(a, *args, **kwargs)
    kind, lower = _kind(kwargs)
    project_a = ProjectTo(a)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
    def inv_pullback(y_bar):
        if kind in (None, "diag"):
            return NoTangent(), _not_structured(kwargs), *kernel.nots(args)
        s = -(kernel.H(y) @ y_bar @ kernel.H(y))
        return NoTangent(), project_a(kernel.structured_bar(s, kind, lower)), *kernel.nots(args)

    return y, inv_pullback


def _solve_opts(args: tuple, kwargs: dict) -> tuple:
    o = kernel.options(args, kwargs, ("lower", False), ("overwrite_a", False),
                 ("overwrite_b", False), ("check_finite", True), ("assume_a", None),
                 ("transposed", False))
    return kernel.KINDS.get(o["assume_a"]), bool(o["lower"]), bool(o["transposed"]), o


class _Solver:
    """Solves with the structured matrix ``M`` (``M^T`` if transposed) and its adjoint;
    a single matrix is LU-factored once and the factors are reused."""

    def __init__(self, a: np.ndarray, kind: str, lower: bool, transposed: bool) -> None:
        m = kernel.structured(np.asarray(a), kind, lower)
        self.m = kernel.T(m) if transposed else m
        self.factors = sla.lu_factor(self.m, check_finite=False) if self.m.ndim == 2 else None

    def solve(self, b: np.ndarray, adjoint: bool = False) -> np.ndarray:
        if self.factors is not None:
            return sla.lu_solve(self.factors, b, trans=2 if adjoint else 0, check_finite=False)
        return np.linalg.solve(kernel.H(self.m) if adjoint else self.m, b)


@frule.register(sla.solve)
def solve_frule(dargs, a, b, *args, **kwargs):
    y = sla.solve(a, b, *args, **kwargs)
    a_dot, b_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
    if a_dot is None and b_dot is None:
        return y, ZeroTangent()
    kind, lower, transposed, _ = _solve_opts(args, kwargs)
    if kind is None:
        return y, _not_structured(kwargs)
    solver = _Solver(a, kind, lower, transposed)
    ym, vec = kernel.col(y)
    rhs = 0
    if b_dot is not None:
        rhs = kernel.col(b_dot)[0]
    if a_dot is not None:
        m_dot = kernel.structured(np.asarray(a_dot), kind, lower)
        rhs = rhs - (kernel.T(m_dot) if transposed else m_dot) @ ym
    y_dot = solver.solve(np.asarray(rhs))
    return y, ProjectTo(y)(y_dot[..., 0] if vec else y_dot)


@rrule.register(sla.solve)
def solve_rrule(a, b, *args, **kwargs):
    y = sla.solve(a, b, *args, **kwargs)
    kind, lower, transposed, o = _solve_opts(args, kwargs)
    solver = _Solver(a, kind, lower, transposed) if kind is not None else None
    project_a, project_b = ProjectTo(a), ProjectTo(b)
    ym, vec = kernel.col(y)

    def a_cotangent(g: np.ndarray) -> Any:
        m_bar = -kernel.outer_h(g, ym)
        return project_a(
            kernel.structured_bar(kernel.T(m_bar) if transposed else m_bar, kind, lower)
        )

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), ZeroTangent(), *kernel.nots(args)))
    def solve_pullback(y_bar):
        if solver is None:
            return (NoTangent(), _not_structured(o), _not_structured(o), *kernel.nots(args))
        g = solver.solve(kernel.col(y_bar)[0], adjoint=True)
        return (NoTangent(), Thunk(lambda: a_cotangent(g)),
                project_b(g[..., 0] if vec else g), *kernel.nots(args))

    return y, solve_pullback


# ---------------------------------------------------------------------------- block_diag


def _block_shapes(arrs: tuple) -> list:
    out = []
    for x in arrs:
        s = np.shape(x)
        out.append((1, 1) if len(s) == 0 else ((1, s[0]) if len(s) == 1 else s))
    return out


@frule.register(sla.block_diag)
def block_diag_frule(dargs, *arrs):
    y = sla.block_diag(*arrs)
    dots = [kit.nonzero(d) for d in dargs[1:]]
    if all(d is None for d in dots):
        return y, ZeroTangent()
    parts = [np.zeros(np.shape(x), dtype=y.dtype) if d is None else np.asarray(d)
             for x, d in zip(arrs, dots)]
    return y, ProjectTo(y)(sla.block_diag(*parts))


@rrule.register(sla.block_diag)
def block_diag_rrule(*arrs):
    y = sla.block_diag(*arrs)
    projects = [ProjectTo(x) for x in arrs]
    shapes = _block_shapes(arrs)

    @kit.zero_guard(lambda: ((NoTangent(), *(ZeroTangent() for _ in arrs))))
    def block_diag_pullback(y_bar):
        bars = []
        r = c = 0
        for x, (m, n), project in zip(arrs, shapes, projects):
            bars.append(project(np.reshape(y_bar[r:r + m, c:c + n], np.shape(x))))
            r, c = r + m, c + n
        return (NoTangent(), *bars)

    return y, block_diag_pullback
