"""Rules for the ``fft`` extension of the array API standard, written once against ``xp``.

Every transform is linear (real-linear for the real ones): the pushforward is the
transform of the tangent; the pullback is the adjoint, another transform with the
opposite normalisation (``"backward"`` <-> ``"forward"``, ``"ortho"`` stays), the
cotangent padded or cropped back to the input's length where ``n``/``s`` changed it.
For the transforms of Hermitian signals (``irfft``, ``hfft``, their ``n``-d forms) the
half-spectrum counts twice except its zero (and Nyquist) entry, whose imaginary part the
transform ignores (its derivative is zero). ``fftshift``/``ifftshift`` are each other's
adjoint; ``fftfreq``/``rfftfreq`` are non-differentiable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chainrules.core import NoTangent, ProjectTo, ZeroTangent, array_namespace, non_differentiable
from chainrules.rules import _kit as kit
from chainrules.rules.array_api import _adjoints as adjoints
from chainrules.rules.array_api._common import is_complex
from chainrules.rules.array_api.manipulation import linear_rules

__all__ = ["register"]

def _axes(x: Any, kw: dict, nd: bool) -> list:
    """The transformed axes, non-negative."""
    if not nd:
        return [kw.get("axis", -1) % x.ndim]
    axes = kw.get("axes")
    if axes is None:
        s = kw.get("s")
        axes = range(x.ndim) if s is None else range(x.ndim - len(s), x.ndim)
    return [a % x.ndim for a in axes]


def _hermitian_weights(xp: Any, n: int, m: int, dtype: Any) -> Any:
    """``[1, 2, …, 2, 1]`` over the ``m`` entries of a half-spectrum of a length-``n``
    signal (the last is 1 only for an even ``n``: the Nyquist entry)."""
    idx = xp.arange(m)
    last = m - 1 if n % 2 == 0 else m
    return 2 - xp.astype((idx == 0) | (idx == last), dtype)


def _real(xp: Any, v: Any) -> Any:
    return xp.real(v) if is_complex(xp, v) else v


def _adjoint(fft: Any, name: str, nd: bool) -> Callable[..., Any]:
    """The adjoint of transform ``name`` of namespace module ``fft``, as a function of
    ``(xp, g, x, y, kw)``."""
    def options(x: Any, y: Any, kw: dict, axes: list) -> dict:
        norm = adjoints.DUAL_NORM[kw.get("norm", "backward")]
        if nd:
            return {"axes": axes, "norm": norm, "s": [y.shape[a] for a in axes]}
        return {"axis": axes[0], "norm": norm, "n": y.shape[axes[0]]}

    def inverse(base: str) -> Callable[..., Any]:
        return getattr(fft, base + ("n" if nd else ""))

    def complex_adjoint(xp: Any, g: Any, x: Any, y: Any, kw: dict) -> Any:
        # fft <-> ifft with the dual normalisation
        axes = _axes(x, kw, nd)
        back = inverse("ifft" if name.startswith("fft") else "fft")
        opts = options(x, y, kw, axes)
        return adjoints.fit_axes(xp, back(g, **opts), axes, tuple(x.shape))

    def real_to_half_adjoint(xp: Any, g: Any, x: Any, y: Any, kw: dict,
                             conjugate: bool) -> Any:
        # rfft: keep the first m entries of the full transform of a real signal
        axes = _axes(x, kw, nd)
        n = (kw.get("s") or [None] * len(axes))[-1] if nd else kw.get("n")
        n = x.shape[axes[-1]] if n is None else n
        full = adjoints.fit_axis(xp, xp.conj(g) if conjugate else g, axes[-1], n)
        opts = options(x, y, kw, axes)
        if nd:
            opts["s"] = [*opts["s"][:-1], n]
        else:
            opts["n"] = n
        if conjugate:  # ihfft = conj(rfft with the dual norm): the adjoint keeps norm
            opts["norm"] = kw.get("norm", "backward")
        back = inverse("ifft")
        return adjoints.fit_axes(xp, _real(xp, back(full, **opts)), axes, tuple(x.shape))

    def half_to_real_adjoint(xp: Any, g: Any, x: Any, y: Any, kw: dict,
                             conjugate: bool) -> Any:
        # irfft: the half-spectrum counts twice but for its zero and Nyquist entries
        axes = _axes(x, kw, nd)
        n = y.shape[axes[-1]]
        opts = options(x, y, kw, axes)
        if conjugate:  # hfft = irfft(conj(x)) with the dual norm
            opts["norm"] = kw.get("norm", "backward")
        spectrum = inverse("rfft")(g, **opts)
        w = _hermitian_weights(xp, n, spectrum.shape[axes[-1]], _real(xp, spectrum).dtype)
        out = spectrum * adjoints.along(xp, w, axes[-1], spectrum.ndim)
        out = xp.conj(out) if conjugate else out
        return adjoints.fit_axes(xp, out, axes, tuple(x.shape))

    if name in ("fft", "ifft", "fftn", "ifftn"):
        return complex_adjoint
    if name in ("rfft", "rfftn"):
        return lambda xp, g, x, y, kw: real_to_half_adjoint(xp, g, x, y, kw, False)
    if name == "ihfft":
        return lambda xp, g, x, y, kw: real_to_half_adjoint(xp, g, x, y, kw, True)
    if name in ("irfft", "irfftn"):
        return lambda xp, g, x, y, kw: half_to_real_adjoint(xp, g, x, y, kw, False)
    return lambda xp, g, x, y, kw: half_to_real_adjoint(xp, g, x, y, kw, True)  # hfft


def _transform_rules(f: Any, name: str, adjoint: Callable[..., Any]) -> None:
    def transform_rrule(x: Any, **kw: Any) -> Any:
        y = f(x, **kw)
        project_x = ProjectTo(x)

        @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent())))
        def transform_pullback(y_bar: Any) -> tuple:
            xp = array_namespace(x)
            return NoTangent(), project_x(adjoint(xp, y_bar, x, y, kw))

        return y, transform_pullback

    def transform_frule(dargs: tuple, x: Any, **kw: Any) -> Any:
        y = f(x, **kw)
        x_dot = kit.nonzero(dargs[1])
        return y, ZeroTangent() if x_dot is None else f(x_dot, **kw)

    kit.define_rules(f, object, frule_fn=transform_frule, rrule_fn=transform_rrule, name=name)


def _shift_adjoint(inverse: Any) -> Callable[..., Any]:
    """``fftshift`` and ``ifftshift`` are permutations, each the other's inverse."""

    def shift_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
        return inverse(g, *args, **kw)

    return shift_adjoint


_TRANSFORMS = ("fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
               "ihfft")


def register(xp: Any, fresh: Callable[[Any], bool]) -> list[str]:
    """Register the fft rules on ``xp.fft``'s functions that ``fresh`` accepts."""
    fft = getattr(xp, "fft", None)
    if fft is None:
        return []
    done = []
    for name in _TRANSFORMS:
        f = getattr(fft, name, None)
        if f is not None and fresh(f):
            _transform_rules(f, name, _adjoint(fft, name, name.endswith("n")))
            done.append("fft." + name)
    shift, ishift = getattr(fft, "fftshift", None), getattr(fft, "ifftshift", None)
    if shift is not None and ishift is not None:
        for name, f, inverse in (("fftshift", shift, ishift), ("ifftshift", ishift, shift)):
            if fresh(f):
                linear_rules(f, name, _shift_adjoint(inverse))
                done.append("fft." + name)
    for name in ("fftfreq", "rfftfreq"):
        f = getattr(fft, name, None)
        if f is not None and fresh(f):
            non_differentiable(f)
            done.append("fft." + name)
    return done
