"""Oracle check against JAX: harder variants, part 2 (indexing, shape).

Rows, checker and complex convention: ``_jax_table.py`` / ``_harness.py``.
Rows marked ``xfail(strict=True)`` are confirmed bugs or coverage gaps of our
rules (see the oracle report); they turn red once fixed.
"""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("jax")
sys.path.insert(0, os.path.dirname(__file__))
import _jax_table as jt


@pytest.mark.parametrize(("row", "dt", "mode"), jt.params(jt.EXTRA[60:120], pytest))
def test_against_jax(row, dt, mode):
    jt.check(row, dt, mode)
