"""Cases for the solver rules of ``scipy.optimize`` (``chainrules/rules/scipy/optimize.py``).

The rules differentiate the solution by the implicit function theorem; the testers
compare them with finite differences of the solver itself. Both are only as exact as
the solve, so every row passes a tight solver tolerance (``xtol``, ``tol``,
``options``), and its tester tolerance follows from it:

- roots are found to ~1e-14 where the function crosses zero with a slope of order one,
  so finite differences of the solver are good to ~1e-9 (the default tolerance holds);
- a minimizer is found to ~sqrt(eps) in ``x`` only where ``f`` is flat (``minimize_scalar``
  with Brent's method stops at ``xtol * |x|``, ~1e-12 here): finite differences of it
  carry that error divided by the step, hence ``rtol=1e-5`` on those rows;
- the user's function has no rule of its own: the testers' config differentiates it by
  finite differences (``ADviaRuleConfig``), and the minimum rules take second
  derivatives of it that way (finite differences of finite differences, ~1e-7 good),
  which also bounds their rows' tolerance.

The function argument is ``no_tangent``: what the solution depends on reaches the rule
through SciPy's ``args=`` (given positionally, so the testers perturb it).
float32 rows run where the solver keeps the parameters' dtype (the scalar roots).
"""

from __future__ import annotations

import numpy as np

from chainrules.core import Tangent
from chainrules.testing._cases import Case
from chainrules.testing._pairs import no_tangent
from chainrules.testing._rand import rand_tangent

try:
    import scipy.optimize as so
except ImportError:  # the rules exist only with SciPy
    CASES: list[Case] = []
else:
    R = ("float64", "float32")

    def cubic(t, a, b):
        return t ** 3 + b * t - a

    def cubic_slope(t, a, b):
        return 3 * t * t + b

    def params(rng, dt, *centres):
        """Parameters near ``centres`` (a small random offset), as a tuple for ``args``."""
        return tuple(dt.type(c + rng.uniform(-0.05, 0.05)) for c in centres)

    def end(dt, t):
        """A bracket's end: perturbed in float64 (the root does not move with it); in
        float32 the solve is only good to ~1e-7, finite differences w.r.t. the end see that
        noise, so it gets no tangent there."""
        return no_tangent(t) if dt == np.float32 else t

    def bracketed(solver, **kw):
        return Case(solver, lambda rng, dt: (no_tangent(cubic), end(dt, 0.0), end(dt, 3.0),
                                             params(rng, dt, 2.0, 0.5)),
                    kwargs={"xtol": 1e-14, **kw}, dtypes=R)

    def fields(*names):
        """An output cotangent on the differentiated fields of a result object only."""
        def result_cotangent(rng, dt, y):
            return Tangent[type(y)]({n: rand_tangent(y[n], rng) for n in names})
        return result_cotangent

    def scalar_bowl(t, a, c):
        return np.cosh(t - a) + c * t * t

    def bowl(x, a, w):
        return np.sum(w * np.cosh(x - a)) + np.sum(x ** 2) + 0.5 * x[0] * x[1]

    def bowl_gradient(x, a, w):
        return w * np.sinh(x - a) + 2 * x + 0.5 * np.array([x[1], x[0]])

    def quadratic(x, a, w):
        return np.sum(w * (x - a) ** 2) + 0.5 * x[0] * x[1] + np.sum(np.sin(a) * x)

    def quadratic_gradient(x, a, w):
        return 2 * w * (x - a) + 0.5 * np.array([x[1], x[0]]) + np.sin(a)

    def quadratic_hessian(x, a, w):
        return np.diag(2 * w) + 0.5 * np.array([[0.0, 1.0], [1.0, 0.0]])

    def vector_params(rng, dt):
        return (np.asarray(rng.uniform(-0.5, 0.5, 2), dt),
                np.asarray(rng.uniform(1.0, 2.0, 2), dt))

    def system(x, a):
        return np.array([x[0] ** 3 + x[1] - a[0], x[1] ** 3 - x[0] - a[1]])

    TS = np.linspace(0.0, 1.0, 6)

    def residuals(p, k, d):
        return p[0] * np.exp(-k * TS) + p[1] * TS - d

    def residual_jacobian(p, k, d):
        return np.stack([np.exp(-k * TS), TS], axis=1)

    def contraction(x, a, b):
        return np.cos(x) * a + b

    CASES = [
        *(bracketed(s) for s in (so.brentq, so.brenth, so.ridder, so.bisect)),
        bracketed(so.toms748),
        bracketed(so.brentq, full_output=True),
        # newton: x0 and fprime get zero cotangents (the root does not depend on them)
        Case(so.newton, lambda rng, dt: (no_tangent(cubic), 1.0, no_tangent(cubic_slope),
                                         params(rng, dt, 2.0, 0.5)),
             kwargs={"tol": 1e-14}, dtypes=R),
        Case(so.newton, lambda rng, dt: (no_tangent(cubic), 1.0, None,
                                         params(rng, dt, 2.0, 0.5)),
             kwargs={"tol": 1e-14}, dtypes=("float64",),
             name="scipy.optimize.newton(secant)"),
        Case(so.root_scalar, lambda rng, dt: (no_tangent(cubic), params(rng, dt, 2.0, 0.5)),
             kwargs={"bracket": (0.0, 3.0), "xtol": 1e-14}, dtypes=R),
        # Brent's minimizer stops at xtol * |x|, but a minimum is located only to
        # ~sqrt(eps) ~ 1.5e-8 where f is flat: finite differences of the solution (steps
        # ~1e-4) carry ~1e-4 of relative noise, as the seed sweeps show (1e-4 failed at 2
        # seeds in 10), hence rtol=5e-4
        Case(so.minimize_scalar, lambda rng, dt: (no_tangent(scalar_bowl), None, None,
                                                  params(rng, dt, 1.0, 0.3)),
             kwargs={"options": {"xtol": 1e-12}}, rtol=5e-4, atol=1e-6),
        # the bounded method stops at ~1e-9: the bounds (inactive) get no tangent, finite
        # differences w.r.t. them would see that noise only
        Case(so.minimize_scalar, lambda rng, dt: (no_tangent(scalar_bowl), None,
                                                  no_tangent((-3.0, 3.0)),
                                                  params(rng, dt, 1.0, 0.3)),
             kwargs={"method": "bounded", "options": {"xatol": 1e-12}}, rtol=5e-4, atol=1e-6,
             dtypes=("float64",), name="scipy.optimize.minimize_scalar(method='bounded')"),
        # Newton-CG on a function quadratic in x (nonlinear in the parameters) converges
        # to rounding; its result holds the minimizer, the minimum and the gradient there
        # (zero, whatever the parameters), all three checked
        Case(so.minimize, lambda rng, dt: (no_tangent(quadratic), no_tangent(np.zeros(2)),
                                           vector_params(rng, dt), "Newton-CG",
                                           no_tangent(quadratic_gradient),
                                           no_tangent(quadratic_hessian)),
             # (the gradient field is zero up to the solve's stopping noise, ~1e-8, which
             # finite differences divide by their step: atol=1e-4)
             kwargs={"options": {"xtol": 1e-14}}, rtol=1e-5, atol=1e-4, dtypes=("float64",)),
        # a function not quadratic in x; BFGS's result holds an inverse Hessian too, which
        # the rule does not differentiate: only the reverse rule is checked, with
        # cotangents on x and fun
        # (the start x0 is not a parameter: finite differences w.r.t. it see only noise;
        # gtol=1e-7: tighter, BFGS's line search stops with "precision loss" at some
        # seeds (1e-8 at seed 52); the solution then carries ~1e-7 of error, ~1e-3 relative in its
        # finite differences, hence rtol=1e-3)
        Case(so.minimize, lambda rng, dt: (no_tangent(bowl), no_tangent(np.zeros(2)),
                                           vector_params(rng, dt), "BFGS",
                                           no_tangent(bowl_gradient)),
             kwargs={"options": {"gtol": 1e-7}}, rtol=1e-3, atol=1e-5, dtypes=("float64",),
             frule=False, output_tangent=fields("x", "fun"),
             name="scipy.optimize.minimize(method='BFGS')"),
        # the start x0 is not a parameter (the root does not depend on it): finite
        # differences w.r.t. it would see only the solver's stopping noise
        Case(so.root, lambda rng, dt: (no_tangent(system), no_tangent(np.ones(2)),
                                       (np.asarray([2.0, 1.0]) + rng.uniform(-0.1, 0.1, 2),)),
             kwargs={"method": "df-sane", "options": {"fatol": 1e-15, "ftol": 0}},
             rtol=1e-6, atol=1e-8, dtypes=("float64",),
             name="scipy.optimize.root(method='df-sane')"),
        # hybr's result holds its factorization (fjac, r, qtf), not differentiated
        Case(so.root, lambda rng, dt: (no_tangent(system), np.ones(2),
                                       (np.asarray([2.0, 1.0]) + rng.uniform(-0.1, 0.1, 2),)),
             kwargs={"tol": 1e-13}, rtol=1e-6, atol=1e-8, dtypes=("float64",), frule=False,
             output_tangent=fields("x"), name="scipy.optimize.root(method='hybr')"),
        # linear in p with an exact Jacobian: the solver converges to rounding; the
        # tolerances and options after x0 are not perturbed (they are not parameters)
        Case(so.least_squares, lambda rng, dt: (
            no_tangent(residuals), np.array([1.0, 1.0]), no_tangent(residual_jacobian),
            no_tangent((-np.inf, np.inf)), "trf", no_tangent(1e-15), no_tangent(1e-15),
            no_tangent(1e-15), None, "linear", no_tangent(1.0), None, None, None, None, None,
            0, (1.2 + rng.uniform(-0.05, 0.05), np.exp(-1.3 * TS) + 0.05 * np.sin(7 * TS))),
             frule=False, rtol=1e-6, atol=1e-8, dtypes=("float64",),
             output_tangent=fields("x", "cost")),
        Case(so.fixed_point, lambda rng, dt: (no_tangent(contraction), np.array([0.5, 0.2]),
                                              (1.0 + rng.uniform(-0.05, 0.05),
                                               np.array([0.1, 0.3]))),
             kwargs={"xtol": 1e-14}, frule=False, rtol=1e-6, atol=1e-8, dtypes=("float64",)),
    ]
