"""Exceptions raised when the testers themselves are misused."""

from __future__ import annotations

__all__ = ["TesterUsageError", "UnsettledReferenceError"]


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


class UnsettledReferenceError(AssertionError):
    """A rule disagrees with finite differences at inputs where the finite differences
    themselves do not settle the derivative.

    Raised by the testers in place of a plain ``AssertionError`` when, along the
    direction that failed, the finite difference moves by at least half the
    disagreement as its step shrinks fourfold, or its own estimated error is that
    large: the function is not smooth within the stencil of these inputs in their
    precision (a kink, a jump, two eigenvalues or sort keys swapping places), so the
    disagreement may be the reference's, not the rule's. It is still a failure for
    the inputs given; `run_case` (and so ``python -m chainrules check``) draws the
    case's inputs again, and a rule wrong at smooth inputs fails there.

    >>> import numpy as np
    >>> from chainrules import NoTangent, rrule, scoped_rules
    >>> from chainrules.testing import UnsettledReferenceError, test_rrule
    >>> def jump(x):
    ...     return x + (x > 0.5)  # derivative 1 wherever it exists
    >>> with scoped_rules():
    ...     _ = rrule.register(jump)(lambda x: (jump(x), lambda y_bar: (NoTangent(), y_bar)))
    ...     try:
    ...         test_rrule(jump, np.array([0.5, 0.2]))  # on the jump
    ...     except UnsettledReferenceError as e:
    ...         print("not smooth within" in str(e))
    True
    """

    __test__ = False
