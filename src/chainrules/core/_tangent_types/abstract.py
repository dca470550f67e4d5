"""The base class of the tangent types, and the hook through which it gets its algebra.

The operators of `AbstractTangent` (``+``, ``-``, ``*``, ``/``, unary ``-``) follow
the tangent algebra, which needs every tangent type; the types need the operators.
As in ChainRulesCore (types in ``tangent_types/``, operators in
``tangent_arithmetic.jl``), the operators are defined apart from the types: the
dunders here call `ops`, which `.algebra` fills in when it is imported (the
package's ``__init__`` imports it), so no module imports one that imports it back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["AbstractTangent", "ops"]


def _any(x: Any) -> Any:
    """``x`` typed as ``Any``: for attributes the type checker cannot see (namedtuple
    ``_fields``, dataclass and attrs metadata, methods of the tangent subclasses)."""
    return x


def _unset(*args: Any) -> Any:
    raise RuntimeError("the tangent algebra is not loaded: import chainrules.core")


class _Ops:
    """The tangent algebra's binary and unary operations, filled in by `.algebra`."""

    __slots__ = ("add", "divide", "multiply", "negate", "subtract")

    def __init__(self) -> None:
        self.add: Callable[[Any, Any], Any] = _unset
        self.subtract: Callable[[Any, Any], Any] = _unset
        self.multiply: Callable[[Any, Any], Any] = _unset
        self.divide: Callable[[Any, Any], Any] = _unset
        self.negate: Callable[[Any], Any] = _unset


ops = _Ops()


class AbstractTangent:
    """Base class of the tangent types that are not natural (not a float, complex or array)."""

    __slots__ = ()

    def __add__(self, other: Any) -> Any:
        return ops.add(self, other)

    def __radd__(self, other: Any) -> Any:
        return ops.add(other, self)

    def __sub__(self, other: Any) -> Any:
        return ops.subtract(self, other)

    def __rsub__(self, other: Any) -> Any:
        return ops.subtract(other, self)

    def __mul__(self, other: Any) -> Any:
        return ops.multiply(self, other)

    def __rmul__(self, other: Any) -> Any:
        return ops.multiply(other, self)

    def __truediv__(self, other: Any) -> Any:
        return ops.divide(self, other)

    def __neg__(self) -> Any:
        return ops.negate(self)

    def __pos__(self) -> Any:
        return self
