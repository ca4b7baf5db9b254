// Host-side choice of the rotation step for span tiles' whole-line store phase
// (span_tile_transpose.cuh, store_span_tile): a model of shared-memory bank conflicts.
//
// In that phase a warp stores four whole 128-byte lines: 8 lanes ("sides" s = 0..7) take the
// 8 vectors of one output row's line, 4 rows a side by side. Lane s gathers its vector's kV
// elements from kV consecutive input rows, kV * size_a elements apart from its neighbour's, so for
// many size_a the 8 sides meet in a few banks (size_a = 196, 2-byte: four-way conflicts on every
// gather load). Lane s therefore reads its elements in the order k + r, r = (s * step) % kV,
// which moves each side's loads to other banks; the step is chosen here, once per element width,
// row length and lines per tile, as the one whose modelled wavefronts per gather load are fewest.
// Model: the first pass of a block (kThreads vectors: 8 warps), every k, the span's head on the
// 16-byte grid; a bank's cost is the number of distinct 4-byte words its lanes read.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace torch_transpose {

// Wavefronts of the block's first pass of gather loads (summed over warps and k), whole-line
// mapping, rotation step `step`.
inline int span_gather_wavefronts(int element_bytes, int size_a, int lines, int step, int threads) {
  const int v_elems = 16 / element_bytes, total = size_a * 8 * lines;
  int sum = 0;
  for (int warp = 0; warp < threads / 32; ++warp) {
    for (int k = 0; k < v_elems; ++k) {
      std::array<int64_t, 32> word{};  // word read by each lane; -1: none
      for (int lane = 0; lane < 32; ++lane) {
        const int v = warp * 32 + lane;
        if (v >= total) {
          word[lane] = -1;
          continue;
        }
        const int s = v & 7, line = (v >> 3) / size_a, a = (v >> 3) % size_a;
        const int kk = (k + s * step) % v_elems;
        const int64_t element = static_cast<int64_t>((line * 8 + s) * v_elems + kk) * size_a + a;
        word[lane] = element * element_bytes / 4;
      }
      std::array<int, 32> distinct{};  // distinct words per bank
      for (int lane = 0; lane < 32; ++lane) {
        if (word[lane] < 0) continue;
        bool seen = false;
        for (int other = 0; other < lane && !seen; ++other) seen = word[other] == word[lane];
        if (!seen) ++distinct[word[lane] % 32];
      }
      int worst = 0;
      for (int count : distinct) worst = count > worst ? count : worst;
      sum += worst;
    }
  }
  return sum;
}

// The rotation step with the fewest modelled wavefronts (the smallest such step), cached per
// (element width, lines, size_a): size_a of 1..256, widths 1, 2, 4, 8, lines 1, 2, 4.
inline int span_rotation_step(int element_bytes, int size_a, int lines, int threads) {
  static std::array<std::atomic<int8_t>, 4 * 3 * 257> cache{};  // step + 1; 0 = not yet modelled
  const int width_index = element_bytes == 1 ? 0 : element_bytes == 2 ? 1 : element_bytes == 4 ? 2 : 3;
  const int lines_index = lines == 1 ? 0 : lines == 2 ? 1 : 2;
  std::atomic<int8_t>& slot = cache[(width_index * 3 + lines_index) * 257 + size_a];
  const int known = slot.load(std::memory_order_relaxed);
  if (known > 0) return known - 1;
  int best = 0, best_cost = span_gather_wavefronts(element_bytes, size_a, lines, 0, threads);
  for (int step = 1; step < 16 / element_bytes; ++step) {
    const int cost = span_gather_wavefronts(element_bytes, size_a, lines, step, threads);
    if (cost < best_cost) best = step, best_cost = cost;
  }
  slot.store(static_cast<int8_t>(best + 1), std::memory_order_relaxed);
  return best;
}

}  // namespace torch_transpose
