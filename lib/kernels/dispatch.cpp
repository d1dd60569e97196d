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

/// Copies one element of kSize bytes (kSize == 0: `size` bytes, any size).
template <size_t kSize>
struct GatherElem {
  size_t size = kSize;
  HWY_INLINE void operator()(uint8_t* d, const uint8_t* s) const {
    if constexpr (kSize != 0) {
      std::memcpy(d, s, kSize);
    } else {
      std::memcpy(d, s, size);
    }
  }
};

/// Gather rows: element j of a row is at src_row + j * inner_stride. When that stride spans a
/// cache line or more (a transposed view, say), groups of up to kGroup consecutive whole rows are
/// copied together in blocks of kColumns columns, so that a source line read for one row serves
/// its neighbours too (a blocked transpose); otherwise, and for partial rows, row by row.
template <class Elem>
void ExecuteGather(const PlanData& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end, Elem elem) {
  constexpr int64_t kGroup = 128, kColumns = 16;
  const int64_t st = p.inner_stride;
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  const auto row_fn = [st, isz, elem](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
    s += static_cast<int64_t>(off) * st;
    for (size_t j = 0; j < n; ++j) elem(d + static_cast<int64_t>(j) * isz, s + static_cast<int64_t>(j) * st);
  };
  const int64_t row_elems = p.row_elems;
  // Whole rows [r0, r1) get the blocked copy; the partial rows at the range's ends go row by row.
  const int64_t r0 = (begin + row_elems - 1) / row_elems, r1 = end / row_elems;
  if (p.nloops == 0 || (st < 0 ? -st : st) < 64 || r1 - r0 < 2 || isz > 16) {
    WalkRows(p, src, out, begin, end, row_fn);
    return;
  }
  WalkRows(p, src, out, begin, r0 * row_elems, row_fn);
  uint8_t* o = out + (r0 * row_elems - begin) * isz;
  int64_t idx[kMaxLoops];  // odometer of row r
  int64_t off = 0, rem = r0;
  for (int k = p.nloops - 1; k >= 0; --k) {
    idx[k] = rem % p.loops[k].extent;
    rem /= p.loops[k].extent;
    off += idx[k] * p.loops[k].src_stride;
  }
  const uint8_t* rows[kGroup];
  HWY_ALIGN uint8_t tile[kGroup * kColumns * 16];
  for (int64_t r = r0; r < r1;) {
    const int64_t g = r1 - r < kGroup ? r1 - r : kGroup;
    for (int64_t k = 0; k < g; ++k) {
      rows[k] = src + off;
      for (int l = p.nloops - 1; l >= 0; --l) {  // next row
        off += p.loops[l].src_stride;
        if (++idx[l] < p.loops[l].extent) break;
        off -= p.loops[l].src_stride * p.loops[l].extent;
        idx[l] = 0;
      }
    }
    for (int64_t c0 = 0; c0 < row_elems; c0 += kColumns) {
      const int64_t nc = c0 + kColumns < row_elems ? kColumns : row_elems - c0;
      // Gather a g x nc tile into L1 (each source line is used up by the inner loop), then write
      // its rows out contiguously: the destination rows may be a power of two apart, and
      // element-wise stores down a column would fight over the same cache sets.
      for (int64_t c = 0; c < nc; ++c) {
        const int64_t src_c = (c0 + c) * st;
        for (int64_t k = 0; k < g; ++k) elem(tile + (k * kColumns + c) * isz, rows[k] + src_c);
      }
      for (int64_t k = 0; k < g; ++k)
        CopyBytes(o + (k * row_elems + c0) * isz, tile + k * kColumns * isz, static_cast<size_t>(nc * isz));
    }
    o += g * row_elems * isz;
    r += g;
  }
  WalkRows(p, src, o, r1 * row_elems, end, row_fn);
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
    case Kernel::gather:
      switch (isz) {
        case 1: ExecuteGather(p, src, out, begin, end, GatherElem<1>()); return;
        case 2: ExecuteGather(p, src, out, begin, end, GatherElem<2>()); return;
        case 4: ExecuteGather(p, src, out, begin, end, GatherElem<4>()); return;
        case 8: ExecuteGather(p, src, out, begin, end, GatherElem<8>()); return;
        case 16: ExecuteGather(p, src, out, begin, end, GatherElem<16>()); return;
        default: ExecuteGather(p, src, out, begin, end, GatherElem<0>{isz}); return;
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
