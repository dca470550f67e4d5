"""test_rrule and the self cotangent of a closure: a ``Tangent``/``ZeroTangent()``
``self_bar`` is accepted only when the closure captures something differentiable (as
ChainRulesTestUtils does); a closure over ``np.sin`` must return ``NoTangent()``."""

import numpy as np
import pytest

from chainrules import NoTangent, ZeroTangent, rrule, scoped_rules
from chainrules.testing import test_rrule


def _closure_over(c):
    def f(x):
        return c(x) if callable(c) else c * x

    return f


def _register(f, value, derivative, self_bar):
    @rrule.register(f)
    def f_rrule(x):
        def f_pullback(y_bar):
            return self_bar, y_bar * derivative(x)

        return value(x), f_pullback


def test_zero_self_bar_of_a_closure_over_a_function_fails():
    f = _closure_over(np.sin)
    with scoped_rules():
        _register(f, np.sin, np.cos, ZeroTangent())
        with pytest.raises(AssertionError, match=r"self_bar .* must be NoTangent\(\) for a "
                                                 r"plain function, got ZeroTangent\(\)"):
            test_rrule(f, np.array([0.3, 0.5]))


@pytest.mark.parametrize("captured", [np.array([2.0, 3.0]), 2.5, (np.array([2.0, 3.0]),),
                                      {"w": 2.5}], ids=["array", "float", "tuple", "dict"])
def test_zero_self_bar_of_a_closure_over_a_differentiable_value_passes(captured):
    w = captured[0] if isinstance(captured, tuple) else (
        captured["w"] if isinstance(captured, dict) else captured)

    def make(c):
        def f(x):
            return w * x if c is not None else x

        return f

    f = make(captured)
    with scoped_rules():
        _register(f, lambda x: w * x, lambda x: w, ZeroTangent())
        test_rrule(f, np.array([0.3, 0.5]))


def test_no_tangent_self_bar_of_any_closure_passes():
    f = _closure_over(np.sin)
    with scoped_rules():
        _register(f, np.sin, np.cos, NoTangent())
        test_rrule(f, np.array([0.3, 0.5]))
