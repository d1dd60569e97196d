// The executor: splits the C-contiguous output into contiguous chunks and runs each through the
// dispatched kernels (kernels/kernels.hpp); a plan with replicas (CopyPlan::replica_elems) has its
// first replica split, each chunk written to every replica. Large outputs use tbb::parallel_for in
// the caller's task arena; small ones, an arena of concurrency 1, or a plan with max_threads 1, run
// serially on the calling thread with no task overhead. A plan with max_threads N > 1 below the
// arena's concurrency is split into at most N chunks, so at most N threads take part. The process's
// first call that could use threads runs serially below 16 MiB, leaving oneTBB's workers (0.5 ms to
// start) to the next such call (parallel_threads, parallel.hpp). Output regions run serially: the
// planner reduces them (plan_region), the region kernel writes them. The planner's scan of
// per-element counts runs its parts here too (planning_threads, run_parts).
//
// Nothing here allocates memory proportional to the output.
#include "executor.hpp"

#include "error.hpp"
#include "kernels/kernels.hpp"
#include "planner.hpp"
#include "parallel.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace tessera::detail {
namespace {

// Whether the process's first call that could use threads has been made (parallel_threads).
std::atomic<bool> g_first_done{false};

}  // namespace

int parallel_threads(int64_t work_bytes, int max_threads, int arena, bool fresh_output) {
  if (g_first_done.load(std::memory_order_relaxed)) return threads_for(work_bytes, max_threads, arena, false);
  // The first call that could use threads ends the process's first-call rule.
  if (threads_for(work_bytes, max_threads, arena, false) > 1) g_first_done.store(true, std::memory_order_relaxed);
  return threads_for(work_bytes, max_threads, arena, true, fresh_output);
}

int planning_threads(int64_t work_bytes, int max_threads) {
  if (work_bytes < kParallelMinBytes) return 1;  // no TBB call at all
  // The first-call rule read, not ended: the call's execution decides that by its own bytes.
  return threads_for(work_bytes, max_threads, tbb::this_task_arena::max_concurrency(),
                     !g_first_done.load(std::memory_order_relaxed));
}

void run_parts(int parts, const std::function<void(int)>& body) {
  if (parts <= 1) {
    body(0);
    return;
  }
  // Isolated: a caller that plans inside its own task (holding a lock, say) does not take up
  // unrelated tasks of its arena while the parts run; and a cancellation of its task group does
  // not skip parts.
  tbb::this_task_arena::isolate([&] {
    tbb::task_group_context context(tbb::task_group_context::isolated);
    tbb::parallel_for(
        tbb::blocked_range<int>(0, parts, 1),
        [&](const tbb::blocked_range<int>& r) {
          for (int k = r.begin(); k < r.end(); ++k) body(k);
        },
        tbb::simple_partitioner(), context);
  });
}

void execute(const CopyPlan& plan, const unsigned char* src, unsigned char* dst) {
  int64_t total = plan.out_size;
  const int64_t nbytes = static_cast<int64_t>(plan.nbytes);
  // The plan's replicas (CopyPlan::replicas): each range is of the first replica and is written
  // to all `copies` of them.
  int64_t copies = plan.replicas;
  const int64_t replica_end = plan.replica_elems != 0 ? plan.replica_elems : total;  // the first's end
  if (nbytes < kParallelMinBytes) {  // no TBB call at all for small outputs
    execute_range(plan, src, dst, 0, replica_end, false, copies);
    return;
  }
  const int arena = tbb::this_task_arena::max_concurrency();
  const int max_threads = plan.options.max_threads;
  const int threads = parallel_threads(nbytes, max_threads, arena, plan.fresh_output);
  if (threads <= 1) {
    execute_range(plan, src, dst, 0, replica_end, false, copies);
    return;
  }
  // capped: the plan's max_threads allows fewer threads than the arena has, so the output is cut
  // into `threads` chunks (each chunk is written by one thread); otherwise the arena bounds the
  // threads and each gets kChunksPerThread chunks for load balance.
  const bool capped = threads < arena;
  const int64_t pieces = capped ? threads : int64_t{threads} * kChunksPerThread;
  // The chunks split the first replica, each written to all of them — unless it is too short to
  // give every piece 64 elements (the chunks' granule): then the whole output, each chunk
  // writing its own (a short replica's source is read from the cache again).
  if (copies > 1 && replica_end < pieces * 64) copies = 1;
  if (copies > 1) total = replica_end;
  // Chunk length in elements: a multiple of the plan's rows where it asks for whole rows
  // (CopyPlan::chunk_rows_elems) and has a row for every piece, boundaries at k * chunk (two
  // threads may then write different bytes of the line where two rows meet: each range's edge
  // with ordinary stores up to its first vector boundary, the rest of that line streamed where
  // vectors are shorter than a line).
  // Otherwise a multiple of 64 elements (64 * itemsize bytes, whole cache lines), and every
  // boundary at `first` + k * chunk, whose address is a multiple of 64 bytes wherever the output's
  // alignment allows it: then two threads never write the same cache line (in the first replica;
  // in the others where a replica's bytes are whole lines). The first chunk also takes the up to
  // 63 elements before `first`. Rounding up keeps the number of chunks at most `pieces`.
  const int64_t isz = static_cast<int64_t>(plan.itemsize);
  const int64_t rows = plan.chunk_rows_elems;
  const bool by_rows = rows > 0 && total / rows >= pieces;
  const int64_t granule = by_rows ? rows : 64;
  const int64_t line_start = by_rows ? 0 : first_line_start(dst, isz);
  const int64_t first = line_start < total ? line_start : 0;
  int64_t chunk_elems = (total - first + pieces - 1) / pieces;
  if (chunk_elems * isz * copies < kMinChunkBytes) chunk_elems = (kMinChunkBytes + isz * copies - 1) / (isz * copies);
  const int64_t chunk = (chunk_elems + granule - 1) / granule * granule;
  const int64_t nchunks = (total - first + chunk - 1) / chunk;
  const auto boundary = [&](int64_t k) {
    return k == 0 ? int64_t{0} : k == nchunks ? total : first + k * chunk;
  };
  // An isolated context: a cancellation of the caller's task group must not leave the output
  // half written behind a successful return (the serial path always completes, too).
  tbb::task_group_context context(tbb::task_group_context::isolated);
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, nchunks, 1),
      [&](const tbb::blocked_range<int64_t>& r) {
        const int64_t begin = boundary(r.begin()), end = boundary(r.end());
        execute_range(plan, src, dst + begin * isz, begin, end, false, copies);
      },
      tbb::simple_partitioner(), context);
}

void check_buffers(const PlanBase& p, const void* src, const void* dst, std::size_t dst_bytes) {
  if (src == nullptr && p.input_size > 0)
    throw InvalidArgument("tessera: src is null but the input has " + std::to_string(p.input_size) + " elements");
  if (dst == nullptr && p.nbytes > 0)
    throw InvalidArgument("tessera: dst is null but the output has " + std::to_string(p.nbytes) + " bytes");
  if (dst_bytes < p.nbytes)
    throw BufferTooSmall("tessera: dst_bytes = " + std::to_string(dst_bytes) + " but the output needs " +
                         std::to_string(p.nbytes) + " bytes");
}

void execute_checked(const CopyPlan& p, const void* src, void* dst, std::size_t dst_bytes) {
  check_buffers(p, src, dst, dst_bytes);
  if (p.out_size == 0) return;
  execute(p, static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst));
}

void execute_checked(const PlanData& p, const void* src, void* dst, std::size_t dst_bytes) {
  std::visit([&](const auto& plan) { execute_checked(plan, src, dst, dst_bytes); }, p.plan);
}

void execute_region_checked(const PlanData& data, const void* src, const Dims& start, const Dims& extent, void* dst,
                            std::size_t dst_bytes) {
  std::visit(Overloaded{[&](const CopyPlan& p) { execute_region_checked(p, src, start, extent, dst, dst_bytes); },
                        [](const ReducePlan& r) {
                          invalid("execute_region is not available for a reduction's plan (" +
                                  std::string(reduce_path_name(r)) + "); execute it whole");
                        }},
             data.plan);
}

void execute_region_checked(const CopyPlan& p, const void* src, const Dims& start, const Dims& extent, void* dst,
                            std::size_t dst_bytes) {
  const int n = p.out_shape.size();
  if (start.size() != n || extent.size() != n)
    throw InvalidArgument("tessera: region start has " + std::to_string(start.size()) + " values and extent " +
                          std::to_string(extent.size()) + " but the output has " + std::to_string(n) +
                          " axes (give one per output axis)");
  bool whole = true, empty = false;
  for (int i = 0; i < n; ++i) {
    const std::string axis = "region axis " + std::to_string(i) + ": ";
    if (start[i] < 0) throw InvalidArgument("tessera: " + axis + "start " + std::to_string(start[i]) + " is negative");
    if (extent[i] < 0)
      throw InvalidArgument("tessera: " + axis + "extent " + std::to_string(extent[i]) + " is negative");
    if (start[i] > p.out_shape[i] - extent[i])  // no overflow: both sides are in [-INT64_MAX, INT64_MAX]
      throw InvalidArgument("tessera: " + axis + "start " + std::to_string(start[i]) + " + extent " +
                            std::to_string(extent[i]) + " exceeds the output's extent " +
                            std::to_string(p.out_shape[i]));
    whole = whole && extent[i] == p.out_shape[i];
    empty = empty || extent[i] == 0;
  }
  int64_t count = empty ? 0 : 1;
  for (int i = 0; i < n && !empty; ++i) count *= extent[i];  // at most the output's count, which fits int64
  const std::size_t bytes = static_cast<std::size_t>(count) * p.itemsize;  // at most nbytes
  if (src == nullptr && p.input_size > 0)
    throw InvalidArgument("tessera: src is null but the input has " + std::to_string(p.input_size) + " elements");
  if (dst == nullptr && bytes > 0)
    throw InvalidArgument("tessera: dst is null but the region has " + std::to_string(bytes) + " bytes");
  if (dst_bytes < bytes)
    throw BufferTooSmall("tessera: dst_bytes = " + std::to_string(dst_bytes) + " but the region needs " +
                         std::to_string(bytes) + " bytes");
  if (count == 0) return;
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  if (whole) {  // the whole output: the (parallel) executor
    execute(p, s, d);
    return;
  }
  const Region r = plan_region(p, start, extent);
  if (r.as_range) {
    execute_range(p, s, d, r.begin, r.end, /*ordinary_stores=*/true);
  } else {
    execute_region_kernel(r, s, d);
  }
}

}  // namespace tessera::detail
