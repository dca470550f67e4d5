"""Importing the frameworks, and every version-dependent detail of their APIs.

The bridges import JAX, PyTorch and autograd only through these functions, so
that ``import chainrules.interop.jax`` works without JAX installed (the error
comes at first use and says which extra to install), and so that a change of a
framework's API is absorbed here and nowhere else. Only public APIs are used.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ._errors import FrameworkNotInstalledError

__all__ = [
    "import_autograd",
    "import_jax",
    "import_torch",
    "is_jax_tracer",
    "jax_float0",
    "jax_symbolic_zero_type",
]

_cache: dict[str, ModuleType] = {}


def _import(module: str, extra: str) -> ModuleType:
    try:
        return _cache[module]
    except KeyError:
        pass
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        raise FrameworkNotInstalledError(module.split(".")[0], extra, e) from e
    _cache[module] = mod
    return mod


def import_jax() -> ModuleType:
    """``jax``, imported on first use; `FrameworkNotInstalledError` if missing."""
    jax = _import("jax", "jax")
    _import("jax.numpy", "jax")
    _import("jax.custom_derivatives", "jax")
    return jax


def import_torch() -> ModuleType:
    """``torch``, imported on first use; `FrameworkNotInstalledError` if missing."""
    torch = _import("torch", "torch")
    _import("torch.func", "torch")
    _import("torch.autograd.forward_ad", "torch")
    return torch


def import_autograd() -> ModuleType:
    """``autograd``, imported on first use; `FrameworkNotInstalledError` if missing."""
    autograd = _import("autograd", "autograd")
    _import("autograd.extend", "autograd")
    return autograd


def is_jax_tracer(x: Any) -> bool:
    """Whether ``x`` is an abstract JAX value (under jit, vmap, grad...), not a concrete array."""
    jax = import_jax()
    # jax.core.Tracer is the public name of the tracer base class (jax >= 0.4);
    # concrete arrays are jax.Array but not Tracer.
    return isinstance(x, jax.core.Tracer)


def jax_is_batched(x: Any) -> bool:
    """Whether ``x`` is a value being batched by ``jax.vmap`` (a tracer of its batching trace)."""
    jax = import_jax()
    # JAX exports no public name for the batching tracer; its class name is stable
    # since jax 0.2 and this is the one place that relies on it.
    return isinstance(x, jax.core.Tracer) and type(x).__name__ == "BatchTracer"


def jax_float0() -> Any:
    """The dtype JAX uses for the cotangent of an integer input."""
    jax = import_jax()
    return jax.dtypes.float0


def jax_symbolic_zero_type() -> type:
    """The type of the symbolic-zero tangents JAX passes to ``symbolic_zeros=True`` rules."""
    import_jax()
    return _cache["jax.custom_derivatives"].SymbolicZero


def jax_custom_vjp_primal_type() -> type:
    """The type wrapping each primal passed to a ``symbolic_zeros=True`` custom_vjp fwd."""
    import_jax()
    return _cache["jax.custom_derivatives"].CustomVJPPrimal


def jax_linear_call() -> Any:
    """``jax.custom_derivatives.linear_call``: a linear function with a custom transpose."""
    import_jax()
    return _cache["jax.custom_derivatives"].linear_call


def jax_closure_convert(fun: Any, *examples: Any) -> tuple[Any, list]:
    """``jax.closure_convert`` that hoists every array ``fun`` captured, integer ones too.

    ``jax.closure_convert`` keeps integer arrays inside the converted function; made
    inside ``jax.jit`` and returned from it, that function would hold tracers of a
    finished trace. ``fun`` returns a tuple of arrays.
    """
    jax = import_jax()
    core = _import("jax.extend.core", "jax")
    closed = jax.make_jaxpr(fun)(*examples)
    jaxpr, n = closed.jaxpr, len(examples)

    def converted(*args_and_consts: Any) -> tuple:
        run = core.jaxpr_as_fun(core.ClosedJaxpr(jaxpr, list(args_and_consts[n:])))
        return tuple(run(*args_and_consts[:n]))

    return converted, list(closed.consts)


def jax_x64() -> Any:
    """A context manager under which JAX computes in 64-bit floats (``jax.enable_x64(True)``)."""
    return import_jax().enable_x64(True)


def jax_key_step(key: Any) -> tuple:
    """A JAX key-path entry as one of our path steps (see ``_tree``)."""
    tu = import_jax().tree_util
    if isinstance(key, tu.SequenceKey):
        return ("index", key.idx)
    if isinstance(key, tu.DictKey):
        return ("key", key.key)
    if isinstance(key, tu.GetAttrKey):
        return ("attr", key.name)
    # FlattenedIndexKey: a pytree node registered without keys; its children have no
    # names we could look up in a Tangent.
    return ("flat", getattr(key, "key", key))


# --- PyTorch: the native path of torch_function (_torch_native.py) ---------------------


def torch_transforms_active() -> bool:
    """Whether a ``torch.func`` transform (grad, vjp, jvp, vmap...) is running around us.

    Under one, a custom ``autograd.Function``'s backward may be differentiated again by
    the transforms above it, even with grad mode off. PyTorch has no public query for
    this; the private one is used when present, else we assume a transform is active
    (the safe answer: it only costs recomputing a rule).
    """
    global _transforms_query
    if _transforms_query is None:
        query = getattr(import_torch()._C, "_are_functorch_transforms_active", None)
        _transforms_query = (lambda: True) if query is None else query
    return bool(_transforms_query())


_transforms_query: Any = None


def torch_c_apply(cls: type) -> Any:
    """``cls.apply`` without its per-call Python binding: for calls outside transforms.

    ``autograd.Function.apply`` binds its arguments to ``forward``'s signature with
    ``inspect`` on every call (for ``setup_context`` Functions), about as costly as a
    small function itself; outside ``torch.func`` transforms it then calls the C
    ``_FunctionBase.apply``. For a ``forward`` without defaults or keyword arguments the
    binding changes nothing, so the C one can be called directly when no transform is
    active (the caller checks); ``cls.apply`` is returned where that base is missing.
    The one step skipped, unwrapping dead ``torch.func`` wrappers, concerns tensors that
    escaped a finished transform.
    """
    base = getattr(import_torch()._C, "_FunctionBase", None)
    c_apply = getattr(base, "__dict__", {}).get("apply")
    if c_apply is None or not hasattr(c_apply, "__get__"):
        return cls.apply
    return c_apply.__get__(None, cls)


def torch_has_dual(tensors: Any) -> bool:
    """Whether any tensor carries a forward-mode tangent (``torch.autograd.forward_ad``)."""
    fwad = import_torch().autograd.forward_ad
    # outside every dual_level() no tensor can carry one (private, hence the fallback)
    if getattr(fwad, "_current_level", 0) < 0:
        return False
    return any(fwad.unpack_dual(t).tangent is not None for t in tensors)
