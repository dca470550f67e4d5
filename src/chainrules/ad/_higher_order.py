"""Rules for higher-order functions (filled in below)."""
