"""Levels 3-4: compiled stages attributed to source lines, compiler-grounded findings."""
