"""More implicit-function rules for ``scipy.optimize`` (the conventions are those of
`chainrules.rules.scipy.optimize`, whose helpers these rules share):

- ``fixed_point`` in forward mode: ``x = g(x, theta)`` gives
  ``x_dot = (I - dg/dx)^-1 (dg/dtheta) theta_dot``, with ``dg/dx`` from ``n`` pushforwards
  of ``g`` (``n`` the size of ``x``);
- ``least_squares`` in forward mode (``jacobian`` picks it when the parameters are
  fewer than the outputs): the minimum of ``|r(x, theta)|^2 / 2``, as its reverse rule;
- ``curve_fit(f, xdata, ydata, p0, sigma)``: ``popt`` minimizes ``|(f(xdata, *p) - ydata)
  / sigma|^2 / 2`` (1-D ``sigma``), so it is differentiated as that minimum w.r.t.
  ``xdata``, ``ydata``, ``sigma`` and the values the model ``f`` captures (the full
  Hessian, not the Gauss-Newton one: the derivative is exact also for a fit with
  nonzero residuals). ``pcov`` (and ``full_output``'s extras) are not differentiated:
  a cotangent on them raises `SolverError`, their tangent is ``not_implemented``.
  A 2-D ``sigma`` (a covariance), a solve that did not converge and an optimum on an
  active bound raise `SolverError`.

Example:
    >>> import numpy as np
    >>> import scipy.optimize
    >>> from chainrules.ad import grad
    >>> t = np.linspace(0.0, 1.0, 8)
    >>> def fitted_slope(y):
    ...     return scipy.optimize.curve_fit(lambda x, a, b: a * x + b, t, y)[0][0]
    >>> # a linear fit's slope is linear in the data: its gradient is the LS weights
    >>> g = grad(fitted_slope)(2.0 * t + 1.0)
    >>> bool(np.allclose(g, (t - t.mean()) / np.sum((t - t.mean()) ** 2)))
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.optimize as so

from chainrules import core
from chainrules.core import HasForwardsMode, HasReverseMode, Tangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit

from . import _solvers as solvers
from ._solvers import SolverError
from .optimize import (
    _RESIDUALS,
    _all_zero,
    _check_interior,
    _fixed_point_solve,
    _least_squares_solve,
    _linear_solve,
    _Optimum,
    _result_tangent,
)

__all__: list[str] = []

_NO = core.NoTangent()
_ZERO = core.ZeroTangent()


# ----------------------------------------------------------------------------------------
# fixed_point, forward mode


def _as_x0(x: Any, x0: Any) -> Any:
    """The fixed point in the type and shape the user gave ``x0`` (SciPy returns arrays)."""
    xp = np.asarray(x, dtype=np.result_type(x0, float)).reshape(np.shape(x0))
    if isinstance(x0, np.ndarray):
        return xp
    return type(x0)(xp) if isinstance(x0, float) else xp


@frule.register(so.fixed_point, config=HasForwardsMode)
def fixed_point_frule(config: Any, dargs: tuple, func: Callable, *pos: Any,
                      **kwargs: Any) -> Any:
    x, raw_args = _fixed_point_solve(func, pos, kwargs)
    x0 = pos[0] if pos else kwargs.get("x0")
    args = solvers.args_tuple(raw_args)
    xp = _as_x0(x, x0)
    args_dots = solvers.args_tangents(
        raw_args, solvers.positional_tangent(so.fixed_point, dargs, "args"))
    _, g_theta = core.frule_via_ad(config, (unthunk(dargs[1]), _ZERO, *args_dots),
                                   func, xp, *args)
    g_theta = unthunk(g_theta)
    if kit.is_zero(g_theta):
        return x, np.zeros(np.shape(x), dtype=np.result_type(x, float))
    n = int(np.size(xp))
    zeros = [_ZERO] * len(args)
    G = np.zeros((n, n))
    for i in range(n):
        e = np.zeros(np.shape(xp), dtype=np.result_type(xp, float))
        e.reshape(-1)[i] = 1.0
        direction = e if isinstance(xp, np.ndarray) else type(xp)(1.0)
        _, col = core.frule_via_ad(config, (_ZERO, direction, *zeros), func, xp, *args)
        col = unthunk(col)
        G[:, i] = 0.0 if kit.is_zero(col) else np.reshape(col, -1)
    x_dot = _linear_solve("scipy.optimize.fixed_point", np.eye(n) - G,
                          np.reshape(np.real(g_theta), -1))
    return x, x_dot.reshape(np.shape(x)).astype(np.result_type(x, float))


# ----------------------------------------------------------------------------------------
# least_squares, forward mode


@frule.register(so.least_squares, config=HasForwardsMode)
def least_squares_frule(config: Any, dargs: tuple, fun: Callable, *pos: Any,
                        **kwargs: Any) -> Any:
    name = "scipy.optimize.least_squares"
    res, raw_args = _least_squares_solve(fun, pos, kwargs)
    theta_dot = (unthunk(dargs[1]), tuple(solvers.args_tangents(
        raw_args, solvers.positional_tangent(so.least_squares, dargs, "args"))))
    opt = _Optimum(name, config, fun, res.x, solvers.args_tuple(raw_args), _RESIDUALS)
    x_dot, cost_dot = opt.tangent(res.x, theta_dot)
    return res, _result_tangent(name, res, ("x", "cost"),
                                {"x": x_dot, "cost": type(res.cost)(cost_dot)})


# ----------------------------------------------------------------------------------------
# curve_fit: the least-squares fit of a model


_CURVE_FIT = "scipy.optimize.curve_fit"


def _residuals_of(model: Callable, names: tuple, weighted: bool) -> Callable:
    """``r(p, values, xdata, ydata[, sigma]) = (model(xdata, *p) - ydata) [/ sigma]``."""

    def curve_fit_residuals(p: Any, values: tuple, xdata: Any, ydata: Any,
                            *sigma: Any) -> Any:
        y = solvers.with_values(model, names, values)(xdata, *p)
        r = y - ydata
        return r / sigma[0] if weighted else r

    return curve_fit_residuals


def _curve_fit_solve(f: Callable, pos: tuple, kwargs: dict) -> tuple:
    bound = solvers.bind(so.curve_fit, (f, *pos), kwargs)
    arguments = bound.arguments
    sigma = arguments.get("sigma")
    if sigma is not None and np.ndim(sigma) != 1:
        raise SolverError(_CURVE_FIT, "a 2-D sigma (a covariance of ydata) is not "
                          "differentiated", "expected a 1-D sigma (one standard deviation "
                          "per point); whiten the data with the covariance's Cholesky "
                          "factor and call least_squares")
    if callable(arguments.get("jac")):
        raise SolverError(_CURVE_FIT, "a jac function is not differentiated",
                          "expected jac=None or a finite-difference scheme ('2-point', "
                          "'3-point'); the rule needs no Jacobian from you")
    if arguments.get("nan_policy") not in (None, "raise"):
        raise SolverError(_CURVE_FIT, f"nan_policy={arguments.get('nan_policy')!r} is not "
                          "differentiated", "drop the NaN points before the call")
    try:
        out = so.curve_fit(*bound.args, **bound.kwargs)
    except RuntimeError as e:
        raise solvers.not_converged(_CURVE_FIT, str(e)) from e
    bounds = arguments.get("bounds", (-np.inf, np.inf))
    lb, ub = (bounds.lb, bounds.ub) if isinstance(bounds, so.Bounds) else bounds[:2]
    _check_interior(_CURVE_FIT, out[0], lb, ub, 1e-10)
    names, values = solvers.captured_values(f)
    args = (values, arguments["xdata"], arguments["ydata"])
    if sigma is not None:
        args = (*args, sigma)
    return out, _residuals_of(f, names, sigma is not None), names, args


def _refuse_outputs(y_bar: Any, n: int) -> None:
    """``pcov`` and ``full_output``'s extras get no derivative: never a silent zero."""
    what = ("pcov", "infodict", "mesg", "ier")
    for k in range(1, n):
        v = solvers.item(y_bar, k)
        if not _all_zero(v):
            raise SolverError(_CURVE_FIT, f"its output {what[k - 1]!r} is not differentiated",
                              "expected a cotangent on popt only; compute the covariance "
                              "from differentiated quantities (e.g. a hessian)")


@rrule.register(so.curve_fit, config=HasReverseMode)
def curve_fit_rrule(config: Any, f: Callable, *pos: Any, **kwargs: Any) -> Any:
    out, residuals, names, args = _curve_fit_solve(f, pos, kwargs)

    def curve_fit_pullback(y_bar: Any) -> tuple:
        _refuse_outputs(y_bar, len(out))
        popt_bar = solvers.item(y_bar, 0)
        if kit.is_zero(popt_bar):
            return (_NO, _ZERO, *solvers.positional_cotangents(so.curve_fit, pos, {}))
        opt = _Optimum(_CURVE_FIT, config, residuals, out[0], args, _RESIDUALS)
        _, args_bars = opt.cotangent(popt_bar, _ZERO)
        given = {"xdata": args_bars[1], "ydata": args_bars[2]}
        if len(args) == 4:
            given["sigma"] = args_bars[3]
        return (_NO, solvers.closure_tangent(f, names, args_bars[0]),
                *solvers.positional_cotangents(so.curve_fit, pos, given))

    return out, curve_fit_pullback


@frule.register(so.curve_fit, config=HasForwardsMode)
def curve_fit_frule(config: Any, dargs: tuple, f: Callable, *pos: Any,
                    **kwargs: Any) -> Any:
    out, residuals, names, args = _curve_fit_solve(f, pos, kwargs)
    values_dot = solvers.values_tangent(dargs[1], names)
    data_names = ("xdata", "ydata", "sigma")[:len(args) - 1]
    theta_dot = (_ZERO, (values_dot, *(solvers.positional_tangent(so.curve_fit, dargs, n)
                                       for n in data_names)))
    opt = _Optimum(_CURVE_FIT, config, residuals, out[0], args, _RESIDUALS)
    popt_dot, _ = opt.tangent(out[0], theta_dot)
    rest = [core.not_implemented(f"{_CURVE_FIT} does not differentiate pcov")]
    if len(out) > 2:  # full_output: infodict, mesg, ier
        rest += [core.not_implemented(f"{_CURVE_FIT} does not differentiate infodict"),
                 _NO, _NO]
    return out, Tangent[type(out)](popt_dot, *rest)
