"""The operators of torch.testing._internal.custom_op_db that PyTorch's
test_custom_ops.py asks the fake implementation's source of
(``test_library_register_fake_source``): ``_torch_testing::source0`` to
``source5``, each given its fake implementation one of the ways torch.library
allows (register_fake as a decorator or a call, on a name or a CustomOpDef).
torch registers them when the module is imported; so does this one, imported
by tests/torch_test_modules.py's custom_op_db module when a copy reads it.
The source test checks that the file is custom_op_db.py, hence the name.
"""
from __future__ import annotations

from typing import Any

import dispatcher.library as library
from dispatcher import Tensor

lib = library.Library("_torch_testing", "FRAGMENT")


def _clone(x: Any) -> Any:
    return x.clone()


lib.define("source0(Tensor x) -> Tensor")
library.register_fake("_torch_testing::source0", lib=lib)(_clone)

lib.define("source1(Tensor x) -> Tensor")
library.register_fake("_torch_testing::source1", _clone, lib=lib)

lib.define("source2(Tensor x) -> Tensor")


@library.register_fake("_torch_testing::source2", lib=lib)
def _source2_fake(x: Any) -> Any:
    return x.clone()


lib.define("source3(Tensor x) -> Tensor")
library.register_fake("_torch_testing::source3", lambda x: x.clone(), lib=lib)


@library.custom_op("_torch_testing::source4", mutates_args=())
def source4(x: Tensor) -> Tensor:
    return x.clone()


source4.register_fake(_clone)


@library.custom_op("_torch_testing::source5", mutates_args=())
def source5(x: Tensor) -> Tensor:
    return x.clone()


@source5.register_fake
def _source5_fake(x: Any) -> Any:
    return x.clone()
