"""The reference AD (``chainrules.ad``) against its peers, one gradient per call.

Programs: ``foo(x) = asin(0.2 + sin(x))`` at 3.0 (math module), the loop ``mse`` on 30
elements with and without its rrule, the vectorized ``mse``, ``sum3`` (with and without
its rrule), a 100-op elementwise chain on 10 elements, a 20-op chain on 10^6 elements
and a 784-256-10 MLP loss with batch 64. Peers: HIPS autograd, PyTorch eager, JAX
eager and ``jax.jit``, and hand-written NumPy gradient code.

All implementations run in this one process, interleaved round by round (so drifting
machine load hits all alike), with one thread each (OMP/MKL/OpenBLAS, torch, XLA) and
the same glibc allocator settings (the script re-executes itself with
``MALLOC_MMAP_THRESHOLD_``/``MALLOC_TRIM_THRESHOLD_`` set, so big temporaries are not
re-mapped on every call). It prints the median time per call and the median over rounds of
the paired ratio impl/ours (> 1: ours is faster) and checks that every
implementation computes the same gradient.

Four sections, each of which runs alone with ``--section NAME`` (repeatable):

- ``gradients``: the above, one gradient per call;
- ``first-call`` (``_ad_first_call.py``): ``import`` times and the first ``grad`` /
  ``hessian`` after the import, each in a fresh process, against the same peers;
- ``training`` (``_ad_training.py``): 1,000-step gradient-descent loops (logistic
  regression; the MLP), every implementation checked to end at the same parameters;
- ``layers`` (``_ad_layers.py``): one traced NumPy call's cost, against NumPy alone and
  the rules alone, a profile splitting it among the AD's layers, and the MLP's
  gradient in its forward and backward phases against the hand-written one's.

Run: ``python benchmarks/bench_ad.py [--quick] [--cpu] [--section NAME] [program ...]``
(or ``python benchmarks/run.py ad [options]``). ``--cpu`` times the gradients and
training sections with ``time.process_time`` (this process's CPU time) instead of wall
time: on an overloaded machine wall time mostly measures waiting for a core (the
first-call section reports both always). The programs named filter
the gradients and training sections (``logreg``, ``mlp_train``) and the first-call jobs
(by substring: ``torch``, ``hessian``...).
"""

import os
import sys

_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "MALLOC_MMAP_THRESHOLD_": str(32 * 1024 * 1024),
    "MALLOC_TRIM_THRESHOLD_": str(1024 * 1024 * 1024),
    "JAX_PLATFORMS": "cpu",
}
if any(os.environ.get(k) != v for k, v in _ENV.items()):
    os.environ.update(_ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import importlib.util
import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import chainrules
from _bench_harness import close, fmt, measure
from chainrules import NoTangent, rrule, scoped_rules
from chainrules.ad import grad

HERE = Path(__file__).resolve().parent


def _stopgap() -> None:
    """Rules the built-in set may still lack (registered only where missing)."""
    path = HERE.parent / "tests" / "ad" / "stopgap_rules.py"
    if path.exists():
        spec = importlib.util.spec_from_file_location("chainrules_ad_stopgap", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.ensure()


# ---------------------------------------------------------------------------------------
# The programs, written once for NumPy/math (ours, hand-written) and per peer.


def foo(x):
    return math.asin(0.2 + math.sin(x))


def mse(y, y_hat):
    n = len(y)
    s = 0.0
    for i in range(n):
        s += (y[i] - y_hat[i]) ** 2.0
    return s / n


def mse_vec(y, y_hat):
    return np.mean((y - y_hat) ** 2)


def sum3(a):
    x = a[0]
    y = a[1]
    z = a[2]
    return x + y + z


def chain(x, n_blocks):
    for _ in range(n_blocks):
        x = np.sin(x)
        x = x * 1.01
        x = np.tanh(x)
        x = x + 0.5
    return np.sum(x)


def chain100(x):
    return chain(x, 25)


def chain20(x):
    return chain(x, 5)


def mlp(w1, b1, w2, b2, x, t):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    d = out - t
    return np.sum(d * d) / 64.0


def mse_cr(y, y_hat):
    """``mse`` under another name, so it can have an rrule while ``mse`` has none."""
    return mse(y, y_hat)


def sum3_cr(a):
    return sum3(a)


def mse_rrule(y: np.ndarray, y_hat: np.ndarray):
    """The reference document's rule: the output and gradient in closed form."""
    diff = y - y_hat
    n = len(y)

    def mse_pullback(out_bar):
        g = (2.0 / n) * diff * out_bar
        return NoTangent(), g, -g

    return float(np.dot(diff, diff)) / n, mse_pullback


def sum3_rrule(a: np.ndarray):
    def sum3_pullback(y_bar):
        a_bar = np.zeros(len(a))
        a_bar[:3] += y_bar
        return NoTangent(), a_bar

    return a[0] + a[1] + a[2], sum3_pullback


# -- hand-written NumPy gradients ---------------------------------------------------------


def hand_foo(x):
    s = math.sin(x)
    return math.cos(x) / math.sqrt(1 - (0.2 + s) ** 2)


def hand_mse(y, y_hat):
    g = (2.0 / len(y)) * (y - y_hat)
    return g, -g


def hand_chain(x, n_blocks):
    saved = []
    for _ in range(n_blocks):
        s = np.sin(x)
        saved.append(x)
        x = s * 1.01
        t = np.tanh(x)
        saved.append(t)
        x = t + 0.5
    g = np.ones_like(x)
    for k in range(n_blocks - 1, -1, -1):
        t = saved[2 * k + 1]
        g *= 1.0 - t * t
        g *= 1.01
        g *= np.cos(saved[2 * k])
    return g


def hand_mlp(w1, b1, w2, b2, x, t):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    d_out = (out - t) * (2.0 / 64.0)
    g_w2 = h.T @ d_out
    g_b2 = d_out.sum(axis=0)
    d_h = (d_out @ w2.T) * (1.0 - h * h)
    g_w1 = x.T @ d_h
    g_b1 = d_h.sum(axis=0)
    return g_w1, g_b1, g_w2, g_b2


# ---------------------------------------------------------------------------------------
# Peers


def peers_autograd():
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return None

    def a_foo(x):
        return anp.arcsin(0.2 + anp.sin(x))

    def a_chain(x, n):
        for _ in range(n):
            x = anp.sin(x)
            x = x * 1.01
            x = anp.tanh(x)
            x = x + 0.5
        return anp.sum(x)

    def a_mlp(w1, b1, w2, b2, x, t):
        h = anp.tanh(anp.dot(x, w1) + b1)
        d = anp.dot(h, w2) + b2 - t
        return anp.sum(d * d) / 64.0

    return {
        "foo": (autograd.grad(a_foo), lambda g, a: g(*a)),
        "mse_loop": (autograd.grad(mse, argnum=(0, 1)), lambda g, a: g(*a)),
        "mse_vec": (autograd.grad(lambda y, h: anp.mean((y - h) ** 2), argnum=(0, 1)),
                    lambda g, a: g(*a)),
        "sum3": (autograd.grad(sum3), lambda g, a: g(*a)),
        "chain100": (autograd.grad(lambda x: a_chain(x, 25)), lambda g, a: g(*a)),
        "chain20_1e6": (autograd.grad(lambda x: a_chain(x, 5)), lambda g, a: g(*a)),
        "mlp": (autograd.grad(a_mlp, argnum=(0, 1, 2, 3)), lambda g, a: g(*a)),
    }


def peers_torch():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)

    def leaf(a):
        return torch.tensor(a, dtype=torch.float64, requires_grad=True)

    def t_grad(fn, nargs):
        def run(args):
            ts = [leaf(a) for a in args[:nargs]] + [torch.tensor(a) for a in args[nargs:]]
            fn(*ts).backward()
            out = tuple(t.grad.numpy() for t in ts[:nargs])
            return out if nargs > 1 else out[0]

        return run

    def t_foo(x):
        return torch.asin(0.2 + torch.sin(x))

    def t_chain(x, n):
        for _ in range(n):
            x = torch.sin(x)
            x = x * 1.01
            x = torch.tanh(x)
            x = x + 0.5
        return torch.sum(x)

    def t_mlp(w1, b1, w2, b2, x, t):
        h = torch.tanh(x @ w1 + b1)
        d = h @ w2 + b2 - t
        return torch.sum(d * d) / 64.0

    return {
        "foo": (t_grad(t_foo, 1), lambda g, a: g(a)),
        "mse_loop": (t_grad(mse, 2), lambda g, a: g(a)),
        "mse_vec": (t_grad(lambda y, h: torch.mean((y - h) ** 2), 2), lambda g, a: g(a)),
        "sum3": (t_grad(sum3, 1), lambda g, a: g(a)),
        "chain100": (t_grad(lambda x: t_chain(x, 25), 1), lambda g, a: g(a)),
        "chain20_1e6": (t_grad(lambda x: t_chain(x, 5), 1), lambda g, a: g(a)),
        "mlp": (t_grad(t_mlp, 4), lambda g, a: g(a)),
    }


def peers_jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def j_foo(x):
        return jnp.arcsin(0.2 + jnp.sin(x))

    def j_mse_loop(y, h):
        n = len(y)
        s = 0.0
        for i in range(n):
            s += (y[i] - h[i]) ** 2.0
        return s / n

    def j_chain(x, n):
        for _ in range(n):
            x = jnp.sin(x)
            x = x * 1.01
            x = jnp.tanh(x)
            x = x + 0.5
        return jnp.sum(x)

    def j_mlp(w1, b1, w2, b2, x, t):
        h = jnp.tanh(x @ w1 + b1)
        d = h @ w2 + b2 - t
        return jnp.sum(d * d) / 64.0

    fns = {
        "foo": (j_foo, 0),
        "mse_loop": (j_mse_loop, (0, 1)),
        "mse_vec": (lambda y, h: jnp.mean((y - h) ** 2), (0, 1)),
        "sum3": (lambda a: a[0] + a[1] + a[2], 0),
        "chain100": (lambda x: j_chain(x, 25), 0),
        "chain20_1e6": (lambda x: j_chain(x, 5), 0),
        "mlp": (j_mlp, (0, 1, 2, 3)),
    }

    def block(out):
        return jax.tree_util.tree_map(lambda v: np.asarray(v.block_until_ready()), out)

    eager = {k: (jax.grad(f, argnums=n), lambda g, a: block(g(*a)))
             for k, (f, n) in fns.items()}
    jitted = {k: (jax.jit(jax.grad(f, argnums=n)), lambda g, a: block(g(*a)))
              for k, (f, n) in fns.items()}
    return eager, jitted


def run_gradients(quick: bool, wanted: set[str], clock: Callable[[], float]) -> int:
    """One gradient per call of each program, against every peer."""
    rounds = 9 if quick else 31
    min_time = 0.003 if quick else 0.005
    _stopgap()
    rng = np.random.default_rng(0)
    y30, h30 = rng.random(30), rng.random(30)
    a30 = rng.random(30)
    x10 = rng.random(10)
    x1e6 = rng.random(1_000_000)
    mlp_args = (rng.standard_normal((784, 256)) * 0.05, np.zeros(256),
                rng.standard_normal((256, 10)) * 0.05, np.zeros(10),
                rng.standard_normal((64, 784)), rng.standard_normal((64, 10)))

    programs = {
        "foo": (foo, (3.0,), 0, lambda a: hand_foo(*a), None),
        "mse_loop": (mse, (y30, h30), (0, 1), lambda a: hand_mse(*a), (mse_cr, mse_rrule)),
        "mse_vec": (mse_vec, (y30, h30), (0, 1), lambda a: hand_mse(*a), None),
        "sum3": (sum3, (a30,), 0, None, (sum3_cr, sum3_rrule)),
        "chain100": (chain100, (x10,), 0, lambda a: hand_chain(a[0], 25), None),
        "chain20_1e6": (chain20, (x1e6,), 0, lambda a: hand_chain(a[0], 5), None),
        "mlp": (mlp, mlp_args, (0, 1, 2, 3), lambda a: hand_mlp(*a), None),
    }
    autograd_peers = peers_autograd()
    torch_peers = peers_torch()
    jax_peers = peers_jax()
    print(f"\ngradients: {rounds} interleaved rounds, medians of one gradient "
          f"({'CPU' if clock is time.process_time else 'wall'} time)")
    header = ("program", "impl", "time", "impl/ours")
    print(f"{header[0]:<13}{header[1]:<22}{header[2]:>12}{header[3]:>11}")
    status = 0
    for pname, (f, args, argnums, hand, rule) in programs.items():
        if wanted and pname not in wanted:
            continue
        ours = grad(f, argnums=argnums)
        impls: dict[str, Callable[[], object]] = {"ours": lambda g=ours, a=args: g(*a)}
        reference = ours(*args)
        if rule is not None:
            impls["ours + rrule"] = None  # type: ignore[assignment] -- filled in below
        for label, table in (("autograd", autograd_peers), ("torch eager", torch_peers),
                             ("jax eager", jax_peers and jax_peers[0]),
                             ("jax.jit", jax_peers and jax_peers[1])):
            if table and pname in table:
                g, run = table[pname]
                if label == "jax eager" and pname in ("mse_loop",) and quick:
                    continue
                impls[label] = lambda g=g, run=run, a=args: run(g, a)
        if hand is not None:
            impls["hand-written NumPy"] = lambda hand=hand, a=args: hand(a)
        for label, fn in list(impls.items()):
            if fn is None:
                continue
            got = fn()
            if not close(got, reference):
                print(f"  !! {pname}: {label} disagrees with ours", file=sys.stderr)
                status = 1
        if rule is not None:
            wrapper, rule_fn = rule
            with scoped_rules():
                rrule.register(wrapper)(rule_fn)
                ours_rule = grad(wrapper, argnums=argnums)
                impls["ours + rrule"] = lambda g=ours_rule, a=args: g(*a)
                if not close(impls["ours + rrule"](), reference):
                    print(f"  !! {pname}: ours + rrule disagrees", file=sys.stderr)
                    status = 1
                medians, ratios = measure(impls, rounds, min_time, clock)
        else:
            medians, ratios = measure(impls, rounds, min_time, clock)
        for label, t in medians.items():
            print(f"{pname:<13}{label:<22}{fmt(t):>12}{ratios[label]:>10.2f}x")
        print(flush=True)
    return status


SECTIONS = ("gradients", "first-call", "training", "layers")


def _sections(argv: list[str]) -> tuple[list[str], list[str]]:
    """``--section NAME`` / ``--section=NAME`` (repeatable, or comma-separated) and the
    remaining arguments."""
    picked, rest = [], []
    args = iter(argv)
    for a in args:
        if a == "--section":
            picked += next(args, "").split(",")
        elif a.startswith("--section="):
            picked += a.removeprefix("--section=").split(",")
        else:
            rest.append(a)
    unknown = [p for p in picked if p not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section(s) {unknown}; available: {list(SECTIONS)}")
    return picked or list(SECTIONS), rest


def main(argv: list[str]) -> int:
    sections, rest = _sections(argv)
    quick = "--quick" in rest
    clock = time.process_time if "--cpu" in rest else time.perf_counter
    wanted = {a for a in rest if not a.startswith("--")}
    print(f"chainrules {chainrules.__version__}, numpy {np.__version__}, python "
          f"{sys.version.split()[0]}; {time.strftime('%Y-%m-%d %H:%M %Z')}; "
          f"{os.cpu_count()} CPUs, load average {_load()}", flush=True)
    status = 0
    if "gradients" in sections:
        status |= run_gradients(quick, wanted, clock)
    if "first-call" in sections:
        import _ad_first_call

        status |= _ad_first_call.run(quick, wanted)
    if "training" in sections:
        import _ad_training

        status |= _ad_training.run(quick, wanted, clock)
    if "layers" in sections:
        import _ad_layers

        status |= _ad_layers.run(quick, clock)
    print(f"load average at the end: {_load()}")
    return status


def _load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
