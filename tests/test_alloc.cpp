// Allocating calls of 32 MiB or more (api.cpp allocate_output / free_output): 2 MiB aligned,
// written with ordinary stores when fresh (the automatic -> never re-plan) and with the plan's own
// stores when a block kept by tessera_free is reused — each kernel family compared byte for byte
// with the reference, through the C++ and the C API, fresh and reused.
#include <doctest/doctest.h>

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

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

}  // namespace

TEST_CASE("allocating calls of 32 MiB or more: each kernel family, fresh and reused, byte for byte") {
  for (const LargeCase& c : large_cases()) {
    CAPTURE(c.family);
    const Input in = make_input(c);
    const std::size_t itemsize = itemsize_of(c);
    const std::vector<unsigned char> expected = ref::tile(in.data.data(), in.shape, in.strides, itemsize, c.reps);
    REQUIRE(expected.size() == 35651584);
    const tessera::Plan plan(in.shape, in.strides, itemsize, c.reps);
    REQUIRE(std::string(plan.kernel_path()).rfind(c.family, 0) == 0);

    // C++: a fresh block, then the same block again once the first Array released it.
    void* first = nullptr;
    {
      const tessera::Array a = tessera::tile(in.data.data(), in.shape, in.strides, itemsize, c.reps);
      REQUIRE(a.nbytes() == expected.size());
      CHECK(huge_aligned(a.data()));
      CHECK(std::memcmp(a.data(), expected.data(), expected.size()) == 0);
      first = const_cast<void*>(a.data());
    }
    {
      const tessera::Array b = tessera::tile(in.data.data(), in.shape, in.strides, itemsize, c.reps);
      CHECK(b.data() == first);  // the kept block, written with the plan's (streaming) stores
      CHECK(std::memcmp(b.data(), expected.data(), expected.size()) == 0);
    }

    // C: the same through tessera_tile_alloc_ex / tessera_free, with every nontemporal option.
    for (int nt : {TESSERA_NONTEMPORAL_AUTO, TESSERA_NONTEMPORAL_ALWAYS, TESSERA_NONTEMPORAL_NEVER}) {
      CAPTURE(nt);
      tessera_options opt;
      tessera_options_init(&opt);
      opt.nontemporal = nt;
      void* data = nullptr;
      std::size_t bytes = 0;
      int out_ndim = 0;
      int64_t out_shape[TESSERA_MAX_NDIM];
      REQUIRE(tessera_tile_alloc_ex(in.data.data(), static_cast<int>(in.shape.size()), in.shape.data(),
                                    in.strides.data(), itemsize, static_cast<int>(c.reps.size()), c.reps.data(), &opt,
                                    &data, &bytes, &out_ndim, out_shape) == TESSERA_OK);
      REQUIRE(bytes == expected.size());
      CHECK(huge_aligned(data));
      CHECK(std::memcmp(data, expected.data(), bytes) == 0);
      tessera_free(data);
    }
  }
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
