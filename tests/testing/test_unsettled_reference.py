"""Failures where the finite differences do not settle the derivative: the testers say
so with `UnsettledReferenceError`, and `run_case` draws the inputs again."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from chainrules import NoTangent, frule, rrule, scoped_rules
from chainrules.testing import (
    Case,
    UnsettledReferenceError,
    run_case,
    test_frule,
    test_rrule,
)


def _jump(x):
    # x, plus 1 past 0.5: the derivative is 1 wherever it exists
    return x + (x > 0.5)


def _register(factor):
    @rrule.register(_jump)
    def jump_rrule(x):
        return _jump(x), lambda y_bar: (NoTangent(), factor * y_bar)

    @frule.register(_jump)
    def jump_frule(dargs, x):
        return _jump(x), factor * dargs[1]


ON_THE_JUMP = np.array([0.5, 0.2])


@pytest.mark.parametrize("tester", [test_rrule, test_frule])
def test_a_failure_on_a_jump_says_the_reference_is_unsettled(tester):
    with scoped_rules():
        _register(1.0)
        with pytest.raises(UnsettledReferenceError,
                           match=r"(?s)The finite differences do not settle this derivative "
                                 r"here: along .* they move by .* when the step shrinks.* f is "
                                 r"probably not smooth within .* of these inputs in float64"):
            tester(_jump, ON_THE_JUMP)


@pytest.mark.parametrize("tester", [test_rrule, test_frule])
def test_a_wrong_rule_at_smooth_inputs_is_a_plain_failure(tester):
    with scoped_rules():
        _register(2.0)
        with pytest.raises(AssertionError) as caught:
            tester(_jump, np.array([0.3, 0.2]))
        assert not isinstance(caught.value, UnsettledReferenceError)


def _case(draws):
    """A case whose inputs are ``draws`` in turn, then the last one for ever."""
    it = iter(draws)
    last = []

    def args(rng, dtype):
        last[:] = [next(it, last[0] if last else draws[-1])]
        return (np.array(last[0], dtype=dtype),)

    return Case(_jump, args, dtypes=("float64",))


@pytest.mark.parametrize("mode", ["rrule", "frule"])
def test_run_case_draws_again_after_an_unsettled_failure(mode):
    with scoped_rules():
        _register(1.0)
        res = run_case(_case([ON_THE_JUMP, [0.3, 0.2]]), "float64", mode, seed=7)
    assert res.status == "passed" and res.draws == 2
    assert res.message.startswith("passed at draw 2 of the case's inputs from seed 7; "
                                  "draw 1 failed where finite differences do not settle")


@pytest.mark.parametrize("mode", ["rrule", "frule"])
def test_run_case_a_wrong_rule_fails_at_the_next_draw(mode):
    with scoped_rules():
        _register(2.0)
        res = run_case(_case([ON_THE_JUMP, [0.3, 0.2]]), "float64", mode)
    assert res.status == "failed"
    assert res.message.startswith("failed at draw 2 of the case's inputs from seed 0")
    assert "wrong" in res.message


def test_run_case_gives_up_when_no_draw_is_settled():
    from chainrules.testing._runner import REDRAWS

    with scoped_rules():
        _register(1.0)
        res = run_case(_case(list(itertools.repeat(ON_THE_JUMP, 10))), "float64", "rrule")
    # no verdict on the rule: reported as an unsettled reference, not as a failure
    assert res.status == "xfail" and res.draws == REDRAWS + 1
    assert res.message.startswith("unsettled reference: ")
    assert (f"the case's inputs were drawn {REDRAWS + 1} times from seed 0; the finite "
            "differences settled none of them") in res.message


def test_check_seed_42_float16_cast_is_an_unsettled_reference_not_a_failure():
    # the finite difference of a cast to float16 is noise at float32's step
    from chainrules.testing import iter_catalog

    case = next(c for c in iter_catalog("numpy") if c.display_name == "numpy.float16")
    res = run_case(case, "float32", "frule", seed=42)
    assert res.status in ("passed", "xfail"), res.message
    if res.status == "xfail":
        assert res.message.startswith("unsettled reference: ")
