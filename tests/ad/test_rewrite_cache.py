"""The on-disk cache of rewritten code (``chainrules/ad/_rewrite_cache.py``): a later
process loads what an earlier one rewrote, never the rewrite of other code, and a cache
that cannot be used is only a miss."""

from __future__ import annotations

import importlib
import os
import sys

import numpy as np
import pytest

from chainrules.ad import _rewrite, _rewrite_cache, grad


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder, writable; the in-memory rewrites forgotten."""
    monkeypatch.setenv("CHAINRULES_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(_rewrite, "_code_cache", {})
    return tmp_path / "cache"


def _entries(folder):
    return sorted(p.name for p in folder.rglob("*.code"))


def _module(tmp_path, monkeypatch, name, body):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / f"{name}.py").write_text("import numpy as np\n\n\n" + body)
    importlib.invalidate_caches()
    sys.modules.pop(name, None)
    return importlib.import_module(name)


def _forget(monkeypatch, *functions):
    """As if a new process: nothing rewritten in memory (the rewriter's table, and the
    rewritten twin each function keeps)."""
    monkeypatch.setattr(_rewrite, "_code_cache", {})
    for f in functions:
        f.__dict__.pop("__chainrules_rewritten__", None)


def test_a_later_process_loads_the_rewrite_instead_of_compiling(cache, tmp_path,
                                                                monkeypatch):
    mod = _module(tmp_path, monkeypatch, "chainrules_cache_demo1",
                  "def f(x):\n    return np.sum(np.sin(x) * x)\n")
    x = np.array([0.5, 1.5])
    first = grad(mod.f)(x)
    assert len(_entries(cache)) == 1
    _forget(monkeypatch, mod.f)

    def no_compile(code):
        raise AssertionError("rewrote again instead of loading the cached rewrite")

    monkeypatch.setattr(_rewrite, "_compile", no_compile)
    np.testing.assert_array_equal(grad(mod.f)(x), first)
    np.testing.assert_allclose(first, np.cos(x) * x + np.sin(x))


def test_edited_code_gets_its_own_entry(cache, tmp_path, monkeypatch):
    mod = _module(tmp_path, monkeypatch, "chainrules_cache_demo2",
                  "def f(x):\n    return np.sum(x * 3.0)\n")
    np.testing.assert_array_equal(grad(mod.f)(np.ones(2)), [3.0, 3.0])
    mod = _module(tmp_path, monkeypatch, "chainrules_cache_demo2",
                  "def f(x):\n    return np.sum(x * 4.25)\n")  # a new size: no stale .pyc
    _forget(monkeypatch, mod.f)
    np.testing.assert_array_equal(grad(mod.f)(np.ones(2)), [4.25, 4.25])
    assert len(_entries(cache)) == 2


def test_a_corrupt_entry_is_a_miss(cache, tmp_path, monkeypatch):
    mod = _module(tmp_path, monkeypatch, "chainrules_cache_demo3",
                  "def f(x):\n    return np.sum(x ** 2)\n")
    grad(mod.f)(np.ones(2))
    (entry,) = cache.rglob("*.code")
    entry.write_bytes(b"not marshal data")
    _forget(monkeypatch, mod.f)
    np.testing.assert_array_equal(grad(mod.f)(np.array([1.0, 2.0])), [2.0, 4.0])
    assert _rewrite_cache.load(mod.f.__code__) is not None  # written again


@pytest.mark.parametrize("off", ["empty CHAINRULES_CACHE_DIR", "dont_write_bytecode"])
def test_nothing_is_written_when_switched_off(cache, tmp_path, monkeypatch, off):
    if off == "dont_write_bytecode":
        monkeypatch.setattr(sys, "dont_write_bytecode", True)
    else:
        monkeypatch.setenv("CHAINRULES_CACHE_DIR", "")
        assert _rewrite_cache.cache_directory() is None
    mod = _module(tmp_path, monkeypatch, "chainrules_cache_demo4",
                  "def f(x):\n    return np.sum(x * x)\n")
    np.testing.assert_array_equal(grad(mod.f)(np.ones(2)), [2.0, 2.0])
    assert not cache.exists() or _entries(cache) == []


def test_an_unwritable_folder_is_only_a_miss(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("CHAINRULES_CACHE_DIR", str(blocker))  # a file, not a folder
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(_rewrite, "_code_cache", {})
    mod = _module(tmp_path, monkeypatch, "chainrules_cache_demo5",
                  "def f(x):\n    return np.sum(x * 5.0)\n")
    np.testing.assert_array_equal(grad(mod.f)(np.ones(2)), [5.0, 5.0])


def test_the_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("CHAINRULES_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = _rewrite_cache.cache_directory()
    assert folder is not None
    assert os.path.dirname(folder) == str(tmp_path / "chainrules")
    assert sys.implementation.cache_tag in os.path.basename(folder)
