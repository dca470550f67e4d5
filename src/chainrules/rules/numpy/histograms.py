"""Rules for ``np.histogram``: ``(hist, bin_edges)`` with respect to ``weights``, the bin
edges' sources and, through the edges, ``a``.

- Which bin a value falls into is piecewise constant, so ``a`` enters ``hist`` only
  through the edges.
- The edges are a function of the inputs: given as ``bins`` (an array: the identity),
  spread over ``range`` (linear in its two ends), or, with neither, over ``a``'s minimum
  and maximum (so the smallest and largest values get the edges' cotangent).
- ``weights`` enter linearly: ``hist`` sums each bin's weights.
- ``density=True`` divides by each bin's width and the total: ``n / (db · S)``, which
  depends on the weights and on the edges.

``bins`` given as a string (``"auto"``, ``"fd"``…) chooses the edges by an estimator of
``a``: their derivative with respect to ``a`` is ``not_implemented`` (with weights only,
the rule still works).

Examples:
    >>> import numpy as np
    >>> from chainrules import rrule
    >>> (h, edges), pullback = rrule(np.histogram, np.array([0.2, 0.4, 0.9]), 2, None, None,
    ...                              np.array([1.0, 2.0, 3.0]))
    >>> h
    array([3., 3.])
    >>> pullback((np.array([1.0, 10.0]), np.zeros(3)))[5]  # the weights' cotangent
    array([ 1.,  1., 10.])
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from chainrules.core import NoTangent, NotImplementedTangent, Tangent, frule, not_implemented, rrule
from chainrules.rules import _kit as kit
from chainrules.rules.numpy._linear import scatter

_SIG = inspect.signature(np.histogram)
_NAMES = ("a", "bins", "range", "density", "weights")
_ESTIMATED = ("numpy.histogram: bin edges chosen by an estimator of a (bins given as a "
              "string) have no derivative in this rule; pass the number of bins or the "
              "edges to differentiate with respect to a")


class _Histogram:
    """The primal's pieces: bin of every value, edges, counts, and how the edges were
    made (``source``: "bins" array, "range", "extremes" of a, or "estimated")."""

    def __init__(self, a: Any, p: dict) -> None:
        self.a = np.asarray(a)
        self.hist, self.edges = np.histogram(a, p["bins"], p["range"], p["density"],
                                             p["weights"])
        self.density = bool(p["density"])
        bins = p["bins"]
        if isinstance(bins, str):
            self.source = "estimated"
        elif np.ndim(bins) == 1:
            self.source = "bins"
        elif p["range"] is not None:
            self.source = "range"
        else:
            self.source = "extremes"
        flat = self.a.reshape(-1)
        nb = len(self.edges) - 1
        idx = np.searchsorted(self.edges, flat, side="right") - 1
        idx[flat == self.edges[-1]] = nb - 1  # the last bin is closed on the right
        self.valid = (idx >= 0) & (idx < nb)
        self.idx = np.where(self.valid, idx, 0)
        self.nb = nb
        w = p["weights"]
        ones = np.ones(flat.shape) if w is None else np.asarray(w).reshape(-1)
        self.n = self._bin_sums(ones)

    def _bin_sums(self, values: np.ndarray) -> np.ndarray:
        v = np.where(self.valid, np.broadcast_to(values, self.idx.shape), 0)
        if v.dtype.kind == "c":
            return (np.bincount(self.idx, v.real, minlength=self.nb)
                    + 1j * np.bincount(self.idx, v.imag, minlength=self.nb))
        return np.bincount(self.idx, v.astype(np.float64), minlength=self.nb)

    def edge_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """``d edges / d lo`` and ``d edges / d hi`` for edges spread over ``[lo, hi]``."""
        k = np.arange(self.nb + 1) / max(self.nb, 1)
        return 1 - k, k

    def extremes(self) -> tuple[int, int] | None:
        if self.a.size == 0:
            return None  # the edges are the constants 0 .. 1
        flat = self.a.reshape(-1)
        return int(np.argmin(flat)), int(np.argmax(flat))

    def hist_tangent(self, n_dot: Any, e_dot: Any) -> Any:
        if not self.density:
            return n_dot
        db = np.diff(self.edges)
        s = self.n.sum()
        out: Any = 0.0
        if n_dot is not None:
            out = n_dot / (db * s) - self.n * n_dot.sum() / (db * s * s)
        if e_dot is not None:
            out = out - self.n * np.diff(e_dot) / (db * db * s)
        return out

    def hist_adjoint(self, h_bar: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The cotangents of the bin sums ``n`` and of the edges (density only)."""
        if not self.density:
            return h_bar, None
        db = np.diff(self.edges)
        s = self.n.sum()
        n_c = np.conj(self.n)
        n_bar = h_bar / (db * s) - np.sum(h_bar * n_c / (db * s * s))
        db_bar = -h_bar * n_c / (db * db * s)
        # each bin width is the difference of its edges (joined, not added into an array
        # in place: run on values of an outer trace this stays differentiable)
        zero = np.zeros(1, np.result_type(db_bar, np.float64))
        return n_bar, np.concatenate([zero, db_bar]) - np.concatenate([db_bar, zero])


def _bind(args: tuple, kwargs: dict) -> dict:
    bound = _SIG.bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def _edges_tangent(h: _Histogram, p: dict, dots: dict) -> Any:
    """The edges' tangent, or None for zero."""
    if h.source == "bins":
        d = dots.get("bins")
        return None if d is None else kit.dense_tangent(d, p["bins"])
    if h.source == "range":
        d = dots.get("range")
        if d is None:
            return None
        lo_dot, hi_dot = (kit.nonzero(t) for t in (d.backing if isinstance(d, Tangent) else d))
        w_lo, w_hi = h.edge_weights()
        return (0 if lo_dot is None else w_lo * lo_dot) + (0 if hi_dot is None else
                                                          w_hi * hi_dot)
    d = dots.get("a")
    if d is None:
        return None
    if h.source == "estimated":
        return not_implemented(_ESTIMATED)
    ends = h.extremes()
    if ends is None:
        return None
    flat = kit.dense_tangent(d, p["a"]).reshape(-1)
    w_lo, w_hi = h.edge_weights()
    return w_lo * flat[ends[0]] + w_hi * flat[ends[1]]


@frule.register(np.histogram)
def histogram_frule(dargs: tuple, *args: Any, **kwargs: Any) -> Any:
    p = _bind(args, kwargs)
    h = _Histogram(p["a"], p)
    y = (h.hist, h.edges)
    dots = {}
    for name, t, x in zip(_NAMES, dargs[1:], args):
        t = kit.nonzero(t)
        if t is not None and kit.is_differentiable(x):
            dots[name] = t
    e_dot = _edges_tangent(h, p, dots)
    if isinstance(e_dot, NotImplementedTangent):
        return y, Tangent[tuple](e_dot, e_dot)
    w_dot = dots.get("weights")
    n_dot = (
        None if w_dot is None else h._bin_sums(kit.dense_tangent(w_dot, p["weights"]).reshape(-1))
    )
    h_dot = h.hist_tangent(n_dot, e_dot)
    h_out = kit.zero_for(h.hist) if h_dot is None or (
        not h.density and n_dot is None) else kit.fit_output(h_dot, h.hist)
    e_out = kit.zero_for(h.edges) if e_dot is None else kit.fit_output(e_dot, h.edges)
    return y, Tangent[tuple](h_out, e_out)


@rrule.register(np.histogram)
def histogram_rrule(*args: Any, **kwargs: Any) -> Any:
    p = _bind(args, kwargs)
    h = _Histogram(p["a"], p)
    y = (h.hist, h.edges)

    @kit.zero_guard(lambda: (NoTangent(), *(kit.zero_for(x) for x in args)))
    def histogram_pullback(y_bar: Any) -> tuple:
        items = y_bar.backing if isinstance(y_bar, Tangent) else y_bar
        h_bar, e_bar = (kit.nonzero(b) for b in items)
        n_bar, e_from_h = (None, None) if h_bar is None else h.hist_adjoint(np.asarray(h_bar))
        e_total = e_from_h if e_bar is None else (
            np.asarray(e_bar) + (0 if e_from_h is None else e_from_h))
        bars: dict = {}
        if n_bar is not None and p["weights"] is not None:
            bars["weights"] = np.where(h.valid, np.asarray(n_bar)[h.idx], 0).reshape(
                np.shape(p["weights"]))
        if e_total is not None:
            if h.source == "bins":
                bars["bins"] = e_total
            elif h.source == "range":
                w_lo, w_hi = h.edge_weights()
                bars["range"] = Tangent[tuple](np.sum(w_lo * e_total), np.sum(w_hi * e_total))
            elif h.source == "estimated":
                bars["a"] = not_implemented(_ESTIMATED)
            elif (ends := h.extremes()) is not None:
                w_lo, w_hi = h.edge_weights()
                # the two extremes' cotangents summed into their places (np.bincount)
                a_bar = scatter(np.stack([np.sum(w_lo * e_total), np.sum(w_hi * e_total)]),
                                np.array([ends[0], ends[1]]), h.a.size)
                bars["a"] = a_bar.reshape(h.a.shape)
        out: list = [NoTangent()]
        for name, x in zip(_NAMES, args):
            b = bars.get(name)
            if name == "range" and b is not None:
                out.append(b)
            elif b is None or isinstance(b, NotImplementedTangent):
                out.append(kit.zero_for(x) if b is None else b)
            else:
                out.append(kit.array_projector(x)(b))
        return tuple(out)

    return y, histogram_pullback
