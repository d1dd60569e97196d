// Per-target row walk: enumerates the rows of a range of output elements by the plan's row loops
// (an odometer over source offsets) and calls a row function for each. Included once per Highway
// target by kernels/rows.cpp (the per-target toggle guard below).

#if defined(TESSERA_LIB_KERNELS_WALK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_LIB_KERNELS_WALK_INL_H_
#undef TESSERA_LIB_KERNELS_WALK_INL_H_
#else
#define TESSERA_LIB_KERNELS_WALK_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include <hwy/highway.h>

#include "copy_plan.hpp"
#include "kernels/row_kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::detail::HWY_NAMESPACE {

/// The row loops' odometer: each loop's index and the source byte offset of the current row,
/// moved on without division. A segment loop's index t is an output index along the segment
/// axis; its source index `seg` is the one whose segment holds t.
struct RowOdometer {
  int64_t idx[kMaxLoops];
  int64_t src_off = 0;
  int64_t seg = 0;

  /// At row `row` (divisions only if row > 0).
  HWY_INLINE RowOdometer(const CopyPlan& p, int64_t row) {
    for (int k = p.nloops - 1; k >= 0; --k) {
      const Loop& l = p.loops[k];
      idx[k] = row == 0 ? 0 : row % l.extent;
      if (row != 0) row /= l.extent;
      if (l.segment) {
        seg = SegmentOf(p.prefix.data(), p.count_segments(), idx[k]);
        src_off += seg * l.src_stride;
      } else {
        src_off += idx[k] * l.src_stride;
      }
    }
  }

  /// Moves on by `k` rows of the innermost loop (k <= what is left of its extent; k == 1 if it is
  /// a segment loop), carrying into the outer loops when it wraps.
  HWY_INLINE void Advance(const CopyPlan& p, int64_t k) {
    int l = p.nloops - 1;
    if (l < 0) return;
    for (;;) {
      const Loop& loop = p.loops[l];
      idx[l] += k;
      if (idx[l] < loop.extent) {
        if (loop.segment) {
          const int64_t* prefix = p.prefix.data();
          while (prefix[seg + 1] <= idx[l]) {  // the next non-empty segment
            ++seg;
            src_off += loop.src_stride;
          }
        } else {
          src_off += k * loop.src_stride;
        }
        return;
      }
      // Wrapped: back to index 0 (a segment loop: to the first non-empty segment) and carry.
      if (loop.segment) {
        src_off -= seg * loop.src_stride;
        seg = SegmentOf(p.prefix.data(), p.count_segments(), 0);
        src_off += seg * loop.src_stride;
      } else {
        src_off -= loop.src_stride * (idx[l] - k);
      }
      idx[l] = 0;
      if (--l < 0) return;
      k = 1;
    }
  }
};

/// Walks output elements [begin, end), calling row(src_row, first_elem, n_elems, out) for each
/// (partial) row; `out` is where element `begin` goes. Whole rows are visited by a tight loop over
/// the innermost row loop with first_elem 0 and n_elems row_elems (constants the inlined row
/// function folds: no division per row); the odometer carries into the outer loops only when the
/// innermost one wraps.
template <class RowFn>
HWY_INLINE void WalkRows(const CopyPlan& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end,
                         const RowFn& row) {
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  const int64_t row_elems = p.row_elems;
  const int64_t row_bytes = row_elems * isz;
  const int nl = p.nloops;
  const size_t whole = static_cast<size_t>(row_elems);
  const bool segments = p.seg_naxes > 0 && p.kernel() != Kernel::segments;  // a segment row loop
  if (nl <= 2 && !segments && begin == 0 && end == p.out_size) {  // the whole output of a shallow plan
    const int64_t e0 = nl == 2 ? p.loops[0].extent : 1, s0 = nl == 2 ? p.loops[0].src_stride : 0;
    const int64_t e1 = nl >= 1 ? p.loops[nl - 1].extent : 1, s1 = nl >= 1 ? p.loops[nl - 1].src_stride : 0;
    for (int64_t i = 0; i < e0; ++i) {  // offsets, not pointers: none points past the source
      for (int64_t j = 0, off = i * s0; j < e1; ++j, off += s1, out += row_bytes) row(src + off, size_t{0}, whole, out);
    }
    return;
  }
  RowOdometer at(p, begin == 0 ? 0 : begin / row_elems);
  int64_t pos = begin;
  const int64_t off = begin == 0 ? 0 : begin % row_elems;
  if (off != 0) {  // the range starts inside a row
    const int64_t n = row_elems - off < end - pos ? row_elems - off : end - pos;
    row(src + at.src_off, static_cast<size_t>(off), static_cast<size_t>(n), out);
    out += n * isz;
    pos += n;
    if (pos < end) at.Advance(p, 1);
  }
  const bool inner_segment = nl > 0 && p.loops[nl - 1].segment;
  while (end - pos >= row_elems) {
    int64_t k = (end - pos) / row_elems;
    if (nl > 0 && p.loops[nl - 1].extent - at.idx[nl - 1] < k) k = p.loops[nl - 1].extent - at.idx[nl - 1];
    if (inner_segment) k = 1;
    const int64_t step = nl > 0 ? p.loops[nl - 1].src_stride : 0;
    for (int64_t j = 0, o = at.src_off; j < k; ++j, o += step) {
      row(src + o, size_t{0}, whole, out);
      out += row_bytes;
    }
    pos += k * row_elems;
    if (pos < end) at.Advance(p, k);
  }
  if (pos < end) row(src + at.src_off, size_t{0}, static_cast<size_t>(end - pos), out);  // ends inside a row
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace tessera::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
