"""Cases for the rules of ``scipy.stats`` (``chainrules/rules/scipy/stats_*.py``).

One row per (distribution, method), called as SciPy users do, ``scipy.stats.norm.logpdf``
(a bound method: the rule is the one registered for ``rv_continuous.logpdf`` and
``norm_gen``). Inputs lie inside the support, away from kinks (laplace and gennorm at 0)
and edges. Shape parameters whose cdf derivative is ``not_implemented`` are held fixed
(``no_tangent``) in the cdf-family rows; one ``xfail`` row per such parameter shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.testing._cases import Case, integers
from chainrules.testing._pairs import no_tangent, with_tangent

try:
    import scipy.stats as st
except ImportError:  # the rules exist only with SciPy
    CASES: list[Case] = []
else:
    R = ("float64", "float32")
    _SHAPE = (3, 2)

    def _signed(low: float, high: float) -> Callable:
        """|z| in (low, high) with either sign: away from a kink at 0."""
        def draw(rng: np.random.Generator, shape: tuple) -> np.ndarray:
            return rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)
        return draw

    def _between(low: float, high: float) -> Callable:
        def draw(rng: np.random.Generator, shape: tuple) -> np.ndarray:
            return rng.uniform(low, high, shape)
        return draw

    # name: (shape parameter ranges, standardized x in the support, shapes whose cdf
    # derivative is not implemented)
    CONTINUOUS: dict[str, tuple[list, Callable, tuple]] = {
        "norm": ([], _between(-2.0, 2.0), ()),
        "gamma": ([(1.5, 3.0)], _between(0.3, 3.0), ()),
        "beta": ([(1.5, 3.0), (1.5, 3.0)], _between(0.15, 0.85), ("a", "b")),
        "t": ([(2.0, 6.0)], _between(-2.0, 2.0), ("df",)),
        "expon": ([], _between(0.2, 3.0), ()),
        "laplace": ([], _signed(0.2, 2.0), ()),
        "logistic": ([], _between(-3.0, 3.0), ()),
        "cauchy": ([], _between(-3.0, 3.0), ()),
        "chi2": ([(2.5, 5.0)], _between(0.3, 4.0), ()),
        "uniform": ([], _between(0.1, 0.9), ()),
        "lognorm": ([(0.4, 1.2)], _between(0.3, 3.0), ()),
        "truncnorm": ([(-2.0, -1.0), (1.0, 2.0)], _between(-0.9, 0.9), ()),
        "gumbel_r": ([], _between(-2.0, 2.0), ()),
        "gumbel_l": ([], _between(-2.0, 2.0), ()),
        "pareto": ([(1.5, 3.0)], _between(1.2, 3.0), ()),
        "gennorm": ([(1.5, 3.0)], _signed(0.2, 2.0), ()),
        "vonmises": ([(0.5, 3.0)], _between(-2.5, 2.5), ("kappa",)),
        "vonmises_line": ([(0.5, 3.0)], _between(-2.5, 2.5), ("kappa",)),
    }
    DENSITY = ("logpdf", "pdf")
    CDF = ("logcdf", "cdf", "logsf", "sf")
    QUANTILE = ("ppf", "isf")

    # shapes whose cdf derivative is given but not its own derivative in the shape (the
    # incomplete gamma function's second derivative in a): rows with the shape held fixed
    # keep the second-order check of the other arguments
    FIRST_ORDER_SHAPES = {"gamma": ("a",), "chi2": ("df",), "gennorm": ("beta",)}

    def _continuous_args(name: str, method: str, scalar: bool = False,
                         perturb_all: bool = False, fixed: tuple = ()) -> Callable:
        ranges, draw_z, no_cdf = CONTINUOUS[name]
        no_cdf = (*no_cdf, *fixed)
        dist = getattr(st, name)
        shapes_names = [s.strip() for s in dist.shapes.split(",")] if dist.shapes else []

        # SciPy inverts the von Mises cdf numerically, element by element: slow
        small = method in QUANTILE and name.startswith("vonmises")

        def args(rng: np.random.Generator, dt: np.dtype) -> tuple:
            sh_x = () if scalar else (2,) if small else _SHAPE
            shapes = [rng.uniform(lo, hi, () if scalar else (2,)) for lo, hi in ranges]
            loc = rng.uniform(-1.0, 1.0, () if scalar or small else (3, 1))
            scale = rng.uniform(0.5, 2.0, ())
            if method in QUANTILE:
                first = rng.uniform(0.1, 0.9, sh_x)
            else:
                first = loc + scale * draw_z(rng, np.broadcast_shapes(sh_x, np.shape(loc)))
            out: list[Any] = [np.asarray(v).astype(dt)[()] for v in (first, *shapes, loc,
                                                                   scale)]
            if scalar:  # Python floats for the parameters
                out[1:] = [float(v) for v in out[1:]]
            if method not in DENSITY and not perturb_all:
                for i, s in enumerate(shapes_names):
                    if s in no_cdf:
                        out[1 + i] = no_tangent(out[1 + i])
            return tuple(out)

        return args

    CASES = []
    for _name in CONTINUOUS:
        _dist = getattr(st, _name)
        # vonmises_line is vonmises_gen on (-pi, pi): the same rules, so not the slow
        # quantile rows again
        _methods = (*DENSITY, *CDF) if _name == "vonmises_line" else (*DENSITY, *CDF,
                                                                       *QUANTILE)
        for _method in _methods:
            CASES.append(Case(getattr(_dist, _method), _continuous_args(_name, _method),
                              dtypes=R, name=f"scipy.stats.{_name}.{_method}"))
        CASES.append(Case(_dist.logpdf, _continuous_args(_name, "logpdf", scalar=True),
                          dtypes=R, name=f"scipy.stats.{_name}.logpdf(scalars)"))
        if "ppf" in _methods:
            CASES.append(Case(_dist.ppf, _continuous_args(_name, "ppf", scalar=True),
                              dtypes=R, name=f"scipy.stats.{_name}.ppf(scalars)"))
        for _method in (*CDF, *QUANTILE) if _name in FIRST_ORDER_SHAPES else ():
            CASES.append(Case(getattr(_dist, _method), _continuous_args(
                _name, _method, fixed=FIRST_ORDER_SHAPES[_name]), dtypes=R,
                name=f"scipy.stats.{_name}.{_method}(shape fixed)"))
        if CONTINUOUS[_name][2]:
            CASES.append(Case(
                _dist.cdf, _continuous_args(_name, "cdf", perturb_all=True),
                dtypes=("float64",), name=f"scipy.stats.{_name}.cdf(w.r.t. shapes)",
                xfail=f"d cdf / d {', '.join(CONTINUOUS[_name][2])} is not_implemented "
                      f"(no closed form in SciPy)"))

    # name: (k range, shape parameters as ("int", value) or (low, high), shapes whose cdf
    # derivative is not implemented)
    DISCRETE: dict[str, tuple[tuple, list, tuple]] = {
        "poisson": ((0, 6), [(1.0, 4.0)], ()),
        "binom": ((0, 8), [("int", 8), (0.2, 0.8)], ()),
        "nbinom": ((0, 6), [(1.5, 4.0), (0.3, 0.8)], ("n",)),
        "geom": ((1, 6), [(0.2, 0.8)], ()),
        "bernoulli": ((0, 2), [(0.2, 0.8)], ()),
        "betabinom": ((0, 8), [("int", 8), (1.0, 3.0), (1.0, 3.0)], ("a", "b")),
    }
    PMF = ("logpmf", "pmf")

    def _discrete_args(name: str, method: str, loc: int | None = None,
                       perturb_all: bool = False) -> Callable:
        k_range, params, no_cdf = DISCRETE[name]
        dist = getattr(st, name)
        names = [s.strip() for s in dist.shapes.split(",")]

        def args(rng: np.random.Generator, dt: np.dtype) -> tuple:
            # sf rows also take k below the support (sf = 1); bernoulli's logsf stays
            # below the top of the support, where sf = 0 and logsf = -inf
            low, high = k_range
            k = integers(rng, _SHAPE, low - 1 if method in ("logsf", "sf") else low,
                         high - 1 if name == "bernoulli" and method == "logsf" else high)
            out: list[Any] = [k if loc is None else k + loc]
            for s, param in zip(names, params):
                if param[0] == "int":
                    out.append(param[1])
                    continue
                value = rng.uniform(param[0], param[1], (2,)).astype(dt)
                if method not in PMF and s in no_cdf and not perturb_all:
                    value = no_tangent(value)
                out.append(value)
            if loc is not None:
                out.append(loc)
            return tuple(out)

        return args

    for _name in DISCRETE:
        _dist = getattr(st, _name)
        for _method in ("logpmf", "pmf", "logcdf", "cdf", "logsf", "sf"):
            CASES.append(Case(getattr(_dist, _method), _discrete_args(_name, _method),
                              dtypes=R, name=f"scipy.stats.{_name}.{_method}"))
        CASES.append(Case(_dist.logpmf, _discrete_args(_name, "logpmf", loc=1), dtypes=R,
                          name=f"scipy.stats.{_name}.logpmf(loc)"))
        if DISCRETE[_name][2]:
            CASES.append(Case(
                _dist.cdf, _discrete_args(_name, "cdf", perturb_all=True),
                dtypes=("float64",), name=f"scipy.stats.{_name}.cdf(w.r.t. shapes)",
                xfail=f"d cdf / d {', '.join(DISCRETE[_name][2])} is not_implemented "
                      f"(no closed form in SciPy)"))

    # --- multivariate -------------------------------------------------------------------

    def _symmetric(rng: np.random.Generator, dt: np.dtype, d: int) -> np.ndarray:
        a = rng.normal(size=(d, d))
        return ((a + a.T) / 2).astype(dt)

    def _spd(rng: np.random.Generator, dt: np.dtype, d: int) -> np.ndarray:
        a = rng.normal(size=(d, d))
        return (a @ a.T / d + np.eye(d)).astype(dt)

    def _mvn_args(x_shape: tuple, d: int, cov_kind: str = "matrix") -> Callable:
        """Points ``x``, a mean vector and a covariance; a matrix covariance gets a
        symmetric tangent (see the convention in stats_multivariate.py)."""
        def args(rng: np.random.Generator, dt: np.dtype) -> tuple:
            x = rng.normal(size=x_shape).astype(dt)
            mean = rng.normal(size=(d,)).astype(dt)
            if cov_kind == "matrix":
                cov: Any = with_tangent(_spd(rng, dt, d), _symmetric(rng, dt, d))
            elif cov_kind == "diagonal":
                cov = rng.uniform(0.5, 2.0, (d,)).astype(dt)
            else:
                cov = float(rng.uniform(0.5, 2.0))
            return x, mean, cov
        return args

    def _simplex(rng: np.random.Generator, k: int, n: int | None) -> np.ndarray:
        g = rng.uniform(0.5, 2.0, (k,) if n is None else (k, n))
        return g / np.sum(g, axis=0)

    def _dirichlet_args(k: int, n: int | None, implied: bool) -> Callable:
        """Points on the simplex: all K components with a tangent that keeps the sum
        (float64: SciPy rejects sums off 1 by more than 1e-9), or K - 1 of them."""
        def args(rng: np.random.Generator, dt: np.dtype) -> tuple:
            x = _simplex(rng, k, n)
            alpha = rng.uniform(0.5, 3.0, (k,)).astype(dt)
            if implied:
                return x[:-1].astype(dt), alpha
            x_dot = rng.normal(size=x.shape)
            return with_tangent(x, x_dot - np.mean(x_dot, axis=0)), alpha
        return args

    # A symmetric cov and a point on the simplex are constrained: the testers compare
    # the full Jacobian element by element (unconstrained directions) for arguments of
    # at most FULL_JACOBIAN_MAX scalars, so these rows are bigger than that and are
    # checked along their given (symmetric, sum-zero) tangents and own cotangents.
    for _method in ("logpdf", "pdf"):
        _mvn = getattr(st.multivariate_normal, _method)
        _dir = getattr(st.dirichlet, _method)
        _base = f"scipy.stats.multivariate_normal.{_method}"
        CASES += [
            Case(_mvn, _mvn_args((4, 9), 9), dtypes=R, name=f"{_base}(points)"),
            Case(_mvn, _mvn_args((9,), 9), dtypes=R, name=f"{_base}(one point)"),
            Case(_mvn, _mvn_args((2, 2, 3), 3, "diagonal"), dtypes=R,
                 name=f"{_base}(diagonal cov)"),
            Case(_mvn, _mvn_args((5,), 1, "scalar"), dtypes=R, name=f"{_base}(d=1)"),
            Case(_dir, _dirichlet_args(5, 14, implied=False), dtypes=("float64",),
                 name=f"scipy.stats.dirichlet.{_method}(points)"),
            Case(_dir, _dirichlet_args(4, None, implied=True), dtypes=R,
                 name=f"scipy.stats.dirichlet.{_method}(K-1 components)"),
            Case(_dir, _dirichlet_args(4, 3, implied=True), dtypes=R,
                 name=f"scipy.stats.dirichlet.{_method}(K-1 components, points)"),
        ]

    # empty inputs
    CASES += [
        Case(st.norm.logpdf, lambda rng, dt: (np.zeros((0, 2), dt), np.ones(2, dt), 2.0),
             dtypes=R, name="scipy.stats.norm.logpdf(empty)"),
        Case(st.norm.ppf, lambda rng, dt: (np.zeros(0, dt), 0.5, np.ones(0, dt)),
             dtypes=R, name="scipy.stats.norm.ppf(empty)"),
        Case(st.poisson.logpmf, lambda rng, dt: (np.zeros(0, np.int64), np.ones(1, dt)),
             dtypes=R, name="scipy.stats.poisson.logpmf(empty)"),
        Case(st.multivariate_normal.logpdf,
             lambda rng, dt: (np.zeros((0, 2), dt), np.zeros(2, dt), np.eye(2, dtype=dt)),
             dtypes=R, name="scipy.stats.multivariate_normal.logpdf(no points)"),
    ]
