"""Training loops: plain gradient descent for a fixed number of steps, the whole loop
timed, against autograd, PyTorch eager, ``jax.jit`` and hand-written NumPy gradients.

- ``logreg``: logistic regression, 10^4 x 20 data, weights and bias, 1,000 steps.
- ``mlp_train``: the gradient benchmark's 784-256-10 tanh MLP (squared error over a batch
  of 64), cycling through 16 fixed batches, 1,000 steps (200 with ``--quick``).

Every implementation starts from the same parameters, and all must end at the same
parameters (checked against the hand-written NumPy loop after the timed rounds), so the
benchmark cannot time a different program. ``jax.jit`` compiles one whole update step
(gradient and parameter update); its compile time (the first call, with tracing) is
reported apart and is not in the loop time.
"""

import sys
import time
from collections.abc import Callable

import numpy as np

from _bench_harness import close, fmt, interleave
from chainrules.ad import grad

LR_LOGREG = 1.0
LR_MLP = 0.05


# -- the losses, NumPy (chainrules.ad) first ---------------------------------------------


def logreg_loss(w, b, x, y):
    z = x @ w + b
    return np.mean(np.log1p(np.exp(z)) - y * z)


def hand_logreg(w, b, x, y):
    p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
    r = (p - y) / len(y)
    return x.T @ r, np.sum(r)


def mlp_loss(w1, b1, w2, b2, x, t):
    h = np.tanh(x @ w1 + b1)
    d = h @ w2 + b2 - t
    return np.sum(d * d) / 64.0


def hand_mlp(w1, b1, w2, b2, x, t):
    h = np.tanh(x @ w1 + b1)
    d_out = (h @ w2 + b2 - t) * (2.0 / 64.0)
    d_h = (d_out @ w2.T) * (1.0 - h * h)
    return x.T @ d_h, d_h.sum(axis=0), h.T @ d_out, d_out.sum(axis=0)


# -- loops: each returns the final parameters as NumPy ------------------------------------


def numpy_loop(gradient: Callable, params: tuple, batches: list, steps: int,
               lr: float) -> tuple:
    """Gradient descent with a NumPy gradient function (ours, autograd, hand-written)."""
    n = len(batches)
    for i in range(steps):
        gs = gradient(*params, *batches[i % n])
        params = tuple(p - lr * g for p, g in zip(params, gs))
    return params


def torch_loop(loss: Callable, params: tuple, batches: list, steps: int,
               lr: float) -> tuple:
    import torch

    ps = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
    data = [tuple(torch.tensor(a) for a in batch) for batch in batches]
    n = len(data)
    for i in range(steps):
        gs = torch.autograd.grad(loss(*ps, *data[i % n]), ps)
        with torch.no_grad():
            for p, g in zip(ps, gs):
                p -= lr * g
    return tuple(p.detach().numpy().copy() for p in ps)


def jax_step(loss: Callable, nparams: int, lr: float) -> Callable:
    """One jitted update: gradient and step together, as a JAX user writes it."""
    import jax

    g = jax.grad(loss, argnums=tuple(range(nparams)))

    @jax.jit
    def step(params, batch):
        gs = g(*params, *batch)
        return tuple(p - lr * gi for p, gi in zip(params, gs))

    return step


def jax_loop(step: Callable, params: tuple, batches: list, steps: int) -> tuple:
    import jax.numpy as jnp

    ps = tuple(jnp.asarray(p) for p in params)
    data = [tuple(jnp.asarray(a) for a in batch) for batch in batches]
    n = len(data)
    for i in range(steps):
        ps = step(ps, data[i % n])
    return tuple(np.asarray(p.block_until_ready()) for p in ps)


def _losses(xp) -> dict[str, Callable]:
    """The two losses written against the namespace ``xp`` (``autograd.numpy``,
    ``torch``, ``jax.numpy``): the same maths as ``logreg_loss`` and ``mlp_loss``."""

    def logreg(w, b, x, y):
        z = x @ w + b
        return xp.mean(xp.log1p(xp.exp(z)) - y * z)

    def mlp(w1, b1, w2, b2, x, t):
        d = xp.tanh(x @ w1 + b1) @ w2 + b2 - t
        return xp.sum(d * d) / 64.0

    return {"logreg": logreg, "mlp_train": mlp}


def _peer_losses() -> dict[str, dict[str, Callable]]:
    """The losses for each peer that is installed (for autograd, their gradients)."""
    out: dict[str, dict[str, Callable]] = {}
    try:
        import autograd
        import autograd.numpy as anp

        out["autograd"] = {name: autograd.grad(f, argnum=(0, 1) if name == "logreg"
                                               else (0, 1, 2, 3))
                           for name, f in _losses(anp).items()}
    except ImportError:
        pass
    try:
        import torch

        torch.set_num_threads(1)
        if torch.get_num_interop_threads() != 1:  # settable once, before any work
            torch.set_num_interop_threads(1)
        out["torch eager"] = _losses(torch)
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        out["jax.jit"] = _losses(jnp)
    except ImportError:
        pass
    return out


def _problems(quick: bool) -> dict[str, tuple]:
    """name: (our loss, hand gradient, initial parameters, batches, steps, lr, note)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((10_000, 20))
    w_true = rng.standard_normal(20)
    y = (rng.random(10_000) < 1.0 / (1.0 + np.exp(-(x @ w_true)))).astype(float)
    images = rng.standard_normal((16 * 64, 784))
    targets = rng.standard_normal((16 * 64, 10))
    mlp_batches = [(images[i:i + 64], targets[i:i + 64]) for i in range(0, 16 * 64, 64)]
    mlp_params = (rng.standard_normal((784, 256)) * 0.05, np.zeros(256),
                  rng.standard_normal((256, 10)) * 0.05, np.zeros(10))
    mlp_steps = 200 if quick else 1_000
    return {
        "logreg": (logreg_loss, hand_logreg, (np.zeros(20), 0.0), [(x, y)], 1_000,
                   LR_LOGREG, "10^4 x 20, full batch"),
        "mlp_train": (mlp_loss, hand_mlp, mlp_params, mlp_batches, mlp_steps, LR_MLP,
                      "784-256-10, 16 batches of 64"),
    }


def run(quick: bool, wanted: set[str],
        clock: Callable[[], float] = time.perf_counter) -> int:
    rounds = 3 if quick else 5
    peers = _peer_losses()
    status = 0
    print(f"\ntraining loops: plain gradient descent, {rounds} interleaved rounds of the "
          f"whole loop (medians, {'CPU' if clock is time.process_time else 'wall'} time); "
          "all end at the same parameters")
    print(f"{'program':<11}{'impl':<21}{'loop':>11}{'per step':>12}{'impl/ours':>11}")
    for name, problem in _problems(quick).items():
        if not wanted or name in wanted:
            status |= _train(name, problem, peers, rounds, clock)
    return status


def _train(name: str, problem: tuple, peers: dict, rounds: int,
           clock: Callable[[], float]) -> int:
    """Time one problem's loops, check they end alike, print its rows."""
    loss, hand, params, batches, steps, lr, note = problem
    nparams = len(params)
    ours = grad(loss, argnums=tuple(range(nparams)))
    impls: dict[str, Callable[[], object]] = {}
    finals: dict[str, tuple] = {}

    def timed(label: str, loop: Callable[[], tuple]) -> None:
        impls[label] = lambda: finals.__setitem__(label, loop())

    timed("ours", lambda: numpy_loop(ours, params, batches, steps, lr))
    if "autograd" in peers:
        g = peers["autograd"][name]
        timed("autograd", lambda: numpy_loop(g, params, batches, steps, lr))
    if "torch eager" in peers:
        f = peers["torch eager"][name]
        timed("torch eager", lambda: torch_loop(f, params, batches, steps, lr))
    compile_note = ""
    if "jax.jit" in peers:
        step = jax_step(peers["jax.jit"][name], nparams, lr)
        t0 = clock()
        jax_loop(step, params, batches, 1)
        compile_note = f"; jax.jit compile (first step): {fmt(clock() - t0).strip()}"
        timed("jax.jit", lambda: jax_loop(step, params, batches, steps))
    timed("hand-written NumPy", lambda: numpy_loop(hand, params, batches, steps, lr))
    medians, ratios = interleave(impls, dict.fromkeys(impls, 1), rounds, clock)
    status = 0
    reference = finals["hand-written NumPy"]
    for label, final in finals.items():
        if not close(tuple(np.asarray(p) for p in final), reference, rtol=1e-6, atol=1e-9):
            print(f"  !! {name}: {label} ends at other parameters than the hand-written "
                  "loop", file=sys.stderr)
            status = 1
    for label, t in medians.items():
        print(f"{name:<11}{label:<21}{fmt(t):>11}{fmt(t / steps):>12}"
              f"{ratios[label]:>10.2f}x")
    print(f"  {note}, {steps} steps, lr {lr}: loss {loss(*params, *batches[0]):.6g} -> "
          f"{loss(*reference, *batches[0]):.6g}{compile_note}\n", flush=True)
    return status
