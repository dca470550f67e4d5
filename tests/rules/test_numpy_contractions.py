"""Rules of chainrules/rules/numpy/contractions.py: the case table, then conventions."""

import numpy as np
import pytest

from chainrules.testing import case_id, run_case, test_frule, test_rrule
from chainrules.testing.cases.numpy_contractions import CASES

PARAMS = [(c, d, m) for c in CASES for d in c.dtypes for m in ("frule", "rrule") if getattr(c, m)]


@pytest.mark.parametrize(("case", "dtype", "mode"), PARAMS, ids=[case_id(*p) for p in PARAMS])
def test_rule(case, dtype, mode):
    result = run_case(case, dtype, mode)
    if result.status == "xfail":
        pytest.xfail(result.message)
    assert result.status == "passed", result.message
