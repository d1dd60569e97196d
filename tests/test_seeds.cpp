// Every example of the three seed descriptions of tile (numpy.tile, mx.nd.tile, OpenVINO Tile-1),
// with their exact values and shapes, through the C++ API and through the C API (called from C).
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include <array>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "c_api_check.h"
#include "reference.hpp"
#include "util.hpp"

namespace {

using test::Shape;

template <class T>
struct Example {
  const char* name;
  std::vector<T> input;  // C-contiguous
  Shape shape;
  Shape reps;
  Shape out_shape;
  std::vector<T> expected;  // C-contiguous
};

// The example through tile_shape, the one-shot call, a Plan and the allocating call.
template <class T>
void check_cpp(const Example<T>& ex) {
  INFO("C++ API, example " << ex.name);
  const std::size_t nbytes = ex.expected.size() * sizeof(T);

  CHECK(tessera::tile_shape(ex.shape, ex.reps) == tessera::Dims(ex.out_shape));

  std::vector<T> out(ex.expected.size() + 4, T(-7));  // 4 trailing sentinels
  tessera::tile(ex.input.data(), ex.shape, {}, sizeof(T), ex.reps, out.data(), nbytes);
  CHECK(std::vector<T>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(ex.expected.size())) == ex.expected);
  CHECK(std::vector<T>(out.end() - 4, out.end()) == std::vector<T>(4, T(-7)));

  const tessera::Plan plan(ex.shape, {}, sizeof(T), ex.reps);
  CHECK(plan.shape() == tessera::Dims(ex.out_shape));
  CHECK(plan.nbytes() == nbytes);
  std::vector<T> out2(ex.expected.size());
  plan.execute(ex.input.data(), out2.data(), nbytes);
  CHECK(out2 == ex.expected);

  const tessera::Array a = tessera::tile(ex.input.data(), ex.shape, {}, sizeof(T), ex.reps);
  CHECK(a.shape() == tessera::Dims(ex.out_shape));
  REQUIRE(a.nbytes() == nbytes);
  CHECK(std::vector<T>(a.data_as<T>(), a.data_as<T>() + a.size()) == ex.expected);
}

// The example through c_tile / c_tile_alloc / c_plan_run of the C translation unit.
template <class T>
void check_c(const Example<T>& ex) {
  INFO("C API from C, example " << ex.name);
  const int ndim = static_cast<int>(ex.shape.size());
  const int nreps = static_cast<int>(ex.reps.size());
  const std::size_t nbytes = ex.expected.size() * sizeof(T);
  std::vector<T> out(ex.expected.size());

  c_tile_info info;
  c_tile(ex.input.data(), sizeof(T), ndim, ex.shape.data(), nullptr, nreps, ex.reps.data(), out.data(), nbytes, &info);
  CHECK(info.shape_status == TESSERA_OK);
  CHECK(info.status == TESSERA_OK);
  CHECK(Shape(info.shape, info.shape + info.ndim) == ex.out_shape);
  CHECK(info.nbytes == nbytes);
  CHECK(out == ex.expected);

  std::fill(out.begin(), out.end(), T(0));
  c_tile_alloc(ex.input.data(), sizeof(T), ndim, ex.shape.data(), nullptr, nreps, ex.reps.data(), out.data(), nbytes,
               &info);
  CHECK(info.status == TESSERA_OK);
  CHECK(info.aligned64 == 1);
  CHECK(Shape(info.shape, info.shape + info.ndim) == ex.out_shape);
  CHECK(info.nbytes == nbytes);
  CHECK(out == ex.expected);

  std::vector<T> out0(ex.expected.size()), out1(ex.expected.size());
  c_plan_info plan;
  c_plan_run(ex.input.data(), ex.input.data(), sizeof(T), ndim, ex.shape.data(), nullptr, nreps, ex.reps.data(),
             out0.data(), out1.data(), nbytes, &plan);
  CHECK(plan.create_status == TESSERA_OK);
  CHECK(plan.output_bytes == nbytes);
  CHECK(Shape(plan.shape, plan.shape + plan.ndim) == ex.out_shape);
  CHECK(plan.execute_status[0] == TESSERA_OK);
  CHECK(plan.execute_status[1] == TESSERA_OK);
  CHECK(out0 == ex.expected);
  CHECK(out1 == ex.expected);
}

template <class T>
void check_both(const Example<T>& ex) {
  // Guard against typos in the examples themselves: the shape and values must agree with the
  // reference too.
  REQUIRE(ref::tile_shape(ex.shape, ex.reps) == ex.out_shape);
  REQUIRE(static_cast<int64_t>(ex.expected.size()) == ref::count(ex.out_shape));
  check_cpp(ex);
  check_c(ex);
}

// iota input of `shape`, expected values from the reference: for the shape-only OpenVINO examples.
Example<int32_t> shape_example(const char* name, Shape shape, Shape reps, Shape out_shape) {
  Example<int32_t> ex{name, std::vector<int32_t>(static_cast<std::size_t>(ref::count(shape))), shape, reps, out_shape,
                      {}};
  std::iota(ex.input.begin(), ex.input.end(), 1);
  const auto bytes = ref::tile(ex.input.data(), shape, {}, sizeof(int32_t), reps);
  ex.expected.resize(bytes.size() / sizeof(int32_t));
  std::memcpy(ex.expected.data(), bytes.data(), bytes.size());
  return ex;
}

}  // namespace

TEST_CASE("seed numpy.tile: the docstring examples") {
  const std::vector<int64_t> a = {0, 1, 2};
  const std::vector<int64_t> b = {1, 2, 3, 4};  // [[1, 2], [3, 4]]
  const std::vector<int64_t> c = {1, 2, 3, 4};

  SUBCASE("np.tile(a, 2)") { check_both<int64_t>({"tile(a, 2)", a, {3}, {2}, {6}, {0, 1, 2, 0, 1, 2}}); }
  SUBCASE("np.tile(a, (2, 2))") {
    check_both<int64_t>({"tile(a, (2, 2))", a, {3}, {2, 2}, {2, 6}, {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}});
  }
  SUBCASE("np.tile(a, (2, 1, 2))") {
    check_both<int64_t>({"tile(a, (2, 1, 2))", a, {3}, {2, 1, 2}, {2, 1, 6}, {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}});
  }
  SUBCASE("np.tile(b, 2)") { check_both<int64_t>({"tile(b, 2)", b, {2, 2}, {2}, {2, 4}, {1, 2, 1, 2, 3, 4, 3, 4}}); }
  SUBCASE("np.tile(b, (2, 1))") {
    check_both<int64_t>({"tile(b, (2, 1))", b, {2, 2}, {2, 1}, {4, 2}, {1, 2, 3, 4, 1, 2, 3, 4}});
  }
  SUBCASE("np.tile(c, (4, 1))") {
    check_both<int64_t>({"tile(c, (4, 1))", c, {4}, {4, 1}, {4, 4}, {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}});
  }
  SUBCASE("tile([1, 2], (3, 1))") {
    check_both<int64_t>({"tile([1, 2], (3, 1))", {1, 2}, {2}, {3, 1}, {3, 2}, {1, 2, 1, 2, 1, 2}});
  }
}

TEST_CASE("seed numpy.tile: promotion rules of the text") {
  // "a shape (3,) array is promoted to (1, 3) for 2-D replication, or (1, 1, 3) for 3-D".
  CHECK(tessera::tile_shape({3}, {1, 1}) == tessera::Dims{1, 3});
  CHECK(tessera::tile_shape({3}, {1, 1, 1}) == tessera::Dims{1, 1, 3});
  // "for an A of shape (2, 3, 4, 5), a reps of (2, 2) is treated as (1, 1, 2, 2)".
  CHECK(tessera::tile_shape({2, 3, 4, 5}, {2, 2}) == tessera::Dims{2, 3, 8, 10});
  CHECK(tessera::tile_shape({2, 3, 4, 5}, {2, 2}) == tessera::tile_shape({2, 3, 4, 5}, {1, 1, 2, 2}));
  check_both(shape_example("(2, 3, 4, 5) x (2, 2)", {2, 3, 4, 5}, {2, 2}, {2, 3, 8, 10}));
}

TEST_CASE("seed mx.nd.tile: the three cases n = d, n > d, n < d") {
  const std::vector<float> x = {1.f, 2.f, 3.f, 4.f};  // [[1, 2], [3, 4]]

  SUBCASE("n = d: tile(x, reps=(2, 3))") {
    check_both<float>({"tile(x, (2, 3))", x, {2, 2}, {2, 3}, {4, 6}, {1, 2, 1, 2, 1, 2,  //
                                                                      3, 4, 3, 4, 3, 4,  //
                                                                      1, 2, 1, 2, 1, 2,  //
                                                                      3, 4, 3, 4, 3, 4}});
  }
  SUBCASE("n > d: tile(x, reps=(2,))") {
    check_both<float>({"tile(x, (2,))", x, {2, 2}, {2}, {2, 4}, {1, 2, 1, 2, 3, 4, 3, 4}});
  }
  SUBCASE("n < d: tile(x, reps=(2, 2, 3))") {
    const std::vector<float> plane = {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4};
    std::vector<float> expected = plane;
    expected.insert(expected.end(), plane.begin(), plane.end());
    check_both<float>({"tile(x, (2, 2, 3))", x, {2, 2}, {2, 2, 3}, {2, 4, 6}, expected});
  }
}

TEST_CASE("seed OpenVINO Tile-1: the shape examples") {
  SUBCASE("text: data (2, 3), repeats [2, 2, 2] -> (2, 4, 6)") {
    check_both(shape_example("(2, 3) x [2, 2, 2]", {2, 3}, {2, 2, 2}, {2, 4, 6}));
  }
  SUBCASE("text: data (4, 2, 3), repeats [2, 2] -> (4, 4, 6)") {
    check_both(shape_example("(4, 2, 3) x [2, 2]", {4, 2, 3}, {2, 2}, {4, 4, 6}));
  }
  SUBCASE("example 1: (2, 3, 4) x [1, 2, 3] -> (2, 6, 12)") {
    check_both(shape_example("example 1", {2, 3, 4}, {1, 2, 3}, {2, 6, 12}));
  }
  SUBCASE("example 2: (2, 3, 4) x [5, 1, 2, 3] -> (5, 2, 6, 12)") {
    check_both(shape_example("example 2", {2, 3, 4}, {5, 1, 2, 3}, {5, 2, 6, 12}));
  }
  SUBCASE("example 3: (5, 2, 3, 4) x [1, 2, 3] -> (5, 2, 6, 12)") {
    check_both(shape_example("example 3", {5, 2, 3, 4}, {1, 2, 3}, {5, 2, 6, 12}));
  }
}

TEST_CASE("seed OpenVINO Tile-1: repeats of any integer type") {
  // T2 is "any integer type": the same tile with repeats given as several integer containers.
  const std::vector<int32_t> data = {1, 2, 3, 4, 5, 6};  // (2, 3)
  const Shape shape = {2, 3};
  const auto expected = shape_example("(2, 3) x [2, 2]", shape, {2, 2}, {4, 6}).expected;
  auto run = [&](const tessera::Dims& reps) {
    const tessera::Array a = tessera::tile(data.data(), shape, {}, sizeof(int32_t), reps);
    CHECK(a.shape() == tessera::Dims{4, 6});
    CHECK(std::vector<int32_t>(a.data_as<int32_t>(), a.data_as<int32_t>() + a.size()) == expected);
  };
  run(std::vector<int8_t>{2, 2});
  run(std::vector<uint8_t>{2, 2});
  run(std::vector<int16_t>{2, 2});
  run(std::vector<uint16_t>{2, 2});
  run(std::vector<int32_t>{2, 2});
  run(std::vector<uint32_t>{2, 2});
  run(std::vector<long long>{2, 2});
  run(std::array<uint64_t, 2>{2, 2});
  const int c_array[2] = {2, 2};
  run(c_array);
  const std::size_t sizes[] = {2, 2};
  run(tessera::Dims(sizes, 2));
}
