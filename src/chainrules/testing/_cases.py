"""The rule-case catalog: one table row per function whose rules are tested.

Case tables live in ``chainrules/testing/cases/<area>.py``; each module defines
``CASES: list[Case]``. ``tests/rules/`` and ``python -m chainrules check`` run
every row with `run_case` (in ``_runner``).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chainrules.testing._errors import TesterUsageError
from chainrules.testing._fd import FDMethod

__all__ = [
    "Case",
    "arr",
    "case_id",
    "integers",
    "iter_catalog",
    "positive",
    "scalar",
    "spd",
    "unit_interval",
    "well_conditioned",
]

_DTYPES = ("float64", "float32", "complex128", "complex64")
_MODES = ("frule", "rrule")


@dataclass(frozen=True)
class Case:
    """One row of the rule-case catalog: a function, how to build its inputs, what to run.

    **Fields:**

    - ``f``: the function whose rules are tested, e.g. ``np.sin``.
    - ``args``: ``args(rng, dtype) -> tuple`` builds the positional primal
      arguments for one dtype (a ``np.dtype``) from a seeded
      ``np.random.Generator``. Use the helpers `arr`, `scalar`, `positive`,
      `unit_interval`, `integers`, `spd`, `well_conditioned` so inputs lie in
      the function's domain (``positive`` for ``log``, ``unit_interval`` for
      ``arcsin``). An entry may be a `PrimalAndTangent` (``with_tangent(x,
      x_dot)``, ``no_tangent(x)``) to fix its tangent, e.g. an ``axis`` or an
      index array that must not be perturbed. Integer arrays, bools and
      strings get ``NoTangent()`` automatically.
    - ``kwargs``: keyword arguments passed to ``f`` (never differentiated).
    - ``dtypes``: the dtypes to run, from ``"float64"``, ``"float32"``,
      ``"complex128"``, ``"complex64"``. Add the complex ones only where the
      rule supports complex inputs.
    - ``name``: display name; default derived from ``f`` and ``kwargs``, e.g.
      ``"numpy.sum(axis=0)"``. Give one when two rows would share a name.
    - ``frule`` / ``rrule``: run ``test_frule`` / ``test_rrule`` (set one to
      ``False`` when only the other rule exists).
    - ``rtol`` / ``atol``: tolerances; ``None`` uses the dtype default. Never
      loosen them to make a wrong rule pass.
    - ``output_tangent``: ``output_tangent(rng, dtype, y) -> y_bar`` builds the
      output (co)tangent from the primal output ``y``; default ``rand_tangent(y)``.
    - ``xfail``: a documented known limitation (say why). The case is still
      run; it is reported as ``"xfail"`` when it fails and as ``"failed"``
      (an unexpected pass) when it passes, so stale markers get noticed.
    - ``skip``: why the case cannot run with the installed libraries (an older
      SciPy without stacked inputs, say), or None; see `unsupported`. The case
      is reported as ``"skipped"`` with that reason.
    - ``fdm``: the `FDMethod` of the finite differences, or None for the default.
      For a function computed less accurately than its dtype (an adaptive ODE solver)
      give its relative accuracy, ``fdm=FDMethod(eps=1e-10)``: steps and the
      differences' error estimates then account for it, instead of a looser ``rtol``.
    - ``oracle``: the same function in another AD system, as a dotted name
      (``"jax.numpy.sin"``), or None. It is imported only when an oracle test asks
      for it (`resolve_oracle`): chainrules' test suite (``tests/oracles``) calls it
      with the case's own arguments and compares JAX's ``vjp``/``jvp`` with the
      rules' pullback and pushforward, so each function has one table of inputs.

    Examples:
        A module ``chainrules/testing/cases/mymath.py``:

        >>> import numpy as np
        >>> from chainrules.testing import Case, arr, positive
        >>> CASES = [
        ...     Case(np.sin, lambda rng, dtype: (arr(rng, dtype, (3, 2)),),
        ...          dtypes=("float64", "float32", "complex128")),
        ...     Case(np.log, lambda rng, dtype: (positive(rng, dtype, (4,)),)),
        ...     Case(np.sum, lambda rng, dtype: (arr(rng, dtype, (3, 4)),), kwargs={"axis": 0}),
        ... ]
        >>> [c.display_name for c in CASES]
        ['numpy.sin', 'numpy.log', 'numpy.sum(axis=0)']
    """

    f: Callable[..., Any]
    args: Callable[[np.random.Generator, np.dtype], tuple]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    dtypes: tuple[str, ...] = ("float64", "float32")
    name: str | None = None
    frule: bool = True
    rrule: bool = True
    rtol: float | None = None
    atol: float | None = None
    output_tangent: Callable[..., Any] | None = None
    xfail: str | None = None
    skip: str | None = None
    oracle: str | None = None
    fdm: FDMethod | None = None

    def __post_init__(self) -> None:
        if not callable(self.f):
            raise TesterUsageError(
                f"Case: argument 1 (f) must be callable, got {type(self.f).__name__}; "
                "pass the function whose rules are tested, e.g. Case(np.sin, ...)."
            )
        if not callable(self.args):
            raise TesterUsageError(
                f"Case({_function_name(self.f)}): `args` must be a callable "
                f"args(rng, dtype) -> tuple, got {type(self.args).__name__}; "
                "write e.g. args=lambda rng, dtype: (arr(rng, dtype, (3,)),)."
            )
        if self.fdm is not None and not isinstance(self.fdm, FDMethod):
            raise TesterUsageError(
                f"Case({_function_name(self.f)}): `fdm` must be an FDMethod (e.g. "
                f"FDMethod(eps=1e-10)), got {type(self.fdm).__name__}."
            )
        if self.oracle is not None and (
                not isinstance(self.oracle, str) or "." not in self.oracle):
            raise TesterUsageError(
                f"Case({_function_name(self.f)}): `oracle` must be a dotted name such as "
                f"'jax.numpy.sin' (imported only by the oracle tests), got {self.oracle!r}."
            )
        bad = [d for d in self.dtypes if d not in _DTYPES]
        if bad:
            raise TesterUsageError(
                f"Case({_function_name(self.f)}): unknown dtype(s) {bad} in `dtypes`; "
                f"expected a subset of {_DTYPES}."
            )

    @property
    def display_name(self) -> str:
        """The name shown in test ids and reports (``name`` or derived from ``f``).

        >>> import numpy as np
        >>> from chainrules.testing import Case, arr
        >>> Case(np.sum, lambda rng, dt: (arr(rng, dt, (2,)),), kwargs={"axis": 0}).display_name
        'numpy.sum(axis=0)'
        """
        if self.name is not None:
            return self.name
        base = _function_name(self.f)
        if self.kwargs:
            inner = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
            return f"{base}({inner})"
        return base


def resolve_oracle(case: Case) -> Callable[..., Any]:
    """The function that ``case.oracle`` names, imported now (``"jax.numpy.sin"`` ->
    ``jax.numpy.sin``). Raises `TesterUsageError` if the case has none or the name does
    not resolve, and ImportError if its library is not installed.

    >>> import numpy as np
    >>> from chainrules.testing import Case, arr
    >>> from chainrules.testing._cases import resolve_oracle
    >>> case = Case(np.sin, lambda rng, dt: (arr(rng, dt, (2,)),), oracle="numpy.sin")
    >>> resolve_oracle(case) is np.sin
    True
    """
    import importlib

    if case.oracle is None:
        raise TesterUsageError(f"Case({case.display_name}) names no oracle.")
    module_name, _, attr = case.oracle.rpartition(".")
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attr)
    except AttributeError:
        raise TesterUsageError(
            f"Case({case.display_name}): oracle {case.oracle!r} does not exist: "
            f"{module_name} has no attribute {attr!r}.") from None


def _function_name(f: Any) -> str:
    from chainrules._naming import qualified_name

    return qualified_name(f)


def case_id(case: Case, dtype: str, mode: str) -> str:
    """A stable test id for one run of a case, e.g. ``"numpy.sin-float32-rrule"``.

    >>> import numpy as np
    >>> from chainrules.testing import Case, arr, case_id
    >>> case_id(Case(np.sin, lambda rng, dt: (arr(rng, dt, (2,)),)), "float32", "rrule")
    'numpy.sin-float32-rrule'
    """
    return f"{case.display_name}-{dtype}-{mode}"


def unsupported(feature: str, probe: Callable[[], Any]) -> str | None:
    """None when ``probe()`` runs, else why a case needing ``feature`` is skipped.

    For `Case.skip`: a case that needs a newer library than the installed one (a
    keyword, stacked inputs) says so instead of failing in the primal function.

    >>> import numpy as np
    >>> from chainrules.testing import unsupported
    >>> unsupported("np.sum", lambda: np.sum([1.0])) is None
    True
    >>> print(unsupported("sum(frobnicate=)", lambda: np.sum([1.0], frobnicate=True)))
    needs sum(frobnicate=), which the installed libraries lack (TypeError: ...)
    """
    try:
        probe()
    except (TypeError, ValueError, NotImplementedError) as e:
        return (f"needs {feature}, which the installed libraries lack "
                f"({type(e).__name__}: {e})")
    return None


def iter_catalog(namespace: str | None = None) -> Iterator[Case]:
    """Yield every `Case` of every module in ``chainrules.testing.cases``.

    ``namespace`` filters: a case is kept when its module is
    ``chainrules.testing.cases.<namespace>`` or its display name is
    ``namespace`` or starts with ``namespace + "."`` (``"numpy"`` keeps
    ``numpy.sin``). The name of a case module (``"numpy_fft"``) selects that
    module's table and imports no other (no case module's name is a prefix of a
    function's).

    >>> from chainrules.testing import iter_catalog
    >>> all(c.display_name.startswith("numpy") for c in iter_catalog("numpy"))
    True
    """
    for module_name, _, case in _catalog_rows(namespace):
        name = case.display_name
        if (
            namespace is None
            or module_name.rpartition(".")[2] == namespace
            or name == namespace
            or name.startswith(namespace + ".")
        ):
            yield case


def _catalog_rows(only: str | None = None) -> Iterator[tuple[str, int, Case]]:
    """(module, position in its CASES, case) for every case of the catalog: where a
    worker process of ``check -j`` finds a case again. ``only`` names a case module to
    read alone; another name reads them all."""
    import chainrules.testing.cases as cases_pkg

    infos = sorted(pkgutil.iter_modules(cases_pkg.__path__), key=lambda m: m.name)
    if any(info.name == only for info in infos):
        infos = [info for info in infos if info.name == only]
    for info in infos:
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{cases_pkg.__name__}.{info.name}")
        table = getattr(module, "CASES", None)
        if table is None:
            continue
        for k, case in enumerate(table):
            if not isinstance(case, Case):
                raise TesterUsageError(
                    f"iter_catalog: {module.__name__}.CASES must hold Case objects, "
                    f"found {type(case).__name__}; wrap the row in Case(...)."
                )
            yield module.__name__, k, case


# ---------------------------------------------------------------- input helpers


def _check_dtype(fn: str, dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if dt.kind not in "fc":
        raise TesterUsageError(
            f"{fn}: argument 2 (dtype) must be a float or complex dtype, got {dt}; "
            "use integers(...) for integer arrays."
        )
    return dt


def _uniform(rng: np.random.Generator, dt: np.dtype, shape: Any, low: float, high: float,
             imag: tuple[float, float]) -> Any:
    re = rng.uniform(low, high, size=shape)
    if dt.kind == "c":
        out = re + 1j * rng.uniform(imag[0], imag[1], size=shape)
    else:
        out = re
    out = np.asarray(out).astype(dt)
    return out if np.ndim(out) else dt.type(out)


def arr(rng: np.random.Generator, dtype: Any, shape: Any = (), low: float = -2.0,
        high: float = 2.0) -> Any:
    """A random array of ``dtype`` and ``shape`` with entries uniform in ``(low, high)``.

    For complex dtypes the real and imaginary parts are both drawn from
    ``(low, high)``. ``shape=()`` returns a NumPy scalar of the dtype.

    >>> import numpy as np
    >>> from chainrules.testing import arr
    >>> x = arr(np.random.default_rng(0), np.dtype("float32"), (2, 3))
    >>> x.shape, x.dtype
    ((2, 3), dtype('float32'))
    """
    dt = _check_dtype("arr", dtype)
    return _uniform(rng, dt, shape, low, high, (low, high))


def scalar(rng: np.random.Generator, dtype: Any, low: float = -2.0, high: float = 2.0) -> Any:
    """A random NumPy scalar of ``dtype`` uniform in ``(low, high)``.

    >>> import numpy as np
    >>> from chainrules.testing import scalar
    >>> type(scalar(np.random.default_rng(0), np.dtype("float32")))
    <class 'numpy.float32'>
    """
    return arr(rng, dtype, (), low, high)


def positive(rng: np.random.Generator, dtype: Any, shape: Any = (), low: float = 0.1,
             high: float = 2.0) -> Any:
    """Entries in ``(low, high)`` with ``low > 0`` (domain of ``log``, ``sqrt``...).

    For complex dtypes the real part is in ``(low, high)`` and the imaginary
    part in ``(-0.5, 0.5)``, away from the negative-real branch cut.

    >>> import numpy as np
    >>> from chainrules.testing import positive
    >>> bool((positive(np.random.default_rng(0), np.dtype("float64"), (100,)) > 0).all())
    True
    """
    dt = _check_dtype("positive", dtype)
    if not low > 0:
        raise TesterUsageError(f"positive: `low` must be > 0, got {low}.")
    return _uniform(rng, dt, shape, low, high, (-0.5, 0.5))


def unit_interval(rng: np.random.Generator, dtype: Any, shape: Any = (),
                  margin: float = 0.1) -> Any:
    """Entries in ``(-1 + margin, 1 - margin)`` (domain of ``arcsin``, ``arctanh``...).

    For complex dtypes the imaginary part is in ``(-0.5, 0.5)``.

    >>> import numpy as np
    >>> from chainrules.testing import unit_interval
    >>> x = unit_interval(np.random.default_rng(0), np.dtype("float64"), (100,))
    >>> bool((np.abs(x) < 0.9).all())
    True
    """
    dt = _check_dtype("unit_interval", dtype)
    if not 0 <= margin < 1:
        raise TesterUsageError(f"unit_interval: `margin` must be in [0, 1), got {margin}.")
    return _uniform(rng, dt, shape, -1 + margin, 1 - margin, (-0.5, 0.5))


def integers(rng: np.random.Generator, shape: Any = (), low: int = 0, high: int = 3,
             dtype: Any = np.int64) -> Any:
    """Random integers in ``[low, high)`` (index arrays, counts); they get ``NoTangent()``.

    >>> import numpy as np
    >>> from chainrules.testing import integers
    >>> integers(np.random.default_rng(0), (4,), 0, 2).dtype
    dtype('int64')
    """
    out = rng.integers(low, high, size=shape).astype(dtype)
    return out if np.ndim(out) else int(out)


def spd(rng: np.random.Generator, dtype: Any, n: int) -> np.ndarray:
    """A well-conditioned symmetric (Hermitian) positive-definite ``n × n`` matrix.

    >>> import numpy as np
    >>> from chainrules.testing import spd
    >>> a = spd(np.random.default_rng(0), np.dtype("float64"), 3)
    >>> bool(np.all(np.linalg.eigvalsh(a) > 0))
    True
    """
    dt = _check_dtype("spd", dtype)
    a = _uniform(rng, dt, (n, n), -1.0, 1.0, (-1.0, 1.0))
    return (a @ a.conj().T / n + np.eye(n)).astype(dt)


def well_conditioned(rng: np.random.Generator, dtype: Any, n: int) -> np.ndarray:
    """A random square ``n × n`` matrix with condition number of order 10.

    >>> import numpy as np
    >>> from chainrules.testing import well_conditioned
    >>> a = well_conditioned(np.random.default_rng(0), np.dtype("float64"), 4)
    >>> bool(np.linalg.cond(a) < 100)
    True
    """
    dt = _check_dtype("well_conditioned", dtype)
    a = _uniform(rng, dt, (n, n), -1.0, 1.0, (-1.0, 1.0))
    return (a / (2 * np.sqrt(n)) + 2 * np.eye(n)).astype(dt)
