// The op layer: every operator's schema, argument checks, output allocation, device guard and
// stream. No kernel logic lives here: each op turns its arguments into a LayoutProblem, asks
// plan_layout_copy for a plan and hands the plan to one backend's kernels (csrc/kernels.h).
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/util/SmallVector.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/DispatchKey.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cpu/huge_pages.h"
#include "kernel_switches.h"
#include "fast_dispatch.h"
#include "include/torch_transpose/torch_transpose.h"
#include "kernels.h"
#include "message.h"
#include "plan/layout_plan.h"

#ifdef TORCH_TRANSPOSE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace torch_transpose {
namespace {

using at::IntArrayRef;
using at::Tensor;
// A permutation or a shape of one call: on the stack for the ranks tensors have (a heap
// allocation per list cost small calls measurable host time; plan/inline_vector.h says so).
using DimList = c10::SmallVector<int64_t, 8>;

// ---- argument normalisation -----------------------------------------------------------------

// `dims` as a permutation of self's dims, wrapped like PyTorch wraps them (IndexError when out
// of range, RuntimeError for a wrong length or a repeated dim).
DimList checked_permutation(const char* op, const Tensor& self, IntArrayRef dims) {
  const int64_t rank = self.dim();
  TORCH_CHECK(static_cast<int64_t>(dims.size()) == rank, message(op, ": dims must list every dim of self once: self.dim() = ",
              rank, " but len(dims) = ", dims.size()));
  DimList perm(dims.size());
  c10::SmallVector<bool, 8> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    perm[i] = at::maybe_wrap_dim(dims[i], rank);
    TORCH_CHECK(!seen[perm[i]], message(op, ": dims must not repeat a dim, but dim ", perm[i], " appears twice in ", dims));
    seen[perm[i]] = true;
  }
  return perm;
}

DimList transpose_permutation(const Tensor& self, int64_t dim0, int64_t dim1) {
  // Wrapping as PyTorch does (a 0-D tensor counts as 1-D) gives PyTorch's own IndexError for
  // x.transpose(-2, -1) on 0-D and 1-D inputs.
  const int64_t rank = self.dim();
  const int64_t d0 = at::maybe_wrap_dim(dim0, rank), d1 = at::maybe_wrap_dim(dim1, rank);
  DimList perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  if (rank > 0) std::swap(perm[d0], perm[d1]);
  return perm;
}

DimList permuted_sizes(const Tensor& self, IntArrayRef perm) {
  DimList sizes(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) sizes[i] = self.size(perm[i]);
  return sizes;
}

void check_strided(const char* op, const char* name, const Tensor& t) {
  TORCH_CHECK_NOT_IMPLEMENTED(t.layout() == at::kStrided && !t.is_quantized() && !t.is_nested(), message(op,
                              ": ", name, " must be a dense strided tensor, got layout ", t.layout(),
                              t.is_quantized() ? " (quantized)" : ""));
}

// Sufficient test for "no two elements share memory": with dims ordered by stride, each stride
// must step past everything the smaller dims can reach. Slices, steps and transposes of a
// buffer pass; stride-0 and other self-overlapping layouts do not.
bool provably_non_overlapping(const Tensor& t) {
  c10::SmallVector<std::pair<int64_t, int64_t>, 8> dims;  // (stride, size)
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) > 1) dims.emplace_back(t.stride(d), t.size(d));
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;  // largest offset the smaller dims reach
  for (const auto& [stride, size] : dims) {
    if (stride <= reach) return false;
    reach += stride * (size - 1);
  }
  return true;
}

// [first byte, last byte] touched by a tensor's view.
std::pair<uintptr_t, uintptr_t> byte_extent(const Tensor& t) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(t.const_data_ptr());
  int64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  return {first, first + static_cast<uintptr_t>((last + 1) * t.element_size()) - 1};
}

void check_out(const char* op, const Tensor& self, IntArrayRef expected_sizes, const Tensor& out) {
  check_strided(op, "out", out);
  TORCH_CHECK(out.sizes() == expected_sizes, message(op, ": expected out to have shape ", expected_sizes,
              " (the result's shape), but got ", out.sizes()));
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), message(op, ": expected out to have dtype ", self.scalar_type(),
              " (the dtype of self), but got ", out.scalar_type()));
  TORCH_CHECK(out.device() == self.device(), message(op, ": expected out on device ", self.device(),
              " (the device of self), but got ", out.device()));
  if (out.numel() == 0) return;
  TORCH_CHECK(provably_non_overlapping(out), message(op,
              ": out has internal overlap (a stride-0 or self-overlapping layout): several results would land on "
              "one memory location. Pass an out whose elements occupy distinct memory."));
  if (self.numel() > 0 && self.storage().is_alias_of(out.storage())) {
    const auto [in_first, in_last] = byte_extent(self);
    const auto [out_first, out_last] = byte_extent(out);
    TORCH_CHECK(in_last < out_first || out_last < in_first, message(op,
                ": out shares memory with self; writing it would change the input while it is read. "
                "Pass an out that does not overlap self."));
  }
}

// ---- running a plan ---------------------------------------------------------------------------

// A meta tensor has no address; planning assumes the allocator's alignment for its storage and
// keeps its offset into it.
uintptr_t address_of(const Tensor& t) {
  return t.is_meta() ? static_cast<uintptr_t>(t.storage_offset() * t.element_size())
                     : reinterpret_cast<uintptr_t>(t.const_data_ptr());
}

LayoutPlan plan_for(const Tensor& self, IntArrayRef perm, const Tensor& out) {
  LayoutProblem problem;
  problem.element_bytes = static_cast<int>(self.element_size());
  problem.sizes.reserve(perm.size());
  problem.in_strides.reserve(perm.size());
  problem.out_strides.reserve(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    problem.sizes.push_back(self.size(perm[i]));
    problem.in_strides.push_back(self.stride(perm[i]));
    problem.out_strides.push_back(out.stride(i));
  }
  problem.in_address = address_of(self);
  problem.out_address = address_of(out);
  try {
    return plan_layout_copy(problem);
  } catch (const std::exception& e) {
    TORCH_CHECK(false, std::string(e.what()));
  }
}

// Layouts seen while recording is on (tests only: the golden selection test replays every layout
// the test suite moves). One relaxed load per call while it is off.
std::atomic<bool> recording_layouts{false};
std::mutex recorded_mutex;
std::vector<RecordedLayout> recorded;

int64_t offset_bytes(const Tensor& t) {
  return t.is_meta() ? 0 : static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.const_data_ptr()) -
                                                reinterpret_cast<uintptr_t>(t.storage().data()));
}

void record_layout(const Tensor& self, IntArrayRef perm, const Tensor& out) {
  RecordedLayout layout;
  for (size_t i = 0; i < perm.size(); ++i) {
    layout.sizes.push_back(self.size(perm[i]));
    layout.in_strides.push_back(self.stride(perm[i]));
    layout.out_strides.push_back(out.stride(i));
  }
  layout.element_bytes = static_cast<int>(self.element_size());
  layout.in_offset_bytes = offset_bytes(self);
  layout.out_offset_bytes = offset_bytes(out);
  std::lock_guard<std::mutex> lock(recorded_mutex);
  recorded.push_back(std::move(layout));
}

// Whether self's device is already the current one because the caller holds its guard.
enum class Device { NeedsGuard, Current };

void run_into(const char* op, const Tensor& self, IntArrayRef perm, const Tensor& out,
              Device device = Device::NeedsGuard) {
  if (out.numel() == 0) return;
  if (recording_layouts.load(std::memory_order_relaxed)) record_layout(self, perm, out);
  const LayoutPlan plan = plan_for(self, perm, out);
  if (self.device().is_cpu()) {
    run_layout_plan_cpu(plan, self.const_data_ptr(), out.data_ptr());
    return;
  }
#ifdef TORCH_TRANSPOSE_WITH_CUDA
  if (self.device().is_cuda()) {
    c10::cuda::OptionalCUDAGuard guard;
    if (device == Device::NeedsGuard) guard.set_device(self.device());
    const c10::DeviceIndex index = self.device().index();
    const int sm_count = at::cuda::getDeviceProperties(index)->multiProcessorCount;
    const int err = run_layout_plan_cuda(plan, self.const_data_ptr(), out.data_ptr(),
                                         at::cuda::getCurrentCUDAStream(index).stream(), sm_count);
    if (err == static_cast<int>(cudaErrorNoKernelImageForDevice)) {
      // Say which GPUs the build is for, rather than CUDA's "no kernel image is available".
      const cudaDeviceProp* props = at::cuda::getDeviceProperties(index);
      TORCH_CHECK(false, message(op, ": this build of torch_transpose has CUDA code for architectures ",
                                 cuda_build_architectures(), " only, and ", props->name, " is sm_", props->major,
                                 props->minor, "; rebuild with TORCH_CUDA_ARCH_LIST=\"", props->major, ".",
                                 props->minor, "\""));
    }
    C10_CUDA_CHECK(static_cast<cudaError_t>(err));
    return;
  }
#endif
#ifdef TORCH_TRANSPOSE_WITH_CUDA
  constexpr const char* kBackends = "CPU and CUDA";
#else
  constexpr const char* kBackends = "CPU";
#endif
  TORCH_CHECK_NOT_IMPLEMENTED(false, message(op, ": no kernel for device ", self.device(), " (this build of torch_transpose has ",
                                             kBackends, " kernels)"));
}

// ---- the operators ------------------------------------------------------------------------------

// A new output, before anything writes it: large CPU ones get huge-page advice (cpu/huge_pages.h).
Tensor prepare_new_output(Tensor out) {
  if (out.device().is_cpu()) advise_huge_pages(out.data_ptr(), static_cast<int64_t>(out.nbytes()));
  return out;
}

enum class Allocation { Dispatched, Direct };

// A CUDA result is allocated on the current device: the caller holds self's device guard
// (empty_cuda would take its own, and initialise CUDA, which self's existence proves done).
Tensor new_tensor(const Tensor& self, IntArrayRef sizes, Allocation how) {
  if (how == Allocation::Direct) {
    if (self.is_cpu()) return at::detail::empty_cpu(sizes, self.scalar_type());
#ifdef TORCH_TRANSPOSE_WITH_CUDA
    if (self.is_cuda())
      return at::detail::empty_generic(sizes, at::cuda::getCUDADeviceAllocator(),
                                       c10::DispatchKeySet(c10::DispatchKey::CUDA), self.scalar_type(), std::nullopt);
#endif
  }
  return at::empty(sizes, self.options());
}

Tensor permute_into_new(const char* op, const Tensor& self, IntArrayRef perm,
                        Allocation how = Allocation::Dispatched) {
  check_strided(op, "self", self);
#ifdef TORCH_TRANSPOSE_WITH_CUDA
  // One device guard for the allocation and the launch.
  c10::cuda::OptionalCUDAGuard guard;
  if (self.is_cuda()) guard.set_device(self.device());
#endif
  Tensor out = prepare_new_output(new_tensor(self, permuted_sizes(self, perm), how));
  run_into(op, self, perm, out, Device::Current);
  return out;
}

void permute_into_out(const char* op, const Tensor& self, IntArrayRef perm, const Tensor& out) {
  check_strided(op, "self", self);
  check_out(op, self, permuted_sizes(self, perm), out);
  run_into(op, self, perm, out);
}

// The functional ops, registered with the dispatcher (Dispatched) and called directly by the fast
// entries where dispatch_reaches_kernels holds (Direct: transpose_kernel, permute_kernel).
template <Allocation how>
Tensor transpose_allocating(const Tensor& self, int64_t dim0, int64_t dim1) {
  return permute_into_new("transpose", self, transpose_permutation(self, dim0, dim1), how);
}

template <Allocation how>
Tensor permute_allocating(const Tensor& self, IntArrayRef dims) {
  return permute_into_new("permute", self, checked_permutation("permute", self, dims), how);
}

Tensor transpose_op(const Tensor& self, int64_t dim0, int64_t dim1) {
  return transpose_allocating<Allocation::Dispatched>(self, dim0, dim1);
}

void transpose_out_op(const Tensor& self, int64_t dim0, int64_t dim1, const Tensor& out) {
  permute_into_out("transpose_out", self, transpose_permutation(self, dim0, dim1), out);
}

Tensor permute_op(const Tensor& self, IntArrayRef dims) { return permute_allocating<Allocation::Dispatched>(self, dims); }

void permute_out_op(const Tensor& self, IntArrayRef dims, const Tensor& out) {
  permute_into_out("permute_out", self, checked_permutation("permute_out", self, dims), out);
}

Tensor to_memory_format_op(const Tensor& self, at::MemoryFormat memory_format) {
  check_strided("to_memory_format", "self", self);
  // empty_like raises PyTorch's own error for a format that does not fit self's rank.
  Tensor out = prepare_new_output(at::empty_like(self, self.options(), memory_format));
  DimList identity(self.dim());
  for (int64_t i = 0; i < self.dim(); ++i) identity[i] = i;
  run_into("to_memory_format", self, identity, out);
  return out;
}

// out= variants do not support autograd, as in PyTorch: refuse inputs that require grad (while
// grad mode is on) instead of silently dropping the gradient, and bump out's version counter so
// that autograd notices the mutation of any tensor it saved.
void guard_out_variant(const char* op, const Tensor& self, const Tensor& out) {
  TORCH_CHECK(!(at::GradMode::is_enabled() && (self.requires_grad() || out.requires_grad())), message(op,
              "(): functions with out=... arguments don't support automatic differentiation, but one of the "
              "arguments requires grad."));
}

void transpose_out_autograd(const Tensor& self, int64_t dim0, int64_t dim1, const Tensor& out) {
  guard_out_variant("transpose_out", self, out);
  {
    at::AutoDispatchBelowADInplaceOrView below;
    static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("torch_transpose::transpose_out", "")
                         .typed<void(const Tensor&, int64_t, int64_t, const Tensor&)>();
    op.call(self, dim0, dim1, out);
  }
  torch::autograd::impl::bump_version(out);
}

void permute_out_autograd(const Tensor& self, IntArrayRef dims, const Tensor& out) {
  guard_out_variant("permute_out", self, out);
  {
    at::AutoDispatchBelowADInplaceOrView below;
    static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("torch_transpose::permute_out", "")
                         .typed<void(const Tensor&, IntArrayRef, const Tensor&)>();
    op.call(self, dims, out);
  }
  torch::autograd::impl::bump_version(out);
}

}  // namespace

bool dispatch_reaches_kernels(const Tensor& self) {
  const bool enabled = !switch_off("fast_direct");
  if (!enabled || at::hasCallbacks()) return false;
  // The keys the dispatcher would see (the tensor's, plus those a mode, vmap, autocast or the
  // tracer switched on for this thread, less those switched off), less the ones whose kernels
  // pass a call without a gradient straight through. Only the backend's own may be left.
  const c10::impl::LocalDispatchKeySet local = c10::impl::tls_local_dispatch_key_set();
  const c10::DispatchKeySet active = (self.key_set() | local.included_) - local.excluded_;
  const c10::DispatchKeySet rest =
      active - c10::autograd_dispatch_keyset_with_ADInplaceOrView - c10::DispatchKeySet(c10::DispatchKey::BackendSelect);
  return rest == c10::DispatchKeySet(c10::DispatchKey::CPU) || rest == c10::DispatchKeySet(c10::DispatchKey::CUDA);
}

Tensor transpose_kernel(const Tensor& self, int64_t dim0, int64_t dim1) {
  return transpose_allocating<Allocation::Direct>(self, dim0, dim1);
}

Tensor permute_kernel(const Tensor& self, IntArrayRef dims) { return permute_allocating<Allocation::Direct>(self, dims); }

// Allocates through at::empty_like still: its memory format handling (preserve_format, the rank
// a format needs, and the error when it does not fit) is PyTorch's own.
Tensor to_memory_format_kernel(const Tensor& self, at::MemoryFormat memory_format) {
  return to_memory_format_op(self, memory_format);
}

std::string explain(const at::Tensor& self, at::IntArrayRef dims, const std::optional<at::Tensor>& out) {
  const auto perm = checked_permutation("explain", self, dims);
  const Tensor target = out.has_value() ? *out : at::empty(permuted_sizes(self, perm), self.options().device(at::kMeta));
  if (out.has_value()) check_out("explain", self, permuted_sizes(self, perm), *out);
  return plan_for(self, perm, target).explain();
}

void record_layouts(bool on) { recording_layouts.store(on, std::memory_order_relaxed); }

std::vector<RecordedLayout> take_recorded_layouts() {
  std::lock_guard<std::mutex> lock(recorded_mutex);
  return std::exchange(recorded, {});
}

std::vector<LaunchRecord> kernel_launches(const at::Tensor& self, at::IntArrayRef dims,
                                          const std::optional<at::Tensor>& out, int64_t sm_count, bool candidates) {
  const auto perm = checked_permutation("explain", self, dims);
  const Tensor target = out.has_value() ? *out : at::empty(permuted_sizes(self, perm), self.options().device(at::kMeta));
  if (out.has_value()) check_out("explain", self, permuted_sizes(self, perm), *out);
  TORCH_CHECK(self.is_cuda() || self.is_meta() || self.is_cpu(), message(
              "explain: kernels are chosen for CPU, CUDA and meta tensors, got a ", self.device(), " tensor"));
  const LayoutPlan plan = plan_for(self, perm, target);
  if (plan.kind == PlanKind::Empty) return {};
  if (self.is_cpu()) return dry_run_layout_plan_cpu(plan, self.const_data_ptr(), target.const_data_ptr());
#ifdef TORCH_TRANSPOSE_WITH_CUDA
  DeviceDescription device;
  if (self.is_cuda()) {
    const auto* properties = at::cuda::getDeviceProperties(self.device().index());
    device.sm_count = properties->multiProcessorCount;
    device.capability_major = properties->major;
    device.capability_minor = properties->minor;
  }
  if (sm_count > 0) device.sm_count = static_cast<int>(sm_count);
  const void* in = reinterpret_cast<const void*>(address_of(self));
  const void* out_address = reinterpret_cast<const void*>(address_of(target));
  return candidates ? dry_run_candidates_cuda(plan, in, out_address, device)
                    : dry_run_layout_plan_cuda(plan, in, out_address, device);
#else
  (void)sm_count;
  (void)candidates;
  TORCH_CHECK_NOT_IMPLEMENTED(false, "explain: this build of torch_transpose has no CUDA kernels");
#endif
}

}  // namespace torch_transpose

// ---- the contract: every schema of the library, in one place --------------------------------------
TORCH_LIBRARY(torch_transpose, m) {
  const std::vector<at::Tag> tags = {at::Tag::pt2_compliant_tag};
  // self.transpose(dim0, dim1).contiguous(), always a new tensor.
  m.def("transpose(Tensor self, int dim0=-2, int dim1=-1) -> Tensor", tags);
  // The same values written into `out` (any strides, no overlap with self or itself).
  m.def("transpose_out(Tensor self, int dim0, int dim1, Tensor(a!) out) -> ()", tags);
  // self.permute(dims).contiguous(), always a new tensor.
  m.def("permute(Tensor self, int[] dims) -> Tensor", tags);
  m.def("permute_out(Tensor self, int[] dims, Tensor(a!) out) -> ()", tags);
  // self.contiguous(memory_format=memory_format), always a new tensor.
  m.def("to_memory_format(Tensor self, MemoryFormat memory_format) -> Tensor", tags);
}

TORCH_LIBRARY_IMPL(torch_transpose, CPU, m) {
  m.impl("transpose", &torch_transpose::transpose_op);
  m.impl("transpose_out", &torch_transpose::transpose_out_op);
  m.impl("permute", &torch_transpose::permute_op);
  m.impl("permute_out", &torch_transpose::permute_out_op);
  m.impl("to_memory_format", &torch_transpose::to_memory_format_op);
}

#ifdef TORCH_TRANSPOSE_WITH_CUDA
TORCH_LIBRARY_IMPL(torch_transpose, CUDA, m) {
  m.impl("transpose", &torch_transpose::transpose_op);
  m.impl("transpose_out", &torch_transpose::transpose_out_op);
  m.impl("permute", &torch_transpose::permute_op);
  m.impl("permute_out", &torch_transpose::permute_out_op);
  m.impl("to_memory_format", &torch_transpose::to_memory_format_op);
}
#endif

TORCH_LIBRARY_IMPL(torch_transpose, Autograd, m) {
  m.impl("transpose_out", &torch_transpose::transpose_out_autograd);
  m.impl("permute_out", &torch_transpose::permute_out_autograd);
}
