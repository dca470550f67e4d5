"""Rules for SciPy: special functions, linalg, sparse, fft, signal (loaded only when SciPy
imports)."""
