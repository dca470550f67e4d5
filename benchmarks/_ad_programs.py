"""The programs the first-call benchmark differentiates, written once for every library.

``np`` is a module global: each fresh process points it at the library under test
(NumPy for chainrules.ad, ``autograd.numpy``, ``torch``, ``jax.numpy``) before its first
call, so every library runs the same source text. Only operations all four share are
used. The file is a real module (not ``exec``'d text) because chainrules.ad reads and
rewrites the source of what it differentiates, and that reading is part of a first call.
"""

import numpy as np


def loss20(w, x, y):
    """A small regression loss: about twenty NumPy operations on ``x @ w``."""
    z = x @ w
    h = np.tanh(z)
    s = np.sin(h) * np.cos(z)
    e = np.exp(-0.5 * z * z)
    r = np.sqrt(1.0 + h * h)
    u = s + e / r
    v = np.log1p(np.exp(u))
    d = h - y
    q = np.sum(d * d)
    m = np.mean(v)
    a = np.abs(u) * r
    k = np.mean(a)
    p = x.T @ h
    c = np.sum(w * w) + np.sum(p * w) / 8.0
    head = z[0:3]
    t = np.sum(head * head) / 3.0
    return m + 0.5 * q + 0.01 * c + k + t


def small(v):
    """A small function of a 5-vector for the Hessian."""
    return np.sum(np.sin(v) * v * v) + v[0] * v[1] + np.sum(np.exp(0.1 * v))
