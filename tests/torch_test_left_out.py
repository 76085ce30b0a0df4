"""The tests of PyTorch's test/test_python_dispatch.py and test/test_custom_ops.py
that tests/test_torch_test_files.py does not expect to pass, each with why.

A reason is either a feature of torch this package does not have and is not
meant to (CUDA, torch.compile, FakeTensorMode, C++ extensions, make_fx,
TorchScript, torch's OpInfo database and internals, register_functional_op,
which torch 2.13 no longer has): such a test fails with NotImplementedError naming that feature
(tests/torch_test_modules.py), which the test checks; or ``gap(...)``: what
this package, its prototype or the shim does not have yet (the error the test
stops on), run as a strict xfail so that a gap that closes is noticed; or
FAILS_ON_TORCH_2_13: the copy expects another torch's answer (a later one's,
or for a 2.4-era copy an earlier one's), and the test fails on torch 2.13 too
(tools/run_torch_test_copy.py runs a copy under torch), so it must fail here.

The reference copies are recent ones (2.15-era, from the fork cyyever/pytorch,
which tracks PyTorch's main branch): ``test/test_python_dispatch.py`` at commit
1ea1ebe7421f1d6c4871a1dd5d20933ce68fd41e, ``test/test_custom_ops.py`` at
6777a5b30cfceb22ba9d87b2a4c7c95d2cdfe842 (and ``test/test_dispatch.py`` at
1669dd43a48f7baac5508b6793a3229c3762349c, for tests/test_torch_test_dispatch.py).
Get them with ``git show <commit>:test/<file>`` from a clone of that fork (or
of pytorch/pytorch at a like commit) into a directory outside the repository,
and run with ``DISPATCHER_UPSTREAM=<that directory>``.

The list was made from a run of 2.4-era copies (MetaX-MACA/mcPytorch's test/
directory), then extended from a run of the reference copies (the entries
after the "recent copies" comment in each file's part).  Names of tests that
only the 2.4-era copies have are left for now: the check of this list
tolerates names absent from the copy in use.  (Running the
recent test_custom_ops.py under torch 2.13 takes expecttest and PyYAML on
PYTHONPATH, and an empty minioptest_failures_dict.json beside it.)
"""
from __future__ import annotations

from .torch_test_modules import (
    COMPILE, CPP, CUDA, CUSTOM_OP_API, FAKE, INTERNALS, LOGGING_TENSOR, MAKE_FX, OP_DB, TWO_TENSOR,
)

TORCHSCRIPT = "TorchScript"
GAP = "gap: "
# A test of a behaviour torch has changed since or before 2.13: it fails on
# torch 2.13 too (run with torch 2.13 and the same copy), so this package,
# which behaves as torch 2.13, fails it as well.
FAILS_ON_TORCH_2_13 = "another torch than 2.13 (the test fails on torch 2.13 as well)"
# A test the copy skips on Linux (for a known bug of torch's, its issue in the
# skip's message), on torch 2.13 as here: it runs nowhere here.  Checked: it
# skips itself.
SKIPS_ITSELF_ON_LINUX = "the copy's own skip on Linux (a known bug of torch's; torch 2.13 skips it too)"

# The features out of this package's scope: a test needing one fails naming it.
OUT_OF_SCOPE = frozenset({CUDA, COMPILE, FAKE, CPP, MAKE_FX, OP_DB, CUSTOM_OP_API, INTERNALS, TORCHSCRIPT})
# torch's test helpers the shim does not have: ported, their tests could run.
NOT_PORTED = frozenset({LOGGING_TENSOR, TWO_TENSOR})


def gap(what: str) -> str:
    return GAP + what


LEFT_OUT: dict[str, dict[str, str]] = {
    'test_python_dispatch.py': {
        'TestPythonRegistration.test_alias_analysis': TORCHSCRIPT,
        # 'TestPythonRegistration.test_override_aten_ops_with_multiple_libraries' fails on torch 2.13 as here in
        # the 2.4-era copy (RuntimeError not raised), passes in the recent one: the recent copy wins (not listed).
        # 'TestPythonDispatch.test_produce_real_type' (the 2.4-era log has slice.Tensor where torch 2.13 logs
        # select.int) and 'TestPythonDispatch.test_wrapper_subclass_serializes' (torch.load's weights_only
        # default, True since torch 2.6) fail on torch 2.13 as here in the 2.4-era copy, pass in the recent one
        # (tools/run_torch_test_copy.py): the recent copy wins (not listed).
        'TestPythonRegistration.test_override_cuda_with_jiterator': CUDA,
        'TestPythonRegistration.test_register_functional_op_error_cases': CUSTOM_OP_API,
        'TestPythonRegistration.test_register_functional_op_multiple_returns': CUSTOM_OP_API,
        'TestPythonRegistration.test_register_functional_op_no_returns': CUSTOM_OP_API,
        'TestPythonRegistration.test_register_functional_op_one_return': CUSTOM_OP_API,
        'TestPythonRegistration.test_register_functional_op_with_optional': CUSTOM_OP_API,
        'TestPythonRegistration.test_returning_symint': FAKE,
        'TestPythonDispatch.test_custom_size_policy_dynamic_shapes': MAKE_FX,
        'TestPythonDispatch.test_detach_appears_twice_when_called_once': FAILS_ON_TORCH_2_13,
        'TestPythonDispatch.test_make_fx_with_subclass': MAKE_FX,
        'TestPythonDispatch.test_subclass_autograd_device_check': FAILS_ON_TORCH_2_13,
        'TestPythonDispatch.test_sym_sizes_strides_slow_path': FAKE,
        'TestWrapperSubclassAliasingCPU.test_wrapper_subclass_aliasing_cpu': OP_DB,
        'TestWrapperSubclassAliasingCPU.test_wrapper_subclass_aliasing_custom_cpu': OP_DB,
        # Tests of the recent (2.15-era) copies that fail: tests only they have, or that they changed.
        'TestPythonRegistration.test_clear_torch_ops_cache_tolerates_malformed_qualname': FAILS_ON_TORCH_2_13,
        'TestPythonRegistration.test_define_normalizes_namespaced_schema_name': FAILS_ON_TORCH_2_13,
        'TestPythonRegistration.test_register_check_mem_op_survives_gc': COMPILE,
        'TestPythonDispatch.test_custom_dispatch_mode_not_supports_higher_order_operators': COMPILE,
        'TestPythonDispatch.test_custom_dispatch_mode_supports_higher_order_operators': COMPILE,
        'TestPythonDispatch.test_mode_returning_too_many_values': FAILS_ON_TORCH_2_13,
    },
    'test_custom_ops.py': {
        'TestCustomOp.test_abstract_impl_on_existing_op': FAKE,
        'TestCustomOp.test_abstract_impl_on_existing_op_with_CompositeExplicitAutograd': FAKE,
        # 'TestCustomOp.test_abstract_impl_on_existing_op_with_meta' and 'TestCustomOp.test_duplicate_impl' fail
        # on torch 2.13 as here in the 2.4-era copy (impl_abstract overrides; RuntimeError not raised), pass in
        # the recent one: the recent copy wins (not listed).
        # 'TestCustomOp.test_infer_schema_supported', 'TestCustomOp.test_infer_schema_unsupported' (infer_schema
        # without mutates_args) and 'TestCustomOpTestingCPU.test_global_state_mutation_cpu' (opcheck's older
        # "AOTAutograd" text) fail on torch 2.13 as here in the 2.4-era copy, pass in the recent one: the recent
        # copy wins (not listed).
        'TestCustomOp.test_autograd_function_backed_op': CPP,
        'TestCustomOp.test_basic_make_fx': MAKE_FX,
        'TestCustomOp.test_data_dependent_basic': MAKE_FX,
        'TestCustomOp.test_data_dependent_compile': COMPILE,
        'TestCustomOp.test_data_dependent_fake_tracing': MAKE_FX,
        'TestCustomOp.test_functionalize_error': COMPILE,
        'TestCustomOp.test_impl_device_cuda': CUDA,
        'TestCustomOp.test_impl_multiple': CUDA,
        'TestCustomOp.test_impl_separate': CUDA,
        'TestCustomOp.test_is_functional_schema': INTERNALS,
        'TestCustomOp.test_meta_for_data_dependent_shape_operation': OP_DB,
        'TestCustomOp.test_new_data_dependent_symint': MAKE_FX,
        'TestCustomOp.test_symints': MAKE_FX,
        'MiniOpTest.test_mm_fake': FAKE,
        'TestCustomOpAPI.test_compile': COMPILE,
        'TestCustomOpAPI.test_fake': FAKE,
        'TestCustomOpAPI.test_library_register_fake': FAKE,
        'TestCustomOpAPI.test_multi_types': CUDA,
        'TestCustomOpAPI.test_split_device': CUDA,
        'TestCustomOpAPI.test_supports_tensorlist': INTERNALS,
        'TestGenerateOpcheckTests.test_MiniOpTest': COMPILE,
        'TestGenerateOpcheckTests.test_failures_dict_validation': COMPILE,
        'TestGenerateOpcheckTests.test_generate_repro_no_save_data': COMPILE,
        'TestGenerateOpcheckTests.test_generate_repro_save_data': COMPILE,
        'TestGenerateOpcheckTests.test_is_inside_opcheck_mode': COMPILE,
        'TestGenerateOpcheckTests.test_opcheck': COMPILE,
        'TestGenerateOpcheckTests.test_opcheck_bad_op': COMPILE,
        'TestGenerateOpcheckTests.test_opcheck_customopdef': CUDA,
        'TestCustomOpTestingCPU.test_aot_autograd_check_degenerate_cases_check_gradients_False_dynamic_False_cpu': COMPILE,
        'TestCustomOpTestingCPU.test_aot_autograd_check_degenerate_cases_check_gradients_False_dynamic_True_cpu': COMPILE,
        'TestCustomOpTestingCPU.test_aot_autograd_check_degenerate_cases_check_gradients_auto_dynamic_False_cpu': COMPILE,
        'TestCustomOpTestingCPU.test_aot_autograd_check_degenerate_cases_check_gradients_auto_dynamic_True_cpu': COMPILE,
        'TestCustomOpTestingCPU.test_assert_raises_regex_cpu': COMPILE,
        'TestCustomOpTestingCPU.test_autograd_registration_check_autograd_kernel_cpu': COMPILE,
        'TestCustomOpTestingCPU.test_autograd_registration_check_compositeimplicitautograd_cpu': COMPILE,
        'TestCustomOpTestingCPU.test_autograd_registration_check_incorrect_composite_cpu': COMPILE,
        'TestCustomOpTestingCPU.test_autograd_registration_check_incorrect_cpu': COMPILE,
        'TestCustomOpTestingCPU.test_opcheck_opinfo_cpu': OP_DB,
        # Tests of the recent (2.15-era) copies that fail: tests only they have, or that they changed.
        'TestCustomOp.test_dispatch_call_boxed_warning_propagation': CPP,
        'TestCustomOp.test_library_impl_does_not_enable_pyobject_dispatch_by_default': FAILS_ON_TORCH_2_13,
        'TestCustomOp.test_load_library': CPP,
        'TestCustomOp.test_override_cea': FAKE,
        'TestCustomOp.test_override_fake': FAKE,
        'TestCustomOp.test_pyobject_dispatch_cpp_fallback_consumes_torch_function_skip': CPP,
        'TestCustomOp.test_pyobject_dispatch_custom_op_autograd': FAILS_ON_TORCH_2_13,
        'TestCustomOp.test_pyobject_dispatch_custom_op_enabled_by_default': FAILS_ON_TORCH_2_13,
        'TestCustomOp.test_pyobject_dispatch_falls_back_to_cpp_dispatcher': CPP,
        'TestCustomOp.test_pyobject_dispatch_normalizes_tensor_list_input': FAILS_ON_TORCH_2_13,
        'TestCustomOp.test_pyobject_dispatch_normalizes_tensor_list_output': FAILS_ON_TORCH_2_13,
        'TestCustomOp.test_pyobject_dispatch_normalizes_tensor_list_output_for_module': FAILS_ON_TORCH_2_13,
        'TestCustomOp.test_pyobject_dispatch_passes_keyset_to_python_kernel': FAILS_ON_TORCH_2_13,
        'TestCustomOp.test_pyobject_dispatch_respects_torch_function_mode': FAILS_ON_TORCH_2_13,
        'TestCustomOp.test_pyobject_redispatch_requires_keyset': FAILS_ON_TORCH_2_13,
        'TestCustomOp.test_torch_ops_out_of_range_raises_index_error': CPP,
        'TestCustomOp.test_torch_ops_warning_propagation': CPP,
        'TestCustomOpAPI.test_custom_op_inplace_tag': FAKE,
        'TestCustomOpAPI.test_custom_op_inplace_tag_compile_eager': COMPILE,
        'TestCustomOpAPI.test_custom_op_inplace_tag_compile_eager_fullgraph': COMPILE,
        'TestCustomOpAPI.test_custom_op_inplace_tag_compile_inductor_fullgraph': COMPILE,
        'TestCustomOpAPI.test_custom_op_inplace_tag_manual_schema': FAKE,
        'TestCustomOpAPI.test_custom_op_inplace_tag_register_fake_warns': FAKE,
        'TestCustomOpAPI.test_custom_op_out_tag': FAKE,
        'TestCustomOpAPI.test_custom_op_out_tag_compile_eager': COMPILE,
        'TestCustomOpAPI.test_custom_op_out_tag_compile_eager_fullgraph': COMPILE,
        'TestCustomOpAPI.test_custom_op_out_tag_compile_inductor_fullgraph': COMPILE,
        'TestCustomOpAPI.test_custom_op_out_tag_manual_schema': FAKE,
        'TestCustomOpAPI.test_custom_op_out_tag_multiple_returns': FAKE,
        'TestCustomOpAPI.test_custom_op_out_tag_register_fake_warns': FAKE,
        'TestCustomOpAPI.test_custom_op_register_fake_ordinary_op': FAKE,
        'TestCustomOpAPI.test_layout_constraint_tags': INTERNALS,
        'TestCustomOpAPI.test_library_register_autocast': CUDA,
        'TestCustomOpAPI.test_library_register_autocast_list_input': CUDA,
        'TestCustomOpAPI.test_library_register_autocast_low_level': CUDA,
        'TestCustomOpAPI.test_library_register_autocast_multiple_times': CUDA,
        'TestCustomOpAPI.test_library_register_autocast_multiple_times_different_devices': CUDA,
        'TestCustomOpAPI.test_register_autograd_defaulted_inputs_actual_gradients_triton_op': COMPILE,
        'TestCustomOpAPI.test_register_autograd_defaulted_inputs_full_gradients_triton_op': COMPILE,
        'TestCustomOpAPI.test_register_autograd_defaulted_inputs_non_none_gradient_custom_op': FAILS_ON_TORCH_2_13,
        'TestCustomOpAPI.test_register_autograd_defaulted_inputs_non_none_gradient_triton_op': COMPILE,
        'TestCustomOpAPI.test_register_autograd_defaulted_inputs_too_few_gradients_custom_op': FAILS_ON_TORCH_2_13,
        'TestCustomOpAPI.test_register_autograd_defaulted_inputs_too_few_gradients_triton_op': COMPILE,
        'TestCustomOpAPI.test_register_autograd_incorrect_num_gradients_custom_op': FAILS_ON_TORCH_2_13,
        'TestCustomOpAPI.test_register_autograd_incorrect_num_gradients_triton_op': COMPILE,
        'TestCustomOpAPI.test_register_autograd_tensorlist_defaulted_input': FAILS_ON_TORCH_2_13,
        'TestCustomOpAPI.test_register_autograd_tensorlist_return_defaulted_input': FAILS_ON_TORCH_2_13,
        'TestGenerateOpcheckTests.test_aot_autograd_copy_does_not_check_pinned_memory_for_wrapper_subclass': FAILS_ON_TORCH_2_13,
        'TestGenerateOpcheckTests.test_opcheck_preserves_pinned_memory_by_default': CUDA,
        'TestGenerateOpcheckTests.test_opcheck_preserves_pinned_memory_for_schema_check': CUDA,
        'TestGenerateOpcheckTests.test_safe_aot_autograd_check_checks_gradients_for_non_leaf_inputs': COMPILE,
        'TestGenerateOpcheckTests.test_safe_schema_check_copy_inputs_preserves_pinned_memory_and_copies': CUDA,
        'TestOpProfiles.test_duplicate_registration_custom_op': FAKE,
        'TestOpProfiles.test_duplicate_registration_impl': FAKE,
        'TestOpProfiles.test_fake_registration': FAKE,
        'TestOpProfiles.test_save_to_file': FAKE,
        'TestOpProfiles.test_version': FAKE,
        'TestOpProfiles.test_yaml': FAKE,
        'TestCustomOpTestingCPU.test_opcheck_unbacked_stride_cpu': FAKE,
        'TestCustomOpTestingCPU.test_missing_abstract_impl_cpu': SKIPS_ITSELF_ON_LINUX,
        'TestCustomOpTestingCPU.test_opcheck_fails_basic_cpu': SKIPS_ITSELF_ON_LINUX,
    },
}
