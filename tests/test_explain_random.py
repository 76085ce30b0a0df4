"""explain's answers against what calls then really do, over random registrations.

Each case registers, on one operator, kernels for random keys (runtime and
alias keys; plain, with-keyset kernels that redispatch below their key,
boxed, fallthrough), random backend fallbacks (boxed, redispatching or
fallthrough), sometimes without the standard fallbacks, then makes calls
with random tensor keysets under random TLS include and exclude guards.  For
each call: the kernel explain says runs first is the one that runs (or, if
it says the call raises, the call raises that and runs nothing), and
``run=True`` reports exactly the kernels that ran, in order.
"""
import random

import pytest

from dispatcher import DispatchKey as K
from dispatcher import explain, fallthrough_kernel
from dispatcher.ivalue import box_returns, unbox_arguments
from dispatcher.kernel import AnnotatedKernel, KernelKind, make_kernel
from dispatcher.keys import get_autograd_key_from_backend
from dispatcher.operator_entry import RULES
from dispatcher.standard_fallbacks import standard_fallbacks_library

SEED = 20240615
CASES = 300
CALLS_PER_CASE = 4

BACKEND_KEYS = [K.CPU, K.CUDA, K.XLA, K.Meta, K.PrivateUse1, K.SparseCPU, K.QuantizedCPU, K.NestedTensorCPU, K.FPGA]
OTHER_KEYS = [
    K.AutogradCPU, K.AutogradCUDA, K.AutogradXLA, K.AutogradPrivateUse1, K.AutogradOther, K.AutogradNestedTensor,
    K.ADInplaceOrView, K.BackendSelect, K.Python, K.FuncTorchBatched, K.Functionalize, K.AutocastCPU,
    K.TESTING_ONLY_GenericMode,
]
RUNTIME_KEYS = BACKEND_KEYS + OTHER_KEYS
ALIAS_KEYS = [
    K.CompositeImplicitAutograd, K.CompositeExplicitAutograd, K.CompositeExplicitAutogradNonFunctional,
    K.CompositeImplicitAutogradNestedTensor, K.Autograd, K.FuncTorchBatchedDecomposition,
]
# What a call that explain says raises raises.
RAISES = {
    KernelKind.MISSING: NotImplementedError,
    KernelKind.AMBIGUOUS_AUTOGRAD_OTHER: RuntimeError,
    KernelKind.FALLTHROUGH: RuntimeError,
}


class Case:
    """One random set of registrations, and the log its kernels write."""

    def __init__(self, world, rng, index):
        self.world, self.rng, self.log = world, rng, []
        self.lib = world.library(f"explainrandom{index}", "DEF")
        self.lib.define("f(Tensor x, Tensor? y=None) -> ()")
        self.op = getattr(getattr(world.ops, self.lib.ns), "f").default
        self.fallbacks = world.library("_", "IMPL")
        self.standard = rng.random() < 0.8
        if not self.standard:
            world.fallbacks.close()
        # Alias keys weigh three times as much: each covers many slots.
        for key in dict.fromkeys(rng.choices(RUNTIME_KEYS + ALIAS_KEYS * 3, k=rng.randint(1, 9))):
            self._impl(key)
        for key in rng.sample(RUNTIME_KEYS, rng.randint(0, 4)):
            if not world.registry.has_backend_fallback(key):
                self._fallback(key)

    def close(self):
        self.lib.close()
        self.fallbacks.close()
        if not self.standard:
            self.world.fallbacks = standard_fallbacks_library(self.world.registry)

    def _impl(self, key):
        choice = self.rng.choice(["plain", "plain", "below", "boxed", "fallthrough"])
        if choice == "fallthrough":
            self._register(fallthrough_kernel, key)
        elif choice == "plain":
            def plain(x, y=None):
                self.log.append(plain)
            self._register(plain, key)
        elif choice == "below":
            def below(keyset, x, y=None):
                self.log.append(below)
                self._redispatch_below(keyset, x, y)
            self._register(below, key, with_keyset=True)
        else:
            def boxed(op, keyset, stack):
                self.log.append(boxed)
                unbox_arguments(op, stack)
                box_returns(op, None, stack)
            self._register(boxed, key, boxed=True)

    def _register(self, fn, key, **how):
        # Through the c10 layer, as a C++ TORCH_LIBRARY_IMPL block would:
        # torch.library's impl refuses a Meta kernel beside a
        # CompositeImplicitAutograd one, c10 takes any combination.
        self.lib._impl("f", key, AnnotatedKernel(make_kernel(fn, **how), self.lib._default_debug()))

    def _fallback(self, key):
        if self.rng.random() < 0.3:
            self.fallbacks.fallback(fallthrough_kernel, key)
            return
        redispatch = self.rng.random() < 0.5

        def fallback(op, keyset, stack):
            self.log.append(fallback)
            x, y = unbox_arguments(op, stack)
            if redispatch:
                self._redispatch_below(keyset, x, y)
            box_returns(op, None, stack)

        self.fallbacks.fallback(fallback, key, boxed=True)

    def _redispatch_below(self, keyset, x, y):
        lower = keyset.remove(keyset.highest_priority_key())
        if lower != keyset:
            self.op.redispatch(lower, x, y)

    def tensor(self):
        """Mostly a tensor's usual keys: a backend, often its autograd key, sometimes more."""
        rng = self.rng
        keys = [rng.choice(BACKEND_KEYS)] if rng.random() < 0.9 else []
        if keys and rng.random() < 0.6:
            keys.append(get_autograd_key_from_backend(self.world.keyset(keys[0]).highest_backend()))
        return self.world.tensor(*keys, *rng.sample(OTHER_KEYS, rng.choice([0, 0, 0, 1, 2])))

    def guards(self):
        engine, rng = self.world.engine, self.rng
        guards = [engine.IncludeDispatchKeyGuard(k) for k in rng.sample(RUNTIME_KEYS, rng.choice([0, 0, 0, 1, 2]))]
        guards += [engine.ExcludeDispatchKeyGuard(k) for k in rng.sample(RUNTIME_KEYS, rng.choice([0, 0, 1, 2]))]
        return guards


def _call(op, log, *args):
    """Run the call; what it raised (None if it returned) and the kernels that ran."""
    log.clear()
    try:
        op(*args)
        error = None
    except Exception as exc:
        error = exc
    return error, list(log)


def check_call(case, x, y):
    """Check one call; returns the rule that chose the entry it reaches."""
    e = explain(case.op, x, y)
    error, ran = _call(case.op, case.log, x, y)
    context = f"{case.world.registry.find_op(case.op.name()).dump_state()}\n{e}"
    # The Python key's standard fallback (a tensor with the key and no
    # handler: it runs the operator below the key) logs nothing.
    python_key = case.world.engine.python_key_fallback
    if e.entry.runs and e.kernel is not python_key:
        assert ran and ran[0] is e.kernel, context
    elif not e.entry.runs:
        assert not ran and isinstance(error, RAISES[e.entry.kind]), context
    # Run through explain: the hops are the kernels that ran, and it fails as the call did.
    case.log.clear()
    traced = explain(case.op, x, y, run=True)
    if e.entry.kind == KernelKind.FALLTHROUGH:  # the engine raises before it traces
        assert traced.hops == (), context
    else:
        assert traced.hops[0].entry == e.entry, context
    ran_in_trace = [h.entry.kernel for h in traced.hops if h.entry.runs and h.entry.kernel is not python_key]
    assert ran_in_trace == case.log == ran, context
    assert type(traced.error) is type(error), context
    return e.entry.rule


@pytest.mark.parametrize("seed", [SEED])
def test_explain_agrees_with_the_call(world, seed):
    rng = random.Random(seed)
    engine = world.engine
    tls = engine.tls_local_include_set(), engine.tls_local_exclude_set()
    rules = set()
    for index in range(CASES):
        case = Case(world, rng, index)
        try:
            for _ in range(CALLS_PER_CASE):
                x, y = case.tensor(), case.tensor() if rng.random() < 0.5 else None
                guards = case.guards()
                for guard in guards:
                    guard.__enter__()
                try:
                    rules.add(check_call(case, x, y))
                finally:
                    for guard in reversed(guards):
                        guard.__exit__(None, None, None)
                    # Guards leave backend bits behind (as c10's do): each call starts afresh.
                    engine.tls_set_local_include_set(tls[0])
                    engine.tls_set_local_exclude_set(tls[1])
        finally:
            case.close()
    # The cases are varied enough to reach every rule of the precedence.
    assert rules == set(RULES)
