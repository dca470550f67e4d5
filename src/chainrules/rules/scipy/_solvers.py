"""What the solver and integrator rules share: the error for a solve that did not
converge, cotangents of result objects, and tangents as flat vectors.

The rules differentiate the user's function by calling back into the AD
(``rrule_via_ad`` / ``frule_via_ad``). Its derivative w.r.t. what it closes over comes
back as a ``Tangent`` of the function (one field per captured variable), w.r.t. the
solver's ``args`` as one cotangent per entry; `Flat` turns such a structure of
numbers and arrays into one vector (the adjoint ODE integrates it) and back.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import AbstractTangent, ChainRulesError, NoTangent, ProjectTo, Tangent, unthunk
from chainrules.rules import _kit as kit

__all__ = ["SolverError"]

_NO = NoTangent()
_ZERO = core.ZeroTangent()


class SolverError(ChainRulesError, RuntimeError):
    """A solver's result has no derivative the rule can give.

    The solve did not converge (the derivative of an unconverged iterate is not the
    derivative of the solution), the solution is degenerate (a zero derivative at a
    root, a singular Hessian at a minimum), or the call uses an option the rule does
    not differentiate (constraints, events).

    Attributes:
        function: the solver, e.g. ``"scipy.optimize.brentq"``.
        reason: what went wrong.

    Example:
        >>> import scipy.optimize
        >>> from chainrules.ad import grad
        >>> from chainrules.rules.scipy.optimize import SolverError
        >>> try:
        ...     grad(lambda a: scipy.optimize.brentq(lambda t: t ** 3 - a, 0.0, 2.0,
        ...                                           maxiter=2, disp=False))(1.3)
        ... except SolverError as e:
        ...     print(e.function)
        scipy.optimize.brentq
    """

    def __init__(self, function: str, reason: str, fix: str) -> None:
        self.function = function
        self.reason = reason
        super().__init__(f"{function}: {reason}; {fix}")


class SolverOptionError(SolverError, NotImplementedError):
    """A `SolverError` for an option the rule does not differentiate (``events``,
    ``dense_output``): not written, rather than undefined (a ``NotImplementedError``
    too, so that an AD reaching it inside a rule's own code, for a second derivative,
    says which rule is not twice differentiable)."""


def not_converged(function: str, detail: str) -> SolverError:
    return SolverError(
        function, f"the solve did not converge ({detail}), so the derivative of the "
        f"solution is undefined", "expected a converged solve: loosen the tolerance, raise "
        "maxiter or give a better starting point")


_SIGNATURES: dict[Callable, inspect.Signature] = {}


def _signature(solver: Callable) -> inspect.Signature:
    """The solver's signature, read once (a few hundred microseconds each time). (A dict
    read by subscript, not an ``lru_cache``: a rule's code that an outer AD runs hands
    the functions given to a C callable through the AD's wrappers.)"""
    try:
        return _SIGNATURES[solver]
    except KeyError:
        sig = _SIGNATURES[solver] = inspect.signature(solver)
        return sig


def bind(solver: Callable, args: tuple, kwargs: dict) -> inspect.BoundArguments:
    """The solver's arguments by name (``args`` positional as the rule received them)."""
    return _signature(solver).bind(*args, **kwargs)


def args_tuple(args: Any) -> tuple:
    """SciPy's ``args=``: a tuple, or a single value meaning ``(value,)``."""
    if args is None:
        return ()
    return args if isinstance(args, tuple) else (args,)


def field(y_bar: Any, name: str) -> Any:
    """The cotangent of field ``name`` of a result object (``ZeroTangent`` if absent)."""
    y_bar = unthunk(y_bar)
    if isinstance(y_bar, Tangent):
        return unthunk(y_bar[name])
    if isinstance(y_bar, dict):
        return unthunk(y_bar.get(name, _ZERO))
    return _ZERO


def item(y_bar: Any, i: int) -> Any:
    """The cotangent of item ``i`` of a tuple output (``ZeroTangent`` if absent)."""
    y_bar = unthunk(y_bar)
    if isinstance(y_bar, (Tangent, tuple, list)):
        return unthunk(y_bar[i])
    return _ZERO


def positional_cotangents(solver: Callable, pos: tuple, given: dict) -> list:
    """Cotangents of the positional arguments after the function: those named in
    ``given`` get theirs, the rest (brackets, starting points, options) zeros."""
    names = list(_signature(solver).parameters)[1:1 + len(pos)]
    return [given[n] if n in given else _unused(v) for n, v in zip(names, pos)]


def _unused(x: Any) -> Any:
    # a derivative function (fprime, jac) may close over traced values: the AD wants a
    # cotangent for it, zero (it only speeds the solve), never NoTangent
    return _ZERO if callable(x) else kit.zero_for(x)


def positional_tangent(solver: Callable, dargs: tuple, name: str) -> Any:
    """The tangent of the solver's argument ``name`` in an frule's ``dargs``."""
    names = list(_signature(solver).parameters)
    i = names.index(name)
    return unthunk(dargs[i + 1]) if i + 1 < len(dargs) else _ZERO


def scale(c: Any, t: Any) -> Any:
    """``c * t`` for a real ``c`` and a natural or structural tangent (``Tangent``s,
    lists and dicts of numbers and arrays, as a closure's cotangent may hold)."""
    t = unthunk(t)
    if isinstance(t, AbstractTangent) and not isinstance(t, Tangent):
        return t
    if isinstance(t, (Tangent, tuple, list, dict)):
        flat = Flat(t)
        return flat.unflatten(float(np.real(c)) * flat.vector(t))
    return t * c


def args_cotangent(args: Any, bars: list) -> Any:
    """The cotangent of SciPy's ``args=`` from one cotangent per entry."""
    if not isinstance(args, tuple):
        return ProjectTo(args)(bars[0]) if not kit.is_zero(bars[0]) else bars[0]
    items = [b if kit.is_zero(b) else ProjectTo(a)(b) for a, b in zip(args, bars)]
    return Tangent[tuple](*items) if items else _NO


def args_tangents(args: Any, args_dot: Any) -> list:
    """One tangent per entry of SciPy's ``args=`` from the tangent of the argument."""
    args_dot = unthunk(args_dot)
    if not isinstance(args, tuple):
        return [args_dot]
    if isinstance(args_dot, AbstractTangent) and not isinstance(args_dot, Tangent):
        return [_ZERO] * len(args)
    return [unthunk(args_dot[i]) for i in range(len(args))]


def one_like(y: Any) -> Any:
    """The seed of a scalar function's pullback, of its output's type."""
    if isinstance(y, np.ndarray):
        return np.ones(y.shape, dtype=y.dtype)
    # y.__class__, not type(y): an AD's traced value reports its primal's class there
    return y.__class__(1.0) if isinstance(y, (float, np.floating)) else 1.0


def inner(u: Any, v: Any) -> float:
    """The real inner product of two tangents of the same primal (structures too)."""
    u, v = unthunk(u), unthunk(v)
    if kit.is_zero(u) or kit.is_zero(v):
        return 0.0
    if isinstance(u, (Tangent, tuple)):
        return sum(inner(a, at_path(v, (k,))) for k, a in
                   (u.items() if isinstance(u, Tangent) else enumerate(u)))
    return float(np.sum(np.real(np.conj(np.asarray(u)) * np.asarray(v))))


def is_plain(x: Any) -> bool:
    """Whether ``x`` (and what tuples, lists and dicts in it hold) is no AD's traced value
    (a traced value reports its primal's class, which is not its type)."""
    t = type(x)
    if t is tuple or t is list:
        return all(is_plain(v) for v in x)
    if t is dict:
        return all(is_plain(v) for v in x.values())
    return t is x.__class__


def captures_traced(f: Any) -> bool:
    """Whether the closure ``f`` holds an outer AD's traced values (a second derivative
    w.r.t. what it captures)."""
    for cell in getattr(f, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:  # (an empty cell)
            continue
        if not is_plain(v):
            return True
    return False


def refuse_traced_args(name: str, args: Any) -> None:
    """A quadrature rule run on an outer AD's traced ``args=`` (a second derivative with
    respect to the integrand's parameters passed there): refused by name. Its parameter
    integral goes through SciPy's adaptive quadrature, where an outer derivative would
    be lost (it once came out as a silent zero)."""
    if not is_plain(args):
        raise SolverError(
            name, "a second derivative with respect to the integrand's parameters passed "
            "in args= is not supported (second derivatives with respect to the limits "
            "are)", "differentiate with respect to args= once, or twice with respect to "
            "the limits only")


class Flat:
    """A structural tangent (numbers, arrays; ``Tangent``s, tuples, lists and dicts of
    them) as one vector.

    Built from an example; ``vector(t)`` flattens a tangent of the same structure
    (zeros become zeros), ``unflatten(v)`` builds it back.
    """

    def __init__(self, example: Any) -> None:
        self.leaves: list[tuple[tuple, Any]] = []  # (path, shape-and-dtype example)
        self.example = example
        self._walk(unthunk(example), ())
        self.size = sum(int(np.size(e)) for _, e in self.leaves)

    def _walk(self, t: Any, path: tuple) -> None:
        if isinstance(t, Tangent):
            for k, v in t.items():
                self._walk(unthunk(v), (*path, k))
        elif isinstance(t, (tuple, list)):
            for k, v in enumerate(t):
                self._walk(unthunk(v), (*path, k))
        elif isinstance(t, dict):  # a dict's natural cotangent
            for k, v in t.items():
                self._walk(unthunk(v), (*path, k))
        elif not isinstance(t, AbstractTangent):
            # (an outer AD's traced value gives its shape and dtype, not its value)
            self.leaves.append((path, np.asarray(t) if is_plain(t) else
                                np.zeros(np.shape(t), dtype=getattr(t, "dtype", float))))

    def vector(self, t: Any) -> np.ndarray:
        out = []
        for path, e in self.leaves:
            v = at_path(unthunk(t), path)
            out.append(np.zeros(e.size, dtype=float) if kit.is_zero(v)
                       else np.real(np.asarray(v, dtype=e.dtype)).reshape(-1).astype(float))
        return np.concatenate(out) if out else np.zeros(0)

    def unflatten(self, v: np.ndarray) -> Any:
        values, k = {}, 0
        for path, e in self.leaves:
            n = e.size
            values[path] = v[k:k + n].reshape(e.shape).astype(e.dtype) if e.ndim \
                else e.dtype.type(v[k])
            k += n
        return _rebuild(unthunk(self.example), (), values)


def at_path(t: Any, path: tuple) -> Any:
    """The entry at ``path`` of a structural tangent (``ZeroTangent`` where absent)."""
    for k in path:
        t = unthunk(t)
        if kit.is_zero(t):
            return t
        if isinstance(t, Tangent):
            b = t.backing
            t = b.get(k, _ZERO) if isinstance(b, dict) else b[k]
        elif isinstance(t, dict):
            t = t.get(k, _ZERO)
        else:
            t = t[k]
    return unthunk(t)


def _rebuild(t: Any, path: tuple, values: dict) -> Any:
    if isinstance(t, Tangent):
        if isinstance(t.backing, tuple):
            return type(t)(*[_rebuild(unthunk(v), (*path, k), values) for k, v in t.items()])
        return type(t).from_backing({k: _rebuild(unthunk(v), (*path, k), values)
                                     for k, v in t.items()})
    if isinstance(t, (tuple, list)):
        return type(t)(_rebuild(unthunk(v), (*path, k), values) for k, v in enumerate(t))
    if isinstance(t, dict):
        return {k: _rebuild(unthunk(v), (*path, k), values) for k, v in t.items()}
    if isinstance(t, AbstractTangent):
        return t
    return values[path]


# ----------------------------------------------------------------------------------------
# A user's closure as a function of the values it captures


def captured_values(f: Any) -> tuple[tuple[str, ...], tuple]:
    """``(names, values)``: the numbers and floating arrays closure ``f`` captures (the
    fields of its tangent); empty for a function that captures none, or a non-function.

    A rule that integrates or solves with ``f`` inside a larger program it hands to the
    AD passes ``values`` as arguments and rebuilds ``f`` with `with_values`, so that the
    AD differentiates w.r.t. them.
    """
    if type(f) is not types.FunctionType or not f.__closure__:
        return (), ()
    names, values = [], []
    for name, cell in zip(f.__code__.co_freevars, f.__closure__):
        try:
            v = cell.cell_contents
        except ValueError:  # a cell not yet assigned
            continue
        if kit.is_differentiable(v):
            names.append(name)
            values.append(v)
    return tuple(names), tuple(values)


def with_values(f: Any, names: tuple, values: tuple) -> Any:
    """A copy of closure ``f`` whose captured ``names`` hold ``values``; ``f`` itself when
    ``names`` is empty."""
    if not names:
        return f
    new = dict(zip(names, values))
    cells = tuple(types.CellType(new[n]) if n in new else c
                  for n, c in zip(f.__code__.co_freevars, f.__closure__ or ()))
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, cells)
    g.__kwdefaults__ = f.__kwdefaults__
    return g


def closure_tangent(f: Any, names: tuple, bars: Any) -> Any:
    """The (co)tangent of closure ``f`` from those of its captured ``names`` (a tuple, in
    their order, or a zero)."""
    if not names:
        return _ZERO
    return Tangent[type(f)](**{n: item(bars, k) for k, n in enumerate(names)})


def values_tangent(f_dot: Any, names: tuple) -> tuple:
    """The tangents of closure ``f``'s captured ``names`` from ``f``'s tangent."""
    f_dot = unthunk(f_dot)
    return tuple(_ZERO if kit.is_zero(f_dot) or not isinstance(f_dot, Tangent)
                 else unthunk(f_dot[n]) for n in names)


def ad_gradient(config: Any, f: Callable) -> Callable:
    """The gradient of scalar ``f(x, *args)`` w.r.t. ``x`` by the AD, as plain numbers (a
    derivative function for a solve)."""

    def ad_gradient_of_f(x: Any, *args: Any) -> Any:
        y, pullback = core.rrule_via_ad(config, f, x, *args)
        g = unthunk(pullback(one_like(y))[1])
        return np.zeros(np.shape(x)) if kit.is_zero(g) else np.asarray(g, dtype=float)

    return ad_gradient_of_f
