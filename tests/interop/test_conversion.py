"""The framework-independent layer: structures, tangent look-up, projection, missing frameworks."""

from __future__ import annotations

import builtins
import re
from typing import NamedTuple

import numpy as np
import pytest

from chainrules import NoTangent, Tangent, Thunk, ZeroTangent
from chainrules.interop import FrameworkNotInstalledError, TangentConversionError, _compat
from chainrules.interop._bridge import leaf_tangent, output_cotangent
from chainrules.interop._tree import (
    PathError,
    format_path,
    leaves_with_paths,
    map_leaves,
    tangent_at,
    tangent_like,
)


class Pair(NamedTuple):
    a: np.ndarray
    b: float


def test_leaves_and_paths():
    x = ({"w": np.ones(2), "n": 3}, Pair(np.zeros(1), 2.0), [1.0])
    paths = [p for p, _ in leaves_with_paths(x)]
    assert paths == [
        (("index", 0), ("key", "w")), (("index", 0), ("key", "n")),
        (("index", 1), ("attr", "a")), (("index", 1), ("attr", "b")),
        (("index", 2), ("index", 0)),
    ]
    assert format_path(paths[2]) == "[1].a"


def test_map_leaves_keeps_structure():
    x = ({"w": 1.0}, Pair(2.0, 3.0))
    y = map_leaves(lambda path, leaf: leaf * 10, x)
    assert y == ({"w": 10.0}, Pair(20.0, 30.0))


def test_tangent_like_and_tangent_at_round_trip():
    x = ({"w": np.ones(2)}, Pair(np.zeros(1), 2.0))
    t = tangent_like(x, lambda path, leaf: len(path))
    assert isinstance(t, Tangent)
    assert t[0]["w"] == 2
    assert t[1].b == 2
    for path, _ in leaves_with_paths(x):
        assert tangent_at(t, path) == len(path)


def test_tangent_at_zero_and_thunk():
    assert tangent_at(ZeroTangent(), (("index", 3), ("key", "a"))) == ZeroTangent()
    t = Thunk(lambda: Tangent[tuple](1.0, NoTangent()))
    assert tangent_at(t, (("index", 0),)) == 1.0
    assert tangent_at(t, (("index", 1), ("attr", "x"))) == NoTangent()
    assert tangent_at(Tangent[dict]({"a": 1.0}), (("key", "b"),)) == ZeroTangent()


def test_tangent_at_layout_mismatch():
    with pytest.raises(PathError, match=re.escape("at [0] got ndarray")):
        tangent_at(np.ones(2), (("index", 0),))


def test_leaf_tangent_projects_dtype_and_real_part():
    primal = np.ones(3, dtype=np.float32)
    out = leaf_tangent("bridge", np.sin, "argument", 1, (), primal, np.ones(3) + 1j)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.ones(3))
    assert leaf_tangent("bridge", np.sin, "argument", 1, (), primal, ZeroTangent()) is None


def test_leaf_tangent_error_names_argument_path_and_types():
    primal = np.ones(3)
    with pytest.raises(TangentConversionError, match=re.escape(
            "bridge(numpy.sin): cannot convert the tangent for argument 2[0]['w']: expected a "
            "tangent of ndarray(shape=(3,), dtype=float64), got ndarray(shape=(4,), "
            "dtype=float64)")):
        leaf_tangent("bridge", np.sin, "argument", 2, (("index", 0), ("key", "w")), primal,
                     Tangent[tuple](Tangent[dict]({"w": np.ones(4)})))


def test_leaf_tangent_layout_error():
    with pytest.raises(TangentConversionError, match=re.escape(
            "cannot convert the tangent for argument 1[0]: expected a tangent of "
            "ndarray(shape=(3,), dtype=float64), got Tangent[dict]; its layout does not match the "
            "argument's structure at [0]")):
        leaf_tangent("bridge", np.sin, "argument", 1, (("index", 0),), np.ones(3),
                     Tangent[dict]({"a": 1.0}))


def test_output_cotangent_types():
    y = (np.float32(1.0), 2.0, np.ones(2), 3)
    ct = output_cotangent(y, {(("index", 0),): np.array(1.5), (("index", 1),): np.array(2.5),
                              (("index", 2),): np.array([1.0, 2.0], dtype=np.float32)})
    assert isinstance(ct, Tangent)
    assert isinstance(ct[0], np.float32)
    assert isinstance(ct[1], float)
    assert ct[2].dtype == np.float64
    assert ct[3] == NoTangent()


def test_missing_framework_error(monkeypatch):
    real_import = builtins.__import__

    def no_jax(name, *args, **kwargs):
        if name == "jax" or name.startswith("jax."):
            raise ImportError("No module named 'jax'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_jax)
    monkeypatch.setattr(_compat, "_cache", {})
    import sys

    for name in [m for m in sys.modules if m == "jax" or m.startswith("jax.")]:
        monkeypatch.delitem(sys.modules, name)
    from chainrules.interop.jax import jax_function

    def f(x):
        return x

    with pytest.raises(FrameworkNotInstalledError, match=re.escape(
            "chainrules.interop.jax needs jax, which cannot be imported (No module named "
            "'jax'). Install it with: pip install 'chainrules[jax]'")):
        jax_function(f)(1.0)


@pytest.mark.parametrize("module, extra", [("torch", "torch"), ("autograd", "autograd")])
def test_missing_framework_error_others(monkeypatch, module, extra):
    monkeypatch.setattr(_compat, "_cache", {})

    def fail(name):
        raise ImportError(f"No module named '{name}'")

    monkeypatch.setattr(_compat.importlib, "import_module", fail)
    importer = {"torch": _compat.import_torch, "autograd": _compat.import_autograd}[module]
    with pytest.raises(FrameworkNotInstalledError, match=re.escape(
            f"chainrules.interop.{extra} needs {module}, which cannot be imported (No module "
            f"named '{module}'). Install it with: pip install 'chainrules[{extra}]'")):
        importer()
