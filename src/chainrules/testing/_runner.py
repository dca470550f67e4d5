"""run_case: one catalog case through test_frule or test_rrule, as a `CaseResult`.

Apart from the catalog (``_cases``) so that the testers and the catalog do not
import each other: this module imports both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from chainrules.testing._cases import _DTYPES, _MODES, Case, case_id
from chainrules.testing._errors import TesterUsageError, UnsettledReferenceError
from chainrules.testing._frule_tester import test_frule
from chainrules.testing._outcome import ExpectedFailure, is_xfail_exception
from chainrules.testing._pairs import PrimalAndTangent
from chainrules.testing._rrule_tester import test_rrule

__all__ = ["CaseResult", "run_case"]


@dataclass(frozen=True)
class CaseResult:
    """Outcome of `run_case`.

    ``status`` is one of ``"passed"``, ``"failed"``, ``"xfail"``,
    ``"skipped"``; ``message`` explains failures, expected failures and skips;
    ``primal_calls`` counts the calls of ``f`` the tester made (finite
    differences included); ``seconds`` is the wall time; ``draws`` counts the draws of
    the inputs (more than 1 after failures the finite differences did not settle).

    >>> from chainrules.testing import CaseResult
    >>> CaseResult("passed", "", 12, 0.01).ok
    True
    """

    status: str
    message: str
    primal_calls: int
    seconds: float
    draws: int = 1

    @property
    def ok(self) -> bool:
        """True unless the case failed (``"xfail"`` and ``"skipped"`` are ok)."""
        return self.status != "failed"


def run_case(case: Case, dtype: str, mode: str, seed: int = 0) -> CaseResult:
    """Run ``test_frule`` (``mode="frule"``) or ``test_rrule`` on one case and dtype.

    Never raises for a wrong rule: the outcome is in the returned `CaseResult`.
    A dtype the case does not list, or a mode it disables, is ``"skipped"``.

    The inputs come from ``case.args`` with a generator seeded by ``seed``. When the
    tester fails with `UnsettledReferenceError` (the rule disagrees with finite differences
    where they do not settle the derivative: a kink or a jump of ``f`` within their
    stencil), the inputs are drawn again from the same generator, up to `REDRAWS`
    times; the result is that of the last draw, and its message says why. When no draw
    is settled, the result is ``"xfail"`` with a message that starts ``"unsettled
    reference: "``: the finite differences gave no verdict on the rule.

    >>> import numpy as np
    >>> from chainrules.testing import Case, arr, run_case
    >>> c = Case(np.cos, lambda rng, dt: (arr(rng, dt, (3,)),))
    >>> run_case(c, "complex128", "rrule").status
    'skipped'
    """
    if mode not in _MODES:
        raise TesterUsageError(
            f"run_case: argument 3 (mode) must be 'frule' or 'rrule', got {mode!r}."
        )
    if dtype not in _DTYPES:
        raise TesterUsageError(
            f"run_case: argument 2 (dtype) must be one of {_DTYPES}, got {dtype!r}."
        )
    if dtype not in case.dtypes:
        return CaseResult("skipped", f"{case.display_name}: dtype {dtype} not listed", 0, 0.0)
    if not getattr(case, mode):
        return CaseResult("skipped", f"{case.display_name}: {mode} disabled for this case", 0, 0.0)
    if case.skip is not None:
        return CaseResult("skipped", f"{case.display_name}: {case.skip}", 0, 0.0)

    rng = np.random.default_rng(seed)
    np_dtype = np.dtype(dtype)
    start = time.perf_counter()
    calls = 0
    first_doubt = ""
    for draw in range(1, REDRAWS + 2):
        status, message, used = _attempt(case, rng, np_dtype, mode, seed)
        calls += used
        if status != "unsettled":
            if draw > 1:  # say why the inputs were drawn again: the outcome is this draw's
                message = (f"{status} at draw {draw} of the case's inputs from seed {seed}; "
                           f"draw 1 failed where finite differences do not settle the "
                           f"derivative:\n{first_doubt}" + (f"\n{message}" if message else ""))
            break
        first_doubt = first_doubt or message
    else:
        # the reference could judge no draw (a cast to float16, a function with jumps
        # everywhere): that is no verdict on the rule, and is reported as such
        status = "xfail"
        message = (f"unsettled reference: the case's inputs were drawn {draw} times from "
                   f"seed {seed}; the finite differences settled none of them, so they "
                   f"cannot judge the rule here (test it at other inputs, or with an "
                   f"explicit fdm):\n{message}")
    seconds = time.perf_counter() - start
    if case.xfail is not None:
        if status == "failed":
            status, message = "xfail", f"known limitation: {case.xfail}\n{message}"
        elif status == "passed":
            status = "failed"
            message = (
                f"{case_id(case, dtype, mode)} passed but is marked xfail "
                f"({case.xfail!r}); remove the xfail marker."
            )
    return CaseResult(status, message, calls, seconds, draw)


#: How often `run_case` draws a case's inputs again when the rule disagreed with finite
#: differences that do not settle the derivative there (`UnsettledReferenceError`).
REDRAWS = 3


def _attempt(case: Case, rng: np.random.Generator, np_dtype: np.dtype, mode: str,
             seed: int) -> tuple[str, str, int]:
    """One draw of the case's inputs through its tester: (status, message, primal calls);
    status ``"unsettled"`` asks for another draw."""
    calls = 0
    try:
        args = tuple(case.args(rng, np_dtype))
        options: dict[str, Any] = {
            "rtol": case.rtol,
            "atol": case.atol,
            "fkwargs": dict(case.kwargs),
            "seed": seed,
        }
        if case.fdm is not None:
            options["fdm"] = case.fdm
        if case.output_tangent is not None:
            primals = [a.x if isinstance(a, PrimalAndTangent) else a for a in args]
            y = case.f(*primals, **case.kwargs)
            options["output_tangent"] = case.output_tangent(rng, np_dtype, y)
        tester = test_frule if mode == "frule" else test_rrule
        report = tester(case.f, *args, **options)
        calls = report.primal_calls
        status, message = "passed", ""
    except UnsettledReferenceError as e:
        status, message = "unsettled", str(e)
    except AssertionError as e:
        status, message = "failed", str(e)
    except ExpectedFailure as e:
        status, message = "xfail", str(e)
    except Exception as e:
        if is_xfail_exception(e):
            status, message = "xfail", str(e)
        else:
            status, message = "failed", f"{type(e).__name__}: {e}"
    except BaseException as e:  # pytest's xfail outcome is a BaseException
        if not is_xfail_exception(e):
            raise
        status, message = "xfail", str(e)
    return status, message, calls
