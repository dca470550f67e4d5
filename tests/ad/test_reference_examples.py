"""The examples of the reference document's "Which functions need rules?" section."""

from __future__ import annotations

import numpy as np
import pytest

from chainrules import NoTangent, rrule
from chainrules.ad import MutationError, grad


def mse(y, y_hat):
    n = len(y)
    s = 0.0
    for i in range(n):
        s += (y[i] - y_hat[i]) ** 2.0
    return s / n


def sum3(array):
    x = array[0]
    y = array[1]
    z = array[2]
    return x + y + z


def test_loop_mse_gradient():
    rng = np.random.default_rng(0)
    y, y_hat = rng.random(30), rng.random(30)
    g_y, g_y_hat = grad(mse, argnums=(0, 1))(y, y_hat)
    np.testing.assert_allclose(g_y, 2 * (y - y_hat) / 30, rtol=1e-12)
    np.testing.assert_allclose(g_y_hat, -2 * (y - y_hat) / 30, rtol=1e-12)


def test_loop_mse_uses_registered_rrule():
    rng = np.random.default_rng(1)
    y, y_hat = rng.random(30), rng.random(30)
    calls = []

    @rrule.register(mse)
    def mse_rrule(x: np.ndarray, x_hat: np.ndarray):
        calls.append("mse")
        n = len(x)
        out = mse(x, x_hat)

        def mse_pullback(y_bar):
            g = (2.0 / n) * (x - x_hat) * y_bar
            return NoTangent(), g, -g

        return out, mse_pullback

    g_y, g_y_hat = grad(mse, argnums=(0, 1))(y, y_hat)
    assert calls == ["mse"]
    np.testing.assert_allclose(g_y, 2 * (y - y_hat) / 30, rtol=1e-12)
    np.testing.assert_allclose(g_y_hat, -g_y)


def test_rule_for_a_helper_called_inside_traced_code():
    calls = []

    @rrule.register(mse)
    def mse_rrule(x: np.ndarray, x_hat: np.ndarray):
        calls.append("mse")

        def mse_pullback(y_bar):
            g = (2.0 / len(x)) * (x - x_hat) * y_bar
            return NoTangent(), g, -g

        return mse(x, x_hat), mse_pullback

    def loss(w, x, target):
        return mse(w * x, target) + 0.0

    x, target = np.ones(4), np.zeros(4)
    g = grad(loss)(2.0, x, target)
    assert calls == ["mse"]
    assert g == pytest.approx(np.sum(2 * (2.0 * x - target) / 4 * x))


def test_sum3_gradient_and_rrule():
    a = np.arange(1.0, 31.0)
    expected = np.zeros(30)
    expected[:3] = 1.0
    np.testing.assert_array_equal(grad(sum3)(a), expected)

    @rrule.register(sum3)
    def sum3_rrule(a: np.ndarray):
        def sum3_pullback(y_bar):
            a_bar = np.zeros(len(a))
            a_bar[:3] += y_bar
            return NoTangent(), a_bar

        return sum3(a), sum3_pullback

    np.testing.assert_array_equal(grad(sum3)(a), expected)


def test_try_except_exception_example():
    def exception(x):
        try:
            return x ** 2
        except Exception as e:
            print("could not square input")
            raise e

    assert grad(exception)(3.0) == 6.0


def test_addone_fails_then_works_with_rrule():
    def addone(array):
        array += 1
        return sum(array)

    with pytest.raises(MutationError, match="write a rule for the enclosing function"):
        grad(addone)(np.ones(3))

    @rrule.register(addone)
    def addone_rrule(array: np.ndarray):
        y = addone(array)

        def addone_pullback(y_bar):
            return NoTangent(), np.ones(len(array)) * y_bar

        return y, addone_pullback

    np.testing.assert_array_equal(grad(addone)(np.ones(3)), [1.0, 1.0, 1.0])
