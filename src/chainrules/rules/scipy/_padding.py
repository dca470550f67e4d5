"""The adjoint of extending a signal past its ends (``np.pad``'s modes, SciPy's odd
extension), shared by the ``scipy.signal`` rule modules (not a rule module itself)."""

from __future__ import annotations

import numpy as np

__all__ = ["extension_adjoint"]


def _fold(e_bar: np.ndarray, n: int, before: int, mode: str) -> np.ndarray:
    """The adjoint of ``np.pad(x, (before, after), mode)`` along the last axis, for the
    periodic modes ``"wrap"``, ``"symmetric"``, ``"reflect"``: every padded sample is
    a copy of ``x[map(j - before)]``, so the cotangents of the copies are summed into
    one period and folded back. (``np.pad``'s own pullback builds an ``n x n``
    matrix per axis, too big for long signals.)"""
    if mode == "reflect" and n == 1:
        return np.sum(e_bar, axis=-1, keepdims=True)
    period = {"wrap": n, "symmetric": 2 * n, "reflect": 2 * n - 2}[mode]
    lead = (-before) % period
    tail = (-(lead + e_bar.shape[-1])) % period
    batch = [(0, 0)] * (e_bar.ndim - 1)
    padded = np.pad(e_bar, [*batch, (lead, tail)])
    u = np.sum(padded.reshape(*padded.shape[:-1], -1, period), axis=-2)
    if mode == "wrap":
        return u
    if mode == "symmetric":
        return u[..., :n] + np.flip(u[..., n:], -1)
    return u[..., :n] + np.pad(np.flip(u[..., n:], -1), [*batch, (1, 1)])


def extension_adjoint(e_bar: np.ndarray, n: int, before: int, mode: str) -> np.ndarray:
    """The adjoint of extending the last axis (length ``n``) by ``before`` samples in
    front and the rest behind, as ``np.pad`` does with ``mode``: ``"constant"`` (zeros),
    ``"edge"``, ``"wrap"``, ``"symmetric"``, ``"reflect"`` or ``"odd"`` (odd
    reflection, SciPy's ``odd_ext``: ``2 x[0] - x[k]`` in front, likewise behind)."""
    batch = [(0, 0)] * (e_bar.ndim - 1)
    mid = e_bar[..., before:before + n]
    if mode == "constant":
        return mid
    left, right = e_bar[..., :before], e_bar[..., before + n:]
    if mode in ("edge", "odd"):
        ends = np.pad(np.sum(left, axis=-1, keepdims=True), [*batch, (0, n - 1)]) + \
            np.pad(np.sum(right, axis=-1, keepdims=True), [*batch, (n - 1, 0)])
        if mode == "edge":
            return mid + ends
        if max(left.shape[-1], right.shape[-1]) >= n:
            # np.pad re-anchors odd reflections past one length; SciPy's odd_ext refuses
            raise ValueError(f"odd extension by {max(left.shape[-1], right.shape[-1])} "
                             f"of a length-{n} axis: at most {n - 1} is supported")
        outside = np.concatenate([left, np.zeros_like(mid), right], axis=-1)
        return mid + 2 * ends - _fold(outside, n, before, "reflect")
    return _fold(e_bar, n, before, mode)
