"""Values reached through functions: closures over traced values handed to a rule, and
plain results of code that branched on traced values (a solver's answer)."""

from __future__ import annotations

import functools
import os
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import Tangent

from ._tracer import _BRANCHES, Tracer
from ._tree import _find_tracers, _is_struct, _replace_leaves, _struct_tangent

_ndarray = np.ndarray
_FunctionType = types.FunctionType
_MethodType = types.MethodType

def _captures_tracers(primals: list) -> bool:
    """Whether a function argument of a higher-order rule closes over tracers."""
    for p in primals:
        tp = type(p)
        if tp is float or tp is int or tp is _ndarray or not callable(p):
            continue
        if _reachable_trace(_closure_values(p), None, 0) is not None:
            return True
    return False


def _captures_outer_only(primals: list, trace: Any) -> bool:
    """Whether the tracers the function arguments close over all belong to traces
    outside ``trace`` (a rule may then run on them with its code traced; a tracer of a
    trace inside ``trace`` must reach that trace first)."""
    for p in primals:
        tp = type(p)
        if tp is float or tp is int or tp is _ndarray or not callable(p):
            continue
        found = _reachable_trace(_closure_values(p), None, 0)
        if found is not None and found.level >= trace.level:
            return False
    return True


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
    if _own_code(f):
        # the AD's own transformations (a jvp inside a jvp) and the built-in rules'
        # helpers differentiate what they are handed: a value decided by comparisons
        # there is piecewise constant (the slope of abs), its derivative zero
        return run(*args, **kwargs)
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


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _own_code(f: Any) -> bool:
    """Whether ``f`` is a function of chainrules' own files (not one a user defined,
    not even in a docstring example of a chainrules module)."""
    code = getattr(getattr(f, "__func__", f), "__code__", None)
    return code is not None and code.co_filename.startswith(_PACKAGE)


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
    return trace.decided(leaf, calls, where)


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
