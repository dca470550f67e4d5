"""The HIPS autograd bridge."""

from __future__ import annotations

import re

import numpy as np
import pytest

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

from chainrules.interop import NoRuleError, TangentConversionError  # noqa: E402
from chainrules.interop.autograd import autograd_primitive  # noqa: E402

X = np.array([0.5, -1.0, 2.0])


def msg(text: str) -> str:
    """A regex matching ``text`` literally, whatever package prefix the test module has."""
    return re.escape(text).replace("conftest\\.", r"[\w.]*conftest\.")


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_grad_uses_rrule_once(ex):
    g = autograd.grad(lambda x: anp.sum(autograd_primitive(ex.cube)(x)))(X)
    close(g, 3 * X**2)
    assert ex.counts == {"cube_rrule": 1}


def test_no_differentiation_runs_plain_function(ex):
    close(autograd_primitive(ex.cube)(X), X**3)
    assert ex.counts == {}


def test_scalar_float_gradient_type(ex):
    g = autograd.grad(autograd_primitive(ex.cube))(2.0)
    assert isinstance(g, float)
    assert g == pytest.approx(12.0)


def test_only_requested_cotangent_is_unthunked(ex):
    f = autograd_primitive(ex.weighted)
    g = autograd.grad(lambda a: anp.sum(f(a, 2 * X)))(X)
    close(g, 2 * X)
    assert ex.counts == {"a_bar": 1}


def test_jvp_from_frule(ex):
    y, y_dot = autograd.make_jvp(autograd_primitive(ex.cube))(X)(np.ones(3))
    close(y, X**3)
    close(y_dot, 3 * X**2)
    assert "cube_frule" in ex.counts


def test_complex_is_conjugated(ex):
    z = 1.0 + 2.0j
    bridged = autograd.grad(autograd_primitive(ex.abs2))(z)
    native = autograd.grad(lambda z: anp.abs(z) ** 2)(z)
    assert bridged == pytest.approx(native)
    assert bridged == pytest.approx(2 * np.conj(z))  # autograd's convention
    w = np.array([1 + 2j, 3 - 1j])
    zz = np.array([0.5 - 1j, 2 + 0.5j])
    ct = np.array([1 - 1j, 0.5 + 2j])
    vjp_b, _ = autograd.make_vjp(autograd_primitive(ex.cmul), argnum=1)(w, zz)
    vjp_n, _ = autograd.make_vjp(lambda w, z: w * z, argnum=1)(w, zz)
    close(vjp_b(ct), vjp_n(ct))


def test_namedtuple_output(ex):
    f = autograd_primitive(ex.sincos)
    g = autograd.grad(lambda x: anp.sum(f(x)[0]) + 2 * anp.sum(f(x)[1]))(X)
    close(g, np.cos(X) - 2 * np.sin(X))


def test_integer_argument(ex):
    f = autograd_primitive(ex.scaled_take)
    g = autograd.grad(lambda x: anp.sum(f(x, np.array([0, 2, 2]), 3)))(X)
    close(g, [3.0, 0.0, 6.0])


def test_no_rule_error(ex):
    with pytest.raises(NoRuleError, match=msg(
            "autograd_primitive(conftest.no_rule): no rrule is registered for "
            "conftest.no_rule(ndarray), and reverse mode (a gradient or VJP) needs one.")):
        autograd.grad(lambda x: anp.sum(autograd_primitive(ex.no_rule)(x)))(X)


def test_tangent_conversion_error(ex):
    with pytest.raises(TangentConversionError, match=msg(
            "autograd_primitive(conftest.bad_shape): cannot convert the tangent for argument 1: "
            "expected a tangent of ndarray(shape=(3,), dtype=float64), got "
            "ndarray(shape=(7, 5), dtype=float64)")):
        autograd.grad(lambda x: anp.sum(autograd_primitive(ex.bad_shape)(x)))(X)


def test_not_callable_error():
    with pytest.raises(TypeError, match=re.escape(
            "autograd_primitive(f): f must be callable, got NoneType.")):
        autograd_primitive(None)


def test_jvp_namedtuple_output(ex):
    y, y_dot = autograd.make_jvp(autograd_primitive(ex.sincos))(X)(np.ones(3))
    assert isinstance(y, tuple)
    close(y_dot[0], np.cos(X))
    close(y_dot[1], -np.sin(X))
