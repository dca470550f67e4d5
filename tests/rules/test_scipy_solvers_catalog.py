"""The catalog rows of scipy.optimize's and scipy.integrate's solver rules
(``chainrules/testing/cases/scipy_optimize.py``, ``scipy_integrate.py``), checked with the
project's finite differences of the solvers themselves."""

import pytest

pytest.importorskip("scipy.optimize")

from chainrules.testing import case_id
from chainrules.testing.cases.scipy_integrate import CASES as INTEGRATE
from chainrules.testing.cases.scipy_optimize import CASES as OPTIMIZE
from chainrules.testing.pytest_plugin import check_case

PARAMS = [(c, d, m) for c in (*OPTIMIZE, *INTEGRATE) for d in c.dtypes
          for m in ("frule", "rrule") if getattr(c, m)]


@pytest.mark.parametrize(("case", "dtype", "mode"), PARAMS, ids=[case_id(*p) for p in PARAMS])
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode, seed=0)
