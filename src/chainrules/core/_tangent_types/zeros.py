"""The zero-like singletons: `ZeroTangent` (a hard zero) and `NoTangent` (no tangent at
all: the value cannot be perturbed)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .abstract import AbstractTangent, ops

__all__ = ["NoTangent", "ZeroTangent"]


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
        return ops.multiply(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return ops.multiply(other, self)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        # Lets `array + ZeroTangent()` and `np.multiply(g, ZeroTangent())` follow the
        # tangent algebra instead of building object arrays.
        if method != "__call__" or kwargs.get("out") is not None:
            return NotImplemented
        if ufunc is np.add and len(inputs) == 2:
            return ops.add(*inputs)
        if ufunc is np.subtract and len(inputs) == 2:
            return ops.subtract(*inputs)
        if ufunc in (np.multiply, np.matmul) and len(inputs) == 2:
            return ops.multiply(*inputs)
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
