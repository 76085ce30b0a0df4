"""Benchmarks share the tests' ``core`` fixture (compiled core and twin).

Run them with ``pytest benchmarks --benchmark-enable``; a plain ``pytest`` runs
each once, as a test, with timing disabled.
"""
from tests.conftest import core  # noqa: F401  (a fixture, used by name)
