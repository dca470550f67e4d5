"""pytest plugin for chainrules (registered through the ``pytest11`` entry point)."""
