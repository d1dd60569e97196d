// The executor: splits the C-contiguous output into contiguous chunks and runs each through the
// dispatched kernels (kernels/dispatch.cpp). Large outputs use tbb::parallel_for in the caller's
// task arena; small ones, an arena of concurrency 1, or a plan with max_threads 1, run serially on
// the calling thread with no task overhead. A plan with max_threads N > 1 below the arena's
// concurrency is split into at most N chunks, so at most N threads take part.
//
// Output regions (execute_region): the region is reduced to a few axes (region_of) and written
// serially by the region kernel (kernels/region.cpp).
//
// Nothing here allocates memory proportional to the output.
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
  const int arena = tbb::this_task_arena::max_concurrency();
  const int max_threads = plan.options.max_threads;
  // capped: the plan allows fewer threads than the arena has, so the output is cut into at most
  // max_threads chunks (each chunk is written by one thread); otherwise the arena bounds the
  // threads and each gets kChunksPerThread chunks for load balance.
  const bool capped = max_threads > 0 && max_threads < arena;
  const int threads = capped ? max_threads : arena;
  if (threads <= 1) {
    execute_range(plan, src, dst, 0, total);
    return;
  }
  // Chunk length in elements: a multiple of 64 elements, so every chunk starts on a multiple of
  // 64 bytes of the output and two threads never share a cache line. Rounding up keeps the
  // number of chunks at most `pieces`.
  const int64_t isz = static_cast<int64_t>(plan.itemsize);
  const int64_t pieces = capped ? threads : int64_t{threads} * kChunksPerThread;
  int64_t chunk_elems = (total + pieces - 1) / pieces;
  if (chunk_elems * isz < kMinChunkBytes) chunk_elems = (kMinChunkBytes + isz - 1) / isz;
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

namespace {

// The region reduced for the kernel (see Region in plan.hpp). Preconditions: a valid, non-empty
// region of a non-empty output.
Region region_of(const PlanData& plan, const Dims& start, const Dims& extent) {
  Region r;
  r.itemsize = plan.itemsize;
  const int n = plan.out_shape.size();
  const int pad = n - plan.in_shape.size();  // promoted (size-1) input axes come first
  RegionAxis axes[max_ndim];
  int na = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t period = i < pad ? 1 : plan.in_shape[i - pad];  // > 0: the output is not empty
    const int64_t stride = period == 1 ? 0 : plan.in_strides[i - pad];
    const int64_t first = start[i] % period;
    if (extent[i] == 1) {
      r.src_offset += first * stride;  // a constant source index on this axis
    } else {
      axes[na++] = {period, stride, first, extent[i], 0};
    }
  }
  // Merge from the inside out. An outer axis `o` folds into the inner axis `in` when `in` covers
  // exactly one whole period starting at 0 and o's source step is one whole period of `in` (or o
  // has a single source index): then the pair walks source indices o_k * in.period + in_k with
  // in_k over [0, in.period) — one axis of period o.period * in.period.
  RegionAxis m[max_ndim];  // innermost first
  int nm = 0;
  for (int k = na - 1; k >= 0; --k) {
    const RegionAxis& o = axes[k];
    if (nm > 0) {
      RegionAxis& in = m[nm - 1];
      int64_t span = 0;
      if (in.start == 0 && in.extent == in.period &&
          (o.period == 1 || (!__builtin_mul_overflow(in.stride, in.period, &span) && span == o.stride))) {
        in.start = o.start * in.period;
        in.extent *= o.extent;  // bounded by the output's element count
        in.period *= o.period;  // bounded by the input's element count
        continue;
      }
    }
    m[nm++] = o;
  }
  r.naxes = nm;
  for (int k = 0; k < nm; ++k) r.axes[k] = m[nm - 1 - k];
  int64_t step = static_cast<int64_t>(plan.itemsize);
  for (int k = nm - 1; k >= 0; --k) {
    r.axes[k].step_bytes = step;
    step *= r.axes[k].extent;
  }
  return r;
}

}  // namespace

void execute_region(const PlanData& plan, const unsigned char* src, const Dims& start, const Dims& extent,
                    unsigned char* dst) {
  execute_region_kernel(region_of(plan, start, extent), src, dst);
}

}  // namespace tessera::detail
