// Every Highway target compiled into the library and supported by this CPU: force each in turn,
// check that tessera really dispatches to it, and compare a randomized sweep with the reference,
// serially (a one-thread arena) and threaded (the default arena, outputs of several MiB). Also:
// the set of targets compiled, and the target dispatch chooses on a given (emulated) CPU.
#include <doctest/doctest.h>

#include <hwy/targets.h>
#include <tbb/task_arena.h>
#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#if HWY_ARCH_ARM_A64 && defined(__linux__)
#include <sys/prctl.h>
#endif

#include "c_api_check.h"
#include "reference.hpp"
#include "util.hpp"

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
#include "kernels/path_counters.hpp"  // lib/, on the include path with -Dpath_counters=true
#endif

namespace {

using test::TargetGuard;

// `count` small random cases through every API in turn; returns the number of failures.
int small_sweep(uint64_t seed, int count) {
  test::Rng rng(seed);
  const test::CaseLimits limits;
  int failures = 0;
  for (int i = 0; i < count && failures < 10; ++i) {
    const test::Case c = test::random_case(rng, limits);
    const test::Api api = test::all_apis()[static_cast<std::size_t>(i) % test::all_apis().size()];
    const std::string err = test::run_and_compare(c.view, c.reps, api, static_cast<std::size_t>(rng.uniform(0, 63)));
    CHECK_MESSAGE(err.empty(), "case " << i << ": " << err);
    failures += !err.empty();
  }
  return failures;
}

// The large cases (several MiB); returns the number of failures.
int large_sweep(uint64_t seed, std::size_t stride = 1) {
  test::Rng rng(seed);
  int failures = 0;
  const auto& cases = test::large_cases();
  for (std::size_t i = 0; i < cases.size(); i += stride) {
    const auto& c = cases[i];
    const test::View view = test::make_view(rng, c.shape, c.itemsize, c.layout, seed + i);
    const std::string err = test::run_and_compare(view, c.reps, test::Api::cpp_oneshot, i % 8);
    CHECK_MESSAGE(err.empty(), c.name << ": " << err);
    failures += !err.empty();
  }
  return failures;
}

}  // namespace

TEST_CASE("every Highway target: dispatch really switches and results match the reference") {
  TargetGuard guard;
  hwy::SetSupportedTargetsForTest(0);
  // Ask for the dispatched target before SupportedTargets(): in Highway 1.0.3 that call re-chooses
  // the dispatch target without the vector-length-specific SVE_256 / SVE2_128 (see first_target).
  const std::string best = tessera::active_target();
  const std::vector<int64_t> all = hwy::SupportedAndGeneratedTargets();
  REQUIRE(!all.empty());
  // Without a mock, tessera runs the best target (Highway orders better targets first).
  CHECK(best == hwy::TargetName(all.front()));
  const std::vector<int64_t> targets = test::targets_to_test();  // less TESSERA_TEST_SKIP_TARGETS

  std::vector<std::string> exercised;
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string name = hwy::TargetName(target);
    CAPTURE(name);
    // The library must dispatch to the forced target, not to a fallback.
    REQUIRE(std::string(tessera::active_target()) == name);
    CHECK(std::string(tessera_active_target()) == name);
    CHECK(std::string(c_active_target()) == name);

    // Serial: a one-thread arena keeps every call on this thread.
    tbb::task_arena serial(1);
    int serial_failures = 0;
    serial.execute([&] {
      serial_failures += small_sweep(1000 + static_cast<uint64_t>(exercised.size()), test::scaled(600));
      serial_failures += large_sweep(2000, 4);  // a few large outputs run serially too
    });
    CHECK(serial_failures == 0);

    // Threaded: the default arena; these outputs are large enough to be split across threads.
    CHECK(large_sweep(3000) == 0);
    CHECK(small_sweep(4000 + static_cast<uint64_t>(exercised.size()), test::scaled(150)) == 0);

    exercised.push_back(name);
  }

  // Back to normal dispatch (also needed before asking which targets the CPU supports).
  hwy::SetSupportedTargetsForTest(0);
  CHECK(std::string(tessera::active_target()) == hwy::TargetName(all.front()));

  std::string names;
  for (const auto& n : exercised) names += n + " ";
  INFO("targets exercised: " << names);
  CHECK(exercised.size() == targets.size());
  // The generated targets below the best one this CPU supports must all have run (x86: SCALAR is
  // always generated, so even an old CPU exercises two; aarch64: NEON is the baseline, so a CPU
  // without SVE exercises only NEON).
  // (compiled ones only: the ASan build leaves SSSE3, SSE4 and AVX2 or AVX3 out, HWY_DISABLED_TARGETS)
  const int64_t supported = hwy::SupportedTargets() & HWY_TARGETS;
  std::vector<const char*> expected;
#if HWY_ARCH_X86
  if (supported & HWY_AVX3_DL) expected.push_back("AVX3_DL");  // compiled on request (the ASan build)
  if (supported & HWY_AVX3) expected.push_back("AVX3");
  if (supported & HWY_AVX2) expected.push_back("AVX2");
  if (supported & HWY_SSE4) expected.push_back("SSE4");
  if (supported & HWY_SSSE3) expected.push_back("SSSE3");
  expected.push_back("SCALAR");
#elif HWY_ARCH_ARM_A64
  if (supported & HWY_SVE2) expected.push_back("SVE2");
  if (supported & HWY_SVE) expected.push_back("SVE");
  expected.push_back("NEON");
#endif
  // (but those TESSERA_TEST_SKIP_TARGETS names: another run exercises them)
  for (const char* name : expected)
    if (!test::target_skipped(name))
      CHECK_MESSAGE(std::find(exercised.begin(), exercised.end(), name) != exercised.end(),
                    name << " was not exercised");
}

// The first call into tessera of this process, made during static initialization (before any test
// case can call hwy::SupportedTargets()): the target a program that never touches Highway itself
// gets. In Highway 1.0.3 hwy::SupportedTargets() re-chooses the dispatch target without the
// vector-length-specific targets (SVE_256, SVE2_128), so only a first call sees them chosen.
namespace {
const std::string first_target = tessera::active_target();
}  // namespace

bool expect_target_set() {
  const char* expect = std::getenv("TESSERA_EXPECT_TARGET");
  return expect != nullptr && *expect != '\0';
}

// Set by tests/run (from /proc/cpuinfo, an independent reading of the CPU) and by tests/run
// --cross for each emulated CPU (qemu -cpu MODEL, QEMU_CPU=...); where it is not set there is
// nothing to compare with, and the test case is skipped (doctest counts it as skipped).
TEST_CASE("the active target is the one expected for this CPU (TESSERA_EXPECT_TARGET)" *
          doctest::skip(!expect_target_set())) {
  const char* expect = std::getenv("TESSERA_EXPECT_TARGET");
  REQUIRE(expect != nullptr);
  CHECK(first_target == expect);
#if HWY_ARCH_ARM_A64 && defined(__linux__)
  // The SVE vector length the kernel gives this process (0: no SVE), e.g. from qemu's -cpu sveN.
  if (const char* bits = std::getenv("TESSERA_EXPECT_SVE_BITS")) {
    const int vl = prctl(PR_SVE_GET_VL, 0, 0, 0, 0);
    CHECK((vl < 0 ? 0 : (vl & PR_SVE_VL_LEN_MASK) * 8) == std::atoi(bits));
  }
#endif
  // The same after the mock is reset (which makes the next call choose again).
  TargetGuard guard;
  hwy::SetSupportedTargetsForTest(0);
  CHECK(std::string(tessera::active_target()) == expect);
  CHECK(std::string(tessera_active_target()) == expect);
  // And it computes: a few cases through every API on the chosen target.
  CHECK(small_sweep(5000, test::scaled(60)) == 0);
}

// Which targets Highway compiled into this translation unit; the library is built with the same
// HWY_* defines (tests/meson.build), and the loop above proves each supported one is in the
// library too (forcing a target the library lacks would dispatch to another and fail there).
TEST_CASE("the compiled Highway targets are the expected set") {
  std::string names;
  for (int64_t bits = HWY_TARGETS; bits != 0; bits &= bits - 1)
    names += std::string(hwy::TargetName(bits & -bits)) + " ";
  INFO("HWY_TARGETS: " << names);
#if HWY_ARCH_X86_64 && HWY_COMPILER_GCC_ACTUAL && !HWY_COMPILER_CLANG && !defined(HWY_COMPILE_ONLY_STATIC)
  // g++ on x86-64 without -march: the fallback is SCALAR (not EMU128), AVX3_DL only on request.
  int64_t expected = HWY_AVX3 | HWY_AVX2 | HWY_SSE4 | HWY_SSSE3 | HWY_SCALAR;
#  ifdef HWY_WANT_AVX3_DL
  expected |= HWY_AVX3_DL;
#  endif
  expected &= ~static_cast<int64_t>(HWY_DISABLED_TARGETS);  // the ASan build: SSSE3, SSE4, AVX2 or AVX3 out
  const int64_t compiled = HWY_TARGETS;
  CHECK(compiled == expected);
#elif HWY_ARCH_ARM_A64 && HWY_COMPILER_GCC_ACTUAL && !HWY_COMPILER_CLANG
  // g++ on aarch64: NEON is the baseline (no SCALAR), SVE and SVE2 at any vector length, and the
  // fixed-length SVE_256 and SVE2_128.
  const int64_t compiled = HWY_TARGETS;
  CHECK(compiled == (HWY_NEON | HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128));
#else
  MESSAGE("no expectation for this architecture and compiler; HWY_TARGETS: " << names);
#endif
}

TEST_CASE("the compiled Highway targets less TESSERA_TEST_SKIP_TARGETS are the per-target loops' (test::targets_to_test)") {
  TargetGuard guard;
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<int64_t> all = hwy::SupportedAndGeneratedTargets();
  REQUIRE(!all.empty());
  // The run's own setting (the emulated runs set it), restored at the end.
  const char* set = std::getenv("TESSERA_TEST_SKIP_TARGETS");
  const std::string before = set ? set : "";
  struct Restore {
    std::string value;
    bool was_set;
    ~Restore() { was_set ? setenv("TESSERA_TEST_SKIP_TARGETS", value.c_str(), 1) : unsetenv("TESSERA_TEST_SKIP_TARGETS"); }
  } restore{before, set != nullptr};
  unsetenv("TESSERA_TEST_SKIP_TARGETS");
  CHECK(test::targets_to_test() == all);
  setenv("TESSERA_TEST_SKIP_TARGETS", "", 1);
  CHECK(test::targets_to_test() == all);
  // Leaving out the best target, then the last and the best: the others, in order.
  const std::string best = hwy::TargetName(all.front()), last = hwy::TargetName(all.back());
  if (all.size() >= 2) {
    setenv("TESSERA_TEST_SKIP_TARGETS", best.c_str(), 1);
    CHECK(test::targets_to_test() == std::vector<int64_t>(all.begin() + 1, all.end()));
  }
  if (all.size() >= 3) {
    setenv("TESSERA_TEST_SKIP_TARGETS", (last + "," + best).c_str(), 1);
    CHECK(test::targets_to_test() == std::vector<int64_t>(all.begin() + 1, all.end() - 1));
  }
  // A name that is not a target of this build and CPU, or none left: an error naming it.
  setenv("TESSERA_TEST_SKIP_TARGETS", "NOSUCHTARGET", 1);
  CHECK_THROWS_WITH_AS(test::targets_to_test(), doctest::Contains("'NOSUCHTARGET'"), std::runtime_error);
  std::string every;
  for (const int64_t t : all) every += std::string(every.empty() ? "" : ",") + hwy::TargetName(t);
  setenv("TESSERA_TEST_SKIP_TARGETS", every.c_str(), 1);
  CHECK_THROWS_AS(test::targets_to_test(), std::runtime_error);
}

// The sub-kernels the kernels choose inside a path (lib/kernels/path_counters.hpp, Variant):
// pattern.shuffle's fall-back to FillPattern, the blocked gather's replicas and row fall-back,
// the other paths' replica steps, the reductions' register trees, short-run folds, leaf loops and
// the replica split. A set of inputs, each checked against a scalar reference (and the bytes
// around a copy's output against being written), runs on every target this CPU supports; with
// the counters (-Dpath_counters=true, tests/run's build/tests) every variant a target's code has
// (detail::compiled_variants) must have run on it, and the counts are printed per target.
namespace {

// A reduction input: sum_to_shape(shape, byte strides (empty: C-contiguous), target), or with
// counts, repeat_backward(shape, counts, axis) to in_shape. `split`: run in an arena of 4 so the
// executor splits the work (over the outputs, or over one item's leaves) whatever the CPU count.
struct VariantCase {
  const char* name;
  std::vector<int64_t> shape, strides, target;
  tessera::DType dtype;
  bool split = false;
  bool accumulate = false;
  std::vector<int64_t> counts = {};  // non-empty: repeat_backward along `axis`
  int axis = 0;
};

// The variant cases' dtypes (float32, float64): the bytes of one element.
std::size_t dtype_size(tessera::DType d) { return d == tessera::DType::float64 ? 8 : 4; }

// The element of dtype d at p, as a double.
double load_as_double(const unsigned char* p, tessera::DType d) {
  if (d == tessera::DType::float64) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

// v stored at p as an element of dtype d (rounded once for float32).
void store_double(unsigned char* p, double v, tessera::DType d) {
  if (d == tessera::DType::float64) {
    std::memcpy(p, &v, 8);
  } else {
    const float f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
  }
}

// Runs one reduction case (small integers: every sum exact) and compares every output element
// with a scalar sum from the definition; returns an error or "".
std::string run_variant_case(const VariantCase& c, uint64_t seed) {
  const std::size_t isz = dtype_size(c.dtype);
  const std::size_t nd = c.shape.size();
  std::vector<int64_t> strides = c.strides;
  if (strides.empty()) {
    strides.assign(nd, 0);
    int64_t s = static_cast<int64_t>(isz);
    for (std::size_t i = nd; i-- > 0;) {
      strides[i] = s;
      s *= c.shape[i];
    }
  }
  int64_t span = static_cast<int64_t>(isz), count = 1;  // bytes the input spans (positive strides)
  for (std::size_t i = 0; i < nd; ++i) {
    span += (c.shape[i] - 1) * strides[i];
    count *= c.shape[i];
  }
  std::vector<unsigned char> in(static_cast<std::size_t>(span));
  test::Rng rng(seed);
  for (std::size_t off = 0; off + isz <= in.size(); off += isz)
    store_double(in.data() + off, static_cast<double>(rng.uniform(0, 6)) - 3.0, c.dtype);

  // The output's shape and, per input element, its output index.
  std::vector<int64_t> out_shape = c.target;
  if (!c.counts.empty()) {
    out_shape = c.shape;
    out_shape[static_cast<std::size_t>(c.axis)] = static_cast<int64_t>(c.counts.size());
  }
  int64_t out_count = 1;
  for (int64_t e : out_shape) out_count *= e;
  std::vector<double> want(static_cast<std::size_t>(out_count), 0.0);
  std::vector<int64_t> owner;  // repeat_backward: grad index along the axis -> input index
  for (std::size_t k = 0; k < c.counts.size(); ++k)
    for (int64_t r = 0; r < c.counts[k]; ++r) owner.push_back(static_cast<int64_t>(k));
  std::vector<int64_t> idx(nd, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t off = 0, o = 0;
    for (std::size_t i = 0; i < nd; ++i) off += idx[i] * strides[i];
    const std::size_t lead = nd - out_shape.size();
    for (std::size_t j = 0; j < out_shape.size(); ++j) {
      int64_t v = idx[lead + j];
      if (!c.counts.empty() && static_cast<int>(j) == c.axis) v = owner[static_cast<std::size_t>(v)];
      else if (c.counts.empty() && out_shape[j] == 1) v = 0;
      o = o * out_shape[j] + v;
    }
    want[static_cast<std::size_t>(o)] += load_as_double(in.data() + off, c.dtype);
    for (std::size_t i = nd; i-- > 0;)
      if (++idx[i] < c.shape[i]) break;
      else idx[i] = 0;
  }

  std::vector<unsigned char> out(static_cast<std::size_t>(out_count) * isz);
  for (int64_t j = 0; j < out_count; ++j) {  // accumulate: the output starts at j % 5
    store_double(out.data() + j * static_cast<int64_t>(isz), c.accumulate ? static_cast<double>(j % 5) : 99.0, c.dtype);
    if (c.accumulate) want[static_cast<std::size_t>(j)] += static_cast<double>(j % 5);
  }
  tessera::Options o;
  o.accumulate = c.accumulate;
  o.max_threads = c.split ? 0 : 1;
  const auto run = [&] {
    if (c.counts.empty()) {
      tessera::sum_to_shape(in.data(), c.shape, strides, c.dtype, c.target, out.data(), out.size(), o);
    } else {
      tessera::repeat_backward(in.data(), c.shape, strides, c.dtype, out_shape, tessera::Repeats(c.counts), c.axis,
                               out.data(), out.size(), o);
    }
  };
  if (c.split) {
    tbb::task_arena four(4);
    four.execute(run);
  } else {
    run();
  }
  for (int64_t j = 0; j < out_count; ++j) {
    const double got = load_as_double(out.data() + j * static_cast<int64_t>(isz), c.dtype);
    if (got != want[static_cast<std::size_t>(j)])
      return std::string(c.name) + ": element " + std::to_string(j) + " is " + std::to_string(got) + ", expected " +
             std::to_string(want[static_cast<std::size_t>(j)]);
  }
  return "";
}

// The reduction inputs: each reaches one or more of the reductions' sub-kernels (see the comments).
const std::vector<VariantCase>& variant_cases() {
  using tessera::DType;
  // n counts cycling through 0..m (7 is prime to m + 1 <= 5): n / (m + 1) times each; counts04:
  // 90 counts 3, 0, 2, 4, 1, 3, ... (180 elements)
  const auto counts_to = [](std::size_t n, int64_t m) {
    std::vector<int64_t> c(n);
    for (std::size_t k = 0; k < n; ++k) c[k] = static_cast<int64_t>(k * 7 + 3) % (m + 1);
    return c;
  };
  static const std::vector<int64_t> counts04 = counts_to(90, 4);
  static const std::vector<VariantCase> cases = {
      // periodic, one kept axis (the tight loop): w = 1 (37 rows: N at a time and the rest)
      {"rows summed, w = 1", {37, 100}, {}, {37, 1}, DType::float32},
      {"rows summed, w = 1, float64", {37, 100}, {}, {37, 1}, DType::float64},
      {"rows summed, w = 1, accumulate", {37, 100}, {}, {37, 1}, DType::float32, false, true},
      // more items than the planner's prefetch distance (256 items of 64 B; 56 of 296 B)
      {"rows summed, w = 1, prefetched", {600, 16}, {}, {600, 1}, DType::float32},
      {"rows summed, w = 1, prefetched, float64, accumulate", {300, 37}, {}, {300, 1}, DType::float64, false, true},
      // w = 3 (ShortRun3N, or ShortRun3x8 on 8-lane accumulators), 6 (ShortRun<48>), 2 (<16>), 5 (<80>)
      {"narrow tile, w = 3", {37, 30, 3}, {}, {37, 1, 3}, DType::float32},
      {"narrow tile, w = 3, float64", {37, 30, 3}, {}, {37, 1, 3}, DType::float64},
      {"narrow tile, w = 6", {9, 20, 6}, {}, {9, 1, 6}, DType::float32},
      {"narrow tile, w = 2", {9, 40, 2}, {}, {9, 1, 2}, DType::float32},
      {"narrow tile, w = 5", {9, 20, 5}, {}, {9, 1, 5}, DType::float64},
      // periodic item by item: one output row (ShortRunAny), long rows (RegPeriodic16), other
      // slot counts and outer reduced axes (PeriodicLeaves)
      {"one row, w = 1", {100}, {}, {1}, DType::float32},
      {"one row, w = 3", {30, 3}, {}, {1, 3}, DType::float64},
      {"one row, w = 2", {40, 2}, {}, {1, 2}, DType::float32},
      {"long rows, w = 1", {5, 1000}, {}, {5, 1}, DType::float32},
      {"narrow tile, w = 7", {9, 20, 7}, {}, {9, 1, 7}, DType::float32},
      // prefetched where the reductions prefetch (w = 6: 480-byte items, 35 ahead of 60; long rows
      // of 4000 bytes, 5 ahead of 40, where long runs are prefetched), spread or at once by the
      // policy
      {"narrow tile, w = 6, prefetched", {60, 20, 6}, {}, {60, 1, 6}, DType::float32},
      {"long rows, w = 1, prefetched", {40, 1000}, {}, {40, 1}, DType::float32},
      {"rows summed with an outer reduced axis", {3, 9, 40}, {}, {1, 9, 1}, DType::float64},
      // lanes: one leaf (RegTreeItem<K>), 2-4 leaves (RegTreeItem<0, NL>), 5-16 (RegTree), more
      // (LanesLeaves); short and long items
      {"columns, 5 addends, short item", {5, 12}, {}, {1, 12}, DType::float32},
      {"columns, 5 addends, long item", {5, 1000}, {}, {1, 1000}, DType::float32},
      // rows of 32 KiB, 4 addends (outer_bwd's kind): each row's lines prefetched along it where
      // the policy says so (reduce_prefetch_long_rows_bytes, up to 16 KiB in the prefetch runs of
      // tests/meson.build: Item.long_rows_ahead)
      {"columns, 4 addends, long rows", {4, 8192}, {}, {1, 8192}, DType::float32},
      // ... 3 items of them: the rows' last lines prefetch the next item's first (Item.long_rows_next)
      {"columns, 4 addends, long rows, 3 items", {3, 4, 8192}, {}, {3, 1, 8192}, DType::float32},
      {"columns, 20 addends, short rows", {20, 8}, {64, 4}, {1, 8}, DType::float32},
      {"columns, 20 addends, long item", {20, 1000}, {}, {1, 1000}, DType::float64},
      {"columns, 60 addends", {60, 300}, {}, {1, 300}, DType::float32},
      {"columns, 200 addends", {200, 70}, {}, {1, 70}, DType::float32},
      // 17 leaves of rows of 20 KB: each row prefetched along itself and on into the next leaf's
      // where the policy says so (LeafRows.ahead, LeafRows.next; planned in the 16 KiB runs too)
      {"columns, 136 addends, long rows", {136, 5000}, {}, {1, 5000}, DType::float32},
      // items read a row at a time (rows_whole) past the registers' 16 vectors: the sums in a
      // scratch row (RegTreeItem<K>.rows_scratch; 300 and 150 elements: a partial last vector)
      {"rows read whole, 3 addends of 300", {7, 3, 300}, {}, {7, 1, 300}, DType::float32},
      {"rows read whole, 8 addends of 150, float64, accumulate", {5, 8, 150}, {}, {5, 1, 150}, DType::float64, false,
       true},
      // short rows, more items than the planner's prefetch distance (prefetch_items: 32 and 7;
      // along the rows where short rows are prefetched so: RegTreeItem<K>.rows_along)
      {"short rows, many items, one leaf", {64, 4, 32}, {}, {64, 1, 32}, DType::float32},
      {"short rows, many items, 3 leaves", {50, 20, 16}, {}, {50, 1, 16}, DType::float64},
      // ... 2 leaves of rows of 8 (64 bytes apart: not the periodic path's), read whole on every
      // target (8 vectors of one lane on SCALAR): RegTreeItem<0,NL>.rows_along where short rows
      // are prefetched
      {"short rows, many items, 2 leaves", {40, 16, 8}, {1024, 64, 4}, {40, 1, 8}, DType::float32},
      // strided: a kept inner axis that is not contiguous
      {"strided columns", {20, 50}, {50 * 8, 8}, {1, 50}, DType::float32},
      {"strided columns, one output column", {20, 1}, {8, 8}, {1, 1}, DType::float32},
      // interleaved: a reduced run of 2-4 contiguous elements per output
      {"pairs, float32", {40, 2}, {}, {40, 1}, DType::float32},
      // 32 KiB of pairs: where the policy prefetches along the rows, read 4 KiB ahead
      {"pairs, float32, one item of 32 KiB", {4096, 2}, {}, {4096, 1}, DType::float32},
      {"pairs, float32, accumulate", {40, 2}, {}, {40, 1}, DType::float32, false, true},
      {"triples, float64", {40, 3}, {}, {40, 1}, DType::float64},
      // per-element counts (segments: each segment a sub-problem of its own)
      {"repeat counts, axis 0", {10, 40}, {}, {}, DType::float32, false, false, {3, 0, 2, 5}, 0},
      {"repeat counts, axis 1", {40, 10}, {}, {}, DType::float32, false, false, {3, 0, 2, 5}, 1},
      // a column-major gradient: a count-1 segment's sub-problem is one leaf whose output
      // elements are a row of the result apart (LeafRows + FinishRow with a stride)
      {"repeat counts, axis 1, column-major", {40, 7}, {4, 160}, {}, DType::float32, false, false, {1, 2, 1, 3}, 1},
      {"repeat counts, axis 0, many rows", {300, 40}, {}, {}, DType::float32, false, false, {100, 200}, 0},
      // segments_runs: ragged runs of 0-20 elements, N segments per vector (the gathered leaves,
      // the periodic runs of 16 or more, accumulating past empty segments), and one by one
      {"repeat counts, ragged runs", {7, 144}, {}, {}, DType::float32, false, false,
       {3, 0, 5, 1, 9, 16, 2, 4, 0, 7, 15, 20, 1, 3, 8, 2, 6, 0, 11, 4, 3, 17, 2, 5}, 1},
      {"repeat counts, ragged runs, float64, accumulate", {7, 144}, {}, {}, DType::float64, false, true,
       {3, 0, 5, 1, 9, 16, 2, 4, 0, 7, 15, 20, 1, 3, 8, 2, 6, 0, 11, 4, 3, 17, 2, 5}, 1},
      // segments_runs' groups (float32, counts of at most 4: two groups of N segments per step from
      // the one-byte counts), the steps whose windows would pass the row's end by SegmentRuns
      {"repeat counts 0-4, segment groups", {3, 180}, {}, {}, DType::float32, false, false, counts04, 1},
      {"repeat counts 0-4, segment groups, accumulate", {3, 180}, {}, {}, DType::float32, false, true, counts04, 1},
      // two steps of a group at a time (counts of at most C: C steps): C odd leaves a step alone
      {"repeat counts 0-3, segment groups", {3, 144}, {}, {}, DType::float32, false, false, counts_to(96, 3), 1},
      {"repeat counts 0-2, segment groups", {3, 96}, {}, {}, DType::float32, false, false, counts_to(96, 2), 1},
      {"repeat counts 0-1, segment groups", {3, 48}, {}, {}, DType::float32, false, false, counts_to(96, 1), 1},
      // more than kSegCountsAheadBytes (4 KiB) of counts in one range: where the gradient is
      // prefetched, each step prefetches the counts 4 KiB on, up to the range's end
      {"repeat counts 0-4, segment groups, counts prefetched", {2, 10000}, {}, {}, DType::float32, false, false,
       counts_to(5000, 4), 1},
      // segments of 0-4 rows of 256 bytes, back to back (46 KiB of gradient): where the policy
      // prefetches along the rows, each line read with the line 4 KiB on prefetched (SegmentItems)
      {"repeat counts 0-4 along axis 0, rows of 64", {180, 64}, {}, {}, DType::float32, false, false, counts04, 0},
      {"repeat counts 0-4 along axis 0, rows of 64, accumulate, split", {180, 64}, {}, {}, DType::float32, true, true,
       counts04, 0},
      // the executor's split: few items, many leaves (partials over leaf ranges, then combined)
      {"split: one long row", {1 << 18}, {}, {1}, DType::float32, true},
      {"split: few columns", {1 << 14, 16}, {}, {1, 16}, DType::float32, true},
      {"split over the outputs", {256, 1024}, {}, {256, 1}, DType::float32, true},
  };
  return cases;
}

// The copying cases: checked against tests/reference.cpp; `region`: execute_region of
// [start, start + extent) instead of the whole output.
struct CopyVariantCase {
  const char* name;
  std::vector<int64_t> shape, strides;
  std::size_t itemsize;
  std::vector<int64_t> reps;
  bool split = false;   // in an arena of 4: the output split into ranges (16 pieces)
  bool stream = false;  // with NonTemporal::always: the streamed route of the same path
  std::size_t offset = 0;  // the output this many bytes further from the line (after split's 16)
  int src_offset = -1;     // the source this many bytes past a 64-byte boundary (-1: where it fell)
};

// One more than the rows of 1024 float32 in the smallest source (doubling from 64 rows) whose
// tile by (3, 1) the planner walks in replica steps (CopyPlan::replica_step_elems: a source of
// at least half of L2, read from sysfs), found from Plan::describe(); fails the test if no
// source up to 64 MiB is. (Every source of that many rows of at least 4 KiB is then planned in
// steps.)
int64_t replica_step_rows() {
  for (int64_t rows = 64; rows <= 16384; rows *= 2) {
    const tessera::Plan plan({rows, 1024}, {}, sizeof(float), {3, 1});
    if (plan.describe().find(" in steps of ") != std::string::npos) return rows + 1;
  }
  FAIL("no tile of a source up to 64 MiB by (3, 1) is planned in replica steps");
  return 0;
}

// The copying inputs: pattern.shuffle's two ways, the blocked gather's three, FillPattern's three,
// the plain fill's rows of one line (whole, and pieces of them where a range starts inside one),
// the replica steps (serial and split: a pattern row, outer loops of pattern rows and of padded
// rows, 5-byte elements), the direct element repeats' output off its elements.
const std::vector<CopyVariantCase>& copy_variant_cases() {
  static const int64_t rows = replica_step_rows();
  static const std::vector<CopyVariantCase> cases = {
      // Replica steps (each case's description must say so): a source of half of L2 or more
      // written 3 times (a row that is a pattern of 3 runs), serially and split among 4 threads
      // into dst + 16; an outer loop of 2 replicas of rows that are patterns (a replica not a
      // whole number of lines); an outer loop over padded rows copied whole (the copy kernel);
      // 5-byte elements, whose first step into dst + 16 ends where an element first starts on a
      // line.
      {"replica steps, a pattern row", {rows, 1024}, {}, 4, {3, 1}},
      {"replica steps, a pattern row, split", {rows, 1024}, {}, 4, {3, 1}, true},
      {"replica steps, a pattern row, split, streamed", {rows, 1024}, {}, 4, {3, 1}, true, true},
      {"replica steps, an outer loop, split, streamed", {rows, 1030}, {}, 4, {2, 2}, true, true},
      {"replica steps, an outer loop of padded rows, split", {rows, 1024}, {4160, 4}, 4, {3, 1}, true},
      {"replica steps, 5-byte elements, split", {rows * 820}, {}, 5, {3}, true},
      {"pattern.shuffle, whole rows", {3, 3}, {}, 4, {1, 400}},
      {"pattern.shuffle, one row split across ranges", {3}, {}, 4, {52433}, true},
      {"blocked gather, transposed", {40, 37}, {4, 160}, 4, {1, 2}},
      {"blocked gather, transposed, outer replicas", {40, 37}, {4, 160}, 4, {3, 2}},
      // The executor's chunks split the first replica (CopyPlan::replica_elems), each written to
      // the three; the replicas 16 bytes apart from a line (401 * 740 * 4 bytes each).
      {"blocked gather, transposed, outer replicas split among threads", {401, 370}, {4, 1604}, 4, {3, 2}, true},
      {"blocked gather, transposed, outer replicas split among threads, streamed", {401, 370}, {4, 1604}, 4, {3, 2},
       true, true},
      // A plan with replicas whose first (592 elements) is too short for 16 chunks: the executor
      // hands out chunks of the whole output with copies 1 (the output checked, not the route).
      {"blocked gather, transposed, replicas too short to split", {8, 37}, {4, 256}, 4, {400, 2}, true},
      // Fewer rows (8) than the executor's pieces (16): chunks of lines, which start inside rows.
      {"blocked gather, rows longer than a range", {8, 40000}, {4, 64}, 4, {1, 1}, true},
      // The same with replicas (the first 8 rows of 16000, long enough to split): each range
      // shorter than a row, walked element by element into the three replicas.
      {"blocked gather, transposed, replicas of few rows split inside rows", {8, 16000}, {4, 64}, 4, {3, 1}, true},
      // 15 rows of 1000 in the first of 12 replicas: chunks of lines (2752 elements), each with two
      // whole rows gathered through the tile into every replica and partial rows at its ends.
      {"blocked gather, transposed, replicas split inside rows and whole rows", {15, 1000}, {4, 64}, 4, {12, 1},
       true},
      {"blocked gather, transposed, replicas split inside rows and whole rows, streamed", {15, 1000}, {4, 64}, 4,
       {12, 1}, true, true},
      {"short pattern, a tiny output", {3}, {}, 4, {2}},
      {"short pattern", {7}, {}, 4, {100}},
      {"long pattern", {101}, {}, 3, {50}},
      {"fill, rows of one line", {37, 1}, {}, 4, {1, 16}},
      {"fill, rows of one line, 8-byte elements", {5, 3, 1}, {}, 8, {2, 1, 8}},
      {"fill, rows of one line, ranges starting inside rows", {40009, 1}, {}, 2, {1, 32}, true},
      // repeat.shuffle.nt.direct (a tile of a column along its last axis: each element 3x) into
      // an output 2 bytes off its elements' boundaries, whose elements straddle lines.
      {"element repeats streamed directly, elements across lines", {1200, 1}, {}, 4, {1, 3}, false, true, 2},
      // pattern.shuffle.nt.direct (rows of 480 bytes: 40 copies of a 12-byte run) split among 4
      // threads into dst + 16: ranges start and end inside rows and inside the vector two rows share.
      {"rows of a short run streamed directly, split inside rows", {9001, 3}, {}, 4, {1, 40}, true, true},
      {"rows of a short run streamed directly, split, 1-byte elements", {20011, 5}, {}, 1, {1, 60}, true, true},
      // copy.nt.direct (rows of 16424 bytes on line-aligned pitches) and pattern.long.nt.direct
      // (a run of 16424 bytes) from a line-aligned source into dst + 4: pieces of at least
      // StreamJoin's kRotateMinBytes whose source lies, on every fixed-width target, whole 4-byte
      // lanes past its vector boundaries where dst's lines start (the first piece: 12 bytes on
      // 16-byte vectors, 28 on 32, 60 on 64): loaded on them and rotated (StreamVectorsRotated);
      // the pieces end past their last whole vector.
      {"rows streamed directly from an aligned source into dst + 4", {8, 4106}, {16448, 4}, 4, {2, 1}, false, true, 4,
       0},
      {"a long run streamed directly from an aligned source into dst + 4", {4106}, {}, 4, {3}, false, true, 4, 0},
  };
  return cases;
}

// The byte around (and, before the call, in) a copying case's output.
constexpr unsigned char kUnwritten = 0xa5;

// Runs one copying case on random bytes and compares the whole output with the reference;
// returns an error or "".
std::string run_copy_variant_case(const CopyVariantCase& c, uint64_t seed) {
  int64_t span = static_cast<int64_t>(c.itemsize), lo = 0;
  for (std::size_t i = 0; i < c.shape.size(); ++i) {
    const int64_t s = c.strides.empty() ? 0 : c.strides[i];
    (s >= 0 ? span : lo) += (c.shape[i] - 1) * s;
  }
  std::vector<unsigned char> buf(static_cast<std::size_t>(span - lo));
  test::Rng rng(seed);
  for (auto& b : buf) b = static_cast<unsigned char>(rng.uniform(0, 255));
  if (c.strides.empty()) buf.resize(static_cast<std::size_t>(ref::count(c.shape)) * c.itemsize);
  std::vector<unsigned char> placed;  // the source src_offset bytes past a 64-byte boundary
  const unsigned char* base = buf.data();
  if (c.src_offset >= 0) {
    placed.resize(buf.size() + 64 + static_cast<std::size_t>(c.src_offset));
    unsigned char* at = placed.data() + (64 - reinterpret_cast<uintptr_t>(placed.data()) % 64) % 64 + c.src_offset;
    std::memcpy(at, buf.data(), buf.size());
    base = at;
  }
  const unsigned char* src = base - lo;
  const std::vector<unsigned char> whole = ref::tile(src, c.shape, c.strides, c.itemsize, c.reps);
  tessera::Options options;
  if (c.stream) options.nontemporal = tessera::NonTemporal::always;
  const tessera::Plan plan(c.shape, c.strides, c.itemsize, c.reps, options);
  if (std::string(c.name).rfind("replica steps", 0) == 0 && plan.describe().find(" in steps of ") == std::string::npos)
    return std::string(c.name) + ": not planned in replica steps:\n" + plan.describe();
  // Split: the output 16 bytes past a cache line, where the executor's chunks start on absolute
  // lines, inside rows of 64 bytes or more (or, for a blocked gather with a row for every piece,
  // at the starts of rows, off the lines), wherever the buffer was placed.
  std::vector<unsigned char> out_buf(whole.size() + 128, kUnwritten);
  unsigned char* const got =
      out_buf.data() + (64 - reinterpret_cast<uintptr_t>(out_buf.data()) % 64) + (c.split ? 16 : 0) + c.offset;
  if (c.split) {
    tbb::task_arena four(4);
    four.execute([&] { plan.execute(src, got, whole.size()); });
  } else {
    plan.execute(src, got, whole.size());
  }
  if (std::memcmp(got, whole.data(), whole.size()) != 0)
    return std::string(c.name) + " (" + plan.kernel_path() + "): the output differs from the reference";
  // Nothing written outside the output (the buffer's bytes before and after it still kUnwritten).
  const auto written = [](const unsigned char* p, std::size_t n) {
    return std::any_of(p, p + n, [](unsigned char b) { return b != kUnwritten; });
  };
  if (written(out_buf.data(), static_cast<std::size_t>(got - out_buf.data())) ||
      written(got + whole.size(), static_cast<std::size_t>(out_buf.data() + out_buf.size() - (got + whole.size()))))
    return std::string(c.name) + " (" + plan.kernel_path() + "): bytes written outside the output";
  return "";
}

}  // namespace

TEST_CASE("every Highway target: each sub-kernel (variant) the kernels choose ran, per target") {
  TargetGuard guard;
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<int64_t> targets = test::targets_to_test();
  REQUIRE(!targets.empty());
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
  namespace td = tessera::detail;
  std::vector<std::string> names;
  std::vector<uint64_t> compiled;
  std::vector<std::vector<uint64_t>> ran;  // [target][variant]: this test case's counts
#endif
  {
    // The process's first call that could use threads runs serially below 16 MiB (lib/parallel.hpp):
    // one of 16 MiB ends that rule, so that the split cases split when this test case runs alone.
    const float one = 1.0f;
    std::vector<float> ones(std::size_t{4} << 20);
    const tessera::Plan fill({1}, {}, sizeof(float), {static_cast<int64_t>(ones.size())});
    tbb::task_arena four(4);
    four.execute([&] { fill.execute(&one, ones.data(), ones.size() * sizeof(float)); });
    REQUIRE(std::count(ones.begin(), ones.end(), 1.0f) == static_cast<std::ptrdiff_t>(ones.size()));
  }
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string name = hwy::TargetName(target);
    CAPTURE(name);
    REQUIRE(std::string(tessera::active_target()) == name);
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
    const auto snapshot = [&](int64_t t) {
      std::vector<uint64_t> counts(td::kVariantCount);
      for (int v = 0; v < td::kVariantCount; ++v) counts[static_cast<std::size_t>(v)] = td::executed_variant_count(t, v);
      return counts;
    };
    const std::vector<uint64_t> before = snapshot(target);
    std::vector<uint64_t> kernels_before(td::kReduceKernelCount);
    for (int k = 0; k < td::kReduceKernelCount; ++k)
      kernels_before[static_cast<std::size_t>(k)] = td::executed_reduce_kernel_count(target, k);
    std::vector<std::vector<uint64_t>> others;  // the other targets' counters: must not move
    for (int64_t t : targets) others.push_back(snapshot(t));
#endif
    uint64_t seed = 7;
    for (const VariantCase& c : variant_cases()) {
      std::string err;
      try {
        err = run_variant_case(c, seed++);
      } catch (const std::exception& e) {
        err = std::string(c.name) + ": threw " + e.what();
      }
      CHECK_MESSAGE(err.empty(), err);
    }
    for (const CopyVariantCase& c : copy_variant_cases()) {
      std::string err;
      try {
        err = run_copy_variant_case(c, seed++);
      } catch (const std::exception& e) {
        err = std::string(c.name) + ": threw " + e.what();
      }
      CHECK_MESSAGE(err.empty(), err);
    }
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
    const uint64_t has = td::compiled_variants();
    std::vector<uint64_t> counts(td::kVariantCount);
    for (int v = 0; v < td::kVariantCount; ++v) {
      counts[static_cast<std::size_t>(v)] = td::executed_variant_count(target, v) - before[static_cast<std::size_t>(v)];
      const bool exists = (has >> v) & 1;
      if (exists) {
        CHECK_MESSAGE(counts[static_cast<std::size_t>(v)] > 0,
                      "variant " << std::string(td::kVariantNames[v]) << " was never taken on " << name);
      } else {
        CHECK_MESSAGE(counts[static_cast<std::size_t>(v)] == 0,
                      "variant " << std::string(td::kVariantNames[v]) << " ran on " << name << ", whose code should not have it");
      }
    }
    // The reduction kernels (lib/reduce.hpp, ReduceKernel) the planner chooses on this target each
    // ran here, and no other (the plans were made for this target).
    const uint64_t planned = td::reduce_kernels();
    for (int k = 0; k < td::kReduceKernelCount; ++k) {
      const uint64_t n = td::executed_reduce_kernel_count(target, k) - kernels_before[static_cast<std::size_t>(k)];
      if ((planned >> k) & 1) CHECK_MESSAGE(n > 0, "kernel " << td::kReduceKernels[k].name << " never ran on " << name);
      else CHECK_MESSAGE(n == 0, "kernel " << td::kReduceKernels[k].name << " ran on " << name << ", which does not choose it");
    }
    for (std::size_t i = 0; i < targets.size(); ++i)
      if (targets[i] != target)
        CHECK_MESSAGE(snapshot(targets[i]) == others[i],
                      "sub-kernels of target " << hwy::TargetName(targets[i]) << " ran while " << name << " was forced");
    names.push_back(name);
    compiled.push_back(has);
    ran.push_back(counts);
#endif
  }
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
  // The closing note's table: occurrences (row pieces, items, leaves, calls) per variant and
  // target; "-": not in that target's code.
  std::ostringstream os;
  os << "executed sub-kernels (lib/kernels/path_counters.hpp, Variant) per Highway target (columns):\n";
  os << std::left << std::setw(34) << "variant";
  for (const auto& t : names) os << std::right << std::setw(10) << t;
  os << "\n";
  for (int v = 0; v < td::kVariantCount; ++v) {
    os << std::left << std::setw(34) << td::kVariantNames[v];
    for (std::size_t t = 0; t < names.size(); ++t) {
      if ((compiled[t] >> v) & 1) os << std::right << std::setw(10) << ran[t][static_cast<std::size_t>(v)];
      else os << std::right << std::setw(10) << "-";
    }
    os << "\n";
  }
  MESSAGE(os.str());
#else
  MESSAGE("executed-path counters are off in this build (configure with -Dpath_counters=true, as tests/run's "
          "build/tests does): the variant inputs were checked against the references, not which sub-kernels ran");
#endif
}

// The planner's strips (plan_problem, kLeafRowVecs and kSplitRowBytes in lib/reduce.hpp): items
// read a row at a time whose rows are at most 512 bytes keep their sums in registers on every
// target (split into strips of kLeafRowVecs vectors where the row is longer: 128 float32 on AVX2,
// SSE4, SCALAR), and items of longer rows keep the scratch row (1 KiB rows: longer than 16 vectors
// of every target's accumulators). The sums against the reference either way.
TEST_CASE("every Highway target: items of short rows read whole keep their sums in registers") {
  TargetGuard guard;
  const VariantCase short_rows{"rows read whole, 4 addends of 128", {64, 4, 128}, {}, {64, 1, 128}, tessera::DType::float32};
  const VariantCase long_rows{"rows read whole, 4 addends of 256", {64, 4, 256}, {}, {64, 1, 256}, tessera::DType::float32};
  uint64_t seed = 31;
  for (int64_t target : test::targets_to_test()) {
    hwy::SetSupportedTargetsForTest(target);
    CAPTURE(std::string(hwy::TargetName(target)));
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
    namespace td = tessera::detail;
    const int scratch = static_cast<int>(td::Variant::lanes_reg_leaf_rows_scratch);
    const int regs = static_cast<int>(td::Variant::lanes_reg_leaf_rows);
    // Targets without the register trees (scalable vectors) have neither variant: sums only.
    const uint64_t has = td::compiled_variants();
    const bool planned = ((has >> scratch) & 1) != 0 && ((has >> regs) & 1) != 0;
    uint64_t scratch_before = td::executed_variant_count(target, scratch);
    const uint64_t regs_before = td::executed_variant_count(target, regs);
    CHECK(run_variant_case(short_rows, seed++) == "");
    if (planned) {
      CHECK(td::executed_variant_count(target, scratch) == scratch_before);
      CHECK(td::executed_variant_count(target, regs) > regs_before);
    }
    scratch_before = td::executed_variant_count(target, scratch);
    CHECK(run_variant_case(long_rows, seed++) == "");
    if (planned) CHECK(td::executed_variant_count(target, scratch) > scratch_before);
#else
    CHECK(run_variant_case(short_rows, seed++) == "");
    CHECK(run_variant_case(long_rows, seed++) == "");
#endif
  }
#if !(defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS)
  MESSAGE("executed-path counters are off in this build (configure with -Dpath_counters=true, as tests/run's "
          "build/tests does): the sums were checked against the references, not where they were kept");
#endif
}
