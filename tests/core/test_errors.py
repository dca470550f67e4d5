"""The NoRuleError hierarchy: one base in the core, caught wherever a rule is missing."""

import math
import re

import numpy as np
import pytest

import chainrules
from chainrules import NoMatchingRuleError, NoRuleError, rrule, scoped_rules


def only_floats(x):
    return x


def test_no_rule_error_default_message_error():
    with pytest.raises(NoRuleError, match=re.escape(
            "no frule for math.gamma(float, int); expected a registered frule for these "
            "argument types. Register one with @chainrules.frule.register(math.gamma).")):
        raise NoRuleError(math.gamma, "frule", (float, int))


def test_no_rule_error_is_a_type_error_and_chainrules_error():
    e = NoRuleError(math.gamma, "rrule", [float])
    assert isinstance(e, TypeError)
    assert isinstance(e, chainrules.ChainRulesError)
    assert (e.function, e.table, e.arg_types) == (math.gamma, "rrule", (float,))


def test_no_matching_rule_error_is_a_no_rule_error():
    with scoped_rules():
        @rrule.register(only_floats)
        def only_floats_rrule(x: float):
            return x, None

        e = rrule.no_match_error(only_floats, (str,))
    assert isinstance(e, NoMatchingRuleError)
    assert isinstance(e, NoRuleError)
    assert (e.function, e.table, e.arg_types) == (only_floats, "rrule", (str,))
    assert [s.rpartition(".")[2] for s in e.signatures] == ["only_floats(float)"]
    with pytest.raises(NoRuleError, match=re.escape(
            "only_floats(str): rules are registered for")):
        raise e


def test_ad_no_rule_error_caught_as_core_no_rule_error():
    from chainrules.ad import ADError, grad
    from chainrules.ad import NoRuleError as ADNoRuleError

    assert issubclass(ADNoRuleError, NoRuleError)
    assert issubclass(ADNoRuleError, ADError)
    with pytest.raises(NoRuleError, match=re.escape("ufunc method numpy.add.outer")) as info:
        grad(lambda x: np.sum(np.add.outer(x, x)))(np.ones(2))
    e = info.value
    assert type(e) is ADNoRuleError
    assert (e.table, e.arg_types) == (e.mode, e.argtypes)


def test_interop_no_rule_error_caught_as_core_no_rule_error():
    from chainrules.interop import NoRuleError as BridgeNoRuleError

    assert issubclass(BridgeNoRuleError, NoRuleError)
    with pytest.raises(NoRuleError, match=re.escape(
            "torch_function(numpy.sinc): no rrule is registered for numpy.sinc(ndarray), "
            "and a gradient needs one.")) as info:
        raise BridgeNoRuleError("torch_function", np.sinc, "rrule", (np.ndarray,),
                                "a gradient")
    e = info.value
    assert (e.function, e.table, e.kind, e.arg_types) == (
        np.sinc, "rrule", "rrule", (np.ndarray,))
