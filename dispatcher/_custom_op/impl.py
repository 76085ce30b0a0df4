"""``CustomOp`` and its ``custom_op`` decorator: torch 2.13's torch/_custom_op/impl.py.

``custom_op("ns::foo")(func)`` defines ``ns::foo`` with the schema inferred
from ``func``'s annotations (or the ``manual_schema`` given, which ``func``'s
signature must match) and returns a ``CustomOp``: calling it calls the
operator, ``.impl("cpu")`` registers a device kernel, ``.impl_abstract()`` the
Meta kernel, ``.impl_factory()`` the BackendSelect kernel of an operator
without tensor arguments, and ``.impl_save_for_backward()`` with
``.impl_backward()`` its autograd formula (autograd.py builds the kernel).
Every CustomOp is kept in ``global_registry`` until ``_destroy()``.

The checks and their texts are torch's (tests/golden/legacy_custom_op_golden.json
records them).  Where torch parses the schema with torchgen, this module
parses it with dispatcher.schema, after torchgen's first check (its
"Invalid function schema" assertion).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import warnings
import weakref
from typing import Any, Callable, Iterable, NoReturn, Optional, Union

from .._library import Library
from ..compat import torch_C
from ..custom_ops import _is_functional_schema, ctx_getter, get_ctx
from ..kernel import registration_site
from ..list_arguments import lists_as_torch_passes_them
from ..registry import registry_in_use
from ..schema import BaseTy, BaseType, FunctionSchema, ListType
from ..schema_inference import infer_schema
from .autograd import autograd_kernel_indirection, construct_autograd_kernel

__all__ = ["custom_op", "CustomOp", "get_ctx"]

SUPPORTED_DEVICE_TYPE_TO_KEY = {
    "cpu": "CPU",
    "cuda": "CUDA",
}

# Namespaces that look like PyTorch's own: a CustomOp may not use them.
RESERVED_NS = {
    "prim",
    "prims",
    "aten",
    "at",
    "torch",
    "pytorch",
}


def warn_deprecated() -> None:
    warnings.warn(
        "torch._custom_op is deprecated and will be removed in PyTorch 2.6, please "
        "use the equivalent torch.library API instead.",
        DeprecationWarning,
        stacklevel=2,
    )


def check_is_function(func: Any) -> None:
    """custom_op's decorator takes a Python function (torch's text)."""
    if not inspect.isfunction(func):
        raise ValueError(
            f"custom_op(...)(func): Expected `func` to be a Python "
            f"function, got: {type(func)}"
        )


def check_name_matches(func: Callable[..., Any], qualname: str, name: str) -> None:
    """The decorated function is named as the operator (torch's text)."""
    if func.__name__ != name:
        raise ValueError(
            f"custom_op(qualname='{qualname}', ...)(func): expected `func` "
            f"to have name '{name}' but got '{func.__name__}'. "
            f"Please either change the name of `func` or the qualname that "
            f"is passed to `custom_op`"
        )


def custom_op(qualname: str, manual_schema: Optional[str] = None) -> Callable[[Callable[..., Any]], CustomOp]:
    """Define operator ``qualname`` ("ns::name") from a function named ``name``,
    its schema inferred from the annotations or given as ``manual_schema``
    ("(Tensor x) -> Tensor"); returns the decorator making the CustomOp.
    Deprecated (as torch's): use dispatcher.library.custom_op."""
    warn_deprecated()

    def inner(func: Callable[..., Any]) -> CustomOp:
        check_is_function(func)

        ns, name = parse_qualname(qualname)
        validate_namespace(ns)
        check_name_matches(func, qualname, name)

        schema = infer_schema(func, mutates_args=()) if manual_schema is None else manual_schema
        schema_str = f"{name}{schema}"
        function_schema = parse_function_schema(schema_str)
        validate_schema(function_schema)
        if manual_schema is not None:
            validate_function_matches_schema(function_schema, func)

        lib = Library(ns, "FRAGMENT", registry=registry_in_use())
        lib.define(schema_str)
        ophandle = find_ophandle_or_throw(ns, function_schema)
        result = CustomOp(lib, ns, function_schema, name, ophandle, _private_access=True)

        result.__name__ = func.__name__
        result.__module__ = func.__module__
        result.__doc__ = func.__doc__

        # As torch's decorator, without _register_autograd_kernel_indirection:
        # so impl_backward later finds this Autograd kernel and refuses.
        lib.impl(result._opname, autograd_kernel_indirection(weakref.proxy(result)), "Autograd")
        _set_report_error_callback(result)
        return result

    return inner


# Every CustomOp, by qualified name ("ns::foo"), until its _destroy(): what
# torch._custom_ops's functions look a name up in.
global_registry: dict[str, "CustomOp"] = {}


class CustomOp:
    """An operator defined by ``custom_op`` (or wrapped by ``_find_custom_op``),
    with the ``impl*`` methods registering its kernels.  Its constructor is
    private.  Deprecated (as torch's): use dispatcher.library.custom_op."""

    def __init__(self, lib: Any, cpp_ns: Any, schema: Any, operator_name: Any, ophandle: Any, *,
                 _private_access: bool = False) -> None:
        super().__init__()
        warn_deprecated()
        if not _private_access:
            raise RuntimeError(
                "The CustomOp constructor is private and we do not guarantee "
                "BC for it. Please use custom_op(...) to create a CustomOp object"
            )
        name = f"{cpp_ns}::{operator_name}"
        self._schema: FunctionSchema = schema
        self._cpp_ns: str = cpp_ns
        self._lib: Library = lib
        self._ophandle: Any = ophandle  # the operator's OperatorHandle
        self._opname: str = operator_name  # "foo"
        self._qualname: str = name  # "ns::foo"
        self.__name__: Optional[str] = None
        # Kind ("cpu", "abstract", "backward", ...) -> the function registered and where.
        # Some are kernels in the dispatcher too: changing this dict does not change those.
        self._impls: dict[str, Optional[FuncAndLocation]] = {}
        # See autograd.autograd_kernel_indirection.
        self._registered_autograd_kernel_indirection = False
        self._output_differentiability: Optional[list[bool]] = None

        global_registry[self._qualname] = self

    def _register_autograd_kernel_indirection(self) -> None:
        if self._registered_autograd_kernel_indirection:
            raise AssertionError("autograd kernel indirection already registered")
        # Its save_for_backward and backward functions (and the kernels below) get list arguments as lists.
        self._lib.impl(self._opname, _with_lists_as_lists(autograd_kernel_indirection(weakref.proxy(self)),
                                                          self._ophandle.schema), "Autograd")
        self._registered_autograd_kernel_indirection = True

    def _register_impl(self, kind: str, func: Callable[..., Any], stacklevel: int = 2) -> None:
        """Record ``func`` as the ``kind`` impl, with where it was registered
        (the first frame outside this package: torch counts ``stacklevel``
        frames up to the same one)."""
        if self._has_impl(kind):
            func_and_location = self._impls[kind]
            if func_and_location is None:
                raise AssertionError("func_and_location is unexpectedly None")
            location = func_and_location.location
            raise RuntimeError(
                f"Attempting to register a {kind} impl for operator {self._qualname} "
                f"that already has a {kind} impl registered from Python at "
                f"{location}. This is not supported."
            )
        location = registration_site(1).removeprefix("registered at ")
        self._impls[kind] = FuncAndLocation(func, location)

    def _get_impl(self, kind: str) -> FuncAndLocation:
        found = self._impls[kind]
        if found is None:
            raise AssertionError(f"the {kind} impl of {self._qualname} is unexpectedly None")
        return found

    def _has_impl(self, kind: str) -> bool:
        return kind in self._impls

    def _destroy(self) -> None:
        """Take the operator's registrations away and forget it (for tests; the
        object is unusable afterwards).  torch also drops the operator from its
        torch.ops cache; dispatcher.ops is no cache (the registry keeps it
        current), so there is nothing more to drop."""
        self._lib.close()
        del self._lib
        del global_registry[self._qualname]

    def __repr__(self) -> str:
        return f'<CustomOp(op="{self._qualname}")>'

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Straight to the operator handle, as torch's _dispatch_call_boxed.
        return self._ophandle(*args, **kwargs)

    def impl(self, device_types: Union[str, Iterable[str]], _stacklevel: int = 2) -> Callable[[Any], Any]:
        """Register the decorated function as the kernel for ``device_types``
        ("cpu", "cuda", or several).  Deprecated: use dispatcher.library.custom_op."""
        if isinstance(device_types, str):
            device_types = [device_types]
        device_types = list(device_types)
        for device_type in device_types:
            validate_device_type(device_type)

        def inner(f: Callable[..., Any]) -> Callable[..., Any]:
            # The kernel gets its list arguments as lists, as torch passes them (dispatcher/list_arguments.py).
            kernel = _with_lists_as_lists(f, self._ophandle.schema)
            for device_type in dict.fromkeys(device_types):
                self._check_doesnt_have_library_impl(device_type)
                self._register_impl(device_type, f, stacklevel=_stacklevel)
                self._lib.impl(self._opname, kernel, SUPPORTED_DEVICE_TYPE_TO_KEY[device_type])
            return f

        return inner

    def _check_doesnt_have_library_impl(self, device_type: str) -> None:
        if self._has_impl(device_type):
            return
        key = SUPPORTED_DEVICE_TYPE_TO_KEY[device_type]
        if torch_C._dispatch_has_computed_kernel_for_dispatch_key(self._qualname, key):
            raise RuntimeError(
                f"impl(..., device_types={device_type}): the operator {self._qualname} "
                f"already has an implementation for this device type via a "
                f"pre-existing torch.library or TORCH_LIBRARY registration."
            )

    def impl_factory(self) -> Callable[[Any], Any]:
        """Register the decorated function as the kernel of a factory function (BackendSelect)."""

        def inner(f: Callable[..., Any]) -> Callable[..., Any]:
            self._register_impl("factory", f)
            self._lib.impl(self._opname, f, "BackendSelect")
            return f

        return inner

    def impl_abstract(self, _stacklevel: int = 2) -> Callable[[Any], Any]:
        """Register the decorated function as the abstract (Meta) implementation.
        Deprecated: use dispatcher.library.register_fake."""

        def inner(f: Callable[..., Any]) -> Callable[..., Any]:
            self._check_doesnt_have_library_meta_impl()
            self._register_impl("abstract", f, stacklevel=_stacklevel)
            location = self._get_impl("abstract").location
            qualname = self._qualname

            def error_on_ctx() -> NoReturn:
                raise RuntimeError(
                    f"Attempted to call get_ctx() for the meta implementation "
                    f"for {qualname}."
                    f"You have presumably called get_ctx() because the operator "
                    f"has a data-dependent output shape; if so, there is no "
                    f"such meta implementation and this error is the correct "
                    f"behavior. Otherwise, please remove the call to get_ctx() "
                    f"in the implementation registered with impl_abstract "
                    f"at {location}"
                )

            @functools.wraps(f)
            def f_with_ctx(*args: Any, **kwargs: Any) -> Any:
                with ctx_getter(error_on_ctx):  # a meta kernel has no context
                    return f(*args, **kwargs)

            self._lib.impl(self._opname, _with_lists_as_lists(f_with_ctx, self._ophandle.schema), "Meta")
            return f

        return inner

    def _check_can_register_backward(self) -> None:
        schema = self._schema

        def error(detail: str) -> None:
            raise RuntimeError(
                f"Cannot use torch._custom_ops APIs to register backward "
                f"formula for {detail}. Got operator "
                f"{self._qualname} with schema: {schema}"
            )

        if not _is_functional_kind(schema):
            error("non-functional operator")

        rets = schema.returns
        if not rets:
            error("operator with no returns")

        if any(r.alias_info is not None and not r.alias_info.is_write for r in rets):
            error("operator that returns views")

        for ret in rets:
            if ret.type.strip_annotations() in _ALLOWED_RETURN_TYPES:
                continue
            error(f"operator with return not in {list(_ALLOWED_RETURN_TYPES.values())} (got {ret.type})")

    def _check_doesnt_have_library_autograd_impl(self) -> None:
        if self._registered_autograd_kernel_indirection:
            return

        if torch_C._dispatch_has_kernel_for_dispatch_key(self._qualname, "CompositeImplicitAutograd"):
            raise RuntimeError(
                f"impl_backward/impl_save_for_backward: the operator {self._qualname} "
                f"already has an implementation for this device type via a "
                f"pre-existing registration to DispatchKey::CompositeImplicitAutograd."
                f"CompositeImplicitAutograd operators do not need an autograd formula; "
                f"instead, the operator will decompose into its constituents and those "
                f"can have autograd formulas defined on them."
            )

        for key in ["Autograd", "AutogradCPU", "AutogradCUDA"]:
            if torch_C._dispatch_has_kernel_for_dispatch_key(self._qualname, key):
                raise RuntimeError(
                    f"impl_backward/impl_save_for_backward: "
                    f"the operator {self._qualname} already has an Autograd kernel "
                    f"registered to DispatchKey::{key} vi a pre-existing "
                    f"torch.library or TORCH_LIBRARY registration. Please either "
                    f"remove those registrations or don't use the torch._custom_ops APIs"
                )

    def _check_doesnt_have_library_meta_impl(self) -> None:
        if self._has_impl("abstract"):
            return
        has_kernel = functools.partial(torch_C._dispatch_has_kernel_for_dispatch_key, self._qualname)

        # An operator with a CompositeExplicitAutograd kernel and no Meta one
        # may have an abstract impl: such a kernel may not work on meta tensors.
        if has_kernel("CompositeExplicitAutograd") and not has_kernel("Meta"):
            return

        if has_kernel("CompositeImplicitAutograd"):
            raise RuntimeError(
                f"impl_abstract(...): the operator {self._qualname} "
                f"already has an implementation for this device type via a "
                f"pre-existing registration to DispatchKey::CompositeImplicitAutograd."
                f"CompositeImplicitAutograd operators do not need an abstract impl; "
                f"instead, the operator will decompose into its constituents and those "
                f"can have abstract impls defined on them."
            )

        if has_kernel("Meta"):
            raise RuntimeError(
                f"impl_abstract(...): the operator {self._qualname} "
                f"already has a DispatchKey::Meta implementation via a "
                f"pre-existing torch.library or TORCH_LIBRARY registration. "
                f"Please either remove that registration or don't call impl_abstract."
            )

    def _register_autograd_kernel(self) -> None:
        """Both formulas are in: make the autograd impl the Autograd kernel calls."""
        if not self._has_impl("backward"):
            raise AssertionError("backward impl must be registered first")
        if not self._has_impl("save_for_backward"):
            raise AssertionError("save_for_backward impl must be registered first")
        kernel = construct_autograd_kernel(
            self._schema,
            self._output_differentiability,
            self,
            get_op(self._qualname),
            self._get_impl("save_for_backward").func,
            self._get_impl("backward").func,
        )
        self._register_impl("autograd", kernel)

    def impl_save_for_backward(self, _stacklevel: int = 2) -> Callable[[Any], None]:
        """Register the decorated ``f(inputs, output)``, whose result is what the
        backward formula gets as ``saved`` (see impl_backward)."""

        def inner(f: Callable[..., Any]) -> None:
            self._check_can_register_backward()
            self._check_doesnt_have_library_autograd_impl()
            if not self._registered_autograd_kernel_indirection:
                self._register_autograd_kernel_indirection()
            self._register_impl("save_for_backward", f, stacklevel=_stacklevel)
            if self._has_impl("backward"):
                self._register_autograd_kernel()

        return inner

    def impl_backward(self, output_differentiability: Optional[list[bool]] = None,
                      _stacklevel: int = 2) -> Callable[[Any], None]:
        """Register the decorated ``f(ctx, saved, *grads)``, returning a dict from
        each tensor argument's name to its gradient.  ``output_differentiability``:
        a bool per output.  Deprecated: use dispatcher.library.register_autograd."""
        if output_differentiability is not None:

            def yell() -> None:
                raise RuntimeError(
                    f"impl_backward(output_differentiability): expected "
                    f"output_differentiability to be a list of bools with "
                    f"length equal to the number of outputs of this CustomOp "
                    f"got: {output_differentiability}"
                )

            if not isinstance(output_differentiability, list):
                yell()
            for diff in output_differentiability:
                if not isinstance(diff, bool):
                    yell()
            if len(self._schema.returns) != len(output_differentiability):
                yell()

        def inner(f: Callable[..., Any]) -> None:
            self._check_can_register_backward()
            self._check_doesnt_have_library_autograd_impl()
            if not self._registered_autograd_kernel_indirection:
                self._register_autograd_kernel_indirection()
            self._register_impl("backward", f, stacklevel=_stacklevel)
            self._output_differentiability = output_differentiability
            if self._has_impl("save_for_backward"):
                self._register_autograd_kernel()

        return inner


# The return types an autograd formula may have (torchgen's names, as torch lists them).
_ALLOWED_RETURN_TYPES = {
    BaseType(BaseTy.int): "int",
    BaseType(BaseTy.SymInt): "SymInt",
    BaseType(BaseTy.bool): "bool",
    BaseType(BaseTy.float): "float",
    BaseType(BaseTy.Tensor): "Tensor",
    ListType(BaseType(BaseTy.Tensor)): "List[Tensor]",
}


@dataclasses.dataclass
class FuncAndLocation:
    func: Callable[..., Any]
    location: str


# torchgen's first check of a schema (FunctionSchema.decl_re).
_DECLARATION = re.compile(r"(?P<name>[^\(]+)\((?P<args>.*)\) -> (?P<returns>.*)")


def parse_function_schema(schema_str: str) -> FunctionSchema:
    """``schema_str`` ("foo(Tensor x) -> Tensor") parsed; torchgen's AssertionError
    for a text that is not a declaration at all, the schema parser's error else."""
    if len(_DECLARATION.findall(schema_str)) != 1:
        raise AssertionError(f"Invalid function schema: {schema_str}")
    return FunctionSchema.parse(schema_str)


def _is_functional_kind(schema: FunctionSchema) -> bool:
    """torchgen's ``schema.kind() == SchemaKind.functional``: no argument written,
    and not named as an in-place operator (``foo_``)."""
    name = schema.name.name
    inplace = name.endswith("_") and not (name.startswith("__") and name.endswith("__"))
    return not inplace and not any(a.is_write for a in schema.arguments)


def find_ophandle_or_throw(cpp_ns: str, schema: FunctionSchema) -> Any:
    """The OperatorHandle of ``cpp_ns::<schema's name>``; RuntimeError if it is not defined."""
    name = schema.name
    qualname = f"{cpp_ns}::{name.name}" + (f".{name.overload_name}" if name.overload_name else "")
    return registry_in_use().op_or_throw(qualname).handle


def validate_namespace(ns: str) -> None:
    if "." in ns:
        raise ValueError(
            f'custom_op(..., ns="{ns}"): expected ns to not contain any . (and be a '
            f"valid variable name)"
        )
    if ns in RESERVED_NS:
        raise ValueError(
            f"custom_op(..., ns='{ns}'): '{ns}' is a reserved namespace, "
            f"please choose something else. "
        )


def validate_schema(schema: FunctionSchema) -> None:
    if not _is_functional_kind(schema) or not _is_functional_schema(schema):
        raise ValueError(
            f"custom_op only supports functional operators "
            f"(ops that do not mutate any inputs, do not return "
            f"views of the inputs, and has at least one return). "
            f"Got the following non-functional schema: {schema}"
        )

    # For simplicity: no arguments named self (torchgen's self_arg: a positional one).
    if any(a.name == "self" and not a.kwarg_only for a in schema.arguments):
        raise ValueError(
            f"custom_op does not support arguments named 'self'. Please "
            f"rename your argument. Got: {schema}"
        )


def parse_qualname(qualname: str) -> tuple[str, str]:
    if not isinstance(qualname, str):  # torch fails on str's methods here
        raise TypeError(f"expected the operator's name as a str such as 'ns::foo', got {type(qualname).__name__}")
    names = qualname.split("::", 1)
    if len(names) != 2:
        raise ValueError(
            f"Expected there to be a namespace in {qualname}, i.e. The "
            f"operator name should look something like ns::foo"
        )
    if "." in names[1]:
        raise ValueError(
            f"The torch.custom_ops APIs do not handle overloads, "
            f"i.e. operator names with '.' in them. "
            f"Please name your operator something like ns::foo. "
            f"Got: {qualname}"
        )
    return names[0], names[1]


def validate_device_type(device_type: str) -> None:
    # (Not a str: torch's dict lookup may fail on it unhashable; the same error here.)
    if not isinstance(device_type, str) or device_type not in SUPPORTED_DEVICE_TYPE_TO_KEY:
        raise ValueError(
            f"CustomOp.impl(device_types=[{device_type}, ...]): we only support device_type "
            f"in {SUPPORTED_DEVICE_TYPE_TO_KEY.keys()}."
        )


def supported_param(param: inspect.Parameter) -> bool:
    return param.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


def validate_function_matches_schema(schema: FunctionSchema, func: Callable[..., Any]) -> None:
    """``func``'s parameters are the schema's arguments: the same names, the same
    keyword-only ones, no annotations, no defaults on either side."""
    sig = inspect.signature(func)

    if not all(supported_param(p) for p in sig.parameters.values()):
        raise ValueError(
            f"custom_op(..., manual_schema)(func): positional-only args, "
            f"varargs, and kwargs are not supported. Please rewrite `func` "
            f"to not have them. Got `func` with signature: {sig}"
        )

    if (
        any(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values())
        or sig.return_annotation is not inspect.Signature.empty
    ):
        raise ValueError(
            f"custom_op(..., manual_schema)(func): When passing in a manual "
            f"schema, we expect `func` to have no type annotations to avoid "
            f"ambiguity. Got `func` with signature: {sig}"
        )

    positional = [(name, param) for name, param in sig.parameters.items()
                  if param.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    kwargonly = [(name, param) for name, param in sig.parameters.items()
                 if param.kind == inspect.Parameter.KEYWORD_ONLY]

    def error() -> None:
        raise ValueError(
            f"custom_op(..., manual_schema)(func): When passing in a manual "
            f"schema, we expect `func`'s signature to match `manual_schema` "
            f"(aside from type annotations). "
            f"func's signature: {sig}, manual_schema: {schema}"
        )

    def error_default_args() -> None:
        raise ValueError(
            f"custom_op(..., manual_schema)(func): "
            f"neither func nor manual_schema should have default "
            f"arguments. Got "
            f"func's signature: {sig}, manual_schema: {schema}"
        )

    def compare(sig_args: list[tuple[str, inspect.Parameter]], schema_args: list[Any]) -> None:
        if len(sig_args) != len(schema_args):
            error()
        for (name, param), arg in zip(sig_args, schema_args):
            if name != arg.name:
                error()
            if param.default is not inspect.Parameter.empty or arg.has_default:
                error_default_args()

    compare(positional, [a for a in schema.arguments if not a.kwarg_only])
    compare(kwargonly, [a for a in schema.arguments if a.kwarg_only])


def report_error_callback(custom_op: Any, key: str) -> None:
    """The error of a call of a CustomOp's operator that finds no kernel for ``key``."""
    if key == "Undefined":
        raise NotImplementedError(
            f"{custom_op}: There were no Tensor inputs to this operator "
            f"(e.g. you passed an empty list of Tensors). If your operator is a "
            f"factory function (that is, it takes no Tensors and constructs "
            f"a new one), then please use CustomOp.impl_factory to register "
            f"an implementation for it"
        )
    if key == "Meta":
        raise NotImplementedError(
            f"{custom_op}: when running with device='Meta' tensors: there is no "
            f"abstract impl registered for this CustomOp. Please register one via "
            f"CustomOp.impl_abstract to get this CustomOp to work with Meta tensors"
        )
    if key in ("CPU", "CUDA"):
        device = key.lower()
        raise NotImplementedError(
            f"{custom_op}: when running with device='{device}' tensors: there is no "
            f"{device} impl registered for this CustomOp. Please register one via "
            f"CustomOp.impl(device_type='{device}')"
        )
    raise NotImplementedError(
        f"{custom_op}: No implementation for dispatch key {key}. It is likely "
        f"that we have not added this functionality yet, please either open an "
        f"issue or if you're feeling adventurous, use the low-level "
        f"torch.library API"
    )


def _set_report_error_callback(custom_op: CustomOp) -> None:
    entry = registry_in_use().op_or_throw(custom_op._qualname)
    entry.set_report_error_callback(functools.partial(report_error_callback, weakref.proxy(custom_op)))


def custom_op_from_existing(op: Any) -> CustomOp:
    """A CustomOp for operator ``op`` (an OperatorHandle) defined otherwise."""
    ns = op.namespace
    lib = Library(ns, "FRAGMENT", registry=registry_in_use())
    name = op.name().split("::")[-1]
    # CustomOp expects the schema without the namespace.
    schema = parse_function_schema(str(op.schema).rsplit("::", maxsplit=1)[-1])
    return CustomOp(lib, ns, schema, name, op, _private_access=True)


def get_op(qualname: str) -> Any:
    """The default overload (OperatorHandle) of operator ``qualname`` ("ns::foo");
    ValueError if there is none."""
    ns, name = parse_qualname(qualname)
    entry = registry_in_use().find_op(f"{ns}::{name}")
    if entry is None:
        raise ValueError(
            f"Could not find the operator {qualname}. Please make sure you have "
            f"already registered the operator and (if registered from C++) "
            f"loaded it via torch.ops.load_library."
        )
    return entry.handle


def _find_custom_op(qualname: str, also_check_torch_library: bool = False) -> CustomOp:
    if qualname in global_registry:
        return global_registry[qualname]
    if not also_check_torch_library:
        raise RuntimeError(
            f'Could not find custom op "{qualname}". Did you register it via '
            f"the torch._custom_ops API?"
        )
    return custom_op_from_existing(get_op(qualname))


def get_abstract_impl(qualname: str) -> Optional[Callable[..., Any]]:
    """The abstract impl registered for ``qualname`` with this API, or None."""
    custom_op = global_registry.get(qualname)
    if custom_op is None or not custom_op._has_impl("abstract"):
        return None
    return custom_op._get_impl("abstract").func


def _custom_op_with_schema(qualname: str, schema: str, needs_fixed_stride_order: bool = True) -> Any:
    """Define ``qualname`` with ``schema`` ("(Tensor x) -> Tensor") as a CustomOp;
    returns its OperatorHandle (torch._custom_ops.custom_op's work)."""
    ns, name = qualname.split("::")
    schema_str = f"{name}{schema}"
    function_schema = parse_function_schema(schema_str)
    validate_schema(function_schema)
    tags = ["needs_fixed_stride_order"] if needs_fixed_stride_order else []
    lib = Library(ns, "FRAGMENT", registry=registry_in_use())
    lib.define(schema_str, tags=tags)
    ophandle = find_ophandle_or_throw(ns, function_schema)
    result = CustomOp(lib, ns, function_schema, name, ophandle, _private_access=True)
    result._register_autograd_kernel_indirection()
    _set_report_error_callback(result)
    return get_op(qualname)


def _with_lists_as_lists(f: Callable[..., Any], schema: FunctionSchema) -> Callable[..., Any]:
    """``f``, called with its list arguments as lists (or ``f`` itself if it has none)."""
    as_lists = lists_as_torch_passes_them(schema, registry_in_use().engine)
    if as_lists is None:
        return f

    def kernel(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = as_lists(args, kwargs)
        return f(*args, **kwargs)

    return functools.update_wrapper(kernel, f)
