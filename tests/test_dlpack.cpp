// DLPack (<tessera/tessera_dlpack.h>): tile DLTensors of several dtypes (bool, int8, uint16,
// float32, float64, bfloat16, complex64, complex128, float32x4, a 24-bit type) and layouts (NULL
// strides, explicit compact strides, transposed, reversed, broadcast, stepped sub-views with a
// byte_offset) against the reference; dst with NULL or compact strides (any stride on an extent-1
// axis); and every rejection — device, dtype, shape, strides, NULL pointers — with dst untouched.
// The same for broadcast_to, expand and repeat (tessera_broadcast_to_dlpack, tessera_expand_dlpack,
// tessera_repeat_dlpack) against small references written here from numpy's definitions, and each
// of their errors, in the documented order, with dst untouched.
// The reductions (tessera_tile_backward_dlpack, tessera_sum_to_shape_dlpack,
// tessera_repeat_backward_dlpack): every dtype they add, the same layouts, options (accumulate,
// max_threads), byte for byte against the C++ API's result for the same gradient (which
// test_reduce.cpp checks against exact sums); every rejection — dtypes they do not add, dtype
// mismatch, shapes, options, strides, NULL pointers — in the documented order, with the result
// untouched.
// Plus the C99 translation unit c_dlpack_check.c, which uses the header as a C program would.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>
#include <tessera/tessera_dlpack.h>

#include <cstring>
#include <functional>
#include <optional>
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

// References for the family, from numpy's definitions, element by element over byte strides.
// Calls f(index) for every index of `shape` in C order.
void each_index(const Shape& shape, const std::function<void(const Shape&)>& f) {
  for (int64_t e : shape)
    if (e == 0) return;
  Shape j(shape.size(), 0);
  for (;;) {
    f(j);
    std::size_t k = shape.size();
    while (k > 0 && ++j[k - 1] == shape[k - 1]) j[--k] = 0;
    if (k == 0) return;
  }
}

void append(std::vector<unsigned char>& out, const test::View& v, int64_t offset) {
  const unsigned char* e = v.data() + offset;
  out.insert(out.end(), e, e + v.itemsize);
}

// numpy.broadcast_to(v, target).copy(): out[j] = v[j's trailing axes, 0 where v's extent is 1].
std::vector<unsigned char> broadcast_reference(const test::View& v, const Shape& target) {
  std::vector<unsigned char> out;
  const std::size_t pad = target.size() - v.shape.size();
  each_index(target, [&](const Shape& j) {
    int64_t off = 0;
    for (std::size_t k = 0; k < v.shape.size(); ++k) off += (v.shape[k] == 1 ? 0 : j[pad + k]) * v.strides[k];
    append(out, v, off);
  });
  return out;
}

// The numpy broadcast of two shapes (ONNX Expand's output); std::nullopt if they do not broadcast.
std::optional<Shape> expand_reference_shape(const Shape& a, const Shape& b) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// numpy.repeat(v, counts, axis) (no axis: the flattened input in C order; a 0-d input along axis 0
// or -1 too); its shape in *shape.
std::vector<unsigned char> repeat_reference(const test::View& v, const Shape& counts, std::optional<int> axis,
                                            Shape* shape) {
  if (v.shape.empty()) axis = std::nullopt;
  const auto count_of = [&](std::size_t i) { return counts.size() == 1 ? counts[0] : counts[i]; };
  std::vector<int64_t> offsets;  // no axis: every element's offset in C order
  const auto offset_of = [&](const Shape& j) {
    int64_t off = 0;
    for (std::size_t k = 0; k < j.size(); ++k) off += j[k] * v.strides[k];
    return off;
  };
  std::vector<unsigned char> out;
  if (!axis) {
    each_index(v.shape, [&](const Shape& j) { offsets.push_back(offset_of(j)); });
    if (v.shape.empty()) offsets = {0};
    int64_t total = 0;
    for (std::size_t i = 0; i < offsets.size(); ++i)
      for (int64_t c = 0; c < count_of(i); ++c, ++total) append(out, v, offsets[i]);
    *shape = {total};
    return out;
  }
  const std::size_t a = static_cast<std::size_t>(*axis < 0 ? *axis + static_cast<int>(v.shape.size()) : *axis);
  std::vector<int64_t> source;  // output index along the axis -> source index
  for (int64_t i = 0; i < v.shape[a]; ++i)
    for (int64_t c = 0; c < count_of(static_cast<std::size_t>(i)); ++c) source.push_back(i);
  *shape = v.shape;
  (*shape)[a] = static_cast<int64_t>(source.size());
  each_index(*shape, [&](const Shape& j) {
    Shape i = j;
    i[a] = source[static_cast<std::size_t>(j[a])];
    append(out, v, offset_of(i));
  });
  return out;
}

// A dst tensor for an output of `out` shape in `buf` at `shift` bytes: NULL or compact strides
// (`strides` must outlive it; an extent-1 axis gets a stride nobody reads).
DLTensor dst_of(test::GuardedBuffer& buf, DLDataType t, Shape& out, Shape& strides, test::Rng& rng, std::size_t shift) {
  strides = ref::contiguous_strides(out, 1);
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i] == 1 && rng.coin()) strides[i] = 12345;
  DLTensor d{};
  d.data = buf.data();
  d.byte_offset = shift;
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int>(out.size());
  d.dtype = t;
  d.shape = out.data();
  d.strides = rng.coin() ? nullptr : strides.data();
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
      for (const auto& pair : cases) {  // clang 14 cannot capture a structured binding
        const Shape& shape = pair.first;
        const Shape& reps = pair.second;
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

TEST_CASE("DLPack: broadcast_to, expand and repeat against references") {
  struct Type {
    const char* name;
    DLDataType t;
  };
  const Type types[] = {
      {"int8", dtype(kDLInt, 8)},          {"uint16", dtype(kDLUInt, 16)},        {"uint24 (3 bytes)", dtype(kDLUInt, 24)},
      {"float32", dtype(kDLFloat, 32)},    {"float64", dtype(kDLFloat, 64)},      {"complex128", dtype(kDLComplex, 128)},
      {"float32x4", dtype(kDLFloat, 32, 4)}, {"bool", dtype(kBool, 8)},
  };
  const unsigned layouts[] = {test::kContiguous, test::kPermuted, test::kReversed, test::kBroadcast, test::kSubView,
                              test::kAllLayouts};
  const std::vector<std::pair<Shape, Shape>> broadcasts = {
      {{}, {}}, {{}, {3}}, {{1}, {5}}, {{3}, {2, 3}}, {{2, 1, 3}, {4, 2, 5, 3}}, {{1, 1}, {0, 3}}, {{4, 1}, {4, 70}},
      {{3, 2}, {3, 2}}, {{1, 4}, {2, 1, 3, 4}},
  };
  const std::vector<std::pair<Shape, Shape>> expands = {
      {{3, 1}, {2, 1, 4}}, {{2}, {}}, {{2, 3}, {3}}, {{4, 1}, {1, 5}}, {{}, {2, 2}}, {{0, 1}, {3}}, {{1, 1, 1}, {6, 1}},
      {{2, 3}, {1, 1, 1, 1}},
  };
  struct Rep {
    Shape shape;
    Shape counts;
    std::optional<int> axis;
  };
  const std::vector<Rep> repeats = {
      {{5}, {3}, std::nullopt},        {{2, 3}, {2}, 0},
      {{2, 3}, {1, 0, 2}, 1},          {{2, 3}, {1, 2, 0, 3, 1, 1}, std::nullopt},
      {{3, 2}, {4}, -1},               {{}, {3}, std::nullopt},
      {{2, 0}, {2}, 0},                {{3}, {0}, std::nullopt},
      {{2, 3, 2}, {0, 3, 1}, -2},      {{4, 2}, {1, 1, 1, 1}, 0},
      {{70}, {3}, 0},                  {{3, 33}, {9}, std::nullopt},
      {{2, 2}, {0, 0, 0, 0}, std::nullopt}, {{}, {3}, 0},
      {{}, {2}, -1},
  };
  test::Rng rng(7411);
  // Runs one call into a guarded dst of the reference's shape; the output lands at the offset,
  // nothing else changes.
  const auto run = [&](const std::vector<unsigned char>& expected, Shape out, DLDataType t,
                       const std::function<tessera_status(DLTensor&)>& call) {
    test::GuardedBuffer buf(expected.size() + 64);
    buf.prefill_pattern(11);
    auto before = buf.bytes();
    const std::size_t shift = static_cast<std::size_t>(rng.uniform(0, 64));
    Shape strides;
    DLTensor dst = dst_of(buf, t, out, strides, rng, shift);
    REQUIRE_MESSAGE(call(dst) == TESSERA_OK, tessera_last_error());
    if (!expected.empty()) std::memcpy(before.data() + shift, expected.data(), expected.size());
    CHECK(buf.bytes() == before);
    CHECK(buf.check_guards() == "");
  };
  for (const Type& ty : types) {
    const std::size_t itemsize = std::size_t{ty.t.bits} * ty.t.lanes / 8;
    for (unsigned layout : layouts) {
      CAPTURE(std::string(ty.name));
      CAPTURE(test::layout_name(layout));
      const auto make = [&](const Shape& shape, Shape& src_shape, Shape& src_strides, test::View& view) {
        view = element_view(rng, shape, itemsize, layout, layout * 5 + itemsize);
        const bool null_strides = layout == test::kContiguous && rng.coin();
        return tensor_of(view, ty.t, src_shape, src_strides, null_strides, rng.uniform(0, 40));
      };
      for (const auto& pair : broadcasts) {  // clang 14 cannot capture a structured binding
        const Shape& shape = pair.first;
        const Shape& target = pair.second;
        CAPTURE(test::to_string(shape));
        CAPTURE(test::to_string(target));
        test::View view;
        Shape src_shape, src_strides;
        const DLTensor src = make(shape, src_shape, src_strides, view);
        run(broadcast_reference(view, target), target, ty.t, [&](DLTensor& dst) {
          return tessera_broadcast_to_dlpack(&src, &dst);
        });
      }
      for (const auto& pair : expands) {  // clang 14 cannot capture a structured binding
        const Shape& shape = pair.first;
        const Shape& target = pair.second;
        CAPTURE(test::to_string(shape));
        CAPTURE(test::to_string(target));
        test::View view;
        Shape src_shape, src_strides;
        const DLTensor src = make(shape, src_shape, src_strides, view);
        const Shape out = *expand_reference_shape(shape, target);
        int out_ndim = -1;
        int64_t out_shape[TESSERA_MAX_NDIM];
        REQUIRE(tessera_expand_shape(src.ndim, src.shape, static_cast<int>(target.size()), target.data(), &out_ndim,
                                     out_shape) == TESSERA_OK);
        CHECK(Shape(out_shape, out_shape + out_ndim) == out);
        run(broadcast_reference(view, out), out, ty.t, [&](DLTensor& dst) {
          return tessera_expand_dlpack(&src, static_cast<int>(target.size()), target.data(), &dst);
        });
      }
      for (const Rep& r : repeats) {
        CAPTURE(test::to_string(r.shape));
        CAPTURE(test::to_string(r.counts));
        CAPTURE(r.axis.value_or(-99));
        test::View view;
        Shape src_shape, src_strides;
        const DLTensor src = make(r.shape, src_shape, src_strides, view);
        Shape out;
        const auto expected = repeat_reference(view, r.counts, r.axis, &out);
        const int axis = r.axis ? *r.axis : TESSERA_AXIS_NONE;
        int out_ndim = -1;
        int64_t out_shape[TESSERA_MAX_NDIM];
        REQUIRE(tessera_repeat_shape(src.ndim, src.shape, static_cast<int64_t>(r.counts.size()), r.counts.data(), axis,
                                     &out_ndim, out_shape) == TESSERA_OK);
        CHECK(Shape(out_shape, out_shape + out_ndim) == out);
        run(expected, out, ty.t, [&](DLTensor& dst) {
          return tessera_repeat_dlpack(&src, static_cast<int64_t>(r.counts.size()), r.counts.data(), axis, &dst);
        });
      }
    }
  }
}

TEST_CASE("DLPack: broadcast_to, expand and repeat reject every bad argument, in order, dst untouched") {
  const float a[2][3] = {{1, 2, 3}, {4, 5, 6}};
  struct Bad {
    const char* name;
    tessera_status status;
    const char* message;
    std::function<tessera_status(DLTensor& src, DLTensor& dst)> call;
  };
  // Every call starts from a valid C-contiguous float32 src of shape (2, 3) (or (2, 1), src21, over
  // the same data) and a dst of 96 bytes whose shape each case sets (on).
  static int64_t shape23[2] = {2, 3}, shape21[2] = {2, 1}, bshape[3] = {2, 2, 4}, eshape[2] = {2, 4};
  static int64_t rshape[2] = {4, 3}, rshape_cols[2] = {2, 6}, rflat[1] = {12}, wrong[2] = {4, 4};
  static int64_t bad_target[3] = {2, 4, 1}, shape65[65] = {}, neg_shape[3] = {2, -2, 4}, huge[3] = {int64_t{1} << 62, 2, 4};
  static int64_t transposed[2] = {1, 4}, bstrides_bad[3] = {8, 1, 2}, huge_strides[2] = {INT64_MAX / 2, 1};
  static const int64_t t24[2] = {2, 4}, t_neg[2] = {2, -4}, t_bad[2] = {3, 4}, t_many[65] = {};
  static const int64_t two[1] = {2}, counts3[3] = {1, 1, 2}, counts2[2] = {2, 2}, neg_count[2] = {1, -1};
  static const int64_t huge_counts[2] = {INT64_MAX, 1};
  const auto bc = [](DLTensor& s, DLTensor& d) { return tessera_broadcast_to_dlpack(&s, &d); };
  const auto ex = [](const int64_t* t, int n) {
    return [t, n](DLTensor& s, DLTensor& d) { return tessera_expand_dlpack(&s, n, t, &d); };
  };
  const auto rp = [](int64_t n, const int64_t* c, int axis) {
    return [n, c, axis](DLTensor& s, DLTensor& d) { return tessera_repeat_dlpack(&s, n, c, axis, &d); };
  };
  const auto on = [](int64_t* shape, int ndim, std::function<tessera_status(DLTensor&, DLTensor&)> call,
                     std::function<void(DLTensor&, DLTensor&)> edit = nullptr) {
    return [=](DLTensor& s, DLTensor& d) {
      d.shape = shape;
      d.ndim = ndim;
      if (edit) edit(s, d);
      return call(s, d);
    };
  };
  const auto src21 = [](DLTensor& s, DLTensor&) { s.shape = shape21; };
  const Bad bad[] = {
      // The checks every call shares: tensors, devices, dtypes, src's shape (each op once at least).
      {"broadcast_to: NULL src", TESSERA_INVALID_ARGUMENT, "src is NULL",
       [](DLTensor&, DLTensor& d) { return tessera_broadcast_to_dlpack(nullptr, &d); }},
      {"broadcast_to: NULL dst", TESSERA_INVALID_ARGUMENT, "dst is NULL",
       [](DLTensor& s, DLTensor&) { return tessera_broadcast_to_dlpack(&s, nullptr); }},
      {"expand: NULL src", TESSERA_INVALID_ARGUMENT, "src is NULL",
       [](DLTensor&, DLTensor& d) { return tessera_expand_dlpack(nullptr, 2, t24, &d); }},
      {"expand: NULL dst before a bad target", TESSERA_INVALID_ARGUMENT, "dst is NULL",
       [](DLTensor& s, DLTensor&) { return tessera_expand_dlpack(&s, 2, t_neg, nullptr); }},
      {"repeat: NULL src", TESSERA_INVALID_ARGUMENT, "src is NULL",
       [](DLTensor&, DLTensor& d) { return tessera_repeat_dlpack(nullptr, 1, two, 0, &d); }},
      {"repeat: NULL dst", TESSERA_INVALID_ARGUMENT, "dst is NULL",
       [](DLTensor& s, DLTensor&) { return tessera_repeat_dlpack(&s, 1, two, 0, nullptr); }},
      {"broadcast_to: src on CUDA", TESSERA_INVALID_ARGUMENT,
       "src is on device CUDA (device_type 2, device_id 3); tessera_broadcast_to_dlpack reads and writes CPU memory only",
       on(bshape, 3, bc, [](DLTensor& s, DLTensor&) { s.device = {kDLCUDA, 3}; })},
      {"expand: dst on ROCM", TESSERA_INVALID_ARGUMENT, "dst is on device ROCM (device_type 10, device_id 0); tessera_expand_dlpack",
       on(shape23, 2, ex(t24, 0), [](DLTensor&, DLTensor& d) { d.device = {kDLROCM, 0}; })},
      {"repeat: dst on CUDAHost", TESSERA_INVALID_ARGUMENT, "dst is on device CUDAHost (device_type 3, device_id 0); tessera_repeat_dlpack",
       on(rshape, 2, rp(1, two, 0), [](DLTensor&, DLTensor& d) { d.device = {kDLCUDAHost, 0}; })},
      {"repeat: unknown device", TESSERA_INVALID_ARGUMENT, "src is on device unknown (device_type 99",
       on(rshape, 2, rp(1, two, 0), [](DLTensor& s, DLTensor&) {
         const int32_t v = 99;
         std::memcpy(&s.device.device_type, &v, sizeof v);
       })},
      {"broadcast_to: 12-bit dtype", TESSERA_INVALID_ARGUMENT, "src dtype int12 has 12 bits per element",
       on(bshape, 3, bc, [](DLTensor& s, DLTensor& d) { s.dtype = d.dtype = dtype(kDLInt, 12); })},
      {"expand: zero lanes", TESSERA_INVALID_ARGUMENT, "src dtype float32x0 has 0 bits per element",
       on(shape23, 2, ex(t24, 0), [](DLTensor& s, DLTensor& d) { s.dtype = d.dtype = dtype(kDLFloat, 32, 0); })},
      {"repeat: dst dtype differs", TESSERA_INVALID_ARGUMENT, "dst dtype uint32 differs from src dtype float32",
       on(rshape, 2, rp(1, two, 0), [](DLTensor&, DLTensor& d) { d.dtype = dtype(kDLUInt, 32); })},
      {"broadcast_to: dst lanes differ", TESSERA_INVALID_ARGUMENT, "dst dtype float16x2 differs from src dtype float32",
       on(bshape, 3, bc, [](DLTensor&, DLTensor& d) { d.dtype = dtype(kDLFloat, 16, 2); })},
      {"expand: src ndim 65", TESSERA_INVALID_ARGUMENT, "src->ndim = 65 is out of range [0, 64]",
       on(shape23, 2, ex(t_neg, 2), [](DLTensor& s, DLTensor&) { s.ndim = 65; s.shape = shape65; })},
      {"repeat: src shape NULL", TESSERA_INVALID_ARGUMENT, "src->shape is NULL but src->ndim = 2",
       on(rshape, 2, rp(-1, two, 0), [](DLTensor& s, DLTensor&) { s.shape = nullptr; })},
      {"broadcast_to: src ndim negative", TESSERA_INVALID_ARGUMENT, "src->ndim = -1 is out of range",
       on(bshape, 3, bc, [](DLTensor& s, DLTensor&) { s.ndim = -1; })},

      // broadcast_to: dst's shape is the target.
      {"broadcast_to: dst ndim 65", TESSERA_INVALID_ARGUMENT, "dst->ndim = 65 is out of range [0, 64]",
       on(shape65, 65, bc, src21)},
      {"broadcast_to: dst shape NULL", TESSERA_INVALID_ARGUMENT, "dst->shape is NULL but dst->ndim = 3",
       on(nullptr, 3, bc, src21)},
      {"broadcast_to: dst has fewer axes", TESSERA_INVALID_ARGUMENT,
       "broadcast_to: the input has 2 axes but shape (12,) has 1", on(rflat, 1, bc, src21)},
      {"broadcast_to: axis does not broadcast", TESSERA_INVALID_ARGUMENT,
       "broadcast_to: input axis 0 has extent 2 but shape[1] = 4 (output axis 1", on(bad_target, 3, bc, src21)},
      {"broadcast_to: negative extent", TESSERA_INVALID_ARGUMENT, "broadcast_to: shape[1] = -2 is negative",
       on(neg_shape, 3, bc, src21)},
      {"broadcast_to: src stride overflow", TESSERA_OVERFLOW, "src->strides[0] = 4611686018427387903 elements of 4 bytes",
       on(bshape, 3, bc, [](DLTensor& s, DLTensor&) { s.shape = shape21; s.strides = huge_strides; })},
      {"broadcast_to: output count overflows", TESSERA_OVERFLOW, "output element count overflows int64",
       on(huge, 3, bc, src21)},
      {"broadcast_to: dst not C-contiguous", TESSERA_INVALID_ARGUMENT,
       "dst is not C-contiguous: strides (8, 1, 2) (elements) but shape (2, 2, 4) needs (8, 4, 1) or NULL",
       on(bshape, 3, bc, [](DLTensor& s, DLTensor& d) { s.shape = shape21; d.strides = bstrides_bad; })},
      {"broadcast_to: src data NULL", TESSERA_INVALID_ARGUMENT, "src is null but the input has 2 elements",
       on(bshape, 3, bc, [](DLTensor& s, DLTensor&) { s.shape = shape21; s.data = nullptr; })},
      {"broadcast_to: dst data NULL", TESSERA_INVALID_ARGUMENT, "dst is null but the output has 64 bytes",
       on(bshape, 3, bc, [](DLTensor& s, DLTensor& d) { s.shape = shape21; d.data = nullptr; })},

      // expand: target, then dst must have the expanded shape.
      {"expand: target_ndim 65", TESSERA_INVALID_ARGUMENT, "target_ndim = 65 is out of range [0, 64]",
       on(eshape, 2, ex(t_many, 65))},
      {"expand: target NULL", TESSERA_INVALID_ARGUMENT, "target is NULL but target_ndim = 2",
       on(eshape, 2, ex(nullptr, 2))},
      {"expand: negative target", TESSERA_INVALID_ARGUMENT, "expand: shape[1] = -4 is negative",
       on(eshape, 2, ex(t_neg, 2))},
      {"expand: target does not broadcast", TESSERA_INVALID_ARGUMENT,
       "expand: input axis 0 has extent 2 but shape[0] = 3", on(eshape, 2, ex(t_bad, 2))},
      {"expand: src stride overflow beats a bad target", TESSERA_OVERFLOW, "src->strides[0]",
       on(eshape, 2, ex(t_bad, 2), [](DLTensor& s, DLTensor&) { s.strides = huge_strides; })},
      {"expand: dst shape differs", TESSERA_INVALID_ARGUMENT,
       "dst has shape (4, 4) but expand(src, target) has shape (2, 4)",
       on(wrong, 2, ex(t24, 2), [](DLTensor& s, DLTensor&) { s.shape = shape21; })},
      {"expand: dst ndim differs", TESSERA_INVALID_ARGUMENT,
       "dst has shape (2, 2, 4) but expand(src, target) has shape (2, 4)",
       on(bshape, 3, ex(t24, 2), [](DLTensor& s, DLTensor&) { s.shape = shape21; })},
      {"expand: dst transposed", TESSERA_INVALID_ARGUMENT,
       "dst is not C-contiguous: strides (1, 4) (elements) but shape (2, 4) needs (4, 1) or NULL",
       on(eshape, 2, ex(t24, 2), [](DLTensor& s, DLTensor& d) { s.shape = shape21; d.strides = transposed; })},
      {"expand: dst data NULL", TESSERA_INVALID_ARGUMENT, "dst is null but the output has 32 bytes",
       on(eshape, 2, ex(t24, 2), [](DLTensor& s, DLTensor& d) { s.shape = shape21; d.data = nullptr; })},

      // repeat: nrepeats, repeats, then the planner's checks, then dst.
      {"repeat: negative nrepeats", TESSERA_INVALID_ARGUMENT, "nrepeats = -1 is negative", on(rshape, 2, rp(-1, two, 0))},
      {"repeat: repeats NULL", TESSERA_INVALID_ARGUMENT, "repeats is NULL but nrepeats = 1",
       on(rshape, 2, rp(1, nullptr, 0))},
      {"repeat: nrepeats before src strides", TESSERA_INVALID_ARGUMENT, "nrepeats = -3 is negative",
       on(rshape, 2, rp(-3, two, 0), [](DLTensor& s, DLTensor&) { s.strides = huge_strides; })},
      {"repeat: axis 2 of 2", TESSERA_INVALID_ARGUMENT, "repeat: axis 2 is out of range for an input of 2 axes",
       on(rshape, 2, rp(1, two, 2))},
      {"repeat: axis -3 of 2", TESSERA_INVALID_ARGUMENT, "repeat: axis -3 is out of range", on(rshape, 2, rp(1, two, -3))},
      {"repeat: 2 counts for 3 elements", TESSERA_INVALID_ARGUMENT,
       "repeat: 2 counts for 3 elements along axis 1", on(rshape_cols, 2, rp(2, counts2, 1))},
      {"repeat: 3 counts for 6 flattened elements", TESSERA_INVALID_ARGUMENT,
       "repeat: 3 counts for 6 elements along the flattened input", on(rflat, 1, rp(3, counts3, TESSERA_AXIS_NONE))},
      {"repeat: a negative count", TESSERA_INVALID_ARGUMENT, "repeat: repeats[1] = -1 is negative",
       on(rshape, 2, rp(2, neg_count, 0))},
      {"repeat: the counts' sum overflows", TESSERA_OVERFLOW, "repeat: the sum of the counts overflows int64",
       on(rshape, 2, rp(2, huge_counts, 0))},
      {"repeat: src stride overflow", TESSERA_OVERFLOW, "src->strides[0]",
       on(rshape, 2, rp(1, two, 0), [](DLTensor& s, DLTensor&) { s.strides = huge_strides; })},
      {"repeat: dst shape differs", TESSERA_INVALID_ARGUMENT,
       "dst has shape (4, 4) but repeat(src, repeats, axis) has shape (4, 3)", on(wrong, 2, rp(1, two, 0))},
      {"repeat: dst 2-d with no axis", TESSERA_INVALID_ARGUMENT,
       "dst has shape (4, 3) but repeat(src, repeats) (no axis) has shape (12,)", on(rshape, 2, rp(1, two, TESSERA_AXIS_NONE))},
      {"repeat: dst transposed", TESSERA_INVALID_ARGUMENT, "dst is not C-contiguous: strides (1, 4) (elements) but shape (4, 3)",
       on(rshape, 2, rp(1, two, 0), [](DLTensor&, DLTensor& d) { d.strides = transposed; })},
      {"repeat: src data NULL", TESSERA_INVALID_ARGUMENT, "src is null but the input has 6 elements",
       on(rflat, 1, rp(1, two, TESSERA_AXIS_NONE), [](DLTensor& s, DLTensor&) { s.data = nullptr; })},
      {"repeat: dst data NULL", TESSERA_INVALID_ARGUMENT, "dst is null but the output has 48 bytes",
       on(rshape, 2, rp(1, two, 0), [](DLTensor&, DLTensor& d) { d.data = nullptr; })},
  };
  float out[24];
  for (const Bad& b : bad) {
    CAPTURE(b.name);
    DLTensor s{}, d{};
    s.data = const_cast<float*>(&a[0][0]);
    s.device = d.device = {kDLCPU, 0};
    s.ndim = 2;
    s.dtype = d.dtype = dtype(kDLFloat, 32);
    s.shape = shape23;
    d.data = out;
    d.ndim = 2;
    d.shape = shape23;
    for (float& v : out) v = -1;
    CHECK(b.call(s, d) == b.status);
    CHECK_MESSAGE(contains(tessera_last_error(), b.message), tessera_last_error());
    for (float v : out) REQUIRE(v == -1);
  }
}

TEST_CASE("DLPack: the family's empty outputs accept any dst strides and NULL data") {
  const int32_t a[3] = {1, 2, 3};
  int64_t shape[1] = {3};
  int64_t strides[2] = {7, 3};
  DLTensor s{}, d{};
  s.data = const_cast<int32_t*>(a);
  s.device = d.device = {kDLCPU, 0};
  s.ndim = 1;
  s.shape = shape;
  s.dtype = d.dtype = dtype(kDLInt, 32);
  d.strides = strides;
  int64_t empty_target[2] = {0, 3};
  d.ndim = 2;
  d.shape = empty_target;
  CHECK(tessera_broadcast_to_dlpack(&s, &d) == TESSERA_OK);
  const int64_t expand_target[2] = {0, 1};
  CHECK(tessera_expand_dlpack(&s, 2, expand_target, &d) == TESSERA_OK);
  const int64_t zero[1] = {0};
  int64_t empty_flat[1] = {0};
  d.ndim = 1;
  d.shape = empty_flat;
  CHECK(tessera_repeat_dlpack(&s, 1, zero, TESSERA_AXIS_NONE, &d) == TESSERA_OK);
  CHECK(tessera_repeat_dlpack(&s, 1, zero, 0, &d) == TESSERA_OK);
  // An empty input (src data NULL) broadcast into an empty output.
  int64_t none[1] = {0};
  s.shape = none;
  s.data = nullptr;
  CHECK(tessera_expand_dlpack(&s, 0, nullptr, &d) == TESSERA_OK);
  CHECK(tessera_repeat_dlpack(&s, 0, nullptr, 0, &d) == TESSERA_OK);
}

namespace {

// The reductions' DLPack dtypes and the tessera::DType each stands for.
struct ReduceType {
  const char* name;
  DLDataType t;
  tessera::DType dtype;
};
const std::vector<ReduceType>& reduce_types() {
  using tessera::DType;
  static const std::vector<ReduceType> types = {
      {"float32", dtype(kDLFloat, 32), DType::float32},       {"float64", dtype(kDLFloat, 64), DType::float64},
      {"float16", dtype(kDLFloat, 16), DType::float16},       {"bfloat16", dtype(kDLBfloat, 16), DType::bfloat16},
      {"complex64", dtype(kDLComplex, 64), DType::complex64}, {"complex128", dtype(kDLComplex, 128), DType::complex128},
      {"int8", dtype(kDLInt, 8), DType::int8},                {"int16", dtype(kDLInt, 16), DType::int16},
      {"int32", dtype(kDLInt, 32), DType::int32},             {"int64", dtype(kDLInt, 64), DType::int64},
      {"uint8", dtype(kDLUInt, 8), DType::uint8},             {"uint16", dtype(kDLUInt, 16), DType::uint16},
      {"uint32", dtype(kDLUInt, 32), DType::uint32},          {"uint64", dtype(kDLUInt, 64), DType::uint64},
  };
  return types;
}

}  // namespace

TEST_CASE("DLPack reductions: every dtype and layout, byte for byte the C++ API's result") {
  struct TileBack {
    Shape in, reps;
  };
  const std::vector<TileBack> tiles = {
      {{}, {}}, {{}, {3}}, {{5}, {3}}, {{3, 4}, {2, 3}}, {{2, 1, 3}, {3, 4, 2}}, {{4, 3}, {1, 5, 1, 2}},
      {{2, 3}, {0, 2}}, {{0, 3}, {2, 1}}, {{70}, {2}}, {{3}, {40}}, {{33, 2}, {3, 1}}, {{2, 5}, {9, 1}},
  };
  const std::vector<std::pair<Shape, Shape>> sums = {  // (src's shape, dst's shape: the target)
      {{}, {}}, {{5}, {}}, {{5}, {1}}, {{4, 3}, {3}}, {{4, 3}, {4, 1}}, {{2, 3, 4}, {1, 1}}, {{0, 3}, {3}},
      {{3, 0}, {3, 1}}, {{6, 70}, {6, 1}}, {{70, 6}, {1, 6}}, {{2, 3}, {2, 3}}, {{3, 1, 4}, {3, 1, 1}},
  };
  struct RepBack {
    Shape in, counts;
    std::optional<int> axis;
  };
  const std::vector<RepBack> repeats = {
      {{5}, {3}, std::nullopt},   {{2, 3}, {2}, 0},          {{2, 3}, {1, 0, 2}, 1},
      {{2, 3}, {1, 2, 0, 3, 1, 1}, std::nullopt},            {{3, 2}, {4}, -1},
      {{}, {3}, std::nullopt},    {{2, 0}, {2}, 0},          {{3}, {0}, std::nullopt},
      {{2, 3, 2}, {0, 3, 1}, -2}, {{40, 3}, {2}, 0},         {{20}, {3}, 0},
      {{}, {2}, -1},              {{3, 33}, {9}, std::nullopt},
  };
  const unsigned layouts[] = {test::kContiguous, test::kPermuted, test::kReversed, test::kBroadcast, test::kSubView,
                              test::kAllLayouts};
  test::Rng rng(8123);
  int ran = 0;
  for (const ReduceType& ty : reduce_types()) {
    const std::size_t itemsize = tessera::itemsize_of(ty.dtype);
    REQUIRE(itemsize == std::size_t{ty.t.bits} / 8);
    for (unsigned layout : layouts) {
      CAPTURE(std::string(ty.name));
      CAPTURE(test::layout_name(layout));
      // The gradient: a view of `shape` (element strides), as a DLTensor.
      const auto make = [&](const Shape& shape, Shape& g_shape, Shape& g_strides, test::View& view) {
        view = element_view(rng, shape, itemsize, layout, layout * 3 + itemsize);
        const bool null_strides = layout == test::kContiguous && rng.coin();
        return tensor_of(view, ty.t, g_shape, g_strides, null_strides, rng.uniform(0, 40));
      };
      // Runs `call` (the DLPack call, into a result tensor of shape `out`) and the C++ API (`cpp`,
      // into the same bytes at the same place) from the same prior contents, with the same options;
      // the two buffers must be equal, guards intact.
      const auto run = [&](Shape out, const std::function<tessera_status(DLTensor&, const tessera_options*)>& call,
                           const std::function<void(unsigned char*, std::size_t, const tessera::Options&)>& cpp) {
        int64_t count = 1;
        for (int64_t e : out) count *= e;
        const std::size_t bytes = static_cast<std::size_t>(count) * itemsize;
        test::GuardedBuffer buf(bytes + 64), want(bytes + 64);
        const uint64_t seed = static_cast<uint64_t>(rng.uniform(0, 1 << 20));
        buf.prefill_pattern(seed);
        want.prefill_pattern(seed);
        const std::size_t shift = static_cast<std::size_t>(rng.uniform(0, 64));
        Shape strides;
        DLTensor dst = dst_of(buf, ty.t, out, strides, rng, shift);
        tessera_options o;
        tessera_options_init(&o);
        o.accumulate = rng.coin(40) ? 1 : 0;
        o.max_threads = static_cast<int>(rng.uniform(0, 3));
        const bool null_options = o.accumulate == 0 && o.max_threads == 0 && rng.coin();
        CAPTURE(o.accumulate);
        REQUIRE_MESSAGE(call(dst, null_options ? nullptr : &o) == TESSERA_OK, tessera_last_error());
        tessera::Options co;
        co.accumulate = o.accumulate == 1;
        co.max_threads = o.max_threads;
        cpp(want.data() + shift, bytes, co);
        CHECK(buf.bytes() == want.bytes());
        CHECK(buf.check_guards() == "");
        ++ran;
      };
      for (const TileBack& c : tiles) {
        CAPTURE(test::to_string(c.in));
        CAPTURE(test::to_string(c.reps));
        const Shape grad = ref::tile_shape(c.in, c.reps);
        test::View view;
        Shape g_shape, g_strides;
        const DLTensor g = make(grad, g_shape, g_strides, view);
        run(c.in,
            [&](DLTensor& dst, const tessera_options* o) {
              return tessera_tile_backward_dlpack(&g, static_cast<int>(c.reps.size()), c.reps.data(), &dst, o);
            },
            [&](unsigned char* out, std::size_t bytes, const tessera::Options& o) {
              tessera::tile_backward(view.data(), view.shape, view.strides, ty.dtype, c.in, c.reps, out, bytes, o);
            });
      }
      for (const auto& pair : sums) {  // clang 14 cannot capture a structured binding
        const Shape& shape = pair.first;
        const Shape& target = pair.second;
        CAPTURE(test::to_string(shape));
        CAPTURE(test::to_string(target));
        test::View view;
        Shape g_shape, g_strides;
        const DLTensor g = make(shape, g_shape, g_strides, view);
        run(target, [&](DLTensor& dst, const tessera_options* o) { return tessera_sum_to_shape_dlpack(&g, &dst, o); },
            [&](unsigned char* out, std::size_t bytes, const tessera::Options& o) {
              tessera::sum_to_shape(view.data(), view.shape, view.strides, ty.dtype, target, out, bytes, o);
            });
      }
      for (const RepBack& r : repeats) {
        CAPTURE(test::to_string(r.in));
        CAPTURE(test::to_string(r.counts));
        CAPTURE(r.axis.value_or(-99));
        const tessera::Dims gd = tessera::repeat_shape(r.in, r.counts, r.axis);
        const Shape grad(gd.begin(), gd.end());
        test::View view;
        Shape g_shape, g_strides;
        const DLTensor g = make(grad, g_shape, g_strides, view);
        const int axis = r.axis ? *r.axis : TESSERA_AXIS_NONE;
        run(r.in,
            [&](DLTensor& dst, const tessera_options* o) {
              return tessera_repeat_backward_dlpack(&g, static_cast<int64_t>(r.counts.size()), r.counts.data(), axis,
                                                    &dst, o);
            },
            [&](unsigned char* out, std::size_t bytes, const tessera::Options& o) {
              tessera::repeat_backward(view.data(), view.shape, view.strides, ty.dtype, r.in, r.counts, r.axis, out,
                                       bytes, o);
            });
      }
    }
  }
  CHECK(ran == 14 * 6 * static_cast<int>(tiles.size() + sums.size() + repeats.size()));
}

TEST_CASE("DLPack reductions: exact sums of small integers, the sum added once under accumulate") {
  // grad_out = tile([[1, 2, 3], [4, 5, 6]], (2, 2)) as int32 and float32: each element of grad_in
  // is 4 times A's; repeat_backward of repeat(A, 2, axis 1): twice A; sum_to_shape to (1, 3): the
  // column sums 5 7 9.
  const int32_t a[2][3] = {{1, 2, 3}, {4, 5, 6}};
  int32_t gi[4][6];
  float gf[4][6];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) gi[i][j] = a[i % 2][j % 3], gf[i][j] = static_cast<float>(a[i % 2][j % 3]);
  int64_t gshape[2] = {4, 6}, in_shape[2] = {2, 3};
  const int64_t reps[2] = {2, 2};
  DLTensor g{}, d{};
  g.device = d.device = {kDLCPU, 0};
  g.ndim = d.ndim = 2;
  g.shape = gshape;
  d.shape = in_shape;
  int32_t ri[6] = {};
  float rf[6] = {};
  for (const bool is_float : {false, true}) {
    CAPTURE(is_float);
    g.dtype = d.dtype = is_float ? dtype(kDLFloat, 32) : dtype(kDLInt, 32);
    g.data = is_float ? static_cast<void*>(&gf[0][0]) : static_cast<void*>(&gi[0][0]);
    d.data = is_float ? static_cast<void*>(rf) : static_cast<void*>(ri);
    const auto value = [&](int k) { return is_float ? static_cast<double>(rf[k]) : static_cast<double>(ri[k]); };
    REQUIRE_MESSAGE(tessera_tile_backward_dlpack(&g, 2, reps, &d, nullptr) == TESSERA_OK, tessera_last_error());
    for (int k = 0; k < 6; ++k) CHECK(value(k) == 4 * a[k / 3][k % 3]);
    tessera_options o;
    tessera_options_init(&o);
    o.accumulate = 1;
    REQUIRE(tessera_tile_backward_dlpack(&g, 2, reps, &d, &o) == TESSERA_OK);
    for (int k = 0; k < 6; ++k) CHECK(value(k) == 8 * a[k / 3][k % 3]);
    // The first two rows of grad_out, (2, 6), as repeat(A, 2, axis 1)'s gradient.
    int64_t rshape[2] = {2, 6};
    g.shape = rshape;
    const int64_t two[1] = {2};
    REQUIRE(tessera_repeat_backward_dlpack(&g, 1, two, 1, &d, nullptr) == TESSERA_OK);
    for (int k = 0; k < 6; ++k) {
      const int i = k / 3, j = k % 3;  // grad_out row i, columns 2j and 2j + 1
      CHECK(value(k) == a[i][(2 * j) % 3] + a[i][(2 * j + 1) % 3]);
    }
    g.shape = gshape;
    int64_t col_target[2] = {1, 6};
    d.shape = col_target;
    REQUIRE(tessera_sum_to_shape_dlpack(&g, &d, nullptr) == TESSERA_OK);
    for (int k = 0; k < 6; ++k) CHECK(value(k) == 2 * (a[0][k % 3] + a[1][k % 3]));
    d.shape = in_shape;
  }
}

TEST_CASE("DLPack reductions reject every bad argument, in the documented order, the result untouched") {
  float g[4][6];
  for (int i = 0; i < 24; ++i) (&g[0][0])[i] = static_cast<float>(i);
  struct Bad {
    const char* name;
    tessera_status status;
    const char* message;
    std::function<tessera_status(DLTensor& grad, DLTensor& result, tessera_options& o)> call;
  };
  // Every call starts from a C-contiguous float32 gradient of shape (4, 6), a result of shape
  // (2, 3) (valid for tile_backward by (2, 2); the other calls' cases set the result's shape where
  // the error they test comes after the planning) and initialized options; each case edits them.
  static int64_t gshape[2] = {4, 6}, in23[2] = {2, 3}, in26[2] = {2, 6}, t16[2] = {1, 6}, t6[1] = {6};
  static int64_t shape65[65] = {}, neg_in[2] = {2, -3}, wrong_in[2] = {2, 4}, t36[3] = {1, 4, 6}, t26[2] = {2, 6};
  static int64_t transposed[2] = {1, 2}, transposed6[2] = {1, 2}, huge_strides[2] = {INT64_MAX / 2, 1};
  static int64_t flat24[1] = {24}, in24[1] = {24}, big_in[2] = {int64_t{1} << 62, 3};
  static const int64_t reps22[2] = {2, 2}, neg_reps[2] = {2, -2}, two[1] = {2}, counts3[3] = {1, 1, 2};
  static const int64_t neg_count[2] = {2, -1}, many[65] = {};
  const auto tb = [](const int64_t* reps, int n) {
    return [reps, n](DLTensor& s, DLTensor& d, tessera_options& o) {
      return tessera_tile_backward_dlpack(&s, n, reps, &d, &o);
    };
  };
  const auto st = [](DLTensor& s, DLTensor& d, tessera_options& o) { return tessera_sum_to_shape_dlpack(&s, &d, &o); };
  const auto rb = [](int64_t n, const int64_t* c, int axis) {
    return [n, c, axis](DLTensor& s, DLTensor& d, tessera_options& o) {
      return tessera_repeat_backward_dlpack(&s, n, c, axis, &d, &o);
    };
  };
  using Call = std::function<tessera_status(DLTensor&, DLTensor&, tessera_options&)>;
  using Edit = std::function<void(DLTensor&, DLTensor&, tessera_options&)>;
  const auto with = [](Call call, Edit edit) {
    return [=](DLTensor& s, DLTensor& d, tessera_options& o) {
      edit(s, d, o);
      return call(s, d, o);
    };
  };
  const auto result = [](int64_t* shape, int ndim) {
    return [=](DLTensor&, DLTensor& d, tessera_options&) {
      d.shape = shape;
      d.ndim = ndim;
    };
  };
  const auto both = [](Edit a, Edit b) {
    return [=](DLTensor& s, DLTensor& d, tessera_options& o) {
      a(s, d, o);
      b(s, d, o);
    };
  };
  const Bad bad[] = {
      // Tensors, devices, dtypes, the gradient's shape.
      {"tile_backward: NULL grad_out", TESSERA_INVALID_ARGUMENT, "grad_out is NULL",
       [](DLTensor&, DLTensor& d, tessera_options& o) { return tessera_tile_backward_dlpack(nullptr, 2, reps22, &d, &o); }},
      {"tile_backward: NULL grad_in before a bad rep", TESSERA_INVALID_ARGUMENT, "grad_in is NULL",
       [](DLTensor& s, DLTensor&, tessera_options& o) { return tessera_tile_backward_dlpack(&s, 2, neg_reps, nullptr, &o); }},
      {"sum_to_shape: NULL src", TESSERA_INVALID_ARGUMENT, "src is NULL",
       [](DLTensor&, DLTensor& d, tessera_options& o) { return tessera_sum_to_shape_dlpack(nullptr, &d, &o); }},
      {"sum_to_shape: NULL dst", TESSERA_INVALID_ARGUMENT, "dst is NULL",
       [](DLTensor& s, DLTensor&, tessera_options& o) { return tessera_sum_to_shape_dlpack(&s, nullptr, &o); }},
      {"repeat_backward: NULL grad_out", TESSERA_INVALID_ARGUMENT, "grad_out is NULL",
       [](DLTensor&, DLTensor& d, tessera_options& o) { return tessera_repeat_backward_dlpack(nullptr, 1, two, 0, &d, &o); }},
      {"repeat_backward: NULL grad_in", TESSERA_INVALID_ARGUMENT, "grad_in is NULL",
       [](DLTensor& s, DLTensor&, tessera_options& o) { return tessera_repeat_backward_dlpack(&s, 1, two, 0, nullptr, &o); }},
      {"tile_backward: grad_out on CUDA", TESSERA_INVALID_ARGUMENT,
       "grad_out is on device CUDA (device_type 2, device_id 1); tessera_tile_backward_dlpack reads and writes CPU memory only",
       with(tb(reps22, 2), [](DLTensor& s, DLTensor&, tessera_options&) { s.device = {kDLCUDA, 1}; })},
      {"sum_to_shape: dst on ROCM", TESSERA_INVALID_ARGUMENT, "dst is on device ROCM (device_type 10, device_id 0); tessera_sum_to_shape_dlpack",
       with(st, [](DLTensor&, DLTensor& d, tessera_options&) { d.device = {kDLROCM, 0}; })},
      {"repeat_backward: unknown device", TESSERA_INVALID_ARGUMENT, "grad_in is on device unknown (device_type 99",
       with(rb(1, two, 0), [](DLTensor&, DLTensor& d, tessera_options&) {
         const int32_t v = 99;
         std::memcpy(&d.device.device_type, &v, sizeof v);
       })},
      {"tile_backward: bool", TESSERA_INVALID_ARGUMENT,
       "grad_out dtype bool8 (code 6, bits 8, lanes 1) is not a type tessera_tile_backward_dlpack adds",
       with(tb(reps22, 2), [](DLTensor& s, DLTensor& d, tessera_options&) { s.dtype = d.dtype = dtype(kBool, 8); })},
      {"tile_backward: float32x4", TESSERA_INVALID_ARGUMENT,
       "grad_out dtype float32x4 (code 2, bits 32, lanes 4) is not a type",
       with(tb(reps22, 2), [](DLTensor& s, DLTensor& d, tessera_options&) { s.dtype = d.dtype = dtype(kDLFloat, 32, 4); })},
      {"sum_to_shape: float8", TESSERA_INVALID_ARGUMENT, "src dtype float8 (code 2, bits 8, lanes 1) is not a type tessera_sum_to_shape_dlpack adds",
       with(st, [](DLTensor& s, DLTensor& d, tessera_options&) { s.dtype = d.dtype = dtype(kDLFloat, 8); })},
      {"sum_to_shape: int24", TESSERA_INVALID_ARGUMENT, "src dtype int24 (code 0, bits 24, lanes 1) is not a type",
       with(st, [](DLTensor& s, DLTensor& d, tessera_options&) { s.dtype = d.dtype = dtype(kDLInt, 24); })},
      {"repeat_backward: bfloat32", TESSERA_INVALID_ARGUMENT, "grad_out dtype bfloat32 (code 4, bits 32, lanes 1) is not a type",
       with(rb(1, two, 0), [](DLTensor& s, DLTensor& d, tessera_options&) { s.dtype = d.dtype = dtype(kDLBfloat, 32); })},
      {"repeat_backward: complex32", TESSERA_INVALID_ARGUMENT, "grad_out dtype complex32 (code 5, bits 32, lanes 1)",
       with(rb(1, two, 0), [](DLTensor& s, DLTensor& d, tessera_options&) { s.dtype = d.dtype = dtype(kDLComplex, 32); })},
      {"tile_backward: opaque handle", TESSERA_INVALID_ARGUMENT, "grad_out dtype opaque handle64 (code 3, bits 64, lanes 1)",
       with(tb(reps22, 2), [](DLTensor& s, DLTensor& d, tessera_options&) { s.dtype = d.dtype = dtype(kDLOpaqueHandle, 64); })},
      {"tile_backward: uint64x2", TESSERA_INVALID_ARGUMENT, "grad_out dtype uint64x2 (code 1, bits 64, lanes 2)",
       with(tb(reps22, 2), [](DLTensor& s, DLTensor& d, tessera_options&) { s.dtype = d.dtype = dtype(kDLUInt, 64, 2); })},
      {"tile_backward: a bad dtype before a NULL shape", TESSERA_INVALID_ARGUMENT, "grad_out dtype bool8",
       with(tb(reps22, 2), [](DLTensor& s, DLTensor& d, tessera_options&) { s.dtype = d.dtype = dtype(kBool, 8); s.shape = nullptr; })},
      {"tile_backward: grad_in dtype differs", TESSERA_INVALID_ARGUMENT, "grad_in dtype int32 differs from grad_out dtype float32",
       with(tb(reps22, 2), [](DLTensor&, DLTensor& d, tessera_options&) { d.dtype = dtype(kDLInt, 32); })},
      {"sum_to_shape: dst float64", TESSERA_INVALID_ARGUMENT, "dst dtype float64 differs from src dtype float32",
       with(st, [](DLTensor&, DLTensor& d, tessera_options&) { d.dtype = dtype(kDLFloat, 64); })},
      {"repeat_backward: grad_in bfloat16 (same bits, another code)", TESSERA_INVALID_ARGUMENT,
       "grad_in dtype bfloat16 differs from grad_out dtype float16",
       with(rb(1, two, 0), [](DLTensor& s, DLTensor& d, tessera_options&) { s.dtype = dtype(kDLFloat, 16); d.dtype = dtype(kDLBfloat, 16); })},
      {"tile_backward: grad_out ndim 65", TESSERA_INVALID_ARGUMENT, "grad_out->ndim = 65 is out of range [0, 64]",
       with(tb(neg_reps, 2), [](DLTensor& s, DLTensor&, tessera_options&) { s.ndim = 65; s.shape = shape65; })},
      {"sum_to_shape: src shape NULL", TESSERA_INVALID_ARGUMENT, "src->shape is NULL but src->ndim = 2",
       with(st, [](DLTensor& s, DLTensor&, tessera_options&) { s.shape = nullptr; })},

      // The call's own list, then the result's shape.
      {"tile_backward: nreps 65", TESSERA_INVALID_ARGUMENT, "nreps = 65 is out of range [0, 64]", tb(many, 65)},
      {"tile_backward: reps NULL", TESSERA_INVALID_ARGUMENT, "reps is NULL but nreps = 2", tb(nullptr, 2)},
      {"tile_backward: reps before grad_in's shape", TESSERA_INVALID_ARGUMENT, "reps is NULL but nreps = 2",
       with(tb(nullptr, 2), result(nullptr, 2))},
      {"tile_backward: grad_in shape NULL", TESSERA_INVALID_ARGUMENT, "grad_in->shape is NULL but grad_in->ndim = 2",
       with(tb(reps22, 2), result(nullptr, 2))},
      {"tile_backward: grad_in ndim 65", TESSERA_INVALID_ARGUMENT, "grad_in->ndim = 65 is out of range [0, 64]",
       with(tb(reps22, 2), result(shape65, 65))},
      {"sum_to_shape: dst ndim -1", TESSERA_INVALID_ARGUMENT, "dst->ndim = -1 is out of range", with(st, result(t16, -1))},
      {"repeat_backward: negative nrepeats", TESSERA_INVALID_ARGUMENT, "nrepeats = -1 is negative", rb(-1, two, 0)},
      {"repeat_backward: repeats NULL", TESSERA_INVALID_ARGUMENT, "repeats is NULL but nrepeats = 1", rb(1, nullptr, 0)},
      {"repeat_backward: repeats before grad_in's shape", TESSERA_INVALID_ARGUMENT, "nrepeats = -3 is negative",
       with(rb(-3, two, 0), result(nullptr, 2))},
      {"repeat_backward: grad_in shape NULL", TESSERA_INVALID_ARGUMENT, "grad_in->shape is NULL but grad_in->ndim = 2",
       with(rb(1, two, 0), result(nullptr, 2))},

      // The gradient's strides, then the options, then the planning.
      {"tile_backward: grad_out stride overflow", TESSERA_OVERFLOW,
       "grad_out->strides[0] = 4611686018427387903 elements of 4 bytes overflows int64",
       with(tb(reps22, 2), [](DLTensor& s, DLTensor&, tessera_options&) { s.strides = huge_strides; })},
      {"sum_to_shape: src stride overflow before bad options", TESSERA_OVERFLOW, "src->strides[0]",
       with(st, [](DLTensor& s, DLTensor& d, tessera_options& o) { d.shape = t16; s.strides = huge_strides; o.accumulate = 7; })},
      {"repeat_backward: stride overflow before a bad axis", TESSERA_OVERFLOW, "grad_out->strides[0]",
       with(rb(1, two, 5), [](DLTensor& s, DLTensor&, tessera_options&) { s.strides = huge_strides; })},
      {"tile_backward: sizeof_options 0", TESSERA_INVALID_ARGUMENT, "options->sizeof_options = 0",
       with(tb(reps22, 2), [](DLTensor&, DLTensor&, tessera_options& o) { o.sizeof_options = 0; })},
      {"tile_backward: sizeof_options too large", TESSERA_INVALID_ARGUMENT, "initialize options with tessera_options_init",
       with(tb(reps22, 2), [](DLTensor&, DLTensor&, tessera_options& o) { o.sizeof_options = sizeof(tessera_options) + 1; })},
      {"sum_to_shape: accumulate 2 before a bad target", TESSERA_INVALID_ARGUMENT, "options->accumulate = 2 (it must be 0 or 1)",
       with(st, [](DLTensor&, DLTensor& d, tessera_options& o) { d.shape = t36; d.ndim = 3; o.accumulate = 2; })},
      {"repeat_backward: nontemporal 3", TESSERA_INVALID_ARGUMENT, "options.nontemporal = 3",
       with(rb(1, two, 0), [](DLTensor&, DLTensor&, tessera_options& o) { o.nontemporal = 3; })},
      {"tile_backward: max_threads -1 before a bad rep", TESSERA_INVALID_ARGUMENT, "options.max_threads = -1",
       with(tb(neg_reps, 2), [](DLTensor&, DLTensor&, tessera_options& o) { o.max_threads = -1; })},
      {"tile_backward: negative rep", TESSERA_INVALID_ARGUMENT, "reps[1] = -2 is negative", tb(neg_reps, 2)},
      {"tile_backward: negative extent in grad_in", TESSERA_INVALID_ARGUMENT, "shape[1] = -3 is negative",
       with(tb(reps22, 2), result(neg_in, 2))},
      {"tile_backward: in_shape's count overflows", TESSERA_OVERFLOW, "overflows",
       with(tb(reps22, 2), result(big_in, 2))},
      {"tile_backward: grad_out's shape is not the tile's", TESSERA_INVALID_ARGUMENT,
       "tile_backward: the gradient's axis 1 has extent 6 but the forward output's has 8",
       with(tb(reps22, 2), result(wrong_in, 2))},
      {"tile_backward: grad_out has fewer axes than the tile", TESSERA_INVALID_ARGUMENT,
       "tile_backward: the gradient has 2 axes (4, 6) but the forward output has 3",
       with(tb(reps22, 2), result(t36, 3))},
      {"sum_to_shape: dst has more axes than src", TESSERA_INVALID_ARGUMENT,
       "sum_to_shape: the target (1, 4, 6) has 3 axes, more than the input's 2 (4, 6)", with(st, result(t36, 3))},
      {"sum_to_shape: an axis neither equal nor 1", TESSERA_INVALID_ARGUMENT,
       "sum_to_shape: target axis 0 has extent 2 but the input's axis 0 has 4", with(st, result(t26, 2))},
      {"repeat_backward: axis 2 of 2", TESSERA_INVALID_ARGUMENT, "repeat: axis 2 is out of range for an input of 2 axes",
       rb(1, two, 2)},
      {"repeat_backward: 3 counts for 2 elements", TESSERA_INVALID_ARGUMENT, "repeat: 3 counts for 2 elements along axis 0",
       rb(3, counts3, 0)},
      {"repeat_backward: a negative count", TESSERA_INVALID_ARGUMENT, "repeat: repeats[1] = -1 is negative",
       rb(2, neg_count, 0)},
      {"repeat_backward: grad_out's shape is not the repeat's", TESSERA_INVALID_ARGUMENT,
       "repeat_backward: the gradient's axis 0 has extent 4 but the forward output's has 2",
       with(rb(1, two, 1), result(in26, 2))},
      {"repeat_backward: no axis, grad_out not 1-d", TESSERA_INVALID_ARGUMENT,
       "repeat_backward: the gradient has 2 axes (4, 6) but the forward output has 1",
       with(rb(1, two, TESSERA_AXIS_NONE), result(in24, 1))},

      // Then the result's strides, then the data pointers.
      {"tile_backward: grad_in transposed", TESSERA_INVALID_ARGUMENT,
       "grad_in is not C-contiguous: strides (1, 2) (elements) but shape (2, 3) needs (3, 1) or NULL",
       with(tb(reps22, 2), [](DLTensor&, DLTensor& d, tessera_options&) { d.strides = transposed; })},
      {"sum_to_shape: a planning error before dst's strides", TESSERA_INVALID_ARGUMENT, "sum_to_shape: target axis 0",
       with(st, both(result(t26, 2), [](DLTensor&, DLTensor& d, tessera_options&) { d.strides = transposed6; }))},
      {"tile_backward: grad_in's strides before its data", TESSERA_INVALID_ARGUMENT, "grad_in is not C-contiguous",
       with(tb(reps22, 2), [](DLTensor&, DLTensor& d, tessera_options&) { d.strides = transposed; d.data = nullptr; })},
      {"tile_backward: grad_out data NULL", TESSERA_INVALID_ARGUMENT, "grad_out->data is NULL but grad_out has 24 elements",
       with(tb(reps22, 2), [](DLTensor& s, DLTensor&, tessera_options&) { s.data = nullptr; })},
      {"sum_to_shape: dst data NULL", TESSERA_INVALID_ARGUMENT, "dst->data is NULL but the result has 24 bytes",
       with(st, [](DLTensor&, DLTensor& d, tessera_options&) { d.shape = t6; d.ndim = 1; d.data = nullptr; })},
      {"repeat_backward: grad_in data NULL (accumulate)", TESSERA_INVALID_ARGUMENT,
       "grad_in->data is NULL but the result has 48 bytes",
       with(rb(1, two, TESSERA_AXIS_NONE), [](DLTensor& s, DLTensor& d, tessera_options& o) {
         s.shape = flat24;
         s.ndim = 1;
         d.shape = in26;
         d.ndim = 2;
         d.data = nullptr;
         o.accumulate = 1;
       })},
  };
  // The result: 12 floats of -1 (room for the largest valid result, (2, 6)).
  float out[12];
  for (const Bad& b : bad) {
    CAPTURE(b.name);
    DLTensor s{}, d{};
    s.data = &g[0][0];
    s.device = d.device = {kDLCPU, 0};
    s.ndim = 2;
    s.dtype = d.dtype = dtype(kDLFloat, 32);
    s.shape = gshape;
    d.data = out;
    d.ndim = 2;
    d.shape = in23;
    tessera_options o;
    tessera_options_init(&o);
    for (float& v : out) v = -1;
    CHECK(b.call(s, d, o) == b.status);
    CHECK_MESSAGE(contains(tessera_last_error(), b.message), tessera_last_error());
    for (float v : out) REQUIRE(v == -1);
  }
  // The valid calls the cases start from, for contrast.
  DLTensor s{}, d{};
  s.data = &g[0][0];
  s.device = d.device = {kDLCPU, 0};
  s.ndim = d.ndim = 2;
  s.dtype = d.dtype = dtype(kDLFloat, 32);
  s.shape = gshape;
  d.data = out;
  d.shape = in23;
  REQUIRE(tessera_tile_backward_dlpack(&s, 2, reps22, &d, nullptr) == TESSERA_OK);
  CHECK(out[0] == 0 + 3 + 12 + 15);
  d.shape = in26;
  const int64_t rows2[1] = {2};
  REQUIRE(tessera_repeat_backward_dlpack(&s, 1, rows2, 0, &d, nullptr) == TESSERA_OK);
  CHECK(out[0] == 0 + 6);
  CHECK(out[7] == 13 + 19);
  d.shape = t16;
  REQUIRE(tessera_sum_to_shape_dlpack(&s, &d, nullptr) == TESSERA_OK);
  CHECK(out[5] == 5 + 11 + 17 + 23);
}

TEST_CASE("DLPack reductions: empty results and empty gradients") {
  // An empty result takes any strides and NULL data; an empty gradient (a rep of 0) takes NULL data
  // and gives zeros, or leaves the result as it was under accumulate.
  int64_t gshape[2] = {0, 3}, in_shape[2] = {2, 3}, empty_in[2] = {0, 3}, strides[2] = {7, 5};
  const int64_t reps[2] = {0, 1}, reps1[2] = {1, 1};
  DLTensor g{}, d{};
  g.device = d.device = {kDLCPU, 0};
  g.ndim = d.ndim = 2;
  g.dtype = d.dtype = dtype(kDLFloat, 64);
  g.shape = gshape;
  d.shape = in_shape;
  d.strides = strides;  // not C-contiguous: refused for a non-empty result
  double out[6] = {1, 2, 3, 4, 5, 6};
  d.data = out;
  CHECK(tessera_tile_backward_dlpack(&g, 2, reps, &d, nullptr) == TESSERA_INVALID_ARGUMENT);
  d.strides = nullptr;
  tessera_options o;
  tessera_options_init(&o);
  o.accumulate = 1;
  REQUIRE(tessera_tile_backward_dlpack(&g, 2, reps, &d, &o) == TESSERA_OK);
  for (int k = 0; k < 6; ++k) CHECK(out[k] == k + 1);
  REQUIRE(tessera_tile_backward_dlpack(&g, 2, reps, &d, nullptr) == TESSERA_OK);
  for (int k = 0; k < 6; ++k) CHECK(out[k] == 0);
  // The empty result: NULL data, any strides.
  d.shape = empty_in;
  d.strides = strides;
  d.data = nullptr;
  CHECK(tessera_tile_backward_dlpack(&g, 2, reps1, &d, nullptr) == TESSERA_OK);
  CHECK(tessera_sum_to_shape_dlpack(&g, &d, &o) == TESSERA_OK);
  const int64_t two[1] = {2};
  CHECK(tessera_repeat_backward_dlpack(&g, 1, two, 1, &d, nullptr) == TESSERA_INVALID_ARGUMENT);  // (0, 6) needed
  int64_t g06[2] = {0, 6};
  g.shape = g06;
  CHECK(tessera_repeat_backward_dlpack(&g, 1, two, 1, &d, nullptr) == TESSERA_OK);
}

TEST_CASE("DLPack: the C99 translation unit") { CHECK(c_dlpack_check() == 0); }

TEST_CASE("DLPack: tessera::dlpack_view reads one tensor as the entry points do") {
  float data[8] = {};
  int64_t shape[2] = {2, 3}, strides[2] = {1, 2};
  DLTensor t{};
  t.data = data;
  t.byte_offset = 4;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = dtype(kDLFloat, 32);
  t.shape = shape;
  t.strides = strides;
  SUBCASE("origin, shape, byte strides, itemsize, dtype") {
    const tessera::DLPackView v = tessera::dlpack_view(t, "x", "f");
    CHECK(v.data == reinterpret_cast<const unsigned char*>(data) + 4);
    CHECK(v.shape == tessera::Dims{2, 3});
    CHECK(v.strides == tessera::Dims{4, 8});
    CHECK(v.itemsize == 4);
    CHECK((v.dtype.code == kDLFloat && v.dtype.bits == 32 && v.dtype.lanes == 1));
  }
  SUBCASE("NULL strides: none (C-contiguous); NULL data stays NULL") {
    t.strides = nullptr;
    t.data = nullptr;
    const tessera::DLPackView v = tessera::dlpack_view(t, "x", "f");
    CHECK(v.strides.size() == 0);
    CHECK(v.data == nullptr);
  }
  SUBCASE("a byte stride past int64") {
    int64_t huge[2] = {INT64_MAX / 2, 1};
    t.strides = huge;
    CHECK_THROWS_WITH_AS(tessera::dlpack_view(t, "x", "f"),
                         doctest::Contains("x->strides[0] = 4611686018427387903 elements of 4 bytes overflows int64"),
                         tessera::Overflow);
  }
  SUBCASE("device, dtype and ndim, in that order") {
    t.device = {kDLCUDA, 0};
    t.dtype = dtype(kDLFloat, 4);
    t.ndim = TESSERA_MAX_NDIM + 1;
    CHECK_THROWS_WITH_AS(tessera::dlpack_view(t, "x", "f"),
                         doctest::Contains("x is on device CUDA (device_type 2, device_id 0); f reads and writes"),
                         tessera::InvalidArgument);
    t.device = {kDLCPU, 0};
    CHECK_THROWS_WITH_AS(tessera::dlpack_view(t, "x", "f"), doctest::Contains("x dtype float4 has 4 bits per element"),
                         tessera::InvalidArgument);
    t.dtype = dtype(kDLFloat, 32);
    CHECK_THROWS_WITH_AS(tessera::dlpack_view(t, "x", "f"), doctest::Contains("x->ndim = 65 is out of range"),
                         tessera::InvalidArgument);
  }
}

TEST_CASE("DLPack: tessera_tile_dlpack_shape checks src, its shape, reps, then the output pointers") {
  int64_t shape[1] = {3};
  DLTensor s{};
  s.device = {kDLCPU, 0};
  s.ndim = 1;
  s.dtype = dtype(kDLFloat, 32);
  int n = 0;
  int64_t out[TESSERA_MAX_NDIM];
  CHECK(tessera_tile_dlpack_shape(&s, 1, nullptr, nullptr, out) == TESSERA_INVALID_ARGUMENT);
  CHECK(contains(tessera_last_error(), "src->shape is NULL"));
  s.shape = shape;
  CHECK(tessera_tile_dlpack_shape(&s, 1, nullptr, nullptr, out) == TESSERA_INVALID_ARGUMENT);
  CHECK(contains(tessera_last_error(), "reps is NULL but nreps = 1"));
  const int64_t reps[1] = {2};
  CHECK(tessera_tile_dlpack_shape(&s, 1, reps, nullptr, out) == TESSERA_INVALID_ARGUMENT);
  CHECK(contains(tessera_last_error(), "out_ndim is NULL"));
  CHECK(tessera_tile_dlpack_shape(&s, 1, reps, &n, out) == TESSERA_OK);
  CHECK((n == 1 && out[0] == 6));
}
