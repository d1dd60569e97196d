// The configuration accessors (tessera.hpp; tessera.show_config() in Python reports them):
// compiled_targets and supported_targets against Highway's own masks read in this translation unit
// (built with the library's Highway defines, tests/meson.build) and against what dispatch does;
// streaming_threshold_bytes against where plans start streaming; reduce_prefetch_bytes against the
// CPU Linux reports and the plans' prefetch distance; block_cache_limit_bytes against
// what the block cache keeps (tests/meson.build also runs these cases with the environment
// variables that override both values).
#include <doctest/doctest.h>

#include <hwy/targets.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
#include "kernels/path_counters.hpp"  // lib/, on the include path with -Dpath_counters=true
#endif

#include "alloc_spy.hpp"
#include "util.hpp"

namespace {

using test::TargetGuard;

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

// Bytes of CPU 0's data or unified cache of `level` (Linux sysfs), of its highest level for
// level 0; 0 where sysfs does not say.
long long sysfs_cache_bytes(int level) {
  int best_level = 0;
  long long bytes = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const auto read = [&](const char* name) {
      std::string text;
      if (std::FILE* g = std::fopen((dir + name).c_str(), "r")) {
        char buf[64] = {};
        if (std::fgets(buf, sizeof buf, g) != nullptr) text = buf;
        std::fclose(g);
      }
      return text;
    };
    const std::string lv = read("level"), type = read("type"), size = read("size");
    if (lv.empty() || type.empty() || size.empty()) break;
    if (type.rfind("Instruction", 0) == 0) continue;
    char* end = nullptr;
    const long long n = std::strtoll(size.c_str(), &end, 10);
    const long long unit = *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : *end == 'G' ? 1LL << 30 : 1;
    const int l = std::atoi(lv.c_str());
    if (level == 0 ? l >= best_level : l == level) {
      best_level = l;
      bytes = n * unit;
    }
  }
  return bytes;
}

// The CPU's vendor, family and model as Linux reports them (/proc/cpuinfo: a source other than
// the library's CPUID) and the size of CPU 0's highest-level data or unified cache (sysfs);
// nullopt where /proc/cpuinfo does not say.
struct LinuxCpu {
  std::string vendor;
  long family = -1;
  long model = -1;
  long long last_level_bytes = 0;
};
std::optional<LinuxCpu> cpu_per_linux() {
  std::FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (f == nullptr) return std::nullopt;
  LinuxCpu cpu;
  char line[512];
  while (std::fgets(line, sizeof line, f) != nullptr && (cpu.vendor.empty() || cpu.family < 0 || cpu.model < 0)) {
    const std::string l(line);
    const std::size_t colon = l.find(':');
    if (colon == std::string::npos) continue;
    const std::string value = l.substr(colon + 1);
    if (l.rfind("vendor_id", 0) == 0) cpu.vendor = value.substr(value.find_first_not_of(" \t"), 12);
    if (l.rfind("cpu family", 0) == 0) cpu.family = std::strtol(value.c_str(), nullptr, 10);
    if (l.rfind("model", 0) == 0 && l.rfind("model name", 0) != 0) cpu.model = std::strtol(value.c_str(), nullptr, 10);
  }
  std::fclose(f);
  if (cpu.vendor.empty() || cpu.family < 0 || cpu.model < 0) return std::nullopt;
  cpu.last_level_bytes = sysfs_cache_bytes(0);
  return cpu;
}

// The planner's replica steps (lib/planner.cpp, beyond_l2): an output that is copies of its source
// is walked in steps, each written to every replica, where the source is at least half of L2
// (1 MiB taken where sysfs does not say) and more than 256 KiB; below, each replica reads the
// source again from L2.
TEST_CASE("plans: a tile's replicas are written in steps from a source of half of L2 (sysfs)") {
  const long long l2 = sysfs_cache_bytes(2);
  const int64_t half = (l2 > 0 ? l2 : int64_t{1} << 20) / 2;
  constexpr int64_t kRow = 4096, kFloor = int64_t{256} << 10;  // rows of 1024 float32
  const auto steps = [](int64_t rows) {
    return tessera::Plan({rows, 1024}, {}, sizeof(float), {4, 1}).describe().find(" in steps of ") !=
           std::string::npos;
  };
  const int64_t rows = (std::max(half, kFloor + 1) + kRow - 1) / kRow;  // the fewest at least half of L2
  CAPTURE(l2);
  CAPTURE(rows);
  CHECK(steps(rows));
  CHECK(steps(2 * rows));
  CHECK_FALSE(steps(rows - 1));
  CHECK_FALSE(steps(kFloor / kRow));
}

// Named to match tests/meson.build's reduce_prefetch_on and reduce_prefetch_off runs
// (TESSERA_PREFETCH_BYTES=16384 and 0).
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
// The Highway target the kernels dispatch to (the one tessera::active_target() names), whose path
// counters the prefetch checks read; 0 if none of the compiled targets has that name.
static int64_t dispatched_target() {
  for (const int64_t t : hwy::SupportedAndGeneratedTargets())
    if (std::string(hwy::TargetName(t)) == tessera::active_target()) return t;
  return 0;
}
#endif

TEST_CASE("config: reduce_prefetch_bytes() is the distance reduction plans prefetch (TESSERA_PREFETCH_BYTES)") {
  const int64_t bytes = tessera::reduce_prefetch_bytes();
  CAPTURE(bytes);
  CHECK(tessera::reduce_prefetch_bytes() == bytes);  // fixed for the process
  // Whether the lanes path's short rows, its short items read row by row (along the rows) and the
  // periodic path's long runs take it too (the short runs per output element always do).
  bool short_rows = true, long_runs = true, rows_along = true;
  int64_t short_bytes = bytes;  // the distance of the lanes path's short rows
  int64_t along_bytes = bytes;  // the distance along the rows (the variable's, where it is set)
  int64_t long_rows_bytes = bytes;  // the distance along reg.leaf's long rows (likewise)
  // Whether the periodic runs' prefetches are spread among the loads (else an item's or a leaf's
  // lines at once): TESSERA_PREFETCH_SPREAD where set, else only on Intel's family 6 model 167
  // with a mesh L3 (checked below where Linux says which CPU this is).
  bool spread = false;
#if defined(__x86_64__) && defined(__linux__)
  const std::optional<LinuxCpu> cpu = cpu_per_linux();
  REQUIRE(cpu.has_value());
  CAPTURE(cpu->vendor);
  CAPTURE(cpu->family);
  CAPTURE(cpu->model);
  CAPTURE(cpu->last_level_bytes);
  const bool amd26 = cpu->vendor == "AuthenticAMD" && cpu->family >= 26;
  const bool intel_mesh = cpu->vendor == "GenuineIntel" && cpu->last_level_bytes > (64LL << 20);
  const bool model167 = intel_mesh && cpu->family == 6 && cpu->model == 167;
  spread = model167;
#endif
  if (const char* env = std::getenv("TESSERA_PREFETCH_SPREAD")) spread = std::string(env) == "1";
  CAPTURE(spread);
  if (const char* env = std::getenv("TESSERA_PREFETCH_BYTES")) {
    // the variable's distance, for every kind of item, at most 1 MiB (kPrefetchMaxBytes)
    CHECK(bytes == std::min<long long>(std::atoll(env), 1 << 20));
  } else {
    CHECK((bytes == 0 || bytes == 16384));
#if defined(__x86_64__) && defined(__linux__)
    // 16 KiB on AMD family 26 (short runs and short rows) and on Intel CPUs with a mesh L3 (over
    // 64 MiB: short runs and long runs); none elsewhere.
    CHECK(bytes == (amd26 || intel_mesh ? 16384 : 0));
    // Short rows 16 KiB ahead on AMD family 26, 4 KiB on those Intel CPUs but the ones reporting
    // family 6 model 167, else not at all.
    short_bytes = amd26 ? 16384 : intel_mesh && !model167 ? 4096 : 0;
    short_rows = short_bytes > 0;
    long_runs = intel_mesh;
    rows_along = intel_mesh;
    along_bytes = intel_mesh ? 4096 : 0;  // 4 KiB along the rows
    long_rows_bytes = intel_mesh && !model167 ? 2048 : 0;  // 2 KiB along long rows but on the model 167
#endif
  }
  // The plans prefetch that far ahead, in items (rounded up), or not at all: short rows of the
  // lanes path (nchw_bwd's 512 B rows, 4 addends: 2 KiB items) and long periodic runs (bc_cols_bwd's
  // rows of 16 KiB, each summed to one value), where they take it, and short runs of single
  // elements (column_bwd's 64 B runs) and of rows of 3 (narrow_bwd's 480 B runs); never items of
  // long rows ahead (outer_bwd's: along each row instead, below) nor a run of more than 4 KiB of
  // rows of 3.
  // Only where the plan's kernel has a prefetch (reduce.lanes.*, reduce.periodic.rows.w1,
  // reduce.periodic.rows, reduce.periodic.reg16): a target without reduce.periodic.reg16 for the element (accumulators of
  // more than 16 lanes: uint8 on AVX2 and AVX3, uint16 on AVX3; scalable targets) sums those runs
  // with reduce.periodic.leaves, unprefetched, and its plan must not say "prefetched".
  const auto prefetched = [](const tessera::Plan& plan) -> int64_t {
    const std::string d = plan.describe();
    const std::size_t at = d.find(", prefetched ");
    const int64_t items = at == std::string::npos ? 0 : std::atoll(d.c_str() + at + std::strlen(", prefetched "));
    const std::string kernel = plan.kernel_path();
    const bool has_prefetch =
        kernel.rfind("reduce.lanes.", 0) == 0 || kernel == "reduce.periodic.rows.w1" || kernel == "reduce.periodic.rows" ||
        kernel == "reduce.periodic.reg16";
    CHECK_MESSAGE((items == 0 || has_prefetch), kernel << " has no prefetch, but its plan says: " << d);
    return items;
  };
  const auto runs = [](const tessera::Plan& plan, const char* kernel) { return std::string(plan.kernel_path()) == kernel; };
  const auto runs_reg16 = [&](const tessera::Plan& plan) { return runs(plan, "reduce.periodic.reg16"); };
  using tessera::DType;
  const tessera::Plan nchw =
      tessera::Plan::tile_backward({64, 4, 256, 256}, {}, DType::float32, {64, 4, 128, 128}, {1, 1, 2, 2});
  const tessera::Plan column = tessera::Plan::tile_backward({1 << 20, 16}, {}, DType::float32, {1 << 20, 1}, {1, 16});
  const bool nchw_along = rows_along && runs(nchw, "reduce.lanes.reg.leaf") && bytes > 0;
  // An item's bytes: its 4 rows of the plan's strip (128 elements, 2 KiB items; 64 where the
  // target's registers hold fewer: the planner's strips, kSplitRowBytes in lib/reduce.hpp).
  const int64_t nchw_item = [&] {
    const std::string d = nchw.describe();
    const std::size_t at = d.find("items of up to ");
    return at == std::string::npos ? 0 : 4 * 4 * std::atoll(d.c_str() + at + std::strlen("items of up to "));
  }();
  REQUIRE(nchw_item > 0);
  CHECK(prefetched(nchw) ==
        (nchw_along ? (along_bytes + nchw_item - 1) / nchw_item : short_rows ? (short_bytes + nchw_item - 1) / nchw_item : 0));
  // (reduce.periodic.rows.w1 on fixed-width targets; a scalable one sums them with
  // reduce.periodic.leaves, unprefetched)
  CHECK(prefetched(column) == (runs(column, "reduce.periodic.rows.w1") ? (bytes + 63) / 64 : 0));
#if HWY_ARCH_X86
  CHECK(runs(column, "reduce.periodic.rows.w1"));  // every x86 target has fixed-width vectors
#endif
  const tessera::Plan bc_cols = tessera::Plan::sum_to_shape({256, 4096}, {}, DType::float32, {256, 1});
  CHECK(prefetched(bc_cols) == (long_runs && runs_reg16(bc_cols) ? (bytes + 16383) / 16384 : 0));
  // uint8 rows of 4096: reduce.periodic.reg16 where a vector holds at most 16 uint8 lanes (SSE4,
  // NEON), reduce.periodic.leaves on AVX2 and AVX3 (32 and 64 lanes)
  const tessera::Plan bc_cols_u8 = tessera::Plan::sum_to_shape({256, 4096}, {}, DType::uint8, {256, 1});
  CHECK(prefetched(bc_cols_u8) == (long_runs && runs_reg16(bc_cols_u8) ? (bytes + 4095) / 4096 : 0));
  const std::string best = tessera::active_target();
  if (best == "AVX2" || best.rfind("AVX3", 0) == 0) CHECK(std::string(bc_cols_u8.kernel_path()) == "reduce.periodic.leaves");
  // Long rows (outer_bwd's 8 rows of 64 KiB items, one leaf, read across the rows): no item ahead,
  // each row along itself long_rows_bytes ahead where that is planned (reduce.lanes.reg.leaf).
  const tessera::Plan outer = tessera::Plan::tile_backward({8, 1 << 20}, {}, DType::float32, {1, 1 << 20}, {8, 1});
  CAPTURE(long_rows_bytes);
  CAPTURE(outer.describe());
  const bool outer_along = long_rows_bytes > 0 && long_rows_bytes < 65536 && runs(outer, "reduce.lanes.reg.leaf");
  CHECK(prefetched(outer) == (outer_along ? long_rows_bytes : 0));
  CHECK((outer.describe().find(" bytes ahead along the rows") != std::string::npos) == outer_along);
#if HWY_ARCH_X86
  CHECK(runs(outer, "reduce.lanes.reg.leaf"));
#endif
  const tessera::Plan narrow = tessera::Plan::tile_backward({131072, 120}, {}, DType::float32, {131072, 3}, {1, 40});
  CHECK(prefetched(narrow) == (runs(narrow, "reduce.periodic.rows") ? (bytes + 479) / 480 : 0));
#if HWY_ARCH_X86
  CHECK(runs(narrow, "reduce.periodic.rows"));
#endif
  // The periodic runs that are prefetched, item by item (narrow_bwd's) or leaf by leaf
  // (bc_cols_bwd's), say how: spread among the loads where reduce_prefetch_runs_spread(), else
  // not (each item's or leaf's lines at once); the other kernels never spread.
  const auto says_spread = [](const tessera::Plan& plan) {
    return plan.describe().find("spread among the loads") != std::string::npos;
  };
  CHECK(says_spread(narrow) == (spread && prefetched(narrow) > 0));
  CHECK(says_spread(bc_cols) == (spread && prefetched(bc_cols) > 0));
  CHECK(!says_spread(column));
  CHECK(!says_spread(nchw));
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
  // The kernels' counts below: a sub-kernel's (kernels/path_counters.hpp) on the dispatched target,
  // the plans run on one thread (the counters of this thread's target, whatever the parallel
  // threshold).
  namespace td = tessera::detail;
  const auto count_of = [](td::Variant v) {
    const int64_t dispatched = dispatched_target();
    REQUIRE(dispatched != 0);
    return td::executed_variant_count(dispatched, static_cast<int>(v));
  };
  tessera::Options one_thread;
  one_thread.max_threads = 1;
  {  // ... and the kernel of such items (rows of 6, one by one on every target) prefetches them so
    const tessera::Plan rows6 =
        tessera::Plan::tile_backward({600, 120}, {}, DType::float32, {600, 6}, {1, 20}, one_thread);
    const bool planned = prefetched(rows6) > 0;
    CHECK(says_spread(rows6) == (spread && planned));
    const td::Variant spread_v = td::Variant::periodic_prefetch_spread;
    const td::Variant at_once_v = td::Variant::periodic_prefetch_at_once;
    const uint64_t spread_before = count_of(spread_v);
    const uint64_t at_once_before = count_of(at_once_v);
    std::vector<float> grad(600 * 120, 1.0f), sums(600 * 6, 0.0f);
    rows6.execute(grad.data(), sums.data(), sums.size() * sizeof(float));
    CHECK(std::count(sums.begin(), sums.end(), 20.0f) == static_cast<std::ptrdiff_t>(sums.size()));
    CHECK((count_of(spread_v) > spread_before) == (planned && spread));
    CHECK((count_of(at_once_v) > at_once_before) == (planned && !spread));
  }
  {  // ... and narrow_bwd's items of w = 3 so on every target this CPU has: one by one where the
     // accumulator has 8 lanes (AVX-512's float64), N at a time elsewhere (AVX2: 4), each way
     // obeying the plan
    TargetGuard guard;
    const td::Variant spread_v = td::Variant::periodic_prefetch_spread;
    const td::Variant at_once_v = td::Variant::periodic_prefetch_at_once;
    for (const int64_t target : test::targets_to_test()) {
      hwy::SetSupportedTargetsForTest(target);
      REQUIRE(std::string(tessera::active_target()) == hwy::TargetName(target));
      CAPTURE(hwy::TargetName(target));
      const tessera::Plan rows3 =
          tessera::Plan::tile_backward({4096, 120}, {}, DType::float32, {4096, 3}, {1, 40}, one_thread);
      const bool planned = prefetched(rows3) > 0;
      CHECK(says_spread(rows3) == (spread && planned));
      const uint64_t spread_before = td::executed_variant_count(target, static_cast<int>(spread_v));
      const uint64_t at_once_before = td::executed_variant_count(target, static_cast<int>(at_once_v));
      std::vector<float> grad(4096 * 120), sums(4096 * 3, -1.0f);
      for (std::size_t i = 0; i < grad.size(); ++i) grad[i] = static_cast<float>(i % 3 + 1);
      rows3.execute(grad.data(), sums.data(), sums.size() * sizeof(float));
      int64_t wrong = 0;  // output c: 40 addends of c + 1
      for (std::size_t i = 0; i < sums.size(); ++i) wrong += sums[i] != static_cast<float>(40 * (i % 3 + 1));
      CHECK(wrong == 0);
      const bool periodic_rows = runs(rows3, "reduce.periodic.rows");
      CHECK((td::executed_variant_count(target, static_cast<int>(spread_v)) > spread_before) ==
            (periodic_rows && planned && spread));
      CHECK((td::executed_variant_count(target, static_cast<int>(at_once_v)) > at_once_before) ==
            (periodic_rows && planned && !spread));
    }
  }
#endif
  // Items of four short rows read row by row (rows_whole): along the rows where they take it (Intel
  // CPUs with a mesh L3, the variable), all at once where short rows do (AMD family 26).
  CHECK((nchw.describe().find("along the rows") != std::string::npos) == nchw_along);
  // Items of 16 addend rows of 64 B (mixed3d_bwd's kind: two leaves, reduce.lanes.reg.tree4 on
  // fixed-width targets, which reads rows of at most 8 vectors whole and says so): prefetched only
  // where short rows are, along the rows where the reductions prefetch so too, else all at once.
  const tessera::Plan mixed = tessera::Plan::tile_backward({64, 64, 64}, {}, DType::float32, {32, 32, 16}, {2, 2, 4});
  const bool mixed_along = short_rows && rows_along && runs(mixed, "reduce.lanes.reg.tree4") && bytes > 0;
  CHECK((mixed.describe().find("each row read whole") != std::string::npos) == runs(mixed, "reduce.lanes.reg.tree4"));
  CHECK((mixed.describe().find("along the rows") != std::string::npos) == mixed_along);
  CHECK(prefetched(mixed) == (mixed_along ? (along_bytes + 1023) / 1024 : short_rows ? (short_bytes + 1023) / 1024 : 0));
#if HWY_ARCH_X86
  CHECK(runs(mixed, "reduce.lanes.reg.tree4"));
#endif
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
  {  // ... and its kernel prefetches along them exactly then: every item but the last prefetched(tree)
     // ones, which have no item that far on in the task (one task)
    const td::Variant tree_along = td::Variant::lanes_reg_tree_n_rows_along;
    const tessera::Plan tree =
        tessera::Plan::tile_backward({64, 64, 64}, {}, DType::float32, {32, 32, 16}, {2, 2, 4}, one_thread);
    std::vector<float> grad(64 * 64 * 64), sums(32 * 32 * 16, 0.0f);
    for (std::size_t i = 0; i < grad.size(); ++i) grad[i] = static_cast<float>(i % 64 % 16) + static_cast<float>(i / 4096);
    const uint64_t before = count_of(tree_along);
    tree.execute(grad.data(), sums.data(), sums.size() * sizeof(float));
    const int64_t items = 32 * 32;  // of 16 elements, prefetched(tree) of them ahead
    CHECK(count_of(tree_along) - before ==
          (mixed_along ? static_cast<uint64_t>(items - prefetched(tree)) : 0u));
    int64_t wrong = 0;  // sums at (a, b, c): 16 addends of c, 8 of a and 8 of a + 32
    for (std::size_t i = 0; i < sums.size(); ++i) {
      const std::size_t a = i / (32 * 16), c = i % 16;
      wrong += sums[i] != static_cast<float>(16 * c + 8 * (a + (a + 32)));
    }
    CHECK(wrong == 0);
  }
#endif
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
  {  // ... and its kernel prefetches along them exactly then (the dispatched target's counter)
    const td::Variant along_rows = td::Variant::lanes_reg_leaf_rows_along;
    const tessera::Plan small =
        tessera::Plan::tile_backward({2, 4, 64, 64}, {}, DType::float32, {2, 4, 32, 32}, {1, 1, 2, 2}, one_thread);
    const bool small_along = rows_along && runs(small, "reduce.lanes.reg.leaf") && bytes > 0;
    CHECK((small.describe().find("along the rows") != std::string::npos) == small_along);
    std::vector<float> grad(2 * 4 * 64 * 64, 1.0f), sums(2 * 4 * 32 * 32, 0.0f);
    const uint64_t before = count_of(along_rows);
    small.execute(grad.data(), sums.data(), sums.size() * sizeof(float));
    CHECK((count_of(along_rows) > before) == small_along);
    CHECK(std::count(sums.begin(), sums.end(), 4.0f) == static_cast<std::ptrdiff_t>(sums.size()));
  }
#endif
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
  {  // ... and its kernel prefetches along them exactly then, the first item's rows into the
     // second's (2 items of 4 rows of 32 KiB: planned in the 16 KiB runs of tests/meson.build too)
    const td::Variant long_rows_v = td::Variant::lanes_reg_leaf_long_rows_ahead;
    const td::Variant next_v = td::Variant::lanes_reg_leaf_long_rows_next;
    const tessera::Plan rows4 =
        tessera::Plan::tile_backward({2, 4, 8192}, {}, DType::float32, {2, 1, 8192}, {1, 4, 1}, one_thread);
    const bool planned = long_rows_bytes > 0 && long_rows_bytes < 32768 && runs(rows4, "reduce.lanes.reg.leaf");
    CHECK(prefetched(rows4) == (planned ? long_rows_bytes : 0));
    std::vector<float> grad(2 * 4 * 8192), sums(2 * 8192, 0.0f);
    for (std::size_t i = 0; i < grad.size(); ++i) grad[i] = static_cast<float>(i % 8192) + static_cast<float>(i / 8192);
    const uint64_t before = count_of(long_rows_v);
    const uint64_t before_next = count_of(next_v);
    rows4.execute(grad.data(), sums.data(), sums.size() * sizeof(float));
    CHECK(count_of(long_rows_v) - before == (planned ? 2u : 0u));
    CHECK(count_of(next_v) - before_next == (planned ? 1u : 0u));  // item 0 only
    int64_t wrong = 0;  // item b's sums[j] = 4 j + 16 b + 0 + 1 + 2 + 3
    for (std::size_t i = 0; i < sums.size(); ++i) {
      const std::size_t b = i / 8192, j = i % 8192;
      wrong += sums[i] != static_cast<float>(4 * j + 16 * b + 6);
    }
    CHECK(wrong == 0);
  }
  {  // ... and reduce.lanes.leaves' contiguous long rows the same way, leaf by leaf, each leaf's rows
     // into the next leaf's (136 rows of 32 KiB: 17 leaves of 8, one task)
    const td::Variant ahead_v = td::Variant::leaves_rows_ahead;
    const td::Variant next_v = td::Variant::leaves_rows_next;
    const tessera::Plan leaves = tessera::Plan::sum_to_shape({136, 8192}, {}, DType::float32, {1, 8192}, one_thread);
    REQUIRE(runs(leaves, "reduce.lanes.leaves"));
    const bool planned = long_rows_bytes > 0 && long_rows_bytes < 32768;
    CHECK(prefetched(leaves) == (planned ? long_rows_bytes : 0));
    std::vector<float> grad(136 * 8192), sums(8192, 0.0f);
    for (std::size_t i = 0; i < grad.size(); ++i) grad[i] = static_cast<float>(i % 8192 % 64) + static_cast<float>(i / 8192);
    const uint64_t before = count_of(ahead_v);
    const uint64_t before_next = count_of(next_v);
    leaves.execute(grad.data(), sums.data(), sums.size() * sizeof(float));
    CHECK(count_of(ahead_v) - before == (planned ? 17u : 0u));
    CHECK(count_of(next_v) - before_next == (planned ? 16u : 0u));  // not the last
    int64_t wrong = 0;  // sums[j] = 136 (j % 64) + 0 + 1 + ... + 135
    for (std::size_t j = 0; j < sums.size(); ++j) wrong += sums[j] != static_cast<float>(136 * (j % 64) + 135 * 136 / 2);
    CHECK(wrong == 0);
  }
#endif
  // Runs of rows of 5 float64 (one leaf of 80 slots): 102 copies are 4080 B, prefetched; 103 are
  // 4120 B, more than kPrefetchRowBytes, never.
  const tessera::Plan rows5 = tessera::Plan::tile_backward({64, 510}, {}, DType::float64, {64, 5}, {1, 102});
  const tessera::Plan rows5_long = tessera::Plan::tile_backward({64, 515}, {}, DType::float64, {64, 5}, {1, 103});
  CHECK(prefetched(rows5) == (runs(rows5, "reduce.periodic.rows") ? (bytes + 4079) / 4080 : 0));
  CHECK(prefetched(rows5_long) == 0);
#if HWY_ARCH_X86
  CHECK(runs(rows5, "reduce.periodic.rows"));
  CHECK(runs(rows5_long, "reduce.periodic.rows"));
#endif
  // Per-element counts of 0-4 float32 elements (rep_counts_bwd's kind) summed in groups from their
  // one-byte counts: the gradient prefetched min(bytes, 4 KiB) of float32 ahead and the counts 4
  // KiB ahead (kSegCountsAheadBytes) wherever the reductions prefetch, else neither (and never
  // where the groups do not run).
  std::vector<int64_t> counts(4096);
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<int64_t>(i % 5);
  const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  const tessera::Plan seg = tessera::Plan::repeat_backward({total}, {}, DType::float32, {4096}, counts, 0);
  const std::string seg_d = seg.describe();
  CAPTURE(seg_d);
  const bool groups = seg_d.find("two groups of segments at a time") != std::string::npos;
  // The number after `key` in the description and where it starts (0 and npos where it lacks key).
  const auto number_after = [&](const char* key) -> std::pair<int64_t, std::size_t> {
    const std::size_t at = seg_d.find(key);
    if (at == std::string::npos) return {0, at};
    return {std::atoll(seg_d.c_str() + at + std::strlen(key)), at + std::strlen(key)};
  };
  const int64_t seg_ahead = number_after(", prefetched ").first;
  CHECK(seg_ahead == (groups ? std::min<int64_t>(bytes, 4096) / 4 : 0));
  const auto [counts_ahead, counts_at] = number_after(", the counts ");
  CHECK(counts_ahead == (groups && bytes > 0 ? 4096 : 0));
  if (counts_at != std::string::npos) CHECK(seg_d.find(" bytes ahead", counts_at) != std::string::npos);
  // every x86 SIMD target has the groups' code (fixed-width vectors of 2 or more doubles)
  if (best == "AVX2" || best.rfind("AVX3", 0) == 0 || best == "SSE4" || best == "SSSE3") CHECK(groups);
  // Segments of 0-4 rows of 1 KiB float32 back to back (rep_ragged_bwd's kind), each one item of
  // reduce.lanes.reg.leaf on a fixed-width target: prefetched along_bytes ahead along the gradient
  // wherever the reductions prefetch along the rows, else not at all; never where a row is longer
  // than kPrefetchRowBytes (4 KiB; counts 0-3, so that every item is at most 16 KiB), shorter
  // than a line (rows of 8 float32), nor where the rows are not back to back (a padded gradient).
  const auto seg_prefetch = [](const tessera::Plan& plan) -> int64_t {
    const std::string d = plan.describe();
    CAPTURE(d);
    const std::size_t at = d.find(", prefetched ");
    if (at == std::string::npos) return 0;
    CHECK(d.find(" bytes ahead along the rows", at) != std::string::npos);
    return std::atoll(d.c_str() + at + std::strlen(", prefetched "));
  };
  std::vector<int64_t> rows_counts(64);
  for (std::size_t i = 0; i < rows_counts.size(); ++i) rows_counts[i] = static_cast<int64_t>(i % 5);
  const int64_t nrows = std::accumulate(rows_counts.begin(), rows_counts.end(), int64_t{0});
  const tessera::Plan ragged = tessera::Plan::repeat_backward({nrows, 256}, {}, DType::float32, {64, 256}, rows_counts, 0);
  std::vector<int64_t> counts03(64);
  for (std::size_t i = 0; i < counts03.size(); ++i) counts03[i] = static_cast<int64_t>(i % 4);
  const int64_t nrows03 = std::accumulate(counts03.begin(), counts03.end(), int64_t{0});
  const tessera::Plan ragged_long =
      tessera::Plan::repeat_backward({nrows03, 1025}, {}, DType::float32, {64, 1025}, counts03, 0);
  const tessera::Plan ragged_4k =
      tessera::Plan::repeat_backward({nrows03, 1024}, {}, DType::float32, {64, 1024}, counts03, 0);
  std::vector<int64_t> many(1024);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int64_t>(i % 5);
  const int64_t nmany = std::accumulate(many.begin(), many.end(), int64_t{0});
  const tessera::Plan ragged_narrow = tessera::Plan::repeat_backward({nmany, 8}, {}, DType::float32, {1024, 8}, many, 0);
  const tessera::Plan ragged_padded =
      tessera::Plan::repeat_backward({nrows, 256}, {1280, 4}, DType::float32, {64, 256}, rows_counts, 0);
  // (lanes.reg.leaf: fixed-width targets, every one but SVE's and RVV's; a gradient of more than the
  // distance: 128 KiB here)
  const bool ragged_ahead = rows_along && along_bytes > 0 && along_bytes < nrows03 * 4096 &&
                            best.rfind("SVE", 0) != 0 && best.rfind("RVV", 0) != 0;
  CHECK(seg_prefetch(ragged) == (ragged_ahead ? along_bytes : 0));
  CHECK(seg_prefetch(ragged_4k) == (ragged_ahead ? along_bytes : 0));
  CHECK(seg_prefetch(ragged_long) == 0);
  CHECK(seg_prefetch(ragged_narrow) == 0);
  CHECK(seg_prefetch(ragged_padded) == 0);
  // Pairs of float32 summed (rep2_bwd's kind, reduce.interleaved.pair_f32 on every target):
  // prefetched along_bytes ahead along their items wherever the reductions prefetch along the
  // rows; float64 pairs (reduce.interleaved.row) never.
  const tessera::Plan pairs = tessera::Plan::repeat_backward({64, 4096}, {}, DType::float32, {64, 2048}, 2, 1);
  const tessera::Plan pairs64 = tessera::Plan::repeat_backward({64, 4096}, {}, DType::float64, {64, 2048}, 2, 1);
  REQUIRE(std::string(pairs.kernel_path()) == "reduce.interleaved.pair_f32");
  CHECK(seg_prefetch(pairs) == (rows_along ? along_bytes : 0));
  CHECK(seg_prefetch(pairs64) == 0);
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
