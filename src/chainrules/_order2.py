"""Second-order check of a catalog case: ``python -m chainrules check --order 2``.

Every rule's own code must be differentiable again (a Hessian runs the pullback on
traced values). For one catalog case this scalarises the function with fixed random
weights, ``L(x) = sum_k <w_k, Re y_k>``, and compares a Hessian-vector product computed
by ``chainrules.ad`` (forward over reverse) with central finite differences of the
first derivative along the same direction. Only float64 real inputs are varied.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from chainrules.testing import Case, CaseResult

__all__ = ["check_second_order"]

# Central differences of the gradient, step h: truncation O(h^2), round-off O(eps / h).
_STEP = 1e-4
_RTOL = 1e-4


def _is_real_input(x: Any) -> bool:
    if type(x) is float or isinstance(x, np.floating):
        return True
    return isinstance(x, np.ndarray) and x.dtype == np.float64 and x.size > 0


def _leaves(y: Any) -> list:
    """The float/complex array leaves of an output (tuples, lists, named tuples)."""
    if isinstance(y, (tuple, list)):
        return [leaf for v in y for leaf in _leaves(v)]
    if isinstance(y, (float, complex, np.floating, np.complexfloating)):
        return [y]
    if isinstance(y, np.ndarray) and y.dtype.kind in "fc":
        return [y]
    return []


def check_second_order(case: Case, seed: int = 0) -> CaseResult:
    """Check the Hessian-vector product of one case (float64) against finite differences
    of its gradient.

    Returns a `CaseResult` whose status is ``"passed"``, ``"failed"`` (a wrong value: the
    message shows both), ``"error"`` (the AD raised, e.g. a rule that is not twice
    differentiable), ``"xfail"`` (a derivative marked not implemented, or the case is an
    expected failure) or ``"skipped"`` (no float64 run, no rrule, no real input).

    >>> import numpy as np
    >>> from chainrules.testing import Case, arr
    >>> check_second_order(Case(np.sin, lambda rng, dt: (arr(rng, dt, (3,)),))).status
    'passed'
    """
    # (warnings at points near a domain edge are expected; the values are compared)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return _check(case, seed)


def _check(case: Case, seed: int) -> CaseResult:
    from chainrules.ad import grad, jvp
    from chainrules.core import NoTangent, NotImplementedDerivativeError
    from chainrules.testing import PrimalAndTangent

    start = time.perf_counter()

    def result(status: str, message: str = "") -> CaseResult:
        return CaseResult(status, message, 0, time.perf_counter() - start)

    if "float64" not in case.dtypes or not case.rrule:
        return result("skipped", "no float64 rrule run")
    if case.skip is not None:
        return result("skipped", case.skip)
    rng = np.random.default_rng(seed)
    try:
        raw = tuple(case.args(rng, np.dtype("float64")))
    except Exception as e:  # a case whose inputs cannot be built here
        return result("skipped", f"inputs: {type(e).__name__}: {e}")
    args = []
    fixed = set()
    for i, a in enumerate(raw):
        if isinstance(a, PrimalAndTangent):
            if isinstance(a.x_dot, NoTangent):
                fixed.add(i)  # the case holds it constant (an index, a domain edge)
            a = a.x
        args.append(a)
    positions = [i for i, a in enumerate(args) if i not in fixed and _is_real_input(a)]
    if not positions:
        return result("skipped", "no real float64 input")
    kwargs = dict(case.kwargs)
    try:
        y0 = case.f(*args, **kwargs)
    except Exception as e:
        return result("skipped", f"primal: {type(e).__name__}: {e}")
    weights = [rng.standard_normal(np.shape(leaf)) for leaf in _leaves(y0)]
    if not weights:
        return result("skipped", "no float or complex output")

    def scalar(*xs: Any) -> Any:
        full = list(args)
        for i, x in zip(positions, xs):
            full[i] = x
        total = 0.0
        for leaf, w in zip(_leaves(case.f(*full, **kwargs)), weights):
            total = total + np.sum(np.real(leaf) * w)
        return total

    argnums = tuple(range(len(positions)))
    xs = tuple(args[i] for i in positions)
    vs = tuple(_direction(rng, x) for x in xs)
    gradient = grad(scalar, argnums=argnums)
    try:
        hvp = jvp(lambda *p: gradient(*p), xs, vs)[1]
        plus = gradient(*(x + _STEP * v for x, v in zip(xs, vs)))
        minus = gradient(*(x - _STEP * v for x, v in zip(xs, vs)))
    except NotImplementedDerivativeError as e:
        return result("xfail", str(e))
    except Exception as e:
        status = "xfail" if case.xfail else "error"
        return result(status, f"{type(e).__name__}: {e}")
    lines = []
    for k, (h, p, m) in enumerate(zip(hvp, plus, minus)):
        fd = (np.asarray(p, dtype=float) - np.asarray(m, dtype=float)) / (2 * _STEP)
        got = np.asarray(h, dtype=float)
        if not np.all(np.isfinite(fd)):
            # a step left the function's domain (a negative base, a pole): no reference
            return result("skipped", f"argument {positions[k]}: finite differences of the "
                                     f"gradient are not finite here")
        scale = max(1.0, float(np.max(np.abs(fd), initial=0.0)))
        if got.shape != fd.shape or not np.allclose(got, fd, rtol=_RTOL, atol=_RTOL * scale):
            lines.append(f"argument {positions[k]}: Hessian-vector product {got!r}, "
                         f"finite differences of the gradient {fd!r}")
    if lines:
        return result("xfail" if case.xfail else "failed", "\n".join(lines))
    return result("passed")


def _direction(rng: np.random.Generator, x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return rng.standard_normal(x.shape)
    return float(rng.standard_normal())
