"""Tests of the ``operator`` rules: the case table, plus what a table cannot express."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import chainrules
from chainrules import NoTangent, Tangent, Thunk, ZeroTangent, frule, rrule
from chainrules.testing import test_frule, test_rrule
from chainrules.testing.cases.stdlib_operator import CASES
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("stdlib_operator"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


def test_case_names_are_unique():
    names = [c.display_name for c in CASES]
    assert len(names) == len(set(names))


DIFFERENTIABLE = ["add", "sub", "mul", "truediv", "neg", "pos", "pow", "abs", "matmul", "mod",
                  "getitem", "concat", "iadd", "isub", "imul", "itruediv", "ipow", "iconcat",
                  "imod"]
NON_DIFFERENTIABLE = ["lt", "le", "eq", "ne", "ge", "gt", "not_", "truth", "is_", "is_not",
                      "contains", "countOf", "indexOf", "floordiv", "and_", "or_", "xor",
                      "invert", "lshift", "rshift", "index", "length_hint", "inv", "ifloordiv",
                      "iand", "ior", "ixor", "ilshift", "irshift"]


@pytest.mark.parametrize("name", DIFFERENTIABLE + NON_DIFFERENTIABLE)
def test_coverage(name):
    f = getattr(operator, name)
    assert chainrules.rrule.has_rules(f), f"no rrule for operator.{name}"
    assert chainrules.frule.has_rules(f), f"no frule for operator.{name}"


@pytest.mark.parametrize(("name", "args"), [
    ("lt", (1.0, 2.0)), ("le", (1.0, 2.0)), ("eq", (1.0, 2.0)), ("ne", (1.0, 2.0)),
    ("ge", (1.0, 2.0)), ("gt", (np.ones(2), 0.5)), ("not_", (0.0,)), ("truth", (1.0,)),
    ("is_", (1.0, None)), ("is_not", (1.0, None)), ("contains", ([1.0], 1.0)),
    ("countOf", ([1.0, 1.0], 1.0)), ("indexOf", ([1.0, 2.0], 2.0)), ("floordiv", (7.5, 2.0)),
    ("and_", (6, 3)), ("or_", (6, 3)), ("xor", (6, 3)), ("invert", (6,)), ("lshift", (1, 3)),
    ("rshift", (8, 1)), ("index", (3,)), ("length_hint", ([1, 2],)), ("inv", (6,)),
    ("ifloordiv", (7.5, 2.0)), ("iand", (6, 3)), ("ior", (6, 3)), ("ixor", (6, 3)),
    ("ilshift", (1, 3)), ("irshift", (8, 1)),
])
def test_non_differentiable(name, args):
    f = getattr(operator, name)
    y, pullback = rrule(f, *args)
    assert np.all(y == f(*args))
    assert pullback(1.0) == (NoTangent(),) * (len(args) + 1)
    assert frule((NoTangent(), *(NoTangent() for _ in args)), f, *args)[1] == NoTangent()


def test_string_operations_are_non_differentiable():
    for f, args in [(operator.add, ("a", "b")), (operator.mod, ("%.1f", 2.0)),
                    (operator.concat, (b"a", b"b")), (operator.mod, ("%s %s", (1.0, 2.0))),
                    (operator.getitem, ("abc", 1)), (operator.getitem, (range(5), slice(1, 3)))]:
        y, pullback = rrule(f, *args)
        assert y == f(*args)
        assert pullback("z") == (NoTangent(), NoTangent(), NoTangent())


def test_abs_at_zero_is_zero():
    assert rrule(operator.abs, 0.0)[1](1.0) == (NoTangent(), 0.0)
    assert rrule(abs, 0j)[1](1.0) == (NoTangent(), 0j)
    _, x_bar = rrule(operator.abs, np.array([0.0, -2.0, 0j + 1]))[1](np.ones(3))
    np.testing.assert_array_equal(x_bar, [0, -1, 1])
    assert frule((NoTangent(), 1.0), abs, 0.0)[1] == 0.0
    assert frule((NoTangent(), 1j), abs, 0j)[1] == 0.0


def test_abs_complex_gradient_convention():
    # DESIGN §2: the gradient of |z|^2 is 2z, so that of |z| is z / |z|
    z = 3.0 + 4.0j
    assert rrule(abs, z)[1](1.0)[1] == pytest.approx(z / 5)


def test_pow_conventions():
    pb = rrule(operator.pow, 0.0, 2.0)[1]
    assert pb(1.0) == (NoTangent(), 0.0, 0.0)  # w.r.t. p at x == 0: 0
    assert rrule(operator.pow, 3.0, 0)[1](1.0)[1] == 0.0  # w.r.t. x at p == 0: 0
    assert rrule(operator.pow, 0.0, 0.5)[1](1.0)[1] == np.inf  # infinite slope, no error
    _, _, p_bar = rrule(operator.pow, -2.0, 3)[1](1.0)
    assert p_bar == pytest.approx(-8.0 * np.log(2.0))  # real part of y log(x)
    with np.errstate(all="raise"):
        _, x_bar, p_bar = rrule(operator.pow, np.array([0.0, 2.0]), np.array([2.0, 0.0]))[1](
            np.ones(2))
    np.testing.assert_array_equal(x_bar, [0.0, 0.0])
    np.testing.assert_allclose(p_bar, [0.0, np.log(2.0)])


def test_pow_three_arguments_is_non_differentiable():
    y, pullback = rrule(pow, 3, 4, 5)
    assert y == 1
    assert pullback(1.0) == (NoTangent(),) * 4


def test_integer_arrays_get_no_tangent():
    x = np.array([1, 2, 3])
    y, pullback = rrule(operator.mul, x, 2.0)
    assert pullback(np.ones(3))[1] == NoTangent()
    y, pullback = rrule(operator.matmul, x, np.ones(3))
    assert pullback(1.0)[1] == NoTangent()


def test_mixed_real_complex_matmul():
    a = np.arange(6.0).reshape(2, 3)
    b = np.ones((3, 2)) * (1 + 2j)
    test_rrule(operator.matmul, a, b)
    test_frule(operator.matmul, a, b)
    _, a_bar, b_bar = rrule(operator.matmul, a, b)[1](np.ones((2, 2), dtype=complex))
    assert chainrules.unthunk(a_bar).dtype == np.float64
    assert chainrules.unthunk(b_bar).dtype == np.complex128


def test_matmul_cotangents_are_thunks_and_zero_is_handled():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    y, pullback = rrule(operator.matmul, a, b)
    bars = pullback(np.ones((2, 4)))
    assert isinstance(bars[1], Thunk) and isinstance(bars[2], Thunk)
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent(), ZeroTangent())
    assert frule((NoTangent(), ZeroTangent(), ZeroTangent()), operator.matmul, a, b)[1] == \
        ZeroTangent()


def test_float32_stays_float32():
    x = np.ones(3, dtype=np.float32)
    for f in (operator.add, operator.mul, operator.truediv, operator.pow):
        _, x_bar, _ = rrule(f, x, 2.0)[1](np.ones(3))
        assert x_bar.dtype == np.float32, f


def test_rules_do_not_mutate_inputs_or_cotangent():
    x = np.array([1.0, -2.0])
    y_bar = np.array([1.0, 1.0])
    for f in (operator.abs, operator.neg):
        _, pullback = rrule(f, x)
        pullback(y_bar)
    np.testing.assert_array_equal(x, [1.0, -2.0])
    np.testing.assert_array_equal(y_bar, [1.0, 1.0])


def test_getitem_tangent_structure():
    x = (1.0, "a", 2.0)
    _, pullback = rrule(operator.getitem, x, 2)
    assert pullback(5.0) == (NoTangent(), Tangent[tuple](ZeroTangent(), ZeroTangent(), 5.0),
                             NoTangent())
    d = {"a": 1.0, "b": 2.0}
    _, pullback = rrule(operator.getitem, d, "b")
    assert pullback(3.0) == (NoTangent(), Tangent[dict]({"b": 3.0}), NoTangent())
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent(), NoTangent())
    assert frule((NoTangent(), Tangent[dict]({"a": 1.0}), NoTangent()), operator.getitem, d,
                 "b")[1] == ZeroTangent()


def test_inplace_operators_have_no_rule_for_arrays():
    # they would write into their first argument
    for f in (operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ipow,
              operator.imod):
        assert rrule(f, np.ones(2), 1.0) is None
        assert rrule(f, 2.0, 1.0) is not None


def test_matmul_thunk_not_needed_is_never_computed(monkeypatch):
    import chainrules.rules.stdlib.operator as rules

    calls = []
    original = rules._matmul_a_bar

    def counting(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(rules, "_matmul_a_bar", counting)
    a, b = np.ones((2, 3)), np.ones((3, 4))
    _, a_bar, b_bar = rrule(operator.matmul, a, b)[1](np.ones((2, 4)))
    np.testing.assert_allclose(chainrules.unthunk(b_bar), np.full((3, 4), 2.0))
    assert calls == []
    np.testing.assert_allclose(chainrules.unthunk(a_bar), np.full((2, 3), 4.0))
    assert calls == [1]


def test_pow_negative_base_int_exponent():
    # x ** 3 with x < 0: the exponent cannot be perturbed (the power turns complex), so the
    # rrule tester cannot run it (it checks an int with a float cotangent as a float);
    # the frule tester holds it fixed
    from chainrules.testing import no_tangent

    test_frule(operator.pow, -1.5, no_tangent(3))
    test_frule(operator.pow, np.array([-1.5, -0.5]), no_tangent(3))
    _, x_bar, p_bar = rrule(operator.pow, -1.5, 3)[1](1.0)
    assert x_bar == pytest.approx(3 * 1.5 ** 2)
    assert p_bar == pytest.approx(-(1.5 ** 3) * np.log(1.5))
