"""Rules for SciPy: special functions, linalg, sparse, stats (loaded only when SciPy imports)."""
