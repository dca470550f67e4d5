"""The generic (array API) rules on the edge inputs of issue #26: zeros in
``cumulative_prod``, empty matrices in the decompositions, NumPy-isms (``x.size``) in
``repeat``/``take``/``concat`` with ``axis=None``, ``diff(n=0)`` with ``prepend``. Values
are checked with the project's testers and against PyTorch's own derivatives."""

import numpy as np
import pytest

from chainrules import NoTangent, Tangent, frule, rrule
from chainrules.rules import register_namespace
from chainrules.rules.array_api import statistical
from chainrules.testing import test_frule, test_rrule

xs = pytest.importorskip("array_api_strict")
torch = pytest.importorskip("torch")
tx = pytest.importorskip("array_api_compat.torch")

register_namespace(xs)
register_namespace(tx)

ZEROS = np.array([[2.0, 0.0, 3.0, 0.0, 1.5], [1.0, 2.0, 0.0, 4.0, 0.5],
                  [0.5, -1.0, 2.0, 1.5, 3.0]])


@pytest.fixture(params=["table", "masked"])
def scan_path(request, monkeypatch):
    """Both ways ``cumulative_prod`` is differentiated: the O(n^2) table and the O(n)
    masked formula for long scans."""
    if request.param == "masked":
        monkeypatch.setattr(statistical, "_TABLE_LIMIT", 0)
    return request.param


def _torch_cumprod_vjp_jvp(x, g, x_dot, axis):
    t = torch.tensor(x, requires_grad=True)
    (x_bar,) = torch.autograd.grad(torch.cumprod(t, axis), t, torch.tensor(g))
    _, y_dot = torch.func.jvp(lambda v: torch.cumprod(v, axis), (torch.tensor(x),),
                              (torch.tensor(x_dot),))
    return x_bar.numpy(), y_dot.numpy()


@pytest.mark.parametrize("axis", [0, 1])
def test_cumulative_prod_with_zeros_matches_torch(scan_path, axis):
    rng = np.random.default_rng(0)
    g, x_dot = rng.normal(size=ZEROS.shape), rng.normal(size=ZEROS.shape)
    want_bar, want_dot = _torch_cumprod_vjp_jvp(ZEROS, g, x_dot, axis)
    for ns, make in ((xs, xs.asarray), (tx, torch.asarray)):
        x = make(ZEROS)
        _, pullback = rrule(ns.cumulative_prod, x, axis=axis)
        x_bar = np.asarray(pullback(make(g))[1])
        _, y_dot = frule((NoTangent(), make(x_dot)), ns.cumulative_prod, x, axis=axis)
        assert np.all(np.isfinite(x_bar))
        np.testing.assert_allclose(x_bar, want_bar, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(y_dot), want_dot, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_cumulative_prod_with_zeros_testers(scan_path, dtype):
    x = ZEROS.astype(dtype)
    if dtype == "complex128":
        x = x * (1 + 0.5j)
    x = xs.asarray(x)
    test_rrule(xs.cumulative_prod, x, fkwargs={"axis": 1})
    test_frule(xs.cumulative_prod, x, fkwargs={"axis": 1})
    test_rrule(xs.cumulative_prod, xs.asarray(ZEROS[0]), fkwargs={"include_initial": True})
    test_frule(xs.cumulative_prod, xs.asarray(ZEROS[0]), fkwargs={"include_initial": True})


def test_cumulative_prod_second_order_with_zeros_matches_torch():
    # the table is exact to every order: torch's double backward through our rule
    from chainrules.interop.torch import torch_function

    x = torch.tensor(ZEROS[1], requires_grad=True)
    g = torch.tensor([0.3, -1.0, 2.0, 0.5, 1.5])

    def loss(cumprod, v):
        return (cumprod(v) * g).sum()

    ours = torch_function(tx.cumulative_prod)
    (grad_ours,) = torch.autograd.grad(loss(ours, x), x, create_graph=True)
    (grad_torch,) = torch.autograd.grad(loss(lambda v: torch.cumprod(v, 0), x), x,
                                        create_graph=True)
    h_ours = torch.autograd.grad(grad_ours.sum(), x)[0]
    h_torch = torch.autograd.grad(grad_torch.sum(), x)[0]
    torch.testing.assert_close(grad_ours, grad_torch)
    torch.testing.assert_close(h_ours, h_torch)


# ------------------------------------------------------------------- empty decompositions

def _ones_like_result(ns, y):
    if not isinstance(y, tuple):
        return ns.ones_like(y)
    fields = getattr(type(y), "_fields", None)
    if fields:
        return Tangent[type(y)](**{k: ns.ones_like(v) for k, v in zip(fields, y)})
    return Tangent[type(y)](*(ns.ones_like(v) for v in y))


@pytest.mark.parametrize("name", ["svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals",
                                  "det", "slogdet", "inv", "qr", "pinv", "cholesky"])
@pytest.mark.parametrize("shape", [(0, 0), (0, 3, 3), (2, 0, 0)])
@pytest.mark.parametrize("lib", ["strict", "torch"])
def test_decompositions_of_empty_matrices(name, shape, lib):
    ns, make = (xs, xs.asarray) if lib == "strict" else (tx, torch.asarray)
    f = getattr(ns.linalg, name)
    a = make(np.zeros(shape))
    y, pullback = rrule(f, a)
    a_bar = pullback(_ones_like_result(ns, y))[1]
    assert tuple(a_bar.shape) == shape
    _, y_dot = frule((NoTangent(), make(np.zeros(shape))), f, a)
    assert y_dot is not None


# ------------------------------------------------------------------ NumPy-isms, diff(n=0)

@pytest.mark.parametrize("lib", ["strict", "torch"])
def test_flat_axis_none_rules_use_only_the_standard(lib):
    ns, make = (xs, xs.asarray) if lib == "strict" else (tx, torch.asarray)
    x = make(np.arange(12.0).reshape(3, 4))
    _, pullback = rrule(ns.repeat, x, 2)
    g = np.arange(24.0)
    np.testing.assert_allclose(np.asarray(pullback(make(g))[1]),
                               g.reshape(12, 2).sum(1).reshape(3, 4))
    _, pullback = rrule(ns.take, make(np.arange(6.0)), make(np.array([1, 2, 2])))
    np.testing.assert_allclose(np.asarray(pullback(make(np.array([1.0, 2.0, 3.0])))[1]),
                               [0, 1, 5, 0, 0, 0])
    _, pullback = rrule(ns.concat, [x, make(np.ones(4))], axis=None)
    bars = pullback(make(np.arange(16.0)))[1]
    np.testing.assert_allclose(np.asarray(bars[0]), np.arange(12.0).reshape(3, 4))
    np.testing.assert_allclose(np.asarray(bars[1]), np.arange(12.0, 16.0))


@pytest.mark.parametrize("lib", ["strict", "torch"])
def test_diff_n0_with_prepend_is_the_identity(lib):
    ns, make = (xs, xs.asarray) if lib == "strict" else (tx, torch.asarray)
    x = make(np.arange(12.0).reshape(3, 4))
    kw = {"n": 0, "axis": 1, "prepend": make(np.zeros((3, 1))), "append": make(np.ones((3, 2)))}
    y, pullback = rrule(ns.diff, x, **kw)
    assert tuple(y.shape) == (3, 4)
    g = make(np.arange(12.0).reshape(3, 4) + 1)
    np.testing.assert_allclose(np.asarray(pullback(g)[1]), np.asarray(g))
    test_rrule(xs.diff, xs.asarray(np.arange(12.0).reshape(3, 4)),
               fkwargs={"n": 0, "axis": 1, "prepend": xs.zeros((3, 1))})
    test_frule(xs.diff, xs.asarray(np.arange(12.0).reshape(3, 4)),
               fkwargs={"n": 0, "axis": 1, "append": xs.zeros((3, 1))})
