// The configuration accessors (tessera.hpp; tessera.show_config() in Python reports them):
// compiled_targets and supported_targets against Highway's own masks read in this translation unit
// (built with the library's Highway defines, tests/meson.build) and against what dispatch does;
// streaming_threshold_bytes against where plans start streaming; block_cache_limit_bytes against
// what the block cache keeps (tests/meson.build also runs these cases with the environment
// variables that override both values).
#include <doctest/doctest.h>

#include <hwy/targets.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "alloc_spy.hpp"

namespace {

// Highway's names of the targets in `mask`, lowest bit (best target) first.
std::vector<std::string> names_of(int64_t mask) {
  std::vector<std::string> names;
  for (int64_t bits = mask; bits != 0; bits &= bits - 1) names.emplace_back(hwy::TargetName(bits & -bits));
  return names;
}

bool streams(int64_t nbytes) {
  const tessera::Plan plan({nbytes}, {}, 1, {1});
  return std::string(plan.kernel_path()).find(".nt") != std::string::npos;
}

// Restores Highway's normal target choice however the test case leaves.
struct TargetGuard {
  TargetGuard() = default;
  TargetGuard(const TargetGuard&) = delete;
  TargetGuard& operator=(const TargetGuard&) = delete;
  ~TargetGuard() { hwy::SetSupportedTargetsForTest(0); }
};

constexpr std::size_t kMiB = std::size_t{1} << 20;

// Whether the block of an allocating call of `mib` MiB, freed, is kept: the next call of that size
// then takes no fresh large block and returns the same memory. (Blocks over the limit are released
// when freed, and then no kept block could hold that output either.)
bool kept_after_free(const std::vector<unsigned char>& one_mib, std::size_t mib) {
  const void* first = nullptr;
  {
    const tessera::Array a = tessera::tile(one_mib.data(), {static_cast<int64_t>(kMiB)}, {}, 1,
                                           {static_cast<int64_t>(mib)});
    REQUIRE(a.nbytes() == mib * kMiB);
    first = a.data();
  }
  test::AllocSpy spy;
  const tessera::Array b = tessera::tile(one_mib.data(), {static_cast<int64_t>(kMiB)}, {}, 1,
                                         {static_cast<int64_t>(mib)});
  const bool reused = spy.seen().large == 0;
  if (reused) CHECK(b.data() == first);  // (a fresh block may land at the released one's address)
  CHECK(std::memcmp(b.data(), one_mib.data(), kMiB) == 0);
  return reused;
}

}  // namespace

TEST_CASE("config: compiled_targets is HWY_TARGETS, supported_targets what this CPU has, best first") {
  const std::vector<std::string> compiled = tessera::compiled_targets();
  INFO("compiled: " << [&] {
    std::string s;
    for (const auto& n : compiled) s += n + " ";
    return s;
  }());
  REQUIRE(!compiled.empty());
  CHECK(compiled == names_of(HWY_TARGETS));
  for (const auto& n : compiled) CHECK(n != "Unknown");

  TargetGuard guard;
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<std::string> supported = tessera::supported_targets();
  REQUIRE(!supported.empty());
  CHECK(supported == names_of(hwy::SupportedTargets() & HWY_TARGETS));
  // Dispatch takes one of them: usually the first, but Highway 1.0.3 takes SVE2 over SVE2_128 on a
  // 128-bit SVE2 CPU (the cross suite's aarch64-qemu-sve2_128), so only membership is a rule.
  CHECK(std::find(supported.begin(), supported.end(), std::string(tessera::active_target())) != supported.end());

  // Each supported target forced in turn: supported_targets() says just it, and dispatch goes there.
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    CAPTURE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    CHECK(tessera::supported_targets() == std::vector<std::string>{hwy::TargetName(target)});
    CHECK(std::string(tessera::active_target()) == hwy::TargetName(target));
  }
  hwy::SetSupportedTargetsForTest(0);
  CHECK(tessera::supported_targets() == supported);
  CHECK(std::find(supported.begin(), supported.end(), std::string(tessera::active_target())) != supported.end());
}

// Named to match tests/meson.build's stream_threshold_env run (TESSERA_STREAM_MIN_BYTES=65536).
TEST_CASE("options: the automatic streaming threshold: streaming_threshold_bytes() is where plans start streaming") {
  const int64_t t = tessera::streaming_threshold_bytes();
  CAPTURE(t);
  REQUIRE(t > 64);
  CHECK(tessera::streaming_threshold_bytes() == t);  // fixed for the process
  CHECK(streams(t));
  CHECK(!streams(t - 1));
  CHECK(streams(t + 4096));
  if (const char* env = std::getenv("TESSERA_STREAM_MIN_BYTES")) {
    CHECK(t == std::atoll(env));
  } else {
    CHECK(t >= (int64_t{4} << 20));
    CHECK(t <= (int64_t{256} << 20));
  }
}

TEST_CASE("config: block_cache_limit_bytes() is what the block cache keeps (TESSERA_ALLOC_CACHE_BYTES)") {
  const std::size_t limit = tessera::block_cache_limit_bytes();
  CAPTURE(limit);
  const char* env = std::getenv("TESSERA_ALLOC_CACHE_BYTES");
  // Decimal digits: that count of bytes; anything else (reported on stderr): the default.
  const bool digits = env && *env && std::strspn(env, "0123456789") == std::strlen(env) && std::strlen(env) < 20;
  CHECK(limit == (digits ? static_cast<std::size_t>(std::strtoull(env, nullptr, 10)) : 256 * kMiB));

  std::vector<unsigned char> one_mib(kMiB);
  for (std::size_t i = 0; i < one_mib.size(); ++i) one_mib[i] = static_cast<unsigned char>(i * 131 + 7);
  {  // the spy sees this thread's large allocations (it is checked before a count of 0 is relied on)
    const test::HoldKeptBlocks hold(34 * kMiB);
    test::AllocSpy spy;
    const tessera::Array a = tessera::tile(one_mib.data(), {static_cast<int64_t>(kMiB)}, {}, 1, {34});
    REQUIRE(spy.seen().large == 1);
  }
  // Outputs of whole 2 MiB pages (the large blocks' granule): kept up to the limit, released past it.
  CHECK(kept_after_free(one_mib, 34) == (34 * kMiB <= limit));
  const std::size_t at_limit = limit / (2 * kMiB) * 2;  // MiB, even
  if (at_limit >= 34 && at_limit + 2 <= 64) {
    CHECK(kept_after_free(one_mib, at_limit));
    CHECK(!kept_after_free(one_mib, at_limit + 2));
  } else {
    MESSAGE("the limit's edge (" << at_limit << " MiB) is checked by the block_cache_limit_env run "
                                 "(TESSERA_ALLOC_CACHE_BYTES=40 MiB), not at this limit");
  }
}
