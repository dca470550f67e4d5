"""Setting up the reference AD's optional C fast paths (``_tape.c``): handing them the
classes and functions of reverse and forward mode they work with, then switching them
on. ``chainrules.ad`` does it once, after importing both modes; a layout the C code
cannot read leaves the fast paths off with a warning, and the Python code runs alone."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from chainrules.core import namespace_of
from chainrules.core._helpers import _ERRSTATE, _IGNORE_ALL, _Partials

from . import _forward, _memory, _native
from ._dispatch import _NumpyFunctionType
from ._reverse import (
    _INDEX,
    _INPUT,
    ReverseTrace,
    _accumulate,
    _fast_fill,
    _fast_get,
    _index_backward,
    _Leaf,
    _project_plain,
)
from ._tracer import _INPLACE_FUNCS, Tracer, _boxable


def configure_native() -> None:
    """Hand the C fast paths the classes and functions they work with, and switch them
    on (nothing where the extension is not built)."""
    tape = _native.TAPE
    if tape is None:
        return
    try:
        _configure_tape(tape)
    except Exception as e:  # a class laid out otherwise than the C code expects
        # the C entry points stay off (they pass every call to the Python code)
        warnings.warn(f"chainrules.ad: the optional C fast path could not be set up ({e}); "
                      "the Python code runs alone, with the same results", RuntimeWarning,
                      stacklevel=2)
        return
    _native.ON[0] = True


def _configure_tape(tape: Any) -> None:
    tape.configure(
        tracer=Tracer, reverse_trace=ReverseTrace, ndarray=np.ndarray, partials=_Partials,
        leaf=_Leaf, ufunc=np.ufunc, npfunc=_NumpyFunctionType,
        fast_cache=_fast_get.__self__, fill=_fast_fill, boxable=_boxable,  # type: ignore[attr-defined]
        inplace_ids=_INPLACE_FUNCS, project_plain=_project_plain, accumulate=_accumulate,
        namespace_of=namespace_of, numpy=np, complexfloating=np.complexfloating,
        errstate_var=_ERRSTATE, ignore_all=_IGNORE_ALL, index_backward=_index_backward,
        index_fact=_INDEX,
        # cotangents `_step` hands to `_scalar_backward` unchanged (not tangent types)
        plain_numbers=(complex, np.float64, np.float32, np.float16, np.longdouble,
                       np.complex128, np.complex64, np.clongdouble),
        input_entry=_INPUT)
    tape.configure_forward(forward_trace=_forward.ForwardTrace,
                           fast_cache=_forward._fast_get.__self__,  # type: ignore[attr-defined]
                           fill=_forward._fast_fill)
    if hasattr(tape, "set_slim"):  # (an extension built before it had none)
        tape.set_slim(_memory.SLIM, _memory.slim, _memory.MIN_BYTES)
