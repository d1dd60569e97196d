// Plans: accessors, introspection (which innermost kernel the planner picks), reuse on many
// source/destination pointers, copies, and the allocating call's Array. (A shared plan executed
// from many threads at once: test_concurrency.cpp.)
#include <doctest/doctest.h>

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "reference.hpp"
#include "util.hpp"

namespace {

using test::Shape;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The plan's kernel through both APIs; the C++ and C descriptions must both name it.
std::string kernel_of(const Shape& shape, const Shape& strides, std::size_t itemsize, const Shape& reps) {
  const tessera::Plan plan(shape, strides, itemsize, reps);
  const std::string kernel = plan.kernel_name();
  CHECK_MESSAGE(contains(plan.describe(), kernel), plan.describe());

  tessera_plan* c_plan = nullptr;
  REQUIRE(tessera_plan_create(static_cast<int>(shape.size()), shape.data(), strides.empty() ? nullptr : strides.data(),
                              itemsize, static_cast<int>(reps.size()), reps.data(), &c_plan) == TESSERA_OK);
  const std::string c_description = tessera_plan_describe(c_plan);
  CHECK_MESSAGE(contains(c_description, kernel), c_description);
  tessera_plan_destroy(c_plan);
  return kernel;
}

}  // namespace

TEST_CASE("plan accessors") {
  const tessera::Plan plan({2, 3, 4}, {}, 12, {5, 1, 1, 2});
  CHECK(plan.ndim() == 4);
  CHECK(plan.shape() == tessera::Dims{5, 2, 3, 8});
  CHECK(plan.size() == 5 * 2 * 3 * 8);
  CHECK(plan.itemsize() == 12);
  CHECK(plan.nbytes() == 5u * 2 * 3 * 8 * 12);
  CHECK(plan.input_size() == 24);

  const tessera::Plan zero_d({}, {}, 3, {});
  CHECK(zero_d.ndim() == 0);
  CHECK(zero_d.shape().empty());
  CHECK(zero_d.size() == 1);
  CHECK(zero_d.nbytes() == 3);
  CHECK(zero_d.input_size() == 1);

  const tessera::Plan empty({4, 0}, {}, 8, {3});
  CHECK(empty.shape() == tessera::Dims{4, 0});
  CHECK(empty.size() == 0);
  CHECK(empty.nbytes() == 0);
  CHECK(empty.input_size() == 0);
}

TEST_CASE("plan introspection: the innermost kernel the planner picks") {
  // The plan's size is independent of the data, so these use the full shapes.
  SUBCASE("short C-contiguous rows repeated along the last axis -> pattern") {
    CHECK(kernel_of({131072, 3}, {}, 4, {1, 40}) == "pattern");
  }
  SUBCASE("one element repeated along the last axis -> fill") {
    CHECK(kernel_of({1048576, 1}, {}, 4, {1, 16}) == "fill");
  }
  SUBCASE("transposed view -> gather") { CHECK(kernel_of({1024, 4096}, {4, 4096}, 4, {2, 2}) == "gather"); }
  SUBCASE("all-ones reps on a contiguous input -> copy") {
    CHECK(kernel_of({1024, 4096}, {}, 4, {1, 1}) == "copy");
    CHECK(kernel_of({7, 5, 3}, {}, 12, {}) == "copy");
  }
  SUBCASE("empty output -> none") {
    CHECK(kernel_of({1024, 4096}, {}, 4, {0, 2}) == "none");
    CHECK(kernel_of({0, 4096}, {}, 4, {2, 2}) == "none");
  }
  SUBCASE("describe() ends with a line naming the kernel") {
    const tessera::Plan plan({131072, 3}, {}, 4, {1, 40});
    std::string d = plan.describe();
    while (!d.empty() && d.back() == '\n') d.pop_back();
    const std::string last_line = d.substr(d.rfind('\n') == std::string::npos ? 0 : d.rfind('\n') + 1);
    CHECK_MESSAGE(contains(last_line, "kernel"), d);
    CHECK_MESSAGE(contains(last_line, "pattern"), d);
  }
}

TEST_CASE("plans: runs of 16 KiB or more written with ordinary stores are one memcpy each (pattern.memcpy)") {
  // lib/paths.hpp kMemcpyRunBytes: from 16 KiB; below it, and streamed, the vector kernels.
  const auto path_of = [](int64_t run_elems, std::size_t itemsize, tessera::NonTemporal nt) {
    tessera::Options options;
    options.nontemporal = nt;
    return std::string(tessera::Plan({run_elems}, {}, itemsize, {3}, options).kernel_path());
  };
  const auto never = tessera::NonTemporal::never;
  CHECK(path_of(4096, 4, never) == "pattern.memcpy");      // 16384 B
  CHECK(path_of(16384, 1, never) == "pattern.memcpy");     // 16384 B
  CHECK(path_of(4095, 4, never) == "pattern.long");        // 16380 B
  CHECK(path_of(16383, 1, never) == "pattern.long");       // 16383 B
  CHECK(path_of(1 << 20, 4, never) == "pattern.memcpy");   // 4 MiB runs
  CHECK(path_of(4096, 4, tessera::NonTemporal::automatic) == "pattern.memcpy");  // 48 KiB: below the streaming line
  const std::string streamed = path_of(4096, 4, tessera::NonTemporal::always);
  CHECK_MESSAGE((streamed == "pattern.long.nt.direct" || streamed == "pattern.long"), streamed);  // "pattern.long" on HWY_SCALAR
  // Its bytes (a run whose neighbouring elements differ): numpy.tile's, and none past the output.
  const int64_t n = 4099;
  std::vector<uint32_t> src(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) src[static_cast<std::size_t>(i)] = static_cast<uint32_t>(i * 2654435761u);
  const tessera::Plan plan({n}, {}, 4, {3}, tessera::Options{});
  REQUIRE(std::string(plan.kernel_path()) == "pattern.memcpy");
  std::vector<uint32_t> out(static_cast<std::size_t>(3 * n) + 1, 0xDEADBEEFu);
  plan.execute(src.data(), out.data(), static_cast<std::size_t>(3 * n) * 4);
  for (int64_t i = 0; i < 3 * n; ++i) REQUIRE(out[static_cast<std::size_t>(i)] == src[static_cast<std::size_t>(i % n)]);
  CHECK(out.back() == 0xDEADBEEFu);  // nothing past the output
}

TEST_CASE("plan introspection: smaller plans of the same structures compute the right bytes") {
  struct Row {
    const char* kernel;
    Shape shape, strides;
    std::size_t itemsize;
    Shape reps;
  };
  const Row rows[] = {
      {"pattern", {1031, 3}, {}, 4, {1, 40}},
      {"fill", {4099, 1}, {}, 4, {1, 16}},
      {"gather", {64, 96}, {4, 256}, 4, {2, 2}},  // transpose of a (96, 64) array
      {"copy", {65, 97}, {}, 4, {1, 1}},
  };
  for (const Row& r : rows) {
    CAPTURE(r.kernel);
    CHECK(kernel_of(r.shape, r.strides, r.itemsize, r.reps) == r.kernel);
    // Build the matching input and compare with the reference.
    test::View view;
    view.shape = r.shape;
    view.itemsize = r.itemsize;
    view.strides = r.strides.empty() ? ref::contiguous_strides(r.shape, r.itemsize) : r.strides;
    view.storage.resize(static_cast<std::size_t>(ref::count(r.shape)) * r.itemsize);
    test::fill_pattern(view.storage.data(), view.storage.size(), 3);
    for (test::Api api : test::all_apis()) CHECK(test::run_and_compare(view, r.reps, api, 5) == "");
  }
}

TEST_CASE("a plan is reused on many source and destination pointers") {
  test::Rng rng(701);
  for (unsigned layout : {unsigned{test::kContiguous}, unsigned{test::kPermuted}, unsigned{test::kAllLayouts},
                          unsigned{test::kArbitrary}}) {
    CAPTURE(test::layout_name(layout));
    const Shape reps = {3, 1, 2};
    test::View view = test::make_view(rng, {4, 5, 3}, 12, layout, 1);
    const tessera::Plan plan(view.shape, view.strides, view.itemsize, reps);
    for (uint64_t seed = 2; seed < 8; ++seed) {
      // Same layout, new contents, a different destination alignment each time.
      test::fill_pattern(view.storage.data(), view.storage.size(), seed);
      const auto expected = ref::tile(view.data(), view.shape, view.strides, view.itemsize, reps);
      test::GuardedBuffer out(plan.nbytes(), static_cast<std::size_t>(seed * 9 % 64));
      out.prefill_complement(expected);
      plan.execute(view.data(), out.data(), out.size());
      CHECK(out.check(expected, view.itemsize) == "");
    }
  }
}

TEST_CASE("a copied plan outlives the original") {
  std::vector<int32_t> a = {1, 2, 3};
  tessera::Plan copy = [] {
    tessera::Plan original({3}, {}, 4, {2});
    return tessera::Plan(original);
  }();
  std::vector<int32_t> out(6);
  copy.execute(a.data(), out.data(), 24);
  CHECK(out == std::vector<int32_t>{1, 2, 3, 1, 2, 3});
}

TEST_CASE("the allocating call returns an owning, aligned, movable Array") {
  const std::vector<uint16_t> a = {1, 2, 3, 4, 5, 6};  // (2, 3)
  tessera::Array arr = tessera::tile(a.data(), {2, 3}, {}, 2, {2, 2});
  CHECK(arr.ndim() == 2);
  CHECK(arr.shape() == tessera::Dims{4, 6});
  CHECK(arr.size() == 24);
  CHECK(arr.itemsize() == 2);
  CHECK(arr.nbytes() == 48);
  REQUIRE(arr.data() != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(arr.data()) % 64 == 0);
  const std::vector<uint16_t> row0 = {1, 2, 3, 1, 2, 3};
  CHECK(std::vector<uint16_t>(arr.data_as<uint16_t>(), arr.data_as<uint16_t>() + 6) == row0);

  const void* storage = arr.data();
  tessera::Array moved = std::move(arr);
  CHECK(moved.data() == storage);
  CHECK(moved.shape() == tessera::Dims{4, 6});
  tessera::Array assigned;
  CHECK(assigned.data() == nullptr);
  CHECK(assigned.nbytes() == 0);
  assigned = std::move(moved);
  CHECK(assigned.data() == storage);
  CHECK(assigned.data_as<uint16_t>()[23] == 6);
}

TEST_CASE("Array::release hands the bytes to the caller") {
  const std::vector<uint8_t> a = {1, 2, 3};
  tessera::Array arr = tessera::tile(a.data(), {3}, {}, 1, {2});
  const void* storage = arr.data();
  void* released = arr.release();
  CHECK(released == storage);
  CHECK(arr.data() == nullptr);
  CHECK(arr.nbytes() == 0);
  CHECK(arr.ndim() == 0);
  REQUIRE(released != nullptr);
  CHECK(std::memcmp(released, "\x01\x02\x03\x01\x02\x03", 6) == 0);
  tessera_free(released);
}

TEST_CASE("C plan helpers accept NULL") {
  CHECK(tessera_plan_output_bytes(nullptr) == 0);
  CHECK(std::string(tessera_plan_describe(nullptr)).empty());
  tessera_plan_destroy(nullptr);  // no-op
  tessera_free(nullptr);          // no-op
  int ndim = -1;
  int64_t shape[TESSERA_MAX_NDIM];
  CHECK(tessera_plan_output_shape(nullptr, &ndim, shape) == TESSERA_INVALID_ARGUMENT);
  int64_t dst[4];
  CHECK(tessera_plan_execute(nullptr, shape, dst, sizeof dst) == TESSERA_INVALID_ARGUMENT);
}
