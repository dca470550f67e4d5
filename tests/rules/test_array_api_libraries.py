"""The array API catalog rows on PyTorch tensors and JAX arrays, through the testers: a
generic rule that uses NumPy-only API, or breaks on zeros or 0-sized inputs on another
library, fails here (the same rows run on ``array_api_strict`` in test_array_api.py)."""

import re

import pytest

from chainrules.testing.pytest_plugin import catalog_params, check_case

pytest.importorskip("torch")
pytest.importorskip("jax")


# torch.asarray itself warns when it runs on a tensor that requires grad (torch.func)
@pytest.mark.filterwarnings("ignore:torch.asarray. unspecified requires_grad:UserWarning")
@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("array_api_torch"))
def test_rule_on_torch(case, dtype, mode):
    check_case(case, dtype, mode)


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("array_api_jax"))
def test_rule_on_jax(case, dtype, mode):
    check_case(case, dtype, mode)


def test_every_strict_row_runs_on_torch_and_jax():
    from chainrules.testing.cases import array_api, array_api_jax, array_api_torch

    def names(cases, prefix):
        return {c.display_name.removeprefix(prefix) for c in cases}

    strict = names(array_api.CASES, "array_api_strict.")
    strict = {n for n in strict if "(sorted, signed)" not in n}
    assert strict <= names(array_api_torch.CASES, "array_api_compat.torch.")
    # JAX runs one float32 row per function (so functions tested in complex128 or float64
    # alone are left out there), and every edge row
    jax_names = names(array_api_jax.CASES, "jax.numpy.")
    def functions(cases, prefix):
        return {re.split(r"[ (]", n)[0] for n in names(cases, prefix)}

    jax_functions = functions(array_api_jax.CASES, "jax.numpy.")
    torch_functions = functions(array_api_torch.CASES, "array_api_compat.torch.")
    no_float32 = {re.split(r"[ (]", c.display_name.removeprefix("array_api_strict."))[0]
                  for c in array_api.CASES if "float32" not in c.dtypes}
    left_out = torch_functions - jax_functions
    assert left_out <= no_float32 | {"astype"}, left_out
    assert {n for n in strict if "empty" in n or "zeros" in n} <= jax_names
