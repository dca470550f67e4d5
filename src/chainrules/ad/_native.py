"""The reference AD's optional C fast paths (``_tape.c``), loaded once.

``TAPE`` is the extension module, or None where it is not built (no C compiler at
install) or ``CHAINRULES_PURE_PYTHON`` is set to anything but ``0``: then the Python
code runs alone. It is the reference either way: the C code takes only the common cases
(a ``scalar_rule`` call or operator on tracers of one reverse trace, and the backward
pass over such calls) and hands every other case to the same Python functions, so both
give the same results bit for bit (``tests/ad/test_native_tape.py``).

``_tape_setup`` configures it once the classes it reads exist (``chainrules.ad`` calls
it on import); until then its entry points pass every call to the Python code.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from chainrules.core._validate import native_module

TAPE: Any = native_module("chainrules.ad._tape", "set_enabled")

# Whether ReverseTrace.backward runs its loop in C (switched with the fast paths)
ON = [False]


def enabled() -> bool:
    """Whether the C fast paths run (built, configured and switched on)."""
    return ON[0]


def set_enabled(flag: bool) -> bool:
    """Switch the C fast paths on or off (off: the Python code alone); the previous
    setting. Switching on where the extension is not built does nothing."""
    was = ON[0]
    if TAPE is not None:
        TAPE.set_enabled(flag)
        ON[0] = bool(flag)
    return was


@contextmanager
def python_only() -> Iterator[None]:
    """Run the Python code alone inside the block (the tests compare both paths)."""
    was = set_enabled(False)
    try:
        yield
    finally:
        set_enabled(was)


def backward(step: Any, bars: list, owned: bytearray, tape: list, start: int,
             free: bool) -> None:
    """``ReverseTrace.backward``'s loop in C; an extension built before it dropped the
    tape's entries and cotangents as it went runs the loop without dropping them."""
    if _FREES:
        TAPE.backward(step, bars, owned, tape, start, free)
    else:  # pragma: no cover - a stale build
        TAPE.backward(step, bars, owned, tape, start)


_FREES = TAPE is not None and getattr(TAPE, "FREES", False)
