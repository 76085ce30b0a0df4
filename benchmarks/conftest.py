"""Benchmarks share the tests' ``engine`` fixture (compiled and pure-Python engines).

Run them with ``pytest benchmarks --benchmark-enable``; a plain ``pytest`` runs
each once, as a test, with timing disabled.
"""
from tests.conftest import core, engine  # noqa: F401  (fixtures, used by name)
