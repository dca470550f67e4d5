"""The code blocks of the README and of the guides run as written."""

import linecache
import re
from pathlib import Path

import pytest

from chainrules import scoped_rules

ROOT = Path(__file__).resolve().parents[1]
# Pages whose every ```python block is a runnable, sequential example.
RUNNABLE = ["README.md", "docs/guide/rule-authors.md", "docs/maths.md",
            "docs/guide/solvers.md"]


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


@pytest.mark.parametrize("page", RUNNABLE)
def test_page_code_blocks_run(page):
    path = ROOT / page
    if not path.exists():
        pytest.skip(f"{page} is not in this checkout")
    blocks = python_blocks(path.read_text())
    assert blocks, f"{page} has no python code block"
    namespace: dict = {"__name__": f"docs_{path.stem}"}
    names = []
    try:
        with scoped_rules():
            for i, block in enumerate(blocks):
                # registered with linecache (as doctest does), so chainrules.ad can read
                # and rewrite the functions a block defines
                filename = f"<{page} block {i + 1}>"
                names.append(filename)
                linecache.cache[filename] = (len(block), None, block.splitlines(True),
                                             filename)
                try:
                    exec(compile(block, filename, "exec"), namespace)
                except Exception as e:
                    raise AssertionError(
                        f"{page}, python block {i + 1} failed: {e!r}") from e
    finally:
        for filename in names:
            linecache.cache.pop(filename, None)
