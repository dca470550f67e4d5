"""Rule registration and lookup: specificity, ambiguity, opt-out, configs, callables."""

import fractions
import numbers
import re
import warnings
from typing import Union

import numpy as np
import pytest

from chainrules import (
    AmbiguityError,
    HasForwardsMode,
    HasReverseMode,
    NoTangent,
    RuleConfig,
    RuleOverwriteWarning,
    RuleRegistrationError,
    Tangent,
    frule,
    rrule,
    scoped_rules,
)


@pytest.fixture(autouse=True)
def _isolated_rules():
    with scoped_rules():
        yield


def f(*args):
    return args


NAME = f"{f.__module__}.f"


def tagged(tag):
    """An rrule returning `tag` as its pullback, to see which rule was chosen."""

    def rule(*args, **kwargs):
        return f(*args), tag

    return rule


def chosen(*args, **kwargs):
    out = rrule(f, *args, **kwargs)
    return None if out is None else out[1]


def test_no_rule_returns_none():
    assert rrule(f, 1.0) is None
    assert frule((NoTangent(), 1.0), f, 1.0) is None
    assert rrule(len, [1]) is None or rrule.has_rules(len)


def test_annotation_dispatch_and_specificity():
    @rrule.register(f)
    def any_rule(x):
        return x, "object"

    @rrule.register(f)
    def real_rule(x: numbers.Real):
        return x, "Real"

    @rrule.register(f)
    def float_rule(x: float):
        return x, "float"

    assert chosen(1.0) == "float"
    assert chosen(1) == "float"  # `float` matches what numbers.Real does, ints included
    assert chosen(np.float32(1)) == "float"
    assert chosen(True) == "Real"  # bools match `int` only
    assert chosen(fractions.Fraction(1, 2)) == "float"
    assert chosen("s") == "object"
    assert chosen(np.float64(1)) == "float"


def test_number_annotations_match_as_the_number_abcs_say():
    @rrule.register(f)
    def int_rule(n: int):
        return n, "int"

    @rrule.register(f)
    def float_rule(x: float):
        return x, "float"

    @rrule.register(f)
    def complex_rule(z: complex):
        return z, "complex"

    @rrule.register(f)
    def float32_rule(x: np.float32):
        return x, "float32"

    assert chosen(np.int64(3)) == "int"
    assert chosen(np.uint8(3)) == "int"
    assert chosen(True) == "int"
    assert chosen(3) == "int"
    assert chosen(np.float16(1)) == "float"
    assert chosen(np.float32(1)) == "float32"  # a concrete class beats the number tower
    assert chosen(np.complex64(1)) == "complex"
    assert chosen(np.bool_(True)) is None
    assert chosen(np.ones(2)) is None
    assert rrule.ambiguities() == []
    assert {i.signature() for i in rrule.registered() if i.function is f} == {
        f"{NAME}(int)", f"{NAME}(float)", f"{NAME}(complex)", f"{NAME}(float32)"}


def test_arity_and_defaults():
    @rrule.register(f)
    def one_or_two(x: float, axis: int = 0):
        return x, "1-2"

    @rrule.register(f)
    def var_rule(*xs: float):
        return xs, "var"

    assert chosen(1.0) == "1-2"  # fixed arity beats varargs
    assert chosen(1.0, 2) == "1-2"
    assert chosen(1.0, 2.0, 3.0) == "var"
    assert chosen() == "var"


def test_union_and_optional_annotations_expand():
    @rrule.register(f)
    def union_rule(x: Union[int, str], y: float | None = None):  # noqa: UP007
        return x, "union"

    @rrule.register(f)
    def pipe_rule(x: bytes | bytearray):
        return x, "pipe"

    assert chosen(1) == "union"
    assert chosen("a", None) == "union"
    assert chosen("a", 1.0) == "union"
    assert chosen(b"x") == "pipe" and chosen(bytearray()) == "pipe"
    assert chosen(1.0) is None


def test_explicit_types_and_trailing_ellipsis():
    rrule.register(f, float, float)(tagged("two floats"))
    rrule.register(f, str, ...)(tagged("str then anything"))
    assert chosen(1.0, 2.0) == "two floats"
    assert chosen(1.0) is None
    assert chosen("a", 1, [2]) == "str then anything"


def test_generic_alias_dispatches_on_origin():
    @rrule.register(f)
    def list_rule(x: list[float]):
        return x, "list"

    assert chosen([1.0]) == "list"


def test_ambiguity_error_names_candidates():
    rrule.register(f, float, object)(tagged("a"))
    rrule.register(f, object, float)(tagged("b"))
    with pytest.raises(AmbiguityError) as info:
        chosen(1.0, 2.0)
    msg = str(info.value)
    assert f"rrule for {NAME}(float, float) is ambiguous" in msg
    assert "f(float, object)" in msg and "f(object, float)" in msg
    assert "Register a rule for the exact signature (float, float)" in msg
    assert info.value.arg_types == (float, float)
    # a tie-breaker resolves it, and ambiguities() then finds nothing for f
    rrule.register(f, float, float)(tagged("exact"))
    assert chosen(1.0, 2.0) == "exact"


def test_ambiguities_lists_unresolved_pairs():
    rrule.register(f, float, object)(tagged("a"))
    rrule.register(f, object, float)(tagged("b"))
    pairs = [(a.signature(), b.signature()) for a, b in rrule.ambiguities() if a.function is f]
    assert pairs == [(f"{NAME}(float, object)", f"{NAME}(object, float)")]
    rrule.register(f, float, float)(tagged("exact"))
    assert [p for p in rrule.ambiguities() if p[0].function is f] == []


def test_builtin_rule_set_has_no_ambiguities():
    assert rrule.ambiguities() == []
    assert frule.ambiguities() == []


def test_same_signature_replaces_with_warning():
    rrule.register(f, float)(tagged("old"))
    with pytest.warns(RuleOverwriteWarning, match=r"f\(float\): a rrule was already registered"):
        rrule.register(f, float)(tagged("new"))
    assert chosen(1.0) == "new"
    assert len([i for i in rrule.registered() if i.function is f]) == 1


def test_registering_the_same_rule_twice_is_silent():
    rule = tagged("same")
    rrule.register(f, float)(rule)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rrule.register(f, float)(rule)


def test_cache_is_invalidated_by_registration():
    rrule.register(f, object)(tagged("generic"))
    assert chosen(1.0) == "generic"
    rrule.register(f, float)(tagged("specific"))
    assert chosen(1.0) == "specific"


def test_misses_are_cached_and_stay_correct():
    assert chosen(1.0) is None
    assert chosen(1.0) is None
    rrule.register(f, float)(tagged("late"))
    assert chosen(1.0) == "late"


@pytest.mark.parametrize("kwargs", [{}, {"scale": 2.0}])
@pytest.mark.parametrize("args", [("s",), ("s", 1.0), ("s", 1.0, 2.0)])
def test_cached_misses_answer_none_with_and_without_kwargs(args, kwargs):
    rrule.register(f, float)(lambda x: (x, "one"))
    frule.register(f, float)(lambda dargs, x: (x, "one"))
    assert rrule(f, 1.0) == (1.0, "one")
    dargs = (NoTangent(),) * (len(args) + 1)
    for _ in range(3):  # the first call fills the fast cache, the later ones read it
        assert rrule(f, *args, **kwargs) is None
        assert frule(dargs, f, *args, **kwargs) is None


def test_opt_out():
    rrule.register(f, np.ndarray)(tagged("generic"))

    class MyArray(np.ndarray):
        pass

    rrule.opt_out(f, MyArray)
    plain = np.zeros(2)
    mine = plain.view(MyArray)
    assert chosen(plain) == "generic"
    assert chosen(mine) is None
    assert rrule.is_opted_out(f, mine)
    assert not rrule.is_opted_out(f, plain)
    assert not rrule.is_opted_out(print, plain)


def test_opt_out_needs_types_error():
    with pytest.raises(RuleRegistrationError, match=re.escape(f"rrule.opt_out({NAME}) needs the argument types")):
        rrule.opt_out(f)


def test_kwargs_are_passed_not_dispatched():
    @rrule.register(f)
    def kw_rule(x: float, *, scale=1.0):
        return x * scale, "kw"

    y, tag = rrule(f, 2.0, scale=3.0)
    assert (y, tag) == (6.0, "kw")


# --- configs ------------------------------------------------------------------------------


class ReverseConfig(RuleConfig, HasReverseMode):
    pass


class ForwardConfig(RuleConfig, HasForwardsMode):
    pass


def test_config_rules_tried_first_then_config_free():
    @rrule.register(f)
    def plain(x: float):
        return x, "plain"

    @rrule.register(f, config=HasReverseMode)
    def with_config(config, x):
        assert isinstance(config, ReverseConfig)
        return x, "config"

    assert rrule(ReverseConfig(), f, 1.0)[1] == "config"  # even though less specific in x
    assert rrule(ForwardConfig(), f, 1.0)[1] == "plain"  # config lacks the feature
    assert rrule(f, 1.0)[1] == "plain"  # no config: config rules never apply


def test_config_rule_for_frule_receives_config_then_tangents():
    @frule.register(f, config=HasForwardsMode)
    def fwd(config, dargs, x):
        return x, ("fwd", type(config).__name__, dargs[1])

    y, tag = frule(ForwardConfig(), (NoTangent(), 2.0), f, 1.0)
    assert tag == ("fwd", "ForwardConfig", 2.0)
    assert frule((NoTangent(), 2.0), f, 1.0) is None


def test_config_must_be_a_class_error():
    with pytest.raises(RuleRegistrationError, match="config= must be a class"):
        rrule.register(f, config=ReverseConfig())(tagged("x"))


# --- constructors, callable objects, subclasses -------------------------------------------


class Base:
    def __init__(self, a):
        self.a = a

    def __call__(self, x):
        return self.a * x


class Child(Base):
    pass


def test_constructor_rule_is_for_the_class_only():
    rrule.register(Base)(tagged("ctor"))
    assert rrule(Base, 1.0)[1] == "ctor"
    assert rrule(Child, 1.0) is None


def test_constructor_rule_for_subclasses():
    rrule.register(Base, subclasses=True)(tagged("ctor+subclasses"))
    assert rrule(Child, 1.0)[1] == "ctor+subclasses"
    assert rrule(Base, 1.0)[1] == "ctor+subclasses"


def test_call_rule_receives_instance_and_applies_to_subclasses():
    @rrule.register_call(Base)
    def call_rule(obj, x: float):
        def call_pullback(y_bar):
            return Tangent[type(obj)](a=y_bar * x), y_bar * obj.a

        return obj(x), call_pullback

    y, pullback = rrule(Child(3.0), 2.0)
    assert y == 6.0
    obj_bar, x_bar = pullback(1.0)
    assert obj_bar == Tangent[Child](a=2.0) and x_bar == 3.0
    assert rrule(Base, 2.0) is None  # a call rule is not a constructor rule


def test_call_rule_nearest_class_wins():
    rrule.register_call(Base)(lambda obj, x: (x, "base"))
    rrule.register_call(Child)(lambda obj, x: (x, "child"))
    assert rrule(Child(1.0), 1.0)[1] == "child"
    assert rrule(Base(1.0), 1.0)[1] == "base"


def test_frule_call_rule_gets_tangents_then_instance():
    @frule.register_call(Base)
    def call_frule(dargs, obj, x):
        obj_dot, x_dot = dargs[0], dargs[1]
        return obj(x), obj_dot.a * x + obj.a * x_dot

    y, y_dot = frule((Tangent[Base](a=1.0), 1.0), Base(2.0), 3.0)
    assert (y, y_dot) == (6.0, 5.0)


def test_rule_on_type_error():
    with pytest.raises(RuleRegistrationError, match="would catch every constructor call"):
        rrule.register(type)
    with pytest.raises(RuleRegistrationError, match="would catch every constructor call"):
        rrule.register_call(type)


def test_register_call_needs_a_class_error():
    with pytest.raises(RuleRegistrationError, match="register_call takes a class"):
        rrule.register_call(f)


def test_subclasses_needs_a_class_error():
    with pytest.raises(RuleRegistrationError, match="subclasses=True applies to classes"):
        rrule.register(f, subclasses=True)


def test_unhashable_target_error():
    with pytest.raises(RuleRegistrationError, match="cannot register a rrule for an unhashable list"):
        rrule.register([])


def test_bad_annotation_error():
    with pytest.raises(RuleRegistrationError, match="cannot dispatch on the annotation"):
        rrule.register(f)(lambda x: x).__call__  # no annotation: fine

        @rrule.register(f)
        def bad(x: "3"):
            return x


def test_missing_leading_parameter_error():
    with pytest.raises(RuleRegistrationError, match="must take 1 leading positional parameter"):

        @frule.register(f)
        def no_dargs():
            return None


def test_registered_lists_rules_with_kinds():
    rrule.register(f, float)(tagged("x"))
    rrule.opt_out(f, int)
    infos = {(i.types, i.kind) for i in rrule.registered() if i.function is f}
    assert infos == {((float,), "rule"), ((int,), "opt_out")}
    sig = next(i for i in rrule.registered() if i.function is f and i.kind == "rule").signature()
    assert sig == f"{NAME}(float)"


def test_has_rules():
    assert not rrule.has_rules(f)
    rrule.register(f, float)(tagged("x"))
    assert rrule.has_rules(f)
    rrule.register_call(Base)(tagged("y"))
    assert rrule.has_rules(Child(1.0))


def test_entry_point_argument_errors():
    with pytest.raises(TypeError, match=re.escape("rrule(config, f, *args) is missing the function f")):
        rrule(ReverseConfig())
    with pytest.raises(TypeError, match="frule expects the tangents and the function"):
        frule((NoTangent(),))


def test_fast_miss_path_never_hides_a_rule():
    def no_rules_here(x):
        return x

    assert rrule(no_rules_here, 1.0) is None  # plain functions join the "no rules" set
    rrule.register(f, float, float, float)(tagged("three"))
    assert chosen(1.0, 2.0, 3.0) == "three"  # f is a function too, but it has rules
    assert rrule(ReverseConfig(), f, 1.0, 2.0, 3.0)[1] == "three"
    assert frule(ForwardConfig(), (NoTangent(), 1.0), no_rules_here, 1.0) is None


def test_signature_reader_agrees_with_inspect_on_every_registered_rule():
    # registration reads plain functions' parameters from their code objects; it must
    # see what inspect.signature(eval_str=True) sees, defaults and *args included
    import inspect

    from chainrules import frule, rrule
    from chainrules.core import _signatures

    def view(params):
        return [(p.name, p.annotation, p.default, p.kind == inspect.Parameter.VAR_POSITIONAL)
                for p in params]

    def with_varargs(dargs, x: float, n: int = 2, *rest: float, key=None):
        return x

    checked = 0
    for rule in [with_varargs, *(info.rule for t in (rrule, frule) for info in t.registered())]:
        fast = _signatures._plain_function_params(rule)
        if fast is None:
            continue
        slow = [p for p in inspect.signature(rule, eval_str=True).parameters.values()
                if p.kind in _signatures._POSITIONAL or p.kind == p.VAR_POSITIONAL]
        assert view(fast) == view(slow), rule
        checked += 1
    assert checked > 500
