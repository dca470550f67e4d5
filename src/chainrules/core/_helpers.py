"""Declarative helpers: define rules from partial derivatives, or declare their absence."""

from __future__ import annotations

import functools
import inspect
import itertools
import sys
import types as _types
from collections.abc import Callable
from typing import Any

import numpy as np

from ._errors import OutArgumentError, RuleRegistrationError, func_name
from ._projection import ProjectTo
from ._rules import frule_table, rrule_table
from ._tangent_types import (
    AbstractTangent,
    NoTangent,
    NotImplementedTangent,
    Tangent,
    Thunk,
    ZeroTangent,
)
from ._tangent_types.algebra import add, multiply
from ._tangent_types.natural import conj_array
from ._xp import array_namespace, is_foreign_array

__all__ = [
    "derivatives_given_output",
    "ignore_derivatives",
    "non_differentiable",
    "not_implemented",
    "scalar_rule",
]


class _Partials:
    __slots__ = ("all", "fn", "nargs", "nout", "quiet", "raw", "uses_output", "uses_wrt",
                 "uses_xp")

    def __init__(self, fn: Callable, nargs: int, nout: int, uses_output: bool,
                 uses_xp: bool = False, quiet: bool = False, uses_wrt: bool = False) -> None:
        # A quiet fn silences NumPy's floating-point warnings itself, wherever it runs
        # (an AD's fused backward calls ``fn`` directly); ``raw`` is ``fn`` unwrapped, for
        # a caller that silences the warnings itself (the reference AD's C tape).
        self.fn = _quiet(fn) if quiet else fn
        self.raw = fn
        self.nargs = nargs
        self.nout = nout
        self.quiet = quiet
        self.uses_output = uses_output
        self.uses_xp = uses_xp
        # ``fn`` takes ``wrt``: which arguments' partials are needed (the others may be
        # None); ``all`` is its value when every one is
        self.uses_wrt = uses_wrt
        self.all = (True,) * nargs

    def _evaluate(self, y: Any, args: tuple, wrt: tuple | None) -> Any:
        kwargs: dict[str, Any] = {}
        if self.uses_output:
            kwargs["y"] = y
        if self.uses_xp:
            kwargs["xp"] = namespace_of(args)
        if self.uses_wrt:
            kwargs["wrt"] = self.all if wrt is None else wrt
        return self.fn(*args, **kwargs)

    def __call__(self, y: Any, args: tuple, wrt: tuple | None = None) -> tuple:
        """Partials as a tuple (per output) of tuples (per argument); with ``wrt`` (a
        bool per argument), the entries where it is False may be None."""
        if not self.quiet and any(isinstance(a, (np.ndarray, np.generic)) for a in args):
            # A derivative that is infinite at a singular point (sqrt at 0) is the
            # answer, not a warning; NumPy would warn, and warnings may be errors.
            if _ERRSTATE is None:
                with np.errstate(all="ignore"):
                    p = self._evaluate(y, args, wrt)
            else:
                token = _ERRSTATE.set(_IGNORE_ALL)
                try:
                    p = self._evaluate(y, args, wrt)
                finally:
                    _ERRSTATE.reset(token)
        else:
            p = self._evaluate(y, args, wrt)
        if self.nout == 1:
            return (p if self.nargs > 1 else (p,),)
        if not isinstance(p, tuple) or len(p) != self.nout:
            raise TypeError(
                f"the partials of a {self.nout}-output scalar_rule must return a tuple of "
                f"{self.nout} entries (one per output), got {type(p).__qualname__}"
            )
        return tuple(q if self.nargs > 1 else (q,) for q in p)


def _ignore_state() -> tuple[Any, Any]:
    """NumPy's error-state context variable and its "ignore all" value, where NumPy keeps
    its error state in one (2.x); (None, None) elsewhere. Setting it directly costs
    0.4 µs where ``with np.errstate(all="ignore")`` costs 2.8 µs, paid by every
    partial the reference AD evaluates."""
    try:
        from numpy._core import _ufunc_config

        var = _ufunc_config._extobj_contextvar  # pyright: ignore[reportAttributeAccessIssue]
        with np.errstate(all="ignore"):
            value = var.get()
        return var, value
    except Exception:  # another NumPy: the public context manager
        return None, None


_ERRSTATE, _IGNORE_ALL = _ignore_state()


def _quiet(partials: Callable[..., Any]) -> Callable[..., Any]:
    """``partials`` under ``np.errstate(all="ignore")``, with the signature kept."""
    if _ERRSTATE is None:

        @functools.wraps(partials)
        def quiet_partials(*args: Any, **kwargs: Any) -> Any:
            with np.errstate(all="ignore"):
                return partials(*args, **kwargs)

        return quiet_partials

    var, ignore = _ERRSTATE, _IGNORE_ALL

    @functools.wraps(partials)
    def quiet_partials_fast(*args: Any, **kwargs: Any) -> Any:
        token = var.set(ignore)
        try:
            return partials(*args, **kwargs)
        finally:
            var.reset(token)

    quiet_partials_fast.__name__ = "quiet_partials"
    return quiet_partials_fast


# The partials of a scalar_rule are an attribute of the rules it makes (not a table by
# function: a function may have several scalar_rules, for several argument types, and a
# scoped registration must not outlive its scope). Sequence rules (lists as arrays)
# carry none: their partials would see lists, so an AD calls the rule itself.
_PARTIALS_ATTR = "_chainrules_partials"


def registered_partials(f: Any) -> _Partials | None:
    """The partials of the most recently registered ``scalar_rule`` of ``f``, or None."""
    try:
        tab = rrule_table.by_func.get(f)
    except TypeError:
        return None
    if tab is None:
        return None
    for e in reversed(tab.entries):
        part = getattr(e.rule, _PARTIALS_ATTR, None)
        if part is not None:
            return part
    return None


_NUMPY_XP = array_namespace()
_PLAIN_TYPES = frozenset((float, int, complex, bool, np.ndarray, np.float64, np.float32,
                          np.complex128, np.complex64))


def namespace_of(args: tuple) -> Any:
    """``array_namespace(*args)``, without its cost for the common NumPy arguments (the
    reference AD evaluates partials on every backward step)."""
    for a in args:
        if type(a) not in _PLAIN_TYPES:
            return array_namespace(*args)
    return _NUMPY_XP


def _refuse_out(f: Any, kwargs: dict) -> None:
    if kwargs.get("out") is not None:
        raise OutArgumentError(f)
    if kwargs.get("where", True) is not True:
        raise OutArgumentError(f, "where")


def _conj(p: Any) -> Any:
    if type(p) is float:
        return p
    if isinstance(p, np.ndarray):
        return p.conj() if p.dtype.kind == "c" else p
    if isinstance(p, (complex, np.complexfloating)):
        return p.conjugate()
    if is_foreign_array(p):
        return conj_array(p)
    return p


def _is_zero_like(t: Any) -> bool:
    return isinstance(t, (ZeroTangent, NoTangent))


def _fit_output(y_dot: Any, y: Any) -> Any:
    """Broadcast a pushforward to the output's shape (partials like 1 keep the input's)."""
    if isinstance(y, np.ndarray):
        if np.shape(y_dot) != y.shape:
            y_dot = np.broadcast_to(y_dot, y.shape).copy()
        if isinstance(y_dot, np.ndarray) and y_dot.dtype != y.dtype and y.dtype.kind in "fc":
            if y_dot.dtype.kind == "c" and y.dtype.kind == "f":
                return y_dot  # a complex tangent of a real output signals a bug upstream
            y_dot = y_dot.astype(y.dtype)
    elif is_foreign_array(y):
        xp = array_namespace(y)
        if not is_foreign_array(y_dot):
            y_dot = xp.asarray(y_dot)
        if tuple(y_dot.shape) != tuple(y.shape):
            y_dot = xp.broadcast_to(y_dot, tuple(y.shape))
        if y_dot.dtype != y.dtype and xp.isdtype(y.dtype, ("real floating", "complex floating")):
            if xp.isdtype(y_dot.dtype, "complex floating") and xp.isdtype(y.dtype, "real floating"):
                return y_dot  # as above: a complex tangent of a real output is kept visible
            y_dot = xp.astype(y_dot, y.dtype)
        return y_dot
    return y_dot


def scalar_rule(
    f: Any,
    partials: Callable[..., Any],
    *,
    nout: int = 1,
    types: tuple | None = None,
    elementwise: bool | None = None,
) -> None:
    """Define the frule and the rrule of ``f`` from its partial derivatives.

    ``partials(*args)`` returns the partial derivative of the output with respect
    to each argument: a single value for a one-argument function, else a tuple
    with one entry per argument. A keyword-only parameter ``y`` receives the primal
    output, so a partial can reuse it (``scalar_rule(math.exp, lambda x, *, y: y)``);
    a keyword-only parameter ``xp`` receives the arguments' array namespace
    (`array_namespace`), so one definition serves NumPy, JAX, PyTorch
    and ``array_api_strict`` arrays (``scalar_rule(f, lambda x, *, xp: xp.cos(x))``).
    A keyword-only parameter ``wrt`` receives a tuple with a bool per argument: whether
    that argument's partial is needed. The partials where it is False are not used and
    may be returned as None, so a partial that costs work and often goes unused (the
    exponent's, ``y * log(x)``, in ``x ** 2``) is computed only when asked for; an
    argument with a zero tangent in an frule, or a constant in the reference AD, is not
    needed. Calls that need every partial pass all True.
    With ``nout > 1`` outputs, return a tuple with one such entry per output.

    The same definition works elementwise for NumPy arrays and ufuncs with
    broadcasting: the pushforward is ``sum(partial_i * x_dot_i)`` broadcast to the
    output, the pullback returns ``ProjectTo(x_i)(conj(partial_i) * y_bar)``, which
    sums broadcast dimensions away and keeps each argument's dtype. Complex inputs
    follow the holomorphic assumption. ``out=`` and ``where=`` are refused with an
    `OutArgumentError`, and so is a NumPy ufunc's output array passed positionally.
    Lists and tuples used as arrays (``np.sin([0.1, 0.2])``) reach the partials as
    arrays, and their cotangent is a ``Tangent`` of their items (``NoTangent()`` for
    a list of integers).

    Args:
        f: the function (Python scalar function or NumPy ufunc).
        partials: computes the partial derivatives from the arguments (and ``y``).
        nout: the number of outputs of ``f``.
        types: dispatch types of the arguments (default: ``object`` for each).
        elementwise: the partials run under ``np.errstate(all="ignore")`` wherever they
            are evaluated (an infinite derivative, ``sqrt`` at 0, is a value, not a
            warning); default: whether ``f`` is a NumPy ufunc.

    Examples:
        >>> import math
        >>> from chainrules import scalar_rule, rrule, frule, NoTangent
        >>> def cube(x):
        ...     return x ** 3
        >>> scalar_rule(cube, lambda x: 3 * x ** 2)
        >>> frule((NoTangent(), 1.0), cube, 2.0)
        (8.0, 12.0)
        >>> y, pullback = rrule(cube, 2.0)
        >>> pullback(1.0)
        (NoTangent(), 12.0)
    """
    try:
        sig = inspect.signature(partials)
    except (TypeError, ValueError):
        raise RuleRegistrationError(
            f"scalar_rule({func_name(f)}, ...): cannot read the signature of the partials "
            f"function; pass a def or lambda taking the arguments of {func_name(f)}"
        ) from None
    positional = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()):
        raise RuleRegistrationError(
            f"scalar_rule({func_name(f)}, ...): the partials function must name each "
            f"argument (no *args)"
        )
    y_param = sig.parameters.get("y")
    uses_output = y_param is not None and y_param.kind == inspect.Parameter.KEYWORD_ONLY
    xp_param = sig.parameters.get("xp")
    uses_xp = xp_param is not None and xp_param.kind == inspect.Parameter.KEYWORD_ONLY
    wrt_param = sig.parameters.get("wrt")
    uses_wrt = wrt_param is not None and wrt_param.kind == inspect.Parameter.KEYWORD_ONLY
    nargs = len(positional)
    if nargs == 0:
        raise RuleRegistrationError(
            f"scalar_rule({func_name(f)}, ...): the partials function takes no arguments; it "
            f"must take the arguments of {func_name(f)}"
        )
    if nout < 1:
        raise RuleRegistrationError(f"scalar_rule({func_name(f)}, ...): nout must be >= 1")
    if types is None:
        types = (object,) * nargs
    elif len(types) != nargs:
        raise RuleRegistrationError(
            f"scalar_rule({func_name(f)}, ...): {len(types)} types for a partials function of "
            f"{nargs} argument(s)"
        )
    if elementwise is None:
        elementwise = isinstance(f, np.ufunc)
    part = _Partials(partials, nargs, nout, uses_output, uses_xp, quiet=elementwise,
                     uses_wrt=uses_wrt)
    frule_table.add_rule(f, _scalar_frule(f, part), tuple(types), kind="scalar")
    rrule_table.add_rule(f, _scalar_rrule(f, part), tuple(types), kind="scalar")
    if all(t is object for t in types) and nargs <= _MAX_SEQUENCE_ARGS:
        _register_sequence_rules(f, part, nargs)
    if isinstance(f, np.ufunc):
        # np.sin(x, out_array): the output array passed positionally.
        refuse = _refuse_positional_out(f)
        frule_table.add_rule(f, refuse, (*types, object, ...), kind="scalar")
        rrule_table.add_rule(f, refuse, (*types, object, ...), kind="scalar")


def _refuse_positional_out(f: Any) -> Callable:
    def positional_out_rule(*args: Any, **kwargs: Any) -> Any:
        raise OutArgumentError(f)

    # A rule module may register its own handling of these calls without a warning.
    positional_out_rule.replaceable_default = True  # type: ignore[attr-defined]
    return positional_out_rule


#: Lists and tuples get rules of their own up to this many arguments (3**n - 1 signatures).
_MAX_SEQUENCE_ARGS = 3
_SEQUENCES = (list, tuple)


def _register_sequence_rules(f: Any, part: _Partials, nargs: int) -> None:
    """Rules for calls with lists or tuples used as arrays: the partials see arrays (``x +
    x`` on a list would concatenate), the cotangents are ``Tangent``\\ s of the items."""
    sequence_frule = _scalar_frule(f, part, sequences=True)
    sequence_rrule = _scalar_rrule(f, part, sequences=True)
    # A rule module may register its own rule for these signatures without a warning.
    sequence_frule.replaceable_default = True  # type: ignore[attr-defined]
    sequence_rrule.replaceable_default = True  # type: ignore[attr-defined]
    for combo in itertools.product((object, *_SEQUENCES), repeat=nargs):
        if any(t is not object for t in combo):
            frule_table.add_rule(f, sequence_frule, combo, kind="scalar")
            rrule_table.add_rule(f, sequence_rrule, combo, kind="scalar")


def _as_array(x: Any) -> Any:
    return np.asarray(x) if type(x) in _SEQUENCES else x


def _items_projector(x: Any) -> Callable[[Any], Any]:
    """Projects an array cotangent onto a list or tuple ``x`` used as an array: a
    ``Tangent`` of its items, ``NoTangent()`` for a list of integers."""
    project_array = ProjectTo(np.asarray(x))

    def project_items(dx: Any) -> Any:
        dx = project_array(dx)
        return dx if isinstance(dx, AbstractTangent) else ProjectTo(x)(dx)

    return project_items


def _as_array_tangent(t: Any) -> Any:
    """A structural tangent of a list or tuple of numbers, as the array it stands for."""
    if isinstance(t, Tangent) and isinstance(t.backing, tuple):
        return np.asarray([_as_array_tangent(i) for i in t.backing])
    if isinstance(t, (ZeroTangent, NoTangent)):
        return 0.0
    return t


def _pushforward(ps: tuple, x_dots: tuple) -> Any:
    y_dot: Any = ZeroTangent()
    for p, x_dot in zip(ps, x_dots):
        if isinstance(x_dot, AbstractTangent):
            if _is_zero_like(x_dot):
                continue
            if isinstance(x_dot, NotImplementedTangent):
                return x_dot
            x_dot = x_dot.unthunk() if isinstance(x_dot, Thunk) else x_dot
            if isinstance(x_dot, Tangent):  # a list or tuple used as an array
                x_dot = _as_array_tangent(x_dot)
        if isinstance(p, ZeroTangent):
            continue  # array_api_strict's `array + ZeroTangent()` raises, not defers
        y_dot = p * x_dot if isinstance(y_dot, ZeroTangent) else y_dot + p * x_dot
    return y_dot


def _scalar_frule(f: Any, part: _Partials, sequences: bool = False) -> Callable:
    nout = part.nout

    def scalar_frule(dargs: tuple, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            _refuse_out(f, kwargs)
        y = f(*args, **kwargs)
        if sequences:
            args = tuple(map(_as_array, args))
        x_dots = dargs[1:]
        # the partials of arguments with a zero tangent are not needed
        ps = part(y, args, tuple(not _is_zero_like(d) for d in x_dots)
                  if part.uses_wrt else None)
        if nout == 1:
            y_dot = _pushforward(ps[0], x_dots)
            if not isinstance(y_dot, AbstractTangent) and (
                    isinstance(y, np.ndarray) or is_foreign_array(y)):
                y_dot = _fit_output(y_dot, y)
            return y, y_dot
        y_dots = []
        for k in range(nout):
            y_dot = _pushforward(ps[k], x_dots)
            if not isinstance(y_dot, AbstractTangent) and (
                    isinstance(y[k], np.ndarray) or is_foreign_array(y[k])):
                y_dot = _fit_output(y_dot, y[k])
            y_dots.append(y_dot)
        return y, Tangent[type(y)](*y_dots) if type(y) in (tuple, list) else tuple(y_dots)

    scalar_frule.__qualname__ = f"{getattr(f, '__name__', 'f')}_frule"
    if not sequences:
        setattr(scalar_frule, _PARTIALS_ATTR, part)
    return scalar_frule


def _fast_projector(x: Any) -> Callable[[Any], Any]:
    if type(x) is float:
        return _project_python_float
    return ProjectTo(x)


def _project_python_float(dx: Any) -> Any:
    if type(dx) is float:
        return dx
    return _PROJECT_FLOAT(dx)


_PROJECT_FLOAT = ProjectTo(0.0)


def _output_cotangents(y_bar: Any, nout: int) -> tuple:
    if isinstance(y_bar, Thunk):
        y_bar = y_bar.unthunk()
    if isinstance(y_bar, (ZeroTangent, NoTangent)):
        return (ZeroTangent(),) * nout
    if isinstance(y_bar, Tangent):
        y_bar = y_bar.backing
    if not isinstance(y_bar, (tuple, list)) or len(y_bar) != nout:
        raise TypeError(
            f"the pullback of a {nout}-output function expects a tuple or Tangent of {nout} "
            f"cotangents, got {type(y_bar).__qualname__}"
        )
    return tuple(y_bar)


def _scalar_rrule(f: Any, part: _Partials, sequences: bool = False) -> Callable:
    nout = part.nout
    name = getattr(f, "__name__", "f")

    def scalar_rrule(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            _refuse_out(f, kwargs)
        y = f(*args, **kwargs)
        if sequences:
            projectors = [_items_projector(x) if type(x) in _SEQUENCES else _fast_projector(x)
                          for x in args]
            args = tuple(map(_as_array, args))
        else:
            projectors = [_fast_projector(x) for x in args]

        def scalar_pullback(y_bar: Any) -> tuple:
            if nout == 1:
                if isinstance(y_bar, AbstractTangent):
                    if isinstance(y_bar, Thunk):
                        y_bar = y_bar.unthunk()
                    elif _is_zero_like(y_bar):
                        return (NoTangent(), *(p(ZeroTangent()) for p in projectors))
                    elif isinstance(y_bar, NotImplementedTangent):
                        return (NoTangent(), *(y_bar for _ in projectors))
                ps = part(y, args)[0]
                return (NoTangent(), *(
                    project(_conj(p) * y_bar) for project, p in zip(projectors, ps)
                ))
            y_bars = _output_cotangents(y_bar, nout)
            ps = part(y, args)
            out = []
            for i, project in enumerate(projectors):
                x_bar: Any = ZeroTangent()
                for k in range(nout):
                    x_bar = add(x_bar, multiply(_conj(ps[k][i]), y_bars[k]))
                out.append(project(x_bar))
            return (NoTangent(), *out)

        scalar_pullback.__qualname__ = f"{name}_pullback"
        return y, scalar_pullback

    scalar_rrule.__qualname__ = f"{name}_rrule"
    if not sequences:
        setattr(scalar_rrule, _PARTIALS_ATTR, part)
    return scalar_rrule


def derivatives_given_output(y: Any, f: Any, *args: Any) -> tuple:
    """The partials of a ``scalar_rule`` function: one tuple per output, one entry per argument.

    Lets an AD fuse chains of elementwise functions without calling the rules.

    Raises:
        KeyError: ``f`` was not defined with `scalar_rule`.

    Examples:
        >>> import math
        >>> from chainrules import derivatives_given_output
        >>> derivatives_given_output(math.exp(1.0), math.exp, 1.0)
        ((2.718281828459045,),)
    """
    part = registered_partials(f)
    if part is None:
        raise KeyError(
            f"{func_name(f)} has no scalar_rule, so its partials are not known; define it "
            f"with scalar_rule({func_name(f)}, partials)"
        ) from None
    return part(y, args)


def has_scalar_rule(f: Any) -> bool:
    """Whether ``f`` was defined with `scalar_rule` (its partials are known)."""
    return registered_partials(f) is not None


def non_differentiable(f: Any, *types: Any) -> None:
    """Declare that ``f`` has no derivative: its frule gives ``NoTangent()``, its pullback all
    ``NoTangent()``.

    For functions whose outputs are counts, indices, booleans or other discrete
    values (``len``, ``np.argmax``, comparisons). ``types`` restricts the
    declaration to those positional argument types (a trailing ``...`` accepts any
    further arguments); by default it covers every call.

    Examples:
        >>> from chainrules import non_differentiable, rrule, frule, NoTangent
        >>> def count_positive(x):
        ...     return sum(1 for v in x if v > 0)
        >>> non_differentiable(count_positive)
        >>> y, pullback = rrule(count_positive, [1.0, -2.0])
        >>> y, pullback(1.0)
        (1, (NoTangent(), NoTangent()))
        >>> frule((NoTangent(), NoTangent()), count_positive, [1.0])
        (1, NoTangent())
    """
    if not types:
        types = (...,)
    name = getattr(f, "__name__", "f")

    def non_differentiable_rrule(*args: Any, **kwargs: Any) -> Any:
        y = f(*args, **kwargs)
        n = len(args) + 1

        def non_differentiable_pullback(y_bar: Any) -> tuple:
            return (NoTangent(),) * n

        return y, non_differentiable_pullback

    def non_differentiable_frule(dargs: tuple, *args: Any, **kwargs: Any) -> Any:
        return f(*args, **kwargs), NoTangent()

    non_differentiable_rrule.__qualname__ = f"{name}_rrule"
    non_differentiable_frule.__qualname__ = f"{name}_frule"
    # Their pullback and pushforward ignore what they are given (all NoTangent), so a
    # cotangent or tangent of any kind cannot produce a wrong value: no checks.
    non_differentiable_rrule._chainrules_checked = True  # type: ignore[attr-defined]
    non_differentiable_frule._chainrules_checked = True  # type: ignore[attr-defined]
    rrule_table.add_rule(f, non_differentiable_rrule, types, kind="non_differentiable")
    frule_table.add_rule(f, non_differentiable_frule, types, kind="non_differentiable")


def not_implemented(info: str = "") -> NotImplementedTangent:
    """Mark one derivative as not implemented yet (the others of the rule still work).

    Returns a `NotImplementedTangent` recording ``info`` and
    where it was created. Testers report it as an expected failure; an AD
    propagates it, and raises if its value is ever needed.

    Examples:
        >>> from chainrules import not_implemented
        >>> t = not_implemented("derivative w.r.t. the order")
        >>> t.info
        'derivative w.r.t. the order'
    """
    frame = sys._getframe(1)
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    return NotImplementedTangent(info, where)


_CALLABLE_THUNK_TYPES = (_types.FunctionType, _types.MethodType, _types.BuiltinFunctionType,
                         _types.BuiltinMethodType)


def ignore_derivatives(x: Any) -> Any:
    """Stop differentiation: a function is called (its result is treated as constant),
    anything else is returned as is.

    Use it around code whose result must not carry derivatives (logging, statistics,
    step-size heuristics). Its rules return ``NoTangent()``, so an AD treats the
    result as a constant.

    Examples:
        >>> from chainrules import ignore_derivatives
        >>> ignore_derivatives(lambda: 1.0 + 1.0)
        2.0
        >>> ignore_derivatives(3.0)
        3.0
    """
    if isinstance(x, _CALLABLE_THUNK_TYPES):
        return x()
    return x


non_differentiable(ignore_derivatives)
