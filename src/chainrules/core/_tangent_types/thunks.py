"""Deferred tangents: `Thunk`, `InplaceableThunk` and `unthunk`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .abstract import AbstractTangent, _any
from .natural import _conj, _imag, _real

__all__ = ["InplaceableThunk", "Thunk", "unthunk"]


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
