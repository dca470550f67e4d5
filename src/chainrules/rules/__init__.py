"""chainrules.rules: the built-in rule set, registered on import.

Each module registers the rules of one domain right under their code:
``stdlib/`` (math, cmath, operator, builtins), ``numpy/`` (ufuncs, reductions,
shape, indexing, linalg, fft) and ``scipy/`` (special, linalg, sparse, stats, signal,
fft, optimize, integrate, …).

``stdlib/`` and ``numpy/`` are imported here, except ``numpy/random.py``. A module
``scipy/<name>.py`` (or ``scipy/<name>_<part>.py``) holds the rules of ``scipy.<name>``
and is imported when ``scipy.<name>`` is: at once if it already was, else by an import
hook, right after ``scipy.<name>`` finishes importing; ``numpy/random.py`` waits for
``numpy.random`` the same way (NumPy imports that subpackage on first use). A program
can only call such a function after importing its module, so every lookup finds the
rules, and ``import chainrules`` does not pay for importing SciPy or ``numpy.random``
(measured with ``python -X importtime``). The hook's classes do not derive from
``importlib.abc``'s, whose import alone costs about 20 ms.

``array_api/`` holds the rules of the array API standard written once against ``xp``:
NumPy's elementwise rules come from there, and `register_namespace` puts them on
any other array-API namespace (``array_api_strict``, ``jax.numpy`` …).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import pkgutil
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from chainrules.core import persistent_rules
from chainrules.rules.array_api import register_namespace

__all__ = ["LOADED_MODULES", "load_scipy_rules", "register_namespace"]

LOADED_MODULES: list[str] = []


# Rule modules of packages imported here that wait for their library's module instead.
_DEFERRED = {"numpy.random": f"{__name__}.numpy.random"}


def _load_package(package: str) -> None:
    pkg = importlib.import_module(f"{__name__}.{package}")
    deferred = set(_DEFERRED.values())
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if not info.name.startswith("_") and f"{pkg.__name__}.{info.name}" not in deferred:
            name = f"{pkg.__name__}.{info.name}"
            importlib.import_module(name)
            LOADED_MODULES.append(name)


def _scipy_rule_modules() -> dict[str, list[str]]:
    """``{"scipy.special": ["chainrules.rules.scipy.special"], …}``, without importing SciPy."""
    spec = importlib.util.find_spec(f"{__name__}.scipy")
    if spec is None or spec.submodule_search_locations is None:
        return {}
    table: dict[str, list[str]] = {}
    for info in sorted(pkgutil.iter_modules(spec.submodule_search_locations),
                       key=lambda m: m.name):
        if not info.name.startswith("_"):
            target = "scipy." + info.name.split("_")[0]
            table.setdefault(target, []).append(f"{__name__}.scipy.{info.name}")
    return table


def _lazy_rule_modules() -> dict[str, list[str]]:
    """Library module -> the rule modules imported right after it (SciPy's, numpy.random)."""
    table = _scipy_rule_modules()
    for target, name in _DEFERRED.items():
        table.setdefault(target, []).append(name)
    return table


_SCIPY_RULES = _lazy_rule_modules()
_lock = threading.RLock()


def load_scipy_rules(module: str | None = None) -> None:
    """Register the rules of ``module`` (e.g. ``"scipy.special"``), or of every module
    whose rules wait for it (SciPy's, ``numpy.random``).

    Called by the import hook; calling it again is a no-op. Importing the rules of a
    module imports that module.
    """
    with _lock:
        targets = [module] if module is not None else list(_SCIPY_RULES)
        for target in targets:
            for name in _SCIPY_RULES.pop(target, ()):
                # library rules: they outlive a scoped_rules block open now (a test's),
                # because they are loaded only once
                with persistent_rules():
                    importlib.import_module(name)
                LOADED_MODULES.append(name)
        if not _SCIPY_RULES:
            _ScipyHook.uninstall()


class _RulesAfterExec:
    """Runs the real loader, then registers the rules of the module it loaded."""

    def __init__(self, loader: Any, target: str) -> None:
        self._loader = loader
        self._target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        # Later code reading module.__loader__ / __spec__.loader sees SciPy's own.
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        # The import system binds a submodule to its parent only once this returns; the
        # rules read it as `numpy.random`, `scipy.special`, so bind it now.
        parent, _, child = self._target.rpartition(".")
        if parent in sys.modules:
            setattr(sys.modules[parent], child, module)
        load_scipy_rules(self._target)


class _ScipyHook:
    _installed: _ScipyHook | None = None

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _SCIPY_RULES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    # the import system duck-types loaders (see the module docstring)
                    spec.loader = _RulesAfterExec(spec.loader, fullname)  # pyright: ignore
                return spec
        return None

    @classmethod
    def install(cls) -> None:
        if cls._installed is None:
            cls._installed = cls()
            sys.meta_path.insert(0, cls._installed)

    @classmethod
    def uninstall(cls) -> None:
        if cls._installed is not None:
            try:
                sys.meta_path.remove(cls._installed)
            except ValueError:
                pass
            cls._installed = None


def _load() -> None:
    _load_package("stdlib")
    _load_package("numpy")
    if importlib.util.find_spec("scipy") is None:
        for target in [t for t in _SCIPY_RULES if t.startswith("scipy.")]:
            del _SCIPY_RULES[target]
    for target in list(_SCIPY_RULES):
        if target in sys.modules:
            load_scipy_rules(target)
    if _SCIPY_RULES:
        _ScipyHook.install()


_load()
