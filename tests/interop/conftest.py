"""Example functions with hand-written rules, shared by the bridge tests.

They are registered once, here, and are deliberately outside the rule set: each
exercises one convention a bridge has to translate (thunks, zeros, structures,
several outputs, integer arguments, complex numbers) or one way a rule can be
wrong.
"""

from __future__ import annotations

import dataclasses
import types
from typing import NamedTuple

import numpy as np
import pytest

from chainrules import NoTangent, Tangent, Thunk, ZeroTangent, frule, rrule

COUNTS: dict[str, int] = {}


def _count(name: str) -> None:
    COUNTS[name] = COUNTS.get(name, 0) + 1


def cube(x):
    return x**3


@rrule.register(cube)
def cube_rrule(x):
    _count("cube_rrule")

    def cube_pullback(y_bar):
        return NoTangent(), 3 * x**2 * y_bar

    return x**3, cube_pullback


@frule.register(cube)
def cube_frule(dargs, x):
    _count("cube_frule")
    return x**3, 3 * x**2 * dargs[1]


def weighted(a, b):
    """a * b with one Thunk per cotangent, counting which ones are evaluated."""
    return a * b


@rrule.register(weighted)
def weighted_rrule(a, b):
    def weighted_pullback(y_bar):
        def a_bar():
            _count("a_bar")
            return y_bar * b

        def b_bar():
            _count("b_bar")
            return y_bar * a

        return NoTangent(), Thunk(a_bar), Thunk(b_bar)

    return a * b, weighted_pullback


def abs2(z):
    """|z|^2, real-valued of a complex argument: its gradient is 2z (ChainRules convention)."""
    return np.real(z * np.conj(z))


@rrule.register(abs2)
def abs2_rrule(z):
    def abs2_pullback(y_bar):
        return NoTangent(), 2 * z * np.real(y_bar)

    return abs2(z), abs2_pullback


@frule.register(abs2)
def abs2_frule(dargs, z):
    return abs2(z), 2 * np.real(np.conj(z) * dargs[1])


def cmul(w, z):
    """Holomorphic w * z with complex output."""
    return w * z


@rrule.register(cmul)
def cmul_rrule(w, z):
    def cmul_pullback(y_bar):
        return NoTangent(), y_bar * np.conj(z), y_bar * np.conj(w)

    return w * z, cmul_pullback


@frule.register(cmul)
def cmul_frule(dargs, w, z):
    _, w_dot, z_dot = dargs
    return w * z, w_dot * z + w * z_dot


@dataclasses.dataclass(frozen=True)
class Affine:
    w: np.ndarray
    b: np.ndarray


def affine_apply(p, x):
    """An argument that is a dict of arrays: p = {"w": matrix, "b": vector}."""
    return p["w"] @ x + p["b"]


@rrule.register(affine_apply)
def affine_apply_rrule(p, x):
    w = p["w"]

    def affine_apply_pullback(y_bar):
        p_bar = Tangent[dict]({"w": Thunk(lambda: np.outer(y_bar, x)), "b": y_bar})
        return NoTangent(), p_bar, Thunk(lambda: w.T @ y_bar)

    return affine_apply(p, x), affine_apply_pullback


@frule.register(affine_apply)
def affine_apply_frule(dargs, p, x):
    _, p_dot, x_dot = dargs
    y_dot = p_dot["w"] @ x + p["w"] @ x_dot + p_dot["b"]
    return affine_apply(p, x), y_dot


class SinCos(NamedTuple):
    sin: np.ndarray
    cos: np.ndarray


def sincos(x):
    """Two outputs, as a namedtuple."""
    return SinCos(np.sin(x), np.cos(x))


@rrule.register(sincos)
def sincos_rrule(x):
    s, c = np.sin(x), np.cos(x)

    def sincos_pullback(y_bar):
        return NoTangent(), c * y_bar.sin - s * y_bar.cos

    return SinCos(s, c), sincos_pullback


@frule.register(sincos)
def sincos_frule(dargs, x):
    s, c = np.sin(x), np.cos(x)
    x_dot = dargs[1]
    return SinCos(s, c), Tangent[SinCos](sin=c * x_dot, cos=-s * x_dot)


def scaled_take(x, idx, scale):
    """An integer-array argument (indices) and an integer scalar argument."""
    return x[idx] * scale


@rrule.register(scaled_take)
def scaled_take_rrule(x, idx, scale):
    def scaled_take_pullback(y_bar):
        x_bar = np.zeros_like(x)
        np.add.at(x_bar, idx, y_bar * scale)
        return NoTangent(), x_bar, NoTangent(), NoTangent()

    return scaled_take(x, idx, scale), scaled_take_pullback


@frule.register(scaled_take)
def scaled_take_frule(dargs, x, idx, scale):
    return scaled_take(x, idx, scale), dargs[1][idx] * scale


def affine_dc(p, x):
    """A dataclass argument."""
    return p.w @ x + p.b


@rrule.register(affine_dc)
def affine_dc_rrule(p, x):
    def affine_dc_pullback(y_bar):
        return NoTangent(), Tangent[Affine](w=np.outer(y_bar, x), b=y_bar), p.w.T @ y_bar

    return affine_dc(p, x), affine_dc_pullback


def only_frule(x):
    return 2 * x


@frule.register(only_frule)
def only_frule_frule(dargs, x):
    return 2 * x, 2 * dargs[1]


def no_rule(x):
    return x + 1


def zero_grad(x, y):
    """The rule says: no dependence on y (ZeroTangent), NoTangent for nothing."""
    return x * 2 + 0 * y


@rrule.register(zero_grad)
def zero_grad_rrule(x, y):
    def zero_grad_pullback(y_bar):
        return NoTangent(), 2 * y_bar, ZeroTangent()

    return x * 2, zero_grad_pullback


def bad_structural(x):
    """A wrong rule: returns a Tangent[tuple] for an array argument."""
    return 2 * x


@rrule.register(bad_structural)
def bad_structural_rrule(x):
    def bad_structural_pullback(y_bar):
        return NoTangent(), Tangent[tuple](y_bar, y_bar)

    return 2 * x, bad_structural_pullback


def bad_shape(x):
    """A wrong rule: a cotangent of the wrong shape."""
    return 2 * x


@rrule.register(bad_shape)
def bad_shape_rrule(x):
    def bad_shape_pullback(y_bar):
        return NoTangent(), np.ones((7, 5))

    return 2 * x, bad_shape_pullback


def bad_count(x):
    """A wrong rule: the pullback forgets self_bar."""
    return 2 * x


@rrule.register(bad_count)
def bad_count_rrule(x):
    def bad_count_pullback(y_bar):
        return (2 * y_bar,)

    return 2 * x, bad_count_pullback


def bad_string(x):
    """A wrong rule: a string cotangent."""
    return 2 * x


@rrule.register(bad_string)
def bad_string_rrule(x):
    def bad_string_pullback(y_bar):
        return NoTangent(), "oops"

    return 2 * x, bad_string_pullback


EXAMPLES = types.SimpleNamespace(
    cube=cube, weighted=weighted, abs2=abs2, cmul=cmul, affine_apply=affine_apply,
    sincos=sincos, SinCos=SinCos, scaled_take=scaled_take, affine_dc=affine_dc, Affine=Affine,
    only_frule=only_frule, no_rule=no_rule, zero_grad=zero_grad,
    bad_structural=bad_structural, bad_shape=bad_shape, bad_count=bad_count,
    bad_string=bad_string, counts=COUNTS,
)


@pytest.fixture
def ex():
    """The example functions; their call counters start at zero."""
    COUNTS.clear()
    return EXAMPLES
