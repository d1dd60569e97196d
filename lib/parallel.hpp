// How the executors (executor.cpp, reduce_executor.cpp), and the planner's passes over per-element
// counts (operations.cpp), split work over TBB. Internal.
#ifndef TESSERA_LIB_PARALLEL_HPP
#define TESSERA_LIB_PARALLEL_HPP

#include <cstdint>
#include <functional>

namespace tessera::detail {

/// Below this many output bytes (a reduction: input bytes) one thread finishes before a task could
/// be woken: no TBB call at all.
inline constexpr int64_t kParallelMinBytes = 512 * 1024;
/// Smallest chunk handed to a task, and how many chunks per thread (for load balance).
inline constexpr int64_t kMinChunkBytes = 128 * 1024;
inline constexpr int64_t kChunksPerThread = 4;

/// Below this many bytes of work, the process's first call that could use more than one thread
/// runs on the calling thread alone. The first parallel call of a process pays for starting
/// oneTBB's workers: 0.4-0.6 ms on a KVM guest (2 vCPUs, 2026-11-28; a call's own enqueue of an
/// empty task takes as long: oneTBB creates its worker threads synchronously), where one thread
/// writes a fresh 1 MiB output in ~0.5 ms and a fresh 4 MiB one in ~0.6, and at 16 MiB one and two
/// threads took the same time in a fresh process. A process that makes one call (a short script, a
/// fresh Dask worker's task) does not start threads it cannot use; the next call starts them.
inline constexpr int64_t kColdParallelMinBytes = int64_t{16} << 20;

/// Below this many bytes, the process's first call that could use threads runs on the calling
/// thread alone when it writes fresh pages (an allocating call's new block). A fresh process's
/// first 64 MiB tessera.tile (a new output) ran below numpy.tile's speed after it in 4-11 of 100
/// processes with two threads touching the pages first (0.12-0.90x; with the workers started
/// beforehand 3 of 100), in 0-2 of 100 with one thread (0.95-0.99x), the median ratio the same
/// (1.24-1.44 and 1.27-1.28: bench/first_call.py --procs 100, alternating; a KVM guest whose host
/// backs freed pages again on their first touch, 2026-12-05; after idle, still up to 3 of 20 on
/// one thread: the host's bound, docs/performance.md). From 1 GiB two threads wrote fresh pages
/// faster (outer's first call, bench/sweep.py: 7.4-7.7 GB/s against 4.2-4.8 with one; at 256 MiB
/// 4.9 and 4.8).
inline constexpr int64_t kFreshParallelMinBytes = int64_t{256} << 20;

/// The threads a call uses, from `work_bytes` (a copy's output bytes, a reduction's input bytes),
/// its max_threads option (0: no cap), the caller's arena's concurrency, whether it is the
/// process's first call that could use threads, and whether the call writes fresh pages (an
/// allocating call's new block, CopyPlan::fresh_output): 1 below kParallelMinBytes; for the first
/// call, 1 below kColdParallelMinBytes, and into fresh pages below kFreshParallelMinBytes;
/// otherwise the arena's concurrency capped at max_threads. A pure function (the rule; tests check
/// it). Results never depend on the threads: a copy writes the same bytes, a sum adds in an order
/// fixed by its plan.
constexpr int threads_for(int64_t work_bytes, int max_threads, int arena, bool first_call, bool fresh_output = false) {
  if (work_bytes < kParallelMinBytes || arena <= 1) return 1;
  const int threads = max_threads > 0 && max_threads < arena ? max_threads : arena;
  const int64_t serial_below = fresh_output ? kFreshParallelMinBytes : kColdParallelMinBytes;
  if (threads > 1 && first_call && work_bytes < serial_below) return 1;
  return threads;
}

/// threads_for with this process's state: the first call for which threads_for(..., false)
/// exceeds 1 is the first call (and takes its rule); every later call is not. Defined in
/// executor.cpp, used by both executors.
int parallel_threads(int64_t work_bytes, int max_threads, int arena, bool fresh_output = false);

/// The planner's own passes over large inputs (per-element counts): the threads for `work_bytes`
/// bytes read under `max_threads`, by threads_for's rule in the caller's arena (the first-call
/// rule applied while no call has ended it, but not ended by planning). Defined in executor.cpp.
int planning_threads(int64_t work_bytes, int max_threads);

/// Runs body(0), ..., body(parts - 1) over the threads of the caller's arena, each part whole on
/// one thread (a thread may run several; parts > 1: tbb::parallel_for, isolated from the caller's
/// other tasks and its task group's cancellation), or body(0) on the calling thread for parts <= 1.
/// body must not throw. Defined in executor.cpp.
void run_parts(int parts, const std::function<void(int)>& body);

}  // namespace tessera::detail

#endif  // TESSERA_LIB_PARALLEL_HPP
