// Allocating calls of 32 MiB or more (api.cpp allocate_output / free_output): 2 MiB aligned,
// written with ordinary stores when fresh (the automatic -> never re-plan) and with the plan's own
// stores when a block kept by tessera_free is reused — each kernel family (tile's copy, pattern,
// fill and gather; repeat by a scalar and by per-element counts; the reductions) compared byte for
// byte with the reference, through the C++ and the C API, fresh and reused. Which one a call got
// is asserted, not assumed: the allocator keeps freed blocks (lib/allocator.cpp: any kept block
// the output fills to 4/5 is reused), so before each "fresh" call the blocks it could reuse are
// taken by holders (alloc_spy.hpp HoldKeptBlocks), and alloc_spy counts the mappings of 32 MiB or
// more each call makes: one for a fresh block, none for a reused one.
//
// The block cache's bounds: freed blocks are released on time without another call, and their
// pages leave the process (its resident set, read from /proc/self/statm, returns to where it was);
// set_block_cache_limit bounds and disables the cache; a reused block takes no page fault
// (getrusage's minor faults); a child of fork() allocates and expires blocks of its own.
#include <doctest/doctest.h>

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "alloc_spy.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "reference.hpp"
#include "util.hpp"

namespace {

using ref::Shape;

struct LargeCase {
  const char* family;  // the kernel family the plan takes (its path starts with it)
  Shape parent;        // the input is `parent`, filled with a byte pattern, ...
  bool transposed;     // ... or its transpose (a strided input: the gather)
  Shape reps;
};

// Each output is 34 MiB (35,651,584 bytes): past kHugeMinBytes (32 MiB).
const std::vector<LargeCase>& large_cases() {
  static const std::vector<LargeCase> cases = {
      {"copy", {35651584}, false, {1}},
      {"pattern", {4352, 4}, false, {1, 512}},
      {"fill", {557056, 1}, false, {1, 16}},
      {"gather", {2176, 1024}, true, {2, 2}},
  };
  return cases;
}

struct Input {
  std::vector<float> data;
  Shape shape, strides;  // strides in bytes
};

// The copy case tiles bytes; the others 4-byte elements.
std::size_t itemsize_of(const LargeCase& c) { return c.family == std::string("copy") ? 1 : sizeof(float); }

Input make_input(const LargeCase& c) {
  Input in;
  int64_t n = 1;
  for (int64_t e : c.parent) n *= e;
  const std::size_t itemsize = itemsize_of(c);
  in.data.resize(static_cast<std::size_t>(n * static_cast<int64_t>(itemsize) + 3) / 4);
  auto* bytes = reinterpret_cast<unsigned char*>(in.data.data());
  for (std::size_t i = 0; i < in.data.size() * 4; ++i) bytes[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
  in.shape = c.parent;
  in.strides = ref::contiguous_strides(c.parent, itemsize);
  if (c.transposed) {
    in.shape = {c.parent[1], c.parent[0]};
    in.strides = {in.strides[1], in.strides[0]};
  }
  return in;
}

bool huge_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % (std::uintptr_t{2} << 20) == 0; }

// 32-bit floats 0, 1, 2, ... - 3 (mod 7): small integers, every sum of the reductions exact.
std::vector<float> small_floats(int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i % 7 - 3);
  return v;
}

// An allocating call of 34 MiB and the bytes it must produce.
struct AllocCase {
  std::string name;
  std::string path;  // the plan's kernel path starts with this
  std::function<tessera::Plan()> plan;
  std::function<tessera::Array()> call;
  std::vector<unsigned char> expected;
};

// Each once fresh and once reused (the block the fresh one freed), byte for byte.
void check_fresh_and_reused(const AllocCase& c) {
  CAPTURE(c.name);
  REQUIRE(c.expected.size() == 35651584);
  const tessera::Plan plan = c.plan();
  CHECK_MESSAGE(std::string(plan.kernel_path()).rfind(c.path, 0) == 0, "path " << plan.kernel_path());
  void* first = nullptr;
  {
    std::optional<tessera::Array> a;
    {
      const test::HoldKeptBlocks hold(c.expected.size());
      test::AllocSpy spy;
      a.emplace(c.call());
      CHECK_MESSAGE(spy.seen().large == 1, "not a fresh block");
    }
    REQUIRE(a->nbytes() == c.expected.size());
    CHECK(huge_aligned(a->data()));
    CHECK(std::memcmp(a->data(), c.expected.data(), c.expected.size()) == 0);
    first = const_cast<void*>(a->data());
  }
  test::AllocSpy spy;
  const tessera::Array b = c.call();
  CHECK_MESSAGE(spy.seen().large == 0, "not a kept block");
  CHECK(b.data() == first);  // the kept block, written with the plan's own (streaming) stores
  CHECK(std::memcmp(b.data(), c.expected.data(), c.expected.size()) == 0);
}

}  // namespace

// Under emulation (TESSERA_TEST_SCALE > 1: the cross suite's NEON run, the aarch64 run of the
// whole suite) the two test cases below take every scale-th of their 34 MiB cases
// (test::scale_takes): their reference outputs,
// compared byte for byte, were most of an emulated run's time (49 s of the 2048-bit SVE2 run's
// 349, with --duration=true, 0bc3663's build/cross-aarch64 on the Intel Xeon of family 6 model
// 207, 2026-12-02). Full scale everywhere else (the unit and sanitize suites).
TEST_CASE("allocating calls of 32 MiB or more: each tile kernel family, fresh and reused, byte for byte") {
  int index = 0;
  for (const LargeCase& c : large_cases()) {
    if (!test::scale_takes(index++)) continue;
    CAPTURE(c.family);
    const Input in = make_input(c);
    const std::size_t itemsize = itemsize_of(c);
    AllocCase ac{c.family, c.family, [&] { return tessera::Plan(in.shape, in.strides, itemsize, c.reps); },
                 [&] { return tessera::tile(in.data.data(), in.shape, in.strides, itemsize, c.reps); },
                 ref::tile(in.data.data(), in.shape, in.strides, itemsize, c.reps)};
    check_fresh_and_reused(ac);

    // C: the same through tessera_tile_alloc_ex / tessera_free, with every nontemporal option,
    // fresh (the kept blocks held) and reused.
    for (int nt : {TESSERA_NONTEMPORAL_AUTO, TESSERA_NONTEMPORAL_ALWAYS, TESSERA_NONTEMPORAL_NEVER}) {
      for (bool fresh : {true, false}) {
        CAPTURE(nt);
        CAPTURE(fresh);
        tessera_options opt;
        tessera_options_init(&opt);
        opt.nontemporal = nt;
        void* data = nullptr;
        std::size_t bytes = 0;
        int out_ndim = 0;
        int64_t out_shape[TESSERA_MAX_NDIM];
        std::optional<test::HoldKeptBlocks> hold;
        if (fresh) hold.emplace(ac.expected.size());
        test::AllocSpy spy;
        REQUIRE(tessera_tile_alloc_ex(in.data.data(), static_cast<int>(in.shape.size()), in.shape.data(),
                                      in.strides.data(), itemsize, static_cast<int>(c.reps.size()), c.reps.data(),
                                      &opt, &data, &bytes, &out_ndim, out_shape) == TESSERA_OK);
        CHECK(spy.seen().large == (fresh ? 1u : 0u));
        hold.reset();
        REQUIRE(bytes == ac.expected.size());
        CHECK(huge_aligned(data));
        CHECK(std::memcmp(data, ac.expected.data(), bytes) == 0);
        tessera_free(data);
      }
    }
  }
}

TEST_CASE("allocating calls of 32 MiB or more: repeat, per-element counts and the reductions, fresh and reused") {
  // repeat by 2 along the last axis (4352 x 1024 floats -> 4352 x 2048: 34 MiB).
  const bool counts_case = test::scale_takes(1), rows_case = test::scale_takes(2), pairs_case = test::scale_takes(3);
  const std::vector<float> x = small_floats(4352 * 1024);
  const ref::Shape xs = {4352, 1024};
  const ref::Shape xst = ref::contiguous_strides(xs, 4);
  ref::Shape rshape;
  if (test::scale_takes(0)) {
    check_fresh_and_reused({"repeat by 2", "repeat", [&] { return tessera::Plan::repeat(xs, {}, 4, 2, 1); },
                            [&] { return tessera::repeat(x.data(), xs, {}, 4, 2, 1); },
                            ref::repeat(x.data(), xs, xst, 4, {2}, 1, &rshape)});
  }

  // Per-element counts along the last axis: 1 and 3 alternately (1024 x 4352 -> 1024 x 8704).
  if (counts_case) {
    const ref::Shape ys = {1024, 4352};
    std::vector<int64_t> counts(4352);
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = i % 2 == 0 ? 1 : 3;
    check_fresh_and_reused({"repeat by counts", "segments", [&] { return tessera::Plan::repeat(ys, {}, 4, counts, 1); },
                            [&] { return tessera::repeat(x.data(), ys, {}, 4, counts, 1); },
                            ref::repeat(x.data(), ys, ref::contiguous_strides(ys, 4), 4, counts, 1, &rshape)});
  }

  // The reductions (the allocator does not re-plan them; their outputs come from the same
  // blocks): sum_to_shape of two rows of 8912896 floats to one (lanes), and the gradient of a
  // repeat by 2 along the last axis (interleaved pairs): each 34 MiB.
  if (!rows_case && !pairs_case) return;
  const int64_t n = 8912896;
  const std::vector<float> g = small_floats(2 * n);
  std::vector<unsigned char> rows(static_cast<std::size_t>(n) * 4), pairs(static_cast<std::size_t>(n) * 4);
  for (int64_t i = 0; i < n; ++i) {
    const float r = g[static_cast<std::size_t>(i)] + g[static_cast<std::size_t>(n + i)];
    const float p = g[static_cast<std::size_t>(2 * i)] + g[static_cast<std::size_t>(2 * i + 1)];
    std::memcpy(rows.data() + i * 4, &r, 4);
    std::memcpy(pairs.data() + i * 4, &p, 4);
  }
  using tessera::DType;
  if (rows_case) {
    check_fresh_and_reused({"sum_to_shape", "reduce.lanes",
                            [&] { return tessera::Plan::sum_to_shape({2, n}, {}, DType::float32, {1, n}); },
                            [&] { return tessera::sum_to_shape(g.data(), {2, n}, {}, DType::float32, {1, n}); },
                            std::move(rows)});
  }
  if (pairs_case) {
    check_fresh_and_reused(
        {"repeat_backward by 2", "reduce.interleaved",
         [&] { return tessera::Plan::repeat_backward({4352, 4096}, {}, DType::float32, {4352, 2048}, 2, 1); },
         [&] { return tessera::repeat_backward(g.data(), {4352, 4096}, {}, DType::float32, {4352, 2048}, 2, 1); },
         std::move(pairs)});
  }
}

TEST_CASE("a kept block is reused only by an output that fills at least 4/5 of it") {
  const unsigned char byte = 7;
  const int64_t shape[1] = {1};
  auto alloc = [&](int64_t n) {
    void* data = nullptr;
    std::size_t bytes = 0;
    int out_ndim = 0;
    int64_t out_shape[TESSERA_MAX_NDIM];
    REQUIRE(tessera_tile_alloc(&byte, 1, shape, nullptr, 1, 1, &n, &data, &bytes, &out_ndim, out_shape) ==
            TESSERA_OK);
    REQUIRE(bytes == static_cast<std::size_t>(n));
    const auto* p = static_cast<const unsigned char*>(data);
    CHECK(p[0] == byte);
    CHECK(p[n / 2] == byte);
    CHECK(p[n - 1] == byte);
    return data;
  };
  const int64_t mib = int64_t{1} << 20;
  void* big = alloc(60 * mib);
  tessera_free(big);
  void* small = alloc(40 * mib);  // 40/60 < 4/5: a block of its own (the 60 MiB one stays mapped)
  CHECK(small != big);
  void* again = alloc(50 * mib);  // 50/60 >= 4/5: the kept block
  CHECK(again == big);
  tessera_free(small);
  tessera_free(again);
}

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// The resident set of this process in bytes (/proc/self/statm's second field, in pages).
std::size_t rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  REQUIRE(f != nullptr);
  unsigned long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  REQUIRE(n == 2);
  return static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

long minor_faults() {
  rusage u{};
  REQUIRE(getrusage(RUSAGE_SELF, &u) == 0);
  return u.ru_minflt;
}

// Sets the block cache's bounds for a test and restores them (the cache emptied first, so that no
// earlier test's kept blocks count).
struct CacheBounds {
  std::size_t limit = tessera::block_cache_limit_bytes();
  double age = tessera::block_cache_max_age_seconds();
  CacheBounds(std::size_t new_limit, double new_age) {
    tessera::set_block_cache_limit(0);
    tessera::set_block_cache_limit(new_limit);
    tessera::set_block_cache_max_age(new_age);
  }
  ~CacheBounds() {
    tessera::set_block_cache_limit(0);
    tessera::set_block_cache_limit(limit);
    tessera::set_block_cache_max_age(age);
  }
  CacheBounds(const CacheBounds&) = delete;
  CacheBounds& operator=(const CacheBounds&) = delete;
};

// An allocating tile of `bytes` bytes (a 1-byte fill), every page written.
tessera::Array fill(std::size_t bytes, unsigned char byte = 5) {
  tessera::Array a = tessera::tile(&byte, {1}, {}, 1, {static_cast<int64_t>(bytes)});
  REQUIRE(a.nbytes() == bytes);
  const auto* p = static_cast<const unsigned char*>(a.data());
  CHECK(p[0] == byte);
  CHECK(p[bytes - 1] == byte);
  return a;
}

// Polls the resident set until it is at most `target` bytes or `seconds` have passed; returns it.
std::size_t rss_when_at_most(std::size_t target, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::size_t rss = rss_bytes();
  while (rss > target && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    rss = rss_bytes();
  }
  return rss;
}

// The allowance over the baseline: a few MiB (malloc's arenas, the plans); under AddressSanitizer
// also its shadow of the blocks (1/8 of them), which it keeps.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kRssSlack = 48 * kMiB;
#else
constexpr std::size_t kRssSlack = 6 * kMiB;
#endif

}  // namespace

TEST_CASE("block cache: kept blocks are released on time without another call, and the resident set drops") {
  const CacheBounds bounds(256 * kMiB, 1.0);
  (void)fill(36 * kMiB);  // the executor's threads started, the cache set up
  tessera::set_block_cache_limit(0);
  tessera::set_block_cache_limit(256 * kMiB);
  const std::size_t baseline = rss_bytes();
  // 30 allocating calls of 36-196 MiB (up to four alive at once), as a Dask task's outputs.
  std::size_t peak = 0;
  {
    std::vector<tessera::Array> alive;
    for (int i = 0; i < 30; ++i) {
      alive.push_back(fill((36 + static_cast<std::size_t>(i * 37 % 161)) * kMiB));
      if (alive.size() > 3) alive.erase(alive.begin());
      peak = std::max(peak, rss_bytes());
    }
  }
  const std::size_t after = rss_bytes();
  CAPTURE(baseline / kMiB);
  CAPTURE(peak / kMiB);
  CAPTURE(after / kMiB);
  CHECK(after > baseline + 64 * kMiB);  // blocks kept, resident: the measure sees them
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t settled = rss_when_at_most(baseline + kRssSlack, 15.0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CAPTURE(settled / kMiB);
  CAPTURE(took);
  CHECK(settled <= baseline + kRssSlack);
}

TEST_CASE("block cache: set_block_cache_limit bounds it, shrinking releases at once, 0 disables it") {
  const CacheBounds bounds(256 * kMiB, 60.0);
  (void)fill(36 * kMiB);
  tessera::set_block_cache_limit(0);
  tessera::set_block_cache_limit(256 * kMiB);
  CHECK(tessera::block_cache_limit_bytes() == 256 * kMiB);
  const std::size_t baseline = rss_bytes();
  {
    const tessera::Array a = fill(36 * kMiB), b = fill(36 * kMiB), c = fill(36 * kMiB);
  }
  CHECK(rss_bytes() > baseline + 100 * kMiB);  // three blocks kept (60 s)
  tessera::set_block_cache_limit(80 * kMiB);   // two are within the bound
  CHECK(tessera::block_cache_limit_bytes() == 80 * kMiB);
  std::size_t rss = rss_bytes();
  CHECK(rss > baseline + 64 * kMiB);
  CHECK(rss < baseline + 76 * kMiB + kRssSlack);
  tessera::set_block_cache_limit(0);  // released before the call returns: no polling
  rss = rss_bytes();
  CAPTURE(baseline / kMiB);
  CAPTURE(rss / kMiB);
  CHECK(rss <= baseline + kRssSlack);

  // Disabled: a freed block goes at once, the next call maps a fresh one.
  { const tessera::Array a = fill(40 * kMiB); }
  CHECK(rss_bytes() <= baseline + kRssSlack);
  {
    test::AllocSpy spy;
    const tessera::Array a = fill(40 * kMiB);
    CHECK(spy.seen().large == 1);
  }
  // The bound: 40 MiB blocks past 100 MiB are not kept (two are, the oldest goes first).
  tessera::set_block_cache_limit(100 * kMiB);
  {
    const tessera::Array a = fill(40 * kMiB), b = fill(40 * kMiB), c = fill(40 * kMiB);
  }
  rss = rss_bytes();
  CHECK(rss > baseline + 70 * kMiB);
  CHECK(rss <= baseline + 80 * kMiB + kRssSlack);
}

TEST_CASE("block cache: a reused block takes no page fault (getrusage), a fresh one does") {
  const CacheBounds bounds(256 * kMiB, 60.0);
  const std::size_t bytes = 64 * kMiB;
  (void)fill(bytes);  // kept
  long before = minor_faults();
  { const tessera::Array reused = fill(bytes, 9); }
  const long reused_faults = minor_faults() - before;
  long fresh_faults = 0;
  {
    const test::HoldKeptBlocks hold(bytes);
    before = minor_faults();
    test::AllocSpy spy;
    const tessera::Array fresh = fill(bytes, 9);
    fresh_faults = minor_faults() - before;
    CHECK(spy.seen().large == 1);
  }
  CAPTURE(reused_faults);
  CAPTURE(fresh_faults);
  CHECK(fresh_faults >= 32);   // 64 MiB: one per 2 MiB huge page at best: the counter sees them
  // Fewer than one per 2 MiB of the output (32): a refault of the block, even in huge pages, would
  // take at least 32. What remains is the call's own small allocations (and AddressSanitizer's shadow).
  CHECK(reused_faults < 32);
}

// A plan's prefix sums of per-element counts (from 4 MiB, kPlanCacheMinBytes: lib/prefix.hpp)
// are a mapping of their own (lib/allocator.cpp map_block) also where glibc's malloc would have
// served them from its heap: its mmap threshold rises to the size of the largest mapped chunk
// freed, and heap memory touched before as 4 KiB pages stays in them whatever the huge-page
// advice (`rep_counts`' `out=` ran at 82-101% of the C API's speed in such Python processes).
TEST_CASE("block cache: a plan's prefix sums of 4 MiB or more are a new mapping, whatever malloc did before") {
  const CacheBounds bounds(0, 60.0);  // nothing kept: the plan's block is a new one
  {
    // glibc's mmap threshold raised past the prefix sums' 8 MiB: a mapped chunk of 16 MiB freed.
    void* volatile chunk = std::malloc(std::size_t{16} << 20);
    REQUIRE(chunk != nullptr);
    std::memset(chunk, 1, std::size_t{16} << 20);
    std::free(chunk);
  }
  // 1 Mi counts of 5 and 6 in turn (more than 16 / itemsize: the whole prefix sums, 8 MiB + 8
  // bytes; equal counts would be planned as one scalar count).
  std::vector<int64_t> counts(std::size_t{1} << 20);
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = 5 + static_cast<int64_t>(i % 2);
  const ref::Shape shape = {int64_t{1} << 20};
  test::AllocSpy spy;
  const tessera::Plan plan = tessera::Plan::repeat(shape, {}, 4, counts, 0);
  CAPTURE(plan.describe());
  CHECK(spy.seen().mapped == 1);
  CHECK(spy.seen().large == 0);  // under 32 MiB: not counted as an output's block
}

TEST_CASE("block cache: max age and limit setters check their values") {
  const double age = tessera::block_cache_max_age_seconds();
  CHECK(age >= 0);
  for (double bad : {-1.0, 86400.5, std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(tessera::set_block_cache_max_age(bad), tessera::InvalidArgument);
    CHECK(tessera::block_cache_max_age_seconds() == age);  // unchanged
    CHECK(tessera_set_block_cache_max_age(bad) == TESSERA_INVALID_ARGUMENT);
    CHECK(std::string(tessera_last_error()).find("max age") != std::string::npos);
  }
  CHECK(std::string(tessera_last_error()).find("-inf") != std::string::npos);  // the value, named
  CHECK(tessera_set_block_cache_max_age(2.5) == TESSERA_OK);
  CHECK(tessera::block_cache_max_age_seconds() == 2.5);
  CHECK(tessera_set_block_cache_max_age(age) == TESSERA_OK);
  const std::size_t limit = tessera::block_cache_limit_bytes();
  CHECK(tessera_set_block_cache_limit(12345) == TESSERA_OK);
  CHECK(tessera::block_cache_limit_bytes() == 12345);
  CHECK(tessera_set_block_cache_limit(limit) == TESSERA_OK);
  CHECK(tessera::block_cache_limit_bytes() == limit);
}

namespace {

// In a child of fork(): allocating calls work (one thread: oneTBB's workers are not forked), and
// the child's own kept block expires without another call.
int child_allocates() {
  alarm(60);  // a deadlock kills the child (SIGALRM) instead of hanging the test
  tessera::Options one;
  one.max_threads = 1;
  const unsigned char byte = 3;
  const std::size_t base = rss_bytes();
  for (int i = 0; i < 2; ++i) {
    const tessera::Array a = tessera::tile(&byte, {1}, {}, 1, {int64_t{48} << 20}, one);
    const auto* p = static_cast<const unsigned char*>(a.data());
    if (a.nbytes() != (std::size_t{48} << 20) || p[0] != byte || p[a.nbytes() - 1] != byte) return 2;
  }
  if (rss_bytes() < base + 40 * kMiB) return 3;  // kept
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (rss_bytes() > base + kRssSlack)
    if (std::chrono::steady_clock::now() > deadline)
      return 4;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return 0;
}

}  // namespace

TEST_CASE("block cache: a child of fork() allocates, and its kept blocks expire (the reaper restarts)") {
  const CacheBounds bounds(256 * kMiB, 1.0);
  { const tessera::Array a = fill(36 * kMiB); }  // kept: the parent's reaper sleeps on it
  const std::size_t with_block = rss_bytes();
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) _exit(child_allocates());
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) REQUIRE(errno == EINTR);
  CAPTURE(status);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // The parent's block expires too (its reaper did not stop at fork()).
  // (36 MiB go; AddressSanitizer keeps its 4.5 MiB shadow of them.)
  CHECK(rss_when_at_most(with_block - 24 * kMiB, 15.0) <= with_block - 24 * kMiB);
}
