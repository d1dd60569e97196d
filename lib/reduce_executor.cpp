// The reduce executor: runs a reduce plan (reduce.hpp) through the dispatched kernels
// (kernels/kernels.hpp) over TBB. Work is split over items (strips of output elements, output
// rows) when there are enough of them; otherwise each item's leaves are split into chunks of a power of two (complete subtrees of
// its tree), summed in parallel and combined by the same binary counter — the bits do not depend
// on the split (reduce.hpp). Segment plans run, in parallel over the segments, each
// segment's planned sub-problem, or whole ranges of segments by one kernel call (segments_runs).
#include "executor.hpp"

#include "kernels/kernels.hpp"
#include "parallel.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

namespace tessera::detail {
namespace {

// Threads a reduction may use for `work_bytes` of input (parallel_threads): 1 below
// kParallelMinBytes, with no TBB call at all.
int reduce_threads(int64_t work_bytes, int max_threads) {
  if (work_bytes < kParallelMinBytes) return 1;
  return parallel_threads(work_bytes, max_threads, tbb::this_task_arena::max_concurrency());
}

// Writes 0 to every output element of the kept axes of `p` (from axis i on); a last kept axis
// of consecutive elements in one memset.
void zero_kept(const ReduceProblem& p, unsigned char* dst, int i = 0) {
  for (; i < p.naxes && !p.axes[i].kept; ++i) {
  }
  if (i == p.naxes) {
    std::memset(dst, 0, p.elsize);
    return;
  }
  int next = i + 1;
  for (; next < p.naxes && !p.axes[next].kept; ++next) {
  }
  if (next == p.naxes && p.axes[i].dst_stride == 1) {
    std::memset(dst, 0, static_cast<std::size_t>(p.axes[i].extent) * p.elsize);
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
  for (int64_t item = 0; item < p.nitems; ++item)
    reduce_combine(p, item, rows.get() + static_cast<std::size_t>(item * nchunks) * row_bytes, row_bytes, nchunks, out,
                   accumulate);
}

// Per-element repeat counts: source index k of the segment axis sums its own count of elements,
// by the segment's planned sub-problem (segment_of) or, kernel segments_runs, every segment of a
// range in one kernel call. Split over the segments.
// A range's first segment is a multiple of Prefix::kSparseStep (the pieces' boundaries below), where
// a compact Prefix keeps the prefix sum: the kernel and the loop here walk the one-byte counts on.
void run_segments(const ReducePlan& r, const unsigned char* in, unsigned char* out) {
  const ReduceProblem& base = r.problem;
  const RAxis seg = base.axes[r.seg_axis];
  const Prefix& prefix = r.prefix;
  const int64_t es = static_cast<int64_t>(base.elsize);
  const bool runs = base.kernel == ReduceKernel::segments_runs;
  const int64_t total = prefix.back();
  const auto range = [&](int64_t begin, int64_t end) {
    if (runs && reduce_segment_runs(r.seg_many, prefix.data(), prefix.counts8(), begin, end,
                                    prefix.at_step(begin), total, seg.dst_stride, in, out, r.options.accumulate))
      return;
    ReduceProblem scratch;
    const int64_t* whole = prefix.data();  // null where compact: then the one-byte counts
    const uint8_t* c8 = prefix.counts8();
    const auto count_of_segment = [&](int64_t k) {
      return whole != nullptr ? whole[k + 1] - whole[k] : int64_t{c8[k]};
    };
    const int64_t dst_step = seg.dst_stride * es;
    // The segments of planned counts (and of count 0) in one kernel call, the sub-problems set up
    // once; the rare longer ones one by one. A streamed result: one fence for the range, not one
    // per segment (each waits for the segment's lines to reach memory: rep_ragged_bwd's 1 KiB
    // rows took 2x as long).
    const ReduceProblem* planned = r.seg_planned ? r.seg_planned->data() : nullptr;
    const int64_t nplanned = r.seg_planned ? static_cast<int64_t>(r.seg_planned->size()) : 0;
    int64_t first = prefix.at_step(begin);  // segment k's first element
    for (int64_t k = begin; k < end;) {
      if (nplanned > 0)
        k = reduce_segment_items(planned, nplanned, whole, c8, k, end, &first, r.seg_stride, dst_step, in, out,
                                 r.options.accumulate, r.seg_prefetch_bytes, total * r.seg_stride);
      if (k == end) break;
      const int64_t count = count_of_segment(k);
      if (count == 0) {  // only without planned sub-problems (the kernel call takes them)
        if (!r.options.accumulate) zero_kept(r.seg_one, out + k * dst_step);  // a count of 0 sums to 0
      } else {
        const ReduceProblem& sub = segment_of(r, count, scratch);
        reduce_items(sub, in + first * r.seg_stride, out + k * dst_step, 0, sub.nitems, r.options.accumulate, false);
        first += count;
      }
      ++k;
    }
    if (base.stream) reduce_fence();
  };
  const int64_t n = seg.extent;
  const int threads = reduce_threads(total * es * (base.out_elems / std::max<int64_t>(1, n)), r.options.max_threads);
  if (threads <= 1) {
    range(0, n);
    return;
  }
  tbb::task_group_context context(tbb::task_group_context::isolated);
  const int64_t pieces = std::min<int64_t>(n, int64_t{threads} * kChunksPerThread);
  // Piece boundaries on multiples of 16 segments (Prefix::kSparseStep): the outputs of a contiguous
  // result's pieces then start on 64-byte lines (where its first does), segments_runs' groups
  // stream whole vectors, and a compact Prefix has each piece's first prefix sum.
  static_assert(Prefix::kSparseStep == 16, "pieces start where a compact Prefix keeps a sum");
  const auto split = [&](int64_t i) { return i == pieces ? n : n * i / pieces / 16 * 16; };
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, pieces, 1),
      [&](const tbb::blocked_range<int64_t>& rg) { range(split(rg.begin()), split(rg.end())); },
      tbb::simple_partitioner(), context);
}

}  // namespace

void execute_checked(const ReducePlan& r, const void* src, void* dst, std::size_t dst_bytes) {
  check_buffers(r, src, dst, dst_bytes);
  if (r.out_size == 0) return;
  execute(r, static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst));
}

void execute(const ReducePlan& r, const unsigned char* in, unsigned char* out) {
  const ReduceProblem& p = r.problem;
  if (p.path == ReducePath::segments) {
    run_segments(r, in, out);
    return;
  }
  const int64_t work = p.out_elems * std::max<int64_t>(1, p.nred) * static_cast<int64_t>(p.elsize);
  run_problem(p, in, out, r.options.accumulate, reduce_threads(work, r.options.max_threads));
}

}  // namespace tessera::detail
