"""Calls of bound methods find the rules registered for the function they wrap.

``obj.method`` is a new object on every attribute access, so a rule is registered on
``Cls.method`` (receiving the instance first); ``rrule(obj.method, x)`` and
``frule(dargs, obj.method, x)`` use it, with the instance's (co)tangent standing for
the bound method's own.
"""

import pytest

from chainrules import (
    HasReverseMode,
    NoTangent,
    RuleConfig,
    Tangent,
    ZeroTangent,
    debug_mode,
    frule,
    rrule,
    scoped_rules,
)


@pytest.fixture(autouse=True)
def _isolated_rules():
    with scoped_rules():
        yield


class Scale:
    def __init__(self, a):
        self.a = a

    def apply(self, x):
        return self.a * x

    def other(self, x):
        return x


class Sub(Scale):
    pass


def _register():
    @rrule.register(Scale.apply)
    def apply_rrule(obj: Scale, x: float):
        def apply_pullback(y_bar):
            return NoTangent(), Tangent[Scale](a=y_bar * x), y_bar * obj.a

        return obj.apply(x), apply_pullback

    @frule.register(Scale.apply)
    def apply_frule(dargs, obj: Scale, x: float):
        _, obj_dot, x_dot = dargs
        a_dot = obj_dot.a if isinstance(obj_dot, Tangent) else 0.0
        return obj.apply(x), a_dot * x + obj.a * x_dot


def test_rrule_of_bound_method_uses_the_function_rule():
    _register()
    y, pullback = rrule(Scale(3.0).apply, 2.0)
    assert y == 6.0
    self_bar, x_bar = pullback(1.0)
    assert self_bar == Tangent[Scale](a=2.0)  # the instance's cotangent
    assert x_bar == 3.0
    assert "apply_pullback" in pullback.__qualname__


def test_frule_of_bound_method_passes_its_tangent_as_the_instance_tangent():
    _register()
    assert frule((NoTangent(), 1.0), Scale(3.0).apply, 2.0) == (6.0, 3.0)
    assert frule((Tangent[Scale](a=1.0), 0.0), Scale(3.0).apply, 2.0) == (6.0, 2.0)


def test_has_rules_of_bound_method():
    obj = Scale(3.0)
    assert not rrule.has_rules(obj.apply)
    _register()
    assert rrule.has_rules(obj.apply) and frule.has_rules(obj.apply)
    assert not rrule.has_rules(obj.other)


def test_bound_method_of_a_subclass_instance():
    _register()
    y, pullback = rrule(Sub(2.0).apply, 5.0)
    assert y == 10.0 and pullback(1.0)[1] == 2.0


def test_bound_method_without_rule_is_a_miss():
    _register()
    obj = Scale(3.0)
    assert rrule(obj.other, 2.0) is None
    assert frule((NoTangent(), 1.0), obj.other, 2.0) is None
    assert rrule(obj.apply, "not a float") is None  # the function's rule does not apply


def test_bound_method_miss_then_registration():
    obj = Scale(3.0)
    assert rrule(obj.apply, 2.0) is None  # no bound-method miss is remembered by type
    _register()
    assert rrule(obj.apply, 2.0)[0] == 6.0


def test_bound_method_with_config_rule():
    class Config(RuleConfig, HasReverseMode):
        pass

    @rrule.register(Scale.other, config=HasReverseMode)
    def other_rrule(config, obj, x):
        def other_pullback(y_bar):
            return NoTangent(), NoTangent(), y_bar

        return obj.other(x), other_pullback

    @frule.register(Scale.other, config=HasReverseMode)
    def other_frule(config, dargs, obj, x):
        return obj.other(x), dargs[2]

    assert rrule(Scale(1.0).other, 2.0) is None  # config-restricted
    y, pullback = rrule(Config(), Scale(1.0).other, 2.0)
    assert y == 2.0 and pullback(ZeroTangent()) == (NoTangent(), ZeroTangent())
    assert frule((NoTangent(), 1.0), Scale(1.0).other, 2.0) is None
    assert frule(Config(), (NoTangent(), 3.0), Scale(1.0).other, 2.0) == (2.0, 3.0)


def test_bound_method_in_debug_mode_checks_the_function_rule():
    _register()
    debug_mode(True)
    try:
        y, pullback = rrule(Scale(3.0).apply, 2.0)
        assert pullback(1.0)[1] == 3.0
    finally:
        debug_mode(False)
