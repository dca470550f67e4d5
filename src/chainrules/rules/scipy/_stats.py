"""The machinery shared by the ``scipy.stats`` rule modules (not a rule module itself).

Rules for a distribution method are registered on the function ``rv_continuous.logpdf``
(and so on) with the distribution's class as the first dispatch type; see
``stats_continuous.py`` for why. `register_method` builds the frule and rrule of one
(distribution class, method) pair from a *partials* function:

    partials(dist, values, y) -> {name: derivative}

where ``values`` maps each parameter name (``"x"``, the shape names, ``"loc"``,
``"scale"``) to its value as a float64 array, and each derivative is

- a zero-argument callable returning the elementwise partial derivative of ``y``
  (broadcastable to ``y``), evaluated only when that cotangent is needed;
- a string: the derivative exists but has no closed form SciPy can evaluate
  (``not_implemented`` with that reason; ``NoTangent()`` for integer-valued input);
- absent or None: the parameter cannot be perturbed (``NoTangent()``), e.g. the
  integer ``k`` of a pmf or a discrete distribution's integer ``loc``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, Thunk, ZeroTangent, not_implemented, unthunk
from chainrules.rules import _kit as kit

__all__ = ["as_float", "cdf_scale", "check_real", "is_integer_valued", "masked",
           "opt_out_subclasses", "register_method", "shape_names"]


def shape_names(dist: Any) -> list[str]:
    """The names of a distribution's shape parameters, in SciPy's positional order."""
    return [s.strip() for s in dist.shapes.split(",")] if dist.shapes else []


def as_float(v: Any) -> np.ndarray:
    return np.asarray(v, dtype=np.float64)


def is_integer_valued(v: Any) -> bool:
    """A Python int or an integer array: a count, which cannot be perturbed."""
    if isinstance(v, (bool, int, np.integer)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind in "iub"


def masked(inside: Any, f: Callable) -> Callable:
    """The partial ``f`` where ``inside`` holds, 0 outside the support (deferred too)."""
    def masked_partial() -> Any:
        with np.errstate(all="ignore"):
            return np.where(inside, f(), 0.0)

    return masked_partial


def cdf_scale(method: str, y: Any) -> Any:
    """What turns a derivative of the cdf into one of ``method``'s value ``y``: 1 for
    the cdf, -1 for the sf, and ``1/cdf``, ``-1/sf`` in log space."""
    with np.errstate(all="ignore"):
        return {"cdf": 1.0, "sf": -1.0, "logcdf": np.exp(-np.asarray(y)),
                "logsf": -np.exp(-np.asarray(y))}[method]


def check_real(name: str, params: list[str], args: tuple, kwargs: dict) -> None:
    """Refuse complex arguments: SciPy evaluates some densities at complex points, but
    the rules' formulas (and the distributions) are real."""
    given = [*zip(params, args), *kwargs.items()]
    for param, value in given:
        if np.iscomplexobj(value):
            raise NotImplementedError(
                f"the rule for scipy.stats.{name} does not support complex inputs (argument "
                f"{param!r} is complex); the distributions are real: pass real values, or "
                f"differentiate the real and imaginary parts separately")


def _bind(names: list[str], defaults: dict, args: tuple, kwargs: dict) -> dict:
    values = dict(defaults)
    values.update(zip(names, args))
    values.update((k, v) for k, v in kwargs.items() if k in names)
    return {k: as_float(v) for k, v in values.items()}


def _cotangent(p: Callable, y_bar: Any, shape: tuple, project: Any) -> Any:
    return project(np.broadcast_to(y_bar * p(), shape))


def register_method(func: Any, dist_type: type, names: Callable[[Any], list[str]],
                    defaults: dict, partials: Callable, dist_name: str) -> None:
    """Register the frule and rrule of ``func(dist, *args, **kwargs)`` for instances of
    exactly ``dist_type`` (a subclass may redefine the density: it gets no rule).

    ``names(dist)`` gives the parameter names in positional order; ``defaults`` the
    values of the optional ones; ``dist_name`` (e.g. ``"norm"``) names the rule
    functions and pullbacks (``norm_logpdf_pullback``) and the errors.
    """
    label, public = f"{dist_name}_{func.__name__}", f"{dist_name}.{func.__name__}"

    def stats_rrule(dist: Any, *args: Any, **kwargs: Any) -> Any:
        if type(dist) is not dist_type:
            return None
        check_real(public, names(dist), args, kwargs)
        y = func(dist, *args, **kwargs)
        pos = names(dist)[:len(args)]
        shape = np.shape(y)
        computed: list = []  # the partials, computed by the first pullback call

        def stats_pullback(y_bar: Any) -> tuple:
            y_bar = unthunk(y_bar)
            if not computed:
                computed.append(partials(dist, _bind(names(dist), defaults, args, kwargs), y))
            parts = computed[0]
            out: list = [NoTangent(), NoTangent()]
            for name, x in zip(pos, args):
                p = parts.get(name)
                if p is None or (is_integer_valued(x) and (
                        isinstance(p, str) or isinstance(x, np.ndarray))):
                    out.append(NoTangent())
                elif kit.is_zero(y_bar):
                    out.append(ZeroTangent())
                elif isinstance(p, str):
                    out.append(not_implemented(p))
                else:
                    out.append(Thunk(functools.partial(_cotangent, p, y_bar, shape,
                                                       ProjectTo(x))))
            return tuple(out)

        return y, stats_pullback

    def stats_frule(dargs: tuple, dist: Any, *args: Any, **kwargs: Any) -> Any:
        if type(dist) is not dist_type:
            return None
        check_real(public, names(dist), args, kwargs)
        y = func(dist, *args, **kwargs)
        pos = names(dist)[:len(args)]
        parts = None
        y_dot: Any = ZeroTangent()
        for name, x, x_dot in zip(pos, args, dargs[2:]):
            x_dot = unthunk(x_dot)
            if kit.is_zero(x_dot):
                continue
            if parts is None:
                parts = partials(dist, _bind(names(dist), defaults, args, kwargs), y)
            p = parts.get(name)
            if p is None or (is_integer_valued(x) and isinstance(p, str)):
                continue
            if isinstance(p, str):
                return y, not_implemented(p)
            y_dot = p() * x_dot if kit.is_zero(y_dot) else y_dot + p() * x_dot
        if kit.is_zero(y_dot):
            return y, y_dot
        return y, kit.fit_output(y_dot, y)

    kit.define_rules(func, dist_type, ..., frule_fn=stats_frule, rrule_fn=stats_rrule, name=label)
    if func not in _DECLARED:
        _DECLARED.add(func)
        kit.declare_parameters(func, functools.partial(_parameters, names, defaults))


_DECLARED: set = set()


def _parameters(names: Callable[[Any], list[str]], defaults: dict,
                dist: Any) -> list[inspect.Parameter] | None:
    """The positional parameters of a distribution method bound to ``dist``
    (``norm.logpdf(x, loc=0, scale=1)``), so that an AD can move a differentiated
    keyword argument (``scale=s``) to its place; None for an unbound call."""
    if dist is None:
        return None
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return [inspect.Parameter(n, kind, default=defaults.get(n, inspect.Parameter.empty))
            for n in names(dist)]


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_subclasses(sub))
    return out


def opt_out_subclasses(funcs: list, registered: Any) -> None:
    """Opt SciPy's subclasses of the registered distribution classes that have no rules
    of their own (``erlang_gen`` of ``gamma_gen``) out of their parents' rules: the rules
    are for exactly one density, and ``rrule.lookup`` / coverage should say so."""
    for dist_type in registered:
        for sub in _subclasses(dist_type):
            if sub not in registered:
                for func in funcs:
                    core.rrule.opt_out(func, sub, ...)
                    core.frule.opt_out(func, sub, ...)
