"""Public names of functions, for reports: ``numpy.sin``, ``scipy.special.gamma``, ``math.sin``.

``__module__`` is not enough: SciPy's ufuncs have none, ``operator.add`` says
``_operator``, and many NumPy functions live in private modules. So names come
first from a reverse index of the namespaces users call functions from.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

#: The namespaces reports group rules by, in the order they are listed.
NAMESPACES = (
    "math",
    "cmath",
    "operator",
    "builtins",
    "numpy",
    "numpy.linalg",
    "numpy.fft",
    "scipy.special",
    "scipy.linalg",
    "scipy.sparse",
    "scipy.fft",
    "scipy.signal",
    # array-API namespaces whose functions get rules from register_namespace
    "array_api_strict",
    "array_api_strict.linalg",
    "array_api_strict.fft",
    "jax.numpy",
    "jax.numpy.linalg",
    "jax.numpy.fft",
)

#: Table rows of ``python -m chainrules check`` named for their readers where a
#: namespace's own name says little: the standard library's higher-order functions
#: (one each, called back into by the AD) share a row; chainrules' own functions and
#: the catalog's test-only wrappers say what they are. Other namespaces are their row.
#: Reports list these rows after those of NAMESPACES.
REPORT_ROWS = {
    "functools": "functools + itertools",
    "itertools": "functools + itertools",
    "chainrules": "chainrules (own functions)",
    "chainrules.testing": "chainrules.testing (test-only wrappers)",
}


def report_row(namespace: str) -> str:
    """The table row of a namespace in ``check``'s report.

    >>> from chainrules._naming import report_row
    >>> report_row("numpy"), report_row("functools")
    ('numpy', 'functools + itertools')
    """
    return REPORT_ROWS.get(namespace, namespace)


_index: dict[int, tuple[str, str]] = {}
_indexed: set[str] = set()
_seen: tuple[int, int] = (-1, -1)  # sizes at the last _refresh: unchanged, nothing is new


def _refresh() -> None:
    global _seen
    if (len(sys.modules), len(NAMESPACES)) == _seen:
        return
    _seen = (len(sys.modules), len(NAMESPACES))
    for ns in NAMESPACES:
        if ns in _indexed:
            continue
        module = _module(ns)
        if module is None:
            continue  # never import an optional dependency just to name things
        _indexed.add(ns)
        for attr, obj in _public_attributes(module):
            if callable(obj) and not isinstance(obj, type(sys)):
                # An alias (scipy.special.jn is jv) loses to the function's own name.
                seen = _index.get(id(obj))
                if getattr(obj, "__name__", None) == attr and (
                        seen is None or seen[1] != attr or not ns.startswith("array_api")):
                    # array_api_strict.fft re-exports astype: the first name stays
                    _index[id(obj)] = (ns, attr)
                else:
                    _index.setdefault(id(obj), (ns, attr))


def _public_attributes(module: Any) -> list[tuple[str, Any]]:
    """A namespace's public attributes that are already there: a module's own
    ``__dict__``, never what its ``__getattr__`` would import on first access (NumPy's
    lazy submodules: reading them all cost 0.4 s in the first error message or
    higher-order derivative)."""
    try:
        items = list(vars(module).items())
    except TypeError:  # an object standing in for a namespace
        items = [(attr, getattr(module, attr, None)) for attr in dir(module)]
    return [(attr, obj) for attr, obj in items if not attr.startswith("_")]


def namespace_and_name(f: Any) -> tuple[str, str]:
    """``(namespace, name)`` of a function, e.g. ``("numpy", "sin")``.

    Examples:
        >>> import numpy as np
        >>> from chainrules._naming import namespace_and_name
        >>> namespace_and_name(np.linalg.solve)
        ('numpy.linalg', 'solve')
        >>> namespace_and_name(np.add.reduce)
        ('numpy', 'add.reduce')
        >>> namespace_and_name(np.ndarray.sum)
        ('numpy.ndarray', 'sum')
    """
    _refresh()
    hit = _index.get(id(f))
    if hit is not None and _resolves(hit, f):
        return hit
    owner = getattr(f, "__self__", None)
    if isinstance(owner, np.ufunc):
        ns, name = namespace_and_name(owner)
        return ns, f"{name}.{f.__name__}"
    objclass = getattr(f, "__objclass__", None)
    if objclass is not None:
        ns = _clean_module(objclass.__module__)
        return f"{ns}.{objclass.__name__}", f.__name__
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
    if name is None:
        return _clean_module(type(f).__module__), f"<{type(f).__qualname__} instance>"
    module = getattr(f, "__module__", None)
    return _clean_module(module or "builtins"), name


def _module(ns: str) -> Any:
    """The loaded module ``ns``, or an extension exposed as an attribute of a loaded one
    (``array_api_strict.linalg``); None when not loaded."""
    module = sys.modules.get(ns)
    if module is None and "." in ns:
        parent, _, attr = ns.rpartition(".")
        module = getattr(sys.modules.get(parent), attr, None)
    return module


def _resolves(hit: tuple[str, str], f: Any) -> bool:
    module = _module(hit[0])
    return module is not None and getattr(module, hit[1], None) is f


def _clean_module(module: str) -> str:
    if module.startswith("_") and module[1:] in sys.modules:
        return module[1:]  # _operator -> operator, _functools -> functools
    parts = module.split(".")
    # numpy._core.fromnumeric, numpy.random.mtrand, scipy.special._logsumexp -> numpy,
    # numpy.random, scipy.special
    for i, part in enumerate(parts):
        if part.startswith("_") or (parts[0] == "numpy" and part in ("lib", "core", "mtrand")):
            return ".".join(parts[:i]) or module
    return module


def qualified_name(f: Any) -> str:
    """The public dotted name of a function, e.g. ``"scipy.special.gamma"``.

    Examples:
        >>> import operator
        >>> from chainrules._naming import qualified_name
        >>> qualified_name(operator.add)
        'operator.add'
    """
    ns, name = namespace_and_name(f)
    return f"{ns}.{name}"
