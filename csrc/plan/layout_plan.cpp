#include "layout_plan.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace torch_transpose {
namespace {

bool is_supported_element_size(int bytes) {
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16;
}

void validate(const LayoutProblem& p) {
  const size_t rank = p.sizes.size();
  if (p.in_strides.size() != rank || p.out_strides.size() != rank) {
    throw std::invalid_argument("plan_layout_copy: sizes, in_strides and out_strides must have the same length");
  }
  if (!is_supported_element_size(p.element_bytes)) {
    throw std::invalid_argument("plan_layout_copy: element_bytes must be 1, 2, 4, 8 or 16, got " +
                                std::to_string(p.element_bytes));
  }
  for (size_t i = 0; i < rank; ++i) {
    if (p.sizes[i] < 0 || p.in_strides[i] < 0 || p.out_strides[i] < 0) {
      throw std::invalid_argument("plan_layout_copy: sizes and strides must be non-negative");
    }
  }
}

// Kernels load whole elements, which needs natural alignment. An element whose address is not
// a multiple of its size (possible through from_blob or byte-offset views) is moved as k-byte
// pieces instead: one more innermost dim of size E/k with stride 1 on both sides.
int aligned_piece_bytes(const LayoutProblem& p) {
  int piece = p.element_bytes;
  while (piece > 1 && (p.in_address % piece != 0 || p.out_address % piece != 0)) piece /= 2;
  return piece;
}

LayoutProblem split_misaligned_elements(const LayoutProblem& p, int piece) {
  const int64_t pieces = p.element_bytes / piece;
  LayoutProblem split = p;
  split.element_bytes = piece;
  for (auto& s : split.in_strides) s *= pieces;
  for (auto& s : split.out_strides) s *= pieces;
  split.sizes.push_back(pieces);
  split.in_strides.push_back(1);
  split.out_strides.push_back(1);
  return split;
}

struct Dim {
  int64_t size, in_stride, out_stride;
};

// Largest offset (in elements) reachable by an index confined to the fast dims a and b.
int64_t fast_dims_max_offset(const LayoutPlan& plan, const int64_t* strides, int a, int b) {
  int64_t total = (plan.sizes[b] - 1) * strides[b];
  if (a != b) total += (plan.sizes[a] - 1) * strides[a];
  return total;
}

template <typename Less>
void insertion_sort_stable(DimVector<Dim>& dims, Less less) {
  for (size_t i = 1; i < dims.size(); ++i) {
    const Dim d = dims[i];
    size_t j = i;
    for (; j > 0 && less(d, dims[j - 1]); --j) dims[j] = dims[j - 1];
    dims[j] = d;
  }
}

}  // namespace

int LayoutPlan::batch_rank() const {
  if (kind == PlanKind::Empty) return 0;
  return rank - (kind == PlanKind::Copy ? 1 : 2);
}

DimVector<int> LayoutPlan::batch_dims() const {
  DimVector<int> dims;
  for (int d = 0; d < rank; ++d) {
    if (is_batch_dim(d)) dims.push_back(d);
  }
  return dims;
}

bool LayoutPlan::batch_strides_multiple_of(const int64_t* strides, int64_t v) const {
  for (int d = 0; d < rank; ++d) {
    if (is_batch_dim(d) && strides[d] % v != 0) return false;
  }
  return true;
}

namespace {

// One side's half of LayoutPlan::input_allows_vectors / output_allows_vectors: `row_dim` is the
// other side's fast dim (the same dim for a copy, which has no row step to check).
bool side_allows_vectors(const LayoutPlan& plan, const int64_t* strides, int row_dim, uintptr_t address, int64_t v) {
  const uintptr_t align_bytes = static_cast<uintptr_t>(v) * plan.element_bytes;
  return address % align_bytes == 0 && plan.batch_strides_multiple_of(strides, v) &&
         (plan.in_fast_dim == plan.out_fast_dim || strides[row_dim] % v == 0);
}

}  // namespace

bool LayoutPlan::input_allows_vectors(uintptr_t address, int64_t v) const {
  return side_allows_vectors(*this, in_strides, out_fast_dim, address, v);
}

bool LayoutPlan::output_allows_vectors(uintptr_t address, int64_t v) const {
  return side_allows_vectors(*this, out_strides, in_fast_dim, address, v);
}

int64_t LayoutPlan::max_offset(const int64_t* strides) const {
  int64_t last = 0;
  for (int d = 0; d < rank; ++d) last += (sizes[d] - 1) * strides[d];
  return last;
}

bool LayoutPlan::offsets_fit_32() const {
  return std::max(max_offset(in_strides), max_offset(out_strides)) <= std::numeric_limits<int32_t>::max();
}

int choose_vector_elems(const LayoutPlan& plan, uintptr_t in_address, uintptr_t out_address) {
  if (plan.kind == PlanKind::Empty) return 1;
  const int a = plan.in_fast_dim, b = plan.out_fast_dim;
  // Vectors need unit stride on the side that walks each fast dim.
  if (plan.in_strides[a] != 1 || plan.out_strides[b] != 1) return 1;
  for (int v = 16 / plan.element_bytes; v > 1; v /= 2) {
    // A fast dim shorter than one vector would only ever take the scalar edge path.
    if (plan.input_allows_vectors(in_address, v) && plan.output_allows_vectors(out_address, v) && plan.sizes[a] >= v &&
        plan.sizes[b] >= v)
      return v;
  }
  return 1;
}

namespace {

// plan_layout_copy for a problem whose elements are naturally aligned.
LayoutPlan plan_aligned(const LayoutProblem& problem) {
  LayoutPlan plan;
  plan.element_bytes = problem.element_bytes;

  // 1. Drop size-1 dims (their strides never matter); any size-0 dim empties the problem.
  DimVector<Dim> dims;
  dims.reserve(problem.sizes.size());
  int64_t numel = 1;
  for (size_t i = 0; i < problem.sizes.size(); ++i) {
    numel *= problem.sizes[i];
    if (problem.sizes[i] != 1) dims.push_back({problem.sizes[i], problem.in_strides[i], problem.out_strides[i]});
  }
  plan.numel = numel;
  if (numel == 0) {
    plan.kind = PlanKind::Empty;
    return plan;
  }

  // 2. Order by output stride, largest first, so the output's fastest dim is last. Ties (only
  //    possible for an overlapping output) fall back to the input stride, for determinism.
  insertion_sort_stable(dims, [](const Dim& x, const Dim& y) {
    if (x.out_stride != y.out_stride) return x.out_stride > y.out_stride;
    return x.in_stride > y.in_stride;
  });

  // 3. Merge neighbours that are contiguous with each other on both sides, in place: the first
  //    `kept` dims are the merged ones.
  size_t kept = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim d = dims[i];
    if (kept > 0) {
      Dim& outer = dims[kept - 1];
      if (outer.out_stride == d.out_stride * d.size && outer.in_stride == d.in_stride * d.size) {
        outer = {outer.size * d.size, d.in_stride, d.out_stride};
        continue;
      }
    }
    dims[kept++] = d;
  }
  dims.resize(kept);
  if (dims.empty()) dims.push_back({1, 1, 1});  // a single element
  if (dims.size() > static_cast<size_t>(kMaxPlanRank)) {
    throw std::length_error("torch_transpose supports at most " + std::to_string(kMaxPlanRank) +
                            " dims after dropping size-1 dims and merging contiguous ones, got " +
                            std::to_string(dims.size()));
  }

  plan.rank = static_cast<int>(dims.size());
  for (int d = 0; d < plan.rank; ++d) {
    plan.sizes[d] = dims[d].size;
    plan.in_strides[d] = dims[d].in_stride;
    plan.out_strides[d] = dims[d].out_stride;
  }

  // 4. The output's fastest dim is the last; the input's is its smallest non-zero stride
  //    (a stride-0 dim costs no reads, so it is never worth tiling over). Ties go to the
  //    output's fast dim, which makes the cheaper copy kernel win.
  const int b = plan.rank - 1;
  int a = b;
  if (plan.in_strides[b] != 0) {
    for (int d = 0; d < plan.rank; ++d) {
      if (plan.in_strides[d] > 0 && plan.in_strides[d] < plan.in_strides[a]) a = d;
    }
  }
  plan.out_fast_dim = b;
  plan.in_fast_dim = a;
  plan.kind = (a == b) ? PlanKind::Copy : PlanKind::Transpose;

  // 5. Index width: offsets inside one tile or one row (the batch part is always 64-bit).
  const int64_t limit = std::numeric_limits<int32_t>::max();
  plan.needs_64bit_index = fast_dims_max_offset(plan, plan.in_strides, a, b) >= limit ||
                           fast_dims_max_offset(plan, plan.out_strides, a, b) >= limit;

  plan.vector_elems = choose_vector_elems(plan, problem.in_address, problem.out_address);
  return plan;
}

}  // namespace

LayoutPlan plan_layout_copy(const LayoutProblem& original) {
  validate(original);
  // The problem as given unless its elements are misaligned (copying it would cost a call for
  // nothing; so would a std::optional of one, whose storage the compiler zeroes every call).
  const int piece = aligned_piece_bytes(original);
  return piece == original.element_bytes ? plan_aligned(original)
                                         : plan_aligned(split_misaligned_elements(original, piece));
}

std::string LayoutPlan::explain() const {
  // Plain appends, no iostreams: see csrc/message.h for why this library avoids streams.
  auto list = [&](const int64_t* v) {
    std::string s = "[";
    for (int d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(v[d]);
    return s + "]";
  };
  std::string kind_name;
  switch (kind) {
    case PlanKind::Empty: return "empty: nothing to move";
    case PlanKind::Copy: kind_name = "copy:"; break;
    case PlanKind::Transpose: kind_name = "transpose:"; break;
  }
  return kind_name + " sizes=" + list(sizes) + " in_strides=" + list(in_strides) + " out_strides=" + list(out_strides) +
         " in_fast=" + std::to_string(in_fast_dim) + " out_fast=" + std::to_string(out_fast_dim) +
         " element_bytes=" + std::to_string(element_bytes) + " vec=" + std::to_string(vector_elems) +
         " index=" + (needs_64bit_index ? "64" : "32");
}

}  // namespace torch_transpose
