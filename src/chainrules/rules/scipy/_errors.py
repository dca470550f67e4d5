"""The error the SciPy rules raise for an option they cannot differentiate correctly."""

from __future__ import annotations

from typing import Any

from chainrules.core import ChainRulesError
from chainrules.rules import _kit as kit


class UnsupportedOptionError(ChainRulesError, NotImplementedError):
    """A SciPy function was called with an option its rule does not support.

    Raised rather than returning a derivative that would be wrong, e.g. for
    ``scipy.fft.dct`` of a complex input with a non-default ``orthogonalize``,
    which SciPy ignores.

    Attributes:
        function: the function called.
        option: the keyword, e.g. ``"orthogonalize"``.
        value: the value given.

    Examples:
        >>> import numpy as np
        >>> import scipy.fft
        >>> from chainrules import rrule
        >>> from chainrules.rules.scipy._errors import UnsupportedOptionError
        >>> try:
        ...     rrule(scipy.fft.dct, np.ones(4) + 1j, orthogonalize=True)
        ... except UnsupportedOptionError as e:
        ...     print(e.option, e.value)
        orthogonalize True
    """

    def __init__(self, function: Any, option: str, value: Any, reason: str, fix: str) -> None:
        self.function = function
        self.option = option
        self.value = value
        super().__init__(f"the rule for {kit.qualified_name(function)} does not support "
                         f"{option}={value!r}: {reason}. {fix}")
