"""Exceptions raised when the testers themselves are misused."""

from __future__ import annotations

__all__ = ["TesterUsageError"]


class TesterUsageError(TypeError):
    """A tester, a `Case` or a helper was called with an argument it cannot use.

    A wrong *rule* is reported with ``AssertionError``; this error means the
    call of the tester itself is wrong (an unknown dtype, a non-callable
    function, an option of the wrong type). The message names the function,
    the argument and how to fix it.

    >>> from chainrules.testing import Case, TesterUsageError
    >>> try:
    ...     Case(3, lambda rng, dtype: ())
    ... except TesterUsageError as e:
    ...     print(e)  # doctest: +ELLIPSIS
    Case: argument 1 (f) must be callable, got int; ...
    """

    __test__ = False  # the name starts with "Test": keep pytest from collecting it
