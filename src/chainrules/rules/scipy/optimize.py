"""Rules for ``scipy.optimize``'s solvers: the derivative of the solution, not of the
iterations (the implicit function theorem).

The solution depends on parameters the user's function receives through ``args`` or
captures in a closure. The rules call back into the AD for that function
(``rrule_via_ad`` / ``frule_via_ad``), so they are registered with
``config=HasReverseMode`` (rrules) and ``config=HasForwardsMode`` (frules). Writing
``theta`` for the parameters (the closure's captured values and ``args``):

- roots of ``f(x, theta) = 0`` (``brentq``, ``brenth``, ``bisect``, ``ridder``,
  ``toms748``, ``newton`` with a scalar ``x0``, ``root_scalar``; ``root`` for vectors):
  ``dx/dtheta = -(df/dx)^-1 df/dtheta`` at the root;
- minima of ``f(x, theta)`` (``minimize_scalar``, unconstrained ``minimize``, or with
  bounds that are not active; ``least_squares`` (reverse mode), ``f = |r|^2 / 2``):
  ``grad_x f = 0`` there, so
  ``dx/dtheta = -H^-1 d(grad_x f)/dtheta`` with ``H`` the Hessian in ``x``, built in the
  pullback from ``n`` Hessian-vector products (forward over reverse) and solved
  densely; the optimal value ``fun`` has ``d fun/dtheta = df/dtheta`` (envelope theorem);
- fixed points ``x = g(x, theta)`` (``fixed_point``): ``dx/dtheta = (I - dg/dx)^-1 dg/dtheta``.

Brackets, starting points and tolerances get zero cotangents (the solution does not
depend on them); a derivative function (``fprime``, ``jac``) only speeds the solve.
Result objects (``OptimizeResult``, ``RootResults``) are differentiated in their
solution field (``x``, ``root``) and ``fun`` (``cost`` for ``least_squares``); a
cotangent on another floating field (``hess_inv``, residuals, a factorization) raises
`SolverError`, and its tangent is ``not_implemented``: never a silent zero. A solve
that did not converge, a degenerate solution or an option the rules do not
differentiate raises `SolverError`. The derivative is exact at the computed
solution; its error is that of the solution (the solver's tolerance) times the
conditioning of ``df/dx`` (or ``H``).

Example:
    >>> import scipy.optimize
    >>> from chainrules.ad import grad
    >>> round(grad(lambda a: scipy.optimize.minimize_scalar(lambda t: (t - a) ** 2).x)(1.0), 6)
    1.0
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

__all__ = ["SolverError"]

_NO = core.NoTangent()
_ZERO = core.ZeroTangent()


def _name(solver: Callable) -> str:
    return f"scipy.optimize.{solver.__name__}"


def _cotangents(solver: Callable, pos: tuple, args_bar: Any) -> list:
    """The positional cotangents after the function: ``args`` gets ``args_bar``."""
    return solvers.positional_cotangents(solver, pos, {"args": args_bar})


def _all_zero(v: Any) -> bool:
    """Whether a field's cotangent is zero, looking inside structures: a field nobody
    reads (Nelder-Mead's ``final_simplex``, a tuple of arrays) gets a structural tangent
    of zeros from the AD, which needs no derivative."""
    v = unthunk(v)
    if kit.is_zero(v):
        return True
    if isinstance(v, Tangent):
        v = v.backing() if callable(getattr(v, "backing", None)) else v
    if isinstance(v, dict):
        return all(_all_zero(u) for u in v.values())
    if isinstance(v, (tuple, list)):
        return all(_all_zero(u) for u in v)
    if isinstance(v, Tangent):
        return all(_all_zero(u) for _, u in v.items())
    try:
        return not np.any(np.asarray(v) != 0)
    except (TypeError, ValueError):
        return False


def _refuse_fields(name: str, y_bar: Any, differentiated: tuple) -> None:
    """Raise for a nonzero cotangent on a result field the rule does not differentiate
    (an inverse Hessian, residuals, a factorization): never a silent zero. ``differentiated``
    also lists fields that are zero at every solution (the gradient at a minimum, the
    residual at a root), whose cotangents need nothing."""
    y_bar = unthunk(y_bar)
    if not isinstance(y_bar, (Tangent, dict)):
        return
    for k, v in y_bar.items():
        v = unthunk(v)
        if k in differentiated or _all_zero(v):
            continue
        raise SolverError(name, f"the result's field {k!r} is not differentiated",
                          f"expected cotangents on the fields {', '.join(differentiated)} "
                          "only; compute other quantities from those")


def _result_tangent(name: str, res: Any, differentiated: tuple, dots: dict) -> Any:
    """The tangent of a result object: ``dots`` for the differentiated fields, and
    ``not_implemented`` for the other floating fields (an inverse Hessian, a
    factorization), so that using one fails loudly instead of reading a zero."""
    rest = {k: core.not_implemented(f"{name} does not differentiate the result's field {k!r}")
            for k, v in res.items()
            if k not in differentiated and kit.is_differentiable(v)}
    return Tangent[type(res)]({**dots, **rest})


def _wrap_derivative(name: str, what: str, g: Any, instead: Any = None) -> Any:
    """A derivative function (``fprime``, ``jac``) returning plain numbers: a traced value
    from it (a keyword argument closing over traced values, which the AD does not hand
    to rules detached) would make the solve itself traced. ``instead`` (the AD's own
    gradient of the function, which is detached) then serves for the solve (the rule
    needs the derivative only where the solve stops, and computes it itself); without
    one that raises."""
    if not callable(g):
        return g
    use = [g]

    def plain_derivative(*a: Any) -> Any:
        v = use[0](*a)
        try:
            return float(v) if np.ndim(v) == 0 else np.asarray(v)
        except TypeError as e:
            if instead is not None and use[0] is g:
                use[0] = instead
                return plain_derivative(*a)
            raise SolverError(name, f"{what} returned a traced value (it closes over "
                              f"traced values and was passed by keyword)", f"pass {what} "
                              f"positionally, or give it the parameters through args") from e

    return plain_derivative


# ----------------------------------------------------------------------------------------
# Derivatives of the user's function at the solution


_VALUE, _FIRST, _RESIDUALS = "value", "first", "residuals"


def _gradient_parts(config: Any, f: Callable, x: Any, args: tuple,
                    kind: Any = _VALUE) -> tuple:
    """``(f(x), f_bar, x_bar, [args_bars])``: the gradient of scalar ``f(x, *args)``;
    ``kind``: ``"first"``, ``f`` returns ``(value, gradient)`` (``jac=True``), the
    value's; ``"residuals"``, ``f`` returns residuals ``r``, that of ``|r|^2 / 2``."""
    y, pullback = core.rrule_via_ad(config, f, x, *args)
    if kind == _FIRST:
        g = pullback((solvers.one_like(y[0]), _ZERO))
    elif kind == _RESIDUALS:
        g = pullback(y)
    else:
        g = pullback(solvers.one_like(y))
    return y, unthunk(g[0]), unthunk(g[1]), [unthunk(b) for b in g[2:]]


def _root_cotangent(name: str, config: Any, f: Callable, x: Any, args: tuple,
                    x_bar: Any) -> tuple:
    """``(f_bar, [args_bars])`` of a scalar root ``x`` of ``f(., *args)`` for ``x_bar``."""
    _, f_bar, fx, args_bars = _gradient_parts(config, f, x, args)
    lam = -x_bar / _nonzero_slope(name, fx)
    return solvers.scale(lam, f_bar), [solvers.scale(lam, b) for b in args_bars]


def _root_tangent(name: str, config: Any, f: Callable, x: Any, args: tuple,
                  f_dot: Any, args_dots: list) -> Any:
    zeros = [_ZERO] * len(args)
    _, fx = core.frule_via_ad(config, (_ZERO, solvers.one_like(x), *zeros), f, x, *args)
    _, f_theta = core.frule_via_ad(config, (f_dot, _ZERO, *args_dots), f, x, *args)
    if kit.is_zero(unthunk(f_theta)):
        return _ZERO
    return -unthunk(f_theta) / _nonzero_slope(name, unthunk(fx))


def _nonzero_slope(name: str, fx: Any) -> Any:
    if kit.is_zero(fx) or fx == 0:
        raise SolverError(
            name,
            "the function's derivative at the root is zero (not a simple "
            "root), so the root's derivative w.r.t. the parameters does not "
            "exist",
            "expected a root where the function crosses zero",
        )
    return fx


class _Optimum:
    """Second-order information at a minimum ``x`` (scalar or 1-D) of ``f(x, *args)``
    (of ``|f(x, *args)|^2 / 2`` for ``kind="residuals"``):
    the Hessian ``H`` and the mixed partials ``M[i] = d(grad_theta f)/dx_i`` as rows of
    flat vectors (``theta`` = the closure's captured values and ``args``)."""

    def __init__(self, name: str, config: Any, f: Callable, x: Any, args: tuple,
                 kind: str) -> None:
        _, f_bar, _, args_bars = _gradient_parts(config, f, x, args, kind)
        self.theta_grad = (f_bar, tuple(args_bars))
        self.flat = solvers.Flat(self.theta_grad)
        flat = self.flat
        xs = np.asarray(x)
        n = xs.size

        def gradient_leaves(x: Any, *args: Any) -> tuple:
            _, f_bar, gx, args_bars = _gradient_parts(config, f, x, args, kind)
            theta = (f_bar, tuple(args_bars))
            return (gx, *(_leaf(theta, path, e) for path, e in flat.leaves))

        H = np.zeros((n, n))
        M = np.zeros((n, flat.size))
        for i in range(n):
            e = np.zeros(xs.shape, dtype=xs.dtype)
            e.reshape(-1)[i] = 1
            direction = e if isinstance(x, np.ndarray) else type(x)(1.0)
            _, dots = core.frule_via_ad(config, (_ZERO, direction, *[_ZERO] * len(args)),
                                        gradient_leaves, x, *args)
            dots = [unthunk(d) for d in dots]
            H[:, i] = 0.0 if kit.is_zero(dots[0]) else np.reshape(dots[0], -1)
            M[i] = np.concatenate([np.zeros(e.size) if kit.is_zero(d) else
                                   np.real(np.reshape(d, -1)) for d, (_, e) in
                                   zip(dots[1:], flat.leaves)]) if flat.leaves else []
        self.H, self.M, self.name = H, M, name

    def solve(self, b: np.ndarray) -> np.ndarray:
        try:
            return np.linalg.solve(self.H, b)
        except np.linalg.LinAlgError:
            raise SolverError(self.name, "the Hessian at the minimum is singular, so the "
                              "minimum's derivative w.r.t. the parameters does not exist",
                              "expected a strict (isolated) minimum") from None

    def cotangent(self, x_bar: Any, fun_bar: Any) -> tuple:
        """``(f_bar, [args_bars])`` for cotangents of the minimizer and the minimum."""
        theta = np.zeros(self.flat.size)
        if not kit.is_zero(x_bar):
            w = self.solve(np.reshape(np.real(x_bar), -1))
            theta = theta - self.M.T @ w
        if not kit.is_zero(fun_bar):
            theta = theta + float(np.real(fun_bar)) * self.flat.vector(self.theta_grad)
        f_bar, args_bars = self.flat.unflatten(theta)
        return f_bar, list(args_bars)

    def tangent(self, x: Any, theta_dot: tuple) -> tuple:
        """``(x_dot, fun_dot)`` for the parameters' tangent ``(f_dot, args_dots)``."""
        v = self.flat.vector(theta_dot)
        x_dot = -self.solve(self.M @ v)
        fun_dot = solvers.inner(self.theta_grad, theta_dot)
        if isinstance(x, np.ndarray):
            return x_dot.reshape(np.shape(x)).astype(x.dtype), fun_dot
        return type(x)(x_dot[0]), fun_dot


def _leaf(theta: Any, path: tuple, example: np.ndarray) -> Any:
    v = solvers.at_path(theta, path)
    return np.zeros(example.shape, dtype=example.dtype) if kit.is_zero(v) else v


# ----------------------------------------------------------------------------------------
# Scalar roots in a bracket: brentq, brenth, bisect, ridder, toms748


_BRACKETING = (so.brentq, so.brenth, so.bisect, so.ridder, so.toms748)


def _bracket_solve(solver: Callable, f: Callable, pos: tuple, kwargs: dict) -> tuple:
    bound = solvers.bind(solver, (f, *pos), kwargs)
    full = bool(bound.arguments.get("full_output", False))
    bound.arguments["full_output"] = True
    bound.arguments["disp"] = False
    x, r = solver(*bound.args, **bound.kwargs)
    if not r.converged:
        raise solvers.not_converged(_name(solver), r.flag)
    return x, r, full, solvers.args_tuple(bound.arguments.get("args", ()))


def _bracketing_rules(solver: Callable) -> None:
    name = _name(solver)

    def bracket_root_rrule(config: Any, f: Callable, *pos: Any, **kwargs: Any) -> Any:
        x, r, full, args = _bracket_solve(solver, f, pos, kwargs)
        raw_args = _raw_args(solver, f, pos, kwargs)

        def bracket_root_pullback(y_bar: Any) -> tuple:
            x_bar = _root_bar(y_bar, full)
            if kit.is_zero(x_bar):
                return (_NO, _ZERO, *_cotangents(solver, pos, _ZERO))
            f_bar, args_bars = _root_cotangent(name, config, f, x, args, x_bar)
            return (_NO, f_bar, *_cotangents(
                solver, pos, solvers.args_cotangent(raw_args, args_bars)))

        return ((x, r) if full else x), bracket_root_pullback

    def bracket_root_frule(config: Any, dargs: tuple, f: Callable, *pos: Any,
                           **kwargs: Any) -> Any:
        x, r, full, args = _bracket_solve(solver, f, pos, kwargs)
        args_dot = solvers.positional_tangent(solver, dargs, "args")
        x_dot = _root_tangent(name, config, f, x, args, unthunk(dargs[1]),
                              solvers.args_tangents(_raw_args(solver, f, pos, kwargs), args_dot))
        return _root_output(x, r, full, x_dot)

    rrule.register(solver, config=HasReverseMode)(bracket_root_rrule)
    frule.register(solver, config=HasForwardsMode)(bracket_root_frule)


def _raw_args(solver: Callable, f: Callable, pos: tuple, kwargs: dict) -> Any:
    return solvers.bind(solver, (f, *pos), kwargs).arguments.get("args", ())


def _root_bar(y_bar: Any, full: bool) -> Any:
    if not full:
        return unthunk(y_bar)
    x_bar, r_bar = solvers.item(y_bar, 0), solvers.field(solvers.item(y_bar, 1), "root")
    if kit.is_zero(x_bar):
        return r_bar
    return x_bar if kit.is_zero(r_bar) else x_bar + r_bar


def _root_output(x: Any, r: Any, full: bool, x_dot: Any) -> tuple:
    if not full:
        return x, x_dot
    return (x, r), Tangent[tuple](x_dot, Tangent[type(r)]({"root": x_dot}))


for _solver in _BRACKETING:
    _bracketing_rules(_solver)


# ----------------------------------------------------------------------------------------
# newton (scalar x0) and root_scalar


def _newton_solve(f: Callable, pos: tuple, kwargs: dict) -> tuple | None:
    bound = solvers.bind(so.newton, (f, *pos), kwargs)
    if np.ndim(bound.arguments["x0"]) != 0:
        return None  # the vectorized form: elementwise roots, no rule
    full = bool(bound.arguments.get("full_output", False))
    for d in ("fprime", "fprime2"):
        if d in bound.arguments:
            bound.arguments[d] = _wrap_derivative("scipy.optimize.newton", d,
                                                  bound.arguments[d])
    bound.arguments["full_output"] = True
    bound.arguments["disp"] = False
    x, r = so.newton(*bound.args, **bound.kwargs)
    if not r.converged:
        raise solvers.not_converged("scipy.optimize.newton", r.flag)
    return x, r, full, bound.arguments.get("args", ())


@rrule.register(so.newton, config=HasReverseMode)
def newton_rrule(config: Any, func: Callable, *pos: Any, **kwargs: Any) -> Any:
    solved = _newton_solve(func, pos, kwargs)
    if solved is None:
        return None
    x, r, full, raw_args = solved
    args = solvers.args_tuple(raw_args)

    def newton_pullback(y_bar: Any) -> tuple:
        x_bar = _root_bar(y_bar, full)
        if kit.is_zero(x_bar):
            return (_NO, _ZERO, *_cotangents(so.newton, pos, _ZERO))
        f_bar, args_bars = _root_cotangent("scipy.optimize.newton", config, func, x, args,
                                           x_bar)
        return (_NO, f_bar, *_cotangents(
            so.newton, pos, solvers.args_cotangent(raw_args, args_bars)))

    return ((x, r) if full else x), newton_pullback


@frule.register(so.newton, config=HasForwardsMode)
def newton_frule(config: Any, dargs: tuple, func: Callable, *pos: Any, **kwargs: Any) -> Any:
    solved = _newton_solve(func, pos, kwargs)
    if solved is None:
        return None
    x, r, full, raw_args = solved
    x_dot = _root_tangent("scipy.optimize.newton", config, func, x, solvers.args_tuple(raw_args),
                          unthunk(dargs[1]), solvers.args_tangents(
                              raw_args, solvers.positional_tangent(so.newton, dargs, "args")))
    return _root_output(x, r, full, x_dot)


def _root_scalar_solve(f: Callable, pos: tuple, kwargs: dict) -> tuple | None:
    bound = solvers.bind(so.root_scalar, (f, *pos), kwargs)
    if bound.arguments.get("fprime") is True or bound.arguments.get("fprime2") is True:
        return None  # f returns (value, derivatives): no rule
    for d in ("fprime", "fprime2"):
        if d in bound.arguments:
            bound.arguments[d] = _wrap_derivative("scipy.optimize.root_scalar", d,
                                                  bound.arguments[d])
    r = so.root_scalar(*bound.args, **bound.kwargs)
    if not r.converged:
        raise solvers.not_converged("scipy.optimize.root_scalar", r.flag)
    return r, bound.arguments.get("args", ())


@rrule.register(so.root_scalar, config=HasReverseMode)
def root_scalar_rrule(config: Any, f: Callable, *pos: Any, **kwargs: Any) -> Any:
    solved = _root_scalar_solve(f, pos, kwargs)
    if solved is None:
        return None
    r, raw_args = solved

    def root_scalar_pullback(y_bar: Any) -> tuple:
        x_bar = solvers.field(y_bar, "root")
        if kit.is_zero(x_bar):
            return (_NO, _ZERO, *_cotangents(so.root_scalar, pos, _ZERO))
        f_bar, args_bars = _root_cotangent("scipy.optimize.root_scalar", config, f, r.root,
                                           solvers.args_tuple(raw_args), x_bar)
        return (_NO, f_bar, *_cotangents(
            so.root_scalar, pos, solvers.args_cotangent(raw_args, args_bars)))

    return r, root_scalar_pullback


@frule.register(so.root_scalar, config=HasForwardsMode)
def root_scalar_frule(config: Any, dargs: tuple, f: Callable, *pos: Any,
                      **kwargs: Any) -> Any:
    solved = _root_scalar_solve(f, pos, kwargs)
    if solved is None:
        return None
    r, raw_args = solved
    x_dot = _root_tangent("scipy.optimize.root_scalar", config, f, r.root,
                          solvers.args_tuple(raw_args), unthunk(dargs[1]), solvers.args_tangents(
                              raw_args, solvers.positional_tangent(so.root_scalar, dargs, "args")))
    return r, Tangent[type(r)]({"root": x_dot})


# ----------------------------------------------------------------------------------------
# Minima: minimize_scalar, minimize


def _check_minimum(name: str, res: Any) -> None:
    if not res.success:
        raise solvers.not_converged(name, str(res.get("message", "success is False")))


def _check_interior(name: str, x: Any, lb: Any, ub: Any, atol: float) -> None:
    x, lb, ub = np.asarray(x, float), np.asarray(lb, float), np.asarray(ub, float)
    if np.any(np.minimum(x - lb, ub - x) <= atol):
        raise SolverError(
            name,
            "the minimum is at (or within the tolerance of) a bound, where "
            "the solution's derivative follows the active constraint, which "
            "the rule does not differentiate",
            "expected a minimum inside the "
            "bounds; widen them or solve the constrained problem with a rule "
            "of your own",
        )


def _minimize_scalar_solve(fun: Callable, pos: tuple, kwargs: dict) -> tuple:
    name = "scipy.optimize.minimize_scalar"
    bound = solvers.bind(so.minimize_scalar, (fun, *pos), kwargs)
    res = so.minimize_scalar(*bound.args, **bound.kwargs)
    _check_minimum(name, res)
    bounds = bound.arguments.get("bounds")
    if bounds is not None:
        options = bound.arguments.get("options") or {}
        _check_interior(name, res.x, bounds[0], bounds[1], 2 * options.get("xatol", 1e-5))
    return res, bound.arguments.get("args", ())


@rrule.register(so.minimize_scalar, config=HasReverseMode)
def minimize_scalar_rrule(config: Any, fun: Callable, *pos: Any, **kwargs: Any) -> Any:
    res, raw_args = _minimize_scalar_solve(fun, pos, kwargs)
    name = "scipy.optimize.minimize_scalar"

    def minimize_scalar_pullback(y_bar: Any) -> tuple:
        x_bar, fun_bar = solvers.field(y_bar, "x"), solvers.field(y_bar, "fun")
        if kit.is_zero(x_bar) and kit.is_zero(fun_bar):
            return (_NO, _ZERO, *_cotangents(so.minimize_scalar, pos, _ZERO))
        opt = _Optimum(name, config, fun, res.x, solvers.args_tuple(raw_args), _VALUE)
        f_bar, args_bars = opt.cotangent(x_bar, fun_bar)
        return (_NO, f_bar, *_cotangents(
            so.minimize_scalar, pos, solvers.args_cotangent(raw_args, args_bars)))

    return res, minimize_scalar_pullback


@frule.register(so.minimize_scalar, config=HasForwardsMode)
def minimize_scalar_frule(config: Any, dargs: tuple, fun: Callable, *pos: Any,
                          **kwargs: Any) -> Any:
    res, raw_args = _minimize_scalar_solve(fun, pos, kwargs)
    args = solvers.args_tuple(raw_args)
    theta_dot = (unthunk(dargs[1]), tuple(solvers.args_tangents(
        raw_args, solvers.positional_tangent(so.minimize_scalar, dargs, "args"))))
    opt = _Optimum("scipy.optimize.minimize_scalar", config, fun, res.x, args, _VALUE)
    x_dot, fun_dot = opt.tangent(res.x, theta_dot)
    return res, Tangent[type(res)]({"x": x_dot, "fun": type(res.fun)(fun_dot)})


def _bracketing_minimizer_rrule(solver: Callable) -> None:
    """The rrule of ``golden`` / ``brent`` (``x = solver(func, args, ...)``, a minimum
    found by comparisons only: traced, it would have no derivative): the implicit
    function rule of ``minimize_scalar``. ``full_output=True`` gets no rule."""
    name = _name(solver)

    def bracketing_rrule(config: Any, fun: Callable, *pos: Any, **kwargs: Any) -> Any:
        bound = solvers.bind(solver, (fun, *pos), kwargs)
        if bound.arguments.get("full_output"):
            return None
        x = solver(*bound.args, **bound.kwargs)
        raw_args = bound.arguments.get("args", ())

        def bracketing_pullback(x_bar: Any) -> tuple:
            x_bar = unthunk(x_bar)
            if kit.is_zero(x_bar):
                return (_NO, _ZERO, *_cotangents(solver, pos, _ZERO))
            opt = _Optimum(name, config, fun, x, solvers.args_tuple(raw_args), _VALUE)
            f_bar, args_bars = opt.cotangent(x_bar, _ZERO)
            return (_NO, f_bar, *_cotangents(
                solver, pos, solvers.args_cotangent(raw_args, args_bars)))

        return x, bracketing_pullback

    bracketing_rrule.__name__ = bracketing_rrule.__qualname__ = f"{solver.__name__}_rrule"
    rrule.register(solver, config=HasReverseMode)(bracketing_rrule)


for _solver in (so.golden, so.brent):
    _bracketing_minimizer_rrule(_solver)


# SciPy's default gtol: a gradient this small is a converged minimum for BFGS/CG/...
_DEFAULT_GTOL = 1e-5


def _stationary_after_precision_loss(res: Any) -> bool:
    """Whether an unsuccessful ``minimize`` stopped on "precision loss" (the line search
    cannot improve in floating point, typically when ``gtol`` asks more than rounding
    allows) at a point that satisfies the first-order optimality condition the implicit
    function rule needs: the gradient's largest entry at most SciPy's default ``gtol``
    (1e-5), where a default solve would report success. The second-order condition (a
    nonsingular Hessian) is checked when the pullback solves with it."""
    message = str(res.get("message", ""))
    jac = res.get("jac")
    if res.success or "precision loss" not in message or jac is None:
        return False
    return bool(np.all(np.isfinite(jac)) and np.max(np.abs(jac), initial=0.0) <= _DEFAULT_GTOL)


def _minimize_solve(fun: Callable, pos: tuple, kwargs: dict, config: Any = None) -> tuple:
    name = "scipy.optimize.minimize"
    bound = solvers.bind(so.minimize, (fun, *pos), kwargs)
    if bound.arguments.get("constraints"):
        raise SolverError(name, "constraints are not differentiated", "expected an "
                          "unconstrained problem (or bounds that are not active); write a "
                          "rule for the constrained problem")
    for d in ("jac", "hess", "hessp"):
        if callable(bound.arguments.get(d)):
            bound.arguments[d] = _wrap_derivative(
                "scipy.optimize.minimize", d, bound.arguments[d],
                solvers.ad_gradient(config, fun) if d == "jac" and config else None)
    res = so.minimize(*bound.args, **bound.kwargs)
    if not _stationary_after_precision_loss(res):
        _check_minimum(name, res)
    bounds = bound.arguments.get("bounds")
    if bounds is not None:
        b = so.Bounds(*zip(*bounds)) if not isinstance(bounds, so.Bounds) else bounds
        tol = bound.arguments.get("tol") or 1e-8
        _check_interior(name, res.x, b.lb, b.ub, tol)
    return res, bound.arguments.get("args", ()), bound.arguments.get("jac") is True


@rrule.register(so.minimize, config=HasReverseMode)
def minimize_rrule(config: Any, fun: Callable, *pos: Any, **kwargs: Any) -> Any:
    res, raw_args, first = _minimize_solve(fun, pos, kwargs, config)

    def minimize_pullback(y_bar: Any) -> tuple:
        _refuse_fields("scipy.optimize.minimize", y_bar, ("x", "fun", "jac"))
        x_bar, fun_bar = solvers.field(y_bar, "x"), solvers.field(y_bar, "fun")
        if kit.is_zero(x_bar) and kit.is_zero(fun_bar):
            return (_NO, _ZERO, *_cotangents(so.minimize, pos, _ZERO))
        opt = _Optimum("scipy.optimize.minimize", config, fun, res.x, solvers.args_tuple(raw_args),
                       _FIRST if first else _VALUE)
        f_bar, args_bars = opt.cotangent(x_bar, fun_bar)
        return (_NO, f_bar, *_cotangents(
            so.minimize, pos, solvers.args_cotangent(raw_args, args_bars)))

    return res, minimize_pullback


@frule.register(so.minimize, config=HasForwardsMode)
def minimize_frule(config: Any, dargs: tuple, fun: Callable, *pos: Any, **kwargs: Any) -> Any:
    res, raw_args, first = _minimize_solve(fun, pos, kwargs, config)
    theta_dot = (unthunk(dargs[1]), tuple(solvers.args_tangents(
        raw_args, solvers.positional_tangent(so.minimize, dargs, "args"))))
    opt = _Optimum("scipy.optimize.minimize", config, fun, res.x, solvers.args_tuple(raw_args),
                   _FIRST if first else _VALUE)
    x_dot, fun_dot = opt.tangent(res.x, theta_dot)
    return res, _result_tangent("scipy.optimize.minimize", res, ("x", "fun", "jac"),
                                {"x": x_dot, "fun": type(res.fun)(fun_dot)})


# ----------------------------------------------------------------------------------------
# least_squares: a minimum of |r(x, theta)|^2 / 2


def _least_squares_solve(fun: Callable, pos: tuple, kwargs: dict) -> tuple:
    name = "scipy.optimize.least_squares"
    bound = solvers.bind(so.least_squares, (fun, *pos), kwargs)
    arguments = bound.arguments
    if arguments.get("loss", "linear") != "linear" or arguments.get("kwargs"):
        raise SolverError(name, "only loss='linear' without kwargs= is differentiated",
                          "expected the plain sum of squares; pass parameters through args")
    if callable(arguments.get("jac")):
        arguments["jac"] = _wrap_derivative(name, "jac", arguments["jac"])
    res = so.least_squares(*bound.args, **bound.kwargs)
    if not res.success:
        raise solvers.not_converged(name, str(res.message))
    bounds = arguments.get("bounds", (-np.inf, np.inf))
    lb, ub = (bounds.lb, bounds.ub) if isinstance(bounds, so.Bounds) else bounds[:2]
    _check_interior(name, res.x, lb, ub, 1e-10)
    return res, arguments.get("args", ())


@rrule.register(so.least_squares, config=HasReverseMode)
def least_squares_rrule(config: Any, fun: Callable, *pos: Any, **kwargs: Any) -> Any:
    res, raw_args = _least_squares_solve(fun, pos, kwargs)

    def least_squares_pullback(y_bar: Any) -> tuple:
        _refuse_fields("scipy.optimize.least_squares", y_bar, ("x", "cost"))
        x_bar, cost_bar = solvers.field(y_bar, "x"), solvers.field(y_bar, "cost")
        if kit.is_zero(x_bar) and kit.is_zero(cost_bar):
            return (_NO, _ZERO, *_cotangents(so.least_squares, pos, _ZERO))
        opt = _Optimum("scipy.optimize.least_squares", config, fun, res.x,
                       solvers.args_tuple(raw_args), _RESIDUALS)
        f_bar, args_bars = opt.cotangent(x_bar, cost_bar)
        return (_NO, f_bar, *_cotangents(
            so.least_squares, pos, solvers.args_cotangent(raw_args, args_bars)))

    return res, least_squares_pullback


# ----------------------------------------------------------------------------------------
# Vector roots and fixed points: root, fixed_point


def _jacobian_rows(f: Callable, config: Any, x: np.ndarray, args: tuple,
                   first: bool) -> tuple[np.ndarray, Callable]:
    """``J = dF/dx`` at ``x`` (rows from pullbacks) and the pullback of ``F``."""
    y, pullback = core.rrule_via_ad(config, f, x, *args)
    y0 = y[0] if first else y
    n = np.size(x)
    if np.size(y0) != n:
        raise SolverError(
            "scipy.optimize.root",
            f"the function returns {np.size(y0)} values for {n} unknowns",
            "expected a square system",
        )

    def pull(w: np.ndarray) -> tuple:
        seed = np.reshape(w, np.shape(y0)).astype(np.result_type(y0, float))
        return pullback((seed, _ZERO) if first else seed)

    J = np.zeros((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = 1.0
        row = unthunk(pull(e)[1])
        J[i] = 0.0 if kit.is_zero(row) else np.reshape(row, -1)
    return J, pull


def _linear_solve(name: str, A: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        raise SolverError(
            name,
            "the Jacobian at the solution is singular, so the solution's "
            "derivative w.r.t. the parameters does not exist",
            "expected an isolated solution",
        ) from None


def _root_solve(fun: Callable, pos: tuple, kwargs: dict) -> tuple:
    bound = solvers.bind(so.root, (fun, *pos), kwargs)
    if callable(bound.arguments.get("jac")):
        bound.arguments["jac"] = _wrap_derivative("scipy.optimize.root", "jac",
                                                  bound.arguments["jac"])
    res = so.root(*bound.args, **bound.kwargs)
    if not res.success:
        raise solvers.not_converged("scipy.optimize.root", str(res.message))
    return res, bound.arguments.get("args", ()), bound.arguments.get("jac") is True


@rrule.register(so.root, config=HasReverseMode)
def root_rrule(config: Any, fun: Callable, *pos: Any, **kwargs: Any) -> Any:
    res, raw_args, first = _root_solve(fun, pos, kwargs)

    def root_pullback(y_bar: Any) -> tuple:
        _refuse_fields("scipy.optimize.root", y_bar, ("x", "fun"))
        x_bar = solvers.field(y_bar, "x")
        if kit.is_zero(x_bar):
            return (_NO, _ZERO, *_cotangents(so.root, pos, _ZERO))
        J, pull = _jacobian_rows(fun, config, res.x, solvers.args_tuple(raw_args), first)
        lam = _linear_solve("scipy.optimize.root", J.T, np.reshape(np.real(x_bar), -1))
        g = pull(-lam)
        args_bars = [unthunk(b) for b in g[2:]]
        return (_NO, unthunk(g[0]), *_cotangents(
            so.root, pos, solvers.args_cotangent(raw_args, args_bars)))

    return res, root_pullback


@frule.register(so.root, config=HasForwardsMode)
def root_frule(config: Any, dargs: tuple, fun: Callable, *pos: Any, **kwargs: Any) -> Any:
    res, raw_args, first = _root_solve(fun, pos, kwargs)
    args = solvers.args_tuple(raw_args)
    x = res.x
    zeros = [_ZERO] * len(args)
    n = x.size
    J = np.zeros((n, n))
    for i in range(n):
        e = np.zeros(x.shape, dtype=x.dtype)
        e.reshape(-1)[i] = 1
        _, col = core.frule_via_ad(config, (_ZERO, e, *zeros), fun, x, *args)
        col = unthunk(col[0] if first else col)
        J[:, i] = 0.0 if kit.is_zero(col) else np.reshape(col, -1)
    _, f_theta = core.frule_via_ad(config, (unthunk(dargs[1]), _ZERO, *solvers.args_tangents(
        raw_args, solvers.positional_tangent(so.root, dargs, "args"))), fun, x, *args)
    f_theta = unthunk(f_theta[0] if first else f_theta)
    if kit.is_zero(f_theta):
        return res, _result_tangent("scipy.optimize.root", res, ("x", "fun"),
                                    {"x": np.zeros_like(x)})
    x_dot = -_linear_solve("scipy.optimize.root", J, np.reshape(f_theta, -1))
    return res, _result_tangent("scipy.optimize.root", res, ("x", "fun"),
                                {"x": x_dot.reshape(x.shape).astype(x.dtype)})


def _fixed_point_solve(func: Callable, pos: tuple, kwargs: dict) -> tuple:
    bound = solvers.bind(so.fixed_point, (func, *pos), kwargs)
    try:
        x = so.fixed_point(*bound.args, **bound.kwargs)
    except RuntimeError as e:
        raise solvers.not_converged("scipy.optimize.fixed_point", str(e)) from e
    return x, bound.arguments.get("args", ())


@rrule.register(so.fixed_point, config=HasReverseMode)
def fixed_point_rrule(config: Any, func: Callable, *pos: Any, **kwargs: Any) -> Any:
    x, raw_args = _fixed_point_solve(func, pos, kwargs)
    x0 = pos[0] if pos else kwargs.get("x0")

    def fixed_point_pullback(y_bar: Any) -> tuple:
        x_bar = unthunk(y_bar)
        if kit.is_zero(x_bar):
            return (_NO, _ZERO, *_cotangents(so.fixed_point, pos, _ZERO))
        # the map at the fixed point, in the type and shape the user gave x0
        xp = np.asarray(x, dtype=np.result_type(x0, float)).reshape(np.shape(x0))
        xp = xp if isinstance(x0, np.ndarray) else type(x0)(xp) if isinstance(
            x0, float) else xp
        G, pull = _jacobian_rows(func, config, xp, solvers.args_tuple(raw_args), False)
        n = G.shape[0]
        lam = _linear_solve("scipy.optimize.fixed_point", np.eye(n) - G.T,
                            np.reshape(np.real(x_bar), -1))
        g = pull(lam)
        args_bars = [unthunk(b) for b in g[2:]]
        return (_NO, unthunk(g[0]), *_cotangents(
            so.fixed_point, pos, solvers.args_cotangent(raw_args, args_bars)))

    return x, fixed_point_pullback
