"""The tests of PyTorch's test/test_python_dispatch.py and test/test_custom_ops.py
that tests/test_torch_test_files.py does not expect to pass, each with why.

A reason is either a feature of torch this package does not have and is not
meant to (CUDA, torch.compile, FakeTensorMode, C++ extensions, make_fx,
TorchScript, torch's OpInfo database and internals, register_functional_op,
which torch 2.13 no longer has): such a test fails with NotImplementedError naming that feature
(tests/torch_test_modules.py), which the test checks; or ``gap(...)``: what
this package, its prototype or the shim does not have yet (the error the test
stops on), run as a strict xfail so that a gap that closes is noticed; or
LATER_TORCH: the copy expects a later torch's answer, and the test fails on
torch 2.13 too (tools/run_torch_test_copy.py), so it must fail here.

Made from a run of the copies in tests/upstream (2.4-era copies, from
MetaX-MACA/mcPytorch's test/ directory); another copy gives other names and
the check of this list says which.
"""
from __future__ import annotations

from .torch_test_modules import (
    COMPILE, CPP, CUDA, CUSTOM_OP_API, FAKE, INTERNALS, LATER_TORCH, LOGGING_TENSOR, MAKE_FX, OP_DB, TWO_TENSOR,
)

TORCHSCRIPT = "TorchScript"
GAP = "gap: "

# The features out of this package's scope: a test needing one fails naming it.
OUT_OF_SCOPE = frozenset({CUDA, COMPILE, FAKE, CPP, MAKE_FX, OP_DB, CUSTOM_OP_API, INTERNALS, TORCHSCRIPT, LATER_TORCH})
# torch's test helpers the shim does not have: ported, their tests could run.
NOT_PORTED = frozenset({LOGGING_TENSOR, TWO_TENSOR})


def gap(what: str) -> str:
    return GAP + what


LEFT_OUT: dict[str, dict[str, str]] = {
    'test_python_dispatch.py': {
        'TestPythonRegistration.test_alias_analysis': TORCHSCRIPT,
        'TestPythonRegistration.test_override_aten_ops_with_multiple_libraries': gap("AssertionError: RuntimeError not raised (so does torch 2.13)"),
        'TestPythonRegistration.test_override_cuda_with_jiterator': CUDA,
        'TestPythonRegistration.test_register_fallthrough': gap("AttributeError: module 'torch' has no attribute 'bfloat16' (nor is aten::bfloat..."),
        'TestPythonRegistration.test_register_functional_op_error_cases': CUSTOM_OP_API,
        'TestPythonRegistration.test_register_functional_op_multiple_returns': CUSTOM_OP_API,
        'TestPythonRegistration.test_register_functional_op_no_returns': CUSTOM_OP_API,
        'TestPythonRegistration.test_register_functional_op_one_return': CUSTOM_OP_API,
        'TestPythonRegistration.test_register_functional_op_with_optional': CUSTOM_OP_API,
        'TestPythonRegistration.test_returning_symint': FAKE,
        'TestPythonDispatch.test_custom_size_policy_dynamic_shapes': MAKE_FX,
        'TestPythonDispatch.test_detach_appears_twice_when_called_once': LATER_TORCH,
        'TestPythonDispatch.test_list_ret': gap("NotImplementedError: Could not run 'aten::split.Tensor' with arguments from the 'CPU' backend..."),
        'TestPythonDispatch.test_make_fx_with_subclass': MAKE_FX,
        'TestPythonDispatch.test_maybe_tuple_bug': gap('dispatcher.errors.DispatcherTypeError: no overload of aten::rand accepts these arguments:'),
        'TestPythonDispatch.test_none_wrapping': gap("AttributeError: 'SubclassWithNone' object has no attribute 'acos'"),
        'TestPythonDispatch.test_produce_real_type': gap("NotImplementedError: Could not run 'aten::cumprod' with arguments from the 'CPU' back..."),
        'TestPythonDispatch.test_subclass_autograd_device_check': LATER_TORCH,
        'TestPythonDispatch.test_sym_sizes_strides_slow_path': FAKE,
        'TestPythonDispatch.test_wrapper_subclass_multiprocessing_preserves_dtype': gap(TWO_TENSOR),
        'TestPythonDispatch.test_wrapper_subclass_serializes': gap(LOGGING_TENSOR),
        'TestWrapperSubclassAliasingCPU.test_wrapper_subclass_aliasing_conv2d_cpu': gap("AttributeError: module 'torch' has no attribute 'infere..."),
        'TestWrapperSubclassAliasingCPU.test_wrapper_subclass_aliasing_cpu': OP_DB,
        'TestWrapperSubclassAliasingCPU.test_wrapper_subclass_aliasing_custom_cpu': OP_DB,
        'TestWrapperSubclassAliasingCPU.test_wrapper_subclass_aliasing_out_op_cpu': gap(TWO_TENSOR),
    },
    'test_custom_ops.py': {
        'TestCustomOp.test_abstract_impl_on_existing_op': FAKE,
        'TestCustomOp.test_abstract_impl_on_existing_op_with_CompositeExplicitAutograd': FAKE,
        'TestCustomOp.test_abstract_impl_on_existing_op_with_meta': gap('RuntimeError not raised; torch 2.13 fails it too (impl_abstract overrides)'),
        'TestCustomOp.test_autograd_function_backed_op': CPP,
        'TestCustomOp.test_basic_make_fx': MAKE_FX,
        'TestCustomOp.test_data_dependent_basic': MAKE_FX,
        'TestCustomOp.test_data_dependent_compile': COMPILE,
        'TestCustomOp.test_data_dependent_fake_tracing': MAKE_FX,
        'TestCustomOp.test_duplicate_impl': gap('AssertionError: RuntimeError not raised (so on torch 2.13: impl_abstract overrides)'),
        'TestCustomOp.test_functionalize_error': COMPILE,
        'TestCustomOp.test_impl_device_cuda': CUDA,
        'TestCustomOp.test_impl_multiple': CUDA,
        'TestCustomOp.test_impl_separate': CUDA,
        'TestCustomOp.test_infer_schema_supported': gap("TypeError: infer_schema() missing ... argument: 'mutates_args' (so on torch 2.13)"),
        'TestCustomOp.test_infer_schema_unsupported': gap("TypeError: infer_schema() missing ... argument: 'mutates_args' (so on torch 2.13)"),
        'TestCustomOp.test_is_functional_schema': INTERNALS,
        'TestCustomOp.test_meta_for_data_dependent_shape_operation': OP_DB,
        'TestCustomOp.test_new_data_dependent_symint': MAKE_FX,
        'TestCustomOp.test_not_implemented_error': gap('AssertionError: "no fake impl or Meta kernel" does not match (no Meta backend fallback)'),
        'TestCustomOp.test_sequences': gap('AssertionError: <MySequence object> != [1, 2, 3] (a kernel gets a Sequence as passed)'),
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
        'TestCustomOpTestingCPU.test_global_state_mutation_cpu': gap('"vs AOTAutograd" does not match torch 2.13\'s text (AOTDispatcher), nor ours'),
        'TestCustomOpTestingCPU.test_opcheck_opinfo_cpu': OP_DB,
    },
}
