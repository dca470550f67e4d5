"""Meta-tests: the testers tested. Every wrong rule in rules_zoo must be caught, every
correct one must pass, for 20 seeds (offset by $CHAINRULES_TEST_SEED)."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from chainrules.testing import UnsettledReferenceError, default_seed, test_frule, test_rrule

_spec = importlib.util.spec_from_file_location(
    "chainrules_rules_zoo", pathlib.Path(__file__).with_name("rules_zoo.py"))
zoo = importlib.util.module_from_spec(_spec)
sys.modules["chainrules_rules_zoo"] = zoo
_spec.loader.exec_module(zoo)

SEEDS = [default_seed() + k for k in range(20)]
TESTERS = {"rrule": test_rrule, "frule": test_frule}


def _run(entry, seed):
    rng = np.random.default_rng(seed)
    args = entry.args(rng)
    return TESTERS[entry.tester](entry.f, *args, seed=seed, fkwargs=entry.kwargs,
                                 **(entry.options or {}))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("entry", zoo.WRONG, ids=lambda e: f"{e.tester}-{e.name}")
def test_wrong_rule_is_caught(entry, seed):
    with pytest.raises(AssertionError, match=entry.match) as caught:
        _run(entry, seed)
    # at these smooth inputs the finite differences settle the derivative: a wrong rule
    # is never blamed on the reference (run_case would draw its inputs again)
    assert not isinstance(caught.value, UnsettledReferenceError)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("entry", zoo.RIGHT, ids=lambda e: f"{e.tester}-{e.name}")
def test_correct_rule_passes(entry, seed):
    report = _run(entry, seed)
    assert report.primal_calls > 0
    assert "primal output" in report.checks


def test_not_implemented_is_xfail_not_pass():
    with pytest.raises(pytest.xfail.Exception, match="d/dy is future work"):
        test_rrule(zoo.needs_not_implemented, np.ones(3), np.ones(3))


def test_not_implemented_for_a_held_argument_is_no_expected_failure():
    from chainrules.testing import no_tangent

    # the caller holds y fixed, so its not-implemented cotangent is never compared
    try:
        report = test_rrule(zoo.needs_not_implemented, np.ones(3), no_tangent(np.ones(3)))
    except pytest.xfail.Exception as e:
        pytest.fail(f"reported as an expected failure: {e}")
    assert "argument 2 held fixed by the caller" in report.checks


def test_not_implemented_still_checks_the_other_arguments():
    # the implemented cotangent is checked before the expected failure is reported
    @zoo.rrule.register(wrong_with_ni := (lambda x, y: x * np.sin(y)))
    def _(x, y):
        def wrong_with_ni_pullback(z_bar):
            return zoo.NoTangent(), -np.sin(y) * z_bar, zoo.not_implemented("later")

        return x * np.sin(y), wrong_with_ni_pullback

    with pytest.raises(AssertionError, match="argument 1"):
        test_rrule(wrong_with_ni, np.ones(3), np.ones(3))
