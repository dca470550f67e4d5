"""Regression tests for the problems a first user reported."""

from __future__ import annotations

import re

import numpy as np
import pytest

from chainrules.ad import InputTypeError, grad, hessian, jacobian, jvp, value_and_grad, vjp

_INT_MSG = re.escape("expected float or complex values, got ndarray(shape=(3,), dtype=int64); "
                     "integer and bool arrays have no derivative; convert the input with "
                     "x.astype(float)")


def _f(x):
    return np.sum(x ** 2 * 1.5)


@pytest.mark.parametrize("api", [
    lambda x: grad(_f)(x),
    lambda x: value_and_grad(_f)(x),
    lambda x: jacobian(lambda v: v * 1.5)(x),
    lambda x: hessian(_f)(x),
    lambda x: vjp(_f, x),
    lambda x: jvp(_f, (x,), (np.ones(3),)),
])
def test_integer_array_input_is_refused(api):
    with pytest.raises(InputTypeError, match=r"argument 0 \('(x|v)'\): " + _INT_MSG):
        api(np.array([1, 2, 3]))


def test_numpy_integer_and_bool_scalars_are_refused():
    with pytest.raises(InputTypeError, match=r"grad argument 0 \('x'\): .*got int64 "
                                             r"np\.int64\(3\).*x\.astype\(float\)"):
        grad(lambda x: x ** 2 * 1.5)(np.int64(3))
    with pytest.raises(InputTypeError, match=r"dtype=bool\).*x\.astype\(float\)"):
        grad(_f)(np.array([True, False, True]))
    with pytest.raises(InputTypeError, match=r"grad argument 1 \('b'\)\['k'\]: .*int64"):
        grad(lambda a, b: a * b["k"][0], argnums=(0, 1))(1.0, {"k": np.array([1, 2])})


def test_python_int_still_treated_as_float():
    assert grad(lambda x: x ** 2 * 1.5)(3) == 9.0
    np.testing.assert_allclose(grad(_f)(np.array([1.0, 2.0, 3.0])), [3.0, 6.0, 9.0])
    # an integer array that is not differentiated is fine
    assert grad(lambda x, idx: x * float(idx[0]))(2.0, np.array([3, 4])) == 3.0


def test_tracer_internals_do_not_shadow_ndarray_api():
    from chainrules.ad import Tracer
    assert not set(Tracer.__slots__) & set(dir(np.ndarray))


def test_ndarray_trace_method():
    np.testing.assert_array_equal(grad(lambda M: M.trace())(np.eye(2)), np.eye(2))
    np.testing.assert_array_equal(grad(lambda M: M.trace(1))(np.zeros((3, 3))),
                                  np.eye(3, k=1))
    J = jacobian(lambda M: M.trace(axis1=1, axis2=2))(np.ones((2, 2, 2)))
    assert J.shape == (2, 2, 2, 2) and J.sum() == 4.0


_X = np.array([0.5, -1.0, 2.0])


def test_hessians_through_builtin_pullbacks_against_jax(jax):
    jnp = jax.numpy
    cases = [
        (lambda v: np.sum(np.outer(v, v) ** 2), lambda v: jnp.sum(jnp.outer(v, v) ** 2)),
        (lambda v: np.linalg.norm(v) ** 3, lambda v: jnp.linalg.norm(v) ** 3),
        (lambda v: np.linalg.norm(v, 1) ** 3, lambda v: jnp.linalg.norm(v, 1) ** 3),
    ]
    for ours, theirs in cases:
        np.testing.assert_allclose(hessian(ours)(_X), np.asarray(jax.hessian(theirs)(_X)),
                                   rtol=1e-12, atol=1e-12)


_M = np.array([[2.0, 0.3, -0.1], [0.1, 1.5, 0.2], [0.0, -0.4, 1.8]])
_B = np.array([1.0, -2.0, 0.5])


def _linalg_hessian_cases(xp):
    def spd(v):
        return _M @ _M.T + xp.diag(v * v)

    return {
        "solve": lambda v: xp.sum(xp.linalg.solve(_M + xp.diag(v), _B) ** 2),
        "solve_matrix": lambda v: xp.sum(xp.linalg.solve(_M + xp.outer(v, v), _M)),
        "det": lambda v: xp.linalg.det(_M + xp.outer(v, _B)),
        "slogdet": lambda v: xp.linalg.slogdet(spd(v))[1],
        "inv": lambda v: xp.sum(xp.linalg.inv(_M + xp.diag(v)) ** 2),
        "cholesky": lambda v: xp.sum(xp.linalg.cholesky(spd(v)) ** 2),
        "qr": lambda v: xp.sum(xp.linalg.qr(_M + xp.diag(v))[1] ** 2),
    }


def _indexing_hessian_cases(xp):
    return {
        "slice": lambda v: xp.sum(v[1:3] ** 3) * v[0],
        "reversed": lambda v: xp.sum(v[::-1] * v ** 2),
        "fancy": lambda v: xp.sum(v[xp.array([0, 2, 2])] ** 3),
        "mask": lambda v: xp.sum(xp.where(v > 0.0, v, 0.0) ** 3),
        "builtins": lambda v: max(v[0], v[1]) * min(v[1], v[2]) + sum([v[0], v[2]]) ** 2,
        "trace": lambda v: xp.trace(xp.outer(v, v) + xp.diag(v ** 3)) ** 2,
        "diagonal": lambda v: xp.sum(xp.diagonal(xp.outer(v, v ** 2), 1) ** 2),
        "norm3": lambda v: xp.linalg.norm(v, 3) ** 2,
        "astype": lambda v: xp.sum(xp.sin(v.astype(xp.complex128)).real ** 2),
    }


_HESSIAN_CASES = (
    [(_indexing_hessian_cases, name, 1e-12) for name in _indexing_hessian_cases(np)]
    + [(_linalg_hessian_cases, name, 1e-9) for name in _linalg_hessian_cases(np)])


@pytest.mark.parametrize(("cases", "name", "tol"), _HESSIAN_CASES,
                         ids=[c[1] for c in _HESSIAN_CASES])
def test_hessians_through_builtin_rules_against_jax(jax, cases, name, tol):
    # A second derivative runs the rules' pullbacks on traced cotangents: indexing
    # scatters with operations that have rules, traced cotangents are added out of
    # place, and the linalg rules factor only plain arrays (LAPACK) and use np.linalg
    # calls, which have rules, on traced ones.
    ours, theirs = cases(np)[name], cases(jax.numpy)[name]
    np.testing.assert_allclose(hessian(ours)(_X), np.asarray(jax.hessian(theirs)(_X)),
                               rtol=tol, atol=tol)


def test_norm_gradient_at_zero_unchanged():
    np.testing.assert_array_equal(grad(lambda v: np.linalg.norm(v))(np.zeros(3)), np.zeros(3))
    np.testing.assert_array_equal(grad(lambda v: np.linalg.norm(v, 1))(np.array([0.0, -2.0])),
                                  [0.0, -1.0])


def test_memory_and_dtype_queries_on_traced_values():
    def f(v):
        assert not np.may_share_memory(v, v * 2.0) or True
        assert np.result_type(v, 1.0) == np.float64
        assert np.can_cast(v, np.float64)
        return np.sum(v ** 2)

    np.testing.assert_allclose(grad(f)(_X), 2 * _X)
    np.testing.assert_allclose(hessian(f)(_X), 2 * np.eye(3))


def test_traced_flags_are_complete():
    def f(v):
        fl = v.flags
        assert fl.c_contiguous and fl.fortran == fl.f_contiguous and fl.aligned and fl["C"]
        assert not fl.writeable and not fl.writable and not fl.owndata and not fl["W"]
        return np.sum(v)

    np.testing.assert_array_equal(grad(f)(_X), np.ones(3))


def test_hessian_through_lu_factor_and_lu_solve():
    """Once "not twice differentiable" (its pullback wrote rows into an empty array),
    lu_factor's pullback now gathers them: the Hessian through lu_factor and lu_solve
    matches differences of the gradient. (The message for a rule that is not twice
    differentiable is tested with svd in test_second_order.py.)"""
    sla = pytest.importorskip("scipy.linalg")
    A = np.array([[2.0, 0.3], [0.1, 1.0]])

    def f(v):
        return np.sum(sla.lu_solve(sla.lu_factor(A * v[0]), v[:2]) ** 2)

    g, h = grad(f), 1e-6
    want = np.stack([(g(_X + h * e) - g(_X - h * e)) / (2 * h) for e in np.eye(len(_X))])
    np.testing.assert_allclose(hessian(f)(_X), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_jacobian_of_tuple_output_against_jax(jax, mode):
    jnp = jax.numpy
    J = jacobian(lambda x: (np.sin(x) * x[0], np.sum(x ** 2)), mode=mode)(_X)
    J_ref = jax.jacfwd(lambda x: (jnp.sin(x) * x[0], jnp.sum(x ** 2)))(_X)
    assert type(J) is tuple and len(J) == 2
    for a, b in zip(J, J_ref):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-13)
    J = jacobian(lambda x: [x * 2.0, x[1]], mode=mode)(_X)
    assert type(J) is list and J[0].shape == (3, 3) and J[1].shape == (3,)


def test_jacobian_of_structured_output_error():
    with pytest.raises(InputTypeError, match=re.escape(
            "jacobian output: expected a number or array, or a flat tuple or list of them, "
            "got dict; return one array (np.concatenate the outputs) or a tuple of arrays")):
        jacobian(lambda x: {"a": x})(_X)
    with pytest.raises(InputTypeError, match="got tuple holding tuple"):
        jacobian(lambda x: (x, (x,)))(_X)


def test_function_without_source_message():
    from chainrules.ad import TracerConversionError

    ns: dict = {"math": __import__("math")}
    exec("def foo(x):\n    return math.sin(x)\n", ns)
    with pytest.raises(TracerConversionError, match=re.escape(
            "float() inside foo would turn a traced value (traced float 1.0) into a plain "
            "number and lose its derivative: the source of foo could not be read (a function "
            "defined in the REPL, with `python -c` or by exec), so the calls inside it cannot "
            "be intercepted and reach their rules. To fix it, define foo in a file")):
        grad(ns["foo"])(1.0)


def test_float_of_traced_value_is_traced_through():
    assert grad(lambda x: float(x) * 2.0)(3.0) == 2.0
    assert grad(lambda x: float(x ** 2))(3.0) == 6.0


def _mut_out(y):
    y = y * 1.0
    np.multiply(y, 3, out=y)
    return np.sum(y)


def _mut_sort(y):
    y = y * 1.0
    y.sort()
    return np.sum(y)


def _mut_fill(y):
    y = y * 1.0
    y.fill(1.0)
    return np.sum(y)


def _mut_copyto(y):
    y = y * 1.0
    np.copyto(y, 2.0)
    return np.sum(y)


def _mut_out_only(y):
    a = np.ones(3)
    z = y * 1.0
    np.multiply(a, 3.0, out=z)
    return np.sum(z)


@pytest.mark.parametrize("f, expected", [
    (_mut_out, lambda x: 3.0 * np.ones_like(x)),
    (_mut_out_only, np.zeros_like),
    (_mut_sort, np.ones_like),
    (_mut_fill, np.zeros_like),
    (_mut_copyto, np.zeros_like),
])
def test_in_place_writes_on_traced_arrays_are_differentiated(f, expected):
    # (these were MutationErrors before the AD followed writes: see tests/ad/test_inplace*)
    np.testing.assert_allclose(grad(f)(_X), expected(_X))


def test_out_of_place_equivalents_still_work():
    np.testing.assert_allclose(grad(lambda y: np.sum(np.sort(y) * np.arange(3.0)))(_X),
                               [1.0, 0.0, 2.0])
    np.testing.assert_allclose(grad(lambda y: np.sum(np.multiply(y, 3)))(_X), [3.0] * 3)


def test_pow_partials_of_numpy_float64_base_match_numpy_path():
    import itertools

    from chainrules.rules.stdlib.operator import _np_pow_partials, pow_partials

    for v, p in itertools.product((1.3, -1.3, 0.0, 1e-300, -0.5, 1e200, 1.0),
                                  (2.0, 3, -1, 0.5, 0, True, -2.5, 1j, 1.5, 1e10)):
        x = np.float64(v)
        with np.errstate(all="ignore"):
            y = x ** p
            expected = _np_pow_partials(x, p, y)
        got = pow_partials(x, p, y=y)  # no warning: filterwarnings = error
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, equal_nan=True, rtol=1e-14)
    y, y_hat = np.array([0.5, 2.0]), np.array([1.5, -1.0])
    g = grad(lambda y: sum((y[i] - y_hat[i]) ** 2.0 for i in range(2)))(y)
    np.testing.assert_allclose(g, 2 * (y - y_hat))


def test_traced_keyword_only_argument_message():
    from chainrules.ad import NoRuleError

    x = np.array([0.5, 2.0, 3.0])
    with pytest.raises(NoRuleError, match=re.escape(
            "no rrule for numpy.clip(ndarray) and the AD cannot trace into it (traced values "
            "passed by keyword (min=) that cannot be moved to a positional place; rules "
            "differentiate positional arguments, so pass them positionally)")):
        grad(lambda p: np.sum(np.clip(x, min=p)))(1.0)


class _Opaque:
    def __init__(self, w):
        self.w = w


@pytest.mark.parametrize("api", [
    lambda x: grad(lambda p: p.w * 2.0)(x),
    lambda x: vjp(lambda p: p.w * 2.0, x),
    lambda x: jvp(lambda p: p.w * 2.0, (x,), (1.0,)),
])
def test_opaque_object_input_is_refused_not_silently_zero(api):
    with pytest.raises(InputTypeError, match=re.escape(
            "argument 0 ('p'): expected floats, complex numbers, float arrays, or tuples, "
            "lists, dicts, namedtuples, dataclasses, attrs classes or SimpleNamespaces of "
            f"them, got a {_Opaque.__module__}._Opaque; the AD cannot see inside it and would "
            "lose the derivatives of what it holds; make its class a dataclass (or a "
            "namedtuple), or pass the arrays it holds as arguments")):
        api(_Opaque(3.0))


def test_opaque_object_nested_in_a_dict_is_refused():
    with pytest.raises(InputTypeError, match=re.escape("grad argument 0 ('d')['layer']: ")):
        grad(lambda d: d["layer"].w * d["scale"])({"layer": _Opaque(3.0), "scale": 2.0})


def test_constant_leaves_in_a_differentiated_argument_get_no_tangent():
    from chainrules import NoTangent

    d = {"w": 3.0, "name": "layer", "act": np.tanh, "rng": np.random.default_rng(0),
         "n": None}
    g = grad(lambda d: d["act"](d["w"]))(d)
    assert g["name"] == g["act"] == g["rng"] == g["n"] == NoTangent()


def test_numpy_function_whose_implementation_mutates_message():
    from chainrules.ad import NoRuleError

    # np.polyfit's implementation scales its weights in place (multiply(..., out=))
    with pytest.raises(NoRuleError, match=re.escape(
            "no rrule for numpy.polyfit(ndarray, ndarray, int, NoneType, bool, ndarray) and "
            "the AD cannot trace into it (tracing into NumPy's implementation failed: "
            "MutationError: `y *= ...` with a traced value into a plain array mutates "
            "an array in place")):
        grad(lambda w: np.sum(np.polyfit(_X, _X, 1, w=w)))(_X)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_matrix_times_traced_vector(fmt):
    """``A @ x`` with a constant SciPy sparse ``A`` on the left: Python asks ``A`` first,
    and SciPy would convert the traced ``x`` to a plain array; rewritten code sends the
    product to the operator's rule instead. Gradient and Hessian match differences."""
    sp = pytest.importorskip("scipy.sparse")
    A = sp.random(4, 3, density=0.6, format=fmt, random_state=0) + sp.eye(4, 3, format=fmt)

    def f(x):
        y = A @ x
        return np.sum(y ** 3) + np.sum(x @ A.T @ y)

    x = np.array([0.3, -0.5, 0.8])
    g, h = grad(f), 1e-6
    want_g = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(g(x), want_g, rtol=1e-6, atol=1e-8)
    want_h = np.stack([(g(x + h * e) - g(x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(hessian(f)(x), want_h, rtol=1e-6, atol=1e-8)


def test_hessian_through_odeint_wrt_y0():
    """Once "not twice differentiable" (odeint's adjoint pullback solved again with dense
    output, which the solve_ivp rule refuses): the reverse rule's pullback is now code
    the AD follows (sensitivities by odeint), so hessian, jvp of grad and jvp of jvp
    agree with central differences of the gradient. (The message for a rule that is
    not twice differentiable is tested in test_second_order.py.)"""
    si = pytest.importorskip("scipy.integrate")
    from chainrules.ad import jvp

    t, a = np.linspace(0.1, 0.2, 4), np.array([0.5, -0.3])

    def rhs(y, t, a):
        return -y * y + a

    def f(y0):
        return np.sum(si.odeint(rhs, y0, t, (a,)) ** 2)

    y0, v, h = np.array([1.0, 2.0]), np.ones(2), 1e-5
    g = grad(f)
    want = np.stack([(g(y0 + h * e) - g(y0 - h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(hessian(f)(y0), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(jvp(g, (y0,), (v,))[1], want @ v, rtol=1e-5, atol=1e-7)
    assert jvp(lambda y: jvp(f, (y,), (v,))[1], (y0,), (v,))[1] == pytest.approx(
        v @ want @ v, rel=1e-5)


def test_matmul_of_a_users_operator_runs_as_python_runs_it():
    """``A @ x`` goes to the operator's rule only for a left operand with a matmul rule
    (sparse matrices); a user's class defining ``__matmul__`` (callable, here) is
    called as before, and its NumPy code on the tracer is followed."""
    M = np.array([[2.0, 1.0], [0.5, 3.0]])

    class Op:
        def __init__(self, m):
            self.m = m

        def __matmul__(self, x):
            return self.m @ x

        def __call__(self, x):
            return self @ x

    def f(x):
        return np.sum((Op(M) @ x) ** 2)

    x, h = np.array([0.3, -0.4]), 1e-6
    want = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(grad(f)(x), want, rtol=1e-6, atol=1e-8)


def test_exec_function_calling_brentq_is_a_named_error():
    # issue 29: SciPy's C root finder ignored the tracer's float() refusal and the next
    # callback ended in "SystemError: <built-in function sub> returned a result with an
    # exception set" (in pure-Python mode too: not the C tape). exec'd code has no source
    # to rewrite, so brentq is reached without its rule: a named error says so.
    from chainrules.ad import TracerConversionError

    namespace: dict = {}
    exec("import scipy.optimize as so\n"
         "def f(a):\n"
         "    return so.brentq(lambda t: t ** 3 - a, 0.0, 3.0)\n", namespace)
    with pytest.raises(TracerConversionError, match=re.escape(
            "float() inside f would turn a traced value (traced float -2.0) into a plain "
            "number and lose its derivative: the source of f could not be read (a function "
            "defined in the REPL, with `python -c` or by exec)")):
        grad(namespace["f"])(2.0)


_GRID = np.array([[1.0, 2.0], [3.0, 0.5]])


def _vectorized_loss(s):
    # np.vectorize of a function closing over the traced s, on plain arrays: NumPy used
    # to write the tracers into a float array (a raw "setting an array element with a
    # sequence")
    return np.sum(np.vectorize(lambda v, w: np.sin(v * s) + w)(_GRID, _GRID.T) ** 2)


def _frompyfunc_loss(s):
    return np.sum(np.frompyfunc(lambda v: np.cos(v * s), 1, 1)(_GRID).astype(float) * _GRID)


@pytest.mark.parametrize("loss", [_vectorized_loss, _frompyfunc_loss])
def test_vectorize_and_frompyfunc_closing_over_traced_values(loss):
    eps = 1e-6
    fd = (loss(0.7 + eps) - loss(0.7 - eps)) / (2 * eps)
    np.testing.assert_allclose(grad(loss)(0.7), fd, rtol=1e-7)
    np.testing.assert_allclose(jvp(loss, (0.7,), (1.0,))[1], fd, rtol=1e-7)


def test_frompyfunc_of_plain_objects_is_unchanged():
    def shout(s):
        words = np.frompyfunc(lambda a: a + "!", 1, 1)(np.array(["a", "b"], dtype=object))
        return s * len("".join(words))

    assert grad(shout)(2.0) == 4.0
