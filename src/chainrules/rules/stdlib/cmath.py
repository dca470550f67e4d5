"""Rules for the standard library's ``cmath`` module.

Arguments are Python ``complex`` or real numbers (``float``, ``int`` with a float
tangent, NumPy scalars); the results are complex. A real argument gets the real
part of its cotangent (DESIGN §2).

Covered with frule + rrule:

- holomorphic, by ``scalar_rule``: ``sin``, ``cos``, ``tan``, ``asin``, ``acos``,
  ``atan``, ``sinh``, ``cosh``, ``tanh``, ``asinh``, ``acosh``, ``atanh``,
  ``exp``, ``log10``, ``sqrt``; ``rect(r, phi)`` (real arguments);
- hand-written: ``log`` (with and without base; holomorphic in both),
  ``phase`` and ``polar`` (real-valued, not holomorphic: the cotangent of ``z``
  for the real output ``phase(z)`` is ``y_bar * i / conj(z)``, that of ``abs(z)``
  is ``y_bar * z / |z|``).

Non-differentiable: ``isclose``, ``isfinite``, ``isinf``, ``isnan``.

Conventions: the derivatives are those of the principal branches, valid off the
branch cuts (e.g. ``log``, ``sqrt``, ``phase`` on the negative real axis). At
``z == 0``, ``phase`` and ``polar`` give zero derivatives; ``sqrt`` has an
infinite slope there (``inf``, no exception).
"""

from __future__ import annotations

import cmath
from typing import Any

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, ZeroTangent, frule, rrule, scalar_rule, unthunk
from chainrules.rules import _kit as kit

_LN10 = cmath.log(10.0).real



scalar_rule(cmath.sin, lambda z: cmath.cos(z))
scalar_rule(cmath.cos, lambda z: -cmath.sin(z))
scalar_rule(cmath.tan, lambda z, *, y: 1 + y * y)
scalar_rule(cmath.asin, lambda z: 1 / (cmath.sqrt(1 - z) * cmath.sqrt(1 + z)))
scalar_rule(cmath.acos, lambda z: -1 / (cmath.sqrt(1 - z) * cmath.sqrt(1 + z)))
scalar_rule(cmath.atan, lambda z: 1 / (1 + z * z))
scalar_rule(cmath.sinh, lambda z: cmath.cosh(z))
scalar_rule(cmath.cosh, lambda z: cmath.sinh(z))
scalar_rule(cmath.tanh, lambda z, *, y: 1 - y * y)
scalar_rule(cmath.asinh, lambda z: 1 / (cmath.sqrt(1 - 1j * z) * cmath.sqrt(1 + 1j * z)))
scalar_rule(cmath.acosh, lambda z: 1 / (cmath.sqrt(z - 1) * cmath.sqrt(z + 1)))
scalar_rule(cmath.atanh, lambda z: 1 / ((1 - z) * (1 + z)))
scalar_rule(cmath.exp, lambda z, *, y: y)
scalar_rule(cmath.log10, lambda z: 1 / (z * _LN10))
scalar_rule(cmath.sqrt, lambda z, *, y: 0.5 / y if y else complex("inf"))
scalar_rule(cmath.rect, lambda r, phi, *, y: (cmath.rect(1.0, phi), 1j * y))


@rrule.register(cmath.log)
def log_rrule(z, *base) -> Any:
    y = cmath.log(z, *base)
    project_z = ProjectTo(z)
    project_base = [ProjectTo(b) for b in base]

    @kit.zero_guard((NoTangent(), ZeroTangent(), *(ZeroTangent() for _ in base)))
    def log_pullback(y_bar: Any) -> tuple:
        if not base:
            return NoTangent(), project_z(y_bar / complex(z).conjugate())
        b = complex(base[0])
        log_b = cmath.log(b)
        # y = log(z) / log(b): dy/dz = 1 / (z log b), dy/db = -y / (b log b)
        return (NoTangent(), project_z(y_bar / (complex(z) * log_b).conjugate()),
                project_base[0](-y_bar * (y / (b * log_b)).conjugate()))

    return y, log_pullback


@frule.register(cmath.log)
def log_frule(dargs: tuple, z, *base) -> Any:
    y = cmath.log(z, *base)
    log_b = cmath.log(base[0]) if base else 1.0
    y_dot: Any = ZeroTangent()
    z_dot = unthunk(dargs[1])
    if not kit.is_zero(z_dot):
        y_dot = complex(z_dot) / (complex(z) * log_b)
    if base:
        b_dot = unthunk(dargs[2])
        if not kit.is_zero(b_dot):
            y_dot = y_dot + (-y * complex(b_dot) / (complex(base[0]) * log_b))
    return y, y_dot


def _phase_gradient(z: complex) -> complex:
    """d phase / d Re z + i d phase / d Im z = i z / |z|^2 (0 at z == 0)."""
    r2 = z.real * z.real + z.imag * z.imag
    return 1j * z / r2 if r2 else 0j


def _abs_gradient(z: complex) -> complex:
    """d|z| / d Re z + i d|z| / d Im z = z / |z| (0 at z == 0)."""
    r = abs(z)
    return z / r if r else 0j


def _real_pushforward(g: complex, z_dot: Any) -> float:
    """The pushforward of a real function of z with gradient g: Re(conj(g) z_dot)."""
    return (g.conjugate() * complex(z_dot)).real


@rrule.register(cmath.phase)
def phase_rrule(z) -> Any:
    y = cmath.phase(z)
    project_z = ProjectTo(z)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def phase_pullback(y_bar: Any) -> tuple:
        return NoTangent(), project_z(y_bar.real * _phase_gradient(complex(z)))

    return y, phase_pullback


@frule.register(cmath.phase)
def phase_frule(dargs: tuple, z) -> Any:
    y = cmath.phase(z)
    z_dot = unthunk(dargs[1])
    if kit.is_zero(z_dot):
        return y, ZeroTangent()
    return y, _real_pushforward(_phase_gradient(complex(z)), z_dot)


@rrule.register(cmath.polar)
def polar_rrule(z) -> Any:
    y = cmath.polar(z)
    project_z = ProjectTo(z)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def polar_pullback(y_bar: Any) -> tuple:
        r_bar, phi_bar = (unthunk(t) for t in y_bar)
        z_bar: Any = ZeroTangent()
        if not kit.is_zero(r_bar):
            z_bar = r_bar.real * _abs_gradient(complex(z))
        if not kit.is_zero(phi_bar):
            z_bar = z_bar + phi_bar.real * _phase_gradient(complex(z))
        return NoTangent(), project_z(z_bar)

    return y, polar_pullback


@frule.register(cmath.polar)
def polar_frule(dargs: tuple, z) -> Any:
    y = cmath.polar(z)
    z_dot = unthunk(dargs[1])
    if kit.is_zero(z_dot):
        return y, ZeroTangent()
    c = complex(z)
    return y, core.Tangent[tuple](_real_pushforward(_abs_gradient(c), z_dot),
                                  _real_pushforward(_phase_gradient(c), z_dot))


for _f in (cmath.isclose, cmath.isfinite, cmath.isinf, cmath.isnan):
    core.non_differentiable(_f)
del _f
