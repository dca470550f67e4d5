"""Testing utilities for rule authors: testers, finite differences, the case catalog."""

from chainrules.testing._cases import (
    Case,
    CaseResult,
    arr,
    case_id,
    integers,
    iter_catalog,
    positive,
    run_case,
    scalar,
    spd,
    unit_interval,
    well_conditioned,
)
from chainrules.testing._errors import TesterUsageError
from chainrules.testing._outcome import ExpectedFailure
from chainrules.testing._pairs import PrimalAndTangent, no_tangent, with_tangent

__all__ = [
    "Case",
    "CaseResult",
    "ExpectedFailure",
    "PrimalAndTangent",
    "TesterUsageError",
    "arr",
    "case_id",
    "integers",
    "iter_catalog",
    "no_tangent",
    "positive",
    "run_case",
    "scalar",
    "spd",
    "unit_interval",
    "well_conditioned",
    "with_tangent",
]
