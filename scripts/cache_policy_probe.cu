// Probe (not the library, not the suite): L2 cache policies of the loads and of the stores on the
// one case issue 3 still misses, fp32 16x4194304 -> 4194304x16, where ours and torch.compile both
// run at 1.008 of copy and trade the lead by under 0.2% from suite to suite (bench/NOTES.md v41),
// and on an fp32 8192² square tile (the same bytes), to see whether a verdict carries over.
//
// Why policies: the largest single gain on this case was a cache policy (v30: evict_last loads,
// 0.983 -> 1.006-1.008 of copy), and its likely mechanism is which lines L2 gives up first when
// it needs room, the input's clean ones or the output's dirty ones. The stores' side of that
// choice was tried once, in v10 (evict-first stores, before evict_last loads existed), and lost.
// Here every pair of {load policy} x {store policy} runs the library's narrow tile (16 lines x 64,
// 128 threads, two 16-byte vectors per thread and side, the same 16-byte XOR swizzle), a few
// pairs run a 64 x 64 square tile of this probe's own (256 threads, four vectors per thread and
// side, padded shared memory) and a plain copy kernel, against cudaMemcpyAsync of the same bytes,
// interleaved round by round, by CUDA events around back-to-back launches. Narrow tile widths 32,
// 64 and 128 run with the library's policy. Every variant's output is checked element by element
// before it is timed.
//
// `placement` mode times a few of the variants with the output at several distances before or
// after the input. One allocation holds both in either mode (the default puts the output right
// after the input); the runs of bench/results/h200-ab-session39.md sections 1 and 2 had two.
//
// What it found (bench/NOTES.md v42): with input and output in two cudaMalloc buffers, .cs loads
// and stores beat the library's evict_last loads and plain stores by 0.004; in the library the
// same kernel lost 0.022 (and 0.043 on 4194304x16), and placement mode showed why: the policies'
// order depends on where the buffers lie, and the probe's placement was not the suite's.
// register_narrow_kernel (the transpose with no shared memory) lost at every placement: 0.94-0.96
// of cudaMemcpyAsync against the tile's 0.98-0.99 (v42).
//
//   nvcc -std=c++17 -O3 -arch=sm_90 scripts/cache_policy_probe.cu -o build/cache_policy_probe
//   build/cache_policy_probe [rounds]
//   build/cache_policy_probe placement [rounds]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.h"

// Load policies: plain read-only path; evict_last (the library's); evict_last with 256-byte
// fills; evict_last for half the lines (createpolicy's fraction); evict_first without L1; .cs.
enum Load { kLoadNc, kLoadEvictLast, kLoadEvictLast256, kLoadEvictLastHalf, kLoadEvictFirst, kLoadStreaming, kLoadCount };
// Store policies: plain; .cs (streaming); L2 evict_first; L2 evict_last; L2 evict_unchanged.
enum Store { kStorePlain, kStoreStreaming, kStoreEvictFirst, kStoreEvictLast, kStoreEvictUnchanged, kStoreCount };
const char* kLoadNames[] = {"nc", "evict_last", "evict_last+256B", "evict_last 0.5", "evict_first", "cs"};
const char* kStoreNames[] = {"plain", "cs", "evict_first", "evict_last", "evict_unchanged"};

template <int kLoad>
__device__ __forceinline__ uint4 load16(const uint4* p) {
  uint4 v;
  if constexpr (kLoad == kLoadNc) {
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else if constexpr (kLoad == kLoadStreaming) {
    asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else if constexpr (kLoad == kLoadEvictFirst) {
    uint64_t policy;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(policy));
  } else {
    uint64_t policy;
    if constexpr (kLoad == kLoadEvictLastHalf) {
      asm("createpolicy.fractional.L2::evict_last.b64 %0, 0.5;" : "=l"(policy));
    } else {
      asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    }
    if constexpr (kLoad == kLoadEvictLast256) {
      asm volatile("ld.global.L1::evict_last.L2::cache_hint.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(policy));
    } else {
      asm volatile("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(policy));
    }
  }
  return v;
}

template <int kStore>
__device__ __forceinline__ void store16(uint4* p, uint4 v) {
  if constexpr (kStore == kStorePlain) {
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
  } else if constexpr (kStore == kStoreStreaming) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
  } else {
    uint64_t policy;
    if constexpr (kStore == kStoreEvictFirst) {
      asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    } else if constexpr (kStore == kStoreEvictLast) {
      asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    } else {
      asm("createpolicy.fractional.L2::evict_unchanged.b64 %0, 1.0;" : "=l"(policy));
    }
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w), "l"(policy)
                 : "memory");
  }
}

constexpr int kLines = 16;

// One tile of 16 input lines x kWide elements into kWide dense output rows of 16, by kThreads
// threads of kPer 16-byte vectors per side; 16-byte chunk c of line i sits at c ^ (2 * ((i / 4) % 4))
// in shared memory, so the dense side's per-element reads hit 32 banks (the library's swizzle).
template <int kWide, int kThreads, int kLoad, int kStore>
__global__ void __launch_bounds__(kThreads) narrow_kernel(const uint32_t* __restrict__ in, uint32_t* __restrict__ out,
                                                          int32_t stride) {
  constexpr unsigned kChunksPerLine = kWide / 4, kPer = kWide * kLines / 4 / kThreads;
  static_assert(kPer >= 1 && kPer * kThreads * 4 == kWide * kLines, "whole chunks per thread");
  __shared__ __align__(16) uint32_t tile[kLines * kWide];
  uint4* chunks = reinterpret_cast<uint4*>(tile);
  const int32_t w0 = static_cast<int32_t>(blockIdx.x) * kWide;
  const uint32_t* src = in + w0;
  uint32_t* dst = out + w0 * kLines;
  uint4 v[kPer];
#pragma unroll
  for (unsigned u = 0; u < kPer; ++u) {
    const unsigned q = u * kThreads + threadIdx.x, line = q / kChunksPerLine, c = q % kChunksPerLine;
    v[u] = load16<kLoad>(reinterpret_cast<const uint4*>(src + static_cast<int32_t>(line) * stride + c * 4));
  }
#pragma unroll
  for (unsigned u = 0; u < kPer; ++u) {
    const unsigned q = u * kThreads + threadIdx.x, line = q / kChunksPerLine, c = q % kChunksPerLine;
    chunks[line * kChunksPerLine + (c ^ (2 * ((line / 4) % 4)))] = v[u];
  }
  __syncthreads();
#pragma unroll
  for (unsigned u = 0; u < kPer; ++u) {
    const unsigned d = u * kThreads + threadIdx.x, w = d / 4, a = d % 4;
    uint32_t e[4];
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) e[k] = tile[(4 * a + k) * kWide + (w ^ (8 * a))];
    store16<kStore>(reinterpret_cast<uint4*>(dst) + d, make_uint4(e[0], e[1], e[2], e[3]));
  }
}

// The same transpose with no shared memory: lane (a, c) of a warp (a = lane / 8, c = lane % 8)
// loads rows 4a..4a+3 of columns 4c..4c+3 (four 16-byte loads; each load instruction reads four
// whole 128-byte row pieces), transposes the 4 x 4 block by register renaming, and stores
// columns 4c..4c+3 of rows 4a..4a+3 (four 16-byte stores; four lanes a fill each column's 64
// output bytes). kPer groups of 32 columns per warp, 32 columns apart. No barrier: every thread
// stores as soon as its own loads arrive, as a copy kernel does.
template <int kPer, int kThreads, int kLoad, int kStore>
__global__ void __launch_bounds__(kThreads) register_narrow_kernel(const uint32_t* __restrict__ in,
                                                                   uint32_t* __restrict__ out, int32_t stride) {
  const unsigned lane = threadIdx.x % 32, a = lane / 8, c = lane % 8;
  const int32_t w0 = static_cast<int32_t>((blockIdx.x * (kThreads / 32) + threadIdx.x / 32) * 32 * kPer + 4 * c);
  uint4 v[kPer][4];
#pragma unroll
  for (int p = 0; p < kPer; ++p)
#pragma unroll
    for (int j = 0; j < 4; ++j)
      v[p][j] = load16<kLoad>(reinterpret_cast<const uint4*>(in + (4 * static_cast<int32_t>(a) + j) * stride + w0 + 32 * p));
#pragma unroll
  for (int p = 0; p < kPer; ++p) {
    uint32_t* dst = out + (w0 + 32 * p) * kLines + 4 * static_cast<int32_t>(a);
    store16<kStore>(reinterpret_cast<uint4*>(dst), make_uint4(v[p][0].x, v[p][1].x, v[p][2].x, v[p][3].x));
    store16<kStore>(reinterpret_cast<uint4*>(dst + kLines), make_uint4(v[p][0].y, v[p][1].y, v[p][2].y, v[p][3].y));
    store16<kStore>(reinterpret_cast<uint4*>(dst + 2 * kLines), make_uint4(v[p][0].z, v[p][1].z, v[p][2].z, v[p][3].z));
    store16<kStore>(reinterpret_cast<uint4*>(dst + 3 * kLines), make_uint4(v[p][0].w, v[p][1].w, v[p][2].w, v[p][3].w));
  }
}

// A 64 x 64 tile of an n x n fp32 matrix, by 256 threads of four 16-byte vectors per side: input
// rows into a tile padded to 65 columns, columns out as 16-byte runs of output rows.
template <int kLoad, int kStore>
__global__ void __launch_bounds__(256) square_kernel(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, int32_t n) {
  __shared__ uint32_t tile[64][65];
  const int32_t col0 = static_cast<int32_t>(blockIdx.x) * 64, row0 = static_cast<int32_t>(blockIdx.y) * 64;
  uint4 v[4];
#pragma unroll
  for (unsigned u = 0; u < 4; ++u) {
    const unsigned q = u * 256 + threadIdx.x, r = q / 16, c = q % 16;
    v[u] = load16<kLoad>(reinterpret_cast<const uint4*>(in + (row0 + static_cast<int32_t>(r)) * n + col0 + 4 * c));
  }
#pragma unroll
  for (unsigned u = 0; u < 4; ++u) {
    const unsigned q = u * 256 + threadIdx.x, r = q / 16, c = q % 16;
    tile[r][4 * c] = v[u].x;
    tile[r][4 * c + 1] = v[u].y;
    tile[r][4 * c + 2] = v[u].z;
    tile[r][4 * c + 3] = v[u].w;
  }
  __syncthreads();
#pragma unroll
  for (unsigned u = 0; u < 4; ++u) {
    const unsigned q = u * 256 + threadIdx.x, j = q / 16, c = q % 16;
    const uint4 e = make_uint4(tile[4 * c][j], tile[4 * c + 1][j], tile[4 * c + 2][j], tile[4 * c + 3][j]);
    store16<kStore>(reinterpret_cast<uint4*>(out + (col0 + static_cast<int32_t>(j)) * n + row0 + 4 * c), e);
  }
}

// A plain copy: each of 128 threads moves two 16-byte vectors, a block 4 KB (the tile's bytes).
template <int kLoad, int kStore>
__global__ void __launch_bounds__(128) copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out) {
  const uint32_t base = blockIdx.x * 256 + threadIdx.x;
  const uint4 a = load16<kLoad>(in + base), b = load16<kLoad>(in + base + 128);
  store16<kStore>(out + base, a);
  store16<kStore>(out + base + 128, b);
}

// Counts the output elements that differ from the input's transpose as a rows x cols matrix (or,
// with cols = 0, from the input: a copy).
__global__ void count_mismatches(const uint32_t* in, const uint32_t* out, int64_t total, int64_t rows, int64_t cols,
                                 unsigned long long* bad) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    // out is cols x rows: out[i] sits at output row i / rows (input column), column i % rows.
    const int64_t src = cols == 0 ? i : (i % rows) * cols + i / rows;
    if (out[i] != in[src]) atomicAdd(bad, 1ull);
  }
}

__global__ void fill_pattern(uint32_t* p, int64_t n, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    p[i] = static_cast<uint32_t>(i * 2654435761u) ^ seed;
}

// Calls add(kernel, name) with the library-shaped narrow tile (64 wide, 128 threads) for load
// policy L and every store policy S, in enum order.
template <int L, int... S, typename Add>
void add_store_policies(Add&& add, std::integer_sequence<int, S...>) {
  (add(narrow_kernel<64, 128, L, S>, std::string("tile64 ") + kLoadNames[L] + " / " + kStoreNames[S]), ...);
}

template <int... L, typename Add>
void add_policy_pairs(Add&& add, std::integer_sequence<int, L...>) {
  (add_store_policies<L>(add, std::make_integer_sequence<int, kStoreCount>{}), ...);
}

struct Variant {
  std::string name;
  int64_t rows, cols;  // the input as a matrix that the variant transposes; cols = 0: a copy
  std::function<void()> launch;
};

int main(int argc, char** argv) {
  // `placement [rounds]`: a few variants at several distances between the input and the output.
  const bool placement = argc > 1 && std::string(argv[1]) == "placement";
  const int rounds = argc > 1 + placement ? std::atoi(argv[1 + placement]) : 5;
  constexpr int64_t kWideN = 4194304, kElems = kWideN * kLines;
  const size_t bytes = kElems * sizeof(uint32_t);
  // One allocation for both, so that placement mode can set the distance between them.
  constexpr size_t kMaxGap = size_t{64} << 20;
  uint32_t *base, *in, *out;
  unsigned long long* bad;
  CHECK(cudaMalloc(&base, 2 * bytes + kMaxGap));
  in = base;
  out = base + kElems;
  CHECK(cudaMalloc(&bad, sizeof(*bad)));
  fill_pattern<<<1024, 256>>>(base, kElems * 2 + kMaxGap / 4, 0x9e3779b9u);
  CHECK(cudaGetLastError());

  std::vector<Variant> variants;
  variants.push_back({"cudaMemcpyAsync", 0, 0, [&] { CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); }});
  auto add_narrow = [&](auto kernel, int wide, int threads, const std::string& name) {
    variants.push_back({name, kLines, kWideN, [=, &in, &out] {
                          kernel<<<static_cast<unsigned>(kWideN / wide), threads>>>(in, out, int32_t{kWideN});
                        }});
  };
  // Every load x store pair on the library's tile shape, load policy by load policy.
  add_policy_pairs([&](auto kernel, const std::string& name) { add_narrow(kernel, 64, 128, name); },
                   std::make_integer_sequence<int, kLoadCount>{});
  add_narrow(narrow_kernel<32, 64, kLoadEvictLast, kStorePlain>, 32, 64, "tile32x64thr evict_last / plain");
  add_narrow(narrow_kernel<64, 64, kLoadEvictLast, kStorePlain>, 64, 64, "tile64x64thr evict_last / plain");
  add_narrow(narrow_kernel<128, 256, kLoadEvictLast, kStorePlain>, 128, 256, "tile128x256thr evict_last / plain");
  add_narrow(narrow_kernel<128, 128, kLoadEvictLast, kStorePlain>, 128, 128, "tile128x128thr evict_last / plain");
  add_narrow(narrow_kernel<128, 256, kLoadEvictLast, kStoreEvictFirst>, 128, 256, "tile128x256thr evict_last / evict_first");
  // No shared memory: columns per block = 32 * kPer * warps.
  add_narrow(register_narrow_kernel<1, 128, kLoadEvictLast, kStorePlain>, 128, 128, "registers x1 128thr evict_last / plain");
  add_narrow(register_narrow_kernel<1, 256, kLoadEvictLast, kStorePlain>, 256, 256, "registers x1 256thr evict_last / plain");
  add_narrow(register_narrow_kernel<2, 128, kLoadEvictLast, kStorePlain>, 256, 128, "registers x2 128thr evict_last / plain");
  add_narrow(register_narrow_kernel<4, 128, kLoadEvictLast, kStorePlain>, 512, 128, "registers x4 128thr evict_last / plain");
  add_narrow(register_narrow_kernel<1, 128, kLoadNc, kStorePlain>, 128, 128, "registers x1 128thr nc / plain");
  add_narrow(register_narrow_kernel<2, 128, kLoadNc, kStorePlain>, 256, 128, "registers x2 128thr nc / plain");
  add_narrow(register_narrow_kernel<2, 128, kLoadStreaming, kStoreStreaming>, 256, 128, "registers x2 128thr cs / cs");
  auto add_copy = [&](auto kernel, const std::string& name) {
    variants.push_back({name, 0, 0, [=, &in, &out] {
                          kernel<<<static_cast<unsigned>(bytes / 4096), 128>>>(reinterpret_cast<const uint4*>(in),
                                                                               reinterpret_cast<uint4*>(out));
                        }});
  };
  // The square: 8192² fp32 holds the same bytes as 16 x 4194304.
  constexpr int32_t kSide = 8192;
  static_assert(int64_t{kSide} * kSide == kElems, "the square moves the narrow case's bytes");
  auto add_square = [&](auto kernel, const std::string& name) {
    variants.push_back({name, kSide, kSide, [=, &in, &out] { kernel<<<dim3(kSide / 64, kSide / 64), 256>>>(in, out, kSide); }});
  };
  add_square(square_kernel<kLoadNc, kStorePlain>, "square nc / plain");
  add_square(square_kernel<kLoadEvictLast, kStorePlain>, "square evict_last / plain");
  add_square(square_kernel<kLoadEvictLast, kStoreEvictFirst>, "square evict_last / evict_first");
  add_square(square_kernel<kLoadStreaming, kStoreStreaming>, "square cs / cs");
  add_square(square_kernel<kLoadStreaming, kStoreEvictFirst>, "square cs / evict_first");
  add_square(square_kernel<kLoadEvictFirst, kStoreEvictFirst>, "square evict_first / evict_first");
  add_copy(copy_kernel<kLoadNc, kStorePlain>, "copy nc / plain");
  add_copy(copy_kernel<kLoadEvictLast, kStorePlain>, "copy evict_last / plain");
  add_copy(copy_kernel<kLoadEvictLast, kStoreEvictFirst>, "copy evict_last / evict_first");
  add_copy(copy_kernel<kLoadEvictFirst, kStorePlain>, "copy evict_first / plain");
  add_copy(copy_kernel<kLoadNc, kStoreStreaming>, "copy nc / cs");
  add_copy(copy_kernel<kLoadEvictFirst, kStoreEvictLast>, "copy evict_first / evict_last");

  // Check each variant's output, from a poisoned buffer.
  for (const Variant& v : variants) {
    CHECK(cudaMemset(out, 0xff, bytes));
    CHECK(cudaMemset(bad, 0, sizeof(*bad)));
    v.launch();
    count_mismatches<<<1024, 256>>>(in, out, kElems, v.rows, v.cols, bad);
    unsigned long long host_bad = 0;
    CHECK(cudaMemcpy(&host_bad, bad, sizeof(host_bad), cudaMemcpyDeviceToHost));
    if (host_bad != 0) {
      std::fprintf(stderr, "%s: %llu elements wrong\n", v.name.c_str(), host_bad);
      return 1;
    }
  }

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  constexpr int kLaunches = 40;
  auto time_us = [&](const Variant& v) {
    v.launch();  // warm: the first launch of a round pays the switch from the previous variant
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < kLaunches; ++i) v.launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms * 1e3 / kLaunches;
  };
  auto median = [](std::vector<double> x) {
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
  };
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, fp32 16x4194304 and 8192x8192 (%zu MB read + written), %d launches per reading, %d rounds\n\n", prop.name,
              2 * bytes / 1000000, kLaunches, rounds);
  // ratios[v][r]: memcpy's time in round r over variant v's, for the variants `chosen` (memcpy first).
  auto measure = [&](const std::vector<size_t>& chosen, std::vector<std::vector<double>>& ratios,
                     std::vector<std::vector<double>>& gbps) {
    ratios.assign(chosen.size(), {});
    gbps.assign(chosen.size(), {});
    for (int r = 0; r < rounds; ++r) {
      const double memcpy_us = time_us(variants[chosen[0]]);
      for (size_t i = 0; i < chosen.size(); ++i) {
        const double us = i == 0 ? memcpy_us : time_us(variants[chosen[i]]);
        ratios[i].push_back(memcpy_us / us);
        gbps[i].push_back(2.0 * bytes / (us * 1e3));
      }
    }
  };
  std::vector<std::vector<double>> ratios, gbps;
  if (!placement) {
    std::vector<size_t> all(variants.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    measure(all, ratios, gbps);
    std::printf("| variant | GB/s (median) | over cudaMemcpyAsync, median | min - max |\n|---|---|---|---|\n");
    for (size_t i = 0; i < variants.size(); ++i) {
      const auto [lo, hi] = std::minmax_element(ratios[i].begin(), ratios[i].end());
      std::printf("| %s | %.0f | %.4f | %.4f - %.4f |\n", variants[i].name.c_str(), median(gbps[i]), median(ratios[i]), *lo, *hi);
    }
    return 0;
  }
  // Placement: the output `gap` bytes past the input's end, or the input past the output's.
  const std::vector<std::string> names = {"cudaMemcpyAsync", "tile64 evict_last / plain", "tile64 cs / cs", "tile64 nc / plain",
                                          "copy evict_last / plain", "registers x1 128thr evict_last / plain",
                                          "registers x2 128thr evict_last / plain"};
  std::vector<size_t> chosen;
  for (const std::string& name : names)
    chosen.push_back(std::find_if(variants.begin(), variants.end(), [&](const Variant& v) { return v.name == name; }) -
                     variants.begin());
  std::printf("| placement | memcpy GB/s");
  for (size_t i = 1; i < names.size(); ++i) std::printf(" | %s", names[i].c_str());
  std::printf(" |\n|---|---");
  for (size_t i = 1; i < names.size(); ++i) std::printf("|---");
  std::printf("|\n");
  for (const bool out_first : {false, true}) {
    for (const size_t gap : {size_t{0}, size_t{4} << 10, size_t{64} << 10, size_t{512} << 10, size_t{2} << 20, size_t{6} << 20,
                             size_t{32} << 20, kMaxGap}) {
      uint32_t* second = base + kElems + gap / sizeof(uint32_t);
      in = out_first ? second : base;
      out = out_first ? base : second;
      fill_pattern<<<1024, 256>>>(in, kElems, 0x85ebca6bu);
      measure(chosen, ratios, gbps);
      std::printf("| %s %zu KB after | %.0f", out_first ? "in" : "out", gap >> 10, median(gbps[0]));
      for (size_t i = 1; i < chosen.size(); ++i) std::printf(" | %.4f", median(ratios[i]));
      std::printf(" |\n");
    }
  }
  return 0;
}
