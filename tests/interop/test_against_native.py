"""Bridged rule-set functions against each framework's own implementation of the same maths.

Each row is a NumPy function from the rule set, how to make its inputs, and its
native equivalent in JAX, PyTorch and autograd. For every framework the test
checks that the bridged function's primal output and VJP (with a random
cotangent, in the framework's own convention) equal the native ones, eagerly and
(JAX) under ``jax.jit``; and for JAX and PyTorch that the JVP through the frule
(``jax_function(mode="forward")``, ``torch.func.jvp``) equals the native JVP. A row is
skipped, saying why, only when its rule is not registered (the rule set lands
progressively) or the framework has no native equivalent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest
import scipy.special

from chainrules import frule, rrule

RTOL, ATOL = 1e-7, 1e-9


@dataclasses.dataclass
class Row:
    name: str
    fn: Callable
    make: Callable[[np.random.Generator], tuple]
    jax: Callable | None
    torch: Callable | None
    autograd: Callable | None
    kwargs: dict = dataclasses.field(default_factory=dict)
    outputs: tuple[int, ...] | None = None  # output leaves compared (default all)
    # functions of symmetric matrices: conventions differ off the symmetric subspace
    # (lower triangle vs symmetrised), so their gradients are compared symmetrised
    symmetric: bool = False
    why_not: dict = dataclasses.field(default_factory=dict)


def _m(rng, n=3):
    return rng.standard_normal((n, n)) + n * np.eye(n)


def _spd(rng, n=3):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def _c(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _pos(rng, *shape):
    return rng.uniform(0.5, 2.0, shape)


def _jnp():
    return pytest.importorskip("jax").numpy


def _t():
    return pytest.importorskip("torch")


def _anp():
    return pytest.importorskip("autograd.numpy")


def _unary(name, fn, make, jname=None, tname=None, aname=None):
    jname = jname or name
    tname = tname or name
    aname = aname or name
    return Row(name, fn, make,
               jax=lambda x: getattr(_jnp(), jname)(x),
               torch=lambda x: getattr(_t(), tname)(x),
               autograd=lambda x: getattr(_anp(), aname)(x))


ROWS = [
    # -- elementwise, real ----------------------------------------------------------------
    _unary("sin", np.sin, lambda r: (r.standard_normal((2, 3)),)),
    _unary("cos", np.cos, lambda r: (r.standard_normal(4),)),
    _unary("exp", np.exp, lambda r: (r.standard_normal((3,)),)),
    _unary("log", np.log, lambda r: (_pos(r, 4),)),
    _unary("tanh", np.tanh, lambda r: (r.standard_normal(4),)),
    _unary("sqrt", np.sqrt, lambda r: (_pos(r, 2, 2),)),
    _unary("expm1", np.expm1, lambda r: (r.standard_normal(3),)),
    _unary("log1p", np.log1p, lambda r: (_pos(r, 3),)),
    _unary("abs", np.abs, lambda r: (_pos(r, 3) * np.array([1, -1, 1]),)),
    Row("multiply (broadcast)", np.multiply,
        lambda r: (r.standard_normal((2, 3)), r.standard_normal(3)),
        jax=lambda a, b: a * b, torch=lambda a, b: a * b, autograd=lambda a, b: a * b),
    Row("divide", np.divide, lambda r: (r.standard_normal(3), _pos(r, 3)),
        jax=lambda a, b: a / b, torch=lambda a, b: a / b, autograd=lambda a, b: a / b),
    Row("power (float exponent array)", np.power, lambda r: (_pos(r, 3), r.standard_normal(3)),
        jax=lambda a, b: a**b, torch=lambda a, b: a**b, autograd=lambda a, b: a**b),
    Row("power (int exponent)", np.power, lambda r: (r.standard_normal(3), 3),
        jax=lambda a, n: a**n, torch=lambda a, n: a**n, autograd=lambda a, n: a**n),
    Row("arctan2", np.arctan2, lambda r: (r.standard_normal(3), _pos(r, 3)),
        jax=lambda a, b: _jnp().arctan2(a, b), torch=lambda a, b: _t().atan2(a, b),
        autograd=lambda a, b: _anp().arctan2(a, b)),
    Row("maximum", np.maximum, lambda r: (np.array([1.0, -2.0, 3.0]), np.array([0.5, 1.0, 4.0])),
        jax=lambda a, b: _jnp().maximum(a, b), torch=lambda a, b: _t().maximum(a, b),
        autograd=lambda a, b: _anp().maximum(a, b)),
    Row("hypot", np.hypot, lambda r: (_pos(r, 3), _pos(r, 3)),
        jax=lambda a, b: _jnp().hypot(a, b), torch=lambda a, b: _t().hypot(a, b),
        autograd=lambda a, b: _anp().hypot(a, b)),
    # -- reductions -----------------------------------------------------------------------
    Row("sum (axis=1)", np.sum, lambda r: (r.standard_normal((2, 3)),), kwargs={"axis": 1},
        jax=lambda x, axis: _jnp().sum(x, axis=axis), torch=lambda x, axis: _t().sum(x, dim=axis),
        autograd=lambda x, axis: _anp().sum(x, axis=axis)),
    Row("mean", np.mean, lambda r: (r.standard_normal((2, 3)),),
        jax=lambda x: _jnp().mean(x), torch=lambda x: _t().mean(x),
        autograd=lambda x: _anp().mean(x)),
    Row("prod", np.prod, lambda r: (r.standard_normal(4),),
        jax=lambda x: _jnp().prod(x), torch=lambda x: _t().prod(x),
        autograd=lambda x: _anp().prod(x)),
    Row("max", np.max, lambda r: (np.array([0.3, 2.0, -1.0, 1.5]),),
        jax=lambda x: _jnp().max(x), torch=lambda x: _t().max(x),
        autograd=lambda x: _anp().max(x)),
    Row("var", np.var, lambda r: (r.standard_normal(5),),
        jax=lambda x: _jnp().var(x), torch=lambda x: _t().var(x, correction=0),
        autograd=lambda x: _anp().var(x)),
    Row("std", np.std, lambda r: (r.standard_normal(5),),
        jax=lambda x: _jnp().std(x), torch=lambda x: _t().std(x, correction=0),
        autograd=lambda x: _anp().std(x)),
    Row("cumsum (axis=1)", np.cumsum, lambda r: (r.standard_normal((2, 3)),), kwargs={"axis": 1},
        jax=lambda x, axis: _jnp().cumsum(x, axis=axis),
        torch=lambda x, axis: _t().cumsum(x, dim=axis),
        autograd=lambda x, axis: _anp().cumsum(x, axis=axis)),
    Row("logsumexp", scipy.special.logsumexp, lambda r: (r.standard_normal(5),),
        jax=lambda x: pytest.importorskip("jax.scipy.special").logsumexp(x),
        torch=lambda x: _t().logsumexp(x, dim=0),
        autograd=lambda x: pytest.importorskip("autograd.scipy.special").logsumexp(x)),
    # -- linear algebra -------------------------------------------------------------------
    Row("matmul", np.matmul, lambda r: (r.standard_normal((2, 3)), r.standard_normal((3, 4))),
        jax=lambda a, b: a @ b, torch=lambda a, b: a @ b, autograd=lambda a, b: a @ b),
    Row("dot (vectors)", np.dot, lambda r: (r.standard_normal(3), r.standard_normal(3)),
        jax=lambda a, b: _jnp().dot(a, b), torch=lambda a, b: _t().dot(a, b),
        autograd=lambda a, b: _anp().dot(a, b)),
    Row("linalg.solve", np.linalg.solve, lambda r: (_m(r), r.standard_normal(3)),
        jax=lambda a, b: _jnp().linalg.solve(a, b), torch=lambda a, b: _t().linalg.solve(a, b),
        autograd=lambda a, b: _anp().linalg.solve(a, b)),
    Row("linalg.inv", np.linalg.inv, lambda r: (_m(r),),
        jax=lambda a: _jnp().linalg.inv(a), torch=lambda a: _t().linalg.inv(a),
        autograd=lambda a: _anp().linalg.inv(a)),
    Row("linalg.det", np.linalg.det, lambda r: (_m(r),),
        jax=lambda a: _jnp().linalg.det(a), torch=lambda a: _t().linalg.det(a),
        autograd=lambda a: _anp().linalg.det(a)),
    Row("linalg.slogdet (two outputs)", np.linalg.slogdet, lambda r: (_m(r),),
        jax=lambda a: tuple(_jnp().linalg.slogdet(a)), torch=lambda a: tuple(_t().linalg.slogdet(a)),
        autograd=lambda a: _anp().linalg.slogdet(a)),
    Row("linalg.cholesky", np.linalg.cholesky, lambda r: (_spd(r),), symmetric=True,
        jax=lambda a: _jnp().linalg.cholesky(a), torch=lambda a: _t().linalg.cholesky(a),
        autograd=lambda a: _anp().linalg.cholesky(a)),
    Row("linalg.eigh (eigenvalues compared)", np.linalg.eigh, lambda r: (_spd(r),), outputs=(0,),
        symmetric=True,
        jax=lambda a: tuple(_jnp().linalg.eigh(a)), torch=lambda a: tuple(_t().linalg.eigh(a)),
        autograd=lambda a: _anp().linalg.eigh(a)),
    Row("linalg.norm", np.linalg.norm, lambda r: (r.standard_normal(4),),
        jax=lambda x: _jnp().linalg.norm(x), torch=lambda x: _t().linalg.norm(x),
        autograd=lambda x: _anp().linalg.norm(x)),
    Row("trace", np.trace, lambda r: (r.standard_normal((3, 3)),),
        jax=lambda a: _jnp().trace(a), torch=lambda a: _t().trace(a),
        autograd=lambda a: _anp().trace(a)),
    Row("linalg.qr (two outputs)", np.linalg.qr, lambda r: (_m(r),),
        jax=lambda a: tuple(_jnp().linalg.qr(a)), torch=lambda a: tuple(_t().linalg.qr(a)),
        autograd=None, why_not={"autograd": "autograd.numpy.linalg.qr has no VJP "
                                            "('VJP of qr wrt argnums (0,) not defined')"}),
    # -- structured inputs and non-array arguments ----------------------------------------
    Row("concatenate (list of arrays)", np.concatenate,
        lambda r: ([r.standard_normal(2), r.standard_normal(3)],),
        jax=lambda xs: _jnp().concatenate(xs), torch=lambda xs: _t().cat(xs),
        autograd=None, why_not={"autograd": "autograd passes boxes inside a list unseen to a "
                                            "primitive; the bridge takes top-level arrays"}),
    Row("stack (tuple of arrays)", np.stack,
        lambda r: ((r.standard_normal(3), r.standard_normal(3)),),
        jax=lambda xs: _jnp().stack(xs), torch=lambda xs: _t().stack(xs),
        autograd=None, why_not={"autograd": "autograd passes boxes inside a tuple unseen to a "
                                            "primitive; the bridge takes top-level arrays"}),
    Row("einsum (string argument)", np.einsum,
        lambda r: ("ij,j->i", r.standard_normal((2, 3)), r.standard_normal(3)),
        jax=lambda s, a, b: _jnp().einsum(s, a, b), torch=lambda s, a, b: _t().einsum(s, a, b),
        autograd=lambda s, a, b: _anp().einsum(s, a, b)),
    Row("reshape (tuple of ints)", np.reshape, lambda r: (r.standard_normal(6), (2, 3)),
        jax=lambda x, s: _jnp().reshape(x, s), torch=lambda x, s: _t().reshape(x, s),
        autograd=lambda x, s: _anp().reshape(x, s)),
    Row("take (integer index array)", np.take,
        lambda r: (r.standard_normal(4), np.array([0, 2, 2, 3])),
        jax=lambda x, i: _jnp().take(x, i), torch=lambda x, i: _t().take(x, i),
        autograd=lambda x, i: x[i]),
    Row("transpose (axes tuple)", np.transpose, lambda r: (r.standard_normal((2, 3, 4)), (2, 0, 1)),
        jax=lambda x, a: _jnp().transpose(x, a), torch=lambda x, a: x.permute(*a),
        autograd=lambda x, a: _anp().transpose(x, a)),
    # -- complex ----------------------------------------------------------------------------
    _unary("exp (complex)", np.exp, lambda r: (_c(r, 3),), jname="exp", tname="exp",
           aname="exp"),
    Row("abs (complex -> real)", np.abs, lambda r: (_c(r, 3),),
        jax=lambda z: _jnp().abs(z), torch=lambda z: _t().abs(z), autograd=lambda z: _anp().abs(z)),
    Row("multiply (complex)", np.multiply, lambda r: (_c(r, 3), _c(r, 3)),
        jax=lambda a, b: a * b, torch=lambda a, b: a * b, autograd=lambda a, b: a * b),
    Row("matmul (complex)", np.matmul, lambda r: (_c(r, 2, 3), _c(r, 3)),
        jax=lambda a, b: a @ b, torch=lambda a, b: a @ b, autograd=lambda a, b: a @ b),
    Row("sum (complex)", np.sum, lambda r: (_c(r, 4),),
        jax=lambda z: _jnp().sum(z), torch=lambda z: _t().sum(z), autograd=lambda z: _anp().sum(z)),
    Row("fft.fft (real input, complex output)", np.fft.fft, lambda r: (r.standard_normal(4),),
        jax=lambda x: _jnp().fft.fft(x), torch=lambda x: _t().fft.fft(x),
        autograd=lambda x: _anp().fft.fft(x)),
    Row("conj", np.conj, lambda r: (_c(r, 3),),
        jax=lambda z: _jnp().conj(z), torch=lambda z: _t().conj(z).resolve_conj(),
        autograd=lambda z: _anp().conj(z)),
    Row("real", np.real, lambda r: (_c(r, 3),),
        jax=lambda z: _jnp().real(z), torch=lambda z: _t().real(z),
        autograd=lambda z: _anp().real(z)),
]

FRAMEWORKS = ["jax", "jax-jit", "jax-jvp", "torch", "torch-jvp", "autograd"]


def _params():
    return [pytest.param(row, fw, id=f"{fw}-{row.name}") for row in ROWS for fw in FRAMEWORKS]


def test_table_covers_enough_functions():
    assert len(ROWS) >= 30


def _leaves(y):
    if isinstance(y, (tuple, list)):
        return [leaf for v in y for leaf in _leaves(v)]
    return [y]


def _is_diff_array(x):
    return isinstance(x, np.ndarray) and x.dtype.kind in "fc"


def _differentiated(args):
    """Positions of the arguments that are (lists or tuples of) float or complex arrays."""
    out = []
    for i, a in enumerate(args):
        if _is_diff_array(a) or (isinstance(a, (list, tuple)) and a and all(
                _is_diff_array(v) for v in a)):
            out.append(i)
    return out


def _cotangents(row, y_np, rng):
    """A random cotangent per output leaf (zero for leaves not compared or not float)."""
    leaves = _leaves(y_np)
    cts = []
    for k, leaf in enumerate(leaves):
        leaf = np.asarray(leaf)
        if leaf.dtype.kind not in "fc" or (row.outputs is not None and k not in row.outputs):
            cts.append(np.zeros(leaf.shape, leaf.dtype if leaf.dtype.kind in "fc" else float))
            continue
        ct = rng.standard_normal(leaf.shape)
        if leaf.dtype.kind == "c":
            ct = ct + 1j * rng.standard_normal(leaf.shape)
        cts.append(ct.astype(leaf.dtype))
    return cts


def _compare(bridged, native, what):
    for k, (a, b) in enumerate(zip(bridged, native)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=RTOL, atol=ATOL,
                                   err_msg=f"{what}, leaf {k}")


def _run_jax(row, args, cts, jit):
    jax = pytest.importorskip("jax")
    from chainrules.interop.jax import jax_function

    with jax.enable_x64(True):
        diff = _differentiated(args)
        jargs = [jax.tree_util.tree_map(jax.numpy.asarray, a) if i in diff else (
            jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a)
            for i, a in enumerate(args)]
        bridged = jax_function(row.fn)

        def vjp_of(fn):
            def run(*dyn):
                full = list(jargs)
                for i, d in zip(diff, dyn):
                    full[i] = d
                y, vjp_fn = jax.vjp(lambda *d: fn(*_put(full, diff, d), **row.kwargs), *dyn)
                ct = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(y),
                                                  [jax.numpy.asarray(c) for c in cts])
                return y, vjp_fn(ct)

            return jax.jit(run) if jit else run

        dyn = [jargs[i] for i in diff]
        y_b, g_b = vjp_of(bridged)(*dyn)
        y_n, g_n = vjp_of(row.jax)(*dyn)
        return _leaves(y_b), _leaves(y_n), jax.tree_util.tree_leaves(g_b), \
            jax.tree_util.tree_leaves(g_n)


def _put(args, diff, dyn):
    full = list(args)
    for i, d in zip(diff, dyn):
        full[i] = d
    return full


def _run_torch(row, args, cts):
    torch = pytest.importorskip("torch")
    from chainrules.interop.torch import torch_function

    diff = _differentiated(args)

    def to_t(a, grad):
        if isinstance(a, np.ndarray):
            return torch.tensor(a, requires_grad=grad and a.dtype.kind in "fc")
        if isinstance(a, (list, tuple)) and a and all(isinstance(v, np.ndarray) for v in a):
            return type(a)(to_t(v, grad) for v in a)
        return a

    def run(fn):
        targs = [to_t(a, i in diff) for i, a in enumerate(args)]
        inputs = [t for i in diff for t in _leaves(targs[i])]
        y = fn(*targs, **row.kwargs)
        ys = _leaves(y)
        pairs = [(yy, torch.tensor(c)) for yy, c in zip(ys, cts)
                 if yy.requires_grad and np.any(c != 0)]
        grads = torch.autograd.grad([p[0] for p in pairs], inputs, [p[1] for p in pairs],
                                    allow_unused=True)
        grads = [torch.zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]
        return ([yy.detach().resolve_conj().numpy() for yy in ys],
                [g.detach().resolve_conj().numpy() for g in grads])

    y_b, g_b = run(torch_function(row.fn))
    y_n, g_n = run(row.torch)
    return y_b, y_n, g_b, g_n


def _run_autograd(row, args, cts):
    autograd = pytest.importorskip("autograd")
    from chainrules.interop.autograd import autograd_primitive

    diff = _differentiated(args)

    def run(fn):
        ys = None
        grads = []
        for i in diff:
            def of_arg(x, i=i):
                return fn(*_put(args, [i], [x]), **row.kwargs)

            vjp_fn, y = autograd.make_vjp(of_arg)(args[i])
            ys = _leaves(y)
            ct = tuple(cts) if isinstance(y, (tuple, list)) else cts[0]
            grads.append(vjp_fn(ct))
        return ys, grads

    y_b, g_b = run(autograd_primitive(row.fn))
    y_n, g_n = run(row.autograd)
    return y_b, y_n, g_b, g_n


def _tangents(args, diff, rng):
    """A random tangent per differentiated argument (lists of arrays get lists)."""
    def one(a):
        t = rng.standard_normal(a.shape)
        if a.dtype.kind == "c":
            t = t + 1j * rng.standard_normal(a.shape)
        return t.astype(a.dtype)

    return [type(args[i])(one(a) for a in args[i]) if isinstance(args[i], (list, tuple))
            else one(args[i]) for i in diff]


def _run_jax_jvp(row, args, tangents):
    jax = pytest.importorskip("jax")
    from chainrules.interop.jax import jax_function

    with jax.enable_x64(True):
        diff = _differentiated(args)
        conv = jax.tree_util.tree_map
        jargs = [conv(jax.numpy.asarray, a) if i in diff else (
            jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a)
            for i, a in enumerate(args)]
        dyn = tuple(jargs[i] for i in diff)
        t = tuple(conv(jax.numpy.asarray, x) for x in tangents)
        out = []
        for fn in (jax_function(row.fn, mode="forward"), row.jax):
            y, y_dot = jax.jvp(lambda *d, fn=fn: fn(*_put(jargs, diff, d), **row.kwargs), dyn, t)
            out.append((_leaves(y), jax.tree_util.tree_leaves(y_dot)))
    return out[0][0], out[1][0], out[0][1], out[1][1]


def _run_torch_jvp(row, args, tangents):
    torch = pytest.importorskip("torch")
    from chainrules.interop.torch import torch_function

    diff = _differentiated(args)

    def to_t(a):
        if isinstance(a, np.ndarray):
            return torch.tensor(a)
        if isinstance(a, (list, tuple)) and a and all(isinstance(v, np.ndarray) for v in a):
            return type(a)(torch.tensor(v) for v in a)
        return a

    targs = [to_t(a) for a in args]
    dyn = tuple(targs[i] for i in diff)
    t = tuple(to_t(x) for x in tangents)
    out = []
    for fn in (torch_function(row.fn), row.torch):
        y, y_dot = torch.func.jvp(lambda *d, fn=fn: fn(*_put(targs, diff, d), **row.kwargs),
                                  dyn, t)
        out.append(([v.detach().numpy(force=True) for v in _leaves(y)],
                    [v.detach().numpy(force=True) for v in _leaves(y_dot)]))
    return out[0][0], out[1][0], out[0][1], out[1][1]


@pytest.mark.parametrize("row, framework", _params())
def test_bridge_matches_native_gradient(row, framework):
    forward = framework.endswith("-jvp")
    table = frule if forward else rrule
    if not table.has_rules(row.fn):
        pytest.skip(f"no {'frule' if forward else 'rrule'} registered for {row.name} yet "
                    f"(the rule set lands progressively)")
    native_name = framework.split("-")[0]
    if getattr(row, native_name) is None:
        pytest.skip(f"{native_name}: {row.why_not.get(native_name, 'no native equivalent')}")
    rng = np.random.default_rng(0)
    args = row.make(rng)
    y_np = row.fn(*args, **row.kwargs)
    if forward:
        tangents = _tangents(args, _differentiated(args), np.random.default_rng(2))
        if row.symmetric:  # stay in the functions' domain: symmetric directions
            tangents = [_sym(t) for t in tangents]
        run = _run_jax_jvp if native_name == "jax" else _run_torch_jvp
        y_b, y_n, t_b, t_n = run(row, args, tangents)
        compared = row.outputs if row.outputs is not None else range(len(y_b))
        _compare([y_b[k] for k in compared], [y_n[k] for k in compared], "primal output")
        _compare([t_b[k] for k in compared], [t_n[k] for k in compared], "tangent")
        return
    cts = _cotangents(row, y_np, np.random.default_rng(1))
    if native_name == "jax":
        y_b, y_n, g_b, g_n = _run_jax(row, args, cts, jit=framework == "jax-jit")
    elif native_name == "torch":
        y_b, y_n, g_b, g_n = _run_torch(row, args, cts)
    else:
        y_b, y_n, g_b, g_n = _run_autograd(row, args, cts)
    compared = row.outputs if row.outputs is not None else range(len(y_b))
    _compare([y_b[k] for k in compared], [y_n[k] for k in compared], "primal output")
    assert len(g_b) == len(g_n)
    if row.symmetric:
        g_b = [_sym(g) for g in g_b]
        g_n = [_sym(g) for g in g_n]
    _compare(g_b, g_n, "gradient")


def _sym(g):
    g = np.asarray(g)
    return (g + np.swapaxes(g, -1, -2)) / 2
