"""Hypothesis strategies for primals (optional extra: ``pip install chainrules[hypothesis]``).

Draw inputs for property-based rule tests: shapes, float/complex dtypes, values
inside a function's domain, and whole argument tuples.

>>> from hypothesis import given, settings
>>> import numpy as np
>>> from chainrules.testing import test_rrule
>>> from chainrules.testing.strategies import arrays
>>> @settings(max_examples=5, deadline=None)
... @given(arrays(domain="positive", max_side=4))
... def check_log(x):
...     test_rrule(np.log, x)
>>> check_log()
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    from hypothesis import strategies as st
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "chainrules.testing.strategies needs hypothesis: install chainrules[hypothesis] "
        "(pip install 'chainrules[hypothesis]')."
    ) from e

from chainrules.testing._errors import TesterUsageError

__all__ = ["DOMAINS", "arrays", "dtypes", "primals", "scalars", "shapes"]

#: name -> (low, high) of the real part; imaginary parts lie in (-0.5, 0.5) for
#: restricted domains and in (low, high) for "real".
DOMAINS: dict[str, tuple[float, float]] = {
    "real": (-2.0, 2.0),
    "positive": (0.1, 2.0),
    "negative": (-2.0, -0.1),
    "unit_interval": (-0.9, 0.9),
    "above_one": (1.1, 3.0),
}

_FLOAT = ("float64", "float32")
_COMPLEX = ("complex128", "complex64")


def dtypes(complex: bool = False) -> st.SearchStrategy[np.dtype]:
    """float64/float32 dtypes, plus complex128/complex64 when ``complex=True``.

    >>> from chainrules.testing.strategies import dtypes
    >>> from hypothesis import find
    >>> find(dtypes(), lambda d: True) in (np.dtype("float64"), np.dtype("float32"))
    True
    """
    names = _FLOAT + (_COMPLEX if complex else ())
    return st.sampled_from([np.dtype(n) for n in names])


def shapes(min_dims: int = 0, max_dims: int = 3, max_side: int = 5) -> st.SearchStrategy:
    """Array shapes (tuples of ints in [1, max_side]).

    >>> from chainrules.testing.strategies import shapes
    >>> from hypothesis import find
    >>> len(find(shapes(min_dims=2, max_dims=2), lambda s: True))
    2
    """
    return st.lists(st.integers(1, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


def _bounds(domain: str) -> tuple[float, float]:
    try:
        return DOMAINS[domain]
    except KeyError:
        raise TesterUsageError(
            f"strategies: unknown domain {domain!r}; expected one of {sorted(DOMAINS)}."
        ) from None


def _values(dtype: np.dtype, shape: tuple, domain: str) -> st.SearchStrategy:
    low, high = _bounds(domain)
    n = int(np.prod(shape)) if shape else 1
    part = st.floats(low, high, allow_nan=False, allow_infinity=False, width=64)
    ilow, ihigh = (low, high) if domain == "real" else (-0.5, 0.5)
    ipart = st.floats(ilow, ihigh, allow_nan=False, allow_infinity=False, width=64)
    if dtype.kind == "c":
        flat = st.lists(st.tuples(part, ipart), min_size=n, max_size=n).map(
            lambda v: np.array([complex(a, b) for a, b in v]))
    else:
        flat = st.lists(part, min_size=n, max_size=n).map(np.array)
    return flat.map(lambda a: a.astype(dtype).reshape(shape))


def arrays(dtype: Any = None, shape: Any = None, domain: str = "real", *,
           complex: bool = False, max_side: int = 5) -> st.SearchStrategy:
    """Float or complex arrays with values in ``domain`` (see `DOMAINS`).

    ``dtype`` / ``shape`` fix those; ``None`` draws them (`dtypes`, `shapes`).

    >>> from chainrules.testing.strategies import arrays
    >>> from hypothesis import find
    >>> x = find(arrays("float32", (2, 3), "positive"), lambda x: True)
    >>> x.dtype, x.shape, bool((x > 0).all())
    (dtype('float32'), (2, 3), True)
    """
    _bounds(domain)
    dt = dtypes(complex) if dtype is None else st.just(np.dtype(dtype))
    sh = shapes(1, 3, max_side) if shape is None else st.just(tuple(shape))
    return st.tuples(dt, sh).flatmap(lambda p: _values(p[0], p[1], domain))


def scalars(dtype: Any = "float64", domain: str = "real") -> st.SearchStrategy:
    """Scalars in ``domain``: Python ``float``/``complex`` for 64-bit dtypes, NumPy
    scalars for 32-bit ones.

    >>> from chainrules.testing.strategies import scalars
    >>> from hypothesis import find
    >>> type(find(scalars("float32"), lambda x: True))
    <class 'numpy.float32'>
    """
    dt = np.dtype(dtype)
    py = {"float64": float, "complex128": complex}.get(dt.name)
    return _values(dt, (), domain).map(lambda a: py(a[()]) if py else a[()])


def primals(*specs: tuple[str, Any], dtype: Any = None,
            complex: bool = False) -> st.SearchStrategy[tuple]:
    """Argument tuples that share one dtype: each spec is ``(domain, shape)``, with
    ``shape=None`` for a drawn shape and ``()`` for a scalar.

    >>> from chainrules.testing.strategies import primals
    >>> from hypothesis import find
    >>> x, y = find(primals(("real", (3,)), ("positive", (3,)), dtype="float64"), lambda p: True)
    >>> x.shape, bool((y > 0).all())
    ((3,), True)
    """
    dt = dtypes(complex) if dtype is None else st.just(np.dtype(dtype))

    def build(d: np.dtype) -> st.SearchStrategy:
        parts = []
        for domain, shape in specs:
            if shape == ():
                parts.append(scalars(d, domain))
            else:
                parts.append(arrays(d, shape, domain))
        return st.tuples(*parts)

    return dt.flatmap(build)
