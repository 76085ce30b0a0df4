# C declarations for compiling core.py (Cython pure-Python mode).  Only
# types live here; every line of behaviour is in core.py.  csrc/_fastcall.pyx
# cimports this file to read plans and tensors at C level.
cimport cython
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport uint64_t

cdef extern from "dispatcher_bits.h":
    int index_of_highest_bit "dispatcher_index_of_highest_bit"(uint64_t x) noexcept nogil
    int popcount "dispatcher_popcount"(uint64_t x) noexcept nogil
    uint64_t tls_included_delta "dispatcher_tls_included_delta"
    uint64_t tls_excluded_delta "dispatcher_tls_excluded_delta"

cdef extern from "Python.h":
    int Py_EnterRecursiveCall(const char* where) except -1
    void Py_LeaveRecursiveCall()

cdef extern from *:
    """
    static inline int dispatcher_truncate(PyObject* entries, Py_ssize_t size) {
        return PyList_SetSlice(entries, size, PY_SSIZE_T_MAX, NULL);
    }
    """
    int _truncate "dispatcher_truncate"(list entries, Py_ssize_t size) except -1

cdef extern from *:
    """
    /* Note [The Python-key state of a thread]
     * Each thread's PythonKeyState (core.py) is found through a C
     * thread-local that holds a reference to it: no other thread can free
     * it, whatever it reaches (gc.get_objects()) and drops.  What lets it go
     * is a capsule in the thread's thread-state dict, which Python empties
     * on the thread itself when the thread ends: the capsule's destructor
     * releases the reference of the thread it runs on.  (A capsule that
     * another thread drops releases that thread's state, if any, which it
     * makes again when it next needs one; the owner keeps its own.)  */
    static DISPATCHER_THREAD_LOCAL PyObject* dispatcher_python_state = NULL;

    static void dispatcher_python_state_release(PyObject* capsule) {
        Py_CLEAR(dispatcher_python_state);
    }

    /* This thread's state (a new reference), or None if it has none yet. */
    static inline PyObject* dispatcher_python_state_get(void) {
        PyObject* state = dispatcher_python_state;
        if (state == NULL) Py_RETURN_NONE;
        Py_INCREF(state);
        return state;
    }
    /* Make ``state`` this thread's, released when the thread ends (its
     * capsule under ``key`` in the thread-state dict). */
    static inline int dispatcher_python_state_set(PyObject* key, PyObject* state) {
        PyObject* dict = PyThreadState_GetDict();  /* borrowed */
        if (dict == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "dispatcher: this thread has no Python thread state");
            return -1;
        }
        PyObject* capsule = PyCapsule_New((void*)&dispatcher_python_state, "dispatcher.PythonKeyState",
                                          dispatcher_python_state_release);
        if (capsule == NULL) return -1;
        /* First: a capsule this one replaces releases what the thread-local holds. */
        int failed = PyDict_SetItem(dict, key, capsule);
        Py_DECREF(capsule);
        if (failed) return -1;
        Py_INCREF(state);
        Py_XSETREF(dispatcher_python_state, state);
        return 0;
    }
    /* Whether type ``tp`` (or a base) has attribute ``name``, neither None
     * nor the disabled handler (core.py's disabled_torch_dispatch_impl, set
     * once at import): a lookup in the interpreter's type attribute cache,
     * which never raises. */
    static PyObject* dispatcher_disabled_handler = NULL;  /* borrowed: the module keeps it */
    static inline void dispatcher_set_disabled_handler(PyObject* handler) {
        dispatcher_disabled_handler = handler;
    }
    static inline int dispatcher_type_lookup(PyTypeObject* tp, PyObject* name) {
        PyObject* found = _PyType_Lookup(tp, name);  /* borrowed */
        return found != NULL && found != Py_None && found != dispatcher_disabled_handler;
    }
    /* ``tensor.<name>(func, types, args, kwargs)``: see Note [Calling a
     * tensor's handler] in core.py.  A classmethod's function is read from
     * the object, whose layout CPython does not publish: it starts with the
     * function (``cm_callable``) in every version this package supports,
     * and the first (initialised) classmethod seen checks that against its
     * ``__func__`` while it is called the slow way.  classmethod_layout: 0
     * unchecked, 1 as expected, -1 not (every call looks the handler up). */
    typedef struct { PyObject_HEAD PyObject* callable; } dispatcher_classmethod;
    static int dispatcher_classmethod_layout = 0;
    static int dispatcher_check_classmethod_layout(PyObject* descr) {
        PyObject* fn = PyObject_GetAttrString(descr, "__func__");
        if (fn == NULL) return -1;
        if (fn != Py_None)  /* None: not initialised, nothing to compare */
            dispatcher_classmethod_layout = fn == ((dispatcher_classmethod*)descr)->callable ? 1 : -1;
        Py_DECREF(fn);
        return 0;
    }
    /* CYTHON_UNUSED: _fastcall reads this file's declarations too, and calls none of this. */
    static CYTHON_UNUSED PyObject* dispatcher_call_tensor_handler(PyObject* tensor, PyObject* name, PyObject* func,
                                                                  PyObject* types, PyObject* args, PyObject* kwargs) {
        PyTypeObject* tp = Py_TYPE(tensor);
        if (dispatcher_classmethod_layout >= 0 && tp->tp_getattro == PyObject_GenericGetAttr
                && tp->tp_dictoffset == 0) {
            PyObject* descr = _PyType_Lookup(tp, name);  /* borrowed */
            if (descr != NULL && Py_IS_TYPE(descr, &PyClassMethod_Type)) {
                PyObject* callable = ((dispatcher_classmethod*)descr)->callable;  /* NULL if not initialised */
                if (dispatcher_classmethod_layout == 0) {
                    int failed;
                    Py_INCREF(descr);
                    failed = dispatcher_check_classmethod_layout(descr);
                    Py_DECREF(descr);
                    if (failed) return NULL;
                } else if (callable != NULL && PyFunction_Check(callable)) {
                    PyObject* stack[6] = {NULL, (PyObject*)tp, func, types, args, kwargs};
                    PyObject* result;
                    /* The call may rebind the attribute or tensor's __class__. */
                    Py_INCREF(callable);
                    Py_INCREF(tp);
                    result = PyObject_Vectorcall(callable, stack + 1, 5 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
                    Py_DECREF(tp);
                    Py_DECREF(callable);
                    return result;
                }
            }
        }
        {
            PyObject* stack[6] = {NULL, tensor, func, types, args, kwargs};
            return PyObject_VectorcallMethod(name, stack + 1, 5 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        }
    }
    """
    object _python_state_get "dispatcher_python_state_get"()
    int _python_state_set "dispatcher_python_state_set"(object key, object state) except -1
    bint _type_lookup "dispatcher_type_lookup"(type tp, object name)
    void _set_disabled_handler "dispatcher_set_disabled_handler"(object handler)
    object _call_tensor_handler "dispatcher_call_tensor_handler"(object tensor, str name, object func, tuple types,
                                                                 tuple args, dict kwargs)

ctypedef object (*vectorcall_impl)(object, void*, size_t, void*)

cdef unsigned short OFFSETS[64]
cdef uint64_t MASKS[64]
cdef int PER_BACKEND_START[64]
cdef uint64_t KEY_REPRS[256]
cdef int NUM_BACKENDS
cdef uint64_t PER_BACKEND_FUNCTIONALITY_BITS
cdef uint64_t FULL_BACKEND_MASK
cdef uint64_t FULL_REPR
cdef uint64_t DEFAULT_INCLUDED
cdef uint64_t DEFAULT_EXCLUDED
cdef uint64_t AUTOGRAD_KEYS
cdef uint64_t AUTOGRAD_AND_INPLACE_KEYS
cdef tuple KEYS_BY_VALUE
cdef tuple TAGS
cdef bint _show_trace
cdef int _observing
cdef int _tracing  # see Note [Dispatch observers]
cdef bint _trace_enabled() noexcept

# No `inline` on these declarations: their bodies are in core.py, where Cython
# ignores the word (and warns).  They are static functions of one C file, which
# the C compiler inlines at -O3 by itself (callgrind: the same counts per call).
cdef int _table_index(uint64_t r) noexcept
cdef int _highest_priority_value(uint64_t r) noexcept
cdef int _backend_mask_index(uint64_t r) noexcept
cdef uint64_t _minus(uint64_t r, uint64_t removed) noexcept


@cython.final
cdef class DispatchKeySet:  # freelist: see Note [Freelists for per-call objects] in core.py
    cdef readonly uint64_t repr_
    cdef bint frozen

cdef DispatchKeySet _make(uint64_t bits)
cdef void _freeze(DispatchKeySet ks, uint64_t bits) noexcept
cdef bint _is_frozen(DispatchKeySet ks) noexcept
cdef uint64_t _repr_of(DispatchKeySet ks) noexcept
cdef uint64_t _keyset_arg(object ks, str what) except? 0
cdef object _check_repr(object x)
cdef DispatchKeySet EMPTY_SET

cpdef uint64_t tls_included_bits() noexcept
cpdef uint64_t tls_excluded_bits() noexcept
cdef void _set_tls_included(uint64_t bits) noexcept
cdef void _set_tls_excluded(uint64_t bits) noexcept
cdef uint64_t apply_tls(uint64_t bits) noexcept


cdef class _TLSGuard:
    cdef uint64_t keys
    cdef uint64_t saved
    cdef bint is_include
    cdef bint active

    cdef void _store(self, uint64_t bits) noexcept

@cython.final
cdef class IncludeDispatchKeyGuard(_TLSGuard):
    pass

@cython.final
cdef class ExcludeDispatchKeyGuard(_TLSGuard):
    pass

@cython.final
cdef class AutoDispatchBelowAutograd(_TLSGuard):
    pass

@cython.final
cdef class AutoDispatchBelowADInplaceOrView(_TLSGuard):
    pass


cdef class TensorBase:
    cdef DispatchKeySet _key_set
    cdef readonly uint64_t _bits
    cdef object __weakref__  # see Note [Weak references to tensors] in core.py


cpdef object tensor_key_set(object obj)
cdef object _DISABLED_HANDLER
cdef object _init_tensor(TensorBase tensor, object key_set)
cdef object _set_tensor_key_set(TensorBase tensor, object ks)
cdef bint _defines_torch_dispatch(type tp) except -1
@cython.locals(entry=tuple)
cdef tuple _type_facts(type tp)
cdef uint64_t PYTHON_KEYS
cdef DispatchKeySet _tensor_key_set_of(TensorBase tensor)
cdef long long _tensor_bits(object obj) except? -2


@cython.final
cdef class KernelFunction:
    cdef readonly int _kind
    cdef readonly object fn
    cdef int _builtin  # see Note [The engine's own fallbacks are called directly]
    cdef bint frozen
    cdef readonly bint cell  # see Note [Fallback cells] in core.py

cdef bint _kernel_is_frozen(KernelFunction kernel) noexcept


@cython.final
cdef class IValue:  # freelist: see Note [Freelists for per-call objects] in core.py
    cdef readonly object tag
    cdef readonly object payload
    cdef readonly int code
    cdef bint frozen

cdef IValue _new_ivalue(int code, object payload)
cdef void _fill_ivalue(IValue iv, int code, object payload) noexcept
cdef int _code_of(IValue iv) noexcept
cdef bint _ivalue_is_frozen(IValue iv) noexcept
@cython.locals(kind=int, code=int)
cdef bint _takes_as_is(tuple step, object value) except -1
cdef object _box_value(tuple step, object value)
cdef object _check_value(tuple step, object value)
cdef IValue _element(object x)
cdef object _to_python(IValue iv)
cdef object _from_python(object value)


cdef class Stack(list):
    pass

cdef object _check_depth(object stack, object n, str what)
cdef object _check_stack(object stack)
@cython.locals(entries=list, size=Py_ssize_t, items=list, i=Py_ssize_t)
cdef tuple _peek_values(object stack, Py_ssize_t n, str name, str what)
cdef IValue _checked_ivalue(object item, str name)
@cython.locals(entries=list)
cdef object _drop(object stack, Py_ssize_t n)
cdef tuple _take(object stack, Py_ssize_t n, str name, str what)


@cython.final
cdef class Boxer:
    cdef readonly str name
    cdef readonly tuple argument_steps
    cdef readonly tuple return_steps
    cdef readonly Py_ssize_t n_arguments
    cdef readonly Py_ssize_t n_returns
    cdef readonly bint positional
    cdef readonly bint vararg
    cdef readonly bint varret
    cdef readonly object bind
    cdef readonly object argument_error
    cdef readonly object return_error

cdef object _check_ready(Boxer boxer)
cdef Stack _new_stack()
cdef object _box_call(Boxer boxer, object args, object kwargs)
@cython.locals(stack=Stack, i=Py_ssize_t, steps=tuple)
cdef object _box_values(Boxer boxer, tuple values)
cdef tuple _returned_values(Boxer boxer, object result)
@cython.locals(values=tuple, steps=tuple, boxed=list, i=Py_ssize_t, iv=IValue)
cdef object _box_returns(Boxer boxer, object result, object stack)
cdef object _as_result(Boxer boxer, tuple values)
@cython.locals(values=tuple, steps=tuple, i=Py_ssize_t)
cdef object _kernel_results(Boxer boxer, object stack, str name)
cdef str _type_name(object value)
cdef str _described(object result)


@cython.final
cdef class CallShape:
    cdef readonly object schema
    cdef readonly tuple dispatch_args
    cdef readonly Py_ssize_t n_args
    cdef readonly tuple arg_positions
    cdef readonly tuple arg_names
    cdef readonly tuple arg_kinds
    cdef readonly tuple arg_required
    cdef Py_ssize_t* c_positions
    cdef int* c_kinds
    cdef readonly Py_ssize_t positional_span
    cdef readonly Py_ssize_t min_positional
    cdef readonly Py_ssize_t max_positional
    cdef Boxer _boxer
    cdef object _make_boxer
    cdef readonly object bind
    cdef readonly object split_call
    cdef readonly Py_ssize_t handler_arity
    cdef readonly object handler_call
    cdef readonly object dispatch_argument_error
    cdef readonly tuple tags

@cython.locals(i=Py_ssize_t, n=Py_ssize_t)
cdef int _store_shape_arrays(CallShape shape, Py_ssize_t n_args) except -1
cdef Boxer _shape_boxer(CallShape shape)
cdef tuple _check_dispatch_args(object dispatch_args)

cdef class CallPlan:
    cdef readonly str name
    cdef readonly CallShape shape
    cdef readonly tuple table
    cdef uint64_t masks[16]
    cdef readonly object report_error
    # See Note [Last dispatch cache] in core.py.
    cdef bint cache_valid
    cdef uint64_t last_key
    cdef uint64_t last_bits
    cdef KernelFunction last_entry

@cython.locals(size=Py_ssize_t, i=Py_ssize_t, start=Py_ssize_t, stop=Py_ssize_t, filled=tuple)
cpdef tuple filled_table(tuple cells, tuple runs, list entries)
@cython.locals(i=Py_ssize_t)
cdef int _fill_plan(CallPlan plan, CallShape shape, tuple table, tuple masks) except -1
@cython.locals(i=Py_ssize_t, bits=uint64_t)
cdef int _store_masks(CallPlan plan, tuple masks) except -1
cdef uint64_t _masked(CallPlan plan, uint64_t bits) noexcept
cdef uint64_t _call_bits(CallPlan plan, uint64_t bits) noexcept
cdef KernelFunction _entry_at(CallPlan plan, uint64_t bits)
cdef uint64_t _value_bits(CallPlan plan, object value, int kind, Py_ssize_t i) except? 0
@cython.locals(entry=KernelFunction, value=int, without=uint64_t)
cdef uint64_t _skip_fallthroughs(CallPlan plan, uint64_t bits, str name) except? 0
cdef object _settled_plan(OperatorHandle handle, CallPlan plan)
cdef object _raise_not_defined(OperatorHandle handle)
cdef object _missing_argument(CallPlan plan, tuple args, dict kwargs, str name)
cdef object _wrong_argument_count(CallPlan plan, tuple args, object kwargs)
cdef object _wrong_type(CallPlan plan, object value, Py_ssize_t i, str expected, object argument)
cdef uint64_t _required_tensor_bits(CallPlan plan, object value, Py_ssize_t i, str expected, object argument) except? 0
cdef uint64_t _extract_bits(CallPlan plan, tuple args, dict kwargs) except? 0
cdef object _too_many_replans(OperatorHandle handle)
cdef tuple _plan_and_keys(OperatorHandle handle, tuple args, dict kwargs)
cdef object _report(CallPlan plan, KernelFunction entry, uint64_t bits)
cdef object _dispatch_boxed(OperatorHandle handle, str what, CallPlan plan, uint64_t bits, object stack)
cdef object _check_handle(OperatorHandle handle)
cdef object redispatch(OperatorHandle handle, object keyset, tuple args, dict kwargs)
cdef object dispatch(OperatorHandle handle, str what, CallPlan plan, uint64_t bits, tuple args, dict kwargs)
@cython.locals(entry=KernelFunction, kind=int)
cdef object _run_kernel(OperatorHandle handle, CallPlan plan, uint64_t bits, tuple args, dict kwargs)
cdef object _run_with_operator(OperatorHandle handle, CallPlan plan, uint64_t bits, KernelFunction entry, tuple args,
                               dict kwargs, uint64_t argument_bits)


@cython.final
cdef class OperatorHandle:
    cdef readonly str _name
    cdef CallPlan _plan
    cdef readonly _Redispatch redispatch
    cdef vectorcall_impl vectorcall
    cdef object _packet
    cdef readonly object _owner


@cython.final
cdef class _Redispatch:
    cdef readonly OperatorHandle handle
    cdef vectorcall_impl vectorcall


cdef void _enable_fast_calls(OperatorHandle handle, _Redispatch bound) noexcept
cdef vectorcall_impl op_vectorcall_impl
cdef vectorcall_impl redispatch_vectorcall_impl
cdef vectorcall_impl packet_vectorcall_impl
cdef void install_fast_calls(vectorcall_impl op_impl, vectorcall_impl redispatch_impl,
                             vectorcall_impl packet_impl) noexcept


# See Note [The Python key] in core.py.
cdef uint64_t PYTHON_BIT
cdef uint64_t ANY_ARGUMENT_BITS
cdef uint64_t ABOVE_PYTHON
cdef uint64_t BELOW_SNAPSHOT

@cython.final
cdef class PythonKeyState:
    cdef list modes
    cdef Py_ssize_t depth
    cdef bint has_snapshot
    cdef uint64_t snapshot_included
    cdef uint64_t snapshot_excluded

cdef PythonKeyState _python_state()
cdef object _push_mode(PythonKeyState state, object mode)
cdef object _pop_mode(PythonKeyState state)
cdef int _builtin_kernel(object fn) except -1
cdef CallPlan _fallback_plan(object op, object keyset, object args, object kwargs)
@cython.locals(state=PythonKeyState)
cdef object _snapshot_and_redispatch(OperatorHandle handle, CallPlan plan, uint64_t bits, tuple args, dict kwargs,
                                     uint64_t argument_bits)
@cython.locals(entry=KernelFunction)
cdef object _below_snapshot(OperatorHandle handle, CallPlan plan, uint64_t bits, tuple args, dict kwargs,
                            PythonKeyState state, uint64_t argument_bits)
@cython.locals(excluded=uint64_t, added=uint64_t)
cdef object _above_python_excluded(OperatorHandle handle, CallPlan plan, uint64_t bits, tuple args, dict kwargs,
                                   PythonKeyState state, uint64_t argument_bits)
@cython.locals(mode_active=bint, types=tuple, overloaded=tuple)
cdef object _call_handlers(OperatorHandle handle, CallPlan plan, uint64_t bits, tuple args, dict kwargs,
                           PythonKeyState state, uint64_t argument_bits)
@cython.locals(nargs=Py_ssize_t, i=Py_ssize_t, position=Py_ssize_t, kind=int, overloaded=tuple)
cdef tuple _python_tensors(CallPlan plan, tuple args, dict kwargs)
cdef Py_ssize_t _arg_position(CallPlan plan, Py_ssize_t i) noexcept
cdef int _arg_kind(CallPlan plan, Py_ssize_t i) noexcept
@cython.locals(bits=longlong)
cdef bint _has_python_key(object value) except -1
@cython.locals(n=Py_ssize_t, j=Py_ssize_t)
cdef tuple _add_overloaded(tuple overloaded, object tensor)
@cython.locals(included=uint64_t, excluded=uint64_t)
cdef object _without_python_key(OperatorHandle handle, CallPlan plan, uint64_t bits, tuple args, dict kwargs)
@cython.locals(nargs=Py_ssize_t, i=Py_ssize_t, position=Py_ssize_t)
cdef bint _has_tensor(CallPlan plan, tuple args, dict kwargs) except -1
cdef object _all_returned_not_implemented(OperatorHandle handle, object mode, tuple types)


cdef int _choice_epoch
cdef int _choice_epoch_now() noexcept
cdef bint _type_decides(object tp) except -1  # (object: a value's type may have a metaclass, an Enum's)
cdef object _call_pattern(tuple args, dict kwargs)


cdef class _OverloadPacketBase:
    cdef readonly str qualified_name
    cdef tuple _overloads
    cdef dict _choices
    cdef int _epoch
    cdef object _memo
    cdef object _memo2
    cdef vectorcall_impl vectorcall

cdef void _enable_fast_packet_calls(_OverloadPacketBase packet) noexcept

@cython.locals(handle=OperatorHandle, plan=CallPlan)
cdef tuple _chosen_overload(_OverloadPacketBase packet, object pattern, tuple args, object kwargs)
