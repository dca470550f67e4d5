"""Rule cases for ``numpy.fft``: every transform with ``n`` / ``s`` smaller and
larger than the input (truncation and zero-padding), odd and even lengths,
``axis`` / ``axes``, the three norms, non-contiguous inputs; real and complex
inputs (``rfft``, ``ihfft`` and friends take real inputs only), single precision
(float32, complex64) kept."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.testing import Case, arr

_ALL = ("float64", "float32", "complex128")
_REAL = ("float64", "float32")
_NORMS = ("backward", "ortho", "forward")


def _a(shape: tuple) -> Any:
    return lambda rng, dt: (arr(rng, dt, shape),)


def _single(dtypes: tuple) -> tuple:
    """The single-precision dtypes matching ``dtypes``."""
    return ("float32", "complex64") if "complex128" in dtypes else ("float32",)


def one_d_cases(f: Any, dtypes: tuple, length: int = 6, ns: str = "numpy.fft") -> list[Case]:
    """The rows of a 1-D transform ``f(x, n, axis, norm)`` (shared with ``scipy.fft``)."""
    def _name(f: Any, tag: str) -> str:
        return f"{ns}.{f.__name__}({tag})"

    single = _single(dtypes)
    cases = [Case(f, _a((length,)), dtypes=dtypes, name=_name(f, f"n={length} default")),
             Case(f, _a((2, length)), kwargs={"n": length + 1}, dtypes=single,
                  name=_name(f, "single precision")),
             Case(f, _a((length - 1,)), dtypes=dtypes, name=_name(f, f"length {length - 1}"))]
    for n in (3, 4, 9, 10):  # truncation and zero-padding, odd and even
        cases.append(Case(f, _a((length,)), kwargs={"n": n}, dtypes=dtypes,
                          name=_name(f, f"n={n}")))
    for norm in _NORMS:
        cases.append(Case(f, _a((length - 1,)), kwargs={"norm": norm, "n": 7}, dtypes=dtypes,
                          name=_name(f, f"norm={norm}, n=7")))
    cases += [
        Case(f, _a((3, 4)), kwargs={"axis": 0}, dtypes=dtypes, name=_name(f, "axis=0")),
        Case(f, _a((3, 4)), kwargs={"axis": -1, "n": 5}, dtypes=dtypes,
             name=_name(f, "2-d, n=5")),
        Case(f, lambda rng, dt: (arr(rng, dt, (4, 10))[::2, ::2],), kwargs={"axis": 0},
             dtypes=dtypes, name=_name(f, "non-contiguous")),
        Case(f, lambda rng, dt: (arr(rng, dt, (5,)), 4, 0, "ortho"), dtypes=dtypes,
             name=_name(f, "positional n, axis, norm")),
        Case(f, _a((0, 4)), dtypes=dtypes, name=_name(f, "empty batch")),
    ]
    return cases


def n_d_cases(f: Any, dtypes: tuple, default_axes: bool, ns: str = "numpy.fft") -> list[Case]:
    """The rows of an n-D transform ``f(x, s, axes, norm)`` (shared with ``scipy.fft``);
    ``default_axes``: the last two axes by default (``fft2``), else all (``fftn``)."""
    def _name(f: Any, tag: str) -> str:
        return f"{ns}.{f.__name__}({tag})"

    single = _single(dtypes)
    cases = [
        Case(f, _a((3, 4)), dtypes=dtypes, name=_name(f, "2-d")),
        Case(f, _a((3, 4)), kwargs={"s": (4, 3), "axes": (0, 1)}, dtypes=single,
             name=_name(f, "single precision")),
        Case(f, _a((2, 3, 4)), kwargs={"axes": (0, 2)}, dtypes=dtypes,
             name=_name(f, "axes=(0, 2)")),
        Case(f, _a((3, 4)), kwargs={"s": (2, 6), "axes": (0, 1)}, dtypes=dtypes,
             name=_name(f, "s=(2, 6)")),
        Case(f, _a((3, 5)), kwargs={"s": (5, 3), "axes": (-2, -1)}, dtypes=dtypes,
             name=_name(f, "s=(5, 3)")),
        Case(f, _a((4, 3)), kwargs={"s": (-1, 4), "axes": (1, 0)}, dtypes=dtypes,
             name=_name(f, "s=(-1, 4), axes=(1, 0)")),
        Case(f, lambda rng, dt: (arr(rng, dt, (6, 8))[::2, 1::2],), dtypes=dtypes,
             name=_name(f, "non-contiguous")),
    ]
    for norm in _NORMS:
        cases.append(Case(f, _a((3, 4)), kwargs={"norm": norm}, dtypes=dtypes,
                          name=_name(f, f"norm={norm}")))
    if not default_axes:  # fftn & co: all axes by default
        cases.append(Case(f, _a((2, 3, 2)), dtypes=dtypes, name=_name(f, "3-d, all axes")))
        cases.append(Case(f, _a((2, 3, 3)), kwargs={"axes": (2,)}, dtypes=dtypes,
                          name=_name(f, "one axis")))
    return cases


CASES: list[Case] = [
    *one_d_cases(np.fft.fft, _ALL),
    *one_d_cases(np.fft.ifft, _ALL),
    *one_d_cases(np.fft.rfft, _REAL),
    *one_d_cases(np.fft.irfft, _ALL),
    *one_d_cases(np.fft.hfft, _ALL),
    *one_d_cases(np.fft.ihfft, _REAL),
    *n_d_cases(np.fft.fft2, _ALL, True),
    *n_d_cases(np.fft.ifft2, _ALL, True),
    *n_d_cases(np.fft.rfft2, _REAL, True),
    *n_d_cases(np.fft.irfft2, _ALL, True),
    *n_d_cases(np.fft.fftn, _ALL, False),
    *n_d_cases(np.fft.ifftn, _ALL, False),
    *n_d_cases(np.fft.rfftn, _REAL, False),
    *n_d_cases(np.fft.irfftn, _ALL, False),
    Case(np.fft.fftshift, _a((5,)), dtypes=_ALL),
    Case(np.fft.fftshift, _a((3, 4)), kwargs={"axes": 0}, dtypes=_ALL,
         name="numpy.fft.fftshift(axes=0)"),
    Case(np.fft.fftshift, lambda rng, dt: (arr(rng, dt, (3, 5)), (0, 1)), dtypes=_ALL,
         name="numpy.fft.fftshift(positional axes)"),
    Case(np.fft.ifftshift, _a((5,)), dtypes=_ALL),
    Case(np.fft.ifftshift, _a((3, 4)), kwargs={"axes": (1,)}, dtypes=_ALL,
         name="numpy.fft.ifftshift(axes=(1,))"),
    Case(np.fft.fftfreq, lambda rng, dt: (5, float(rng.uniform(0.2, 2.0))), dtypes=("float64",)),
    Case(np.fft.fftfreq, lambda rng, dt: (6, np.float32(rng.uniform(0.2, 2.0))),
         dtypes=("float32",), name="numpy.fft.fftfreq(float32 d)"),
    Case(np.fft.rfftfreq, lambda rng, dt: (7, float(rng.uniform(0.2, 2.0))),
         dtypes=("float64",)),
]
