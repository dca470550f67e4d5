"""NumPy's writing functions in traced code: ``out=`` of ufuncs and functions,
``ufunc.at`` (``np.add.at``, ``np.subtract.at``, ``np.multiply.at``), ``np.copyto``,
``np.put``, ``np.place``, ``np.putmask``, ``np.put_along_axis``, ``np.fill_diagonal``,
and the statements that rebind the plain array they write (``y += v``,
``acc = call.mutating(0, np.add.at, acc, i, v)``).

Each computes the written values with traced operations, out of place, then writes
them with ``_inplace`` (whose docstring states the design and the aliasing rules).
"""

from __future__ import annotations

import dis
import sys
from typing import Any

import numpy as np

from . import _tracer
from ._dispatch import call
from ._errors import MutationError, NoRuleError
from ._inplace import (
    _check_unaliased,
    _plain_key,
    _scatter_multiply,
    _traced,
    index_set,
    scatter_add,
    write,
)
from ._tracer import AD_DIR, Tracer, deep_primal

__all__ = ["inplace_function", "mutating", "out_call", "ufunc_write"]

_ndarray = np.ndarray


_INPLACE_OPS = frozenset(
    {"INPLACE_ADD", "INPLACE_SUBTRACT", "INPLACE_MULTIPLY", "INPLACE_TRUE_DIVIDE",
     "INPLACE_POWER", "INPLACE_MATRIX_MULTIPLY"})


def rebinding_caller(depth: int) -> bool:
    """Whether the user code ``depth`` frames up is an augmented assignment (``y += v``),
    whose result Python binds back to the name."""
    f = sys._getframe(depth + 1)
    while f is not None and f.f_code.co_filename.startswith(AD_DIR):
        f = f.f_back
    if f is None:
        return False
    code = f.f_code.co_code
    i = f.f_lasti
    try:
        op = dis.opname[code[i]]
    except IndexError:
        return False
    if op == "BINARY_OP":
        return code[i + 1] >= 13  # NB_INPLACE_* (Python 3.11+)
    return op in _INPLACE_OPS


# ---------------------------------------------------------------------------------------
# out=, ufunc.at and the NumPy functions that write into an argument

# The plain array a rewritten statement may rebind (``acc = call.mutating(...)``), and the
# traced array that now stands for it: [id of the plain array, the array, its tracer].
_REBIND: list = [None, None, None]


def _into(target: Any, key: Any, value: Any, what: str) -> Any:
    """Write ``value`` into ``target[key]``: a traced target in place, a plain one when the
    statement rebinds it; the object that now holds the result."""
    if type(target) is Tracer:
        write(target, key, value, what)
        return target
    if type(target) is _ndarray:
        if _REBIND[0] == id(target) and _REBIND[1] is target:
            new = _REBIND[2] if _REBIND[2] is not None else target
            if type(new) is Tracer:
                write(new, key, value, what)
                return new
            if _traced(value):
                _check_unaliased(target, what)
                new = call(index_set, target, _plain_key(key), value)
                _REBIND[2] = new
                return new
        if not _traced(value):
            target[key] = deep_primal(value)
            return target
        raise MutationError(f"{what} with traced values into a plain array",
                            "the AD can make a plain array traced only where the "
                            "statement names it (`np.add.at(acc, i, v)`, `y += v`, "
                            "`y[i] = v`, `f(..., out=y)`, y a local variable)")
    raise MutationError(f"{what} into a {type(target).__name__}",
                        "only NumPy arrays and traced arrays can be written")


def mutating(target_pos: Any, f: Any, /, *args: Any, **kwargs: Any) -> Any:
    """A statement ``f(...)`` that writes into its argument at ``target_pos`` (an index, or
    "out"): run it through the dispatch point; the object the statement's variable must
    now be bound to."""
    target = kwargs.get("out") if target_pos == "out" else (
        args[target_pos] if len(args) > target_pos else None)
    if type(target) is tuple and len(target) == 1:
        target = target[0]
    if type(target) is not _ndarray:
        call(f, *args, **kwargs)
        return target if target_pos != "out" else kwargs.get("out")
    saved = _REBIND[:]
    _REBIND[:] = [id(target), target, None]
    try:
        call(f, *args, **kwargs)
        new = _REBIND[2]
    finally:
        _REBIND[:] = saved
    return target if new is None else new


def ufunc_write(ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """``ufunc(..., out=o)`` and ``ufunc.at(a, i, v)`` on traced values: the value computed
    out of place, then written into ``o`` / ``a``."""
    name = f"numpy.{ufunc.__name__}"
    if method == "at":
        a, key = inputs[0], _plain_key(inputs[1])
        v: Any = inputs[2] if len(inputs) > 2 else None
        what = f"{name}.at(a, ...)"
        if ufunc is np.add or ufunc is np.subtract:
            v = v if ufunc is np.add else -v
            # (one call on a whole index array: the O(size) copy is the call's own cost)
            _into(a, Ellipsis, call(scatter_add, a, key, v), what)
            return None
        if ufunc is np.multiply:
            _into(a, Ellipsis, _scatter_multiply(a, key, v), what)
            return None
        raise NoRuleError(ufunc.at, "rule", tuple(type(deep_primal(x)) for x in inputs),
                          f"{name}.at: only numpy.add.at, numpy.subtract.at and "
                          f"numpy.multiply.at are differentiated in place")
    out = kwargs.pop("out")
    outs = out if type(out) is tuple else (out,)
    if method != "__call__" or len(outs) != 1:
        raise MutationError(f"{name}.{method}(..., out=...)" if method != "__call__"
                            else f"{name}(..., out=(several arrays))",
                            "only one output of a ufunc call can be written in place")
    value = getattr(ufunc, method)(*inputs, **kwargs) if method != "__call__" \
        else ufunc(*inputs, **kwargs)
    target = outs[0]
    if type(target) is _ndarray and _REBIND[1] is not target and rebinding_caller(2):
        # `y += v` on a plain y: Python binds the result back to the name
        saved = _REBIND[:]
        _REBIND[:] = [id(target), target, None]
        try:
            return _into(target, Ellipsis, value, f"`y {_SYMBOL.get(ufunc, '?=')} ...`")
        finally:
            _REBIND[:] = saved
    return _into(target, Ellipsis, value, f"{name}(..., out=x)")


_SYMBOL = {np.add: "+=", np.subtract: "-=", np.multiply: "*=", np.true_divide: "/=",
           np.power: "**=", np.matmul: "@="}


def out_call(f: Any, args: tuple, kwargs: dict) -> Any:
    """``f(..., out=o)`` for a NumPy function on traced values: computed out of place,
    then written into ``o``."""
    out = kwargs.pop("out")
    value = call(f, *args, **kwargs)
    target = out[0] if type(out) is tuple and len(out) == 1 else out
    return _into(target, Ellipsis, value, f"{_fname(f)}(..., out=x)")


def _fname(f: Any) -> str:
    return f"numpy.{getattr(f, '__name__', f)}"


def _cycled(values: Any, n: int) -> Any:
    """``values`` flattened and repeated to ``n`` items (NumPy's put/place semantics)."""
    flat = np.reshape(values, -1)
    size = np.size(deep_primal(flat))
    if size == n:
        return flat
    if size == 0:
        raise ValueError("cannot write from an empty array of values")
    return flat[np.arange(n) % size]


def inplace_function(f: Any, args: tuple, kwargs: dict) -> Any:
    """``np.copyto`` / ``np.put`` / ``np.place`` / ``np.putmask`` / ``np.put_along_axis`` /
    ``np.fill_diagonal`` with traced values: the written values computed with traced
    operations, then written into the first argument."""
    name = f.__name__
    bound = _bind(f, args, kwargs)
    a = bound.pop("a" if "a" in bound else "arr" if "arr" in bound else "dst")
    shape = np.shape(deep_primal(a))
    what = f"numpy.{name}(x, ...)"
    if name == "copyto":
        src, where = bound["src"], bound.get("where", True)
        if where is True:
            value = src * np.ones(shape) if np.shape(deep_primal(src)) != shape else src
        else:
            value = np.where(where, src, a)
        _into(a, Ellipsis, value, what)
    elif name in ("put", "place", "putmask"):
        if name == "put":
            ind = np.asarray(_plain_key(bound["ind"])).reshape(-1)
            mode = bound.get("mode", "raise")
            size = int(np.prod(shape))
            if mode == "wrap":
                ind = ind % size
            elif mode == "clip":
                ind = np.clip(ind, 0, size - 1)
            else:
                ind = np.where(ind < 0, ind + size, ind)
            value = _cycled(bound["v"], ind.size)
            key: Any = np.unravel_index(ind, shape)
        elif name == "place":
            mask = np.asarray(_plain_key(bound["mask"]), dtype=bool)
            key = np.nonzero(mask)
            value = _cycled(bound["vals"], int(mask.sum()))
        else:
            mask = np.broadcast_to(np.asarray(_plain_key(bound["mask"]), dtype=bool), shape)
            flat = np.flatnonzero(mask)
            vals = np.reshape(bound["values"], -1)
            value = vals[flat % np.size(deep_primal(vals))]
            key = np.unravel_index(flat, shape)
        _into(a, key, value, what)
    elif name == "put_along_axis":
        indices = np.asarray(_plain_key(bound["indices"]))
        axis = bound["axis"]
        if axis is None:
            raise MutationError(f"{what} with axis=None", "pass an axis")
        axis = axis % len(shape)
        grids = np.ogrid[tuple(slice(n) for n in indices.shape)]
        key = tuple(indices if d == axis else grids[d] for d in range(len(shape)))
        _into(a, key, bound["values"], what)
    elif name == "fill_diagonal":
        wrap = bound.get("wrap", False)
        if len(shape) == 2:
            step = shape[1] + 1
            end = None if wrap else shape[1] * shape[1]
        else:
            step = 1 + int(np.cumprod(shape[:-1]).sum())
            end = None
        ind = np.arange(int(np.prod(shape)))[:end:step]
        value = _cycled(bound["val"], ind.size)
        _into(a, np.unravel_index(ind, shape), value, what)
    else:  # pragma: no cover (every name of _tracer._INPLACE_FUNCS is handled)
        raise MutationError(what)
    return None


def _bind(f: Any, args: tuple, kwargs: dict) -> dict:
    import inspect

    sig = inspect.signature(f)
    b = sig.bind(*args, **kwargs)
    return dict(b.arguments)


_tracer.WRITE[1] = ufunc_write  # Tracer.__array_ufunc__ with out= or method "at"
