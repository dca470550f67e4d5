"""Tangents and cotangents that cannot belong to their primal are refused at the
``rrule``/``frule`` boundary with a named error."""

from __future__ import annotations

import dataclasses
import math
import re
import sys

import numpy as np
import pytest

import chainrules
from chainrules import (
    InvalidTangentError,
    NoMatchingRuleError,
    NoTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    frule,
    rrule,
    scoped_rules,
)
from chainrules.core._validate import tangent_mismatch, unwrap_pullback
from chainrules.testing import test_frule, test_rrule


def test_array_cotangent_for_a_float_output_error():
    _, pullback = rrule(math.sin, 0.3)
    msg = ("rrule for math.sin (sin_pullback at ")
    with pytest.raises(InvalidTangentError, match=re.escape(msg)) as e:
        pullback(np.ones(5))
    assert "the cotangent y_bar of the output is ndarray(shape=(5,), dtype=float64); " \
           "expected a real number" in str(e.value)
    assert e.value.table == "rrule" and e.value.function is math.sin


def test_wrong_shape_tangent_error():
    with pytest.raises(InvalidTangentError,
                       match=re.escape("the tangent of argument 1 is ndarray(shape=(4, 4), "
                                       "dtype=float64); expected a real array of shape (3, 3)")):
        frule((NoTangent(), np.ones((4, 4))), np.trace, np.eye(3))
    with pytest.raises(InvalidTangentError, match=r"frule for numpy\.fft\.fft \(fft_frule at "):
        frule((NoTangent(), np.ones(7)), np.fft.fft, np.ones(6))


def test_bogus_tangent_field_for_an_array_output_error():
    _, pullback = rrule(np.dot, np.arange(4.0), np.ones(4))
    with pytest.raises(InvalidTangentError, match="y_bar of the output is Tangent; expected"):
        pullback(Tangent(bogus=5.0))


def test_none_and_string_cotangents_error():
    _, pullback = rrule(np.sin, np.ones(2))
    with pytest.raises(InvalidTangentError,
                       match="is None; expected a real array of shape \\(2,\\); ZeroTangent"):
        pullback(None)
    with pytest.raises(InvalidTangentError, match="is 'a'; expected"):
        pullback("a")


def test_complex_cotangent_for_a_real_output_error():
    _, pullback = rrule(np.sin, np.ones(2))
    with pytest.raises(InvalidTangentError, match=re.escape("(the primal is real)")):
        pullback(np.ones(2) * 1j)
    with pytest.raises(InvalidTangentError, match=re.escape("(the primal is real)")):
        frule((NoTangent(), 1j), math.sin, 0.5)


def test_wrong_number_of_tangents_error():
    with pytest.raises(InvalidTangentError,
                       match=re.escape("dargs is 1 entries; expected a tuple (self_dot, "
                                       "*arg_dots) of 2 entries")):
        frule((NoTangent(),), math.sin, 0.5)


@pytest.mark.parametrize("y_bar", [
    1.0, 1, np.float32(1.0), np.float64(2.0), np.array(1.0), ZeroTangent(), NoTangent(),
    Thunk(lambda: 1.0),
])
def test_float_output_accepts(y_bar):
    _, pullback = rrule(math.sin, 0.0)
    assert pullback(y_bar)[0] == NoTangent()


@pytest.mark.parametrize("y_bar", [1.0, 1j, np.complex64(1j), np.array(1j)])
def test_complex_output_accepts_real_and_complex(y_bar):
    _, pullback = rrule(np.exp, 1j)
    pullback(y_bar)


def test_array_output_needs_the_same_shape():
    _, pullback = rrule(np.sin, np.ones((2, 3)))
    pullback(np.ones((2, 3), np.float32))
    for bad in [np.ones(6), np.ones((3, 2)), 1.0, [[1.0] * 3] * 2]:
        with pytest.raises(InvalidTangentError, match=re.escape("real array of shape (2, 3)")):
            pullback(bad)
    # a 0-d output takes a number
    _, pullback = rrule(np.sin, np.array(0.5))
    pullback(1.0)


def test_tuple_output_is_checked_item_by_item():
    _, pullback = rrule(math.modf, 1.5)
    pullback((1.0, 2.0))
    pullback(Tangent[tuple](1.0, ZeroTangent()))
    with pytest.raises(InvalidTangentError, match=re.escape("(of 2 items, got 3)")):
        pullback((1.0, 2.0, 3.0))
    with pytest.raises(InvalidTangentError,
                       match=re.escape("y_bar of the output[1] is ndarray(shape=(2,)")):
        pullback((1.0, np.ones(2)))
    with pytest.raises(InvalidTangentError, match="y_bar of the output is float; expected a "
                                                  "tuple or a Tangent"):
        pullback(1.0)


def test_namedtuple_output_refuses_an_unknown_field():
    _, pullback = rrule(np.linalg.eigh, np.eye(2))
    with pytest.raises(InvalidTangentError, match="it has no field 'bogus'"):
        pullback(Tangent(bogus=1.0))


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float


def loss(p, x):
    return float(np.sum(p.w * x) + p.b)


def test_structured_argument_refuses_an_unknown_field():
    with scoped_rules():
        @frule.register(loss)
        def loss_frule(dargs, p: Params, x: np.ndarray):
            _, p_dot, x_dot = dargs
            return loss(p, x), float(np.sum(p_dot.w * x) + p_dot.b)

        p = Params(np.ones(2), 1.0)
        assert frule((NoTangent(), Tangent[Params](w=np.ones(2)), ZeroTangent()), loss, p,
                     np.ones(2))[1] == 2.0
        with pytest.raises(InvalidTangentError,
                           match=re.escape("the tangent of argument 1.w is ndarray(shape=(3,)")):
            frule((NoTangent(), Tangent[Params](w=np.ones(3)), ZeroTangent()), loss, p,
                  np.ones(2))
        with pytest.raises(InvalidTangentError, match="it has no field 'c'"):
            frule((NoTangent(), Tangent(c=1.0), ZeroTangent()), loss, p, np.ones(2))


def double(x):
    return 2 * x


def test_non_numpy_arrays_are_checked_by_shape():
    xp = pytest.importorskip("array_api_strict")
    with scoped_rules():
        @rrule.register(double)
        def double_rrule(x):
            def double_pullback(y_bar):
                return NoTangent(), 2 * y_bar
            return double(x), double_pullback

        _, pullback = rrule(double, xp.ones(3))
        pullback(xp.ones(3))
        with pytest.raises(InvalidTangentError, match=re.escape("of shape (3,)")):
            pullback(xp.ones(4))
        with pytest.raises(InvalidTangentError, match=re.escape("(the primal is real)")):
            pullback(xp.ones(3, dtype=xp.complex128))


def test_debug_mode_checks_the_array_library():
    xp = pytest.importorskip("array_api_strict")
    assert tangent_mismatch(np.ones(3), xp.ones(3)) is None
    chainrules.debug_mode(True)
    try:
        assert "same array library" in tangent_mismatch(np.ones(3), xp.ones(3))[1]
    finally:
        chainrules.debug_mode(False)


def test_unwrap_pullback_gives_the_rules_own_pullback():
    _, pullback = rrule(np.dot, np.ones(2), np.ones(2))
    own = unwrap_pullback(pullback)
    assert own is not pullback and own.__qualname__.endswith("contraction_pullback")
    assert unwrap_pullback(len) is len


# ------------------------------------------------------------- rules that do not match


def power(x, n):
    return x**n


def test_tester_names_the_registered_signatures_when_none_matches():
    with scoped_rules():
        @rrule.register(power)
        def power_rrule(x: float, n: int):
            return power(x, n), None

        assert rrule(power, 2.0, 2.5) is None  # the protocol ADs rely on is unchanged
        with pytest.raises(NoMatchingRuleError,
                           match=r"no rrule for .*power\(float, float\): rules are registered "
                                 r"(.|\n)*  - .*power\(float, int\)"):
            test_rrule(power, 2.0, 2.5)
        with pytest.raises(AssertionError, match="no frule found"):
            test_frule(power, 2.0, 2.5)


def test_ad_error_names_the_registered_signatures():
    from chainrules.ad import NoRuleError

    with scoped_rules():
        rrule.register(power)(lambda x, n: None)  # object, object: matches everything
        assert "registered signatures" not in str(NoRuleError(power, "rrule", (list, list)))
    with scoped_rules():
        rrule.register(power, float, int)(lambda x, n: None)
        e = NoRuleError(power, "rrule", (list, list))
        assert re.search(r"the registered signatures are .*power\(float, int\)", str(e))
        assert e.signatures == [f"{__name__}.power(float, int)"]


def test_python_checks_without_a_current_c_extension(monkeypatch):
    import types

    from chainrules.core import _validate

    monkeypatch.setenv("CHAINRULES_PURE_PYTHON", "1")
    assert _validate._load_native() is None
    monkeypatch.setenv("CHAINRULES_PURE_PYTHON", "0")
    stale = types.ModuleType("chainrules.core._fastcall")  # built from an older source
    monkeypatch.setitem(sys.modules, "chainrules.core._fastcall", stale)
    monkeypatch.setattr(chainrules.core, "_fastcall", stale, raising=False)
    assert _validate._load_native() is None
