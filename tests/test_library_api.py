"""``dispatcher.library`` is torch.library: torch 2.13's names (its ``__all__``) with
torch's signatures (tests/golden/torch_library_api_golden.json), and the
functions that need torch.compile say so."""
import inspect
import json
import pathlib

import pytest

import dispatcher.library as library

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "torch_library_api_golden.json").read_text())

# Parameters this package has beside torch's: keyword-only, with defaults, after torch's.
OUR_EXTRAS = {
    "Library.__init__": {"registry"},
    "Library.impl": {"boxed", "debug"},
    "Library.fallback": {"boxed", "debug"},
}


def our_callable(name):
    if name.startswith("Library."):
        return getattr(library.Library, name.partition(".")[2])
    return getattr(library, name)


def test_all_is_torchs():
    assert library.__all__ == GOLDEN["all"]
    for name in GOLDEN["all"]:
        assert getattr(library, name) is not None


@pytest.mark.parametrize("name", sorted(GOLDEN["signatures"]))
def test_signature_is_torchs(name):
    ours = []
    for p in inspect.signature(our_callable(name)).parameters.values():
        if p.name in OUR_EXTRAS.get(name, ()):
            assert p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is not inspect.Parameter.empty
            continue
        entry = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            entry["default"] = repr(p.default) if p.default is None or isinstance(
                p.default, (bool, int, float, str, tuple)) else "<object>"
        ours.append(entry)
    assert ours == GOLDEN["signatures"][name]


def test_custom_op_functions_are_the_packages():
    import dispatcher

    for name in ("custom_op", "register_fake", "register_autograd", "register_kernel", "infer_schema", "opcheck",
                 "get_ctx"):
        assert getattr(library, name) is getattr(dispatcher, name)
    with pytest.raises(AttributeError, match="module 'dispatcher.library' has no attribute 'nope'"):
        library.nope  # noqa: B018


@pytest.mark.parametrize("name", ["triton_op", "wrap_triton"])
def test_triton_functions_say_what_they_need(name):
    fn = getattr(library, name)
    with pytest.raises(NotImplementedError, match="torch.compile"):
        fn("ns::f", mutates_args=()) if name == "triton_op" else fn(lambda: None)
