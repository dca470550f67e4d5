"""The JAX bridge: transformations, conventions, errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

from chainrules import NoTangent, PullbackError, Tangent, debug_mode, rrule_via_ad  # noqa: E402
from chainrules.interop import (  # noqa: E402
    NoRuleError,
    ResultShapeError,
    TangentConversionError,
    UnsupportedTransformError,
)
from chainrules.interop.jax import JaxConfig, as_numpy_function  # noqa: E402
from chainrules.interop.jax import jax_function as _jax_function  # noqa: E402
from chainrules.testing import test_frule, test_rrule  # noqa: E402


def jax_function(f, **kwargs):
    """The callback path, which this file tests (tests/interop/test_jax_native.py: native)."""
    kwargs.setdefault("backend", "callback")
    return _jax_function(f, **kwargs)


X = np.array([0.5, -1.0, 2.0], dtype=np.float32)


def msg(text: str) -> str:
    """A regex matching ``text`` literally, whatever package prefix the test module has."""
    return re.escape(text).replace("conftest\\.", r"[\w.]*conftest\.")


def close(a, b, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def as_pytree(cls):
    """Register a dataclass of arrays as a JAX pytree (once)."""
    try:
        jax.tree_util.register_dataclass(cls, data_fields=["w", "b"], meta_fields=[])
    except ValueError:  # already registered by an earlier test
        pass
    return cls


# -- reverse mode -------------------------------------------------------------------------


def test_grad_matches_rule(ex):
    g = jax.grad(lambda x: jax_function(ex.cube)(x).sum())(jnp.asarray(X))
    close(g, 3 * X**2)


def test_grad_eager_calls_rrule_once(ex):
    # the pullback kept from the forward pass is used: no recomputation
    jax.grad(lambda x: jax_function(ex.cube)(x).sum())(jnp.asarray(X))
    assert ex.counts["cube_rrule"] == 1


def test_jit_grad_and_vmap(ex):
    f = jax_function(ex.cube)
    grad = jax.grad(lambda x: f(x).sum())
    close(jax.jit(grad)(jnp.asarray(X)), 3 * X**2)
    batch = jnp.asarray(np.stack([X, 2 * X]))
    close(jax.vmap(grad)(batch), 3 * np.asarray(batch) ** 2)
    close(jax.jit(jax.vmap(grad))(batch), 3 * np.asarray(batch) ** 2)
    close(jax.jacrev(f)(jnp.asarray(X)), np.diag(3 * X**2))
    close(jax.vmap(f)(batch), np.asarray(batch) ** 3)


def test_vjp_called_twice_recomputes(ex):
    y, vjp_fn = jax.vjp(jax_function(ex.cube), jnp.asarray(X))
    (g1,) = vjp_fn(jnp.ones(3))
    (g2,) = vjp_fn(2 * jnp.ones(3))
    close(g1, 3 * X**2)
    close(g2, 6 * X**2)


def _unthunked_a_bar_only() -> dict:
    """The thunks `weighted`'s pullback evaluates when only ``a`` is differentiated: its
    own, and in debug mode every one (the core checks each cotangent's shape)."""
    return {"a_bar": 1, "b_bar": 1} if debug_mode() else {"a_bar": 1}


def test_only_requested_cotangent_is_unthunked(ex):
    f = jax_function(ex.weighted)
    a, b = jnp.asarray(X), jnp.asarray(2 * X)
    g = jax.grad(lambda a: f(a, b).sum())(a)
    close(g, 2 * X)
    assert ex.counts == _unthunked_a_bar_only()


def test_symbolic_zero_cotangent_stays_zero(ex):
    f = jax_function(ex.zero_grad)
    gx, gy = jax.grad(lambda x, y: f(x, y).sum(), argnums=(0, 1))(jnp.asarray(X), jnp.asarray(X))
    close(gx, 2 * np.ones(3))
    close(gy, np.zeros(3))


def test_complex_cotangent_is_conjugated(ex):
    z = jnp.asarray(np.array([1 + 2j, -0.5 + 1j], dtype=np.complex64))
    bridged = jax.grad(lambda z: jax_function(ex.abs2)(z).sum())(z)
    native = jax.grad(lambda z: (jnp.abs(z) ** 2).sum())(z)
    close(bridged, native)
    close(bridged, 2 * np.conj(np.asarray(z)))  # JAX's convention: the conjugate of 2z


def test_holomorphic_complex_output(ex):
    w = jnp.asarray(np.array([1 + 2j, 3 - 1j], dtype=np.complex64))
    z = jnp.asarray(np.array([0.5 - 1j, 2 + 0.5j], dtype=np.complex64))
    ct = jnp.asarray(np.array([1 - 1j, 0.5 + 2j], dtype=np.complex64))
    _, vjp_b = jax.vjp(jax_function(ex.cmul), w, z)
    _, vjp_n = jax.vjp(lambda w, z: w * z, w, z)
    for a, b in zip(vjp_b(ct), vjp_n(ct)):
        close(a, b)
    with jax.enable_x64(False):
        close(jax.jit(lambda w, z: jax.vjp(jax_function(ex.cmul), w, z)[1](ct))(w, z)[0],
              vjp_n(ct)[0])


def test_dict_argument(ex):
    p = {"w": jnp.asarray(np.arange(6.0).reshape(2, 3)), "b": jnp.ones(2)}
    x = jnp.asarray(np.array([1.0, -1.0, 0.5]))
    f = jax_function(ex.affine_apply)
    for grad in (jax.grad, lambda fn, **kw: jax.jit(jax.grad(fn, **kw))):
        gp, gx = grad(lambda p, x: f(p, x).sum(), argnums=(0, 1))(p, x)
        gp_n, gx_n = jax.grad(lambda p, x: (p["w"] @ x + p["b"]).sum(), argnums=(0, 1))(p, x)
        close(gp["w"], gp_n["w"])
        close(gp["b"], gp_n["b"])
        close(gx, gx_n)


def test_registered_dataclass_argument(ex):
    as_pytree(ex.Affine)
    p = ex.Affine(w=jnp.asarray(np.arange(6.0).reshape(2, 3)), b=jnp.ones(2))
    x = jnp.asarray(np.array([1.0, -1.0, 0.5]))
    gp = jax.grad(lambda p: jax_function(ex.affine_dc)(p, x).sum())(p)
    close(gp.w, np.outer(np.ones(2), np.asarray(x)))
    close(gp.b, np.ones(2))


def test_namedtuple_output(ex):
    f = jax_function(ex.sincos)
    out = f(jnp.asarray(X))
    assert type(out).__name__ == "SinCos"
    g = jax.grad(lambda x: (f(x).sin + 2 * f(x).cos).sum())(jnp.asarray(X))
    close(g, np.cos(X) - 2 * np.sin(X))
    # only one of the outputs used: the other's cotangent is a symbolic zero
    g = jax.jit(jax.grad(lambda x: f(x).cos.sum()))(jnp.asarray(X))
    close(g, -np.sin(X))


def test_integer_arguments_get_float0(ex):
    f = jax_function(ex.scaled_take)
    x = jnp.asarray(X)
    idx = jnp.asarray(np.array([0, 2, 2]))
    gx, gidx = jax.grad(lambda x, i: f(x, i, 3).sum(), argnums=(0, 1), allow_int=True)(x, idx)
    close(gx, [3.0, 0.0, 6.0])
    assert gidx.dtype == jax.dtypes.float0
    close(jax.jit(jax.grad(lambda x, i: f(x, i, 3).sum()))(x, idx), [3.0, 0.0, 6.0])


def test_python_float_argument_is_differentiable(ex):
    assert float(jax.grad(jax_function(ex.cube))(2.0)) == pytest.approx(12.0)


def test_non_jax_arguments_are_static(ex):
    # a NumPy array argument is passed through and not differentiated
    f = jax_function(ex.weighted)
    g = jax.grad(lambda a: f(a, np.full(3, 2.0)).sum())(jnp.asarray(X))
    close(g, 2 * np.ones(3))
    assert ex.counts == _unthunked_a_bar_only()


def test_no_jax_arrays_returns_jax_arrays(ex):
    out = jax_function(ex.cube)(np.array([2.0]))
    assert isinstance(out, jax.Array)
    close(out, [8.0])


def test_result_shape_argument(ex):
    f = jax_function(ex.cube, result_shape=lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype))
    close(jax.jit(f)(jnp.asarray(X)), X**3)


def test_result_shape_probe_failure_error(ex):
    def picky(x):
        if np.all(x == 0.5):
            raise ValueError("refuses the example input")
        return x

    f = jax_function(picky)
    with pytest.raises(ResultShapeError, match=re.escape(
            "under jax.jit the result's shape and dtype are needed before")) as info:
        jax.jit(f)(jnp.asarray(X))
    assert "refuses the example input" in str(info.value)
    assert "Pass result_shape=" in str(info.value)


# -- forward mode -------------------------------------------------------------------------


def test_jvp_needs_forward_mode_error(ex):
    with pytest.raises(UnsupportedTransformError, match=re.escape(
            "does not support jax.jvp (forward mode): a JAX function has either a custom VJP "
            "or a custom JVP")):
        jax.jvp(jax_function(ex.cube), (jnp.asarray(X),), (jnp.ones(3),))


def test_forward_mode_jvp_jacfwd_vmap(ex):
    f = jax_function(ex.cube, mode="forward")
    y, y_dot = jax.jvp(f, (jnp.asarray(X),), (jnp.ones(3),))
    close(y, X**3)
    close(y_dot, 3 * X**2)
    close(jax.jacfwd(f)(jnp.asarray(X)), np.diag(3 * X**2))
    close(jax.jit(jax.jacfwd(f))(jnp.asarray(X)), np.diag(3 * X**2))
    assert ex.counts.get("cube_rrule", 0) == 0


def test_forward_mode_structures_and_zero_tangents(ex):
    f = jax_function(ex.affine_apply, mode="forward")
    p = {"w": jnp.asarray(np.arange(6.0).reshape(2, 3)), "b": jnp.ones(2)}
    x = jnp.asarray(np.array([1.0, -1.0, 0.5]))
    p_dot = {"w": jnp.ones((2, 3)), "b": jnp.zeros(2)}
    _, y_dot = jax.jvp(f, (p, x), (p_dot, jnp.zeros(3)))
    _, y_dot_n = jax.jvp(lambda p, x: p["w"] @ x + p["b"], (p, x), (p_dot, jnp.zeros(3)))
    close(y_dot, y_dot_n)
    g = jax_function(ex.sincos, mode="forward")
    _, t = jax.jvp(g, (jnp.asarray(X),), (jnp.ones(3),))
    close(t.sin, np.cos(X))
    close(t.cos, -np.sin(X))


def test_both_mode_grad_and_jvp(ex):
    f = jax_function(ex.cube, mode="both")
    close(jax.grad(lambda x: f(x).sum())(jnp.asarray(X)), 3 * X**2)
    close(jax.jit(jax.grad(lambda x: f(x).sum()))(jnp.asarray(X)), 3 * X**2)
    close(jax.jvp(f, (jnp.asarray(X),), (jnp.ones(3),))[1], 3 * X**2)


def test_both_mode_vmap_of_jvp_error(ex):
    f = jax_function(ex.cube, mode="both")
    with pytest.raises(UnsupportedTransformError, match=re.escape(
            "does not support jax.vmap of a derivative in mode='both': JAX has no batching "
            "rule for linear_call")):
        jax.vmap(lambda x: jax.jvp(f, (x,), (x,)))(jnp.ones((2, 3)))


def test_both_mode_vmap_of_grad_error(ex):
    f = jax_function(ex.cube, mode="both")
    with pytest.raises(UnsupportedTransformError, match=re.escape(
            "does not support jax.vmap of a derivative in mode='both': JAX has no batching "
            "rule for linear_call")):
        jax.vmap(jax.grad(lambda x: f(x)))(jnp.ones(4))


def test_hessian_of_callback_error(ex):
    f = jax_function(ex.cube)
    with pytest.raises(UnsupportedTransformError, match=msg(
            "jax_function(conftest.cube) does not support differentiating its derivative "
            "(jax.hessian, jax.jvp of jax.grad, jax.jacfwd of jax.jacrev): its rules run on "
            "NumPy arrays in jax.pure_callback")):
        jax.hessian(lambda x: f(x).sum())(jnp.asarray(X))


@pytest.mark.parametrize("jit", [False, True])
def test_expand_dims_derivatives(ex, jit):
    f = jax_function(ex.cube, vmap_method="expand_dims")
    g = jax_function(ex.weighted, vmap_method="expand_dims")
    batch = jnp.asarray(np.stack([X, 2 * X, -X]))
    wrap = jax.jit if jit else (lambda h: h)
    close(wrap(jax.vmap(jax.grad(lambda x: f(x).sum())))(batch), 3 * np.asarray(batch) ** 2)
    close(wrap(jax.jacrev(f))(jnp.asarray(X)), np.diag(3 * X**2))
    close(wrap(jax.vmap(f))(batch), np.asarray(batch) ** 3)
    # an unbatched argument next to a batched one: its gradient is per example
    b = jnp.asarray(X)
    per_example = wrap(jax.vmap(jax.grad(lambda a, b: g(a, b).sum(), argnums=1),
                                in_axes=(0, None)))(batch, b)
    close(per_example, np.asarray(batch))


def test_complex_forward_mode(ex):
    w = jnp.asarray(np.array([1 + 2j, 3 - 1j], dtype=np.complex64))
    z = jnp.asarray(np.array([0.5 - 1j, 2 + 0.5j], dtype=np.complex64))
    t = (jnp.ones(2, dtype=np.complex64), 1j * jnp.ones(2, dtype=np.complex64))
    _, bridged = jax.jvp(jax_function(ex.cmul, mode="forward"), (w, z), t)
    _, native = jax.jvp(lambda w, z: w * z, (w, z), t)
    close(bridged, native)


# -- errors -------------------------------------------------------------------------------


def test_no_rule_error(ex):
    f = jax_function(ex.no_rule)
    close(f(jnp.asarray(X)), X + 1)  # the primal alone needs no rule
    with pytest.raises(NoRuleError, match=msg(
            "jax_function(conftest.no_rule): no rrule is registered for conftest.no_rule("
            "ndarray), and reverse mode (a gradient or VJP) needs one. Register it with "
            "@chainrules.rrule.register(conftest.no_rule)")):
        jax.grad(lambda x: f(x).sum())(jnp.asarray(X))


def test_no_rule_error_under_jit(ex):
    with pytest.raises(NoRuleError, match=msg("no rrule is registered for conftest.no_rule")):
        jax.jit(jax.grad(lambda x: jax_function(ex.no_rule)(x).sum()))(jnp.asarray(X))


def test_no_frule_error(ex):
    f = jax_function(ex.weighted, mode="forward")
    a = jnp.asarray(X)
    with pytest.raises(NoRuleError, match=msg(
            "jax_function(conftest.weighted): no frule is registered for conftest.weighted("
            "ndarray, ndarray), and forward mode (a JVP) needs one.")):
        jax.jvp(lambda a: f(a, a), (a,), (jnp.ones(3),))
    with pytest.raises(NoRuleError, match=msg("no frule is registered for conftest.weighted")):
        jax.jit(lambda a: jax.jvp(lambda a: f(a, a), (a,), (jnp.ones(3),)))(a)


def test_structural_tangent_for_array_error(ex):
    with pytest.raises(TangentConversionError, match=msg(
            "jax_function(conftest.bad_structural): cannot convert the tangent for argument 1: "
            "expected a tangent of ndarray(shape=(3,), dtype=float32), got Tangent[tuple]; "
            "a structural tangent cannot stand for an array")):
        jax.grad(lambda x: jax_function(ex.bad_structural)(x).sum())(jnp.asarray(X))


def test_wrong_shape_tangent_error(ex):
    if debug_mode():  # the core's check of the pullback runs first
        with pytest.raises(PullbackError, match=re.escape(
                "returned a cotangent of shape (7, 5) for argument 1 of shape (3,); project "
                "it with ProjectTo(x)")):
            jax.grad(lambda x: jax_function(ex.bad_shape)(x).sum())(jnp.asarray(X))
        return
    with pytest.raises(TangentConversionError, match=re.escape(
            "cannot convert the tangent for argument 1: expected a tangent of "
            "ndarray(shape=(3,), dtype=float32), got ndarray(shape=(7, 5), dtype=float64)")):
        jax.grad(lambda x: jax_function(ex.bad_shape)(x).sum())(jnp.asarray(X))


def test_string_tangent_error(ex):
    with pytest.raises(TangentConversionError, match=re.escape(
            "got str;")):
        jax.grad(lambda x: jax_function(ex.bad_string)(x).sum())(jnp.asarray(X))


def test_pullback_wrong_length_error(ex):
    if debug_mode():  # the core's check of the pullback runs first
        with pytest.raises(PullbackError, match=re.escape(
                "returned 1 entries for a call with 1 positional argument(s); it must return "
                "2: one for the function itself, then one per argument. It looks like the "
                "pullback forgot self_bar, the first entry: NoTangent() for a plain function")):
            jax.grad(lambda x: jax_function(ex.bad_count)(x).sum())(jnp.asarray(X))
        return
    with pytest.raises(PullbackError, match=msg(
            "jax_function(conftest.bad_count): the rrule's pullback returned 1 entry, "
            "expected 2 (self_bar for the function itself, then one per positional argument). "
            "It looks like the pullback forgot self_bar: return (NoTangent(), x_bar)")):
        jax.grad(lambda x: jax_function(ex.bad_count)(x).sum())(jnp.asarray(X))


def test_bad_mode_error(ex):
    with pytest.raises(ValueError, match=msg(
            "jax_function(conftest.cube, mode='sideways'): mode must be one of "
            "('reverse', 'forward', 'both')")):
        jax_function(ex.cube, mode="sideways")


def test_not_callable_error():
    with pytest.raises(TypeError, match=re.escape(
            "jax_function(f): f must be callable, got int.")):
        jax_function(3)


# -- JaxConfig ----------------------------------------------------------------------------


def test_config_rrule_via_ad_structures():
    def f(p, x):
        return {"y": p[0] * jnp.sin(x), "n": p[1]}

    p = (np.array([2.0, 3.0]), np.array([1.0]))
    x = np.array([0.1, 0.2])
    y, pullback = rrule_via_ad(JaxConfig(), f, p, x)
    close(y["y"], 2 * np.sin(x) * np.array([1.0, 1.5]), rtol=1e-12)
    self_bar, p_bar, x_bar = pullback(Tangent[dict]({"y": np.ones(2)}))
    assert self_bar == NoTangent()
    close(p_bar[0], np.sin(x), rtol=1e-12)
    close(p_bar[1], [0.0])
    close(x_bar, p[0] * np.cos(x), rtol=1e-12)


def test_config_with_testers_passes_and_catches_wrong_gradient():
    A = np.array([[2.0, 0.5], [0.3, 3.0]])
    x = np.array([0.3, 1.2])
    solve = as_numpy_function(lambda A, x: jnp.linalg.solve(A, x))
    test_rrule(solve, A, x, rrule_f=rrule_via_ad, config=JaxConfig())
    from chainrules import frule_via_ad

    test_frule(solve, A, x, frule_f=frule_via_ad, config=JaxConfig())

    @jax.custom_vjp
    def wrong_sin(x):
        return jnp.sin(x)

    wrong_sin.defvjp(lambda x: (jnp.sin(x), x), lambda x, g: (2.0 * g,))
    with pytest.raises(AssertionError, match="wrong cotangent for argument 1"):
        test_rrule(as_numpy_function(wrong_sin), x, rrule_f=rrule_via_ad, config=JaxConfig())


def test_config_complex_convention():
    z = np.array([1 + 2j, -0.5 + 1j])
    _, pullback = rrule_via_ad(JaxConfig(), lambda z: jnp.abs(z) ** 2, z)
    close(pullback(np.ones(2))[1], 2 * z, rtol=1e-12)  # ChainRules' convention


def test_as_numpy_function_float64():
    out = as_numpy_function(jnp.sin)(np.array([1.0]))
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float64


def test_result_dtype_follows_announced_shape(ex):
    # the example call gives float64, the announced result_shape float32: cast, not an error
    def upcast(x):
        return np.asarray(x, dtype=np.float64) * 2

    f = jax_function(upcast, result_shape=lambda x: jax.ShapeDtypeStruct(x.shape, np.float32))
    out = jax.jit(f)(jnp.asarray(X))
    assert out.dtype == jnp.float32
    close(out, 2 * X)


def test_result_shape_count_mismatch_error(ex):
    f = jax_function(ex.cube, result_shape=lambda x: (jax.ShapeDtypeStruct(x.shape, x.dtype),) * 2)
    with pytest.raises(Exception, match=re.escape(
            "jax_function: the function returned 1 arrays under tracing, but 2 were expected")):
        jax.jit(f)(jnp.asarray(X)).block_until_ready()
