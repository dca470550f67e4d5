"""The code blocks of docs/guide/ad.md run as written, in order, in one namespace.

Each block is registered with ``linecache`` under its own file name, as doctest does,
so the AD can read (and rewrite) the functions it defines.
"""

from __future__ import annotations

import linecache
import re
import sys
import types
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "ad.md"


def test_guide_code_blocks_run():
    if not GUIDE.exists():
        pytest.skip("docs/guide/ad.md is not in this checkout")
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    assert blocks
    module = types.ModuleType("docs_guide_ad")
    sys.modules[module.__name__] = module
    names = []
    try:
        for i, block in enumerate(blocks):
            filename = f"<docs/guide/ad.md block {i + 1}>"
            names.append(filename)
            linecache.cache[filename] = (len(block), None, block.splitlines(True), filename)
            try:
                exec(compile(block, filename, "exec"), module.__dict__)
            except Exception as e:
                raise AssertionError(
                    f"docs/guide/ad.md, python block {i + 1} failed: {e!r}") from e
    finally:
        sys.modules.pop(module.__name__, None)
        for filename in names:
            linecache.cache.pop(filename, None)
