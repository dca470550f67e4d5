"""scalar_rule, non_differentiable, not_implemented, ignore_derivatives, configs, debug mode."""

import math
import re

import numpy as np
import pytest

from chainrules import (
    InvalidTangentError,
    MissingCapabilityError,
    NoTangent,
    NotImplementedTangent,
    OutArgumentError,
    PullbackError,
    RuleConfig,
    RuleRegistrationError,
    Tangent,
    Thunk,
    ZeroTangent,
    debug_mode,
    derivatives_given_output,
    frule,
    frule_via_ad,
    ignore_derivatives,
    non_differentiable,
    not_implemented,
    rrule,
    rrule_via_ad,
    scalar_rule,
    scoped_rules,
)
from chainrules.core import HasForwardsMode, HasReverseMode, NoReverseMode, has_scalar_rule
from chainrules.core._helpers import _quiet


@pytest.fixture(autouse=True)
def _isolated_rules():
    with scoped_rules():
        yield


def mul(x, y):
    return np.multiply(x, y)


def test_scalar_rule_python_scalars():
    def cube(x):
        return x**3

    scalar_rule(cube, lambda x: 3 * x**2)
    assert frule((NoTangent(), 2.0), cube, 2.0) == (8.0, 24.0)
    y, pullback = rrule(cube, 2.0)
    assert pullback(1.0) == (NoTangent(), 12.0)
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent())
    assert pullback(Thunk(lambda: 2.0)) == (NoTangent(), 24.0)
    assert has_scalar_rule(cube)


def test_scalar_rule_uses_output():
    def myexp(x):
        return np.exp(x)

    seen = []

    def partial(x, *, y):
        seen.append(y)
        return y

    scalar_rule(myexp, partial)
    y, pullback = rrule(myexp, 0.5)
    assert pullback(1.0)[1] == pytest.approx(math.exp(0.5))
    assert seen == [y]
    assert derivatives_given_output(y, myexp, 0.5) == ((y,),)


def test_scalar_rule_broadcasting_and_dtypes():
    scalar_rule(mul, lambda x, y: (y, x))
    x = np.arange(1.0, 4.0, dtype=np.float32).reshape(3, 1)
    y = np.array([2.0, 3.0])
    out, pullback = rrule(mul, x, y)
    _, x_bar, y_bar = pullback(np.ones((3, 2)))
    assert x_bar.shape == (3, 1) and x_bar.dtype == np.float32
    np.testing.assert_allclose(x_bar, np.full((3, 1), 5.0))
    assert y_bar.shape == (2,)
    np.testing.assert_allclose(y_bar, np.full(2, 6.0))
    # frule: a tangent on one argument only is broadcast to the output shape
    _, out_dot = frule((NoTangent(), ZeroTangent(), np.ones(2)), mul, x, y)
    assert out_dot.shape == (3, 2)
    np.testing.assert_allclose(out_dot, np.broadcast_to(x, (3, 2)))


def test_scalar_rule_all_zero_tangents_give_zero():
    scalar_rule(mul, lambda x, y: (y, x))
    _, y_dot = frule((NoTangent(), ZeroTangent(), NoTangent()), mul, 1.0, 2.0)
    assert y_dot is ZeroTangent()


def test_scalar_rule_complex_conjugates_partials():
    scalar_rule(mul, lambda x, y: (y, x))
    a, b = 1 + 2j, 3 - 1j
    _, pullback = rrule(mul, a, b)
    _, a_bar, b_bar = pullback(1.0 + 0j)
    assert a_bar == np.conj(b) and b_bar == np.conj(a)


def test_scalar_rule_int_argument_is_differentiable_like_float():
    scalar_rule(mul, lambda x, y: (y, x))
    _, pullback = rrule(mul, 2, 3.0)
    _, x_bar, _ = pullback(1.0)
    assert x_bar == 3.0 and isinstance(x_bar, float)


def test_scalar_rule_integer_array_gets_no_tangent():
    scalar_rule(mul, lambda x, y: (y, x))
    _, pullback = rrule(mul, np.arange(3), np.ones(3))
    assert pullback(np.ones(3))[1] is NoTangent()


def test_scalar_rule_several_outputs():
    def sincos(x):
        return (math.sin(x), math.cos(x))

    scalar_rule(sincos, lambda x: (math.cos(x), -math.sin(x)), nout=2)
    y, y_dot = frule((NoTangent(), 1.0), sincos, 0.0)
    assert y == (0.0, 1.0) and y_dot == Tangent[tuple](1.0, -0.0)
    _, pullback = rrule(sincos, 0.0)
    assert pullback(Tangent[tuple](1.0, 1.0)) == (NoTangent(), 1.0)
    assert pullback((ZeroTangent(), 2.0)) == (NoTangent(), 0.0)
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent())


def test_scalar_rule_several_outputs_bad_cotangent_error():
    def two(x):
        return (x, x)

    scalar_rule(two, lambda x: (1.0, 1.0), nout=2)
    _, pullback = rrule(two, 1.0)
    with pytest.raises(InvalidTangentError,
                       match=r"y_bar of the output is float; expected a tuple or a Tangent"):
        pullback(1.0)


def test_scalar_rule_several_outputs_bad_partials_error():
    def two(x):
        return (x, x)

    scalar_rule(two, lambda x: 1.0, nout=2)
    _, pullback = rrule(two, 1.0)
    with pytest.raises(TypeError, match="must return a tuple of 2 entries"):
        pullback((1.0, 1.0))


def test_scalar_rule_refuses_out():
    scalar_rule(mul, lambda x, y: (y, x))
    msg = f"the rule for {__name__}.mul does not support out="
    with pytest.raises(OutArgumentError, match=re.escape(msg)):
        rrule(mul, np.ones(2), np.ones(2), out=np.empty(2))
    with pytest.raises(OutArgumentError, match="does not support where=: where= leaves"):
        frule((NoTangent(), np.ones(2), np.ones(2)), mul, np.ones(2), np.ones(2),
              where=np.ones(2, bool))


def test_scalar_rule_refuses_positional_out_for_ufuncs():
    with pytest.raises(OutArgumentError, match=re.escape("numpy.sin does not support out=")):
        rrule(np.sin, np.ones(2), np.empty(2))


def test_scalar_rule_list_used_as_array():
    def mysin(x):
        return np.sin(x)

    scalar_rule(mysin, lambda x: np.cos(x))
    _, pullback = rrule(mysin, [0.1, 0.2])
    x_bar = pullback(np.ones(2))[1]
    assert type(x_bar) is Tangent[list]
    np.testing.assert_allclose(x_bar.backing, [np.cos(0.1), np.cos(0.2)])
    _, y_dot = frule((NoTangent(), Tangent[list](1.0, 2.0)), mysin, [0.1, 0.2])
    np.testing.assert_allclose(y_dot, [np.cos(0.1), 2 * np.cos(0.2)])


def test_scalar_rule_no_warning_at_singular_points():
    def root(x):
        return np.sqrt(x)

    scalar_rule(root, lambda x, *, y: 0.5 / y)
    _, pullback = rrule(root, np.array([0.0, 1.0]))  # warnings are errors in this suite
    np.testing.assert_array_equal(pullback(np.ones(2))[1], [np.inf, 0.5])


def test_scalar_rule_registration_errors():
    with pytest.raises(RuleRegistrationError, match="must name each argument"):
        scalar_rule(mul, lambda *xs: xs)
    with pytest.raises(RuleRegistrationError, match="takes no arguments"):
        scalar_rule(mul, lambda: 1.0)
    with pytest.raises(RuleRegistrationError, match="2 types for a partials function of 1"):
        scalar_rule(mul, lambda x: 1.0, types=(float, float))
    with pytest.raises(RuleRegistrationError, match="nout must be >= 1"):
        scalar_rule(mul, lambda x: 1.0, nout=0)
    with pytest.raises(RuleRegistrationError, match="cannot read the signature"):
        scalar_rule(mul, max)


def test_derivatives_given_output_unknown_error():
    with pytest.raises(KeyError, match="has no scalar_rule"):
        derivatives_given_output(1.0, print, 1.0)


def test_non_differentiable():
    def count(x):
        return len(x)

    non_differentiable(count)
    y, pullback = rrule(count, [1.0, 2.0])
    assert y == 2 and pullback(1.0) == (NoTangent(), NoTangent())
    assert frule((NoTangent(), NoTangent()), count, [1.0]) == (1, NoTangent())
    assert {i.kind for i in rrule.registered() if i.function is count} == {"non_differentiable"}


def test_non_differentiable_by_types():
    def pick(x):
        return x

    non_differentiable(pick, str)
    assert rrule(pick, "a") is not None
    assert rrule(pick, 1.0) is None


def test_not_implemented_records_info_and_place():
    t = not_implemented("derivative w.r.t. order")
    assert t.info == "derivative w.r.t. order"
    assert t.where.endswith(f"test_helpers.py:{t.where.rsplit(':', 1)[1]}")
    assert isinstance(t, NotImplementedTangent)


def test_ignore_derivatives():
    assert ignore_derivatives(lambda: 3.0) == 3.0
    assert ignore_derivatives(2.0) == 2.0
    x = np.ones(2)
    assert ignore_derivatives(x) is x
    y, pullback = rrule(ignore_derivatives, 2.0)
    assert y == 2.0 and pullback(1.0) == (NoTangent(), NoTangent())


# --- configs ------------------------------------------------------------------------------


class Reverse(RuleConfig, HasReverseMode):
    def rrule_via_ad(self, f, *args, **kwargs):
        return ("via", f, args)


class Forward(RuleConfig, HasForwardsMode):
    def frule_via_ad(self, dargs, f, *args, **kwargs):
        return ("fvia", dargs, f, args)


def test_via_ad_calls_the_config():
    assert rrule_via_ad(Reverse(), abs, 1.0) == ("via", abs, (1.0,))
    assert frule_via_ad(Forward(), (NoTangent(), 1.0), abs, 1.0)[0] == "fvia"


def test_rrule_via_ad_missing_capability_error():
    msg = "Forward cannot rrule_via_ad: it does not define Forward.rrule_via_ad. An AD supporting this declares the HasReverseMode feature"
    with pytest.raises(MissingCapabilityError, match=re.escape(msg)):
        rrule_via_ad(Forward(), abs, 1.0)


def test_frule_via_ad_missing_capability_error():
    with pytest.raises(MissingCapabilityError, match="Reverse cannot frule_via_ad"):
        frule_via_ad(Reverse(), (NoTangent(), 1.0), abs, 1.0)


def test_no_reverse_mode_feature_error():
    class Declared(RuleConfig, NoReverseMode):
        def rrule_via_ad(self, f, *args):
            return "should not be called"

    with pytest.raises(MissingCapabilityError, match="Declared cannot rrule_via_ad"):
        rrule_via_ad(Declared(), abs, 1.0)


def test_via_ad_needs_a_config_error():
    with pytest.raises(TypeError, match="rrule_via_ad expects a RuleConfig"):
        rrule_via_ad(abs, 1.0)
    with pytest.raises(TypeError, match="frule_via_ad expects a RuleConfig"):
        frule_via_ad(abs, (1.0,), 1.0)


# --- debug mode ---------------------------------------------------------------------------


@pytest.fixture
def debug():
    was = debug_mode()
    debug_mode(True)
    yield
    debug_mode(was)


def bad(x):
    return x


def test_debug_wrong_number_of_cotangents_error(debug):
    @rrule.register(bad)
    def bad_rrule(x):
        return x, lambda y_bar: (NoTangent(),)

    msg = f"the pullback of the rrule for {__name__}.bad returned 1 entries for a call with 1 positional argument(s); it must return 2"
    with pytest.raises(PullbackError, match=re.escape(msg)):
        rrule(bad, 1.0)[1](1.0)


def test_debug_non_tuple_pullback_error(debug):
    @rrule.register(bad)
    def bad_rrule(x):
        return x, lambda y_bar: [NoTangent(), y_bar]

    with pytest.raises(PullbackError, match="returned list; it must return a tuple"):
        rrule(bad, 1.0)[1](1.0)


def test_debug_wrong_shape_error(debug):
    @rrule.register(bad)
    def bad_rrule(x):
        return x, lambda y_bar: (NoTangent(), np.ones(5))

    with pytest.raises(PullbackError, match=r"cotangent of shape \(5,\) for argument 1 of shape \(3,\)"):
        rrule(bad, np.ones(3))[1](np.ones(3))


def test_debug_rrule_not_a_pair_error(debug):
    @rrule.register(bad)
    def bad_rrule(x):
        return x

    with pytest.raises(PullbackError, match=r"returned float; an rrule returns a tuple \(y, pullback\)"):
        rrule(bad, 1.0)


def test_debug_frule_result_and_tangent_count_errors(debug):
    @frule.register(bad)
    def bad_frule(dargs, x):
        return x

    with pytest.raises(PullbackError, match=r"an frule returns a tuple \(y, y_dot\)"):
        frule((NoTangent(), 1.0), bad, 1.0)
    with pytest.raises(PullbackError, match=r"got tangents 1; pass a tuple \(self_dot, \*arg_dots\) with 2"):
        frule((1.0,), bad, 1.0)


def test_debug_mode_switch_keeps_lookups_correct():
    @rrule.register(bad)
    def bad_rrule(x):
        return x, lambda y_bar: (NoTangent(),)

    rrule(bad, 1.0)  # fills the fast cache outside debug mode
    was = debug_mode()
    debug_mode(True)
    try:
        with pytest.raises(PullbackError):
            rrule(bad, 1.0)[1](1.0)
    finally:
        debug_mode(was)
    assert rrule(bad, 1.0)[1](1.0) == (NoTangent(),)


def test_scalar_rule_lists_reach_the_partials_as_arrays():
    def twice(x):
        return np.multiply(2.0, x)

    # on a list, x + x would concatenate: the partials must see an array
    scalar_rule(twice, lambda x: (x + x) / x)
    _, pullback = rrule(twice, [1.0, 3.0])
    x_bar = pullback(np.ones(2))[1]
    assert x_bar == Tangent[list](2.0, 2.0)
    _, y_dot = frule((NoTangent(), Tangent[tuple](1.0, 0.5)), twice, (1.0, 3.0))
    np.testing.assert_array_equal(y_dot, [2.0, 1.0])


def test_scalar_rule_list_of_integers_gets_no_tangent():
    scalar_rule(mul, lambda x, y: (y, x))
    _, pullback = rrule(mul, [1, 2], [0.5, 1.5])
    bars = pullback(np.ones(2))
    assert bars[1] == NoTangent()
    assert bars[2] == Tangent[list](1.0, 2.0)


def test_scalar_rule_refuses_positional_out_after_a_list():
    with pytest.raises(OutArgumentError, match=re.escape("numpy.sin does not support out=")):
        rrule(np.sin, [0.5, 1.0], np.empty(2))


def test_scalar_rule_elementwise_partials_are_quiet_wherever_they_run():
    from chainrules.core import scalar_partials as _partials

    def root(x):
        return np.sqrt(x)

    scalar_rule(root, lambda x, *, y: 0.5 / y, elementwise=True)
    # an AD's fused backward calls the stored partials directly (warnings are errors here)
    p = _partials(root).fn(np.array([0.0, 4.0]), y=np.array([0.0, 2.0]))
    np.testing.assert_array_equal(p, [np.inf, 0.25])
    scalar_rule(cube := (lambda x: x ** 3), lambda x: 3 * x ** 2)
    assert _partials(cube).fn(2.0) == 12.0  # plain Python functions are not wrapped


def test_lazily_loaded_rules_outlive_a_scope_open_when_they_load():
    from chainrules import rrule, scoped_rules
    from chainrules.core import persistent_rules

    def scaled(x):
        return 5 * x

    def scoped_only(x):
        return x

    with scoped_rules():
        with persistent_rules():
            rrule.register(scaled)(lambda x: (5 * x, lambda y_bar: (None, 5 * y_bar)))
        rrule.register(scoped_only)(lambda x: (x, lambda y_bar: (None, y_bar)))
    assert rrule.has_rules(scaled)
    assert not rrule.has_rules(scoped_only)


def test_partials_are_quiet_and_leave_the_callers_error_state(recwarn):
    """An infinite partial (sqrt at 0) is the answer, not a warning or an error, whatever
    error state the caller set; and the caller's state is the same afterwards."""
    sqrt_partial = _quiet(lambda x: 0.5 / np.sqrt(x))
    with np.errstate(divide="raise", invalid="raise"):
        assert np.isinf(sqrt_partial(np.array([0.0, 1.0]))[0])
        assert np.geterr()["divide"] == "raise"
        with pytest.raises(FloatingPointError):
            np.array([1.0]) / 0.0
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_derived_cache_is_emptied_by_a_registration():
    """An AD's derived facts never outlive the registration that would change them."""
    from chainrules import rrule, scoped_rules
    from chainrules.core import derived_cache

    def f(x):
        return x

    get, fill = derived_cache(rrule, lambda f, types, config, hit: hit is not None)
    with scoped_rules():
        assert fill((f, float), f, (float,), None) is False
        assert get((f, float)) is False
        rrule.register(f, float)(lambda x: (x, lambda y_bar: (None, y_bar)))
        assert get((f, float)) is None  # emptied: the next read derives again
        assert fill((f, float), f, (float,), None) is True
    assert get((f, float)) is None  # and emptied when the scope removed the rule


def test_scalar_partials_belong_to_their_rule():
    """Two scalar_rules of one function (for two argument types) keep their own partials,
    and a scoped registration's partials end with its scope: an AD that asks for the
    partials of the rule a lookup returned gets that rule's."""
    import operator

    from chainrules import rrule, scoped_rules
    from chainrules.core import cached_lookup, scalar_partials

    class Num(float):
        pass

    lookup = cached_lookup(rrule)
    plain = lookup(operator.mul, (float, float), None)[0]
    with scoped_rules():
        scalar_rule(operator.mul, lambda a, b: (7.0, 7.0), types=(float, Num))
        mine = lookup(operator.mul, (float, Num), None)[0]
        assert scalar_partials(operator.mul, mine)(6.0, (2.0, Num(3.0))) == ((7.0, 7.0),)
        assert scalar_partials(operator.mul, plain)(6.0, (2.0, 3.0)) == ((3.0, 2.0),)
    assert scalar_partials(operator.mul, mine) is None  # no longer registered
    assert scalar_partials(operator.mul)(6.0, (2.0, 3.0)) == ((3.0, 2.0),)


def _logpow(x, p):
    return x ** p


def _logpow_partials(seen):
    def partials(x, p, *, y, wrt):
        seen.append(wrt)
        dx = p * x ** (p - 1)
        return dx, (y * np.log(x) if wrt[1] else None)

    return partials


def test_scalar_rule_wrt_names_the_needed_partials():
    seen = []
    scalar_rule(_logpow, _logpow_partials(seen))
    # an frule needs the partials of the arguments with a nonzero tangent only
    y, y_dot = frule((NoTangent(), 1.0, ZeroTangent()), _logpow, 2.0, 3.0)
    assert (y, y_dot) == (8.0, 12.0)
    y, y_dot = frule((NoTangent(), 0.0, 1.0), _logpow, 2.0, 3.0)
    assert y_dot == pytest.approx(8.0 * math.log(2.0))
    assert seen == [(True, False), (True, True)]
    # an rrule's pullback returns every cotangent: every partial
    seen.clear()
    _, pullback = rrule(_logpow, 2.0, 3.0)
    assert pullback(1.0)[1:] == pytest.approx((12.0, 8.0 * math.log(2.0)))
    assert derivatives_given_output(8.0, _logpow, 2.0, 3.0)[0][0] == 12.0
    assert seen == [(True, True), (True, True)]


def test_scalar_rule_with_wrt_passes_the_testers():
    from chainrules.testing import test_frule, test_rrule

    scalar_rule(_logpow, _logpow_partials([]))
    x = np.array([0.7, 1.3, 2.1])
    test_frule(_logpow, x, 1.7)
    test_rrule(_logpow, x, 1.7)
    test_frule(_logpow, 1.3, 2.5)
    test_rrule(_logpow, 1.3, 2.5)
