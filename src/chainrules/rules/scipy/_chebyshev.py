"""Chebyshev interpolation and collocation on plain NumPy arrays, for the ODE rules'
sensitivities (``integrate_ode``).

On an interval ``[a, b]`` the Chebyshev-Lobatto points ``t_j = a + (b - a) (1 - cos(pi j /
N)) / 2``, ``j = 0..N`` (ascending), are nested (those of ``N`` are every other one of
``2N``'s), so a function sampled at ``N_max + 1`` points can be tried at ``N = 16, 32, ...``
without new samples. A smooth function is resolved at ``N`` when its last Chebyshev
coefficients are negligible against its largest (`resolved`); the interpolant is then
accurate to about that size everywhere on ``[a, b]`` (`interpolate`, barycentric).

`solve_linear` solves the linear initial-value problem ``S' = A(t) S + B(t)``,
``S(a) = S_a`` by collocation at the points (Trefethen, *Spectral Methods in MATLAB*,
ch. 6 and 13): one dense linear system of ``(N + 1) n`` unknowns per column.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.fft


def points(a: float, b: float, n: int) -> np.ndarray:
    """The ``n + 1`` Chebyshev-Lobatto points of ``[a, b]``, ascending."""
    x = -np.cos(np.pi * np.arange(n + 1) / n)
    return a + (b - a) * (x + 1.0) / 2.0


def coefficients(values: np.ndarray) -> np.ndarray:
    """Chebyshev coefficients (axis 0) of the interpolant of ``values`` (axis 0: the
    ascending points of `points`)."""
    n = values.shape[0] - 1
    c = scipy.fft.dct(values[::-1], type=1, axis=0) / n
    c[0] /= 2.0
    c[n] /= 2.0
    return c


def resolved(values: np.ndarray, tol: float, by_column: bool = False) -> bool:
    """Whether the last three Chebyshev coefficients are below ``tol`` times the
    largest: over all entries together, or ``by_column`` (the last axis: each column's
    own scale, so that a small column is resolved to its own relative accuracy)."""
    c = np.abs(coefficients(values.reshape(values.shape[0], -1, values.shape[-1]
                                           if by_column else 1)))
    # (a column below 1e-8 of the largest is held to that floor: its rounding noise
    # would otherwise never look resolved)
    scale = np.max(c, axis=(0, 1))
    scale = np.maximum(scale, 1e-8 * np.max(scale, initial=0.0))
    tail = np.max(c[-3:], axis=(0, 1))
    return bool(np.all(tail <= tol * scale))


def differentiation_matrix(a: float, b: float, n: int) -> np.ndarray:
    """``D`` with ``(D @ v)[i] = p'(t_i)`` for the interpolant ``p`` of values ``v`` at
    the points of `points` (Trefethen's ``cheb``, ascending, scaled to ``[a, b]``)."""
    x = np.cos(np.pi * np.arange(n + 1) / n)
    c = np.ones(n + 1)
    c[0] = c[n] = 2.0
    c *= (-1.0) ** np.arange(n + 1)
    dx = x[:, None] - x[None, :]
    D = np.outer(c, 1.0 / c) / (dx + np.eye(n + 1))
    D -= np.diag(np.sum(D, axis=1))
    # t_j = a + (b - a) (1 - x_j) / 2 (x_j descending, t_j ascending): d/dt = -2/(b-a) d/dx
    return D * (-2.0 / (b - a))


def interpolate(a: float, b: float, values: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The interpolant of ``values`` (axis 0: the points of `points`) at the times ``t``
    in ``[a, b]`` (barycentric formula; exact at the points)."""
    n = values.shape[0] - 1
    ell = barycentric(points(a, b, n), np.asarray(t, dtype=float))
    return (ell @ values.reshape(n + 1, -1)).reshape(len(t), *values.shape[1:])


def barycentric(nodes: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The interpolant's weights ``ell[k]`` (``(len(t), N + 1)``) on Chebyshev-Lobatto
    ``nodes`` (``(N + 1,)``, or a row per time) at the times ``t``: ``p(t[k]) = ell[k] @
    values``; exact (one-hot) at a node."""
    m = np.shape(nodes)[-1]
    w = (-1.0) ** np.arange(m)
    w[0] /= 2.0
    w[-1] /= 2.0
    d = t[:, None] - nodes
    hit = d == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = w / d
        ell = q / np.sum(q, axis=1, keepdims=True)
    rows = np.any(hit, axis=1)
    ell[rows] = hit[rows]
    return ell


def solve_linear(a: float, b: float, A: np.ndarray, B: np.ndarray,
                 S_a: np.ndarray) -> np.ndarray:
    """``S`` at the points of ``[a, b]`` (shape ``(N + 1, n, k)``) for ``S' = A(t) S +
    B(t)``, ``S(a) = S_a``, given ``A`` (``(N + 1, n, n)``) and ``B`` (``(N + 1, n, k)``)
    at the points."""
    m, n, _ = A.shape
    D = differentiation_matrix(a, b, m - 1)
    L = np.kron(D, np.eye(n))
    for j in range(m):
        L[j * n:(j + 1) * n, j * n:(j + 1) * n] -= A[j]
    R = B.reshape(m * n, -1).copy()
    # the first block row states the initial condition instead of the equation
    L[:n] = 0.0
    L[:n, :n] = np.eye(n)
    R[:n] = S_a
    return np.linalg.solve(L, R).reshape(m, n, -1)


def resolved_pieces(values: np.ndarray, tol: float, by_column: bool = False) -> np.ndarray:
    """`resolved` for each piece: ``values`` is ``(pieces, N + 1, ...)``; a boolean per
    piece."""
    P, m = values.shape[:2]
    v = values.reshape(P, m, -1, values.shape[-1] if by_column else 1)
    # (the coefficients as one product with the transform's matrix: a DCT call per
    # array costs more than the arithmetic at these sizes)
    c = np.abs(_transform(m - 1) @ v.reshape(P, m, -1)).reshape(v.shape)
    scale = np.max(c, axis=(1, 2))
    scale = np.maximum(scale, 1e-8 * np.max(scale, axis=1, keepdims=True, initial=0.0))
    tail = np.max(c[:, -3:], axis=(1, 2))
    return np.all(tail <= tol * scale, axis=1)


@functools.lru_cache(maxsize=8)
def _transform(n: int) -> np.ndarray:
    """The matrix of `coefficients` for ``n + 1`` points."""
    return coefficients(np.eye(n + 1))
