"""SciPy's rules are registered when SciPy's module is imported, not by ``import chainrules``."""

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("scipy")


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_chainrules_does_not_import_scipy():
    assert _run("""
        import sys, chainrules
        print(sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy.")))
    """) == "[]"


def test_rules_registered_when_scipy_module_is_imported_after_chainrules():
    assert _run("""
        import chainrules, numpy as np
        import scipy.special as sc
        from scipy import linalg
        print(chainrules.rrule(sc.gamma, 1.5) is not None,
              chainrules.frule((chainrules.NoTangent(), np.eye(2)), linalg.expm, np.eye(2))
              is not None)
    """) == "True True"


def test_rules_registered_when_scipy_module_was_imported_before_chainrules():
    assert _run("""
        import scipy.special as sc
        import chainrules
        print(chainrules.rrule(sc.gamma, 1.5) is not None)
    """) == "True"


def test_scipy_module_keeps_its_own_loader():
    assert _run("""
        import chainrules, scipy.special
        print(type(scipy.special.__loader__).__module__.startswith("chainrules"))
    """) == "False"


def test_every_scipy_rule_module_loads_on_demand():
    out = _run("""
        import chainrules.rules as r
        r.load_scipy_rules()
        print(sum(m.startswith("chainrules.rules.scipy.") for m in r.LOADED_MODULES))
    """)
    assert int(out) >= 3


# numpy.random: NumPy imports it on first use; its rules wait for it the same way


def test_import_chainrules_imports_neither_numpy_random_nor_importlib_abc():
    assert _run("""
        import sys, chainrules
        print("numpy.random" in sys.modules, "importlib.abc" in sys.modules)
    """) == "False False"


@pytest.mark.parametrize("first", ["chainrules", "numpy.random"])
def test_numpy_random_rules_registered_whichever_is_imported_first(first):
    assert _run(f"""
        import {first}
        import chainrules, numpy as np
        rng = np.random.default_rng(0)
        _, pullback = chainrules.rrule(rng.normal, 1.0, 2.0)
        print(type(pullback(1.0)[1]).__name__, chainrules.rrule.has_rules(np.random.normal))
    """) == "NotImplementedTangent True"
