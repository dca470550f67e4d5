"""Expected failures (``not_implemented`` derivatives) without a pytest dependency."""

from __future__ import annotations

import sys
from typing import NoReturn

__all__ = ["ExpectedFailure", "is_xfail_exception", "xfail"]


class ExpectedFailure(Exception):  # noqa: N818 -- mirrors pytest's "xfail" outcome
    """A tester met a ``NotImplementedTangent``: an expected failure, not a pass.

    Under pytest the testers call ``pytest.xfail`` instead, so the test shows
    as ``XFAIL``; elsewhere they raise this exception.

    >>> from chainrules.testing import ExpectedFailure
    >>> issubclass(ExpectedFailure, AssertionError)
    False
    """


def is_xfail_exception(e: BaseException) -> bool:
    """Whether ``e`` is an `ExpectedFailure` or pytest's xfail outcome."""
    if isinstance(e, ExpectedFailure):
        return True
    pytest = sys.modules.get("pytest")
    return pytest is not None and isinstance(e, pytest.xfail.Exception)


def xfail(message: str) -> NoReturn:
    """Report an expected failure: ``pytest.xfail`` when pytest is running, else raise."""
    pytest = sys.modules.get("pytest")
    if pytest is not None:
        pytest.xfail(message)
    raise ExpectedFailure(message)
