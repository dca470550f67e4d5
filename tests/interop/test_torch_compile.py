"""``torch.compile`` and ``torch.export`` of models that use bridged functions.

Under dynamo a bridged call is traced into the graph (``interop/_torch_compile``): the
rule's maths as aten operations (an opaque ``chainrules::call`` node where the rule
reads values), one graph, no break, no warning, gradients equal to eager's. Compiling is slow on
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


def _graphs_backend(graphs):
    """An AOTAutograd backend that keeps the code of the forward and backward graphs."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    def keep(gm, example_inputs):
        graphs.append(gm.code)
        return make_boxed_func(gm.forward)

    return aot_autograd(fw_compiler=keep, bw_compiler=keep)


def test_compiled_graphs_hold_the_rules_maths():
    # what inductor receives: the primal's aten ops in the forward graph, the pullback's
    # in the backward graph, no opaque op to fuse around
    torch.manual_seed(0)
    model, x = Model(), torch.randn(5, 4)
    graphs = []
    compiled = torch.compile(model, fullgraph=True, backend=_graphs_backend(graphs))
    compiled(x).backward()
    forward, backward = graphs
    assert "chainrules" not in forward + backward
    assert "aten.log1p" in forward  # softplus
    # the softplus pullback, y_bar / (1 + exp(-x)): torch's derivative of the primal
    # (through maximum, abs and log1p) would need neither a neg of x nor a division
    assert "aten.div" in backward and "aten.exp" in backward


def test_compiled_with_dynamic_shapes_stays_traced():
    graphs = []
    loss = torch.compile(lambda x: SOFTPLUS(x).sum(), fullgraph=True, dynamic=True,
                         backend=_graphs_backend(graphs))
    for n in (3, 5, 7):
        x = torch.randn(n, requires_grad=True)
        (g,) = torch.autograd.grad(loss(x), x)
        torch.testing.assert_close(g, torch.sigmoid(x.detach()))
    assert graphs and not any("chainrules" in g for g in graphs)


def test_export_records_the_rules_maths():
    torch.manual_seed(0)
    model, x = Model(), torch.randn(5, 4)
    exported = torch.export.export(model, (x,))
    code = exported.graph_module.code
    assert "chainrules" not in code and "aten.log1p" in code
    torch.testing.assert_close(exported.module()(x), model(x))


def test_saved_exported_program_runs_in_a_fresh_process(tmp_path):
    # the exported graph holds aten operations only: a fresh process without the
    # bridged functions runs it
    import subprocess
    import sys

    torch.manual_seed(0)
    model, x = Model(), torch.randn(5, 4)
    path = tmp_path / "model.pt2"
    torch.save(x, str(tmp_path / "x.pt"))
    torch.export.save(torch.export.export(model, (x,)), str(path))
    code = (f"import torch\n"
            f"m = torch.export.load({str(path)!r}).module()\n"
            f"print(repr(m(torch.load({str(tmp_path / 'x.pt')!r})).item()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert float(out.stdout.split()[-1]) == pytest.approx(model(x).item(), rel=1e-6)


def round_ste(x):
    """x rounded; its rule's gradient is the straight-through estimator's (1)."""
    return array_namespace(x).round(x)


@rrule.register(round_ste)
def round_ste_rrule(x):
    def round_ste_pullback(y_bar):
        return NoTangent(), y_bar

    return round_ste(x), round_ste_pullback


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiled_uses_the_rules_pullback_not_torchs_derivative(backend):
    # torch's derivative of round is 0: a compiled graph that differentiated the primal
    # instead of running the pullback would give zero gradients, silently
    f = torch_function(round_ste)
    x = torch.tensor([0.2, 1.7, -2.6], requires_grad=True)

    def loss(x):
        return (f(x * 3.0) * x).sum()

    (eager,) = torch.autograd.grad(loss(x), x)
    (compiled,) = torch.autograd.grad(torch.compile(loss, fullgraph=True, backend=backend)(x), x)
    (by_torch,) = torch.autograd.grad((torch.round(x * 3.0) * x).sum(), x)
    torch.testing.assert_close(compiled, eager)
    # d/dx [r(3x) x] = 3 r'(3x) x + r(3x), with r' = 1 (the rule) or 0 (torch)
    torch.testing.assert_close(eager, 3.0 * x.detach() + torch.round(3.0 * x.detach()))
    assert not torch.allclose(compiled, by_torch)


def clip_grad(x):
    """x; its rule scales the cotangent down to a max-norm of 1 (it reads its values)."""
    return array_namespace(x).multiply(x, 1.0)


@rrule.register(clip_grad)
def clip_grad_rrule(x):
    def clip_grad_pullback(y_bar):
        xp = array_namespace(y_bar)
        biggest = float(xp.max(xp.abs(y_bar)))  # a value: cannot be traced
        return NoTangent(), y_bar / max(biggest, 1.0)

    return clip_grad(x), clip_grad_pullback


CLIP = torch_function(clip_grad)


def test_rule_that_reads_values_falls_back_to_the_opaque_op():
    x = torch.tensor([0.5, -4.0, 2.0], requires_grad=True)

    def loss(x):
        return (CLIP(x) * x).sum()

    (eager,) = torch.autograd.grad(loss(x), x)
    graphs = []
    compiled = torch.compile(loss, fullgraph=True, backend=_graphs_backend(graphs))
    (got,) = torch.autograd.grad(compiled(x), x)
    assert "chainrules.call" in graphs[0] and "chainrules.pullback" in graphs[1]
    torch.testing.assert_close(got, eager)
    # y_bar = x, clipped by max |x| = 4, plus the other factor's x
    torch.testing.assert_close(eager, x.detach() / 4.0 + x.detach())
    explained = torch._dynamo.explain(loss)(x)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)


class ClipModel(torch.nn.Module):
    def forward(self, x):
        return CLIP(x).sum()


def test_exported_opaque_call_checks_its_tag(tmp_path):
    # an opaque chainrules::call node refers to the process that traced it: run
    # elsewhere (a saved program loaded in a fresh process) it is refused by name, never
    # matched to whatever call has that key there
    import subprocess
    import sys

    from chainrules.interop import UnsupportedTransformError

    x = torch.randn(5, 4)
    exported = torch.export.export(ClipModel(), (x,))
    node = next(n for n in exported.graph_module.graph.nodes
                if n.op == "call_function" and "chainrules.call" in str(n.target))
    tensors, key, tag = node.args
    assert "test_torch_compile.clip_grad" in tag
    torch.testing.assert_close(exported.module()(x), x.sum())
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
