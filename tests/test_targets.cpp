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
#include <string>
#include <vector>

#if HWY_ARCH_ARM_A64 && defined(__linux__)
#include <sys/prctl.h>
#endif

#include "c_api_check.h"
#include "util.hpp"

namespace {

// Restores Highway's normal target choice even when a REQUIRE throws out of the loop.
struct TargetGuard {
  TargetGuard() = default;
  TargetGuard(const TargetGuard&) = delete;
  TargetGuard& operator=(const TargetGuard&) = delete;
  ~TargetGuard() { hwy::SetSupportedTargetsForTest(0); }
};

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
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  REQUIRE(!targets.empty());
  // Without a mock, tessera runs the best target (Highway orders better targets first).
  CHECK(best == hwy::TargetName(targets.front()));

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
  CHECK(std::string(tessera::active_target()) == hwy::TargetName(targets.front()));

  std::string names;
  for (const auto& n : exercised) names += n + " ";
  INFO("targets exercised: " << names);
  CHECK(exercised.size() == targets.size());
  // The generated targets below the best one this CPU supports must all have run (x86: SCALAR is
  // always generated, so even an old CPU exercises two; aarch64: NEON is the baseline, so a CPU
  // without SVE exercises only NEON).
  const int64_t supported = hwy::SupportedTargets();
  std::vector<const char*> expected;
#if HWY_ARCH_X86
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
  for (const char* name : expected)
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
