// DLPack (<tessera/tessera_dlpack.h>): tile DLTensors of several dtypes (bool, int8, uint16,
// float32, float64, bfloat16, complex64, complex128, float32x4, a 24-bit type) and layouts (NULL
// strides, explicit compact strides, transposed, reversed, broadcast, stepped sub-views with a
// byte_offset) against the reference; dst with NULL or compact strides (any stride on an extent-1
// axis); and every rejection — device, dtype, shape, strides, NULL pointers — with dst untouched.
// Plus the C99 translation unit c_dlpack_check.c, which uses the header as a C program would.
#include <doctest/doctest.h>

#include <tessera/tessera_dlpack.h>

#include <cstring>
#include <string>
#include <vector>

#include "reference.hpp"
#include "util.hpp"

extern "C" int c_dlpack_check(void);  // tests/c_dlpack_check.c: 0 on success, else the failing step

namespace {

using test::Shape;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

DLDataType dtype(uint8_t code, uint8_t bits, uint16_t lanes = 1) {
  DLDataType t;
  t.code = code;
  t.bits = bits;
  t.lanes = lanes;
  return t;
}

constexpr uint8_t kBool = 6;  // kDLBool (DLPack 0.8 and later; Debian ships 0.6)

// A view of `shape` with `layout` whose strides are whole elements (DLPack's unit): laid out as
// test::make_view lays out 1-byte elements, then every byte widened to `itemsize` bytes.
test::View element_view(test::Rng& rng, const Shape& shape, std::size_t itemsize, unsigned layout, uint64_t seed) {
  test::View v = test::make_view(rng, shape, 1, layout, seed);
  v.storage.assign(v.storage.size() * itemsize, 0);
  test::fill_pattern(v.storage.data(), v.storage.size(), seed);
  v.origin *= itemsize;
  for (auto& s : v.strides) s *= static_cast<int64_t>(itemsize);
  v.itemsize = itemsize;
  return v;
}

// A DLTensor over `view` (byte strides that are multiples of the itemsize), with its data pointer
// `data_shift` bytes before element 0 and byte_offset making up for it. `shape` and `strides` must
// outlive the tensor.
DLTensor tensor_of(const test::View& view, DLDataType t, Shape& shape, Shape& elem_strides, bool null_strides,
                   std::size_t data_shift) {
  shape = view.shape;
  elem_strides.clear();
  for (int64_t s : view.strides) elem_strides.push_back(s / static_cast<int64_t>(view.itemsize));
  DLTensor d{};
  d.data = const_cast<unsigned char*>(view.data()) - data_shift;
  d.byte_offset = data_shift;
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int>(shape.size());
  d.dtype = t;
  d.shape = shape.data();
  d.strides = null_strides ? nullptr : elem_strides.data();
  return d;
}

}  // namespace

TEST_CASE("DLPack: several dtypes and layouts against the reference") {
  struct Type {
    const char* name;
    DLDataType t;
  };
  const Type types[] = {
      {"bool", dtype(kBool, 8)},           {"int8", dtype(kDLInt, 8)},
      {"uint16", dtype(kDLUInt, 16)},      {"float32", dtype(kDLFloat, 32)},
      {"float64", dtype(kDLFloat, 64)},    {"bfloat16", dtype(kDLBfloat, 16)},
      {"complex64", dtype(kDLComplex, 64)}, {"complex128", dtype(kDLComplex, 128)},
      {"float32x4", dtype(kDLFloat, 32, 4)}, {"uint24 (3 bytes)", dtype(kDLUInt, 24)},
  };
  const unsigned layouts[] = {test::kContiguous, test::kPermuted, test::kReversed, test::kBroadcast, test::kSubView,
                              test::kAllLayouts};
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{}, {}}, {{}, {3}}, {{5}, {3}}, {{3, 4}, {2, 3}}, {{2, 1, 3}, {3, 4, 2}}, {{4, 3}, {1, 5, 1, 2}}, {{2, 3}, {0, 2}},
  };
  test::Rng rng(6301);
  for (const Type& ty : types) {
    const std::size_t itemsize = std::size_t{ty.t.bits} * ty.t.lanes / 8;
    for (unsigned layout : layouts)
      for (const auto& [shape, reps] : cases) {
        CAPTURE(std::string(ty.name));
        CAPTURE(test::layout_name(layout));
        CAPTURE(test::to_string(shape));
        CAPTURE(test::to_string(reps));
        const test::View view = element_view(rng, shape, itemsize, layout, layout * 7 + itemsize);
        const bool null_strides = layout == test::kContiguous && rng.coin();
        Shape src_shape, src_strides;
        const DLTensor src = tensor_of(view, ty.t, src_shape, src_strides, null_strides, rng.uniform(0, 40));

        int out_ndim = -1;
        int64_t out_shape[TESSERA_MAX_NDIM];
        REQUIRE(tessera_tile_dlpack_shape(&src, static_cast<int>(reps.size()), reps.data(), &out_ndim, out_shape) ==
                TESSERA_OK);
        const Shape out(out_shape, out_shape + out_ndim);
        CHECK(out == ref::tile_shape(shape, reps));
        const auto expected = ref::tile(view.data(), view.shape, view.strides, itemsize, reps);

        test::GuardedBuffer buf(expected.size() + 64);
        buf.prefill_pattern(3);
        auto before = buf.bytes();
        const std::size_t dst_shift = static_cast<std::size_t>(rng.uniform(0, 64));
        Shape dst_strides = ref::contiguous_strides(out, 1);  // elements: contiguous_strides with itemsize 1
        if (!dst_strides.empty() && rng.coin()) dst_strides[0] = out[0] == 1 ? 12345 : dst_strides[0];
        DLTensor dst{};
        dst.data = buf.data();
        dst.byte_offset = dst_shift;
        dst.device = {kDLCPU, 0};
        dst.ndim = out_ndim;
        dst.dtype = ty.t;
        dst.shape = out_shape;
        dst.strides = rng.coin() ? nullptr : dst_strides.data();
        REQUIRE_MESSAGE(tessera_tile_dlpack(&src, static_cast<int>(reps.size()), reps.data(), &dst) == TESSERA_OK,
                        tessera_last_error());
        if (!expected.empty()) std::memcpy(before.data() + dst_shift, expected.data(), expected.size());
        CHECK(buf.bytes() == before);  // the output at the offset, nothing else
        CHECK(buf.check_guards() == "");
      }
  }
}

TEST_CASE("DLPack: rejections name the problem and leave dst untouched") {
  const float a[2][3] = {{1, 2, 3}, {4, 5, 6}};
  int64_t src_shape[2] = {2, 3};
  const int64_t reps[2] = {2, 2};
  int64_t out_shape[2] = {4, 6};
  int64_t compact[2] = {6, 1};
  float out[24];

  auto src_tensor = [&] {
    DLTensor t{};
    t.data = const_cast<float*>(&a[0][0]);
    t.device = {kDLCPU, 0};
    t.ndim = 2;
    t.dtype = dtype(kDLFloat, 32);
    t.shape = src_shape;
    return t;
  };
  auto dst_tensor = [&] {
    DLTensor t{};
    t.data = out;
    t.device = {kDLCPU, 0};
    t.ndim = 2;
    t.dtype = dtype(kDLFloat, 32);
    t.shape = out_shape;
    t.strides = compact;
    return t;
  };

  struct Bad {
    const char* name;
    void (*edit)(DLTensor& src, DLTensor& dst);
    const char* message;
  };
  static int64_t wrong_shape[2] = {4, 5};
  static int64_t wrong_strides[2] = {1, 4};
  static int64_t padded_strides[2] = {8, 1};
  static int64_t shape3[3] = {1, 4, 6};
  const Bad bad[] = {
      {"src on CUDA", [](DLTensor& s, DLTensor&) { s.device = {kDLCUDA, 1}; },
       "src is on device CUDA (device_type 2, device_id 1); tessera_tile_dlpack reads and writes CPU memory only"},
      {"dst on ROCM", [](DLTensor&, DLTensor& d) { d.device = {kDLROCM, 0}; }, "dst is on device ROCM (device_type 10"},
      {"dst on CUDAHost", [](DLTensor&, DLTensor& d) { d.device = {kDLCUDAHost, 0}; }, "dst is on device CUDAHost"},
      {"unknown device",  // stored as a C caller would: 99 is no value of this header's DLDeviceType
       [](DLTensor& s, DLTensor&) { const int32_t v = 99; std::memcpy(&s.device.device_type, &v, sizeof v); },
       "src is on device unknown (device_type 99"},
      {"4-bit dtype", [](DLTensor& s, DLTensor& d) { s.dtype = d.dtype = dtype(kDLInt, 4); },
       "src dtype int4 has 4 bits per element, not a positive whole number of bytes"},
      {"zero lanes", [](DLTensor& s, DLTensor& d) { s.dtype = d.dtype = dtype(kDLFloat, 32, 0); },
       "src dtype float32x0 has 0 bits per element"},
      {"dst dtype differs", [](DLTensor&, DLTensor& d) { d.dtype = dtype(kDLInt, 32); },
       "dst dtype int32 differs from src dtype float32"},
      {"dst lanes differ", [](DLTensor&, DLTensor& d) { d.dtype = dtype(kDLFloat, 16, 2); },
       "dst dtype float16x2 differs from src dtype float32"},
      {"dst shape differs", [](DLTensor&, DLTensor& d) { d.shape = wrong_shape; },
       "dst has shape (4, 5) but tile(src, reps) has shape (4, 6)"},
      {"dst ndim differs", [](DLTensor&, DLTensor& d) { d.ndim = 3; d.shape = shape3; d.strides = nullptr; },
       "dst has shape (1, 4, 6) but tile(src, reps) has shape (4, 6)"},
      {"dst transposed", [](DLTensor&, DLTensor& d) { d.strides = wrong_strides; },
       "dst is not C-contiguous: strides (1, 4) (elements) but shape (4, 6) needs (6, 1) or NULL"},
      {"dst padded rows", [](DLTensor&, DLTensor& d) { d.strides = padded_strides; }, "dst is not C-contiguous"},
      {"src ndim too large", [](DLTensor& s, DLTensor&) { s.ndim = 65; }, "src->ndim = 65 is out of range [0, 64]"},
      {"src shape NULL", [](DLTensor& s, DLTensor&) { s.shape = nullptr; }, "src->shape is NULL but src->ndim = 2"},
      {"dst shape NULL", [](DLTensor&, DLTensor& d) { d.shape = nullptr; }, "dst->shape is NULL but dst->ndim = 2"},
      {"src data NULL", [](DLTensor& s, DLTensor&) { s.data = nullptr; }, "src is null but the input has 6 elements"},
      {"dst data NULL", [](DLTensor&, DLTensor& d) { d.data = nullptr; }, "dst is null but the output has 96 bytes"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.name);
    DLTensor s = src_tensor(), d = dst_tensor();
    b.edit(s, d);
    for (float& v : out) v = -1;
    CHECK(tessera_tile_dlpack(&s, 2, reps, &d) == TESSERA_INVALID_ARGUMENT);
    CHECK_MESSAGE(contains(tessera_last_error(), b.message), tessera_last_error());
    for (float v : out) REQUIRE(v == -1);
  }
  // NULL tensors and a negative rep.
  DLTensor s = src_tensor(), d = dst_tensor();
  CHECK(tessera_tile_dlpack(nullptr, 2, reps, &d) == TESSERA_INVALID_ARGUMENT);
  CHECK(contains(tessera_last_error(), "src is NULL"));
  CHECK(tessera_tile_dlpack(&s, 2, reps, nullptr) == TESSERA_INVALID_ARGUMENT);
  CHECK(contains(tessera_last_error(), "dst is NULL"));
  const int64_t negative[2] = {2, -2};
  CHECK(tessera_tile_dlpack(&s, 2, negative, &d) == TESSERA_INVALID_ARGUMENT);
  CHECK(contains(tessera_last_error(), "reps[1] = -2 is negative"));
  int n = 0;
  int64_t shape_out[TESSERA_MAX_NDIM];
  CHECK(tessera_tile_dlpack_shape(nullptr, 2, reps, &n, shape_out) == TESSERA_INVALID_ARGUMENT);
  CHECK(tessera_tile_dlpack_shape(&s, 2, reps, nullptr, shape_out) == TESSERA_INVALID_ARGUMENT);
  // A stride overflow converting elements to bytes.
  int64_t huge_strides[2] = {INT64_MAX / 2, 1};
  s.strides = huge_strides;
  CHECK(tessera_tile_dlpack(&s, 2, reps, &d) == TESSERA_OVERFLOW);
  CHECK(contains(tessera_last_error(), "src->strides[0]"));
  for (float v : out) CHECK(v == -1);
  // And the valid call, for contrast.
  s = src_tensor();
  REQUIRE(tessera_tile_dlpack(&s, 2, reps, &d) == TESSERA_OK);
  CHECK(out[7] == 5);
  CHECK(out[23] == 6);
}

TEST_CASE("DLPack: an empty output accepts any dst strides and a NULL data pointer") {
  const int32_t a[3] = {1, 2, 3};
  int64_t shape[1] = {3};
  const int64_t reps[2] = {0, 2};
  int64_t out_shape[2] = {0, 6};
  int64_t strides[2] = {7, 3};
  DLTensor s{}, d{};
  s.data = const_cast<int32_t*>(a);
  s.device = d.device = {kDLCPU, 0};
  s.ndim = 1;
  s.shape = shape;
  s.dtype = d.dtype = dtype(kDLInt, 32);
  d.ndim = 2;
  d.shape = out_shape;
  d.strides = strides;
  CHECK(tessera_tile_dlpack(&s, 2, reps, &d) == TESSERA_OK);
}

TEST_CASE("DLPack: the C99 translation unit") { CHECK(c_dlpack_check() == 0); }
