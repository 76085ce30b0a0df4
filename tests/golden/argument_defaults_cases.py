"""Schemas whose arguments' ``default_value`` and ``has_default_value()``
(torch._C.Argument's) generate_argument_defaults_golden.py records with torch
2.13 and tests/test_argument_defaults.py checks against ours."""

SCHEMAS = [
    'f(Tensor x, Tensor? a=None, float b=3.14, bool c=True, int d=3, str e="foo", ScalarType f=6, '
    'ScalarType h=3, Device i="cpu:0", Device j="cpu") -> Tensor',
    "g(int[] k=[1, 2], Scalar s=1, Layout l=0, MemoryFormat m=1, int[2] o=1, float[] p=[1.5], SymInt q=2, "
    "SymInt[] r=[1, 2], bool[2] w=[True, False], Scalar z=2.5, Scalar n=-3) -> Tensor",
    'h(Device? n="cpu", str? t="a", Generator? g=None, ScalarType? v=None, int? u=None, *, '
    "float eps=1e-05, bool flag=False) -> ()",
]


def describe(value: object) -> object:
    """A default as JSON: a device as its text, other values as they are."""
    if type(value).__name__ == "device":
        return {"device": str(value)}
    return value
