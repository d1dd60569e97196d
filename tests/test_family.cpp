// The rest of the replication family — broadcast_to (numpy.broadcast_to(...).copy()), expand (ONNX
// Expand) and repeat (numpy.repeat) — against the scalar reference (reference.cpp), through the
// C++ plan, one-shot and allocating calls and the C one-shot and plan calls, into guarded buffers
// at random misalignments: random shapes, layouts, itemsizes and options; regions of every plan;
// large outputs of every repeat path (threaded, streamed or not); errors, with the output untouched.
#include <doctest/doctest.h>

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <hwy/targets.h>
#include <tbb/task_arena.h>

#include "alloc_spy.hpp"
#include "reference.hpp"
#include "util.hpp"

namespace {

using test::Shape;

enum class Op { broadcast_to, expand, repeat };
const char* op_name(Op op) { return op == Op::broadcast_to ? "broadcast_to" : op == Op::expand ? "expand" : "repeat"; }

// One call of the family: the operation and its arguments.
struct Call {
  Op op = Op::broadcast_to;
  Shape target;             // broadcast_to, expand
  Shape counts;             // repeat: 1 value or one per element
  std::optional<int> axis;  // repeat
  tessera::Options options;

  std::string describe() const {
    std::string s = op_name(op);
    if (op == Op::repeat) {
      s += " counts " + test::to_string(counts) + " axis " + (axis ? std::to_string(*axis) : std::string("None"));
    } else {
      s += " to " + test::to_string(target);
    }
    return s + " nontemporal " + std::to_string(static_cast<int>(options.nontemporal)) + " max_threads " +
           std::to_string(options.max_threads);
  }
};

tessera::Plan plan_of(const test::View& v, const Call& c) {
  switch (c.op) {
    case Op::broadcast_to: return tessera::Plan::broadcast_to(v.shape, v.strides, v.itemsize, c.target, c.options);
    case Op::expand: return tessera::Plan::expand(v.shape, v.strides, v.itemsize, c.target, c.options);
    case Op::repeat: break;
  }
  return tessera::Plan::repeat(v.shape, v.strides, v.itemsize, c.counts, c.axis, c.options);
}

// The reference output and its shape.
std::vector<unsigned char> expected_of(const test::View& v, const Call& c, Shape* shape) {
  switch (c.op) {
    case Op::broadcast_to:
      *shape = c.target;
      return ref::broadcast_to(v.data(), v.shape, v.strides, v.itemsize, c.target);
    case Op::expand: {
      bool ok = false;
      *shape = ref::broadcast_shapes(v.shape, c.target, &ok);
      REQUIRE(ok);
      return ref::broadcast_to(v.data(), v.shape, v.strides, v.itemsize, *shape);
    }
    case Op::repeat: break;
  }
  return ref::repeat(v.data(), v.shape, v.strides, v.itemsize, c.counts, c.axis ? (*c.axis < 0 ? *c.axis + static_cast<int>(v.shape.size()) : *c.axis) : -1, shape);
}

tessera_options c_options(const tessera::Options& o) {
  tessera_options co;
  tessera_options_init(&co);
  co.max_threads = o.max_threads;
  co.nontemporal = static_cast<int>(o.nontemporal);
  co.negative_reps = static_cast<int>(o.negative_reps);
  return co;
}

// Runs `c` on `v` through every entry point; "" or the first failure.
std::string run_all(const test::View& v, const Call& c, test::Rng& rng) {
  Shape shape;
  const std::vector<unsigned char> expected = expected_of(v, c, &shape);
  const std::string what = v.describe() + ", " + c.describe() + ": ";
  const std::size_t misalign = static_cast<std::size_t>(rng.uniform(0, 63));
  const int nd = static_cast<int>(v.shape.size());
  const tessera_options co = c_options(c.options);
  const int axis = c.axis ? *c.axis : TESSERA_AXIS_NONE;
  for (int api = 0; api < 5; ++api) {
    test::GuardedBuffer out(expected.size(), misalign);
    out.prefill_complement(expected);
    std::string err;
    Shape got_shape;
    if (api == 0) {  // C++ plan
      const tessera::Plan plan = plan_of(v, c);
      got_shape = plan.shape().to_vector();
      plan.execute(v.data(), out.data(), out.size());
    } else if (api == 1) {  // C++ one-shot
      switch (c.op) {
        case Op::broadcast_to:
          tessera::broadcast_to(v.data(), v.shape, v.strides, v.itemsize, c.target, out.data(), out.size(), c.options);
          break;
        case Op::expand:
          tessera::expand(v.data(), v.shape, v.strides, v.itemsize, c.target, out.data(), out.size(), c.options);
          break;
        case Op::repeat:
          tessera::repeat(v.data(), v.shape, v.strides, v.itemsize, c.counts, c.axis, out.data(), out.size(),
                          c.options);
          break;
      }
      got_shape = shape;
    } else if (api == 2) {  // C++ allocating
      tessera::Array a = c.op == Op::broadcast_to ? tessera::broadcast_to(v.data(), v.shape, v.strides, v.itemsize, c.target, c.options)
                         : c.op == Op::expand     ? tessera::expand(v.data(), v.shape, v.strides, v.itemsize, c.target, c.options)
                                                  : tessera::repeat(v.data(), v.shape, v.strides, v.itemsize, c.counts, c.axis, c.options);
      got_shape = a.shape().to_vector();
      if (a.nbytes() != expected.size()) return what + "allocating call: " + std::to_string(a.nbytes()) + " bytes";
      if (a.nbytes() > 0) std::memcpy(out.data(), a.data(), a.nbytes());
    } else if (api == 3) {  // C one-shot
      tessera_status st = TESSERA_OK;
      switch (c.op) {
        case Op::broadcast_to:
          st = tessera_broadcast_to_ex(v.data(), nd, v.shape.data(), v.strides.data(), v.itemsize,
                                       static_cast<int>(c.target.size()), c.target.data(), out.data(), out.size(), &co);
          break;
        case Op::expand:
          st = tessera_expand_ex(v.data(), nd, v.shape.data(), v.strides.data(), v.itemsize,
                                 static_cast<int>(c.target.size()), c.target.data(), out.data(), out.size(), &co);
          break;
        case Op::repeat:
          st = tessera_repeat_ex(v.data(), nd, v.shape.data(), v.strides.data(), v.itemsize,
                                 static_cast<int64_t>(c.counts.size()), c.counts.data(), axis, out.data(), out.size(), &co);
          break;
      }
      if (st != TESSERA_OK) return what + "C one-shot: status " + std::to_string(st) + ": " + tessera_last_error();
      int ond = 0;
      int64_t os[TESSERA_MAX_NDIM];
      st = c.op == Op::broadcast_to ? tessera_broadcast_shape(nd, v.shape.data(), static_cast<int>(c.target.size()), c.target.data(), &ond, os)
           : c.op == Op::expand     ? tessera_expand_shape(nd, v.shape.data(), static_cast<int>(c.target.size()), c.target.data(), &ond, os)
                                    : tessera_repeat_shape(nd, v.shape.data(), static_cast<int64_t>(c.counts.size()), c.counts.data(), axis, &ond, os);
      if (st != TESSERA_OK) return what + "C shape: status " + std::to_string(st) + ": " + tessera_last_error();
      got_shape.assign(os, os + ond);
    } else {  // C plan
      tessera_plan* plan = nullptr;
      const tessera_status st =
          c.op == Op::broadcast_to ? tessera_plan_create_broadcast_to(nd, v.shape.data(), v.strides.data(), v.itemsize, static_cast<int>(c.target.size()), c.target.data(), &co, &plan)
          : c.op == Op::expand     ? tessera_plan_create_expand(nd, v.shape.data(), v.strides.data(), v.itemsize, static_cast<int>(c.target.size()), c.target.data(), &co, &plan)
                                   : tessera_plan_create_repeat(nd, v.shape.data(), v.strides.data(), v.itemsize, static_cast<int64_t>(c.counts.size()), c.counts.data(), axis, &co, &plan);
      if (st != TESSERA_OK) return what + "C plan: status " + std::to_string(st) + ": " + tessera_last_error();
      int ond = 0;
      int64_t os[TESSERA_MAX_NDIM];
      tessera_plan_output_shape(plan, &ond, os);
      got_shape.assign(os, os + ond);
      const tessera_status ex = tessera_plan_execute(plan, v.data(), out.data(), out.size());
      tessera_plan_destroy(plan);
      if (ex != TESSERA_OK) return what + "C plan execute: " + tessera_last_error();
    }
    if (got_shape != shape)
      return what + "api " + std::to_string(api) + ": shape " + test::to_string(got_shape) + ", expected " +
             test::to_string(shape);
    err = out.check(expected, v.itemsize);
    if (!err.empty()) return what + "api " + std::to_string(api) + ": " + err;
  }
  // A random region of the plan.
  if (!expected.empty()) {
    const tessera::Plan plan = plan_of(v, c);
    Shape start(shape.size()), extent(shape.size());
    for (std::size_t k = 0; k < shape.size(); ++k) {
      start[k] = rng.uniform(0, shape[k] - 1);
      extent[k] = rng.uniform(1, shape[k] - start[k]);
    }
    const std::vector<unsigned char> want = ref::box(expected, shape, v.itemsize, start, extent);
    test::GuardedBuffer out(want.size(), misalign);
    out.prefill_complement(want);
    plan.execute_region(v.data(), start, extent, out.data(), out.size());
    const std::string err = out.check(want, v.itemsize);
    if (!err.empty())
      return what + "region start " + test::to_string(start) + " extent " + test::to_string(extent) + ": " + err +
             "\n" + plan.describe();
  }
  return "";
}

tessera::Options random_options(test::Rng& rng) {
  tessera::Options o;
  o.nontemporal = static_cast<tessera::NonTemporal>(rng.uniform(0, 2));
  o.max_threads = static_cast<int>(rng.uniform(0, 3));
  return o;
}

// A random call for the view: targets that broadcast, counts that are valid.
Call random_call(test::Rng& rng, const test::View& v) {
  Call c;
  c.op = static_cast<Op>(rng.uniform(0, 2));
  c.options = random_options(rng);
  const int nd = static_cast<int>(v.shape.size());
  if (c.op == Op::broadcast_to) {
    const int lead = static_cast<int>(rng.uniform(0, 2));
    for (int i = 0; i < lead; ++i) c.target.push_back(rng.uniform(0, 3));
    for (int64_t e : v.shape) c.target.push_back(e == 1 ? rng.uniform(0, 5) : e);
  } else if (c.op == Op::expand) {
    const int lead = static_cast<int>(rng.uniform(0, 2)), drop = static_cast<int>(rng.uniform(0, nd));
    for (int i = 0; i < lead; ++i) c.target.push_back(rng.uniform(1, 3));
    for (int i = lead > 0 ? 0 : drop; i < nd; ++i) {
      const int64_t e = v.shape[static_cast<std::size_t>(i)];
      c.target.push_back(e == 1 ? rng.uniform(0, 5) : rng.coin(30) ? 1 : e);
    }
  } else {
    const bool has_axis = nd > 0 && rng.coin(70);
    if (has_axis) c.axis = static_cast<int>(rng.uniform(-nd, nd - 1));
    const int a = has_axis ? (*c.axis < 0 ? *c.axis + nd : *c.axis) : -1;
    const int64_t extent = a >= 0 ? v.shape[static_cast<std::size_t>(a)] : ref::count(v.shape);
    const int kind = static_cast<int>(rng.uniform(0, 2));  // scalar, a list of one, one per element
    if (kind < 2 || extent > 64) {
      c.counts = {rng.uniform(0, rng.coin(20) ? 12 : 4)};
    } else {
      for (int64_t i = 0; i < extent; ++i) c.counts.push_back(rng.uniform(0, 4));
    }
  }
  return c;
}

}  // namespace

TEST_CASE("broadcast_to, expand, repeat: random shapes, layouts and options against the reference, every API") {
  test::Rng rng(20261123);
  const std::size_t itemsizes[] = {1, 2, 3, 4, 8, 12, 16};
  int ran = 0;
  for (int i = 0; i < test::scaled(1500); ++i) {
    const int nd = static_cast<int>(rng.uniform(0, 4));
    Shape shape;
    for (int k = 0; k < nd; ++k) shape.push_back(rng.coin(35) ? 1 : rng.uniform(0, 5));
    const std::size_t isz = itemsizes[rng.uniform(0, 6)];
    const unsigned layout = static_cast<unsigned>(rng.uniform(0, test::kAllLayouts));
    const test::View v = test::make_view(rng, shape, isz, layout, static_cast<uint64_t>(i) + 1);
    const Call c = random_call(rng, v);
    const std::string err = run_all(v, c, rng);
    CHECK_MESSAGE(err.empty(), "case " << i << ": " << err);
    if (!err.empty()) break;
    ++ran;
  }
  CHECK(ran == test::scaled(1500));
}

TEST_CASE("repeat and broadcast: outputs of MiBs through every repeat path, threaded, streamed or not") {
  struct Large {
    const char* name;
    Shape shape;
    std::size_t itemsize;
    unsigned layout;
    Call call;
    const char* path;  // expected kernel_path() under NonTemporal::never (on a target with vectors)
  };
  const auto repeat = [](Shape counts, std::optional<int> axis) {
    Call c;
    c.op = Op::repeat;
    c.counts = std::move(counts);
    c.axis = axis;
    return c;
  };
  const auto bcast = [](Op op, Shape target) {
    Call c;
    c.op = op;
    c.target = std::move(target);
    return c;
  };
  test::Rng rng(77);
  Shape counts04;  // per-element counts 0..4 for 300007 elements
  for (int i = 0; i < 300007; ++i) counts04.push_back(rng.uniform(0, 4));
  Shape counts016, counts08, counts02;  // per-element counts up to one 16-byte store of 1, 2, 8-byte elements
  for (int i = 0; i < 300007; ++i) {
    counts016.push_back(rng.uniform(0, 16));
    counts08.push_back(rng.coin(4) ? 0 : rng.uniform(0, 8));  // runs of empty segments too
    counts02.push_back(rng.uniform(0, 2));
  }
  Shape row_counts;  // per-row counts for 999 rows
  for (int i = 0; i < 999; ++i) row_counts.push_back(rng.uniform(0, 3));
  Shape counts04z;  // per-element counts 0..4 with runs of empty segments (AVX-512's quads of four empty ones)
  for (int i = 0; i < 300007; ++i) counts04z.push_back(rng.coin(2) ? 0 : rng.uniform(0, 4));
  std::vector<Large> cases = {
      {"repeat 1-byte by 2", {500009}, 1, test::kContiguous, repeat({2}, -1), "repeat.shuffle"},
      {"repeat 2-byte by 3", {300007}, 2, test::kContiguous, repeat({3}, 0), "repeat.shuffle"},
      {"repeat 4-byte by 4, rows", {301, 997}, 4, test::kContiguous, repeat({4}, 1), "repeat.shuffle"},
      {"repeat 8-byte by 8, flattened", {97, 1031}, 8, test::kContiguous, repeat({8}, std::nullopt), "repeat.shuffle"},
      {"repeat 4-byte by 2, reversed", {300007}, 4, test::kReversed, repeat({2}, 0), "repeat.elements"},
      {"repeat 3-byte by 5", {200003}, 3, test::kContiguous, repeat({5}, -1), "repeat.elements"},
      {"repeat 4-byte by 9 (shuffle takes 2..8)", {100003}, 4, test::kContiguous, repeat({9}, -1), "repeat.elements"},
      {"repeat rows by 3 (axis 0: a pattern)", {401, 1031}, 4, test::kContiguous, repeat({3}, 0), "pattern.long"},
      {"repeat by 40 (fills)", {20011}, 4, test::kContiguous, repeat({40}, 0), "fill.4"},
      {"per-element counts 0..4", {300007}, 4, test::kContiguous, repeat(counts04, -1), "segments"},
      {"per-element counts 0..4, many empty", {300007}, 4, test::kContiguous, repeat(counts04z, 0), "segments"},
      {"per-element counts 0..16 of 1-byte elements", {300007}, 1, test::kContiguous, repeat(counts016, 0), "segments"},
      {"per-element counts 0..8 of 2-byte elements, many empty", {300007}, 2, test::kContiguous, repeat(counts08, 0), "segments"},
      {"per-element counts 0..2 of 8-byte elements, strided", {300007}, 8, test::kSubView, repeat(counts02, 0), "segments"},
      {"per-element counts, transposed input flattened", {547, 549}, 4, test::kPermuted, repeat(counts04, std::nullopt), "segments"},
      {"per-row counts (a segment loop)", {999, 517}, 4, test::kContiguous, repeat(row_counts, 0), "copy"},
      {"broadcast rows", {1, 2053}, 4, test::kContiguous, bcast(Op::broadcast_to, {1031, 2053}), "pattern.long"},
      {"broadcast columns", {2053, 1}, 4, test::kContiguous, bcast(Op::broadcast_to, {2053, 1031}), "fill.4"},
      {"broadcast NCHW bias", {1, 64, 1, 1}, 4, test::kContiguous, bcast(Op::broadcast_to, {16, 64, 33, 37}), "fill.4"},
      {"broadcast a scalar", {}, 8, test::kContiguous, bcast(Op::broadcast_to, {600011}), "fill.8"},
      {"expand a transposed input", {1031, 1}, 4, test::kPermuted, bcast(Op::expand, {3, 1, 1031}), "fill.4"},
  };
  // The flattened transposed case has 547 * 549 = 300303 elements: counts for each.
  for (Large& c : cases)
    if (std::string(c.name).find("flattened") != std::string::npos && c.call.counts.size() > 1)
      c.call.counts.resize(static_cast<std::size_t>(ref::count(c.shape)), 1);
  const bool vectors = std::string(tessera::active_target()) != "SCALAR";
  int index = 0;
  for (const Large& c : cases) {
    CAPTURE(c.name);
    test::View v = test::make_view(rng, c.shape, c.itemsize, c.layout == test::kReversed ? test::kContiguous : c.layout, 5);
    if (c.layout == test::kReversed) {  // every axis walked backwards (not a random subset of them)
      for (std::size_t k = 0; k < v.shape.size(); ++k) {
        v.origin += static_cast<std::size_t>((v.shape[k] - 1) * v.strides[k]);
        v.strides[k] = -v.strides[k];
      }
    }
    // Under emulation (TESSERA_TEST_SCALE > 1, tests/run --cross) every scale-th case only
    // (test::scale_takes; the views are made for all, so each case's layout is the same at every scale).
    if (!test::scale_takes(index++)) continue;
    for (const tessera::NonTemporal nt : {tessera::NonTemporal::never, tessera::NonTemporal::always}) {
      Call call = c.call;
      call.options.nontemporal = nt;
      const tessera::Plan plan = plan_of(v, call);
      const std::string path = plan.kernel_path();
      if (nt == tessera::NonTemporal::never && (vectors || std::string(c.path).find("shuffle") == std::string::npos))
        CHECK_MESSAGE(path == c.path, plan.describe());
      if (nt == tessera::NonTemporal::always && vectors) CHECK_MESSAGE(path.find(".nt") != std::string::npos, plan.describe());
      for (int threads : {0, 1}) {
        call.options.max_threads = threads;
        const std::string err = run_all(v, call, rng);
        CHECK_MESSAGE(err.empty(), err);
      }
    }
  }
}

TEST_CASE("broadcast_to, expand, repeat: bad arguments name the bad value, and nothing is written") {
  const int32_t src[6] = {1, 2, 3, 4, 5, 6};
  std::vector<unsigned char> dst(1024, 0xAB);
  const auto untouched = [&] {
    for (unsigned char b : dst)
      if (b != 0xAB) return false;
    return true;
  };
  const auto throws = [&](auto&& f, const std::string& needle) {
    try {
      f();
    } catch (const tessera::InvalidArgument& e) {
      CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos, e.what() << " should contain " << needle);
      CHECK(untouched());
      return;
    }
    FAIL("no InvalidArgument; expected one containing " << needle);
  };
  const Shape s23 = {2, 3};
  throws([&] { tessera::broadcast_to(src, s23, {}, 4, {2, 4}, dst.data(), dst.size()); }, "input axis 1 has extent 3 but shape[1] = 4");
  throws([&] { tessera::broadcast_to(src, s23, {}, 4, {3}, dst.data(), dst.size()); }, "the input has 2 axes but shape (3,) has 1");
  throws([&] { tessera::broadcast_to(src, s23, {}, 4, {-1, 2, 3}, dst.data(), dst.size()); }, "shape[0] = -1 is negative");
  throws([&] { tessera::expand(src, s23, {}, 4, {4, 1}, dst.data(), dst.size()); }, "input axis 0 has extent 2 but shape[0] = 4");
  throws([&] { tessera::repeat(src, s23, {}, 4, 2, 2, dst.data(), dst.size()); }, "axis 2 is out of range for an input of 2 axes");
  throws([&] { tessera::repeat(src, s23, {}, 4, 2, -3, dst.data(), dst.size()); }, "axis -3 is out of range");
  throws([&] { tessera::repeat(src, s23, {}, 4, -1, std::nullopt, dst.data(), dst.size()); }, "repeats[0] = -1 is negative");
  const std::vector<int64_t> two = {1, 2}, bad = {1, -2, 0};
  throws([&] { tessera::repeat(src, s23, {}, 4, two, 1, dst.data(), dst.size()); }, "2 counts for 3 elements along axis 1");
  throws([&] { tessera::repeat(src, s23, {}, 4, bad, 1, dst.data(), dst.size()); }, "repeats[1] = -2 is negative");
  throws([&] { tessera::repeat(src, s23, {}, 4, two, std::nullopt, dst.data(), dst.size()); }, "2 counts for 6 elements along the flattened input");
  // Too small a buffer: BufferTooSmall, nothing written.
  CHECK_THROWS_AS(tessera::repeat(src, s23, {}, 4, 2, 0, dst.data(), 47), tessera::BufferTooSmall);
  CHECK(untouched());
  // Negative counts act as 0 under clamp_to_zero.
  tessera::Options clamp;
  clamp.negative_reps = tessera::NegativeReps::clamp_to_zero;
  CHECK(tessera::Plan::repeat(s23, {}, 4, bad, 1, clamp).shape() == tessera::Dims({2, 1}));
  // Overflow: the sum of the counts, and an output too big.
  const std::vector<int64_t> huge = {INT64_MAX, 1, 0};
  CHECK_THROWS_AS(tessera::repeat_shape(s23, huge, 1), tessera::Overflow);
  CHECK_THROWS_AS(tessera::broadcast_shape({1}, {INT64_MAX, 2}), tessera::Overflow);
  // An empty input whose other axes multiply beyond int64 (its element count, 0, does not): planned
  // without an int64 overflow (the product of the axes inside the repeated one, and the merged
  // extents of the flattened per-element counts, were undefined behaviour: the fuzzer's finding,
  // which the sanitize suite's run of this test fails on).
  const tessera::Dims wide = {0, 3909821048582988049, 7};
  CHECK(tessera::repeat_shape(wide, 2, 0) == tessera::Dims({0, 3909821048582988049, 7}));
  CHECK(tessera::repeat_shape(wide, 2, 2) == tessera::Dims({0, 3909821048582988049, 14}));
  CHECK(tessera::repeat_shape(wide, std::vector<int64_t>{}, std::nullopt) == tessera::Dims({0}));
  CHECK(tessera::Plan::repeat(wide, {}, 4, 2, 0).shape() == tessera::Dims({0, 3909821048582988049, 7}));
  CHECK(tessera::Plan::repeat(wide, {}, 4, std::vector<int64_t>{}, std::nullopt).shape() == tessera::Dims({0}));
  // Through C: the status, the message, and the first bad argument reported.
  CHECK(tessera_repeat(src, 2, s23.data(), nullptr, 4, 1, nullptr, 0, dst.data(), dst.size()) == TESSERA_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error()).find("repeats is NULL but nrepeats = 1") != std::string::npos);
  const int64_t r2 = 2;
  CHECK(tessera_repeat(src, -1, nullptr, nullptr, 4, -5, &r2, 7, dst.data(), dst.size()) == TESSERA_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error()).find("ndim = -1") != std::string::npos);
  tessera_options zeroed{};
  CHECK(tessera_repeat_ex(src, 2, s23.data(), nullptr, 4, 1, &r2, 0, dst.data(), dst.size(), &zeroed) == TESSERA_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error()).find("sizeof_options = 0") != std::string::npos);
  CHECK(untouched());
}

TEST_CASE("repeat: per-element counts read in place as int32 or int64 at any byte stride") {
  // 2 x 5 int32 input, counts along axis 1 and over the flattened input, compared with int64 counts.
  const int32_t src[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const Shape s25 = {2, 5};
  const std::vector<int64_t> c5 = {3, 0, 1, 4, 2};
  // int32 counts interleaved with junk (stride 8 bytes), int64 counts at stride 16 bytes, reversed (negative stride).
  std::vector<int32_t> c32(10, -77);
  std::vector<int64_t> c64(10, -77);
  for (int i = 0; i < 5; ++i) c32[2 * i] = static_cast<int32_t>(c5[i]), c64[2 * (4 - i)] = c5[i];
  const tessera::Repeats views[] = {tessera::Repeats(c32.data(), 5, 8), tessera::Repeats(c64.data() + 8, 5, -16)};
  CHECK(views[0].data() == nullptr);
  CHECK(tessera::Repeats(c5.data(), 5, 8).data() == c5.data());
  for (const tessera::Repeats& r : views) {
    for (int i = 0; i < 5; ++i) CHECK(r.at(i) == c5[static_cast<std::size_t>(i)]);
    const tessera::Array a = tessera::repeat(src, s25, {}, 4, r, 1);
    const tessera::Array b = tessera::repeat(src, s25, {}, 4, c5, 1);
    REQUIRE(a.shape() == tessera::Dims({2, 10}));
    REQUIRE(b.shape() == a.shape());
    CHECK(std::memcmp(a.data(), b.data(), a.nbytes()) == 0);
    CHECK(a.data_as<int32_t>()[0] == 1);
    CHECK(a.data_as<int32_t>()[3] == 3);
    CHECK(tessera::repeat_shape(s25, r, 1) == tessera::Dims({2, 10}));
    CHECK(tessera::Plan::repeat(s25, {}, 4, r, -1).shape() == tessera::Dims({2, 10}));
  }
  // The flattened input: 10 int32 counts, contiguous (the default stride).
  const int32_t f32[10] = {1, 0, 2, 0, 1, 1, 0, 3, 0, 1};
  const std::vector<int64_t> f64(f32, f32 + 10);
  const tessera::Array fa = tessera::repeat(src, s25, {}, 4, tessera::Repeats(f32, 10), std::nullopt);
  const tessera::Array fb = tessera::repeat(src, s25, {}, 4, f64, std::nullopt);
  REQUIRE(fa.shape() == tessera::Dims({9}));
  CHECK(std::memcmp(fa.data(), fb.data(), fa.nbytes()) == 0);
  // One count repeated through a strided view: the scalar path.
  const int32_t same[6] = {2, 9, 2, 9, 2, 9};
  CHECK(tessera::Plan::repeat({3}, {}, 4, tessera::Repeats(same, 3, 8), 0).shape() == tessera::Dims({6}));
  // Errors: the first negative count named with its value (int32 and strided), nothing written; the
  // sum's overflow (int64), a negative count named before an overflow; a wrong length.
  std::vector<unsigned char> dst(256, 0xAB);
  const int32_t neg[10] = {1, 99, 2, 99, -3, 99, 0, 99, -1, 99};
  try {
    tessera::repeat(src, s25, {}, 4, tessera::Repeats(neg, 5, 8), 1, dst.data(), dst.size());
    FAIL("no InvalidArgument for a negative int32 count");
  } catch (const tessera::InvalidArgument& e) {
    CHECK(std::string(e.what()).find("repeats[2] = -3 is negative") != std::string::npos);
  }
  for (unsigned char b : dst) REQUIRE(b == 0xAB);
  const int32_t all_neg[3] = {-4, -4, -4};
  CHECK_THROWS_WITH_AS(tessera::repeat_shape({3}, tessera::Repeats(all_neg, 3), 0),
                       doctest::Contains("repeats[0] = -4 is negative"), tessera::InvalidArgument);
  const int64_t huge[3] = {INT64_MAX, 1, 0}, huge_neg[3] = {INT64_MAX, 1, -1};
  CHECK_THROWS_WITH_AS(tessera::Plan::repeat({3}, {}, 4, tessera::Repeats(huge, 3), 0),
                       doctest::Contains("overflows int64 at repeats[1]"), tessera::Overflow);
  CHECK_THROWS_WITH_AS(tessera::repeat_shape({3}, tessera::Repeats(huge, 3), 0),
                       doctest::Contains("overflows int64 at repeats[1]"), tessera::Overflow);
  CHECK_THROWS_WITH_AS(tessera::Plan::repeat({3}, {}, 4, tessera::Repeats(huge_neg, 3), 0),
                       doctest::Contains("repeats[2] = -1 is negative"), tessera::InvalidArgument);
  CHECK_THROWS_WITH_AS(tessera::repeat_shape(s25, tessera::Repeats(f32, 4), 1),
                       doctest::Contains("4 counts for 5 elements along axis 1"), tessera::InvalidArgument);
  // clamp_to_zero: a negative int32 count acts as 0.
  tessera::Options clamp;
  clamp.negative_reps = tessera::NegativeReps::clamp_to_zero;
  CHECK(tessera::Plan::repeat(s25, {}, 4, tessera::Repeats(neg, 5, 8), 1, clamp).shape() == tessera::Dims({2, 3}));
  // repeat_backward reads the same views: the gradient of the strided int32 repeat.
  std::vector<float> grad(20, 1.0f), gin(10, -1.0f);
  tessera::repeat_backward(grad.data(), {2, 10}, {}, tessera::DType::float32, s25, views[0], 1, gin.data(),
                           gin.size() * sizeof(float));
  for (int i = 0; i < 10; ++i) CHECK(gin[static_cast<std::size_t>(i)] == static_cast<float>(c5[static_cast<std::size_t>(i % 5)]));
}

TEST_CASE("repeat: the planner's scan of per-element counts, on every target") {
  // The planner reads per-element counts of 4-byte elements (at most 4 each: one-byte counts,
  // every 16th prefix sum kept) by a per-target scan (kernels/counts.cpp). Planned on each target:
  // 5003 counts 0-4 as int64 and as int32; with one count of 5 inside a block (planned without the
  // one-byte counts); with one negative count there (an error naming it, nothing written).
  test::Rng rng(20261129);
  const int64_t n = 5003;  // not a multiple of a block (512) or of 16
  Shape counts(static_cast<std::size_t>(n));
  for (auto& c : counts) c = rng.uniform(0, 4);
  std::vector<unsigned char> src(static_cast<std::size_t>(n) * 4);
  for (auto& b : src) b = static_cast<unsigned char>(rng.uniform(0, 255));
  {
    const tessera::Plan native = tessera::Plan::repeat({n}, {}, 4, counts, 0);
    CHECK_MESSAGE((native.describe().find("every 16th prefix sum") != std::string::npos) ==
                      (std::string(tessera::active_target()) != "SCALAR"),
                  native.describe());
  }
  for (const int64_t target : test::targets_to_test()) {
    hwy::SetSupportedTargetsForTest(target);
    INFO(std::string(hwy::TargetName(target)));
    for (const int64_t five_at : {int64_t{-1}, int64_t{4097}}) {
      INFO("a count of 5 at " << five_at);
      Shape c = counts;
      if (five_at >= 0) c[static_cast<std::size_t>(five_at)] = 5;
      const std::vector<int32_t> c32(c.begin(), c.end());
      Shape out_shape;
      const std::vector<unsigned char> want = ref::repeat(src.data(), {n}, {}, 4, c, 0, &out_shape);
      for (const bool narrow : {false, true}) {
        INFO((narrow ? "int32 counts" : "int64 counts"));
        const tessera::Repeats r = narrow ? tessera::Repeats(c32.data(), c32.size()) : tessera::Repeats(c);
        const tessera::Plan plan = tessera::Plan::repeat({n}, {}, 4, r, 0);
        std::vector<unsigned char> got(want.size(), 0xAB);
        plan.execute(src.data(), got.data(), got.size());
        CHECK(std::memcmp(got.data(), want.data(), want.size()) == 0);
      }
    }
    Shape bad = counts;
    bad[4099] = -3;
    const std::vector<int32_t> bad32(bad.begin(), bad.end());
    CHECK_THROWS_WITH_AS(tessera::Plan::repeat({n}, {}, 4, bad, 0), doctest::Contains("repeats[4099] = -3 is negative"),
                         tessera::InvalidArgument);
    CHECK_THROWS_WITH_AS(tessera::Plan::repeat({n}, {}, 4, tessera::Repeats(bad32.data(), bad32.size()), 0),
                         doctest::Contains("repeats[4099] = -3 is negative"), tessera::InvalidArgument);
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST_CASE("repeat: per-element counts planned compact give numpy.repeat's output from any start, on every target") {
  // Where the segments kernel walks one-byte counts (segments of single elements, each count at
  // most 16 / itemsize), the plan keeps those and every 16th prefix sum only; a range or region
  // then finds where it starts from the kept sums and the bytes. Every itemsize the walk takes,
  // counts 0 to its most, with runs of empty segments (across the kept sums' steps, and at the end);
  // the flattened input, the axis of a 1-d input (a region goes through the region kernel), and
  // the last axis of a 2-d one (rows); whole outputs in one piece and in pieces, and regions at
  // random starts, planned for the best target and run on every target.
  test::Rng rng(20261128);
  const bool vectors = std::string(tessera::active_target()) != "SCALAR";
  for (const std::size_t isz : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
    const int64_t most = 16 / static_cast<int64_t>(isz);
    const int64_t n = 20011;  // not a multiple of 16
    Shape counts(static_cast<std::size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      const bool empty = (k >= 1000 && k < 1040) || k >= n - 300;
      counts[static_cast<std::size_t>(k)] = empty ? 0 : rng.uniform(0, most);
    }
    std::vector<unsigned char> src(static_cast<std::size_t>(n) * isz);
    for (auto& b : src) b = static_cast<unsigned char>(rng.uniform(0, 255));
    struct Layout {
      const char* name;
      Shape shape;
      std::optional<int> axis;
    };
    const Layout layouts[] = {{"flattened", {n}, std::nullopt}, {"axis 0 of a 1-d input", {n}, 0}};
    for (const Layout& l : layouts) {
      INFO(l.name << ", itemsize " << isz);
      Shape out_shape;
      const std::vector<unsigned char> want =
          ref::repeat(src.data(), l.shape, {}, isz, counts, l.axis ? *l.axis : -1, &out_shape);
      const tessera::Plan best = tessera::Plan::repeat(l.shape, {}, isz, counts, l.axis);
      CHECK_MESSAGE((best.describe().find("(one-byte counts, every 16th prefix sum)") != std::string::npos) == vectors,
                    best.describe());
      const int64_t total = out_shape[0];
      for (const int64_t target : test::targets_to_test()) {
        hwy::SetSupportedTargetsForTest(target);
        INFO(hwy::TargetName(target));
        for (const bool split : {false, true}) {
          std::vector<unsigned char> got(want.size() + 16, 0xAB);
          const auto run = [&] { best.execute(src.data(), got.data(), want.size()); };
          if (split) {
            tbb::task_arena four(4);
            four.execute(run);
          } else {
            run();
          }
          CHECK_MESSAGE(std::memcmp(got.data(), want.data(), want.size()) == 0, (split ? "in pieces" : "in one piece"));
          for (std::size_t b = want.size(); b < got.size(); ++b) REQUIRE(got[b] == 0xAB);
        }
        int64_t wrong = 0;
        for (int r = 0; r < 60; ++r) {  // regions starting anywhere: inside a segment, at an empty run, near the end
          const int64_t start = r < 50 ? rng.uniform(0, total - 1) : total - 1 - rng.uniform(0, 40);
          const int64_t extent = rng.uniform(1, std::min<int64_t>(total - start, 3000));
          const tessera::Array got = best.execute_region(src.data(), {start}, {extent});
          wrong += std::memcmp(got.data(), want.data() + static_cast<std::size_t>(start) * isz,
                               static_cast<std::size_t>(extent) * isz) != 0;
        }
        CHECK_MESSAGE(wrong == 0, wrong << " of 60 regions wrong");
      }
      hwy::SetSupportedTargetsForTest(0);
    }
    // The last axis of a 2-d input: 3 rows, each walked from the counts' start.
    const int64_t w = 4001;
    const Shape row_counts(counts.begin(), counts.begin() + w);
    Shape out_shape;
    const std::vector<unsigned char> want2 = ref::repeat(src.data(), {3, w}, {}, isz, row_counts, 1, &out_shape);
    const tessera::Plan rows = tessera::Plan::repeat({3, w}, {}, isz, row_counts, 1);
    CHECK((rows.describe().find("every 16th prefix sum") != std::string::npos) == vectors);
    const tessera::Array got2 = rows.execute(src.data());
    REQUIRE(static_cast<std::size_t>(got2.nbytes()) == want2.size());
    CHECK(std::memcmp(got2.data(), want2.data(), want2.size()) == 0);
    // One count past the walk's most: the whole prefix sums, and the same output.
    Shape over = counts;
    over[7777] = most + 1;
    const std::vector<unsigned char> want3 = ref::repeat(src.data(), {n}, {}, isz, over, -1, &out_shape);
    const tessera::Plan whole = tessera::Plan::repeat({n}, {}, isz, over, std::nullopt);
    CHECK(whole.describe().find("every 16th prefix sum") == std::string::npos);
    const tessera::Array got3 = whole.execute(src.data());
    CHECK(std::memcmp(got3.data(), want3.data(), want3.size()) == 0);
  }
}

TEST_CASE("repeat of a 0-d input along axis 0 or -1 is numpy's: its one element repeated") {
  const double x = 2.5;
  for (int axis : {0, -1}) {
    const tessera::Array a = tessera::repeat(&x, {}, {}, sizeof x, 3, axis);
    REQUIRE(a.shape() == tessera::Dims({3}));
    for (int i = 0; i < 3; ++i) CHECK(a.data_as<double>()[i] == 2.5);
  }
  CHECK_THROWS_AS(tessera::repeat_shape({}, 3, 1), tessera::InvalidArgument);
}

TEST_CASE("Plan::execute(src) allocates the output, for every operation, fresh pages included") {
  std::vector<float> row(4099);
  for (std::size_t i = 0; i < row.size(); ++i) row[i] = static_cast<float>(i);
  // 4099 x 2053 floats: 33.7 MiB, a fresh huge-page mapping (or a kept block) from the allocator.
  const tessera::Plan plan = tessera::Plan::broadcast_to({1, 4099}, {}, 4, {2053, 4099});
  for (int round = 0; round < 2; ++round) {  // a fresh block, then the block it freed (kept)
    std::optional<test::HoldKeptBlocks> hold;
    if (round == 0) hold.emplace(plan.nbytes());
    test::AllocSpy spy;
    const tessera::Array out = plan.execute(row.data());
    CHECK(spy.seen().large == (round == 0 ? 1u : 0u));
    hold.reset();
    REQUIRE(out.shape() == plan.shape());
    REQUIRE(out.nbytes() == plan.nbytes());
    const float* v = out.data_as<float>();
    int64_t differing = 0;  // every row, every byte
    for (int64_t r = 0; r < 2053; ++r)
      differing += std::memcmp(v + r * 4099, row.data(), row.size() * sizeof(float)) != 0;
    CHECK(differing == 0);
  }
  const std::vector<int64_t> counts = {3, 0, 1};
  const tessera::Array r = tessera::Plan::repeat({3}, {}, 4, counts, 0).execute(row.data());
  REQUIRE(r.shape() == tessera::Dims({4}));
  CHECK(r.data_as<float>()[2] == 0.0f);
  CHECK(r.data_as<float>()[3] == 2.0f);
  CHECK_THROWS_AS(plan.execute(nullptr), tessera::InvalidArgument);
}

TEST_CASE("describe() names the operation, its arguments and the path") {
  const tessera::Plan b = tessera::Plan::broadcast_to({1, 4096}, {}, 4, {4096, 4096});
  CHECK(b.describe().rfind("broadcast_to plan: input (1, 4096)", 0) == 0);
  CHECK(b.describe().find("shape (4096, 4096)") != std::string::npos);
  const std::vector<int64_t> counts = {0, 1, 2, 3};
  const tessera::Plan r = tessera::Plan::repeat({4, 5}, {}, 4, counts, 0);
  CHECK(r.describe().find("4 per-element repeats (total 6) along axis 0") != std::string::npos);
  CHECK(r.describe().find("segments of the counts") != std::string::npos);
  // The one-byte counts stay where the segments kernel walks them (one axis, each count one
  // 16-byte store): not for a count past 16 / itemsize, nor for the flattened axes of a 2-d input.
  const bool vectors = std::string(tessera::active_target()) != "SCALAR";
  const std::vector<int64_t> up_to_4 = {4, 0, 1, 3, 2, 4}, up_to_5 = {4, 0, 5, 3, 2, 4};
  // They are compact then (every 16th prefix sum kept): the walk reads no other.
  CHECK((tessera::Plan::repeat({6}, {}, 4, up_to_4, 0).describe().find("(one-byte counts, every 16th prefix sum)") !=
         std::string::npos) == vectors);
  CHECK(tessera::Plan::repeat({6}, {}, 4, up_to_5, 0).describe().find("one-byte") == std::string::npos);
  CHECK((tessera::Plan::repeat({6}, {}, 2, up_to_5, 0).describe().find("(one-byte counts, every 16th prefix sum)") !=
         std::string::npos) == vectors);
  CHECK(tessera::Plan::repeat({2, 3}, {{4, 12}}, 4, up_to_4, std::nullopt).describe().find("one-byte") == std::string::npos);
  const tessera::Plan r2 = tessera::Plan::repeat({1000}, {}, 4, 2, std::nullopt);
  CHECK(r2.describe().find("repeats 2 of the flattened input") != std::string::npos);
  CHECK(r2.describe().find(std::string("[") + r2.kernel_path() + "]") != std::string::npos);
  MESSAGE(b.describe() << r.describe() << r2.describe()
                       << tessera::Plan::repeat({4096, 4096}, {}, 4, 2, -1).describe());
}
