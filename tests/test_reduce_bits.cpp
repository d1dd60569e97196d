// The reductions' accumulators, orders and bits (reduce.hpp, docs/gradients.md):
//
//  - accumulation width: float16 and bfloat16 accumulate in float32, float32 and complex64 in
//    float64. The data here are sums that round in the narrow type (many addends of mixed
//    magnitudes) but are exact in the wide one, in any order: so the result must be the exact sum
//    rounded once, bit for bit, on every path, SIMD target, thread count and with accumulate
//    (with -Dpath_counters, every reduction sub-kernel in a target's code must have run there);
//    a narrow accumulator fails (the data are checked to tell one: a narrow running sum differs);
//  - the periodic order against a model of its documented order, float64 with full mantissas and
//    float32 whose float64 sums round, every SIMD target, 1 and 4 threads;
//  - a sum of one output split over threads: two threads or more read the gradient of one
//    output's sum (their page faults are recorded), with the serial bits;
//  - golden bits: the hashes of fixed cases' results committed in tests/golden/reduce_bits.inc
//    (on data whose results are not all zero and tell the order and the accumulator's width:
//    checked there), checked on every target here, and so on aarch64 (NEON, SVE, SVE2 under
//    qemu: tests/cross/run runs the whole suite under NEON and this file's test cases, which say
//    "target", under SVE2 at 2048 bits): the same bits across architectures, not
//    only within a process.
#include <doctest/doctest.h>
#include <hwy/highway.h>
#include <hwy/targets.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tessera/tessera.hpp>

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "reduce_data.hpp"
#include "touch_recorder.hpp"
#include "util.hpp"

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
#include "kernels/path_counters.hpp"
#endif

namespace {

using tessera::DType;
using test::Rng;
using test::cancelling_floats;
using test::cancelling_narrow;
using test::full_mantissa;
using test::lanes_order_sum;
using test::reduce_path_of;
using test::TargetGuard;
using Shape = std::vector<int64_t>;

// ---- Number formats, test-side --------------------------------------------------------------

// A binary floating-point format: stored mantissa bits, the normal exponent range, total bits.
struct Format {
  int mant, emin, emax, bits;
};
constexpr Format kHalf{10, -14, 15, 16};
constexpr Format kBrain{7, -126, 127, 16};

// The bits of v rounded once to nearest even in format f (overflow to infinity).
uint64_t round_to(double v, const Format& f) {
  const uint64_t sign = std::signbit(v) ? 1 : 0;
  const double a = std::fabs(v);
  const int ebits = f.bits - 1 - f.mant, bias = (1 << (ebits - 1)) - 1;
  uint64_t e_field = 0, m_field = 0;
  if (std::isinf(a)) {
    e_field = (uint64_t{1} << ebits) - 1;
  } else if (a != 0) {
    int e = std::max(std::ilogb(a), f.emin);                 // a subnormal's quantum: 2^(emin - mant)
    double q = std::nearbyint(std::ldexp(a, f.mant - e));    // exact scaling; ties to even
    if (q >= std::ldexp(1.0, f.mant + 1)) q /= 2, ++e;       // rounded up to the next binade
    if (e > f.emax) e_field = (uint64_t{1} << ebits) - 1;    // infinity
    else if (q < std::ldexp(1.0, f.mant)) m_field = static_cast<uint64_t>(q);  // subnormal
    else e_field = static_cast<uint64_t>(e + bias), m_field = static_cast<uint64_t>(q) - (uint64_t{1} << f.mant);
  }
  return sign << (f.bits - 1) | e_field << f.mant | m_field;
}
// The value of format f's bits b (round_to's inverse), as a double.
double decode(uint64_t b, const Format& f) {
  const int ebits = f.bits - 1 - f.mant, bias = (1 << (ebits - 1)) - 1;
  const uint64_t e = (b >> f.mant) & ((uint64_t{1} << ebits) - 1), m = b & ((uint64_t{1} << f.mant) - 1);
  double v = e == 0 ? std::ldexp(static_cast<double>(m), f.emin - f.mant)
                    : std::ldexp(static_cast<double>(m + (uint64_t{1} << f.mant)), static_cast<int>(e) - bias - f.mant);
  if (e == (uint64_t{1} << ebits) - 1) v = m ? NAN : INFINITY;
  return (b >> (f.bits - 1)) & 1 ? -v : v;
}

// complex64 or complex128: two real parts per element.
bool is_complex(DType d) { return d == DType::complex64 || d == DType::complex128; }
// Bytes of one real part.
std::size_t part_size(DType d) { return is_complex(d) ? tessera::itemsize_of(d) / 2 : tessera::itemsize_of(d); }

// One real value v (exact in the dtype's real type, or rounded once) stored at p.
void put(DType d, unsigned char* p, double v) {
  switch (d) {
    case DType::float16: { const auto h = static_cast<uint16_t>(round_to(v, kHalf)); std::memcpy(p, &h, 2); break; }
    case DType::bfloat16: { const auto h = static_cast<uint16_t>(round_to(v, kBrain)); std::memcpy(p, &h, 2); break; }
    case DType::float32: case DType::complex64: { const float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
    default: std::memcpy(p, &v, 8);
  }
}
double get(DType d, const unsigned char* p) {
  uint16_t h;
  switch (d) {
    case DType::float16: std::memcpy(&h, p, 2); return decode(h, kHalf);
    case DType::bfloat16: std::memcpy(&h, p, 2); return decode(h, kBrain);
    case DType::float32: case DType::complex64: { float x; std::memcpy(&x, p, 4); return x; }
    default: { double x; std::memcpy(&x, p, 8); return x; }
  }
}
// v rounded once to the dtype's real type, as a double.
double narrow(DType d, double v) {
  unsigned char b[8];
  put(d, b, v);
  return get(d, b);
}

// FNV-1a 64 of the bytes: the golden bits' hash.
uint64_t fnv1a(const std::vector<unsigned char>& bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// The least k with 2^k >= n.
int ceil_log2(int64_t n) {
  int k = 0;
  while ((int64_t{1} << k) < n) ++k;
  return k;
}

// ---- Reduction cases and their map from gradient elements to outputs ------------------------

struct Case {
  const char* name;
  int op;                       // 0 tile_backward(in, reps), 1 sum_to_shape(target = in), 2 repeat_backward
  Shape grad;                   // the gradient's shape
  Shape in;                     // the result's shape
  Shape reps;                   // tile_backward's reps; repeat_backward's counts (one: a scalar)
  int axis = 0;                 // repeat_backward's axis, -1 for none
  Shape strides = {};           // the gradient's element strides (empty: C-contiguous)
  const char* path = "";        // the plan's path (its kernel_path() up to the kernel's name)
};

// The number of elements of shape s.
int64_t count_of(const Shape& s) {
  int64_t c = 1;
  for (const int64_t e : s) c *= e;
  return c;
}

struct Layout {
  std::vector<int64_t> out;     // per gradient element (C order): the output element it adds into
  std::vector<int64_t> offset;  // per gradient element: its element offset in the buffer
  int64_t buffer = 0;           // elements the buffer holds
  int64_t nout = 0;
  int64_t most = 0;             // the most addends of one output
};

// Case c's map from gradient elements to outputs, from the operations' definitions (numpy's
// tile, sum to a broadcast shape, repeat): independent of the planner.
Layout layout_of(const Case& c) {
  Layout l;
  const int n = static_cast<int>(c.grad.size());
  Shape strides = c.strides;
  if (strides.empty()) {
    strides.assign(c.grad.size(), 1);
    for (int i = n - 2; i >= 0; --i) strides[i] = strides[i + 1] * c.grad[i + 1];
  }
  l.nout = count_of(c.in);
  std::vector<int64_t> prefix(1, 0);
  if (c.op == 2) {
    const int64_t extent = c.axis < 0 ? count_of(c.in) : c.in[static_cast<std::size_t>(c.axis)];
    for (int64_t i = 0; i < extent; ++i) prefix.push_back(prefix.back() + c.reps[c.reps.size() == 1 ? 0 : static_cast<std::size_t>(i)]);
  }
  const auto src_of = [&](int64_t t) {
    return static_cast<int64_t>(std::upper_bound(prefix.begin(), prefix.end(), t) - prefix.begin()) - 1;
  };
  const int64_t count = count_of(c.grad);
  Shape idx(c.grad.size(), 0);
  std::vector<int64_t> per(static_cast<std::size_t>(l.nout), 0);
  for (int64_t e = 0; e < count; ++e) {
    Shape o;
    const int k = static_cast<int>(c.in.size());
    if (c.op == 0) {
      for (int i = 0; i < k; ++i) o.push_back(idx[i + n - k] % c.in[i]);
    } else if (c.op == 1) {
      for (int j = 0; j < k; ++j) o.push_back(c.in[j] == 1 ? 0 : idx[j + n - k]);
    } else if (c.axis < 0) {
      o.push_back(src_of(idx[0]));
    } else {
      o = idx;
      o[static_cast<std::size_t>(c.axis)] = src_of(idx[static_cast<std::size_t>(c.axis)]);
    }
    int64_t f = 0, off = 0;
    const Shape& oshape = c.op == 2 && c.axis < 0 ? Shape{count_of(c.in)} : c.in;
    for (std::size_t i = 0; i < o.size(); ++i) f = f * oshape[i] + o[i];
    for (int i = 0; i < n; ++i) off += idx[i] * strides[i];
    l.out.push_back(f);
    l.offset.push_back(off);
    l.buffer = std::max(l.buffer, off + 1);
    l.most = std::max(l.most, ++per[static_cast<std::size_t>(f)]);
    for (int i = n - 1; i >= 0; --i) {
      if (++idx[i] < c.grad[i]) break;
      idx[i] = 0;
    }
  }
  l.buffer = std::max<int64_t>(l.buffer, 1);  // a buffer even for an empty gradient
  return l;
}

// The plan of case c in dtype d with options o.
tessera::Plan plan_of(const Case& c, DType d, const tessera::Options& o) {
  tessera::Dims strides;
  if (!c.strides.empty()) {
    std::vector<int64_t> b;
    for (const int64_t s : c.strides) b.push_back(s * static_cast<int64_t>(tessera::itemsize_of(d)));
    strides = tessera::Dims(b);
  }
  switch (c.op) {
    case 0: return tessera::Plan::tile_backward(c.grad, strides, d, c.in, c.reps, o);
    case 1: return tessera::Plan::sum_to_shape(c.grad, strides, d, c.in, o);
    default: {
      const std::optional<int> axis = c.axis < 0 ? std::nullopt : std::optional<int>(c.axis);
      if (c.reps.size() == 1) return tessera::Plan::repeat_backward(c.grad, strides, d, c.in, c.reps[0], axis, o);
      return tessera::Plan::repeat_backward(c.grad, strides, d, c.in, c.reps, axis, o);
    }
  }
}

// Runs plan on `data` into a copy of `init` (accumulate) or into garbage, with max_threads mt
// inside `arena`.
std::vector<unsigned char> run(const Case& c, DType d, const std::vector<unsigned char>& data, bool accumulate,
                               const std::vector<unsigned char>& init, int mt, tbb::task_arena& arena,
                               std::string* path = nullptr,
                               tessera::NonTemporal nontemporal = tessera::NonTemporal::automatic) {
  tessera::Options o;
  o.accumulate = accumulate;
  o.max_threads = mt;
  o.nontemporal = nontemporal;
  std::vector<unsigned char> out;
  arena.execute([&] {
    const tessera::Plan plan = plan_of(c, d, o);
    if (path) *path = reduce_path_of(plan.kernel_path());
    out = accumulate ? init : std::vector<unsigned char>(plan.nbytes(), 0x5a);
    plan.execute(data.data(), out.data(), out.size());
  });
  return out;
}

// Every path of reduce.hpp's ReducePath (zeros, lanes, strided, interleaved, periodic, segments)
// and the sub-kernels that kernels/reduce.cpp chooses inside them: register trees (a short item's
// rows read one after another too) and the counter at run time (lanes), the periodic order's
// short runs of 1, 3 and other widths, its register blocks and its leaves with outer reduced
// axes, segments of each kind, and splits of one item's leaves over threads (inputs past the
// executor's 512 KiB threshold).
const std::vector<Case>& width_cases() {
  static const std::vector<Case> c = {
      {"zeros", 0, {0, 37}, {5, 37}, {0, 1}, 0, {}, "reduce.zeros"},
      {"lanes, 4 addends", 0, {20, 37}, {5, 37}, {4, 1}, 0, {}, "reduce.lanes"},
      {"lanes, 4 addends, a short item", 0, {8, 24}, {2, 24}, {4, 1}, 0, {}, "reduce.lanes"},
      {"lanes, 3 leaves", 0, {120, 37}, {5, 37}, {24, 1}, 0, {}, "reduce.lanes"},
      {"lanes, 75 leaves", 1, {600, 70}, {1, 70}, {}, 0, {}, "reduce.lanes"},
      {"lanes, 4096 addends of one item", 1, {4096, 80}, {1, 80}, {}, 0, {}, "reduce.lanes"},
      {"lanes, two reduced axes", 0, {3, 40, 33}, {20, 11}, {3, 2, 3}, 0, {}, "reduce.lanes"},
      {"strided, rows of 9", 1, {2000, 9}, {2000, 1}, {}, 0, {}, "reduce.strided"},
      {"strided, Fortran order", 1, {300, 64}, {300, 1}, {}, 0, {1, 300}, "reduce.strided"},
      {"interleaved, 2", 2, {50, 200}, {50, 100}, {2}, 1, {}, "reduce.interleaved"},
      {"interleaved, 3", 2, {50, 300}, {50, 100}, {3}, 1, {}, "reduce.interleaved"},
      {"interleaved, 4", 2, {50, 400}, {50, 100}, {4}, 1, {}, "reduce.interleaved"},
      {"periodic, runs of 16", 0, {1000, 16}, {1000, 1}, {1, 16}, 0, {}, "reduce.periodic"},
      {"periodic, runs of 37", 1, {1001, 37}, {1001, 1}, {}, 0, {}, "reduce.periodic"},
      {"periodic, narrow (w = 3)", 0, {999, 87}, {999, 3}, {1, 29}, 0, {}, "reduce.periodic"},
      {"periodic, w = 5", 0, {200, 200}, {200, 5}, {1, 40}, 0, {}, "reduce.periodic"},
      {"periodic, w = 7", 0, {100, 280}, {100, 7}, {1, 40}, 0, {}, "reduce.periodic"},
      {"periodic, long runs", 1, {64, 2000}, {64, 1}, {}, 0, {}, "reduce.periodic"},
      {"periodic, an outer reduced axis", 1, {6, 50, 40}, {1, 50, 1}, {}, 0, {}, "reduce.periodic"},
      {"periodic, narrow with outer reps", 0, {100, 120}, {50, 3}, {2, 40}, 0, {}, "reduce.periodic"},
      {"periodic, all to a scalar", 1, {300000}, {}, {}, 0, {}, "reduce.periodic"},
      {"segments of rows", 2, {80, 40}, {3, 40}, {30, 0, 50}, 0, {}, "reduce.segments"},
      {"segments of runs", 2, {40, 95}, {40, 3}, {30, 25, 40}, 1, {}, "reduce.segments"},
      {"segments of short runs", 2, {40, 17}, {40, 3}, {5, 3, 9}, 1, {}, "reduce.segments"},
      {"segments of ragged runs", 2, {40, 144}, {40, 24},
       {3, 0, 5, 1, 9, 16, 2, 4, 0, 7, 15, 20, 1, 3, 8, 2, 6, 0, 11, 4, 3, 17, 2, 5}, 1, {}, "reduce.segments"},
      // float32: segments_runs' groups (counts of at most 4, two groups of N segments per step)
      {"segments of runs of 0-4", 2, {40, 80}, {40, 40},
       {3, 0, 2, 4, 1, 3, 0, 2, 4, 1, 3, 0, 2, 4, 1, 3, 0, 2, 4, 1,
       3, 0, 2, 4, 1, 3, 0, 2, 4, 1, 3, 0, 2, 4, 1, 3, 0, 2, 4, 1}, 1, {}, "reduce.segments"},
      {"segments, flattened short runs", 2, {82}, {4, 6},
       {2, 0, 5, 12, 3, 0, 9, 1, 1, 0, 3, 14, 2, 2, 0, 6, 4, 3, 2, 1, 0, 8, 3, 1}, -1, {}, "reduce.segments"},
      {"segments, flattened", 2, {300}, {2, 3}, {40, 70, 0, 90, 60, 40}, -1, {}, "reduce.segments"},
      // counts of 1 along the last axis, a gradient in Fortran order: a segment of one column,
      // contiguous in the gradient, written 4 elements apart (one leaf, lanes with an output stride)
      {"segments of single columns, output stride 4", 2, {40, 5}, {40, 4}, {1, 1, 2, 1}, 1, {1, 40}, "reduce.segments"},
      // (Appended: each case's data come from a seed counted along this list.)
      // Ragged rows (counts 0-4): the empty ones' zeros start 4 bytes past a 16-byte boundary
      // (148 and 444 bytes into a float32 result), streamed or not.
      {"segments of rows of 37, some empty", 2, {12, 37}, {6, 37}, {3, 0, 2, 0, 4, 3}, 0, {}, "reduce.segments"},
      // Sub-problems of 3 items each (the rows of 50 are 64 apart in the gradient).
      {"segments of strided 3-d rows, some empty", 2, {9, 3, 50}, {4, 3, 50}, {2, 0, 4, 3}, 0, {192, 64, 1},
       "reduce.segments"},
      // Items read a row at a time past the registers' vectors (the sums in a scratch row), the
      // items' outputs 1200 bytes apart: streamed two vectors of sums a store where aligned to it.
      {"lanes, 3 addends of 300, rows read whole", 0, {21, 300}, {7, 300}, {3, 1}, 0, {}, "reduce.lanes"},
      {"segments of 0-4 rows of 300, read whole", 2, {13, 300}, {6, 300}, {3, 0, 4, 2, 1, 3}, 0, {}, "reduce.segments"},
      // 1000 items of 4 short rows read whole: more items per range than the prefetch distance,
      // so that they are prefetched along the rows where the planner says so (its sub-kernel
      // must then run on every target).
      {"lanes, 4 neighbouring rows of 24, 1000 items read whole", 2, {4000, 24}, {1000, 24}, {4}, 0, {}, "reduce.lanes"},
      // 3 items of 3 long rows (32 KiB of float32) read across the rows: each row prefetched
      // along itself and, past its end, the next item's (Item.long_rows_next) where the policy
      // says so.
      {"lanes, 3 items of 3 long rows", 0, {9, 8192}, {3, 8192}, {3, 1}, 0, {}, "reduce.lanes"},
      // 17 leaves of 8 long rows (20 KB of float32): reduce.lanes.leaves prefetching them along
      // themselves and on into the next leaf's (LanesLeaves:LeafRows.ahead, .next)
      {"lanes, 17 leaves of long rows", 1, {136, 5000}, {1, 5000}, {}, 0, {}, "reduce.lanes"},
      // 100 items of 16 rows of 8, 16 elements apart (two leaves: reduce.lanes.reg.tree4, each row
      // read whole on every target): prefetched along the rows where short rows are prefetched
      // (RegTreeItem<0,NL>.rows_along).
      {"lanes, 100 items of 2 leaves of short rows", 1, {100, 16, 8}, {100, 1, 8}, {}, 0, {256, 16, 1}, "reduce.lanes"},
  };
  return c;
}

// The accumulation-width data of a dtype: the narrow type's significand bits p and the
// accumulator's P; values are m * 2^e, m < 2^p', e in [lo, lo + spread], so that every partial sum
// of `terms` of them is a multiple of 2^lo below 2^(P + lo): exact in the accumulator whatever the
// order, while the narrow type's running sum rounds.
struct WidthData {
  int p, P, lo;
};
// The significand bits of d's real type and of its accumulator, and the lowest exponent used.
WidthData width_data(DType d) {
  switch (d) {
    case DType::float16: return {11, 24, -10};
    case DType::bfloat16: return {8, 24, -8};
    default: return {24, 53, -20};  // float32, complex64
  }
}

// One value of the width data of dtype d for sums of at most `terms` values (0, the largest
// exponent, the lowest, or one between).
double width_value(Rng& rng, DType d, int64_t terms) {
  const WidthData w = width_data(d);
  const int budget = w.P - ceil_log2(terms + 1);  // >= 4 for the cases here (checked by width_run)
  const int p = std::min(w.p, budget), spread = budget - p;
  const int64_t pick = rng.uniform(0, 15);
  if (pick == 0) return 0.0;
  const int e = pick <= 5 ? w.lo + spread : pick <= 10 ? w.lo : w.lo + static_cast<int>(rng.uniform(0, spread));
  const double m = static_cast<double>(rng.uniform(1, (int64_t{1} << p) - 1));
  return std::ldexp(rng.coin() ? m : -m, e);
}

// The width test's data of one case and dtype: values per real part of every buffer element.
struct WidthRun {
  std::vector<unsigned char> data, init;
  std::vector<unsigned char> want[2];  // [accumulate]
  int64_t eligible = 0, narrow_differs = 0;  // the self-check: outputs of >= 3 addends, and those
                                             // whose narrow left-to-right sum is not the reference
};

WidthRun width_run(const Layout& l, DType d, uint64_t seed) {
  Rng rng(seed);
  const int parts = is_complex(d) ? 2 : 1;
  const std::size_t ps = part_size(d);
  WidthRun r;
  REQUIRE(width_data(d).P - ceil_log2(l.most + 2) >= 4);  // bits left for the values
  std::vector<double> value(static_cast<std::size_t>(l.buffer * parts));
  for (double& v : value) v = width_value(rng, d, l.most + 1);
  r.data.assign(value.size() * ps, 0);
  for (std::size_t i = 0; i < value.size(); ++i) put(d, r.data.data() + i * ps, value[i]);
  std::vector<double> init(static_cast<std::size_t>(l.nout * parts));
  for (double& v : init) v = width_value(rng, d, l.most + 1);
  r.init.assign(init.size() * ps, 0);
  for (std::size_t i = 0; i < init.size(); ++i) put(d, r.init.data() + i * ps, init[i]);
  // The exact sums (in double: exact by construction), and the narrow running sums.
  std::vector<double> sum(init.size(), 0.0), run(init.size(), 0.0);
  std::vector<int64_t> terms(init.size(), 0);
  for (std::size_t e = 0; e < l.out.size(); ++e) {
    for (int q = 0; q < parts; ++q) {
      const auto o = static_cast<std::size_t>(l.out[e] * parts + q);
      const double x = value[static_cast<std::size_t>(l.offset[e] * parts + q)];
      sum[o] += x;
      run[o] = terms[o]++ == 0 ? x : narrow(d, run[o] + x);
    }
  }
  for (std::size_t o = 0; o < sum.size(); ++o) {
    if (terms[o] < 3) continue;
    ++r.eligible;
    r.narrow_differs += run[o] != narrow(d, sum[o]);
  }
  for (const bool acc : {false, true}) {
    r.want[acc].assign(r.init.size(), 0);
    for (std::size_t o = 0; o < sum.size(); ++o)
      put(d, r.want[acc].data() + o * ps, (acc ? init[o] + sum[o] : sum[o]) + 0.0);  // exact, rounded once
  }
  return r;
}

// The first differing element, for a message.
std::string first_difference(DType d, const std::vector<unsigned char>& got, const std::vector<unsigned char>& want) {
  const std::size_t ps = part_size(d);
  if (got.size() != want.size()) return "sizes differ";
  std::size_t differ = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); i += ps) {
    if (std::memcmp(got.data() + i, want.data() + i, ps) != 0) {
      if (differ++ == 0) first = i / ps;
    }
  }
  if (differ == 0) return "";
  char buf[200];
  std::snprintf(buf, sizeof buf, "%zu of %zu parts differ; first: part %zu is %.17g, expected %.17g", differ,
                got.size() / ps, first, get(d, got.data() + first * ps), get(d, want.data() + first * ps));
  return buf;
}

}  // namespace

TEST_CASE("accumulation width: sums that round in the element type are the wide sum rounded once, on every path and target") {
  TargetGuard guard;
  const std::vector<int64_t> targets = test::targets_to_test();
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  std::set<std::string> paths;
  uint64_t seed = 2100;
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
  // The reductions' sub-kernels each target ran (the counters of lib/kernels/path_counters.hpp):
  // before, and after every case.
  namespace td = tessera::detail;
  const int first_reduce_variant = static_cast<int>(td::Variant::periodic_run1_n);
  const auto snapshot = [&](int64_t t) {
    std::vector<uint64_t> counts(td::kVariantCount);
    for (int v = 0; v < td::kVariantCount; ++v) counts[static_cast<std::size_t>(v)] = td::executed_variant_count(t, v);
    return counts;
  };
  const auto kernel_snapshot = [&](int64_t t) {
    std::vector<uint64_t> counts(td::kReduceKernelCount);
    for (int k = 0; k < td::kReduceKernelCount; ++k)
      counts[static_cast<std::size_t>(k)] = td::executed_reduce_kernel_count(t, k);
    return counts;
  };
  std::vector<std::vector<uint64_t>> before, kernels_before;
  for (const int64_t t : targets) {
    before.push_back(snapshot(t));
    kernels_before.push_back(kernel_snapshot(t));
  }
#endif
  for (const Case& c : width_cases()) {
    const std::string name = c.name;
    INFO(name);
    const Layout l = layout_of(c);
    for (const DType d : {DType::float16, DType::bfloat16, DType::float32, DType::complex64}) {
      const std::string dname = tessera::dtype_name(d);
      INFO(dname);
      const WidthRun w = width_run(l, d, seed++);
      // The data tell a narrow accumulator: its running sums of 3 addends or more round, and end
      // with other bits in a twentieth of the outputs or more (sums of 2 round once whatever the
      // accumulator; of 3 or 4, 8-60% of them differ here; of more, nearly all).
      CHECK_MESSAGE(w.narrow_differs * 20 >= w.eligible, w.narrow_differs << " of " << w.eligible);
      if (l.most >= 3) CHECK(w.eligible > 0);
      for (const int64_t target : targets) {
        hwy::SetSupportedTargetsForTest(target);
        const std::string tname = hwy::TargetName(target);
        INFO(tname);
        for (const bool accumulate : {false, true}) {
          // On all threads also streamed (the kernels' non-temporal stores, e.g. a segment's
          // zeros), as the cases' small results are not by default.
          for (const int run_kind : {0, 1, 2}) {
            const int mt = run_kind == 0 ? 1 : 0;
            const auto nt = run_kind == 2 ? tessera::NonTemporal::always : tessera::NonTemporal::automatic;
            INFO("accumulate " << accumulate << ", max_threads " << mt << " (an arena of 4), nontemporal "
                               << (run_kind == 2 ? "always" : "automatic"));
            std::string path;
            const std::vector<unsigned char> got = run(c, d, w.data, accumulate, w.init, mt, arena, &path, nt);
            if (!is_complex(d)) CHECK(path == c.path);  // complex: real parts along a kept axis of 2
            paths.insert(path);
            const std::string diff = first_difference(d, got, w.want[accumulate]);
            CHECK_MESSAGE(diff.empty(), diff);
          }
        }
      }
    }
  }
  // Every reduction path (but reduce.none: nothing to add) is covered by a case.
  for (const std::string& k : tessera::Plan::kernel_paths())
    if (k.rfind("reduce.", 0) == 0 && k != "reduce.none")
      CHECK_MESSAGE(paths.count(reduce_path_of(k)) == 1, reduce_path_of(k) << " has no case");
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
  // ... and every sub-kernel of the reductions that a target's code has ran on this data there.
  for (std::size_t i = 0; i < targets.size(); ++i) {
    hwy::SetSupportedTargetsForTest(targets[i]);
    const std::string tname = hwy::TargetName(targets[i]);
    const uint64_t has = td::compiled_variants();
    const std::vector<uint64_t> after = snapshot(targets[i]);
    for (int v = first_reduce_variant; v < td::kVariantCount; ++v)
      if ((has >> v) & 1)
        CHECK_MESSAGE(after[static_cast<std::size_t>(v)] > before[i][static_cast<std::size_t>(v)],
                      "sub-kernel " << std::string(td::kVariantNames[v]) << " never ran on " << tname);
    const uint64_t planned = td::reduce_kernels();
    const std::vector<uint64_t> kernels_after = kernel_snapshot(targets[i]);
    for (int k = 0; k < td::kReduceKernelCount; ++k)
      if ((planned >> k) & 1)
        CHECK_MESSAGE(kernels_after[static_cast<std::size_t>(k)] > kernels_before[i][static_cast<std::size_t>(k)],
                      "kernel " << td::kReduceKernels[k].name << " never ran on " << tname);
  }
#endif
}

// ---- The periodic order, modelled --------------------------------------------------------------

namespace {

// The periodic order as reduce.hpp documents it, modelled independently of the kernels: an
// output row's runs (outer reduced axes first), each of R rows of w elements in memory order, cut
// in blocks of P = lcm(w, 16) slots (the last block of a run padded with -0.0); the blocks summed
// slot-wise in leaves of 8, leaf k left to right; the leaves combined by the binary counter
// (leaf k added to the levels its trailing one bits name; the levels left added from the lowest
// up); then the P / w slots of each output element added by a halving tree (slot s + slot s + h*w,
// h = P/w/2, ..., 1). Returns the w sums.
std::vector<double> periodic_model(const std::vector<std::vector<double>>& runs, int64_t w) {
  int64_t P = 16;
  while (P % w != 0) P += 16;
  std::vector<std::vector<double>> blocks;
  for (const auto& run : runs) {
    for (std::size_t b0 = 0; b0 < run.size(); b0 += static_cast<std::size_t>(P)) {
      std::vector<double> block(static_cast<std::size_t>(P), -0.0);
      for (std::size_t s = 0; s < block.size() && b0 + s < run.size(); ++s) block[s] = run[b0 + s];
      blocks.push_back(block);
    }
  }
  const auto add = [](const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> r(a.size());
    for (std::size_t s = 0; s < a.size(); ++s) r[s] = a[s] + b[s];
    return r;
  };
  std::vector<std::vector<double>> level(64);
  uint64_t count = 0;
  for (std::size_t q0 = 0; q0 < blocks.size(); q0 += 8) {
    std::vector<double> v = blocks[q0];
    for (std::size_t q = q0 + 1; q < std::min(blocks.size(), q0 + 8); ++q) v = add(v, blocks[q]);
    const uint64_t k = count++;
    int m = 0;
    for (; (k >> m) & 1; ++m) v = add(level[static_cast<std::size_t>(m)], v);
    level[static_cast<std::size_t>(m)] = v;
  }
  std::vector<double> r;
  for (int l = 0; l < 64; ++l) {
    if (!((count >> l) & 1)) continue;
    r = r.empty() ? level[static_cast<std::size_t>(l)] : add(level[static_cast<std::size_t>(l)], r);
  }
  for (int64_t h = P / w / 2; h >= 1; h /= 2)
    for (int64_t j = 0; j < h * w; ++j) r[static_cast<std::size_t>(j)] = r[static_cast<std::size_t>(j)] + r[static_cast<std::size_t>(j + h * w)];
  r.resize(static_cast<std::size_t>(w));
  return r;
}

// A periodic case: tile_backward of a (k*m, r*w) gradient to (m, w) by reps (k, r): output row i
// sums the runs of rows a*m + i, a < k, each r*w contiguous elements.
struct PCase {
  int64_t k, m, r, w;
};

}  // namespace

TEST_CASE("the periodic order is the documented order: blocks, leaves, tree and fold, on every SIMD target") {
  TargetGuard guard;
  const std::vector<int64_t> targets = test::targets_to_test();
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  // Runs of 16 (the short-run loops), 37 (a partial block), widths 2 to 15 (P = 16, 48, 80, 112,
  // 144, 240), long runs (register blocks, the counter at run time), outer reduced axes (k > 1),
  // one run (a scalar) and two rows of 40000 (one item's leaves split over threads).
  const PCase cases[] = {{1, 1000, 16, 1}, {1, 1001, 37, 1}, {1, 300, 29, 3}, {1, 200, 40, 5}, {1, 100, 40, 7},
                         {1, 40, 30, 9},   {1, 30, 20, 15},  {1, 100, 40, 2}, {1, 100, 33, 4}, {2, 60, 17, 8},
                         {1, 64, 2000, 1}, {3, 50, 40, 1},   {2, 50, 40, 3},  {5, 7, 300, 5},  {1, 1, 70001, 1},
                         {1, 2, 40000, 1}, {2, 3, 900, 3}};
  for (const PCase& pc : cases) {
    INFO("k " << pc.k << ", m " << pc.m << ", r " << pc.r << ", w " << pc.w);
    const int64_t cols = pc.r * pc.w, rows = pc.k * pc.m;
    const Case c{"", 0, {rows, cols}, {pc.m, pc.w}, {pc.k, pc.r}, 0, {}, "reduce.periodic"};
    // The addends of each output, for the cancelling float32 data.
    std::vector<std::vector<std::size_t>> groups(static_cast<std::size_t>(pc.m * pc.w));
    for (int64_t i = 0; i < rows * cols; ++i)
      groups[static_cast<std::size_t>((i / cols) % pc.m * pc.w + i % cols % pc.w)].push_back(static_cast<std::size_t>(i));
    for (const DType d : {DType::float64, DType::float32}) {
      const std::string dname = tessera::dtype_name(d);
      INFO(dname);
      Rng rng(static_cast<uint64_t>(pc.k * 1000003 + pc.m * 1009 + pc.r * 31 + pc.w));
      std::vector<double> g(static_cast<std::size_t>(rows * cols));
      if (d == DType::float64) {
        for (double& x : g) x = full_mantissa(rng);
      } else {
        const std::vector<float> f = cancelling_floats(g.size(), groups, static_cast<uint64_t>(pc.m * 7 + pc.r));
        std::copy(f.begin(), f.end(), g.begin());
      }
      std::vector<double> init(static_cast<std::size_t>(pc.m * pc.w));
      for (double& x : init) x = narrow(d, full_mantissa(rng));
      std::vector<unsigned char> data(g.size() * tessera::itemsize_of(d)), init_bytes(init.size() * tessera::itemsize_of(d));
      for (std::size_t i = 0; i < g.size(); ++i) put(d, data.data() + i * tessera::itemsize_of(d), g[i]);
      for (std::size_t i = 0; i < init.size(); ++i) put(d, init_bytes.data() + i * tessera::itemsize_of(d), init[i]);
      std::vector<unsigned char> want[2] = {init_bytes, init_bytes};
      int64_t order_matters = 0;  // outputs whose left-to-right float64 sum has other bits
      for (int64_t i = 0; i < pc.m; ++i) {
        std::vector<std::vector<double>> runs;
        for (int64_t a = 0; a < pc.k; ++a)
          runs.emplace_back(g.begin() + (a * pc.m + i) * cols, g.begin() + (a * pc.m + i + 1) * cols);
        const std::vector<double> s = periodic_model(runs, pc.w);
        for (int64_t e = 0; e < pc.w; ++e) {
          const auto o = static_cast<std::size_t>(i * pc.w + e);
          const std::size_t at = o * tessera::itemsize_of(d);
          put(d, want[0].data() + at, s[static_cast<std::size_t>(e)] + 0.0);
          put(d, want[1].data() + at, (init[o] + s[static_cast<std::size_t>(e)]) + 0.0);
          double linear = 0;
          for (const auto& run : runs)
            for (int64_t t = e; t < cols; t += pc.w) linear += run[static_cast<std::size_t>(t)];
          order_matters += narrow(d, linear) != narrow(d, s[static_cast<std::size_t>(e)]);
        }
      }
      // The data show the order: another order changes bits (float32's through the cancellations).
      CHECK_MESSAGE(order_matters * 10 >= pc.m * pc.w, order_matters << " of " << pc.m * pc.w);
      for (const int64_t target : targets) {
        hwy::SetSupportedTargetsForTest(target);
        const std::string tname = hwy::TargetName(target);
        INFO(tname);
        for (const bool accumulate : {false, true}) {
          for (const int mt : {1, 0}) {
            INFO("accumulate " << accumulate << ", max_threads " << mt << " (an arena of 4)");
            std::string path;
            const std::vector<unsigned char> got = run(c, d, data, accumulate, init_bytes, mt, arena, &path);
            CHECK(path == c.path);
            const std::string diff = first_difference(d, got, want[accumulate]);
            CHECK_MESSAGE(diff.empty(), diff);
          }
        }
      }
    }
  }
}

// ---- One output's sum split over threads ------------------------------------------------------

TEST_CASE("one output's sum is split over two threads or more, with the serial bits and the documented order") {
  // One item (every output element in one strip or row): the executor splits its leaves over the
  // threads, so every page of the gradient belongs to the same outputs' sums. The threads that
  // first read each page are recorded: at least two must have read the gradient. A worker may be
  // slow to join one call on a busy machine, or after other arenas (TBB moves its workers to a new
  // arena over tens of milliseconds): 4 MiB of gradient (a page fault each 4 KiB keeps the first
  // thread busy for milliseconds), calls repeated for up to 20 s until one was read by two threads.
  // float64 with full mantissas: each result is compared with the serial one and with the model
  // of the order.
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  struct Split {
    const char* name;
    Shape grad, target;
    const char* path;
  };
  const Split splits[] = {{"rows to one row", {2048, 256}, {1, 256}, "reduce.lanes"},
                          {"all to a scalar", {524288}, {}, "reduce.periodic"}};
  for (const Split& s : splits) {
    const std::string name = s.name;
    INFO(name);
    Rng rng(77);
    std::vector<double> g(static_cast<std::size_t>(count_of(s.grad)));
    for (double& x : g) x = full_mantissa(rng);
    std::vector<unsigned char> bytes(g.size() * 8);
    std::memcpy(bytes.data(), g.data(), bytes.size());
    // The model: lanes (one sum per column, rows in order) or periodic (one run).
    std::vector<double> want;
    if (s.target.empty()) {
      want = periodic_model({g}, 1);
      want[0] += 0.0;
    } else {
      const int64_t rows = s.grad[0], cols = s.grad[1];
      for (int64_t c = 0; c < cols; ++c) {
        std::vector<double> column;
        for (int64_t r = 0; r < rows; ++r) column.push_back(g[static_cast<std::size_t>(r * cols + c)]);
        want.push_back(lanes_order_sum(column));
      }
    }
    std::vector<double> serial(want.size());
    {
      const tessera::Plan plan = tessera::Plan::sum_to_shape(s.grad, {}, DType::float64, s.target, tessera::Options{});
      CHECK(reduce_path_of(plan.kernel_path()) == s.path);
      tessera::Options one;
      one.max_threads = 1;
      tessera::Plan::sum_to_shape(s.grad, {}, DType::float64, s.target, one).execute(bytes.data(), serial.data(), serial.size() * 8);
      CHECK(std::memcmp(serial.data(), want.data(), want.size() * 8) == 0);
    }
    std::size_t most = 0;
    int attempts = 0;
    const auto start = std::chrono::steady_clock::now();
    for (; most < 2 && std::chrono::steady_clock::now() - start < std::chrono::seconds(20); ++attempts) {
      test::TouchRecorder pages(bytes);
      std::vector<double> out(want.size());
      arena.execute([&] {
        tessera::sum_to_shape(pages.data(), s.grad, {}, DType::float64, s.target, out.data(), out.size() * 8);
      });
      most = std::max(most, pages.readers().size());
      CHECK(std::memcmp(out.data(), serial.data(), serial.size() * 8) == 0);
    }
    CHECK_MESSAGE(most >= 2, "at most " << most << " thread(s) read the gradient of one output's sum in "
                                         << attempts << " calls");
  }
}

// ---- Golden bits ------------------------------------------------------------------------------

namespace {

struct Golden {
  const char* name;
  const char* dtype;
  uint64_t hash;  // FNV-1a 64 of the result's bytes
};

// tests/golden/reduce_bits.inc: the golden bits (hashes) of the cases below, generated on x86-64
// (TESSERA_GOLDEN_PRINT=1 prints the table's lines). They change only if the documented orders
// change (a new version of reduce.hpp's orders): then regenerate them and say so.
const Golden kGolden[] = {
#include "golden/reduce_bits.inc"
};

// The golden cases' data: float64 and complex128 with full mantissas; float32 cancelling (float64
// sums that round; a huge pair in outputs of 3 addends too); complex64 the float32 values and
// their halves negated as imaginary parts; float16 and bfloat16 their own cancelling values
// (cancelling_narrow: float32 sums that round, visibly in the type; every value exact in it, the
// huge ones from 2^10 to below 2^15, the small ones below 2^-3 down to 2^-24 in float16, below
// 2^-4 down to 2^-20 in bfloat16). No infinity or NaN (a NaN's bits differ between
// architectures). Built from mt19937_64 and exact arithmetic only: the same bytes on every
// architecture. golden_check() checks that each leg's result tells the order and the width.
std::vector<unsigned char> golden_data(const Layout& l, DType d) {
  std::vector<std::vector<std::size_t>> groups(static_cast<std::size_t>(std::max<int64_t>(1, l.nout)));
  for (std::size_t e = 0; e < l.out.size(); ++e) groups[static_cast<std::size_t>(l.out[e])].push_back(static_cast<std::size_t>(l.offset[e]));
  const std::size_t n = static_cast<std::size_t>(l.buffer);
  const int parts = is_complex(d) ? 2 : 1;
  const std::size_t ps = part_size(d);
  std::vector<unsigned char> data(n * parts * ps);
  if (d == DType::float16 || d == DType::bfloat16) {
    const std::vector<double> v = d == DType::float16 ? cancelling_narrow(n, groups, 4244, 11, -24, -14, 0, 4)
                                                      : cancelling_narrow(n, groups, 4245, 8, -20, -12, 3, 7);
    std::size_t inexact = 0;
    for (std::size_t i = 0; i < n; ++i) {
      put(d, data.data() + i * ps, v[i]);
      inexact += get(d, data.data() + i * ps) != v[i];
    }
    REQUIRE(inexact == 0);  // every value exact in the type (finite, not rounded)
    return data;
  }
  std::vector<float> f = cancelling_floats(n, groups, 4242);
  // cancelling_floats gives outputs of 3 addends no huge pair (their float64 sums are exact in
  // any order): one pair each here, from a generator of their own (the other outputs' values stay).
  Rng pairs(4246);
  for (std::vector<std::size_t> g : groups) {
    if (g.size() != 3) continue;
    pairs.shuffle(g);
    const auto m = static_cast<float>(pairs.uniform(1, (int64_t{1} << 24) - 1));
    const float huge = std::ldexp(m, static_cast<int>(pairs.uniform(12, 20)));
    f[g[0]] = huge;
    f[g[1]] = -huge;
  }
  Rng rng(4243);
  for (std::size_t i = 0; i < n; ++i) {
    if (d == DType::float64 || d == DType::complex128) {
      for (int q = 0; q < parts; ++q) put(d, data.data() + (i * parts + q) * ps, full_mantissa(rng));
    } else {
      const float x = f[i];
      put(d, data.data() + i * parts * ps, x);
      if (parts == 2) put(d, data.data() + (i * parts + 1) * ps, -x / 2);
    }
  }
  return data;
}

// The golden data's self-check on a leg's result `got`: whether it is all zero; and per real part
// of each output of 3 addends or more (eligible), whether the result differs from the addends
// summed last to first in the accumulator (float32 for float16 and bfloat16, float64 otherwise)
// and rounded once (the order shows), and, where the accumulator is wider than the element type,
// whether it differs from a running sum in the element type itself (first to last, each addition
// rounded: a narrow accumulator shows).
struct GoldenCheck {
  bool all_zero = true;
  int64_t eligible = 0, order_differs = 0, narrow_differs = 0;
  bool wide = false;  // the accumulator is wider than the element type
};

GoldenCheck golden_check(const Layout& l, DType d, const std::vector<unsigned char>& data,
                         const std::vector<unsigned char>& got) {
  const int parts = is_complex(d) ? 2 : 1;
  const std::size_t ps = part_size(d);
  const bool f32acc = d == DType::float16 || d == DType::bfloat16;
  GoldenCheck r;
  r.wide = d != DType::float64 && d != DType::complex128;
  for (std::size_t i = 0; i < got.size(); i += ps) r.all_zero = r.all_zero && get(d, got.data() + i) == 0;
  const std::size_t nparts = static_cast<std::size_t>(l.nout * parts);
  std::vector<double> reversed(nparts, 0.0), running(nparts, 0.0);
  std::vector<float> reversed_f(nparts, 0.0f);
  std::vector<int64_t> terms(nparts, 0);
  for (std::size_t e = l.out.size(); e-- > 0;) {
    for (int q = 0; q < parts; ++q) {
      const auto o = static_cast<std::size_t>(l.out[e] * parts + q);
      const double x = get(d, data.data() + static_cast<std::size_t>(l.offset[e] * parts + q) * ps);
      if (f32acc) reversed_f[o] += static_cast<float>(x);  // exact: x is a float16 or bfloat16
      else reversed[o] += x;
    }
  }
  for (std::size_t e = 0; e < l.out.size(); ++e) {
    for (int q = 0; q < parts; ++q) {
      const auto o = static_cast<std::size_t>(l.out[e] * parts + q);
      const double x = get(d, data.data() + static_cast<std::size_t>(l.offset[e] * parts + q) * ps);
      running[o] = terms[o]++ == 0 ? x : narrow(d, running[o] + x);
    }
  }
  for (std::size_t o = 0; o < nparts; ++o) {
    if (terms[o] < 3) continue;  // a sum of two rounds once in any order and accumulator
    ++r.eligible;
    const double result = get(d, got.data() + o * ps);
    r.order_differs += result != narrow(d, f32acc ? static_cast<double>(reversed_f[o]) : reversed[o]);
    r.narrow_differs += r.wide && result != running[o];
  }
  return r;
}

}  // namespace

TEST_CASE("golden bits: fixed reductions give the committed bits on every SIMD target and thread count") {
  TargetGuard guard;
  const std::vector<int64_t> targets = test::targets_to_test();
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  const bool print = std::getenv("TESSERA_GOLDEN_PRINT") != nullptr;
  const std::vector<Case>& cases = width_cases();
  std::size_t checked = 0;
  for (const Case& c : cases) {
    const std::string name = c.name;
    INFO(name);
    const Layout l = layout_of(c);
    for (const DType d : {DType::float64, DType::float32, DType::float16, DType::bfloat16, DType::complex64, DType::complex128}) {
      const std::string dname = tessera::dtype_name(d);
      INFO(dname);
      const Golden* golden = nullptr;
      for (const Golden& gd : kGolden)
        if (name == gd.name && dname == gd.dtype) golden = &gd;
      const std::vector<unsigned char> data = golden_data(l, d);
      uint64_t first = 0;
      std::vector<unsigned char> result;
      for (const int64_t target : targets) {
        hwy::SetSupportedTargetsForTest(target);
        const std::string tname = hwy::TargetName(target);
        INFO(tname);
        for (const int mt : {1, 0}) {
          INFO("max_threads " << mt);
          const std::vector<unsigned char> got = run(c, d, data, false, {}, mt, arena);
          const uint64_t h = fnv1a(got);
          if (first == 0) first = h, result = got;
          CHECK(h == first);
          if (golden != nullptr) CHECK_MESSAGE(h == golden->hash, "golden 0x" << std::hex << golden->hash << ", got 0x" << h);
        }
      }
      // The data's self-check: every leg but 'zeros' has a result that is not all zero and, where
      // its outputs have 3 addends or more, that tells the order of the additions (another order
      // gives other bits in a tenth of the outputs or more) and the accumulator's width.
      const GoldenCheck g = golden_check(l, d, data, result);
      if (print)
        std::printf("    // %s %s: all zero %d, of %lld outputs %lld tell the order, %lld the width\n", c.name, dname.c_str(),
                    static_cast<int>(g.all_zero), static_cast<long long>(g.eligible), static_cast<long long>(g.order_differs),
                    static_cast<long long>(g.narrow_differs));
      if (name != "zeros") CHECK_MESSAGE(!g.all_zero, "the result is all zero");
      CHECK_MESSAGE(g.order_differs * 10 >= g.eligible, g.order_differs << " of " << g.eligible << " outputs tell the order");
      if (g.wide) CHECK_MESSAGE(g.narrow_differs * 10 >= g.eligible, g.narrow_differs << " of " << g.eligible << " outputs tell the width");
      if (print) std::printf("    {\"%s\", \"%s\", 0x%016llxULL},\n", c.name, dname.c_str(), static_cast<unsigned long long>(first));
      CHECK_MESSAGE(golden != nullptr, "no golden bits for this case (TESSERA_GOLDEN_PRINT=1 prints them)");
      checked += golden != nullptr;
    }
  }
  CHECK(checked == sizeof kGolden / sizeof kGolden[0]);
}

TEST_CASE("per-element counts: each segment's sum has the bits of the same count's scalar repeat_backward, on every SIMD target") {
  // Segment k of a repeat_backward by counts is the sub-problem of a scalar count's gradient of one
  // element: the same path and order (reduce.hpp). The kernel that sums a whole row of segments at
  // once (reduce.segments.runs: gathered or permuted lanes below 16 addends, the periodic order
  // from 16, empty segments, accumulation) must give exactly those bits.
  TargetGuard guard;
  Rng rng(4242);
  std::set<std::string> kernels;
  for (const int64_t target : test::targets_to_test()) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string tname = hwy::TargetName(target);
    INFO(tname);
    for (const DType d : {DType::float32, DType::float64}) {
      const std::size_t es = tessera::itemsize_of(d);
      for (int trial = 0; trial < 8; ++trial) {
        const int64_t rows = rng.uniform(1, 3), n = rng.uniform(1, 70);
        const int64_t most = std::vector<int64_t>{4, 15, 20, 128}[static_cast<std::size_t>(trial % 4)];
        std::vector<int64_t> counts(static_cast<std::size_t>(n)), prefix(1, 0);
        for (auto& c : counts) {
          c = rng.coin(20) ? 0 : rng.uniform(1, most);
          prefix.push_back(prefix.back() + c);
        }
        const int64_t total = prefix.back();
        const bool accumulate = trial % 3 == 2;
        INFO("trial " << trial << ": " << rows << " rows of " << n << " segments, counts up to " << most
                      << (accumulate ? ", accumulating" : ""));
        // Addends of exponents 2^-30..2^0 with full mantissas (wider than full_mantissa's, so that
        // float32's float64 sums round too): sums round, in an order of their own.
        const auto value = [&] {
          const double m = static_cast<double>(rng.uniform(1, (int64_t{1} << 52) - 1)) * 0x1p-52;
          return (rng.coin() ? -1 : 1) * std::ldexp(1 + m, -static_cast<int>(rng.uniform(0, 30)));
        };
        std::vector<unsigned char> grad(static_cast<std::size_t>(rows * total) * es + es), init(static_cast<std::size_t>(rows * n) * es);
        for (std::size_t i = 0; i + es <= grad.size(); i += es) put(d, grad.data() + i, value());
        for (std::size_t i = 0; i < init.size(); i += es) put(d, init.data() + i, value());
        tessera::Options options;
        options.accumulate = accumulate;
        const tessera::Plan plan = tessera::Plan::repeat_backward({rows, total}, {}, d, {rows, n}, counts, 1, options);
        kernels.insert(plan.kernel_path());
        std::vector<unsigned char> got = init;
        plan.execute(grad.data(), got.data(), got.size());
        for (int64_t b = 0; b < rows; ++b)
          for (int64_t k = 0; k < n; ++k) {
            const std::size_t o = static_cast<std::size_t>(b * n + k) * es;
            std::vector<unsigned char> want(init.begin() + static_cast<std::ptrdiff_t>(o),
                                            init.begin() + static_cast<std::ptrdiff_t>(o + es));
            const int64_t c = counts[static_cast<std::size_t>(k)];
            if (c > 0) {
              const unsigned char* seg = grad.data() + static_cast<std::size_t>(b * total + prefix[static_cast<std::size_t>(k)]) * es;
              tessera::repeat_backward(seg, {c}, {}, d, {1}, c, 0, want.data(), es, options);
            } else if (!accumulate) {
              std::fill(want.begin(), want.end(), 0);  // +0
            }
            const bool same = std::equal(want.begin(), want.end(), got.begin() + static_cast<std::ptrdiff_t>(o));
            CHECK_MESSAGE(same, "row " << b << ", segment " << k << " (count " << c << ", " << tessera::dtype_name(d)
                                       << ", " << plan.kernel_path() << ")");
          }
      }
    }
  }
#if HWY_ARCH_X86
  CHECK(kernels.count("reduce.segments.runs") == 1);  // x86's targets are all fixed-width
#endif
}

TEST_CASE("per-element counts: compact prefix sums give the documented bits, in one piece or many, on every SIMD target") {
  // A float32 repeat_backward whose segment groups may run plans its counts compact (one byte
  // each, and a prefix sum every 16 segments: Prefix::compact). The groups, the kernel's segments
  // after them (their prefix sums made from the bytes, 64 at a time), the executor's pieces (each
  // starting where a sum is kept) and a plan whose groups do not apply (counts above 4: the sums
  // made whole) must give the documented bits: a count of at most 8 is one leaf, its addends
  // summed in float64 in order, rounded once; a count of 0 gives +0.
  TargetGuard guard;
  Rng rng(777);
  const int64_t n = 100003;  // not a multiple of 16: the last piece ends between kept sums
  struct Case {
    const char* name;
    int64_t most, empty_tail;
    std::size_t misalign;  // bytes: the groups need an aligned float32 row
    bool compact;          // what the plan must keep
  };
  const Case cases[] = {{"counts 0-4", 4, 0, 0, true},
                        {"counts 0-4, the last 300 segments empty", 4, 300, 0, true},
                        {"counts 0-4, the gradient 2 bytes off a float's alignment", 4, 0, 2, true},
                        {"counts 0-8 (no groups: the sums made whole)", 8, 0, 0, false}};
  for (const Case& c : cases) {
    INFO(c.name);
    std::vector<int64_t> counts(static_cast<std::size_t>(n));
    int64_t total = 0;
    for (int64_t k = 0; k < n; ++k)
      total += counts[static_cast<std::size_t>(k)] = k >= n - c.empty_tail ? 0 : rng.uniform(0, c.most);
    std::vector<unsigned char> grad(static_cast<std::size_t>(total) * 4 + c.misalign);
    std::vector<float> want(static_cast<std::size_t>(n));
    int64_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      double sum = -0.0;
      for (int64_t j = 0; j < counts[static_cast<std::size_t>(k)]; ++j, ++at) {
        const double m = static_cast<double>(rng.uniform(1, (int64_t{1} << 23) - 1)) * 0x1p-23;
        const float x = static_cast<float>((rng.coin() ? -1 : 1) * std::ldexp(1 + m, -static_cast<int>(rng.uniform(0, 30))));
        std::memcpy(grad.data() + c.misalign + static_cast<std::size_t>(at) * 4, &x, 4);
        sum += x;
      }
      want[static_cast<std::size_t>(k)] = counts[static_cast<std::size_t>(k)] == 0 ? 0.0f : static_cast<float>(sum);
    }
    const auto check = [&](const tessera::Plan& plan, const char* how) {
      for (const bool split : {false, true}) {
        std::vector<float> got(static_cast<std::size_t>(n), 99.0f);
        const auto run = [&] { plan.execute(grad.data() + c.misalign, got.data(), got.size() * 4); };
        if (split) {
          tbb::task_arena four(4);  // the input (~800 KiB) is split into pieces
          four.execute(run);
        } else {
          run();
        }
        int64_t wrong = 0, first = -1;
        for (int64_t k = 0; k < n; ++k)
          if (std::memcmp(&got[static_cast<std::size_t>(k)], &want[static_cast<std::size_t>(k)], 4) != 0 && wrong++ == 0)
            first = k;
        CHECK_MESSAGE(wrong == 0, how << (split ? ", in pieces" : ", in one piece") << ": " << wrong
                                      << " segments wrong, the first " << first << " (" << plan.kernel_path() << ")");
      }
    };
    // Made for the target dispatch chooses, then run on every target (a plan runs anywhere: where
    // the segments' kernel is not compiled, the executor walks the one-byte counts itself).
    tessera::Options options;
    options.max_threads = 0;
    const tessera::Plan best = tessera::Plan::repeat_backward({total}, {}, DType::float32, {n}, counts, 0, options);
    const bool compact = best.describe().find("one-byte counts, every 16th prefix sum") != std::string::npos;
#if HWY_ARCH_X86
    CHECK_MESSAGE(compact == c.compact, best.describe());  // every x86 target but SCALAR has the groups
#endif
    for (const int64_t target : test::targets_to_test()) {
      hwy::SetSupportedTargetsForTest(target);
      INFO(hwy::TargetName(target));
      check(best, "planned for the best target");
      check(tessera::Plan::repeat_backward({total}, {}, DType::float32, {n}, counts, 0, options), "planned here");
    }
    hwy::SetSupportedTargetsForTest(0);
  }
  // The compact pass's errors are the whole one's: the first negative count named, before a
  // count of 255 or more sends the pass back to the whole sums.
  std::vector<int64_t> counts(4000, 2);
  counts[1000] = 300;
  counts[3000] = -1;
  CHECK_THROWS_WITH_AS(tessera::Plan::repeat_backward({8297}, {}, DType::float32, {4000}, counts, 0),
                       doctest::Contains("repeats[3000] = -1"), tessera::InvalidArgument);
  counts[3000] = 2;
  counts[17] = 1;
  const tessera::Plan large = tessera::Plan::repeat_backward({8297}, {}, DType::float32, {4000}, counts, 0);
  CHECK(large.describe().find("every 16th prefix sum") == std::string::npos);  // a count of 300: whole
  CHECK(large.size() == 4000);
  // Counts read the slow way in the compact pass: int32 every other element, and negative ones
  // clamped to 0 (NegativeReps::clamp_to_zero) — the same results as the same counts given plainly.
  counts[1000] = 3;
  std::vector<int32_t> every_other(2 * counts.size(), 77);
  for (std::size_t k = 0; k < counts.size(); ++k) every_other[2 * k] = static_cast<int32_t>(counts[k]);
  std::vector<int64_t> negatives = counts;
  negatives[5] = -4, negatives[2000] = -1;
  std::vector<int64_t> zeros = counts;
  zeros[5] = 0, zeros[2000] = 0;
  tessera::Options clamped;
  clamped.negative_reps = tessera::NegativeReps::clamp_to_zero;
  const auto sums = [&](const tessera::Repeats& reps, int64_t total, const tessera::Options& o) {
    std::vector<float> grad(static_cast<std::size_t>(total)), got(counts.size());
    for (std::size_t i = 0; i < grad.size(); ++i) grad[i] = static_cast<float>(i % 97) * 0.25f - 7.0f;
    const tessera::Plan plan = tessera::Plan::repeat_backward({total}, {}, DType::float32, {4000}, reps, 0, o);
#if HWY_ARCH_X86
    CHECK_MESSAGE(plan.describe().find("every 16th prefix sum") != std::string::npos, plan.describe());
#endif
    plan.execute(grad.data(), got.data(), got.size() * 4);
    return got;
  };
  CHECK(sums(tessera::Repeats(every_other.data(), counts.size(), 8), 8000, {}) == sums(counts, 8000, {}));
  CHECK(sums(negatives, 7996, clamped) == sums(zeros, 7996, {}));
  CHECK_THROWS_WITH_AS(tessera::Plan::repeat_backward({7996}, {}, DType::float32, {4000}, negatives, 0),
                       doctest::Contains("repeats[5] = -4"), tessera::InvalidArgument);
}

TEST_CASE("float32 sums into an output at any offset from a cache line: the aligned output's bits, nothing written outside, on every SIMD target") {
  // Streamed into an output off its vectors' boundaries (numpy's large arrays start 16 bytes past
  // one), the lanes path's one-leaf items assemble whole lines from consecutive vectors of sums
  // in registers and carry the line an item ends in to the next item, and a segment of count 0
  // takes its part of such lines (kernels/reduce.cpp, StreamSkewed): long items, short items read
  // row by row into registers or through the scratch row, rows not a whole number of vectors,
  // segments of counts 0-4 with empty ones between; per-element counts along the only axis, whose
  // segment groups' steps are rotated and blended the same way (SegmentGroupsC). Every offset of
  // a float in a 64-byte line, 1 and 4 threads, streamed and not: the bits of the same plan into a
  // 64-byte aligned output, and the 64 bytes either side untouched.
  TargetGuard guard;
  Rng rng(4242);
  std::vector<int64_t> counts(333);
  int64_t total = 0;
  for (int64_t& c : counts) total += c = rng.uniform(0, 4);
  std::vector<int64_t> counts1(5003);  // along the only axis: the segment groups (rep_counts_bwd's)
  int64_t total1 = 0;
  for (int64_t& c : counts1) total1 += c = rng.uniform(0, 4);
  struct Case {
    const char* name;
    std::function<tessera::Plan(const tessera::Options&)> plan;
    int64_t grad_elems;
    const char* path;  // the kernel that takes the skewed path (checked on x86)
  };
  const std::vector<Case> cases = {
      {"tile_backward, 4 addends, rows of 1000",
       [](const tessera::Options& o) { return tessera::Plan::tile_backward({160, 1000}, {}, DType::float32, {40, 1000}, {4, 1}, o); },
       160 * 1000, "reduce.lanes.reg.leaf"},
      {"tile_backward, 2x2 replicas, rows of 128 read whole (nchw's)",
       [](const tessera::Options& o) {
         return tessera::Plan::tile_backward({2, 4, 32, 256}, {}, DType::float32, {2, 4, 16, 128}, {1, 1, 2, 2}, o);
       },
       2 * 4 * 32 * 256, "reduce.lanes.reg.leaf"},
      // Rows of 40 read whole: an odd count of vectors of sums on AVX-512 (5 of 8 float64), whose
      // last is stored alone behind the pairs StreamSkewed loads back.
      {"tile_backward, 2x2 replicas, rows of 40 read whole",
       [](const tessera::Options& o) {
         return tessera::Plan::tile_backward({2, 3, 32, 80}, {}, DType::float32, {2, 3, 16, 40}, {1, 1, 2, 2}, o);
       },
       2 * 3 * 32 * 80, "reduce.lanes.reg.leaf"},
      {"tile_backward, 2x2 replicas, rows of 100",
       [](const tessera::Options& o) {
         return tessera::Plan::tile_backward({2, 3, 32, 200}, {}, DType::float32, {2, 3, 16, 100}, {1, 1, 2, 2}, o);
       },
       2 * 3 * 32 * 200, "reduce.lanes.reg.leaf"},
      {"repeat_backward by 4 along a middle axis, rows of 256 (the scratch row)",
       [](const tessera::Options& o) { return tessera::Plan::repeat_backward({4, 64, 256}, {}, DType::float32, {4, 16, 256}, 4, 1, o); },
       4 * 64 * 256, "reduce.lanes.reg.leaf"},
      {"repeat_backward, counts 0-4, rows of 256",
       [&](const tessera::Options& o) { return tessera::Plan::repeat_backward({total, 256}, {}, DType::float32, {333, 256}, counts, 0, o); },
       total * 256, "reduce.segments"},
      {"repeat_backward, counts 0-4, rows of 40",
       [&](const tessera::Options& o) { return tessera::Plan::repeat_backward({total, 40}, {}, DType::float32, {333, 40}, counts, 0, o); },
       total * 40, "reduce.segments"},
      {"repeat_backward, counts 0-4 along the only axis (the segment groups' steps)",
       [&](const tessera::Options& o) { return tessera::Plan::repeat_backward({total1}, {}, DType::float32, {5003}, counts1, 0, o); },
       total1, "reduce.segments.runs"},
  };
  for (const Case& c : cases) {
    const std::string name = c.name;
    INFO(name);
    std::vector<float> grad(static_cast<std::size_t>(c.grad_elems));
    for (float& x : grad) x = static_cast<float>(rng.uniform(-1000, 1000)) * 0.125f;  // exact sums
    for (const int64_t target : test::targets_to_test()) {
      hwy::SetSupportedTargetsForTest(target);
      const std::string tname = hwy::TargetName(target);
      INFO(tname);
      for (const auto nt : {tessera::NonTemporal::always, tessera::NonTemporal::never}) {
        tessera::Options o;
        o.nontemporal = nt;
        o.max_threads = 0;
        const tessera::Plan plan = c.plan(o);
#if HWY_ARCH_X86
        CHECK(plan.kernel_path() == std::string(c.path));
#endif
        const std::size_t bytes = plan.nbytes();
        // A 64-byte aligned output: the reference (the aligned paths' bits are checked above).
        // [64 bytes | up to 63 to a line | the line | offset up to 60 | the output | 64 bytes]
        std::vector<unsigned char> buf(bytes + 4 * 64);
        unsigned char* const line = buf.data() + 64 + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
        plan.execute(grad.data(), line, bytes);
        const std::vector<unsigned char> want(line, line + bytes);
        for (int64_t off = 4; off < 64; off += 4) {
          for (const int threads : {1, 4}) {
            const std::string how = std::string("nontemporal ") + (nt == tessera::NonTemporal::always ? "always" : "never") +
                                    ", dst + " + std::to_string(off) + " bytes, " + std::to_string(threads) + " threads";
            INFO(how);
            std::memset(buf.data(), 0xa5, buf.size());
            unsigned char* const out = line + off;
            tbb::task_arena arena(threads);
            arena.execute([&] { plan.execute(grad.data(), out, bytes); });
            CHECK(std::memcmp(out, want.data(), bytes) == 0);
            bool untouched = true;
            for (const unsigned char* p = out - 64; p < out; ++p) untouched = untouched && *p == 0xa5;
            for (const unsigned char* p = out + bytes; p < out + bytes + 64; ++p) untouched = untouched && *p == 0xa5;
            CHECK(untouched);
          }
        }
      }
    }
    hwy::SetSupportedTargetsForTest(0);
  }
}
