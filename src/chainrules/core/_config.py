"""RuleConfig: how an AD tells rules what it can do, and how rules call back into it."""

from __future__ import annotations

from typing import Any

from ._errors import MissingCapabilityError

__all__ = [
    "HasForwardsMode",
    "HasReverseMode",
    "NoForwardsMode",
    "NoReverseMode",
    "RuleConfig",
    "frule_via_ad",
    "rrule_via_ad",
]


class RuleConfig:
    """Base class of the configs an AD passes to rules.

    An AD declares its capabilities by mixing in features, and implements the
    matching call-back methods::

        class MyADConfig(RuleConfig, HasReverseMode, NoForwardsMode):
            def rrule_via_ad(self, f, *args, **kwargs):
                ...  # (y, pullback) computed by the AD

    Rules registered with ``config=HasReverseMode`` are then used by that AD (and
    receive the config first), and may call `rrule_via_ad` on it to
    differentiate a function they were given (``map``, ``reduce``...).

    Examples:
        >>> from chainrules import RuleConfig, HasReverseMode, NoForwardsMode
        >>> class MyConfig(RuleConfig, HasReverseMode, NoForwardsMode):
        ...     pass
        >>> isinstance(MyConfig(), HasReverseMode)
        True
    """

    __slots__ = ()

    def rrule_via_ad(self, f: Any, *args: Any, **kwargs: Any) -> Any:
        raise MissingCapabilityError(self, "rrule_via_ad", "HasReverseMode")

    def frule_via_ad(self, dargs: tuple, f: Any, *args: Any, **kwargs: Any) -> Any:
        raise MissingCapabilityError(self, "frule_via_ad", "HasForwardsMode")


class HasReverseMode:
    """Feature: the AD can compute pullbacks (implements ``rrule_via_ad``)."""

    __slots__ = ()


class NoReverseMode:
    """Feature: the AD has no reverse mode."""

    __slots__ = ()


class HasForwardsMode:
    """Feature: the AD can compute pushforwards (implements ``frule_via_ad``)."""

    __slots__ = ()


class NoForwardsMode:
    """Feature: the AD has no forward mode."""

    __slots__ = ()


def rrule_via_ad(config: RuleConfig, f: Any, *args: Any, **kwargs: Any) -> Any:
    """Ask the AD behind ``config`` for ``(y, pullback)`` of ``f(*args, **kwargs)``.

    Raises:
        MissingCapabilityError: the config does not implement reverse mode.

    Examples:
        >>> from chainrules import RuleConfig, rrule_via_ad
        >>> rrule_via_ad(RuleConfig(), abs, 1.0)
        Traceback (most recent call last):
        ...
        chainrules.core._errors.MissingCapabilityError: RuleConfig cannot rrule_via_ad: ...
    """
    if not isinstance(config, RuleConfig):
        raise TypeError(
            f"rrule_via_ad expects a RuleConfig as its first argument, got "
            f"{type(config).__qualname__}"
        )
    if isinstance(config, NoReverseMode):
        raise MissingCapabilityError(config, "rrule_via_ad", "HasReverseMode")
    return config.rrule_via_ad(f, *args, **kwargs)


def frule_via_ad(config: RuleConfig, dargs: tuple, f: Any, *args: Any, **kwargs: Any) -> Any:
    """Ask the AD behind ``config`` for ``(y, y_dot)`` of ``f(*args, **kwargs)``.

    Raises:
        MissingCapabilityError: the config does not implement forward mode.

    Examples:
        >>> from chainrules import RuleConfig, frule_via_ad
        >>> frule_via_ad(RuleConfig(), (None, 1.0), abs, 1.0)
        Traceback (most recent call last):
        ...
        chainrules.core._errors.MissingCapabilityError: RuleConfig cannot frule_via_ad: ...
    """
    if not isinstance(config, RuleConfig):
        raise TypeError(
            f"frule_via_ad expects a RuleConfig as its first argument, got "
            f"{type(config).__qualname__}"
        )
    if isinstance(config, NoForwardsMode):
        raise MissingCapabilityError(config, "frule_via_ad", "HasForwardsMode")
    return config.frule_via_ad(dargs, f, *args, **kwargs)
