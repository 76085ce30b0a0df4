# Boxing: IValue, Stack and Boxer; included into _C.pyx, whose TensorBase and
# tensor_key_set it uses.  Twin: dispatcher/_boxing_py.py -- keep them in step.
#
# A boxed kernel pays for boxing on every call, so what runs per value is
# here: making an IValue is a C struct fill (no Python code), and a value of
# the exact type its schema type expects -- a tensor for Tensor, an int for
# int, ... -- is boxed inline.  Everything else goes to the converter that
# dispatcher.ivalue made for its schema type, which also raises for bad values.
from cpython.list cimport PyList_Append, PyList_GET_ITEM, PyList_GET_SIZE, PyList_GetSlice
from cpython.long cimport PyLong_FromVoidPtr
from cpython.ref cimport Py_INCREF
from cpython.sequence cimport PySequence_Fast_ITEMS
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.object cimport PyObject_RichCompareBool, Py_EQ

from dispatcher._ivalue_tag import Mismatch, Tag

cdef extern from "Python.h":
    # Cython's own declaration takes an object: NULL (delete the slice) would not pass.
    int PyList_SetSlice(object lst, Py_ssize_t low, Py_ssize_t high, PyObject* items) except -1
    void Py_SET_SIZE(object o, Py_ssize_t size)
    void _Py_DECREF_BORROWED "Py_DECREF"(PyObject* o)

cdef tuple TAGS = tuple(Tag)

cdef enum:
    # Mirrors dispatcher._ivalue_tag.Tag (checked at import below).
    TAG_NONE = 0
    TAG_TENSOR = 1
    TAG_DOUBLE = 2
    TAG_INT = 3
    TAG_BOOL = 4
    TAG_STRING = 5
    TAG_COMPLEX = 6
    TAG_INT_LIST = 12
    TAG_DOUBLE_LIST = 13
    TAG_BOOL_LIST = 14
    TAG_TENSOR_LIST = 15
    TAG_GENERIC_LIST = 16
    TAG_TUPLE = 17
    TAG_OBJECT = 18

assert all(tag == i for i, tag in enumerate(TAGS))
assert (TAG_NONE, TAG_TENSOR, TAG_DOUBLE, TAG_INT, TAG_BOOL, TAG_STRING, TAG_COMPLEX, TAG_INT_LIST,
        TAG_DOUBLE_LIST, TAG_BOOL_LIST, TAG_TENSOR_LIST, TAG_GENERIC_LIST, TAG_TUPLE, TAG_OBJECT) == (
    Tag.NONE, Tag.TENSOR, Tag.DOUBLE, Tag.INT, Tag.BOOL, Tag.STRING, Tag.COMPLEX, Tag.INT_LIST,
    Tag.DOUBLE_LIST, Tag.BOOL_LIST, Tag.TENSOR_LIST, Tag.GENERIC_LIST, Tag.TUPLE, Tag.OBJECT)


cdef inline bint _is_container(int code) noexcept:
    # Payloads that to_python() rebuilds (dispatcher._ivalue_tag.CONTAINER_TAGS).
    return TAG_INT_LIST <= code <= TAG_TUPLE


@cython.final
@cython.freelist(64)
cdef class IValue:
    """A tagged value: ``IValue(Tag.INT, 3)``; immutable.

    Payloads are plain Python values; typed lists (IntList, ..., TensorList)
    hold a tuple of plain elements, generic lists and tuples a tuple of
    IValues, as in c10 (``c10::List<int64_t>`` vs ``c10::List<IValue>``).
    """
    cdef readonly object tag
    cdef readonly object payload
    cdef int _code  # the tag as an int

    def __init__(self, tag, payload):
        if type(tag) is not Tag:
            raise TypeError(f"an IValue's tag must be a Tag, got {tag!r}")
        self.tag = tag
        self._code = tag
        self.payload = payload

    def __eq__(self, other):
        if type(other) is not IValue:
            return NotImplemented
        # Identity first, as tuples compare items: a tensor payload equals itself.
        return self._code == (<IValue>other)._code and PyObject_RichCompareBool(
            self.payload, (<IValue>other).payload, Py_EQ)

    def __hash__(self):
        return hash((self.tag, self.payload))

    def __reduce__(self):
        return IValue, (self.tag, self.payload)

    def __repr__(self):
        return f"IValue(Tag.{self.tag.name}, {self.payload!r})"

    def to_python(self):
        """The plain Python value: lists come back as fresh lists, tuples as tuples."""
        return _to_python(self)

    @staticmethod
    def from_python(value):
        """Box ``value`` with the tag its Python type suggests (for ``Any``, ``t``, ``...``)."""
        return _from_python(value)


cdef inline IValue _new_ivalue(int code, object payload):
    # An IValue for a tag known to be good: no check, no Python code.
    cdef IValue iv = IValue.__new__(IValue)
    iv.tag = <object>PyTuple_GET_ITEM(TAGS, code)
    iv._code = code
    iv.payload = payload
    return iv


cdef IValue _NONE = _new_ivalue(TAG_NONE, None)


cdef object _to_python(IValue iv):
    if TAG_INT_LIST <= iv._code <= TAG_TENSOR_LIST:
        return list(iv.payload)
    if iv._code == TAG_GENERIC_LIST:
        return [_to_python(_element(x)) for x in iv.payload]
    if iv._code == TAG_TUPLE:
        return tuple([_to_python(_element(x)) for x in iv.payload])
    return iv.payload


cdef IValue _element(object x):
    if type(x) is not IValue:
        raise TypeError(f"a generic list or tuple IValue holds IValues, not {type(x).__name__}")
    return <IValue>x


cdef IValue _from_python(object value):
    if value is None:
        return _NONE
    cdef type cls = type(value)
    if cls is bool:
        return _new_ivalue(TAG_BOOL, value)
    if cls is int:
        return _new_ivalue(TAG_INT, value)
    if cls is float:
        return _new_ivalue(TAG_DOUBLE, value)
    if cls is str:
        return _new_ivalue(TAG_STRING, value)
    if cls is complex:
        return _new_ivalue(TAG_COMPLEX, value)
    if tensor_key_set(value) is not None:
        return _new_ivalue(TAG_TENSOR, value)
    if cls is list:
        if value:
            # A non-empty list whose elements all have one type is a typed list.
            for code, element_type in ((TAG_BOOL_LIST, bool), (TAG_INT_LIST, int), (TAG_DOUBLE_LIST, float)):
                if all([type(x) is element_type for x in value]):
                    return _new_ivalue(code, tuple(value))
            if all([tensor_key_set(x) is not None for x in value]):
                return _new_ivalue(TAG_TENSOR_LIST, tuple(value))
        return _new_ivalue(TAG_GENERIC_LIST, tuple([_from_python(x) for x in value]))
    if cls is tuple:
        return _new_ivalue(TAG_TUPLE, tuple([_from_python(x) for x in value]))
    return _new_ivalue(TAG_OBJECT, value)


cdef class Stack(list):
    """A list of IValues with the stack helpers of ``ATen/core/stack.h``.

    The top of the stack is the end of the list; ``pop()`` is list's.
    ``push`` checks that it is given IValues; the list methods themselves stay
    the raw, unchecked vector interface (as ``std::vector<IValue>`` is in
    PyTorch) for hot code.
    """

    def push(self, *values):
        for v in values:
            if type(v) is not IValue:
                raise TypeError(f"a Stack holds IValues, not {type(v).__name__}")
        self.extend(values)

    def peek(self, i, n):
        """Item ``i`` of the top ``n`` items (torch::jit::peek(stack, i, N))."""
        if not 0 <= i < n <= len(self):
            raise IndexError(f"cannot peek at item {i} of the top {n} of a stack of {len(self)}")
        return self[len(self) - n + i]

    def pop_n(self, n):
        """Remove and return the top ``n`` items, deepest first (torch::jit::pop(stack, N))."""
        _check_depth(self, n, "pop")
        items = self[len(self) - n:]
        del self[len(self) - n:]
        return items

    def drop(self, n):
        """Remove the top ``n`` items (torch::jit::drop(stack, n))."""
        _check_depth(self, n, "drop")
        del self[len(self) - n:]

    def __reduce__(self):
        return Stack, (list(self),)


cdef int _check_depth(Stack stack, object n, str what) except -1:
    if type(n) is not int or n < 0:
        raise ValueError(f"cannot {what} {n!r} items: expected a non-negative int")
    if n > len(stack):
        raise IndexError(f"cannot {what} {n} items from a stack of {len(stack)}")
    return 0


# Note [Popping without shrinking]
# list.pop() and slice deletion give memory back as a list empties: a stack
# that goes 2 -> 0 -> 1 -> 0 items, as one boxed call does, would realloc its
# buffer three times.  Like std::vector, a Stack keeps its buffer: the top
# items are removed by lowering the size and dropping the references the list
# held.  Each reference is dropped after the size is lowered, since dropping
# it may run Python code (a destructor) that looks at the stack.
cdef inline object _pop(Stack stack):
    # The top item of a non-empty stack, removed.
    cdef Py_ssize_t size = PyList_GET_SIZE(stack)
    item = <object>PyList_GET_ITEM(stack, size - 1)
    Py_SET_SIZE(stack, size - 1)
    _Py_DECREF_BORROWED(<PyObject*>item)  # the list's reference; ``item`` holds its own
    return item


cdef inline void _drop(Stack stack, Py_ssize_t n):
    # Remove the top ``n`` items (at most the stack's size).
    cdef Py_ssize_t size
    cdef PyObject* item
    for _ in range(n):
        size = PyList_GET_SIZE(stack)
        if size == 0:
            return  # a destructor emptied it
        item = PyList_GET_ITEM(stack, size - 1)
        Py_SET_SIZE(stack, size - 1)
        _Py_DECREF_BORROWED(item)


# -- Boxer ------------------------------------------------------------------------------
cdef enum:
    STEP_CONVERT = 0  # call the converter
    STEP_TENSOR = 1  # a tensor boxes as it is, anything else is converted
    STEP_EXACT = 2  # a value of exactly the step's type boxes as it is, ...

cdef struct BoxStep:
    # How one argument or return boxes.  The pointers are borrowed from the
    # tuples the Boxer keeps (its _converters and _fast_paths).
    int kind
    int code  # the tag of a value that boxes as it is
    PyObject* exact
    PyObject* convert


cdef BoxStep* _make_steps(tuple converters, tuple fast_paths) except NULL:
    if len(converters) != len(fast_paths):
        raise ValueError("a Boxer takes one fast path per converter")
    for fast in fast_paths:
        if fast is not None and (type(fast) is not tuple or len(fast) != 2 or type(fast[1]) is not Tag
                                 or not (fast[0] is None or isinstance(fast[0], type))):
            raise TypeError(f"a fast path is None or (exact type or None, Tag), not {fast!r}")
    cdef BoxStep* steps = <BoxStep*>PyMem_Malloc(max(len(converters), 1) * sizeof(BoxStep))
    if steps == NULL:
        raise MemoryError()
    cdef Py_ssize_t i
    for i in range(len(converters)):
        fast = fast_paths[i]
        steps[i].convert = <PyObject*>converters[i]
        if fast is None:
            steps[i].kind = STEP_CONVERT
        else:
            steps[i].kind = STEP_TENSOR if fast[0] is None else STEP_EXACT
            steps[i].code = fast[1]
            steps[i].exact = <PyObject*>fast[0]
    return steps


cdef inline object _box_value(BoxStep* step, object value):
    if step.kind == STEP_EXACT:
        if type(value) is <object>step.exact:
            return _new_ivalue(step.code, value)
    elif step.kind == STEP_TENSOR:
        if isinstance(value, TensorBase) or tensor_key_set(value) is not None:
            return _new_ivalue(step.code, value)
    return (<object>step.convert)(value)


@cython.final
cdef class Boxer:
    """How the calls of one schema box and unbox.

    ``dispatcher.ivalue`` makes one per schema (the core caches it by schema:
    see ``box``): a converter per argument and per return, each with its fast
    path, and the functions that word a mismatch as a TypeError --
    ``argument_error(values)`` and ``return_error(i, mismatch)``.  A fast path
    is ``(exact type, tag)`` for values that box as they are (the type None
    stands for "a tensor"), or None: always convert.
    """
    cdef readonly object schema
    cdef Py_ssize_t n_arguments
    cdef Py_ssize_t n_returns
    cdef bint positional  # a call passing exactly the declared arguments, positionally, needs no binding
    cdef bint vararg
    cdef bint varret
    cdef BoxStep* arguments
    cdef BoxStep* returns
    cdef tuple _converters  # what the steps' pointers point into
    cdef tuple _fast_paths
    cdef object argument_error
    cdef object return_error

    def __init__(self, schema, tuple argument_converters, tuple argument_fast_paths, tuple return_converters,
                 tuple return_fast_paths, argument_error, return_error):
        if self.schema is not None:
            raise TypeError("a Boxer is initialised once")
        if len(argument_converters) != len(schema.arguments) or len(return_converters) != len(schema.returns):
            raise ValueError(f"a Boxer for {schema.name} takes one converter per argument and per return")
        # Freed first: an __init__ that failed half-way may have left one.
        PyMem_Free(self.arguments)
        PyMem_Free(self.returns)
        self.arguments = self.returns = NULL
        self.arguments = _make_steps(argument_converters, argument_fast_paths)
        self.returns = _make_steps(return_converters, return_fast_paths)
        self._converters = (argument_converters, return_converters)
        self._fast_paths = (argument_fast_paths, return_fast_paths)
        self.n_arguments = len(argument_converters)
        self.n_returns = len(return_converters)
        self.vararg = schema.is_vararg
        self.varret = schema.is_varret
        self.positional = not self.vararg and not any(a.kwarg_only for a in schema.arguments)
        self.argument_error = argument_error
        self.return_error = return_error
        self.schema = schema

    def __dealloc__(self):
        PyMem_Free(self.arguments)
        PyMem_Free(self.returns)

    cdef inline int _check_ready(self) except -1:
        if self.schema is None:
            raise TypeError("this Boxer was never initialised")
        return 0

    def box(self, args, kwargs=None):
        """The stack a boxed kernel gets for ``op(*args, **kwargs)``."""
        self._check_ready()
        return self._box(args, kwargs)

    def unbox_arguments(self, stack):
        """Pop the arguments ``box`` pushed; a ``...`` schema's arguments are the whole stack."""
        self._check_ready()
        return self._unbox_arguments(stack)

    def box_returns(self, result, stack):
        """Push a kernel's ``result`` (None, a value, or a tuple) as IValues."""
        self._check_ready()
        self._box_returns(result, stack)

    def unbox_returns(self, stack):
        """Pop a boxed kernel's results: None for no returns, the value for one, else a tuple.

        A ``-> ...`` schema's results are the whole stack (always a tuple).
        """
        self._check_ready()
        return self._unbox_returns(stack)

    cdef Stack _box(self, object args, object kwargs):
        cdef tuple values
        if self.positional and not kwargs and type(args) is tuple and PyTuple_GET_SIZE(args) == self.n_arguments:
            values = args
        else:
            bound = self.schema.bind(args, kwargs)  # exactly the declared arguments, plus a "..."'s extras
            if type(bound) is not tuple or PyTuple_GET_SIZE(bound) < self.n_arguments:
                raise RuntimeError(f"{self.schema.name}: bind() returned {bound!r}, not the bound arguments")
            values = bound
        return self._box_values(PySequence_Fast_ITEMS(values), PyTuple_GET_SIZE(values))

    cdef Stack _box_vector(self, PyObject** args, Py_ssize_t nargs, PyObject* kwnames):
        # _box for a vectorcall's arguments: the usual call passes exactly the
        # declared arguments, positionally, and is boxed straight from the array.
        if self.positional and kwnames == NULL and nargs == self.n_arguments:
            return self._box_values(args, nargs)
        packed, kw = _pack_call(args, 0, nargs, kwnames)
        return self._box(packed, kw)

    cdef Stack _box_values(self, PyObject** values, Py_ssize_t n):
        # ``values``: borrowed, the bound call (the declared arguments, then a "..."'s extras).
        cdef Stack stack = Stack.__new__(Stack)
        cdef Py_ssize_t i
        try:
            for i in range(self.n_arguments):
                PyList_Append(stack, _box_value(&self.arguments[i], <object>values[i]))
        except Mismatch:
            raise self.argument_error(tuple([<object>values[i] for i in range(n)])) from None
        for i in range(self.n_arguments, n):
            PyList_Append(stack, _from_python(<object>values[i]))
        return stack

    cdef tuple _unbox_arguments(self, object stack):
        return _take(stack, -1 if self.vararg else self.n_arguments, self.schema, "arguments")

    cdef int _box_returns(self, object result, object stack) except -1:
        if not isinstance(stack, Stack):
            raise TypeError(f"expected a Stack, got {type(stack).__name__}")
        if self.n_returns == 1 and not self.varret:  # the common case
            try:
                PyList_Append(stack, _box_value(&self.returns[0], result))
            except Mismatch as exc:
                raise self.return_error(0, exc) from None
            return 0
        cdef tuple values = _returned_values(self.schema, self.n_returns, self.varret, result)
        cdef list boxed = []
        cdef Py_ssize_t i
        for i in range(self.n_returns):
            try:
                PyList_Append(boxed, _box_value(&self.returns[i], <object>PyTuple_GET_ITEM(values, i)))
            except Mismatch as exc:
                raise self.return_error(i, exc) from None
        for i in range(self.n_returns, PyTuple_GET_SIZE(values)):
            PyList_Append(boxed, _from_python(<object>PyTuple_GET_ITEM(values, i)))
        # All or nothing: a bad return leaves the stack as it was.
        cdef Py_ssize_t size = PyList_GET_SIZE(stack)
        PyList_SetSlice(stack, size, size, <PyObject*>boxed)
        return 0

    cdef object _unbox_returns(self, object stack):
        if self.varret:
            return _take(stack, -1, self.schema, "return values")
        cdef Py_ssize_t size
        cdef PyObject* top
        if self.n_returns == 1 and type(stack) is Stack:
            # The common case, without _take's generality.
            size = PyList_GET_SIZE(stack)
            if size:
                top = PyList_GET_ITEM(stack, size - 1)
                if type(<object>top) is IValue and not _is_container((<IValue>top)._code):
                    return (<IValue>_pop(<Stack>stack)).payload
        values = _take(stack, self.n_returns, self.schema, "return values")
        if self.n_returns == 0:
            return None
        return values[0] if self.n_returns == 1 else values


cdef tuple _returned_values(object schema, Py_ssize_t n, bint varret, object result):
    # ``result`` as the tuple of values the schema's returns describe.
    if varret:
        # "-> ..." (or "-> (Tensor, ...)"): the kernel returns a tuple of all its values.
        if type(result) is not tuple or PyTuple_GET_SIZE(result) < n:
            raise TypeError(
                f"{schema.name}() returns a tuple of at least {n} values, "
                f"but the kernel returned {_described(result)}")
        return result
    if n == 0:
        if result is not None:
            raise TypeError(f"{schema.name}() returns nothing, but the kernel returned {_type_name(result)}")
        return ()
    if n == 1:
        return (result,)
    if type(result) is not tuple or PyTuple_GET_SIZE(result) != n:
        raise TypeError(f"{schema.name}() returns a tuple of {n}, but the kernel returned {_described(result)}")
    return result


cdef str _type_name(object value):
    return "None" if value is None else type(value).__name__


cdef str _described(object result):
    return f"a tuple of {len(result)}" if type(result) is tuple else _type_name(result)


cdef tuple _take(object stack, Py_ssize_t n, object schema, str what):
    # The top ``n`` items of ``stack`` (all of them if n < 0), removed, as Python values.
    if not isinstance(stack, Stack):
        raise TypeError(f"expected a Stack, got {type(stack).__name__}")
    cdef Py_ssize_t size = PyList_GET_SIZE(stack)
    if n < 0:
        n = size
    elif n > size:
        raise RuntimeError(f"{schema.name}: expected {n} {what} on the stack, found {size}")
    if n == 0:
        return ()
    cdef Py_ssize_t i
    cdef PyObject* item
    cdef IValue iv
    cdef bint containers = False
    for i in range(size - n, size):
        item = PyList_GET_ITEM(stack, i)
        if type(<object>item) is not IValue:
            raise TypeError(f"{schema.name}: the stack holds a {type(<object>item).__name__}, not an IValue")
        containers |= _is_container((<IValue>item)._code)
    cdef tuple values
    if containers:
        # From a copy: rebuilding a container may run Python code that changes the stack.
        values = tuple([_to_python(<IValue>x) for x in PyList_GetSlice(stack, size - n, size)])
    else:
        values = PyTuple_New(n)
        for i in range(n):
            payload = (<IValue>PyList_GET_ITEM(stack, size - n + i)).payload
            Py_INCREF(payload)
            PyTuple_SET_ITEM(values, i, payload)
    _drop(<Stack>stack, n)
    return values


# -- boxing by schema --------------------------------------------------------------------
# Note [Boxer cache]
# A boxed kernel calls unbox_arguments(op.schema, stack) and box_returns(...)
# on every call, so finding the schema's Boxer must cost next to nothing.
# Hashing a FunctionSchema runs Python code; its address does not.  Boxers are
# kept by id(schema) in a dict, and in front of it in a direct-mapped cache
# indexed by address bits: one load and one compare when it hits.  Every
# entry is a Boxer, which holds its schema, so an address cannot be reused by
# another schema while it is cached.
cdef enum:
    BOXER_CACHE_SLOTS = 256  # a power of two
cdef list _recent_boxers = [None] * BOXER_CACHE_SLOTS
cdef dict _boxers = {}


cdef inline Boxer _boxer_for(object schema):
    # Objects are 16-byte aligned: the low 4 address bits say nothing.
    cdef size_t slot = (<size_t><void*>schema >> 4) & (BOXER_CACHE_SLOTS - 1)
    cdef PyObject* cached = PyList_GET_ITEM(_recent_boxers, slot)
    if cached != <PyObject*>None and (<Boxer>cached).schema is schema:
        return <Boxer>cached
    return _find_boxer(schema, slot)


cdef Boxer _find_boxer(object schema, size_t slot):
    key = PyLong_FromVoidPtr(<void*>schema)
    found = _boxers.get(key)
    cdef Boxer boxer
    if found is not None and (<Boxer>found).schema is schema:
        boxer = <Boxer>found
    else:
        boxer = _boxing()._make_boxer(schema)
        _boxers[key] = boxer
    _recent_boxers[slot] = boxer
    return boxer


def _forget_boxers():
    """Drop every cached Boxer (the values a type accepts have changed)."""
    _boxers.clear()
    _recent_boxers[:] = [None] * BOXER_CACHE_SLOTS


@cython.binding(False)  # a plain builtin function: cheaper to call
def box(schema, args, kwargs=None):
    """The stack a boxed kernel gets for ``op(*args, **kwargs)``.

    Binds like ``schema.bind`` (TypeError for a bad call), then checks and
    boxes every argument: TypeError names the operator, the argument, its
    position (from 1), the expected and the received type.
    """
    return _boxer_for(schema)._box(args, kwargs)


@cython.binding(False)  # a plain builtin function: cheaper to call
def unbox_arguments(schema, stack):
    """Pop the arguments ``box`` pushed and return them as Python values, in order.

    A ``...`` schema's arguments are the whole stack.
    """
    return _boxer_for(schema)._unbox_arguments(stack)


@cython.binding(False)  # a plain builtin function: cheaper to call
def box_returns(schema, result, stack):
    """Push an unboxed kernel's ``result`` (None, a value, or a tuple) as IValues.

    Checked against the schema's returns like ``box`` checks arguments; a bad
    result leaves the stack as it was.
    """
    _boxer_for(schema)._box_returns(result, stack)


@cython.binding(False)  # a plain builtin function: cheaper to call
def unbox_returns(schema, stack):
    """Pop a boxed kernel's results: None for no returns, the value for one, else a tuple.

    A ``-> ...`` schema's results are the whole stack (always a tuple).
    """
    return _boxer_for(schema)._unbox_returns(stack)
