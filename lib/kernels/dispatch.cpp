// Per-target execution of a range of output elements: walks the plan's row loops (an odometer
// over source offsets) and calls the row kernel chosen once per range. Compiled once per Highway
// target (foreach_target.h); execute_range() dispatches to the best target this CPU supports.
// TBB stays outside: the executor calls execute_range() from each task.
//
// TESSERA_COUNT_PATH (kernels/path_counters.hpp) marks where each executed path is chosen; it
// expands to nothing unless the library is built with -Dpath_counters=true (the test build).

// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dispatch.cpp"  // this file, relative to lib/
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
// clang-format on

#include "plan.hpp"
#include "kernels/path_counters.hpp"
#include "kernels/row_kernels-inl.h"

#include <hwy/cache_control.h>


HWY_BEFORE_NAMESPACE();
namespace tessera::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// The row loops' odometer: each loop's index and the source byte offset of the current row,
/// moved on without division.
struct RowOdometer {
  int64_t idx[kMaxLoops];
  int64_t src_off = 0;

  /// At row `row` (divisions only if row > 0).
  HWY_INLINE RowOdometer(const PlanData& p, int64_t row) {
    for (int k = p.nloops - 1; k >= 0; --k) {
      idx[k] = row == 0 ? 0 : row % p.loops[k].extent;
      if (row != 0) row /= p.loops[k].extent;
      src_off += idx[k] * p.loops[k].src_stride;
    }
  }

  /// Moves on by `k` rows of the innermost loop (k <= what is left of its extent), carrying into
  /// the outer loops when it wraps.
  HWY_INLINE void Advance(const PlanData& p, int64_t k) {
    const int nl = p.nloops;
    if (nl == 0) return;
    src_off += k * p.loops[nl - 1].src_stride;
    idx[nl - 1] += k;
    for (int l = nl - 1; l >= 0 && idx[l] == p.loops[l].extent; --l) {
      src_off -= p.loops[l].src_stride * p.loops[l].extent;
      idx[l] = 0;
      if (l > 0) {
        src_off += p.loops[l - 1].src_stride;
        ++idx[l - 1];
      }
    }
  }
};

/// Walks output elements [begin, end), calling row(src_row, first_elem, n_elems, out) for each
/// (partial) row; `out` is where element `begin` goes. Whole rows are visited by a tight loop over
/// the innermost row loop with first_elem 0 and n_elems row_elems (constants the inlined row
/// function folds: no division per row); the odometer carries into the outer loops only when the
/// innermost one wraps.
template <class RowFn>
HWY_INLINE void WalkRows(const PlanData& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end,
                         const RowFn& row) {
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  const int64_t row_elems = p.row_elems;
  const int64_t row_bytes = row_elems * isz;
  const int nl = p.nloops;
  const size_t whole = static_cast<size_t>(row_elems);
  if (nl <= 2 && begin == 0 && end == p.out_size) {  // the whole output of a shallow plan (small outputs)
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
  while (end - pos >= row_elems) {
    int64_t k = (end - pos) / row_elems;
    if (nl > 0 && p.loops[nl - 1].extent - at.idx[nl - 1] < k) k = p.loops[nl - 1].extent - at.idx[nl - 1];
    const int64_t step = nl > 0 ? p.loops[nl - 1].src_stride : 0;
    for (int64_t j = 0, o = at.src_off; j < k; ++j, o += step) {
      row(src + o, size_t{0}, whole, out);
      out += row_bytes;
    }
    pos += k * row_elems;
    at.Advance(p, k);
  }
  if (pos < end) row(src + at.src_off, size_t{0}, static_cast<size_t>(end - pos), out);  // ends inside a row
}

/// Copies one element of kSize bytes (kSize == 0: `size` bytes, any size).
template <size_t kSize>
struct GatherElem {
  static constexpr size_t kFixed = kSize;
  size_t size = kSize;
  HWY_INLINE void operator()(uint8_t* d, const uint8_t* s) const {
    if constexpr (kSize != 0) {
      std::memcpy(d, s, kSize);
    } else {
      std::memcpy(d, s, size);
    }
  }
};

/// Rows of a blocked gather tile: row u's columns [c0, c0 + nc) go to tile + u * pitch bytes.
/// Where four (4-byte elements) or two (8-byte) consecutive distinct rows are consecutive source
/// elements (`packed[u / L]`: a transposed view), a block of L rows x L columns is loaded as L
/// vectors down the columns and transposed in registers; everything else is copied element by
/// element, column by column (each source line read is used up by the rows sharing it).
template <class Elem>
HWY_INLINE void GatherTile(const uint8_t* const* uniq, const bool* packed, int64_t D, int64_t c0, int64_t nc,
                           int64_t st, int64_t isz, int64_t pitch, int64_t ahead, Elem elem,
                           uint8_t* HWY_RESTRICT tile) {
  (void)packed;
  (void)ahead;  // unused where no vector transpose applies
  int64_t c = 0;
#if HWY_TARGET != HWY_SCALAR
  constexpr size_t kSize = Elem::kFixed;
  if constexpr (kSize == 4 || kSize == 8) {
#if TESSERA_PATH_COUNTERS
    bool transposed = false;  // counted once per tile
#endif
    constexpr int64_t L = 16 / kSize;
    using T = hwy::UnsignedFromSize<kSize>;
    const hn::FixedTag<T, L> d;
    const hn::FixedTag<uint64_t, 2> d64;
    const hn::FixedTag<uint8_t, 16> d8;
    for (; c + L <= nc; c += L) {
      const int64_t off = (c0 + c) * st;
      if (ahead != 0) {  // the same columns of the next block: one line per 64 bytes of rows
        for (int64_t j = 0; j < L; ++j)
          for (int64_t u = 0; u < D; u += 64 / kSize) __builtin_prefetch(uniq[u] + off + ahead + j * st, 0, 2);
      }
      for (int64_t u = 0; u < D; u += L) {
        uint8_t* t = tile + u * pitch + c * isz;
        if (u + L <= D && packed[u / L]) {
#if TESSERA_PATH_COUNTERS
          transposed = true;
#endif
          const uint8_t* s = uniq[u] + off;
          if constexpr (kSize == 4) {
            const auto a = hn::BitCast(d, hn::LoadU(d8, s));  // bytes: s need not be T-aligned
            const auto b = hn::BitCast(d, hn::LoadU(d8, s + st));
            const auto e = hn::BitCast(d, hn::LoadU(d8, s + 2 * st));
            const auto f = hn::BitCast(d, hn::LoadU(d8, s + 3 * st));
            const auto ab_lo = hn::BitCast(d64, hn::InterleaveLower(d, a, b));  // a0 b0 a1 b1
            const auto ef_lo = hn::BitCast(d64, hn::InterleaveLower(d, e, f));
            const auto ab_hi = hn::BitCast(d64, hn::InterleaveUpper(d, a, b));  // a2 b2 a3 b3
            const auto ef_hi = hn::BitCast(d64, hn::InterleaveUpper(d, e, f));
            hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, ab_lo, ef_lo)), d, reinterpret_cast<T*>(t));
            hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, ab_lo, ef_lo)), d, reinterpret_cast<T*>(t + pitch));
            hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, ab_hi, ef_hi)), d, reinterpret_cast<T*>(t + 2 * pitch));
            hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, ab_hi, ef_hi)), d, reinterpret_cast<T*>(t + 3 * pitch));
          } else {
            const auto a = hn::BitCast(d, hn::LoadU(d8, s));
            const auto b = hn::BitCast(d, hn::LoadU(d8, s + st));
            hn::StoreU(hn::InterleaveLower(d, a, b), d, reinterpret_cast<T*>(t));
            hn::StoreU(hn::InterleaveUpper(d, a, b), d, reinterpret_cast<T*>(t + pitch));
          }
        } else {
          const int64_t stop = u + L < D ? u + L : D;
          for (int64_t j = 0; j < L; ++j)
            for (int64_t v = u; v < stop; ++v) elem(tile + v * pitch + (c + j) * isz, uniq[v] + off + j * st);
        }
      }
    }
#if TESSERA_PATH_COUNTERS
    if (transposed) TESSERA_COUNT_PATH(kSize == 4 ? kExecGather4Transposed : kExecGather8Transposed);
#endif
  }
#endif
  for (; c < nc; ++c) {
    const int64_t off = (c0 + c) * st;
    for (int64_t u = 0; u < D; ++u) elem(tile + u * pitch + c * isz, uniq[u] + off);
  }
}

/// Gather rows: element j of a row is at src_row + j * inner_stride. When that stride spans a
/// cache line or more (a transposed view, say), whole rows are copied in groups, column block by
/// column block, through a tile in L1 (a blocked transpose): the source lines read for one row
/// serve its neighbours, and every destination row gets a contiguous piece. Rows of a group with
/// the same source row (replicas, from a zero-stride loop) are gathered once and written to each
/// replica. With `stream` the tile's rows go out with non-temporal stores. Partial rows at the
/// range's ends, short strides and large elements go row by row with ordinary stores.
template <class Elem>
void ExecuteGather(const PlanData& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end, Elem elem,
                   bool stream) {
  const int64_t st = p.inner_stride;
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  const auto row_fn = [st, isz, elem](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
    s += static_cast<int64_t>(off) * st;
    for (size_t j = 0; j < n; ++j) elem(d + static_cast<int64_t>(j) * isz, s + static_cast<int64_t>(j) * st);
  };
  const int64_t row_elems = p.row_elems;
  // Whole rows [r0, r1) get the blocked copy; the partial rows at the range's ends go row by row.
  const int64_t r0 = (begin + row_elems - 1) / row_elems;
  int64_t r1 = end / row_elems;
  if (p.nloops == 0 || (st < 0 ? -st : st) < kBlockedGatherStride || r1 - r0 < 2 || isz > kBlockedGatherMaxItem) {
    TESSERA_COUNT_PATH(ExecGatherPath(Elem::kFixed, kGatherRows));  // with `stream` too: ordinary stores
    WalkRows(p, src, out, begin, end, row_fn);
    return;
  }
  // (SCALAR streams with CopyBytes: its tile rows go out as those of gather.N.blocked.)
  TESSERA_COUNT_PATH(ExecGatherPath(Elem::kFixed, stream && kStreamStores ? kGatherStreamed : kGatherBlocked));
  // An outermost loop that only repeats (source stride 0) makes whole replicas of the output:
  // when the range is `copies` of them, the first is gathered and each of its tile rows is
  // written to every copy, so the source is read once.
  int64_t copies = 1, copy_bytes = 0;
  if (p.nloops >= 2 && p.loops[0].src_stride == 0) {
    const int64_t span = p.nrows / p.loops[0].extent * row_elems;  // elements per replica
    if (begin % span == 0 && end % span == 0 && end - begin >= 2 * span) {
      copies = (end - begin) / span;
      copy_bytes = span * isz;
      r1 = r0 + span / row_elems;
    }
  }
  WalkRows(p, src, out, begin, r0 * row_elems, row_fn);
  uint8_t* o = out + (r0 * row_elems - begin) * isz;

  // A tile holds kMaxDistinct rows of kTileRowBytes: columns per block C.
  constexpr int64_t kTileRowBytes = 256, kMaxDistinct = 128, kMaxGroup = 1024, kHash = 2048;
  const int64_t C = kTileRowBytes / isz;
  HWY_ALIGN uint8_t tile[kMaxDistinct * kTileRowBytes];
  const uint8_t* uniq[kMaxDistinct];   // distinct source rows of the group
  bool packed[kMaxDistinct];           // see GatherTile
  uint16_t which[kMaxGroup];           // group row -> its distinct row
  uint16_t slot[kHash];                // open addressing: distinct row + 1, 0 = empty

  RowOdometer at(p, r0);
  for (int64_t r = r0; r < r1;) {
    // The group: consecutive rows while their distinct source rows fit the tile.
    std::memset(slot, 0, sizeof(slot));
    int64_t g = 0, D = 0;
    while (r + g < r1 && g < kMaxGroup) {
      const uint8_t* row = src + at.src_off;
      uint64_t h = (static_cast<uint64_t>(reinterpret_cast<uintptr_t>(row)) * 0x9E3779B97F4A7C15ull) >> 53;
      while (slot[h] != 0 && uniq[slot[h] - 1] != row) h = (h + 1) % kHash;
      if (slot[h] == 0) {
        if (D == kMaxDistinct) break;
        uniq[D] = row;
        slot[h] = static_cast<uint16_t>(++D);
      }
      which[g++] = static_cast<uint16_t>(slot[h] - 1);
      at.Advance(p, 1);
    }
    if (isz == 4 || isz == 8) {  // the register transposes' blocks of L = 16 / isz rows
      const int64_t L = 16 / isz;
      for (int64_t u = 0; u + L <= D; u += L) {
        bool ok = true;
        for (int64_t v = 1; ok && v < L; ++v)  // addresses compared as integers: no pointer past the source
          ok = reinterpret_cast<uintptr_t>(uniq[u + v]) - reinterpret_cast<uintptr_t>(uniq[u]) ==
               static_cast<uintptr_t>(v * isz);
        packed[u / L] = ok;
      }
    }
    for (int64_t c0 = 0; c0 < row_elems; c0 += C) {
      const int64_t nc = c0 + C < row_elems ? C : row_elems - c0;
      // Prefetch the next block's source lines while this one is copied (if it is whole).
      const int64_t ahead = c0 + 2 * C <= row_elems ? C * st : 0;
      GatherTile(uniq, packed, D, c0, nc, st, isz, kTileRowBytes, ahead, elem, tile);
      // Write the tile's rows out contiguously: the destination rows may be a power of two apart,
      // and element-wise stores down a column would fight over the same cache sets.
      uint8_t* d = o + c0 * isz;
      const size_t bytes = static_cast<size_t>(nc * isz);
      for (int64_t e = 0; e < copies; ++e, d += copy_bytes) {
        if (stream) {
          for (int64_t k = 0; k < g; ++k) CopyStream(d + k * row_elems * isz, tile + which[k] * kTileRowBytes, bytes);
        } else {
          for (int64_t k = 0; k < g; ++k) CopyBytes(d + k * row_elems * isz, tile + which[k] * kTileRowBytes, bytes);
        }
      }
    }
    o += g * row_elems * isz;
    r += g;
  }
  if (copies == 1) WalkRows(p, src, o, r1 * row_elems, end, row_fn);
}

// Row functions are called once per row: inlined into the row walk even where they are large.
#define TESSERA_INLINE_LAMBDA __attribute__((always_inline))

/// Calls body(row) with the ordinary-store row function of a copy, pattern or fill plan:
/// row(src_row, first_elem, n_elems, out) writes elements [first_elem, first_elem + n_elems) of the
/// row whose source is src_row to out. `table` is the index table of a pattern plan whose run is at
/// most 16 bytes, else null. kRoute (kRoutePlain, kRouteStaged): the path counters' route.
template <int kRoute, class Body>
HWY_INLINE void WithRowFn(const PlanData& p, const ShortPatternTable* table, const Body& body) {
  const size_t isz = p.itemsize;
  switch (p.kernel) {
    case Kernel::copy:
      TESSERA_COUNT_PATH(kExecCopy + kRoute);
      body([isz](const uint8_t* s, size_t off, size_t n, uint8_t* d) { CopyBytes(d, s + off * isz, n * isz); });
      return;
    case Kernel::pattern: {
      const size_t run = static_cast<size_t>(p.run_bytes);
      if (table != nullptr) {
        const size_t N = hn::Lanes(hn::ScalableTag<uint8_t>());
        body([isz, run, N, table](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
          const size_t phase = off == 0 ? 0 : off * isz % run;
          if (phase == 0 && n * isz >= N) {
            FillShortPattern(d, n * isz, s, run, *table);
            TESSERA_COUNT_PATH((kVectorShuffle ? kExecShuffle : kExecShort) + kRoute);
          } else {  // a row that starts mid-run or is shorter than a vector: counted as pattern.short
            FillPattern(d, n * isz, s, run, phase);
            TESSERA_COUNT_PATH(kExecShort + kRoute);
          }
        });
        return;
      }
      // FillPattern's own branch: long runs are copied again from the source, short ones replicated.
      TESSERA_COUNT_PATH((run >= static_cast<size_t>(kLongRunBytes) ? kExecLong : kExecShort) + kRoute);
      body([isz, run](const uint8_t* s, size_t off, size_t n, uint8_t* d) TESSERA_INLINE_LAMBDA {
        FillPattern(d, n * isz, s, run, off == 0 ? 0 : off * isz % run);
      });
      return;
    }
    case Kernel::fill:
      // Fill16 is FillPattern, the fill.any kernel, where kVectorFill16 is false (SCALAR).
      TESSERA_COUNT_PATH(isz == 16 && !kVectorFill16 ? kExecFillAny + kRoute : ExecFillPath(isz, kRoute));
      switch (isz) {
        case 1: body([](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint8_t>(d, s, n); }); return;
        case 2: body([](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint16_t>(d, s, n); }); return;
        case 4: body([](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint32_t>(d, s, n); }); return;
        case 8: body([](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint64_t>(d, s, n); }); return;
        case 16: body([](const uint8_t* s, size_t, size_t n, uint8_t* d) { Fill16(d, s, n); }); return;
        default:
          body([isz](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillPattern(d, n * isz, s, isz, 0); });
          return;
      }
    case Kernel::gather:  // see ExecuteGather
    case Kernel::none:
      return;
  }
}

/// Writes elements [begin, end) to `out` (where element `begin` goes) with ordinary stores
/// (gathers: with streaming stores where they go through the tile if `stream`). `table`: see
/// WithRowFn.
void ExecuteRows(const PlanData& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end,
                 const ShortPatternTable* table, bool stream = false) {
  if (p.kernel == Kernel::gather) {
    switch (p.itemsize) {
      case 1: ExecuteGather(p, src, out, begin, end, GatherElem<1>(), stream); return;
      case 2: ExecuteGather(p, src, out, begin, end, GatherElem<2>(), stream); return;
      case 4: ExecuteGather(p, src, out, begin, end, GatherElem<4>(), stream); return;
      case 8: ExecuteGather(p, src, out, begin, end, GatherElem<8>(), stream); return;
      case 16: ExecuteGather(p, src, out, begin, end, GatherElem<16>(), stream); return;
      default: ExecuteGather(p, src, out, begin, end, GatherElem<0>{p.itemsize}, stream); return;
    }
  }
  WithRowFn<kRoutePlain>(p, table, [&](const auto& row) { WalkRows(p, src, out, begin, end, row); });
}

/// Streaming straight to the output (plans with stream_direct): copy rows or pattern runs of at
/// least kDirectStreamBytes from the source, fills of whole cache lines from a register. (Path
/// counters: where kStreamStores is false, CopyStream is CopyBytes and these are the ordinary
/// copy and pattern.long kernels; FillElementStream counts per row what it ran.)
void ExecuteDirectStream(const PlanData& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end) {
  const size_t isz = p.itemsize;
  if (p.kernel == Kernel::copy) {
    TESSERA_COUNT_PATH(kExecCopy + (kStreamStores ? kRouteDirect : kRoutePlain));
    WalkRows(p, src, out, begin, end,
             [isz](const uint8_t* s, size_t off, size_t n, uint8_t* d) { CopyStream(d, s + off * isz, n * isz); });
  } else if (p.kernel == Kernel::fill) {
    switch (isz) {
      case 1: WalkRows(p, src, out, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElementStream<uint8_t>(d, s, n); }); return;
      case 2: WalkRows(p, src, out, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElementStream<uint16_t>(d, s, n); }); return;
      case 4: WalkRows(p, src, out, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElementStream<uint32_t>(d, s, n); }); return;
      case 8: WalkRows(p, src, out, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElementStream<uint64_t>(d, s, n); }); return;
      case 16: WalkRows(p, src, out, begin, end, [](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElementStream<hwy::uint128_t>(d, s, n); }); return;
      default: HWY_ASSERT(false);  // the planner streams fills directly for these sizes only
    }
  } else {
    const size_t run = static_cast<size_t>(p.run_bytes);
    TESSERA_COUNT_PATH(kExecLong + (kStreamStores ? kRouteDirect : kRoutePlain));
    WalkRows(p, src, out, begin, end, [isz, run](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
      FillPatternStream(d, n * isz, s, run, off * isz % run);
    });
  }
}

/// Streaming through L1: one walk over the rows writes them with the ordinary row functions into
/// a stack buffer of kStageBytes (splitting rows at its end), which is streamed to the output
/// each time it fills. Small blocks keep the memory busy while the next block is generated.
void ExecuteStagedStream(const PlanData& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end,
                         const ShortPatternTable* table) {
  HWY_ALIGN uint8_t stage[kStageBytes];
  const size_t isz = p.itemsize;
  const size_t cap = kStageBytes / isz;  // elements per block
  size_t fill = 0;                        // elements staged
  WithRowFn<kRouteStaged>(p, table, [&](const auto& row) {
    WalkRows(p, src, out, begin, end, [&](const uint8_t* s, size_t off, size_t n, uint8_t*) {
      while (n > 0) {
        const size_t take = n < cap - fill ? n : cap - fill;
        row(s, off, take, stage + fill * isz);
        fill += take;
        off += take;
        n -= take;
        if (fill == cap) {
          CopyStream(out, stage, cap * isz);
          out += cap * isz;
          fill = 0;
        }
      }
    });
  });
  CopyStream(out, stage, fill * isz);
}

/// The range with ordinary or streaming stores, as the plan says; `t`: see WithRowFn.
void ExecuteStreamOrRows(const PlanData& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end,
                         const ShortPatternTable* t) {
  if (!p.stream) {
    ExecuteRows(p, src, out, begin, end, t);
    return;
  }
  if (p.kernel == Kernel::gather) {
    ExecuteRows(p, src, out, begin, end, t, /*stream=*/true);
  } else if (p.stream_direct && (p.kernel != Kernel::fill || reinterpret_cast<uintptr_t>(out) % kLineBytes == 0)) {
    // (A fill streams whole lines directly only where its rows are line-aligned; a range starts
    // on a multiple of 64 elements, so this tells for all its rows.)
    ExecuteDirectStream(p, src, out, begin, end);
  } else {
    ExecuteStagedStream(p, src, out, begin, end, t);
  }
  hwy::FlushStream();  // order the streaming stores before the range is reported done
}

/// Writes output elements [begin, end) of the plan (execute_range).
void ExecuteRange(const PlanData& p, const uint8_t* src, uint8_t* dst, int64_t begin, int64_t end) {
  uint8_t* out = dst + begin * static_cast<int64_t>(p.itemsize);
  if (!p.stream && !p.shuffle) {  // the common small case: nothing to set up
    ExecuteRows(p, src, out, begin, end, nullptr);
    return;
  }
  if (p.shuffle) {
    const ShortPatternTable table(static_cast<size_t>(p.run_bytes));
    ExecuteStreamOrRows(p, src, out, begin, end, &table);
  } else {
    ExecuteStreamOrRows(p, src, out, begin, end, nullptr);
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
