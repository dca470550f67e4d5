"""Forward mode's scalar_rule fast path (``ForwardTrace._scalar``: one traced real
array or float, the other arguments plain numbers) gives what the general path gives,
value, tangent, dtype and shape, and steps aside where it does not apply."""

from __future__ import annotations

import numpy as np
import pytest

from chainrules.ad import _forward, _native, jvp
from chainrules.ad._tracer import _NO_RULE


def _programs():
    return {
        "unary": lambda x: np.tanh(np.sin(x)),
        "constant right": lambda x: (x * 1.5 + 2) / 3.0 - 1,
        "constant left": lambda x: 2.0 - 3 * x + 1.0 / (x + 4.0),
        "powers": lambda x: x ** 2 + x ** 3.5 + 2.0 ** x,
        "broadcast": lambda x: x + np.ones((2, 1)),
        "two traced": lambda x: x * x + np.arctan2(x, x + 1.0),
        "reduction": lambda x: np.sum(np.exp(x) * 0.5),
    }


@pytest.mark.parametrize("name", list(_programs()))
@pytest.mark.parametrize("x", [np.linspace(0.2, 1.4, 6), np.linspace(0.2, 1.4, 6,
                                                                     dtype=np.float32),
                               np.float64(0.7).item(), np.array(0.9)],
                         ids=["f8", "f4", "float", "0-d"])
def test_same_as_the_general_path(name, x, monkeypatch):
    f = _programs()[name]
    dx = np.ones_like(x) * 0.3 if isinstance(x, np.ndarray) else 0.3
    fast = jvp(f, (x,), (dx,))
    monkeypatch.setattr(_forward.ForwardTrace, "_scalar", lambda *a, **k: _NO_RULE)
    with _native.python_only():  # (the C tape's fast path is ForwardTrace._scalar's too)
        general = jvp(f, (x,), (dx,))
    for a, b in zip(fast, general):
        assert type(a) is type(b)
        assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)


def test_the_fast_path_runs(monkeypatch):
    """Not only equal results: the path is taken (for sin, and for x * 1.5). (The C
    tape's copy of it is off here; tests/ad/test_native_tape.py compares the two.)"""
    taken = []
    original = _forward.ForwardTrace._scalar

    def spy(self, f, *args, **kwargs):
        out = original(self, f, *args, **kwargs)
        taken.append((f, out is not _NO_RULE))
        return out

    monkeypatch.setattr(_forward.ForwardTrace, "_scalar", spy)
    import operator

    with _native.python_only():
        jvp(lambda x: np.sin(x) * 1.5, (np.ones(3),), (np.ones(3),))
    assert (np.sin, True) in taken and (operator.mul, True) in taken


def test_a_registration_is_seen_by_the_next_jvp():
    """The fast path's lookup cache is emptied by a registration: a replaced rule is not
    used after its replacement."""
    from chainrules import RuleOverwriteWarning, scalar_rule

    def triple(x):
        return x * 3.0

    x, dx = np.ones(2), np.ones(2)
    scalar_rule(triple, lambda x: 3.0)
    np.testing.assert_array_equal(jvp(triple, (x,), (dx,))[1], [3.0, 3.0])
    with pytest.warns(RuleOverwriteWarning):
        scalar_rule(triple, lambda x: 5.0)  # deliberately wrong: shows that it ran
    np.testing.assert_array_equal(jvp(triple, (x,), (dx,))[1], [5.0, 5.0])
