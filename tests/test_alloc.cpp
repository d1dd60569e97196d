// Allocating calls of 32 MiB or more (api.cpp allocate_output / free_output): 2 MiB aligned,
// written with ordinary stores when fresh (the automatic -> never re-plan) and with the plan's own
// stores when a block kept by tessera_free is reused — each kernel family (tile's copy, pattern,
// fill and gather; repeat by a scalar and by per-element counts; the reductions) compared byte for
// byte with the reference, through the C++ and the C API, fresh and reused. Which one a call got
// is asserted, not assumed: the allocator keeps freed blocks (lib/allocator.cpp: any kept block
// the output fills to 4/5 is reused), so before each "fresh" call the blocks it could reuse are
// taken by holders (alloc_spy.hpp HoldKeptBlocks), and alloc_spy counts the aligned_alloc of 32 MiB or more each call
// makes: one for a fresh block, none for a reused one.
#include <doctest/doctest.h>

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "alloc_spy.hpp"
#include "reference.hpp"

namespace {

using ref::Shape;

struct LargeCase {
  const char* family;  // the kernel family the plan takes (its path starts with it)
  Shape parent;        // the input is `parent`, filled with a byte pattern, ...
  bool transposed;     // ... or its transpose (a strided input: the gather)
  Shape reps;
};

// Each output is 34 MiB (35,651,584 bytes): past kHugeMinBytes (32 MiB).
const std::vector<LargeCase>& large_cases() {
  static const std::vector<LargeCase> cases = {
      {"copy", {35651584}, false, {1}},
      {"pattern", {4352, 4}, false, {1, 512}},
      {"fill", {557056, 1}, false, {1, 16}},
      {"gather", {2176, 1024}, true, {2, 2}},
  };
  return cases;
}

struct Input {
  std::vector<float> data;
  Shape shape, strides;  // strides in bytes
};

// The copy case tiles bytes; the others 4-byte elements.
std::size_t itemsize_of(const LargeCase& c) { return c.family == std::string("copy") ? 1 : sizeof(float); }

Input make_input(const LargeCase& c) {
  Input in;
  int64_t n = 1;
  for (int64_t e : c.parent) n *= e;
  const std::size_t itemsize = itemsize_of(c);
  in.data.resize(static_cast<std::size_t>(n * static_cast<int64_t>(itemsize) + 3) / 4);
  auto* bytes = reinterpret_cast<unsigned char*>(in.data.data());
  for (std::size_t i = 0; i < in.data.size() * 4; ++i) bytes[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
  in.shape = c.parent;
  in.strides = ref::contiguous_strides(c.parent, itemsize);
  if (c.transposed) {
    in.shape = {c.parent[1], c.parent[0]};
    in.strides = {in.strides[1], in.strides[0]};
  }
  return in;
}

bool huge_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % (std::uintptr_t{2} << 20) == 0; }

// 32-bit floats 0, 1, 2, ... - 3 (mod 7): small integers, every sum of the reductions exact.
std::vector<float> small_floats(int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i % 7 - 3);
  return v;
}

// An allocating call of 34 MiB and the bytes it must produce.
struct AllocCase {
  std::string name;
  std::string path;  // the plan's kernel path starts with this
  std::function<tessera::Plan()> plan;
  std::function<tessera::Array()> call;
  std::vector<unsigned char> expected;
};

// Each once fresh and once reused (the block the fresh one freed), byte for byte.
void check_fresh_and_reused(const AllocCase& c) {
  CAPTURE(c.name);
  REQUIRE(c.expected.size() == 35651584);
  const tessera::Plan plan = c.plan();
  CHECK_MESSAGE(std::string(plan.kernel_path()).rfind(c.path, 0) == 0, "path " << plan.kernel_path());
  void* first = nullptr;
  {
    std::optional<tessera::Array> a;
    {
      const test::HoldKeptBlocks hold(c.expected.size());
      test::AllocSpy spy;
      a.emplace(c.call());
      CHECK_MESSAGE(spy.seen().large == 1, "not a fresh block");
    }
    REQUIRE(a->nbytes() == c.expected.size());
    CHECK(huge_aligned(a->data()));
    CHECK(std::memcmp(a->data(), c.expected.data(), c.expected.size()) == 0);
    first = const_cast<void*>(a->data());
  }
  test::AllocSpy spy;
  const tessera::Array b = c.call();
  CHECK_MESSAGE(spy.seen().large == 0, "not a kept block");
  CHECK(b.data() == first);  // the kept block, written with the plan's own (streaming) stores
  CHECK(std::memcmp(b.data(), c.expected.data(), c.expected.size()) == 0);
}

}  // namespace

TEST_CASE("allocating calls of 32 MiB or more: each tile kernel family, fresh and reused, byte for byte") {
  for (const LargeCase& c : large_cases()) {
    CAPTURE(c.family);
    const Input in = make_input(c);
    const std::size_t itemsize = itemsize_of(c);
    AllocCase ac{c.family, c.family, [&] { return tessera::Plan(in.shape, in.strides, itemsize, c.reps); },
                 [&] { return tessera::tile(in.data.data(), in.shape, in.strides, itemsize, c.reps); },
                 ref::tile(in.data.data(), in.shape, in.strides, itemsize, c.reps)};
    check_fresh_and_reused(ac);

    // C: the same through tessera_tile_alloc_ex / tessera_free, with every nontemporal option,
    // fresh (the kept blocks held) and reused.
    for (int nt : {TESSERA_NONTEMPORAL_AUTO, TESSERA_NONTEMPORAL_ALWAYS, TESSERA_NONTEMPORAL_NEVER}) {
      for (bool fresh : {true, false}) {
        CAPTURE(nt);
        CAPTURE(fresh);
        tessera_options opt;
        tessera_options_init(&opt);
        opt.nontemporal = nt;
        void* data = nullptr;
        std::size_t bytes = 0;
        int out_ndim = 0;
        int64_t out_shape[TESSERA_MAX_NDIM];
        std::optional<test::HoldKeptBlocks> hold;
        if (fresh) hold.emplace(ac.expected.size());
        test::AllocSpy spy;
        REQUIRE(tessera_tile_alloc_ex(in.data.data(), static_cast<int>(in.shape.size()), in.shape.data(),
                                      in.strides.data(), itemsize, static_cast<int>(c.reps.size()), c.reps.data(),
                                      &opt, &data, &bytes, &out_ndim, out_shape) == TESSERA_OK);
        CHECK(spy.seen().large == (fresh ? 1u : 0u));
        hold.reset();
        REQUIRE(bytes == ac.expected.size());
        CHECK(huge_aligned(data));
        CHECK(std::memcmp(data, ac.expected.data(), bytes) == 0);
        tessera_free(data);
      }
    }
  }
}

TEST_CASE("allocating calls of 32 MiB or more: repeat, per-element counts and the reductions, fresh and reused") {
  // repeat by 2 along the last axis (4352 x 1024 floats -> 4352 x 2048: 34 MiB).
  const std::vector<float> x = small_floats(4352 * 1024);
  const ref::Shape xs = {4352, 1024};
  const ref::Shape xst = ref::contiguous_strides(xs, 4);
  ref::Shape rshape;
  check_fresh_and_reused({"repeat by 2", "repeat", [&] { return tessera::Plan::repeat(xs, {}, 4, 2, 1); },
                          [&] { return tessera::repeat(x.data(), xs, {}, 4, 2, 1); },
                          ref::repeat(x.data(), xs, xst, 4, {2}, 1, &rshape)});

  // Per-element counts along the last axis: 1 and 3 alternately (1024 x 4352 -> 1024 x 8704).
  const ref::Shape ys = {1024, 4352};
  std::vector<int64_t> counts(4352);
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = i % 2 == 0 ? 1 : 3;
  check_fresh_and_reused({"repeat by counts", "segments", [&] { return tessera::Plan::repeat(ys, {}, 4, counts, 1); },
                          [&] { return tessera::repeat(x.data(), ys, {}, 4, counts, 1); },
                          ref::repeat(x.data(), ys, ref::contiguous_strides(ys, 4), 4, counts, 1, &rshape)});

  // The reductions (the allocator does not re-plan them; their outputs come from the same
  // blocks): sum_to_shape of two rows of 8912896 floats to one (lanes), and the gradient of a
  // repeat by 2 along the last axis (interleaved pairs): each 34 MiB.
  const int64_t n = 8912896;
  const std::vector<float> g = small_floats(2 * n);
  std::vector<unsigned char> rows(static_cast<std::size_t>(n) * 4), pairs(static_cast<std::size_t>(n) * 4);
  for (int64_t i = 0; i < n; ++i) {
    const float r = g[static_cast<std::size_t>(i)] + g[static_cast<std::size_t>(n + i)];
    const float p = g[static_cast<std::size_t>(2 * i)] + g[static_cast<std::size_t>(2 * i + 1)];
    std::memcpy(rows.data() + i * 4, &r, 4);
    std::memcpy(pairs.data() + i * 4, &p, 4);
  }
  using tessera::DType;
  check_fresh_and_reused({"sum_to_shape", "reduce.lanes",
                          [&] { return tessera::Plan::sum_to_shape({2, n}, {}, DType::float32, {1, n}); },
                          [&] { return tessera::sum_to_shape(g.data(), {2, n}, {}, DType::float32, {1, n}); },
                          std::move(rows)});
  check_fresh_and_reused(
      {"repeat_backward by 2", "reduce.interleaved",
       [&] { return tessera::Plan::repeat_backward({4352, 4096}, {}, DType::float32, {4352, 2048}, 2, 1); },
       [&] { return tessera::repeat_backward(g.data(), {4352, 4096}, {}, DType::float32, {4352, 2048}, 2, 1); },
       std::move(pairs)});
}

TEST_CASE("a kept block is reused only by an output that fills at least 4/5 of it") {
  const unsigned char byte = 7;
  const int64_t shape[1] = {1};
  auto alloc = [&](int64_t n) {
    void* data = nullptr;
    std::size_t bytes = 0;
    int out_ndim = 0;
    int64_t out_shape[TESSERA_MAX_NDIM];
    REQUIRE(tessera_tile_alloc(&byte, 1, shape, nullptr, 1, 1, &n, &data, &bytes, &out_ndim, out_shape) ==
            TESSERA_OK);
    REQUIRE(bytes == static_cast<std::size_t>(n));
    const auto* p = static_cast<const unsigned char*>(data);
    CHECK(p[0] == byte);
    CHECK(p[n / 2] == byte);
    CHECK(p[n - 1] == byte);
    return data;
  };
  const int64_t mib = int64_t{1} << 20;
  void* big = alloc(60 * mib);
  tessera_free(big);
  void* small = alloc(40 * mib);  // 40/60 < 4/5: a block of its own (the 60 MiB one stays mapped)
  CHECK(small != big);
  void* again = alloc(50 * mib);  // 50/60 >= 4/5: the kept block
  CHECK(again == big);
  tessera_free(small);
  tessera_free(again);
}
