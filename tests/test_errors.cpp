// Every error class through both APIs: the right exception type (and status()) or tessera_status,
// a message naming the bad value, tessera_last_error() set after a C failure, and the output
// buffer left untouched (nothing allocated for the allocating calls).
#include <doctest/doctest.h>

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "c_api_check.h"
#include "util.hpp"

namespace {

using tessera::Status;
using test::Shape;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// f must throw the tessera::Error subclass matching `status`, with `needle` in its message.
void check_throws(const std::function<void()>& f, Status status, const std::string& needle) {
  try {
    f();
    FAIL_CHECK("no exception; expected status " << static_cast<int>(status));
  } catch (const tessera::Error& e) {
    CHECK(e.status() == status);
    switch (status) {
      case Status::invalid_argument: CHECK(dynamic_cast<const tessera::InvalidArgument*>(&e) != nullptr); break;
      case Status::overflow: CHECK(dynamic_cast<const tessera::Overflow*>(&e) != nullptr); break;
      case Status::buffer_too_small: CHECK(dynamic_cast<const tessera::BufferTooSmall*>(&e) != nullptr); break;
      default: FAIL_CHECK("unexpected status in the test table");
    }
    CHECK_MESSAGE(contains(e.what(), needle), "message \"" << e.what() << "\" should contain \"" << needle << "\"");
  } catch (const std::exception& e) {
    FAIL_CHECK("threw a non-tessera exception: " << e.what());
  }
}

// A C call returned `got`; it must be `expected`, with `needle` in tessera_last_error().
void check_c_failure(tessera_status got, tessera_status expected, const std::string& needle) {
  CHECK(got == expected);
  const std::string message = tessera_last_error();
  CHECK(!message.empty());
  CHECK_MESSAGE(contains(message, needle),
                "tessera_last_error() \"" << message << "\" should contain \"" << needle << "\"");
}

// An error found while planning (from shape, reps and itemsize alone).
struct PlanError {
  const char* name;
  Shape shape;
  Shape reps;
  std::size_t itemsize;
  Status status;
  const char* needle;  // must appear in the message
  bool shape_fails;    // tile_shape (which has no itemsize) fails too
};

const std::vector<PlanError>& plan_errors() {
  static const std::vector<PlanError> list = {
      {"negative rep", {2, 3}, {2, -3}, 4, Status::invalid_argument, "-3", true},
      {"negative rep in a prepended position", {4}, {-1, 2}, 4, Status::invalid_argument, "-1", true},
      {"negative rep with a zero rep elsewhere", {4, 4}, {0, -7}, 4, Status::invalid_argument, "-7", true},
      {"negative extent", {2, -5}, {2}, 4, Status::invalid_argument, "-5", true},
      {"negative extent with a zero rep", {-2, 3}, {0, 1}, 4, Status::invalid_argument, "-2", true},
      {"output count overflow: (2,) x (INT64_MAX,)",
       {2},
       {kInt64Max},
       1,
       Status::overflow,
       "9223372036854775807",
       true},
      {"output extent overflow on one axis",
       {int64_t{1} << 40},
       {int64_t{1} << 30},
       1,
       Status::overflow,
       "1073741824",
       true},
      {"output count overflow across axes",
       {int64_t{1} << 32, int64_t{1} << 32},
       {},
       1,
       Status::overflow,
       "4294967296",
       true},
      {"output count overflow from reps alone",
       {},
       {int64_t{1} << 32, int64_t{1} << 31, 4},
       1,
       Status::overflow,
       "",
       true},
      {"byte size overflow: count 2^62 fits, x 4 bytes does not",
       {1},
       {int64_t{1} << 62},
       4,
       Status::overflow,
       "4611686018427387904",
       false},
      {"byte size overflow: huge itemsize",
       {3},
       {2},
       std::size_t{1} << 62,
       Status::overflow,
       "4611686018427387904",
       false},
      {"itemsize 0", {2, 3}, {2}, 0, Status::invalid_argument, "itemsize", false},
  };
  return list;
}

}  // namespace

TEST_CASE("errors found while planning, through the C++ API") {
  const std::array<unsigned char, 64> src{};
  for (const PlanError& e : plan_errors()) {
    CAPTURE(e.name);
    if (e.shape_fails)
      check_throws([&] { tessera::tile_shape(e.shape, e.reps); }, e.status, e.needle);
    else
      CHECK_NOTHROW(tessera::tile_shape(e.shape, e.reps));

    check_throws([&] { (void)tessera::Plan(e.shape, {}, e.itemsize, e.reps); }, e.status, e.needle);
    check_throws([&] { tessera::tile(src.data(), e.shape, {}, e.itemsize, e.reps); }, e.status, e.needle);

    // The one-shot call writes nothing into a (sufficiently large for any sane reading) buffer.
    test::GuardedBuffer out(256);
    out.prefill_pattern(9);
    const auto before = out.bytes();
    check_throws([&] { tessera::tile(src.data(), e.shape, {}, e.itemsize, e.reps, out.data(), out.size()); }, e.status,
                 e.needle);
    CHECK(out.bytes() == before);
    CHECK(out.check_guards() == "");
  }
}

TEST_CASE("errors found while planning, through the C API") {
  const std::array<unsigned char, 64> src{};
  const auto c_status = [](Status s) { return static_cast<tessera_status>(s); };
  for (const PlanError& e : plan_errors()) {
    CAPTURE(e.name);
    const int ndim = static_cast<int>(e.shape.size());
    const int nreps = static_cast<int>(e.reps.size());
    int out_ndim = -1;
    int64_t out_shape[TESSERA_MAX_NDIM];

    const tessera_status shape_status =
        tessera_tile_shape(ndim, e.shape.data(), nreps, e.reps.data(), &out_ndim, out_shape);
    if (e.shape_fails)
      check_c_failure(shape_status, c_status(e.status), e.needle);
    else
      CHECK(shape_status == TESSERA_OK);

    tessera_plan* plan = nullptr;
    check_c_failure(tessera_plan_create(ndim, e.shape.data(), nullptr, e.itemsize, nreps, e.reps.data(), &plan),
                    c_status(e.status), e.needle);

    test::GuardedBuffer out(256);
    out.prefill_pattern(10);
    const auto before = out.bytes();
    check_c_failure(tessera_tile(src.data(), ndim, e.shape.data(), nullptr, e.itemsize, nreps, e.reps.data(),
                                 out.data(), out.size()),
                    c_status(e.status), e.needle);
    CHECK(out.bytes() == before);
    CHECK(out.check_guards() == "");

    // On error the allocating call leaves *out_data unchanged.
    int dummy = 0;
    void* data = &dummy;
    std::size_t bytes = 0;
    check_c_failure(tessera_tile_alloc(src.data(), ndim, e.shape.data(), nullptr, e.itemsize, nreps, e.reps.data(),
                                       &data, &bytes, &out_ndim, out_shape),
                    c_status(e.status), e.needle);
    CHECK(data == static_cast<void*>(&dummy));
  }
}

TEST_CASE("a negative rep is not an overflow, and an overflow is not an invalid argument") {
  // The two classes must be distinguishable by type, not only by message.
  CHECK_THROWS_AS(tessera::tile_shape({2, 3}, {2, -3}), tessera::InvalidArgument);
  CHECK_THROWS_AS(tessera::tile_shape({2}, {kInt64Max}), tessera::Overflow);
  try {
    tessera::tile_shape({2}, {kInt64Max});
  } catch (const tessera::InvalidArgument&) {
    FAIL("an overflow was reported as an invalid argument");
  } catch (const tessera::Error& e) {
    CHECK(e.status() == Status::overflow);
  }
  // All are tessera::Error and std::runtime_error.
  CHECK_THROWS_AS(tessera::tile_shape({2, 3}, {2, -3}), tessera::Error);
  CHECK_THROWS_AS(tessera::tile_shape({2, 3}, {2, -3}), std::runtime_error);
  // The largest counts that fit are fine: (2,) x (INT64_MAX / 2,).
  CHECK(tessera::tile_shape({2}, {kInt64Max / 2}) == tessera::Dims{kInt64Max / 2 * 2});
  CHECK(tessera::tile_shape({1}, {int64_t{1} << 62}) == tessera::Dims{int64_t{1} << 62});
}

TEST_CASE("ndim and nreps out of range (C API)") {
  const std::array<unsigned char, 64> src{};
  const Shape ones(TESSERA_MAX_NDIM + 1, 1);  // valid memory for 65 values
  int out_ndim = -1;
  int64_t out_shape[TESSERA_MAX_NDIM];
  struct Row {
    int ndim, nreps;
    const char* needle;
  };
  for (const Row& r : {Row{TESSERA_MAX_NDIM + 1, 1, "65"}, Row{1, TESSERA_MAX_NDIM + 1, "65"}, Row{-1, 1, "-1"},
                       Row{1, -1, "-1"}, Row{-2, -2, "-2"}, Row{1000, 1, "1000"}}) {
    CAPTURE(r.ndim);
    CAPTURE(r.nreps);
    check_c_failure(tessera_tile_shape(r.ndim, ones.data(), r.nreps, ones.data(), &out_ndim, out_shape),
                    TESSERA_INVALID_ARGUMENT, r.needle);
    tessera_plan* plan = nullptr;
    check_c_failure(tessera_plan_create(r.ndim, ones.data(), nullptr, 4, r.nreps, ones.data(), &plan),
                    TESSERA_INVALID_ARGUMENT, r.needle);
    test::GuardedBuffer out(64);
    out.prefill_pattern(11);
    const auto before = out.bytes();
    check_c_failure(
        tessera_tile(src.data(), r.ndim, ones.data(), nullptr, 4, r.nreps, ones.data(), out.data(), out.size()),
        TESSERA_INVALID_ARGUMENT, r.needle);
    CHECK(out.bytes() == before);
  }
  // Exactly TESSERA_MAX_NDIM is fine.
  CHECK(tessera_tile_shape(TESSERA_MAX_NDIM, ones.data(), TESSERA_MAX_NDIM, ones.data(), &out_ndim, out_shape) ==
        TESSERA_OK);
  CHECK(out_ndim == TESSERA_MAX_NDIM);
}

TEST_CASE("more than TESSERA_MAX_NDIM values (C++ Dims)") {
  const std::vector<int64_t> too_many(TESSERA_MAX_NDIM + 1, 1);
  check_throws([&] { tessera::tile_shape(too_many, {2}); }, Status::invalid_argument, "65");
  check_throws([&] { tessera::tile_shape({2}, too_many); }, Status::invalid_argument, "65");
  const std::vector<int64_t> max(TESSERA_MAX_NDIM, 1);
  CHECK(tessera::tile_shape(max, max).size() == TESSERA_MAX_NDIM);
}

TEST_CASE("reps of other integer types (C++ Dims)") {
  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6};  // (2, 3)
  // Accepted: signed and unsigned narrow types, std::array, a C array.
  CHECK(tessera::tile_shape({2, 3}, std::vector<int8_t>{2, 2}) == tessera::Dims{4, 6});
  CHECK(tessera::tile_shape({2, 3}, std::vector<uint16_t>{2, 2}) == tessera::Dims{4, 6});
  CHECK(tessera::tile_shape({2, 3}, std::array<uint64_t, 2>{2, 2}) == tessera::Dims{4, 6});
  const int c_array[] = {2, 2};
  CHECK(tessera::tile_shape({2, 3}, c_array) == tessera::Dims{4, 6});
  CHECK(tessera::tile(a.data(), {2, 3}, {}, 4, std::vector<int8_t>{1, 2}).shape() == tessera::Dims{2, 6});

  // A negative narrow value is kept by Dims and rejected by tile, naming it.
  check_throws([&] { tessera::tile_shape({2, 3}, std::vector<int8_t>{2, -3}); }, Status::invalid_argument, "-3");
  // A uint64_t above INT64_MAX does not fit: Dims itself refuses it, naming the value.
  const std::array<uint64_t, 2> huge = {2, uint64_t{1} << 63};
  check_throws([&] { tessera::tile_shape({2, 3}, huge); }, Status::invalid_argument, "9223372036854775808");
  check_throws([&] { tessera::Dims d(std::vector<uint64_t>{std::numeric_limits<uint64_t>::max()}); },
               Status::invalid_argument, "18446744073709551615");
  // INT64_MAX itself fits in Dims (and then overflows the output as an Overflow, not an InvalidArgument).
  CHECK(tessera::Dims(std::vector<uint64_t>{uint64_t{kInt64Max}})[0] == kInt64Max);
}

TEST_CASE("strides of the wrong length (C++)") {
  const std::vector<int32_t> a(6);
  int32_t out[24];
  check_throws([&] { (void)tessera::Plan({2, 3}, {4}, 4, {2, 2}); }, Status::invalid_argument, "strides");
  check_throws([&] { (void)tessera::Plan({2, 3}, {12, 4, 4}, 4, {2, 2}); }, Status::invalid_argument, "strides");
  check_throws([&] { tessera::tile(a.data(), {2, 3}, {4}, 4, {2, 2}); }, Status::invalid_argument, "strides");
  std::fill(std::begin(out), std::end(out), 77);
  check_throws(
      [&] {
        tessera::tile(a.data(), {2, 3}, {4}, 4, {2, 2}, out, sizeof out);
      },
      Status::invalid_argument, "strides");
  for (int32_t v : out) CHECK(v == 77);
  // Strides for a 0-d input must be empty.
  check_throws([&] { (void)tessera::Plan({}, {4}, 4, {2}); }, Status::invalid_argument, "strides");
}

TEST_CASE("null pointers (C API)") {
  // Each message names the null argument.
  const std::array<unsigned char, 64> src{};
  const Shape shape = {2, 3}, reps = {2, 2};
  int out_ndim = -1;
  int64_t out_shape[TESSERA_MAX_NDIM];
  tessera_plan* plan = nullptr;
  unsigned char dst[256];
  std::fill(std::begin(dst), std::end(dst), 0xA7);
  const auto dst_untouched = [&] {
    return std::all_of(std::begin(dst), std::end(dst), [](unsigned char b) { return b == 0xA7; });
  };

  SUBCASE("a null shape or reps array with a non-zero length") {
    check_c_failure(tessera_tile_shape(2, nullptr, 2, reps.data(), &out_ndim, out_shape), TESSERA_INVALID_ARGUMENT,
                    "shape");
    check_c_failure(tessera_tile_shape(2, shape.data(), 2, nullptr, &out_ndim, out_shape), TESSERA_INVALID_ARGUMENT,
                    "reps");
    check_c_failure(tessera_plan_create(2, nullptr, nullptr, 4, 2, reps.data(), &plan), TESSERA_INVALID_ARGUMENT,
                    "shape");
    check_c_failure(tessera_plan_create(2, shape.data(), nullptr, 4, 2, nullptr, &plan), TESSERA_INVALID_ARGUMENT,
                    "reps");
    check_c_failure(tessera_tile(src.data(), 2, nullptr, nullptr, 4, 2, reps.data(), dst, sizeof dst),
                    TESSERA_INVALID_ARGUMENT, "shape");
    check_c_failure(tessera_tile(src.data(), 2, shape.data(), nullptr, 4, 2, nullptr, dst, sizeof dst),
                    TESSERA_INVALID_ARGUMENT, "reps");
    CHECK(dst_untouched());
  }
  SUBCASE("null output arguments") {
    check_c_failure(tessera_tile_shape(2, shape.data(), 2, reps.data(), nullptr, out_shape), TESSERA_INVALID_ARGUMENT,
                    "out_ndim");
    check_c_failure(tessera_tile_shape(2, shape.data(), 2, reps.data(), &out_ndim, nullptr), TESSERA_INVALID_ARGUMENT,
                    "out_shape");
    check_c_failure(tessera_plan_create(2, shape.data(), nullptr, 4, 2, reps.data(), nullptr), TESSERA_INVALID_ARGUMENT,
                    "out_plan");
  }
  SUBCASE("null src with a non-empty input, null dst with a non-empty output") {
    check_c_failure(tessera_tile(nullptr, 2, shape.data(), nullptr, 4, 2, reps.data(), dst, sizeof dst),
                    TESSERA_INVALID_ARGUMENT, "src");
    CHECK(dst_untouched());
    check_c_failure(tessera_tile(src.data(), 2, shape.data(), nullptr, 4, 2, reps.data(), nullptr, 96),
                    TESSERA_INVALID_ARGUMENT, "dst");
    int dummy = 0;
    void* data = &dummy;
    std::size_t bytes = 0;
    check_c_failure(
        tessera_tile_alloc(nullptr, 2, shape.data(), nullptr, 4, 2, reps.data(), &data, &bytes, &out_ndim, out_shape),
        TESSERA_INVALID_ARGUMENT, "src");
    CHECK(data == static_cast<void*>(&dummy));
  }
}

TEST_CASE("execution errors: null src, null dst, dst too small") {
  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6};  // (2, 3) x (2, 2) -> 96 bytes
  const tessera::Plan plan({2, 3}, {}, 4, {2, 2});
  REQUIRE(plan.nbytes() == 96);
  tessera_plan* c_plan = nullptr;
  REQUIRE(tessera_plan_create(2, Shape{2, 3}.data(), nullptr, 4, 2, Shape{2, 2}.data(), &c_plan) == TESSERA_OK);

  test::GuardedBuffer out(96);
  out.prefill_pattern(12);
  const auto before = out.bytes();
  auto untouched = [&] {
    CHECK(out.bytes() == before);
    CHECK(out.check_guards() == "");
  };

  SUBCASE("null src with a non-empty input") {
    check_throws([&] { plan.execute(nullptr, out.data(), out.size()); }, Status::invalid_argument, "src");
    check_throws(
        [&] {
          tessera::tile(nullptr, {2, 3}, {}, 4, {2, 2}, out.data(), out.size());
        },
        Status::invalid_argument, "src");
    check_throws([&] { tessera::tile(nullptr, {2, 3}, {}, 4, {2, 2}); }, Status::invalid_argument, "src");
    check_c_failure(tessera_plan_execute(c_plan, nullptr, out.data(), out.size()), TESSERA_INVALID_ARGUMENT, "src");
    untouched();
  }
  SUBCASE("null dst with a non-empty output") {
    check_throws([&] { plan.execute(a.data(), nullptr, 96); }, Status::invalid_argument, "dst");
    check_throws([&] { tessera::tile(a.data(), {2, 3}, {}, 4, {2, 2}, nullptr, 96); }, Status::invalid_argument, "dst");
    check_c_failure(tessera_plan_execute(c_plan, a.data(), nullptr, 96), TESSERA_INVALID_ARGUMENT, "dst");
  }
  SUBCASE("dst_bytes one short, zero, tiny") {
    for (std::size_t dst_bytes : {std::size_t{95}, std::size_t{0}, std::size_t{4}}) {
      CAPTURE(dst_bytes);
      const std::string needle = std::to_string(dst_bytes);
      check_throws([&] { plan.execute(a.data(), out.data(), dst_bytes); }, Status::buffer_too_small, needle);
      check_throws(
          [&] {
            tessera::tile(a.data(), {2, 3}, {}, 4, {2, 2}, out.data(), dst_bytes);
          },
          Status::buffer_too_small, needle);
      check_c_failure(tessera_plan_execute(c_plan, a.data(), out.data(), dst_bytes), TESSERA_BUFFER_TOO_SMALL, needle);
      check_c_failure(
          tessera_tile(a.data(), 2, Shape{2, 3}.data(), nullptr, 4, 2, Shape{2, 2}.data(), out.data(), dst_bytes),
          TESSERA_BUFFER_TOO_SMALL, needle);
      untouched();
    }
  }
  SUBCASE("dst too small for a large output (the parallel path must not start)") {
    const std::vector<int32_t> big(1 << 16, 3);
    test::GuardedBuffer big_out((std::size_t{1} << 16) * 4 * 16 - 1);
    big_out.prefill_pattern(13);
    const auto big_before = big_out.bytes();
    check_throws([&] { tessera::tile(big.data(), {1 << 16}, {}, 4, {16}, big_out.data(), big_out.size()); },
                 Status::buffer_too_small, std::to_string(big_out.size()));
    CHECK(big_out.bytes() == big_before);
    CHECK(big_out.check_guards() == "");
  }
  tessera_plan_destroy(c_plan);
}

TEST_CASE("tessera_last_error is per thread") {
  // Fail on this thread, then look from a fresh thread: it has not failed yet, so it sees "".
  CHECK(tessera_tile_shape(1, Shape{2}.data(), 1, Shape{-4}.data(), nullptr, nullptr) == TESSERA_INVALID_ARGUMENT);
  CHECK(!std::string(tessera_last_error()).empty());
  std::string other_thread_before, other_thread_after;
  std::thread t([&] {
    other_thread_before = tessera_last_error();
    int ndim;
    int64_t shape[TESSERA_MAX_NDIM];
    (void)tessera_tile_shape(1, Shape{2}.data(), 1, Shape{-9}.data(), &ndim, shape);
    other_thread_after = tessera_last_error();
  });
  t.join();
  CHECK(other_thread_before.empty());
  CHECK(contains(other_thread_after, "-9"));
  // This thread's message is its own.
  CHECK(!contains(tessera_last_error(), "-9"));
}
