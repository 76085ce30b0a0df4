"""Regenerate schema_golden.json: how PyTorch 2.13 parses and prints schemas.

Run with a Python that has torch 2.13 installed (never needed by the tests):

    python tests/golden/generate_schema_golden.py

For every input below, records what ``str(torch._C.parse_schema(input))``
prints, or that torch rejects it.  For the corpus: per mutable schema
(``is_mutable``) the positions of the arguments it writes
(``alias_info.is_write``), and per schema with aliasing, which arguments
each return may alias (``torch._C._SchemaInfo.may_alias``).
tests/test_schema.py checks that ``dispatcher.schema`` agrees.

The corpus (the operator catalog, dispatcher/catalog/torch-2.13.txt) already covers every canonical form;
these cases add non-canonical spellings (how ``1e-5``, ``[2,2]`` or
``(int a)`` are normalised) and errors.  Inputs on which this project
deliberately differs from PyTorch are not here; test_schema.py lists them
(test_deliberate_differences_from_torch), each with the reason.
"""

import json
import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).parent
OUT = HERE / "schema_golden.json"
CORPUS = HERE.parents[1] / "dispatcher" / "catalog" / "torch-2.13.txt"

CASES = [
    # floats in every printed form
    "a::f(float x=1e-5) -> ()",
    "a::f(float x=1E5) -> ()",
    "a::f(float x=1.e5) -> ()",
    "a::f(float x=1e+5) -> ()",
    "a::f(float x=.5) -> ()",
    "a::f(float x=5) -> ()",
    "a::f(float x=-0.) -> ()",
    "a::f(float x=0.1) -> ()",
    "a::f(float x=1e10) -> ()",
    "a::f(float x=1e18) -> ()",
    "a::f(float x=1e19) -> ()",
    "a::f(float x=1e20) -> ()",
    "a::f(float x=9223372036854775807.) -> ()",
    "a::f(float x=-9223372036854775808.) -> ()",
    "a::f(float x=9.2233720368547748e18) -> ()",
    "a::f(float x=1.5e300) -> ()",
    "a::f(float x=2.5e-10) -> ()",
    "a::f(float x=1e-300) -> ()",
    "a::f(float x=-1e10) -> ()",
    "a::f(float x=0.33333333333333331) -> ()",
    "a::f(float? x=5) -> ()",
    "a::f(float? x=5.5) -> ()",
    "a::f(Scalar x=1.5) -> ()",
    "a::f(Scalar x=-5) -> ()",
    "a::f(Scalar x=- 5) -> ()",
    "a::f(Scalar x=-5.) -> ()",
    "a::f(Scalar x=True) -> ()",
    # integers
    "a::f(int x=9223372036854775807) -> ()",
    "a::f(int x=-9223372036854775808) -> ()",
    "a::f(int x=007) -> ()",
    "a::f(SymInt x=5) -> ()",
    # names PyTorch turns into integers
    "a::f(MemoryFormat m=contiguous_format) -> ()",
    "a::f(MemoryFormat? m=contiguous_format) -> ()",
    "a::f(Layout m=strided) -> ()",
    "a::f(ScalarType m=float) -> ()",
    "a::f(ScalarType? m=long) -> ()",
    "a::f(int x=Mean) -> ()",
    # lists
    "a::f(int[2] x=[2,2]) -> ()",
    "a::f(int[2] x=[2,3]) -> ()",
    "a::f(int[2] x=[2,3, 4]) -> ()",
    "a::f(int[1] x=[2]) -> ()",
    "a::f(int[1] x=2) -> ()",
    "a::f(int[3] x=-1) -> ()",
    "a::f(int[] x=[]) -> ()",
    "a::f(SymInt[2] x=5) -> ()",
    "a::f(SymInt[] x=[5,5]) -> ()",
    "a::f(float[2] x=5) -> ()",
    "a::f(float[] x=[1, 2.5]) -> ()",
    "a::f(bool[2] x=True) -> ()",
    "a::f(bool[] x=[True, False]) -> ()",
    "a::f(int[]? x=None) -> ()",
    "a::f(Tensor[]? x=None) -> ()",
    # strings
    "a::f(str x='abc') -> ()",
    'a::f(str x="a\\"b\'c\\\\d\\n") -> ()',
    "a::f(str x='a\"b') -> ()",
    'a::f(str x="\\101") -> ()',
    'a::f(str x=" \\n\\t\\f\\v") -> ()',
    'a::f(str x="") -> ()',
    "a::f(str? x=None) -> ()",
    # None defaults
    "a::f(Tensor? x=None) -> ()",
    "a::f(Tensor x=None) -> ()",
    "a::f(Tensor(a) x=None) -> ()",
    "a::f(Generator? x=None) -> ()",
    "a::f(Generator x=None) -> ()",
    "a::f(Device? x=None) -> ()",
    "a::f(bool? x=False) -> ()",
    # alias annotations
    "a::f(Tensor(a -> *) x) -> Tensor(a -> *)",
    "a::f(Tensor(a! -> *) x) -> Tensor",
    "a::f(Tensor(*) x) -> Tensor",
    "a::f(Tensor(a|a) x) -> Tensor",
    "a::f(Tensor(a)[] x) -> Tensor",
    "a::f(Tensor[](a) x) -> Tensor",
    "a::f(Tensor[](a!) x) -> Tensor[](a!)",
    "a::f(Tensor(a!)[](b!) x) -> Tensor",
    "a::f(Tensor(a)? x) -> ()",
    "a::f(int(a) x) -> ()",
    "a::f(t(a)? x) -> t(*)?",
    "a::f(Dict(str, t)(a!) x) -> ()",
    # types
    "a::f(t x, t1 y) -> t2",
    "a::f((int, float) x) -> ()",
    "a::f(() x) -> ()",
    "a::f(None x) -> NoneType",
    "a::f(Future(int) x, RRef(t) y, Await(Tensor) z) -> ()",
    "a::f(Dict(str, int) x) -> Dict(int, Tensor)",
    "a::f(Tensor?[] x) -> Tensor?[]",
    "a::f(Tensor[]? x) -> Tensor[]?",
    "a::f(Tensor[]?[] x) -> ()",
    "a::f(int[3]? x) -> int[3]?",
    "a::f(str[][] x) -> ()",
    "a::f(QScheme q, SymBool b, Storage s, Stream t, Any a, Capsule c, AnyClassType k, AnyEnumType e) -> ()",
    "a::f(Scalar[] x, complex c, Layout l, Device d, MemoryFormat m, ScalarType s) -> ()",
    # names, kwarg-only, varargs, returns
    "f(int x) -> ()",
    "a::f.overload(int x) -> ()",
    "a::f(*, int x) -> ()",
    "a::f(int x, *, int y) -> (int a, int b)",
    "a::f(int x) -> (int a)",
    "a::f(int x) -> (int)",
    "a::f(int x) -> int a",
    "a::f(int x) -> ((str, str))",
    "a::f(int x) -> ((str, t)[])",
    "a::f(int x) -> (int x, int x)",
    "a::f(int x, ...) -> ...",
    "a::f(...) -> (int, ...)",
    "a::f() -> ()",
    "a::f(int x, int x) -> ()",
    "a::f(  int   x ,int y  )->(  )",
    # errors
    "a::f(int x)",
    "a::f(int x y) -> ()",
    "a::f(int x",
    "a::f(int x=1, int y) -> ()",
    "a::f(int[] x=2) -> ()",
    "a::f(int[] x=None) -> ()",
    "a::f(Tensor[] x=[]) -> ()",
    'a::f(str[] x=["a"]) -> ()',
    "a::f(int[] x=[1.5]) -> ()",
    "a::f(bool[] x=[1, 0]) -> ()",
    "a::f(float x=inf) -> ()",
    "a::f(float x=-inf) -> ()",
    "a::f(float x=nan) -> ()",
    "a::f(float x=1e400) -> ()",
    "a::f(Scalar x=--5) -> ()",
    "a::f(int x=9223372036854775808) -> ()",
    "a::f(MemoryFormat m=preserve_format) -> ()",
    "a::f(Any x=5) -> ()",
    "a::f(t x=5) -> ()",
    "a::f((int, int) x=5) -> ()",
    "a::f(Dict(str, int) x=5) -> ()",
    "a::f(Storage x=5) -> ()",
    "a::f(QScheme x=5) -> ()",
    "a::f(Tensor?(a) x) -> ()",
    "a::f(int[2][3] x) -> ()",
    "a::f(int[3]?[] x) -> ()",
    "a::f(Tensor() x) -> ()",
    "a::f(Tensor(a -> ) x) -> ()",
    "a::f(Tensor(a!!) x) -> ()",
    "a::f(Optional[int] x) -> ()",
    "a::f(List[int] x) -> ()",
    "a::f(Tuple[int, float] x) -> ()",
    "a::f(Union[int, float] x) -> ()",
    "a::f(__torch__.foo.Bar x) -> ()",
    "a::f(AnyType x) -> ()",
    'a::f(str x="\\x41") -> ()',
    'a::f(str x="\\q") -> ()',
    'a::f(str x=r"a") -> ()',
    "a::f(float x=1_0) -> ()",
    "a::f(int x, ..., int y) -> ()",
    "a::f(int x) -> (..., int)",
    "a::f.(int x) -> ()",
    "a::f(int x) -> int extra",
    "a::f(int x,) -> ()",
    "",
]


def main() -> None:
    if not torch.__version__.startswith("2.13"):
        sys.exit(f"needs torch 2.13, found {torch.__version__}")
    cases = []
    for text in CASES:
        try:
            printed = str(torch._C.parse_schema(text))
        except Exception:  # torch raises RuntimeError, ValueError, IndexError, ...
            printed = None
        cases.append({"input": text, "torch": printed})
    written = {}
    aliases = {}
    C = torch._C
    for line in sorted(line.split("\t")[0] for line in CORPUS.read_text().splitlines() if not line.startswith("#")):
        schema = C.parse_schema(line)
        name = line[: line.index("(")]
        if schema.is_mutable:
            written[name] = [
                i for i, a in enumerate(schema.arguments) if a.alias_info and a.alias_info.is_write
            ]
        info = C._SchemaInfo(schema)
        may_alias = [
            [
                i
                for i in range(len(schema.arguments))
                if info.may_alias(
                    C._SchemaArgument(C._SchemaArgType.output, r),
                    C._SchemaArgument(C._SchemaArgType.input, i),
                )
            ]
            for r in range(len(schema.returns))
        ]
        if any(may_alias):
            aliases[name] = may_alias
    golden = {
        "torch_version": torch.__version__,
        "cases": cases,
        "mutable": written,
        "may_alias": aliases,
    }
    OUT.write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {len(cases)} cases, {len(written)} mutable and {len(aliases)} aliasing schemas")


if __name__ == "__main__":
    main()
