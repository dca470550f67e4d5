"""`NotImplementedTangent`: a derivative that exists but has not been written yet."""

from __future__ import annotations

from typing import Any

from .._errors import NotImplementedDerivativeError
from .abstract import AbstractTangent

__all__ = ["NotImplementedTangent"]


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
