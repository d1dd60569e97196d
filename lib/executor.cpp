// The executor: splits the C-contiguous output into contiguous chunks and runs each through the
// dispatched kernels (kernels/kernels.hpp). Large outputs use tbb::parallel_for in the caller's
// task arena; small ones, an arena of concurrency 1, or a plan with max_threads 1, run serially on
// the calling thread with no task overhead. A plan with max_threads N > 1 below the arena's
// concurrency is split into at most N chunks, so at most N threads take part. Output regions run
// serially: the planner reduces them (plan_region), the region kernel writes them.
//
// Nothing here allocates memory proportional to the output.
#include "executor.hpp"

#include "kernels/kernels.hpp"
#include "planner.hpp"
#include "reduce.hpp"
#include "reduce_scalar.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace tessera::detail {
namespace {

// Below this many output bytes one thread finishes before a task could be woken.
constexpr int64_t kParallelMinBytes = 512 * 1024;
// Smallest chunk handed to a task, and how many chunks per thread (for load balance).
constexpr int64_t kMinChunkBytes = 128 * 1024;
constexpr int64_t kChunksPerThread = 4;

// The first element index d in [0, 64) whose byte address dst + d * itemsize is a multiple of 64,
// or 0 if none is (elements that straddle cache lines wherever they start).
int64_t first_line_start(const unsigned char* dst, int64_t itemsize) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(dst);
  for (int64_t d = 0; d < 64; ++d)
    if ((a + static_cast<uintptr_t>(d * itemsize)) % 64 == 0) return d;
  return 0;
}

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
  // Chunk length in elements: a multiple of 64 elements (64 * itemsize bytes, whole cache lines),
  // and every boundary at `first` + k * chunk, whose address is a multiple of 64 bytes wherever
  // the output's alignment allows it: then two threads never write the same cache line. The
  // first chunk also takes the up to 63 elements before `first`; rounding up keeps the number of
  // chunks at most `pieces`.
  const int64_t isz = static_cast<int64_t>(plan.itemsize);
  const int64_t pieces = capped ? threads : int64_t{threads} * kChunksPerThread;
  const int64_t first = first_line_start(dst, isz) < total ? first_line_start(dst, isz) : 0;
  int64_t chunk_elems = (total - first + pieces - 1) / pieces;
  if (chunk_elems * isz < kMinChunkBytes) chunk_elems = (kMinChunkBytes + isz - 1) / isz;
  const int64_t chunk = (chunk_elems + 63) / 64 * 64;
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
        execute_range(plan, src, dst + begin * isz, begin, end);
      },
      tbb::simple_partitioner(), context);
}

void execute_checked(const PlanData& p, const void* src, void* dst, std::size_t dst_bytes) {
  if (src == nullptr && p.input_size > 0)
    throw InvalidArgument("tessera: src is null but the input has " + std::to_string(p.input_size) + " elements");
  if (dst == nullptr && p.nbytes > 0)
    throw InvalidArgument("tessera: dst is null but the output has " + std::to_string(p.nbytes) + " bytes");
  if (dst_bytes < p.nbytes)
    throw BufferTooSmall("tessera: dst_bytes = " + std::to_string(dst_bytes) + " but the output needs " +
                         std::to_string(p.nbytes) + " bytes");
  if (p.out_size == 0) return;
  if (p.reduce) {
    execute_reduce(*p.reduce, static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst));
    return;
  }
  execute(p, static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst));
}

void execute_region_checked(const PlanData& p, const void* src, const Dims& start, const Dims& extent, void* dst,
                            std::size_t dst_bytes) {
  if (p.reduce)
    throw InvalidArgument("tessera: execute_region is not available for a reduction's plan (" +
                          std::string(kReducePathNames[static_cast<int>(p.reduce->problem.path)]) +
                          "); execute it whole");
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

// ---- The reductions ---------------------------------------------------------------------------
//
// Work is split over items (strips of output elements, output rows) when there are enough of
// them; otherwise each item's leaves are split into chunks of a power of two (complete subtrees of
// its tree), summed in parallel and combined by the same binary counter — the bits do not depend
// on the split (reduce.hpp). Segment plans run one sub-problem per source index, in parallel.

namespace {

// Threads a reduction may use for `work_bytes` of input: 1 below kParallelMinBytes.
int reduce_threads(int64_t work_bytes, int max_threads) {
  if (work_bytes < kParallelMinBytes) return 1;
  const int arena = tbb::this_task_arena::max_concurrency();
  return max_threads > 0 && max_threads < arena ? max_threads : arena;
}

// Writes 0 to every output element of the kept axes of `p` (its axes before plan_problem).
void zero_kept(const ReduceProblem& p, unsigned char* dst, int i = 0) {
  for (; i < p.naxes && !p.axes[i].kept; ++i) {
  }
  if (i == p.naxes) {
    std::memset(dst, 0, p.elsize);
    return;
  }
  for (int64_t k = 0; k < p.axes[i].extent; ++k)
    zero_kept(p, dst + k * p.axes[i].dst_stride * static_cast<int64_t>(p.elsize), i + 1);
}

void run_problem(const ReduceProblem& p, const unsigned char* in, unsigned char* out, bool accumulate,
                 int threads) {
  if (p.path == ReducePath::none) return;
  if (p.path == ReducePath::zeros) {
    if (!accumulate) std::memset(out, 0, static_cast<std::size_t>(p.out_elems) * p.elsize);
    return;
  }
  if (threads <= 1) {
    reduce_items(p, in, out, 0, p.nitems, accumulate);
    return;
  }
  tbb::task_group_context context(tbb::task_group_context::isolated);
  if (p.nitems >= 2 * int64_t{threads} || p.nleaves < 4) {  // over the output
    const int64_t pieces = std::min<int64_t>(p.nitems, int64_t{threads} * kChunksPerThread);
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, pieces, 1),
        [&](const tbb::blocked_range<int64_t>& r) {
          const int64_t b = p.nitems * r.begin() / pieces, e = p.nitems * r.end() / pieces;
          reduce_items(p, in, out, b, e, accumulate);
        },
        tbb::simple_partitioner(), context);
    return;
  }
  // Over the replicas: chunks of 2^j leaves per item, about kChunksPerThread per thread in all.
  const int64_t want = std::max<int64_t>(1, int64_t{threads} * kChunksPerThread / p.nitems);
  int64_t chunk = 1;
  while (chunk * want < p.nleaves) chunk *= 2;
  const int64_t nchunks = (p.nleaves + chunk - 1) / chunk;
  const int64_t width = p.path == ReducePath::periodic ? p.slots : p.strip;
  const std::size_t row_bytes = static_cast<std::size_t>(width) * acc_size(p.elem);
  // Not initialised: a chunk writes its item's elements (an item's strip may be shorter than
  // `width`: the last strip of a row), and only those are combined below.
  std::unique_ptr<unsigned char[]> rows(new unsigned char[static_cast<std::size_t>(p.nitems * nchunks) * row_bytes]);
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, p.nitems * nchunks, 1),
      [&](const tbb::blocked_range<int64_t>& r) {
        for (int64_t t = r.begin(); t < r.end(); ++t) {
          const int64_t item = t / nchunks, c = t % nchunks;
          reduce_partial(p, in, item, c * chunk, std::min(p.nleaves, (c + 1) * chunk),
                         rows.get() + static_cast<std::size_t>(t) * row_bytes);
        }
      },
      tbb::simple_partitioner(), context);
  // Combine each item's chunk sums as the leaves of a counter: the same tree as one serial pass.
  const std::size_t asz = acc_size(p.elem);
  const auto add = [&](unsigned char* d, const unsigned char* a, const unsigned char* b, int64_t nbytes) {
    reduce_add_rows(p.elem, d, a, b, nbytes / static_cast<int64_t>(asz));
  };
  // The counter's levels (bit_width(nchunks) rows: as many as nchunks pushes use) and the sum.
  int nlevels = 0;
  for (uint64_t l = static_cast<uint64_t>(nchunks); l; l >>= 1) ++nlevels;
  std::unique_ptr<unsigned char[]> levels(new unsigned char[static_cast<std::size_t>(nlevels + 1) * row_bytes]);
  for (int64_t item = 0; item < p.nitems; ++item) {
    LeafCounter<unsigned char, decltype(add)> counter{levels.get(), p.item_row(item) * static_cast<int64_t>(asz), add};
    for (int64_t c = 0; c < nchunks; ++c)
      counter.push(rows.get() + static_cast<std::size_t>(item * nchunks + c) * row_bytes);
    unsigned char* sum = levels.get() + static_cast<std::size_t>(nlevels) * row_bytes;
    counter.result(sum);
    reduce_finish(p, item, sum, out, accumulate);
  }
}

// Per-element repeat counts: source index k of the segment axis sums its own count of elements.
void run_segments(const ReduceData& r, const unsigned char* in, unsigned char* out) {
  const ReduceProblem& base = r.problem;
  const RAxis seg = base.axes[r.seg_axis];
  const int64_t* prefix = r.prefix.data();
  const int64_t es = static_cast<int64_t>(base.elsize);
  const auto one = [&](int64_t k) {
    ReduceProblem sub;
    sub.elem = base.elem;
    sub.elsize = base.elsize;
    sub.naxes = base.naxes;
    std::copy(base.axes, base.axes + base.naxes, sub.axes);
    sub.axes[r.seg_axis].extent = 1;
    sub.axes[r.seg_red].extent = prefix[k + 1] - prefix[k];
    unsigned char* dst = out + k * seg.dst_stride * es;
    if (sub.axes[r.seg_red].extent == 0) {
      if (!r.accumulate) zero_kept(sub, dst);
      return;
    }
    plan_problem(sub);
    reduce_items(sub, in + prefix[k] * r.seg_stride, dst, 0, sub.nitems, r.accumulate);
  };
  const int64_t n = seg.extent;
  const int threads = reduce_threads(static_cast<int64_t>(prefix[n]) * es * (base.out_elems / std::max<int64_t>(1, n)),
                                     r.max_threads);
  if (threads <= 1) {
    for (int64_t k = 0; k < n; ++k) one(k);
    return;
  }
  tbb::task_group_context context(tbb::task_group_context::isolated);
  const int64_t pieces = std::min<int64_t>(n, int64_t{threads} * kChunksPerThread);
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, pieces, 1),
      [&](const tbb::blocked_range<int64_t>& rg) {
        for (int64_t k = n * rg.begin() / pieces; k < n * rg.end() / pieces; ++k) one(k);
      },
      tbb::simple_partitioner(), context);
}

}  // namespace

void execute_reduce(const ReduceData& r, const unsigned char* in, unsigned char* out) {
  const ReduceProblem& p = r.problem;
  if (p.path == ReducePath::segments) {
    run_segments(r, in, out);
    return;
  }
  const int64_t work = p.out_elems * std::max<int64_t>(1, p.nred) * static_cast<int64_t>(p.elsize);
  run_problem(p, in, out, r.accumulate, reduce_threads(work, r.max_threads));
}

}  // namespace tessera::detail
