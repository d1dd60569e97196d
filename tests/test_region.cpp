// Output regions (Plan::execute_region, tessera_plan_execute_region): random chunkings of random
// tilings — every chunk written into a guarded buffer of exactly its size, compared with the
// reference's output cut to the chunk, and the chunks reassembled into the whole output — over
// every itemsize and input layout; single regions of the large cases; edge cases (0-d outputs,
// empty regions and outputs, the whole output); and every invalid region, with dst untouched.
#include <doctest/doctest.h>

#include <hwy/targets.h>
#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "reference.hpp"
#include "util.hpp"

namespace {

using test::Shape;

// The region [start, start + extent) of the C-contiguous `full` output of shape `out`.
std::vector<unsigned char> cut(const std::vector<unsigned char>& full, const Shape& out, std::size_t itemsize,
                               const Shape& start, const Shape& extent) {
  const int64_t count = ref::count(extent);
  std::vector<unsigned char> r(static_cast<std::size_t>(count) * itemsize);
  const Shape out_strides = ref::contiguous_strides(out, itemsize);
  Shape j(extent.size(), 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t off = 0;
    for (std::size_t i = 0; i < j.size(); ++i) off += (start[i] + j[i]) * out_strides[i];
    std::memcpy(r.data() + static_cast<std::size_t>(e) * itemsize, full.data() + off, itemsize);
    for (std::size_t i = j.size(); i-- > 0;) {  // next region index
      if (++j[i] < extent[i]) break;
      j[i] = 0;
    }
  }
  return r;
}

// Pastes the C-contiguous region bytes into `full` at [start, start + extent).
void paste(std::vector<unsigned char>& full, const Shape& out, std::size_t itemsize, const Shape& start,
           const Shape& extent, const unsigned char* region) {
  const int64_t count = ref::count(extent);
  const Shape out_strides = ref::contiguous_strides(out, itemsize);
  Shape j(extent.size(), 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t off = 0;
    for (std::size_t i = 0; i < j.size(); ++i) off += (start[i] + j[i]) * out_strides[i];
    std::memcpy(full.data() + off, region + static_cast<std::size_t>(e) * itemsize, itemsize);
    for (std::size_t i = j.size(); i-- > 0;) {
      if (++j[i] < extent[i]) break;
      j[i] = 0;
    }
  }
}

// Runs one region through the C++ (c_api false) or C API into a guarded buffer of exactly its
// size at `misalign`; "" or the first difference from `expected`.
std::string run_region(const tessera::Plan& plan, const test::View& view, const Shape& reps, const Shape& start,
                       const Shape& extent, const std::vector<unsigned char>& expected, bool c_api,
                       std::size_t misalign, std::vector<unsigned char>* written = nullptr) {
  test::GuardedBuffer out(expected.size(), misalign);
  out.prefill_complement(expected);
  if (c_api) {
    tessera_plan* p = nullptr;
    const int ndim = static_cast<int>(view.shape.size());
    if (tessera_plan_create(ndim, view.shape.data(), view.strides.data(), view.itemsize, static_cast<int>(reps.size()),
                            reps.data(), &p) != TESSERA_OK)
      return std::string("tessera_plan_create: ") + tessera_last_error();
    const tessera_status st =
        tessera_plan_execute_region(p, view.data(), start.data(), extent.data(), out.data(), out.size());
    tessera_plan_destroy(p);
    if (st != TESSERA_OK) return std::string("tessera_plan_execute_region: ") + tessera_last_error();
  } else {
    try {
      plan.execute_region(view.data(), start, extent, out.data(), out.size());
    } catch (const std::exception& e) {
      return std::string("execute_region threw: ") + e.what();
    }
  }
  if (written) *written = out.bytes();
  return out.check(expected, view.itemsize);
}

std::string describe_region(const Shape& start, const Shape& extent) {
  return "region start " + test::to_string(start) + " extent " + test::to_string(extent);
}

// Cuts the output of (view, reps) into chunks of random per-axis sizes, runs every chunk, and
// reassembles them. Returns "" or the first problem.
std::string chunked(test::Rng& rng, const test::View& view, const Shape& reps, bool c_api) {
  const tessera::Plan plan(view.shape, view.strides, view.itemsize, reps);
  const auto full = ref::tile(view.data(), view.shape, view.strides, view.itemsize, reps);
  const Shape out(plan.shape().begin(), plan.shape().end());
  Shape chunk(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) chunk[i] = out[i] == 0 ? 1 : rng.uniform(1, out[i]);
  std::vector<unsigned char> assembled(full.size());
  test::fill_pattern(assembled.data(), assembled.size(), 77);
  // Every chunk: an odometer over chunk origins.
  Shape origin(out.size(), 0);
  const bool empty = ref::count(out) == 0;
  for (bool more = !empty; more;) {
    Shape extent(out.size());
    for (std::size_t i = 0; i < out.size(); ++i) extent[i] = std::min(chunk[i], out[i] - origin[i]);
    const auto expected = cut(full, out, view.itemsize, origin, extent);
    std::vector<unsigned char> written;
    const std::string err = run_region(plan, view, reps, origin, extent, expected, c_api,
                                       static_cast<std::size_t>(rng.uniform(0, 63)), &written);
    if (!err.empty()) return describe_region(origin, extent) + ": " + err;
    paste(assembled, out, view.itemsize, origin, extent, written.data());
    more = false;
    for (std::size_t i = out.size(); i-- > 0;) {
      origin[i] += chunk[i];
      if (origin[i] < out[i]) {
        more = true;
        break;
      }
      origin[i] = 0;
    }
  }
  if (assembled != full) return "the reassembled chunks differ from the whole output";
  return "";
}

}  // namespace

TEST_CASE("regions: random chunkings of random tilings, reassembled, equal the whole output") {
  test::Rng rng(6101);
  test::CaseLimits limits;
  limits.max_output_bytes = 1 << 13;  // every chunk is a call: keep the chunk count modest
  int failures = 0;
  for (int i = 0; i < test::scaled(600) && failures < 5; ++i) {
    const test::Case c = test::random_case(rng, limits);
    const bool c_api = i % 4 == 3;
    const std::string err = chunked(rng, c.view, c.reps, c_api);
    CHECK_MESSAGE(err.empty(), "case " << i << " (" << c.view.describe() << ", reps " << test::to_string(c.reps)
                                       << (c_api ? ", C API" : "") << "): " << err);
    failures += !err.empty();
  }
}

TEST_CASE("regions: every Highway target, chunked") {
  const test::TargetGuard guard;
  for (int64_t target : test::targets_to_test()) {
    hwy::SetSupportedTargetsForTest(target);
    CAPTURE(std::string(hwy::TargetName(target)));
    REQUIRE(std::string(tessera::active_target()) == hwy::TargetName(target));
    test::Rng rng(6104);
    test::CaseLimits limits;
    limits.max_output_bytes = 1 << 12;
    for (int i = 0; i < test::scaled(80); ++i) {
      const test::Case c = test::random_case(rng, limits);
      const std::string err = chunked(rng, c.view, c.reps, false);
      CHECK_MESSAGE(err.empty(), "case " << i << " (" << c.view.describe() << ", reps " << test::to_string(c.reps)
                                         << "): " << err);
    }
  }
}

TEST_CASE("regions: every itemsize with every layout, chunked") {
  const std::vector<std::size_t> itemsizes = {1, 2, 3, 4, 8, 12, 16, 32};
  const std::vector<unsigned> layouts = {test::kContiguous, test::kPermuted, test::kReversed,  test::kBroadcast,
                                         test::kSubView,    test::kArbitrary, test::kAllLayouts};
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{5}, {3}}, {{1}, {37}}, {{3, 4}, {2, 3}}, {{2, 1, 3}, {3, 4, 2}}, {{4, 3}, {1, 5, 1, 2}}, {{7, 2, 3}, {2}},
  };
  test::Rng rng(6102);
  for (std::size_t itemsize : itemsizes)
    for (unsigned layout : layouts)
      for (const auto& c : cases) {
        const Shape& shape = c.first;  // not a structured binding: clang 14 cannot capture one in
        const Shape& reps = c.second;  // the lambda CHECK_MESSAGE's message makes
        const test::View view = test::make_view(rng, shape, itemsize, layout, itemsize * 31 + layout);
        const std::string err = chunked(rng, view, reps, rng.coin(25));
        CHECK_MESSAGE(err.empty(), view.describe() << ", reps " << test::to_string(reps) << ": " << err);
      }
}

TEST_CASE("regions: single regions of large outputs, and the whole output") {
  test::Rng rng(6103);
  const auto& large = test::large_cases();
  const std::size_t stride = large.size() / static_cast<std::size_t>(test::scaled(static_cast<int>(large.size())));
  for (std::size_t c = 0; c < large.size(); c += stride) {
    const test::LargeCase& lc = large[c];
    CAPTURE(lc.name);
    const test::View view = test::make_view(rng, lc.shape, lc.itemsize, lc.layout, 5);
    const tessera::Plan plan(view.shape, view.strides, view.itemsize, lc.reps);
    const auto full = ref::tile(view.data(), view.shape, view.strides, view.itemsize, lc.reps);
    const Shape out(plan.shape().begin(), plan.shape().end());
    for (int k = 0; k < 6; ++k) {
      Shape start(out.size()), extent(out.size());
      for (std::size_t i = 0; i < out.size(); ++i) {
        if (k == 0) {  // the whole output (the parallel executor)
          start[i] = 0;
          extent[i] = out[i];
        } else {
          start[i] = rng.uniform(0, out[i] - 1);
          extent[i] = rng.uniform(1, out[i] - start[i]);
        }
      }
      const auto expected = cut(full, out, view.itemsize, start, extent);
      const std::string err = run_region(plan, view, lc.reps, start, extent, expected, k % 2 == 1,
                                         static_cast<std::size_t>(rng.uniform(0, 63)));
      CHECK_MESSAGE(err.empty(), describe_region(start, extent) << ": " << err);
    }
  }
}

TEST_CASE("regions: the allocating execute_region returns the region as an Array, checked before allocating") {
  std::vector<uint16_t> src(3 * 5);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i * 7 + 1);
  const tessera::Plan plan({3, 5}, {}, 2, {4000, 3000});  // a 12000 x 15000 output: only planned
  struct R {
    Shape start, extent;
  };
  // small, 36 MB (tessera's huge-page blocks), one element, empty, a region starting mid-replica
  for (const R& r : {R{{1, 2}, {2, 3}}, R{{7, 11}, {3000, 6000}}, R{{11999, 14999}, {1, 1}}, R{{5, 5}, {0, 7}},
                     R{{4, 3}, {257, 1029}}}) {
    CAPTURE(describe_region(r.start, r.extent));
    const tessera::Array a = plan.execute_region(src.data(), r.start, r.extent);
    CHECK(a.shape() == tessera::Dims(r.extent));
    CHECK(a.itemsize() == 2);
    const std::size_t nbytes = static_cast<std::size_t>(ref::count(r.extent)) * 2;
    REQUIRE(a.nbytes() == nbytes);
    std::vector<unsigned char> want(nbytes);
    plan.execute_region(src.data(), r.start, r.extent, want.data(), want.size());
    CHECK((nbytes == 0 || std::memcmp(a.data(), want.data(), nbytes) == 0));
    if (nbytes > 0) {  // and against the definition at the region's corners
      const auto* got = static_cast<const uint16_t*>(a.data());
      CHECK(got[0] == src[static_cast<std::size_t>((r.start[0] % 3) * 5 + r.start[1] % 5)]);
      const int64_t i = r.start[0] + r.extent[0] - 1, j = r.start[1] + r.extent[1] - 1;
      CHECK(got[nbytes / 2 - 1] == src[static_cast<std::size_t>((i % 3) * 5 + j % 5)]);
    }
  }
  CHECK_THROWS_WITH_AS(plan.execute_region(src.data(), {0, 14000}, {1, 1001}),
                       doctest::Contains("region axis 1"), tessera::InvalidArgument);
  CHECK_THROWS_WITH_AS(plan.execute_region(src.data(), {0}, {1}), doctest::Contains("2"), tessera::InvalidArgument);
  CHECK_THROWS_AS(plan.execute_region(nullptr, {0, 0}, {2, 2}), tessera::InvalidArgument);
}

TEST_CASE("regions: 0-d outputs, single elements, empty regions and empty outputs") {
  const double x = 2.5;
  SUBCASE("a 0-d output is one element; its only region has no axes") {
    const tessera::Plan plan({}, {}, sizeof x, {});
    double out = 0;
    plan.execute_region(&x, {}, {}, &out, sizeof out);
    CHECK(out == 2.5);
    out = 0;
    CHECK(tessera_plan_execute_region(nullptr, &x, nullptr, nullptr, &out, sizeof out) == TESSERA_INVALID_ARGUMENT);
    tessera_plan* p = nullptr;
    REQUIRE(tessera_plan_create(0, nullptr, nullptr, sizeof x, 0, nullptr, &p) == TESSERA_OK);
    CHECK(tessera_plan_execute_region(p, &x, nullptr, nullptr, &out, sizeof out) == TESSERA_OK);
    CHECK(out == 2.5);
    tessera_plan_destroy(p);
  }
  SUBCASE("single elements anywhere in the output") {
    const int16_t a[2][3] = {{1, 2, 3}, {4, 5, 6}};
    const tessera::Plan plan({2, 3}, {}, 2, {3, 1, 4});  // output (3, 2, 12)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j)
        for (int64_t k = 0; k < 12; ++k) {
          int16_t v = -1;
          plan.execute_region(a, {i, j, k}, {1, 1, 1}, &v, sizeof v);
          CHECK(v == a[j][k % 3]);
        }
  }
  SUBCASE("an empty region writes nothing; dst may be null") {
    const int32_t a[3] = {1, 2, 3};
    const tessera::Plan plan({3}, {}, 4, {2, 2});  // output (2, 6)
    plan.execute_region(a, {1, 2}, {0, 3}, nullptr, 0);
    plan.execute_region(a, {2, 6}, {0, 0}, nullptr, 0);  // at the very end
    int32_t guard = 99;
    plan.execute_region(a, {0, 4}, {2, 0}, &guard, sizeof guard);
    CHECK(guard == 99);
  }
  SUBCASE("an empty output has only empty regions") {
    const int32_t a[3] = {1, 2, 3};
    const tessera::Plan plan({3}, {}, 4, {0, 2});  // output (0, 6)
    plan.execute_region(a, {0, 1}, {0, 5}, nullptr, 0);
    CHECK_THROWS_AS(plan.execute_region(a, {0, 0}, {1, 1}, nullptr, 0), tessera::InvalidArgument);
  }
  SUBCASE("a region under NegativeReps::clamp_to_zero and max_threads") {
    const uint8_t a[4] = {1, 2, 3, 4};
    tessera::Options o;
    o.negative_reps = tessera::NegativeReps::clamp_to_zero;
    o.max_threads = 1;
    const tessera::Plan plan({2, 2}, {}, 1, std::vector<int8_t>{-1, 3}, o);  // output (0, 6)
    CHECK(plan.size() == 0);
    const tessera::Plan plan2({2, 2}, {}, 1, std::vector<int8_t>{2, 3}, o);  // output (4, 6)
    uint8_t r[2][3];
    plan2.execute_region(a, {1, 1}, {2, 3}, r, sizeof r);
    const uint8_t expected[2][3] = {{4, 3, 4}, {2, 1, 2}};
    CHECK(std::memcmp(r, expected, sizeof r) == 0);
  }
}

TEST_CASE("regions: invalid regions are rejected, naming the problem, with dst untouched") {
  const float a[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const tessera::Plan plan({2, 3}, {}, 4, {2, 2});  // output (4, 6)
  tessera_plan* cplan = nullptr;
  const int64_t shape[2] = {2, 3}, reps[2] = {2, 2};
  REQUIRE(tessera_plan_create(2, shape, nullptr, 4, 2, reps, &cplan) == TESSERA_OK);

  struct Bad {
    const char* name;
    Shape start, extent;
    std::size_t dst_bytes;
    bool null_dst, null_src;
    tessera_status status;
    const char* message;
  };
  const Bad bad[] = {
      {"start has too few values", {0}, {1, 1}, 64, false, false, TESSERA_INVALID_ARGUMENT, "output has 2 axes"},
      {"extent has too many values", {0, 0}, {1, 1, 1}, 64, false, false, TESSERA_INVALID_ARGUMENT, "output has 2 axes"},
      {"negative start", {0, -1}, {1, 1}, 64, false, false, TESSERA_INVALID_ARGUMENT, "axis 1: start -1 is negative"},
      {"negative extent", {0, 0}, {-2, 1}, 64, false, false, TESSERA_INVALID_ARGUMENT, "axis 0: extent -2 is negative"},
      {"past the end", {3, 0}, {2, 1}, 64, false, false, TESSERA_INVALID_ARGUMENT,
       "axis 0: start 3 + extent 2 exceeds the output's extent 4"},
      {"start past the end, empty", {0, 7}, {1, 0}, 64, false, false, TESSERA_INVALID_ARGUMENT,
       "axis 1: start 7 + extent 0 exceeds the output's extent 6"},
      {"huge extent", {1, 0}, {INT64_MAX, 1}, 64, false, false, TESSERA_INVALID_ARGUMENT, "exceeds the output's extent"},
      {"dst too small", {1, 1}, {2, 3}, 23, false, false, TESSERA_BUFFER_TOO_SMALL,
       "dst_bytes = 23 but the region needs 24 bytes"},
      {"null dst", {1, 1}, {2, 3}, 64, true, false, TESSERA_INVALID_ARGUMENT, "dst is null"},
      {"null src", {1, 1}, {2, 3}, 64, false, true, TESSERA_INVALID_ARGUMENT, "src is null"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.name);
    test::GuardedBuffer out(64);
    out.prefill_pattern(5);
    const auto before = out.bytes();
    void* dst = b.null_dst ? nullptr : out.data();
    const void* src = b.null_src ? nullptr : a;
    // C++
    bool threw = false;
    try {
      plan.execute_region(src, b.start, b.extent, dst, b.dst_bytes);
    } catch (const tessera::Error& e) {
      threw = true;
      CHECK(static_cast<int>(e.status()) == static_cast<int>(b.status));
      CHECK_MESSAGE(std::string(e.what()).find(b.message) != std::string::npos, e.what());
    }
    CHECK(threw);
    CHECK(out.bytes() == before);
    CHECK(out.check_guards() == "");
    // C (the counts are the plan's own, so only the values can be wrong there)
    if (b.start.size() == 2 && b.extent.size() == 2) {
      CHECK(tessera_plan_execute_region(cplan, src, b.start.data(), b.extent.data(), dst, b.dst_bytes) == b.status);
      CHECK_MESSAGE(std::string(tessera_last_error()).find(b.message) != std::string::npos, tessera_last_error());
      CHECK(out.bytes() == before);
    }
  }
  // C: NULL arrays and a NULL plan.
  float out[4];
  const int64_t start[2] = {0, 0}, extent[2] = {1, 4};
  CHECK(tessera_plan_execute_region(cplan, a, nullptr, extent, out, sizeof out) == TESSERA_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error()).find("start is NULL") != std::string::npos);
  CHECK(tessera_plan_execute_region(cplan, a, start, nullptr, out, sizeof out) == TESSERA_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error()).find("extent is NULL") != std::string::npos);
  CHECK(tessera_plan_execute_region(nullptr, a, start, extent, out, sizeof out) == TESSERA_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error()).find("plan is NULL") != std::string::npos);
  CHECK(tessera_plan_execute_region(cplan, a, start, extent, out, sizeof out) == TESSERA_OK);
  const float row0[4] = {1, 2, 3, 1};
  CHECK(std::memcmp(out, row0, sizeof out) == 0);
  tessera_plan_destroy(cplan);
}
