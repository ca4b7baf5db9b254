// Non-temporal ("streaming") stores for the CPU tile kernel. A plain store first reads the
// output line into the cache (read for ownership), so a transpose whose output does not stay
// in cache moves three bytes for every two it needs. A streaming store writes whole lines
// straight to memory, which pays off only when every 64-byte line is written completely and
// at once: the kernel stages each tile in a small buffer and streams whole tile rows.
// SSE2 has them on every x86-64 CPU; elsewhere kHasStreamingStores is false and the kernel
// keeps plain stores.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace torch_transpose {

#if defined(__SSE2__)
constexpr bool kHasStreamingStores = true;

// Copies `bytes` (a multiple of 16) from src to dst, which must be 16-byte aligned.
inline void stream_bytes(void* dst, const void* src, int64_t bytes) {
  auto* d = static_cast<__m128i*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (int64_t i = 0; i < bytes / 16; ++i) {
    _mm_stream_si128(d + i, _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16 * i)));
  }
}

// Streaming stores are weakly ordered: fence them before the thread reports its work done.
inline void streaming_store_fence() { _mm_sfence(); }
#else
constexpr bool kHasStreamingStores = false;
inline void stream_bytes(void* dst, const void* src, int64_t bytes) { std::memcpy(dst, src, bytes); }
inline void streaming_store_fence() {}
#endif

}  // namespace torch_transpose
