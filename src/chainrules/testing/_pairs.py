"""A primal together with the tangent a tester must use for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["PrimalAndTangent", "no_tangent", "with_tangent"]


@dataclass(frozen=True)
class PrimalAndTangent:
    """A primal ``x`` and the tangent ``x_dot`` the testers must use for it.

    Pass one in place of an argument of ``test_frule`` / ``test_rrule`` (or as
    the function itself, for callable objects) to fix its tangent instead of
    drawing one with ``rand_tangent``. ``NoTangent()`` excludes the argument:
    the rule must then give ``NoTangent()`` back for it. A float tangent makes
    a Python ``int`` argument differentiable like a ``float``.

    >>> from chainrules.testing import PrimalAndTangent
    >>> p = PrimalAndTangent(2.0, 0.5)
    >>> p.x, p.x_dot
    (2.0, 0.5)
    """

    x: Any
    x_dot: Any


def with_tangent(x: Any, x_dot: Any) -> PrimalAndTangent:
    """Pair the primal ``x`` with the tangent ``x_dot`` (see `PrimalAndTangent`).

    >>> from chainrules.testing import with_tangent
    >>> with_tangent(3, 1.0)
    PrimalAndTangent(x=3, x_dot=1.0)
    """
    return PrimalAndTangent(x, x_dot)


def no_tangent(x: Any) -> PrimalAndTangent:
    """Pair ``x`` with ``NoTangent()``: the testers treat it as not differentiable.

    >>> from chainrules.testing import no_tangent
    >>> no_tangent(3).x
    3
    """
    from chainrules.core import NoTangent

    return PrimalAndTangent(x, NoTangent())
