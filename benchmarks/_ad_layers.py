"""Where one traced NumPy call's time goes in the reference AD (issue #16).

The program is a chain of ``n`` elementwise calls on 10 float64 elements (``np.sin``,
``* 1.01``, ``np.tanh``, ``+ 0.5``, repeated, as in ``chain100``). Per call, in one
process, interleaved round by round (medians):

- **NumPy forward**: the four NumPy calls themselves;
- **hand-written gradient**: forward and backward in NumPy (``hand_chain``), the floor;
- **rules, no AD**: ``rrule`` of each call through the rule table, then its pullback:
  what the rules cost when an AD calls them with no tracing of its own;
- **grad**: ``grad(chain)``, per call (the slope between two chain lengths, so the
  fixed cost of ``grad`` itself is left out), and its two halves: **recording** (``vjp``
  without calling the pullback: the forward NumPy call, dispatch, the rule lookup, the
  tape entry and the tracer) and **backward** (the pullback: the partials, the product
  with the cotangent and its accumulation);
- **jvp**: ``jvp(chain)``, the same for forward mode.

Last, the MLP of the gradients section in two phases, forward and backward, each
against the hand-written gradient's.

Then a profile (``cProfile``) of ``grad`` splits its per-call time among the AD's
layers by the functions' own time: call dispatch (``ad/_dispatch.py``), the tracer
(``ad/_tracer.py``), recording and running the tape (``ad/_reverse.py``), the rules'
and partials' Python code (``chainrules/rules``, ``core``), and NumPy itself (time
spent in NumPy's C code is charged to the Python function that called it). Profiling
slows Python code more than C code, so the split is a guide, not a measurement; the
per-call figures above it are measured without the profiler. The C tape's recording
(``ad/_tape.c``: the dispatch point, the operators and ``x[i]`` of tracers) is invisible
to ``cProfile``, which sees only built-in functions: its time, and that of the NumPy
calls it makes, is charged to the program that calls it.
"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable

import numpy as np

from _bench_harness import fmt, measure
from bench_ad import chain as _chain
from bench_ad import hand_chain as _hand_grad
from chainrules import rrule
from chainrules.ad import grad, jvp, vjp

_X = np.linspace(0.1, 1.0, 10)


def _numpy_forward(x, n_blocks):
    for _ in range(n_blocks):
        x = np.tanh(np.sin(x) * 1.01) + 0.5
    return np.sum(x)


def _rules_only(x, n_blocks):
    pullbacks = []
    for _ in range(n_blocks):
        for f, args in ((np.sin, ()), (np.multiply, (1.01,)), (np.tanh, ()),
                        (np.add, (0.5,))):
            x, pb = rrule(f, x, *args)
            pullbacks.append(pb)
    g = np.ones_like(x)
    for pb in reversed(pullbacks):
        g = pb(g)[1]
    return g


_GROUPS = (
    ("call dispatch (ad/_dispatch.py)", ("chainrules/ad/_dispatch.py",)),
    ("tracer (ad/_tracer.py)", ("chainrules/ad/_tracer.py", "chainrules/ad/_tree.py")),
    ("tape: record and run (ad/_reverse.py)", ("chainrules/ad/_reverse.py",)),
    ("grad's entry and exit (ad/_api.py)", ("chainrules/ad/_api.py",)),
    ("rules and partials (rules/, core/)", ("chainrules/rules/", "chainrules/core/")),
    ("the program itself, and the C tape's recording (ad/_tape.c)", ("_ad_layers.py",)),
    ("the C tape's backward loop (ad/_tape.c)", ("chainrules.ad._tape",)),
)


def _profile_split(n_blocks: int, reps: int) -> list[tuple[str, float]]:
    g = grad(_chain)
    g(_X, n_blocks)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(reps):
        g(_X, n_blocks)
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    totals: dict[str, float] = {}
    for (filename, _, name), (_, _, tottime, _, _) in stats.items():
        label = "other (NumPy's Python wrappers, builtins)"
        for group, parts in _GROUPS:
            if any(p in filename or p in name for p in parts):
                label = group
                break
        totals[label] = totals.get(label, 0.0) + tottime
    whole = sum(totals.values())
    return sorted(((k, v / whole) for k, v in totals.items()), key=lambda kv: -kv[1])


def run(quick: bool, clock: Callable[[], float]) -> int:
    short, long = 5, 30  # blocks of four calls
    calls = 4 * (long - short)
    rounds, min_time = (5, 0.05) if quick else (15, 0.2)
    impls = {}
    for label, fn in (("NumPy forward", _numpy_forward), ("hand-written gradient", _hand_grad),
                      ("rules, no AD", _rules_only), ("grad", grad(_chain)),
                      ("grad: recording", lambda x, n: vjp(lambda v: _chain(v, n), x)),
                      ("grad: backward", lambda x, n: vjp(lambda v: _chain(v, n), x)[1](1.0)),
                      ("jvp", lambda x, n: jvp(lambda v: _chain(v, n), (x,), (x,)))):
        for size in (short, long):
            impls[f"{label} @{size}"] = (lambda fn=fn, size=size: fn(_X, size))
    impls["ours"] = impls[f"grad @{long}"]  # the harness pairs ratios with "ours"
    medians, _ = measure(impls, rounds, min_time, clock)
    print(f"layers: one traced NumPy call, a chain of {4 * short} and of {4 * long} "
          "elementwise calls on 10 float64 elements (per call: the difference over "
          f"{calls} calls; medians of {rounds} rounds)")
    print(f"{'':<26}{'per call':>12}{'÷ NumPy':>10}")
    base = (medians[f"NumPy forward @{long}"] - medians[f"NumPy forward @{short}"]) / calls
    per_call = {
        label: (medians[f"{label} @{long}"] - medians[f"{label} @{short}"]) / calls
        for label in ("NumPy forward", "hand-written gradient", "rules, no AD", "grad",
                      "grad: recording", "grad: backward", "jvp")}
    # the "backward" runs measure recording and backward together
    per_call["grad: backward"] -= per_call["grad: recording"]
    for label, per in per_call.items():
        print(f"{label:<26}{fmt(per):>12}{per / base:>9.1f}x")
    print(f"\nwhere grad's time goes (cProfile, own time, chain of {4 * long} calls):")
    for label, share in _profile_split(long, 20 if quick else 100):
        print(f"  {share * 100:5.1f} %  {label}")
    _mlp_phases(rounds, clock)
    print(flush=True)
    return 0


def _mlp_hand_forward(w1, b1, w2, b2, x, t):
    d = np.tanh(x @ w1 + b1) @ w2 + b2 - t
    return np.sum(d * d) / 64.0


def _mlp_phases(rounds: int, clock: Callable[[], float]) -> None:
    """The MLP's gradient in two phases, against the hand-written gradient's: the
    forward pass (ours: ``vjp`` without calling the pullback, the tape recorded) and
    the rest (ours: the backward pass; the hand-written code: its gradient lines)."""
    from bench_ad import hand_mlp, mlp

    rng = np.random.default_rng(0)
    args = (rng.standard_normal((784, 256)) * 0.05, np.zeros(256),
            rng.standard_normal((256, 10)) * 0.05, np.zeros(10),
            rng.standard_normal((64, 784)), rng.standard_normal((64, 10)))
    g = grad(mlp, (0, 1, 2, 3))
    impls = {"ours": lambda: g(*args),
             "ours: forward": lambda: vjp(lambda *w: mlp(*w, *args[4:]), *args[:4]),
             "hand-written": lambda: hand_mlp(*args),
             "hand-written: forward": lambda: _mlp_hand_forward(*args)}
    medians, _ = measure(impls, rounds, 0.05, clock)
    print(f"\nthe MLP 784-256-10, batch 64, in phases (medians of {rounds} rounds):")
    print(f"{'':<26}{'ours':>12}{'hand-written':>14}{'ours ÷ hand':>13}")
    rows = {"forward": (medians["ours: forward"], medians["hand-written: forward"]),
            "backward": (medians["ours"] - medians["ours: forward"],
                         medians["hand-written"] - medians["hand-written: forward"]),
            "gradient": (medians["ours"], medians["hand-written"])}
    for label, (ours, hand) in rows.items():
        print(f"{label:<26}{fmt(ours):>12}{fmt(hand):>14}{ours / hand:>12.2f}x")
