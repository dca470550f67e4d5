"""``backend="auto"`` and ``"native"`` in the PyTorch bridge: honest choices and errors.

Auto falls back to the callback path only when NumPy met a tensor and ``f`` runs on
NumPy arrays; any other failure of the native attempt is raised as it is. Its reason
names where NumPy met the tensor. ``"native"`` refuses a NumPy-only function at its
first call, eagerly too.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
scipy_special = pytest.importorskip("scipy.special")
scipy_linalg = pytest.importorskip("scipy.linalg")

from chainrules import NoTangent, array_namespace, rrule  # noqa: E402
from chainrules.interop import NumPyOnlyRuleError  # noqa: E402
from chainrules.interop.torch import torch_function  # noqa: E402


def sin_times(x, w):
    xp = array_namespace(x, w)
    return xp.sin(x) * w


@rrule.register(sin_times)
def sin_times_rrule(x, w):
    xp = array_namespace(x, w)

    def sin_times_pullback(y_bar):
        return NoTangent(), y_bar * xp.cos(x) * w, y_bar * xp.sin(x)

    return sin_times(x, w), sin_times_pullback


def cos_in_pullback(x):
    xp = array_namespace(x)
    return xp.sin(x)


@rrule.register(cos_in_pullback)
def cos_in_pullback_rrule(x):
    xp = array_namespace(x)

    def cos_in_pullback_pullback(y_bar):
        return NoTangent(), y_bar * np.cos(x)  # NumPy: the callback path's job

    return xp.sin(x), cos_in_pullback_pullback


def _matrix():
    return torch.tensor([[2.0, 0.5], [0.25, 3.0]], dtype=torch.float64)


def test_auto_numpy_primal_takes_the_callback_under_torch_func():
    inv = torch_function(np.linalg.inv)
    a = _matrix()
    assert inv.backend_for(a) == "callback"
    expected = -torch.linalg.inv(a).T @ torch.ones(2, 2, dtype=torch.float64) @ \
        torch.linalg.inv(a).T
    torch.testing.assert_close(torch.func.grad(lambda m: inv(m).sum())(a), expected)
    batch = torch.stack([a, 2 * a])
    torch.testing.assert_close(torch.func.vmap(inv)(batch), torch.linalg.inv(batch))
    _, y_dot = torch.func.jvp(inv, (a,), (torch.eye(2, dtype=torch.float64),))
    torch.testing.assert_close(y_dot, -torch.linalg.inv(a) @ torch.linalg.inv(a))


def test_auto_user_broadcasting_mistake_shows_torchs_error():
    f = torch_function(sin_times)
    x, w = torch.ones(3, dtype=torch.float64), torch.ones(4, dtype=torch.float64)
    with pytest.raises(RuntimeError, match=re.escape(
            "The size of tensor a (3) must match the size of tensor b (4)")):
        f(x, w)
    assert f.backends == {}


def test_auto_reason_names_the_numpy_call_in_the_rule():
    f = torch_function(cos_in_pullback)
    x = torch.tensor([0.1, 0.2], dtype=torch.float64, requires_grad=True)
    assert f.backend_for(x) == "callback"
    ((_, reason),) = f.backends.values()
    assert re.search(r"test_torch_auto\.py:\d+ \(return NoTangent\(\), y_bar \* np\.cos\(x\)",
                     reason), reason
    assert "DeprecationWarning" not in reason and "__array_wrap__" not in reason
    f(x).sum().backward()
    torch.testing.assert_close(x.grad, torch.cos(x.detach()))


def test_auto_reason_for_a_numpy_ufunc_is_not_a_deprecation_warning():
    f = torch_function(np.sin)
    assert f.backend_for(torch.ones(2, dtype=torch.float64)) == "callback"
    ((_, reason),) = f.backends.values()
    assert reason.startswith("NumPy-only") and "DeprecationWarning" not in reason


@pytest.mark.parametrize("f, equivalent", [
    (np.linalg.inv, "torch.linalg.inv"),
    (scipy_linalg.expm, "torch.linalg.matrix_exp"),
    (scipy_special.erf, "torch.special.erf"),
])
def test_native_refuses_numpy_only_at_the_first_eager_call_error(f, equivalent):
    bridged = torch_function(f, backend="native")
    with pytest.raises(NumPyOnlyRuleError, match=re.escape(equivalent)):
        bridged(_matrix())  # no grad, no transform: NumPy alone would have run it


def test_native_error_names_the_numpy_call_in_the_rule():
    f = torch_function(cos_in_pullback, backend="native")
    x = torch.tensor([0.1, 0.2], dtype=torch.float64, requires_grad=True)
    with pytest.raises(NumPyOnlyRuleError, match=r"NumPy met the tensor at \S*test_torch_auto"
                                                 r"\.py:\d+ \(return NoTangent\(\), y_bar \* "
                                                 r"np\.cos\(x\)"):
        f(x).sum().backward()
