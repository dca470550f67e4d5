"""pytest plugin for chainrules (registered through the ``pytest11`` entry point).

Adds:

- the option ``--chainrules-seed=N`` (sets ``$CHAINRULES_TEST_SEED`` for the run,
  so every tester draws different tangents; the seed is shown in the header);
- the fixtures ``chainrules_seed`` (the seed) and ``chainrules_rng`` (a fresh
  ``np.random.Generator`` seeded with it);
- `check_case` and `catalog_params` to run the rule-case catalog as tests::

      import pytest
      from chainrules.testing.pytest_plugin import catalog_params, check_case

      @pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("numpy"))
      def test_numpy_rules(case, dtype, mode, chainrules_seed):
          check_case(case, dtype, mode, chainrules_seed)

The testers themselves need no pytest: they raise ``AssertionError`` and, for
``not_implemented`` derivatives, call ``pytest.xfail`` only when pytest is running.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

__all__ = ["catalog_params", "check_case"]

_ENV = "CHAINRULES_TEST_SEED"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("chainrules")
    group.addoption(
        "--chainrules-seed", action="store", default=None, type=int, metavar="N",
        help="seed for chainrules.testing's random tangents (default: $CHAINRULES_TEST_SEED "
             "or 0); run with several seeds to shake out flaky rules",
    )


def pytest_configure(config: Any) -> None:
    seed = config.getoption("--chainrules-seed", default=None)
    if seed is not None:
        os.environ[_ENV] = str(seed)


def pytest_report_header(config: Any) -> str:
    return f"chainrules: test seed {os.environ.get(_ENV, '0')} (--chainrules-seed / ${_ENV})"


@pytest.fixture
def chainrules_seed() -> int:
    """The seed the testers use in this run (``--chainrules-seed`` or the env var)."""
    from chainrules.testing._rand import default_seed

    return default_seed()


@pytest.fixture
def chainrules_rng(chainrules_seed: int) -> Any:
    """A ``np.random.Generator`` seeded with `chainrules_seed`, fresh per test."""
    import numpy as np

    return np.random.default_rng(chainrules_seed)


def check_case(case: Any, dtype: str, mode: str, seed: int | None = None) -> Any:
    """Run one catalog case under pytest: fail with the tester's message, xfail a
    documented limitation or ``not_implemented`` derivative, skip what does not apply.

    >>> import numpy as np
    >>> from chainrules.testing import Case, arr
    >>> from chainrules.testing.pytest_plugin import check_case
    >>> def no_rule(x):
    ...     return 2 * x
    >>> check_case(Case(no_rule, lambda rng, dt: (arr(rng, dt, (2,)),)), "float64", "rrule")
    Traceback (most recent call last):
    ...
    Failed: ...no_rule: no rrule found for ...no_rule(ndarray); ...
    """
    __tracebackhide__ = True
    from chainrules.testing import _memo
    from chainrules.testing._rand import default_seed
    from chainrules.testing._runner import run_case

    with _memo.sharing(_memo.between_tests):  # the case's other mode's differences
        result = run_case(case, dtype, mode, default_seed() if seed is None else seed)
    if result.status == "failed":
        pytest.fail(result.message, pytrace=False)
    if result.status == "xfail":
        pytest.xfail(result.message)
    if result.status == "skipped":
        pytest.skip(result.message)
    return result


def catalog_params(namespace: str | None = None) -> list:
    """``pytest.param(case, dtype, mode, id=case_id(...))`` for every catalog case,
    dtype and enabled mode (see `chainrules.testing.iter_catalog` for ``namespace``).

    >>> from chainrules.testing.pytest_plugin import catalog_params
    >>> isinstance(catalog_params("no-such-area"), list)
    True
    """
    from chainrules.testing._cases import case_id, iter_catalog

    params = []
    for case in iter_catalog(namespace):
        for dtype in case.dtypes:
            for mode in ("frule", "rrule"):
                if getattr(case, mode):
                    params.append(pytest.param(case, dtype, mode, id=case_id(case, dtype, mode)))
    return params
