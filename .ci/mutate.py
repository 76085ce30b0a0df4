"""Mutation testing of the pure-Python side: break the code on purpose, one
change at a time, and check that the tests notice.

The engine's entry points have their own harness (.ci/break_entry_points.py,
a rebuild of the extension per mutant); this one covers what both engines
share: registration (registry.py, operator_entry.py, publish.py), the
torch.library layer (_library.py, library.py, ops.py), custom ops and their
autograd, opcheck, schema inference, the Python key's modes, checked calls
and the compat shim.  Run it after changing those modules or their tests::

    python .ci/mutate.py              # every mutant (several minutes)
    python .ci/mutate.py --subset     # the fast subset .ci/run runs (~2 minutes)
    python .ci/mutate.py opcheck      # the mutants whose name has "opcheck"
    python .ci/mutate.py --list       # the mutants, their files and tests; runs nothing

How: it exports the last commit (``git archive HEAD``: commit first) to a
temporary directory once, checks the unchanged copy passes every test file
the mutants name, then for each mutant writes its one change into the copy,
runs the tests that should kill it there (``pytest -x``, the pure engine:
DISPATCHER_NO_EXTENSIONS=1, nothing to build) and puts the file back.  It
prints a line per mutant and the table per module: mutants, killed,
equivalent, survived, kill rate, time.  It exits non-zero if any mutant
survives, if a module's kill rate is below 95%, or if a mutant's text is not
found exactly once.

Why a hand-written harness rather than mutmut or cosmic-ray:
- A mutant is defined by the exact code it replaces (as in
  break_entry_points.py), not by a line number or an operator position, so
  it survives refactors that move the code; when a refactor changes the code
  itself, the harness fails loudly, naming the mutant to re-anchor, instead
  of mutating something else or skipping it silently.
- Each mutant says which tests should kill it, so a run takes minutes, not
  the hours that the whole suite (both engines) per generated mutant takes
  on two cores; and the subset fits in CI.
- The mutants are chosen: each one is a behaviour worth a test (a check
  removed, a rollback skipped, a lock dropped), not the thousands of
  arithmetic-operator swaps a generator makes, most of which are
  equivalent or killed by anything.
- Equivalent mutants are listed here with the reason, and not run.

Each mutant that the findings of 2026-11-27 (../shared/findings/2026-11-27-mutation)
listed as a survivor carries its finding number; those mutants form the
``--subset``, with a few more from the modules the findings did not reach.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Optional

ROOT = pathlib.Path(__file__).resolve().parent.parent
MIN_KILL_RATE = 0.95


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # under dispatcher/
    old: str  # must occur exactly once in the file
    new: str
    tests: tuple[str, ...]  # test files or node ids, in the order pytest -x should try them
    finding: Optional[int] = None  # the finding of 2026-11-27 it reproduces
    equivalent: Optional[str] = None  # why no test can kill it (then it is not run)
    subset: bool = False  # also in --subset (every mutant with a finding is)


# -- the tests, by what they cover ------------------------------------------------------------
GUARDS = "tests/test_registration_guards.py"
GAPS = "tests/test_mutation_gaps.py"
OPTESTS = "tests/test_optests.py"
CALL = "tests/test_call.py"
COMPAT = "tests/test_compat.py"
COMPAT_DISPATCH = "tests/test_compat_dispatch.py"
CUSTOM = "tests/test_custom_ops.py"
LEGACY = "tests/test_legacy_custom_op.py"
CUSTOM_ENGINES = "tests/test_custom_ops_engines.py"
CUSTOM_RESULTS = "tests/test_custom_op_results.py"
INFER = "tests/test_schema_inference.py"
PYKEY = "tests/test_python_key.py"
TORCH_LIBRARY = "tests/test_torch_library.py"
LIBRARY = "tests/test_library.py"
LIBRARY_FUNCTIONS = "tests/test_library_functions.py"
PACKETS = "tests/test_ops_packets.py"
CATALOG = "tests/test_catalog.py"
GOLDEN = "tests/test_registration_golden.py"
BACKEND_SELECT = "tests/test_backend_select.py"
EXPLAIN = "tests/test_explain.py"
ERROR_HINTS = "tests/test_error_hints.py"
LIFETIMES = "tests/test_registration_lifetimes.py"
# Not the memory tests: thousands of cycles each, a minute on the pure engine.
LIFETIMES_FAST = tuple(f"{LIFETIMES}::{name}" for name in (
    "test_a_closed_library_refuses_every_registration_with_torchs_error",
    "test_an_entry_goes_with_its_last_registration_in_any_order",
    "test_a_failed_registration_leaves_no_entry",
    "test_register_kernel_that_fails_part_way_changes_nothing",
))


def _m(name: str, path: str, old: str, new: str, *tests: str, finding: Optional[int] = None,
       equivalent: Optional[str] = None, subset: bool = False) -> Mutant:
    return Mutant(name, path, old, new, tuple(tests), finding, equivalent, subset or finding is not None)


REGISTRY = "registry.py"
ENTRY = "operator_entry.py"
CUSTOM_OPS = "custom_ops.py"
AUTOGRAD = "custom_op_autograd.py"
LEGACY_IMPL = "_custom_op/impl.py"
LEGACY_AUTOGRAD = "_custom_op/autograd.py"
OPTESTS_PY = "optests.py"
INFERENCE = "schema_inference.py"
MODES = "dispatch_modes.py"
CHECKS = "call_checks.py"
TORCH_C = "compat/torch_C.py"
LIB = "_library.py"
LIBRARY_PY = "library.py"
OPS = "ops.py"
PUBLISH = "publish.py"

MUTANTS: list[Mutant] = [
    # -- registry.py ------------------------------------------------------------------------
    _m("registry: a nested defer() starts the deferral afresh", REGISTRY,
       "        if self._depth == 0:\n            dispatcher.deferred = {}\n",
       "        dispatcher.deferred = {}\n",
       GUARDS, finding=2),
    _m("registry: register_impl without the lock", REGISTRY,
       "        with self._lock:\n            return self.register_impl_locked(name, key, kernel)\n",
       "        if True:\n            return self.register_impl_locked(name, key, kernel)\n",
       f"{GUARDS}::test_register_impl_from_many_threads_loses_nothing", finding=18),
    _m("registry: an entry out of use is not forgotten (its callback survives)", REGISTRY,
       "            if not op.in_use():\n                self._forget(op)\n",
       "            pass\n",
       GUARDS, *LIFETIMES_FAST, finding=14),
    _m("registry: undo in registration order", REGISTRY,
       "for undo, a, b in reversed(handles):",
       "for undo, a, b in handles:",
       GUARDS, equivalent="each handle removes its own registration by identity and only notes refreshes, which "
       "the deferral's end makes after all of them; two fallbacks of one overridable key end with none either "
       "way (Note [Overridable fallbacks]); so the end state does not depend on the order"),
    _m("registry: a second def of a name is accepted", REGISTRY,
       "        if op is not None and op.schema is not None:\n            raise RuntimeError(",
       "        if False:\n            raise RuntimeError(",
       CATALOG, "tests/test_python_dispatcher.py"),
    _m("registry: the last overload's packet is kept", REGISTRY,
       "            del self._packets[qualified_name]\n",
       "",
       *LIFETIMES_FAST),
    _m("registry: a second fallback for a key is accepted", REGISTRY,
       "        if previous is not None and key not in self.OVERRIDABLE_FALLBACK_KEYS:",
       "        if False:",
       GOLDEN),
    _m("registry: a replaced fallback is not kept", REGISTRY,
       "                self._replaced_fallbacks.setdefault(slot, []).insert(0, previous)\n",
       "                pass\n",
       TORCH_LIBRARY, GOLDEN),
    _m("registry: a fallback whose masks change refreshes no operator", REGISTRY,
       "            for op in list(self._operators.values()):\n                op.refresh()\n",
       "            pass\n",
       GUARDS, CALL, "tests/test_table_layouts.py"),
    _m("registry: a fallback does not reach its cell", REGISTRY,
       "            self.fallback_table[slot]._hold(self.function_of(self._fallbacks[slot]))\n",
       "            pass\n",
       "tests/test_table_layouts.py", CALL),
    _m("registry: layouts outlive a change of the fallback masks", REGISTRY,
       "            self._layouts.clear()  # their masks are those of the previous fallbacks\n",
       "            pass\n",
       "tests/test_table_layouts.py", CALL, COMPAT_DISPATCH),
    _m("registry: kernels registered before the def are not checked against it", REGISTRY,
       "                    check_inferred_schema(name, registered, kernel)\n",
       "                    pass\n",
       GUARDS, COMPAT),
    _m("registry: a catalog DEF namespace is not claimed", REGISTRY,
       "if previous is None and self.catalog is not None and ns in self.catalog.def_namespaces:",
       "if False:",
       CATALOG, LIBRARY),
    _m("registry: a catalog factory gets no BackendSelect kernel", REGISTRY,
       "                    self._register_backend_select(schema, catalog.origin)\n",
       "                    pass\n",
       GUARDS, BACKEND_SELECT),
    _m("registry: packet() does not define a catalog operator", REGISTRY,
       "            self._define_from_catalog(qualified_name)  # or another thread does",
       "            pass  # or another thread does",
       PACKETS, CATALOG),
    _m("registry: a kernel for Undefined is accepted", REGISTRY,
       "        if key == _UNDEFINED:\n",
       "        if False:\n",
       GUARDS),

    # -- operator_entry.py -----------------------------------------------------------------------
    _m("entry: the ambiguous AutogradOther error goes to the report-error callback", ENTRY,
       "if callback is not None and kind == KernelKind.MISSING:",
       "if callback is not None:",
       GUARDS, finding=1),
    _m("entry: a def whose call plan fails is not rolled back", ENTRY,
       "            self.schema, self._shape, self._checked_shape = previous\n",
       "",
       GUARDS, finding=19),
    _m("entry: a kernel whose plan fails to publish is not rolled back", ENTRY,
       "            self.kernels, self._table, self._filled, self._masks = before\n",
       "",
       GUARDS, subset=True),
    _m("entry: no ambiguous AutogradOther entry", ENTRY,
       "if key == K.AutogradOther and _has_kernel_in(present, _AUTOGRADOTHER_BACKEND_BITS):",
       "if False:",
       CALL),
    _m("entry: CompositeExplicitAutograd does not keep the math kernel from autograd slots", ENTRY,
       "has_backend_kernel = _CEA in present or (",
       "has_backend_kernel = False or (",
       GOLDEN),
    _m("entry: a backend kernel does not keep the math kernel from its autograd slot", ENTRY,
       "slot.backend_bits != 0 and _has_kernel_in(present, slot.backend_bits)",
       "False",
       CALL, GOLDEN),
    _m("entry: CompositeExplicitAutograd kernels are ignored", ENTRY,
       "    if slot.in_cea and _CEA in present:",
       "    if False:",
       CALL),
    _m("entry: Autograd alias kernels are ignored", ENTRY,
       "    if slot.in_autograd and _AUTOGRAD in present:",
       "    if False:",
       GOLDEN, CALL),
    _m("entry: a refresh under a deferral publishes at once", ENTRY,
       "            deferred[self] = None\n            return\n",
       "            deferred[self] = None\n",
       GUARDS),
    _m("entry: fallthrough masks are not updated", ENTRY,
       "            if is_fallthrough != fallthrough_fallbacks[index]:\n                slot.update_masks(masks, is_fallthrough)\n",
       "",
       CALL, COMPAT_DISPATCH),
    _m("entry: a key's last kernel leaves an empty tuple", ENTRY,
       "        if not left:\n            del kernels[key]\n",
       "",
       GUARDS, *LIFETIMES_FAST, COMPAT_DISPATCH),
    _m("entry: overriding a kernel does not warn", ENTRY,
       "            self._warn_override(key, kernels[0], kernel)\n",
       "            pass\n",
       CALL),
    _m("entry: no special error for a call without tensors", ENTRY,
       "        if key == K.Undefined:\n            raise NotImplementedError(",
       "        if False:\n            raise NotImplementedError(",
       CALL),
    _m("entry: the direct kernel does not beat the alias keys", ENTRY,
       "    if key in present:\n        return key, DIRECT\n",
       "",
       CALL),

    # -- custom_ops.py -------------------------------------------------------------------------
    _m("custom_ops: outputs are not checked against each other", CUSTOM_OPS,
       "        seen.append(tensor)\n",
       "",
       GUARDS, finding=3),
    _m("custom_ops: an out schema's return i need not alias mutable argument i", CUSTOM_OPS,
       "        if arg_alias is not None and set(ret_alias.before_set) != set(arg_alias.before_set):",
       "        if False:",
       GUARDS, finding=10),
    _m("custom_ops: register_fake(allow_override=False) accepts a CompositeImplicitAutograd op", CUSTOM_OPS,
       "    if entry.has_kernel_for_dispatch_key(DispatchKey.CompositeImplicitAutograd):",
       "    if False:",
       GUARDS, finding=11),
    _m("custom_ops: register_fake's allow_override defaults to False", CUSTOM_OPS,
       "_stacklevel: int = 1, allow_override: bool = True) -> Any:",
       "_stacklevel: int = 1, allow_override: bool = False) -> Any:",
       GUARDS, finding=12),
    # Found with finding 12's test: c10 never warns of a Meta kernel's override
    # (operator_entry.py; here because register_fake is what stacks Meta kernels).
    _m("custom_ops: a second register_fake warns of the Meta kernel's override", ENTRY,
       "        if kernels and key is not DispatchKey.Meta:\n",
       "        if kernels:\n",
       GUARDS, finding=12),
    _m("custom_ops: a name resolves to a CustomOpDef of another registry", CUSTOM_OPS,
       "    return opdef if opdef is not None and opdef._registry is registry_in_use() else name",
       "    return opdef if opdef is not None else name",
       GUARDS, finding=13),
    _m("custom_ops: a nested fake impl leaves get_ctx() None", CUSTOM_OPS,
       "            _ctx_state.current, _ctx_state.getter = previous\n",
       "            _ctx_state.current, _ctx_state.getter = None, None\n",
       GUARDS, finding=15),
    # Finding 16 had it backwards: torch 2.13 registers the router again on every
    # register_kernel (and warns of the override); the mutant registers it once.
    _m("custom_ops: BackendSelect registered by the first register_kernel only", CUSTOM_OPS,
       "            self._register_backend_select_dispatcher(device_arg_index)\n",
       "            if not self._backend_fns:\n                self._register_backend_select_dispatcher(device_arg_index)\n",
       GUARDS, finding=16),
    _m("custom_ops: _destroy leaves the op in OPDEFS", CUSTOM_OPS,
       "            if OPDEFS.get(self._qualname) is self:\n                del OPDEFS[self._qualname]\n",
       "",
       GUARDS, finding=23),
    _m("custom_ops: register_kernel is not rolled back when an impl fails", CUSTOM_OPS,
       "                    self._lib.undo_newest(registered)\n                    self._backend_fns = previous\n",
       "                    pass\n",
       *LIFETIMES_FAST),
    _m("custom_ops: a disabled kernel still runs", CUSTOM_OPS,
       "            if device_type in self._disabled_kernel:\n",
       "            if False:\n",
       CUSTOM_ENGINES),
    _m("custom_ops: an inplace op need not return its first argument", CUSTOM_OPS,
       "                if result is not schema.bind(args, kwargs)[0]:",
       "                if False:",
       CUSTOM_ENGINES),
    _m("custom_ops: an out op need not return its out arguments", CUSTOM_OPS,
       "\n                        and all(r is o for r, o in zip(returned, outs))):",
       "):",
       GUARDS),
    _m("custom_ops: a view op's results are checked for aliasing", CUSTOM_OPS,
       "            elif not _is_view_op(schema):",
       "            elif True:",
       GUARDS),
    _m("custom_ops: kwarg-only tensors accepted without the out tag", CUSTOM_OPS,
       'if _has_kwarg_only_tensors(parsed) and "out" not in tags:',
       "if False:",
       CUSTOM, CUSTOM_ENGINES),
    _m("custom_ops: an out schema need not return every mutable argument", CUSTOM_OPS,
       "    if len(schema.returns) != len(mutable):",
       "    if False:",
       GUARDS),
    _m("custom_ops: an inplace schema may mutate other arguments", CUSTOM_OPS,
       "    others = [a.name for a in args[1:] if a.is_write]",
       "    others: list[str] = []",
       CUSTOM_ENGINES),
    _m("custom_ops: a schema's mutations need not match mutates_args", CUSTOM_OPS,
       "                    if expected != set(mutates_args):",
       "                    if False:",
       CUSTOM_ENGINES, CUSTOM_RESULTS, CUSTOM),
    _m("custom_ops: written arguments' versions are not bumped", CUSTOM_OPS,
       "                _increment_version(values[i])\n",
       "                pass\n",
       CUSTOM, CUSTOM_ENGINES, CUSTOM_RESULTS),
    _m("custom_ops: an out op accepts an autograd formula", CUSTOM_OPS,
       "        if self._is_out:\n            raise RuntimeError(\n                f\"Cannot register autograd",
       "        if False:\n            raise RuntimeError(\n                f\"Cannot register autograd",
       CUSTOM_ENGINES, CUSTOM_RESULTS, CUSTOM),
    _m("custom_ops: a second fake impl is reported as a plain Meta kernel", CUSTOM_OPS,
       "    if meta is not None and meta.debug.startswith(_FAKE_DEBUG):",
       "    if False:",
       CUSTOM),
    _m("custom_ops: a fake impl's ctx is not set", CUSTOM_OPS,
       "        _ctx_state.current, _ctx_state.getter = FakeImplCtx(qualname, source), None\n",
       "",
       CUSTOM, GUARDS),

    # -- _custom_op/ (torch's older CustomOp API) ---------------------------------------------------
    _m("legacy custom op: an existing CPU kernel does not stop impl", LEGACY_IMPL,
       "        if torch_C._dispatch_has_computed_kernel_for_dispatch_key(self._qualname, key):",
       "        if False:",
       LEGACY),
    _m("legacy custom op: a view schema may have a backward formula", LEGACY_IMPL,
       "            error(\"operator that returns views\")",
       "            pass",
       LEGACY),
    _m("legacy custom op: inputs that require grad run without a formula", LEGACY_AUTOGRAD,
       "            raise RuntimeError(\"Autograd has not been implemented for operator\")",
       "            pass",
       LEGACY),
    _m("legacy custom op: the gradient dict's keys are not checked", LEGACY_AUTOGRAD,
       "    if expected_keys != actual_keys:",
       "    if False:",
       LEGACY),

    # -- custom_op_autograd.py ---------------------------------------------------------------------
    _m("autograd: extra None gradients are not dropped", AUTOGRAD,
       "    if len(grads) > expected and all(g is None for g in grads[expected:]):",
       "    if False:",
       CUSTOM_ENGINES, CUSTOM_RESULTS),
    _m("autograd: the number of gradients is not checked", AUTOGRAD,
       "    if len(grads) != expected:",
       "    if False:",
       CUSTOM_ENGINES, CUSTOM_RESULTS),
    _m("autograd: a gradient that is not a tensor is accepted", AUTOGRAD,
       "        elif not is_tensor(grad):",
       "        elif False:",
       CUSTOM_RESULTS, CUSTOM_ENGINES),
    _m("autograd: tensors of two autograd engines are accepted", AUTOGRAD,
       "            if found is not None and found is not engine:",
       "            if False:",
       CUSTOM_ENGINES),
    _m("autograd: a backward without a formula does not say so", AUTOGRAD,
       "        if backward is None:\n",
       "        if False:\n",
       CUSTOM, CUSTOM_ENGINES),
    _m("autograd: setup_context never gets keyword_only_inputs", AUTOGRAD,
       "                if self._pass_keyword_only:",
       "                if False:",
       CUSTOM, CUSTOM_ENGINES),
    _m("autograd: a list argument's gradient structure is not checked", AUTOGRAD,
       "            if type(grad) is not list or len(grad) != kind or not all(g is None or is_tensor(g) for g in grad):",
       "            if False:",
       CUSTOM_RESULTS, CUSTOM_ENGINES),

    # -- optests.py ----------------------------------------------------------------------------
    _m("opcheck: the output-against-output check skips the last output", OPTESTS_PY,
       "range(min(len(schema.returns), len(outputs))), 2)",
       "range(min(len(schema.returns), len(outputs)) - 1), 2)",
       OPTESTS, finding=4),
    _m("opcheck: an input returned itself is accepted", OPTESTS_PY,
       "            if output is value and engine.tensor_key_set(value) is not None and not argument.is_write:",
       "            if False:",
       OPTESTS, finding=5),
    _m("opcheck: a CompositeImplicitAutograd kernel does not count as autograd", OPTESTS_PY,
       "    keys |= {DispatchKey.Autograd, DispatchKey.CompositeImplicitAutograd}",
       "    keys |= {DispatchKey.Autograd}",
       OPTESTS, finding=6),
    _m("opcheck: test_schema runs on meta inputs", OPTESTS_PY,
       "    if inputs.any_meta():\n        return\n    _run_through_autograd(op, inputs.copies())",
       "    _run_through_autograd(op, inputs.copies())",
       OPTESTS, finding=7),
    _m("opcheck: test_faketensor does not compare which outputs are inputs", OPTESTS_PY,
       "    if real_are_inputs != fake_are_inputs:",
       "    if False:",
       OPTESTS, finding=8),
    _m("opcheck: test_faketensor compares which outputs are inputs, not whether any is", OPTESTS_PY,
       "    real_are_inputs = any(r is t for r in real_leaves for t in real_inputs)\n"
       "    fake_are_inputs = any(f is t for f in fake_leaves for t in fake_inputs_list)\n",
       "    real_are_inputs = [any(r is t for t in real_inputs) for r in real_leaves]  # type: ignore\n"
       "    fake_are_inputs = [any(f is t for t in fake_inputs_list) for f in fake_leaves]  # type: ignore\n",
       OPTESTS, finding=8),
    _m("opcheck: a packet with several overloads is accepted", OPTESTS_PY,
       "        if len(names) != 1:",
       "        if False:",
       OPTESTS, finding=9),
    _m("opcheck: test_faketensor does not compare the number of returns", OPTESTS_PY,
       "    if len(fake_leaves) != len(real_leaves):",
       "    if False:",
       OPTESTS, finding=21),
    _m("opcheck: an undeclared mutation passes", OPTESTS_PY,
       "        if not argument.is_write and any(checks_of(t).changed(t, snapshot) for t, snapshot in before[i]):",
       "        if False:",
       OPTESTS),
    _m("opcheck: an undeclared alias of an argument passes", OPTESTS_PY,
       "            if _overlap(inputs, output, value) and i not in schema.aliased_arguments(j):",
       "            if False:",
       OPTESTS, subset=True),
    _m("opcheck: annotated aliasing outputs fail", OPTESTS_PY,
       "            if ai is None or aj is None or not set(ai.after_set) & set(aj.after_set):",
       "            if True:",
       OPTESTS),
    _m("opcheck: an operator with an autograd kernel is checked as one without", OPTESTS_PY,
       "    if any(entry.has_kernel_for_dispatch_key(key) for key in keys):\n        return\n",
       "",
       OPTESTS),
    _m("opcheck: fake shapes are not compared", OPTESTS_PY,
       'f"Shapes {real_shape} and {fake_shape} are not equal!" if real_shape != fake_shape',
       'f"Shapes {real_shape} and {fake_shape} are not equal!" if False',
       OPTESTS),
    _m("opcheck: fake dtypes are not compared", OPTESTS_PY,
       "are not equal!\" if real_dtype != fake_dtype\n",
       "are not equal!\" if False\n",
       OPTESTS),
    _m("opcheck: raise_exception is ignored", OPTESTS_PY,
       "            if raise_exception:\n",
       "            if False:\n",
       OPTESTS),
    _m("opcheck: test_schema runs on the inputs themselves", OPTESTS_PY,
       "    inputs = inputs.copies()\n    schema = op.schema\n",
       "    schema = op.schema\n",
       OPTESTS),
    _m("opcheck: one of rtol/atol is accepted", OPTESTS_PY,
       "    if (rtol is None) ^ (atol is None):",
       "    if False:",
       OPTESTS),

    # -- schema_inference.py ---------------------------------------------------------------------
    _m("infer_schema: normalize_tags keeps repeats", INFERENCE,
       "    return tuple(dict.fromkeys(names))",
       "    return tuple(names)",
       GUARDS, finding=22),
    _m("infer_schema: inplace and out together accepted", INFERENCE,
       "    if is_inplace and is_out:",
       "    if False:",
       INFER),
    _m("infer_schema: mutates_args may be any string", INFERENCE,
       "            if mutates_args != UNKNOWN_MUTATES:\n                raise ValueError(",
       "            if False:\n                raise ValueError(",
       INFER),
    _m("infer_schema: a mutated non-tensor is accepted", INFERENCE,
       "            if not schema_type.startswith(\"Tensor\"):\n                error_fn(",
       "            if False:\n                error_fn(",
       INFER),
    _m("infer_schema: unknown names in mutates_args are accepted", INFERENCE,
       "        if len(mutates_args_not_seen) > 0:",
       "        if False:",
       INFER),
    _m("infer_schema: an int default is not printed as an int", INFERENCE,
       "    if isinstance(default, int) and not isinstance(default, bool):",
       "    if False:",
       INFER),
    _m("infer_schema: a one-element tuple return is not a tuple", INFERENCE,
       "    if len(args) == 1:\n        output_ty = \"(\" + output_ty + \")\"\n",
       "",
       INFER),
    _m("infer_schema: varargs accepted", INFERENCE,
       "        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):",
       "        if False:",
       INFER),

    # -- dispatch_modes.py -------------------------------------------------------------------------
    _m("modes: RestorePythonTLSSnapshot leaves the snapshot set in its block", MODES,
       "        _engine().set_python_tls_snapshot(None)\n",
       "",
       GUARDS, "tests/test_prototype_subclassing.py::test_a_reentrant_call_snapshots_the_keys_its_block_set",
       finding=17),
    _m("modes: a RestorePythonTLSSnapshot entered twice is accepted", MODES,
       "        if self._saved is not None:\n",
       "        if False:\n",
       PYKEY),
    _m("modes: RestorePythonTLSSnapshot outside a handler", MODES,
       "        if snapshot is None:\n            raise RuntimeError(\"Accessing",
       "        if False:\n            raise RuntimeError(\"Accessing",
       PYKEY),
    _m("modes: RestorePythonTLSSnapshot does not put the include set back", MODES,
       "        _engine().tls_set_local_include_set(included)\n",
       "",
       PYKEY),
    _m("modes: a mode left out of order is not refused", MODES,
       "        if top is not self:",
       "        if False:",
       PYKEY),
    _m("modes: _disable_current_modes does not put the modes back", MODES,
       "        for mode in reversed(old):\n            _push_mode(mode)\n",
       "        pass\n",
       PYKEY),
    _m("modes: _pop_mode_temporarily does not put the mode back", MODES,
       "    finally:\n        _push_mode(old)\n",
       "    finally:\n        pass\n",
       PYKEY),

    # -- call_checks.py ------------------------------------------------------------------------
    _m("checked calls: a failed switch is not rolled back", CHECKS,
       "        _enabled_for_process, _depth = enabled_before, depth_before\n",
       "",
       GUARDS, finding=20),
    _m("checked calls: a block whose end fails to republish stays open", CHECKS,
       "            _switch(_enabled_for_process, _depth + 1, roll_back=False)\n",
       "            _switch(_enabled_for_process, _depth + 1)\n",
       GUARDS, subset=True),
    _m("checked calls: republishing on every switch, changed or not", CHECKS,
       "    if checked_calls_enabled() == (enabled_before or depth_before > 0):\n        return\n",
       "",
       TORCH_LIBRARY, equivalent="publishing the plans again when checking did not change publishes the same "
       "plans: only time is lost"),
    _m("checked calls: a checked_calls() block never ends", CHECKS,
       "            _depth -= 1\n",
       "            pass\n",
       TORCH_LIBRARY, ERROR_HINTS),
    _m("checked calls: set_checked_calls(True) does nothing", CHECKS,
       "        _enabled_for_process = bool(enabled)\n",
       "        _enabled_for_process = False\n",
       TORCH_LIBRARY),
    _m("checked calls: a device string is not parsed", CHECKS,
       "            parse_device(value)  # torch converts",
       "            pass  # torch converts",
       TORCH_LIBRARY, CUSTOM_RESULTS),
    _m("checked calls: an Optional type printed without Optional", CHECKS,
       '        return f"Optional[{torch_type_name(t.elem)}]"',
       "        return torch_type_name(t.elem)",
       TORCH_LIBRARY, ERROR_HINTS, CUSTOM_RESULTS),

    # -- compat/torch_C.py -------------------------------------------------------------------------
    _m("compat: Undefined (CatchAll) is a key of its own", TORCH_C,
       "    return None if key == DispatchKey.Undefined else key\n",
       "    return key\n",
       GUARDS),
    _m("compat: the dump table prints the package's fallback lines", TORCH_C,
       "    return torch_fallback_line(key) if key in TORCH_FALLBACK_SOURCES else None",
       "    return line",
       GUARDS),
    _m("compat: an alias key has a runtime slot", TORCH_C,
       "    if is_alias_key(key):\n        raise RuntimeError(\"Alias keys",
       "    if False:\n        raise RuntimeError(\"Alias keys",
       COMPAT_DISPATCH, COMPAT, GOLDEN),
    _m("compat: is_fallthrough answers False", TORCH_C,
       "    return kernel.kernel.is_fallthrough()",
       "    return False",
       COMPAT, GOLDEN),
    _m("compat: a with-keyset kernel called through call_boxed gets no keyset", TORCH_C,
       "                call_args = (ks, *call_args)\n",
       "                pass\n",
       GUARDS),
    _m("compat: any library kind accepted", TORCH_C,
       "    if kind not in _KINDS:",
       "    if False:",
       COMPAT_DISPATCH, COMPAT),
    _m("compat: _dispatch_has_kernel answers True", TORCH_C,
       "    return _find(name) is not None",
       "    return True",
       COMPAT, COMPAT_DISPATCH),
    _m("compat: a computed kernel of an empty slot is returned", TORCH_C,
       "    if not entry.is_valid():\n        raise RuntimeError(f\"no kernel for {key} for {op.name}\")",
       "    if False:\n        raise RuntimeError(f\"no kernel for {key} for {op.name}\")",
       GUARDS),

    # -- _library.py and library.py --------------------------------------------------------------
    _m("library: impl(allow_override=False) overrides", LIB,
       "            if not allow_override and existing is not None and existing.kernel_for(target) is not None:",
       "            if False:",
       GAPS, TORCH_LIBRARY),
    _m("library: a Meta kernel beside a CompositeImplicitAutograd one accepted", LIB,
       "            if target == DispatchKey.Meta and existing is not None and existing.kernel_for(",
       "            if False and existing.kernel_for(",
       TORCH_LIBRARY),
    _m("library: a closed library registers", LIB,
       "        if self._closed:\n            raise AssertionError",
       "        if False:\n            raise AssertionError",
       *LIFETIMES_FAST),
    _m("library: a def in another namespace accepted", LIB,
       "        if name.namespace and name.namespace != self.ns:",
       "        if False:",
       LIBRARY),
    _m("library: an impl for a key other than the IMPL library's accepted", LIB,
       "        if key is not None and self.dispatch_key is not None and key != self.dispatch_key:",
       "        if False:",
       LIBRARY, COMPAT_DISPATCH),
    _m("library: an alias fallback registers key by key (not all or nothing)", LIB,
       "            for k in keys:\n                self._registry.check_fallback(k, kernel)\n",
       "",
       LIBRARY, GOLDEN),
    _m("library: a def whose kernel does not fit it is kept", LIB,
       "                self.undo_newest(1)\n                raise\n",
       "                raise\n",
       COMPAT),
    _m("custom_ops: a custom op whose schema contradicts mutates_args stays defined", CUSTOM_OPS,
       "            except BaseException:\n                result._destroy()\n                raise\n",
       "            except BaseException:\n                raise\n",
       GUARDS),
    _m("library: close() leaves the library open", LIB,
       "            self._closed = True\n",
       "            pass\n",
       *LIFETIMES_FAST),
    _m("library: reset() keeps the torch_dispatch rules", LIB,
       "            for undo in reversed(undos):\n                undo()\n",
       "            pass\n",
       TORCH_LIBRARY, LIBRARY_FUNCTIONS),
    _m("library: define() forgets the tags", LIB,
       "        self._tags[name] = names\n",
       "",
       CUSTOM, "tests/test_errors_clear.py", TORCH_LIBRARY),
    _m("library: the def-with-kernel decorator registers no kernel", LIB,
       "        name = lib.define(schema, alias_analysis)\n        lib.impl(name, f)\n",
       "        name = lib.define(schema, alias_analysis)\n",
       TORCH_LIBRARY, LIBRARY_FUNCTIONS),
    _m("library: torch.library.impl('default') is not CompositeExplicitAutograd", LIB,
       'key = DispatchKey.CompositeExplicitAutograd if typ == "default" else dispatch_key_for_device(typ)',
       "key = dispatch_key_for_device(typ)",
       TORCH_LIBRARY, LIBRARY_FUNCTIONS),
    _m("library: get_kernel finds a CustomOpDef's operator by another name", LIBRARY_PY,
       "        return resolved._qualname, resolved._lib\n",
       "        return resolved._name, resolved._lib\n",
       TORCH_LIBRARY, LIBRARY_FUNCTIONS, CUSTOM_ENGINES),
    _m("library: register_autocast's device type is not checked first", LIBRARY_PY,
       "    autocast_key_for_device(device_type)  # a device type without autocast fails before anything else\n",
       "",
       GUARDS),
    _m("library: register_vmap does not check the schema", LIBRARY_PY,
       "    check_vmap_schema((library._registry if library else registry_in_use()).op_or_throw(qualname).handle.schema)\n",
       "",
       GUARDS),
    _m("library: impl_abstract registers nothing", LIBRARY_PY,
       "    return register_fake(qualname, func, lib=lib, _stacklevel=_stacklevel + 1)",
       "    return func",
       LIBRARY_FUNCTIONS, TORCH_LIBRARY),
    _m("library: a custom op's torch_dispatch rule is not the custom op's", LIBRARY_PY,
       "        use_lib = lib or opdef_lib or _library_for(namespace, None)",
       "        use_lib = lib or _library_for(namespace, None)",
       GUARDS),

    # -- ops.py --------------------------------------------------------------------------------
    _m("ops: a removed operator stays an attribute", OPS,
       "            if where is not None and where[1] in vars(where[0]):\n                delattr(*where)\n",
       "            pass\n",
       GAPS),
    _m("ops: no nearest names in the error", OPS,
       "    hint = f\"; did you mean {', '.join(nearest)}?\" if nearest else \"\"",
       "    hint = \"\"",
       GUARDS),
    _m("ops: packets defined before ops was made are not attributes", OPS,
       "        for qualified_name in registry.packet_names():\n            watcher.update(",
       "        for qualified_name in ():\n            watcher.update(",
       PACKETS, TORCH_LIBRARY, CALL),
    _m("ops: a catalog namespace does not look names up", OPS,
       "        packet = self._registry.catalog_packet(f\"{namespace}::{name}\")",
       "        packet = None",
       PACKETS, CATALOG),

    # -- publish.py ----------------------------------------------------------------------------
    _m("publish: no kernel is checked", PUBLISH,
       "        if kind != KernelKind.UNBOXED and kind != KernelKind.WITH_KEYSET:",
       "        if True:",
       TORCH_LIBRARY),
    _m("publish: a checked plan reports a dispatch argument in the package's words", PUBLISH,
       "        handler_call=shape.handler_call, tags=tags, dispatch_argument_error=check.dispatch_argument_error,",
       "        handler_call=shape.handler_call, tags=tags,",
       TORCH_LIBRARY, ERROR_HINTS),
    _m("publish: a handle has no owner", PUBLISH,
       "    handle._set_owner(owner)\n",
       "",
       PACKETS, TORCH_LIBRARY, CUSTOM),
    _m("publish: checked kernels wrapped once per entry", PUBLISH,
       "        function = checked.get(id(entry))\n",
       "        function = None\n",
       TORCH_LIBRARY, equivalent="a memo: an entry that fills several slots is wrapped once; wrapping it for "
       "each slot gives kernels that behave the same"),
    _m("entry: checked calls leave an operator's kernels unwrapped", ENTRY,
       "        table = self._table if self._filled is None else publish.checked_table(",
       "        table = self._table if True else publish.checked_table(",
       TORCH_LIBRARY),
    _m("publish: a call shape without the def's tags", PUBLISH,
       "handler_arity=schema.handler_arity, handler_call=schema.handler_call, tags=tags,\n",
       "handler_arity=schema.handler_arity, handler_call=schema.handler_call, tags=(),\n",
       PACKETS, TORCH_LIBRARY, CUSTOM),
]

# A few mutants of the modules the findings did not reach, so that the subset
# touches every module.
SUBSET_EXTRA = {
    "registry: a second fallback for a key is accepted",
    "custom_ops: written arguments' versions are not bumped",
    "autograd: the number of gradients is not checked",
    "compat: Undefined (CatchAll) is a key of its own",
    "library: a closed library registers",
    "library: register_vmap does not check the schema",
    "ops: a removed operator stays an attribute",
    "publish: a handle has no owner",
}


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # "killed", "SURVIVED", "equivalent"
    summary: str = ""
    seconds: float = 0.0


@dataclass
class Row:
    mutants: int = 0
    killed: int = 0
    equivalent: int = 0
    survived: list[str] = field(default_factory=list)
    seconds: float = 0.0


def export_head(destination: pathlib.Path) -> None:
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(destination)], input=archive, check=True)


def check_anchors(mutants: list[Mutant], checkout: pathlib.Path) -> list[str]:
    """Each mutant's text must occur exactly once in its file: the problems, if not."""
    problems = []
    for mutant in mutants:
        path = checkout / "dispatcher" / mutant.path
        count = path.read_text().count(mutant.old) if path.exists() else 0
        if count != 1:
            problems.append(f"{mutant.name!r}: its text occurs {count} times in dispatcher/{mutant.path}; "
                            "re-anchor it on the code as it is now (or delete it if the behaviour is gone)")
        for test in mutant.tests:
            if not (checkout / test.partition("::")[0]).exists():
                problems.append(f"{mutant.name!r}: its test {test} does not exist")
    return problems


def pytest_env(checkout: pathlib.Path) -> dict[str, str]:
    env = dict(os.environ, DISPATCHER_NO_EXTENSIONS="1", PYTHONPATH=str(checkout), PYTHONHASHSEED="0")
    env.pop("DISPATCHER_REQUIRE_EXTENSION", None)
    return env


def run_pytest(checkout: pathlib.Path, tests: tuple[str, ...], stop_first: bool) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(["-x"] if stop_first else []),
               *tests]
    return subprocess.run(command, cwd=checkout, capture_output=True, text=True, env=pytest_env(checkout))


def last_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else done.stderr.strip()[-300:]


def run_mutant(mutant: Mutant, checkout: pathlib.Path) -> Outcome:
    if mutant.equivalent is not None:
        return Outcome(mutant, "equivalent", mutant.equivalent)
    path = checkout / "dispatcher" / mutant.path
    text = path.read_text()
    mutated = text.replace(mutant.old, mutant.new)
    try:
        compile(mutated, str(path), "exec")
    except SyntaxError as exc:  # a kill by SyntaxError would say nothing of the tests
        raise SystemExit(f"mutant {mutant.name!r} is not valid Python ({exc}); fix its text") from None
    path.write_text(mutated)
    start = time.monotonic()
    try:
        done = run_pytest(checkout, mutant.tests, stop_first=True)
    finally:
        path.write_text(text)
    seconds = time.monotonic() - start
    # 1: tests failed; 2: interrupted (an error at collection, such as a
    # mutant that breaks an import, is a kill too); 5: no tests ran (an error).
    if done.returncode == 5:
        raise SystemExit(f"mutant {mutant.name!r}: no tests ran ({' '.join(mutant.tests)})")
    status = "killed" if done.returncode != 0 else "SURVIVED"
    return Outcome(mutant, status, last_line(done), seconds)


def module_of(mutant: Mutant) -> str:
    return mutant.path


def table(outcomes: list[Outcome], seconds: float) -> tuple[str, bool]:
    """The table per module and overall, and whether every rate is high enough."""
    rows: dict[str, Row] = {}
    for outcome in outcomes:
        row = rows.setdefault(module_of(outcome.mutant), Row())
        row.mutants += 1
        row.seconds += outcome.seconds
        if outcome.status == "killed":
            row.killed += 1
        elif outcome.status == "equivalent":
            row.equivalent += 1
        else:
            row.survived.append(outcome.mutant.name)
    total = Row()
    for row in rows.values():
        total.mutants += row.mutants
        total.killed += row.killed
        total.equivalent += row.equivalent
        total.survived += row.survived
        total.seconds += row.seconds

    def rate(row: Row) -> float:
        counted = row.mutants - row.equivalent
        return row.killed / counted if counted else 1.0

    header = f"| {'module':<34} | mutants | killed | equivalent | survived | kill rate | time (s) |"
    lines = [header, "|" + "|".join("-" * (len(cell)) for cell in header.split("|")[1:-1]) + "|"]
    for name, row in sorted(rows.items()) + [("all", total)]:
        label = f"**{name}**" if name == "all" else f"dispatcher/{name}"
        lines.append(f"| {label:<34} | {row.mutants:>7} | {row.killed:>6} | {row.equivalent:>10} | "
                     f"{len(row.survived):>8} | {rate(row):>8.1%} | {row.seconds:>8.0f} |")
    equivalents = [o for o in outcomes if o.status == "equivalent"]
    if equivalents:
        lines.append("\nEquivalent mutants (not run):")
        lines += [f"- {o.mutant.name}: {o.mutant.equivalent}" for o in equivalents]
    if total.survived:
        lines.append("\nSurvivors:")
        lines += [f"- {name}" for name in total.survived]
    lines.append(f"\nRun time: {seconds:.0f} s (wall clock, with the baseline run and the export)")
    ok = not total.survived and all(rate(row) >= MIN_KILL_RATE for row in rows.values())
    return "\n".join(lines), ok


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="run only the mutants whose name contains one of these")
    parser.add_argument("--subset", action="store_true", help="the findings' mutants and a few more (CI)")
    parser.add_argument("--list", action="store_true", help="list the mutants and check their anchors; run nothing")
    args = parser.parse_args(argv)
    names = {m.name for m in MUTANTS}
    assert len(names) == len(MUTANTS), "two mutants have the same name"
    assert SUBSET_EXTRA <= names, SUBSET_EXTRA - names
    selected = [m for m in MUTANTS
                if (not args.subset or m.subset or m.name in SUBSET_EXTRA)
                and (not args.names or any(word in m.name for word in args.names))]
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        checkout = pathlib.Path(tmp)
        export_head(checkout)
        # Every mutant's anchor is checked, whichever run: a refactor that
        # moved the code fails here, loudly, before anything runs.
        problems = check_anchors(MUTANTS, checkout)
        if problems:
            print("mutants whose code is no longer found (the harness must follow the code):", *problems,
                  sep="\n  ", file=sys.stderr)
            return 2
        if args.list:
            for m in selected:
                mark = "equivalent" if m.equivalent else ("subset" if m.subset or m.name in SUBSET_EXTRA else "")
                print(f"{m.name} [{m.path}] {mark}\n    {' '.join(m.tests)}")
            print(f"{len(selected)} mutants, anchors checked")
            return 0
        tests = tuple(dict.fromkeys(t for m in selected if m.equivalent is None for t in m.tests))
        baseline = run_pytest(checkout, tests, stop_first=False)
        if baseline.returncode != 0:
            print(f"the unchanged code fails its tests, so no mutant can be judged:\n{baseline.stdout[-3000:]}",
                  file=sys.stderr)
            return 2
        print(f"baseline: {last_line(baseline)}", flush=True)
        outcomes = []
        for mutant in selected:
            outcome = run_mutant(mutant, checkout)
            outcomes.append(outcome)
            finding = f" (finding {mutant.finding})" if mutant.finding else ""
            print(f"{outcome.status:<10} {mutant.name}{finding}: {outcome.summary} [{outcome.seconds:.1f} s]",
                  flush=True)
    report, ok = table(outcomes, time.monotonic() - start)
    print()
    print(report)
    if not ok:
        print(f"\nFAILED: survivors, or a module's kill rate below {MIN_KILL_RATE:.0%}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
