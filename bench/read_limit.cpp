// The reductions' `read` limit for the Python benchmarks (bench/python_bench.py and bench/sweep.py
// load this module through ctypes): the float32 vector sum of tile_bench's limit/read
// (limit_loops.h), split over `threads` threads as tile_bench splits it — one contiguous piece per
// thread, on 64-byte boundaries, in a oneTBB task arena of that many threads (one per count for the
// process). The caller rotates among tessera_bench_copies() copies of the gradient, the copies
// tessera, numpy and torch rotate among too, so that every one of them reads from DRAM.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "limit_loops.h"

namespace {

constexpr std::size_t kAlign = 64;
constexpr std::size_t kParallelMinBytes = std::size_t{256} << 10;  // as tile_bench: smaller reads run serially

tbb::task_arena& arena(int threads) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<tbb::task_arena>> arenas;
  std::lock_guard<std::mutex> lock(mutex);
  auto& a = arenas[threads];
  if (!a) a = std::make_unique<tbb::task_arena>(threads);
  return *a;
}

}  // namespace

// Reads the `bytes` bytes at src (4-byte aligned) as float32 once, on `threads` threads (>= 1),
// and returns their sum (so that the reads cannot be optimised away).
extern "C" __attribute__((visibility("default"))) double tessera_bench_read(const void* src, std::size_t bytes,
                                                                             int threads) {
  const auto* p = static_cast<const unsigned char*>(src);
  const std::size_t n = bytes < kParallelMinBytes ? 1 : static_cast<std::size_t>(std::max(threads, 1));
  const auto begin = [&](std::size_t k) { return k >= n ? bytes : bytes / n * k / kAlign * kAlign; };
  std::vector<double> sums(n, 0.0);
  const auto piece = [&](std::size_t k) {
    sums[k] = tessera::bench::sum_floats(reinterpret_cast<const float*>(p + begin(k)), (begin(k + 1) - begin(k)) / 4);
  };
  if (n == 1) {
    piece(0);
  } else {
    arena(threads).execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<std::size_t>(0, n, 1),
          [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t k = r.begin(); k < r.end(); ++k) piece(k);
          },
          tbb::static_partitioner());
    });
  }
  double total = 0;
  for (double s : sums) total += s;
  return total;
}

// The last-level cache's size in bytes (last_level_cache_bytes(), limit_loops.h: sysfs), or 0 after
// printing why it cannot be read to stderr (the caller stops).
extern "C" __attribute__((visibility("default"))) std::size_t tessera_bench_llc_bytes() {
  try {
    return tessera::bench::last_level_cache_bytes();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera_bench_llc_bytes: %s\n", e.what());
    return 0;
  }
}

// How many copies of a `bytes`-byte gradient to rotate among (rotation_copies(), limit_loops.h).
extern "C" __attribute__((visibility("default"))) std::size_t tessera_bench_copies(std::size_t bytes,
                                                                                  std::size_t llc_bytes) {
  return tessera::bench::rotation_copies(bytes, llc_bytes);
}
