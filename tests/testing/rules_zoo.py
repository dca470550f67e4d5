"""Deliberately wrong rules (each tester must catch them) and correct but tricky rules
(each tester must pass them), for the meta-tests of chainrules.testing."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from chainrules import (
    InplaceableThunk,
    NoTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    frule,
    not_implemented,
    rrule,
    rrule_via_ad,
    unthunk,
)
from chainrules.core import HasReverseMode
from chainrules.testing import no_tangent, with_tangent


@dataclass(frozen=True)
class Entry:
    name: str
    tester: str  # "rrule" or "frule"
    f: Any
    args: Callable[[np.random.Generator], tuple]
    match: str = ""  # regex the AssertionError message must match (wrong rules)
    kwargs: dict | None = None
    options: dict | None = None


WRONG: list[Entry] = []
RIGHT: list[Entry] = []


def vec(rng: np.random.Generator, *shape: int, dtype: Any = np.float64) -> np.ndarray:
    return rng.uniform(-2, 2, size=shape).astype(dtype)


def cvec(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.uniform(-2, 2, size=shape) + 1j * rng.uniform(-2, 2, size=shape)


# ================================================================== wrong rules


def sin_wrong_sign(x):
    return np.sin(x)


@rrule.register(sin_wrong_sign)
def _(x):
    def sin_wrong_sign_pullback(y_bar):
        return NoTangent(), -np.cos(x) * y_bar

    return np.sin(x), sin_wrong_sign_pullback


@frule.register(sin_wrong_sign)
def _(dargs, x):
    return np.sin(x), -np.cos(x) * dargs[1]


WRONG += [
    Entry("wrong sign", "rrule", sin_wrong_sign, lambda r: (vec(r, 5),), "dot-product test"),
    Entry("wrong sign", "frule", sin_wrong_sign, lambda r: (vec(r, 5),), "wrong pushforward"),
    Entry("wrong sign (big)", "rrule", sin_wrong_sign, lambda r: (vec(r, 2000),),
          r"block of \d+ of 2000"),
]


def square_missing_factor(x):
    return x * x


@rrule.register(square_missing_factor)
def _(x):
    def square_pullback(y_bar):
        return NoTangent(), x * y_bar  # should be 2 x y_bar

    return x * x, square_pullback


@frule.register(square_missing_factor)
def _(dargs, x):
    return x * x, x * dargs[1]


WRONG += [
    Entry("missing factor", "rrule", square_missing_factor, lambda r: (vec(r, 3, 2),),
          "wrong cotangent for argument 1"),
    Entry("missing factor", "frule", square_missing_factor, lambda r: (vec(r, 3, 2),),
          "wrong pushforward"),
    Entry("missing factor (scalar)", "rrule", square_missing_factor,
          lambda r: (float(r.uniform(0.5, 2)),), "wrong cotangent"),
]


def matmul_transposed(a, b):
    return a @ b


@rrule.register(matmul_transposed)
def _(a, b):
    def matmul_transposed_pullback(y_bar):
        y_bar = unthunk(y_bar)
        return NoTangent(), y_bar @ b, a @ y_bar  # should be y_bar @ b.T, a.T @ y_bar

    return a @ b, matmul_transposed_pullback


WRONG.append(Entry("transposed matmul cotangent", "rrule", matmul_transposed,
                   lambda r: (vec(r, 3, 3), vec(r, 3, 3)), "argument 1"))


def cmul_no_conj(z, c):
    return z * c


@rrule.register(cmul_no_conj)
def _(z, c):
    def cmul_pullback(y_bar):
        return NoTangent(), y_bar * c, y_bar * z  # should multiply by conj

    return z * c, cmul_pullback


WRONG.append(Entry("missing conj (complex)", "rrule", cmul_no_conj,
                   lambda r: (cvec(r, 4), cvec(r, 4)), "argument 1"))


def add_no_reduce(x, b):
    return x + b


@rrule.register(add_no_reduce)
def _(x, b):
    def add_pullback(y_bar):
        y_bar = unthunk(y_bar)
        return NoTangent(), y_bar, y_bar  # b's cotangent must be summed over axis 0

    return x + b, add_pullback


WRONG.append(Entry("missing broadcast reduction", "rrule", add_no_reduce,
                   lambda r: (vec(r, 4, 3), vec(r, 3)), r"argument 2.*shape \(3,\)"))


def sin_f32_bug(x):
    return np.sin(x)


@rrule.register(sin_f32_bug)
def _(x):
    def sin_f32_bug_pullback(y_bar):
        c = np.cos(x)
        if x.dtype == np.float32:
            c = c * np.float32(1.05)  # a float32-only slip
        return NoTangent(), c * y_bar

    return np.sin(x), sin_f32_bug_pullback


@frule.register(sin_f32_bug)
def _(dargs, x):
    c = np.cos(x)
    if x.dtype == np.float32:
        c = c * np.float32(1.05)
    return np.sin(x), c * dargs[1]


WRONG += [
    Entry("wrong for float32 only", "rrule", sin_f32_bug,
          lambda r: (vec(r, 6, dtype=np.float32),), "wrong cotangent"),
    Entry("wrong for float32 only", "frule", sin_f32_bug,
          lambda r: (vec(r, 6, dtype=np.float32),), "wrong pushforward"),
]
RIGHT += [
    Entry("float32-bug rule is right for float64", "rrule", sin_f32_bug, lambda r: (vec(r, 6),)),
    Entry("float32-bug rule is right for float64", "frule", sin_f32_bug, lambda r: (vec(r, 6),)),
]


def exp_wrong_primal(x):
    return np.exp(x)


@rrule.register(exp_wrong_primal)
def _(x):
    y = np.exp(x) * (1 + 1e-4)

    def exp_pullback(y_bar):
        return NoTangent(), y * y_bar

    return y, exp_pullback


@frule.register(exp_wrong_primal)
def _(dargs, x):
    y = np.exp(x) + 1e-4
    return y, np.exp(x) * dargs[1]


WRONG += [
    Entry("wrong primal", "rrule", exp_wrong_primal, lambda r: (vec(r, 3),), "primal output"),
    Entry("wrong primal", "frule", exp_wrong_primal, lambda r: (vec(r, 3),), "primal output"),
]


def mul_too_few(x, y):
    return x * y


@rrule.register(mul_too_few)
def _(x, y):
    def mul_too_few_pullback(z_bar):
        return y * z_bar, x * z_bar  # forgot self_bar

    return x * y, mul_too_few_pullback


WRONG.append(Entry("wrong number of cotangents", "rrule", mul_too_few,
                   lambda r: (1.5, 2.5), "returned 2 cotangents, expected 3"))


def cos_list_return(x):
    return np.cos(x)


@rrule.register(cos_list_return)
def _(x):
    def cos_list_pullback(y_bar):
        return [NoTangent(), -np.sin(x) * y_bar]

    return np.cos(x), cos_list_pullback


@frule.register(cos_list_return)
def _(dargs, x):
    return [np.cos(x), -np.sin(x) * dargs[1]]


WRONG += [
    Entry("non-tuple return (pullback)", "rrule", cos_list_return, lambda r: (vec(r, 2),),
          "must return a tuple"),
    Entry("non-tuple return (frule)", "frule", cos_list_return, lambda r: (vec(r, 2),),
          "must return a 2-tuple"),
]


def tanh_no_thunk(x):
    return np.tanh(x)


@rrule.register(tanh_no_thunk)
def _(x):
    y = np.tanh(x)

    def tanh_no_thunk_pullback(y_bar):
        if isinstance(y_bar, Thunk):
            raise TypeError("unsupported operand: Thunk")
        return NoTangent(), (1 - y**2) * y_bar

    return y, tanh_no_thunk_pullback


WRONG.append(Entry("pullback fails on a Thunk", "rrule", tanh_no_thunk, lambda r: (vec(r, 3),),
                   "raised TypeError when given a Thunk"))


def scale_mutates_input(x):
    return 3.0 * x


@rrule.register(scale_mutates_input)
def _(x):
    def scale_mutates_pullback(y_bar):
        x[...] = 0.0  # clobbers the caller's array
        return NoTangent(), 3.0 * y_bar

    return 3.0 * x, scale_mutates_pullback


def scale_mutates_y_bar(x):
    return 3.0 * x


@rrule.register(scale_mutates_y_bar)
def _(x):
    def scale_mutates_y_bar_pullback(y_bar):
        y_bar = unthunk(y_bar)
        y_bar *= 3.0  # in place on the caller's cotangent
        return NoTangent(), y_bar

    return 3.0 * x, scale_mutates_y_bar_pullback


WRONG += [
    Entry("pullback mutates its input", "rrule", scale_mutates_input, lambda r: (vec(r, 3),),
          "the pullback mutated argument 1"),
    Entry("pullback mutates y_bar", "rrule", scale_mutates_y_bar, lambda r: (vec(r, 3),),
          "mutated its cotangent argument y_bar"),
]


def power_zero_for_int(x, n):
    return x**n


@rrule.register(power_zero_for_int)
def _(x, n: int):
    def power_pullback(y_bar):
        return NoTangent(), n * x ** (n - 1) * y_bar, ZeroTangent()

    return x**n, power_pullback


@rrule.register(power_zero_for_int)
def _(x, n: float):
    y = x**n

    def power_float_pullback(y_bar):
        return NoTangent(), n * x ** (n - 1) * y_bar, y * np.log(x) * y_bar

    return y, power_float_pullback


WRONG.append(Entry("ZeroTangent where NoTangent is due", "rrule", power_zero_for_int,
                   lambda r: (vec(r, 3), 3), "must be NoTangent.*ZeroTangent"))


def scale_by(x, a):
    return a * x


@rrule.register(scale_by)
def _(x, a: float | int):
    def scale_by_pullback(y_bar):
        y_bar = unthunk(y_bar)
        return NoTangent(), a * y_bar, float(np.sum(x * y_bar))

    return a * x, scale_by_pullback


WRONG.append(Entry("rule for an int gives a wrong float cotangent", "rrule", power_zero_for_int,
                   lambda r: (r.uniform(0.5, 2, size=3), with_tangent(2, 0.7)),
                   "wrong cotangent for argument 2"))
RIGHT += [
    Entry("int with a float tangent is differentiable", "rrule", scale_by,
          lambda r: (vec(r, 3), with_tangent(3, 0.7))),
    Entry("int without tangent, rule treats it as real", "rrule", scale_by,
          lambda r: (vec(r, 3), 3)),
]


def double_wrong_self(x):
    return 2 * x


@rrule.register(double_wrong_self)
def _(x):
    def double_pullback(y_bar):
        return ZeroTangent(), 2 * y_bar

    return 2 * x, double_pullback


WRONG.append(Entry("wrong self_bar", "rrule", double_wrong_self, lambda r: (1.5,),
                   "self_bar.*must be NoTangent"))


def exp_bad_inplace(x):
    return np.exp(x)


@rrule.register(exp_bad_inplace)
def _(x):
    y = np.exp(x)

    def exp_bad_inplace_pullback(y_bar):
        def add_twice(acc):
            acc += 2 * y * unthunk(y_bar)  # adds twice the cotangent
            return acc

        return NoTangent(), InplaceableThunk(add_twice, Thunk(lambda: y * unthunk(y_bar)))

    return y, exp_bad_inplace_pullback


WRONG.append(Entry("bad InplaceableThunk add", "rrule", exp_bad_inplace, lambda r: (vec(r, 4),),
                   "InplaceableThunk.*adds wrongly"))


def mul_ignores_tangent(x, y):
    return x * y


@frule.register(mul_ignores_tangent)
def _(dargs, x, y):
    _, x_dot, _y_dot = dargs
    return x * y, x_dot * y  # forgets x * y_dot


def affine_no_zero(p, x):
    return p.w * x + p.b


@frule.register(affine_no_zero)
def _(dargs, p, x):
    _, p_dot, x_dot = dargs
    # Fields of a ZeroTangent are zeros, but float() of one is not a number.
    return p.w * x + p.b, p_dot.w * x + p.w * x_dot + float(p_dot.b)


WRONG.append(Entry("frule fails on a ZeroTangent argument", "frule", affine_no_zero,
                   lambda r: (Affine(vec(r, 3), 0.5), vec(r, 3)),
                   "raised TypeError when argument 1 has tangent ZeroTangent"))
WRONG.append(Entry("frule ignoring one tangent", "frule", mul_ignores_tangent,
                   lambda r: (vec(r, 3), vec(r, 3)), r"argument 2 \(args\[1\]\) alone: wrong"))


@dataclass(frozen=True)
class Affine:
    w: np.ndarray
    b: float


def affine_wrong_field(p, x):
    return p.w * x + p.b


@rrule.register(affine_wrong_field)
def _(p, x):
    def affine_wrong_field_pullback(y_bar):
        y_bar = unthunk(y_bar)
        # b's cotangent must be summed to a scalar, and w's is x * y_bar, not y_bar
        return NoTangent(), Tangent[Affine](w=y_bar, b=float(np.sum(y_bar))), p.w * y_bar

    return p.w * x + p.b, affine_wrong_field_pullback


WRONG.append(Entry("wrong structural field", "rrule", affine_wrong_field,
                   lambda r: (Affine(vec(r, 3), 0.5), vec(r, 3)), r"args\[0\]\.w"))


def cube_real_to_complex(x):
    return x**3


@rrule.register(cube_real_to_complex)
def _(x):
    def cube_complex_pullback(y_bar):
        return NoTangent(), (3 * x**2 * y_bar).astype(np.complex128)

    return x**3, cube_complex_pullback


WRONG.append(Entry("complex cotangent for a real input", "rrule", cube_real_to_complex,
                   lambda r: (vec(r, 3),), "complex"))


def sin_f64_for_f32(x):
    return np.sin(x)


@rrule.register(sin_f64_for_f32)
def _(x):
    def sin_f64_pullback(y_bar):
        return NoTangent(), np.cos(x.astype(np.float64)) * y_bar

    return np.sin(x), sin_f64_pullback


WRONG.append(Entry("float64 cotangent for a float32 input", "rrule", sin_f64_for_f32,
                   lambda r: (vec(r, 3, dtype=np.float32),), "expected dtype float32"))


def cosh_zero_fail(x):
    return np.cosh(x)


@rrule.register(cosh_zero_fail)
def _(x):
    def cosh_zero_fail_pullback(y_bar):
        return NoTangent(), np.sinh(x) * y_bar.view(np.ndarray)

    return np.cosh(x), cosh_zero_fail_pullback


WRONG.append(Entry("pullback fails on ZeroTangent", "rrule", cosh_zero_fail,
                   lambda r: (vec(r, 3),), "when given ZeroTangent",
                   options={"check_zero_output_tangent": True}))


def sincos_no_zero(x):
    return np.sin(x), np.cos(x)


@rrule.register(sincos_no_zero)
def _(x):
    def sincos_no_zero_pullback(y_bar):
        s_bar, c_bar = unthunk(y_bar)
        return NoTangent(), np.cos(x) * s_bar - np.sin(x) * c_bar.view(np.ndarray)

    return sincos_no_zero(x), sincos_no_zero_pullback


WRONG.append(Entry("pullback fails on a ZeroTangent field", "rrule", sincos_no_zero,
                   lambda r: (vec(r, 3),), "raised TypeError when given y_bar with field 1"))


# ============================================================ correct, tricky rules


def cexp(z):
    return np.exp(z)


@rrule.register(cexp)
def _(z):
    y = np.exp(z)

    def cexp_pullback(y_bar):
        return NoTangent(), np.conj(y) * unthunk(y_bar)

    return y, cexp_pullback


@frule.register(cexp)
def _(dargs, z):
    y = np.exp(z)
    return y, y * dargs[1]


def abs2(z):
    return (z * np.conj(z)).real


@rrule.register(abs2)
def _(z):
    def abs2_pullback(y_bar):
        return NoTangent(), 2 * z * np.real(unthunk(y_bar))

    return abs2(z), abs2_pullback


@frule.register(abs2)
def _(dargs, z):
    return abs2(z), 2 * np.real(np.conj(z) * dargs[1])


RIGHT += [
    Entry("complex holomorphic", "rrule", cexp, lambda r: (cvec(r, 3),)),
    Entry("complex holomorphic", "frule", cexp, lambda r: (cvec(r, 3),)),
    Entry("complex scalar", "rrule", cexp, lambda r: (complex(r.uniform(-1, 1), 1.0),)),
    Entry("complex64", "rrule", cexp, lambda r: (cvec(r, 3).astype(np.complex64),)),
    Entry("complex to real", "rrule", abs2, lambda r: (cvec(r, 2, 2),)),
    Entry("complex to real", "frule", abs2, lambda r: (cvec(r, 2, 2),)),
]


def add_bcast(x, b):
    return x + b


@rrule.register(add_bcast)
def _(x, b):
    def add_bcast_pullback(y_bar):
        return NoTangent(), Thunk(lambda: unthunk(y_bar)), Thunk(
            lambda: np.sum(unthunk(y_bar), axis=0))

    return x + b, add_bcast_pullback


@frule.register(add_bcast)
def _(dargs, x, b):
    return x + b, dargs[1] + dargs[2]


def matmul(a, b):
    return a @ b


@rrule.register(matmul)
def _(a, b):
    def matmul_pullback(y_bar):
        y_bar = unthunk(y_bar)
        return NoTangent(), Thunk(lambda: y_bar @ b.T), Thunk(lambda: a.T @ y_bar)

    return a @ b, matmul_pullback


RIGHT += [
    Entry("broadcasting add with thunks", "rrule", add_bcast, lambda r: (vec(r, 4, 3), vec(r, 3))),
    Entry("broadcasting add", "frule", add_bcast, lambda r: (vec(r, 4, 3), vec(r, 4, 3))),
    Entry("matmul", "rrule", matmul, lambda r: (vec(r, 3, 4), vec(r, 4, 2))),
    Entry("matmul (big, dot test only)", "rrule", matmul, lambda r: (vec(r, 30, 20), vec(r, 20, 5))),
]


def affine(p, x):
    return p.w * x + p.b


@rrule.register(affine)
def _(p, x):
    def affine_pullback(y_bar):
        y_bar = unthunk(y_bar)
        return NoTangent(), Tangent[Affine](w=x * y_bar, b=float(np.sum(y_bar))), p.w * y_bar

    return p.w * x + p.b, affine_pullback


@frule.register(affine)
def _(dargs, p, x):
    _, p_dot, x_dot = dargs
    # a forward-mode AD passes ZeroTangent() for a constant p
    w_dot, b_dot = (p_dot.w, p_dot.b) if isinstance(p_dot, Tangent) else (0.0, 0.0)
    return p.w * x + p.b, w_dot * x + p.w * x_dot + b_dot


def polar(r, t):
    return {"re": r * math.cos(t), "im": r * math.sin(t)}


@rrule.register(polar)
def _(r, t):
    def polar_pullback(y_bar):
        y_bar = unthunk(y_bar)
        re_bar, im_bar = unthunk(y_bar["re"]), unthunk(y_bar["im"])
        re_bar = 0.0 if isinstance(re_bar, ZeroTangent) else re_bar
        im_bar = 0.0 if isinstance(im_bar, ZeroTangent) else im_bar
        return (NoTangent(), math.cos(t) * re_bar + math.sin(t) * im_bar,
                -r * math.sin(t) * re_bar + r * math.cos(t) * im_bar)

    return polar(r, t), polar_pullback


def sincos(x):
    return np.sin(x), np.cos(x)


@rrule.register(sincos)
def _(x):
    def sincos_pullback(y_bar):
        s_bar, c_bar = unthunk(y_bar)
        return NoTangent(), np.cos(x) * unthunk(s_bar) - np.sin(x) * unthunk(c_bar)

    return sincos(x), sincos_pullback


@frule.register(sincos)
def _(dargs, x):
    x_dot = dargs[1]
    return sincos(x), Tangent[tuple](np.cos(x) * x_dot, -np.sin(x) * x_dot)


RIGHT += [
    Entry("dataclass input", "rrule", affine, lambda r: (Affine(vec(r, 3), 0.5), vec(r, 3))),
    Entry("dataclass input", "frule", affine, lambda r: (Affine(vec(r, 3), 0.5), vec(r, 3))),
    Entry("dict output", "rrule", polar, lambda r: (r.uniform(0.5, 2), r.uniform(-3, 3))),
    Entry("tuple output (ZeroTangent field handled)", "rrule", sincos, lambda r: (vec(r, 3),)),
    Entry("tuple output", "frule", sincos, lambda r: (vec(r, 3),)),
]


def take(x, idx):
    return x[idx]


@rrule.register(take)
def _(x, idx):
    def take_pullback(y_bar):
        def take_add(acc):
            np.add.at(acc, idx, unthunk(y_bar))
            return acc

        def take_dense():
            x_bar = np.zeros_like(x)
            np.add.at(x_bar, idx, unthunk(y_bar))
            return x_bar

        return NoTangent(), InplaceableThunk(take_add, Thunk(take_dense)), NoTangent()

    return x[idx], take_pullback


@frule.register(take)
def _(dargs, x, idx):
    return x[idx], dargs[1][idx]


def power(x, n):
    return x**n


@rrule.register(power)
def _(x, n: int):
    def power_pullback(y_bar):
        return NoTangent(), n * x ** (n - 1) * unthunk(y_bar), NoTangent()

    return x**n, power_pullback


@frule.register(power)
def _(dargs, x, n: int):
    return x**n, n * x ** (n - 1) * dargs[1]


RIGHT += [
    Entry("index array + InplaceableThunk", "rrule", take,
          lambda r: (vec(r, 5), np.array([0, 2, 2, 4]))),
    Entry("index array", "frule", take, lambda r: (vec(r, 5), np.array([0, 2, 2, 4]))),
    Entry("integer argument", "rrule", power, lambda r: (vec(r, 3), 3)),
    Entry("integer argument", "frule", power, lambda r: (vec(r, 3), 3)),
    Entry("float argument excluded with no_tangent", "rrule", power_zero_for_int,
          lambda r: (r.uniform(0.5, 2, size=3), no_tangent(2.0))),
]


def sin32(x):
    return np.sin(x)


@rrule.register(sin32)
def _(x):
    def sin32_pullback(y_bar):
        return NoTangent(), np.cos(x) * unthunk(y_bar)

    return np.sin(x), sin32_pullback


@frule.register(sin32)
def _(dargs, x):
    return np.sin(x), np.cos(x) * dargs[1]


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


@rrule.register(logsumexp)
def _(x):
    y = logsumexp(x)

    def logsumexp_pullback(y_bar):
        return NoTangent(), np.exp(x - y) * unthunk(y_bar)

    return y, logsumexp_pullback


RIGHT += [
    Entry("float32", "rrule", sin32, lambda r: (vec(r, 3, 4, dtype=np.float32),)),
    Entry("float32", "frule", sin32, lambda r: (vec(r, 3, 4, dtype=np.float32),)),
    Entry("float32 scalar", "rrule", sin32, lambda r: (np.float32(r.uniform(-2, 2)),)),
    Entry("float32 reduction", "rrule", logsumexp, lambda r: (vec(r, 50, dtype=np.float32),)),
    Entry("float64 reduction (large values)", "rrule", logsumexp,
          lambda r: (vec(r, 200) * 50,)),
]


class Scale:
    """A callable object with a differentiable field."""

    def __init__(self, a):
        self.a = a

    def __call__(self, x):
        return self.a * x


@rrule.register_call(Scale)
def _(s, x):
    def scale_pullback(y_bar):
        y_bar = unthunk(y_bar)
        return Tangent[Scale](a=float(np.sum(x * y_bar))), s.a * y_bar

    return s(x), scale_pullback


@frule.register_call(Scale)
def _(dargs, s, x):
    s_dot, x_dot = dargs
    a_dot = 0.0 if isinstance(s_dot, (ZeroTangent, NoTangent)) else s_dot.a
    return s(x), a_dot * x + s.a * x_dot


def map_sin_via_ad(x):
    return np.array([math.sin(v) for v in x])


def _inner(v):
    return math.sin(v) * 1.0


def apply_each(g, x):
    return np.array([g(v) for v in x])


@rrule.register(apply_each, config=HasReverseMode)
def _(config, g, x):
    results = [rrule_via_ad(config, g, float(v)) for v in x]
    y = np.array([r[0] for r in results])

    def apply_each_pullback(y_bar):
        y_bar = unthunk(y_bar)
        x_bar = np.array([pb(yb)[1] for (_, pb), yb in zip(results, y_bar)])
        return NoTangent(), NoTangent(), x_bar

    return y, apply_each_pullback


def needs_not_implemented(x, y):
    return x * np.sin(y)


@rrule.register(needs_not_implemented)
def _(x, y):
    def needs_ni_pullback(z_bar):
        return NoTangent(), np.sin(y) * unthunk(z_bar), not_implemented("d/dy is future work")

    return x * np.sin(y), needs_ni_pullback


RIGHT += [
    Entry("callable object (self_bar is a Tangent)", "rrule", Scale(1.5), lambda r: (vec(r, 3),)),
    Entry("callable object (self_bar is a Tangent)", "frule", Scale(1.5), lambda r: (vec(r, 3),)),
    Entry("higher-order rule calling rrule_via_ad (FD fallback)", "rrule", apply_each,
          lambda r: (_inner, vec(r, 4))),
]


class Counter:
    """A callable object whose rule mutates its own field."""

    def __init__(self, a):
        self.a = a

    def __call__(self, x):
        return self.a * x


@rrule.register_call(Counter)
def _(c, x):
    c.a = c.a + 1.0  # mutates the callable object
    a = c.a - 1.0

    def counter_pullback(y_bar):
        return Tangent[Counter](a=float(np.sum(x * y_bar))), a * y_bar

    return a * x, counter_pullback


WRONG.append(Entry("rule mutates the callable object", "rrule", Counter(2.0),
                   lambda r: (vec(r, 3),), "the rrule mutated f itself"))
