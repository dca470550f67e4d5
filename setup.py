"""Build configuration beyond pyproject.toml: the optional C fast paths of rrule/frule
(``core/_fastcall.c``) and of the reference AD's reverse trace (``ad/_tape.c``).

``optional=True``: where no C compiler (or no Python headers) is available the build
goes on without it, and ``chainrules`` uses its pure-Python entry points.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "chainrules.core._fastcall",
            ["src/chainrules/core/_fastcall.c"],
            optional=True,
        ),
        Extension(
            "chainrules.ad._tape",
            ["src/chainrules/ad/_tape.c"],
            optional=True,
        ),
    ]
)
