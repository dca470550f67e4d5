"""The array API rows (``cases/array_api.py``) on PyTorch tensors, through
``array_api_compat.torch``: the same generic rules, the same inputs, checked by the testers
on tensors (and traced under ``torch.func``). A rule that reaches for NumPy-only API
(``x.size``, which is a method on tensors) or reduces over an empty axis fails here.
Without PyTorch installed the table is empty.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from chainrules.testing import Case
from chainrules.testing.cases.array_api import build_cases

__all__ = ["CASES"]

#: Rows whose primal cannot run where the testers need it, and why.
_SKIP = {
    "array_api_compat.torch.from_dlpack": (
        "torch's from_dlpack refuses a tensor that requires grad (BufferError), so it "
        "cannot run under torch.func; its rule is the identity's, tested on the other "
        "libraries"),
}


def _cases() -> list[Case]:
    try:
        import array_api_compat.torch as tx
        import torch
    except ImportError:  # pragma: no cover - the optional dependency is missing
        return []

    def as_tensor(x: Any) -> Any:
        return torch.asarray(x.copy())

    rows = build_cases(tx, "array_api_compat.torch", as_tensor)
    return [dataclasses.replace(row, skip=_SKIP[row.display_name])
            if row.display_name in _SKIP else row for row in rows]


CASES: list[Case] = _cases()
