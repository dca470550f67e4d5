"""Overhead of the bridges: a bridged ``logsumexp`` against each framework's own.

The bridged function is a NumPy ``logsumexp`` with a hand-written rrule (defined
here, so that what is measured is the bridge, not SciPy's ``logsumexp``, whose
array-API dispatch alone costs about 50x a plain NumPy version at n=100), wrapped
by ``jax_function`` / ``torch_function`` / ``autograd_primitive``. The native one
is ``jax.nn.logsumexp``, ``torch.logsumexp``, ``autograd.scipy.special.logsumexp``.
For each, the primal call and the gradient (``jax.grad``, ``torch.autograd.grad``,
``autograd.grad``) are timed, in eager mode and (JAX) under ``jax.jit``; the rule
itself (``rrule`` + pullback on NumPy arrays) is the floor any bridge pays.

Everything runs in one process, one thread (NumPy, PyTorch and XLA pinned), the
native and bridged versions interleaved repeat by repeat so drifting load hits both
alike; the table shows medians and the ratio bridged / native.

Run: ``python benchmarks/bench_interop.py`` (or ``python benchmarks/run.py interop``);
``--quick`` for fewer repeats.
"""

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
).strip()

import statistics
import sys
import timeit

import numpy as np

from chainrules import NoTangent, rrule

SIZES = (100, 100_000)


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


@rrule.register(logsumexp)
def logsumexp_rrule(x):
    m = np.max(x)
    e = np.exp(x - m)
    total = np.sum(e)
    y = m + np.log(total)

    def logsumexp_pullback(y_bar):
        return NoTangent(), (y_bar / total) * e

    return y, logsumexp_pullback


def _time(fn, number):
    return timeit.Timer(fn).timeit(number=number) / number


def _number_for(fn):
    """Calls per timing so that one timing lasts about 20 ms."""
    fn()
    t = _time(fn, 1)
    return max(1, min(2000, int(0.02 / max(t, 1e-7))))


def compare(native, bridged, repeats):
    n_native, n_bridged = _number_for(native), _number_for(bridged)
    a, b = [], []
    for _ in range(repeats):
        a.append(_time(native, n_native))
        b.append(_time(bridged, n_bridged))
    return statistics.median(a), statistics.median(b)


def cases():
    """(framework, operation, n, native thunk, bridged thunk) for each installed framework."""
    out = []
    rng = np.random.default_rng(0)
    xs = {n: rng.standard_normal(n) for n in SIZES}

    try:
        import jax
        import jax.numpy as jnp

        from chainrules.interop.jax import jax_function
    except ImportError:
        print("jax not installed: skipped", file=sys.stderr)
    else:
        bridged = jax_function(logsumexp)
        native = jax.nn.logsumexp
        for n, x in xs.items():
            xj = jnp.asarray(x, dtype=jnp.float32)
            g_n, g_b = jax.grad(native), jax.grad(bridged)
            jg_n, jg_b = jax.jit(g_n), jax.jit(g_b)
            out += [
                ("jax", "primal (eager)", n, lambda f=native, x=xj: f(x).block_until_ready(),
                 lambda f=bridged, x=xj: f(x).block_until_ready()),
                ("jax", "grad (eager)", n, lambda f=g_n, x=xj: f(x).block_until_ready(),
                 lambda f=g_b, x=xj: f(x).block_until_ready()),
                ("jax", "grad (jit)", n, lambda f=jg_n, x=xj: f(x).block_until_ready(),
                 lambda f=jg_b, x=xj: f(x).block_until_ready()),
            ]

    try:
        import torch

        from chainrules.interop.torch import torch_function
    except ImportError:
        print("torch not installed: skipped", file=sys.stderr)
    else:
        torch.set_num_threads(1)
        t_bridged = torch_function(logsumexp)

        def t_native(x):
            return torch.logsumexp(x, 0)

        def grad_of(f, x):
            x = x.detach().requires_grad_()
            return torch.autograd.grad(f(x), x)[0]

        for n, x in xs.items():
            xt = torch.tensor(x)
            out += [
                ("torch", "primal", n, lambda x=xt: t_native(x), lambda x=xt: t_bridged(x)),
                ("torch", "grad", n, lambda x=xt: grad_of(t_native, x),
                 lambda x=xt: grad_of(t_bridged, x)),
            ]

    try:
        import autograd
        import autograd.scipy.special as ag_special

        from chainrules.interop.autograd import autograd_primitive
    except ImportError:
        print("autograd not installed: skipped", file=sys.stderr)
    else:
        a_bridged = autograd_primitive(logsumexp)
        a_native = ag_special.logsumexp
        ag_n, ag_b = autograd.grad(a_native), autograd.grad(a_bridged)
        for n, x in xs.items():
            out += [
                ("autograd", "primal", n, lambda x=x: a_native(x), lambda x=x: a_bridged(x)),
                ("autograd", "grad", n, lambda x=x: ag_n(x), lambda x=x: ag_b(x)),
            ]

    def rule_floor(x):
        _, pullback = rrule(logsumexp, x)
        return pullback(1.0)

    for n, x in xs.items():
        out.append(("numpy", "rrule+pullback vs primal", n,
                    lambda x=x: logsumexp(x), lambda x=x: rule_floor(x)))
    return out


def main(argv):
    repeats = 5 if "--quick" in argv else 15
    rows = []
    print(f"{'framework':<9} {'operation':<26} {'n':>7} {'native':>11} {'bridged':>11} "
          f"{'ratio':>7}")
    for fw, op, n, native, bridged in cases():
        t_n, t_b = compare(native, bridged, repeats)
        rows.append({"framework": fw, "operation": op, "n": n, "native_s": t_n,
                     "bridged_s": t_b, "ratio": t_b / t_n})
        print(f"{fw:<9} {op:<26} {n:>7} {t_n * 1e6:>9.1f}us {t_b * 1e6:>9.1f}us "
              f"{t_b / t_n:>6.2f}x", flush=True)
    print("\nmedians of interleaved repeats, one thread; ratio = bridged / native. "
          "'numpy' row: the rule alone (rrule + pullback) against the plain primal.")
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
