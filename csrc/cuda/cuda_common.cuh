// Pieces shared by every CUDA kernel: element types by width, vectors, batch offsets.
#pragma once

#if defined(TT_CUDA_ON_HOST)
#include "cuda_on_host.h"  // tests only: the kernels as plain C++ on the CPU
#else
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../kernel_switches.h"
#include "../plan/batch_indexer.h"
#include "../plan/fast_dims.h"
#include "fast_divmod.cuh"
#include "../include/torch_transpose/launch_record.h"

namespace torch_transpose {

constexpr int kThreads = 256;

// A transpose moves bits, so kernels are instantiated per element width, not per dtype.
// cpu_kernels.cpp has its own table on purpose: CUDA's 8- and 16-byte vector types need
// alignment to their size (the plan proves it), while the CPU must accept complex128 at
// 8-byte alignment (alignof(c10::complex<double>) on x86-64), so it uses uint64_t and a plain
// two-word struct.
template <int E> struct ElementOf;
template <> struct ElementOf<1> { using type = uint8_t; };
template <> struct ElementOf<2> { using type = uint16_t; };
template <> struct ElementOf<4> { using type = uint32_t; };
template <> struct ElementOf<8> { using type = uint2; };
template <> struct ElementOf<16> { using type = uint4; };

// V elements moved by one load or store instruction (at most 16 bytes).
template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// A global load of one element or vector (1, 2, 4, 8 or 16 bytes). With kEvictLast it asks L1
// and L2 to evict its lines last (the L2 evict_last cache policy of createpolicy): what Triton's
// eviction_policy="evict_last" emits, and how Inductor's transpose kernels load.
template <bool kEvictLast, bool kFetch256 = false, typename V>
__device__ __forceinline__ V load_global(const V* p) {
  static_assert(sizeof(V) == 1 || sizeof(V) == 2 || sizeof(V) == 4 || sizeof(V) == 8 || sizeof(V) == 16,
                "1, 2, 4, 8 or 16 bytes");
  static_assert(!kFetch256 || (kEvictLast && (sizeof(V) == 4 || sizeof(V) == 8 || sizeof(V) == 16)),
                "256-byte fetches are built for evict_last loads of 4, 8 and 16 bytes");
#if defined(TT_CUDA_ON_HOST)
  return *p;  // a cache policy means nothing on the host
#else
  if constexpr (!kEvictLast) {
    return *p;
  } else {
    uint64_t policy;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    V v;
    if constexpr (sizeof(V) == 16) {
      uint4 u;
      if constexpr (kFetch256)
        asm("ld.global.L1::evict_last.L2::cache_hint.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
            : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
            : "l"(p), "l"(policy));
      else
        asm("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
            : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
            : "l"(p), "l"(policy));
      memcpy(&v, &u, sizeof(v));
    } else if constexpr (sizeof(V) == 8) {
      uint2 u;
      if constexpr (kFetch256)
        asm("ld.global.L1::evict_last.L2::cache_hint.L2::256B.v2.u32 {%0, %1}, [%2], %3;"
            : "=r"(u.x), "=r"(u.y)
            : "l"(p), "l"(policy));
      else
        asm("ld.global.L1::evict_last.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;"
            : "=r"(u.x), "=r"(u.y)
            : "l"(p), "l"(policy));
      memcpy(&v, &u, sizeof(v));
    } else if constexpr (sizeof(V) == 4) {
      uint32_t u;
      if constexpr (kFetch256)
        asm("ld.global.L1::evict_last.L2::cache_hint.L2::256B.u32 %0, [%1], %2;" : "=r"(u) : "l"(p), "l"(policy));
      else
        asm("ld.global.L1::evict_last.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(u) : "l"(p), "l"(policy));
      memcpy(&v, &u, sizeof(v));
    } else if constexpr (sizeof(V) == 2) {
      uint16_t u;
      asm("ld.global.L1::evict_last.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(u) : "l"(p), "l"(policy));
      memcpy(&v, &u, sizeof(v));
    } else {
      uint32_t u;
      asm("ld.global.L1::evict_last.L2::cache_hint.u8 %0, [%1], %2;" : "=r"(u) : "l"(p), "l"(policy));
      const uint8_t b = static_cast<uint8_t>(u);
      memcpy(&v, &b, sizeof(v));
    }
    return v;
  }
#endif
}

inline bool l2_evict_last_loads(bool rule) {
  const Override setting = switch_override("l2_evict_last");
  return decide(setting, rule);
}

// Shared memory a block must ask for so that no more than `blocks` of them fit an SM: an SM of
// sm_90 has 228 KB, and each resident block also takes 1 KB that the runtime reserves.
constexpr size_t kSmemPerSm = 228 * 1024, kSmemReservedPerBlock = 1024;
constexpr size_t smem_for_at_most(int blocks) { return kSmemPerSm / (blocks + 1) - kSmemReservedPerBlock + 1; }

// Bytes [m, m + 16) of the 32 bytes lo:hi (m in 0..15): the aligned chunk that starts m bytes
// into the first. Selects instead of a run-time register index (which would go to local memory).
__device__ __forceinline__ uint4 realign_chunk(uint4 lo, uint4 hi, int m) {
  const unsigned int w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int s = m >> 2;
  const unsigned int shift = 8u * static_cast<unsigned int>(m & 3);
  unsigned int x[5];
#pragma unroll
  for (int k = 0; k < 5; ++k) x[k] = s == 0 ? w[k] : s == 1 ? w[k + 1] : s == 2 ? w[k + 2] : w[k + 3];
  return make_uint4(__funnelshift_r(x[0], x[1], shift), __funnelshift_r(x[1], x[2], shift),
                    __funnelshift_r(x[2], x[3], shift), __funnelshift_r(x[3], x[4], shift));
}

// The 2x2 transpose of 2-byte halves: lo = the low halves of x0 and x1, hi = their high halves
// (x0's first, in the low bytes). Its own inverse.
__device__ __forceinline__ void transpose_2x2_halves(uint32_t x0, uint32_t x1, uint32_t& lo, uint32_t& hi) {
  lo = __byte_perm(x0, x1, 0x5410);
  hi = __byte_perm(x0, x1, 0x7632);
}

// y[i] = bytes i of x[0], x[1], x[2], x[3] (from the low byte up): byte pairs interleaved, then
// the pairs' 2x2 transpose.
__device__ __forceinline__ void transpose_4x4_bytes(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, uint32_t (&y)[4]) {
  const uint32_t lo01 = __byte_perm(x0, x1, 0x5140), hi01 = __byte_perm(x0, x1, 0x7362);
  const uint32_t lo23 = __byte_perm(x2, x3, 0x5140), hi23 = __byte_perm(x2, x3, 0x7362);
  transpose_2x2_halves(lo01, lo23, y[0], y[1]);
  transpose_2x2_halves(hi01, hi23, y[2], y[3]);
}

// Which sides of a plan keep it off whole 16-byte vectors at these addresses (their rows start off
// the 16-byte grid): the launch rules that treat the two sides differently ask this.
struct SidesOffGrid {
  bool input, output;
};
inline SidesOffGrid sides_off_grid(const LayoutPlan& plan, uintptr_t in_address, uintptr_t out_address) {
  const int64_t v = std::max<int64_t>(1, 16 / plan.element_bytes);  // a whole 16-byte vector
  return {!plan.input_allows_vectors(in_address, v), !plan.output_allows_vectors(out_address, v)};
}

// Batch offsets on the device: 32-bit magic-number division when the batch count allows it
// (64-bit division costs ~100 instructions, which short rows and small tiles cannot hide).
struct DeviceBatchIndexer {
  int rank = 0;
  bool fits_32 = true;
  FastDivmod div[kMaxPlanRank];
  BatchIndexer plain;

  // From a plan's batch dims, in place into a launcher's argument struct (BatchIndexer::assign
  // says why in place).
  void assign(const LayoutPlan& plan) {
    plain.assign(plan);
    set_divisors();
  }

  // The same batch dims in another order (row_copy.cuh's input walk): any order names every row once.
  void assign(const BatchIndexer& reordered) {
    plain = reordered;
    set_divisors();
  }

  void set_divisors() {
    rank = plain.rank;
    fits_32 = plain.count() < (int64_t{1} << 31);
    for (int i = 0; i < rank && fits_32; ++i) div[i] = FastDivmod(static_cast<uint32_t>(plain.sizes[i]));
  }

  int64_t count() const { return plain.count(); }

  __device__ __forceinline__ void offsets(int64_t linear, int64_t& in_offset, int64_t& out_offset) const {
    if (!fits_32) return plain.offsets(linear, in_offset, out_offset);
    uint32_t rest = static_cast<uint32_t>(linear);
    in_offset = 0;
    out_offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      uint32_t q, i;
      div[d].divmod(rest, q, i);
      rest = q;
      in_offset += static_cast<int64_t>(i) * plain.in_strides[d];
      out_offset += static_cast<int64_t>(i) * plain.out_strides[d];
    }
  }
};

inline int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }

#if !defined(TT_CUDA_ON_HOST)
// The launch's dynamic shared memory (a function, so that tests can supply their own).
__device__ __forceinline__ unsigned char* dynamic_smem() {
  extern __shared__ __align__(16) unsigned char smem[];
  return smem;
}

// Every launch goes through here, so tests can run the kernels on the CPU (cuda_on_host.h).
// A 3-D grid: blockIdx.x varies fastest, then y, then z. Errors are left for the caller's
// cudaGetLastError, as a <<<>>> launch leaves them.
template <typename... KernelArgs, typename... Args>
void launch_kernel_at(void (*kernel)(KernelArgs...), dim3 grid, int threads, size_t smem, cudaStream_t stream,
                      Args&&... args) {
  static_assert(sizeof...(KernelArgs) > 0 && sizeof...(KernelArgs) == sizeof...(Args), "one argument per parameter");
  // Each argument converted to its parameter's type, as <<<>>> would, and passed by address.
  std::tuple<std::remove_cv_t<KernelArgs>...> values{std::forward<Args>(args)...};
  std::apply(
      [&](auto&... value) {
        void* addresses[] = {static_cast<void*>(&value)...};
        (void)cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, dim3(static_cast<unsigned int>(threads)),
                               addresses, smem, stream);
      },
      values);
}
#endif

// The kernel is a template argument so that a dry run (launch_record.h) can name it.
template <auto kKernel, typename... Args>
void launch_kernel(dim3 grid, int threads, size_t smem, cudaStream_t stream, Args&&... args) {
  if (LaunchRecorder* recorder = active_launch_recorder) {
    recorder->launches.push_back(LaunchRecord{kernel_name<kKernel>(), {grid.x, grid.y, grid.z}, threads, smem});
    return;
  }
  launch_kernel_at(kKernel, grid, threads, smem, stream, std::forward<Args>(args)...);
}

template <auto kKernel, typename... Args>
void launch_kernel(unsigned int grid, int threads, size_t smem, cudaStream_t stream, Args&&... args) {
  launch_kernel<kKernel>(dim3{grid, 1, 1}, threads, smem, stream, std::forward<Args>(args)...);
}

}  // namespace torch_transpose
