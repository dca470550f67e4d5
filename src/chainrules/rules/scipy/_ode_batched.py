"""The ODE rules' reverse sensitivities by Chebyshev collocation with the right-hand side
traced once on a batch of states (``integrate_ode``).

The cost of a gradient through ``odeint``/``solve_ivp`` is the AD's cost per call of the
user's right-hand side ``f``: a trace and ``n`` pullbacks at each point where a Jacobian
is needed, about 150 us for a small ``f`` against 1 us for the plain call. Most
right-hand sides are written with NumPy operations that act elementwise on the state's
components (``x, z = y``; ``np.array([a*x - b*x*z, ...])``; ``A @ y``), so that called
with a batch ``Y`` of shape ``(n, K)`` (and the times ``t`` of shape ``(K,)``) they return
the ``K`` derivatives as the columns of an ``(n, K)`` array. This module uses that: one
trace of ``f`` on the states at every collocation point (repeated ``n`` times), one
pullback for all the Jacobians ``df/dy`` there (seed ``e_i`` on the ``i``-th copy), one
forward pass for a random direction of ``df/dtheta`` (to check its resolution), and one
pullback for the gradient w.r.t. ``theta``: four passes of the AD whatever the number of
points, where going point by point takes ``2 + n`` per point.

The collocation is `_chebyshev`'s: the interval is cut into dyadic pieces, each with the
``N + 1`` Chebyshev points, chosen so that the state (sampled at every candidate point
by one LSODA solve, or by the forward solve itself: see `gradient`) is resolved; a
piece whose Jacobians or sensitivities are not resolved is halved. The gradient is the
discrete adjoint of the collocation equations ``(D S)_j - A_j S_j = B_j`` (``A =
df/dy``, ``B = [0 | df/dtheta]``): per piece ``L^T Lambda = W`` (``W`` the output
cotangents interpolated onto the points), chained from the last piece to the first;
then ``y0_bar = Lambda_0`` and ``theta_bar = sum_j Lambda_j^T (df/dtheta)_j``, the
latter a single pullback of the batched trace with cotangent ``Lambda``.

Whether ``f`` takes a batch is tried, never assumed: the batched call must return an
``(n, K)`` real array whose columns equal the plain calls' values at up to 12 points, and,
once per code object, its Jacobians at one point must equal a per-point trace's (w.r.t.
the state and ``theta``). Otherwise (an exception, a ``float(t)``, an ``if`` on a value, a
reduction over the state) `gradient` returns ``None`` and the rules evaluate ``f`` point by
point.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import scipy.integrate as si
import scipy.linalg

from chainrules import core
from chainrules.core import unthunk
from chainrules.rules import _kit as kit

from . import _chebyshev as _cheb
from . import _solvers as solvers

N = 32  # Chebyshev points per piece: N + 1
MAX_DEPTH = 6  # at most 2**MAX_DEPTH pieces
SAMPLED_DEPTH = 5  # the forward solve samples the pieces down to this depth (its
# outputs cost ~0.1 us each: 2,079 points, not 4,191; deeper, the state is re-solved)
_VERIFY = 12  # columns whose values are compared with plain calls
_ZERO = core.ZeroTangent()
# LAPACK's LU directly: scipy.linalg.lu_factor's checks cost more than a 66 x 66 factor
_getrf, _getrs = scipy.linalg.get_lapack_funcs(("getrf", "getrs"), dtype=np.float64)

# code objects of right-hand sides whose batched derivatives were checked (True) or
# that do not take a batch (False)
_BATCHABLE: dict[Any, bool] = {}


class Unresolved(Exception):  # noqa: N818 (a signal between the rules, not an error)
    """The collocation did not resolve the sensitivities: use the adjoint."""


def tolerances(rtol: float, atol: float) -> tuple[float, float, float]:
    """(the relative size of the Chebyshev tails accepted, the state's rtol and atol)"""
    tol = min(max(0.1 * rtol, 1e-11), 1e-4)
    rtol_y = max(1e-2 * tol, 1e-13)
    return tol, rtol_y, max(min(atol, rtol_y), 1e-300)


@functools.lru_cache(maxsize=4)
def _unit_grid(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(the points of [0, 1], the differentiation matrix there)"""
    return _cheb.points(0.0, 1.0, n), _cheb.differentiation_matrix(0.0, 1.0, n)


@functools.lru_cache(maxsize=4)
def _dyadic_grid(n: int, depth: int) -> tuple:
    """On [0, 1]: (the points of every dyadic piece down to ``depth``, ``(pieces, n + 1)``
    for all levels together; the sorted distinct times; where each point is among them;
    the number of pieces above each level)"""
    unit, _ = _unit_grid(n)
    grids = []
    for d in range(depth + 1):
        edges = np.arange(2**d + 1) / 2**d  # (exact: the pieces' shared ends coincide)
        grids.append(edges[:-1, None] + (edges[1:] - edges[:-1])[:, None] * unit)
    points = np.concatenate(grids)
    times, where = np.unique(points, return_inverse=True)
    return points, times, where.reshape(points.shape), 2 ** np.arange(depth + 2) - 1


@functools.lru_cache(maxsize=8)
def _kron_d(n: int) -> np.ndarray:
    """``D ⊗ I_n`` on [0, 1] as ``(1, N + 1, n, N + 1, n)`` (read only)."""
    _, D1 = _unit_grid(N)
    out = (D1[:, None, :, None] * np.eye(n)[None, :, None, :])[None]
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=8)
def _direction(size: int) -> np.ndarray:
    """A fixed random direction in ``theta`` (a generator costs more than the check)."""
    return np.random.default_rng(0).standard_normal(size)


def grid_times(t0: float, t1: float) -> np.ndarray:
    """The sorted times of every dyadic piece's points on ``[t0, t1]`` down to
    `SAMPLED_DEPTH` (`gradient`'s ``sampled``)."""
    return t0 + (t1 - t0) * _dyadic_grid(N, SAMPLED_DEPTH)[1]


def gradient(rhs: Any, ts: np.ndarray, y0: np.ndarray, Y_bar: np.ndarray, rtol: float,
             atol: float, sampled: tuple | None = None) -> tuple | None:
    """``(y0_bar, (f_bar, args_bars), a0)`` as the adjoint gives them, for cotangents
    ``Y_bar[k]`` of the states at the ascending times ``ts``; ``None`` when ``rhs.f``
    does not take a batch of states; raises `Unresolved`.

    ``sampled``: ``(times, states, t_split)``, the states the forward solve gave at the
    `grid_times` after ``t_split`` (odeint's rule asks for them: outputs cost LSODA
    nothing, and those after its first output time leave its steps unchanged); the
    others are then solved at the user's tolerances. Otherwise every one is solved
    again at a tighter tolerance.

    The sampled states carry the solve's error (``~rtol``), so the Jacobians do, and the
    gradient's error is of that order, as it already is through the outputs' cotangents
    ``Y_bar`` (computed from the same states); the tails of that noise are about
    ``0.02 rtol`` (Lotka-Volterra, LSODA, rtol 1e-3 to 1e-8), below the ``0.1 rtol``
    the resolution checks accept.
    """
    return _run(rhs, ts, y0, rtol, atol, sampled, _Gradient(Y_bar))


def tangent(rhs: Any, ts: np.ndarray, y0: np.ndarray, s0: np.ndarray, theta_dot: tuple,
            rtol: float, atol: float, sampled: tuple | None = None) -> np.ndarray | None:
    """The states' tangents at the ascending times ``ts`` (rows) for the tangent ``s0``
    of ``y0`` and ``theta_dot = (f_dot, args_dots)``, by the same collocation (the
    forward sensitivity ``S s0 + S_theta theta_dot``: one forward pass of the AD over
    the batch for ``(df/dtheta) theta_dot``); ``None`` when ``rhs.f`` does not take a
    batch; raises `Unresolved`."""
    return _run(rhs, ts, y0, rtol, atol, sampled, _Tangent(s0, theta_dot))


class _Gradient:
    def __init__(self, Y_bar: np.ndarray) -> None:
        self.Y_bar = Y_bar


class _Tangent:
    def __init__(self, s0: np.ndarray, theta_dot: tuple) -> None:
        self.s0, self.theta_dot = s0, theta_dot


def _run(rhs: Any, ts: np.ndarray, y0: np.ndarray, rtol: float, atol: float,
         sampled: tuple | None, job: Any) -> Any:
    key = getattr(rhs.f, "__code__", None)
    if key is not None and _BATCHABLE.get(key) is False:
        return None
    if sampled is not None:
        try:
            return _pieces(rhs, ts, y0, rtol, atol, key, sampled, job)
        except Unresolved:
            pass  # (finer pieces than sampled, or the noise: with a tight solve)
    return _pieces(rhs, ts, y0, rtol, atol, key, None, job)


def _pieces(rhs: Any, ts: np.ndarray, y0: np.ndarray, rtol: float, atol: float, key: Any,
            sampled: tuple | None, job: Any) -> Any:
    """`_solve` on pieces resolving the state, halved where its checks fail."""
    depth = MAX_DEPTH if sampled is None else SAMPLED_DEPTH
    tol, rtol_y, atol_y = tolerances(rtol, atol)
    t0, t1 = float(ts[0]), float(ts[-1])
    # the state at the points of every dyadic piece, from one solve
    unit_points, unit_times, where, first = _dyadic_grid(N, depth)
    points = t0 + (t1 - t0) * unit_points
    times = t0 + (t1 - t0) * unit_times
    # (stricter than tol: the Jacobians, products of the state, then resolve too)
    state_tol = 0.1 * tol
    if sampled is not None:
        after, Y_after, t_split = sampled
        head = int(np.searchsorted(times, t_split, side="right"))
        if not np.array_equal(times[head:], after):
            sampled = None
    if sampled is None:
        Y_all = _solve_states(rhs, y0, times, rtol_y, atol_y)
    else:
        Y_all = np.concatenate([_solve_states(rhs, y0, times[:head], rtol, atol), Y_after])
        state_tol = tol  # (the solve's own noise: see above)
    states = Y_all[where]  # (pieces, N + 1, n)
    every = _cheb.resolved_pieces(states, state_tol)
    F_all = _plain_batch(rhs, Y_all, times)
    if F_all is not None:
        # (f's values hold the products of the state the Jacobians hold: a piece
        # where they are not resolved would fail the check on the Jacobians)
        every &= _cheb.resolved_pieces(F_all[where], tol)
    grids = [points[first[d]:first[d + 1]] for d in range(depth + 1)]
    states = [states[first[d]:first[d + 1]] for d in range(depth + 1)]
    resolved = [every[first[d]:first[d + 1]] for d in range(depth + 1)]

    def split(d: int, i: int) -> list:
        if resolved[d][i]:
            return [(d, i)]
        if d == depth:
            raise Unresolved
        return split(d + 1, 2 * i) + split(d + 1, 2 * i + 1)

    pieces = split(0, 0)
    while True:
        result = _solve(rhs, pieces, grids, states, ts, tol, key, job)
        if not isinstance(result, _Unresolved):
            return result
        refined = []
        for p, (d, i) in enumerate(pieces):
            if result.ok[p]:
                refined.append((d, i))
            elif d == depth:
                raise Unresolved
            else:
                refined += [(d + 1, 2 * i), (d + 1, 2 * i + 1)]
        pieces = refined


def _plain_batch(rhs: Any, Y: np.ndarray, times: np.ndarray) -> np.ndarray | None:
    """``f`` at the states ``Y`` (rows) and ``times`` in one plain call, as rows; None
    when ``f`` does not take a batch (only a guide to the pieces: what the gradient
    uses is checked in `_Batch.trace`)."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            F = np.asarray(rhs.f(*rhs.order(np.ascontiguousarray(Y.T), times), *rhs.args),
                           dtype=float)
    except Exception:
        return None
    if F.shape != Y.T.shape or not np.all(np.isfinite(F)):
        return None
    return F.T


def _solve_states(rhs: Any, y0: np.ndarray, times: np.ndarray, rtol: float,
                  atol: float) -> np.ndarray:
    """The state at ``times`` (ascending, from the start) by LSODA."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", si.ODEintWarning)
        # (f itself, not rhs's reshaping wrapper: a third of the solve's time)
        Y, info = si.odeint(rhs.f, y0, times, args=rhs.args, tfirst=rhs.tfirst, rtol=rtol,
                            atol=atol, full_output=True)
    if info["message"] != "Integration successful." or not np.all(np.isfinite(Y)):
        raise Unresolved
    return Y


class _Unresolved:
    """Which pieces are resolved (``ok``), when one is not."""

    def __init__(self, ok: np.ndarray) -> None:
        self.ok = ok


def _solve(rhs: Any, pieces: list, grids: list, states: list, ts: np.ndarray, tol: float,
           key: Any, job: Any) -> Any:
    """The job's result on ``pieces``; ``None`` (``f`` takes no batch), or `_Unresolved`."""
    n, P, m = states[0].shape[-1], len(pieces), N + 1
    K = P * m
    tn = np.stack([grids[d][i] for d, i in pieces])  # (P, m)
    Yn = np.stack([states[d][i] for d, i in pieces])  # (P, m, n)
    # the points repeated n times, so that one pullback (seed e_i on the i-th copy)
    # gives every row of the Jacobians
    Yb = np.tile(Yn.reshape(K, n).T, (1, n))
    tb = np.tile(tn.reshape(K), n)
    # (on an outer AD's traced values, a second derivative, nothing is remembered: the
    # first derivative's call, on plain values, checks and records)
    if not solvers.is_plain((Yb, rhs.args)) or solvers.captures_traced(rhs.f):
        if key is None or _BATCHABLE.get(key) is not True:
            return None
        key = None
    batch = _Batch.trace(rhs, Yb, tb, key)
    if batch is None:
        return None
    Br = np.zeros((K, n))
    try:
        seeds = np.zeros((n, n, K))
        seeds[np.arange(n), np.arange(n)] = 1.0
        y_bar, theta = batch.pull(seeds.reshape(n, n * K))
        J = np.transpose(y_bar.reshape(n, n, K), (2, 1, 0))  # (K, row i, column)
        flat = solvers.Flat(theta)
        if key is not None and key not in _BATCHABLE:
            ok = _derivatives_match(rhs, batch, J, flat, K // 2)
            if len(_BATCHABLE) > 512:
                _BATCHABLE.clear()
            _BATCHABLE[key] = ok
            if not ok:
                return None
        # the gradient checks the parameter derivatives' resolution along a random
        # direction; the tangent needs them along its own
        theta_dot = flat.unflatten(_direction(flat.size)) if isinstance(job, _Gradient) \
            else job.theta_dot
        if flat.size and not _all_zero(theta_dot):
            Br = batch.jvp_theta(theta_dot)[:, :K].T
    except Exception:  # a rule inside f that takes no batch: point by point
        _forget(key)
        return None
    J, Br = J.reshape(P, m, n, n), Br.reshape(P, m, n)
    ok = _cheb.resolved_pieces(J, tol) & _cheb.resolved_pieces(Br, tol)
    if not ok.all():
        return _Unresolved(ok)
    # the collocation matrices L_p: (D S)_j - A_j S_j for j >= 1, S_0 for j = 0 (written
    # without writes into arrays, so that an outer AD follows it: a second derivative
    # runs this on its traced values)
    h = np.array([grids[d][i][-1] - grids[d][i][0] for d, i in pieces])
    keep, first_rows = _initial_rows(n)
    L = (_kron_d(n) / h[:, None, None, None, None]
         - np.einsum("jk,pjab->pjakb", np.eye(m), J)) * keep + first_rows
    solve = _solver(L.reshape(P, m * n, m * n))
    # forward: the sensitivities to y0 and along theta_dot (checked; the tangent's)
    E0 = np.zeros((m, n, n))
    E0[0] = np.eye(n)
    S_list = []
    S_start = np.eye(n, n + 1)
    for p in range(P):
        R = np.concatenate([E0, np.concatenate([np.zeros((1, n)), Br[p, 1:]])[:, :, None]],
                           axis=2)
        X = solve(p, R.reshape(m * n, n + 1)).reshape(m, n, n + 1)
        S_p = X[:, :, :n] @ S_start + np.concatenate([np.zeros((m, n, n)), X[:, :, n:]],
                                                       axis=2)
        S_list.append(S_p)
        S_start = S_p[-1]
    S = np.stack(S_list)
    if not np.all(np.isfinite(S)):
        raise Unresolved
    ok = _cheb.resolved_pieces(S, tol, by_column=True)
    if not ok.all():
        return _Unresolved(ok)
    at, ell = _interpolation(tn, ts)
    if isinstance(job, _Tangent):
        V = S[..., :n] @ job.s0 + S[..., n]  # (P, m, n)
        return np.einsum("km,kmi->ki", ell, V[at])
    Y_bar = job.Y_bar
    # reverse: L_p^T Lambda_p = W_p + (Lambda_{p+1} at its first point, at the last),
    # W_p the output cotangents moved onto the points by the interpolant's weights
    W = np.einsum("kp,km,ki->pmi", (at[:, None] == np.arange(P)).astype(float), ell, Y_bar)
    Lam_list: list = [None] * P
    after = np.zeros(n)
    last = np.zeros((m, 1))
    last[-1] = 1.0
    for p in range(P - 1, -1, -1):
        Lam_p = solve(p, (W[p] + last * after).reshape(m * n), trans=True).reshape(m, n)
        Lam_list[p] = Lam_p
        after = Lam_p[0]
    y0_bar = after
    # (the first points' rows are initial conditions: no f there)
    Lam = np.stack(Lam_list) * (np.arange(m) > 0)[None, :, None]
    C = np.concatenate([Lam.reshape(K, n).T, np.zeros((n, (n - 1) * K))], axis=1)
    _, (f_bar, args_bars) = batch.pull(C)
    return y0_bar, (f_bar, args_bars), y0_bar - Y_bar[0]


@functools.lru_cache(maxsize=8)
def _initial_rows(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(a mask zeroing the rows of each piece's first point, the identity on ``S_0``
    there), as ``(1, N + 1, n, N + 1, n)``."""
    m = N + 1
    keep = np.ones((1, m, n, m, n))
    keep[:, 0] = 0.0
    first = np.zeros((1, m, n, m, n))
    first[0, 0, :, 0, :] = np.eye(n)
    return keep, first


def _solver(L: np.ndarray) -> Any:
    """``solve(p, R, trans=False)``: ``L[p]^{-1} R`` (or ``L[p]^{-T} R``), by LAPACK's LU
    factors of each piece's matrix, or by ``np.linalg.solve`` on an outer AD's traced
    values (which it differentiates)."""
    if not solvers.is_plain(L):
        def traced(p: int, R: Any, trans: bool = False) -> Any:
            return np.linalg.solve(np.swapaxes(L[p], 0, 1) if trans else L[p], R)
        return traced
    lu = []
    for p in range(len(L)):
        lu_p, piv, info = _getrf(L[p])
        if info != 0:
            raise Unresolved  # (a singular collocation matrix; a near-singular one
            # gives sensitivities that are not finite or not resolved, checked after)
        lu.append((lu_p, piv))

    def plain(p: int, R: np.ndarray, trans: bool = False) -> np.ndarray:
        return _getrs(*lu[p], R, trans=int(trans))[0]
    return plain


def _interpolation(tn: np.ndarray, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p, ell)``: for each time ``ts[k]``, the piece ``p[k]`` holding it and the
    interpolant's weights ``ell[k]`` on that piece's points."""
    p = np.minimum(np.searchsorted(tn[:, -1], ts, side="left"), len(tn) - 1)
    return p, _cheb.barycentric(tn[p], ts)


def _all_zero(theta_dot: tuple) -> bool:
    f_dot, args_dots = theta_dot
    return all(kit.is_zero(x) for x in (f_dot, *args_dots))


class _Batch:
    """One trace of ``f`` on the states ``Yb`` (``(n, K)``) at times ``tb``."""

    def __init__(self, rhs: Any, Yb: np.ndarray, tb: np.ndarray, out: Any,
                 pullback: Any) -> None:
        self.rhs, self.Yb, self.tb, self.out, self.pullback = rhs, Yb, tb, out, pullback

    @classmethod
    def trace(cls, rhs: Any, Yb: np.ndarray, tb: np.ndarray, key: Any) -> _Batch | None:
        n, K = Yb.shape
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                out, pullback = core.rrule_via_ad(rhs.config, rhs.f, *rhs.order(Yb, tb),
                                                  *rhs.args)
            F = np.asarray(out)
        except Exception:  # not written for a batch: the rule goes point by point
            _forget(key)
            return None
        if F.shape not in ((n, K), (K,) if n == 1 else (n, K)) or F.dtype.kind != "f":
            _forget(key)
            return None
        cols = np.unique(np.linspace(0, K - 1, min(K, _VERIFY)).astype(int))
        V = np.stack([np.reshape(rhs.f(*rhs.order(Yb[:, k], float(tb[k])), *rhs.args), -1)
                      for k in cols], axis=1)
        if not np.all(np.isclose(F.reshape(n, K)[:, cols], V, rtol=1e-9,
                                 atol=1e-12 * np.max(np.abs(V), initial=1e-300),
                                 equal_nan=True)):
            _forget(key)
            return None
        return cls(rhs, Yb, tb, out, pullback)

    def _pull(self, C: np.ndarray) -> tuple:
        out = self.out
        if isinstance(out, (list, tuple)):
            return self.pullback(type(out)(C[i] for i in range(len(out))))
        return self.pullback(np.reshape(C, np.shape(out)))

    def pull(self, C: np.ndarray) -> tuple:
        """``(y_bar, (f_bar, args_bars))`` for the cotangent ``C`` (``(n, K)``) of the
        batched output."""
        g = self._pull(C)
        y_bar = unthunk(g[2] if self.rhs.tfirst else g[1])
        y_bar = np.zeros(self.Yb.shape) if kit.is_zero(y_bar) else \
            np.broadcast_to(np.real(y_bar), self.Yb.shape)
        return y_bar, (unthunk(g[0]), tuple(unthunk(x) for x in g[3:]))

    def jvp_theta(self, theta_dot: tuple) -> np.ndarray:
        f_dot, args_dots = theta_dot
        rhs = self.rhs
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            _, d = core.frule_via_ad(rhs.config, (f_dot, _ZERO, _ZERO, *args_dots), rhs.f,
                                     *rhs.order(self.Yb, self.tb), *rhs.args)
        d = unthunk(d)
        if kit.is_zero(d):
            return np.zeros(self.Yb.shape)
        return np.broadcast_to(np.real(np.asarray(d, dtype=float)), self.Yb.shape)


def _forget(key: Any) -> None:
    if key is not None:
        _BATCHABLE[key] = False


def _derivatives_match(rhs: Any, batch: _Batch, J: np.ndarray, flat: solvers.Flat,
                       k: int) -> bool:
    """Whether the batched Jacobians at column ``k`` (w.r.t. the state, and ``theta``
    along a random cotangent) equal those of a per-point trace there (``rhs.jacobians``,
    what the rules use point by point)."""
    n = J.shape[1]
    _, J_point, J_theta = rhs.jacobians(float(batch.tb[k]), batch.Yb[:, k].copy(), flat)
    if not np.allclose(J[k], J_point, rtol=1e-9, atol=1e-12 * np.max(np.abs(J_point),
                                                                      initial=1e-300)):
        return False
    if not flat.size:
        return True
    c = np.random.default_rng(1).standard_normal(n)
    point = c @ J_theta
    C = np.zeros(batch.Yb.shape)
    C[:, k] = c
    batched = flat.vector(batch.pull(C)[1])
    return bool(np.allclose(batched, point, rtol=1e-9,
                            atol=1e-12 * np.max(np.abs(point), initial=1e-300)))
