"""Tree walking: the structures (tuples, lists, dicts, namedtuples, dataclasses, records)
around traced values -- finding the tracers inside arguments, the differentiable leaves
of outputs, and rebuilding tangents and cotangents in the same structure."""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import types
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from chainrules.core import (
    AbstractTangent,
    NoTangent,
    NotImplementedTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    is_foreign_array,
    unthunk,
)

from ._arraylib import cotangent_like, foreign_namespace
from ._errors import InputTypeError
from ._tracer import Tracer, _boxable, deep_primal

_ndarray = np.ndarray
_NO = NoTangent()


def _any(x: Any) -> Any:
    """``x`` typed as ``Any`` (namedtuple ``_fields`` and the like)."""
    return x

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

def _deep_struct_primal(x: Any) -> Any:
    while type(x) is Tracer:
        x = x.primal
    return x

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

_NUMBER_TYPES = (float, complex, int, np.floating, np.complexfloating)
_BOOL_TYPES = (bool, np.bool_)


def _is_leaf_differentiable(x: Any) -> bool:
    t = type(x)
    if t is float or t is complex:
        return True
    if t is np.ndarray:
        return x.dtype.kind in "fc"
    if t is Tracer:
        x = deep_primal(x)
    if isinstance(x, _BOOL_TYPES):
        return False
    if isinstance(x, _NUMBER_TYPES):
        return True
    if is_foreign_array(x):  # an array-API array (array_api_strict, ...): rules see it as is
        xp = foreign_namespace(x)
        return bool(xp.isdtype(x.dtype, ("real floating", "complex floating")))
    if type(x).__module__.startswith("scipy.sparse") and hasattr(x, "tocoo"):
        # a SciPy sparse matrix: its rules (A @ v, the constructors) keep the pattern
        return getattr(x, "dtype", np.dtype(object)).kind in "fc"
    return isinstance(x, np.ndarray) and x.dtype.kind in "fc"


# Structures the transformations look inside (their inputs and outputs): tuples, lists,
# namedtuples, dicts (and dict subclasses such as OrderedDict and defaultdict), and
# records: dataclasses, attrs classes and SimpleNamespaces.

_STRUCTURES = ("floats, complex numbers, float arrays, or tuples, lists, dicts, namedtuples, "
               "dataclasses, attrs classes or SimpleNamespaces of them")


def _record_fields(x: Any) -> tuple[str, ...] | None:
    """The field names of a record (dataclass, attrs or SimpleNamespace instance), or None."""
    if isinstance(x, type):
        return None
    if dataclasses.is_dataclass(x):
        return tuple(f.name for f in dataclasses.fields(x))
    t = type(x)
    if t is types.SimpleNamespace:
        return tuple(vars(x))
    fields = getattr(t, "__attrs_attrs__", None)
    if fields is not None:
        return tuple(a.name for a in fields)
    return None


def _rebuild_record(x: Any, changes: dict) -> Any:
    """A copy of record ``x`` with some fields replaced (its ``__init__`` is not called)."""
    if type(x) is types.SimpleNamespace:
        return types.SimpleNamespace(**{**vars(x), **changes})
    return _rebuild_dataclass(x, changes)


def _rebuild_mapping(x: dict, items: dict) -> dict:
    """``items`` in the type of dict ``x`` (a subclass keeps its settings: a defaultdict's
    factory, an OrderedDict's order)."""
    if type(x) is dict:
        return items
    new = copy.copy(x)
    for k, v in items.items():
        new[k] = v
    return new


def _map_leaves(x: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to every leaf of a structure, rebuilding the structure."""
    t = type(x)
    if t is tuple or t is list:
        return t(_map_leaves(v, fn) for v in x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t(*[_map_leaves(v, fn) for v in x])
    if t is dict:
        return {k: _map_leaves(v, fn) for k, v in _any(x).items()}
    if isinstance(x, dict):
        return _rebuild_mapping(x, {k: _map_leaves(v, fn) for k, v in x.items()})
    fields = _record_fields(x)
    if fields is not None:
        return _rebuild_record(x, {k: _map_leaves(getattr(x, k), fn) for k in fields})
    return fn(x)


def _rebuild_dataclass(x: Any, changes: dict) -> Any:
    y = object.__new__(type(x))
    if hasattr(x, "__dict__"):
        y.__dict__.update(x.__dict__)
    for k, v in changes.items():
        object.__setattr__(y, k, v)
    return y


# Leaves a differentiated argument may hold that have no tangent (their gradient is
# NoTangent): anything else that is not a number or an array is refused, since the AD
# cannot see inside it and would silently lose the derivatives of what it holds.
_CONSTANT_LEAVES = (type(None), str, bytes, bool, np.bool_, range, slice, type(Ellipsis),
                    type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                    types.MethodType, functools.partial, np.ufunc, np.dtype, enum.Enum,
                    np.random.Generator, np.random.RandomState, np.random.BitGenerator,
                    np.ndarray)


def _box_inputs(trace: Any, x: Any, leaves: list) -> Any:
    tx = type(x)
    if tx is float or (tx is np.ndarray and x.dtype.kind in "fc"):
        t = trace.new_input(x)
        leaves.append((x, t.aux))
        return t

    def box(v: Any) -> Any:
        if not _is_leaf_differentiable(v):
            leaves.append((v, None))
            return v
        if type(v) is not Tracer and (type(v) is int or isinstance(v, np.integer)):
            v = float(v)
        t = trace.new_input(v)
        leaves.append((v, t.aux))
        return t

    return _map_leaves(x, box)


def _tangent_structure(x: Any, leaf_grads: list) -> Any:
    """Rebuild gradients in the structure of input ``x`` (consumes ``leaf_grads``)."""
    tx = type(x)
    if len(leaf_grads) == 1 and (tx is float or tx is np.ndarray or tx is complex):
        return leaf_grads[0]
    it = iter(leaf_grads)

    def build(v: Any) -> Any:
        t = type(v)
        if t is tuple or t is list:
            return t(build(u) for u in v)
        if isinstance(v, tuple) and hasattr(v, "_fields"):
            return Tangent[t](**{f: build(u) for f, u in zip(_any(v)._fields, v)})
        if t is dict:
            return {k: build(u) for k, u in _any(v).items()}
        if isinstance(v, dict):
            return _rebuild_mapping(v, {k: build(u) for k, u in v.items()})
        fields = _record_fields(v)
        if fields is not None:
            return Tangent[t](**{k: build(getattr(v, k)) for k in fields})
        return next(it)

    return build(x)

def _walk_paths(x: Any, path: str, fn: Callable[[Any, str], Any]) -> None:
    t = type(x)
    if t is tuple or t is list:
        for k, v in enumerate(x):
            _walk_paths(v, f"{path}[{k}]", fn)
    elif isinstance(x, tuple) and hasattr(x, "_fields"):
        for k, v in zip(_any(x)._fields, x):
            _walk_paths(v, f"{path}.{k}", fn)
    elif isinstance(x, dict):
        for k, v in x.items():
            _walk_paths(v, f"{path}[{k!r}]", fn)
    elif (fields := _record_fields(x)) is not None:
        for k in fields:
            _walk_paths(getattr(x, k), f"{path}.{k}", fn)
    else:
        fn(x, path)

def _output_cotangent_leaves(y: Any, y_bar: Any) -> list:
    """Flatten an output cotangent in the structure of the output ``y``."""
    ty = type(y)
    if ty is float or ty is _ndarray:  # one leaf, as `walk` below would find it
        return [unthunk(y_bar) if isinstance(y_bar, Thunk) else y_bar]
    out: list = []

    def walk(v: Any, b: Any) -> None:
        t = type(v)
        if isinstance(b, Thunk):
            b = unthunk(b)
        if t is tuple or t is list or (isinstance(v, tuple) and hasattr(v, "_fields")):
            items = _items(b, len(v))
            for u, c in zip(v, items):
                walk(u, c)
        elif isinstance(v, dict):
            for k, u in v.items():
                walk(u, _ZERO if isinstance(b, ZeroTangent) else (
                    b[k] if isinstance(b, Tangent | dict) else _ZERO))
        elif (fields := _record_fields(v)) is not None:
            for k in fields:
                walk(getattr(v, k), getattr(b, k) if isinstance(b, Tangent) else _ZERO)
        else:
            out.append(cotangent_like(v, b))

    walk(y, y_bar)
    return out


_ZERO = ZeroTangent()


def _items(b: Any, n: int) -> list:
    if isinstance(b, AbstractTangent) and not isinstance(b, Tangent):
        return [b] * n
    if isinstance(b, Tangent):
        return [b[i] for i in range(n)]
    if len(b) != n:
        raise InputTypeError("the output cotangent", f"a sequence of {n} entries",
                             f"{len(b)} entries", "give one cotangent per output entry")
    return list(b)
