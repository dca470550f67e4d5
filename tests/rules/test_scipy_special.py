import numpy as np
import pytest

sc = pytest.importorskip("scipy.special")

from chainrules import NoTangent, NotImplementedTangent, OutArgumentError, frule, rrule  # noqa: E402
from chainrules.testing.pytest_plugin import catalog_params, check_case  # noqa: E402


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("scipy_special"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


COVERED = [
    "gamma", "gammaln", "loggamma", "digamma", "psi", "polygamma", "beta", "betaln", "erf",
    "erfc", "erfinv", "erfcinv", "erfcx", "expit", "logit", "log_expit", "log_ndtr", "ndtr",
    "ndtri", "xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "logsumexp", "softmax",
    "log_softmax", "i0", "i0e", "i1", "i1e", "j0", "j1", "y0", "y1", "k0", "k1", "jv", "yv",
    "iv", "kv", "zeta", "gammainc", "gammaincc", "expm1", "log1p", "cbrt", "wofz", "dawsn",
    "exp1", "expi", "betainc", "betaincinv", "hyp1f1", "hyp2f1", "rgamma", "ive", "yn",
    "expn", "spence", "owens_t", "poch", "multigammaln", "boxcox", "boxcox1p", "inv_boxcox",
    "inv_boxcox1p", "exp2", "exp10", "fresnel", "sici", "sindg", "cosdg", "factorial", "factorial2",
    "factorialk",
]


@pytest.mark.parametrize("name", COVERED)
def test_function_has_frule_and_rrule(name):
    f = getattr(sc, name)
    assert rrule.has_rules(f) and frule.has_rules(f)


def test_order_derivative_is_not_implemented_for_real_orders():
    _, pullback = rrule(sc.jv, 1.5, np.array([1.0, 2.0]))
    _, v_bar, x_bar = pullback(np.ones(2))
    assert isinstance(v_bar, NotImplementedTangent)
    assert "order" in v_bar.info
    assert x_bar.shape == (2,)


def test_integer_order_gets_no_tangent():
    _, pullback = rrule(sc.kv, 1, np.array([1.0, 2.0]))
    assert pullback(np.ones(2))[1] is NoTangent()
    _, pullback = rrule(sc.polygamma, np.array([1, 2]), np.array([1.0, 2.0]))
    assert pullback(np.ones(2))[1] is NoTangent()


def test_riemann_zeta_below_one_is_not_implemented_in_x():
    _, pullback = rrule(sc.zeta, np.array([0.5, 3.0]))
    x_bar = pullback(np.ones(2))[1]
    assert isinstance(x_bar, NotImplementedTangent) and "x > 1 only" in x_bar.info


def test_logsumexp_is_stable_for_large_inputs():
    x = np.array([1000.0, 1000.0])
    _, pullback = rrule(sc.logsumexp, x)
    x_bar = pullback(1.0)[1]
    assert np.all(np.isfinite(x_bar))  # exp(1000) overflows; exp(x - y) does not
    np.testing.assert_allclose(x_bar, [0.5, 0.5], rtol=1e-12)


def test_order_rule_refuses_out():
    with pytest.raises(OutArgumentError, match="does not support out="):
        rrule(sc.jv, 1, np.ones(2), out=np.empty(2))


def test_inputs_not_mutated():
    x = np.array([[0.5, 1.0], [2.0, 3.0]])
    copy = x.copy()
    _, pullback = rrule(sc.softmax, x, axis=1)
    g = np.ones((2, 2))
    pullback(g)
    np.testing.assert_array_equal(x, copy)
    np.testing.assert_array_equal(g, np.ones((2, 2)))


def test_sph_harm_y_has_frule_and_rrule():
    if not hasattr(sc, "sph_harm_y"):
        pytest.skip("scipy.special.sph_harm_y needs SciPy >= 1.15")
    assert rrule.has_rules(sc.sph_harm_y) and frule.has_rules(sc.sph_harm_y)


def test_betainc_shape_parameters_are_not_implemented():
    _, pullback = rrule(sc.betainc, 2.0, 3.0, np.array([0.2, 0.7]))
    _, a_bar, b_bar, x_bar = pullback(np.ones(2))
    assert isinstance(a_bar, NotImplementedTangent) and "a or b" in a_bar.info
    assert isinstance(b_bar, NotImplementedTangent)
    assert x_bar.shape == (2,)


def test_multigammaln_dimension_gets_no_tangent():
    _, pullback = rrule(sc.multigammaln, np.array([2.0, 3.0]), 3)
    assert pullback(np.ones(2))[2] is NoTangent()


def test_boxcox_lmbda_derivative_is_continuous_at_zero():
    x = np.array([0.5, 2.0, 3.0])
    at_zero = rrule(sc.boxcox, x, 0.0)[1](np.ones(3))[2]
    nearby = rrule(sc.boxcox, x, 1e-9)[1](np.ones(3))[2]
    assert np.isfinite(at_zero)
    np.testing.assert_allclose(at_zero, np.sum(np.log(x) ** 2 / 2), rtol=1e-12)
    np.testing.assert_allclose(nearby, at_zero, rtol=1e-7)
    t_bar = rrule(sc.inv_boxcox, x, 0.0)[1](np.ones(3))[2]
    np.testing.assert_allclose(t_bar, np.sum(-np.exp(x) * x ** 2 / 2), rtol=1e-12)


def test_sici_sine_integral_derivative_is_finite_at_zero():
    y_dot = frule((NoTangent(), np.ones(1)), sc.sici, np.zeros(1))[1]
    np.testing.assert_allclose(y_dot[0], [1.0])


def test_sph_harm_y_with_diff_n_is_not_implemented():
    if not hasattr(sc, "sph_harm_y"):
        pytest.skip("scipy.special.sph_harm_y needs SciPy >= 1.15")
    y, pullback = rrule(sc.sph_harm_y, 1, 0, 0.5, 0.3, diff_n=1)
    assert isinstance(y, tuple)
    assert "diff_n" in pullback((1.0, np.ones(2)))[3].info
    _, y_dot = frule((NoTangent(),) * 3 + (1.0, 0.0), sc.sph_harm_y, 1, 0, 0.5, 0.3, diff_n=1)
    assert isinstance(y_dot, NotImplementedTangent)


def test_ive_of_complex_argument_is_not_implemented():
    z = np.array([1.0 + 1.0j, 2.0])
    _, pullback = rrule(sc.ive, 1, z)
    assert "not holomorphic" in pullback(np.ones(2))[2].info
    _, y_dot = frule((NoTangent(), NoTangent(), np.ones(2)), sc.ive, 1, z)
    assert "not holomorphic" in y_dot.info
