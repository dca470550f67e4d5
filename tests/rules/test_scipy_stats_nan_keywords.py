"""scipy.stats under the AD as scientists call it: NaN in the data propagates into the
gradient as JAX's does (issue #29), and parameters passed by keyword (``scale=``,
``loc=``, shape keywords, frozen distributions) are differentiated like positional ones.

The NaN sweep runs over the catalog's scipy.stats, scipy.special and reduction cases:
one NaN in one float argument, the cotangents of the *other* arguments compared with
``jax.vjp`` of the same function where JAX has it and where its value is NaN at the same
places as SciPy's (JAX's ``gamma.logpdf(nan)`` is ``-inf``, not SciPy's ``nan``: no
oracle there). The check is the one a silent value would fail: wherever JAX's cotangent
is NaN, ours is NaN too.
"""

import importlib
import inspect
import re

import numpy as np
import pytest

st = pytest.importorskip("scipy.stats")
jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from chainrules import NoTangent, ZeroTangent, rrule, unthunk  # noqa: E402
from chainrules.ad import NoRuleError, grad, jvp, value_and_grad  # noqa: E402
from chainrules.core import NotImplementedTangent  # noqa: E402
from chainrules.testing._pairs import PrimalAndTangent  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _jax_x64():
    before = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


# ------------------------------------------------------------------------------- NaN


def test_nan_in_the_data_gives_a_nan_gradient_like_jax():
    d = np.array([0.1, np.nan, 2.0])
    p = np.array([0.5, 1.2])
    value, g = value_and_grad(lambda p: -np.sum(st.norm.logpdf(d, p[0], p[1])))(p)
    jg = jax.grad(lambda p: -jnp.sum(jax.scipy.stats.norm.logpdf(jnp.asarray(d), p[0],
                                                                   p[1])))(jnp.asarray(p))
    assert np.isnan(value)
    assert np.isnan(g).all() and np.isnan(np.asarray(jg)).all()


def test_nan_gradient_where_the_derivative_needs_the_datum_only():
    # d logpdf / d loc = (x - loc) / scale^2 involves x; d ppf / d loc = 1 does not
    x = np.array([0.1, np.nan, 2.0])
    g = grad(lambda m: np.sum(st.norm.logcdf(x, m, 1.5)))(0.3)
    assert np.isnan(g)
    g = grad(lambda m: st.norm.ppf(np.array([0.2, 0.7]), m, np.array([1.0, np.nan]))[0])(0.3)
    np.testing.assert_allclose(g, 1.0)


def test_nan_shape_parameter_propagates():
    g = grad(lambda s: np.sum(st.gamma.logpdf(np.array([0.5, 1.5]), np.array([2.0, np.nan]),
                                              0.0, s)))(1.3)
    assert np.isnan(g)


def test_nan_outside_the_support_stays_zero():
    # outside the support the derivative is 0 (the value is constant there); a NaN
    # elsewhere does not leak into the other elements' cotangents
    _, pullback = rrule(st.gamma.logpdf, np.array([-1.0, np.nan, 0.5]), 2.0)
    x_bar = unthunk(pullback(np.ones(3))[1])
    assert x_bar[0] == 0.0 and np.isnan(x_bar[1]) and x_bar[2] == 1.0


def _jax_function(name):
    parts = name.split("(")[0].split(".")
    if parts[0] == "numpy":
        module, rest = "jax.numpy", parts[1:]
    elif parts[:2] in (["scipy", "special"], ["scipy", "stats"]):
        module, rest = f"jax.scipy.{parts[1]}", parts[2:]
    else:
        return None
    obj = importlib.import_module(module)
    for attr in rest:
        obj = getattr(obj, attr, None)
        if obj is None:
            return None
    return obj


def _sweep_rows():
    rows = []
    for module in ("scipy_stats", "scipy_special", "numpy_reductions"):
        cases = importlib.import_module(f"chainrules.testing.cases.{module}").CASES
        for case in cases:
            if "float64" not in case.dtypes or case.xfail:
                continue
            jf = _jax_function(case.display_name)
            if jf is not None:
                rows.append(pytest.param(case, jf, id=case.display_name))
    return rows


# Rules of other modules whose NaN pattern differs from JAX's (not scipy's rules)
_KNOWN = {
    "numpy.quantile(a, 0.3)": "q's cotangent is finite when a holds NaN (rules/numpy)",
    "numpy.quantile(a, [q], axis=1)": "q's cotangent is finite when a holds NaN (rules/numpy)",
    "numpy.percentile(a, 35, axis=0)": "q's cotangent is finite when a holds NaN (rules/numpy)",
}


def _nan_mismatches(case, jf):
    raw = case.args(np.random.default_rng(0), np.dtype("float64"))
    args = [a.x if isinstance(a, PrimalAndTangent) else a for a in raw]
    diff = [i for i, a in enumerate(raw)
            if not (isinstance(a, PrimalAndTangent) and isinstance(a.x_dot, NoTangent))
            and np.asarray(args[i]).dtype.kind == "f"]
    found, probes = [], 0
    for j, a in enumerate(args):
        if not (isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size > 0):
            continue
        bad = list(args)
        bad[j] = a.copy()
        bad[j].flat[0] = np.nan
        try:
            with np.errstate(all="ignore"):
                case.f(*bad, **case.kwargs)
        except ValueError:  # the primal refuses NaN ("must not contain infs or NaNs")
            continue
        with np.errstate(all="ignore"):
            out = rrule(case.f, *bad, **case.kwargs)
            if out is None or not isinstance(out[0], (np.ndarray, float, np.floating)) \
                    or np.iscomplexobj(out[0]):
                continue  # (tuple and complex outputs: the sweep seeds real ones)
            y, pullback = out
            bars = pullback(np.ones_like(y))
        if any(b is None for b in bad) or any(np.iscomplexobj(b) for b in bad):
            continue
        jargs = [jnp.asarray(b) for b in bad]

        def oracle(*d, jargs=jargs):
            full = list(jargs)
            for i, v in zip(diff, d):
                full[i] = v
            return jf(*full, **case.kwargs)

        try:
            jy, vjp = jax.vjp(oracle, *[jargs[i] for i in diff])
        except Exception:  # JAX does not take these arguments: no oracle
            continue
        if np.shape(jy) != np.shape(y) or (
                np.isnan(np.asarray(jy)) != np.isnan(np.asarray(y, dtype=float))).any():
            continue  # JAX's value differs from SciPy's at the NaN: no oracle
        for i, jbar in zip(diff, vjp(jnp.ones_like(jy))):
            ours = unthunk(bars[1 + i])
            if i == j or isinstance(ours, (NoTangent, ZeroTangent, NotImplementedTangent)):
                continue
            probes += 1
            if np.iscomplexobj(ours) or np.iscomplexobj(jbar):
                continue
            silent = np.isnan(np.asarray(jbar)) & ~np.isnan(np.asarray(ours, dtype=float))
            if silent.any():
                found.append((j, i))
    return found, probes


@pytest.mark.parametrize(("case", "jf"), _sweep_rows())
def test_nan_sweep_against_jax(case, jf):
    found, _ = _nan_mismatches(case, jf)
    if case.display_name in _KNOWN:
        assert found, f"fixed? remove from _KNOWN: {_KNOWN[case.display_name]}"
        pytest.xfail(_KNOWN[case.display_name])
    assert not found, f"finite cotangent where JAX's is NaN (NaN in arg, cotangent of arg): {found}"


def test_nan_sweep_has_rows():
    assert len(_sweep_rows()) > 100


# -------------------------------------------------------------------------- keywords

X = np.array([0.3, 1.0, 2.0])


def test_scale_by_keyword():
    # the example: NoRuleError numpy.place before
    g = grad(lambda s: np.sum(st.expon.logpdf(X, scale=s)))(0.7)
    np.testing.assert_allclose(g, np.sum(X) / 0.49 - 3 / 0.7)


def _keyword_rows():
    rows = []
    for name, shapes, x in [("norm", {}, X), ("gamma", {"a": 2.5}, X), ("t", {"df": 4.0}, X),
                            ("beta", {"a": 2.0, "b": 3.0}, X / 3),
                            ("lognorm", {"s": 0.7}, X), ("truncnorm", {"a": -1.0, "b": 2.0}, X / 3)]:
        for method in ("logpdf", "pdf", "cdf", "logsf", "ppf"):
            params = {**shapes, "loc": 0.1, "scale": 1.3}
            for key in params:
                if method != "logpdf" and key in ("a", "df", "b"):
                    continue  # no closed-form cdf derivative w.r.t. these shapes
                rows.append(pytest.param(name, method, params, key, x,
                                         id=f"{name}.{method}-{key}"))
    return rows


@pytest.mark.parametrize(("name", "method", "params", "key", "x"), _keyword_rows())
def test_keyword_sweep(name, method, params, key, x):
    dist = getattr(st, name)
    x = np.clip(x, 0.05, 0.95) if method == "ppf" else x
    order = list(params)

    def by_position(v):
        values = {**params, key: v}
        return np.sum(getattr(dist, method)(x, *(values[k] for k in order)))

    def by_keyword(v):
        return np.sum(getattr(dist, method)(x, **{**params, key: v}))

    def frozen(v):
        return np.sum(getattr(dist(**{**params, key: v}), method)(x))

    expected = grad(by_position)(params[key])
    assert np.isfinite(expected) and expected != 0.0
    np.testing.assert_allclose(grad(by_keyword)(params[key]), expected, rtol=1e-12)
    np.testing.assert_allclose(grad(frozen)(params[key]), expected, rtol=1e-12)
    tangent = jvp(by_keyword, (params[key],), (1.0,))[1]
    np.testing.assert_allclose(tangent, expected, rtol=1e-12)


def test_discrete_keyword():
    k = np.array([0, 2, 5])
    g = grad(lambda mu: np.sum(st.poisson.logpmf(k, mu=mu)))(2.5)
    np.testing.assert_allclose(g, np.sum(k / 2.5 - 1))


def test_keyword_that_cannot_be_moved_traces_into_the_function():
    # a function with a rule whose traced keyword is keyword-only: the rule cannot take
    # it, so the AD traces into the function, whose np.place it differentiates (#28)
    from chainrules import scoped_rules

    def scaled(x, *, s):
        y = np.zeros_like(x)
        np.place(y, x > -1.0, x * s)  # what SciPy's stats code does
        return y

    with scoped_rules():

        @rrule.register(scaled)
        def scaled_rrule(x, *, s):
            return scaled(x, s=s), lambda y_bar: (NoTangent(), y_bar * s)

        assert np.isclose(grad(lambda s: np.sum(scaled(X, s=s)))(0.5), np.sum(X[X > -1.0]))


def test_keyword_that_cannot_be_moved_error():
    # ... and when the function's code cannot be traced either, the error says that the
    # keyword is why the rule was not used
    from chainrules import scoped_rules

    def scaled(x, *, s):
        return np.frombuffer(np.float64(s).tobytes()) * x  # bytes: no derivative

    with scoped_rules():

        @rrule.register(scaled)
        def scaled_rrule(x, *, s):
            return scaled(x, s=s), lambda y_bar: (NoTangent(), y_bar * s)

        with pytest.raises(NoRuleError, match=re.escape(
                "traced values passed by keyword (s=) that cannot be moved to a "
                "positional place")):
            grad(lambda s: np.sum(scaled(X, s=s)))(0.5)


def test_declared_parameters_of_a_distribution_method():
    from chainrules.rules import _kit as kit

    params = kit.positional_parameters(st.gamma.logpdf)
    assert [p.name for p in params] == ["x", "a", "loc", "scale"]
    assert params[1].default is inspect.Parameter.empty and params[3].default == 1.0
