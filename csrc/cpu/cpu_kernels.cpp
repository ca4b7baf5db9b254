// CPU backend: a cache-blocked tiled transpose and a strided row copy, templated on element
// size (a transpose moves bits, so every dtype of the same width shares one instantiation).
#include <ATen/Parallel.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>
#include <cstring>
#include <stdexcept>

#include "../kernel_switches.h"
#include "../kernels.h"
#include "../plan/batch_cursor.h"
#include "../plan/batch_indexer.h"
#include "../plan/fast_dims.h"
#include "packed_rows.h"
#include "row_copy.h"
#include "simd_transpose.h"
#include "streaming_store.h"

// ATen's at::parallel_for uses threads only where the including code is compiled with OpenMP;
// otherwise it silently runs the whole range on the calling thread. Until 2026-11-30 this file
// was built that way, and every CPU kernel ran on one thread. Build with -fopenmp (setup.py and
// CMakeLists.txt do).
#if AT_PARALLEL_OPENMP && !defined(_OPENMP) && defined(__linux__)
#error "csrc/cpu/cpu_kernels.cpp must be compiled with OpenMP (-fopenmp) to run on more than one thread"
#endif

namespace torch_transpose {

bool cpu_packed_rows_enabled() {
  const bool enabled = !switch_off("cpu_packed_rows");
  return enabled;
}

namespace {

// A dry run's record of a CPU family (launch_record.h): no grid, the variant in the name.
void record_cpu(LaunchRecorder* recorder, const char* family, std::string kernel) {
  LaunchRecord record;
  record.kernel = std::move(kernel);
  record.family = family;
  recorder->launches.push_back(std::move(record));
}


struct Bytes16 {
  uint64_t lo, hi;
};

template <int E> struct ElementOf;
template <> struct ElementOf<1> { using type = uint8_t; };
template <> struct ElementOf<2> { using type = uint16_t; };
template <> struct ElementOf<4> { using type = uint32_t; };
template <> struct ElementOf<8> { using type = uint64_t; };
template <> struct ElementOf<16> { using type = Bytes16; };

// A tile of this many bytes per side keeps both the tile's input rows and output rows in L1
// (32 x 32 fp32 = 4 KiB per side) while each row is at least two 64-byte lines.
constexpr int64_t kCpuTileBytes = 128;
template <typename T>
constexpr int64_t kCpuTile = std::max<int64_t>(16, kCpuTileBytes / static_cast<int64_t>(sizeof(T)));  // elements

// Tiles of large outputs in wide blocks (1-, 2-, 4- and 8-byte elements, unit stride along a
// on the input and along b on the output, kStreamingMinBytes or more) are 256 bytes wide: 64 x 64
// fp32.
constexpr int64_t kCpuWideTileBytes = 256;

// Outputs of at least this many bytes are written with streaming stores (streaming_store.h).
// Smaller ones may still be in cache when the caller reads them, which plain stores keep.
constexpr int64_t kStreamingMinBytes = int64_t{8} << 20;
// Row copies stream from a larger output: a copy is cheap enough that the cache it keeps
// counts more.
constexpr int64_t kRowStreamingMinBytes = int64_t{24} << 20;

// How many columns b (a multiple of k, at most b_full) of `rows` < k rows along a may go by
// blocks cut short along a: a block at column ib loads k elements from each of its k input rows,
// up to offset (ib + k - 1) * src_sb + k - 1 from the rows' start, which must not pass
// `readable` (the largest offset from there inside the input; negative: none is known).
inline int64_t short_block_columns(int64_t rows, int64_t b_full, int64_t k, int64_t src_sb, int64_t readable) {
  if (rows < 2 || src_sb <= 0 || readable < k - 1) return 0;  // one row: k loads for k elements
  const int64_t last_block = (readable - (k - 1)) / src_sb - (k - 1);  // the last column a block may start at
  return last_block < 0 ? 0 : std::min(b_full, (last_block / k + 1) * k);
}

// dst(ia, ib) = src(ia, ib) for a tile of na x nb elements; each side walks a and b with its
// own strides. Whole SIMD blocks where a is unit-stride on the source and b on the
// destination, scalar moves for the rest, except:
template <typename T>
void move_tile(const T* src, int64_t src_sa, int64_t src_sb, T* dst, int64_t dst_sa, int64_t dst_sb,
               int64_t na, int64_t nb, int64_t src_readable, BlockOrder order = BlockOrder::kOutputRowsFirst) {
  auto scalar_block = [&](int64_t a_lo, int64_t a_hi, int64_t b_lo, int64_t b_hi) {
    for (int64_t ia = a_lo; ia < a_hi; ++ia) {
      const T* s = src + ia * src_sa;
      T* d = dst + ia * dst_sa;
      if (dst_sb == 1) {
        for (int64_t ib = b_lo; ib < b_hi; ++ib) d[ib] = s[ib * src_sb];
      } else {
        for (int64_t ib = b_lo; ib < b_hi; ++ib) d[ib * dst_sb] = s[ib * src_sb];
      }
    }
  };
#if defined(TT_HAVE_AVX512_BLOCKS)
  if constexpr (sizeof(T) <= 8) {
    constexpr int64_t k64 = 64 / sizeof(T);  // the wide block side: 64 bytes
    if (src_sa == 1 && dst_sb == 1 && cpu_wide_blocks_enabled() && na >= k64 && nb >= k64) {
      // Whole blocks where they fit, then the rest of the tile as below (SSE2 and scalar).
      const int64_t a_whole = na / k64 * k64, b_whole = nb / k64 * k64;
      transpose_wide_blocks(src, src_sb, dst, dst_sa, a_whole, b_whole, order);
      move_tile(src + b_whole * src_sb, src_sa, src_sb, dst + b_whole, dst_sa, dst_sb, a_whole, nb - b_whole,
                src_readable - b_whole * src_sb);
      move_tile(src + a_whole, src_sa, src_sb, dst + a_whole * dst_sa, dst_sa, dst_sb, na - a_whole, nb,
                src_readable - a_whole);
      return;
    }
  }
#endif
  int64_t a_full = 0, b_full = 0;  // [0, a_full) x [0, b_full) goes through SIMD blocks
  int64_t b_done = 0;              // [0, a_full) x [0, b_done): whole blocks and blocks cut short along b
  int64_t b_part = 0;              // [a_full, na) x [0, b_part) through blocks cut short along a
  constexpr int64_t k = SimdBlock<T>::kSize;
  if constexpr (k > 1) {
    if (src_sa == 1 && dst_sb == 1) {
      a_full = na / k * k;
      b_full = nb / k * k;
      for (int64_t ia = 0; ia < a_full; ia += k) {
        for (int64_t ib = 0; ib < b_full; ib += k) {
          SimdBlock<T>::transpose(src + ib * src_sb + ia, src_sb, dst + ia * dst_sa + ib, dst_sa);
        }
      }
      b_done = b_full;
      if (nb - b_full >= 2) {
        for (int64_t ia = 0; ia < a_full; ia += k) {
          SimdBlock<T>::transpose(src + b_full * src_sb + ia, src_sb, dst + ia * dst_sa + b_full, dst_sa,
                                  static_cast<int>(k), static_cast<int>(nb - b_full));
        }
        b_done = nb;
      }
      b_part = short_block_columns(na - a_full, b_full, k, src_sb, src_readable - a_full);
      for (int64_t ib = 0; ib < b_part; ib += k) {
        SimdBlock<T>::transpose(src + ib * src_sb + a_full, src_sb, dst + a_full * dst_sa + ib, dst_sa,
                                static_cast<int>(na - a_full));
      }
    }
  }
  scalar_block(0, a_full, b_done, nb);
  scalar_block(a_full, na, b_part, nb);
}

// Streaming needs a large output whose tile rows are contiguous and start on a 64-byte line
// in every batch entry (tile rows start at multiples of kCpuTileBytes along b), so that each
// row is whole lines. Rows that start mid-line made streaming 2-4x slower than plain stores
// (1448 x 1448 fp32 and bf16 on our CI machine).
// `out` and every batch entry's start lie on 64-byte lines (the rule the tiles and the row
// copies share; each adds its own row and size checks).
inline bool batch_on_lines(const BatchIndexer& batch, const void* out, int64_t element_bytes) {
  constexpr int64_t line = 64;
  if (!kHasStreamingStores || reinterpret_cast<uintptr_t>(out) % line != 0) return false;
  for (int d = 0; d < batch.rank; ++d) {
    if ((batch.out_strides[d] * element_bytes) % line != 0) return false;
  }
  return true;
}

// Streaming a large transposed output (`large`: kStreamingMinBytes or more) needs its rows
// contiguous and whole lines.
template <typename T>
bool use_streaming_stores(const FastDims& f, const BatchIndexer& batch, const T* out, bool large) {
  constexpr int64_t e = sizeof(T);
  return large && f.out_sb == 1 && (f.out_sa * e) % 64 == 0 && batch_on_lines(batch, out, e);
}

template <typename T>
bool use_streaming_rows(const BatchIndexer& batch, int64_t n, int64_t in_sb, int64_t out_sb, const T* out) {
  constexpr int64_t e = sizeof(T);
  if (in_sb != 1 || out_sb != 1 || (n * e) % 64 != 0 || batch.count() * n * e < kRowStreamingMinBytes) return false;
  return batch_on_lines(batch, out, e);
}

// Whether a tile's SIMD blocks are wide blocks (move_tile): 1-, 2-, 4- and 8-byte elements, unit
// stride along a on the input and along b on the output, on a CPU that has AVX-512 or AVX2.
template <typename T>
bool wide_block_tiles(const FastDims& f) {
#if defined(TT_HAVE_AVX512_BLOCKS)
  return sizeof(T) <= 8 && f.in_sa == 1 && f.out_sb == 1 && cpu_wide_blocks_enabled();
#else
  (void)f;
  return false;
#endif
}

// Elements of the per-thread staging tile: none where blocks go straight to the output. (A
// variable template: GCC 12 stopped with an internal error on the same expression written
// inside transpose_tiles_of's lambda.)
template <int64_t kTile, BlockOrder kOrder>
constexpr int64_t kStagedElements = kOrder == BlockOrder::kOutputRowsFirst ? kTile * kTile : 1;

// The tile loop, with the tile side a constant (a run-time side cost 3-8% on 1024^2 fp32, where
// a tile takes about 200 ns). kOrder: the wide blocks' order; input rows first (streamed or
// not), every tile goes straight through move_tile in that order, no tile is staged.
template <typename T, int64_t kTile, BlockOrder kOrder>
void transpose_tiles_of(const FastDims& f, const BatchIndexer& batch, bool streaming, const T* in, T* out) {
  constexpr bool kDirectBlocks = kOrder != BlockOrder::kOutputRowsFirst;
  constexpr int64_t tile = kTile, e = sizeof(T);
  // Plain copies, not structured bindings: a lambda may capture those only from C++20.
  const int64_t size_a = f.size_a, size_b = f.size_b, in_sa = f.in_sa, in_sb = f.in_sb, out_sa = f.out_sa, out_sb = f.out_sb;
  const int64_t tiles_a = (size_a + tile - 1) / tile, tiles_b = (size_b + tile - 1) / tile;
  const int64_t total = batch.count() * tiles_a * tiles_b;
  // A few tiles per task amortise the scheduling; tiles are independent, so any split is safe.
  at::parallel_for(0, total, 16, [&](int64_t begin, int64_t end) {
    alignas(64) T staged[kStagedElements<kTile, kOrder>];  // 2-16 KiB: one tile, in L1
    for (int64_t t = begin; t < end; ++t) {
      const int64_t tb = t % tiles_b, ta = (t / tiles_b) % tiles_a, bi = t / (tiles_b * tiles_a);
      int64_t in_off, out_off;
      batch.offsets(bi, in_off, out_off);
      const int64_t a0 = ta * tile, b0 = tb * tile;
      const int64_t na = std::min(size_a, a0 + tile) - a0, nb = std::min(size_b, b0 + tile) - b0;
      const T* src = in + in_off + a0 * in_sa + b0 * in_sb;
      T* dst = out + out_off + a0 * out_sa + b0 * out_sb;
      // The item's last element, as an offset from src: every element between lies in the
      // input's storage (strides are never negative).
      const int64_t readable = (size_a - 1 - a0) * in_sa + (size_b - 1 - b0) * in_sb;
      if constexpr (kDirectBlocks) {
        // Streamed, each block's output rows are whole lines (tile rows start on lines, blocks
        // are 64 bytes wide); the rest of an edge tile goes by plain stores.
        move_tile(src, in_sa, in_sb, dst, out_sa, out_sb, na, nb, readable, kOrder);
      } else if (streaming && na == tile && nb == tile) {
        // Whole tiles: transpose into the L1-resident buffer, then stream out whole rows.
        move_tile(src, in_sa, in_sb, staged, tile, int64_t{1}, tile, tile, readable);
        for (int64_t ia = 0; ia < tile; ++ia) {
          stream_bytes(dst + ia * out_sa, staged + ia * tile, tile * e);
        }
      } else {
        move_tile(src, in_sa, in_sb, dst, out_sa, out_sb, na, nb, readable);
      }
    }
    if (streaming) streaming_store_fence();
  });
}

#if defined(TT_HAVE_AVX512_PACKED_ROWS)
template <typename T>
bool permutes_pay(int64_t c, bool unpack) {
  constexpr int64_t lanes = 64 / sizeof(T);
  const bool power_of_two = (c & (c - 1)) == 0;
  return power_of_two ? c < lanes && (c <= 8 || sizeof(T) == 1 || !unpack) : (c <= 7 || sizeof(T) == 1);
}
#endif

#if defined(TT_HAVE_SHUFFLED_PACKED_ROWS)
template <typename T>
bool shuffles_pay(int64_t c, bool unpack) {
  if (c <= 8) return true;
  if (unpack) return false;
  return sizeof(T) == 1 ? c <= 10 : sizeof(T) >= 4 && c <= 12;
}

// The same for the AVX2 form (two problems a 32-byte register, one shuffle for 32 bytes), which
// pays for more rows: up to 8 rows; packs of 1- and 2-byte elements to 12, of 4- and 8-byte ones
// to 16; unpacks of 1-byte elements to 9, of 8-byte ones to 12.
template <typename T>
bool pair_shuffles_pay(int64_t c, bool unpack) {
  if (c <= 8) return true;
  if (unpack) return sizeof(T) == 1 ? c <= 9 : sizeof(T) == 8 && c <= 12;
  return sizeof(T) <= 2 ? c <= 12 : c <= 16;
}
#endif

// How a packed plan moves its whole registers, if it is one (move_packed_rows). 16-byte
// elements (complex128) are a register each: element moves (packs only).
enum class PackedRoute { kNone, kInterleave, kPermutes, kShuffles, kElementMoves };

// Packs of 2, 4 or 8 elements that fit a 16-byte vector interleave (simd_transpose.h: log2(c)
// unpacks a register) on every CPU; the rest take the permutes on CPUs that run them, by their
// rule, else the shuffles.
template <typename T>
PackedRoute packed_route(int64_t c, bool unpack) {
  if (!cpu_packed_rows_enabled()) return PackedRoute::kNone;
  if constexpr (sizeof(T) == 16) {
    return !unpack && c >= 2 && c <= kMaxPackedRows ? PackedRoute::kElementMoves : PackedRoute::kNone;
  }
#if defined(TT_HAVE_SHUFFLED_PACKED_ROWS)
  if constexpr (sizeof(T) <= 8) {
    if (!unpack && interleaves<T>(c)) return PackedRoute::kInterleave;
    if (cpu_packs_rows(sizeof(T), c)) return permutes_pay<T>(c, unpack) ? PackedRoute::kPermutes : PackedRoute::kNone;
    if (cpu_shuffles_rows(sizeof(T), c)) {
      const bool pay = cpu_avx2_enabled() ? pair_shuffles_pay<T>(c, unpack) : shuffles_pay<T>(c, unpack);
      if (pay) return PackedRoute::kShuffles;
    }
  }
#endif
  (void)unpack;
  return PackedRoute::kNone;
}

template <int C, typename T>
void pack_elements(const T* src, int64_t src_stride, T* dst, int64_t n) {
  const T* rows[C];
  for (int j = 0; j < C; ++j) rows[j] = src + j * src_stride;
  for (int64_t p = 0; p < n; ++p, dst += C) {
#pragma GCC unroll 16
    for (int j = 0; j < C; ++j) dst[j] = rows[j][p];
  }
}

// pack_elements for a run-time c (2 <= c <= kMaxPackedRows).
template <typename T>
void pack_elements(const T* src, int64_t src_stride, int64_t c, T* dst, int64_t n) {
  with_packed_rows<kMaxPackedRows>(c, [&](auto rows) { pack_elements<decltype(rows)::value>(src, src_stride, dst, n); });
}

// Whole registers of a run along the route (whole: a multiple of its lanes).
template <typename T>
void move_packed_registers(PackedRoute route, const T* src, int64_t src_stride, int64_t c, T* dst, int64_t dst_stride,
                           int64_t whole, bool pack, bool stream) {
  if (route == PackedRoute::kElementMoves) return pack_elements(src, src_stride, c, dst, whole);  // packs only
#if defined(TT_HAVE_SHUFFLED_PACKED_ROWS)
  if constexpr (sizeof(T) <= 8) {
    const int rows = static_cast<int>(c);
    if (route == PackedRoute::kInterleave) return interleave_rows(src, src_stride, rows, dst, whole);
    const PackDirection d = pack ? PackDirection::kPack : PackDirection::kUnpack;
    if (route == PackedRoute::kPermutes) return move_rows_by_permutes(d, src, src_stride, rows, dst, dst_stride, whole, stream);
    return move_rows_by_shuffles(d, src, src_stride, rows, dst, dst_stride, whole, stream);
  }
#endif
  (void)stream;
}

constexpr int64_t kPackedRun = 4096;  // elements along the long side per task: whole registers

template <typename T>
bool move_packed_rows(const FastDims& f, const BatchIndexer& batch, const T* in, T* out) {
  if (f.in_sa != 1 || f.out_sb != 1) return false;
  // Pack: output rows of c = size_b elements back to back (out_sa == c). Unpack: input rows of
  // c = size_a elements back to back (in_sb == c). Each needs a register's lanes along the long
  // side (64 bytes for the permutes, 16 for the rest).
  auto lanes_of = [](PackedRoute route) -> int64_t {
    return std::max<int64_t>(1, (route == PackedRoute::kPermutes ? 64 : 16) / static_cast<int64_t>(sizeof(T)));
  };
  PackedRoute route = f.out_sa == f.size_b ? packed_route<T>(f.size_b, false) : PackedRoute::kNone;
  const bool pack = route != PackedRoute::kNone && f.size_a >= lanes_of(route);
  if (!pack) route = f.in_sb == f.size_a ? packed_route<T>(f.size_a, true) : PackedRoute::kNone;
  if (!pack && (route == PackedRoute::kNone || f.size_b < lanes_of(route))) return false;
  const int64_t lanes = lanes_of(route);
  const int64_t c = pack ? f.size_b : f.size_a, n = pack ? f.size_a : f.size_b;
  const int64_t runs = (n + kPackedRun - 1) / kPackedRun;
  // Outputs of kRowStreamingMinBytes or more are streamed where every register's store is a
  // whole line (64-byte registers) or within one (16-byte ones): batch items on lines, and for
  // an unpack the output rows too (a pack's runs start kPackedRun groups apart).
  constexpr int64_t e = sizeof(T);
  const bool large = batch.count() * f.size_a * f.size_b * e >= kRowStreamingMinBytes;
  const bool stream = large && (route == PackedRoute::kPermutes || route == PackedRoute::kShuffles) &&
                      batch_on_lines(batch, out, e) && (pack || (f.out_sa * e) % 64 == 0);
  if (LaunchRecorder* recorder = active_launch_recorder) {
    record_cpu(recorder, "packed_rows", std::string(pack ? "pack" : "unpack") + "<" + std::to_string(e) + " bytes, c=" +
                                            std::to_string(c) + (stream ? ", streamed>" : ">"));
    return true;
  }
  const int64_t size_a = f.size_a, size_b = f.size_b, in_sb = f.in_sb, out_sa = f.out_sa;
  at::parallel_for(0, batch.count() * runs, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      int64_t in_off, out_off;
      batch.offsets(t / runs, in_off, out_off);
      const int64_t p0 = (t % runs) * kPackedRun, len = std::min(kPackedRun, n - p0), whole = len / lanes * lanes;
      // The tail past the last whole register (and every element of it, for a run of one
      // short plane) by move_tile; `readable` as in transpose_tiles_of.
      if (pack) {
        const T* src = in + in_off + p0;
        T* dst = out + out_off + p0 * c;
        move_packed_registers(route, src, in_sb, c, dst, int64_t{0}, whole, true, stream);
        const int64_t a0 = p0 + whole;
        move_tile(src + whole, int64_t{1}, in_sb, dst + whole * c, c, int64_t{1}, len - whole, c,
                  (size_a - 1 - a0) + (size_b - 1) * in_sb);
      } else {
        const T* src = in + in_off + p0 * c;
        T* dst = out + out_off + p0;
        move_packed_registers(route, src, int64_t{0}, c, dst, out_sa, whole, false, stream);
        const int64_t b0 = p0 + whole;
        move_tile(src + whole * c, int64_t{1}, c, dst + whole, out_sa, int64_t{1}, c, len - whole,
                  (size_a - 1) + (size_b - 1 - b0) * in_sb);
      }
    }
    if (stream) streaming_store_fence();
  });
  return true;
}

template <typename T>
void transpose_tiles(const LayoutPlan& plan, const T* in, T* out) {
  constexpr int64_t e = sizeof(T);
  const FastDims f = FastDims::from_plan(plan);
  const BatchIndexer batch = BatchIndexer::from_plan(plan);
  if (move_packed_rows(f, batch, in, out)) return;
  const bool large = batch.count() * f.size_a * f.size_b * e >= kStreamingMinBytes;
  const bool streaming = use_streaming_stores(f, batch, out, large);
  if (LaunchRecorder* recorder = active_launch_recorder) {
    const bool wide = e <= 8 && wide_block_tiles<T>(f) && large;
    record_cpu(recorder, "tiles", std::string(wide ? "wide_tiles<" : "tiles<") + std::to_string(e) + " bytes" +
                                      (streaming ? ", streamed>" : ">"));
    return;
  }
  if constexpr (e <= 8) {
    // Large outputs in wide blocks take wider tiles (kCpuWideTileBytes) walked input rows
    // first, unstaged: streamed where each output row is whole lines, plainly where not.
    if (wide_block_tiles<T>(f) && large) {
      if (streaming) {
        return transpose_tiles_of<T, kCpuWideTileBytes / e, BlockOrder::kInputRowsFirstStreamed>(f, batch, true, in, out);
      }
      return transpose_tiles_of<T, kCpuWideTileBytes / e, BlockOrder::kInputRowsFirst>(f, batch, false, in, out);
    }
  }
  transpose_tiles_of<T, kCpuTile<T>, BlockOrder::kOutputRowsFirst>(f, batch, streaming, in, out);
}

// Elements [j0, j1) of one row.
template <typename T>
inline void copy_run(const T* src, int64_t in_sb, T* dst, int64_t out_sb, int64_t j0, int64_t j1) {
  if (in_sb == 1 && out_sb == 1) {
    std::memcpy(dst + j0, src + j0, static_cast<size_t>(j1 - j0) * sizeof(T));
  } else {
    for (int64_t j = j0; j < j1; ++j) dst[j * out_sb] = src[j * in_sb];
  }
}

template <typename T>
void copy_rows(const LayoutPlan& plan, const T* in, T* out) {
  const int b = plan.out_fast_dim;
  const int64_t n = plan.sizes[b], in_sb = plan.in_strides[b], out_sb = plan.out_strides[b];
  // Long rows are split into chunks so one huge row still spreads over every thread.
  constexpr int64_t kChunk = 16384;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  const BatchIndexer batch = BatchIndexer::from_plan(plan);
  const int64_t total = batch.count() * chunks;
  const int64_t grain = std::max<int64_t>(1, kChunk / std::max<int64_t>(1, n));
  constexpr int64_t e = sizeof(T);
  const bool stream = chunks == 1 && use_streaming_rows(batch, n, in_sb, out_sb, out);
  const int64_t inline_below = batch.count() * n * e < kRowStreamingMinBytes ? kInlineRowBytesInCache : kInlineRowBytes;
  if (LaunchRecorder* recorder = active_launch_recorder) {
    record_cpu(recorder, "rows", "rows<" + std::to_string(e) + " bytes" + (chunks > 1 ? ", chunked" : "") +
                                     (stream ? ", streamed>" : ">"));
    return;
  }
  at::parallel_for(0, total, grain, [&](int64_t begin, int64_t end) {
    if (chunks == 1) {
      // Rows of one chunk, often short (row_copy.h): the cursor steps from row to row without
      // dividing, and short (in cache: under 8 KiB) or streamed contiguous rows are copied inline
      // where the CPU has AVX-512 or AVX2 (without either, streamed rows go by memcpy too).
#if defined(TT_HAVE_AVX512_ROW_COPY)
      if (in_sb == 1 && out_sb == 1 && (stream || n * e < inline_below)) {
        const auto* from = reinterpret_cast<const unsigned char*>(in);
        auto* to = reinterpret_cast<unsigned char*>(out);
        if (cpu_avx512_blocks_enabled()) return copy_rows_avx512(from, to, e, n * e, batch, begin, end, stream);
        if (cpu_avx2_enabled()) return copy_rows_avx2(from, to, e, n * e, batch, begin, end, stream);
      }
#endif
      BatchCursor row(batch, begin);
      for (int64_t t = begin; t < end; ++t, row.next()) {
        copy_run(in + row.in_offset, in_sb, out + row.out_offset, out_sb, 0, n);
      }
      return;
    }
    for (int64_t t = begin; t < end; ++t) {
      const int64_t row = t / chunks, j0 = (t % chunks) * kChunk, j1 = std::min(n, j0 + kChunk);
      int64_t in_off, out_off;
      batch.offsets(row, in_off, out_off);
      copy_run(in + in_off, in_sb, out + out_off, out_sb, j0, j1);
    }
  });
}

template <int E>
void run_typed(const LayoutPlan& plan, const void* in, void* out) {
  using T = typename ElementOf<E>::type;
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  if (plan.kind == PlanKind::Copy) {
    copy_rows(plan, src, dst);
  } else {
    transpose_tiles(plan, src, dst);
  }
}

}  // namespace

std::vector<LaunchRecord> dry_run_layout_plan_cpu(const LayoutPlan& plan, const void* in, const void* out) {
  LaunchRecorder recorder;
  RecordLaunches recording(recorder);
  run_layout_plan_cpu(plan, in, const_cast<void*>(out));
  return std::move(recorder.launches);
}

void run_layout_plan_cpu(const LayoutPlan& plan, const void* in, void* out) {
  if (plan.kind == PlanKind::Empty) return;
  switch (plan.element_bytes) {
    case 1: return run_typed<1>(plan, in, out);
    case 2: return run_typed<2>(plan, in, out);
    case 4: return run_typed<4>(plan, in, out);
    case 8: return run_typed<8>(plan, in, out);
    case 16: return run_typed<16>(plan, in, out);
    default: throw std::invalid_argument("run_layout_plan_cpu: unsupported element size");
  }
}

}  // namespace torch_transpose
