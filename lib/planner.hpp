// The planner: an operation's arguments -> CopyPlan, in named steps (oneDNN's reorder planner,
// prb_init / prb_normalize / prb_simplify, is the model):
//
//   1. init_input      options, itemsize, strides checked; C-contiguous strides filled in
//   2. nest_*          the operation's promotion and checks (numpy.tile, numpy.broadcast_to, ONNX
//                      Expand, numpy.repeat): the output shape and one NestAxis per output axis;
//                      each operation's own step, in the operation table (operations.hpp)
//   3. size_output     the output's element count and byte size, checked for overflow
//   4. simplify        the nest interleaved into (extent, stride) entries — a whole-axis rep
//                      outside its axis, an elementwise rep inside — extent-1 entries dropped and
//                      affine pairs merged (merge_affine, shared with plan_region)
//   5. choose_path     the row kernel, its variant and its store route (one Path), from the
//                      entries, the options, whether the output is fresh and what the dispatched
//                      SIMD target has (kernel_caps); the rest of the entries become row loops
//
// plan_region reduces an output region for the region kernel. Everything throws InvalidArgument
// or Overflow (tessera.hpp) naming the bad value before anything is allocated or written.
#ifndef TESSERA_LIB_PLANNER_HPP
#define TESSERA_LIB_PLANNER_HPP

#include "copy_plan.hpp"
#include "region.hpp"

namespace tessera::detail {

/// Whether an outer walk of `outer_stride` bytes per step continues an inner one of `inner_extent`
/// steps of `inner_stride` bytes (the pair is then one affine walk). Shared by the nest steps,
/// simplify and plan_region.
inline bool affine_pair(int64_t outer_stride, int64_t inner_stride, int64_t inner_extent) {
  int64_t span = 0;
  return !__builtin_mul_overflow(inner_stride, inner_extent, &span) && span == outer_stride;
}

/// Throws InvalidArgument naming the field if an option is out of range.
void validate_options(const Options& options);

/// Step 1: the input. An empty `strides` means C-contiguous.
void init_input(CopyPlan& p, const Dims& shape, const Dims& strides, std::size_t itemsize, const Options& options);

/// Step 2, the nest step of each copying operation (defined in operations.cpp, the operation
/// table's room). For tile (numpy.tile): `reps` as given; negative ones act as 0 under
/// NegativeReps::clamp_to_zero (OpenVINO Tile-1).
void nest_tile(CopyPlan& p, const Dims& reps);
/// Step 2 for broadcast_to (numpy.broadcast_to; bidirectional = false) and expand (ONNX Expand,
/// the numpy broadcast of both shapes; bidirectional = true).
void nest_broadcast(CopyPlan& p, const Dims& target, bool bidirectional);
/// Step 2 for repeat (numpy.repeat): the counts (one: the same for every element; int64 or int32, any
/// stride, read in place) along `axis`
/// (negative counts from the end; has_axis false: the flattened input). Negative counts act as 0
/// under NegativeReps::clamp_to_zero.
void nest_repeat(CopyPlan& p, const Repeats& repeats, bool has_axis, int axis);

/// Step 3.
void size_output(CopyPlan& p);

/// Step 4 (on a non-empty output).
void simplify(CopyPlan& p);

/// Whether the segments kernel walks one-byte counts (Prefix::counts8) of `isz`-byte elements whose
/// largest count is `max_count` (before the counts are read: 1): a target with vectors, elements of
/// 1, 2, 4 or 8 bytes, every count one 16-byte store. choose_path adds: one segment axis, the row's.
bool segments_walk_bytes(int64_t isz, int64_t max_count, const KernelCaps& caps) noexcept;
/// The largest count one 16-byte store of the segments walk holds for `isz`-byte elements
/// (16 / isz for 1, 2, 4 or 8 bytes; 0 for other sizes, which the walk does not take).
int64_t segments_walk_max_count(int64_t isz) noexcept;
/// segments_walk_bytes(isz, 1, the dispatched target's caps): whether the counts are worth writing
/// as bytes before they are read (prefix_sums).
bool segments_may_walk_bytes(int64_t isz);

/// Step 5 (on a non-empty output; an empty one keeps Path::none). May run again on the same plan
/// (the allocating calls re-choose once they know whether the output's pages are fresh).
void choose_path(CopyPlan& p, const KernelCaps& caps);

/// Steps 3-5 after the nest step (operations.cpp's make_copy_plan runs steps 1 and 2 first).
void finish_plan(CopyPlan& p);

/// The plan's output is about to be written into pages the kernel has just zeroed (a fresh
/// mapping of the allocating calls): sets fresh_output (the process's first parallel call then
/// runs on one thread: threads_for) and, under NonTemporal::automatic, where the pages are still
/// cached and ordinary stores win, re-chooses the path.
void plan_for_fresh_output(CopyPlan& p);

/// Shapes only (steps 1-3 without data): tile_shape, broadcast_shape, expand_shape, repeat_shape.
Dims output_shape_only(CopyPlan&& p);

/// The region [start, start + extent) of the plan's output reduced for the region kernel.
/// Preconditions (execute_region_checked): a valid, non-empty region of a non-empty output.
Region plan_region(const CopyPlan& plan, const Dims& start, const Dims& extent);

/// Multi-line description of the plan's operation, loops and path (Plan::describe).
std::string describe(const CopyPlan& plan);

}  // namespace tessera::detail

#endif  // TESSERA_LIB_PLANNER_HPP
