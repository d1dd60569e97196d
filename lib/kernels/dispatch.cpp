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

#include <hwy/cache_control.h>

#include <optional>

HWY_BEFORE_NAMESPACE();
namespace tessera::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Walks output elements [begin, end), calling row(src_row, first_elem, n_elems, out) for each
/// (partial) row; `out` is where element `begin` goes.
template <class RowFn>
HWY_INLINE void WalkRows(const PlanData& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end,
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
  for (int64_t pos = begin; pos < end;) {
    const int64_t n = row_elems - off < end - pos ? row_elems - off : end - pos;
    row(src + src_off, static_cast<size_t>(off), static_cast<size_t>(n), out);
    out += n * isz;
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

/// Writes elements [begin, end) to `out` (where element `begin` goes) with ordinary stores.
/// `table` is the index table of a pattern plan whose run is at most 16 bytes, else null.
void ExecuteRows(const PlanData& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end,
                 const ShortPatternTable* table) {
  const size_t isz = p.itemsize;
  switch (p.kernel) {
    case Kernel::copy:
      WalkRows(p, src, out, begin, end,
               [isz](const uint8_t* s, size_t off, size_t n, uint8_t* d) { CopyBytes(d, s + off * isz, n * isz); });
      return;
    case Kernel::pattern: {
      const size_t run = static_cast<size_t>(p.run_bytes);
      if (table != nullptr) {
        const size_t N = hn::Lanes(hn::ScalableTag<uint8_t>());
        WalkRows(p, src, out, begin, end, [isz, run, N, table](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
          const size_t phase = off * isz % run;
          if (phase == 0 && n * isz >= N) {
            FillShortPattern(d, n * isz, s, run, *table);
          } else {
            FillPattern(d, n * isz, s, run, phase);
          }
        });
        return;
      }
      WalkRows(p, src, out, begin, end, [isz, run](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
        FillPattern(d, n * isz, s, run, off * isz % run);
      });
      return;
    }
    case Kernel::fill:
      switch (isz) {
        case 1: WalkRows(p, src, out, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint8_t>(d, s, n); }); return;
        case 2: WalkRows(p, src, out, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint16_t>(d, s, n); }); return;
        case 4: WalkRows(p, src, out, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint32_t>(d, s, n); }); return;
        case 8: WalkRows(p, src, out, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint64_t>(d, s, n); }); return;
        case 16: WalkRows(p, src, out, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { Fill16(d, s, n); }); return;
        default:
          WalkRows(p, src, out, begin, end,
                   [isz](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillPattern(d, n * isz, s, isz, 0); });
          return;
      }
    case Kernel::gather: {
      const int64_t st = p.inner_stride;
      switch (isz) {
        case 1: WalkRows(p, src, out, begin, end, [st](const uint8_t* s, size_t off, size_t n, uint8_t* d) { GatherFixed<1>(d, s + static_cast<int64_t>(off) * st, st, n); }); return;
        case 2: WalkRows(p, src, out, begin, end, [st](const uint8_t* s, size_t off, size_t n, uint8_t* d) { GatherFixed<2>(d, s + static_cast<int64_t>(off) * st, st, n); }); return;
        case 4: WalkRows(p, src, out, begin, end, [st](const uint8_t* s, size_t off, size_t n, uint8_t* d) { GatherFixed<4>(d, s + static_cast<int64_t>(off) * st, st, n); }); return;
        case 8: WalkRows(p, src, out, begin, end, [st](const uint8_t* s, size_t off, size_t n, uint8_t* d) { GatherFixed<8>(d, s + static_cast<int64_t>(off) * st, st, n); }); return;
        case 16: WalkRows(p, src, out, begin, end, [st](const uint8_t* s, size_t off, size_t n, uint8_t* d) { GatherFixed<16>(d, s + static_cast<int64_t>(off) * st, st, n); }); return;
        default:
          WalkRows(p, src, out, begin, end, [st, isz](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
            GatherAny(d, s + static_cast<int64_t>(off) * st, st, n, isz);
          });
          return;
      }
    }
    case Kernel::none:
      return;
  }
}

/// Streaming straight from long source pieces (plans with stream_direct: copy rows or pattern
/// runs of at least kDirectStreamBytes).
void ExecuteDirectStream(const PlanData& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end) {
  const size_t isz = p.itemsize;
  if (p.kernel == Kernel::copy) {
    WalkRows(p, src, out, begin, end,
             [isz](const uint8_t* s, size_t off, size_t n, uint8_t* d) { CopyStream(d, s + off * isz, n * isz); });
  } else {
    const size_t run = static_cast<size_t>(p.run_bytes);
    WalkRows(p, src, out, begin, end, [isz, run](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
      FillPatternStream(d, n * isz, s, run, off * isz % run);
    });
  }
}

/// Streaming through L1: blocks of up to kStageBytes are written to a stack buffer by the
/// ordinary kernels, then streamed to the output.
void ExecuteStagedStream(const PlanData& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end,
                         const ShortPatternTable* table) {
  HWY_ALIGN uint8_t stage[kStageBytes];
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  const int64_t block = kStageBytes / isz;
  for (int64_t pos = begin; pos < end; pos += block) {
    const int64_t stop = end - pos < block ? end : pos + block;
    ExecuteRows(p, src, stage, pos, stop, table);
    CopyStream(out + (pos - begin) * isz, stage, static_cast<size_t>((stop - pos) * isz));
  }
}

void ExecuteRange(const PlanData& p, const uint8_t* src, uint8_t* dst, int64_t begin, int64_t end) {
  uint8_t* out = dst + begin * static_cast<int64_t>(p.itemsize);
  std::optional<ShortPatternTable> table;
  if (p.shuffle)
    table.emplace(static_cast<size_t>(p.run_bytes));
  const ShortPatternTable* t = table ? &*table : nullptr;
  if (!p.stream) {
    ExecuteRows(p, src, out, begin, end, t);
    return;
  }
  if (p.stream_direct) {
    ExecuteDirectStream(p, src, out, begin, end);
  } else {
    ExecuteStagedStream(p, src, out, begin, end, t);
  }
  hwy::FlushStream();  // order the streaming stores before the range is reported done
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
