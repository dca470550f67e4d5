"""The native JAX path: user functions whose rules are written against the array API.

Each function below has an frule and an rrule written with ``xp =
array_namespace(x)``; the same rules are checked against finite differences with
chainrules' testers on NumPy arrays, and the bridged function is checked against
JAX's own derivatives of the same maths written in ``jnp``, under jit, vmap, grad,
grad of grad, hessian, jacfwd, jacrev, jvp and vjp, in float64, float32 and complex,
for both constructions (``mode="forward"``: custom_jvp from the frule;
``mode="reverse"``: custom_vjp from the rrule).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy


from chainrules import (  # noqa: E402
    NoTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    array_namespace,
    frule,
    rrule,
)
from chainrules.interop import (  # noqa: E402
    NumPyOnlyRuleError,
    UnsupportedTransformError,
)
from chainrules.interop.jax import jax_function  # noqa: E402
from chainrules.testing import no_tangent, test_frule, test_rrule  # noqa: E402

COUNTS: dict[str, int] = {}


def msg(text: str) -> str:
    """A regex matching ``text`` literally, whatever package prefix this module has."""
    return re.escape(text).replace("test_jax_native\\.", r"[\w.]*test_jax_native\.")


def dense(t: Any, like: Any) -> Any:
    """A tangent as an array: structural zeros become zeros shaped like the primal."""
    if isinstance(t, (ZeroTangent, NoTangent)):
        return array_namespace(like).zeros_like(like)
    return t


def _scipy_linalg(xp: Any) -> Any:
    if "jax" in xp.__name__:
        return jax.scipy.linalg
    import scipy.linalg

    return scipy.linalg


# -- the user functions and their rules -----------------------------------------------
# 1. an elementwise holomorphic function


def cube(x):
    return x**3


@frule.register(cube)
def cube_frule(dargs, x):
    return x**3, 3 * x**2 * dargs[1]


@rrule.register(cube)
def cube_rrule(x):
    xp = array_namespace(x)
    d = 3 * xp.conj(x) ** 2

    def cube_pullback(y_bar):
        return NoTangent(), d * y_bar

    return x**3, cube_pullback


# 2. broadcasting: exp(x) * y with x of shape (3,), y of shape (2, 3)


def exp_times(x, y):
    return array_namespace(x, y).exp(x) * y


@frule.register(exp_times)
def exp_times_frule(dargs, x, y):
    xp = array_namespace(x, y)
    e = xp.exp(x)
    return e * y, e * y * dense(dargs[1], x) + e * dense(dargs[2], y)


@rrule.register(exp_times)
def exp_times_rrule(x, y):
    xp = array_namespace(x, y)
    e = xp.exp(x)

    def exp_times_pullback(y_bar):
        return NoTangent(), xp.sum(y_bar * xp.conj(e * y), axis=0), y_bar * xp.conj(e)

    return e * y, exp_times_pullback


# 3. a tuple output


def sincos(x):
    xp = array_namespace(x)
    return xp.sin(x), xp.cos(x)


@frule.register(sincos)
def sincos_frule(dargs, x):
    xp = array_namespace(x)
    s, c = xp.sin(x), xp.cos(x)
    return (s, c), Tangent[tuple](c * dargs[1], -s * dargs[1])


@rrule.register(sincos)
def sincos_rrule(x):
    xp = array_namespace(x)
    s, c = xp.sin(x), xp.cos(x)

    def sincos_pullback(y_bar):
        s_bar, c_bar = dense(y_bar[0], s), dense(y_bar[1], c)
        return NoTangent(), xp.conj(c) * s_bar - xp.conj(s) * c_bar

    return (s, c), sincos_pullback


# 4. Thunks: sum(a * b), each cotangent deferred


def weighted_sum(a, b):
    return array_namespace(a, b).sum(a * b)


@frule.register(weighted_sum)
def weighted_sum_frule(dargs, a, b):
    xp = array_namespace(a, b)
    return xp.sum(a * b), xp.sum(dense(dargs[1], a) * b + a * dense(dargs[2], b))


@rrule.register(weighted_sum)
def weighted_sum_rrule(a, b):
    xp = array_namespace(a, b)

    def weighted_sum_pullback(y_bar):
        def a_bar():
            COUNTS["a_bar"] = COUNTS.get("a_bar", 0) + 1
            return y_bar * xp.conj(b)

        def b_bar():
            COUNTS["b_bar"] = COUNTS.get("b_bar", 0) + 1
            return y_bar * xp.conj(a)

        return NoTangent(), Thunk(a_bar), Thunk(b_bar)

    return xp.sum(a * b), weighted_sum_pullback


# 5. a ZeroTangent: the result does not depend on y


def twice_first(x, y):
    return 2 * x


@frule.register(twice_first)
def twice_first_frule(dargs, x, y):
    return 2 * x, 2 * dense(dargs[1], x)


@rrule.register(twice_first)
def twice_first_rrule(x, y):
    def twice_first_pullback(y_bar):
        return NoTangent(), 2 * y_bar, ZeroTangent()

    return 2 * x, twice_first_pullback


# 6. an integer argument


def scale_by(x, n):
    return x * n


@frule.register(scale_by)
def scale_by_frule(dargs, x, n):
    return x * n, dargs[1] * n


@rrule.register(scale_by)
def scale_by_rrule(x, n):
    def scale_by_pullback(y_bar):
        return NoTangent(), y_bar * n, NoTangent()

    return x * n, scale_by_pullback


# 7. a keyword argument (never differentiated)


def power(x, *, p=2):
    return x**p


@frule.register(power)
def power_frule(dargs, x, *, p=2):
    return x**p, p * x ** (p - 1) * dargs[1]


@rrule.register(power)
def power_rrule(x, *, p=2):
    xp = array_namespace(x)
    d = xp.conj(p * x ** (p - 1))

    def power_pullback(y_bar):
        return NoTangent(), d * y_bar

    return x**p, power_pullback


# 8. a linear solve that factorises A once, in the forward pass, and reuses it


def solve(A, b):
    xp = array_namespace(A, b)
    return xp.linalg.solve(A, b[:, None])[:, 0]


@frule.register(solve)
def solve_frule(dargs, A, b):
    xp = array_namespace(A, b)
    sla = _scipy_linalg(xp)
    lu = sla.lu_factor(A)
    x = sla.lu_solve(lu, b)
    rhs = dense(dargs[2], b) - dense(dargs[1], A) @ x
    return x, sla.lu_solve(lu, rhs)


@rrule.register(solve)
def solve_rrule(A, b):
    xp = array_namespace(A, b)
    sla = _scipy_linalg(xp)
    lu = sla.lu_factor(A)
    x = sla.lu_solve(lu, b)

    def solve_pullback(y_bar):
        b_bar = sla.lu_solve(lu, y_bar, trans=2 if xp.isdtype(A.dtype, "complex floating")
                             else 1)
        return NoTangent(), Thunk(lambda: -b_bar[:, None] * xp.conj(x)[None, :]), b_bar

    return x, solve_pullback


# 9. a reduction, real only (it takes a max)


def logsumexp(x):
    xp = array_namespace(x)
    m = xp.max(x)
    return m + xp.log(xp.sum(xp.exp(x - m)))


@frule.register(logsumexp)
def logsumexp_frule(dargs, x):
    xp = array_namespace(x)
    y = logsumexp(x)
    return y, xp.sum(xp.exp(x - y) * dargs[1])


@rrule.register(logsumexp)
def logsumexp_rrule(x):
    xp = array_namespace(x)
    y = logsumexp(x)
    softmax = xp.exp(x - y)

    def logsumexp_pullback(y_bar):
        return NoTangent(), y_bar * softmax

    return y, logsumexp_pullback


# 10. a dict argument


def affine(p, x):
    return p["w"] @ x + p["b"]


@frule.register(affine)
def affine_frule(dargs, p, x):
    _, p_dot, x_dot = dargs
    y_dot = dense(x_dot, x)
    y_dot = p["w"] @ y_dot
    if not isinstance(p_dot, (ZeroTangent, NoTangent)):
        y_dot = y_dot + dense(p_dot["w"], p["w"]) @ x + dense(p_dot["b"], p["b"])
    return affine(p, x), y_dot


@rrule.register(affine)
def affine_rrule(p, x):
    xp = array_namespace(x)

    def affine_pullback(y_bar):
        w_bar = Thunk(lambda: y_bar[:, None] * xp.conj(x)[None, :])
        x_bar = Thunk(lambda: xp.conj(p["w"]).T @ y_bar)
        return NoTangent(), Tangent[dict]({"w": w_bar, "b": y_bar}), x_bar

    return affine(p, x), affine_pullback


# 11. a real output of a complex input (not holomorphic): the conjugation convention


def abs2(z):
    xp = array_namespace(z)
    return xp.sum(xp.real(z * xp.conj(z)))


@frule.register(abs2)
def abs2_frule(dargs, z):
    xp = array_namespace(z)
    return abs2(z), 2 * xp.sum(xp.real(xp.conj(z) * dargs[1]))


@rrule.register(abs2)
def abs2_rrule(z):
    def abs2_pullback(y_bar):
        return NoTangent(), 2 * z * y_bar

    return abs2(z), abs2_pullback


# 12. a branch written with where, never reading a traced value


def leaky_relu(x):
    xp = array_namespace(x)
    return xp.where(x > 0, x, 0.1 * x)


@frule.register(leaky_relu)
def leaky_relu_frule(dargs, x):
    xp = array_namespace(x)
    slope = xp.where(x > 0, 1.0, 0.1)
    return leaky_relu(x), slope * dargs[1]


@rrule.register(leaky_relu)
def leaky_relu_rrule(x):
    xp = array_namespace(x)
    slope = xp.where(x > 0, 1.0, 0.1)

    def leaky_relu_pullback(y_bar):
        return NoTangent(), slope * y_bar

    return leaky_relu(x), leaky_relu_pullback


# -- the table: function, its jnp twin, inputs ----------------------------------------


@dataclasses.dataclass
class Spec:
    name: str
    f: Callable
    ref: Callable
    # shapes of the differentiated arguments (a dict for a dict argument)
    shapes: tuple
    # non-differentiated positional arguments appended after them, and keyword arguments
    rest: Callable[[], tuple] = lambda: ()
    kwargs: dict = dataclasses.field(default_factory=dict)
    real_only: bool = False
    well_conditioned: bool = False


def _solve_ref(A, b):
    return jnp.linalg.solve(A, b[:, None])[:, 0]


def _lse_ref(x):
    return jax.nn.logsumexp(x)


SPECS = [
    Spec("cube", cube, lambda x: x**3, ((4,),)),
    Spec("exp_times (broadcasting)", exp_times, lambda x, y: jnp.exp(x) * y, ((3,), (2, 3))),
    Spec("sincos (tuple output)", sincos, lambda x: (jnp.sin(x), jnp.cos(x)), ((3,),)),
    Spec("weighted_sum (thunks)", weighted_sum, lambda a, b: jnp.sum(a * b), ((3,), (3,))),
    Spec("twice_first (ZeroTangent)", twice_first, lambda x, y: 2 * x + 0 * y,
         ((3,), (3,))),
    Spec("scale_by (integer argument)", scale_by, lambda x, n: x * n, ((3,),),
         rest=lambda: (jnp.array([1, -2, 3]),)),
    Spec("power (keyword argument)", power, lambda x, p=2: x**p, ((3,),), kwargs={"p": 3}),
    Spec("solve (factorisation reused)", solve, _solve_ref, ((3, 3), (3,)),
         well_conditioned=True),
    Spec("logsumexp", logsumexp, _lse_ref, ((4,),), real_only=True),
    Spec("affine (dict argument)", affine, lambda p, x: p["w"] @ x + p["b"],
         ({"w": (2, 3), "b": (2,)}, (3,))),
    Spec("abs2 (real output of complex)", abs2,
         lambda z: jnp.sum(jnp.real(z * jnp.conj(z))), ((3,),)),
    Spec("leaky_relu (where)", leaky_relu, lambda x: jnp.where(x > 0, x, 0.1 * x), ((5,),),
         real_only=True),
]

DTYPES = ["float64", "float32", "complex128"]
TOL = {"float64": 1e-9, "float32": 2e-4, "complex128": 1e-9}


def _draw(rng, shape, dtype, well_conditioned=False):
    if isinstance(shape, dict):
        return {k: _draw(rng, s, dtype) for k, s in shape.items()}
    a = rng.uniform(0.3, 1.2, shape) * rng.choice([-1.0, 1.0], shape)
    if well_conditioned and len(shape) == 2:
        a = a + 3 * np.eye(shape[0])
    return a.astype("float32" if dtype == "float32" else "float64")


def _params(spec, dtype, seed=0):
    """The real parameters: the arguments (real) or their real and imaginary parts."""
    rng = np.random.default_rng(seed)
    re_ = tuple(_draw(rng, s, dtype, spec.well_conditioned) for s in spec.shapes)
    if dtype != "complex128":
        return jax.tree_util.tree_map(jnp.asarray, re_)
    return jax.tree_util.tree_map(jnp.asarray, (re_, tuple(_draw(rng, s, dtype)
                                                           for s in spec.shapes)))


def _lift(params, dtype):
    if dtype != "complex128":
        return params
    re_, im_ = params
    return jax.tree_util.tree_map(lambda u, v: u + 1j * v, re_, im_)


def _as_real(y):
    return jax.tree_util.tree_map(
        lambda a: jnp.stack([jnp.real(a), jnp.imag(a)]) if jnp.iscomplexobj(a) else a, y)


class Runner:
    """``F(params)`` (the function of real parameters) and a real scalar loss ``L``."""

    def __init__(self, spec, fn, dtype):
        self.spec, self.fn, self.dtype = spec, fn, dtype
        rng = np.random.default_rng(7)
        y = jax.eval_shape(self.F, _params(spec, dtype))
        self.w = jax.tree_util.tree_map(
            lambda s: jnp.asarray(rng.standard_normal(s.shape), s.dtype), y)

    def F(self, params):
        args = _lift(params, self.dtype)
        return _as_real(self.fn(*args, *self.spec.rest(), **self.spec.kwargs))

    def L(self, params):
        y = self.F(params)
        return sum(jnp.sum(a * w) for a, w in
                   zip(jax.tree_util.tree_leaves(y), jax.tree_util.tree_leaves(self.w)))


def _check_close(got, want, dtype, what):
    tol = TOL[dtype]
    g_leaves, w_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(g_leaves) == len(w_leaves), what
    for k, (g, w) in enumerate(zip(g_leaves, w_leaves)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol,
                                   err_msg=f"{what}, leaf {k}")


@pytest.fixture
def x64_for(request):
    """A context that turns on 64-bit JAX for the float64 and complex128 cases only."""

    def context(dtype):
        import contextlib

        return jax.enable_x64(True) if dtype != "float32" else contextlib.nullcontext()

    return context


@pytest.mark.parametrize("mode", ["forward", "reverse"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_native_matches_jax_derivatives(spec, dtype, mode, x64_for):
    if spec.real_only and dtype == "complex128":
        pytest.skip("real-valued maths (max, comparison)")
    with x64_for(dtype):
        bridged = jax_function(spec.f, backend="native", mode=mode)
        b, r = Runner(spec, bridged, dtype), Runner(spec, spec.ref, dtype)
        params = _params(spec, dtype)
        tangents = _params(spec, dtype, seed=1)
        batch = jax.tree_util.tree_map(lambda a: jnp.stack([a, 0.5 * a]), params)
        gg_dir = jax.tree_util.tree_map(jnp.ones_like, params)

        def grad_of_grad(run):
            g = jax.grad(run.L)
            return jax.grad(lambda p: sum(jnp.vdot(u, v) for u, v in zip(
                jax.tree_util.tree_leaves(g(p)), jax.tree_util.tree_leaves(gg_dir))))

        def all_checks(run: Runner) -> dict:
            # one program per function (bridged or jnp): one compilation, not one per check
            out = {
                "primal": run.F(params),
                "vmap": jax.vmap(run.F)(batch),
                "grad": jax.grad(run.L)(params),
                "vmap(grad)": jax.vmap(jax.grad(run.L))(batch),
                "grad of grad": grad_of_grad(run)(params),
                "hessian": jax.hessian(run.L)(params),
                "jacrev": jax.jacrev(run.F)(params),
            }
            if mode == "forward":
                out["jacfwd"] = jax.jacfwd(run.F)(params)
                out["jvp"] = jax.jvp(run.F, (params,), (tangents,))
                out["vmap(jvp)"] = jax.vmap(
                    lambda p: jax.jvp(run.F, (p,), (tangents,)))(batch)
            if dtype == "complex128":
                # the vjp of the complex function itself, in JAX's convention
                args = _lift(params, dtype)
                y, vjp = jax.vjp(lambda *a: run.fn(*a, *spec.rest(), **spec.kwargs), *args)
                out["complex vjp"] = vjp(jax.tree_util.tree_map(
                    lambda a: (1 + 2j if jnp.iscomplexobj(a) else 1.0) * jnp.ones_like(a), y))
            return out

        checks = jax.jit(all_checks, static_argnums=0)
        got, want = checks(b), checks(r)
        for what in want:
            _check_close(got[what], want[what], dtype, f"{spec.name}, {mode}, {what}")
        # eagerly, without jit, too
        _check_close(jax.grad(b.L)(params), want["grad"], dtype, f"{spec.name}, eager grad")


@pytest.fixture
def debug_on():
    import chainrules

    before = chainrules.debug_mode()
    chainrules.debug_mode(True)
    yield
    chainrules.debug_mode(before)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_native_matches_jax_derivatives_in_debug_mode(spec, mode, x64_for, debug_on):
    # debug mode checks every tangent a rule gets or gives, and they are tracers here
    test_native_matches_jax_derivatives(spec, "float64", mode, x64_for)


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_rules_pass_finite_differences(spec):
    # the rules themselves, on NumPy arrays, by chainrules' own testers
    rng = np.random.default_rng(3)
    args = tuple(_draw(rng, s, "float64", spec.well_conditioned) for s in spec.shapes)
    rest = tuple(np.asarray(a) if hasattr(a, "dtype") else a for a in spec.rest())
    rest = tuple(no_tangent(a) for a in rest)
    test_frule(spec.f, *args, *rest, fkwargs=spec.kwargs)
    test_rrule(spec.f, *args, *rest, fkwargs=spec.kwargs)


def test_reverse_mode_jvp_is_unsupported_error():
    f = jax_function(cube, backend="native", mode="reverse")
    with pytest.raises(UnsupportedTransformError, match=re.escape(
            "does not support jax.jvp (forward mode): a JAX function has either a custom "
            "VJP or a custom JVP")):
        jax.jvp(f, (jnp.ones(3),), (jnp.ones(3),))


# -- what the two constructions do with the rules' work --------------------------------


def _count_primitive(jaxpr, name):
    return len(re.findall(rf"\b{name}\[|= {name}\b|\b{name} ", str(jaxpr)))


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_solve_factorises_once_under_jit_grad(mode):
    f = jax_function(solve, backend="native", mode=mode)
    A = jnp.eye(3) * 3.0 + 0.1
    b = jnp.ones(3)
    loss = jax.jit(jax.grad(lambda A, b: jnp.sum(f(A, b) ** 2), argnums=(0, 1)))
    jaxpr = jax.make_jaxpr(loss)(A, b)
    assert _count_primitive(jaxpr, "lu") == 1, jaxpr
    assert "callback" not in str(jaxpr)


def test_only_needed_thunk_is_computed():
    COUNTS.clear()
    f = jax_function(weighted_sum, mode="reverse")
    f.backend_for(jnp.ones(3), jnp.ones(3))  # the probe of backend="auto" runs both thunks
    COUNTS.clear()
    jax.grad(f)(jnp.ones(3), 2 * jnp.ones(3))
    import chainrules

    # debug mode's check of the pullback's result reads the shape of every cotangent
    assert COUNTS == ({"a_bar": 1, "b_bar": 1} if chainrules.debug_mode() else {"a_bar": 1})


def test_jit_program_has_no_callback():
    f = jax_function(exp_times, backend="native")
    g = jax.jit(jax.vmap(jax.grad(lambda x, y: jnp.sum(f(x, y)))))
    text = g.lower(jnp.ones((4, 3)), jnp.ones((4, 2, 3))).as_text()
    assert "callback" not in text


# -- choosing the backend ---------------------------------------------------------------


def numpy_square(x):
    return x**2


@rrule.register(numpy_square)
def numpy_square_rrule(x):
    def numpy_square_pullback(y_bar):
        return NoTangent(), np.multiply(2 * x, y_bar)

    return x**2, numpy_square_pullback


def test_auto_picks_native_for_traceable_rules():
    f = jax_function(cube)
    assert f.backend_for(jnp.ones(3)) == ("native", "forward", None)
    assert jax_function(cube, mode="reverse").backend_for(jnp.ones(3)).mode == "reverse"


def test_auto_picks_callback_for_numpy_rules():
    f = jax_function(numpy_square)
    choice = f.backend_for(jnp.ones(3))
    assert choice.backend == "callback"
    assert "NumPyOnlyRuleError" in choice.reason
    np.testing.assert_allclose(jax.jit(jax.grad(lambda x: f(x).sum()))(jnp.ones(3)),
                               2 * np.ones(3))


def numpy_double(x):
    return 2 * x


@frule.register(numpy_double)
def numpy_double_frule(dargs, x):
    return 2 * x, np.multiply(2.0, dargs[1])


def test_auto_callback_with_only_an_frule_is_forward_mode():
    f = jax_function(numpy_double)
    choice = f.backend_for(jnp.ones(3))
    assert (choice.backend, choice.mode) == ("callback", "forward")
    _, y_dot = jax.jit(lambda x: jax.jvp(f, (x,), (jnp.ones(3),)))(jnp.ones(3))
    np.testing.assert_allclose(y_dot, 2 * np.ones(3))


def test_auto_decides_once_per_signature():
    f = jax_function(cube)
    f(jnp.ones(3))
    f(jnp.zeros(3))
    f(jnp.ones(4))
    assert len(f._choices) == 2


def test_native_numpy_rule_error():
    f = jax_function(numpy_square, backend="native")
    with pytest.raises(NumPyOnlyRuleError, match=msg(
            "jax_function(test_jax_native.numpy_square): backend='native' runs "
            "test_jax_native.numpy_square and its rules on JAX tracers, but its rrule's "
            "pullback is NumPy-only: ")) as info:
        jax.grad(lambda x: f(x).sum())(jnp.ones(3))
    assert info.value.filename == __file__
    assert info.value.source == "return NoTangent(), np.multiply(2 * x, y_bar)"
    assert "backend='callback'" in str(info.value)


def _scale_ndarray_only(x):
    return 3 * x


@rrule.register(_scale_ndarray_only)
def _scale_ndarray_only_rrule(x):
    # a NumPy-minded rule: anything but an ndarray gets a zero cotangent
    def scale_ndarray_only_pullback(y_bar):
        return NoTangent(), 3 * y_bar if isinstance(x, np.ndarray) else ZeroTangent()

    return _scale_ndarray_only(x), scale_ndarray_only_pullback


def test_auto_avoids_rules_that_answer_zero_for_jax_arrays():
    f = jax_function(_scale_ndarray_only)
    choice = f.backend_for(jnp.ones(3))
    assert choice.backend == "callback"
    assert "only zero tangents" in choice.reason
    np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(f(x)))(jnp.ones(3)), [3.0] * 3)


def test_numpy_rule_that_runs_on_jax_arrays_goes_native():
    # np.reshape dispatches to the array's own reshape, and its rule no longer treats a
    # JAX array as non-differentiable
    f = jax_function(np.reshape)
    assert f.backend_for(jnp.ones(6), (2, 3)).backend == "native"
    g = jax.grad(lambda x: jnp.sum(f(x, (2, 3)) * jnp.arange(6.0).reshape(2, 3)))
    np.testing.assert_allclose(g(jnp.ones(6)), np.arange(6.0))
    np.testing.assert_allclose(jax.jit(g)(jnp.ones(6)), np.arange(6.0))


def test_bad_backend_error():
    with pytest.raises(ValueError, match=msg(
            "jax_function(test_jax_native.cube, backend='gpu'): backend must be one of "
            "('auto', 'native', 'callback')")):
        jax_function(cube, backend="gpu")


# -- sharding ---------------------------------------------------------------------------

SHARDING_SCRIPT = '''
import sys
import jax, jax.numpy as jnp, numpy as np
from chainrules import array_namespace
from jax.sharding import NamedSharding, PartitionSpec
from chainrules import NoTangent, frule, rrule
from chainrules.interop.jax import jax_function

platform = sys.argv[1]
jax.config.update("jax_enable_x64", True)


def softplus(x):
    xp = array_namespace(x)
    return xp.log1p(xp.exp(x))


@frule.register(softplus)
def softplus_frule(dargs, x):
    xp = array_namespace(x)
    return softplus(x), dargs[1] / (1 + xp.exp(-x))


@rrule.register(softplus)
def softplus_rrule(x):
    xp = array_namespace(x)
    sigmoid = 1 / (1 + xp.exp(-x))

    def softplus_pullback(y_bar):
        return NoTangent(), y_bar * sigmoid

    return softplus(x), softplus_pullback


devices = jax.devices(platform)
n = 8 if platform == "cpu" else len(devices)
mesh = jax.make_mesh((n,), ("batch",), devices=devices[:n])
sharding = NamedSharding(mesh, PartitionSpec("batch"))
batch = np.random.default_rng(0).standard_normal((8 * n, 5))  # divisible by n
for mode in ("forward", "reverse"):
    f = jax_function(softplus, backend="native", mode=mode)
    g = jax.jit(jax.vmap(jax.grad(lambda x: jnp.sum(jnp.sin(f(x))))))
    x = jax.device_put(batch, sharding)
    out = g(x)
    ref = jax.jit(jax.vmap(jax.grad(lambda x: jnp.sum(jnp.sin(jax.nn.softplus(x))))))(
        jax.device_put(batch, devices[0]))
    np.testing.assert_allclose(np.asarray(out), np.asarray(ref), rtol=1e-12, atol=1e-12)
    assert out.sharding.is_equivalent_to(sharding, out.ndim), out.sharding
    text = g.lower(x).compile().as_text()
    assert "callback" not in text.lower(), mode
    print(mode, "ok", len(out.sharding.device_set))

# a sharded training step: parameters replicated, the batch split over the devices


def loss(w, x, y, act):
    return jnp.mean((act(x @ w) - y) ** 2)


def step(w, x, y, act):
    return w - 0.5 * jax.grad(loss)(w, x, y, act)


step = jax.jit(step, static_argnums=3)
rng = np.random.default_rng(1)
w0, targets = rng.standard_normal((5, 3)), rng.standard_normal((8 * n, 3))
replicated = NamedSharding(mesh, PartitionSpec())
w, x = jax.device_put(w0, replicated), jax.device_put(batch, sharding)
y = jax.device_put(targets, sharding)
w_ref = jax.device_put(w0, devices[0])
act = jax_function(softplus, backend="native")
for _ in range(3):
    w = step(w, x, y, act)
    w_ref = step(w_ref, jax.device_put(batch, devices[0]), jax.device_put(targets, devices[0]),
                 jax.nn.softplus)
np.testing.assert_allclose(np.asarray(w), np.asarray(w_ref), rtol=1e-12, atol=1e-12)
assert w.sharding.is_equivalent_to(replicated, w.ndim), w.sharding
assert "callback" not in step.lower(w, x, y, act).compile().as_text().lower()
print("step", "ok", len(w.sharding.device_set))
'''


def _run_sharding_script(platform: str, env_extra: dict) -> str:
    import os
    import subprocess
    import sys

    env = {**os.environ, **env_extra}
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(src), env.get("PYTHONPATH", "")])
    result = subprocess.run([sys.executable, "-c", SHARDING_SCRIPT, platform], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_sharded_vmap_grad_on_eight_cpu_devices():
    out = _run_sharding_script("cpu", {
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"})
    assert out.split() == ["forward", "ok", "8", "reverse", "ok", "8", "step", "ok", "8"]


def test_sharded_vmap_grad_and_training_step_on_gpus():
    """The same program over every GPU (one or more): skipped where JAX has none."""
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        pytest.skip("no GPU")
    # this process's JAX holds most of the GPU memory: the script's must not preallocate
    out = _run_sharding_script("gpu", {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
    n = str(len(gpus))
    assert out.split() == ["forward", "ok", n, "reverse", "ok", n, "step", "ok", n]


# -- zeros, integers, keywords ----------------------------------------------------------


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_integer_argument_gets_float0(mode):
    f = jax_function(scale_by, backend="native", mode=mode)
    x, n = jnp.array([1.0, 2.0]), jnp.array([3, 4])
    _, vjp = jax.vjp(f, x, n)
    x_bar, n_bar = vjp(jnp.ones(2))
    np.testing.assert_allclose(x_bar, [3.0, 4.0])
    assert n_bar.dtype == jax.dtypes.float0


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_keyword_array_is_not_differentiated(mode):
    f = jax_function(power, backend="native", mode=mode)
    x = jnp.array([1.0, 2.0])
    g = jax.jit(jax.grad(lambda x, p: f(x, p=p).sum()))(x, jnp.asarray(3.0))
    np.testing.assert_allclose(g, 3 * np.asarray(x) ** 2)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_keyword_derivative_error(mode):
    f = jax_function(power, backend="native", mode=mode)
    with pytest.raises(UnsupportedTransformError, match=msg(
            "jax_function(test_jax_native.power) does not support differentiating the "
            "keyword argument 'p': keyword arguments are never differentiated")):
        jax.grad(lambda p: f(jnp.array([1.0, 2.0]), p=p).sum())(3.0)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_traced_integer_argument_under_vmap(mode):
    # a batched integer closed over by the pullback (not a residual JAX would hoist)
    f = jax_function(scale_by, backend="native", mode=mode)
    xs, ns = jnp.ones((4, 3)), jnp.arange(12).reshape(4, 3)
    g = jax.jit(jax.vmap(jax.grad(lambda x, n: f(x, n).sum())))(xs, ns)
    np.testing.assert_allclose(g, np.arange(12.0).reshape(4, 3))
    h = jax.vmap(jax.hessian(lambda x, n: jnp.sum(f(x, n) ** 2)))(xs, ns)
    np.testing.assert_allclose(h, 2 * jax.vmap(jnp.diag)(ns.astype(float) ** 2))
