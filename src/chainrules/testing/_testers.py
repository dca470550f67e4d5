"""test_frule, test_rrule, test_scalar: check rules against finite differences.

The machinery the testers share is in ``_harness``; each tester has its module
(``_rrule_tester``, ``_frule_tester``); ``test_scalar`` combines them.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from chainrules.testing._errors import TesterUsageError
from chainrules.testing._fd import FDMethod
from chainrules.testing._frule_tester import test_frule
from chainrules.testing._harness import RuleTestReport, _refuse_unknown
from chainrules.testing._pairs import PrimalAndTangent
from chainrules.testing._rrule_tester import test_rrule

__all__ = ["RuleTestReport", "test_frule", "test_rrule", "test_scalar"]


# ---------------------------------------------------------------------- test_scalar


def test_scalar(f: Any, z: Any, *, rtol: float | None = None, atol: float | None = None,
                fkwargs: dict | None = None, check_frule: bool = True,
                check_rrule: bool = True, seed: Any = None,
                fdm: FDMethod | None = None, **unknown: Any) -> list[RuleTestReport]:
    """Test the frule and rrule of a scalar function ``f`` at real or complex ``z``.

    A real ``z`` is tested with tangent 1 (frule) and output cotangent 1, plus
    ``1j`` when the output is complex (rrule). A complex ``z`` is tested along
    ``1`` and ``1j`` (frule) and with output cotangents ``1`` and ``1j``
    (rrule); complex outputs of real inputs are handled too.

    Examples:
        >>> import math
        >>> from chainrules.testing import test_scalar
        >>> [r.mode for r in test_scalar(math.sin, 0.5)]
        ['frule', 'rrule']
    """
    __tracebackhide__ = True
    _refuse_unknown("test_scalar", unknown)
    from chainrules.testing._pairs import with_tangent

    if isinstance(z, (PrimalAndTangent, np.ndarray)) or not isinstance(
            z, (int, float, complex, np.number)) or isinstance(z, bool):
        raise TesterUsageError(
            f"test_scalar: argument 2 (z) must be a real or complex scalar, got "
            f"{type(z).__name__}; use test_frule/test_rrule for arrays and structures.")
    opts = {"rtol": rtol, "atol": atol, "fkwargs": fkwargs, "seed": seed, "fdm": fdm}
    is_complex = isinstance(z, (complex, np.complexfloating))
    directions = [1.0, 1j] if is_complex else [1.0]
    reports = []
    if check_frule:
        for d in directions:
            d = cast(Any, type(z))(d) if isinstance(z, np.generic) else d
            reports.append(test_frule(f, with_tangent(z, d), **opts))
    if check_rrule:
        y = f(z, **(fkwargs or {}))
        y_complex = isinstance(y, (complex, np.complexfloating))
        for y_bar in ([1.0, 1j] if y_complex else [1.0]):
            if isinstance(y, np.generic):
                y_bar = type(y)(y_bar)
            reports.append(test_rrule(f, z, output_tangent=y_bar, **opts))
    return reports


test_frule.__test__ = False  # type: ignore[attr-defined]  # not pytest test functions
test_rrule.__test__ = False  # type: ignore[attr-defined]
test_scalar.__test__ = False  # type: ignore[attr-defined]

