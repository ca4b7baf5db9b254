// Switches read from the environment, for A/B timing runs and for tests that cover a fallback
// path on a machine that would not take it. Callers cache the answer in a function-local
// static, so each variable is read once per process.
#pragma once

#include <cstdlib>
#include <cstring>

namespace torch_transpose {

// True when the variable `name` is set to "0".
inline bool env_switched_off(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::strcmp(value, "0") == 0;
}

}  // namespace torch_transpose
