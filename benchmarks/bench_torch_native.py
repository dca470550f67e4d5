"""The native PyTorch path of ``torch_function`` against torch itself and the callback path.

Each function has rules written once with ``xp = chainrules.array_namespace(x)``,
and so runs on tensors as it is. Three versions of each are timed on the same tensors:
``torch`` (the same function called on tensors directly, differentiated by
torch's own autograd: the same maths in torch operations), ``native``
(``torch_function(f, backend="native")``: the rules run on the tensors) and
``callback`` (``backend="callback"``: the rules run on NumPy views).

At small sizes any ``autograd.Function`` pays PyTorch's Python-level cost for a
custom Function (``apply``, ``setup_context``, a Python ``backward``): a bare
hand-written Function of ``tanh(A @ x)`` measured about 2.2x torch's own autograd at
n=10 on this machine, the floor for every bridge there. The ratios approach 1 as
the arrays grow.

Operations: forward + backward (``torch.autograd.grad`` of a sum); the same with
``create_graph=True`` (a backward pass that is itself differentiable: the native path
then runs the rrule again in backward, which is what that costs; the callback path
runs its pullback as a second Function); and
``torch.func.grad`` (the backward pass always differentiable, so the rrule always runs
in backward; the callback path cannot reuse the forward's pullback either).

One process, one thread (PyTorch and the BLAS pinned), versions interleaved repeat by
repeat; the table shows medians and the ratios native / torch and callback / torch.
Times are CPU time of this process (``time.process_time``): on a shared, overloaded
machine wall time mostly measures waiting for a core.

Run: ``python benchmarks/bench_torch_native.py`` (or ``python benchmarks/run.py
torch_native``); ``--quick`` for fewer repeats.
"""

import os
import sys

# one thread, and glibc allocator settings under which big temporaries are not re-mapped
# on every call (the same as bench_ad.py); the script re-executes itself to apply them
_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MALLOC_MMAP_THRESHOLD_": str(32 * 1024 * 1024),
    "MALLOC_TRIM_THRESHOLD_": str(1024 * 1024 * 1024),
}
if any(os.environ.get(k) != v for k, v in _ENV.items()):
    os.environ.update(_ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import statistics
import time
import timeit

from chainrules import NoTangent, Thunk, array_namespace, rrule


def logsumexp(x):
    xp = array_namespace(x)
    m = xp.max(x)
    return m + xp.log(xp.sum(xp.exp(x - m)))


@rrule.register(logsumexp)
def logsumexp_rrule(x):
    xp = array_namespace(x)
    m = xp.max(x)
    e = xp.exp(x - m)
    total = xp.sum(e)

    def logsumexp_pullback(y_bar):
        return NoTangent(), (y_bar / total) * e

    return m + xp.log(total), logsumexp_pullback


def tanh_affine(A, x):
    xp = array_namespace(A, x)
    return xp.tanh(A @ x)


@rrule.register(tanh_affine)
def tanh_affine_rrule(A, x):
    xp = array_namespace(A, x)
    y = xp.tanh(A @ x)

    def tanh_affine_pullback(y_bar):
        s = y_bar * (1 - y**2)
        return (NoTangent(), Thunk(lambda: s[:, None] * x[None, :]),
                Thunk(lambda: xp.matrix_transpose(A) @ s))

    return y, tanh_affine_pullback


def _time(fn, number):
    return timeit.Timer(fn, timer=time.process_time).timeit(number=number) / number


def _number_for(fn):
    """Calls per timing so that one timing lasts about 20 ms."""
    fn()
    t = _time(fn, 1)
    return max(1, min(2000, int(0.05 / max(t, 1e-7))))


def compare(fns, repeats):
    numbers = [_number_for(f) for f in fns]
    times = [[] for _ in fns]
    for _ in range(repeats):
        for f, n, out in zip(fns, numbers, times):
            out.append(_time(f, n))
    return [statistics.median(t) for t in times]


def cases():
    """(function, size, operation, (torch, native, callback) thunks)."""
    import torch

    from chainrules.interop.torch import torch_function

    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    out = []

    def ops(name, n, versions, args, wrt):
        def fwd_bwd(f):
            leaves = [a.detach().requires_grad_() if i in wrt else a for i, a in enumerate(args)]
            return torch.autograd.grad(f(*leaves).sum(), [leaves[i] for i in wrt])

        def double(f):
            leaves = [a.detach().requires_grad_() if i in wrt else a for i, a in enumerate(args)]
            return torch.autograd.grad(f(*leaves).sum(), [leaves[i] for i in wrt],
                                       create_graph=True)

        def func_grad(f):
            def loss(*diff):
                full = list(args)
                for i, d in zip(wrt, diff):
                    full[i] = d
                return f(*full).sum()

            return torch.func.grad(loss, argnums=tuple(range(len(wrt))))(
                *(args[i] for i in wrt))

        for op_name, op in (("forward+backward", fwd_bwd),
                            ("backward, create_graph", double),
                            ("torch.func.grad", func_grad)):
            out.append((name, n, op_name,
                        [lambda f=f, op=op: op(f) for f in versions]))

    for n in (100, 100_000, 1_000_000):
        x = torch.randn(n, generator=g, dtype=torch.float64)
        ops("logsumexp", n, (logsumexp, torch_function(logsumexp, backend="native"),
                             torch_function(logsumexp, backend="callback")), (x,), (0,))

    for n in (10, 300, 2000):
        A = torch.randn(n, n, generator=g, dtype=torch.float64)
        x = torch.randn(n, generator=g, dtype=torch.float64)
        ops("tanh_affine", n * n, (tanh_affine, torch_function(tanh_affine, backend="native"),
                                   torch_function(tanh_affine, backend="callback")),
            (A, x), (0, 1))
    return out


def main(argv):
    repeats = 5 if "--quick" in argv else 15
    rows = []
    print(f"{'function':<12} {'n':>7} {'operation':<23} {'torch':>10} {'native':>10} "
          f"{'callback':>10} {'nat/torch':>9} {'cb/torch':>9}")
    for name, n, op, fns in cases():
        t_t, t_n, t_c = compare(fns, repeats)
        rows.append({"function": name, "n": n, "operation": op, "torch_s": t_t,
                     "native_s": t_n, "callback_s": t_c, "native_ratio": t_n / t_t,
                     "callback_ratio": t_c / t_t})
        print(f"{name:<12} {n:>7} {op:<23} {t_t * 1e6:>8.1f}us {t_n * 1e6:>8.1f}us "
              f"{t_c * 1e6:>8.1f}us {t_n / t_t:>8.2f}x {t_c / t_t:>8.2f}x", flush=True)
    print("\nmedians of interleaved repeats (CPU time), one thread; torch = the same "
          "function on tensors, differentiated by torch's autograd.")
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
