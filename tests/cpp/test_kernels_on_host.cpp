// The CUDA kernels' index math, run on the CPU (csrc/cuda/cuda_on_host.h): every launcher path
// (square tiles with interior and edge vectors, window tiles, narrow tiles, box tiles, flat
// tiles with dense and line walks, row copies) against a reference strided copy, with poisoned
// outputs and guard bytes around the output view. Built with -fsanitize=alignment, so a vector access the plan did not prove
// aligned fails here as it would fault on the GPU; under `make sanitize` (ASan) a read past the
// input's last element fails too. No torch, no GPU: this runs in CI.
#define TT_CUDA_ON_HOST
#include "cuda/box_tile_transpose.cuh"
#include "cuda/compact_tile_transpose.cuh"
#include "cuda/cuda_common.cuh"
#include "cuda/direct_transpose.cuh"
#include "cuda/fast_divmod.cuh"
#include "cuda/flat_tile_transpose.cuh"
#include "cuda/gather_tile_transpose.cuh"
#include "cuda/interleave_transpose.cuh"
#include "cuda/item_tile_transpose.cuh"
#include "cuda/launch_common.cuh"
#include "cuda/lean_batch.cuh"
#include "cuda/lean_interleave_transpose.cuh"
#include "cuda/lean_narrow_transpose.cuh"
#include "cuda/lean_row_copy.cuh"
#include "cuda/lean_tile_transpose.cuh"
#include "cuda/lean_window_tile_transpose.cuh"
#include "cuda/narrow_block_transpose.cuh"
#include "cuda/narrow_transpose.cuh"
#include "cuda/narrow_word_transpose.cuh"
#include "cuda/output_span_tile_transpose.cuh"
#include "cuda/realign_window_tile_transpose.cuh"
#include "cuda/row_copy.cuh"
#include "cuda/span_tile_transpose.cuh"
#include "cuda/tile_order.cuh"
#include "cuda/tile_transpose.cuh"
#include "cuda/tma.cuh"
#include "cuda/tma_byte_tile_transpose.cuh"
#include "cuda/window_tile_transpose.cuh"
#include "kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "plan/layout_plan.h"

namespace {

using torch_transpose::LayoutPlan;
using torch_transpose::LayoutProblem;

constexpr unsigned char kPoison = 0xAB;

// A 64-byte aligned byte buffer of exactly `bytes` (std::vector gives no alignment promise
// beyond new's). Exact, so that AddressSanitizer (make sanitize) flags a read past the input.
struct Buffer {
  explicit Buffer(size_t bytes) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, std::max<size_t>(bytes, 1)) != 0) throw std::bad_alloc();
    data = static_cast<unsigned char*>(p);
  }
  ~Buffer() { std::free(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  unsigned char* data = nullptr;
};

// One case: the result shape, each side's strides (in elements, result-dim order), each side's
// element offset from an aligned base, and the element width.
struct Case {
  std::vector<int64_t> sizes, in_strides, out_strides;
  int64_t in_offset = 0, out_offset = 0;
  int element_bytes = 4;
  std::string name;
};

int64_t span(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  int64_t last = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return 0;
    last += (sizes[d] - 1) * strides[d];
  }
  return last + 1;
}

// Visits every index of `sizes`, giving the input and output element offsets.
template <typename F>
void for_each_index(const Case& c, F&& f) {
  const size_t rank = c.sizes.size();
  for (int64_t s : c.sizes)
    if (s == 0) return;
  std::vector<int64_t> idx(rank, 0);
  while (true) {
    int64_t in = c.in_offset, out = c.out_offset;
    for (size_t d = 0; d < rank; ++d) {
      in += idx[d] * c.in_strides[d];
      out += idx[d] * c.out_strides[d];
    }
    f(in, out);
    size_t d = rank;
    while (d > 0) {
      --d;
      if (++idx[d] < c.sizes[d]) break;
      idx[d] = 0;
      if (d == 0) return;
    }
    if (rank == 0) return;
  }
}

// The plan for a case whose input and output views start at the given addresses.
LayoutPlan plan_of(const Case& c, uintptr_t in_address, uintptr_t out_address) {
  LayoutProblem problem;
  problem.sizes = c.sizes;
  problem.in_strides = c.in_strides;
  problem.out_strides = c.out_strides;
  problem.element_bytes = c.element_bytes;
  problem.in_address = in_address;
  problem.out_address = out_address;
  return torch_transpose::plan_layout_copy(problem);
}

// A case placed as the plan tests place it (tensors from address 4096 plus the case's offsets),
// and its plan: what each kernel's plan-choice test asks about.
struct PlacedCase {
  uintptr_t in_address, out_address;
  LayoutPlan plan;
};

PlacedCase place(const Case& c) {
  const uintptr_t in_address = 4096 + c.element_bytes * c.in_offset, out_address = 4096 + c.element_bytes * c.out_offset;
  return {in_address, out_address, plan_of(c, in_address, out_address)};
}

// A plan-choice check: whether `take(placed, grid)`, a lean kernel's argument builder given the
// case's addresses and plan, takes the case, as `expected` says.
template <typename Take>
void expect_taken(const Case& c, bool expected, Take&& take) {
  SCOPED_TRACE(c.name);
  const PlacedCase placed = place(c);
  dim3 grid;
  EXPECT_EQ(take(placed, grid), expected) << placed.plan.explain();
}

// Runs the CUDA launcher on the CPU and checks every output element and every guard byte.
void check_case(const Case& c, int sm_count = 1) {
  SCOPED_TRACE(c.name);
  const int e = c.element_bytes;
  const int64_t in_elems = c.in_offset + span(c.sizes, c.in_strides);
  const int64_t out_elems = c.out_offset + span(c.sizes, c.out_strides) + 3;  // guard after the view
  Buffer in(in_elems * e), out(out_elems * e);
  std::mt19937 rng(static_cast<unsigned>(in_elems * 31 + out_elems));
  for (int64_t i = 0; i < in_elems * e; ++i) in.data[i] = static_cast<unsigned char>(rng());
  std::memset(out.data, kPoison, out_elems * e);

  const LayoutPlan plan = plan_of(c, reinterpret_cast<uintptr_t>(in.data + c.in_offset * e),
                                  reinterpret_cast<uintptr_t>(out.data + c.out_offset * e));
  SCOPED_TRACE(plan.explain());
  ASSERT_EQ(torch_transpose::run_layout_plan_cuda(plan, in.data + c.in_offset * e, out.data + c.out_offset * e, nullptr, sm_count), 0);

  std::vector<unsigned char> expected(out_elems * e, kPoison);
  for_each_index(c, [&](int64_t i, int64_t o) { std::memcpy(&expected[o * e], in.data + i * e, e); });
  int64_t bad = 0, first_bad = -1;
  for (int64_t i = 0; i < out_elems * e; ++i)
    if (out.data[i] != expected[i] && bad++ == 0) first_bad = i;
  EXPECT_EQ(bad, 0) << "first wrong byte " << first_bad << " (element " << (first_bad / e) << ")";
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s *= std::max<int64_t>(shape[d], 1);
  }
  return strides;
}

// x.permute(dims).contiguous() for x of `shape` with `in_strides` (contiguous when empty).
Case permute_case(std::vector<int64_t> shape, std::vector<int> dims, int element_bytes,
                  std::vector<int64_t> in_strides = {}, int64_t in_offset = 0) {
  if (in_strides.empty()) in_strides = contiguous_strides(shape);
  Case c;
  c.element_bytes = element_bytes;
  c.in_offset = in_offset;
  for (int d : dims) {
    c.sizes.push_back(shape[d]);
    c.in_strides.push_back(in_strides[d]);
  }
  c.out_strides = contiguous_strides(c.sizes);
  c.name = "shape";
  for (int64_t s : shape) c.name += " " + std::to_string(s);
  c.name += " dims";
  for (int d : dims) c.name += " " + std::to_string(d);
  c.name += " e=" + std::to_string(element_bytes) + " in_offset=" + std::to_string(in_offset);
  return c;
}

// The case with its output a view of a larger buffer: `out_strides` in result-dim order, the
// view starting `out_offset` elements in; `view` (e.g. "buf[:, 1:129]") joins the case's name.
Case into_view(Case c, std::vector<int64_t> out_strides, int64_t out_offset, const std::string& view) {
  c.out_strides = std::move(out_strides);
  c.out_offset = out_offset;
  c.name += " out=" + view;
  return c;
}

// The emulation itself (cuda_on_host.h, host_fibers.h): every thread of a block writes its slot
// of shared memory, meets the others at a barrier and reads a neighbour's slot, twice per block
// (so the barrier is reused within a block and across blocks), over a 3-D grid. Without a
// barrier that waits, a thread reads a slot its neighbour has not written yet.
__global__ void neighbour_exchange_kernel(unsigned* out) {
  __shared__ unsigned slots[256];
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned t = threadIdx.x;
  for (unsigned round = 0; round < 2; ++round) {
    slots[t] = block * 1000 + round * 300 + t;
    __syncthreads();
    out[(block * 2 + round) * 256 + t] = slots[(t + 1) % 256];
    __syncthreads();  // before the next round overwrites the slots
  }
}

TEST(HostEmulation, BarriersOrderSharedMemoryAcrossThreadsAndBlocks) {
  const dim3 grid{3, 2, 2};
  const unsigned blocks = 12;
  std::vector<unsigned> out(blocks * 2 * 256, 0xFFFFFFFFu);
  torch_transpose::launch_kernel<neighbour_exchange_kernel>(grid, 256, 0, nullptr, out.data());
  for (unsigned block = 0; block < blocks; ++block)
    for (unsigned round = 0; round < 2; ++round)
      for (unsigned t = 0; t < 256; ++t)
        ASSERT_EQ(out[(block * 2 + round) * 256 + t], block * 1000 + round * 300 + (t + 1) % 256)
            << "block " << block << " round " << round << " thread " << t;
}

const int kWidths[] = {1, 2, 4, 8, 16};

TEST(KernelsOnHost, SquareTilesInteriorAndEdges) {
  for (int e : kWidths) {
    check_case(permute_case({200, 136}, {1, 0}, e));    // edge tiles on both dims, aligned vectors
    check_case(permute_case({3, 136, 49}, {0, 2, 1}, e));  // NCHW -> NHWC-like: 49 is not a tile multiple
    check_case(permute_case({130, 257}, {1, 0}, e));    // odd: scalar tiles
    check_case(permute_case({128, 256}, {1, 0}, e));    // interior only for most widths
  }
}

// 1-byte vector tiles of 256 x 256 (kWideByteTile): when they are chosen, and (with
// TORCH_TRANSPOSE_KERNELS=wide_byte_tile=1, as ctest's main run sets it; its fallback run checks the same
// cases on 128 x 128 tiles) interior tiles, edge tiles on either dim (2064 is a multiple of 16
// but not of 256), batches and an offset output view.
TEST(KernelsOnHost, WideByteTiles) {
  EXPECT_TRUE(torch_transpose::wide_byte_tiles_fit(512, 2064));
  EXPECT_FALSE(torch_transpose::wide_byte_tiles_fit(272, 2064));  // 128-wide tiles leave less edge
  EXPECT_TRUE(torch_transpose::wide_byte_tiles_pay_off(64 * 64, 132));   // int8 16384^2 on the H200
  EXPECT_FALSE(torch_transpose::wide_byte_tiles_pay_off(32 * 32, 132));  // int8 8192^2
  for (const Case& c : {permute_case({2, 256, 512}, {0, 2, 1}, 1), permute_case({3, 2064, 5, 700}, {2, 3, 0, 1}, 1)}) {
    const LayoutPlan plan = plan_of(c, 0, 0);
    for (int64_t tile : {int64_t{torch_transpose::kWideByteTile}, int64_t{128}, int64_t{64}})
      EXPECT_EQ(torch_transpose::square_tile_count(plan, tile),
                torch_transpose::SquareTileArgs::make(plan, tile).order.total) << c.name << " tile " << tile;
  }
  check_case(permute_case({512, 768}, {1, 0}, 1));
  check_case(permute_case({2064, 512}, {1, 0}, 1));
  check_case(permute_case({512, 2064}, {1, 0}, 1));
  check_case(permute_case({2, 256, 512}, {0, 2, 1}, 1));
  check_case(into_view(permute_case({512, 256}, {1, 0}, 1), {528, 1}, 16, "buf[:, 16:528]"));  // rows 16 bytes in
}

// 1-byte plans through the copy engine (tma_byte_tile_transpose.cuh; tma_on_host.h emulates the
// copies, zero fill, clipping and 128-byte swizzle). Which plans fit, then interior and edge
// tiles, one batch dim, strided input rows, an output slice with guards, and sm_count 1 and 3
// so that each block of the persistent grid walks many tiles through every load and store
// stage. ctest's forced run (TORCH_TRANSPOSE_KERNELS=tma_persistent=0) runs them one tile per block;
// the runs that set TORCH_TRANSPOSE_KERNELS=tma_tile=0 send them to the square tile kernels.
TEST(KernelsOnHost, TmaByteTiles) {
  auto fits = [](const Case& c, uintptr_t in = 4096, uintptr_t out = 8192) {
    const LayoutPlan plan = plan_of(c, in, out);
    torch_transpose::TmaMap in_map, out_map;
    torch_transpose::TmaTileArgs args;
    return torch_transpose::make_tma_byte_tile_args(plan, reinterpret_cast<void*>(in), reinterpret_cast<void*>(out),
                                                    /*wide_fills=*/false, in_map, out_map, args);
  };
  EXPECT_TRUE(fits(permute_case({208, 144}, {1, 0}, 1)));
  EXPECT_TRUE(fits(permute_case({3, 160, 48}, {0, 2, 1}, 1)));        // one batch dim
  EXPECT_FALSE(fits(permute_case({208, 144}, {1, 0}, 2)));            // 2-byte elements
  EXPECT_FALSE(fits(permute_case({208, 136}, {1, 0}, 1)));            // rows of 136 bytes: no 16-byte vectors
  EXPECT_FALSE(fits(permute_case({208, 144}, {1, 0}, 1), 4097));      // misaligned input base
  EXPECT_FALSE(fits(permute_case({2, 3, 64, 48}, {1, 0, 3, 2}, 1)));  // two batch dims
  EXPECT_FALSE(fits(permute_case({3, 64, 48}, {0, 2, 1}, 1, {0, 48, 1})));  // expanded batch: stride 0
  EXPECT_FALSE(fits(into_view(permute_case({74, 480}, {1, 0}, 1), {112, 1}, 0, "rows of 74 bytes, 112 apart")));
  if (torch_transpose::kernel_switch("tma_persistent", -1) == -1) {
    EXPECT_TRUE(torch_transpose::wants_tma_persistent(int64_t{4096} * 4096));   // 32 MB read + written
    EXPECT_FALSE(torch_transpose::wants_tma_persistent(int64_t{8192} * 8192));  // 128 MB
  }

  // Each above 32768 elements, so the direct kernel does not take it.
  for (int sm_count : {1, 3}) {
    check_case(permute_case({256, 384}, {1, 0}, 1), sm_count);            // whole tiles
    check_case(permute_case({304, 208}, {1, 0}, 1), sm_count);            // edge tiles on both dims
    check_case(permute_case({48, 1040}, {1, 0}, 1), sm_count);            // one tile row, its edge 16 wide
    check_case(permute_case({3, 160, 304}, {0, 2, 1}, 1), sm_count);      // batches with edges
    check_case(permute_case({144, 272}, {1, 0}, 1, {400, 1}), sm_count);  // input rows 400 bytes apart
    check_case(into_view(permute_case({272, 176}, {1, 0}, 1), {320, 1}, 32, "buf[:, 32:304]"), sm_count);
    // Output rows of 74 bytes, 112 apart: a TMA store would write up to byte 80 of each row
    // (tma_store_box), so the plan goes to another kernel.
    check_case(into_view(permute_case({74, 480}, {1, 0}, 1), {112, 1}, 16, "buf[:, 16:90] of rows of 112"), sm_count);
  }
}

// With more SMs than full-size tiles, full-width vector plans take tiles of half the side
// (tile_transpose.cuh, wants_small_tiles); sm_count 1000 makes these problems small.
TEST(KernelsOnHost, SmallProblemsTakeHalfSideTiles) {
  for (int e : kWidths) {
    check_case(permute_case({8, 64, 64}, {0, 2, 1}, e), 1000);
    check_case(permute_case({64, 64}, {1, 0}, e), 1000);
    check_case(permute_case({3, 80, 48}, {0, 2, 1}, e), 1000);      // edge tiles on both dims
    check_case(permute_case({100, 32}, {1, 0}, e, {48, 1}), 1000);  // strided rows
    check_case(permute_case({50, 70}, {1, 0}, e), 1000);            // no full-width vectors: usual tiles
  }
}

// A transpose into a slice with a gap after each row: out = buf[:, :, 1:13] of (40, 20, 16).
Case out_slice_case(int e) {
  return into_view(permute_case({40, 12, 20}, {0, 2, 1}, e), {320, 16, 1}, 1, "buf[:, :, 1:13]");
}

// Problems of up to 32768 elements take the direct kernel (direct_transpose.cuh) unless
// TORCH_TRANSPOSE_KERNELS=direct=0; the main ctest runs set that, so the cases above keep their tile
// kernels, and the kernels_on_host_direct run sends every small case here. These add strided,
// offset and expanded inputs, an output slice with gaps, and the largest problem it takes.
TEST(KernelsOnHost, DirectSmallProblems) {
  for (int e : kWidths) {
    check_case(permute_case({64, 64}, {1, 0}, e));
    check_case(permute_case({8, 64, 64}, {0, 2, 1}, e));
    check_case(permute_case({2, 3, 5, 7}, {3, 1, 0, 2}, e, {}, 3));
    check_case(permute_case({37, 53}, {1, 0}, e, {1, 0}));       // an expanded (stride-0) input
    check_case(permute_case({100, 32}, {1, 0}, e, {48, 1}, 1));  // strided rows, offset base
    check_case(permute_case({30, 20}, {1, 0}, e, {64, 2}));      // x[:, ::2]: no unit stride in
    check_case(permute_case({8, 64, 64}, {2, 0, 1}, e));         // 32768 elements: the limit
    check_case(out_slice_case(e));
    check_case(into_view(permute_case({30, 20}, {1, 0}, e), {64, 2}, 0, "buf[:, ::2]"));  // no unit stride out
  }
}

TEST(KernelsOnHost, DirectPlans) {
  if (!torch_transpose::direct_transpose_enabled()) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=direct=0";
  auto direct = [](const Case& c) { return torch_transpose::wants_direct_transpose(plan_of(c, 4096, 4096)); };
  EXPECT_TRUE(direct(permute_case({64, 64}, {1, 0}, 4)));
  EXPECT_TRUE(direct(permute_case({8, 64, 64}, {0, 2, 1}, 4)));
  EXPECT_FALSE(direct(permute_case({256, 256}, {1, 0}, 4)));      // 65536 elements: tiles
  EXPECT_FALSE(direct(permute_case({8, 64, 65}, {0, 2, 1}, 4)));  // 33280 elements
  EXPECT_FALSE(direct(permute_case({64, 64}, {0, 1}, 4)));        // a copy, not a transpose
}

// Square tiles over several batch items, tile rows that end inside a tile, and the window
// kernel on an input whose rows are off the vector grid.
TEST(KernelsOnHost, SquareTilesOverBatches) {
  for (int e : kWidths) {
    check_case(permute_case({3, 70, 581}, {0, 2, 1}, e));
    check_case(permute_case({2, 40, 2100}, {0, 2, 1}, e));
    check_case(permute_case({2, 40, 2101}, {0, 2, 1}, e, {84040, 2101, 1}, 1));  // window tiles
  }
}

// The window kernel forms pointers up to a tile past the tensor's end along b, so it needs
// that margin below 2^31 on top of the plan's 32-bit proof: a transpose whose last element
// sits just under 2^31 goes to the scalar tile kernel. Plans only; nothing is allocated.
TEST(KernelsOnHost, WindowTilesKeepA32BitMargin) {
  auto plan_for = [](int64_t rows, int64_t cols) {
    LayoutProblem problem;
    problem.sizes = {cols, rows};  // x.t() of a (rows, cols) matrix, contiguous output
    problem.in_strides = {1, cols};
    problem.out_strides = {rows, 1};
    problem.element_bytes = 4;
    problem.in_address = problem.out_address = 4;  // off the vector grid: no vectors
    return torch_transpose::plan_layout_copy(problem);
  };
  const LayoutPlan near = plan_for(46339, 46341);  // last input offset 2147395398 < 2^31 - 1
  ASSERT_FALSE(near.needs_64bit_index) << near.explain();
  EXPECT_FALSE(torch_transpose::window_offsets_fit_32(near, 64, 8));
  EXPECT_TRUE(torch_transpose::window_offsets_fit_32(plan_for(8191, 8193), 64, 8));
}

// The tile walk visits every (item, ta, tb) once, and its 64-bit path (for 2^31 tiles or more,
// which no GPU's memory can hold today) agrees with the magic-number path.
TEST(KernelsOnHost, TileOrderVisitsEveryTileOnce) {
  for (const auto& shape : std::vector<std::array<int64_t, 3>>{{10, 7, 3}, {1, 5, 1}, {17, 4, 2}, {3, 3, 5}, {9, 1, 1}}) {
    const auto order = torch_transpose::TileOrder::make(shape[0], shape[1], shape[2]);
    auto wide = order;
    wide.fits_32 = false;
    std::vector<int> seen(order.total, 0);
    for (int64_t t = 0; t < order.total; ++t) {
      int64_t item, ta, tb, item64, ta64, tb64;
      order.locate(t, item, ta, tb);
      wide.locate(t, item64, ta64, tb64);
      ASSERT_TRUE(item == item64 && ta == ta64 && tb == tb64) << "tile " << t;
      ASSERT_TRUE(item < shape[2] && ta < shape[0] && tb < shape[1]) << "tile " << t;
      ++seen[(item * shape[0] + ta) * shape[1] + tb];
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), order.total);
  }
}

// Tile streams (tile_order.cuh): the slots map onto every tile once, with fewer than K slots
// left over.
TEST(KernelsOnHost, TileStreamsVisitEveryTileOnce) {
  for (const auto& shape : std::vector<std::array<int64_t, 3>>{{10, 7, 3}, {1, 5, 1}, {17, 4, 2}, {3, 3, 5}, {64, 64, 1}}) {
    for (int shift = 1; shift <= 3; ++shift) {
      const int64_t total = shape[0] * shape[1] * shape[2];
      const auto streams = torch_transpose::TileStreams::make(total, shift);
      if (total < (int64_t{1} << shift)) {  // fewer tiles than streams: one stream
        EXPECT_EQ(streams.shift, 0);
        continue;
      }
      ASSERT_EQ(streams.shift, shift);
      EXPECT_LT(streams.slots - total, int64_t{1} << shift);
      std::vector<int> seen(total, 0);
      for (int64_t s = 0; s < streams.slots; ++s) {
        const int64_t t = streams.tile_of_slot(s);
        if (t < total) ++seen[t];
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), total) << "shift " << shift;
    }
  }
}

TEST(KernelsOnHost, SquareTilesPartialVectorsAndOffsets) {
  for (int e : kWidths) {
    // x[:, :130] of a 200 x 136 buffer: aligned rows, a fast dim that ends inside a vector.
    check_case(permute_case({200, 130}, {1, 0}, e, {136, 1}));
    check_case(permute_case({200, 130}, {1, 0}, e, {136, 1}, 1));  // misaligned base: narrower vectors
    check_case(permute_case({96, 80}, {1, 0}, e, {80, 1}, 8));
  }
}

// 2-byte square tiles of 8-byte vectors launch at 4 blocks per SM where the input side alone is
// off the 16-byte grid (wants_four_block_half_vector_tiles, tile_transpose.cuh), at 3 elsewhere;
// each case also runs through whichever instantiation the rule gives it.
TEST(KernelsOnHost, HalfVectorTileBlocksBySide) {
  const auto four = [](const Case& c) {
    const PlacedCase p = place(c);
    EXPECT_EQ(p.plan.vector_elems, 4) << c.name;
    return torch_transpose::wants_four_block_half_vector_tiles(p.plan, p.in_address, p.out_address);
  };
  const std::vector<std::pair<Case, bool>> cases = {
      {permute_case({136, 260}, {1, 0}, 2), true},             // input rows of 520 bytes, output rows of 272
      {permute_case({136, 256}, {1, 0}, 2, {}, 4), true},      // a base 8 bytes in
      {permute_case({2, 136, 300}, {0, 2, 1}, 2), true},       // a batch of rows of 600 bytes
      {permute_case({260, 136}, {1, 0}, 2), false},            // output rows of 520 bytes
      {permute_case({260, 260}, {1, 0}, 2), false},            // both sides
      {into_view(permute_case({136, 260}, {1, 0}, 2), {140, 1}, 0, "rows of 140"), false},
  };
  for (const auto& [c, takes_four] : cases) {
    EXPECT_EQ(four(c), takes_four) << c.name;
    check_case(c);
  }
}

// Window tile plans over two batch dims (lean window tiles take them) and over three (the window
// tile kernel's own walk): odd rows, a misaligned base.
std::vector<Case> window_batch_cases(int e) {
  return {permute_case({2, 3, 70, 99}, {1, 0, 3, 2}, e, {}, 3), permute_case({2, 2, 3, 33, 70}, {2, 1, 0, 4, 3}, e, {}, 1)};
}

// Window tiles (4- and 8-byte elements, no vectors on one side, unit-stride output rows):
// output rows off the sector grid (shifted windows, ragged row ends, the extra tile along b),
// rows on the grid with a misaligned or stepped input (unshifted), batches, `out=` views with
// an odd row pitch, and a stepped output (the scalar tile kernel's path).
TEST(KernelsOnHost, WindowTilesShiftedAndUnshifted) {
  for (int e : kWidths) {
    check_case(permute_case({130, 257}, {1, 0}, e));                 // odd rows both sides
    check_case(permute_case({200, 129}, {1, 0}, e, {129, 1}, 1));    // and a misaligned base
    check_case(permute_case({3, 70, 99}, {0, 2, 1}, e, {}, 3));      // batched, odd
    check_case(permute_case({65, 63}, {1, 0}, e, {67, 1}, 2));       // tiles cut on both dims
    check_case(permute_case({127, 96}, {1, 0}, e));                  // rows of 127: the extra tile along b
    check_case(permute_case({130, 250}, {1, 0}, e));                 // rows of 250: 8-byte vectors for 4-byte elements
    check_case(permute_case({3, 5, 66, 250}, {3, 2, 1, 0}, e, {}, 2));  // the same, reversed, misaligned base
    check_case(permute_case({200, 136}, {1, 0}, e, {137, 1}, 1));    // rows on the grid, input off it
    check_case(permute_case({100, 80}, {1, 0}, e, {160, 2}));        // stepped input: x[:, ::2]
    check_case(into_view(permute_case({97, 150}, {1, 0}, e), {157, 1}, 5 * 157 + 5, "buf[5:, 5:155]"));
    // rows of 128 shifted by one element
    check_case(into_view(permute_case({128, 40}, {1, 0}, e, {41, 1}), {133, 1}, 1, "buf[:, 1:129]"));
    check_case(into_view(permute_case({90, 70}, {1, 0}, e, {71, 1}), {181, 2}, 0, "buf[:, ::2]"));  // no windows
    for (const Case& c : window_batch_cases(e)) check_case(c);
  }
}

// Which window tile plans lean window tiles take (unless TORCH_TRANSPOSE_KERNELS=lean_window=0, as in
// ctest's fallback run, which sends them to the window tile kernel): two dims, one or two batch
// dims; not three batch dims.
TEST(KernelsOnHost, LeanWindowPlans) {
  if (torch_transpose::lean_window_override() == torch_transpose::Override::Never) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=lean_window=0";
  auto takes = [](const Case& c, bool expected) {
    expect_taken(c, expected, [&](const PlacedCase& placed, dim3& grid) {
      torch_transpose::LeanWindowArgs args;
      const bool taken = torch_transpose::make_lean_window_args<64>(placed.plan, 7, args, grid);
      EXPECT_EQ(args.two_batch_dims, expected && c.sizes.size() == 4) << placed.plan.explain();
      return taken;
    });
  };
  for (int e : {4, 8}) {
    takes(permute_case({130, 257}, {1, 0}, e), true);
    takes(permute_case({3, 70, 99}, {0, 2, 1}, e, {}, 3), true);
    const std::vector<Case> batches = window_batch_cases(e);
    takes(batches[0], true);    // two batch dims
    takes(batches[1], false);   // three
  }
}

// Realign window tiles (1- and 2-byte elements, unit-stride fast dims, rows off the 16-byte
// grid on either side; ctest's first run sets TORCH_TRANSPOSE_KERNELS=realign_window=1, so that every
// such plan takes them, and the fallback run 0; 1-byte tiles whose output rows lie on the sector
// grid store by byte quads, except in the forced run): input rows whose offset from the grid changes row by row, output rows
// shifted or on the sector grid, edge tiles on both dims, the extra chunk of a row's share, the
// input's first and last tiles reaching past its span (a misaligned base: the checked loads),
// batches, an expanded input, and `out=` views.
TEST(KernelsOnHost, RealignWindowTiles) {
  for (int e : {1, 2}) {
    const std::vector<Case> cases = {
        permute_case({130, 257}, {1, 0}, e),                     // odd rows both sides, edge tiles
        permute_case({600, 300}, {1, 0}, e),                     // interior tiles too
        permute_case({600, 301}, {1, 0}, e, {301, 1}, 1),        // and a misaligned base
        permute_case({256, 131}, {1, 0}, e),                     // output rows on the sector grid
        permute_case({300, 144}, {1, 0}, e, {147, 1}, 5),        // input rows of 147, output of 300
        permute_case({200, 129}, {1, 0}, e, {129, 1}, 1),
        permute_case({3, 70, 99}, {0, 2, 1}, e, {}, 3),          // batched, odd
        permute_case({2, 300, 290}, {0, 2, 1}, e, {87002, 290, 1}, 7),
        permute_case({3, 200, 300}, {0, 2, 1}, e, {0, 301, 1}, 1),  // expanded batch: every item the same
        permute_case({4, 40, 50, 65}, {3, 2, 1, 0}, e, {}, 2),   // a reversal
        into_view(permute_case({97, 150}, {1, 0}, e), {157, 1}, 5 * 157 + 5, "buf[5:, 5:155]"),
        into_view(permute_case({300, 100}, {1, 0}, e, {101, 1}), {333, 1}, 1, "buf[:, 1:301]"),
        // output rows on the sector grid with a ragged end and a part quad of rows (byte quads)
        into_view(permute_case({130, 250}, {1, 0}, e), {160, 1}, 0, "buf[:, :130] of rows of 160"),
    };
    // Input rows on the 16-byte grid (the kernel's aligned-input form, unless ctest's forced
    // run switches it off): shifted output rows, edge tiles on both dims, rows whose last chunk
    // runs past size_a into the row's padding (and past the input's span in the last row), a
    // batch, an expanded batch, and an `out=` view.
    const std::vector<Case> aligned = {
        permute_case({257, 128}, {1, 0}, e),
        permute_case({300, 100}, {1, 0}, e, {112, 1}),
        permute_case({3, 71, 96}, {0, 2, 1}, e),
        permute_case({3, 130, 256}, {0, 2, 1}, e, {0, 256, 1}),
        into_view(permute_case({250, 160}, {1, 0}, e), {253, 1}, 3, "buf[:, 3:253]"),
    };
    for (bool on_grid : {false, true}) {
      for (const Case& c : on_grid ? aligned : cases) {
        const uintptr_t in_address = 4096 + c.in_offset * e, out_address = 4096 + c.out_offset * e;
        const LayoutPlan plan = plan_of(c, in_address, out_address);
        EXPECT_TRUE(torch_transpose::realign_window_fits(plan, 256 / e, 32 / e)) << c.name;
        EXPECT_EQ(torch_transpose::input_rows_on_chunk_grid(plan, in_address), on_grid) << c.name;
        check_case(c);
      }
    }
  }
}

// Whether span tiles fit the case's plan at check_case's addresses (4096 bytes past an aligned
// base, plus the case's offsets).
bool span_tiles_fit_case(const Case& c) {
  const uintptr_t out_address = 4096 + c.out_offset * c.element_bytes;
  const LayoutPlan plan = plan_of(c, 4096 + c.in_offset * c.element_bytes, out_address);
  return torch_transpose::span_tiles_fit(plan, torch_transpose::FastDims::from_plan(plan), out_address);
}

TEST(KernelsOnHost, SpanTiles) {
  for (int e : {1, 2, 4, 8}) {
    const std::vector<Case> cases = {
        permute_case({12, 80, 7, 7}, {0, 2, 3, 1}, e),         // rows of 49; 80 channels: a part tile
        permute_case({2, 1040, 7, 7}, {0, 2, 3, 1}, e, {}, 1),  // tiles of 4 lines, the last a part one
        permute_case({2, 608, 10, 10}, {0, 2, 3, 1}, e, {}, 2),  // tiles of 2 lines
        permute_case({5, 144, 7, 7}, {0, 2, 3, 1}, e, {}, 3),  // and a base off the grid
        permute_case({2, 208, 14, 14}, {0, 2, 3, 1}, e, {}, 1),
        permute_case({2, 80, 16, 16}, {0, 2, 3, 1}, e, {}, 5),  // rows of 256, the longest taken
        permute_case({30, 48, 32}, {0, 2, 1}, e, {}, 7),        // rows of 32
        permute_case({3, 256, 40}, {0, 2, 1}, e, {0, 40, 1}, 1),  // expanded batch: every item the same
        permute_case({2, 3, 48, 6, 7}, {0, 1, 3, 4, 2}, e, {}, 2),
        permute_case({4, 64, 35}, {0, 2, 1}, e, {64 * 35 + 1, 35, 1}),
        permute_case({4, 80, 143}, {0, 2, 1}, e, {80 * 143 + 3, 143, 1}, 1),
        permute_case({4, 64, 54}, {0, 2, 1}, e, {64 * 54 + 1, 54, 1}, 2),
        // output rows padded past the channels: the last vector of a row cut by the tile's end
        into_view(permute_case({130, 50}, {1, 0}, e), {160, 1}, 2 * 160, "buf[2:, :130] of rows of 160"),
        into_view(permute_case({3, 70, 45}, {0, 2, 1}, e, {}, 9), {45 * 112, 112, 1}, 16, "buf[:, :, 16:86]"),
    };
    for (const Case& c : cases) {
      EXPECT_TRUE(span_tiles_fit_case(c)) << c.name;
      // sm_count 1: every 2-byte case has at least 4 tiles per SM, so the rule stores whole lines;
      // 1000: none has, so it stores in pairs (other widths: pairs both times, unless forced).
      check_case(c, 1);
      check_case(c, 1000);
    }
  }
}

// Plans span tiles refuse: rows longer than kSpanMaxRowElems, rows not packed (a sliced input),
// a strided input fast dim, output rows off the 16-byte grid (a row stride or a base), and
// 16-byte elements.
TEST(KernelsOnHost, SpanTilePlans) {
  const auto fits = span_tiles_fit_case;
  EXPECT_FALSE(fits(permute_case({8, 64, 257}, {0, 2, 1}, 2)));
  EXPECT_TRUE(fits(permute_case({8, 64, 256}, {0, 2, 1}, 2)));
  EXPECT_FALSE(fits(permute_case({8, 64, 49}, {0, 2, 1}, 2, {64 * 52, 52, 1})));   // x[..., :49] of rows of 52
  EXPECT_FALSE(fits(permute_case({8, 64, 49}, {0, 2, 1}, 2, {64 * 98, 98, 2})));   // x[..., ::2]
  EXPECT_FALSE(fits(into_view(permute_case({130, 50}, {1, 0}, 2), {132, 1}, 0, "rows of 132")));
  EXPECT_FALSE(fits(into_view(permute_case({130, 50}, {1, 0}, 2), {160, 1}, 4, "buf[:, 4:134]")));
  EXPECT_FALSE(fits(permute_case({8, 64, 49}, {0, 2, 1}, 16)));
  for (int e : kWidths) check_case(permute_case({8, 64, 49}, {0, 2, 1}, e, {64 * 52, 52, 1}));  // the refused route
}

// Whether output span tiles fit the case's plan, and whether its input rows' segments all start
// on the 16-byte grid at check_case's addresses (asynchronous copies; otherwise realigned loads).
bool output_span_tiles_fit_case(const Case& c) {
  const PlacedCase placed = place(c);
  return torch_transpose::output_span_tiles_fit(placed.plan, torch_transpose::FastDims::from_plan(placed.plan));
}
bool output_span_input_on_grid_case(const Case& c) {
  const PlacedCase placed = place(c);
  return torch_transpose::output_span_input_on_grid(placed.plan, torch_transpose::FastDims::from_plan(placed.plan),
                                                    placed.in_address);
}

// Output span tiles (output rows of up to kSpanMaxRowElems packed back to back; the first ctest
// run has them off, the rule run takes 1- and 2-byte plans whose output rows are not whole
// 16-byte vectors and, from input rows off the grid, 1- to 4-byte ones; the forced run every plan
// that fits; the emulated asynchronous copies land only when the block waits for them).
TEST(KernelsOnHost, OutputSpanTiles) {
  for (int e : {1, 2, 4, 8}) {
    const int64_t v = 16 / e;
    const std::vector<Case> cases = {
        permute_case({12, 7, 7, 80}, {0, 3, 1, 2}, e),          // rows of 49; 80 channels: a part tile
        permute_case({2, 7, 7, 1040}, {0, 3, 1, 2}, e),         // tiles of 4 lines, the last a part one
        permute_case({2, 10, 10, 608}, {0, 3, 1, 2}, e),        // tiles of 2 lines
        permute_case({2, 14, 14, 208}, {0, 3, 1, 2}, e),        // tiles of 1 line
        permute_case({2, 16, 16, 80}, {0, 3, 1, 2}, e),         // rows of 256, the longest taken
        permute_case({30, 32, 48}, {0, 2, 1}, e),               // rows of 32
        permute_case({100, 1024}, {1, 0}, e),                   // one matrix, rows of 100
        // x[..., :75] of rows of 80: every segment's last 75 % v elements one by one
        permute_case({2, 7, 7, 75}, {0, 3, 1, 2}, e, {49 * 80, 7 * 80, 80, 1}),
        permute_case({3, 40, 256}, {0, 2, 1}, e, {0, 256, 1}),  // expanded batch: every item the same
        permute_case({2, 3, 6, 7, 48}, {0, 1, 4, 2, 3}, e),
        // output items one element further apart than packed: each span starts elsewhere off
        // the grid (and 7 x 7 x 64 moves whole vectors only when the start is on it)
        into_view(permute_case({5, 7, 7, 64}, {0, 3, 1, 2}, e), {64 * 49 + 1, 49, 7, 1}, 0, "items 1 apart"),
        into_view(permute_case({4, 5, 9, 3 * v}, {0, 3, 1, 2}, e), {3 * v * 45 + 3, 45, 9, 1}, 5, "items 3 apart at 5"),
        into_view(permute_case({130, 64}, {1, 0}, e), {130, 1}, 1, "buf[1:] of rows of 130"),
    };
    for (const Case& c : cases) {
      EXPECT_TRUE(output_span_tiles_fit_case(c)) << c.name;
      EXPECT_TRUE(output_span_input_on_grid_case(c)) << c.name;
      check_case(c);
    }
  }
}

// The same from input rows off the 16-byte grid (realigned loads; a row's segment starts at any
// offset from the grid): ViT-B's attention maps (rows of 197: a last tile of 5 output rows, whose
// segments take one or two chunks), channels whose count is no multiple of a vector at tiles of
// 4, 2 and 1 lines, the last tile's segments ending inside their last chunk, an input base 1-3
// elements in (the first tile's cover starts before the input and the last one's ends past it:
// those chunks are read through load_chunk_inside, byte by byte inside the input's span), rows of
// 77 cut to 75 and to 40 (the cover past the segment holds the row's other elements), an
// expanded batch, input batch items 1 element apart, and an `out=` view off the grid.
TEST(KernelsOnHost, OutputSpanTilesFromRowsOffTheGrid) {
  for (int e : {1, 2, 4, 8}) {
    const std::vector<Case> cases = {
        permute_case({3, 197, 197}, {0, 2, 1}, e),               // rows of 197, tiles of 1 line
        permute_case({2, 7, 7, 1041}, {0, 3, 1, 2}, e),          // tiles of 4 lines
        permute_case({2, 10, 10, 609}, {0, 3, 1, 2}, e, {}, 1),  // tiles of 2 lines, base 1 in
        permute_case({2, 14, 14, 209}, {0, 3, 1, 2}, e, {}, 3),  // tiles of 1 line, base 3 in
        permute_case({2, 7, 7, 75}, {0, 3, 1, 2}, e, {49 * 77, 7 * 77, 77, 1}),
        permute_case({2, 7, 7, 40}, {0, 3, 1, 2}, e, {49 * 77, 7 * 77, 77, 1}, 2),
        permute_case({3, 40, 255}, {0, 2, 1}, e, {0, 255, 1}),  // expanded batch
        permute_case({4, 64, 96}, {0, 2, 1}, e, {64 * 96 + 1, 96, 1}),  // items 1 apart, rows on the grid
        into_view(permute_case({3, 50, 33}, {0, 2, 1}, e, {}, 1), {33 * 50 + 1, 50, 1}, 3, "items 1 apart at 3"),
    };
    for (const Case& c : cases) {
      EXPECT_TRUE(output_span_tiles_fit_case(c)) << c.name;
      EXPECT_FALSE(output_span_input_on_grid_case(c)) << c.name;
      check_case(c);
    }
  }
}

// Parts per tile (whole items or parts of them) that item tiles would take for the case (0: not
// theirs), at check_case's addresses.
int item_tile_parts_case(const Case& c) {
  const PlacedCase placed = place(c);
  const torch_transpose::FastDims f = torch_transpose::FastDims::from_plan(placed.plan);
  if (!torch_transpose::output_span_tiles_fit(placed.plan, f)) return 0;
  const bool aligned = torch_transpose::output_span_input_on_grid(placed.plan, f, placed.in_address);
  return torch_transpose::item_tile_parts(f, placed.plan.numel / (f.size_a * f.size_b), c.element_bytes, aligned);
}

// Item tiles (output span tiles' plans whose input rows fit one 128-byte line: several whole
// items a tile, as many as load in one round and fit 40 KB, up to 8; ctest's rule run takes them,
// where output span tiles' rule does, for cases past the direct kernel's 32768 elements; the
// forced run has them off, so output span tiles of one item meet these plans too). CLIP's and
// Swin's attention maps (rows of 50 and 49 off the grid; 20 items: tiles of 5, 15: 5), output rows
// of 100 from input rows of 41 (tiles of 2) and of 80 (13 items: tiles of 3, the last of 1), rows
// of 112 bytes from a base off the grid (covers of the whole 8 chunks), input items 1 element
// apart, an expanded batch, two batch dims, rows cut short of a stride on the grid, rows on the
// grid of 48 and 32 elements (128 bytes for the 4-byte ones: covers of 8 chunks), and `out=`
// views whose items start at every offset from the grid.
TEST(KernelsOnHost, ItemTiles) {
  for (int e : {1, 2, 4, 8}) {
    struct ItemCase {
      Case c;
      int64_t size_a;  // input row length
    };
    const std::vector<ItemCase> cases = {
        {permute_case({20, 50, 50}, {0, 2, 1}, e), 50},
        {permute_case({15, 49, 49}, {0, 2, 1}, e, {}, 3), 49},
        {permute_case({9, 100, 41}, {0, 2, 1}, e), 41},
        {permute_case({12, 60, 56}, {0, 2, 1}, e, {}, 1), 56},
        {permute_case({10, 60, 50}, {0, 2, 1}, e, {60 * 50 + 1, 50, 1}), 50},
        {permute_case({12, 60, 50}, {0, 2, 1}, e, {0, 50, 1}), 50},
        {permute_case({3, 5, 50, 50}, {0, 1, 3, 2}, e), 50},
        {into_view(permute_case({16, 50, 50}, {0, 2, 1}, e), {50 * 50 + 3, 50, 1}, 5, "items 3 apart at 5"), 50},
        {permute_case({12, 60, 50}, {0, 2, 1}, e, {60 * 64, 64, 1}), 50},
        {permute_case({20, 50, 48}, {0, 2, 1}, e), 48},
        {permute_case({30, 50, 32}, {0, 2, 1}, e), 32},
        {permute_case({13, 80, 41}, {0, 2, 1}, e), 41},  // tiles of 3 items, the last of 1
        {into_view(permute_case({14, 50, 48}, {0, 2, 1}, e), {48 * 50 + 1, 50, 1}, 2, "items 1 apart at 2"), 48},
    };
    for (const ItemCase& ic : cases) {
      const Case& c = ic.c;
      EXPECT_TRUE(output_span_tiles_fit_case(c)) << c.name;
      const int64_t row_bytes = output_span_input_on_grid_case(c) ? 128 : 112;
      const int64_t items = c.sizes[0] * (c.sizes.size() == 4 ? c.sizes[1] : 1);
      const int64_t span_bytes = (c.sizes[c.sizes.size() - 2] * c.sizes.back() * e + 30) / 16 * 16;
      const int64_t expected = std::min<int64_t>({8, 256 / c.sizes.back(), 40 * 1024 / span_bytes, items});
      const bool fits = e <= 4 && ic.size_a * e <= row_bytes && expected >= 2;
      // Longer rows of 1- to 4-byte elements are cut into parts (ItemParts checks those counts).
      if (e == 8 || ic.size_a * e <= row_bytes) EXPECT_EQ(item_tile_parts_case(c), fits ? expected : 0) << c.name;
      if (e == 2 && c.sizes.back() == 50 && c.sizes[c.sizes.size() - 2] == 50) EXPECT_EQ(item_tile_parts_case(c), 5) << c.name;
      check_case(c);
    }
  }
}

// Item tiles of items cut into parts (input rows longer than item tiles' 112 bytes, or 128 on the
// 16-byte grid): the rule cuts those whose input rows are off the grid, and
// TORCH_TRANSPOSE_KERNELS=item_parts=1 (ctest's item parts run) those on it too. Parts are balanced, and
// from rows on the grid whole vectors. ViT-B's attention maps (rows of 197: 4 parts of 50, the
// last of 47, for 2-byte elements; a tile of one part), rows of 255 from a base 1-3 elements in
// (the first and last parts' covers cross the input's ends), channels into output rows of 49 (5
// parts a tile, a tile's parts from two items), rows of 2049 channels on the grid (a last part of
// one row) and off it, rows of 2042 on the grid (a stride of 2048), rows of 77 cut to 75, an
// expanded batch, two batch dims, and `out=` views whose parts start at every offset from the
// grid.
TEST(KernelsOnHost, ItemParts) {
  using torch_transpose::item_parts;
  EXPECT_EQ(item_parts(197, 2, false).rows, 50);
  EXPECT_EQ(item_parts(197, 2, false).per_item, 4);
  EXPECT_EQ(item_parts(197, 1, false).rows, 99);
  EXPECT_EQ(item_parts(197, 1, false).per_item, 2);
  EXPECT_EQ(item_parts(56, 2, false).per_item, 1);
  EXPECT_EQ(item_parts(57, 2, false).rows, 29);
  EXPECT_EQ(item_parts(2049, 2, true).rows, 64);  // ceil(2049 / 33) = 63, whole vectors: 64
  EXPECT_EQ(item_parts(2049, 2, true).per_item, 33);
  EXPECT_EQ(item_parts(2048, 4, true).rows, 32);
  const torch_transpose::Override setting = torch_transpose::item_parts_override();
  for (int e : {1, 2, 4}) {
    const std::vector<Case> cases = {
        permute_case({3, 197, 197}, {0, 2, 1}, e),
        permute_case({2, 255, 255}, {0, 2, 1}, e, {}, 1),
        permute_case({2, 2, 130, 257}, {0, 1, 3, 2}, e, {}, 3),
        permute_case({3, 7, 7, 1041}, {0, 3, 1, 2}, e),
        permute_case({2, 7, 7, 2049}, {0, 3, 1, 2}, e),
        permute_case({2, 7, 7, 75}, {0, 3, 1, 2}, e, {49 * 77, 7 * 77, 77, 1}),
        permute_case({3, 40, 255}, {0, 2, 1}, e, {0, 255, 1}),
        permute_case({2, 7, 7, 2048}, {0, 3, 1, 2}, e),  // on the grid
        permute_case({2, 7, 7, 2049}, {0, 3, 1, 2}, e, {49 * 2064, 7 * 2064, 2064, 1}),  // on the grid: a last part of 1
        permute_case({2, 7, 7, 2042}, {0, 3, 1, 2}, e, {49 * 2048, 7 * 2048, 2048, 1}),  // on the grid, cut
        into_view(permute_case({3, 197, 197}, {0, 2, 1}, e, {}, 2), {197 * 197 + 1, 197, 1}, 3, "items 1 apart at 3"),
        into_view(permute_case({2, 7, 7, 1040}, {0, 3, 1, 2}, e), {1040 * 49 + 5, 49, 7, 1}, 1, "items 5 apart at 1"),
    };
    for (const Case& c : cases) {
      ASSERT_TRUE(output_span_tiles_fit_case(c)) << c.name;
      const bool aligned = output_span_input_on_grid_case(c);
      const int k = item_tile_parts_case(c);
      const bool long_rows = c.sizes.back() * e > (aligned ? 128 : 112);  // the input rows' length
      const bool cut = setting == torch_transpose::Override::Always || (setting == torch_transpose::Override::Rule && !aligned);
      if (long_rows) EXPECT_EQ(k > 0, cut) << c.name;
      EXPECT_LE(k, 8) << c.name;
      if (c.sizes.back() == 197 && e == 2 && cut) EXPECT_EQ(k, 1) << c.name;  // 197 pairs: one round
      if (c.sizes.size() == 4 && c.sizes[1] == 7 && c.sizes[3] >= 1040 && cut) EXPECT_EQ(k, 5) << c.name;  // 49 pairs a part
      check_case(c);
    }
  }
}

// Plans output span tiles refuse: output rows longer than kSpanMaxRowElems or not packed, a
// strided fast dim, and 16-byte elements; and those whose input rows are off the 16-byte grid
// (a row stride, a base or a batch stride: realigned loads).
TEST(KernelsOnHost, OutputSpanTilePlans) {
  const auto fits = output_span_tiles_fit_case;
  const auto on_grid = output_span_input_on_grid_case;
  EXPECT_TRUE(fits(permute_case({8, 256, 64}, {0, 2, 1}, 2)));
  EXPECT_FALSE(fits(permute_case({8, 257, 64}, {0, 2, 1}, 2)));
  EXPECT_FALSE(fits(into_view(permute_case({100, 64}, {1, 0}, 2), {104, 1}, 0, "rows of 104")));
  EXPECT_FALSE(fits(permute_case({8, 49, 64}, {0, 2, 1}, 2, {49 * 128, 128, 2})));  // x[..., ::2]
  EXPECT_FALSE(fits(permute_case({8, 49, 64}, {0, 2, 1}, 16)));
  EXPECT_TRUE(on_grid(permute_case({8, 49, 64}, {0, 2, 1}, 2)));
  EXPECT_FALSE(on_grid(permute_case({8, 49, 60}, {0, 2, 1}, 2)));                 // input rows of 60 halves
  EXPECT_FALSE(on_grid(permute_case({8, 49, 64}, {0, 2, 1}, 2, {}, 1)));          // input base off the grid
  EXPECT_FALSE(on_grid(permute_case({8, 49, 64}, {0, 2, 1}, 2, {49 * 64 + 4, 64, 1})));  // items 4 apart
  for (int e : kWidths) check_case(permute_case({8, 49, 64}, {0, 2, 1}, e, {49 * 128, 128, 2}));  // the refused route
  // The rules: 1- to 4-byte output rows that are not whole 16-byte vectors; from input rows off
  // the grid, 1- and 2-byte elements.
  EXPECT_TRUE(torch_transpose::output_span_tiles_by_default(1, 4));
  EXPECT_TRUE(torch_transpose::output_span_tiles_by_default(2, 1));
  EXPECT_TRUE(torch_transpose::output_span_tiles_by_default(4, 2));
  EXPECT_FALSE(torch_transpose::output_span_tiles_by_default(1, 16));
  EXPECT_FALSE(torch_transpose::output_span_tiles_by_default(4, 4));
  EXPECT_FALSE(torch_transpose::output_span_tiles_by_default(8, 1));
  EXPECT_TRUE(torch_transpose::output_span_realign_by_default(2));
  EXPECT_FALSE(torch_transpose::output_span_realign_by_default(4));
}

TEST(KernelsOnHost, FlatTilesDenseAndLineWalks) {
  for (int e : kWidths) {
    check_case(permute_case({2000, 16}, {1, 0}, e));   // dense load, line store
    check_case(permute_case({16, 2000}, {1, 0}, e));   // line load, dense store
    check_case(permute_case({1500, 3}, {1, 0}, e));
    check_case(permute_case({3, 1500}, {1, 0}, e));
    check_case(permute_case({999, 7}, {1, 0}, e));
    check_case(permute_case({300, 8, 8}, {0, 2, 1}, e));  // groups of tiny matrices
    check_case(permute_case({5, 130, 3}, {0, 2, 1}, e));
    check_case(permute_case({2, 3, 20, 22}, {0, 2, 3, 1}, e));  // NCHW -> NHWC, C = 3
    check_case(permute_case({2, 20, 22, 3}, {0, 3, 1, 2}, e));  // NHWC -> NCHW, C = 3
    check_case(permute_case({2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}, e));
    check_case(permute_case({3, 30, 4, 5, 60}, {4, 2, 0, 3, 1}, e));  // fast dims 60 and 30
    check_case(permute_case({1000, 20}, {1, 0}, e));   // narrow dims above the narrow kernel's 16
    check_case(permute_case({31, 1000}, {1, 0}, e));
  }
}

// Box tiles (a and b whole, a chunk of a batch dim): the 5-D permute's shape with the dim of
// 50 continuing runs on both sides, the same with a prime 53 (chunks of one item), batches of
// small matrices as one run per side, a misaligned base (scalar walks), an odd chunk, a side
// whose walk wraps inside a vector, and an output slice with a gap after each row. The plan
// test below proves these take the box path.
std::vector<Case> box_cases(int e) {
  std::vector<Case> cases = {
      permute_case({2, 30, 3, 50, 60}, {4, 2, 0, 3, 1}, e),
      permute_case({2, 30, 3, 53, 60}, {4, 2, 0, 3, 1}, e),
      permute_case({2, 30, 3, 50, 60}, {4, 2, 0, 3, 1}, e, {}, 1),
      permute_case({300, 8, 8}, {0, 2, 1}, e),
      permute_case({300, 8, 8}, {0, 2, 1}, e, {}, 5),
      permute_case({7, 45, 6, 10}, {3, 1, 0, 2}, e),
      permute_case({12, 3, 40, 20}, {1, 3, 0, 2}, e),
      permute_case({64, 5, 12}, {0, 2, 1}, e),
      permute_case({800, 7, 9}, {0, 2, 1}, e),  // chunks of whole vectors below the largest (box_chunk)
      permute_case({960, 3, 5}, {0, 2, 1}, e),   // periodic stores of a short period (15 1-byte vectors)
      permute_case({640, 11, 13}, {0, 2, 1}, e), // 1-byte: a period of 143 vectors, too long for periodic stores
  };
  cases.push_back(out_slice_case(e));
  // Output lines (d0) of 24 and 12 elements: 8-byte stores for 1- and 2-byte elements.
  cases.push_back(permute_case({2, 24, 3, 50, 60}, {4, 2, 0, 3, 1}, e));
  cases.push_back(permute_case({2, 12, 3, 50, 60}, {4, 2, 0, 3, 1}, e));
  return cases;
}

TEST(KernelsOnHost, BoxTiles) {
  for (int e : kWidths)
    for (const Case& c : box_cases(e)) check_case(c);
}

// A case's box tile arguments where it is placed as the plan tests place it (place): whether the
// plan fits box tiles, and each side's vector width.
struct BoxPlan {
  PlacedCase placed;
  bool fits = false;
  torch_transpose::BoxTileArgs args;
  int load_v = 0, store_v = 0;
};

BoxPlan box_plan(const Case& c) {
  BoxPlan b{place(c)};
  b.fits = torch_transpose::make_box_tile_args(b.placed.plan, b.placed.in_address, b.placed.out_address, b.args, b.load_v,
                                               b.store_v);
  return b;
}

// The cases above reach the box kernel (unless TORCH_TRANSPOSE_KERNELS=box_tile=0), with 16-byte
// walks on both sides for the aligned 5-D and small-matrix cases.
TEST(KernelsOnHost, BoxTilePlans) {
  if (!torch_transpose::box_tile_enabled()) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=box_tile=0";
  const std::vector<Case> cases = box_cases(4);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.name);
    const BoxPlan b = box_plan(c);
    ASSERT_TRUE(b.fits) << b.placed.plan.explain();
    const torch_transpose::BoxTileArgs& args = b.args;
    const int load_v = b.load_v, store_v = b.store_v;
    if (i == 0 || i == 3) {  // 5-D with 50, 300 x 8 x 8: aligned bases and strides
      EXPECT_EQ(load_v, 4);
      // The 5-D shape's store side (d0 = 30) takes 8-byte stores unless they are switched off.
      EXPECT_EQ(store_v, i == 0 && torch_transpose::box_half_stores() ? 2 : 4);
    }
    if (i == 0) {
      // The 5-D shape: chunks of 2 of the dim of 50 (the largest divisor within 16 KB), so each
      // tile holds 60 x 30 x 2 elements in 900 vectors a side.
      EXPECT_EQ(args.load.vectors, 60u * 30u * 2u / 4u);
      EXPECT_EQ(args.total_tiles, 2u * 3u * 25u);
    }
  }
}

// Tiny matrices whose largest chunk in the window is not whole 16-byte vectors (800 x 7 x 9:
// 2-byte 100 and 4-byte 50 items, 12600 bytes) take the largest chunk that is (80 and 40 items,
// 10080 bytes) and 16-byte walks on both sides; under TORCH_TRANSPOSE_KERNELS=box_vector_chunks=0 (ctest's
// forced run) the largest chunk and element-by-element walks. 1-byte elements have no whole-vector
// chunk in the window (200 items, 12600 bytes), so they take one below it (160 items, 10080 bytes;
// the largest, 200, under the switch); 8-byte elements (32 items, 16128 bytes) keep the largest.
// Tiles of whole vectors load densely (BoxTileArgs::dense_loads) unless TORCH_TRANSPOSE_KERNELS=box_dense_loads=0.
TEST(KernelsOnHost, BoxVectorChunks) {
  if (!torch_transpose::box_tile_enabled()) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=box_tile=0";
  const bool vector_chunks = torch_transpose::box_vector_chunks();
  struct Expected {
    int e;
    uint32_t tiles;  // 800 / chunk
    int v;           // both sides' vector width in elements
  };
  const Expected expected[] = {{1, vector_chunks ? 5u : 4u, vector_chunks ? 16 : 1},  // 160 below the window's 200
                               {2, vector_chunks ? 10u : 8u, vector_chunks ? 8 : 1},
                               {4, vector_chunks ? 20u : 16u, vector_chunks ? 4 : 1},
                               {8, 25, 2}};
  for (const Expected& x : expected) {
    const Case c = permute_case({800, 7, 9}, {0, 2, 1}, x.e);
    SCOPED_TRACE(c.name);
    const BoxPlan b = box_plan(c);
    ASSERT_TRUE(b.fits) << b.placed.plan.explain();
    EXPECT_EQ(b.args.total_tiles, x.tiles);
    EXPECT_EQ(b.load_v, x.v);
    EXPECT_EQ(b.store_v, x.v);
    // 7 x 9 is odd both ways, so the vector load walk is the tile's layout in global and shared
    // memory alike (BoxTileArgs::dense_loads).
    EXPECT_EQ(b.args.dense_loads, x.v > 1 && torch_transpose::box_dense_loads_enabled());
    // The output is one run too, of 63-element items: a period of 63 vectors, so 4 x 63 threads
    // store, each 4 x 63 vectors on (4 x V matrices further in shared memory) at every step.
    const bool periodic = x.v > 1 && torch_transpose::box_periodic_stores_enabled();
    EXPECT_EQ(b.args.periodic_lanes, periodic ? 252u : 0u);
    EXPECT_EQ(b.args.periodic_shift, periodic ? 4 * x.v * b.args.store.s2 : 0);
  }
  // Even extents pad the shared rows (8 x 8: a row pitch of 9), so no dense loads there; stores
  // are still periodic (64-element items: 16 4-element vectors, every thread stores).
  const BoxPlan even = box_plan(permute_case({300, 8, 8}, {0, 2, 1}, 4));
  ASSERT_TRUE(even.fits) << even.placed.plan.explain();
  EXPECT_EQ(even.load_v, 4);
  EXPECT_FALSE(even.args.dense_loads);
  EXPECT_EQ(even.args.periodic_lanes, torch_transpose::box_periodic_stores_enabled() ? 256u : 0u);
  // 1-byte 11 x 13 matrices in chunks of 80 (whole vectors): a period of 143 vectors would idle
  // 113 of 256 threads, so they keep the store walk.
  const BoxPlan long_period = box_plan(permute_case({640, 11, 13}, {0, 2, 1}, 1));
  ASSERT_TRUE(long_period.fits) << long_period.placed.plan.explain();
  EXPECT_EQ(long_period.store_v, 16);
  EXPECT_EQ(long_period.args.periodic_lanes, 0u);
  // Items 72 elements apart in the output (a gap of 8 after each 8 x 8 matrix): 16-byte stores,
  // but not one run, so no periodic stores.
  const BoxPlan gaps = box_plan(into_view(permute_case({300, 8, 8}, {0, 2, 1}, 4), {72, 8, 1}, 0, "buf[:, :64] of rows of 72"));
  ASSERT_TRUE(gaps.fits) << gaps.placed.plan.explain();
  EXPECT_EQ(gaps.store_v, 4);
  EXPECT_EQ(gaps.args.periodic_lanes, 0u);
  check_case(into_view(permute_case({300, 8, 8}, {0, 2, 1}, 4), {72, 8, 1}, 0, "buf[:, :64] of rows of 72"));
}

// Gather tiles (a tile over a and the output's run: b and the dims that continue it): the 5-D
// permute's shape (a = 60: one partial a tile for 4- and 8-byte elements), a run whose length is
// no multiple of a tile (its last tile masked), a spanning three tiles with a partial last one,
// one and two batch dims, a run of three dims, an expanded run dim, an output whose rows have a
// gap, a = 48 (under half a tile of 128), and two that do not fit (a misaligned base, three batch
// dims) and so take other kernels. The run's dims come in another order in the input, or the
// plan would merge them.
std::vector<Case> gather_cases(int e) {
  return {
      permute_case({2, 30, 3, 50, 60}, {4, 2, 0, 3, 1}, e),
      permute_case({2, 24, 3, 10, 80}, {4, 2, 0, 3, 1}, e),      // run of 1440: a last half tile
      permute_case({20, 4, 144}, {2, 1, 0}, e),                  // a of 144: 64 + 64 + 16 (fp32)
      permute_case({3, 20, 4, 144}, {0, 3, 2, 1}, e),            // one batch dim
      permute_case({2, 3, 24, 4, 80}, {1, 0, 4, 3, 2}, e),       // two batch dims
      permute_case({3, 24, 4, 80}, {3, 0, 2, 1}, e),             // a run of three dims
      permute_case({20, 4, 144}, {2, 1, 0}, e, {144, 0, 1}),     // an expanded run dim (stride 0)
      into_view(permute_case({20, 4, 144}, {2, 1, 0}, e), {96, 20, 1}, 16, "buf[:, 16:96] as 144x4x20"),
      permute_case({20, 4, 48}, {2, 1, 0}, e),                   // a = 48
      permute_case({20, 4, 144}, {2, 1, 0}, e, {}, 1),           // misaligned base: not taken
      permute_case({2, 2, 2, 24, 4, 80}, {2, 1, 0, 5, 4, 3}, e), // three batch dims: not taken
  };
}

TEST(KernelsOnHost, GatherTiles) {
  for (int e : kWidths)
    for (const Case& c : gather_cases(e)) check_case(c);
}

// The side of the gather tiles that launch_gather_tile gives e-byte elements (its TileShape; 16-byte
// elements take none, and make_gather_tile_args refuses them whatever the side).
int gather_tile_side(int e) {
  return e <= 2 ? torch_transpose::TileShape<2>::kTile : torch_transpose::TileShape<4>::kTile;
}

// Whether gather tiles of that side fit a placed case (make_gather_tile_args), and their grid
// and arguments.
bool gather_tiles_fit(const PlacedCase& placed, int e, dim3& grid, torch_transpose::GatherTileArgs& args) {
  return gather_tile_side(e) == torch_transpose::TileShape<2>::kTile
             ? torch_transpose::make_gather_tile_args<torch_transpose::TileShape<2>::kTile>(
                   placed.plan, placed.in_address, placed.out_address, e, args, grid)
             : torch_transpose::make_gather_tile_args<torch_transpose::TileShape<4>::kTile>(
                   placed.plan, placed.in_address, placed.out_address, e, args, grid);
}
bool gather_tiles_fit(const PlacedCase& placed, int e, dim3& grid) {
  torch_transpose::GatherTileArgs args;
  return gather_tiles_fit(placed, e, grid, args);
}

// Which of those plans gather tiles take (unless TORCH_TRANSPOSE_KERNELS=gather_tile=0): all but the last
// two for 1-, 2-, 4- and 8-byte elements, except the 5-D shape's a = 60 for 1- and 2-byte
// elements (no whole 16-byte vectors) and a = 48 for them (tiles of 128: the rule asks a to fill
// half a tile, which TORCH_TRANSPOSE_KERNELS=gather_tile=1 overrides); no 16-byte elements; not b alone.
TEST(KernelsOnHost, GatherTilePlans) {
  const torch_transpose::Override setting = torch_transpose::gather_tile_override();
  if (setting == torch_transpose::Override::Never) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=gather_tile=0";
  auto takes = [](const Case& c, bool expected) {
    expect_taken(c, expected,
                 [&](const PlacedCase& placed, dim3& grid) { return gather_tiles_fit(placed, c.element_bytes, grid); });
  };
  for (int e : kWidths) {
    const std::vector<Case> cases = gather_cases(e);
    for (size_t i = 0; i < cases.size(); ++i) {
      bool expected = e <= 8 && i + 2 < cases.size();
      if (e <= 2 && i == 0) expected = false;
      if (e <= 2 && i == 8) expected = setting == torch_transpose::Override::Always;
      takes(cases[i], expected);
    }
  }
  takes(permute_case({256, 384}, {1, 0}, 4), false);  // b alone
  // The 5-D shape's grid: tiles of 64 along the run of 30 x 50 x 2 x 3 = 9000 (141, the last
  // partial), one a tile, no batch.
  const PlacedCase placed = place(gather_cases(4)[0]);
  torch_transpose::GatherTileArgs args;
  dim3 grid;
  ASSERT_TRUE(torch_transpose::make_gather_tile_args<64>(placed.plan, placed.in_address, placed.out_address, 4, args, grid));
  EXPECT_EQ(args.run.rank, 4);
  EXPECT_EQ(args.size_b, 9000);
  EXPECT_EQ(grid.x, 141u);
  EXPECT_EQ(grid.y, 1u);
  EXPECT_EQ(grid.z, 1u);
}

// 2-byte plans of the 5-D route whose a is not whole 16-byte vectors: gather tiles of side 64 with
// 8-byte vectors (gather_half_vectors; the launcher asks only where 16-byte vectors do not fit
// a, and GatherTiles runs them through it): the 5-D shape (a = 60, a run of 9000: 141 tiles), a =
// 60 over a partial last run tile, two batch dims; not a base off the 8-byte grid, nor a = 20
// (under half a tile; TORCH_TRANSPOSE_KERNELS=gather_tile=1 overrides that).
TEST(KernelsOnHost, HalfVectorGatherPlans) {
  const torch_transpose::Override setting = torch_transpose::gather_tile_override();
  if (setting == torch_transpose::Override::Never) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=gather_tile=0";
  auto half_vector_fit = [](const Case& c, bool expected, dim3* grid_out = nullptr) {
    expect_taken(c, expected, [&](const PlacedCase& placed, dim3& grid) {
      torch_transpose::GatherTileArgs args;
      const bool fits = torch_transpose::make_gather_tile_args<torch_transpose::kHalfVectorGatherTile>(
          placed.plan, placed.in_address, placed.out_address, 2, args, grid, /*vector_bytes=*/8);
      if (grid_out) *grid_out = grid;
      return fits;
    });
  };
  dim3 grid;
  half_vector_fit(gather_cases(2)[0], true, &grid);
  EXPECT_EQ(grid.x, 141u);
  EXPECT_EQ(grid.y, 1u);
  half_vector_fit(permute_case({2, 24, 3, 10, 60}, {4, 2, 0, 3, 1}, 2), true);
  half_vector_fit(permute_case({2, 3, 24, 4, 60}, {1, 0, 4, 3, 2}, 2), true);
  half_vector_fit(permute_case({2, 30, 3, 50, 60}, {4, 2, 0, 3, 1}, 2, {}, 1), false);  // base 2 bytes off
  half_vector_fit(permute_case({2, 30, 3, 50, 20}, {4, 2, 0, 3, 1}, 2), setting == torch_transpose::Override::Always);
}

TEST(KernelsOnHost, HalfVectorGatherTiles) {
  for (const Case& c : {permute_case({2, 24, 3, 10, 60}, {4, 2, 0, 3, 1}, 2), permute_case({2, 3, 24, 4, 60}, {1, 0, 4, 3, 2}, 2),
                        into_view(permute_case({2, 30, 3, 50, 60}, {4, 2, 0, 3, 1}, 2), {9004, 3000, 1500, 30, 1}, 4,
                                  "rows of 9000 at a pitch of 9004, 4 in")})
    check_case(c);
}

// Plans whose fast dims are both 32 or more over an output run that the input does not merge
// (the 4-D reversal's layout): output rows (b) of 35 and 33 elements (not whole 16-byte vectors),
// a = 64, 80 (a partial tile for 4- and 8-byte elements) and 96, runs of 1120 and 1056 (a partial
// last run tile), one batch dim, an output view whose rows keep the fresh alignment, b = 40 (whole
// vectors from 2-byte elements on, not whole tiles), 48 (whole vectors, not whole tiles), 136 (not
// whole 1-byte vectors, longer than a 1-byte tile) and 128 (whole tiles), a = 256 over b = 40,
// 48 and 128 (a and runs of 1280, 1536 and 1024 whole tiles in every width: gather tiles without
// an edge path, gather_whole_tiles, where ctest's forced run does not keep one), and a = 128 over
// b = 48 with a run of 1008 (one edge tile in 8 for 1-byte elements: element by element,
// gather_edges). launch_transpose
// asks gather tiles first for them (wants_gather_rows) where gather tiles are on (ctest's forced
// run), window, realign window or square tiles take them otherwise.
std::vector<Case> ragged_row_cases(int e) {
  return {
      permute_case({35, 4, 8, 64}, {3, 2, 1, 0}, e),
      permute_case({35, 4, 8, 80}, {3, 2, 1, 0}, e),
      permute_case({2, 33, 4, 8, 96}, {0, 4, 3, 2, 1}, e),
      into_view(permute_case({35, 4, 8, 64}, {3, 2, 1, 0}, e), {1120, 140, 35, 1}, 1120, "buf[1:65] of 66x8x4x35"),
      permute_case({40, 4, 8, 64}, {3, 2, 1, 0}, e),
      permute_case({48, 4, 8, 64}, {3, 2, 1, 0}, e),
      permute_case({136, 2, 4, 64}, {3, 2, 1, 0}, e),
      permute_case({128, 2, 4, 256}, {3, 2, 1, 0}, e),
      permute_case({40, 4, 8, 256}, {3, 2, 1, 0}, e),
      permute_case({48, 4, 8, 256}, {3, 2, 1, 0}, e),
      permute_case({48, 3, 7, 128}, {3, 2, 1, 0}, e),
  };
}

TEST(KernelsOnHost, GatherTilesForRaggedRows) {
  for (int e : kWidths)
    for (const Case& c : ragged_row_cases(e)) check_case(c);
}

// The switches that pick gather tiles' edge path (gather_edges).
bool whole_tiles_allowed() {
  return torch_transpose::switch_override("gather_whole_tiles") != torch_transpose::Override::Never;
}
torch_transpose::Override scalar_edges_setting() {
  return torch_transpose::switch_override("gather_scalar_edges");
}

// Which of them launch_transpose gives gather tiles (wants_gather_rows): by rule all but b = 128
// for 2- to 8-byte elements; for 1-byte ones b = 35, 33 and 40 (rows shorter than a tile, not
// whole vectors) and b = 48 where the kernel needs no masked-vector edges: over a = 256 (whole
// tiles; element by element under TORCH_TRANSPOSE_KERNELS=gather_whole_tiles=0, where no tile is an edge
// tile) and over a = 128 (one edge tile in 8, element by element), unless
// TORCH_TRANSPOSE_KERNELS=gather_scalar_edges=0 (and, for a = 256, whole tiles are off too); never
// b = 128 (whole tiles: lean tiles take those). Every one under TORCH_TRANSPOSE_KERNELS=gather_rows=1;
// none under =0.
TEST(KernelsOnHost, RaggedRowPlans) {
  if (torch_transpose::gather_tile_override() == torch_transpose::Override::Never)
    GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=gather_tile=0";
  const torch_transpose::Override setting = torch_transpose::gather_rows_override();
  const bool scalar_allowed = scalar_edges_setting() != torch_transpose::Override::Never;
  for (int e : {1, 2, 4, 8}) {
    for (const Case& c : ragged_row_cases(e)) {
      const int64_t a = c.sizes[c.sizes.size() - 4], b = c.sizes.back();
      const bool whole_vector_rows = b * e % 16 == 0;
      const bool cheap_edges = (a == 256 && (whole_tiles_allowed() || scalar_allowed)) || (a == 128 && scalar_allowed);
      const bool by_rule = e == 1 ? b == 35 || b == 33 || b == 40 || (b == 48 && cheap_edges) : b != 128;
      const bool expected = setting == torch_transpose::Override::Always ||
                            (setting == torch_transpose::Override::Rule && by_rule);
      expect_taken(c, expected, [&](const PlacedCase& placed, dim3& grid) {
        using torch_transpose::GatherRows;
        const GatherRows rows = torch_transpose::wants_gather_rows(e, whole_vector_rows, b, gather_tile_side(e));
        torch_transpose::GatherTileArgs args;
        return rows != GatherRows::None && gather_tiles_fit(placed, e, grid, args) &&
               (rows == GatherRows::Any ||
                torch_transpose::gather_edges(args, gather_tile_side(e), e) != torch_transpose::kVectorEdges);
      });
    }
  }
}

// Which edge path gather tiles take (gather_edges): none where a and the run are whole tiles
// (gather_whole_tiles), unless TORCH_TRANSPOSE_KERNELS=gather_whole_tiles=0 (ctest's forced run); else
// masked vectors, but for 1-byte plans whose edge tiles are at most one in 8 (by rule; every
// one under TORCH_TRANSPOSE_KERNELS=gather_scalar_edges=1, as ctest's forced run sets; none under =0),
// element by element. Among the ragged rows' cases: whole tiles a = 256 (over b = 40, 48 and
// 128) in every width, and for 4- and 8-byte elements (tiles of 64) a = 64 over every run but
// 35 x 4 x 8 = 1120 (b = 40, 48 and 136: runs of 1280, 1536 and 1088); few edge tiles: a = 128
// over b = 48 (a run of 1008: one tile in 8 for 1-byte elements) and, with whole tiles off,
// a = 256; a = 96, 80 and the 5-D shape's a = 60 (where it fits: 4- and 8-byte elements) have
// edges on every tile.
TEST(KernelsOnHost, GatherEdges) {
  if (torch_transpose::gather_tile_override() == torch_transpose::Override::Never)
    GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=gather_tile=0";
  const torch_transpose::Override scalar = scalar_edges_setting();
  auto edges_of = [](const Case& c, int e, bool& fits) {
    torch_transpose::GatherTileArgs args;
    dim3 grid;
    fits = gather_tiles_fit(place(c), e, grid, args);
    return torch_transpose::gather_edges(args, gather_tile_side(e), e);
  };
  for (int e : {1, 2, 4, 8}) {
    for (const Case& c : ragged_row_cases(e)) {
      bool fits = false;
      const torch_transpose::GatherEdgeKind edges = edges_of(c, e, fits);
      if (!fits) continue;
      // Output sizes: a x 8 x 4 x b (and the five-dim case's batch before a): b is the run's first dim.
      const int64_t a = c.sizes[c.sizes.size() - 4], b = c.sizes.back();
      const bool whole = whole_tiles_allowed() && (a == 256 || (e >= 4 && a == 64 && b != 35));
      const bool few_edges = a == 256 || a == 128;
      const bool scalar_edges = e == 1 && decide(scalar, few_edges);
      const torch_transpose::GatherEdgeKind expected =
          whole ? torch_transpose::kNoEdges : scalar_edges ? torch_transpose::kScalarEdges : torch_transpose::kVectorEdges;
      EXPECT_EQ(edges, expected) << e << "-byte elements, sizes " << c.name;
    }
    bool fits = false;
    const torch_transpose::GatherEdgeKind five_d = edges_of(gather_cases(e)[0], e, fits);
    EXPECT_EQ(fits, e >= 4) << e << "-byte elements, the 5-D shape";
    if (fits) EXPECT_EQ(five_d, torch_transpose::kVectorEdges) << e << "-byte elements, the 5-D shape";
  }
  bool fits = false;
  EXPECT_EQ(edges_of(permute_case({40, 4, 8, 256}, {3, 2, 1, 0}, 1), 1, fits) == torch_transpose::kNoEdges,
            whole_tiles_allowed());
  EXPECT_TRUE(fits);
  // The rule's bound for 1-byte plans: one edge tile in 4 (a run of 48 x 3 x 3 = 432, 3.4 tiles)
  // is too many.
  EXPECT_EQ(edges_of(permute_case({48, 3, 3, 128}, {3, 2, 1, 0}, 1), 1, fits),
            scalar == torch_transpose::Override::Always ? torch_transpose::kScalarEdges : torch_transpose::kVectorEdges);
  EXPECT_TRUE(fits);
}

// How gather tiles load (gather_loads), per width and route: by rule, plans from the 5-D route
// take evict_last loads but for 2-byte elements, with 256-byte fills; ragged rows take evict_last
// loads in every width, with fills for 2-byte elements only. The switches override each
// part: l2_evict_last the loads (fills come with evict_last loads only),
// gather_fetch_256 the fills (ctest's forced run sets it to 0).
TEST(KernelsOnHost, GatherLoadsByRoute) {
  const torch_transpose::Override evict_setting = torch_transpose::switch_override("l2_evict_last");
  const torch_transpose::Override fetch_setting = torch_transpose::switch_override("gather_fetch_256");
  for (int e : {1, 2, 4, 8}) {
    for (bool ragged_rows : {false, true}) {
      const bool evict_last = torch_transpose::decide(evict_setting, ragged_rows || e != 2);
      const bool fetch_256 = evict_last && torch_transpose::decide(fetch_setting, !ragged_rows || e == 2);
      const torch_transpose::GatherLoads loads = torch_transpose::gather_loads(e, ragged_rows);
      EXPECT_EQ(loads.evict_last, evict_last) << e << "-byte elements, ragged rows " << ragged_rows;
      EXPECT_EQ(loads.fetch_256, fetch_256) << e << "-byte elements, ragged rows " << ragged_rows;
    }
  }
  if (evict_setting == torch_transpose::Override::Rule && fetch_setting == torch_transpose::Override::Rule) {
    // The rule itself, spelled out: 2-byte 5-D plans plain, ragged rows with fills for 2-byte elements alone.
    EXPECT_FALSE(torch_transpose::gather_loads(2, false).evict_last);
    EXPECT_TRUE(torch_transpose::gather_loads(2, true).fetch_256);
    EXPECT_TRUE(torch_transpose::gather_loads(1, false).fetch_256);
    EXPECT_TRUE(torch_transpose::gather_loads(1, true).evict_last);
    EXPECT_FALSE(torch_transpose::gather_loads(1, true).fetch_256);
    EXPECT_TRUE(torch_transpose::gather_loads(4, false).fetch_256);
    EXPECT_FALSE(torch_transpose::gather_loads(4, true).fetch_256);
    EXPECT_TRUE(torch_transpose::gather_loads(8, true).evict_last);
    EXPECT_FALSE(torch_transpose::gather_loads(8, true).fetch_256);
  }
}

// The narrow kernel (when narrow_kernel is not 0; the flat tile kernel takes
// these otherwise): both directions, narrow sizes 2..16 on both sides of the warp-pair threshold
// (7; every size takes pairs under TORCH_TRANSPOSE_KERNELS=narrow_pairs=1, as ctest's first run sets), a
// wide dim that ends inside a warp tile and inside a vector, batches, lines with a gap, and an
// output that is a slice.
TEST(KernelsOnHost, NarrowDenseAndLines) {
  for (int e : kWidths) {
    for (int n : {2, 3, 5, 6, 7, 8, 13, 16}) {
      check_case(permute_case({1000, n}, {1, 0}, e));  // dense in: 1000 is no multiple of a warp tile
      check_case(permute_case({n, 1000}, {1, 0}, e));  // dense out
    }
    check_case(permute_case({4, 3, 96}, {0, 2, 1}, e));          // NCHW -> NHWC in batches, C = 3
    check_case(permute_case({4, 96, 3}, {0, 2, 1}, e));          // and back
    check_case(permute_case({3, 4, 7, 160}, {1, 0, 3, 2}, e));   // two batch dims
    check_case(permute_case({600, 4}, {1, 0}, e, {4, 1}, 16));   // an aligned base offset
    check_case(permute_case({4, 600}, {1, 0}, e, {608, 1}));     // lines with a gap
    check_case(permute_case({33, 16}, {1, 0}, e));               // one partial warp tile
    check_case(into_view(permute_case({500, 6}, {1, 0}, e), {528, 1}, 16, "buf[:, 16:516]"));
  }
}

// Packed fast dims of C = 2..16 against lines of whole 16-byte vectors: the interleave kernel's
// layouts where interleave_max_c allows (unless TORCH_TRANSPOSE_KERNELS=interleave=0, as in ctest's
// forced run, which sends them to the narrow kernel). Each has more than the direct kernel's
// 32768 elements; the long dim (1200 or 12000) ends inside a warp chunk for every width. The
// last two fall back: a misaligned base and a long dim that is no multiple of the vector.
std::vector<Case> interleave_cases(int e, int c) {
  return {
      permute_case({10, c, 1200}, {0, 2, 1}, e),                 // NCHW -> NHWC: planar in, dense out
      permute_case({10, 1200, c}, {0, 2, 1}, e),                 // NHWC -> NCHW
      permute_case({c, 12000}, {1, 0}, e),                       // 2-D, planar in
      permute_case({12000, c}, {1, 0}, e),                       // 2-D, dense in
      permute_case({2, 5, c, 1200}, {1, 0, 3, 2}, e),            // two batch dims
      permute_case({c, 12000}, {1, 0}, e, {12016, 1}),           // input lines with a gap
      into_view(permute_case({12000, c}, {1, 0}, e), {12032, 1}, 16, "buf[:, 16:12016]"),  // output lines too
      permute_case({c, 12000}, {1, 0}, e, {12000, 1}, 1),        // misaligned base
      permute_case({c, 12001}, {1, 0}, e),                       // 12001: no whole vectors
  };
}

TEST(KernelsOnHost, InterleaveLayouts) {
  for (int e : kWidths)
    // One and two passes through shared memory (C > 8), odd and even C, and the limits of
    // interleave_max_c (4, 8 and 15 are in, 5, 9 and 16 go to the narrow kernels on one side or
    // both); NarrowDenseAndLines covers the other sizes.
    for (int c : {2, 3, 4, 5, 8, 9, 12, 15, 16})
      for (const Case& k : interleave_cases(e, c)) check_case(k);
}

// Which of those plans the interleave kernel takes: the first seven for C = 2..8 with 1- and
// 2-byte elements; for 4- and 8-byte ones, C = 2..15 with planar inputs and C = 2..4 with dense
// ones (interleave_max_c); in the direction of the case; no misaligned base, no partial vectors,
// no C = 17 (no narrow plan), no 16-byte elements.
TEST(KernelsOnHost, InterleavePlans) {
  if (!torch_transpose::interleave_enabled()) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=interleave=0";
  if (!torch_transpose::narrow_kernel_enabled()) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=narrow_kernel=0 (its plans are the interleave kernel's)";
  for (int e : kWidths) {
    for (int c : {2, 3, 4, 5, 8, 9, 15, 16, 17}) {
      const std::vector<Case> cases = interleave_cases(e, c);
      for (size_t i = 0; i < cases.size(); ++i) {
        const Case& k = cases[i];
        SCOPED_TRACE(k.name);
        const uintptr_t in_address = 4096 + e * k.in_offset, out_address = 4096 + e * k.out_offset;
        const LayoutPlan plan = plan_of(k, in_address, out_address);
        torch_transpose::NarrowArgs args;  // the interleave kernel's plans are narrow plans
        bool dense_in = false;
        const bool taken = torch_transpose::make_narrow_args(plan, in_address, out_address, args, dense_in) &&
                           torch_transpose::wants_interleave(args, e, dense_in);
        const bool planar_in = i == 0 || i == 2 || i == 4 || i == 5;
        const bool expected = e <= 8 && c <= (e <= 2 ? 8 : planar_in ? 15 : 4) && i < 7;
        ASSERT_EQ(taken, expected) << plan.explain();
        if (!taken) continue;
        const torch_transpose::InterleaveArgs interleave = torch_transpose::interleave_args(args, dense_in, e, false);
        EXPECT_EQ(interleave.c, c);
        EXPECT_EQ(interleave.planar_in, planar_in);
      }
    }
  }
}

// Lines shorter than a warp's chunk (L = 32 to 256 positions, dividing the chunk's 32 * V):
std::vector<Case> packed_line_cases(int e, int c, int64_t line) {
  return {
      permute_case({3, 7, 2, c, 13, line}, {0, 1, 4, 2, 5, 3}, e),  // planar in: pixel shuffle
      permute_case({3, 7, 13, 2, line, c}, {0, 1, 3, 5, 2, 4}, e),  // dense in: pixel unshuffle
      into_view(permute_case({547, c, line}, {0, 2, 1}, e), {line * c + 16, c, 1}, 16,
                "buf[:, 16:16+L*C] as (547, L, C)"),
  };
}

// Whole items per chunk (wants_packed_lines) for every line length that divides the chunk, C = 2..4.
TEST(KernelsOnHost, PackedLines) {
  for (int e : kWidths)
    for (int c : {2, 3, 4})
      for (int64_t line = 32; line < 32 * (16 / e); line *= 2)
        for (const Case& k : packed_line_cases(e, c, line)) check_case(k);
}

// Which plans take packed lines: C <= kPackedLinesMaxC, lines of m vectors with m < 32; not
// C = 5, not lines of a whole chunk or more, not a line length that does not divide the chunk
// (96 positions); the chunk count of bf16 pixel shuffle with W = 128 (546 items, 2 a chunk).
TEST(KernelsOnHost, PackedLinePlans) {
  if (!torch_transpose::packed_lines_enabled() || !torch_transpose::interleave_enabled() ||
      !torch_transpose::narrow_kernel_enabled())
    GTEST_SKIP() << "packed lines or interleave plans are off in this run";
  auto packed = [](const Case& k, torch_transpose::InterleaveArgs* args = nullptr) {
    const PlacedCase placed = place(k);
    torch_transpose::NarrowArgs narrow;
    bool dense_in = false;
    if (!torch_transpose::make_narrow_args(placed.plan, placed.in_address, placed.out_address, narrow, dense_in) ||
        !torch_transpose::wants_interleave(narrow, k.element_bytes, dense_in) ||
        !torch_transpose::wants_packed_lines(narrow, k.element_bytes))
      return false;
    if (args) *args = torch_transpose::interleave_args(narrow, dense_in, k.element_bytes, true);
    return true;
  };
  for (int e : {1, 2, 4, 8}) {
    for (int c : {2, 3, 4, 5}) {
      for (int64_t line : {32, 64, 96, 128, 256, 512}) {
        const bool expected = c <= 4 && line < 32 * (16 / e) && (32 * (16 / e)) % line == 0;
        for (const Case& k : packed_line_cases(e, c, line)) {
          SCOPED_TRACE(k.name);
          EXPECT_EQ(packed(k), expected);
        }
      }
    }
  }
  torch_transpose::InterleaveArgs args;
  ASSERT_TRUE(packed(packed_line_cases(2, 2, 128)[0], &args));
  EXPECT_EQ(args.lanes_per_item_log2, 4);  // 128 positions = 16 vectors of 8
  EXPECT_EQ(args.items, 546);
  EXPECT_EQ(args.total_chunks, 273u);
  EXPECT_TRUE(args.planar_in);
}

std::vector<Case> lean_interleave_cases(int e) {
  return {
      permute_case({2, 3, 3, 2400}, {1, 0, 3, 2}, e),        // two batch dims, planar in
      permute_case({2, 3, 2400, 3}, {1, 0, 3, 2}, e),        // two batch dims, dense in
      permute_case({2, 3, 2, 3, 1024}, {2, 1, 0, 4, 3}, e),  // three batch dims
      permute_case({4, 3, 56, 56}, {0, 2, 3, 1}, e),         // 3136 positions: 13, 25 or 49 chunks
      permute_case({4, 56, 56, 3}, {0, 3, 1, 2}, e),
  };
}

// Lean interleave launches (lean_interleave_transpose.cuh) take InterleaveLayouts' plans unless
// TORCH_TRANSPOSE_KERNELS=lean_interleave=0 (ctest's first run, which keeps the looping kernel on them).
TEST(KernelsOnHost, LeanInterleave) {
  for (int e : kWidths)
    for (const Case& c : lean_interleave_cases(e)) check_case(c);
}

TEST(KernelsOnHost, LeanInterleavePlans) {
  if (torch_transpose::lean_interleave_override() == torch_transpose::Override::Never)
    GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=lean_interleave=0";
  if (!torch_transpose::interleave_enabled() || !torch_transpose::narrow_kernel_enabled())
    GTEST_SKIP() << "interleave plans are off in this run";
  auto takes = [](const Case& c, bool expected) {
    expect_taken(c, expected, [&](const PlacedCase& placed, dim3& grid) {
      torch_transpose::NarrowArgs narrow;
      bool dense_in = false;
      if (!torch_transpose::make_narrow_args(placed.plan, placed.in_address, placed.out_address, narrow, dense_in) ||
          !torch_transpose::wants_interleave(narrow, c.element_bytes, dense_in))
        return false;
      torch_transpose::LeanInterleaveArgs args;
      return torch_transpose::make_lean_interleave_args(placed.plan, narrow, c.element_bytes, args, grid);
    });
  };
  for (int e : {1, 2, 4, 8}) {
    const std::vector<Case> cases = lean_interleave_cases(e);
    for (size_t i = 0; i < cases.size(); ++i) takes(cases[i], e >= 2 && i != 2);
    const std::vector<Case> two = interleave_cases(e, 2), three = interleave_cases(e, 3), four = interleave_cases(e, 4);
    for (size_t i = 0; i < 7; ++i) {
      takes(two[i], e >= 4);
      takes(three[i], e >= 2);
      takes(four[i], false);
    }
  }
  const PlacedCase placed = place(lean_interleave_cases(4)[3]);
  torch_transpose::NarrowArgs narrow;
  bool dense_in = true;
  ASSERT_TRUE(torch_transpose::make_narrow_args(placed.plan, placed.in_address, placed.out_address, narrow, dense_in));
  EXPECT_FALSE(dense_in);
  torch_transpose::LeanInterleaveArgs args;
  dim3 grid;
  ASSERT_TRUE(torch_transpose::make_lean_interleave_args(placed.plan, narrow, 4, args, grid));
  EXPECT_EQ(args.long_size, 3136);
  EXPECT_EQ(args.plane_stride, 3136);
  EXPECT_FALSE(args.two_batch_dims);
  EXPECT_EQ(grid.x, 4u);
  EXPECT_EQ(grid.y, 1u);
  EXPECT_EQ(grid.z, 4u);
}

// Whole 128-byte-row square tiles and 128 x 16 narrow tiles of 4-byte elements: the shapes that
// the compact tile and narrow block kernels take under TORCH_TRANSPOSE_KERNELS=compact_tile=1 and
// TORCH_TRANSPOSE_KERNELS=narrow_block=1 (ctest's forced run); the other runs send them elsewhere.
TEST(KernelsOnHost, CompactTilesAndNarrowBlocks) {
  // Each case has more than the direct kernel's 32768 elements.
  for (int e : kWidths) {
    check_case(permute_case({256, 384}, {1, 0}, e));
    check_case(permute_case({3, 128, 256}, {0, 2, 1}, e));
    check_case(permute_case({256, 256}, {1, 0}, e, {288, 1}));  // rows with a gap, still aligned
    check_case(into_view(permute_case({256, 256}, {1, 0}, e), {288, 1}, 16, "buf[:, 16:272]"));
    check_case(permute_case({16, 4096}, {1, 0}, e));   // lines in, dense out
    check_case(permute_case({4096, 16}, {1, 0}, e));   // dense in, lines out
    check_case(permute_case({3, 16, 1536}, {0, 2, 1}, e));
    check_case(permute_case({3, 1536, 16}, {0, 2, 1}, e));
    check_case(permute_case({16, 2560}, {1, 0}, e, {2576, 1}));  // lines with a gap
    check_case(into_view(permute_case({2560, 16}, {1, 0}, e), {2688, 1}, 64, "buf[:, 64:2624]"));
  }
}

// Whole square tiles over up to two batch dims: the shapes lean tiles take (unless
// TORCH_TRANSPOSE_KERNELS=lean_tile=0, as in ctest's fallback run, which sends them to the square tile
// kernel; the forced run's tile streams do too). Tile sides: 128 for 1- and 2-byte elements, 64
// for 4- and 8-byte ones (1-byte plans go to the copy engine's tiles first where it takes them;
// 16-byte elements have no vectors). The last two cases' a is one tile, and their grids walk
// batch items first (LeanTileWalks).
constexpr int kLeanItemsFirstCases = 2;

std::vector<Case> lean_cases(int e) {
  const int64_t side = e <= 2 ? 128 : 64;
  return {
      permute_case({256, 384}, {1, 0}, e),
      permute_case({3, 256, 128}, {0, 2, 1}, e),                    // one batch dim
      permute_case({128, 3, 256}, {2, 1, 0}, e),                    // the batch dim between the fast ones
      permute_case({2, 3, 128, 256}, {3, 1, 0, 2}, e),              // two batch dims
      permute_case({2, 3, 256, 128}, {1, 0, 3, 2}, e),              // two batch dims, swapped order
      permute_case({3, 128, 256}, {0, 2, 1}, e, {0, 256, 1}),       // an expanded batch dim (stride 0)
      permute_case({3, 128, 256}, {0, 2, 1}, e, {40000, 288, 1}),   // rows and items with gaps
      into_view(permute_case({256, 128}, {1, 0}, e), {288, 1}, 16, "buf[:, 16:272]"),
      permute_case({256, 3, side}, {2, 1, 0}, e),                  // (2, 1, 0) with a one tile
      permute_case({256, 2, 3, side}, {3, 2, 1, 0}, e),            // the same over two batch dims
  };
}

TEST(KernelsOnHost, LeanTiles) {
  for (int e : kWidths)
    for (const Case& c : lean_cases(e)) check_case(c);
}

// Which plans lean tiles take: every case above of 2-, 4- and 8-byte elements;
// not three batch dims, edge tiles or partial vectors.
TEST(KernelsOnHost, LeanTilePlans) {
  if (torch_transpose::lean_tile_override() == torch_transpose::Override::Never) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=lean_tile=0";
  auto takes = [](const Case& c, bool expected) {
    expect_taken(c, expected, [&](const PlacedCase& placed, dim3& grid) {
      torch_transpose::LeanTileArgs args;
      return c.element_bytes == 2 ? torch_transpose::make_lean_tile_args<128>(placed.plan, args, grid)
                                  : torch_transpose::make_lean_tile_args<64>(placed.plan, args, grid);
    });
  };
  for (int e : {2, 4, 8})
    for (const Case& c : lean_cases(e)) takes(c, true);
  takes(permute_case({2, 2, 2, 128, 128}, {2, 1, 0, 4, 3}, 4), false);  // three batch dims
  takes(permute_case({256, 288}, {1, 0}, 4), false);                   // edge tiles along one side
}

// Which lean plans walk batch items first (lean_tiles_items_first): those whose a is one tile and
// whose next batch item lies nearer in the input than the next tile along b; the grid then
// carries the items along x and the tiles along b along z.
TEST(KernelsOnHost, LeanTileWalks) {
  if (torch_transpose::lean_tile_override() == torch_transpose::Override::Never ||
      torch_transpose::lean_items_first_override() != torch_transpose::Override::Rule)
    GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=lean_tile=0 or lean_items_first set";
  for (int e : {2, 4, 8}) {
    const std::vector<Case> cases = lean_cases(e);
    for (size_t i = 0; i < cases.size(); ++i) {
      SCOPED_TRACE(cases[i].name);
      const PlacedCase placed = place(cases[i]);
      torch_transpose::LeanTileArgs args;
      dim3 grid;
      ASSERT_TRUE(e == 2 ? torch_transpose::make_lean_tile_args<128>(placed.plan, args, grid)
                         : torch_transpose::make_lean_tile_args<64>(placed.plan, args, grid));
      const bool items_first = i + kLeanItemsFirstCases >= cases.size();
      EXPECT_EQ(args.items_first, items_first);
      if (items_first) {
        EXPECT_EQ(grid.x, i + 1 == cases.size() ? 6u : 3u);  // the items: 2 x 3, or 3
        EXPECT_EQ(grid.y, 1u);
        EXPECT_EQ(grid.z, 256u / (e == 2 ? 128 : 64));
      }
    }
  }
}

// 16 four-byte lines against a dense side, whole tiles along the wide dim, at most one batch dim:
// the plans lean narrow tiles take (unless TORCH_TRANSPOSE_KERNELS=lean_narrow=0: ctest's fallback and
// forced runs send them to the warp-pair and narrow block kernels).
std::vector<Case> lean_narrow_cases() {
  return {
      permute_case({16, 4096}, {1, 0}, 4),                        // lines in, dense out
      permute_case({4096, 16}, {1, 0}, 4),                        // dense in, lines out
      permute_case({3, 16, 1536}, {0, 2, 1}, 4),                  // one batch dim
      permute_case({3, 1536, 16}, {0, 2, 1}, 4),
      permute_case({16, 3, 1536}, {1, 2, 0}, 4),                  // the batch dim between the fast ones
      permute_case({3, 16, 1536}, {0, 2, 1}, 4, {0, 1536, 1}),    // an expanded batch dim (stride 0)
      permute_case({16, 2560}, {1, 0}, 4, {2576, 1}),             // lines with a gap
      into_view(permute_case({2560, 16}, {1, 0}, 4), {2688, 1}, 64, "buf[:, 64:2624]"),
  };
}

TEST(KernelsOnHost, LeanNarrowTiles) {
  for (const Case& c : lean_narrow_cases()) check_case(c);
}

// Which plans lean narrow tiles take: the cases above; not two batch dims, a wide dim of partial
// tiles, N other than 16 or elements other than 4 bytes.
TEST(KernelsOnHost, LeanNarrowPlans) {
  if (torch_transpose::lean_narrow_override() == torch_transpose::Override::Never) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=lean_narrow=0";
  // Lean narrow tiles take the narrow kernel's plans (make_narrow_args): `make sanitize` runs
  // with that kernel off but lean narrow tiles on.
  if (!torch_transpose::narrow_kernel_enabled()) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=narrow_kernel=0";
  auto takes = [](const Case& c, bool expected) {
    expect_taken(c, expected, [&](const PlacedCase& placed, dim3& grid) {
      torch_transpose::NarrowArgs narrow;
      bool dense_in = false;
      torch_transpose::LeanNarrowArgs args;
      return c.element_bytes == 4 &&
             torch_transpose::make_narrow_args(placed.plan, placed.in_address, placed.out_address, narrow, dense_in) &&
             torch_transpose::make_lean_narrow_args(placed.plan, narrow, args, grid);
    });
  };
  for (const Case& c : lean_narrow_cases()) takes(c, true);
  takes(permute_case({2, 3, 16, 1536}, {1, 0, 3, 2}, 4), false);  // two batch dims (swapped: no merging)
  takes(permute_case({16, 4112}, {1, 0}, 4), false);              // a partial tile along the wide dim
  takes(permute_case({15, 4096}, {1, 0}, 4), false);              // N = 15
  takes(permute_case({16, 4096}, {1, 0}, 2), false);              // 2-byte elements
}

// N lines of 1- and 2-byte elements against dense rows of 12 to 64 bytes: the plans narrow word
// tiles take (unless TORCH_TRANSPOSE_KERNELS=narrow_words=0, as in ctest's forced run, which sends them
// to the narrow kernel up to 16 lines and to the flat, square and TMA byte tiles above). Both
// directions; whole tiles, a last tile that ends after 5 of its 16 chunks, one and two batch
// dims, an expanded batch dim, lines with a gap and an out= view.
std::vector<Case> narrow_word_cases(int e, int64_t n) {
  // w: 1024 positions (4 int8 tiles, 8 2-byte ones), so that every case has more than the direct
  // kernel's 32768 elements.
  const int64_t v = 16 / e, w = 1024;
  return {
      permute_case({n, 3 * w}, {1, 0}, e),                              // lines in, dense out
      permute_case({3 * w, n}, {1, 0}, e),                              // dense in, lines out
      permute_case({n, 2 * w + 5 * v}, {1, 0}, e),                      // a partial last tile
      permute_case({2 * w + 5 * v, n}, {1, 0}, e),
      permute_case({3, n, w}, {0, 2, 1}, e),                            // NCHW -> NHWC, C = N
      permute_case({3, w, n}, {0, 2, 1}, e),                            // and back
      permute_case({2, 3, n, w / 2 + v}, {1, 0, 3, 2}, e),              // two batch dims, partial tiles
      permute_case({3, n, w}, {0, 2, 1}, e, {0, w, 1}),                 // an expanded batch dim (stride 0)
      permute_case({n, 3 * w}, {1, 0}, e, {3 * w + v, 1}),              // input lines with a gap
      into_view(permute_case({3 * w, n}, {1, 0}, e), {3 * w + 4 * v, 1}, 2 * v, "buf[:, 2v:2v+3w]"),
      into_view(permute_case({n, 3 * w}, {1, 0}, e), {n + 4, 1}, 4, "buf[:, 4:4+N]"),  // dense rows with a gap: not taken
  };
}

// The line counts narrow word tiles take, by element size: the shortest dense rows (12 bytes),
// odd and even group counts, 16 (the narrow kernel's widest), past it below kNarrowDim (32
// elements) and from it, up to 64-byte rows.
std::vector<int64_t> narrow_word_line_counts(int e) {
  return e == 1 ? std::vector<int64_t>{12, 16, 20, 28, 32, 64} : std::vector<int64_t>{10, 14, 16, 24, 32};
}

// Whether narrow word tiles take a placed case's plan (as the launchers ask: make_narrow_args
// with their line limit, then make_narrow_word_grid), and their grid.
bool narrow_word_tiles_take(const PlacedCase& placed, int e, dim3& grid) {
  torch_transpose::NarrowArgs narrow;
  bool dense_in = false;
  return torch_transpose::make_narrow_args(placed.plan, placed.in_address, placed.out_address, narrow, dense_in,
                                           torch_transpose::narrow_word_max_lines(e)) &&
         torch_transpose::make_narrow_word_grid(narrow, e, grid);
}

void expect_narrow_word_tiles(const Case& c, bool expected) {
  expect_taken(c, expected,
               [&](const PlacedCase& placed, dim3& grid) { return narrow_word_tiles_take(placed, c.element_bytes, grid); });
}

TEST(KernelsOnHost, NarrowWordTiles) {
  for (int e : {1, 2})
    for (int64_t n : narrow_word_line_counts(e))
      for (const Case& c : narrow_word_cases(e, n)) check_case(c);
}

// Narrow plans that narrow word tiles refuse, past the narrow kernel's 16 lines: they go on to
// gather, box and flat tiles below 32 elements (launch_narrow_or_flat), to span and square tiles
// from 32 (launch_transpose). Rows that are not whole words, items shorter than a tile, rows of
// more than 64 bytes, a wide dim that ends inside a chunk.
TEST(KernelsOnHost, NarrowPlansNarrowWordTilesRefuse) {
  for (int e : {1, 2}) {
    const int64_t v = 16 / e, wide_per_tile = 256 / e;
    for (const Case& c : {permute_case({e == 1 ? 18 : 17, 3 * wide_per_tile}, {1, 0}, e),  // rows of 18 or 34 bytes
                          permute_case({3 * wide_per_tile, e == 1 ? 18 : 17}, {1, 0}, e),
                          permute_case({64, 20, wide_per_tile - v}, {0, 2, 1}, e),         // items under a tile
                          permute_case({64, wide_per_tile - v, 20}, {0, 2, 1}, e),
                          permute_case({64 / e + 4, 3 * wide_per_tile}, {1, 0}, e),        // rows of 68 or 72 bytes
                          permute_case({3 * wide_per_tile, 64 / e + 4}, {1, 0}, e),
                          permute_case({24, 3 * wide_per_tile + 1}, {1, 0}, e),            // lines end inside a chunk
                          permute_case({3 * wide_per_tile + 1, 24}, {1, 0}, e)}) {
      const bool tiles_on = torch_transpose::narrow_word_override() != torch_transpose::Override::Never;
      if (tiles_on) expect_narrow_word_tiles(c, false);
      check_case(c);
    }
  }
}

// Which plans narrow word tiles take: the first ten cases above; not dense rows with a gap (no
// narrow plan), lines that end inside a chunk, rows that are not whole words or longer than 64
// bytes, rows of 8 bytes, items shorter than a tile past 16 lines, 4-byte elements; the grid, and
// the fill rule where no switch overrides it.
TEST(KernelsOnHost, NarrowWordPlans) {
  if (torch_transpose::narrow_word_override() == torch_transpose::Override::Never) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=narrow_words=0";
  if (!torch_transpose::narrow_kernel_enabled()) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=narrow_kernel=0";
  for (int e : {1, 2}) {
    for (int64_t n : narrow_word_line_counts(e)) {
      const std::vector<Case> cases = narrow_word_cases(e, n);
      for (size_t i = 0; i < cases.size(); ++i) expect_narrow_word_tiles(cases[i], i + 1 < cases.size());
    }
    const int64_t v = 16 / e, wide_per_tile = 256 / e;
    // Lines that end inside a chunk (their stride a whole number of chunks, so that the narrow
    // kernel takes them): odd and even lengths.
    expect_narrow_word_tiles(permute_case({16, 3000 * v + 1}, {1, 0}, e, {3001 * v, 1}), false);
    expect_narrow_word_tiles(permute_case({16, 3000 * v + 2}, {1, 0}, e, {3001 * v, 1}), false);
    expect_narrow_word_tiles(permute_case({16, 3000 * v}, {1, 0}, e, {3001 * v, 1}), true);  // and the same lines whole
    // Rows of 15 or 26 bytes (not whole words), of 68 or 72 bytes.
    expect_narrow_word_tiles(permute_case({e == 1 ? 15 : 13, 4096}, {1, 0}, e), false);
    expect_narrow_word_tiles(permute_case({64 / e + 4, 8192}, {1, 0}, e), false);
    // Past 16 lines, items of a whole tile along the wide dim and more.
    expect_narrow_word_tiles(permute_case({64, 20, wide_per_tile}, {0, 2, 1}, e), true);
    expect_narrow_word_tiles(permute_case({64, 20, wide_per_tile - v}, {0, 2, 1}, e), false);
    expect_narrow_word_tiles(permute_case({64, 16, wide_per_tile - v}, {0, 2, 1}, e), true);  // 16 lines: any length
    // The grid: tiles along the wide dim (512 + v positions: 3 int8 tiles of 256, 5 2-byte ones
    // of 128, the last partial), batch items.
    for (int64_t n : {int64_t{16}, int64_t{24}}) {
      const PlacedCase placed = place(permute_case({2, 3, n, 512 + v}, {1, 0, 3, 2}, e));
      dim3 grid;
      ASSERT_TRUE(narrow_word_tiles_take(placed, e, grid));
      EXPECT_EQ(grid.x, e == 1 ? 3u : 5u);
      EXPECT_EQ(grid.y, 6u);
      EXPECT_EQ(grid.z, 1u);
    }
  }
  expect_narrow_word_tiles(permute_case({16, 4096}, {1, 0}, 4), false);  // 4-byte elements: lean narrow tiles
  expect_narrow_word_tiles(permute_case({12, 4096}, {1, 0}, 4), false);
  // 8 int8 lines: rows of 8 bytes (the interleave kernel's; it takes 8 2-byte lines before these tiles).
  expect_narrow_word_tiles(permute_case({8, 8192}, {1, 0}, 1), false);
  // The fill rule (narrow_word_fetch_256): 256-byte fills for lines in, not for dense in.
  if (torch_transpose::kernel_switch("narrow_word_fetch_256", -1) == -1) {
    EXPECT_TRUE(torch_transpose::narrow_word_fetch_256(false));
    EXPECT_FALSE(torch_transpose::narrow_word_fetch_256(true));
  }
}

// Short-row copies of 2^k whole 16-byte vectors per row over one to three batch dims, the
// innermost a multiple of a block's rows: the plans lean rows take (unless
// TORCH_TRANSPOSE_KERNELS=lean_rows=0, as in ctest's fallback and forced runs, which send them to
// row_vector_copy and row_group_copy). Rows of 64 elements: 4 to 64 vectors, 64 to 4 rows a block.
std::vector<Case> lean_row_cases(int e) {
  return {
      permute_case({2, 128, 3, 64}, {0, 2, 1, 3}, e),                        // BSHD -> BHSD: three batch dims
      permute_case({256, 128, 64}, {1, 0, 2}, e),                            // two
      permute_case({1024, 64}, {0, 1}, e, {80, 1}),                          // one: input rows with gaps
      permute_case({2, 128, 3, 64}, {0, 2, 1, 3}, e, {0, 192, 64, 1}),       // an expanded batch dim (stride 0)
      into_view(permute_case({256, 3, 64}, {1, 0, 2}, e), {256 * 80, 80, 1}, 16, "buf[..., 16:80]"),  // out= rows with gaps
  };
}

TEST(KernelsOnHost, LeanRows) {
  for (int e : kWidths)
    for (const Case& c : lean_row_cases(e)) check_case(c);
}

// A copy plan's rows as the row copy family (row_copy_family.cu) gives them to the row kernels.
torch_transpose::CopyArgs copy_args_of(const LayoutPlan& plan) {
  torch_transpose::CopyArgs copy;
  const int b = plan.out_fast_dim;
  copy.n = plan.sizes[b];
  copy.in_sb = plan.in_strides[b];
  copy.out_sb = plan.out_strides[b];
  copy.batch.assign(plan);
  return copy;
}

// Which copy plans lean rows take: the cases above; not rows of a vector count other than 2^k,
// an innermost batch dim of partial blocks, four batch dims, or partial vectors.
TEST(KernelsOnHost, LeanRowPlans) {
  if (torch_transpose::lean_rows_override() == torch_transpose::Override::Never) GTEST_SKIP() << "TORCH_TRANSPOSE_KERNELS=lean_rows=0";
  auto takes = [](const Case& c, bool expected) {
    SCOPED_TRACE(c.name);
    const LayoutPlan plan = place(c).plan;
    ASSERT_EQ(plan.kind, torch_transpose::PlanKind::Copy) << plan.explain();
    const torch_transpose::CopyArgs copy = copy_args_of(plan);
    const int full = c.element_bytes >= 16 ? 1 : 16 / c.element_bytes;
    torch_transpose::LeanRowArgs args;
    dim3 grid;
    const bool taken = plan.vector_elems == full && torch_transpose::make_lean_row_args(plan, copy, full, args, grid);
    EXPECT_EQ(taken, expected) << plan.explain();
  };
  for (int e : kWidths)
    for (const Case& c : lean_row_cases(e)) takes(c, true);
  takes(permute_case({2, 128, 3, 48}, {0, 2, 1, 3}, 4), false);              // 12 vectors a row
  takes(permute_case({2, 100, 3, 64}, {0, 2, 1, 3}, 4), false);              // 100 rows: not whole blocks of 16
  takes(permute_case({2, 2, 64, 3, 64}, {1, 0, 3, 2, 4}, 4), false);         // four batch dims
  takes(permute_case({1024, 64}, {0, 1}, 4, {66, 1}), false);                // rows 8 bytes off 16-byte alignment
}

// Warp pairs share narrow tiles from N = 7 (narrow_transpose.cuh says why), unless the switch
// forces one way.
TEST(KernelsOnHost, NarrowPairsRule) {
  using torch_transpose::Override;
  const Override setting = torch_transpose::narrow_pairs_override();
  for (int n = 2; n <= torch_transpose::kNarrowMax; ++n) {
    const int expected = setting == Override::Always ? 2 : setting == Override::Never ? 1 : (n >= 7 ? 2 : 1);
    EXPECT_EQ(torch_transpose::narrow_warps_per_tile(n), expected) << "n=" << n;
  }
}

TEST(KernelsOnHost, FlatTilesStridedAndMisaligned) {
  for (int e : kWidths) {
    check_case(permute_case({700, 16}, {1, 0}, e, {17, 1}));      // rows with a gap: line load
    check_case(permute_case({700, 16}, {1, 0}, e, {16, 1}, 3));   // dense but misaligned base
    check_case(permute_case({700, 12}, {1, 0}, e, {1, 700}));     // column-major input: a copy
    check_case(permute_case({50, 3}, {1, 0}, e, {6, 2}));         // stepped fast dim
  }
}

TEST(KernelsOnHost, CopiesShortAndLongRows) {
  for (int e : kWidths) {
    check_case(permute_case({4, 50, 3, 128}, {0, 2, 1, 3}, e));  // BSHD -> BHSD: short rows
    check_case(permute_case({3, 5000}, {0, 1}, e, {5003, 1}));   // long rows
    // Long rows of vectors (more than a block's one vector each), shorter than one chunk
    // (row_chunk_copy's guarded vectors), some with a few elements after the last whole
    // vector, and rows of more than one chunk (16384 2-byte elements) whose last is partial.
    check_case(permute_case({2, 3, 3136}, {1, 0, 2}, e));
    check_case(into_view(permute_case({3, 4100}, {0, 1}, e, {4112, 1}), {4112, 1}, 0, "buf[:, :4100]"));
    check_case(into_view(permute_case({2, 20004}, {0, 1}, e, {20016, 1}, 16), {20016, 1}, 16, "buf[:, 16:20020]"));
    check_case(permute_case({3, 5000}, {0, 1}, e));              // one dense run: the driver's copy
    check_case(permute_case({7, 33}, {0, 1}, e, {40, 1}, 1));
    // The last batch dim a multiple of each group's rows: groups step through it (row_copy.cuh).
    check_case(permute_case({2, 512, 3, 32}, {0, 2, 1, 3}, e));
    check_case(permute_case({512, 8, 32}, {1, 0, 2}, e, {}, 1));
    // The fused QKV split: row_vector_copy in input order where ctest's third run forces it.
    check_case(permute_case({2, 13, 3, 4, 64}, {2, 0, 3, 1, 4}, e));
    check_case(into_view(permute_case({2, 13, 3, 4, 64}, {2, 0, 3, 1, 4}, e), {2 * 4 * 13 * 80, 4 * 13 * 80, 13 * 80, 80, 1}, 8,
                         "buf[..., 8:72]"));
  }
}

// Which walk row_vector_copy takes (row_copy.cuh, walk_rows_in_input_order): input order for the
// fused QKV split, whose rows in flight lie in runs of 12 input rows in output order; output
// order where that order already meets the input in long runs (ViT-B's heads, video frames).
// Sizes as the models suite's, 132 SMs; the decision only, no data.
TEST(KernelsOnHost, RowWalkRule) {
  using torch_transpose::Override;
  const Override setting = torch_transpose::row_walk_override();
  auto walks_in_input_order = [](const Case& c) {
    const LayoutPlan plan = place(c).plan;
    EXPECT_EQ(plan.kind, torch_transpose::PlanKind::Copy) << plan.explain();
    const torch_transpose::CopyArgs copy = copy_args_of(plan);
    const int64_t vectors = copy.n * c.element_bytes / 16;
    return torch_transpose::walk_rows_in_input_order(copy, copy.batch.plain, torch_transpose::in_input_order(copy.batch.plain),
                                                     vectors, c.element_bytes, 132);
  };
  auto expect = [&](const Case& c, bool rule) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(walks_in_input_order(c), setting == Override::Always ? true : setting == Override::Never ? false : rule);
  };
  expect(permute_case({64, 197, 3, 12, 64}, {2, 0, 3, 1, 4}, 2), true);    // ViT-B's fused QKV split
  expect(permute_case({16, 1024, 3, 12, 64}, {2, 0, 3, 1, 4}, 2), true);   // GPT-2's
  expect(permute_case({64, 197, 3, 12, 64}, {2, 0, 3, 1, 4}, 4), true);    // fp32
  expect(permute_case({4, 1024, 3, 12, 64}, {2, 0, 3, 1, 4}, 2), true);    // test_fused_qkv_splits' second
  expect(permute_case({2, 1024, 3, 4, 64}, {2, 0, 3, 1, 4}, 2), false);    // all of it in flight at once
  expect(permute_case({64, 197, 12, 64}, {0, 2, 1, 3}, 2), false);         // ViT-B's heads
  expect(permute_case({64, 197, 12, 64}, {0, 2, 1, 3}, 4), false);
  expect(permute_case({8, 64, 16, 3136}, {0, 2, 1, 3}, 2), false);         // video NCTHW -> NTCHW: rows of 6 KB
  // Input rows 80 elements apart: no two chain in the input, whichever walk; the input order
  // meets the output in runs of 2364 rows.
  expect(permute_case({64, 197, 3, 12, 64}, {2, 0, 3, 1, 4}, 2, {197 * 36 * 80, 36 * 80, 12 * 80, 80, 1}), true);
  expect(permute_case({64, 197, 12, 64}, {0, 2, 1, 3}, 2, {197 * 12 * 80, 12 * 80, 80, 1}), true);
}

// Which realign plans take tiles of 64 rows (realign_small_tiles_by_default), on 132 SMs, tiles
// counted at 128 rows: 1-byte plans under 7 per SM; 2-byte plans under 40 per SM, except tall
// ones with input rows of whole 16-byte vectors: from 10 per SM with the 528 blocks in flight
// over fewer than 6 bands of tiles_b tiles (tiles_b above 88).
TEST(KernelsOnHost, RealignSmallTilesRule) {
  using torch_transpose::realign_small_tiles_by_default;
  EXPECT_TRUE(realign_small_tiles_by_default(1, 7 * 132 - 1, 1000, true, 132));
  EXPECT_FALSE(realign_small_tiles_by_default(1, 7 * 132, 1000, true, 132));
  EXPECT_TRUE(realign_small_tiles_by_default(2, 40 * 132 - 1, 12, true, 132));
  EXPECT_FALSE(realign_small_tiles_by_default(2, 40 * 132, 12, true, 132));
  // bf16 50257x768 (GPT-2's embedding): 6 x 393 tiles; unaligned input rows keep 64.
  EXPECT_FALSE(realign_small_tiles_by_default(2, 6 * 393, 393, true, 132));
  EXPECT_TRUE(realign_small_tiles_by_default(2, 6 * 393, 393, false, 132));
  // The edges: 10 tiles per SM, and 6 bands (tiles_b = 88: 528 < 6 x 88 fails).
  EXPECT_TRUE(realign_small_tiles_by_default(2, 10 * 132 - 1, 393, true, 132));
  EXPECT_FALSE(realign_small_tiles_by_default(2, 10 * 132, 89, true, 132));
  EXPECT_TRUE(realign_small_tiles_by_default(2, 10 * 132, 88, true, 132));
}

// Which plans take realign window tiles by default (realign_window_by_default): every 1- and
// 2-byte plan the kernel fits, except 2-byte rows of 8-byte vectors unless their output side alone
// is off the 16-byte grid and the grid holds 4 tiles of 128 rows per SM. The side flags from the
// plans of fp16 8 x 4100 x 4096 (output rows of 8200 bytes) and its reverse.
TEST(KernelsOnHost, RealignHalfVectorRule) {
  using torch_transpose::realign_window_by_default;
  const int64_t four_per_sm = 4 * 132;
  for (int v : {1, 2, 8}) EXPECT_TRUE(realign_window_by_default(1, v, false, 1, 132)) << v;
  for (int v : {1, 2}) EXPECT_TRUE(realign_window_by_default(2, v, false, 1, 132)) << v;
  EXPECT_TRUE(realign_window_by_default(2, 4, true, four_per_sm, 132));
  EXPECT_FALSE(realign_window_by_default(2, 4, true, four_per_sm - 1, 132));
  EXPECT_FALSE(realign_window_by_default(2, 4, false, 100 * four_per_sm, 132));
  const LayoutPlan out_off = place(permute_case({8, 4100, 4096}, {0, 2, 1}, 2)).plan;
  EXPECT_TRUE(out_off.input_allows_vectors(0, 8));
  EXPECT_FALSE(out_off.output_allows_vectors(0, 8));
  const LayoutPlan in_off = place(permute_case({8, 4096, 4100}, {0, 2, 1}, 2)).plan;
  EXPECT_FALSE(in_off.input_allows_vectors(0, 8));
  EXPECT_TRUE(in_off.output_allows_vectors(0, 8));
}

TEST(KernelsOnHost, OutputViewsKeepTheirGuards) {
  // transpose into the columns [3, 3 + m) of a wider buffer, and into a stepped view.
  for (int e : kWidths) {
    check_case(into_view(permute_case({90, 40}, {1, 0}, e), {100, 1}, 3, "buf[:, 3:93]"));
    check_case(into_view(permute_case({40, 6}, {1, 0}, e), {80, 2}, 1, "buf[:, 1::2]"));
  }
}

TEST(KernelsOnHost, GridSmallerThanWork) {
  // With TORCH_TRANSPOSE_KERNELS=one_block_per_item=0 (ctest's fallback run) sm_count 1 caps the grid at
  // 64 blocks: every kernel's grid-stride loop runs.
  check_case(permute_case({600, 520}, {1, 0}, 4));
  check_case(permute_case({600, 521}, {1, 0}, 4, {523, 1}));  // window tiles
  check_case(permute_case({20000, 3}, {1, 0}, 4));
  check_case(permute_case({3, 40000}, {1, 0}, 2));
  check_case(permute_case({3000, 8, 8}, {0, 2, 1}, 2));
}

TEST(KernelsOnHost, RandomPermutations) {
  std::mt19937 rng(1234);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int64_t sizes_pool[] = {1, 2, 3, 5, 7, 8, 16, 31, 32, 33, 40, 64, 65};
  for (int trial = 0; trial < 1500; ++trial) {
    const int rank = pick(2, 5);
    std::vector<int64_t> shape(rank);
    int64_t numel = 1;
    for (auto& s : shape) {
      s = sizes_pool[pick(0, 12)];
      numel *= s;
    }
    if (numel > 60000) continue;
    std::vector<int> dims(rank);
    std::iota(dims.begin(), dims.end(), 0);
    std::shuffle(dims.begin(), dims.end(), rng);
    // Input: contiguous, or with padded rows (a gap in the fastest dim's parent), or a step.
    std::vector<int64_t> strides = contiguous_strides(shape);
    const int layout = pick(0, 2);
    if (layout == 1) {
      std::vector<int64_t> padded = shape;
      padded.back() += pick(1, 5);
      strides = contiguous_strides(padded);
    } else if (layout == 2) {
      for (auto& s : strides) s *= 2;
    }
    check_case(permute_case(shape, dims, kWidths[pick(0, 4)], strides, pick(0, 2) == 0 ? pick(1, 9) : 0));
    if (HasFailure()) break;
  }
}

// Batches of tiny matrices (the box tiles' plans): random batch sizes put box_chunk's window over
// different divisors, so chunks of whole vectors, the largest chunk and no chunk at all (other
// kernels) all occur; random matrix sides give vector walks that wrap inside rows (the carry
// walk); an input offset makes some bases misaligned (element-by-element walks).
TEST(KernelsOnHost, RandomTinyMatrixBatches) {
  std::mt19937 rng(58);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int box_vector_plans = 0, box_scalar_plans = 0;  // plans that fit box tiles, by their load walk
  for (int trial = 0; trial < 120; ++trial) {
    const int64_t rows = pick(2, 16), cols = pick(2, 16), batch = pick(64, 1500);
    const int e = kWidths[pick(0, 4)];
    const Case c = permute_case({batch, rows, cols}, {0, 2, 1}, e, {}, pick(0, 3) == 0 ? pick(1, 9) : 0);
    check_case(c);
    if (HasFailure()) break;
    const BoxPlan b = box_plan(c);
    if (b.fits) ++(b.load_v > 1 ? box_vector_plans : box_scalar_plans);
  }
  // The trials reach both walks (a proxy: plans that fit box tiles, whichever kernel runs them),
  // unless box tiles are off (ctest's fallback run).
  if (torch_transpose::box_tile_enabled()) {
    EXPECT_GT(box_vector_plans, 10);
    EXPECT_GT(box_scalar_plans, 10);
  }
}

}  // namespace
