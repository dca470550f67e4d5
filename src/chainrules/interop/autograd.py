"""Use chainrules rules from HIPS autograd.

`autograd_primitive` turns a function that has an ``rrule`` / ``frule`` into an
autograd primitive (``defvjp_argnums`` from the rrule, ``defjvp_argnums`` from the
frule).

Importing this module does not import autograd; the first call does, and raises
`FrameworkNotInstalledError` ("install
chainrules[autograd]") if it is missing.
"""

from ._autograd import autograd_primitive

__all__ = ["autograd_primitive"]
