"""The worked examples from the reference material, as they read in Python."""

import math
import operator
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

from chainrules import NoTangent, Tangent, ZeroTangent, frule, rrule, scalar_rule, scoped_rules
from chainrules.core import RuleOverwriteWarning


@dataclass
class Foo:
    A: np.ndarray
    c: float


def foo_mul(foo: Foo, B: np.ndarray) -> np.ndarray:
    return foo.A @ B


@rrule.register(foo_mul)
def foo_mul_rrule(foo: Foo, B: np.ndarray):
    Y = foo_mul(foo, B)

    def foo_mul_pullback(Y_bar):
        foo_bar = Tangent[Foo](A=Y_bar @ B.T, c=ZeroTangent())
        B_bar = foo.A.T @ Y_bar
        return NoTangent(), foo_bar, B_bar

    return Y, foo_mul_pullback


def test_foo_mul_talk_example():
    foo = Foo(np.array([[1.0, 2.0], [3.0, 4.0]]), 5.0)
    B = np.array([[1.0, 0.0], [0.0, 2.0]])
    Y, pullback = rrule(foo_mul, foo, B)
    np.testing.assert_array_equal(Y, foo.A @ B)
    self_bar, foo_bar, B_bar = pullback(np.ones((2, 2)))
    assert self_bar == NoTangent()
    assert foo_bar.c == ZeroTangent()
    np.testing.assert_array_equal(foo_bar.A, np.ones((2, 2)) @ B.T)
    np.testing.assert_array_equal(B_bar, foo.A.T @ np.ones((2, 2)))
    # A gradient step on the struct: primal + tangent builds a new Foo.
    new = foo + (-0.1) * foo_bar
    assert isinstance(new, Foo)
    np.testing.assert_allclose(new.A, foo.A - 0.1 * (np.ones((2, 2)) @ B.T))
    assert new.c == 5.0


def test_foo_example_from_the_introduction():
    # foo(x) = asin(0.2 + sin(x)), with the rules registered here, not by the rule set
    # (they replace the built-in ones inside the block, which restores them at exit).
    with scoped_rules(), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuleOverwriteWarning)
        scalar_rule(math.sin, lambda x: math.cos(x))
        scalar_rule(operator.add, lambda x, y: (1.0, 1.0))
        scalar_rule(math.asin, lambda x: 1 / math.sqrt(1 - x**2))

        x = 3.0
        a, a_pullback = rrule(math.sin, x)
        b, b_pullback = rrule(operator.add, 0.2, a)
        c, c_pullback = rrule(math.asin, b)
        _, b_bar = c_pullback(1.0)
        _, _, a_bar = b_pullback(b_bar)
        _, x_bar = a_pullback(a_bar)
        assert x_bar == pytest.approx(-1.0531613736418153, rel=1e-15)
        assert c == math.asin(0.2 + math.sin(x))

        a, a_dot = frule((NoTangent(), 1.0), math.sin, x)
        b, b_dot = frule((NoTangent(), NoTangent(), a_dot), operator.add, 0.2, a)
        c, c_dot = frule((NoTangent(), b_dot), math.asin, b)
        assert c_dot == pytest.approx(-1.0531613736418153, rel=1e-15)
