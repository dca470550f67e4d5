import pytest

st = pytest.importorskip("scipy.stats")

from chainrules.testing import case_id  # noqa: E402
from chainrules.testing.cases.scipy_stats import CASES  # noqa: E402
from chainrules.testing.pytest_plugin import check_case  # noqa: E402

PARAMS = [(c, d, m) for c in CASES for d in c.dtypes for m in ("frule", "rrule") if getattr(c, m)]


@pytest.mark.parametrize(("case", "dtype", "mode"), PARAMS, ids=[case_id(*p) for p in PARAMS])
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode, seed=0)
