// The reductions' plan (the gradients of the family: tile_backward, sum_to_shape, repeat_backward):
// what reduce_planner.cpp produces and the executor runs through kernels/reduce.cpp. Internal; no
// Highway, no TBB here.
//
// Every reduction is "sum a strided input over some of its axes into a C-contiguous output": the
// input is seen as a list of axes (outer -> inner), each either KEPT (it indexes the output: an
// extent, a source byte stride and a destination stride in elements) or REDUCED (summed over).
// tile's gradient splits each input axis of extent r*s into a reduced (r, s*stride) axis outside
// a kept (s, stride) one; a scalar repeat's gradient into a kept (s, r*stride) axis outside a
// reduced (r, stride) one; sum_to_shape's axes are kept or reduced whole. A complex element is two
// real ones along an innermost kept axis (2, the real's size).
//
// The order of the additions — the only thing that decides the bits of a floating-point result —
// is a function of the plan alone (never of threads, chunking or the SIMD target):
//
//   lanes order   (paths lanes, strided, interleaved): per output element the addends in the
//                 order of the reduced axes (outer first), summed in leaves of kLeaf, leaf k
//                 linearly; the leaves combined by a binary counter (= the tree that splits n
//                 leaves into the largest power of two below n and the rest, recursively).
//   periodic order (path periodic): the innermost source axis is a contiguous reduced run of R
//                 elements (w = 1), or a reduced run of R rows of a contiguous kept axis of w < 16
//                 elements (w > 1, e.g. a narrow tile's gradient); its R*w elements are cut in
//                 blocks of P = lcm(w, 16) slots (the last block of a run padded with the
//                 identity); per output row the blocks of every run (outer reduced axes first)
//                 are summed slot-wise in leaves of kLeaf blocks combined by the binary counter;
//                 then the P/w slots of each output element are added by a halving tree.
//
// Floating-point accumulators start from -0.0 (the identity of IEEE addition, so a padded slot or
// an empty leaf changes no bit); integers add modulo 2^bits in their unsigned type.
#ifndef TESSERA_LIB_REDUCE_HPP
#define TESSERA_LIB_REDUCE_HPP

#include <tessera/tessera.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plan_base.hpp"
#include "prefix.hpp"

namespace tessera::detail {

/// What the kernels add: the element type with signed integers as their unsigned kind (the same
/// bits modulo 2^bits) and complex numbers as their real parts.
enum class Elem : uint8_t { f32, f64, f16, bf16, u8, u16, u32, u64 };
inline constexpr int kElemCount = 8;

/// Leaf length of both orders (addends per leaf, or blocks per leaf).
inline constexpr int64_t kLeaf = 8;
/// Slots of the periodic order's blocks (a multiple of every target's lanes of a 16-lane cap).
inline constexpr int64_t kPeriodicSlots = 16;
/// Kept inner axes narrower than this fold (periodic order with w > 1).
inline constexpr int64_t kFoldMaxWidth = 16;
/// Lanes-order items of at most this many leaves keep the binary counter in registers (the
/// lanes.reg kernels), and of at most kUnrolledLeaves leaves with its steps unrolled.
inline constexpr int64_t kRegLeaves = 16;
inline constexpr int64_t kUnrolledLeaves = 4;
/// The unrolled trees (reduce.lanes.reg.tree4) read an item of at most this many vectors of
/// accumulators per row (elements: this times the accumulator's lanes) a row at a time, each from
/// its start to its end, the sums in registers; a longer item a vector at a time across its rows.
inline constexpr int64_t kTreeRowVecs = 8;
/// reduce.lanes.reg.leaf's rows_whole items keep their sums in registers up to this many vectors
/// of accumulators (elements: this times the accumulator's lanes), else in a scratch row in L1.
/// The planner splits items of rows of at most kSplitRowBytes longer than that into strips of
/// that many (plan_problem): nchw_bwd's rows of 512 bytes on AVX2 (128 float32, 32 vectors of 4
/// doubles) read 1.22-1.32x faster in strips of 64 elements on the Xeon reporting family 6 model
/// 167 (bench/results/2026-12-07-xeon-f6m167/avx2-nchw_bwd-strips-5adf673.txt); rep_mid_bwd's
/// rows of 1 KiB read 0.89-0.96x as fast so (AVX2 and AVX-512) and keep the scratch row.
inline constexpr int64_t kLeafRowVecs = 16;
inline constexpr int64_t kSplitRowBytes = 512;
/// Per-element counts: the segments' sub-problems of counts 1..kSegPlannedCounts (at most the
/// largest count) are planned with the plan; a segment of more addends per output element is laid
/// out when it runs (segment_problem), its planning spread over more than kSegPlannedCounts rows.
inline constexpr int64_t kSegPlannedCounts = 16;
/// The longest run the segments_runs kernel sums: one leaf of 16-slot blocks (the periodic order
/// of a run this short is its blocks added in order, then the halving fold).
inline constexpr int64_t kSegRunMax = kLeaf * kPeriodicSlots;
/// The largest count whose float32 segments the segments_runs kernel sums in groups from the
/// one-byte counts (ReduceProblem::seg_group_count): a group of N segments (N: the accumulator's
/// lanes) then lies within two float vectors, 4N elements.
inline constexpr int64_t kSegGroupMaxCount = 4;
/// Whether targets of width `fixed_width` with `acc_lanes` float64 lanes (float32's accumulator)
/// have segments_runs' groups (half a float vector each, so at least two lanes): the planner's
/// condition and the kernels' alike.
constexpr bool reduce_seg_groups(bool fixed_width, int acc_lanes) noexcept { return fixed_width && acc_lanes >= 2; }

/// The reduction paths (see the file comment): the order of additions and the shape of the work
/// items; each has one or more kernels (ReduceKernel).
///   zeros        a reduced extent is 0: every output element is 0 (nothing to add)
///   lanes        the innermost kept axis is contiguous: vectors of output elements
///   strided      neither: element by element (lanes order)
///   interleaved  a reduced run of 2-4 contiguous elements per output element, the only reduced
///                axis (repeat-by-2 gradients): deinterleaving loads (lanes order)
///   periodic     the periodic order
///   segments     per-element repeat counts: one sub-problem per source index, each laid out as
///                one of the above (so each segment's sum has the bits of that sub-problem's path)
enum class ReducePath : uint8_t { none, zeros, lanes, strided, interleaved, periodic, segments, count_ };
inline constexpr int kReducePathCount = static_cast<int>(ReducePath::count_);
inline constexpr const char* kReducePathNames[kReducePathCount] = {
    "reduce.none",    "reduce.zeros",    "reduce.lanes", "reduce.strided",
    "reduce.interleaved", "reduce.periodic", "reduce.segments"};

/// The reduction kernels: the code that runs a problem, chosen once by the planner
/// (choose_reduce_kernel) from kReduceKernels; kernels/reduce.cpp switches on it. Every kernel of
/// a path adds in that path's order, so the kernels of one path give the same bits.
enum class ReduceKernel : uint8_t {
  none,                  // nothing to write
  zeros,                 // every output element 0 (the executor's memset)
  lanes_reg_leaf,        // lanes, one leaf of K <= kLeaf addends summed in registers (RegTreeItem<K>)
  lanes_reg_tree4,       // lanes, 2-4 leaves, the counter unrolled in registers (RegTreeItem<0, NL>)
  lanes_reg_tree16,      // lanes, 5-16 leaves, the counter in registers (RegTree)
  lanes_leaf,            // lanes, one leaf summed straight into the output (LeafRowsFinish)
  lanes_leaf_dst_stride, // lanes, one leaf, an output stride of a segment (LeafRows + FinishRow)
  lanes_leaves,          // lanes, any leaves: rows of accumulators in memory (LanesLeaves)
  strided,               // lanes order, element by element (LanesLeaves over strided rows)
  interleaved_pair_f32,  // float32 pairs, not accumulated: summed in float32 (PairRowF32)
  interleaved_row,       // 2-4 interleaved addends (InterleavedRow)
  periodic_rows_w1,      // periodic, short runs (one leaf) of one kept axis, w = 1 (ShortRun1, ShortRun1N)
  periodic_rows,         // periodic, short runs of one kept axis, w > 1 (ShortRun3N, ShortRunAny)
  periodic_shortrun,     // periodic, a short run per item (ShortRunAny)
  periodic_reg16,        // periodic, 16 slots, one run of several leaves in registers (RegPeriodic16)
  periodic_leaves,       // periodic, any: rows of slots in memory (PeriodicLeaves)
  segments,              // per-element counts: each segment's planned sub-problem run by its own kernel
  segments_runs,         // per-element counts, each segment a contiguous run of at most kSegRunMax
                         // elements summed to one output (in its sub-problem's order: strided
                         // below 16 addends, periodic w = 1 from 16): every segment of a range in
                         // one call, N at a time (SegmentRuns)
  count_
};
inline constexpr int kReduceKernelCount = static_cast<int>(ReduceKernel::count_);

/// The targets a kernel is chosen for (kernels/reduce.cpp compiles its code there).
///   any          every target
///   fixed        fixed-width vectors (not HWY_HAVE_SCALABLE): the register kernels
///   fixed_slots  fixed-width vectors of at most kPeriodicSlots accumulators of the element
///   scalable     only scalable targets choose it (elsewhere a kernel above takes its problems),
///                but its code is on every target: the general kernel of a `fixed` one
enum class ReduceTargets : uint8_t { any, fixed, fixed_slots, scalable };

/// A row of kReduceKernels: the name Plan::kernel_path() gives ("reduce.<path>.<kernel>", the path's
/// name first), the path (the order of additions), the targets that choose it, the kernel a
/// target without its code runs instead (the same path, so the same bits; itself if on every
/// target), and whether it prefetches ReduceProblem::prefetch_items ahead (choose_reduce_kernel
/// leaves prefetch_items 0 for a kernel that does not, and a kernel that runs another's problem,
/// its general kernel, prefetches by its own row).
struct ReduceKernelInfo {
  const char* name;
  ReducePath path;
  ReduceTargets targets;
  ReduceKernel general;
  bool prefetches;
};
inline constexpr ReduceKernelInfo kReduceKernels[kReduceKernelCount] = {
    {"reduce.none", ReducePath::none, ReduceTargets::any, ReduceKernel::none, false},
    {"reduce.zeros", ReducePath::zeros, ReduceTargets::any, ReduceKernel::zeros, false},
    {"reduce.lanes.reg.leaf", ReducePath::lanes, ReduceTargets::fixed, ReduceKernel::lanes_leaf, true},
    {"reduce.lanes.reg.tree4", ReducePath::lanes, ReduceTargets::fixed, ReduceKernel::lanes_leaves, true},
    {"reduce.lanes.reg.tree16", ReducePath::lanes, ReduceTargets::fixed, ReduceKernel::lanes_leaves, true},
    {"reduce.lanes.leaf", ReducePath::lanes, ReduceTargets::scalable, ReduceKernel::lanes_leaf, true},
    {"reduce.lanes.leaf.dst_stride", ReducePath::lanes, ReduceTargets::any, ReduceKernel::lanes_leaf_dst_stride, true},
    {"reduce.lanes.leaves", ReducePath::lanes, ReduceTargets::any, ReduceKernel::lanes_leaves, true},
    {"reduce.strided", ReducePath::strided, ReduceTargets::any, ReduceKernel::strided, false},
    {"reduce.interleaved.pair_f32", ReducePath::interleaved, ReduceTargets::any, ReduceKernel::interleaved_pair_f32, false},
    {"reduce.interleaved.row", ReducePath::interleaved, ReduceTargets::any, ReduceKernel::interleaved_row, false},
    {"reduce.periodic.rows.w1", ReducePath::periodic, ReduceTargets::fixed_slots, ReduceKernel::periodic_leaves, true},
    {"reduce.periodic.rows", ReducePath::periodic, ReduceTargets::fixed_slots, ReduceKernel::periodic_leaves, true},
    {"reduce.periodic.shortrun", ReducePath::periodic, ReduceTargets::fixed_slots, ReduceKernel::periodic_leaves, false},
    {"reduce.periodic.reg16", ReducePath::periodic, ReduceTargets::fixed_slots, ReduceKernel::periodic_leaves, true},
    {"reduce.periodic.leaves", ReducePath::periodic, ReduceTargets::any, ReduceKernel::periodic_leaves, false},
    {"reduce.segments", ReducePath::segments, ReduceTargets::any, ReduceKernel::segments, false},
    {"reduce.segments.runs", ReducePath::segments, ReduceTargets::fixed_slots, ReduceKernel::segments, false},
};

/// The table's promises, checked at compile time: row k describes kernel k, and a general kernel
/// has the same path and is on every target (so a plan runs anywhere, with the same bits).
constexpr bool reduce_kernel_table_ok() noexcept {
  for (int k = 0; k < kReduceKernelCount; ++k) {
    const ReduceKernelInfo& info = kReduceKernels[k];
    const ReduceKernelInfo& general = kReduceKernels[static_cast<int>(info.general)];
    if (general.path != info.path || general.general != info.general) return false;
    if (general.targets != ReduceTargets::any && general.targets != ReduceTargets::scalable) return false;
    if (info.targets == ReduceTargets::any && info.general != static_cast<ReduceKernel>(k)) return false;
  }
  return true;
}
static_assert(reduce_kernel_table_ok(), "kReduceKernels: a general kernel of another path, or not on every target");

/// What the dispatched target's reduction code has (kernels/kernels.hpp reduce_caps(); the input
/// of choose_reduce_kernel).
struct ReduceCaps {
  bool fixed_width = true;         // vectors of a fixed width (not HWY_HAVE_SCALABLE)
  int acc_lanes[kElemCount] = {};  // lanes of a vector of each Elem's accumulator (at most, if scalable)
};

/// Whether targets of width `fixed_width` with `acc_lanes` accumulator lanes (of the problem's
/// element) choose kernel `k` (`planned`), or have its code (`compiled`; a scalable-only kernel's
/// code is everywhere). Both the planner and the kernels ask these.
constexpr bool reduce_kernel_planned(ReduceKernel k, bool fixed_width, int acc_lanes) noexcept {
  switch (kReduceKernels[static_cast<int>(k)].targets) {
    case ReduceTargets::any: return true;
    case ReduceTargets::fixed: return fixed_width;
    case ReduceTargets::fixed_slots: return fixed_width && acc_lanes <= kPeriodicSlots;
    case ReduceTargets::scalable: return !fixed_width;
  }
  return false;
}
constexpr bool reduce_kernel_compiled(ReduceKernel k, bool fixed_width, int acc_lanes) noexcept {
  return kReduceKernels[static_cast<int>(k)].targets == ReduceTargets::scalable ||
         reduce_kernel_planned(k, fixed_width, acc_lanes);
}
/// The kernel that runs `k` on such a target: k, or its general kernel if the target lacks k's code.
constexpr ReduceKernel reduce_kernel_on(ReduceKernel k, bool fixed_width, int acc_lanes) noexcept {
  return reduce_kernel_compiled(k, fixed_width, acc_lanes) ? k : kReduceKernels[static_cast<int>(k)].general;
}

/// Lanes-order items whose rows (strips) are at most kPrefetchRowBytes long (where
/// reduce_prefetch_short_rows(), or, read row by row, where reduce_prefetch_rows_along()),
/// periodic items (any w) of one dense run of one leaf and at most
/// kPrefetchRowBytes, and periodic items (w = 1) of one dense run of more than one leaf (where
/// reduce_prefetch_long_runs()) are prefetched ReduceProblem::prefetch_items ahead: about
/// reduce_prefetch_bytes() of source in flight (along the rows: reduce_prefetch_along_bytes()),
/// where that is not 0.
inline constexpr int64_t kPrefetchRowBytes = 4096;
inline constexpr int64_t kPrefetchAheadBytes = 16 << 10;
/// The distance of the prefetch along the rows (reduce_prefetch_along_bytes) where
/// TESSERA_PREFETCH_BYTES does not set it.
inline constexpr int64_t kPrefetchAlongBytes = 4 << 10;
/// The largest distance TESSERA_PREFETCH_BYTES sets (a larger value means this one).
inline constexpr int64_t kPrefetchMaxBytes = 1 << 20;
/// How far the segment groups prefetch their one-byte counts ahead of the step that reads them
/// (ReduceProblem::seg_counts_ahead_bytes; bytes, one count a byte): 256 steps of 16 segments on
/// AVX-512, 512 of 8 on AVX2.
inline constexpr int64_t kSegCountsAheadBytes = 4 << 10;
/// The cache line the kernels' prefetches step by (bytes).
inline constexpr int64_t kPrefetchLineBytes = 64;

/// Bytes of source the reduction kernels prefetch ahead of the item they sum (items as above), 0
/// for none: a property of the core's hardware prefetchers, measured per kind of core. The
/// environment variable TESSERA_PREFETCH_BYTES (decimal digits, at most kPrefetchMaxBytes) if set, else kPrefetchAheadBytes
/// on AMD CPU family 26 (Zen 5) and on Intel CPUs with a mesh L3 (intel_mesh_l3), 0 on every
/// other CPU. Read once. Measured on 2 vCPUs of AMD EPYC (64 MiB float32 gradients, 1 thread): on
/// family 26, nchw_bwd 2.6x and column_bwd ~1.5x faster with it; on family 25 (Zen 4) slower with
/// any distance from 2 KiB on (nchw_bwd, mixed3d_bwd 1.3-1.9x, column_bwd 1.2-1.6x, rep_mid_bwd
/// 1.1-1.7x), where the hardware prefetchers alone read these at 80-95% of the read limit. On 2
/// vCPUs of an Intel Xeon of family 6 model 207 (L3 300 MiB; 2026-11-29,
/// bench/results/2026-11-29-xeon-f6m207/prefetch-distance-df8fa22.txt): column_bwd 1.32x (1
/// thread) and 1.36x (2) faster at 16 KiB, but the lanes path's short rows mixed (mixed3d_bwd
/// 0.85x, nchw_bwd 1.13x, rep_mid_bwd 0.88-0.97x) with each item's lines prefetched at once:
/// there the periodic runs take it, the short items read row by row, along their rows, and the
/// other items of short rows a shorter distance (reduce_prefetch_short_rows_bytes).
int64_t reduce_prefetch_bytes() noexcept;

/// Whether the lanes path's items of short rows are prefetched (the periodic path's short runs
/// are wherever reduce_prefetch_bytes() is not 0), all of an item's lines before the item
/// reduce_prefetch_short_rows_bytes() ahead. Read once.
bool reduce_prefetch_short_rows() noexcept;

/// How far ahead the lanes path's items of short rows are prefetched (bytes of items, rounded up
/// to whole items; 0: not at all): TESSERA_PREFETCH_BYTES if set; reduce_prefetch_bytes() on
/// AMD CPU family 26; kPrefetchShortRowsBytes on Intel CPUs with a mesh L3 (intel_mesh_l3) but
/// those reporting family 6 model 167, 0 there and on every other CPU. On a Xeon reporting family
/// 6 model 207 (2026-12-06, bench/prefetch_distance.py, bench/results/2026-12-06-xeon-f6m207/
/// prefetch-short-rows.txt) mixed3d_bwd's items of 16 rows of 256 bytes read at 62-64% of `read`
/// without, 73-77% 2-4 KiB ahead and 61-66% 16 KiB ahead (df8fa22 there: 0.85x at 16 KiB). Read
/// once.
int64_t reduce_prefetch_short_rows_bytes() noexcept;
inline constexpr int64_t kPrefetchShortRowsBytes = 4 << 10;

/// Whether the periodic path's long runs (w = 1: one dense run of more than one leaf per item,
/// reduce.periodic.reg16: bc_cols_bwd's rows) take reduce_prefetch_bytes() too: with
/// TESSERA_PREFETCH_BYTES set, and on Intel CPUs with a mesh L3 (intel_mesh_l3), whose hardware
/// prefetchers left such runs at 61-66% of the read limit (on a Xeon reporting family 6 model
/// 167, L3 480 MiB: bc_cols_bwd at 100-109% without, at 73-76% with each leaf's lines prefetched
/// at once, at 97-108% with them spread among the loads, as there now
/// (reduce_prefetch_runs_spread): tessera_probes, 2026-12-02 17:30-18:05 UTC on f092360's tree
/// and the change in turn, bench/results/2026-12-02-xeon-f6m167/); not elsewhere (on AMD family 25 the
/// periodic paths read at 103-113% of it without; family 26's long runs are not measured with
/// it). Read once.
bool reduce_prefetch_long_runs() noexcept;

/// Whether the periodic path's prefetched runs (reduce.periodic.rows' one-by-one items and
/// reduce.periodic.reg16's long runs) have their lines prefetched spread among the loads (each
/// block's lines as the same block of the item summed is added: ReduceProblem::prefetch_spread)
/// rather than a whole item (rows) or leaf (reg16) at once before it is summed. The environment
/// variable TESSERA_PREFETCH_SPREAD (0 or 1) if set, else by the kind of core (measured; see
/// the policy in reduce_planner.cpp). Read once.
bool reduce_prefetch_runs_spread() noexcept;

/// Whether the lanes path's short items read row by row (ReduceProblem::rows_whole: 2 ... kLeaf
/// addend rows of at most kWholeRowsItemBytes in all) are prefetched reduce_prefetch_along_bytes()
/// ahead, each line prefetched as the same line of the item prefetch_items before it is read
/// (ReduceProblem::prefetch_along_rows): with TESSERA_PREFETCH_BYTES set above 0 (which so changes how AMD
/// family 26 prefetches these items too), and on Intel CPUs with a mesh L3 (intel_mesh_l3). On a
/// Xeon of family 6 model 207 (tessera_probes, 2026-12-02,
/// bench/results/2026-12-02-xeon-f6m207/probes-rows-along.txt: rep_mid_bwd's items of four 1 KiB
/// rows, nchw_bwd's of four 512-byte rows) the plans read at 55% and 67% of `read` without and at
/// 75% and 92% so, 16 KiB of items ahead; the items' lines all prefetched before each item
/// (reduce_prefetch_short_rows) had measured as often slower. Not on AMD family 26, whose short
/// items keep that (measured) way, nor elsewhere. reduce.lanes.reg.tree4's short items (9-32
/// addends, rows of at most kTreeRowVecs vectors, read row by row) so too where short rows are
/// prefetched (reduce_prefetch_short_rows()), instead of all their lines at once: on the model 207
/// mixed3d_bwd 1.06x / 1.06x faster (bench/compare against 9d9b311, 2026-12-06,
/// bench/results/2026-12-06-xeon-f6m207/compare-9d9b311-186f9dc.txt). Read once.
bool reduce_prefetch_rows_along() noexcept;

/// How far ahead the items prefetched along their rows are (bytes of items, rounded up to whole
/// items; 0 where reduce_prefetch_rows_along() is false): TESSERA_PREFETCH_BYTES if set, else
/// kPrefetchAlongBytes. On the Xeon of family 6 model 207 any distance of 2-16 KiB read the same
/// (rep_mid_bwd 68-79%, nchw_bwd 72-98% of `read`); on 2 vCPUs of an Intel Xeon reporting family 6
/// model 167 (L3 480 MiB, 2026-12-02 17:50-18:00 UTC, tessera_probes on f092360's tree with the
/// prefetches into L2) nchw_bwd read at 86% of `read` 16 KiB ahead, 95% 4 KiB ahead and 98%
/// without, rep_mid_bwd at 104%, 105% and 92%.
int64_t reduce_prefetch_along_bytes() noexcept;

/// How far ahead along its own rows reduce.lanes.reg.leaf reads an item of long rows (bytes; 0:
/// not at all): items of one leaf (up to kLeaf addends) read a vector at a time across their rows,
/// not rows_whole, whose rows (the strip) are longer than kPrefetchRowBytes and than this distance
/// (ReduceProblem::prefetch_ahead_bytes: each row's line this many bytes on prefetched as the
/// row's vector is read, while that line lies in the row, and from there the same row of the next
/// item of the task from its start); so too reduce.lanes.leaves' contiguous rows of the same
/// length, a leaf of up to kLeaf rows at a time, each leaf's rows on into the next leaf's of the
/// task. TESSERA_PREFETCH_BYTES if set;
/// kPrefetchLongRowsBytes on Intel CPUs with a mesh L3 (intel_mesh_l3) but those reporting family
/// 6 model 167 (not measured with it there), 0 there and on every other CPU (on AMD family 25 a
/// software prefetch ahead of each addend row cost these items 10-40%). On a Xeon reporting family
/// 6 model 207 the float64 sums of float32 leave its hardware prefetchers behind: a plain sum of a
/// 64 MiB gradient in memory order read at 63-70% of `read` in float64 and 85-93% with each line 4
/// KiB on prefetched (tessera_probes, 2026-12-06, bench/results/2026-12-06-xeon-f6m207/
/// probes-double-sums.txt); outer_bwd's 4 rows of 64 KiB items ran 1.16x / 1.09x faster (1 / 2
/// threads) 2 KiB along them, inner_bwd's rows of 8 KiB within 1% (bench/compare against
/// 181620f, compare-181620f-long-rows.txt; 4 KiB: outer_bwd 1.09x / 1.07x, inner_bwd 0.91x at two
/// threads in a noisier hour); with the rows' ends prefetching the next item's starts, inner_bwd
/// 1.15x / 1.15x (against 9d9b311, compare-9d9b311-long-rows-next.txt), and the leaves so,
/// bc_rows_bwd 1.10x / 1.05x (compare-9d9b311-leaves-next.txt). Read once.
int64_t reduce_prefetch_long_rows_bytes() noexcept;
inline constexpr int64_t kPrefetchLongRowsBytes = 2 << 10;

/// Lanes-order items of 2 ... kLeaf addend rows of at most kWholeRowsItemBytes in all are read a
/// row at a time, each from its start to its end (ReduceProblem::rows_whole).
inline constexpr int64_t kWholeRowsItemBytes = 16 << 10;

/// One axis of a reduction problem: `extent` indices, `src_stride` bytes apart in the input;
/// a kept axis moves the output by `dst_stride` elements (0 for a reduced axis).
struct RAxis {
  int64_t extent;
  int64_t src_stride;
  int64_t dst_stride;
  bool kept;
};

inline constexpr int kMaxRAxes = 2 * max_ndim + 1;

/// A reduction problem as the kernels see it (a plan's whole problem, or one segment's).
struct ReduceProblem {
  Elem elem = Elem::f32;
  std::size_t elsize = 0;  // bytes per kernel element (a complex's real part)
  int naxes = 0;
  RAxis axes[kMaxRAxes];  // outer -> inner, interleaved as in the source; extent-1 axes dropped
  ReducePath path = ReducePath::none;
  ReduceKernel kernel = ReduceKernel::none;
  int64_t out_elems = 0;    // kernel elements written (the output's elements, x2 for complex)
  int64_t nred = 0;         // addends per output element (the product of the reduced extents)
  // The kept axes outside the item (outer -> inner) and the item's shape:
  //   lanes, strided, interleaved: an item is a strip of `strip` elements of the innermost kept
  //   axis (extent `width`, source stride `inner_stride`); periodic: an item is one output row of
  //   `width` elements (w; 1 when the reduced run is innermost).
  int nouter = 0;
  int outer[kMaxRAxes];  // indices into axes
  int64_t width = 1;
  int64_t inner_stride = 0;
  int64_t inner_dst_stride = 1;  // elements (1 but in a segment's sub-problem)
  int64_t strip = 1;
  int64_t nitems = 0;
  // The reduced axes (indices into axes, outer -> inner) the kernels walk per output element;
  // periodic: all but the run.
  int nreduced = 0;
  int reduced[kMaxRAxes];
  // periodic: the run (R elements or rows, source stride run_stride bytes) and the slots P.
  int64_t run = 0;
  int64_t run_stride = 0;
  int64_t slots = 0;
  // Leaves per output element (lanes: ceil(nred / kLeaf); periodic: ceil(blocks / kLeaf)).
  int64_t nleaves = 0;
  // The kernels prefetch the source of the item this many items ahead (0: none). Set by
  // lay_out_reduce, on cores whose hardware prefetchers do not run far enough ahead on their own
  // (reduce_prefetch_bytes() > 0), for:
  //   lanes path, items of short rows (they follow runs within a 4 KiB page; an item of short
  //   rows is a few lines in each of its pages), reduce_prefetch_short_rows_bytes() ahead where
  //   reduce_prefetch_short_rows(), or, for
  //   rows_whole items, along their rows where reduce_prefetch_rows_along()
  //   (prefetch_along_rows); only with nred <= kRegLeaves * kLeaf (the kernels hold the addends'
  //   offsets);
  //   periodic path, any w, one dense run of one leaf per item (no other reduced axis) of at most
  //   kPrefetchRowBytes along one kept axis (reduce.periodic.rows.w1, reduce.periodic.rows): many
  //   instructions per line (a fold per item) keep too few lines in flight (column_bwd read at 60%
  //   of the limit without, narrow_bwd's rows of w = 3 at 57%);
  //   periodic path, w = 1, one dense run of more than one leaf per item (reduce.periodic.reg16),
  //   where reduce_prefetch_long_runs(): the kernel prefetches the item this many on leaf by
  //   leaf before it sums the same leaf of this item, or block by block as it sums the same block
  //   (prefetch_spread).
  //   The distance is reduce_prefetch_bytes() of items, rounded up to whole items, but for items
  //   prefetched along their rows: reduce_prefetch_along_bytes(). Every prefetch brings its line
  //   into L2 (the kernels' PrefetchLine), but the segment groups'.
  //   segments_runs' groups (seg_group_count > 0; set by lay_out_segments): elements, not items —
  //   each row prefetched this many elements ahead of the group step reading it, the lines a step
  //   reads at most (C on AVX-512) each step, into L1 (min(reduce_prefetch_bytes(),
  //   kPrefetchAlongBytes) of the element type).
  //   choose_reduce_kernel sets it back to 0 where the chosen kernel has no prefetch (the column
  //   `prefetches` of kReduceKernels: e.g. reduce.periodic.leaves, which a scalable target, or
  //   an element whose accumulators have more than 16 lanes, gets for both kinds of periodic
  //   runs). A target without the item's kernel (KernelFor) runs it unprefetched.
  int64_t prefetch_items = 0;
  // Periodic path, items prefetched (prefetch_items > 0) by reduce.periodic.rows one by one or by
  // reduce.periodic.reg16: each block's lines of the item prefetch_items on prefetched as the same
  // block of this item is added (spread among the loads), or, false, the whole item
  // (periodic.rows) or each leaf (reg16) before it is summed. Set by lay_out_reduce from
  // reduce_prefetch_runs_spread(); the kernels obey.
  bool prefetch_spread = false;
  // Lanes path, 2 ... kLeaf addends, items of at most kWholeRowsItemBytes (set by lay_out_reduce):
  // the reg.leaf kernel reads an item's addend rows one after another, each from its start to its
  // end, its sums in registers (at most 16 vectors of them) or else in a scratch row in L1. Read a
  // vector at a time across the rows instead, an item's rows walk its pages out of order (row 0's
  // line 0, row 1's line 0, ...), which the hardware prefetchers follow at a third to half the
  // speed (rep_mid_bwd's 4 rows of 1 KiB: 2.2x slower on AMD family 25; nchw_bwd on family 26).
  // Longer items keep that walk: the scratch row's loads and stores cost more than it saves
  // (rows of 4 KiB x 8 addends: 1.2x slower; 8 KiB x 4: 1.35x). The same additions either way.
  // Also reduce.lanes.reg.tree4's items (9 ... kUnrolledLeaves * kLeaf addends) of at most
  // kTreeRowVecs vectors of accumulators a row (set by choose_reduce_kernel, which knows the
  // lanes), their sums in registers.
  bool rows_whole = false;
  // Lanes path, rows_whole items prefetched (prefetch_items > 0) by reduce.lanes.reg.leaf as they
  // are read: each line of item prefetch_items on as the same line of this item is read (a steady
  // stream of prefetches, as the rows are read), not all of that item's lines before this one.
  // Set by lay_out_reduce where reduce_prefetch_rows_along(), cleared by choose_reduce_kernel for
  // any other kernel; set by choose_reduce_kernel for reduce.lanes.reg.tree4's rows_whole items
  // where short rows are prefetched (reduce_prefetch_short_rows()) and along the rows.
  bool prefetch_along_rows = false;
  // reduce.interleaved.pair_f32 (set by choose_reduce_kernel where reduce_prefetch_rows_along()),
  // and reduce.lanes.reg.leaf's items of long rows read across the rows (set by
  // choose_reduce_kernel: reduce_prefetch_long_rows_bytes()):
  // bytes of an item's source prefetched ahead of its loads, each line as the line this many bytes
  // before it is read (within the item; for reg.leaf within each addend row and on into the same
  // row of the task's next item), 0 for none. Also reduce.lanes.leaves' contiguous long rows (set by
  // choose_reduce_kernel): each leaf's rows so, on into the next leaf's of the task.
  // rep2_bwd's pairs, 16 KiB items of contiguous float32, read at 74% of `read` without and
  // 80-82% 4 KiB ahead, 79-80% 2 KiB, 82-83% 8 KiB
  // (bench/run --filter rep2_bwd, alternating, 2026-12-02, the Xeon reporting family 6 model 167):
  // one load and one streamed store per 128 bytes leave the hardware prefetchers behind too.
  int64_t prefetch_ahead_bytes = 0;
  // segments_runs (the plan's seg_many; set by lay_out_segments): 1 ... kSegGroupMaxCount where
  // every count is at most this, the element float32, the outputs contiguous and the one-byte
  // counts kept (Prefix::counts8); 0 otherwise. The kernel then sums 2N segments per step
  // (SegmentGroups, N the accumulator's lanes): their offsets from the counts' bytes (the 8-byte
  // prefix sums read only where a range starts and in its tail), elements i and i + 1 of each
  // picked from the window of its group by one permutation (two steps in its two halves), for
  // exactly this many steps. The same additions as one segment at a time.
  int64_t seg_group_count = 0;
  // segments_runs' groups (seg_group_count > 0; set by lay_out_segments): bytes of the one-byte
  // counts prefetched ahead of the step reading them (kSegCountsAheadBytes, whatever
  // TESSERA_PREFETCH_BYTES says but 0), a line's address each step, into L1, inside the kernel
  // call's range of segments; 0 for none (where the gradient is not prefetched either:
  // prefetch_items 0).
  int64_t seg_counts_ahead_bytes = 0;
  // Output written with non-temporal stores (the lanes and interleaved paths, segments_runs'
  // groups): set by the planner from Options::nontemporal and the output's size (as the copying
  // operations decide).
  bool stream = false;
  // Bytes of scratch a kernel call takes from its thread's arena (thread_scratch, reduce_scalar.hpp):
  // the binary counter's levels and two rows, each of item_row's width at most.
  int64_t scratch_bytes = 0;

  /// Items per output row of the innermost kept axis: its strips (periodic: 1, the row).
  int64_t strips_per_row() const noexcept { return path == ReducePath::periodic ? 1 : (width + strip - 1) / strip; }
  /// Elements of strip s (0 <= s < strips_per_row()): the last of a row may be shorter.
  int64_t strip_elems(int64_t s) const noexcept { return width - s * strip < strip ? width - s * strip : strip; }
  /// Accumulators of an item's row: the P slots (periodic), or the elements of its strip.
  int64_t item_row(int64_t item) const noexcept {
    return path == ReducePath::periodic ? slots : strip_elems(item % strips_per_row());
  }
};

/// A reduction plan: the problem, plus what describe() and the executor need; PlanBase holds what
/// Plan's accessors return (options: accumulate, max_threads and nontemporal as validated).
struct ReducePlan : PlanBase {
  DType dtype = DType::float32;
  Dims grad_shape, grad_strides;  // the input (the gradient in), strides in bytes
  Dims reps, target;              // tile_backward's reps, sum_to_shape's target
  int axis = -1;                  // repeat_backward: the normalized axis, -1 for none
  int64_t repeats = 0;            // repeat_backward: the scalar count, kSegmentReps for counts
  ReduceProblem problem;
  // repeat_backward with per-element counts: axis `seg_axis` of problem.axes is the kept segment
  // axis (its src_stride is 0); its index k sums the prefix[k + 1] - prefix[k] elements from
  // prefix[k] * seg_stride on, along the reduced axis `seg_red` (extent 0 in the problem).
  Prefix prefix;
  int seg_axis = -1;
  int seg_red = -1;
  int64_t seg_stride = 0;
  // The segments' sub-problems, simplified at plan time (segment_problem derives a segment's from
  // them): of a count of 1 (the reduced axis dropped) and of a count of 2 or more (the reduced
  // axis at index seg_red_at); and the target's capabilities the segments' kernels are chosen for.
  ReduceProblem seg_one, seg_many;
  int seg_red_at = -1;
  int64_t seg_max_count = 0;  // the largest count
  // The sub-problems of counts 1..size() (kernel segments): planned[c - 1] is segment_problem(c).
  std::shared_ptr<const std::vector<ReduceProblem>> seg_planned;
  // Bytes of gradient the segments' kernel (reduce.segments) prefetches ahead of what it reads, 0
  // for none (set by lay_out_segments): where every planned sub-problem is one item of
  // reduce.lanes.reg.leaf whose addend rows, of at most kPrefetchRowBytes, lie back to back (the
  // segments then read the gradient as one stream from its start to its end), each line is
  // prefetched as the line this many bytes before it is read: the following segments' rows
  // (reduce_prefetch_along_bytes(), where reduce_prefetch_rows_along()). Those sub-problems are
  // then read a vector at a time across their rows (rows_whole cleared).
  int64_t seg_prefetch_bytes = 0;
  ReduceCaps caps;
};

/// The element count of a shape whose extents are non-negative and whose count is known to fit
/// int64 when it is not 0 (checked by the planner): 0 if any extent is 0, without multiplying.
inline int64_t count_of(const Dims& shape) noexcept {
  for (int i = 0; i < shape.size(); ++i)
    if (shape[i] == 0) return 0;
  int64_t n = 1;
  for (int i = 0; i < shape.size(); ++i) n *= shape[i];
  return n;
}

/// The kernels' element of a dtype, and its bytes.
Elem elem_of(DType dtype) noexcept;
/// Bytes of an accumulator of `elem` (f32: 8, f16/bf16: 4, f64: 8, integers: their own).
std::size_t acc_size(Elem elem) noexcept;

/// Planners (reduce_planner.cpp). Throw InvalidArgument / Overflow naming the bad value.
ReducePlan make_tile_backward(const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                              const Dims& reps, const Options& options);
ReducePlan make_sum_to_shape(const Dims& shape, const Dims& strides, DType dtype, const Dims& target,
                             const Options& options);
ReducePlan make_repeat_backward(const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                                const Repeats& repeats, bool has_axis, int axis,
                                const Options& options);

/// The planner's steps for a problem whose axes are pushed (plan_problem runs them in order); each
/// is a function of the problem (and the capabilities given), never of threads or the data.
/// simplify_reduce: drops extent-1 axes, merges affine neighbours of the same kind, counts the
/// output elements and the addends (path none or zeros when an extent is 0).
void simplify_reduce(ReduceProblem& p) noexcept;
/// choose_reduce_path: the order of additions and the item's shape (path, width).
void choose_reduce_path(ReduceProblem& p) noexcept;
/// lay_out_reduce: the outer and reduced axes, the leaves, the strips, the items and the scratch.
void lay_out_reduce(ReduceProblem& p) noexcept;
/// choose_reduce_kernel: the kernel for a target with `caps` (the output accumulated or not).
void choose_reduce_kernel(ReduceProblem& p, const ReduceCaps& caps, bool accumulate) noexcept;
/// All four steps.
void plan_problem(ReduceProblem& p, const ReduceCaps& caps, bool accumulate) noexcept;

/// Segment k's sub-problem of a segment plan (r.seg_axis >= 0), `count` (> 0) addends: r's
/// plan-time sub-problem for the count, with the count's extent, path, layout and kernel.
void segment_problem(const ReducePlan& r, int64_t count, ReduceProblem& out) noexcept;
/// The sub-problem of `count` (> 0) addends the executor runs: the planned one (r.seg_planned) for
/// counts up to its size, else laid out into `scratch` by segment_problem.
inline const ReduceProblem& segment_of(const ReducePlan& r, int64_t count, ReduceProblem& scratch) noexcept {
  if (r.seg_planned && count <= static_cast<int64_t>(r.seg_planned->size()))
    return (*r.seg_planned)[static_cast<std::size_t>(count - 1)];
  segment_problem(r, count, scratch);
  return scratch;
}

/// Multi-line description (Plan::describe).
std::string describe_reduce(const ReducePlan& r);

/// The name Plan::kernel_path() gives the plan: its kernel's (kReduceKernels).
const char* reduce_path_name(const ReducePlan& r) noexcept;
/// Every name reduce_path_name can give, in order (Plan::kernel_paths()).
std::vector<const char*> reduce_path_names();

}  // namespace tessera::detail

#endif  // TESSERA_LIB_REDUCE_HPP
