"""The registrations and keys on which tests/test_python_dispatcher_key.py checks
the Python dispatcher's choice of kernel (torch._ops.resolve_key) against
torch 2.13's, recorded by generate_python_dispatcher_key_golden.py.

Each case is one operator ``f<i>(Tensor x) -> Tensor`` with a kernel at each
key of its row; the choice is asked for every key of RUNTIME_KEYS.  No
imports of either library here.
"""

REGISTRATIONS = (
    (),
    ("CPU",),
    ("CPU", "AutogradCPU"),
    ("CompositeImplicitAutograd",),
    ("CompositeImplicitAutograd", "CPU"),
    ("CompositeImplicitAutograd", "QuantizedCPU"),
    ("CompositeImplicitAutograd", "Autograd"),
    ("CompositeExplicitAutograd",),
    ("CompositeExplicitAutograd", "Autograd"),
    ("CompositeExplicitAutograd", "CPU", "AutogradXLA"),
    ("CompositeExplicitAutogradNonFunctional",),
    ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd"),
    ("CompositeImplicitAutogradNestedTensor", "CompositeImplicitAutograd"),
    ("Autograd", "XLA"),
    ("Autograd", "AutogradCPU", "Lazy"),
    ("FuncTorchBatchedDecomposition", "CompositeImplicitAutograd"),
    ("FuncTorchBatchedDecomposition",),
    ("Meta", "Python", "ADInplaceOrView"),
    ("AutogradOther", "QuantizedCPU", "CompositeImplicitAutograd"),
)

RUNTIME_KEYS = (
    "CPU", "AutogradCPU", "XLA", "AutogradXLA", "Lazy", "AutogradLazy", "QuantizedCPU", "AutogradOther", "Meta",
    "AutogradMeta", "NestedTensorCPU", "AutogradNestedTensor", "FuncTorchBatched", "Python", "ADInplaceOrView",
    "BackendSelect", "Functionalize", "Undefined",
)
