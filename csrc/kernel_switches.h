// One override mechanism for the kernel choice. People set one variable,
//   TORCH_TRANSPOSE_KERNELS="-lean_tile,realign_window=1,tile_streams=4"
// a comma-separated list of name=integer, where "-name" means name=0 and "+name" name=1; tests
// replace it in-process (set_kernel_switches, torch_transpose.kernel_switches()). Unset, every
// rule decides. Each name is read where its rule lives; kKnownSwitches lists them all.
#pragma once

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace torch_transpose {

inline constexpr const char* kKnownSwitches[] = {
    "box_dense_loads", "box_half_stores", "box_periodic_stores", "box_tile", "box_vector_chunks", "compact_tile",
    "cpu_avx2", "cpu_avx512", "cpu_huge_pages", "cpu_packed_rows", "direct", "driver_copy", "fast_direct",
    "flat_tile_bytes", "gather_fetch_256", "gather_half_vectors", "gather_rows", "gather_scalar_edges", "gather_tile",
    "gather_whole_tiles", "half_tile_blocks", "interleave", "interleave_direct", "item_parts", "item_tile_items",
    "item_tiles", "l2_evict_last", "lean_interleave", "lean_items_first", "lean_narrow", "lean_rows", "lean_tile",
    "lean_window", "medium_rows", "narrow_block", "narrow_kernel", "narrow_pairs", "narrow_word_fetch_256",
    "narrow_word_fixed_lines", "narrow_words", "one_block_per_item", "output_span_realign", "output_span_tiles",
    "packed_lines", "realign_aligned_input", "realign_byte_quads", "realign_loads", "realign_small_tiles",
    "realign_window", "row_runs", "row_walk", "small_tile", "span_lines", "span_rotation", "span_tiles",
    "span_whole_lines", "tile_streams", "tma_persistent", "tma_tile", "vector_rows", "wide_byte_tile",
    "window_half_vectors", "window_tile",
};

struct KernelSwitches {
  std::vector<std::pair<std::string, long long>> values;
};

// The parsed form of `text`; nullptr for an empty text. Throws std::invalid_argument naming the
// variable, the entry and what was expected.
inline const KernelSwitches* parse_kernel_switches(const std::string& text) {
  auto* parsed = new KernelSwitches;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) continue;
    std::string name = entry;
    long long value = 1;
    if (entry[0] == '-' || entry[0] == '+') {
      name = entry.substr(1);
      value = entry[0] == '-' ? 0 : 1;
    } else if (const size_t eq = entry.find('='); eq != std::string::npos) {
      name = entry.substr(0, eq);
      const std::string number = entry.substr(eq + 1);
      char* stop = nullptr;
      value = std::strtoll(number.c_str(), &stop, 10);
      if (number.empty() || *stop != '\0') {
        delete parsed;
        throw std::invalid_argument("TORCH_TRANSPOSE_KERNELS: expected name=integer, -name or +name, got '" + entry + "'");
      }
    }
    bool known = false;
    for (const char* k : kKnownSwitches) known = known || name == k;
    if (!known) {
      delete parsed;
      throw std::invalid_argument("TORCH_TRANSPOSE_KERNELS: unknown switch '" + name +
                                  "' (torch_transpose.kernel_switch_names() lists them)");
    }
    parsed->values.emplace_back(name, value);
  }
  if (parsed->values.empty()) {
    delete parsed;
    return nullptr;
  }
  return parsed;
}

// The switches in force. Replaced tables are never freed: a reader on another thread may hold one.
inline std::atomic<const KernelSwitches*> kernel_switches_in_force{nullptr};

inline const KernelSwitches* current_kernel_switches() {
  static const bool from_environment = [] {
    const char* text = std::getenv("TORCH_TRANSPOSE_KERNELS");
    if (text != nullptr) kernel_switches_in_force.store(parse_kernel_switches(text), std::memory_order_release);
    return true;
  }();
  (void)from_environment;
  return kernel_switches_in_force.load(std::memory_order_acquire);
}

// `switches` as TORCH_TRANSPOSE_KERNELS's text ("" for none).
inline std::string kernel_switches_text(const KernelSwitches* switches) {
  std::string text;
  if (switches != nullptr) {
    for (const auto& [name, value] : switches->values) text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
  }
  return text;
}

// Replaces the switches in force (the text as TORCH_TRANSPOSE_KERNELS takes it; "" for none) and
// returns the text it replaced, for a scoped override to restore.
inline std::string set_kernel_switches(const std::string& text) {
  const KernelSwitches* next = parse_kernel_switches(text);
  const KernelSwitches* previous = current_kernel_switches();
  kernel_switches_in_force.store(next, std::memory_order_release);
  return kernel_switches_text(previous);
}

// The value set for `name`, or `fallback` when none is.
inline long long kernel_switch(const char* name, long long fallback) {
  const KernelSwitches* switches = current_kernel_switches();
  if (switches == nullptr) return fallback;
  long long value = fallback;
  for (const auto& [key, v] : switches->values)
    if (key == name) value = v;
  return value;
}

// True when `name` is set to 0.
inline bool switch_off(const char* name) { return kernel_switch(name, -1) == 0; }

// The value set for `name` when it lies in [lo, hi], else `fallback`.
inline long long switch_int_in_range(const char* name, long long lo, long long hi, long long fallback) {
  const long long value = kernel_switch(name, fallback);
  return value >= lo && value <= hi ? value : fallback;
}

// A switch over a kernel-choice rule: 0 = never, 1 = always, unset = the rule (decide()).
enum class Override { Never, Always, Rule };

inline Override switch_override(const char* name) {
  switch (kernel_switch(name, -1)) {
    case 0: return Override::Never;
    case 1: return Override::Always;
    default: return Override::Rule;
  }
}

inline bool decide(Override setting, bool rule) {
  return setting == Override::Always || (setting == Override::Rule && rule);
}

}  // namespace torch_transpose
