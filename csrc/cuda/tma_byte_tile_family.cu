// The TMA byte tile family: 1-byte transposes through the copy engine (sm_90).
#include <type_traits>

#include "tma_byte_tile_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {

// Whether the build holds sm_90 code (nvcc lists the architectures it compiles for).
#if defined(__CUDA_ARCH_LIST__)
constexpr bool built_for_sm90(std::initializer_list<int> archs) {
  for (int arch : archs)
    if (arch >= 900) return true;
  return false;
}
constexpr bool kBuiltForSm90 = built_for_sm90({__CUDA_ARCH_LIST__});
#else
constexpr bool kBuiltForSm90 = true;
#endif

template <typename Pipe, bool kEvictLast>
bool tma_tile_kernel_ready() {
  if (const LaunchRecorder* recorder = active_launch_recorder) return recorder->device.capability_major >= 9 && kBuiltForSm90;
  static PerDeviceAnswer ready;
  return ready.get([](int device) {
    int major = 0;
    cudaFuncAttributes attributes{};
    return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9 &&
           cudaFuncGetAttributes(&attributes, tma_byte_tile_transpose_kernel<Pipe, kEvictLast>) == cudaSuccess &&
           attributes.binaryVersion >= 90 && attributes.ptxVersion >= 90 &&
           cudaFuncSetAttribute(tma_byte_tile_transpose_kernel<Pipe, kEvictLast>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(Pipe::kSmemBytes)) == cudaSuccess;
  });
}

template <typename Pipe, bool kEvictLast>
bool launch_tma_pipeline(const LayoutPlan& plan, const void* in, void* out, cudaStream_t stream, int sm_count) {
  if (!tma_tile_kernel_ready<Pipe, kEvictLast>()) return false;
  TmaMap in_map, out_map;
  TmaTileArgs args;
  if (!make_tma_byte_tile_args(plan, in, out, /*wide_fills=*/!Pipe::kPersistent, in_map, out_map, args)) return false;
  const int64_t blocks = Pipe::kPersistent ? int64_t{Pipe::kBlocks} * std::max(sm_count, 1) : args.order.total;
  launch_kernel<tma_byte_tile_transpose_kernel<Pipe, kEvictLast>>(static_cast<unsigned int>(std::min(args.order.total, blocks)),
                kThreads, Pipe::kSmemBytes, stream, in_map, out_map, args);
  return true;
}

// 1-byte plans through the copy engine (tma_byte_tile_transpose.cuh); false when the switch,
// the device or the plan does not take them.
template <typename T>
bool launch_tma_byte_tiles(const LayoutPlan& plan, const T* in, T* out, cudaStream_t stream, int sm_count) {
  if (!decide(tma_tile_override(), true)) return false;
  const bool persistent = wants_tma_persistent(plan.numel);
  bool launched = false;
  with_bool(l2_evict_last_loads(true), [&](auto kEvictLast) {
    launched = persistent ? launch_tma_pipeline<TmaPersistentTiles, kEvictLast.value>(plan, in, out, stream, sm_count)
                          : launch_tma_pipeline<TmaOneTilePerBlock, kEvictLast.value>(plan, in, out, stream, sm_count);
  });
  return launched;
}

}  // namespace

bool launch_tma_byte_tile_family(const LaunchContext& c) {
  if (c.small_fast_dim() || c.plan.element_bytes != 1 || c.plan.vector_elems < 16) return false;
  return launch_tma_byte_tiles<uint8_t>(c.plan, typed_in<uint8_t>(c), typed_out<uint8_t>(c), c.stream, c.sm_count);
}

}  // namespace torch_transpose
