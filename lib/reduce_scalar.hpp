// Plain C++ pieces of the reductions shared by the kernels (kernels/reduce.cpp) and the executor:
// the accumulator type of each kernel element, exact scalar conversions (float16 and bfloat16
// from and to float32, rounding to nearest even), and the per-thread scratch of the kernels.
// Internal; no Highway, no TBB. Every operation here is one IEEE addition or an exact conversion,
// so scalar and vector code that follow the same order give the same bits.
#ifndef TESSERA_LIB_REDUCE_SCALAR_HPP
#define TESSERA_LIB_REDUCE_SCALAR_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "reduce.hpp"
#include "this_thread.hpp"

namespace tessera::detail {

/// Storage of a 16-bit float (IEEE binary16 or bfloat16): its bits.
struct F16Bits {
  uint16_t bits;
};
struct BF16Bits {
  uint16_t bits;
};

inline float f32_from_bits(uint32_t b) noexcept {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t bits_from_f32(float f) noexcept {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// binary16 -> float32, exact (subnormals, infinities and NaNs included).
inline float f32_from_f16(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h >> 15) << 31;
  const uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in float32
    const float v = static_cast<float>(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return f32_from_bits(sign | 0x7F800000u | (man << 13));
  return f32_from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

/// float32 -> binary16, rounded to nearest even (overflow to infinity; NaN stays NaN).
inline uint16_t f16_from_f32(float f) noexcept {
  const uint32_t b = bits_from_f32(f);
  const uint16_t sign = static_cast<uint16_t>((b >> 16) & 0x8000);
  const uint32_t abs = b & 0x7FFFFFFF;
  if (abs >= 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00 | (abs > 0x7F800000u ? 0x200 : 0));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00);  // rounds to >= 65520: infinity
  if (abs < 0x38800000u) {  // below 2^-14: a subnormal (or zero) of binary16: round man * 2^-24
    const float a = f32_from_bits(abs);
    // a * 2^24 is exact in float; rounding it to an integer with nearest-even:
    const float scaled = a * 16777216.0f;
    uint32_t q = static_cast<uint32_t>(scaled);
    const float rem = scaled - static_cast<float>(q);
    if (rem > 0.5f || (rem == 0.5f && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);  // q == 0x400 becomes the smallest normal: correct
  }
  const uint32_t exp = (abs >> 23) - 112, man = abs & 0x7FFFFF;
  uint32_t h = (exp << 10) | (man >> 13);
  const uint32_t rest = man & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | h);
}

inline float f32_from_bf16(uint16_t h) noexcept { return f32_from_bits(static_cast<uint32_t>(h) << 16); }

/// float32 -> bfloat16, rounded to nearest even (NaN stays a quiet NaN).
inline uint16_t bf16_from_f32(float f) noexcept {
  const uint32_t b = bits_from_f32(f);
  if ((b & 0x7FFFFFFF) > 0x7F800000u) return static_cast<uint16_t>((b >> 16) | 0x40);
  const uint32_t rounded = b + 0x7FFF + ((b >> 16) & 1);
  return static_cast<uint16_t>(rounded >> 16);
}

/// The kernels' storage type of each Elem, and its accumulator.
template <Elem E> struct ElemTraits;
template <> struct ElemTraits<Elem::f32> { using T = float; using A = double; };
template <> struct ElemTraits<Elem::f64> { using T = double; using A = double; };
template <> struct ElemTraits<Elem::f16> { using T = uint16_t; using A = float; };
template <> struct ElemTraits<Elem::bf16> { using T = uint16_t; using A = float; };
template <> struct ElemTraits<Elem::u8> { using T = uint8_t; using A = uint8_t; };
template <> struct ElemTraits<Elem::u16> { using T = uint16_t; using A = uint16_t; };
template <> struct ElemTraits<Elem::u32> { using T = uint32_t; using A = uint32_t; };
template <> struct ElemTraits<Elem::u64> { using T = uint64_t; using A = uint64_t; };

/// The additive identity of an accumulator: -0.0 for floats (x + -0.0 == x for every x, -0.0
/// included), 0 for integers.
template <class A>
constexpr A acc_identity() noexcept {
  if constexpr (std::is_floating_point_v<A>) return -A(0);
  else return A(0);
}

/// One addition: IEEE for floats, modulo 2^bits for the unsigned integers (no promotion to int).
template <class A>
inline A acc_add(A a, A b) noexcept {
  if constexpr (std::is_floating_point_v<A>) return a + b;
  else return static_cast<A>(static_cast<std::make_unsigned_t<decltype(a + b)>>(a) + b);
}

/// An element (its storage) as its accumulator, exactly.
template <Elem E>
inline typename ElemTraits<E>::A to_acc(typename ElemTraits<E>::T v) noexcept {
  if constexpr (E == Elem::f16) return f32_from_f16(v);
  else if constexpr (E == Elem::bf16) return f32_from_bf16(v);
  else return static_cast<typename ElemTraits<E>::A>(v);
}

/// The value a result stores: +0.0 for a sum of only -0.0 values (a + +0.0 changes nothing else,
/// NaNs included), as numpy's and torch's sums give: they start from +0.0, the kernels from -0.0.
template <class A>
inline A plus_zero(A a) noexcept {
  if constexpr (std::is_floating_point_v<A>) return a + A(0);
  else return a;
}

/// An accumulator rounded once to the element (to nearest even), after plus_zero.
template <Elem E>
inline typename ElemTraits<E>::T from_acc(typename ElemTraits<E>::A a) noexcept {
  a = plus_zero(a);
  if constexpr (E == Elem::f16) return f16_from_f32(a);
  else if constexpr (E == Elem::bf16) return bf16_from_f32(a);
  else return static_cast<typename ElemTraits<E>::T>(a);
}

/// Calls f(std::integral_constant<Elem, e>) for the runtime value e.
template <class F>
inline void with_elem(Elem e, const F& f) {
  switch (e) {
    case Elem::f32: f(std::integral_constant<Elem, Elem::f32>()); return;
    case Elem::f64: f(std::integral_constant<Elem, Elem::f64>()); return;
    case Elem::f16: f(std::integral_constant<Elem, Elem::f16>()); return;
    case Elem::bf16: f(std::integral_constant<Elem, Elem::bf16>()); return;
    case Elem::u8: f(std::integral_constant<Elem, Elem::u8>()); return;
    case Elem::u16: f(std::integral_constant<Elem, Elem::u16>()); return;
    case Elem::u32: f(std::integral_constant<Elem, Elem::u32>()); return;
    case Elem::u64: f(std::integral_constant<Elem, Elem::u64>()); return;
  }
}

// thread_scratch's arena, one per thread (this_thread).
struct ScratchArena {
  std::unique_ptr<unsigned char[]> buf;
  std::size_t size = 0;
};

/// This thread's scratch for the reduction kernels: at least `bytes` bytes, 64-byte aligned, kept
/// for the thread's lifetime and grown (never shrunk) when a call needs more; its contents are
/// undefined, and valid until the next call on this thread. A kernel call takes it once and calls
/// no other kernel, so no two users on one thread overlap. Throws std::bad_alloc.
inline unsigned char* thread_scratch(std::size_t bytes) {
  ScratchArena& arena = this_thread<ScratchArena>();
  if (bytes > arena.size) {
    const std::size_t size = std::max<std::size_t>(bytes, arena.size * 2);
    arena.buf.reset(new unsigned char[size + 63]);
    arena.size = size;
  }
  const auto at = reinterpret_cast<std::uintptr_t>(arena.buf.get());
  return arena.buf.get() + ((64 - at % 64) % 64);
}

}  // namespace tessera::detail

#endif  // TESSERA_LIB_REDUCE_SCALAR_HPP
