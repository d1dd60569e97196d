// Per-target region kernel: writes one hyper-rectangular region of a plan's output (a Region,
// reduced by the planner's plan_region) C-contiguously. Compiled once per Highway target (foreach_target.h);
// execute_region_kernel() dispatches to the best target this CPU supports. Serial.
//
// Along every axis the region's source index runs start, start + 1, ... wrapping at the axis'
// period, so the region is periodic along each axis: the step at index j equals the step at
// j - period. Each axis therefore computes at most one period of its steps and replicates that
// period through the rest of its extent from the output already written (FillPattern over the
// destination), and the innermost axis of a contiguous input row is one FillPattern of the source
// row starting at the region's phase — the same row kernels as the executor's pattern paths.
// Along an elementwise (repeat) axis consecutive steps with the same source index are equal: each
// source index's first step is computed, the others replicate it.

// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/region.cpp"  // this file, relative to lib/
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
// clang-format on

#include "kernels/kernels.hpp"
#include "kernels/path_counters.hpp"
#include "kernels/row_kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::detail::HWY_NAMESPACE {
namespace {

/// Copies n elements of kSize bytes (kSize == 0: `size` bytes) starting at source index `first`,
/// wrapping at `period`, with source byte stride `stride`, to contiguous dst.
template <size_t kSize>
HWY_INLINE void GatherWrapped(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, int64_t stride,
                              int64_t period, int64_t first, int64_t n, size_t size) {
  int64_t k = first;
  for (int64_t j = 0; j < n; ++j) {
    if constexpr (kSize != 0) {
      std::memcpy(dst + j * static_cast<int64_t>(kSize), src + k * stride, kSize);
    } else {
      std::memcpy(dst + j * static_cast<int64_t>(size), src + k * stride, size);
    }
    k = k + 1 == period ? 0 : k + 1;
  }
}

/// The innermost axis: `a.extent` elements of the source row at `src` (source index 0).
HWY_INLINE void RegionRow(const RegionAxis& a, size_t isz, const uint8_t* HWY_RESTRICT src,
                          uint8_t* HWY_RESTRICT dst) {
  const size_t n = static_cast<size_t>(a.extent);
  if (a.period == 1) {  // one element, repeated
    switch (isz) {
      case 1: FillElement<uint8_t>(dst, src, n); return;
      case 2: FillElement<uint16_t>(dst, src, n); return;
      case 4: FillElement<uint32_t>(dst, src, n); return;
      case 8: FillElement<uint64_t>(dst, src, n); return;
      case 16: Fill16(dst, src, n); return;
      default: FillPattern(dst, n * isz, src, isz, 0); return;
    }
  }
  if (a.stride == static_cast<int64_t>(isz)) {  // a contiguous source row, from phase `start`
    FillPattern(dst, n * isz, src, static_cast<size_t>(a.period) * isz, static_cast<size_t>(a.start) * isz);
    return;
  }
  // Strided source: gather one period at most, then replicate it.
  const int64_t first = a.extent < a.period ? a.extent : a.period;
  switch (isz) {
    case 1: GatherWrapped<1>(dst, src, a.stride, a.period, a.start, first, isz); break;
    case 2: GatherWrapped<2>(dst, src, a.stride, a.period, a.start, first, isz); break;
    case 4: GatherWrapped<4>(dst, src, a.stride, a.period, a.start, first, isz); break;
    case 8: GatherWrapped<8>(dst, src, a.stride, a.period, a.start, first, isz); break;
    case 16: GatherWrapped<16>(dst, src, a.stride, a.period, a.start, first, isz); break;
    default: GatherWrapped<0>(dst, src, a.stride, a.period, a.start, first, isz); break;
  }
  if (a.extent > first) {
    const size_t period_bytes = static_cast<size_t>(first) * isz;
    FillPattern(dst + period_bytes, static_cast<size_t>(a.extent - first) * isz, dst, period_bytes, 0);
  }
}

void RegionAxisFill(const Region& r, int k, const uint8_t* src, uint8_t* dst);

/// Copies of the element at `elem`: n of them (FillPattern of one element, any size).
HWY_INLINE void ElementCopies(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT elem, size_t n, size_t isz) {
  switch (isz) {
    case 1: FillCopies<1>(dst, elem, n, isz); return;
    case 2: FillCopies<2>(dst, elem, n, isz); return;
    case 4: FillCopies<4>(dst, elem, n, isz); return;
    case 8: FillCopies<8>(dst, elem, n, isz); return;
    case 16: FillCopies<16>(dst, elem, n, isz); return;
    default: FillCopies<0>(dst, elem, n, isz); return;
  }
}

/// An elementwise axis k: runs of equal steps, one per source index (`reps` of them, the first
/// `reps - phase`; or counts[i] from the prefix sums, the first minus `phase`).
void RegionRepeatAxis(const Region& r, int k, const uint8_t* src, uint8_t* dst) {
  const RegionAxis& a = r.axes[k];
  const bool inner = k == r.naxes - 1;
  const size_t step = static_cast<size_t>(a.step_bytes);
  int64_t idx = a.start, j = 0;
  int64_t run = (a.reps == kSegmentReps ? r.prefix->count(idx) : a.reps) - a.phase;
  for (;;) {
    const int64_t n = run < a.extent - j ? run : a.extent - j;
    if (n > 0) {
      uint8_t* d = dst + j * a.step_bytes;
      if (inner) {
        ElementCopies(d, src + idx * a.stride, static_cast<size_t>(n), r.itemsize);
      } else {
        RegionAxisFill(r, k + 1, src + idx * a.stride, d);
        if (n > 1) FillPattern(d + step, static_cast<size_t>(n - 1) * step, d, step, 0);
      }
      j += n;
    }
    if (j == a.extent) return;
    ++idx;
    run = a.reps == kSegmentReps ? r.prefix->count(idx) : a.reps;
  }
}

/// Axis k of the region and everything inside it; `src` is at source index 0 of axis k.
void RegionAxisFill(const Region& r, int k, const uint8_t* src, uint8_t* dst) {
  const RegionAxis& a = r.axes[k];
  if (a.reps != 0) {
    RegionRepeatAxis(r, k, src, dst);
    return;
  }
  if (k == r.naxes - 1) {
    RegionRow(a, r.itemsize, src, dst);
    return;
  }
  const int64_t first = a.extent < a.period ? a.extent : a.period;
  int64_t idx = a.start;
  for (int64_t j = 0; j < first; ++j) {
    RegionAxisFill(r, k + 1, src + idx * a.stride, dst + j * a.step_bytes);
    idx = idx + 1 == a.period ? 0 : idx + 1;
  }
  if (a.extent > first) {  // steps j >= period repeat step j - period
    const size_t period_bytes = static_cast<size_t>(first * a.step_bytes);
    FillPattern(dst + period_bytes, static_cast<size_t>((a.extent - first) * a.step_bytes), dst, period_bytes, 0);
  }
}

}  // namespace

void ExecuteRegion(const Region& r, const uint8_t* src, uint8_t* dst) {
  TESSERA_VARIANT_SCOPE();  // FillPattern's choices (kernels/path_counters.hpp), counted per target
  src += r.src_offset;
  if (r.naxes == 0) {
    CopyBytes(dst, src, r.itemsize);
    return;
  }
  RegionAxisFill(r, 0, src, dst);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace tessera::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::detail {

HWY_EXPORT(ExecuteRegion);

void execute_region_kernel(const Region& region, const unsigned char* src, unsigned char* dst) {
  HWY_DYNAMIC_DISPATCH(ExecuteRegion)(region, src, dst);
}

}  // namespace tessera::detail
#endif  // HWY_ONCE
