"""Gradient checkpointing: `checkpoint` trades memory for a second forward pass.

Under reverse mode, a call of a checkpointed function is one tape entry whose rule runs
the function on plain values (nothing of its inside is recorded) and whose pullback runs
it again under a fresh trace (`rrule_via_ad`) and pulls back through that. A chain of
checkpointed blocks thus keeps each block's input alive, not its intermediates. Under
forward mode (and outside any AD) the function simply runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from chainrules.core import (
    HasForwardsMode,
    HasReverseMode,
    NoTangent,
    frule,
    frule_via_ad,
    rrule,
    rrule_via_ad,
)

from ._errors import InputTypeError

__all__ = ["Checkpointed", "checkpoint", "checkpoint_call"]


def checkpoint(f: Callable) -> Callable:
    """``f``, with its intermediates recomputed in the backward pass instead of stored.

    Under `grad`, `vjp` and `value_and_grad`, a call of the returned function records
    one entry on the tape: ``f`` runs without recording what happens inside it, and the
    pullback runs ``f`` again, traced, to pull the cotangent back. Peak memory then holds
    each checkpointed block's inputs, not its intermediates, at the cost of running each
    block's forward twice. The values and derivatives are those of ``f``: nested
    differentiation (`hessian`, ``jvp`` of ``grad``) and forward mode (where it simply
    runs ``f``) work, closures over differentiated values are differentiated, and
    keyword arguments are passed through.

    Args:
        f: the function to checkpoint (any callable the AD can differentiate).

    Returns:
        A function of the same arguments.

    Raises:
        InputTypeError: ``f`` is not callable.

    Example:
        >>> import numpy as np
        >>> from chainrules.ad import checkpoint, grad
        >>> def block(x):
        ...     return np.tanh(np.sin(x) * 2.0)
        >>> def loss(x):
        ...     for _ in range(3):
        ...         x = checkpoint(block)(x)
        ...     return np.sum(x)
        >>> x = np.linspace(0.0, 1.0, 4)
        >>> g = grad(loss)(x)
        >>> def plain(x):
        ...     for _ in range(3):
        ...         x = block(x)
        ...     return np.sum(x)
        >>> bool(np.allclose(g, grad(plain)(x)))
        True
    """
    if not callable(f):
        raise InputTypeError("checkpoint(f)", "a callable", f"a {type(f).__qualname__}",
                             "pass the function whose forward pass to recompute")
    return Checkpointed(f)


class Checkpointed:
    """A checkpointed function (made by `checkpoint`); the AD's dispatch point turns its
    calls into calls of `checkpoint_call`, whose rule does the checkpointing (the AD's
    own code, this module included, is never rewritten)."""

    def __init__(self, f: Callable) -> None:
        self.f = f
        functools.update_wrapper(self, f)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # (called from code the AD does not rewrite: through the dispatch point all the
        # same, so that traced arguments still reach the rule)
        from ._dispatch import call

        return call(checkpoint_call, self.bound(kwargs), *args)

    def bound(self, kwargs: dict) -> Callable:
        """The function to run on the positional arguments (keywords bound)."""
        return _with_keywords(self.f, kwargs) if kwargs else self.f

    def __repr__(self) -> str:
        return f"checkpoint({self.f!r})"


def _with_keywords(f: Callable, kwargs: dict) -> Callable:
    """``f`` with its keyword arguments bound (a closure: values it captures that the AD
    traces are differentiated like any closure's)."""

    def with_keywords(*args: Any) -> Any:
        return f(*args, **kwargs)

    return with_keywords


def checkpoint_call(f: Callable, *args: Any) -> Any:
    """``f(*args)``; under reverse mode, its rule (`checkpoint_rrule`) does not record
    ``f``'s inside and recomputes it in the backward pass."""
    return f(*args)


@rrule.register(checkpoint_call, config=HasReverseMode)
def checkpoint_rrule(config: Any, f: Callable, *args: Any) -> Any:
    """``f(*args)`` on plain values (nothing recorded); the pullback traces ``f`` again."""
    y = f(*args)

    def checkpoint_pullback(y_bar: Any) -> tuple:
        _, pullback = rrule_via_ad(config, f, *args)
        return (NoTangent(), *pullback(y_bar))

    return y, checkpoint_pullback


@frule.register(checkpoint_call, config=HasForwardsMode)
def checkpoint_frule(config: Any, dargs: tuple, f: Callable, *args: Any) -> Any:
    """Forward mode stores nothing to recompute: ``f`` pushed forward as it is."""
    return frule_via_ad(config, dargs[1:], f, *args)
