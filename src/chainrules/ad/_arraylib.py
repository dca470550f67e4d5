"""The AD on arrays of other libraries than NumPy (array_api_strict, JAX, PyTorch, dask).

Rules for array-API functions are written once against ``xp`` and registered on a
namespace by ``register_namespace``; the AD registers them on the namespace of every
foreign array it meets (an input, or ``array_namespace`` of a tracer in traced code),
so code written with ``xp = array_namespace(x)`` differentiates without a setup step.

A value the AD cannot see inside is refused at the boundary, never differentiated as a
constant: a dask array whose task graph holds a tracer (it was built from a traced
value by dask's own functions, which the AD does not trace) would compute with a value
of a trace that has ended, or fail to serialize on a cluster.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from chainrules.core import (
    array_namespace,
    is_foreign_array,
    namespace_counterpart,
    persistent_rules,
)

_PLAIN = (np.ndarray, float, int, complex)

__all__ = ["check_constructed", "check_opaque", "foreign_namespace", "in_namespace",
           "is_graph_type"]

# ids of the namespaces whose functions got the array-API rules
_registered: set[int] = set()


def foreign_namespace(x: Any) -> Any:
    """The namespace of foreign array ``x``, with the array-API rules registered on it."""
    xp = array_namespace(x)
    if id(xp) not in _registered or type(x) not in _indexed:
        from chainrules.rules import register_namespace

        # part of the library, loaded lazily: kept when a test's scoped_rules ends
        # (register_namespace itself registers a namespace once)
        with persistent_rules():
            register_namespace(xp)
            _register_getitem(type(x))
            _shape_only(xp)
        _defer_to_tracers(type(x))
        _registered.add(id(xp))
    return xp


def _shape_only(xp: Any) -> None:
    """``xp.zeros_like(x)``, ``ones_like``, ``empty_like``: functions of ``x``'s shape and
    dtype only, whose outputs carry no derivative (as NumPy's do); without a rule, a
    namespace written in Python (array_api_strict) would be traced into, and read the
    data inside the traced array."""
    from chainrules.core import frule, non_differentiable, rrule

    for name in ("zeros_like", "ones_like", "empty_like"):
        f = getattr(xp, name, None)
        if callable(f) and not rrule.has_rules(f) and not frule.has_rules(f):
            non_differentiable(f)


# array classes whose operators were made to give way to tracers
_deferring: set[type] = set()


def _defer_to_tracers(t: type) -> None:
    """Make the operators of array class ``t`` return NotImplemented for a tracer operand,
    so that Python asks the tracer's reflected operator (``const * tracer``).

    ``array_api_strict``'s operators raise ``TypeError`` for any operand that is not one
    of its arrays or a Python scalar (its ``_check_type_device``), where the language
    expects NotImplemented: a rule's pullback multiplying a constant array by a traced
    cotangent (a second derivative) failed there. With a tracer operand let through that
    check, the operator's own dtype check answers NotImplemented (a tracer is not one of
    its arrays); every other operand is checked as before."""
    if t in _deferring:
        return
    _deferring.add(t)
    check = t.__dict__.get("_check_type_device")
    if check is None or not (t.__module__ or "").startswith("array_api_strict"):
        return
    from ._tracer import Tracer

    def _check_type_device(self: Any, other: Any) -> None:
        if type(other) is Tracer:
            return  # (the operator then returns NotImplemented: the tracer answers)
        check(self, other)

    _check_type_device.__wrapped__ = check  # type: ignore[attr-defined]
    t._check_type_device = _check_type_device  # type: ignore[attr-defined]


# type -> whether its values are dask collections whose graphs may hide a tracer
_graph_types: dict[type, bool] = {}


def is_graph_type(t: type) -> bool:
    """Whether values of type ``t`` are dask arrays (dask is not imported to answer)."""
    known = _graph_types.get(t)
    if known is None:
        da = sys.modules.get("dask.array")
        known = _graph_types[t] = da is not None and issubclass(t, da.Array)
    return known


# dask array name (a key of its graph, unique to its graph) -> whether a tracer hides in it
_hides_tracer: dict[str, bool] = {}


def _holds_tracer(v: Any, tracer_type: type, depth: int = 0) -> bool:
    if type(v) is tracer_type:
        return True
    if depth > 50:
        return False
    if type(v) in (tuple, list):
        return any(_holds_tracer(u, tracer_type, depth + 1) for u in v)
    if type(v) is dict:
        return any(_holds_tracer(u, tracer_type, depth + 1) for u in v.values())
    # dask's task specs: Task (args, kwargs), DataNode (value), and their containers
    for field in ("value", "args", "kwargs"):
        u = getattr(v, field, None) if not isinstance(v, (str, bytes, int, float)) else None
        if u is not None and _holds_tracer(u, tracer_type, depth + 1):
            return True
    return False


def check_opaque(x: Any, where: str) -> None:
    """Refuse dask array ``x`` (met as ``where``) when its graph holds a tracer
    (`OpaqueArrayError`); cached per array, whose graph never changes."""
    from ._errors import OpaqueArrayError
    from ._tracer import Tracer

    name = x.name
    hides = _hides_tracer.get(name)
    if hides is None:
        graph = x.__dask_graph__()
        hides = any(_holds_tracer(v, Tracer) for v in graph.values())
        if len(_hides_tracer) > 4096:
            _hides_tracer.clear()
        _hides_tracer[name] = hides
    if hides:
        raise OpaqueArrayError(where, f"a dask array (shape={x.shape}, dtype={x.dtype})")


def check_constructed(cls: type, obj: Any) -> Any:
    """``obj``, built by calling class ``cls`` on traced values (code the AD did not
    trace); `OpaqueArrayError` when it is another library's array whose fields hold a
    tracer (it cannot compute with it, and would lose its derivative)."""
    if type(obj) is cls and is_foreign_array(obj) and not is_graph_type(cls):
        from ._errors import OpaqueArrayError
        from ._tracer import Tracer

        fields = getattr(obj, "__dict__", None)
        if fields and _holds_tracer(list(fields.values()), Tracer):
            name = f"{cls.__module__.split('.')[0]}.{cls.__qualname__}"
            raise OpaqueArrayError(f"the result of {name}(...)",
                                   f"a {name} (shape={getattr(obj, 'shape', '?')})",
                                   constructor=f"{name}(...)")
    return obj


def in_namespace(f: Any, args: tuple, kwargs: dict, primal_of: Any) -> Any:
    """``(g, args, kwargs)``: NumPy function ``f`` called on a foreign array (a traced
    dask array, a tensor) as the same function of the array's namespace, whose rule is
    written with ``xp`` (so a dask value stays lazy and a tensor a tensor), or None
    where ``f`` keeps the call (see `namespace_counterpart`)."""
    for a in args:
        p = primal_of(a)
        if not isinstance(p, _PLAIN) and is_foreign_array(p):
            foreign_namespace(p)  # its functions' rules registered
            return namespace_counterpart(f, args, kwargs, primal_of)
    return None


def cotangent_like(y: Any, y_bar: Any) -> Any:
    """An output cotangent given as a number or NumPy array for foreign output ``y``, as
    an array of ``y``'s library (a dask one chunked as ``y``): the rules then compute
    with that library only."""
    if isinstance(y, _PLAIN) or not is_foreign_array(y) or is_foreign_array(y_bar) \
            or not isinstance(y_bar, (*_PLAIN, np.generic)):
        return y_bar
    xp = foreign_namespace(y)
    b = xp.asarray(y_bar, dtype=y.dtype) if np.ndim(y_bar) else xp.asarray(
        float(np.real(y_bar)) if not np.iscomplexobj(y_bar) else complex(y_bar),
        dtype=y.dtype)
    if is_graph_type(type(y)) and tuple(b.shape) == tuple(y.shape) and b.ndim:
        b = b.rechunk(y.chunks)
    return b


# ---------------------------------------------------------------------------------------
# x[key] of a foreign array: the standard has indexing but no function for it, so the
# rule is the AD's, registered on each foreign array type the AD meets


def _scatter(xp: Any, x: Any, key: Any, y_bar: Any) -> Any:
    """Zeros shaped like ``x`` with ``y_bar`` at ``x[key]`` (basic indexing: no
    repeated positions), out of place for immutable arrays (JAX)."""
    zeros = xp.zeros_like(x)
    at = getattr(zeros, "at", None)
    if at is not None:  # JAX
        return at[key].add(y_bar)
    zeros[key] = y_bar
    return zeros


def _basic(key: Any) -> bool:
    """Whether ``key`` is basic indexing (ints, slices, None, ...): no position twice."""
    parts = key if type(key) is tuple else (key,)
    return all(isinstance(k, int | slice) or k is None or k is Ellipsis for k in parts)


def _scatter_add(xp: Any, x: Any, key: Any, y_bar: Any) -> Any:
    """Zeros shaped like ``x`` with ``y_bar`` added at ``x[key]`` for any key ``x`` takes
    (index arrays and masks; a position picked twice gets both cotangents): the flat
    positions the key picks, ``arange(x.size).reshape(x.shape)[key]``, added into with
    the library's scatter-add (``index_add``), or NumPy's ``add.at`` through DLPack."""
    from chainrules.core import unthunk

    from ._errors import NoRuleError
    from ._tracer import Tracer

    n = math.prod(x.shape)
    flat = xp.reshape(xp.reshape(xp.arange(n, device=x.device), x.shape)[key], (-1,))
    y_bar = unthunk(y_bar)
    if type(y_bar) is Tracer:  # (a second derivative: the scatter is not traced code)
        raise NoRuleError(getitem_rrule, "rrule", (type(x), type(key)),
                          "a second derivative through indexing another library's array "
                          "with an index array or mask: use xp.take(x, indices, axis=...)")
    y_bar = xp.reshape(xp.asarray(y_bar, dtype=x.dtype, device=x.device), (-1,))
    if hasattr(x, "index_add"):  # PyTorch
        acc = xp.zeros((n,), dtype=x.dtype, device=x.device)
        return xp.reshape(acc.index_add(0, flat, y_bar), x.shape)
    acc = np.zeros(n, dtype=np.from_dlpack(y_bar).dtype)
    positions: Any = np.from_dlpack(flat)
    np.add.at(acc, positions, np.from_dlpack(y_bar))
    return xp.reshape(xp.asarray(xp.from_dlpack(acc), device=x.device), x.shape)


def getitem_rrule(x: Any, key: Any) -> Any:
    y = x[key]
    xp = array_namespace(x)
    basic = _basic(key)
    if not basic and is_graph_type(type(x)):
        from ._errors import NoRuleError

        # a dask array has no scatter-add that stays lazy
        raise NoRuleError(getitem_rrule, "rrule", (type(x), type(key)),
                          "indexing a dask array with an index array or mask: use "
                          "xp.take(x, indices, axis=...) instead")

    def getitem_pullback(y_bar: Any) -> tuple:
        from chainrules.core import NoTangent, ZeroTangent, unthunk

        y_bar = unthunk(y_bar)
        if isinstance(y_bar, ZeroTangent | NoTangent):
            return NoTangent(), ZeroTangent(), NoTangent()
        if basic or hasattr(x, "at"):  # (JAX's .at[key].add adds repeated positions)
            return NoTangent(), _scatter(xp, x, key, y_bar), NoTangent()
        return NoTangent(), _scatter_add(xp, x, key, y_bar), NoTangent()

    return y, getitem_pullback


def getitem_frule(dargs: tuple, x: Any, key: Any) -> Any:
    from chainrules.core import ZeroTangent, unthunk

    x_dot = unthunk(dargs[1])
    if isinstance(x_dot, ZeroTangent) or not hasattr(x_dot, "shape"):
        return x[key], ZeroTangent()
    return x[key], x_dot[key]


# foreign array types given the getitem rules
_indexed: set[type] = set()


def _register_getitem(t: type) -> None:
    import operator

    from chainrules.core import frule, rrule

    if t not in _indexed:
        _indexed.add(t)
        rrule.register(operator.getitem, t, object)(getitem_rrule)
        frule.register(operator.getitem, t, object)(getitem_frule)
