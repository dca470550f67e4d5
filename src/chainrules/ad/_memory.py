"""What the reverse trace keeps of a program's values (its peak memory).

A ``scalar_rule`` call is recorded on the tape as ``(part, args, y, parents)``, and its
partials run in the backward pass. Most partials read only some of those: ``tanh``'s
reads its output and not its argument, ``sin``'s its argument and not its output, and
``x ** p`` with a constant exponent reads ``x`` and ``p`` only. Kept on the tape, the
values they never read would stay alive until the backward pass reached the entry,
long after the program dropped them. `slim` replaces each unread array on the tape by
a stand-in of the same class, shape and dtype that holds no memory (a zero-strided
view of one zero), so that the code around the partials (types, shapes, projections)
sees what it saw before, and the array is freed when the program drops it.

Which values a partials function reads is read off its bytecode once per function
(`learn`): a parameter never loaded cannot be read. Anything else (a callable that is
not a plain function, ``*args``, ``locals()``) is taken to read everything.
"""

from __future__ import annotations

import dis
import types
from typing import Any

import numpy as np

__all__ = ["MIN_BYTES", "SLIM", "learn", "slim"]

# part -> what its partials read: a tuple of bools (one per argument, then one for the
# output), or _POW (x ** p: the output is read only for a traced exponent). Parts that
# read everything are not in it.
SLIM: dict = {}
_POW = "pow"
_KNOWN: set = set()  # the parts already looked at
MIN_BYTES = 1 << 16  # smaller arrays are not worth a stand-in (it costs a microsecond)
_LOADS = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_LOAD_FAST",
          "LOAD_DEREF", "LOAD_CLOSURE", "DELETE_FAST", "LOAD_CLASSDEREF")
_VARARGS = 0x04 | 0x08  # CO_VARARGS | CO_VARKEYWORDS
_INTROSPECTION = frozenset({"locals", "vars", "eval", "exec", "_getframe", "currentframe"})


def _pow_partials() -> set:
    """The partials functions of ``x ** p`` (NumPy's, the array API's, the operator's),
    which read the output only for the exponent's partial."""
    found = set()
    try:
        from chainrules.rules.array_api.elementwise import PARTIALS
        found.add(PARTIALS["pow"])
    except (ImportError, KeyError):  # pragma: no cover - the rule set is always there
        pass
    try:
        from chainrules.rules.stdlib.operator import pow_partials
        found.add(pow_partials)
    except ImportError:  # pragma: no cover
        pass
    return found


_POW_FNS: list = []


def _reads(part: Any) -> Any:
    """What ``part``'s function reads (see `SLIM`), or None when it may read anything."""
    fn = part.raw
    if not _POW_FNS:
        _POW_FNS.append(_pow_partials())
    if fn in _POW_FNS[0] and part.nargs == 2:
        return _POW
    if type(fn) is not types.FunctionType:
        return None
    code = fn.__code__
    if code.co_flags & _VARARGS or _INTROSPECTION & set(
            code.co_names):
        return None
    loaded: set = set(code.co_cellvars)  # captured by an inner function: may be read
    for ins in dis.get_instructions(code):
        if ins.opname in _LOADS:
            v = ins.argval
            loaded.update(v if isinstance(v, tuple) else (v,))
    reads = tuple(name in loaded for name in code.co_varnames[:part.nargs])
    if len(reads) != part.nargs:
        return None
    y_read = part.uses_output and "y" in loaded
    return (*reads, y_read)



def learn(part: Any) -> None:
    """Look at the partials ``part`` once: put it in `SLIM` if it skips a value."""
    if part in _KNOWN:
        return
    _KNOWN.add(part)
    reads = _reads(part)
    if reads is not None and (reads is _POW or not all(reads)):
        SLIM[part] = reads


def _stand_in(v: Any) -> Any:
    """``v`` itself, or for a large NumPy array a zero-strided read-only array of its
    shape and dtype holding one element."""
    if type(v) is not np.ndarray or v.nbytes < MIN_BYTES:
        return v
    return np.broadcast_to(np.zeros((), v.dtype), v.shape)


def slim(part: Any, args: tuple, y: Any, parents: list) -> tuple:
    """``(args, y)`` as the tape keeps them for a call of ``part``'s function (``part`` in
    `SLIM`): the values its partials never read replaced by stand-ins."""
    reads = SLIM[part]
    if reads is not _POW and len(reads) != len(args) + 1:
        return args, y  # (a call with other arguments than the partials': kept whole)
    if reads is _POW:
        # with a constant exponent only x and p are read (the exponent's partial, which
        # reads y, is not asked for)
        return args, (y if any(par[0] == 2 for par in parents) else _stand_in(y))
    return (tuple(a if r else _stand_in(a) for a, r in zip(args, reads)),
            y if reads[-1] else _stand_in(y))

