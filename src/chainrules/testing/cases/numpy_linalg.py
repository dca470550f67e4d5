"""Rule cases for ``numpy.linalg`` (rules in ``chainrules.rules.numpy.linalg``).

Inputs are small (2-5), well conditioned, and include stacks of matrices.
Eigen- and singular vectors of complex matrices carry a free phase that
LAPACK fixes in an undocumented way, so ``svd``'s raw outputs are tested only
through the pullback with a phase-blind output cotangent (``_svd_bar``), and both
``eigh`` and ``svd`` through the gauge-invariant wrappers ``eigh_abs2`` /
``svd_abs2`` (``|V|**2`` elementwise). Real vectors of ``eigh``/``svd``
(sign held fixed) are tested raw.

Every row passes at every seed: spectra are well separated (`herm`, `separated`),
so vectors neither rotate inside a near-degenerate eigenspace nor change their
gauge (for ``eig``: which component is largest) within the reach of a float32
finite difference (a few 1e-3); the order in which LAPACK returns ``eig``'s
eigenvalues (in float32) and the signs of its eigenvectors (in every dtype) are not
continuous however separated the eigenvalues are, so ``eig`` is tested through
`eig_sorted` (and float32 ``eigvals`` through `eigvals_sorted`). Norms with
kinks (``ord=±1``, ``±inf``, ``cond`` with ``p=1``/``inf``) take inputs far from
them (`rows_apart`, `entries_apart`, `cond_input`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.core import NoTangent, Tangent, frule, rrule, unthunk
from chainrules.testing import Case, arr, positive, spd, well_conditioned

C = ("float64", "float32", "complex128")
C64 = ("float64", "complex128")
R = ("float64", "float32")


def _stack(make: Any, rng: np.random.Generator, dtype: Any, n: int, batch: tuple) -> Any:
    if not batch:
        return make(rng, dtype, n)
    mats = [make(rng, dtype, n) for _ in range(int(np.prod(batch)))]
    return np.stack(mats).reshape((*batch, n, n))


def wc(rng: np.random.Generator, dtype: Any, n: int, batch: tuple = ()) -> Any:
    """Well-conditioned square matrix (stack)."""
    return _stack(well_conditioned, rng, dtype, n, batch)


def pd(rng: np.random.Generator, dtype: Any, n: int, batch: tuple = ()) -> Any:
    """Hermitian positive-definite matrix (stack)."""
    return _stack(spd, rng, dtype, n, batch)


def herm(rng: np.random.Generator, dtype: Any, n: int, batch: tuple = ()) -> Any:
    """Hermitian matrix (stack) whose eigenvalues are at least 1.1 apart and 0.55 away
    from 0 (``w = 1.5 k - 1.5 (n // 2) + 0.75`` plus a jitter under 0.2), in a random
    unitary basis: eigenvectors stay far from a degenerate (rotating) pair, and
    ``subset_by_value`` bounds at 0 far from an eigenvalue, at any seed."""
    return _hermitian_with(rng, dtype, 1.5 * np.arange(n) - 1.5 * (n // 2) + 0.75, batch)


def herm_abs(rng: np.random.Generator, dtype: Any, n: int, batch: tuple = ()) -> Any:
    """Hermitian matrix (stack) for ``svd(hermitian=True)``: eigenvalues ``-3, 1, 2`` (and
    ``-4.5``, ``6`` for larger ``n``) plus a jitter under 0.2, so the singular values (their
    magnitudes) stay at least 0.6 apart and the signs are fixed at any seed."""
    return _hermitian_with(rng, dtype, np.array([-3.0, 1.0, 2.0, -4.5, 6.0])[:n], batch)


def _hermitian_with(rng: np.random.Generator, dtype: Any, w: np.ndarray, batch: tuple) -> Any:
    n = len(w)
    w = w + rng.uniform(-0.2, 0.2, (*batch, n))
    q, _ = np.linalg.qr(arr(rng, dtype, (*batch, n, n)).astype(np.result_type(dtype, 1.0)))
    h = (q * w[..., None, :]) @ np.swapaxes(q, -1, -2).conj()
    return ((h + np.swapaxes(h, -1, -2).conj()) / 2).astype(dtype)


def separated(rng: np.random.Generator, dtype: Any, n: int = 3, batch: tuple = ()) -> Any:
    """Non-normal matrix (stack) ``V D V^-1`` with eigenvalues at least 2.5 apart and each
    eigenvector's largest component clearly largest (``V = I + 0.1 R``), so ``eig``'s
    ordering and its gauge (largest component real) hold under perturbations of a few
    1e-2, as float32 finite differences make. Real: eigenvalues ``1 ± 1.5i`` (a block
    whose vectors lean 3:1 onto one axis) and -2.5 (and 4 for ``n = 4``)."""
    if np.dtype(dtype).kind == "c":
        d = np.diag(np.array([1 + 1j, -2 + 0.5j, 0.5 - 2.5j, 3 + 2j])[:n])
    else:
        d = np.diag([1.0, 1.0, -2.5, 4.0][:n])
        d[0, 1], d[1, 0] = 4.5, -0.5  # eigenvalues 1 +- 1.5i, vectors (1, +-i/3)
    v = np.eye(n) + 0.1 * arr(rng, dtype, (*batch, n, n))
    return (v @ d @ np.linalg.inv(v)).astype(dtype)


def cond_input(rng: np.random.Generator, dtype: Any, p: Any, n: int = 3) -> Any:
    """A matrix for ``cond(x, p)`` with ``p`` in 1, -1, inf, -inf: ``D (I + E)`` for
    columns (``p = ±1``) or ``(I + E) D`` for rows, ``D = diag(4, 2, 1)`` shuffled and
    ``0.05 <= |E_ij| <= 0.1``: the largest and smallest column (row) sums of ``x`` and of
    ``inv(x)`` are each held by one column (row) with a wide margin, and no entry of
    either is near the kink of ``abs`` at 0."""
    mags = rng.uniform(0.05, 0.1, (n, n)) * rng.choice([-1.0, 1.0], (n, n))
    if np.dtype(dtype).kind == "c":
        mags = mags * np.exp(1j * rng.uniform(0, 2 * np.pi, (n, n)))
    e = np.eye(n) + mags * (1 - np.eye(n))
    d = np.diag(rng.permutation([4.0, 2.0, 1.0, 0.5][:n]))
    x = e @ d if p in (1, -1) else d @ e
    return x.astype(dtype)


def rows_apart(rng: np.random.Generator, dtype: Any, shape: tuple,
               axis: int = -1) -> np.ndarray:
    """Matrices (stack) whose absolute sums along ``axis`` are 2, 3, 4, … in random
    order, with no entry near 0: the largest or smallest sum (``ord=±inf``, ``ord=±1``
    norms) is never near a tie, nor an entry near the kink of ``abs``."""
    a = arr(rng, dtype, shape)
    a = np.moveaxis(a + 0.3 * a / np.maximum(np.abs(a), 1e-12), axis, -1)  # |a| >= 0.3
    sums = np.sum(np.abs(a), axis=-1, keepdims=True)
    target = (2.0 + rng.permutation(a.shape[-2])).reshape(-1, 1)
    return np.moveaxis(a * (target / sums), -1, axis).astype(a.dtype)


def entries_apart(rng: np.random.Generator, dtype: Any, shape: tuple) -> np.ndarray:
    """Arrays whose entries' absolute values are at least 0.25 apart (max/min norms)."""
    size = int(np.prod(shape))
    mags = 0.5 + 0.25 * rng.permutation(size).reshape(shape)
    signs = rng.choice([-1.0, 1.0], size=shape)
    if np.dtype(dtype).kind == "c":
        return (mags * np.exp(1j * rng.uniform(0, 2 * np.pi, shape))).astype(dtype)
    return (mags * signs).astype(dtype)


def _norm_input(o: Any, shape: tuple) -> Any:
    """The input of a norm of order ``o``: kinks of max/min orders kept far away."""
    if o in (np.inf, -np.inf, 1, 0.5) and len(shape) == 1:
        # a norm is large next to its derivative along a random direction: a small input
        # keeps the round-off of float32 finite differences (eps |y| / step) under the
        # tolerance (entries still 0.05 apart and 0.1 away from the kink at 0)
        return lambda rng, dt: ((0.2 * entries_apart(rng, dt, shape)).astype(dt),)
    if o in (np.inf, -np.inf):  # (scaled for the same reason: sums 0.6, 0.9, 1.2, ...)
        return lambda rng, dt: ((0.3 * rows_apart(rng, dt, shape, axis=-1)).astype(dt),)
    if o in (1, -1) and len(shape) > 1:
        return lambda rng, dt: ((0.3 * rows_apart(rng, dt, shape, axis=-2)).astype(dt),)
    return lambda rng, dt: (arr(rng, dt, shape),)


# --------------------------------------------------------- gauge-invariant wrappers


def _abs2(v: np.ndarray) -> np.ndarray:
    return (v * v.conj()).real


def eigh_abs2(a: np.ndarray, UPLO: str = "L") -> tuple:
    """``(eigenvalues, |eigenvectors|**2)`` of ``eigh``: blind to the vectors' phases."""
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w, _abs2(v)


def svd_abs2(a: np.ndarray, hermitian: bool = False) -> tuple:
    """``(|U|**2, S, |Vh|**2)`` of the thin SVD: blind to the vectors' phases (and, for
    real matrices, signs, which ``svd(hermitian=True)`` flipped within a float32 finite
    difference's reach at seed 28)."""
    u, s, vh = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    return _abs2(u), s, _abs2(vh)


# what each wrapper tests, for reports (`python -m chainrules check` counts it there)
eigh_abs2.tests = np.linalg.eigh  # type: ignore[attr-defined]
svd_abs2.tests = np.linalg.svd  # type: ignore[attr-defined]


def _abs2_dot(v: np.ndarray, v_dot: Any) -> Any:
    v_dot = unthunk(v_dot)
    if not isinstance(v_dot, np.ndarray):
        return v_dot
    return 2 * (v.conj() * v_dot).real.astype(v.real.dtype)


def _abs2_bar(v: np.ndarray, p_bar: Any) -> Any:
    p_bar = unthunk(p_bar)
    if not isinstance(p_bar, np.ndarray):
        return p_bar
    return 2 * p_bar * v


@frule.register(eigh_abs2)
def _eigh_abs2_frule(dargs, a, UPLO="L"):
    y, y_dot = frule((NoTangent(), dargs[1]), np.linalg.eigh, a, UPLO=UPLO)
    out = (y.eigenvalues, _abs2(y.eigenvectors))
    if not isinstance(y_dot, Tangent):
        return out, y_dot
    return out, Tangent[tuple](y_dot.eigenvalues, _abs2_dot(y.eigenvectors, y_dot.eigenvectors))


@rrule.register(eigh_abs2)
def _eigh_abs2_rrule(a, UPLO="L"):
    y, pullback = rrule(np.linalg.eigh, a, UPLO=UPLO)

    def eigh_abs2_pullback(y_bar):
        y_bar = unthunk(y_bar)
        if not isinstance(y_bar, (Tangent, tuple)):
            return pullback(y_bar)
        w_bar, p_bar = y_bar[0] if isinstance(y_bar, tuple) else y_bar.backing[0], (
            y_bar[1] if isinstance(y_bar, tuple) else y_bar.backing[1])
        return pullback(Tangent[type(y)](eigenvalues=w_bar,
                                         eigenvectors=_abs2_bar(y.eigenvectors, p_bar)))

    return (y.eigenvalues, _abs2(y.eigenvectors)), eigh_abs2_pullback


@frule.register(svd_abs2)
def _svd_abs2_frule(dargs, a, hermitian=False):
    y, y_dot = frule((NoTangent(), dargs[1]), np.linalg.svd, a, full_matrices=False,
                     hermitian=hermitian)
    u, s, vh = y
    out = (_abs2(u), s, _abs2(vh))
    if not isinstance(y_dot, Tangent):
        return out, y_dot
    return out, Tangent[tuple](_abs2_dot(u, y_dot.U), y_dot.S, _abs2_dot(vh, y_dot.Vh))


@rrule.register(svd_abs2)
def _svd_abs2_rrule(a, hermitian=False):
    y, pullback = rrule(np.linalg.svd, a, full_matrices=False, hermitian=hermitian)
    u, s, vh = y

    def svd_abs2_pullback(y_bar):
        y_bar = unthunk(y_bar)
        if not isinstance(y_bar, (Tangent, tuple)):
            return pullback(y_bar)
        items = tuple(y_bar) if isinstance(y_bar, tuple) else y_bar.backing
        return pullback(Tangent[type(y)](U=_abs2_bar(u, items[0]), S=items[1],
                                         Vh=_abs2_bar(vh, items[2])))

    return (_abs2(u), s, _abs2(vh)), svd_abs2_pullback


# ------------------------------------------------------ order-blind eig wrappers
#
# LAPACK's ``?geev`` returns the eigenvalues in the order its QR iteration deflates
# them, and each eigenvector with its largest component real but of either sign; both
# change under perturbations of a few 1e-3 for about one float32 matrix in twenty,
# however well separated the eigenvalues are (a float32 finite difference steps that
# far). The float32 rows test ``eig``/``eigvals`` through these wrappers, which put the
# eigenpairs in one continuous order (by real part, then imaginary part) and make each
# vector's largest component positive: both are constant near the input, so the
# wrappers' rules are ``eig``'s rules permuted and signed.


def _eig_order(w: np.ndarray) -> np.ndarray:
    return np.lexsort((w.imag, w.real), axis=-1)


def canonical_eig(w: np.ndarray, v: np.ndarray) -> tuple:
    """(order, sign per sorted vector) of the canonical eigenpairs."""
    order = _eig_order(w)
    vs = np.take_along_axis(v, order[..., None, :], axis=-1)
    k = np.argmax(np.abs(vs), axis=-2)[..., None, :]
    sign = np.where(np.take_along_axis(vs, k, axis=-2).real < 0, -1, 1).astype(v.real.dtype)
    return order, sign


def sorted_eig(w: Any, v: Any, order: np.ndarray, sign: np.ndarray) -> tuple:
    w = unthunk(w)
    v = unthunk(v)
    return (w if not isinstance(w, np.ndarray) else np.take_along_axis(w, order, axis=-1),
            v if not isinstance(v, np.ndarray) else
            np.take_along_axis(v, order[..., None, :], axis=-1) * sign)


def unsorted_eig(x: Any, order: np.ndarray, sign: np.ndarray | None = None) -> Any:
    x = unthunk(x)
    if not isinstance(x, np.ndarray):
        return x
    inv = np.argsort(order, axis=-1)
    if sign is None:
        return np.take_along_axis(x, inv, axis=-1)
    return np.take_along_axis(x * sign, inv[..., None, :], axis=-1)


def eig_sorted(a: np.ndarray) -> tuple:
    """``eig(a)`` with the eigenpairs sorted by real part, then imaginary part, and each
    eigenvector's largest component positive."""
    w, v = np.linalg.eig(a)
    return sorted_eig(w, v, *canonical_eig(w, v))


def eigvals_sorted(a: np.ndarray) -> np.ndarray:
    """``eigvals(a)`` sorted by real part, then imaginary part."""
    w = np.linalg.eigvals(a)
    return np.take_along_axis(w, _eig_order(w), axis=-1)


eig_sorted.tests = np.linalg.eig  # type: ignore[attr-defined]
eigvals_sorted.tests = np.linalg.eigvals  # type: ignore[attr-defined]


@frule.register(eig_sorted)
def _eig_sorted_frule(dargs, a):
    y, y_dot = frule((NoTangent(), dargs[1]), np.linalg.eig, a)
    canon = canonical_eig(*y)
    out = sorted_eig(*y, *canon)
    if not isinstance(y_dot, Tangent):
        return out, y_dot
    return out, Tangent[tuple](*sorted_eig(y_dot.eigenvalues, y_dot.eigenvectors, *canon))


@rrule.register(eig_sorted)
def _eig_sorted_rrule(a):
    y, pullback = rrule(np.linalg.eig, a)
    order, sign = canonical_eig(*y)

    def eig_sorted_pullback(y_bar):
        y_bar = unthunk(y_bar)
        if not isinstance(y_bar, (Tangent, tuple)):
            return pullback(y_bar)
        items = tuple(y_bar) if isinstance(y_bar, tuple) else y_bar.backing
        return pullback(Tangent[type(y)](eigenvalues=unsorted_eig(items[0], order),
                                         eigenvectors=unsorted_eig(items[1], order, sign)))

    return sorted_eig(*y, order, sign), eig_sorted_pullback


@frule.register(eigvals_sorted)
def _eigvals_sorted_frule(dargs, a):
    y, y_dot = frule((NoTangent(), dargs[1]), np.linalg.eigvals, a)
    order = _eig_order(y)
    y_dot = unthunk(y_dot)
    if isinstance(y_dot, np.ndarray):
        y_dot = np.take_along_axis(y_dot, order, axis=-1)
    return np.take_along_axis(y, order, axis=-1), y_dot


@rrule.register(eigvals_sorted)
def _eigvals_sorted_rrule(a):
    y, pullback = rrule(np.linalg.eigvals, a)
    order = _eig_order(y)

    def eigvals_sorted_pullback(y_bar):
        return pullback(unsorted_eig(y_bar, order))

    return np.take_along_axis(y, order, axis=-1), eigvals_sorted_pullback


# --------------------------------------------------------- phase-blind cotangents


def _randn_like(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    out = rng.standard_normal(x.shape)
    if np.iscomplexobj(x):
        out = out + 1j * rng.standard_normal(x.shape)
    return out.astype(x.dtype)


def _phase_blind(rng: np.random.Generator, v: np.ndarray) -> np.ndarray:
    """A random cotangent for unit columns ``v`` orthogonal to their phase rotations."""
    v_bar = _randn_like(rng, v)
    im = np.sum(v.conj() * v_bar, axis=-2).imag
    return (v_bar - v * (1j * im)[..., None, :]).astype(v.dtype)


def _svd_bar(rng: np.random.Generator, dtype: Any, y: Any) -> Any:
    vh = y.Vh
    v_bar = _phase_blind(rng, np.swapaxes(vh, -1, -2).conj())
    return Tangent[type(y)](U=_phase_blind(rng, y.U), S=_randn_like(rng, y.S),
                            Vh=np.swapaxes(v_bar, -1, -2).conj())


def _svd_full_bar(rng: np.random.Generator, dtype: Any, y: Any) -> Any:
    """Cotangent that ignores the extra columns of a full U (m > n)."""
    k = y.S.shape[-1]
    u_bar = _randn_like(rng, y.U)
    u_bar[..., :, k:] = 0
    return Tangent[type(y)](U=u_bar, S=_randn_like(rng, y.S), Vh=_randn_like(rng, y.Vh))


# --------------------------------------------------------- the table


def _name(f: Any, what: str) -> str:
    return f"numpy.linalg.{f.__name__}({what})"


CASES: list[Case] = [
    # inv, solve, det, slogdet
    Case(np.linalg.inv, lambda rng, dt: (wc(rng, dt, 3),), dtypes=C),
    Case(np.linalg.inv, lambda rng, dt: (wc(rng, dt, 3, (2,)),), dtypes=C,
         name=_name(np.linalg.inv, "stack")),
    Case(np.linalg.solve, lambda rng, dt: (wc(rng, dt, 3), arr(rng, dt, (3,))), dtypes=C,
         name=_name(np.linalg.solve, "vector b")),
    Case(np.linalg.solve, lambda rng, dt: (wc(rng, dt, 3), arr(rng, dt, (3, 2))), dtypes=C,
         name=_name(np.linalg.solve, "matrix b")),
    Case(np.linalg.solve, lambda rng, dt: (wc(rng, dt, 3, (2,)), arr(rng, dt, (2, 3, 2))),
         dtypes=C, name=_name(np.linalg.solve, "stack")),
    Case(np.linalg.solve, lambda rng, dt: (wc(rng, dt, 3, (2,)), arr(rng, dt, (3,))),
         dtypes=C, name=_name(np.linalg.solve, "stack, shared vector b")),
    Case(np.linalg.solve, lambda rng, dt: (wc(rng, dt, 3), arr(rng, dt, (2, 3, 2))),
         dtypes=C, name=_name(np.linalg.solve, "shared A, stack of b")),
    Case(np.linalg.det, lambda rng, dt: (wc(rng, dt, 3),), dtypes=C),
    Case(np.linalg.det, lambda rng, dt: (wc(rng, dt, 3, (2,)),), dtypes=C,
         name=_name(np.linalg.det, "stack")),
    Case(np.linalg.slogdet, lambda rng, dt: (wc(rng, dt, 3) * -1,), dtypes=C),
    Case(np.linalg.slogdet, lambda rng, dt: (wc(rng, dt, 3, (2,)),), dtypes=C,
         name=_name(np.linalg.slogdet, "stack")),
    # pinv, lstsq
    Case(np.linalg.pinv, lambda rng, dt: (arr(rng, dt, (4, 3)),), dtypes=C,
         name=_name(np.linalg.pinv, "tall")),
    Case(np.linalg.pinv, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), dtypes=C,
         name=_name(np.linalg.pinv, "wide stack")),
    Case(np.linalg.pinv, lambda rng, dt: (pd(rng, dt, 3),), kwargs={"hermitian": True},
         dtypes=C),
    Case(np.linalg.lstsq, lambda rng, dt: (arr(rng, dt, (5, 3)), arr(rng, dt, (5,))),
         dtypes=C, name=_name(np.linalg.lstsq, "vector b")),
    Case(np.linalg.lstsq, lambda rng, dt: (arr(rng, dt, (5, 3)), arr(rng, dt, (5, 2))),
         kwargs={"rcond": None}, dtypes=C, name=_name(np.linalg.lstsq, "matrix b")),
    Case(np.linalg.lstsq, lambda rng, dt: (arr(rng, dt, (3, 5)), arr(rng, dt, (3, 2))),
         dtypes=C, name=_name(np.linalg.lstsq, "underdetermined")),
    # cholesky, qr
    Case(np.linalg.cholesky, lambda rng, dt: (pd(rng, dt, 3),), dtypes=C),
    Case(np.linalg.cholesky, lambda rng, dt: (pd(rng, dt, 3, (2,)),), dtypes=C,
         name=_name(np.linalg.cholesky, "stack")),
    Case(np.linalg.cholesky, lambda rng, dt: (pd(rng, dt, 3),), kwargs={"upper": True},
         dtypes=C),
    Case(np.linalg.qr, lambda rng, dt: (arr(rng, dt, (4, 3)),), dtypes=C,
         name=_name(np.linalg.qr, "tall")),
    Case(np.linalg.qr, lambda rng, dt: (arr(rng, dt, (3, 3)),), kwargs={"mode": "complete"},
         dtypes=C),
    Case(np.linalg.qr, lambda rng, dt: (arr(rng, dt, (2, 4, 3)),), kwargs={"mode": "complete"},
         dtypes=C, name=_name(np.linalg.qr, "tall stack, complete")),
    Case(np.linalg.qr, lambda rng, dt: (arr(rng, dt, (3, 5)),), dtypes=C,
         name=_name(np.linalg.qr, "wide")),
    Case(np.linalg.qr, lambda rng, dt: (arr(rng, dt, (2, 4, 3)),), dtypes=C,
         name=_name(np.linalg.qr, "stack")),
    Case(np.linalg.qr, lambda rng, dt: (arr(rng, dt, (4, 3)),), kwargs={"mode": "r"},
         dtypes=C),
    # svd: real vectors raw (sign fixed); complex raw only with a phase-blind cotangent
    Case(np.linalg.svd, lambda rng, dt: (arr(rng, dt, (3, 3)),), dtypes=R,
         name=_name(np.linalg.svd, "square")),
    Case(np.linalg.svd, lambda rng, dt: (arr(rng, dt, (4, 3)),),
         kwargs={"full_matrices": False}, dtypes=R),
    # float64 only: in float32 the finite-difference stencil (reach ~0.04) crosses a
    # point where LAPACK flips the sign of u_1, v_1; svd_abs2 covers float32
    Case(np.linalg.svd, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),),
         kwargs={"full_matrices": False}, dtypes=("float64",),
         name=_name(np.linalg.svd, "wide stack")),
    Case(np.linalg.svd, lambda rng, dt: (arr(rng, dt, (4, 3)),),
         kwargs={"full_matrices": False}, dtypes=("complex128",), frule=False,
         output_tangent=_svd_bar, name=_name(np.linalg.svd, "complex, phase-blind y_bar")),
    Case(np.linalg.svd, lambda rng, dt: (arr(rng, dt, (3, 4)),),
         kwargs={"full_matrices": False}, dtypes=("complex128",), frule=False,
         output_tangent=_svd_bar,
         name=_name(np.linalg.svd, "complex wide, phase-blind y_bar")),
    Case(np.linalg.svd, lambda rng, dt: (arr(rng, dt, (4, 3)),), dtypes=R, frule=False,
         output_tangent=_svd_full_bar,
         name=_name(np.linalg.svd, "full_matrices, y_bar ignores extra columns")),
    Case(np.linalg.svd, lambda rng, dt: (arr(rng, dt, (4, 3)),), kwargs={"compute_uv": False},
         dtypes=C),
    # real vectors raw in float64; in float32 their signs can flip within the
    # difference's reach, so through the sign-blind wrapper
    Case(np.linalg.svd, lambda rng, dt: (herm_abs(rng, dt, 3),),
         kwargs={"hermitian": True}, dtypes=("float64",)),
    Case(svd_abs2, lambda rng, dt: (herm_abs(rng, dt, 3),), kwargs={"hermitian": True},
         dtypes=("float32",), name="svd_abs2(hermitian=True)"),
    Case(np.linalg.svd, lambda rng, dt: (herm_abs(rng, dt, 3, (2,)),),
         kwargs={"hermitian": True}, dtypes=("complex128",), frule=False,
         output_tangent=_svd_bar, name=_name(np.linalg.svd, "hermitian, phase-blind y_bar")),
    Case(np.linalg.svd, lambda rng, dt: (herm_abs(rng, dt, 3, (2,)),),
         kwargs={"hermitian": True, "compute_uv": False}, dtypes=C),
    Case(svd_abs2, lambda rng, dt: (arr(rng, dt, (4, 3)),), dtypes=C,
         name="svd_abs2 (gauge-invariant |U|^2, S, |Vh|^2)"),
    Case(svd_abs2, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), dtypes=C,
         name="svd_abs2 (gauge-invariant, wide stack)"),
    Case(np.linalg.svdvals, lambda rng, dt: (arr(rng, dt, (2, 4, 3)),), dtypes=C),
    # eigh / eigvalsh: reads one triangle
    # raw real vectors in float64 only: LAPACK's sign choices flip within the reach of a
    # float32 finite difference; eigh_abs2 (below) tests float32 blind to the signs
    Case(np.linalg.eigh, lambda rng, dt: (herm(rng, dt, 3),), dtypes=("float64",)),
    Case(np.linalg.eigh, lambda rng, dt: (herm(rng, dt, 3, (2,)),), kwargs={"UPLO": "U"},
         dtypes=("float64",), name=_name(np.linalg.eigh, "UPLO='U', stack")),
    # complex vectors: LAPACK's phases jump (rarely) within a finite difference's reach,
    # which a phase-blind y_bar does not hide (it is blind to first order only); the
    # complex rows are those of eigh_abs2 below
    Case(eigh_abs2, lambda rng, dt: (herm(rng, dt, 3),), dtypes=C,
         name="eigh_abs2 (gauge-invariant eigenvalues, |V|^2)"),
    Case(eigh_abs2, lambda rng, dt: (herm(rng, dt, 3, (2,)),), kwargs={"UPLO": "U"},
         dtypes=C, name="eigh_abs2 (gauge-invariant, UPLO='U', stack)"),
    Case(np.linalg.eigvalsh, lambda rng, dt: (herm(rng, dt, 3),), dtypes=C),
    Case(np.linalg.eigvalsh, lambda rng, dt: (herm(rng, dt, 3, (2,)),),
         kwargs={"UPLO": "U"}, dtypes=C),
    # eig: NumPy's gauge (unit norm, largest component real) is followed exactly
    # eig through a wrapper blind to LAPACK's order and signs (see `eig_sorted`): raw
    # eigenvectors change sign within a finite difference's reach at about one seed in
    # ten, float64 included
    Case(eig_sorted, lambda rng, dt: (separated(rng, dt, 3),), dtypes=C,
         name="eig_sorted (eigenpairs in a continuous order and sign)"),
    Case(eig_sorted, lambda rng, dt: (separated(rng, dt, 3, (2,)),), dtypes=C,
         name="eig_sorted (eigenpairs in a continuous order and sign, stack)"),
    Case(eig_sorted, lambda rng, dt: (arr(rng, dt, (2, 3, 3)),), dtypes=C64,
         name="eig_sorted (generic matrices, stack)"),
    Case(np.linalg.eigvals, lambda rng, dt: (arr(rng, dt, (2, 3, 3)),), dtypes=C64),
    Case(eigvals_sorted, lambda rng, dt: (separated(rng, dt, 3, (2,)),), dtypes=C,
         name="eigvals_sorted (eigenvalues in a continuous order, stack)"),
    # matrix_power
    Case(np.linalg.matrix_power, lambda rng, dt: (arr(rng, dt, (3, 3), -1, 1), 3), dtypes=C,
         name=_name(np.linalg.matrix_power, "n=3")),
    Case(np.linalg.matrix_power, lambda rng, dt: (wc(rng, dt, 3, (2,)), -2), dtypes=C,
         name=_name(np.linalg.matrix_power, "n=-2, stack")),
    Case(np.linalg.matrix_power, lambda rng, dt: (arr(rng, dt, (3, 3)), 0), dtypes=C,
         name=_name(np.linalg.matrix_power, "n=0")),
    Case(np.linalg.matrix_power, lambda rng, dt: (arr(rng, dt, (3, 3)), 1), dtypes=C,
         name=_name(np.linalg.matrix_power, "n=1")),
    # cond
    Case(np.linalg.cond, lambda rng, dt: (wc(rng, dt, 3, (2,)),), dtypes=C),
    Case(np.linalg.cond, lambda rng, dt: (arr(rng, dt, (4, 3)), -2), dtypes=C,
         name=_name(np.linalg.cond, "p=-2, tall")),
    *[Case(np.linalg.cond, lambda rng, dt: (wc(rng, dt, 3),), kwargs={"p": p}, dtypes=C)
      for p in ("fro", "nuc")],
    *[Case(np.linalg.cond, lambda rng, dt, p=p: (cond_input(rng, dt, p),), kwargs={"p": p},
           dtypes=C) for p in (1, np.inf)],
    # multi_dot, tensorsolve, tensorinv
    Case(np.linalg.multi_dot, lambda rng, dt: (
        [arr(rng, dt, (2, 3)), arr(rng, dt, (3, 4)), arr(rng, dt, (4, 2))],), dtypes=C),
    Case(np.linalg.multi_dot, lambda rng, dt: (
        [arr(rng, dt, (3,)), arr(rng, dt, (3, 4)), arr(rng, dt, (4, 2)), arr(rng, dt, (2,))],),
        dtypes=C, name=_name(np.linalg.multi_dot, "vector ends")),
    Case(np.linalg.tensorsolve, lambda rng, dt: (
        wc(rng, dt, 6).reshape(2, 3, 6), arr(rng, dt, (2, 3))), dtypes=C),
    Case(np.linalg.tensorsolve, lambda rng, dt: (
        np.moveaxis(wc(rng, dt, 6).reshape(2, 3, 6), 2, 0), arr(rng, dt, (2, 3))),
        kwargs={"axes": (0,)}, dtypes=C),
    Case(np.linalg.tensorinv, lambda rng, dt: (wc(rng, dt, 6).reshape(2, 3, 6),), dtypes=C),
    Case(np.linalg.tensorinv, lambda rng, dt: (wc(rng, dt, 6).reshape(6, 2, 3),),
         kwargs={"ind": 1}, dtypes=C),
    # array-API helpers
    Case(np.linalg.trace, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), kwargs={"offset": 1},
         dtypes=C),
    Case(np.linalg.diagonal, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),),
         kwargs={"offset": -1}, dtypes=C),
    Case(np.linalg.matrix_transpose, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), dtypes=C),
    Case(np.linalg.outer, lambda rng, dt: (arr(rng, dt, (3,)), arr(rng, dt, (2,))), dtypes=C),
    Case(np.linalg.cross, lambda rng, dt: (arr(rng, dt, (2, 3)), arr(rng, dt, (3,))),
         dtypes=C),
    Case(np.linalg.cross, lambda rng, dt: (arr(rng, dt, (3, 2)), arr(rng, dt, (3, 2))),
         kwargs={"axis": 0}, dtypes=C),
    Case(np.linalg.matmul, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), arr(rng, dt, (4, 2))),
         dtypes=C),
    Case(np.linalg.matmul, lambda rng, dt: (arr(rng, dt, (4,)), arr(rng, dt, (2, 4, 3))),
         dtypes=C, name=_name(np.linalg.matmul, "vector @ stack")),
    Case(np.linalg.matmul, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), arr(rng, dt, (4,))),
         dtypes=C, name=_name(np.linalg.matmul, "stack @ vector")),
    Case(np.linalg.vecdot, lambda rng, dt: (arr(rng, dt, (2, 3)), arr(rng, dt, (3,))),
         dtypes=C),
    Case(np.linalg.vecdot, lambda rng, dt: (arr(rng, dt, (3, 2)), arr(rng, dt, (3, 2))),
         kwargs={"axis": 0}, dtypes=C),
    Case(np.linalg.tensordot, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), arr(rng, dt, (3, 4, 2))),
         dtypes=C),
    Case(np.linalg.tensordot, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), arr(rng, dt, (4, 2))),
         kwargs={"axes": ([0, 2], [1, 0])}, dtypes=C),
]

# norm and friends: vector orders, matrix orders, axis, keepdims
_VECTOR_ORDS = (None, 1, 2, np.inf, -np.inf, 3, 0.5, 0)
_MATRIX_ORDS = ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf)

CASES += [
    Case(np.linalg.norm, _norm_input(o, (5,)), kwargs={"ord": o}, dtypes=C)
    for o in _VECTOR_ORDS
]
CASES += [
    Case(np.linalg.norm, _norm_input(o, (3, 4)), kwargs={"ord": o}, dtypes=C)
    for o in _MATRIX_ORDS
]
CASES += [
    Case(np.linalg.norm, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),),
         kwargs={"axis": 1, "keepdims": True}, dtypes=C),
    Case(np.linalg.norm, lambda rng, dt: (entries_apart(rng, dt, (2, 3, 4)),),
         kwargs={"ord": np.inf, "axis": -1}, dtypes=C),
    Case(np.linalg.norm, lambda rng, dt: (arr(rng, dt, (3, 2, 4)),),
         kwargs={"ord": 2, "axis": (2, 0)}, dtypes=C),
    Case(np.linalg.norm, lambda rng, dt: (rows_apart(rng, dt, (3, 2, 4), axis=0),),
         kwargs={"ord": 1, "axis": (0, 2), "keepdims": True}, dtypes=C),
    Case(np.linalg.norm, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), dtypes=C,
         name=_name(np.linalg.norm, "3-d, all axes")),
    Case(np.linalg.norm, lambda rng, dt: (positive(rng, dt, (4,)), 3), dtypes=C,
         name=_name(np.linalg.norm, "positional ord=3")),
    Case(np.linalg.vector_norm, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), dtypes=C),
    Case(np.linalg.vector_norm, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),),
         kwargs={"axis": (0, 2), "ord": 3, "keepdims": True}, dtypes=C),
    Case(np.linalg.matrix_norm, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), dtypes=C),
    Case(np.linalg.matrix_norm, lambda rng, dt: (arr(rng, dt, (2, 3, 4)),),
         kwargs={"ord": "nuc", "keepdims": True}, dtypes=C),
    Case(np.linalg.matrix_norm, lambda rng, dt: (rows_apart(rng, dt, (2, 3, 4)),),
         kwargs={"ord": -np.inf}, dtypes=C),
]
