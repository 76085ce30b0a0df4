// Oracle for tests/golden/generate_keys_golden.py: exposes the c10 DispatchKey /
// DispatchKeySet C++ API that torch's Python bindings do not reach.
// Compiled with torch.utils.cpp_extension.load against the installed torch
// headers, with -DNDEBUG so that the inline header functions behave exactly as
// in the release build of libc10 (TORCH_INTERNAL_ASSERT_DEBUG_ONLY is off).
//
// Boundary convention: keys are passed as integers (DispatchKey values),
// backends as integers (BackendComponent values), keysets as raw uint64 reprs.

#include <torch/extension.h>
#include <torch/library.h>

#include <c10/core/DispatchKey.h>
#include <c10/core/DispatchKeySet.h>

#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;
using c10::BackendComponent;
using c10::DispatchKey;
using c10::DispatchKeySet;

namespace {

DispatchKey K(int v) { return static_cast<DispatchKey>(static_cast<uint16_t>(v)); }
BackendComponent B(int v) { return static_cast<BackendComponent>(static_cast<uint8_t>(v)); }
DispatchKeySet S(uint64_t raw) { return DispatchKeySet(DispatchKeySet::RAW, raw); }
int I(DispatchKey k) { return static_cast<int>(k); }
int I(BackendComponent b) { return static_cast<int>(b); }

py::dict enum_constants() {
  py::dict d;
#define E(name) d[#name] = I(DispatchKey::name);
  E(Undefined) E(CatchAll) E(Dense) E(EndOfFunctionalityKeys)
  E(StartOfDenseBackends) E(EndOfDenseBackends)
  E(StartOfQuantizedBackends) E(EndOfQuantizedBackends)
  E(StartOfSparseBackends) E(EndOfSparseBackends)
  E(StartOfSparseCsrBackends) E(EndOfSparseCsrBackends)
  E(StartOfNestedTensorBackends) E(EndOfNestedTensorBackends)
  E(StartOfAutogradFunctionalityBackends) E(EndOfAutogradFunctionalityBackends)
  E(EndOfRuntimeBackendKeys) E(StartOfAliasKeys) E(EndOfAliasKeys)
  E(CPUTensorId) E(CUDATensorId) E(DefaultBackend)
  E(PrivateUse1_PreAutograd) E(PrivateUse2_PreAutograd) E(PrivateUse3_PreAutograd)
  E(Autocast)
#undef E
  d["BackendComponent::InvalidBit"] = I(BackendComponent::InvalidBit);
  d["BackendComponent::EndOfBackendKeys"] = I(BackendComponent::EndOfBackendKeys);
  d["BackendComponent::MetaBit"] = I(BackendComponent::MetaBit);
  return d;
}

py::dict numeric_constants() {
  py::dict d;
  d["num_backends"] = static_cast<int>(c10::num_backends);
  d["num_functionality_keys"] = static_cast<int>(c10::num_functionality_keys);
  d["num_runtime_entries"] = static_cast<int>(c10::num_runtime_entries);
  d["full_backend_mask"] = static_cast<int>(c10::full_backend_mask);
  d["numPerBackendFunctionalityKeys"] =
      static_cast<int>(c10::numPerBackendFunctionalityKeys());
  return d;
}

py::dict named_keysets() {
  py::dict d;
#define C(name) d[#name] = c10::name.raw_repr();
  C(autograd_dispatch_keyset) C(autocast_dispatch_keyset)
  C(default_included_set) C(default_excluded_set)
  C(autograd_dispatch_keyset_with_ADInplaceOrView)
  C(python_ks) C(sparse_ks) C(sparse_csr_ks) C(mkldnn_ks)
  C(autogradother_backends) C(after_autograd_keyset)
  C(after_ADInplaceOrView_keyset) C(after_func_keyset)
  C(backend_bitset_mask) C(inplace_or_view_ks)
  C(autograd_cpu_ks) C(autograd_ipu_ks) C(autograd_mtia_ks) C(autograd_maia_ks)
  C(autograd_xpu_ks) C(autograd_cuda_ks) C(autograd_xla_ks) C(autograd_lazy_ks)
  C(autograd_meta_ks) C(autograd_mps_ks) C(autograd_hpu_ks)
  C(autograd_privateuse1_ks) C(autograd_privateuse2_ks) C(autograd_privateuse3_ks)
  C(autograd_other_ks) C(autograd_nested)
  C(functorch_transforms_ks) C(functorch_batched_ks)
  C(backend_functionality_keys)
#undef C
  // Constants that live only in DispatchKeySet.cpp (not exported), reached
  // through the exported function that returns them.
  d["backend_dispatch_keyset"] =
      c10::getRuntimeDispatchKeySet(DispatchKey::CompositeExplicitAutograd).raw_repr();
  d["math_dispatch_keyset"] =
      c10::getRuntimeDispatchKeySet(DispatchKey::CompositeImplicitAutograd).raw_repr();
  d["nested_dispatch_keyset"] =
      c10::getRuntimeDispatchKeySet(DispatchKey::CompositeImplicitAutogradNestedTensor).raw_repr();
  d["non_functional_backend_dispatch_keyset"] =
      c10::getRuntimeDispatchKeySet(DispatchKey::CompositeExplicitAutogradNonFunctional).raw_repr();
  d["functorch_batched_dispatch_keyset"] =
      c10::getRuntimeDispatchKeySet(DispatchKey::FuncTorchBatchedDecomposition).raw_repr();
  d["autograd_runtime_keyset"] =
      c10::getRuntimeDispatchKeySet(DispatchKey::Autograd).raw_repr();
  d["full"] = DispatchKeySet(DispatchKeySet::FULL).raw_repr();
  return d;
}

// Everything about a single DispatchKey value.
py::dict key_info(int v) {
  DispatchKey k = K(v);
  py::dict d;
  d["value"] = v;
  d["name"] = std::string(c10::toString(k));
  d["is_alias"] = c10::isAliasDispatchKey(k);
  d["is_per_backend_functionality_key"] = c10::isPerBackendFunctionalityKey(k);
  d["to_functionality_key"] = I(c10::toFunctionalityKey(k));
  d["to_backend_component"] = I(c10::toBackendComponent(k));
  DispatchKeySet s(k);
  d["single_set"] = s.raw_repr();
  d["backend_key_set_from_autograd"] =
      c10::getBackendKeySetFromAutograd(k).raw_repr();
  d["is_backend_dispatch_key"] = c10::isBackendDispatchKey(k);
  if (!c10::isAliasDispatchKey(k)) {
    d["table_index"] = c10::getDispatchTableIndexForDispatchKey(k);
  }
  return d;
}

py::list iter_keys(uint64_t raw) {
  py::list out;
  DispatchKeySet s = S(raw);
  for (DispatchKey k : s) out.append(I(k));
  return out;
}

// Everything about a keyset given by its raw repr (bits 0..61 only: bits 62/63
// lie outside the functionality range and make the C++ code misbehave).
py::dict set_info(uint64_t raw) {
  DispatchKeySet s = S(raw);
  py::dict d;
  d["raw"] = raw;
  d["repr"] = c10::toString(s);
  py::list it = iter_keys(raw);
  d["iter"] = it;
  d["len"] = py::len(it);
  d["highest_priority_key"] = I(s.highestPriorityTypeId());
  d["highest_functionality_key"] = I(s.highestFunctionalityKey());
  d["highest_backend"] = I(s.highestBackendKey());
  d["table_index"] = s.getDispatchTableIndexForDispatchKeySet();
  d["backend_index"] = s.getBackendIndex();
  d["empty"] = s.empty();
  return d;
}

py::list binop(uint64_t a, uint64_t b) {
  DispatchKeySet x = S(a), y = S(b);
  py::list l;
  l.append((x | y).raw_repr());
  l.append((x & y).raw_repr());
  l.append((x - y).raw_repr());
  l.append((x ^ y).raw_repr());
  l.append(x.has_all(y));
  l.append(x.has_any(y));
  l.append(x.isSupersetOf(y));
  l.append(x == y);
  return l;
}

py::list key_op(uint64_t a, int k) {
  DispatchKeySet x = S(a);
  py::list l;
  l.append(x.add(K(k)).raw_repr());
  l.append(x.remove(K(k)).raw_repr());
  l.append(x.has(K(k)));
  return l;
}

py::list backend_op(uint64_t a, int b) {
  DispatchKeySet x = S(a);
  py::list l;
  l.append(x.remove_backend(B(b)).raw_repr());
  l.append(x.has_backend(B(b)));
  l.append(x.add(DispatchKeySet(B(b))).raw_repr());
  return l;
}

py::dict backend_info(int b) {
  BackendComponent bc = B(b);
  py::dict d;
  d["value"] = b;
  d["name"] = std::string(c10::toString(bc));
  d["single_set"] = DispatchKeySet(bc).raw_repr();
  try {
    d["autograd_key_from_backend"] = I(c10::getAutogradKeyFromBackend(bc));
  } catch (const std::exception& e) {
    d["autograd_key_from_backend"] = py::none();
    d["autograd_key_from_backend_error"] = std::string(e.what());
  }
  d["autograd_related_key_set_from_backend"] =
      c10::getAutogradRelatedKeySetFromBackend(bc).raw_repr();
  d["autocast_related_key_set_from_backend"] =
      c10::getAutocastRelatedKeySetFromBackend(bc).raw_repr();
  return d;
}

uint64_t full() { return DispatchKeySet(DispatchKeySet::FULL).raw_repr(); }
uint64_t full_after(int k) {
  return DispatchKeySet(DispatchKeySet::FULL_AFTER, K(k)).raw_repr();
}
uint64_t runtime_key_set(int alias) {
  return c10::getRuntimeDispatchKeySet(K(alias)).raw_repr();
}
bool is_included_in_alias(int k, int alias) {
  return c10::isIncludedInAlias(K(k), K(alias));
}
bool runtime_key_set_has(int alias, int k) {
  return c10::runtimeDispatchKeySetHas(K(alias), K(k));
}
int to_runtime_per_backend_key(int functionality, int backend) {
  return I(c10::toRuntimePerBackendFunctionalityKey(K(functionality), B(backend)));
}
py::object parse_cpp(const std::string& s) {
  try {
    return py::int_(I(c10::parseDispatchKey(s)));
  } catch (const c10::Error& e) {
    return py::str(e.what_without_backtrace());
  }
}
py::list offsets_and_masks() {
  py::list l;
  for (const auto& om : c10::offsetsAndMasks()) {
    l.append(py::make_tuple(static_cast<int>(om.offset), static_cast<int>(om.mask)));
  }
  return l;
}

// Registration of a kernel on EVERY runtime key (including those whose names
// torch's string parser rejects), for the empirical dump-table check.
void noop_kernel(const c10::OperatorHandle&, torch::jit::Stack*) {}
std::vector<std::unique_ptr<torch::Library>> g_libs;

void register_all_runtime_keys(const std::string& ns, const std::string& op,
                               const std::vector<int>& keys) {
  auto lib = std::make_unique<torch::Library>(
      torch::Library::FRAGMENT, ns, std::nullopt, __FILE__, __LINE__);
  for (int v : keys) {
    DispatchKey k = K(v);
    auto f = torch::CppFunction::makeFromBoxedFunction<&noop_kernel>().debug(
        std::string("dbg_") + c10::toString(k));
    lib->impl(op.c_str(), torch::dispatch(k, std::move(f)));
  }
  g_libs.push_back(std::move(lib));
}
void clear_libraries() { g_libs.clear(); }

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("enum_constants", &enum_constants);
  m.def("numeric_constants", &numeric_constants);
  m.def("named_keysets", &named_keysets);
  m.def("key_info", &key_info);
  m.def("key_name", [](int v) { return std::string(c10::toString(K(v))); });
  m.def("backend_name", [](int b) { return std::string(c10::toString(B(b))); });
  m.def("iter_keys", &iter_keys);
  m.def("set_info", &set_info);
  m.def("set_repr", [](uint64_t raw) { return c10::toString(S(raw)); });
  m.def("highest_priority_key", [](uint64_t raw) { return I(S(raw).highestPriorityTypeId()); });
  m.def("highest_functionality_key", [](uint64_t raw) { return I(S(raw).highestFunctionalityKey()); });
  m.def("highest_backend", [](uint64_t raw) { return I(S(raw).highestBackendKey()); });
  m.def("binop", &binop);
  m.def("key_op", &key_op);
  m.def("backend_op", &backend_op);
  m.def("backend_info", &backend_info);
  m.def("full", &full);
  m.def("full_after", &full_after);
  m.def("runtime_key_set", &runtime_key_set);
  m.def("is_included_in_alias", &is_included_in_alias);
  m.def("runtime_key_set_has", &runtime_key_set_has);
  m.def("to_runtime_per_backend_key", &to_runtime_per_backend_key);
  m.def("parse_cpp", &parse_cpp);
  m.def("offsets_and_masks", &offsets_and_masks);
  m.def("register_all_runtime_keys", &register_all_runtime_keys);
  m.def("clear_libraries", &clear_libraries);
}
