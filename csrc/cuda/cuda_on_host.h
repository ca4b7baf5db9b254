// Runs this library's CUDA kernels on the CPU, for tests only (tests/cpp/test_kernels_on_host.cpp).
//
// Compiled with TT_CUDA_ON_HOST, the .cuh kernels build as plain C++: each block
// runs as one fiber per CUDA thread (host_fibers.h), all on the calling thread, meeting at a
// barrier for every __syncthreads(), blocks one after another. Index math, masks, vector paths
// and tile shapes then get checked on machines without a GPU (CI), on every problem the plan
// can produce. Timing means nothing here, and
// only the GPU machine proves the real thing; this catches indexing bugs before a GPU run.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>  // before the __noinline__ macro below: libstdc++'s shared_ptr spells that attribute
#include <utility>

#include "host_fibers.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static

struct alignas(8) uint2 { unsigned int x, y; };
struct alignas(16) uint4 { unsigned int x, y, z, w; };
struct dim3 { unsigned int x = 0, y = 0, z = 0; };
inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { return uint4{x, y, z, w}; }

using cudaStream_t = void*;
enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1 };
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
template <typename Kernel> cudaError_t cudaFuncSetAttribute(Kernel, cudaFuncAttribute, int) { return cudaSuccess; }
// A device that runs every kernel this library builds (sm_90: tma_tile_kernel_ready).
enum cudaDeviceAttr { cudaDevAttrComputeCapabilityMajor = 75 };
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr, int) {
  *value = 9;
  return cudaSuccess;
}
struct cudaFuncAttributes { int binaryVersion = 90, ptxVersion = 90; };
template <typename Kernel> cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, Kernel) {
  *attributes = cudaFuncAttributes{};
  return cudaSuccess;
}
enum cudaMemcpyKind { cudaMemcpyDeviceToDevice = 3 };
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind, cudaStream_t) {
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}

inline thread_local dim3 threadIdx;
inline thread_local dim3 blockIdx;
inline dim3 gridDim;

inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<uint64_t>(a) * b) >> 32);
}
template <typename T> inline T min(T a, T b) { return std::min(a, b); }
inline void __stwb(uint4* address, uint4 value) { *address = value; }
template <typename T> inline T max(T a, T b) { return std::max(a, b); }

namespace torch_transpose {

// Dynamic shared memory, one array for every launch (blocks run one at a time); at least the
// largest tile (tile_transpose.cuh: 256 x 260 bytes).
alignas(16) inline unsigned char dynamic_smem_bytes[1 << 17];
inline unsigned char* dynamic_smem() { return dynamic_smem_bytes; }

namespace host_emulation {

// The fiber running now gives way to the others. threadIdx and blockIdx are one pair for all
// the fibers of the OS thread, so each fiber keeps its own across the switch.
inline void give_way() {
  const dim3 thread = threadIdx, block = blockIdx;
  FiberBlock::yield();
  threadIdx = thread;
  blockIdx = block;
}

// A reusable barrier for the fibers of one block: the last arrival moves the phase on and runs
// on; the others give way until they see it moved. Each call counts as one arrival wherever it
// is made, as the kernels' uniform barriers need (every thread makes the same calls).
class BlockBarrier {
 public:
  explicit BlockBarrier(int count) : count_(count) {}
  void wait() {
    const uint32_t phase = phase_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++phase_;
      return;
    }
    while (phase_ == phase) give_way();
  }

 private:
  uint32_t phase_ = 0;
  int arrived_ = 0;
  const int count_;
};

// One fiber pool per OS thread, whatever the kernel: stacks are kept for the next launch.
inline FiberBlock& fiber_block() {
  static thread_local FiberBlock block;
  return block;
}

inline thread_local BlockBarrier* current_barrier = nullptr;

// A kernel's own check failed (a claim the GPU build takes on trust): stop the test run.
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "kernel check failed: %s\n", what);
  std::abort();
}

}  // namespace host_emulation
}  // namespace torch_transpose

inline void __syncthreads() { torch_transpose::host_emulation::current_barrier->wait(); }
// Block-wide here: stronger than a warp barrier, and correct where every thread of the block
// makes the same __syncwarp calls (the kernels that use it promise that).
inline void __syncwarp(unsigned /*mask*/ = 0xffffffffu) { torch_transpose::host_emulation::current_barrier->wait(); }

// PRMT: byte i of the result is byte (selector nibble i) & 7 of the 8 bytes y:x.
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int selector) {
  const uint64_t both = (static_cast<uint64_t>(y) << 32) | x;
  unsigned int result = 0;
  for (int i = 0; i < 4; ++i) result |= static_cast<unsigned int>((both >> (8 * ((selector >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return result;
}

// The funnel shift: the low 32 bits of hi:lo shifted right by `shift` mod 32.
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
  return static_cast<unsigned int>(((static_cast<uint64_t>(hi) << 32) | lo) >> (shift & 31));
}

// The warp shuffle, through a slot per thread of the block. Every thread of the block must make
// the same calls (the kernels that use it promise that); `width` divides 32, and a lane whose
// source lies past its segment of `width` lanes gets its own value back, as on the GPU.
template <typename T>
inline T __shfl_down_sync(unsigned /*mask*/, T value, unsigned delta, int width = 32) {
  static T slots[1024];
  slots[threadIdx.x] = value;
  __syncthreads();
  const unsigned lane = threadIdx.x % static_cast<unsigned>(width);
  const T result = lane + delta < static_cast<unsigned>(width) ? slots[threadIdx.x + delta] : value;
  __syncthreads();
  return result;
}

// The indexed warp shuffle, the same way: lane `src_lane` of this thread's warp.
template <typename T>
inline T __shfl_sync(unsigned /*mask*/, T value, int src_lane, int /*width*/ = 32) {
  static T slots[1024];
  slots[threadIdx.x] = value;
  __syncthreads();
  const T result = slots[threadIdx.x / 32 * 32 + (src_lane & 31)];
  __syncthreads();
  return result;
}

namespace torch_transpose {

// A 3-D grid: blocks in launch order, x fastest, then y, then z.
template <typename... KernelArgs, typename... Args>
void launch_kernel_at(void (*kernel)(KernelArgs...), dim3 grid, int threads, size_t /*smem*/, cudaStream_t /*stream*/,
                      Args&&... args) {
  host_emulation::BlockBarrier barrier(threads);
  host_emulation::current_barrier = &barrier;
  gridDim = grid;
  auto thread_body = [&](int t) {
    for (unsigned int z = 0; z < grid.z; ++z) {
      for (unsigned int y = 0; y < grid.y; ++y) {
        for (unsigned int x = 0; x < grid.x; ++x) {
          threadIdx = dim3{static_cast<unsigned int>(t), 0, 0};
          blockIdx = dim3{x, y, z};
          kernel(args...);
          barrier.wait();
        }
      }
    }
  };
  using Body = decltype(thread_body);
  host_emulation::fiber_block().run(
      threads, [](void* body, int t) { (*static_cast<Body*>(body))(t); }, &thread_body);
  host_emulation::current_barrier = nullptr;
}

}  // namespace torch_transpose
