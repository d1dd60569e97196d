// The prefix sums of per-element repeat counts, as the copy and reduce plans hold them.
// Internal.
#ifndef TESSERA_LIB_PREFIX_HPP
#define TESSERA_LIB_PREFIX_HPP

#include <algorithm>
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
/// Compact (where the planner knows the kernels walk the one-byte counts: repeat's bytes walk,
/// repeat_backward's segment groups): the one-byte counts, every count below 255, and only every
/// kSparseStep-th prefix sum (at_step(), segment_of(), count()); data() is null. Planning 8 Mi
/// counts then writes 9 MiB instead of 72 (the whole sums: most of the planning's time). expand()
/// makes the whole sums from the one-byte counts where the planner's path needs them after all.
class Prefix {
 public:
  /// Compact: the prefix sums kept are those of the first j * kSparseStep counts, j = 0, 1, ...
  static constexpr int64_t kSparseStep = 16;
  /// Room for n values, and for n - 1 one-byte counts if `with_counts8` (once, before writing the
  /// values); `compact` (with the one-byte counts): room for the values at every kSparseStep-th
  /// index only. Throws std::bad_alloc.
  void reserve(std::size_t n, bool with_counts8 = false, bool compact = false) {
    bool fresh = false;
    compact_ = compact && with_counts8 && n > 1;
    const std::size_t values = compact_ ? (n - 1) / kSparseStep + 1 : n;
    buf_.reset(static_cast<int64_t*>(allocate_output(values * sizeof(int64_t), &fresh, kPlanCacheMinBytes)),
               free_output);
    counts8_.reset();
    if (with_counts8 && n > 1)
      counts8_.reset(static_cast<uint8_t*>(allocate_output(n - 1, &fresh, kPlanCacheMinBytes)), free_output);
  }
  void push_back(int64_t v) noexcept { buf_.get()[size_++] = v; }  // within the reserved room (not compact)
  /// The n = size() prefix sums (data()[0] = 0); null when compact().
  const int64_t* data() const noexcept { return compact_ ? nullptr : buf_.get(); }
  /// The reserved room, for writing the values in place (compact: the sparse ones); set_size(n)
  /// then says n were written (compact: n values of which the sparse ones), set_total the last.
  int64_t* mutable_data() noexcept { return buf_.get(); }
  void set_size(std::size_t n) noexcept { size_ = n; }
  void set_total(int64_t total) noexcept { total_ = total; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  /// The last prefix sum: the sum of the counts.
  int64_t back() const noexcept { return compact_ ? total_ : buf_.get()[size_ - 1]; }
  /// Whether only every kSparseStep-th prefix sum is kept (with the one-byte counts, each < 255).
  bool compact() const noexcept { return compact_; }
  /// The prefix sum at index i, a multiple of kSparseStep or size() - 1, in either form.
  int64_t at_step(int64_t i) const noexcept {
    if (!compact_) return buf_.get()[i];
    return i == static_cast<int64_t>(size_) - 1 ? total_ : buf_.get()[i / kSparseStep];
  }
  /// The segment holding output index t, 0 <= t < back(): the last i with prefix[i] <= t (the
  /// empty segments at t are passed over), and prefix[i] in *start. Compact: a bisection of the
  /// kept sums, then at most kSparseStep one-byte counts; else a bisection of the whole sums.
  int64_t segment_of(int64_t t, int64_t* start) const noexcept {
    const int64_t* v = buf_.get();
    if (!compact_) {
      const int64_t i = std::upper_bound(v, v + size_, t) - v - 1;
      *start = v[i];
      return i;
    }
    const int64_t kept = static_cast<int64_t>(size_ - 1) / kSparseStep + 1;
    const int64_t j = std::upper_bound(v, v + kept, t) - v - 1;
    const uint8_t* c8 = counts8_.get();
    int64_t i = j * kSparseStep, s = v[j];
    while (s + c8[i] <= t) s += c8[i++];  // stops before the last segment: t < back()
    *start = s;
    return i;
  }
  /// Count i, prefix[i + 1] - prefix[i], for i in [0, size() - 1), in either form.
  int64_t count(int64_t i) const noexcept {
    return compact_ ? counts8_.get()[i] : buf_.get()[i + 1] - buf_.get()[i];
  }
  /// Count i (prefix[i + 1] - prefix[i]) as one byte, min(count, 255), for i in [0, size() - 1);
  /// nullptr where the planner did not keep them.
  const uint8_t* counts8() const noexcept { return counts8_.get(); }
  /// The reserved room for the one-byte counts (reserve(n, true)); nullptr otherwise.
  uint8_t* mutable_counts8() noexcept { return counts8_.get(); }
  /// Frees the one-byte counts: the planner's choice where the segments kernel does not walk them
  /// (a compact one is expanded first).
  void drop_counts8() {
    expand();
    counts8_.reset();
  }
  /// Compact: the whole prefix sums from the one-byte counts (exact: each below 255); else nothing.
  /// Throws std::bad_alloc (then still compact).
  void expand() {
    if (!compact_) return;
    bool fresh = false;
    std::shared_ptr<int64_t> full(
        static_cast<int64_t*>(allocate_output(size_ * sizeof(int64_t), &fresh, kPlanCacheMinBytes)), free_output);
    int64_t* out = full.get();
    const uint8_t* c8 = counts8_.get();
    int64_t total = 0;
    out[0] = 0;
    for (std::size_t i = 0; i + 1 < size_; ++i) out[i + 1] = total += c8[i];
    buf_ = std::move(full);
    compact_ = false;
  }

 private:
  std::shared_ptr<int64_t> buf_;
  std::shared_ptr<uint8_t> counts8_;
  std::size_t size_ = 0;
  int64_t total_ = 0;
  bool compact_ = false;
};

/// The `reps` (NestAxis) or `repeats` (the plans) of an axis whose elements repeat by per-element
/// counts, whose prefix sums a Prefix holds.
inline constexpr int64_t kSegmentReps = -1;

}  // namespace tessera::detail

#endif  // TESSERA_LIB_PREFIX_HPP
