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
#include <string>
#include <vector>

#include "plan_base.hpp"
#include "prefix.hpp"

namespace tessera::detail {

/// What the kernels add: the element type with signed integers as their unsigned kind (the same
/// bits modulo 2^bits) and complex numbers as their real parts.
enum class Elem : uint8_t { f32, f64, f16, bf16, u8, u16, u32, u64 };
inline constexpr int kElemCount = 8;

/// The reduction a plan computes (describe() needs it; the kernels do not).
enum class ReduceOp : uint8_t { tile_backward, sum_to_shape, repeat_backward };

/// The reduction paths (see the file comment): the executor switches on them.
///   zeros        a reduced extent is 0: every output element is 0 (nothing to add)
///   lanes        the innermost kept axis is contiguous: vectors of output elements
///   strided      neither: element by element (lanes order)
///   interleaved  a reduced run of 2-4 contiguous elements per output element, the only reduced
///                axis (repeat-by-2 gradients): deinterleaving loads (lanes order)
///   periodic     the periodic order
///   segments     per-element repeat counts: one sub-problem per source index, each planned as
///                one of the above
enum class ReducePath : uint8_t { none, zeros, lanes, strided, interleaved, periodic, segments, count_ };
inline constexpr int kReducePathCount = static_cast<int>(ReducePath::count_);
inline constexpr const char* kReducePathNames[kReducePathCount] = {
    "reduce.none",    "reduce.zeros",    "reduce.lanes", "reduce.strided",
    "reduce.interleaved", "reduce.periodic", "reduce.segments"};

/// Leaf length of both orders (addends per leaf, or blocks per leaf).
inline constexpr int64_t kLeaf = 8;
/// Slots of the periodic order's blocks (a multiple of every target's lanes of a 16-lane cap).
inline constexpr int64_t kPeriodicSlots = 16;
/// Kept inner axes narrower than this fold (periodic order with w > 1).
inline constexpr int64_t kFoldMaxWidth = 16;

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
  // Output written with non-temporal stores (the lanes and interleaved paths): set by the planner
  // from Options::nontemporal and the output's size (as the copying operations decide).
  bool stream = false;

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
  ReduceOp op = ReduceOp::tile_backward;
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
                                const int64_t* repeats, int64_t count, bool has_axis, int axis,
                                const Options& options);

/// Simplifies problem.axes (drops extent-1 axes, merges affine neighbours of the same kind) and
/// chooses the path and the item layout. Deterministic: a function of the axes and elem only.
void plan_problem(ReduceProblem& p);

/// Multi-line description (Plan::describe).
std::string describe_reduce(const ReducePlan& r);

/// The name Plan::kernel_path() gives the plan ("reduce.<kernel>").
const char* reduce_path_name(const ReducePlan& r) noexcept;
/// Every name reduce_path_name can give, in order (Plan::kernel_paths()).
std::vector<const char*> reduce_path_names();

}  // namespace tessera::detail

#endif  // TESSERA_LIB_REDUCE_HPP
