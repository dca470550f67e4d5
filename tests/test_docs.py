"""The code blocks of the README and of every page under docs/ run as written.

Each page's ```python blocks run in order, in one namespace. A block that must not
run (it shows a fragment, or needs a service) is preceded by the line
``<!-- docs-test: skip (why) -->``; the reason is required.
"""

import linecache
import re
from pathlib import Path

import pytest

from chainrules import scoped_rules

ROOT = Path(__file__).resolve().parents[1]
# Pages with their own test, which runs their blocks with the AD's needs (linecache).
OWN_TESTS = {"docs/guide/ad.md": "tests/ad/test_guide.py",
             "docs/guide/interop.md": "tests/interop/test_guide.py",
             "docs/guide/jax.md": "tests/interop/test_framework_guides.py",
             "docs/guide/torch.md": "tests/interop/test_framework_guides.py"}
PAGES = sorted(
    str(p.relative_to(ROOT)) for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    if str(p.relative_to(ROOT)) not in OWN_TESTS
)
SKIP = re.compile(r"<!-- docs-test: skip \((?P<why>[^)]+)\) -->\n```python\n")
BLOCK = re.compile(r"(?P<marker><!-- docs-test: skip \([^)]+\) -->\n)?```python\n(?P<code>.*?)```",
                   flags=re.DOTALL)


def python_blocks(text: str) -> list[tuple[str, bool]]:
    """``(code, runs)`` for every ```python block of a page."""
    return [(m["code"], m["marker"] is None) for m in BLOCK.finditer(text)]


def test_every_page_is_covered():
    assert "README.md" in PAGES and "docs/guide/testing.md" in PAGES
    for page, test in OWN_TESTS.items():
        assert (ROOT / test).exists(), f"{page} is left to {test}, which is missing"


def test_skip_markers_need_a_reason():
    bad = [p for p in PAGES if "<!-- docs-test: skip" in (ROOT / p).read_text()
           and len(SKIP.findall((ROOT / p).read_text()))
           != (ROOT / p).read_text().count("<!-- docs-test: skip")]
    assert not bad, f"skip markers without a reason, or not right before a ```python block: {bad}"


@pytest.mark.parametrize("page", PAGES)
def test_page_code_blocks_run(page):
    path = ROOT / page
    blocks = python_blocks(path.read_text())
    if not blocks:
        pytest.skip(f"{page} has no python code block")
    namespace: dict = {"__name__": f"docs_{path.stem}"}
    names = []
    try:
        with scoped_rules():
            for i, (block, runs) in enumerate(blocks):
                if not runs:
                    continue
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


def test_skip_marker_keeps_a_block_from_running():
    text = "<!-- docs-test: skip (a fragment) -->\n```python\nboom(\n```\n```python\nok = 1\n```"
    assert python_blocks(text) == [("boom(\n", False), ("ok = 1\n", True)]
