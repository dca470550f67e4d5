"""PyTorch tensors in the AD never crash the interpreter (issue 27).

The cause: a tracer answered ``x.__class__`` with its primal's class, so
``isinstance(tracer, torch.Tensor)`` was true, and PyTorch's C code (which checks
``isinstance`` and then reads the object as its own tensor struct) read a tracer's
memory as a tensor: ``tensor @ tracer`` segfaulted or failed at random. A tracer of a
foreign array now answers ``Tracer``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrules  # noqa: E402
from chainrules import ad  # noqa: E402
from chainrules.ad import Tracer  # noqa: E402

_PROGRAM = textwrap.dedent("""
    import numpy as np, torch
    import chainrules
    from chainrules import ad

    def loss(x, w):
        xp = chainrules.array_namespace(x, w)
        return xp.sum(xp.tanh(x @ w) ** 2)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 4)); w = rng.standard_normal(4)
    ref_w = ad.grad(loss, argnums=1)(x, w)
    ref_x = ad.grad(loss, argnums=0)(x, w)
    xt, wt = torch.tensor(x), torch.tensor(w)
    for _ in range(20):
        g = ad.grad(loss, argnums=1)(xt, wt)
        assert type(g) is torch.Tensor and np.allclose(g.numpy(), ref_w), g
        gx, gw = ad.grad(loss, argnums=(0, 1))(xt, wt)
        assert np.allclose(gx.numpy(), ref_x) and np.allclose(gw.numpy(), ref_w)
    print("fine")
""")


@pytest.mark.parametrize("pure", ["0", "1"])
def test_torch_gradients_in_a_subprocess_never_crash(pure, tmp_path):
    # the crash depended on what lay in memory, so it is rerun 20 times in a fresh
    # interpreter, with the C tape and without it (a file: the AD reads the source)
    program = tmp_path / "torch_program.py"
    program.write_text(_PROGRAM)
    env = dict(os.environ, CHAINRULES_PURE_PYTHON=pure)
    done = subprocess.run([sys.executable, str(program)], env=env, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "fine"


def test_a_tracer_of_a_tensor_is_not_a_tensor_to_torch():
    seen = {}

    def f(w):
        # (isinstance in traced code is answered for the primal by the dispatch point;
        # what PyTorch's C code sees is the class)
        seen["class"] = w.__class__
        return chainrules.array_namespace(w).sum(torch.ones(2, 3, dtype=torch.float64) @ w)

    g = ad.grad(f)(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
    assert seen == {"class": Tracer}
    assert torch.equal(g, torch.full((3,), 2.0, dtype=torch.float64))


def test_a_tracer_of_a_numpy_array_still_answers_isinstance_for_its_primal():
    def f(x):
        assert isinstance(x, np.ndarray)
        return np.sum(x * x)

    np.testing.assert_allclose(ad.grad(f)(np.array([1.0, 2.0])), [2.0, 4.0])
