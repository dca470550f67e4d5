"""The dispatch point's helpers for syntax other than calls: rewritten code reads
attributes with ``call.attr`` (a property's getter is traced), and writes subscripts
with ``call.setitem`` / ``call.setitem_inplace`` (their ``_rebind`` forms where the
target is a local variable, which the rewritten code binds to the result: see
``_inplace``)."""

from __future__ import annotations

import operator
import types
from typing import Any

import numpy as np

from chainrules.core import cached_lookup, frule, is_foreign_array, rrule

from ._dispatch import call
from ._errors import MutationError
from ._inplace import write, write_plain
from ._inplace_numpy import mutating
from ._tracer import Tracer, _binop, deep_primal
from ._tree import _top_trace_deep

_ndarray = np.ndarray
_FunctionType = types.FunctionType

def _setitem(obj: Any, key: Any, value: Any) -> Any:
    """``obj[key] = value`` in traced code whose target cannot be rebound (an attribute,
    an item, a global): a traced ``obj`` is written in place (``_inplace``); a plain
    array cannot become traced here, so a traced value is refused."""
    if type(obj) is Tracer:
        write(obj, key, value)
        return obj
    if isinstance(obj, _ndarray) and _top_trace_deep(value, None) is not None:
        raise MutationError("`a[...] = value` with a traced value into a plain array",
                            "the AD makes a plain array traced by rebinding its name, and "
                            "this target is not a local variable (an attribute, an item "
                            "or a global): bind the array to a local name, write, then "
                            "store it")
    obj[key] = value
    return obj


def _setitem_rebind(obj: Any, key: Any, value: Any) -> Any:
    """``obj[key] = value`` in traced code, ``obj`` a local variable: the rewritten code
    binds the result back to it (``y = call.setitem_rebind(y, i, v)``), so a plain array
    receiving a traced value becomes a traced array."""
    if type(obj) is Tracer:
        write(obj, key, value)
        return obj
    if isinstance(obj, _ndarray) and _top_trace_deep(value, None) is not None:
        if type(value) is not Tracer:  # y[:2] = [a, b]: a list holding traced values
            value = call(np.asarray, value)
        # references to obj: the caller's variable, this frame's and write_plain's
        return write_plain(obj, key, value, 3, "`a[...] = value`")
    obj[key] = value
    return obj


def _updated(obj: Any, key: Any, op: str, value: Any) -> Any:
    return getattr(operator, op.removeprefix("i"))(obj[key], value)


def _setitem_inplace(obj: Any, key: Any, op: str, value: Any) -> Any:
    """``obj[key] op= value`` in traced code whose target cannot be rebound."""
    if type(obj) is Tracer:
        write(obj, key, _updated(obj, key, op, value), f"`a[...] {_AUG_SYMBOLS[op]} value`")
        return obj
    if isinstance(obj, _ndarray) and _top_trace_deep(value, None) is not None:
        return _setitem(obj, key, value)  # (refused)
    obj[key] = getattr(operator, op)(obj[key], value)
    return obj


def _setitem_inplace_rebind(obj: Any, key: Any, op: str, value: Any) -> Any:
    """``obj[key] op= value`` in traced code, ``obj`` a local variable (rebound)."""
    what = f"`a[...] {_AUG_SYMBOLS[op]} value`"
    if type(obj) is Tracer:
        write(obj, key, _updated(obj, key, op, value), what)
        return obj
    if isinstance(obj, _ndarray) and _top_trace_deep(value, None) is not None:
        new = _updated(obj, key, op, value)
        return write_plain(obj, key, new, 3, what)
    obj[key] = getattr(operator, op)(obj[key], value)
    return obj


_PLAIN = (float, int, _ndarray, Tracer)
_rr_lookup, _fr_lookup = cached_lookup(rrule), cached_lookup(frule)


def _matmul(a: Any, b: Any) -> Any:
    """``a @ b`` in traced code. A traced right operand of a foreign left one with a
    matmul rule (a SciPy sparse matrix, which would convert the tracer to a plain array)
    goes to the operator's rule; any other ``a @ b`` runs as Python runs it."""
    if type(b) is Tracer and type(a) not in _PLAIN:
        if is_foreign_array(a):
            # a dask array would take the tracer for a NumPy chunk and hide it in its
            # graph: what `b.__rmatmul__(a)` does (the operator's rule, else the
            # array library's matmul)
            return _binop(operator.matmul, np.matmul, a, b)
        types = (type(a), type(deep_primal(b)))
        try:
            ruled = (_rr_lookup(operator.matmul, types, None) is not None
                     or _fr_lookup(operator.matmul, types, None) is not None)
        except TypeError:  # (an unhashable type cannot have been registered)
            ruled = False
        if ruled:
            return call(operator.matmul, a, b)
    return a @ b


_AUG_SYMBOLS = {"iadd": "+=", "isub": "-=", "imul": "*=", "itruediv": "/=", "ipow": "**=",
                "imatmul": "@=", "ifloordiv": "//=", "imod": "%="}

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

call.attr = _getattr  # type: ignore[attr-defined]
call.setitem = _setitem  # type: ignore[attr-defined]
call.setitem_inplace = _setitem_inplace  # type: ignore[attr-defined]
call.setitem_rebind = _setitem_rebind  # type: ignore[attr-defined]
call.setitem_inplace_rebind = _setitem_inplace_rebind  # type: ignore[attr-defined]
call.mutating = mutating  # type: ignore[attr-defined]
call.slice = slice  # type: ignore[attr-defined]
call.matmul = _matmul  # type: ignore[attr-defined]
