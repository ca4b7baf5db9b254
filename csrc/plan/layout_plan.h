// The plan: one canonical description of "materialise a strided view into a strided output".
//
// Every op of this library (transpose, permute, layout conversion) reduces to
//     out[i0, ..., ir] = in[i0, ..., ir]   for all indices of `sizes`,
// where the input and the output each have their own strides (in elements). The plan
// canonicalises that problem so that the kernels only ever see two shapes of work:
//   * Copy:      the input's and the output's fastest dims coincide (a strided row copy);
//   * Transpose: they differ, so a tile over (input-fast dim, output-fast dim) is needed;
// with every other dim treated as a batch dim. Empty problems plan to nothing.
//
// This header is pure C++ (no ATen, no CUDA) so that the plan can be unit-tested on its own.
#pragma once

#include <cstdint>
#include <string>

#include "inline_vector.h"

namespace torch_transpose {

// Dims left after dropping size-1 dims and merging. Ranks beyond this are refused with a
// clear message: after merging, real layouts have far fewer dims than this.
constexpr int kMaxPlanRank = 16;

enum class PlanKind { Empty, Copy, Transpose };

// Dims of a problem or plan that live inside it (inline_vector.h: no heap allocation per call).
template <typename T> using DimVector = InlineVector<T, kMaxPlanRank>;

// A strided problem before canonicalisation: all three lists have the same length (the rank).
struct LayoutProblem {
  DimVector<int64_t> sizes;        // shape of the result
  DimVector<int64_t> in_strides;   // input strides, in elements, in result-dim order
  DimVector<int64_t> out_strides;  // output strides, in elements
  int element_bytes = 4;           // 1, 2, 4, 8 or 16
  uintptr_t in_address = 0;        // first element's address (for vector alignment)
  uintptr_t out_address = 0;
};

struct LayoutPlan {
  PlanKind kind = PlanKind::Empty;
  int element_bytes = 4;

  // Merged dims ordered by decreasing output stride: dim `rank - 1` is the output's fastest.
  int rank = 0;
  int64_t sizes[kMaxPlanRank] = {};
  int64_t in_strides[kMaxPlanRank] = {};
  int64_t out_strides[kMaxPlanRank] = {};

  int out_fast_dim = -1;  // always rank - 1 when rank > 0
  int in_fast_dim = -1;   // == out_fast_dim for Copy

  // Elements moved per vector access along the fast dims (1 when alignment forbids more).
  // For Transpose it applies to the input's fast dim on load and the output's on store.
  int vector_elems = 1;

  // True when some in-tile element offset may not fit in int32: the kernels then take their
  // 64-bit index path. Batch offsets are always computed in 64 bits.
  bool needs_64bit_index = false;

  int64_t numel = 0;

  // Number of batch dims (every dim other than the fast ones) and their positions.
  int batch_rank() const;
  DimVector<int> batch_dims() const;
  bool is_batch_dim(int d) const { return d != in_fast_dim && d != out_fast_dim; }

  // Whether every batch dim's stride in `strides` (this plan's in_strides or out_strides, or a
  // kernel's variant of them) is a multiple of v elements: with an aligned base, every batch
  // item then starts on a v-element boundary. Every vector width check needs this.
  bool batch_strides_multiple_of(const int64_t* strides, int64_t v) const;

  // Whether one side alone allows v-element vectors along its fast dim: its first element's
  // address (`address`), its batch strides and, for a transpose, the step between its rows (the
  // input's stride along b, the output's along a) are all multiples of v elements.
  // choose_vector_elems asks both; the kernels ask which side keeps a plan off 16-byte vectors.
  bool input_allows_vectors(uintptr_t address, int64_t v) const;
  bool output_allows_vectors(uintptr_t address, int64_t v) const;

  // The largest element offset along `strides` (in_strides or out_strides): the last element's,
  // since a plan's strides are non-negative. Kernels that prove whole-tensor offsets or spans
  // with it start from here.
  int64_t max_offset(const int64_t* strides) const;

  // Whether every element offset of both tensors fits a signed 32-bit index: the kernels that
  // locate whole tiles or rows from the grid (the lean kernels) compute their offsets in 32 bits.
  bool offsets_fit_32() const;

  // A one-line human description, e.g.
  // "transpose: sizes=[64, 4096, 4096] in_strides=[..] out_strides=[..] in_fast=1 out_fast=2 vec=4 idx=32"
  std::string explain() const;
};

// Canonicalise and choose the kind of kernel. Throws std::invalid_argument when the problem is
// malformed (mismatched lengths, negative sizes or strides, unsupported element size) and
// std::length_error when more than kMaxPlanRank dims remain after merging.
LayoutPlan plan_layout_copy(const LayoutProblem& problem);

// The widest vector (in elements, at most 16 bytes) usable along a dim whose stride is 1 on
// the side(s) that access it: every other stride, both addresses and the dim itself must be
// aligned to it. Exposed for tests.
int choose_vector_elems(const LayoutPlan& plan, uintptr_t in_address, uintptr_t out_address);

}  // namespace torch_transpose
