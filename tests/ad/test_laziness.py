"""Reverse mode is lazy: unneeded thunks are never computed, ZeroTangent skips pullbacks,
accumulation is in place only into arrays the AD owns."""

from __future__ import annotations

import numpy as np

from chainrules import InplaceableThunk, NoTangent, Thunk, ZeroTangent, rrule
from chainrules.ad import grad, vjp


def scaled(a, x):
    return a * x


def test_thunk_for_a_constant_argument_is_never_computed():
    computed = []

    @rrule.register(scaled)
    def scaled_rrule(a: np.ndarray, x: np.ndarray):
        def scaled_pullback(y_bar):
            def a_bar():
                computed.append("a")
                return np.sum(y_bar * x)

            def x_bar():
                computed.append("x")
                return y_bar * a

            return NoTangent(), Thunk(a_bar), Thunk(x_bar)

        return scaled(a, x), scaled_pullback

    a = np.array(2.0)
    g = grad(lambda x: np.sum(scaled(a, x)))(np.ones(3))
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])
    assert computed == ["x"]


def test_zero_cotangent_skips_the_pullback():
    called = []

    def inner(x):
        return x * 2.0

    def blocker(y):
        return y * 0.0 + 1.0

    @rrule.register(inner)
    def inner_rrule(x: float):
        def inner_pullback(y_bar):
            called.append(y_bar)
            return NoTangent(), 2.0 * y_bar

        return inner(x), inner_pullback

    @rrule.register(blocker)
    def blocker_rrule(y: float):
        return blocker(y), lambda y_bar: (NoTangent(), ZeroTangent())

    assert grad(lambda x: blocker(inner(x)) + x)(1.0) == 1.0
    assert called == []


def test_inplace_accumulation_into_owned_array_only():
    adds = []

    def pick(x):
        return x * 1.0

    @rrule.register(pick)
    def pick_rrule(x: np.ndarray):
        def pick_pullback(y_bar):
            def add_into(acc):
                adds.append(acc)
                acc += y_bar
                return acc

            return NoTangent(), InplaceableThunk(add_into, Thunk(lambda: y_bar * 1.0))

        return pick(x), pick_pullback

    x = np.ones(3)
    g = grad(lambda x: np.sum(pick(x)) + np.sum(pick(x)) + np.sum(pick(x)) + np.sum(pick(x)))(x)
    np.testing.assert_array_equal(g, [4.0, 4.0, 4.0])
    # the first two cotangents make a fresh sum the AD owns; the rest are added in place
    assert len(adds) == 2
    assert all(a is adds[0] for a in adds)


def test_cotangent_passed_to_a_pullback_is_not_mutated():
    seen = []

    def ident(x):
        return x * 1.0

    @rrule.register(ident)
    def ident_rrule(x: np.ndarray):
        def ident_pullback(y_bar):
            seen.append(y_bar)
            return NoTangent(), y_bar  # returns the very same array

        return ident(x), ident_pullback

    y_bar = np.array([1.0, 2.0])
    _, pullback = vjp(lambda x: ident(x) + ident(x) * 2.0, np.zeros(2))
    (g,) = pullback(y_bar)
    np.testing.assert_array_equal(g, [3.0, 6.0])
    np.testing.assert_array_equal(y_bar, [1.0, 2.0])
    for s in seen:
        assert not np.shares_memory(s, g) or s is not g
