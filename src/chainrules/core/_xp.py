"""Array namespaces: one rule, written against the array API standard, for every array type.

Julia's rules are written against ``AbstractArray`` and so serve CPU arrays, GPU arrays
and every AD. The Python counterpart is the array API standard: a rule asks for the
namespace of its arguments, ``xp = array_namespace(x)``, and writes ``xp.exp(x)``.

Which namespace:

- NumPy arrays, NumPy scalars and Python numbers: ``numpy`` itself on NumPy >= 2 (it
  implements the standard; ``array_api_compat.numpy`` would add about 0.27 s to the
  first import, measured with ``python -X importtime``, and a wrapper layer to every
  call), ``array_api_compat.numpy`` on older NumPy.
- JAX arrays and tracers: ``jax.numpy``; PyTorch tensors (also ``torch.func``'s wrapped
  tensors): ``array_api_compat.torch``; ``array_api_strict`` arrays: ``array_api_strict``;
  anything else with ``__array_namespace__``: what it says. array-api-compat decides.

"Foreign" arrays are the non-NumPy ones: the core never calls ``np.asarray`` on them.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import array_api_compat
import numpy as np

__all__ = ["array_namespace", "is_foreign_array", "is_foreign_type", "is_lazy_array",
           "namespace_counterpart"]

_NUMPY2 = int(np.__version__.split(".")[0]) >= 2
_numpy_namespace: Any = np if _NUMPY2 else None

_NOT_FOREIGN = (np.ndarray, float, int, complex, bool, np.generic)


def _numpy_xp() -> Any:
    global _numpy_namespace
    if _numpy_namespace is None:
        import array_api_compat.numpy as compat_numpy

        _numpy_namespace = compat_numpy
    return _numpy_namespace


def is_foreign_type(t: type) -> bool:
    """Whether instances of class ``t`` are arrays of another library than NumPy.

    By the class alone (``isinstance`` can be answered by an object's ``__class__``,
    which the AD's tracers set): classes with ``__array_namespace__``, PyTorch tensors
    and dask arrays (which have no ``__array_namespace__``; array-api-compat knows
    them). Neither library is imported to answer.

    Examples:
        >>> import numpy as np
        >>> from chainrules.core import is_foreign_type
        >>> is_foreign_type(np.ndarray), is_foreign_type(float)
        (False, False)
    """
    if issubclass(t, _NOT_FOREIGN) or issubclass(t, type):
        return False
    if hasattr(t, "__array_namespace__"):
        return True
    for module, name in _NAMESPACELESS:
        lib = sys.modules.get(module)
        if lib is not None and issubclass(t, getattr(lib, name)):
            return True
    return False


def is_lazy_array(x: Any) -> bool:
    """Whether ``x`` is a lazy array (a dask array: a task graph, possibly larger than
    memory, that NumPy code would compute whole). dask is not imported to answer.

    Examples:
        >>> import numpy as np
        >>> from chainrules.core import is_lazy_array
        >>> is_lazy_array(np.ones(2))
        False
    """
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(x, da.Array)


# array types array-api-compat knows that have no __array_namespace__ of their own
_NAMESPACELESS = (("torch", "Tensor"), ("dask.array", "Array"))


def is_foreign_array(x: Any) -> bool:
    """Whether ``x`` is an array of another library than NumPy (JAX, PyTorch, dask,
    array_api_strict…).

    NumPy arrays and scalars, Python numbers, and ``chainrules.ad`` tracers of them
    (which act as NumPy arrays) are not foreign; a tracer of a foreign array is.

    Examples:
        >>> import numpy as np
        >>> from chainrules.core import is_foreign_array
        >>> is_foreign_array(np.ones(2)), is_foreign_array(1.0)
        (False, False)
    """
    if isinstance(x, _NOT_FOREIGN) or isinstance(x, type):
        return False  # a class (np.float64 itself) has __array_namespace__ too
    return is_foreign_type(type(x))


def array_namespace(*values: Any) -> Any:
    """The array-API namespace of the arrays among ``values``.

    Python numbers, ``None`` and non-array values are ignored; with no array at all
    (only Python numbers) the result is NumPy's namespace. Mixing arrays of two
    libraries raises ``TypeError``.

    Rule authors write ``xp = array_namespace(x)`` and then ``xp.exp(x)``, so that one
    rule serves NumPy, JAX (also under ``jax.jit`` and ``jax.vmap``), PyTorch (also
    under ``torch.func``) and ``array_api_strict``.

    Args:
        values: the arguments of a rule (arrays, numbers, anything).

    Returns:
        The namespace: ``numpy`` (NumPy >= 2), ``jax.numpy``, ``array_api_compat.torch``,
        ``array_api_strict``, …

    Raises:
        TypeError: arrays of two different libraries.

    Examples:
        >>> import numpy as np
        >>> from chainrules import array_namespace
        >>> xp = array_namespace(np.ones(3), 2.0)
        >>> xp.exp(xp.zeros(2))
        array([1., 1.])
        >>> array_namespace(1.5) is array_namespace(np.float32(1.0))
        True
    """
    foreign = [v for v in values if v is not None and is_foreign_array(v)]
    if not foreign:
        return _numpy_xp()
    return array_api_compat.array_namespace(*foreign)


_NUMPY_SUBMODULES = {"numpy": (), "numpy.linalg": ("linalg",), "numpy.fft": ("fft",)}


def _counterpart(xp: Any, f: Any) -> Any:
    """``xp``'s function of the same name as NumPy function ``f``, or None."""
    path = _NUMPY_SUBMODULES.get(getattr(f, "__module__", None) or "")
    if path is None:
        return None
    ns = xp
    for part in path:
        ns = getattr(ns, part, None)
        if ns is None:
            return None
    g = getattr(ns, getattr(f, "__name__", ""), None)
    return g if callable(g) and g is not f else None


def _identity(x: Any) -> Any:
    return x


def namespace_counterpart(f: Any, args: tuple, kwargs: dict,
                          primal_of: Any = _identity) -> tuple | None:
    """NumPy function ``f`` called on another library's arrays, as the call of the same
    function of their namespace: ``(g, args, kwargs)``, or None where ``f`` keeps the
    call (no foreign array, no function of that name, or arguments its signature cannot
    take).

    NumPy's rules compute with NumPy; on a dask array that would compute it eagerly, on
    a tensor convert it. The namespace's function has a rule written with ``xp``, which
    keeps the library's arrays (a dask gradient stays lazy). NumPy's parameter names for
    the arrays (``a``, ``b``) map by position onto the namespace's (``x``, ``x1``).

    Args:
        f: a NumPy function (``numpy.sum``, ``numpy.linalg.solve``).
        args, kwargs: its arguments.
        primal_of: what an argument holds (the AD passes its tracers' primals).

    Examples:
        >>> import numpy as np
        >>> from chainrules.core import namespace_counterpart
        >>> namespace_counterpart(np.sum, (np.ones(2),), {}) is None  # NumPy's own
        True
    """
    x = next((p for p in map(primal_of, args) if is_foreign_array(p)), None)
    if x is None:
        return None
    g = _counterpart(array_namespace(x), f)
    if g is None:
        return None
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
        target = inspect.signature(g).parameters
    except (TypeError, ValueError):
        return None
    positional = [n for n, p in target.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    new_args: list = []
    new_kwargs: dict = {}
    for name, value in bound.arguments.items():
        param = target.get(name)
        if param is not None and name not in kwargs and not new_kwargs \
                and len(new_args) < len(positional) and positional[len(new_args)] == name:
            new_args.append(value)  # positional stays positional (a keyword, keyword)
        elif param is not None and param.kind in (param.KEYWORD_ONLY,
                                                  param.POSITIONAL_OR_KEYWORD):
            new_kwargs[name] = value
        elif param is None and not new_kwargs and len(new_args) < len(positional):
            new_args.append(value)  # NumPy's a / b are the namespace's x / x1, x2
        elif value is None or value is False or value is np._NoValue:
            continue  # out=None, a NumPy-only option left at its default
        else:
            return None
    if not new_args:
        return None
    return g, tuple(new_args), new_kwargs
