"""Cases for the rules of ``scipy.integrate`` (``chainrules/rules/scipy/integrate.py``).

``quad`` is differentiated by Leibniz's rule, ``odeint`` and ``solve_ivp`` by adjoints
(reverse) and forward sensitivities (forward). The testers compare them with finite
differences of the integrators themselves, so every row passes tight tolerances:

- ``quad`` with ``epsabs = epsrel = 1e-13``: its result is good to ~1e-13, its finite
  differences to ~1e-9, well within the default tolerance;
- the ODE solvers with ``rtol = atol = 1e-11``: the solution, and the adjoint or
  sensitivity equations the rules integrate at the same tolerances, are good to ~1e-10
  relative to the step control, so the rows use ``rtol=1e-7`` (as the tests of the
  programs in ``tests/rules/test_scipy_integrate.py`` do), and tell the finite
  differences that one solve is good to 1e-10 (``fdm=FDMethod(eps=1e-10)``): their
  steps and error estimates then account for the solver's own error, which machine
  epsilon understated (odeint at seed 22: 1.2e-7 off).

The integrand or right-hand side is ``no_tangent``: the parameters reach the rules
through ``args=``, given positionally, so the testers perturb them. The integrand has no
rule of its own: the testers' config (``ADviaRuleConfig``) differentiates it by finite
differences. float64 only: the integrators compute in float64 whatever they are given.
"""

from __future__ import annotations

import numpy as np

from chainrules.core import Tangent
from chainrules.testing._cases import Case
from chainrules.testing._fd import FDMethod
from chainrules.testing._pairs import no_tangent
from chainrules.testing._rand import rand_tangent

try:
    import scipy.integrate as si
except ImportError:  # the rules exist only with SciPy
    CASES: list[Case] = []
else:
    F64 = ("float64",)
    QUAD_TOL = {"epsabs": 1e-13, "epsrel": 1e-13}
    ODE_TOL = {"rtol": 1e-11, "atol": 1e-11}
    ODE_FD = FDMethod(eps=1e-10)  # one solve's relative accuracy at ODE_TOL

    def integrand(t, k, c):
        return np.exp(-k * t) * np.cos(c * t)

    def lorentzian(t, k):
        # not exp(-k t^2): that underflows to 0 far out, where the testers' finite
        # differences of the integrand cannot pick a step
        return 1.0 / (1.0 + k * t * t)

    def oscillator(y, t, k, c):
        return np.array([y[1], -k * y[0] - c * y[1] + np.sin(t)])

    def pendulum(t, y, k):
        return np.array([y[1], -k * np.sin(y[0])])

    def params(rng, *centres):
        return tuple(c + rng.uniform(-0.05, 0.05) for c in centres)

    def solution_cotangent(rng, dt, y):
        """A cotangent on the solution ``y`` of the result only (times, counts and
        messages are not differentiated)."""
        return Tangent[type(y)]({"y": rand_tangent(y["y"], rng)})

    CASES = [
        Case(si.quad, lambda rng, dt: (no_tangent(integrand), 0.2, 1.5,
                                       params(rng, 0.7, 2.0)),
             kwargs=QUAD_TOL, dtypes=F64),
        # infinite limits get no tangent (a finite-difference step cannot move them)
        Case(si.quad, lambda rng, dt: (no_tangent(lorentzian), no_tangent(-np.inf),
                                       no_tangent(np.inf), params(rng, 0.8)),
             kwargs=QUAD_TOL, dtypes=F64, name="scipy.integrate.quad(infinite)"),
        # w.r.t. the initial state, the parameters and the output times (the first time
        # is the start: moving it moves the whole solution)
        Case(si.odeint, lambda rng, dt: (no_tangent(oscillator),
                                         np.array([1.0, -0.5]) + rng.uniform(-0.1, 0.1, 2),
                                         np.linspace(0.0, 2.0, 5), params(rng, 2.0, 0.3)),
             kwargs=ODE_TOL, rtol=1e-7, atol=1e-9, dtypes=F64, fdm=ODE_FD),
        # the time span and output times are not differentiated (the rule says so)
        Case(si.solve_ivp, lambda rng, dt: (no_tangent(pendulum), no_tangent((0.0, 2.0)),
                                            np.array([1.0, 0.0]) + rng.uniform(-0.1, 0.1, 2),
                                            "DOP853", no_tangent([0.5, 1.0, 2.0]), False, None,
                                            False, params(rng, 1.5)),
             kwargs=ODE_TOL, rtol=1e-7, atol=1e-9, dtypes=F64, fdm=ODE_FD,
             output_tangent=solution_cotangent),
    ]
