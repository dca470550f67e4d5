"""Tests of the ``cmath`` rules: the case table, plus what a table cannot express."""

from __future__ import annotations

import cmath

import pytest

import chainrules
from chainrules import NoTangent, Tangent, ZeroTangent, frule, rrule
from chainrules.testing.cases.stdlib_cmath import CASES
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("stdlib_cmath"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


def test_case_names_are_unique():
    names = [c.display_name for c in CASES]
    assert len(names) == len(set(names))


DIFFERENTIABLE = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
                  "acosh", "atanh", "exp", "log", "log10", "sqrt", "phase", "polar", "rect"]
NON_DIFFERENTIABLE = ["isclose", "isfinite", "isinf", "isnan"]


@pytest.mark.parametrize("name", DIFFERENTIABLE + NON_DIFFERENTIABLE)
def test_coverage(name):
    f = getattr(cmath, name)
    assert chainrules.rrule.has_rules(f), f"no rrule for cmath.{name}"
    assert chainrules.frule.has_rules(f), f"no frule for cmath.{name}"


@pytest.mark.parametrize(("name", "args"), [
    ("isclose", (1j, 1j)), ("isfinite", (1j,)), ("isinf", (1j,)), ("isnan", (1j,)),
])
def test_non_differentiable(name, args):
    f = getattr(cmath, name)
    y, pullback = rrule(f, *args)
    assert y == f(*args)
    assert pullback(1.0) == (NoTangent(),) * (len(args) + 1)
    assert frule((NoTangent(), *(1j for _ in args)), f, *args)[1] == NoTangent()


def test_phase_gradient_convention():
    # DESIGN §2: gradient = dL/dRe z + i dL/dIm z; phase(x + iy) = atan2(y, x)
    z = 3.0 + 4.0j
    _, z_bar = rrule(cmath.phase, z)[1](1.0)
    assert z_bar == pytest.approx(complex(-4.0 / 25, 3.0 / 25))


def test_polar_and_phase_at_zero_are_zero():
    assert rrule(cmath.phase, 0j)[1](1.0) == (NoTangent(), 0j)
    assert rrule(cmath.polar, 0j)[1](Tangent[tuple](1.0, 1.0)) == (NoTangent(), 0j)
    assert frule((NoTangent(), 1 + 1j), cmath.polar, 0j)[1] == Tangent[tuple](0.0, 0.0)


def test_sqrt_at_zero_does_not_raise():
    _, z_bar = rrule(cmath.sqrt, 0j)[1](1.0)
    assert cmath.isinf(z_bar)


def test_real_argument_gets_real_cotangent():
    _, x_bar = rrule(cmath.exp, 1.0)[1](1j)
    assert type(x_bar) is float
    assert x_bar == pytest.approx(0.0)


def test_zero_cotangents():
    for f, args in [(cmath.log, (1j, 2.0)), (cmath.phase, (1j,)), (cmath.polar, (1j,))]:
        bars = rrule(f, *args)[1](ZeroTangent())
        assert all(isinstance(b, (ZeroTangent, NoTangent)) for b in bars), f
