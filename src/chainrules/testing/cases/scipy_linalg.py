"""Rule cases for ``scipy.linalg`` (rules in ``chainrules.rules.scipy.linalg``).

Small well-conditioned inputs; the factor outputs (``cho_factor``,
``lu_factor``) are tested as SciPy returns them, and fed back into
``cho_solve``/``lu_solve`` whose cotangents w.r.t. the factors are checked
too. Complex eigenvectors of ``eigh`` are tested through the pullback with a
phase-blind output cotangent (their phase is not fixed by SciPy).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import scipy.linalg as sla

from chainrules.core import NoTangent, Tangent, frule, rrule, unthunk
from chainrules.testing import Case, arr, no_tangent, unsupported
from chainrules.testing.cases.numpy_linalg import (
    canonical_eig,
    herm,
    pd,
    sorted_eig,
    unsorted_eig,
    wc,
)

#: why the inv(assume_a=...) rows are skipped (the keyword is new in SciPy 1.17), or None
INV_ASSUME_A = unsupported("scipy.linalg.inv(assume_a=...)",
                           lambda: sla.inv(np.eye(2), assume_a="pos"))

C = ("float64", "float32", "complex128")
R = ("float64", "float32")
# logm of float32 input computes in float64 and warns about its accuracy
D = ("float64", "complex128")


def _name(f: Any, what: str) -> str:
    return f"scipy.linalg.{f.__name__}({what})"


def _named(case: Case) -> Case:
    """Name a row ``scipy.linalg.<f>(<kwargs>)`` (SciPy's functions live in private
    modules, which the default name would show)."""
    if case.name is not None:
        return case
    inner = ", ".join(f"{k}={v!r}" for k, v in case.kwargs.items())
    name = f"scipy.linalg.{case.f.__name__}" + (f"({inner})" if inner else "")
    return dataclasses.replace(case, name=name)


def _tri(rng: np.random.Generator, dt: Any, n: int, lower: bool) -> np.ndarray:
    """A full matrix whose ``lower``/upper triangle is well conditioned."""
    return wc(rng, dt, n) + (np.triu if lower else np.tril)(arr(rng, dt, (n, n)), 1 if lower
                                                            else -1)


def _cho(rng: np.random.Generator, dt: Any, lower: bool) -> tuple:
    c, low = sla.cho_factor(pd(rng, dt, 3), lower=lower)
    return (c, low)


def _pivoted(rng: np.random.Generator, dt: Any, shape: tuple) -> np.ndarray:
    return arr(rng, dt, shape) + 4 * np.flipud(np.eye(*shape[-2:], dtype=dt))


def _lu(rng: np.random.Generator, dt: Any) -> tuple:
    return sla.lu_factor(wc(rng, dt, 3) + np.flipud(np.eye(3, dtype=dt)))


def _gen_phase_blind(rng: np.random.Generator, dtype: Any, y: Any) -> Any:
    """Random (w_bar, v_bar) with v_bar orthogonal to the phase rotations i v_j."""
    w, v = y
    w_bar = rng.standard_normal(w.shape).astype(w.dtype)
    v_bar = (rng.standard_normal(v.shape) + 1j * rng.standard_normal(v.shape)).astype(v.dtype)
    im = np.sum(v.conj() * v_bar, axis=-2).imag / np.sum(np.abs(v) ** 2, axis=-2)
    return Tangent[tuple](w_bar, (v_bar - v * (1j * im)[None, :]).astype(v.dtype))


def _stacked(f: Any, *shapes: tuple) -> str | None:
    """Why a stacked-input case of ``f`` is skipped (SciPy before 1.16 takes no stacks)."""
    eye = np.eye(2)
    args = [np.broadcast_to(eye, (2, 2, 2)).copy() if s == "m" else np.ones(s) for s in shapes]
    return unsupported(f"stacked inputs to scipy.linalg.{f.__name__}", lambda: f(*args))


def _mixed_signs(rng: np.random.Generator, dt: Any) -> np.ndarray:
    """A non-normal matrix with eigenvalues in both half-planes, away from the imaginary axis
    (where ``signm`` jumps)."""
    return (np.diag([2.0, -1.5, 1.0]).astype(dt) + 0.3 * arr(rng, dt, (3, 3))).astype(dt)


def _eig_input(rng: np.random.Generator, dt: Any) -> np.ndarray:
    """A non-symmetric matrix with well separated real eigenvalues (real inputs keep real
    eigenvectors, so the real and complex rows test the same gauge)."""
    return (np.diag([1.0, 2.5, 4.0]).astype(dt) + 0.3 * arr(rng, dt, (3, 3))).astype(dt)


def eig_sorted(a: np.ndarray) -> tuple:
    """``scipy.linalg.eig(a)`` with the eigenpairs in a continuous order and sign (see
    ``numpy_linalg.eig_sorted``)."""
    w, v = sla.eig(a)
    return sorted_eig(w, v, *canonical_eig(w, v))


eig_sorted.tests = sla.eig  # type: ignore[attr-defined]


@frule.register(eig_sorted)
def _eig_sorted_frule(dargs, a):
    y, y_dot = frule((NoTangent(), dargs[1]), sla.eig, a)
    canon = canonical_eig(*y)
    out = sorted_eig(*y, *canon)
    if not isinstance(y_dot, Tangent):
        return out, y_dot
    return out, Tangent[tuple](*sorted_eig(*y_dot.backing, *canon))


@rrule.register(eig_sorted)
def _eig_sorted_rrule(a):
    res = rrule(sla.eig, a)
    if res is None:
        # no rule found for this call (under an outer trace, for a second derivative):
        # the AD then differentiates eig_sorted's own code, which calls sla.eig
        return None
    y, pullback = res
    order, sign = canonical_eig(*y)

    def eig_sorted_pullback(y_bar):
        y_bar = unthunk(y_bar)
        if not isinstance(y_bar, (Tangent, tuple)):
            return pullback(y_bar)
        items = tuple(y_bar) if isinstance(y_bar, tuple) else y_bar.backing
        return pullback(Tangent[tuple](unsorted_eig(items[0], order),
                                       unsorted_eig(items[1], order, sign)))

    return sorted_eig(*y, order, sign), eig_sorted_pullback


def _rotation(rng: np.random.Generator, dt: Any) -> np.ndarray:
    """A real matrix with a complex-conjugate pair of eigenvalues (near 1 +- 1.5i) and 3."""
    base = np.array([[1.0, 1.5, 0.0], [-1.5, 1.0, 0.0], [0.0, 0.0, 3.0]])
    return (base + 0.2 * arr(rng, dt, (3, 3))).astype(dt)


def _svd_phase_blind(rng: np.random.Generator, dtype: Any, y: Any) -> Any:
    """Random (u_bar, s_bar, vh_bar) blind to the joint phase of each pair (u_j, v_j)."""
    u, s, vh = y
    u_bar = (rng.standard_normal(u.shape) + 1j * rng.standard_normal(u.shape)).astype(u.dtype)
    im = np.sum(u.conj() * u_bar, axis=-2).imag
    u_bar = (u_bar - u * (1j * im)[None, :]).astype(u.dtype)
    return Tangent[tuple](u_bar, rng.standard_normal(s.shape).astype(s.dtype),
                          np.zeros_like(vh))


def _banded(rng: np.random.Generator, dt: Any, l: int, u: int, n: int) -> np.ndarray:
    """Band storage of a diagonally dominant matrix (bandwidths ``l``, ``u``)."""
    ab = arr(rng, dt, (l + u + 1, n))
    ab[u] += 4
    return ab


def _hbanded(rng: np.random.Generator, dt: Any, w: int, n: int, lower: bool) -> np.ndarray:
    """Band storage of a Hermitian positive-definite matrix (one triangle, ``w`` bands)."""
    ab = arr(rng, dt, (w + 1, n))
    ab[0 if lower else w] += 4 + 2 * w
    return ab


CASES: list[Case] = [
    # triangular and factor-based solves
    *[Case(sla.solve_triangular, (lambda lo: lambda rng, dt: (
        _tri(rng, dt, 3, lo), arr(rng, dt, (3, 2))))(lower),
        kwargs={"lower": lower, "trans": trans, "unit_diagonal": unit}, dtypes=C)
      for lower in (True, False) for trans in (0, 1, 2) for unit in (False, True)
      if not (unit and trans == 1)],
    Case(sla.solve_triangular, lambda rng, dt: (_tri(rng, dt, 3, False), arr(rng, dt, (3,))),
         dtypes=C, name=_name(sla.solve_triangular, "vector b")),
    Case(sla.solve_triangular, lambda rng, dt: (
        np.stack([_tri(rng, dt, 3, True) for _ in range(2)]), arr(rng, dt, (2, 3, 2))),
        kwargs={"lower": True, "trans": 2}, dtypes=C,
        name=_name(sla.solve_triangular, "stack, lower=True, trans=2"),
        skip=_stacked(sla.solve_triangular, "m", (2, 2, 1))),
    Case(sla.cholesky, lambda rng, dt: (pd(rng, dt, 3),), dtypes=C),
    Case(sla.cholesky, lambda rng, dt: (pd(rng, dt, 3, (2,)),), dtypes=C,
         name=_name(sla.cholesky, "stack"), skip=_stacked(sla.cholesky, "m")),
    Case(sla.cholesky, lambda rng, dt: (pd(rng, dt, 3),), kwargs={"lower": True}, dtypes=C),
    Case(sla.cho_factor, lambda rng, dt: (pd(rng, dt, 3),), dtypes=C),
    Case(sla.cho_factor, lambda rng, dt: (pd(rng, dt, 3),), kwargs={"lower": True}, dtypes=C),
    Case(sla.cho_solve, lambda rng, dt: (_cho(rng, dt, False), arr(rng, dt, (3, 2))),
         dtypes=C, name=_name(sla.cho_solve, "upper")),
    Case(sla.cho_solve, lambda rng, dt: (_cho(rng, dt, True), arr(rng, dt, (3,))),
         dtypes=C, name=_name(sla.cho_solve, "lower, vector b")),
    Case(sla.lu_factor, lambda rng, dt: (wc(rng, dt, 3) + np.flipud(np.eye(3, dtype=dt)),),
         dtypes=C),
    *[Case(sla.lu_solve, lambda rng, dt: (_lu(rng, dt), arr(rng, dt, (3, 2))),
           kwargs={"trans": t}, dtypes=C) for t in (0, 1, 2)],
    Case(sla.lu_solve, lambda rng, dt: (_lu(rng, dt), arr(rng, dt, (3,))), dtypes=C,
         name=_name(sla.lu_solve, "vector b")),
    Case(sla.lu, lambda rng, dt: (wc(rng, dt, 3) + np.flipud(np.eye(3, dtype=dt)),),
         dtypes=C),
    Case(sla.lu, lambda rng, dt: (wc(rng, dt, 3) + np.flipud(np.eye(3, dtype=dt)),),
         kwargs={"permute_l": True}, dtypes=C),
    Case(sla.lu, lambda rng, dt: (wc(rng, dt, 3) + np.flipud(np.eye(3, dtype=dt)),),
         kwargs={"p_indices": True}, dtypes=C),
    # rectangular: pivots well apart, rows swapped (the factors are smooth there)
    Case(sla.lu, lambda rng, dt: (_pivoted(rng, dt, (5, 3)),), dtypes=C,
         name=_name(sla.lu, "tall")),
    Case(sla.lu, lambda rng, dt: (_pivoted(rng, dt, (2, 3, 5)),), kwargs={"permute_l": True},
         dtypes=C, name=_name(sla.lu, "wide stack")),
    Case(sla.lu_factor, lambda rng, dt: (_pivoted(rng, dt, (5, 3)),), dtypes=C,
         name=_name(sla.lu_factor, "tall")),
    Case(sla.lu_factor, lambda rng, dt: (_pivoted(rng, dt, (2, 3, 5)),), dtypes=C,
         name=_name(sla.lu_factor, "wide stack")),
    # matrix functions
    Case(sla.expm, lambda rng, dt: (arr(rng, dt, (3, 3), -1, 1),), dtypes=C),
    Case(sla.expm, lambda rng, dt: (arr(rng, dt, (2, 3, 3), -1, 1),), dtypes=C,
         name=_name(sla.expm, "stack")),
    Case(sla.sqrtm, lambda rng, dt: (wc(rng, dt, 3),), dtypes=C),
    Case(sla.sqrtm, lambda rng, dt: (wc(rng, dt, 2, (2,)),), dtypes=C,
         name=_name(sla.sqrtm, "stack"), skip=_stacked(sla.sqrtm, "m")),
    Case(sla.sqrtm, lambda rng, dt: (pd(rng, dt, 3),), dtypes=C,
         name=_name(sla.sqrtm, "positive definite")),
    Case(sla.logm, lambda rng, dt: (wc(rng, dt, 2),), dtypes=D),
    Case(sla.logm, lambda rng, dt: (pd(rng, dt, 3),), dtypes=("float64",),
         name=_name(sla.logm, "positive definite")),
    # Sylvester and Lyapunov equations (spectra of A and -B kept apart)
    Case(sla.solve_sylvester, lambda rng, dt: (wc(rng, dt, 3), wc(rng, dt, 2),
                                               arr(rng, dt, (3, 2))), dtypes=C),
    Case(sla.solve_continuous_lyapunov, lambda rng, dt: (wc(rng, dt, 3), arr(rng, dt, (3, 3))),
         dtypes=C),
    # eigh: the default drivers (evr, gvx) flip eigenvector signs under perturbations
    # of order 1e-6, so raw vectors are tested with the divide-and-conquer drivers
    # (evd, gvd), whose signs are continuous; complex vectors via a phase-blind y_bar
    # (float64 only: in float32 their signs too flip within a finite difference's reach)
    Case(sla.eigh, lambda rng, dt: (herm(rng, dt, 3),), kwargs={"driver": "evd"},
         dtypes=("float64",)),
    Case(sla.eigh, lambda rng, dt: (herm(rng, dt, 3),),
         kwargs={"lower": False, "driver": "evd"}, dtypes=("float64",)),
    Case(sla.eigh, lambda rng, dt: (herm(rng, dt, 3), pd(rng, dt, 3)),
         kwargs={"driver": "gvd"}, dtypes=("float64",), name=_name(sla.eigh, "generalized")),
    Case(sla.eigh, lambda rng, dt: (herm(rng, dt, 3), pd(rng, dt, 3)),
         kwargs={"lower": False, "driver": "gvd"}, dtypes=("float64",),
         name=_name(sla.eigh, "generalized, upper")),
    Case(sla.eigh, lambda rng, dt: (herm(rng, dt, 4), pd(rng, dt, 4)),
         kwargs={"lower": False, "subset_by_index": (1, 2), "eigvals_only": True}, dtypes=C,
         name=_name(sla.eigh, "generalized values, upper, subset_by_index")),
    Case(sla.eigh, lambda rng, dt: (herm(rng, dt, 4),),
         kwargs={"subset_by_index": (1, 2), "driver": "evx"}, dtypes=R,
         name=_name(sla.eigh, "subset_by_index, evx")),
    # float64 only, as the other rows with raw generalized vectors: in float32 ?sygvx
    # flipped a vector's sign within the difference's reach (seed 26)
    Case(sla.eigh, lambda rng, dt: (herm(rng, dt, 4), pd(rng, dt, 4)),
         kwargs={"subset_by_value": (0.0, np.inf), "driver": "gvx", "lower": False},
         dtypes=("float64",), name=_name(sla.eigh, "generalized, subset_by_value, gvx")),
    Case(sla.eigh, lambda rng, dt: (herm(rng, dt, 3), pd(rng, dt, 3)),
         kwargs={"eigvals_only": True}, dtypes=C, name=_name(sla.eigh, "generalized values")),
    Case(sla.eigh, lambda rng, dt: (herm(rng, dt, 3),), kwargs={"driver": "evd"},
         dtypes=("complex128",), frule=False, output_tangent=_gen_phase_blind,
         name=_name(sla.eigh, "complex, phase-blind y_bar")),
    Case(sla.eigh, lambda rng, dt: (herm(rng, dt, 3), pd(rng, dt, 3)),
         kwargs={"driver": "gvd"}, dtypes=("complex128",), frule=False,
         output_tangent=_gen_phase_blind,
         name=_name(sla.eigh, "complex generalized, phase-blind y_bar")),
    # det, inv, solve
    Case(sla.det, lambda rng, dt: (wc(rng, dt, 3),), dtypes=C),
    Case(sla.det, lambda rng, dt: (wc(rng, dt, 3, (2,)),), dtypes=C,
         name=_name(sla.det, "stack")),
    Case(sla.inv, lambda rng, dt: (wc(rng, dt, 3),), dtypes=C),
    Case(sla.inv, lambda rng, dt: (wc(rng, dt, 3, (2,)),), dtypes=C,
         name=_name(sla.inv, "stack"), skip=_stacked(sla.inv, "m")),
    Case(sla.inv, lambda rng, dt: (herm(rng, dt, 3) + 5 * np.eye(3, dtype=dt),),
         kwargs={"assume_a": "pos", "lower": True}, dtypes=C, skip=INV_ASSUME_A),
    Case(sla.solve, lambda rng, dt: (wc(rng, dt, 3), arr(rng, dt, (3, 2))), dtypes=C),
    Case(sla.solve, lambda rng, dt: (wc(rng, dt, 3), arr(rng, dt, (3,))),
         kwargs={"transposed": True}, dtypes=R),
    Case(sla.solve, lambda rng, dt: (pd(rng, dt, 3), arr(rng, dt, (3, 2))),
         kwargs={"assume_a": "pos"}, dtypes=C),
    Case(sla.solve, lambda rng, dt: (wc(rng, dt, 3), arr(rng, dt, (3, 2))),
         kwargs={"assume_a": "sym", "lower": True}, dtypes=C),
    Case(sla.solve, lambda rng, dt: (herm(rng, dt, 3) + 5 * np.eye(3, dtype=dt),
                                     arr(rng, dt, (3,))),
         kwargs={"assume_a": "her"}, dtypes=C),
    Case(sla.solve, lambda rng, dt: (wc(rng, dt, 3), arr(rng, dt, (3, 2))),
         kwargs={"assume_a": "lower triangular"}, dtypes=C),
    Case(sla.solve, lambda rng, dt: (wc(rng, dt, 3), arr(rng, dt, (3, 2))),
         kwargs={"assume_a": "diagonal"}, dtypes=C),
    # block_diag: 2-d, 1-d (a row) and 0-d (1 x 1) blocks
    Case(sla.block_diag, lambda rng, dt: (arr(rng, dt, (2, 2)), arr(rng, dt, (3,)),
                                          arr(rng, dt, ()), arr(rng, dt, (1, 2))), dtypes=C),
    # matrix functions (rules in rules/scipy/linalg_matfuncs.py)
    *[Case(f, lambda rng, dt: (arr(rng, dt, (3, 3), -1, 1),), dtypes=C)
      for f in (sla.cosm, sla.sinm, sla.tanm, sla.coshm, sla.sinhm, sla.tanhm)],
    Case(sla.signm, lambda rng, dt: (_mixed_signs(rng, dt),), dtypes=C),
    Case(sla.fractional_matrix_power, lambda rng, dt: (pd(rng, dt, 3), 0.7), dtypes=D),
    Case(sla.fractional_matrix_power, lambda rng, dt: (wc(rng, dt, 3), -1.3), dtypes=D,
         name=_name(sla.fractional_matrix_power, "general, negative t")),
    # structured constructors (rules in rules/scipy/linalg_structured.py)
    Case(sla.toeplitz, lambda rng, dt: (arr(rng, dt, (3,)),), dtypes=C),
    Case(sla.toeplitz, lambda rng, dt: (arr(rng, dt, (3,)), arr(rng, dt, (4,))), dtypes=C,
         name=_name(sla.toeplitz, "c, r")),
    Case(sla.toeplitz, lambda rng, dt: (arr(rng, dt, (2, 3)),), dtypes=C,
         name=_name(sla.toeplitz, "stack"), skip=_stacked(sla.toeplitz, (2, 3))),
    Case(sla.circulant, lambda rng, dt: (arr(rng, dt, (4,)),), dtypes=C),
    Case(sla.hankel, lambda rng, dt: (arr(rng, dt, (3,)),), dtypes=C),
    Case(sla.hankel, lambda rng, dt: (arr(rng, dt, (3,)), arr(rng, dt, (2,))), dtypes=C,
         name=_name(sla.hankel, "c, r")),
    Case(sla.companion, lambda rng, dt: (arr(rng, dt, (4,), 0.5, 2.0),), dtypes=C),
    Case(sla.companion, lambda rng, dt: (arr(rng, dt, (2, 3), 0.5, 2.0),), dtypes=C,
         name=_name(sla.companion, "stack"), skip=_stacked(sla.companion, (2, 3))),
    # twins of numpy.linalg (rules in rules/scipy/linalg_decomp.py)
    Case(sla.svd, lambda rng, dt: (arr(rng, dt, (4, 3)),), kwargs={"full_matrices": False},
         dtypes=R),
    Case(sla.svd, lambda rng, dt: (arr(rng, dt, (3, 3)),), dtypes=R,
         name=_name(sla.svd, "square")),
    Case(sla.svd, lambda rng, dt: (arr(rng, dt, (4, 3)),), kwargs={"compute_uv": False},
         dtypes=C),
    Case(sla.svd, lambda rng, dt: (arr(rng, dt, (3, 4)),), kwargs={"full_matrices": False},
         dtypes=("complex128",), frule=False, output_tangent=_svd_phase_blind,
         name=_name(sla.svd, "complex, phase-blind y_bar")),
    Case(sla.svdvals, lambda rng, dt: (arr(rng, dt, (4, 3)),), dtypes=C),
    Case(sla.qr, lambda rng, dt: (arr(rng, dt, (4, 3)),), kwargs={"mode": "economic"},
         dtypes=C),
    Case(sla.qr, lambda rng, dt: (arr(rng, dt, (3, 3)),), dtypes=C,
         name=_name(sla.qr, "square, full")),
    Case(sla.qr, lambda rng, dt: (arr(rng, dt, (3, 5)),), dtypes=C,
         name=_name(sla.qr, "wide, full")),
    Case(sla.qr, lambda rng, dt: (arr(rng, dt, (5, 3)),), dtypes=C,
         name=_name(sla.qr, "tall, full")),
    Case(sla.qr, lambda rng, dt: (arr(rng, dt, (5, 3)),), kwargs={"pivoting": True},
         dtypes=C, name=_name(sla.qr, "tall, full, pivoting")),
    Case(sla.qr, lambda rng, dt: (arr(rng, dt, (4, 3)),), kwargs={"mode": "r"}, dtypes=C),
    Case(sla.qr, lambda rng, dt: (arr(rng, dt, (4, 3)),),
         kwargs={"mode": "economic", "pivoting": True}, dtypes=C),
    # through a wrapper blind to LAPACK's eigenvalue order and eigenvector signs (as
    # numpy.linalg.eig's rows: neither is continuous within a finite difference's reach)
    Case(eig_sorted, lambda rng, dt: (_eig_input(rng, dt),), dtypes=C,
         name="scipy eig_sorted (eigenpairs in a continuous order and sign)"),
    Case(sla.eigvals, lambda rng, dt: (_eig_input(rng, dt),), dtypes=C),
    Case(sla.eigvalsh, lambda rng, dt: (herm(rng, dt, 3),), dtypes=C),
    Case(sla.eigvalsh, lambda rng, dt: (herm(rng, dt, 3), pd(rng, dt, 3)), dtypes=C,
         name=_name(sla.eigvalsh, "generalized")),
    Case(sla.pinv, lambda rng, dt: (arr(rng, dt, (4, 3)),), dtypes=C),
    Case(sla.pinv, lambda rng, dt: (arr(rng, dt, (3, 4)),), kwargs={"return_rank": True},
         dtypes=R),
    Case(sla.norm, lambda rng, dt: (arr(rng, dt, (3, 4)),), dtypes=C),
    Case(sla.norm, lambda rng, dt: (arr(rng, dt, (3, 4)),), kwargs={"ord": 2}, dtypes=R),
    Case(sla.norm, lambda rng, dt: (arr(rng, dt, (3, 4)),), kwargs={"axis": 1}, dtypes=C),
    Case(sla.expm_frechet, lambda rng, dt: (arr(rng, dt, (3, 3), -1, 1),
                                            arr(rng, dt, (3, 3), -1, 1)), dtypes=C),
    Case(sla.expm_frechet, lambda rng, dt: (arr(rng, dt, (3, 3), -1, 1),
                                            arr(rng, dt, (3, 3), -1, 1)),
         kwargs={"compute_expm": False}, dtypes=R),
    # lstsq, polar (rules in rules/scipy/linalg_polar.py)
    Case(sla.lstsq, lambda rng, dt: (arr(rng, dt, (5, 3)), arr(rng, dt, (5,))), dtypes=C),
    Case(sla.lstsq, lambda rng, dt: (arr(rng, dt, (5, 3)), arr(rng, dt, (5, 2))), dtypes=C,
         name=_name(sla.lstsq, "matrix b")),
    Case(sla.lstsq, lambda rng, dt: (arr(rng, dt, (3, 4)), arr(rng, dt, (3,))), dtypes=R,
         name=_name(sla.lstsq, "wide")),
    Case(sla.polar, lambda rng, dt: (wc(rng, dt, 3),), dtypes=C),
    Case(sla.polar, lambda rng, dt: (wc(rng, dt, 3),), kwargs={"side": "left"}, dtypes=C),
    # banded solvers (rules in rules/scipy/linalg_banded.py)
    Case(sla.solve_banded, lambda rng, dt: (no_tangent((1, 2)), _banded(rng, dt, 1, 2, 5),
                                            arr(rng, dt, (5,))), dtypes=C),
    Case(sla.solve_banded, lambda rng, dt: (no_tangent((2, 0)), _banded(rng, dt, 2, 0, 4),
                                            arr(rng, dt, (4, 2))), dtypes=C,
         name=_name(sla.solve_banded, "lower, matrix b")),
    Case(sla.solveh_banded, lambda rng, dt: (_hbanded(rng, dt, 2, 5, False),
                                             arr(rng, dt, (5,))), dtypes=C),
    Case(sla.solveh_banded, lambda rng, dt: (_hbanded(rng, dt, 1, 4, True),
                                             arr(rng, dt, (4, 2))),
         kwargs={"lower": True}, dtypes=C),
    # funm: the derivative of func from the AD (rules in rules/scipy/linalg_funm.py)
    Case(sla.funm, lambda rng, dt: (_eig_input(rng, dt), no_tangent(np.sin)), dtypes=C),
    Case(sla.funm, lambda rng, dt: (_mixed_signs(rng, dt), no_tangent(np.exp)), dtypes=C,
         name=_name(sla.funm, "exp")),
    Case(sla.funm, lambda rng, dt: (_rotation(rng, dt), no_tangent(np.cos)), dtypes=C,
         name=_name(sla.funm, "complex eigenvalues")),
]
CASES = [_named(c) for c in CASES]
