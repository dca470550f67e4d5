"""The compiled path of ``torch_function``: the rule's maths traced into the graph.

Under ``torch.compile`` and ``torch.export`` (``torch.compiler.is_compiling()``),
dynamo would otherwise trace the bridge's own Python (rule lookup, tree walking,
array-api-compat) and break the graph at each of them. Instead a bridged call becomes
one call of `_traced_call`, which dynamo puts in its graph unevaluated
(``torch._dynamo.allow_in_graph``); its inputs are the call's tensors and floats and
an integer that names the call's static part (the bridged function, the other
arguments, the keyword arguments: interned once, at trace time, by `_intern`).
AOTAutograd then runs `_traced_call` on its own tracing tensors, outside dynamo's
bytecode rules: the native path's ``autograd.Function`` runs the rrule in forward and
its pullback in backward, so the forward graph holds the primal's aten operations and
the backward graph the pullback's (never torch's derivative of the primal), and
inductor fuses them with the model's own operations. ``torch.export`` records the same
aten operations, so an exported program needs nothing of this process.

Where the rule cannot be traced (it reads values: ``float(x)``, ``.item()``, Python
branches on data, NumPy) the call falls back to one opaque ``torch.library`` op,
``chainrules::call``, whose fake implementation runs the function on fake tensors and
whose autograd formula, a second op ``chainrules::pullback``, runs the rrule and its
pullback on real tensors. Inductor does not fuse across it, and its backward recomputes
the rrule. The choice is made once per call and input signature, by a dry run of the
rrule and its pullback on meta tensors (`_traceable`).

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


def _place(key: int, tag: str, values: Any) -> tuple[Any, tuple, dict]:
    """The call's arguments: ``values`` (one per slot, in order) put back in their slots."""
    bridged, statics, slots, kw_static = _statics(key, tag)
    args = list(statics)
    kwargs = dict(kw_static)
    for (_, where), value in zip(slots, values):
        if isinstance(where, int):
            args[where] = value
        else:
            kwargs[where] = value
    return bridged, tuple(args), kwargs


def _rebuild_args(key: int, tag: str, tensors: list, fake: bool = False
                  ) -> tuple[Any, tuple, dict]:
    """The call's arguments from the opaque op's tensors.

    A slot is ``("t", where)`` for a tensor and ``("f", where)`` for a Python float
    passed to the op as a 0-d tensor (so that a hyperparameter that changes between
    calls, which dynamo then traces as a symbolic float, needs no constant); ``where``
    is a position or a keyword. On fake tensors a float has no value: 1.0 stands in
    (output shapes do not depend on it).
    """
    slots = _statics(key, tag)[2]
    values = [t if kind == "t" else (1.0 if fake else float(t.item()))
              for (kind, _), t in zip(slots, tensors)]
    return _place(key, tag, values)


def _layout(bridged: Any, call: Any) -> tuple:
    """The output structure of a call: ``("single",)``, ``("tuple", n)``, ``("list", n)``
    or ``("dict", keys)``."""
    y = call.y
    if isinstance(y, torch.Tensor):
        return ("single",)
    if isinstance(y, (tuple, list)) and call.out_paths == [
            (("index", i),) for i in range(len(y))]:
        return (type(y).__name__, len(y))
    if isinstance(y, dict) and call.out_paths == [(("key", k),) for k in y]:
        return ("dict", tuple(y))
    raise TangentConversionError(
        "torch_function", bridged.f, "output", 0, "", y, y,
        "under torch.compile a bridged function must return a tensor, or a flat tuple, "
        "list or dict of tensors")


def _compile_numpy_error(e: NumPyOnlyRuleError) -> NumPyOnlyRuleError:
    e.args = (f"{e} Under torch.compile a bridged function runs on tensors (fake ones "
              f"while tracing), whatever its backend: a NumPy-only function cannot be "
              f"compiled. Call it outside the compiled code, or through a function "
              f"decorated with @torch.compiler.disable.",)
    return e


def _run(key: int, tag: str, tensors: list, fake: bool = False) -> list:
    """Run the call on (real or fake) tensors; its output tensors, none aliasing an input."""
    from ._torch_native import _NativeCall

    bridged, args, kwargs = _rebuild_args(key, tag, tensors, fake)
    call = _NativeCall(bridged, args, kwargs)
    try:
        flat = call.run(tuple(call.tensors))
    except NumPyOnlyRuleError as e:
        raise _compile_numpy_error(e) from e.__cause__
    _OUTS[key] = _layout(bridged, call)
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


# (key, the tensors' shapes and dtypes, the other values' types) -> whether the rrule
# and its pullback can be traced
_TRACEABLE: dict[tuple, bool] = {}


def _hint(size: Any) -> int:
    """A size, or a symbolic size's example value."""
    if isinstance(size, int):
        return size
    shapes = torch.fx.experimental.symbolic_shapes
    # optimization_hint adds no guard (torch 2.13); hint_int is its older name
    for name in ("optimization_hint", "hint_int"):
        hint = getattr(shapes, name, None)
        if hint is not None:
            return int(hint(size, fallback=2))
    return 2


def _traceable(key: int, tag: str, values: tuple) -> bool:
    """Whether the call's rules run on tensors whose values are unknown.

    Decided once per call and input signature, by running the function, its rrule and
    the pullback (on ones) on meta tensors, with the tracing modes set aside so that
    none of it enters the graph (and without changing grad mode, which ``torch.export``
    would record). A rule that reads values (``float(x)``, ``.item()``, a Python branch
    on data) or calls NumPy fails there, and its call then takes the opaque op, which
    runs the rules on real tensors.
    """
    from ._torch_native import _NativeCall

    shapes = tuple((tuple(_hint(s) for s in v.shape), v.dtype)
                   if isinstance(v, torch.Tensor) else (None, type(v)) for v in values)
    signature = (key, shapes)
    hit = _TRACEABLE.get(signature)
    if hit is not None:
        return hit
    # the tracing modes (fake, functional, proxy) set aside: the dry run is not traced
    with torch.utils._python_dispatch._disable_current_modes():
        meta = [torch.empty(shape, dtype=dtype, device="meta") if shape is not None else v
                for v, (shape, dtype) in zip(values, shapes)]
        call = _NativeCall(*_place(key, tag, meta))
        call.need_pullback = True
        try:
            outs = call.run(tuple(call.tensors))
            call.pull(tuple(call.tensors),
                      tuple(torch.ones_like(o) if _is_float(o) else None for o in outs),
                      tuple(_is_float(t) for t in call.tensors), reuse=True)
        except Exception:  # any failure: the opaque op raises the real one, if it is real
            ok = False
        else:
            ok = True
    _TRACEABLE[signature] = ok
    if len(_TRACEABLE) > 4096:  # bounded: a new signature per call must not grow it
        _TRACEABLE.clear()
    return ok


@torch._dynamo.allow_in_graph
def _traced_call(key: int, tag: str, *values: Any) -> tuple:
    """A bridged call as AOTAutograd traces it: the rule's own torch operations.

    Dynamo records this call unevaluated; AOTAutograd (and ``torch.export``) run it on
    their tracing tensors, through the native path's ``autograd.Function``, so the
    function (or its rrule) lands in the forward graph and the pullback in the backward
    graph. ``values`` are the slots' tensors and floats (Python or symbolic floats).
    """
    from ._torch_native import _NativeCall, native_flat

    if not _traceable(key, tag, values):
        tensors = [v if isinstance(v, torch.Tensor)
                   else torch.scalar_tensor(v, dtype=torch.float64) for v in values]
        return tuple(_call_op(tensors, key, tag))
    bridged, args, kwargs = _place(key, tag, values)
    call = _NativeCall(bridged, args, kwargs)
    try:
        flat = native_flat(call)
    except NumPyOnlyRuleError as e:
        raise _compile_numpy_error(e) from e.__cause__
    _OUTS[key] = _layout(bridged, call)
    return tuple(flat)


def compiled_call(bridged: Any, args: tuple, kwargs: dict) -> Any:
    """A bridged call while dynamo traces: one `_traced_call` node of the graph."""
    values = []
    slots = []
    statics = []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            values.append(a)
            slots.append(("t", i))
            statics.append(None)
        elif isinstance(a, float):
            values.append(a)
            slots.append(("f", i))
            statics.append(None)
        else:
            statics.append(a)
    kw_static = []
    for name, v in kwargs.items():
        if isinstance(v, torch.Tensor):
            values.append(v)
            slots.append(("t", name))
        elif isinstance(v, float):
            values.append(v)
            slots.append(("f", name))
        else:
            kw_static.append((name, v))
    key = _intern(bridged.op_id, tuple(statics), tuple(slots), tuple(kw_static))
    flat = _traced_call(key, _tag(key), *values)
    layout = _out_layout(key)
    if layout[0] == "single":
        return flat[0]
    if layout[0] == "tuple":
        return tuple(flat)
    if layout[0] == "list":
        return list(flat)
    return dict(zip(layout[1], flat))
