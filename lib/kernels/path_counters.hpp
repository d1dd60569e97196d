// Executed-path counters (test builds only: meson configure -Dpath_counters=true, which defines
// TESSERA_PATH_COUNTERS=1 for the library and the test suite; tests/run turns it on for
// build/tests). The planner decides a plan's Path once (plan.hpp); kernels/rows.cpp counts the
// Path each range of output elements actually ran, per Highway target — once per range, never per
// row or element — so that the guard suite can show every path ran on every target that plans it
// and that what ran is what Plan::kernel_path() said.
//
// Inside the paths, TESSERA_COUNT_VARIANT counts the sub-kernel (Variant) the code chooses, at the
// branch that chooses it (pattern.shuffle's fall-back to FillPattern, the blocked gather's row
// fall-back, the reductions' register trees, short-run folds, ...): a thread-local tally, added
// to the per-target counters when the kernel entry point returns.
//
// Without TESSERA_PATH_COUNTERS, the TESSERA_COUNT_* macros expand to nothing (their arguments are
// not evaluated) and nothing else is declared: a normal build carries no counter.
//
// Included by kernels/rows.cpp (the counting site), kernels/path_counters.cpp (the storage and
// the accessors) and tests/test_guard.cpp (the accessors).
#ifndef TESSERA_LIB_KERNELS_PATH_COUNTERS_HPP
#define TESSERA_LIB_KERNELS_PATH_COUNTERS_HPP

#include <tessera/tessera.h>  // TESSERA_API

#include <cstdint>

#include "plan.hpp"
#include "reduce.hpp"

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
#include <atomic>

namespace tessera::detail {

/// The counters' slot of a Highway target (a single HWY_* bit): its bit number.
constexpr int ExecTargetSlot(int64_t target) {
  int slot = 0;
  for (uint64_t t = static_cast<uint64_t>(target); t > 1; t >>= 1) ++slot;
  return slot;
}
inline constexpr int kExecTargetSlots = 64;

/// [target slot][Path]; relaxed increments (only the totals matter, read after the calls return).
extern std::atomic<uint64_t> g_exec_path_counts[kExecTargetSlots][kPathCount];

/// How many ranges ran `path` (a Path's index) on Highway target `target` (an HWY_* bit) since
/// the last reset.
TESSERA_API uint64_t executed_path_count(int64_t target, int path) noexcept;
/// Sets every counter of every target to 0 (the reductions' too).
TESSERA_API void reset_executed_path_counts() noexcept;

/// The reductions' counters: [target slot][ReduceKernel], one count per kernel call (a range of
/// items, or one leaf range of an item) of the kernel that ran (the plan's, or on a target
/// without its code its general one; a leaf range runs its path's general kernel).
extern std::atomic<uint64_t> g_exec_reduce_counts[kExecTargetSlots][kReduceKernelCount];
/// How many kernel calls ran reduction kernel `kernel` (a ReduceKernel's index) on `target`.
TESSERA_API uint64_t executed_reduce_kernel_count(int64_t target, int kernel) noexcept;
/// How many kernel calls ran a kernel of reduction path `path` (a ReducePath's index) on `target`.
TESSERA_API uint64_t executed_reduce_path_count(int64_t target, int path) noexcept;
/// Bit k set: the dispatched target is chosen for ReduceKernel k for some element type
/// (reduce_kernel_planned; the executor's none, zeros and segments excluded).
TESSERA_API uint64_t reduce_kernels() noexcept;
static_assert(kReduceKernelCount <= 64, "reduce_kernels() is a 64-bit mask");

/// The sub-kernels (variants) the kernels choose inside a path, counted where the choice is made
/// (a path's counter above says which path a range was handed; these say which code then ran).
/// Each name is "<path or function>:<the function or branch taken>" as the code names it; the
/// comment gives the file and function where it is counted.
enum class Variant : int {
  // kernels/rows.cpp, WithRowFn: a row piece of pattern.shuffle(.nt)
  pattern_shuffle_table,     // FillShortPattern: a piece from the run's start, at least a vector
  pattern_shuffle_fallback,  // FillPattern: a piece that starts mid-run or is shorter than a vector
  // kernels/gather-inl.h, ExecuteGather with a blocked path (gather.*.blocked, gather.*.nt)
  gather_blocked_tiles,      // whole rows through the L1 tile, one output copy
  gather_blocked_replicas,   // the same for a range handed with copies > 1 (the executor, from
                             // CopyPlan::replica_elems): each tile row written to every replica
  gather_blocked_rows,       // a range of fewer than two whole rows: rows one by one (into every
                             // replica with copies > 1)
  // kernels/rows.cpp, ExecuteRange: a range handed with copies > 1 on a path other than the
  // blocked gather (CopyPlan::replica_step_elems)
  range_replica_steps,       // the range in steps, each written to every replica
  // kernels/row_kernels-inl.h, RepeatStream (repeat.shuffle.nt.direct)
  repeat_stream_spilled,     // an output whose elements straddle lines: the piece through StreamJoin
  // kernels/row_kernels-inl.h, StreamJoin::Put (the direct streaming paths' pieces), vector
  // targets of a fixed width
  stream_join_rotated,       // StreamVectorsRotated: a source off its vector boundaries by whole
                             // 4-byte lanes, loaded on them and rotated into dst's vectors
  // kernels/row_kernels-inl.h, FillPattern (pattern.short/long, fills of odd sizes, the fall-back
  // above, regions): which way a run is replicated
  fill_pattern_few_runs,     // a few short runs from phase 0: each copied from the source
  fill_pattern_long_runs,    // runs of kLongRunBytes or more: each copied again from the source
  fill_pattern_doubling,     // one period written, then doubled from the output up to a block
  // kernels/reduce.cpp (the kernels themselves are counted as ReduceKernel, above; these are the
  // choices inside them): Kernels::RowsW1 / RowsW, reduce.periodic.rows(.w1)
  periodic_run1_n,           // ShortRun1N: w = 1, N items per vector of results
  periodic_run1,             // ShortRun1: w = 1, one item
  segment_runs_n,            // SegmentRuns: N segments per vector of results
  segment_groups,            // SegmentGroups: 2N float32 segments per step from the one-byte counts
  segment_items_ahead,       // SegmentItems: a segment's rows read with the lines prefetch_bytes on
                             // prefetched (the plan's seg_prefetch_bytes: compiled_variants() has it
                             // only where the process's prefetch policy plans it)
  pair_f32_ahead,            // PairRowF32: an item's float32 pairs read with the lines
                             // prefetch_ahead_bytes on prefetched (as segment_items_ahead)
  periodic_run3_n,           // ShortRun3N: w = 3, N items at once (not on 8-lane accumulators)
  periodic_rows_shortrun,    // ShortRunAny per item
  // reduce.periodic.rows' items one by one and reduce.periodic.reg16's long runs, prefetched
  // (compiled_variants() has each only where the process's prefetch policy plans it):
  periodic_prefetch_spread,   // each block's lines as the same block is added (prefetch_spread)
  periodic_prefetch_at_once,  // an item's (rows) or a leaf's (reg16) lines before it is summed
  // Kernels::ShortRunAny: which fold
  shortrun_3x8,              // ShortRun3x8: P = 48, w = 3 on 8-lane float accumulators
  shortrun_16,               // ShortRun<16>
  shortrun_48,               // ShortRun<48>
  shortrun_80,               // ShortRun<80>
  // Kernels::RegTreeItem, reduce.lanes.reg.leaf and reduce.lanes.reg.tree4
  lanes_reg_leaf_rows,       // RegTreeItem<K>, a short item: its K rows read one after another
  lanes_reg_leaf_rows_scratch,  // RegTreeItem<K>, rows_whole past kRowVecs vectors: the sums in scratch
  lanes_reg_leaf_rows_along,  // RegTreeItem<K>, rows_whole, an item prefetched along its rows
                              // (prefetch_along_rows: compiled_variants() has it only where the
                              // process's prefetch policy plans it, reduce_prefetch_rows_along())
  lanes_reg_leaf_long_rows_ahead,  // Item, reduce.lanes.reg.leaf: an item of long rows read with each row's
                                   // line prefetch_ahead_bytes on prefetched (compiled_variants() has it
                                   // only where reduce_prefetch_long_rows_bytes() > 0)
  lanes_reg_leaf_long_rows_next,   // Item, the same, with an item after it in the task: the rows' last
                                   // lines prefetch the next item's first (the same condition)
  lanes_reg_tree_n_rows,     // RegTreeItem<0, NL>, a short item: the leaves' rows one after another
  lanes_reg_tree_n_rows_along,  // the same, prefetched along its rows (prefetch_along_rows: compiled_variants()
                                // has it only where reduce_prefetch_rows_along() and reduce_prefetch_short_rows())
  // Kernels::LanesLeaves: a leaf's addend rows
  leaves_rows,               // contiguous rows: LeafRows
  leaves_rows_strided,       // strided rows: AccRowStrided
  leaves_rows_ahead,         // contiguous long rows prefetched along themselves (prefetch_ahead_bytes:
                             // compiled_variants() has it only where reduce_prefetch_long_rows_bytes() > 0)
  leaves_rows_next,          // the same, the rows' last lines prefetching the next leaf's first
  // ReducePartial / ReduceFinish: the executor's split of few items into leaf ranges
  split_lanes_leaves,        // Partial: LanesLeaves over a leaf range
  split_periodic_leaves,     // Partial: PeriodicLeaves over a leaf range
  split_finish,              // Finish: the combined accumulators rounded into the output
  count_
};
inline constexpr int kVariantCount = static_cast<int>(Variant::count_);
inline constexpr const char* kVariantNames[kVariantCount] = {
    "pattern.shuffle:FillShortPattern",
    "pattern.shuffle:FillPattern",
    "gather.blocked:tiles",
    "gather.blocked:tiles.replicas",
    "gather.blocked:rows",
    "ExecuteRange:replica_steps",
    "repeat.shuffle.nt.direct:spilled",
    "StreamJoin:rotated",
    "FillPattern:few_runs",
    "FillPattern:long_runs",
    "FillPattern:doubling",
    "periodic.rows:ShortRun1N",
    "periodic.rows:ShortRun1",
    "segments.runs:N",
    "segments.runs:groups",
    "segments:SegmentItems.ahead",
    "interleaved:PairRowF32.ahead",
    "periodic.rows:ShortRun3N",
    "periodic.rows:ShortRunAny",
    "periodic.rows/reg16:prefetch_spread",
    "periodic.rows/reg16:prefetch_at_once",
    "ShortRunAny:ShortRun3x8",
    "ShortRunAny:ShortRun<16>",
    "ShortRunAny:ShortRun<48>",
    "ShortRunAny:ShortRun<80>",
    "lanes:RegTreeItem<K>.rows",
    "lanes:RegTreeItem<K>.rows_scratch",
    "lanes:RegTreeItem<K>.rows_along",
    "lanes:Item.long_rows_ahead",
    "lanes:Item.long_rows_next",
    "lanes:RegTreeItem<0,NL>.rows",
    "lanes:RegTreeItem<0,NL>.rows_along",
    "LanesLeaves:LeafRows",
    "LanesLeaves:AccRowStrided",
    "LanesLeaves:LeafRows.ahead",
    "LanesLeaves:LeafRows.next",
    "split:LanesLeaves",
    "split:PeriodicLeaves",
    "split:Finish",
};

/// [target slot][Variant]: occurrences (row pieces, items, leaves, calls) per target.
extern std::atomic<uint64_t> g_exec_variant_counts[kExecTargetSlots][kVariantCount];
/// This thread's occurrences since its last flush: a plain increment where the variant is taken
/// (no atomic per row piece or item), added to g_exec_variant_counts when the kernel entry point
/// that counted them returns (VariantScope).
struct VariantTally {
  uint64_t n[kVariantCount];
};
extern thread_local VariantTally t_variant_tally;
/// Adds this thread's tally to target slot `slot`'s counters and zeroes it.
void flush_variant_tally(int slot) noexcept;
/// Flushes this thread's tally to target slot `slot` when it goes out of scope
/// (TESSERA_VARIANT_SCOPE, at each kernel entry point that counts variants).
struct VariantScope {
  int slot;
  explicit VariantScope(int s) noexcept : slot(s) {}
  VariantScope(const VariantScope&) = delete;
  VariantScope& operator=(const VariantScope&) = delete;
  ~VariantScope() { flush_variant_tally(slot); }
};

/// How many times `variant` (a Variant's index) ran on Highway target `target` since the last
/// reset (reset_executed_path_counts resets these too).
TESSERA_API uint64_t executed_variant_count(int64_t target, int variant) noexcept;
/// Bit v set: Variant v is compiled into the dispatched target's code (some variants exist only
/// on vector targets, or only with some vector widths; see kernels/rows.cpp and reduce.cpp).
/// Asks the target Highway dispatches to now (hwy::SetSupportedTargetsForTest forces one).
TESSERA_API uint64_t compiled_variants() noexcept;
/// Its two halves, dispatched to the target's code: kernels/rows.cpp's and kernels/reduce.cpp's.
uint64_t row_variants() noexcept;
uint64_t reduce_variants() noexcept;
static_assert(kVariantCount <= 64, "compiled_variants() is a 64-bit mask");

}  // namespace tessera::detail

// Counted by the per-target code: HWY_TARGET is the target being compiled.
#define TESSERA_COUNT_PATH(path)                                                                          \
  ::tessera::detail::g_exec_path_counts[::tessera::detail::ExecTargetSlot(HWY_TARGET)][static_cast<int>(path)] \
      .fetch_add(1, std::memory_order_relaxed)

#define TESSERA_COUNT_REDUCE_KERNEL(kernel)                                                    \
  ::tessera::detail::g_exec_reduce_counts[::tessera::detail::ExecTargetSlot(HWY_TARGET)]             \
                                         [static_cast<int>(kernel)]                                  \
                                             .fetch_add(1, std::memory_order_relaxed)

// A variant taken: where the code chooses it (inside a kernel entry point that has a
// TESSERA_VARIANT_SCOPE, which flushes the tally to HWY_TARGET's counters when it returns).
#define TESSERA_COUNT_VARIANT(variant) \
  static_cast<void>(++::tessera::detail::t_variant_tally.n[static_cast<int>(::tessera::detail::Variant::variant)])
#define TESSERA_VARIANT_SCOPE() \
  const ::tessera::detail::VariantScope tessera_variant_scope_(::tessera::detail::ExecTargetSlot(HWY_TARGET))

#else
#define TESSERA_COUNT_PATH(path) static_cast<void>(0)
#define TESSERA_COUNT_REDUCE_KERNEL(kernel) static_cast<void>(0)
#define TESSERA_COUNT_VARIANT(variant) static_cast<void>(0)
#define TESSERA_VARIANT_SCOPE() static_cast<void>(0)
#endif

#endif  // TESSERA_LIB_KERNELS_PATH_COUNTERS_HPP
