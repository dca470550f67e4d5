"""Testing utilities for rule authors (DESIGN §3).

- `test_frule`, `test_rrule`, `test_scalar`: check a rule against finite
  differences of the primal function and say exactly where it is wrong;
- `rand_tangent`, `test_approx`: seeded random tangents, tangent comparison;
- `fd_jvp`, `fd_vjp`, `fd_derivative`, `FDMethod`: finite differences for any
  primal, in the input's precision;
- `PrimalAndTangent` / `with_tangent` / `no_tangent`: fix an argument's tangent;
- `ADviaRuleConfig`: a config whose ``rrule_via_ad`` uses the rules or finite
  differences;
- `Case`, `run_case`, `iter_catalog` and input helpers: the rule-case catalog;
- `chainrules.testing.strategies` (hypothesis) and the pytest plugin
  ``chainrules.testing.pytest_plugin``.
"""

from chainrules.testing._approx import default_tolerances, test_approx
from chainrules.testing._cases import (
    Case,
    arr,
    case_id,
    integers,
    iter_catalog,
    positive,
    scalar,
    spd,
    unit_interval,
    unsupported,
    well_conditioned,
)
from chainrules.testing._config import ADviaRuleConfig
from chainrules.testing._errors import TesterUsageError, UnsettledReferenceError
from chainrules.testing._fd import (
    FDMethod,
    FDResult,
    central_fdm,
    fd_derivative,
    fd_jvp,
    fd_vjp,
)
from chainrules.testing._outcome import ExpectedFailure
from chainrules.testing._pairs import PrimalAndTangent, no_tangent, with_tangent
from chainrules.testing._rand import default_seed, make_rng, rand_tangent
from chainrules.testing._runner import CaseResult, run_case
from chainrules.testing._testers import RuleTestReport, test_frule, test_rrule, test_scalar

__all__ = [
    "ADviaRuleConfig",
    "Case",
    "CaseResult",
    "ExpectedFailure",
    "FDMethod",
    "FDResult",
    "PrimalAndTangent",
    "RuleTestReport",
    "TesterUsageError",
    "UnsettledReferenceError",
    "arr",
    "case_id",
    "central_fdm",
    "default_seed",
    "default_tolerances",
    "fd_derivative",
    "fd_jvp",
    "fd_vjp",
    "integers",
    "iter_catalog",
    "make_rng",
    "no_tangent",
    "positive",
    "rand_tangent",
    "run_case",
    "scalar",
    "spd",
    "test_approx",
    "test_frule",
    "test_rrule",
    "test_scalar",
    "unit_interval",
    "unsupported",
    "well_conditioned",
    "with_tangent",
]
