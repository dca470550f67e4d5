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

import sys
from typing import Any

import array_api_compat
import numpy as np

__all__ = ["array_namespace", "is_foreign_array", "is_foreign_type"]

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
