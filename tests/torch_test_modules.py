"""The torch modules PyTorch's test files import beyond tests/torch_shim.py's,
for tests/torch_test_files.py: torch's test infrastructure where this package
has the feature (TestCase, parametrize, the device-type tests on "cpu",
opcheck), and Unavailable modules, naming the feature, where it has not."""
from __future__ import annotations

import contextlib
import functools
import operator
import os
import subprocess
import sys
import tempfile
import types
import typing
import unittest
from typing import Any, Callable, Iterator

import numpy as np

import dispatcher
import dispatcher._custom_op.autograd
import dispatcher._custom_op.impl
import dispatcher._custom_ops
import dispatcher.custom_ops
import dispatcher.optests
import dispatcher.prototype as P
from dispatcher.prototype.python_dispatch import no_dispatch
import dispatcher.pytree
import dispatcher.schema_inference
from dispatcher.prototype.tensor import answers_its_operators
from dispatcher import ops

from . import _torch_testing
from .torch_test_helpers import call_time_modules, helper_modules
from .torch_test_files import (
    Unavailable, as_array, instantiate_device_type_tests, instantiate_parametrized_tests, needs, parametrize,
    subtest, unavailable_module,
)

CUDA = "CUDA"
COMPILE = "torch.compile (dynamo, AOTAutograd)"
FAKE = "FakeTensorMode (fake tensors, symbolic shapes)"
CPP = "C++ extensions"
MAKE_FX = "make_fx (FX graph tracing)"
OP_DB = "torch's OpInfo database (aten kernels of every operator)"
# The rest of the CustomOp API is dispatcher._custom_op's; register_functional_op is not in torch 2.13
CUSTOM_OP_API = ("torch._custom_op.functional (register_functional_op, gone from torch 2.13: "
                 "it made functional variants for make_fx's functionalization)")
INTERNALS = "torch's internals (storages, torch._utils_internal, torch.distributed)"
LOGGING_TENSOR = "torch.testing._internal.logging_tensor (LoggingTensor and its log format), not ported here"
TWO_TENSOR = "torch.testing._internal.two_tensor (TwoTensor), not ported here"
COMMON_SUBCLASS = "torch.testing._internal.common_subclass (RedispatchTensor and the other test subclasses), not ported here"
# A test whose expectation is a later torch's: it fails on torch 2.13 as it fails here.


class TestCase(_torch_testing.TestCase):
    """torch's TestCase as these files use it: assertEqual compares tensors
    (shape, dtype, values within torch's default tolerances) and sequences of them.

    A test whose setUp fails still has its tearDown run (unittest skips it):
    the files' setUps register operators that their tearDowns remove, and one
    test's leftovers would otherwise fail the next ones (torch runs a file in
    a process of its own and rarely sees a setUp fail)."""

    def _callSetUp(self) -> None:
        try:
            super()._callSetUp()  # type: ignore[misc]
        except BaseException:
            self.addCleanup(self._tear_down_quietly)
            raise

    def _tear_down_quietly(self) -> None:
        with contextlib.suppress(Exception):
            self.tearDown()

    def assertEqual(self, first: Any, second: Any, msg: Any = None, *, atol: Any = None, rtol: Any = None,
                    exact_dtype: bool = True, **kwargs: Any) -> None:
        if (first is None) != (second is None):
            raise self.failureException(msg or f"None mismatch: {first!r} and {second!r}")
        if any(isinstance(v, P.Tensor) and answers_its_operators(type(v)) for v in (first, second)):
            # As torch's: such a tensor has no values but what its handler makes of
            # its operators, so they are compared through those (ne, any, item):
            # here for equality.
            self.assertEqual((first.shape, first.dtype), (second.shape, second.dtype), msg)
            differs = ops.aten.any.default(ops.aten.ne.Tensor(first, second)).item()
            self.assertFalse(differs, msg or f"{first!r} != {second!r}")
            return
        a, b = as_array(first), as_array(second)
        if a is not None or b is not None:
            a = np.asarray(first) if a is None else a
            b = np.asarray(second) if b is None else b
            if exact_dtype and as_array(first) is not None and as_array(second) is not None:
                self.assertEqual(first.dtype, second.dtype, msg)
            self.assertEqual(a.shape, b.shape, msg)
            self.assertTrue(np.allclose(a, b, rtol=1.3e-6 if rtol is None else rtol, atol=1e-5 if atol is None else atol,
                                        equal_nan=True), msg or f"{first!r} != {second!r}")
            return
        if isinstance(first, (list, tuple)) and isinstance(second, (list, tuple)):
            self.assertEqual(len(first), len(second), msg)
            for x, y in zip(first, second):
                self.assertEqual(x, y, msg, atol=atol, rtol=rtol, exact_dtype=exact_dtype)
            return
        super().assertEqual(first, second, msg)

    def assertNotEqual(self, first: Any, second: Any, msg: Any = None, **kwargs: Any) -> None:
        """torch's: assertEqual's comparison (tensors by their values), expected to fail."""
        try:
            self.assertEqual(first, second, **kwargs)
        except self.failureException:
            return
        raise self.failureException(msg or f"{first!r} == {second!r}")


def _identity_decorator(*args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """torch's skip decorators that skip only under a mode not run here
    (TorchDynamo, cross-ref, XPU): the test as it is."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


@contextlib.contextmanager
def TemporaryFileName(*args: Any, **kwargs: Any) -> Iterator[str]:  # noqa: N802  (torch's name)
    with tempfile.TemporaryDirectory() as directory:
        yield os.path.join(directory, "file")


def _generates_no_tests(*args: Any, **kwargs: Any) -> None:
    """optests.generate_opcheck_tests, which test_custom_ops.py calls as it loads:
    torch's adds to a class a copy of each test run under torch.compile's
    checks (AOTAutograd, FakeTensor); none of those can run here, so it adds
    none (tests/torch_test_left_out.py says so)."""


def _lookup_op(qualname: str) -> Any:
    """torch._library.utils.lookup_op: the overload ``ns::name[.overload]``."""
    ns, _, name = qualname.partition("::")
    packet, _, overload = name.partition(".")
    return getattr(getattr(ops, ns), packet).__dict__[overload or "default"]


def _with_prototype_tensor(annotation: Any) -> Any:
    """``annotation`` with dispatcher.Tensor replaced by the prototype's Tensor
    (the shim's torch.Tensor), inside Optional, List, Sequence and the like."""
    if annotation is dispatcher.Tensor:
        return P.Tensor
    args = typing.get_args(annotation)
    if not args:
        return annotation
    replaced = tuple(_with_prototype_tensor(arg) for arg in args)
    if isinstance(annotation, types.UnionType):  # X | None
        return functools.reduce(operator.or_, replaced)
    if isinstance(annotation, types.GenericAlias):  # list[X], collections.abc.Sequence[X]
        return types.GenericAlias(typing.get_origin(annotation), replaced)
    return annotation.copy_with(replaced)  # typing.List[X], Optional[X], Sequence[X]


def _infer_schema_module() -> types.ModuleType:
    """torch._library.infer_schema: dispatcher.schema_inference, its tables of supported
    types keyed as torch's are, by the shim's torch.Tensor (the tests look them up so)."""
    module = _module("torch._library.infer_schema", **vars(dispatcher.schema_inference))
    # A global of torch's module that a string annotation in a test must not find
    # (names are looked up in the annotated function's globals).
    module._TestTensor = P.Tensor  # type: ignore[attr-defined]
    for table in ("SUPPORTED_PARAM_TYPES", "SUPPORTED_RETURN_TYPES"):
        setattr(module, table, {_with_prototype_tensor(annotation): schema_type
                                for annotation, schema_type in getattr(dispatcher.schema_inference, table).items()})
    return module


def _custom_op_db(name: str) -> types.ModuleType:
    """torch.testing._internal.custom_op_db: its operators ``_torch_testing::source0``
    to ``source5`` (tests/custom_op_db.py), registered when a copy first reads a
    name of the module, as torch registers them when it imports it; its
    OpInfo entries and their numpy operators are torch's OpInfo database."""
    module = unavailable_module(name, OP_DB, custom_op_db=[])

    def read(attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")
        from . import custom_op_db  # noqa: F401  (registers the operators)

        return Unavailable(f"{name}.{attr}", OP_DB)

    module.__getattr__ = read  # type: ignore[attr-defined]
    return module


class _SimpleRegistry:
    """torch._library.simple_registry.singleton: what it says of an operator's fake implementation."""

    def find(self, qualname: str) -> Any:
        source = dispatcher.custom_ops.fake_impl_source(qualname)
        kernel = None if source is None else types.SimpleNamespace(source=source)
        # torch's holder keeps every fake kernel registered, in order, the last in
        # effect; here only the one in effect is known.
        holder = types.SimpleNamespace(kernel=kernel, kernels=[] if kernel is None else [kernel])
        return types.SimpleNamespace(qualname=qualname, fake_impl=holder, abstract_impl=holder)


def _is_tensorlist_like_type(typ: Any) -> bool:
    """torch._library.utils.is_tensorlist_like_type: Tensor[], Tensor?[], Tensor[]? or Tensor?[]?."""
    from dispatcher.schema import BaseTy, BaseType, ListType, OptionalType

    typ = typ.strip_annotations()
    typ = typ.elem if isinstance(typ, OptionalType) else typ
    if not isinstance(typ, ListType) or typ.size is not None:
        return False
    elem = typ.elem.elem if isinstance(typ.elem, OptionalType) else typ.elem
    return isinstance(elem, BaseType) and elem.name is BaseTy.Tensor


def _assert_close(actual: Any, expected: Any, *, rtol: Any = None, atol: Any = None, msg: Any = None) -> None:
    """torch.testing.assert_close, as TestCase.assertEqual compares (torch's
    default tolerances for the dtype unless given)."""
    TestCase().assertEqual(actual, expected, msg, rtol=rtol, atol=atol)


def _contains_tensor(typ: Any) -> bool:
    from dispatcher.schema import BaseTy, BaseType

    if isinstance(typ, BaseType):
        return typ.name is BaseTy.Tensor
    inner = [getattr(typ, "elem", None), *getattr(typ, "elems", ()), *getattr(typ, "args", ())]
    return any(_contains_tensor(t) for t in inner if t is not None)


def _is_tensor_constructor(func: Any) -> bool:
    """torch._subclasses.fake_tensor._is_tensor_constructor (TwoTensorMode asks it;
    a question about the schema, no fake tensor): an operator taking no tensor
    and returning one Tensor."""
    schema = func._schema
    if any(_contains_tensor(arg.type) for arg in schema.arguments):
        return False
    return len(schema.returns) == 1 and _is_tensor(schema.returns[0].type)


def _is_tensor(typ: Any) -> bool:
    from dispatcher.schema import BaseTy, BaseType

    return isinstance(typ, BaseType) and typ.name is BaseTy.Tensor


def _aten_function(name: str) -> Any:
    """``torch.<name>`` not otherwise in the shim: torch binds its aten operators
    as functions of ``torch``, so here the aten packet of that name (an
    AttributeError saying so when there is none)."""
    if not name.startswith("__"):
        try:
            return getattr(ops.aten, name)
        except AttributeError:
            pass
    raise AttributeError(f"module 'torch' has no attribute {name!r} (nor is aten::{name} an operator)")


def _collect_all_valid_cia_ops_for_namespace(namespace: Any) -> set[Any]:
    """torch._export.utils's: the overloads of a namespace's packets that have a
    CompositeImplicitAutograd kernel and neither mutate nor alias (torch's
    _check_valid_to_preserve, less its lists of ops to decompose anyway)."""
    from dispatcher.compat import torch_C

    found = set()
    for name in namespace:
        for overload in getattr(namespace, name).op_overloads():
            schema = overload._schema
            if schema.is_mutable or any(argument.alias_info is not None for argument in schema.arguments):
                continue
            if torch_C._dispatch_has_kernel_for_dispatch_key(overload.name(), "CompositeImplicitAutograd"):
                found.add(overload)
    return found


def _module(name: str, **names: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(names)
    return module


def common_utils() -> types.ModuleType:
    flags = dict.fromkeys(
        ["TEST_WITH_ROCM", "IS_WINDOWS", "IS_MACOS", "IS_FBCODE", "TEST_WITH_ASAN", "TEST_WITH_TORCHDYNAMO",
         "TEST_WITH_SLOW", "TEST_CUDA", "TEST_XPU", "TEST_ACCELERATOR", "TEST_WITH_CROSSREF", "TEST_MPS"], False)
    return _module(
        "torch.testing._internal.common_utils", TestCase=TestCase, run_tests=_torch_testing.run_tests,
        parametrize=parametrize, instantiate_parametrized_tests=instantiate_parametrized_tests, subtest=subtest,
        skipIfTorchDynamo=_identity_decorator, skipIfCrossRef=_identity_decorator, skipIfXpu=_identity_decorator,
        skipIfRocm=_identity_decorator, TemporaryFileName=TemporaryFileName, IS_LINUX=True,
        scoped_load_inline=needs(CPP)(), first_sample=Unavailable("first_sample", OP_DB),
        # What ``from common_utils import *`` gives the files besides (torch's module imports these).
        unittest=unittest, os=os, sys=sys, tempfile=tempfile, np=np, subprocess=subprocess, pytree=dispatcher.pytree,
        **flags,
    )


def modules() -> dict[str, types.ModuleType]:
    """sys.modules entries (beyond tests/torch_shim.py's) for PyTorch's test files."""
    internal = "torch.testing._internal"
    # opcheck is this package's; the rest of optests generates and runs tests through torch.compile.
    optests = unavailable_module(f"{internal}.optests", COMPILE, opcheck=dispatcher.optests.opcheck,
                                 OpCheckError=dispatcher.optests.OpCheckError,
                                 dontGenerateOpCheckTests=lambda reason: (lambda fn: fn),
                                 generate_opcheck_tests=_generates_no_tests,
                                 generate_tests=unavailable_module(f"{internal}.optests.generate_tests", COMPILE))
    mode_utils = _module("torch.utils._mode_utils",
                         all_same_mode=lambda modes: all(mode == modes[0] for mode in modes),
                         no_dispatch=no_dispatch)
    found = {
        "torch.testing": _module("torch.testing", assert_close=_assert_close),
        "torch.testing._internal": _module(internal),
        f"{internal}.common_utils": common_utils(),
        f"{internal}.common_device_type": _module(
            f"{internal}.common_device_type", instantiate_device_type_tests=instantiate_device_type_tests,
            ops=needs(OP_DB), OpDTypes=Unavailable("OpDTypes", OP_DB), PYTORCH_CUDA_MEMCHECK=False),
        # The OpInfo lists are empty (the files iterate them as they load); the
        # ``ops`` decorator that runs a test over them says what is missing.
        f"{internal}.common_methods_invocations": unavailable_module(
            f"{internal}.common_methods_invocations", OP_DB, op_db=[]),
        f"{internal}.custom_op_db": _custom_op_db(f"{internal}.custom_op_db"),
        f"{internal}.common_cuda": _module(f"{internal}.common_cuda", TEST_CUDA=False),
        f"{internal}.optests": optests,
        f"{internal}.optests.generate_tests": optests.generate_tests,
        "torch._export.utils": _module("torch._export.utils",
                                       _collect_all_valid_cia_ops_for_namespace=_collect_all_valid_cia_ops_for_namespace),
        "torch._dynamo.testing": unavailable_module("torch._dynamo.testing", COMPILE),
        "torch._inductor": unavailable_module("torch._inductor", COMPILE),
        "torch._inductor.runtime": unavailable_module("torch._inductor.runtime", COMPILE),
        f"{internal}.optests.aot_autograd": unavailable_module(f"{internal}.optests.aot_autograd", COMPILE),
        # torch._dynamo.disable outside torch.compile runs the function as it is.
        "torch._dynamo": unavailable_module("torch._dynamo", COMPILE, disable=_identity_decorator),
        # AOTAutograd's configuration (functorch.config).
        "torch._functorch": unavailable_module("torch._functorch", COMPILE),
        "torch._dynamo.source": unavailable_module("torch._dynamo.source", COMPILE),
        "torch._dynamo.utils": unavailable_module("torch._dynamo.utils", COMPILE),
        "torch._subclasses": unavailable_module("torch._subclasses", FAKE),
        "torch._subclasses.fake_tensor": unavailable_module("torch._subclasses.fake_tensor", FAKE,
                                                            _is_tensor_constructor=_is_tensor_constructor),
        "torch.cuda": unavailable_module("torch.cuda", CUDA),
        "torch.cuda.jiterator": unavailable_module("torch.cuda.jiterator", CUDA),
        "torch.fx": unavailable_module("torch.fx", MAKE_FX),
        "torch.fx.experimental": unavailable_module("torch.fx.experimental", MAKE_FX),
        "torch.fx.experimental.symbolic_shapes": unavailable_module("torch.fx.experimental.symbolic_shapes", FAKE),
        "torch.fx.experimental.proxy_tensor": unavailable_module("torch.fx.experimental.proxy_tensor", MAKE_FX),
        "torch.multiprocessing": unavailable_module("torch.multiprocessing", INTERNALS),
        "torch.multiprocessing.reductions": unavailable_module("torch.multiprocessing.reductions", INTERNALS,
                                                               StorageWeakRef=P.storage.StorageWeakRef),
        # torch's older CustomOp API: dispatcher's port of it.
        "torch._custom_op": dispatcher._custom_op,  # type: ignore[dict-item]
        "torch._custom_op.impl": dispatcher._custom_op.impl,  # type: ignore[dict-item]
        "torch._custom_op.autograd": dispatcher._custom_op.autograd,  # type: ignore[dict-item]
        "torch._library": unavailable_module("torch._library", INTERNALS),
        "torch._library.infer_schema": _infer_schema_module(),
        "torch._library.fake_profile": unavailable_module("torch._library.fake_profile", FAKE),
        "torch._library.utils": unavailable_module("torch._library.utils", INTERNALS, lookup_op=_lookup_op,
                                                   is_tensorlist_like_type=_is_tensorlist_like_type),
        "torch._library.autograd": unavailable_module("torch._library.autograd", INTERNALS),
        "torch._library.simple_registry": _module("torch._library.simple_registry", singleton=_SimpleRegistry()),
        "torch._custom_op.functional": unavailable_module("torch._custom_op.functional", CUSTOM_OP_API),
        "torch._custom_ops": dispatcher._custom_ops,  # type: ignore[dict-item]
        "torch.utils.cpp_extension": unavailable_module("torch.utils.cpp_extension", CPP),
        "torch._utils_internal": unavailable_module("torch._utils_internal", INTERNALS,
                                                    get_file_path_2=lambda *parts: os.path.join(*parts)),
        # A torch built without torch.distributed says so (the files ask before using it).
        "torch.distributed": unavailable_module("torch.distributed", INTERNALS, is_available=lambda: False),
        "torch.utils._pytree": dispatcher.pytree,  # type: ignore[dict-item]
        "torch.utils._mode_utils": mode_utils,
        "yaml": unavailable_module("yaml", FAKE + " profiles (PyYAML)"),
        "functorch": unavailable_module("functorch", MAKE_FX),
        # Names added to the shim's torch module.
        "torch": _module("torch", SymInt=Unavailable("torch.SymInt", FAKE), SymFloat=Unavailable("torch.SymFloat", FAKE),
                         compile=Unavailable("torch.compile", COMPILE), jit=Unavailable("torch.jit", "TorchScript"),
                         # Higher-order operators are traced by torch.compile / torch.export.
                         cond=Unavailable("torch.cond", COMPILE),
                         Tensor=P.Tensor, __getattr__=_aten_function,
                         # A CPU-only torch: no accelerator.
                         accelerator=_module("torch.accelerator", current_accelerator=lambda check_available=False: None),
                         types=_module("torch.types", Number=dispatcher.Number)),
    }
    found.update(call_time_modules(COMPILE))
    # torch's LoggingTensor and TwoTensor, from copies of their files when present.
    found.update(helper_modules(found, {f"{internal}.logging_tensor": LOGGING_TENSOR,
                                        f"{internal}.two_tensor": TWO_TENSOR,
                                        f"{internal}.common_subclass": COMMON_SUBCLASS}))
    return found


__all__ = ["TestCase", "modules", "unittest"]
