"""``custom_op`` and its registration functions: torch.library's custom-operator API without torch.

``custom_op("mylib::numpy_sin", mutates_args=())`` turns a Python function
with type hints into an operator (its schema from ``infer_schema``) and
returns a ``CustomOpDef``: calling it calls the operator through the
dispatcher, ``ops.mylib.numpy_sin.default`` is the same operator, and
``register_kernel``, ``register_fake`` and ``register_autograd`` add to it.
The module functions of those names do the same for any operator, given
its name, its OperatorHandle or its CustomOpDef.  This is torch 2.13's
torch/_library/custom_ops.py, register by register:

======================  ========================================================================
dispatch key            kernel a CustomOpDef registers
======================  ========================================================================
CPU, CUDA, ...          the function, for each ``device_types`` entry ("cpu" -> CPU,
                        "cuda" -> CUDA, "meta" -> Meta, PrivateUse1's name -> PrivateUse1)
CompositeExplicitAutograd  the function when ``device_types`` is None: every backend
Meta                    the fake implementation (see Note [Fake means Meta])
Autograd                custom_op_autograd.make_autograd_impl: records when an argument
                        requires grad, through the tensors' autograd engine
ADInplaceOrView         for a mutable operator: bumps the version of each mutated tensor;
                        for a view (``Tensor(a)``): custom_op_views.make_view_kernel
BackendSelect           for an operator without tensor arguments and with device kernels:
                        the kernel of its ``device`` argument's device type
======================  ========================================================================

Note [Fake means Meta]
torch runs a fake implementation on FakeTensors (tensors with a device but no
data, under a FakeTensorMode that torch.compile sets up) and also registers
it as the operator's Meta kernel.  Without torch there are no FakeTensors:
a tensor library's data-less tensors are its meta tensors (dispatcher.prototype
has them), so here the fake implementation *is* the Meta kernel, and
``opcheck``'s test_faketensor runs it on meta copies of the inputs.  Inside
it, ``get_ctx()`` gives a FakeImplCtx whose ``new_dynamic_size`` raises: a
size that depends on the data needs the symbolic shapes this package does
not have.

Tags are names (``"inplace"``, ``"out"``), as ``Library.define`` takes them;
every custom operator is also tagged ``"pt2_compliant_tag"``, as torch's are.

Custom operators are defined in the registry in use (Note [The registry in
use] in registry.py): the package's, unless a ``using_registry`` block names
another (a test's, on the other engine).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import threading
import warnings
import weakref
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, TypeVar, Union, overload

from . import _engine
from .backends import dispatch_key_for_device
from .custom_op_autograd import Info, make_autograd_impl
from .custom_op_views import aliases_without_write, make_view_kernel
from .kernel import registration_site
from .torch_function import handle_bound_call, has_bound_torch_function, register_unchecked_type
from .keys import DispatchKey
from .kernel_results import result_check
from .list_arguments import lists_as_torch_passes_them
from .keysets import AFTER_ADINPLACEORVIEW_KEYSET
from .operator_tags import Tag
from ._library import Library, _parse_qualname, keys_for_types
from .autocast_rules import add_autocast_kernel
from .vmap_rules import add_vmap_rule
from .registry import Dispatcher, registry_in_use
from .schema import BaseTy, BaseType, FunctionSchema, ListType, OptionalType, Type
from .schema_inference import infer_schema, normalize_tags
from .tensor_protocols import autograd_engine_for, tensor_checks_for
from .value_types import device

__all__ = [
    "CustomOpDef",
    "FakeImplCtx",
    "custom_op",
    "dispatch_key_for_device",
    "fake_impl_source",
    "get_ctx",
    "register_autograd",
    "register_fake",
    "register_kernel",
]

log = logging.getLogger(__name__)

DeviceTypes = Union[str, Sequence[str], None]
Tags = Union[Tag, str, Sequence[Union[Tag, str]], None]
_F = TypeVar("_F", bound=Callable[..., Any])


_FAKE_DEBUG = "registered by register_fake at "


# -- the fake-implementation context -----------------------------------------------------------
class FakeImplCtx:
    """What ``get_ctx()`` returns inside a fake implementation (torch's FakeImplCtx)."""

    def __init__(self, qualname: str, source: str) -> None:
        self._qualname = qualname
        self._source = source

    def __repr__(self) -> str:
        return f"<FakeImplCtx of {self._qualname}>"

    def new_dynamic_size(self, *, min: int = 0, max: Optional[int] = None) -> int:
        """torch makes an unbacked symbolic int here: a size known only once the data is.

        There are no symbolic shapes without torch, so after checking the
        bounds as torch does this raises: an operator whose output shape
        depends on its data has no meta (fake) result here.
        """
        if not isinstance(min, int) or (max is not None and not isinstance(max, int)):
            raise ValueError(
                f"ctx.new_dynamic_size(min={min}, max={max}): expected min and max to be statically known ints"
            )
        if min < 0:
            raise ValueError(
                f"ctx.new_dynamic_size(min={min}, ...): expected min to be greater than or equal to 0: "
                "this API can only create non-negative sizes."
            )
        raise RuntimeError(
            f"{self._qualname} ({self._source}): ctx.new_dynamic_size() needs symbolic shapes, which this "
            "dispatcher does not have (torch makes an unbacked SymInt here): an operator whose output shape "
            "depends on its data cannot run on meta tensors. Run it on tensors with data instead."
        )


class _CtxState(threading.local):
    current: Optional[FakeImplCtx] = None
    # Set instead of ``current`` by a kernel whose get_ctx() is an error (a legacy
    # CustomOp's meta kernel, dispatcher/_custom_op): get_ctx() calls it, and it raises.
    getter: Optional[Callable[[], FakeImplCtx]] = None


_ctx_state = _CtxState()


def get_ctx() -> Optional[FakeImplCtx]:
    """The FakeImplCtx of the fake implementation running now; None outside one (as torch's)."""
    getter = _ctx_state.getter
    return _ctx_state.current if getter is None else getter()


@contextlib.contextmanager
def ctx_getter(getter: Optional[Callable[[], FakeImplCtx]]) -> Iterator[None]:
    """Within the block, get_ctx() returns ``getter()`` (torch's set_ctx_getter)."""
    previous = _ctx_state.current, _ctx_state.getter
    _ctx_state.current, _ctx_state.getter = None, getter
    try:
        yield
    finally:
        _ctx_state.current, _ctx_state.getter = previous


def _meta_kernel(qualname: str, source: str, fake_fn: Callable[..., Any],
                 check: Callable[[], Callable[[Any], Any]]) -> Callable[..., Any]:
    """The Meta kernel that runs ``fake_fn`` with ``get_ctx()`` set (see Note [Fake means Meta]),
    its result checked and converted by ``check()``'s function (see dispatcher.kernel_results)."""

    def meta_kernel(*args: Any, **kwargs: Any) -> Any:
        previous = _ctx_state.current, _ctx_state.getter
        _ctx_state.current, _ctx_state.getter = FakeImplCtx(qualname, source), None
        try:
            result = fake_fn(*args, **kwargs)
        finally:
            _ctx_state.current, _ctx_state.getter = previous
        return check()(result)

    return meta_kernel


def _result_check_when_called(dispatcher: Dispatcher, qualname: str) -> Callable[[], Callable[[Any], Any]]:
    """``qualname``'s result check, made when called: a fake implementation may be
    registered before its operator is defined, and outlive one definition of it."""
    made: list[tuple[FunctionSchema, Callable[[Any], Any]]] = []

    def check() -> Callable[[Any], Any]:
        schema = dispatcher.op_or_throw(qualname).handle.schema
        if not made or made[0][0] is not schema:
            made[:] = [(schema, result_check(schema, dispatcher.engine))]
        return made[0][1]

    return check


def _user_site() -> str:
    """``FILE:LINE`` of the first caller outside the registering modules (this one included)."""
    return registration_site(1).removeprefix("registered at ")


# -- schema questions (torch/_library/utils.py) ---------------------------------------------------
def _is_tensor_like(t: Type) -> bool:
    """Tensor or Tensor? (torch's is_tensor_like_type), annotations aside."""
    t = t.strip_annotations()
    return t == BaseType(BaseTy.Tensor) or t == OptionalType(BaseType(BaseTy.Tensor))


def _is_tensorlist_like(t: Type) -> bool:
    """Tensor[], Tensor?[] or Tensor[]? (torch's is_tensorlist_like_type)."""
    t = t.strip_annotations()
    if isinstance(t, OptionalType):
        t = t.elem
    return isinstance(t, ListType) and _is_tensor_like(t.elem)


def _has_tensor_arg(schema: FunctionSchema) -> bool:
    return any(_is_tensor_like(a.type) or _is_tensorlist_like(a.type) for a in schema.arguments)


def _has_kwarg_only_tensors(schema: FunctionSchema) -> bool:
    return any(a.kwarg_only and (_is_tensor_like(a.type) or _is_tensorlist_like(a.type)) for a in schema.arguments)


def check_vmap_schema(schema: FunctionSchema) -> None:
    """What torch.library.register_vmap refuses: tensors passed by keyword only."""
    if _has_kwarg_only_tensors(schema):
        raise NotImplementedError(
            "register_vmap with kwarg-only Tensor args. In the original definition of the op, please make your "
            f"tensors not kwarg-only. Got: {schema}"
        )


def _device_arg_index(schema: FunctionSchema) -> Optional[int]:
    """The position of a ``Device device`` argument (torch's get_device_arg_index)."""
    for index, argument in enumerate(schema.arguments):
        if argument.type == BaseType(BaseTy.Device) and argument.name == "device":
            return index
    return None


def _is_view_op(schema: FunctionSchema) -> bool:
    """An argument aliased but not written (``Tensor(a) self``): c10's view operators."""
    return any(a.alias_info is not None and not a.alias_info.is_write for a in schema.arguments)


def _is_functional_schema(schema: FunctionSchema, *, allow_valid_view: bool = False) -> bool:
    """No mutation, at least one return, and (unless a valid view: one tensor in, one out) no aliasing return."""
    if schema.is_mutable:
        return False
    if any(aliases_without_write(r.type) for r in schema.returns):  # Tensor(a)[] too, as c10 annotates its list
        tensors_in = sum(_is_tensor(a.type) for a in schema.arguments)  # Tensor(a) too, as torch's TensorType
        tensors_out = sum(r.type.strip_annotations() == BaseType(BaseTy.Tensor) for r in schema.returns)
        return allow_valid_view and tensors_in == 1 and tensors_out == 1
    return bool(schema.returns)


def _mutated_args_kwargs(schema: FunctionSchema) -> tuple[list[int], list[str]]:
    """Positions of the mutated positional arguments, names of the mutated keyword-only ones."""
    positions: list[int] = []
    names: list[str] = []
    for i, argument in enumerate(schema.arguments):
        if argument.is_write:
            if argument.kwarg_only:
                names.append(argument.name)
            else:
                positions.append(i)
    return positions, names


def _is_tensor(type_: Any) -> bool:
    return bool(type_.strip_annotations() == BaseType(BaseTy.Tensor))


def _validate_out_schema(schema: FunctionSchema) -> None:
    """What the "out" tag asks of a schema: torch.library's _validate_out_schema, its checks and texts."""
    tag = "schema tagged with torch.Tag.out"
    mutable = [a for a in schema.arguments if a.is_write]
    if not mutable:
        raise ValueError(f"Schema tagged with torch.Tag.out must have at least one mutable argument. Got: {schema}")
    positional = [a.name for a in mutable if not a.kwarg_only]
    if positional:
        raise ValueError(
            "Schema tagged with torch.Tag.out requires all mutable arguments to be keyword-only (after the *). "
            f"Found mutable positional args: {positional}. Got: {schema}"
        )
    unsupported = [a.name for a in mutable if not _is_tensor(a.type)]
    if unsupported:
        raise ValueError(
            "Schema tagged with torch.Tag.out only supports Tensor mutable arguments. "
            f"Found unsupported mutable args: {unsupported}. Got: {schema}"
        )
    if len(schema.returns) != len(mutable):
        raise ValueError(
            "Schema tagged with torch.Tag.out must return all mutable arguments "
            f"(got {len(mutable)} mutable args but {len(schema.returns)} returns). Got: {schema}"
        )
    for i, (ret, argument) in enumerate(zip(schema.returns, mutable)):
        ret_alias, arg_alias = ret.alias_info, argument.alias_info
        if ret_alias is None:
            raise ValueError(f"Return {i} of {tag} must alias mutable arg '{argument.name}'. Got: {schema}")
        if not ret_alias.is_write:
            raise ValueError(
                f"Return {i} of {tag} must be a mutable alias (e.g., Tensor(a!), not Tensor(a)) of arg "
                f"'{argument.name}'. Got: {schema}"
            )
        if arg_alias is not None and set(ret_alias.before_set) != set(arg_alias.before_set):
            raise ValueError(
                f"Return {i} of {tag} must alias mutable arg '{argument.name}' (return aliases "
                f"{set(ret_alias.before_set)} but arg aliases {set(arg_alias.before_set)}). Got: {schema}"
            )


def _validate_inplace_schema(schema: FunctionSchema) -> None:
    """What the "inplace" tag asks of a schema: torch.library's _validate_inplace_schema, its checks and texts."""
    tag = "Schema tagged with torch.Tag.inplace"
    args = schema.arguments
    if not args or args[0].kwarg_only:
        raise ValueError(f"{tag} must have at least one positional argument. Got: {schema}")
    first = args[0]
    first_alias = first.alias_info
    if first_alias is None or not first_alias.is_write:
        raise ValueError(f"{tag} requires the first positional argument to be mutable (e.g., Tensor(a!)). Got: {schema}")
    if not _is_tensor(first.type):
        raise ValueError(
            f"{tag} requires the first positional argument to be a Tensor. Got type '{first.type}' for arg "
            f"'{first.name}'. Got: {schema}"
        )
    returns = schema.returns
    if len(returns) != 1:
        raise ValueError(
            f"{tag} must return exactly one value (the first argument). Got {len(returns)} returns. Got: {schema}"
        )
    ret = returns[0]
    must_return = f"{tag} must return the first mutable argument"
    if not _is_tensor(ret.type):
        raise ValueError(f"{must_return} (return must be a Tensor, got type '{ret.type}'). Got: {schema}")
    if ret.alias_info is None:
        raise ValueError(f"{must_return} (return must alias the first argument). Got: {schema}")
    if not ret.alias_info.is_write:
        raise ValueError(f"{must_return} (return must be a mutable alias, e.g., Tensor(a!)). Got: {schema}")
    if set(ret.alias_info.before_set) != set(first_alias.before_set):
        raise ValueError(
            f"{must_return} (return aliases {set(ret.alias_info.before_set)} but first arg aliases "
            f"{set(first_alias.before_set)}). Got: {schema}"
        )
    others = [a.name for a in args[1:] if a.is_write]
    if others:
        raise ValueError(
            f"{tag} must only mutate the first positional argument. Found additional mutable args: {others}. "
            f"Got: {schema}"
        )


def _tensors_in(values: Iterable[Any], engine: Any) -> Iterator[Any]:
    """The tensors among ``values``, and in lists and tuples among them (one level, as torch's iter_tensors)."""
    for value in values:
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if engine.tensor_key_set(item) is not None:
                yield item


def _aliases(a: Any, b: Any) -> bool:
    if a is b:
        return True
    checks = tensor_checks_for(a)
    return checks is not None and checks is tensor_checks_for(b) and checks.shares_memory(a, b)


def _increment_version(value: Any) -> None:
    for item in value if isinstance(value, (list, tuple)) else (value,):
        engine = autograd_engine_for(item)
        if engine is not None:
            engine.increment_version(item)


# -- CustomOpDef ------------------------------------------------------------------------------------
# ns::name -> the library of the CustomOpDef defined under that name: a new
# custom_op of the same name replaces the old operator, as in torch.
OPDEF_TO_LIB: dict[str, Library] = {}
OPDEFS: "weakref.WeakValueDictionary[str, CustomOpDef]" = weakref.WeakValueDictionary()


def _library_allowing_overwrite(namespace: str, name: str, registry: Dispatcher) -> Library:
    qualname = f"{namespace}::{name}"
    previous = OPDEF_TO_LIB.pop(qualname, None)
    if previous is not None:
        previous.close()
    library = Library(namespace, "FRAGMENT", registry=registry)
    OPDEF_TO_LIB[qualname] = library
    return library


class CustomOpDef:
    """A function made into an operator by ``custom_op``; don't make one directly.

    Calling it calls the operator (``_opoverload``, the OperatorHandle that
    ``ops.<ns>.<name>.default`` also is).  ``register_kernel``,
    ``register_fake`` and ``register_autograd`` add to it.
    """

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable[..., Any], tags: Tags = None) -> None:
        self._namespace = namespace
        self._name = name
        self._schema = schema  # the schema after the name: "(Tensor x) -> Tensor"
        self._tags = normalize_tags(tags)
        self._init_fn = fn
        self._backend_fns: dict[Optional[str], Callable[..., Any]] = {}
        self._abstract_fn: Optional[Callable[..., Any]] = None
        self._setup_context_fn: Optional[Callable[..., Any]] = None
        self._backward_fn: Optional[Callable[..., Any]] = None
        self._is_inplace = False
        self._is_out = False
        self._out_kwarg_names: tuple[str, ...] = ()
        self._disabled_kernel: set[Optional[str]] = set()
        self._site = _user_site()
        self._registry = registry_in_use()
        self._lib = _library_allowing_overwrite(namespace, name, self._registry)
        try:
            self._register_to_dispatcher(self._tags)
        except BaseException:
            self._destroy()
            raise
        OPDEFS[self._qualname] = self

    @property
    def _qualname(self) -> str:
        return f"{self._namespace}::{self._name}"

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # torch checks __torch_function__ when the OpOverload is called; ours
        # makes no check (the engine's call path stays as it is), so the
        # CustomOpDef makes it, giving handlers the OpOverload as torch does.
        relevant = (*args, *kwargs.values()) if kwargs else args
        if has_bound_torch_function(relevant):
            return handle_bound_call(self._opoverload, relevant, *args, **kwargs)
        return self._opoverload(*args, **kwargs)

    def _destroy(self) -> None:
        """Undefine the operator (a failed definition, or a test's cleanup)."""
        with self._registry.lock:
            self._lib.close()
            if OPDEF_TO_LIB.get(self._qualname) is self._lib:
                del OPDEF_TO_LIB[self._qualname]
            if OPDEFS.get(self._qualname) is self:
                del OPDEFS[self._qualname]

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type: str, enabled: bool = True) -> Iterator[None]:
        """Disable (or enable again) the kernel registered for ``device_type`` within a ``with`` block:
        while disabled, calls run the function given to ``custom_op`` instead."""
        action = "enable" if enabled else "disable"
        originally_disabled = device_type in self._disabled_kernel
        if device_type not in self._backend_fns:
            log.warning("Attempted to %s kernel for %s but no kernel was registered for this device type.",
                        action, device_type)
        if not enabled:
            if originally_disabled:
                log.warning("Attempted to disable kernel for %s but it was already disabled.", device_type)
            else:
                self._disabled_kernel.add(device_type)
        elif not originally_disabled:
            log.warning("Attempted to enable kernel for  %s but it was already enabled.", device_type)
        else:
            self._disabled_kernel.remove(device_type)
        try:
            yield
        finally:
            if originally_disabled:
                self._disabled_kernel.add(device_type)
            else:
                self._disabled_kernel.discard(device_type)

    @overload
    def register_kernel(self, device_types: DeviceTypes, fn: None = None, /) -> Callable[[_F], _F]: ...

    @overload
    def register_kernel(self, device_types: DeviceTypes, fn: _F, /) -> _F: ...

    def register_kernel(self, device_types: DeviceTypes, fn: Optional[Callable[..., Any]] = None, /) -> Any:
        """Register ``fn`` as the operator's implementation for ``device_types`` ("cpu",
        "cuda", ..., or None: every device type).  Usable as a decorator."""
        dtypes: list[Optional[str]] = [device_types] if device_types is None or isinstance(device_types, str) \
            else list(device_types)
        # Every device type is checked before anything is registered.
        keys = {device_type: None if device_type is None else dispatch_key_for_device(device_type)
                for device_type in dtypes}
        if device_types is not None and not _has_tensor_arg(self._opoverload.schema):
            device_arg_index = _device_arg_index(self._opoverload.schema)
            if device_arg_index is None:
                # torch's text (a torch.device there is a dispatcher.device here).
                raise ValueError(
                    "Functions without tensor inputs are required to have a `device: torch.device` argument"
                )
            self._register_backend_select_dispatcher(device_arg_index)

        def inner(fn: _F) -> _F:
            _check_callable(fn, "register_kernel")
            with self._registry.lock:
                # The functions first, then the kernels that call them: a call
                # on another thread never reaches a kernel without its function.
                # All or nothing: a failure puts both back as they were.
                previous = self._backend_fns
                self._backend_fns = {**previous, **{d: self._enabled_or_init(d, fn) for d in keys}}
                new_keys = [(d, key) for d, key in keys.items() if d not in previous]
                registered = 0
                try:
                    for device_type, key in new_keys:
                        self._lib.impl(self._name, self._backend_impl(device_type),
                                       "CompositeExplicitAutograd" if key is None else key,
                                       debug=f"registered at {_user_site()}")
                        registered += 1
                except BaseException:
                    self._lib.undo_newest(registered)
                    self._backend_fns = previous
                    raise
            return fn

        if fn is None:
            return inner
        return inner(fn)

    def _enabled_or_init(self, device_type: Optional[str], fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped_fn(*args: Any, **kwargs: Any) -> Any:
            if device_type in self._disabled_kernel:
                return self._init_fn(*args, **kwargs)
            return fn(*args, **kwargs)

        return functools.update_wrapper(wrapped_fn, fn)  # inspect.unwrap finds fn, for errors

    def _backend_impl(self, device_type: Optional[str]) -> Callable[..., Any]:
        """The kernel for ``device_type``: the current function for it, and torch's checks of what it returns."""
        engine = self._registry.engine
        schema = self._opoverload.schema
        check_result = result_check(schema, engine)
        # The function gets its list arguments as lists, as torch passes them (dispatcher/list_arguments.py).
        as_lists = lists_as_torch_passes_them(schema, engine)

        def where() -> str:
            implementation = inspect.unwrap(self._backend_fns[device_type])
            return f"{self._name} (with implementation in {inspect.getmodule(implementation)})"

        def backend_impl(*args: Any, **kwargs: Any) -> Any:
            if as_lists is not None:
                args, kwargs = as_lists(args, kwargs)
            result = self._backend_fns[device_type](*args, **kwargs)
            if self._is_inplace:
                if result is not schema.bind(args, kwargs)[0]:
                    raise RuntimeError(f"{where()}: An operator tagged with torch.Tag.inplace must return its first argument.")
            elif self._is_out:
                values = schema.bind(args, kwargs)
                outs = tuple(values[i] for i, a in enumerate(schema.arguments) if a.name in self._out_kwarg_names)
                returned = (result,) if len(outs) == 1 else result
                if not (isinstance(returned, tuple) and len(returned) == len(outs)
                        and all(r is o for r, o in zip(returned, outs))):
                    raise RuntimeError(
                        f"{where()}: An operator tagged with torch.Tag.out must return its mutable keyword-only arguments.")
            elif not _is_view_op(schema):
                _check_aliasing_constraint(where, args, kwargs, result, engine)
            return check_result(result)  # what torch does with any Python kernel's result

        return backend_impl

    def register_fake(self, fn: _F, /) -> _F:
        """Register the operator's fake implementation: its result on data-less (meta)
        tensors, from shapes and dtypes alone (see Note [Fake means Meta])."""
        _check_callable(fn, "register_fake")
        if self._is_inplace or self._is_out:
            warnings.warn(
                f"The fake registration for {self} is unnecessary. Custom ops tagged with "
                f'{"torch.Tag.inplace" if self._is_inplace else "torch.Tag.out"} already get an autogenerated fake kernel. '
                "The provided fake impl will be used instead.",
                stacklevel=2,
            )
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward: Callable[..., Any], /, *,
                          setup_context: Optional[Callable[..., Any]] = None) -> None:
        """Register the operator's backward formula, ``backward(ctx, *grads)`` -> one gradient
        per positional argument, and ``setup_context(ctx, inputs, output)`` (with
        ``keyword_only_inputs`` too if the operator has keyword-only arguments), which
        saves what backward needs on ``ctx``.  The arguments' tensor library records
        the graph (see dispatcher.tensor_protocols.AutogradEngine)."""
        schema = self._opoverload.schema
        if self._is_out:
            raise RuntimeError(
                f"Cannot register autograd formula for operator tagged with torch.Tag.out: {self}. "
                "Out variants do not support autograd."
            )
        if not _is_functional_schema(schema, allow_valid_view=True):
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator {self} with schema {schema}. "
                "Please create a functional operator and register an autograd formula for that."
            )
        _check_callable(backward, "register_autograd")
        if setup_context is not None:
            _check_callable(setup_context, "register_autograd's setup_context")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_torch_dispatch(self, torch_dispatch_class: Any, fn: Optional[Callable[..., Any]] = None, /) -> Any:
        """The operator's rule under a tensor subclass or mode (torch.library.register_torch_dispatch)."""
        def register(fn: _F) -> _F:
            self._lib._register_torch_dispatch_rule(self._name, torch_dispatch_class, fn)
            return fn

        return register if fn is None else register(fn)

    def register_vmap(self, func: Optional[Callable[..., Any]] = None, /) -> Any:
        """The operator's batching rule under vmap (torch.library.register_vmap);
        as a decorator it returns None, as torch's does."""
        check_vmap_schema(self._opoverload.schema)

        def register(func: Callable[..., Any]) -> None:
            add_vmap_rule(self._lib, self._name, func)

        return register if func is None else register(func)

    def register_autocast(self, device_type: str, cast_inputs: Any) -> None:
        """The operator's autocast kernel for ``device_type`` (torch.library.register_autocast)."""
        add_autocast_kernel(self._lib, self._name, device_type, cast_inputs)

    # -- the registrations made at definition --------------------------------------------------
    def _register_to_dispatcher(self, tags: Sequence[str]) -> None:
        schema_str = self._name + self._schema
        parsed = FunctionSchema.parse(schema_str)
        if _has_kwarg_only_tensors(parsed) and "out" not in tags:
            raise NotImplementedError(
                f"custom_op with kwarg-only Tensor args. Please make your tensors not kwarg-only. Got: {schema_str}"
            )
        if "out" in tags:
            _validate_out_schema(parsed)
        if "inplace" in tags:
            _validate_inplace_schema(parsed)
        self._lib.define(schema_str, tags=["pt2_compliant_tag", *(t for t in tags if t != "pt2_compliant_tag")])
        entry = self._registry.op_or_throw(f"{self._namespace}::{schema_str.partition('(')[0]}")
        self._opoverload = entry.handle
        register_unchecked_type(type(entry.handle))
        self._is_inplace = "inplace" in tags
        self._is_out = "out" in tags
        if self._is_out:
            self._out_kwarg_names = tuple(_mutated_args_kwargs(parsed)[1])
        self._register_fake_dispatcher_impl()
        self._register_autograd_dispatcher_impl()
        self._register_adinplaceorview_dispatcher_impl()

    def _register_fake_dispatcher_impl(self) -> None:
        schema = self._opoverload.schema
        as_lists = lists_as_torch_passes_them(schema, self._registry.engine)

        def fake_impl(*args: Any, **kwargs: Any) -> Any:
            if self._abstract_fn is not None:
                if as_lists is not None:  # list arguments as lists, as torch passes them
                    args, kwargs = as_lists(args, kwargs)
                return self._abstract_fn(*args, **kwargs)
            if self._is_out:  # the out= arguments, in order
                values = schema.bind(args, kwargs)
                outs = tuple(values[i] for i, a in enumerate(schema.arguments) if a.name in self._out_kwarg_names)
                return outs[0] if len(outs) == 1 else outs
            if self._is_inplace:
                return schema.bind(args, kwargs)[0]
            if schema.is_mutable and not schema.returns:
                return None  # writes and returns nothing: nothing to compute without data
            raise RuntimeError(
                f"There was no fake impl registered for {self}. This is necessary for the operator to run on "
                f"meta tensors (and for opcheck's test_faketensor). Please use `{self._init_fn.__name__}.register_fake` "
                "to add an fake impl."
            )

        check = result_check(schema, self._registry.engine)
        self._lib.impl(self._name, _meta_kernel(self._qualname, self._site, fake_impl, lambda: check), "Meta",
                       debug=_FAKE_DEBUG + self._site)

    def _register_autograd_dispatcher_impl(self) -> None:
        autograd_impl = make_autograd_impl(self._opoverload, self, self._registry.engine, is_out=self._is_out,
                                           check_below=False)  # its backend and fake kernels check their results
        as_lists = lists_as_torch_passes_them(self._opoverload.schema, self._registry.engine)
        kernel = autograd_impl
        if as_lists is not None:
            # setup_context's inputs (and the kernels below) get list arguments as lists, as torch passes them.
            def kernel(keyset: Any, *args: Any, **kwargs: Any) -> Any:
                args, kwargs = as_lists(args, kwargs)
                return autograd_impl(keyset, *args, **kwargs)

        self._lib.impl(self._name, kernel, "Autograd", with_keyset=True, debug=f"registered at {self._site}")

    def _register_adinplaceorview_dispatcher_impl(self) -> None:
        schema = self._opoverload.schema
        op = self._opoverload
        written = [i for i, a in enumerate(schema.arguments) if a.is_write]
        if _is_view_op(schema):  # torch's fallback for views (custom_op_views.py)
            self._lib.impl(self._name, make_view_kernel(op, self._registry.engine, written=written), "ADInplaceOrView",
                           with_keyset=True, debug=f"registered at {self._site}")
            return
        if not schema.is_mutable:
            return
        below = self._registry.engine.DispatchKeySet.from_raw_repr(AFTER_ADINPLACEORVIEW_KEYSET.raw_repr())

        def adinplaceorview_impl(keyset: Any, *args: Any, **kwargs: Any) -> Any:
            values = schema.bind(args, kwargs)
            for i in written:
                _increment_version(values[i])
            return op.redispatch(keyset & below, *args, **kwargs)

        self._lib.impl(self._name, adinplaceorview_impl, "ADInplaceOrView", with_keyset=True,
                       debug=f"registered at {self._site}")

    def _register_backend_select_dispatcher(self, device_arg_index: int) -> None:
        """Route calls by the ``device`` argument, for an operator without tensor arguments.
        As torch's, each register_kernel registers the router again: the newest
        one routes, the older ones stay behind it, and the dispatcher warns of
        the override (torch: once per process)."""
        op = self._opoverload
        schema = op.schema
        keyset_type = self._registry.engine.DispatchKeySet

        def backend_select(keyset: Any, *args: Any, **kwargs: Any) -> Any:
            device_type = device(schema.bind(args, kwargs)[device_arg_index]).type
            if device_type not in self._backend_fns:
                raise RuntimeError(
                    f"{self._name} does not have a kernel registered for {device_type}. "
                    "Please use register_kernel to do so."
                )
            return op.redispatch(keyset_type(dispatch_key_for_device(device_type)), *args, **kwargs)

        self._lib.impl(self._name, backend_select, "BackendSelect", with_keyset=True,
                       debug=f"registered at {self._site}")


def _check_callable(fn: object, api: str) -> None:
    if not callable(fn):
        raise TypeError(f"{api}(...): expected a function, got {fn!r}")


def _check_aliasing_constraint(where: Callable[[], str], args: tuple[Any, ...], kwargs: dict[str, Any],
                               result: Any, engine: Any) -> None:
    """A custom operator's outputs must be new tensors: not an input, nor sharing memory with
    an input or another output (torch's check_aliasing_constraint)."""
    seen = list(_tensors_in((*args, *kwargs.values()), engine))
    for tensor in _tensors_in(result if isinstance(result, tuple) else (result,), engine):
        if any(_aliases(tensor, other) for other in seen):
            raise RuntimeError(
                f"{where()}: The output of this custom operator (1) must not also be an input to this custom "
                "operator and (2) may not alias any inputs to this custom operator or other returns. The most "
                "common way to trigger this error is if we have y = custom_op(x) and y and x are the same Tensor. "
                "Please instead return a clone of the offending output tensor(s) (e.g. return x.clone()) or "
                "refactor the custom operator to not return y."
            )
        seen.append(tensor)


# -- custom_op -----------------------------------------------------------------------------------
@overload
def custom_op(name: str, fn: None = None, /, *, mutates_args: Union[str, Iterable[str]],
              device_types: DeviceTypes = None, schema: Optional[str] = None,
              tags: Tags = None) -> Callable[[Callable[..., object]], CustomOpDef]: ...


@overload
def custom_op(name: str, fn: Callable[..., object], /, *, mutates_args: Union[str, Iterable[str]],
              device_types: DeviceTypes = None, schema: Optional[str] = None, tags: Tags = None) -> CustomOpDef: ...


def custom_op(
    name: str,
    fn: Optional[Callable[..., object]] = None,
    /,
    *,
    mutates_args: Union[str, Iterable[str]],
    device_types: DeviceTypes = None,
    schema: Optional[str] = None,
    tags: Tags = None,
) -> Union[Callable[[Callable[..., object]], CustomOpDef], CustomOpDef]:
    """Make ``fn`` (type-annotated) an operator called ``name`` ("namespace::name").

    ``mutates_args`` names the arguments it writes to ("unknown": any tensor
    argument may be written); ``device_types`` the device types it is the
    kernel for (None: all); ``schema`` replaces the one inferred from the
    annotations; ``tags`` are tag names ("inplace", "out").  Usable as a
    decorator::

        @custom_op("mylib::numpy_sin", mutates_args=())
        def numpy_sin(x: Tensor) -> Tensor:
            return Tensor.from_numpy(np.sin(x.numpy()))
    """

    def inner(fn: Callable[..., object]) -> CustomOpDef:
        _check_callable(fn, "custom_op")
        normalized_tags = normalize_tags(tags)
        schema_str = infer_schema(fn, mutates_args=mutates_args, tags=normalized_tags) if schema is None else schema
        if not isinstance(schema_str, str):
            raise TypeError(f"custom_op(...): schema must be a str such as '(Tensor x) -> Tensor', got {schema_str!r}")
        namespace, sep, opname = name.partition("::") if isinstance(name, str) else ("", "", "")
        if not sep or not namespace or not opname or "::" in opname:
            raise ValueError(f'custom_op(...): expected a name of the form "namespace::name", got {name!r}')
        # Note [A custom op is defined under the registry's lock]
        # Defining replaces the operator of the same name (its library closed,
        # the new one registered) in several registrations; under the lock,
        # two threads defining one name do it one after the other, so the
        # name ends up with the operator of the last, never with one that no
        # library owns.
        with registry_in_use().lock:
            result = CustomOpDef(namespace, opname, schema_str, fn, normalized_tags)
            try:
                if schema is not None:
                    # The schema's alias annotations must say what mutates_args says.
                    expected = {a.name for a in result._opoverload.schema.arguments if a.is_write}
                    if expected != set(mutates_args):
                        raise ValueError(
                            f"Attempted to create a custom op with `mutates_args={mutates_args}` "
                            f"and `schema={schema}. The schema suggests that the op mutates {expected}"
                            f"which is different from what was provided to us in `mutates_args`. "
                            f"Please make these consistent."
                        )
                result.register_kernel(device_types)(fn)
            except BaseException:
                result._destroy()
                raise
        return result

    if fn is None:
        return inner
    return inner(fn)


# -- the registration functions for any operator ---------------------------------------------------
OpIdentifier = Union[str, CustomOpDef, Any]  # a name, a CustomOpDef, or an OperatorHandle
_keep_alive: list[Library] = []


def _is_handle(op: object) -> bool:
    return any(isinstance(op, engine.OperatorHandle) for engine in _engine.loaded_engines())


def _resolve_op_for_registration(op: OpIdentifier, registration_name: str) -> Union[str, CustomOpDef]:
    if not isinstance(op, (str, CustomOpDef)) and not _is_handle(op):
        raise ValueError(f"{registration_name}({op}): got unexpected type for op: {type(op)}")
    if isinstance(op, CustomOpDef):
        return op
    name: str = op if isinstance(op, str) else op.name()
    opdef = OPDEFS.get(name)
    # A CustomOpDef of another registry (a test's) is not this name's operator.
    return opdef if opdef is not None and opdef._registry is registry_in_use() else name


def _library_for_registration(namespace: str, lib: Optional[Library]) -> Library:
    if lib is not None:
        return lib
    library = Library(namespace, "FRAGMENT", registry=registry_in_use())
    _keep_alive.append(library)
    return library


def register_fake(op: OpIdentifier, func: Optional[Callable[..., Any]] = None, /, *,
                  lib: Optional[Library] = None, _stacklevel: int = 1, allow_override: bool = True) -> Any:
    """Register ``func`` as ``op``'s fake implementation: its Meta kernel (see Note
    [Fake means Meta]).  Usable as a decorator.  ``allow_override=False`` refuses an
    operator that already has a fake implementation, a Meta kernel, or a
    CompositeImplicitAutograd kernel (which needs no fake implementation).
    ``_stacklevel`` is torch's (which frame its debug text names); here the
    text names the first frame outside this package, whatever it is."""
    resolved = _resolve_op_for_registration(op, "register_fake")
    if isinstance(resolved, CustomOpDef):
        return resolved.register_fake if func is None else resolved.register_fake(func)
    qualname = resolved
    site = _user_site()

    def register(func: _F) -> _F:
        _check_callable(func, "register_fake")
        namespace, op_name = _parse_qualname(qualname)
        if not allow_override:
            _check_no_fake_yet(qualname)
        use_lib = _library_for_registration(namespace, lib)
        use_lib.impl(op_name, _meta_kernel(qualname, site, func, _result_check_when_called(use_lib._registry, qualname)),
                     "Meta", allow_override=allow_override, debug=_FAKE_DEBUG + site)
        return func

    if func is None:
        return register
    return register(func)


def fake_impl_source(op: OpIdentifier) -> Optional[str]:
    """``FILE:LINE`` where ``op``'s fake implementation was registered (the caller
    of register_fake; for a CustomOpDef, where custom_op made it, as its fake
    kernel is registered then), or None: it has none, or its Meta kernel is not
    a fake implementation.  torch keeps it as
    ``torch._library.simple_registry.singleton.find(name).fake_impl.kernel.source``."""
    resolved = _resolve_op_for_registration(op, "fake_impl_source")
    qualname = resolved._qualname if isinstance(resolved, CustomOpDef) else resolved
    entry = registry_in_use().find_op(qualname)
    meta = entry.kernel_for(DispatchKey.Meta) if entry is not None else None
    if meta is None or not meta.debug.startswith(_FAKE_DEBUG):
        return None
    return meta.debug[len(_FAKE_DEBUG):]


def _check_no_fake_yet(qualname: str) -> None:
    entry = registry_in_use().find_op(qualname)
    if entry is None:
        return
    meta = entry.kernel_for(DispatchKey.Meta)
    if meta is not None and meta.debug.startswith(_FAKE_DEBUG):
        raise RuntimeError(
            f"register_fake(...): the operator {qualname} already has a fake impl registered at "
            f"{meta.debug[len(_FAKE_DEBUG):]}."
        )
    if meta is not None:
        raise RuntimeError(
            f"register_fake(...): the operator {qualname} already has a DispatchKey::Meta implementation via a "
            "pre-existing dispatcher.Library registration. Please either remove that registration or don't "
            "call register_fake."
        )
    if entry.has_kernel_for_dispatch_key(DispatchKey.CompositeImplicitAutograd):
        raise RuntimeError(
            f"register_fake(...): the operator {qualname} already has an implementation for this device type via "
            "a pre-existing registration to DispatchKey::CompositeImplicitAutograd.CompositeImplicitAutograd "
            "operators do not need a fake impl; instead, the operator will decompose into its constituents and "
            "those can have fake impls defined on them."
        )


def register_autograd(op: OpIdentifier, backward: Callable[..., Any], /, *,
                      setup_context: Optional[Callable[..., Any]] = None, lib: Optional[Library] = None) -> None:
    """Register ``op``'s backward formula (see CustomOpDef.register_autograd): a kernel on
    the Autograd key that records through the tensors' autograd engine."""
    resolved = _resolve_op_for_registration(op, "register_autograd")
    if isinstance(resolved, CustomOpDef):
        resolved.register_autograd(backward, setup_context=setup_context)
        return
    qualname = resolved
    namespace, opname = _parse_qualname(qualname)
    registry = registry_in_use()
    handle = registry.op_or_throw(qualname).handle
    schema = handle.schema
    if any(tag.name == "out" for tag in handle.tags):
        raise RuntimeError(
            f"Cannot register autograd formula for operator tagged with torch.Tag.out: {handle}. "
            "Out variants do not support autograd."
        )
    if not _is_functional_schema(schema):
        raise RuntimeError(
            f"Cannot register autograd formula for non-functional operator {qualname} with schema {schema}. "
            "Please create a functional operator and register an autograd formula for that."
        )
    if _has_kwarg_only_tensors(schema):
        raise NotImplementedError(
            "register_autograd with kwarg-only Tensor args. In the original definition of the op, please make "
            f"your tensors not kwarg-only. Got: {schema}"
        )
    _check_callable(backward, "register_autograd")
    if setup_context is not None:
        _check_callable(setup_context, "register_autograd's setup_context")
    kernel = make_autograd_impl(handle, Info(backward, setup_context), registry.engine)
    _library_for_registration(namespace, lib).impl(opname, kernel, "Autograd", with_keyset=True,
                                                   debug=f"registered at {_user_site()}")


def register_kernel(op: OpIdentifier, device_types: DeviceTypes, func: Optional[Callable[..., Any]] = None, /, *,
                    lib: Optional[Library] = None) -> Any:
    """Register ``func`` as ``op``'s implementation for ``device_types`` (device types such
    as "cpu", or dispatch key names; None: CompositeExplicitAutograd).  Usable as a
    decorator; for an operator that is not a CustomOpDef the decorator returns None,
    as torch's does."""
    resolved = _resolve_op_for_registration(op, "register_kernel")
    if isinstance(resolved, CustomOpDef):
        return resolved.register_kernel(device_types, func)
    qualname = resolved
    keys = keys_for_types("CompositeExplicitAutograd" if device_types is None else device_types)
    site = _user_site()

    def register(func: Callable[..., Any]) -> None:
        _check_callable(func, "register_kernel")
        namespace, _ = _parse_qualname(qualname)
        use_lib = _library_for_registration(namespace, lib)
        for key in keys:
            use_lib.impl(qualname, func, key, debug=f"registered at {site}")

    if func is None:
        return register
    register(func)
    return None

