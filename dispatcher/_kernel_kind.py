"""How a table entry is called: the contract between registration and call path."""
from enum import IntEnum


class KernelKind(IntEnum):
    UNBOXED = 0  # fn(*args, **kwargs)
    WITH_KEYSET = 1  # fn(keyset, *args, **kwargs)
    BOXED = 2  # fn(op, keyset, stack)
    FALLTHROUGH = 3  # never called: the key is masked out of the dispatch
    MISSING = 4  # no kernel: calling raises NotImplementedError
    AMBIGUOUS_AUTOGRAD_OTHER = 5  # calling raises c10's ambiguity error
    WITH_OPERATOR = 6  # fn(op, keyset, args, kwargs): a fallback that takes the call unboxed

# c10's KernelFunction::dumpState flags, per kind: what the kernel can be
# called as.  Ours can all be boxed (the dispatcher boxes for them); plain,
# with-keyset and with-operator kernels also take unboxed arguments.
DUMP_STATE = {
    KernelKind.UNBOXED: "boxed unboxed ",
    KernelKind.WITH_KEYSET: "boxed unboxed ",
    KernelKind.BOXED: "boxed ",
    KernelKind.FALLTHROUGH: "fallthrough boxed ",
    KernelKind.MISSING: "",
    KernelKind.AMBIGUOUS_AUTOGRAD_OTHER: "boxed ",
    KernelKind.WITH_OPERATOR: "boxed unboxed ",
}
