"""The JAX bridge's two backends against the same maths written in ``jnp``.

Two functions with rules written against the array API (``xp = array_namespace(x)``):
``logsumexp`` (elementwise work and a reduction) and ``solve`` (an LU factorisation
that the rules reuse). Each is bridged three ways: ``backend="native"`` with
``mode="forward"`` (``jax.custom_jvp`` from the frule, transposed by JAX),
``backend="native"`` with ``mode="reverse"`` (``jax.custom_vjp`` from the rrule,
pullback closure-converted), and ``backend="callback"`` (the same rules on NumPy
in ``jax.pure_callback``). The reference is the same maths in ``jnp`` (logsumexp's
formula, ``jnp.linalg.solve``). Timed: ``jax.jit(jax.grad(loss))`` and
``jax.jit(jax.vmap(jax.grad(loss)))``; the table gives medians and the ratio to
``jnp``. Targets (DESIGN.md section 7): jit(grad) <= 1.2x, vmap(grad) <= 1.5x.

It also counts LU factorisations in the jaxpr of ``jit(grad)`` of the solve: one
means the factorisation computed in the forward pass is reused by the backward pass.

Everything runs in one process, one thread (XLA and NumPy pinned), the variants
interleaved repeat by repeat.

Run: ``python benchmarks/bench_jax_native.py`` (or ``python benchmarks/run.py
jax_native``); ``--quick`` for fewer repeats.
"""

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
).strip()

import re
import statistics
import sys
import timeit

import numpy as np

from chainrules import NoTangent, Thunk, array_namespace, frule, rrule

BATCH = 64


def logsumexp(x):
    xp = array_namespace(x)
    m = xp.max(x)
    return m + xp.log(xp.sum(xp.exp(x - m)))


def _lse_parts(x):
    # one exp pass serves the value and the derivative (softmax = e / total)
    xp = array_namespace(x)
    m = xp.max(x)
    e = xp.exp(x - m)
    total = xp.sum(e)
    return m + xp.log(total), e, total


@frule.register(logsumexp)
def logsumexp_frule(dargs, x):
    y, e, total = _lse_parts(x)
    return y, array_namespace(x).sum(e * dargs[1]) / total


@rrule.register(logsumexp)
def logsumexp_rrule(x):
    y, e, total = _lse_parts(x)

    def logsumexp_pullback(y_bar):
        return NoTangent(), (y_bar / total) * e

    return y, logsumexp_pullback


def _scipy_linalg(xp):
    if "jax" in xp.__name__:
        import jax.scipy.linalg

        return jax.scipy.linalg
    import scipy.linalg

    return scipy.linalg


def solve(A, b):
    sla = _scipy_linalg(array_namespace(A, b))
    return sla.lu_solve(sla.lu_factor(A), b)


@frule.register(solve)
def solve_frule(dargs, A, b):
    sla = _scipy_linalg(array_namespace(A, b))
    lu = sla.lu_factor(A)
    x = sla.lu_solve(lu, b)
    return x, sla.lu_solve(lu, dargs[2] - dargs[1] @ x)


@rrule.register(solve)
def solve_rrule(A, b):
    xp = array_namespace(A, b)
    sla = _scipy_linalg(xp)
    lu = sla.lu_factor(A)
    x = sla.lu_solve(lu, b)

    def solve_pullback(y_bar):
        b_bar = sla.lu_solve(lu, y_bar, trans=1)
        return NoTangent(), Thunk(lambda: -b_bar[:, None] * x[None, :]), b_bar

    return x, solve_pullback


def _time(fn, number):
    return timeit.Timer(fn).timeit(number=number) / number


def _number_for(fn):
    """Calls per timing so that one timing lasts about 20 ms."""
    fn()
    t = _time(fn, 1)
    return max(1, min(2000, int(0.02 / max(t, 1e-7))))


def compare(fns, repeats):
    numbers = [_number_for(f) for f in fns]
    times = [[] for _ in fns]
    for _ in range(repeats):
        for f, n, ts in zip(fns, numbers, times):
            ts.append(_time(f, n))
    return [statistics.median(ts) for ts in times]


def count_lu(jaxpr):
    return len(re.findall(r"= lu\b|\blu\[", str(jaxpr)))


def main(argv):
    import jax
    import jax.numpy as jnp

    from chainrules.interop.jax import jax_function

    jax.config.update("jax_enable_x64", True)
    repeats = 5 if "--quick" in argv else 15
    rng = np.random.default_rng(0)
    variants = {
        "native forward": ("native", "forward"),
        "native reverse": ("native", "reverse"),
        "callback": ("callback", "reverse"),
    }
    rows = []

    def jnp_logsumexp(x):
        m = jax.lax.stop_gradient(jnp.max(x))
        return m + jnp.log(jnp.sum(jnp.exp(x - m)))

    def problems():
        for n in (100, 100_000):
            x = jnp.asarray(rng.standard_normal(n))
            xs = jnp.asarray(rng.standard_normal((BATCH, min(n, 1000))))
            yield f"logsumexp n={n}", (lambda f: lambda v: f(v) ** 2), jnp_logsumexp, \
                logsumexp, (x,), (xs,)
        n = 32
        A = jnp.asarray(rng.standard_normal((n, n)) + n * np.eye(n))
        b = jnp.asarray(rng.standard_normal(n))
        As = jnp.asarray(rng.standard_normal((BATCH, n, n)) + n * np.eye(n))
        bs = jnp.asarray(rng.standard_normal((BATCH, n)))
        yield f"solve n={n}", (lambda f: lambda A, b: jnp.sum(f(A, b) ** 2)), \
            lambda A, b: jnp.linalg.solve(A, b), solve, (A, b), (As, bs)

    print(f"{'problem':<22} {'transform':<11} {'variant':<15} {'time':>11} {'ratio':>7}  "
          f"{'LU in jit(grad)':>15}")
    for name, loss_of, ref, f, args, batched in problems():
        argnums = tuple(range(len(args)))
        fns = {"jnp": ref, **{v: jax_function(f, backend=backend, mode=mode)
                              for v, (backend, mode) in variants.items()}}
        for transform in ("jit(grad)", "vmap(grad)"):
            thunks, lus = [], []
            for fn in fns.values():
                g = jax.grad(loss_of(fn), argnums=argnums)
                if transform == "jit(grad)":
                    h = jax.jit(g)
                    thunks.append(lambda h=h, a=args: jax.block_until_ready(h(*a)))
                    lus.append(count_lu(jax.make_jaxpr(h)(*args)))
                else:
                    h = jax.jit(jax.vmap(g))
                    thunks.append(lambda h=h, a=batched: jax.block_until_ready(h(*a)))
                    lus.append(None)
            times = compare(thunks, repeats)
            for (variant, _), t, lu in zip(fns.items(), times, lus):
                ratio = t / times[0]
                lu_text = "" if lu is None or not name.startswith("solve") else str(lu)
                rows.append({"problem": name, "transform": transform, "variant": variant,
                             "time_s": t, "ratio": ratio, "lu": lu})
                print(f"{name:<22} {transform:<11} {variant:<15} {t * 1e6:>9.1f}us "
                      f"{ratio:>6.2f}x  {lu_text:>15}", flush=True)
    print(f"\nmedians of interleaved repeats, one thread, float64; ratio = variant / jnp; "
          f"vmap(grad) over a batch of {BATCH} (logsumexp rows of 1000 at most), "
          f"under jax.jit.")
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
