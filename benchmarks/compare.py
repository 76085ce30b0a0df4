"""Peer comparison as ratios to a direct kernel call; see dispatcher/bench.py.

    python benchmarks/compare.py [--rounds N] [--number N] [--json]
"""
import sys

from dispatcher.bench import main

if __name__ == "__main__":
    sys.exit(main())
