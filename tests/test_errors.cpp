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

#include "alloc_spy.hpp"
#include "c_api_check.h"
#include "guard.hpp"
#include "reference.hpp"
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
      {"byte size overflow at the int64 boundary: 2^61 x 4 bytes = 2^63 (fits size_t, not int64)",
       {1},
       {int64_t{1} << 61},
       4,
       Status::overflow,
       "2305843009213693952",
       false},
      {"byte size overflow: INT64_MAX / 3 + 1 elements x 3 bytes",
       {1},
       {kInt64Max / 3 + 1},
       3,
       Status::overflow,
       "3074457345618258603",
       false},
      {"10^24 elements: (10^12,) x (10^12,)",
       {1000000000000},
       {1000000000000},
       1,
       Status::overflow,
       "1000000000000",
       true},
      {"10^24 elements across axes: (10^12, 10^12) x (1, 1)",
       {1000000000000, 1000000000000},
       {1, 1},
       8,
       Status::overflow,
       "1000000000000",
       true},
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
    else  // the shape is well defined (only the itemsize makes the plan fail): it is the reference's
      CHECK(tessera::tile_shape(e.shape, e.reps).to_vector() == ref::tile_shape(e.shape, e.reps));

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
    // The allocating call leaves *out_data unchanged.
    int dummy = 0;
    void* data = &dummy;
    std::size_t bytes = 7;
    check_c_failure(tessera_tile_alloc(src.data(), r.ndim, ones.data(), nullptr, 4, r.nreps, ones.data(), &data,
                                       &bytes, &out_ndim, out_shape),
                    TESSERA_INVALID_ARGUMENT, r.needle);
    CHECK(data == static_cast<void*>(&dummy));
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

  // Through the plan, the one-shot call (output untouched) and the allocating call.
  const std::array<unsigned char, 64> src{};
  check_throws([&] { (void)tessera::Plan(too_many, {}, 1, {2}); }, Status::invalid_argument, "65");
  check_throws([&] { (void)tessera::Plan({2}, {}, 1, too_many); }, Status::invalid_argument, "65");
  check_throws([&] { tessera::tile(src.data(), {2}, {}, 1, too_many); }, Status::invalid_argument, "65");
  test::GuardedBuffer out(64);
  out.prefill_pattern(14);
  const auto before = out.bytes();
  check_throws([&] { tessera::tile(src.data(), too_many, {}, 1, {1}, out.data(), out.size()); },
               Status::invalid_argument, "65");
  check_throws([&] { tessera::tile(src.data(), {2}, {}, 1, too_many, out.data(), out.size()); },
               Status::invalid_argument, "65");
  CHECK(out.bytes() == before);
  CHECK(out.check_guards() == "");
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
    int dummy = 0;
    void* data = &dummy;
    std::size_t bytes = 0;
    check_c_failure(
        tessera_tile_alloc(src.data(), 2, nullptr, nullptr, 4, 2, reps.data(), &data, &bytes, &out_ndim, out_shape),
        TESSERA_INVALID_ARGUMENT, "shape");
    check_c_failure(
        tessera_tile_alloc(src.data(), 2, shape.data(), nullptr, 4, 2, nullptr, &data, &bytes, &out_ndim, out_shape),
        TESSERA_INVALID_ARGUMENT, "reps");
    CHECK(data == static_cast<void*>(&dummy));
  }
  SUBCASE("null output arguments") {
    check_c_failure(tessera_tile_shape(2, shape.data(), 2, reps.data(), nullptr, out_shape), TESSERA_INVALID_ARGUMENT,
                    "out_ndim");
    check_c_failure(tessera_tile_shape(2, shape.data(), 2, reps.data(), &out_ndim, nullptr), TESSERA_INVALID_ARGUMENT,
                    "out_shape");
    check_c_failure(tessera_plan_create(2, shape.data(), nullptr, 4, 2, reps.data(), nullptr), TESSERA_INVALID_ARGUMENT,
                    "out_plan");
    // The allocating call names each missing output and allocates nothing.
    int dummy = 0;
    void* data = &dummy;
    std::size_t bytes = 0;
    test::AllocSpy spy;
    check_c_failure(
        tessera_tile_alloc(src.data(), 2, shape.data(), nullptr, 4, 2, reps.data(), nullptr, &bytes, &out_ndim, out_shape),
        TESSERA_INVALID_ARGUMENT, "out_data");
    check_c_failure(
        tessera_tile_alloc(src.data(), 2, shape.data(), nullptr, 4, 2, reps.data(), &data, nullptr, &out_ndim, out_shape),
        TESSERA_INVALID_ARGUMENT, "out_bytes");
    check_c_failure(
        tessera_tile_alloc(src.data(), 2, shape.data(), nullptr, 4, 2, reps.data(), &data, &bytes, nullptr, out_shape),
        TESSERA_INVALID_ARGUMENT, "out_ndim");
    check_c_failure(
        tessera_tile_alloc(src.data(), 2, shape.data(), nullptr, 4, 2, reps.data(), &data, &bytes, &out_ndim, nullptr),
        TESSERA_INVALID_ARGUMENT, "out_shape");
    CHECK(data == static_cast<void*>(&dummy));
    CHECK(spy.seen().calls == 0);
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

namespace {

// In a child process (a crash must not take the test runner down): a shape and then reps given as
// (null pointer, 2) through tessera::Dims. Exit 0: InvalidArgument both times, dst untouched.
int null_dims_child(const void* null_values) {
  const auto* values = static_cast<const int64_t*>(null_values);
  int32_t src[4] = {1, 2, 3, 4}, dst[16];
  std::fill(std::begin(dst), std::end(dst), 77);
  int code = 0;
  try {
    tessera::tile(src, tessera::Dims(values, 2), {}, 4, {2}, dst, sizeof dst);
    code = 3;
  } catch (const tessera::InvalidArgument&) {
  } catch (...) {
    code = 4;
  }
  try {
    tessera::tile(src, {2, 2}, {}, 4, tessera::Dims(values, 2), dst, sizeof dst);
    code = 3;
  } catch (const tessera::InvalidArgument&) {
  } catch (...) {
    code = 4;
  }
  for (int32_t v : dst)
    if (v != 77) code = 5;
  return code;
}

}  // namespace

// Regression: Dims(const Int* values, std::size_t count) once read values[0 .. count) without
// checking for null, so the C++ counterpart of the C API's "shape is NULL but ndim = 2" crashed.
TEST_CASE("C++: a null pointer with a non-zero count is an InvalidArgument, not a crash") {
  const int code = test::run_in_child(&null_dims_child, nullptr);
  CHECK_MESSAGE(code == 0, "the child " << (code < 0 ? "was killed by signal " + std::to_string(-code)
                                                     : "exited with code " + std::to_string(code)));
}

TEST_CASE("a 10^24-element request fails with an overflow before anything is allocated") {
  const std::array<unsigned char, 64> src{};
  const Shape big = {1000000000000};  // 10^12; the output would be 10^24 elements
  int out_ndim = -7;
  int64_t out_shape[TESSERA_MAX_NDIM] = {};

  // The spy's control: a small successful allocating call is one aligned_alloc of the padded size.
  {
    test::AllocSpy spy;
    void* data = nullptr;
    std::size_t bytes = 0;
    REQUIRE(tessera_tile_alloc(src.data(), 1, Shape{3}.data(), nullptr, 4, 1, Shape{5}.data(), &data, &bytes, &out_ndim,
                               out_shape) == TESSERA_OK);
    tessera_free(data);
    CHECK(spy.seen().calls == 1);
    CHECK(spy.seen().last_size == 64);  // 60 bytes rounded up to the alignment
    const tessera::Array a = tessera::tile(src.data(), {3}, {}, 4, {5});
    CHECK(spy.seen().calls == 2);
  }

  for (std::size_t itemsize : {std::size_t{1}, std::size_t{8}}) {
    CAPTURE(itemsize);
    test::AllocSpy spy;
    int dummy = 0;
    void* data = &dummy;
    std::size_t bytes = 12345;
    out_ndim = -7;
    check_c_failure(tessera_tile_alloc(src.data(), 1, big.data(), nullptr, itemsize, 1, big.data(), &data, &bytes,
                                       &out_ndim, out_shape),
                    TESSERA_OVERFLOW, "1000000000000");
    CHECK(data == static_cast<void*>(&dummy));
    CHECK(bytes == 12345);
    CHECK(out_ndim == -7);
    check_throws([&] { tessera::tile(src.data(), big, {}, itemsize, big); }, Status::overflow, "1000000000000");
    // Also as (10^12, 10^12) x (1, 1): every extent fits, the count does not.
    check_throws([&] { tessera::tile(src.data(), {1000000000000, 1000000000000}, {}, itemsize, {1, 1}); },
                 Status::overflow, "1000000000000");
    CHECK(spy.seen().calls == 0);
  }
}

TEST_CASE("the largest byte size that fits int64 plans, and is never executed into a small buffer") {
  // INT64_MAX / 3 elements of 3 bytes: INT64_MAX - 1 bytes.
  const Shape reps = {kInt64Max / 3};
  const tessera::Plan plan({1}, {}, 3, reps);
  CHECK(plan.nbytes() == static_cast<std::size_t>(kInt64Max - 1));
  CHECK(plan.size() == kInt64Max / 3);
  const unsigned char src[3] = {1, 2, 3};
  test::GuardedBuffer out(4096);
  out.prefill_pattern(15);
  const auto before = out.bytes();
  check_throws([&] { plan.execute(src, out.data(), out.size()); }, Status::buffer_too_small, "4096");
  check_c_failure(tessera_tile(src, 1, Shape{1}.data(), nullptr, 3, 1, reps.data(), out.data(), out.size()),
                  TESSERA_BUFFER_TOO_SMALL, "9223372036854775806");
  CHECK(out.bytes() == before);
  CHECK(out.check_guards() == "");
}

TEST_CASE("exception safety: an allocation that fails is TESSERA_OUT_OF_MEMORY, not a crash") {
  // 2^57 elements of 8 bytes: 2^60 bytes. The count and the byte size fit int64 (no overflow),
  // but no allocator can provide it (x86-64 and AArch64 user address spaces are at most 2^57 bytes).
  const uint64_t element = 0x0123456789ABCDEFull;
  const Shape shape = {1}, reps = {int64_t{1} << 57};
  const std::size_t huge = std::size_t{1} << 60;
  REQUIRE(tessera::Plan(shape, {}, 8, reps).nbytes() == huge);

  test::AllocSpy spy;
  int dummy = 0;
  void* data = &dummy;
  std::size_t bytes = 12345;
  int out_ndim = -7;
  int64_t out_shape[TESSERA_MAX_NDIM] = {};
  const tessera_status s =
      tessera_tile_alloc(&element, 1, shape.data(), nullptr, 8, 1, reps.data(), &data, &bytes, &out_ndim, out_shape);
  CHECK(s == TESSERA_OUT_OF_MEMORY);
  CHECK(std::string(tessera_last_error()) == "tessera: out of memory");
  CHECK(data == static_cast<void*>(&dummy));
  CHECK(bytes == 12345);
  CHECK(out_ndim == -7);
  // The failure came from the allocator itself: it was asked for the whole output (a mapping of
  // it, its alignment slack and guard page) and refused.
  CHECK(spy.seen().calls == 1);
  CHECK(spy.seen().last_size >= huge);
  CHECK(spy.seen().last_size <= huge + (std::size_t{4} << 20));
  CHECK(spy.seen().last_refused);

  // The C++ allocating call lets std::bad_alloc through, as tessera.hpp documents.
  CHECK_THROWS_AS(tessera::tile(&element, shape, {}, 8, reps), std::bad_alloc);
  CHECK(spy.seen().calls == 2);
  CHECK(spy.seen().last_refused);

  // Afterwards the library works as before.
  const tessera::Array a = tessera::tile(&element, shape, {}, 8, {3});
  REQUIRE(a.nbytes() == 24);
  CHECK(a.data_as<uint64_t>()[2] == element);
}

TEST_CASE("the bad-input table: input -> status -> message, through both APIs") {
  // Each row fails through the C API with the expected status and a message, leaves the output
  // untouched (and *out_data unchanged for the allocating call), and — where the C++ API can
  // express the input — throws the matching tessera::Error with the same message. The table is
  // printed for the closing note.
  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6};  // (2, 3) int32 -> (4, 6) = 96 bytes with reps (2, 2)
  const Shape s23 = {2, 3}, r22 = {2, 2};
  const Shape ones(TESSERA_MAX_NDIM + 1, 1);
  const Shape big = {1000000000000};

  struct Row {
    std::string input;
    tessera_status expected;
    // The C call, given a 256-byte destination (and a dst_bytes the row may ignore).
    std::function<tessera_status(unsigned char* dst, std::size_t dst_bytes)> c_call;
    // The same input through the C++ API; empty where C++ cannot express it.
    std::function<void(unsigned char* dst, std::size_t dst_bytes)> cpp_call;
  };
  // The allocating C call for rows about it: *out_data must stay unchanged.
  const auto c_alloc = [](const void* src, int ndim, const int64_t* shape, std::size_t itemsize, int nreps,
                          const int64_t* reps) {
    int dummy = 0;
    void* data = &dummy;
    std::size_t bytes = 0;
    int out_ndim = 0;
    int64_t out_shape[TESSERA_MAX_NDIM];
    const tessera_status s =
        tessera_tile_alloc(src, ndim, shape, nullptr, itemsize, nreps, reps, &data, &bytes, &out_ndim, out_shape);
    CHECK_MESSAGE(data == static_cast<void*>(&dummy), "tessera_tile_alloc changed *out_data on an error");
    if (s == TESSERA_OK) tessera_free(data);
    return s;
  };
  const uint64_t element = 7;
  const std::vector<Row> rows = {
      {"negative rep: (2, 3) x (2, -3)", TESSERA_INVALID_ARGUMENT,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), 2, s23.data(), nullptr, 4, 2, Shape{2, -3}.data(), d, n);
       },
       [&](unsigned char* d, std::size_t n) { tessera::tile(a.data(), s23, {}, 4, {2, -3}, d, n); }},
      {"negative extent: (2, -5) x (2,)", TESSERA_INVALID_ARGUMENT,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), 2, Shape{2, -5}.data(), nullptr, 4, 1, Shape{2}.data(), d, n);
       },
       [&](unsigned char* d, std::size_t n) { tessera::tile(a.data(), {2, -5}, {}, 4, {2}, d, n); }},
      {"output count overflow: (2,) x (INT64_MAX,)", TESSERA_OVERFLOW,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), 1, Shape{2}.data(), nullptr, 4, 1, Shape{kInt64Max}.data(), d, n);
       },
       [&](unsigned char* d, std::size_t n) { tessera::tile(a.data(), {2}, {}, 4, {kInt64Max}, d, n); }},
      {"byte size overflow: (1,) x (2^62,), itemsize 4", TESSERA_OVERFLOW,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), 1, Shape{1}.data(), nullptr, 4, 1, Shape{int64_t{1} << 62}.data(), d, n);
       },
       [&](unsigned char* d, std::size_t n) { tessera::tile(a.data(), {1}, {}, 4, {int64_t{1} << 62}, d, n); }},
      {"byte size overflow at 2^63: (1,) x (2^61,), itemsize 4", TESSERA_OVERFLOW,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), 1, Shape{1}.data(), nullptr, 4, 1, Shape{int64_t{1} << 61}.data(), d, n);
       },
       [&](unsigned char* d, std::size_t n) { tessera::tile(a.data(), {1}, {}, 4, {int64_t{1} << 61}, d, n); }},
      {"10^24 elements, allocating: (10^12,) x (10^12,)", TESSERA_OVERFLOW,
       [&](unsigned char*, std::size_t) { return c_alloc(a.data(), 1, big.data(), 1, 1, big.data()); },
       [&](unsigned char*, std::size_t) { tessera::tile(a.data(), big, {}, 1, big); }},
      {"ndim = -1", TESSERA_INVALID_ARGUMENT,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), -1, ones.data(), nullptr, 4, 1, ones.data(), d, n);
       },
       {}},
      {"ndim = 65 (> TESSERA_MAX_NDIM)", TESSERA_INVALID_ARGUMENT,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), TESSERA_MAX_NDIM + 1, ones.data(), nullptr, 4, 1, ones.data(), d, n);
       },
       {}},
      {"nreps = -1", TESSERA_INVALID_ARGUMENT,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), 1, ones.data(), nullptr, 4, -1, ones.data(), d, n);
       },
       {}},
      {"nreps = 65 (> TESSERA_MAX_NDIM)", TESSERA_INVALID_ARGUMENT,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), 1, ones.data(), nullptr, 4, TESSERA_MAX_NDIM + 1, ones.data(), d, n);
       },
       {}},
      {"65 reps (C++ Dims)", TESSERA_INVALID_ARGUMENT, {},
       [&](unsigned char* d, std::size_t n) { tessera::tile(a.data(), {1}, {}, 4, ones, d, n); }},
      {"itemsize 0", TESSERA_INVALID_ARGUMENT,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), 2, s23.data(), nullptr, 0, 2, r22.data(), d, n);
       },
       [&](unsigned char* d, std::size_t n) { tessera::tile(a.data(), s23, {}, 0, r22, d, n); }},
      {"null src, non-empty input", TESSERA_INVALID_ARGUMENT,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(nullptr, 2, s23.data(), nullptr, 4, 2, r22.data(), d, n);
       },
       [&](unsigned char* d, std::size_t n) { tessera::tile(nullptr, s23, {}, 4, r22, d, n); }},
      {"null dst, non-empty output", TESSERA_INVALID_ARGUMENT,
       [&](unsigned char*, std::size_t) {
         return tessera_tile(a.data(), 2, s23.data(), nullptr, 4, 2, r22.data(), nullptr, 96);
       },
       [&](unsigned char*, std::size_t) { tessera::tile(a.data(), s23, {}, 4, r22, nullptr, 96); }},
      {"dst_bytes too small: 95 of 96", TESSERA_BUFFER_TOO_SMALL,
       [&](unsigned char* d, std::size_t) {
         return tessera_tile(a.data(), 2, s23.data(), nullptr, 4, 2, r22.data(), d, 95);
       },
       [&](unsigned char* d, std::size_t) { tessera::tile(a.data(), s23, {}, 4, r22, d, 95); }},
      {"null shape, ndim = 2", TESSERA_INVALID_ARGUMENT,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), 2, nullptr, nullptr, 4, 2, r22.data(), d, n);
       },
       {}},
      {"null reps, nreps = 2", TESSERA_INVALID_ARGUMENT,
       [&](unsigned char* d, std::size_t n) {
         return tessera_tile(a.data(), 2, s23.data(), nullptr, 4, 2, nullptr, d, n);
       },
       {}},
      {"out of memory, allocating: (1,) x (2^57,), itemsize 8 = 2^60 bytes", TESSERA_OUT_OF_MEMORY,
       [&](unsigned char*, std::size_t) {
         return c_alloc(&element, 1, Shape{1}.data(), 8, 1, Shape{int64_t{1} << 57}.data());
       },
       {}},
  };

  const auto status_name = [](tessera_status s) -> std::string {
    switch (s) {
      case TESSERA_OK: return "TESSERA_OK";
      case TESSERA_INVALID_ARGUMENT: return "TESSERA_INVALID_ARGUMENT";
      case TESSERA_OVERFLOW: return "TESSERA_OVERFLOW";
      case TESSERA_BUFFER_TOO_SMALL: return "TESSERA_BUFFER_TOO_SMALL";
      case TESSERA_OUT_OF_MEMORY: return "TESSERA_OUT_OF_MEMORY";
      case TESSERA_INTERNAL: return "TESSERA_INTERNAL";
    }
    return "status " + std::to_string(static_cast<int>(s));
  };

  std::string table = "bad-input table (input -> status -> message):\n";
  for (const Row& r : rows) {
    CAPTURE(r.input);
    test::GuardedBuffer out(256);
    out.prefill_pattern(16);
    const auto before = out.bytes();
    std::string message;
    tessera_status got = TESSERA_OK;
    if (r.c_call) {
      got = r.c_call(out.data(), out.size());
      message = tessera_last_error();
      CHECK(got == r.expected);
      CHECK(!message.empty());
    }
    if (r.cpp_call) {
      try {
        r.cpp_call(out.data(), out.size());
        FAIL_CHECK("the C++ call did not throw");
      } catch (const tessera::Error& e) {
        CHECK(static_cast<tessera_status>(e.status()) == r.expected);
        if (r.c_call)
          CHECK(std::string(e.what()) == message);  // the C API reports the C++ message verbatim
        else
          message = e.what(), got = static_cast<tessera_status>(e.status());
      }
    }
    CHECK(out.bytes() == before);
    CHECK(out.check_guards() == "");
    table += "  " + r.input + " -> " + status_name(got) + " -> " + message + (r.c_call ? "" : "  [C++ only]") +
             (r.cpp_call || !r.c_call ? "" : "  [C only]") + "\n";
  }
  MESSAGE(table);
}
