// A vector of trivially copyable values whose first N live inside the object. Every call plans
// its problem anew (layout_plan.cpp), and a std::vector per list cost that call a heap
// allocation and free each: seven per permute (with ops.cpp's permutation and shape, now
// c10::SmallVectors).
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <type_traits>
#include <vector>

namespace torch_transpose {

template <typename T, size_t N>
class InlineVector {
  static_assert(std::is_trivially_copyable_v<T>, "elements are copied as plain values");

 public:
  InlineVector() = default;
  InlineVector(std::initializer_list<T> items) { assign(items.begin(), items.end()); }
  // Copies move the size_ elements only: inline_ past them is left unset (a plan makes a few of
  // these per call, and zeroing or copying whole arrays would cost what the heap did).
  InlineVector(const InlineVector& other) { assign(other.begin(), other.end()); }
  InlineVector& operator=(const InlineVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  InlineVector& operator=(std::initializer_list<T> items) {
    assign(items.begin(), items.end());
    return *this;
  }
  // From a std::vector: the tests and other callers that build problems as vectors.
  InlineVector& operator=(const std::vector<T>& items) {
    assign(items.data(), items.data() + items.size());
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return spilled_ ? heap_.data() : inline_; }
  const T* data() const { return spilled_ ? heap_.data() : inline_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  void reserve(size_t n) { grow_to(n); }
  void push_back(const T& value) {
    grow_to(size_ + 1);
    data()[size_++] = value;
  }
  void pop_back() { --size_; }
  // New elements are value-initialised, as std::vector's are.
  void resize(size_t n) {
    grow_to(n);
    std::fill(data() + std::min(n, size_), data() + n, T{});
    size_ = n;
  }
  void assign(const T* first, const T* last) {
    const size_t n = static_cast<size_t>(last - first);
    size_ = 0;
    grow_to(n);
    std::copy(first, last, data());
    size_ = n;
  }

 private:
  size_t capacity() const { return spilled_ ? heap_.size() : N; }
  // Room for n elements; the first size_ keep their values.
  void grow_to(size_t n) {
    if (n > capacity()) spill(n);
  }
  __attribute__((noinline)) void spill(size_t n) {
    std::vector<T> bigger(std::max(n, 2 * capacity()));
    std::copy(data(), data() + size_, bigger.begin());
    heap_.swap(bigger);
    spilled_ = true;
  }

  T inline_[N];  // the first size_ are set (while !spilled_)
  std::vector<T> heap_;  // the elements once they outgrow inline_ (its size is the capacity)
  size_t size_ = 0;
  bool spilled_ = false;
};

}  // namespace torch_transpose
