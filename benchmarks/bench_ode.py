"""One gradient of an ODE loss against one forward solve (issue #29).

Lotka-Volterra with 6 parameters (4 rates and the 2 initial populations), 21 noisy
observations over ``[0, 10]``, a sum-of-squares loss, solved by ``scipy.integrate.odeint``
(LSODA) and ``solve_ivp`` (RK45), at ``rtol=1e-6, atol=1e-9`` and at each solver's
defaults. For each, in one process with interleaved rounds (``_bench_harness``):

- ``solve``: the loss (one forward solve), the unit of the ratios;
- ``grad``: ``chainrules.ad.grad`` of the loss (the rule's Chebyshev-collocation
  sensitivities, the right-hand side traced once on all the points,
  `chainrules.rules.scipy._ode_batched`);
- ``adjoint``: the same gradient by the adjoint method the rule falls back to (what
  every gradient cost before: a dense re-solve and a backward solve per output
  interval, one traced evaluation per step);
- ``fd``: central finite differences (12 solves);
- ``jax``: ``jax.grad`` of the same loss written with ``jax.experimental.ode.odeint``
  (its own adaptive Dormand-Prince and adjoint, jit-compiled, float64), when JAX is
  installed; for reference only (a different solver).

It first checks the gradients at ``rtol=1e-8``: ours against the adjoint, central
differences and JAX (relative error printed).

One thread (OMP/MKL/OpenBLAS, XLA), set before NumPy is imported.

Run: ``python benchmarks/bench_ode.py [--quick] [--cpu]``; ``--fit`` times an L-BFGS-B fit
with the AD's gradient against SciPy's finite differences instead; ``--higher`` times
forward mode and the Hessian.
"""

import os
import sys

_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
        "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}
if any(os.environ.get(k) != v for k, v in _ENV.items()):
    os.environ.update(_ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import time  # (E402 is ignored for benchmarks: the environment comes first)
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.integrate as si

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_harness import fmt, measure
from chainrules.ad import grad
from chainrules.rules.scipy import integrate_ode

TS = np.linspace(0.0, 10.0, 21)
P0 = np.array([1.5, 1.0, 3.0, 1.0, 1.0, 1.0])  # a, b, c, d, x0, z0
P = P0 * 1.05


def lotka_volterra(y, t, a, b, c, d):
    x, z = y[0], y[1]
    return np.array([a * x - b * x * z, -c * z + d * x * z])


def lotka_volterra_tfirst(t, y, a, b, c, d):
    return lotka_volterra(y, t, a, b, c, d)


DATA = si.odeint(lotka_volterra, P0[4:], TS, args=tuple(P0[:4]), rtol=1e-10, atol=1e-12) * (
    1.0 + 0.05 * np.random.default_rng(0).standard_normal((len(TS), 2)))


def odeint_loss(tol: dict) -> Callable:
    def loss(p):
        Y = si.odeint(lotka_volterra, p[4:], TS, args=(p[0], p[1], p[2], p[3]), **tol)
        return np.sum((Y - DATA) ** 2)
    return loss


def solve_ivp_loss(tol: dict) -> Callable:
    def loss(p):
        res = si.solve_ivp(lotka_volterra_tfirst, (0.0, 10.0), p[4:], t_eval=TS,
                           args=(p[0], p[1], p[2], p[3]), **tol)
        return np.sum((res.y.T - DATA) ** 2)
    return loss


def central(loss: Callable, p: np.ndarray, h: float = 1e-6) -> np.ndarray:
    e = np.eye(len(p)) * h
    return np.array([(loss(p + e[i]) - loss(p - e[i])) / (2 * h) for i in range(len(p))])


def adjoint_grad(loss: Callable) -> Callable:
    g = grad(loss)

    def by_adjoint(p):
        saved = integrate_ode._MAX_UNKNOWNS
        integrate_ode._MAX_UNKNOWNS = 0  # the collocation's size limit: always the adjoint
        try:
            return g(p)
        finally:
            integrate_ode._MAX_UNKNOWNS = saved
    return by_adjoint


def jax_grad(tol: dict) -> Callable | None:
    try:
        import jax
        import jax.numpy as jnp
        from jax.experimental.ode import odeint
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    ts, data = jnp.asarray(TS), jnp.asarray(DATA)

    def rhs(y, t, a, b, c, d):
        return jnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])

    def loss(p):
        Y = odeint(rhs, p[4:], ts, p[0], p[1], p[2], p[3], rtol=tol.get("rtol", 1.4e-8),
                   atol=tol.get("atol", 1.4e-8))
        return jnp.sum((Y - data) ** 2)

    g = jax.jit(jax.grad(loss))
    return lambda p: np.asarray(g(jnp.asarray(p)))


def check() -> None:
    tight = {"rtol": 1e-8, "atol": 1e-10}
    for name, make in [("odeint", odeint_loss), ("solve_ivp", solve_ivp_loss)]:
        loss = make(tight)
        ours = grad(loss)(P)
        scale = np.max(np.abs(ours))
        peers = {"adjoint": adjoint_grad(loss)(P), "central differences": central(loss, P)}
        jg = jax_grad(tight)
        if jg is not None:
            peers["jax odeint"] = jg(P)
        for peer, g in peers.items():
            print(f"  {name} rtol=1e-8: relative difference to {peer}: "
                  f"{np.max(np.abs(ours - g)) / scale:.1e}")


def fit() -> None:
    """A fit by BFGS from 10% off, with the AD's gradient against SciPy's own finite
    differences (odeint, rtol 1e-6): wall time, evaluations, final loss."""
    import scipy.optimize as so

    from chainrules.ad import value_and_grad

    loss = odeint_loss({"rtol": 1e-6, "atol": 1e-9})
    start = P0 * 1.1
    print("\nfit (L-BFGS-B from 10% off, odeint rtol 1e-6):")
    bounds = [(0.2, 5.0)] * len(start)
    for name, run in [
        ("chainrules value_and_grad", lambda: so.minimize(
            value_and_grad(loss), start, jac=True, method="L-BFGS-B", bounds=bounds)),
        ("finite differences (SciPy)", lambda: so.minimize(
            loss, start, method="L-BFGS-B", bounds=bounds)),
    ]:
        t = time.perf_counter()
        res = run()
        wall = time.perf_counter() - t
        print(f"  {name:28s} {wall:6.2f} s  nfev {res.nfev:4d}  nit {res.nit:3d}  "
              f"loss {res.fun:.6g}  success {res.success}")


def higher() -> None:
    """Forward mode and second derivatives (``--higher``): one ``jvp`` of the solution,
    a forward ``jacobian`` of it and the loss's ``hessian`` (6 x 6), wall time of one
    call after a warm-up, checked for symmetry."""
    from chainrules.ad import hessian, jacobian, jvp

    tol = {"rtol": 1e-8, "atol": 1e-10}
    args = lambda p: (p[0], p[1], p[2], p[3])  # noqa: E731
    solutions = {
        "odeint": lambda p: si.odeint(lotka_volterra, p[4:], TS, args=args(p), **tol),
        "solve_ivp": lambda p: si.solve_ivp(lotka_volterra_tfirst, (0.0, 10.0), p[4:],
                                            t_eval=TS, args=args(p), **tol).y.T,
    }
    losses = {"odeint": odeint_loss(tol), "solve_ivp": solve_ivp_loss(tol)}
    print("\nforward mode and second derivatives (rtol 1e-8), one call after a warm-up:")
    for name, solution in solutions.items():
        loss = losses[name]
        one_solve = _wall(lambda s=solution: s(P))
        t_jvp = _wall(lambda s=solution: jvp(s, (P,), (np.ones(6),)))
        t_jac = _wall(lambda s=solution: jacobian(s)(P))
        H = hessian(loss)(P)
        t_hess = _wall(lambda loss=loss: hessian(loss)(P))
        asym = np.max(np.abs(H - H.T)) / np.max(np.abs(H))
        print(f"  {name:10s} solve {fmt(one_solve)}  jvp {fmt(t_jvp)}  "
              f"jacobian {fmt(t_jac)}  hessian {fmt(t_hess)} (asymmetry {asym:.0e})")


def _wall(f: Callable) -> float:
    f()
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main() -> None:
    if "--fit" in sys.argv:
        fit()
        return
    if "--higher" in sys.argv:
        higher()
        return
    quick = "--quick" in sys.argv
    clock = time.process_time if "--cpu" in sys.argv else time.perf_counter
    rounds, min_time = (3, 0.1) if quick else (7, 0.3)
    print("gradient checks")
    check()
    print(f"\nLotka-Volterra, 6 parameters, 21 outputs; {rounds} rounds, medians; "
          f"ratios: time / one solve (paired per round)")
    cases = [("odeint", odeint_loss, {"rtol": 1e-6, "atol": 1e-9}, "rtol=1e-6"),
             ("odeint", odeint_loss, {}, "defaults"),
             ("solve_ivp RK45", solve_ivp_loss, {"rtol": 1e-6, "atol": 1e-9}, "rtol=1e-6"),
             ("solve_ivp RK45", solve_ivp_loss, {}, "defaults")]
    for name, make, tol, label in cases:
        loss = make(tol)
        # the harness divides by impls["ours"]: here the solve, the unit of the ratios
        impls = {"ours": lambda loss=loss: loss(P), "grad": grad(loss),
                 "adjoint": adjoint_grad(loss), "fd": lambda loss=loss: central(loss, P)}
        jg = jax_grad(tol) if name == "odeint" else None
        if jg is not None:
            impls["jax"] = jg
        fns = {k: f if k in ("ours", "fd") else (lambda f=f: f(P)) for k, f in impls.items()}
        medians, ratios = measure(fns, rounds, min_time, clock)
        print(f"\n{name} ({label}): one solve {fmt(medians['ours'])}")
        for k in ("grad", "adjoint", "fd", "jax"):
            if k in medians:
                print(f"  {k:8s} {fmt(medians[k])}  {ratios[k]:7.1f} x solve")

if __name__ == "__main__":
    main()
