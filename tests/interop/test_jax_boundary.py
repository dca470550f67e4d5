"""What the JAX bridge refuses and how ``backend="auto"`` decides.

Rules that return no tangent (``None``, a string), a pullback that forgets
``self_bar``, and an frule with a wrong-shaped tangent are refused by name on every
path (native ``custom_jvp``, native ``custom_vjp``, callback), in and out of debug
mode. Debug mode accepts JAX's tracers as tangents of JAX arrays. ``"auto"`` falls
back to the callback path only when NumPy met a tracer; any other failure of the
native attempt reaches the user as it is.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

import chainrules  # noqa: E402
from chainrules import NoTangent, PullbackError, array_namespace, frule, rrule  # noqa: E402
from chainrules.core._validate import tangent_mismatch  # noqa: E402
from chainrules.interop import (  # noqa: E402
    NoRuleError,
    NumPyOnlyRuleError,
    TangentConversionError,
)
from chainrules.interop.jax import jax_function  # noqa: E402

X = jnp.array([0.5, -1.0, 2.0])
NONE_REASON = "None is not a tangent (ZeroTangent() is the zero tangent"


def msg(text: str) -> str:
    """A regex matching ``text`` literally, whatever package prefix this module has."""
    return re.escape(text).replace("test_jax_boundary\\.", r"[\w.]*test_jax_boundary\.")


@pytest.fixture(params=[False, True], ids=["", "debug"])
def debug(request):
    """Runs the test out of and in debug mode."""
    before = chainrules.debug_mode()
    chainrules.debug_mode(request.param)
    yield request.param
    chainrules.debug_mode(before)


def raised(error, backend="native", jit=False):
    """The exception a bridged call raises: under jit the callback path's errors come out
    of XLA as JaxRuntimeError, whose message holds the named error's type and text."""
    if backend == "callback" and jit:
        return (error, jax.errors.JaxRuntimeError)
    return error


def _grad(f, x, jit=False):
    g = jax.grad(lambda v: jnp.sum(f(v)))
    return (jax.jit(g) if jit else g)(x)


# -- functions with wrong rules -----------------------------------------------------------


def none_bar(x):
    return x * x


@rrule.register(none_bar)
def none_bar_rrule(x):
    def none_bar_pullback(y_bar):
        return NoTangent(), None

    return x * x, none_bar_pullback


def none_dot(x):
    return x * x


@frule.register(none_dot)
def none_dot_frule(dargs, x):
    return x * x, None


def string_dot(x):
    return x * x


@frule.register(string_dot)
def string_dot_frule(dargs, x):
    return x * x, "0"


def no_self_bar(x, y):
    return x * y


@rrule.register(no_self_bar)
def no_self_bar_rrule(x, y):
    def no_self_bar_pullback(y_bar):
        return y * y_bar, x * y_bar

    return x * y, no_self_bar_pullback


def bare_bar(x):
    return 2 * x


@rrule.register(bare_bar)
def bare_bar_rrule(x):
    def bare_bar_pullback(y_bar):
        return 2 * y_bar

    return 2 * x, bare_bar_pullback


def short_dot(x):
    xp = array_namespace(x)
    return xp.sin(x)


@frule.register(short_dot)
def short_dot_frule(dargs, x):
    xp = array_namespace(x)
    return xp.sin(x), xp.cos(x)[:2] * dargs[1][:2]  # a wrong-shaped tangent


@rrule.register(short_dot)
def short_dot_rrule(x):
    xp = array_namespace(x)

    def short_dot_pullback(y_bar):
        return NoTangent(), xp.cos(x) * y_bar

    return xp.sin(x), short_dot_pullback


# -- no silent values ---------------------------------------------------------------------


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("backend", ["native", "callback", "auto"])
def test_pullback_none_error(backend, jit, debug):
    f = jax_function(none_bar, backend=backend)
    with pytest.raises(raised(TangentConversionError, backend, jit), match=msg(
            "jax_function(test_jax_boundary.none_bar): cannot convert the tangent for "
            "argument 1: expected a tangent of ") + ".*" + re.escape(f"got NoneType; {NONE_REASON}")):
        _grad(f, X, jit)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("backend", ["native", "auto"])
def test_frule_none_error(backend, jit, debug):
    f = jax_function(none_dot, backend=backend)
    jvp = lambda x: jax.jvp(f, (x,), (jnp.ones(3),))  # noqa: E731
    with pytest.raises(TangentConversionError, match=msg(
            "jax_function(test_jax_boundary.none_dot): cannot convert the tangent for "
            "output: expected a tangent of ") + ".*" + re.escape(f"got NoneType; {NONE_REASON}")):
        (jax.jit(jvp) if jit else jvp)(X)
    with pytest.raises(TangentConversionError, match=re.escape(NONE_REASON)):
        _grad(f, X, jit)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_frule_none_callback_error(jit):
    f = jax_function(none_dot, backend="callback")
    jvp = lambda x: jax.jvp(f, (x,), (jnp.ones(3),))  # noqa: E731
    with pytest.raises(raised(TangentConversionError, "callback", jit),
                       match=re.escape(NONE_REASON)):
        jax.block_until_ready((jax.jit(jvp) if jit else jvp)(X))


@pytest.mark.parametrize("backend", ["native", "callback", "auto"])
def test_frule_string_error(backend):
    f = jax_function(string_dot, backend=backend)
    with pytest.raises(TangentConversionError, match=re.escape(
            "got str; a str is not a tangent")):
        jax.jvp(f, (X,), (jnp.ones(3),))


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("backend", ["native", "callback", "auto"])
def test_pullback_forgot_self_bar_error(backend, jit, debug):
    f = jax_function(no_self_bar, backend=backend)
    if chainrules.debug_mode():  # the core's check of the pullback's result comes first
        with pytest.raises(raised(PullbackError, backend, jit), match=re.escape(
                "returned 2 entries for a call with 2 positional argument(s); it must return "
                "3: one for the function itself")):
            _grad(lambda x: f(x, jnp.ones(3)), X, jit)
        return
    with pytest.raises(raised(PullbackError, backend, jit), match=msg(
            "jax_function(test_jax_boundary.no_self_bar): the rrule's pullback returned 2 "
            "entries, expected 3 (self_bar for the function itself, then one per positional "
            "argument). It looks like the pullback forgot self_bar: return (NoTangent(), "
            "x_bar, x_bar), with NoTangent() first for a plain function.")):
        _grad(lambda x: f(x, jnp.ones(3)), X, jit)


@pytest.mark.parametrize("backend", ["native", "callback", "auto"])
def test_pullback_not_a_tuple_error(backend, debug):
    f = jax_function(bare_bar, backend=backend)
    if chainrules.debug_mode():  # the core's check of the pullback's result comes first
        with pytest.raises(PullbackError, match=re.escape("; it must return a tuple")):
            _grad(f, X)
        return
    with pytest.raises(PullbackError, match=msg(
            "jax_function(test_jax_boundary.bare_bar): the rrule's pullback returned a ")
            + r"\w+" + re.escape(", not a tuple, expected 2 (self_bar for the function itself, "
                                 "then one per positional argument). Return a tuple")):
        _grad(f, X)


# -- debug mode accepts tracers -----------------------------------------------------------


def softplus(x):
    xp = array_namespace(x)
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, 0.0)


@frule.register(softplus)
def softplus_frule(dargs, x):
    xp = array_namespace(x)
    return softplus(x), dargs[1] / (1 + xp.exp(-x))


@rrule.register(softplus)
def softplus_rrule(x):
    xp = array_namespace(x)

    def softplus_pullback(y_bar):
        return NoTangent(), y_bar / (1 + xp.exp(-x))

    return softplus(x), softplus_pullback


def _softplus_ref(x):
    return jnp.logaddexp(x, 0.0)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_debug_mode_accepts_tracers(mode, debug):
    f = jax_function(softplus, backend="native", mode=mode)
    want = jax.grad(lambda v: jnp.sum(_softplus_ref(v)))(X)
    np.testing.assert_allclose(_grad(f, X), want, rtol=1e-6)
    np.testing.assert_allclose(_grad(f, X, jit=True), want, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.grad(lambda v: f(v)))(X), want, rtol=1e-6)
    h = jax.hessian(lambda v: jnp.sum(f(v)))(X)
    np.testing.assert_allclose(h, jax.hessian(lambda v: jnp.sum(_softplus_ref(v)))(X),
                               rtol=1e-5, atol=1e-7)
    if mode == "forward":
        _, y_dot = jax.jvp(f, (X,), (jnp.ones(3),))
        np.testing.assert_allclose(y_dot, want, rtol=1e-6)


def test_debug_mode_tangent_checks_on_jax_values(debug):
    """Tracers and concrete arrays of JAX are tangents of each other; a NumPy array, a
    wrong shape or a complex tangent of a real array are not."""
    seen = {}

    def check(x, t):
        seen["tracer"] = tangent_mismatch(X, t)
        seen["shape"] = tangent_mismatch(X, t[:2])
        seen["complex"] = tangent_mismatch(X, t.astype(jnp.complex64))
        return x

    jax.jit(check)(X, X)
    assert seen["tracer"] is None
    assert seen["shape"][1] == "a real array of shape (3,)"
    assert seen["complex"][1] == "a real array of shape (3,) (the primal is real)"
    foreign = tangent_mismatch(X, np.ones(3))
    if debug:
        assert foreign[1] == "a real array of shape (3,) from the same array library as " \
                             "the primal"
    else:
        assert foreign is None


# -- an honest "auto" ---------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["auto", "native"])
def test_wrong_shaped_frule_error(backend):
    # short_dot has a correct rrule too: neither backend may hide the frule's mistake
    f = jax_function(short_dot, backend=backend)
    text = msg("jax_function(test_jax_boundary.short_dot): cannot convert the tangent for "
               "output: expected a tangent of ") + ".*" + re.escape(
        "shape (2,) does not fit shape (3,)")
    with pytest.raises(TangentConversionError, match=text):
        jax.jit(jax.grad(lambda v: jnp.sum(f(v))))(X)
    with pytest.raises(TangentConversionError, match="does not fit shape"):
        jax.jvp(f, (X,), (jnp.ones(3),))
    with pytest.raises(TangentConversionError, match="does not fit shape"):
        f.backend_for(X)


def add_vectors(x, y):
    return x + y


@rrule.register(add_vectors)
def add_vectors_rrule(x, y):
    def add_vectors_pullback(y_bar):
        return NoTangent(), y_bar, y_bar

    return x + y, add_vectors_pullback


def test_user_broadcasting_mistake_is_the_real_error():
    f = jax_function(add_vectors)
    with pytest.raises(TypeError, match=re.escape(
            "add got incompatible shapes for broadcasting: (3,), (4,)")):
        jax.jit(jax.grad(lambda v: jnp.sum(f(v, jnp.ones(4)))))(X)


def scaled_softplus(x, *, beta=1.0):
    xp = array_namespace(x)
    return xp.log1p(xp.exp(beta * x)) / beta


@frule.register(scaled_softplus)
def scaled_softplus_frule(dargs, x, *, beta=1.0):
    xp = array_namespace(x)
    return scaled_softplus(x, beta=beta), dargs[1] / (1 + xp.exp(-beta * x))


def test_traced_keyword_stays_native():
    f = jax_function(scaled_softplus)
    choices = []

    def loss(v, b):
        choices.append(f.backend_for(v, beta=b))
        return jax.grad(lambda v: jnp.sum(f(v, beta=b)))(v)

    got = jax.jit(loss)(X, 2.0)
    np.testing.assert_allclose(got, jax.nn.sigmoid(2.0 * X), rtol=1e-6)
    assert choices == [("native", "forward", None)]


def numpy_cube(x):
    return x**3


@rrule.register(numpy_cube)
def numpy_cube_rrule(x):
    y = np.power(x, 3)

    def numpy_cube_pullback(y_bar):
        return NoTangent(), 3 * x**2 * y_bar

    return y, numpy_cube_pullback


NUMPY_LINE = numpy_cube_rrule.__code__.co_firstlineno + 2  # the np.power line


def test_backend_for_reason_names_the_numpy_call():
    choice = jax_function(numpy_cube).backend_for(X)
    assert choice.backend == "callback"
    assert f"{__file__}:{NUMPY_LINE} `y = np.power(x, 3)` needs a concrete array " \
           f"(TracerArrayConversionError)" in choice.reason
    assert "Warning" not in choice.reason


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_native_refuses_numpy_rule_at_first_call(jit):
    f = jax_function(numpy_cube, backend="native")
    with pytest.raises(NumPyOnlyRuleError, match=msg(
            "jax_function(test_jax_boundary.numpy_cube): backend='native' runs "
            "test_jax_boundary.numpy_cube and its rules on JAX tracers, but its rrule is "
            f"NumPy-only: {__file__}:{NUMPY_LINE} `y = np.power(x, 3)` needs a concrete array "
            "(TracerArrayConversionError).")) as info:
        (jax.jit(f) if jit else f)(X)  # no derivative asked: the first call refuses it
    assert (info.value.filename, info.value.lineno) == (__file__, NUMPY_LINE)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_native_scipy_function_suggests_jax_equivalent(jit):
    special = pytest.importorskip("scipy.special")
    f = jax_function(special.erf, backend="native")
    with pytest.raises(NumPyOnlyRuleError, match=re.escape(
            "Use jax.scipy.special.erf, JAX's own version of ")) as info:
        (jax.jit(f) if jit else f)(X)
    assert info.value.alternative == "jax.scipy.special.erf"


def test_native_scipy_linalg_names_the_rule_line():
    linalg = pytest.importorskip("scipy.linalg")
    with pytest.raises(NumPyOnlyRuleError, match=r"rules[/\\]scipy[/\\]\w+\.py:\d+ `.*` needs "
                       r"a concrete array .* Use jax\.scipy\.linalg\.expm, JAX's own version"):
        jax_function(linalg.expm, backend="native")(jnp.eye(3))


def at_set(x):
    return x.at[0].set(1.0)  # JAX-only: cannot run on NumPy arrays


@rrule.register(at_set)
def at_set_rrule(x):
    y = np.asarray(x).copy()

    def at_set_pullback(y_bar):
        return NoTangent(), y_bar

    return y, at_set_pullback


def test_auto_does_not_fall_back_when_primal_needs_jax():
    f = jax_function(at_set)
    with pytest.raises(NumPyOnlyRuleError, match="its rrule is NumPy-only: .*" + re.escape(
            "The callback path cannot take over either: ") + r"[\w.]*at_set itself fails on "
            "NumPy arrays \\(AttributeError: "):
        jax.jit(f)(X)


def scale_by(x, t):
    return t * x


@rrule.register(scale_by)
def scale_by_rrule(x, t):
    def scale_by_pullback(y_bar):
        return NoTangent(), t * y_bar, jnp.sum(x * y_bar)

    return t * x, scale_by_pullback


@pytest.mark.parametrize("backend", ["native", "callback", "auto"])
def test_positional_parameter_by_keyword_error(backend):
    f = jax_function(scale_by, backend=backend)
    with pytest.raises(NoRuleError, match=msg(
            "jax_function(test_jax_boundary.scale_by): no rrule of "
            "test_jax_boundary.scale_by applies to the call ") + ".*" + re.escape(
            "The rules of ") + ".*" + re.escape(
            "scale_by dispatch on positional arguments only, and t is a positional parameter "
            "of scale_by passed by keyword: call scale_by(x, t) with t positional.")):
        _grad(lambda v: f(v, t=2.0), X)


# -- no per-call tax: plans cached per function and argument structure --------------------


def _plans_of(f):
    from chainrules.interop import _jax_cache

    return [(key, plan) for key, plan in _jax_cache._PLANS.items() if key[0] is f]


def test_new_jax_function_per_call_reuses_one_plan():
    before = len(_plans_of(scaled_softplus))
    for _ in range(3):
        y = jax_function(scaled_softplus)(X, beta=2.5)
    np.testing.assert_allclose(y, np.log1p(np.exp(2.5 * np.asarray(X))) / 2.5, rtol=1e-6)
    assert len(_plans_of(scaled_softplus)) == before + 1


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_static_values_are_part_of_the_plan(jit):
    def run(beta):
        g = jax.grad(lambda v: jnp.sum(jax_function(scaled_softplus)(v, beta=beta)))
        return (jax.jit(g) if jit else g)(X)

    for beta in (1.0, 2.0, 1.0, 3.0):
        np.testing.assert_allclose(run(beta), jax.nn.sigmoid(beta * X), rtol=1e-6)


def scale_by_array(x, w):
    return x * w


@frule.register(scale_by_array)
def scale_by_array_frule(dargs, x, w):
    return x * w, dargs[1] * w


def test_static_numpy_arrays_are_never_cached():
    f = jax_function(scale_by_array)
    for w in (np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])):
        g = jax.grad(lambda v, w=w: jnp.sum(f(v, w)))(X)
        np.testing.assert_allclose(g, w)
    assert _plans_of(scale_by_array) == []


def test_plans_hold_no_tracers_and_are_bounded(monkeypatch):
    from chainrules.interop import _jax_cache

    monkeypatch.setattr(_jax_cache, "_CACHE_SIZE", 4)
    f = jax_function(scaled_softplus)
    for beta in range(1, 8):
        jax.jit(jax.grad(lambda v, beta=float(beta): jnp.sum(f(v, beta=beta))))(X)
    assert len(_jax_cache._PLANS) <= 4
    for _, plan in _plans_of(scaled_softplus):
        _, call = plan
        assert call.dyn == []
        assert not any(isinstance(leaf, jax.core.Tracer) for leaf in call.template)


def later_rules(x):
    return 3 * x


@rrule.register(later_rules)
def later_rules_rrule(x):
    def later_rules_pullback(y_bar):
        return NoTangent(), 3 * y_bar

    return 3 * x, later_rules_pullback


def test_registering_a_rule_drops_the_plans():
    f = jax_function(later_rules)
    assert f.backend_for(X).mode == "reverse"
    np.testing.assert_allclose(_grad(f, X), [3.0] * 3)
    with chainrules.scoped_rules():
        @frule.register(later_rules)
        def later_rules_frule(dargs, x):
            return 3 * x, 3 * dargs[1]

        assert _plans_of(later_rules) == []
        assert jax_function(later_rules).backend_for(X).mode == "forward"
        _, y_dot = jax.jvp(jax_function(later_rules), (X,), (jnp.ones(3),))
        np.testing.assert_allclose(y_dot, [3.0] * 3)


def test_auto_falls_back_when_numpy_code_fails_on_a_tracer():
    # np.take hands the tracer's own take a NumPy-only mode="raise": NumPy met a tracer
    f = jax_function(np.take)
    idx = np.array([0, 2])
    choice = f.backend_for(X, idx)
    assert choice.backend == "callback"
    assert choice.reason.startswith("NumPyOnlyRuleError: ")
    assert "(NotImplementedError)" in choice.reason
    np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(f(v, idx)))(X), [1.0, 0.0, 1.0])


def test_auto_falls_back_for_rules_registered_for_numpy_types_only():
    choice = jax_function(np.fft.fft).backend_for(X)
    assert choice.backend == "callback"
    assert choice.reason.startswith("NoRuleError: ")
