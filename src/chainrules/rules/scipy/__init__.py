"""Rules for SciPy: special functions, linalg, sparse (loaded only when SciPy imports)."""
