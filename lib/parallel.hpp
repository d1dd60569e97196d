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

/// The threads a call uses, from `work_bytes` (a copy's output bytes, a reduction's input bytes),
/// its max_threads option (0: no cap), the caller's arena's concurrency and whether it is the
/// process's first call that could use threads: 1 below kParallelMinBytes; 1 below
/// kColdParallelMinBytes for the first call; otherwise the arena's concurrency capped at
/// max_threads. A pure function (the rule; tests check it). Results never depend on the threads:
/// a copy writes the same bytes, a sum adds in an order fixed by its plan.
constexpr int threads_for(int64_t work_bytes, int max_threads, int arena, bool first_call) {
  if (work_bytes < kParallelMinBytes || arena <= 1) return 1;
  const int threads = max_threads > 0 && max_threads < arena ? max_threads : arena;
  if (threads > 1 && first_call && work_bytes < kColdParallelMinBytes) return 1;
  return threads;
}

/// threads_for with this process's state: the first call for which threads_for(..., false)
/// exceeds 1 is the first call (and takes its rule); every later call is not. Defined in
/// executor.cpp, used by both executors.
int parallel_threads(int64_t work_bytes, int max_threads, int arena);

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
