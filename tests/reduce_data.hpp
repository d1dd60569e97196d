// Data for the reductions' order and width tests (test_reduce.cpp, test_reduce_bits.cpp): values
// whose sums depend on the order of the additions, built from mt19937_64 and exact arithmetic
// only, so that they are the same bytes on every architecture; the lanes order's model; and the
// path of a kernel's name.
#ifndef TESSERA_TESTS_REDUCE_DATA_HPP
#define TESSERA_TESTS_REDUCE_DATA_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "util.hpp"

namespace test {

/// float64 with full 53-bit mantissas and mixed exponents: every order gives other bits.
/// (Every draw is a statement of its own: the order in which a call's arguments are evaluated is
/// unspecified, and GCC evaluates them in other orders on x86-64 and aarch64.)
inline double full_mantissa(Rng& rng) {
  const double m = static_cast<double>(rng.uniform(int64_t{1} << 52, (int64_t{1} << 53) - 1));
  const bool negative = rng.coin();
  const int e = static_cast<int>(rng.uniform(-60, -45));
  return std::ldexp(negative ? -m : m, e);
}

/// float32 values whose float64 sums round, visibly in float32: mostly small values, and pairs of
/// huge ones of opposite signs among the addends of each output (`groups`: per output, its
/// addends' indices into the n values). The exact sum is the small values', but the partial sums
/// near 2^40 lose their low bits in float64, differently in each order: the float32 results differ.
inline std::vector<float> cancelling_floats(std::size_t n, const std::vector<std::vector<std::size_t>>& groups,
                                            uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) {
    const auto m = static_cast<float>(rng.uniform(-(int64_t{1} << 24) + 1, (int64_t{1} << 24) - 1));
    const int e = static_cast<int>(rng.uniform(-44, -24));
    x = std::ldexp(m, e);
  }
  for (std::vector<std::size_t> g : groups) {
    rng.shuffle(g);
    for (std::size_t i = 0; i + 1 < g.size() / 2; i += 2) {
      const auto m = static_cast<float>(rng.uniform(1, (int64_t{1} << 24) - 1));
      const int e = static_cast<int>(rng.uniform(12, 20));
      const float huge = std::ldexp(m, e);
      v[g[i]] = huge;
      v[g[i + 1]] = -huge;
    }
  }
  return v;
}

/// Values of a 16-bit float type (p significand bits) whose float32 sums round, visibly in that
/// type: small values m * 2^e (|m| < 2^p, e in [small_lo, small_hi]) and, among the addends of
/// each output of 3 or more (`groups`: per output, its addends' indices into the n values), pairs
/// of huge ones of opposite signs (m in [2^(p-1), 2^p), e in [huge_lo, huge_hi]), one pair per 4
/// addends, at least one. Every value is exact in the type (the caller checks the range). The
/// exact sum is the small values'; float32 partial sums near a huge value h round to multiples of
/// 2^(ilogb(h) - 23), differently in each order, while a 16-bit running sum loses far more.
inline std::vector<double> cancelling_narrow(std::size_t n, const std::vector<std::vector<std::size_t>>& groups,
                                             uint64_t seed, int p, int small_lo, int small_hi, int huge_lo,
                                             int huge_hi) {
  Rng rng(seed);
  std::vector<double> v(n);
  for (double& x : v) {
    const auto m = static_cast<double>(rng.uniform(-(int64_t{1} << p) + 1, (int64_t{1} << p) - 1));
    const int e = static_cast<int>(rng.uniform(small_lo, small_hi));
    x = std::ldexp(m, e);
  }
  for (std::vector<std::size_t> g : groups) {
    if (g.size() < 3) continue;  // a sum of two rounds once in any order
    rng.shuffle(g);
    const std::size_t pairs = std::max<std::size_t>(1, g.size() / 4);
    for (std::size_t i = 0; i < 2 * pairs; i += 2) {
      const auto m = static_cast<double>(rng.uniform(int64_t{1} << (p - 1), (int64_t{1} << p) - 1));
      const int e = static_cast<int>(rng.uniform(huge_lo, huge_hi));
      const double huge = std::ldexp(m, e);
      v[g[i]] = huge;
      v[g[i + 1]] = -huge;
    }
  }
  return v;
}

/// One output element's sum in the lanes order as reduce.hpp documents it, modelled independently
/// of the kernels: `addends` in the order of the summed axes (outer first), leaves of kLeaf = 8
/// added left to right, the leaves combined by the binary counter (leaf k is added to the levels
/// its trailing one bits name; the levels left are added from the lowest up).
inline double lanes_order_sum(const std::vector<double>& addends) {
  std::vector<double> level(64);
  uint64_t count = 0;
  for (std::size_t q0 = 0; q0 < addends.size(); q0 += 8) {
    double v = addends[q0];
    for (std::size_t q = q0 + 1; q < std::min(addends.size(), q0 + 8); ++q) v = v + addends[q];
    const uint64_t k = count++;
    int m = 0;
    for (; (k >> m) & 1; ++m) v = level[static_cast<std::size_t>(m)] + v;
    level[static_cast<std::size_t>(m)] = v;
  }
  double r = 0;
  bool have = false;
  for (int l = 0; l < 64; ++l) {
    if (!((count >> l) & 1)) continue;
    r = have ? level[static_cast<std::size_t>(l)] + r : level[static_cast<std::size_t>(l)];
    have = true;
  }
  return r + 0.0;  // a sum of only -0.0 values is +0.0
}

/// The reduction path of a kernel name ("reduce.<path>.<kernel>" -> "reduce.<path>", the path's
/// name in lib/reduce.hpp's ReducePath; a name of two parts is returned whole): a case predicts
/// the path, the target's capabilities choose the kernel.
inline std::string reduce_path_of(const std::string& kernel) {
  const std::size_t dot = kernel.find('.', kernel.find('.') + 1);
  return dot == std::string::npos ? kernel : kernel.substr(0, dot);
}

}  // namespace test

#endif  // TESSERA_TESTS_REDUCE_DATA_HPP
