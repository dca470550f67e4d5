"""Oracle check against JAX: ``scipy.stats`` rules vs ``jax.vjp`` / ``jax.jvp`` of the
same function in ``jax.scipy.stats``, where JAX has it.

Cotangents are compared for the arguments our rules differentiate (not the integer
``k``, and not the shape parameters whose cdf derivative is ``not_implemented``); not
gumbel ppf (JAX's fails on an integer in ``xlog1py``) nor betabinom (JAX's takes 20 s
and its ``betaln`` differs from SciPy's by 1e-6). JAX's
``multivariate_normal`` reads one triangle of ``cov``; its cotangent is symmetrized to
compare with ours (the symmetric-gradient convention), and its dirichlet ``x``
cotangent is projected onto the simplex's tangent space like ours.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
st = pytest.importorskip("scipy.stats")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.stats as jst  # noqa: E402

from chainrules import NoTangent, frule, rrule, unthunk  # noqa: E402

RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 2))
POS = RNG.uniform(0.3, 3.0, size=(3, 2))
UNIT = RNG.uniform(0.15, 0.85, size=(3, 2))
Q = RNG.uniform(0.1, 0.9, size=(3, 2))
LOC = np.array([0.2, -0.3])
SCALE = 1.7
K = RNG.integers(0, 6, size=(3, 2))

# (name, method, args, positions to compare)
ROWS = [
    ("norm", "logpdf", (X, LOC, SCALE), (0, 1, 2)),
    ("norm", "pdf", (X, LOC, SCALE), (0, 1, 2)),
    ("norm", "logcdf", (X, LOC, SCALE), (0, 1, 2)),
    ("norm", "sf", (X, LOC, SCALE), (0, 1, 2)),
    ("norm", "logsf", (X, LOC, SCALE), (0, 1, 2)),
    ("norm", "ppf", (Q, LOC, SCALE), (0, 1, 2)),
    ("norm", "isf", (Q, LOC, SCALE), (0, 1, 2)),
    ("gamma", "logpdf", (POS, np.array([1.5, 2.5]), LOC - 0.5, SCALE), (0, 1, 2, 3)),
    ("gamma", "cdf", (POS, 2.0, LOC - 0.5, SCALE), (0, 2, 3)),
    ("beta", "logpdf", (UNIT, np.array([1.5, 2.5]), 2.0), (0, 1, 2)),
    ("t", "logpdf", (X, np.array([2.5, 4.0]), LOC, SCALE), (0, 1, 2, 3)),
    ("expon", "logcdf", (POS, 0.1, SCALE), (0, 1, 2)),
    ("laplace", "cdf", (X, LOC, SCALE), (0, 1, 2)),
    ("logistic", "isf", (Q, LOC, SCALE), (0, 1, 2)),
    ("cauchy", "logsf", (X, LOC, SCALE), (0, 1, 2)),
    ("chi2", "logpdf", (POS, np.array([2.5, 4.0])), (0, 1)),
    ("uniform", "ppf", (Q, LOC, SCALE), (0, 1, 2)),
    ("truncnorm", "logpdf", (UNIT - 0.5, -1.5, np.array([1.0, 2.0]), 0.1, 1.2),
     (0, 1, 2, 3, 4)),
    ("truncnorm", "logcdf", (UNIT - 0.5, -1.5, np.array([1.0, 2.0]), 0.1, 1.2),
     (0, 1, 2, 3, 4)),
    ("gumbel_r", "logsf", (X, LOC, SCALE), (0, 1, 2)),
    ("gumbel_l", "logcdf", (X, LOC, SCALE), (0, 1, 2)),
    ("pareto", "logcdf", (POS + 1.0, np.array([1.5, 2.5]), 0.0, 1.0), (0, 1, 2, 3)),
    ("pareto", "ppf", (Q, np.array([1.5, 2.5]), 0.1, 1.3), (0, 1, 2, 3)),
    ("gennorm", "logpdf", (X + 0.05, np.array([1.5, 2.5])), (0, 1)),
    ("vonmises", "logpdf", (X, np.array([0.5, 2.0])), (0, 1)),
    ("poisson", "logpmf", (K, np.array([1.5, 3.0])), (1,)),
    ("poisson", "cdf", (K, np.array([1.5, 3.0])), (1,)),
    ("binom", "pmf", (K, 8, np.array([0.3, 0.6])), (2,)),
    ("nbinom", "logpmf", (K, np.array([1.5, 3.0]), np.array([0.3, 0.6])), (1, 2)),
    ("geom", "logpmf", (K + 1, np.array([0.3, 0.6])), (1,)),
    ("bernoulli", "cdf", (K % 2, np.array([0.3, 0.6])), (1,)),
]


def _ids(rows):
    return [f"{r[0]}.{r[1]}-{'-'.join(map(str, r[3]))}" for r in rows]


def _jax_fun(name, method, args, pos):
    f = getattr(getattr(jst, name), method)

    def fun(*diff):
        full = [jnp.asarray(a) for a in args]
        for i, d in zip(pos, diff):
            full[i] = d
        return f(*full)

    return fun


@pytest.mark.parametrize(("name", "method", "args", "pos"), ROWS, ids=_ids(ROWS))
def test_rrule_against_jax(name, method, args, pos):
    y, pullback = rrule(getattr(getattr(st, name), method), *args)
    y_bar = RNG.normal(size=np.shape(y))
    bars = pullback(y_bar)
    fun = _jax_fun(name, method, args, pos)
    out, vjp = jax.vjp(fun, *(jnp.asarray(args[i], dtype=jnp.float64) for i in pos))
    rtol = 1e-8
    np.testing.assert_allclose(y, out, rtol=rtol, atol=1e-12, err_msg="primal")
    theirs = vjp(jnp.asarray(y_bar))
    for i, t in zip(pos, theirs):
        ours = unthunk(bars[1 + i])
        np.testing.assert_allclose(ours, np.asarray(t), rtol=rtol, atol=1e-10,
                                   err_msg=f"cotangent of argument {i}")


@pytest.mark.parametrize(("name", "method", "args", "pos"), ROWS[::3], ids=_ids(ROWS[::3]))
def test_frule_against_jax(name, method, args, pos):
    dots = [RNG.normal(size=np.shape(args[i])) for i in pos]
    full = [NoTangent()] * len(args)
    for i, d in zip(pos, dots):
        full[i] = d if np.ndim(args[i]) else float(d)
    y, y_dot = frule((NoTangent(), *full), getattr(getattr(st, name), method), *args)
    fun = _jax_fun(name, method, args, pos)
    _, t = jax.jvp(fun, tuple(jnp.asarray(args[i], dtype=jnp.float64) for i in pos),
                   tuple(jnp.asarray(d) for d in dots))
    np.testing.assert_allclose(y_dot, np.asarray(t), rtol=1e-8, atol=1e-10)


def _spd(d):
    a = RNG.normal(size=(d, d))
    return a @ a.T / d + np.eye(d)


@pytest.mark.parametrize("method", ["logpdf", "pdf"])
def test_multivariate_normal_against_jax(method):
    x, mean, cov = RNG.normal(size=(5, 3)), RNG.normal(size=3), _spd(3)
    y, pullback = rrule(getattr(st.multivariate_normal, method), x, mean, cov)
    y_bar = RNG.normal(size=np.shape(y))
    _, x_bar, mean_bar, cov_bar = (unthunk(b) for b in pullback(y_bar))
    out, vjp = jax.vjp(getattr(jst.multivariate_normal, method), jnp.asarray(x),
                       jnp.asarray(mean), jnp.asarray(cov))
    np.testing.assert_allclose(y, out, rtol=1e-10)
    tx, tm, tc = (np.asarray(t) for t in vjp(jnp.asarray(y_bar)))
    np.testing.assert_allclose(x_bar, tx, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(mean_bar, tm, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(cov_bar, (tc + tc.T) / 2, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("method", ["logpdf", "pdf"])
def test_dirichlet_against_jax(method):
    g = RNG.uniform(0.5, 2.0, size=(4, 6))
    x, alpha = g / g.sum(axis=0), RNG.uniform(0.5, 3.0, size=4)
    y, pullback = rrule(getattr(st.dirichlet, method), x, alpha)
    y_bar = RNG.normal(size=np.shape(y))
    _, x_bar, alpha_bar = (unthunk(b) for b in pullback(y_bar))
    out, vjp = jax.vjp(getattr(jst.dirichlet, method), jnp.asarray(x), jnp.asarray(alpha))
    np.testing.assert_allclose(y, out, rtol=1e-10)
    tx, ta = (np.asarray(t) for t in vjp(jnp.asarray(y_bar)))
    np.testing.assert_allclose(x_bar, tx - tx.mean(axis=0), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(alpha_bar, ta, rtol=1e-8, atol=1e-12)
