"""The expressions generate_storage_golden.py evaluates with torch and
tests/test_prototype_storage.py with the prototype, each with ``torch``
(and ``TorchDispatchMode``) bound to that library's, and the helpers they call."""

EXPRESSIONS = [
    "repr(torch.Storage())",
    "repr(torch.TypedStorage([1.0, 2.5]))",
    "repr(torch.tensor([1.0, 2.0]).untyped_storage())",
    "repr(torch.tensor([1.0, 2.0]).storage())",
    "repr(torch.tensor([1, 2]).storage())",
    "[len(torch.Storage(3)), torch.Storage(3).nbytes(), torch.Storage(3).untyped().nbytes(), "
    "torch.Storage(3).element_size()]",
    "torch.arange(6.0).reshape(2, 3).t().untyped_storage().nbytes()",
    "torch.arange(6.0).reshape(2, 3).select(0, 1).untyped_storage().nbytes()",
    "torch.arange(6.0).reshape(2, 3).storage().tolist()",
    "set_(torch.empty(0), torch.arange(6.0).storage())",
    "set_(torch.empty(0), torch.arange(6.0).untyped_storage())",
    "set_(torch.empty([]), torch.Storage())",
    "set_(torch.empty(0), torch.arange(6.0).storage(), 1, (2, 2), (2, 1))",
    "set_(torch.empty(0), torch.arange(6.0).storage(), 2, (2,))",
    "set_(torch.empty(0, dtype=torch.float64), torch.arange(6.0).storage())",
    "shares(torch)",
    "mode_sees(torch, TorchDispatchMode)",
]


def set_(t, *args):
    out = t.set_(*args)
    return {"same": out is t, "size": list(t.shape), "stride": list(t.stride()), "offset": t.storage_offset(),
            "values": t.tolist()}


def shares(torch):
    """A tensor set_ to another's storage writes into it."""
    a = torch.zeros(4)
    b = torch.empty(0).set_(a.untyped_storage(), 1, (2,), (1,))
    b.add_(torch.ones(2))
    return a.tolist()


def mode_sees(torch, mode_class):
    """What a dispatch mode sees of ``t.set_(torch.Storage())``: the operator and its arguments' types."""
    seen = []

    class Seen(mode_class):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append([str(func), [type(a).__name__ for a in args]])
            return func(*args, **(kwargs or {}))

    t, s = torch.empty([]), torch.Storage()
    with Seen():
        t.set_(s)
    return seen
