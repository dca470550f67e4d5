"""Rules for ``scipy.integrate.quad_vec``, the integral of a vector-valued ``f(t)``
(issue 29: the AD traced into SciPy's code and stopped at its in-place ``+=``).

As for ``quad``, writing ``theta`` for what ``f`` captures and its ``args``:
``d/db = f(b)``, ``d/da = -f(a)`` (zero at an infinite limit), and
``d/dtheta`` is the integral of ``df/dtheta``: in reverse mode one ``quad_vec`` of the
flat gradient of ``<y_bar, f(t)>`` w.r.t. ``theta``, in forward mode one ``quad_vec`` of
``f``'s pushforward, both with the call's ``epsabs``/``epsrel``/``norm``/``limit``.
The error estimate (and ``full_output``'s information) has no derivative.

Example:
    >>> import numpy as np
    >>> import scipy.integrate
    >>> from chainrules.ad import grad
    >>> def loss(k):  # the integrals of exp(-k t) and t exp(-k t) over [0, 1]
    ...     v = scipy.integrate.quad_vec(lambda t: np.array([1.0, t]) * np.exp(-k * t),
    ...                                  0.0, 1.0)[0]
    ...     return v[0]
    >>> round(grad(loss)(1.0), 8)
    -0.26424112
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.integrate as si

from chainrules import core
from chainrules.core import HasForwardsMode, HasReverseMode, Tangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit

from . import _solvers as solvers
from ._solvers import SolverError

__all__: list[str] = []

_NO = core.NoTangent()
_ZERO = core.ZeroTangent()
_NAME = "scipy.integrate.quad_vec"

# `args` is keyword-only in quad_vec: declared positional after the others, so that the
# AD moves a traced `args=` to a place the rules differentiate (a traced keyword it
# cannot move makes it trace into SciPy's code instead)
_PARAMS = [p.replace(kind=p.POSITIONAL_OR_KEYWORD)
           for p in inspect.signature(si.quad_vec).parameters.values()]
_SIGNATURE = inspect.Signature(_PARAMS)
_NAMES = [p.name for p in _PARAMS]
kit.declare_parameters(si.quad_vec, lambda _: _PARAMS)


def _cotangents(pos: tuple, given: dict) -> list:
    """The cotangents of the positional arguments after ``f``."""
    return [given[n] if n in given else _ZERO if callable(v) else kit.zero_for(v)
            for n, v in zip(_NAMES[1:], pos)]


def _tangent(dargs: tuple, name: str) -> Any:
    i = _NAMES.index(name) + 1
    return unthunk(dargs[i]) if i < len(dargs) else _ZERO


def _solve(f: Callable, pos: tuple, kwargs: dict) -> tuple:
    bound = _SIGNATURE.bind(f, *pos, **kwargs)
    arguments = dict(bound.arguments)
    if arguments.get("workers", 1) != 1:
        raise SolverError(_NAME, "workers other than 1 are not differentiated",
                          "expected workers=1")
    full = bool(arguments.get("full_output", False))
    arguments["full_output"] = True
    out = si.quad_vec(**arguments)
    info = out[2]
    if not getattr(info, "success", True):
        raise solvers.not_converged(_NAME, str(getattr(info, "message", "")))
    y = out if full else out[:2]
    options = {k: arguments[k] for k in ("epsabs", "epsrel", "norm", "limit", "quadrature")
               if k in arguments}
    if np.isfinite(arguments["a"]) and np.isfinite(arguments["b"]) and \
            arguments.get("points") is not None:
        options["points"] = arguments["points"]
    return y, arguments, options


def _at(f: Callable, t: Any, args: tuple) -> Any:
    return np.asarray(f(t, *args))


@rrule.register(si.quad_vec, config=HasReverseMode)
def quad_vec_rrule(config: Any, f: Callable, *pos: Any, **kwargs: Any) -> Any:
    y, arguments, options = _solve(f, pos, kwargs)
    a, b = arguments["a"], arguments["b"]
    args = solvers.args_tuple(arguments.get("args", ()))
    solvers.refuse_traced_args("scipy.integrate.quad_vec", args)

    def quad_vec_pullback(y_bar: Any) -> tuple:
        v_bar = solvers.item(y_bar, 0)
        if kit.is_zero(v_bar):
            return (_NO, _ZERO, *_cotangents(pos, {}))
        v_bar = np.real(np.asarray(v_bar))
        given: dict = {}
        if np.isfinite(a):
            given["a"] = -float(np.sum(v_bar * _at(f, a, args)))
        if np.isfinite(b):
            given["b"] = float(np.sum(v_bar * _at(f, b, args)))

        def gradient(t: float) -> tuple:
            _, pullback = core.rrule_via_ad(config, f, t, *args)
            g = pullback(v_bar.astype(np.result_type(v_bar, float)) if np.ndim(v_bar)
                         else float(v_bar))
            return unthunk(g[0]), tuple(unthunk(x) for x in g[2:])

        t_mid = 0.5 * (a + b) if np.isfinite(a) and np.isfinite(b) else (
            a if np.isfinite(a) else b if np.isfinite(b) else 0.0)
        flat = solvers.Flat(gradient(float(t_mid)))
        if flat.size:
            opts = {**options, "norm": "max"}
            v, _ = si.quad_vec(lambda t: flat.vector(gradient(t)), a, b, **opts)
            f_bar, args_bars = flat.unflatten(np.asarray(v))
        else:
            f_bar, args_bars = flat.unflatten(np.zeros(0))
        if args:
            given["args"] = solvers.args_cotangent(arguments.get("args", ()),
                                                   list(args_bars))
        return (_NO, f_bar, *_cotangents(pos, given))

    return y, quad_vec_pullback


@frule.register(si.quad_vec, config=HasForwardsMode)
def quad_vec_frule(config: Any, dargs: tuple, f: Callable, *pos: Any, **kwargs: Any) -> Any:
    y, arguments, options = _solve(f, pos, kwargs)
    a, b = arguments["a"], arguments["b"]
    raw_args = arguments.get("args", ())
    args = solvers.args_tuple(raw_args)
    solvers.refuse_traced_args("scipy.integrate.quad_vec", args)
    f_dot = unthunk(dargs[1])
    args_dots = solvers.args_tangents(raw_args, _tangent(dargs, "args"))
    a_dot, b_dot = _tangent(dargs, "a"), _tangent(dargs, "b")
    v_dot = np.zeros(np.shape(y[0]), dtype=np.result_type(y[0], float))
    if not kit.is_zero(a_dot) and np.isfinite(a):
        v_dot = v_dot - _at(f, a, args) * a_dot
    if not kit.is_zero(b_dot) and np.isfinite(b):
        v_dot = v_dot + _at(f, b, args) * b_dot
    if not (kit.is_zero(f_dot) and all(kit.is_zero(d) for d in args_dots)):
        def integrand_dot(t: float) -> Any:
            _, d = core.frule_via_ad(config, (f_dot, _ZERO, *args_dots), f, t, *args)
            d = unthunk(d)
            return np.zeros(np.shape(y[0])) if kit.is_zero(d) else np.real(np.asarray(d))

        v, _ = si.quad_vec(integrand_dot, a, b, **options)
        v_dot = v_dot + v
    rest = [_ZERO] + ([core.not_implemented(f"{_NAME} does not differentiate its info")]
                      if len(y) > 2 else [])
    return y, Tangent[tuple](np.asarray(v_dot).astype(np.result_type(y[0], float))
                             if np.ndim(y[0]) else type(y[0])(v_dot), *rest)
