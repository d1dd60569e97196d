// Per-target reduction kernels (the gradients; reduce.hpp describes the problem and the two orders
// of additions). Compiled once per Highway target (foreach_target.h) and dispatched to the best
// target this CPU supports. Serial: the executor splits the work into items (strips of output
// elements, or output rows) and, for few items, leaf ranges, and calls these from its tasks.
//
// Every floating-point result follows the plan's order exactly: vectors only hold independent
// output elements (lanes order), the 16 (P) slots of the periodic order, or the last slots of
// several items (FoldAcross: each lane's additions are its own item's), and every addition is
// one IEEE add of the same two operands a scalar loop would add — so the bits are the same on
// every target, HWY_SCALAR included.

// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/reduce.cpp"  // this file, relative to lib/
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
// clang-format on

#include "kernels/kernels.hpp"
#include "kernels/path_counters.hpp"
#include "reduce_scalar.hpp"
#include "this_thread.hpp"

#include <hwy/cache_control.h>

#include <cstring>
#include <memory>

HWY_BEFORE_NAMESPACE();
namespace tessera::detail::HWY_NAMESPACE {
namespace {
namespace hn = hwy::HWY_NAMESPACE;

// The binary counter that combines leaves (reduce.hpp): the tree that splits n leaves into the
// largest power of two below n and the rest, recursively — so the chunks of 2^j leaves of a
// parallel split are its subtrees, and combining their sums with another counter gives the same
// bits as one counter over all leaves. CounterPush and CounterResult are its schedule of
// additions, the only copy of it; a policy says where the values live (vectors in registers:
// Kernels::VecLevels; scalars: ScalarLevels; rows of accumulators in memory: Kernels::RowLevels).
// A policy holds a current value and levels 0 ... 63 and provides:
//   void add(int level, int into)  current = level's value + current (the level the left
//                                  operand); a policy that keeps values in memory writes the sum
//                                  to level `into`, or to the result's storage (kCounterResult)
//   void store(int level)          level's value = current
//   void load(int level)           current = level's value (the result's first term)
constexpr int kCounterResult = -1;

// The merges pushing leaf number k makes: the trailing ones of k.
HWY_INLINE int CounterMerges(uint64_t k) {
  int m = 0;
  while ((k >> m) & 1) ++m;
  return m;
}

// Takes leaf number k (k = 0, 1, ... in order) from the policy's current value and merges the
// complete subtrees it closes; afterwards levels 0 ... bit_width(k + 1) - 1 may be in use.
template <class Policy>
HWY_INLINE void CounterPush(Policy& policy, uint64_t k) {
  const int m = CounterMerges(k);
  for (int lvl = 0; lvl < m; ++lvl) policy.add(lvl, lvl + 1 == m ? m : lvl);
  policy.store(m);
}

// The sum of the `count` leaves pushed (count > 0) into the policy's current value: what is left
// in the levels, smallest subtree first. kLevels bounds the levels looked at (count < 2^kLevels).
template <int kLevels = 64, class Policy>
HWY_INLINE void CounterResult(Policy& policy, uint64_t count) {
  bool have = false;
  for (int lvl = 0; lvl < kLevels; ++lvl) {
    if (!((count >> lvl) & 1)) continue;
    if (have) policy.add(lvl, kCounterResult);
    else policy.load(lvl);
    have = true;
  }
}

// The counter's policy for scalars: kLevels accumulators (a tail element of the register trees).
template <class A, int kLevels>
struct ScalarLevels {
  A level[kLevels];
  A cur = acc_identity<A>();  // written by the first push (initialised for the compiler's sake)
  HWY_INLINE void add(int l, int) { cur = acc_add(level[l], cur); }
  HWY_INLINE void store(int l) { level[l] = cur; }
  HWY_INLINE void load(int l) { cur = level[l]; }
};

// The Highway lane type of a kernel element's storage.
template <Elem E> struct HwyT { using type = typename ElemTraits<E>::T; };
template <> struct HwyT<Elem::f16> { using type = hwy::float16_t; };
template <> struct HwyT<Elem::bf16> { using type = hwy::bfloat16_t; };

template <Elem E>
struct Kernels {
  using T = typename ElemTraits<E>::T;
  using A = typename ElemTraits<E>::A;
  using HT = typename HwyT<E>::type;
  using DA = hn::ScalableTag<A>;

  // Lanes(DA) elements at p as accumulators (exact).
  static HWY_INLINE hn::Vec<DA> LoadAs(DA da, const T* p) {
    if constexpr (sizeof(HT) == sizeof(A)) {
      return hn::LoadU(da, reinterpret_cast<const A*>(p));
    } else {
      const hn::Rebind<HT, DA> dt;
      return hn::PromoteTo(da, hn::LoadU(dt, reinterpret_cast<const HT*>(p)));
    }
  }

  // Unaligned scalar access (the caller's buffers need no alignment).
  static HWY_INLINE T LoadT(const T* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
  static HWY_INLINE void StoreT(T* p, T v) { std::memcpy(p, &v, sizeof(T)); }
  // plus_zero (reduce_scalar.hpp) on a vector of results: +0.0 for sums of only -0.0.
  static HWY_INLINE hn::Vec<DA> PlusZero(hn::Vec<DA> v) {
    if constexpr (std::is_floating_point_v<A>) return hn::Add(v, hn::Zero(DA()));
    else return v;
  }

  // dst[0, n) = a + b (a the left operand; dst may alias either).
  static void AddRow(A* dst, const A* a, const A* b, int64_t n) {
    const DA da;
    const int64_t N = static_cast<int64_t>(hn::Lanes(da));
    int64_t j = 0;
    for (; j + N <= n; j += N) hn::StoreU(hn::Add(hn::LoadU(da, a + j), hn::LoadU(da, b + j)), da, dst + j);
    for (; j < n; ++j) dst[j] = acc_add(a[j], b[j]);
  }

  // The counter's policy for rows of `n` accumulators in memory (AddRow): level l is the row at
  // levels + l * n; `cur` points to the current row (a leaf's, then a level's or `out`).
  struct RowLevels {
    A* levels;
    int64_t n;
    const A* cur = nullptr;
    A* out = nullptr;  // the result's row (CounterResult)

    A* row(int l) const { return levels + l * n; }
    void add(int l, int into) {
      A* dst = into == kCounterResult ? out : row(into);
      AddRow(dst, row(l), cur, n);
      cur = dst;
    }
    void store(int l) {
      if (cur != row(l)) std::memcpy(row(l), cur, sizeof(A) * static_cast<std::size_t>(n));
    }
    void load(int l) {
      if (out != row(l)) std::memcpy(out, row(l), sizeof(A) * static_cast<std::size_t>(n));
      cur = out;
    }
  };
  // The binary counter over leaf rows of `n` accumulators: Push(row) takes the next leaf,
  // Result(out) writes the sum of every leaf pushed (at least one). `levels` holds bit_width(k)
  // rows of n for k pushes.
  struct RowCounter {
    RowLevels rows;
    uint64_t count = 0;  // leaves pushed

    RowCounter(A* levels, int64_t n) : rows{levels, n} {}
    // Where leaf `count` should be written when no merge follows (saves a copy): row 0.
    A* SlotForNext() const { return (count & 1) ? nullptr : rows.levels; }
    // The merges the next push makes (CounterPush: the trailing ones of count), for a leaf
    // merged as it is summed (LeafRowsPush into rows.levels), then Pushed().
    int Merges() const { return CounterMerges(count); }
    void Pushed() { ++count; }
    // Pushes a leaf held in `row` (which may be SlotForNext()).
    void Push(const A* row) {
      rows.cur = row;
      CounterPush(rows, count++);
    }
    void Result(A* out) {
      rows.out = out;
      CounterResult(rows, count);
    }
  };
  // row = src (first) or row + src, for n contiguous elements.
  static HWY_INLINE void AccRow(A* row, const T* src, int64_t n, bool first) {
    const DA da;
    const int64_t N = static_cast<int64_t>(hn::Lanes(da));
    int64_t j = 0;
    if (first) {
      for (; j + N <= n; j += N) hn::StoreU(LoadAs(da, src + j), da, row + j);
      for (; j < n; ++j) row[j] = to_acc<E>(LoadT(src + j));
    } else {
      for (; j + N <= n; j += N) hn::StoreU(hn::Add(hn::LoadU(da, row + j), LoadAs(da, src + j)), da, row + j);
      for (; j < n; ++j) row[j] = acc_add(row[j], to_acc<E>(LoadT(src + j)));
    }
  }
  // The same for elements `stride` bytes apart.
  static HWY_INLINE void AccRowStrided(A* row, const uint8_t* src, int64_t stride, int64_t n, bool first) {
    int64_t j = 0;
#if HWY_TARGET != HWY_SCALAR
    if constexpr (sizeof(T) >= 4 && !std::is_same_v<HT, hwy::bfloat16_t>) {
      // Gathers of 4- and 8-byte elements whose stride is a whole number of elements.
      const DA da;
      const hn::Rebind<T, DA> dt;
      const hn::RebindToSigned<decltype(dt)> di;
      using I = hn::TFromD<decltype(di)>;
      const int64_t N = static_cast<int64_t>(hn::Lanes(da));
      const int64_t step = stride / static_cast<int64_t>(sizeof(T));
      if (stride % static_cast<int64_t>(sizeof(T)) == 0 && step > 0 && step * N < (int64_t{1} << 30) &&
          reinterpret_cast<uintptr_t>(src) % alignof(T) == 0) {  // emulated gathers load a T*
        alignas(64) I lane_index[HWY_MAX_BYTES / sizeof(I)];
        for (int64_t l = 0; l < N; ++l) lane_index[l] = static_cast<I>(l * step);
        const auto idx = hn::Load(di, lane_index);
        const auto up = [&](hn::Vec<decltype(dt)> v) {
          if constexpr (sizeof(T) == sizeof(A)) return v;
          else return hn::PromoteTo(da, v);
        };
        for (; j + N <= n; j += N) {
          const T* base = reinterpret_cast<const T*>(src + j * stride);
          const auto v = up(hn::GatherIndex(dt, base, idx));
          hn::StoreU(first ? v : hn::Add(hn::LoadU(da, row + j), v), da, row + j);
        }
      }
    }
#endif
    for (; j < n; ++j) {
      T v;
      std::memcpy(&v, src + j * stride, sizeof(T));
      row[j] = first ? to_acc<E>(v) : acc_add(row[j], to_acc<E>(v));
    }
  }

  // Streams v, float32 lanes demoted from a vector of accumulators (half a register), to p, which
  // is aligned to v's size. Where v is less than a whole 128-bit register (the 128-bit x86 targets:
  // two lanes), Highway's Stream writes the whole register: 8 bytes past v's lanes (past the
  // caller's buffer at its end), and needing 16-byte alignment (a crash at 8). An ordinary store
  // there.
  template <class DF>
  static HWY_INLINE void StreamDemoted(hn::Vec<DF> v, DF df, float* p) {
    if constexpr (hn::MaxLanes(DF()) * sizeof(float) >= 16) {
      hn::Stream(v, df, p);
    } else {
      hn::StoreU(v, df, p);
    }
  }
  // The o elements (lanes 0 ... o - 1 of `pending`) of a float32 line that StreamSkewed left
  // unwritten at the end of an item, ending at `next` (nullptr: none): the next item of the same
  // kernel call that begins there completes the line in registers and streams it; Flush() writes
  // them with ordinary stores. Items and SegmentItems keep one per call and flush it before they
  // return (and fence); nothing else writes those elements.
  struct SkewCarry {
    float* next = nullptr;
    int64_t o = 0;
    alignas(64) float pending[HWY_MAX_BYTES / sizeof(float)];
    void Flush() {
      if (next != nullptr) std::memcpy(next - o, pending, static_cast<std::size_t>(o) * sizeof(float));
      next = nullptr;
    }
  };
  // Where StreamSkewed takes a float32 output at p: the elements p lies past a boundary of a
  // whole float vector (2N floats), where that is not 0 nor half of it (p 4-byte aligned); else 0.
  static HWY_INLINE int64_t SkewOf(const void* p) {
    constexpr uintptr_t kLine = 2 * hn::MaxLanes(DA()) * sizeof(float);
    const uintptr_t off = reinterpret_cast<uintptr_t>(p) % kLine;
    return off % sizeof(float) == 0 && off != kLine / 2 ? static_cast<int64_t>(off / sizeof(float)) : 0;
  }
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
  // Float32 sums streamed where the destination is off the boundaries of a float vector (of 2N
  // floats, N the accumulators' lanes: on AVX-512 64 bytes, a cache line, and dst + 16 bytes —
  // where numpy's large arrays start — is off them; on AVX2 dst + 16 is half a vector off, which
  // the caller streams by halves): elements [j, end) of a contiguous dst, dst + j lying `o`
  // elements (0 < o < 2N, o != N) past a boundary of 2N floats, and `pair(at)` giving the float
  // vector of elements at ... at + 2N (two vectors of sums demoted, in order). Each whole "line"
  // (float vector) of 2N floats between the first boundary and the last is assembled from
  // two consecutive pairs in registers (a rotation of lanes and a blend) and streamed on its own
  // boundary. The 2N - o elements before the first boundary: the line the previous item left in
  // `carry` completed and streamed where it ends at dst + j, else ordinary stores; the o after
  // the last: left in `carry` (or, without one, ordinary stores). Writes only [j, k) (and the
  // carried line), where k (returned, a whole number of pairs past j) is where the caller goes
  // on; needs end - j >= 4N (else returns j). The same values as the aligned path's, in the same
  // places: only the stores differ. Into dst + 16, every store had been an ordinary one (their
  // lines read before they are written): rep_ragged_bwd, outer_bwd, inner_bwd, nchw_bwd and
  // rep_mid_bwd took 1.05-1.18x as long as into an aligned dst; with the lines streamed but the
  // partial ones of each item written by ordinary stores (no carry), the short items' took
  // 1.4-1.65x (nchw_bwd's 512-byte rows, rep_ragged_bwd's and rep_mid_bwd's 1 KiB: bench/compare
  // --dst-offset 16, the Xeon reporting family 6 model 167, 2026-12-03).
  template <class Pair>
  static HWY_INLINE int64_t StreamSkewed(float* dst, int64_t j, int64_t end, int64_t o, Pair pair,
                                         SkewCarry* carry) {
    const hn::Rebind<float, DA> dh;
    const hn::Twice<decltype(dh)> df;
    const hn::RebindToSigned<decltype(df)> di;
    constexpr int64_t NF = static_cast<int64_t>(hn::MaxLanes(decltype(df)()));
    if (end - j < 2 * NF) return j;
    const int64_t s = NF - o;  // elements before the first boundary
    alignas(64) hn::TFromD<decltype(di)> rot[NF];
    for (int64_t l = 0; l < NF; ++l) rot[l] = static_cast<hn::TFromD<decltype(di)>>((l + s) % NF);
    const auto idx = hn::SetTableIndices(df, rot);
    const auto from_prev = hn::FirstN(df, static_cast<size_t>(o));
    alignas(64) float part[NF];
    const auto v = pair(j);
    auto prev = hn::TableLookupLanes(v, idx);  // lanes 0 ... o - 1: elements j + s ... j + 2N - 1
    if (carry != nullptr && carry->next == dst + j) {  // (so carry->o == o)
      hn::Stream(hn::IfThenElse(from_prev, hn::Load(df, carry->pending), prev), df, dst + j - o);
      carry->next = nullptr;
    } else {
      if (carry != nullptr) carry->Flush();
      hn::Store(v, df, part);
      std::memcpy(dst + j, part, static_cast<std::size_t>(s) * sizeof(float));
    }
    float* line = dst + j + s;                  // on a boundary; dst + j - o after each step below
    for (j += NF; j + NF <= end; j += NF, line += NF) {
      const auto cur = hn::TableLookupLanes(pair(j), idx);
      hn::Stream(hn::IfThenElse(from_prev, prev, cur), df, line);
      prev = cur;
    }
    if (carry != nullptr) {
      hn::Store(prev, df, carry->pending);
      carry->next = line + o;
      carry->o = o;
    } else {
      hn::Store(prev, df, part);
      std::memcpy(line, part, static_cast<std::size_t>(o) * sizeof(float));
    }
    return j;
  }
#endif
  // dst[j] = round(acc[j]), or round(dst[j] + acc[j]) when accumulating.
  static void FinishRow(const A* acc, int64_t n, T* dst, int64_t dst_stride, bool accumulate, bool stream = false) {
    int64_t j = 0;
    if (dst_stride != 1) {  // a segment's sub-problem: the output's inner axis is not its own
      for (; j < n; ++j) {
        T* d = dst + j * dst_stride;
        StoreT(d, from_acc<E>(accumulate ? acc_add(to_acc<E>(LoadT(d)), acc[j]) : acc[j]));
      }
      return;
    }
    if constexpr (E == Elem::f32) {
      const DA da;
      const hn::Rebind<float, DA> df;
      const int64_t N = static_cast<int64_t>(hn::Lanes(da));
      if (stream && !accumulate) {
        for (; j < n && reinterpret_cast<uintptr_t>(dst + j) % (N * sizeof(float)) != 0; ++j)
          StoreT(dst + j, from_acc<E>(acc[j]));
        for (; j + N <= n; j += N) StreamDemoted(hn::DemoteTo(df, PlusZero(hn::LoadU(da, acc + j))), df, dst + j);
      } else if (accumulate) {
        for (; j + N <= n; j += N)
          hn::StoreU(hn::DemoteTo(df, PlusZero(hn::Add(LoadAs(da, dst + j), hn::LoadU(da, acc + j)))), df, dst + j);
      } else {
        for (; j + N <= n; j += N) hn::StoreU(hn::DemoteTo(df, PlusZero(hn::LoadU(da, acc + j))), df, dst + j);
      }
    } else if constexpr (sizeof(HT) == sizeof(A)) {
      const DA da;
      const int64_t N = static_cast<int64_t>(hn::Lanes(da));
      if (accumulate) {
        for (; j + N <= n; j += N)
          hn::StoreU(PlusZero(hn::Add(hn::LoadU(da, reinterpret_cast<const A*>(dst) + j), hn::LoadU(da, acc + j))), da,
                     reinterpret_cast<A*>(dst) + j);
      } else {
        for (; j + N <= n; j += N) hn::StoreU(PlusZero(hn::LoadU(da, acc + j)), da, reinterpret_cast<A*>(dst) + j);
      }
    }
    for (; j < n; ++j) StoreT(dst + j, from_acc<E>(accumulate ? acc_add(to_acc<E>(LoadT(dst + j)), acc[j]) : acc[j]));
  }

  // The reduced axes' odometer: byte offset of addend q (lexicographic, outer first).
  struct Odometer {
    int n = 0;
    int64_t extent[kMaxRAxes], stride[kMaxRAxes], idx[kMaxRAxes];
    int64_t offset = 0;
    Odometer(const ReduceProblem& p, const int* axes, int count, int64_t q) : n(count) {
      for (int i = n - 1; i >= 0; --i) {
        const RAxis& a = p.axes[axes[i]];
        extent[i] = a.extent;
        stride[i] = a.src_stride;
        idx[i] = q % a.extent;
        q /= a.extent;
        offset += idx[i] * stride[i];
      }
    }
    HWY_INLINE void next() {
      for (int i = n - 1; i >= 0; --i) {
        offset += stride[i];
        if (++idx[i] < extent[i]) return;
        offset -= idx[i] * stride[i];
        idx[i] = 0;
      }
    }
  };

  // Item -> (source offset, destination element offset, row width).
  struct ItemPos {
    int64_t src = 0, dst = 0, n = 0;
  };
  // Item -> its position; Next() moves to the following item without dividing (the outer axes'
  // odometer and the strip).
  struct ItemCursor {
    const ReduceProblem& p;
    int64_t nstrips, s, idx[kMaxRAxes];
    int64_t base_src = 0, base_dst = 0;  // the outer axes' offsets
    ItemPos pos;
    ItemCursor(const ReduceProblem& prob, int64_t item) : p(prob) {
      nstrips = p.strips_per_row();
      int64_t outer = item / nstrips;
      s = item % nstrips;
      for (int i = p.nouter - 1; i >= 0; --i) {
        const RAxis& a = p.axes[p.outer[i]];
        idx[i] = outer % a.extent;
        outer /= a.extent;
        base_src += idx[i] * a.src_stride;
        base_dst += idx[i] * a.dst_stride;
      }
      Place();
    }
    HWY_INLINE void Place() {  // periodic: one strip (s = 0) of the whole row (strip = width)
      pos = {base_src + s * p.strip * p.inner_stride, base_dst + s * p.strip * p.inner_dst_stride, p.strip_elems(s)};
    }
    HWY_INLINE void Next() {
      if (++s == nstrips) {
        s = 0;
        for (int i = p.nouter - 1; i >= 0; --i) {
          const RAxis& a = p.axes[p.outer[i]];
          base_src += a.src_stride;
          base_dst += a.dst_stride;
          if (++idx[i] < a.extent) break;
          base_src -= idx[i] * a.src_stride;
          base_dst -= idx[i] * a.dst_stride;
          idx[i] = 0;
        }
      }
      Place();
    }
  };

  // Prefetches the nred addend rows of n elements at src + qoff[q]: every cache line they touch
  // (the items of short rows, ReduceProblem::prefetch_items).
  static HWY_INLINE void PrefetchRows(const uint8_t* src, const int64_t* qoff, int64_t nred, int64_t n) {
    for (int64_t q = 0; q < nred; ++q) PrefetchLines(src + qoff[q], static_cast<uintptr_t>(n) * sizeof(T));
  }
  // Every prefetch of the reductions: the line at p, for reading, into L2 (locality 2: x86's
  // prefetcht1, aarch64's PRFM PLDL2KEEP), as the gather's. Into L1 (hwy::Prefetch, prefetcht0)
  // the same prefetches ran slower on an Intel Xeon of family 6 model 167 (narrow_bwd 78% of
  // `read` against 87%, 2026-12-02): the lines come from DRAM; L2 to L1 the core's own
  // prefetchers keep up. (The segment groups' rows alone go to L1: SegmentGroupsC.)
  static HWY_INLINE void PrefetchLine(const void* p) { __builtin_prefetch(p, 0, 2); }
  // The cache line the prefetches step by (bytes).
  static constexpr int64_t kLineBytes = kPrefetchLineBytes;
  // Prefetches every cache line of the `bytes` bytes from p.
  static HWY_INLINE void PrefetchLines(const uint8_t* p, uintptr_t bytes) {
    constexpr uintptr_t kLine = kLineBytes;
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    for (uintptr_t l = a & ~(kLine - 1); l < a + bytes; l += kLine) PrefetchLine(reinterpret_cast<const uint8_t*>(l));
  }

  // Scratch rows for one call, in this thread's arena (p.scratch_bytes, laid out by the planner):
  // the counter's levels (bit_width(nleaves) rows and a spare), a leaf row and a result row, each
  // of an item's row width (the strip, or the periodic slots). Not initialised: every element
  // read is written first (zeroing them cost up to 3 MiB of writes per call of outer_bwd).
  struct Scratch {
    A* levels = nullptr;
    A* tmp = nullptr;
    A* out = nullptr;
    Scratch() = default;
    explicit Scratch(const ReduceProblem& p) {
      const int64_t w = p.path == ReducePath::periodic ? p.slots : p.strip;
      const int64_t rows = p.scratch_bytes / static_cast<int64_t>(sizeof(A)) / (w > 0 ? w : 1) - 2;
      levels = reinterpret_cast<A*>(thread_scratch(static_cast<std::size_t>(p.scratch_bytes)));
      tmp = levels + rows * w;
      out = tmp + w;
    }
  };

  // This target's code for this element type: the kernels it has (reduce.hpp) and the one it runs
  // for a problem's kernel (the kernel, or its general one: the same order, the same bits).
  static constexpr bool kFixedWidth = !HWY_HAVE_SCALABLE;
  static constexpr int kAccLanes = static_cast<int>(hn::MaxLanes(DA()));
  static constexpr bool kSlotsInVectors = kFixedWidth && kAccLanes <= kPeriodicSlots;
  static ReduceKernel KernelFor(const ReduceProblem& p) { return reduce_kernel_on(p.kernel, kFixedWidth, kAccLanes); }

#if !HWY_HAVE_SCALABLE
  // Lanes order for items of at most kRegLeaves leaves over contiguous rows, the whole tree in
  // registers: per vector of outputs, each leaf summed while its rows stream by, the leaves
  // combined by the same binary counter as LeafCounter (the same bits). qoff: the nred addends'
  // byte offsets. Returns the item's sums finished into dst (dst_stride 1).
  static constexpr int kRegLevels = 6;  // the counter's levels for up to kRegLeaves leaves (and a spare)
  // The counter's policy (CounterPush, CounterResult) for vectors in registers: V
  // vectors of outputs per level, the first nv of them live; kLevels levels.
  template <int64_t V, int kLevels>
  struct VecLevels {
    hn::Vec<DA> level[kLevels][V];
    hn::Vec<DA> cur[V];
    int64_t nv = V;
    VecLevels() {  // cur is written by the first push (initialised for the compiler's sake)
      for (auto& v : cur) v = hn::Zero(DA());
    }
    HWY_INLINE void add(int l, int) {
      for (int64_t v = 0; v < V; ++v)
        if (v < nv) cur[v] = hn::Add(level[l][v], cur[v]);
    }
    HWY_INLINE void store(int l) {
      for (int64_t v = 0; v < V; ++v)
        if (v < nv) level[l][v] = cur[v];
    }
    HWY_INLINE void load(int l) {
      for (int64_t v = 0; v < V; ++v)
        if (v < nv) cur[v] = level[l][v];
    }
  };
  // No software prefetch within an item by default: ahead of each addend row it cost 10-40% on
  // lanes items on AMD family 25 (outer/inner/mixed3d_bwd), where the hardware prefetchers follow
  // the rows on their own. Items of short rows are prefetched whole, items ahead (Items,
  // prefetch_items), or, read row by row, along their rows (RegTreeItem, prefetch_along_rows);
  // reduce.lanes.reg.leaf's items of long rows along each row where the planner says so
  // (Item, prefetch_ahead_bytes).
  static HWY_INLINE hn::Vec<DA> RegTree(DA da, const uint8_t* src, const int64_t* qoff, int64_t nred, int64_t j) {
    VecLevels<1, kRegLevels> c;
    uint64_t count = 0;
    for (int64_t q0 = 0; q0 < nred; q0 += kLeaf) {
      const int64_t q1 = std::min(nred, q0 + kLeaf);
      hn::Vec<DA> v = LoadAs(da, reinterpret_cast<const T*>(src + qoff[q0]) + j);
      for (int64_t q = q0 + 1; q < q1; ++q) v = hn::Add(v, LoadAs(da, reinterpret_cast<const T*>(src + qoff[q]) + j));
      c.cur[0] = v;
      CounterPush(c, count++);
    }
    CounterResult<kRegLevels>(c, count);
    return c.cur[0];
  }
  // RegTree for NL leaves known at compile time (every leaf but the last of kLeaf addends, the
  // last of `last`), over V vectors of outputs at once (the first nv of them), elements j ... of
  // each addend row: the counter's steps are constants, so its levels stay in registers (the
  // runtime counter above runs ~2x slower on a 2-leaf item). V = 1: a vector at a time across the
  // rows; V = kTreeRowVecs: a short item, each leaf's rows read one after another, each from its
  // start to its end (see RegTreeItem). The same additions per element either way.
  static constexpr int kTreeLevels = 3;  // the counter's levels for up to kUnrolledLeaves leaves
  // kPf (rows read whole, V = kTreeRowVecs): as row t's vector v is read, the line of row t of the
  // item at `ahead` at the same offset, once per 64 bytes (RegTreeItem's `prefetch`).
  template <int NL, int64_t V, bool kPf = false, int Leaf = 0>
  static HWY_INLINE void RegLeaves(DA da, VecLevels<V, kTreeLevels>& c, const uint8_t* src, const int64_t* qoff,
                                   int64_t last, int64_t j, int64_t N, const uint8_t* ahead) {
    static_assert(NL <= 4, "at most 4 leaves: levels 0 and 1, and 2 for the fourth");
    if constexpr (Leaf < NL) {
      const int64_t* q = qoff + Leaf * kLeaf;
      const int64_t k = Leaf + 1 < NL ? kLeaf : last;
      const int64_t vec_bytes = N * static_cast<int64_t>(sizeof(T));
      const int64_t line_every = vec_bytes >= 64 ? 1 : 64 / vec_bytes;
      const T* x0 = reinterpret_cast<const T*>(src + q[0]) + j;
      for (int64_t v = 0; v < V; ++v)
        if (v < c.nv) {
          if constexpr (kPf)
            if (v % line_every == 0) PrefetchLine(ahead + q[0] + v * vec_bytes);
          c.cur[v] = LoadAs(da, x0 + v * N);
        }
      for (int64_t t = 1; t < k; ++t) {
        const T* xt = reinterpret_cast<const T*>(src + q[t]) + j;
        for (int64_t v = 0; v < V; ++v)
          if (v < c.nv) {
            if constexpr (kPf)
              if (v % line_every == 0) PrefetchLine(ahead + q[t] + v * vec_bytes);
            c.cur[v] = hn::Add(c.cur[v], LoadAs(da, xt + v * N));
          }
      }
      CounterPush(c, Leaf);  // a constant leaf number: the merges are constants
      RegLeaves<NL, V, kPf, Leaf + 1>(da, c, src, qoff, last, j, N, ahead);
    }
  }
  template <int NL, int64_t V, bool kPf = false>
  static HWY_INLINE void RegTreeN(DA da, const uint8_t* src, const int64_t* qoff, int64_t last, int64_t j, int64_t nv,
                                  int64_t N, hn::Vec<DA> (&out)[V], const uint8_t* ahead = nullptr) {
    VecLevels<V, kTreeLevels> c;
    c.nv = nv;
    RegLeaves<NL, V, kPf>(da, c, src, qoff, last, j, N, ahead);
    CounterResult<kTreeLevels>(c, NL);
    for (int64_t v = 0; v < V; ++v)
      if (v < nv) out[v] = c.cur[v];
  }
  // K = nred when it is at most kLeaf (one leaf, its K rows' pointers in registers: the unrolled
  // sum is ~1.5x faster than RegTree's loops); else NL = the leaves when there are at most
  // kUnrolledLeaves (RegTreeN); else both 0 (RegTree: any nred up to kRegLeaves leaves).
  // Vectors of sums a short item keeps in registers (RegTreeItem's rows read one after another).
  static constexpr int64_t kRowVecs = kLeafRowVecs;
  // ahead: the source of the item the planner prefetches along the rows (prefetch_along_rows), or
  // of the segments' rows prefetch_bytes on (SegmentItems), or nullptr: as row t's vector v is read
  // (rows_whole, or for SegmentItems a vector at a time across the rows), the line of row t of that
  // item at the same offset is prefetched, once per line.
  // ahead_end: the element of each row from which its vectors no longer prefetch at `ahead` when
  // read a vector at a time across the rows (n or more: none of them stop; Item's long rows stop
  // where the line `ahead` on would lie past the row). ahead_next (or nullptr: none): where those
  // vectors prefetch instead, ahead_next + qoff[t] + the vector's byte offset (Item: the next
  // item's rows, from their starts).
  template <int K, int NL = 0, bool kSkew = false>
  static void RegTreeItem(const uint8_t* src, const int64_t* qoff, int64_t nred, int64_t n, T* dst, bool accumulate,
                          bool stream, bool rows_whole, A* tail, const uint8_t* ahead, int64_t ahead_end,
                          const uint8_t* ahead_next, SkewCarry* carry) {
    const DA da;
    const int64_t N = static_cast<int64_t>(hn::Lanes(da));
    int64_t j = 0;
    static_cast<void>(carry);  // StreamSkewed's (kSkew)
    const T* x[K > 0 ? K : 1];
    if constexpr (K > 0)
      for (int t = 0; t < K; ++t) x[t] = reinterpret_cast<const T*>(src + qoff[t]);
    // As row t's vector v is read, row t of the item at `ahead` at the same offset, once per 64
    // bytes (vectors of at most 64 bytes: every line of a row on a 64-byte boundary once; a row
    // off it may miss its last line: the line-exact form, the line of each vector's last byte,
    // took rep_mid_bwd's prefetch from 75% back to 48% of `read`, tessera_probes 2026-12-02);
    // prefetch_tail: the lines of the elements past the last vector (all of a row shorter than a
    // vector).
    const int64_t vec_bytes = N * static_cast<int64_t>(sizeof(T));
    const int64_t line_every = vec_bytes >= 64 ? 1 : 64 / vec_bytes;
    [[maybe_unused]] const auto prefetch = [&](int t, int64_t v) HWY_ATTR {
      if (ahead != nullptr && v % line_every == 0) PrefetchLine(ahead + qoff[t] + v * vec_bytes);
    };
    [[maybe_unused]] const auto prefetch_tail = [&](int64_t nv) HWY_ATTR {
      if (ahead == nullptr || nv * N == n) return;
      for (int64_t t = 0; t < (K > 0 ? K : nred); ++t) {  // called by the rows_whole loops only (K > 1, NL > 0)
        const uint8_t* row = ahead + qoff[t];
        if (nv == 0) PrefetchLine(row);
        PrefetchLine(row + n * static_cast<int64_t>(sizeof(T)) - 1);
      }
    };
    if (ahead != nullptr && rows_whole && K > 1) TESSERA_COUNT_VARIANT(lanes_reg_leaf_rows_along);
    const int64_t last = nred - (nred - 1) / kLeaf * kLeaf;  // addends of the last leaf
    // Vector j's sums finished into dst (accumulated, +0.0, rounded, stored or streamed).
    const auto finish = [&](hn::Vec<DA> acc, int64_t j) HWY_ATTR {
      if (accumulate) acc = hn::Add(LoadAs(da, dst + j), acc);
      acc = PlusZero(acc);
      if constexpr (E == Elem::f32) {
        const hn::Rebind<float, DA> df;
        if (stream && reinterpret_cast<uintptr_t>(dst + j) % (N * sizeof(float)) == 0) {
          StreamDemoted(hn::DemoteTo(df, acc), df, dst + j);
        } else {
          hn::StoreU(hn::DemoteTo(df, acc), df, dst + j);
        }
      } else if constexpr (sizeof(HT) == sizeof(A)) {
        if (stream && reinterpret_cast<uintptr_t>(dst + j) % (N * sizeof(A)) == 0) {
          hn::Stream(acc, da, reinterpret_cast<A*>(dst + j));
        } else {
          hn::StoreU(acc, da, reinterpret_cast<A*>(dst + j));
        }
      } else {
        hn::StoreU(acc, da, tail);
        FinishRow(tail, N, dst + j, 1, false);
      }
    };
    // Elements [j, end) of float32 sums, streamed and not accumulated, on a fixed-width target:
    // two vectors a step written by one streaming store of a float vector where dst + j is aligned
    // to its size (a first vector alone where it is aligned to half of it; in the kSkew
    // instantiations, StreamSkewed where it is off both), `sum(at)` giving the vector of sums at
    // element `at`. Returns where it stopped (the caller finishes the rest a vector at a time);
    // elsewhere returns j. tessera_probes rep_ragged_bwd: the same sums streamed as 32-byte halves
    // took 1.15-1.25x as long (AMD family 25).
    [[maybe_unused]] const auto stream_pairs = [&](int64_t j, int64_t end, auto sum) HWY_ATTR -> int64_t {
#if HWY_TARGET != HWY_SCALAR
      if constexpr (E == Elem::f32 && kFixedWidth) {
        if (stream && !accumulate) {
          const hn::Rebind<float, DA> dh;
          const hn::Twice<decltype(dh)> df;
          const auto aligned = [&](int64_t at) {
            return reinterpret_cast<uintptr_t>(dst + at) % (2 * N * sizeof(float)) == 0;
          };
          if constexpr (kSkew) {
            if (const int64_t o = SkewOf(dst + j); o != 0) {  // off every boundary
              return StreamSkewed(dst, j, end, o, [&](int64_t at) HWY_ATTR {
                const auto s0 = PlusZero(sum(at)), s1 = PlusZero(sum(at + N));
                return hn::Combine(df, hn::DemoteTo(dh, s1), hn::DemoteTo(dh, s0));
              }, carry);
            }
          }
          if (j + N <= end && !aligned(j)) {
            finish(sum(j), j);
            j += N;
          }
          for (; j + 2 * N <= end && aligned(j); j += 2 * N) {
            const auto s0 = PlusZero(sum(j)), s1 = PlusZero(sum(j + N));
            hn::Stream(hn::Combine(df, hn::DemoteTo(dh, s1), hn::DemoteTo(dh, s0)), df, dst + j);
          }
        }
      }
#else
      (void)end;
      (void)sum;
#endif
      return j;
    };
    if constexpr (K > 1) {
      // The planner's rows_whole (ReduceProblem::rows_whole, a short item): the K rows read one
      // after another, each from its start to its end, the sums held in registers (at most
      // kRowVecs vectors) or else in the scratch row `tail` (n <= the strip). Else a vector at a
      // time across the rows (the loop below). The same additions per element either way:
      // x_0 + x_1 + ... + x_{K-1}.
      if (rows_whole && n <= kRowVecs * N) {
        const int64_t nv = n / N;
        // Float32 sums streamed into a dst off the boundaries of whole and half float vectors: the
        // elements dst lies past a whole one (StreamSkewed's o), else 0.
        int64_t skew = 0;
        if constexpr (E == Elem::f32 && kFixedWidth && kSkew) skew = stream && !accumulate ? SkewOf(dst) : 0;
        static_cast<void>(skew);
        if (nv > 0) TESSERA_COUNT_VARIANT(lanes_reg_leaf_rows);  // else only the tail below runs
        // A constant count of vectors when the item fills them (its sums then stay in registers;
        // a count known only at run time keeps them in memory, ~2x the item's instructions).
        const auto rows = [&](auto whole) HWY_ATTR {
          constexpr bool kWhole = decltype(whole)::value;
          hn::Vec<DA> acc[kRowVecs];
          for (int64_t v = 0; v < kRowVecs; ++v)
            if (kWhole || v < nv) {
              prefetch(0, v);
              acc[v] = LoadAs(da, x[0] + v * N);
            }
          for (int t = 1; t < K; ++t)
            for (int64_t v = 0; v < kRowVecs; ++v)
              if (kWhole || v < nv) {
                prefetch(t, v);
                acc[v] = hn::Add(acc[v], LoadAs(da, x[t] + v * N));
              }
#if HWY_TARGET != HWY_SCALAR
          if constexpr (E == Elem::f32 && kSkew) {
            if (skew != 0) {  // the sums demoted into `part`, streamed from there (StreamSkewed)
              const hn::Rebind<float, DA> dh;
              const hn::Twice<decltype(dh)> df;
              alignas(64) float part[kRowVecs * hn::MaxLanes(DA())];
              // Each pair stored as the one float vector StreamSkewed loads back (two half-vector
              // stores under one whole load cannot be forwarded: the load waits for them to retire).
              static_assert(kRowVecs % 2 == 0, "the sums stored in pairs");
              for (int64_t v = 0; v < kRowVecs; v += 2) {
                if (kWhole || v + 1 < nv) {
                  hn::Store(hn::Combine(df, hn::DemoteTo(dh, PlusZero(acc[v + 1])), hn::DemoteTo(dh, PlusZero(acc[v]))),
                            df, part + v * N);
                } else if (v < nv) {
                  hn::Store(hn::DemoteTo(dh, PlusZero(acc[v])), dh, part + v * N);
                }
              }
              const int64_t k = StreamSkewed(dst, 0, nv * N, skew, [&](int64_t at) HWY_ATTR {
                return hn::Load(df, part + at);
              }, carry);
              std::memcpy(dst + k, part + k, static_cast<std::size_t>(nv * N - k) * sizeof(float));
              return;
            }
          }
#endif
          for (int64_t v = 0; v < kRowVecs; ++v)
            if (kWhole || v < nv) finish(acc[v], v * N);
        };
        if (nv == kRowVecs) rows(std::true_type());
        else rows(std::false_type());
        prefetch_tail(nv);
        j = nv * N;
      } else if (rows_whole) {
        TESSERA_COUNT_VARIANT(lanes_reg_leaf_rows_scratch);
        const int64_t nv = n / N;
        for (int64_t v = 0; v < nv; ++v) {
          prefetch(0, v);
          hn::StoreU(LoadAs(da, x[0] + v * N), da, tail + v * N);
        }
        for (int t = 1; t + 1 < K; ++t)
          for (int64_t v = 0; v < nv; ++v) {
            prefetch(t, v);
            hn::StoreU(hn::Add(hn::LoadU(da, tail + v * N), LoadAs(da, x[t] + v * N)), da, tail + v * N);
          }
        // The last row added as the sums are finished, two vectors a step where streamed.
        const auto sum = [&](int64_t at) HWY_ATTR {
          prefetch(K - 1, at / N);
          return hn::Add(hn::LoadU(da, tail + at), LoadAs(da, x[K - 1] + at));
        };
        int64_t v = stream_pairs(0, nv * N, sum) / N;
        for (; v < nv; ++v) finish(sum(v * N), v * N);
        prefetch_tail(nv);
        j = nv * N;
      }
    } else if constexpr (NL > 0) {
      if (n <= kTreeRowVecs * N) {  // the same for a tree of NL leaves
        const int64_t nv = n / N;
        if (nv > 0) TESSERA_COUNT_VARIANT(lanes_reg_tree_n_rows);  // else only the tail below runs
        hn::Vec<DA> sums[kTreeRowVecs];
        if (ahead != nullptr && rows_whole) {  // the planner's prefetch_along_rows (reg.tree4)
          TESSERA_COUNT_VARIANT(lanes_reg_tree_n_rows_along);
          RegTreeN<NL, kTreeRowVecs, true>(da, src, qoff, last, 0, nv, N, sums, ahead);
          prefetch_tail(nv);
        } else {
          RegTreeN<NL>(da, src, qoff, last, 0, nv, N, sums);
        }
        for (int64_t v = 0; v < kTreeRowVecs; ++v)
          if (v < nv) finish(sums[v], v * N);
        j = nv * N;
      }
    }
    // One leaf's vector of sums at element `at`, across the rows, prefetching (kPf) as it reads.
    [[maybe_unused]] const auto leaf = [&](int64_t at, auto pf) HWY_ATTR {
      constexpr bool kPf = decltype(pf)::value;
      if constexpr (kPf) prefetch(0, at / N);
      hn::Vec<DA> acc = LoadAs(da, x[0] + at);
      for (int t = 1; t < K; ++t) {
        if constexpr (kPf) prefetch(t, at / N);
        acc = hn::Add(acc, LoadAs(da, x[t] + at));
      }
      return acc;
    };
    if constexpr (K > 0) {
      // One leaf a vector at a time across the rows (of one row: a segment of count 1, a copy),
      // two vectors a step where streamed, prefetched `ahead` as they are read (SegmentItems; an
      // item's long rows, up to ahead_end, then at ahead_next), the rest without a prefetch.
      // The prefetching part is one call site run once or twice (up to ahead_end, then on at
      // ahead_next): with a second inlined copy of it (fb4da8a), the skewed instantiations took
      // 1.07-1.18x as long into dst + 16 on the same path (rep_ragged_bwd, rep_mid_bwd;
      // bench/compare --both, the Xeon reporting family 6 model 167, 2026-12-06).
      int64_t pf_end = ahead == nullptr ? j : std::min(n, std::max(j, ahead_end));
      const uint8_t* then = ahead != nullptr ? ahead_next : nullptr;  // the rows' ends: the next item's starts
      for (;;) {
        j = stream_pairs(j, pf_end, [&](int64_t at) HWY_ATTR { return leaf(at, std::true_type()); });
        for (; j + N <= pf_end; j += N) finish(leaf(j, std::true_type()), j);
        if (then == nullptr) break;
        ahead = then, then = nullptr, pf_end = n;
      }
      j = stream_pairs(j, n, [&](int64_t at) HWY_ATTR { return leaf(at, std::false_type()); });
    }
    for (; j + N <= n; j += N) {
      hn::Vec<DA> acc;
      if constexpr (K > 0) {  // RegTree's one leaf
        acc = leaf(j, std::false_type());
      } else if constexpr (NL > 0) {
        hn::Vec<DA> one[1] = {hn::Zero(da)};  // written by RegTreeN (nv = 1)
        RegTreeN<NL>(da, src, qoff, last, j, 1, N, one);
        acc = one[0];
      } else {
        acc = RegTree(da, src, qoff, nred, j);
      }
      finish(acc, j);
    }
    if (j < n) {  // the last partial vector: through a padded copy of the rows' ends
      const int64_t m = n - j;
      for (int64_t e = 0; e < m; ++e) {
        ScalarLevels<A, kRegLevels> c;
        uint64_t count = 0;
        for (int64_t q0 = 0; q0 < nred; q0 += kLeaf) {
          const int64_t q1 = std::min(nred, q0 + kLeaf);
          A v = to_acc<E>(LoadT(reinterpret_cast<const T*>(src + qoff[q0]) + j + e));
          for (int64_t q = q0 + 1; q < q1; ++q)
            v = acc_add(v, to_acc<E>(LoadT(reinterpret_cast<const T*>(src + qoff[q]) + j + e)));
          c.cur = v;
          CounterPush(c, count++);
        }
        CounterResult<kRegLevels>(c, count);
        tail[e] = c.cur;
      }
      FinishRow(tail, m, dst + j, 1, accumulate);
    }
  }
  static void RegItem(const uint8_t* src, const int64_t* qoff, int64_t nred, int64_t n, T* dst, bool accumulate,
                      bool stream, bool rows_whole, A* tail, const uint8_t* ahead, int64_t ahead_end,
                      const uint8_t* ahead_next, SkewCarry* carry) {
    static_assert(kLeaf == 8, "RegItem dispatches nred = 1 ... 8");
    // One leaf's float32 sums streamed into a dst off the boundaries of whole and half float
    // vectors: the instantiations with StreamSkewed (kSkew), so that the others' code stays as it
    // was (with the skewed path in them, outer_bwd's aligned items took 1.03-1.04x as long).
#if HWY_TARGET != HWY_SCALAR
    bool skew = false;
    if constexpr (E == Elem::f32) skew = stream && !accumulate && nred <= kLeaf && SkewOf(dst) != 0;
#endif
    const auto leaf = [&](auto k) HWY_ATTR {
      constexpr int kK = decltype(k)::value;
#if HWY_TARGET != HWY_SCALAR
      if constexpr (E == Elem::f32) {
        if (skew)
          return RegTreeItem<kK, 0, true>(src, qoff, nred, n, dst, accumulate, stream, rows_whole, tail, ahead,
                                          ahead_end, ahead_next, carry);
      }
#endif
      RegTreeItem<kK>(src, qoff, nred, n, dst, accumulate, stream, rows_whole, tail, ahead, ahead_end, ahead_next,
                      carry);
    };
    switch (nred) {
      case 1: leaf(std::integral_constant<int, 1>()); break;
      case 2: leaf(std::integral_constant<int, 2>()); break;
      case 3: leaf(std::integral_constant<int, 3>()); break;
      case 4: leaf(std::integral_constant<int, 4>()); break;
      case 5: leaf(std::integral_constant<int, 5>()); break;
      case 6: leaf(std::integral_constant<int, 6>()); break;
      case 7: leaf(std::integral_constant<int, 7>()); break;
      case 8: leaf(std::integral_constant<int, 8>()); break;
      default:
        static_assert(kUnrolledLeaves == 4, "RegItem dispatches 2 ... 4 leaves unrolled");
        switch ((nred + kLeaf - 1) / kLeaf) {
          case 2:
            RegTreeItem<0, 2>(src, qoff, nred, n, dst, accumulate, stream, rows_whole, tail, ahead, ahead_end,
                               ahead_next, carry);
            break;
          case 3:
            RegTreeItem<0, 3>(src, qoff, nred, n, dst, accumulate, stream, rows_whole, tail, ahead, ahead_end,
                               ahead_next, carry);
            break;
          case 4:
            RegTreeItem<0, 4>(src, qoff, nred, n, dst, accumulate, stream, rows_whole, tail, ahead, ahead_end,
                               ahead_next, carry);
            break;
          default:
            RegTreeItem<0>(src, qoff, nred, n, dst, accumulate, stream, rows_whole, tail, ahead, ahead_end, ahead_next,
                           carry);
            break;
        }
        break;
    }
  }
#endif

#if !HWY_HAVE_SCALABLE
  // LoadAs of the first n elements at p (n < N; n <= 0: none), the other lanes the identity;
  // reads nothing past p + n. AVX-512 loads under a mask (its masked-off lanes are never read);
  // other targets gather the n elements in memory (their MaskedLoad may read the whole vector).
  // The pad in memory kept AVX-512's accumulators of a partial block on the stack (perf annotate
  // of a narrow tile's gradient, w = 3, rows of 120 floats: its hottest instructions).
  static HWY_INLINE hn::Vec<DA> LoadAsFirst(DA da, const T* p, int64_t n) {
    constexpr size_t N = hn::MaxLanes(DA());
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    if constexpr (!std::is_same_v<HT, hwy::float16_t> && !std::is_same_v<HT, hwy::bfloat16_t>) {
      const hn::Rebind<HT, DA> dt;  // as many lanes as da
      const size_t k = static_cast<size_t>(n > 0 ? n : 0);
      const auto x = hn::MaskedLoad(hn::FirstN(dt, k), dt, reinterpret_cast<const HT*>(p));
      const auto id = hn::Set(da, acc_identity<A>());
      if constexpr (sizeof(HT) == sizeof(A)) return hn::IfThenElse(hn::FirstN(da, k), hn::BitCast(da, x), id);
      else return hn::IfThenElse(hn::FirstN(da, k), hn::PromoteTo(da, x), id);
    }
#endif
    alignas(64) A pad[N];
    for (int64_t e = 0; e < static_cast<int64_t>(N); ++e) pad[e] = e < n ? to_acc<E>(LoadT(p + e)) : acc_identity<A>();
    return hn::Load(da, pad);
  }

  // One block of the periodic order into V vectors of slots: acc[v] = (or +=, unless first) the
  // block's elements [v*N, v*N + N) at p, of which the first len exist; a partial vector is padded
  // with the identity, and one wholly past len is skipped when adding (the identity changes nothing).
  template <size_t V>
  static HWY_INLINE void AddBlock(hn::Vec<DA> (&acc)[V], const T* p, int64_t len, bool first) {
    const DA da;
    constexpr size_t N = hn::MaxLanes(DA());
    for (size_t v = 0; v < V; ++v) {
      const int64_t start = static_cast<int64_t>(v * N);
      hn::Vec<DA> x;
      if (start + static_cast<int64_t>(N) <= len) {
        x = LoadAs(da, p + start);
      } else if (!first && start >= len) {
        continue;
      } else {
        x = LoadAsFirst(da, p + start, len - start);
      }
      acc[v] = first ? x : hn::Add(acc[v], x);
    }
  }
  // The periodic order's blocks of P = V * N slots over `elems` contiguous elements at src, added
  // in order into acc (the first block overwrites it): the whole blocks without AddBlock's tests
  // per vector (a column's or a narrow tile's gradient is one to a few whole blocks), then the
  // partial one. `ahead` (or nullptr): the same block of the item prefetched is prefetched as each
  // block is added, its lines spread among the loads (where the plan says so:
  // ReduceProblem::prefetch_spread; the callers prefetch a leaf or an item at once otherwise).
  template <size_t V>
  static HWY_INLINE void AddBlocks(hn::Vec<DA> (&acc)[V], const T* src, int64_t elems, const T* ahead = nullptr) {
    const DA da;
    constexpr int64_t N = static_cast<int64_t>(hn::MaxLanes(DA()));
    constexpr int64_t P = static_cast<int64_t>(V) * N;
    constexpr int64_t kBlockBytes = P * static_cast<int64_t>(sizeof(T));
    const int64_t full = elems / P;
    const auto prefetch_block = [&](int64_t b) HWY_ATTR {  // one prefetch per 64 bytes of blocks
      if (ahead == nullptr || (kBlockBytes < kLineBytes && (b * kBlockBytes) % kLineBytes != 0)) return;
      for (int64_t l = 0; l < kBlockBytes; l += kLineBytes) PrefetchLine(reinterpret_cast<const uint8_t*>(ahead + b * P) + l);
    };
    if (full > 0) {
      prefetch_block(0);
      for (size_t v = 0; v < V; ++v) acc[v] = LoadAs(da, src + v * N);
      for (int64_t b = 1; b < full; ++b) {
        prefetch_block(b);
        for (size_t v = 0; v < V; ++v) acc[v] = hn::Add(acc[v], LoadAs(da, src + b * P + v * N));
      }
    } else {
      for (auto& a : acc) a = hn::Zero(da);  // the partial block overwrites them
    }
    if (elems > full * P) {
      prefetch_block(full);
      AddBlock(acc, src + full * P, elems - full * P, full == 0);
    }
  }

  // Periodic order for short contiguous runs (at most kLeaf blocks, no other reduced axis: a
  // column's or a narrow tile's gradient): the P slots in registers, the blocks added in order,
  // then the halving fold (across vectors while the halves are whole vectors, then in memory).
  // Writes the w sums to out.
  static constexpr size_t kMaxSlotVectors = kFoldMaxWidth * kPeriodicSlots;  // P <= 240 slots
  template <int64_t P>
  static HWY_INLINE void ShortRun(const T* src, int64_t elems, int64_t w, A* out, const T* ahead = nullptr) {
    const DA da;
    constexpr size_t N = hn::MaxLanes(DA());
    constexpr size_t V = static_cast<size_t>(P) / N;  // called only when N <= 16 (N divides P)
    hn::Vec<DA> acc[V];
    AddBlocks(acc, src, elems, ahead);
    // Halving over the m = P / w copies: slot u*w + c gets slot (u + h)*w + c, h = m/2 ... 1.
    int64_t h = P / w / 2;
    size_t live = V;
    for (; h >= 1 && (h * w) % static_cast<int64_t>(N) == 0; h /= 2) {
      const size_t hv = static_cast<size_t>(h * w) / N;
      for (size_t v = 0; v < hv; ++v) acc[v] = hn::Add(acc[v], acc[v + hv]);
      live = hv;
    }
    alignas(64) A slots[P];
    for (size_t v = 0; v < live; ++v) hn::Store(acc[v], da, slots + v * N);
    for (; h >= 1; h /= 2)
      for (int64_t i = 0; i < h * w; ++i) slots[i] = acc_add(slots[i], slots[i + h * w]);
    for (int64_t c = 0; c < w; ++c) out[c] = slots[c];
  }

  // ShortRun for w = 1 (16 slots, one output) up to its last vector: the blocks added in order and
  // the halving fold across vectors; the N slots left (h < N) are ShortRun1's and ShortRun1N's.
  // kOneBlock: run is exactly the 16 slots (column_bwd's), the block loaded straight into the
  // accumulators: without AddBlocks' partial block the compiler keeps them in registers (AVX2 kept
  // them on the stack: column_bwd read at 38% of `read` on AMD family 25). The same additions.
  template <bool kOneBlock = false>
  static HWY_INLINE hn::Vec<DA> ShortRunVec(const T* src, int64_t run) {
    constexpr size_t N = hn::MaxLanes(DA());
    constexpr size_t V = kPeriodicSlots / N;
    hn::Vec<DA> acc[V];
    if constexpr (kOneBlock) {
      for (size_t v = 0; v < V; ++v) acc[v] = LoadAs(DA(), src + v * N);
    } else {
      AddBlocks(acc, src, run);
    }
    for (size_t h = V / 2; h >= 1; h /= 2)
      for (size_t v = 0; v < h; ++v) acc[v] = hn::Add(acc[v], acc[v + h]);
    return acc[0];
  }
  // One output: the fold ends in scalar adds on the last vector.
  static HWY_INLINE A ShortRun1(const T* src, int64_t run) {
    const DA da;
    constexpr size_t N = hn::MaxLanes(DA());
    alignas(64) A lanes[N];
    hn::Store(ShortRunVec(src, run), da, lanes);
    for (size_t h = N / 2; h >= 1; h /= 2)
      for (size_t u = 0; u < h; ++u) lanes[u] = acc_add(lanes[u], lanes[u + h]);
    return lanes[0];
  }
#if HWY_TARGET != HWY_SCALAR
  // The last vector's halving fold (as ShortRun1's scalar adds) for N items at once (N >= 2 lanes of
  // 4 or 8 bytes, as TableLookupLanes asks): v[r] holds item r's N slots; returns a vector whose
  // lane r is item r's sum, the same bits. Each step pairs two vectors whose k items hold s lanes
  // each: a permutation gathers the lower halves of the items' lanes in the lower half of the
  // vector and the upper halves in the upper half, and lower + upper (slot u + slot u + s/2, as
  // ShortRun1 adds) leaves 2k items of s/2 lanes, in item order.
  static constexpr size_t kN = hn::MaxLanes(DA());
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // vshuff64x2: 128-bit blocks kImm[1:0], kImm[3:2] of a, then kImm[5:4], kImm[7:6] of b (8-byte lanes).
  template <int kImm>
  static HWY_INLINE hn::Vec<DA> Blocks(hn::Vec<DA> a, hn::Vec<DA> b) {
    const hn::Repartition<double, DA> dd;
    return hn::BitCast(DA(), hn::Vec512<double>{_mm512_shuffle_f64x2(hn::BitCast(dd, a).raw, hn::BitCast(dd, b).raw, kImm)});
  }
#endif
  static HWY_INLINE hn::Vec<DA> FoldAcross(hn::Vec<DA> (&v)[kN]) {
    const DA da;
    constexpr size_t N = kN;
    using TI = hwy::MakeSigned<A>;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    if constexpr (N == 8 && sizeof(A) == 8) {
      // AVX-512, 8 items of 8 lanes: the same steps with two-source block shuffles (14 shuffles,
      // not 20: the steps below permute each vector before concatenating). s = 8: the halves of
      // two items -> w[i] holds items 2i and 2i + 1, 4 lanes each; s = 4: the even and the odd
      // 128-bit blocks of two such vectors (lanes u and u + 2 of each item) -> 4 items of 2 lanes;
      // s = 2: the even and the odd lanes -> the 8 items' sums in order.
      hn::Vec<DA> w[4], x[2];
      for (size_t i = 0; i < 4; ++i) w[i] = hn::Add(Blocks<0x44>(v[2 * i], v[2 * i + 1]), Blocks<0xEE>(v[2 * i], v[2 * i + 1]));
      for (size_t i = 0; i < 2; ++i) x[i] = hn::Add(Blocks<0x88>(w[2 * i], w[2 * i + 1]), Blocks<0xDD>(w[2 * i], w[2 * i + 1]));
      return hn::Add(hn::ConcatEven(da, x[1], x[0]), hn::ConcatOdd(da, x[1], x[0]));
    }
#endif
    size_t m = N;  // vectors left; N / m items in each, s = m lanes per item
    for (size_t s = N; s >= 2; s /= 2, m /= 2) {
      if (s < N) {
        alignas(64) TI idx[N];
        const size_t half = s / 2;
        for (size_t l = 0; l < N / 2; ++l) {
          idx[l] = static_cast<TI>(l / half * s + l % half);
          idx[N / 2 + l] = static_cast<TI>(l / half * s + half + l % half);
        }
        const auto perm = hn::SetTableIndices(da, idx);
        for (size_t i = 0; i < m; ++i) v[i] = hn::TableLookupLanes(v[i], perm);
      }
      for (size_t i = 0; i < m / 2; ++i)
        v[i] = hn::Add(hn::ConcatLowerLower(da, v[2 * i + 1], v[2 * i]), hn::ConcatUpperUpper(da, v[2 * i + 1], v[2 * i]));
    }
    return v[0];
  }
  // ShortRun1 of N items at once (item r at src + r * stride): out[0, N).
  template <bool kOneBlock = false>
  static HWY_INLINE void ShortRun1N(const uint8_t* src, int64_t stride, int64_t run, A* out) {
    constexpr size_t N = hn::MaxLanes(DA());
    hn::Vec<DA> v[N];
    for (size_t r = 0; r < N; ++r)
      v[r] = ShortRunVec<kOneBlock>(reinterpret_cast<const T*>(src + static_cast<int64_t>(r) * stride), run);
    hn::StoreU(FoldAcross(v), DA(), out);
  }
  // ShortRun<48> for w = 3 (float32, float64; 8-lane accumulators take ShortRun3x8) up to each
  // output's last vector: block b's 16 copies of the 3 outputs loaded deinterleaved
  // (LoadInterleaved3: lane e of vector v of output c is slot (v*N + e)*3 + c), so the fold over
  // copies runs across vectors and, after, in the lanes of one vector per output — the same
  // additions as ShortRun<48>'s, slot by slot. `ahead` (or nullptr): an item of the same run
  // whose block b's lines are prefetched as block b here is loaded (spread among the loads:
  // ReduceProblem::prefetch_spread).
  static HWY_INLINE void ShortRunVec3(const T* src, int64_t run, hn::Vec<DA>* out3, const T* ahead = nullptr) {
    const DA da;
    const hn::Rebind<T, DA> dt;
    constexpr size_t N = hn::MaxLanes(DA());
    constexpr size_t V = kPeriodicSlots / N;  // vectors of each output's 16 copies
    constexpr int64_t kCopies = kPeriodicSlots;
    hn::Vec<DA> acc[3][V];
    const auto up = [&](hn::Vec<decltype(dt)> t) {
      if constexpr (sizeof(T) == sizeof(A)) return t;
      else return hn::PromoteTo(da, t);
    };
    for (int64_t b = 0; b * kCopies < run; ++b) {
      const int64_t len = std::min<int64_t>(kCopies, run - b * kCopies);  // copies in block b
      if (ahead != nullptr) {  // block b's bytes there, a line at a time, and its last byte
        // (PrefetchLines over the same bytes, from the first line's start, read narrow_bwd on AVX2
        // 3-6% slower on the Xeon of family 6 model 167, 2026-12-07)
        const auto* at = reinterpret_cast<const uint8_t*>(ahead + b * kCopies * 3);
        const int64_t block_bytes = len * 3 * static_cast<int64_t>(sizeof(T));
        for (int64_t l = 0; l < block_bytes; l += kLineBytes) PrefetchLine(at + l);
        PrefetchLine(at + block_bytes - 1);
      }
      for (size_t v = 0; v < V; ++v) {
        const int64_t start = static_cast<int64_t>(v * N);
        hn::Vec<DA> x[3];
        if (start + static_cast<int64_t>(N) <= len) {
          hn::Vec<decltype(dt)> t0, t1, t2;
          hn::LoadInterleaved3(dt, src + (b * kCopies + start) * 3, t0, t1, t2);
          x[0] = up(t0);
          x[1] = up(t1);
          x[2] = up(t2);
        } else if (b > 0 && start >= len) {
          continue;  // adding the identity changes nothing
        } else {  // a partial vector: padded with the identity
          for (int c = 0; c < 3; ++c) {
            alignas(64) A pad[N];
            for (int64_t e = 0; e < static_cast<int64_t>(N); ++e)
              pad[e] = start + e < len ? to_acc<E>(LoadT(src + (b * kCopies + start + e) * 3 + c)) : acc_identity<A>();
            x[c] = hn::Load(da, pad);
          }
        }
        for (int c = 0; c < 3; ++c) acc[c][v] = b == 0 ? x[c] : hn::Add(acc[c][v], x[c]);
      }
    }
    for (int c = 0; c < 3; ++c) {
      for (size_t h = V / 2; h >= 1; h /= 2)
        for (size_t v = 0; v < h; ++v) acc[c][v] = hn::Add(acc[c][v], acc[c][v + h]);
      out3[c] = acc[c][0];
    }
  }
  // ShortRun<48> (w = 3) on 8-lane accumulators (AVX-512's float64): the blocks added in memory
  // order into the 6 vectors of slots (no deinterleaving), the halving fold over copies by lane
  // permutations: h = 8 adds vectors 3-5 to 0-2; h = 4 (12 slots) adds slots 12-19 (one
  // ConcatLowerUpper) to 0-7 and 20-23 to 8-11; h = 2 and 1 take slots 6-11 and 3-5 down with a
  // TableLookupLanes each. The same additions as ShortRun<48>, slot by slot. out[0, 8) is written
  // (the 3 sums first).
  static HWY_INLINE void ShortRun3x8(const T* src, int64_t elems, A* out, const T* ahead = nullptr) {
    const DA da;
    const hn::Half<DA> dh;
    using TI = hwy::MakeSigned<A>;
    hn::Vec<DA> acc[6];
    AddBlocks(acc, src, elems, ahead);
    for (size_t v = 0; v < 3; ++v) acc[v] = hn::Add(acc[v], acc[v + 3]);                 // h = 8
    const auto t0 = hn::Add(acc[0], hn::ConcatLowerUpper(da, acc[2], acc[1]));           // h = 4: slots 0-7
    const auto t8 = hn::Add(hn::LowerHalf(dh, acc[1]), hn::UpperHalf(dh, acc[2]));       //        slots 8-11
    alignas(64) static constexpr TI kDown2[8] = {2, 3, 4, 5, 6, 7, 0, 0};
    alignas(64) static constexpr TI kDown3[8] = {3, 4, 5, 0, 0, 0, 0, 0};
    const auto six = hn::TableLookupLanes(hn::Combine(da, t8, hn::UpperHalf(dh, t0)),   // slots 6-11
                                          hn::SetTableIndices(da, kDown2));
    const auto u = hn::Add(t0, six);                                                     // h = 2: 0-5
    hn::StoreU(hn::Add(u, hn::TableLookupLanes(u, hn::SetTableIndices(da, kDown3))), da, out);  // h = 1
  }
  // ShortRun<48> (w = 3) of N items at once (item r at src + r * stride): out[r * 3 + c].
  // `ahead` (or nullptr): the first of N items at the same stride whose lines are prefetched,
  // item r's as item r here is summed, block by block (ShortRunVec3).
  static HWY_INLINE void ShortRun3N(const uint8_t* src, int64_t stride, int64_t run, A* out,
                                    const uint8_t* ahead = nullptr) {
    constexpr size_t N = hn::MaxLanes(DA());
    hn::Vec<DA> v[3][N];
    for (size_t r = 0; r < N; ++r) {
      hn::Vec<DA> three[3];
      const int64_t off = static_cast<int64_t>(r) * stride;
      ShortRunVec3(reinterpret_cast<const T*>(src + off), run, three,
                   ahead == nullptr ? nullptr : reinterpret_cast<const T*>(ahead + off));
      for (int c = 0; c < 3; ++c) v[c][r] = three[c];
    }
    hn::StoreInterleaved3(FoldAcross(v[0]), FoldAcross(v[1]), FoldAcross(v[2]), DA(), out);
  }
#endif

  // Periodic order with P = 16 slots (w = 1, 2, 4, 8) over one contiguous run of more than one
  // leaf (a row summed to one value, bc_cols_bwd): PeriodicLeaves and its counter with the leaf's
  // 16 slots and the counter's levels in vectors — the same additions, block by block and leaf by
  // leaf. Writes the 16 slots (before the fold) to out. `ahead`: the run of the item the plan
  // prefetches (ReduceProblem::prefetch_items on), or nullptr: where `spread`
  // (ReduceProblem::prefetch_spread), each block's lines there are prefetched as the same block
  // here is summed (AddBlocks), else each leaf's lines there before the same leaf here.
  static HWY_INLINE void RegPeriodic16(const T* src, int64_t elems, A* out, const T* ahead, bool spread) {
    const DA da;
    constexpr size_t N = hn::MaxLanes(DA());
    constexpr size_t V = kPeriodicSlots / N;
    VecLevels<static_cast<int64_t>(V), 64> c;
    uint64_t count = 0;
    const int64_t nb = (elems + kPeriodicSlots - 1) / kPeriodicSlots;
    for (int64_t b0 = 0; b0 < nb; b0 += kLeaf) {
      const int64_t b1 = std::min(nb, b0 + kLeaf);
      const int64_t leaf = std::min<int64_t>((b1 - b0) * kPeriodicSlots, elems - b0 * kPeriodicSlots);
      const T* leaf_ahead = ahead == nullptr ? nullptr : ahead + b0 * kPeriodicSlots;
      if (leaf_ahead != nullptr && !spread) {
        if (b0 == 0) TESSERA_COUNT_VARIANT(periodic_prefetch_at_once);
        PrefetchLines(reinterpret_cast<const uint8_t*>(leaf_ahead), static_cast<uintptr_t>(leaf) * sizeof(T));
        leaf_ahead = nullptr;
      } else if (leaf_ahead != nullptr && b0 == 0) {
        TESSERA_COUNT_VARIANT(periodic_prefetch_spread);
      }
      AddBlocks(c.cur, src + b0 * kPeriodicSlots, leaf, leaf_ahead);
      CounterPush(c, count++);
    }
    CounterResult(c, count);
    for (size_t v = 0; v < V; ++v) hn::StoreU(c.cur[v], da, out + v * N);
  }

  // ShortRun for the common slot counts (w = 1, 2, 4, 8: 16; w = 3, 6, 12: 48; w = 5, 10: 80);
  // false for the others. w = 3 on 8-lane float64 accumulators: ShortRun3x8.
  static constexpr bool kFold3x8 = hn::MaxLanes(DA()) == 8 && (E == Elem::f32 || E == Elem::f64);
  static HWY_INLINE bool ShortRunAny(const T* src, int64_t elems, int64_t P, int64_t w, A* out,
                                     const T* ahead = nullptr) {
#if HWY_TARGET != HWY_SCALAR
    if constexpr (kFold3x8) {
      if (P == 48 && w == 3) {
        TESSERA_COUNT_VARIANT(shortrun_3x8);
        ShortRun3x8(src, elems, out, ahead);
        return true;
      }
    }
#endif
    switch (P) {
      case 16: TESSERA_COUNT_VARIANT(shortrun_16); ShortRun<16>(src, elems, w, out, ahead); return true;
      case 48: TESSERA_COUNT_VARIANT(shortrun_48); ShortRun<48>(src, elems, w, out, ahead); return true;
      case 80: TESSERA_COUNT_VARIANT(shortrun_80); ShortRun<80>(src, elems, w, out, ahead); return true;
      default: return false;
    }
  }
#endif  // !HWY_HAVE_SCALABLE

  // One leaf of the lanes order over contiguous rows: ((x_0[j] + x_1[j]) + ...) for the K <= kLeaf
  // addend rows at ptr[0..K), n elements: each vector of outputs is summed in a register while
  // the K rows stream by. K is a template argument: the unrolled loop keeps the K row pointers in
  // registers (a loop over a runtime k reloads them and runs ~1.5x slower). The leaf is pushed
  // into a RowCounter's levels (rows of n at `levels`) as it is summed: each vector takes the m
  // merges of the push (levels 0 ... m - 1, each the left operand: CounterPush's additions, the
  // same bits) in registers and goes to level m, so a leaf costs one pass over the levels, not a
  // stored leaf row and m passes of AddRow (bc_rows_bwd's rows: 32 KiB). m = 0: into `levels`.
  //
  // ahead > 0 (ReduceProblem::prefetch_ahead_bytes, contiguous long rows): as each row's lines are
  // read, its line `ahead` bytes on while that lies in the row, then the same row of the next leaf
  // (next[t], K rows; nullptr: none, the task's last leaf) from its start; whole lines a step.
  template <int K>
  static HWY_INLINE void LeafRowsK(const T* const* ptr, int64_t n, A* levels, int m, int64_t ahead = 0,
                                   const T* const* next = nullptr) {
    const DA da;
    const int64_t N = static_cast<int64_t>(hn::Lanes(da));
    const T* x[K];
    for (int t = 0; t < K; ++t) x[t] = ptr[t];
    A* const into = levels + m * n;
    int64_t j = 0;
    const auto step = [&](int64_t at) HWY_ATTR {
      auto acc = LoadAs(da, x[0] + at);
      for (int t = 1; t < K; ++t) acc = hn::Add(acc, LoadAs(da, x[t] + at));
      for (int l = 0; l < m; ++l) acc = hn::Add(hn::LoadU(da, levels + l * n + at), acc);
      hn::StoreU(acc, da, into + at);
    };
    constexpr int64_t kSize = static_cast<int64_t>(sizeof(T));
    const int64_t skip = (ahead + kSize - 1) / kSize;
    if (ahead > 0 && n > skip) {  // (a strip shorter than the distance: no prefetch at all)
      const int64_t line = std::max<int64_t>(N, kLineBytes / kSize);  // elements a step: whole lines
      const int64_t pf_end = n - skip;
      const auto span = [&](int64_t end, const uint8_t* const* at) HWY_ATTR {
        for (; j + line <= end; j += line) {
          for (int t = 0; t < K; ++t)
            for (int64_t b = 0; b < line * kSize; b += kLineBytes) PrefetchLine(at[t] + j * kSize + b);
          for (int64_t u = 0; u < line; u += N) step(j + u);
        }
      };
      const uint8_t* along[K];
      for (int t = 0; t < K; ++t) along[t] = reinterpret_cast<const uint8_t*>(x[t]) + skip * kSize;
      span(pf_end, along);
      if (next != nullptr) {
        for (int t = 0; t < K; ++t)
          along[t] = reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(next[t]) +
                                                      static_cast<uintptr_t>((skip - n) * kSize));
        span(n, along);
      }
    }
    for (; j + N <= n; j += N) step(j);
    for (; j < n; ++j) {
      A a = to_acc<E>(LoadT(x[0] + j));
      for (int t = 1; t < K; ++t) a = acc_add(a, to_acc<E>(LoadT(x[t] + j)));
      for (int l = 0; l < m; ++l) a = acc_add(levels[l * n + j], a);
      into[j] = a;
    }
  }
  // ahead, next: LeafRowsK's (next: the next leaf's first k rows, or nullptr).
  static void LeafRowsPush(const T* const* ptr, int k, int64_t n, A* levels, int m, int64_t ahead = 0,
                           const T* const* next = nullptr) {
    static_assert(kLeaf == 8, "LeafRowsPush dispatches k = 1 ... 8");
    switch (k) {
      case 1: LeafRowsK<1>(ptr, n, levels, m, ahead, next); break;
      case 2: LeafRowsK<2>(ptr, n, levels, m, ahead, next); break;
      case 3: LeafRowsK<3>(ptr, n, levels, m, ahead, next); break;
      case 4: LeafRowsK<4>(ptr, n, levels, m, ahead, next); break;
      case 5: LeafRowsK<5>(ptr, n, levels, m, ahead, next); break;
      case 6: LeafRowsK<6>(ptr, n, levels, m, ahead, next); break;
      case 7: LeafRowsK<7>(ptr, n, levels, m, ahead, next); break;
      default: LeafRowsK<8>(ptr, n, levels, m, ahead, next); break;
    }
  }
  // The leaf of k rows (n elements each) into `row`.
  static void LeafRows(const T* const* ptr, int k, int64_t n, A* row) { LeafRowsPush(ptr, k, n, row, 0); }
  // The same, finished straight into the output (a single-leaf item: no tree, no row).
  static HWY_INLINE void LeafRowsFinish(const T* const* ptr, int k, int64_t n, T* dst, bool accumulate) {
    const DA da;
    const int64_t N = static_cast<int64_t>(hn::Lanes(da));
    int64_t j = 0;
    if constexpr (E == Elem::f32 || sizeof(HT) == sizeof(A)) {
      for (; j + N <= n; j += N) {
        auto acc = LoadAs(da, ptr[0] + j);
        for (int t = 1; t < k; ++t) acc = hn::Add(acc, LoadAs(da, ptr[t] + j));
        if (accumulate) acc = hn::Add(LoadAs(da, dst + j), acc);
        acc = PlusZero(acc);
        if constexpr (E == Elem::f32) {
          const hn::Rebind<float, DA> df;
          hn::StoreU(hn::DemoteTo(df, acc), df, dst + j);
        } else {
          hn::StoreU(acc, da, reinterpret_cast<A*>(dst + j));
        }
      }
    }
    for (; j < n; ++j) {
      A a = to_acc<E>(LoadT(ptr[0] + j));
      for (int t = 1; t < k; ++t) a = acc_add(a, to_acc<E>(LoadT(ptr[t] + j)));
      StoreT(dst + j, from_acc<E>(accumulate ? acc_add(to_acc<E>(LoadT(dst + j)), a) : a));
    }
  }

  // Lanes order: leaves [lo, hi) of the item at src (n output elements) into out.
  static void LanesLeaves(const ReduceProblem& p, const uint8_t* src, int64_t n, int64_t lo, int64_t hi,
                          Scratch& s, A* out) {
    RowCounter counter(s.levels, n);
    Odometer odo(p, p.reduced, p.nreduced, lo * kLeaf);
    const bool contiguous = p.inner_stride == static_cast<int64_t>(sizeof(T)) || n == 1;
    // The planner's prefetch along the long rows (prefetch_ahead_bytes, contiguous rows only): the
    // rows of leaf + 1 (in leaf_ptrs[1 - cur], the odometer one leaf on) continue each row's.
    const int64_t ahead = contiguous ? p.prefetch_ahead_bytes : 0;
    const T* leaf_ptrs[2][kLeaf];
    int cur = 0;
    const auto leaf_rows = [&](int64_t leaf, const T** into) {
      const int64_t q0 = leaf * kLeaf, q1 = std::min(p.nred, (leaf + 1) * kLeaf);
      for (int64_t q = q0; q < q1; ++q, odo.next()) into[q - q0] = reinterpret_cast<const T*>(src + odo.offset);
    };
    if (ahead > 0 && lo < hi) leaf_rows(lo, leaf_ptrs[0]);
    for (int64_t leaf = lo; leaf < hi; ++leaf) {
      const int64_t q0 = leaf * kLeaf, q1 = std::min(p.nred, (leaf + 1) * kLeaf);
      if (ahead > 0) {
        // The next leaf's rows where it is this task's and has as many (not the last, shorter one).
        const bool next = leaf + 1 < hi && std::min(p.nred, (leaf + 2) * kLeaf) - (leaf + 1) * kLeaf == q1 - q0;
        if (leaf + 1 < hi) leaf_rows(leaf + 1, leaf_ptrs[1 - cur]);
        TESSERA_COUNT_VARIANT(leaves_rows);
        TESSERA_COUNT_VARIANT(leaves_rows_ahead);
        if (next) TESSERA_COUNT_VARIANT(leaves_rows_next);
        LeafRowsPush(leaf_ptrs[cur], static_cast<int>(q1 - q0), n, counter.rows.levels, counter.Merges(), ahead,
                     next ? leaf_ptrs[1 - cur] : nullptr);
        counter.Pushed();
        cur = 1 - cur;
        continue;
      }
      if (contiguous) {
        const T* ptr[kLeaf];
        for (int64_t q = q0; q < q1; ++q, odo.next()) ptr[q - q0] = reinterpret_cast<const T*>(src + odo.offset);
        TESSERA_COUNT_VARIANT(leaves_rows);
        LeafRowsPush(ptr, static_cast<int>(q1 - q0), n, counter.rows.levels, counter.Merges());
        counter.Pushed();
        continue;
      }
      A* row = counter.SlotForNext() ? counter.SlotForNext() : s.tmp;
      TESSERA_COUNT_VARIANT(leaves_rows_strided);
      for (int64_t q = q0; q < q1; ++q, odo.next()) AccRowStrided(row, src + odo.offset, p.inner_stride, n, q == q0);
      counter.Push(row);
    }
    counter.Result(out);
  }

  // Periodic order: leaves [lo, hi) of blocks of the output row at src into out (P slots).
  static void PeriodicLeaves(const ReduceProblem& p, const uint8_t* src, int64_t lo, int64_t hi, Scratch& s,
                             A* out) {
    const int64_t P = p.slots;
    RowCounter counter(s.levels, P);
    const int64_t run_elems = p.run * p.width;          // contiguous elements of one run
    const int64_t nb = (run_elems + P - 1) / P;         // blocks per run
    const int64_t total = p.nleaves == 0 ? 0 : nb * (p.nred / p.run);
    int64_t z = lo * kLeaf;
    Odometer odo(p, p.reduced, p.nreduced, z / nb);
    int64_t b = z % nb;
    for (int64_t leaf = lo; leaf < hi; ++leaf) {
      A* row = counter.SlotForNext() ? counter.SlotForNext() : s.tmp;
      const int64_t z1 = std::min(total, (leaf + 1) * kLeaf);
      for (; z < z1; ++z) {
        const bool first = z == leaf * kLeaf;
        const T* at = reinterpret_cast<const T*>(src + odo.offset) + b * P;
        const int64_t len = std::min(P, run_elems - b * P);
        AccRow(row, at, len, first);
        if (first)
          for (int64_t j = len; j < P; ++j) row[j] = acc_identity<A>();
        if (++b == nb) {
          b = 0;
          odo.next();
        }
      }
      counter.Push(row);
    }
    counter.Result(out);
  }

  // The periodic order's last step: the P / w slots of each of the w outputs by a halving tree.
  static void FoldSlots(A* slots, int64_t P, int64_t w) {
    for (int64_t h = P / w / 2; h >= 1; h /= 2) AddRow(slots, slots, slots + h * w, h * w);
  }

  // Interleaved: out[j] = ((x0 + x1) + x2) + x3 for the r addends of output j, contiguous.
  static void InterleavedRow(const uint8_t* src, int64_t r, int64_t n, A* out) {
    const T* s = reinterpret_cast<const T*>(src);
    int64_t j = 0;
    if constexpr (E == Elem::f32 || E == Elem::f64) {
      const DA da;
      const hn::Rebind<T, DA> dt;
      const int64_t N = static_cast<int64_t>(hn::Lanes(da));
      hn::Vec<decltype(dt)> v0, v1, v2, v3;
      const auto up = [&](hn::Vec<decltype(dt)> v) {
        if constexpr (sizeof(T) == sizeof(A)) return v;
        else return hn::PromoteTo(da, v);
      };
      if (r == 2) {
        for (; j + N <= n; j += N) {
          hn::LoadInterleaved2(dt, s + j * 2, v0, v1);
          hn::StoreU(hn::Add(up(v0), up(v1)), da, out + j);
        }
      } else if (r == 3) {
        for (; j + N <= n; j += N) {
          hn::LoadInterleaved3(dt, s + j * 3, v0, v1, v2);
          hn::StoreU(hn::Add(hn::Add(up(v0), up(v1)), up(v2)), da, out + j);
        }
      } else if (r == 4) {
        for (; j + N <= n; j += N) {
          hn::LoadInterleaved4(dt, s + j * 4, v0, v1, v2, v3);
          hn::StoreU(hn::Add(hn::Add(hn::Add(up(v0), up(v1)), up(v2)), up(v3)), da, out + j);
        }
      }
    }
    for (; j < n; ++j) {
      A a = to_acc<E>(LoadT(s + j * r));
      for (int64_t t = 1; t < r; ++t) a = acc_add(a, to_acc<E>(LoadT(s + j * r + t)));
      out[j] = a;
    }
  }

  // float32 pairs: dst[j] = src[2j] + src[2j + 1] in float32 — the same bits as the float64 sum
  // rounded once (a float64 sum of two float32 values rounded to float32 is the correctly rounded
  // float32 sum: 53 >= 2 * 24 + 2 bits, so the double rounding is innocuous), without the
  // accumulator row. Not when accumulating (dst + sum is then a second float64 addition).
  // ahead: ReduceProblem::prefetch_ahead_bytes (0: none; at most kPrefetchMaxBytes): as the 8N
  // bytes of a step (N pairs; one pair on SCALAR) are read, the lines that start among the 8N bytes
  // `ahead` on are prefetched, while those lie in the item.
  static void PairRowF32(const uint8_t* src, int64_t n, float* dst, bool stream, int64_t ahead) {
    const float* s = reinterpret_cast<const float*>(src);
    int64_t j = 0;
#if HWY_TARGET != HWY_SCALAR
    const hn::ScalableTag<float> df;
    const int64_t N = static_cast<int64_t>(hn::Lanes(df));
#else
    constexpr int64_t N = 1;
#endif
    // The last step whose bytes `ahead` on end within the item's 8n bytes (-1: none).
    const int64_t step_bytes = 8 * N;
    const int64_t pf_end = ahead > 0 && 8 * n - step_bytes >= ahead ? n - (ahead + step_bytes + 7) / 8 : -1;
#if HWY_TARGET != HWY_SCALAR
    hn::Vec<decltype(df)> v0, v1;
    if (stream)
      for (; j < n && reinterpret_cast<uintptr_t>(dst + j) % (N * sizeof(float)) != 0; ++j)
        StoreT(dst + j, plus_zero(LoadT(s + 2 * j) + LoadT(s + 2 * j + 1)));
    if (j <= pf_end) TESSERA_COUNT_VARIANT(pair_f32_ahead);
    for (; j + N <= n; j += N) {
      if (j <= pf_end)
        for (int64_t b = (8 * j + kLineBytes - 1) / kLineBytes * kLineBytes; b < 8 * j + step_bytes; b += kLineBytes)
          PrefetchLine(src + b + ahead);
      hn::LoadInterleaved2(df, s + 2 * j, v0, v1);
      const auto sum = hn::Add(hn::Add(v0, v1), hn::Zero(df));  // + 0.0: plus_zero
      if (stream) hn::Stream(sum, df, dst + j);
      else hn::StoreU(sum, df, dst + j);
    }
#else
    (void)stream;
    if (j <= pf_end) TESSERA_COUNT_VARIANT(pair_f32_ahead);
    for (; j <= pf_end; ++j) {  // a pair a step, its line's prefetch where one starts
      if ((8 * j) % kLineBytes == 0) PrefetchLine(src + 8 * j + ahead);
      StoreT(dst + j, plus_zero(LoadT(s + 2 * j) + LoadT(s + 2 * j + 1)));
    }
#endif
    for (; j < n; ++j) StoreT(dst + j, plus_zero(LoadT(s + 2 * j) + LoadT(s + 2 * j + 1)));  // any alignment
  }

#if !HWY_HAVE_SCALABLE
  // reduce.periodic.rows.w1's prefetch and that of .rows' N-items loop (ShortRun3N, targets without
  // kFold3x8; its per-item loop prefetches through AddBlocks) (ReduceProblem::prefetch_items): every line of the n dense items
  // from `item` (item r at src + r * stride, each `bytes` long), if they lie before `end`.
  static HWY_INLINE void PrefetchItems(const uint8_t* src, int64_t stride, int64_t bytes, int64_t item, int64_t n,
                                       int64_t end) {
    if (item + n > end) return;
    for (int64_t r = item; r < item + n; ++r) PrefetchLines(src + r * stride, static_cast<uintptr_t>(bytes));
  }

  // reduce.periodic.rows.w1: the short runs (one leaf each) of one kept axis summed to one value
  // each, N items per vector of results where the lanes allow, then one by one.
  static void RowsW1(const ReduceProblem& p, const uint8_t* src, T* out, int64_t begin, int64_t end, bool accumulate,
                     Scratch& s) {
    static_cast<void>(s);  // not used where the N-item loop is not compiled
    if constexpr (kSlotsInVectors) {
      const RAxis& a = p.axes[p.outer[0]];
      int64_t item = begin;
#if HWY_TARGET != HWY_SCALAR
      constexpr int64_t N = static_cast<int64_t>(hn::MaxLanes(DA()));
      if constexpr (N >= 2 && sizeof(A) >= 4) {  // N items at a time: one vector of results
        const int64_t ahead = p.prefetch_items, bytes = p.run * static_cast<int64_t>(sizeof(T));
        const auto items = [&](auto one_block) HWY_ATTR {
          for (; item + N <= end; item += N) {
            TESSERA_COUNT_VARIANT(periodic_run1_n);
            if (ahead > 0) PrefetchItems(src, a.src_stride, bytes, item + ahead, N, end);
            ShortRun1N<decltype(one_block)::value>(src + item * a.src_stride, a.src_stride, p.run, s.out);
            FinishRow(s.out, N, out + item * a.dst_stride, a.dst_stride, accumulate);
          }
        };
        if (p.run == static_cast<int64_t>(kPeriodicSlots)) items(std::true_type());
        else items(std::false_type());
      }
#endif
      for (; item < end; ++item) {
        TESSERA_COUNT_VARIANT(periodic_run1);
        const A v = ShortRun1(reinterpret_cast<const T*>(src + item * a.src_stride), p.run);
        T* d = out + item * a.dst_stride;
        StoreT(d, from_acc<E>(accumulate ? acc_add(to_acc<E>(LoadT(d)), v) : v));
      }
    }
  }
  // reduce.segments.runs: segment k of each row (the run's outer kept axis, if any) sums its
  // count (<= kSegRunMax) of contiguous elements as its own sub-problem does: fewer than 16 in the
  // lanes order, element by element (the strided path: leaves of kLeaf summed linearly from the
  // identity, two leaves added), 16 or more in the periodic order (w = 1, one leaf: ShortRun1).
  static HWY_INLINE A SegmentShort(const T* run, int64_t count) {
    A leaf[2] = {acc_identity<A>(), acc_identity<A>()};
    for (int64_t i = 0; i < count; ++i) leaf[i / kLeaf] = acc_add(leaf[i / kLeaf], to_acc<E>(LoadT(run + i)));
    return count > kLeaf ? acc_add(leaf[0], leaf[1]) : leaf[0];
  }
  static HWY_INLINE A SegmentSum(const T* run, int64_t count) {
    return count < kPeriodicSlots ? SegmentShort(run, count) : ShortRun1(run, count);
  }
#if HWY_TARGET != HWY_SCALAR
  // SegmentGroups: float32 on fixed-width targets of two or more accumulator lanes.
  static constexpr bool kSegGroups = E == Elem::f32 && reduce_seg_groups(kFixedWidth, kAccLanes);
  // Element `idx` (0 <= idx < 2 NF) of the window w0, w1 of 2 NF floats in the lanes of `m`, 0 in
  // the others.
  template <class DF, class VI>
  static HWY_INLINE hn::Vec<DF> TwoTablesOrZero(DF df, hn::Mask<DF> m, hn::Vec<DF> w0, hn::Vec<DF> w1, VI idx) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    static_cast<void>(df);
    return hn::Vec<DF>{_mm512_maskz_permutex2var_ps(m.raw, w0.raw, idx.raw, w1.raw)};
#else
    const hn::RebindToSigned<DF> di;
    constexpr int32_t NF = static_cast<int32_t>(hn::MaxLanes(DF()));
    const auto lane = hn::IndicesFromVec(df, hn::And(idx, hn::Set(di, NF - 1)));
    return hn::IfThenElseZero(m, hn::IfThenElse(hn::RebindMask(df, hn::Lt(idx, hn::Set(di, NF))),
                                                hn::TableLookupLanes(w0, lane), hn::TableLookupLanes(w1, lane)));
#endif
  }
  static constexpr uint64_t kOnes = 0x0101010101010101ull;  // 1 in each byte
  // The exclusive prefix sums of G <= 8 one-byte counts of at most kSegGroupMaxCount, a byte each
  // (at most 28), and their total; `raw`: the counts, a byte each.
  template <int G>
  static HWY_INLINE uint64_t GroupOffsets(const uint8_t* c8, uint64_t* raw, int64_t* total) {
    uint64_t x = 0;
    std::memcpy(&x, c8, G);  // little-endian: count j in byte j (x86, aarch64)
    *raw = x;
    const uint64_t inclusive = x * kOnes;  // byte j: counts 0..j (no carries: <= 32)
    *total = static_cast<int64_t>((inclusive >> (8 * (G - 1))) & 0xff);
    return G == 8 ? inclusive << 8 : (inclusive << 8) & ((uint64_t{1} << (8 * G)) - 1);
  }
  // The bytes of two words of G bytes each (ea's in lanes 0..G-1), as a vector of 2G bytes.
  template <int G, class D8>
  static HWY_INLINE hn::Vec<D8> PairBytes(D8 d8, uint64_t ea, uint64_t eb) {
    if constexpr (G == 8) {
      const hn::Repartition<uint64_t, D8> d64;  // two lanes
      return hn::BitCast(d8, hn::InterleaveLower(d64, hn::Set(d64, ea), hn::Set(d64, eb)));
    } else {
      using W = std::conditional_t<G == 4, uint64_t, uint32_t>;  // one lane of 2G bytes
      const W w = static_cast<W>(ea | eb << (8 * G));
#if HWY_ARCH_X86_64 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
      // The word in the vector's low lane alone: Set's broadcast (vpunpcklqdq, pshufd) is one
      // operation more on the shuffle port, which the steps' permutations and conversions fill
      // (measured on AVX2 before its groups were summed by rows: 1.02-1.07x).
      static_cast<void>(d8);
      if constexpr (G == 4) return hn::Vec<D8>{_mm_cvtsi64_si128(static_cast<int64_t>(w))};
      else return hn::Vec<D8>{_mm_cvtsi32_si128(static_cast<int>(w))};
#else
      const hn::Repartition<W, D8> dw;
      return hn::BitCast(d8, hn::Set(dw, w));
#endif
    }
  }
  // reduce.segments.runs with q.seg_group_count = C (kSegGroupMaxCount at most): 2N segments per
  // step from segment k on (N: the accumulator's lanes, NF = 2N the float vector's), as two groups
  // of N, each of whose elements lie in a window of two float vectors from the group's first
  // element (N * C <= 2 NF): lane r's offset in its window is the sum of the counts before it (from
  // the one-byte counts), and step i (i < C) adds element i of every segment, picked from the
  // window by a permutation (on AVX2 by a transpose of the segments' rows: GroupSumsByRows), or
  // the identity past the segment's count — the additions of SegmentShort, the same bits.
  // `*base`: segment k's first element in the row, on return the first segment's not summed.
  // Stops where the next step's windows would (on AVX2: could) reach past the row (the caller
  // sums the rest one segment, or N, at a time); returns the first segment not summed.
  static int64_t SegmentGroups(int64_t c, const T* row, const uint8_t* c8, int64_t k, int64_t ke, int64_t* base,
                               int64_t row_elems, T* o, bool accumulate, bool stream, int64_t ahead,
                               int64_t counts_ahead) {
    if constexpr (!kSegGroups) {
      static_cast<void>(c), static_cast<void>(row), static_cast<void>(c8), static_cast<void>(ke);
      static_cast<void>(base), static_cast<void>(row_elems), static_cast<void>(o), static_cast<void>(accumulate);
      static_cast<void>(stream), static_cast<void>(ahead), static_cast<void>(counts_ahead);
      return k;
    } else {
      // Streamed where the plan streams the output: on the step's own vectors where they are whole
      // (they stay so: a step writes one vector), else (`skew`, SkewOf: numpy's dst + 16 on
      // AVX-512) as StreamSkewed does, each line assembled from two steps' vectors; then fenced
      // before the call returns.
      constexpr std::size_t kVectorBytes = hn::MaxLanes(hn::ScalableTag<float>()) * sizeof(float);
      const bool nt = stream && !accumulate && reinterpret_cast<uintptr_t>(o + k) % kVectorBytes == 0;
      const int64_t skew = stream && !accumulate && !nt ? SkewOf(o + k) : 0;
      int64_t next;
      switch (c) {
        case 1: next = SegmentGroupsC<1>(row, c8, k, ke, base, row_elems, o, accumulate, nt, skew, ahead, counts_ahead); break;
        case 2: next = SegmentGroupsC<2>(row, c8, k, ke, base, row_elems, o, accumulate, nt, skew, ahead, counts_ahead); break;
        case 3: next = SegmentGroupsC<3>(row, c8, k, ke, base, row_elems, o, accumulate, nt, skew, ahead, counts_ahead); break;
        default: next = SegmentGroupsC<4>(row, c8, k, ke, base, row_elems, o, accumulate, nt, skew, ahead, counts_ahead); break;
      }
      if (nt || skew != 0) hwy::FlushStream();
      return next;
    }
  }
  // Which lanes of a group's two steps have an element (count > step): Live(LiveKey(bytes), i)
  // holds lanes 0..G-1 of step i and lanes G..2G-1 of step i + 1; `bytes`: the group's G counts,
  // a byte each.
#if (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL) && !defined(HWY_DISABLE_BMI2_FMA)
  // AVX-512: in general registers, not by a compare of lanes, which takes the port the
  // permutations and conversions need (vpcmpd: port 5 on Intel's cores). The key: the eight
  // counts, a nibble each, twice (pext); a nibble count + 7 - step has its top bit set where
  // count > step (counts are at most 4), so one addition and one pext give both steps' bits.
  static HWY_INLINE uint64_t LiveKey(uint64_t bytes) {
    const uint64_t nibbles = _pext_u64(bytes, 0x0F0F0F0F0F0F0F0Full);
    return nibbles | nibbles << 32;
  }
  template <int G>
  static HWY_INLINE hn::Mask<hn::ScalableTag<float>> Live(uint64_t key, int i) {
    static_assert(G == 8, "eight lanes of doubles");
    const uint64_t steps = (0x6666666600000000ull | 0x77777777ull) - static_cast<uint64_t>(i) * 0x1111111111111111ull;
    const uint32_t bits = static_cast<uint32_t>(_pext_u64(key + steps, 0x8888888888888888ull));
    return hn::Mask<hn::ScalableTag<float>>{_cvtu32_mask16(bits)};
  }
#else
  static HWY_INLINE uint64_t LiveKey(uint64_t bytes) { return bytes; }
  template <int G>
  static HWY_INLINE auto Live(uint64_t bytes, int i) {
    const hn::ScalableTag<float> df;
    const hn::RebindToSigned<decltype(df)> di;
    const hn::Rebind<uint8_t, decltype(di)> d8;
    const auto count = hn::PromoteTo(di, PairBytes<G>(d8, bytes, bytes));
    const auto steps = hn::IfThenElse(hn::FirstN(di, G), hn::Set(di, i), hn::Set(di, i + 1));
    return hn::RebindMask(df, hn::Gt(count, steps));
  }
#endif
#if HWY_TARGET == HWY_AVX2
  // AVX2 (N = 4): a group's sums by rows, not by permutations. Segment r's C (<= 4) elements are
  // the first of the four floats from w + counts[0] + ... + counts[r - 1] (inside the group's
  // window), converted to doubles, those past its count (counts[r] <= C: the plan's
  // seg_group_count is the largest count) zeroed by a mask from kLive; the four rows transposed
  // (4x4 doubles) give element i of every segment in one vector, added in order from the
  // identity: the additions of SegmentShort and of the permutations' steps, the same bits.
  // `*total`: the group's counts summed. On Intel's cores only port 5 runs the cross-lane
  // operations, and the permutations' design needed ~31 a step of 8 segments (permutations,
  // conversions of every step's 8 floats, the vectors built from the counts); here 14 (8
  // conversions of 4 floats, 4 lane swaps, 2 demotions): rep_counts_bwd on AVX2 1.27-1.33x
  // (bench/results/2026-12-07-xeon-f6m167/avx2-rep_counts_bwd-rows-0ddba02.txt).
  alignas(32) static constexpr uint64_t kLive[kSegGroupMaxCount + 1][4] = {
      {0, 0, 0, 0}, {~0ull, 0, 0, 0}, {~0ull, ~0ull, 0, 0}, {~0ull, ~0ull, ~0ull, 0}, {~0ull, ~0ull, ~0ull, ~0ull}};
  template <int C>
  static HWY_INLINE hn::Vec<DA> GroupSumsByRows(const float* w, const uint8_t* counts, int64_t* total) {
    static_assert(C >= 1 && C <= kSegGroupMaxCount, "four elements a row");
    __m256d v[4];
    int64_t at = 0;  // segment r's first element in the window: the counts before it
    for (int r = 0; r < 4; ++r) {
      const auto* live = reinterpret_cast<const __m256i*>(kLive[counts[r]]);
      v[r] = _mm256_and_pd(_mm256_cvtps_pd(_mm_loadu_ps(w + at)), _mm256_castsi256_pd(_mm256_load_si256(live)));
      at += counts[r];
    }
    *total = at;
    const __m256d t0 = _mm256_unpacklo_pd(v[0], v[1]), t1 = _mm256_unpackhi_pd(v[0], v[1]);  // elements 0, 2; 1, 3
    const __m256d t2 = _mm256_unpacklo_pd(v[2], v[3]), t3 = _mm256_unpackhi_pd(v[2], v[3]);
    __m256d sum = _mm256_add_pd(_mm256_setzero_pd(), _mm256_insertf128_pd(t0, _mm256_castpd256_pd128(t2), 1));
    if constexpr (C > 1) sum = _mm256_add_pd(sum, _mm256_insertf128_pd(t1, _mm256_castpd256_pd128(t3), 1));
    if constexpr (C > 2) sum = _mm256_add_pd(sum, _mm256_permute2f128_pd(t0, t2, 0x31));
    if constexpr (C > 3) sum = _mm256_add_pd(sum, _mm256_permute2f128_pd(t1, t3, 0x31));
    return hn::Vec<DA>{sum};
  }
#endif
  // `skew` (0 with accumulate, and where `stream` streams whole vectors): o + k lies skew elements
  // past a vector's boundary (SkewOf); the steps' vectors rotated by it, each line between the
  // first boundary and the last blended from two steps' and streamed on its boundary (as
  // StreamSkewed's lines: its rotation and blend written again here, kept in this loop's
  // registers — the two shared through a small class made StreamSkewed's callers 4-6% slower into
  // dst + 16), the first step's elements before the first boundary and the last's after the last
  // one written with ordinary stores. (With every step an ordinary store across two lines,
  // rep_counts_bwd into dst + 16 ran at 0.90-0.93 of its aligned speed: each line read from
  // memory before it was written.)
  template <int C>
  static int64_t SegmentGroupsC(const T* row, const uint8_t* c8, int64_t k, int64_t ke, int64_t* base_io,
                                int64_t row_elems, T* o, bool accumulate, bool stream, int64_t skew, int64_t ahead,
                                int64_t counts_ahead) {
    int64_t base = *base_io;
    static_assert(C >= 1 && C <= kSegGroupMaxCount, "a group's segments fit its window");
    const hn::ScalableTag<float> df;
    const hn::Half<decltype(df)> dh;
    const hn::RebindToSigned<decltype(df)> di;
    const hn::Rebind<uint8_t, decltype(di)> d8;
    const DA dd;
    constexpr int64_t N = static_cast<int64_t>(hn::MaxLanes(DA()));
    constexpr int64_t NF = 2 * N;
    constexpr int G = static_cast<int>(N);  // segments per group
    constexpr int64_t kLineElems = kLineBytes / static_cast<int64_t>(sizeof(float));
    constexpr int64_t kAheadLines = (2 * G * C + kLineElems - 1) / kLineElems;  // lines a step reads at most
    static_assert(static_cast<int64_t>(hn::MaxLanes(df)) == NF && (G == 2 || G == 4 || G == 8),
                  "two groups per vector");
    // The rotation (skew != 0): lane l of a step's rotated vector is its lane (l + NF - skew) % NF;
    // lanes below skew of a line come from the step before (`prev`), the others from the step's.
    alignas(64) hn::TFromD<decltype(di)> rot[NF];
    for (int64_t l = 0; l < NF; ++l) rot[l] = static_cast<hn::TFromD<decltype(di)>>((l + NF - skew) % NF);
    const auto idx = hn::SetTableIndices(df, rot);
    const auto from_prev = hn::FirstN(df, static_cast<size_t>(skew));
    alignas(64) float part[NF];
    auto prev = hn::Zero(df);
    T* next_line = nullptr;  // the next line to stream (skew != 0), once the first step has run
    // Steps of k below it prefetch the counts, inside the range (the range's last counts_ahead
    // counts go unprefetched: 0.4% of a range of 1 Mi segments); none without counts_ahead.
    const int64_t last_counts = counts_ahead > 0 ? ke - counts_ahead : k;
    // AVX2 and the others differ twice in a step (the windows' check, the sums), around the
    // prefetch: one function for both, the prefetch before or after it, ran rep_counts_bwd 2-5%
    // slower on AVX2 and AVX-512 (bench/results/2026-12-07-xeon-f6m167/
    // rep_counts_bwd-twogroups-f91b9d0.txt).
    for (; k + NF <= ke; k += NF) {
      int64_t ta = 0, tb = 0;  // the groups' totals
#if HWY_TARGET == HWY_AVX2
      // Both groups' windows inside the row whatever the counts (group B's first element at most
      // G C past base): the sums' loads need no counts before them, and take each group's total.
      if (base + G * C + 2 * NF > row_elems) break;
#else
      uint64_t ca = 0, cb = 0;
      const uint64_t ea = GroupOffsets<G>(c8 + k, &ca, &ta), eb = GroupOffsets<G>(c8 + k + G, &cb, &tb);
      const int64_t bb = base + ta;  // group B's first element
      if (bb + 2 * NF > row_elems) break;
#endif
      TESSERA_COUNT_VARIANT(segment_groups);
      // The prefetch (ahead > 0): the lines from `ahead` elements past the step's first that hold
      // the 2 G C elements a step reads at most (C lines on AVX-512), each step, into L1. (A loop
      // over the lines the steps passed, 0-4 a step, mispredicted its exit; into L2, prefetcht1,
      // the plan read at 69% of `read`, into L1 at 73-75%: tessera_probes --probe rep_counts_bwd,
      // 2026-12-03, bench/results/2026-12-03-xeon-f6m167/probes-rep_counts_bwd-f6288ad-l1-l2.txt.)
      // The counts (counts_ahead > 0): the line counts_ahead bytes on, each step, into L1
      // (ReduceProblem::seg_counts_ahead_bytes).
      if (ahead > 0)
        for (int64_t j = 0; j < kAheadLines; ++j)
          __builtin_prefetch(row + std::min(base + ahead + j * kLineElems, row_elems - 1), 0, 3);
      if (k < last_counts) __builtin_prefetch(c8 + k + counts_ahead, 0, 3);
#if HWY_TARGET == HWY_AVX2
      auto lo = GroupSumsByRows<C>(row + base, c8 + k, &ta);  // group A
      const int64_t bb = base + ta;                           // group B's first element
      auto hi = GroupSumsByRows<C>(row + bb, c8 + k + G, &tb);
#else
      // Two steps (i, i + 1) of a group at once: lanes 0..G-1 of one permutation pick element i of
      // each segment, lanes G..2G-1 element i + 1 (half the permutations and masks of one step at
      // a time, whose lanes G..2G-1 went unused). offs_*: lane r's offset in the group's window,
      // in both halves, the upper one plus 1.
      const auto offs_a = hn::PromoteTo(di, PairBytes<G>(d8, ea, ea + kOnes));
      const auto offs_b = hn::PromoteTo(di, PairBytes<G>(d8, eb, eb + kOnes));
      const auto wa0 = hn::LoadU(df, row + base), wa1 = hn::LoadU(df, row + base + NF);
      const auto wb0 = hn::LoadU(df, row + bb), wb1 = hn::LoadU(df, row + bb + NF);
      const uint64_t key_a = LiveKey(ca), key_b = LiveKey(cb);
      auto lo = hn::Zero(dd), hi = hn::Zero(dd);  // the identity; lo: group A, hi: group B
      for (int i = 0; i < C; i += 2) {
        const auto at = hn::Set(di, i);
        const auto xa = TwoTablesOrZero(df, Live<G>(key_a, i), wa0, wa1, hn::Add(offs_a, at));
        const auto xb = TwoTablesOrZero(df, Live<G>(key_b, i), wb0, wb1, hn::Add(offs_b, at));
        lo = hn::Add(lo, hn::PromoteTo(dd, hn::LowerHalf(dh, xa)));
        hi = hn::Add(hi, hn::PromoteTo(dd, hn::LowerHalf(dh, xb)));
        if (i + 1 < C) {
          lo = hn::Add(lo, hn::PromoteTo(dd, hn::UpperHalf(dh, xa)));
          hi = hn::Add(hi, hn::PromoteTo(dd, hn::UpperHalf(dh, xb)));
        }
      }
#endif
      if (accumulate) {  // a count of 0 leaves its output alone
        const auto counts = hn::PromoteTo(di, hn::LoadU(d8, c8 + k));
        const auto old = hn::LoadU(df, o + k);
        lo = hn::Add(lo, hn::PromoteTo(dd, hn::LowerHalf(dh, old)));
        hi = hn::Add(hi, hn::PromoteTo(dd, hn::UpperHalf(dh, old)));
        const auto sum = hn::Combine(df, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
        hn::StoreU(hn::IfThenElse(hn::RebindMask(df, hn::Gt(counts, hn::Zero(di))), sum, old), df, o + k);
      } else {
        const auto sums = hn::Combine(df, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
        if (skew != 0) {
          const auto cur = hn::TableLookupLanes(sums, idx);
          if (next_line == nullptr) {  // the elements before the first boundary
            hn::Store(sums, df, part);
            std::memcpy(o + k, part, static_cast<std::size_t>(NF - skew) * sizeof(float));
            next_line = o + k + NF - skew;
          } else {
            hn::Stream(hn::IfThenElse(from_prev, prev, cur), df, next_line);
            next_line += NF;
          }
          prev = cur;
        } else if (stream) {
          hn::Stream(sums, df, o + k);
        } else {
          hn::StoreU(sums, df, o + k);
        }
      }
      base = bb + tb;
    }
    if (next_line != nullptr) {  // the last step's elements after the last boundary
      hn::Store(prev, df, part);
      std::memcpy(next_line, part, static_cast<std::size_t>(skew) * sizeof(float));
    }
    *base_io = base;
    return k;
  }
#else
  static constexpr bool kSegGroups = false;
#endif
  // Segments 0 ... ke - 1 of a row (a range's, from where the groups stopped): segment j sums
  // prefix[j + 1] - prefix[j] elements from element prefix[j] of the row (of row_elems); its output
  // is o + j * dst_stride. N at a time where the target allows, then one by one.
  static void RunsTail(const int64_t* prefix, int64_t ke, const T* row, int64_t row_elems, int64_t dst_stride, T* o,
                       bool accumulate) {
    static_cast<void>(row_elems);  // read only by the float32 code below
    int64_t k = 0;
#if HWY_TARGET != HWY_SCALAR
    if constexpr (E == Elem::f32 || E == Elem::f64) {
      // N segments at a time, lane r segment k + r: the short ones' addends gathered (or, for
      // float32, permuted), step i adding element i of each (the identity past a segment's
      // count) into leaf i / kLeaf. The lanes' counts and offsets come from the prefix sums by
      // vector operations (no stores of lanes reloaded as a vector: they stall).
      const DA da;
      const hn::Rebind<T, DA> dt;
      const hn::RebindToSigned<decltype(dt)> di;
      const hn::Rebind<int64_t, DA> d64;
      using I = hn::TFromD<decltype(di)>;
      constexpr int64_t N = static_cast<int64_t>(hn::MaxLanes(DA()));
      if (reinterpret_cast<uintptr_t>(row) % alignof(T) == 0) {  // emulated gathers load a T*
        for (; k + N <= ke; k += N) {
          TESSERA_COUNT_VARIANT(segment_runs_n);
          const auto p0 = hn::LoadU(d64, prefix + k);
          const auto count = hn::Sub(hn::LoadU(d64, prefix + k + 1), p0);
          const auto long_lanes = hn::Gt(count, hn::Set(d64, kPeriodicSlots - 1));
          const auto counts = hn::IfThenZeroElse(long_lanes, count);  // the short ones'
          const auto offsets = hn::Sub(p0, hn::Set(d64, prefix[k]));
          const int64_t longest = hn::GetLane(hn::MaxOfLanes(d64, counts));
          const bool empty = !hn::AllFalse(d64, hn::Eq(count, hn::Zero(d64)));
          const bool long_runs = !hn::AllFalse(d64, long_lanes);
          const T* base = row + prefix[k];
          const int64_t span = prefix[k + N] - prefix[k];
          const auto identity = hn::Set(da, acc_identity<A>());
          hn::Vec<DA> leaf0 = identity, leaf1 = identity;
          const auto add = [&](int64_t i, hn::Vec<DA> x) {
            x = hn::IfThenElse(hn::RebindMask(da, hn::Lt(hn::Set(d64, i), counts)), x, identity);
            if (i < kLeaf) leaf0 = hn::Add(leaf0, x);
            else leaf1 = hn::Add(leaf1, x);
          };
          // Lanes past their count read an element of the group again (clamped to its last),
          // never outside the group's elements; their addend is the identity.
          if constexpr (E == Elem::f32) {
            // float32: the group's elements in two vectors of 2N lanes when they fit and lie
            // inside the row, element i of each segment picked by a permutation. The offsets
            // are the low halves of the 64-bit lanes (the even 32-bit lanes).
            const hn::ScalableTag<float> df;
            const hn::RebindToSigned<decltype(df)> d32;
            constexpr int64_t NF = static_cast<int64_t>(hn::MaxLanes(df));
            const auto wide = hn::ConcatEven(d32, hn::Zero(d32), hn::BitCast(d32, offsets));
            if (NF == 2 * N && span <= 2 * NF && prefix[k] + 2 * NF <= row_elems) {
              const auto wlast = hn::Set(d32, static_cast<int32_t>(span - 1));
              const auto w0 = hn::LoadU(df, base), w1 = hn::LoadU(df, base + NF);
              for (int64_t i = 0; i < longest; ++i) {
                const auto at = hn::Min(hn::Add(wide, hn::Set(d32, static_cast<int32_t>(i))), wlast);
                const auto lane = hn::IndicesFromVec(df, hn::And(at, hn::Set(d32, static_cast<int32_t>(NF - 1))));
                const auto low = hn::RebindMask(df, hn::Lt(at, hn::Set(d32, static_cast<int32_t>(NF))));
                const auto x = hn::IfThenElse(low, hn::TableLookupLanes(w0, lane), hn::TableLookupLanes(w1, lane));
                add(i, hn::PromoteTo(da, hn::LowerHalf(hn::Half<decltype(df)>(), x)));
              }
            } else {
              const auto idx = hn::LowerHalf(hn::Half<decltype(d32)>(), wide);
              const auto last = hn::Set(di, static_cast<I>(span - 1));
              for (int64_t i = 0; i < longest; ++i)
                add(i, hn::PromoteTo(da, hn::GatherIndex(dt, base, hn::Min(hn::Add(idx, hn::Set(di, static_cast<I>(i))), last))));
            }
          } else {  // float64: 64-bit offsets
            const auto last = hn::Set(d64, span - 1);
            for (int64_t i = 0; i < longest; ++i)
              add(i, hn::GatherIndex(dt, base, hn::Min(hn::Add(offsets, hn::Set(d64, i)), last)));
          }
          alignas(64) A sums[N];
          hn::Store(hn::Add(leaf0, leaf1), da, sums);  // a lane of one leaf adds the identity
          if (long_runs)
            for (int64_t r = 0; r < N; ++r) {
              const int64_t count = prefix[k + r + 1] - prefix[k + r];
              if (count >= kPeriodicSlots) sums[r] = ShortRun1(row + prefix[k + r], count);
            }
          if (!(accumulate && empty)) {  // a count of 0 sums the identity: 0 once rounded
            FinishRow(sums, N, o + k * dst_stride, dst_stride, accumulate);
            continue;
          }
          for (int64_t r = 0; r < N; ++r)  // accumulating: a count of 0 leaves its output alone
            if (prefix[k + r + 1] != prefix[k + r]) FinishRow(sums + r, 1, o + (k + r) * dst_stride, 1, true);
        }
      }
    }
#endif
    for (; k < ke; ++k) {
      const int64_t count = prefix[k + 1] - prefix[k];
      T* d = o + k * dst_stride;
      if (count == 0) {
        if (!accumulate) StoreT(d, from_acc<E>(A{}));
        continue;
      }
      const A v = SegmentSum(row + prefix[k], count);
      StoreT(d, from_acc<E>(accumulate ? acc_add(to_acc<E>(LoadT(d)), v) : v));
    }
  }
  // Chunks of the rest of a range whose prefix sums are compact (Prefix::compact): its segments'
  // prefix sums from the one-byte counts, kTailChunk at a time, for RunsTail.
  static constexpr int64_t kTailChunk = 64;
  // Returns false, writing nothing, on a target without this code (the caller runs the segments
  // one by one: the same bits). `prefix`: the whole prefix sums, or null where they are compact
  // (the one-byte counts then give every count); `first`: segment kb's first element.
  static bool SegmentRuns(const ReduceProblem& q, const int64_t* prefix, const uint8_t* counts8, int64_t kb,
                          int64_t ke, int64_t first, int64_t row_elems, int64_t dst_stride, const uint8_t* src,
                          T* out, bool accumulate) {
    if constexpr (!kSlotsInVectors) {
      static_cast<void>(q), static_cast<void>(prefix), static_cast<void>(counts8), static_cast<void>(kb);
      static_cast<void>(ke), static_cast<void>(first), static_cast<void>(row_elems), static_cast<void>(dst_stride);
      static_cast<void>(src), static_cast<void>(out), static_cast<void>(accumulate);
      return false;
    } else {
      TESSERA_COUNT_REDUCE_KERNEL(ReduceKernel::segments_runs);
      const bool rows = q.naxes == 2;
      const int64_t nrows = rows ? q.axes[0].extent : 1;
      const int64_t row_src = rows ? q.axes[0].src_stride : 0, row_dst = rows ? q.axes[0].dst_stride : 0;
      for (int64_t b = 0; b < nrows; ++b) {
        const T* row = reinterpret_cast<const T*>(src + b * row_src);
        T* o = out + b * row_dst;
        int64_t k = kb, at = first;  // at: segment k's first element
#if HWY_TARGET != HWY_SCALAR
        if constexpr (kSegGroups) {
          if (q.seg_group_count > 0 && counts8 != nullptr && reinterpret_cast<uintptr_t>(row) % alignof(T) == 0)
            k = SegmentGroups(q.seg_group_count, row, counts8, kb, ke, &at, row_elems, o, accumulate, q.stream,
                              q.prefetch_items, q.seg_counts_ahead_bytes);
        }
#endif
        if (prefix != nullptr) {
          RunsTail(prefix + k, ke - k, row, row_elems, dst_stride, o + k * dst_stride, accumulate);
          continue;
        }
        int64_t local[kTailChunk + 1];
        while (k < ke) {
          const int64_t m = ke - k < kTailChunk ? ke - k : kTailChunk;
          local[0] = at;
          for (int64_t j = 0; j < m; ++j) local[j + 1] = local[j] + counts8[k + j];
          RunsTail(local, m, row, row_elems, dst_stride, o + k * dst_stride, accumulate);
          at = local[m];
          k += m;
        }
      }
      return true;
    }
  }
  // reduce.periodic.rows: the same for rows of w > 1 outputs (w = 3: N items at once where the
  // lanes allow), then one by one; each item's run prefetched p.prefetch_items ahead (0: none),
  // one by one spread among its loads where p.prefetch_spread, else before it.
  static void RowsW(const ReduceProblem& p, const uint8_t* src, T* out, int64_t begin, int64_t end, bool accumulate,
                    Scratch& s) {
    static_cast<void>(s);  // not used where these kernels are not compiled
    if constexpr (kSlotsInVectors) {
      const RAxis& a = p.axes[p.outer[0]];
      const int64_t ahead = p.prefetch_items;
      int64_t item = begin;
#if HWY_TARGET != HWY_SCALAR
      if constexpr (hn::MaxLanes(DA()) >= 2 && (E == Elem::f32 || E == Elem::f64) && !kFold3x8) {
        constexpr int64_t N = static_cast<int64_t>(hn::MaxLanes(DA()));
        const int64_t bytes = p.run * p.width * static_cast<int64_t>(sizeof(T));
        if (p.width == 3 && p.slots == 48) {  // N items at a time: 3 vectors of results
          for (; item + N <= end; item += N) {
            TESSERA_COUNT_VARIANT(periodic_run3_n);
            // The N items `ahead` on: spread among the loads where the plan says so, else at once.
            // (Bursts where the plan said spread: narrow_bwd's 4 x 480 bytes on AVX2 took 1.2x as
            // long on the Xeon of family 6 model 167, 2026-12-07.)
            const uint8_t* next = nullptr;
            if (ahead > 0 && item + ahead + N <= end) {
              if (p.prefetch_spread) {
                TESSERA_COUNT_VARIANT(periodic_prefetch_spread);
                next = src + (item + ahead) * a.src_stride;
              } else {
                TESSERA_COUNT_VARIANT(periodic_prefetch_at_once);
                PrefetchItems(src, a.src_stride, bytes, item + ahead, N, end);
              }
            }
            ShortRun3N(src + item * a.src_stride, a.src_stride, p.run, s.out, next);
            T* d = out + item * a.dst_stride;
            if (a.dst_stride == 3 && p.inner_dst_stride == 1) {  // the N items' outputs follow each other
              FinishRow(s.out, 3 * N, d, 1, accumulate);
            } else {
              for (int64_t r = 0; r < N; ++r)
                for (int64_t c = 0; c < 3; ++c) FinishRow(s.out + r * 3 + c, 1, d + r * a.dst_stride + c * p.inner_dst_stride, 1, accumulate);
            }
          }
        }
      }
#endif
      for (; item < end; ++item) {
        TESSERA_COUNT_VARIANT(periodic_rows_shortrun);
        const T* next = ahead > 0 && item + ahead < end ? reinterpret_cast<const T*>(src + (item + ahead) * a.src_stride) : nullptr;
        if (next != nullptr) {
          if (p.prefetch_spread) {
            TESSERA_COUNT_VARIANT(periodic_prefetch_spread);  // ShortRunAny prefetches it block by block
          } else {
            TESSERA_COUNT_VARIANT(periodic_prefetch_at_once);
            PrefetchItems(src, a.src_stride, p.run * p.width * static_cast<int64_t>(sizeof(T)), item + ahead, 1, end);
            next = nullptr;
          }
        }
        ShortRunAny(reinterpret_cast<const T*>(src + item * a.src_stride), p.run * p.width, p.slots, p.width, s.out, next);
        T* d = out + item * a.dst_stride;
        for (int64_t c = 0; c < p.width; ++c) {
          const A v = s.out[c];
          StoreT(d + c * p.inner_dst_stride, from_acc<E>(accumulate ? acc_add(to_acc<E>(LoadT(d + c * p.inner_dst_stride)), v) : v));
        }
      }
    }
  }
#endif

  // The kernels that run item by item: item `pos` of p by kernel k (KernelFor(p)). qoff: the
  // lanes.reg kernels' addend offsets. ahead: where periodic.reg16, or lanes.reg.leaf along the
  // rows, prefetches (the source of the item prefetch_items on, or for SegmentItems the source
  // seg_prefetch_bytes past this item's), or nullptr. next: the source of the item after this one
  // in the task (or nullptr: none), where an item of long rows prefetched along themselves
  // (prefetch_ahead_bytes) continues once the line ahead would lie past its rows' ends.
  static HWY_INLINE void Item(const ReduceProblem& p, ReduceKernel k, const ItemPos& pos, const uint8_t* src, T* out,
                              bool accumulate, Scratch& s, const int64_t* qoff, SkewCarry& carry,
                              const uint8_t* ahead = nullptr, const uint8_t* next = nullptr) {
    static_cast<void>(carry);  // the lanes.reg kernels' (not on scalable targets)
    switch (k) {
#if !HWY_HAVE_SCALABLE
      case ReduceKernel::lanes_reg_leaf:
      case ReduceKernel::lanes_reg_tree4:
      case ReduceKernel::lanes_reg_tree16: {
        // An item of long rows with no item ahead to prefetch (ReduceProblem::prefetch_ahead_bytes,
        // reduce.lanes.reg.leaf): each row's line that many bytes on, while it lies in the row.
        int64_t limit = INT64_MAX;
        const uint8_t* ahead_next = nullptr;
        if (ahead == nullptr && p.prefetch_ahead_bytes > 0 && k == ReduceKernel::lanes_reg_leaf) {
          constexpr int64_t kSize = static_cast<int64_t>(sizeof(T));
          limit = pos.n - (p.prefetch_ahead_bytes + kSize - 1) / kSize;
          if (limit > 0) {
            TESSERA_COUNT_VARIANT(lanes_reg_leaf_long_rows_ahead);
            ahead = src + pos.src + p.prefetch_ahead_bytes;
            // Past `limit`, the next item's rows from their starts: ahead_next + (at * kSize) is
            // row t's byte at * kSize - (n * kSize - distance) there.
            if (next != nullptr) {
              TESSERA_COUNT_VARIANT(lanes_reg_leaf_long_rows_next);
              ahead_next = reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(next) +
                                                            static_cast<uintptr_t>(p.prefetch_ahead_bytes) -
                                                            static_cast<uintptr_t>(pos.n * kSize));
            }
          }
        }
        RegItem(src + pos.src, qoff, p.nred, pos.n, out + pos.dst, accumulate, p.stream, p.rows_whole, s.tmp, ahead,
                limit, ahead_next, &carry);
        break;
      }
#endif
      case ReduceKernel::lanes_leaf:
      case ReduceKernel::lanes_leaf_dst_stride: {  // one leaf: summed and finished in registers
        Odometer odo(p, p.reduced, p.nreduced, 0);
        const T* ptr[kLeaf];
        for (int64_t q = 0; q < p.nred; ++q, odo.next()) ptr[q] = reinterpret_cast<const T*>(src + pos.src + odo.offset);
        if (k == ReduceKernel::lanes_leaf) {
          LeafRowsFinish(ptr, static_cast<int>(p.nred), pos.n, out + pos.dst, accumulate);
        } else {
          LeafRows(ptr, static_cast<int>(p.nred), pos.n, s.out);
          FinishRow(s.out, pos.n, out + pos.dst, p.inner_dst_stride, accumulate);
        }
        break;
      }
      case ReduceKernel::lanes_leaves:
      case ReduceKernel::strided:  // the strided kernel's rows are never streamed
        LanesLeaves(p, src + pos.src, pos.n, 0, p.nleaves, s, s.out);
        FinishRow(s.out, pos.n, out + pos.dst, p.inner_dst_stride, accumulate,
                  p.stream && k == ReduceKernel::lanes_leaves);
        break;
      case ReduceKernel::interleaved_pair_f32:
        if constexpr (E == Elem::f32) PairRowF32(src + pos.src, pos.n, out + pos.dst, p.stream, p.prefetch_ahead_bytes);
        break;
      case ReduceKernel::interleaved_row:
        InterleavedRow(src + pos.src, p.run, pos.n, s.out);
        FinishRow(s.out, pos.n, out + pos.dst, p.inner_dst_stride, accumulate, p.stream);
        break;
#if !HWY_HAVE_SCALABLE
      case ReduceKernel::periodic_shortrun:
      case ReduceKernel::periodic_reg16:
        if constexpr (kSlotsInVectors) {
          if (k == ReduceKernel::periodic_shortrun) {
            ShortRunAny(reinterpret_cast<const T*>(src + pos.src), p.run * p.width, p.slots, p.width, s.out);
          } else {
            RegPeriodic16(reinterpret_cast<const T*>(src + pos.src), p.run * p.width, s.out,
                          reinterpret_cast<const T*>(ahead), p.prefetch_spread);
            FoldSlots(s.out, p.slots, p.width);
          }
          FinishRow(s.out, p.width, out + pos.dst, p.inner_dst_stride, accumulate);
        }
        break;
#endif
      case ReduceKernel::periodic_leaves:
        PeriodicLeaves(p, src + pos.src, 0, p.nleaves, s, s.out);
        FoldSlots(s.out, p.slots, p.width);
        FinishRow(s.out, p.width, out + pos.dst, p.inner_dst_stride, accumulate);
        break;
      default:
        break;
    }
  }

  // Items [begin, end) of p by its kernel (KernelFor).
  static void Items(const ReduceProblem& p, const uint8_t* src, uint8_t* dst, int64_t begin, int64_t end,
                    bool accumulate, bool fence) {
    const ReduceKernel k = KernelFor(p);
    TESSERA_COUNT_REDUCE_KERNEL(k);
    Scratch s(p);
    T* out = reinterpret_cast<T*>(dst);
#if !HWY_HAVE_SCALABLE
    if (k == ReduceKernel::periodic_rows_w1) return RowsW1(p, src, out, begin, end, accumulate, s);
    if (k == ReduceKernel::periodic_rows) return RowsW(p, src, out, begin, end, accumulate, s);
#endif
    // The addends' offsets, the same for every item: the lanes.reg kernels' and the prefetch's.
    int64_t qoff[kRegLeaves * kLeaf];
    // The planner's, for the kernels whose row of kReduceKernels says they prefetch: short rows of
    // the lanes path (0 or with nred <= kRegLeaves * kLeaf), each item's rows prefetched whole;
    // long runs of periodic.reg16, prefetched block by block by the kernel (periodic.rows.w1's:
    // RowsW1). A plan run by its kernel's general kernel (a target without the kernel's code)
    // runs unprefetched where that kernel's row says so.
    // rows_whole items of reduce.lanes.reg.leaf and reduce.lanes.reg.tree4 where the planner says
    // so (prefetch_along_rows): item + ahead's rows line by line as the kernel reads the same lines
    // of item.
    const bool reg16 = k == ReduceKernel::periodic_reg16;
    const bool along =
        p.prefetch_along_rows && (k == ReduceKernel::lanes_reg_leaf || k == ReduceKernel::lanes_reg_tree4);
    const int64_t ahead = kReduceKernels[static_cast<int>(k)].prefetches ? p.prefetch_items : 0;
    if ((ahead > 0 && !reg16) || k == ReduceKernel::lanes_reg_leaf || k == ReduceKernel::lanes_reg_tree4 ||
        k == ReduceKernel::lanes_reg_tree16) {
      Odometer odo(p, p.reduced, p.nreduced, 0);
      for (int64_t q = 0; q < p.nred; ++q, odo.next()) qoff[q] = odo.offset;
    }
    ItemCursor cursor(p, begin);
    int64_t item = begin;
    SkewCarry carry;  // a line between consecutive items (StreamSkewed)
    if (ahead > 0 && end - begin > ahead) {
      // Each item's rows fetched `ahead` items before it is summed (PrefetchRows), the last
      // `ahead` items without; for reg16, item + ahead's run block by block while item is summed
      // (the first `ahead` items are not prefetched); along the rows, the first `ahead` items'
      // rows at once, then item + ahead's as item's are read.
      ItemCursor next(p, begin);
      for (int64_t i = 0; i < ahead; ++i, next.Next())
        if (!reg16) PrefetchRows(src + next.pos.src, qoff, p.nred, next.pos.n);
      for (; item + ahead < end; ++item, cursor.Next(), next.Next()) {
        if (!reg16 && !along) PrefetchRows(src + next.pos.src, qoff, p.nred, next.pos.n);
        Item(p, k, cursor.pos, src, out, accumulate, s, qoff, carry, reg16 || along ? src + next.pos.src : nullptr);
      }
    }
    if (ahead == 0 && p.prefetch_ahead_bytes > 0 && k == ReduceKernel::lanes_reg_leaf && end - item > 1) {
      // Long rows prefetched along themselves and on into the next item's (Item), but the last
      // item's: nothing past the task's items is prefetched.
      ItemCursor next(p, item + 1);
      for (; item + 1 < end; ++item, cursor.Next(), next.Next())
        Item(p, k, cursor.pos, src, out, accumulate, s, qoff, carry, nullptr, src + next.pos.src);
    }
    for (; item < end; ++item, cursor.Next()) Item(p, k, cursor.pos, src, out, accumulate, s, qoff, carry);
    carry.Flush();
    if (p.stream && fence) hwy::FlushStream();  // the streamed output is visible before the task returns
  }

  // Zeros to `bytes` bytes at d: streamed (whole vectors of 16 bytes or more, aligned) where
  // `stream`, else ordinary. No memset of an empty head or tail: glibc's AVX-512 memset of 0
  // bytes still stores (masked, empty) at d, here the line after a segment's streamed zeros. With
  // one there, rep_ragged_bwd's segments of 0-4 rows took 1.2x as long and random counts of 0
  // and 1 1.8-2.25x a plain loop's time (AMD family 25); that plain loop with one before and one
  // after each segment's zeros, 6x its own.
  static HWY_INLINE void ZeroBytes(uint8_t* d, std::size_t bytes, bool stream) {
    const hn::ScalableTag<uint8_t> d8;
    const std::size_t N = hn::Lanes(d8);
    if (stream && N >= 16) {
      std::size_t head = (N - reinterpret_cast<uintptr_t>(d) % N) % N;
      if (head > bytes) head = bytes;
      if (head > 0) std::memset(d, 0, head);
      d += head;
      bytes -= head;
      for (; bytes >= N; d += N, bytes -= N) hn::Stream(hn::Zero(d8), d8, d);
    }
    if (bytes > 0) std::memset(d, 0, bytes);
  }
  // The output of a segment of count 0 at dst (its first output element): every item of `one`,
  // the sub-problem of count 1 (which has the segment's outputs), zeroed; streamed where the
  // plan streams and an item's outputs are consecutive (float32 off the vectors' boundaries: by
  // StreamSkewed, its lines carried between the segments by `carry`, as the sums' are).
  static void ZeroSegment(const ReduceProblem& one, uint8_t* dst, SkewCarry& carry) {
    ItemCursor cursor(one, 0);
    for (int64_t item = 0; item < one.nitems; ++item, cursor.Next()) {
      uint8_t* d = dst + cursor.pos.dst * static_cast<int64_t>(sizeof(T));
      if (one.inner_dst_stride == 1) {
        int64_t j = 0;
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
        if constexpr (E == Elem::f32) {
          const hn::Twice<hn::Rebind<float, DA>> df;
          if (const int64_t o = one.stream ? SkewOf(d) : 0; o != 0)
            j = StreamSkewed(reinterpret_cast<float*>(d), 0, cursor.pos.n, o,
                             [&](int64_t) HWY_ATTR { return hn::Zero(df); }, &carry);
        }
#endif
        static_cast<void>(carry);
        ZeroBytes(d + j * static_cast<int64_t>(sizeof(T)), static_cast<std::size_t>(cursor.pos.n - j) * sizeof(T),
                  one.stream);
      } else {
        const int64_t step = one.inner_dst_stride * static_cast<int64_t>(sizeof(T));
        for (int64_t j = 0; j < cursor.pos.n; ++j) std::memset(d + j * step, 0, sizeof(T));
      }
    }
  }
  // SegmentItems' state for the sub-problem of count c + 1: set up at its first segment of a call.
  struct SegmentSub {
    bool ready = false;
    ReduceKernel kernel = ReduceKernel::none;
    ItemPos pos;
    Scratch scratch;  // its pointers into the thread's arena, grown to every sub-problem's
    int64_t qoff[kRegLeaves * kLeaf];
  };
  // The calling thread's SegmentSub of each planned count (~17 KiB: not on the stack of a caller's
  // thread, which may be small), looked up once a call (this_thread) and allocated at its first:
  // held in thread-local storage, these arrays (one per target and element type) made the
  // library's thread-local block 706 KiB (16 KiB since; readelf, all targets), allocated and
  // zeroed for every thread that touched any of tessera's thread-local state.
  using SegmentSubs = std::unique_ptr<SegmentSub[]>;
  // Segments [kb, ke) of a segments plan run segment by segment (kernel segments): segment k, of
  // count c in 1 ... nsubs, by its planned sub-problem subs[c - 1] from source element *first_io
  // (times seg_stride bytes) into dst + k * dst_step bytes, as Items runs it, and *first_io moved
  // past it; of count 0, its outputs zeroed (ZeroSegment; left alone under `accumulate`). Each
  // sub-problem's kernel, addend offsets and position are found once per call, not once per
  // segment: rep_ragged_bwd's segments of 0-4 rows of 1 KiB spent a fifth of their time there.
  // Sub-problems of more than one item run through Items. Returns the first segment not summed:
  // one whose count is above nsubs (the caller's), or ke. Never fences (the caller does, once).
  // prefetch_bytes > 0 (the planner's seg_prefetch_bytes: every sub-problem one item of
  // reduce.lanes.reg.leaf, the segments' rows back to back): each line prefetched as the line that
  // many bytes before it is read (RegTreeItem's `ahead`), where the segment's rows so shifted end
  // within the src_bytes of the gradient.
  static int64_t SegmentItems(const ReduceProblem* subs, int64_t nsubs, const int64_t* prefix, const uint8_t* c8,
                              int64_t kb, int64_t ke, int64_t* first_io, int64_t seg_stride, int64_t dst_step,
                              const uint8_t* src, uint8_t* dst, bool accumulate, int64_t prefetch_bytes,
                              int64_t src_bytes) {
    // Set afresh by each call, which calls nothing that comes back here.
    SegmentSubs& subs_state = this_thread<SegmentSubs>();
    if (!subs_state) subs_state = std::make_unique<SegmentSub[]>(kSegPlannedCounts);
    SegmentSub* const state = subs_state.get();
    for (int64_t c = 0; c < kSegPlannedCounts; ++c) state[c].ready = false;
    if (nsubs > kSegPlannedCounts) nsubs = kSegPlannedCounts;
    int64_t scratch_bytes = 0;  // the largest: the thread's arena grown once, before any Scratch
    for (int64_t c = 0; c < nsubs; ++c) scratch_bytes = std::max(scratch_bytes, subs[c].scratch_bytes);
    thread_scratch(static_cast<std::size_t>(scratch_bytes));
    int64_t first = *first_io;
    int64_t k = kb;
    SkewCarry carry;  // a line between consecutive segments (StreamSkewed)
    for (; k < ke; ++k) {
      const int64_t c = prefix != nullptr ? prefix[k + 1] - prefix[k] : int64_t{c8[k]};
      if (c == 0) {
        if (!accumulate) ZeroSegment(subs[0], dst + k * dst_step, carry);
        continue;
      }
      if (c > nsubs) break;
      const ReduceProblem& p = subs[c - 1];
      const uint8_t* from = src + first * seg_stride;
      uint8_t* to = dst + k * dst_step;
      first += c;
      if (p.nitems != 1) {
        Items(p, from, to, 0, p.nitems, accumulate, false);
        continue;
      }
      SegmentSub& sub = state[c - 1];
      if (!sub.ready) {
        sub.scratch = Scratch(p);
        sub.kernel = KernelFor(p);
        sub.pos = ItemCursor(p, 0).pos;
        if (sub.kernel == ReduceKernel::lanes_reg_leaf || sub.kernel == ReduceKernel::lanes_reg_tree4 ||
            sub.kernel == ReduceKernel::lanes_reg_tree16) {
          Odometer odo(p, p.reduced, p.nreduced, 0);
          for (int64_t q = 0; q < p.nred; ++q, odo.next()) sub.qoff[q] = odo.offset;
        }
        sub.ready = true;
      }
      TESSERA_COUNT_REDUCE_KERNEL(sub.kernel);
      // (first: past the segment; the planner's distance is at most kPrefetchMaxBytes)
      const bool ahead = prefetch_bytes > 0 && sub.kernel == ReduceKernel::lanes_reg_leaf &&
                         prefetch_bytes <= src_bytes - first * seg_stride;
      if (ahead) TESSERA_COUNT_VARIANT(segment_items_ahead);
      Item(p, sub.kernel, sub.pos, from, reinterpret_cast<T*>(to), accumulate, sub.scratch, sub.qoff, carry,
           ahead ? from + sub.pos.src + prefetch_bytes : nullptr);
    }
    carry.Flush();
    *first_io = first;
    return k;
  }

  // Leaves [lo, hi) of one item into acc: the general kernel of the problem's path (the lanes
  // order's or the periodic order's rows in memory).
  static void Partial(const ReduceProblem& p, const uint8_t* src, int64_t item, int64_t lo, int64_t hi,
                      uint8_t* acc) {
    Scratch s(p);
    const ItemPos pos = ItemCursor(p, item).pos;
    A* out = reinterpret_cast<A*>(acc);
    if (p.path == ReducePath::periodic) {
      TESSERA_COUNT_REDUCE_KERNEL(ReduceKernel::periodic_leaves);
      TESSERA_COUNT_VARIANT(split_periodic_leaves);
      PeriodicLeaves(p, src + pos.src, lo, hi, s, out);
    } else {
      TESSERA_COUNT_REDUCE_KERNEL(p.path == ReducePath::strided ? ReduceKernel::strided : ReduceKernel::lanes_leaves);
      TESSERA_COUNT_VARIANT(split_lanes_leaves);
      LanesLeaves(p, src + pos.src, pos.n, lo, hi, s, out);
    }
  }

  static void Finish(const ReduceProblem& p, int64_t item, uint8_t* acc, uint8_t* dst, bool accumulate) {
    const ItemPos pos = ItemCursor(p, item).pos;
    A* a = reinterpret_cast<A*>(acc);
    TESSERA_COUNT_VARIANT(split_finish);
    if (p.path == ReducePath::periodic) FoldSlots(a, p.slots, p.width);
    FinishRow(a, pos.n, reinterpret_cast<T*>(dst) + pos.dst, p.inner_dst_stride, accumulate);
  }

  // Item `item`'s sum of its nchunks chunk rows (chunk c, in leaf order, at rows + c * row_bytes)
  // combined by the binary counter as the leaves they are subtrees of, then finished into dst.
  static void Combine(const ReduceProblem& p, int64_t item, const uint8_t* rows, std::size_t row_bytes,
                      int64_t nchunks, uint8_t* dst, bool accumulate) {
    const int64_t n = p.item_row(item);
    int levels = 1;  // bit_width(nchunks) rows and the sum's
    for (uint64_t l = static_cast<uint64_t>(nchunks); l; l >>= 1) ++levels;
    A* scratch = reinterpret_cast<A*>(thread_scratch(static_cast<std::size_t>(levels * n) * sizeof(A)));
    RowCounter counter(scratch, n);
    for (int64_t c = 0; c < nchunks; ++c)
      counter.Push(reinterpret_cast<const A*>(rows + static_cast<std::size_t>(c) * row_bytes));
    A* sum = scratch + (levels - 1) * n;
    counter.Result(sum);
    Finish(p, item, reinterpret_cast<uint8_t*>(sum), dst, accumulate);
  }

  // The kernels this element type's code on this target is chosen for (the executor's none,
  // zeros and segments are no kernel calls): the bits of reduce_kernels().
  static uint64_t PlannedKernels() {
    uint64_t m = 0;
    for (int k = 0; k < kReduceKernelCount; ++k) {
      const auto kernel = static_cast<ReduceKernel>(k);
      if (kernel == ReduceKernel::none || kernel == ReduceKernel::zeros || kernel == ReduceKernel::segments) continue;
      if (kernel == ReduceKernel::interleaved_pair_f32 && E != Elem::f32) continue;
      if (reduce_kernel_planned(kernel, kFixedWidth, kAccLanes)) m |= uint64_t{1} << k;
    }
    return m;
  }

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
  // The variants (kernels/path_counters.hpp) this element type's code on this target can take:
  // the compile-time conditions of the branches above, written again (tests/test_targets.cpp
  // asserts that each one ran, so a condition written wrongly here fails there).
  static uint64_t CompiledVariants() {
    const auto bit = [](Variant v) { return uint64_t{1} << static_cast<int>(v); };
    uint64_t m = bit(Variant::leaves_rows) | bit(Variant::leaves_rows_strided) | bit(Variant::split_lanes_leaves) |
                 bit(Variant::split_periodic_leaves) | bit(Variant::split_finish);
    // reduce.lanes.leaves' long rows along themselves, where the planner plans it (the policy).
    if (reduce_prefetch_long_rows_bytes() > 0) m |= bit(Variant::leaves_rows_ahead) | bit(Variant::leaves_rows_next);
    // The float32 pairs' prefetch along their items, where the planner plans it (the policy).
    if constexpr (E == Elem::f32)
      if (reduce_prefetch_rows_along() && reduce_prefetch_along_bytes() > 0) m |= bit(Variant::pair_f32_ahead);
#if !HWY_HAVE_SCALABLE
    m |= bit(Variant::lanes_reg_leaf_rows) | bit(Variant::lanes_reg_leaf_rows_scratch) | bit(Variant::lanes_reg_tree_n_rows);
    // Taken only where the planner prefetches along the rows (this process's prefetch policy).
    if (reduce_prefetch_rows_along() && reduce_prefetch_bytes() > 0) m |= bit(Variant::lanes_reg_leaf_rows_along);
    // ... reg.tree4's short items too where short rows are prefetched (reduce_prefetch_short_rows()).
    if (reduce_prefetch_rows_along() && reduce_prefetch_short_rows() && reduce_prefetch_bytes() > 0)
      m |= bit(Variant::lanes_reg_tree_n_rows_along);
    // ... and along long rows (reduce_prefetch_long_rows_bytes()).
    if (reduce_prefetch_long_rows_bytes() > 0)
      m |= bit(Variant::lanes_reg_leaf_long_rows_ahead) | bit(Variant::lanes_reg_leaf_long_rows_next);
    // ... and the segments' prefetch along the gradient (lay_out_segments: reduce.lanes.reg.leaf's
    // sub-problems, which every fixed-width target has).
    if (reduce_prefetch_rows_along() && reduce_prefetch_along_bytes() > 0) m |= bit(Variant::segment_items_ahead);
    if constexpr (hn::MaxLanes(DA()) <= kPeriodicSlots) {
      m |= bit(Variant::periodic_run1) | bit(Variant::periodic_rows_shortrun) | bit(Variant::shortrun_16) |
           bit(Variant::shortrun_48) | bit(Variant::shortrun_80);
      // The one-by-one items' prefetch, spread or at once (this process's prefetch policy).
      if (reduce_prefetch_bytes() > 0)
        m |= bit(reduce_prefetch_runs_spread() ? Variant::periodic_prefetch_spread : Variant::periodic_prefetch_at_once);
#if HWY_TARGET != HWY_SCALAR
      constexpr int64_t N = static_cast<int64_t>(hn::MaxLanes(DA()));
      if constexpr (N >= 2 && sizeof(A) >= 4) m |= bit(Variant::periodic_run1_n);
      if constexpr (E == Elem::f32 || E == Elem::f64) m |= bit(Variant::segment_runs_n);
      if constexpr (kSegGroups) m |= bit(Variant::segment_groups);
      if constexpr (N >= 2 && (E == Elem::f32 || E == Elem::f64) && !kFold3x8) m |= bit(Variant::periodic_run3_n);
      if constexpr (kFold3x8) m |= bit(Variant::shortrun_3x8);
#endif
    }
#endif
    return m;
  }
#endif
};

}  // namespace

void ReduceItems(const ReduceProblem& p, const uint8_t* src, uint8_t* dst, int64_t begin, int64_t end,
                 bool accumulate, bool fence) {
  TESSERA_VARIANT_SCOPE();
  with_elem(p.elem, [&](auto e) { Kernels<decltype(e)::value>::Items(p, src, dst, begin, end, accumulate, fence); });
}

bool ReduceSegmentRuns(const ReduceProblem& q, const int64_t* prefix, const uint8_t* counts8, int64_t kb, int64_t ke,
                       int64_t first, int64_t row_elems, int64_t dst_stride, const uint8_t* src, uint8_t* dst,
                       bool accumulate) {
#if HWY_HAVE_SCALABLE
  static_cast<void>(q), static_cast<void>(prefix), static_cast<void>(counts8), static_cast<void>(kb);
  static_cast<void>(ke), static_cast<void>(first);
  static_cast<void>(row_elems), static_cast<void>(dst_stride), static_cast<void>(src), static_cast<void>(dst);
  static_cast<void>(accumulate);
  return false;
#else
  TESSERA_VARIANT_SCOPE();
  bool ran = false;
  with_elem(q.elem, [&](auto e) {
    using K = Kernels<decltype(e)::value>;
    ran = K::SegmentRuns(q, prefix, counts8, kb, ke, first, row_elems, dst_stride, src,
                         reinterpret_cast<typename K::T*>(dst), accumulate);
  });
  return ran;
#endif
}

int64_t ReduceSegmentItems(const ReduceProblem* subs, int64_t nsubs, const int64_t* prefix, const uint8_t* counts8,
                           int64_t kb, int64_t ke, int64_t* first, int64_t seg_stride, int64_t dst_step,
                           const uint8_t* src, uint8_t* dst, bool accumulate, int64_t prefetch_bytes,
                           int64_t src_bytes) {
  TESSERA_VARIANT_SCOPE();
  int64_t next = kb;
  with_elem(subs[0].elem, [&](auto e) {
    next = Kernels<decltype(e)::value>::SegmentItems(subs, nsubs, prefix, counts8, kb, ke, first, seg_stride,
                                                      dst_step, src, dst, accumulate, prefetch_bytes, src_bytes);
  });
  return next;
}

void ReducePartial(const ReduceProblem& p, const uint8_t* src, int64_t item, int64_t lo, int64_t hi,
                   uint8_t* acc) {
  TESSERA_VARIANT_SCOPE();
  with_elem(p.elem, [&](auto e) { Kernels<decltype(e)::value>::Partial(p, src, item, lo, hi, acc); });
}

void ReduceCombine(const ReduceProblem& p, int64_t item, const uint8_t* rows, std::size_t row_bytes, int64_t nchunks,
                   uint8_t* dst, bool accumulate) {
  TESSERA_VARIANT_SCOPE();
  with_elem(p.elem, [&](auto e) {
    Kernels<decltype(e)::value>::Combine(p, item, rows, row_bytes, nchunks, dst, accumulate);
  });
}

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
// The variants this target's code has, over every element type (reduce_variants()).
uint64_t ReduceVariants() {
  uint64_t m = 0;
  for (int e = 0; e < kElemCount; ++e)
    with_elem(static_cast<Elem>(e), [&](auto el) { m |= Kernels<decltype(el)::value>::CompiledVariants(); });
  return m;
}
// The kernels this target is chosen for, over every element type (reduce_kernels()).
uint64_t ReduceKernels() {
  uint64_t m = 0;
  for (int e = 0; e < kElemCount; ++e)
    with_elem(static_cast<Elem>(e), [&](auto el) { m |= Kernels<decltype(el)::value>::PlannedKernels(); });
  return m;
}
#endif

// What this target's reduction code has (reduce_caps()).
ReduceCaps TargetReduceCaps() {
  ReduceCaps caps;
  caps.fixed_width = !HWY_HAVE_SCALABLE;
  for (int e = 0; e < kElemCount; ++e)
    with_elem(static_cast<Elem>(e), [&](auto el) { caps.acc_lanes[e] = Kernels<decltype(el)::value>::kAccLanes; });
  return caps;
}


}  // namespace tessera::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::detail {
namespace {
HWY_EXPORT(ReduceItems);
HWY_EXPORT(ReducePartial);
HWY_EXPORT(ReduceSegmentRuns);
HWY_EXPORT(ReduceSegmentItems);
HWY_EXPORT(ReduceCombine);
HWY_EXPORT(TargetReduceCaps);
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
HWY_EXPORT(ReduceVariants);
HWY_EXPORT(ReduceKernels);
#endif
}  // namespace

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
uint64_t reduce_variants() noexcept { return HWY_DYNAMIC_DISPATCH(ReduceVariants)(); }
uint64_t reduce_kernels() noexcept { return HWY_DYNAMIC_DISPATCH(ReduceKernels)(); }
#endif

ReduceCaps reduce_caps() { return HWY_DYNAMIC_DISPATCH(TargetReduceCaps)(); }

void reduce_items(const ReduceProblem& p, const unsigned char* src, unsigned char* dst, int64_t begin, int64_t end,
                  bool accumulate, bool fence) {
  HWY_DYNAMIC_DISPATCH(ReduceItems)(p, src, dst, begin, end, accumulate, fence);
}
void reduce_fence() { hwy::FlushStream(); }
bool reduce_segment_runs(const ReduceProblem& run, const int64_t* prefix, const uint8_t* counts8, int64_t k_begin,
                         int64_t k_end, int64_t first, int64_t row_elems, int64_t dst_stride, const unsigned char* src,
                         unsigned char* dst, bool accumulate) {
  return HWY_DYNAMIC_DISPATCH(ReduceSegmentRuns)(run, prefix, counts8, k_begin, k_end, first, row_elems, dst_stride,
                                                 src, dst, accumulate);
}
int64_t reduce_segment_items(const ReduceProblem* subs, int64_t nsubs, const int64_t* prefix, const uint8_t* counts8,
                             int64_t k_begin, int64_t k_end, int64_t* first, int64_t seg_stride, int64_t dst_step,
                             const unsigned char* src, unsigned char* dst, bool accumulate, int64_t prefetch_bytes,
                             int64_t src_bytes) {
  return HWY_DYNAMIC_DISPATCH(ReduceSegmentItems)(subs, nsubs, prefix, counts8, k_begin, k_end, first, seg_stride,
                                                  dst_step, src, dst, accumulate, prefetch_bytes, src_bytes);
}
void reduce_partial(const ReduceProblem& p, const unsigned char* src, int64_t item, int64_t leaf_begin,
                    int64_t leaf_end, unsigned char* acc) {
  HWY_DYNAMIC_DISPATCH(ReducePartial)(p, src, item, leaf_begin, leaf_end, acc);
}
void reduce_combine(const ReduceProblem& p, int64_t item, const unsigned char* rows, std::size_t row_bytes,
                    int64_t nchunks, unsigned char* dst, bool accumulate) {
  HWY_DYNAMIC_DISPATCH(ReduceCombine)(p, item, rows, row_bytes, nchunks, dst, accumulate);
}
}  // namespace tessera::detail
#endif  // HWY_ONCE
