"""Rule cases for ``np.histogram`` (``chainrules.rules.numpy.histograms``)."""

from __future__ import annotations

import numpy as np

from chainrules.testing import Case, arr

_REAL = ("float64", "float32")
_ALL = ("float64", "float32", "complex128")


def _values(rng, n):
    """Values in [0, 1) away from the edges k/8 (no perturbation moves one across)."""
    return (rng.integers(0, 8, n) + rng.uniform(0.2, 0.8, n)) / 8


def _spaced(rng, n):
    """``n`` values at least 0.05 apart and from the edges 0.26 and 0.51. With weights
    and edges given, NumPy sums the weights in the order of ``a``: two values close
    enough to swap places within a finite difference change the float32 sums'
    rounding (1e-5 at seed 28), which is no derivative."""
    slots = np.array([0.05, 0.12, 0.19, 0.33, 0.40, 0.46, 0.58, 0.66, 0.74, 0.82, 0.90])
    return rng.permutation(slots)[:n] + rng.uniform(-0.01, 0.01, n)


def _thirds(rng, n, dt):
    """The extremes 0 and 1, and values near the middles of the thirds of [0, 1], far
    from the edges 1/3 and 2/3 that three bins spread over the extremes put there."""
    middle = (rng.integers(0, 3, n - 2) + 0.5 + rng.uniform(-0.2, 0.2, n - 2)) / 3
    return rng.permutation(np.concatenate([[0.0, 1.0], middle])).astype(dt)


def _weighted(nbins, **extra):
    def args(rng, dt):
        a = _values(rng, 10)
        w = arr(rng, dt, (10,))
        return (a, nbins, extra.get("range"), extra.get("density"), w)
    return args


CASES: list[Case] = [
    Case(np.histogram, _weighted(4, range=(0.0, 1.0)), dtypes=_ALL,
         name="histogram(weights, range)"),
    Case(np.histogram, lambda rng, dt: (_thirds(rng, 10, dt), 3), dtypes=_REAL,
         name="histogram(edges from a's extremes)"),
    Case(np.histogram, lambda rng, dt: (_values(rng, 10), 4, (arr(rng, dt, ()) - 2,
                                                              arr(rng, dt, ()) + 3)),
         dtypes=_REAL, name="histogram(edges from range)"),
    Case(np.histogram, lambda rng, dt: (_values(rng, 10), np.array([-0.5, 0.26, 0.51, 1.5],
                                                                     dt)),
         dtypes=_REAL, name="histogram(edges given)"),
    Case(np.histogram, lambda rng, dt: (_spaced(rng, 10), np.array([-0.5, 0.26, 0.51, 1.5],
                                                                     dt), None, True,
                                        arr(rng, dt, (10,)) + 3), dtypes=_REAL,
         name="histogram(density, weights, edges given)"),
    Case(np.histogram, lambda rng, dt: (_thirds(rng, 10, dt), 3, None, True),
         dtypes=_REAL, name="histogram(density, edges from a)"),
]
