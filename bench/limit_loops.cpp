// Highway dynamic-dispatch translation unit for limit_loops.h (the pattern of hwy/examples/skeleton.cc):
// foreach_target.h re-includes this file once per target, then HWY_ONCE emits the dispatchers.
#include "limit_loops.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "limit_loops.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/cache_control.h>
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tessera::bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Fills `bytes` of dst with `value`, a vector at a time: non-temporal stores if kStream (then
// flushed), else ordinary aligned stores; the tail shorter than a vector by memset.
template <bool kStream>
void Fill(uint8_t* HWY_RESTRICT dst, size_t bytes, uint8_t value) {
  const hn::ScalableTag<uint8_t> d;
  const size_t N = hn::Lanes(d);
  const auto v = hn::Set(d, value);
  const auto put = [&](uint8_t* p) HWY_ATTR {
    if constexpr (kStream) {
      hn::Stream(v, d, p);
    } else {
      hn::Store(v, d, p);
    }
  };
  size_t i = 0;
  for (; i + 4 * N <= bytes; i += 4 * N) {
    put(dst + i);
    put(dst + i + N);
    put(dst + i + 2 * N);
    put(dst + i + 3 * N);
  }
  for (; i + N <= bytes; i += N) put(dst + i);
  std::memset(dst + i, value, bytes - i);
  if constexpr (kStream) hwy::FlushStream();
}

void StreamFill(uint8_t* HWY_RESTRICT dst, size_t bytes, uint8_t value) { Fill<true>(dst, bytes, value); }
void StoreFill(uint8_t* HWY_RESTRICT dst, size_t bytes, uint8_t value) { Fill<false>(dst, bytes, value); }

uint64_t SumBytes(const uint8_t* HWY_RESTRICT src, size_t bytes) {
  const hn::ScalableTag<uint8_t> d;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  const size_t N = hn::Lanes(d);
  auto sum0 = hn::Zero(d64);
  auto sum1 = hn::Zero(d64);
  size_t i = 0;
  for (; i + 2 * N <= bytes; i += 2 * N) {
    sum0 = hn::Add(sum0, hn::SumsOf8(hn::LoadU(d, src + i)));
    sum1 = hn::Add(sum1, hn::SumsOf8(hn::LoadU(d, src + i + N)));
  }
  for (; i + N <= bytes; i += N) sum0 = hn::Add(sum0, hn::SumsOf8(hn::LoadU(d, src + i)));
  uint64_t total = hn::GetLane(hn::SumOfLanes(d64, hn::Add(sum0, sum1)));
  for (; i < bytes; ++i) total += src[i];
  return total;
}

// Eight vectors of floats at p added to eight independent accumulators (SumFloats, SumStream):
// no add waits on another, so a loop of them runs at the speed of its loads.
template <class D, class V>
HWY_INLINE void AddEight(D d, const float* HWY_RESTRICT p, V& s0, V& s1, V& s2, V& s3, V& s4, V& s5, V& s6, V& s7) {
  const size_t N = hn::Lanes(d);
  s0 = hn::Add(s0, hn::LoadU(d, p));
  s1 = hn::Add(s1, hn::LoadU(d, p + N));
  s2 = hn::Add(s2, hn::LoadU(d, p + 2 * N));
  s3 = hn::Add(s3, hn::LoadU(d, p + 3 * N));
  s4 = hn::Add(s4, hn::LoadU(d, p + 4 * N));
  s5 = hn::Add(s5, hn::LoadU(d, p + 5 * N));
  s6 = hn::Add(s6, hn::LoadU(d, p + 6 * N));
  s7 = hn::Add(s7, hn::LoadU(d, p + 7 * N));
}

float SumFloats(const float* HWY_RESTRICT src, size_t count) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  auto s4 = hn::Zero(d), s5 = hn::Zero(d), s6 = hn::Zero(d), s7 = hn::Zero(d);
  size_t i = 0;
  for (; i + 8 * N <= count; i += 8 * N) AddEight(d, src + i, s0, s1, s2, s3, s4, s5, s6, s7);
  for (; i + N <= count; i += N) s0 = hn::Add(s0, hn::LoadU(d, src + i));
  const auto sum = hn::Add(hn::Add(hn::Add(s0, s1), hn::Add(s2, s3)), hn::Add(hn::Add(s4, s5), hn::Add(s6, s7)));
  float total = hn::GetLane(hn::SumOfLanes(d, sum));
  for (; i < count; ++i) total += src[i];
  return total;
}

// SumFloats over src[0, count) with `value` streamed into dst[0, out_bytes) in the same pass:
// after each step of 8 vectors of input, the output streamed up to the same fraction of it (a
// vector at a time, by an error counter: no division in the loop), the rest at the end; then
// flushed. dst must be 64-byte aligned.
float SumStream(const float* HWY_RESTRICT src, size_t count, uint8_t* HWY_RESTRICT dst, size_t out_bytes,
                uint8_t value) {
  const hn::ScalableTag<float> d;
  const hn::ScalableTag<uint8_t> d8;
  const size_t N = hn::Lanes(d), V = hn::Lanes(d8);
  const auto fill = hn::Set(d8, value);
  const uint64_t step_in = 8 * N * sizeof(float), total_in = uint64_t{count} * sizeof(float);
  uint64_t owed = 0;  // out_bytes * (input bytes read) - total_in * (output bytes written)
  size_t o = 0;
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  auto s4 = hn::Zero(d), s5 = hn::Zero(d), s6 = hn::Zero(d), s7 = hn::Zero(d);
  size_t i = 0;
  for (; i + 8 * N <= count; i += 8 * N) {
    AddEight(d, src + i, s0, s1, s2, s3, s4, s5, s6, s7);
    owed += out_bytes * step_in;
    for (; owed >= total_in * V && o + V <= out_bytes; o += V, owed -= total_in * V) hn::Stream(fill, d8, dst + o);
  }
  for (; i < count; ++i) s0 = hn::Add(s0, hn::Set(d, src[i]));
  for (; o + V <= out_bytes; o += V) hn::Stream(fill, d8, dst + o);
  std::memset(dst + o, value, out_bytes - o);
  hwy::FlushStream();
  const auto sum = hn::Add(hn::Add(hn::Add(s0, s1), hn::Add(s2, s3)), hn::Add(hn::Add(s4, s5), hn::Add(s6, s7)));
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

int64_t Target() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace tessera::bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::bench {
namespace {
HWY_EXPORT(StreamFill);
HWY_EXPORT(StoreFill);
HWY_EXPORT(SumBytes);
HWY_EXPORT(SumFloats);
HWY_EXPORT(SumStream);
HWY_EXPORT(Target);
}  // namespace

void stream_fill(void* dst, std::size_t bytes, uint8_t value) {
  HWY_DYNAMIC_DISPATCH(StreamFill)(static_cast<uint8_t*>(dst), bytes, value);
}

void store_fill(void* dst, std::size_t bytes, uint8_t value) {
  HWY_DYNAMIC_DISPATCH(StoreFill)(static_cast<uint8_t*>(dst), bytes, value);
}

uint64_t sum_bytes(const void* src, std::size_t bytes) {
  return HWY_DYNAMIC_DISPATCH(SumBytes)(static_cast<const uint8_t*>(src), bytes);
}

float sum_floats(const float* src, std::size_t count) { return HWY_DYNAMIC_DISPATCH(SumFloats)(src, count); }

float sum_stream(const float* src, std::size_t count, void* dst, std::size_t out_bytes, uint8_t value) {
  return HWY_DYNAMIC_DISPATCH(SumStream)(src, count, static_cast<uint8_t*>(dst), out_bytes, value);
}

const char* limits_target() { return hwy::TargetName(HWY_DYNAMIC_DISPATCH(Target)()); }

std::size_t last_level_cache_bytes() {
  const std::string dir = "/sys/devices/system/cpu/cpu0/cache";
  int best_level = 0;
  std::size_t best = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string index = dir + "/index" + std::to_string(i) + "/";
    std::ifstream level_file(index + "level"), type_file(index + "type"), size_file(index + "size");
    if (!level_file) break;
    int level = 0;
    std::string type, size;
    level_file >> level;
    type_file >> type;
    size_file >> size;
    if (type == "Instruction" || size.empty()) continue;
    std::size_t digits = 0;
    unsigned long long value = 0;
    try {
      value = std::stoull(size, &digits);
    } catch (const std::exception&) {
      throw std::runtime_error("cannot parse the cache size '" + size + "' in " + index + "size");
    }
    const std::string unit = size.substr(digits);
    const std::size_t scale = unit.empty() ? 1 : unit == "K" ? 1024 : unit == "M" ? 1024 * 1024 : 0;
    if (scale == 0) throw std::runtime_error("unknown unit in the cache size '" + size + "' in " + index + "size");
    if (level > best_level) best_level = level, best = static_cast<std::size_t>(value) * scale;
  }
  if (best == 0) throw std::runtime_error("no data or unified cache size readable in " + dir + "/index*/");
  return best;
}

std::size_t rotation_copies(std::size_t bytes, std::size_t llc_bytes) {
  if (bytes >= 8 * llc_bytes) return 1;
  if (bytes == 0) return 2;
  return std::max<std::size_t>(2, (2 * llc_bytes + bytes - 1) / bytes + 1);
}

}  // namespace tessera::bench
#endif  // HWY_ONCE
