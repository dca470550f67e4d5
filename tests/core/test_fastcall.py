"""The C fast path of ``rrule``/``frule`` answers exactly as the Python entry points do."""

from __future__ import annotations

import inspect
import math
import pickle
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
