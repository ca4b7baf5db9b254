// The public C++ API (torch_transpose/torch_transpose.h) through the dispatcher, against
// LibTorch's own transpose/permute + contiguous, bit for bit; and artefacts saved from Python.
#include <gtest/gtest.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/script.h>
#include <torch/torch.h>
#include <torch_transpose/torch_transpose.h>

#include <cstdlib>
#include <filesystem>

namespace {

torch::Tensor random_bits(at::IntArrayRef shape, at::ScalarType dtype) {
  std::vector<int64_t> raw_shape(shape.begin(), shape.end());
  raw_shape.push_back(c10::elementSize(dtype));
  auto raw = torch::randint(0, 256, raw_shape, torch::kUInt8);
  return raw.view(dtype).reshape(shape);
}

bool bits_equal(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) return false;
  auto dense = [](const torch::Tensor& t) {
    return torch::empty(t.sizes(), t.options()).copy_(t).reshape(-1).view(torch::kUInt8);
  };
  return torch::equal(dense(a), dense(b));
}

std::filesystem::path fixtures() {
  const char* dir = std::getenv("TT_TEST_FIXTURES");
  return dir ? std::filesystem::path(dir) : std::filesystem::path();
}

}  // namespace

TEST(CppApi, TransposeMatchesLibTorchForEveryWidth) {
  for (auto dtype : {torch::kUInt8, torch::kBFloat16, torch::kFloat, torch::kDouble, torch::kComplexDouble}) {
    auto x = random_bits({67, 45}, dtype);
    EXPECT_TRUE(bits_equal(torch_transpose::transpose(x), x.t().contiguous())) << dtype;
    auto batched = random_bits({3, 33, 65}, dtype);
    EXPECT_TRUE(bits_equal(torch_transpose::transpose(batched, 0, 2), batched.transpose(0, 2).contiguous())) << dtype;
  }
}

// Outputs of 8 MiB or more with rows of whole 64-byte lines take the CPU kernel's
// streaming-store path, and new ones get huge-page advice; edges ragged in both dims.
TEST(CppApi, LargeOutputsStreamExactly) {
  for (auto [rows, dtype] : {std::pair<int64_t, at::ScalarType>{2064, torch::kFloat}, {4160, torch::kUInt8},
                             {1032, torch::kComplexFloat}, {1032, torch::kDouble},
                             {2080, torch::kBFloat16}}) {
    auto x = random_bits({rows, 1030}, dtype);
    EXPECT_TRUE(bits_equal(torch_transpose::transpose(x), x.t().contiguous())) << dtype;
  }
  auto x = random_bits({2064, 1030}, torch::kFloat);
  auto buffer = torch::full({1033, 2080}, -7.0f, torch::kFloat);
  auto view = buffer.slice(0, 1, 1031).slice(1, 16, 2080);
  torch_transpose::transpose_out(x, 0, 1, view);
  EXPECT_TRUE(bits_equal(view, x.t()));
  view.fill_(-7.0f);
  EXPECT_TRUE(torch::equal(buffer, torch::full({1033, 2080}, -7.0f, torch::kFloat)));
}

TEST(CppApi, StridedInputsAndPermute) {
  auto base = random_bits({40, 90}, torch::kFloat);
  for (const auto& x : {base.slice(1, 0, 90, 2), base.slice(0, 1).slice(1, 1), base.t(), base.narrow(0, 0, 1).expand({20, 90})}) {
    EXPECT_TRUE(bits_equal(torch_transpose::transpose(x), x.t().contiguous()));
  }
  auto nchw = random_bits({2, 3, 17, 19}, torch::kHalf);
  EXPECT_TRUE(bits_equal(torch_transpose::permute(nchw, {0, 2, 3, 1}), nchw.permute({0, 2, 3, 1}).contiguous()));
  auto cl = torch_transpose::to_memory_format(nchw, at::MemoryFormat::ChannelsLast);
  EXPECT_TRUE(cl.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(bits_equal(cl, nchw));
}

TEST(CppApi, NarrowChannelsReadAndWriteNothingOutside) {
  for (auto dtype : {torch::kUInt8, torch::kBFloat16, torch::kFloat, torch::kDouble}) {
    for (int64_t c : {1, 3, 5, 7, 8, 12, 15}) {
      auto x = random_bits({2, 9, 37, c}, dtype);
      EXPECT_TRUE(bits_equal(torch_transpose::permute(x, {0, 3, 1, 2}), x.permute({0, 3, 1, 2}).contiguous()))
          << dtype << " C = " << c;
      auto cut = random_bits({2, 9, 37, c + 3}, dtype).narrow(3, 0, c);
      EXPECT_TRUE(bits_equal(torch_transpose::permute(cut, {0, 3, 1, 2}), cut.permute({0, 3, 1, 2}).contiguous()))
          << dtype << " C = " << c << " of rows of " << c + 3;
      auto matrix = random_bits({1000, c}, dtype);
      EXPECT_TRUE(bits_equal(torch_transpose::transpose(matrix), matrix.t().contiguous())) << dtype << " C = " << c;
      auto nchw = random_bits({2, c, 9, 37}, dtype);
      auto nhwc = nchw.permute({0, 2, 3, 1}).contiguous();
      EXPECT_TRUE(bits_equal(torch_transpose::permute(nchw, {0, 2, 3, 1}), nhwc)) << dtype << " C = " << c;
      auto buffer = random_bits({2, 9, 37, c + 5}, dtype);
      auto before = buffer.clone();
      auto view = buffer.narrow(3, 2, c);
      torch_transpose::permute_out(nchw, {0, 2, 3, 1}, view);
      EXPECT_TRUE(bits_equal(view, nhwc)) << dtype << " C = " << c << " into a slice";
      before.narrow(3, 2, c).copy_(nhwc);
      EXPECT_TRUE(bits_equal(buffer, before)) << dtype << " C = " << c << ": elements outside the slice changed";
    }
  }
}

TEST(CppApi, OutIntoASliceTouchesNothingElse) {
  auto x = random_bits({30, 20}, torch::kInt);
  auto buffer = torch::full({25, 40}, -7, torch::kInt);
  auto view = buffer.slice(0, 2, 22).slice(1, 5, 35);
  const auto& returned = torch_transpose::transpose_out(x, 0, 1, view);
  EXPECT_TRUE(returned.is_same(view));
  EXPECT_TRUE(torch::equal(view, x.t()));
  auto outside = buffer.clone();
  outside.slice(0, 2, 22).slice(1, 5, 35).fill_(-7);
  EXPECT_TRUE(torch::equal(outside, torch::full({25, 40}, -7, torch::kInt)));
}

TEST(CppApi, ErrorsUsePyTorchExceptionTypes) {
  auto x = torch::randn({4, 6});
  EXPECT_THROW(torch_transpose::transpose(x, 2, 0), c10::IndexError);
  EXPECT_THROW(torch_transpose::permute(x, {0}), c10::Error);
  EXPECT_THROW(torch_transpose::permute(x, {1, 1}), c10::Error);
  EXPECT_THROW(torch_transpose::transpose_out(x, 0, 1, torch::empty({4, 6})), c10::Error);
  EXPECT_THROW(torch_transpose::transpose_out(x, 0, 1, torch::empty({6, 4}, torch::kDouble)), c10::Error);
  try {
    torch_transpose::transpose_out(x, 0, 1, torch::empty({4, 6}));
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected out to have shape [6, 4]"), std::string::npos) << e.what();
  }
}

TEST(CppApi, ExplainDescribesThePlan) {
  auto text = torch_transpose::explain(torch::randn({8, 3, 16, 16}), {0, 2, 3, 1});
  EXPECT_NE(text.find("transpose: sizes=[8, 256, 3]"), std::string::npos) << text;
}

TEST(CppApi, CudaWhenAvailable) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  auto x = random_bits({1000, 7}, torch::kFloat).cuda();
  EXPECT_TRUE(bits_equal(torch_transpose::transpose(x), x.t().contiguous()));
}

TEST(SavedFromPython, TorchScriptModuleRunsInCpp) {
  if (std::filesystem::exists(fixtures() / "no_torchscript")) GTEST_SKIP() << "this torch has no TorchScript";
  const auto path = fixtures() / "scripted_transpose.pt";
  ASSERT_TRUE(std::filesystem::exists(path)) << "run tests/cpp/make_fixtures.py first (make test-cpp does)";
  torch::jit::Module module = torch::jit::load(path.string());
  auto x = torch::randn({5, 9});
  auto y = module.forward({x}).toTensor();
  EXPECT_TRUE(torch::equal(y, x.t() + 1));
}

TEST(SavedFromPython, AotInductorPackageRunsInCpp) {
  const auto path = fixtures() / "permute_cpu.pt2";
  ASSERT_TRUE(std::filesystem::exists(path)) << "run tests/cpp/make_fixtures.py first (make test-cpp does)";
  torch::inductor::AOTIModelPackageLoader loader(path.string());
  auto x = torch::randn({3, 4, 5});
  auto outputs = loader.run({x});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_TRUE(torch::equal(outputs[0], (x.transpose(0, 1) * 2).permute({2, 0, 1})));
}

TEST(CppAutograd, GradientsAreTheInverseLayout) {
  auto x = torch::randn({2, 3, 4}, torch::requires_grad());
  auto w = torch::randn({4, 3, 2});
  (torch_transpose::transpose(x, 0, 2) * w).sum().backward();
  EXPECT_TRUE(torch::equal(x.grad(), w.transpose(0, 2)));

  auto p = torch::randn({2, 3, 4}, torch::requires_grad());
  auto v = torch::randn({4, 2, 3});
  (torch_transpose::permute(p, {2, 0, -2}) * v).sum().backward();
  EXPECT_TRUE(torch::equal(p.grad(), v.permute({1, 2, 0})));

  auto c = torch::randn({2, 3, 4, 5}, torch::requires_grad());
  auto u = torch::randn({2, 3, 4, 5});
  (torch_transpose::to_memory_format(c, at::MemoryFormat::ChannelsLast) * u).sum().backward();
  EXPECT_TRUE(torch::equal(c.grad(), u));
}

TEST(CppAutograd, GradcheckAndDoubleBackward) {
  auto x = torch::randn({3, 4}, torch::dtype(torch::kDouble).requires_grad(true));
  auto y = torch_transpose::transpose(x);
  auto w = torch::randn({4, 3}, torch::dtype(torch::kDouble).requires_grad(true));
  auto grad_x = torch::autograd::grad({(y * w).sum()}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  EXPECT_TRUE(torch::allclose(grad_x, w.t()));
  // d/dw of sum(grad_x) = d/dw sum(w^T) = ones: needs the backward itself to be differentiable.
  auto grad_w = torch::autograd::grad({grad_x.sum()}, {w})[0];
  EXPECT_TRUE(torch::equal(grad_w, torch::ones_like(w)));
}
