// The direct family: transposes small enough to be one thread per element.
#include <type_traits>

#include "direct_transpose.cuh"
#include "kernel_registry.h"
#include "launch_common.cuh"

namespace torch_transpose {
namespace {


}  // namespace

bool launch_direct_family(const LaunchContext& c) {
  if (!wants_direct_transpose(c.plan)) return false;
  return with_element_and_vector(c.plan, [&](auto* t, auto) {
    using T = std::remove_pointer_t<decltype(t)>;
    const DirectArgs args = make_direct_args(c.plan);
    launch_kernel<direct_transpose_kernel<T>>(static_cast<unsigned int>(ceil_div(args.total, kThreads)), kThreads, 0,
                                              c.stream, typed_in<T>(c), typed_out<T>(c), args);
    return true;
  });
}

}  // namespace torch_transpose
