"""``DistributedDataParallel`` over a model with bridged functions: 2 gloo processes.

Each process takes half of the batch; DDP averages the gradients, which then equal
those of one process on the whole batch (the loss is a mean over equal halves).
Bounded: localhost, a free port, a deadline after which the workers are terminated.
"""

from __future__ import annotations

import datetime
import os
import socket
import time

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")

from chainrules import NoTangent, array_namespace, rrule  # noqa: E402
from chainrules.interop.torch import torch_function  # noqa: E402

WORLD = 2
DEADLINE_S = 120


def softplus(x):
    xp = array_namespace(x)
    return xp.maximum(x, xp.zeros_like(x)) + xp.log1p(xp.exp(-xp.abs(x)))


@rrule.register(softplus)
def softplus_rrule(x):
    xp = array_namespace(x)

    def softplus_pullback(y_bar):
        return NoTangent(), y_bar / (1 + xp.exp(-x))

    return softplus(x), softplus_pullback


def mean_lse(x, *, t=1.0):
    """The mean over rows of a tempered logsumexp."""
    xp = array_namespace(x)
    m = xp.max(x, axis=-1, keepdims=True)
    return xp.mean(t * xp.log(xp.sum(xp.exp((x - m) / t), axis=-1)) + m[:, 0])


@rrule.register(mean_lse)
def mean_lse_rrule(x, *, t=1.0):
    xp = array_namespace(x)
    y = mean_lse(x, t=t)

    def mean_lse_pullback(y_bar):
        m = xp.max(x, axis=-1, keepdims=True)
        e = xp.exp((x - m) / t)
        return NoTangent(), e / xp.sum(e, axis=-1, keepdims=True) * (y_bar / x.shape[0])

    return y, mean_lse_pullback


SOFTPLUS = torch_function(softplus)
MEAN_LSE = torch_function(mean_lse)


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1, self.l2 = torch.nn.Linear(6, 8), torch.nn.Linear(8, 5)

    def forward(self, x):
        return MEAN_LSE(self.l2(SOFTPLUS(self.l1(x))), t=0.7)


def _data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(8, 6, generator=g, dtype=torch.float64)


def _model():
    torch.manual_seed(0)
    return Model().to(torch.float64)


def _worker(rank: int, port: int, out_dir: str) -> None:
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=DEADLINE_S))
    try:
        model = torch.nn.parallel.DistributedDataParallel(_model())
        x = _data().chunk(WORLD)[rank]
        model(x).backward()
        grads = [p.grad for p in model.module.parameters()]
        torch.save(grads, os.path.join(out_dir, f"grads{rank}.pt"))
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddp_two_gloo_processes_gradients_equal_one_process(tmp_path):
    import torch.multiprocessing as mp

    model = _model()
    model(_data()).backward()
    expected = [p.grad for p in model.parameters()]

    context = mp.start_processes(_worker, args=(_free_port(), str(tmp_path)), nprocs=WORLD,
                                 join=False, start_method="spawn")
    deadline = time.monotonic() + DEADLINE_S
    try:
        while not context.join(timeout=1.0):
            if time.monotonic() > deadline:
                pytest.fail(f"the DDP workers did not finish in {DEADLINE_S} s")
    finally:
        for p in context.processes:
            if p.is_alive():
                p.terminate()
                p.join(5)
    for rank in range(WORLD):
        grads = torch.load(tmp_path / f"grads{rank}.pt")
        for g, e in zip(grads, expected):
            torch.testing.assert_close(g, e, rtol=1e-12, atol=1e-14)
