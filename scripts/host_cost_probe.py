"""Probe (not the library, not the suite): the host cost of each step of one CUDA call, timed in
C++ so that no Python call is counted (scripts/host_breakdown_probe.py times from Python).

A small C++ extension (built here with torch.utils.cpp_extension.load_inline, C++ only) loops
each step `calls` times while the GPU is held by a sleep kernel, so every launch only queues:
  * the op through the dispatcher (what a LibTorch caller pays; the Python fast entry adds its
    argument checks and the wrapping of the result),
  * the op's CUDA kernel function alone (redispatch to the CUDA key: no autograd hop),
  * the out= op into a preallocated output (no allocation),
  * at::empty of the result's shape (allocation and free through the dispatcher) and
    at::detail::empty_cuda (the same without it),
  * the device guard, device properties and current stream that the op looks up,
  * copy_ of the same bytes (the benchmark's ceiling) and a 16-byte cudaMemsetAsync (the cost
    of queueing any work),
  * (session 36) the out= op redispatched to the CUDA key (plan, kernel choice, guard, launch:
    no dispatcher hop, no allocation), and an empty kernel of the C = 3 kernel's grid (800
    blocks of 256 threads) and argument size (40 bytes) launched with <<<>>>, without and with
    the cudaGetLastError the library calls after each launch; (session 37) the same kernel by
    cudaLaunchKernel and by the driver's cuLaunchKernel, to see what the runtime's launch adds;
    what empty_cuda costs without its own device guard (empty_generic on the CUDA allocator),
    and one current-device query. bench/NOTES.md v39: on the GPU
    machine the Python fast entry took 6.7-7.2 us a call on CUDA but 1.05-1.25 us on a tiny CPU
    tensor; these steps split the difference.

    python3 scripts/host_cost_probe.py ["bf16 NCHW->NHWC 32x3x224x224"]   # on the GPU machine
"""
import sys

import torch
from torch.utils.cpp_extension import load_inline

sys.path.insert(0, ".")
from bench import cases as case_defs  # noqa: E402
from bench.host_overhead import hold_gpu  # noqa: E402

# An empty kernel with the lean interleave kernel's argument size, and its launches.
CUDA_SOURCE = r"""
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdint>

struct FortyBytes { int64_t words[5]; };

__global__ void empty_kernel(const void* in, void* out, const FortyBytes args) {}

void launch_empty(const void* in, void* out, void* stream, bool check) {
  empty_kernel<<<800, 256, 0, static_cast<cudaStream_t>(stream)>>>(in, out, FortyBytes{});
  if (check) (void)cudaGetLastError();
}

// The same launch without the <<<>>> stub: the runtime's cudaLaunchKernel (route 0), or the
// driver's cuLaunchKernel on the kernel's CUfunction, looked up once (route 1).
void launch_empty_by(int route, const void* in, void* out, void* stream) {
  FortyBytes extra{};
  void* params[] = {&in, &out, &extra};
  if (route == 0) {
    (void)cudaLaunchKernel(reinterpret_cast<const void*>(empty_kernel), dim3(800), dim3(256), params, 0,
                           static_cast<cudaStream_t>(stream));
    return;
  }
  using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void**, void**);
  static LaunchFn launch = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    (void)cudaGetDriverEntryPointByVersion("cuLaunchKernel", &fn, 12000, cudaEnableDefault, &found);
    return reinterpret_cast<LaunchFn>(fn);
  }();
  static CUfunction function = [] {
    cudaFunction_t f = nullptr;
    (void)cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(empty_kernel));
    return reinterpret_cast<CUfunction>(f);
  }();
  (void)launch(function, 800, 1, 1, 256, 1, 1, 0, static_cast<CUstream>(stream), params, nullptr);
}
"""

SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAGuard.h>
#include <chrono>

void launch_empty(const void* in, void* out, void* stream, bool check);
void launch_empty_by(int route, const void* in, void* out, void* stream);

template <typename F> double per_call_us(int64_t n, F&& f) {
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; ++i) f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / n;
}

double step(int64_t which, const at::Tensor& x, std::vector<int64_t> dims, const at::Tensor& out,
            const at::Tensor& src, const at::Tensor& dst, int64_t n) {
  auto& d = c10::Dispatcher::singleton();
  static auto permute = d.findSchemaOrThrow("torch_transpose::permute", "").typed<at::Tensor(const at::Tensor&, at::IntArrayRef)>();
  static auto permute_out = d.findSchemaOrThrow("torch_transpose::permute_out", "")
                                .typed<void(const at::Tensor&, at::IntArrayRef, const at::Tensor&)>();
  volatile int64_t sink = 0;
  switch (which) {
    case 0: return per_call_us(n, [&] { permute.call(x, dims); });
    case 1: return per_call_us(n, [&] { permute.redispatch(c10::DispatchKeySet(c10::DispatchKey::CUDA), x, dims); });
    case 2: return per_call_us(n, [&] { permute_out.call(x, dims, out); });
    case 3: return per_call_us(n, [&] { at::empty(out.sizes(), out.options()); });
    case 4: return per_call_us(n, [&] { at::detail::empty_cuda(out.sizes(), out.scalar_type(), out.device(), std::nullopt); });
    case 5: return per_call_us(n, [&] {
      const c10::cuda::CUDAGuard guard(x.device());
      sink = sink + at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
      sink = sink + reinterpret_cast<int64_t>(at::cuda::getCurrentCUDAStream().stream());
    });
    case 6: return per_call_us(n, [&] { dst.copy_(src); });
    case 7: return per_call_us(n, [&] {
      C10_CUDA_CHECK(cudaMemsetAsync(dst.data_ptr(), 0, 16, at::cuda::getCurrentCUDAStream().stream()));
    });
    case 8: return per_call_us(n, [&] { permute_out.redispatch(c10::DispatchKeySet(c10::DispatchKey::CUDA), x, dims, out); });
    case 9: return per_call_us(n, [&] { launch_empty(src.data_ptr(), dst.data_ptr(), at::cuda::getCurrentCUDAStream().stream(), false); });
    case 10: return per_call_us(n, [&] { launch_empty(src.data_ptr(), dst.data_ptr(), at::cuda::getCurrentCUDAStream().stream(), true); });
    case 11: return per_call_us(n, [&] { launch_empty_by(0, src.data_ptr(), dst.data_ptr(), at::cuda::getCurrentCUDAStream().stream()); });
    case 12: return per_call_us(n, [&] { launch_empty_by(1, src.data_ptr(), dst.data_ptr(), at::cuda::getCurrentCUDAStream().stream()); });
    case 13: return per_call_us(n, [&] {
      at::detail::empty_generic(out.sizes(), at::cuda::getCUDADeviceAllocator(), c10::DispatchKeySet(c10::DispatchKey::CUDA),
                                out.scalar_type(), std::nullopt);
    });
    case 14: return per_call_us(n, [&] { sink = sink + c10::cuda::current_device(); });
  }
  return -1;
}
"""

STEPS = [
    "op through the dispatcher (alloc, plan, launch, free)",
    "the op's CUDA kernel function (no autograd hop)",
    "out= op, preallocated output (no alloc)",
    "at::empty of the result + free",
    "at::detail::empty_cuda + free",
    "device guard + properties + current stream",
    "copy_ of the same bytes",
    "cudaMemsetAsync of 16 bytes (queueing alone)",
    "out= op's CUDA kernel function (no hop, no alloc)",
    "empty kernel <<<800, 256>>>, 40-byte args",
    "the same + cudaGetLastError",
    "the same kernel by cudaLaunchKernel (no <<<>>> stub)",
    "the same kernel by the driver's cuLaunchKernel",
    "empty_generic on the CUDA allocator + free (no guard)",
    "c10::cuda::current_device()",
]


def main(argv):
    import torch_transpose  # noqa: F401  (registers the ops)

    name = argv[0] if argv else "bf16 NCHW->NHWC 32x3x224x224"
    case = next(c for c in case_defs.suite("cuda") if c.name == name)
    ext = load_inline("host_cost_probe", cpp_sources=SOURCE, cuda_sources=CUDA_SOURCE, functions=["step"], with_cuda=True,
                      verbose=False)
    x = case.make_input("cuda")
    dims = list(case.op[1])
    out = x.permute(dims).contiguous()
    src = x.reshape(-1).clone()
    dst = torch.empty_like(src)
    print(f"{name}: host us per call, C++ loops of 1000 calls with the GPU held (best / worst of 5)")
    for which, label in enumerate(STEPS):
        ext.step(which, x, dims, out, src, dst, 50)  # warm-up
        times = []
        for _ in range(5):
            hold_gpu()
            times.append(ext.step(which, x, dims, out, src, dst, 1000))
            torch.cuda.synchronize()
        print(f"  {label:56s} {min(times):6.2f} / {max(times):6.2f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
