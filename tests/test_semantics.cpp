// Semantic edge cases of numpy.tile: zero reps, empty inputs, empty reps, 0-d inputs, all-ones reps,
// promotion both ways, and what the library may and may not write.
#include <doctest/doctest.h>

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <cstring>
#include <numeric>
#include <vector>

#include "reference.hpp"
#include "util.hpp"

namespace {

using test::Shape;

std::vector<int32_t> iota32(std::size_t n, int32_t first = 1) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

Shape c_tile_shape(const Shape& shape, const Shape& reps, tessera_status* status) {
  int ndim = -1;
  int64_t out[TESSERA_MAX_NDIM];
  *status = tessera_tile_shape(static_cast<int>(shape.size()), shape.data(), static_cast<int>(reps.size()), reps.data(),
                               &ndim, out);
  return *status == TESSERA_OK ? Shape(out, out + ndim) : Shape{};
}

}  // namespace

TEST_CASE("zero rep gives an empty output and writes nothing") {
  const auto a = iota32(6);  // (2, 3)
  for (const Shape& reps : {Shape{0, 2}, Shape{2, 0}, Shape{0}, Shape{3, 0, 1}, Shape{0, 0}}) {
    CAPTURE(test::to_string(reps));
    const Shape expected_shape = ref::tile_shape({2, 3}, reps);
    REQUIRE(ref::count(expected_shape) == 0);

    CHECK(tessera::tile_shape({2, 3}, reps).to_vector() == expected_shape);
    tessera_status status;
    CHECK(c_tile_shape({2, 3}, reps, &status) == expected_shape);
    CHECK(status == TESSERA_OK);

    // dst may be null for an empty output.
    CHECK_NOTHROW(tessera::tile(a.data(), {2, 3}, {}, 4, reps, nullptr, 0));
    CHECK(tessera_tile(a.data(), 2, Shape{2, 3}.data(), nullptr, 4, static_cast<int>(reps.size()), reps.data(), nullptr,
                       0) == TESSERA_OK);

    // A real dst with room to spare is left exactly as it was.
    test::GuardedBuffer out(64);
    out.prefill_pattern(42);
    const auto before = out.bytes();
    tessera::tile(a.data(), {2, 3}, {}, 4, reps, out.data(), out.size());
    CHECK(out.bytes() == before);
    CHECK(tessera_tile(a.data(), 2, Shape{2, 3}.data(), nullptr, 4, static_cast<int>(reps.size()), reps.data(),
                       out.data(), out.size()) == TESSERA_OK);
    CHECK(out.bytes() == before);
    CHECK(out.check_guards() == "");

    const tessera::Plan plan({2, 3}, {}, 4, reps);
    CHECK(plan.size() == 0);
    CHECK(plan.nbytes() == 0);
    CHECK(plan.shape().to_vector() == expected_shape);
    CHECK(std::string(plan.kernel_name()) == "none");
    CHECK_NOTHROW(plan.execute(a.data(), nullptr, 0));

    const tessera::Array arr = tessera::tile(a.data(), {2, 3}, {}, 4, reps);
    CHECK(arr.nbytes() == 0);
    CHECK(arr.size() == 0);
    CHECK(arr.shape().to_vector() == expected_shape);

    // On success *out_data is set (null or an empty allocation); start from a dummy to see that.
    int dummy = 0;
    void* const sentinel = &dummy;
    void* data = sentinel;
    std::size_t bytes = 99;
    int ndim = -1;
    int64_t shape_out[TESSERA_MAX_NDIM];
    CHECK(tessera_tile_alloc(a.data(), 2, Shape{2, 3}.data(), nullptr, 4, static_cast<int>(reps.size()), reps.data(),
                             &data, &bytes, &ndim, shape_out) == TESSERA_OK);
    CHECK(bytes == 0);
    CHECK(Shape(shape_out, shape_out + ndim) == expected_shape);
    CHECK(data != sentinel);
    if (data != sentinel) tessera_free(data);
  }
}

TEST_CASE("an empty input may come with a null src") {
  // A zero extent makes both input and output empty; src and dst may then be null.
  const Shape shape = {3, 0, 2};
  CHECK(tessera::tile_shape(shape, {2, 2}) == tessera::Dims{3, 0, 4});
  CHECK_NOTHROW(tessera::tile(nullptr, shape, {}, 8, {2, 2}, nullptr, 0));
  CHECK(tessera_tile(nullptr, 3, shape.data(), nullptr, 8, 2, Shape{2, 2}.data(), nullptr, 0) == TESSERA_OK);
  const tessera::Plan plan(shape, {}, 8, {2, 2});
  CHECK(plan.input_size() == 0);
  CHECK(plan.size() == 0);
  CHECK_NOTHROW(plan.execute(nullptr, nullptr, 0));
  const tessera::Array arr = tessera::tile(nullptr, shape, {}, 8, {2, 2});
  CHECK(arr.shape() == tessera::Dims{3, 0, 4});
  CHECK(arr.nbytes() == 0);
}

TEST_CASE("empty reps give a copy of the input") {
  SUBCASE("contiguous") {
    const auto a = iota32(24);
    const tessera::Array arr = tessera::tile(a.data(), {2, 3, 4}, {}, 4, {});
    CHECK(arr.shape() == tessera::Dims{2, 3, 4});
    REQUIRE(arr.nbytes() == 96);
    CHECK(std::memcmp(arr.data(), a.data(), 96) == 0);
    CHECK(arr.data() != static_cast<const void*>(a.data()));
  }
  SUBCASE("a transposed view is materialized C-contiguously") {
    const auto a = iota32(6);  // (2, 3); its transpose is (3, 2) with byte strides (4, 12)
    int32_t out[6] = {};
    tessera::tile(a.data(), {3, 2}, {4, 12}, 4, {}, out, sizeof out);
    CHECK(std::vector<int32_t>(out, out + 6) == std::vector<int32_t>{1, 4, 2, 5, 3, 6});
  }
  SUBCASE("C API with reps == NULL and nreps == 0") {
    const auto a = iota32(5);
    int32_t out[5] = {};
    CHECK(tessera_tile(a.data(), 1, Shape{5}.data(), nullptr, 4, 0, nullptr, out, sizeof out) == TESSERA_OK);
    CHECK(std::vector<int32_t>(out, out + 5) == a);
  }
}

TEST_CASE("0-d input is one element") {
  // A 12-byte element, to stay off the vector paths' favourite sizes.
  const unsigned char element[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

  SUBCASE("empty reps: a 0-d copy of one element") {
    CHECK(tessera::tile_shape({}, {}).size() == 0);
    const tessera::Plan plan({}, {}, 12, {});
    CHECK(plan.ndim() == 0);
    CHECK(plan.size() == 1);
    CHECK(plan.nbytes() == 12);
    test::GuardedBuffer out(12);
    plan.execute(element, out.data(), out.size());
    CHECK(std::memcmp(out.data(), element, 12) == 0);
    CHECK(out.check_guards() == "");

    const tessera::Array arr = tessera::tile(element, {}, {}, 12, {});
    CHECK(arr.ndim() == 0);
    CHECK(arr.size() == 1);
    REQUIRE(arr.nbytes() == 12);
    CHECK(std::memcmp(arr.data(), element, 12) == 0);

    // C: ndim 0 with a NULL shape, nreps 0 with NULL reps.
    unsigned char c_out[12] = {};
    CHECK(tessera_tile(element, 0, nullptr, nullptr, 12, 0, nullptr, c_out, sizeof c_out) == TESSERA_OK);
    CHECK(std::memcmp(c_out, element, 12) == 0);
    int ndim = -1;
    int64_t shape[TESSERA_MAX_NDIM];
    CHECK(tessera_tile_shape(0, nullptr, 0, nullptr, &ndim, shape) == TESSERA_OK);
    CHECK(ndim == 0);
  }
  SUBCASE("reps (k,): 1-d of k copies") {
    for (int64_t k : {1, 2, 7, 40}) {
      CAPTURE(k);
      CHECK(tessera::tile_shape({}, {k}) == tessera::Dims{k});
      test::GuardedBuffer out(static_cast<std::size_t>(k) * 12);
      tessera::tile(element, {}, {}, 12, {k}, out.data(), out.size());
      for (int64_t i = 0; i < k; ++i) CHECK(std::memcmp(out.data() + i * 12, element, 12) == 0);
      CHECK(out.check_guards() == "");
    }
  }
  SUBCASE("reps (2, 3): 2-d") {
    const tessera::Array arr = tessera::tile(element, {}, {}, 12, {2, 3});
    CHECK(arr.shape() == tessera::Dims{2, 3});
    REQUIRE(arr.nbytes() == 72);
    for (int i = 0; i < 6; ++i) CHECK(std::memcmp(arr.data_as<unsigned char>() + i * 12, element, 12) == 0);
  }
  SUBCASE("reps (0,): empty") {
    CHECK(tessera::tile_shape({}, {0}) == tessera::Dims{0});
    CHECK_NOTHROW(tessera::tile(element, {}, {}, 12, {0}, nullptr, 0));
  }
}

TEST_CASE("all-ones reps give a copy in a distinct buffer, never an alias") {
  const auto a = iota32(12);  // (3, 4)
  for (const Shape& reps : {Shape{1}, Shape{1, 1}, Shape{1, 1, 1}, Shape{}}) {
    CAPTURE(test::to_string(reps));
    const tessera::Array arr = tessera::tile(a.data(), {3, 4}, {}, 4, reps);
    CHECK(arr.shape().to_vector() == ref::tile_shape({3, 4}, reps));
    REQUIRE(arr.nbytes() == 48);
    CHECK(arr.data() != static_cast<const void*>(a.data()));
    CHECK(std::memcmp(arr.data(), a.data(), 48) == 0);
  }
  // The copy is independent: changing the input afterwards does not change it.
  auto b = iota32(4);
  const tessera::Array arr = tessera::tile(b.data(), {4}, {}, 4, {1});
  b[0] = 100;
  CHECK(arr.data_as<int32_t>()[0] == 1);
}

TEST_CASE("tile_shape promotes the shorter of shape and reps, both ways") {
  struct Row {
    Shape shape, reps, out;
  };
  const Row rows[] = {
      {{3}, {2, 2}, {2, 6}},                  // shape promoted to (1, 3)
      {{3}, {2, 1, 2}, {2, 1, 6}},            // shape promoted to (1, 1, 3)
      {{2, 3, 4, 5}, {2, 2}, {2, 3, 8, 10}},  // reps promoted to (1, 1, 2, 2)
      {{4, 2, 3}, {2, 2}, {4, 4, 6}},         // reps promoted to (1, 2, 2)
      {{2, 3}, {2, 2, 2}, {2, 4, 6}},         // shape promoted to (1, 2, 3)
      {{}, {3, 1}, {3, 1}},                   // 0-d promoted to (1, 1)
      {{5, 0, 2}, {3}, {5, 0, 6}},            // empty axis stays empty
      {{1, 1, 1, 1, 1, 1, 7}, {6}, {1, 1, 1, 1, 1, 1, 42}},
  };
  for (const Row& r : rows) {
    CAPTURE(test::to_string(r.shape));
    CAPTURE(test::to_string(r.reps));
    CHECK(tessera::tile_shape(r.shape, r.reps).to_vector() == r.out);
    tessera_status status;
    CHECK(c_tile_shape(r.shape, r.reps, &status) == r.out);
    CHECK(status == TESSERA_OK);
  }
  // The largest rank both ways.
  const Shape ones(TESSERA_MAX_NDIM, 1);
  CHECK(tessera::tile_shape({2}, ones).size() == TESSERA_MAX_NDIM);
  CHECK(tessera::tile_shape(ones, {2}).size() == TESSERA_MAX_NDIM);
  CHECK(tessera::tile_shape(ones, {2})[TESSERA_MAX_NDIM - 1] == 2);
}

TEST_CASE("64 axes: the largest rank tiles correctly") {
  // 64-d input with a few non-trivial axes spread out, reps on others.
  Shape shape(TESSERA_MAX_NDIM, 1), reps(TESSERA_MAX_NDIM, 1);
  shape[0] = 2;
  shape[20] = 3;
  shape[63] = 2;
  reps[10] = 2;
  reps[20] = 2;
  reps[63] = 3;
  test::Rng rng(64);
  const test::View view = test::make_view(rng, shape, 4, test::kPermuted | test::kReversed, 7);
  for (test::Api api : test::all_apis()) CHECK(test::run_and_compare(view, reps, api) == "");
}

TEST_CASE("only the output's bytes are written when dst_bytes is larger") {
  const auto a = iota32(6);
  test::GuardedBuffer out(24 * 4 + 100);
  out.prefill_pattern(5);
  const auto before = out.bytes();
  tessera::tile(a.data(), {2, 3}, {}, 4, {2, 2}, out.data(), out.size());
  const auto after = out.bytes();
  const auto expected = ref::tile(a.data(), {2, 3}, {}, 4, {2, 2});
  CHECK(std::vector<unsigned char>(after.begin(), after.begin() + 96) == expected);
  CHECK(std::vector<unsigned char>(after.begin() + 96, after.end()) ==
        std::vector<unsigned char>(before.begin() + 96, before.end()));
}

TEST_CASE("tiling is periodic: tile(tile(A, r1), r2) == tile(A, r1 * r2)") {
  // An algebraic property independent of the reference implementation.
  test::Rng rng(2024);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = static_cast<int>(rng.uniform(1, 4));
    Shape shape(n), r1(n), r2(n), r12(n);
    for (int i = 0; i < n; ++i) {
      shape[i] = rng.uniform(1, 5);
      r1[i] = rng.uniform(1, 3);
      r2[i] = rng.uniform(1, 3);
      r12[i] = r1[i] * r2[i];
    }
    const std::size_t itemsize = rng.pick(std::vector<std::size_t>{1, 2, 3, 4, 8, 16});
    std::vector<unsigned char> a(static_cast<std::size_t>(ref::count(shape)) * itemsize);
    test::fill_pattern(a.data(), a.size(), static_cast<uint64_t>(trial));
    const tessera::Array once = tessera::tile(a.data(), shape, {}, itemsize, r1);
    const tessera::Array twice = tessera::tile(once.data(), once.shape(), {}, itemsize, r2);
    const tessera::Array direct = tessera::tile(a.data(), shape, {}, itemsize, r12);
    CAPTURE(test::to_string(shape));
    CHECK(twice.shape() == direct.shape());
    REQUIRE(twice.nbytes() == direct.nbytes());
    CHECK(std::memcmp(twice.data(), direct.data(), direct.nbytes()) == 0);
  }
}
