"""argparse ``type=`` converters for the command line's numbers.

A bad number ends as argparse's one-line usage error naming the option
(``argument --rounds: must be a whole number of at least 1, not -3``), never
as a traceback from deep in the command (a median of no rounds, a division
by zero calls).
"""
import argparse

__all__ = ["positive_int"]


def positive_int(text: str) -> int:
    """An integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {value}")
    return value
