// tma.cuh's copies and barriers on the CPU, for the host tests (cuda_on_host.h runs a block's
// threads as fibers). A load copies its box at once, zero-filling what lies outside the
// tensor and applying the 128-byte swizzle the device map asks for, then completes a phase of
// its barrier; a store copies the box back, clipped at the tensor's edges (the innermost one at
// 16-byte granularity, as the hardware does: tma_store_box). Fences and bulk
// groups have nothing to order here.
#pragma once

#include <cstdint>
#include <cstring>

#include "cuda_on_host.h"

#define __grid_constant__

namespace torch_transpose {

struct TmaTensorSpec;

// The map is the spec itself.
struct TmaMap {
  unsigned char* base = nullptr;
  int element_bytes = 1;
  uint64_t sizes[3] = {1, 1, 1};
  uint64_t byte_strides[3] = {0, 0, 0};  // dims 1 and 2 (index 0 unused: elements are packed)
  uint32_t box[3] = {1, 1, 1};
};

namespace host_emulation {

// Byte offset of box byte (row, col) in shared memory: 128-byte rows whose 16-byte chunks are
// permuted by the row's index mod 8 (CU_TENSOR_MAP_SWIZZLE_128B on a 1024-byte aligned buffer).
inline size_t swizzled_128(uint64_t row, uint64_t col) {
  return static_cast<size_t>(row * 128 + ((((col >> 4) ^ (row & 7)) << 4) | (col & 15)));
}

// Calls f(shared byte offset, global byte pointer or nullptr when outside the tensor) for every
// byte of box (c0, c1, c2).
template <typename F>
void for_each_box_byte(const TmaMap& m, int c0, int c1, int c2, F&& f) {
  const uint64_t row_bytes = static_cast<uint64_t>(m.box[0]) * m.element_bytes;  // 128 (encode_tma_map)
  for (uint32_t z = 0; z < m.box[2]; ++z)
    for (uint32_t y = 0; y < m.box[1]; ++y)
      for (uint64_t x = 0; x < row_bytes; ++x) {
        const int64_t gx = static_cast<int64_t>(c0) + static_cast<int64_t>(x / m.element_bytes);
        const int64_t gy = static_cast<int64_t>(c1) + y, gz = static_cast<int64_t>(c2) + z;
        const bool inside = gx >= 0 && gy >= 0 && gz >= 0 && static_cast<uint64_t>(gx) < m.sizes[0] &&
                            static_cast<uint64_t>(gy) < m.sizes[1] && static_cast<uint64_t>(gz) < m.sizes[2];
        unsigned char* g = inside ? m.base + gx * m.element_bytes + x % m.element_bytes + gy * m.byte_strides[1] +
                                        gz * m.byte_strides[2]
                                  : nullptr;
        f(swizzled_128(static_cast<uint64_t>(z) * m.box[1] + y, x), g);
      }
}

}  // namespace host_emulation

inline bool encode_tma_map(const TmaTensorSpec& s, TmaMap& map);

inline unsigned char* align_shared_1024(unsigned char* p) {
  return p + ((1024 - (reinterpret_cast<uintptr_t>(p) & 1023)) & 1023);
}

inline void mbarrier_init(uint64_t* bar, uint32_t /*arrivals*/) { __atomic_store_n(bar, uint64_t{0}, __ATOMIC_RELEASE); }
inline void mbarrier_init_fence() {}

// *bar counts completed phases; the phase of parity p is complete once the count's parity differs.
// The fiber gives way until another completes the phase.
inline void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  while ((__atomic_load_n(bar, __ATOMIC_ACQUIRE) & 1) == parity) host_emulation::give_way();
}

inline void tma_load_box(void* dst, const TmaMap* map, uint64_t* bar, uint32_t /*bytes*/, int c0, int c1, int c2) {
  unsigned char* smem = static_cast<unsigned char*>(dst);
  host_emulation::for_each_box_byte(*map, c0, c1, c2, [&](size_t s, const unsigned char* g) { smem[s] = g ? *g : 0; });
  __atomic_fetch_add(bar, uint64_t{1}, __ATOMIC_RELEASE);
}

inline void tma_load_box_evict_last(void* dst, const TmaMap* map, uint64_t* bar, uint32_t bytes, int c0, int c1, int c2) {
  tma_load_box(dst, map, bar, bytes, c0, c1, c2);  // a cache policy has no meaning here
}

inline void tma_store_box(const TmaMap* map, const void* src, int c0, int c1, int c2) {
  const unsigned char* smem = static_cast<const unsigned char*>(src);
  TmaMap granular = *map;
  const uint64_t per_16_bytes = 16 / static_cast<uint64_t>(map->element_bytes);
  granular.sizes[0] = (map->sizes[0] + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
  host_emulation::for_each_box_byte(granular, c0, c1, c2, [&](size_t s, unsigned char* g) {
    if (g) *g = smem[s];
  });
}

template <int N> inline void tma_wait_stores_read() {}
inline void tma_wait_stores_done() {}
inline void tma_fence_shared_writes() {}

}  // namespace torch_transpose
