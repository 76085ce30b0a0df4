# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled engine's vectorcall entry points: what Python cannot express.

Everything these functions decide is decided by dispatcher/_engine/core.py
(the plan, the TLS, the mask, the table, the kernel kinds); this module only
reads a call's arguments where CPython leaves them, in a C array, instead of
packing them into a tuple and a dict.  The pure-Python engine has no
counterpart: ``OperatorHandle.__call__`` and ``_Redispatch.__call__`` are its
whole call path, and the compiled engine falls back to them for any call
this module does not take (see ``install``).

Note [Vectorcall fast path]
A call ``op(a, b)`` from Python arrives as a C array of arguments (vectorcall,
PEP 590) if the type says it accepts that.  Each OperatorHandle carries
``op_vectorcall`` in a per-instance slot; it reads the tensors straight from
the array and passes the same array on to an unboxed kernel: no allocation on
the way.  A with-keyset kernel needs the keyset in front of the arguments;
when the caller allows it (PY_VECTORCALL_ARGUMENTS_OFFSET) the slot before
the array is borrowed for it, as PEP 590 intends.

The arguments are borrowed pointers: the caller keeps them alive for the
whole call.  The plan is not: the call holds its own reference to it from
the first read to the kernel's return, so a registration while Python code
runs (a key-set function, a keyword's __hash__, a GC callback, the kernel
itself) cannot free what the call is reading.  See Note [One plan per
operator] in core.py.
"""
from cpython.ref cimport Py_INCREF, Py_REFCNT, Py_XDECREF, PyObject
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport uint64_t

from dispatcher._engine.core cimport (
    Boxer,
    CallPlan,
    KernelFunction,
    OperatorHandle,
    TensorBase,
    _OverloadPacketBase,
    _Redispatch,
    _box_values,
    _call_bits,
    _choice_epoch_now,
    _chosen_overload,
    _entry_at,
    _init_tensor,
    _kernel_results,
    _keyset_arg,
    _make,
    _missing_argument,
    _wrong_argument_count,
    _raise_not_defined,
    _run_with_operator,
    _settled_plan,
    _shape_boxer,
    _too_many_replans,
    _tracing,
    _type_decides,
    _value_bits,
    dispatch,
    install_fast_calls,
    vectorcall_impl,
)
from dispatcher._engine import core

cdef extern from "Python.h":
    bint PyObject_TypeCheck(object obj, type tp)
    ctypedef struct PyTypeObject:
        Py_ssize_t tp_vectorcall_offset
        unsigned long tp_flags
        PyObject* tp_dict
    ctypedef struct PyMethodDef:
        const char* ml_name
        void* ml_meth
        int ml_flags
        const char* ml_doc
    int METH_FASTCALL
    int METH_KEYWORDS
    object PyDescr_NewMethod(PyTypeObject* tp, PyMethodDef* method)
    unsigned long Py_TPFLAGS_HAVE_VECTORCALL
    size_t PY_VECTORCALL_ARGUMENTS_OFFSET
    Py_ssize_t PyVectorcall_NARGS(size_t nargsf)
    object PyObject_Vectorcall(object callable, PyObject** args, size_t nargsf, PyObject* kwnames)
    void PyType_Modified(PyTypeObject* tp)
    Py_ssize_t PyTuple_GET_SIZE(object t)
    PyObject* PyTuple_GET_ITEM(object t, Py_ssize_t i)
    PyTypeObject* Py_TYPE(PyObject* o)
    void PyObject_GC_UnTrack(object o)
    void PyObject_GC_Track(object o)
    Py_ssize_t PyDict_GET_SIZE(object d)
    void _clear_item "PyTuple_SET_ITEM"(object t, Py_ssize_t i, PyObject* null)  # to empty a slot: NULL

# The kinds, as core.py numbers them.
cdef enum:
    KIND_UNBOXED = 0
    KIND_WITH_KEYSET = 1
    KIND_BOXED = 2
    KIND_WITH_OPERATOR = 6
    ARG_TENSOR = 0
    MAX_REPLANS = 8

assert (KIND_UNBOXED, KIND_WITH_KEYSET, KIND_BOXED, KIND_WITH_OPERATOR, ARG_TENSOR, MAX_REPLANS) == \
    core.FASTCALL_CONSTANTS


cdef PyObject* _keyword_arg(PyObject** args, Py_ssize_t nargs, PyObject* kwnames, object name):
    # The argument passed by ``name`` (borrowed), or NULL.  Interned names
    # match by identity; any other comparison may run Python code, which is
    # fine: nothing borrowed from the plan is held across it.
    cdef Py_ssize_t j, nkw
    if kwnames == NULL:
        return NULL
    nkw = PyTuple_GET_SIZE(<object>kwnames)
    for j in range(nkw):
        if PyTuple_GET_ITEM(<object>kwnames, j) == <PyObject*>name:
            return args[nargs + j]
    for j in range(nkw):
        if <object>PyTuple_GET_ITEM(<object>kwnames, j) == name:
            return args[nargs + j]
    return NULL


cdef tuple _pack_args(PyObject** args, Py_ssize_t first, Py_ssize_t nargs):
    # A vectorcall's positional arguments from ``first`` on, as a tuple, for
    # the general path (_pack_kwargs has its keyword ones: two calls, not a
    # pair to build and take apart).
    cdef Py_ssize_t i
    cdef tuple packed = PyTuple_New(nargs - first)
    cdef object value
    for i in range(first, nargs):
        value = <object>args[i]
        Py_INCREF(value)  # PyTuple_SET_ITEM steals a reference
        PyTuple_SET_ITEM(packed, i - first, value)
    return packed


cdef dict _pack_kwargs(PyObject** args, Py_ssize_t nargs, PyObject* kwnames):
    # A vectorcall's keyword arguments, as a dict of their own.
    cdef Py_ssize_t i
    cdef dict kw = {}
    if kwnames != NULL:
        for i in range(PyTuple_GET_SIZE(<object>kwnames)):
            kw[<object>PyTuple_GET_ITEM(<object>kwnames, i)] = <object>args[nargs + i]
    return kw


# Note [Spare arguments for handlers]
# The Python key hands a call's arguments to its handlers as a tuple and a
# dict, so a call that reaches it from here packs them, even when it passes
# no keyword.  Both usually come back from the handlers held by no one else:
# the next call takes them instead of making new ones while these are freed.
# Nothing can tell.  Only a tuple or dict whose one reference is the call's
# own is kept: the dict only if empty, the tuple with its items dropped at
# once (it keeps no argument alive).  While one waits it is untracked by the
# garbage collector, out of gc.get_objects()'s reach (the tuple's emptied
# slots would crash whoever read them), as a new empty dict is; the next
# call's handlers get it filled and tracked, as a fresh one.  Taking or
# keeping one runs no Python code but the finalizers of the items dropped,
# which cannot see it, and the GIL makes the rest atomic (see
# pyproject.toml: the engine needs the GIL).
cdef tuple _spare_args = None
cdef dict _spare_kwargs = None


cdef tuple _handler_args(PyObject** args, Py_ssize_t nargs):
    global _spare_args
    cdef tuple packed = _spare_args
    cdef Py_ssize_t i
    cdef object value
    if packed is None or PyTuple_GET_SIZE(packed) != nargs:
        return _pack_args(args, 0, nargs)
    _spare_args = None
    for i in range(nargs):
        value = <object>args[i]
        Py_INCREF(value)  # PyTuple_SET_ITEM steals a reference
        PyTuple_SET_ITEM(packed, i, value)
    PyObject_GC_Track(packed)
    return packed


cdef dict _handler_kwargs(PyObject** args, Py_ssize_t nargs, PyObject* kwnames):
    global _spare_kwargs
    cdef dict kw = _spare_kwargs
    if kwnames == NULL and kw is not None:
        _spare_kwargs = None
        return kw
    return _pack_kwargs(args, nargs, kwnames)


cdef void _keep_spares(tuple packed, dict kw) noexcept:
    # After the handlers: ``packed`` and ``kw`` as the call made them, each
    # with one reference of the caller's own if no one else kept it.
    global _spare_args, _spare_kwargs
    cdef Py_ssize_t i
    cdef PyObject* item
    if Py_REFCNT(kw) == 1 and PyDict_GET_SIZE(kw) == 0:
        PyObject_GC_UnTrack(kw)
        _spare_kwargs = kw
    if Py_REFCNT(packed) == 1:
        PyObject_GC_UnTrack(packed)  # before any finalizer runs
        for i in range(PyTuple_GET_SIZE(packed)):
            item = PyTuple_GET_ITEM(packed, i)
            _clear_item(packed, i, NULL)
            Py_XDECREF(item)
        _spare_args = packed


cdef uint64_t _extract(CallPlan plan, PyObject** args, Py_ssize_t nargs, PyObject* kwnames) except? 0:
    """The union of the dispatch arguments' key bits, read from the array."""
    cdef Py_ssize_t i
    cdef PyObject* arg
    cdef uint64_t bits = 0
    if 0 <= plan.shape.positional_span and plan.shape.min_positional <= nargs <= plan.shape.max_positional:
        # Every dispatch argument is a required Tensor, passed positionally
        # (min_positional >= positional_span), and the count fits: Note
        # [Argument count check] in core.py.
        for i in range(plan.shape.n_args):
            arg = args[plan.shape.c_positions[i]]
            if PyObject_TypeCheck(<object>arg, TensorBase):  # the common case, inline
                bits |= (<TensorBase>arg)._bits
            else:
                bits |= _value_bits(plan, <object>arg, ARG_TENSOR, i)
        return bits
    if nargs > plan.shape.max_positional or (nargs < plan.shape.min_positional and kwnames == NULL):
        _wrong_argument_count(plan, _pack_args(args, 0, nargs), _pack_kwargs(args, nargs, kwnames))
    for i in range(plan.shape.n_args):
        position = plan.shape.c_positions[i]
        arg = args[position] if position < nargs else _keyword_arg(args, nargs, kwnames, plan.shape.arg_names[i])
        if arg == NULL:
            if plan.shape.arg_required[i]:
                _missing_argument(plan, _pack_args(args, 0, nargs), _pack_kwargs(args, nargs, kwnames),
                                  plan.shape.arg_names[i])
            continue  # an omitted argument: its default is no tensor
        bits |= _value_bits(plan, <object>arg, plan.shape.c_kinds[i], i)
    return bits


cdef object op_vectorcall(OperatorHandle self, PyObject** args, size_t nargsf, PyObject* kwnames):
    cdef Py_ssize_t nargs = PyVectorcall_NARGS(nargsf)
    cdef tuple packed
    cdef dict kw
    cdef CallPlan plan = None
    cdef Boxer boxer
    cdef uint64_t bits = 0
    cdef int attempt
    for attempt in range(MAX_REPLANS):
        plan = self._plan
        if plan.shape.schema is None:
            _raise_not_defined(self)
        bits = _extract(plan, args, nargs, kwnames)
        if self._plan is plan:  # nothing registered meanwhile: _settled_plan's first case, without a call
            break
        settled = _settled_plan(self, plan)
        if settled is not None:
            plan = <CallPlan>settled
            break
    else:
        _too_many_replans(self)
    cdef uint64_t argument_bits = bits
    bits = _call_bits(plan, bits)
    cdef KernelFunction entry = plan.last_entry  # that of bits: see Note [Last dispatch cache] in core.py
    if not _tracing:  # see Note [Dispatch observers] in core.py
        if entry._kind == KIND_UNBOXED:
            return PyObject_Vectorcall(entry.fn, args, nargsf, kwnames)
        if entry._kind == KIND_WITH_KEYSET and nargsf & PY_VECTORCALL_ARGUMENTS_OFFSET:
            return _call_with_keyset_in_front(entry.fn, _make(bits), args, nargs, kwnames)
        if entry._kind == KIND_BOXED and kwnames == NULL:
            boxer = _shape_boxer(plan.shape)  # Note [Boxers made on first use] in core.py
            if boxer.positional and nargs == boxer.n_arguments:
                # Boxed straight from the array: the call passes exactly the declared arguments.
                stack = _box_values(boxer, _pack_args(args, 0, nargs))
                entry.fn(self, _make(bits), stack)
                return _kernel_results(boxer, stack, plan.name)
        if entry._kind == KIND_WITH_OPERATOR:
            # The call packed once, straight to the kernel (the mask left no
            # fallthrough on top): the Python key's way in.
            packed = _handler_args(args, nargs)  # see Note [Spare arguments for handlers]
            kw = _handler_kwargs(args, nargs, kwnames)
            result = _run_with_operator(self, plan, bits, entry, packed, kw, argument_bits)
            _keep_spares(packed, kw)
            return result
    # Everything else takes the general path, with the arguments packed.
    return dispatch(self, "[call]", plan, bits, _pack_args(args, 0, nargs), _pack_kwargs(args, nargs, kwnames))


cdef object _call_with_keyset_in_front(object fn, object keyset, PyObject** args, Py_ssize_t nargs,
                                       PyObject* kwnames):
    # PY_VECTORCALL_ARGUMENTS_OFFSET lets us use args[-1] for the duration of
    # the call (through a pointer to it: Cython warns of a negative index
    # under wraparound=False, though on a pointer it is what C means).
    cdef PyObject** front = args - 1
    cdef PyObject* saved = front[0]
    front[0] = <PyObject*>keyset
    try:
        return PyObject_Vectorcall(fn, front, <size_t>(nargs + 1), kwnames)
    finally:
        front[0] = saved


cdef object redispatch_vectorcall(_Redispatch self, PyObject** args, size_t nargsf, PyObject* kwnames):
    cdef OperatorHandle handle = self.handle
    cdef Py_ssize_t nargs = PyVectorcall_NARGS(nargsf)
    if handle is None:
        raise TypeError("this redispatch is bound to no operator (use op.redispatch)")
    if nargs < 1:
        raise TypeError(f"{handle._name}: redispatch() takes the DispatchKeySet to dispatch on first")
    cdef uint64_t bits = _keyset_arg(<object>args[0], "redispatch")
    cdef CallPlan plan = handle._plan
    if plan.shape.schema is None:
        _raise_not_defined(handle)
    cdef KernelFunction entry = _entry_at(plan, bits)
    if not _tracing:  # see Note [Dispatch observers] in core.py
        if entry._kind == KIND_UNBOXED:
            return PyObject_Vectorcall(entry.fn, args + 1, <size_t>(nargs - 1), kwnames)
        if entry._kind == KIND_WITH_KEYSET:
            # The keyset a with-keyset kernel gets is the one given: pass it on.
            return PyObject_Vectorcall(entry.fn, args, <size_t>nargs, kwnames)
    return dispatch(handle, "[redispatch]", plan, bits, _pack_args(args, 1, nargs), _pack_kwargs(args, nargs, kwnames))


cdef inline bint _matches(object choice, PyObject** args, Py_ssize_t nargs):
    # Whether a remembered positional choice (handle, type, ...) fits these arguments' types.
    cdef Py_ssize_t i
    if choice is None or PyTuple_GET_SIZE(choice) != nargs + 1:
        return False
    for i in range(nargs):
        if <PyObject*>Py_TYPE(args[i]) != PyTuple_GET_ITEM(choice, i + 1):
            return False
    return True


cdef object packet_vectorcall(_OverloadPacketBase self, PyObject** args, size_t nargsf, PyObject* kwnames):
    # See Note [Overload choice by argument types] in core.py: the last two
    # positional choices, then the choices by pattern, then the test of each overload.
    cdef Py_ssize_t nargs = PyVectorcall_NARGS(nargsf)
    # References of our own: the handle in a choice lives through the call.
    cdef object choice = self._memo
    cdef object previous = self._memo2
    if kwnames == NULL and self._epoch == _choice_epoch_now():
        if _matches(choice, args, nargs):
            return PyObject_Vectorcall(<object>PyTuple_GET_ITEM(choice, 0), args, nargsf, kwnames)
        if _matches(previous, args, nargs):
            self._memo, self._memo2 = previous, choice
            return PyObject_Vectorcall(<object>PyTuple_GET_ITEM(previous, 0), args, nargsf, kwnames)
    pattern = _array_pattern(args, nargs, kwnames)
    choice = None
    if pattern is not None and self._epoch == _choice_epoch_now():
        choice = self._choices.get(pattern)
    if choice is None:
        choice = _chosen_overload(self, pattern, _pack_args(args, 0, nargs), _pack_kwargs(args, nargs, kwnames))
    if pattern is not None and kwnames == NULL:
        self._memo, self._memo2 = choice, self._memo
    return PyObject_Vectorcall(<object>PyTuple_GET_ITEM(choice, 0), args, nargsf, kwnames)


cdef object _array_pattern(PyObject** args, Py_ssize_t nargs, PyObject* kwnames):
    # core._call_pattern, read from the argument array.
    cdef Py_ssize_t i
    cdef Py_ssize_t n = nargs if kwnames == NULL else nargs + PyTuple_GET_SIZE(<object>kwnames)
    cdef object tp
    cdef tuple pattern = PyTuple_New(n + 1)
    names = None if kwnames == NULL else <object>kwnames
    Py_INCREF(names)
    PyTuple_SET_ITEM(pattern, 0, names)
    for i in range(n):
        tp = <object>Py_TYPE(args[i])
        if not _type_decides(tp):
            return None
        Py_INCREF(tp)
        PyTuple_SET_ITEM(pattern, i + 1, tp)
    return pattern


# Note [TensorBase.__init__ without an argument tuple]
# A tensor subclass's __init__ calls ``TensorBase.__init__(self, keys)`` (or
# super().__init__(keys)).  On the compiled TensorBase that attribute is the
# slot wrapper of its tp_init, and calling it packs the arguments into a
# tuple, slices self off into another and parses what is left: most of what
# making a wrapper tensor costs.  install() puts a METH_FASTCALL method
# descriptor of the same name in its place, which takes the usual forms (no
# argument, or the keyset positionally) straight from the array and hands any
# other to the slot wrapper it replaced, so that those behave and fail as
# before.  tp_init itself is untouched: ``TensorBase(keys)`` calls it as it
# did.  A subclass without an __init__ of its own reaches the descriptor
# through CPython's generic tp_init slot, which looks __init__ up instead of
# inheriting TensorBase's slot.
cdef PyMethodDef _init_method
cdef object _slot_init = None  # TensorBase's own __init__ slot wrapper


cdef object tensor_init(object self, PyObject** args, Py_ssize_t nargs, PyObject* kwnames):
    # The method descriptor has checked that ``self`` is a TensorBase.
    if kwnames == NULL and nargs <= 1:
        _init_tensor(<TensorBase>self, <object>args[0] if nargs else None)
        return None
    return _slot_init(self, *_pack_args(args, 0, nargs), **_pack_kwargs(args, nargs, kwnames))


cdef void _install_init() except *:
    global _slot_init
    cdef PyTypeObject* tp = <PyTypeObject*>TensorBase
    if _slot_init is not None:
        return  # installed already
    _init_method.ml_name = "__init__"
    _init_method.ml_meth = <void*>tensor_init
    _init_method.ml_flags = METH_FASTCALL | METH_KEYWORDS
    _init_method.ml_doc = "Initialize self.  See help(type(self)) for accurate signature."
    descriptor = PyDescr_NewMethod(tp, &_init_method)
    _slot_init = (<dict>tp.tp_dict)["__init__"]
    (<dict>tp.tp_dict)["__init__"] = descriptor
    PyType_Modified(tp)


cdef void _enable_vectorcall(type cls, Py_ssize_t offset):
    cdef PyTypeObject* tp = <PyTypeObject*>cls
    tp.tp_vectorcall_offset = offset
    tp.tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL
    PyType_Modified(tp)


def install():
    """Give OperatorHandle, its redispatch and OverloadPacket the vectorcall
    protocol: those made from now on call through this module (core.install_fast_calls);
    and TensorBase a fast __init__ (Note [TensorBase.__init__ without an argument tuple])."""
    cdef OperatorHandle probe = OperatorHandle.__new__(OperatorHandle)
    cdef _Redispatch probe_redispatch = _Redispatch.__new__(_Redispatch)
    cdef _OverloadPacketBase probe_packet = _OverloadPacketBase.__new__(_OverloadPacketBase)
    _enable_vectorcall(OperatorHandle, <Py_ssize_t>(<char*>&probe.vectorcall - <char*><PyObject*>probe))
    _enable_vectorcall(_Redispatch,
                       <Py_ssize_t>(<char*>&probe_redispatch.vectorcall - <char*><PyObject*>probe_redispatch))
    # OverloadPacket is a Python subclass of _OverloadPacketBase (for its
    # instance dict); its instances keep the base's layout, hence its offset.
    _enable_vectorcall(core.OverloadPacket,
                       <Py_ssize_t>(<char*>&probe_packet.vectorcall - <char*><PyObject*>probe_packet))
    install_fast_calls(<vectorcall_impl>op_vectorcall, <vectorcall_impl>redispatch_vectorcall,
                       <vectorcall_impl>packet_vectorcall)
    _install_init()
