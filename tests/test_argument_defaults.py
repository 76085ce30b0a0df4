"""torch._C.Argument's ``default_value`` and ``has_default_value()`` on the
package's schemas (compat.torch_C.parse_schema, an operator's ``_schema``),
against torch 2.13 (tests/golden/generate_argument_defaults_golden.py)."""
from __future__ import annotations

import pytest

import dispatcher
from dispatcher.compat import torch_C

from .conftest import load_golden
from .golden.argument_defaults_cases import SCHEMAS, describe

GOLDEN = load_golden("argument_defaults_golden.json")["schemas"]


@pytest.mark.parametrize("text", SCHEMAS)
def test_defaults_are_torchs(text):
    seen = [[arg.name, arg.has_default_value(), describe(arg.default_value), type(arg.default_value).__name__]
            for arg in torch_C.parse_schema(text).arguments]
    assert seen == GOLDEN[text]


def test_a_device_default_is_a_device_and_a_list_a_list():
    arg, listed = torch_C.parse_schema('f(Device d="cpu:1", int[2] k=1) -> ()').arguments
    assert arg.default_value == dispatcher.device("cpu", 1)
    assert listed.default_value == [1, 1]


def test_an_operators_schema_gives_them():
    dim = dispatcher.ops.aten.sum.dim_IntList._schema.arguments[2]
    assert (dim.name, dim.has_default_value(), dim.default_value) == ("keepdim", True, False)
