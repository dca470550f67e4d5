"""Debug mode: extra checks that cost too much to run by default."""

from __future__ import annotations

import os


class _State:
    __slots__ = ("debug", "listeners")

    def __init__(self) -> None:
        self.debug = os.environ.get("CHAINRULES_DEBUG", "") not in ("", "0", "false", "False")
        # Called on every switch; the rule tables drop their fast caches, which are
        # only filled (and only consulted) outside debug mode.
        self.listeners: list = []


state = _State()


def debug_mode(on: bool | None = None) -> bool:
    """Turn debug mode on or off, and return whether it is on.

    In debug mode, ``rrule`` and ``frule`` check what rules return (a pullback
    returning the wrong number of entries, a cotangent whose shape does not match
    its argument), and adding a ``NoTangent`` to a primal raises. Also enabled by
    the environment variable ``CHAINRULES_DEBUG=1``.

    Args:
        on: ``True`` or ``False`` to switch; ``None`` to only query.

    Returns:
        Whether debug mode is on (after the switch).

    Examples:
        >>> import chainrules
        >>> chainrules.debug_mode()
        False
        >>> chainrules.debug_mode(True)
        True
        >>> chainrules.debug_mode(False)
        False
    """
    if on is not None and bool(on) != state.debug:
        state.debug = bool(on)
        for listener in state.listeners:
            listener()
    return state.debug
