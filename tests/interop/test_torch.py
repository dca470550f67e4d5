"""The PyTorch bridge's callback path (NumPy views of tensors); the native one is tested in
test_torch_native.py."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from chainrules import (  # noqa: E402
    NoTangent,
    PullbackError,
    Tangent,
    debug_mode,
    frule_via_ad,
    rrule,
    rrule_via_ad,
)
from chainrules.interop import (  # noqa: E402
    NoRuleError,
    TangentConversionError,
    UnsupportedTransformError,
)
from chainrules.interop.torch import (  # noqa: E402
    TorchConfig,
    as_numpy_function,
)
from chainrules.interop.torch import torch_function as _torch_function  # noqa: E402
from chainrules.testing import test_frule, test_rrule  # noqa: E402

X = np.array([0.5, -1.0, 2.0])

# these rules are written with NumPy operators, which also run on tensors: "auto" would
# take them native; this file tests the callback path
torch_function = functools.partial(_torch_function, backend="callback")


def msg(text: str) -> str:
    """A regex matching ``text`` literally, whatever package prefix the test module has."""
    return re.escape(text).replace("conftest\\.", r"[\w.]*conftest\.").replace(
        "test_torch\\.", r"[\w.]*test_torch\.")


def close(a, b, rtol=1e-6, atol=1e-7):
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else a
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def tensor(x, **kw):
    """A tensor of NumPy's dtype for x (float64 for Python floats)."""
    return torch.tensor(np.asarray(x), **kw)


def test_backward(ex):
    x = tensor(X, requires_grad=True)
    torch_function(ex.cube)(x).sum().backward()
    close(x.grad, 3 * X**2)
    assert ex.counts == {"cube_rrule": 1}


def test_no_grad_needed_runs_plain_function(ex):
    out = torch_function(ex.cube)(tensor(X))
    close(out, X**3)
    assert ex.counts == {}


def test_dtype_and_no_copy(ex):
    x = tensor(X, dtype=torch.float32, requires_grad=True)
    y = torch_function(ex.cube)(x)
    assert y.dtype == torch.float32
    y.sum().backward()
    assert x.grad.dtype == torch.float32
    # a CPU tensor is seen by NumPy without a copy, and the result is not copied back
    seen = {}

    def identity_view(a):
        seen["a"] = a
        return a

    t = tensor(X)
    out = torch_function(identity_view)(t)
    assert np.shares_memory(seen["a"], t.numpy())
    assert out.data_ptr() == t.data_ptr()


def test_needs_input_grad_unthunks_only_requested(ex):
    a = tensor(X, requires_grad=True)
    b = tensor(2 * X)
    torch_function(ex.weighted)(a, b).sum().backward()
    close(a.grad, 2 * X)
    # the bridge unthunks a_bar only; debug mode's shape check on the pullback's result
    # (in the core's rrule) reads every cotangent's shape, b_bar's thunk included
    assert ex.counts == ({"a_bar": 1, "b_bar": 1} if debug_mode() else {"a_bar": 1})
    ex.counts.clear()
    a = tensor(X, requires_grad=True)
    b = tensor(2 * X, requires_grad=True)
    (ga,) = torch.autograd.grad(torch_function(ex.weighted)(a, b).sum(), [a])
    close(ga, 2 * X)
    # torch.autograd.grad only w.r.t. a still marks b as needing a gradient (needs_input_grad
    # is fixed when the graph is built), so both are computed here
    assert ex.counts["a_bar"] == 1


def test_torch_func_transforms(ex):
    f = torch_function(ex.cube)
    x = tensor(X)
    close(torch.func.grad(lambda x: f(x).sum())(x), 3 * X**2)
    (g,) = torch.func.vjp(f, x)[1](torch.ones(3, dtype=torch.float64))
    close(g, 3 * X**2)
    y, y_dot = torch.func.jvp(f, (x,), (torch.ones(3, dtype=torch.float64),))
    close(y_dot, 3 * X**2)
    close(torch.func.jacrev(f)(x), np.diag(3 * X**2))
    close(torch.func.jacfwd(f)(x), np.diag(3 * X**2))
    batch = torch.stack([x, 2 * x])
    close(torch.func.vmap(f)(batch), batch.numpy() ** 3)
    close(torch.func.vmap(torch.func.grad(lambda x: f(x).sum()))(batch), 3 * batch.numpy() ** 2)


def test_forward_ad_uses_frule_only(ex):
    import torch.autograd.forward_ad as fwad

    with fwad.dual_level():
        x = fwad.make_dual(tensor(X), torch.ones(3, dtype=torch.float64))
        y = torch_function(ex.cube)(x)
        close(fwad.unpack_dual(y).tangent, 3 * X**2)
    assert ex.counts == {"cube_frule": 1}


def test_complex_same_convention(ex):
    z = tensor([1 + 2j, -0.5 + 1j], requires_grad=True)
    torch_function(ex.abs2)(z).sum().backward()
    native = torch.func.grad(lambda z: (z.abs() ** 2).sum())(z.detach())
    close(z.grad, native)
    close(z.grad, 2 * z.detach().numpy())
    w = tensor([1 + 2j, 3 - 1j])
    zz = tensor([0.5 - 1j, 2 + 0.5j])
    ct = tensor([1 - 1j, 0.5 + 2j])
    bridged = torch.func.vjp(torch_function(ex.cmul), w, zz)[1](ct)
    native = torch.func.vjp(lambda w, z: w * z, w, zz)[1](ct)
    for a, b in zip(bridged, native):
        close(a, b)


def test_conjugate_view_input(ex):
    # a lazily conjugated tensor is resolved before NumPy sees it
    z = tensor([1 + 2j, -0.5 + 1j])
    out = torch_function(ex.cmul)(z.conj(), torch.ones(2, dtype=torch.complex128))
    close(out, np.conj(z.numpy()))


def test_dict_and_dataclass_arguments(ex):
    p = {"w": torch.arange(6.0, dtype=torch.float64).reshape(2, 3).requires_grad_(),
         "b": torch.ones(2, dtype=torch.float64, requires_grad=True)}
    x = tensor([1.0, -1.0, 0.5], requires_grad=True)
    torch_function(ex.affine_apply)(p, x).sum().backward()
    w_n = p["w"].detach().clone().requires_grad_()
    x_n = x.detach().clone().requires_grad_()
    (w_n @ x_n).sum().backward()
    close(p["w"].grad, w_n.grad)
    close(x.grad, x_n.grad)
    close(p["b"].grad, np.ones(2))
    q = ex.Affine(w=torch.ones((2, 3), dtype=torch.float64, requires_grad=True),
                  b=torch.zeros(2, dtype=torch.float64, requires_grad=True))
    torch_function(ex.affine_dc)(q, x.detach()).sum().backward()
    close(q.w.grad, np.outer(np.ones(2), x.detach().numpy()))
    close(q.b.grad, np.ones(2))


def test_namedtuple_output(ex):
    x = tensor(X, requires_grad=True)
    out = torch_function(ex.sincos)(x)
    assert type(out).__name__ == "SinCos"
    out.cos.sum().backward()  # no gradient flows into .sin: its cotangent is zero
    close(x.grad, -np.sin(X))


def test_integer_arguments_not_differentiated(ex):
    x = tensor(X, requires_grad=True)
    idx = torch.tensor([0, 2, 2])
    torch_function(ex.scaled_take)(x, idx, 3).sum().backward()
    close(x.grad, [3.0, 0.0, 6.0])


def test_second_derivative_of_cube(ex):
    x = tensor(X, requires_grad=True)
    (g,) = torch.autograd.grad(torch_function(ex.cube)(x).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    close(h, 6 * X)


def test_second_derivative_through_a_pullback_that_writes(ex):
    # the rule's pullback writes into an array (np.add.at): chainrules.ad differentiates
    # the write (issue #28), so the second derivative is exact
    x = tensor(X, requires_grad=True)
    y = torch_function(ex.scaled_take)(x, torch.tensor([0, 2, 2]), 3)
    (g,) = torch.autograd.grad((y**2).sum(), x, create_graph=True)
    g.sum().backward()
    close(x.grad, [18.0, 0.0, 36.0])


def scaled_into_buffer(x):
    return 2.0 * x


_BUFFER = np.zeros(3)


@rrule.register(scaled_into_buffer)
def scaled_into_buffer_rrule(x):
    def scaled_into_buffer_pullback(y_bar):
        # a write into a module-level array: chainrules.ad refuses it (MutationError)
        _BUFFER[:] = 2.0 * y_bar
        return NoTangent(), _BUFFER.copy()

    return scaled_into_buffer(x), scaled_into_buffer_pullback


def test_second_derivative_rule_not_differentiable_error():
    x = tensor(X, requires_grad=True)
    y = torch_function(scaled_into_buffer, backend="callback")(x)
    (g,) = torch.autograd.grad((y**2).sum(), x, create_graph=True)
    with pytest.raises(UnsupportedTransformError, match=msg(
            "torch_function(test_torch.scaled_into_buffer) does not support a second "
            "derivative with respect to the inputs: it differentiates the rrule of "
            "test_torch.scaled_into_buffer with chainrules.ad, which failed: MutationError")):
        g.sum().backward()


def test_torch_func_hessians(ex):
    # forward-over-reverse (torch.func.hessian = jacfwd(jacrev)), reverse-over-reverse,
    # and a Hessian-vector product: all through chainrules.ad on the rule's code
    f = torch_function(ex.cube)
    x = tensor(X)
    close(torch.func.hessian(lambda x: f(x).sum())(x), np.diag(6 * X))
    close(torch.func.jacrev(torch.func.jacrev(lambda x: f(x).sum()))(x), np.diag(6 * X))
    v = tensor([1.0, 2.0, 3.0])
    _, hvp = torch.func.jvp(torch.func.grad(lambda x: f(x).sum()), (x,), (v,))
    close(hvp, 6 * X * v.numpy())


def test_second_derivative_through_cotangent_only(ex):
    # forward-over-reverse with respect to the cotangent: the pullback is linear in it
    f = torch_function(ex.cube)
    x = tensor(X)

    def vjp_of(v):
        return torch.func.vjp(f, x)[1](v)[0]

    v = torch.ones(3, dtype=torch.float64)
    _, jvp = torch.func.jvp(vjp_of, (v,), (2 * v,))
    close(jvp, 2 * 3 * X**2)


def test_no_rule_error(ex):
    x = tensor(X, requires_grad=True)
    with pytest.raises(NoRuleError, match=msg(
            "torch_function(conftest.no_rule): no rrule is registered for "
            "conftest.no_rule(ndarray), and reverse mode (a gradient or VJP) needs one.")):
        torch_function(ex.no_rule)(x)
    with pytest.raises(NoRuleError, match=msg(
            "torch_function(conftest.no_rule): no frule is registered for "
            "conftest.no_rule(ndarray), and forward mode (a JVP) needs one.")):
        torch.func.jvp(torch_function(ex.no_rule), (tensor(X),), (tensor(X),))


def test_tangent_conversion_errors(ex):
    x = tensor(X, requires_grad=True)
    if debug_mode():  # the core's check of the pullback's result comes first
        expected = (PullbackError, msg(
            "the pullback of the rrule for conftest.bad_shape returned a "
            "cotangent of shape (7, 5) for argument 1 of shape (3,); project it with "
            "ProjectTo(x)"))
    else:
        expected = (TangentConversionError, msg(
            "torch_function(conftest.bad_shape): cannot convert the tangent for argument 1: "
            "expected a tangent of ndarray(shape=(3,), dtype=float64), got "
            "ndarray(shape=(7, 5), dtype=float64)"))
    with pytest.raises(expected[0], match=expected[1]):
        torch_function(ex.bad_shape)(x).sum().backward()
    with pytest.raises(TangentConversionError, match=msg(
            "torch_function(conftest.bad_structural): cannot convert the tangent for "
            "argument 1: expected a tangent of ndarray(shape=(3,), dtype=float64), got "
            "Tangent[tuple]; a structural tangent cannot stand for an array")):
        torch_function(ex.bad_structural)(x).sum().backward()


def test_not_callable_error():
    with pytest.raises(TypeError, match=re.escape(
            "torch_function(f): f must be callable, got str.")):
        torch_function("sin")


def test_config_rrule_and_frule_via_ad():
    A = np.array([[2.0, 0.5], [0.3, 3.0]])
    x = np.array([0.3, 1.2])
    solve = as_numpy_function(torch.linalg.solve)
    test_rrule(solve, A, x, rrule_f=rrule_via_ad, config=TorchConfig())
    test_frule(solve, A, x, frule_f=frule_via_ad, config=TorchConfig())

    class WrongSin(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return torch.sin(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return 2.0 * g

    with pytest.raises(AssertionError, match="wrong cotangent for argument 1"):
        test_rrule(as_numpy_function(WrongSin.apply), x, rrule_f=rrule_via_ad,
                   config=TorchConfig())


def test_config_structures():
    def f(p, x):
        return (p["a"] * torch.sin(x), x.sum())

    p = {"a": np.array([2.0, 3.0]), "n": 3}
    x = np.array([0.1, 0.2])
    y, pullback = rrule_via_ad(TorchConfig(), f, p, x)
    close(y[0], p["a"] * np.sin(x))
    self_bar, p_bar, x_bar = pullback(Tangent[tuple](np.ones(2), 1.0))
    assert self_bar == NoTangent()
    close(p_bar["a"], np.sin(x))
    assert p_bar["n"] == NoTangent()
    close(x_bar, p["a"] * np.cos(x) + 1.0)


def _tanh_affine(A, x):
    return np.tanh(A @ x)


@pytest.fixture(scope="module")
def tanh_affine():
    from chainrules import Thunk, rrule

    @rrule.register(_tanh_affine)
    def tanh_affine_rrule(A, x):
        y = np.tanh(A @ x)

        def tanh_affine_pullback(y_bar):
            s = y_bar * (1 - y**2)
            return NoTangent(), Thunk(lambda: np.outer(s, x)), Thunk(lambda: A.T @ s)

        return y, tanh_affine_pullback

    return _tanh_affine


def test_hessian_by_differentiating_the_rule(tanh_affine):
    # the rule's code (tanh, @, outer, thunks) is differentiable by chainrules.ad, so
    # reverse-over-reverse through the bridge equals PyTorch's own Hessian
    A = tensor([[1.0, 2.0, -1.0], [0.5, -1.0, 0.3]])
    x = tensor([0.3, -0.2, 0.1])
    f = torch_function(tanh_affine)
    bridged = torch.autograd.functional.hessian(lambda A, x: (f(A, x) ** 2).sum(), (A, x))
    native = torch.autograd.functional.hessian(
        lambda A, x: (torch.tanh(A @ x) ** 2).sum(), (A, x))
    for i in range(2):
        for j in range(2):
            close(bridged[i][j], native[i][j], rtol=1e-10, atol=1e-12)


def test_third_derivative_error(tanh_affine):
    A = tensor([[1.0, 2.0, -1.0], [0.5, -1.0, 0.3]])
    x = tensor([0.3, -0.2, 0.1], requires_grad=True)
    (g,) = torch.autograd.grad(torch_function(tanh_affine)(A, x).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    with pytest.raises(UnsupportedTransformError, match=msg(
            "torch_function(test_torch._tanh_affine) does not support a third derivative: "
            "second derivatives are computed by differentiating the rrule's code with "
            "chainrules.ad")):
        torch.autograd.grad(h.sum() + x.sum(), x)


def test_torch_func_hessian_matches_native(tanh_affine):
    from chainrules import frule

    if not frule.has_rules(tanh_affine):
        @frule.register(tanh_affine)
        def tanh_affine_frule(dargs, A, x):
            y = np.tanh(A @ x)
            return y, (1 - y**2) * (dargs[1] @ x + A @ dargs[2])

    A = tensor([[1.0, 2.0, -1.0], [0.5, -1.0, 0.3]])
    x = tensor([0.3, -0.2, 0.1])
    f = torch_function(tanh_affine)
    bridged = torch.func.hessian(lambda x: (f(A, x) ** 2).sum())(x)
    native = torch.func.hessian(lambda x: (torch.tanh(A @ x) ** 2).sum())(x)
    close(bridged, native, rtol=1e-10, atol=1e-12)


def test_forward_mode_with_an_integer_output():
    # np.frexp's exponent is an integer tensor: its tangent must be None, not zeros
    import torch.autograd.forward_ad as fwad

    f = torch_function(np.frexp)
    x = tensor([0.5, 3.0, -7.0])
    mantissa = lambda x: f(x)[0]  # noqa: E731
    close(torch.func.jacfwd(mantissa)(x), torch.func.jacrev(mantissa)(x))
    with fwad.dual_level():
        m, e = f(fwad.make_dual(x, torch.ones(3, dtype=torch.float64)))
        assert e.dtype == torch.int32 and fwad.unpack_dual(e).tangent is None
        close(fwad.unpack_dual(m).tangent, torch.func.jacrev(mantissa)(x).diagonal())


def _sin_times(x, w):
    return np.sin(x) * w


@pytest.fixture(scope="module")
def sin_times():
    from chainrules import frule, rrule

    @rrule.register(_sin_times)
    def sin_times_rrule(x, w):
        s = np.sin(x)

        def sin_times_pullback(y_bar):
            # w_bar in x's (broadcast) shape: the guide allows it, the bridge projects
            return NoTangent(), y_bar * np.cos(x) * w, y_bar * s

        return s * w, sin_times_pullback

    @frule.register(_sin_times)
    def sin_times_frule(dargs, x, w):
        return np.sin(x) * w, np.cos(x) * w * dargs[1] + np.sin(x) * dargs[2]

    return _sin_times


def test_hessian_projects_broadcast_cotangents(sin_times):
    x = tensor([[0.3, -1.0, 2.0], [1.5, 0.2, -0.7]])
    w = tensor([0.5, 2.0, -1.0])
    f = torch_function(sin_times)
    for transform in (torch.func.hessian, lambda h: torch.func.jacrev(torch.func.jacrev(h))):
        if debug_mode():
            # the rule skips ProjectTo, which debug mode refuses (by design: it checks
            # that every cotangent has its argument's shape); the bridge projects otherwise
            with pytest.raises(PullbackError, match=msg(
                    "returned a cotangent of shape (2, 3) for argument 2 of shape (3,); "
                    "project it with ProjectTo(x)")):
                transform(lambda w: (f(x, w) ** 2).sum())(w)
            continue
        bridged = transform(lambda w: (f(x, w) ** 2).sum())(w)
        native = transform(lambda w: ((torch.sin(x) * w) ** 2).sum())(w)
        close(bridged, native, rtol=1e-10, atol=1e-12)


def test_second_derivatives_hold_a_bool_condition_fixed():
    # np.where's condition is a bool tensor: chainrules.ad must not be asked to differentiate it
    f = torch_function(np.where)
    c = torch.tensor([True, False, True])
    x, y = tensor([0.5, -1.0, 2.0]), tensor([1.5, 2.0, -3.0])
    for transform in (torch.func.hessian, lambda h: torch.func.jacrev(torch.func.jacrev(h))):
        bridged = transform(lambda x: (f(c, x, y) ** 3).sum())(x)
        native = transform(lambda x: (torch.where(c, x, y) ** 3).sum())(x)
        close(bridged, native)
