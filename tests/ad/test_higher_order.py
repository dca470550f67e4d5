"""Higher-order-function rules (config=HasReverseMode) calling back into the AD."""

from __future__ import annotations

import functools
import itertools
import math
import operator

import numpy as np
import pytest

from chainrules import rrule, rrule_via_ad
from chainrules.ad import ADConfig, grad

XS = [0.3, 0.5, 0.9]


def _fd_grad(f, xs, eps=1e-6):
    out = []
    for i in range(len(xs)):
        up = list(xs)
        down = list(xs)
        up[i] += eps
        down[i] -= eps
        out.append((f(up) - f(down)) / (2 * eps))
    return out


def _check(f, xs=XS):
    g = grad(f)(list(xs))
    np.testing.assert_allclose(np.asarray(g, dtype=float), _fd_grad(f, xs), rtol=1e-6)


def test_rules_are_registered_for_reverse_mode_configs():
    for fn in (map, functools.reduce, itertools.accumulate, sorted, np.apply_along_axis,
               np.piecewise):
        assert rrule.lookup(fn, (object, list), ADConfig()) is not None or rrule.has_rules(fn)
    assert rrule.lookup(map, (type(len), list)) is None  # not without a reverse-mode config


def test_map():
    _check(lambda xs: sum(map(lambda v: math.sin(v) * v, xs)))


def test_map_two_iterables():
    _check(lambda xs: sum(map(lambda a, b: a * math.exp(b), xs, xs[::-1])))


def test_map_rule_uses_rrule_via_ad_per_element():
    calls = []

    class Spy(ADConfig):
        def rrule_via_ad(self, f, *args, **kwargs):
            calls.append(args)
            return super().rrule_via_ad(f, *args, **kwargs)

    y, pullback = rrule(Spy(), map, math.sin, [0.1, 0.2])
    assert y == [math.sin(0.1), math.sin(0.2)]
    assert len(calls) == 2
    _, _, xs_bar = pullback([1.0, 1.0])
    assert list(xs_bar) == pytest.approx([math.cos(0.1), math.cos(0.2)])


def test_map_over_closure_capturing_traced_value_is_traced_instead():
    def f(xs):
        scale = xs[0]
        return sum(map(lambda v: v * scale, xs))

    _check(f)


def test_sum_of_generator():
    _check(lambda xs: sum(math.sin(v) ** 2 for v in xs))


def test_functools_reduce():
    _check(lambda xs: functools.reduce(lambda a, b: a * b + math.sin(b), xs))
    _check(lambda xs: functools.reduce(lambda a, b: a * b, xs, 2.0))


def test_itertools_accumulate():
    _check(lambda xs: sum(itertools.accumulate(xs, operator.mul)))
    _check(lambda xs: sum(itertools.accumulate(xs)))


def test_sorted_with_key():
    _check(lambda xs: sum(w * v for w, v in zip([1.0, 2.0, 3.0],
                                                sorted(xs, key=lambda v: -v))))


def test_np_vectorize():
    x = np.array(XS)
    g = grad(lambda x: np.sum(np.vectorize(lambda v: math.sin(v) * v)(x)))(x)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-12)


def test_np_frompyfunc_style_elementwise():
    x = np.array(XS)
    sq = np.vectorize(lambda v: v * v * math.exp(v), otypes=[float])
    g = grad(lambda x: np.sum(sq(x)))(x)
    np.testing.assert_allclose(g, (2 * x + x * x) * np.exp(x), rtol=1e-12)


def test_np_frompyfunc_ufunc():
    x = np.array(XS)
    uf = np.frompyfunc(lambda v: v * v + 2.0 * v, 1, 1)
    g = grad(lambda x: np.sum(uf(x)))(x)
    np.testing.assert_allclose(g, 2 * x + 2.0, rtol=1e-12)


def test_np_apply_along_axis():
    x = np.arange(6.0).reshape(2, 3) / 10
    g = grad(lambda x: np.sum(np.apply_along_axis(lambda r: np.sum(np.sin(r) * r), 1, x)))(x)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-12)


def test_np_piecewise():
    x = np.array([-1.0, 0.5, 2.0])
    g = grad(lambda x: np.sum(np.piecewise(x, [x < 0, x >= 0],
                                           [lambda v: v * v, lambda v: np.sin(v)])))(x)
    np.testing.assert_allclose(g, [-2.0, np.cos(0.5), np.cos(2.0)], rtol=1e-12)


def test_rrule_via_ad_closure_pullback_gives_self_no_tangent():
    y, pullback = rrule_via_ad(ADConfig(), lambda a, b: a * b, 2.0, 3.0)
    assert y == 6.0
    self_bar, a_bar, b_bar = pullback(1.0)
    assert (a_bar, b_bar) == (3.0, 2.0)
