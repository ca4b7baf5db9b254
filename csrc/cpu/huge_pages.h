// Transparent huge pages for large new CPU outputs.
#pragma once

#include <cstdint>

#include "../kernel_switches.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace torch_transpose {

// Smaller outputs usually come from memory the allocator reuses, already faulted in.
constexpr int64_t kHugePageAdviceMinBytes = int64_t{4} << 20;

inline bool huge_page_advice_enabled() {
  const bool enabled = !switch_off("cpu_huge_pages");
  return enabled;
}

// Call before anything writes the new allocation [data, data + bytes).
inline void advise_huge_pages(void* data, int64_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < kHugePageAdviceMinBytes || !huge_page_advice_enabled()) return;
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const uintptr_t first = reinterpret_cast<uintptr_t>(data);
  const uintptr_t begin = (first + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (first + static_cast<uintptr_t>(bytes)) & ~(kHugePage - 1);
  // Advice only: if the system refuses it, the output is simply faulted in small pages.
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace torch_transpose
