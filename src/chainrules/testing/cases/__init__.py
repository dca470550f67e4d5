"""Rule-case tables, one module per area, each defining ``CASES: list[Case]``.

See `chainrules.testing.Case` for how to write a row.
"""
