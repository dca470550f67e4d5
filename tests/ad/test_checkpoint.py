"""`chainrules.ad.checkpoint`: the same derivatives, the forward recomputed in the backward
pass, fewer intermediates kept (issue 27, item 5)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chainrules.ad import (
    InputTypeError,
    checkpoint,
    grad,
    hessian,
    jacobian,
    jvp,
    value_and_grad,
    vjp,
)

ROOT = Path(__file__).resolve().parents[2]
X = np.linspace(0.1, 1.0, 5)


def block(x):
    return np.tanh(np.sin(x) * 2.0)


def chain(x, blk=block, n=3):
    for _ in range(n):
        x = blk(x)
    return np.sum(x)


def checkpointed_chain(x, n=3):
    return chain(x, checkpoint(block), n)


CALLS: list = []


def counted(x):
    CALLS.append(1)  # (a global: the AD may copy a callable object's fields)
    return block(x)


def test_checkpoint_outside_the_ad_runs_f():
    np.testing.assert_array_equal(checkpoint(block)(X), block(X))
    assert checkpoint(block).__name__ == "block"


def test_grad_equals_the_plain_gradient_and_recomputes_the_forward():
    CALLS.clear()
    g = grad(lambda x: np.sum(checkpoint(counted)(x)))(X)
    np.testing.assert_allclose(g, grad(lambda x: np.sum(block(x)))(X), rtol=1e-14)
    assert len(CALLS) == 2  # forward untraced, then again traced in the pullback


def test_grad_of_a_chain_of_checkpointed_blocks():
    np.testing.assert_allclose(grad(checkpointed_chain)(X), grad(chain)(X), rtol=1e-14)


def test_value_and_grad_and_vjp_equal_the_plain_ones():
    v1, g1 = value_and_grad(checkpointed_chain)(X)
    v2, g2 = value_and_grad(chain)(X)
    assert v1 == v2
    np.testing.assert_allclose(g1, g2, rtol=1e-14)
    y_bar = np.linspace(-1.0, 1.0, 5)
    y1, pb1 = vjp(checkpoint(block), X)
    y2, pb2 = vjp(block, X)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_allclose(pb1(y_bar)[0], pb2(y_bar)[0], rtol=1e-14)
    np.testing.assert_allclose(pb1(y_bar)[0], pb2(y_bar)[0], rtol=1e-14)  # twice


def test_several_arguments_and_a_tuple_output():
    def f(x, w):
        return np.sin(x) * w, np.cos(x * w)

    def loss(x, w, fn):
        a, b = fn(x, w)
        return np.sum(a * b)

    g1 = grad(lambda x, w: loss(x, w, checkpoint(f)), (0, 1))(X, 1.5)
    g2 = grad(lambda x, w: loss(x, w, f), (0, 1))(X, 1.5)
    np.testing.assert_allclose(g1[0], g2[0], rtol=1e-14)
    assert g1[1] == pytest.approx(g2[1], rel=1e-14)


def test_closure_over_a_differentiated_value():
    def loss(x, w, cp):
        def inner(v):
            return np.sin(v * w) * w

        return np.sum((checkpoint(inner) if cp else inner)(x))

    g1 = grad(lambda x, w: loss(x, w, True), (0, 1))(X, 1.5)
    g2 = grad(lambda x, w: loss(x, w, False), (0, 1))(X, 1.5)
    np.testing.assert_allclose(g1[0], g2[0], rtol=1e-14)
    assert g1[1] == pytest.approx(g2[1], rel=1e-14)


def test_keyword_arguments_constant_and_traced():
    def f(x, *, scale, shift=0.0):
        return np.sin(x) * scale + shift

    g1 = grad(lambda x, s: np.sum(checkpoint(f)(x, scale=s, shift=1.0)), (0, 1))(X, 2.0)
    g2 = grad(lambda x, s: np.sum(f(x, scale=s, shift=1.0)), (0, 1))(X, 2.0)
    np.testing.assert_allclose(g1[0], g2[0], rtol=1e-14)
    assert g1[1] == pytest.approx(g2[1], rel=1e-14)


def test_scalar_python_code():
    def f(u):
        return math.sin(u) * u

    assert grad(lambda t: checkpoint(f)(t))(0.3) == pytest.approx(
        math.cos(0.3) * 0.3 + math.sin(0.3), rel=1e-14)


def test_forward_mode_runs_f():
    CALLS.clear()
    y, y_dot = jvp(checkpoint(counted), (X,), (np.ones(5),))
    y2, y2_dot = jvp(block, (X,), (np.ones(5),))
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_allclose(y_dot, y2_dot, rtol=1e-14)
    assert len(CALLS) == 1
    w_dot = jvp(lambda w: checkpoint(lambda v: np.sin(v * w))(X), (1.5,), (1.0,))[1]
    np.testing.assert_allclose(w_dot, np.cos(X * 1.5) * X, rtol=1e-14)


def test_second_derivatives():
    h1 = hessian(checkpointed_chain)(X)
    h2 = hessian(chain)(X)
    np.testing.assert_allclose(h1, h2, rtol=1e-12, atol=1e-14)
    v = np.linspace(1.0, 2.0, 5)
    hv1 = jvp(grad(checkpointed_chain), (X,), (v,))[1]
    np.testing.assert_allclose(hv1, h2 @ v, rtol=1e-12, atol=1e-14)
    gg1 = grad(grad(lambda t: checkpoint(lambda u: math.sin(u) * u ** 2)(t)))(0.7)
    gg2 = grad(grad(lambda t: math.sin(t) * t ** 2))(0.7)
    assert gg1 == pytest.approx(gg2, rel=1e-12)
    np.testing.assert_allclose(jacobian(checkpoint(block))(X), jacobian(block)(X),
                               rtol=1e-14)


def test_checkpoint_not_callable_error():
    with pytest.raises(InputTypeError, match=r"checkpoint\(f\).*a callable.*a float"):
        checkpoint(1.0)


_MEMORY_CHILD = r"""
import json, resource, sys
import numpy as np
from chainrules.ad import checkpoint, grad

cp, n, blocks = sys.argv[1] == "1", int(sys.argv[2]), int(sys.argv[3])


def block(x):
    return np.sin(np.cos(x) * 1.1) + x * 0.5


def loss(x):
    blk = checkpoint(block) if cp else block
    for _ in range(blocks):
        x = blk(x)
    return np.sum(x)


grad(loss)(np.ones(64))  # first-call costs
x = np.linspace(0.0, 1.0, n)
with open("/proc/self/statm") as f:
    base = int(f.read().split()[1]) * resource.getpagesize() / 1024
try:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    hwm = True
except OSError:
    hwm = False
g = grad(loss)(x)
if hwm:
    with open("/proc/self/status") as f:
        peak = float(f.read().split("VmHWM:")[1].split()[0])
else:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"peak_mb": (peak - base) / 1024, "check": float(np.sum(g))}))
"""


def _peak(script: Path, cp: bool, n: int, blocks: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, str(script), "1" if cp else "0", str(n),
                          str(blocks)], env=env, capture_output=True, text=True,
                         check=False, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_checkpointed_blocks_keep_fewer_intermediates(tmp_path):
    # 12 blocks of 4 MB arrays: each plain block keeps three arrays on the tape (cos's
    # input, mul's input, sin's input), a checkpointed one its input only; the script is
    # a file (the AD reads the source of what it rewrites)
    script = tmp_path / "checkpoint_memory.py"
    script.write_text(_MEMORY_CHILD)
    n, blocks = 500_000, 12
    plain = _peak(script, False, n, blocks)
    cp = _peak(script, True, n, blocks)
    assert cp["check"] == pytest.approx(plain["check"], rel=1e-12)
    array_mb = n * 8 / 2**20
    assert cp["peak_mb"] < plain["peak_mb"] - blocks * array_mb, (cp, plain)
