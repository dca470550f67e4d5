"""The helpers the linear-algebra rules of ``numpy.linalg`` and ``scipy.linalg`` share.

Not a rule module (it registers nothing): matrix plumbing (``H``, ``diag``, options read
positionally or by keyword, items of tuple cotangents), the matrices LAPACK reads from
one triangle (``her_input`` and its adjoint), triangular and Sylvester solves. The
derivations of the factorizations are in ``_linalg_derivatives``. Importing this module
does not import SciPy; the functions that need it import it when called.

Example: the Hermitian matrix ``eigh(a, UPLO="L")`` reads.

>>> import numpy as np
>>> her_input(np.array([[1.0, 9.0], [2.0, 3.0]]), "L")
array([[1., 2.],
       [2., 3.]])
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from chainrules.core import LazyArrayError, NoTangent, Tangent, is_lazy_array, unthunk
from chainrules.rules import _kit as kit

# ----------------------------------------------------------------------------- structure


def scipy_linalg() -> Any:
    """scipy.linalg when installed (it is optional), else None."""
    try:
        import scipy.linalg as sla
    except ImportError:  # pragma: no cover - scipy is an optional extra
        return None
    return sla


def H(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2).conj()


def T(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def field(t: Any, name: str, index: int) -> Any:
    """Field ``name`` (item ``index``) of a structured (co)tangent; None when zero."""
    t = unthunk(t)
    if kit.is_zero(t):
        return None
    if isinstance(t, Tangent) and hasattr(t.primal_type, "_fields"):
        return kit.nonzero(getattr(t, name))
    return kit.nonzero(t[index])


def nots(args: tuple) -> tuple:
    return tuple(NoTangent() for _ in args)


def options(args: tuple, kwargs: dict, *spec: tuple[str, Any]) -> dict:
    """Options given positionally (``args``) or by keyword, with defaults."""
    out = {name: default for name, default in spec}
    for (name, _), value in zip(spec, args):
        out[name] = value
    out.update(kwargs)
    return out


def as_float(x: Any) -> np.ndarray:
    if type(x) is not np.ndarray and is_lazy_array(x):
        raise LazyArrayError("this NumPy linear-algebra function",
                             f"a dask array of shape {x.shape}")
    x = np.asarray(x)
    return x if x.dtype.kind in "fc" else x.astype(np.float64)


def diag_embed(v: np.ndarray) -> np.ndarray:
    n = v.shape[-1]
    return v[..., :, None] * np.eye(n, dtype=v.dtype)


def diag(x: np.ndarray) -> np.ndarray:
    return np.diagonal(x, axis1=-2, axis2=-1)


def mtrace(x: np.ndarray) -> Any:
    return np.trace(x, axis1=-2, axis2=-1)


def eye_like(a: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)


def rdot(a: np.ndarray, b: np.ndarray, axis: Any = None, keepdims: bool = False) -> Any:
    """Real inner product ``Re sum(conj(a) * b)``."""
    return np.sum((np.conj(a) * b).real, axis=axis, keepdims=keepdims)


def max_abs(v: np.ndarray) -> np.ndarray:
    m = np.max(np.abs(v), axis=-1) if v.shape[-1] else np.zeros(v.shape[:-1])
    return np.maximum(m, np.finfo(np.float64).tiny)


def outer_h(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``g @ y^H`` for stacks of matrices; a broadcast product for single columns
    (``matmul`` with an inner dimension of 1 is far slower than that)."""
    if g.shape[-1] == 1:
        return g * H(y)
    return g @ H(y)


def item(t: Any, index: int) -> Any:
    """Item ``index`` of a tuple (co)tangent; None when zero."""
    t = unthunk(t)
    return None if kit.is_zero(t) else kit.nonzero(t[index])


def col(b: np.ndarray) -> tuple:
    """``b`` as a matrix (a vector becomes one column) and whether it was a vector."""
    b = np.asarray(b)
    return (b[..., None], True) if b.ndim == 1 else (b, False)


def each(fn: Any, *arrays: np.ndarray) -> np.ndarray:
    """Apply a 2-D-only ``fn`` over the leading (stack) dimensions."""
    if arrays[0].ndim == 2:
        return fn(*arrays)
    batch = arrays[0].shape[:-2]
    out = [fn(*(a[idx] for a in arrays)) for idx in np.ndindex(*batch)]
    return np.stack(out).reshape(batch + out[0].shape)


# ----------------------------------------------------------------------------- triangles


def her_input(a: np.ndarray, uplo: str) -> np.ndarray:
    """The Hermitian matrix LAPACK sees when it reads triangle ``uplo`` of ``a``."""
    tri = np.tril if uplo.upper() == "L" else np.triu
    k = -1 if uplo.upper() == "L" else 1
    out = tri(a) + H(tri(a, k))
    if out.dtype.kind == "c":
        d = diag(out)
        out = out - diag_embed(1j * d.imag)
    return out


def her_cotangent(s: np.ndarray, uplo: str) -> np.ndarray:
    """Adjoint of ``her_input``: cotangent on the read triangle from one on the matrix."""
    tri = np.tril if uplo.upper() == "L" else np.triu
    k = -1 if uplo.upper() == "L" else 1
    out = tri(s, k) + tri(H(s), k)
    d = diag(s).real
    return out + diag_embed(d.astype(out.dtype))


KINDS = {
    None: "gen", "gen": "gen", "general": "gen",
    "sym": "sym", "symmetric": "sym",
    "her": "her", "hermitian": "her", "pos": "her", "positive definite": "her",
    "lower triangular": "lower", "upper triangular": "upper",
    "diagonal": "diag",
}


def structured(a: np.ndarray, kind: str, lower: bool) -> np.ndarray:
    """The matrix SciPy uses when it reads ``a`` as structure ``kind``."""
    tri = np.tril if lower else np.triu
    k = -1 if lower else 1
    if kind == "gen":
        return a
    if kind == "her":
        return her_input(a, "L" if lower else "U")
    if kind == "sym":
        return tri(a) + T(tri(a, k))
    if kind == "lower":
        return np.tril(a)
    if kind == "upper":
        return np.triu(a)
    return diag_embed(diag(a))


def structured_bar(s: np.ndarray, kind: str, lower: bool) -> np.ndarray:
    """Adjoint of `structured`."""
    tri = np.tril if lower else np.triu
    k = -1 if lower else 1
    if kind == "gen":
        return s
    if kind == "her":
        return her_cotangent(s, "L" if lower else "U")
    if kind == "sym":
        return tri(s) + tri(T(s), k)
    if kind == "lower":
        return np.tril(s)
    if kind == "upper":
        return np.triu(s)
    return diag_embed(diag(s))


# -------------------------------------------------------------------------------- solves


def inv_gaps(gaps: np.ndarray, scale: np.ndarray, dtype: Any) -> np.ndarray:
    """``1 / gaps`` off the diagonal; 0 on it and where the gap is at round-off level."""
    n = gaps.shape[-1]
    eps = np.finfo(np.dtype(dtype)).eps
    tol = n * eps * scale[..., None, None]
    keep = np.abs(gaps) > tol
    keep &= ~np.eye(n, dtype=bool)
    # where, not np.divide(out=, where=): the rule's code stays differentiable (Hessians)
    return np.where(keep, 1 / np.where(keep, gaps, 1), 0)


def tri_solve(t: np.ndarray, b: np.ndarray, lower: bool, trans: int = 0,
              unit: bool = False, side: str = "left") -> np.ndarray:
    """Solve ``op(T) X = B`` (``side="left"``) or ``X op(T) = B`` with ``T`` triangular
    (its other triangle ignored; its diagonal too with ``unit``); ``trans`` 0: ``T``,
    1: ``T^T`` (left side only), 2: ``T^H``."""
    if side == "right":
        # X op(T) = B  <=>  op(T)^H X^H = B^H
        return H(tri_solve(t, H(b), lower, 2 - trans, unit))
    sla = scipy_linalg()
    if sla is not None and type(t) is np.ndarray and type(b) is np.ndarray and t.ndim == 2:
        # one matrix (SciPy before 1.16 takes no stacks; an AD's traced values take the
        # np.linalg.solve path, which has a rule)
        return sla.solve_triangular(t, b, lower=lower, trans=trans, unit_diagonal=unit,
                                    check_finite=False)
    t = np.tril(t) if lower else np.triu(t)
    if unit:
        t = t - diag_embed(diag(t)) + np.eye(t.shape[-1], dtype=t.dtype)
    return np.linalg.solve(t if trans == 0 else (T(t) if trans == 1 else H(t)), b)


def finite_or_nan(fn: Any, *arrays: np.ndarray) -> np.ndarray:
    """``fn(*arrays)``, or all NaN where an input is not finite: the primal propagates
    NaN, while SciPy's Frechet and Sylvester solvers refuse it."""
    if all(np.all(np.isfinite(a)) for a in arrays):
        return fn(*arrays)
    shape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
    return np.full(shape, np.nan, dtype=np.result_type(*arrays, np.float64))


def sylvester(a: np.ndarray, b: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``X`` with ``A X + X B = Q`` (stacks solved one matrix at a time)."""
    return finite_or_nan(lambda a, b, q: each(
        lambda x, y, z: SylvesterSolver(x, y).solve(z), a, b, q), a, b, q)


class SylvesterSolver:
    """Bartels-Stewart as SciPy does it, keeping the Schur forms.

    Solves ``A X + X B = Q`` (``adjoint=False``) and ``A^H G + G B^H = R``
    (``adjoint=True``) with ``A = U T_A U^H`` and ``B^H = V T_B V^H`` computed
    once, so the pullback costs triangular Sylvester solves and products only.

    Real ``A`` and ``B`` have real quasi-triangular Schur forms, which LAPACK's complex
    ``?trsyl`` would read as triangular (SciPy's ``solve_sylvester`` does, and is wrong
    for a complex ``Q``): a complex right-hand side is then solved as its real and
    imaginary parts, and a complex ``A`` or ``B`` makes both forms complex triangular.
    """

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        self.a, self.b = a, b
        # An AD's traced values (a second derivative): no Schur forms (LAPACK needs
        # plain arrays); solve with solve_sylvester itself, which has a rule.
        self.plain = type(a) is np.ndarray and type(b) is np.ndarray
        if self.plain:
            sla = scipy_linalg()
            output = "complex" if np.iscomplexobj(a) or np.iscomplexobj(b) else "real"
            self.ta, self.u = sla.schur(a, output=output)
            self.tb, self.v = sla.schur(H(np.asarray(b)), output=output)

    def solve(self, q: np.ndarray, adjoint: bool = False) -> np.ndarray:
        sla = scipy_linalg()
        if not self.plain or type(q) is not np.ndarray:
            if adjoint:
                return sla.solve_sylvester(H(self.a), H(self.b), q)
            return sla.solve_sylvester(self.a, self.b, q)
        f = H(self.u) @ np.asarray(q) @ self.v
        if np.iscomplexobj(f) and not np.iscomplexobj(self.ta):
            y = self._trsyl(f.real, adjoint) + 1j * self._trsyl(f.imag, adjoint)
        else:
            y = self._trsyl(f, adjoint)
        return self.u @ y @ H(self.v)

    def _trsyl(self, f: np.ndarray, adjoint: bool) -> np.ndarray:
        (trsyl,) = scipy_linalg().get_lapack_funcs(("trsyl",), (self.ta, self.tb, f))
        if adjoint:
            # T_A^H Z + Z T_B = U^H R V, then G = U Z V^H
            y, scale, info = trsyl(self.ta, self.tb, f, trana="C")
        else:
            # T_A Y + Y T_B^H = U^H Q V, then X = U Y V^H
            y, scale, info = trsyl(self.ta, self.tb, f, tranb="C")
        if info < 0:  # pragma: no cover - argument errors only
            raise np.linalg.LinAlgError(f"?TRSYL: illegal value in argument {-info}")
        if info == 1:
            warnings.warn("solve_sylvester/solve_continuous_lyapunov: A and -B (or -A^H) "
                          "have (nearly) common eigenvalues; LAPACK perturbed them",
                          RuntimeWarning, stacklevel=4)
        return y / scale
