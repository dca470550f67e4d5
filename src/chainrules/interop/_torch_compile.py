"""The compiled path of ``torch_function``: one opaque ``torch.library`` op per call site.

Under ``torch.compile`` and ``torch.export`` (``torch.compiler.is_compiling()``),
dynamo would otherwise trace the bridge's own Python (rule lookup, tree walking,
array-api-compat), and break the graph at each of them. Instead a bridged call
becomes one node of the graph: the custom op ``chainrules::call``, whose inputs are
the call's tensors and an integer that names the call's static part (the bridged
function, the non-tensor arguments, the keyword arguments: interned once, at trace
time, by `_intern`). Its fake implementation runs the function on fake tensors
(rules written against the array API run on any tensor), its autograd formula is a
second op, ``chainrules::pullback``, which runs the rrule and its pullback on the
real tensors. Neither is traced, so nothing in a rule can break a graph; the price
is that inductor does not fuse across them, and a pullback recomputes the rrule.

The eager path stays the ``autograd.Function`` of ``_torch_native`` (a custom op's
dispatch costs more per call; see ``benchmarks/bench_torch_bridge.py``).
"""

from __future__ import annotations

from typing import Any

from chainrules.core._errors import func_name

from . import _compat
from ._errors import NumPyOnlyRuleError, TangentConversionError, UnsupportedTransformError

# imported when a first function is bridged (this module is imported then, not before)
torch: Any = _compat.import_torch()

__all__ = ["compiled_call"]

# key -> (bridged, static args (None where a tensor goes), tensor slots, kwargs items)
_STATICS: list[tuple] = []
_KEYS: dict[tuple, int] = {}
# key -> its tag: the bridged function's name and the static part's text. The op carries
# both key and tag, so a graph run in a process whose keys mean other calls (a saved
# torch.export program loaded elsewhere) fails by name instead of calling the wrong rule.
_TAGS: list[str] = []
# key -> the output structure the fake implementation saw: "single", or a tuple/list/dict
# layout ("tuple", n) / ("list", n) / ("dict", keys)
_OUTS: dict[int, tuple] = {}


@torch.compiler.assume_constant_result
def _intern(bridged_id: int, statics: tuple, slots: tuple, kw_static: tuple) -> int:
    """The key of a call's static part (evaluated by dynamo at trace time: a constant)."""
    from ._torch import bridged_by_id

    static_key = (bridged_id, statics, slots, kw_static)
    try:
        return _KEYS[static_key]
    except KeyError:
        key = _KEYS[static_key] = len(_STATICS)
    except TypeError:  # an unhashable static argument: a key per trace
        key = len(_STATICS)
    bridged = bridged_by_id(bridged_id)
    _STATICS.append((bridged, statics, slots, kw_static))
    _TAGS.append(f"{func_name(bridged.f)}{statics!r}{slots!r}{kw_static!r}")
    return key


@torch.compiler.assume_constant_result
def _tag(key: int) -> str:
    return _TAGS[key]


def _statics(key: int, tag: str) -> tuple:
    """The static part of the call ``key``, checked against the tag the graph holds."""
    if not 0 <= key < len(_TAGS) or _TAGS[key] != tag:
        raise UnsupportedTransformError(
            "torch_function", tag.split("(", 1)[0], "running a compiled or exported graph in "
            "another process",
            f"its chainrules::call node ({tag}) was traced in another Python process, and a "
            f"bridged call's graph node refers to the process that traced it",
            "Trace (torch.compile / torch.export) and run in the same process, or run the "
            "bridged function eagerly")
    return _STATICS[key]


@torch.compiler.assume_constant_result
def _out_layout(key: int) -> tuple:
    return _OUTS[key]


def _rebuild_args(key: int, tag: str, tensors: list, fake: bool = False
                  ) -> tuple[Any, tuple, dict]:
    """The call's arguments, the op's tensors put back in their slots.

    A slot is ``("t", where)`` for a tensor and ``("f", where)`` for a Python float
    passed as a 0-d tensor (so that a hyperparameter that changes between calls, which
    dynamo then traces as a symbolic float, needs no constant); ``where`` is a position
    or a keyword. On fake tensors a float has no value: 1.0 stands in (output shapes do
    not depend on it).
    """
    bridged, statics, slots, kw_static = _statics(key, tag)
    args = list(statics)
    kwargs = dict(kw_static)
    for (kind, where), t in zip(slots, tensors):
        value = t if kind == "t" else (1.0 if fake else float(t.item()))
        if isinstance(where, int):
            args[where] = value
        else:
            kwargs[where] = value
    return bridged, tuple(args), kwargs


def _run(key: int, tag: str, tensors: list, fake: bool = False) -> list:
    """Run the call on (real or fake) tensors; its output tensors, none aliasing an input."""
    from ._torch_native import _NativeCall

    bridged, args, kwargs = _rebuild_args(key, tag, tensors, fake)
    call = _NativeCall(bridged, args, kwargs)
    try:
        flat = call.run(tuple(call.tensors))
    except NumPyOnlyRuleError as e:
        e.args = (f"{e} Under torch.compile a bridged function runs on tensors (fake ones "
                  f"while tracing), whatever its backend: a NumPy-only function cannot be "
                  f"compiled. Call it outside the compiled code, or through a function "
                  f"decorated with @torch.compiler.disable.",)
        raise
    y = call.y
    if isinstance(y, torch.Tensor):
        layout: tuple = ("single",)
    elif isinstance(y, (tuple, list)) and call.out_paths == [
            (("index", i),) for i in range(len(y))]:
        layout = (type(y).__name__, len(y))
    elif isinstance(y, dict) and call.out_paths == [(("key", k),) for k in y]:
        layout = ("dict", tuple(y))
    else:
        raise TangentConversionError(
            "torch_function", bridged.f, "output", 0, "", y, y,
            "under torch.compile a bridged function must return a tensor, or a flat tuple, "
            "list or dict of tensors")
    _OUTS[key] = layout
    return list(flat)


def _unaliased(outs: list, tensors: list) -> list:
    """``outs``, each cloned if it shares memory with an input or an earlier output.

    A custom op's outputs may not alias its inputs nor each other (``xp.positive(x)``
    returns ``x`` itself, ``xp.reshape`` a view).
    """
    seen = {t.untyped_storage().data_ptr() for t in tensors}
    result = []
    for t in outs:
        ptr = t.untyped_storage().data_ptr()
        if ptr in seen:
            t = t.clone()
            ptr = t.untyped_storage().data_ptr()
        seen.add(ptr)
        result.append(t)
    return result


@torch.library.custom_op("chainrules::call", mutates_args=(),
                         schema="(Tensor[] tensors, int key, str tag) -> Tensor[]")
def _call_op(tensors: list, key: int, tag: str) -> list:
    return _unaliased(_run(key, tag, tensors), tensors)


@_call_op.register_fake
def _call_fake(tensors: list, key: int, tag: str) -> list:
    # rules written against the array API run on fake tensors as on real ones; fake
    # tensors have no memory to compare, so every output is a fresh one
    return [t.clone() for t in _run(key, tag, tensors, fake=True)]


@torch.library.custom_op("chainrules::pullback", mutates_args=(),
                         schema="(Tensor[] tensors, Tensor[] grads, int key, str tag) "
                                "-> Tensor[]")
def _pullback_op(tensors: list, grads: list, key: int, tag: str) -> list:
    from ._torch_native import _NativeCall

    bridged, args, kwargs = _rebuild_args(key, tag, tensors)
    call = _NativeCall(bridged, args, kwargs)
    call.need_pullback = True  # run the rrule (its output structure and its pullback)
    call.run(tuple(call.tensors))
    needs = tuple(_is_float(t) for t in call.tensors)
    bars = iter(call.pull(tuple(call.tensors), tuple(grads), needs, reuse=True))
    # one entry per op input: the positional tensors (call.tensors, in order) get their
    # cotangents, keyword tensors and floats (never differentiated) zeros
    out = []
    for (kind, where), t in zip(_STATICS[key][2], tensors):
        b = next(bars) if kind == "t" and isinstance(where, int) else None
        out.append(torch.zeros_like(t) if b is None else b)
    return _unaliased(out, [*tensors, *grads])


@_pullback_op.register_fake
def _pullback_fake(tensors: list, grads: list, key: int, tag: str) -> list:
    return [torch.empty_like(t) for t in tensors]


def _is_float(t: Any) -> bool:
    return t.is_floating_point() or t.is_complex()


def _setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
    tensors, key, tag = inputs
    ctx.save_for_backward(*tensors)
    ctx.key, ctx.tag = key, tag


def _backward(ctx: Any, grads: list) -> tuple:
    tensors = list(ctx.saved_tensors)
    bars = _pullback_op(tensors, list(grads), ctx.key, ctx.tag)
    slots = _STATICS[ctx.key][2]
    return [b if kind == "t" and isinstance(where, int) and _is_float(t) else None
            for (kind, where), t, b in zip(slots, tensors, bars)], None, None


_call_op.register_autograd(_backward, setup_context=_setup_context)


def compiled_call(bridged: Any, args: tuple, kwargs: dict) -> Any:
    """A bridged call while dynamo traces: one ``chainrules::call`` node."""
    tensors = []
    slots = []
    statics = []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            tensors.append(a)
            slots.append(("t", i))
            statics.append(None)
        elif isinstance(a, float):
            tensors.append(torch.scalar_tensor(a, dtype=torch.float64))
            slots.append(("f", i))
            statics.append(None)
        else:
            statics.append(a)
    kw_static = []
    for name, v in kwargs.items():
        if isinstance(v, torch.Tensor):
            tensors.append(v)
            slots.append(("t", name))
        elif isinstance(v, float):
            tensors.append(torch.scalar_tensor(v, dtype=torch.float64))
            slots.append(("f", name))
        else:
            kw_static.append((name, v))
    key = _intern(bridged.op_id, tuple(statics), tuple(slots), tuple(kw_static))
    flat = _call_op(tensors, key, _tag(key))
    layout = _out_layout(key)
    if layout[0] == "single":
        return flat[0]
    if layout[0] == "tuple":
        return tuple(flat)
    if layout[0] == "list":
        return list(flat)
    return dict(zip(layout[1], flat))
