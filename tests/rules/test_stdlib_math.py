"""Tests of the ``math`` rules: the case table, plus what a table cannot express."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chainrules
from chainrules import NoTangent, Tangent, Thunk, ZeroTangent, frule, rrule
from chainrules.rules.stdlib.math import digamma
from chainrules.testing import test_frule, test_rrule, with_tangent
from chainrules.testing.cases.stdlib_math import CASES
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("stdlib_math"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


def test_case_names_are_unique():
    names = [c.display_name for c in CASES]
    assert len(names) == len(set(names))


DIFFERENTIABLE = [
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt",
    "pow", "hypot", "erf", "erfc", "gamma", "lgamma", "fabs", "copysign", "fmod", "remainder",
    "ldexp", "frexp", "modf", "degrees", "radians", "dist", "prod", "fsum", "sumprod",
    "nextafter", "fma",
]
NON_DIFFERENTIABLE = [
    "ceil", "floor", "trunc", "factorial", "comb", "perm", "gcd", "lcm", "isqrt", "isclose",
    "isfinite", "isinf", "isnan", "ulp",
]


@pytest.mark.parametrize("name", DIFFERENTIABLE + NON_DIFFERENTIABLE)
def test_coverage(name):
    if not hasattr(math, name):
        pytest.skip(f"math.{name} is not in this Python")
    f = getattr(math, name)
    assert chainrules.rrule.has_rules(f), f"no rrule for math.{name}"
    assert chainrules.frule.has_rules(f), f"no frule for math.{name}"


@pytest.mark.parametrize(("name", "args"), [
    ("ceil", (1.5,)), ("floor", (1.5,)), ("trunc", (-1.5,)), ("factorial", (4,)),
    ("comb", (5, 2)), ("perm", (5, 2)), ("gcd", (12, 18)), ("lcm", (4, 6)), ("isqrt", (17,)),
    ("isclose", (1.0, 1.0)), ("isfinite", (1.0,)), ("isinf", (1.0,)), ("isnan", (1.0,)),
    ("ulp", (1.0,)),
])
def test_non_differentiable(name, args):
    f = getattr(math, name)
    y, pullback = rrule(f, *args)
    assert y == f(*args)
    assert pullback(1.0) == (NoTangent(),) * (len(args) + 1)
    assert frule((NoTangent(), *(1.0 for _ in args)), f, *args) == (y, NoTangent())


def test_digamma_against_finite_differences_of_lgamma():
    # digamma is the derivative of lgamma: checked through the lgamma rule at many points
    for x in [0.1, 0.3, 1.0, 1.4616, 2.5, 9.9, 10.1, 55.0, -0.5, -3.7, -10.2]:
        test_rrule(math.lgamma, x)
    assert math.isnan(digamma(0.0)) and math.isnan(digamma(-3.0))


# ------------------------------------------------------------ non-smooth points


def _pb(f, *args, y_bar=1.0):
    return rrule(f, *args)[1](y_bar)


def test_fabs_at_zero_is_zero():
    assert _pb(math.fabs, 0.0) == (NoTangent(), 0.0)
    assert frule((NoTangent(), 1.0), math.fabs, 0.0)[1] == 0.0


def test_copysign_at_zero_is_zero():
    assert _pb(math.copysign, 0.0, -1.0) == (NoTangent(), 0.0, 0.0)


@pytest.mark.parametrize("f", [math.hypot, lambda *a: math.dist(a, (0.0, 0.0))])
def test_hypot_and_dist_at_origin_are_zero(f):
    if f is math.hypot:
        assert _pb(math.hypot, 0.0, 0.0) == (NoTangent(), 0.0, 0.0)
        assert frule((NoTangent(), 1.0, 1.0), math.hypot, 0.0, 0.0)[1] == ZeroTangent()
    else:
        _, p_bar, q_bar = _pb(math.dist, (0.0, 0.0), (0.0, 0.0))
        assert p_bar == Tangent[tuple](0.0, 0.0) and q_bar == Tangent[tuple](0.0, 0.0)


def test_atan2_at_origin_is_zero():
    assert _pb(math.atan2, 0.0, 0.0) == (NoTangent(), 0.0, 0.0)


def test_infinite_slopes_at_domain_edges_do_not_raise():
    assert _pb(math.sqrt, 0.0)[1] == math.inf
    assert _pb(math.asin, 1.0)[1] == math.inf
    assert _pb(math.acos, -1.0)[1] == -math.inf
    assert _pb(math.acosh, 1.0)[1] == math.inf
    assert _pb(math.pow, 0.0, 0.5)[1] == math.inf
    if hasattr(math, "cbrt"):
        assert _pb(math.cbrt, 0.0)[1] == math.inf


def test_pow_conventions():
    # w.r.t. p at x == 0: 0; w.r.t. x at p == 0: 0
    assert _pb(math.pow, 0.0, 2.0) == (NoTangent(), 0.0, 0.0)
    assert _pb(math.pow, 3.0, 0.0) == (NoTangent(), 0.0, math.log(3.0))
    # x < 0, integer p: real part of y * log(x)
    _, _, p_bar = _pb(math.pow, -2.0, 3.0)
    assert p_bar == pytest.approx(-8.0 * math.log(2.0))


def test_int_exponents_get_no_tangent():
    assert _pb(math.ldexp, 1.5, 3) == (NoTangent(), 8.0, NoTangent())
    y, pullback = rrule(math.frexp, 12.0)
    assert pullback(Tangent[tuple](1.0, NoTangent())) == (NoTangent(), 1.0 / 16)
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent())


def test_int_argument_is_differentiable_like_float():
    assert _pb(math.exp, 0) == (NoTangent(), 1.0)
    test_frule(math.atan2, with_tangent(2, 0.5), with_tangent(3, 1.0))
    test_rrule(math.atan2, with_tangent(2, 0.5), with_tangent(3, 1.0))


def test_float32_cotangent_stays_float32():
    _, x_bar = _pb(math.sin, np.float32(0.5))
    assert type(x_bar) is np.float32


def test_thunk_and_zero_cotangents():
    y, pullback = rrule(math.log, 2.0, 10.0)
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent(), ZeroTangent())
    assert pullback(Thunk(lambda: 1.0)) == pullback(1.0)
    y, pullback = rrule(math.hypot, 3.0, 4.0)
    assert pullback(Thunk(lambda: 2.0)) == (NoTangent(), pytest.approx(1.2), pytest.approx(1.6))


def test_prod_of_empty_sequence():
    y, pullback = rrule(math.prod, ())
    assert y == 1
    assert pullback(1.0) == (NoTangent(), NoTangent())
    assert frule((NoTangent(), NoTangent()), math.prod, ()) == (1, ZeroTangent())


@pytest.mark.parametrize("f", [math.fmod, math.remainder])
@pytest.mark.parametrize("args", [(math.nan, 2.0), (1.5, math.nan)])
def test_fmod_and_remainder_with_nan_propagate_nan(f, args):
    y, pullback = rrule(f, *args)
    assert math.isnan(y)
    assert math.isnan(pullback(1.0)[2])
    assert math.isnan(frule((NoTangent(), 1.0, 1.0), f, *args)[1])
    test_rrule(f, 5.5, 2.0)
