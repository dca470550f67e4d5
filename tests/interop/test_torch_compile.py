"""``torch.compile`` and ``torch.export`` of models that use bridged functions.

Under dynamo a bridged call is one ``chainrules::call`` node (``interop/_torch_compile``):
one graph, no break, no warning, gradients equal to eager's. Compiling is slow on
a small machine, so the shapes are tiny and the number of compiled tests small.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from chainrules import NoTangent, array_namespace, rrule  # noqa: E402
from chainrules.interop import NumPyOnlyRuleError, TangentConversionError  # noqa: E402
from chainrules.interop.torch import torch_function  # noqa: E402

# torch's own: importing inductor scripts a module with a deprecated decorator
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")


def softplus(x):
    """log(1 + exp(x)), stable for large |x|."""
    xp = array_namespace(x)
    return xp.maximum(x, xp.zeros_like(x)) + xp.log1p(xp.exp(-xp.abs(x)))


@rrule.register(softplus)
def softplus_rrule(x):
    xp = array_namespace(x)

    def softplus_pullback(y_bar):
        return NoTangent(), y_bar / (1 + xp.exp(-x))

    return softplus(x), softplus_pullback


def safe_norm(x):
    """The norm of the last axis; its rule's derivative is 0 (not nan) at 0."""
    xp = array_namespace(x)
    return xp.sqrt(xp.sum(x * x, axis=-1))


@rrule.register(safe_norm)
def safe_norm_rrule(x):
    xp = array_namespace(x)
    y = safe_norm(x)

    def safe_norm_pullback(y_bar):
        d = xp.where(y == 0, xp.ones_like(y), y)
        return NoTangent(), (y_bar / d)[..., None] * x

    return y, safe_norm_pullback


def lse_t(x, *, t=1.0):
    """A tempered logsumexp over the last axis."""
    xp = array_namespace(x)
    m = xp.max(x, axis=-1, keepdims=True)
    return t * xp.log(xp.sum(xp.exp((x - m) / t), axis=-1)) + m[..., 0]


@rrule.register(lse_t)
def lse_t_rrule(x, *, t=1.0):
    xp = array_namespace(x)
    y = lse_t(x, t=t)

    def lse_t_pullback(y_bar):
        return NoTangent(), y_bar[..., None] * xp.exp((x - y[..., None]) / t)

    return y, lse_t_pullback


SOFTPLUS = torch_function(softplus)
SAFE_NORM = torch_function(safe_norm)
LSE_T = torch_function(lse_t)


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        h = SOFTPLUS(self.lin(x))
        # h - h.detach() is 0: the norm's rule (0 at 0) and torch's autograd (nan) differ
        return LSE_T(h, t=0.5).sum() + SAFE_NORM(h - h.detach()).sum()


@pytest.fixture(autouse=True)
def _reset_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _grads(model, x):
    for p in model.parameters():
        p.grad = None
    loss = model(x)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


def test_explain_one_graph_no_break():
    torch.manual_seed(0)
    explained = torch._dynamo.explain(Model())(torch.randn(5, 4))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), \
        explained.break_reasons


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compile_fullgraph_gradients_equal_eager(backend):
    torch.manual_seed(0)
    model, x = Model(), torch.randn(5, 4)
    loss, grads = _grads(model, x)
    assert all(torch.isfinite(g).all() for g in grads)  # the norm's rule, not torch's nan
    compiled = torch.compile(model, fullgraph=True, backend=backend)
    c_loss, c_grads = _grads(compiled, x)
    torch.testing.assert_close(c_loss, loss)
    for g, c in zip(grads, c_grads):
        torch.testing.assert_close(c, g)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_compile_fullgraph_on_cuda():
    torch.manual_seed(0)
    model, x = Model().cuda(), torch.randn(5, 4, device="cuda")
    loss, grads = _grads(model, x)
    c_loss, c_grads = _grads(torch.compile(model, fullgraph=True), x)
    assert c_loss.device.type == "cuda"
    torch.testing.assert_close(c_loss, loss)
    for g, c in zip(grads, c_grads):
        torch.testing.assert_close(c, g)


def test_export_keeps_working():
    torch.manual_seed(0)
    model, x = Model(), torch.randn(5, 4)
    exported = torch.export.export(model, (x,))
    assert "chainrules.call" in exported.graph_module.code
    torch.testing.assert_close(exported.module()(x), model(x))


def test_exported_graph_checks_its_call_tag(tmp_path):
    # a chainrules::call node refers to the process that traced it: run elsewhere (a
    # saved program loaded in a fresh process) it is refused by name, never matched
    # to whatever call has that key there
    import subprocess
    import sys

    from chainrules.interop import UnsupportedTransformError

    torch.manual_seed(0)
    model, x = Model(), torch.randn(5, 4)
    exported = torch.export.export(model, (x,))
    node = next(n for n in exported.graph_module.graph.nodes
                if n.op == "call_function" and "chainrules.call" in str(n.target))
    tensors, key, tag = node.args
    assert "test_torch_compile.softplus" in tag
    with pytest.raises(UnsupportedTransformError, match=re.escape(
            "does not support running a compiled or exported graph in another process")):
        torch.ops.chainrules.call([x], key, tag + "-from-elsewhere")

    path = tmp_path / "model.pt2"
    torch.export.save(exported, str(path))
    code = (f"import torch, chainrules.interop.torch as t; t.torch_function(abs)\n"
            f"import chainrules.interop._torch_compile\n"
            f"m = torch.export.load({str(path)!r}).module()\n"
            f"try:\n    m(torch.randn(5, 4))\n"
            f"except Exception as e:\n    print(type(e).__name__, 'another Python process' in str(e))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.split()[-2:] == ["UnsupportedTransformError", "True"], out.stderr[-3000:]


def min_max(x, k):
    """(min, max) of x * k over the last axis, and x unchanged: three outputs."""
    xp = array_namespace(x)
    return xp.min(x * k, axis=-1), xp.max(x * k, axis=-1), xp.positive(x)


@rrule.register(min_max)
def min_max_rrule(x, k):
    xp = array_namespace(x)
    y = min_max(x, k)

    def min_max_pullback(y_bar):
        lo, hi, same = y_bar
        x_bar = (xp.where(x * k == y[0][..., None], k, 0) * lo[..., None]
                 + xp.where(x * k == y[1][..., None], k, 0) * hi[..., None] + same)
        return NoTangent(), x_bar, NoTangent()

    return y, min_max_pullback


def test_compiled_tuple_output_integer_input_and_input_returned_as_is():
    f = torch_function(min_max)
    x = torch.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
    k = torch.tensor(2)  # an integer tensor: not differentiated

    def loss(x):
        lo, _, same = f(x, k)  # the max is unused: its cotangent is zero
        return (lo * 3).sum() + (same * same).sum()

    loss(x).backward()
    eager = x.grad.clone()
    x.grad = None
    torch.compile(loss, fullgraph=True, backend="aot_eager")(x).backward()
    torch.testing.assert_close(x.grad, eager)
    # 3 * d min(2x) = 6 at the minimum, plus d sum(x**2) = 2x
    torch.testing.assert_close(eager, torch.tensor([[2.0, 2.0, 6.0]]))


def half(x):
    return 0.5


def test_compiled_non_tensor_output_error():
    f = torch_function(half)
    with pytest.raises(Exception, match=re.escape(
            "under torch.compile a bridged function must return a tensor")) as info:
        torch.compile(f, fullgraph=True, backend="aot_eager")(torch.ones(2))
    assert isinstance(info.value, TangentConversionError) or isinstance(
        info.value.__cause__, TangentConversionError) or "TangentConversionError" in str(
        info.value)


def test_compiled_numpy_only_function_error():
    f = torch_function(np.sin, backend="callback")
    with pytest.raises(Exception, match=re.escape(
            "Under torch.compile a bridged function runs on tensors (fake ones while "
            "tracing), whatever its backend: a NumPy-only function cannot be compiled.")) as info:
        torch.compile(f, fullgraph=True, backend="aot_eager")(torch.ones(2))
    chain = [info.value, info.value.__cause__, info.value.__context__]
    assert any(isinstance(e, NumPyOnlyRuleError) for e in chain) or "NumPyOnlyRuleError" in str(
        info.value)


def test_inference_mode_and_autocast_eager_and_compiled():
    torch.manual_seed(0)
    model, x = Model(), torch.randn(5, 4)
    with torch.inference_mode():
        y = SOFTPLUS(x)
        torch.testing.assert_close(y, torch.nn.functional.softplus(x))
        eager = model(x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = model.lin(x)
        assert SOFTPLUS(h).dtype == torch.bfloat16  # the rule runs in the input's dtype
        loss = model(x)
    loss.backward()
    assert model.lin.weight.grad.dtype == torch.float32
    assert torch.isfinite(model.lin.weight.grad).all()
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    with torch.inference_mode():
        torch.testing.assert_close(compiled(x), eager)


def test_compiled_float_keyword_that_changes_between_calls():
    # after the first call dynamo traces a changing float as a symbolic one: it must
    # reach the rule as a Python float, not break the graph nor fail to intern
    x = torch.randn(3, 4, requires_grad=True)
    compiled = torch.compile(lambda x, t: LSE_T(x, t=t).sum(), fullgraph=True,
                             backend="aot_eager")
    for t in (0.5, 0.7, 0.9):
        y = compiled(x, t)
        (g,) = torch.autograd.grad(y, x)
        y_eager = LSE_T(x, t=t).sum()
        (g_eager,) = torch.autograd.grad(y_eager, x)
        torch.testing.assert_close(y, y_eager)
        torch.testing.assert_close(g, g_eager)
