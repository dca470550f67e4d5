"""Rules for scipy.stats: the catalog rows (every distribution and method), the
not-implemented shape derivatives, the call paths (module-level, bound method, frozen
under the AD) and the conventions for constrained inputs."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

st = pytest.importorskip("scipy.stats")

import chainrules  # noqa: E402
from chainrules import (  # noqa: E402
    NoTangent,
    NotImplementedTangent,
    ZeroTangent,
    frule,
    rrule,
    rrule_via_ad,
    unthunk,
)
from chainrules.ad import ADConfig, grad  # noqa: E402
from chainrules.testing import test_rrule, with_tangent  # noqa: E402
from chainrules.testing.cases.scipy_stats import CASES  # noqa: E402
from chainrules.testing.pytest_plugin import catalog_params, check_case  # noqa: E402


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("scipy_stats"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


SRC = os.path.dirname(os.path.dirname(chainrules.__file__))
CONTINUOUS_METHODS = ("logpdf", "pdf", "logcdf", "cdf", "logsf", "sf", "ppf", "isf")
DISCRETE_METHODS = ("logpmf", "pmf", "logcdf", "cdf", "logsf", "sf")
REQUIRED = [
    *(f"{d}.{m}" for d in ("norm", "gamma", "beta", "t", "expon", "laplace", "logistic",
                           "cauchy", "chi2", "uniform", "lognorm", "truncnorm", "gumbel_r",
                           "gumbel_l", "pareto", "gennorm", "vonmises")
      for m in CONTINUOUS_METHODS),
    *(f"{d}.{m}" for d in ("poisson", "binom", "nbinom", "geom", "bernoulli", "betabinom")
      for m in DISCRETE_METHODS),
    "multivariate_normal.logpdf", "multivariate_normal.pdf", "dirichlet.logpdf",
    "dirichlet.pdf",
]
CONFIG = ADConfig()


@pytest.mark.parametrize("name", REQUIRED)
def test_every_distribution_method_has_rules_and_a_catalog_row(name):
    dist, method = name.split(".")
    f = getattr(getattr(st, dist), method)
    assert rrule.has_rules(f.__func__) and frule.has_rules(f.__func__)
    assert rrule.lookup(f.__func__, (type(f.__self__), object, object)) is not None
    rows = [c.display_name for c in CASES]
    assert any(r == f"scipy.stats.{name}" or r.startswith(f"scipy.stats.{name}(")
               for r in rows)


def test_shape_derivative_without_closed_form_is_not_implemented_for_that_argument():
    x = np.array([0.5, 0.7])
    _, pullback = rrule(st.beta.cdf, x, 2.5, 1.5, 0.1, 1.2)
    _, x_bar, a_bar, b_bar, loc_bar, scale_bar = (unthunk(b) for b in pullback(np.ones(2)))
    assert isinstance(a_bar, NotImplementedTangent) and isinstance(b_bar, NotImplementedTangent)
    assert "betainc" in a_bar.info
    assert x_bar.shape == (2,) and np.all(np.isfinite(x_bar))
    assert np.isfinite(loc_bar) and np.isfinite(scale_bar)
    _, y_dot = frule((NoTangent(), ZeroTangent(), 1.0, 0.0, 0.0, 0.0), st.beta.cdf, x, 2.5,
                     1.5, 0.1, 1.2)
    assert isinstance(y_dot, NotImplementedTangent)
    _, y_dot = frule((NoTangent(), np.ones(2), ZeroTangent(), ZeroTangent(), 0.0, 0.0),
                     st.beta.cdf, x, 2.5, 1.5, 0.1, 1.2)
    np.testing.assert_allclose(y_dot, st.beta.pdf(x, 2.5, 1.5, 0.1, 1.2))


def test_integer_shape_without_closed_form_gets_no_tangent():
    _, pullback = rrule(st.t.sf, np.array([0.5, 1.5]), np.array([3, 5]))
    assert pullback(np.ones(2))[2] is NoTangent()
    _, pullback = rrule(st.t.ppf, 0.3, 4)
    assert pullback(1.0)[2] is NoTangent()


def test_keyword_parameters_are_not_differentiated():
    y, pullback = rrule(st.norm.logpdf, np.array([0.5, 1.0]), loc=0.2, scale=2.0)
    out = pullback(np.ones(2))
    assert len(out) == 2 and out[0] is NoTangent()
    np.testing.assert_allclose(unthunk(out[1]), -(np.array([0.5, 1.0]) - 0.2) / 4)


def test_discrete_k_and_loc_get_no_tangent():
    _, pullback = rrule(st.poisson.logpmf, np.array([1, 2]), np.array([1.5, 2.0]), 1)
    _, k_bar, mu_bar, loc_bar = pullback(np.ones(2))
    assert k_bar is NoTangent() and loc_bar is NoTangent()
    np.testing.assert_allclose(unthunk(mu_bar), np.array([0, 1]) / np.array([1.5, 2.0]) - 1)
    _, pullback = rrule(st.binom.pmf, 3, 8, 0.4)
    assert pullback(1.0)[2] is NoTangent()  # the count n


def test_derivatives_outside_the_support_are_zero():
    x = np.array([-1.0, 0.5])
    for method in ("logpdf", "pdf", "cdf", "sf"):
        _, pullback = rrule(getattr(st.expon, method), x, 0.0, 1.0)
        _, x_bar, loc_bar, scale_bar = (unthunk(b) for b in pullback(np.ones(2)))
        assert x_bar[0] == 0.0 and np.isfinite(x_bar[1]), method
    _, pullback = rrule(st.pareto.cdf, np.array([0.5, 2.0]), np.array([2.0, 2.0]))
    b_bar = unthunk(pullback(np.ones(2))[2])
    assert b_bar[0] == 0.0 and b_bar[1] > 0


def test_float32_inputs_get_float32_cotangents():
    x = np.array([0.5, 1.0], dtype=np.float32)
    _, pullback = rrule(st.norm.cdf, x, np.float32(0.1), np.float32(2.0))
    _, x_bar, loc_bar, scale_bar = (unthunk(b) for b in pullback(np.ones(2)))
    assert x_bar.dtype == np.float32 and type(loc_bar) is np.float32


def test_a_subclass_of_a_covered_distribution_gets_no_rule():
    assert rrule(st.erlang.logpdf, 1.0, 2) is None  # erlang_gen subclasses gamma_gen
    assert frule((NoTangent(), 1.0, NoTangent()), st.erlang.logpdf, 1.0, 2) is None

    class MyNorm(type(st.norm)):
        def _pdf(self, x):
            return 2 * super()._pdf(x)

    assert rrule(MyNorm(name="mynorm").logpdf, 0.5) is None


def test_multivariate_normal_with_a_covariance_object_has_no_rule():
    cov = st.Covariance.from_diagonal(np.array([1.0, 2.0]))
    assert rrule(st.multivariate_normal.logpdf, np.zeros(2), np.zeros(2), cov) is None


def test_multivariate_normal_singular_cov_is_not_implemented():
    cov = np.array([[1.0, 1.0], [1.0, 1.0]])
    x = np.array([0.5, 0.5])
    _, pullback = rrule(st.multivariate_normal.logpdf, x, np.zeros(2), cov, True)
    _, x_bar, mean_bar, cov_bar, singular_bar = (unthunk(b) for b in pullback(1.0))
    assert isinstance(cov_bar, NotImplementedTangent) and "singular" in cov_bar.info
    assert singular_bar is NoTangent()
    np.testing.assert_allclose(x_bar, -mean_bar)


def test_multivariate_normal_cov_cotangent_is_symmetric():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 3))
    _, pullback = rrule(st.multivariate_normal.logpdf, rng.normal(size=(4, 3)), np.zeros(3),
                        a @ a.T + np.eye(3))
    cov_bar = unthunk(pullback(np.ones(4))[3])
    np.testing.assert_allclose(cov_bar, cov_bar.T)


def test_ad_gradient_of_norm_pdf():
    def density(m, s, x):
        return st.norm.pdf(x, m, s)

    test_rrule(density, 0.3, 1.5, np.array([0.1, 1.0, 2.0]), rrule_f=rrule_via_ad,
               config=CONFIG)
    assert grad(lambda m: st.norm.logpdf(1.0, m, 2.0))(0.5) == pytest.approx(0.125)


def test_ad_gradient_of_multivariate_normal_logpdf_wrt_cov():
    # 9 x 9: above the testers' full-Jacobian size, so cov is checked along its
    # symmetric tangent (see the catalog's note on constrained inputs)
    rng = np.random.default_rng(2)
    a = rng.normal(size=(9, 9))
    cov, sym = a @ a.T / 9 + np.eye(9), rng.normal(size=(9, 9))
    x, mean = rng.normal(size=(4, 9)), rng.normal(size=9)

    def loglik(cov, mean):
        return np.sum(st.multivariate_normal.logpdf(x, mean, cov))

    test_rrule(loglik, with_tangent(cov, (sym + sym.T) / 2), mean, rrule_f=rrule_via_ad,
               config=CONFIG)


def test_ad_through_frozen_distributions():
    def frozen_norm(m, s, x):
        return st.norm(m, s).logcdf(x)

    def frozen_gamma(a, x):
        return np.sum(st.gamma(a, 0.0, 2.0).logpdf(x))

    def frozen_poisson(mu):
        return np.sum(st.poisson(mu).logpmf(np.array([0, 2, 5])))

    test_rrule(frozen_norm, 0.3, 1.5, np.array([0.1, 1.0]), rrule_f=rrule_via_ad,
               config=CONFIG)
    test_rrule(frozen_gamma, 2.5, np.array([0.5, 1.0]), rrule_f=rrule_via_ad, config=CONFIG)
    test_rrule(frozen_poisson, 2.5, rrule_f=rrule_via_ad, config=CONFIG)


def test_ad_frozen_keyword_parameter():
    # a traced keyword argument of a frozen distribution reaches the rule (moved to its
    # positional place): no silent zero, and the value of the positional call
    def frozen_keyword(m):
        return st.norm(loc=m, scale=2.0).logpdf(1.0)

    np.testing.assert_allclose(grad(frozen_keyword)(0.3), (1.0 - 0.3) / 4.0)


def test_ad_through_frozen_multivariate_distributions():
    # no rules of their own: the AD traces SciPy's frozen code
    def frozen_mvn(mean, x):
        return st.multivariate_normal(mean, np.diag([1.0, 2.0])).logpdf(x)

    def frozen_dirichlet(alpha):
        return st.dirichlet(alpha).logpdf(np.array([0.2, 0.3, 0.5]))

    test_rrule(frozen_mvn, np.array([0.5, 1.0]), np.array([0.1, -0.3]),
               rrule_f=rrule_via_ad, config=CONFIG)
    test_rrule(frozen_dirichlet, np.array([1.5, 2.0, 3.0]), rrule_f=rrule_via_ad,
               config=CONFIG)


def test_inputs_not_mutated():
    x, loc = np.array([0.5, 1.0]), np.array([0.1, 0.2])
    before = x.copy(), loc.copy()
    y_bar = np.ones(2)
    _, pullback = rrule(st.t.logsf, x, 3.0, loc, 2.0)
    [unthunk(b) for b in pullback(y_bar)]
    np.testing.assert_array_equal(x, before[0])
    np.testing.assert_array_equal(loc, before[1])
    np.testing.assert_array_equal(y_bar, np.ones(2))


def test_stats_rules_wait_for_scipy_stats_import():
    code = (
        "import sys, chainrules\n"
        "assert 'scipy.stats' not in sys.modules, 'import chainrules imported scipy.stats'\n"
        "import scipy.stats as st\n"
        "y, pullback = chainrules.rrule(st.norm.logpdf, 1.0, 0.5, 2.0)\n"
        "assert float(chainrules.unthunk(pullback(1.0)[1])) == -0.125\n"
        "assert not any(type(f).__name__ == '_AfterImport' for f in sys.meta_path)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": SRC})
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("f", "args", "kwargs", "name", "param"), [
    (st.norm.logpdf, (1.0 + 1j,), {}, "norm.logpdf", "x"),
    (st.gamma.cdf, (1.0, 2.0), {"scale": np.array([1.0 + 0j])}, "gamma.cdf", "scale"),
    (st.poisson.pmf, (1, 2.0 + 1j), {}, "poisson.pmf", "mu"),
    (st.multivariate_normal.logpdf, (np.array([1.0 + 1j, 0.0]), np.zeros(2)), {},
     "multivariate_normal.logpdf", "x"),
    (st.dirichlet.pdf, (np.array([0.5 + 0j, 0.5]), np.ones(2)), {}, "dirichlet.pdf", "x"),
])
def test_complex_input_error(f, args, kwargs, name, param):
    match = f"the rule for scipy.stats.{name} does not support complex inputs (argument " \
            f"'{param}' is complex)"
    with pytest.raises(NotImplementedError, match=re.escape(match)):
        rrule(f, *args, **kwargs)
    with pytest.raises(NotImplementedError, match=re.escape(match)):
        frule((NoTangent(),) + (NoTangent(),) * len(args), f, *args, **kwargs)


def test_bridges_find_the_rule_of_a_bound_method():
    jax = pytest.importorskip("jax")
    from chainrules.interop.jax import jax_function

    logpdf = jax_function(st.norm.logpdf)
    d_mean = jax.jit(jax.grad(lambda m: logpdf(1.0, m, 2.0)))(0.5)
    assert float(d_mean) == pytest.approx(0.125, rel=1e-6)
    torch = pytest.importorskip("torch")
    from chainrules.interop.torch import torch_function

    m = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    torch_function(st.norm.logpdf)(torch.tensor(1.0, dtype=torch.float64), m,
                                   torch.tensor(2.0, dtype=torch.float64)).backward()
    assert float(m.grad) == pytest.approx(0.125, rel=1e-12)
