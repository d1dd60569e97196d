// The kernels' interface: what the executor and the planner call. Each entry point is compiled
// once per Highway target (foreach_target.h) and dispatched to the best target this CPU supports
// (HWY_DYNAMIC_DISPATCH). Serial: TBB stays in the executor, which calls execute_range from each
// task. No Highway or TBB types here.
#ifndef TESSERA_LIB_KERNELS_KERNELS_HPP
#define TESSERA_LIB_KERNELS_KERNELS_HPP

#include "copy_plan.hpp"
#include "paths.hpp"
#include "reduce.hpp"
#include "region.hpp"

#include <string>
#include <vector>

namespace tessera::detail {

/// Writes output elements [begin, end) of the plan to `out` (where element `begin` goes), by the
/// plan's Path — or by its path with ordinary stores (CopyPlan::plain_path) if `ordinary_stores`.
/// With `copies` > 1 (plans with CopyPlan::replica_elems) the range lies in the first replica and
/// is also written to the same place in the next copies - 1 replicas (out + k * replica_elems *
/// itemsize bytes): a blocked gather's whole rows are gathered once, other paths walk the range
/// in steps of plan.replica_step_elems (boundaries on absolute cache lines of the first replica
/// where the element size allows; of every replica where a replica is whole lines), each written
/// to every replica before the next.
/// Preconditions: 0 <= begin < end <= (copies > 1 ? plan.replica_elems : plan.out_size), copies *
/// plan.replica_elems <= plan.out_size if copies > 1; src and out valid. A path chosen under
/// another target runs correctly on any (a target without vectors or streaming stores runs such
/// paths with its scalar code).
/// Defined in kernels/rows.cpp.
void execute_range(const CopyPlan& plan, const unsigned char* src, unsigned char* out, int64_t begin, int64_t end,
                   bool ordinary_stores = false, int64_t copies = 1);

/// Writes `region` (plan_region) C-contiguously to dst. Defined in kernels/region.cpp.
void execute_region_kernel(const Region& region, const unsigned char* src, unsigned char* dst);

/// The planner's scan of n contiguous per-element repeat counts (int32 if itemsize is 4, int64 if
/// 8; any alignment), as unsigned integers of their width: bytes[i] = the low byte of count i;
/// *bits = the or of every count (a negative one sets the width's sign bit); *above = the or of
/// every (count + lift) >> 8, wrapping at the width (non-zero when a non-negative count exceeds
/// 255 - lift). bytes has room for n. Defined in kernels/counts.cpp.
void scan_counts(const void* counts, int itemsize, int64_t n, uint64_t lift, uint8_t* bytes, uint64_t* bits,
                 uint64_t* above);

/// For n one-byte counts: sums16[k] = the sum of bytes[16k, 16k + 16) for every whole group of 16
/// (sums16 has room for n / 16); returns the largest. Defined in kernels/counts.cpp.
uint8_t count_bytes_sums(const uint8_t* bytes, int64_t n, uint32_t* sums16);

/// The reductions (kernels/reduce.cpp; items and leaves as in reduce.hpp). reduce_items computes
/// items [begin, end) of the problem whole by the problem's kernel (or, on a target without its
/// code, that kernel's general one) and writes them to dst (the output's first element);
/// reduce_partial sums leaves [leaf_begin, leaf_end) of one item into `acc` (a row of
/// accumulators: the strip, or the periodic slots), a subtree of the item's tree when leaf_begin
/// is a multiple of a power of two no smaller than leaf_end - leaf_begin; reduce_combine adds an
/// item's `nchunks` such sums (chunk c, in leaf order, at rows + c * row_bytes) by the binary
/// counter, as the subtrees they are, and writes the item's output elements.
/// `accumulate` must be the one the problem's kernel was chosen for (choose_reduce_kernel). Each
/// call takes p.scratch_bytes from its thread's arena (thread_scratch); throws std::bad_alloc
/// if that arena cannot grow. A streamed output (p.stream) is fenced before reduce_items returns
/// unless `fence` is false: the caller then calls reduce_fence() on the same thread before the
/// output is read (the executor's segments: one call per segment, one fence per range).
void reduce_items(const ReduceProblem& p, const unsigned char* src, unsigned char* dst, int64_t begin, int64_t end,
                  bool accumulate, bool fence = true);
/// Orders the calling thread's non-temporal stores before its later stores (x86: sfence).
void reduce_fence();
void reduce_partial(const ReduceProblem& p, const unsigned char* src, int64_t item, int64_t leaf_begin,
                    int64_t leaf_end, unsigned char* acc);
void reduce_combine(const ReduceProblem& p, int64_t item, const unsigned char* rows, std::size_t row_bytes,
                    int64_t nchunks, unsigned char* dst, bool accumulate);

/// Segments [k_begin, k_end) of a segments_runs plan (reduce.hpp): `run` is the plan's seg_many
/// (a contiguous reduced run, innermost, under at most one kept axis of rows); segment k of row b
/// sums the prefix[k + 1] - prefix[k] (at most kSegRunMax) elements from element prefix[k] of the
/// row (of row_elems elements, the last prefix), and its output element is k * dst_stride
/// (elements) from the row's, written (count 0: 0) or added to (`accumulate`); it reads only the
/// row's elements. The bits are those of each segment's own sub-problem (seg_planned). Returns
/// false, writing nothing, on a target without the kernel's code (a plan made for another
/// target): the caller then runs the segments one by one. `counts8`: the one-byte counts
/// (Prefix::counts8) where run.seg_group_count > 0 or `prefix` is null, else ignored (may be
/// null). `prefix`: the whole prefix sums, or null where the plan's are compact (Prefix::compact:
/// every count below 255, from counts8); `first`: prefix[k_begin] (the row's element where
/// segment k_begin starts).
bool reduce_segment_runs(const ReduceProblem& run, const int64_t* prefix, const uint8_t* counts8, int64_t k_begin,
                         int64_t k_end, int64_t first, int64_t row_elems, int64_t dst_stride,
                         const unsigned char* src, unsigned char* dst, bool accumulate);

/// Segments [k_begin, k_end) of a segments plan whose kernel is `segments` (each segment by its
/// own planned sub-problem): segment k of count c in 1 ... nsubs sums subs[c - 1] (the plan's
/// seg_planned, nsubs of them, at least 1) from src + *first * seg_stride bytes into dst + k *
/// dst_step bytes, as reduce_items(subs[c - 1], ..., fence = false) would, and *first moves past
/// its c elements; a segment of count 0 gets zeros (streamed where subs[0] streams), or, with
/// `accumulate`, is left alone. Stops at a segment whose count is above nsubs and returns its index
/// (*first then its first element), else returns k_end. `prefix`: the whole prefix sums, or null
/// where they are compact (then `counts8`, the one-byte counts). Takes the largest sub-problem's
/// scratch_bytes from the thread's arena; throws std::bad_alloc if it cannot grow. The caller
/// fences a streamed output (reduce_fence). prefetch_bytes (the plan's seg_prefetch_bytes; 0 for
/// none): as each line of a segment is read, the line that many bytes further on is prefetched,
/// where that segment's rows so shifted end within the src_bytes bytes of the gradient from src.
int64_t reduce_segment_items(const ReduceProblem* subs, int64_t nsubs, const int64_t* prefix, const uint8_t* counts8,
                             int64_t k_begin, int64_t k_end, int64_t* first, int64_t seg_stride, int64_t dst_step,
                             const unsigned char* src, unsigned char* dst, bool accumulate, int64_t prefetch_bytes,
                             int64_t src_bytes);

/// What the target the kernels dispatch to now can do (choose_path's input).
KernelCaps kernel_caps();

/// What the reduction code of the target the kernels dispatch to now has (choose_reduce_kernel's
/// input). Defined in kernels/reduce.cpp.
ReduceCaps reduce_caps();

/// Name of the Highway target the kernels dispatch to now.
const char* dispatch_target_name();

/// Names of the Highway targets the kernels were compiled for (HWY_TARGETS), best first; with
/// `supported_only`, only those hwy::SupportedTargets() has now. Defined in kernels/rows.cpp.
std::vector<std::string> target_names(bool supported_only);

}  // namespace tessera::detail

#endif  // TESSERA_LIB_KERNELS_KERNELS_HPP
