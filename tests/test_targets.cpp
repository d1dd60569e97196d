// Every Highway target compiled into the library and supported by this CPU: force each in turn,
// check that tessera really dispatches to it, and compare a randomized sweep with the reference,
// serially (a one-thread arena) and threaded (the default arena, outputs of several MiB).
#include <doctest/doctest.h>

#include <hwy/targets.h>
#include <tbb/task_arena.h>
#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <string>
#include <vector>

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
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  REQUIRE(!targets.empty());
  // Without a mock, tessera runs the best target (Highway orders better targets first).
  CHECK(std::string(tessera::active_target()) == hwy::TargetName(targets.front()));

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
      serial_failures += small_sweep(1000 + static_cast<uint64_t>(exercised.size()), 600);
      serial_failures += large_sweep(2000, 4);  // a few large outputs run serially too
    });
    CHECK(serial_failures == 0);

    // Threaded: the default arena; these outputs are large enough to be split across threads.
    CHECK(large_sweep(3000) == 0);
    CHECK(small_sweep(4000 + static_cast<uint64_t>(exercised.size()), 150) == 0);

    exercised.push_back(name);
  }

  // Back to normal dispatch (also needed before asking which targets the CPU supports).
  hwy::SetSupportedTargetsForTest(0);
  CHECK(std::string(tessera::active_target()) == hwy::TargetName(targets.front()));

  std::string names;
  for (const auto& n : exercised) names += n + " ";
  INFO("targets exercised: " << names);
  CHECK(exercised.size() > 1);
#if HWY_ARCH_X86
  // On an AVX2 machine (this project's CI), the generated targets below AVX2 must all be there.
  if (hwy::SupportedTargets() & HWY_AVX2) {
    for (const char* expected : {"AVX2", "SSE4", "SSSE3", "SCALAR"})
      CHECK_MESSAGE(std::find(exercised.begin(), exercised.end(), expected) != exercised.end(),
                    expected << " was not exercised");
  }
#endif
}
