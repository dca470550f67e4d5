"""The interop guide's code runs and its asserts hold (all frameworks agree)."""

from __future__ import annotations

import pathlib
import re

import pytest

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "guide" / "interop.md"


def test_guide_examples_run():
    for module in ("jax", "torch", "autograd"):
        pytest.importorskip(module)
    jax = pytest.importorskip("jax")
    from chainrules import frule, rrule

    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) >= 6
    namespace: dict = {"__name__": "interop_guide"}
    x64 = jax.config.jax_enable_x64
    try:
        for block in blocks:
            exec(compile(block, str(GUIDE), "exec"), namespace)
    finally:
        jax.config.update("jax_enable_x64", x64)
        # the guide registers rules for its own `f`; a new function each run, nothing to undo
        assert rrule.has_rules(namespace["f"]) and frule.has_rules(namespace["f"])
