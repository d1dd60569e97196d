// The copy plan: what the planner (planner.hpp) makes of a copying operation and the copy
// executor (executor.hpp) runs.
// Internal; no Highway, no TBB here.
//
// Every operation of the family (tile, broadcast_to, expand, repeat) is "replicate a strided input
// into a C-contiguous output", described by a nest: one NestAxis per output axis (a flattening
// repeat has several for its one output axis), each a source axis with an extent and a byte
// stride, replicated `reps` times either as a whole (tile: the rep loop outside the axis) or
// element by element (repeat: the rep loop inside it). At most one axis repeats its elements by
// per-element counts (a segment axis, whose counts' prefix sums the plan keeps).
//
// The planner turns the nest into row loops and one row kernel. The output is seen as `nrows`
// rows of `row_elems` elements; the rows are enumerated by `loops` (outermost first), an odometer
// whose per-loop source byte stride moves the row's source pointer. Each row is written by the
// row kernel of the plan's Path (paths.hpp lists them).
#ifndef TESSERA_LIB_COPY_PLAN_HPP
#define TESSERA_LIB_COPY_PLAN_HPP

#include <tessera/tessera.hpp>

#include <cstddef>
#include <cstdint>

#include "paths.hpp"
#include "plan_base.hpp"
#include "prefix.hpp"

namespace tessera::detail {

/// One axis of the nest (see the file comment): the source axis' `extent` (elements) and byte
/// `stride`, replicated `reps` times — as a whole when !elementwise (tile, broadcast), element by
/// element when elementwise (repeat). A segment axis (elementwise, reps == kSegmentReps) repeats
/// element i counts[i] times (CopyPlan::prefix).
struct NestAxis {
  int64_t extent;
  int64_t stride;
  int64_t reps;
  bool elementwise;
};

/// One entry of the interleaved loop nest (the planner's steps 3-4): `extent` iterations moving
/// the source by `stride` bytes; a segment entry is the segment axis (stride per source index).
struct Entry {
  int64_t extent;
  int64_t stride;
  bool segment;
};

/// One loop over rows: `extent` iterations, moving the source by `src_stride` bytes and the
/// destination by `dst_stride` bytes per iteration. A segment loop (at most one per plan) is the
/// segment axis: its iteration t reads source index i with prefix[i] <= t < prefix[i + 1].
struct Loop {
  int64_t extent;
  int64_t src_stride;
  int64_t dst_stride;
  bool segment;
};

/// Two loops per nest axis at most.
inline constexpr int kMaxLoops = 2 * max_ndim;

/// A copying operation's plan (see the file comment); PlanBase holds what Plan's accessors return.
struct CopyPlan : PlanBase {
  // What was asked.
  Dims in_shape;
  Dims in_strides;  // bytes, after filling in C-contiguous strides
  Dims reps;        // tile: as given (negative ones 0 under NegativeReps::clamp_to_zero); else empty
  Dims target;      // broadcast_to, expand: the shape asked for; else empty
  int axis = -1;    // repeat: the normalized axis, or -1 for none (the flattened input)
  int64_t repeats = 0;                // repeat: the scalar count, or kSegmentReps for per-element counts
  bool fresh_output = false;  // planned for pages the kernel has just zeroed (see choose_path)
  bool shape_only = false;    // output_shape's planning: repeat's counts summed, no prefix sums kept
  bool with_counts8 = true;   // repeat: the one-byte counts written beside the prefix sums (Prefix::counts8)
  // repeat: the largest count the compact prefix sums take (Prefix::compact; at most 254), where the
  // planner knows the kernels walk the one-byte counts; 0: the whole sums.
  int64_t compact_max_count = 0;
  int in_bytes_overflow_axis = -1;  // init_input: the axis where C-contiguous strides overflow

  // The nest (planner's step 1): one axis per output axis, unless `flattened` (a repeat with no
  // axis: one output axis for all the input's axes).
  int nest_size = 0;
  NestAxis nest[max_ndim];
  bool flattened = false;
  Prefix prefix;                // segment axis: extent + 1 prefix sums of the counts (prefix[0] = 0)
  int64_t seg_max_count = 0;    // segment axis: the largest count
  // The segment axis' source as the segments kernel walks it: one axis, or a flattened input's
  // axes (outermost first) in C order.
  int seg_naxes = 0;
  Entry seg_axes[max_ndim];

  // The simplified nest (step 4), innermost first: what choose_path turns into loops and a path.
  int nentries = 0;
  Entry entries[kMaxLoops];

  // The loops and the path; plain_path: the path of the same rows with ordinary stores (path
  // itself where that has them), which a range of the output runs (execute_range's
  // ordinary_stores: a region of a plan that streams).
  Path path = Path::none;
  Path plain_path = Path::none;
  int nloops = 0;
  Loop loops[kMaxLoops];  // the first nloops are set
  int64_t nrows = 0;
  int64_t row_elems = 0;     // elements per row
  int64_t run_bytes = 0;     // pattern: bytes of the repeated run
  int64_t count = 0;         // pattern: runs per row; fill: elements per row; gather, repeat, segments: source elements per row
  int64_t inner_stride = 0;  // gather, repeat, segments: source byte stride between elements
  int64_t inner_reps = 0;    // repeat: copies of each element
  // An output that is `replicas` copies of its first replica of replica_elems elements (an
  // outermost loop that only repeats, source stride 0; or one row that is a pattern of whole
  // runs): the executor hands out ranges of the first, each written to every replica
  // (execute_range's copies), so that the source is read once whatever the threads. A blocked
  // gather writes each tile row to every replica; other paths (a source and replicas of at least
  // half of L2) walk a range in steps of replica_step_elems elements (about 32 KiB: at least 64
  // elements, a multiple of 64, at most the replica), each step written to every replica before
  // the next, its source still in the cache. replica_elems 0 (replicas 1): none.
  int64_t replica_elems = 0;
  int64_t replicas = 1;
  int64_t replica_step_elems = 0;  // 0: a blocked gather's replicas, or none
  // The executor's chunks: whole multiples of chunk_rows_elems elements from the start of what it
  // splits (the output, or the first replica), where there are enough of them for its pieces; 0:
  // whole cache lines at absolute addresses. A blocked gather's row (row_elems): a chunk that
  // starts or ends inside a row gathers that partial row element by element, once per replica.
  int64_t chunk_rows_elems = 0;

  Kernel kernel() const noexcept { return path_info(path).kernel; }
  /// Source elements of the segment axis (0 if none).
  int64_t count_segments() const noexcept { return prefix.empty() ? 0 : static_cast<int64_t>(prefix.size()) - 1; }
  Route route() const noexcept { return path_info(path).route; }
};

}  // namespace tessera::detail

#endif  // TESSERA_LIB_COPY_PLAN_HPP
