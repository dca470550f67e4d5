"""Structural tangents (`Tangent`, `MutableTangent`) and reading a primal's fields
(`primal_fields`, `backing`, `canonicalize`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np

from .._errors import TangentFieldError
from .._xp import array_namespace, is_foreign_array
from .abstract import AbstractTangent, _any
from .natural import _conj, _imag, _real
from .thunks import Thunk, unthunk
from .zeros import NoTangent, ZeroTangent

__all__ = ["MutableTangent", "Tangent", "backing", "canonicalize", "primal_fields"]


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
