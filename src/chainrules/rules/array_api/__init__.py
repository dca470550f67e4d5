"""Rules for the functions of the Python array API standard, written once against ``xp``.

One module per domain of the standard: ``elementwise``, ``statistical``, ``manipulation``,
``searching`` (searching and sorting), ``linalg`` (``matmul``, ``tensordot``, ``vecdot``,
``matrix_transpose`` and the simpler functions of the ``linalg`` extension),
``decompositions`` (``inv``, ``solve``, ``det``, ``cholesky``, ``eigh``, ``svd``, ``qr``…)
and ``fft``. Each module's
``register(xp, fresh)`` puts its rules on the functions of a namespace; nothing is
registered at import: `register_namespace` does it, explicitly.

Which rule serves NumPy:

- elementwise functions: one definition, these. ``rules/numpy/ufuncs.py`` registers
  the partials of ``elementwise.PARTIALS`` on NumPy's ufuncs (with NumPy's extras:
  ``out=``, lists, Python scalars);
- the other functions: NumPy keeps its own rules (``rules/numpy/*.py``), which also take
  NumPy's extra arguments (``out=``, ``where=``, ``dtype=``, ``initial=``, lists,
  ``np.generic`` scalars) that the standard's signatures lack; the rules here are
  registered only on the other namespaces, and tested there by the catalog
  (``chainrules.testing.cases.array_api`` on ``array_api_strict``).

``jax.numpy`` and PyTorch are never registered at import: those libraries differentiate
their own functions, and importing them would slow ``import chainrules`` down. Call
``register_namespace`` for them only to differentiate their functions with
``chainrules.ad`` or to test these rules there.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["register_namespace"]

_MODULES = ("elementwise", "statistical", "manipulation", "searching", "linalg",
            "decompositions", "fft")
_done: dict[int, list[str]] = {}


def register_namespace(xp: Any) -> list[str]:
    """Register the built-in rules of the array API standard on the functions of ``xp``.

    Every generic rule (written once with ``xp.`` calls) is registered on
    ``getattr(xp, name)``, and on ``xp.linalg.*`` and ``xp.fft.*`` for the extensions;
    names the namespace lacks are skipped, and so is any function that already has a
    rule (a rule of your own wins). A second call is a no-op. NumPy's functions get
    their rules when ``chainrules`` is imported: for NumPy this does nothing.

    Args:
        xp: an array-API namespace: ``array_api_strict``, ``jax.numpy``,
            ``array_api_compat.torch``, or ``chainrules.array_namespace(x)`` of an array.

    Returns:
        The names registered by this call (``"sin"``, ``"linalg.solve"`` …), sorted.

    Examples:
        >>> import array_api_strict as xs
        >>> from chainrules import rrule
        >>> from chainrules.rules import register_namespace
        >>> _ = register_namespace(xs)
        >>> x = xs.asarray([0.0, 1.0])
        >>> y, sin_pullback = rrule(xs.sin, x)
        >>> sin_pullback(xs.ones(2))[1]
        Array([1.        , 0.54030231], dtype=array_api_strict.float64)
        >>> register_namespace(xs)
        []
    """
    from chainrules.rules.array_api._common import is_numpy

    if is_numpy(xp) or id(xp) in _done:
        return []
    from chainrules.core import frule, rrule

    def fresh(f: Any) -> bool:
        return callable(f) and not rrule.has_rules(f) and not frule.has_rules(f)

    names: list[str] = []
    for module_name in _MODULES:
        module = importlib.import_module(f"{__name__}.{module_name}")
        names.extend(module.register(xp, fresh))
    _done[id(xp)] = names
    return sorted(names)
