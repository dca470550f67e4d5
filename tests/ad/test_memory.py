"""Peak memory of the reverse AD (issue 27, item 5): the tape keeps only what the
pullbacks read, and drops what the backward pass no longer needs."""

from __future__ import annotations

import importlib.util
import operator
import sys
from pathlib import Path

import numpy as np
import pytest

import chainrules  # noqa: F401  (registers the rules)
from chainrules.ad import _memory, _native, grad, hessian, jvp, value_and_grad, vjp
from chainrules.core import cached_lookup, rrule, scalar_partials

ROOT = Path(__file__).resolve().parents[2]
N = 20_000  # 160 KB arrays: above the size the tape replaces by stand-ins


def _partials(f, *types):
    hit = cached_lookup(rrule)(f, types, None)
    return scalar_partials(f, hit[0])


def test_reads_tanh_reads_its_output_only():
    assert _memory._reads(_partials(np.tanh, np.ndarray)) == (False, True)


def test_reads_sin_reads_its_argument_only():
    assert _memory._reads(_partials(np.sin, np.ndarray)) == (True, False)


def test_reads_pow_reads_the_output_for_a_traced_exponent_only():
    part = _partials(operator.pow, np.ndarray, int)
    _memory.learn(part)
    x = np.ones(N)
    y = np.ones(N)
    args, ys = _memory.slim(part, (x, 2), y, [(1, 0)])
    assert args[0] is x and ys is not y and ys.shape == y.shape and ys.strides == (0,)
    args, ys = _memory.slim(part, (x, x), y, [(1, 0), (2, 1)])
    assert ys is y


def test_reads_unknown_callable_reads_everything():
    class Part:
        raw = staticmethod(np.sin)  # a built-in: its reads cannot be seen
        nargs = 1
        uses_output = True

    assert _memory._reads(Part()) is None


def test_reads_introspecting_partials_read_everything():
    class Part:
        nargs = 1
        uses_output = True

        @staticmethod
        def raw(x, *, y):
            return locals()["x"]

    assert _memory._reads(Part()) is None


def test_stand_in_small_arrays_and_numbers_kept():
    small = np.ones(8)
    assert _memory._stand_in(small) is small
    assert _memory._stand_in(2.0) == 2.0


def _both_tapes(fn):
    """``fn()`` with the C tape (where built) and with the Python tape alone."""
    out = [fn()]
    with _native.python_only():
        out.append(fn())
    return out


@pytest.mark.parametrize(("f", "df"), [
    (np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    (np.exp, np.exp),
    (np.sqrt, lambda x: 0.5 / np.sqrt(x)),
    (np.sin, np.cos),
    (lambda x: x ** 3, lambda x: 3 * x ** 2),
    (lambda x: np.tanh(x) * np.exp(x) + x, lambda x: (1 - np.tanh(x) ** 2) * np.exp(x)
     + np.tanh(x) * np.exp(x) + 1),
])
def test_grad_large_arrays_with_stand_ins_match_the_formula(f, df):
    x = np.linspace(0.1, 2.0, N)
    for g in _both_tapes(lambda: grad(lambda x: np.sum(f(x)))(x)):
        np.testing.assert_allclose(g, df(x), rtol=1e-12)


def test_grad_traced_exponent_keeps_the_output():
    x = np.linspace(0.5, 2.0, N)
    for gx, gp in _both_tapes(lambda: grad(lambda x, p: np.sum(x ** p), (0, 1))(x, 2.5)):
        np.testing.assert_allclose(gx, 2.5 * x ** 1.5, rtol=1e-12)
        np.testing.assert_allclose(gp, np.sum(x ** 2.5 * np.log(x)), rtol=1e-12)


def test_grad_broadcast_argument_stand_in_keeps_its_shape():
    x = np.linspace(0.1, 2.0, N).reshape(-1, 1)
    b = np.linspace(-1.0, 1.0, 4)
    for gx, gb in _both_tapes(lambda: grad(lambda x, b: np.sum(np.tanh(x + b)), (0, 1))(x, b)):
        d = 1 - np.tanh(x + b) ** 2
        np.testing.assert_allclose(gx, d.sum(axis=1, keepdims=True), rtol=1e-12)
        np.testing.assert_allclose(gb, d.sum(axis=0), rtol=1e-12)


def test_vjp_pullback_runs_twice_with_the_same_answer():
    # vjp's tape is kept whole (its pullback may run again); only grad's is dropped
    x = np.linspace(0.1, 2.0, N)
    _, pullback = vjp(lambda x: np.tanh(x) ** 2, x)
    first = pullback(np.ones(N))[0]
    second = pullback(np.ones(N))[0]
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, 2 * np.tanh(x) * (1 - np.tanh(x) ** 2), rtol=1e-12)


def test_hessian_vector_product_large_array_matches_the_formula():
    # forward over reverse: the inner tape's stand-ins under an outer trace
    x = np.linspace(0.1, 1.0, N)
    v = np.ones(N)
    _, hv = jvp(grad(lambda x: np.sum(np.tanh(x))), (x,), (v,))
    t = np.tanh(x)
    np.testing.assert_allclose(hv, -2 * t * (1 - t * t), rtol=1e-10)
    h = hessian(lambda x: np.sum(np.sin(x) ** 2))(np.linspace(0.1, 1.0, 5))
    xs = np.linspace(0.1, 1.0, 5)
    np.testing.assert_allclose(h, np.diag(2 * np.cos(2 * xs)), rtol=1e-10, atol=1e-12)


def test_value_and_grad_general_path_large_arrays():
    # a dict input takes the general (structured) path, whose tape also runs once
    x = {"a": np.linspace(0.1, 2.0, N)}
    y, g = value_and_grad(lambda d: np.sum(np.tanh(d["a"]) ** 2))(x)
    t = np.tanh(x["a"])
    assert y == pytest.approx(np.sum(t ** 2))
    np.testing.assert_allclose(g["a"], 2 * t * (1 - t * t), rtol=1e-12)


def _bench():
    spec = importlib.util.spec_from_file_location("bench_memory",
                                                  ROOT / "benchmarks" / "bench_memory.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_memory"] = module
    spec.loader.exec_module(module)
    return module


def test_peak_memory_of_grad_within_1_3x_hand_written_numpy():
    # fresh processes, peak RSS above the baseline after allocating x (32 MB); the
    # intermediates are 3.2 MB each, so 1.3x leaves room for about one more
    table = _bench().main(["--size", "400000", "--rounds", "1"])
    for (wrt, job), (peak, ratio) in table.items():
        assert ratio <= 1.3, (wrt, job, peak, ratio)
