// Per-target row kernels: the innermost contiguous work of a plan, written with Highway vectors.
// Included once per Highway target by kernels/rows.cpp and kernels/region.cpp (the per-target
// toggle guard below).
//
// Every kernel writes exactly the bytes it is asked to, reads only the source bytes the plan
// addresses, and accepts any alignment of source and destination. Short tails use plain memcpy of
// at most one vector's worth: masked stores in Highway 1.0.3 may read-modify-write whole vectors.

// Per-target include guard (the Highway idiom, see hwy/contrib/algo/copy-inl.h).
#if defined(TESSERA_LIB_KERNELS_ROW_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_LIB_KERNELS_ROW_KERNELS_INL_H_
#undef TESSERA_LIB_KERNELS_ROW_KERNELS_INL_H_
#else
#define TESSERA_LIB_KERNELS_ROW_KERNELS_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <hwy/highway.h>

#include "kernels/path_counters.hpp"
#include "copy_plan.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessera::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Copies n bytes with overlapping pairs of 16/8/4-byte moves, no libc call: for pieces shorter
/// than one vector (CopyBytes' tails) or than a short run of at most 64 bytes (FillPattern).
HWY_INLINE void CopySmall(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, size_t n) {
#if HWY_TARGET == HWY_SCALAR
  std::memcpy(dst, src, n);
#else
  if (n >= 16) {
    const hn::CappedTag<uint8_t, 16> d16;  // 16 lanes on every non-scalar target
    size_t i = 0;
    for (; i + 16 <= n; i += 16) hn::StoreU(hn::LoadU(d16, src + i), d16, dst + i);
    if (i < n) hn::StoreU(hn::LoadU(d16, src + n - 16), d16, dst + n - 16);
  } else if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, src, 8);
    std::memcpy(&b, src + n - 8, 8);
    std::memcpy(dst, &a, 8);
    std::memcpy(dst + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, src, 4);
    std::memcpy(&b, src + n - 4, 4);
    std::memcpy(dst, &a, 4);
    std::memcpy(dst + n - 4, &b, 4);
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  }
#endif
}

/// Copies the four vectors of bytes at src[0, 4N) to dst.
template <class D>
HWY_INLINE void Copy4Vectors(D d, size_t N, uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src) {
  const auto v0 = hn::LoadU(d, src);
  const auto v1 = hn::LoadU(d, src + N);
  const auto v2 = hn::LoadU(d, src + 2 * N);
  const auto v3 = hn::LoadU(d, src + 3 * N);
  hn::StoreU(v0, d, dst);
  hn::StoreU(v1, d, dst + N);
  hn::StoreU(v2, d, dst + 2 * N);
  hn::StoreU(v3, d, dst + 3 * N);
}

/// Copies `n` bytes from `src` to `dst`; the ranges must not overlap. On SCALAR (one-byte
/// "vectors") std::memcpy: the loop below would move a byte a step (a fuzz unit of two allocating
/// calls of 40 MiB of long runs took 6 s under ASan and coverage, 1.3 s with memcpy).
HWY_INLINE void CopyBytes(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, size_t n) {
#if HWY_TARGET == HWY_SCALAR
  std::memcpy(dst, src, n);
  return;
#endif
  const hn::ScalableTag<uint8_t> d;
  const size_t N = hn::Lanes(d);
  if (n < N) {
    CopySmall(dst, src, n);
    return;
  }
  size_t i = 0;
  if ((n & (4 * N - 1)) == 0) {  // whole groups of four vectors (N is a power of two): no tail
    do {
      Copy4Vectors(d, N, dst + i, src + i);
      i += 4 * N;
    } while (i < n);
    return;
  }
  for (; i + 4 * N <= n; i += 4 * N) Copy4Vectors(d, N, dst + i, src + i);
  for (; i + N <= n; i += N) hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
  // Tail: one more full vector ending at n (re-writes a few bytes with the same values).
  if (i < n) hn::StoreU(hn::LoadU(d, src + n - N), d, dst + n - N);
}

/// CopyBytes with the stores on the destination's vector boundaries: for `n` of at least four
/// vectors and kLongRunBytes into a `dst` off a boundary, one vector at `dst`, the rest from the
/// first boundary on (the last vector ends at `n`), so that only the first and the last store
/// straddle two cache lines (where the source lies as far past a boundary as `dst`, the loads fall
/// on boundaries too); shorter copies are CopyBytes'. For a pattern's long runs (FillPattern), from
/// an input into an output (or a stage of one) that starts anywhere: numpy's large arrays start 16
/// bytes into a line. Not for a doubling fill, which reads back bytes just written: loads off the
/// stores' boundaries wait for those stores (applied in CopyBytes itself, `narrow` ran 4-6%
/// slower). The region kernels' long runs (FillPattern from the output's first period, written
/// just before) take it too: not measured there.
HWY_INLINE void CopyBytesToBoundaries(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, size_t n) {
  const hn::ScalableTag<uint8_t> d;
  const size_t N = hn::Lanes(d);
  const size_t skew = reinterpret_cast<uintptr_t>(dst) & (N - 1);
  if (skew == 0 || n < 4 * N || n < static_cast<size_t>(kLongRunBytes)) {
    CopyBytes(dst, src, n);
    return;
  }
  hn::StoreU(hn::LoadU(d, src), d, dst);  // the first vector, past the first boundary
  size_t i = N - skew;
  for (; i + 4 * N <= n; i += 4 * N) Copy4Vectors(d, N, dst + i, src + i);
  for (; i + N <= n; i += N) hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
  if (i < n) hn::StoreU(hn::LoadU(d, src + (n - N)), d, dst + (n - N));  // the last vector, ending at n
}

/// Stores the vector `v` (whose bytes repeat with a period dividing its size) over `nbytes` bytes
/// of `dst`, where `nbytes` is a multiple of that period.
template <class D, class V>
HWY_INLINE void StoreRepeated(D d, V v, uint8_t* HWY_RESTRICT dst, size_t nbytes, const uint8_t* period,
                              size_t period_bytes) {
  const size_t vbytes = hn::Lanes(d) * sizeof(hn::TFromD<D>);
  if (nbytes < vbytes) {
    for (size_t i = 0; i < nbytes; i += period_bytes) std::memcpy(dst + i, period, period_bytes);
    return;
  }
  using T = hn::TFromD<D>;
  size_t i = 0;
  for (; i + 4 * vbytes <= nbytes; i += 4 * vbytes) {
    hn::StoreU(v, d, reinterpret_cast<T*>(dst + i));
    hn::StoreU(v, d, reinterpret_cast<T*>(dst + i + vbytes));
    hn::StoreU(v, d, reinterpret_cast<T*>(dst + i + 2 * vbytes));
    hn::StoreU(v, d, reinterpret_cast<T*>(dst + i + 3 * vbytes));
  }
  for (; i + vbytes <= nbytes; i += vbytes) hn::StoreU(v, d, reinterpret_cast<T*>(dst + i));
  // The tail store ends at nbytes and starts on a period boundary (both are multiples of it).
  if (i < nbytes) hn::StoreU(v, d, reinterpret_cast<T*>(dst + nbytes - vbytes));
}

/// Writes `n` copies of the `sizeof(T)`-byte element at `elem` to `dst` (T = uint8..uint64).
template <typename T>
HWY_INLINE void FillElement(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT elem, size_t n) {
  T value;
  std::memcpy(&value, elem, sizeof(T));
  const hn::ScalableTag<T> d;
  StoreRepeated(d, hn::Set(d, value), dst, n * sizeof(T), elem, sizeof(T));
}

/// Writes `nbytes` bytes of the sequence value, value, ... (T's bytes at `value`), the last one
/// cut short if nbytes is not a multiple of sizeof(T).
template <typename T>
HWY_INLINE void RepeatValue(uint8_t* HWY_RESTRICT dst, size_t nbytes, const uint8_t* HWY_RESTRICT value) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  size_t done = 0;
  for (; done + sizeof(T) <= nbytes; done += sizeof(T)) std::memcpy(dst + done, &v, sizeof(T));
  for (; done < nbytes; ++done) dst[done] = value[done % sizeof(T)];
}

/// Writes `nbytes` bytes of the periodic sequence run[phase], run[phase + 1], ... (wrapping at
/// run_bytes) to `dst`. A few runs of at most 64 bytes from phase 0 (tiny outputs) are copied one
/// by one from the source (4- and 8-byte runs from a register). Otherwise the first period is
/// copied from the source run; after that, short runs are replicated from the output already
/// written (cache-hot) in blocks of up to kBlock bytes, long runs are copied again from the source.
HWY_INLINE void FillPattern(uint8_t* HWY_RESTRICT dst, size_t nbytes, const uint8_t* HWY_RESTRICT run,
                            size_t run_bytes, size_t phase) {
  constexpr size_t kBlock = 4096;
  if (phase == 0 && nbytes <= 8 * run_bytes && run_bytes <= 64) {
    // A few short runs (a tiny output): copied from the source (or a register) one by one;
    // reading back what was just written would wait on store-to-load forwarding.
    TESSERA_COUNT_VARIANT(fill_pattern_few_runs);
    switch (run_bytes) {
      case 4: RepeatValue<uint32_t>(dst, nbytes, run); return;
      case 8: RepeatValue<uint64_t>(dst, nbytes, run); return;
      default: break;
    }
    size_t done = 0;
    for (; done + run_bytes <= nbytes; done += run_bytes) CopySmall(dst + done, run, run_bytes);
    CopySmall(dst + done, run, nbytes - done);
    return;
  }
  size_t first = run_bytes - phase < nbytes ? run_bytes - phase : nbytes;
  CopyBytesToBoundaries(dst, run + phase, first);
  if (first == nbytes) return;
  if (run_bytes >= static_cast<size_t>(kLongRunBytes)) {
    TESSERA_COUNT_VARIANT(fill_pattern_long_runs);
    size_t done = first;
    for (; done + run_bytes <= nbytes; done += run_bytes) CopyBytesToBoundaries(dst + done, run, run_bytes);
    if (done < nbytes) CopyBytesToBoundaries(dst + done, run, nbytes - done);
    return;
  }
  // Complete one period in dst (it starts at `phase`), then double it up to a block.
  TESSERA_COUNT_VARIANT(fill_pattern_doubling);
  const size_t rest = phase < nbytes - first ? phase : nbytes - first;
  CopyBytes(dst + first, run, rest);
  size_t done = first + rest;  // == run_bytes unless nbytes was smaller
  const size_t block_cap = kBlock / run_bytes * run_bytes;
  while (done < nbytes) {
    size_t block = done < block_cap ? done : block_cap;  // a whole number of periods
    if (block > nbytes - done) block = nbytes - done;
    CopyBytes(dst + done, dst, block);
    done += block;
  }
}

/// FillPattern for runs of kMemcpyRunBytes or more (pattern.memcpy, the planner's choice where
/// the plan writes with ordinary stores): the rest of the run from `phase`, then each whole run and
/// the last part of one, each a std::memcpy from the source run. The output must not overlap it.
HWY_INLINE void FillPatternMemcpy(uint8_t* HWY_RESTRICT dst, size_t nbytes, const uint8_t* HWY_RESTRICT run,
                                  size_t run_bytes, size_t phase) {
  size_t done = run_bytes - phase < nbytes ? run_bytes - phase : nbytes;
  std::memcpy(dst, run + phase, done);
  for (; done + run_bytes <= nbytes; done += run_bytes) std::memcpy(dst + done, run, run_bytes);
  if (done < nbytes) std::memcpy(dst + done, run, nbytes - done);
}

/// Byte-index table for short periods (FillShortPattern): bytes[k] = k % period for
/// k < lcm(period, vector bytes) + vector bytes, so that any window of one vector starting below
/// the lcm holds the indices of the sequence from that offset on.
struct ShortPatternTable {
  static constexpr size_t kMaxPeriod = kShuffleRunBytes;  // the run must fit one 128-bit block
  size_t lcm = 0;
  HWY_ALIGN uint8_t bytes[(kMaxPeriod + 1) * HWY_MAX_BYTES];

  /// N: the vector's bytes (at most HWY_MAX_BYTES; by default the target's).
  explicit ShortPatternTable(size_t period, size_t N = hn::Lanes(hn::ScalableTag<uint8_t>())) {
    size_t a = period, b = N;
    while (b != 0) {
      const size_t t = a % b;
      a = b;
      b = t;
    }
    lcm = period / a * N;
    for (size_t k = 0, r = 0; k < lcm + N; ++k, r = r + 1 == period ? 0 : r + 1) bytes[k] = static_cast<uint8_t>(r);
  }
};

#if HWY_TARGET != HWY_SCALAR
/// The `run_bytes` <= 16 bytes at `run` in every 128-bit block of a vector (the bytes after them
/// are unspecified). Reads only the run, with scalar loads: going through memory would stall on
/// store-to-load forwarding once per row.
template <class D>
HWY_INLINE hn::Vec<D> LoadRunDup128(D d, const uint8_t* HWY_RESTRICT run, size_t run_bytes) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  HWY_ALIGN uint8_t block[16] = {};  // big-endian: through memory (the shifts below assume LE)
  CopySmall(block, run, run_bytes);
  return hn::LoadDup128(d, block);
#else
  uint64_t lo = 0, hi = 0;  // little-endian: byte k of a lane is bits 8k..8k+7
  if (run_bytes >= 8) {
    std::memcpy(&lo, run, 8);
    if (run_bytes > 8) {
      std::memcpy(&hi, run + run_bytes - 8, 8);  // bytes [run_bytes - 8, run_bytes)
      hi >>= 8 * (16 - run_bytes);                // now bytes [8, run_bytes)
    }
  } else if (run_bytes >= 4) {
    uint32_t a, b;
    std::memcpy(&a, run, 4);
    std::memcpy(&b, run + run_bytes - 4, 4);  // bytes [run_bytes - 4, run_bytes)
    lo = a | (uint64_t{b} << (8 * (run_bytes - 4)));
  } else {
    for (size_t i = 0; i < run_bytes; ++i) lo |= uint64_t{run[i]} << (8 * i);
  }
  const hn::Repartition<uint64_t, D> d64;
  return hn::BitCast(d, hn::InterleaveLower(d64, hn::Set(d64, lo), hn::Set(d64, hi)));
#endif
}
#endif

/// FillPattern for runs of at most 16 bytes, starting at phase 0 and at least one vector long:
/// the run is broadcast to every 128-bit block and each stored vector is one byte shuffle of it
/// (TableLookupBytes) — the repeating pattern stays in registers. SCALAR has no byte shuffle: there
/// it is FillPattern itself (the planner gives "pattern.shuffle" only to targets with vectors).
HWY_INLINE void FillShortPattern(uint8_t* HWY_RESTRICT dst, size_t nbytes, const uint8_t* HWY_RESTRICT run,
                                 size_t run_bytes, const ShortPatternTable& table) {
#if HWY_TARGET == HWY_SCALAR
  (void)table;
  FillPattern(dst, nbytes, run, run_bytes, 0);
#else
  const hn::ScalableTag<uint8_t> d;
  const size_t N = hn::Lanes(d);
  const auto v = LoadRunDup128(d, run, run_bytes);
  size_t i = 0, j = 0;  // j = i % lcm
  const size_t P = table.lcm / N;  // vectors per period of the pattern
  if (P <= 4 && nbytes >= table.lcm) {
    // The period fits four registers (e.g. a 12-byte run: three vectors): store them in turn.
    const auto p0 = hn::TableLookupBytes(v, hn::LoadU(d, table.bytes));
    const auto p1 = P > 1 ? hn::TableLookupBytes(v, hn::LoadU(d, table.bytes + N)) : p0;
    const auto p2 = P > 2 ? hn::TableLookupBytes(v, hn::LoadU(d, table.bytes + 2 * N)) : p0;
    const auto p3 = P > 3 ? hn::TableLookupBytes(v, hn::LoadU(d, table.bytes + 3 * N)) : p0;
    for (; i + table.lcm <= nbytes; i += table.lcm) {
      hn::StoreU(p0, d, dst + i);
      if (P > 1) hn::StoreU(p1, d, dst + i + N);
      if (P > 2) hn::StoreU(p2, d, dst + i + 2 * N);
      if (P > 3) hn::StoreU(p3, d, dst + i + 3 * N);
    }
  }
  for (; i + N <= nbytes; i += N) {
    hn::StoreU(hn::TableLookupBytes(v, hn::LoadU(d, table.bytes + j)), d, dst + i);
    j = j + N == table.lcm ? 0 : j + N;
  }
  if (i < nbytes) {  // one more vector ending at nbytes: it starts back <= N - 1 bytes from i
    const size_t back = N - (nbytes - i);
    const size_t start = j >= back ? j - back : j + table.lcm - back;
    hn::StoreU(hn::TableLookupBytes(v, hn::LoadU(d, table.bytes + start)), d, dst + nbytes - N);
  }
#endif
}

/// Writes `n` copies of the 16-byte element at `elem`. On SCALAR: FillPattern with a 16-byte run,
/// the fill.any kernel (the planner gives "fill.16" only to targets with vectors).
HWY_INLINE void Fill16(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT elem, size_t n) {
#if HWY_TARGET == HWY_SCALAR
  FillPattern(dst, n * 16, elem, 16, 0);
#else
  const hn::ScalableTag<uint8_t> d;
  StoreRepeated(d, hn::LoadDup128(d, elem), dst, n * 16, elem, 16);
#endif
}

// ---------------------------------------------------------------------------------------------
// Streaming, for outputs much larger than the caches: the vector-aligned body of a contiguous
// piece goes out with non-temporal stores (hn::Stream), so the output is not first read into the
// cache; the unaligned head and tail use ordinary stores, but where consecutive pieces continue
// one another (StreamJoin, StageStream: the line they share completed and streamed whole). Pieces
// are long source runs (direct), whole cache lines of a fill (direct, from a register), 4 KiB
// blocks staged in L1 by the ordinary kernels, or the rows of a blocked gather's tile; ordinary
// and non-temporal stores share a cache line only at the ends of pieces that are not
// line-aligned. The executor calls hwy::FlushStream() at the end of every range. SCALAR has no
// such stores: it uses the ordinary copy.

// Lambdas called once per row: inlined into their kernel even where they are large.
#ifndef TESSERA_ROW_INLINE
#define TESSERA_ROW_INLINE __attribute__((always_inline))
#endif

/// Bytes from `dst` up to the next multiple of `v`.
HWY_INLINE size_t HeadBytes(const uint8_t* dst, size_t v) {
  return (v - reinterpret_cast<uintptr_t>(dst) % v) % v;
}

#if HWY_TARGET != HWY_SCALAR
/// Streams bytes [i, n) from src to dst in whole vectors, two a step (dst + i on a vector
/// boundary); returns where it stopped (fewer than a vector's bytes before n).
HWY_INLINE size_t StreamVectors(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, size_t i, size_t n) {
  const hn::ScalableTag<uint8_t> d;
  const size_t N = hn::Lanes(d);
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto v0 = hn::LoadU(d, src + i);
    const auto v1 = hn::LoadU(d, src + i + N);
    hn::Stream(v0, d, dst + i);
    hn::Stream(v1, d, dst + i + N);
  }
  if (i + N <= n) {
    hn::Stream(hn::LoadU(d, src + i), d, dst + i);
    i += N;
  }
  return i;
}
#endif

/// Streams the kLineBytes bytes at `line` (vector-aligned) to `dst` (on a line boundary); on
/// SCALAR, copies them.
HWY_INLINE void StreamLine(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT line) {
#if HWY_TARGET == HWY_SCALAR
  CopyBytes(dst, line, static_cast<size_t>(kLineBytes));
#else
  const hn::CappedTag<uint8_t, static_cast<size_t>(kLineBytes)> d;  // a line-aligned dst is vector-aligned
  for (size_t j = 0; j < static_cast<size_t>(kLineBytes); j += hn::Lanes(d))
    hn::Stream(hn::Load(d, line + j), d, dst + j);
#endif
}

/// CopyBytes with streaming stores for the aligned body; the head and tail with ordinary stores.
/// On SCALAR: CopyBytes (the planner gives streaming paths only to targets with streaming stores).
/// For pieces whose neighbours in a line come much later (the blocked gather's rows where they
/// are not joined): there an ordinary store keeps the line in the cache until the neighbour's
/// (with the edges' 16-byte pieces streamed instead, `strided` into dst + 16 went from 0.97 to
/// 0.86 of its aligned speed, an Intel Xeon reporting family 6 model 167, 2026-12-03). Pieces
/// that continue one another in time go through StreamJoin or StageStream, which stream the
/// lines they share whole; the blocked gather joins its rows' shared lines itself.
HWY_INLINE void CopyStream(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, size_t n) {
#if HWY_TARGET == HWY_SCALAR
  CopyBytes(dst, src, n);
#else
  const hn::ScalableTag<uint8_t> d;
  const size_t N = hn::Lanes(d);
  const size_t head = HeadBytes(dst, N);
  if (n < head + N) {
    CopyBytes(dst, src, n);
    return;
  }
  CopyBytes(dst, src, head);
  const size_t i = StreamVectors(dst, src, head, n);
  CopyBytes(dst + i, src + i, n - i);
#endif
}

#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
/// Streams the whole vectors of bytes [0, n) from `src` to `dst` (on a vector boundary) where
/// `src` lies `skew` bytes past a vector boundary (skew a multiple of 4, not 0): with loads on the
/// source's boundaries, so that no load straddles two cache lines. Output vector k is the last
/// N - skew bytes of the source's aligned vector at src - skew + kN and the first skew of the
/// next: both rotated by skew bytes (as 4-byte lanes) and blended, each rotated vector used by two
/// output vectors. The first vector is loaded unaligned (the aligned one before it may lie before
/// src), and so are those whose next aligned vector would pass src + n. Returns the bytes written
/// (n rounded down to whole vectors). Into dst + 16 from an aligned source (numpy's `out=` after a
/// 64-byte aligned input), every 64-byte load straddled two lines, and `outer` ran at 0.78-0.85
/// of its speed into an aligned dst, 1.00 when the source was 16 bytes off too (the Xeon reporting
/// family 6 model 207, 2026-12-06).
template <class D>
HWY_INLINE size_t StreamVectorsRotated(D d, uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, size_t n,
                                       size_t skew) {
  const hn::Repartition<uint32_t, D> du;
  const hn::RebindToSigned<decltype(du)> di;
  constexpr size_t NF = hn::MaxLanes(du);  // 4-byte lanes (Lanes(d) == 4 * NF: no scalable vectors here)
  constexpr size_t N = 4 * NF;
  const size_t vectors = n / N;
  const size_t p = skew / 4;  // lanes of the aligned vector before src's first byte
  // Lane l of a rotated vector is lane (l + p) % NF of the loaded one (NF a power of two); made in
  // registers, not from a table in memory: a piece may be a single 4 KiB run.
  using TI = hn::TFromD<decltype(di)>;
  const auto idx = hn::IndicesFromVec(
      du, hn::And(hn::Iota(di, static_cast<TI>(p)), hn::Set(di, static_cast<TI>(NF - 1))));
  const auto from_prev = hn::FirstN(du, NF - p);
  const uint8_t* aligned = src - skew + N;  // the aligned vector after src's first byte
  // Vector k (k >= 1) needs the aligned vectors at aligned + (k - 1) N and aligned + kN, the
  // latter within src + n: k <= (n + skew) / N - 2.
  const size_t rotated_end = (n + skew) / N >= 2 ? std::min(vectors, (n + skew) / N - 1) : 1;
  hn::Stream(hn::LoadU(d, src), d, dst);
  size_t k = 1;
  if (rotated_end > 1) {
    TESSERA_COUNT_VARIANT(stream_join_rotated);
    auto prev = hn::TableLookupLanes(hn::BitCast(du, hn::Load(d, aligned)), idx);
    for (; k + 2 <= rotated_end; k += 2) {  // two vectors a step, as StreamVectors
      const auto v0 = hn::Load(d, aligned + k * N);
      const auto v1 = hn::Load(d, aligned + (k + 1) * N);
      const auto cur0 = hn::TableLookupLanes(hn::BitCast(du, v0), idx);
      const auto cur1 = hn::TableLookupLanes(hn::BitCast(du, v1), idx);
      hn::Stream(hn::BitCast(d, hn::IfThenElse(from_prev, prev, cur0)), d, dst + k * N);
      hn::Stream(hn::BitCast(d, hn::IfThenElse(from_prev, cur0, cur1)), d, dst + (k + 1) * N);
      prev = cur1;
    }
    if (k < rotated_end) {
      const auto cur = hn::TableLookupLanes(hn::BitCast(du, hn::Load(d, aligned + k * N)), idx);
      hn::Stream(hn::BitCast(d, hn::IfThenElse(from_prev, prev, cur)), d, dst + k * N);
      ++k;
    }
  }
  for (; k < vectors; ++k) hn::Stream(hn::LoadU(d, src + k * N), d, dst + k * N);
  return vectors * N;
}
#endif

/// CopyStream for a sequence of pieces of which each may continue the one before in the output
/// (the rows of a direct walk, the runs of a pattern): the cache line two consecutive
/// pieces share is completed in a line buffer and streamed whole, where CopyStream would write it
/// with two groups of ordinary stores. Only the first piece's head (and a piece that does not
/// continue the one before) and the last piece's tail (Finish) are ordinary stores. An ordinary
/// store into a line that is not cached waits for the line to be read from memory, and the
/// streaming stores behind it wait with it: a plain loop of `inner`'s 8 KiB runs into dst + 16 took
/// 1.4x its aligned time with those stores and the same time joined; tessera's `inner` and `f64`
/// went from 0.84-0.93 of their aligned speed to 0.975 (bench/compare --dst-offset 16, 2026-11-29).
/// Call Finish before the range ends (before hwy::FlushStream). On SCALAR: ordinary copies.
/// Not for the staged blocks (ExecuteStagedStream): there the joined line's load from line_,
/// just written, slowed `rep3` and `narrow` into dst + 16 by 10-13% (bench/compare --dst-offset
/// 16, 2026-11-29, an AMD EPYC); they go out through StageStream.
class StreamJoin {
  static constexpr size_t kLine = static_cast<size_t>(kLineBytes);
  // Pieces from this many bytes (past the line they complete) on are loaded on the source's
  // vector boundaries where it lies whole lanes off them (StreamVectorsRotated). Into dst + 16 on
  // the Xeon reporting family 6 model 207 (bench/compare 9fec6e5 --dst-offset 16 --both,
  // 2026-12-06): `outer`'s pieces of 32 KiB (replica steps) 1.16-1.33x faster, but the 8 KiB runs
  // of `inner` and `f64` 0.99 and the 4 KiB runs of `bytes` 0.96-0.97 (re-read from L1 as they
  // repeat, where a load across two lines costs little); on an AMD EPYC (family 25) the same
  // loads for every piece had cost `bytes` 6-7% (docs/performance.md).
  static constexpr size_t kRotateMinBytes = 12 * 1024;
  alignas(64) uint8_t line_[kLine];  // the held bytes: the first held_ bytes of the line at at_ (pieces
                                     // shorter than a line move with CopySmall)
  uint8_t* at_ = nullptr;            // the held line (on a line boundary), or null
  size_t held_ = 0;                  // 0 < held_ < kLine while at_ is set

 public:
  /// Writes the n bytes at src to dst (the two must not overlap).
  HWY_INLINE void Put(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, size_t n) {
#if HWY_TARGET == HWY_SCALAR
    CopyBytes(dst, src, n);
#else
    if (n == 0) return;
    const hn::CappedTag<uint8_t, kLine> d;  // vectors of at most a line: a line-aligned dst is vector-aligned
    const size_t N = hn::Lanes(d);           // divides a line
    if (at_ != nullptr && at_ + held_ == dst) {  // continues the held line
      const size_t m = n < kLine - held_ ? n : kLine - held_;
      CopySmall(line_ + held_, src, m);
      held_ += m, dst += m, src += m, n -= m;
      if (held_ < kLine) return;
      StreamLine(at_, line_);
      at_ = nullptr, held_ = 0;
    } else {
      Finish();
      const size_t head = HeadBytes(dst, kLine);
      if (head >= n) {  // within one line, not from its start: nothing to hold
        CopySmall(dst, src, n);
        return;
      }
      CopySmall(dst, src, head);
      dst += head, src += head, n -= head;
    }
    size_t i = 0;  // dst is on a line boundary: the whole lines streamed (two a step), the rest held
#if !HWY_HAVE_SCALABLE
    // A long piece from a source off its vector boundaries by whole 4-byte lanes: loaded on them
    // (kRotateMinBytes).
    if (const size_t skew = reinterpret_cast<uintptr_t>(src) % N; skew % 4 == 0 && skew != 0 && n >= kRotateMinBytes)
      i = StreamVectorsRotated(d, dst, src, n / kLine * kLine, skew);
#endif
    for (; i + 2 * kLine <= n; i += 2 * kLine) {
      for (size_t j = 0; j < 2 * kLine; j += 2 * N) {
        const auto v0 = hn::LoadU(d, src + i + j);
        const auto v1 = hn::LoadU(d, src + i + j + N);
        hn::Stream(v0, d, dst + i + j);
        hn::Stream(v1, d, dst + i + j + N);
      }
    }
    for (; i + kLine <= n; i += kLine) {
      for (size_t j = 0; j < kLine; j += N) hn::Stream(hn::LoadU(d, src + i + j), d, dst + i + j);
    }
    if (i < n) {
      CopySmall(line_, src + i, n - i);
      at_ = dst + i, held_ = n - i;
    }
#endif
  }

  /// Writes the held bytes, if any, with ordinary stores.
  HWY_INLINE void Finish() {
    if (at_ != nullptr) CopySmall(at_, line_, held_);
    at_ = nullptr, held_ = 0;
  }
};

/// Streams ExecuteStagedStream's blocks, each continuing the one before in the output, in whole
/// vectors on the output's vector boundaries wherever the output lies: a block's bytes past its
/// last boundary are left in its stage and completed from the next block's first bytes (two
/// loads and a blend, the next block filling the other of two stages), then streamed whole. Only
/// the first block's head and the last block's tail (Finish) are ordinary stores. Both loads read
/// bytes stored a block earlier: a load of bytes just stored waits for those stores to complete
/// (StreamJoin's line buffer, loaded just after it is filled, slowed the staged paths on an AMD
/// EPYC; a held vector loaded from the end of the block just written cost the repeats 7-8% here).
/// Into dst + 16 on an Intel Xeon reporting family 6 model 167 (2026-12-03): with a block's edges
/// ordinary stores (each line read from memory first) `promote`, `mixed3d` and `nchw` had run at
/// 0.60-0.66 of their aligned speed, with the edges' 16-byte pieces streamed at 0.78-0.91.
/// The stages must have a vector of readable bytes before and after them. Call Finish before the
/// range ends (before hwy::FlushStream). On SCALAR: ordinary copies.
class StageStream {
  uint8_t* at_ = nullptr;             // the vector left unwritten (on a vector boundary), or null
  const uint8_t* held_ = nullptr;     // its first t_ bytes, in the stage of the block before
  size_t t_ = 0;                      // 0 < t_ < the vector's bytes while at_ is set

 public:
  /// Writes the n bytes at src (a stage) to dst. Where the call before left bytes (holding()), its
  /// stage must be untouched until this call.
  HWY_INLINE void Put(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, size_t n) {
#if HWY_TARGET == HWY_SCALAR
    CopyBytes(dst, src, n);
#else
    if (n == 0) return;
    const hn::ScalableTag<uint8_t> d;
    const size_t N = hn::Lanes(d);
    if (at_ != nullptr && at_ + t_ == dst && n >= N - t_) {  // completes the vector left
      const size_t m = N - t_;
      hn::Stream(hn::IfThenElse(hn::FirstN(d, t_), hn::LoadU(d, held_), hn::LoadU(d, src - t_)), d, at_);
      at_ = nullptr, t_ = 0, dst += m, src += m, n -= m;
    } else {
      Finish();
      const size_t head = HeadBytes(dst, N);
      if (head >= n) {
        CopyBytes(dst, src, n);
        return;
      }
      CopyBytes(dst, src, head);
      dst += head, src += head, n -= head;
    }
    const size_t i = StreamVectors(dst, src, 0, n);  // dst on a vector boundary
    if (i < n) at_ = dst + i, held_ = src + i, t_ = n - i;
#endif
  }

  /// Whether the last Put left bytes for the next (whose block must then fill the other stage).
  HWY_INLINE bool holding() const { return at_ != nullptr; }

  /// Writes the bytes left, if any, with ordinary stores (their stage still holds them).
  HWY_INLINE void Finish() {
    if (at_ != nullptr) CopyBytes(at_, held_, t_);
    at_ = nullptr, held_ = nullptr, t_ = 0;
  }
};

/// Writes `n` copies of the kSize-byte element at `elem` (kSize 1, 2, 4, 8 or 16) with streaming
/// stores of whole cache lines from a register: the bytes up to the first line boundary and after
/// the last whole line with ordinary stores (FillPattern at the right phase), so any alignment of
/// dst works. On SCALAR: ordinary stores.
template <size_t kSize>
HWY_INLINE void FillElementStream(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT elem, size_t n) {
  const size_t nbytes = n * kSize;
  // Ordinary stores of `bytes` bytes of the sequence from byte `phase` of an element: the vector
  // fill where whole elements start at dst, FillPattern otherwise.
  const auto plain = [elem](uint8_t* d, size_t bytes, size_t phase) TESSERA_ROW_INLINE {
    if (bytes == 0) return;
    if (phase == 0 && bytes % kSize == 0) {
      if constexpr (kSize == 16) {
        Fill16(d, elem, bytes / 16);
      } else {
        FillElement<hwy::UnsignedFromSize<kSize>>(d, elem, bytes / kSize);
      }
    } else {
      FillPattern(d, bytes, elem, kSize, phase);
    }
  };
#if HWY_TARGET != HWY_SCALAR
  const size_t head = HeadBytes(dst, kLineBytes);
  const hn::CappedTag<uint8_t, kLineBytes> d;  // at most one line: divides every line
  const size_t N = hn::Lanes(d);
  if (head == 0 && nbytes % kLineBytes == 0 && kSize != 16) {  // whole lines (rows of a line-aligned output)
    const hn::Repartition<hwy::UnsignedFromSize<kSize == 16 ? 8 : kSize>, decltype(d)> dt;
    hwy::UnsignedFromSize<kSize == 16 ? 8 : kSize> value;
    std::memcpy(&value, elem, sizeof value);
    const auto v = hn::BitCast(d, hn::Set(dt, value));
    for (size_t i = 0; i < nbytes; i += N) hn::Stream(v, d, dst + i);
    return;
  }
  if (nbytes >= head + kLineBytes) {
    hn::Vec<decltype(d)> v;
    if (head % kSize == 0) {  // dst is element-aligned (the usual case): the element from a register
      if constexpr (kSize == 16) {
        v = hn::LoadDup128(d, elem);
      } else {
        const hn::Repartition<hwy::UnsignedFromSize<kSize>, decltype(d)> dt;
        hwy::UnsignedFromSize<kSize> value;
        std::memcpy(&value, elem, kSize);
        v = hn::BitCast(d, hn::Set(dt, value));
      }
    } else {  // the bytes of a line that starts `head` bytes in, through memory
      HWY_ALIGN uint8_t line[kLineBytes];
      FillPattern(line, kLineBytes, elem, kSize, head % kSize);
      v = hn::Load(d, line);
    }
    plain(dst, head, 0);
    const size_t body = (nbytes - head) / kLineBytes * kLineBytes;
    for (size_t i = head; i < head + body; i += N) hn::Stream(v, d, dst + i);
    plain(dst + head + body, nbytes - head - body, (head + body) % kSize);
    return;
  }
#endif
  plain(dst, nbytes, 0);
}

/// The direct fill route's writer of consecutive rows, each one element repeated (kSize 1, 2, 4,
/// 8 or 16 bytes), for rows that start element-aligned: every whole cache line goes out with a
/// streaming store from registers, also a line that holds the end of one row and the start of the
/// next (the two elements blended at the row boundary), so an output at any element-aligned
/// address (numpy's dst + 16, say) streams as an aligned one does. A row's end inside a line is
/// held back until the next row completes it; what is left at the range's ends (a partial line at
/// its start, a held piece at Finish) takes ordinary stores. Rows that do not start
/// element-aligned take FillElementStream. Call Row for the rows in output order, then Finish.
template <size_t kSize>
class FillRowsStream {
#if HWY_TARGET != HWY_SCALAR
  using D = hn::CappedTag<uint8_t, kLineBytes>;
  // The held row's vector is rebuilt from held_elem_ when its line is completed, not kept: a
  // sizeless vector (SVE, RVV) cannot be a class member.
#endif
  uint8_t* held_at_ = nullptr;       // where the held piece starts (mid-line), or null
  size_t held_bytes_ = 0;            // its length: it ends at the next line boundary's split
  const uint8_t* held_elem_ = nullptr;

 public:
  HWY_INLINE void Row(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT elem, size_t n) {
#if HWY_TARGET != HWY_SCALAR
    const size_t nbytes = n * kSize;
    if (reinterpret_cast<uintptr_t>(dst) % kSize != 0) {
      Finish();
      FillElementStream<kSize>(dst, elem, n);
      return;
    }
    constexpr size_t kLine = static_cast<size_t>(kLineBytes);
    const D d;
    const size_t N = hn::Lanes(d);  // divides a line
    const auto v = Splat(d, elem);
    size_t head = HeadBytes(dst, kLine);
    if (head > nbytes) head = nbytes;
    if (held_at_ != nullptr) {
      if (held_at_ + held_bytes_ == dst && held_bytes_ + head == kLine) {  // the line is complete
        StreamHeldLine(d, v);
        held_at_ = nullptr;
      } else {
        Finish();
        FillOrdinary(dst, elem, head);
      }
    } else if (head != 0) {
      FillOrdinary(dst, elem, head);
    }
    size_t i = head;
    for (; i + kLine <= nbytes; i += kLine) {
      for (size_t j = 0; j < kLine; j += N) hn::Stream(v, d, dst + i + j);
    }
    if (i < nbytes) {  // a piece of the line that the next row may complete
      held_at_ = dst + i;
      held_bytes_ = nbytes - i;
      held_elem_ = elem;
    }
#else
    FillElementStream<kSize>(dst, elem, n);
#endif
  }

  /// Row for a row of exactly one cache line (kLineBytes / kSize elements) when it starts on a
  /// line and no piece is held: its vectors streamed, none of Row's bookkeeping, which cost as much
  /// as the line itself where every row is one line (`column`: tile of an (n, 1) float32 by
  /// (1, 16)) and made that loop's speed depend on where the compiler put it. The same stores as
  /// Row. Returns false, having written nothing, otherwise.
  HWY_INLINE bool LineRow(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT elem) {
#if HWY_TARGET != HWY_SCALAR
    constexpr size_t kLine = static_cast<size_t>(kLineBytes);
    if (held_at_ != nullptr || reinterpret_cast<uintptr_t>(dst) % kLine != 0) return false;
    const D d;
    const size_t N = hn::Lanes(d);  // divides a line
    const auto v = Splat(d, elem);
    for (size_t j = 0; j < kLine; j += N) hn::Stream(v, d, dst + j);
    return true;
#else
    static_cast<void>(dst), static_cast<void>(elem);
    return false;
#endif
  }

  /// Row for a row of exactly one cache line that starts where the held piece ends (rows of one
  /// line each into an output that does not start on a line: numpy's arrays start 16 bytes into
  /// one): the line the two share is completed from a register and streamed, and the row's own
  /// tail held in its place. Row's stores, without its general bookkeeping, which took `column`
  /// (tile of an (n, 1) float32 by (1, 16)) into dst + 16 to 1.6x its time into an aligned output
  /// (bench/compare --dst-offset 16, 2026-11-29). Returns false, having written nothing, otherwise.
  HWY_INLINE bool ShiftedLineRow(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT elem) {
#if HWY_TARGET != HWY_SCALAR
    constexpr size_t kLine = static_cast<size_t>(kLineBytes);
    if (held_at_ == nullptr || held_at_ + held_bytes_ != dst) return false;
    // held_bytes_ = dst's offset in its line (the row before ended at dst), so the row fills the
    // rest of that line and holds as many bytes of the next.
    const D d;
    StreamHeldLine(d, Splat(d, elem));
    held_at_ += kLine;
    held_elem_ = elem;
    return true;
#else
    static_cast<void>(dst), static_cast<void>(elem);
    return false;
#endif
  }

  /// Writes the held piece, if any, with ordinary stores.
  HWY_INLINE void Finish() {
    if (held_at_ != nullptr) FillOrdinary(held_at_, held_elem_, held_bytes_);
    held_at_ = nullptr;
  }

 private:
#if HWY_TARGET != HWY_SCALAR
  // Streams the line at held_at_: its first held_bytes_ bytes the held element, the rest v's.
  HWY_INLINE void StreamHeldLine(D d, hn::Vec<D> v) const {
    constexpr size_t kLine = static_cast<size_t>(kLineBytes);
    const size_t N = hn::Lanes(d);  // divides a line
    const auto held = Splat(d, held_elem_);
    for (size_t i = 0; i < kLine; i += N) {
      const size_t from_held = held_bytes_ <= i ? 0 : held_bytes_ - i < N ? held_bytes_ - i : N;
      hn::Stream(hn::IfThenElse(hn::FirstN(d, from_held), held, v), d, held_at_ + i);
    }
  }

  // The element at `elem` repeated across a vector of d (element-aligned lanes).
  static HWY_INLINE hn::Vec<D> Splat(D d, const uint8_t* elem) {
    if constexpr (kSize == 16) {
      return hn::LoadDup128(d, elem);
    } else {
      const hn::Repartition<hwy::UnsignedFromSize<kSize>, D> dt;
      hwy::UnsignedFromSize<kSize> value;
      std::memcpy(&value, elem, kSize);
      return hn::BitCast(d, hn::Set(dt, value));
    }
  }
#endif

  // `bytes` bytes of whole elements from an element-aligned `dst`, ordinary stores.
  static HWY_INLINE void FillOrdinary(uint8_t* dst, const uint8_t* elem, size_t bytes) {
    if constexpr (kSize == 16) {
      Fill16(dst, elem, bytes / 16);
    } else {
      FillElement<hwy::UnsignedFromSize<kSize>>(dst, elem, bytes / kSize);
    }
  }
};

/// FillPattern for long runs (at least one vector), each run a streamed copy from the source run,
/// the runs joined (StreamJoin: the caller calls join.Finish()).
HWY_INLINE void FillPatternStream(StreamJoin& join, uint8_t* HWY_RESTRICT dst, size_t nbytes,
                                  const uint8_t* HWY_RESTRICT run, size_t run_bytes, size_t phase) {
  size_t done = run_bytes - phase < nbytes ? run_bytes - phase : nbytes;
  join.Put(dst, run + phase, done);
  for (; done + run_bytes <= nbytes; done += run_bytes) join.Put(dst + done, run, run_bytes);
  join.Put(dst + done, run, nbytes - done);
}

// ---------------------------------------------------------------------------------------------
// Element repeats (numpy.repeat): each source element written `reps` times in a row.

/// Writes `n` copies of the kSize-byte element at `elem` (kSize 0: `size` bytes): short counts
/// element by element from a register, long ones with the fill kernels.
template <size_t kSize>
HWY_INLINE void FillCopies(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT elem, size_t n, size_t size) {
  const size_t sz = kSize != 0 ? kSize : size;
  if (n * sz >= 64) {
    if constexpr (kSize == 1 || kSize == 2 || kSize == 4 || kSize == 8) {
      FillElement<hwy::UnsignedFromSize<kSize>>(dst, elem, n);
    } else if constexpr (kSize == 16) {
      Fill16(dst, elem, n);
    } else {
      FillPattern(dst, n * sz, elem, sz, 0);
    }
    return;
  }
  if constexpr (kSize == 1 || kSize == 2 || kSize == 4 || kSize == 8) {
    hwy::UnsignedFromSize<kSize> v;
    std::memcpy(&v, elem, kSize);
    for (size_t k = 0; k < n; ++k) std::memcpy(dst + k * kSize, &v, kSize);
  } else {
    for (size_t k = 0; k < n; ++k) std::memcpy(dst + k * sz, elem, sz);
  }
}

/// Whether SplatStore16 applies: 1-8 byte elements on a target with vectors.
template <size_t kSize>
constexpr bool kSplat16 = HWY_TARGET != HWY_SCALAR && (kSize == 1 || kSize == 2 || kSize == 4 || kSize == 8);

/// Stores 16 bytes of copies of the kSize-byte element at `elem` (kSplat16<kSize>): the caller
/// keeps the first c * kSize of them and writes its next piece over the rest, so a run of c <=
/// 16 / kSize copies costs one store. dst must have 16 writable bytes.
template <size_t kSize>
HWY_INLINE void SplatStore16(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT elem) {
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kSplat16<kSize>) {
    using T = hwy::UnsignedFromSize<kSize>;
    const hn::FixedTag<T, 16 / kSize> d;
    T v;
    std::memcpy(&v, elem, kSize);
    hn::StoreU(hn::Set(d, v), d, reinterpret_cast<T*>(dst));
  }
#else
  (void)dst;
  (void)elem;
#endif
}

/// A repeat row (Kernel::repeat): source element j (at byte offset j * stride) written `reps`
/// times, j = 0, 1, ...; writes the row's output elements [off, off + n) to dst.
template <size_t kSize>
HWY_INLINE void RepeatRow(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, int64_t stride, size_t reps,
                          size_t off, size_t n, size_t size) {
  const size_t sz = kSize != 0 ? kSize : size;
  int64_t j = static_cast<int64_t>(off / reps);
  const size_t phase = off % reps;
  if (phase != 0) {
    const size_t c = reps - phase < n ? reps - phase : n;
    FillCopies<kSize>(dst, src + j * stride, c, sz);
    dst += c * sz;
    n -= c;
    ++j;
  }
  if constexpr (kSplat16<kSize>) {  // short runs: one 16-byte store each, the next run overwrites the rest
    if (reps * kSize <= 16)
      for (; n >= reps && n * kSize >= 16; n -= reps, ++j, dst += reps * kSize) SplatStore16<kSize>(dst, src + j * stride);
  }
  for (; n >= reps; n -= reps, ++j, dst += reps * sz) FillCopies<kSize>(dst, src + j * stride, reps, sz);
  if (n != 0) FillCopies<kSize>(dst, src + j * stride, n, sz);
}

/// Byte-index tables of RepeatShuffleRow: output vector q (16 bytes) of a 16-byte source block
/// whose `itemsize`-byte elements are each repeated `reps` times is the block shuffled by idx[q].
struct RepeatShuffleTable {
  HWY_ALIGN uint8_t idx[kRepeatShuffleMaxReps][16];
  RepeatShuffleTable(size_t itemsize, size_t reps) {
    for (size_t q = 0; q < reps; ++q)
      for (size_t b = 0; b < 16; ++b) {
        const size_t at = q * 16 + b;  // output byte
        idx[q][b] = static_cast<uint8_t>(at / itemsize / reps * itemsize + at % itemsize);
      }
  }
};

/// RepeatRow of a contiguous source of kSize-byte elements (1, 2, 4, 8) repeated 2..8 times:
/// every 16-byte source block becomes `reps` 16-byte stores, each one byte shuffle of the block.
/// SCALAR: RepeatRow (the planner gives "repeat.shuffle" only to targets with vectors).
template <size_t kSize>
HWY_INLINE void RepeatShuffleRow(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, size_t reps,
                                 size_t off, size_t n, const RepeatShuffleTable& table) {
#if HWY_TARGET == HWY_SCALAR
  (void)table;
  RepeatRow<kSize>(dst, src, kSize, reps, off, n, kSize);
#else
  size_t j = off / reps;  // source element
  const size_t phase = off % reps;
  if (phase != 0) {  // the rest of a partly written element's run
    const size_t c = reps - phase < n ? reps - phase : n;
    RepeatRow<kSize>(dst, src, kSize, reps, off, c, kSize);
    dst += c * kSize;
    n -= c;
    ++j;
  }
  const hn::FixedTag<uint8_t, 16> d;
  constexpr size_t E = 16 / kSize;  // source elements per block
  const size_t block_out = 16 * reps;
  for (; n >= E * reps; n -= E * reps, j += E, dst += block_out) {
    const auto v = hn::LoadU(d, src + j * kSize);
    for (size_t q = 0; q < reps; ++q) hn::StoreU(hn::TableLookupBytes(v, hn::Load(d, table.idx[q])), d, dst + 16 * q);
  }
  RepeatRow<kSize>(dst, src + j * kSize, kSize, reps, 0, n, kSize);
#endif
}

#if HWY_TARGET != HWY_SCALAR
/// The direct route of "pattern.shuffle" ("pattern.shuffle.nt.direct": rows of runs of at most
/// kShuffleRunBytes, at least kShuffleDirectRowBytes long): the output's whole vectors streamed
/// from registers, each (at most a line) one byte shuffle of the row's run broadcast to every
/// 128-bit block (FillShortPattern's, at the vector's own place in the pattern: byte t of a row is
/// run[t % run_bytes]). The vector two consecutive rows share is assembled in registers: the end
/// of one row kept (pending) until the next row's start completes it, then streamed whole; only
/// a piece that does not continue the one before writes its first bytes, and the last piece its
/// last bytes, with ordinary stores. The staged route built each row in a 4 KiB block in L1 and
/// streamed the block: `narrow` (rows of 40 copies of a 12-byte run) at 68-79% of `stream` (5f63cb8,
/// a Xeon reporting family 6 model 167, 2026-12-04); 1.27x that speed since (bench/compare 87cfa68,
/// 2026-12-05). Call Finish before the range ends.
class PatternStream {
  static constexpr size_t kLine = static_cast<size_t>(kLineBytes);
  const hn::CappedTag<uint8_t, kLine> d_;  // at most a line: a line-aligned dst is aligned
  const size_t run_;
  // table_.bytes[k] = k % run for k < lcm + one vector (lcm: of the run and the vector): the
  // vector at pattern offset j (< lcm) is the run shuffled by table_.bytes + j.
  const ShortPatternTable table_;
  HWY_ALIGN uint8_t pend_[kLine];  // the pending vector: its first pend_n_ bytes belong at pend_at_
  uint8_t* pend_at_ = nullptr;     // a vector boundary, or null
  size_t pend_n_ = 0;              // 0 < pend_n_ < the vector's bytes while pend_at_ is set

  // The vector whose byte 0 is byte t of the row (t may be "negative": any t congruent to it
  // modulo the run, given as t % run).
  template <class V>
  HWY_INLINE V At(V v, size_t t_mod_run) const {
    return hn::TableLookupBytes(v, hn::LoadU(d_, table_.bytes + t_mod_run));
  }

 public:
  /// run_bytes: 1 ... kShuffleRunBytes.
  explicit PatternStream(size_t run_bytes) : run_(run_bytes), table_(run_bytes, hn::Lanes(d_)) {}

  /// Writes bytes [t, t + n) of the row whose run is at `run` to dst (t: from the row's start).
  HWY_INLINE void Put(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT run, size_t t, size_t n) {
    if (n == 0) return;
    const size_t N = hn::Lanes(d_);
    const auto v = LoadRunDup128(d_, run, run_);
    size_t j = t % run_;  // the pattern's offset of dst
    if (pend_at_ != nullptr && pend_at_ + pend_n_ == dst) {  // completes the pending vector
      const size_t take = N - pend_n_ < n ? N - pend_n_ : n;
      const auto joined =
          hn::IfThenElse(hn::FirstN(d_, pend_n_), hn::Load(d_, pend_), At(v, (j + run_ - pend_n_ % run_) % run_));
      if (take < N - pend_n_) {  // the piece ends inside it too
        hn::Store(joined, d_, pend_);
        pend_n_ += take;
        return;
      }
      hn::Stream(joined, d_, pend_at_);
      pend_at_ = nullptr, pend_n_ = 0;
      dst += take, n -= take, j = (j + take) % run_;
    } else {
      Finish();
      const size_t head = HeadBytes(dst, N);
      if (head != 0) {  // ordinary stores up to the first vector boundary
        const size_t m = head < n ? head : n;
        hn::Store(At(v, j), d_, pend_);
        CopySmall(dst, pend_, m);
        dst += m, n -= m, j = (j + m) % run_;
      }
    }
    size_t i = 0;
    if (table_.lcm <= 4 * N && n >= table_.lcm) {  // the period in (at most) four registers, stored in turn
      const size_t P = table_.lcm / N;
      const auto at = [&](size_t q) {
        const size_t k = j + q * N;
        return hn::TableLookupBytes(v, hn::LoadU(d_, table_.bytes + (k < table_.lcm ? k : k - table_.lcm)));
      };
      const auto p0 = at(0), p1 = P > 1 ? at(1) : p0, p2 = P > 2 ? at(2) : p0, p3 = P > 3 ? at(3) : p0;
      for (; i + table_.lcm <= n; i += table_.lcm) {
        hn::Stream(p0, d_, dst + i);
        if (P > 1) hn::Stream(p1, d_, dst + i + N);
        if (P > 2) hn::Stream(p2, d_, dst + i + 2 * N);
        if (P > 3) hn::Stream(p3, d_, dst + i + 3 * N);
      }
    }
    for (; i + N <= n; i += N) hn::Stream(At(v, (j + i) % table_.lcm), d_, dst + i);
    if (i < n) {  // the rest pending (dst + i: a vector boundary)
      hn::Store(At(v, (j + i) % table_.lcm), d_, pend_);
      pend_at_ = dst + i, pend_n_ = n - i;
    }
  }

  /// Writes the pending bytes, if any, with ordinary stores.
  HWY_INLINE void Finish() {
    if (pend_at_ != nullptr) CopySmall(pend_at_, pend_, pend_n_);
    pend_at_ = nullptr, pend_n_ = 0;
  }
};
#endif

#if HWY_TARGET != HWY_SCALAR
/// The direct route of "repeat.shuffle" for 4- and 8-byte elements ("repeat.shuffle.nt.direct"):
/// the output's whole lines streamed from registers, each vector (V lanes, at most a line) one
/// lane permutation of V source elements loaded as a vector. A period of `reps` vectors takes V
/// source elements; vector q of a period whose first output element is `phase` elements into its
/// source element's copies reads from source element (phase + q V) / reps on, lanes
/// Lanes(phase')[l] = (phase' + l) / reps with phase' = (phase + q V) % reps. The elements before
/// a piece's first line boundary and after its last whole period (the periods' loads stay inside
/// the source row) go through `join` (StreamJoin: a line shared with the piece before is
/// completed and streamed whole), written first by RepeatRow into a small buffer; where the
/// output's elements straddle lines (dst not a multiple of kSize), the whole piece does. The
/// staged route wrote each 64-byte line as four 16-byte byte shuffles into a stage in L1, then
/// streamed it: `rep3`, `rep4`, `rep8` at 77-82% of `stream` (5f63cb8, a Xeon reporting family 6
/// model 167, 2026-12-04), where a loop of vector loads, permutations and streaming stores ran at
/// 105-109% beside c1e0d44's plan at 80-86% (2026-12-05, the same machine; bench/results/
/// 2026-12-05-xeon-f6m167/experiments.txt).
template <size_t kSize>
class RepeatStream {
  using T = hwy::UnsignedFromSize<kSize>;
  using TI = hwy::MakeSigned<T>;
  static constexpr size_t kLine = static_cast<size_t>(kLineBytes);
  static constexpr size_t kLineLanes = kLine / kSize;
  static constexpr size_t kSpillElems = 1024 / kSize;  // RepeatRow's buffer for heads and tails
  const hn::CappedTag<T, kLineLanes> d_;               // at most a line: a line-aligned dst is aligned
  const size_t reps_;
  const size_t src_elems_;  // the source row's elements
  HWY_ALIGN TI lanes_[kRepeatShuffleMaxReps][kLineLanes];
  HWY_ALIGN uint8_t spill_[kSpillElems * kSize];

  // Output elements [off, off + n) of the row through the join.
  HWY_INLINE void Spill(StreamJoin& join, uint8_t* dst, const uint8_t* s, size_t off, size_t n) {
    while (n > 0) {
      const size_t m = n < kSpillElems ? n : kSpillElems;
      RepeatRow<kSize>(spill_, s, static_cast<int64_t>(kSize), reps_, off, m, kSize);
      join.Put(dst, spill_, m * kSize);
      dst += m * kSize, off += m, n -= m;
    }
  }

 public:
  /// reps: 2 ... kRepeatShuffleMaxReps; src_elems: the source row's elements.
  RepeatStream(size_t reps, size_t src_elems) : reps_(reps), src_elems_(src_elems) {
    const size_t V = hn::Lanes(d_);
    for (size_t ph = 0; ph < reps; ++ph)
      for (size_t l = 0; l < V; ++l) lanes_[ph][l] = static_cast<TI>((ph + l) / reps);
  }

  /// Writes output elements [off, off + n) of the row whose source row starts at s to dst.
  HWY_INLINE void Put(StreamJoin& join, uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT s, size_t off,
                      size_t n) {
    if (reinterpret_cast<uintptr_t>(dst) % kSize != 0) {  // elements straddle lines
      TESSERA_COUNT_VARIANT(repeat_stream_spilled);
      Spill(join, dst, s, off, n);
      return;
    }
    size_t head = HeadBytes(dst, kLine) / kSize;
    if (head > n) head = n;
    if (head != 0) {
      Spill(join, dst, s, off, head);
      dst += head * kSize, off += head, n -= head;
    } else {
      join.Finish();  // a line held from elsewhere (this piece starts on a line boundary)
    }
    const size_t V = hn::Lanes(d_), reps = reps_, period = reps * V;
    size_t j = off / reps;  // the period's first source element
    size_t from[kRepeatShuffleMaxReps], phase[kRepeatShuffleMaxReps];
    for (size_t q = 0; q < reps; ++q) {
      const size_t t = off % reps + q * V;
      from[q] = t / reps;
      phase[q] = t % reps;
    }
    T* o = reinterpret_cast<T*>(dst);  // a multiple of kSize (above)
    const hn::Repartition<uint8_t, decltype(d_)> d8;  // the source: any address
    size_t done = 0;
    for (; done + period <= n && j + from[reps - 1] + V <= src_elems_; done += period, j += V, o += period) {
      for (size_t q = 0; q < reps; ++q) {
        const auto v = hn::BitCast(d_, hn::LoadU(d8, s + (j + from[q]) * kSize));
        hn::Stream(hn::TableLookupLanes(v, hn::SetTableIndices(d_, lanes_[phase[q]])), d_, o + q * V);
      }
    }
    // The streamed periods end on a line: a period of vectors narrower than a line (AVX2, SSE4,
    // NEON) with an odd number of copies ends inside one, whose rest the join would then write
    // with ordinary stores beside the streamed bytes. Such periods go through the join again.
    while (done != 0 && done * kSize % kLine != 0) done -= period;
    Spill(join, dst + done * kSize, s, off + done, n - done);
  }
};
#endif

// ---------------------------------------------------------------------------------------------
// Segments (numpy.repeat with one count per element): source element i written counts[i] =
// prefix[i + 1] - prefix[i] times.

/// The byte offset of source index i of the segment axis, which is one source axis or a
/// flattened input's axes (CopyPlan::seg_axes, outermost first, in C order); moved on one index
/// at a time without division.
struct SegmentCursor {
  int n;
  const Entry* axes;
  int64_t idx[max_ndim];
  int64_t off = 0;

  HWY_INLINE SegmentCursor(const CopyPlan& p, int64_t i) : n(p.seg_naxes), axes(p.seg_axes) {
    for (int k = n - 1; k >= 0; --k) {
      idx[k] = i % axes[k].extent;
      i /= axes[k].extent;
      off += idx[k] * axes[k].stride;
    }
  }
  HWY_INLINE void Next() {
    for (int k = n - 1; k >= 0; --k) {
      off += axes[k].stride;
      if (++idx[k] < axes[k].extent) return;
      off -= axes[k].stride * axes[k].extent;
      idx[k] = 0;
    }
  }
};

/// The source index whose segment holds output index t: prefix[i] <= t < prefix[i + 1]
/// (t < prefix[count]). Starts where the average count puts t and gallops out from there, so that
/// evenly spread counts take a few loads, not log2(count) cache misses, then bisects.
HWY_INLINE int64_t SegmentOf(const int64_t* prefix, int64_t count, int64_t t) {
  int64_t lo = 0, hi = count;  // prefix[lo] <= t < prefix[hi]
  const int64_t total = prefix[count];
  int64_t guess = static_cast<int64_t>(static_cast<double>(t) / static_cast<double>(total) * static_cast<double>(count));
  guess = guess < 0 ? 0 : guess >= count ? count - 1 : guess;
  if (prefix[guess] <= t) {
    lo = guess;
    for (int64_t step = 1; lo + step < hi; step *= 2) {
      if (prefix[lo + step] > t) {
        hi = lo + step;
        break;
      }
      lo += step;
    }
  } else {
    hi = guess;
    for (int64_t step = 1; hi - step > lo; step *= 2) {
      if (prefix[hi - step] <= t) {
        lo = hi - step;
        break;
      }
      hi -= step;
    }
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (prefix[mid] <= t) lo = mid; else hi = mid;
  }
  return lo;
}

/// Where a range's walk of the one-byte counts stopped at output index `off` of a row: segment `i`
/// starts at output index `start` <= off, and the segments before it end at or before off (`i`
/// may be empty, or end at off). The same for every row of a plan (the segments depend on the
/// counts only), so the range's next call that starts at `off` goes on from there instead of
/// searching the prefix sums (SegmentOf), whose entries that walk never reads, so each search
/// would wait on memory. One per range (per thread): not shared.
struct SegmentHint {
  int64_t off = -1;
  int64_t i = 0;
  int64_t start = 0;
};

/// The lanes of SegmentsRowBytes' quads: four contiguous 4-byte elements whose counts are 0-4
/// (key: the counts' low three bits side by side, c0 + 8 c1 + 64 c2 + 512 c3, one pext of their
/// four bytes) fill the first c0 + c1 + c2 + c3 of 16 lanes, lane l taking element lane[key][l]
/// (0 past the total: the next store overwrites those lanes). Of the 4096 keys only the 625 of
/// counts 0-4 are filled (the others stay 0 and are never read): 250 cache lines of the table
/// are read. 64 KiB on each AVX-512 target.
struct SegmentQuadLanes {
  static constexpr int kKeys = 4096;
  alignas(16) uint8_t lane[kKeys][16] = {};
  constexpr SegmentQuadLanes() {
    for (int key = 0; key < kKeys; ++key) {
      bool counts_0_4 = true;
      for (int j = 0; j < 4; ++j) counts_0_4 = counts_0_4 && ((key >> (3 * j)) & 7) <= 4;
      if (!counts_0_4) continue;
      int filled = 0;
      for (int j = 0; j < 4; ++j)
        for (int r = 0; r < ((key >> (3 * j)) & 7); ++r) lane[key][filled++] = static_cast<uint8_t>(j);
    }
  }
};
inline constexpr SegmentQuadLanes kSegmentQuadLanes{};

/// Where SegmentsRowBytes writes: in place (the row's output, or a block of the executor's stage),
/// nothing to do between its steps.
struct SegmentsInPlace {
  HWY_INLINE void Step(uint8_t*& /*base*/, const uint8_t* /*next*/) {}
};

/// SegmentsRow where the planner kept the one-byte counts (Prefix::counts8): one source axis,
/// every count at most 16 / kSize, so each segment is one 16-byte store that the next overwrites
/// past its count, at the position the counts add up to. Reads a byte per source element where
/// the prefix sums take eight. `sink` (SegmentsInPlace, SegmentsRing) is told after each step
/// where the next store goes (`base` + the next output index * kSize: it may move `base`, the
/// address of output index 0); returns the address of output index off + n (one past the range).
/// (`dst` is not restrict-qualified: SegmentsRing's stage, which it points into, is read and
/// rewritten through the sink between the steps.)
template <size_t kSize, class Sink = SegmentsInPlace>
HWY_INLINE uint8_t* SegmentsRowBytes(uint8_t* dst, const uint8_t* HWY_RESTRICT src, const CopyPlan& p, size_t off,
                                     size_t n, SegmentHint& hint, Sink&& sink = Sink()) {
  constexpr int64_t L = 16 / static_cast<int64_t>(kSize);
  constexpr int64_t K = static_cast<int64_t>(kSize);
  // Prefetched ahead where the source is contiguous: its bytes 2 KiB on and the counts kAhead on
  // (addresses as integers: they may lie past the arrays, which a prefetch does not fault on).
  constexpr int64_t kAhead = 2048 / K;
  const auto prefetch_ahead = [](const uint8_t* e, const uint8_t* c) TESSERA_ROW_INLINE {
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(e) + kAhead * K), 0, 3);
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(c) + kAhead), 0, 3);
  };
  const uint8_t* c8 = p.prefix.counts8();
  const int64_t stride = p.seg_axes[0].stride;
  const int64_t begin = static_cast<int64_t>(off), end = begin + static_cast<int64_t>(n);
  int64_t i, start;  // segment i, starting at output index `start`, holds `begin`
  if (hint.off == begin) {
    i = hint.i;
    start = hint.start;
  } else if (p.prefix.compact()) {  // every kSparseStep-th prefix sum, and the bytes
    i = p.prefix.segment_of(begin, &start);
  } else {
    i = SegmentOf(p.prefix.data(), p.count_segments(), begin);
    start = p.prefix.data()[i];
  }
  int64_t next = start + c8[i];
  while (next <= begin) {  // the hint's segment ended at `begin` (begin < the row's total: i stays in range)
    start = next;
    next += c8[++i];
  }
  uint8_t* base = dst - begin * K;  // output index 0 of the row (the sink may move it)
  const uint8_t* e = src + i * stride;
  if (begin + L <= end) {  // the first, maybe partial, segment
    SplatStore16<kSize>(dst, e);
  } else {
    FillCopies<kSize>(dst, e, static_cast<size_t>((next < end ? next : end) - begin), kSize);
  }
  if (next >= end) {
    hint = {end, i, start};
    return base + end * K;
  }
  int64_t at = next;  // where segment i + 1 starts: before `end`, so it exists
  sink.Step(base, base + at * K);
  ++i;
  e += stride;
#if (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL) && !defined(HWY_DISABLE_BMI2_FMA)  // as reduce.cpp's pext
  if constexpr (kSize == 4) {
    // Contiguous 4-byte elements on targets of 16 lanes (AVX-512): four segments a step, the 16
    // lanes permuted from the four elements (kSegmentQuadLanes) and stored as one vector, while
    // the store stays inside the range: the step's segments exist, as each starts before `end`
    // (16 more elements hold at least four segments of at most 4). One store for four segments,
    // where the splats below take four: rep_counts (counts 0-4, 64 MiB out) 1.10x at one thread
    // and 1.03x at two (a Xeon reporting family 6 model 167, 2026-12-05); the four counts read as
    // one word, keyed by one pext and summed by one multiply (their bytes' sum in the top byte,
    // at most 16: no carry), where four byte loads, a base-5 key and a table of totals were:
    // 1.04-1.09x and 1.07-1.14x more (the same machine). With AVX2's 8 lanes (two segments a step)
    // 0.97-0.99x: such targets keep the splats.
    const hn::ScalableTag<uint32_t> du;
    const hn::Rebind<uint8_t, decltype(du)> d8;
    static_assert(hn::MaxLanes(du) == 16, "AVX-512: 16 lanes of 4 bytes");
    if (stride == K) {
      for (; at + 16 <= end; i += 4, e += 4 * K) {
        prefetch_ahead(e, c8 + i);
        uint32_t four;  // the counts of segments i .. i + 3, one byte each
        std::memcpy(&four, c8 + i, 4);
        const uint32_t key = _pext_u32(four, 0x07070707u);
        const auto elems = hn::LoadDup128(du, reinterpret_cast<const uint32_t*>(e));
        const auto idx = hn::IndicesFromVec(du, hn::PromoteTo(du, hn::LoadU(d8, kSegmentQuadLanes.lane[key])));
        hn::StoreU(hn::TableLookupLanes(elems, idx), du, reinterpret_cast<uint32_t*>(base + at * K));
        at += (four * 0x01010101u) >> 24;
        sink.Step(base, base + at * K);
      }
    }
  }
#endif
  // Four segments per step while all four stores stay inside the range (each moves at most L on):
  // the segments they start exist, as each starts before `end`.
  const bool contiguous = stride == K;
  for (; at + 4 * L <= end; i += 4, e += 4 * stride) {
    if (contiguous) prefetch_ahead(e, c8 + i);
    const int64_t c0 = c8[i], c1 = c8[i + 1], c2 = c8[i + 2], c3 = c8[i + 3];
    SplatStore16<kSize>(base + at * K, e);
    at += c0;
    SplatStore16<kSize>(base + at * K, e + stride);
    at += c1;
    SplatStore16<kSize>(base + at * K, e + 2 * stride);
    at += c2;
    SplatStore16<kSize>(base + at * K, e + 3 * stride);
    at += c3;
    sink.Step(base, base + at * K);
  }
  for (; at + L <= end; ++i, e += stride) {
    SplatStore16<kSize>(base + at * K, e);
    at += c8[i];
    sink.Step(base, base + at * K);
  }
  for (; at < end; ++i, e += stride) {  // the last few: exact copies, the range's end within L
    const int64_t c = c8[i];
    if (at + c >= end) {
      FillCopies<kSize>(base + at * K, e, static_cast<size_t>(end - at), kSize);
      hint = {end, i, at};
      return base + end * K;
    }
    FillCopies<kSize>(base + at * K, e, static_cast<size_t>(c), kSize);
    at += c;
  }
  hint = {end, i, at};  // segment i starts at `end` (i may be the count of segments at the row's end)
  return base + end * K;
}

#if HWY_TARGET != HWY_SCALAR
/// The segments.nt.direct route's sink for SegmentsRowBytes: a range's rows are computed into a
/// small stage in L1 (kSegmentsRingBytes) and streamed to the output in whole lines each time the
/// next store would start past it; the bytes the last step wrote past it move to its start. The
/// stage's lines map onto the output's lines, so it fits any alignment of the output; a row that
/// continues the one before in the output continues it in the stage (the line they share is
/// streamed whole), and the first and last partial lines of a run of such rows are written with
/// ordinary stores. Short bursts of streaming stores between the steps, where the staged route
/// streamed 4 KiB blocks between the row function's calls; and no block ends for the row function
/// to meet exactly (see kSegmentsRingBytes).
class SegmentsRing {
 public:
  static constexpr size_t kBytes = static_cast<size_t>(kSegmentsRingBytes);
  static constexpr size_t kLine = static_cast<size_t>(kLineBytes);
  static_assert(kBytes % kLine == 0 && kBytes >= kLine, "the stage: whole lines");
  SegmentsRing() = default;
  SegmentsRing(const SegmentsRing&) = delete;  // stage_ points into its own frame_
  SegmentsRing& operator=(const SegmentsRing&) = delete;

  /// Where the bytes of a row piece whose first output byte is `out` go in the stage: after the
  /// piece before where `out` continues it, else (the piece before written out: Finish) from the
  /// start of a stage at the output's own page offset.
  HWY_INLINE uint8_t* Start(uint8_t* out) {
    if (next_ != nullptr && out == out_next_) {
      if (next_ >= stage_ + kBytes) {  // (pieces that ended past it without a step)
        Flush();
        next_ -= kBytes;
      }
      return next_;
    }
    Finish();
    const uintptr_t a = reinterpret_cast<uintptr_t>(out);
    lead_ = static_cast<size_t>(a % kLine);
    line_ = out - lead_;
    // At the output's own page offset, rounded down to a line, as segments.nt's stage
    // (PathInfo::stage_near): its streaming loads then do not meet the streaming stores in
    // flight at the same low address bits.
    constexpr uintptr_t kPage = 4096;
    const uintptr_t want = a % kPage / kLine * kLine, have = reinterpret_cast<uintptr_t>(frame_) % kPage;
    stage_ = frame_ + (want + kPage - have) % kPage;  // a multiple of a line, below kPage
    return stage_ + lead_;
  }
  /// The piece started by the last Start ended at `end` in the stage (SegmentsRowBytes' return),
  /// before output byte `out_end`.
  HWY_INLINE void Hold(uint8_t* end, uint8_t* out_end) {
    next_ = end;
    out_next_ = out_end;
  }
  HWY_INLINE void Step(uint8_t*& base, const uint8_t* next) {
    if (HWY_UNLIKELY(next >= stage_ + kBytes)) {
      Flush();
      base -= kBytes;
    }
  }
  /// Writes the stage's bytes held (Hold) to the output.
  HWY_INLINE void Finish() {
    if (next_ == nullptr) return;
    const size_t n = static_cast<size_t>(next_ - stage_);
    size_t j = lead_;
    if (lead_ != 0) {
      const size_t head = n < kLine ? n - lead_ : kLine - lead_;
      CopyBytes(line_ + lead_, stage_ + lead_, head);
      j += head;
    }
    for (; j + kLine <= n; j += kLine) StreamLine(line_ + j, stage_ + j);
    if (j < n) CopyBytes(line_ + j, stage_ + j, n - j);
    next_ = nullptr;
  }

 private:
  HWY_NOINLINE void Flush() {
    size_t j = 0;
    if (lead_ != 0) {  // the first line: only its bytes from the first piece's start
      CopyBytes(line_ + lead_, stage_ + lead_, kLine - lead_);
      lead_ = 0;
      j = kLine;
    }
    for (; j < kBytes; j += kLine) StreamLine(line_ + j, stage_ + j);
    line_ += kBytes;
    // A step moves at most a line (16 elements of 4 bytes, four of 16-byte splats), a piece
    // without a step at most 16 bytes: what was written past the stage's end is within a line.
    const hn::CappedTag<uint8_t, static_cast<size_t>(kLineBytes)> d;
    for (size_t k = 0; k < kLine; k += hn::Lanes(d)) hn::Store(hn::Load(d, stage_ + kBytes + k), d, stage_ + k);
  }

  // The stage (kBytes and the line past it, which the stores reach at most: a step starts before
  // kBytes and stores at most a line from there) anywhere in a page.
  alignas(64) uint8_t frame_[4096 + kBytes + kLine];
  uint8_t* stage_ = nullptr;
  uint8_t* line_ = nullptr;      // the output's line that the stage's first byte maps to
  size_t lead_ = 0;              // bytes of that line before the first piece (the first line only)
  uint8_t* next_ = nullptr;      // where the next piece continues in the stage, or null: none held
  uint8_t* out_next_ = nullptr;  // the output byte it continues at
};
#endif

/// A segments row: writes its output elements [off, off + n) to dst; `src` is the row's source
/// (index 0 of the segment axis). `hint`: where this range's previous call stopped.
template <size_t kSize>
HWY_INLINE void SegmentsRow(uint8_t* HWY_RESTRICT dst, const uint8_t* HWY_RESTRICT src, const CopyPlan& p,
                            size_t off, size_t n, SegmentHint& hint) {
  if constexpr (kSplat16<kSize>) {
    if (p.prefix.counts8() != nullptr) {
      SegmentsRowBytes<kSize>(dst, src, p, off, n, hint);
      return;
    }
  }
  const size_t sz = kSize != 0 ? kSize : p.itemsize;
  int64_t pos = static_cast<int64_t>(off);
  const int64_t end = pos + static_cast<int64_t>(n);
  if (p.seg_naxes == 1) {  // one source axis: element i at i * stride
    // (Where every count fits one 16-byte store, the planner kept the one-byte counts on targets
    // with vectors: SegmentsRowBytes above takes those rows. A plan made for such a target run on
    // one without (the tests do) may hold them compact: then count() reads the bytes.)
    const int64_t stride = p.seg_axes[0].stride;
    // The counts as locals: the stores through dst may alias any member the loop would reread.
    const uint8_t* const c8 = p.prefix.compact() ? p.prefix.counts8() : nullptr;
    const int64_t* const whole = p.prefix.data();  // null where compact
    const auto count = [c8, whole](int64_t k) { return c8 != nullptr ? int64_t{c8[k]} : whole[k + 1] - whole[k]; };
    int64_t seg_start, i;
    if (c8 != nullptr) {
      i = p.prefix.segment_of(pos, &seg_start);
    } else {
      i = SegmentOf(whole, p.count_segments(), pos);
      seg_start = whole[i];
    }
    for (int64_t e = i * stride, seg_end = seg_start + count(i);; ++i, e += stride) {
      const int64_t stop = seg_end < end ? seg_end : end;
      const size_t c = static_cast<size_t>(stop - pos);  // 0 for an empty segment
      if (kSplat16<kSize> && c * sz <= 16 && static_cast<size_t>(end - pos) * sz >= 16) {
        SplatStore16<kSize>(dst, src + e);  // the next segment overwrites the bytes past c copies
      } else if (c != 0) {
        FillCopies<kSize>(dst, src + e, c, sz);
      }
      dst += c * sz;
      pos = stop;
      if (pos == end) return;
      seg_end += count(i + 1);  // segment i + 1 exists: pos < end <= the row's total
    }
  }
  const int64_t* prefix = p.prefix.data();  // never compact here (seg_naxes > 1: no bytes walk)
  int64_t i = SegmentOf(prefix, p.count_segments(), pos);
  SegmentCursor at(p, i);
  for (;;) {
    const int64_t stop = prefix[i + 1] < end ? prefix[i + 1] : end;
    if (stop > pos) {
      const size_t c = static_cast<size_t>(stop - pos);
      if (kSplat16<kSize> && c * sz <= 16 && static_cast<size_t>(end - pos) * sz >= 16) {
        SplatStore16<kSize>(dst, src + at.off);  // the next segment overwrites the bytes past c copies
      } else {
        FillCopies<kSize>(dst, src + at.off, c, sz);
      }
      dst += c * sz;
      pos = stop;
    }
    if (pos == end) return;
    ++i;
    at.Next();
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace tessera::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
