"""Functions closing over traced values, handed to rules that call back into the AD.

The AD gives such a rule the function with its captured traced values replaced by
their primals; ``rrule_via_ad`` returns the closure's cotangent as ``self_bar`` (a
``Tangent`` with a field per captured variable) and the rule returns it for the
function argument.
"""

from __future__ import annotations

import functools
import itertools
import re
import types

import numpy as np
import pytest

from chainrules import NoTangent, Tangent, frule_via_ad, rrule, rrule_via_ad, scoped_rules
from chainrules.ad import ADConfig, ClosureTangentError, grad, jvp
from chainrules.testing import test_frule, test_rrule

CONFIG = ADConfig()


def scaled(a):
    return lambda x: x * a * a


def test_rrule_via_ad_returns_the_closure_cotangent():
    _, pullback = rrule_via_ad(CONFIG, scaled(3.0), 2.0)
    self_bar, x_bar = pullback(1.0)
    assert self_bar == Tangent[types.FunctionType](a=12.0)
    assert x_bar == 9.0


def test_frule_via_ad_pushes_the_closure_tangent():
    f = scaled(3.0)
    y, y_dot = frule_via_ad(CONFIG, (Tangent[types.FunctionType](a=1.0), 0.0), f, 2.0)
    assert (y, y_dot) == (18.0, 12.0)


def test_plain_function_self_bar_stays_no_tangent():
    _, pullback = rrule_via_ad(CONFIG, lambda x: x * x, 2.0)
    assert pullback(1.0) == (NoTangent(), 4.0)


def map_program(a, xs):
    return sum(map(lambda x: np.sin(x * a), xs))


def reduce_program(a, xs):
    return functools.reduce(lambda s, x: s * a + x, xs, 0.5)


def accumulate_program(a, xs):
    return sum(itertools.accumulate(xs, lambda s, x: s * a + np.cos(x)))


def apply_along_axis_program(a, m):
    return np.sum(np.apply_along_axis(lambda r: r * np.sum(r) * a, 1, m))


@pytest.mark.parametrize("program", [map_program, reduce_program, accumulate_program])
def test_higher_order_rules_differentiate_captured_values(program):
    xs = [0.3, 0.7, 1.1]
    test_rrule(program, 0.8, xs, rrule_f=rrule_via_ad, config=CONFIG)
    test_frule(program, 0.8, xs, frule_f=frule_via_ad, config=CONFIG)


def test_apply_along_axis_differentiates_captured_values():
    m = np.arange(6.0).reshape(2, 3) / 5
    test_rrule(apply_along_axis_program, 0.8, m, rrule_f=rrule_via_ad, config=CONFIG)


def test_map_closure_gradient_value():
    assert grad(lambda a: sum(map(lambda x: x * a * a, [1.0, 2.0])))(3.0) == 18.0
    assert jvp(lambda a: sum(map(lambda x: x * a * a, [1.0, 2.0])), (3.0,), (1.0,)) \
        == (27.0, 18.0)


def apply(f, x):
    return f(x)


def test_rule_dropping_the_closure_cotangent_error():
    def apply_rrule(f, x):
        def apply_pullback(y_bar):
            return NoTangent(), NoTangent(), y_bar

        return f(x), apply_pullback

    with scoped_rules():
        rrule.register(apply)(apply_rrule)
        with pytest.raises(ClosureTangentError, match=re.escape(
                "returned NoTangent() for the function")) as info:
            grad(lambda a: apply(lambda t: t * a, 2.0))(1.0)
    assert info.value.variable == "a"
