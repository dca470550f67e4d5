"""The AD's gradients against finite differences (chainrules.testing, with
``rrule_f=rrule_via_ad`` / ``frule_f=frule_via_ad``) and against JAX and PyTorch."""

from __future__ import annotations

import cmath
import collections
import dataclasses
import math
import types

import numpy as np
import pytest

from chainrules import NoTangent, Tangent, frule_via_ad, rrule_via_ad
from chainrules.ad import ADConfig, grad
from chainrules.testing import test_frule, test_rrule

CONFIG = ADConfig()


def foo(x):
    return math.asin(0.2 + math.sin(x))


def mse(y, y_hat):
    n = len(y)
    s = 0.0
    for i in range(n):
        s += (y[i] - y_hat[i]) ** 2.0
    return s / n


def mse_vectorized(y, y_hat):
    return np.mean((y - y_hat) ** 2)


def sum3(a):
    return a[0] + a[1] + a[2]


def chain(x):
    for _ in range(5):
        x = np.sin(x) * 1.01
        x = np.tanh(x) + 0.5
    return np.sum(x)


def mlp_loss(w1, b1, w2, b2, x, t):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np.sum((out - t) ** 2) / len(x)


def closure_program(x):
    def inner(k):
        return math.cos(x * k)

    return sum(inner(k) for k in range(1, 4))


def method_program(x):
    class Poly:
        def __init__(self, c):
            self.c = c

        def __call__(self, v):
            return sum(ci * v ** i for i, ci in enumerate(self.c))

    return Poly([1.0, -2.0, 0.5])(x) * math.exp(x)


def try_program(x):
    try:
        return math.log(x)
    except ValueError:
        return 0.0


def cmath_program(z):
    return cmath.exp(z) * cmath.sin(z) + z * z


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float


def structured_program(p, xs):
    return np.sum(np.tanh(p.w * xs) + p.b) + xs[0] * p.b


def mappings_and_records_program(od, dd, ns, a):
    # an OrderedDict, a defaultdict, a SimpleNamespace and an attrs instance as inputs
    return np.sum(od["w"] * dd["v"]) + ns.s * np.sum(np.sin(a.w)) + a.b * od["c"]


def _attrs_record():
    attrs = pytest.importorskip("attrs")

    @attrs.define
    class Layer:
        w: np.ndarray
        b: float

    return Layer(np.array([0.1, 0.2, 0.3]), 2.0)


def numpy_python_function_program(x):
    # np.polyfit and np.block have no rules: the AD traces NumPy's Python
    # implementations (np.block calls the C concatenate without its public wrapper)
    blocks = np.block([[x[:2], x[2:4]], [x[1:3], x[3:]]])
    return np.sum(np.polyfit(np.arange(5.0), x, 2) ** 2) + np.sum(blocks ** 3)


def higher_order_program(x):
    # built-in higher-order functions in both modes: map with a builtin that has a rule,
    # np.piecewise and np.apply_along_axis with functions that capture nothing traced
    pieces = np.piecewise(x, [x < 0.5, x >= 0.5], [lambda t: t ** 2, lambda t: 1 - t])
    rows = np.apply_along_axis(lambda r: r ** 3, 0, x)
    each = np.vectorize(lambda t: math.exp(t) * t)(x)
    return sum(map(math.sin, x)) + np.sum(pieces) + np.sum(rows) + np.sum(each)


def logaddexp_reduce_program(x):
    # ufunc methods without rules of their own reach equivalent functions that have
    return np.logaddexp.reduce(x) + np.sum(np.logaddexp2.reduce(np.outer(x, x), axis=1))


def array_constructor_program(x):
    # np.array / np.asarray of traced values with ndmin=, dtype=, copy= (NumPy's own
    # helpers such as np.atleast_2d call them so)
    a = np.array(x, ndmin=2, copy=True) @ np.ones((x.size, 1))
    b = np.asarray(x, dtype=np.float64)
    return np.sum(a ** 2) + np.sum(np.atleast_2d(b) ** 3)


def keyword_program(x, lo, w):
    # traced values passed by keyword reach the rules in their positional places
    clipped = np.clip(x, a_min=lo, a_max=None)
    return np.average(clipped, weights=w) + np.sum(np.linspace(0.0, stop=lo, num=3))


_NS: dict = {"np": np}
exec("def sourceless_keyword_program(x, lo, w):\n"
     "    return np.average(np.clip(x, a_min=lo, a_max=None), weights=w)\n", _NS)
# defined by exec, so its source cannot be read: NumPy's __array_function__ dispatch sees
# the traced keyword arguments instead of the AD's rewritten calls
sourceless_keyword_program = _NS["sourceless_keyword_program"]


RNG = np.random.default_rng(42)
X30 = RNG.random(30)
Y30 = RNG.random(30)

CASES = [
    ("foo", foo, (3.0,)),
    ("loop_mse", mse, (X30, Y30)),
    ("vectorized_mse", mse_vectorized, (X30, Y30)),
    ("sum3", sum3, (RNG.random(30),)),
    ("chain", chain, (RNG.random(10),)),
    ("mlp", mlp_loss, (RNG.standard_normal((8, 5)) * 0.3, RNG.standard_normal(5) * 0.1,
                       RNG.standard_normal((5, 3)) * 0.3, RNG.standard_normal(3) * 0.1,
                       RNG.standard_normal((4, 8)), RNG.standard_normal((4, 3)))),
    ("closure", closure_program, (0.7,)),
    ("method", method_program, (0.4,)),
    ("try_except", try_program, (2.5,)),
    ("cmath", cmath_program, (0.3 + 0.2j,)),
    ("structured", structured_program, (Params(RNG.random(3), 0.5), RNG.random(3))),
    ("keyword_args", keyword_program, (RNG.random(5), 0.4, RNG.random(5) + 0.5)),
    ("numpy_python_function", numpy_python_function_program, (RNG.random(5),)),
    ("array_constructors", array_constructor_program, (RNG.random(4),)),
    ("logaddexp_reduce", logaddexp_reduce_program, (RNG.random(4),)),
    ("higher_order", higher_order_program, (np.array([0.2, 0.45, 0.7, 0.9]),)),
    ("sourceless_keyword_args", sourceless_keyword_program,
     (RNG.random(5), 0.4, RNG.random(5) + 0.5)),
]


@pytest.mark.parametrize(("name", "f", "args"), CASES, ids=[c[0] for c in CASES])
def test_rrule_via_ad_against_finite_differences(name, f, args):
    test_rrule(f, *args, rrule_f=rrule_via_ad, config=CONFIG)


def _mapping_and_record_args():
    return (collections.OrderedDict(w=np.array([1.0, 2.0]), c=0.5),
            collections.defaultdict(float, v=np.array([0.3, 0.4])),
            types.SimpleNamespace(s=1.5, label="not differentiated"),
            _attrs_record())


def test_mappings_and_records_against_finite_differences():
    args = _mapping_and_record_args()
    test_rrule(mappings_and_records_program, *args, rrule_f=rrule_via_ad, config=CONFIG)
    test_frule(mappings_and_records_program, *args, frule_f=frule_via_ad, config=CONFIG)


def test_gradients_of_mappings_and_records_keep_their_types():
    args = _mapping_and_record_args()
    g_od, g_dd, g_ns, g_a = grad(mappings_and_records_program, argnums=(0, 1, 2, 3))(*args)
    assert type(g_od) is collections.OrderedDict and list(g_od) == ["w", "c"]
    assert type(g_dd) is collections.defaultdict and g_dd.default_factory is float
    assert isinstance(g_ns, Tangent) and g_ns.label == NoTangent()
    assert isinstance(g_a, Tangent)
    stepped = args[2] + g_ns  # gradient descent on a SimpleNamespace
    assert stepped.label == "not differentiated" and stepped.s != args[2].s


@pytest.mark.parametrize(("name", "f", "args"),
                         [c for c in CASES if c[0] not in ("mlp", "structured")],
                         ids=[c[0] for c in CASES if c[0] not in ("mlp", "structured")])
def test_frule_via_ad_against_finite_differences(name, f, args):
    test_frule(f, *args, frule_f=frule_via_ad, config=CONFIG)


def test_second_derivative_against_finite_differences():
    g = grad(foo)
    eps = 1e-5
    fd = (g(3.0 + eps) - g(3.0 - eps)) / (2 * eps)
    assert grad(g)(3.0) == pytest.approx(fd, rel=1e-6)


# -- JAX and PyTorch as oracles ------------------------------------------------------


def test_against_jax_mlp_and_chain(jax):
    jnp = jax.numpy

    def jchain(x):
        for _ in range(5):
            x = jnp.sin(x) * 1.01
            x = jnp.tanh(x) + 0.5
        return jnp.sum(x)

    x = RNG.random(10)
    np.testing.assert_allclose(grad(chain)(x), jax.grad(jchain)(x), rtol=1e-12)
    args = CASES[5][2]

    def jmlp(w1, b1, w2, b2, x, t):
        h = jnp.tanh(x @ w1 + b1)
        return jnp.sum((h @ w2 + b2 - t) ** 2) / len(x)

    ours = grad(mlp_loss, argnums=(0, 1, 2, 3))(*args)
    theirs = jax.grad(jmlp, argnums=(0, 1, 2, 3))(*args)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_against_jax_complex_convention(jax):
    z = 0.3 + 0.2j
    ours = grad(lambda z: abs(cmath_program(z)) ** 2)(z)
    theirs = jax.grad(lambda z: jax.numpy.abs(jax.numpy.exp(z) * jax.numpy.sin(z) + z * z)
                      ** 2)(z)
    # JAX returns the conjugate of the (dL/dRe + i dL/dIm) convention
    assert ours == pytest.approx(np.conj(theirs), rel=1e-10)


def test_against_torch_loop_mse_and_hessian():
    torch = pytest.importorskip("torch")
    y = torch.tensor(X30, requires_grad=True)
    y_hat = torch.tensor(Y30, requires_grad=True)
    mse(y, y_hat).backward()
    ours = grad(mse, argnums=(0, 1))(X30, Y30)
    np.testing.assert_allclose(ours[0], y.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours[1], y_hat.grad.numpy(), rtol=1e-12)

    from chainrules.ad import hessian

    def f(x):
        return np.sum(np.sin(x) * x ** 2)

    x = RNG.random(4)
    h_torch = torch.autograd.functional.hessian(
        lambda t: torch.sum(torch.sin(t) * t ** 2), torch.tensor(x))
    np.testing.assert_allclose(hessian(f)(x), h_torch.numpy(), rtol=1e-10)


@dataclasses.dataclass
class Affine:
    a: float
    b: np.ndarray

    def __call__(self, x):
        return np.sum(np.sin(self.b * x)) * self.a


def test_rrule_via_ad_callable_object_fields_get_a_tangent():
    from chainrules import Tangent
    from chainrules.testing import PrimalAndTangent

    f = Affine(1.5, np.array([0.2, 0.7]))
    test_rrule(PrimalAndTangent(f, Tangent[Affine](a=0.3, b=np.array([0.1, -0.2]))),
               np.array([0.4, 0.9]), rrule_f=rrule_via_ad, config=CONFIG)
    test_frule(PrimalAndTangent(f, Tangent[Affine](a=0.3, b=np.array([0.1, -0.2]))),
               np.array([0.4, 0.9]), frule_f=frule_via_ad, config=CONFIG)
