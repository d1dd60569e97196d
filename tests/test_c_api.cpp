// The C API as used from C (tests/c_api_check.c): each call's results are checked here against the
// reference.
#include <doctest/doctest.h>

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "c_api_check.h"
#include "reference.hpp"
#include "util.hpp"

namespace {

using test::Shape;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("C: tessera_tile_shape and tessera_tile on strided inputs") {
  test::Rng rng(901);
  for (unsigned layout : {unsigned{test::kContiguous}, unsigned{test::kReversed}, unsigned{test::kAllLayouts}}) {
    for (std::size_t itemsize : {std::size_t{2}, std::size_t{3}, std::size_t{16}}) {
      CAPTURE(test::layout_name(layout));
      CAPTURE(itemsize);
      const test::View view = test::make_view(rng, {3, 4, 2}, itemsize, layout, 21);
      const Shape reps = {2, 1, 3, 2};
      const auto expected = ref::tile(view.data(), view.shape, view.strides, itemsize, reps);
      std::vector<unsigned char> out(expected.size());
      c_tile_info info;
      c_tile(view.data(), itemsize, 3, view.shape.data(), view.strides.data(), 4, reps.data(), out.data(), out.size(),
             &info);
      CHECK(info.shape_status == TESSERA_OK);
      CHECK(info.status == TESSERA_OK);
      CHECK(Shape(info.shape, info.shape + info.ndim) == Shape{2, 3, 12, 4});
      CHECK(info.nbytes == expected.size());
      CHECK(out == expected);
    }
  }
}

TEST_CASE("C: an empty output through tessera_tile with a NULL dst") {
  const int32_t a[3] = {1, 2, 3};
  c_tile_info info;
  c_tile(a, 4, 1, Shape{3}.data(), nullptr, 2, Shape{0, 5}.data(), nullptr, 0, &info);
  CHECK(info.status == TESSERA_OK);
  CHECK(Shape(info.shape, info.shape + info.ndim) == Shape{0, 15});
  CHECK(info.nbytes == 0);
}

TEST_CASE("C: a plan's whole life") {
  // A transposed int32 input, reused on two sources with the same layout.
  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6};        // (2, 3); view its transpose (3, 2)
  const std::vector<int32_t> b = {10, 20, 30, 40, 50, 60};  // same layout, other values
  const Shape shape = {3, 2}, strides = {4, 12}, reps = {1, 2};
  std::vector<int32_t> out0(12, -1), out1(12, -1);
  c_plan_info info;
  c_plan_run(a.data(), b.data(), 4, 2, shape.data(), strides.data(), 2, reps.data(), out0.data(), out1.data(), 48,
             &info);
  CHECK(info.create_status == TESSERA_OK);
  CHECK(info.output_bytes == 48);
  CHECK(info.shape_status == TESSERA_OK);
  CHECK(Shape(info.shape, info.shape + info.ndim) == Shape{3, 4});
  CHECK(info.execute_status[0] == TESSERA_OK);
  CHECK(info.execute_status[1] == TESSERA_OK);
  CHECK(out0 == std::vector<int32_t>{1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6});
  CHECK(out1 == std::vector<int32_t>{10, 40, 10, 40, 20, 50, 20, 50, 30, 60, 30, 60});

  // The description names the kernel the C++ plan for the same layout reports.
  const std::string describe = info.describe;
  CHECK(!describe.empty());
  const tessera::Plan plan(shape, strides, 4, reps);
  CHECK_MESSAGE(contains(describe, plan.kernel_name()), describe);
}

TEST_CASE("C: tessera_tile_alloc and tessera_free") {
  const uint8_t a[5] = {9, 8, 7, 6, 5};
  SUBCASE("1-d by (2, 3)") {
    uint8_t out[30] = {};
    c_tile_info info;
    c_tile_alloc(a, 1, 1, Shape{5}.data(), nullptr, 2, Shape{2, 3}.data(), out, sizeof out, &info);
    CHECK(info.status == TESSERA_OK);
    CHECK(info.aligned64 == 1);
    CHECK(info.nbytes == 30);
    CHECK(Shape(info.shape, info.shape + info.ndim) == Shape{2, 15});
    for (int i = 0; i < 30; ++i) CHECK(out[i] == a[i % 5]);
  }
  SUBCASE("0-d input, no reps") {
    uint8_t out[1] = {};
    c_tile_info info;
    c_tile_alloc(a + 2, 1, 0, nullptr, nullptr, 0, nullptr, out, sizeof out, &info);
    CHECK(info.status == TESSERA_OK);
    CHECK(info.ndim == 0);
    CHECK(info.nbytes == 1);
    CHECK(out[0] == 7);
  }
  SUBCASE("empty output") {
    c_tile_info info;
    c_tile_alloc(a, 1, 1, Shape{5}.data(), nullptr, 1, Shape{0}.data(), nullptr, 0, &info);
    CHECK(info.status == TESSERA_OK);
    CHECK(info.nbytes == 0);
    CHECK(Shape(info.shape, info.shape + info.ndim) == Shape{0});
  }
}

TEST_CASE("C: errors with tessera_last_error") {
  SUBCASE("the fixed scenario: int16 {1, 2, 3} by reps (2, -3)") {
    c_error_info info;
    c_negative_rep_scenario(&info);
    CHECK(info.status == TESSERA_INVALID_ARGUMENT);
    CHECK(info.dst_untouched == 1);
    CHECK_MESSAGE(contains(info.message, "-3"), info.message);
    CHECK(std::string(c_last_error()) == info.message);
  }
  SUBCASE("dst one byte too small") {
    const int64_t a[4] = {1, 2, 3, 4};
    unsigned char dst[63];
    c_error_info info;
    c_tile_expect_error(a, 8, 1, Shape{4}.data(), 1, Shape{2}.data(), dst, sizeof dst, &info);
    CHECK(info.status == TESSERA_BUFFER_TOO_SMALL);
    CHECK(info.dst_untouched == 1);
    CHECK_MESSAGE(contains(info.message, "63"), info.message);
  }
  SUBCASE("an overflowing output") {
    const int64_t a[2] = {1, 2};
    unsigned char dst[64];
    c_error_info info;
    c_tile_expect_error(a, 8, 1, Shape{2}.data(), 1, Shape{INT64_MAX}.data(), dst, sizeof dst, &info);
    CHECK(info.status == TESSERA_OVERFLOW);
    CHECK(info.dst_untouched == 1);
    CHECK(std::string(info.message) != "");
  }
}

TEST_CASE("C: version and active target") {
  CHECK(std::string(c_version()) == "0.1.0");
  CHECK(c_version_matches_macros() == 1);
  CHECK(std::string(tessera::version()) == c_version());
  CHECK(std::string(c_active_target()) == tessera::active_target());
  CHECK(!std::string(c_active_target()).empty());
}

TEST_CASE("C: several bad arguments report the first in argument order") {
  const uint8_t a[4] = {1, 2, 3, 4};
  int n = 0;
  int64_t out_shape[TESSERA_MAX_NDIM];
  tessera_options bad;
  tessera_options_init(&bad);
  bad.accumulate = 2;
  SUBCASE("tessera_tile_shape_ex: shape, reps, options, out_ndim, out_shape") {
    CHECK(tessera_tile_shape_ex(1, Shape{4}.data(), 1, Shape{2}.data(), &bad, nullptr, out_shape) ==
          TESSERA_INVALID_ARGUMENT);
    CHECK(contains(tessera_last_error(), "options->accumulate = 2"));
  }
  SUBCASE("tessera_tile_alloc_ex: the input, reps, options, then the output pointers") {
    std::size_t bytes = 0;
    CHECK(tessera_tile_alloc_ex(a, 1, Shape{4}.data(), nullptr, 1, -1, nullptr, &bad, nullptr, &bytes, &n,
                                out_shape) == TESSERA_INVALID_ARGUMENT);
    CHECK(contains(tessera_last_error(), "nreps = -1 is out of range"));
    CHECK(tessera_tile_alloc_ex(a, 1, Shape{4}.data(), nullptr, 1, 1, Shape{2}.data(), &bad, nullptr, &bytes, &n,
                                out_shape) == TESSERA_INVALID_ARGUMENT);
    CHECK(contains(tessera_last_error(), "options->accumulate = 2"));
    CHECK(tessera_tile_alloc_ex(a, 1, Shape{4}.data(), nullptr, 1, 1, Shape{2}.data(), nullptr, nullptr, &bytes, &n,
                                out_shape) == TESSERA_INVALID_ARGUMENT);
    CHECK(contains(tessera_last_error(), "out_data is NULL"));
  }
  SUBCASE("tessera_plan_execute_region: start before extent") {
    tessera_plan* plan = nullptr;
    REQUIRE(tessera_plan_create(1, Shape{4}.data(), nullptr, 1, 1, Shape{2}.data(), &plan) == TESSERA_OK);
    uint8_t dst[8];
    CHECK(tessera_plan_execute_region(plan, a, nullptr, nullptr, dst, sizeof dst) == TESSERA_INVALID_ARGUMENT);
    CHECK(contains(tessera_last_error(), "start is NULL"));
    tessera_plan_destroy(plan);
  }
}

TEST_CASE("The element types: one table behind names, sizes, numpy kinds and DLPack codes") {
  using tessera::DType;
  for (int v = TESSERA_FLOAT32; v <= TESSERA_UINT64; ++v) {
    const auto d = static_cast<DType>(v);
    CAPTURE(v);
    CHECK(tessera::dtype_named(tessera::dtype_name(d)) == d);
    CHECK(tessera_dtype_itemsize(v) == tessera::itemsize_of(d));
    CHECK(std::string(tessera_dtype_name(v)) == tessera::dtype_name(d));
  }
  CHECK(tessera::dtype_from_numpy('f', 2) == DType::float16);
  CHECK(tessera::dtype_from_numpy('f', 8) == DType::float64);
  CHECK(tessera::dtype_from_numpy('c', 16) == DType::complex128);
  CHECK(tessera::dtype_from_numpy('i', 1) == DType::int8);
  CHECK(tessera::dtype_from_numpy('u', 8) == DType::uint64);
  CHECK(!tessera::dtype_from_numpy('b', 1));   // bool
  CHECK(!tessera::dtype_from_numpy('f', 16));  // long double
  CHECK(!tessera::dtype_from_numpy('\0', 2));  // bfloat16 has no numpy kind
  CHECK(tessera::dtype_from_dlpack(2, 32, 1) == DType::float32);  // kDLFloat
  CHECK(tessera::dtype_from_dlpack(4, 16, 1) == DType::bfloat16);  // kDLBfloat
  CHECK(tessera::dtype_from_dlpack(5, 64, 1) == DType::complex64);  // kDLComplex
  CHECK(tessera::dtype_from_dlpack(0, 16, 1) == DType::int16);  // kDLInt
  CHECK(tessera::dtype_from_dlpack(1, 32, 1) == DType::uint32);  // kDLUInt
  CHECK(!tessera::dtype_from_dlpack(2, 32, 4));  // float32x4
  CHECK(!tessera::dtype_from_dlpack(6, 8, 1));   // kDLBool
  CHECK(!tessera::dtype_from_dlpack(4, 32, 1));
  CHECK(!tessera::dtype_named("bool"));
  CHECK(!tessera::dtype_named("torch.float32"));
  CHECK(!tessera::dtype_named(""));
  CHECK(tessera_dtype_itemsize(14) == 0);
  CHECK(std::string(tessera_dtype_name(-1)).empty());
  CHECK_THROWS_WITH_AS(tessera::itemsize_of(static_cast<DType>(14)), doctest::Contains("dtype 14 is not a tessera_dtype"),
                       tessera::InvalidArgument);
}

TEST_CASE("C: repeated one-shot calls (a thread's last plan kept) read each call's arguments and buffers") {
  // The same small call again and again, then with one argument changed at a time: every result is
  // the reference's, and bad input after good is still named with nothing written.
  const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  const int64_t shape[2] = {2, 2}, reps23[2] = {2, 3}, reps32[2] = {3, 2}, strides_t[2] = {4, 8};
  float dst[24];
  const auto expect = [&](const float* src, const int64_t* strides, const int64_t* reps) {
    for (int i = 0; i < 2 * static_cast<int>(reps[0]); ++i)
      for (int j = 0; j < 2 * static_cast<int>(reps[1]); ++j) {
        const int64_t r = i % 2, c = j % 2;
        const float want = strides == nullptr ? src[r * 2 + c] : src[c * 2 + r];
        CHECK(dst[i * 2 * reps[1] + j] == want);
      }
  };
  for (int k = 0; k < 3; ++k) {
    const float* src = k % 2 ? b : a;
    std::memset(dst, 0, sizeof dst);
    REQUIRE(tessera_tile(src, 2, shape, nullptr, 4, 2, reps23, dst, sizeof dst) == TESSERA_OK);
    expect(src, nullptr, reps23);
  }
  REQUIRE(tessera_tile(a, 2, shape, nullptr, 4, 2, reps32, dst, sizeof dst) == TESSERA_OK);
  expect(a, nullptr, reps32);
  REQUIRE(tessera_tile(a, 2, shape, strides_t, 4, 2, reps32, dst, sizeof dst) == TESSERA_OK);  // transposed
  expect(a, strides_t, reps32);
  REQUIRE(tessera_tile(a, 2, shape, nullptr, 4, 2, reps23, dst, sizeof dst) == TESSERA_OK);
  expect(a, nullptr, reps23);
  // The same arguments into too small a buffer, and with a bad rep: errors, nothing written.
  float small[24];
  std::memset(small, 0x5A, sizeof small);
  CHECK(tessera_tile(a, 2, shape, nullptr, 4, 2, reps23, small, sizeof small - 4) == TESSERA_BUFFER_TOO_SMALL);
  const int64_t bad[2] = {2, -3};
  CHECK(tessera_tile(a, 2, shape, nullptr, 4, 2, bad, small, sizeof small) == TESSERA_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error()).find("-3") != std::string::npos);
  tessera_options clamp;
  tessera_options_init(&clamp);
  clamp.negative_reps = TESSERA_NEGATIVE_REPS_CLAMP_TO_ZERO;
  CHECK(tessera_tile_ex(a, 2, shape, nullptr, 4, 2, bad, small, sizeof small, &clamp) == TESSERA_OK);  // empty
  CHECK(tessera_tile(a, 2, shape, nullptr, 4, 2, bad, small, sizeof small) == TESSERA_INVALID_ARGUMENT);
  for (std::size_t i = 0; i < sizeof small; ++i) CHECK(reinterpret_cast<unsigned char*>(small)[i] == 0x5A);
  // itemsize 8 with the same shape and reps: re-planned, not the float plan.
  const double d[4] = {1.5, 2.5, 3.5, 4.5};
  double dd[24];
  REQUIRE(tessera_tile(d, 2, shape, nullptr, 8, 2, reps23, dd, sizeof dd) == TESSERA_OK);
  CHECK(dd[23] == 4.5);
  CHECK(dd[1] == 2.5);
  // repeat with one count, then another count: each call's count.
  const int64_t one = 2, other = 3, s4[1] = {4};
  REQUIRE(tessera_repeat(a, 1, s4, nullptr, 4, 1, &one, 0, dst, sizeof dst) == TESSERA_OK);
  CHECK(dst[7] == 4);
  REQUIRE(tessera_repeat(a, 1, s4, nullptr, 4, 1, &other, 0, dst, sizeof dst) == TESSERA_OK);
  CHECK(dst[11] == 4);
  CHECK(dst[3] == 2);
}
