"""Structures of arguments and results, and the tangents that mirror them.

A primal may be a tuple, list, dict, namedtuple, dataclass or attrs instance
holding arrays; its tangent is a ``Tangent`` with the same layout. A framework
sees only the leaves. This module walks both in step: a *path* is a tuple of
steps ``("index", i)``, ``("key", k)`` or ``("attr", name)`` from the root to a
leaf, the same steps JAX's key paths name.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from chainrules.core._tangent_types import (
    NoTangent,
    Tangent,
    ZeroTangent,
    unthunk,
)

__all__ = ["children", "format_path", "leaves_with_paths", "map_leaves", "tangent_at",
           "tangent_like"]

Path = tuple


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _object_field_names(x: Any) -> tuple[str, ...] | None:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return tuple(f.name for f in dataclasses.fields(x))
    attrs = getattr(type(x), "__attrs_attrs__", None)
    if attrs is not None and not isinstance(x, type):
        return tuple(a.name for a in attrs)
    return None


# Types known to be leaves (not containers, dataclasses or attrs classes): whether a
# type is a structure is a property of the type, so the answer is cached per type.
_LEAF_TYPES: set[type] = {float, int, complex, bool, str, bytes, type(None)}


def children(x: Any) -> list[tuple[tuple, Any]] | None:
    """The ``(step, child)`` pairs of a structure, or None for a leaf."""
    if type(x) in _LEAF_TYPES:
        return None
    if _is_namedtuple(x):
        return [(("attr", k), getattr(x, k)) for k in type(x)._fields]
    if isinstance(x, (tuple, list)):
        return [(("index", i), v) for i, v in enumerate(x)]
    if isinstance(x, dict):
        return [(("key", k), v) for k, v in x.items()]
    names = _object_field_names(x)
    if names is not None:
        return [(("attr", k), getattr(x, k)) for k in names]
    if not isinstance(x, type):
        _LEAF_TYPES.add(type(x))
    return None


def _rebuild(x: Any, values: list) -> Any:
    if _is_namedtuple(x):
        return type(x)(*values)
    if isinstance(x, tuple):
        return tuple(values)
    if isinstance(x, list):
        return list(values)
    if isinstance(x, dict):
        return dict(zip(x.keys(), values))
    # dataclass or attrs: a shallow copy with the fields replaced works for frozen and
    # slotted classes alike and does not run __init__ (which may validate or compute).
    new = copy.copy(x)
    for name, v in zip(_object_field_names(x) or (), values):
        object.__setattr__(new, name, v)
    return new


def leaves_with_paths(x: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Yield ``(path, leaf)`` for every leaf of ``x``, depth first, in field order."""
    ch = children(x)
    if ch is None:
        yield path, x
        return
    for step, c in ch:
        yield from leaves_with_paths(c, (*path, step))


def map_leaves(fn: Callable[[Path, Any], Any], x: Any, path: Path = ()) -> Any:
    """A copy of ``x`` with every leaf replaced by ``fn(path, leaf)``."""
    ch = children(x)
    if ch is None:
        return fn(path, x)
    return _rebuild(x, [map_leaves(fn, c, (*path, step)) for step, c in ch])


def tangent_like(x: Any, fn: Callable[[Path, Any], Any], path: Path = ()) -> Any:
    """The structural tangent of ``x`` with leaf tangents ``fn(path, leaf)``.

    Tuples give ``Tangent[tuple]``, lists ``Tangent[list]``, dicts ``Tangent[dict]``,
    namedtuples, dataclasses and attrs instances ``Tangent[type(x)]``.
    """
    ch = children(x)
    if ch is None:
        return fn(path, x)
    values = [(step[1], tangent_like(c, fn, (*path, step))) for step, c in ch]
    if _is_namedtuple(x) or _object_field_names(x) is not None:
        return Tangent[type(x)](**dict(values))
    if isinstance(x, dict):
        return Tangent[dict](dict(values))
    if isinstance(x, list):
        return Tangent[list](*(v for _, v in values))
    return Tangent[tuple](*(v for _, v in values))


class PathError(LookupError):
    """A tangent's layout does not match its primal's at one step of a path."""

    def __init__(self, step_path: Path, got: Any) -> None:
        self.step_path = step_path
        self.got = got
        super().__init__(f"at {format_path(step_path)} got {type(got).__qualname__}")


def tangent_at(t: Any, path: Path) -> Any:
    """The part of tangent ``t`` at ``path`` (unthunked); a zero anywhere on the way is zero.

    Accepts ``Tangent`` as well as plain tuples, lists and dicts (natural tangents
    of containers). Raises `PathError` if the layout does not match.
    """
    t = unthunk(t)
    for i, (kind, k) in enumerate(path):
        if isinstance(t, (ZeroTangent, NoTangent)):
            return t
        try:
            if isinstance(t, Tangent):
                P = t.primal_type
                if isinstance(t.backing, tuple):
                    expected = "index"
                elif P is not None and issubclass(P, dict):
                    expected = "key"
                else:
                    expected = "attr"
                if kind != expected:
                    raise PathError(path[: i + 1], t)
                t = t.backing[k] if expected == "index" else (
                    getattr(t, k) if expected == "attr" else t[k])
            elif kind == "index" and isinstance(t, (tuple, list)):
                t = t[k]
            elif kind == "key" and isinstance(t, dict):
                t = t.get(k, ZeroTangent())
            else:
                raise PathError(path[: i + 1], t)
        except (IndexError, KeyError, AttributeError, TypeError) as e:
            if isinstance(e, PathError):
                raise
            raise PathError(path[: i + 1], t) from e
        t = unthunk(t)
    return t


def format_path(path: Path) -> str:
    """``(("index", 0), ("key", "w"))`` -> ``"[0]['w']"``; ``""`` for the root."""
    out = []
    for kind, k in path:
        out.append(f".{k}" if kind == "attr" else f"[{k!r}]")
    return "".join(out)
