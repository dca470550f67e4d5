"""The C fast path of ``rrule``/``frule`` answers exactly as the Python entry points do."""

from __future__ import annotations

import inspect
import math
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

import chainrules
from chainrules import (
    InvalidTangentError,
    NoTangent,
    RuleConfig,
    frule,
    non_differentiable,
    rrule,
    scoped_rules,
)
from chainrules.core import _rules

_fastcall = pytest.importorskip("chainrules.core._fastcall",
                                reason="the optional C extension is not built")
pytestmark = pytest.mark.skipif(chainrules.rrule is _rules.rrule_python,
                                reason="the C fast path is switched off "
                                       "(CHAINRULES_PURE_PYTHON)")


def target(*args, **kwargs):
    return args


def plain(x):
    return x


class Cfg(RuleConfig):
    pass


def _register():
    @rrule.register(target)
    def target_rrule(x: float, *, scale=1.0):
        return x * scale, lambda y_bar: (NoTangent(), y_bar * scale)

    @rrule.register(target)
    def target_rrule2(x: float, y: np.ndarray, *, scale=1.0):
        return x * y * scale, lambda y_bar: (NoTangent(), 1.0, 1.0)

    @rrule.register(target, config=Cfg)
    def target_rrule_cfg(config, x: str):
        return "config", None

    @frule.register(target)
    def target_frule(dargs, x: float, *, scale=1.0):
        return x * scale, dargs[1] * scale

    @frule.register(target)
    def target_frule2(dargs, x: float, y: np.ndarray, **kwargs):
        return (x, y, sorted(kwargs)), None

    @rrule.register(target)
    def target_rrule_raises(x: list):
        raise KeyError("from the rule")


CALLS = [
    ("rrule", (target, 2.0), {}),
    ("rrule", (target, 2.0), {"scale": 3.0}),
    ("rrule", (target, 2.0, np.ones(2)), {}),
    ("rrule", (target, 2.0, np.ones(2)), {"scale": 2.0}),
    ("rrule", (target, "miss"), {}),
    ("rrule", (target, "miss"), {"scale": 2.0}),
    ("rrule", (target, 1, 2), {}),
    ("rrule", (target, 1.0, 2.0, 3.0), {}),
    ("rrule", (target,), {}),
    ("rrule", (plain, 1.0), {}),
    ("rrule", (math.sin, 0.5), {}),
    ("rrule", (print, 0.5), {}),
    ("rrule", (Cfg(), target, "s"), {}),
    ("rrule", (Cfg(), target, 2.0), {}),
    ("frule", ((NoTangent(), 1.0), target, 2.0), {}),
    ("frule", ((NoTangent(), 1.0), target, 2.0), {"scale": 3.0}),
    ("frule", ((NoTangent(), 1.0, np.ones(2)), target, 2.0, np.ones(2)),
     {f"k{i}": i for i in range(20)}),  # more keywords than the C path forwards itself
    ("frule", ((NoTangent(), 1.0), target, "miss"), {}),
    ("frule", ((NoTangent(), 1.0), plain, 1.0), {}),
    ("frule", ((NoTangent(), 1.0), math.sin, 0.5), {}),
    ("frule", (Cfg(), (NoTangent(), 1.0), target, 2.0), {}),
    # tangents that do not fit are refused on both paths
    ("frule", ((NoTangent(), np.ones(3)), target, 2.0), {}),
    ("frule", ((NoTangent(), 1.0, 1.0), target, 2.0, np.ones(2)), {}),
    ("frule", ((NoTangent(), None), math.sin, 0.5), {}),
    ("frule", ((NoTangent(),), math.sin, 0.5), {}),
]


def _outcome(entry, args, kwargs):
    """What a call returns, in a comparable form (pullbacks are applied to ones, and to a
    cotangent of the wrong shape, which they must refuse)."""
    try:
        res = entry(*args, **kwargs)
    except Exception as e:  # the exception is the outcome compared
        return ("raised", type(e).__name__, str(e))
    if isinstance(res, tuple) and len(res) == 2 and callable(res[1]):
        try:
            res[1](np.ones(7))
            refused = "accepted"
        except InvalidTangentError as e:
            refused = str(e)
        return ("rule", repr(res[0]), repr(res[1](np.ones_like(res[0]))), refused)
    return ("value", repr(res))


@pytest.mark.parametrize("which", ["rrule", "frule"])
def test_entry_points_are_the_c_fast_path(which):
    entry = getattr(chainrules, which)
    assert type(entry).__name__ == "Entry"
    assert entry.__wrapped__ is getattr(_rules, f"{which}_python")


@pytest.mark.parametrize(("which", "args", "kwargs"), CALLS,
                         ids=[f"{w}-{i}" for i, (w, _, _) in enumerate(CALLS)])
def test_c_and_python_entry_points_agree(which, args, kwargs):
    fast = getattr(chainrules, which)
    python = getattr(_rules, f"{which}_python")
    with scoped_rules():
        _register()
        # three rounds: the first fills the caches, the later ones are answered from them
        for _ in range(3):
            assert _outcome(fast, args, kwargs) == _outcome(python, args, kwargs)


def test_exceptions_from_rules_propagate_unchanged():
    with scoped_rules():
        _register()
        for _ in range(2):
            with pytest.raises(KeyError, match="from the rule"):
                rrule(target, [1.0])


def test_unhashable_callable_goes_the_python_way():
    class Unhashable:
        __hash__ = None

        def __call__(self, x):
            return x

    assert rrule(Unhashable(), 1.0) is None
    assert frule((NoTangent(), 1.0), Unhashable(), 1.0) is None


def test_debug_mode_checks_calls_answered_by_the_fast_path():
    with scoped_rules():

        @rrule.register(plain)
        def plain_rrule(x: float):
            return x, lambda y_bar: (NoTangent(),)  # one cotangent short

        _, pullback = rrule(plain, 1.0)  # fills the fast cache
        pullback(1.0)
        chainrules.debug_mode(True)
        try:
            _, pullback = rrule(plain, 1.0)
            with pytest.raises(Exception) as info:
                pullback(1.0)
        finally:
            chainrules.debug_mode(False)
        _, quiet = rrule(plain, 1.0)
        assert quiet(1.0) == (NoTangent(),)  # outside debug mode nothing checks
    message = str(info.value)
    python_message = _debug_message(_rules.rrule_python)
    assert message == python_message


def _debug_message(entry):
    chainrules.debug_mode(True)
    try:
        with scoped_rules():

            @rrule.register(plain)
            def plain_rrule(x: float):
                return x, lambda y_bar: (NoTangent(),)

            _, pullback = entry(plain, 1.0)
            with pytest.raises(Exception) as info:
                pullback(1.0)
    finally:
        chainrules.debug_mode(False)
    return str(info.value)


def test_registration_after_a_cached_miss_is_seen():
    with scoped_rules():
        assert rrule(plain, 1.0) is None
        assert rrule(plain, 1.0) is None
        non_differentiable(plain)
        y, pullback = rrule(plain, 1.0)
        assert y == 1.0 and pullback(1.0) == (NoTangent(), NoTangent())


def test_the_entry_points_look_like_the_functions_they_front():
    assert rrule.__name__ == "rrule" and frule.__name__ == "frule"
    assert rrule.__doc__ == _rules.rrule_python.__doc__
    assert rrule.register == _rules.rrule_table.register
    assert list(inspect.signature(rrule).parameters)[:3] == ["f", "x", "y"]
    assert pickle.loads(pickle.dumps(rrule)) is rrule
    assert "C fast path" in repr(rrule)


def test_entry_constructor_checks_its_arguments():
    with pytest.raises(ValueError, match=r"entry: lead must be 0 \(rrule\) or 1 \(frule\)"):
        _fastcall.entry(plain, {}, set(), plain, RuleConfig, 2)
    with pytest.raises(TypeError):
        _fastcall.entry(plain, [], set(), plain, RuleConfig, 0)


def test_pure_python_switch():
    code = ("import chainrules; from chainrules.core import _rules; "
            "assert chainrules.rrule is _rules.rrule_python; "
            "assert chainrules.frule is _rules.frule_python; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**_env(), "CHAINRULES_PURE_PYTHON": "1"}, check=True)
    assert out.stdout.strip() == "ok"


def _env():
    import os

    return dict(os.environ)


# ------------------------------------------------------------ the checks in C (_validate)

from chainrules import Thunk, ZeroTangent  # noqa: E402
from chainrules.core import _validate  # noqa: E402


def _sin_pullback():
    return rrule(math.sin, 0.3)[1]


def test_numpy_arrays_are_checked_in_c():
    assert _validate.native_checks_arrays


def test_checked_pullback_wraps_the_rules_pullback():
    pullback = _sin_pullback()
    assert type(pullback) is _fastcall.CheckedPullback
    assert pullback.__wrapped__.__qualname__ == pullback.__qualname__ == "sin_pullback"
    assert pullback.__name__ == pullback.__wrapped__.__name__
    assert pullback.y == math.sin(0.3) and pullback.f is math.sin
    assert "sin_pullback" in repr(pullback)
    assert pullback(y_bar=2.0) == pullback(2.0) == (NoTangent(), 2.0 * math.cos(0.3))


def test_checked_pullback_argument_count_error():
    pullback = _sin_pullback()
    msg = "a pullback takes one argument, the cotangent y_bar (got 2 positional and 0 keyword"
    with pytest.raises(TypeError, match=re.escape(msg)):
        pullback(1.0, 2.0)
    with pytest.raises(TypeError, match=re.escape("(got 0 positional and 1 keyword")):
        pullback(z_bar=1.0)


@pytest.mark.parametrize("y_bar", [1.0, 2, ZeroTangent(), Thunk(lambda: 1.0),
                                   np.float64(1.0), np.array(1.0), "s", None, np.ones(2),
                                   1j])
def test_python_call_of_checked_pullback_agrees_with_c(y_bar):
    # the class's __call__ (what the reference AD traces) is the C slot in Python
    pullback = _sin_pullback()

    def outcome(call):
        try:
            return repr(call(y_bar))
        except InvalidTangentError as e:
            return str(e)

    assert outcome(pullback) == outcome(lambda b: type(pullback).__call__(pullback, b))


def test_array_cotangents_are_checked_by_shape_and_kind():
    _, pullback = rrule(np.sin, np.ones((2, 3)))
    pullback(np.ones((2, 3), np.float32))
    pullback(np.ones((2, 3), complex).real)
    with pytest.raises(InvalidTangentError, match=re.escape(
            "is ndarray(shape=(3, 2), dtype=float64); expected a real array of shape (2, 3)")):
        pullback(np.ones((3, 2)))
    with pytest.raises(InvalidTangentError, match=re.escape("expected a real array of shape")):
        pullback(np.ones((2, 3), complex))
    _, pullback = rrule(np.sin, np.ones((2, 3), complex))
    pullback(np.ones((2, 3), complex))
    pullback(np.ones((2, 3)))
    _, pullback = rrule(np.sin, np.array(0.5))
    pullback(np.array(1.0))
    with pytest.raises(InvalidTangentError, match=re.escape("expected a real array of shape ()")):
        pullback(np.ones(1))


def test_frule_tangents_beyond_the_fast_cases_go_to_python():
    for _ in range(2):  # the second call is answered from the fast cache
        assert frule((NoTangent(), np.float64(2.0)), math.sin, 0.0) == (0.0, 2.0)
        assert frule([NoTangent(), 2.0], math.sin, 0.0) == (0.0, 2.0)
        assert frule((NoTangent(), np.ones(2, np.float32)), np.sin, np.zeros(2))[1].tolist() \
            == [1.0, 1.0]
        with pytest.raises(InvalidTangentError, match=re.escape(
                "the tangent of argument 1 is ndarray(shape=(2,), dtype=complex128); "
                "expected a real array of shape (2,)")):
            frule((NoTangent(), np.ones(2, complex)), np.sin, np.zeros(2))
        with pytest.raises(InvalidTangentError, match=re.escape("1 entries")):
            frule((NoTangent(),), np.sin, np.zeros(2))


SHARED = []


def shared_result(x):
    return x


def test_a_result_tuple_the_rule_keeps_is_not_changed():
    def shared_pullback(y_bar):
        return NoTangent(), y_bar

    SHARED[:] = [(1.0, shared_pullback)]
    with scoped_rules():
        @rrule.register(shared_result)
        def shared_result_rrule(x: float):
            return SHARED[0]

        for _ in range(3):
            y, pullback = rrule(shared_result, 1.0)
            assert SHARED[0][1] is shared_pullback
            assert pullback.__wrapped__ is shared_pullback
            with pytest.raises(InvalidTangentError):
                pullback("s")


def test_many_live_pullbacks_keep_their_own_state():
    pullbacks = [rrule(math.sin, float(i))[1] for i in range(100)]
    for i, pullback in enumerate(pullbacks):
        assert pullback(1.0) == (NoTangent(), math.cos(float(i)))
    del pullbacks
    pullbacks = [rrule(math.sin, float(i))[1] for i in range(100)]  # reuses freed ones
    assert [pullback.y for pullback in pullbacks] == [math.sin(float(i)) for i in range(100)]


class Node:
    def __init__(self, x):
        self.x = x


def cyclic(node):
    return node


def test_a_cycle_through_a_pullback_is_collected():
    import gc
    import weakref

    with scoped_rules():
        @rrule.register(cyclic)
        def cyclic_rrule(node: Node):
            def cyclic_pullback(y_bar):
                return NoTangent(), y_bar

            return node, cyclic_pullback

        node = Node(1.0)
        pullback = rrule(cyclic, node)[1]
        node.pullback = pullback  # node -> pullback -> node
        ref = weakref.ref(node)
        del node, pullback
        gc.collect()
        assert ref() is None


def test_checked_pullback_is_copied_as_a_function_is():
    import copy

    pullback = _sin_pullback()
    assert copy.copy(pullback) is pullback
    assert copy.deepcopy([pullback])[0] is pullback
