"""Oracle checks: our rules against JAX's and PyTorch's own derivatives (a package,
so the test modules import the tables and the checker without touching sys.path)."""
