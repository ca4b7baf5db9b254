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

// The variable `name` as an integer when it is set and lies in [lo, hi], else `fallback`.
inline long long env_int_in_range(const char* name, long long lo, long long hi, long long fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr) return fallback;
  char* end = nullptr;
  const long long parsed = std::strtoll(value, &end, 10);
  return end != value && *end == '\0' && parsed >= lo && parsed <= hi ? parsed : fallback;
}

// A switch that overrides a kernel-choice rule: "0" = never, "1" = always (tests, A/B runs),
// unset or anything else = the rule. Callers cache env_override's answer in a function-local
// static and pass it to decide() with the rule's verdict.
enum class Override { Never, Always, Rule };

inline Override env_override(const char* name) {
  switch (env_int_in_range(name, 0, 1, -1)) {
    case 0: return Override::Never;
    case 1: return Override::Always;
    default: return Override::Rule;
  }
}

inline bool decide(Override setting, bool rule) {
  return setting == Override::Always || (setting == Override::Rule && rule);
}

}  // namespace torch_transpose
