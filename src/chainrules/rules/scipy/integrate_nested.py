"""Rules for ``scipy.integrate``'s multiple integrals, ``dblquad``, ``tplquad`` and
``nquad``: an iterated integral is nested ``quad`` calls, so the rules hand the AD that
nest (``rrule_via_ad`` / ``frule_via_ad``) and `quad`'s own rule differentiates each
level: Leibniz's rule for each limit (a limit that is a function of the outer
variables, ``gfun(x)`` or ``qfun(x, y)``, passes its derivative on to them and to what
the limit function captures) and the integral of the integrand's derivative inside.

Differentiated: what the integrand and the limit functions capture, ``args``, and the
constant limits. The value is SciPy's own; its derivative is computed by nested
adaptive quadratures with the call's ``epsabs``/``epsrel``, so its error is of the
order of the value's, and its cost is about that of the integral times the number of
levels' derivative integrals (``quad_vec`` in reverse mode; measured for a 2-D
integral: value 0.3 ms, gradient 1.1 s, jvp 0.4 s). ``abserr`` has no derivative.
Integrals over 3 or more dimensions (``tplquad``, ``nquad`` with 3 ranges) raise
`SolverError`: each level multiplies that cost by ~100. ``nquad``'s options other than
``epsabs``/``epsrel``/``limit`` (weights, ``points``), and ``full_output``, raise
`SolverError`; a range function of ``nquad`` that captures traced values is not handed
to the rule detached (it sits in a list), so SciPy's call of it fails: give it the
parameters through ``args``, or use ``dblquad``.

Example:
    >>> import numpy as np
    >>> import scipy.integrate
    >>> from chainrules.ad import grad
    >>> def area(c):  # the integral of c * x * y over the triangle 0 < y < x < 1
    ...     return scipy.integrate.dblquad(lambda y, x: c * x * y, 0.0, 1.0, 0.0,
    ...                                    lambda x: x)[0]
    >>> round(grad(area)(2.0), 8)
    0.125
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

__all__: list[str] = []

_NO = core.NoTangent()
_ZERO = core.ZeroTangent()


class _Nest:
    """An iterated integral as nested ``quad`` calls.

    Level ``i`` integrates variable ``x_i`` (``x_0`` innermost, as ``nquad`` numbers
    them); the integrand is ``fns[0](x_0, ..., x_{n-1}, *args)``. Each level's limits are
    ``("const", k)`` (``consts[k]``), ``("fn", j)`` (``fns[j]`` of the outer variables,
    outermost first: ``gfun(x)``, ``qfun(x, y)``) or, for both limits at once,
    ``("range", j)`` (``nquad``: ``fns[j](x_{i+1}, ..., *args)`` returns both). The
    numbers the functions capture travel as arguments of the nest (``values``), so
    that the AD differentiates w.r.t. them.
    """

    def __init__(self, fns: list, limits: list, consts: list, args: tuple,
                 opts: dict) -> None:
        self.fns = fns
        self.limits = limits
        self.consts = tuple(consts)
        self.args = args
        self.opts = opts
        captured = [solvers.captured_values(f) for f in fns]
        self.names = [n for n, _ in captured]
        self.values = tuple(v for _, v in captured)

    def fn(self, j: int, values: tuple) -> Callable:
        return solvers.with_values(self.fns[j], self.names[j], values[j])

    def bounds(self, i: int, outer: tuple, values: tuple, consts: tuple,
               args: tuple) -> tuple:
        spec = self.limits[i]
        if spec[0] == "range":
            lo, hi = self.fn(spec[1], values)(*outer, *args)
            return lo, hi
        return tuple(consts[s[1]] if s[0] == "const" else
                     self.fn(s[1], values)(*outer[::-1]) for s in spec)


def _level(nest: _Nest, i: int, outer: tuple, values: tuple, consts: tuple,
           args: tuple) -> Any:
    lo, hi = nest.bounds(i, outer, values, consts, args)
    return si.quad(_integrand(nest, i), lo, hi, args=(outer, values, consts, args),
                   **nest.opts)[0]


def _integrand(nest: _Nest, i: int) -> Callable:
    def nested_integrand(t: Any, outer: tuple, values: tuple, consts: tuple,
                         args: tuple) -> Any:
        if i == 0:
            return nest.fn(0, values)(t, *outer, *args)
        return _level(nest, i - 1, (t, *outer), values, consts, args)

    return nested_integrand


def _program(nest: _Nest) -> Callable:
    def nested_integral(values: tuple, consts: tuple, args: tuple) -> Any:
        return _level(nest, len(nest.limits) - 1, (), values, consts, args)

    return nested_integral


def _limit(x: Any, fns: list, consts: list) -> tuple:
    """A limit's spec: a function joins ``fns``, a number ``consts``."""
    if callable(x):
        fns.append(x)
        return ("fn", len(fns) - 1)
    consts.append(x)
    return ("const", len(consts) - 1)


def _opts(epsabs: Any, epsrel: Any) -> dict:
    return {"epsabs": epsabs, "epsrel": epsrel}


def _dblquad_nest(arguments: dict) -> _Nest:
    fns: list = [arguments["func"]]
    consts: list = []
    outer = (_limit(arguments["a"], fns, consts), _limit(arguments["b"], fns, consts))
    inner = (_limit(arguments["gfun"], fns, consts), _limit(arguments["hfun"], fns, consts))
    return _Nest(fns, [inner, outer], consts, solvers.args_tuple(arguments.get("args", ())),
                 _opts(arguments.get("epsabs", 1.49e-8),
                       arguments.get("epsrel", 1.49e-8)))


def _tplquad_nest(arguments: dict) -> _Nest:
    fns: list = [arguments["func"]]
    consts: list = []
    levels = [tuple(_limit(arguments[k], fns, consts) for k in pair)
              for pair in (("a", "b"), ("gfun", "hfun"), ("qfun", "rfun"))]
    return _Nest(fns, levels[::-1], consts, solvers.args_tuple(arguments.get("args", ())),
                 _opts(arguments.get("epsabs", 1.49e-8),
                       arguments.get("epsrel", 1.49e-8)))


_NQUAD_OPTS = ("epsabs", "epsrel", "limit")


def _nquad_nest(arguments: dict) -> _Nest:
    name = "scipy.integrate.nquad"
    if arguments.get("full_output"):
        raise SolverError(name, "full_output=True is not differentiated",
                          "expected full_output=False")
    opts = arguments.get("opts") or {}
    if isinstance(opts, (list, tuple)):
        if any(callable(o) for o in opts) or any(dict(o) != dict(opts[0]) for o in opts):
            raise SolverError(name, "per-level or callable opts are not differentiated",
                              "expected one dict of options for every level")
        opts = opts[0] if opts else {}
    if callable(opts):
        raise SolverError(name, "callable opts are not differentiated",
                          "expected one dict of options for every level")
    if any(k not in _NQUAD_OPTS for k in opts):
        raise SolverError(name, f"the options {sorted(set(opts) - set(_NQUAD_OPTS))} are "
                          "not differentiated", "expected only epsabs, epsrel and limit")
    fns: list = [arguments["func"]]
    consts: list = []
    levels = []
    for r in arguments["ranges"]:
        if callable(r):
            fns.append(r)
            levels.append(("range", len(fns) - 1))
        else:
            levels.append((_limit(r[0], fns, consts), _limit(r[1], fns, consts)))
    return _Nest(fns, levels, consts, solvers.args_tuple(arguments.get("args") or ()),
                 {"epsabs": opts.get("epsabs", 1.49e-8), "epsrel": opts.get("epsrel", 1.49e-8),
                  "limit": opts.get("limit", 50)})


def _solve(solver: Callable, nest_of: Callable, func: Callable, pos: tuple,
           kwargs: dict) -> tuple:
    bound = solvers.bind(solver, (func, *pos), kwargs)
    nest = nest_of(bound.arguments)
    if len(nest.limits) > 2:
        # measured: tplquad's gradient ran past 5 minutes at epsrel=1e-6 (its value:
        # 0.01 s); each level multiplies the traced evaluations by ~100-200
        raise SolverError(
            f"scipy.integrate.{solver.__name__}",
            f"the derivative of a {len(nest.limits)}-dimensional integral by nested "
            "adaptive quadratures would take minutes, so it is not computed",
            "expected a double integral (dblquad, nquad with 2 ranges); integrate in 3 or "
            "more dimensions on a fixed grid the AD follows (np.polynomial.legendre."
            "leggauss nodes or np.trapezoid over np.meshgrid)")
    y = solver(*bound.args, **bound.kwargs)
    return y, nest, bound.arguments


# ------------------------------------------------------------------ cotangents and tangents


def _fn_bar(nest: _Nest, j: int, values_bar: Any) -> Any:
    return solvers.closure_tangent(nest.fns[j], nest.names[j], solvers.item(values_bar, j))


def _limit_bar(nest: _Nest, spec: tuple, values_bar: Any, consts_bar: Any) -> Any:
    if spec[0] == "const":
        return solvers.item(consts_bar, spec[1])
    return _fn_bar(nest, spec[1], values_bar)


def _limit_dot(nest: _Nest, spec: tuple, x_dot: Any) -> tuple:
    """``(values_dots, consts_dots)`` entries contributed by one limit's tangent."""
    if spec[0] == "const":
        return {}, {spec[1]: unthunk(x_dot)}
    return {spec[1]: solvers.values_tangent(x_dot, nest.names[spec[1]])}, {}


_FIXED = {
    # per solver: the positional names of its limits, innermost level first
    "dblquad": (("gfun", "hfun"), ("a", "b")),
    "tplquad": (("qfun", "rfun"), ("gfun", "hfun"), ("a", "b")),
}


def _fixed_rules(solver: Callable, nest_of: Callable) -> None:
    """The rules of ``dblquad`` or ``tplquad`` (limits as separate arguments)."""
    short = solver.__name__
    limit_names = _FIXED[short]

    def fixed_rrule(config: Any, func: Callable, *pos: Any, **kwargs: Any) -> Any:
        y, nest, arguments = _solve(solver, nest_of, func, pos, kwargs)

        def nested_quad_pullback(y_bar: Any) -> tuple:
            v_bar = solvers.item(y_bar, 0)
            if kit.is_zero(v_bar):
                return (_NO, _ZERO, *solvers.positional_cotangents(solver, pos, {}))
            _, pullback = core.rrule_via_ad(config, _program(nest), nest.values,
                                            nest.consts, nest.args)
            _, values_bar, consts_bar, args_bar = pullback(float(np.real(v_bar)))
            given = {"args": solvers.args_cotangent(
                arguments.get("args", ()),
                [solvers.item(args_bar, k) for k in range(len(nest.args))])}
            for level, names in enumerate(limit_names):
                for spec, n in zip(nest.limits[level], names):
                    given[n] = _limit_bar(nest, spec, values_bar, consts_bar)
            return (_NO, _fn_bar(nest, 0, values_bar),
                    *solvers.positional_cotangents(solver, pos, given))

        return y, nested_quad_pullback

    def fixed_frule(config: Any, dargs: tuple, func: Callable, *pos: Any,
                    **kwargs: Any) -> Any:
        y, nest, arguments = _solve(solver, nest_of, func, pos, kwargs)
        values_dot: list = [solvers.values_tangent(dargs[1], nest.names[0])]
        values_dot += [() for _ in nest.fns[1:]]
        consts_dot: list = [_ZERO] * len(nest.consts)
        for level, names in enumerate(limit_names):
            for spec, n in zip(nest.limits[level], names):
                vd, cd = _limit_dot(nest, spec, solvers.positional_tangent(solver, dargs, n))
                for j, v in vd.items():
                    values_dot[j] = v
                for k, c in cd.items():
                    consts_dot[k] = c
        args_dot = solvers.args_tangents(arguments.get("args", ()),
                                         solvers.positional_tangent(solver, dargs, "args"))
        _, v_dot = core.frule_via_ad(
            config, (_ZERO, tuple(values_dot), tuple(consts_dot), tuple(args_dot)),
            _program(nest), nest.values, nest.consts, nest.args)
        return y, Tangent[tuple](type(y[0])(unthunk(v_dot)), _ZERO)

    fixed_rrule.__name__ = fixed_rrule.__qualname__ = f"{short}_rrule"
    fixed_frule.__name__ = fixed_frule.__qualname__ = f"{short}_frule"
    rrule.register(solver, config=HasReverseMode)(fixed_rrule)
    frule.register(solver, config=HasForwardsMode)(fixed_frule)


_fixed_rules(si.dblquad, _dblquad_nest)
_fixed_rules(si.tplquad, _tplquad_nest)


@rrule.register(si.nquad, config=HasReverseMode)
def nquad_rrule(config: Any, func: Callable, *pos: Any, **kwargs: Any) -> Any:
    y, nest, arguments = _solve(si.nquad, _nquad_nest, func, pos, kwargs)

    def nquad_pullback(y_bar: Any) -> tuple:
        v_bar = solvers.item(y_bar, 0)
        if kit.is_zero(v_bar):
            return (_NO, _ZERO, *solvers.positional_cotangents(si.nquad, pos, {}))
        _, pullback = core.rrule_via_ad(config, _program(nest), nest.values, nest.consts,
                                        nest.args)
        _, values_bar, consts_bar, args_bar = pullback(float(np.real(v_bar)))
        ranges = arguments["ranges"]
        ranges_bar = []
        for r, spec in zip(ranges, nest.limits):
            if spec[0] == "range":
                ranges_bar.append(_fn_bar(nest, spec[1], values_bar))
            else:
                ranges_bar.append(type(r)(_limit_bar(nest, s, values_bar, consts_bar)
                                          for s in spec))
        raw_args = arguments.get("args") or ()
        given = {"ranges": type(ranges)(ranges_bar), "args": solvers.args_cotangent(
            raw_args, [solvers.item(args_bar, k) for k in range(len(nest.args))])}
        return (_NO, _fn_bar(nest, 0, values_bar),
                *solvers.positional_cotangents(si.nquad, pos, given))

    return y, nquad_pullback


@frule.register(si.nquad, config=HasForwardsMode)
def nquad_frule(config: Any, dargs: tuple, func: Callable, *pos: Any, **kwargs: Any) -> Any:
    y, nest, arguments = _solve(si.nquad, _nquad_nest, func, pos, kwargs)
    values_dot: list = [solvers.values_tangent(dargs[1], nest.names[0])]
    values_dot += [() for _ in nest.fns[1:]]
    consts_dot: list = [_ZERO] * len(nest.consts)
    ranges_dot = solvers.positional_tangent(si.nquad, dargs, "ranges")
    for i, spec in enumerate(nest.limits):
        r_dot = _ZERO if kit.is_zero(ranges_dot) else unthunk(ranges_dot[i])
        if spec[0] == "range":
            values_dot[spec[1]] = solvers.values_tangent(r_dot, nest.names[spec[1]])
            continue
        for k, s in enumerate(spec):
            vd, cd = _limit_dot(nest, s, _ZERO if kit.is_zero(r_dot) else r_dot[k])
            for j, v in vd.items():
                values_dot[j] = v
            for m, c in cd.items():
                consts_dot[m] = c
    args_dot = solvers.args_tangents(arguments.get("args") or (),
                                     solvers.positional_tangent(si.nquad, dargs, "args"))
    _, v_dot = core.frule_via_ad(
        config, (_ZERO, tuple(values_dot), tuple(consts_dot), tuple(args_dot)),
        _program(nest), nest.values, nest.consts, nest.args)
    return y, Tangent[tuple](type(y[0])(unthunk(v_dot)), *[_ZERO] * (len(y) - 1))
