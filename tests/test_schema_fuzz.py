"""Fuzzing the schema parser: whatever the input, it either parses into a schema
that round-trips, or raises SchemaParseError -- no other exception, no hang.

CI runs a few hundred examples per test.  The long run is a profile:

    HYPOTHESIS_PROFILE=fuzz100k python -m pytest tests/test_schema_fuzz.py
"""

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatcher.catalog import TORCH_2_13
from dispatcher.schema import FunctionSchema, OperatorName, SchemaParseError

LINES = sorted(TORCH_2_13.schemas())

settings.register_profile(
    "fuzz100k",
    max_examples=100_000,
    deadline=2000,  # ms per example: generous for ~50 us parses, but catches a hang
    suppress_health_check=[HealthCheck.too_slow],
)
if os.environ.get("HYPOTHESIS_PROFILE") == "fuzz100k":
    FUZZ = settings.get_profile("fuzz100k")
else:
    FUZZ = settings(max_examples=200, deadline=2000)

# Pieces of the schema language and of its near misses.
# fmt: off
TOKENS = [
    "(", ")", "[", "]", "?", "!", "*", "|", ",", "=", "->", "...", "::", ".", "-", ":",
    '"', "'", "\\", " ", "\n", "\t", "Tensor", "int", "float", "str", "Scalar", "SymInt",
    "Dict(", "Future(", "Union(", "__torch__.torch.classes.", "t", "a", "x", "None", "True",
    "False", "0", "1", "-1", "1.5", "1e5", "1e999", "99999999999999999999", ".5", "0x1",
    "[1, 2]", "(a!)", "(a -> *)", "(*)", "[]", "[2]", "Tensor(a!)", '"\\101"', '"\\q"',
    "contiguous_format", "é", "\x00", "\U0001f600", "(" * 70,
]
# fmt: on


@st.composite
def mutated_schemas(draw):
    """A corpus schema with a few local insertions, deletions, replacements, duplications."""
    text = draw(st.sampled_from(LINES))
    piece = st.one_of(st.sampled_from(TOKENS), st.text(max_size=3))
    # Positions from a seeded Random: drawn integers lean towards 0, i.e. the
    # operator name, and the mutations should land everywhere.
    rnd = draw(st.randoms(use_true_random=True))
    for _ in range(draw(st.integers(1, 4))):
        i = rnd.randint(0, len(text))
        j = rnd.randint(i, min(len(text), i + 12))
        op = draw(st.sampled_from(["insert", "delete", "replace", "duplicate"]))
        if op == "insert":
            text = text[:i] + draw(piece) + text[i:]
        elif op == "delete":
            text = text[:i] + text[j:]
        elif op == "replace":
            text = text[:i] + draw(piece) + text[j:]
        else:
            text = text[:j] + text[i:j] + text[j:]
    return text


token_soup = st.lists(st.sampled_from(TOKENS), max_size=30).map("".join)


def check_parse(text: str) -> None:
    try:
        schema = FunctionSchema.parse(text)
    except SchemaParseError as exc:
        assert exc.source == text and 0 <= exc.pos <= len(text)
        assert str(exc).endswith("<--- HERE")
        return
    printed = str(schema)
    again = FunctionSchema.parse(printed)
    assert again == schema
    assert str(again) == printed


@FUZZ
@given(mutated_schemas())
def test_mutated_schemas(text):
    check_parse(text)


@FUZZ
@given(st.one_of(token_soup, st.text(max_size=60)))
def test_token_soup_and_random_text(text):
    check_parse(text)
    try:
        name = OperatorName.parse(text)
    except SchemaParseError:
        return
    assert OperatorName.parse(str(name)) == name
