// What the mutation run (tests/mutants) found no other test asserting:
//
//  - a reduction's max_threads: a plan with max_threads = 1 runs on the calling thread only, even
//    in an arena of 4 where the same plan with the default max_threads is joined by workers (each
//    kind of parallel split: over outputs, over one output's replicas, over segments);
//  - the allocating calls' re-plan for fresh pages (docs/threads.md, lib/planner.hpp plan_for_fresh_output):
//    an allocating call of 32 MiB or more whose block is fresh runs its plan's ordinary-store path
//    (with automatic streaming, as a fresh block is written fastest), and into a kept block the
//    plan's own streaming path. Seen through the executed-path counters (-Dpath_counters=true, as
//    every test build of tests/run has); without them the test case says it cannot run.
#include <doctest/doctest.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "alloc_spy.hpp"
#if TESSERA_PATH_COUNTERS
#include "kernels/path_counters.hpp"  // lib/, on the include path with -Dpath_counters=true
#endif

namespace {

// Counts the worker threads that join an arena (the calling thread is not one).
class WorkerCount : public tbb::task_scheduler_observer {
 public:
  explicit WorkerCount(tbb::task_arena& arena) : tbb::task_scheduler_observer(arena) { observe(true); }
  ~WorkerCount() override { observe(false); }
  void on_scheduler_entry(bool is_worker) override {
    if (is_worker) workers.fetch_add(1, std::memory_order_relaxed);
  }
  std::atomic<int> workers{0};
};

struct ReduceCase {
  const char* what;
  const char* path;  // the plan's kernel path
  std::function<tessera::Plan(const tessera::Options&)> plan;
  tessera::Dims shape;  // the gradient's (float32, C-contiguous)
};

// Each gradient is 4 MiB of float32 (past the executor's 512 KiB below which it never splits).
std::vector<ReduceCase> cases() {
  const std::vector<int64_t> counts = [] {
    std::vector<int64_t> c(1024);
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<int64_t>(i % 3);  // 1023 in all
    return c;
  }();
  return {
      {"over outputs: (1024, 1024) summed to (1024, 1)", "reduce.periodic",
       [](const tessera::Options& o) {
         return tessera::Plan::sum_to_shape({1024, 1024}, {}, tessera::DType::float32, {1024, 1}, o);
       },
       {1024, 1024}},
      {"over one output's replicas: (4096, 256) summed to (1, 256)", "reduce.lanes",
       [](const tessera::Options& o) {
         return tessera::Plan::sum_to_shape({4096, 256}, {}, tessera::DType::float32, {1, 256}, o);
       },
       {4096, 256}},
      {"over segments: repeat_backward of (1024, 1024) by counts 0, 1, 2, ... along axis 0", "reduce.segments",
       [counts](const tessera::Options& o) {
         return tessera::Plan::repeat_backward({1023, 1024}, {}, tessera::DType::float32, {1024, 1024}, counts, 0, o);
       },
       {1023, 1024}},
  };
}

// Worker entries into an arena of 4 over `calls` executions of the case's plan with max_threads mt
// (and a pause after them, for a worker that was asked for but late to join).
int workers_joining(const ReduceCase& c, int mt, int calls) {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  arena.initialize();
  tessera::Options o;
  o.max_threads = mt;
  const tessera::Plan plan = c.plan(o);
  REQUIRE(std::string(plan.kernel_path()).rfind(c.path, 0) == 0);  // the path; the target chooses the kernel
  int64_t n = 1;
  for (int64_t e : c.shape) n *= e;
  std::vector<float> grad(static_cast<std::size_t>(n), 1.0f);
  std::vector<float> out(plan.nbytes() / sizeof(float));
  WorkerCount count(arena);
  for (int k = 0; k < calls; ++k) {
    arena.execute([&] { plan.execute(grad.data(), out.data(), plan.nbytes()); });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return count.workers.load();
}

}  // namespace

TEST_CASE("a reduction with max_threads = 1 runs on the calling thread only, in an arena of 4") {
  for (const ReduceCase& c : cases()) {
    CAPTURE(c.what);
    // The arena's workers do join the default plan's calls (so this setup can see them) ... TBB
    // can take a few hundred calls to move its workers into a new arena after other arenas (the
    // suite's 8-thread ones) held them, and longer on a loaded machine: retried for up to 20 s.
    int joined = 0, calls = 0;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (; joined == 0 && std::chrono::steady_clock::now() < give_up; calls += 10) joined = workers_joining(c, 0, 10);
    CHECK_MESSAGE(joined > 0, "no worker joined a default (max_threads 0) call: the check below would see nothing");
    // ... and none joins the calls of the same plan with max_threads = 1: given as many calls as
    // the workers needed above to join (a plan that ignored max_threads would have them join).
    CHECK(workers_joining(c, 1, std::max(20, calls)) == 0);
  }
}

#if TESSERA_PATH_COUNTERS
namespace {

// The executor paths whose counters moved since the last reset, on any Highway target.
std::map<std::string, uint64_t> executed_paths() {
  namespace td = tessera::detail;
  std::map<std::string, uint64_t> ran;
  for (int path = 0; path < td::kPathCount; ++path) {
    uint64_t n = 0;
    for (int slot = 0; slot < td::kExecTargetSlots - 1; ++slot) n += td::executed_path_count(int64_t{1} << slot, path);
    if (n > 0) ran[td::kPathInfo[path].name] = n;
  }
  return ran;
}

std::string names(const std::map<std::string, uint64_t>& ran) {
  std::string s;
  for (const auto& [name, n] : ran) s += (s.empty() ? "" : ", ") + name + " x" + std::to_string(n);
  return s.empty() ? "nothing" : s;
}

}  // namespace

TEST_CASE("an allocating call runs the ordinary-store path into a fresh block, the plan's streaming path into a kept one") {
  struct Case {
    const char* family;
    tessera::Dims shape;
    std::size_t itemsize;
    tessera::Dims reps;
  };
  // Outputs of k x 34 MiB: past kHugeMinBytes (32 MiB, where a block is fresh) and the automatic
  // streaming threshold (24 MiB where L3 is 32 MiB, 8 MiB on a Xeon with 2 MiB of L2: k = 1; 72
  // MiB where an AMD L3 is 96 MiB: k = 3); the block cache's limit raised to keep such a block if
  // it is lower.
  constexpr int64_t kUnit = 35651584;
  const int64_t k = std::max<int64_t>(1, (tessera::streaming_threshold_bytes() + kUnit - 1) / kUnit);
  const std::size_t limit = tessera::block_cache_limit_bytes();
  struct RestoreLimit {
    std::size_t bytes;
    ~RestoreLimit() { tessera::set_block_cache_limit(bytes); }
  } restore{limit};
  const auto room = static_cast<std::size_t>(2 * k * kUnit);
  if (limit < room) tessera::set_block_cache_limit(room);
  for (const Case& c : {Case{"copy", {kUnit * k}, 1, {1}}, Case{"fill", {557056 * k, 1}, 4, {1, 16}},
                        Case{"pattern", {4352 * k, 4}, 4, {1, 512}}}) {
    CAPTURE(c.family);
    int64_t n = 1;
    for (int64_t e : c.shape) n *= e;
    std::vector<unsigned char> in(static_cast<std::size_t>(n) * c.itemsize);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
    const tessera::Plan plan(c.shape, {}, c.itemsize, c.reps);  // automatic streaming: a caller's buffer
    const std::string planned = plan.kernel_path();
    REQUIRE(planned.rfind(c.family, 0) == 0);
    REQUIRE(planned.find(".nt") != std::string::npos);  // streams (else this case would tell nothing)
    // The same rows with ordinary stores: the streamed path's kernel and variant ("copy.nt.direct"
    // -> "copy"); the fill's rows are one cache line each (16 x 4 bytes): fill.4.lines.
    const std::string plain =
        planned.substr(0, planned.find(".nt")) + (std::string(c.family) == "fill" ? ".lines" : "");
    REQUIRE(plan.nbytes() == static_cast<std::size_t>(kUnit * k));
    std::vector<unsigned char> expected(plan.nbytes());
    plan.execute(in.data(), expected.data(), expected.size());
    {
      test::HoldKeptBlocks hold(plan.nbytes());  // the next allocating call of this size gets a fresh block
      tessera::detail::reset_executed_path_counts();
      const tessera::Array fresh = tessera::tile(in.data(), c.shape, {}, c.itemsize, c.reps);
      const auto ran = executed_paths();
      CHECK_MESSAGE(ran.size() == 1, "ran " << names(ran));
      CHECK_MESSAGE(ran.count(plain) == 1, "a fresh block: ran " << names(ran) << ", not " << plain);
      CHECK(std::memcmp(fresh.data(), expected.data(), expected.size()) == 0);
    }
    // The blocks are kept now: the next call reuses one, with the plan's own (streaming) path.
    tessera::detail::reset_executed_path_counts();
    const tessera::Array kept = tessera::tile(in.data(), c.shape, {}, c.itemsize, c.reps);
    const auto ran = executed_paths();
    CHECK_MESSAGE(ran.size() == 1, "ran " << names(ran));
    CHECK_MESSAGE(ran.count(planned) == 1, "a kept block: ran " << names(ran) << ", not " << planned);
    CHECK(std::memcmp(kept.data(), expected.data(), expected.size()) == 0);
  }
}
#else
TEST_CASE("an allocating call runs the ordinary-store path into a fresh block, the plan's streaming path into a kept one") {
  MESSAGE("executed-path counters are off in this build (configure with -Dpath_counters=true, as tests/run's builds "
          "are): which path an allocating call ran cannot be seen, so this test case checks nothing");
}
#endif
