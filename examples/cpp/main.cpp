// torch_transpose from C++ (LibTorch): transpose, permute, out= into a view, and the plan.
#include <torch/torch.h>
#include <torch_transpose/torch_transpose.h>

#include <cstdio>

int main() {
  const auto device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  torch::Tensor x = torch::randn({512, 384}, torch::TensorOptions().device(device));

  torch::Tensor y = torch_transpose::transpose(x);  // == x.t().contiguous()
  bool ok = torch::equal(y, x.t().contiguous());

  torch::Tensor nchw = torch::randn({2, 3, 32, 48}, torch::TensorOptions().device(device));
  torch::Tensor nhwc = torch_transpose::permute(nchw, {0, 2, 3, 1});
  ok = ok && torch::equal(nhwc, nchw.permute({0, 2, 3, 1}).contiguous());

  // Write into a slice of a larger buffer: nothing outside the slice changes.
  torch::Tensor buffer = torch::zeros({400, 600}, x.options());
  torch_transpose::transpose_out(x, 0, 1, buffer.narrow(0, 8, 384).narrow(1, 50, 512));
  ok = ok && torch::equal(buffer.narrow(0, 8, 384).narrow(1, 50, 512), x.t());
  torch::Tensor outside = buffer.clone();
  outside.narrow(0, 8, 384).narrow(1, 50, 512).zero_();
  ok = ok && outside.count_nonzero().item<int64_t>() == 0;

  std::printf("plan: %s\n", torch_transpose::explain(nchw, {0, 2, 3, 1}).c_str());
  std::printf("torch_transpose example on %s: %s\n", device == torch::kCUDA ? "CUDA" : "CPU", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
