"""Rules for ``scipy.integrate``'s quadratures: integrals differentiated as the mathematics
says, calling back into the AD for the user's function (ODE solvers: ``integrate_ode``).

Writing ``theta`` for what the integrand or the right-hand side depends on besides its
variable (the values a closure captures, and ``args``):

- ``quad(f, a, b, args)``: Leibniz's rule, ``d/db = f(b)``, ``d/da = -f(a)`` (zero for an
  infinite limit) and ``d/dtheta = integral of df/dtheta``, the last integral computed
  by ``quad_vec`` (reverse mode, one vector integral for all of ``theta``) or ``quad``
  (forward mode) with the call's ``epsabs``/``epsrel``. ``abserr`` has no derivative.
- ``odeint`` and ``solve_ivp``: see `chainrules.rules.scipy.integrate_ode`.

Accuracy: the derivative is computed by a second numerical solve with the call's
tolerances (``rtol``/``atol``, ``epsabs``/``epsrel``), so its error is of the order of
the primal's; tighten them for tight derivatives. A failed solve raises
`SolverError`, as do options the rules do not differentiate (``weight`` in
``quad``; ``events`` and ``dense_output`` in ``solve_ivp``).

Example:
    >>> import numpy as np
    >>> import scipy.integrate
    >>> from chainrules.ad import grad
    >>> def loss(k):
    ...     return scipy.integrate.quad(lambda t: np.exp(-k * t), 0.0, 1.0)[0]
    >>> round(grad(loss)(1.0), 8)  # -integral of t exp(-t) over [0, 1]
    -0.26424112
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.integrate as si

from chainrules import core
from chainrules.core import HasForwardsMode, HasReverseMode, Tangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit

from . import _solvers as solvers
from ._solvers import SolverError

__all__ = ["SolverError"]

_NO = core.NoTangent()
_ZERO = core.ZeroTangent()


# ----------------------------------------------------------------------------------------
# quad


def _quad_solve(func: Callable, pos: tuple, kwargs: dict) -> tuple:
    bound = solvers.bind(si.quad, (func, *pos), kwargs)
    arguments = bound.arguments
    if arguments.get("weight") is not None or arguments.get("complex_func"):
        raise SolverError("scipy.integrate.quad", "weighted or complex integrals are not "
                          "differentiated", "expected weight=None and a real integrand")
    full = bool(arguments.get("full_output", 0))
    arguments["full_output"] = 1
    out = si.quad(*bound.args, **bound.kwargs)
    if len(out) > 3:
        raise solvers.not_converged("scipy.integrate.quad", str(out[3]).strip().split("\n")[0])
    y = out if full else out[:2]
    return y, arguments


def _limit_value(func: Callable, t: Any, args: tuple) -> Any:
    return 0.0 if not np.isfinite(t) else func(t, *args)


@rrule.register(si.quad, config=HasReverseMode)
def quad_rrule(config: Any, func: Callable, *pos: Any, **kwargs: Any) -> Any:
    y, arguments = _quad_solve(func, pos, kwargs)
    a, b = arguments["a"], arguments["b"]
    raw_args = arguments.get("args", ())
    args = solvers.args_tuple(raw_args)
    solvers.refuse_traced_args("scipy.integrate.quad", args)

    def quad_pullback(y_bar: Any) -> tuple:
        v_bar = solvers.item(y_bar, 0)
        if kit.is_zero(v_bar):
            return (_NO, _ZERO, *solvers.positional_cotangents(si.quad, pos, {}))
        v_bar = float(np.real(v_bar))
        a_bar = -v_bar * _limit_value(func, a, args) if np.isfinite(a) else _ZERO
        b_bar = v_bar * _limit_value(func, b, args) if np.isfinite(b) else _ZERO
        f_bar, args_bars = _integral_of_gradient(config, func, a, b, args, arguments)
        args_bar = solvers.args_cotangent(raw_args, [solvers.scale(v_bar, b) for b in args_bars])
        f_bar = solvers.scale(v_bar, f_bar)
        return (_NO, f_bar, *solvers.positional_cotangents(
            si.quad, pos, {"a": a_bar, "b": b_bar, "args": args_bar}))

    return y, quad_pullback


def _integral_of_gradient(config: Any, func: Callable, a: Any, b: Any, args: tuple,
                          arguments: dict) -> tuple:
    """``(f_bar, [args_bars])``: the integral over [a, b] of the gradient of ``func(t)``
    w.r.t. what it closes over and ``args`` (one ``quad_vec`` of a flat vector)."""

    def gradient(t: float) -> tuple:
        y, pullback = core.rrule_via_ad(config, func, t, *args)
        g = pullback(solvers.one_like(y))
        return unthunk(g[0]), tuple(unthunk(x) for x in g[2:])

    t_mid = 0.5 * (a + b) if np.isfinite(a) and np.isfinite(b) else (
        a if np.isfinite(a) else b if np.isfinite(b) else 0.0)
    flat = solvers.Flat(gradient(float(t_mid)))
    if flat.size == 0:
        f_bar, args_bars = flat.unflatten(np.zeros(0))
        return f_bar, list(args_bars)
    points = arguments.get("points")
    v, _ = si.quad_vec(lambda t: flat.vector(gradient(t)), a, b,
                       epsabs=arguments.get("epsabs", 1.49e-8),
                       epsrel=arguments.get("epsrel", 1.49e-8),
                       points=points if np.isfinite(a) and np.isfinite(b) else None,
                       norm="max")
    f_bar, args_bars = flat.unflatten(np.asarray(v))
    return f_bar, list(args_bars)


@frule.register(si.quad, config=HasForwardsMode)
def quad_frule(config: Any, dargs: tuple, func: Callable, *pos: Any, **kwargs: Any) -> Any:
    y, arguments = _quad_solve(func, pos, kwargs)
    a, b = arguments["a"], arguments["b"]
    raw_args = arguments.get("args", ())
    args = solvers.args_tuple(raw_args)
    solvers.refuse_traced_args("scipy.integrate.quad", args)
    f_dot = unthunk(dargs[1])
    args_dots = solvers.args_tangents(raw_args, solvers.positional_tangent(si.quad, dargs, "args"))
    a_dot, b_dot = unthunk(dargs[2]), unthunk(dargs[3])
    v_dot = 0.0
    if not kit.is_zero(a_dot) and np.isfinite(a):
        v_dot -= _limit_value(func, a, args) * a_dot
    if not kit.is_zero(b_dot) and np.isfinite(b):
        v_dot += _limit_value(func, b, args) * b_dot
    if not (kit.is_zero(f_dot) and all(kit.is_zero(d) for d in args_dots)):
        def integrand_dot(t: float) -> float:
            _, d = core.frule_via_ad(config, (f_dot, _ZERO, *args_dots), func, t, *args)
            d = unthunk(d)
            return 0.0 if kit.is_zero(d) else float(np.real(d))

        v, _ = si.quad(integrand_dot, a, b, epsabs=arguments.get("epsabs", 1.49e-8),
                       epsrel=arguments.get("epsrel", 1.49e-8),
                       limit=arguments.get("limit", 50), points=arguments.get("points"))
        v_dot += v
    y_dot = Tangent[tuple](type(y[0])(v_dot), *[_ZERO] * (len(y) - 1))
    return y, y_dot
