"""What the AD cannot differentiate fails loudly, with a message that names the
operation and suggests a rule for the enclosing function."""

from __future__ import annotations

import array
import math
import re
import struct

import numpy as np
import pytest

from chainrules import NoTangent, frule, rrule
from chainrules.ad import (
    MutationError,
    NoRuleError,
    TracerConversionError,
    UntrackedOutputError,
    grad,
    jvp,
)

FIX = "write a rule for the enclosing function"


def test_float_of_traced_value_error():
    # %-formatting asks for float(x) directly: no call site to name
    with pytest.raises(TracerConversionError, match=re.escape(
            "float() would turn a traced value (traced float 2.0) into a plain number")):
        grad(lambda x: len("%.2f" % x) * x)(2.0)  # noqa: UP031 -- %-format calls float()


def test_float_inside_builtin_names_the_builtin():
    with pytest.raises(TracerConversionError,
                       match=re.escape("float() inside array.array would turn a traced value")):
        grad(lambda x: array.array("d", [x])[0])(2.0)


def test_float_error_suggests_rule():
    with pytest.raises(TracerConversionError, match=FIX):
        grad(lambda x: array.array("d", [x])[0])(2.0)


def test_item_of_traced_array_error():
    with pytest.raises(TracerConversionError, match=re.escape("x.item()")):
        grad(lambda x: x.item())(np.array([1.0]))


def test_builtin_failing_on_traced_value_error():
    with pytest.raises(NoRuleError, match=re.escape("no rrule for _struct.pack(str, float)")):
        grad(lambda x: struct.unpack("d", struct.pack("d", x))[0])(2.0)


_GLOBAL_BUFFER = np.zeros(3)


def test_writing_traced_value_into_global_array_error():
    # a plain array the AD cannot rebind (a global): refused, never a lost derivative
    def f(x):
        _GLOBAL_BUFFER[0] = x
        return np.sum(_GLOBAL_BUFFER)

    with pytest.raises(MutationError, match=re.escape(
            "`a[...] = value` with a traced value into a plain array mutates an array "
            "in place (the AD makes a plain array traced by rebinding its name")):
        grad(f)(1.0)
    assert not _GLOBAL_BUFFER.any()


def test_setitem_on_traced_array_error():
    def f(x):
        x[0] = 1.0
        return np.sum(x)

    with pytest.raises(MutationError, match=re.escape("`a[...] = value` on a traced array "
                                                      "mutates an array in place")):
        grad(f)(np.ones(2))


def test_inplace_add_on_traced_array_error():
    def addone(a):
        a += 1
        return sum(a)

    with pytest.raises(MutationError, match=re.escape("`x += ...` on a traced array")):
        grad(addone)(np.ones(3))


def test_inplace_ufunc_into_aliased_plain_array_error():
    def f(x):
        acc = np.zeros(2)
        alias = acc
        acc += x
        return np.sum(acc) + np.sum(alias)

    with pytest.raises(MutationError, match=re.escape(
            "`y += ...` with a traced value into a plain array mutates an array in place "
            "(the array is also referred to elsewhere")):
        grad(f)(np.ones(2))


# The rule set keeps growing, so these tests remove the rule they need absent with
# an opt-out (undone after each test by the scoped_rules fixture in conftest.py).


def test_builtin_without_rule_names_the_function():
    rrule.opt_out(math.gamma, float)
    with pytest.raises(TracerConversionError,
                       match=re.escape("float() inside math.gamma would turn a traced value")):
        grad(lambda x: math.gamma(x))(2.5)


def test_numpy_function_without_rule_error():
    # np.inner is written in C: without a rule there is nothing to trace
    rrule.opt_out(np.inner, np.ndarray, np.ndarray)
    with pytest.raises(NoRuleError, match=re.escape(
            "no rrule for numpy.inner(ndarray, ndarray) and the AD cannot trace into it "
            "(NumPy would have to convert the traced values to plain arrays)")):
        grad(lambda x: np.inner(x, x))(np.ones(3))


def test_numpy_python_function_without_rule_is_traced():
    # np.trapezoid is written in Python: opted out, its implementation is traced
    rrule.opt_out(np.trapezoid, np.ndarray)
    np.testing.assert_allclose(grad(lambda x: np.trapezoid(x ** 2))(np.arange(3.0)),
                               [0.0, 2.0, 2.0])


def test_numpy_ufunc_without_rule_error():
    rrule.opt_out(np.spacing, float)
    with pytest.raises(NoRuleError, match=re.escape("no rrule for numpy.spacing(float)")):
        grad(lambda x: np.spacing(x))(1.0)


def test_forward_mode_error_names_frule():
    frule.opt_out(np.spacing, float)
    rrule.opt_out(np.spacing, float)
    with pytest.raises(NoRuleError, match=re.escape("no frule for numpy.spacing(float)")):
        jvp(lambda x: np.spacing(x), (1.0,), (1.0,))


def test_ufunc_method_without_equivalent_error():
    with pytest.raises(NoRuleError, match=re.escape("ufunc method numpy.add.outer")):
        grad(lambda x: np.sum(np.add.outer(x, x)))(np.ones(2))


def test_function_without_source_fails_loudly():
    namespace: dict = {}
    exec("import math\ndef hidden(x):\n    return math.sin(x)\n", namespace)
    with pytest.raises(TracerConversionError, match=re.escape("inside hidden")):
        grad(namespace["hidden"])(1.0)


def test_mutating_function_works_once_it_has_an_rrule():
    # The reference document's addone! example.
    def addone(a):
        a += 1
        return sum(a)

    a = np.ones(3)
    with pytest.raises(MutationError):
        grad(addone)(a)

    @rrule.register(addone)
    def addone_rrule(a: np.ndarray):
        y = addone(a)

        def addone_pullback(y_bar):
            return NoTangent(), np.ones(len(a)) * y_bar

        return y, addone_pullback

    np.testing.assert_array_equal(grad(addone)(np.ones(3)), [1.0, 1.0, 1.0])


def test_rule_returning_untracked_object_error():
    class Opaque:
        __slots__ = ("v",)

        def __init__(self, v):
            self.v = v

    def wrap(x):
        return Opaque(x)

    @rrule.register(wrap)
    def wrap_rrule(x: float):
        return Opaque(x), lambda y_bar: (NoTangent(), 1.0)

    with pytest.raises(UntrackedOutputError,
                       match=re.escape("the rule for tests.ad.test_errors.test_rule_returning_"
                                       "untracked_object_error.<locals>.wrap returned a Opaque,")):
        grad(lambda x: wrap(x).v)(1.0)


def test_value_view_of_traced_array_error():
    with pytest.raises(TracerConversionError, match=re.escape("x.flat would turn a traced")):
        grad(lambda x: sum(x.flat))(np.ones(2))


def test_in_place_method_of_traced_array_error():
    with pytest.raises(MutationError, match=re.escape(
            "x.sort() on a traced array mutates an array in place")):
        grad(lambda x: x.sort())(np.ones(2))


@pytest.mark.parametrize("seed", [None, "a"])
def test_vjp_none_or_string_cotangent_error(seed):
    from chainrules.ad import InputTypeError, vjp

    _, pullback = vjp(np.sin, np.ones(3))
    with pytest.raises(InputTypeError, match=re.escape(
            f"vjp pullback: the output cotangent y_bar: expected a cotangent of the output, "
            f"got {seed!r}; pass ZeroTangent() for a zero cotangent")):
        pullback(seed)


def test_jvp_none_or_complex_tangent_error():
    from chainrules.ad import InputTypeError, jvp

    with pytest.raises(InputTypeError, match=re.escape(
            "tangent 0: expected a tangent of the primal, got None")):
        jvp(np.sin, (np.ones(3),), (None,))
    with pytest.raises(InputTypeError, match=re.escape(
            "tangent 0: expected a real tangent for a real primal, got dtype complex128")):
        jvp(np.sin, (np.ones(3),), (np.ones(3) * 1j,))
    jvp(np.sin, (np.ones(3) * 1j,), (np.ones(3) * 1j,))  # complex primal: fine
