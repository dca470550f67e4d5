"""What the PyTorch bridge refuses at its boundary, on both paths: no silent values.

A rule's ``None`` would read as a zero (``x.grad = None``), a pullback that forgets
``self_bar`` would shift every cotangent by one, a positional parameter passed by
keyword finds no rule: each gets an error that says so. And a function that returns
its input as is runs natively.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from chainrules import NoTangent, array_namespace, frule, rrule  # noqa: E402
from chainrules.core import PullbackError  # noqa: E402
from chainrules.interop import NoRuleError, TangentConversionError  # noqa: E402
from chainrules.interop.torch import torch_function  # noqa: E402

BACKENDS = ["native", "callback"]


def _xp(x):
    return array_namespace(x)


def double_none(x):
    return 2 * x


@rrule.register(double_none)
def double_none_rrule(x):
    def double_none_pullback(y_bar):
        return NoTangent(), None

    return 2 * x, double_none_pullback


@frule.register(double_none)
def double_none_frule(dargs, x):
    return 2 * x, None


def double_str(x):
    return 2 * x


@rrule.register(double_str)
def double_str_rrule(x):
    def double_str_pullback(y_bar):
        return NoTangent(), "2 * y_bar"

    return 2 * x, double_str_pullback


def double_no_self(x):
    return 2 * x


@rrule.register(double_no_self)
def double_no_self_rrule(x):
    def double_no_self_pullback(y_bar):
        return (2 * y_bar,)

    return 2 * x, double_no_self_pullback


def scaled(x, t):
    return x * t


@rrule.register(scaled)
def scaled_rrule(x, t: float):
    def scaled_pullback(y_bar):
        return NoTangent(), y_bar * t, NoTangent()

    return x * t, scaled_pullback


# every bridge's words for a None (and debug mode's, whose checks run first): None is no
# tangent, and what to return instead
NONE_REFUSED = (r"got NoneType; None is not a tangent \(ZeroTangent\(\) is the zero tangent, "
                r"NoTangent\(\) the tangent of a non-differentiable argument\)")


@pytest.mark.parametrize("backend", BACKENDS)
def test_pullback_returning_none_error(backend):
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    y = torch_function(double_none, backend=backend)(x).sum()
    with pytest.raises(TangentConversionError, match=NONE_REFUSED):
        y.backward()
    assert x.grad is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_frule_returning_none_error(backend):
    x = torch.ones(3, dtype=torch.float64)
    f = torch_function(double_none, backend=backend)
    with pytest.raises(TangentConversionError, match=NONE_REFUSED):
        torch.func.jvp(f, (x,), (torch.ones_like(x),))


@pytest.mark.parametrize("backend", BACKENDS)
def test_pullback_returning_a_string_error(backend):
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    y = torch_function(double_str, backend=backend)(x).sum()
    with pytest.raises(TangentConversionError, match=re.escape(
            "cannot convert the tangent for argument 1")):
        y.backward()


@pytest.mark.parametrize("backend", BACKENDS)
def test_pullback_without_self_bar_error(backend):
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    y = torch_function(double_no_self, backend=backend)(x).sum()
    with pytest.raises(PullbackError, match=r"returned 1 (entry|entries)\b.*It looks like the "
                       r"pullback forgot self_bar"):
        y.backward()


@pytest.mark.parametrize("backend", BACKENDS)
def test_positional_parameter_by_keyword_error(backend):
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    f = torch_function(scaled, backend=backend)
    with pytest.raises(NoRuleError, match=r"t is a positional parameter of \S*scaled, "
                       r"passed by keyword\. Rules dispatch on positional arguments .*: "
                       r"pass t positionally, e\.g\. scaled\(x, t\)"):
        f(x, t=2.0).sum().backward()
    f(x, 2.0).sum().backward()  # positionally it works
    torch.testing.assert_close(x.grad, torch.full((3,), 2.0, dtype=torch.float64))


@pytest.mark.parametrize("name, make", [
    ("positive", lambda xp, x: xp.positive(x)),
    ("real", lambda xp, x: xp.real(x)),
    ("squeeze", lambda xp, x: xp.squeeze(x, axis=())),
    ("reshape", lambda xp, x: xp.reshape(x, x.shape)),
])
def test_function_returning_its_input_as_is(name, make):
    def same(x):
        return make(_xp(x), x)

    @rrule.register(same)
    def same_rrule(x):
        def same_pullback(y_bar):
            return NoTangent(), 3 * y_bar  # not the true derivative: shows the rule ran

        return same(x), same_pullback

    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = torch_function(same, backend="native")(x)
    assert y is not x
    (y * y).sum().backward()
    torch.testing.assert_close(x.grad, 3 * 2 * x.detach())
    g = torch.func.grad(lambda v: torch_function(same)(v).sum())(x.detach())
    torch.testing.assert_close(g, torch.full_like(x, 3.0))


def test_none_error_under_torch_func_grad():
    f = torch_function(double_none, backend="native")
    with pytest.raises(TangentConversionError, match=NONE_REFUSED):
        torch.func.grad(lambda x: f(x).sum())(torch.ones(2, dtype=torch.float64))


def test_numpy_array_argument_untouched():
    # a sanity check that a correct rule still goes through the new checks
    f = torch_function(scaled, backend="callback")
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    f(x, np.float64(3.0)).sum().backward()
    torch.testing.assert_close(x.grad, torch.full((2,), 3.0, dtype=torch.float64))
