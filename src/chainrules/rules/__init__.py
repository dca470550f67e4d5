"""chainrules.rules: the built-in rule set, registered on import.

Each module registers the rules of one domain right under their code:
``stdlib/`` (math, cmath, operator, builtins), ``numpy/`` (ufuncs, reductions,
shape, indexing, linalg, fft) and ``scipy/`` (special, linalg, sparse). Every
module in these packages is imported here; ``scipy/`` only when SciPy imports.
``array_api/`` holds the rules of the array API standard written once against ``xp``:
NumPy's elementwise rules come from there, and :func:`register_namespace` puts them on
any other array-API namespace (``array_api_strict``, ``jax.numpy`` …).
"""

from __future__ import annotations

import importlib
import pkgutil

from chainrules.rules.array_api import register_namespace

__all__ = ["LOADED_MODULES", "register_namespace"]

_PACKAGES = {
    # subpackage: the optional dependency it needs (None: always)
    "stdlib": None,
    "numpy": None,
    "scipy": "scipy",
}


def _load() -> list[str]:
    loaded = []
    for package, dependency in _PACKAGES.items():
        if dependency is not None:
            try:
                importlib.import_module(dependency)
            except ImportError:
                continue
        try:
            pkg = importlib.import_module(f"{__name__}.{package}")
        except ModuleNotFoundError:
            continue
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
            if not info.name.startswith("_"):
                name = f"{pkg.__name__}.{info.name}"
                importlib.import_module(name)
                loaded.append(name)
    return loaded


LOADED_MODULES = _load()
