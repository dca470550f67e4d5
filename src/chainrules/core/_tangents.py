"""Tangent types and their algebra.

Natural tangents need no wrapper (``float`` for ``float``, a same-shape array for an
array). The types here cover the rest: hard zeros, "cannot be perturbed", structural
tangents of objects, deferred computations, and derivatives not written yet.

Precedence when two tangents meet under ``+`` (Julia's order):
``NotImplementedTangent > NoTangent > ZeroTangent > Thunk > Tangent > anything``.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np

from ._debug import state as _debug_state
from ._errors import (
    NotImplementedDerivativeError,
    PrimalAdditionError,
    TangentFieldError,
    TangentTypeMismatchError,
)
from ._xp import array_namespace, is_foreign_array


def _any(x: Any) -> Any:
    """``x`` typed as ``Any``: for attributes the type checker cannot see (namedtuple
    ``_fields``, dataclass and attrs metadata, methods of the tangent subclasses)."""
    return x


__all__ = [
    "AbstractTangent",
    "InplaceableThunk",
    "MutableTangent",
    "NoTangent",
    "NotImplementedTangent",
    "Tangent",
    "Thunk",
    "ZeroTangent",
    "backing",
    "canonicalize",
    "iadd",
    "unthunk",
    "zero_tangent",
]


class AbstractTangent:
    """Base class of the tangent types that are not natural (not a float, complex or array)."""

    __slots__ = ()

    def __add__(self, other: Any) -> Any:
        return add(self, other)

    def __radd__(self, other: Any) -> Any:
        return add(other, self)

    def __sub__(self, other: Any) -> Any:
        return subtract(self, other)

    def __rsub__(self, other: Any) -> Any:
        return subtract(other, self)

    def __mul__(self, other: Any) -> Any:
        return multiply(self, other)

    def __rmul__(self, other: Any) -> Any:
        return multiply(other, self)

    def __truediv__(self, other: Any) -> Any:
        return divide(self, other)

    def __neg__(self) -> Any:
        return negate(self)

    def __pos__(self) -> Any:
        return self


# ---------------------------------------------------------------------------------------
# The zero-like singletons


# Attribute names a zero does not answer as fields (see _Singleton.__getattr__).
_NOT_FIELDS = frozenset({
    "shape", "dtype", "ndim", "size", "flags", "T", "mT", "H", "data", "nbytes",
    "itemsize", "strides", "base", "ctypes", "device", "format", "nnz",
    "backing", "primal_type", "unthunk", "add_fn", "evaluated", "info", "where",
})


class _Singleton(AbstractTangent):
    __slots__ = ()
    _instance: ClassVar[Any] = None

    def __new__(cls) -> Any:
        inst = cls.__dict__.get("_instance")
        if inst is None:
            inst = super().__new__(cls)
            cls._instance = inst
        return inst

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __reduce__(self) -> Any:
        return (type(self), ())

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def conj(self) -> Any:
        return self

    @property
    def real(self) -> Any:
        return self

    @property
    def imag(self) -> Any:
        return self

    def __getitem__(self, key: Any) -> Any:
        # Every item of a zero is zero, so structural rules need no special case.
        return self

    def __getattr__(self, name: str) -> Any:
        # Every field of a zero is zero: `foo_dot.A @ B` works when foo_dot is
        # ZeroTangent(). Private names, dunders and array attributes are not fields, so
        # `getattr(t, "shape", None)` still means "t is not an array".
        if name.startswith("_") or name in _NOT_FIELDS:
            raise AttributeError(f"{type(self).__name__}() has no attribute {name!r}")
        return self

    def __matmul__(self, other: Any) -> Any:
        return multiply(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return multiply(other, self)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        # Lets `array + ZeroTangent()` and `np.multiply(g, ZeroTangent())` follow the
        # tangent algebra instead of building object arrays.
        if method != "__call__" or kwargs.get("out") is not None:
            return NotImplemented
        if ufunc is np.add and len(inputs) == 2:
            return add(*inputs)
        if ufunc is np.subtract and len(inputs) == 2:
            return subtract(*inputs)
        if ufunc in (np.multiply, np.matmul) and len(inputs) == 2:
            return multiply(*inputs)
        if ufunc in (np.negative, np.positive, np.conjugate) and len(inputs) == 1:
            return self
        if ufunc is np.true_divide and len(inputs) == 2 and inputs[0] is self:
            return self
        return NotImplemented


class ZeroTangent(_Singleton):
    """A hard zero tangent: the additive identity, which lets ADs skip work.

    ``ZeroTangent() + x is x`` and ``ZeroTangent() * x == ZeroTangent()``; it combines
    with NumPy arrays in either operand order.

    Examples:
        >>> import numpy as np
        >>> from chainrules import ZeroTangent
        >>> ZeroTangent() + 2.5
        2.5
        >>> 3.0 * ZeroTangent()
        ZeroTangent()
        >>> np.ones(2) - ZeroTangent()
        array([1., 1.])
    """

    __slots__ = ()


class NoTangent(_Singleton):
    """The tangent of something that cannot be perturbed: an index, a bool, a string, a size.

    Under ``+`` it acts as a zero (``NoTangent() + x is x``) and it wins against
    ``ZeroTangent()``. Rules return it for arguments that have no derivative, and
    as ``self_bar`` for plain functions.

    Examples:
        >>> from chainrules import NoTangent, ZeroTangent
        >>> NoTangent() + ZeroTangent()
        NoTangent()
        >>> NoTangent() + 1.5
        1.5
    """

    __slots__ = ()


class NotImplementedTangent(AbstractTangent):
    """A derivative that exists mathematically but has not been written yet.

    Made by `chainrules.not_implemented`. Adding or multiplying it propagates
    it (the result is also unknown); negating or subtracting it raises, because a
    test comparing against it would otherwise pass by accident. Testers report it
    as an expected failure.

    Attributes:
        info: why it is missing.
        where: ``file:line`` where it was created.

    Examples:
        >>> from chainrules import not_implemented
        >>> t = not_implemented("derivative w.r.t. the order nu")
        >>> (t + 1.0) is t
        True
    """

    __slots__ = ("info", "where")
    __array_ufunc__ = None

    def __init__(self, info: str = "", where: str = "") -> None:
        self.info = info
        self.where = where

    def __repr__(self) -> str:
        return f"NotImplementedTangent({self.info!r})"

    def conj(self) -> Any:
        raise NotImplementedDerivativeError(self, "conjugate")

    @property
    def real(self) -> Any:
        raise NotImplementedDerivativeError(self, "take the real part of")

    @property
    def imag(self) -> Any:
        raise NotImplementedDerivativeError(self, "take the imaginary part of")


# ---------------------------------------------------------------------------------------
# Thunks


class Thunk(AbstractTangent):
    """A deferred tangent: ``fn()`` is called the first time the value is needed.

    Pullbacks returning several cotangents wrap each costly one in a ``Thunk`` so an
    AD that needs only some of them never computes the others. A thunk behaves like
    its value under arithmetic, indexing, attribute access and NumPy functions
    (``np.asarray(thunk)`` evaluates it). The value is computed at most once.

    Args:
        fn: a function of no arguments computing the tangent.

    Examples:
        >>> import numpy as np
        >>> from chainrules import Thunk, unthunk
        >>> t = Thunk(lambda: np.arange(3.0))
        >>> t.evaluated
        False
        >>> (t * 2)[1]
        np.float64(2.0)
        >>> unthunk(t)
        array([0., 1., 2.])
    """

    __slots__ = ("_fn", "_value", "evaluated")

    def __init__(self, fn: Callable[[], Any]) -> None:
        if not callable(fn):
            raise TypeError(
                f"Thunk expects a function of no arguments computing the tangent, got "
                f"{type(fn).__qualname__}; write Thunk(lambda: <expression>)."
            )
        self._fn = fn
        self._value: Any = None
        self.evaluated = False

    def unthunk(self) -> Any:
        """Compute (once) and return the value."""
        if not self.evaluated:
            self._value = _any(self._fn)()
            self.evaluated = True
            self._fn = None  # free what the closure captured
        return self._value

    def __repr__(self) -> str:
        if self.evaluated:
            return f"Thunk(<evaluated: {type(self._value).__qualname__}>)"
        return f"Thunk({getattr(self._fn, '__qualname__', self._fn)!r})"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.unthunk(), name)

    def __getitem__(self, key: Any) -> Any:
        return self.unthunk()[key]

    def __len__(self) -> int:
        return len(self.unthunk())

    def __iter__(self) -> Iterator[Any]:
        return iter(self.unthunk())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = np.asarray(self.unthunk(), dtype=dtype)
        return value.copy() if copy else value

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        inputs = tuple(unthunk(i) for i in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return func(*_unthunk_nested(args), **_unthunk_nested(kwargs))

    def __float__(self) -> float:
        return float(self.unthunk())

    def __complex__(self) -> complex:
        return complex(self.unthunk())

    def conj(self) -> Any:
        return _conj(self.unthunk())

    @property
    def real(self) -> Any:
        return _real(self.unthunk())

    @property
    def imag(self) -> Any:
        return _imag(self.unthunk())

    def __matmul__(self, other: Any) -> Any:
        return self.unthunk() @ unthunk(other)

    def __rmatmul__(self, other: Any) -> Any:
        return unthunk(other) @ self.unthunk()

    def __rtruediv__(self, other: Any) -> Any:
        return unthunk(other) / self.unthunk()

    def __pow__(self, other: Any) -> Any:
        return self.unthunk() ** unthunk(other)

    def __eq__(self, other: object) -> Any:
        return self.unthunk() == unthunk(other)

    __hash__ = None  # type: ignore[assignment]


class InplaceableThunk(Thunk):
    """A thunk that can also add its value into an accumulator in place.

    ``iadd(acc, t)`` calls ``add_fn(acc)``, which must add the tangent into ``acc``
    (a writable array) and return it, saving the temporary that ``acc + unthunk(t)``
    would allocate. Everywhere else it behaves like ``thunk``.

    Args:
        add_fn: ``acc -> acc`` adding the tangent into ``acc`` in place.
        thunk: a `Thunk` (or a function of no arguments) computing the tangent.

    Examples:
        >>> import numpy as np
        >>> from chainrules import InplaceableThunk, Thunk, iadd
        >>> x = np.array([1.0, 2.0])
        >>> def add_into(acc):
        ...     acc += 2 * x
        ...     return acc
        >>> t = InplaceableThunk(add_into, Thunk(lambda: 2 * x))
        >>> acc = np.zeros(2)
        >>> iadd(acc, t) is acc
        True
        >>> acc
        array([2., 4.])
    """

    __slots__ = ("add_fn",)

    def __init__(self, add_fn: Callable[[Any], Any], thunk: Thunk | Callable[[], Any]) -> None:
        if not callable(add_fn):
            raise TypeError(
                f"InplaceableThunk expects add_fn: acc -> acc as its first argument, got "
                f"{type(add_fn).__qualname__}."
            )
        fn = thunk.unthunk if isinstance(thunk, Thunk) else thunk
        super().__init__(fn)
        self.add_fn = add_fn

    def __repr__(self) -> str:
        return f"InplaceableThunk({getattr(self.add_fn, '__qualname__', self.add_fn)!r})"


def unthunk(x: Any) -> Any:
    """Evaluate a thunk (one layer); anything else is returned unchanged.

    Examples:
        >>> from chainrules import Thunk, unthunk
        >>> unthunk(Thunk(lambda: 3.0)), unthunk(4.0)
        (3.0, 4.0)
    """
    if isinstance(x, Thunk):
        return x.unthunk()
    return x


def _unthunk_nested(x: Any) -> Any:
    if isinstance(x, Thunk):
        return x.unthunk()
    if type(x) in (tuple, list):
        return type(x)(_unthunk_nested(i) for i in x)
    if type(x) is dict:
        return {k: _unthunk_nested(v) for k, v in x.items()}
    return x


# ---------------------------------------------------------------------------------------
# Structural tangents


def _is_namedtuple_type(P: type) -> bool:
    return isinstance(P, type) and issubclass(P, tuple) and hasattr(P, "_fields")


def _is_attrs_type(P: type) -> bool:
    return hasattr(P, "__attrs_attrs__")


def _slot_names(P: type) -> tuple[str, ...] | None:
    """Names of the slots of P, or None if its instances also have a __dict__."""
    names: list[str] = []
    for klass in P.__mro__:
        if klass is object:
            continue
        slots = klass.__dict__.get("__slots__")
        if slots is None:
            return None
        if isinstance(slots, str):
            slots = (slots,)
        for s in slots:
            if s == "__dict__":
                return None
            if s != "__weakref__" and s not in names:
                names.append(s)
    return tuple(names)


_FIELDS_CACHE: dict[type, tuple[str, ...] | None] = {}


def primal_fields(P: type) -> tuple[str, ...] | None:
    """The field names a tangent of type ``P`` may have, or None if unknown from the class.

    Known for dataclasses, attrs classes, namedtuples and classes with ``__slots__``;
    unknown for plain classes whose instances carry a ``__dict__``.
    """
    try:
        return _FIELDS_CACHE[P]
    except (KeyError, TypeError):
        pass
    fields: tuple[str, ...] | None
    if dataclasses.is_dataclass(P):
        fields = tuple(f.name for f in dataclasses.fields(P))
    elif _is_attrs_type(P):
        fields = tuple(a.name for a in P.__attrs_attrs__)
    elif _is_namedtuple_type(P):
        fields = tuple(P._fields)
    elif isinstance(P, type) and P not in (object, tuple, list, dict):
        fields = _slot_names(P)
        if fields == ():
            fields = None
    else:
        fields = None
    try:
        _FIELDS_CACHE[P] = fields
    except TypeError:
        pass
    return fields


_SEQUENCE_TYPES = (tuple, list)


class _TangentMeta(type):
    def __repr__(cls) -> str:
        P = cls.__dict__.get("primal_type")
        if P is None:
            return cls.__qualname__
        return f"{cls.__qualname__}[{getattr(P, '__name__', P)}]"


class Tangent(AbstractTangent, metaclass=_TangentMeta):
    """The structural tangent of a composite primal: fields of an object, items of a tuple.

    ``Tangent[P](**fields)`` for dataclasses, namedtuples, attrs classes and plain
    objects; ``Tangent[tuple](*items)`` and ``Tangent[list](*items)`` for sequences;
    ``Tangent[dict](mapping)`` for dicts. Absent fields read as ``ZeroTangent()``.
    A field that ``P`` does not have is an error at construction
    (`TangentFieldError`). ``primal + tangent`` builds a new primal.

    Examples:
        >>> from dataclasses import dataclass
        >>> from chainrules import Tangent
        >>> @dataclass
        ... class Point:
        ...     x: float
        ...     y: float
        >>> t = Tangent[Point](x=1.0)
        >>> t.y
        ZeroTangent()
        >>> Point(1.0, 2.0) + t
        Point(x=2.0, y=2.0)
        >>> t + Tangent[Point](x=0.5, y=3.0)
        Tangent[Point](x=1.5, y=3.0)
    """

    __slots__ = ("_backing",)
    __array_ufunc__ = None  # numpy defers `array + tangent` to our reflected operators
    primal_type: ClassVar[Any] = None
    _specialized: ClassVar[dict] = {}

    def __class_getitem__(cls, P: Any) -> type:
        key = (cls, P)
        try:
            return Tangent._specialized[key]
        except KeyError:
            pass
        except TypeError:
            raise TypeError(f"{cls.__name__}[...] needs a type, got {P!r}") from None
        if not isinstance(P, type):
            raise TypeError(
                f"{cls.__name__}[...] takes the primal's type, e.g. {cls.__name__}[Foo] or "
                f"{cls.__name__}[tuple]; got {P!r}"
            )
        name = f"{cls.__name__}"
        sub = _TangentMeta(name, (cls,), {"__slots__": (), "primal_type": P,
                                           "__qualname__": cls.__qualname__,
                                           "__module__": cls.__module__})
        Tangent._specialized[key] = sub
        return sub

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        P = self.primal_type
        if P is not None and issubclass(P, dict):
            if kwargs or len(args) > 1:
                if args:
                    raise TypeError(
                        f"Tangent[{P.__qualname__}] takes one mapping or keyword arguments, "
                        f"not both"
                    )
                backing: Any = dict(kwargs)
            else:
                backing = dict(args[0]) if args else {}
        elif P is not None and issubclass(P, _SEQUENCE_TYPES) and not _is_namedtuple_type(P):
            if kwargs:
                raise TypeError(
                    f"Tangent[{P.__qualname__}] takes the items positionally, "
                    f"e.g. Tangent[{P.__qualname__}](1.0, 2.0); got keywords {sorted(kwargs)}"
                )
            backing = tuple(args)
        else:
            if args:
                if P is not None and _is_namedtuple_type(P):
                    P = _any(P)
                    if len(args) > len(P._fields):
                        raise TypeError(
                            f"Tangent[{P.__qualname__}] got {len(args)} items, but "
                            f"{P.__qualname__} has {len(P._fields)} fields {P._fields!r}"
                        )
                    kwargs = {**dict(zip(P._fields, args)), **kwargs}
                elif P is None and not kwargs:
                    object.__setattr__(self, "_backing", tuple(args))
                    return
                else:
                    name = "Tangent" if P is None else f"Tangent[{P.__qualname__}]"
                    raise TypeError(
                        f"{name} takes fields as keyword arguments, e.g. {name}(a=1.0)"
                    )
            if P is not None:
                known = primal_fields(P)
                if known is not None:
                    for k in kwargs:
                        if k not in known:
                            raise TangentFieldError(P, k, known)
            backing = kwargs
        object.__setattr__(self, "_backing", backing)

    @classmethod
    def _from_backing(cls, backing: Any) -> Tangent:
        t = object.__new__(cls)
        object.__setattr__(t, "_backing", backing)
        return t

    @classmethod
    def from_backing(cls, backing: dict | tuple) -> Tangent:
        """Build a tangent from its backing: a dict of fields (or dict entries), or a tuple
        of items. Fields are not checked against the primal type.

        Examples:
            >>> from chainrules import Tangent
            >>> Tangent[tuple].from_backing((1.0, 2.0))
            Tangent[tuple](1.0, 2.0)
        """
        if not isinstance(backing, (dict, tuple)):
            raise TypeError(
                f"{cls!r}.from_backing takes a dict of fields or a tuple of items, got "
                f"{type(backing).__qualname__}"
            )
        return cls._from_backing(backing)

    def __reduce__(self) -> Any:
        # Tangent[P] classes are made on demand, so rebuild through Tangent[P] itself.
        base = MutableTangent if isinstance(self, MutableTangent) else Tangent
        return (_rebuild_tangent, (base, self.primal_type, self._backing))

    def __copy__(self) -> Tangent:
        b = self._backing
        return type(self)._from_backing(dict(b) if isinstance(b, dict) else b)

    def __deepcopy__(self, memo: dict) -> Tangent:
        import copy

        return type(self)._from_backing(copy.deepcopy(self._backing, memo))

    @property
    def backing(self) -> Any:
        """The fields as a dict (objects, dicts) or the items as a tuple (sequences)."""
        return self._backing

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        b = object.__getattribute__(self, "_backing")
        if isinstance(b, dict):
            if name in b:
                return b[name]
            P = self.primal_type
            if P is not None:
                known = primal_fields(P)
                if known is not None and name not in known:
                    raise TangentFieldError(P, name, known)
            return ZeroTangent()
        raise AttributeError(f"{type(self)!r} has items, not fields: index it, t[0]")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"{type(self)!r} is immutable; build a new one, or use MutableTangent"
        )

    def __getitem__(self, key: Any) -> Any:
        b = self._backing
        if isinstance(b, dict):
            if key in b:
                return b[key]
            P = self.primal_type
            if P is not None and issubclass(P, dict):
                return ZeroTangent()
            if isinstance(key, int) and P is not None and _is_namedtuple_type(P):
                return getattr(self, P._fields[key])  # a namedtuple indexes by position too
            return getattr(self, key)
        return b[key]

    def __len__(self) -> int:
        return len(self._backing)

    def __iter__(self) -> Iterator[Any]:
        b = self._backing
        return iter(b.values() if isinstance(b, dict) else b)

    def items(self) -> Any:
        """(name, tangent) pairs of the fields present; (index, tangent) for sequences."""
        b = self._backing
        return b.items() if isinstance(b, dict) else enumerate(b)

    def __repr__(self) -> str:
        b = self._backing
        if isinstance(b, dict):
            P = self.primal_type
            if P is not None and issubclass(P, dict):
                inner = repr(b)
            else:
                inner = ", ".join(f"{k}={v!r}" for k, v in b.items())
        else:
            inner = ", ".join(repr(v) for v in b)
        return f"{type(self)!r}({inner})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ZeroTangent, NoTangent)):
            return all(_is_zero(v) for v in self)
        if not isinstance(other, Tangent) or other.primal_type is not self.primal_type:
            return False
        a, b = self._backing, other._backing
        if isinstance(a, dict) and isinstance(b, dict):
            for k in set(a) | set(b):
                if not _tangent_equal(a.get(k, ZeroTangent()), b.get(k, ZeroTangent())):
                    return False
            return True
        if isinstance(a, tuple) and isinstance(b, tuple):
            return len(a) == len(b) and all(_tangent_equal(x, y) for x, y in zip(a, b))
        return False

    __hash__ = None  # type: ignore[assignment]

    def _map(self, fn: Callable[[Any], Any]) -> Tangent:
        b = self._backing
        if isinstance(b, dict):
            new: Any = {k: fn(v) for k, v in b.items()}
        else:
            new = tuple(fn(v) for v in b)
        return type(self)._from_backing(new)

    def conj(self) -> Tangent:
        return self._map(_conj)

    @property
    def real(self) -> Tangent:
        return self._map(_real)

    @property
    def imag(self) -> Tangent:
        return self._map(_imag)


def _rebuild_tangent(base: type, P: Any, backing: Any) -> Tangent:
    cls = base if P is None else _any(base)[P]
    return cls._from_backing(backing)


class MutableTangent(Tangent):
    """The structural tangent of a mutable object whose identity matters.

    Like `Tangent`, but its fields can be assigned, and ``iadd`` accumulates
    into it in place.

    Examples:
        >>> from chainrules import MutableTangent
        >>> class Acc:
        ...     def __init__(self, total):
        ...         self.total = total
        >>> t = MutableTangent[Acc](total=1.0)
        >>> t.total = 2.0
        >>> t
        MutableTangent[Acc](total=2.0)
    """

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        P = self.primal_type
        if P is not None:
            known = primal_fields(P)
            if known is not None and name not in known:
                raise TangentFieldError(P, name, known)
        b = self._backing
        if not isinstance(b, dict):
            raise AttributeError(f"{type(self)!r} has items, not fields")
        b[name] = value

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(self._backing, dict):
            self.__setattr__(key, value)
        else:
            raise TypeError(f"{type(self)!r} items cannot be assigned")


# ---------------------------------------------------------------------------------------
# Algebra


def _is_zero(x: Any) -> bool:
    if isinstance(x, (ZeroTangent, NoTangent)):
        return True
    if isinstance(x, Tangent):
        return all(_is_zero(v) for v in x)
    if isinstance(x, Thunk):
        return _is_zero(x.unthunk())
    try:
        if is_foreign_array(x):
            # False for traced values (their contents are unknown): never convert them.
            return bool(array_namespace(x).all(x == 0))
        return bool(np.all(np.asarray(x) == 0))
    except Exception:
        return False


def _tangent_equal(a: Any, b: Any) -> bool:
    a, b = unthunk(a), unthunk(b)
    if isinstance(a, (ZeroTangent, NoTangent)):
        return _is_zero(b)
    if isinstance(b, (ZeroTangent, NoTangent)):
        return _is_zero(a)
    if isinstance(a, Tangent) or isinstance(b, Tangent):
        return a == b
    if is_foreign_array(a) or is_foreign_array(b):
        xp = array_namespace(a, b)
        a, b = xp.asarray(a), xp.asarray(b)
        return a.shape == b.shape and bool(xp.all(a == b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


def _conj(x: Any) -> Any:
    if isinstance(x, AbstractTangent):
        return _any(x).conj()
    if isinstance(x, (float, int)):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return np.conj(x)
    if is_foreign_array(x):
        return conj_array(x)
    return x.conjugate()


def conj_array(x: Any) -> Any:
    """The complex conjugate of an array of any namespace (the array itself when real)."""
    xp = array_namespace(x)
    return xp.conj(x) if xp.isdtype(x.dtype, "complex floating") else x


def _real(x: Any) -> Any:
    if isinstance(x, AbstractTangent):
        return _any(x).real
    if isinstance(x, (np.ndarray, np.generic)):
        return np.real(x)
    if is_foreign_array(x):
        xp = array_namespace(x)
        return xp.real(x) if xp.isdtype(x.dtype, "complex floating") else x
    return x.real


def _imag(x: Any) -> Any:
    if isinstance(x, AbstractTangent):
        return _any(x).imag
    if isinstance(x, (np.ndarray, np.generic)):
        return np.imag(x)
    if is_foreign_array(x):
        xp = array_namespace(x)
        return xp.imag(x) if xp.isdtype(x.dtype, "complex floating") else xp.zeros_like(x)
    return x.imag


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


# ---------------------------------------------------------------------------------------
# primal + tangent


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


# ---------------------------------------------------------------------------------------
# Utilities


def _object_fields(x: Any) -> dict[str, Any]:
    cls = type(x)
    if _is_namedtuple_type(cls):
        return dict(x._asdict())
    known = primal_fields(cls)
    if known is not None:
        return {k: getattr(x, k) for k in known if hasattr(x, k)}
    d = getattr(x, "__dict__", None)
    if d is not None:
        return dict(d)
    raise TypeError(f"cannot read the fields of a {cls.__qualname__}")


def backing(x: Any) -> Any:
    """The fields of a primal or tangent: a dict for objects and dicts, a tuple for sequences.

    Numbers and arrays are returned unchanged.

    Examples:
        >>> from collections import namedtuple
        >>> from chainrules import Tangent, backing
        >>> P = namedtuple("P", "a b")
        >>> backing(P(1.0, 2.0))
        {'a': 1.0, 'b': 2.0}
        >>> backing(Tangent[tuple](1.0, 2.0))
        (1.0, 2.0)
    """
    if isinstance(x, Tangent):
        return x._backing
    if isinstance(x, (int, float, complex, np.ndarray, np.generic, str, bytes)) or x is None:
        return x
    if is_foreign_array(x):
        return x
    if (isinstance(x, tuple) and not _is_namedtuple_type(type(x))) or isinstance(x, list):
        return tuple(x)
    if isinstance(x, dict):
        return dict(x)
    return _object_fields(x)


def canonicalize(t: Any) -> Any:
    """Fill in every field of a structural tangent, in declaration order.

    Absent fields become ``ZeroTangent()``. Tangents whose primal fields are not
    known from the class (plain classes with a ``__dict__``) are returned unchanged.

    Examples:
        >>> from collections import namedtuple
        >>> from chainrules import Tangent, canonicalize
        >>> P = namedtuple("P", "a b")
        >>> canonicalize(Tangent[P](b=1.0))
        Tangent[P](a=ZeroTangent(), b=1.0)
    """
    if not isinstance(t, Tangent) or t.primal_type is None:
        return t
    b = t._backing
    if not isinstance(b, dict) or issubclass(t.primal_type, dict):
        return t
    known = primal_fields(t.primal_type)
    if known is None:
        return t
    return type(t)._from_backing({k: b.get(k, ZeroTangent()) for k in known})


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

