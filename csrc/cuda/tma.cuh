// Hopper's bulk tensor copies (TMA: cp.async.bulk.tensor) and the shared-memory barriers that
// their loads complete on, as small functions over inline PTX (sm_90). A tensor map describes a
// tiled view of a global tensor (base, sizes, byte strides, box); a load copies one box into
// shared memory and completes on an mbarrier, a store copies one box out of shared memory,
// clipping it at the tensor's edges, and completes in bulk groups. Out-of-range elements of a
// loaded box read as zero, so kernels built on these need no edge paths.
//
// Under TT_CUDA_ON_HOST (the host tests) the same functions come from
// tma_on_host.h: the copies run synchronously on the CPU, swizzle included, so the tests check
// every kernel's index math and the 128-byte swizzle it assumes.
#pragma once

#include <cstdint>

#include "cuda_common.cuh"

#if defined(TT_CUDA_ON_HOST)
#include "tma_on_host.h"
#else
#include <cuda.h>  // CUtensorMap and its enums (types only: the encoder is found at run time)
#include <cudaTypedefs.h>
#endif

namespace torch_transpose {

// One tensor as a TMA view: three dims, innermost first, in elements of element_bytes (a
// tensor with fewer has dims of size 1); byte strides of dims 1 and 2; the box a copy moves.
// Boxes here are 128 bytes wide (the 128-byte swizzle's limit), 16-byte chunk c of box row r
// stored at chunk c ^ (r % 8).
struct TmaTensorSpec {
  void* base = nullptr;
  int element_bytes = 1;
  uint64_t sizes[3] = {1, 1, 1};
  uint64_t byte_strides[2] = {0, 0};
  uint32_t box[3] = {1, 1, 1};
  int l2_fill_bytes = 128;  // how much the L2 fetches from DRAM per miss: 128 or 256
};

// What the copy engine accepts (cuTensorMapEncodeTiled's rules): a 16-byte aligned base,
// sizes of 1 .. 2^32, byte strides that are positive multiples of 16 below 2^40.
inline bool tma_spec_valid(const TmaTensorSpec& s) {
  if (reinterpret_cast<uintptr_t>(s.base) % 16 != 0) return false;
  for (int d = 0; d < 3; ++d)
    if (s.sizes[d] == 0 || s.sizes[d] > (uint64_t{1} << 32) || s.box[d] == 0 || s.box[d] > 256) return false;
  for (int d = 0; d < 2; ++d)
    if (s.byte_strides[d] == 0 || s.byte_strides[d] % 16 != 0 || s.byte_strides[d] >= (uint64_t{1} << 40)) return false;
  return true;
}

#if defined(TT_CUDA_ON_HOST)

inline bool encode_tma_map(const TmaTensorSpec& s, TmaMap& map) {
  if (!tma_spec_valid(s) || s.box[0] * static_cast<uint32_t>(s.element_bytes) != 128) return false;
  map.base = static_cast<unsigned char*>(s.base);
  map.element_bytes = s.element_bytes;
  for (int d = 0; d < 3; ++d) {
    map.sizes[d] = s.sizes[d];
    map.box[d] = s.box[d];
  }
  map.byte_strides[1] = s.byte_strides[0];
  map.byte_strides[2] = s.byte_strides[1];
  return true;
}

#else

using TmaMap = CUtensorMap;

// cuTensorMapEncodeTiled through the runtime's driver entry point, so the library needs no
// link against libcuda. False (the caller falls back to another kernel) when the driver lacks
// it or rejects the spec.
inline bool encode_tma_map(const TmaTensorSpec& s, TmaMap& map) {
  using Encode = PFN_cuTensorMapEncodeTiled_v12000;
  static const Encode encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return static_cast<Encode>(nullptr);
    return reinterpret_cast<Encode>(fn);
  }();
  // A dry run (launch_record.h) has no driver to ask: a valid spec counts as encoded.
  if (active_launch_recorder != nullptr) return tma_spec_valid(s) && s.element_bytes == 1;
  if (encode == nullptr || !tma_spec_valid(s) || s.element_bytes != 1) return false;
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUtensorMapL2promotion promotion =
      s.l2_fill_bytes == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  return encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, s.base, s.sizes, s.byte_strides,
                s.box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The first 1024-byte aligned address at or after p (the 128-byte swizzle repeats every 1024
// bytes of the shared address, and the kernels compute it from the buffer's start).
__device__ __forceinline__ unsigned char* align_shared_1024(unsigned char* p) {
  return p + ((1024 - (shared_address(p) & 1023)) & 1023);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TT_TMA_PTX(...) asm volatile(__VA_ARGS__)
#else
// Built for an older architecture: the kernels must not run (tma_tile_kernel_ready in
// tma_byte_tile_family.cu says so on the host), and a launch that got through anyway stops here rather
// than writing nothing.
#define TT_TMA_PTX(...) __trap()
#endif

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
  TT_TMA_PTX("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(arrivals));
}

// Makes initialised barriers visible to the copy engine (before the block's first barrier).
__device__ __forceinline__ void mbarrier_init_fence() { TT_TMA_PTX("fence.mbarrier_init.release.cluster;" ::: "memory"); }

// Waits for the barrier's phase of the given parity to complete.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  TT_TMA_PTX(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}

// One thread: arms `bar` for `bytes` and loads box (c0, c1, c2) of `map` into `dst`.
__device__ __forceinline__ void tma_load_box(void* dst, const TmaMap* map, uint64_t* bar, uint32_t bytes, int c0, int c1,
                                             int c2) {
  TT_TMA_PTX("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes) : "memory");
  TT_TMA_PTX(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(
          shared_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// The same load, asking L2 to keep the box's lines last (an L2 evict_last cache policy:
// load_global's, for the copy engine's loads; l2_evict_last).
__device__ __forceinline__ void tma_load_box_evict_last(void* dst, const TmaMap* map, uint64_t* bar, uint32_t bytes, int c0,
                                                        int c1, int c2) {
  [[maybe_unused]] uint64_t policy = 0;  // unread where TT_TMA_PTX traps (builds before sm_90)
  TT_TMA_PTX("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  TT_TMA_PTX("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes) : "memory");
  TT_TMA_PTX(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%3, %4, "
      "%5}], [%2], %6;" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2), "l"(policy)
      : "memory");
}

// One thread: stores `src` to box (c0, c1, c2) of `map` (clipped at the tensor's edges) and
// closes a bulk group with it.
__device__ __forceinline__ void tma_store_box(const TmaMap* map, const void* src, int c0, int c1, int c2) {
  TT_TMA_PTX("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                 reinterpret_cast<uint64_t>(map)),
             "r"(shared_address(src)), "r"(c0), "r"(c1), "r"(c2)
             : "memory");
  TT_TMA_PTX("cp.async.bulk.commit_group;" ::: "memory");
}

// The issuing thread: waits until at most N of its bulk groups still read shared memory.
template <int N> __device__ __forceinline__ void tma_wait_stores_read() {
  TT_TMA_PTX("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// The issuing thread: waits until all of its bulk groups are complete.
__device__ __forceinline__ void tma_wait_stores_done() { TT_TMA_PTX("cp.async.bulk.wait_group 0;" ::: "memory"); }

// Each thread that wrote shared memory a store will read: orders its writes before the copy
// engine's reads (with the block barrier that follows).
__device__ __forceinline__ void tma_fence_shared_writes() { TT_TMA_PTX("fence.proxy.async.shared::cta;" ::: "memory"); }

#undef TT_TMA_PTX

#endif  // !TT_CUDA_ON_HOST

}  // namespace torch_transpose
