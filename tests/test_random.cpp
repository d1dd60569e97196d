// Randomized comparisons with the reference (fixed seeds): ranks 0-6, extents 0-7, reps 0-5 (up
// to 40 on small arrays), itemsizes 1-32 bytes, every input layout, every API, odd dst alignments;
// plus a few outputs of several MiB so that the parallel (TBB) path runs with chunk boundaries in
// the middle of rows.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "reference.hpp"
#include "util.hpp"

namespace {

using test::Api;
using test::Shape;

// Runs `count` random cases restricted to `layout` (kAllLayouts: any mix), each through the C++
// one-shot call and one other API in turn, at a random dst misalignment. Returns the number of
// failures; each failure is reported through CHECK with its full description.
int sweep(uint64_t seed, int count, unsigned layout_mask, bool force_layout) {
  test::Rng rng(seed);
  test::CaseLimits limits;
  const auto& apis = test::all_apis();
  int failures = 0;
  for (int i = 0; i < count; ++i) {
    test::Case c = test::random_case(rng, limits);
    if (force_layout) {
      // Rebuild the view with exactly the requested layout.
      c.view = test::make_view(rng, c.view.shape, c.view.itemsize, layout_mask, static_cast<uint64_t>(i));
    }
    const std::size_t misalign = static_cast<std::size_t>(rng.uniform(0, 63));
    const Api other = apis[static_cast<std::size_t>(i) % apis.size()];
    for (Api api : {Api::cpp_oneshot, other}) {
      const std::string err = test::run_and_compare(c.view, c.reps, api, misalign);
      CHECK_MESSAGE(err.empty(), "case " << i << " of seed " << seed << ": " << err);
      failures += !err.empty();
    }
    if (failures > 10) break;  // enough to diagnose; keep the log short
  }
  return failures;
}

}  // namespace

TEST_CASE("random: contiguous inputs, with explicit and with omitted strides") {
  test::Rng rng(101);
  test::CaseLimits limits;
  for (int i = 0; i < test::scaled(300); ++i) {
    test::Case c = test::random_case(rng, limits);
    const test::View view = test::make_view(rng, c.view.shape, c.view.itemsize, test::kContiguous, 11 + i);
    REQUIRE(view.strides == ref::contiguous_strides(view.shape, view.itemsize));
    const std::size_t misalign = static_cast<std::size_t>(rng.uniform(0, 63));
    CHECK(test::run_and_compare(view, c.reps, Api::cpp_oneshot, misalign, /*strided=*/false) == "");
    CHECK(test::run_and_compare(view, c.reps, Api::c_oneshot, misalign, /*strided=*/false) == "");
    CHECK(test::run_and_compare(view, c.reps, Api::cpp_plan, misalign, /*strided=*/true) == "");
  }
}

TEST_CASE("random: each input layout on its own") {
  SUBCASE("permuted axes (transposed views)") { CHECK(sweep(201, test::scaled(800), test::kPermuted, true) == 0); }
  SUBCASE("negative strides (reversed views)") { CHECK(sweep(202, test::scaled(800), test::kReversed, true) == 0); }
  SUBCASE("zero strides (broadcast views)") { CHECK(sweep(203, test::scaled(800), test::kBroadcast, true) == 0); }
  SUBCASE("offset sub-views with gaps") { CHECK(sweep(204, test::scaled(800), test::kSubView, true) == 0); }
  SUBCASE("arbitrary strides (overlapping, unaligned, equal)") { CHECK(sweep(205, test::scaled(800), test::kArbitrary, true) == 0); }
}

TEST_CASE("random: mixed layouts, every API") {
  // random_case mixes the layout features itself.
  CHECK(sweep(301, test::scaled(5000), test::kAllLayouts, false) == 0);
}

TEST_CASE("random: every itemsize with every layout on fixed small shapes") {
  // A deterministic grid, so each itemsize meets each layout regardless of the random draws.
  const std::vector<std::size_t> itemsizes = {1, 2, 3, 4, 5, 8, 12, 16, 24, 32};
  const std::vector<unsigned> layouts = {test::kContiguous, test::kPermuted,   test::kReversed, test::kBroadcast,
                                         test::kSubView,    test::kAllLayouts, test::kArbitrary};
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{5}, {3}},
      {{1}, {37}},
      {{3, 1}, {2, 40}},
      {{4, 3}, {1, 5}},
      {{2, 3, 4}, {2, 1, 2}},
      {{7, 1, 3}, {1, 4, 1}},
      {{2, 2, 2, 2}, {3}},
      {{3, 5}, {2, 1, 1, 2}},
  };
  test::Rng rng(401);
  for (std::size_t itemsize : itemsizes)
    for (unsigned layout : layouts)
      for (const auto& [shape, reps] : cases) {
        const test::View view = test::make_view(rng, shape, itemsize, layout, itemsize * 131 + layout);
        const std::size_t misalign = static_cast<std::size_t>(rng.uniform(0, 63));
        CHECK(test::run_and_compare(view, reps, Api::cpp_oneshot, misalign) == "");
      }
}

TEST_CASE("random: larger reps on small arrays") {
  test::Rng rng(501);
  for (int i = 0; i < test::scaled(200); ++i) {
    const int ndim = static_cast<int>(rng.uniform(0, 3));
    Shape shape(static_cast<std::size_t>(ndim)), reps(static_cast<std::size_t>(rng.uniform(1, 3)));
    for (auto& e : shape) e = rng.uniform(1, 3);
    for (auto& r : reps) r = rng.uniform(1, 40);
    const std::size_t itemsize = rng.pick(std::vector<std::size_t>{1, 2, 3, 4, 8, 12, 16, 32});
    const unsigned layout = rng.coin(20) ? test::kArbitrary : static_cast<unsigned>(rng.uniform(0, test::kAllLayouts));
    const test::View view = test::make_view(rng, shape, itemsize, layout, 900 + i);
    CHECK(test::run_and_compare(view, reps, test::all_apis()[static_cast<std::size_t>(i) % 6],
                                static_cast<std::size_t>(rng.uniform(0, 63))) == "");
  }
}

TEST_CASE("random: large outputs run the parallel path") {
  test::Rng rng(601);
  for (const auto& c : test::large_cases()) {
    const test::View view = test::make_view(rng, c.shape, c.itemsize, c.layout, 77);
    const auto bytes = static_cast<std::size_t>(ref::count(ref::tile_shape(c.shape, c.reps))) * c.itemsize;
    CAPTURE(c.name);
    CHECK(bytes >= (1u << 20));  // a few MiB each
    CHECK(bytes <= (12u << 20));
    // An odd misalignment so that no chunk boundary is a multiple of the vector size.
    CHECK(test::run_and_compare(view, c.reps, Api::cpp_oneshot, 3) == "");
    CHECK(test::run_and_compare(view, c.reps, Api::c_plan, 0) == "");
  }
}
