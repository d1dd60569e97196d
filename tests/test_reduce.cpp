// The reductions (the gradients): tile_backward, sum_to_shape and repeat_backward against an exact
// reference, for every dtype, strided gradients (permuted, reversed, stepped, zero strides), every
// entry point (C++ one-shot and allocating, plans, C, accumulate); determinism (the same bits for
// 1, 2, 3 and 8 threads, every max_threads, and every SIMD target); errors with the output
// untouched.
//
// Exactness: the sweep's values are small integers (times 1/8 for float32 and float64), so every
// partial sum is exact in the accumulator and the result is the exact sum rounded once, whatever
// the order: the comparison is bit for bit. The order itself is tested on data whose sums depend
// on it (float64 with full mantissas, float32 whose float64 sums round, checked to show it): the
// determinism cases here (threads that really run: global_control), the lanes order's leaves and
// tree against a model of the documented order; test_reduce_bits.cpp models the periodic order,
// tests the accumulation width (sums that round in the element type), one output's sum split over
// threads, and golden bits across architectures; tests/python/test_gradients.py compares with
// math.fsum and numpy.
#include <doctest/doctest.h>
#include <hwy/highway.h>
#include <hwy/targets.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "reduce_data.hpp"
#include "util.hpp"

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
#include "kernels/path_counters.hpp"
#endif

namespace {

using tessera::DType;
using tessera::Dims;
using test::Rng;
using Shape = std::vector<int64_t>;

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> d = {DType::float32, DType::float64, DType::float16,   DType::bfloat16,
                                       DType::complex64, DType::complex128, DType::int8, DType::int16,
                                       DType::int32,   DType::int64,   DType::uint8,     DType::uint16,
                                       DType::uint32,  DType::uint64};
  return d;
}

bool is_int(DType d) { return static_cast<int>(d) >= static_cast<int>(DType::int8); }

// Test-side encodings (independent of the library's): value v (an integer, or an integer / 8 for
// the 32- and 64-bit floats) stored as dtype, and decoded back to scaled integer units.
double f16_decode(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}
uint16_t f16_encode_exact(double v) {  // v an integer with |v| <= 2048
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    if (f16_decode(static_cast<uint16_t>(h)) == std::fabs(v))
      return static_cast<uint16_t>(h | (v < 0 ? 0x8000 : 0));
  }
  FAIL("not exact in float16: " << v);
  return 0;
}

// Element `units` (an integer) written into p as dtype. Real part only for complex: the imaginary
// part is -units (so the two halves differ).
void store(DType d, unsigned char* p, int64_t units) {
  switch (d) {
    case DType::float32: { const float v = static_cast<float>(units) / 8; std::memcpy(p, &v, 4); break; }
    case DType::float64: { const double v = static_cast<double>(units) / 8; std::memcpy(p, &v, 8); break; }
    case DType::complex64: { const float v[2] = {static_cast<float>(units) / 8, static_cast<float>(-units) / 8}; std::memcpy(p, v, 8); break; }
    case DType::complex128: { const double v[2] = {static_cast<double>(units) / 8, static_cast<double>(-units) / 8}; std::memcpy(p, v, 16); break; }
    case DType::float16: { const uint16_t h = f16_encode_exact(static_cast<double>(units)); std::memcpy(p, &h, 2); break; }
    case DType::bfloat16: { const float f = static_cast<float>(units); uint32_t b; std::memcpy(&b, &f, 4); const uint16_t h = static_cast<uint16_t>(b >> 16); std::memcpy(p, &h, 2); break; }
    default: { const uint64_t u = static_cast<uint64_t>(units); std::memcpy(p, &u, tessera::itemsize_of(d)); break; }
  }
}

// The exact sum (in units) as the bytes the library must write.
std::vector<unsigned char> encode(DType d, int64_t units) {
  std::vector<unsigned char> b(tessera::itemsize_of(d));
  store(d, b.data(), units);
  if (d == DType::float32 || d == DType::complex64) {  // -0.0 is never a sum of these values but 0 - 0
  }
  return b;
}

// The largest |value| per element, so that sums of up to max_addends stay exact in every dtype.
int64_t value_bound(DType d) {
  switch (d) {
    case DType::float16: return 8;     // |sum| <= 8 * 128 = 1024: exact in binary16
    case DType::bfloat16: return 1;    // |sum| <= 128: exact in bfloat16
    default: return 1000;
  }
}
constexpr int64_t kMaxAddends = 128;

// A gradient: a parent buffer and a view of `shape` with axes permuted, reversed, stepped or
// broadcast (zero stride), strides in bytes (multiples of the itemsize).
struct Grad {
  std::vector<unsigned char> storage;
  std::size_t origin = 0;
  Shape shape, strides;
  DType dtype = DType::float32;
  std::vector<int64_t> units;  // per parent element
  const unsigned char* data() const { return storage.data() + origin; }
  // Units of the element at multi-index idx.
  int64_t at(const Shape& idx) const {
    int64_t off = static_cast<int64_t>(origin);
    for (std::size_t i = 0; i < idx.size(); ++i) off += idx[i] * strides[i];
    return units[static_cast<std::size_t>(off) / tessera::itemsize_of(dtype)];
  }
};

Grad make_grad(Rng& rng, const Shape& shape, DType d, bool contiguous) {
  Grad g;
  g.shape = shape;
  g.dtype = d;
  const int n = static_cast<int>(shape.size());
  const int64_t isz = static_cast<int64_t>(tessera::itemsize_of(d));
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  if (!contiguous) rng.shuffle(order);
  g.strides.assign(static_cast<std::size_t>(n), 0);
  int64_t step = isz * (contiguous ? 1 : rng.uniform(1, 2));
  for (int k = n - 1; k >= 0; --k) {  // order[n-1] is innermost in memory
    const int a = order[static_cast<std::size_t>(k)];
    if (!contiguous && shape[a] > 1 && rng.coin(10)) {
      g.strides[a] = 0;
      continue;
    }
    g.strides[a] = step;
    step *= std::max<int64_t>(1, shape[a]);
  }
  const int64_t elems = step / isz + 1;
  int64_t low = 0;
  for (int a = 0; a < n; ++a) {
    if (!contiguous && shape[a] > 1 && rng.coin(25)) g.strides[a] = -g.strides[a];
    if (g.strides[a] < 0) low += (shape[a] - 1) * g.strides[a];
  }
  g.origin = static_cast<std::size_t>(-low);
  g.storage.assign(static_cast<std::size_t>(elems * isz + (-low)), 0);
  g.units.assign(g.storage.size() / static_cast<std::size_t>(isz) + 1, 0);
  const int64_t bound = value_bound(d);
  for (std::size_t e = 0; e + 1 < g.units.size(); ++e) {
    int64_t u = rng.uniform(-bound, bound);
    if (is_int(d)) u = static_cast<int64_t>(rng.uniform(0, INT64_MAX)) * (rng.coin() ? 1 : -1);
    g.units[e] = u;
    store(d, g.storage.data() + e * static_cast<std::size_t>(isz), u);
  }
  return g;
}

// Sums in units, per output element: the integer sum for floats (exact), the wrapping sum for
// integers; then the expected bytes of the output.
std::vector<unsigned char> expected_bytes(DType d, const std::vector<int64_t>& sums) {
  std::vector<unsigned char> out;
  for (const int64_t s : sums) {
    const std::vector<unsigned char> e = encode(d, s);
    out.insert(out.end(), e.begin(), e.end());
  }
  return out;
}

// For every gradient element, the output element it adds into (-1: none), by `source`.
template <class Source>
std::vector<int64_t> reference(const Grad& g, int64_t out_count, const Source& source) {
  std::vector<int64_t> sums(static_cast<std::size_t>(out_count), 0);
  const int n = static_cast<int>(g.shape.size());
  int64_t count = 1;
  for (const int64_t e : g.shape) count *= e;
  Shape idx(static_cast<std::size_t>(n), 0);
  for (int64_t c = 0; c < count; ++c) {
    const int64_t o = source(idx);
    sums[static_cast<std::size_t>(o)] = static_cast<int64_t>(static_cast<uint64_t>(sums[static_cast<std::size_t>(o)]) +
                                                             static_cast<uint64_t>(g.at(idx)));
    for (int i = n - 1; i >= 0; --i) {
      if (++idx[static_cast<std::size_t>(i)] < g.shape[static_cast<std::size_t>(i)]) break;
      idx[static_cast<std::size_t>(i)] = 0;
    }
  }
  return sums;
}

int64_t flat(const Shape& idx, const Shape& shape) {
  int64_t f = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) f = f * shape[i] + idx[i];
  return f;
}
int64_t count_of(const Shape& s) {
  int64_t c = 1;
  for (const int64_t e : s) c *= e;
  return c;
}

std::string str(const Shape& s) { return test::to_string(s); }

// Runs `call(dst, bytes, options)` (a one-shot entry point) into a buffer pre-filled with `prior`
// units (accumulate) or a pattern, and compares with the reference sums.
template <class Call>
void check_call(const std::string& what, DType d, const std::vector<int64_t>& sums, const Call& call, Rng& rng,
                const std::string& context) {
  const std::size_t isz = tessera::itemsize_of(d);
  const bool accumulate = rng.coin(30);
  std::vector<int64_t> prior(sums.size(), 0), want = sums;
  std::vector<unsigned char> dst(sums.size() * isz + 64, 0xA5);
  if (accumulate) {
    for (std::size_t i = 0; i < sums.size(); ++i) {
      prior[i] = is_int(d) ? static_cast<int64_t>(rng.uniform(0, INT64_MAX)) : rng.uniform(-4, 4);
      store(d, dst.data() + i * isz, prior[i]);
      want[i] = static_cast<int64_t>(static_cast<uint64_t>(prior[i]) + static_cast<uint64_t>(sums[i]));
    }
  }
  tessera::Options o;
  o.accumulate = accumulate;
  o.max_threads = static_cast<int>(rng.uniform(0, 3));
  call(dst.data(), sums.size() * isz, o);
  const std::vector<unsigned char> exp = expected_bytes(d, want);
  const std::string info = what + " " + context + " dtype " + tessera::dtype_name(d) + (accumulate ? " accumulate" : "");
  INFO(info);
  for (std::size_t i = 0; i < exp.size(); ++i) {
    if (dst[i] != exp[i]) {
      FAIL_CHECK("byte " << i << " (element " << i / isz << ") is " << int(dst[i]) << ", expected " << int(exp[i]));
      return;
    }
  }
  for (std::size_t i = exp.size(); i < dst.size(); ++i) REQUIRE(dst[i] == 0xA5);  // nothing past the output
}

// Integers and -0.0: a float sum of values that are all zero is +0 or -0 by IEEE rules; the
// reference's encode gives +0. Values are drawn from [-bound, bound], so such sums occur: a sum of
// zeros in which some are -0.0 cannot happen (store writes +0 for units 0). OK.

Shape random_shape(Rng& rng, int max_ndim, int64_t max_extent) {
  Shape s(static_cast<std::size_t>(rng.uniform(0, max_ndim)));
  for (auto& e : s) e = rng.coin(5) ? 0 : rng.uniform(1, max_extent);
  return s;
}

}  // namespace

TEST_CASE("tile_backward, sum_to_shape and repeat_backward equal the exact sums, every dtype and layout") {
  Rng rng(20261123);
  int cases = 0;
  for (int iter = 0; iter < test::scaled(1500); ++iter) {
    const DType d = rng.pick(all_dtypes());
    const int op = static_cast<int>(rng.uniform(0, 2));
    if (op == 0) {  // tile_backward
      const Shape in = random_shape(rng, 3, 5);
      Shape reps = random_shape(rng, 3, 3);
      for (auto& r : reps) r = rng.coin(5) ? 0 : r;
      const Dims out = tessera::tile_shape(in, reps);
      const Shape gshape(out.begin(), out.end());
      const int64_t per = count_of(gshape) / std::max<int64_t>(1, count_of(in));
      if (per > kMaxAddends) continue;
      const Grad g = make_grad(rng, gshape, d, rng.coin(30));
      const int D = static_cast<int>(gshape.size()), n = static_cast<int>(in.size());
      const auto sums = reference(g, count_of(in), [&](const Shape& idx) {
        Shape src(in.size());
        for (int i = 0; i < n; ++i) src[i] = idx[i + D - n] % in[i];
        return flat(src, in);
      });
      const std::string ctx = "grad " + str(gshape) + " strides " + str(g.strides) + " in " + str(in) + " reps " + str(reps);
      check_call("tile_backward", d, sums, [&](unsigned char* dst, std::size_t bytes, const tessera::Options& o) {
        switch (rng.uniform(0, 2)) {
          case 0: tessera::tile_backward(g.data(), gshape, g.strides, d, in, reps, dst, bytes, o); break;
          case 1: tessera::Plan::tile_backward(gshape, g.strides, d, in, reps, o).execute(g.data(), dst, bytes); break;
          default: {
            tessera_options co;
            tessera_options_init(&co);
            co.max_threads = o.max_threads;
            co.accumulate = o.accumulate;
            REQUIRE(tessera_tile_backward_ex(g.data(), D, gshape.data(), g.strides.data(), static_cast<int>(d), n,
                                             in.data(), static_cast<int>(reps.size()), reps.data(), dst, bytes,
                                             &co) == TESSERA_OK);
          }
        }
      }, rng, ctx);
      if (!rng.coin(20)) continue;
      // The allocating call: a new array equal to the sums.
      const tessera::Array a = tessera::tile_backward(g.data(), gshape, g.strides, d, in, reps);
      REQUIRE(a.shape() == Dims(in));
      const auto exp = expected_bytes(d, sums);
      REQUIRE(a.nbytes() == exp.size());
      CHECK((exp.empty() || std::memcmp(a.data(), exp.data(), exp.size()) == 0));
    } else if (op == 1) {  // sum_to_shape
      const Shape a = random_shape(rng, 4, 6);
      Shape target;
      const int keep = static_cast<int>(rng.uniform(0, static_cast<int64_t>(a.size())));
      for (int i = static_cast<int>(a.size()) - keep; i < static_cast<int>(a.size()); ++i)
        target.push_back(rng.coin(50) ? 1 : a[static_cast<std::size_t>(i)]);
      const int64_t per = count_of(a) / std::max<int64_t>(1, count_of(target));
      if (per > kMaxAddends) continue;
      const Grad g = make_grad(rng, a, d, rng.coin(30));
      const int m = static_cast<int>(a.size()), k = static_cast<int>(target.size());
      const auto sums = reference(g, count_of(target), [&](const Shape& idx) {
        Shape t(target.size());
        for (int j = 0; j < k; ++j) t[j] = target[j] == 1 ? 0 : idx[j + m - k];
        return flat(t, target);
      });
      const std::string ctx = "A " + str(a) + " strides " + str(g.strides) + " target " + str(target);
      check_call("sum_to_shape", d, sums, [&](unsigned char* dst, std::size_t bytes, const tessera::Options& o) {
        if (rng.coin()) {
          tessera::sum_to_shape(g.data(), a, g.strides, d, target, dst, bytes, o);
        } else {
          tessera_options co;
          tessera_options_init(&co);
          co.accumulate = o.accumulate;
          REQUIRE(tessera_sum_to_shape_ex(g.data(), m, a.data(), g.strides.data(), static_cast<int>(d), k,
                                          target.data(), dst, bytes, &co) == TESSERA_OK);
        }
      }, rng, ctx);
    } else {  // repeat_backward
      const Shape in = random_shape(rng, 3, 5);
      const bool has_axis = !in.empty() && rng.coin(80);
      const int axis = has_axis ? static_cast<int>(rng.uniform(0, static_cast<int64_t>(in.size()) - 1)) : 0;
      const int64_t extent = has_axis ? in[static_cast<std::size_t>(axis)] : count_of(in);
      std::vector<int64_t> counts;
      if (rng.coin(50)) counts.push_back(rng.uniform(0, 6));
      else for (int64_t i = 0; i < extent; ++i) counts.push_back(rng.coin(10) ? 0 : rng.uniform(1, 40));
      const std::optional<int> ax = has_axis ? std::optional<int>(axis - (rng.coin() ? static_cast<int>(in.size()) : 0)) : std::nullopt;
      const Dims out = tessera::repeat_shape(in, counts, ax);
      const Shape gshape(out.begin(), out.end());
      const Grad g = make_grad(rng, gshape, d, rng.coin(30));
      std::vector<int64_t> prefix(1, 0);
      for (int64_t i = 0; i < extent; ++i) prefix.push_back(prefix.back() + counts[counts.size() == 1 ? 0 : static_cast<std::size_t>(i)]);
      const auto src_of = [&](int64_t t) {  // the source index whose segment holds t
        return static_cast<int64_t>(std::upper_bound(prefix.begin(), prefix.end(), t) - prefix.begin()) - 1;
      };
      const auto sums = reference(g, count_of(in), [&](const Shape& idx) {
        if (!has_axis) return src_of(idx[0]);
        Shape s = idx;
        s[static_cast<std::size_t>(axis)] = src_of(idx[static_cast<std::size_t>(axis)]);
        return flat(s, in);
      });
      int64_t most = 0;
      for (int64_t i = 0; i < extent; ++i) most = std::max(most, prefix[i + 1] - prefix[i]);
      if (most > kMaxAddends) continue;
      const std::string ctx = "grad " + str(gshape) + " strides " + str(g.strides) + " in " + str(in) + " counts " +
                              std::to_string(counts.size()) + (has_axis ? " axis " + std::to_string(*ax) : " no axis");
      check_call("repeat_backward", d, sums, [&](unsigned char* dst, std::size_t bytes, const tessera::Options& o) {
        if (rng.coin()) {
          tessera::repeat_backward(g.data(), gshape, g.strides, d, in, counts, ax, dst, bytes, o);
        } else {
          tessera_options co;
          tessera_options_init(&co);
          co.accumulate = o.accumulate;
          REQUIRE(tessera_repeat_backward_ex(g.data(), static_cast<int>(gshape.size()), gshape.data(),
                                             g.strides.data(), static_cast<int>(d), static_cast<int>(in.size()),
                                             in.data(), static_cast<int64_t>(counts.size()), counts.data(),
                                             ax ? *ax : TESSERA_AXIS_NONE, dst, bytes, &co) == TESSERA_OK);
        }
      }, rng, ctx);
    }
    ++cases;
  }
  CHECK(cases > test::scaled(1500) / 2);
}

namespace {

// Float data whose sums round (uniform in [0, 1) and signed), for the order tests.
std::vector<float> random_floats(std::size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.uniform(-(int64_t{1} << 30), int64_t{1} << 30)) / 1e9f;
  return v;
}

struct OrderCase {
  const char* name;
  Shape grad;          // C-contiguous float32 gradient
  int op;              // 0 tile_backward (in, reps), 1 sum_to_shape (target = in)
  Shape in, reps;
  const char* path;    // the plan's path
};

const std::vector<OrderCase>& order_cases() {
  static const std::vector<OrderCase> c = {
      {"outer", {4096, 512}, 0, {1024, 512}, {4, 1}, "reduce.lanes"},
      {"rows to one row", {2048, 1024}, 1, {1, 1024}, {}, "reduce.lanes"},
      // 8 leaves of rows of 20000: strips of 9344 elements (float32), the last of 1312, and 3
      // items: 2 or more threads split each item's leaves (the short strip's chunks combined).
      {"rows to one long row", {64, 20000}, 1, {1, 20000}, {}, "reduce.lanes"},
      {"rows to a column", {1024, 2048}, 1, {1024, 1}, {}, "reduce.periodic"},
      {"all to a scalar", {1 << 21}, 1, {}, {}, "reduce.periodic"},
      {"narrow", {16384, 120}, 0, {16384, 3}, {1, 40}, "reduce.periodic"},
      {"column", {131072, 16}, 0, {131072, 1}, {1, 16}, "reduce.periodic"},
      // Short runs whose item count is no multiple of the kernels' batch of items (a vector's
      // lanes), runs with partial blocks and partial vectors:
      {"column, 1001 items", {1001, 16}, 0, {1001, 1}, {1, 16}, "reduce.periodic"},
      {"column, runs of 37", {1001, 37}, 1, {1001, 1}, {}, "reduce.periodic"},
      {"narrow, 37 copies", {1001, 111}, 0, {1001, 3}, {1, 37}, "reduce.periodic"},
      {"narrow, 29 copies", {999, 87}, 0, {999, 3}, {1, 29}, "reduce.periodic"},
      {"short rows", {131072, 9}, 1, {131072, 1}, {}, "reduce.strided"},
      {"pairs of a column", {131072, 2, 16}, 0, {131072, 1, 8}, {1, 2, 2}, "reduce.lanes"},
      {"pairs", {1 << 20}, 1, {}, {}, "reduce.periodic"},
      {"mixed3d", {64, 64, 128}, 0, {32, 32, 32}, {2, 2, 4}, "reduce.lanes"},
  };
  return c;
}

// For every gradient element of an order case (C order), the output element it adds into.
std::vector<int64_t> order_outputs(const OrderCase& c) {
  std::vector<int64_t> out;
  const int D = static_cast<int>(c.grad.size()), k = static_cast<int>(c.in.size());
  Shape idx(c.grad.size(), 0), o(c.in.size());
  for (int64_t e = 0; e < count_of(c.grad); ++e) {
    for (int j = 0; j < k; ++j)
      o[j] = c.op == 0 ? idx[j + D - k] % c.in[j] : c.in[j] == 1 ? 0 : idx[j + D - k];
    out.push_back(flat(o, c.in));
    for (int i = D - 1; i >= 0; --i) {
      if (++idx[i] < c.grad[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

// float32 values for an order case whose float64 sums round, visibly in float32 (cancelling pairs
// among each output's addends).
std::vector<float> order_floats(const OrderCase& c, uint64_t seed) {
  const std::vector<int64_t> out = order_outputs(c);
  std::vector<std::vector<std::size_t>> groups(static_cast<std::size_t>(count_of(c.in)));
  for (std::size_t e = 0; e < out.size(); ++e) groups[static_cast<std::size_t>(out[e])].push_back(e);
  return test::cancelling_floats(out.size(), groups, seed);
}

// The order cases' data in `dtype` from float values f: float64 with full 53-bit mantissas (f / 3),
// float32 the values f32 (order_floats: their float64 sums round), bfloat16 the top half of each
// f32 (the huge pairs still cancel; float32 partial sums near 2^40 lose the small values), float16
// a finite value from the bits of f (sign, exponent 1-29, mantissa). Every leg's sums depend on the
// order (checked by the determinism test for float64, float32 and bfloat16).
std::vector<unsigned char> order_data(const std::vector<float>& f, const std::vector<float>& f32, DType dtype) {
  std::vector<unsigned char> data(f.size() * tessera::itemsize_of(dtype));
  for (std::size_t i = 0; i < f.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, dtype == DType::bfloat16 ? &f32[i] : &f[i], 4);
    if (dtype == DType::float64) {
      const double x = f[i] / 3.0;
      std::memcpy(data.data() + 8 * i, &x, 8);
    } else if (dtype == DType::float32) {
      std::memcpy(data.data() + 4 * i, &f32[i], 4);
    } else {
      const auto h = static_cast<uint16_t>(dtype == DType::bfloat16
                                               ? bits >> 16
                                               : (bits >> 16 & 0x8000) | (1 + bits % 29) << 10 | (bits & 0x3ff));
      std::memcpy(data.data() + 2 * i, &h, 2);
    }
  }
  return data;
}

std::vector<unsigned char> run_order_case(const OrderCase& c, DType dtype, const std::vector<unsigned char>& data,
                                          int max_threads, std::string* path = nullptr) {
  tessera::Options o;
  o.max_threads = max_threads;
  const tessera::Plan plan = c.op == 0 ? tessera::Plan::tile_backward(c.grad, {}, dtype, c.in, c.reps, o)
                                       : tessera::Plan::sum_to_shape(c.grad, {}, dtype, c.in, o);
  if (path) *path = plan.kernel_path();
  std::vector<unsigned char> out(plan.nbytes());
  plan.execute(data.data(), out.data(), out.size());
  return out;
}

}  // namespace

// Under emulation (TESSERA_TEST_SCALE > 1: tests/run --cross) every scale-th case only.
bool order_case_runs(const OrderCase& c) {
  const auto i = static_cast<int>(&c - order_cases().data());
  return test::scale_takes(i);
}

TEST_CASE("reductions give the same bits for 1, 2, 3 and 8 threads and every max_threads") {
  // Arenas of 2, 3 and 8 threads that TBB staffs (global_control: without it TBB caps the workers
  // at the machine's cores, and on 2 cores every arena ran at most 2 threads), on data whose sums
  // depend on the order of the additions in every leg (checked for float32 and float64: the
  // addends of each output summed in reverse give other bits), so that a split that changed the
  // order would show. test_reduce_bits.cpp proves that threads do split one output's sum.
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);
  for (const OrderCase& c : order_cases()) {
    if (!order_case_runs(c)) continue;
    const std::string name = c.name;  // INFO keeps a reference: named, not a temporary
    INFO(name);
    const std::vector<float> f = random_floats(static_cast<std::size_t>(count_of(c.grad)), 7);
    const std::vector<float> f32 = order_floats(c, 8);
    const std::vector<int64_t> outs = order_outputs(c);
    const int64_t nred = count_of(c.grad) / count_of(c.in);
    for (const DType dtype : {DType::float32, DType::float64, DType::bfloat16}) {
      const std::string dname = tessera::dtype_name(dtype);
      INFO(dname);
      const std::vector<unsigned char> data = order_data(f, f32, dtype);
      std::string path;
      std::vector<unsigned char> one_thread;
      {
        tbb::task_arena one(1);
        one.execute([&] { one_thread = run_order_case(c, dtype, data, 0, &path); });
      }
      CHECK(path.rfind(c.path, 0) == 0);  // the case's path; the target chooses its kernel
      for (const int threads : {2, 3, 8}) {
        tbb::task_arena arena(threads);
        std::vector<unsigned char> got;
        arena.execute([&] { got = run_order_case(c, dtype, data, 0); });
        CHECK_MESSAGE(got == one_thread, "arena of " << threads);
        for (const int mt : {1, 2, 5}) {
          arena.execute([&] { got = run_order_case(c, dtype, data, mt); });
          CHECK_MESSAGE(got == one_thread, "arena of " << threads << ", max_threads " << mt);
        }
      }
      if (nred < 3) continue;  // two addends: one rounding in any order
      // The data show the order: each output's addends summed last to first in the accumulator
      // (float64; float32 for bfloat16), rounded once, differ from the result in a tenth of the
      // outputs or more.
      std::vector<double> reversed(static_cast<std::size_t>(count_of(c.in)), 0.0);
      std::vector<float> reversed_f(reversed.size(), 0.0f);
      for (std::size_t e = outs.size(); e-- > 0;) {
        const auto o = static_cast<std::size_t>(outs[e]);
        if (dtype == DType::float64) {
          double x;
          std::memcpy(&x, data.data() + 8 * e, 8);
          reversed[o] += x;
        } else if (dtype == DType::float32) {
          reversed[o] += f32[e];
        } else {
          uint16_t h;
          std::memcpy(&h, data.data() + 2 * e, 2);
          const uint32_t b = static_cast<uint32_t>(h) << 16;
          float x;
          std::memcpy(&x, &b, 4);
          reversed_f[o] += x;
        }
      }
      int64_t differ = 0;
      for (std::size_t o = 0; o < reversed.size(); ++o) {
        if (dtype == DType::float64) {
          differ += std::memcmp(&reversed[o], one_thread.data() + 8 * o, 8) != 0;
        } else if (dtype == DType::float32) {
          const float r = static_cast<float>(reversed[o]);
          differ += std::memcmp(&r, one_thread.data() + 4 * o, 4) != 0;
        } else {  // float32 to bfloat16, to nearest even (no NaN here)
          uint32_t b;
          std::memcpy(&b, &reversed_f[o], 4);
          const auto h = static_cast<uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
          differ += std::memcmp(&h, one_thread.data() + 2 * o, 2) != 0;
        }
      }
      CHECK_MESSAGE(differ * 10 >= static_cast<int64_t>(reversed.size()),
                    differ << " of " << reversed.size() << " outputs depend on the order");
    }
  }
}

TEST_CASE("reductions give the same bits on every SIMD target") {
  struct Guard {
    ~Guard() { hwy::SetSupportedTargetsForTest(0); }
  } guard;
  // Listed once, before any SetSupportedTargetsForTest: after it, the list holds only that target.
  // Every target, TESSERA_TEST_SKIP_TARGETS or not: the comparison across targets is the point
  // (NEON against SVE happens only in the SVE runs).
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
#if HWY_ARCH_X86_64
  REQUIRE(targets.size() >= 2);  // x86-64 builds compile 4-6 targets (an aarch64 NEON machine may have 1)
#endif
  for (const OrderCase& c : order_cases()) {
    if (!order_case_runs(c)) continue;
    const std::string name = c.name;  // INFO keeps a reference: named, not a temporary
    INFO(name);
    const std::vector<float> f = random_floats(static_cast<std::size_t>(count_of(c.grad)), 11);
    const std::vector<float> f32 = order_floats(c, 12);
    for (const DType dtype : {DType::float64, DType::float32, DType::float16, DType::bfloat16}) {
      const std::string dname = tessera::dtype_name(dtype);
      INFO(dname);
      const std::vector<unsigned char> data = order_data(f, f32, dtype);
      std::vector<unsigned char> first[2];
      bool have = false;
      for (const int64_t target : targets) {
        hwy::SetSupportedTargetsForTest(target);
        const std::string tname = hwy::TargetName(target);
        INFO(tname);
        for (const bool accumulate : {false, true}) {
          INFO("accumulate " << accumulate);
          tessera::Options o;
          o.accumulate = accumulate;
          const tessera::Plan plan = c.op == 0 ? tessera::Plan::tile_backward(c.grad, {}, dtype, c.in, c.reps, o)
                                               : tessera::Plan::sum_to_shape(c.grad, {}, dtype, c.in, o);
          std::vector<unsigned char> out(plan.nbytes());
          // Accumulating: into the first elements of the data (finite values of the dtype).
          if (accumulate) std::memcpy(out.data(), data.data(), std::min(out.size(), data.size()));
          plan.execute(data.data(), out.data(), out.size());
          if (!have) {
            first[accumulate] = out;
          } else {
            CHECK(out == first[accumulate]);
          }
        }
        have = true;
      }
    }
  }
}

TEST_CASE("the lanes order's leaves and tree (1 to 17 leaves) are the documented order, on every SIMD target") {
  struct Guard {
    ~Guard() { hwy::SetSupportedTargetsForTest(0); }
  } guard;
  const std::vector<int64_t> targets = test::targets_to_test();
  // tile_backward of (5, 37) by reps (a, b): a * b addends per output element (summed a outside
  // summed b), rows of 37 elements (every vector width leaves a partial vector), float64 with full
  // mantissas (every order gives other bits). 5 = one leaf unrolled; 12, 16 = two leaves, 24 =
  // three, 27 = four (the last of 3 addends): unrolled trees; 40 = five leaves, 136 = 17 leaves:
  // the counter at run time.
  const int64_t rows = 5, cols = 37;
  for (const Shape& reps : std::vector<Shape>{{1, 5}, {3, 4}, {4, 4}, {3, 8}, {3, 9}, {5, 8}, {17, 8}}) {
    const int64_t a = reps[0], b = reps[1];
    INFO("reps " << a << " x " << b);
    const Shape grad = {a * rows, b * cols};
    const std::vector<float> f = random_floats(static_cast<std::size_t>(grad[0] * grad[1]), 29);
    std::vector<double> g(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) g[i] = f[i] / 3.0;
    std::vector<double> want(static_cast<std::size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        std::vector<double> addends;
        for (int64_t ia = 0; ia < a; ++ia)
          for (int64_t ib = 0; ib < b; ++ib)
            addends.push_back(g[static_cast<std::size_t>((ia * rows + r) * grad[1] + ib * cols + c)]);
        want[static_cast<std::size_t>(r * cols + c)] = test::lanes_order_sum(addends);
      }
    }
    for (const int64_t target : targets) {
      hwy::SetSupportedTargetsForTest(target);
      const std::string tname = hwy::TargetName(target);  // INFO keeps a reference: named
      INFO(tname);
      for (const int max_threads : {1, 0}) {
        INFO("max_threads " << max_threads);
        tessera::Options o;
        o.max_threads = max_threads;
        const tessera::Plan plan = tessera::Plan::tile_backward(grad, {}, DType::float64, {rows, cols}, reps, o);
        CHECK(std::string(plan.kernel_path()).rfind("reduce.lanes.", 0) == 0);
        std::vector<double> out(want.size());
        plan.execute(g.data(), out.data(), out.size() * sizeof(double));
        CHECK(std::memcmp(out.data(), want.data(), out.size() * sizeof(double)) == 0);
      }
    }
  }
}

TEST_CASE("short runs of 1 and 3 outputs, batched across items, give every item its own sums") {
  // The periodic kernels sum N items (a vector's lanes) at once when each sums a short run of 1 or
  // 3 outputs: items whose count is no multiple of N, outputs of an item that are not adjacent
  // (repeat_backward's per-element counts: a segment's items lie a row of the result apart), and
  // accumulation. Small integer values: every sum is exact, so compared bit for bit.
  struct Case {
    const char* name;
    Shape in;
    std::vector<int64_t> counts;  // per-element repeats along axis 1
  };
  const Case cases[] = {
      {"3 outputs, items a row apart", {19, 3, 3}, {30, 25, 40}},
      {"1 output, items a row apart", {21, 2, 1}, {33, 16}},
  };
  for (const Case& c : cases) {
    for (const DType d : {DType::float64, DType::float32}) {
      for (const bool accumulate : {false, true}) {
        const std::string ctx = std::string(c.name) + ", " + tessera::dtype_name(d) + (accumulate ? ", accumulate" : "");
        INFO(ctx);
        const int64_t m = c.in[0], k = c.in[1], w = c.in[2];
        const int64_t rows = std::accumulate(c.counts.begin(), c.counts.end(), int64_t{0});
        const Shape grad{m, rows, w};
        std::vector<double> g(static_cast<std::size_t>(m * rows * w));
        for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<double>(static_cast<int64_t>(i * 7919 % 201) - 100);
        std::vector<double> want(static_cast<std::size_t>(m * k * w), accumulate ? 5.0 : 0.0);
        for (int64_t a = 0; a < m; ++a)
          for (int64_t r = 0, j = 0, left = c.counts[0]; r < rows; ++r, --left) {
            while (left == 0) left = c.counts[static_cast<std::size_t>(++j)];
            for (int64_t e = 0; e < w; ++e)
              want[static_cast<std::size_t>((a * k + j) * w + e)] += g[static_cast<std::size_t>((a * rows + r) * w + e)];
          }
        tessera::Options o;
        o.accumulate = accumulate;
        const tessera::Plan plan = tessera::Plan::repeat_backward(grad, {}, d, c.in, c.counts, 1, o);
        std::vector<unsigned char> src(g.size() * tessera::itemsize_of(d)), out(plan.nbytes()), exp(plan.nbytes());
        for (std::size_t i = 0; i < g.size(); ++i) {
          if (d == DType::float64) std::memcpy(src.data() + 8 * i, &g[i], 8);
          else { const float x = static_cast<float>(g[i]); std::memcpy(src.data() + 4 * i, &x, 4); }
        }
        for (std::size_t i = 0; i < want.size(); ++i) {
          const double init = accumulate ? 5.0 : 0.0;
          if (d == DType::float64) {
            std::memcpy(out.data() + 8 * i, &init, 8);
            std::memcpy(exp.data() + 8 * i, &want[i], 8);
          } else {
            const float fi = static_cast<float>(init), fw = static_cast<float>(want[i]);
            std::memcpy(out.data() + 4 * i, &fi, 4);
            std::memcpy(exp.data() + 4 * i, &fw, 4);
          }
        }
        plan.execute(src.data(), out.data(), out.size());
        CHECK(out == exp);
      }
    }
  }
}

TEST_CASE("float32 pairs (repeat_backward by 2) equal the float64 sum rounded once, on every SIMD target") {
  // The interleaved path adds float32 pairs in float32 (no accumulator row): the same bits as the
  // float64 sum rounded once, whatever the magnitudes (subnormals, overflow to infinity, -0.0).
  struct Guard {
    ~Guard() { hwy::SetSupportedTargetsForTest(0); }
  } guard;
  Rng rng(2024);
  const int64_t rows = 300, cols = 77;  // the gradient: (rows, 2 * cols)
  std::vector<float> g(static_cast<std::size_t>(rows * 2 * cols));
  for (float& x : g) {
    uint32_t bits;
    do {
      bits = static_cast<uint32_t>(rng.uniform(0, 0xffffffffLL));
      if (rng.coin(10)) bits &= 0x807fffffu;         // a subnormal (or a zero)
      else if (rng.coin(10)) bits |= 0x7f000000u;    // near the top: pairs overflow
    } while ((bits & 0x7f800000u) == 0x7f800000u);   // no infinity or NaN in the input
    std::memcpy(&x, &bits, 4);
  }
  std::vector<float> want(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double sum = static_cast<double>(g[2 * i]) + static_cast<double>(g[2 * i + 1]);
    want[i] = static_cast<float>(sum + 0.0);
  }
  for (const int64_t target : test::targets_to_test()) {
    hwy::SetSupportedTargetsForTest(target);
    INFO("target " << hwy::TargetName(target));
    // Aligned buffers, a result starting mid-line, and gradient and result off their elements'
    // alignment (the caller's buffers need none: scalar ends through memcpy).
    const std::pair<std::size_t, std::size_t> shifts[] = {{0, 0}, {0, 4}, {1, 2}, {4, 6}};  // bytes
    for (const auto& [src_shift, dst_shift] : shifts) {
      const tessera::Plan plan = tessera::Plan::repeat_backward({rows, 2 * cols}, {}, DType::float32, {rows, cols}, 2, 1);
      CHECK(std::string(plan.kernel_path()) == "reduce.interleaved.pair_f32");
      std::vector<unsigned char> src(g.size() * 4 + 8), out(want.size() * 4 + 8, 0x5a);
      std::memcpy(src.data() + src_shift, g.data(), g.size() * 4);
      plan.execute(src.data() + src_shift, out.data() + dst_shift, want.size() * 4);
      CHECK(std::memcmp(out.data() + dst_shift, want.data(), want.size() * 4) == 0);
    }
  }
}

TEST_CASE("a sum of only -0.0 values is +0.0 on every path, as numpy's and torch's sums") {
  // The kernels start from -0.0 (x + -0.0 == x); the stored result adds +0.0, so a result element
  // whose addends are all -0.0 is +0.0, written or accumulated into -0.0 — numpy and torch start
  // their sums from +0.0.
  struct Case {
    const char* name;
    Shape grad;
    int op;  // 0 tile_backward, 1 sum_to_shape, 2 repeat_backward (scalar count, axis 1)
    Shape in, reps;
  };
  const Case cases[] = {
      {"lanes, one leaf", {4, 64, 40}, 0, {1, 64, 40}, {4, 1, 1}},
      {"lanes, register tree", {64, 100}, 0, {1, 100}, {64, 1}},
      {"lanes, rows", {300, 5000}, 1, {1, 5000}, {}},
      {"periodic, a column", {1000, 16}, 0, {1000, 1}, {1, 16}},
      {"periodic, narrow", {50, 120}, 0, {50, 3}, {1, 40}},
      {"periodic, to a scalar", {100000}, 1, {}, {}},
      {"strided", {1000, 9}, 1, {1000, 1}, {}},
      {"interleaved", {40, 600}, 2, {40, 200}, {3}},
      {"nothing summed", {7, 5}, 0, {7, 5}, {1, 1}},
  };
  const DType floats[] = {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::complex64,
                          DType::complex128};
  for (const Case& c : cases) {
    for (const DType d : floats) {
      INFO(c.name << ", " << tessera::dtype_name(d));
      const std::size_t isz = tessera::itemsize_of(d);
      // -0.0 in every component: only the sign bit of each real (the last byte, little endian).
      const std::size_t part = d == DType::complex64 ? 4 : d == DType::complex128 ? 8 : isz;
      std::vector<unsigned char> g(static_cast<std::size_t>(count_of(c.grad)) * isz, 0);
      for (std::size_t b = part - 1; b < g.size(); b += part) g[b] = 0x80;
      for (const bool accumulate : {false, true}) {
        INFO("accumulate " << accumulate);
        tessera::Options o;
        o.accumulate = accumulate;
        const tessera::Plan plan =
            c.op == 0   ? tessera::Plan::tile_backward(c.grad, {}, d, c.in, c.reps, o)
            : c.op == 1 ? tessera::Plan::sum_to_shape(c.grad, {}, d, c.in, o)
                        : tessera::Plan::repeat_backward(c.grad, {}, d, c.in, {c.reps[0]}, 1, o);
        INFO("path " << plan.kernel_path());
        // The result starts as -0.0 (accumulating: -0.0 + -0.0 would stay -0.0) or as garbage.
        std::vector<unsigned char> out(plan.nbytes(), accumulate ? 0 : 0x5a);
        if (accumulate)
          for (std::size_t b = part - 1; b < out.size(); b += part) out[b] = 0x80;
        plan.execute(g.data(), out.data(), out.size());
        std::size_t nonzero = 0;
        for (const unsigned char byte : out) nonzero += byte != 0;
        CHECK_MESSAGE(nonzero == 0, nonzero << " bytes of " << out.size() << " not those of +0.0");
      }
    }
  }
}

TEST_CASE("reductions: bad arguments are errors naming the value, and the output is untouched") {
  std::vector<float> g(24, 1.0f);
  std::vector<unsigned char> dst(64, 0x5A);
  const auto untouched = [&] { return std::all_of(dst.begin(), dst.end(), [](unsigned char b) { return b == 0x5A; }); };
  // The gradient's shape must be the forward output's.
  CHECK_THROWS_WITH_AS(tessera::tile_backward(g.data(), {4, 5}, {}, DType::float32, {2, 3}, {2, 2}, dst.data(), 64),
                       doctest::Contains("axis 1 has extent 5 but the forward output's has 6"), tessera::InvalidArgument);
  CHECK(untouched());
  CHECK_THROWS_WITH_AS(tessera::sum_to_shape(g.data(), {4, 6}, {}, DType::float32, {4, 3}, dst.data(), 64),
                       doctest::Contains("target axis 1 has extent 3"), tessera::InvalidArgument);
  CHECK_THROWS_WITH_AS(tessera::sum_to_shape(g.data(), {24}, {}, DType::float32, {1, 24}, dst.data(), 64),
                       doctest::Contains("more than the input's 1"), tessera::InvalidArgument);
  CHECK_THROWS_WITH_AS(tessera::repeat_backward(g.data(), {24}, {}, DType::float32, {6}, 3, std::nullopt, dst.data(), 64),
                       doctest::Contains("has extent 24 but the forward output's has 18"), tessera::InvalidArgument);
  CHECK_THROWS_WITH_AS(tessera::tile_backward(g.data(), {4, 6}, {}, static_cast<DType>(14), {2, 3}, {2, 2}, dst.data(), 64),
                       doctest::Contains("dtype 14 is not a tessera_dtype"), tessera::InvalidArgument);
  CHECK_THROWS_AS(tessera::tile_backward(g.data(), {4, 6}, {}, DType::float64, {2, 3}, {2, 2}, dst.data(), 47),
                  tessera::BufferTooSmall);
  CHECK_THROWS_WITH_AS(tessera::tile_backward(g.data(), {INT64_MAX, 2}, {}, DType::float64, {INT64_MAX, 1}, {1, 2}, dst.data(), 64),
                       doctest::Contains("overflows"), tessera::Overflow);
  // A gradient's byte size must fit int64 whatever its strides, a zero-stride view included (numpy
  // asks the same of an array): 2^62 complex128 elements (16 B each) are refused before planning;
  // the planner would otherwise count their 2^63 real parts (a fuzzer input overflowed there).
  const int64_t big = int64_t{1} << 62;
  CHECK_THROWS_WITH_AS(tessera::repeat_backward(g.data(), {big}, {16}, DType::complex128, {1}, big, std::nullopt, dst.data(), 64),
                       doctest::Contains("the gradient's byte size (4611686018427387904,) x 16 B overflows"), tessera::Overflow);
  CHECK_THROWS_WITH_AS(tessera::sum_to_shape(g.data(), {big / 2, 2}, {0, 4}, DType::float32, {1, 2}, dst.data(), 64),
                       doctest::Contains("the gradient's byte size"), tessera::Overflow);
  CHECK_THROWS_AS(tessera::tile_backward(g.data(), {big}, {0}, DType::int32, {1}, {big}, dst.data(), 64), tessera::Overflow);
  // The largest that fits: INT64_MAX / 8 float64 elements of stride 0 (planned, not run).
  CHECK(tessera::Plan::sum_to_shape({INT64_MAX / 8}, {0}, DType::float64, {1}).is_reduction());
  CHECK_THROWS_AS(tessera::Plan::sum_to_shape({INT64_MAX / 8 + 1}, {0}, DType::float64, {1}), tessera::Overflow);
  CHECK_THROWS_AS(tessera::Plan::tile_backward({4, 6}, {}, DType::float32, {2, 3}, {2, 2}).execute_region(g.data(), {0}, {1}, dst.data(), 64),
                  tessera::InvalidArgument);
  CHECK(untouched());
  // C: the status, the message, and a bad accumulate value.
  const int64_t gs[] = {4, 6}, in[] = {2, 3}, reps[] = {2, 2};
  CHECK(tessera_tile_backward(g.data(), 2, gs, nullptr, 99, 2, in, 2, reps, dst.data(), 64) == TESSERA_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error()).find("dtype 99") != std::string::npos);
  tessera_options o;
  tessera_options_init(&o);
  o.accumulate = 2;
  CHECK(tessera_tile_backward_ex(g.data(), 2, gs, nullptr, TESSERA_FLOAT32, 2, in, 2, reps, dst.data(), 64, &o) ==
        TESSERA_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error()).find("accumulate = 2") != std::string::npos);
  CHECK(untouched());
  CHECK(tessera_dtype_itemsize(TESSERA_BFLOAT16) == 2);
  CHECK(tessera_dtype_itemsize(14) == 0);
  CHECK(std::string(tessera_dtype_name(TESSERA_COMPLEX128)) == "complex128");
  // A 0.1 caller's options: its struct was {size_t, int, int, int} padded to 24 bytes, the padding
  // garbage; the fields past it (accumulate) are not read and take their defaults.
  static_assert(offsetof(tessera_options, accumulate) >= 24, "accumulate lies past 0.1's padded struct");
  o.accumulate = 1;
  o.reserved0 = -1414812757;  // garbage in 0.1's padding
  o.sizeof_options = 24;
  CHECK(tessera_tile_backward_ex(g.data(), 2, gs, nullptr, TESSERA_FLOAT32, 2, in, 2, reps, dst.data(), 64, &o) == TESSERA_OK);
  float r[6];
  std::memcpy(r, dst.data(), sizeof r);
  CHECK(r[0] == 4.0f);
}

TEST_CASE("reduction plans describe themselves and name their path") {
  const tessera::Plan p = tessera::Plan::tile_backward({8192, 2048}, {}, DType::float32, {2048, 2048}, {4, 1});
  CHECK(p.is_reduction());
  CHECK(std::string(p.kernel_path()).rfind("reduce.lanes.", 0) == 0);
  CHECK(p.describe().find("tile_backward plan") != std::string::npos);
  CHECK(p.shape() == Dims{2048, 2048});
  CHECK(p.itemsize() == 4);
  CHECK(p.input_size() == 8192 * 2048);
  const tessera::Plan q = tessera::Plan::repeat_backward({4096, 4096}, {}, DType::float32, {4096, 2048}, 2, 1);
  CHECK(std::string(q.kernel_path()) == "reduce.interleaved.pair_f32");
  CHECK(q.describe().find("kernel: reduce.interleaved (reduce.interleaved.pair_f32:") != std::string::npos);
  const std::vector<int64_t> counts = {1, 2, 3};
  const tessera::Plan s = tessera::Plan::repeat_backward({6}, {}, DType::int32, {3}, counts);
  // Runs of 1-3 elements, summed by one kernel on fixed-width targets (their order is the strided
  // path's: each segment's own); rows of a segment, each segment by its planned sub-problem.
  CHECK(std::string(s.kernel_path()).rfind("reduce.segments", 0) == 0);
  const tessera::Plan rows = tessera::Plan::repeat_backward({6, 5}, {}, DType::float32, {3, 5}, counts, 0);
  CHECK(std::string(rows.kernel_path()) == "reduce.segments");
  // describe() names the kernel that kernel_path() does (tests/fuzz reads it there).
  CHECK(s.describe().find("kernel: reduce.segments (" + std::string(s.kernel_path()) + ": 3 segments") != std::string::npos);
  CHECK(rows.describe().find("kernel: reduce.segments (reduce.segments: 3 segments, counts up to 3") != std::string::npos);
  // (The prefetch distance: tests/test_config.cpp, with the machine's and the environment's.)
  // Short items read a row at a time (ReduceProblem::rows_whole): 2-8 addend rows of at most
  // 16 KiB in all (rep_mid_bwd's 4 rows of 1 KiB, nchw_bwd's of 512 B); not 4 rows of 8 KiB
  // (inner_bwd), nor one; 9-32 addends (reduce.lanes.reg.tree4, fixed-width targets) only in
  // rows of at most 8 vectors of accumulators (kTreeRowVecs: 8 float32 elements on any target, here
  // 64 bytes apart, not 100 on any).
  const auto whole = [](const tessera::Plan& plan) { return plan.describe().find("each row read whole") != std::string::npos; };
  CHECK(whole(tessera::Plan::repeat_backward({64, 1024, 256}, {}, DType::float32, {64, 256, 256}, {4}, 1)));
  CHECK(whole(tessera::Plan::tile_backward({64, 4, 256, 256}, {}, DType::float32, {64, 4, 128, 128}, {1, 1, 2, 2})));
  CHECK(whole(tessera::Plan::tile_backward({16, 8, 512}, {}, DType::float32, {16, 1, 512}, {1, 8, 1})));  // 16 KiB
  CHECK(!whole(tessera::Plan::tile_backward({16, 8, 513}, {}, DType::float32, {16, 1, 513}, {1, 8, 1})));
  CHECK(!whole(tessera::Plan::tile_backward({2048, 8192}, {}, DType::float32, {2048, 2048}, {1, 4})));
  CHECK(!whole(tessera::Plan::tile_backward({16, 9, 100}, {}, DType::float32, {16, 1, 100}, {1, 9, 1})));
#if HWY_ARCH_X86
  CHECK(whole(tessera::Plan::tile_backward({16, 9, 8}, {576, 64, 4}, DType::float32, {16, 1, 8}, {1, 9, 1})));
#endif
  CHECK(!whole(tessera::Plan::tile_backward({16, 1, 64}, {}, DType::float32, {16, 1, 64}, {1, 1, 1})));
  // Long rows are never prefetched items ahead (where the policy prefetches them, along each row:
  // tests/test_config.cpp).
  CHECK(p.describe().find("items ahead") == std::string::npos);
  // float32 counts of at most 4 (kSegGroupMaxCount) into a contiguous result are summed two groups
  // of segments at a time from their one-byte counts (ReduceProblem::seg_group_count), on
  // fixed-width targets of two or more float64 lanes (x86 but SCALAR, NEON); counts of 5, float64,
  // and rows of segments are not.
  const auto groups = [](const tessera::Plan& plan) {
    return plan.describe().find("two groups of segments at a time from one-byte counts") != std::string::npos;
  };
  const auto by_counts = [](std::vector<int64_t> c, DType d, int64_t rows = 1) {
    int64_t total = 0;
    for (const int64_t v : c) total += v;
    const int64_t n = static_cast<int64_t>(c.size());
    return rows == 1 ? tessera::Plan::repeat_backward({total}, {}, d, {n}, c, 0)
                     : tessera::Plan::repeat_backward({rows, total}, {}, d, {rows, n}, c, 1);
  };
  const std::string target = tessera::active_target();
  const bool grouping = target != "SCALAR" && target != "EMU128" && target.rfind("SVE", 0) != 0 &&
                        target.rfind("RVV", 0) != 0;
  INFO("target " << target);
  CHECK(groups(by_counts({0, 4, 1, 3, 2, 4, 0, 1}, DType::float32)) == grouping);
  CHECK(groups(by_counts({0, 4, 1, 3, 2, 4, 0, 1}, DType::float32, 3)) == grouping);
  CHECK(groups(by_counts({1, 1, 0, 1}, DType::float32)) == grouping);  // one step (C = 1)
  CHECK(!groups(by_counts({0, 4, 1, 5, 2, 4, 0, 1}, DType::float32)));
  CHECK(!groups(by_counts({0, 4, 1, 3, 2, 4, 0, 1}, DType::float64)));
  CHECK(!groups(by_counts({0, 0, 0}, DType::float32)));  // nothing to add
  CHECK(!groups(tessera::Plan::repeat_backward({10, 5}, {}, DType::float32, {4, 5}, std::vector<int64_t>{1, 4, 2, 3}, 0)));
  // A reduction's result streams from 2/3 of the automatic threshold
  // (tessera::streaming_threshold_bytes(), the copies' line).
  const int64_t t = tessera::streaming_threshold_bytes();
  const auto rows_of = [](int64_t n) {  // a float32 result [1, n] (4n bytes) of 4 replicas
    return tessera::Plan::tile_backward({4, n}, {}, DType::float32, {1, n}, {4, 1}).describe();
  };
  const int64_t from = (t * 2 + 2) / 3 / 4 + 1;  // elements: the first result of at least 2t / 3 bytes, and one more
  CHECK(rows_of(from).find("-> result (1, " + std::to_string(from) + "), streamed") != std::string::npos);
  CHECK(rows_of(t / 4 / 2).find("streamed") == std::string::npos);
  // A result of 2^62 bytes is compared with the line without overflow (the fuzzer found 3 * its
  // size overflowing int64: undefined behaviour, and a result that would not stream).
  CHECK(tessera::Plan::tile_backward({int64_t{1} << 60}, {}, DType::float32, {int64_t{1} << 60}, {1})
            .describe()
            .find("streamed") != std::string::npos);
  const auto paths = tessera::Plan::kernel_paths();
  CHECK(std::find(paths.begin(), paths.end(), "reduce.periodic.leaves") != paths.end());
  CHECK(std::find(paths.begin(), paths.end(), "reduce.lanes.reg.tree16") != paths.end());
}
