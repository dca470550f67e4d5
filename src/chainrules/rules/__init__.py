"""chainrules.rules: the built-in rule set, registered on import.

Each module registers the rules of one domain right under their code:
``stdlib/`` (math, cmath, operator, builtins), ``numpy/`` (ufuncs, reductions,
shape, indexing, linalg, fft) and ``scipy/`` (special, linalg, sparse, stats). Every
module in these packages is imported here; ``scipy/`` only when SciPy imports.

The ``scipy.stats`` rules wait for the user to import ``scipy.stats`` (it takes longer
to import than the rest of chainrules): if it is not imported yet, a post-import hook
registers them right after it is. No call can reach a ``scipy.stats`` function before
that, so no rule is ever missing.
"""

from __future__ import annotations

import importlib
import importlib.abc
import pkgutil
import sys
from collections.abc import Callable
from typing import Any

_PACKAGES = {
    # subpackage: the optional dependency it needs (None: always)
    "stdlib": None,
    "numpy": None,
    "scipy": "scipy",
}

# rule module (relative to this package) -> the library module it waits for
_DEFERRED = {
    "scipy.stats_continuous": "scipy.stats",
    "scipy.stats_discrete": "scipy.stats",
    "scipy.stats_multivariate": "scipy.stats",
}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs callbacks right after a module's first import finishes (a post-import
    hook): it finds the module's spec with the other finders and makes its loader call
    them after executing the module. It leaves ``sys.meta_path`` once nothing waits."""

    def __init__(self) -> None:
        self.waiting: dict[str, list[Callable[[], Any]]] = {}

    def add(self, module: str, callback: Callable[[], Any]) -> None:
        self.waiting.setdefault(module, []).append(callback)
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.waiting:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        callbacks = self.waiting.pop(fullname)
        if not self.waiting:
            sys.meta_path.remove(self)
        exec_module = loader.exec_module

        def exec_module_then_register(module: Any) -> None:
            exec_module(module)
            for callback in callbacks:
                callback()

        # on this spec's own loader instance only, so the module keeps its real loader
        loader.exec_module = exec_module_then_register
        return spec


_after_import = _AfterImport()


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
            if info.name.startswith("_"):
                continue
            name = f"{pkg.__name__}.{info.name}"
            library = _DEFERRED.get(f"{package}.{info.name}")
            if library is not None and library not in sys.modules:
                _after_import.add(library, lambda name=name: _import_late(name, loaded))
                continue
            importlib.import_module(name)
            loaded.append(name)
    return loaded


def _import_late(name: str, loaded: list[str]) -> None:
    importlib.import_module(name)
    loaded.append(name)


LOADED_MODULES = _load()
"""The rule modules imported so far (a deferred one is added when it loads)."""
