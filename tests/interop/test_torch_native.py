"""The PyTorch bridge's native path: functions and rules written with the array API, on tensors.

Each row is a user function with rules written against ``xp = array_namespace(x)``,
the same maths in torch operations, and how to make its inputs. Every row is checked,
in float64, float32 and complex where its maths allows, against PyTorch's own
autograd of the torch version: ``gradcheck`` / ``gradgradcheck`` (float64, complex128),
and ``torch.func.grad``, ``vmap``, ``jacrev``, ``jacfwd`` and ``hessian``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from chainrules import (  # noqa: E402
    NoTangent,
    PullbackError,
    Thunk,
    ZeroTangent,
    array_namespace,
    debug_mode,
    frule,
    rrule,
    rrule_via_ad,
    scalar_rule,
)
from chainrules.interop import NumPyOnlyRuleError, TangentConversionError  # noqa: E402
from chainrules.interop.torch import TorchConfig, torch_function  # noqa: E402

# array-api-compat's conj is torch.conj_physical, which torch.func.vmap runs through a
# per-example fallback with this warning: a performance note of torch's, not an error
pytestmark = pytest.mark.filterwarnings(
    "ignore:There is a performance drop because we have not yet implemented the batching "
    "rule:UserWarning")

COUNTS: dict[str, int] = {}
GRAD_MODE_IN_SOLVE_RRULE: list[bool] = []


def _count(name: str) -> None:
    COUNTS[name] = COUNTS.get(name, 0) + 1


# --- user functions with array-API rules -------------------------------------------------


def sin_times(x, w):
    """sin(x) * w, w broadcast against x."""
    xp = array_namespace(x, w)
    return xp.sin(x) * w


@rrule.register(sin_times)
def sin_times_rrule(x, w):
    xp = array_namespace(x, w)
    s = xp.sin(x)

    def sin_times_pullback(y_bar):
        # w_bar keeps the broadcast shape: the bridge sums it back to w's shape
        return (NoTangent(), Thunk(lambda: y_bar * xp.conj(xp.cos(x) * w)),
                Thunk(lambda: y_bar * xp.conj(s)))

    return s * w, sin_times_pullback


@frule.register(sin_times)
def sin_times_frule(dargs, x, w):
    xp = array_namespace(x, w)
    _, x_dot, w_dot = dargs
    return xp.sin(x) * w, xp.cos(x) * w * x_dot + xp.sin(x) * w_dot


def logsumexp(x):
    xp = array_namespace(x)
    m = xp.max(x)
    return m + xp.log(xp.sum(xp.exp(x - m)))


@rrule.register(logsumexp)
def logsumexp_rrule(x):
    xp = array_namespace(x)
    y = logsumexp(x)
    p = xp.exp(x - y)

    def logsumexp_pullback(y_bar):
        return NoTangent(), y_bar * p

    return y, logsumexp_pullback


@frule.register(logsumexp)
def logsumexp_frule(dargs, x):
    xp = array_namespace(x)
    y = logsumexp(x)
    return y, xp.sum(xp.exp(x - y) * dargs[1])


class SinCos(NamedTuple):
    sin: object
    cos: object


def sincos(x):
    xp = array_namespace(x)
    return SinCos(xp.sin(x), xp.cos(x))


@rrule.register(sincos)
def sincos_rrule(x):
    xp = array_namespace(x)
    s, c = xp.sin(x), xp.cos(x)

    def sincos_pullback(y_bar):
        s_bar, c_bar = y_bar.sin, y_bar.cos
        x_bar = ZeroTangent()
        if not isinstance(s_bar, ZeroTangent):
            x_bar = x_bar + s_bar * xp.conj(c)
        if not isinstance(c_bar, ZeroTangent):
            x_bar = x_bar - c_bar * xp.conj(s)
        return NoTangent(), x_bar

    return SinCos(s, c), sincos_pullback


@frule.register(sincos)
def sincos_frule(dargs, x):
    xp = array_namespace(x)
    s, c = xp.sin(x), xp.cos(x)
    from chainrules import Tangent

    return SinCos(s, c), Tangent[SinCos](sin=c * dargs[1], cos=-s * dargs[1])


def power(x, n):
    """x**n for a Python int n (not differentiated)."""
    return x**n


@rrule.register(power)
def power_rrule(x, n: int):
    def power_pullback(y_bar):
        xp = array_namespace(x)
        return NoTangent(), y_bar * n * xp.conj(x ** (n - 1)), NoTangent()

    return x**n, power_pullback


@frule.register(power)
def power_frule(dargs, x, n: int):
    return x**n, n * x ** (n - 1) * dargs[1]


def softplus(x, *, beta=1.0):
    xp = array_namespace(x)
    return xp.log1p(xp.exp(beta * x)) / beta


@rrule.register(softplus)
def softplus_rrule(x, *, beta=1.0):
    xp = array_namespace(x)
    e = xp.exp(beta * x)

    def softplus_pullback(y_bar):
        return NoTangent(), y_bar * e / (1 + e)

    return xp.log1p(e) / beta, softplus_pullback


@frule.register(softplus)
def softplus_frule(dargs, x, *, beta=1.0):
    xp = array_namespace(x)
    e = xp.exp(beta * x)
    return xp.log1p(e) / beta, e / (1 + e) * dargs[1]


def solve(A, b):
    xp = array_namespace(A, b)
    return xp.linalg.solve(A, b)


@rrule.register(solve)
def solve_rrule(A, b):
    xp = array_namespace(A, b)
    # one factorisation serves the primal and the pullback's adjoint solve
    GRAD_MODE_IN_SOLVE_RRULE.append(torch.is_grad_enabled())
    lu, pivots = xp.linalg.lu_factor(A)
    y = xp.linalg.lu_solve(lu, pivots, b)

    def solve_pullback(y_bar):
        _count("solve_pullback")
        b_bar = xp.linalg.lu_solve(lu, pivots, y_bar, adjoint=True)
        A_bar = Thunk(lambda: -(b_bar @ xp.conj(xp.matrix_transpose(y))))
        return NoTangent(), A_bar, b_bar

    return y, solve_pullback


@frule.register(solve)
def solve_frule(dargs, A, b):
    xp = array_namespace(A, b)
    _, A_dot, b_dot = dargs
    y = xp.linalg.solve(A, b)
    return y, xp.linalg.solve(A, b_dot - A_dot @ y)


def abs2(z):
    xp = array_namespace(z)
    return xp.real(z * xp.conj(z))


@rrule.register(abs2)
def abs2_rrule(z):
    xp = array_namespace(z)

    def abs2_pullback(y_bar):
        return NoTangent(), 2 * y_bar * z

    return xp.real(z * xp.conj(z)), abs2_pullback


@frule.register(abs2)
def abs2_frule(dargs, z):
    xp = array_namespace(z)
    return xp.real(z * xp.conj(z)), 2 * xp.real(xp.conj(z) * dargs[1])


def tanh_affine(A, x):
    xp = array_namespace(A, x)
    return xp.tanh(A @ x)


@rrule.register(tanh_affine)
def tanh_affine_rrule(A, x):
    xp = array_namespace(A, x)
    y = xp.tanh(A @ x)

    def tanh_affine_pullback(y_bar):
        s = y_bar * xp.conj(1 - y**2)

        def A_bar():
            _count("tanh_affine_A_bar")
            return s[:, None] * xp.conj(x)[None, :]

        def x_bar():
            _count("tanh_affine_x_bar")
            return xp.conj(xp.matrix_transpose(A)) @ s

        return NoTangent(), Thunk(A_bar), Thunk(x_bar)

    return y, tanh_affine_pullback


@frule.register(tanh_affine)
def tanh_affine_frule(dargs, A, x):
    xp = array_namespace(A, x)
    y = xp.tanh(A @ x)
    return y, (1 - y**2) * (dargs[1] @ x + A @ dargs[2])


def first_twice(x, y):
    """2x; y is accepted and ignored (its cotangent is a ZeroTangent)."""
    return 2 * x


@rrule.register(first_twice)
def first_twice_rrule(x, y):
    def first_twice_pullback(y_bar):
        return NoTangent(), 2 * y_bar, ZeroTangent()

    return 2 * x, first_twice_pullback


@frule.register(first_twice)
def first_twice_frule(dargs, x, y):
    return 2 * x, 2 * dargs[1]


def soft_clip(x):
    """x where |x| < 1, else sign(x) * (2 - 1/|x|): smooth, a branch done with xp.where."""
    xp = array_namespace(x)
    a = xp.abs(x)
    # sign(x) as x / |x| on the safe side: array-api-compat's sign masks, which vmap refuses
    safe = xp.where(a < 1, 1.0, a)
    return xp.where(a < 1, x, x / safe * (2 - 1 / safe))


@rrule.register(soft_clip)
def soft_clip_rrule(x):
    xp = array_namespace(x)
    a = xp.abs(x)
    inside = a < 1
    safe = xp.where(inside, 1.0, a)

    def soft_clip_pullback(y_bar):
        return NoTangent(), xp.where(inside, y_bar, y_bar / safe**2)

    return soft_clip(x), soft_clip_pullback


@frule.register(soft_clip)
def soft_clip_frule(dargs, x):
    xp = array_namespace(x)
    a = xp.abs(x)
    return soft_clip(x), xp.where(a < 1, dargs[1], dargs[1] / xp.where(a < 1, 1.0, a) ** 2)


def take_scaled(x, idx):
    """x[idx] * 3 for an integer index tensor idx."""
    return x[idx] * 3


@rrule.register(take_scaled)
def take_scaled_rrule(x, idx):
    xp = array_namespace(x)

    def take_scaled_pullback(y_bar):
        x_bar = xp.zeros_like(x)
        # index_add is torch's scatter-add; out of place, so x_bar's graph is kept
        x_bar = x_bar.index_add(0, idx, 3 * y_bar)
        return NoTangent(), x_bar, NoTangent()

    return x[idx] * 3, take_scaled_pullback


@frule.register(take_scaled)
def take_scaled_frule(dargs, x, idx):
    return x[idx] * 3, dargs[1][idx] * 3


def mean_var(x):
    """Row means and variances of a matrix: a tuple output."""
    xp = array_namespace(x)
    m = xp.mean(x, axis=1)
    return m, xp.mean((x - m[:, None]) ** 2, axis=1)


@rrule.register(mean_var)
def mean_var_rrule(x):
    xp = array_namespace(x)
    n = x.shape[1]
    m = xp.mean(x, axis=1)
    d = x - m[:, None]

    def mean_var_pullback(y_bar):
        m_bar, v_bar = y_bar
        x_bar = ZeroTangent()
        if not isinstance(m_bar, ZeroTangent):
            x_bar = x_bar + xp.broadcast_to(m_bar[:, None] / n, x.shape)
        if not isinstance(v_bar, ZeroTangent):
            x_bar = x_bar + v_bar[:, None] * 2 * d / n
        return NoTangent(), x_bar

    return (m, xp.mean(d**2, axis=1)), mean_var_pullback


@frule.register(mean_var)
def mean_var_frule(dargs, x):
    xp = array_namespace(x)
    m = xp.mean(x, axis=1)
    d = x - m[:, None]
    m_dot = xp.mean(dargs[1], axis=1)
    from chainrules import Tangent

    return (m, xp.mean(d**2, axis=1)), Tangent[tuple](
        m_dot, xp.mean(2 * d * (dargs[1] - m_dot[:, None]), axis=1))


def hypot_soft(x, w):
    """sqrt(x**2 + w**2 + 1), elementwise with broadcasting; rules from scalar_rule."""
    xp = array_namespace(x, w)
    return xp.sqrt(x * x + w * w + 1)


scalar_rule(hypot_soft, lambda x, w, *, y: (x / y, w / y))


# --- the table ------------------------------------------------------------------------------


@dataclasses.dataclass
class Row:
    name: str
    fn: Callable
    native: Callable  # the same maths in torch operations
    make: Callable  # (dtype, generator) -> args
    diff: tuple[int, ...] = (0,)  # differentiated positional arguments
    kwargs: dict = dataclasses.field(default_factory=dict)
    complex_ok: bool = True
    # the rule leaves a cotangent in the broadcast shape for the bridge to sum: debug
    # mode refuses that (test_debug_mode_refuses_unprojected_cotangent)
    unprojected: bool = False


def _skip_unprojected_in_debug_mode(row: Row) -> None:
    if row.unprojected and debug_mode():
        pytest.skip("debug mode refuses this rule's unprojected cotangent, by design")


def _r(g, dtype, *shape):
    t = torch.randn(*shape, generator=g, dtype=torch.float64)
    if dtype.is_complex:
        t = t + 1j * torch.randn(*shape, generator=g, dtype=torch.float64)
    return t.to(dtype)


def _well_conditioned(g, dtype, n=3):
    return _r(g, dtype, n, n) + 3 * torch.eye(n, dtype=dtype)


ROWS = [
    Row("sin_times (broadcast)", sin_times, lambda x, w: torch.sin(x) * w,
        lambda dt, g: (_r(g, dt, 2, 3), _r(g, dt, 3)), diff=(0, 1), unprojected=True),
    Row("logsumexp", logsumexp, lambda x: torch.logsumexp(x, 0),
        lambda dt, g: (_r(g, dt, 4),), complex_ok=False),
    Row("sincos (namedtuple)", sincos, lambda x: SinCos(torch.sin(x), torch.cos(x)),
        lambda dt, g: (_r(g, dt, 3),)),
    Row("power (int argument)", power, lambda x, n: x**n,
        lambda dt, g: (_r(g, dt, 3), 3)),
    Row("softplus (keyword)", softplus, lambda x, beta: torch.log1p(torch.exp(beta * x)) / beta,
        lambda dt, g: (_r(g, dt, 3),), kwargs={"beta": 2.0}, complex_ok=False),
    Row("solve (factorisation reused)", solve, torch.linalg.solve,
        lambda dt, g: (_well_conditioned(g, dt), _r(g, dt, 3, 2)), diff=(0, 1)),
    Row("abs2 (complex to real)", abs2, lambda z: (z * z.conj()).real,
        lambda dt, g: (_r(g, dt, 3),)),
    Row("tanh_affine (thunks)", tanh_affine, lambda A, x: torch.tanh(A @ x),
        lambda dt, g: (_r(g, dt, 2, 3), _r(g, dt, 3)), diff=(0, 1)),
    Row("first_twice (ZeroTangent)", first_twice, lambda x, y: 2 * x + 0 * y,
        lambda dt, g: (_r(g, dt, 3), _r(g, dt, 3)), diff=(0, 1)),
    Row("soft_clip (xp.where)", soft_clip,
        lambda x: torch.where(x.abs() < 1, x,
                              torch.sign(x) * (2 - 1 / torch.where(x.abs() < 1, 1.0, x.abs()))),
        lambda dt, g: (torch.tensor([-2.5, -0.5, 0.3, 1.7], dtype=dt),), complex_ok=False),
    Row("take_scaled (int tensor)", take_scaled, lambda x, idx: x[idx] * 3,
        lambda dt, g: (_r(g, dt, 4), torch.tensor([0, 2, 2, 3]))),
    Row("hypot_soft (scalar_rule)", hypot_soft, lambda x, w: torch.sqrt(x * x + w * w + 1),
        lambda dt, g: (_r(g, dt, 2, 3), _r(g, dt, 3)), diff=(0, 1)),
    Row("mean_var (tuple output)", mean_var,
        lambda x: (x.mean(1), ((x - x.mean(1, keepdim=True)) ** 2).mean(1)),
        lambda dt, g: (_r(g, dt, 2, 4),), complex_ok=False),
]

DTYPES = {"float64": torch.float64, "float32": torch.float32, "complex128": torch.complex128}
TOL = {torch.float64: (1e-9, 1e-11), torch.complex128: (1e-9, 1e-11),
       torch.float32: (2e-4, 2e-5)}


def _cases():
    for row in ROWS:
        for dname, dt in DTYPES.items():
            if dt.is_complex and not row.complex_ok:
                continue
            yield pytest.param(row, dt, id=f"{row.name.split()[0]}-{dname}")


CASES = list(_cases())


def _leaves(out):
    return list(out) if isinstance(out, tuple) else [out]


def _loss(out):
    """A real scalar of every float output, with non-zero second derivatives."""
    total = 0.0
    for o in _leaves(out):
        if o.is_complex():
            total = total + (o.real**2 * o.imag).sum() + (o.imag**3).sum()
        elif o.is_floating_point():
            total = total + (o**3).sum()
    return total


def _close(a, b, dt):
    rtol, atol = TOL[dt]
    for x, y in zip(_leaves(a), _leaves(b)):
        torch.testing.assert_close(x, y, rtol=rtol, atol=atol)


def _partial(fn, row, args, i):
    """``fn`` as a function of argument ``i`` alone."""

    def fn_of_arg(a):
        full = list(args)
        full[i] = a
        return fn(*full, **row.kwargs)

    return fn_of_arg


@pytest.mark.parametrize(("row", "dt"), CASES)
def test_gradcheck_and_gradgradcheck(row, dt):
    _skip_unprojected_in_debug_mode(row)
    if dt is torch.float32:
        pytest.skip("gradcheck's finite differences need float64 or complex128")
    g = torch.Generator().manual_seed(0)
    args = list(row.make(dt, g))
    f = torch_function(row.fn, backend="native")
    for i in row.diff:
        args[i] = args[i].detach().requires_grad_()

    def fn(*diff):
        full = list(args)
        for i, a in zip(row.diff, diff):
            full[i] = a
        return f(*full, **row.kwargs)

    diff = tuple(args[i] for i in row.diff)
    assert torch.autograd.gradcheck(fn, diff)
    assert torch.autograd.gradgradcheck(fn, diff)
    assert torch.autograd.gradcheck(fn, diff, check_forward_ad=True, check_backward_ad=False,
                                    check_undefined_grad=False, check_batched_grad=False)


@pytest.mark.parametrize(("row", "dt"), CASES)
def test_torch_func_against_torch_autograd(row, dt):
    _skip_unprojected_in_debug_mode(row)
    g = torch.Generator().manual_seed(1)
    args = row.make(dt, g)
    f = torch_function(row.fn, backend="native")
    for i in row.diff:
        _check_transforms(_partial(f, row, args, i), _partial(row.native, row, args, i),
                          args[i], dt, g)


def _check_transforms(bridged, native, x, dt, g):
    def bridged_loss(a):
        return _loss(bridged(a))

    def native_loss(a):
        return _loss(native(a))

    _close(bridged(x), native(x), dt)
    _close(torch.func.grad(bridged_loss)(x), torch.func.grad(native_loss)(x), dt)
    if dt.is_complex:  # jacrev and jacfwd are for real inputs: their vjp and jvp
        x_dot = _r(g, dt, *x.shape)
        _close(torch.func.jvp(bridged, (x,), (x_dot,)), torch.func.jvp(native, (x,), (x_dot,)),
               dt)
        y = native(x)
        y_bar = [_r(g, o.dtype, *o.shape) for o in _leaves(y)]
        y_bar = type(y)(*y_bar) if isinstance(y, tuple) else y_bar[0]
        _close(torch.func.vjp(bridged, x)[1](y_bar), torch.func.vjp(native, x)[1](y_bar), dt)
    else:
        _close(torch.func.jacrev(bridged)(x), torch.func.jacrev(native)(x), dt)
        _close(torch.func.jacfwd(bridged)(x), torch.func.jacfwd(native)(x), dt)
    batch = torch.stack([x, 2 * x])
    _close(torch.func.vmap(bridged)(batch), torch.func.vmap(native)(batch), dt)
    _close(torch.func.vmap(torch.func.grad(bridged_loss))(batch),
           torch.func.vmap(torch.func.grad(native_loss))(batch), dt)
    if not dt.is_complex:  # torch.func.hessian is for real inputs
        _close(torch.func.hessian(bridged_loss)(x), torch.func.hessian(native_loss)(x), dt)
        _close(torch.func.jacrev(torch.func.jacrev(bridged_loss))(x),
               torch.func.jacrev(torch.func.jacrev(native_loss))(x), dt)


@pytest.mark.parametrize(("row", "dt"), CASES)
def test_backward_and_double_backward_against_torch_autograd(row, dt):
    _skip_unprojected_in_debug_mode(row)
    g = torch.Generator().manual_seed(2)
    args = list(row.make(dt, g))
    results = []
    for fn in (torch_function(row.fn, backend="native"), row.native):
        leaves = [a.detach().clone().requires_grad_() if i in row.diff else a
                  for i, a in enumerate(args)]
        loss = _loss(fn(*leaves, **row.kwargs))
        diff = [leaves[i] for i in row.diff]
        grads = torch.autograd.grad(loss, diff, create_graph=True, materialize_grads=True)
        second = torch.autograd.grad(sum((gr.abs() ** 2).sum() for gr in grads), diff,
                                     materialize_grads=True)
        results.append([*grads, *second])
    _close(tuple(results[0]), tuple(results[1]), dt)


# --- the choice of path -----------------------------------------------------------------------


def numpy_only(x):
    return np.sin(np.asarray(x))


@rrule.register(numpy_only)
def numpy_only_rrule(x):
    def numpy_only_pullback(y_bar):
        return NoTangent(), y_bar * np.cos(np.asarray(x))

    return np.sin(np.asarray(x)), numpy_only_pullback


def numpy_pullback(x):
    return 2 * x


@rrule.register(numpy_pullback)
def numpy_pullback_rrule(x):
    def numpy_pullback_pullback(y_bar):
        return NoTangent(), np.full(tuple(x.shape), 2.0)

    return 2 * x, numpy_pullback_pullback


def wrong_shape(x):
    return 2 * x


@rrule.register(wrong_shape)
def wrong_shape_rrule(x):
    xp = array_namespace(x)

    def wrong_shape_pullback(y_bar):
        return NoTangent(), xp.ones((7, 5), dtype=x.dtype)

    return 2 * x, wrong_shape_pullback


def msg(text: str) -> str:
    return re.escape(text).replace("test_torch_native\\.", r"[\w.]*test_torch_native\.")


def test_auto_picks_native_for_array_api_rules_and_callback_for_numpy():
    x = torch.tensor([0.1, 0.2], dtype=torch.float64)
    f = torch_function(sin_times)
    assert f.backend_for(x, x) == "native"
    h = torch_function(numpy_only)
    assert h.backend_for(x) == "callback"
    ((backend, reason),) = h.backends.values()
    assert backend == "callback" and "NumPy-only" in reason
    # the callback path gives the right gradient
    xg = x.clone().requires_grad_()
    h(xg).sum().backward()
    torch.testing.assert_close(xg.grad, torch.cos(x))
    # torch functions (no rules of their own needed on tensors) stay on the fast path
    assert torch_function(sin_times, backend="callback").backend_for(x, x) == "callback"


def test_auto_decides_once_per_signature():
    COUNTS.clear()
    f = torch_function(solve)
    A = _well_conditioned(torch.Generator().manual_seed(0), torch.float64)
    b = torch.ones(3, 2, dtype=torch.float64)
    for _ in range(3):
        f(A, b)
    assert len(f.backends) == 1
    assert COUNTS == {"solve_pullback": 1}  # the one probe, on meta tensors
    f(A.to(torch.float32), b.to(torch.float32))
    assert len(f.backends) == 2


def test_auto_first_call_under_a_transform():
    f = torch_function(logsumexp)
    batch = torch.tensor([[0.1, 0.2, -0.3], [1.0, 2.0, 3.0]], dtype=torch.float64)
    per_row = torch.func.vmap(torch.func.grad(f))(batch)
    torch.testing.assert_close(per_row, torch.softmax(batch, dim=1))
    assert [choice for choice, _ in f.backends.values()] == ["native"]


def test_native_numpy_only_rule_error():
    x = torch.tensor([0.1, 0.2], dtype=torch.float64)
    f = torch_function(numpy_only, backend="native")
    expected = msg('torch_function(test_torch_native.numpy_only, backend="native"): the function '
                   "returned ndarray(shape=(2,), dtype=float64) for output, where a torch.Tensor "
                   "was due; the rule is NumPy-only")
    with pytest.raises(NumPyOnlyRuleError, match=expected):
        f(x)
    # under torch.func the forward pass sees plain tensors, which NumPy converts silently
    with pytest.raises(NumPyOnlyRuleError, match=msg('backend="callback"')):
        torch.func.grad(lambda x: f(x).sum())(x)
    # differentiated: the rrule runs in forward, on tensors that do not require grad there
    with pytest.raises(NumPyOnlyRuleError, match=msg(
            'torch_function(test_torch_native.numpy_only, backend="native"): the rrule '
            "returned ndarray(shape=(2,), dtype=float64) for output")):
        f(x.clone().requires_grad_())
    g = torch_function(numpy_pullback, backend="native")
    with pytest.raises(NumPyOnlyRuleError, match=msg(
            "the rrule's pullback returned ndarray(shape=(2,), dtype=float64) for argument 1, "
            "where a torch.Tensor was due")):
        g(x.clone().requires_grad_()).sum().backward()


def test_native_tangent_shape_error():
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    if debug_mode():  # the core's check of the pullback runs first
        with pytest.raises(PullbackError, match=msg(
                "returned a cotangent of shape (7, 5) for argument 1 of shape (3,)")):
            torch_function(wrong_shape, backend="native")(x).sum().backward()
        return
    with pytest.raises(TangentConversionError, match=msg(
            "torch_function(test_torch_native.wrong_shape): cannot convert the tangent for "
            "argument 1: expected a tangent of Tensor(shape=torch.Size([3]), "
            "dtype=torch.float64), got Tensor(shape=torch.Size([7, 5]), dtype=torch.float64); "
            "cannot project")):
        torch_function(wrong_shape, backend="native")(x).sum().backward()


def test_unknown_backend_error():
    with pytest.raises(ValueError, match=msg(
            "torch_function(test_torch_native.solve): backend must be one of ('auto', "
            "'native', 'callback'), got 'jit'.")):
        torch_function(solve, backend="jit")


# --- what the native Function does ------------------------------------------------------------


def test_plain_backward_reuses_the_pullback_and_double_backward_recomputes_it():
    A = _well_conditioned(torch.Generator().manual_seed(3), torch.float64).requires_grad_()
    b = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    f = torch_function(solve, backend="native")
    calls = GRAD_MODE_IN_SOLVE_RRULE
    calls.clear()
    f(A, b).sum().backward()
    assert calls == [False]  # once, in forward; the backward pass reused its pullback
    calls.clear()
    (gA,) = torch.autograd.grad(f(A, b).sum(), A, create_graph=True)
    # forward's pullback has no graph: the differentiable backward ran the rule again
    assert calls == [False, True]
    assert gA.requires_grad
    calls.clear()
    torch.func.grad(lambda b: f(A.detach(), b).sum())(b.detach())
    assert calls == [True]  # under torch.func: forward runs f alone, backward the rrule


def test_needs_input_grad_unthunks_only_requested():
    A = torch.ones(2, 3, dtype=torch.float64)
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    COUNTS.clear()
    torch_function(tanh_affine, backend="native")(A, x).sum().backward()
    # debug mode reads every cotangent's shape, so it computes each thunk
    assert COUNTS == ({"tanh_affine_x_bar": 1, "tanh_affine_A_bar": 1} if debug_mode()
                      else {"tanh_affine_x_bar": 1})


def test_debug_mode_refuses_unprojected_cotangent():
    x, w = torch.ones(2, 3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    w.requires_grad_()
    was = debug_mode()
    debug_mode(True)
    try:
        with pytest.raises(PullbackError, match=msg(
                "returned a cotangent of shape (2, 3) for argument 2 of shape (3,); project "
                "it with ProjectTo(x)")):
            torch_function(sin_times, backend="native")(x, w).sum().backward()
    finally:
        debug_mode(was)


def test_zero_cotangent_of_unused_output():
    x = torch.tensor([0.3, 1.2], dtype=torch.float64, requires_grad=True)
    out = torch_function(sincos, backend="native")(x)
    assert type(out).__name__ == "SinCos"
    out.cos.sum().backward()  # the cotangent of .sin is None: ZeroTangent for the rule
    torch.testing.assert_close(x.grad, -torch.sin(x.detach()))


def softsign(x):
    xp = array_namespace(x)
    return x / (1 + xp.abs(x))


@rrule.register(softsign)
def softsign_rrule(x):
    xp = array_namespace(x)
    d = 1 + xp.abs(x)

    def softsign_pullback(y_bar):
        return NoTangent(), y_bar / d**2

    return x / d, softsign_pullback


def test_forward_mode_without_an_frule_differentiates_f_on_tensors():
    # softsign has only an rrule: torch.func.jvp differentiates its (torch) code
    x = torch.tensor([-2.0, 0.3, 1.5], dtype=torch.float64)
    f = torch_function(softsign, backend="native")

    def native(x):
        return x / (1 + x.abs())

    for transform in (torch.func.jacfwd, torch.func.jacrev):
        torch.testing.assert_close(transform(f)(x), transform(native)(x))
    torch.testing.assert_close(torch.func.hessian(lambda x: f(x).sum())(x),
                               torch.func.hessian(lambda x: native(x).sum())(x))


def affine(p, x):
    """An argument that is a dict of tensors."""
    return p["w"] @ x + p["b"]


@rrule.register(affine)
def affine_rrule(p, x):
    xp = array_namespace(x)

    def affine_pullback(y_bar):
        from chainrules import Tangent

        p_bar = Tangent[dict]({"w": Thunk(lambda: y_bar[:, None] * x[None, :]), "b": y_bar})
        return NoTangent(), p_bar, Thunk(lambda: xp.matrix_transpose(p["w"]) @ y_bar)

    return affine(p, x), affine_pullback


def test_dict_argument():
    p = {"w": torch.tensor([[1.0, 2.0, -1.0], [0.5, -1.0, 0.3]], dtype=torch.float64),
         "b": torch.tensor([0.1, -0.2], dtype=torch.float64)}
    x = torch.tensor([0.3, -0.2, 0.1], dtype=torch.float64)
    f = torch_function(affine)
    assert f.backend_for(p, x) == "native"

    def loss(fn, p, x):
        return (fn(p, x) ** 3).sum()

    for argnums in (0, 1):
        bridged = torch.func.grad(lambda p, x: loss(f, p, x), argnums=argnums)(p, x)
        native = torch.func.grad(lambda p, x: loss(affine, p, x), argnums=argnums)(p, x)
        torch.testing.assert_close(bridged, native)
    h_b = torch.func.hessian(lambda x: loss(f, p, x))(x)
    torch.testing.assert_close(h_b, torch.func.hessian(lambda x: loss(affine, p, x))(x))


def scaled_with_count(x):
    """(2x, the number of positive entries): an integer output."""
    xp = array_namespace(x)
    return 2 * x, xp.sum(xp.astype(x > 0, xp.int64))


@rrule.register(scaled_with_count)
def scaled_with_count_rrule(x):
    def scaled_with_count_pullback(y_bar):
        y_bar_scaled, count_bar = y_bar
        assert isinstance(count_bar, NoTangent)  # the integer output's cotangent
        return NoTangent(), 2 * y_bar_scaled

    return scaled_with_count(x), scaled_with_count_pullback


@frule.register(scaled_with_count)
def scaled_with_count_frule(dargs, x):
    from chainrules import Tangent

    return scaled_with_count(x), Tangent[tuple](2 * dargs[1], NoTangent())


def test_integer_output():
    import torch.autograd.forward_ad as fwad

    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    f = torch_function(scaled_with_count, backend="native")
    y, n = f(x)
    assert n.dtype == torch.int64 and not n.requires_grad and int(n) == 2
    y.sum().backward()
    torch.testing.assert_close(x.grad, torch.full((3,), 2.0, dtype=torch.float64))
    with fwad.dual_level():
        y, n = f(fwad.make_dual(x.detach(), torch.ones(3, dtype=torch.float64)))
        assert fwad.unpack_dual(n).tangent is None
        torch.testing.assert_close(fwad.unpack_dual(y).tangent,
                                   torch.full((3,), 2.0, dtype=torch.float64))
    torch.testing.assert_close(torch.func.jacfwd(lambda x: f(x)[0])(x.detach()),
                               2 * torch.eye(3, dtype=torch.float64))


def test_third_derivative():
    x = torch.tensor([0.3, 1.2], dtype=torch.float64)
    f = torch_function(sincos, backend="native")
    third = torch.func.jacfwd(torch.func.hessian(lambda x: f(x).sin.sum()))(x)
    expected = torch.diag_embed(torch.diag(-torch.cos(x)))
    torch.testing.assert_close(third, expected)


def test_torch_config_differentiates_a_native_bridge():
    from chainrules.testing import test_rrule

    f = torch_function(sin_times, backend="native")

    def g(x, w):
        return f(x, w)

    x, w = np.array([0.3, -0.4]), np.array([1.5, 2.0])
    y, pullback = rrule_via_ad(TorchConfig(), g, x, w)
    np.testing.assert_allclose(y, np.sin(x) * w)
    _, x_bar, w_bar = pullback(np.ones(2))
    np.testing.assert_allclose(x_bar, np.cos(x) * w)
    from chainrules.interop.torch import as_numpy_function

    test_rrule(as_numpy_function(g), x, w, rrule_f=rrule_via_ad, config=TorchConfig())


def scaled_exp(x):
    """2 exp(x); its pullback reuses the output, as most rules of exp-like functions do."""
    return 2 * array_namespace(x).exp(x)


@rrule.register(scaled_exp)
def scaled_exp_rrule(x):
    y = scaled_exp(x)

    def scaled_exp_pullback(y_bar):
        return NoTangent(), y_bar * y

    return y, scaled_exp_pullback


@pytest.mark.parametrize("backward", [False, True])
def test_output_is_freed_when_dropped_not_kept_in_a_cycle(backward):
    # the graph holds the call, whose pullback holds the rule's y: were the output that
    # y itself, it would stay alive (with its memory) until the cyclic collector ran
    import gc
    import weakref

    f = torch_function(scaled_exp, backend="native")
    x = torch.randn(5, requires_grad=True)
    gc.disable()
    try:
        y = f(x)
        if backward:
            y.sum().backward()
            torch.testing.assert_close(x.grad, 2 * torch.exp(x.detach()))
        freed = weakref.ref(y)
        del y
        assert freed() is None
    finally:
        gc.enable()
