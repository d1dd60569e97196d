// tessera::Dims from every integer type and every kind of range: std::vector, std::array, C arrays,
// std::initializer_list, a span-like view (data() + size()), non-contiguous ranges (std::deque,
// std::list), and pointer + count — each used as reps (and shape) of a real tile, compared with the
// reference. Negative values of signed types are kept (an error, or 0 under clamp_to_zero); the
// largest value of every type either fits int64_t or is rejected naming its index and value.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <list>
#include <string>
#include <vector>

#include "reference.hpp"

namespace {

// A minimal span (C++17 has no std::span): contiguous, with data() and size().
template <class T>
struct Span {
  const T* ptr;
  std::size_t n;
  const T* data() const { return ptr; }
  std::size_t size() const { return n; }
};

// tile of a (2, 3) int16 array by reps given as Dims `r`, which must hold {2, 3}.
void check_tiles(const tessera::Dims& r) {
  REQUIRE(r == tessera::Dims{2, 3});
  const int16_t a[6] = {1, 2, 3, 4, 5, 6};
  const tessera::Array out = tessera::tile(a, {2, 3}, {}, 2, r);
  REQUIRE(out.shape() == tessera::Dims{4, 9});
  const auto expected = ref::tile(a, {2, 3}, {}, 2, {2, 3});
  CHECK(std::vector<unsigned char>(static_cast<const unsigned char*>(out.data()),
                                   static_cast<const unsigned char*>(out.data()) + out.nbytes()) == expected);
}

}  // namespace

TEST_CASE_TEMPLATE("Dims: reps of every integer type, from every kind of range", T, int8_t, uint8_t, int16_t,
                   uint16_t, int32_t, uint32_t, int64_t, uint64_t, char, signed char, unsigned char, short,
                   unsigned short, int, unsigned, long, unsigned long, long long, unsigned long long, std::size_t,
                   std::ptrdiff_t, std::intmax_t, std::uintmax_t, wchar_t, char16_t, char32_t) {
  const T two = 2, three = 3;
  const std::vector<T> vec = {two, three};
  const std::array<T, 2> arr = {two, three};
  const T c_array[2] = {two, three};
  const std::deque<T> deq = {two, three};
  const std::list<T> lst = {two, three};
  const std::initializer_list<T> il = {two, three};

  check_tiles(vec);
  check_tiles(arr);
  check_tiles(c_array);
  check_tiles(deq);
  check_tiles(lst);
  check_tiles(il);
  check_tiles(Span<T>{vec.data(), vec.size()});
  check_tiles(tessera::Dims(vec.data(), vec.size()));
  check_tiles(tessera::Dims(c_array, 2));
  // The same lists as a shape.
  const int16_t a[6] = {1, 2, 3, 4, 5, 6};
  CHECK(tessera::Plan(arr, {}, 2, {1, 2}).shape() == tessera::Dims{2, 6});
  CHECK(tessera::Plan(lst, {}, 2, {2}).shape() == tessera::Dims{2, 6});
  (void)a;
  // An empty range of any kind is no values.
  CHECK(tessera::Dims(std::vector<T>{}).empty());
  CHECK(tessera::Dims(std::list<T>{}).empty());
  CHECK(tessera::Dims(static_cast<const T*>(nullptr), 0).empty());

  // The largest value: it fits int64_t (and a rep that large overflows the output), or it does
  // not and Dims rejects it naming its index and value.
  const T big = std::numeric_limits<T>::max();
  const std::vector<T> huge = {two, big};
  if (static_cast<unsigned long long>(big) <= static_cast<unsigned long long>(std::numeric_limits<int64_t>::max())) {
    CHECK(tessera::Dims(huge)[1] == static_cast<int64_t>(big));
    CHECK(tessera::Dims(std::deque<T>(huge.begin(), huge.end()))[1] == static_cast<int64_t>(big));
  } else {
    const std::string needle = "value " + std::to_string(big) + " at index 1 does not fit int64_t";
    CHECK_THROWS_WITH_AS(tessera::Dims{huge}, doctest::Contains(needle.c_str()), tessera::InvalidArgument);
    CHECK_THROWS_WITH_AS(tessera::Dims(std::list<T>(huge.begin(), huge.end())), doctest::Contains(needle.c_str()),
                         tessera::InvalidArgument);
    CHECK_THROWS_AS(tessera::Dims(huge.data(), huge.size()), tessera::InvalidArgument);
  }

  // Negative values of signed types are kept; tile rejects them unless told to clamp.
  if constexpr (std::is_signed_v<T>) {
    const std::vector<T> neg = {two, static_cast<T>(-1)};
    CHECK(tessera::Dims(neg)[1] == -1);
    CHECK(tessera::Dims(std::list<T>(neg.begin(), neg.end()))[1] == -1);
    CHECK_THROWS_WITH_AS(tessera::tile_shape({2, 3}, neg), doctest::Contains("reps[1] = -1 is negative"),
                         tessera::InvalidArgument);
    tessera::Options o;
    o.negative_reps = tessera::NegativeReps::clamp_to_zero;
    CHECK(tessera::tile_shape({2, 3}, neg, o) == tessera::Dims{4, 0});
    const T lowest = std::numeric_limits<T>::lowest();
    CHECK(tessera::Dims(std::vector<T>{lowest})[0] == static_cast<int64_t>(lowest));
  }
}

TEST_CASE("Dims: more than TESSERA_MAX_NDIM values from a non-contiguous range") {
  std::list<int> many(static_cast<std::size_t>(tessera::max_ndim + 1), 1);
  CHECK_THROWS_WITH_AS(tessera::Dims{many}, doctest::Contains("exceed TESSERA_MAX_NDIM"), tessera::InvalidArgument);
  many.pop_back();
  CHECK(tessera::Dims(many).size() == tessera::max_ndim);
}
