"""The tangent algebra: what ``+``, ``-``, ``*`` and ``/`` do when tangents meet, and
``primal + tangent``, accumulation (`iadd`) and zero tangents (`zero_tangent`).

Precedence when two tangents meet under ``+`` (Julia's order):
``NotImplementedTangent > NoTangent > ZeroTangent > Thunk > Tangent > anything``.
Importing this module installs the operations behind the tangent types' operators
(`.abstract.ops`).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from typing import Any

import numpy as np

from .._debug import state as _debug_state
from .._errors import (
    NotImplementedDerivativeError,
    PrimalAdditionError,
    TangentFieldError,
    TangentTypeMismatchError,
)
from .._xp import array_namespace, is_foreign_array
from .abstract import AbstractTangent, _any, ops
from .notimplemented import NotImplementedTangent
from .structural import (
    MutableTangent,
    Tangent,
    _is_attrs_type,
    _is_namedtuple_type,
    _object_fields,
    _slot_names,
    primal_fields,
)
from .thunks import InplaceableThunk, Thunk
from .zeros import NoTangent, ZeroTangent

__all__ = ["add", "add_to_primal", "divide", "iadd", "multiply", "negate", "subtract",
           "zero_tangent"]


def add(a: Any, b: Any) -> Any:
    """Add two tangents (or a primal and a tangent) following the tangent algebra."""
    if isinstance(a, NotImplementedTangent):
        return a
    if isinstance(b, NotImplementedTangent):
        return b
    if isinstance(a, NoTangent):
        if isinstance(b, ZeroTangent):
            return a
        if _debug_state.debug and not _is_tangent_like(b):
            raise PrimalAdditionError(b, a, "in debug mode, adding NoTangent() to a primal "
                                      "is reported because it usually means a lost derivative")
        return b
    if isinstance(b, NoTangent):
        if isinstance(a, ZeroTangent):
            return b
        if _debug_state.debug and not _is_tangent_like(a):
            raise PrimalAdditionError(a, b, "in debug mode, adding NoTangent() to a primal "
                                      "is reported because it usually means a lost derivative")
        return a
    if isinstance(a, ZeroTangent):
        return b
    if isinstance(b, ZeroTangent):
        return a
    if isinstance(a, Thunk):
        return add(a.unthunk(), b)
    if isinstance(b, Thunk):
        return add(a, b.unthunk())
    if isinstance(a, Tangent):
        if isinstance(b, Tangent):
            return _add_tangents(a, b)
        return add_to_primal(b, a)
    if isinstance(b, Tangent):
        return add_to_primal(a, b)
    return a + b


def _is_tangent_like(x: Any) -> bool:
    return isinstance(
        x, (int, float, complex, np.ndarray, np.generic, AbstractTangent)
    ) or is_foreign_array(x)


def _add_tangents(a: Tangent, b: Tangent) -> Tangent:
    if a.primal_type is not b.primal_type:
        raise TangentTypeMismatchError("add", a, b)
    x, y = a._backing, b._backing
    if isinstance(x, dict) and isinstance(y, dict):
        new: Any = dict(x)
        for k, v in y.items():
            new[k] = add(new[k], v) if k in new else v
    elif isinstance(x, tuple) and isinstance(y, tuple):
        if len(x) != len(y):
            raise TangentTypeMismatchError(f"add (lengths {len(x)} and {len(y)})", a, b)
        new = tuple(add(p, q) for p, q in zip(x, y))
    else:
        raise TangentTypeMismatchError("add", a, b)
    cls = type(a) if isinstance(a, MutableTangent) or not isinstance(b, MutableTangent) else type(b)
    return cls._from_backing(new)


def negate(a: Any) -> Any:
    if isinstance(a, NotImplementedTangent):
        raise NotImplementedDerivativeError(a, "negate")
    if isinstance(a, (ZeroTangent, NoTangent)):
        return a
    if isinstance(a, Thunk):
        return -a.unthunk()
    if isinstance(a, Tangent):
        return a._map(negate)
    return -a


def subtract(a: Any, b: Any) -> Any:
    if isinstance(a, NotImplementedTangent):
        raise NotImplementedDerivativeError(a, "subtract from")
    if isinstance(b, NotImplementedTangent):
        raise NotImplementedDerivativeError(b, "subtract")
    if isinstance(b, (ZeroTangent, NoTangent)):
        if isinstance(a, ZeroTangent) and isinstance(b, NoTangent):
            return b
        return a
    if isinstance(a, (ZeroTangent, NoTangent)):
        return negate(b)
    if isinstance(a, Thunk):
        return subtract(a.unthunk(), b)
    if isinstance(b, Thunk):
        return subtract(a, b.unthunk())
    if isinstance(a, Tangent) or isinstance(b, Tangent):
        if isinstance(a, Tangent) and isinstance(b, Tangent):
            return _add_tangents(a, b._map(negate))
        if isinstance(b, Tangent):
            # primal - tangent: a gradient-descent step, `p - lr * grad(loss)(p)`
            return add_to_primal(a, b._map(negate))
        raise TypeError(
            f"cannot subtract {type(b).__qualname__} from {type(a).__qualname__}: only "
            f"tangents of the same primal type can be subtracted"
        )
    return a - b


def multiply(a: Any, b: Any) -> Any:
    if isinstance(a, NotImplementedTangent):
        return a
    if isinstance(b, NotImplementedTangent):
        return b
    if isinstance(a, ZeroTangent) or isinstance(b, ZeroTangent):
        return ZeroTangent()
    if isinstance(a, NoTangent) or isinstance(b, NoTangent):
        return NoTangent()
    if isinstance(a, Thunk):
        return multiply(a.unthunk(), b)
    if isinstance(b, Thunk):
        return multiply(a, b.unthunk())
    if isinstance(a, Tangent):
        if isinstance(b, Tangent):
            raise TypeError(
                f"cannot multiply two structural tangents ({type(a)!r} and {type(b)!r}); "
                f"tangents are scaled by numbers"
            )
        return a._map(lambda v: multiply(v, b))
    if isinstance(b, Tangent):
        return b._map(lambda v: multiply(a, v))
    return a * b


def divide(a: Any, b: Any) -> Any:
    if isinstance(a, NotImplementedTangent):
        return a
    if isinstance(a, (ZeroTangent, NoTangent)):
        return a
    if isinstance(a, Thunk):
        return divide(a.unthunk(), b)
    if isinstance(a, Tangent):
        return a._map(lambda v: divide(v, b))
    return a / b


def add_to_primal(x: Any, t: Tangent) -> Any:
    """Build the primal ``x`` moved by the structural tangent ``t`` (``x + t``)."""
    P = t.primal_type
    if P is not None and not isinstance(x, P):
        raise PrimalAdditionError(
            x, t, f"the tangent describes a {P.__qualname__}, not a {type(x).__qualname__}"
        )
    b = t._backing
    if (isinstance(x, tuple) and not hasattr(type(x), "_fields")) or type(x) is list:
        if not isinstance(b, tuple) or len(b) != len(x):
            raise PrimalAdditionError(x, t, f"it has {len(x)} items but the tangent has "
                                      f"{len(b)}")
        return type(x)(add(xi, ti) for xi, ti in zip(x, b))
    if isinstance(x, dict):
        missing = [k for k in b if k not in x]
        if missing:
            raise PrimalAdditionError(x, t, f"the tangent has keys {missing!r} the dict lacks")
        new = dict(x)
        for k, v in b.items():
            new[k] = add(x[k], v)
        return new if type(x) is dict else type(x)(new)
    if not isinstance(b, dict):
        raise PrimalAdditionError(x, t, "the tangent has items, but the primal has fields")
    updates = {}
    for k, v in b.items():
        try:
            old = getattr(x, k)
        except AttributeError:
            known = primal_fields(type(x)) or tuple(getattr(x, "__dict__", ()))
            raise TangentFieldError(type(x), k, tuple(known)) from None
        updates[k] = add(old, v)
    cls = type(x)
    if _is_namedtuple_type(cls):
        return _any(x)._replace(**updates)
    if dataclasses.is_dataclass(x):
        init = {f.name for f in dataclasses.fields(x) if f.init}
        new = dataclasses.replace(_any(x), **{k: v for k, v in updates.items() if k in init})
        for k, v in updates.items():
            if k not in init:
                object.__setattr__(new, k, v)
        return new
    if _is_attrs_type(cls):
        import attrs

        init_names = {a.name: (a.alias or a.name.lstrip("_")) for a in _any(cls).__attrs_attrs__
                      if a.init}
        new = attrs.evolve(x, **{init_names[k]: v for k, v in updates.items()
                                 if k in init_names})
        for k, v in updates.items():
            if k not in init_names:
                object.__setattr__(new, k, v)
        return new
    return _rebuild_plain(x, t, updates)


def _rebuild_plain(x: Any, t: Tangent, updates: dict) -> Any:
    cls = type(x)
    state = getattr(x, "__dict__", None)
    slots = _slot_names(cls) if state is None else None
    # First choice: the constructor, when it takes exactly the fields as keywords.
    fields = tuple(state) if state is not None else slots
    if fields:
        try:
            params = inspect.signature(cls).parameters
        except (TypeError, ValueError):
            params = None
        if params is not None and set(params) == set(fields) and all(
            p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params.values()
        ):
            values = {k: updates.get(k, getattr(x, k)) for k in fields}
            return cls(**values)
    # Otherwise copy the state without calling __init__.
    try:
        new = object.__new__(cls)
    except TypeError as e:
        # a built-in base (types.SimpleNamespace, ...): copy it as the copy module does
        try:
            new = copy.copy(x)
            for k, v in updates.items():
                object.__setattr__(new, k, v)
        except Exception:
            raise PrimalAdditionError(x, t, f"{cls.__name__} cannot be created with "
                                      f"object.__new__ ({e})") from None
        return new
    if state is not None:
        new.__dict__.update(state)
        new.__dict__.update(updates)
        return new
    if slots is not None:
        for s in slots:
            if s in updates:
                object.__setattr__(new, s, updates[s])
            elif hasattr(x, s):
                object.__setattr__(new, s, getattr(x, s))
        return new
    raise PrimalAdditionError(x, t, "it has neither a __dict__ nor __slots__ to copy")


def zero_tangent(x: Any) -> Any:
    """A structural zero tangent for the primal ``x``, usable for accumulation.

    Floats give ``0.0`` (a Python ``int`` too, since ints differentiate like floats),
    complex gives ``0j``, float/complex arrays give zeros of the same shape and dtype,
    bools, strings, ``None`` and integer arrays give ``NoTangent()``; tuples, lists,
    dicts and objects give a ``Tangent`` of zeros (a ``MutableTangent`` for mutable
    objects with a ``__dict__``).

    Examples:
        >>> import numpy as np
        >>> from chainrules import zero_tangent
        >>> zero_tangent(np.ones(2, dtype=np.float32))
        array([0., 0.], dtype=float32)
        >>> zero_tangent((1.0, "a"))
        Tangent[tuple](0.0, NoTangent())
    """
    if isinstance(x, (bool, np.bool_, str, bytes)) or x is None:
        return NoTangent()
    if isinstance(x, (float, int)):
        return 0.0
    if isinstance(x, complex):
        return 0j
    if isinstance(x, np.generic):
        return x.dtype.type(0) if x.dtype.kind in "fc" else NoTangent()
    if isinstance(x, np.ndarray):
        return np.zeros_like(x) if x.dtype.kind in "fc" else NoTangent()
    if is_foreign_array(x):
        xp = array_namespace(x)
        if xp.isdtype(x.dtype, ("real floating", "complex floating")):
            return xp.zeros_like(x)
        return NoTangent()
    if isinstance(x, Tangent):
        return x._map(zero_tangent)
    if (isinstance(x, tuple) and not _is_namedtuple_type(type(x))) or isinstance(x, list):
        return Tangent[type(x)](*(zero_tangent(i) for i in x))
    if isinstance(x, dict):
        return Tangent[type(x)]({k: zero_tangent(v) for k, v in x.items()})
    if callable(x) and not hasattr(x, "__dict__"):
        return NoTangent()
    try:
        fields = _object_fields(x)
    except TypeError:
        return NoTangent()
    cls = type(x)
    mutable = (
        hasattr(x, "__dict__")
        and not _is_namedtuple_type(cls)
        and not (dataclasses.is_dataclass(x) and _any(cls).__dataclass_params__.frozen)
    )
    kind = MutableTangent if mutable else Tangent
    return kind[cls](**{k: zero_tangent(v) for k, v in fields.items()})


def iadd(acc: Any, dx: Any) -> Any:
    """Accumulate ``dx`` into ``acc``: in place when that is safe, else ``acc + dx``.

    In place when ``acc`` is a writable float or complex array and ``dx`` is an
    `InplaceableThunk` or an array of the same shape whose dtype ``acc`` can
    hold; into a `MutableTangent` field-wise. Callers must own ``acc``.
    Always use the return value.

    Examples:
        >>> import numpy as np
        >>> from chainrules import ZeroTangent, iadd
        >>> acc = np.zeros(2)
        >>> iadd(acc, np.ones(2)) is acc
        True
        >>> iadd(ZeroTangent(), 2.0)
        2.0
    """
    if isinstance(acc, np.ndarray) and acc.dtype.kind in "fc" and acc.flags.writeable:
        if isinstance(dx, InplaceableThunk):
            return dx.add_fn(acc)
        if isinstance(dx, Thunk):
            dx = dx.unthunk()
        if (
            isinstance(dx, np.ndarray)
            and dx.shape == acc.shape
            and np.can_cast(dx.dtype, acc.dtype, casting="same_kind")
            and (acc.dtype.kind == "c" or dx.dtype.kind != "c")
            and not np.shares_memory(acc, dx)
        ):
            np.add(acc, dx, out=acc)
            return acc
        return add(acc, dx)
    if isinstance(acc, MutableTangent) and isinstance(dx, Tangent) and isinstance(
        acc._backing, dict
    ):
        if acc.primal_type is not dx.primal_type:
            raise TangentTypeMismatchError("accumulate", acc, dx)
        for k, v in dx.items():
            b = acc._backing
            b[k] = iadd(b[k], v) if k in b else v
        return acc
    return add(acc, dx)


ops.add = add
ops.subtract = subtract
ops.multiply = multiply
ops.divide = divide
ops.negate = negate
