"""The testers on foreign arrays (JAX, PyTorch, array_api_strict): the NumPy machinery on
NumPy copies, the rule itself on the foreign arrays.

``test_rrule(f, x)`` with a foreign ``x`` runs the usual checks with a primal
``f_np(*np_args) = to_numpy(f(*to_xp(np_args)))`` for the finite differences, and an
``rrule_f`` that calls the real rule on foreign arrays (cotangents are converted NumPy ->
xp on the way in and xp -> NumPy on the way out). Then it checks that the rule traces:
under ``jax.jit`` for JAX arrays, under ``torch.func.vjp`` for tensors; when it does not,
the message names the line that stopped it.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from chainrules.core import (
    AbstractTangent,
    NoTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    array_namespace,
    frule,
    is_foreign_array,
    rrule,
    unthunk,
)
from chainrules.testing._pairs import PrimalAndTangent

_NOT_ARRAY = object()


def find_foreign(*values: Any) -> list:
    """The foreign arrays among ``values`` (nested in tuples, lists, dicts and pairs)."""
    found: list = []

    def walk(v: Any) -> None:
        if isinstance(v, PrimalAndTangent):
            walk(v.x)
            walk(v.x_dot)
        elif isinstance(v, Tangent):
            walk(v.backing)
        elif isinstance(v, (tuple, list)):
            for item in v:
                walk(item)
        elif isinstance(v, dict):
            for item in v.values():
                walk(item)
        elif is_foreign_array(v):
            found.append(v)

    for v in values:
        walk(v)
    return found


def to_numpy(v: Any) -> Any:
    """A foreign array (or a structure of them, or a tangent) as NumPy, copied."""
    if is_foreign_array(v):
        return _array_to_numpy(v)
    if isinstance(v, PrimalAndTangent):
        return PrimalAndTangent(to_numpy(v.x), to_numpy(v.x_dot))
    if isinstance(v, Thunk):
        return Thunk(lambda: to_numpy(unthunk(v)))
    if isinstance(v, Tangent):
        b = v.backing
        backing = {k: to_numpy(t) for k, t in b.items()} if isinstance(b, dict) else tuple(
            to_numpy(t) for t in b)
        return type(v).from_backing(backing)
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v)(*(to_numpy(item) for item in v))
    if isinstance(v, (tuple, list)):
        return type(v)(to_numpy(item) for item in v)
    return v


def _array_to_numpy(a: Any) -> np.ndarray:
    if type(a).__module__.startswith("torch"):
        return a.detach().cpu().resolve_conj().numpy().copy()
    try:
        return np.array(np.from_dlpack(a), copy=True)
    except (TypeError, RuntimeError, BufferError, AttributeError):
        return np.array(a, copy=True)


def to_xp(xp: Any, v: Any, like: Any) -> Any:
    """``v`` (NumPy, or a tangent holding NumPy) as ``xp`` arrays where ``like`` (the
    foreign original) holds a foreign array; everything else unchanged."""
    if isinstance(v, (ZeroTangent, NoTangent)) or like is _NOT_ARRAY:
        return v
    if isinstance(v, Thunk):
        return Thunk(lambda: to_xp(xp, unthunk(v), like))
    if isinstance(v, AbstractTangent) and not isinstance(v, Tangent):
        return v
    if is_foreign_array(like):
        if isinstance(v, Tangent):
            return v
        return xp.asarray(np.asarray(v))
    if isinstance(like, (tuple, list)):
        if isinstance(v, Tangent):
            b = v.backing
            if isinstance(b, dict):
                return type(v).from_backing({k: to_xp(xp, t, getattr(like, k, _NOT_ARRAY))
                                             for k, t in b.items()})
            return type(v).from_backing(tuple(to_xp(xp, t, lk) for t, lk in zip(b, like)))
        if isinstance(v, (tuple, list)):
            items = [to_xp(xp, t, lk) for t, lk in zip(v, like)]
            if hasattr(v, "_fields"):
                return type(v)(*items)
            return type(v)(items)
    return v


def _plain(item: Any) -> Any:
    return item.x if isinstance(item, PrimalAndTangent) else item


def run_on_numpy(tester: Callable[..., Any], mode: str, f: Any, args: tuple,
                 options: dict) -> Any:
    """Run ``tester`` (test_rrule or test_frule) on NumPy copies of foreign ``args``, with
    the rule running on the foreign arrays; then check that it traces."""
    from chainrules._naming import namespace_and_name

    originals = [_plain(a) for a in args]
    xp = array_namespace(*find_foreign(*args, options.get("output_tangent")))
    fkwargs = dict(options.get("fkwargs") or {})
    out_like: list = []

    def to_xp_args(np_args: tuple) -> list:
        return [to_xp(xp, a, like) for a, like in zip(np_args, originals)]

    def f_np(*np_args: Any, **kwargs: Any) -> Any:
        return to_numpy(f(*to_xp_args(np_args), **kwargs))

    ns, name = namespace_and_name(f)
    f_np.__module__ = ns
    f_np.__qualname__ = f_np.__name__ = name

    if mode == "rrule":
        rule = options.pop("rrule_f", rrule)

        def rrule_on_xp(config: Any, _f: Any, *np_args: Any, **kwargs: Any) -> Any:
            res = rule(config, f, *to_xp_args(np_args), **kwargs)
            if not isinstance(res, tuple) or len(res) != 2:
                return res
            y, pullback = res
            out_like.append(y)

            def pullback_on_xp(y_bar: Any) -> Any:
                bars = pullback(to_xp(xp, y_bar, y))
                return to_numpy(bars) if isinstance(bars, tuple) else bars

            pullback_on_xp.__qualname__ = getattr(pullback, "__qualname__", "pullback")
            return to_numpy(y), pullback_on_xp

        options["rrule_f"] = rrule_on_xp
    else:
        rule = options.pop("frule_f", frule)

        def frule_on_xp(config: Any, dargs: tuple, _f: Any, *np_args: Any,
                        **kwargs: Any) -> Any:
            xp_dargs = (dargs[0], *to_xp_args(dargs[1:]))
            res = rule(config, xp_dargs, f, *to_xp_args(np_args), **kwargs)
            if not isinstance(res, tuple) or len(res) != 2:
                return res
            return to_numpy(res[0]), to_numpy(res[1])

        options["frule_f"] = frule_on_xp
    if options.get("output_tangent") is not None:
        options["output_tangent"] = to_numpy(options["output_tangent"])
    report = tester(f_np, *(to_numpy(a) for a in args), **options)
    if rule is (rrule if mode == "rrule" else frule):
        check_traces(mode, f, originals, fkwargs, xp)
        report.checks.append(f"traces under {_tracer_name(xp)}")
    return report


def _tracer_name(xp: Any) -> str:
    name = getattr(xp, "__name__", "")
    if name.startswith("jax"):
        return "jax.jit"
    if "torch" in name:
        return "torch.func.vjp"
    return "no tracer (eager)"


def _leaves(v: Any) -> list:
    v = unthunk(v)
    if isinstance(v, Tangent):
        b = v.backing
        return [x for t in (b.values() if isinstance(b, dict) else b) for x in _leaves(t)]
    if isinstance(v, (tuple, list)):
        return [x for t in v for x in _leaves(t)]
    return [v] if is_foreign_array(v) else []


def check_traces(mode: str, f: Any, args: list, fkwargs: dict, xp: Any) -> None:
    """The rule (and its pullback) run on traced arrays: ``jax.jit`` for JAX, and
    ``torch.func.vjp`` for PyTorch; other namespaces have no tracer to try."""
    tracer = _tracer_name(xp)
    if tracer.startswith("no"):
        return
    # float arrays are traced; integer arrays (indices, repeats) stay concrete, as JAX
    # code keeps them static and torch.func.vjp takes only floating tensors
    positions = [i for i, a in enumerate(args) if is_foreign_array(a) and _inexact(xp, a)]
    if not positions:
        return

    def traced(*arrays: Any) -> list:
        full = list(args)
        for i, a in zip(positions, arrays):
            full[i] = a
        if mode == "rrule":
            y, pullback = rrule(f, *full, **fkwargs)
            return _leaves(y) + _leaves(pullback(_ones_like(xp, y)))
        dargs = (NoTangent(), *(xp.ones_like(a) if is_foreign_array(a) and _inexact(xp, a)
                                else NoTangent() for a in full))
        y, y_dot = frule(dargs, f, *full, **fkwargs)
        return _leaves(y) + _leaves(y_dot)

    arrays = [args[i] for i in positions]
    try:
        if tracer == "jax.jit":
            import jax

            jax.jit(traced)(*arrays)
        else:
            import torch

            torch.func.vjp(lambda *a: tuple(traced(*a)), *arrays)
    except Exception as e:
        raise AssertionError(
            f"{_name(f)}: the {mode} does not run on traced arrays under {tracer}: "
            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}\n"
            f"  stopped at {_culprit(e)}\n"
            "  Write the rule with xp = array_namespace(x) and xp.* calls only: no np.* on "
            "array values, no float(x), no `if` on an array (use xp.where).") from e


def _ones_like(xp: Any, y: Any) -> Any:
    if is_foreign_array(y):
        return xp.ones_like(y) if _inexact(xp, y) else ZeroTangent()
    if isinstance(y, tuple):
        items = tuple(_ones_like(xp, v) for v in y)
        return Tangent[type(y)](**dict(zip(cast(Any, y)._fields, items))) if hasattr(
            y, "_fields") else Tangent[tuple](*items)
    return ZeroTangent()


def _inexact(xp: Any, a: Any) -> bool:
    return xp.isdtype(a.dtype, ("real floating", "complex floating"))


def _name(f: Any) -> str:
    from chainrules._naming import qualified_name

    return qualified_name(f)


_LIBRARY_DIRS = tuple(
    os.sep + part + os.sep for part in ("jax", "jaxlib", "torch", "numpy", "array_api_compat"))


def _culprit(e: BaseException) -> str:
    """``file:line: code`` of the deepest frame outside the array libraries and the testers:
    the call that handed a traced array to NumPy (or asked for its value)."""
    frames = traceback.extract_tb(e.__traceback__)
    here = os.path.dirname(__file__)
    mine = [fr for fr in frames
            if not any(d in fr.filename for d in _LIBRARY_DIRS)
            and not fr.filename.startswith(here)]
    if not mine:
        return "(no frame outside the array libraries)"
    fr = mine[-1]
    return f"{fr.filename}:{fr.lineno}: {fr.line}"
