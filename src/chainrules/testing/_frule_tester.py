"""test_frule: check a pushforward against finite differences (all arguments at
once, then alone to name the wrong one; every Jacobian column for small inputs)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chainrules.core import (
    NoTangent,
    NotImplementedTangent,
    ZeroTangent,
    frule,
    unthunk,
)
from chainrules.testing import _foreign
from chainrules.testing._approx import _zero_of
from chainrules.testing._config import ADviaRuleConfig
from chainrules.testing._fd import FDMethod
from chainrules.testing._harness import (
    FULL_JACOBIAN_MAX,
    RuleTestReport,
    _arg_label,
    _as_rule_result,
    _check_not_mutated,
    _check_primal,
    _fd_along,
    _fd_combined,
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
    _worst_lines,
)
from chainrules.testing._outcome import xfail
from chainrules.testing._vec import TangentLayoutError, spec_of

__all__ = ["test_frule"]


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
    del output_tangent
    s = _setup("test_frule", f, args, rtol, atol, fkwargs, seed, fdm)
    config = ADviaRuleConfig(s.method) if config is None else config
    report = RuleTestReport(s.name, "frule")
    before = [_snapshot(x) for x in s.primals]
    s.y = s.counted(*s.primals)
    s.out_spec = spec_of(s.y, None, "y")
    _include_output_dtype(s, rtol, atol)
    _check_not_mutated(s, before, "calling f")

    def run(dargs: tuple, what: str, checked: bool = True) -> Any:
        # checked=False (the Jacobian's columns): the caller checks the inputs once after
        # its calls, and the fresh basis tangents are the rule's to spoil
        tangents_before = [_snapshot(t) for t in dargs] if checked else []
        res = frule_f(config, dargs, *s.primals, **s.counted.fkwargs)
        y, y_dot = _as_rule_result(s, res, "frule", "(y, y_dot)", config)
        if not checked:
            return y, y_dot
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
    jacobians: list = []  # the column-by-column Jacobians, computed at most once

    def jacobian() -> _Jacobian | None:
        if not jacobians:
            jacobians.append(_forward_jacobian(s, run, fd_res))
            _check_not_mutated(s, before, "the frule")
        return jacobians[0]

    if _close(s, got, want, fd_res):
        report.checks.append("pushforward")
    elif _cancelled(s, got, want, vs, jacobian(), fd_res):
        report.checks.append("pushforward (cancelled along the direction; checked by columns)")
    else:
        culprits = _localise_frule(s, vs, run)
        doubt = "" if fd_res is None else _fd_doubt(
            s, lambda h: _fd_combined(s, vs, h)[0], got, want, fd_res.step,
            fd_res.accuracy * np.sqrt(got.size), "the tangents")
        _raise_failure(
            f"{s.name}: wrong pushforward: y_dot differs from the finite-difference J·x_dot "
            f"by {float(np.linalg.norm(got - want)):.3g} (tolerance "
            f"{_tol_vec(s, got, want, fd_res):.3g}){_fd_note(fd_res)}.\n{culprits}", doubt)
    _check_partial_zero_tangents(s, got, run, report)
    jac = jacobian()
    if jac is not None:
        problem = _jacobian_problem(s, jac, fd_res)
        if problem:
            _raise_failure(f"{s.name}: wrong pushforward: {problem}", _column_doubt(s, jac))
        report.checks.append("full Jacobian (forward)")
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


@dataclass
class _Jacobian:
    """The Jacobian of the arguments ``active`` (their scalars in order) from the frule
    (``got``) and from finite differences (``want``), one column per scalar."""

    active: list[int]
    got: np.ndarray
    want: np.ndarray
    names: list[str]
    accuracy: float = float("nan")  # the largest estimated error of the columns' references
    #: per column: the argument, the basis direction and the step of its reference
    columns: list[tuple[int, np.ndarray, float | None]] = field(default_factory=list)


def _column_doubt(s: _Setup, jac: _Jacobian) -> str:
    """`_fd_doubt` along the basis direction whose Jacobian column is furthest off."""
    col = int(np.argmax(np.linalg.norm(jac.got - jac.want, axis=0)))
    i, e, step = jac.columns[col]
    return _fd_doubt(s, lambda h: _fd_along(s, i, e, h)[0], jac.got[:, col],
                     jac.want[:, col], step, jac.accuracy * np.sqrt(jac.got.shape[0]),
                     jac.names[col])


def _forward_jacobian(s: _Setup, run: Callable, fd_res: Any) -> _Jacobian | None:
    """For inputs of at most 64 scalars in all, the pushforward of every basis direction
    and its finite difference (one frule call and 4 primal calls per scalar); None for
    bigger inputs."""
    assert s.out_spec is not None
    active = [i for i, sp in enumerate(s.specs) if sp.perturbable and sp.size and i not in s.held]
    n = sum(s.specs[i].size for i in active)
    if not active or n > FULL_JACOBIAN_MAX:
        return None
    zero = [ZeroTangent() if sp.perturbable else NoTangent() for sp in s.specs]
    got_cols, want_cols, names, columns = [], [], [], []
    accuracy = float("nan")
    for i in active:
        spec = s.specs[i]
        # Each argument's columns get a step adapted along that argument alone: the
        # combined direction's step can be far too long for an argument whose share of
        # it was small (t.ppf's p next to loc and scale: truncation error 1e-6).
        v = spec.tangent_to_vec(s.tangents[i])
        _, res_i = _fd_along(s, i, v if np.any(v) else np.ones(spec.size))
        step = res_i.step if res_i is not None else fd_res.step if fd_res is not None else None
        if res_i is not None and np.isfinite(res_i.accuracy):
            accuracy = float(np.fmax(accuracy, res_i.accuracy))
        for k in range(spec.size):
            e = np.zeros(spec.size)
            e[k] = 1.0
            dargs = tuple(spec.vec_to_tangent(e) if j == i else zero[j]
                          for j in range(len(s.specs)))
            _, y_dot = run(dargs, f"the basis direction {spec.element_name(k)}", False)
            got_cols.append(_pushforward_vec(s, unthunk(y_dot), "the pushforward"))
            want_cols.append(_fd_along(s, i, e, step)[0])
            names.append(spec.element_name(k))
            columns.append((i, e, step))
    return _Jacobian(active, np.stack(got_cols, axis=1), np.stack(want_cols, axis=1), names,
                     accuracy, columns)


def _jacobian_problem(s: _Setup, jac: _Jacobian, fd_res: Any) -> str:
    """Compare the frule's Jacobian with finite differences norm-wise, like the
    reverse-mode element-wise check; '' when they agree."""
    assert s.out_spec is not None
    got, want = jac.got, jac.want
    err = float(np.linalg.norm(got - want))
    scale = max(float(np.linalg.norm(got)), float(np.linalg.norm(want)))
    tol = s.atol + s.rtol * scale
    accuracy = jac.accuracy if np.isfinite(jac.accuracy) else (
        fd_res.accuracy if fd_res is not None else float("nan"))
    tol += _fd_slack(accuracy * np.sqrt(got.size), scale)
    if np.all(np.isfinite(got)) and err <= tol:
        return ""
    col = int(np.argmax(np.linalg.norm(got - want, axis=0)))
    return (f"the Jacobian from the frule differs from finite differences by {err:.3g} "
            f"(tolerance {tol:.3g}); worst along {jac.names[col]}, output elements:\n"
            + _worst_lines(s.out_spec, got[:, col], want[:, col], k=3))


def _cancelled(s: _Setup, got: np.ndarray, want: np.ndarray, vs: list[np.ndarray],
               jac: _Jacobian | None, fd_res: Any) -> bool:
    """Whether a pushforward that disagrees with its finite difference along the random
    direction is nevertheless right: its terms nearly cancel (|y_dot| much smaller than
    |J|·|x_dot|), and the reference's error, which scales with the terms, exceeds the
    tolerance, which scales with their sum. Judged as the dot-product test judges a
    cancelled direction: the reference's estimated error may widen the tolerance by a
    fraction of the terms' size instead of the sum's. Only for small inputs, where the
    frule's Jacobian is known column by column: it must agree with finite differences,
    and the pushforward must be that Jacobian times x_dot (linear in the tangent)."""
    if jac is None or fd_res is None or _jacobian_problem(s, jac, fd_res):
        return False
    if any(np.any(vs[i]) for i in range(len(vs)) if i not in jac.active):
        return False  # moved arguments the columns do not cover
    v = np.concatenate([vs[i] for i in jac.active])
    terms = float(np.linalg.norm(np.abs(jac.got) @ np.abs(v)))
    if not (np.all(np.isfinite(got))
            and float(np.linalg.norm(got - jac.got @ v)) <= s.atol + s.rtol * terms):
        return False
    tol = _tol_vec(s, got, want) + _fd_slack(fd_res.accuracy * np.sqrt(got.size), terms)
    return float(np.linalg.norm(got - want)) <= tol


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


