"""The array API rules on array_api_strict (catalog rows), register_namespace, and the
testers on foreign arrays."""

import pytest

from chainrules.testing.cases.array_api import CASES
from chainrules.testing.pytest_plugin import catalog_params, check_case

xs = pytest.importorskip("array_api_strict")

@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("array_api"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


# ------------------------------------------------------------------ what tables cannot say

import re  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import chainrules as cr  # noqa: E402
from chainrules import NoTangent, ZeroTangent, frule, rrule, scalar_rule  # noqa: E402
from chainrules.rules import register_namespace  # noqa: E402
from chainrules.rules.array_api.elementwise import PARTIALS  # noqa: E402
from chainrules.testing import rand_tangent, test_frule, test_rrule  # noqa: E402
from chainrules.testing._foreign import to_numpy  # noqa: E402

CATALOG_FUNCTIONS = {c.f for c in CASES}


def test_catalog_covers_at_least_120_functions():
    # the acceptance bar of the array API rules: distinct functions passing the catalog
    assert len(CATALOG_FUNCTIONS) >= 120


def test_register_namespace_is_idempotent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert register_namespace(xs) == []


def test_register_namespace_numpy_is_a_no_op():
    assert register_namespace(np) == []


def test_register_namespace_skips_missing_names_and_own_rules():
    import types

    def my_sin(x):
        return xs.sin(x)

    def my_sin_rrule(x):
        return my_sin(x), lambda y_bar: (NoTangent(), 42.0)

    space = types.SimpleNamespace(sin=my_sin, cos=lambda x: xs.cos(x))
    with cr.scoped_rules():
        rrule.register(my_sin)(my_sin_rrule)
        names = register_namespace(space)
        assert names == ["cos"]
        assert rrule(my_sin, xs.asarray(1.0))[1](1.0)[1] == 42.0


def test_numpy_ufuncs_share_the_generic_partials():
    from chainrules.core import scalar_partials

    assert scalar_partials(np.sin).fn is not None
    assert "xp" in __import__("inspect").signature(PARTIALS["sin"]).parameters
    y, pullback = rrule(np.sin, np.array([0.0, 1.0]))
    np.testing.assert_allclose(pullback(np.ones(2))[1], np.cos([0.0, 1.0]))


def test_generic_elementwise_rule_zero_cotangent():
    x = xs.asarray([1.0, 2.0])
    for f in (xs.sin, xs.abs, xs.clip, xs.maximum):
        args = (x, x) if f is xs.maximum else (x,)
        _, pullback = rrule(f, *args)
        bars = pullback(ZeroTangent())
        assert all(isinstance(b, (ZeroTangent, NoTangent)) for b in bars)


def test_generic_rules_accept_thunked_and_zero_tangents_in_frule():
    x = xs.asarray([0.5, 1.5])
    assert frule((NoTangent(), ZeroTangent()), xs.abs, x)[1] == ZeroTangent()
    assert frule((NoTangent(), ZeroTangent()), xs.sum, x)[1] == ZeroTangent()


def test_matrix_norm_ord2_at_a_tie_splits_the_cotangent():
    # the identity's singular values all tie: JAX and PyTorch split the cotangent equally
    a = xs.asarray(np.eye(3))
    y, pullback = rrule(xs.linalg.matrix_norm, a, ord=2)
    np.testing.assert_allclose(np.asarray(pullback(xs.asarray(1.0))[1]), np.eye(3) / 3)


def test_svd_full_matrices_non_square_pullback_ignores_the_extra_columns():
    # PyTorch's convention: the extra columns of U are not a function of A
    a_np = np.arange(6.0).reshape(3, 2) + np.eye(3, 2)
    a = xs.asarray(a_np)
    _, pullback = rrule(xs.linalg.svd, a)
    t = torch.tensor(a_np, requires_grad=True)
    u, s, _ = torch.linalg.svd(t)
    # a loss invariant under the gauge of the kept columns: the columns' sums squared
    (u.sum(0)[:2] ** 2).sum().backward()
    loss_bar = 2 * np.asarray(torch.linalg.svd(torch.tensor(a_np))[0].sum(0))
    u_bar = np.tile(loss_bar * [1, 1, 0], (3, 1)) + np.tile([0, 0, 7.0], (3, 1))
    y_bar = cr.Tangent[type(xs.linalg.svd(a))](U=xs.asarray(u_bar))
    np.testing.assert_allclose(np.asarray(pullback(y_bar)[1]), t.grad.numpy(), atol=1e-12)


# ----------------------------------------------------------- testers on foreign arrays

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
torch = pytest.importorskip("torch")
tx = pytest.importorskip("array_api_compat.torch")


@pytest.fixture(autouse=True)
def _x64():
    with jax.enable_x64(True):
        yield


def _softplus(x):
    xp = cr.array_namespace(x)
    return xp.log1p(xp.exp(x))


scalar_rule(_softplus, lambda x, *, xp: 1 / (1 + xp.exp(-x)))


def _np_softplus_rrule_leak(x):
    # reads the values of x through NumPy: does not trace
    y = _leaky(x)
    x_np = np.asarray(x)

    def leaky_pullback(y_bar):
        y_bar = cr.unthunk(y_bar)
        xp = cr.array_namespace(y_bar)
        return NoTangent(), y_bar * xp.asarray(1 / (1 + np.exp(-x_np)))

    return y, leaky_pullback


def _leaky(x):
    xp = cr.array_namespace(x)
    return xp.log1p(xp.exp(x))


rrule.register(_leaky)(_np_softplus_rrule_leak)


@pytest.mark.parametrize("make", [xs.asarray, jnp.asarray, torch.asarray],
                         ids=["strict", "jax", "torch"])
def test_testers_on_foreign_arrays(make):
    x = make(np.array([0.3, -1.2, 2.0]))
    report = test_rrule(_softplus, x)
    assert report.mode == "rrule"
    test_frule(_softplus, x)
    t = rand_tangent(x, 0)
    assert type(t) is type(x)
    np.testing.assert_allclose(to_numpy(t), rand_tangent(np.array([0.3, -1.2, 2.0]), 0))


def test_tester_checks_the_rule_traces_under_jit():
    report = test_rrule(_softplus, jnp.asarray([0.3, 1.0]))
    assert "traces under jax.jit" in report.checks


def test_tester_untraceable_rule_jax_error():
    with pytest.raises(AssertionError, match=r"does not run on traced arrays under jax\.jit"
                       r"(.|\n)*stopped at .*test_array_api\.py:\d+: x_np = np\.asarray\(x\)"):
        test_rrule(_leaky, jnp.asarray([0.3, 1.0]))


def test_tester_untraceable_rule_torch_error():
    with pytest.raises(AssertionError, match=re.escape("under torch.func.vjp") +
                       r"(.|\n)*stopped at .*x_np = np\.asarray\(x\)"):
        test_rrule(_leaky, torch.asarray(np.array([0.3, 1.0])))


def test_tester_finds_a_wrong_rule_on_foreign_arrays():
    def twice(x):
        return 2 * x

    def twice_rrule(x):
        return twice(x), lambda y_bar: (NoTangent(), 3 * y_bar)

    with cr.scoped_rules():
        rrule.register(twice)(twice_rrule)
        with pytest.raises(AssertionError, match="twice"):
            test_rrule(twice, xs.asarray([1.0, 2.0]))


def test_generic_rules_on_jax_and_torch():
    register_namespace(jnp)
    register_namespace(tx)
    for make, xp in ((jnp.asarray, jnp), (torch.asarray, tx)):
        x = make(np.array([[0.3, 1.2], [-0.5, 2.0]]))
        for f in (xp.sin, xp.exp, xp.tanh):
            test_rrule(f, x)
        test_rrule(xp.sum, x, fkwargs={"axis": 0})
        test_rrule(xp.matmul, x, make(np.array([[1.0], [2.0]])))


# ------------------------------------------------------- chainrules.ad on array-API code


def test_ad_grad_of_array_api_code():
    import chainrules.ad as ad

    x_np = np.array([0.1, 0.5, 1.0])
    x = xs.asarray(x_np)
    g = ad.grad(lambda x: xs.sum(xs.sin(x) * x + xs.exp(x) / (1.0 + x)))(x)
    assert type(g) is type(x)
    want = (np.cos(x_np) * x_np + np.sin(x_np) + np.exp(x_np) / (1 + x_np)
            - np.exp(x_np) / (1 + x_np) ** 2)
    np.testing.assert_allclose(to_numpy(g), want, rtol=1e-12)


def test_ad_vjp_and_jvp_of_array_api_code():
    import chainrules.ad as ad

    x = xs.asarray([0.1, 0.5, 1.0])
    y, pullback = ad.vjp(lambda x: xs.matmul(xs.reshape(x, (3, 1)), xs.reshape(x, (1, 3))), x)
    (x_bar,) = pullback(xs.ones((3, 3)))
    np.testing.assert_allclose(to_numpy(x_bar), 2 * 1.6 * np.ones(3))
    _, y_dot = ad.jvp(lambda x: xs.sum(x * x), (x,), (xs.ones(3),))
    assert float(y_dot) == pytest.approx(3.2)


def test_ad_hessian_of_array_api_input():
    # (issue 27: jacobian and hessian build their basis vectors in the input's library)
    import chainrules.ad as ad

    def f(x):
        return xs.sum(xs.sin(x))

    h = ad.hessian(f)(xs.asarray([0.1, 0.2]))
    assert type(h) is type(xs.asarray(0.0))
    np.testing.assert_allclose(to_numpy(h), np.diag(-np.sin([0.1, 0.2])), rtol=1e-12)


def test_ad_array_api_code_without_source_error():
    import chainrules.ad as ad

    namespace = {"xs": xs}
    exec(compile("f = lambda x: xs.sum(xs.sin(x))", "<no source>", "exec"), namespace)
    with pytest.raises(ad.NoRuleError, match=re.escape(
            "its source could not be read (a function defined in the REPL")):
        ad.grad(namespace["f"])(xs.asarray([0.1, 0.2]))


# ------------------------------------------- the catalog's rules on JAX, under jax.jit

def _strict_to_jax(v):
    from chainrules.testing._pairs import PrimalAndTangent

    if isinstance(v, PrimalAndTangent):
        return PrimalAndTangent(_strict_to_jax(v.x), _strict_to_jax(v.x_dot))
    if type(v).__module__.startswith("array_api_strict") and type(v).__name__ == "DType":
        return jnp.dtype(str(v).rpartition(".")[2])
    if type(v).__module__.startswith("array_api_strict"):
        return jnp.asarray(to_numpy(v))
    if isinstance(v, list):
        return [_strict_to_jax(a) for a in v]
    if isinstance(v, dict):
        return {k: _strict_to_jax(a) for k, a in v.items()}
    return v


def _jax_function(case):
    target = jnp
    for part in case.display_name.split(" ")[0].removeprefix("array_api_strict.").split("."):
        target = getattr(target, part)
    return target


# functions whose jax.numpy version differs from the standard's (not a rule defect)
_JAX_DIFFERS = {
    "from_dlpack": "jnp.from_dlpack of a JAX array is not traceable",
    # JAX symmetrizes the input, array_api_strict reads its lower triangle: the rules
    # follow the latter; both agree on symmetric tangents
    "linalg.cholesky": "jnp.linalg.cholesky symmetrizes its input",
    "linalg.eigh": "jnp.linalg.eigh symmetrizes its input",
    "linalg.eigvalsh": "jnp.linalg.eigvalsh symmetrizes its input",
}
def _one_case_per_function(differs):
    seen, out = set(), []
    for c in CASES:
        name = c.display_name.split(" ")[0].removeprefix("array_api_strict.")
        if "float64" in c.dtypes and c.rrule and name not in differs and c.f not in seen:
            seen.add(c.f)
            out.append(c)
    return out


JAX_CASES = _one_case_per_function(_JAX_DIFFERS)


@pytest.mark.parametrize("case", JAX_CASES, ids=[c.display_name for c in JAX_CASES])
def test_catalog_rule_on_jax_traces_under_jit(case):
    register_namespace(jnp)
    args = [_strict_to_jax(a) for a in case.args(np.random.default_rng(0), np.dtype("float64"))]
    fkwargs = _strict_to_jax(dict(case.kwargs))
    test_rrule(_jax_function(case), *args, fkwargs=fkwargs)
    if case.frule:
        test_frule(_jax_function(case), *args, fkwargs=fkwargs)


def _strict_to_torch(v):
    if isinstance(v, list):
        return [_strict_to_torch(a) for a in v]
    if isinstance(v, dict):
        return {k: _strict_to_torch(a) for k, a in v.items()}
    from chainrules.testing._pairs import PrimalAndTangent

    if isinstance(v, PrimalAndTangent):
        return PrimalAndTangent(_strict_to_torch(v.x), _strict_to_torch(v.x_dot))
    if type(v).__module__.startswith("array_api_strict") and type(v).__name__ == "DType":
        return getattr(torch, str(v).rpartition(".")[2])
    if type(v).__module__.startswith("array_api_strict"):
        return torch.asarray(to_numpy(v))
    return v


def _torch_function(case):
    target = tx
    for part in case.display_name.split(" ")[0].removeprefix("array_api_strict.").split("."):
        target = getattr(target, part)
    return target


_TORCH_DIFFERS = {
    "from_dlpack": "a tensor's own dlpack round trip",
    "asarray": "torch.asarray of a tensor under torch.func warns about requires_grad",
}
TORCH_CASES = _one_case_per_function(_TORCH_DIFFERS)


@pytest.mark.parametrize("case", TORCH_CASES, ids=[c.display_name for c in TORCH_CASES])
def test_catalog_rule_on_torch_runs_under_torch_func(case):
    register_namespace(tx)
    args = [_strict_to_torch(a)
            for a in case.args(np.random.default_rng(0), np.dtype("float64"))]
    fkwargs = _strict_to_torch(dict(case.kwargs))
    test_rrule(_torch_function(case), *args, fkwargs=fkwargs)
    if case.frule:
        test_frule(_torch_function(case), *args, fkwargs=fkwargs)


ZERO_CASES = _one_case_per_function({})


@pytest.mark.parametrize("case", ZERO_CASES, ids=[c.display_name for c in ZERO_CASES])
def test_catalog_rule_zero_output_tangent(case):
    # array_api_strict arrays raise on `array * ZeroTangent()`: every pullback must see it
    args = case.args(np.random.default_rng(0), np.dtype("float64"))
    test_rrule(case.f, *args, fkwargs=dict(case.kwargs), check_zero_output_tangent=True)
