"""The reverse trace's C fast paths (``ad/_tape.c``) give what the Python code gives,
bit for bit: values, gradients, dtypes, shapes and errors; they are taken where they
apply and step aside elsewhere; and they hold no references they should not."""

from __future__ import annotations

import math
import operator
import sys
import warnings

import numpy as np
import pytest

from chainrules import scalar_rule, scoped_rules
from chainrules.ad import (
    DeadTracerError,
    _native,
    _reverse,
    _tape_setup,
    grad,
    hessian,
    jacobian,
    jvp,
    value_and_grad,
    vjp,
)

pytestmark = pytest.mark.skipif(_native.TAPE is None,
                                reason="the C extension chainrules.ad._tape is not built")


@pytest.fixture(autouse=True)
def _c_tape_restored():
    was = _native.enabled()
    yield
    _native.set_enabled(was)


def _loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s + (x[i] - 1.0) ** 2 * math.exp(-x[i] * 0.1)
    return s


def _elements(z):
    s = 0.0
    for i in range(len(z)):
        s = s + z[i] * z[i] * 0.5 - z[i] / (i + 2)
    return np.real(s * np.conj(s))


def _programs():
    return {
        "chain": lambda x: np.sum(np.tanh(np.sin(x) * 1.01) + 0.5),
        "constants both sides": lambda x: np.sum(2.0 - (1.5 * x + 2) / 3.0 ** x),
        "ints and powers": lambda x: np.sum(x ** 2 + 3 * x - 1 + 2 ** x),
        "two traced operands": lambda x: np.sum(x * x + np.arctan2(x, x + 1.0) / x),
        "reused values": lambda x: np.sum((np.exp(x) + x) * np.exp(x) - x),
        "broadcast scalar": lambda x: np.sum(x * x[0] + np.sin(x[1]) * x),
        "loop over elements": _loop,
        "element arithmetic": _elements,
        "reductions": lambda x: np.mean(np.cos(x) ** 2) * np.sum(np.sqrt(x)),
        "math functions": lambda x: math.sin(x[0]) * math.log(x[1]) + math.tanh(x[2]),
    }


_INPUTS = {
    "f8": np.linspace(0.2, 1.4, 6),
    "f4": np.linspace(0.2, 1.4, 6, dtype=np.float32),
    "non-contiguous": np.linspace(0.2, 1.4, 12)[::2],
    "c16": np.linspace(0.2, 1.4, 6) + 0.3j * np.linspace(1.0, -1.0, 6),
}


def _same(a, b):
    assert type(a) is type(b)
    assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
    np.testing.assert_array_equal(a, b)


def _both(fn, *args):
    fast = fn(*args)
    with _native.python_only():
        slow = fn(*args)
    return fast, slow


def _jvp_of(f, x):
    t = np.linspace(1.0, -0.5, x.size).reshape(x.shape).astype(x.dtype) if isinstance(
        x, np.ndarray) else 0.75
    return jvp(f, (x,), (t,))


# reverse mode (a value and its gradient) and forward mode (a value and its tangent)
_MODES = {"grad": lambda f, x: value_and_grad(f)(x), "jvp": _jvp_of}


@pytest.mark.parametrize("mode", list(_MODES))
@pytest.mark.parametrize("name", list(_programs()))
@pytest.mark.parametrize("xname", list(_INPUTS))
def test_same_as_the_python_code(name, xname, mode):
    f, x = _programs()[name], _INPUTS[xname]
    if xname == "c16":
        if name in ("math functions", "two traced operands", "loop over elements"):
            pytest.skip("math functions and arctan2 take no complex numbers")
        g = f
        f = lambda x: np.real(g(x)) if np.iscomplexobj(x) else g(x)  # noqa: E731
    before = x.copy()
    fast, slow = _both(lambda: _MODES[mode](f, x))
    np.testing.assert_array_equal(x, before)  # never written into
    for a, b in zip(fast, slow):
        _same(a, b)


@pytest.mark.parametrize("mode", list(_MODES))
@pytest.mark.parametrize("x", [np.float64(0.7), 0.7, np.array(0.7), np.zeros(0),
                               np.linspace(0.5, 1.5, 6).reshape(2, 3).T],
                         ids=["np.float64", "float", "0-d", "empty", "transposed"])
def test_same_on_scalars_0d_empty_and_views(x, mode):
    f = lambda x: np.sum(np.sin(x) * x + 2.0 * np.exp(-x) - 1)  # noqa: E731
    fast, slow = _both(lambda: _MODES[mode](f, x))
    for a, b in zip(fast, slow):
        _same(a, b)


def test_same_cotangent_of_an_array_output():
    x = np.linspace(0.1, 1.0, 4)
    ybar = np.array([1.0, -2.0, 0.5, 3.0])
    fast, slow = _both(lambda: vjp(lambda v: np.tanh(v) * v + 1.0, x)[1](ybar))
    _same(fast[0], slow[0])
    fast, slow = _both(lambda: jacobian(lambda v: np.sin(v) * v[0])(x))
    _same(fast, slow)


@pytest.mark.parametrize("f", [
    lambda v: np.sum(np.sin(v) * v * v) + v[0] * v[1],
    lambda v: np.sum(np.tanh(v) ** 3 / (1.0 + v * v)),
], ids=["sin", "tanh"])
def test_same_second_derivatives(f):
    """Reverse over reverse and forward over reverse: the inner trace's C paths meet
    tracers of the outer trace (as primals or cotangents) and step aside for them."""
    x = np.array([0.3, -0.8, 1.1])
    fast, slow = _both(lambda: hessian(f)(x))
    _same(fast, slow)
    rr = lambda v: grad(lambda u: np.sum(grad(f)(u) * np.cos(u)))(v)  # noqa: E731
    fast, slow = _both(lambda: rr(x))
    _same(fast, slow)


def _spied(monkeypatch, cls, names):
    """``[(method name, first argument)]`` of the calls of ``cls``'s methods ``names``
    from now on (the first argument: the callable, or the tape entry of ``_step``)."""
    seen = []
    for name in names:
        original = getattr(cls, name)

        def spy(self, first, *args, _name=name, _original=original, **kwargs):
            seen.append((_name, first))
            return _original(self, first, *args, **kwargs)

        monkeypatch.setattr(cls, name, spy)
    return seen


def test_the_c_paths_are_taken(monkeypatch):
    """Not only equal results: with the C paths on, a traced np.sin, x * 2.0, x[1] and
    their backward pass never reach the Python methods; with them off, they do."""
    seen = _spied(monkeypatch, _reverse.ReverseTrace, ("process", "binop", "_step"))
    calls = []
    original_backward = _reverse._scalar_backward
    monkeypatch.setattr(_reverse, "_scalar_backward",
                        lambda *a: calls.append(1) or original_backward(*a))

    def f(x):
        return np.sin(x) * 2.0 + x[1]

    def taken():
        return [(name, first) for name, first in seen
                if first in (np.sin, operator.mul, operator.getitem)
                or (type(first) is tuple and len(first) in (3, 4))]

    x = np.array([0.5, 1.0])
    y, pb = vjp(f, x)
    pb(np.ones(2))
    assert taken() == [] and calls == []
    with _native.python_only():
        y2, pb2 = vjp(f, x)
        pb2(np.ones(2))
    assert sorted(name for name, _ in taken()) == ["binop", "process", "process"]
    assert len(calls) == 3  # sin, the product and the sum
    _same(y, y2)


def test_a_registration_is_seen_by_the_c_paths():
    """The C paths read the lookup cache that registrations empty."""

    g = grad(lambda x: np.sum(np.sin(x) * 1.0))
    np.testing.assert_allclose(g(np.zeros(2)), [1.0, 1.0])

    class Scaled(float):
        pass

    h = grad(lambda x: np.sin(x) * Scaled(2.0))
    assert h(0.0) == 2.0
    # deliberately wrong partials: show that the new rule is the one that ran
    scalar_rule(operator.mul, lambda a, b: (9.0, 9.0), types=(float, Scaled))
    assert h(0.0) == 9.0


def test_errors_are_the_python_codes():
    """An error in a primal, a partial or an accumulation reaches the caller unchanged."""

    def bad_partial(x):
        return x * 2.0

    scalar_rule(bad_partial, lambda x: 1.0 / 0.0)  # ZeroDivisionError in the backward pass
    with pytest.raises(ZeroDivisionError):
        grad(lambda x: bad_partial(x) * 2.0)(1.0)
    with _native.python_only(), pytest.raises(ZeroDivisionError):
        grad(lambda x: bad_partial(x) * 2.0)(1.0)
    with pytest.raises(ValueError, match="operands could not be broadcast"):
        grad(lambda x: np.sum(np.sin(x) * np.ones(3)))(np.ones(2))


def test_dead_tracers_are_refused():
    """A tracer of a finished gradient goes to the Python code, which refuses it."""
    kept = []

    def f(x):
        kept.append(x)
        return np.sum(np.sin(x))

    grad(f)(np.ones(2))
    with pytest.raises(DeadTracerError):
        np.sin(kept[0]) * 2.0
    with pytest.raises(DeadTracerError):
        kept[0] * 2.0


def test_no_references_kept():
    """Gradients through the C paths leave the reference counts of their inputs, the
    partials and the constants as they found them (a leak would grow them per call)."""
    x = np.linspace(0.1, 1.0, 5)
    c = 1.25
    g = grad(lambda v: np.sum(np.tanh(np.sin(v) * c) + c))
    g(x)
    part = next(p for p in _reverse._fast_get.__self__.values()  # type: ignore[attr-defined]
                if type(p).__name__ == "_Partials")
    before = (sys.getrefcount(x), sys.getrefcount(c), sys.getrefcount(part))
    for _ in range(50):
        g(x)
    assert (sys.getrefcount(x), sys.getrefcount(c), sys.getrefcount(part)) == before


def test_call_keeps_its_attributes():
    """The C dispatch point is the Python one in front: its helpers and __wrapped__."""
    from chainrules.ad import _dispatch

    assert _dispatch.call.__wrapped__.__name__ == "call"
    for name in ("setitem", "setitem_inplace", "slice", "matmul"):
        assert callable(getattr(_dispatch.call, name))


def test_operator_methods_bind_as_methods():
    """The C operator methods of Tracer work as the Python ones did when called by name,
    bound or unbound, reflected or not."""
    from chainrules.ad import Tracer

    def f(x):
        return x.__mul__(2.0) + x.__rsub__(1.0) + Tracer.__add__(x, 3.0) + x.__rpow__(2.0)

    fast, slow = _both(lambda: value_and_grad(f)(0.5))
    for a, b in zip(fast, slow):
        _same(a, b)
    assert fast[1] == 2.0 - 1.0 + 1.0 + np.log(2.0) * 2.0 ** 0.5
    with pytest.raises(TypeError, match="takes a tracer and one operand"):
        grad(lambda x: Tracer.__mul__(x))(1.0)


def test_a_failed_setup_leaves_the_python_code(monkeypatch):
    """Classes the C code cannot read (another layout) switch the C paths off with a
    warning; gradients go on through the Python code."""

    class Bare:  # no `primal` slot to read
        pass

    real = _native.TAPE

    class Refusing:
        def configure(self, **objects):
            real.configure(**{**objects, "tracer": Bare})

    monkeypatch.setattr(_native, "TAPE", Refusing())
    _native.ON[0] = False
    with pytest.warns(RuntimeWarning, match="the optional C fast path could not be set up"):
        _tape_setup.configure_native()
    assert not _native.enabled()
    monkeypatch.undo()
    assert grad(lambda x: np.sin(x) * 2.0)(0.0) == 2.0  # the C paths are off: Python's
    _tape_setup.configure_native()  # set up again, as at import
    assert _native.enabled()
    assert grad(lambda x: np.sin(x) * 2.0)(0.0) == 2.0


def _power(x, p):
    return x ** p


def test_partials_are_asked_only_for_the_traced_arguments():
    """A partials function taking ``wrt`` is told which arguments are traced, by the C
    backward, the Python one, forward mode and a traced (second-order) backward; the
    partials it leaves out (None) are never used."""
    seen = []

    def partials(x, p, *, y, wrt):
        seen.append(wrt)
        return p * x ** (p - 1), (y * np.log(x) if wrt[1] else None)

    x = np.array([0.5, 1.5])
    programs = [(lambda v: np.sum(_power(v, 3.0)), (True, False)),
                (lambda v: np.sum(_power(2.0, v)), (False, True)),
                (lambda v: np.sum(_power(v, v)), (True, True))]
    with scoped_rules():
        scalar_rule(_power, partials)
        for f, wanted in programs:
            seen.clear()
            fast, slow = _both(lambda f=f: grad(f)(x))
            _same(fast, slow)
            assert seen == [wanted, wanted]
            seen.clear()
            jvp(f, (x,), (np.ones(2),))
            assert seen == [wanted]
            seen.clear()
            hessian(f)(x)
            assert seen and all(w == wanted for w in seen)


# --------------------------------------------------------------------------------------
# Forward mode: a call on one tracer of a ForwardTrace (ForwardTrace._scalar's case); its
# programs and inputs are compared with the Python code's above, with reverse mode's


def test_forward_same_for_higher_orders():
    """Forward over reverse, reverse over forward and forward over forward: the inner
    trace's C path meets tracers of the outer one and steps aside for them."""
    f = lambda v: np.sum(np.tanh(v) ** 3 * np.sin(v) * 1.5)  # noqa: E731
    x = np.array([0.3, -0.8, 1.1])
    t = np.array([1.0, 0.5, -2.0])
    fast, slow = _both(lambda: jvp(grad(f), (x,), (t,)))
    for a, b in zip(fast, slow):
        _same(a, b)
    fast, slow = _both(lambda: grad(lambda v: jvp(f, (v,), (t,))[1])(x))
    _same(fast, slow)
    fast, slow = _both(lambda: jvp(lambda v: jvp(f, (v,), (t,))[1], (x,), (t,)))
    for a, b in zip(fast, slow):
        _same(a, b)


def test_forward_c_path_is_taken(monkeypatch):
    from chainrules.ad import _forward

    seen = _spied(monkeypatch, _forward.ForwardTrace, ("process", "binop", "_scalar"))

    def f(x):
        return np.tanh(np.sin(x) * 2.0 + 1)

    def taken():
        return [(name, first) for name, first in seen
                if first in (np.sin, np.tanh, operator.mul, operator.add)]

    x = np.array([0.5, 1.0])
    y, y_dot = jvp(f, (x,), (np.ones(2),))
    assert taken() == []
    with _native.python_only():
        y2, y_dot2 = jvp(f, (x,), (np.ones(2),))
    assert [name for name, _ in taken()].count("_scalar") == 4
    _same(y, y2)
    _same(y_dot, y_dot2)


def test_forward_steps_aside_for_what_it_does_not_do():
    """Two traced operands, an array operand, a complex or integer-valued input and a
    tangent of another dtype go to the Python code, with its results."""
    x = np.array([0.5, 1.0])
    cases = [
        (lambda v: v * v, x, np.ones(2)),
        (lambda v: v * np.array([2.0, 3.0]), x, np.ones(2)),
        (lambda v: np.sin(v) * 2.0, x + 0.5j, np.ones(2) + 0j),
        (lambda v: np.sin(v) * 2.0, x, np.ones(2, dtype=np.float32)),
        (lambda v: np.floor(v) * 2.0, x, np.ones(2)),
    ]
    for f, v, t in cases:
        fast, slow = _both(lambda f=f, v=v, t=t: jvp(f, (v,), (t,)))
        for a, b in zip(fast, slow):
            _same(a, b)


def test_forward_errors_are_the_python_codes():
    def bad_partial(x):
        return x * 2.0

    scalar_rule(bad_partial, lambda x: 1.0 / 0.0)
    for on in (True, False):
        _native.set_enabled(on)
        with pytest.raises(ZeroDivisionError):
            jvp(lambda x: np.sin(bad_partial(x)), (1.0,), (1.0,))
        with pytest.raises(ValueError, match="operands could not be broadcast"):
            jvp(lambda x: np.sin(x) * np.ones(3), (np.ones(2),), (np.ones(2),))


def test_forward_dead_tracers_are_refused():
    kept = []

    def f(x):
        kept.append(x)
        return np.sin(x)

    jvp(f, (np.ones(2),), (np.ones(2),))
    with pytest.raises(DeadTracerError):
        np.sin(kept[0])
    with pytest.raises(DeadTracerError):
        kept[0] * 2.0


def test_forward_no_references_kept():
    x = np.linspace(0.1, 1.0, 5)
    t = np.ones(5)
    c = 1.25
    f = lambda v: np.tanh(np.sin(v) * c) + c  # noqa: E731
    jvp(f, (x,), (t,))
    before = (sys.getrefcount(x), sys.getrefcount(t), sys.getrefcount(c))
    for _ in range(50):
        jvp(f, (x,), (t,))
    assert (sys.getrefcount(x), sys.getrefcount(t), sys.getrefcount(c)) == before


def test_forward_partials_get_wrt():
    """An operator's partials taking wrt are told which operand is traced."""
    seen = []

    def partials(a, b, *, wrt):
        seen.append(wrt)
        return (b if wrt[0] else None), (a if wrt[1] else None)

    x = np.array([2.0, 0.5])
    with scoped_rules(), warnings.catch_warnings():
        warnings.simplefilter("error")  # a new signature, not a replaced rule
        scalar_rule(operator.mul, partials, types=(float, np.ndarray))
        for on in (True, False):
            seen.clear()
            _native.set_enabled(on)
            y, y_dot = jvp(lambda v: 3.0 * v, (x,), (np.ones(2),))
            _same(y_dot, np.full(2, 3.0))
            assert seen == [(False, True)]
