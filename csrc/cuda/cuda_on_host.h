// Runs this library's CUDA kernels on the CPU, for tests only (tests/cpp/test_kernels_on_host.cpp).
//
// Compiled with TORCH_TRANSPOSE_CUDA_ON_HOST, the .cuh kernels build as plain C++: each block
// runs as kThreads std::threads that meet at a barrier for every __syncthreads(), blocks one
// after another. Index math, masks, vector paths and tile shapes then get checked on machines
// without a GPU (CI), on every problem the plan can produce. Timing means nothing here, and
// only the GPU machine proves the real thing; this catches indexing bugs before a GPU run.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

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

// A reusable barrier for the threads of one block. On Linux, waiters sleep on a futex of the
// phase word: the last arrival wakes them all at once, and none has to take a lock on its way
// out. (With a mutex and condition variable, each of the 255 woken threads queued for the mutex
// in turn; the host tests spent most of their time in that queue.) Elsewhere, the portable way.
class BlockBarrier {
 public:
  explicit BlockBarrier(int count) : count_(count) {}
  void wait() {
#if defined(__linux__)
    // The phase is read before arriving: it cannot move on until this thread has arrived.
    const uint32_t phase = phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_) {
      arrived_.store(0, std::memory_order_relaxed);  // before the phase moves: reused at once
      phase_.fetch_add(1, std::memory_order_acq_rel);
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&phase_), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
    } else {
      while (phase_.load(std::memory_order_acquire) == phase)
        syscall(SYS_futex, reinterpret_cast<uint32_t*>(&phase_), FUTEX_WAIT_PRIVATE, phase, nullptr, nullptr, 0);
    }
#else
    std::unique_lock<std::mutex> lock(mutex_);
    const uint32_t phase = phase_.load();
    if (++arrived_ == count_) {
      arrived_ = 0;
      phase_.fetch_add(1);
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return phase_.load() != phase; });
    }
#endif
  }

 private:
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "the futex word is the atomic's own");
  std::atomic<uint32_t> phase_{0};
  std::atomic<int> arrived_{0};
  const int count_;
#if !defined(__linux__)
  std::mutex mutex_;
  std::condition_variable cv_;
#endif
};

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

namespace torch_transpose {

// A 3-D grid: blocks in launch order, x fastest, then y, then z.
template <typename... KernelArgs, typename... Args>
void launch_kernel(void (*kernel)(KernelArgs...), dim3 grid, int threads, size_t /*smem*/, cudaStream_t /*stream*/,
                   Args&&... args) {
  host_emulation::BlockBarrier barrier(threads);
  gridDim = grid;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      threadIdx.x = static_cast<unsigned int>(t);
      host_emulation::current_barrier = &barrier;
      for (unsigned int z = 0; z < grid.z; ++z) {
        for (unsigned int y = 0; y < grid.y; ++y) {
          for (unsigned int x = 0; x < grid.x; ++x) {
            blockIdx = dim3{x, y, z};
            kernel(args...);
            barrier.wait();
          }
        }
      }
    });
  }
  for (auto& thread : pool) thread.join();
}

// The <<<grid, threads, smem, stream>>> launch, emulated: `threads` host threads, each running
// every block in turn, meeting at the barrier between blocks.
template <typename... KernelArgs, typename... Args>
void launch_kernel(void (*kernel)(KernelArgs...), unsigned int grid, int threads, size_t /*smem*/,
                   cudaStream_t /*stream*/, Args&&... args) {
  launch_kernel(kernel, dim3{grid, 1, 1}, threads, 0, nullptr, std::forward<Args>(args)...);
}

}  // namespace torch_transpose
