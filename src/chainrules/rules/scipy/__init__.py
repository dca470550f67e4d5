"""Rules for SciPy, one module per SciPy module (special, linalg, sparse, stats, fft, signal,
optimize, integrate): ``<name>.py`` and ``<name>_<part>.py`` load when ``scipy.<name>`` is
imported (see `chainrules.rules`)."""
