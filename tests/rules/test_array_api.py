"""The array API rules on array_api_strict (catalog rows), register_namespace, and the
testers on foreign arrays."""

import pytest

from chainrules.testing import case_id
from chainrules.testing.cases.array_api import CASES
from chainrules.testing.pytest_plugin import check_case

xs = pytest.importorskip("array_api_strict")

PARAMS = [(c, d, m) for c in CASES for d in c.dtypes for m in ("frule", "rrule") if getattr(c, m)]


@pytest.mark.parametrize(("case", "dtype", "mode"), PARAMS, ids=[case_id(*p) for p in PARAMS])
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode, seed=0)
