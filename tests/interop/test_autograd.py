"""The HIPS autograd bridge."""

from __future__ import annotations

import re

import numpy as np
import pytest

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

from chainrules import (  # noqa: E402
    NoTangent,
    PullbackError,
    debug_mode,
    frule,
    rrule,
    scoped_rules,
)
from chainrules.interop import (  # noqa: E402
    NoRuleError,
    TangentConversionError,
    UnsupportedTransformError,
)
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
    # in debug mode the core checks every cotangent's shape, which computes every thunk
    assert ex.counts == ({"a_bar": 1, "b_bar": 1} if debug_mode() else {"a_bar": 1})


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
    if debug_mode():  # the core's check of the pullback runs first
        with pytest.raises(PullbackError, match=re.escape(
                "returned a cotangent of shape (7, 5) for argument 1 of shape (3,); project "
                "it with ProjectTo(x)")):
            autograd.grad(lambda x: anp.sum(autograd_primitive(ex.bad_shape)(x)))(X)
        return
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


A = np.array([[1.0, 0.5], [-0.3, 2.0]])


@pytest.mark.parametrize(("name", "bridged", "native", "x"), [
    ("roll", lambda x: anp.sum(autograd_primitive(np.roll)(x, 1) ** 3),
     lambda x: anp.sum(anp.roll(x, 1) ** 3), X),
    ("where", lambda x: anp.sum(autograd_primitive(np.where)(X > 0, x, 2 * X) ** 3),
     lambda x: anp.sum(anp.where(X > 0, x, 2 * X) ** 3), X),
    ("matrix_power", lambda a: anp.sum(autograd_primitive(np.linalg.matrix_power)(a, 3) ** 2),
     lambda a: anp.sum(anp.dot(a, anp.dot(a, a)) ** 2), A),
    ("sin", lambda x: anp.sum(anp.cos(x) * autograd_primitive(np.sin)(x)),
     lambda x: anp.sum(anp.cos(x) * anp.sin(x)), X),
])
def test_hessian_differentiates_the_rule(name, bridged, native, x):
    # the VJP of a primitive runs on NumPy arrays; autograd would see none of it and
    # return zeros. It is a primitive of its own, differentiated by chainrules.ad.
    h = autograd.hessian(bridged)(x)
    assert np.any(h != 0)
    close(h, autograd.hessian(native)(x))
    close(autograd.grad(autograd.grad(lambda x: bridged(x) * 1.0))(x) if x.ndim == 0 else
          autograd.jacobian(autograd.grad(bridged))(x), autograd.hessian(native)(x))


def test_hessian_with_respect_to_the_cotangent_path(ex):
    # grad of (x -> <grad f(x), v>) differentiates the VJP in its primal argument and,
    # through the chain, in its cotangent
    f = autograd_primitive(ex.cube)
    v = np.array([1.0, 2.0, 3.0])
    h = autograd.grad(lambda x: anp.sum(autograd.grad(lambda x: anp.sum(f(x) ** 2))(x) * v))(X)
    close(h, 30 * X**4 * v)


def test_third_derivative_error():
    f = autograd_primitive(np.sin)
    with pytest.raises(UnsupportedTransformError, match=msg(
            "autograd_primitive(numpy.sin) does not support a third derivative: second "
            "derivatives come from differentiating the rrule's code with chainrules.ad")):
        autograd.grad(autograd.grad(autograd.grad(lambda x: anp.sum(f(x)))))(0.3)


def test_second_derivative_structured_argument_error(ex):
    f = autograd_primitive(ex.affine_apply)
    p = {"w": np.ones((2, 3)), "b": np.zeros(2)}

    def grad_w_sum(p):
        return anp.sum(autograd.grad(lambda p: anp.sum(f(p, X) ** 2))(p)["w"])

    with pytest.raises(UnsupportedTransformError, match=msg(
            "does not support a second derivative with respect to a structured argument "
            "(argument 1, a dict): chainrules.ad differentiates the rule with respect to "
            "array arguments only")):
        autograd.grad(grad_w_sum)(p)


# -- no silent values -------------------------------------------------------------------


def _none_bar(x):
    return x * x


def _none_bar_rrule(x):
    def none_bar_pullback(y_bar):
        return NoTangent(), None

    return x * x, none_bar_pullback


def _none_dot(x):
    return x * x


def _none_dot_frule(dargs, x):
    return x * x, None


def _none_dot_rrule(x):
    # correct: autograd runs the rrule on its forward pass, before asking for the JVP
    def none_dot_pullback(y_bar):
        return NoTangent(), 2 * x * y_bar

    return x * x, none_dot_pullback


def _no_self_bar(x, y):
    return x * y


def _no_self_bar_rrule(x, y):
    def no_self_bar_pullback(y_bar):
        return y * y_bar, x * y_bar

    return x * y, no_self_bar_pullback


@pytest.fixture
def wrong_rules():
    with scoped_rules():
        rrule.register(_none_bar)(_none_bar_rrule)
        frule.register(_none_dot)(_none_dot_frule)
        rrule.register(_none_dot)(_none_dot_rrule)
        rrule.register(_no_self_bar)(_no_self_bar_rrule)
        yield


def test_pullback_none_error(wrong_rules):
    with pytest.raises(TangentConversionError, match=re.escape(
            "cannot convert the tangent for argument 1: expected a tangent of "
            "ndarray(shape=(3,), dtype=float64), got NoneType; None is not a tangent "
            "(ZeroTangent() is the zero tangent")):
        autograd.grad(lambda x: anp.sum(autograd_primitive(_none_bar)(x)))(X)


def test_pullback_none_second_order_error(wrong_rules):
    f = autograd_primitive(_none_bar)
    with pytest.raises(TangentConversionError, match="None is not a tangent"):
        autograd.hessian(lambda x: anp.sum(f(x)))(X)


def test_frule_none_error(wrong_rules):
    with pytest.raises(TangentConversionError, match=re.escape(
            "cannot convert the tangent for output: expected a tangent of "
            "ndarray(shape=(3,), dtype=float64), got NoneType; None is not a tangent")):
        autograd.make_jvp(autograd_primitive(_none_dot))(X)(np.ones(3))


def test_pullback_forgot_self_bar_error(wrong_rules):
    f = autograd_primitive(_no_self_bar)
    if debug_mode():  # the core's check of the pullback runs first
        with pytest.raises(PullbackError, match=re.escape(
                "returned 2 entries for a call with 2 positional argument(s); it must return "
                "3: one for the function itself, then one per argument. It looks like the "
                "pullback forgot self_bar, the first entry: NoTangent() for a plain function")):
            autograd.grad(lambda x: anp.sum(f(x, X)))(X)
        return
    with pytest.raises(PullbackError, match=re.escape(
            "the rrule's pullback returned 2 entries, expected 3 (self_bar for the function "
            "itself, then one per positional argument). It looks like the pullback forgot "
            "self_bar: return (NoTangent(), x_bar, x_bar)")):
        autograd.grad(lambda x: anp.sum(f(x, X)))(X)
