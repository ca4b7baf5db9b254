// Division by a run-time divisor that is fixed for a whole launch, as one multiply-high, one
// add and one shift (the divisor's "magic number" is computed once on the host). Valid for
// dividends and divisors below 2^31, which the kernels that use it guarantee.
#pragma once

#include <cstdint>

namespace torch_transpose {

struct FastDivmod {
  uint32_t divisor = 1, multiplier = 0, shift = 0;

  FastDivmod() = default;
  explicit FastDivmod(uint32_t d) : divisor(d) {
    while ((uint64_t{1} << shift) < d) ++shift;
    multiplier = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }

  __device__ __forceinline__ uint32_t div(uint32_t n) const { return (__umulhi(n, multiplier) + n) >> shift; }

  __device__ __forceinline__ void divmod(uint32_t n, uint32_t& q, uint32_t& r) const {
    q = div(n);
    r = n - q * divisor;
  }
};

}  // namespace torch_transpose
