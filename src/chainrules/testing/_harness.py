"""What the testers share: their setup, finite differences along a direction,
tolerances that account for the reference's own error, and failure messages that
name the argument, the element and the rule's code."""

from __future__ import annotations

import copy
import functools
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chainrules._naming import qualified_name
from chainrules.core import (
    NoTangent,
    NotImplementedTangent,
    Tangent,
    ZeroTangent,
    frule,
    rrule,
)
from chainrules.core._validate import unwrap_pullback
from chainrules.testing import _memo
from chainrules.testing._approx import _compare, default_tolerances
from chainrules.testing._errors import TesterUsageError, UnsettledReferenceError
from chainrules.testing._fd import FDMethod, FDResult, _with_range, fd_derivative
from chainrules.testing._pairs import PrimalAndTangent
from chainrules.testing._rand import make_rng, rand_tangent
from chainrules.testing._vec import Spec, TangentLayoutError, _Container, spec_of

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
    return qualified_name(f)


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
    # what every finite difference of f needs: (its key, eps, y as a vector)
    fd_base: tuple = ()
    # the finite differences shared with other testers at these inputs (`_memo`):
    # () until asked for, then (entries or None,)
    shared: tuple = ()


def _fd_base(s: _Setup) -> tuple[float, np.ndarray]:
    """The round-off of one evaluation of f and y as a vector, computed once per layout
    of the inputs and output (a tester may re-lay an int argument as a float)."""
    out_spec = s.out_spec
    assert out_spec is not None
    key = (*map(id, s.specs), id(out_spec), id(s.y))
    if not s.fd_base or s.fd_base[0] != key:
        # Every input's precision, not only the moving one's: float32 data held fixed
        # next to a float64 parameter still rounds the result to float32 (NumPy's
        # promotion), whatever the output's dtype says (truncnorm.ppf(q32, a, b): 0.4 %
        # noise in d/db).
        eps = max(max(sp.eps() for sp in s.specs), out_spec.eps())
        s.fd_base = (key, eps, out_spec.to_vec(s.y))
    return s.fd_base[1], s.fd_base[2]


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
            _memo.forget()  # what was computed since may be at the mutated inputs
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
    if not s.shared:
        s.shared = (_memo.entries_for(s.primals[0], s.primals[1:], s.counted.fkwargs,
                                      s.method),)
    entries = s.shared[0]
    if entries is not None:
        key = (i, type(spec), spec.size, v.dtype.str, v.tobytes(), step)
        hit = entries.get(key)
        if hit is not None:
            return hit[0].copy(), hit[1]
    u = v / scale
    rest = list(s.primals)

    def g(t: float) -> np.ndarray:
        rest[i] = spec.from_vec(x0 + t * u)
        return out_spec.to_vec(s.counted(*rest))

    eps, f0 = _fd_base(s)
    res = fd_derivative(g, 0.0, _with_range(s.method, spec), eps=eps, step=step, f0=f0)
    out = (res.value * scale, FDResult(res.value, res.step, res.accuracy * scale, res.calls))
    if entries is not None:
        entries[key] = (out[0].copy(), out[1])
    return out


def _fd_combined(s: _Setup, vs: list[np.ndarray], step: float | None = None) -> Any:
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

    eps, f0 = _fd_base(s)
    res = fd_derivative(g, 0.0, _with_range(s.method, whole), eps=eps, step=step, f0=f0)
    return res.value * scale, FDResult(res.value, res.step, res.accuracy * scale, res.calls)


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


#: A disagreement is blamed on the reference when shrinking its step fourfold, or its
#: own estimated error, moves it by at least this share of the disagreement.
DOUBT_SHARE = 0.5


def _fd_doubt(s: _Setup, probe: Callable[[float], Any], got: Any, want: Any,
              step: float | None, accuracy: float, along: str) -> str:
    """Whether finite differences settle the derivative that disagreed with the rule.

    ``probe(h)`` is the compared quantity by finite differences at step ``h``,
    ``want`` its value at the ``step`` the comparison used, ``got`` the rule's and
    ``accuracy`` the reference's estimated error. Returns '' when the reference holds
    still, else a sentence for the failure message (a failure at a point where the
    function is not smooth in its precision, or where its differences are noise)."""
    if step is None or not np.isfinite(step) or step <= 0:
        return ""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    gap = float(np.linalg.norm(np.atleast_1d(got - want)))
    if not np.isfinite(gap):
        return ""
    try:
        want_short = np.asarray(probe(step / 4), dtype=np.float64)
    except Exception:  # the failure stands as it is; the probe only explains it
        return ""
    spread = float(np.linalg.norm(np.atleast_1d(want - want_short)))
    doubt = max(spread if np.isfinite(spread) else np.inf,
                accuracy if np.isfinite(accuracy) else 0.0)
    if doubt < DOUBT_SHARE * gap:
        return ""
    eps = max(sp.eps() for sp in s.specs) if s.specs else 0.0
    precision = next((f" in {np.dtype(t).name}" for t in (np.float16, np.float32, np.float64)
                      if eps == float(np.finfo(t).eps)), "")
    return (f"\n  The finite differences do not settle this derivative here: along {along} "
            f"they move by {spread:.3g} when the step shrinks from {step:.2g} to "
            f"{step / 4:.2g}"
            + (f" (estimated error {accuracy:.2g})" if np.isfinite(accuracy) else "")
            + f", against a disagreement of "
            f"{gap:.3g}. f is probably not smooth within {2 * step:.2g} of these inputs"
            f"{precision} (a kink, a jump, eigenvalues or sort keys swapping places), so "
            "the disagreement may be the reference's: test at other inputs.")


def _raise_failure(message: str, doubt: str) -> None:
    """Raise a failed comparison: `UnsettledReferenceError` when the reference is in doubt."""
    __tracebackhide__ = True
    if doubt:
        raise UnsettledReferenceError(message + doubt)
    raise AssertionError(message)


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


