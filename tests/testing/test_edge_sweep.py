"""The edge-input sweep (issue #26) over the catalog's NumPy and array API cases: every
floating input replaced by an empty array, all-NaN and all-inf values that the primal
accepts; the rules must give a value or a named chainrules error, never a raw crash.

The failures that remain are listed in KNOWN with their reason; the test fails when the
sweep finds a new one, and when a listed one no longer fails (remove it from the list).
"""

import importlib.util
import pathlib
import sys

import pytest

from chainrules.testing import iter_catalog

_spec = importlib.util.spec_from_file_location(
    "chainrules_edge_sweep", pathlib.Path(__file__).with_name("_sweep.py"))
assert _spec is not None and _spec.loader is not None
sweep = importlib.util.module_from_spec(_spec)
sys.modules["chainrules_edge_sweep"] = sweep
_spec.loader.exec_module(sweep)

pytest.importorskip("array_api_strict")

KNOWN = {
    "numpy.polymul arg 0 empty": "polymul's rule convolves with an empty array (np.convolve "
                                 "refuses it); the primal returns the other polynomial",
    "numpy.polymul arg 1 empty": "as arg 0",
    "numpy.quantile(a, [q], axis=1) arg 1 empty": "an empty q: the rule stacks no order "
                                                  "statistics (quantile is the inplace "
                                                  "branch's)",
    "numpy.cov(m, y) arg 0 empty": "an empty m beside a non-empty y: the rule reshapes "
                                   "the cotangent to the variables' count",
    "numpy.gradient(axis=1) arg 0 empty": "gradient along an empty axis: the rule indexes "
                                          "its first element",
}


@pytest.mark.filterwarnings("ignore")  # the primals warn on NaN, inf and empty inputs
@pytest.mark.parametrize("area", ["numpy", "array_api"])
def test_edge_inputs_give_a_value_or_a_named_error(area):
    found = {}
    for case in iter_catalog(area):
        if "float64" in case.dtypes:
            found.update(sweep.probe(case))
    known = {k for k in KNOWN if k.startswith("numpy.") == (area == "numpy")}
    new = {k: v for k, v in found.items() if k not in known}
    assert not new, "raw crashes on edge inputs:\n" + "\n".join(
        f"  {k}: {v}" for k, v in new.items())
    assert known <= set(found), f"no longer failing, remove from KNOWN: {known - set(found)}"
