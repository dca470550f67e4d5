"""chainrules.rules: the built-in rule set, registered on import.

Each module registers the rules of one domain right under their code. Modules
for optional dependencies (SciPy) register only when the dependency imports.
"""

import importlib

_MODULES = [
    "chainrules.rules.stdlib.math",
]

_OPTIONAL = {
    # module: the optional dependency it needs
}

for _name in _MODULES:
    importlib.import_module(_name)

for _name, _dep in _OPTIONAL.items():
    try:
        importlib.import_module(_dep)
    except ImportError:
        continue
    importlib.import_module(_name)
