"""Eager JAX: a structure called again and again runs compiled, and stays right.

The native path compiles a function's primal and rules with ``jax.jit`` once the
same cached call structure has run them eagerly twice (``_jax_native._Hot``). These
tests check that the compiled runs give the same values and derivatives as the
first (uncompiled) ones, that compilation happens (the user's Python runs less often
than it is called), and that it never freezes state that can change: callable
objects, closures over mutable values, debug mode, NumPy-array arguments.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

from chainrules import NoTangent, array_namespace, debug_mode, frule, rrule  # noqa: E402
from chainrules.interop._jax_native import compilable  # noqa: E402
from chainrules.interop.jax import jax_function  # noqa: E402

RUNS: dict[str, int] = {}
REPEATS = 5


def _ran(name: str) -> None:
    RUNS[name] = RUNS.get(name, 0) + 1


def softplus(x):
    _ran("softplus")
    xp = array_namespace(x)
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, 0.0)


@frule.register(softplus)
def softplus_frule(dargs, x):
    _ran("softplus_frule")
    xp = array_namespace(x)
    return softplus(x), dargs[1] / (1 + xp.exp(-x))


@rrule.register(softplus)
def softplus_rrule(x):
    _ran("softplus_rrule")
    xp = array_namespace(x)

    def softplus_pullback(y_bar):
        _ran("softplus_pullback")
        return NoTangent(), y_bar / (1 + xp.exp(-x))

    return softplus(x), softplus_pullback


def sort_scaled(x, w):
    """Sorts ``x * w``: the pullback keeps an integer array (the permutation)."""
    xp = array_namespace(x)
    return xp.sort(x * w)


@rrule.register(sort_scaled)
def sort_scaled_rrule(x, w):
    xp = array_namespace(x)
    z = x * w
    order = xp.argsort(z)
    inverse = xp.argsort(order)

    def sort_scaled_pullback(y_bar):
        z_bar = xp.take(y_bar, inverse)
        return NoTangent(), z_bar * w, z_bar * x

    return xp.take(z, order), sort_scaled_pullback


def jnp_softplus(x):
    return jax.nn.softplus(x)


def _grad(f):
    return jax.grad(lambda v: jnp.sum(jnp.sin(f(v))))


@pytest.fixture(autouse=True)
def _fresh_runs():
    RUNS.clear()
    yield


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_repeated_eager_calls_match_jax_and_run_compiled(mode):
    f = jax_function(softplus, backend="native", mode=mode)
    x = jnp.linspace(-3.0, 3.0, 7)
    want_y, want_g = jnp_softplus(x), _grad(jnp_softplus)(x)
    for _ in range(REPEATS):
        np.testing.assert_allclose(f(x), want_y, rtol=1e-6)
        np.testing.assert_allclose(_grad(f)(x), want_g, rtol=1e-6)
        # a new bridged function each call shares the compiled plan
        np.testing.assert_allclose(_grad(jax_function(softplus, backend="native",
                                                      mode=mode))(x), want_g, rtol=1e-6)
    rule = "softplus_frule" if mode == "forward" else "softplus_rrule"
    if debug_mode():  # never compiled: every call runs the rule (and debug mode's checks)
        assert RUNS[rule] >= 2 * REPEATS, RUNS
        return
    # compiled after two eager runs: the rule's Python then runs only when traced
    assert RUNS[rule] < 2 * REPEATS, RUNS
    assert RUNS["softplus"] < 3 * REPEATS, RUNS


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_repeated_eager_vjp_value_and_grad_jvp(mode):
    f = jax_function(softplus, backend="native", mode=mode)
    x = jnp.linspace(-3.0, 3.0, 7)
    y_bar = jnp.arange(7.0)
    for _ in range(REPEATS):
        y, pullback = jax.vjp(f, x)
        ref_y, ref_pullback = jax.vjp(jnp_softplus, x)
        np.testing.assert_allclose(y, ref_y, rtol=1e-6)
        np.testing.assert_allclose(pullback(y_bar)[0], ref_pullback(y_bar)[0], rtol=1e-6)
        value, g = jax.value_and_grad(lambda v: jnp.sum(f(v) ** 2))(x)
        ref_value, ref_g = jax.value_and_grad(lambda v: jnp.sum(jnp_softplus(v) ** 2))(x)
        np.testing.assert_allclose(value, ref_value, rtol=1e-6)
        np.testing.assert_allclose(g, ref_g, rtol=1e-6)
        if mode == "forward":
            _, y_dot = jax.jvp(f, (x,), (y_bar,))
            _, ref_dot = jax.jvp(jnp_softplus, (x,), (y_bar,))
            np.testing.assert_allclose(y_dot, ref_dot, rtol=1e-6)


def test_reverse_mode_pullback_keeping_integers_runs_compiled():
    # the compiled forward pass returns the closure-converted pullback: an integer
    # array it kept must be one of its residuals, not a tracer of the finished trace
    f = jax_function(sort_scaled, backend="native", mode="reverse")
    x, w = jnp.array([3.0, -1.0, 2.0, 0.5]), jnp.array([1.0, 2.0, -1.0, 3.0])

    def ref(x, w):
        return jnp.sort(x * w)

    def loss(g):
        return lambda x, w: jnp.sum(g(x, w) * jnp.arange(1.0, 5.0))

    for scale in range(1, REPEATS + 1):
        xs = x * scale
        got = jax.grad(loss(f), argnums=(0, 1))(xs, w)
        want = jax.grad(loss(ref), argnums=(0, 1))(xs, w)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    # and under jit and vmap, where nothing is compiled separately
    got = jax.jit(jax.vmap(jax.grad(loss(f)), in_axes=(0, None)))(jnp.stack([x, -x]), w)
    want = jax.vmap(jax.grad(loss(ref)), in_axes=(0, None))(jnp.stack([x, -x]), w)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_alternating_shapes_and_dtypes_stay_right(mode):
    # bfloat16 is a float JAX differentiates (an ml_dtypes "V" kind to NumPy)
    f = jax_function(softplus, backend="native", mode=mode)
    for _ in range(REPEATS):
        for x in (jnp.linspace(-1.0, 1.0, 3), jnp.linspace(-2.0, 2.0, 4).reshape(2, 2),
                  jnp.linspace(-1.0, 1.0, 3, dtype=jnp.bfloat16), jnp.float32(0.25)):
            np.testing.assert_allclose(np.asarray(f(x), np.float32),
                                       np.asarray(jnp_softplus(x), np.float32), rtol=1e-2)
            np.testing.assert_allclose(np.asarray(_grad(f)(x), np.float32),
                                       np.asarray(_grad(jnp_softplus)(x), np.float32),
                                       rtol=1e-2)


def _scaled_by(state):
    """A function (and its rules) reading ``state[0]`` at every call."""

    def scaled(x):
        _ran("scaled")
        return state[0] * x

    @frule.register(scaled)
    def scaled_frule(dargs, x):
        return state[0] * x, state[0] * dargs[1]

    return scaled


def test_closure_over_mutable_state_is_never_frozen():
    state = [2.0]
    f = jax_function(_scaled_by(state), backend="native")
    x = jnp.arange(3.0)
    for _ in range(REPEATS):
        np.testing.assert_allclose(f(x), 2 * x)
        np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(f(v)))(x), [2.0] * 3)
    state[0] = 5.0
    np.testing.assert_allclose(f(x), 5 * x)
    np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(f(v)))(x), [5.0] * 3)
    assert RUNS["scaled"] >= REPEATS + 1  # every call ran it


class Scale:
    """A callable object whose field a user may reassign between calls."""

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, x):
        return self.factor * x


@frule.register_call(Scale)
def scale_call_frule(dargs, scale: Scale, x):
    return scale(x), scale.factor * dargs[1]


def test_callable_object_fields_are_never_frozen():
    scale = Scale(2.0)
    f = jax_function(scale, backend="native")
    x = jnp.arange(3.0)
    for _ in range(REPEATS):
        np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(f(v)))(x), [2.0] * 3)
    scale.factor = -1.0
    np.testing.assert_allclose(f(x), -x)
    np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(f(v)))(x), [-1.0] * 3)


SCALE = 2.0


def scaled_by_global(x):
    return SCALE * x


@frule.register(scaled_by_global)
def scaled_by_global_frule(dargs, x):
    return SCALE * x, SCALE * dargs[1]


def test_function_reading_a_global_number_is_never_frozen():
    global SCALE
    f = jax_function(scaled_by_global, backend="native")
    x = jnp.arange(3.0)
    try:
        for _ in range(REPEATS):
            np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(f(v)))(x), [2.0] * 3)
        SCALE = -3.0
        np.testing.assert_allclose(f(x), -3 * x)
        np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(f(v)))(x), [-3.0] * 3)
    finally:
        SCALE = 2.0


def test_debug_mode_runs_every_call_eagerly():
    f = jax_function(softplus, backend="native")
    x = jnp.linspace(-1.0, 1.0, 5)
    for _ in range(REPEATS):
        _grad(f)(x)
    compiled_runs = RUNS["softplus_frule"]
    with_debug = debug_mode(True)
    try:
        assert with_debug
        for _ in range(REPEATS):
            np.testing.assert_allclose(_grad(f)(x), _grad(jnp_softplus)(x), rtol=1e-6)
    finally:
        debug_mode(False)
    assert RUNS["softplus_frule"] >= compiled_runs + REPEATS


def test_numpy_array_argument_is_never_compiled():
    # a NumPy leaf is static and its contents are not part of the plan's key
    f = jax_function(sort_scaled, backend="native", mode="reverse")
    x = jnp.array([3.0, -1.0, 2.0])
    for k in range(REPEATS):
        w = np.array([1.0, 2.0, float(k)])
        np.testing.assert_allclose(f(x, w), np.sort(np.asarray(x) * w), rtol=1e-6)


def test_compilable_accepts_pure_functions_only():
    state = [1.0]
    factor = 2.0

    def pure(x):
        return factor * x

    def impure(x):
        return state[0] * x

    assert compilable(np.sin) and compilable(softplus) and compilable(pure)
    assert not compilable(impure) and not compilable(scaled_by_global)
    assert not compilable(Scale(2.0))
    assert not compilable(Scale(2.0).__call__)
    assert not compilable(lambda x: impure(x))
