// Per-target gathers: rows whose elements are not contiguous in the source, one by one or whole
// rows through a blocked transpose in L1. Included once per Highway target by kernels/rows.cpp
// (the per-target toggle guard below).

#if defined(TESSERA_LIB_KERNELS_GATHER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_LIB_KERNELS_GATHER_INL_H_
#undef TESSERA_LIB_KERNELS_GATHER_INL_H_
#else
#define TESSERA_LIB_KERNELS_GATHER_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <hwy/highway.h>

#include "copy_plan.hpp"
#include "kernels/row_kernels-inl.h"
#include "kernels/walk-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

/// Writes `g` rows of `bytes` bytes each (row k from `tile + which[k] * pitch`) one after the
/// other from `dst`, with streaming stores of whole vectors at vector-aligned addresses and
/// ordinary stores for the bytes before the first and after the last: a vector that spans the end
/// of one row and the start of the next is joined in a register from both rows, so no line is
/// shared between rows written with ordinary stores (rows of 256 bytes into dst + 16: a quarter
/// of the lines). Needs bytes >= the vector's kLanes bytes and kLanes readable bytes before the
/// tile's first row and after its last (the joins read past the ends of rows; those lanes are
/// discarded). Vector targets only.
#if HWY_TARGET != HWY_SCALAR
HWY_INLINE void StreamJoinedRows(uint8_t* HWY_RESTRICT dst, const uint8_t* tile, size_t pitch, const uint16_t* which,
                                 int64_t g, size_t bytes) {
  const hn::ScalableTag<uint8_t> d8;
  const size_t kLanes = hn::Lanes(d8);
  const size_t total = static_cast<size_t>(g) * bytes;
  const size_t head = HeadBytes(dst, kLanes);  // < kLanes <= bytes: all in row 0
  const uint8_t* row = tile + which[0] * pitch;
  CopyBytes(dst, row, head);
  uint8_t* o = dst + head;
  size_t left = total - head, r = head;  // bytes still to write; the cursor's byte in row k
  int64_t k = 0;
  while (left >= kLanes) {
    // The whole vectors left in row k, then the next row or the join of the two.
    const size_t whole = std::min(bytes - r, left) / kLanes * kLanes;
    for (size_t i = 0; i < whole; i += kLanes) hn::Stream(hn::LoadU(d8, row + r + i), d8, o + i);
    r += whole;
    o += whole;
    left -= whole;
    if (r == bytes) {
      if (++k == g) break;
      row = tile + which[k] * pitch;
      r = 0;
    } else if (left >= kLanes) {  // the last `have` bytes of row k, then the first of row k + 1
      const size_t have = bytes - r;
      const uint8_t* next = tile + which[k + 1] * pitch;
      hn::Stream(hn::IfThenElse(hn::FirstN(d8, have), hn::LoadU(d8, row + r), hn::LoadU(d8, next - have)), d8, o);
      row = next;
      r = kLanes - have;  // < bytes
      ++k;
      o += kLanes;
      left -= kLanes;
    }
  }
  CopyBytes(o, row + r, left);  // left < kLanes: the end of the last row
}
#endif

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2  // AVX2 and every AVX-512 target
/// Rows of 4-byte elements transposed a whole vector at a time (TransposeWide): the vector's lanes.
constexpr int64_t kWideRows = static_cast<int64_t>(hn::MaxLanes(hn::ScalableTag<uint32_t>()));
static_assert(kWideRows == 8 || kWideRows == 16, "TransposeWide handles two or four 128-bit blocks");

/// Transposes a kWideRows x kWideRows block of 4-byte elements (W = kWideRows: 16 on AVX-512, 8 on
/// AVX2): vector j, loaded from src + j * st bytes, holds column j of W consecutive rows (a
/// transposed view's source line); row v (W elements, one whole vector) is stored at
/// dst + v * pitch bytes. 4 x 4 transposes within each 128-bit block, then the blocks exchanged
/// between vectors. One load and one store per W elements, where the 4 x 4 path of GatherTile takes
/// one per four: `strided` 1.10x as fast at 1 and 2 threads with the tile's 16 rows (bench/compare,
/// the Xeon reporting family 6 model 167, 2026-12-03), 1.18x / 1.21x with 32 (ExecuteGather).
HWY_INLINE void TransposeWide(const uint8_t* src, int64_t st, uint8_t* HWY_RESTRICT dst, int64_t pitch) {
  const hn::ScalableTag<uint32_t> d;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  const hn::Repartition<uint8_t, decltype(d)> d8;
  constexpr int64_t W = kWideRows;
  using V = hn::Vec<decltype(d)>;
  V r[W], t[W];
  for (int64_t j = 0; j < W; ++j) r[j] = hn::BitCast(d, hn::LoadU(d8, src + j * st));  // bytes: any alignment
  // t[g + k], block i: row 4i + k of columns g .. g + 3.
  for (int64_t g = 0; g < W; g += 4) {
    const auto ab_lo = hn::BitCast(d64, hn::InterleaveLower(d, r[g], r[g + 1]));
    const auto ef_lo = hn::BitCast(d64, hn::InterleaveLower(d, r[g + 2], r[g + 3]));
    const auto ab_hi = hn::BitCast(d64, hn::InterleaveUpper(d, r[g], r[g + 1]));
    const auto ef_hi = hn::BitCast(d64, hn::InterleaveUpper(d, r[g + 2], r[g + 3]));
    t[g] = hn::BitCast(d, hn::InterleaveLower(d64, ab_lo, ef_lo));
    t[g + 1] = hn::BitCast(d, hn::InterleaveUpper(d64, ab_lo, ef_lo));
    t[g + 2] = hn::BitCast(d, hn::InterleaveLower(d64, ab_hi, ef_hi));
    t[g + 3] = hn::BitCast(d, hn::InterleaveUpper(d64, ab_hi, ef_hi));
  }
  const auto store = [&](int64_t row, V v) { hn::StoreU(v, d, reinterpret_cast<uint32_t*>(dst + row * pitch)); };
  for (int64_t k = 0; k < 4; ++k) {
    if constexpr (W == 8) {  // blocks [a0 a1], [b0 b1] -> rows k: [a0 b0], 4 + k: [a1 b1]
      store(k, hn::ConcatLowerLower(d, t[4 + k], t[k]));
      store(4 + k, hn::ConcatUpperUpper(d, t[4 + k], t[k]));
    } else {  // blocks of a, b, c, e (t[k], t[4 + k], t[8 + k], t[12 + k]) -> row 4i + k: [ai bi ci ei]
      const V a = t[k], b = t[4 + k], c = t[8 + k], e = t[12 + k];
      const V ab_even = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(b), a);  // a0 b0 a2 b2
      const V ab_odd = hn::OddEvenBlocks(b, hn::SwapAdjacentBlocks(a));   // a1 b1 a3 b3
      const V ce_even = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(e), c);
      const V ce_odd = hn::OddEvenBlocks(e, hn::SwapAdjacentBlocks(c));
      store(k, hn::ConcatLowerLower(d, ce_even, ab_even));
      store(4 + k, hn::ConcatLowerLower(d, ce_odd, ab_odd));
      store(8 + k, hn::ConcatUpperUpper(d, ce_even, ab_even));
      store(12 + k, hn::ConcatUpperUpper(d, ce_odd, ab_odd));
    }
  }
}
#else
constexpr int64_t kWideRows = 0;  // no TransposeWide on this target
#endif

/// Rows of a blocked gather tile: row u's columns [c0, c0 + nc) go to tile + u * pitch bytes.
/// Where every kWideRows consecutive distinct rows of 4-byte elements are consecutive source
/// elements (`wide`: a transposed view, on AVX2 and AVX-512), blocks of kWideRows rows x
/// kWideRows columns are transposed a vector at a time (TransposeWide). Else where four (4-byte
/// elements) or two (8-byte) consecutive distinct rows are (`packed[u / L]`), a block of L rows x
/// L columns is loaded as L 16-byte vectors down the columns and transposed in registers;
/// everything else is copied element by element, column by column (each source line read is used
/// up by the rows sharing it).
template <class Elem>
HWY_INLINE void GatherTile(const uint8_t* const* uniq, const bool* packed, bool wide, int64_t D, int64_t c0,
                           int64_t nc, int64_t st, int64_t isz, int64_t pitch, int64_t ahead, Elem elem,
                           uint8_t* HWY_RESTRICT tile) {
  (void)packed;
  (void)wide;
  (void)ahead;  // unused where no vector transpose applies
  int64_t c = 0;
#if HWY_TARGET != HWY_SCALAR
  constexpr size_t kSize = Elem::kFixed;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2  // AVX2 and every AVX-512 target
  if constexpr (kSize == 4) {
    if (wide) {
      for (; c + kWideRows <= nc; c += kWideRows) {
        const int64_t off = (c0 + c) * st;
        for (int64_t u = 0; u < D; u += kWideRows) {
          if (ahead != 0) {  // the same columns of the next block (a line on AVX-512, half of one on AVX2)
            for (int64_t j = 0; j < kWideRows; ++j) __builtin_prefetch(uniq[u] + off + ahead + j * st, 0, 2);
          }
          TransposeWide(uniq[u] + off, st, tile + u * pitch + c * isz, pitch);
        }
      }
    }
  }
#endif
  if constexpr (kSize == 4 || kSize == 8) {
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
  }
#endif
  for (; c < nc; ++c) {
    const int64_t off = (c0 + c) * st;
    for (int64_t u = 0; u < D; ++u) elem(tile + u * pitch + c * isz, uniq[u] + off);
  }
}

/// Gather rows: element j of a row is at src_row + j * inner_stride. With `blocked` (the planner's
/// choice: a source stride of a cache line or more, a row loop, elements of at most 16 bytes —
/// a transposed view, say), whole rows are copied in groups, column block by column block,
/// through a tile in L1 (a blocked transpose): the source lines read for one row serve its
/// neighbours, and every destination row gets a contiguous piece. Rows of a group with the same
/// source row (replicas, from a zero-stride loop) are gathered once and written to each replica.
/// With `stream` the tile's rows go out with non-temporal stores. Otherwise, and for the partial
/// rows at the range's ends (or a range of fewer than two whole rows), rows are gathered one by
/// one with ordinary stores. With `copies` > 1 (the plan's replicas: CopyPlan::replica_elems) the
/// range lies in the first replica, and each tile row is written to every replica, so that the
/// whole rows' source is read once (the partial rows at the range's ends are walked per replica).
template <class Elem>
void ExecuteGather(const CopyPlan& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end, Elem elem,
                   bool blocked, bool stream, int64_t copies) {
  const int64_t st = p.inner_stride;
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  const auto row_fn = [st, isz, elem](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
    s += static_cast<int64_t>(off) * st;
    for (size_t j = 0; j < n; ++j) elem(d + static_cast<int64_t>(j) * isz, s + static_cast<int64_t>(j) * st);
  };
  const int64_t row_elems = p.row_elems;
  const int64_t span = copies > 1 ? p.replica_elems : 0, copy_bytes = span * isz;  // per replica
  // Elements [b, e) of the first replica (element b at `to`), walked row by row into every replica.
  const auto walk = [&](uint8_t* to, int64_t b, int64_t e) {
    for (int64_t k = 0; k < copies; ++k) WalkRows(p, src, to + k * copy_bytes, b + k * span, e + k * span, row_fn);
  };
  // Whole rows [r0, r1) get the blocked copy; the partial rows at the range's ends go row by row.
  const int64_t r0 = (begin + row_elems - 1) / row_elems;
  const int64_t r1 = end / row_elems;
  if (!blocked || r1 - r0 < 2) {
    if (blocked) TESSERA_COUNT_VARIANT(gather_blocked_rows);
    walk(out, begin, end);
    return;
  }
  if (copies > 1) TESSERA_COUNT_VARIANT(gather_blocked_replicas);
  else TESSERA_COUNT_VARIANT(gather_blocked_tiles);
  walk(out, begin, r0 * row_elems);
  uint8_t* o = out + (r0 * row_elems - begin) * isz;

  // A tile holds up to `distinct` rows of kTileRowBytes: columns per block C. Few rows, so that the
  // tile stays a small part of L1 beside the source lines it is filled from, but a whole 64-byte
  // line of a transposed source's column per block (64 / isz rows), each line read once. 16 rows
  // of 4-byte elements against 128: `strided` 1.07-1.14x faster at 1 thread, 1.02-1.10x at 2;
  // `bc_transposed` 1.05-1.09x and 1.00-1.09x (three comparisons, 2026-11-28, AMD family 25; 32
  // and 64 rows measured between them). With TransposeWide (4-byte elements, AVX2 and AVX-512)
  // two lines of each column per block, 32 rows (every 4-byte gather's tile on those targets,
  // measured with transposed views): `strided` 1.18x / 1.21-1.25x the 4 x 4 transposes of 16 rows
  // (1 / 2 threads, two runs), 16 rows with TransposeWide 1.10x / 1.10x, 64 rows 1.20x / 1.24x;
  // in tessera_probes the loads and streams of this order without the shuffles, 16 rows: 54-74% of
  // `stream` as the machine's load varied, 32 rows: 68%, 64 rows: 71% (where 16 rows gave 54%)
  // (the Xeon reporting family 6 model 167, 2026-12-03; not measured on an AMD core).
  constexpr int64_t kTileRowBytes = 256, kMaxDistinct = 64, kMaxGroup = 1024, kHash = 2048;
  const int64_t C = kTileRowBytes / isz;
  HWY_ALIGN uint8_t tile_bytes[kMaxDistinct * kTileRowBytes];
  const uint8_t* uniq[kMaxDistinct];   // distinct source rows of the group
  bool packed[kMaxDistinct];           // see GatherTile
  uint16_t which[kMaxGroup];           // group row -> its distinct row
  uint16_t slot[kHash];                // open addressing: distinct row + 1, 0 = empty

  // Streamed rows that fit one block (row_elems <= C, as bc_transposed's rows of 256 bytes): a
  // group's rows are contiguous in the output and go out as one run (StreamJoinedRows), whole
  // vectors at aligned addresses whatever the row's length and the destination's alignment (into
  // dst + 16, bc_transposed went from 59% / 79% of its aligned run to 97-105% / 97-114%, 1 / 2
  // threads, three runs). Its joins read a vector's bytes before and after the rows: the rows
  // start one slot in, and the tile's bytes are all defined. Rows of whole lines from a line still go row by row, with
  // the tile where it was (bc_transposed into an aligned dst 4% slower otherwise: the tile's
  // place in the frame moves `strided` and `bc_transposed` by up to 4%).
  bool joined = false;
#if HWY_TARGET != HWY_SCALAR
  const size_t lanes = hn::Lanes(hn::ScalableTag<uint8_t>());
  const bool whole_lines = row_elems * isz % kLineBytes == 0 && HeadBytes(o, kLineBytes) == 0;  // row by row
  joined = stream && !whole_lines && row_elems <= C && static_cast<size_t>(row_elems * isz) >= lanes &&
           lanes <= static_cast<size_t>(kTileRowBytes);
  if (joined) std::memset(tile_bytes, 0, sizeof(tile_bytes));
#endif
  uint8_t* const tile = joined ? tile_bytes + kTileRowBytes : tile_bytes;
  const int64_t distinct =
      std::min<int64_t>(joined ? kMaxDistinct - 2 : kMaxDistinct,
                        isz == 4 && kWideRows != 0 ? 2 * kLineBytes / isz : std::max<int64_t>(16, kLineBytes / isz));

  // Longer streamed rows of whole lines whose elements start element-aligned off the line (every
  // row the same, e.g. numpy's dst + 16): a first block of `shift` columns up to the line, so the
  // blocks after it start on absolute lines and stream whole. The line a row's last block ends in
  // is the line the next row's first block begins: within a group it is assembled from both (the
  // first block's pieces kept in `heads`) and streamed whole with the last block; only the
  // group's first row's head and its last row's tail are ordinary stores. (With every row's edges
  // ordinary stores, `strided` into dst + 16 ran at 0.88-0.92 of its aligned speed: an ordinary
  // store into a line not in the cache waits for the line to be read, the streams behind it too.)
  int64_t shift = 0;
  if (stream && !joined && row_elems * isz % kLineBytes == 0) {
    const int64_t head = static_cast<int64_t>(HeadBytes(o, kLineBytes));
    if (head % isz == 0 && head / isz < row_elems) shift = head / isz;
  }
  const size_t head_bytes = static_cast<size_t>(shift * isz);   // of each row, before its first line
  const size_t tail_bytes = (kLineBytes - head_bytes) % kLineBytes;  // of each row, after its last line
  HWY_ALIGN uint8_t heads[kMaxDistinct * kLineBytes];            // the first block's rows, kLineBytes apart
  const int64_t row_bytes = row_elems * isz;

  RowOdometer at(p, r0);
  const int inner = p.nloops - 1;
  const bool inner_replicas = inner >= 0 && p.loops[inner].src_stride == 0 && !p.loops[inner].segment;
  for (int64_t r = r0; r < r1;) {
    // The group: consecutive rows while their distinct source rows fit the tile. A group whose
    // first row starts element-aligned off a source line (a transposed view of a numpy array,
    // which starts 16 bytes into a line) takes the distinct rows up to the line's end, fewer
    // than `distinct`: then the next group's first row starts on a line, and each later group's
    // piece of every source row is whole lines (read once; a piece across two lines had its
    // second line read again by the next group, a column sweep later: `strided` from a numpy
    // array ran at half its speed from a line-aligned one, 5.4-6.6 ms against 2.7-3.0).
    std::memset(slot, 0, sizeof(slot));
    int64_t g = 0, D = 0, cap = distinct;
    {
      const int64_t h = static_cast<int64_t>(reinterpret_cast<uintptr_t>(src + at.src_off) % kLineBytes);
      if (h % isz == 0 && h / isz < distinct) cap = distinct - h / isz;  // at least one row
    }
    const uint8_t* prev = nullptr;
    while (r + g < r1 && g < kMaxGroup) {
      const uint8_t* row = src + at.src_off;
      if (row == prev) {  // a replica of the row before (an inner zero-stride loop): no lookup
        // The innermost loop's replicas left in its extent, all at once where they are the row's
        // (bc_transposed's 64 per row: the group's 1024 rows were formed one Advance at a time
        // before any of its bytes went out, and the streaming stores waited).
        const int64_t n =
            inner_replicas ? std::min(p.loops[inner].extent - at.idx[inner], std::min(r1 - r, kMaxGroup) - g) : 1;
        std::fill(which + g, which + g + n, which[g - 1]);
        g += n;
        at.Advance(p, n);
        continue;
      }
      prev = row;
      uint64_t h = (static_cast<uint64_t>(reinterpret_cast<uintptr_t>(row)) * 0x9E3779B97F4A7C15ull) >> 53;
      while (slot[h] != 0 && uniq[slot[h] - 1] != row) h = (h + 1) % kHash;
      if (slot[h] == 0) {
        if (D == cap) break;
        uniq[D] = row;
        slot[h] = static_cast<uint16_t>(++D);
      }
      which[g++] = static_cast<uint16_t>(slot[h] - 1);
      at.Advance(p, 1);
    }
    // Whether distinct rows u .. u + n - 1 are consecutive source elements (addresses compared as
    // integers: no pointer past the source).
    const auto consecutive = [&](int64_t u, int64_t n) {
      for (int64_t v = 1; v < n; ++v)
        if (reinterpret_cast<uintptr_t>(uniq[u + v]) - reinterpret_cast<uintptr_t>(uniq[u]) !=
            static_cast<uintptr_t>(v * isz))
          return false;
      return true;
    };
    constexpr int64_t W = kWideRows != 0 ? kWideRows : 1;  // TransposeWide's blocks of kWideRows rows
    bool wide = isz == 4 && kWideRows != 0 && D % W == 0;
    for (int64_t u = 0; wide && u < D; u += W) wide = consecutive(u, W);
    if (isz == 4 || isz == 8) {  // the register transposes' blocks of L = 16 / isz rows
      const int64_t L = 16 / isz;
      for (int64_t u = 0; u + L <= D; u += L) packed[u / L] = consecutive(u, L);
    }
    for (int64_t c0 = 0, nc = 0; c0 < row_elems; c0 += nc) {
      nc = c0 == 0 && shift != 0 ? shift : c0 + C < row_elems ? C : row_elems - c0;
      // Prefetch the next block's source lines while this one is copied (if it is whole).
      const int64_t ahead = c0 + 2 * C <= row_elems ? C * st : 0;
      GatherTile(uniq, packed, wide, D, c0, nc, st, isz, kTileRowBytes, ahead, elem, tile);
      // Write the tile's rows out contiguously: the destination rows may be a power of two apart,
      // and element-wise stores down a column would fight over the same cache sets.
      uint8_t* d = o + c0 * isz;
      const size_t bytes = static_cast<size_t>(nc * isz);
      const bool first_block = shift != 0 && c0 == 0, last_block = shift != 0 && c0 + nc == row_elems;
      if (first_block)
        for (int64_t u = 0; u < D; ++u) std::memcpy(heads + u * kLineBytes, tile + u * kTileRowBytes, head_bytes);
      for (int64_t e = 0; e < copies; ++e, d += copy_bytes) {
        if (joined) {
#if HWY_TARGET != HWY_SCALAR
          StreamJoinedRows(d, tile, kTileRowBytes, which, g, bytes);
#endif
        } else if (first_block) {  // the group's first row now; the others' with the rows before them
          CopyBytes(d, tile + which[0] * kTileRowBytes, bytes);
        } else if (last_block) {  // whole lines, then the line shared with the next row
          const size_t body = bytes - tail_bytes;  // bytes >= tail_bytes: both are tail_bytes mod a line
          for (int64_t k = 0; k < g; ++k) {
            uint8_t* to = d + k * row_bytes;
            const uint8_t* from = tile + which[k] * kTileRowBytes;
            CopyStream(to, from, body);
            if (k + 1 < g) {
              HWY_ALIGN uint8_t line[kLineBytes];
              std::memcpy(line, from + body, tail_bytes);
              std::memcpy(line + tail_bytes, heads + which[k + 1] * kLineBytes, head_bytes);
              StreamLine(to + body, line);
            } else {
              CopyBytes(to + body, from + body, tail_bytes);
            }
          }
        } else if (stream) {
          for (int64_t k = 0; k < g; ++k) CopyStream(d + k * row_elems * isz, tile + which[k] * kTileRowBytes, bytes);
        } else {
          for (int64_t k = 0; k < g; ++k) CopyBytes(d + k * row_elems * isz, tile + which[k] * kTileRowBytes, bytes);
        }
      }
    }
    o += g * row_elems * isz;
    r += g;
  }
  walk(o, r1 * row_elems, end);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace tessera::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
