"""The JAX bridge's per-call cost in eager (un-jitted) JAX.

A softplus with rules written against the array API (``xp = array_namespace(x)``),
bridged with ``jax_function`` (native, forward mode: a ``jax.custom_jvp`` from the
frule; and ``mode="reverse"``: a ``jax.custom_vjp`` from the rrule), against a
hand-written ``jax.custom_jvp`` (``custom_vjp`` for the reverse rows) of the same
maths, plain ``jnp`` (no custom derivative) and ``jax.jit`` of the hand-written
function. Timed, on 8 elements, without ``jax.jit`` around the call:

- ``call``: one forward call;
- ``call (new jax_function)``: ``jax_function(softplus)(x)``, a new bridged function
  every call (what a model that wraps inside its ``__call__`` does);
- ``grad``, ``value_and_grad``, ``vjp`` (and calling its pullback), ``jvp``.

The table gives medians and the paired ratio to the hand-written function (target:
<= 1.2x). Everything runs in one process, one thread (XLA and NumPy pinned), the
variants interleaved round by round (``_bench_harness.measure``).

Run: ``python benchmarks/bench_jax_eager.py`` (``--quick`` for fewer rounds).

Results, before and after the native path compiled hot call structures: see
``benchmarks/README.md`` (eager JAX). The bridged call costs less than the
hand-written ``custom_jvp`` because the bridge compiles it (``jit(hand)`` shows what
a compiled call costs); eager ``grad`` because its rule runs as one compiled
operation instead of ten partially evaluated ones.
"""

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
).strip()

import sys

sys.path.insert(0, os.path.dirname(__file__))

from _bench_harness import close, fmt, measure
from chainrules import NoTangent, array_namespace, frule, rrule

N = 8


def softplus(x):
    xp = array_namespace(x)
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, 0.0)


@frule.register(softplus)
def softplus_frule(dargs, x):
    xp = array_namespace(x)
    return softplus(x), dargs[1] / (1 + xp.exp(-x))


@rrule.register(softplus)
def softplus_rrule(x):
    xp = array_namespace(x)

    def softplus_pullback(y_bar):
        return NoTangent(), y_bar / (1 + xp.exp(-x))

    return softplus(x), softplus_pullback


def main(quick: bool = False) -> dict:
    import jax
    import jax.numpy as jnp

    from chainrules.interop.jax import jax_function

    def jnp_softplus(x):
        return jnp.log1p(jnp.exp(-jnp.abs(x))) + jnp.maximum(x, 0.0)

    @jax.custom_jvp
    def hand(x):
        return jnp_softplus(x)

    @hand.defjvp
    def hand_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        return hand(x), x_dot / (1 + jnp.exp(-x))

    @jax.custom_vjp
    def hand_vjp(x):
        return jnp_softplus(x)

    def hand_fwd(x):
        return jnp_softplus(x), x

    def hand_bwd(x, y_bar):
        return (y_bar / (1 + jnp.exp(-x)),)

    hand_vjp.defvjp(hand_fwd, hand_bwd)
    bridged = jax_function(softplus)
    bridged_reverse = jax_function(softplus, mode="reverse")
    hand_jit = jax.jit(hand)
    x = jnp.linspace(-2.0, 2.0, N)

    def grad_of(f):
        return jax.grad(lambda v: jnp.sum(f(v)))

    def value_and_grad_of(f):
        return lambda: jax.value_and_grad(lambda v: jnp.sum(f(v)))(x)[1].block_until_ready()

    def vjp_of(f):
        def run():
            y, pullback = jax.vjp(f, x)
            return pullback(jnp.ones_like(y))[0].block_until_ready()
        return run

    def jvp_of(f):
        return lambda: jax.jvp(f, (x,), (jnp.ones_like(x),))[1].block_until_ready()

    for f, ref in ((bridged, hand), (bridged_reverse, hand_vjp)):
        assert close(f(x), ref(x), rtol=1e-6)
        assert close(grad_of(f)(x), grad_of(ref)(x), rtol=1e-6)
    rounds, min_time = (5, 0.05) if quick else (15, 0.2)
    rows = {}
    for what, impls in {
        "call": {"ours": lambda: bridged(x).block_until_ready(),
                 "hand": lambda: hand(x).block_until_ready(),
                 "jnp": lambda: jnp_softplus(x).block_until_ready(),
                 "jit(hand)": lambda: hand_jit(x).block_until_ready()},
        "call (new jax_function)": {
            "ours": lambda: jax_function(softplus)(x).block_until_ready(),
            "hand": lambda: hand(x).block_until_ready()},
        "grad": {"ours": lambda: grad_of(bridged)(x).block_until_ready(),
                 "hand": lambda: grad_of(hand)(x).block_until_ready(),
                 "jnp": lambda: grad_of(jnp_softplus)(x).block_until_ready()},
        "value_and_grad": {"ours": value_and_grad_of(bridged),
                           "hand": value_and_grad_of(hand)},
        "vjp": {"ours": vjp_of(bridged), "hand": vjp_of(hand)},
        "jvp": {"ours": jvp_of(bridged), "hand": jvp_of(hand)},
        "grad, mode='reverse' *": {
            "ours": lambda: grad_of(bridged_reverse)(x).block_until_ready(),
            "hand": lambda: grad_of(hand_vjp)(x).block_until_ready()},
        "vjp, mode='reverse' *": {"ours": vjp_of(bridged_reverse),
                                  "hand": vjp_of(hand_vjp)},
    }.items():
        medians, ratios = measure(impls, rounds, min_time)
        rows[what] = (medians, ratios)
    print(f"eager JAX, softplus on {N} elements, one thread; ratio = ours / hand-written "
          f"custom_jvp (* custom_vjp), paired medians")
    print(f"{'':26} {'ours':>11} {'hand':>11} {'jnp':>11} {'jit(hand)':>11} "
          f"{'ours/hand':>10}")
    for what, (medians, ratios) in rows.items():
        extra = [fmt(medians[k]) if k in medians else " " * 11 for k in ("jnp", "jit(hand)")]
        print(f"{what:26} {fmt(medians['ours']):>11} {fmt(medians['hand']):>11} "
              f"{extra[0]:>11} {extra[1]:>11} {1 / ratios['hand']:>9.2f}x")
    return rows


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
