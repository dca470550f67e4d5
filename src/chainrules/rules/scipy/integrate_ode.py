"""Rules for ``scipy.integrate.odeint`` and ``scipy.integrate.solve_ivp`` (the quadrature
rules are in `chainrules.rules.scipy.integrate`).

Writing ``theta`` for what the right-hand side depends on besides its state and time
(the values a closure captures, and ``args``):

- ``odeint(func, y0, t, args)`` and ``solve_ivp(fun, t_span, y0, args=..., t_eval=...)``
  w.r.t. ``y0`` and ``theta``: reverse mode by the sensitivities ``S = dy/d(y0, theta)``
  computed by Chebyshev collocation (``S' = (df/dy) S + [0 | df/dtheta]`` with the
  Jacobians from the AD: in one pass over all the points when ``f`` takes a batch of
  states, `_ode_batched`, else point by point, `_collocation_gradient`) when they
  resolve and the system is small, else by the adjoint method (the adjoint
  ``a' = -(df/dy)^T a`` and ``theta_bar' = -(df/dtheta)^T a`` integrated backwards with
  ``solve_ivp``, the state read from a dense forward re-solve, the output cotangent
  added at each output time; ``(df/dy)^T a`` and ``(df/dtheta)^T a`` are pullbacks of
  the user's function by ``rrule_via_ad``); forward mode by forward sensitivities
  (``s' = (df/dy) s + (df/dtheta) theta_dot`` integrated alongside the state, one
  ``frule_via_ad`` per right-hand side evaluation). ``odeint``'s times ``t`` too
  (``Y[k]`` moves with ``t[k]`` at the speed ``f(Y[k], t[k])``); ``solve_ivp``'s times
  are not differentiated (a ``NotImplementedTangent``).
- Second derivatives (``hessian``, ``jvp`` of ``grad``, ``jvp`` of ``jvp``): run on an
  outer AD's traced values, the rules solve the sensitivity equations with ``odeint``
  as NumPy code the outer AD follows, the parameters (``args`` and the numbers and
  arrays the right-hand side captures, `_opened`) passed as that solve's ``args``, so
  the outer AD differentiates it with these same rules.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.integrate as si

from chainrules import core
from chainrules.core import HasForwardsMode, HasReverseMode, Tangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit

from . import _chebyshev as _cheb
from . import _ode_batched as _batched
from . import _solvers as solvers
from ._solvers import SolverError

_NO = core.NoTangent()
_ZERO = core.ZeroTangent()


# ----------------------------------------------------------------------------------------
# ODEs: the adjoint method (reverse) and forward sensitivities (forward)


class _RHS:
    """The user's right-hand side ``f`` with its argument order (``f(y, t)`` for odeint,
    ``f(t, y)`` for solve_ivp and odeint's ``tfirst=True``), on 1-D states."""

    def __init__(self, config: Any, f: Callable, args: tuple, tfirst: bool,
                 shape: tuple) -> None:
        self.config, self.f, self.args, self.tfirst, self.shape = config, f, args, tfirst, shape

    def order(self, y: Any, t: Any) -> tuple:
        return (t, y) if self.tfirst else (y, t)

    def __call__(self, t: float, y: np.ndarray) -> np.ndarray:
        return np.reshape(self.f(*self.order(y.reshape(self.shape), t), *self.args), -1)

    def vjp(self, t: float, y: np.ndarray, a: np.ndarray) -> tuple:
        """``((df/dy)^T a, (f_bar, args_bars))`` at ``(t, y)``."""
        out, pullback = core.rrule_via_ad(self.config, self.f,
                                          *self.order(y.reshape(self.shape), t), *self.args)
        g = pullback(np.reshape(a, np.shape(out)).astype(np.result_type(out, float)))
        y_bar = unthunk(g[2] if self.tfirst else g[1])
        theta = (unthunk(g[0]), tuple(unthunk(x) for x in g[3:]))
        return (np.zeros(a.shape) if kit.is_zero(y_bar) else np.reshape(y_bar, -1)), theta

    def jacobians(self, t: float, y: np.ndarray, flat: solvers.Flat) -> tuple:
        """``(f, df/dy, df/dtheta)`` at ``(t, y)``: one trace of ``f``, one pullback per
        state (the Jacobians' rows), ``theta`` flattened by ``flat``."""
        out, pullback = core.rrule_via_ad(self.config, self.f,
                                          *self.order(y.reshape(self.shape), t), *self.args)
        out = np.reshape(out, -1)
        n = out.size
        J_y = np.zeros((n, y.size))
        J_theta = np.zeros((n, flat.size))
        seeds = np.eye(n, dtype=np.result_type(out, float))
        for i in range(n):
            g = pullback(seeds[i].reshape(self.shape))
            y_bar = unthunk(g[2] if self.tfirst else g[1])
            if not kit.is_zero(y_bar):
                J_y[i] = np.reshape(y_bar, -1)
            if flat.size:
                J_theta[i] = _theta_vector(flat, g)
        return out, J_y, J_theta

    def jvp(self, t: float, y: np.ndarray, s: np.ndarray, f_dot: Any,
            args_dots: list) -> np.ndarray:
        """``(df/dy) s + (df/dtheta) theta_dot`` at ``(t, y)``."""
        y_dot = s.reshape(self.shape)
        dots = (_ZERO, y_dot) if self.tfirst else (y_dot, _ZERO)
        _, d = core.frule_via_ad(self.config, (f_dot, *dots, *args_dots), self.f,
                                 *self.order(y.reshape(self.shape), t), *self.args)
        d = unthunk(d)
        return np.zeros(s.shape) if kit.is_zero(d) else np.reshape(d, -1)


def _theta_vector(flat: solvers.Flat, g: tuple) -> np.ndarray:
    """``theta``'s cotangent in the pullback's output ``g`` of ``f(y, t, *args)`` as
    ``flat``'s vector; the common case (only ``args``, numbers and arrays) read directly
    (``Flat.vector`` walks the structure: a sixth of a Jacobian row's cost)."""
    if not all(len(path) == 2 and path[0] == 1 for path, _ in flat.leaves):
        return flat.vector((unthunk(g[0]), tuple(unthunk(x) for x in g[3:])))
    out = np.zeros(flat.size)
    k = 0
    for (_, i), e in flat.leaves:
        v = unthunk(g[3 + i])
        if not kit.is_zero(v):
            out[k:k + e.size] = np.real(np.reshape(v, -1))
        k += e.size
    return out


def _adjoint(rhs: _RHS, ts: np.ndarray, y0: np.ndarray, Y_bar: np.ndarray, rtol: float,
             atol: float, name: str) -> tuple:
    """``(y0_bar, theta_bar, a0)`` for cotangents ``Y_bar[k]`` of the states at times
    ``ts``; ``a0`` is the adjoint just after ``ts[0]`` (without ``Y_bar[0]``)."""
    forward = si.solve_ivp(rhs, (ts[0], ts[-1]), y0, method="DOP853", dense_output=True,
                           rtol=rtol, atol=atol)
    if not forward.success:
        raise solvers.not_converged(
            name, f"the forward re-solve for the adjoint: {forward.message}"
        )
    n = y0.size
    _, theta_example = rhs.vjp(float(ts[0]), y0, np.ones(n))
    flat = solvers.Flat(theta_example)

    def adjoint_rhs(t: float, z: np.ndarray) -> np.ndarray:
        y_bar, theta = rhs.vjp(t, forward.sol(t), z[:n])
        return -np.concatenate([y_bar, flat.vector(theta)])

    z = np.zeros(n + flat.size)
    for k in range(len(ts) - 1, 0, -1):
        z[:n] += Y_bar[k]
        if ts[k] == ts[k - 1]:
            continue
        back = si.solve_ivp(adjoint_rhs, (ts[k], ts[k - 1]), z, method="DOP853",
                            rtol=rtol, atol=atol)
        if not back.success:
            raise solvers.not_converged(name, f"the adjoint solve: {back.message}")
        z = back.y[:, -1]
    y0_bar = z[:n] + Y_bar[0]
    return y0_bar, flat.unflatten(z[n:]), z[:n]


# The reverse rules compute the sensitivities ``S = dy/d(y0, theta)`` (``n x (n + m)``) by
# Chebyshev collocation when the system is small: `_ode_batched` when ``f`` takes a
# batch of states (one trace for all the points), else the code below: the Jacobians
# of ``f`` are evaluated by the AD at a few dozen Chebyshev points of the time interval
# (one trace of ``f`` and ``n`` pullbacks each), on the state re-solved there by LSODA
# at a tighter tolerance, and the linear sensitivity equations ``S' = (df/dy) S + [0 |
# df/dtheta]`` are solved there as one dense linear system. The number of traced
# evaluations then follows the smoothness of the solution, not the solver's step count:
# on Lotka-Volterra (n = 2, m = 4, 21 outputs) about 65 against ~900 for the adjoint (a
# dense re-solve, then one backward solve per output interval, a trace and a pullback
# per evaluation), see benchmarks/bench_ode.py. The resolution is checked on the
# Jacobians and on ``S`` (their last Chebyshev coefficients); an interval that is not
# resolved is halved, and past ``2**_MAX_DEPTH`` pieces (non-smooth or very long
# solutions), or for large systems, the adjoint is used.
_LEVELS = (8, 16, 32)
_MAX_DEPTH = 6
_MAX_UNKNOWNS = 1200  # (N + 1) n, the size of the dense collocation system


def _collocates(ts: Any, n: int) -> bool:
    """Whether the collocation takes ``n`` states at the output times ``ts``: ascending,
    over an interval, a dense system of at most `_MAX_UNKNOWNS`."""
    return (_LEVELS[-1] + 1) * n <= _MAX_UNKNOWNS and len(ts) > 1 and ts[-1] > ts[0] and \
        bool(np.all(np.diff(ts) >= 0))


class _UnresolvedError(Exception):
    """The collocation did not resolve the sensitivities: use the adjoint."""


def _collocation_gradient(rhs: _RHS, ts: np.ndarray, y0: np.ndarray, Y_bar: np.ndarray,
                          flat: solvers.Flat, rtol: float, atol: float) -> tuple:
    """``(y0_bar, theta_bar_vector)`` from the sensitivities at the output times ``ts``
    (ascending); raises `_UnresolvedError`."""
    n, m = y0.size, flat.size
    k = n + m
    tol, rtol_y, atol_y = _batched.tolerances(rtol, atol)
    n_max = _LEVELS[-1]
    S_out = np.zeros((len(ts), n, k))

    def piece(a: float, b: float, y_a: np.ndarray, S_a: np.ndarray, depth: int) -> tuple:
        nodes = _cheb.points(a, b, n_max)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", si.ODEintWarning)
            ys, info = si.odeint(rhs, y_a, nodes, tfirst=True, rtol=rtol_y, atol=atol_y,
                                 full_output=True)
        if info["message"] != "Integration successful.":
            raise _UnresolvedError
        # the state is cheap to sample: it picks the first level tried with the AD
        levels = [N for N in _LEVELS if _cheb.resolved(ys[::n_max // N], tol)]
        J_y = np.zeros((n_max + 1, n, n))
        B = np.zeros((n_max + 1, n, k))
        done = np.zeros(n_max + 1, dtype=bool)
        for N in levels[:1] + [N for N in _LEVELS if levels and N > levels[0]]:
            idx = np.arange(0, n_max + 1, n_max // N)
            for j in idx[~done[idx]]:
                _, J_y[j], B[j, :, n:] = rhs.jacobians(float(nodes[j]), ys[j], flat)
                done[j] = True
            if not (_cheb.resolved(J_y[idx], tol) and _cheb.resolved(B[idx], tol, True)):
                continue
            S = _cheb.solve_linear(a, b, J_y[idx], B[idx], S_a)
            if not (np.all(np.isfinite(S)) and _cheb.resolved(S, tol, True)):
                continue
            inside = (ts >= a) & (ts <= b)
            S_out[inside] = _cheb.interpolate(a, b, S, ts[inside])
            return ys[-1], S[-1]
        if depth == _MAX_DEPTH:
            raise _UnresolvedError
        mid = 0.5 * (a + b)
        y_mid, S_mid = piece(a, mid, y_a, S_a, depth + 1)
        return piece(mid, b, y_mid, S_mid, depth + 1)

    piece(float(ts[0]), float(ts[-1]), y0, np.eye(n, k), 0)
    g = np.einsum("tij,ti->j", S_out, Y_bar)
    return g[:n], g[n:]


def _reverse(rhs: _RHS, ts: np.ndarray, y0: np.ndarray, Y_bar: np.ndarray, rtol: float,
             atol: float, name: str, sampled: tuple | None = None) -> tuple:
    """``(y0_bar, theta_bar, a0)`` as `_adjoint` gives them: by collocation where it
    resolves the sensitivities, else by the adjoint."""
    n = y0.size
    if _collocates(ts, n):
        try:
            # f traced once on the states at all the points, when it takes a batch
            result = _batched.gradient(rhs, ts, y0, Y_bar, rtol, atol, sampled)
            if result is not None:
                return result
            _, theta_example = rhs.vjp(float(ts[0]), y0, np.ones(n))
            flat = solvers.Flat(theta_example)
            y0_bar, theta_bar = _collocation_gradient(rhs, ts, y0, Y_bar, flat, rtol, atol)
        except (_UnresolvedError, _batched.Unresolved):
            pass
        else:
            return y0_bar, flat.unflatten(theta_bar), y0_bar - Y_bar[0]
    return _adjoint(rhs, ts, y0, Y_bar, rtol, atol, name)


def _traced_gradient(rhs: _RHS, ts: Any, y0: Any, Y_bar: Any, rtol: float, atol: float,
                     name: str) -> tuple:
    """``(y0_bar, [args_bars], f_bar)`` for a second derivative: `_ode_batched`'s
    collocation run on the outer AD's traced values when ``f`` takes a batch (its code is
    written so that the outer AD follows it: a Hessian of Lotka-Volterra's loss in a
    third of a second, against tens of seconds), else `_traced_sensitivities`."""
    if solvers.is_plain(ts) and _collocates(ts, int(np.size(y0))):
        try:
            result = _batched.gradient(rhs, np.asarray(ts, float), y0, Y_bar, rtol, atol)
        except Exception:  # (unresolved, or an operation the outer AD cannot follow)
            result = None
        if result is not None:
            y0_bar, (f_bar, args_bars), _ = result
            return y0_bar, list(args_bars), f_bar
    return _traced_sensitivities(rhs, ts, y0, Y_bar, rtol, atol, name)


def _traced_sensitivities(rhs: _RHS, ts: np.ndarray, y0: Any, Y_bar: Any, rtol: float,
                          atol: float, name: str) -> tuple:
    """``(y0_bar, [args_bars], f_bar)`` for a second derivative: the sensitivities ``S =
    dy/d(y0, args, captured)`` integrated alongside the state by ``odeint``, the
    parameters (and the numbers and arrays the right-hand side captures, see `_opened`)
    passed as its ``args``: NumPy code and a solver call that an outer AD differentiates
    again (with its rules for ``odeint``: forward sensitivities of this system, whose
    Jacobians of ``f`` are nested derivatives)."""
    f, names, captured = _opened(rhs.f, name)
    params = (*rhs.args, *captured)
    n = int(np.size(y0))
    sizes = [int(np.size(a)) for a in params]
    shapes = [np.shape(a) for a in params]
    k = n + sum(sizes)
    config, tfirst, seeds = rhs.config, rhs.tfirst, np.eye(n)

    def sensitivity_rhs(t: Any, z: Any, *params: Any) -> Any:
        y = z[:n]
        S = np.reshape(z[n:], (n, k))
        out, pullback = core.rrule_via_ad(config, f, *((t, y) if tfirst else (y, t)), *params)
        J_y, J_params = [], []
        for i in range(n):
            g = [unthunk(b) for b in pullback(seeds[i])]
            y_bar = g[2] if tfirst else g[1]
            J_y.append(np.zeros(n) if kit.is_zero(y_bar) else np.reshape(y_bar, -1))
            J_params.append(np.concatenate([np.zeros(1)[:0]] + [
                np.zeros(size) if kit.is_zero(b) else np.reshape(b, -1)
                for b, size in zip(g[3:], sizes)]))
        S_dot = np.stack(J_y) @ S + np.concatenate([np.zeros((n, n)), np.stack(J_params)],
                                                   axis=1)
        return np.concatenate([np.reshape(out, -1), np.reshape(S_dot, -1)])

    z0 = np.concatenate([y0, np.reshape(np.eye(n, k), -1)])
    Z = si.odeint(sensitivity_rhs, z0, ts, args=params, tfirst=True, rtol=rtol, atol=atol)
    S = np.reshape(Z[:, n:], (len(ts), n, k))
    g = np.sum(S * np.reshape(Y_bar, (len(ts), n, 1)), axis=(0, 1))
    bars, start = [], n
    for size, shape in zip(sizes, shapes):
        bars.append(np.reshape(g[start:start + size], shape))
        start += size
    m = len(rhs.args)
    f_bar = Tangent[types.FunctionType](**dict(zip(names, bars[m:]))) if names else _ZERO
    return g[:n], bars[:m], f_bar


def _is_real_leaf(v: Any) -> bool:
    # (an AD's traced value reports its primal's class, so isinstance sees it too)
    return isinstance(v, (float, np.floating)) or (
        isinstance(v, np.ndarray) and v.dtype.kind == "f")


def _opened(f: Any, name: str) -> tuple:
    """``(f_open, names, values)``: the real numbers and arrays the closure ``f``
    captures (``names``, their ``values``) made trailing parameters of ``f_open`` (a
    copy of ``f`` with its own cells, filled for the duration of each call), so that a
    solve can take them as ``args`` and an outer AD sees them there. ``f`` itself when
    it captures none. Traced values in other captured objects are refused."""
    code, closure = getattr(f, "__code__", None), getattr(f, "__closure__", None)
    if code is None or not closure:
        return f, [], []
    names, values, cells, opened = [], [], [], []
    for var, cell in zip(code.co_freevars, closure):
        try:
            v = cell.cell_contents
        except ValueError:
            cells.append(types.CellType())
            continue
        if _is_real_leaf(v):
            names.append(var)
            values.append(v)
            opened.append(types.CellType(None))
            cells.append(opened[-1])
        elif solvers.is_plain(v):
            cells.append(types.CellType(v))
        else:
            raise SolverError(
                name, f"a second derivative w.r.t. traced values the right-hand side "
                f"captures inside {type(v).__name__} {var!r} is not implemented",
                "capture numbers and arrays, or pass them as parameters through args=")
    if not names:
        return f, [], []
    g = types.FunctionType(code, f.__globals__, f.__name__, f.__defaults__, tuple(cells))
    g.__kwdefaults__ = f.__kwdefaults__
    k = len(names)

    def f_open(*xs: Any) -> Any:
        for c, v in zip(opened, xs[len(xs) - k:]):
            c.cell_contents = v
        try:
            return g(*xs[:len(xs) - k])
        finally:
            for c in opened:  # (no traced value left behind in a cell)
                c.cell_contents = None

    return f_open, names, values


def _sensitivities(rhs: _RHS, ts: np.ndarray, y0: Any, s0: Any, f_dot: Any,
                   args_dots: list, rtol: float, atol: float, name: str,
                   sampled: tuple | None = None) -> Any:
    """The states' tangents at times ``ts`` (rows): by the collocation of `_ode_batched`
    when ``f`` takes a batch of states, else from forward sensitivities ``s' = (df/dy) s +
    (df/dtheta) theta_dot`` integrated alongside the state by ``odeint``, one
    ``frule_via_ad`` per evaluation. The parameters and their tangents are ``odeint``'s
    ``args``, so that an outer AD (a second derivative: jvp of jvp, jvp of grad)
    differentiates this solve again with these same rules."""
    f, config, tfirst, shape = rhs.f, rhs.config, rhs.tfirst, rhs.shape
    params, params_dots = tuple(rhs.args), list(args_dots)
    plain = solvers.is_plain((y0, s0, rhs.args, args_dots, f_dot)) and \
        not solvers.captures_traced(f)
    if plain and _collocates(ts, int(np.size(y0))):
        try:
            S = _batched.tangent(rhs, ts, np.asarray(y0, float), np.asarray(s0, float),
                                 (f_dot, list(args_dots)), rtol, atol, sampled)
        except _batched.Unresolved:
            S = None
        if S is not None:
            return S
    if not plain:
        # a second derivative: what f captures goes to args too, for the outer AD
        f, names, captured = _opened(f, name)
        if names:
            params = (*params, *captured)
            params_dots += [solvers.at_path(f_dot, (var,)) for var in names]
            f_dot = _ZERO
    n, m = int(np.size(y0)), len(params)

    def tangent_rhs(t: Any, z: Any, *values: Any) -> Any:
        y, s = np.reshape(z[:n], shape), np.reshape(z[n:], shape)
        dots = (_ZERO, s) if tfirst else (s, _ZERO)
        out, d = core.frule_via_ad(config, (f_dot, *dots, *values[m:]), f,
                                   *((t, y) if tfirst else (y, t)), *values[:m])
        d = unthunk(d)
        return np.concatenate([np.reshape(out, -1),
                               np.zeros(n) if kit.is_zero(d) else np.reshape(d, -1)])

    with warnings.catch_warnings():
        # a failed solve is raised as SolverError below, not only warned about
        warnings.simplefilter("ignore", si.ODEintWarning)
        Z, info = si.odeint(tangent_rhs, np.concatenate([y0, s0]), ts,
                            args=(*params, *params_dots), tfirst=True, rtol=rtol, atol=atol,
                            full_output=True)
    if info["message"] != "Integration successful.":
        raise solvers.not_converged(name, f"the sensitivity solve: {info['message']}")
    return Z[:, n:]


def _odeint_solve(func: Callable, pos: tuple, kwargs: dict, sample: bool = False) -> tuple:
    """``(the primal, Y, full_output, arguments, sampled)``; with ``sample``, the solve
    also gives the state at the collocation's points (`_ode_batched.gradient`'s
    ``sampled``) where that leaves the primal unchanged, else ``sampled`` is None."""
    bound = solvers.bind(si.odeint, (func, *pos), kwargs)
    arguments = bound.arguments
    full = bool(arguments.get("full_output", 0))
    arguments["full_output"] = 1
    t = arguments["t"]
    sampled = None
    extra = _sample_times(func, arguments) if sample else None
    if extra is not None:
        arguments["t"] = t_all = np.union1d(t, extra)
    with warnings.catch_warnings():
        # a failed solve is raised as SolverError below, not only warned about
        warnings.simplefilter("ignore", si.ODEintWarning)
        Y, info = si.odeint(*bound.args, **bound.kwargs)
    if extra is not None:
        arguments["t"] = t
        at = np.searchsorted(t_all, t)
        if info["message"] == "Integration successful." and _same_steps(info, at, arguments):
            sampled = (extra, Y[np.searchsorted(t_all, extra)], float(t[1]))
            Y = Y[at]
            info = {k: v[at[1:] - 1] if isinstance(v, np.ndarray) and
                    v.shape[:1] == (len(t_all) - 1,) else v for k, v in info.items()}
        else:  # the plain solve, to fail (or not) exactly as it does
            return _odeint_solve(func, pos, kwargs)
    if info["message"] != "Integration successful.":
        raise solvers.not_converged("scipy.integrate.odeint", info["message"])
    return (Y, info) if full else Y, Y, full, arguments, sampled


def _sample_times(func: Callable, arguments: dict) -> np.ndarray | None:
    """The collocation's points after the first output time, for a plain solve with
    ascending times of a system the collocation takes (else None). LSODA's steps do
    not depend on output times past the first (which sets its initial step), so asking
    for these leaves the primal bit for bit as it is."""
    t, y0 = arguments["t"], arguments["y0"]
    if not isinstance(t, np.ndarray | list | tuple) or not solvers.is_plain(
            (t, y0, arguments.get("args", ()))) or solvers.captures_traced(func):
        return None
    t = np.asarray(t)
    if t.ndim != 1 or len(t) < 2 or t.dtype.kind not in "fiu" or \
            (_LEVELS[-1] + 1) * np.size(y0) > _MAX_UNKNOWNS or not np.all(np.diff(t) > 0):
        return None
    times = _batched.grid_times(float(t[0]), float(t[-1]))
    return times[times > t[1]]


def _same_steps(info: dict, at: np.ndarray, arguments: dict) -> bool:
    """Whether no interval between the user's output times took more steps than
    ``mxstep`` allows one call (with fewer outputs the plain solve would stop there)."""
    mxstep = arguments.get("mxstep") or 500
    nst = np.concatenate([[0], info["nst"]])[at]
    return bool(np.all(np.diff(nst) <= mxstep))


def _tolerances(arguments: dict) -> tuple[float, float]:
    rtol = arguments.get("rtol")
    atol = arguments.get("atol")
    rtol = 1.49012e-8 if rtol is None else float(np.min(rtol))
    atol = 1.49012e-8 if atol is None else float(np.min(atol))
    return rtol, atol


@rrule.register(si.odeint, config=HasReverseMode)
def odeint_rrule(config: Any, func: Callable, *pos: Any, **kwargs: Any) -> Any:
    y, Y, full, arguments, sampled = _odeint_solve(func, pos, kwargs, sample=True)
    shape0 = np.shape(arguments["y0"])
    n = int(np.prod(shape0))
    traced_t = not solvers.is_plain(arguments["t"])
    ts = arguments["t"] if traced_t else np.asarray(arguments["t"], dtype=float)
    raw_args = arguments.get("args", ())
    tfirst = bool(arguments.get("tfirst"))
    rhs = _RHS(config, func, solvers.args_tuple(raw_args), tfirst, (n,))
    rtol, atol = _tolerances(arguments)

    def odeint_pullback(y_bar: Any) -> tuple:
        Y_bar = solvers.item(y_bar, 0) if full else unthunk(y_bar)
        if kit.is_zero(Y_bar):
            return (_NO, _ZERO, *solvers.positional_cotangents(si.odeint, pos, {}))
        if traced_t or not solvers.is_plain((Y_bar, arguments["y0"], rhs.args)) or \
                solvers.captures_traced(func):
            # a second derivative: NumPy code and solver calls the outer AD follows
            Y_bar = np.reshape(Y_bar, (len(ts), n))
            y0_bar, args_bars, f_bar = _traced_gradient(
                rhs, ts, np.reshape(arguments["y0"], -1), Y_bar, rtol, atol,
                "scipy.integrate.odeint")
            F = np.stack([np.reshape(rhs(ts[k], np.reshape(Y[k], -1)), -1)
                          for k in range(len(ts))])
            t_bar = np.concatenate([-np.reshape((y0_bar - Y_bar[0]) @ F[0], (1,)),
                                    np.sum(Y_bar[1:] * F[1:], axis=1)])
            return (_NO, f_bar, *solvers.positional_cotangents(si.odeint, pos, {
                "y0": np.reshape(y0_bar, shape0), "t": t_bar,
                "args": solvers.args_cotangent(raw_args, args_bars)}))
        Y_bar = np.real(np.asarray(Y_bar, float))
        y0_bar, (f_bar, args_bars), a0 = _reverse(
            rhs, ts, Y[0].astype(float), Y_bar, rtol, atol, "scipy.integrate.odeint",
            sampled)
        y0_bar = kit.array_projector(arguments["y0"])(y0_bar.reshape(shape0))

        def t_cotangent() -> Any:
            # Y[k] moves with t[k] at the speed f(Y[k], t[k]); moving t[0] moves the start
            F = np.array([rhs(float(tk), Yk) for tk, Yk in zip(ts, Y.astype(float))])
            t_bar = np.einsum("ki,ki->k", Y_bar, F)
            t_bar[0] = -a0 @ F[0]
            return kit.array_projector(arguments["t"])(t_bar)

        return (_NO, f_bar, *solvers.positional_cotangents(si.odeint, pos, {
            "y0": y0_bar, "t": core.Thunk(t_cotangent),
            "args": solvers.args_cotangent(raw_args, list(args_bars))}))

    return y, odeint_pullback


# The AD runs these rules (their code traced) when the function they are given closes
# over an outer trace's values, rather than tracing into SciPy's solver (`_opened`
# passes those values to the solves as parameters).
odeint_rrule.closures_of_outer_traces = True  # type: ignore[attr-defined]


@frule.register(si.odeint, config=HasForwardsMode)
def odeint_frule(config: Any, dargs: tuple, func: Callable, *pos: Any, **kwargs: Any) -> Any:
    y, Y, full, arguments, sampled = _odeint_solve(func, pos, kwargs, sample=True)
    ts = np.asarray(arguments["t"], dtype=float)
    raw_args = arguments.get("args", ())
    rhs = _RHS(config, func, solvers.args_tuple(raw_args), bool(arguments.get("tfirst")),
               (Y.shape[1],))
    y0_dot = solvers.positional_tangent(si.odeint, dargs, "y0")
    s0 = np.reshape(kit.dense_tangent(y0_dot, arguments["y0"]).astype(float), -1)
    t_dot = solvers.positional_tangent(si.odeint, dargs, "t")
    F = None
    if not kit.is_zero(t_dot):
        # Y[k] moves with t[k] at the speed f(Y[k], t[k]); moving t[0] moves the start
        t_dot = np.reshape(kit.dense_tangent(t_dot, arguments["t"]).astype(float), -1)
        F = np.array([rhs(float(tk), Yk) for tk, Yk in zip(ts, Y.astype(float))])
        s0 = s0 - F[0] * t_dot[0]
    rtol, atol = _tolerances(arguments)
    S = _sensitivities(
        rhs,
        ts,
        Y[0].astype(float),
        s0,
        unthunk(dargs[1]),
        solvers.args_tangents(raw_args, solvers.positional_tangent(si.odeint, dargs, "args")),
        rtol,
        atol,
        "scipy.integrate.odeint",
        sampled,
    )
    if F is not None:
        S = S + F * t_dot[:, None]
    S = S.astype(Y.dtype)
    return y, (Tangent[tuple](S, _ZERO) if full else S)


odeint_frule.closures_of_outer_traces = True  # type: ignore[attr-defined]


def _solve_ivp_solve(fun: Callable, pos: tuple, kwargs: dict) -> tuple:
    bound = solvers.bind(si.solve_ivp, (fun, *pos), kwargs)
    arguments = bound.arguments
    options = arguments.get("options", {})
    if arguments.get("events") is not None or arguments.get("dense_output"):
        raise solvers.SolverOptionError(
            "scipy.integrate.solve_ivp", "events and dense_output are not differentiated",
            "expected the solution at t_eval (or the solver's steps). (A second derivative "
            "through odeint's or solve_ivp's reverse rule meets this too: their adjoint "
            "method re-solves with dense_output; jvp of jvp works there)")
    res = si.solve_ivp(*bound.args, **bound.kwargs)
    if not res.success:
        raise solvers.not_converged("scipy.integrate.solve_ivp", str(res.message))
    rtol = float(np.min(options.get("rtol", 1e-3)))
    atol = float(np.min(options.get("atol", 1e-6)))
    return res, arguments, rtol, atol


@rrule.register(si.solve_ivp, config=HasReverseMode)
def solve_ivp_rrule(config: Any, fun: Callable, *pos: Any, **kwargs: Any) -> Any:
    res, arguments, rtol, atol = _solve_ivp_solve(fun, pos, kwargs)
    shape0 = np.shape(arguments["y0"])
    n = int(np.prod(shape0))
    raw_args = arguments.get("args") or ()
    rhs = _RHS(config, fun, solvers.args_tuple(raw_args), True, (n,))

    def solve_ivp_pullback(y_bar: Any) -> tuple:
        Y_bar = solvers.field(y_bar, "y")
        if kit.is_zero(Y_bar):
            return (_NO, _ZERO, *solvers.positional_cotangents(si.solve_ivp, pos, {}))
        times = core.not_implemented("derivative of solve_ivp w.r.t. the times")
        if not solvers.is_plain((Y_bar, arguments["y0"], rhs.args)) or solvers.captures_traced(fun):
            # a second derivative: NumPy code and solver calls the outer AD follows
            t = np.asarray(res.t, float)
            ts, Y_bars = _from_start(arguments, t, np.transpose(Y_bar))
            y0_bar, args_bars, f_bar = _traced_gradient(
                rhs, ts, np.reshape(arguments["y0"], -1), Y_bars, rtol, atol,
                "scipy.integrate.solve_ivp")
            return (_NO, f_bar, *solvers.positional_cotangents(si.solve_ivp, pos, {
                "y0": np.reshape(y0_bar, shape0), "t_span": times, "t_eval": times,
                "args": solvers.args_cotangent(raw_args, args_bars) if raw_args else _NO}))
        ts, Y_bars = _from_start(arguments, res.t, np.real(np.asarray(Y_bar, float)).T)
        y0_bar, (f_bar, args_bars), _ = _reverse(
            rhs, ts, np.reshape(arguments["y0"], -1).astype(float), Y_bars, rtol, atol,
            "scipy.integrate.solve_ivp")
        y0_bar = kit.array_projector(arguments["y0"])(y0_bar.reshape(shape0))
        return (_NO, f_bar, *solvers.positional_cotangents(si.solve_ivp, pos, {
            "y0": y0_bar, "t_span": times, "t_eval": times,
            "args": solvers.args_cotangent(raw_args, list(args_bars)) if raw_args else _NO}))

    return res, solve_ivp_pullback


solve_ivp_rrule.closures_of_outer_traces = True  # type: ignore[attr-defined]


@frule.register(si.solve_ivp, config=HasForwardsMode)
def solve_ivp_frule(config: Any, dargs: tuple, fun: Callable, *pos: Any,
                    **kwargs: Any) -> Any:
    res, arguments, rtol, atol = _solve_ivp_solve(fun, pos, kwargs)
    if not kit.is_zero(solvers.positional_tangent(si.solve_ivp, dargs, "t_span")):
        raise SolverError("scipy.integrate.solve_ivp", "the derivative w.r.t. the times is "
                          "not implemented", "expected tangents for y0, args and the "
                          "function only")
    raw_args = arguments.get("args") or ()
    n = res.y.shape[0]
    rhs = _RHS(config, fun, solvers.args_tuple(raw_args), True, (n,))
    y0_dot = solvers.positional_tangent(si.solve_ivp, dargs, "y0")
    s0 = np.reshape(kit.dense_tangent(y0_dot, arguments["y0"]).astype(float), -1)
    args_dot = solvers.positional_tangent(si.solve_ivp, dargs, "args") if raw_args else _ZERO
    ts, _ = _from_start(arguments, res.t, np.zeros((len(res.t), n)))
    S = _sensitivities(rhs, ts, np.reshape(arguments["y0"], -1).astype(float), s0,
                       unthunk(dargs[1]), solvers.args_tangents(raw_args, args_dot) if raw_args
                       else [], rtol, atol, "scipy.integrate.solve_ivp")
    S = S[len(ts) - len(res.t):]
    return res, Tangent[type(res)]({"y": S.T.astype(res.y.dtype)})


solve_ivp_frule.closures_of_outer_traces = True  # type: ignore[attr-defined]


def _from_start(arguments: dict, t: np.ndarray, Y_bar: Any) -> tuple:
    """The output times preceded by the start time when ``t_eval`` leaves it out (the
    adjoint and the sensitivities start at ``y0``), with a zero cotangent there."""
    t0 = float(arguments["t_span"][0])
    t = np.asarray(t, float)
    if len(t) and t[0] == t0:
        return t, Y_bar
    return np.concatenate([[t0], t]), np.concatenate([np.zeros((1, np.shape(Y_bar)[1])),
                                                       Y_bar])
