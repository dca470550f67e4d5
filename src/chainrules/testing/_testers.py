"""test_frule, test_rrule, test_scalar: check rules against finite differences."""

from __future__ import annotations

import copy
import dataclasses
import functools
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from chainrules.core import (
    InplaceableThunk,
    NoTangent,
    NotImplementedTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    frule,
    iadd,
    rrule,
    unthunk,
)
from chainrules.core._validate import unwrap_pullback
from chainrules.testing import _foreign
from chainrules.testing._approx import _compare, _zero_of, default_tolerances
from chainrules.testing._errors import TesterUsageError
from chainrules.testing._fd import FDMethod, _with_range, fd_derivative
from chainrules.testing._outcome import xfail
from chainrules.testing._pairs import PrimalAndTangent
from chainrules.testing._rand import make_rng, rand_tangent
from chainrules.testing._vec import Spec, TangentLayoutError, _Container, spec_of

__all__ = ["RuleTestReport", "test_frule", "test_rrule", "test_scalar"]

#: Arguments with at most this many real scalars get a full finite-difference
#: Jacobian check (element by element); bigger ones the dot-product test only.
FULL_JACOBIAN_MAX = 64


@dataclass
class RuleTestReport:
    """What a tester did: ``checks`` passed, ``primal_calls`` made (finite
    differences included), ``seconds`` taken.

    >>> import numpy as np
    >>> from chainrules.testing import test_rrule
    >>> report = test_rrule(np.sin, np.array([0.1, 0.2]))
    >>> report.primal_calls > 0, "cotangent of argument 1" in report.checks
    (True, True)
    """

    function: str
    mode: str
    primal_calls: int = 0
    seconds: float = 0.0
    checks: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (f"{self.mode} of {self.function}: {len(self.checks)} checks passed, "
                f"{self.primal_calls} primal calls, {self.seconds:.3g} s")


# ----------------------------------------------------------------- shared machinery


def _fname(f: Any) -> str:
    from chainrules.testing._cases import _function_name

    return _function_name(f)


def _arg_label(i: int) -> str:
    # Messages add the path in parentheses: "f itself (self)", "argument 2 (args[1])".
    return "f itself" if i == 0 else f"argument {i}"


def _item_path(i: int) -> str:
    return "self" if i == 0 else f"args[{i - 1}]"


class _Counted:
    def __init__(self, fkwargs: dict) -> None:
        self.calls = 0
        self.fkwargs = fkwargs

    def __call__(self, f: Any, *args: Any) -> Any:
        self.calls += 1
        return f(*args, **self.fkwargs)


@dataclass
class _Setup:
    name: str
    primals: list
    tangents: list
    specs: list[Spec]
    plain_f: bool
    rtol: float
    atol: float
    method: FDMethod
    counted: _Counted
    rng: np.random.Generator
    y: Any = None
    out_spec: Spec | None = None
    # Arguments the caller held fixed explicitly (no_tangent(x), or a zero tangent):
    # their cotangents are not compared, whatever the primal's type.
    held: frozenset = frozenset()
    # test_rrule: i -> conj(pullback(conj(y_bar)))[i] as a vector, for failure hints
    conj_probe: Callable[[int], Any] | None = None


def _is_held(t: Any) -> bool:
    """A tangent that holds its argument fixed: NoTangent, ZeroTangent or all zeros."""
    if isinstance(t, (NoTangent, ZeroTangent)):
        return True
    try:
        return isinstance(t, (int, float, complex, np.ndarray, np.number)) and not np.any(t)
    except TypeError:
        return False


def _setup(tester: str, f: Any, args: tuple, rtol: float | None, atol: float | None,
           fkwargs: dict | None, seed: Any, fdm: FDMethod | None) -> _Setup:
    if fkwargs is not None and not isinstance(fkwargs, dict):
        raise TesterUsageError(
            f"{tester}: `fkwargs` must be a dict of keyword arguments for f, got "
            f"{type(fkwargs).__name__}; write fkwargs={{'axis': 0}}.")
    if fdm is not None and not isinstance(fdm, FDMethod):
        raise TesterUsageError(
            f"{tester}: `fdm` must be an FDMethod (e.g. central_fdm(5)), got "
            f"{type(fdm).__name__}.")
    rng = make_rng(seed)
    items = [f, *args]
    primals = [a.x if isinstance(a, PrimalAndTangent) else a for a in items]
    if not callable(primals[0]):
        raise TesterUsageError(
            f"{tester}: argument 1 (f) must be callable, got {type(primals[0]).__name__}; "
            f"call {tester}(f, *args).")
    name = _fname(primals[0])
    tangents = []
    held = set()
    for i, (item, x) in enumerate(zip(items, primals)):
        if isinstance(item, PrimalAndTangent):
            t = item.x_dot
            if _is_held(t):
                held.add(i)
        else:
            t = rand_tangent(x, rng)
        if isinstance(t, NotImplementedTangent):
            raise TesterUsageError(
                f"{tester}({name}): {_arg_label(i)} was given a NotImplementedTangent as its "
                "tangent; give a real tangent or NoTangent().")
        tangents.append(t)
    specs = []
    for i, (x, t) in enumerate(zip(primals, tangents)):
        spec = spec_of(x, t, _item_path(i))
        try:
            spec.tangent_to_vec(t)
        except TangentLayoutError as e:
            raise TesterUsageError(
                f"{tester}({name}): the tangent given for {_arg_label(i)} does not fit its "
                f"primal: {e}. Give a tangent of the primal's shape and kind.") from None
        specs.append(spec)
    plain_f = not specs[0].perturbable
    r, a = default_tolerances(*primals[1:])
    counted = _Counted(dict(fkwargs or {}))
    return _Setup(name, primals, tangents, specs, plain_f,
                  r if rtol is None else rtol, a if atol is None else atol,
                  fdm or FDMethod(), counted, rng, held=frozenset(held))


def _include_output_dtype(s: _Setup, rtol: float | None, atol: float | None) -> None:
    """Default tolerances follow the least precise of the inputs *and* the output: a
    float64 input with a float32 output gives float32-accurate finite differences."""
    r, a = default_tolerances(*s.primals[1:], s.y)
    s.rtol = r if rtol is None else rtol
    s.atol = a if atol is None else atol


def _snapshot(x: Any) -> Any:
    try:
        return copy.deepcopy(x)
    except Exception:
        return _UNCOPYABLE


_UNCOPYABLE = object()


def _same(a: Any, b: Any, depth: int = 0) -> bool:
    if b is _UNCOPYABLE or depth > 30:
        return True
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype
                and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (tuple, list)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(_same(x, y, depth + 1) for x, y in zip(a, b)))
    if isinstance(a, dict):
        return (type(b) is dict or isinstance(b, dict)) and a.keys() == b.keys() and all(
            _same(a[k], b[k], depth + 1) for k in a)
    if isinstance(a, Tangent):
        return isinstance(b, Tangent) and _same(_plain_backing(a), _plain_backing(b), depth + 1)
    if isinstance(a, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                      types.MethodType, np.ufunc)):
        return True
    if type(a).__module__.startswith("scipy.sparse") and hasattr(a, "toarray"):
        # Compared by value: SciPy itself reorders a matrix's internal arrays (sorting
        # indices, summing duplicates) without changing the matrix.
        return (type(b) is type(a) and a.shape == b.shape and a.dtype == b.dtype
                and np.array_equal(a.toarray(), b.toarray(), equal_nan=True))
    d = getattr(a, "__dict__", None)
    if isinstance(d, dict) and d:  # dataclasses, plain objects, callable objects
        return type(a) is type(b) and _same(d, getattr(b, "__dict__", {}), depth + 1)
    if isinstance(a, (int, float, complex, str, bytes, np.generic)):
        return type(a) is type(b) and (a == b or (a != a and b != b))
    return True


def _plain_backing(t: Tangent) -> Any:
    b = t.backing
    return dict(b) if isinstance(b, dict) else list(b)


def _check_not_mutated(s: _Setup, before: list, when: str) -> None:
    for i, (x, x0) in enumerate(zip(s.primals, before)):
        if not _same(x, x0):
            raise AssertionError(
                f"{s.name}: {when} mutated {_arg_label(i)} ({_item_path(i)}). Rules must "
                "never write into their inputs: copy first (x = x.copy()) or build a new "
                "array.")


def _fd_along(s: _Setup, i: int, v: np.ndarray, step: float | None = None) -> Any:
    """Directional derivative of f along slot vector ``v`` of item ``i`` (others fixed).

    Returns (derivative in output layout, FDResult)."""
    spec = s.specs[i]
    x0 = spec.to_vec(s.primals[i])
    scale = float(np.max(np.abs(v))) if v.size else 0.0
    out_spec = s.out_spec
    assert out_spec is not None
    if scale == 0.0:
        return np.zeros(out_spec.size), None
    u = v / scale
    rest = list(s.primals)

    def g(t: float) -> np.ndarray:
        rest[i] = spec.from_vec(x0 + t * u)
        return out_spec.to_vec(s.counted(*rest))

    eps = max(spec.eps(), out_spec.eps())
    res = fd_derivative(g, 0.0, _with_range(s.method, spec), eps=eps, step=step,
                        f0=out_spec.to_vec(s.y))
    return res.value * scale, dataclasses.replace(res, accuracy=res.accuracy * scale)


def _fd_combined(s: _Setup, vs: list[np.ndarray]) -> Any:
    """Directional derivative moving every item ``i`` along ``vs[i]`` at once."""
    out_spec = s.out_spec
    assert out_spec is not None
    scale = max((float(np.max(np.abs(v))) for v in vs if v.size), default=0.0)
    if scale == 0.0:
        return np.zeros(out_spec.size), None
    x0s = [sp.to_vec(x) for sp, x in zip(s.specs, s.primals)]
    whole = _Container(tuple(s.primals), "", list(range(len(vs))), s.specs, "seq")

    def g(t: float) -> np.ndarray:
        xs = [sp.from_vec(x0 + t * v / scale) if sp.size else x
              for sp, x0, v, x in zip(s.specs, x0s, vs, s.primals)]
        return out_spec.to_vec(s.counted(*xs))

    eps = max(whole.eps(), out_spec.eps())
    res = fd_derivative(g, 0.0, _with_range(s.method, whole), eps=eps,
                        f0=out_spec.to_vec(s.y))
    return res.value * scale, dataclasses.replace(res, accuracy=res.accuracy * scale)


def _check_primal(s: _Setup, y: Any, what: str) -> None:
    problem = _compare(y, s.y, "y", s.rtol, s.atol)
    if problem:
        raise AssertionError(
            f"{s.name}: the primal output returned by the {what} differs from "
            f"f(*args):\n  {problem}\nThe rule must return f(*args) as its first element.")


def _as_rule_result(s: _Setup, res: Any, what: str, call: str, config: Any = None) -> tuple:
    if res is None:
        table = rrule if what == "rrule" else frule
        no_match = table.no_match_error(s.primals[0], tuple(map(type, s.primals[1:])), config)
        if no_match is not None:
            raise no_match
        types = ", ".join(type(x).__name__ for x in s.primals[1:])
        raise AssertionError(
            f"{s.name}: no {what} found for {s.name}({types}); register one with "
            f"@{what}.register(...) or check the argument types it dispatches on.")
    if not isinstance(res, tuple) or len(res) != 2:
        length = f" of length {len(res)}" if isinstance(res, tuple) else ""
        raise AssertionError(
            f"{s.name}: the {what} must return a 2-tuple {call}, got "
            f"{type(res).__name__}{length}.")
    return res


#: The finite-difference reference's own estimated error widens a tolerance by at
#: most this fraction of the compared values: enough for float32 differences whose
#: round-off dominates (a softmax-like gradient of a sum of order 1), never enough to
#: hide a sign error, a missing factor or a 5 % slip.
FD_ERROR_CAP = 1e-2


def _fd_slack(fd_err: float, cap_of: float) -> float:
    if not np.isfinite(fd_err) or fd_err <= 0:
        return 0.0
    return min(fd_err, FD_ERROR_CAP * cap_of)


#: How many "typical errors" the dot-product test allows (see `_tol_dot`).
DOT_SAFETY = 3.0


def _tol_dot(s: _Setup, w: np.ndarray, jv: np.ndarray, fd_res: Any = None,
             rhs: float = 0.0, typical: float = 0.0, xb: Any = None,
             v: Any = None) -> float:
    """Tolerance of the dot-product test ``<w, J v> = <x_bar, v>``.

    Each side is a sum of n products. A relative error of ``rtol`` in each term of
    ``J v`` (or of ``x_bar``) moves the sum by about ``rtol·‖w∘Jv‖₂`` (random signs
    add up like a random walk), and the sum itself is of that size too. The
    Cauchy-Schwarz bound ``rtol·‖w‖·‖Jv‖`` would grow like n instead of √n and, for
    large inputs, hide a wrong sign. ``typical`` is the size the right side has for
    a random direction, ``‖x_bar‖·‖x_dot‖/√n``: when the direction happens to be
    nearly orthogonal to the gradient both sides are small, and the reference's
    error is judged against this size, not against the cancelled value."""
    spread = float(np.linalg.norm(w * jv))
    if xb is not None and v is not None:
        spread += float(np.linalg.norm(xb * v))
    base = s.atol + DOT_SAFETY * s.rtol * spread
    if fd_res is None:
        return base
    err = float(np.sum(np.abs(w))) * fd_res.accuracy
    return base + _fd_slack(err, max(abs(float(w @ jv)), abs(rhs), typical))


def _worst_lines(spec: Spec, got: np.ndarray, want: np.ndarray, k: int = 5,
                 index_map: np.ndarray | None = None) -> str:
    diff = np.abs(got - want)
    order = np.argsort(diff)[::-1][:k]
    lines = []
    for j in order:
        slot = int(index_map[j]) if index_map is not None else int(j)
        lines.append(f"    {spec.element_name(slot)}: rule {got[j]:.6g}, "
                     f"finite differences {want[j]:.6g}")
    return "\n".join(lines)


def _fd_note(res: Any) -> str:
    if res is None:
        return ""
    acc = "" if not np.isfinite(res.accuracy) else f", estimated FD error {res.accuracy:.2g}"
    return f" (FD step {res.step:.2g}{acc})"


_SOURCES: list[list] = []  # per running tester: the rule code its failures name


def _source_of(fn: Any) -> str | None:
    fn = unwrap_pullback(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    name = getattr(fn, "__qualname__", code.co_name)
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def _note_source(fn: Any) -> None:
    if _SOURCES:
        _SOURCES[-1][:] = [_source_of(fn)]


def _names_rule_source(tester: Callable) -> Callable:
    """A failure of ``tester`` names the code of the rule under test (the pullback for
    rrules, the rule function for frules), so the traceback's last frame need not."""

    @functools.wraps(tester)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        _SOURCES.append([None])
        try:
            return tester(*args, **kwargs)
        except AssertionError as e:
            where = _SOURCES[-1][0]
            if where and e.args and isinstance(e.args[0], str):
                e.args = (f"{e.args[0]}\n  (the rule under test: {where})", *e.args[1:])
            raise
        finally:
            _SOURCES.pop()

    return wrapper


def _refuse_unknown(tester: str, unknown: dict) -> None:
    """Keyword arguments a tester does not know are usually meant for ``f``."""
    if unknown:
        names = ", ".join(f"{k}=" for k in unknown)
        example = ", ".join(f"{k!r}: {v!r}" for k, v in unknown.items())
        raise TesterUsageError(
            f"{tester}: unknown keyword argument(s) {names}. Keyword arguments of the function "
            f"under test go in fkwargs=, e.g. {tester}(f, x, fkwargs={{{example}}}).")


# ----------------------------------------------------------------------- test_rrule


@_names_rule_source
def test_rrule(f: Any, *args: Any, output_tangent: Any = None, rtol: float | None = None,
               atol: float | None = None, fkwargs: dict | None = None,
               rrule_f: Callable[..., Any] = rrule, config: Any = None,
               check_thunked_output_tangent: bool = True,
               check_zero_output_tangent: bool = False, seed: Any = None,
               fdm: FDMethod | None = None, **unknown: Any) -> RuleTestReport:
    """Check the rrule of ``f`` at ``args`` against finite differences of ``f``.

    **Arguments:**

    - ``f``: the function (or a `PrimalAndTangent` for a callable object
      whose fields are differentiated too).
    - ``args``: the primal arguments; any may be a `PrimalAndTangent` to fix
      its direction, ``no_tangent(x)`` to exclude it. Others get
      ``rand_tangent(x)``.
    - ``output_tangent``: the cotangent ``y_bar`` fed to the pullback
      (default ``rand_tangent(y)``).
    - ``rtol``, ``atol``: tolerances (default by dtype, `default_tolerances`).
    - ``fkwargs``: keyword arguments of ``f`` (never differentiated).
    - ``rrule_f``: what computes ``(y, pullback)``, called as
      ``rrule_f(config, f, *args, **fkwargs)``; ``rrule_via_ad`` tests an AD.
    - ``config``: the `RuleConfig` passed (default `ADviaRuleConfig`).
    - ``check_thunked_output_tangent``: also feed ``Thunk(y_bar)``.
    - ``check_zero_output_tangent``: also feed ``ZeroTangent()``.
    - ``seed``: seed or ``np.random.Generator`` (default ``$CHAINRULES_TEST_SEED`` or 0).
    - ``fdm``: the finite-difference method (`FDMethod`).

    **Checks:** the primal output; the pullback returns a tuple with one entry
    per argument plus ``self_bar``; ``self_bar`` is ``NoTangent()`` for plain
    functions; arguments with ``NoTangent()`` get ``NoTangent()`` back (not
    ``ZeroTangent()``); every cotangent fits its primal (shape, dtype, real for
    real, fields) and agrees with finite differences — by the dot-product test
    ``<y_bar, J x_dot> = <x_bar, x_dot>`` on a seeded direction (O(1) primal
    calls per argument), and element by element for arguments of at most 64
    scalars or to localise a failure; a thunked and a zero ``y_bar`` work;
    ``InplaceableThunk`` adds agree with ``+``; neither the rule nor the
    pullback mutates the inputs or ``y_bar``. A ``NotImplementedTangent`` is
    an expected failure (``pytest.xfail``) once the rest passed.

    **Foreign arrays** (JAX, PyTorch, ``array_api_strict``): the checks run on NumPy
    copies, while the rule itself runs on the foreign arrays (its cotangents converted
    back); JAX rules must also run under ``jax.jit``, PyTorch rules under
    ``torch.func.vjp`` (the message names the line that stops them).

    **Returns** a `RuleTestReport`; **raises** ``AssertionError`` for a wrong rule.

    >>> import numpy as np
    >>> from chainrules.testing import test_rrule, no_tangent
    >>> test_rrule(np.sum, np.array([[1.0, 2.0], [3.0, 4.0]]), fkwargs={"axis": 0}).mode
    'rrule'
    """
    __tracebackhide__ = True
    _refuse_unknown("test_rrule", unknown)
    if _foreign.find_foreign(*args, output_tangent):
        return _foreign.run_on_numpy(test_rrule, "rrule", f, args, dict(
            output_tangent=output_tangent, rtol=rtol, atol=atol, fkwargs=fkwargs,
            rrule_f=rrule_f, config=config, check_thunked_output_tangent=(
                check_thunked_output_tangent), check_zero_output_tangent=(
                check_zero_output_tangent), seed=seed, fdm=fdm))
    start = time.perf_counter()
    from chainrules.testing._config import ADviaRuleConfig

    s = _setup("test_rrule", f, args, rtol, atol, fkwargs, seed, fdm)
    rng = s.rng
    config = ADviaRuleConfig(s.method) if config is None else config
    report = RuleTestReport(s.name, "rrule")
    before = [_snapshot(x) for x in s.primals]
    s.y = s.counted(*s.primals)
    s.out_spec = spec_of(s.y, None, "y")
    _include_output_dtype(s, rtol, atol)
    _check_not_mutated(s, before, "calling f")
    before = [_snapshot(x) for x in s.primals]

    res = rrule_f(config, *s.primals, **s.counted.fkwargs)
    y, pullback = _as_rule_result(s, res, "rrule", "(y, pullback)", config)
    _note_source(pullback)
    _check_not_mutated(s, before, "the rrule")
    _check_primal(s, y, "rrule")
    report.checks.append("primal output")
    if not callable(pullback):
        raise AssertionError(
            f"{s.name}: the rrule returned (y, {type(pullback).__name__}); the second "
            "element must be the pullback function.")

    y_bar = rand_tangent(s.y, rng) if output_tangent is None else output_tangent
    try:
        w = s.out_spec.tangent_to_vec(y_bar)
    except TangentLayoutError as e:
        raise TesterUsageError(
            f"test_rrule({s.name}): output_tangent does not fit the output y: {e}.") from None
    y_bar_before = _snapshot(y_bar)
    n_items = len(s.primals)

    def call_pullback(arg: Any, what: str) -> tuple:
        try:
            bars = pullback(arg)
        except Exception as e:
            hint = "" if what == "y_bar" else (
                " Pullbacks must accept thunked and zero cotangents: unthunk(y_bar) first; "
                "ZeroTangent() acts as zero in arithmetic with arrays.")
            raise AssertionError(
                f"{s.name}: the pullback raised {type(e).__name__} when given {what}: "
                f"{e}.{hint}") from e
        if not isinstance(bars, tuple):
            raise AssertionError(
                f"{s.name}: the pullback must return a tuple (self_bar, *arg_bars), got "
                f"{type(bars).__name__}{' (use a tuple, not a list)' * isinstance(bars, list)}.")
        if len(bars) != n_items:
            raise AssertionError(
                f"{s.name}: the pullback returned {len(bars)} cotangents, expected "
                f"{n_items}: one for f itself (self_bar, NoTangent() for plain functions) "
                f"plus one per positional argument ({n_items - 1}).")
        return bars

    bars = call_pullback(y_bar, "y_bar")

    def conj_probe(i: int) -> np.ndarray | None:
        """conj(pullback(conj(y_bar)))[i] as a vector: what a rule that forgot (or added)
        a conjugation would have had to return; for the failure message only."""
        try:
            bars = cast(Any, pullback(_conj(y_bar)))  # checked to be a tuple in the test itself
            return s.specs[i].tangent_to_vec(_conj(bars[i]))
        except Exception:  # a hint only: any failure means no hint
            return None

    s.conj_probe = conj_probe
    if not _same(y_bar, y_bar_before):
        raise AssertionError(
            f"{s.name}: the pullback mutated its cotangent argument y_bar. Never write into "
            "y_bar: it may be shared with other pullbacks.")
    _check_not_mutated(s, before, "the pullback")
    report.checks.append("pullback returns a tuple of the right length")

    not_implemented: list[str] = []
    for i in range(n_items):
        x_bar = bars[i]
        spec = s.specs[i]
        label = _arg_label(i)
        if i in s.held and i > 0:
            # not compared, so a not-implemented cotangent for it is no expected failure
            report.checks.append(f"{label} held fixed by the caller")
            continue
        if isinstance(unthunk(x_bar), NotImplementedTangent):
            not_implemented.append(f"{label}: {unthunk(x_bar)!r}")
            continue
        if not spec.perturbable:
            got = unthunk(x_bar)
            x = s.primals[i]
            if spec_of(x, None, "x").perturbable:
                # a perturbable primal the caller excluded with NoTangent(): not compared
                report.checks.append(f"{label} excluded")
                continue
            if isinstance(got, NoTangent):
                report.checks.append(f"NoTangent for {label}")
                continue
            if (isinstance(x, int) and not isinstance(x, bool) and not isinstance(
                    got, (ZeroTangent, bool)) and isinstance(got, (int, float, np.number))):
                # the rule treats this int like a float: check it as one
                s.specs[i] = spec_of(x, 1.0, _item_path(i))
                s.tangents[i] = 1.0
                _check_cotangent(s, i, s.specs[i].tangent_to_vec(got), w, report)
                continue
            if i == 0 and s.plain_f and getattr(x, "__closure__", None) and isinstance(
                    got, (Tangent, ZeroTangent)):
                # a closure is a function object with fields (its captured values, as a
                # Julia closure is a functor): an AD may return their cotangent as
                # self_bar; the captured values are the caller's data, not compared
                report.checks.append("self_bar of a closure (its captured values)")
                continue
            if i == 0 and s.plain_f:
                raise AssertionError(
                    f"{s.name}: self_bar (first entry of the pullback's tuple) must be "
                    f"NoTangent() for a plain function, got {got!r}. Return "
                    "(NoTangent(), x_bar, ...).")
            raise AssertionError(
                f"{s.name}: {label} ({_item_path(i)}) cannot be perturbed (its tangent is "
                f"NoTangent()), so its cotangent must be NoTangent(), got {got!r}"
                + (" (ZeroTangent() is a zero *value*; NoTangent() says there is no "
                   "derivative)" if isinstance(got, ZeroTangent) else "") + ".")
        try:
            xb = spec.tangent_to_vec(x_bar, strict=True)
        except TangentLayoutError as e:
            raise AssertionError(f"{s.name}: cotangent of {label} does not fit its primal: "
                                 f"{e}") from None
        _check_cotangent(s, i, xb, w, report)

    if check_thunked_output_tangent:
        tbars = call_pullback(Thunk(lambda: y_bar), "a Thunk of y_bar")
        for i in range(n_items):
            if isinstance(unthunk(bars[i]), NotImplementedTangent):
                continue
            problem = _compare(tbars[i], bars[i], _item_path(i), s.rtol, s.atol)
            if problem:
                raise AssertionError(
                    f"{s.name}: the pullback gives a different cotangent for "
                    f"{_arg_label(i)} when y_bar is a Thunk:\n  {problem}")
        report.checks.append("thunked y_bar")
    _check_zero_field(s, y_bar, w, bars, call_pullback, report)
    if check_zero_output_tangent:
        zbars = call_pullback(ZeroTangent(), "ZeroTangent()")
        for i in range(n_items):
            z = unthunk(zbars[i])
            if isinstance(z, NotImplementedTangent):
                continue
            if not s.specs[i].perturbable and not isinstance(z, NoTangent):
                raise AssertionError(
                    f"{s.name}: for y_bar = ZeroTangent() the pullback returned {z!r} for "
                    f"{_arg_label(i)}, which must always get NoTangent().")
            problem = _zero_of(z, _item_path(i), s.rtol, s.atol)
            if problem:
                raise AssertionError(
                    f"{s.name}: for y_bar = ZeroTangent() the pullback must return zero "
                    f"cotangents:\n  {problem}")
        report.checks.append("ZeroTangent y_bar")
    _check_inplaceable(s, bars, rng, report)
    _check_not_mutated(s, before, "the pullback")

    report.primal_calls = s.counted.calls
    report.seconds = time.perf_counter() - start
    if not_implemented:
        xfail(f"{s.name}: derivative not implemented for " + "; ".join(not_implemented)
              + f" (the other checks passed: {', '.join(report.checks)})")
    return report


def _check_zero_field(s: _Setup, y_bar: Any, w: np.ndarray, bars: tuple,
                      call_pullback: Callable, report: RuleTestReport) -> None:
    """A structured y_bar with one field ``ZeroTangent()`` (what an AD passes when that
    part of the output is unused) must work and act as zeros."""
    assert s.out_spec is not None
    y_bar = unthunk(y_bar)
    if not isinstance(y_bar, Tangent) or len(y_bar) < 2:
        return
    keys = [k for k, _ in y_bar.items()]
    key = keys[-1]
    backing = y_bar.backing
    P = y_bar.primal_type
    if isinstance(backing, dict) and P is not None and issubclass(P, dict):
        zeroed = type(y_bar)({**backing, key: ZeroTangent()})
    elif isinstance(backing, dict):
        zeroed = type(y_bar)(**{**backing, key: ZeroTangent()})
    else:
        zeroed = type(y_bar)(*(ZeroTangent() if k == key else v for k, v in enumerate(backing)))
    numeric = s.out_spec.vec_to_tangent(s.out_spec.tangent_to_vec(zeroed))
    zbars = call_pullback(zeroed, f"y_bar with field {key!r} = ZeroTangent()")
    nbars = call_pullback(numeric, f"y_bar with field {key!r} zero")
    for i in range(len(bars)):
        if isinstance(unthunk(nbars[i]), NotImplementedTangent):
            continue
        problem = _compare(zbars[i], nbars[i], _item_path(i), s.rtol, s.atol)
        if problem:
            raise AssertionError(
                f"{s.name}: with y_bar field {key!r} = ZeroTangent() the cotangent of "
                f"{_arg_label(i)} differs from the one for an all-zero field:\n  {problem}")
    report.checks.append("ZeroTangent field in y_bar")


def _check_cotangent(s: _Setup, i: int, xb: np.ndarray, w: np.ndarray,
                     report: RuleTestReport) -> None:
    spec = s.specs[i]
    label = _arg_label(i)
    v = spec.tangent_to_vec(s.tangents[i])
    if not np.any(v):
        v = np.ones(spec.size)
    jv, fd_res = _fd_along(s, i, v)
    lhs = float(w @ jv)
    rhs = float(xb @ v)
    typical = float(np.linalg.norm(xb)) * float(np.linalg.norm(v)) / np.sqrt(max(v.size, 1))
    tol = _tol_dot(s, w, jv, fd_res, rhs, typical, xb, v)
    step = fd_res.step if fd_res is not None else None
    full: list = []  # the element-wise comparison, computed at most once

    def full_problem() -> str:
        if not full:
            full.append(_full_cotangent_problem(s, i, xb, w, step, fd_res))
        return full[0]

    # A small input is also compared element by element. That comparison is the
    # stronger one, so when it agrees, a failed one-direction test means only that
    # the direction crossed a point where the primal is not smooth (an eigenvector's
    # sign convention switching, say), not that the rule is wrong.
    small = spec.size <= FULL_JACOBIAN_MAX
    if abs(lhs - rhs) > tol and not (small and not full_problem()):
        where = _localise(s, i, xb, w, v, step)
        xb_conj = s.conj_probe(i) if s.conj_probe is not None else None
        hint = ""
        if (xb_conj is not None and not np.allclose(xb_conj, xb)
                and abs(lhs - float(xb_conj @ v)) <= tol):
            hint = ("\n  The rule is off by a complex conjugation: conj(pullback(conj(y_bar))) "
                    "passes. chainrules' convention is x_bar = conj(dy/dx) * y_bar for a "
                    "holomorphic f (JAX and autograd return the conjugate).")
        raise AssertionError(
            f"{s.name}: wrong cotangent for {label} ({_item_path(i)}): the dot-product test "
            f"<y_bar, J·x_dot> = <x_bar, x_dot> fails: finite differences give {lhs:.6g}, "
            f"the pullback {rhs:.6g} (difference {abs(lhs - rhs):.3g} > tolerance "
            f"{tol:.3g}){_fd_note(fd_res)}.{hint}\n{where}")
    # Along the rule's own cotangent both sides equal |J^T y_bar| for a right rule, so
    # a wrong sign or scale changes the right side by its whole size, however large
    # the input, and cannot cancel by chance as it can along a random direction.
    norm_xb = float(np.linalg.norm(xb))
    if spec.size > 1 and norm_xb > 0 and np.isfinite(norm_xb):
        u = xb / norm_xb
        ju, fd_u = _fd_along(s, i, u, step)
        lhs_u, rhs_u = float(w @ ju), norm_xb
        tol_u = _tol_dot(s, w, ju, fd_u, rhs_u, rhs_u, xb, u)
        if abs(lhs_u - rhs_u) > tol_u and not (small and not full_problem()):
            where = _localise(s, i, xb, w, u, step)
            raise AssertionError(
                f"{s.name}: wrong cotangent for {label} ({_item_path(i)}): along the "
                f"pullback's own cotangent, <y_bar, J·x_bar>/|x_bar| from finite "
                f"differences is {lhs_u:.6g} but |x_bar| is {rhs_u:.6g} (difference "
                f"{abs(lhs_u - rhs_u):.3g} > tolerance {tol_u:.3g}){_fd_note(fd_u)}: the "
                f"cotangent has the wrong sign or scale.\n{where}")
    report.checks.append(f"cotangent of {label}")
    if small:
        problem = full_problem()
        if problem:
            raise AssertionError(
                f"{s.name}: wrong cotangent for {label} ({_item_path(i)}): {problem}")
        report.checks.append(f"full Jacobian of {label}")


def _full_cotangent_problem(s: _Setup, i: int, xb: np.ndarray, w: np.ndarray,
                            step: float | None, fd_res: Any) -> str:
    """Compare x_bar with J^T·y_bar from one finite difference per scalar; '' if they agree."""
    spec = s.specs[i]
    want = _jtv(s, i, w, np.arange(spec.size), step)
    err = float(np.linalg.norm(xb - want))
    scale_full = max(float(np.linalg.norm(xb)), float(np.linalg.norm(want)))
    tol_full = s.atol + s.rtol * scale_full
    if fd_res is not None:
        # each element's reference has about the error of the random-direction one
        err_fd = float(np.sum(np.abs(w))) * fd_res.accuracy * np.sqrt(spec.size)
        tol_full += _fd_slack(err_fd, scale_full)
    if err > tol_full:
        return (f"it differs from the finite-difference J^T·y_bar by {err:.3g} (tolerance "
                f"{tol_full:.3g}); worst elements:\n{_worst_lines(spec, xb, want)}")
    return ""


def _conj(t: Any) -> Any:
    t = unthunk(t)
    if isinstance(t, (Tangent, ZeroTangent, NoTangent)):
        return t.conj()
    return np.conj(t)


def _jtv(s: _Setup, i: int, w: np.ndarray, slots: np.ndarray, step: float | None) -> np.ndarray:
    """(J^T y_bar)[slots] for item i, one finite difference per slot."""
    out = np.zeros(len(slots))
    size = s.specs[i].size
    for j, k in enumerate(slots):
        e = np.zeros(size)
        e[k] = 1.0
        jv, _ = _fd_along(s, i, e, step)
        out[j] = w @ jv
    return out


def _localise(s: _Setup, i: int, xb: np.ndarray, w: np.ndarray, v: np.ndarray,
              step: float | None) -> str:
    """Find where the cotangent is wrong: bisect the direction's support (one finite
    difference per halving) down to a block of at most 64 scalars, then compare it
    element by element."""
    spec = s.specs[i]
    slots = np.flatnonzero(v) if spec.size > FULL_JACOBIAN_MAX else np.arange(spec.size)
    while len(slots) > FULL_JACOBIAN_MAX:
        half = slots[: len(slots) // 2]
        other = slots[len(slots) // 2:]
        scores = []
        for part in (half, other):
            vp = np.zeros(spec.size)
            vp[part] = v[part]
            jv, _ = _fd_along(s, i, vp, step)
            scores.append(abs(float(w @ jv) - float(xb @ vp)) / _tol_dot(s, w, jv))
        slots = half if scores[0] >= scores[1] else other
    want = _jtv(s, i, w, slots, step)
    got = xb[slots]
    scope = "all" if len(slots) == spec.size else f"a block of {len(slots)} of {spec.size}"
    return (f"  Element-wise comparison of J^T·y_bar over {scope} scalars of {_item_path(i)}, "
            f"worst elements:\n{_worst_lines(spec, got, want, index_map=slots)}")


def _check_inplaceable(s: _Setup, bars: tuple, rng: np.random.Generator,
                       report: RuleTestReport) -> None:
    for i, x_bar in enumerate(bars):
        if not isinstance(x_bar, InplaceableThunk):
            continue
        x = s.primals[i]
        if not isinstance(x, np.ndarray):
            continue
        acc = rand_tangent(x, rng)
        expected = acc + unthunk(x_bar)
        got = iadd(np.array(acc, copy=True), x_bar)
        direct = x_bar.add_fn(np.array(acc, copy=True))
        for what, value in (("iadd(acc, x_bar)", got), ("x_bar.add_fn(acc)", direct)):
            problem = _compare(value, expected, _item_path(i), s.rtol, s.atol)
            if problem:
                raise AssertionError(
                    f"{s.name}: the InplaceableThunk returned for {_arg_label(i)} adds "
                    f"wrongly: {what} differs from acc + unthunk(x_bar):\n  {problem}")
        report.checks.append(f"InplaceableThunk add of {_arg_label(i)}")


# ----------------------------------------------------------------------- test_frule


@_names_rule_source
def test_frule(f: Any, *args: Any, output_tangent: Any = None, rtol: float | None = None,
               atol: float | None = None, fkwargs: dict | None = None,
               frule_f: Callable[..., Any] = frule, config: Any = None,
               check_zero_tangents: bool = False, seed: Any = None,
               fdm: FDMethod | None = None, **unknown: Any) -> RuleTestReport:
    """Check the frule of ``f`` at ``args`` against finite differences of ``f``.

    Arguments as for `test_rrule` (``output_tangent`` is accepted for symmetry
    and unused: the whole pushforward is compared). ``frule_f`` is called as
    ``frule_f(config, (self_dot, *arg_dots), f, *args, **fkwargs)``
    (``frule_via_ad`` tests an AD's forward mode).

    **Checks:** the primal output; the pushforward along the seeded tangents of
    all arguments at once equals the finite-difference ``J·x_dot`` (compared in
    full, O(1) primal calls); on failure each argument is checked alone to name
    the one that is wrong, with the worst output elements; with several
    arguments, a ``ZeroTangent()`` for one of them works and the pushforward is
    linear; for inputs of at most 64 scalars, every Jacobian column is compared
    too; (opt-in) all-``ZeroTangent`` tangents give a zero pushforward; the
    rule does not mutate its inputs or tangents. A ``NotImplementedTangent`` is an expected failure.

    >>> import numpy as np
    >>> from chainrules.testing import test_frule
    >>> test_frule(np.multiply, np.array([1.0, 2.0]), 3.0).mode
    'frule'
    """
    __tracebackhide__ = True
    _refuse_unknown("test_frule", unknown)
    if _foreign.find_foreign(*args):
        return _foreign.run_on_numpy(test_frule, "frule", f, args, dict(
            rtol=rtol, atol=atol, fkwargs=fkwargs, frule_f=frule_f, config=config,
            check_zero_tangents=check_zero_tangents, seed=seed, fdm=fdm))
    start = time.perf_counter()
    from chainrules.testing._config import ADviaRuleConfig

    del output_tangent
    s = _setup("test_frule", f, args, rtol, atol, fkwargs, seed, fdm)
    config = ADviaRuleConfig(s.method) if config is None else config
    report = RuleTestReport(s.name, "frule")
    before = [_snapshot(x) for x in s.primals]
    s.y = s.counted(*s.primals)
    s.out_spec = spec_of(s.y, None, "y")
    _include_output_dtype(s, rtol, atol)
    _check_not_mutated(s, before, "calling f")

    def run(dargs: tuple, what: str) -> Any:
        tangents_before = [_snapshot(t) for t in dargs]
        res = frule_f(config, dargs, *s.primals, **s.counted.fkwargs)
        y, y_dot = _as_rule_result(s, res, "frule", "(y, y_dot)", config)
        _check_not_mutated(s, before, "the frule")
        for i, (t, t0) in enumerate(zip(dargs, tangents_before)):
            if not _same(t, t0):
                raise AssertionError(
                    f"{s.name}: the frule mutated the tangent of {_arg_label(i)}. Never write "
                    "into the tangents: build new arrays.")
        return y, y_dot

    dargs = tuple(s.tangents)
    if frule_f is frule:
        hit = frule.lookup(s.primals[0], tuple(map(type, s.primals[1:])), config)
        if hit is not None:
            _note_source(hit[0])
    y, y_dot = run(dargs, "the tangents")
    _check_primal(s, y, "frule")
    report.checks.append("primal output")
    if isinstance(unthunk(y_dot), NotImplementedTangent):
        report.primal_calls = s.counted.calls
        xfail(f"{s.name}: pushforward not implemented: {unthunk(y_dot)!r}")
    got = _pushforward_vec(s, y_dot, "the pushforward")
    vs = [sp.tangent_to_vec(t) for sp, t in zip(s.specs, s.tangents)]
    want, fd_res = _fd_combined(s, vs)
    if not _close(s, got, want, fd_res):
        culprits = _localise_frule(s, vs, run)
        raise AssertionError(
            f"{s.name}: wrong pushforward: y_dot differs from the finite-difference J·x_dot "
            f"by {float(np.linalg.norm(got - want)):.3g} (tolerance "
            f"{_tol_vec(s, got, want, fd_res):.3g}){_fd_note(fd_res)}.\n{culprits}")
    report.checks.append("pushforward")
    _check_partial_zero_tangents(s, got, run, report)
    _check_full_jacobian_forward(s, run, fd_res, report)
    if check_zero_tangents:
        zargs = tuple(ZeroTangent() if sp.perturbable else NoTangent() for sp in s.specs)
        _, z_dot = run(zargs, "ZeroTangent() tangents")
        problem = _zero_of(unthunk(z_dot), "y_dot", s.rtol, s.atol)
        if problem:
            raise AssertionError(
                f"{s.name}: with ZeroTangent() tangents the pushforward must be zero:\n"
                f"  {problem}")
        report.checks.append("ZeroTangent tangents")
    report.primal_calls = s.counted.calls
    report.seconds = time.perf_counter() - start
    return report


def _check_partial_zero_tangents(s: _Setup, full: np.ndarray, run: Callable,
                                 report: RuleTestReport) -> None:
    """With several differentiable arguments, give one of them ``ZeroTangent()`` (what a
    forward-mode AD passes for a constant): the rule must accept it, and by linearity
    ``pushforward(i zero) + pushforward(only i) == pushforward(all)``. No primal calls."""
    active = [i for i, sp in enumerate(s.specs) if sp.perturbable and i not in s.held]
    if len(active) < 2:
        return
    zero = [ZeroTangent() if sp.perturbable else NoTangent() for sp in s.specs]
    for i in active:
        without_i = tuple(zero[j] if j == i else t for j, t in enumerate(s.tangents))
        only_i = tuple(t if j == i else zero[j] for j, t in enumerate(s.tangents))
        parts = []
        for dargs, what in ((without_i, f"{_arg_label(i)} has tangent ZeroTangent()"),
                            (only_i, f"only {_arg_label(i)} has a nonzero tangent")):
            try:
                _, y_dot = run(dargs, what)
            except AssertionError:
                raise
            except Exception as e:
                raise AssertionError(
                    f"{s.name}: the frule raised {type(e).__name__} when {what}: {e}. "
                    "Forward-mode ADs pass ZeroTangent() for constant arguments; it acts as "
                    "zero in arithmetic with arrays.") from e
            parts.append(_pushforward_vec(s, unthunk(y_dot), f"the pushforward when {what}"))
        if not _close(s, parts[0] + parts[1], full):
            raise AssertionError(
                f"{s.name}: the pushforward is not linear in the tangents: with "
                f"{_arg_label(i)}'s tangent set to ZeroTangent() plus with only "
                f"{_arg_label(i)}'s tangent, it differs from the full pushforward by "
                f"{float(np.linalg.norm(parts[0] + parts[1] - full)):.3g}.")
    report.checks.append("ZeroTangent for one argument")


def _check_full_jacobian_forward(s: _Setup, run: Callable, fd_res: Any,
                                 report: RuleTestReport) -> None:
    """For inputs of at most 64 scalars in all, compare the pushforward of every basis
    direction with finite differences (one frule call and 4 primal calls per scalar),
    norm-wise over the whole Jacobian like the reverse-mode element-wise check."""
    assert s.out_spec is not None
    active = [i for i, sp in enumerate(s.specs) if sp.perturbable and sp.size and i not in s.held]
    n = sum(s.specs[i].size for i in active)
    if not active or n > FULL_JACOBIAN_MAX:
        return
    step = fd_res.step if fd_res is not None else None
    zero = [ZeroTangent() if sp.perturbable else NoTangent() for sp in s.specs]
    got_cols, want_cols, names = [], [], []
    for i in active:
        spec = s.specs[i]
        for k in range(spec.size):
            e = np.zeros(spec.size)
            e[k] = 1.0
            dargs = tuple(spec.vec_to_tangent(e) if j == i else zero[j]
                          for j in range(len(s.specs)))
            _, y_dot = run(dargs, f"the basis direction {spec.element_name(k)}")
            got_cols.append(_pushforward_vec(s, unthunk(y_dot), "the pushforward"))
            want_cols.append(_fd_along(s, i, e, step)[0])
            names.append(spec.element_name(k))
    got, want = np.stack(got_cols, axis=1), np.stack(want_cols, axis=1)
    err = float(np.linalg.norm(got - want))
    scale = max(float(np.linalg.norm(got)), float(np.linalg.norm(want)))
    tol = s.atol + s.rtol * scale
    if fd_res is not None:
        tol += _fd_slack(fd_res.accuracy * np.sqrt(got.size), scale)
    if not (np.all(np.isfinite(got)) and err <= tol):
        col = int(np.argmax(np.linalg.norm(got - want, axis=0)))
        raise AssertionError(
            f"{s.name}: wrong pushforward: the Jacobian from the frule differs from finite "
            f"differences by {err:.3g} (tolerance {tol:.3g}); worst along {names[col]}, "
            f"output elements:\n" + _worst_lines(s.out_spec, got[:, col], want[:, col], k=3))
    report.checks.append("full Jacobian (forward)")


def _pushforward_vec(s: _Setup, y_dot: Any, what: str) -> np.ndarray:
    assert s.out_spec is not None
    try:
        return s.out_spec.tangent_to_vec(y_dot, strict=True)
    except TangentLayoutError as e:
        raise AssertionError(f"{s.name}: {what} does not fit the output y: {e}") from None


def _tol_vec(s: _Setup, a: np.ndarray, b: np.ndarray, fd_res: Any = None) -> float:
    scale = max(float(np.linalg.norm(a)), float(np.linalg.norm(b)))
    tol = s.atol + s.rtol * scale
    if fd_res is not None:
        tol += _fd_slack(fd_res.accuracy * np.sqrt(a.size), scale)
    return tol


def _close(s: _Setup, a: np.ndarray, b: np.ndarray, fd_res: Any = None) -> bool:
    return bool(np.all(np.isfinite(a))
                and float(np.linalg.norm(a - b)) <= _tol_vec(s, a, b, fd_res))


def _localise_frule(s: _Setup, vs: list[np.ndarray], run: Callable) -> str:
    assert s.out_spec is not None
    lines = []
    for i, (spec, v) in enumerate(zip(s.specs, vs)):
        if not spec.perturbable or not np.any(v):
            continue
        dargs = tuple(t if j == i else (ZeroTangent() if sp.perturbable else NoTangent())
                      for j, (sp, t) in enumerate(zip(s.specs, s.tangents)))
        _, y_dot = run(dargs, f"only the tangent of {_arg_label(i)}")
        got = _pushforward_vec(s, y_dot, f"the pushforward for {_arg_label(i)} alone")
        want, res_i = _fd_along(s, i, v)
        if _close(s, got, want, res_i):
            lines.append(f"  {_arg_label(i)} ({_item_path(i)}) alone: correct")
        else:
            lines.append(
                f"  {_arg_label(i)} ({_item_path(i)}) alone: wrong by "
                f"{float(np.linalg.norm(got - want)):.3g}; worst output elements:\n"
                + _worst_lines(s.out_spec, got, want, k=3))
    return "\n".join(lines)


# ---------------------------------------------------------------------- test_scalar


def test_scalar(f: Any, z: Any, *, rtol: float | None = None, atol: float | None = None,
                fkwargs: dict | None = None, check_frule: bool = True,
                check_rrule: bool = True, seed: Any = None,
                fdm: FDMethod | None = None, **unknown: Any) -> list[RuleTestReport]:
    """Test the frule and rrule of a scalar function ``f`` at real or complex ``z``.

    A real ``z`` is tested with tangent 1 (frule) and output cotangent 1, plus
    ``1j`` when the output is complex (rrule). A complex ``z`` is tested along
    ``1`` and ``1j`` (frule) and with output cotangents ``1`` and ``1j``
    (rrule); complex outputs of real inputs are handled too.

    Examples:
        >>> import math
        >>> from chainrules.testing import test_scalar
        >>> [r.mode for r in test_scalar(math.sin, 0.5)]
        ['frule', 'rrule']
    """
    __tracebackhide__ = True
    _refuse_unknown("test_scalar", unknown)
    from chainrules.testing._pairs import with_tangent

    if isinstance(z, (PrimalAndTangent, np.ndarray)) or not isinstance(
            z, (int, float, complex, np.number)) or isinstance(z, bool):
        raise TesterUsageError(
            f"test_scalar: argument 2 (z) must be a real or complex scalar, got "
            f"{type(z).__name__}; use test_frule/test_rrule for arrays and structures.")
    opts = {"rtol": rtol, "atol": atol, "fkwargs": fkwargs, "seed": seed, "fdm": fdm}
    is_complex = isinstance(z, (complex, np.complexfloating))
    directions = [1.0, 1j] if is_complex else [1.0]
    reports = []
    if check_frule:
        for d in directions:
            d = cast(Any, type(z))(d) if isinstance(z, np.generic) else d
            reports.append(test_frule(f, with_tangent(z, d), **opts))
    if check_rrule:
        y = f(z, **(fkwargs or {}))
        y_complex = isinstance(y, (complex, np.complexfloating))
        for y_bar in ([1.0, 1j] if y_complex else [1.0]):
            if isinstance(y, np.generic):
                y_bar = type(y)(y_bar)
            reports.append(test_rrule(f, z, output_tangent=y_bar, **opts))
    return reports


test_frule.__test__ = False  # type: ignore[attr-defined]  # not pytest test functions
test_rrule.__test__ = False  # type: ignore[attr-defined]
test_scalar.__test__ = False  # type: ignore[attr-defined]
