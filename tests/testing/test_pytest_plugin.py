"""The pytest plugin: fixtures, check_case, catalog_params (loaded by the entry point)."""

from __future__ import annotations

import numpy as np
import pytest

from chainrules import NoTangent, rrule
from chainrules.testing import Case, arr, default_seed
from chainrules.testing.pytest_plugin import catalog_params, check_case


def triple(x):
    return 3 * x


@rrule.register(triple)
def _(x):
    def triple_pullback(y_bar):
        return NoTangent(), 3 * y_bar

    return triple(x), triple_pullback


def test_seed_fixture(chainrules_seed):
    assert chainrules_seed == default_seed()


def test_rng_fixture_is_seeded(chainrules_rng, chainrules_seed):
    assert chainrules_rng.standard_normal() == np.random.default_rng(chainrules_seed).standard_normal()


def test_check_case_passes_and_skips():
    case = Case(triple, lambda rng, dt: (arr(rng, dt, (3,)),), frule=False)
    assert check_case(case, "float64", "rrule").status == "passed"
    with pytest.raises(pytest.skip.Exception, match="frule disabled"):
        check_case(case, "float64", "frule")


def test_check_case_fails_with_the_message():
    def wrong(x):
        return 3 * x

    @rrule.register(wrong)
    def _(x):
        def wrong_pullback(y_bar):
            return NoTangent(), y_bar

        return wrong(x), wrong_pullback

    bad = Case(wrong, lambda rng, dt: (arr(rng, dt, (3,)),))
    with pytest.raises(pytest.fail.Exception, match="wrong cotangent for argument 1"):
        check_case(bad, "float64", "rrule")


def test_check_case_xfail():
    bad = Case(triple, lambda rng, dt: (arr(rng, dt, (3,)),), output_tangent=lambda r, d, y: "?",
               xfail="output tangent builder is broken on purpose")
    with pytest.raises(pytest.xfail.Exception, match="known limitation"):
        check_case(bad, "float64", "rrule")


def test_catalog_params_ids():
    params = catalog_params()
    assert all(p.id.endswith(("-frule", "-rrule")) for p in params)
