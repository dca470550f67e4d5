"""The core on every array library: array_namespace, ProjectTo, zeros, algebra, scalar_rule.

JAX tracers refuse ``np.asarray``, so every test run under ``jax.jit`` also proves that
the core never converts a foreign array to NumPy.
"""

import re

import numpy as np
import pytest

import chainrules as cr
from chainrules import (
    NoTangent,
    ProjectionError,
    ProjectTo,
    Thunk,
    ZeroTangent,
    array_namespace,
    frule,
    non_differentiable,
    rrule,
    scalar_rule,
    zero_tangent,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
torch = pytest.importorskip("torch")
xs = pytest.importorskip("array_api_strict")


@pytest.fixture(autouse=True)
def _x64():
    with jax.enable_x64(True):
        yield


def _make(kind, values, dtype="float64"):
    if kind == "jax":
        return jnp.asarray(np.asarray(values, dtype=dtype))
    if kind == "torch":
        return torch.asarray(np.asarray(values, dtype=dtype))
    return xs.asarray(np.asarray(values, dtype=dtype))


KINDS = ["jax", "torch", "strict"]


def _to_numpy(a):
    if isinstance(a, torch.Tensor):
        return a.detach().numpy()
    if type(a).__module__.startswith("array_api_strict"):
        return np.asarray(a._array)
    return np.asarray(a)


# --- array_namespace ---------------------------------------------------------------------


def test_array_namespace_numpy_and_numbers():
    assert array_namespace(np.ones(2)) is array_namespace(1.0) is array_namespace(np.float32(1))
    assert array_namespace(np.ones(2), 3, None, "text").exp is np.exp


def test_array_namespace_foreign_arrays():
    assert array_namespace(jnp.ones(2), 1.0) is jnp
    assert array_namespace(xs.ones(2)) is xs
    assert array_namespace(torch.ones(2)).__name__ == "array_api_compat.torch"


def test_array_namespace_of_traced_values():
    seen = []
    jax.jit(lambda x: seen.append(array_namespace(x)) or x)(jnp.ones(2))
    assert seen == [jnp]
    torch.func.grad(lambda x: seen.append(array_namespace(x)) or x.sum())(torch.ones(2))
    assert seen[-1].__name__ == "array_api_compat.torch"


def test_array_namespace_mixed_libraries_error():
    with pytest.raises(TypeError, match="Multiple namespaces"):
        array_namespace(jnp.ones(2), torch.ones(2))


def test_is_foreign_array():
    assert not cr.is_foreign_array(np.ones(2))
    assert not cr.is_foreign_array(np.float64(1.0))
    assert cr.is_foreign_array(jnp.ones(2))
    assert cr.is_foreign_array(torch.ones(2))
    assert cr.is_foreign_array(xs.ones(2))


# --- ProjectTo ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_project_foreign_sums_broadcast_dims_and_keeps_dtype(kind):
    x = _make(kind, np.ones((1, 3)), "float32")
    dx = _make(kind, np.arange(6.0).reshape(2, 3))
    out = ProjectTo(x)(dx)
    assert type(out) is type(x)
    assert out.dtype == x.dtype
    np.testing.assert_allclose(_to_numpy(out), [[3.0, 5.0, 7.0]])


@pytest.mark.parametrize("kind", KINDS)
def test_project_foreign_real_part_of_complex(kind):
    x = _make(kind, [1.0, 2.0])
    dx = _make(kind, [1 + 2j, 3 - 1j], "complex128")
    np.testing.assert_array_equal(_to_numpy(ProjectTo(x)(dx)), [1.0, 3.0])


@pytest.mark.parametrize("kind", KINDS)
def test_project_foreign_complex_keeps_complex(kind):
    x = _make(kind, [1 + 1j], "complex128")
    np.testing.assert_array_equal(_to_numpy(ProjectTo(x)(_make(kind, [2 + 3j], "complex128"))),
                                  [2 + 3j])


@pytest.mark.parametrize("kind", KINDS)
def test_project_foreign_numpy_cotangent(kind):
    x = _make(kind, np.ones(3))
    out = ProjectTo(x)(np.full((2, 3), 1.5))
    assert type(out) is type(x)
    np.testing.assert_array_equal(_to_numpy(out), [3.0, 3.0, 3.0])


@pytest.mark.parametrize("kind", KINDS)
def test_project_foreign_integer_array_is_no_tangent(kind):
    x = _make(kind, [1, 2], "int64")
    assert ProjectTo(x)(_make(kind, [1.0, 1.0])) is NoTangent()


@pytest.mark.parametrize("kind", KINDS)
def test_project_foreign_shape_mismatch_error(kind):
    x = _make(kind, np.ones(3))
    with pytest.raises(ProjectionError, match=re.escape("shape (4,) does not fit shape (3,)")):
        ProjectTo(x)(_make(kind, np.ones(4)))


def test_project_foreign_structural_tangent_error():
    with pytest.raises(ProjectionError, match="an array's tangent is an array"):
        ProjectTo(jnp.ones(2))(cr.Tangent[tuple](1.0, 2.0))


@pytest.mark.parametrize("kind", KINDS)
def test_project_foreign_zero_and_thunk(kind):
    x = _make(kind, np.ones(2))
    project_x = ProjectTo(x)
    assert project_x(ZeroTangent()) is ZeroTangent()
    thunk = project_x(Thunk(lambda: _make(kind, np.ones((3, 2)))))
    assert isinstance(thunk, Thunk)
    np.testing.assert_array_equal(_to_numpy(cr.unthunk(thunk)), [3.0, 3.0])


def test_project_under_jit_and_vmap():
    def f(x):
        return ProjectTo(x)(jnp.stack([x, x]) * (1 + 1j))

    np.testing.assert_array_equal(jax.jit(f)(jnp.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(jax.vmap(f)(jnp.ones((3, 2))), np.full((3, 2), 2.0))


def test_project_scalar_primal_foreign_cotangent_stays_traced():
    out = jax.jit(lambda t: ProjectTo(2.0)(t * (1 + 1j)))(jnp.ones(3))
    assert out.shape == () and float(out) == 3.0
    assert ProjectTo(1 + 1j)(jnp.ones(2, dtype=jnp.complex128)).dtype == jnp.complex128


def test_project_under_torch_func():
    def f(x):
        return ProjectTo(x)(x.sum() * torch.stack([x, x])).sum()

    g = torch.func.grad(f)(torch.ones(2, dtype=torch.float64))
    np.testing.assert_allclose(g.numpy(), [8.0, 8.0])


# --- zero_tangent and algebra ------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_zero_tangent_foreign(kind):
    x = _make(kind, np.ones((2, 2)), "float32")
    z = zero_tangent(x)
    assert type(z) is type(x) and z.dtype == x.dtype and tuple(z.shape) == (2, 2)
    assert zero_tangent(_make(kind, [1, 2], "int32")) is NoTangent()


@pytest.mark.parametrize("kind", KINDS)
def test_algebra_foreign(kind):
    x = _make(kind, [1.0, 2.0])
    assert ZeroTangent() + x is x
    assert ZeroTangent() * x == ZeroTangent()
    np.testing.assert_array_equal(_to_numpy(Thunk(lambda: x) + x), [2.0, 4.0])
    np.testing.assert_array_equal(_to_numpy(cr.iadd(ZeroTangent(), x)), [1.0, 2.0])
    np.testing.assert_array_equal(_to_numpy(cr.iadd(x, x)), [2.0, 4.0])
    z = _make(kind, [1 + 2j], "complex128")
    np.testing.assert_array_equal(_to_numpy(Thunk(lambda: z).conj()), [1 - 2j])
    t = cr.Tangent[tuple](x, 1.0) + cr.Tangent[tuple](x, 2.0)
    np.testing.assert_array_equal(_to_numpy(t[0]), [2.0, 4.0])


def test_iadd_foreign_does_not_mutate():
    acc = torch.zeros(2, dtype=torch.float64)
    out = cr.iadd(acc, torch.ones(2, dtype=torch.float64))
    assert acc.sum() == 0 and out.sum() == 2


# --- scalar_rule and non_differentiable -----------------------------------------------


def _softsign(x):
    return x / (1 + abs(x))


scalar_rule(_softsign, lambda x, *, xp: 1 / (1 + xp.abs(x)) ** 2)


def _hypot2(a, b):
    return a * a + b * b


scalar_rule(_hypot2, lambda a, b, *, y, xp: (2 * a + 0 * xp.sqrt(y), 2 * b))


@pytest.mark.parametrize("kind", KINDS)
def test_scalar_rule_with_xp_on_foreign(kind):
    x = _make(kind, [0.5, -2.0])
    y, y_dot = frule((NoTangent(), _make(kind, [1.0, 1.0])), _softsign, x)
    np.testing.assert_allclose(_to_numpy(y_dot), 1 / (1 + np.abs([0.5, -2.0])) ** 2)
    _, pullback = rrule(_hypot2, x, _make(kind, [[1.0], [2.0]]))
    _, a_bar, b_bar = pullback(_make(kind, np.ones((2, 2))))
    np.testing.assert_allclose(_to_numpy(a_bar), [2.0, -8.0])
    np.testing.assert_allclose(_to_numpy(b_bar), [[4.0], [8.0]])


def test_scalar_rule_with_xp_matches_finite_differences_on_numpy():
    cr.testing.test_frule(_softsign, np.array([0.5, -2.0]))
    cr.testing.test_rrule(_hypot2, np.array([0.5, -2.0]), np.array([[1.0], [2.0]]))


def test_scalar_rule_under_jit_vmap_and_torch_func():
    def push(x):
        return frule((NoTangent(), jnp.ones_like(x)), _softsign, x)[1]

    def pull(x):
        return rrule(_softsign, x)[1](jnp.ones_like(x))[1]

    x = jnp.array([0.5, -2.0])
    expected = 1 / (1 + np.abs([0.5, -2.0])) ** 2
    np.testing.assert_allclose(jax.jit(push)(x), expected)
    np.testing.assert_allclose(jax.vmap(pull)(jnp.stack([x, x])), [expected, expected])
    g = torch.func.vmap(lambda t: rrule(_softsign, t)[1](torch.ones_like(t))[1])(
        torch.tensor([[0.5, -2.0]], dtype=torch.float64))
    np.testing.assert_allclose(g.numpy(), [expected])


def test_non_differentiable_on_foreign():
    def label(x):
        return x > 0

    non_differentiable(label)
    y, pullback = rrule(label, jnp.ones(2))
    assert pullback(jnp.ones(2)) == (NoTangent(), NoTangent())
    assert frule((NoTangent(), jnp.ones(2)), label, jnp.ones(2))[1] is NoTangent()


def test_classes_are_not_arrays():
    # np.float64 (the class) carries __array_namespace__ as an unbound method
    assert not cr.is_foreign_array(np.float64)
    assert not cr.is_foreign_array(jnp.ndarray)
    assert array_namespace(np.float64, np.ones(2)) is array_namespace(np.ones(2))


def test_namespace_counterpart_keeps_positional_and_keyword_arguments():
    da = pytest.importorskip("dask.array")
    from chainrules.core import namespace_counterpart

    x = da.ones((2, 3), chunks=1)
    g, args, kwargs = namespace_counterpart(np.sum, (x, 1), {"keepdims": True})
    assert g is cr.array_namespace(x).sum and len(args) == 2 and args[0] is x
    assert args[1] == 1 and kwargs == {"keepdims": True}
    y = x.T
    g, args, kwargs = namespace_counterpart(np.matmul, (x, y), {})
    assert g is cr.array_namespace(x).matmul and args[0] is x and args[1] is y
    assert kwargs == {}
    assert namespace_counterpart(np.sum, (np.ones(2),), {}) is None  # NumPy keeps it
    assert namespace_counterpart(np.unwrap, (x,), {}) is None  # no dask counterpart


def test_is_foreign_type_and_is_lazy_array_by_class():
    da = pytest.importorskip("dask.array")
    from chainrules.core import is_foreign_type, is_lazy_array

    assert is_foreign_type(da.Array) and is_lazy_array(da.ones(2))
    assert not is_foreign_type(np.ndarray) and not is_lazy_array(np.ones(2))
