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

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
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

// Runs piece(k, begin, end) for the pieces of `bytes` (one, or one per thread from
// kParallelMinBytes up) in the arena of `threads` threads.
template <class F>
void for_each_piece(std::size_t bytes, int threads, const F& piece) {
  const std::size_t n = bytes < kParallelMinBytes ? 1 : static_cast<std::size_t>(std::max(threads, 1));
  const auto begin = [&](std::size_t k) { return k >= n ? bytes : bytes / n * k / kAlign * kAlign; };
  if (n == 1) return piece(0, std::size_t{0}, bytes);
  arena(threads).execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, n, 1),
        [&](const tbb::blocked_range<std::size_t>& r) {
          for (std::size_t k = r.begin(); k < r.end(); ++k) piece(k, begin(k), begin(k + 1));
        },
        tbb::static_partitioner());
  });
}

// Reads the src_bytes bytes at src once (a byte sum) and writes `bytes` bytes at dst (64-byte
// aligned) by write(dst, bytes), each thread its share of both; returns the sum.
template <class Write>
uint64_t read_and_write(const void* src, std::size_t src_bytes, void* dst, std::size_t bytes, int threads,
                        const Write& write) {
  const auto* in = static_cast<const unsigned char*>(src);
  auto* out = static_cast<unsigned char*>(dst);
  std::vector<uint64_t> sums(static_cast<std::size_t>(std::max(threads, 1)), 0);
  const std::size_t n = bytes < kParallelMinBytes ? 1 : static_cast<std::size_t>(std::max(threads, 1));
  for_each_piece(bytes, threads, [&](std::size_t k, std::size_t begin, std::size_t end) {
    const std::size_t in_begin = src_bytes / n * k, in_end = k + 1 == n ? src_bytes : src_bytes / n * (k + 1);
    sums[k] = tessera::bench::sum_bytes(in + in_begin, in_end - in_begin);
    write(out + begin, end - begin);
  });
  uint64_t total = 0;
  for (uint64_t s : sums) total += s;
  return total;
}

}  // namespace

// Reads the `bytes` bytes at src (4-byte aligned) as float32 once, on `threads` threads (>= 1),
// and returns their sum (so that the reads cannot be optimised away).
extern "C" __attribute__((visibility("default"))) double tessera_bench_read(const void* src, std::size_t bytes,
                                                                             int threads) {
  const auto* p = static_cast<const unsigned char*>(src);
  std::vector<double> sums(static_cast<std::size_t>(std::max(threads, 1)), 0.0);
  for_each_piece(bytes, threads, [&](std::size_t k, std::size_t begin, std::size_t end) {
    sums[k] = tessera::bench::sum_floats(reinterpret_cast<const float*>(p + begin), (end - begin) / 4);
  });
  double total = 0;
  for (double s : sums) total += s;
  return total;
}

// tile_bench's `store` limit (bench/sweep.py): writes `bytes` bytes at dst (64-byte aligned) with
// ordinary stores, on `threads` threads.
extern "C" __attribute__((visibility("default"))) void tessera_bench_store(void* dst, std::size_t bytes, int threads) {
  auto* p = static_cast<unsigned char*>(dst);
  for_each_piece(bytes, threads, [&](std::size_t, std::size_t begin, std::size_t end) {
    tessera::bench::store_fill(p + begin, end - begin, 0x5a);
  });
}

// The copy in the caches (bench/sweep.py's `memcpy`, beside `store` below the last-level cache):
// `bytes` bytes from src to dst by memcpy, each thread its share: every byte read once and written
// once, where `store` only writes.
extern "C" __attribute__((visibility("default"))) void tessera_bench_memcpy(const void* src, void* dst,
                                                                          std::size_t bytes, int threads) {
  const auto* in = static_cast<const unsigned char*>(src);
  auto* out = static_cast<unsigned char*>(dst);
  for_each_piece(bytes, threads, [&](std::size_t, std::size_t begin, std::size_t end) {
    std::memcpy(out + begin, in + begin, end - begin);
  });
}

// tile_bench's `stream` limit (bench/sweep.py): reads the src_bytes bytes at src once (a byte sum)
// and writes `bytes` bytes at dst (64-byte aligned) with streaming stores, each thread its share of
// both; returns the sum.
extern "C" __attribute__((visibility("default"))) uint64_t tessera_bench_stream(const void* src, std::size_t src_bytes,
                                                                               void* dst, std::size_t bytes,
                                                                               int threads) {
  return read_and_write(src, src_bytes, dst, bytes, threads,
                        [](void* d, std::size_t b) { tessera::bench::stream_fill(d, b, 0x5a); });
}

// The input's read and the output's ordinary stores in one pass (bench/sweep.py's `read_store`,
// beside `store` below the last-level cache): `stream`'s bytes with `store`'s stores. Reads the
// src_bytes bytes at src once (a byte sum) and writes `bytes` bytes at dst (64-byte aligned), each
// thread its share of both; returns the sum. What a copy in the caches moves at least: `store` only
// writes, and a tile's input must also be read.
extern "C" __attribute__((visibility("default"))) uint64_t tessera_bench_read_store(const void* src,
                                                                                   std::size_t src_bytes, void* dst,
                                                                                   std::size_t bytes, int threads) {
  return read_and_write(src, src_bytes, dst, bytes, threads,
                        [](void* d, std::size_t b) { tessera::bench::store_fill(d, b, 0x5a); });
}

// tile_bench's `fresh_thp` limit (bench/sweep.py): memset of `bytes` bytes of a fresh 2 MiB aligned
// anonymous mapping advised MADV_HUGEPAGE, on `threads` threads, then munmap. Returns 0, or -1 if
// mmap or madvise failed.
extern "C" __attribute__((visibility("default"))) int tessera_bench_fresh_thp(std::size_t bytes, int threads) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::size_t length = std::max<std::size_t>(bytes, 1) + kHugePage;
  void* map = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return -1;
  auto* p = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(map) + kHugePage - 1) /
                                             kHugePage * kHugePage);
  int status = madvise(p, std::max<std::size_t>(bytes, 1), MADV_HUGEPAGE) == 0 ? 0 : -1;
  if (status == 0)
    for_each_piece(bytes, threads, [&](std::size_t, std::size_t begin, std::size_t end) {
      std::memset(p + begin, 0x5a, end - begin);
    });
  std::atomic_signal_fence(std::memory_order_seq_cst);
  munmap(map, length);
  return status;
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
