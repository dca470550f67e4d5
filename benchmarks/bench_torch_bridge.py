"""The per-call cost of ``torch_function`` in eager PyTorch, and an MLP training step.

1. One bridged call (forward + backward of a stable softplus on 8 elements) against
   hand-written ``autograd.Function``s of the same maths: ``hand (same code)`` calls the
   same array-API functions as the rule (so the difference is the bridge alone),
   ``hand (torch ops)`` writes them in torch operations; ``custom_op`` is the same maths
   as a ``torch.library.custom_op`` with ``register_autograd`` (what the compiled path
   uses; measured to choose the eager path).
2. Training an MLP 32→128→128→10 (Adam, batch 128, float32) with a bridged activation
   (softplus) and a bridged loss (cross-entropy by a logsumexp): against the same model
   in plain torch (``F.softplus``, ``F.cross_entropy``), eager and under
   ``torch.compile`` (default inductor, the loss function compiled, the optimizer not),
   with hand-written Functions calling the same array-API code (``hand (same
   code)``: the maths of the rules, without the bridge), and with the rules' maths
   written in torch operations and differentiated by torch (``torch, same maths``: what
   unfused kernels cost without any Function, the floor of an unfused rule).

3. The rules' maths alone on the MLP's tensors (128x128, float32; no autograd): the
   array-API code against the same torch operations and the fused torch function, and
   ``array_namespace`` itself (what array-api-compat adds to the maths).

One process, torch and the BLAS pinned to one thread, the versions interleaved round
by round (``_bench_harness``); times are CPU time of this process
(``time.process_time``): on a shared machine wall time mostly measures waiting for a
core. Printed: medians, and each ratio "x / ours" as the median of per-round ratios.

Run: ``python benchmarks/bench_torch_bridge.py`` (``--quick`` for fewer rounds,
``--no-compile`` to skip the compiled step, whose first compile takes a minute).
"""

import os
import sys

_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
if any(os.environ.get(k) != v for k, v in _ENV.items()):
    os.environ.update(_ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch
import torch.nn.functional as F  # noqa: N812 - the name PyTorch code uses

from _bench_harness import fmt, measure
from chainrules import NoTangent, array_namespace, rrule
from chainrules.interop.torch import torch_function

torch.set_num_threads(1)
warnings.filterwarnings("ignore", category=DeprecationWarning)


def softplus(x):
    xp = array_namespace(x)
    return xp.maximum(x, xp.zeros_like(x)) + xp.log1p(xp.exp(-xp.abs(x)))


def softplus_grad(x, y_bar):
    xp = array_namespace(x)
    return y_bar / (1 + xp.exp(-x))


@rrule.register(softplus)
def softplus_rrule(x):
    def softplus_pullback(y_bar):
        return NoTangent(), softplus_grad(x, y_bar)

    return softplus(x), softplus_pullback


def cross_entropy(logits, onehot):
    """Mean over rows of logsumexp(logits) - <logits, onehot>."""
    xp = array_namespace(logits)
    m = xp.max(logits, axis=-1, keepdims=True)
    lse = xp.log(xp.sum(xp.exp(logits - m), axis=-1)) + m[:, 0]
    return xp.mean(lse - xp.sum(logits * onehot, axis=-1))


@rrule.register(cross_entropy)
def cross_entropy_rrule(logits, onehot):
    xp = array_namespace(logits)
    y = cross_entropy(logits, onehot)

    def cross_entropy_pullback(y_bar):
        m = xp.max(logits, axis=-1, keepdims=True)
        e = xp.exp(logits - m)
        p = e / xp.sum(e, axis=-1, keepdims=True)
        return NoTangent(), (p - onehot) * (y_bar / logits.shape[0]), NoTangent()

    return y, cross_entropy_pullback


def softplus_torch(x):
    """``softplus``'s maths in torch operations (torch differentiates them)."""
    return torch.maximum(x, torch.zeros_like(x)) + torch.log1p(torch.exp(-torch.abs(x)))


def cross_entropy_torch(logits, onehot):
    """``cross_entropy``'s maths in torch operations."""
    m = torch.amax(logits, dim=-1, keepdim=True)
    lse = torch.log(torch.sum(torch.exp(logits - m), dim=-1)) + m[:, 0]
    return torch.mean(lse - torch.sum(logits * onehot, dim=-1))


class HandSameCode(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, y_bar):
        (x,) = ctx.saved_tensors
        return softplus_grad(x, y_bar)


class HandTorchOps(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.clamp_min(x, 0) + torch.log1p(torch.exp(-torch.abs(x)))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, y_bar):
        (x,) = ctx.saved_tensors
        return y_bar / (1 + torch.exp(-x))


class HandCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(logits, onehot):
        return cross_entropy(logits, onehot)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, y_bar):
        logits, onehot = ctx.saved_tensors
        _, pullback = cross_entropy_rrule(logits, onehot)
        return pullback(y_bar)[1], None


@torch.library.custom_op("bench_torch_bridge::softplus", mutates_args=())
def softplus_op(x: torch.Tensor) -> torch.Tensor:
    return softplus(x)


@softplus_op.register_fake
def _(x):
    return torch.empty_like(x)


def _softplus_op_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _softplus_op_backward(ctx, y_bar):
    (x,) = ctx.saved_tensors
    return softplus_grad(x, y_bar)


softplus_op.register_autograd(_softplus_op_backward, setup_context=_softplus_op_setup)


def per_call(rounds, min_time):
    x = torch.randn(8, requires_grad=True)
    bridged = torch_function(softplus)

    def run(f):
        def step():
            x.grad = None
            f(x).sum().backward()
        return step

    impls = {"ours": run(bridged), "hand (same code)": run(HandSameCode.apply),
             "hand (torch ops)": run(HandTorchOps.apply), "custom_op": run(softplus_op)}
    grads = {}
    for name, step in impls.items():
        step()
        grads[name] = x.grad.clone()
    assert all(torch.allclose(g, grads["ours"]) for g in grads.values())
    return measure(impls, rounds, min_time, clock=time.process_time)


class MLP(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        self.l1, self.l2, self.l3 = (torch.nn.Linear(32, 128), torch.nn.Linear(128, 128),
                                     torch.nn.Linear(128, 10))
        self.act = act

    def forward(self, x):
        return self.l3(self.act(self.l2(self.act(self.l1(x)))))


def training(rounds, min_time, compiled):
    torch.manual_seed(0)
    x, labels = torch.randn(128, 32), torch.randint(0, 10, (128,))
    onehot = F.one_hot(labels, 10).to(torch.float32)
    bridged_ce = torch_function(cross_entropy)

    def make(act, loss_of, compile_it):
        torch.manual_seed(1)
        model = MLP(act)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)

        def loss_fn(x):
            return loss_of(model(x))

        fn = torch.compile(loss_fn) if compile_it else loss_fn

        def step():
            opt.zero_grad(set_to_none=True)
            loss = fn(x)
            loss.backward()
            opt.step()
            return loss
        return step

    ours = make(torch_function(softplus), lambda z: bridged_ce(z, onehot), False)
    plain = make(F.softplus, lambda z: F.cross_entropy(z, labels), False)
    hand = make(HandSameCode.apply, lambda z: HandCrossEntropy.apply(z, onehot), False)
    same_maths = make(softplus_torch, lambda z: cross_entropy_torch(z, onehot), False)
    impls = {"ours": ours, "hand (same code)": hand, "torch, same maths": same_maths,
             "torch eager": plain}
    if compiled:
        impls["ours compiled"] = make(torch_function(softplus),
                                      lambda z: bridged_ce(z, onehot), True)
        impls["torch compiled"] = make(F.softplus, lambda z: F.cross_entropy(z, labels), True)
    # same losses, step by step (fresh models with the same seed)
    first = {name: step().item() for name, step in impls.items()}
    assert all(abs(v - first["ours"]) < 1e-5 for v in first.values()), first
    return measure(impls, rounds, min_time, clock=time.process_time)


def maths(rounds, min_time):
    import array_api_compat

    x, y_bar = torch.randn(128, 128), torch.randn(128, 128)
    logits = torch.randn(128, 10)
    onehot = F.one_hot(torch.randint(0, 10, (128,)), 10).to(torch.float32)
    impls = {
        "ours": lambda: softplus(x),
        "softplus, torch ops": lambda: softplus_torch(x),
        "F.softplus": lambda: F.softplus(x),
        "pullback, array API": lambda: softplus_grad(x, y_bar),
        "pullback, torch ops": lambda: y_bar / (1 + torch.exp(-x)),
        "cross-entropy, array API": lambda: cross_entropy(logits, onehot),
        "cross-entropy, torch ops": lambda: cross_entropy_torch(logits, onehot),
        "array_namespace(x)": lambda: array_namespace(x),
        "array_api_compat's": lambda: array_api_compat.array_namespace(x),
    }
    with torch.no_grad():
        return measure(impls, rounds, min_time, clock=time.process_time)


def main():
    quick = "--quick" in sys.argv
    rounds, min_time = (5, 0.05) if quick else (15, 0.2)
    med, ratio = per_call(rounds, min_time)
    print("one call, forward + backward, softplus on 8 float32 elements")
    for name in med:
        print(f"  {name:18s} {fmt(med[name])}   ours / this = {1 / ratio[name]:.2f}")
    med, ratio = training(rounds, min_time, "--no-compile" not in sys.argv)
    print("MLP 32-128-128-10 training step (Adam, batch 128, float32)")
    for name in med:
        print(f"  {name:18s} {fmt(med[name])}   ours / this = {1 / ratio[name]:.2f}")
    if "ours compiled" in med:
        # ratio[x] is the median of time(x) / time(ours), round by round
        print(f"  ours compiled / torch compiled = "
              f"{ratio['ours compiled'] / ratio['torch compiled']:.2f}")
    med, _ = maths(rounds, min_time)
    print("the rules' maths alone, 128x128 float32 (\"ours\": softplus in array-API code)")
    for name in med:
        print(f"  {name:26s} {fmt(med[name])}")


if __name__ == "__main__":
    main()
