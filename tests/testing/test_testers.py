"""test_frule / test_rrule / test_scalar: usage errors, reports, options, configs."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from chainrules import (
    NoMatchingRuleError,
    NoTangent,
    frule,
    frule_via_ad,
    rrule,
    rrule_via_ad,
    scoped_rules,
)
from chainrules.testing import (
    ADviaRuleConfig,
    FDMethod,
    TesterUsageError,
    test_frule,
    test_rrule,
    test_scalar,
    with_tangent,
)


def twice(x):
    return 2.0 * x


@rrule.register(twice)
def _(x):
    def twice_pullback(y_bar):
        return NoTangent(), 2.0 * y_bar

    return twice(x), twice_pullback


@frule.register(twice)
def _(dargs, x):
    return twice(x), 2.0 * dargs[1]


def no_rules(x):
    return x


def test_rrule_counts_primal_calls():
    r = test_rrule(twice, np.ones(1000))
    # 1 primal call + 10 for the random direction + 4 along x_bar (the step is reused):
    # O(1) in the size of x
    assert r.primal_calls == 15
    small = test_rrule(twice, np.ones(3))
    assert small.primal_calls == 15 + 3 * 4  # plus the full Jacobian, 4 calls per element
    assert "full Jacobian of argument 1" in small.checks


def test_frule_counts_primal_calls():
    assert test_frule(twice, np.ones(1000)).primal_calls == 11


def test_report_str():
    assert re.match(r"rrule of .*twice: \d+ checks passed, 15 primal calls",
                    str(test_rrule(twice, np.ones(100))))


def test_no_rrule_error():
    with pytest.raises(AssertionError, match=r"no rrule found for .*no_rules\(float\); register"):
        test_rrule(no_rules, 1.0)


def test_no_frule_error():
    with pytest.raises(AssertionError, match=r"no frule found for .*no_rules\(float\)"):
        test_frule(no_rules, 1.0)


def test_not_callable_error():
    with pytest.raises(TesterUsageError,
                       match=re.escape("test_rrule: argument 1 (f) must be callable, got float")):
        test_rrule(1.0, 2.0)


def test_fkwargs_type_error():
    with pytest.raises(TesterUsageError, match=re.escape("`fkwargs` must be a dict")):
        test_frule(twice, 1.0, fkwargs=[("a", 1)])


def test_fdm_type_error():
    with pytest.raises(TesterUsageError, match=re.escape("`fdm` must be an FDMethod")):
        test_rrule(twice, 1.0, fdm="central")


def test_bad_explicit_tangent_error():
    with pytest.raises(TesterUsageError, match=r"tangent given for argument 1 does not fit.*"
                                               r"expected shape \(3,\), got shape \(2,\)"):
        test_rrule(twice, with_tangent(np.ones(3), np.ones(2)))


def test_bad_output_tangent_error():
    with pytest.raises(TesterUsageError, match="output_tangent does not fit the output y"):
        test_rrule(twice, np.ones(3), output_tangent=np.ones(4))


def test_scalar_arg_error():
    with pytest.raises(TesterUsageError, match=re.escape("test_scalar: argument 2 (z) must be a "
                                                         "real or complex scalar, got ndarray")):
        test_scalar(twice, np.ones(2))


def test_scalar_real_and_complex():
    assert [r.mode for r in test_scalar(twice, 0.5)] == ["frule", "rrule"]
    assert [r.mode for r in test_scalar(twice, 0.5 + 1j)] == ["frule", "frule", "rrule", "rrule"]


def test_explicit_fdm_and_tolerances():
    r = test_rrule(twice, np.ones(3), fdm=FDMethod(points=7), rtol=1e-9, atol=1e-12)
    assert r.primal_calls > 0


def test_rrule_via_ad_as_rrule_f():
    # the testing config falls back to finite differences for functions without rules
    def cube(x):
        return x**3

    r = test_rrule(cube, 1.5, rrule_f=rrule_via_ad)
    assert "cotangent of argument 1" in r.checks
    test_frule(cube, 1.5, frule_f=frule_via_ad)


def test_adviaruleconfig_uses_rules_first():
    calls = []

    def traced(x):
        return 3.0 * x

    @rrule.register(traced)
    def _(x):
        calls.append(x)

        def traced_pullback(y_bar):
            return NoTangent(), 3.0 * y_bar

        return traced(x), traced_pullback

    y, pb = rrule_via_ad(ADviaRuleConfig(), traced, 2.0)
    assert calls == [2.0] and pb(1.0) == (NoTangent(), 3.0)


def test_adviaruleconfig_functor_self_bar():
    class Poly:
        def __init__(self, a):
            self.a = a

        def __call__(self, x):
            return self.a * x**2

    y, pb = rrule_via_ad(ADviaRuleConfig(), Poly(2.0), 3.0)
    self_bar, x_bar = pb(1.0)
    assert abs(self_bar.a - 9.0) < 1e-8 and abs(x_bar - 12.0) < 1e-8


def test_math_scalar_with_python_float():
    def msin(x):
        return math.sin(x)

    @rrule.register(msin)
    def _(x: float):
        def msin_pullback(y_bar):
            return NoTangent(), math.cos(x) * y_bar

        return math.sin(x), msin_pullback

    test_rrule(msin, 0.3)
    test_rrule(msin, with_tangent(1, 1.0))  # `float` matches ints, as numbers.Real does
    with pytest.raises(NoMatchingRuleError,
                       match=r"no rrule for .*msin\(ndarray\): (.|\n)*- .*msin\(float\)"):
        test_rrule(msin, np.array(0.3))  # the rule is for numbers only


def test_ad_gradient_via_rrule_f():
    # testing an AD's own gradient: rrule_f=rrule_via_ad with the AD's config
    ad = pytest.importorskip("chainrules.ad")

    def model(x, w):
        return np.tanh(x @ w).sum()

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal(3)
    report = test_rrule(model, x, w, rrule_f=rrule_via_ad, config=ad.ADConfig())
    assert "cotangent of argument 2" in report.checks
    test_frule(model, x, w, frule_f=frule_via_ad, config=ad.ADConfig())


def to_f32(x):
    return x.astype(np.float32) * 1.5


@rrule.register(to_f32)
def _(x):
    def to_f32_pullback(y_bar):
        return NoTangent(), (1.5 * np.asarray(y_bar)).astype(x.dtype)

    return to_f32(x), to_f32_pullback


def test_tolerances_follow_the_output_dtype():
    # float64 in, float32 out: float32 tolerances, else correct rules fail on rounding
    for seed in range(20):
        test_rrule(to_f32, np.random.default_rng(seed).uniform(-2, 2, 7), seed=seed)


def ravel_k(x):
    return np.ravel(x, order="K")


@rrule.register(ravel_k)
def _(x):
    def ravel_k_pullback(y_bar):
        # order="K" follows the memory layout: undo it through the strides' order
        perm = np.argsort([-abs(st) for st in x.strides], kind="stable")
        y_bar = np.asarray(y_bar).reshape([x.shape[p] for p in perm])
        return NoTangent(), np.transpose(y_bar, np.argsort(perm))

    return ravel_k(x), ravel_k_pullback


def test_perturbed_inputs_keep_their_memory_layout():
    x = np.arange(12.0).reshape(3, 4).T  # F-contiguous: ravel(order="K") follows memory
    test_rrule(ravel_k, x)


def test_arguments_held_fixed_are_not_perturbed():
    # (-2) ** (3 + h) is complex: an exponent the caller holds fixed must stay fixed.
    import operator

    from chainrules.testing import no_tangent, with_tangent

    for held in (no_tangent(3), with_tangent(3.0, 0.0), no_tangent(3.0)):
        report = test_rrule(operator.pow, -2.0, held)
        assert any("held fixed" in c for c in report.checks)
        test_frule(operator.pow, -2.0, held)


def test_dataclass_output_with_array_fields():
    import dataclasses

    from chainrules import NoTangent, Tangent, rrule, scoped_rules, unthunk

    @dataclasses.dataclass
    class Stats:
        mean: np.ndarray
        total: np.ndarray

    def stats(x):
        return Stats(np.mean(x, axis=0), np.sum(x, axis=0))

    with scoped_rules():

        @rrule.register(stats)
        def stats_rrule(x):
            n = x.shape[0]

            def stats_pullback(y_bar):
                y_bar = unthunk(y_bar)
                g = np.broadcast_to(unthunk(y_bar.mean) / n + unthunk(y_bar.total), x.shape)
                return NoTangent(), np.array(g)

            return stats(x), stats_pullback

        test_rrule(stats, np.random.default_rng(0).normal(size=(4, 3)))
        assert Tangent  # the cotangent reaches the pullback as a Tangent[Stats]


def _sum_with_corner_jump(x):
    # smooth (the sum) except on the open quadrant x0 > 0.5 and x1 > 0.5, where it
    # jumps by 100: a move along one axis never reaches it, a diagonal move does
    return np.sum(x) + 100.0 * float(min(x[0], x[1]) > 0.5)


def _register_corner_jump_rule(factor):
    @rrule.register(_sum_with_corner_jump)
    def sum_with_corner_jump_rrule(x):
        def sum_with_corner_jump_pullback(y_bar):
            return NoTangent(), np.full(x.shape, factor * y_bar)

        return _sum_with_corner_jump(x), sum_with_corner_jump_pullback


def test_rrule_small_input_trusts_element_wise_comparison_over_a_direction_crossing_a_jump():
    # the dot-product test along (1, 1) crosses the jump; the element-wise comparison
    # shows the rule is right where the primal is smooth
    with scoped_rules():
        _register_corner_jump_rule(1.0)
        test_rrule(_sum_with_corner_jump, with_tangent(np.array([0.5, 0.5]), np.ones(2)),
                   output_tangent=1.0)


def test_rrule_small_input_wrong_rule_still_fails_when_a_direction_crosses_a_jump():
    with scoped_rules():
        _register_corner_jump_rule(2.0)
        with pytest.raises(AssertionError, match="wrong cotangent for argument 1"):
            test_rrule(_sum_with_corner_jump, with_tangent(np.array([0.5, 0.5]), np.ones(2)),
                       output_tangent=1.0)


@pytest.mark.parametrize("tester", [test_rrule, test_frule, test_scalar])
def test_keyword_meant_for_f_error(tester):
    def scaled(x, beta=1.0):
        return np.sin(x) * beta

    with pytest.raises(TesterUsageError,
                       match=re.escape(f"{tester.__name__}: unknown keyword argument(s) beta=. "
                                       f"Keyword arguments of the function under test go in "
                                       f"fkwargs=, e.g. {tester.__name__}(f, x, "
                                       f"fkwargs={{'beta': 2.0}})")):
        tester(scaled, 0.5, beta=2.0)


def _square(z):
    return z * z


def test_rrule_missing_conjugation_is_named_with_the_rules_source():
    from chainrules import scoped_rules

    with scoped_rules():
        @rrule.register(_square)
        def square_rrule(z):
            def square_pullback(y_bar):
                return NoTangent(), y_bar * 2 * z  # should be y_bar * conj(2 * z)
            return _square(z), square_pullback

        with pytest.raises(AssertionError) as e:
            test_rrule(_square, np.array([1 + 2j, 0.5 - 1j]))
    msg = str(e.value)
    assert "The rule is off by a complex conjugation: conj(pullback(conj(y_bar))) passes" in msg
    assert re.search(r"\(the rule under test: .*square_pullback at .*test_testers\.py:\d+\)",
                     msg)


def test_frule_failure_names_the_rules_source():
    from chainrules import scoped_rules

    with scoped_rules():
        @frule.register(_square)
        def square_frule(dargs, z):
            return _square(z), -2 * z * dargs[1]

        with pytest.raises(AssertionError,
                           match=r"\(the rule under test: .*square_frule at .*test_testers"):
            test_frule(_square, np.array([1.0, 2.0]))
