// Concurrency: one shared plan executed from many threads at once; calls made from inside the
// caller's own tbb::parallel_for (nested parallelism); a call inside a tbb::task_arena of
// concurrency 1 runs on the caller's thread alone — shown by recording which thread first reads
// each page of the source (the pages start PROT_NONE; a SIGSEGV handler notes the reading thread
// and opens the page). Every output here exceeds the executor's parallel threshold (512 KiB).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <set>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "reference.hpp"
#include "touch_recorder.hpp"
#include "util.hpp"
#if TESSERA_PATH_COUNTERS
#include "parallel.hpp"  // lib/, on the include path with -Dpath_counters=true
#endif

namespace {

using test::Shape;

constexpr std::size_t kParallelBytes = 512 * 1024;  // lib/executor.cpp's kParallelMinBytes

// A shared plan with its input and the reference output.
struct Shared {
  const char* name;
  test::View view;
  Shape reps;
  std::unique_ptr<tessera::Plan> plan;
  std::vector<unsigned char> expected;
};

// An input of `shape` with explicit byte `strides` (empty: C-contiguous) in a buffer spanning
// exactly the addressed bytes.
test::View strided_view(const Shape& shape, Shape strides, std::size_t itemsize, uint64_t seed) {
  if (strides.empty()) strides = ref::contiguous_strides(shape, itemsize);
  int64_t low = 0, high = static_cast<int64_t>(itemsize);
  for (std::size_t k = 0; k < shape.size(); ++k) (strides[k] < 0 ? low : high) += (shape[k] - 1) * strides[k];
  test::View v;
  v.shape = shape;
  v.strides = strides;
  v.itemsize = itemsize;
  v.origin = static_cast<std::size_t>(-low);
  v.storage.resize(static_cast<std::size_t>(high - low));
  test::fill_pattern(v.storage.data(), v.storage.size(), seed);
  return v;
}

// Large outputs, one per kind of innermost kernel.
std::vector<Shared> shared_plans() {
  struct Spec {
    const char* name;
    Shape shape, strides;
    std::size_t itemsize;
    Shape reps;
    const char* path;
  };
  const Spec specs[] = {
      // The transpose of a (29, 37) array with its columns reversed.
      {"gather: transposed, reversed", {37, 29}, {-8, 37 * 8}, 8, {19, 23}, "gather.8.blocked"},
      {"shuffled pattern", {3}, {}, 4, {87383}, "pattern.shuffle"},
      {"long pattern, rows", {3, 97}, {}, 4, {1, 901}, "pattern.long"},
      {"fill", {1}, {}, 8, {131077}, "fill.8"},
      {"copy, itemsize 3", {300007}, {}, 3, {1}, "copy"},
  };
  std::vector<Shared> out;
  for (const Spec& s : specs) {
    Shared sh{s.name, strided_view(s.shape, s.strides, s.itemsize, out.size() + 5), s.reps, nullptr, {}};
    sh.plan = std::make_unique<tessera::Plan>(sh.view.shape, sh.view.strides, sh.view.itemsize, sh.reps);
    sh.expected = ref::tile(sh.view.data(), sh.view.shape, sh.view.strides, sh.view.itemsize, sh.reps);
    REQUIRE(std::string(sh.plan->kernel_path()) == std::string(s.path));
    REQUIRE(sh.plan->nbytes() == sh.expected.size());
    REQUIRE(sh.plan->nbytes() > kParallelBytes);
    out.push_back(std::move(sh));
  }
  return out;
}

// Executes `s` into a fresh guarded buffer at `misalign`; "" or the first problem.
std::string execute_and_check(const Shared& s, std::size_t misalign) {
  test::GuardedBuffer out(s.plan->nbytes(), misalign);
  out.prefill_complement(s.expected);
  try {
    s.plan->execute(s.view.data(), out.data(), out.size());
  } catch (const std::exception& e) {
    return std::string(s.name) + ": threw " + e.what();
  }
  const std::string err = out.check(s.expected, s.view.itemsize);
  return err.empty() ? err : std::string(s.name) + ", misalign " + std::to_string(misalign) + ": " + err;
}

using test::this_thread_tid;

// Source bytes on pages that start PROT_NONE (test::TouchRecorder), filled with a pattern.
test::TouchRecorder pattern_recorder(std::size_t pages) {
  std::vector<unsigned char> v(pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  test::fill_pattern(v.data(), v.size(), 0x70C4);
  return test::TouchRecorder(std::move(v));
}

}  // namespace

TEST_CASE("one plan executed from 8 threads at once, for each kind of kernel") {
  const std::vector<Shared> plans = shared_plans();
  constexpr int kThreads = 8, kRounds = 2;
  std::vector<std::vector<std::string>> errors(kThreads);
  // All threads start together, so that the executions overlap.
  std::mutex m;
  std::condition_variable cv;
  int ready = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      {
        std::unique_lock<std::mutex> lock(m);
        ++ready;
        cv.notify_all();
        cv.wait(lock, [&] { return ready == kThreads; });
      }
      for (int round = 0; round < kRounds; ++round)
        for (std::size_t i = 0; i < plans.size(); ++i) {
          // Each thread walks the plans in its own order.
          const Shared& s = plans[(i + static_cast<std::size_t>(t)) % plans.size()];
          errors[t].push_back(execute_and_check(s, static_cast<std::size_t>(t * 8 + round)));
        }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(errors[t].size() == kRounds * plans.size());
    for (const auto& e : errors[t]) CHECK_MESSAGE(e.empty(), "thread " << t << ": " << e);
  }
}

TEST_CASE("a call from inside the caller's own tbb::parallel_for (nested parallelism)") {
  const std::vector<Shared> plans = shared_plans();
  constexpr std::size_t kCalls = 20;
  std::vector<std::string> errors(kCalls);
  tbb::parallel_for(std::size_t{0}, kCalls, [&](std::size_t i) {
    // Each outer iteration runs a large plan, which itself splits into tasks in the same arena.
    errors[i] = execute_and_check(plans[i % plans.size()], i);
  });
  for (std::size_t i = 0; i < kCalls; ++i) CHECK_MESSAGE(errors[i].empty(), "call " << i << ": " << errors[i]);

  // Two levels: a parallel_for inside a task_group, each calling the C API.
  tbb::task_group group;
  std::vector<std::string> inner(kCalls);
  for (std::size_t half = 0; half < 2; ++half)
    group.run([&, half] {
      tbb::parallel_for(half * kCalls / 2, (half + 1) * kCalls / 2, [&](std::size_t i) {
        const Shared& s = plans[(i + 1) % plans.size()];
        test::GuardedBuffer out(s.plan->nbytes(), i);
        out.prefill_complement(s.expected);
        const int ndim = static_cast<int>(s.view.shape.size()), nreps = static_cast<int>(s.reps.size());
        const tessera_status st = tessera_tile(s.view.data(), ndim, s.view.shape.data(), s.view.strides.data(),
                                               s.view.itemsize, nreps, s.reps.data(), out.data(), out.size());
        inner[i] = st != TESSERA_OK ? std::string("status ") + tessera_last_error() : out.check(s.expected, s.view.itemsize);
        if (!inner[i].empty()) inner[i] = std::string(s.name) + ": " + inner[i];
      });
    });
  group.wait();
  for (std::size_t i = 0; i < kCalls; ++i) CHECK_MESSAGE(inner[i].empty(), "task_group call " << i << ": " << inner[i]);
}

TEST_CASE("the touch recorder sees which thread reads the source (control)") {
  const test::TouchRecorder& rec = pattern_recorder(2);
  long reader = 0;
  std::thread t([&] {
    reader = this_thread_tid();
    (void)*static_cast<const volatile unsigned char*>(rec.data() + rec.bytes() - 1);
  });
  t.join();
  CHECK(reader != this_thread_tid());
  CHECK(rec.toucher(1) == reader);  // the other thread's read was recorded ...
  CHECK(rec.toucher(0) == 0);       // ... and only the page it read
}

TEST_CASE("inside a task_arena of concurrency 1, a large call runs serially on the caller's thread") {
  // 8 MiB of source copied to 8 MiB of output: 16 times the parallel threshold, so in the default
  // arena the executor splits it into chunks that worker threads take (with an executor that
  // ignored the caller's arena, workers first-read some of these pages in almost every run).
  const test::TouchRecorder& rec = pattern_recorder(2048);
  const std::size_t n = rec.bytes();
  REQUIRE(n >= 16 * kParallelBytes);
  tessera::Options o;  // ordinary stores: the plain copy whatever this machine's streaming line
  o.nontemporal = tessera::NonTemporal::never;
  const tessera::Plan plan({static_cast<int64_t>(n)}, {}, 1, {1}, o);
  REQUIRE(std::string(plan.kernel_path()) == "copy");
  std::vector<unsigned char> out(n, 0);

  const long caller = this_thread_tid();
  long in_arena = 0;
  tbb::task_arena arena(1);
  arena.execute([&] {
    in_arena = this_thread_tid();
    plan.execute(rec.data(), out.data(), out.size());
  });
  CHECK(in_arena == caller);  // task_arena::execute ran the functor on this thread
  CHECK(out == rec.contents());

  std::size_t unread = 0, by_others = 0;
  for (std::size_t p = 0; p < rec.pages(); ++p) {
    if (rec.toucher(p) == 0)
      ++unread;
    else if (rec.toucher(p) != caller)
      ++by_others;
  }
  CHECK(unread == 0);  // every page was read, and each first read was recorded
  CHECK_MESSAGE(by_others == 0, by_others << " of " << rec.pages() << " source pages were first read by another thread");
}

// Regression: the executor's tbb::parallel_for once ran in a task group context bound to the
// caller's. When the caller's group was cancelled (say, a sibling iteration threw), a large call
// returned success without having written its output. It now runs in an isolated context.
TEST_CASE("a call from a cancelled task group still writes its whole output") {
  const std::vector<Shared> plans = shared_plans();
  const Shared& s = plans[1];  // short pattern
  test::GuardedBuffer out(s.plan->nbytes());
  out.prefill_complement(s.expected);
  tessera_status status = TESSERA_INTERNAL;
  tbb::task_group_context context;
  tbb::parallel_for(
      0, 1,
      [&](int) {
        context.cancel_group_execution();  // as TBB does when another iteration throws
        const int ndim = static_cast<int>(s.view.shape.size()), nreps = static_cast<int>(s.reps.size());
        status = tessera_tile(s.view.data(), ndim, s.view.shape.data(), s.view.strides.data(), s.view.itemsize, nreps,
                              s.reps.data(), out.data(), out.size());
      },
      context);
  // The call runs in an isolated context: it completes and reports success.
  CHECK(status == TESSERA_OK);
  CHECK(out.check(s.expected, s.view.itemsize) == "");
}

// Options::max_threads / tessera_options.max_threads: the executor cuts the output into at most
// max_threads chunks, so at most that many threads read the source — whatever the arena allows.
namespace {

// Runs `call` on an 8 MiB copy plan with max_threads `cap` (through `api`) and returns the set of
// threads that first read the source pages; checks the output and that every page was read.
std::set<long> readers_of_copy(int cap, bool c_api, const std::function<void(const std::function<void()>&)>& run_in) {
  const test::TouchRecorder& rec = pattern_recorder(2048);
  const std::size_t n = rec.bytes();
  REQUIRE(n >= 16 * kParallelBytes);
  std::vector<unsigned char> out(n, 0);
  tessera::Options o;
  o.max_threads = cap;
  o.nontemporal = tessera::NonTemporal::never;  // the plain copy whatever this machine's streaming line
  const tessera::Plan plan({static_cast<int64_t>(n)}, {}, 1, {1}, o);
  REQUIRE(std::string(plan.kernel_path()) == "copy");
  tessera_options co;
  tessera_options_init(&co);
  co.max_threads = cap;
  co.nontemporal = TESSERA_NONTEMPORAL_NEVER;
  const int64_t shape[1] = {static_cast<int64_t>(n)}, reps[1] = {1};
  run_in([&] {
    if (c_api) {
      REQUIRE(tessera_tile_ex(rec.data(), 1, shape, nullptr, 1, 1, reps, out.data(), out.size(), &co) == TESSERA_OK);
    } else {
      plan.execute(rec.data(), out.data(), out.size());
    }
  });
  CHECK(out == rec.contents());
  std::set<long> readers;
  for (std::size_t p = 0; p < rec.pages(); ++p) {
    CHECK(rec.toucher(p) != 0);  // every page was read, and each first read was recorded
    readers.insert(rec.toucher(p));
  }
  return readers;
}

}  // namespace

TEST_CASE("max_threads = 1: a large call runs on the calling thread only, in the default arena") {
  const long caller = this_thread_tid();
  for (bool c_api : {false, true}) {
    CAPTURE(c_api);
    const std::set<long> readers = readers_of_copy(1, c_api, [](const std::function<void()>& f) { f(); });
    CHECK(readers == std::set<long>{caller});
  }
}

TEST_CASE("max_threads = N below the arena's concurrency: at most N threads read the source") {
  // An arena of 6 on any machine (global_control lets TBB create the workers it needs).
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 6);
  tbb::task_arena arena(6);
  const auto in_arena = [&](const std::function<void()>& f) { arena.execute(f); };
  for (int cap : {2, 3}) {
    for (bool c_api : {false, true}) {
      CAPTURE(cap);
      CAPTURE(c_api);
      const std::set<long> readers = readers_of_copy(cap, c_api, in_arena);
      CHECK(readers.size() >= 1);
      CHECK(static_cast<int>(readers.size()) <= cap);
    }
  }
}

TEST_CASE("a large call is written by more than one thread (an arena of 4)") {
  // Proof that the executor runs in parallel at all: an explicit arena of 4 (global_control lets
  // TBB create its workers on any machine), the default max_threads, and the threads that first
  // read the source pages recorded. A worker may be slow to join one call, so up to 20 calls;
  // at least one of them must be read by two threads or more.
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  const auto in_arena = [&](const std::function<void()>& f) { arena.execute(f); };
  std::size_t most = 0;
  for (int attempt = 0; attempt < 20 && most < 2; ++attempt) {
    for (bool c_api : {false, true}) {
      CAPTURE(c_api);
      most = std::max(most, readers_of_copy(0, c_api, in_arena).size());
    }
  }
  CHECK(most >= 2);
}

TEST_CASE("repeat: per-element counts read by more than one thread while planning (an arena of 4)") {
  // 2^20 + 37 float32 elements repeated by int64 counts 0-4, and 2^21 + 37 by int32 ones (8 MiB
  // of counts each, past the parallel threshold): the planner scans them in parts over the arena's
  // threads (operations.cpp, compact_prefix_sums), each part's sums then offset by the parts before
  // it. The threads that first read the counts' pages are recorded; up to 20 plans of each, at
  // least one read by two threads or more, and every plan's output is numpy.repeat's. Then, in the
  // same arena, a count of 5 near the end (the whole prefix sums made instead) and a negative one
  // there (the error names it, not an earlier index).
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  test::Rng rng(20261129);
  for (const bool narrow : {false, true}) {
    CAPTURE(narrow);
    const int64_t n = (int64_t{1} << (narrow ? 21 : 20)) + 37;
    Shape counts(static_cast<std::size_t>(n));
    for (auto& c : counts) c = rng.uniform(0, 4);
    std::vector<unsigned char> src(static_cast<std::size_t>(n) * 4);
    test::fill_pattern(src.data(), src.size(), 0xC0 + narrow);
    const auto counts_bytes = [&](const Shape& c) {
      std::vector<unsigned char> b(c.size() * (narrow ? 4 : 8));
      for (std::size_t i = 0; i < c.size(); ++i) {
        if (narrow) {
          const int32_t v = static_cast<int32_t>(c[i]);
          std::memcpy(b.data() + 4 * i, &v, 4);
        } else {
          std::memcpy(b.data() + 8 * i, &c[i], 8);
        }
      }
      return b;
    };
    const auto repeats = [&](const unsigned char* p) {
      return narrow ? tessera::Repeats(reinterpret_cast<const int32_t*>(p), static_cast<std::size_t>(n))
                    : tessera::Repeats(reinterpret_cast<const int64_t*>(p), static_cast<std::size_t>(n));
    };
    // The whole output, and regions of 40 elements around where each block of 512 counts (a part
    // may start at any of them) begins in the output: there a region's start is found from the
    // plan's kept sums, so an offset missing or misplaced at a part's first or last sum shows.
    const auto check_plan = [&](const Shape& c, const unsigned char* p) {
      const tessera::Plan plan = tessera::Plan::repeat({n}, {}, 4, repeats(p), 0);
      Shape out_shape;
      const std::vector<unsigned char> want = ref::repeat(src.data(), {n}, {}, 4, c, 0, &out_shape);
      std::vector<unsigned char> got(want.size(), 0xAB);
      plan.execute(src.data(), got.data(), got.size());
      CHECK(got == want);
      const int64_t total = out_shape[0];
      int64_t at = 0, wrong = 0;  // at: the output index where input element i's copies begin
      for (int64_t i = 0; i < n; at += c[static_cast<std::size_t>(i)], ++i) {
        if (i % 512 != 0 || i == 0) continue;
        const int64_t start = std::max<int64_t>(0, at - 20), extent = std::min<int64_t>(40, total - start);
        std::vector<unsigned char> region(static_cast<std::size_t>(extent) * 4, 0xAB);
        plan.execute_region(src.data(), {start}, {extent}, region.data(), region.size());
        wrong += std::memcmp(region.data(), want.data() + start * 4, region.size()) != 0;
      }
      CHECK(wrong == 0);
    };
    std::size_t most = 0;
    arena.execute([&] {
      for (int attempt = 0; attempt < 20 && most < 2; ++attempt) {
        const test::TouchRecorder rec(counts_bytes(counts));
        check_plan(counts, rec.data());
        most = std::max(most, rec.readers().size());
      }
      Shape five = counts;
      five[static_cast<std::size_t>(n - 1000)] = 5;
      const std::vector<unsigned char> five_bytes = counts_bytes(five);
      check_plan(five, five_bytes.data());
      Shape bad = counts;
      bad[static_cast<std::size_t>(n - 1000)] = -2;
      const std::vector<unsigned char> bad_bytes = counts_bytes(bad);
      const std::string named = "repeats[" + std::to_string(n - 1000) + "] = -2 is negative";
      CHECK_THROWS_WITH_AS(tessera::Plan::repeat({n}, {}, 4, repeats(bad_bytes.data()), 0),
                           doctest::Contains(named.c_str()), tessera::InvalidArgument);
    });
    CHECK(most >= 2);
  }
}

#if TESSERA_PATH_COUNTERS
TEST_CASE("threads_for: serial below 512 KiB, the first call serial below 16 MiB and into fresh pages below 256 MiB, max_threads caps") {
  using tessera::detail::threads_for;
  constexpr int64_t KiB = 1024, MiB = 1024 * KiB;
  // Below the parallel threshold: one thread, first call or not, whatever the arena.
  CHECK(threads_for(512 * KiB - 1, 0, 8, false) == 1);
  CHECK(threads_for(512 * KiB - 1, 0, 8, true) == 1);
  // The process's first call: serial below 16 MiB, the arena from 16 MiB.
  CHECK(threads_for(512 * KiB, 0, 8, true) == 1);
  CHECK(threads_for(16 * MiB - 1, 0, 8, true) == 1);
  CHECK(threads_for(16 * MiB, 0, 8, true) == 8);
  // ... and into fresh pages (an allocating call's new block) below 256 MiB; later calls are not
  // bound by it.
  CHECK(threads_for(16 * MiB, 0, 8, true, true) == 1);
  CHECK(threads_for(256 * MiB - 1, 0, 8, true, true) == 1);
  CHECK(threads_for(256 * MiB, 0, 8, true, true) == 8);
  CHECK(threads_for(int64_t{4} << 30, 0, 8, true, true) == 8);
  CHECK(threads_for(16 * MiB - 1, 0, 8, true, false) == 1);
  CHECK(threads_for(64 * MiB, 0, 8, false, true) == 8);
  CHECK(threads_for(64 * MiB, 3, 8, false, true) == 3);
  // Later calls: the arena, capped by max_threads (0: no cap; a cap at or above the arena's: none).
  CHECK(threads_for(512 * KiB, 0, 8, false) == 8);
  CHECK(threads_for(512 * KiB, 3, 8, false) == 3);
  CHECK(threads_for(512 * KiB, 8, 8, false) == 8);
  CHECK(threads_for(512 * KiB, 64, 8, false) == 8);
  CHECK(threads_for(64 * MiB, 2, 8, true) == 2);
  // max_threads 1 or an arena of one: serial always.
  CHECK(threads_for(64 * MiB, 1, 8, false) == 1);
  CHECK(threads_for(64 * MiB, 0, 1, false) == 1);
}
#endif
