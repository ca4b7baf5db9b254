// Dry runs of the kernel selection: while a LaunchRecorder is installed on the calling thread,
// launch_kernel records which kernel it would launch (name, template arguments, grid) and
// launches nothing. explain() and the golden selection test read the choice this way, so what
// they report is what a real call runs. Plain C++: no CUDA headers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace torch_transpose {

// One launch that a dry run would have made. `kernel` is the instantiation, for example
// "tile_transpose_kernel<float, 4, int, 64, false, true>"; "device_copy" for the runtime's copy.
struct LaunchRecord {
  std::string kernel;
  unsigned int grid[3] = {1, 1, 1};
  int threads = 0;
  size_t smem = 0;
  std::string family;  // the registry entry that chose it (kernel_registry.cu)
};

// The device a dry run describes, where no GPU answers the questions the selection asks.
struct DeviceDescription {
  int sm_count = 132;
  int capability_major = 9;
  int capability_minor = 0;
};

struct LaunchRecorder {
  DeviceDescription device;
  std::vector<LaunchRecord> launches;
};

inline thread_local LaunchRecorder* active_launch_recorder = nullptr;

// Installs `recorder` on this thread for its lifetime.
class RecordLaunches {
 public:
  explicit RecordLaunches(LaunchRecorder& recorder) : previous_(active_launch_recorder) { active_launch_recorder = &recorder; }
  ~RecordLaunches() { active_launch_recorder = previous_; }
  RecordLaunches(const RecordLaunches&) = delete;
  RecordLaunches& operator=(const RecordLaunches&) = delete;

 private:
  LaunchRecorder* previous_;
};

// "kernel<args>" out of a compiler's function signature "... [with auto kKernel = ns::kernel<args>]".
inline std::string kernel_name_from_signature(const char* signature) {
  std::string s(signature);
  const std::string marker = "kKernel = ";
  const size_t at = s.find(marker);
  if (at == std::string::npos) return s;
  s = s.substr(at + marker.size());
  const size_t end = s.find_first_of(";]", 0);
  if (end != std::string::npos) s = s.substr(0, end);
  for (const std::string prefix : {"torch_transpose::", "&"}) {
    for (size_t p = s.find(prefix); p != std::string::npos; p = s.find(prefix)) s.erase(p, prefix.size());
  }
  return s;
}

template <auto kKernel>
const std::string& kernel_name() {
  static const std::string name = kernel_name_from_signature(__PRETTY_FUNCTION__);
  return name;
}

}  // namespace torch_transpose
