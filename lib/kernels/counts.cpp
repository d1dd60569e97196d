// Per-target scan of per-element repeat counts for the planner (operations.cpp's compact prefix
// sums): a block of contiguous int32 or int64 counts narrowed to their low bytes, with the bits
// the planner checks them by; then the bytes' sums of 16 and their largest. Compiled once per
// Highway target (foreach_target.h); scan_counts() and count_bytes_sums() dispatch to the best
// target this CPU supports. Serial.

// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/counts.cpp"  // this file, relative to lib/
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
// clang-format on

#include "kernels/kernels.hpp"

#include <cstdint>
#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace tessera::detail::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

// c[0, n) as unsigned lanes of U (the counts' own width, so that count + lift wraps as the
// planner's scalar check does): bytes[i] = the low byte of c[i]; *bits = the or of every c[i];
// *above = the or of every (c[i] + lift) >> 8.
template <class U>
void ScanT(const U* HWY_RESTRICT c, int64_t n, U lift, uint8_t* HWY_RESTRICT bytes, U* bits, U* above) {
  const hn::ScalableTag<U> d;
  const hn::Rebind<uint8_t, decltype(d)> d8;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vlift = hn::Set(d, lift);
  auto vbits = hn::Zero(d), vabove = hn::Zero(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, c + i);
    vbits = hn::Or(vbits, v);
    vabove = hn::Or(vabove, hn::ShiftRight<8>(hn::Add(v, vlift)));
    if constexpr (sizeof(U) == 4) {
      // Saturated, not truncated: Highway 1.0.3's TruncateTo of 32-bit lanes to bytes wrote wrong
      // bytes on AVX3_DL (tests/test_family.cpp, "the planner's scan"). The same bytes wherever
      // they are kept: a block with a count outside [0, 255 - lift] is rewritten by the caller.
      const hn::RebindToSigned<decltype(d)> di;
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, v)), d8, bytes + i);
    } else {
      hn::StoreU(hn::TruncateTo(d8, v), d8, bytes + i);
    }
  }
  HWY_ALIGN U lanes_bits[hn::MaxLanes(d)];
  HWY_ALIGN U lanes_above[hn::MaxLanes(d)];
  hn::Store(vbits, d, lanes_bits);
  hn::Store(vabove, d, lanes_above);
  U b = 0, a = 0;
  for (int64_t k = 0; k < N; ++k) {
    b |= lanes_bits[k];
    a |= lanes_above[k];
  }
  for (; i < n; ++i) {
    U v;
    std::memcpy(&v, c + i, sizeof(U));  // the counts may sit at any byte offset
    b |= v;
    a |= static_cast<U>(v + lift) >> 8;
    bytes[i] = static_cast<uint8_t>(v);
  }
  *bits = b;
  *above = a;
}

}  // namespace

// bytes[0, n): sums16[k] = the sum of bytes[16k, 16k + 16) for each whole group of 16; returns
// the largest byte.
uint8_t CountBytesSums(const uint8_t* HWY_RESTRICT bytes, int64_t n, uint32_t* HWY_RESTRICT sums16) {
  int64_t j = 0;
  uint8_t largest = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<uint8_t> db;
  const hn::Repartition<uint64_t, decltype(db)> dq;
  const int64_t NB = static_cast<int64_t>(hn::Lanes(db));  // a multiple of 16 on every vector target
  HWY_ALIGN uint64_t eights[hn::MaxLanes(dq)];
  auto vmax = hn::Zero(db);
  for (; j + NB <= n; j += NB) {
    const auto v = hn::LoadU(db, bytes + j);
    vmax = hn::Max(vmax, v);
    hn::Store(hn::SumsOf8(v), dq, eights);  // the sums of each 8 bytes
    for (int64_t k = 0; k < NB / 16; ++k) sums16[j / 16 + k] = static_cast<uint32_t>(eights[2 * k] + eights[2 * k + 1]);
  }
  HWY_ALIGN uint8_t lanes_max[hn::MaxLanes(db)];
  hn::Store(vmax, db, lanes_max);
  for (int64_t k = 0; k < NB; ++k) largest = lanes_max[k] > largest ? lanes_max[k] : largest;
#endif
  for (int64_t k = j; k < n; ++k) largest = bytes[k] > largest ? bytes[k] : largest;
  for (; j + 16 <= n; j += 16) {
    uint32_t sum = 0;
    for (int64_t k = 0; k < 16; ++k) sum += bytes[j + k];
    sums16[j / 16] = sum;
  }
  return largest;
}

void ScanCounts(const void* c, int itemsize, int64_t n, uint64_t lift, uint8_t* bytes, uint64_t* bits,
                uint64_t* above) {
  if (itemsize == 8) {
    ScanT<uint64_t>(static_cast<const uint64_t*>(c), n, lift, bytes, bits, above);
  } else {
    uint32_t b = 0, a = 0;
    ScanT<uint32_t>(static_cast<const uint32_t*>(c), n, static_cast<uint32_t>(lift), bytes, &b, &a);
    *bits = b;
    *above = a;
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace tessera::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::detail {

HWY_EXPORT(ScanCounts);
HWY_EXPORT(CountBytesSums);

void scan_counts(const void* counts, int itemsize, int64_t n, uint64_t lift, uint8_t* bytes, uint64_t* bits,
                 uint64_t* above) {
  HWY_DYNAMIC_DISPATCH(ScanCounts)(counts, itemsize, n, lift, bytes, bits, above);
}

uint8_t count_bytes_sums(const uint8_t* bytes, int64_t n, uint32_t* sums16) {
  return HWY_DYNAMIC_DISPATCH(CountBytesSums)(bytes, n, sums16);
}

}  // namespace tessera::detail
#endif  // HWY_ONCE
