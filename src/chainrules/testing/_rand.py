"""Seeded random tangents for any primal, and the tester seed."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from chainrules.testing._errors import TesterUsageError

__all__ = ["default_seed", "make_rng", "rand_tangent"]

SEED_ENV = "CHAINRULES_TEST_SEED"


def default_seed() -> int:
    """The seed the testers use when none is given: ``$CHAINRULES_TEST_SEED`` or 0.

    >>> from chainrules.testing import default_seed
    >>> isinstance(default_seed(), int)
    True
    """
    raw = os.environ.get(SEED_ENV, "0")
    try:
        return int(raw)
    except ValueError:
        raise TesterUsageError(
            f"chainrules.testing: environment variable {SEED_ENV} must be an integer, "
            f"got {raw!r}; unset it or set e.g. {SEED_ENV}=3."
        ) from None


def make_rng(rng: np.random.Generator | int | None = None) -> np.random.Generator:
    """A ``np.random.Generator`` from a generator, a seed, or `default_seed`.

    >>> from chainrules.testing import make_rng
    >>> float(make_rng(1).standard_normal()) == float(make_rng(1).standard_normal())
    True
    """
    if rng is None:
        return np.random.default_rng(default_seed())
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise TesterUsageError(
        f"rng must be a numpy.random.Generator, an int seed or None, got {type(rng).__name__}."
    )


def rand_tangent(x: Any, rng: np.random.Generator | int | None = None) -> Any:
    """A random tangent for primal ``x``, reproducible for a given ``rng`` / seed.

    - float / complex scalars and float / complex arrays: same type, dtype and
      shape (float32 stays float32, complex stays complex), entries ~ N(0, 1);
    - ``int``, ``bool``, ``str``, ``None``, integer/bool arrays, functions:
      ``NoTangent()`` (ints are usually counts and indices; give an explicit
      float tangent with ``with_tangent`` to differentiate through one);
    - JAX arrays, PyTorch tensors, ``array_api_strict`` arrays: as for a NumPy copy,
      in the array's library;
    - tuples, lists, dicts, namedtuples, dataclasses, attrs classes and plain
      objects: a ``Tangent`` of the same structure (``NoTangent()`` if no field
      can be perturbed).

    ``rng`` is a ``np.random.Generator``, a seed, or ``None`` (`default_seed`).

    Examples:
        >>> import numpy as np
        >>> from chainrules.testing import rand_tangent
        >>> rand_tangent(np.zeros((2, 3), dtype=np.float32), rng=0).dtype
        dtype('float32')
        >>> rand_tangent(3)
        NoTangent()
        >>> rand_tangent((1.0, "a"), rng=0)
        Tangent[tuple](0.12573022..., NoTangent())
    """
    from chainrules.testing._vec import spec_of

    gen = make_rng(rng)
    from chainrules.testing import _foreign

    if _foreign.find_foreign(x):
        # the same numbers as for a NumPy copy of x, as arrays of x's library
        return _foreign.to_xp(_foreign.array_namespace(*_foreign.find_foreign(x)),
                              rand_tangent(_foreign.to_numpy(x), gen), x)
    spec = spec_of(x, None, "x")
    vec = gen.standard_normal(spec.size)
    return spec.vec_to_tangent(vec)
