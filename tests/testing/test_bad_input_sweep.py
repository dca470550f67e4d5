"""Every catalog rule refuses tangents and cotangents that cannot belong to its primal.

For each catalog case (float64, its first variant) the pullback gets a cotangent of the
wrong shape, a ``Tangent`` with a field the output lacks, and ``None``; the pushforward
gets the same three as the tangent of its first differentiable argument. Each must
raise a named :class:`ChainRulesError` (the check at the ``rrule``/``frule`` boundary),
never return a value or fail with a raw NumPy error.
"""

from __future__ import annotations

import numpy as np
import pytest

from chainrules import ChainRulesError, NoTangent, Tangent, ZeroTangent, frule, rrule
from chainrules.testing import ADviaRuleConfig, case_id, iter_catalog, rand_tangent
from chainrules.testing._pairs import PrimalAndTangent

CASES = [c for c in iter_catalog() if "float64" in c.dtypes and c.skip is None]
CONFIG = ADviaRuleConfig()


def _wrong_shape(x):
    """A tangent of the wrong shape (or length) for ``x``."""
    if isinstance(x, (tuple, list)):
        return tuple(rand_tangent(v, 0) for v in x) + (1.0,)
    shape = getattr(x, "shape", None)
    if isinstance(shape, tuple):
        return np.ones((*shape, 2))
    return np.ones(3)


BAD = {
    "wrong shape": _wrong_shape,
    "bogus field": lambda x: Tangent(bogus=5.0),
    "None": lambda x: None,
}


def _differentiable(x):
    t = rand_tangent(x, 0)
    return not isinstance(t, (NoTangent, ZeroTangent))


def _primals(case):
    rng = np.random.default_rng(0)
    args = tuple(case.args(rng, np.dtype("float64")))
    return [a.x if isinstance(a, PrimalAndTangent) else a for a in args]


def _outcome(call):
    """"named" (a ChainRulesError), "raw" (another exception) or "silent" (a value)."""
    try:
        call()
    except ChainRulesError:
        return "named", None
    except Exception as e:  # the sweep classifies whatever a rule raises
        return "raw", f"{type(e).__name__}: {e}"
    return "silent", None


def sweep(cases=CASES):
    """Outcomes ``{(case id, what): (kind, detail)}`` of every bad tangent fed to every
    case; cases whose output or arguments take no tangent are left out."""
    out = {}
    for case in cases:
        primals = _primals(case)
        kwargs = dict(case.kwargs)
        if case.rrule:
            res = rrule(CONFIG, case.f, *primals, **kwargs)
            if res is not None and _differentiable(res[0]):
                y, pullback = res
                for what, make in BAD.items():
                    bad = make(y)
                    out[case_id(case, "float64", "rrule"), what] = _outcome(
                        lambda pb=pullback, b=bad: pb(b))
        if case.frule:
            dargs = [NoTangent()] + [rand_tangent(x, 0) for x in primals]
            where = next((i for i, x in enumerate(primals) if _differentiable(x)), None)
            if where is None:
                continue
            for what, make in BAD.items():
                d = list(dargs)
                d[where + 1] = make(primals[where])
                out[case_id(case, "float64", "frule"), what] = _outcome(
                    lambda d=tuple(d), f=case.f, p=primals, k=kwargs: frule(CONFIG, d, f, *p,
                                                                            **k))
    return out


@pytest.fixture(scope="module")
def outcomes():
    return sweep()


def test_sweep_covers_the_catalog(outcomes):
    assert len({k[0] for k in outcomes}) > 200


@pytest.mark.parametrize("kind", ["silent", "raw"])
def test_no_bad_tangent_is_taken_silently_or_fails_raw(outcomes, kind):
    bad = sorted(f"{cid} [{what}]: {detail or ''}"[:200]
                 for (cid, what), (k, detail) in outcomes.items() if k == kind)
    assert not bad, f"{len(bad)} {kind} outcome(s):\n" + "\n".join(bad)


if __name__ == "__main__":  # counts, for comparing two versions of the library
    import collections
    import signal
    import sys
    import warnings

    class _HangError(Exception):
        pass

    def _alarm(*_):
        raise _HangError

    signal.signal(signal.SIGALRM, _alarm)
    plain = _outcome

    def _outcome(call):  # a time limit per call, for old versions that hang
        signal.alarm(5)
        try:
            return plain(call)
        except _HangError:
            return "hang", None
        finally:
            signal.alarm(0)

    warnings.simplefilter("ignore")
    found = sweep()
    print(dict(collections.Counter(k for k, _ in found.values())))
    if "-v" in sys.argv:
        for (cid, what), (k, detail) in sorted(found.items()):
            if k != "named":
                print(k, cid, what, (detail or "")[:160])
