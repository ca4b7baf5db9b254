// Probe (not the library, not the suite): does the order in which blocks walk the tiles of the
// (2, 1, 0) permute move its far-row cost (bench/NOTES.md v30, v36: 0.92-0.955 of copy by GPU
// time, below the 0.95 of issue 3 on most machines)?
//
// The tile is the library's own (vector_tile from csrc/cuda/tile_transpose.cuh: 64 x 64 fp32,
// 16-byte vectors, evict_last loads, 256 threads, at most 4 blocks per SM as the lean tile kernel
// asks); only the map from block to tile changes. Input in[i][j][k] (I x J x 64), output
// out[k][j][i]: a tile reads 64 rows i of 256 bytes (J * 256 bytes apart) and writes 64 planes k
// of 256 bytes (I * J * 4 bytes apart: 4 MB at 1024 x 1024).
//
// Walks of linear block L over (tb: tile along i, j: batch item):
//   lean3d   the lean tile kernel's 3-D grid (x: tb, z: j), the library's walk today
//   b-first  the same order from a 1-D grid
//   items    j fastest, then tb: the resident blocks share one tile column of i (8 input pages)
//            and spread along j (each plane's writes 256-byte pieces 4 KB apart)
//   group-G  groups of G items, j fastest inside a group, then tb, then the next group: between
//            the two (G = 128: about 4 tile columns and 512 KB of each plane at once)
//   b-first with 2, 3 or 5 blocks per SM instead of 4: fewer tiles, so fewer pages, per SM at once
// And rectangular tiles of this probe's own (rect_kernel): 64 x 64 (the same shape in this
// code, to calibrate), 32 x 128 and 16 x 256 (k x i), k tiles inside or outside the batch walk.
// What separates the guesses: if the pages a moment's tiles touch (TLB reach) set the cost,
// group-128/256 (about 96 pages of 2 MB at once against b-first's 192) should gain; if the
// DRAM write stream's locality does, items and large groups should lose.
//
//   nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -Icsrc scripts/walk_probe.cu -o /tmp/walk_probe
//   /tmp/walk_probe [rounds]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/tile_transpose.cuh"
#include "cuda_check.h"

using namespace torch_transpose;

constexpr int kTile = 64, kV = 4, kK = 64;

struct ProbeArgs {
  int64_t size_a = kK, size_b = 0;  // vector_tile reads these for edge tiles only: never here
};

struct Walk {
  int kind = 0;          // 0 b-first, 1 items, 2 group
  uint32_t tiles_b = 0;  // tiles along i
  uint32_t items = 0;    // J
  uint32_t group = 1;    // G for kind 2
  int32_t in_sb = 0, out_sa = 0, in_item = 0, out_item = 0;
};

// The walk is a template argument: with a run-time switch over the kinds here, NVVM split the
// tile's 16-byte output stores into 4-byte ones (seen in this probe's PTX, 2026-12-02), as it did
// for items first from a 1-D grid (that walk takes a 3-D grid instead). Check the SASS for
// STG.E.128 after any change here.
template <int kKind>
__device__ __forceinline__ void locate(const Walk& w, uint32_t L, uint32_t& tb, uint32_t& item) {
  if constexpr (kKind == 0) {
    tb = L % w.tiles_b;
    item = L / w.tiles_b;
  } else if constexpr (kKind == 1) {
    item = L % w.items;
    tb = L / w.items;
  } else {
    const uint32_t per_group = w.group * w.tiles_b;
    const uint32_t g = L / per_group, r = L % per_group;
    item = g * w.group + r % w.group;
    tb = r / w.group;
  }
}

template <bool kGrid3d, int kKind>
__global__ void __launch_bounds__(kThreads) walk_kernel(const float* __restrict__ in, float* __restrict__ out, const Walk w) {
  __shared__ __align__(16) float tile[kTile * kTile];
  uint32_t tb, item;
  if constexpr (kGrid3d && kKind == 1) {  // x: items, z: tiles (items first; no division)
    item = blockIdx.x;
    tb = blockIdx.z;
  } else if constexpr (kGrid3d) {
    tb = blockIdx.x;
    item = blockIdx.z;
  } else {
    locate<kKind>(w, blockIdx.x, tb, item);
  }
  const ProbeArgs args;
  vector_tile<float, kV, kTile, int32_t, ProbeArgs, kThreads, true>(
      false, in + static_cast<int32_t>(item) * w.in_item, out + static_cast<int32_t>(item) * w.out_item, 0,
      static_cast<int32_t>(tb) * kTile, w.in_sb, w.out_sa, args, tile, reinterpret_cast<Vec<float, kV>*>(tile));
}

// A rectangular tile of kTK (along k, the input's fast dim) x kTI (along i, the output's),
// written for this probe: each thread loads kTK * kTI / 1024 16-byte chunks (4 for every shape
// here, as the library's 64 x 64 fp32 tile does), parks them with a 16-byte XOR swizzle, then
// reads a 4 x 4 block (4 i rows, one chunk of 4 k), transposes it in registers and stores 4
// vectors, one per output row k. Fewer k per tile means fewer far output rows (planes 4 MB apart)
// per tile, and shorter input pieces (kTK * 4 bytes).
// kKOuter: k tiles walk slower than batch items (the resident blocks share the same planes).
// One 16-byte store, written out: NVVM split plain float4 stores here into 4-byte ones.
__device__ __forceinline__ void store_v4(float* p, const float4 v) {
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
}

template <int kTK, int kTI, bool kKOuter>
__global__ void __launch_bounds__(kThreads) rect_kernel(const float* __restrict__ in, float* __restrict__ out, const Walk w) {
  constexpr int kChunksPerRow = kTK / 4, kLoads = kTK * kTI / 4 / kThreads;
  static_assert(kLoads * kThreads * 4 == kTK * kTI && kTK * kTI / 16 == kThreads, "one 4 x 4 block per thread");
  __shared__ __align__(16) float4 tile[kTK * kTI / 4];
  const uint32_t tiles_k = kK / kTK;
  uint32_t L = blockIdx.x, tb, tk, item;
  tb = L % w.tiles_b;
  L /= w.tiles_b;
  if constexpr (kKOuter) {
    item = L % w.items;
    tk = L / w.items;
  } else {
    tk = L % tiles_k;
    item = L / tiles_k;
  }
  const int32_t i0 = static_cast<int32_t>(tb) * kTI, k0 = static_cast<int32_t>(tk) * kTK;
  const float* src = in + static_cast<int32_t>(item) * w.in_item + i0 * w.in_sb + k0;
  float* dst = out + static_cast<int32_t>(item) * w.out_item + k0 * w.out_sa + i0;
  auto slot = [](int r, int c) { return r * kChunksPerRow + (c ^ ((r / 4) % kChunksPerRow)); };
  float4 v[kLoads];
#pragma unroll
  for (int l = 0; l < kLoads; ++l) {
    const int e = threadIdx.x + l * kThreads, r = e / kChunksPerRow, c = e % kChunksPerRow;
    v[l] = load_global<true>(reinterpret_cast<const float4*>(src + r * w.in_sb + c * 4));
  }
#pragma unroll
  for (int l = 0; l < kLoads; ++l) {
    const int e = threadIdx.x + l * kThreads;
    tile[slot(e / kChunksPerRow, e % kChunksPerRow)] = v[l];
  }
  __syncthreads();
  const int ig = threadIdx.x % (kTI / 4), ck = threadIdx.x / (kTI / 4);
  float4 q[4];
#pragma unroll
  for (int m = 0; m < 4; ++m) q[m] = tile[slot(ig * 4 + m, ck)];
  const float4 o0{q[0].x, q[1].x, q[2].x, q[3].x}, o1{q[0].y, q[1].y, q[2].y, q[3].y};
  const float4 o2{q[0].z, q[1].z, q[2].z, q[3].z}, o3{q[0].w, q[1].w, q[2].w, q[3].w};
  float* row = dst + (ck * 4) * w.out_sa + ig * 4;
  store_v4(row, o0);
  store_v4(row + w.out_sa, o1);
  store_v4(row + 2 * w.out_sa, o2);
  store_v4(row + 3 * w.out_sa, o3);
}

struct Variant {
  std::string name;
  int kind;  // walk kind (Walk::kind) for the library's tile; -1: a rect tile (rect below)
  uint32_t group;
  bool grid3d;
  int blocks_per_sm = 4;  // the lean tile kernel's cap (shared memory asked for so that no more fit)
  int rect = 0;           // rect tile shape: 1 64x64, 2 32x128, 3 32x128 k outer, 4 16x256, 5 16x256 k outer
};

template <int kTK, int kTI, bool kKOuter>
void launch_rect(const float* in, float* out, const Walk& w, size_t dyn_smem) {
  static bool opted = false;
  if (!opted) {
    CHECK(cudaFuncSetAttribute(rect_kernel<kTK, kTI, kKOuter>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(dyn_smem)));
    opted = true;
  }
  const uint32_t blocks = (w.tiles_b * kTile / kTI) * (kK / kTK) * w.items;
  Walk rw = w;
  rw.tiles_b = w.tiles_b * kTile / kTI;
  rect_kernel<kTK, kTI, kKOuter><<<blocks, kThreads, dyn_smem>>>(in, out, rw);
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const int launches = 20;
  auto dyn_smem_for = [](int blocks_per_sm) { return smem_for_at_most(blocks_per_sm) - sizeof(float) * kTile * kTile; };
  const int most_smem = static_cast<int>(dyn_smem_for(2));
  CHECK(cudaFuncSetAttribute(walk_kernel<true, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, most_smem));
  CHECK(cudaFuncSetAttribute(walk_kernel<false, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, most_smem));
  CHECK(cudaFuncSetAttribute(walk_kernel<true, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, most_smem));
  CHECK(cudaFuncSetAttribute(walk_kernel<false, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, most_smem));
  std::printf("| I x J x K | walk | ratio to copy, per round | median |\n|---|---|---|---|\n");
  for (const uint32_t J : {1024u, 1200u}) {
    const uint32_t I = 1024;
    const size_t n = size_t{I} * J * kK, bytes = n * sizeof(float);
    std::vector<float> host_in(n), host_ref(n), host_out(n);
    uint32_t state = 12345u + J;
    for (size_t e = 0; e < n; ++e) {
      state = state * 1664525u + 1013904223u;
      host_in[e] = static_cast<float>(static_cast<int32_t>(state >> 8)) * 1e-3f;
    }
    for (uint32_t i = 0; i < I; ++i)
      for (uint32_t j = 0; j < J; ++j)
        for (uint32_t k = 0; k < kK; ++k)
          host_ref[(size_t{k} * J + j) * I + i] = host_in[(size_t{i} * J + j) * kK + k];
    float *in = nullptr, *out = nullptr, *copy_dst = nullptr;
    CHECK(cudaMalloc(&in, bytes));
    CHECK(cudaMalloc(&out, bytes));
    CHECK(cudaMalloc(&copy_dst, bytes));
    CHECK(cudaMemcpy(in, host_in.data(), bytes, cudaMemcpyHostToDevice));

    Walk base;
    base.tiles_b = I / kTile;
    base.items = J;
    base.in_sb = static_cast<int32_t>(J * kK);
    base.out_sa = static_cast<int32_t>(I * J);
    base.in_item = kK;
    base.out_item = static_cast<int32_t>(I);
    std::vector<Variant> variants = {{"lean3d", 0, 1, true}, {"b-first", 0, 1, false}, {"items", 1, 1, false}};
    for (uint32_t g : {8u, 32u, 128u, 256u})
      if (J % g == 0) variants.push_back({"group-" + std::to_string(g), 2, g, false});
    for (int per_sm : {2, 3, 5}) variants.push_back({"b-first, " + std::to_string(per_sm) + " blocks/SM", 0, 1, false, per_sm});
    const char* rect_names[] = {"", "rect 64x64", "rect 32x128", "rect 32x128, k outer", "rect 16x256", "rect 16x256, k outer"};
    for (int r = 1; r <= 5; ++r) variants.push_back({rect_names[r], -1, 1, false, 4, r});
    const uint32_t blocks = base.tiles_b * J;

    auto launch = [&](const Variant& v) {
      const size_t dyn_smem = dyn_smem_for(v.blocks_per_sm);
      Walk w = base;
      w.kind = v.kind;
      w.group = v.group;
      // The rect tiles' shared memory is 16 KB, as the library tile's: the same dynamic request.
      if (v.rect == 1) return launch_rect<64, 64, false>(in, out, w, dyn_smem);
      if (v.rect == 2) return launch_rect<32, 128, false>(in, out, w, dyn_smem);
      if (v.rect == 3) return launch_rect<32, 128, true>(in, out, w, dyn_smem);
      if (v.rect == 4) return launch_rect<16, 256, false>(in, out, w, dyn_smem);
      if (v.rect == 5) return launch_rect<16, 256, true>(in, out, w, dyn_smem);
      if (v.grid3d)
        walk_kernel<true, 0><<<dim3(base.tiles_b, 1, J), kThreads, dyn_smem>>>(in, out, w);
      else if (v.kind == 0)
        walk_kernel<false, 0><<<blocks, kThreads, dyn_smem>>>(in, out, w);
      else if (v.kind == 1)  // from a 3-D grid: from a 1-D one NVVM split its 16-byte stores
        walk_kernel<true, 1><<<dim3(J, 1, base.tiles_b), kThreads, dyn_smem>>>(in, out, w);
      else
        walk_kernel<false, 2><<<blocks, kThreads, dyn_smem>>>(in, out, w);
    };
    // Correctness of every walk against the host reference, output poisoned first.
    for (const Variant& v : variants) {
      CHECK(cudaMemset(out, 0xff, bytes));
      launch(v);
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpy(host_out.data(), out, bytes, cudaMemcpyDeviceToHost));
      if (std::memcmp(host_out.data(), host_ref.data(), bytes) != 0) {
        std::fprintf(stderr, "walk %s wrong at J=%u\n", v.name.c_str(), J);
        return 1;
      }
    }
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    auto median_us = [&](auto&& fn) {
      std::vector<float> ms;
      for (int r = 0; r < 3; ++r) fn();  // warm
      for (int r = 0; r < launches; ++r) {
        CHECK(cudaEventRecord(start));
        fn();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, start, stop));
        ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      return 1000.0 * ms[ms.size() / 2];
    };
    std::vector<std::vector<double>> ratios(variants.size());
    for (int round = 0; round < rounds; ++round) {
      for (size_t vi = 0; vi < variants.size(); ++vi) {
        const double copy_us = median_us([&] { CHECK(cudaMemcpyAsync(copy_dst, in, bytes, cudaMemcpyDeviceToDevice)); });
        const double ours_us = median_us([&] { launch(variants[vi]); });
        ratios[vi].push_back(copy_us / ours_us);
      }
    }
    CHECK(cudaGetLastError());
    for (size_t vi = 0; vi < variants.size(); ++vi) {
      std::string cells;
      for (double r : ratios[vi]) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%s%.3f", cells.empty() ? "" : " / ", r);
        cells += buf;
      }
      std::vector<double> sorted = ratios[vi];
      std::sort(sorted.begin(), sorted.end());
      std::printf("| %ux%ux%d | %s | %s | %.3f |\n", I, J, kK, variants[vi].name.c_str(), cells.c_str(),
                  sorted[sorted.size() / 2]);
    }
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    CHECK(cudaFree(copy_dst));
  }
  return 0;
}
