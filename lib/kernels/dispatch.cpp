// Per-target execution of a range of output elements: walks the plan's row loops (an odometer
// over source offsets) and calls the row kernel chosen once per range. Compiled once per Highway
// target (foreach_target.h); execute_range() dispatches to the best target this CPU supports.
// TBB stays outside: the executor calls execute_range() from each task.

// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dispatch.cpp"  // this file, relative to lib/
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
// clang-format on

#include "plan.hpp"
#include "kernels/row_kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::detail::HWY_NAMESPACE {

/// Walks rows [begin, end) in elements, calling row(src_row, first_elem, n_elems, dst) for each
/// (partial) row.
template <class RowFn>
HWY_INLINE void WalkRows(const PlanData& p, const uint8_t* src, uint8_t* dst, int64_t begin, int64_t end,
                         const RowFn& row) {
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  const int64_t row_elems = p.row_elems;
  int64_t idx[kMaxLoops];
  int64_t src_off = 0;
  int64_t r = begin / row_elems;
  for (int k = p.nloops - 1; k >= 0; --k) {
    idx[k] = r % p.loops[k].extent;
    r /= p.loops[k].extent;
    src_off += idx[k] * p.loops[k].src_stride;
  }
  int64_t off = begin % row_elems;
  uint8_t* d = dst + begin * isz;
  for (int64_t pos = begin; pos < end;) {
    const int64_t n = row_elems - off < end - pos ? row_elems - off : end - pos;
    row(src + src_off, static_cast<size_t>(off), static_cast<size_t>(n), d);
    d += n * isz;
    pos += n;
    off = 0;
    for (int k = p.nloops - 1; k >= 0; --k) {  // next row
      src_off += p.loops[k].src_stride;
      if (++idx[k] < p.loops[k].extent) break;
      src_off -= p.loops[k].src_stride * p.loops[k].extent;
      idx[k] = 0;
    }
  }
}

void ExecuteRange(const PlanData& p, const uint8_t* src, uint8_t* dst, int64_t begin, int64_t end) {
  const size_t isz = p.itemsize;
  switch (p.kernel) {
    case Kernel::copy:
      WalkRows(p, src, dst, begin, end,
               [isz](const uint8_t* s, size_t off, size_t n, uint8_t* d) { CopyBytes(d, s + off * isz, n * isz); });
      return;
    case Kernel::pattern: {
      const size_t run = static_cast<size_t>(p.run_bytes);
      WalkRows(p, src, dst, begin, end, [isz, run](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
        FillPattern(d, n * isz, s, run, off * isz % run);
      });
      return;
    }
    case Kernel::fill:
      switch (isz) {
        case 1: WalkRows(p, src, dst, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint8_t>(d, s, n); }); return;
        case 2: WalkRows(p, src, dst, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint16_t>(d, s, n); }); return;
        case 4: WalkRows(p, src, dst, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint32_t>(d, s, n); }); return;
        case 8: WalkRows(p, src, dst, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint64_t>(d, s, n); }); return;
        case 16: WalkRows(p, src, dst, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { Fill16(d, s, n); }); return;
        default:
          WalkRows(p, src, dst, begin, end,
                   [isz](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillPattern(d, n * isz, s, isz, 0); });
          return;
      }
    case Kernel::gather: {
      const int64_t st = p.inner_stride;
      switch (isz) {
        case 1: WalkRows(p, src, dst, begin, end, [st](const uint8_t* s, size_t off, size_t n, uint8_t* d) { GatherFixed<1>(d, s + static_cast<int64_t>(off) * st, st, n); }); return;
        case 2: WalkRows(p, src, dst, begin, end, [st](const uint8_t* s, size_t off, size_t n, uint8_t* d) { GatherFixed<2>(d, s + static_cast<int64_t>(off) * st, st, n); }); return;
        case 4: WalkRows(p, src, dst, begin, end, [st](const uint8_t* s, size_t off, size_t n, uint8_t* d) { GatherFixed<4>(d, s + static_cast<int64_t>(off) * st, st, n); }); return;
        case 8: WalkRows(p, src, dst, begin, end, [st](const uint8_t* s, size_t off, size_t n, uint8_t* d) { GatherFixed<8>(d, s + static_cast<int64_t>(off) * st, st, n); }); return;
        case 16: WalkRows(p, src, dst, begin, end, [st](const uint8_t* s, size_t off, size_t n, uint8_t* d) { GatherFixed<16>(d, s + static_cast<int64_t>(off) * st, st, n); }); return;
        default:
          WalkRows(p, src, dst, begin, end, [st, isz](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
            GatherAny(d, s + static_cast<int64_t>(off) * st, st, n, isz);
          });
          return;
      }
    }
    case Kernel::none:
      return;
  }
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace tessera::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::detail {

HWY_EXPORT(ExecuteRange);
HWY_EXPORT(TargetName);

void execute_range(const PlanData& plan, const unsigned char* src, unsigned char* dst, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(ExecuteRange)(plan, src, dst, begin, end);
}

const char* dispatch_target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace tessera::detail
#endif  // HWY_ONCE
