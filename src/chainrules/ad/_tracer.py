"""The tracer: a value being differentiated, and what Python and NumPy do with it.

A `Tracer` wraps a primal value that depends on a differentiated input. It belongs
to one trace (one level of differentiation; nested ``grad`` calls make nested
traces), which says what to do with it: `ReverseTrace` (``_reverse``) records a tape,
`ForwardTrace` (``_forward``) carries a tangent. Every operation on tracers -- an
operator, a NumPy ufunc or function, and every *call* in rewritten code -- ends in
the dispatch point (``_dispatch.call`` / ``_dispatch.apply``), which asks the
innermost trace among the arguments to apply a rule.

Nested differentiation: a tracer's level says which trace made it. An operation is
handled by the innermost trace among its arguments; tracers of outer traces are left
inside the primals, so the rule's own computation is recorded by the outer trace.
Two traces never share tracers, so perturbations cannot be confused.

This module sits below the dispatch point in the import order; ``_dispatch`` installs
``call`` and ``apply`` here when it is imported (see `connect`).
"""

from __future__ import annotations

import dis
import functools
import math
import operator
import os
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from chainrules.core import (
    NoTangent,
    ZeroTangent,
    array_namespace,
    is_foreign_array,
    is_foreign_type,
)

from . import _native
from ._errors import (
    ADError,
    DeadTracerError,
    MutationError,
    NoRuleError,
    TracerConversionError,
    func_name,
)

__all__ = ["Tracer", "connect", "deep_primal", "is_input", "mark_input", "new_level"]

_ndarray = np.ndarray
_ZERO = ZeroTangent()
_NO = NoTangent()
# What a trace's ``process`` / ``binop`` returns when no rule applies.
_NO_RULE = object()
_EMPTY: dict = {}
# Files of the AD itself (its own code is never rewritten, and never the user's).
AD_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _not_connected(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("chainrules.ad._dispatch was not imported")  # pragma: no cover


# The dispatch point and `apply`, installed by `connect` (``_dispatch`` imports this
# module, so this module cannot import it).
call: Callable[..., Any] = _not_connected
apply: Callable[..., Any] = _not_connected


def connect(call_fn: Callable[..., Any], apply_fn: Callable[..., Any]) -> None:
    """Install the dispatch point that tracer methods and operators call."""
    global call, apply
    call = call_fn
    apply = apply_fn

# Values that become tracers when a traced operation returns them.
_SCALARS = (float, complex, np.floating, np.complexfloating)

_level_counter = [0]
# How many times traced code branched on a traced value (a comparison, bool(), int(),
# rounding). A call that hands a function to other code is watched: if it branched and
# returns plain floats, those were decided by the branches (a solver's answer) and
# carry a derivative the AD cannot see (see _watched).
_BRANCHES = [0]

# The differentiated function's arguments (id -> tracer): writing into one is refused,
# since NumPy would change the caller's array and the AD would not (see ``_inplace``).
# (a dict of plain weak references: a WeakValueDictionary costs several times more per
# grad call; dead entries are dropped when the dict grows)
_INPUTS: dict[int, Any] = {}
_weakref = weakref.ref
# The write machinery (``_inplace.write``), installed by ``_inplace``, which imports the
# dispatch point and so cannot be imported here.
WRITE: list = [None, None]


def mark_input(t: Tracer) -> Tracer:
    """Mark ``t`` as an argument of the differentiated function (never written)."""
    if len(_INPUTS) > 4096:
        for k in [k for k, r in _INPUTS.items() if r() is None]:
            del _INPUTS[k]
    _INPUTS[id(t)] = _weakref(t)
    return t


def is_input(t: Tracer) -> bool:
    """Whether ``t`` is an argument of the differentiated function (see `mark_input`)."""
    r = _INPUTS.get(id(t))
    return r is not None and r() is t


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

    __slots__ = ("__weakref__", "_trace", "aux", "primal")
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
        # Never for a foreign array: C code of its library that checks isinstance
        # (PyTorch's THPVariable_Check) then reads the tracer's memory as its own
        # struct: `tensor @ tracer` crashed the interpreter (issue 27).
        t = type(deep_primal(self))
        honest = _HONEST_CLASS.get(t)
        if honest is None:
            honest = _HONEST_CLASS[t] = _is_foreign_type(t)
        return Tracer if honest else t

    def __array_namespace__(self, api_version: Any = None) -> Any:
        # the primal's library: `array_namespace(x)` in traced code is what it is
        # outside (its functions then reach their rules through the dispatch point)
        from ._arraylib import foreign_namespace

        p = deep_primal(self)
        return foreign_namespace(p) if is_foreign_array(p) else array_namespace(p)

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

    # In-place operators: rebinding for immutable scalars; for arrays a write of the
    # result into the tracer itself (``_inplace``), so every name bound to it sees it.
    def _inplace(self, name: str, op: Callable, other: Any) -> Any:
        if isinstance(deep_primal(self), _ndarray):
            WRITE[0](self, Ellipsis, op(self, other), f"`x {name} ...`")
            return self
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
        WRITE[0](self, key, value, "`a[...] = value`")

    # -- containers and indexing -------------------------------------------------------

    def __getitem__(self, key: Any) -> Any:
        if type(key) is int:
            out = _getitem_int(self, key)
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
        if kwargs.get("out") is not None or method == "at":
            return WRITE[1](ufunc, method, inputs, kwargs)  # _inplace.ufunc_write
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
        raise NoRuleError(getattr(ufunc, method), "rule",
                          tuple(type(deep_primal(a)) for a in inputs),
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

    def copy(self, order: Any = "K") -> Any:
        # a copy owns new memory (it may be written in place, see _inplace); the tape
        # index / tangent is shared, as the values are equal
        p = self.primal
        if type(p) is Tracer:
            return Tracer(p.copy(order), self._trace, self.aux)
        if type(p) is _ndarray:
            return Tracer(p.copy(order), self._trace, self.aux)
        return self

    def fill(self, value: Any) -> None:
        WRITE[0](self, Ellipsis, value, "x.fill()")

    def sort(self, axis: int = -1, kind: Any = None, order: Any = None) -> None:
        WRITE[0](self, Ellipsis, call(np.sort, self, axis, kind, order), "x.sort()")

    def put(self, indices: Any, values: Any, mode: str = "raise") -> None:
        call(np.put, self, indices, values, mode)

    # copy.copy / copy.deepcopy (scipy.integrate.quad_vec copies its values): the same
    # sharing as x.copy(); without these, copy rebuilds the object from __reduce_ex__
    # with its slots unset, and __getattr__ recurses on the missing primal
    # copy.copy / copy.deepcopy (scipy.integrate.quad_vec copies its values): a copy, as
    # x.copy() is -- never the tracer itself, whose writes would then reach the original
    def __copy__(self) -> Any:
        return self.copy()

    def __deepcopy__(self, memo: dict) -> Any:
        y = memo[id(self)] = self.copy()
        return y

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
                raise NoRuleError(attr, self._trace.mode, (type(p),),
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

# ndarray attributes that expose the values themselves (not metadata).
_VALUE_VIEWS = frozenset({"flat", "base", "data", "ctypes", "view", "tobytes", "tofile",
                          "byteswap"})
# ndarray methods that write into the array -> the out-of-place equivalent
_MUTATING_METHODS = {"itemset": "where", "resize": "resize(x, shape)",
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


# primal type -> whether a tracer of it must answer `Tracer` to `x.__class__`
_HONEST_CLASS: dict[type, bool] = {}


def _is_foreign_type(t: type) -> bool:
    """Whether primals of type ``t`` are arrays of a library other than NumPy."""
    if issubclass(t, (_ndarray, np.generic, float, int, complex)):
        return False
    return hasattr(t, "__array_namespace__") or is_foreign_type(t)


def _conversion_error(t: Tracer, operation: str) -> ADError:
    """The error for converting ``t`` to a plain value: a dead tracer says so first. Kept
    in `LAST_REFUSAL`: C code calling back into Python may swallow it and raise its own."""
    err = (DeadTracerError if t._trace.ended else TracerConversionError)(
        operation, _describe(t))
    LAST_REFUSAL[0] = err
    return err


LAST_REFUSAL: list = [None]  # (the dispatch reports it instead of the C code's error)


def _describe(t: Tracer) -> str:
    p = deep_primal(t)
    if isinstance(p, _ndarray):
        return f"traced ndarray(shape={p.shape}, dtype={p.dtype})"
    return f"traced {type(p).__qualname__} {p!r}"


def _coercion_operation(default: str) -> str:
    """Name the Python operation that asked for a plain number, from the caller's opcode."""
    frame = sys._getframe(2)
    if frame.f_code.co_filename.startswith(AD_DIR):
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


def _getitem_int(a: Any, i: int) -> Any:
    """``a[i]`` for an int ``i`` by the rule of the tracer's trace; ``_NO_RULE`` when
    there is none."""
    return a._trace.process(operator.getitem, (a, i), _EMPTY)


if _native.TAPE is not None:
    # x[i] of a traced float array, as an index node of a reverse trace, in C
    _getitem_int = functools.update_wrapper(_native.TAPE.Index(_getitem_int), _getitem_int)
    # the operators: the common case (tracers of one reverse trace, a scalar_rule)
    # recorded in C, every other call passed to `_binop` (the methods above are the
    # reference; CHAINRULES_PURE_PYTHON=1 keeps them)
    for _name, _op, _ufunc in (("add", operator.add, np.add),
                               ("sub", operator.sub, np.subtract),
                               ("mul", operator.mul, np.multiply),
                               ("truediv", operator.truediv, np.true_divide),
                               ("pow", operator.pow, np.power),
                               ("matmul", operator.matmul, np.matmul),
                               ("mod", operator.mod, np.mod)):
        for _reflected in (False, True):
            _dunder = f"__{'r' if _reflected else ''}{_name}__"
            setattr(Tracer, _dunder, _native.TAPE.OpMethod(_op, _ufunc, _binop, _dunder,
                                                           _reflected))


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
            from ._arraylib import foreign_namespace  # (its rules registered)

            name = cast(str, ufunc.__name__)
            return getattr(foreign_namespace(p), _STANDARD_NAMES.get(name, name), ufunc)
    return ufunc

def _dead(trace: Any, f: Any, args: tuple) -> DeadTracerError:
    t = next((a for a in args if type(a) is Tracer and a._trace is trace), None)
    return DeadTracerError(f"calling {func_name(f)}",
                           _describe(t) if t is not None else "a traced value")


class EndedTrace:
    """Mixed into a trace class for its ended state: a tracer that leaked out of its
    ``grad`` / ``jvp`` refuses to be used (`DeadTracerError`); a reverse trace's tape
    still serves its pullback."""

    __slots__ = ()
    ended = True

    def binop(self, f: Any, a: Any, b: Any) -> Any:
        raise _dead(self, f, (a, b))

    def process(self, f: Any, args: tuple, kwargs: dict, soft: bool = False) -> Any:
        raise _dead(self, f, args)
