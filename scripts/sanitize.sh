#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer over the C++ tests: the plan alone, the C++ API
# (the CPU op path through the dispatcher) and the CUDA kernels run on the CPU, a fiber per CUDA
# thread (test_kernels_on_host). Real CUDA runs are checked by compute-sanitizer on the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$(command -v python3)}
[[ -x .venv/bin/python ]] && ! "$PYTHON" -c "import torch" 2>/dev/null && PYTHON=.venv/bin/python
BUILD=build/sanitize
"$PYTHON" tests/cpp/make_fixtures.py "$BUILD/fixtures"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTORCH_TRANSPOSE_SANITIZE=ON -DTORCH_TRANSPOSE_WITH_CUDA=OFF \
  -DCMAKE_PREFIX_PATH="$("$PYTHON" -c 'import torch; print(torch.utils.cmake_prefix_path)')" \
  -DTT_TEST_FIXTURES="$PWD/$BUILD/fixtures"
cmake --build "$BUILD" -j "$(nproc)" --target test_layout_plan test_cpp_api test_kernels_on_host
# LibTorch itself is not instrumented and keeps allocations alive until exit: leak checking
# would only report those.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$BUILD/test_layout_plan"
"$BUILD/test_kernels_on_host"
TORCH_TRANSPOSE_KERNELS=narrow_kernel=0,box_tile=0 "$BUILD/test_kernels_on_host"  # the flat tile kernel on narrow layouts too
TT_TEST_FIXTURES="$PWD/$BUILD/fixtures" "$BUILD/test_cpp_api" --gtest_filter=-SavedFromPython.AotInductorPackageRunsInCpp
# What a CPU without AVX-512 runs: AVX2 blocks, shuffles for packed narrow rows and row copies;
# and one without AVX2 either: SSE2 blocks, SSSE3 shuffles, memcpy rows.
TORCH_TRANSPOSE_KERNELS=cpu_avx512=0 "$BUILD/test_cpp_api" --gtest_filter='CppApi.*'
TORCH_TRANSPOSE_KERNELS=cpu_avx512=0,cpu_avx2=0 "$BUILD/test_cpp_api" --gtest_filter='CppApi.*'
echo "sanitize: ASan + UBSan clean"
