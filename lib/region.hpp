// An output region as the region kernel (kernels/region.cpp) walks it: what plan_region
// (planner.hpp) makes of a copy plan and a region of its output. Internal.
#ifndef TESSERA_LIB_REGION_HPP
#define TESSERA_LIB_REGION_HPP

#include <tessera/tessera.hpp>

#include "prefix.hpp"

#include <cstddef>
#include <cstdint>

namespace tessera::detail {

/// One axis of an output region, as the region kernel walks it: the region covers `extent`
/// consecutive output indices starting at one whose source index is `start` (in [0, period));
/// source index k is at byte offset k * stride. Along a whole-axis (tile) axis, reps == 0, the
/// indices wrap at `period` (the input's extent on that axis, 1 for a promoted axis); along an
/// elementwise axis each source index holds for `reps` consecutive output indices (the first for
/// reps - phase of them), or for counts[k] = prefix.count(k) (reps == kSegmentReps).
/// `step_bytes` is the region's byte size of one step along this axis (the product of the inner
/// axes' extents times the itemsize).
struct RegionAxis {
  int64_t period;
  int64_t stride;
  int64_t start;
  int64_t extent;
  int64_t step_bytes;
  int64_t reps = 0;
  int64_t phase = 0;  // elementwise: output steps already taken by the first source index
};

/// A non-empty output region reduced for the kernel (planner.cpp, plan_region): axes of extent 1
/// folded into src_offset, and an outer axis merged into the inner one when the inner axis covers
/// exactly one whole period and the pair is one affine walk of the source. naxes may be 0 (a
/// single element at src + src_offset).
struct Region {
  int naxes = 0;
  RegionAxis axes[max_ndim];  // outermost first
  std::size_t itemsize = 0;
  int64_t src_offset = 0;  // bytes
  const Prefix* prefix = nullptr;  // the plan's segment prefix sums, if an axis has reps == kSegmentReps
  // A flattened plan's region (its output is 1-d) is the output range [begin, end): the executor
  // runs it as a range of the plan, not through the region kernel.
  bool as_range = false;
  int64_t begin = 0, end = 0;
};

}  // namespace tessera::detail

#endif  // TESSERA_LIB_REGION_HPP
