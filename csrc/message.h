// Error-message formatting without iostreams.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Layout.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

#include <string>
#include <type_traits>

namespace torch_transpose {
namespace detail {

inline void append(std::string& s, const char* v) { s += v; }
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, c10::ScalarType v) { s += c10::toString(v); }
inline void append(std::string& s, const c10::Device& v) { s += v.str(); }
inline void append(std::string& s, c10::Layout v) {
  s += v == c10::kStrided ? "Strided" : v == c10::kSparse ? "Sparse" : "non-strided";
}
inline void append(std::string& s, c10::IntArrayRef v) {
  s += "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  s += "]";
}
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
void append(std::string& s, T v) {
  s += std::to_string(v);
}

}  // namespace detail

template <typename... Parts>
std::string message(const Parts&... parts) {
  std::string s;
  (detail::append(s, parts), ...);
  return s;
}

}  // namespace torch_transpose
