"""Finite differences that one case's frule and rrule tests share.

``check`` tests a case's frule and then its rrule at the same inputs (the same seed
draws the same inputs and tangents). Both compare the rule with finite differences
along the same directions, the Jacobian's columns most of all: about a third of the
main job. Inside `sharing`, `_fd_along` keeps what it computed for the inputs it was
last given, and a tester at equal inputs reuses it.

Equal means equal by value for arrays and Python scalars (dtype, shape, strides and
bytes), and the same object for everything else (``f``, a callable argument, a
dataclass): a reference is kept so that its ``id`` cannot be reused. Anything that is
not equal misses, and a miss computes the difference again, as without sharing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

_active: _Memo | None = None


class _Memo:
    def __init__(self) -> None:
        self.key: tuple | None = None
        self.kept: list = []  # objects whose ids are in the key
        self.entries: dict = {}


#: What the catalog's pytest tests (``check_case``) share: they run one at a time, a
#: case's frule test just before its rrule test.
between_tests = _Memo()


@contextlib.contextmanager
def sharing(memo: _Memo | None = None) -> Iterator[None]:
    """Inside the block, testers at equal inputs share their finite differences (kept
    in ``memo``, a new one by default)."""
    global _active
    outer, _active = _active, _Memo() if memo is None else memo
    try:
        yield
    finally:
        _active = outer


def forget() -> None:
    """Drop what is shared (a rule mutated the inputs its finite differences were at)."""
    if _active is not None:
        _active.key, _active.kept, _active.entries = None, [], {}


def entries_for(f: Any, primals: list, fkwargs: dict, method: Any) -> dict | None:
    """The memo's entries for these inputs (emptied when they differ from the last
    ones asked for); None outside `sharing`."""
    memo = _active
    if memo is None:
        return None
    kept: list = []
    try:
        key = (_fingerprint(f, kept), tuple(_fingerprint(x, kept) for x in primals),
               tuple(sorted((k, _fingerprint(v, kept)) for k, v in fkwargs.items())),
               method)
        hash(key)
    except TypeError:  # an unhashable method or keyword: no sharing
        return None
    if key != memo.key:
        memo.key, memo.kept, memo.entries = key, kept, {}
    return memo.entries


def _fingerprint(x: Any, kept: list, depth: int = 0) -> tuple:
    """What tells ``x`` apart: its value for arrays, scalars, tuples and lists, else its
    identity (``x`` is then kept)."""
    t = type(x)
    items: Any = x
    if t is np.ndarray and x.dtype != object:
        return ("a", x.dtype.str, x.shape, x.strides, x.tobytes())
    if isinstance(x, np.generic) and t is not np.object_:
        return ("g", x.dtype.str, x.tobytes())
    if t in (float, int, complex, bool, str, bytes) or x is None:
        return (t.__name__, repr(x))  # repr tells -0.0 from 0.0
    if t in (tuple, list) and depth < 8:
        return (t.__name__, tuple(_fingerprint(e, kept, depth + 1) for e in items))
    kept.append(x)
    return ("id", id(x))
