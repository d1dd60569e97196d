// Test helpers: deterministic random numbers, byte patterns, strided input views, guarded output
// buffers, and one call that tiles through a chosen API and compares with the reference.
#ifndef TESSERA_TESTS_UTIL_HPP
#define TESSERA_TESTS_UTIL_HPP

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "reference.hpp"

namespace test {

using Shape = ref::Shape;

/// Fixed-seed generator; every randomized test constructs its own with a literal seed. The
/// mapping to ranges is spelled out here (not std::uniform_int_distribution, whose output differs
/// between standard libraries), so a failing case is reproducible with any toolchain.
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  /// Uniform integer in [lo, hi] (the modulo bias is irrelevant for test ranges).
  int64_t uniform(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(engine_() % span);
  }
  bool coin(int percent_true = 50) { return uniform(0, 99) < percent_true; }
  template <class T>
  const T& pick(const std::vector<T>& values) {
    return values[static_cast<std::size_t>(uniform(0, static_cast<int64_t>(values.size()) - 1))];
  }
  /// Fisher-Yates shuffle.
  template <class T>
  void shuffle(std::vector<T>& values) {
    for (std::size_t i = values.size(); i > 1; --i)
      std::swap(values[i - 1], values[static_cast<std::size_t>(uniform(0, static_cast<int64_t>(i) - 1))]);
  }

 private:
  std::mt19937_64 engine_;  // fully specified by the standard
};

/// Fills p[0, n) with a pseudo-random byte pattern determined by seed (distinct neighbours, so a
/// misplaced element almost surely shows).
void fill_pattern(void* p, std::size_t n, uint64_t seed);

/// "(2, 3, 4)"
std::string to_string(const Shape& shape);

/// How an input view is laid out in its parent buffer.
enum Layout : unsigned {
  kContiguous = 0,
  kPermuted = 1u << 0,   // axes of a transposed parent (strides not decreasing)
  kReversed = 1u << 1,   // some axes walk backwards (negative strides)
  kBroadcast = 1u << 2,  // some axes have stride 0
  kSubView = 1u << 3,    // stepped slice of a larger buffer: start offsets, gaps between elements
  kAllLayouts = kPermuted | kReversed | kBroadcast | kSubView,
  // Arbitrary byte strides (numpy's as_strided): any sign, not multiples of itemsize, elements
  // that overlap, axes with equal strides. Overrides the other bits.
  kArbitrary = 1u << 4,
};
std::string layout_name(unsigned layout);

/// An input array: a parent buffer filled with a byte pattern and a view into it.
struct View {
  std::vector<unsigned char> storage;
  std::size_t origin = 0;  // byte offset of element (0, ..., 0) in storage
  Shape shape;
  Shape strides;  // bytes, one per axis
  std::size_t itemsize = 1;
  unsigned layout = kContiguous;

  const unsigned char* data() const { return storage.data() + origin; }
  std::string describe() const;
};

/// A view of `shape` whose layout mixes the features in `layout`, each applied to a random subset
/// of axes. kContiguous gives a C-contiguous view (its strides equal the C-contiguous ones, so a
/// test may pass them or {}). The parent buffer is filled with fill_pattern(fill_seed).
View make_view(Rng& rng, const Shape& shape, std::size_t itemsize, unsigned layout, uint64_t fill_seed);

/// An output buffer with guard bytes before and after it. The data pointer sits `misalign` bytes
/// past a 64-byte boundary. The guards hold a seeded pattern that check_guards() verifies.
class GuardedBuffer {
 public:
  static constexpr std::size_t kGuard = 256;
  explicit GuardedBuffer(std::size_t bytes, std::size_t misalign = 0);
  unsigned char* data() { return data_; }
  const unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  /// Sets every byte of the data region to the complement of `expected` (so any byte the library
  /// fails to write differs from the expectation) or, without expected, to a pattern.
  void prefill_complement(const std::vector<unsigned char>& expected);
  void prefill_pattern(uint64_t seed);
  /// "" if both guards are intact, else a description of the first damaged byte.
  std::string check_guards() const;
  /// "" if the data region equals `expected` and the guards are intact.
  std::string check(const std::vector<unsigned char>& expected, std::size_t itemsize) const;
  /// Copy of the data region.
  std::vector<unsigned char> bytes() const { return {data_, data_ + size_}; }

 private:
  std::vector<unsigned char> memory_;
  unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

/// The entry points through which a test can tile.
enum class Api { cpp_oneshot, cpp_plan, cpp_alloc, c_oneshot, c_plan, c_alloc };
const char* api_name(Api api);
const std::vector<Api>& all_apis();

/// Tiles `view` by `reps` through `api` into a guarded buffer at `misalign`, and compares shape,
/// bytes and guards with the reference. Also checks the input was not modified. Returns "" on
/// success, else a description of the case and the first difference. `strided` false passes empty
/// strides (C-contiguous; the view must then be contiguous).
std::string run_and_compare(const View& view, const Shape& reps, Api api, std::size_t misalign = 0,
                            bool strided = true);

/// Random case parameters for the sweeps.
struct CaseLimits {
  int max_ndim = 6;
  int64_t max_extent = 7;
  int64_t max_rep = 5;
  std::size_t max_output_bytes = 1 << 16;
  int small_array_percent = 15;      // share of cases with a 1-3 axis array of extents 1-3 ...
  int64_t max_small_array_rep = 40;  // ... tiled by reps up to this
};
struct Case {
  View view;
  Shape reps;
};
/// A random case: ranks 0..max_ndim for both shape and reps (so promotion goes both ways),
/// extents 0..max_extent (zeros rare), reps 0..max_rep (zeros rare), or now and then a small array
/// with large reps; one itemsize of 1, 2, 3, 4, 8, 12, 16, 32; a random mix of layouts. Extents
/// and reps are shrunk until the output fits max_output_bytes. One case in five has arbitrary strides.
Case random_case(Rng& rng, const CaseLimits& limits);

/// Outputs of a few MiB with odd sizes, each with a different innermost structure (pattern, fill,
/// gather, copy, odd itemsizes, strided inputs): large enough that the executor goes parallel.
struct LargeCase {
  const char* name;
  Shape shape;
  std::size_t itemsize;
  unsigned layout;
  Shape reps;
};
const std::vector<LargeCase>& large_cases();

/// The environment variable TESSERA_TEST_SCALE (an integer in [1, 1000], default 1; read once),
/// printed by tests/main.cpp at the end of every run. tests/run unsets it for the unit and
/// sanitize suites (always full scale).
int test_scale();

/// `count` divided by test_scale(),
/// and at least 1: the case counts of the randomized sweeps. tests/run --cross sets it for its
/// emulated runs (qemu-user), where vector code runs 20-160x slower. The cases run are a prefix
/// of the full sweep (same seeds).
int scaled(int count);

/// The environment variable TESSERA_TEST_SCALE_OFFSET (an integer in [0, test_scale()), default 0;
/// read once): which of each test_scale() consecutive cases of a list of large cases run.
int test_scale_offset();

/// Whether the list's case `index` runs at this scale: every test_scale()-th, from
/// test_scale_offset() (all of them at full scale). The test setups of tests/meson.build give the
/// emulated runs different offsets (NEON, the one emulated whole-suite run, the odd cases), so that
/// the per-target test cases of the SVE runs take other cases of their lists.
bool scale_takes(int index);

/// The Highway targets the suite's per-target loops run, best first: hwy::SupportedAndGeneratedTargets()
/// (ask with no target forced: under hwy::SetSupportedTargetsForTest it lists the forced one only)
/// less those the environment variable TESSERA_TEST_SKIP_TARGETS names (Highway's target names,
/// comma-separated, e.g. "NEON"; read at each call). The emulated runs of the cross suite (the qemu_*
/// setups of tests/meson.build) name the targets another run tests on the same code: NEON in
/// the SVE runs (its vectors are 128 bits whatever the SVE length; the NEON run has the whole
/// suite), and under an emulated x86 CPU the older targets a CPU model of their own runs. Throws
/// std::runtime_error naming a name that is not one of those targets (a typo must not pass), or
/// if no target is left.
std::vector<int64_t> targets_to_test();

/// TESSERA_TEST_SKIP_TARGETS as set ("" if not): printed by tests/main.cpp after every run.
std::string skipped_targets();

/// Whether TESSERA_TEST_SKIP_TARGETS names the Highway target `name` (targets_to_test leaves it out).
bool target_skipped(const std::string& name);

/// Restores Highway's normal target choice (hwy::SetSupportedTargetsForTest(0)) when it goes out of
/// scope, also when a REQUIRE throws out of a loop over targets_to_test(). Declare one before the
/// first SetSupportedTargetsForTest of a test case.
struct TargetGuard {
  TargetGuard() = default;
  TargetGuard(const TargetGuard&) = delete;
  TargetGuard& operator=(const TargetGuard&) = delete;
  ~TargetGuard();
};

}  // namespace test

#endif  // TESSERA_TESTS_UTIL_HPP
