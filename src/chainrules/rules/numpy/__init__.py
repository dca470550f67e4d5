"""Rules for NumPy: ufuncs, reductions, shape, indexing, linalg, fft."""
