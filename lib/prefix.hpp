// The prefix sums of per-element repeat counts, as the copy and reduce plans hold them.
// Internal.
#ifndef TESSERA_LIB_PREFIX_HPP
#define TESSERA_LIB_PREFIX_HPP

#include <cstddef>
#include <cstdint>
#include <memory>

#include "allocator.hpp"

namespace tessera::detail {

/// The prefix sums of per-element repeat counts: immutable once planned, shared by copies of the
/// plan. Held in an output block of the allocator (allocator.hpp): large ones get transparent huge
/// pages and are kept for reuse after the plan dies, so planning millions of counts again does not
/// fault in fresh pages each time.
/// Beside them, where the planner keeps them, the counts themselves as one byte each (counts8():
/// min(count, 255); kept only where every count is at most 16 / itemsize): the segments kernel
/// walks those, an eighth of the prefix sums' bytes.
class Prefix {
 public:
  /// Room for n values, and for n - 1 one-byte counts if `with_counts8` (once, before writing the
  /// values). Throws std::bad_alloc.
  void reserve(std::size_t n, bool with_counts8 = false) {
    bool fresh = false;
    buf_.reset(static_cast<int64_t*>(allocate_output(n * sizeof(int64_t), &fresh)), free_output);
    counts8_.reset();
    if (with_counts8 && n > 1) counts8_.reset(static_cast<uint8_t*>(allocate_output(n - 1, &fresh)), free_output);
  }
  void push_back(int64_t v) noexcept { buf_.get()[size_++] = v; }  // within the reserved room
  const int64_t* data() const noexcept { return buf_.get(); }
  /// The reserved room, for writing the values in place; set_size(n) then says n were written.
  int64_t* mutable_data() noexcept { return buf_.get(); }
  void set_size(std::size_t n) noexcept { size_ = n; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  int64_t back() const noexcept { return buf_.get()[size_ - 1]; }
  /// Count i (prefix[i + 1] - prefix[i]) as one byte, min(count, 255), for i in [0, size() - 1);
  /// nullptr where the planner did not keep them.
  const uint8_t* counts8() const noexcept { return counts8_.get(); }
  /// The reserved room for the one-byte counts (reserve(n, true)); nullptr otherwise.
  uint8_t* mutable_counts8() noexcept { return counts8_.get(); }
  /// Frees the one-byte counts: the planner's choice where the segments kernel does not walk them.
  void drop_counts8() noexcept { counts8_.reset(); }

 private:
  std::shared_ptr<int64_t> buf_;
  std::shared_ptr<uint8_t> counts8_;
  std::size_t size_ = 0;
};

/// The `reps` (NestAxis) or `repeats` (the plans) of an axis whose elements repeat by per-element
/// counts, whose prefix sums a Prefix holds.
inline constexpr int64_t kSegmentReps = -1;

}  // namespace tessera::detail

#endif  // TESSERA_LIB_PREFIX_HPP
