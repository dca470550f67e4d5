"""The engine: tracers, the reverse and forward traces, and the dispatch point.

A `Tracer` wraps a primal value that depends on a differentiated input. It
belongs to one trace (one level of differentiation; nested ``grad`` calls make
nested traces). Every operation on tracers -- an operator, a NumPy ufunc or
function, and every *call* in rewritten code -- ends in `apply` or
`call`, which look up a rule for the callable in the core's tables:

- reverse mode (`ReverseTrace`) runs the rrule and records ``(pullback,
  parents)`` on a tape; the backward pass walks the tape once, newest first;
- forward mode (`ForwardTrace`) runs the frule and carries the tangent.

A call with no rule is traced into (Python functions, via their rewritten source)
or, for code the AD cannot look inside, run on the tracers: operators still work,
and anything that would convert a tracer to a plain number raises.

Nested differentiation: a tracer's level says which trace made it. An operation
is handled by the innermost trace among its arguments; tracers of outer traces
are left inside the primals, so the rule's own computation is recorded by the
outer trace. Rules run on outer tracers are themselves traced (their source
rewritten), so ``math.cos`` inside a pullback finds its rule at the outer level.
Two traces never share tracers, so perturbations cannot be confused.
"""

from __future__ import annotations

import copy
import dataclasses
import dis
import functools
import inspect
import linecache
import math
import operator
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from chainrules.core import (
    AbstractTangent,
    NoTangent,
    NotImplementedDerivativeError,
    NotImplementedTangent,
    OutArgumentError,
    ProjectTo,
    RuleConfig,
    Tangent,
    Thunk,
    ZeroTangent,
    array_namespace,
    frule,
    iadd,
    ignore_derivatives,
    is_foreign_array,
    rrule,
    unthunk,
)
from chainrules.core import _helpers as _core_helpers
from chainrules.core._tangent_types.abstract import _any

from ._errors import (
    ADError,
    ClosureTangentError,
    ControlFlowError,
    DeadTracerError,
    MutationError,
    NoRuleError,
    TracerConversionError,
    UntrackedOutputError,
    func_name,
)
from ._rewrite import rewritten_function

__all__ = ["ForwardTrace", "ReverseTrace", "Tracer", "apply", "call", "end_trace",
           "new_level"]

_rr_lookup = rrule.lookup
# The partials of scalar_rule functions, keyed by function (``derivatives_given_output``
# without the per-call lookup, and traceable for nested differentiation).
_core_partials = _core_helpers._PARTIALS
namespace_of = _core_helpers.namespace_of
_r_by_func = rrule.table.by_func
_f_by_func = frule.table.by_func
_fr_lookup = frule.lookup
_FunctionType = types.FunctionType
_MethodType = types.MethodType
_ndarray = np.ndarray
_ufunc = np.ufunc
_ZERO = ZeroTangent()
_NO = NoTangent()
_NO_RULE = object()

# Values that become tracers when a traced operation returns them.
_SCALARS = (float, complex, np.floating, np.complexfloating)

_level_counter = [0]
# How many times traced code branched on a traced value (a comparison, bool(), int(),
# rounding). A call that hands a function to other code is watched: if it branched and
# returns plain floats, those were decided by the branches (a solver's answer) and
# carry a derivative the AD cannot see (see _watched).
_BRANCHES = [0]
_FreshThunk: Any = None  # set by _ad_rules (avoids an import cycle)


def _fast_lookup(by_func: dict, f: Any, types_: tuple, config: Any, lookup: Any) -> Any:
    """``rrule.lookup(f, types_, config)``, reading the core's per-function cache first.

    The core caches resolved rules per function table, keyed by ``(config type,
    argument types)``; reading that cache directly saves the method call on the hot
    path. Misses (and anything unexpected) go through the public ``lookup``.
    """
    try:
        tab = by_func.get(f)
    except TypeError:
        return lookup(f, types_, config)
    if tab is not None:
        hit = tab.config_cache.get((type(config), types_), _NO_RULE)
        if hit is not _NO_RULE:
            return hit
    return lookup(f, types_, config)


def new_level() -> int:
    """A fresh, strictly increasing trace level (newer traces are inner traces)."""
    _level_counter[0] += 1
    return _level_counter[0]


def _boxable(y: Any) -> bool:
    t = type(y)
    if t is float or t is complex:
        return True
    if t is _ndarray:
        return y.dtype.kind in "fc"
    if t is Tracer:
        return _boxable(deep_primal(y))
    if isinstance(y, _SCALARS) or (isinstance(y, _ndarray) and y.dtype.kind in "fc"):
        return True
    if is_foreign_array(y):  # an array-API array: traced through the rules of its namespace
        return bool(array_namespace(y).isdtype(y.dtype, ("real floating", "complex floating")))
    return False


def deep_primal(x: Any) -> Any:
    """The innermost primal value of a (possibly nested) tracer."""
    while type(x) is Tracer:
        x = x.primal
    return x


# ---------------------------------------------------------------------------------------
# Tracer


class Tracer:
    """A value being differentiated: its primal, its trace, and per-trace data.

    ``aux`` is the tape index (reverse mode) or the tangent (forward mode). Tracers
    define the operators, NumPy's ``__array_ufunc__`` / ``__array_function__`` and
    the common ndarray attributes and methods; they do not define ``__array__``,
    so NumPy can never silently turn one into a plain array.

    Example:
        >>> import numpy as np
        >>> from chainrules.ad import Tracer, grad
        >>> def f(x):
        ...     assert type(x) is Tracer and isinstance(x, np.ndarray)
        ...     return np.sum(x * x)
        >>> grad(f)(np.array([1.0, 2.0]))
        array([2., 4.])
    """

    __slots__ = ("_trace", "aux", "primal")
    __array_priority__ = 1000.0

    def __init__(self, primal: Any, trace: Any, aux: Any) -> None:
        self.primal = primal
        self._trace = trace
        self.aux = aux

    def __repr__(self) -> str:
        return f"Tracer({self.primal!r}, level={self._trace.level})"

    def __format__(self, spec: str) -> str:
        # f"{x:.3f}" in traced code (logging, labels): the text of the primal value; a
        # string carries no derivative, so nothing is lost
        return format(deep_primal(self), spec)

    # -- conversions that would lose the derivative ------------------------------------

    def __float__(self) -> float:
        raise _conversion_error(self, _coercion_operation("float()"))

    def __complex__(self) -> complex:
        raise _conversion_error(self, _coercion_operation("complex()"))

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        # isinstance(x, float) / isinstance(x, np.ndarray) answer for the primal, so rule
        # code run on values of an outer trace takes the branch it takes for primals.
        # type(x) is still Tracer; the AD itself only ever tests `type(x) is Tracer`.
        return type(deep_primal(self))

    @property
    def __array_interface__(self) -> Any:
        # NumPy asks for this before treating a tracer as a sequence or an object;
        # refusing here turns `a[i] = x` and `np.asarray(x)` into a clear error.
        raise _conversion_error(
            self, _coercion_operation("converting a traced value to a NumPy array"))

    def __int__(self) -> int:
        # Truncation: the derivative is zero almost everywhere, which is what we return.
        _BRANCHES[0] += 1
        return int(deep_primal(self))

    def __index__(self) -> int:
        return operator.index(deep_primal(self))

    def __bool__(self) -> bool:
        _BRANCHES[0] += 1
        return bool(deep_primal(self))

    __hash__ = object.__hash__

    def __round__(self, ndigits: int | None = None) -> Any:
        _BRANCHES[0] += 1
        return round(deep_primal(self), ndigits)

    def __trunc__(self) -> Any:
        _BRANCHES[0] += 1
        return math.trunc(deep_primal(self))

    def __floor__(self) -> Any:
        _BRANCHES[0] += 1
        return math.floor(deep_primal(self))

    def __ceil__(self) -> Any:
        _BRANCHES[0] += 1
        return math.ceil(deep_primal(self))

    # -- comparisons: piecewise constant, so evaluated on the primal (and counted) -----

    def __lt__(self, other: Any) -> Any:
        _BRANCHES[0] += 1
        return deep_primal(self) < deep_primal(other)

    def __le__(self, other: Any) -> Any:
        _BRANCHES[0] += 1
        return deep_primal(self) <= deep_primal(other)

    def __gt__(self, other: Any) -> Any:
        _BRANCHES[0] += 1
        return deep_primal(self) > deep_primal(other)

    def __ge__(self, other: Any) -> Any:
        _BRANCHES[0] += 1
        return deep_primal(self) >= deep_primal(other)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        _BRANCHES[0] += 1
        return deep_primal(self) == deep_primal(other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        _BRANCHES[0] += 1
        return deep_primal(self) != deep_primal(other)

    # -- arithmetic --------------------------------------------------------------------

    def __add__(self, other: Any) -> Any:
        return _binop(operator.add, np.add, self, other)

    def __radd__(self, other: Any) -> Any:
        return _binop(operator.add, np.add, other, self)

    def __sub__(self, other: Any) -> Any:
        return _binop(operator.sub, np.subtract, self, other)

    def __rsub__(self, other: Any) -> Any:
        return _binop(operator.sub, np.subtract, other, self)

    def __mul__(self, other: Any) -> Any:
        return _binop(operator.mul, np.multiply, self, other)

    def __rmul__(self, other: Any) -> Any:
        return _binop(operator.mul, np.multiply, other, self)

    def __truediv__(self, other: Any) -> Any:
        return _binop(operator.truediv, np.true_divide, self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return _binop(operator.truediv, np.true_divide, other, self)

    def __pow__(self, other: Any) -> Any:
        return _binop(operator.pow, np.power, self, other)

    def __rpow__(self, other: Any) -> Any:
        return _binop(operator.pow, np.power, other, self)

    def __matmul__(self, other: Any) -> Any:
        return _binop(operator.matmul, np.matmul, self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _binop(operator.matmul, np.matmul, other, self)

    def __mod__(self, other: Any) -> Any:
        return _binop(operator.mod, np.mod, self, other)

    def __rmod__(self, other: Any) -> Any:
        return _binop(operator.mod, np.mod, other, self)

    def __floordiv__(self, other: Any) -> Any:
        return deep_primal(self) // deep_primal(other)

    def __rfloordiv__(self, other: Any) -> Any:
        return deep_primal(other) // deep_primal(self)

    def __neg__(self) -> Any:
        return _unop(operator.neg, np.negative, self)

    def __pos__(self) -> Any:
        return self

    def __abs__(self) -> Any:
        return _unop(operator.abs, np.absolute, self)

    # In-place operators: rebinding for immutable scalars, refused for arrays (the
    # caller's array would not change, so the program would silently mean something else).
    def _inplace(self, name: str, op: Callable, other: Any) -> Any:
        if isinstance(deep_primal(self), _ndarray):
            raise MutationError(f"`x {name} ...` on a traced array")
        return op(self, other)

    def __iadd__(self, other: Any) -> Any:
        p = self.primal
        if type(p) is float or (type(p) is not _ndarray and type(p) is not Tracer):
            return _binop(operator.add, np.add, self, other)
        return self._inplace("+=", operator.add, other)

    def __isub__(self, other: Any) -> Any:
        return self._inplace("-=", operator.sub, other)

    def __imul__(self, other: Any) -> Any:
        return self._inplace("*=", operator.mul, other)

    def __itruediv__(self, other: Any) -> Any:
        return self._inplace("/=", operator.truediv, other)

    def __ipow__(self, other: Any) -> Any:
        return self._inplace("**=", operator.pow, other)

    def __imatmul__(self, other: Any) -> Any:
        return self._inplace("@=", operator.matmul, other)

    def __setitem__(self, key: Any, value: Any) -> None:
        raise MutationError("`a[...] = value` on a traced array")

    # -- containers and indexing -------------------------------------------------------

    def __getitem__(self, key: Any) -> Any:
        if type(key) is int:
            out = self._trace.process(operator.getitem, (self, key), _EMPTY)
            if out is not _NO_RULE:
                return out
        return apply(operator.getitem, (self, key), {})

    def __len__(self) -> int:
        return len(deep_primal(self))

    def __iter__(self) -> Any:
        p = deep_primal(self)
        if not isinstance(p, _ndarray) or p.ndim == 0:
            raise TypeError(f"iteration over a traced {type(p).__qualname__}")
        return (self[i] for i in range(len(p)))

    # -- NumPy protocols ---------------------------------------------------------------

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if kwargs.get("out") is not None:
            raise MutationError(f"numpy.{ufunc.__name__}(..., out=...)",
                                "an in-place update such as `a += x` writes into `a`")
        if method == "__call__":
            if not kwargs and len(inputs) == 2:
                op = _OPERATOR_OF_UFUNC.get(ufunc)
                if op is not None:
                    # `ndarray @ tracer` reaches us as np.matmul; use the same rule
                    # as `tracer @ ndarray` (the operator's), then the ufunc's.
                    return _binop(op, ufunc, inputs[0], inputs[1])
            return apply(ufunc, inputs, kwargs)
        equivalent = _UFUNC_METHODS.get((ufunc, method))
        if equivalent is not None:
            return apply(equivalent, inputs, kwargs)
        raise NoRuleError(ufunc, "rule", tuple(type(deep_primal(a)) for a in inputs),
                          f"ufunc method numpy.{ufunc.__name__}.{method}")

    def __array_function__(self, func: Any, types_: Any, args: tuple, kwargs: dict) -> Any:
        return apply(func, args, kwargs, from_numpy=True)

    # -- ndarray attributes and methods ------------------------------------------------

    @property
    def shape(self) -> tuple:
        return np.shape(deep_primal(self))

    @shape.setter
    def shape(self, value: Any) -> None:
        raise MutationError("`x.shape = ...` on a traced array", "use x = x.reshape(shape)")

    @property
    def ndim(self) -> int:
        return np.ndim(deep_primal(self))

    @property
    def size(self) -> int:
        return np.size(deep_primal(self))

    @property
    def dtype(self) -> Any:
        p = deep_primal(self)
        return p.dtype if hasattr(p, "dtype") else np.result_type(p)

    @property
    def flags(self) -> Any:
        # The primal's flags, except that a traced array is a value, never written in
        # place (and owns no memory a caller could write through).
        p = deep_primal(self)
        f = p.flags if isinstance(p, np.ndarray) else np.asarray(p).flags
        d = {name: getattr(f, name) for name in _FLAG_NAMES if hasattr(f, name)}
        d.update(writeable=False, owndata=False, writebackifcopy=False)
        d["behaved"] = False
        d["carray"] = d["farray"] = False
        return _Flags(**d)

    @property
    def T(self) -> Any:
        return call(np.transpose, self)

    @property
    def real(self) -> Any:
        return call(np.real, self)

    @property
    def imag(self) -> Any:
        return call(np.imag, self)

    def conj(self) -> Any:
        return call(np.conj, self)

    conjugate = conj

    def sum(self, *args: Any, **kwargs: Any) -> Any:
        return call(np.sum, self, *args, **kwargs)

    def mean(self, *args: Any, **kwargs: Any) -> Any:
        return call(np.mean, self, *args, **kwargs)

    def prod(self, *args: Any, **kwargs: Any) -> Any:
        return call(np.prod, self, *args, **kwargs)

    def max(self, *args: Any, **kwargs: Any) -> Any:
        return call(np.max, self, *args, **kwargs)

    def min(self, *args: Any, **kwargs: Any) -> Any:
        return call(np.min, self, *args, **kwargs)

    def dot(self, other: Any) -> Any:
        return call(np.dot, self, other)

    def trace(self, *args: Any, **kwargs: Any) -> Any:
        return call(np.trace, self, *args, **kwargs)

    def reshape(self, *shape: Any, **kwargs: Any) -> Any:
        if len(shape) == 1:
            shape = shape[0]
        return call(np.reshape, self, shape, **kwargs)

    def transpose(self, *axes: Any) -> Any:
        if not axes:
            return call(np.transpose, self)
        if len(axes) == 1:
            axes = axes[0]
        return call(np.transpose, self, axes)

    def ravel(self) -> Any:
        return call(np.ravel, self)

    def flatten(self) -> Any:
        return call(np.ravel, self)

    def squeeze(self, *args: Any, **kwargs: Any) -> Any:
        return call(np.squeeze, self, *args, **kwargs)

    def cumsum(self, *args: Any, **kwargs: Any) -> Any:
        return call(np.cumsum, self, *args, **kwargs)

    def clip(self, *args: Any, **kwargs: Any) -> Any:
        return call(np.clip, self, *args, **kwargs)

    def copy(self, order: str = "K") -> Any:
        return self  # tracers are never mutated, so a copy can share (in any order)

    def astype(self, dtype: Any, **kwargs: Any) -> Any:
        p = deep_primal(self)
        if np.dtype(dtype) == getattr(p, "dtype", None):
            return self
        return call(_astype, self, dtype)

    def __getattr__(self, name: str) -> Any:
        # Other ndarray methods (x.std(), x.argmax(), ...) as the NumPy function of the
        # same name, so they reach its rule; metadata (x.nbytes) from the primal.
        if name.startswith("__"):
            raise AttributeError(name)
        p = deep_primal(self)
        if name.startswith("_") and type(p) is not _ndarray and is_foreign_array(p):
            # an array library reaching for the data inside (array_api_strict's x._array)
            # from a call the AD did not see: the result would be untracked
            raise TracerConversionError(f"x.{name} (the data inside the array)",
                                        _describe(self))
        attr = getattr(p, name)
        if name in _MUTATING_METHODS:
            raise MutationError(f"x.{name}() on a traced array",
                                f"use the out-of-place np.{_MUTATING_METHODS[name]}")
        if name in _VALUE_VIEWS:
            raise TracerConversionError(f"x.{name}", _describe(self))
        if name == "compress":
            # x.compress(condition, ...) is np.compress(condition, x, ...)
            return functools.partial(_compress_method, self)
        if callable(attr):
            fn = getattr(np, name, None)
            if fn is None or not callable(fn):
                raise NoRuleError(attr, _mode(self._trace), (type(p),),
                                  f"the method {type(p).__name__}.{name} has no NumPy "
                                  f"function of the same name to dispatch to")
            return functools.partial(call, fn, self)
        return attr

    def item(self) -> Any:
        raise TracerConversionError("x.item()", _describe(self))

    def tolist(self) -> Any:
        p = deep_primal(self)
        if p.ndim == 0:
            raise TracerConversionError("x.tolist()", _describe(self))
        return [self[i].tolist() if p.ndim > 1 else self[i] for i in range(len(p))]


_FLAG_NAMES = ("aligned", "behaved", "c_contiguous", "carray", "contiguous", "f_contiguous",
               "farray", "fnc", "forc", "fortran", "num", "owndata", "writeable",
               "writebackifcopy")
_FLAG_KEYS = {"C": "c_contiguous", "F": "f_contiguous", "W": "writeable", "O": "owndata",
              "A": "aligned", "X": "writebackifcopy", "B": "behaved", "CA": "carray",
              "FA": "farray", "FNC": "fnc", "FORC": "forc", "CONTIGUOUS": "c_contiguous",
              "C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
              "FORTRAN": "fortran", "WRITEABLE": "writeable", "OWNDATA": "owndata",
              "ALIGNED": "aligned", "WRITEBACKIFCOPY": "writebackifcopy",
              "BEHAVED": "behaved", "CARRAY": "carray", "FARRAY": "farray"}


class _Flags(types.SimpleNamespace):
    """A traced array's ``flags``: attributes and ``flags["C_CONTIGUOUS"]`` as on ndarrays."""

    @property
    def writable(self) -> bool:
        return self.writeable

    def __getitem__(self, key: str) -> bool:
        return getattr(self, _FLAG_KEYS[key.upper()])


def _compress_method(x: Any, condition: Any, *args: Any, **kwargs: Any) -> Any:
    return call(np.compress, condition, x, *args, **kwargs)


def _astype(x: Any, dtype: Any) -> Any:
    """``x.astype(dtype)`` as a function the AD can find a rule for."""
    return np.asarray(x).astype(dtype)


@rrule.register(_astype)
def _astype_rrule(x: Any, dtype: Any) -> Any:
    # run again on values of an outer trace (second derivatives), this code is not
    # rewritten (it is the AD's own), so it calls the outer trace explicitly
    project_x = ProjectTo(deep_primal(x))
    y = x.astype(dtype) if type(x) is Tracer else np.asarray(x).astype(dtype)

    def astype_pullback(y_bar: Any) -> tuple:
        return _NO, project_traced(project_x, unthunk(y_bar)), _NO

    return y, astype_pullback


@frule.register(_astype)
def _astype_frule(dargs: tuple, x: Any, dtype: Any) -> Any:
    x_dot = unthunk(dargs[1])
    y = np.asarray(x).astype(dtype)
    if isinstance(x_dot, AbstractTangent):
        return y, x_dot
    if y.dtype.kind == "f":
        x_dot = np.real(x_dot)
    return y, np.asarray(x_dot).astype(y.dtype)


# ndarray attributes that expose the values themselves (not metadata).
_VALUE_VIEWS = frozenset({"flat", "base", "data", "ctypes", "view", "tobytes", "tofile",
                          "byteswap"})
# ndarray methods that write into the array -> the out-of-place equivalent
_MUTATING_METHODS = {"fill": "full_like(x, v)", "put": "where / concatenate",
                     "itemset": "where", "resize": "resize(x, shape)",
                     "setfield": "where", "sort": "sort(x)", "partition": "partition(x, k)"}
# NumPy functions that write into their first argument
_INPLACE_FUNCS = {id(getattr(np, _n)): _n for _n in (
    "copyto", "put", "place", "putmask", "put_along_axis", "fill_diagonal")
    if hasattr(np, _n)}

_OPERATOR_OF_UFUNC = {
    np.add: operator.add,
    np.subtract: operator.sub,
    np.multiply: operator.mul,
    np.true_divide: operator.truediv,
    np.power: operator.pow,
    np.matmul: operator.matmul,
}

def _logaddexp_reduce(a: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
                      keepdims: bool = False, base: float = math.e) -> Any:
    """``np.logaddexp.reduce`` from operations with rules (shifted by the maximum, whose
    own derivative cancels: the result does not depend on the shift)."""
    if out is not None:
        raise MutationError("numpy.logaddexp.reduce(..., out=...)",
                            "out= writes the result into an array")
    scale = 1.0 if base == math.e else math.log(base)
    m = deep_primal(np.max(a, axis=axis, keepdims=True))
    m = np.where(np.isfinite(m), m, 0.0)
    r = np.log(np.sum(np.exp((a - m) * scale), axis=axis, keepdims=True)) / scale + m
    if dtype is not None:
        r = r.astype(dtype)
    return r if keepdims else np.squeeze(r, axis=axis)


_UFUNC_METHODS = {
    (np.logaddexp, "reduce"): _logaddexp_reduce,
    (np.logaddexp2, "reduce"): functools.partial(_logaddexp_reduce, base=2.0),
    (np.add, "reduce"): np.sum,
    (np.multiply, "reduce"): np.prod,
    (np.maximum, "reduce"): np.max,
    (np.minimum, "reduce"): np.min,
    (np.add, "accumulate"): np.cumsum,
    (np.multiply, "accumulate"): np.cumprod,
}


def _conversion_error(t: Tracer, operation: str) -> ADError:
    """The error for converting ``t`` to a plain value: a dead tracer says so first."""
    if type(t._trace) in (_EndedReverseTrace, _EndedForwardTrace):
        return DeadTracerError(operation, _describe(t))
    return TracerConversionError(operation, _describe(t))


def _describe(t: Tracer) -> str:
    p = deep_primal(t)
    if isinstance(p, _ndarray):
        return f"traced ndarray(shape={p.shape}, dtype={p.dtype})"
    return f"traced {type(p).__qualname__} {p!r}"


def _coercion_operation(default: str) -> str:
    """Name the Python operation that asked for a plain number, from the caller's opcode."""
    frame = sys._getframe(2)
    if frame.f_code.co_filename == __file__:
        return default
    try:
        op = dis.opname[frame.f_code.co_code[frame.f_lasti]]
    except (IndexError, AttributeError):
        return default
    if op == "STORE_SUBSCR":
        return "writing a traced value into an array (`a[i] = x`)"
    return default


# ---------------------------------------------------------------------------------------
# Operators


_EMPTY: dict = {}


def _binop(op: Callable, ufunc: Any, a: Any, b: Any) -> Any:
    if type(a) is Tracer:
        top = a._trace
        if type(b) is Tracer and b._trace.level > top.level:
            top = b._trace
    elif type(b) is Tracer:
        top = b._trace
    else:
        return op(a, b)
    out = top.binop(op, a, b)
    if out is not _NO_RULE:
        return out
    return apply(_in_namespace(ufunc, a, b), (a, b), _EMPTY)


def _unop(op: Callable, ufunc: Any, a: Any) -> Any:
    out = a._trace.process(op, (a,), _EMPTY)
    if out is not _NO_RULE:
        return out
    return apply(_in_namespace(ufunc, a), (a,), _EMPTY)


# NumPy ufunc names that the array API standard spells differently
_STANDARD_NAMES = {"true_divide": "divide", "power": "pow", "absolute": "abs",
                   "conjugate": "conj", "invert": "bitwise_invert",
                   "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift"}


def _in_namespace(ufunc: Any, *operands: Any) -> Any:
    """``ufunc``, or its array-API counterpart when an operand holds a foreign array
    (``array_api_strict``...): the operators of tracers then call that namespace's
    function, whose rules ``register_namespace`` put there."""
    for v in operands:
        p = deep_primal(v) if type(v) is Tracer else v
        if type(p) is not _ndarray and is_foreign_array(p):
            name = cast(str, ufunc.__name__)
            return getattr(array_namespace(p), _STANDARD_NAMES.get(name, name), ufunc)
    return ufunc


# ---------------------------------------------------------------------------------------
# Structures inside arguments: lists of tracers, dicts of arrays, dataclasses...


def _is_struct(x: Any) -> bool:
    t = type(x)
    return t is list or t is tuple or t is dict or isinstance(x, tuple) or (
        dataclasses.is_dataclass(x) and not isinstance(x, type))


def _find_tracers(x: Any, trace: Any, path: tuple, out: list) -> Any:
    """The primal copy of structure ``x`` with ``trace``'s tracers unboxed; records paths."""
    t = type(x)
    if t is Tracer:
        if x._trace is trace:
            out.append((path, x.aux))
            return x.primal
        return x
    if t is list or t is tuple:
        items = [_find_tracers(v, trace, (*path, i), out) for i, v in enumerate(x)]
        return items if t is list else tuple(items)
    if t is dict:
        return {k: _find_tracers(v, trace, (*path, k), out) for k, v in _any(x).items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t(*[_find_tracers(v, trace, (*path, f), out)
                   for f, v in zip(_any(x)._fields, x)])
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        changes = {}
        for f in dataclasses.fields(x):
            v = getattr(x, f.name)
            new = _find_tracers(v, trace, (*path, f.name), out)
            if new is not v:
                changes[f.name] = new
        if not changes:
            return x
        y = object.__new__(t)
        y.__dict__.update(x.__dict__) if hasattr(x, "__dict__") else None
        for k, v in changes.items():
            object.__setattr__(y, k, v)
        return y
    return x


def _top_trace_deep(x: Any, top: Any) -> Any:
    t = type(x)
    if t is Tracer:
        return x._trace if top is None or x._trace.level > top.level else top
    if t is list or t is tuple:
        for v in x:
            top = _top_trace_deep(v, top)
    elif t is dict:
        for v in x.values():
            top = _top_trace_deep(v, top)
    elif isinstance(x, tuple):
        for v in x:
            top = _top_trace_deep(v, top)
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            top = _top_trace_deep(getattr(x, f.name), top)
    return top


def _get_path(g: Any, path: tuple) -> Any:
    for key in path:
        if isinstance(g, AbstractTangent):
            if isinstance(g, (ZeroTangent, NoTangent, NotImplementedTangent)):
                return g
            if isinstance(g, Thunk):
                g = unthunk(g)
                if isinstance(g, AbstractTangent) and not isinstance(g, Tangent):
                    return g
            # The other tangents returned above, so g is a structural Tangent.
            g = cast(Tangent, g)
            if g.primal_type is dict or not isinstance(key, str):
                g = g[key]
            else:
                g = getattr(g, key)
        elif isinstance(g, dict):
            g = g.get(key, _ZERO)
        elif isinstance(key, str):
            g = getattr(g, key)
        else:
            g = g[key]
    return g


_CONSTANT_TYPES = (int, bool, str, bytes, type(None), range, slice, np.integer, np.bool_,
                   np.dtype, type, types.FunctionType, types.BuiltinFunctionType)


def _is_constant_like(y: Any) -> bool:
    """Values with no derivative to lose (counts, flags, indices, names, functions)."""
    if isinstance(y, _CONSTANT_TYPES):
        return True
    if isinstance(y, _ndarray):
        return y.dtype.kind not in "fc"
    if type(y) in (list, tuple, dict) or (isinstance(y, tuple)):
        values = y.values() if type(y) is dict else y
        return all(_is_constant_like(v) for v in values)
    fields = _object_fields(y)
    if fields is not None:
        return all(_is_constant_like(v) for v in fields.values())
    return False


def _object_fields(y: Any) -> dict | None:
    """The fields of a dataclass or plain object output (None for anything else)."""
    if dataclasses.is_dataclass(y) and not isinstance(y, type):
        return {f.name: getattr(y, f.name) for f in dataclasses.fields(y)}
    d = getattr(y, "__dict__", None)
    if d is None or isinstance(y, (type, types.ModuleType)) or callable(y):
        return None
    return dict(d)


def _leaves(y: Any, path: tuple, out: list) -> None:
    """Paths of the differentiable leaves of an output structure."""
    if _boxable(y):
        out.append(path)
    elif isinstance(y, tuple) and hasattr(y, "_fields"):
        for f, v in zip(_any(y)._fields, y):
            _leaves(v, (*path, f), out)
    elif type(y) is list or isinstance(y, tuple):
        for i, v in enumerate(y):
            _leaves(v, (*path, i), out)
    elif isinstance(y, dict):  # dict subclasses too: scipy's OptimizeResult
        for k, v in y.items():
            _leaves(v, (*path, k), out)
    else:
        fields = _object_fields(y)
        if fields:
            for k, v in fields.items():
                _leaves(v, (*path, k), out)


def _replace_leaves(y: Any, path: tuple, make: Callable[[tuple, Any], Any]) -> Any:
    if _boxable(y):
        return make(path, y)
    if type(y) is list or type(y) is tuple:
        items = [_replace_leaves(v, (*path, i), make) for i, v in enumerate(y)]
        return items if type(y) is list else tuple(items)
    if isinstance(y, tuple) and hasattr(y, "_fields"):
        return type(y)(*[_replace_leaves(v, (*path, f), make)
                         for f, v in zip(_any(y)._fields, y)])
    if type(y) is dict:
        return {k: _replace_leaves(v, (*path, k), make) for k, v in y.items()}
    if isinstance(y, dict):
        items = {k: _replace_leaves(v, (*path, k), make) for k, v in y.items()}
        if all(items[k] is v for k, v in y.items()):
            return y
        out = copy.copy(y)
        out.update(items)
        return out
    fields = _object_fields(y)
    if fields:
        new = {k: _replace_leaves(v, (*path, k), make) for k, v in fields.items()}
        if all(new[k] is fields[k] for k in new):
            return y
        out = copy.copy(y)
        for k, v in new.items():
            object.__setattr__(out, k, v)
        return out
    return y


# ---------------------------------------------------------------------------------------
# Reverse mode


class _MultiOut:
    """Tape entry of an operation with several differentiable outputs."""

    __slots__ = ("leaves", "parents", "pullback", "y")

    def __init__(self, pullback: Callable, parents: list, y: Any) -> None:
        self.pullback = pullback
        self.parents = parents
        self.y = y
        self.leaves: list[tuple[tuple, int]] = []


class _ScalarNode:
    """Tape entry of a ``scalar_rule`` call: the cotangent is ``conj(partial) * y_bar``."""

    __slots__ = ("args", "mixed", "parents", "part", "y")

    def __init__(self, part: Any, args: tuple, y: Any, parents: list, mixed: bool) -> None:
        self.part = part
        self.args = args
        self.y = y
        self.parents = parents
        self.mixed = mixed

    def backward(self, b: Any, bars: list, owned: bytearray, tape: list) -> None:
        args = self.args
        traced = self.mixed or type(b) is Tracer
        part = self.part
        if traced:
            ps = _partials(part, self.y, args, True)
        else:
            if part.uses_xp:  # partials written against xp (the array-API rules)
                p = part._evaluate(self.y, args)
            else:
                p = part.fn(*args, y=self.y) if part.uses_output else part.fn(*args)
            ps = p if part.nargs > 1 else (p,)
        for par in self.parents:
            pos = par[0] - 1
            p = ps[pos]
            x = args[pos]
            if traced:
                if np.iscomplexobj(deep_primal(p)):
                    p = call(np.conj, p)
                g = p * b
                if type(x) is Tracer or type(g) is Tracer:
                    g = project_traced(ProjectTo(deep_primal(x)), g)
                else:
                    g = _project_plain(x, g)
            else:
                tp = type(p)
                if tp is _ndarray:
                    if p.dtype.kind == "c":
                        p = p.conj()
                elif tp is complex or isinstance(p, np.complexfloating):
                    p = p.conjugate()
                g = p * b
                tx = type(x)
                if tx is not type(g) or (tx is _ndarray and (g.shape != x.shape
                                                             or g.dtype != x.dtype)):
                    g = _project_plain(x, g)
            _accumulate(bars, owned, par[1], g, tape)


def _project_plain(x: Any, g: Any) -> Any:
    tx = type(x)
    tg = type(g)
    if tg is _ndarray and tx is not _ndarray and g.ndim:
        g = g.sum()  # a scalar broadcast against an array: sum the broadcast away
        tg = type(g)
    if tx is float:
        return g if tg is float else ProjectTo(x)(g)
    if tx is _ndarray:
        if tg is _ndarray and g.shape == x.shape and g.dtype == x.dtype:
            return g
        return ProjectTo(x)(g)
    if tx is tg and tx is not complex:
        return g
    return ProjectTo(x)(g)


def _partials(part: Any, y: Any, args: tuple, traced: bool) -> tuple:
    if not traced:
        return part(y, args)[0]
    fn = _traceable(part.fn)
    kw: dict = {"y": y} if part.uses_output else {}
    if part.uses_xp:
        kw["xp"] = namespace_of(tuple(deep_primal(a) for a in args))
    p = call(fn, *args, **kw)
    return p if part.nargs > 1 else (p,)


_scalar_rule_fns: dict = {}


def _scalar_partials(rule: Any) -> Any:
    """The core's partials of a rule made by ``scalar_rule`` (None for other rules)."""
    try:
        return _scalar_rule_fns[rule]
    except KeyError:
        pass
    except TypeError:
        return None
    found = None
    for info in rrule.registered():
        if info.rule is rule:
            if info.kind == "scalar":
                found = _core_partials.get(info.function)
            break
    _scalar_rule_fns[rule] = found
    return found


class _Leaf:
    """Tape entry of one output of a `_MultiOut`."""

    __slots__ = ("node",)

    def __init__(self, node: int) -> None:
        self.node = node


_INPUT = (None, ())


class ReverseTrace:
    """One level of reverse-mode differentiation: a tape of ``(pullback, parents)``.

    ``parents`` lists ``(position, index)`` pairs: the cotangent at ``position`` of
    the pullback's result belongs to the tape entry ``index``; a third element, a
    path, picks it out of a structured cotangent.
    """

    __slots__ = ("config", "ctype", "level", "tape")

    def __init__(self, config: RuleConfig) -> None:
        self.level = new_level()
        self.tape: list[Any] = []
        self.config = config
        self.ctype = type(config)

    def binop(self, f: Any, a: Any, b: Any) -> Any:
        """``process`` for an operator on two arguments, with the common cases inlined
        (a tracer of this trace or a plain float/int/array on each side)."""
        ta = type(a)
        if ta is Tracer:
            if a._trace is not self or type(a.primal) is Tracer:
                return self.process(f, (a, b), _EMPTY)
            pa = a.primal
            parents = [(1, a.aux)]
        elif ta is float or ta is int or ta is _ndarray:
            pa = a
            parents = []
        else:
            return self.process(f, (a, b), _EMPTY)
        tb = type(b)
        if tb is Tracer:
            if b._trace is not self or type(b.primal) is Tracer:
                return self.process(f, (a, b), _EMPTY)
            pb = b.primal
            parents.append((2, b.aux))
        elif tb is float or tb is int or tb is _ndarray:
            pb = b
        else:
            return self.process(f, (a, b), _EMPTY)
        types_ = (type(pa), type(pb))
        tab = _r_by_func.get(f)
        hit: Any = _NO_RULE if tab is None else tab.config_cache.get((self.ctype, types_),
                                                                     _NO_RULE)
        if hit is _NO_RULE:
            hit = _rr_lookup(f, types_, self.config)
        if hit is None:
            return _NO_RULE
        rule = hit[0]
        if hit[1] or hit[2]:
            return self.process(f, (a, b), _EMPTY)
        part = _scalar_rule_fns.get(rule, _NO_RULE)
        if part is _NO_RULE:
            part = _scalar_partials(rule)
        if part is not None and part.nout == 1:
            y = f(pa, pb)
            ty = type(y)
            if (ty is _ndarray and y.dtype.kind not in "fc") or (
                    ty is not float and ty is not _ndarray and not _boxable(y)):
                return y
            tape = self.tape
            idx = len(tape)
            tape.append(_ScalarNode(part, (pa, pb), y, parents, False))
            return Tracer(y, self, idx)
        return self.process(f, (a, b), _EMPTY)

    def new_input(self, x: Any) -> Tracer:
        idx = len(self.tape)
        self.tape.append(_INPUT)
        return Tracer(x, self, idx)

    def process(self, f: Any, args: tuple, kwargs: dict, soft: bool = False) -> Any:
        """Apply the rrule of ``f`` to ``args``; ``_NO_RULE`` when there is none."""
        primals = list(args)
        parents: list = []
        mixed = False
        for i, a in enumerate(args):
            ta = type(a)
            if ta is Tracer:
                if a._trace is self:
                    p = a.primal
                    primals[i] = p
                    parents.append((i + 1, a.aux))
                    if type(p) is Tracer:
                        mixed = True
                else:
                    mixed = True
            elif ta is float or ta is _ndarray or ta is int:
                pass
            elif _is_struct(a):
                found: list = []
                primals[i] = _find_tracers(a, self, (), found)
                for path, idx in found:
                    parents.append((i + 1, idx, path))
                if _top_trace_deep(primals[i], None) is not None:
                    mixed = True
            elif ta is _FunctionType and a.__closure__ is not None:
                found = []
                primals[i] = _detach_closure(a, self, found)
                for path, idx in found:
                    parents.append((i + 1, idx, path, a))
        if mixed:
            types_ = tuple(type(_deep_struct_primal(p)) for p in primals)
        elif len(primals) == 2:
            types_ = (type(primals[0]), type(primals[1]))
        elif len(primals) == 1:
            types_ = (type(primals[0]),)
        else:
            types_ = tuple(map(type, primals))
        hit = _fast_lookup(_r_by_func, f, types_, self.config, _rr_lookup)
        if hit is None:
            return _NO_RULE
        rule, takes_config, takes_instance = hit
        if takes_instance and _top_trace_deep(f, None) is not None:
            found = []
            fp = _find_tracers(f, self, (), found)
            if found or _top_trace_deep(fp, None) is not None:
                # A callable object holding traced fields: trace into its __call__ so
                # the fields' derivatives are followed.
                return _NO_RULE
        if takes_config and (_captures_tracers(primals) or (
                takes_instance and _captures_tracers(list(getattr(f, "__dict__", {}).values())))):
            return _NO_RULE
        call_args = tuple(primals)
        if takes_instance:
            call_args = (f, *call_args)
        if takes_config:
            call_args = (self.config, *call_args)
        part = _scalar_rule_fns.get(rule, _NO_RULE)
        if part is _NO_RULE:
            part = _scalar_partials(rule)
        if part is not None and not kwargs and part.nout == 1:
            # A scalar_rule: record the partials instead of a pullback closure (its
            # derivatives_given_output; no projector objects for scalar chains).
            y = call(f, *call_args) if mixed else f(*call_args)
            ty = type(y)
            if ty is not float and ty is not _ndarray and not _boxable(y):
                return y
            if ty is _ndarray and y.dtype.kind not in "fc":
                return y
            idx = len(self.tape)
            self.tape.append(_ScalarNode(part, call_args, y, parents, mixed))
            return Tracer(y, self, idx)
        if mixed:
            res = _run_mixed(rule, f, call_args, kwargs)
        else:
            res = rule(*call_args, **kwargs)
        if res is None:
            return _NO_RULE
        y, pullback = res
        if type(y) is Tracer and y._trace is self:
            return y  # the rule returned one of its inputs unchanged (identity-like)
        tape = self.tape
        if _boxable(y):
            idx = len(tape)
            tape.append((pullback, parents))
            return Tracer(y, self, idx)
        paths: list = []
        _leaves(y, (), paths)
        if not paths:
            if not _is_constant_like(y):
                raise UntrackedOutputError(f, f"a {type(y).__name__}")
            return y
        node = _MultiOut(pullback, parents, y)
        nidx = len(tape)
        tape.append(node)

        def make(path: tuple, leaf: Any) -> Tracer:
            idx = len(tape)
            tape.append(_Leaf(nidx))
            node.leaves.append((path, idx))
            return Tracer(leaf, self, idx)

        return _replace_leaves(y, (), make)

    def backward(self, seeds: list[tuple[int, Any]], start: int = 0) -> list:
        """Run the tape backwards from ``seeds`` (``(index, cotangent)``); return all bars."""
        tape = self.tape
        n = len(tape)
        bars: list = [None] * n
        owned = bytearray(n)
        for idx, s in seeds:
            _accumulate(bars, owned, idx, s, tape)
        for i in range(n - 1, start - 1, -1):
            b = bars[i]
            if b is None:
                continue
            entry = tape[i]
            if type(entry) is tuple:
                pullback, parents = entry
                if pullback is None:
                    continue
            elif type(entry) is _ScalarNode:
                if isinstance(b, AbstractTangent):
                    if type(b) is ZeroTangent or type(b) is NoTangent:
                        continue
                    if type(b) is NotImplementedTangent:
                        for par in entry.parents:
                            _accumulate(bars, owned, par[1], b, tape)
                        continue
                    b = unthunk(b)
                entry.backward(b, bars, owned, tape)
                continue
            elif type(entry) is _MultiOut:
                pullback, parents = entry.pullback, entry.parents
                b = _assemble(entry, bars)
            else:
                continue
            if isinstance(b, AbstractTangent):
                if type(b) is ZeroTangent or type(b) is NoTangent:
                    continue
                if type(b) is NotImplementedTangent:
                    for par in parents:
                        _accumulate(bars, owned, par[1], b, tape)
                    continue
                if isinstance(b, Thunk):
                    b = unthunk(b)
            if type(b) is Tracer:
                # a cotangent of an outer trace: trace the pullback's own code
                grads = _run_pullback_traced(pullback, b)
            else:
                try:
                    grads = pullback(b)
                except (ADError, OutArgumentError) as e:
                    owner = (_PULLBACK_OWNER.get(pullback) if _weakrefable(pullback)
                             else None)  # a built-in pullback over values of an outer trace
                    if owner is None:
                        raise
                    raise _not_twice_differentiable(
                        e, f"the built-in rule for {owner}") from e
                except _RULE_CRASHES as e:
                    owner = (_PULLBACK_OWNER.get(pullback) if _weakrefable(pullback)
                             else None)
                    if owner is None:
                        raise
                    raise _crash_error(e, pullback, f"the built-in rule for {owner}") from e
            for par in parents:
                g = grads[par[0]]
                if len(par) >= 3:
                    if len(par) == 4 and type(g) is NoTangent:
                        raise ClosureTangentError(pullback, par[3], par[2][0])
                    g = _get_path(g, par[2])
                _accumulate(bars, owned, par[1], g, tape)
        return bars


def _assemble(node: _MultiOut, bars: list) -> Any:
    """The structured cotangent of a multi-output operation from its outputs' bars."""
    got = {path: bars[idx] for path, idx in node.leaves}

    def make(path: tuple, leaf: Any) -> Any:
        b = got.get(path)
        return _ZERO if b is None else unthunk(b)

    return _cotangent_structure(node.y, make, ())


def _cotangent_structure(y: Any, make: Callable[[tuple, Any], Any], path: tuple) -> Any:
    """A structural cotangent of output ``y`` with ``make(path, leaf)`` at each leaf."""
    if _boxable(y):
        return make(path, y)
    if type(y) is tuple or type(y) is list:
        return Tangent[type(y)](*[_cotangent_structure(v, make, (*path, i))
                                  for i, v in enumerate(y)])
    if isinstance(y, tuple) and hasattr(y, "_fields"):
        return Tangent[type(y)](**{f: _cotangent_structure(v, make, (*path, f))
                                   for f, v in zip(_any(y)._fields, y)})
    if isinstance(y, dict):
        return Tangent[type(y)]({k: _cotangent_structure(v, make, (*path, k))
                                 for k, v in y.items()})
    fields = _object_fields(y)
    if fields:
        return Tangent[type(y)](**{k: _cotangent_structure(v, make, (*path, k))
                                   for k, v in fields.items()})
    return _NO


def _accumulate(bars: list, owned: bytearray, j: int, g: Any, tape: list) -> None:
    if g is None:
        raise TypeError("a pullback returned None as a cotangent; return ZeroTangent() instead")
    tg = type(g)
    if tg is ZeroTangent or tg is NoTangent:
        return
    entry = tape[j]
    if type(entry) is _Leaf:
        # make sure the multi-output node is visited
        if bars[entry.node] is None:
            bars[entry.node] = True
    cur = bars[j]
    if tg is _FreshThunk and cur is not None and owned[j] and type(g.value) is not Tracer:
        cur[g.index] += g.value  # x[i]'s cotangent, added in place into the accumulator
        return
    if cur is None:
        if tg is _FreshThunk:
            bars[j] = g.unthunk()
            owned[j] = type(bars[j]) is _ndarray
        else:
            bars[j] = g
        return
    if isinstance(cur, Thunk):
        cur = unthunk(cur)
    if owned[j] and type(cur) is _ndarray:
        try:
            bars[j] = iadd(cur, g)
            return
        except (MutationError, TracerConversionError):
            # a cotangent of an outer trace (a higher-order derivative) cannot be added
            # into a plain array in place (NumPy refuses before writing): add out of place
            pass
    if tg is not float and isinstance(g, Thunk):
        g = unthunk(g)
    new = cur + g
    bars[j] = new
    owned[j] = type(new) is _ndarray and new is not cur and new is not g


def _captures_tracers(primals: list) -> bool:
    """Whether a function argument of a higher-order rule closes over tracers."""
    for p in primals:
        tp = type(p)
        if tp is float or tp is int or tp is _ndarray or not callable(p):
            continue
        if _reachable_trace(_closure_values(p), None, 0) is not None:
            return True
    return False


def _closure_values(f: Any) -> list:
    out: list = []
    if isinstance(f, functools.partial):
        out.extend(f.args)
        out.extend(f.keywords.values())
        f = f.func
    if isinstance(f, _MethodType):
        out.append(f.__self__)
        f = f.__func__
    if type(f) is _FunctionType:
        for c in f.__closure__ or ():
            try:
                out.append(c.cell_contents)
            except ValueError:
                pass
        out.extend(f.__defaults__ or ())
    return out


# ---------------------------------------------------------------------------------------
# Values decided by branching on traced values


_PASSED_FUNCTION_TYPES = frozenset({_FunctionType, _MethodType, functools.partial})
_WATCHING: list = []  # the watched calls running now, outermost first


def _passes_function(args: tuple, kwargs: dict) -> bool:
    """Whether a call hands a Python function to the callee (a solver, an integrator)."""
    for a in args:
        if type(a) in _PASSED_FUNCTION_TYPES:
            return True
    if kwargs:
        for a in kwargs.values():
            if type(a) in _PASSED_FUNCTION_TYPES:
                return True
    return False


def _watched(f: Any, run: Callable, args: tuple, kwargs: dict) -> Any:
    """``run(*args, **kwargs)`` for a call of ``f`` that passes a function.

    A solver evaluates the function (whose values are traced, through a closure or its
    ``args``) and compares the values to pick its answer, which it builds from plain
    floats: the answer depends on the traced values only through those comparisons,
    and the AD would silently give it a zero derivative. When the call branched on a
    traced value, its plain float results are marked: using one in a derivative raises
    `ControlFlowError` (reverse mode) or gives a ``NotImplementedTangent``
    (forward mode). A rule for ``f`` (or for the solver inside it) avoids all this.
    """
    n = _BRANCHES[0]
    _WATCHING.append(f)
    try:
        y = run(*args, **kwargs)
    finally:
        _WATCHING.pop()
    if _BRANCHES[0] == n:
        return y
    trace = _reachable_trace((args, kwargs), None, 0)
    if trace is None:
        return y
    calls = (*_WATCHING, f)

    def mark(path: tuple, leaf: Any) -> Any:
        if type(leaf) is Tracer:
            return leaf
        return _decided(trace, calls, path, leaf)

    return _replace_leaves(y, (), mark)


def _reachable_trace(x: Any, top: Any, depth: int) -> Any:
    """The innermost trace among the tracers ``x`` holds, looking into containers,
    closures, ``functools.partial`` arguments and bound methods' objects."""
    t = type(x)
    if t is Tracer:
        return x._trace if top is None or x._trace.level > top.level else top
    if depth > 4 or t is float or t is int or t is _ndarray or t is str:
        return top
    if isinstance(x, (list, tuple)):
        for v in x:
            top = _reachable_trace(v, top, depth + 1)
    elif isinstance(x, dict):
        for v in x.values():
            top = _reachable_trace(v, top, depth + 1)
    elif t in _PASSED_FUNCTION_TYPES:
        for v in _closure_values(x):
            top = _reachable_trace(v, top, depth + 1)
    elif not isinstance(x, (type, types.ModuleType)):
        fields = getattr(x, "__dict__", None)
        if type(fields) is dict:
            for v in fields.values():
                top = _reachable_trace(v, top, depth + 1)
    return top


def _decided(trace: Any, calls: tuple, path: tuple, leaf: Any) -> Tracer:
    """A tracer of ``leaf`` whose derivative refuses to be used (see `_watched`)."""
    where = "".join(f".{k}" if isinstance(k, str) else f"[{k!r}]" for k in path)
    if type(trace) is ReverseTrace:
        def decided_pullback(y_bar: Any) -> tuple:
            raise ControlFlowError(calls, where)

        idx = len(trace.tape)
        trace.tape.append((decided_pullback, []))
        return Tracer(leaf, trace, idx)
    return Tracer(leaf, trace, NotImplementedTangent(ControlFlowError(calls, where).args[0]))


# ---------------------------------------------------------------------------------------
# Closures over traced values, handed to a rule (a solver's, map's)
#
# The rule gets a copy of the function whose captured traced values are replaced by
# their primals, and returns the function's cotangent as a ``Tangent`` with one field
# per captured variable (what ``rrule_via_ad`` returns as ``self_bar`` for a closure).


def _detach_closure(fn: types.FunctionType, trace: Any, found: list) -> types.FunctionType:
    """``fn`` with ``trace``'s tracers in its cells replaced by primals; records
    ``(path, index)`` per tracer, the path starting with the variable's name."""
    changed = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            v = cell.cell_contents
        except ValueError:  # a variable not assigned yet
            continue
        if type(v) is Tracer or _is_struct(v):
            new = _find_tracers(v, trace, (name,), found)
            if new is not v:
                changed[name] = new
    return with_cells(fn, changed) if changed else fn


def with_cells(fn: types.FunctionType, values: dict) -> types.FunctionType:
    """A copy of closure ``fn`` whose captured variables ``values`` (name -> value) are
    replaced; ``fn`` itself is not changed."""
    cells = tuple(types.CellType(values[name]) if name in values else cell
                  for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    g = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, cells)
    g.__kwdefaults__ = fn.__kwdefaults__
    g.__qualname__ = fn.__qualname__
    g.__module__ = fn.__module__
    return g


def _closure_tangent(fn: types.FunctionType, found: list) -> Tangent:
    """The tangent of a detached closure from its captured tracers' tangents."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    fields = {}
    for name in dict.fromkeys(path[0] for path, _ in found):
        mine = [(path[1:], t) for path, t in found if path[0] == name]
        fields[name] = _struct_tangent(cells[name].cell_contents, mine)
    return Tangent[_FunctionType](**fields)


def _deep_struct_primal(x: Any) -> Any:
    while type(x) is Tracer:
        x = x.primal
    return x


# ---------------------------------------------------------------------------------------
# Forward mode


class ForwardTrace:
    """One level of forward-mode differentiation: tracers carry their tangent."""

    __slots__ = ("config", "level")

    def __init__(self, config: RuleConfig) -> None:
        self.level = new_level()
        self.config = config

    def binop(self, f: Any, a: Any, b: Any) -> Any:
        return self.process(f, (a, b), _EMPTY)

    def process(self, f: Any, args: tuple, kwargs: dict, soft: bool = False) -> Any:
        primals = list(args)
        dargs: list = [_NO]
        mixed = False
        missing = None
        for i, a in enumerate(args):
            ta = type(a)
            if ta is Tracer:
                if a._trace is self:
                    p = a.primal
                    primals[i] = p
                    d = a.aux
                    if type(d) is NotImplementedTangent:
                        # propagates: the result's tangent is not implemented either (the
                        # rule runs with a zero in its place, for the primal output)
                        missing = d
                        d = _ZERO
                    dargs.append(d)
                    if type(p) is Tracer or type(d) is Tracer:
                        # (a tangent of an outer trace: forward over forward; the
                        # rule's own code must then be traced too)
                        mixed = True
                else:
                    mixed = True
                    dargs.append(_ZERO)
            elif ta is float or ta is _ndarray or ta is int:
                dargs.append(_ZERO)
            elif _is_struct(a):
                found: list = []
                primals[i] = _find_tracers(a, self, (), found)
                dargs.append(_struct_tangent(primals[i], found) if found else _ZERO)
                if _top_trace_deep(primals[i], None) is not None or any(
                        type(t) is Tracer for _, t in found):
                    mixed = True
            elif ta is _FunctionType and a.__closure__ is not None:
                found = []
                primals[i] = _detach_closure(a, self, found)
                dargs.append(_closure_tangent(primals[i], found) if found else _ZERO)
            else:
                dargs.append(_ZERO)
        if mixed:
            types_ = tuple(type(_deep_struct_primal(p)) for p in primals)
        else:
            types_ = tuple(map(type, primals))
        hit = _fast_lookup(_f_by_func, f, types_, self.config, _fr_lookup)
        if missing is not None:
            out = self._process_rule(hit, f, primals, dargs, types_, kwargs, mixed)
            if out is _NO_RULE:
                return out
            return _replace_leaves(out, (), lambda path, leaf: self._box(
                deep_primal(leaf) if type(leaf) is Tracer and leaf._trace is self
                else leaf, missing))
        return self._process_rule(hit, f, primals, dargs, types_, kwargs, mixed)

    def _process_rule(self, hit: Any, f: Any, primals: list, dargs: list, types_: tuple,
                      kwargs: dict, mixed: bool) -> Any:
        if hit is None:
            return self._via_rrule(f, primals, dargs, types_, kwargs, mixed)
        rule, takes_config, takes_instance = hit
        if takes_instance and _top_trace_deep(f, None) is not None:
            return _NO_RULE
        if takes_config and _captures_tracers(primals):
            return _NO_RULE
        call_args = tuple(primals)
        if takes_instance:
            call_args = (f, *call_args)
        call_args = (tuple(dargs), *call_args)
        if takes_config:
            call_args = (self.config, *call_args)
        res = _run_mixed(rule, f, call_args, kwargs) if mixed else rule(*call_args, **kwargs)
        if res is None:
            return _NO_RULE
        y, y_dot = res
        return self._box(y, y_dot)

    def _box(self, y: Any, y_dot: Any) -> Any:
        if isinstance(y_dot, Thunk):
            y_dot = unthunk(y_dot)
        if _boxable(y):
            if type(y_dot) is ZeroTangent or type(y_dot) is NoTangent:
                return y
            return Tracer(y, self, y_dot)
        paths: list = []
        _leaves(y, (), paths)
        if not paths:
            return y

        def make(path: tuple, leaf: Any) -> Any:
            d = unthunk(_get_path(y_dot, path))
            if type(d) is ZeroTangent or type(d) is NoTangent:
                return leaf
            return Tracer(leaf, self, d)

        return _replace_leaves(y, (), make)

    def _via_rrule(self, f: Any, primals: list, dargs: list, types_: tuple, kwargs: dict,
                   mixed: bool) -> Any:
        """Forward mode from a reverse rule: ``y_dot = <J^T e_k, x_dot>`` per output entry.

        Exact (the pullback of a linear map at the same point), one pullback call per
        real output component; used for small outputs when only an rrule exists.
        """
        hit = _rr_lookup(f, types_, self.config)
        if hit is None:
            return _NO_RULE
        rule, takes_config, takes_instance = hit
        if takes_instance and not takes_config:
            return _NO_RULE
        if takes_config and (
                mixed or _captures_tracers(primals)
                or (takes_instance and _captures_tracers(list(getattr(f, "__dict__",
                                                                      {}).values())))
                or any(isinstance(d, Tangent) for d in dargs)):
            # (a higher-order rule whose function closes over traced values would see
            # them as constants, and structured tangents do not pair: trace instead)
            return _NO_RULE
        lead = ((self.config,) if takes_config else ()) + ((f,) if takes_instance else ())
        res = _run_mixed(rule, f, tuple(primals), kwargs) if mixed else \
            rule(*lead, *primals, **kwargs)
        if res is None:
            return _NO_RULE
        y, pullback = res
        yp = deep_primal(y)
        if not _boxable(yp):
            # a structured output (map's list): only a plain rule's is known constant
            return _NO_RULE if takes_config else y
        size = np.size(yp)
        if size > _MAX_RRULE_JVP:
            raise NoRuleError(f, "frule", types_,
                              f"only an rrule exists and the output has {size} entries; "
                              f"forward mode from an rrule is limited to {_MAX_RRULE_JVP}")
        is_complex = np.iscomplexobj(yp)
        if isinstance(yp, _ndarray):
            y_dot = np.zeros(yp.shape, dtype=yp.dtype)
            flat = y_dot.reshape(-1)
            for k in range(size):
                e = np.zeros(yp.shape, dtype=yp.dtype)
                e.reshape(-1)[k] = 1
                flat[k] = _pairing(pullback(e), dargs)
                if is_complex:
                    e.reshape(-1)[k] = 1j
                    flat[k] += 1j * _pairing(pullback(e), dargs)
        else:
            one = type(yp)(1)
            y_dot = _pairing(pullback(one), dargs)
            if is_complex:
                y_dot = y_dot + 1j * _pairing(pullback(type(yp)(1j)), dargs)
            y_dot = type(yp)(y_dot) if not mixed else y_dot
        return self._box(y, y_dot)


_MAX_RRULE_JVP = 64


# ---------------------------------------------------------------------------------------
# Ended traces: a tracer that leaked out of its grad / jvp refuses to be used


def _dead(trace: Any, f: Any, args: tuple) -> DeadTracerError:
    t = next((a for a in args if type(a) is Tracer and a._trace is trace), None)
    return DeadTracerError(f"calling {func_name(f)}",
                           _describe(t) if t is not None else "a traced value")


class _EndedReverseTrace(ReverseTrace):
    """A reverse trace whose differentiation returned: its tape still serves the pullback
    (``backward``), but it records nothing new."""

    __slots__ = ()

    def binop(self, f: Any, a: Any, b: Any) -> Any:
        raise _dead(self, f, (a, b))

    def process(self, f: Any, args: tuple, kwargs: dict, soft: bool = False) -> Any:
        raise _dead(self, f, args)


class _EndedForwardTrace(ForwardTrace):
    """A forward trace whose ``jvp`` returned."""

    __slots__ = ()

    def binop(self, f: Any, a: Any, b: Any) -> Any:
        raise _dead(self, f, (a, b))

    def process(self, f: Any, args: tuple, kwargs: dict, soft: bool = False) -> Any:
        raise _dead(self, f, args)


def end_trace(trace: Any) -> None:
    """Mark ``trace`` ended: any later operation on its tracers raises
    `DeadTracerError` (the class swap costs the live traces nothing)."""
    if type(trace) is ReverseTrace:
        trace.__class__ = _EndedReverseTrace
    elif type(trace) is ForwardTrace:
        trace.__class__ = _EndedForwardTrace


def _pairing(grads: tuple, dargs: list) -> Any:
    """Real inner product ``sum_i Re<grads[i], dargs[i]>`` (skipping zeros)."""
    total: Any = 0.0
    for g, d in zip(grads[1:], dargs[1:]):
        g = unthunk(g)
        if isinstance(g, AbstractTangent) or isinstance(d, AbstractTangent):
            if isinstance(g, (ZeroTangent, NoTangent)) or isinstance(d, (ZeroTangent,
                                                                           NoTangent)):
                continue
            raise NotImplementedDerivativeError(g, "pair a structured cotangent with") if \
                isinstance(g, NotImplementedTangent) else TypeError(
                "forward mode from an rrule supports natural tangents only")
        prod = np.conj(g) * d if np.iscomplexobj(g) else g * d
        s = prod.sum() if isinstance(prod, (_ndarray, Tracer)) else prod
        total = total + (s.real if np.iscomplexobj(deep_primal(s)) else s)
    return total


def _struct_tangent(primal: Any, found: list) -> Any:
    """A structural tangent for a structure argument from its tracers' tangents."""
    by_path = {path: tangent for path, tangent in found}

    def build(x: Any, path: tuple) -> Any:
        if path in by_path:
            return by_path[path]
        t = type(x)
        if t is list or t is tuple:
            return Tangent[t](*[build(v, (*path, i)) for i, v in enumerate(x)])
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return Tangent[t](**{f: build(v, (*path, f)) for f, v in zip(_any(x)._fields, x)})
        if t is dict:
            return Tangent[dict]({k: build(v, (*path, k)) for k, v in _any(x).items()})
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            return Tangent[t](**{f.name: build(getattr(x, f.name), (*path, f.name))
                                 for f in dataclasses.fields(x)})
        return _ZERO

    return build(primal, ())


# ---------------------------------------------------------------------------------------
# Running a rule on values of an outer trace (nested differentiation)


def _run_mixed(rule: Callable, f: Any, call_args: tuple, kwargs: dict) -> Any:
    """Run ``rule`` on arguments that hold tracers of outer traces, tracing its code."""
    try:
        res = call(_traceable(rule), *call_args, **kwargs)
    except (ADError, OutArgumentError) as e:
        if _is_builtin_rule(rule):
            raise _not_twice_differentiable(e, f"the built-in rule for {func_name(f)}") \
                from e
        raise
    except _RULE_CRASHES as e:
        if _is_builtin_rule(rule):
            raise _crash_error(e, f, f"the built-in rule for {func_name(f)}") from e
        raise
    if type(res) is tuple and len(res) == 2 and callable(res[1]) and _is_builtin_rule(rule):
        try:
            _PULLBACK_OWNER[res[1]] = func_name(f)
        except TypeError:
            pass
    return res


# built-in pullbacks created on values of an outer trace -> the function they are for
_PULLBACK_OWNER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _is_builtin_rule(fn: Any) -> bool:
    return (getattr(fn, "__module__", None) or "").startswith("chainrules.rules.")


def _not_twice_differentiable(e: BaseException, what: str) -> BaseException:
    """``e`` (same class and attributes) saying that a built-in rule's own code cannot be
    differentiated again: a second derivative through it needs other code."""
    if getattr(e, "_chainrules_not_twice", False):
        return e
    new: Any = type(e).__new__(type(e))
    new.__dict__.update(e.__dict__)
    new.args = (f"{what} is not twice differentiable: its own code (run again on traced "
                f"values for a higher-order derivative) fails with: {e}",)
    new._chainrules_not_twice = True
    return new


def _run_pullback_traced(pullback: Callable, b: Any) -> Any:
    """A pullback run on a cotangent of an outer trace (its own code is traced)."""
    try:
        return call(_traceable(pullback), b)
    except (ADError, OutArgumentError) as e:
        if _is_builtin_rule(pullback):
            owner = _PULLBACK_OWNER.get(pullback) if _weakrefable(pullback) else None
            what = (f"the built-in rule for {owner}" if owner else
                    f"the built-in pullback {func_name(pullback)}")
            raise _not_twice_differentiable(e, what) from e
        raise
    except _RULE_CRASHES as e:
        if _is_builtin_rule(pullback):
            owner = _PULLBACK_OWNER.get(pullback) if _weakrefable(pullback) else None
            what = (f"the built-in rule for {owner}" if owner else
                    f"the built-in pullback {func_name(pullback)}")
            raise _crash_error(e, pullback, what) from e
        raise


# Exceptions a built-in rule's own code raises when run on traced values it was not
# written for (a second derivative): reported as a named error, not a crash. (A first
# derivative at the same point ran the same code on plain values without raising.)
_RULE_CRASHES = (ValueError, IndexError, TypeError, AttributeError)


def _crash_error(e: BaseException, f: Any, what: str) -> NoRuleError:
    if isinstance(e, np.linalg.LinAlgError):
        raise e
    return NoRuleError(f, "rule", (), f"{what} is not twice differentiable: its own code "
                                      f"(run again on traced values for a higher-order "
                                      f"derivative) fails with {type(e).__name__}: {e}")


def _weakrefable(fn: Any) -> bool:
    try:
        weakref.ref(fn)
    except TypeError:
        return False
    return True


def _traceable(fn: Callable) -> Callable:
    if type(fn) is _FunctionType:
        g = _rewritten(fn)
        if g is not None:
            return g
    return fn


# ---------------------------------------------------------------------------------------
# Dispatch


def _rewritten(fn: types.FunctionType) -> types.FunctionType | None:
    cached = fn.__dict__.get("__chainrules_rewritten__")
    if cached is not None and cached[0] is fn.__code__ and cached[1] is fn.__defaults__:
        return cached[2]
    g = rewritten_function(fn, call)
    if g is not None and g is not fn:
        try:
            fn.__dict__["__chainrules_rewritten__"] = (fn.__code__, fn.__defaults__, g)
        except (AttributeError, TypeError):
            pass
    return g


def apply(f: Any, args: tuple, kwargs: dict, soft: bool = False,
          from_numpy: bool = False) -> Any:
    """Apply ``f`` to arguments of which at least one holds a tracer, using its rule.

    ``soft``: return ``_NO_RULE`` instead of raising when there is no rule (operators
    then try the NumPy ufunc). ``from_numpy``: called by ``__array_function__``.
    """
    top = None
    for a in args:
        if type(a) is Tracer:
            if top is None or a._trace.level > top.level:
                top = a._trace
        elif type(a) is not float and type(a) is not int and type(a) is not _ndarray \
                and _is_struct(a):
            top = _top_trace_deep(a, top)
    if kwargs and _has_tracer_kwargs(kwargs, None):
        # A traced keyword argument: NumPy would dispatch the same call back here.
        top = _top_trace_deep(kwargs, top)
        moved = _positional_form(f, args, kwargs)
        if moved is None:
            raise _traced_keywords_error(f, args, kwargs, top)
        args, kwargs = moved
    if top is None:
        return f(*args, **kwargs)
    out = top.process(f, args, kwargs)
    if out is not _NO_RULE:
        return out
    if soft:
        return _NO_RULE
    if _strippable(f):
        return f(*_strip(args), **kwargs)
    if isinstance(f, np.ufunc) and not kwargs and _is_object_ufunc(f):
        return _object_ufunc(f, args)
    if from_numpy:
        impl = getattr(f, "_implementation", None)
        g = _rewritten(impl) if type(impl) is _FunctionType else None
        if g is not None:
            # A NumPy function written in Python (np.block, np.meshgrid, ...): trace its
            # implementation, whose own calls reach their rules.
            try:
                return g(*args, **kwargs)
            except (ADError, OutArgumentError, TypeError, ValueError, AttributeError) as e:
                raise NoRuleError(
                    f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
                    f"tracing into NumPy's implementation failed: {type(e).__name__}: {e}"
                ) from e
    if isinstance(f, np.ufunc) or from_numpy:
        raise NoRuleError(f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
                          "NumPy would have to convert the traced values to plain arrays")
    if getattr(f, "__module__", None) in ("_operator", "operator"):
        raise NoRuleError(f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
                          "an operator on traced values needs a rule")
    return _through(f, args, kwargs, top)


def _is_object_ufunc(f: np.ufunc) -> bool:
    """A ufunc made by ``np.frompyfunc``: it calls a Python function per element."""
    return all(set(t.replace("->", "")) == {"O"} for t in f.types)


def _object_ufunc(f: np.ufunc, args: tuple) -> Any:
    """Apply a ``np.frompyfunc`` ufunc to tracers element by element.

    Each element is a scalar tracer (the Python function then runs on tracers, so its
    operators are recorded); the results are stacked back into one traced array.
    """
    shape = np.broadcast_shapes(*(np.shape(deep_primal(a)) for a in args))
    cells = []
    for a in args:
        obj = np.empty(shape, dtype=object)
        p = deep_primal(a)
        for idx in np.ndindex(*shape):
            src = tuple(i if n > 1 else 0 for i, n in
                        zip(idx[len(shape) - np.ndim(p):], np.shape(p)))
            obj[idx] = a[src] if type(a) is Tracer and np.ndim(p) else a if np.ndim(p) == 0 \
                else p[src]
        cells.append(obj)
    out = f(*cells)
    if f.nout > 1:
        return tuple(_object_result(o, shape) for o in out)
    return _object_result(out, shape)


def _object_result(out: Any, shape: tuple) -> Any:
    if not shape:
        return out[()] if isinstance(out, _ndarray) else out
    return call(_stack_nested, out.tolist())


def _mode(trace: Any) -> str:
    return "rrule" if type(trace) is ReverseTrace else "frule"


# Functions of shapes and dtypes only: run on the primals, their results are constants.
_STRIP_FUNCS = {np.zeros_like, np.ones_like, np.empty_like, np.shape, np.ndim,
                np.size, np.result_type, np.iscomplexobj, np.isrealobj, np.isscalar}


def call(f: Any, /, *args: Any, **kwargs: Any) -> Any:
    """The dispatch point every call in rewritten code goes through."""
    if f is ignore_derivatives:
        # Stops differentiation: the result is the plain value, never a tracer, so it
        # can be logged, formatted and kept after the trace ends.
        return deep_primal(ignore_derivatives(*(deep_primal(a) for a in args)))
    top = None
    for a in args:
        if type(a) is Tracer:
            if top is None or a._trace.level > top.level:
                top = a._trace
    tf = type(f)
    if top is None:
        if tf is _FunctionType and f not in _r_by_func and f not in _f_by_func:
            g = _rewritten(f) or f
            if _passes_function(args, kwargs):
                return _watched(f, g, args, kwargs)
            return g(*args, **kwargs)
        if tf is _MethodType and type(f.__func__) is _FunctionType:
            g = _rewritten(f.__func__)
            if g is not None:
                if _passes_function(args, kwargs):
                    return _watched(f, g, (f.__self__, *args), kwargs)
                return g(f.__self__, *args, **kwargs)
            return f(*args, **kwargs)
        if f is ProjectTo:
            return ProjectTo(_strip(args[0]))
        for a in args:
            if type(a) is not int and type(a) is not float and _is_struct(a):
                top = _top_trace_deep(a, top)
            elif type(a) is _FunctionType and a.__closure__ is not None:
                # a function closing over traced values: its rule (a solver's) may
                # differentiate w.r.t. them
                top = _reachable_trace(a, top, 0)
        if kwargs:
            for v in kwargs.values():
                top = _top_trace_deep(v, top)
        if top is None:
            if tf is _FunctionType:
                g = _rewritten(f) or f
                if _passes_function(args, kwargs):
                    return _watched(f, g, args, kwargs)
                return g(*args, **kwargs)
            if tf is _MethodType:
                return f(*args, **kwargs)
            if not isinstance(f, type) and type(_call_method(tf)) is _FunctionType:
                # a callable object: its fields may hold tracers, so trace its __call__
                g = _rewritten(_call_method(tf))
                if g is not None:
                    return g(f, *args, **kwargs)
            if kwargs or args:
                return _call_opaque(f, args, kwargs)
            return f()
    elif tf is ProjectTo:
        return project_traced(f, args[0])
    elif f is ProjectTo:
        return ProjectTo(_strip(args[0]))
    if id(f) in _INPLACE_FUNCS and args and type(args[0]) is Tracer:
        raise MutationError(f"numpy.{_INPLACE_FUNCS[id(f)]}(x, ...) on a traced array x",
                            "it writes into its first argument")
    if kwargs and kwargs.get("out") is not None and _top_trace_deep(kwargs["out"], None) \
            is not None:
        raise MutationError(f"{func_name(f)}(..., out=x) on a traced array x",
                            "out= writes the result into x")
    if tf is _ufunc:
        args = _ufunc_arrays(args)
    if not _has_tracer_kwargs(kwargs, top):
        out = top.process(f, args, kwargs)
        if out is not _NO_RULE:
            return out
        if tf is _MethodType and type(f.__func__) is _FunctionType:
            # a rule registered for the function `Foo.method` serves `foo.method(x)`
            out = top.process(f.__func__, (f.__self__, *args), kwargs)
            if out is not _NO_RULE:
                return out
    else:
        # Rules differentiate positional arguments: a traced keyword argument is moved
        # to its place when the signature allows; otherwise trace into f as it is.
        moved = _positional_form(f, args, kwargs)
        if moved is not None:
            top = _top_trace_deep(kwargs, top)
            out = top.process(f, moved[0], moved[1])
            if out is not _NO_RULE:
                return out
    return _through(f, args, kwargs, top)


def _strippable(f: Any) -> bool:
    try:
        return f in _STRIP_FUNCS
    except TypeError:
        return False


def _positional_form(f: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
    """``(args, kwargs)`` with every keyword argument that holds a tracer moved to its
    positional place (earlier unfilled places take their defaults), or None when the
    signature does not allow it (a keyword-only parameter, ``**kwargs``, no signature)."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except Exception:  # no signature, or an object whose attributes inspect trips on
        return None
    positional = [p for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = [p.name for p in positional]
    traced = [k for k, v in kwargs.items() if _top_trace_deep(v, None) is not None]
    if not traced or any(k not in names[len(args):] for k in traced):
        return None
    last = max(names.index(k) for k in traced)
    new_args, rest = list(args), dict(kwargs)
    for p in positional[len(args):last + 1]:
        if p.name in rest:
            new_args.append(rest.pop(p.name))
        elif p.default is not p.empty:
            new_args.append(p.default)
        else:
            return None
    return tuple(new_args), rest


def _traced_keywords_error(f: Any, args: tuple, kwargs: dict, top: Any) -> NoRuleError:
    names = ", ".join(f"{k}=" for k, v in kwargs.items()
                      if _top_trace_deep(v, None) is not None)
    return NoRuleError(
        f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
        f"traced values passed by keyword ({names}) that cannot be moved to a positional "
        f"place; rules differentiate positional arguments, so pass them positionally")


def _has_tracer_kwargs(kwargs: dict, top: Any) -> bool:
    if not kwargs:
        return False
    return any(_top_trace_deep(v, None) is not None for v in kwargs.values())


def _strip(x: Any) -> Any:
    """``x`` with every tracer replaced by its innermost primal (for shapes and types)."""
    t = type(x)
    if t is Tracer:
        return deep_primal(x)
    if t is list or t is tuple:
        return t(_strip(v) for v in x)
    if t is dict:
        return {k: _strip(v) for k, v in x.items()}
    return x


def project_traced(project: ProjectTo, dx: Any) -> Any:
    """Apply a projector to a traced cotangent, with operations the AD can follow."""
    if type(dx) is not Tracer:
        return project(dx)
    p = deep_primal(dx)
    target = project(p)
    if isinstance(target, AbstractTangent):
        return target
    if np.iscomplexobj(p) and not np.iscomplexobj(target):
        dx = call(np.real, dx)
    tshape = np.shape(target)
    if not isinstance(target, _ndarray) and np.ndim(p):
        return call(np.sum, dx)
    if np.shape(p) != tshape:
        pshape = np.shape(p)
        extra = len(pshape) - len(tshape)
        if extra > 0:
            dx = call(np.sum, dx, axis=tuple(range(extra)))
            pshape = pshape[extra:]
        axes = tuple(i for i, (a, b) in enumerate(zip(pshape, tshape)) if a != b and b == 1)
        if axes:
            dx = call(np.sum, dx, axis=axes, keepdims=True)
        if np.shape(deep_primal(dx)) != tshape:
            dx = call(np.reshape, dx, tshape)
    return dx


@functools.cache
def _dispatchers_by_implementation() -> dict[int, Any]:
    out: dict[int, Any] = {}
    for module in (np, np.linalg, np.fft):
        for name in dir(module):
            d = getattr(module, name, None)
            impl = getattr(d, "_implementation", None)
            if impl is not None and type(impl) is not _FunctionType:
                out.setdefault(id(impl), d)
    return out


def _numpy_dispatcher(f: Any) -> Any:
    """The public NumPy function whose C implementation ``f`` is (NumPy's own Python
    code calls some, e.g. ``concatenate``, without the public wrapper), or None."""
    return _dispatchers_by_implementation().get(id(f))


def _through(f: Any, args: tuple, kwargs: dict, top: Any) -> Any:
    """Trace into ``f`` (no rule applies): run its rewritten source on the tracers."""
    tf = type(f)
    if tf is types.BuiltinFunctionType:
        public = _numpy_dispatcher(f)
        if public is not None:
            return call(public, *args, **kwargs)
    if _strippable(f):
        return f(*_strip(args), **kwargs)
    if tf is _FunctionType:
        g = _rewritten(f)
        if g is not None:
            if _passes_function(args, kwargs):
                return _watched(f, g, args, kwargs)
            return g(*args, **kwargs)
        return _call_opaque_traced(f, args, kwargs, top)
    if tf is _MethodType and type(f.__func__) is _FunctionType:
        g = _rewritten(f.__func__)
        if g is not None:
            if _passes_function(args, kwargs):
                return _watched(f, g, (f.__self__, *args), kwargs)
            return g(f.__self__, *args, **kwargs)
        return _call_opaque_traced(f, args, kwargs, top)
    if isinstance(f, np.ufunc) and not kwargs and _is_object_ufunc(f):
        return _object_ufunc(f, args)
    if isinstance(f, np.ufunc):
        raise NoRuleError(f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
                          "NumPy would have to convert the traced values to plain arrays")
    if tf is functools.partial:
        if f.func is call:
            return call(*f.args, *args, **{**f.keywords, **kwargs})
        return call(f.func, *f.args, *args, **{**f.keywords, **kwargs})
    if isinstance(f, type):
        init = f.__init__
        if (type(f) is type and f.__new__ is object.__new__ and type(init) is _FunctionType
                and not hasattr(f, "__dataclass_fields__")):
            g = _rewritten(cast(types.FunctionType, init))
            if g is not None:
                obj = object.__new__(f)
                g(obj, *args, **kwargs)
                return obj
        return _call_opaque_traced(f, args, kwargs, top)
    method = _call_method(tf)
    if type(method) is _FunctionType and not isinstance(f, (types.BuiltinFunctionType,)):
        g = _rewritten(method)
        if g is not None:
            return g(f, *args, **kwargs)
    return _call_opaque_traced(f, args, kwargs, top)


def _call_method(cls: type) -> Any:
    """The ``__call__`` defined by a class (None if only ``object``'s or a C slot)."""
    for klass in cls.__mro__:
        method = klass.__dict__.get("__call__")
        if method is not None:
            return method
    return None


# Builtins that look at a callable instead of calling it: they get the callable itself,
# never the dispatching wrapper (isinstance(f, functools.partial) must stay False).
_INTROSPECTING = {id(b) for b in (
    isinstance, issubclass, type, id, getattr, hasattr, setattr, delattr, callable, vars,
    dir, repr, str, hash, format, print, len, bool, object.__setattr__,
    object.__getattribute__, operator.is_, operator.is_not, operator.eq, operator.ne,
    operator.contains, operator.getitem, weakref.ref, functools.update_wrapper,
    functools.wraps)}


_CONTAINERS = (dict, set, frozenset, list, tuple)


def _introspects(f: Any) -> bool:
    if id(f) in _INTROSPECTING:
        return True
    # a container's own methods (d.get(fn), fns.append(fn), fn in s) store or look up
    # the callable: identity matters; list.sort(key=fn) calls it
    owner = getattr(f, "__self__", None)
    return (type(f) is types.BuiltinMethodType and isinstance(owner, _CONTAINERS)
            and getattr(f, "__name__", "") != "sort")


def _wrap_callable(v: Any) -> Any:
    if v is call or (type(v) is functools.partial and v.func is call):
        return v
    if type(v) is _FunctionType or type(v) is _MethodType or (
            callable(v) and type(_call_method(type(v))) is _FunctionType
            and not isinstance(v, type)):
        return functools.partial(call, v)
    if (type(v) is types.BuiltinFunctionType or isinstance(v, np.ufunc)) and (
            _has_rules(_rr_has, v) or _has_rules(_fr_has, v)):
        return functools.partial(call, v)  # map(math.sin, xs): each call reaches the rule
    return v


def _has_rules(has: Callable, v: Any) -> bool:
    try:
        return has(v)
    except TypeError:
        return False


_rr_has, _fr_has = rrule.has_rules, frule.has_rules


def _call_opaque_traced(f: Any, args: tuple, kwargs: dict, top: Any) -> Any:
    """``_call_opaque`` for a call whose arguments hold tracers: a failure is most likely
    the tracer's, so it becomes a `NoRuleError` naming the function."""
    try:
        return _call_opaque(f, args, kwargs)
    except ADError:
        raise
    except (TypeError, ValueError) as e:
        if _is_ad_code(f):
            raise
        raise NoRuleError(f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
                          f"calling it on traced values failed: {type(e).__name__}: {e}") from e
    except Exception as e:
        if type(e).__module__ in ("struct", "_struct"):
            raise NoRuleError(f, _mode(top),
                              tuple(type(_deep_struct_primal(a)) for a in args),
                              f"calling it on traced values failed: {e}") from e
        raise


def _call_opaque(f: Any, args: tuple, kwargs: dict) -> Any:
    """Call code the AD cannot look inside: callables passed to it still dispatch."""
    watch = False
    if not _introspects(f):
        watch = _passes_function(args, kwargs)
        args = tuple(_wrap_callable(a) for a in args)
        if kwargs:
            kwargs = {k: _wrap_callable(v) for k, v in kwargs.items()}
    if f is np.fromiter and args:
        # NumPy would write each item into a new array: refuse traced items by name
        items = list(args[0])
        if _top_trace_deep(items, None) is not None:
            first = next(v for v in items if _top_trace_deep(v, None) is not None)
            raise TracerConversionError(
                "numpy.fromiter of traced values (use np.array([...]) or np.stack, which "
                "the AD follows)", _describe(first) if type(first) is Tracer
                else "a structure holding traced values")
        args = (items, *args[1:])
    if f is np.array or f is np.asarray or f is np.asanyarray:
        if len(args) == 1 and not kwargs and type(args[0]) is Tracer:
            return args[0]  # already an array-like value the AD follows
        if args and _top_trace_deep(args[0], None) is not None:
            return call(_stack_nested, args[0], **kwargs)
    try:
        if watch:
            return _watched(f, f, args, kwargs)
        return f(*args, **kwargs)
    except TracerConversionError as e:
        if e.function is None and f not in (float, complex, int) and not _is_ad_code(f):
            raise TracerConversionError(e.operation, e.primal, func_name(f),
                                        _source_unreadable(f)) from e
        raise


def _source_unreadable(f: Any) -> bool:
    """``f`` is Python code whose source the AD could not read (REPL, ``python -c``,
    ``exec``), so it ran without its calls being intercepted."""
    fn = f.__func__ if type(f) is _MethodType else f
    code = getattr(fn, "__code__", None) if type(fn) is _FunctionType else None
    return code is not None and not linecache.getlines(code.co_filename)


def _is_ad_code(f: Any) -> bool:
    code = getattr(f, "__code__", None)
    return code is not None and code.co_filename.startswith(_AD_DIR)


_AD_DIR = __file__.rsplit("_trace.py", 1)[0]


def _stack_nested(x: Any, dtype: Any = None) -> Any:
    """``np.array`` of a nested list holding tracers, as stacks the AD can follow."""
    if type(x) is list or type(x) is tuple:
        out = np.stack([_stack_nested(v) for v in x])
    else:
        out = x
    if dtype is not None:
        out = out.astype(dtype)
    return out


def _unstack_cotangent(x: Any, g: Any) -> Any:
    if type(x) is list or type(x) is tuple:
        return Tangent[type(x)](*[_unstack_cotangent(v, g[i]) for i, v in enumerate(x)])
    return project_traced(ProjectTo(deep_primal(x)), g)


def _array_of(x: Any, dtype: Any) -> Any:
    """``np.array(x, dtype)``, stacked when ``x`` holds values of an outer trace (this
    rule run for a higher-order derivative)."""
    if _top_trace_deep(x, None) is not None:
        return _stack_nested(x, dtype)
    return np.array(x, dtype=dtype)


@rrule.register(_stack_nested)
def _stack_nested_rrule(x: Any, dtype: Any = None) -> Any:
    y = _array_of(x, dtype)

    def stack_nested_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if isinstance(y_bar, AbstractTangent):
            return _NO, y_bar, _NO
        return _NO, _unstack_cotangent(x, y_bar), _NO

    return y, stack_nested_pullback


@frule.register(_stack_nested)
def _stack_nested_frule(dargs: tuple, x: Any, dtype: Any = None) -> Any:
    y = _array_of(x, dtype)

    def tangent_of(xv: Any, d: Any) -> Any:
        if type(xv) is list or type(xv) is tuple:
            items = d.backing if isinstance(d, Tangent) else [_ZERO] * len(xv)
            return np.stack([tangent_of(v, di) for v, di in zip(xv, items)])
        d = unthunk(d)
        if isinstance(d, AbstractTangent):
            return np.zeros(np.shape(deep_primal(xv)), dtype=y.dtype)
        return d

    y_dot = tangent_of(x, dargs[1])
    if _top_trace_deep(y_dot, None) is not None:
        return y, _stack_nested(y_dot, y.dtype)
    return y, np.asarray(y_dot, dtype=y.dtype)


def _setitem(obj: Any, key: Any, value: Any) -> None:
    """``obj[key] = value`` in traced code: refused when it would drop a derivative."""
    if type(obj) is Tracer:
        raise MutationError("`a[...] = value` on a traced array")
    if isinstance(obj, _ndarray) and _top_trace_deep(value, None) is not None:
        raise TracerConversionError("writing a traced value into an array (`a[i] = x`)",
                                    _describe(value) if type(value) is Tracer
                                    else "a structure holding traced values")
    obj[key] = value


def _setitem_inplace(obj: Any, key: Any, op: str, value: Any) -> None:
    """``obj[key] op= value`` in traced code (same checks as `_setitem`)."""
    if type(obj) is Tracer:
        raise MutationError(f"`a[...] {_AUG_SYMBOLS[op]} value` on a traced array")
    if isinstance(obj, _ndarray) and _top_trace_deep(value, None) is not None:
        raise TracerConversionError(
            f"updating an array with a traced value (`a[i] {_AUG_SYMBOLS[op]} x`)",
            _describe(value) if type(value) is Tracer else "a structure holding traced values")
    obj[key] = getattr(operator, op)(obj[key], value)


_AUG_SYMBOLS = {"iadd": "+=", "isub": "-=", "imul": "*=", "itruediv": "/=", "ipow": "**=",
                "imatmul": "@="}

_MISSING = object()
# (type, attribute name) -> the Python getter of a property there, or None
_property_getters: dict[tuple[type, str], Any] = {}


def _getattr(obj: Any, name: str) -> Any:
    """``obj.name`` read as a value in traced code: a property's Python getter is traced
    (its code may compute with traced fields, as ``Covariance.log_pdet`` does)."""
    t = type(obj)
    if t is types.ModuleType:
        v = getattr(obj, name)
        if type(v) in _CONCATENATORS:
            return _TracedIndexer(v)
        return v
    if t is Tracer:
        return getattr(obj, name)
    key = (t, name)
    try:
        fget = _property_getters.get(key, _MISSING)
    except TypeError:  # an unhashable type object
        return getattr(obj, name)
    if fget is _MISSING:
        fget = None
        for klass in getattr(t, "__mro__", ()):
            d = klass.__dict__.get(name, _MISSING)
            if d is not _MISSING:
                if type(d) is property and type(d.fget) is _FunctionType:
                    fget = d.fget
                break
        _property_getters[key] = fget
    if fget is None:
        return getattr(obj, name)
    return call(fget, obj)


# np.r_ and np.c_: objects whose __getitem__ (Python code) builds an array
_CONCATENATORS = (type(np.r_), type(np.c_))


class _TracedIndexer:
    """``np.r_`` / ``np.c_`` read in traced code: indexing runs their ``__getitem__``
    through the dispatch point (traced), so ``np.r_[x, y]`` of traced values is followed."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __getitem__(self, key: Any) -> Any:
        return call(type(self.obj).__getitem__, self.obj, key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.obj, name)


def _ufunc_arrays(args: tuple) -> tuple:
    """Arguments of a NumPy ufunc with every list or tuple holding tracers made an array
    the AD follows (``scipy.special.gammaln([a, a - 0.5])``): the ufunc's rule then sees
    an array, as the ufunc itself would."""
    for a in args:
        if type(a) is list or type(a) is tuple:
            break
    else:
        return args
    return tuple(call(_stack_nested, a) if (type(a) is list or type(a) is tuple)
                 and _top_trace_deep(a, None) is not None else a for a in args)


call.attr = _getattr  # type: ignore[attr-defined]
call.setitem = _setitem  # type: ignore[attr-defined]
call.setitem_inplace = _setitem_inplace  # type: ignore[attr-defined]
call.slice = slice  # type: ignore[attr-defined]
