"""Cases for the rules of ``scipy.special`` (``chainrules/rules/scipy/special.py``)."""

from __future__ import annotations

import dataclasses

import numpy as np

from chainrules.testing._cases import Case, arr, positive
from chainrules.testing._pairs import no_tangent

try:
    import scipy.special as sc
except ImportError:  # the rules exist only with SciPy
    CASES: list[Case] = []
else:
    R = ("float64", "float32")
    # SciPy's stubs do not list it; it is public (scipy.special.multigammaln)
    multigammaln = sc.multigammaln  # pyright: ignore[reportAttributeAccessIssue]
    C = ("float64", "float32", "complex128")

    def one(make, shape=(3, 2)):
        return lambda rng, dt: (make(rng, dt, shape),)

    def interval(low, high, shape=(3, 2)):
        return lambda rng, dt: (arr(rng, dt, shape, low, high),)

    def scalar_in(rng, dt, low, high):
        return arr(rng, dt, (), low, high)

    def pos(low=0.5, high=2.0, shape=(3, 2)):
        return lambda rng, dt: (positive(rng, dt, shape, low, high),)

    CASES = [
        Case(sc.gamma, pos(0.5, 3.0), dtypes=C),
        Case(sc.gamma, interval(-0.9, -0.1), name="scipy.special.gamma(negative)"),
        Case(sc.gammaln, pos(0.5, 4.0), dtypes=R),
        Case(sc.loggamma, pos(0.5, 4.0), dtypes=("float64", "complex128")),
        Case(sc.digamma, pos(0.5, 4.0), dtypes=R),
        Case(sc.beta, lambda rng, dt: (positive(rng, dt, (3, 1), 0.5, 2.0),
                                      positive(rng, dt, (4,), 0.5, 2.0)), dtypes=R),
        Case(sc.betaln, lambda rng, dt: (positive(rng, dt, (3,), 0.5, 2.0),
                                        positive(rng, dt, (3,), 0.5, 2.0)), dtypes=R),
        Case(sc.erf, interval(-1.5, 1.5), dtypes=C),
        Case(sc.erfc, interval(-1.5, 1.5), dtypes=C),
        Case(sc.erfinv, interval(-0.8, 0.8), dtypes=R),
        Case(sc.erfcinv, interval(0.2, 1.8), dtypes=R),
        Case(sc.erfcx, interval(-1.0, 2.0), dtypes=("float64", "float32", "complex128")),
        Case(sc.ndtr, interval(-2.0, 2.0), dtypes=("float64", "float32", "complex128")),
        Case(sc.log_ndtr, interval(-3.0, 2.0), dtypes=("float64", "float32", "complex128")),
        Case(sc.ndtri, interval(0.1, 0.9), dtypes=R),
        Case(sc.wofz, interval(-1.0, 1.0), dtypes=("complex128",)),
        Case(sc.dawsn, interval(-2.0, 2.0), dtypes=("float64", "float32", "complex128")),
        Case(sc.expit, interval(-3.0, 3.0), dtypes=R),
        Case(sc.logit, interval(0.1, 0.9), dtypes=R),
        Case(sc.log_expit, interval(-3.0, 3.0), dtypes=R),
        Case(sc.xlogy, lambda rng, dt: (arr(rng, dt, (3, 1)), positive(rng, dt, (2,))),
             dtypes=("float64", "float32", "complex128")),
        Case(sc.xlog1py, lambda rng, dt: (arr(rng, dt, (3,)), positive(rng, dt, (3,))),
             dtypes=("float64", "float32", "complex128")),
        Case(sc.entr, pos(0.2, 2.0), dtypes=R),
        Case(sc.rel_entr, lambda rng, dt: (positive(rng, dt, (4,)), positive(rng, dt, (4,))),
             dtypes=R),
        Case(sc.kl_div, lambda rng, dt: (positive(rng, dt, (4,)), positive(rng, dt, (4,))),
             dtypes=R),
        Case(sc.exp1, pos(0.3, 2.0), dtypes=("float64", "float32", "complex128")),
        Case(sc.expi, pos(0.3, 2.0), dtypes=("float64", "float32", "complex128")),
        Case(sc.expm1, interval(-1.0, 1.0), dtypes=C),
        Case(sc.log1p, pos(0.1, 2.0), dtypes=C),
        Case(sc.cbrt, pos(0.2, 2.0), dtypes=R),
        Case(sc.i0, interval(-2.0, 2.0), dtypes=R),
        Case(sc.i0e, interval(0.2, 2.0), dtypes=R),
        Case(sc.i0e, interval(-2.0, -0.2), dtypes=R, name="scipy.special.i0e(negative)"),
        Case(sc.i1, interval(-2.0, 2.0), dtypes=R),
        Case(sc.i1e, interval(0.2, 2.0), dtypes=R),
        Case(sc.j0, interval(-3.0, 3.0), dtypes=R),
        Case(sc.j1, interval(-3.0, 3.0), dtypes=R),
        Case(sc.y0, pos(0.5, 3.0), dtypes=R),
        Case(sc.y1, pos(0.5, 3.0), dtypes=R),
        Case(sc.k0, pos(0.5, 3.0), dtypes=R),
        Case(sc.k1, pos(0.5, 3.0), dtypes=R),
        # The order as a Python int or an int array cannot be perturbed.
        Case(sc.jv, lambda rng, dt: (2, positive(rng, dt, (4,), 0.5, 3.0)), dtypes=R,
             name="scipy.special.jv(int order)"),
        Case(sc.yv, lambda rng, dt: (np.array([0, 1, 2]), positive(rng, dt, (3,), 0.5, 3.0)),
             dtypes=R, name="scipy.special.yv(int array order)"),
        Case(sc.iv, lambda rng, dt: (1, arr(rng, dt, (3,), -2.0, 2.0)), dtypes=R,
             name="scipy.special.iv(int order)"),
        Case(sc.kv, lambda rng, dt: (0, positive(rng, dt, (3,), 0.5, 3.0)), dtypes=R,
             name="scipy.special.kv(int order)"),
        Case(sc.jv, lambda rng, dt: (arr(rng, dt, (), 0.5, 1.5), positive(rng, dt, (3,))),
             dtypes=("float64",), name="scipy.special.jv(real order)",
             xfail="derivative w.r.t. a real order is not_implemented (no closed form)"),
        Case(sc.polygamma, lambda rng, dt: (1, positive(rng, dt, (3,), 0.5, 3.0)), dtypes=R),
        Case(sc.gammainc, lambda rng, dt: (2.0, positive(rng, dt, (3,), 0.5, 3.0)),
             dtypes=R, name="scipy.special.gammainc(float a)"),
        # a and x on both sides of x = a (the series and the continued fraction)
        Case(sc.gammainc, lambda rng, dt: (positive(rng, dt, (3, 1), 0.3, 8.0),
                                          positive(rng, dt, (4,), 0.2, 12.0)), dtypes=R,
             name="scipy.special.gammainc(w.r.t. a, broadcast)",
             oracle="jax.scipy.special.gammainc"),
        Case(sc.gammaincc, lambda rng, dt: (positive(rng, dt, (3, 1), 0.3, 8.0),
                                           positive(rng, dt, (4,), 0.2, 12.0)), dtypes=R,
             name="scipy.special.gammaincc(w.r.t. a, broadcast)",
             oracle="jax.scipy.special.gammaincc"),
        Case(sc.gammaincc, lambda rng, dt: (scalar_in(rng, dt, 0.5, 5.0),
                                           scalar_in(rng, dt, 0.5, 5.0)), dtypes=R,
             name="scipy.special.gammaincc(0-d)"),
        Case(sc.gammainc, lambda rng, dt: (np.array([1, 2, 3]), positive(rng, dt, (3,))),
             dtypes=R, name="scipy.special.gammainc(int a)"),
        Case(sc.gammaincc, lambda rng, dt: (np.array([1, 2, 3]), positive(rng, dt, (3,))),
             dtypes=R, name="scipy.special.gammaincc(int a)"),
        Case(sc.zeta, lambda rng, dt: (3.0, positive(rng, dt, (3,), 1.0, 3.0)), dtypes=R,
             name="scipy.special.zeta(x, q)"),
        Case(sc.zeta, lambda rng, dt: (positive(rng, dt, (3, 1), 1.5, 12.0),
                                      positive(rng, dt, (4,), 0.2, 5.0)), dtypes=R,
             name="scipy.special.zeta(w.r.t. x, broadcast)",
             oracle="jax.scipy.special.zeta"),
        Case(sc.zeta, lambda rng, dt: (positive(rng, dt, (4,), 1.5, 8.0),), dtypes=R,
             name="scipy.special.zeta(Riemann)"),
        Case(sc.zeta, lambda rng, dt: (scalar_in(rng, dt, 1.5, 6.0),
                                      scalar_in(rng, dt, 0.5, 3.0)), dtypes=R,
             name="scipy.special.zeta(0-d)"),
        # (SciPy's factorial of float32 is float64, JAX's float32: the oracle row is float64)
        Case(sc.factorial, pos(0.3, 4.0), dtypes=("float64",),
             oracle="jax.scipy.special.factorial"),
        Case(sc.factorial, pos(0.3, 4.0), dtypes=("float32",),
             name="scipy.special.factorial(float32)"),
        Case(sc.factorial, interval(-2.5, 3.0), dtypes=R,
             name="scipy.special.factorial(negative)"),
        Case(sc.factorial, pos(0.3, 3.0), dtypes=("complex128",),
             kwargs={"extend": "complex"}),
        Case(sc.factorial2, pos(0.3, 4.0), dtypes=R, kwargs={"extend": "complex"}),
        Case(sc.factorialk, lambda rng, dt: (positive(rng, dt, (3,), 0.3, 5.0), 3), dtypes=R,
             kwargs={"extend": "complex"}),
        Case(sc.factorial, interval(0.3, 3.0, ()), dtypes=R, name="scipy.special.factorial(0-d)"),
        Case(sc.logsumexp, one(arr)),
        Case(sc.logsumexp, one(arr), kwargs={"axis": 1}),
        Case(sc.logsumexp, one(arr, (2, 3, 2)), kwargs={"axis": (0, 2), "keepdims": True}),
        Case(sc.logsumexp, lambda rng, dt: (arr(rng, dt, (3, 2)), 0, positive(rng, dt, (3, 2))),
             name="scipy.special.logsumexp(a, axis, b)"),
        Case(sc.logsumexp, one(arr), kwargs={"axis": 0, "return_sign": True}),
        Case(sc.softmax, one(arr, (3, 4))),
        Case(sc.softmax, one(arr, (3, 4)), kwargs={"axis": 1}),
        Case(sc.log_softmax, one(arr, (3, 4)), kwargs={"axis": 0}),
        Case(sc.log_softmax, one(arr, (5,))),
        Case(sc.ive, lambda rng, dt: (1, arr(rng, dt, (4,), 0.3, 2.0)), dtypes=R,
             name="scipy.special.ive(int order)"),
        Case(sc.ive, lambda rng, dt: (2, arr(rng, dt, (3,), -2.0, -0.3)), dtypes=R,
             name="scipy.special.ive(int order, negative x)"),
        Case(sc.yn, lambda rng, dt: (np.array([0, 1, 3]), positive(rng, dt, (3,), 0.5, 3.0)),
             dtypes=R),
        Case(sc.expn, lambda rng, dt: (np.array([0, 1, 2, 5]), positive(rng, dt, (4,), 0.3, 3.0)),
             dtypes=R),
        Case(sc.betainc, lambda rng, dt: (no_tangent(np.array([0.5, 2.0, 3.5])),
                                         no_tangent(np.array([1.5, 0.7, 2.0])),
                                         arr(rng, dt, (2, 3), 0.1, 0.9)), dtypes=R),
        Case(sc.betainc, lambda rng, dt: (2.0, 3.0, arr(rng, dt, (3,), 0.1, 0.9)),
             dtypes=("float64",), name="scipy.special.betainc(w.r.t. a, b)",
             xfail="derivative w.r.t. a and b is not_implemented (no stable closed form)"),
        Case(sc.betaincinv, lambda rng, dt: (no_tangent(np.array([0.5, 2.0, 3.5])),
                                            no_tangent(np.array([1.5, 0.7, 2.0])),
                                            arr(rng, dt, (2, 3), 0.1, 0.9)), dtypes=R),
        Case(sc.hyp1f1, lambda rng, dt: (no_tangent(0.7), no_tangent(1.6),
                                        arr(rng, dt, (3, 2), -1.0, 1.0)),
             dtypes=("float64", "float32", "complex128")),
        Case(sc.hyp2f1, lambda rng, dt: (no_tangent(0.7), no_tangent(1.3), no_tangent(2.1),
                                        arr(rng, dt, (3, 2), -0.6, 0.6)),
             dtypes=("float64", "float32", "complex128")),
        Case(sc.hyp2f1, lambda rng, dt: (0.7, 1.3, 2.1, arr(rng, dt, (3,), -0.6, 0.6)),
             dtypes=R, name="scipy.special.hyp2f1(w.r.t. parameters)"),
        Case(sc.hyp2f1, lambda rng, dt: (arr(rng, dt, (3, 1), -1.5, 3.0),
                                        positive(rng, dt, (2, 1, 1), 0.3, 4.0),
                                        positive(rng, dt, (), 0.5, 5.0),
                                        arr(rng, dt, (4,), -0.5, 0.8)), dtypes=R,
             name="scipy.special.hyp2f1(w.r.t. parameters, broadcast)"),
        Case(sc.hyp1f1, lambda rng, dt: (arr(rng, dt, (3, 1), -1.5, 4.0),
                                        positive(rng, dt, (4,), 0.3, 6.0),
                                        arr(rng, dt, (4,), -4.0, 6.0)), dtypes=R,
             name="scipy.special.hyp1f1(w.r.t. parameters)"),
        Case(sc.hyp1f1, lambda rng, dt: (scalar_in(rng, dt, 0.2, 3.0),
                                        scalar_in(rng, dt, 0.5, 4.0),
                                        scalar_in(rng, dt, -2.0, 3.0)), dtypes=R,
             name="scipy.special.hyp1f1(0-d)"),
        Case(sc.rgamma, interval(-2.5, 3.0), dtypes=C),
        Case(sc.poch, lambda rng, dt: (positive(rng, dt, (3, 1), 0.5, 3.0),
                                      arr(rng, dt, (4,), -0.4, 2.0)), dtypes=R),
        Case(multigammaln, lambda rng, dt: (positive(rng, dt, (3,), 2.0, 4.0), 3),
             dtypes=R),
        Case(multigammaln, lambda rng, dt: (scalar_in(rng, dt, 1.5, 3.0), 2),
             dtypes=R, name="scipy.special.multigammaln(0-d)"),
        Case(sc.exp2, interval(-2.0, 2.0), dtypes=R),
        Case(sc.exp10, interval(-1.0, 1.0), dtypes=R),
        Case(sc.sindg, interval(-200.0, 200.0), dtypes=R),
        Case(sc.cosdg, interval(-200.0, 200.0), dtypes=R),
        Case(sc.spence, pos(0.2, 3.0), dtypes=("float64", "float32", "complex128")),
        Case(sc.spence, lambda rng, dt: (np.array([1.0, 0.5], dtype=dt),), dtypes=R,
             name="scipy.special.spence(at 1)"),
        Case(sc.owens_t, lambda rng, dt: (arr(rng, dt, (3, 1), -2.0, 2.0),
                                         arr(rng, dt, (4,), -2.0, 2.0)), dtypes=R),
        Case(sc.fresnel, interval(-1.5, 1.5), dtypes=C),
        Case(sc.sici, pos(0.3, 3.0), dtypes=("float64", "float32", "complex128")),
        Case(sc.boxcox, lambda rng, dt: (positive(rng, dt, (3, 1), 0.3, 3.0),
                                        arr(rng, dt, (4,), -1.0, 1.0)), dtypes=R),
        Case(sc.boxcox, lambda rng, dt: (positive(rng, dt, (3,), 0.3, 3.0),
                                        np.array(0.0, dtype=dt)), dtypes=R,
             name="scipy.special.boxcox(lmbda=0)"),
        Case(sc.boxcox1p, lambda rng, dt: (positive(rng, dt, (3, 1), 0.1, 2.0),
                                          arr(rng, dt, (4,), -1.0, 1.0)), dtypes=R),
        Case(sc.boxcox1p, lambda rng, dt: (positive(rng, dt, (3,), 0.1, 2.0),
                                          np.array(0.0, dtype=dt)), dtypes=R,
             name="scipy.special.boxcox1p(lmbda=0)"),
        Case(sc.inv_boxcox, lambda rng, dt: (arr(rng, dt, (3, 1), -0.5, 1.5),
                                            arr(rng, dt, (4,), -0.5, 0.5)), dtypes=R),
        Case(sc.inv_boxcox, lambda rng, dt: (arr(rng, dt, (3,), -0.5, 1.5),
                                            np.array(0.0, dtype=dt)), dtypes=R,
             name="scipy.special.inv_boxcox(lmbda=0)"),
        Case(sc.inv_boxcox1p, lambda rng, dt: (arr(rng, dt, (3, 1), -0.5, 1.5),
                                              arr(rng, dt, (4,), -0.5, 0.5)), dtypes=R),
        Case(sc.inv_boxcox1p, lambda rng, dt: (arr(rng, dt, (3,), -0.5, 1.5),
                                              np.array(0.0, dtype=dt)), dtypes=R,
             name="scipy.special.inv_boxcox1p(lmbda=0)"),
        # 0-d and empty inputs
        Case(sc.owens_t, lambda rng, dt: (scalar_in(rng, dt, -2.0, 2.0),
                                         scalar_in(rng, dt, 0.2, 2.0)), dtypes=R,
             name="scipy.special.owens_t(0-d)"),
        Case(sc.fresnel, interval(-1.0, 1.0, ()), dtypes=C, name="scipy.special.fresnel(0-d)"),
        Case(sc.boxcox, lambda rng, dt: (positive(rng, dt, (0,)), np.array(0.5, dtype=dt)),
             dtypes=R, name="scipy.special.boxcox(empty)"),
        Case(sc.hyp2f1, lambda rng, dt: (no_tangent(0.7), no_tangent(1.3), no_tangent(2.1),
                                        arr(rng, dt, (0, 2))), dtypes=R,
             name="scipy.special.hyp2f1(empty)"),
    ]
    if hasattr(sc, "sph_harm_y"):
        CASES.append(Case(sc.sph_harm_y, lambda rng, dt: (
            np.array([1, 2, 3]), np.array([0, 1, -2]), arr(rng, dt, (3,), 0.3, 2.8),
            arr(rng, dt, (3,), -3.0, 3.0)), dtypes=R))
    if hasattr(sc, "softplus"):
        CASES.append(Case(sc.softplus, interval(-3.0, 3.0), dtypes=R))

    #: The functions whose main row (no name, no keyword arguments) names
    #: ``jax.scipy.special``'s function of the same name as its oracle (tests/oracles
    #: compares JAX's vjp and jvp with the rules at this table's inputs). Not here:
    #: erf, erfc, ndtr, log_ndtr, exp1 and expi, whose rows are complex too, which
    #: jax.scipy.special does not take (their real rows stay in the JAX table).
    _JAX_SAME_NAME = frozenset({
        "gammaln", "betaln", "erfinv", "ndtri", "expit", "logit", "entr", "rel_entr",
        "kl_div", "i0", "i0e", "i1", "i1e", "xlogy", "xlog1py",
    })
    CASES = [dataclasses.replace(c, oracle=f"jax.scipy.special.{c.f.__name__}")
             if c.name is None and not c.kwargs
             and getattr(c.f, "__name__", None) in _JAX_SAME_NAME else c for c in CASES]
