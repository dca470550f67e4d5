"""Calls go through the registered rules: user functions, math functions, constructors,
methods, callable objects; opt-outs and functions without rules are traced into."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from chainrules import NoTangent, Tangent, frule, rrule, scalar_rule
from chainrules.ad import grad, jvp


def square_plus(x):
    return x * x + 1.0


def test_user_function_rule_is_used_and_can_differ_from_tracing():
    # A deliberately different (but marked) derivative shows the rule really ran.
    @rrule.register(square_plus)
    def square_plus_rrule(x: float):
        def square_plus_pullback(y_bar):
            return NoTangent(), 100.0 * y_bar

        return square_plus(x), square_plus_pullback

    assert grad(lambda x: square_plus(x) * 2.0)(3.0) == 200.0


def test_rule_registered_after_first_use_is_picked_up():
    def cube(x):
        return x * x * x

    assert grad(cube)(2.0) == 12.0

    @rrule.register(cube)
    def cube_rrule(x: float):
        return cube(x), lambda y_bar: (NoTangent(), -1.0 * y_bar)

    assert grad(cube)(2.0) == -1.0


def test_opt_out_traces_through_the_body():
    def f(x):
        return x * 3.0

    @rrule.register(f)
    def f_rrule(x):
        return f(x), lambda y_bar: (NoTangent(), 999.0)

    rrule.opt_out(f, np.ndarray)
    assert grad(f)(1.0) == 999.0  # the generic rule for floats
    np.testing.assert_array_equal(grad(lambda x: np.sum(f(x)))(np.ones(2)), [3.0, 3.0])


def test_rule_for_math_function_called_as_attribute():
    def my_math_fn(x):
        return math.sin(x)

    calls = []
    original = rrule.lookup(math.sin, (float,))
    assert original is not None

    def spy(x: float):
        calls.append(x)
        return original[0](x)

    rrule.register(math.sin)(spy)
    grad(my_math_fn)(0.25)
    assert calls == [0.25]


def test_constructor_rule():
    @dataclasses.dataclass
    class Polar:
        r: float
        theta: float

    def make(r, theta):
        return Polar(r * 2.0, theta)

    @rrule.register(Polar)
    def polar_rrule(r: float, theta: float):
        def polar_pullback(y_bar):
            return NoTangent(), y_bar.r, y_bar.theta

        return Polar(r, theta), polar_pullback

    def f(r):
        p = make(r, 0.5)
        return p.r * math.cos(p.theta)

    assert grad(f)(1.5) == pytest.approx(2.0 * math.cos(0.5))


def test_callable_object_rule_gets_self_tangent():
    class Scale:
        def __init__(self, a):
            self.a = a

        def __call__(self, x):
            return self.a * x

    @rrule.register_call(Scale)
    def scale_rrule(s, x: float):
        def scale_pullback(y_bar):
            return Tangent[Scale](a=x * y_bar), s.a * y_bar

        return s(x), scale_pullback

    s = Scale(4.0)
    assert grad(lambda x: s(x))(2.0) == 4.0


def test_method_with_rule_on_the_function():
    class Layer:
        def __init__(self, w):
            self.w = w

        def apply(self, x):
            return math.exp(self.w * x)

    def f(x):
        return Layer(2.0).apply(x)

    assert grad(f)(0.0) == pytest.approx(2.0)


def test_forward_mode_uses_frule():
    def double(x):
        return 2.0 * x

    @frule.register(double)
    def double_frule(dargs, x: float):
        return double(x), 7.0 * dargs[1]

    assert jvp(lambda x: double(x) + 1.0, (1.0,), (1.0,)) == (3.0, 7.0)


def test_forward_mode_falls_back_to_rrule_for_small_outputs():
    def weird(x, y):
        return x * y

    @rrule.register(weird)
    def weird_rrule(x: float, y: float):
        def weird_pullback(z_bar):
            return NoTangent(), y * z_bar, x * z_bar

        return weird(x, y), weird_pullback

    rrule.opt_out
    assert jvp(weird, (2.0, 3.0), (1.0, 10.0)) == (6.0, 3.0 + 20.0)


def test_scalar_rule_function_used_in_both_modes():
    def softplus(x):
        return math.log1p(math.exp(x))

    scalar_rule(softplus, lambda x: 1.0 / (1.0 + math.exp(-x)))
    expected = 1.0 / (1.0 + math.exp(-0.3))
    assert grad(softplus)(0.3) == pytest.approx(expected)
    assert jvp(softplus, (0.3,), (2.0,))[1] == pytest.approx(2 * expected)
    # broadcasting a traced scalar against an array sums the broadcast away
    x = np.array([0.1, 0.2])

    def lse(a, b):
        return np.logaddexp(a, b)

    scalar_rule(lse, lambda a, b, *, y: (np.exp(a - y), np.exp(b - y)))
    g = grad(lambda s: np.sum(lse(s, x)))(0.5)
    assert g == pytest.approx(np.sum(np.exp(0.5 - np.logaddexp(0.5, x))))


def test_rule_registered_on_a_method_function_serves_bound_calls():
    class Model:
        def __init__(self, k):
            self.k = k

        def energy(self, x):
            return self.k * x * x

    @rrule.register(Model.energy)
    def energy_rrule(m, x: float):
        def energy_pullback(y_bar):
            return NoTangent(), NoTangent(), -5.0 * y_bar  # marked: shows the rule ran

        return m.energy(x), energy_pullback

    assert grad(lambda x: Model(2.0).energy(x))(1.0) == -5.0


def test_function_with_rule_but_only_closure_tracers_is_traced():
    def outer(x):
        def helper():
            return math.sin(x)

        rrule.register(helper)(lambda: (helper(), lambda y_bar: (NoTangent(),)))
        return helper()

    assert grad(outer)(0.5) == pytest.approx(math.cos(0.5))
