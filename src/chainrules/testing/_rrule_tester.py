"""test_rrule: check a pullback against finite differences (dot-product test on
seeded directions, element by element for small inputs or to localise a failure)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from chainrules.core import (
    InplaceableThunk,
    NoTangent,
    NotImplementedTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    iadd,
    rrule,
    unthunk,
)
from chainrules.rules._kit import is_differentiable
from chainrules.testing import _foreign
from chainrules.testing._approx import _compare, _zero_of
from chainrules.testing._config import ADviaRuleConfig
from chainrules.testing._errors import TesterUsageError
from chainrules.testing._fd import FDMethod
from chainrules.testing._harness import (
    FULL_JACOBIAN_MAX,
    RuleTestReport,
    _arg_label,
    _as_rule_result,
    _check_not_mutated,
    _check_primal,
    _fd_along,
    _fd_doubt,
    _fd_note,
    _fd_slack,
    _include_output_dtype,
    _item_path,
    _names_rule_source,
    _note_source,
    _raise_failure,
    _refuse_unknown,
    _same,
    _Setup,
    _setup,
    _snapshot,
    _tol_dot,
    _worst_lines,
)
from chainrules.testing._outcome import xfail
from chainrules.testing._rand import rand_tangent
from chainrules.testing._vec import TangentLayoutError, spec_of

__all__ = ["test_rrule"]


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
            if i == 0 and s.plain_f and _captures_differentiable(x) and isinstance(
                    got, (Tangent, ZeroTangent)):
                # a closure is a function object with fields (its captured values, as a
                # Julia closure is a functor): an AD may return their cotangent as
                # self_bar when one can carry a tangent (ChainRulesTestUtils' rule); the
                # captured values are the caller's data, not compared
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


def _holds_differentiable(v: Any, depth: int = 0) -> bool:
    """Whether ``v`` is, or (nested a few levels) holds, a value that can carry a tangent."""
    if is_differentiable(v):
        return True
    if depth >= 4:
        return False
    if isinstance(v, dict):
        return any(_holds_differentiable(item, depth + 1) for item in v.values())
    if isinstance(v, (list, tuple)):
        return any(_holds_differentiable(item, depth + 1) for item in v)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return any(_holds_differentiable(getattr(v, f.name), depth + 1)
                   for f in dataclasses.fields(v))
    return False


def _captures_differentiable(fn: Any) -> bool:
    """Whether the closure ``fn`` captures a differentiable value (a float, an array, a
    structure holding one): only then is a ``Tangent``/``ZeroTangent`` ``self_bar`` its
    captured values' cotangent; a closure over ``np.sin`` has nothing to differentiate."""
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell (a variable not assigned yet)
            continue
        if _holds_differentiable(value):
            return True
    return False


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
    acc = _w_accuracy(w, fd_res)  # about each element's reference error too, at this step
    full: list = []  # the element-wise comparison (problem, J^T·y_bar), computed once

    def full_problem() -> str:
        if not full:
            full.extend(_full_cotangent_problem(s, i, xb, w, step, fd_res))
        return full[0]

    def element_doubt() -> str:  # only after full_problem() found a problem
        return _element_doubt(s, i, xb, full[1], w, step, acc)

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
        doubt = (element_doubt() if small else _fd_doubt(
            s, lambda h: w @ _fd_along(s, i, v, h)[0], rhs, lhs, step, acc, "x_dot"))
        _raise_failure(
            f"{s.name}: wrong cotangent for {label} ({_item_path(i)}): the dot-product test "
            f"<y_bar, J·x_dot> = <x_bar, x_dot> fails: finite differences give {lhs:.6g}, "
            f"the pullback {rhs:.6g} (difference {abs(lhs - rhs):.3g} > tolerance "
            f"{tol:.3g}){_fd_note(fd_res)}.{hint}\n{where}", doubt)
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
            doubt = (element_doubt() if small else _fd_doubt(
                s, lambda h: w @ _fd_along(s, i, u, h)[0], rhs_u, lhs_u, step,
                _w_accuracy(w, fd_u), "x_bar"))
            _raise_failure(
                f"{s.name}: wrong cotangent for {label} ({_item_path(i)}): along the "
                f"pullback's own cotangent, <y_bar, J·x_bar>/|x_bar| from finite "
                f"differences is {lhs_u:.6g} but |x_bar| is {rhs_u:.6g} (difference "
                f"{abs(lhs_u - rhs_u):.3g} > tolerance {tol_u:.3g}){_fd_note(fd_u)}: the "
                f"cotangent has the wrong sign or scale.\n{where}", doubt)
    report.checks.append(f"cotangent of {label}")
    if small:
        problem = full_problem()
        if problem:
            _raise_failure(
                f"{s.name}: wrong cotangent for {label} ({_item_path(i)}): {problem}",
                element_doubt())
        report.checks.append(f"full Jacobian of {label}")


def _w_accuracy(w: np.ndarray, fd_res: Any) -> float:
    """The estimated error of ``<w, J v>`` from that of ``J v`` (an ∞-norm)."""
    if fd_res is None:
        return float("nan")
    return float(np.sum(np.abs(w))) * fd_res.accuracy


def _element_doubt(s: _Setup, i: int, xb: np.ndarray, want: np.ndarray, w: np.ndarray,
                   step: float | None, accuracy: float) -> str:
    """`_fd_doubt` along the scalar of item ``i`` whose cotangent ``xb`` is furthest
    from ``want`` (J^T·y_bar); ``accuracy``: the estimated error of one element's
    reference."""
    spec = s.specs[i]
    k = int(np.argmax(np.abs(xb - want)))
    e = np.zeros(spec.size)
    e[k] = 1.0
    return _fd_doubt(s, lambda h: w @ _fd_along(s, i, e, h)[0], xb[k], want[k], step,
                     accuracy, spec.element_name(k))


def _full_cotangent_problem(s: _Setup, i: int, xb: np.ndarray, w: np.ndarray,
                            step: float | None, fd_res: Any) -> tuple[str, np.ndarray]:
    """Compare x_bar with J^T·y_bar from one finite difference per scalar: the problem
    ('' if they agree) and J^T·y_bar."""
    spec = s.specs[i]
    want = _jtv(s, i, w, np.arange(spec.size), step)
    err = float(np.linalg.norm(xb - want))
    scale_full = max(float(np.linalg.norm(xb)), float(np.linalg.norm(want)))
    tol_full = s.atol + s.rtol * scale_full
    if fd_res is not None:
        # each element's reference has about the error of the random-direction one
        err_fd = _w_accuracy(w, fd_res) * np.sqrt(spec.size)
        tol_full += _fd_slack(err_fd, scale_full)
    if err > tol_full:
        return (f"it differs from the finite-difference J^T·y_bar by {err:.3g} (tolerance "
                f"{tol_full:.3g}); worst elements:\n{_worst_lines(spec, xb, want)}"), want
    return "", want


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


