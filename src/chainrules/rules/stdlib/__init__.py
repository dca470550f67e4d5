"""Rules for the standard library: math, cmath, operator, builtins."""
