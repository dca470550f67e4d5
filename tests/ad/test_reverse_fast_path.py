"""Reverse mode's fast paths (``ReverseTrace``: scalar_rule calls recorded as partials
through a lookup cache, and ``x[i]`` recorded as an index node whose cotangent is added
in place) give what the general path gives, value, gradient, dtype and shape; they step
aside where they do not apply; and a registration is seen at once."""

from __future__ import annotations

import operator

import numpy as np
import pytest

from chainrules import NoTangent, RuleOverwriteWarning, rrule, scalar_rule
from chainrules.ad import _native, _reverse, grad, hessian, value_and_grad, vjp


def _loop_sum(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * x[i]
    return s


def _rows(x):
    return sum(np.sum(np.sin(x[i]) * (i + 1)) for i in range(x.shape[0]))


def _programs():
    return {
        "unary": lambda x: np.sum(np.tanh(np.sin(x))),
        "constants": lambda x: np.sum((x * 1.5 + 2) / 3.0 - 1),
        "powers": lambda x: np.sum(x ** 2 + x ** 3.5 + 2.0 ** x),
        "two traced": lambda x: np.sum(x * x + np.arctan2(x, x + 1.0)),
        "mean": lambda x: np.mean((x - 0.5) ** 2),
        "loop over elements": _loop_sum,
        "repeated reads": lambda x: x[0] * x[0] * x[-1] + x[0],
        # x's first cotangent comes from a scalar node (not owned): x[0]'s goes the
        # rule's way, as a thunk added out of place
        "read before an array op": lambda x: x[0] + np.sum(x * 2.0),
        "read after an array op": lambda x: np.sum(x * 2.0) + x[1],
    }


def _general(monkeypatch):
    """Turn the fast paths off: every call takes `process`'s general path (and the C
    tape, which reads the cache itself, is off too; `_c_tape_restored` turns it back)."""
    monkeypatch.setattr(_reverse, "_fast_get", lambda key, default=None: None)
    _native.set_enabled(False)


@pytest.fixture(autouse=True)
def _c_tape_restored():
    was = _native.enabled()
    yield
    _native.set_enabled(was)


_INPUTS = {
    "f8": np.linspace(0.2, 1.4, 6),
    "f4": np.linspace(0.2, 1.4, 6, dtype=np.float32),
    "non-contiguous": np.linspace(0.2, 1.4, 12)[::2],
}


@pytest.mark.parametrize("name", list(_programs()))
@pytest.mark.parametrize("xname", list(_INPUTS))
def test_same_as_the_general_path(name, xname, monkeypatch):
    f, x = _programs()[name], _INPUTS[xname]
    before = x.copy()
    fast = value_and_grad(f)(x)
    _general(monkeypatch)
    general = value_and_grad(f)(x)
    np.testing.assert_array_equal(x, before)  # never written into
    for a, b in zip(fast, general):
        assert type(a) is type(b)
        assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("f, x", [
    (_rows, np.arange(1.0, 7.0).reshape(3, 2)),  # x[i] is a row (an array cotangent)
    (lambda z: abs(z[0] * z[1]) ** 2, np.array([1.0 + 2.0j, 0.5 - 1.0j])),  # complex
    (lambda x: np.sum(x[1] * 3.0), np.array([[1.0, 2.0], [3.0, 4.0]])),
    (lambda a: np.linalg.eigh(a)[0][0] * np.linalg.eigh(a)[0][1],  # a multi-output leaf
     np.array([[2.0, 0.5], [0.5, 1.0]])),
])
def test_index_nodes_same_as_the_rule(f, x, monkeypatch):
    fast = grad(f)(x)
    _general(monkeypatch)
    np.testing.assert_array_equal(fast, grad(f)(x))


def test_index_nodes_take_the_fast_path(monkeypatch):
    """Not only equal results: the path is taken, in place, and steps aside for a
    cotangent of an outer trace (a second derivative), which the rule's pullback takes.
    (The Python code's path: the C tape calls the function it was configured with.)"""
    _native.set_enabled(False)
    taken = []
    original = _reverse._index_backward

    def spy(*args):
        out = original(*args)
        taken.append(out)
        return out

    monkeypatch.setattr(_reverse, "_index_backward", spy)
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(grad(_loop_sum)(x), 2 * x)
    assert taken and all(taken)
    taken.clear()
    # a pullback of plain values run on a cotangent of an outer trace
    d = grad(lambda s: np.sum(vjp(lambda u: u[0] * u[1], x)[1](s)[0]))(1.0)
    assert d == 3.0
    assert False in taken  # traced cotangents went the rule's way
    h = hessian(lambda v: v[0] ** 3 * v[1])(x)  # forward over reverse: no index nodes
    np.testing.assert_allclose(h, [[12.0, 3.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, 0.0]])


def test_a_rule_for_getitem_of_ones_own_is_used():
    """A user's rule for x[i] is not the AD's: the index node never stands in for it."""

    def getitem_rrule(config, x, i):
        def getitem_pullback(y_bar):
            out = np.zeros_like(x)
            out[i] = 10.0 * y_bar  # deliberately not the derivative: shows which ran
            return None, out, None

        return x[i], getitem_pullback

    from chainrules.ad import ADConfig

    with pytest.warns(RuleOverwriteWarning, match="replaces it"):
        rrule.register(operator.getitem, np.ndarray, int, config=ADConfig)(getitem_rrule)
    np.testing.assert_array_equal(grad(lambda x: x[1])(np.ones(3)), [0.0, 10.0, 0.0])


def test_a_registration_is_seen_by_the_next_gradient():
    """The lookup cache of the fast paths is emptied by a registration: a function traced
    through (no rule) gets its new rule on the next call, and so does an operator."""

    def triple(x):
        return x * 3.0

    g = grad(lambda x: np.sum(triple(x)))
    np.testing.assert_array_equal(g(np.ones(2)), [3.0, 3.0])
    scalar_rule(triple, lambda x: 5.0)  # deliberately wrong: shows that the rule ran
    np.testing.assert_array_equal(g(np.ones(2)), [5.0, 5.0])

    class Num(float):
        pass

    h = grad(lambda x: x * Num(2.0))
    assert h(1.0) == 2.0
    scalar_rule(operator.mul, lambda a, b: (7.0, 7.0), types=(float, Num))
    assert h(1.0) == 7.0


def test_a_replaced_rrule_is_seen_by_the_next_gradient():
    """A call whose rule is an ordinary rrule (recorded with its pullback through the
    cached fact of the call) gets a replacing rule on the next gradient."""

    def scale(x, k):
        return x * k

    def rrule_with(factor):
        def scale_rrule(x, k):
            return x * k, lambda y_bar: (NoTangent(), factor * y_bar, NoTangent())

        return scale_rrule

    g = grad(lambda x: np.sum(scale(x, 2.0)))
    rrule.register(scale)(rrule_with(2.0))
    np.testing.assert_array_equal(g(np.ones(2)), [2.0, 2.0])
    with pytest.warns(RuleOverwriteWarning):
        rrule.register(scale)(rrule_with(5.0))  # deliberately wrong: shows which ran
    np.testing.assert_array_equal(g(np.ones(2)), [5.0, 5.0])


# --------------------------------------------------------------------------------------
# value_and_grad's one-leaf path (`_api._leaf_value_and_grad`): float and real float
# array arguments; `vjp` always takes the general path, which is the reference here.

def _via_vjp(f, args, argnums):
    y, pullback = vjp(f, *args)
    grads = pullback(np.ones_like(y) if isinstance(y, np.ndarray) else type(y)(1.0))
    return y, tuple(grads[i] for i in argnums)


_X = np.linspace(0.2, 1.4, 5)
_LEAF_CASES = {
    "np.float64 output": (lambda x, c: np.sum(np.sin(x) * c), (_X, 2.0), (0, 1)),
    "float output": (lambda a, b: a * b + a, (1.5, -2.0), (0, 1)),
    "0-d output": (lambda x: np.sum(x, keepdims=True).reshape(()), (_X,), (0,)),
    "size-1 output": (lambda x: np.sum(x, keepdims=True), (_X,), (0,)),
    "float32": (lambda x: np.sum(x * x), (_X.astype(np.float32),), (0,)),
    "unused argument": (lambda x, c: np.sum(x), (_X, 2.0), (0, 1)),
    "untraced output": (lambda x: 3.0, (_X,), (0,)),
    "only the second": (lambda x, c: np.sum(x) * c, (_X, 2.0), (1,)),
    "non-contiguous": (lambda x: np.sum(np.exp(x)), (np.linspace(0, 1, 10)[::2],), (0,)),
}


@pytest.mark.parametrize("name", list(_LEAF_CASES))
def test_one_leaf_gradients_as_the_general_path(name):
    f, args, argnums = _LEAF_CASES[name]
    value, grads = value_and_grad(f, argnums)(*args)
    y, want = _via_vjp(f, args, argnums)
    assert type(value) is type(y) and np.shape(value) == np.shape(y)
    assert value == y
    for g, w in zip(grads, want):
        assert type(g) is type(w) and np.shape(g) == np.shape(w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


def test_one_leaf_path_outputs_it_refuses():
    from chainrules.ad import NonScalarOutputError

    with pytest.raises(NonScalarOutputError, match="ndarray"):
        grad(lambda x: x * 2.0)(_X)
    with pytest.raises(NonScalarOutputError, match="tuple"):
        grad(lambda x: (np.sum(x), 1.0))(_X)


def test_one_leaf_path_repeated_positions_and_nesting():
    f = lambda a, b: a * a * b  # noqa: E731
    assert value_and_grad(f, (0, 0))(3.0, 2.0) == (18.0, (12.0, 12.0))
    # the inner gradient's output is a tracer of the outer trace
    assert grad(lambda x: grad(lambda y: x * y * y)(1.0))(3.0) == 2.0


def test_argnums_follow_the_argument_count_of_each_call():
    """The positions are kept per argument count: -1 is the last argument of each call."""
    g = value_and_grad(lambda *a: a[0] * a[-1], argnums=-1)
    assert g(2.0, 3.0) == (6.0, 2.0)
    assert g(2.0, 5.0, 3.0) == (6.0, 2.0)
    assert g(4.0) == (16.0, 8.0)
