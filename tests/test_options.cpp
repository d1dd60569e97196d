// Options through both APIs (tessera::Options, tessera_options and the *_ex calls): defaults;
// NegativeReps::clamp_to_zero against the reference with negative reps replaced by 0, through
// every entry point; non-temporal stores always / never / automatic give identical bytes;
// max_threads caps give the same output (which thread reads is shown in test_concurrency.cpp);
// invalid option values are rejected with a message naming the field and nothing written.
#include <doctest/doctest.h>

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "reference.hpp"
#include "util.hpp"

namespace {

using test::Shape;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

Shape clamped(Shape reps) {
  for (auto& r : reps) r = r < 0 ? 0 : r;
  return reps;
}

tessera_options c_options(int max_threads, int neg, int nt) {
  tessera_options o;
  tessera_options_init(&o);
  o.max_threads = max_threads;
  o.negative_reps = neg;
  o.nontemporal = nt;
  return o;
}

// Tiles view by reps under the C++ options `o` through every entry point that takes options,
// and `co` through the C ones; each must equal `expected` (output shape `out`). "" or a problem.
std::string run_everywhere(const test::View& v, const Shape& reps, const tessera::Options& o, const tessera_options& co,
                           const Shape& out, const std::vector<unsigned char>& expected) {
  const int ndim = static_cast<int>(v.shape.size()), nreps = static_cast<int>(reps.size());
  std::string err;
  auto check = [&](const char* api, const unsigned char* got, std::size_t n) {
    if (err.empty() && (n != expected.size() || (n > 0 && std::memcmp(got, expected.data(), n) != 0)))
      err = std::string(api) + ": output differs from the reference";
  };
  // C++: shape, plan, one-shot, allocating.
  if (tessera::tile_shape(v.shape, reps, o) != tessera::Dims(out)) return "tile_shape(options) differs";
  const tessera::Plan plan(v.shape, v.strides, v.itemsize, reps, o);
  if (plan.shape() != tessera::Dims(out)) return "Plan::shape differs";
  test::GuardedBuffer b1(expected.size(), 3);
  b1.prefill_complement(expected);
  plan.execute(v.data(), b1.data(), b1.size());
  check("Plan::execute", b1.data(), b1.size());
  test::GuardedBuffer b2(expected.size(), 7);
  b2.prefill_complement(expected);
  tessera::tile(v.data(), v.shape, v.strides, v.itemsize, reps, b2.data(), b2.size(), o);
  check("tile(..., options)", b2.data(), b2.size());
  const tessera::Array a = tessera::tile(v.data(), v.shape, v.strides, v.itemsize, reps, o);
  if (a.shape() != tessera::Dims(out)) return "tile(options) Array shape differs";
  check("tile(options) -> Array", static_cast<const unsigned char*>(a.data()), a.nbytes());
  // C: shape_ex, tile_ex, alloc_ex, plan_create_ex.
  int out_ndim = -1;
  int64_t out_shape[TESSERA_MAX_NDIM];
  if (tessera_tile_shape_ex(ndim, v.shape.data(), nreps, reps.data(), &co, &out_ndim, out_shape) != TESSERA_OK)
    return std::string("tessera_tile_shape_ex: ") + tessera_last_error();
  if (Shape(out_shape, out_shape + out_ndim) != out) return "tessera_tile_shape_ex differs";
  test::GuardedBuffer b3(expected.size(), 1);
  b3.prefill_complement(expected);
  if (tessera_tile_ex(v.data(), ndim, v.shape.data(), v.strides.data(), v.itemsize, nreps, reps.data(), b3.data(),
                      b3.size(), &co) != TESSERA_OK)
    return std::string("tessera_tile_ex: ") + tessera_last_error();
  check("tessera_tile_ex", b3.data(), b3.size());
  void* data = nullptr;
  std::size_t bytes = 0;
  if (tessera_tile_alloc_ex(v.data(), ndim, v.shape.data(), v.strides.data(), v.itemsize, nreps, reps.data(), &co,
                            &data, &bytes, &out_ndim, out_shape) != TESSERA_OK)
    return std::string("tessera_tile_alloc_ex: ") + tessera_last_error();
  check("tessera_tile_alloc_ex", static_cast<const unsigned char*>(data), bytes);
  tessera_free(data);
  tessera_plan* p = nullptr;
  if (tessera_plan_create_ex(ndim, v.shape.data(), v.strides.data(), v.itemsize, nreps, reps.data(), &co, &p) !=
      TESSERA_OK)
    return std::string("tessera_plan_create_ex: ") + tessera_last_error();
  test::GuardedBuffer b4(expected.size(), 9);
  b4.prefill_complement(expected);
  const tessera_status st = tessera_plan_execute(p, v.data(), b4.data(), b4.size());
  tessera_plan_destroy(p);
  if (st != TESSERA_OK) return std::string("tessera_plan_execute: ") + tessera_last_error();
  check("tessera_plan_create_ex + execute", b4.data(), b4.size());
  for (const auto* b : {&b1, &b2, &b3, &b4})
    if (err.empty() && !b->check_guards().empty()) err = "guard bytes damaged: " + b->check_guards();
  return err;
}

}  // namespace

TEST_CASE("options: defaults in both APIs") {
  tessera_options o;
  std::memset(&o, 0x5A, sizeof o);
  tessera_options_init(&o);
  CHECK(o.max_threads == 0);
  CHECK(o.negative_reps == TESSERA_NEGATIVE_REPS_ERROR);
  CHECK(o.nontemporal == TESSERA_NONTEMPORAL_AUTO);
  tessera_options_init(nullptr);  // a no-op

  const tessera::Options d;
  CHECK(d.max_threads == 0);
  CHECK(d.negative_reps == tessera::NegativeReps::error);
  CHECK(d.nontemporal == tessera::NonTemporal::automatic);
  CHECK(static_cast<int>(tessera::NegativeReps::clamp_to_zero) == TESSERA_NEGATIVE_REPS_CLAMP_TO_ZERO);
  CHECK(static_cast<int>(tessera::NonTemporal::never) == TESSERA_NONTEMPORAL_NEVER);

  // A plan keeps its options.
  tessera::Options o2;
  o2.max_threads = 3;
  o2.negative_reps = tessera::NegativeReps::clamp_to_zero;
  const tessera::Plan plan({2}, {}, 4, {-1, 2}, o2);
  CHECK(plan.options().max_threads == 3);
  CHECK(plan.options().negative_reps == tessera::NegativeReps::clamp_to_zero);
  CHECK(plan.shape() == tessera::Dims{0, 4});
  CHECK(contains(tessera::Plan({2}, {}, 4, {3, 2}, o2).describe(), "at most 3 thread(s)"));
  CHECK(!contains(tessera::Plan({2}, {}, 4, {3, 2}).describe(), "thread"));

  // NULL options are the defaults: a negative rep is an error, as numpy.tile.
  const int32_t a[2] = {1, 2};
  int32_t out[8] = {};
  const int64_t shape[1] = {2}, reps[2] = {2, -3};
  CHECK(tessera_tile_ex(a, 1, shape, nullptr, 4, 2, reps, out, sizeof out, nullptr) == TESSERA_INVALID_ARGUMENT);
  CHECK(contains(tessera_last_error(), "reps[1] = -3 is negative"));
  tessera_options def;
  tessera_options_init(&def);
  CHECK(tessera_tile_ex(a, 1, shape, nullptr, 4, 2, reps, out, sizeof out, &def) == TESSERA_INVALID_ARGUMENT);
  int out_ndim = 0;
  int64_t out_shape[TESSERA_MAX_NDIM];
  CHECK(tessera_tile_shape_ex(1, shape, 2, reps, nullptr, &out_ndim, out_shape) == TESSERA_INVALID_ARGUMENT);
  CHECK_THROWS_AS(tessera::tile_shape({2}, {2, -3}, tessera::Options{}), tessera::InvalidArgument);
}

TEST_CASE("options: NegativeReps::clamp_to_zero equals the reference with negative reps replaced by 0") {
  test::Rng rng(6201);
  test::CaseLimits limits;
  limits.max_output_bytes = 1 << 14;
  tessera::Options o;
  o.negative_reps = tessera::NegativeReps::clamp_to_zero;
  const tessera_options co = c_options(0, TESSERA_NEGATIVE_REPS_CLAMP_TO_ZERO, TESSERA_NONTEMPORAL_AUTO);
  int failures = 0;
  for (int i = 0; i < test::scaled(400) && failures < 5; ++i) {
    test::Case c = test::random_case(rng, limits);
    // Make some reps negative (most cases keep at least one positive output so bytes get checked).
    for (auto& r : c.reps)
      if (rng.coin(i % 5 == 0 ? 50 : 10)) r = -rng.uniform(1, 1000);
    const Shape eff = clamped(c.reps);
    const Shape out = ref::tile_shape(c.view.shape, eff);
    const auto expected = ref::tile(c.view.data(), c.view.shape, c.view.strides, c.view.itemsize, eff);
    const std::string err = run_everywhere(c.view, c.reps, o, co, out, expected);
    CHECK_MESSAGE(err.empty(), "case " << i << " (" << c.view.describe() << ", reps " << test::to_string(c.reps)
                                       << "): " << err);
    failures += !err.empty();
  }
}

TEST_CASE("options: clamp_to_zero with reps of narrow integer types, and the OpenVINO examples") {
  tessera::Options o;
  o.negative_reps = tessera::NegativeReps::clamp_to_zero;
  const int32_t a[2][3] = {{1, 2, 3}, {4, 5, 6}};
  CHECK(tessera::tile_shape({2, 3}, std::vector<int8_t>{-1, 2}, o) == tessera::Dims{0, 6});
  CHECK(tessera::tile_shape({2, 3}, std::vector<int16_t>{INT16_MIN, 2}, o) == tessera::Dims{0, 6});
  CHECK(tessera::tile_shape({2, 3}, std::vector<int64_t>{INT64_MIN}, o) == tessera::Dims{2, 0});
  // The empty output of a clamped call writes nothing and may have a null dst.
  tessera::tile(a, {2, 3}, {}, 4, std::vector<int32_t>{2, -5}, nullptr, 0, o);
  // Positive reps are untouched.
  const tessera::Array arr = tessera::tile(a, {2, 3}, {}, 4, std::array<int8_t, 1>{2}, o);
  REQUIRE(arr.shape() == tessera::Dims{2, 6});
  CHECK(arr.data_as<int32_t>()[7] == 5);
  // Without the option the same reps are an error naming the axis and value.
  CHECK_THROWS_WITH_AS(tessera::tile(a, {2, 3}, {}, 4, std::vector<int8_t>{2, -5}),
                       doctest::Contains("reps[1] = -5 is negative"), tessera::InvalidArgument);
}

TEST_CASE("options: non-temporal stores always / never / automatic write identical bytes") {
  test::Rng rng(6202);
  const tessera::NonTemporal modes[] = {tessera::NonTemporal::always, tessera::NonTemporal::never,
                                        tessera::NonTemporal::automatic};
  const int cmodes[] = {TESSERA_NONTEMPORAL_ALWAYS, TESSERA_NONTEMPORAL_NEVER,
                                        TESSERA_NONTEMPORAL_AUTO};
  // The large cases (parallel, several MiB) and random small ones.
  std::vector<test::Case> cases;
  const auto& large = test::large_cases();
  const std::size_t stride = 2 * (large.size() / static_cast<std::size_t>(test::scaled(static_cast<int>(large.size()))));
  for (std::size_t i = 0; i < large.size(); i += stride)
    cases.push_back({test::make_view(rng, large[i].shape, large[i].itemsize, large[i].layout, 9), large[i].reps});
  test::CaseLimits limits;
  for (int i = 0; i < test::scaled(60); ++i) cases.push_back(test::random_case(rng, limits));
  for (const test::Case& c : cases) {
    CAPTURE(c.view.describe());
    CAPTURE(test::to_string(c.reps));
    const Shape out = ref::tile_shape(c.view.shape, c.reps);
    const auto expected = ref::tile(c.view.data(), c.view.shape, c.view.strides, c.view.itemsize, c.reps);
    for (int m = 0; m < 3; ++m) {
      tessera::Options o;
      o.nontemporal = modes[m];
      const tessera_options co = c_options(0, TESSERA_NEGATIVE_REPS_ERROR, cmodes[m]);
      CHECK(run_everywhere(c.view, c.reps, o, co, out, expected) == "");
      const tessera::Plan plan(c.view.shape, c.view.strides, c.view.itemsize, c.reps, o);
      const std::string path = plan.kernel_path();
      if (m == 1) CHECK(!contains(path, ".nt"));
      // Streaming applies to every kernel but gathers off the blocked path and elements over 1 KiB.
      if (m == 0 && plan.size() > 0 && !contains(path, "gather")) CHECK(contains(path, ".nt"));
    }
  }
}

TEST_CASE("options: the automatic streaming threshold (TESSERA_STREAM_MIN_BYTES, else 3/4 of the last-level cache)") {
  // A copy of n bytes: ".nt" in its path iff it streams. Plans only: nothing is allocated.
  const auto streams = [](int64_t n) {
    const tessera::Plan plan({n}, {}, 1, {1});
    return contains(plan.kernel_path(), ".nt");
  };
  if (const char* env = std::getenv("TESSERA_STREAM_MIN_BYTES")) {
    const int64_t n = std::atoll(env);
    REQUIRE(n > 64);
    CHECK(streams(n));
    CHECK(streams(n + 1));
    CHECK(!streams(n - 1));
    CHECK(!streams(n - 64));
  } else {
    // Clamped to [4 MiB, 256 MiB] whatever the machine says.
    CHECK(!streams((int64_t{4} << 20) - 1));
    CHECK(streams(int64_t{256} << 20));
    CHECK(streams(int64_t{1} << 40));
  }
  // The allocating call (ordinary stores under `automatic` from 32 MiB) writes the same bytes.
  std::vector<unsigned char> in(3 << 20);
  test::fill_pattern(in.data(), in.size(), 77);
  const tessera::Array a = tessera::tile(in.data(), {static_cast<int64_t>(in.size())}, {}, 1, {2});
  REQUIRE(a.nbytes() == 2 * in.size());
  CHECK(std::memcmp(a.data(), in.data(), in.size()) == 0);
  CHECK(std::memcmp(static_cast<const unsigned char*>(a.data()) + in.size(), in.data(), in.size()) == 0);
}

TEST_CASE("options: max_threads caps give the same output; arenas of any size") {
  test::Rng rng(6203);
  const auto& large = test::large_cases();
  const std::size_t stride = 2 * (large.size() / static_cast<std::size_t>(test::scaled(static_cast<int>(large.size()))));
  for (std::size_t i = 1; i < large.size(); i += stride) {  // the other half of the large cases
    const test::LargeCase& lc = large[i];
    CAPTURE(lc.name);
    const test::View v = test::make_view(rng, lc.shape, lc.itemsize, lc.layout, 13);
    const Shape out = ref::tile_shape(v.shape, lc.reps);
    const auto expected = ref::tile(v.data(), v.shape, v.strides, v.itemsize, lc.reps);
    for (int threads : {1, 3, 1000}) {
      CAPTURE(threads);
      tessera::Options o;
      o.max_threads = threads;
      const tessera_options co = c_options(threads, TESSERA_NEGATIVE_REPS_ERROR, TESSERA_NONTEMPORAL_AUTO);
      CHECK(run_everywhere(v, lc.reps, o, co, out, expected) == "");
    }
  }
}

TEST_CASE("options: invalid values are rejected naming the field, nothing written or created") {
  const uint16_t a[3] = {1, 2, 3};
  const int64_t shape[1] = {3}, reps[1] = {2};
  struct Bad {
    const char* name;
    int max_threads, negative_reps, nontemporal;
    const char* message;
  };
  const Bad bad[] = {
      {"max_threads -1", -1, 0, 0, "options.max_threads = -1 is negative"},
      {"max_threads INT_MIN", INT32_MIN, 0, 0, "options.max_threads = -2147483648 is negative"},
      {"negative_reps 2", 0, 2, 0, "options.negative_reps = 2 is not error (0) or clamp_to_zero (1)"},
      {"negative_reps -1", 0, -1, 0, "options.negative_reps = -1 is not"},
      {"nontemporal 3", 0, 0, 3, "options.nontemporal = 3 is not automatic (0), always (1) or never (2)"},
      {"nontemporal -7", 0, 0, -7, "options.nontemporal = -7 is not"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.name);
    tessera::Options o;
    o.max_threads = b.max_threads;
    o.negative_reps = static_cast<tessera::NegativeReps>(b.negative_reps);
    o.nontemporal = static_cast<tessera::NonTemporal>(b.nontemporal);
    tessera_options co;
    tessera_options_init(&co);
    co.max_threads = b.max_threads;
    co.negative_reps = b.negative_reps;
    co.nontemporal = b.nontemporal;

    uint16_t out[6] = {7, 7, 7, 7, 7, 7};
    const uint16_t untouched[6] = {7, 7, 7, 7, 7, 7};
    const std::vector<std::function<void()>> cpp = {
        [&] { (void)tessera::Plan({3}, {}, 2, {2}, o); },
        [&] { tessera::tile(a, {3}, {}, 2, {2}, out, sizeof out, o); },
        [&] { (void)tessera::tile(a, {3}, {}, 2, {2}, o); },
        [&] { (void)tessera::tile_shape({3}, {2}, o); },
    };
    for (const auto& f : cpp)
      CHECK_THROWS_WITH_AS(f(), doctest::Contains(b.message), tessera::InvalidArgument);
    CHECK(std::memcmp(out, untouched, sizeof out) == 0);

    CHECK(tessera_tile_ex(a, 1, shape, nullptr, 2, 1, reps, out, sizeof out, &co) == TESSERA_INVALID_ARGUMENT);
    CHECK(contains(tessera_last_error(), b.message));
    CHECK(std::memcmp(out, untouched, sizeof out) == 0);
    tessera_plan* p = reinterpret_cast<tessera_plan*>(&out);  // a sentinel: must stay unchanged
    CHECK(tessera_plan_create_ex(1, shape, nullptr, 2, 1, reps, &co, &p) == TESSERA_INVALID_ARGUMENT);
    CHECK(contains(tessera_last_error(), b.message));
    CHECK(p == reinterpret_cast<tessera_plan*>(&out));
    void* data = &out;
    std::size_t bytes = 5;
    int out_ndim = -1;
    int64_t out_shape[TESSERA_MAX_NDIM];
    CHECK(tessera_tile_alloc_ex(a, 1, shape, nullptr, 2, 1, reps, &co, &data, &bytes, &out_ndim, out_shape) ==
          TESSERA_INVALID_ARGUMENT);
    CHECK(data == &out);
    CHECK(tessera_tile_shape_ex(1, shape, 1, reps, &co, &out_ndim, out_shape) == TESSERA_INVALID_ARGUMENT);
    CHECK(contains(tessera_last_error(), b.message));
  }
}

TEST_CASE("options: sizeof_options lets the struct grow without breaking the ABI") {
  const int32_t a[2] = {1, 2};
  int32_t out[8];
  const int64_t shape[1] = {2}, reps[2] = {2, -3};
  tessera_options o;
  tessera_options_init(&o);
  CHECK(o.sizeof_options == sizeof(tessera_options));  // the caller's own size, written by the inline init
  // A caller built against an older, shorter struct (only max_threads): the later fields take
  // their defaults, whatever bytes follow in memory.
  o.negative_reps = TESSERA_NEGATIVE_REPS_CLAMP_TO_ZERO;
  o.nontemporal = 77;
  o.sizeof_options = offsetof(tessera_options, max_threads) + sizeof(int);
  CHECK(tessera_tile_ex(a, 1, shape, nullptr, 4, 2, reps, out, sizeof out, &o) == TESSERA_INVALID_ARGUMENT);
  CHECK(contains(tessera_last_error(), "reps[1] = -3 is negative"));  // negative_reps: the default (error)
  // Up to negative_reps: clamp applies, nontemporal (77, out of range) is not read.
  o.sizeof_options = offsetof(tessera_options, negative_reps) + sizeof(int);
  CHECK(tessera_tile_ex(a, 1, shape, nullptr, 4, 2, reps, out, sizeof out, &o) == TESSERA_OK);
  // The whole struct: nontemporal 77 is read and rejected, naming the field.
  o.sizeof_options = sizeof(tessera_options);
  CHECK(tessera_tile_ex(a, 1, shape, nullptr, 4, 2, reps, out, sizeof out, &o) == TESSERA_INVALID_ARGUMENT);
  CHECK(contains(tessera_last_error(), "options.nontemporal = 77"));
  // Not initialized (0), too small for max_threads, or larger than this version's struct: an error
  // naming the value, nothing written.
  for (const std::size_t bad : {std::size_t{0}, offsetof(tessera_options, max_threads), sizeof(tessera_options) + 8}) {
    CAPTURE(bad);
    o.sizeof_options = bad;
    std::memset(out, 0x11, sizeof out);
    CHECK(tessera_tile_ex(a, 1, shape, nullptr, 4, 2, reps, out, sizeof out, &o) == TESSERA_INVALID_ARGUMENT);
    CHECK(contains(tessera_last_error(), "options->sizeof_options = " + std::to_string(bad)));
    CHECK(out[0] == 0x11111111);
  }
}
