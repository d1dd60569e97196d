#include "util.hpp"

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include <hwy/targets.h>

namespace test {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

constexpr uint64_t kGuardSeed = 0x6A09E667F3BCC908ull;

std::string hex_bytes(const unsigned char* p, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n && i < 32; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  if (n > 32) s += "...";
  return s;
}

// "(i0, i1, ...)" of flat element index `flat` in a C-contiguous array of `shape`.
std::string unravel(int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    index[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  return to_string(index);
}

// "" if `got` (n bytes) equals `expected`, else where and how they first differ.
std::string compare_bytes(const unsigned char* got, std::size_t n, const std::vector<unsigned char>& expected,
                          std::size_t itemsize, const Shape& out_shape) {
  if (n != expected.size())
    return "output has " + std::to_string(n) + " bytes, expected " + std::to_string(expected.size());
  std::size_t first = n, wrong_elements = 0;
  for (std::size_t e = 0; e * itemsize < n; ++e) {
    if (std::memcmp(got + e * itemsize, expected.data() + e * itemsize, itemsize) != 0) {
      if (first == n) first = e;
      ++wrong_elements;
    }
  }
  if (first == n) return "";
  std::ostringstream os;
  os << wrong_elements << " of " << n / itemsize << " elements differ; first at index "
     << unravel(static_cast<int64_t>(first), out_shape) << " (flat " << first << "): expected "
     << hex_bytes(expected.data() + first * itemsize, itemsize) << ", got "
     << hex_bytes(got + first * itemsize, itemsize);
  return os.str();
}

std::string shape_mismatch(const Shape& got, const Shape& expected) {
  return got == expected ? "" : "output shape " + to_string(got) + ", expected " + to_string(expected);
}

Shape dims_to_shape(const tessera::Dims& dims) { return dims.to_vector(); }

}  // namespace

void fill_pattern(void* p, std::size_t n, uint64_t seed) {
  auto* bytes = static_cast<unsigned char*>(p);
  for (std::size_t i = 0; i < n; i += 8) {
    const uint64_t word = splitmix64(seed * 0x100000001B3ull + i / 8);
    const std::size_t m = std::min<std::size_t>(8, n - i);
    std::memcpy(bytes + i, &word, m);
  }
}

std::string to_string(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string layout_name(unsigned layout) {
  if (layout == kContiguous) return "contiguous";
  std::string s;
  auto add = [&](unsigned bit, const char* name) {
    if (layout & bit) s += (s.empty() ? "" : "+") + std::string(name);
  };
  add(kPermuted, "permuted");
  add(kReversed, "reversed");
  add(kBroadcast, "broadcast");
  add(kSubView, "subview");
  if (layout & kArbitrary) s = "arbitrary strides";
  return s;
}

std::string View::describe() const {
  std::ostringstream os;
  os << "input shape " << to_string(shape) << " strides " << to_string(strides) << " itemsize " << itemsize
     << " layout " << layout_name(layout) << " origin " << origin << " of " << storage.size() << " bytes";
  return os.str();
}

View make_view(Rng& rng, const Shape& shape, std::size_t itemsize, unsigned layout, uint64_t fill_seed) {
  const std::size_t n = shape.size();
  View v;
  v.shape = shape;
  v.itemsize = itemsize;
  v.layout = layout;

  if (layout & kArbitrary) {
    // Strides drawn at random (sometimes 0, sometimes equal to another axis's); the buffer spans
    // exactly the addressed bytes, with the origin wherever the negative strides put it.
    const int64_t isz = static_cast<int64_t>(itemsize);
    v.strides.assign(n, 0);
    for (std::size_t k = 0; k < n; ++k) {
      const int64_t pick = rng.uniform(0, 9);
      if (pick == 0)
        v.strides[k] = 0;
      else if (pick == 1 && k > 0)
        v.strides[k] = v.strides[static_cast<std::size_t>(rng.uniform(0, static_cast<int64_t>(k) - 1))];
      else
        v.strides[k] = rng.uniform(-4 * isz, 4 * isz);
    }
    int64_t low = 0, high = isz;
    for (std::size_t k = 0; k < n; ++k) {
      if (shape[k] == 0) continue;
      const int64_t reach = (shape[k] - 1) * v.strides[k];
      (reach < 0 ? low : high) += reach;
    }
    v.origin = static_cast<std::size_t>(-low);
    v.storage.resize(static_cast<std::size_t>(high - low));
    fill_pattern(v.storage.data(), v.storage.size(), fill_seed);
    return v;
  }

  // order[0] is the parent's outermost axis; a shuffled order gives a transposed view.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (layout & kPermuted) rng.shuffle(order);

  const bool sub = layout & kSubView;
  const int64_t pitch = static_cast<int64_t>(itemsize) + (sub ? rng.uniform(0, static_cast<int64_t>(itemsize)) : 0);
  Shape step(n, 1), start(n, 0), parent_extent(n, 1);
  std::vector<bool> reversed(n, false), broadcast(n, false);
  for (std::size_t k = 0; k < n; ++k) {
    broadcast[k] = (layout & kBroadcast) && rng.coin(40);
    reversed[k] = (layout & kReversed) && rng.coin(50);
    if (sub) {
      step[k] = rng.uniform(1, 3);
      start[k] = rng.uniform(0, 2);
    }
    if (!broadcast[k]) {
      const int64_t span = shape[k] > 0 ? (shape[k] - 1) * step[k] + 1 : 1;
      parent_extent[k] = start[k] + span + (sub ? rng.uniform(0, 2) : 0);
    }
  }

  Shape parent_stride(n, 0);
  int64_t total = pitch;
  for (std::size_t i = n; i-- > 0;) {
    parent_stride[order[i]] = total;
    total *= parent_extent[order[i]];
  }

  v.strides.assign(n, 0);
  int64_t origin = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (broadcast[k]) continue;  // stride 0: every index reads the same parent element
    int64_t stride = step[k] * parent_stride[k];
    origin += start[k] * parent_stride[k];
    if (reversed[k] && shape[k] > 0) {
      origin += (shape[k] - 1) * stride;
      stride = -stride;
    }
    v.strides[k] = stride;
  }
  v.origin = static_cast<std::size_t>(origin);
  v.storage.resize(static_cast<std::size_t>(total) + (sub ? static_cast<std::size_t>(pitch) : 0));
  fill_pattern(v.storage.data(), v.storage.size(), fill_seed);
  return v;
}

GuardedBuffer::GuardedBuffer(std::size_t bytes, std::size_t misalign) : size_(bytes) {
  memory_.resize(kGuard + 64 + misalign + bytes + kGuard);
  fill_pattern(memory_.data(), memory_.size(), kGuardSeed);
  const auto address = reinterpret_cast<std::uintptr_t>(memory_.data() + kGuard);
  const std::size_t align_up = (64 - address % 64) % 64;
  data_ = memory_.data() + kGuard + align_up + misalign;
}

void GuardedBuffer::prefill_complement(const std::vector<unsigned char>& expected) {
  for (std::size_t i = 0; i < size_ && i < expected.size(); ++i) data_[i] = static_cast<unsigned char>(~expected[i]);
}

void GuardedBuffer::prefill_pattern(uint64_t seed) { fill_pattern(data_, size_, seed); }

std::string GuardedBuffer::check_guards() const {
  std::vector<unsigned char> pattern(memory_.size());
  fill_pattern(pattern.data(), pattern.size(), kGuardSeed);
  const std::size_t begin = static_cast<std::size_t>(data_ - memory_.data());
  const std::size_t end = begin + size_;
  for (std::size_t i = 0; i < begin; ++i)
    if (memory_[i] != pattern[i])
      return "guard before the output damaged " + std::to_string(begin - i) + " bytes before its start";
  for (std::size_t i = end; i < memory_.size(); ++i)
    if (memory_[i] != pattern[i])
      return "guard after the output damaged " + std::to_string(i - end) + " bytes past its end";
  return "";
}

std::string GuardedBuffer::check(const std::vector<unsigned char>& expected, std::size_t itemsize) const {
  std::string err = compare_bytes(data_, size_, expected, itemsize, Shape{static_cast<int64_t>(size_ / itemsize)});
  if (err.empty()) err = check_guards();
  return err;
}

const char* api_name(Api api) {
  switch (api) {
    case Api::cpp_oneshot: return "C++ tile(dst)";
    case Api::cpp_plan: return "C++ Plan";
    case Api::cpp_alloc: return "C++ tile() -> Array";
    case Api::c_oneshot: return "tessera_tile";
    case Api::c_plan: return "tessera_plan_*";
    case Api::c_alloc: return "tessera_tile_alloc";
  }
  return "?";
}

const std::vector<Api>& all_apis() {
  static const std::vector<Api> apis = {Api::cpp_oneshot, Api::cpp_plan, Api::cpp_alloc,
                                        Api::c_oneshot,   Api::c_plan,   Api::c_alloc};
  return apis;
}

namespace {

// Runs one API; returns "" or the first problem found. `expected` and `out_shape` come from ref.
std::string run_api(const View& view, const Shape& reps, Api api, std::size_t misalign, bool strided,
                    const std::vector<unsigned char>& expected, const Shape& out_shape) {
  const void* src = view.data();
  const Shape strides = strided ? view.strides : Shape{};
  const std::size_t itemsize = view.itemsize;
  const int ndim = static_cast<int>(view.shape.size());
  const int nreps = static_cast<int>(reps.size());
  const int64_t* strides_ptr = strided ? view.strides.data() : nullptr;
  const int64_t out_count = ref::count(out_shape);

  switch (api) {
    case Api::cpp_oneshot: {
      const Shape shape = dims_to_shape(tessera::tile_shape(view.shape, reps));
      if (auto e = shape_mismatch(shape, out_shape); !e.empty()) return "tile_shape: " + e;
      GuardedBuffer out(expected.size(), misalign);
      out.prefill_complement(expected);
      tessera::tile(src, view.shape, strides, itemsize, reps, out.data(), out.size());
      if (auto e = compare_bytes(out.data(), out.size(), expected, itemsize, out_shape); !e.empty()) return e;
      return out.check_guards();
    }
    case Api::cpp_plan: {
      const tessera::Plan plan(view.shape, strides, itemsize, reps);
      if (auto e = shape_mismatch(dims_to_shape(plan.shape()), out_shape); !e.empty()) return "Plan: " + e;
      if (plan.ndim() != static_cast<int>(out_shape.size())) return "Plan::ndim " + std::to_string(plan.ndim());
      if (plan.size() != out_count) return "Plan::size " + std::to_string(plan.size());
      if (plan.nbytes() != expected.size()) return "Plan::nbytes " + std::to_string(plan.nbytes());
      if (plan.itemsize() != itemsize) return "Plan::itemsize " + std::to_string(plan.itemsize());
      GuardedBuffer out(expected.size(), misalign);
      out.prefill_complement(expected);
      plan.execute(src, out.data(), out.size());
      if (auto e = compare_bytes(out.data(), out.size(), expected, itemsize, out_shape); !e.empty())
        return e + " [plan: " + plan.describe() + "]";
      return out.check_guards();
    }
    case Api::cpp_alloc: {
      const tessera::Array a = tessera::tile(src, view.shape, strides, itemsize, reps);
      if (auto e = shape_mismatch(dims_to_shape(a.shape()), out_shape); !e.empty()) return "Array: " + e;
      if (a.itemsize() != itemsize) return "Array::itemsize " + std::to_string(a.itemsize());
      if (a.nbytes() != expected.size()) return "Array::nbytes " + std::to_string(a.nbytes());
      if (a.size() != out_count) return "Array::size " + std::to_string(a.size());
      if (a.nbytes() > 0 && a.data() == nullptr) return "Array::data is null for a non-empty output";
      if (a.data() != nullptr && reinterpret_cast<std::uintptr_t>(a.data()) % 64 != 0)
        return "Array::data is not 64-byte aligned";
      return compare_bytes(static_cast<const unsigned char*>(a.data()), a.nbytes(), expected, itemsize, out_shape);
    }
    case Api::c_oneshot: {
      GuardedBuffer out(expected.size(), misalign);
      out.prefill_complement(expected);
      const tessera_status s =
          tessera_tile(src, ndim, view.shape.data(), strides_ptr, itemsize, nreps, reps.data(), out.data(), out.size());
      if (s != TESSERA_OK) return "tessera_tile status " + std::to_string(s) + ": " + tessera_last_error();
      if (auto e = compare_bytes(out.data(), out.size(), expected, itemsize, out_shape); !e.empty()) return e;
      return out.check_guards();
    }
    case Api::c_plan: {
      tessera_plan* plan = nullptr;
      tessera_status s = tessera_plan_create(ndim, view.shape.data(), strides_ptr, itemsize, nreps, reps.data(), &plan);
      if (s != TESSERA_OK) return "tessera_plan_create status " + std::to_string(s) + ": " + tessera_last_error();
      std::string err;
      int got_ndim = -1;
      int64_t got_shape[TESSERA_MAX_NDIM];
      GuardedBuffer out(expected.size(), misalign);
      out.prefill_complement(expected);
      if (tessera_plan_output_bytes(plan) != expected.size()) {
        err = "tessera_plan_output_bytes " + std::to_string(tessera_plan_output_bytes(plan));
      } else if ((s = tessera_plan_output_shape(plan, &got_ndim, got_shape)) != TESSERA_OK) {
        err = "tessera_plan_output_shape status " + std::to_string(s);
      } else if (!(err = shape_mismatch(Shape(got_shape, got_shape + got_ndim), out_shape)).empty()) {
        err = "tessera_plan_output_shape: " + err;
      } else if ((s = tessera_plan_execute(plan, src, out.data(), out.size())) != TESSERA_OK) {
        err = "tessera_plan_execute status " + std::to_string(s) + ": " + tessera_last_error();
      } else if (!(err = compare_bytes(out.data(), out.size(), expected, itemsize, out_shape)).empty()) {
        err += std::string(" [plan: ") + tessera_plan_describe(plan) + "]";
      } else {
        err = out.check_guards();
      }
      tessera_plan_destroy(plan);
      return err;
    }
    case Api::c_alloc: {
      void* data = nullptr;
      std::size_t bytes = 12345;
      int got_ndim = -1;
      int64_t got_shape[TESSERA_MAX_NDIM];
      const tessera_status s = tessera_tile_alloc(src, ndim, view.shape.data(), strides_ptr, itemsize, nreps,
                                                  reps.data(), &data, &bytes, &got_ndim, got_shape);
      if (s != TESSERA_OK) return "tessera_tile_alloc status " + std::to_string(s) + ": " + tessera_last_error();
      std::string err = shape_mismatch(Shape(got_shape, got_shape + got_ndim), out_shape);
      if (err.empty() && bytes != expected.size()) err = "tessera_tile_alloc out_bytes " + std::to_string(bytes);
      if (err.empty() && bytes > 0 && data == nullptr) err = "tessera_tile_alloc gave null data for a non-empty output";
      if (err.empty() && data != nullptr && reinterpret_cast<std::uintptr_t>(data) % 64 != 0)
        err = "tessera_tile_alloc data is not 64-byte aligned";
      if (err.empty())
        err = compare_bytes(static_cast<const unsigned char*>(data), bytes, expected, itemsize, out_shape);
      tessera_free(data);
      return err;
    }
  }
  return "unknown api";
}

}  // namespace

std::string run_and_compare(const View& view, const Shape& reps, Api api, std::size_t misalign, bool strided) {
  const Shape out_shape = ref::tile_shape(view.shape, reps);
  const std::vector<unsigned char> expected = ref::tile(view.data(), view.shape, view.strides, view.itemsize, reps);
  const std::vector<unsigned char> input_before = view.storage;
  std::string err;
  try {
    err = run_api(view, reps, api, misalign, strided, expected, out_shape);
  } catch (const std::exception& e) {
    err = std::string("threw: ") + e.what();
  }
  if (err.empty() && view.storage != input_before) err = "the input buffer was modified";
  if (err.empty()) return err;
  return std::string(api_name(api)) + ", " + view.describe() + ", reps " + to_string(reps) + ", output " +
         to_string(out_shape) + ", dst misalign " + std::to_string(misalign) + (strided ? "" : ", no strides") + ": " +
         err;
}

Case random_case(Rng& rng, const CaseLimits& limits) {
  static const std::vector<std::size_t> itemsizes = {1, 2, 3, 4, 8, 12, 16, 32};
  Shape shape, reps;
  if (rng.uniform(0, 99) < limits.small_array_percent) {
    // A small array tiled by large reps: many short repeated runs.
    shape.resize(static_cast<std::size_t>(rng.uniform(1, 3)));
    for (auto& e : shape) e = rng.uniform(1, 3);
    reps.resize(static_cast<std::size_t>(rng.uniform(1, 3)));
    for (auto& r : reps) r = rng.uniform(1, limits.max_small_array_rep);
  } else {
    shape.resize(static_cast<std::size_t>(rng.uniform(0, limits.max_ndim)));
    for (auto& e : shape) e = rng.coin(4) ? 0 : rng.uniform(1, limits.max_extent);
    reps.resize(static_cast<std::size_t>(rng.uniform(0, limits.max_ndim)));
    for (auto& r : reps) r = rng.coin(3) ? 0 : rng.uniform(1, limits.max_rep);
  }
  const std::size_t itemsize = rng.pick(itemsizes);

  // Shrink a random extent or rep (halving it) until the output fits.
  for (;;) {
    const auto bytes = static_cast<std::size_t>(ref::count(ref::tile_shape(shape, reps))) * itemsize;
    if (bytes <= limits.max_output_bytes) break;
    std::vector<int64_t*> shrinkable;
    for (auto& e : shape)
      if (e > 1) shrinkable.push_back(&e);
    for (auto& r : reps)
      if (r > 1) shrinkable.push_back(&r);
    int64_t* victim = shrinkable[static_cast<std::size_t>(rng.uniform(0, static_cast<int64_t>(shrinkable.size()) - 1))];
    *victim /= 2;
  }

  const unsigned layout = rng.coin(20) ? kArbitrary : static_cast<unsigned>(rng.uniform(0, kAllLayouts));
  Case c{make_view(rng, shape, itemsize, layout, static_cast<uint64_t>(rng.uniform(0, 1 << 30))), reps};
  return c;
}

const std::vector<LargeCase>& large_cases() {
  static const std::vector<LargeCase> list = {
      {"pattern: short rows repeated", {1021, 3}, 4, kContiguous, {1, 341}},
      {"pattern: long runs (>= 256 bytes) split across chunks", {3, 97}, 4, kContiguous, {1, 1000}},
      {"fill: one element repeated", {4099, 1}, 4, kContiguous, {1, 257}},
      {"gather: transposed view", {509, 257}, 4, kPermuted, {3, 3}},
      {"copy: all-ones reps", {1531, 1013}, 2, kContiguous, {1, 1}},
      {"itemsize 3, 3-d", {7, 13, 11}, 3, kContiguous, {17, 3, 23}},
      {"itemsize 12, reversed sub-view", {33, 41}, 12, kReversed | kSubView, {29, 7}},
      {"itemsize 16, broadcast axis", {64, 5, 3}, 16, kBroadcast, {7, 5, 5}},
      {"itemsize 32, small array large reps", {3, 5}, 32, kContiguous, {151, 59}},
      {"itemsize 1, long odd rows", {1, 4093}, 1, kContiguous, {1023, 1}},
      {"itemsize 8, 0-d input", {}, 8, kContiguous, {524287}},
      {"itemsize 2, mixed layout 4-d", {5, 7, 3, 9}, 2, kAllLayouts, {9, 5, 11, 3}},
      {"itemsize 4, arbitrary strides 3-d", {13, 11, 7}, 4, kArbitrary, {5, 9, 13}},
  };
  return list;
}

int test_scale() {
  static const int scale = [] {
    const char* env = std::getenv("TESSERA_TEST_SCALE");
    const long v = env ? std::strtol(env, nullptr, 10) : 1;
    return v >= 1 && v <= 1000 ? static_cast<int>(v) : 1;
  }();
  return scale;
}

int test_scale_offset() {
  static const int offset = [] {
    const char* env = std::getenv("TESSERA_TEST_SCALE_OFFSET");
    const long v = env ? std::strtol(env, nullptr, 10) : 0;
    return v >= 0 && v < test_scale() ? static_cast<int>(v) : 0;
  }();
  return offset;
}

bool scale_takes(int index) { return index % test_scale() == test_scale_offset(); }

std::string skipped_targets() {
  const char* env = std::getenv("TESSERA_TEST_SKIP_TARGETS");
  return env ? env : "";
}

namespace {
// The names TESSERA_TEST_SKIP_TARGETS lists.
std::vector<std::string> skip_list() {
  std::vector<std::string> skip;
  std::stringstream names(skipped_targets());
  for (std::string name; std::getline(names, name, ',');)
    if (!name.empty()) skip.push_back(name);
  return skip;
}
}  // namespace

bool target_skipped(const std::string& name) {
  const std::vector<std::string> skip = skip_list();
  return std::find(skip.begin(), skip.end(), name) != skip.end();
}

TargetGuard::~TargetGuard() { hwy::SetSupportedTargetsForTest(0); }

std::vector<int64_t> targets_to_test() {
  const std::vector<int64_t> all = hwy::SupportedAndGeneratedTargets();
  const std::vector<std::string> skip = skip_list();
  std::vector<int64_t> targets;
  for (const int64_t t : all)
    if (!target_skipped(hwy::TargetName(t))) targets.push_back(t);
  for (const std::string& name : skip) {
    const bool known = std::any_of(all.begin(), all.end(), [&](int64_t t) { return name == hwy::TargetName(t); });
    if (!known)
      throw std::runtime_error("TESSERA_TEST_SKIP_TARGETS names '" + name +
                               "', which is not a target this build compiles and this CPU runs");
  }
  if (targets.empty()) throw std::runtime_error("TESSERA_TEST_SKIP_TARGETS leaves no target to test");
  return targets;
}

int scaled(int count) {
  const int n = count / test_scale();
  return n >= 1 ? n : 1;
}

}  // namespace test
