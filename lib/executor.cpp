// The executor: splits the C-contiguous output into contiguous chunks and runs each through the
// dispatched kernels (kernels/dispatch.cpp). Large outputs use tbb::parallel_for in the caller's
// task arena; small ones, or an arena of concurrency 1, run serially on the calling thread with no
// task overhead. Nothing here allocates memory proportional to the output.
#include "plan.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

namespace tessera::detail {
namespace {

// Below this many output bytes one thread finishes before a task could be woken.
constexpr int64_t kParallelMinBytes = 512 * 1024;
// Smallest chunk handed to a task, and how many chunks per thread (for load balance).
constexpr int64_t kMinChunkBytes = 128 * 1024;
constexpr int64_t kChunksPerThread = 4;

}  // namespace

void execute(const PlanData& plan, const unsigned char* src, unsigned char* dst) {
  const int64_t total = plan.out_size;
  const int64_t nbytes = static_cast<int64_t>(plan.nbytes);
  if (nbytes < kParallelMinBytes) {  // no TBB call at all for small outputs
    execute_range(plan, src, dst, 0, total);
    return;
  }
  const int threads = tbb::this_task_arena::max_concurrency();
  if (threads <= 1) {
    execute_range(plan, src, dst, 0, total);
    return;
  }
  // Chunk length in elements: a multiple of 64 elements, so every chunk starts on a multiple of
  // 64 bytes of the output and two threads never share a cache line.
  const int64_t isz = static_cast<int64_t>(plan.itemsize);
  int64_t chunk_bytes = nbytes / (threads * kChunksPerThread);
  if (chunk_bytes < kMinChunkBytes) chunk_bytes = kMinChunkBytes;
  const int64_t chunk_elems = chunk_bytes / isz > 0 ? chunk_bytes / isz : 1;
  const int64_t chunk = (chunk_elems + 63) / 64 * 64;
  const int64_t nchunks = (total + chunk - 1) / chunk;
  // An isolated context: a cancellation of the caller's task group must not leave the output
  // half written behind a successful return (the serial path always completes, too).
  tbb::task_group_context context(tbb::task_group_context::isolated);
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, nchunks, 1),
      [&](const tbb::blocked_range<int64_t>& r) {
        const int64_t begin = r.begin() * chunk;
        const int64_t end = r.end() * chunk < total ? r.end() * chunk : total;
        execute_range(plan, src, dst, begin, end);
      },
      tbb::simple_partitioner(), context);
}

}  // namespace tessera::detail
