"""A RuleConfig for tests: calls back into the rules, falls back to finite differences."""

from __future__ import annotations

from typing import Any

from chainrules.core import (
    HasForwardsMode,
    HasReverseMode,
    NoTangent,
    RuleConfig,
    frule,
    rrule,
)

__all__ = ["ADviaRuleConfig"]


class ADviaRuleConfig(RuleConfig, HasReverseMode, HasForwardsMode):
    """The config the testers pass to rules: ``rrule_via_ad`` / ``frule_via_ad`` use
    the registered rules and, where ``f`` has none, finite differences.

    So rules that call back into AD (``map``, ``reduce``, ``apply_along_axis``)
    can be tested before any AD exists. The finite-difference fallback of
    ``rrule_via_ad`` builds a full Jacobian (one derivative per input scalar):
    fine for the small functions such rules receive, slow for big ones.

    >>> import math
    >>> from chainrules import rrule_via_ad
    >>> from chainrules.testing import ADviaRuleConfig
    >>> def cube(x):
    ...     return x ** 3
    >>> y, cube_pullback = rrule_via_ad(ADviaRuleConfig(), cube, 2.0)
    >>> y, round(cube_pullback(1.0)[1], 6)
    (8.0, 12.0)
    """

    __slots__ = ("method",)

    def __init__(self, method: Any = None) -> None:
        self.method = method

    def rrule_via_ad(self, f: Any, *args: Any, **kwargs: Any) -> Any:
        res = rrule(self, f, *args, **kwargs)
        if res is not None:
            return res
        from chainrules.testing._fd import fd_vjp

        y = f(*args, **kwargs)
        method = self.method

        def fd_pullback(y_bar: Any) -> tuple:
            # f itself is an input too: callable objects with fields get a Tangent
            def call(f_: Any, *a: Any) -> Any:
                return f_(*a, **kwargs)

            bars = fd_vjp(call, y_bar, (f, *args), method)
            return (bars[0] if _has_fields(f) else NoTangent(), *bars[1:])

        return y, fd_pullback

    def frule_via_ad(self, dargs: tuple, f: Any, *args: Any, **kwargs: Any) -> Any:
        res = frule(self, dargs, f, *args, **kwargs)
        if res is not None:
            return res
        from chainrules.testing._fd import fd_jvp

        def call(f_: Any, *a: Any) -> Any:
            return f_(*a, **kwargs)

        return f(*args, **kwargs), fd_jvp(call, (f, *args), tuple(dargs), self.method)

    def __repr__(self) -> str:
        return "ADviaRuleConfig()"


def _has_fields(f: Any) -> bool:
    from chainrules.testing._vec import spec_of

    return spec_of(f, None, "f").perturbable
