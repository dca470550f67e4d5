"""Tests of the rules for Python builtins: the case table, plus what a table cannot express."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

import chainrules
from chainrules import NoTangent, Tangent, ZeroTangent, frule, rrule
from chainrules.testing import test_rrule
from chainrules.testing.cases.stdlib_builtins import CASES
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("stdlib_builtins"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


def test_case_names_are_unique():
    names = [c.display_name for c in CASES]
    assert len(names) == len(set(names))


DIFFERENTIABLE = ["abs", "pow", "sum", "min", "max", "float", "complex", "divmod", "sorted"]
NON_DIFFERENTIABLE = ["round", "int", "len", "bool", "range", "hash", "id", "isinstance",
                      "issubclass", "any", "all", "ord", "chr", "str", "repr", "format", "bin",
                      "oct", "hex", "ascii", "callable", "hasattr"]


@pytest.mark.parametrize("name", DIFFERENTIABLE + NON_DIFFERENTIABLE)
def test_coverage(name):
    f = getattr(builtins, name)
    assert chainrules.rrule.has_rules(f), f"no rrule for {name}"
    assert chainrules.frule.has_rules(f), f"no frule for {name}"


@pytest.mark.parametrize(("f", "args"), [
    (round, (2.6,)), (round, (2.567, 1)), (int, (2.5,)), (len, ([1.0, 2.0],)), (bool, (0.0,)),
    (range, (3,)), (hash, (1.5,)), (id, (1.5,)), (isinstance, (1.5, float)),
    (issubclass, (float, object)), (any, ([0.0, 1.0],)), (all, ([0.0],)), (ord, ("a",)),
    (chr, (97,)), (str, (1.5,)), (repr, (1.5,)), (format, (1.5, ".2f")),
    (float, ("1.5",)), (complex, ("1+2j",)), (bin, (5,)), (oct, (5,)), (hex, (5,)),
    (ascii, ("é",)), (callable, (abs,)), (hasattr, (1.5, "real")),
])
def test_non_differentiable(f, args):
    y, pullback = rrule(f, *args)
    assert y == f(*args)
    assert pullback(1.0) == (NoTangent(),) * (len(args) + 1)
    assert frule((NoTangent(), *(NoTangent() for _ in args)), f, *args)[1] == NoTangent()


def test_max_ties_go_to_the_first():
    _, pullback = rrule(max, 1.0, 3.0, 3.0)
    assert pullback(1.0) == (NoTangent(), ZeroTangent(), 1.0, ZeroTangent())
    _, pullback = rrule(min, [2.0, 1.0, 1.0])
    assert pullback(1.0) == (NoTangent(), Tangent[list](ZeroTangent(), 1.0, ZeroTangent()))
    assert frule((NoTangent(), 1.0, 2.0, 3.0), max, 1.0, 3.0, 3.0)[1] == 2.0


def test_sorted_ties_are_stable():
    _, pullback = rrule(sorted, [2.0, 1.0, 2.0])
    # y = [1.0, 2.0 (index 0), 2.0 (index 2)]
    assert pullback(Tangent[list](10.0, 20.0, 30.0)) == (
        NoTangent(), Tangent[list](20.0, 10.0, 30.0))


def test_sum_start_by_keyword_is_not_differentiated():
    y, pullback = rrule(sum, [1.0, 2.0], start=3.0)
    assert y == 6.0
    assert pullback(1.0) == (NoTangent(), Tangent[list](1.0, 1.0))
    y, pullback = rrule(sum, [1.0, 2.0], 3.0)
    assert pullback(1.0) == (NoTangent(), Tangent[list](1.0, 1.0), 1.0)


def test_sum_with_int_items_and_float_tangent():
    test_rrule(sum, [1, 2.5], 3.0)


def test_divmod_quotient_has_zero_tangent():
    y, pullback = rrule(divmod, 7.5, 2.0)
    assert y == (3.0, 1.5)
    assert pullback(Tangent[tuple](1.0, ZeroTangent())) == (
        NoTangent(), ZeroTangent(), ZeroTangent())
    assert pullback(Tangent[tuple](5.0, 1.0)) == (NoTangent(), 1.0, -3.0)


def test_complex_of_reals_cotangents():
    y, pullback = rrule(complex, 1.0, 2.0)
    assert pullback(3.0 + 4.0j) == (NoTangent(), 3.0, 4.0)


def test_zero_cotangents():
    for f, args in [(sum, ([1.0, 2.0],)), (max, (1.0, 2.0)), (float, (1.0,)),
                    (complex, (1.0, 2.0)), (divmod, (3.0, 2.0)), (sorted, ([2.0, 1.0],))]:
        bars = rrule(f, *args)[1](ZeroTangent())
        assert all(isinstance(b, (ZeroTangent, NoTangent)) for b in bars), f


def test_sum_of_array_is_sum_over_first_axis():
    x = np.arange(6.0).reshape(3, 2)
    y, pullback = rrule(sum, x)
    np.testing.assert_array_equal(y, x.sum(axis=0))
    np.testing.assert_array_equal(pullback(np.array([1.0, 2.0]))[1], [[1, 2]] * 3)
