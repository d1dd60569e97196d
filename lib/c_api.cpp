// The C API (tessera.h): validates raw pointers and counts, calls the C++ API, and turns every
// exception into a tessera_status plus a thread-local message (c_api.hpp). No exception crosses
// this file. The calls without _ex are the _ex calls with default options.
#include "c_api.hpp"

#include <cstddef>
#include <cstring>
#include <functional>
#include <new>
#include <optional>

struct tessera_plan {
  tessera::Plan plan;
  std::string description;  // built once, so tessera_plan_describe's string lives with the plan
};

namespace {

thread_local std::string last_error;

// Every call converts and checks its arguments in argument order (options included, where they
// stand; tessera.h), each into a local before the call, so the error reported for several bad
// arguments is the first one's (not the compiler's choice of evaluation order). Input holds the
// input's shape and strides.
struct Input {
  tessera::Dims shape, strides;
  Input(int ndim, const int64_t* shape_, const int64_t* strides_)
      : shape(tessera::detail::c_dims(ndim, shape_, "shape", "ndim")),
        strides(strides_ == nullptr ? tessera::Dims() : tessera::detail::c_dims(ndim, strides_, "strides", "ndim")) {}
};

tessera_status create_plan(tessera_plan** out_plan, const std::function<tessera::Plan()>& make) {
  return tessera::detail::c_guarded([&] {
    tessera::Plan plan = make();
    std::string description = plan.describe();
    *out_plan = new tessera_plan{std::move(plan), std::move(description)};
  });
}

static_assert(static_cast<int>(tessera::NonTemporal::automatic) == TESSERA_NONTEMPORAL_AUTO &&
                  static_cast<int>(tessera::NonTemporal::always) == TESSERA_NONTEMPORAL_ALWAYS &&
                  static_cast<int>(tessera::NonTemporal::never) == TESSERA_NONTEMPORAL_NEVER,
              "tessera_nontemporal mirrors tessera::NonTemporal");

}  // namespace

namespace tessera::detail {

tessera_status c_fail(tessera_status status, const char* message) noexcept {
  try {
    last_error = message;
  } catch (...) {  // no memory for the message: the status still tells
  }
  return status;
}

Dims c_dims(int count, const int64_t* values, const char* what, const char* count_name) {
  if (count < 0 || count > TESSERA_MAX_NDIM)
    throw InvalidArgument(std::string("tessera: ") + count_name + " = " + std::to_string(count) +
                          " is out of range [0, " + std::to_string(TESSERA_MAX_NDIM) + "]");
  if (count > 0 && values == nullptr)
    throw InvalidArgument(std::string("tessera: ") + what + " is NULL but " + count_name + " = " +
                          std::to_string(count));
  return count == 0 ? Dims() : Dims(values, static_cast<std::size_t>(count));
}

tessera::Options c_options(const tessera_options* options) {
  tessera::Options o;
  if (options == nullptr) return o;
  const std::size_t size = options->sizeof_options;
  const auto has = [size](std::size_t offset, std::size_t bytes) { return size >= offset + bytes; };
  if (!has(offsetof(tessera_options, max_threads), sizeof(int)) || size > sizeof(tessera_options))
    throw tessera::InvalidArgument(
        "tessera: options->sizeof_options = " + std::to_string(size) + " (this tessera's tessera_options has " +
        std::to_string(sizeof(tessera_options)) + " bytes; initialize options with tessera_options_init)");
  o.max_threads = options->max_threads;
  if (has(offsetof(tessera_options, negative_reps), sizeof(int)))
    o.negative_reps = static_cast<tessera::NegativeReps>(options->negative_reps);
  if (has(offsetof(tessera_options, nontemporal), sizeof(int)))
    o.nontemporal = static_cast<tessera::NonTemporal>(options->nontemporal);
  if (has(offsetof(tessera_options, accumulate), sizeof(int))) {
    if (options->accumulate != 0 && options->accumulate != 1)
      throw tessera::InvalidArgument("tessera: options->accumulate = " + std::to_string(options->accumulate) +
                                     " (it must be 0 or 1)");
    o.accumulate = options->accumulate == 1;
  }
  return o;  // validated by the planner
}

Repeats c_repeats(int64_t nrepeats, const int64_t* repeats) {
  if (nrepeats < 0) throw InvalidArgument("tessera: nrepeats = " + std::to_string(nrepeats) + " is negative");
  if (nrepeats > 0 && repeats == nullptr)
    throw InvalidArgument("tessera: repeats is NULL but nrepeats = " + std::to_string(nrepeats));
  return Repeats(repeats, static_cast<std::size_t>(nrepeats));
}

std::optional<int> c_axis(int axis) { return axis == TESSERA_AXIS_NONE ? std::nullopt : std::optional<int>(axis); }

DType c_dtype(int dtype) {
  const auto d = static_cast<DType>(dtype);
  itemsize_of(d);  // throws InvalidArgument naming a value that is not a DType
  return d;
}

void c_require(const void* p, const char* name) {
  if (p == nullptr) throw InvalidArgument(std::string("tessera: ") + name + " is NULL");
}

void c_write_shape(const Dims& shape, int* out_ndim, int64_t* out_shape) noexcept {
  *out_ndim = shape.size();
  if (shape.size() > 0) std::memcpy(out_shape, shape.data(), sizeof(int64_t) * static_cast<std::size_t>(shape.size()));
}

}  // namespace tessera::detail

using tessera::detail::c_dims;
using tessera::detail::c_guarded;
using tessera::detail::c_require;
using tessera::detail::c_write_shape;

extern "C" {

tessera_status tessera_tile_shape(int ndim, const int64_t* shape, int nreps, const int64_t* reps, int* out_ndim,
                                  int64_t out_shape[TESSERA_MAX_NDIM]) {
  return tessera_tile_shape_ex(ndim, shape, nreps, reps, nullptr, out_ndim, out_shape);
}

tessera_status tessera_tile_shape_ex(int ndim, const int64_t* shape, int nreps, const int64_t* reps,
                                     const tessera_options* options, int* out_ndim,
                                     int64_t out_shape[TESSERA_MAX_NDIM]) {
  return c_guarded([&] {
    const tessera::Dims s = c_dims(ndim, shape, "shape", "ndim");
    const tessera::Dims r = c_dims(nreps, reps, "reps", "nreps");
    const tessera::Options o = tessera::detail::c_options(options);
    c_require(out_ndim, "out_ndim");
    c_require(out_shape, "out_shape");
    c_write_shape(tessera::tile_shape(s, r, o), out_ndim, out_shape);
  });
}

tessera_status tessera_tile(const void* src, int ndim, const int64_t* shape, const int64_t* strides, size_t itemsize,
                            int nreps, const int64_t* reps, void* dst, size_t dst_bytes) {
  return tessera_tile_ex(src, ndim, shape, strides, itemsize, nreps, reps, dst, dst_bytes, nullptr);
}

tessera_status tessera_tile_ex(const void* src, int ndim, const int64_t* shape, const int64_t* strides,
                               size_t itemsize, int nreps, const int64_t* reps, void* dst, size_t dst_bytes,
                               const tessera_options* options) {
  return c_guarded([&] {
    const Input in(ndim, shape, strides);
    const tessera::Dims r = c_dims(nreps, reps, "reps", "nreps");
    const tessera::Options o = tessera::detail::c_options(options);
    tessera::tile(src, in.shape, in.strides, itemsize, r, dst, dst_bytes, o);
  });
}

tessera_status tessera_tile_alloc(const void* src, int ndim, const int64_t* shape, const int64_t* strides,
                                  size_t itemsize, int nreps, const int64_t* reps, void** out_data, size_t* out_bytes,
                                  int* out_ndim, int64_t out_shape[TESSERA_MAX_NDIM]) {
  return tessera_tile_alloc_ex(src, ndim, shape, strides, itemsize, nreps, reps, nullptr, out_data, out_bytes,
                               out_ndim, out_shape);
}

tessera_status tessera_tile_alloc_ex(const void* src, int ndim, const int64_t* shape, const int64_t* strides,
                                     size_t itemsize, int nreps, const int64_t* reps, const tessera_options* options,
                                     void** out_data, size_t* out_bytes, int* out_ndim,
                                     int64_t out_shape[TESSERA_MAX_NDIM]) {
  return c_guarded([&] {
    const Input in(ndim, shape, strides);
    const tessera::Dims r = c_dims(nreps, reps, "reps", "nreps");
    const tessera::Options o = tessera::detail::c_options(options);
    c_require(out_data, "out_data");
    c_require(out_bytes, "out_bytes");
    c_require(out_ndim, "out_ndim");
    c_require(out_shape, "out_shape");
    tessera::Array a = tessera::tile(src, in.shape, in.strides, itemsize, r, o);
    c_write_shape(a.shape(), out_ndim, out_shape);
    *out_bytes = a.nbytes();
    *out_data = a.nbytes() > 0 ? a.release() : nullptr;
  });
}

tessera_status tessera_plan_create(int ndim, const int64_t* shape, const int64_t* strides, size_t itemsize, int nreps,
                                   const int64_t* reps, tessera_plan** out_plan) {
  return tessera_plan_create_ex(ndim, shape, strides, itemsize, nreps, reps, nullptr, out_plan);
}

tessera_status tessera_plan_create_ex(int ndim, const int64_t* shape, const int64_t* strides, size_t itemsize,
                                      int nreps, const int64_t* reps, const tessera_options* options,
                                      tessera_plan** out_plan) {
  return create_plan(out_plan, [&] {
    const Input in(ndim, shape, strides);
    const tessera::Dims r = c_dims(nreps, reps, "reps", "nreps");
    const tessera::Options o = tessera::detail::c_options(options);
    c_require(out_plan, "out_plan");
    return tessera::Plan(in.shape, in.strides, itemsize, r, o);
  });
}

tessera_status tessera_broadcast_shape(int ndim, const int64_t* shape, int target_ndim, const int64_t* target,
                                       int* out_ndim, int64_t out_shape[TESSERA_MAX_NDIM]) {
  return c_guarded([&] {
    const tessera::Dims s = c_dims(ndim, shape, "shape", "ndim");
    const tessera::Dims t = c_dims(target_ndim, target, "target", "target_ndim");
    c_require(out_ndim, "out_ndim");
    c_require(out_shape, "out_shape");
    c_write_shape(tessera::broadcast_shape(s, t), out_ndim, out_shape);
  });
}

tessera_status tessera_broadcast_to(const void* src, int ndim, const int64_t* shape, const int64_t* strides,
                                    size_t itemsize, int target_ndim, const int64_t* target, void* dst,
                                    size_t dst_bytes) {
  return tessera_broadcast_to_ex(src, ndim, shape, strides, itemsize, target_ndim, target, dst, dst_bytes, nullptr);
}

tessera_status tessera_broadcast_to_ex(const void* src, int ndim, const int64_t* shape, const int64_t* strides,
                                       size_t itemsize, int target_ndim, const int64_t* target, void* dst,
                                       size_t dst_bytes, const tessera_options* options) {
  return c_guarded([&] {
    const Input in(ndim, shape, strides);
    const tessera::Dims t = c_dims(target_ndim, target, "target", "target_ndim");
    const tessera::Options o = tessera::detail::c_options(options);
    tessera::broadcast_to(src, in.shape, in.strides, itemsize, t, dst, dst_bytes, o);
  });
}

tessera_status tessera_expand_shape(int ndim, const int64_t* shape, int target_ndim, const int64_t* target,
                                    int* out_ndim, int64_t out_shape[TESSERA_MAX_NDIM]) {
  return c_guarded([&] {
    const tessera::Dims s = c_dims(ndim, shape, "shape", "ndim");
    const tessera::Dims t = c_dims(target_ndim, target, "target", "target_ndim");
    c_require(out_ndim, "out_ndim");
    c_require(out_shape, "out_shape");
    c_write_shape(tessera::expand_shape(s, t), out_ndim, out_shape);
  });
}

tessera_status tessera_expand(const void* src, int ndim, const int64_t* shape, const int64_t* strides,
                              size_t itemsize, int target_ndim, const int64_t* target, void* dst, size_t dst_bytes) {
  return tessera_expand_ex(src, ndim, shape, strides, itemsize, target_ndim, target, dst, dst_bytes, nullptr);
}

tessera_status tessera_expand_ex(const void* src, int ndim, const int64_t* shape, const int64_t* strides,
                                 size_t itemsize, int target_ndim, const int64_t* target, void* dst,
                                 size_t dst_bytes, const tessera_options* options) {
  return c_guarded([&] {
    const Input in(ndim, shape, strides);
    const tessera::Dims t = c_dims(target_ndim, target, "target", "target_ndim");
    const tessera::Options o = tessera::detail::c_options(options);
    tessera::expand(src, in.shape, in.strides, itemsize, t, dst, dst_bytes, o);
  });
}

tessera_status tessera_repeat_shape(int ndim, const int64_t* shape, int64_t nrepeats, const int64_t* repeats,
                                    int axis, int* out_ndim, int64_t out_shape[TESSERA_MAX_NDIM]) {
  return c_guarded([&] {
    const tessera::Dims s = c_dims(ndim, shape, "shape", "ndim");
    const tessera::Repeats r = tessera::detail::c_repeats(nrepeats, repeats);
    c_require(out_ndim, "out_ndim");
    c_require(out_shape, "out_shape");
    c_write_shape(tessera::repeat_shape(s, r, tessera::detail::c_axis(axis)), out_ndim, out_shape);
  });
}

tessera_status tessera_repeat(const void* src, int ndim, const int64_t* shape, const int64_t* strides,
                              size_t itemsize, int64_t nrepeats, const int64_t* repeats, int axis, void* dst,
                              size_t dst_bytes) {
  return tessera_repeat_ex(src, ndim, shape, strides, itemsize, nrepeats, repeats, axis, dst, dst_bytes, nullptr);
}

tessera_status tessera_repeat_ex(const void* src, int ndim, const int64_t* shape, const int64_t* strides,
                                 size_t itemsize, int64_t nrepeats, const int64_t* repeats, int axis, void* dst,
                                 size_t dst_bytes, const tessera_options* options) {
  return c_guarded([&] {
    const Input in(ndim, shape, strides);
    const tessera::Repeats r = tessera::detail::c_repeats(nrepeats, repeats);
    const tessera::Options o = tessera::detail::c_options(options);
    tessera::repeat(src, in.shape, in.strides, itemsize, r, tessera::detail::c_axis(axis), dst, dst_bytes, o);
  });
}

tessera_status tessera_plan_create_broadcast_to(int ndim, const int64_t* shape, const int64_t* strides,
                                                size_t itemsize, int target_ndim, const int64_t* target,
                                                const tessera_options* options, tessera_plan** out_plan) {
  return create_plan(out_plan, [&] {
    const Input in(ndim, shape, strides);
    const tessera::Dims t = c_dims(target_ndim, target, "target", "target_ndim");
    const tessera::Options o = tessera::detail::c_options(options);
    c_require(out_plan, "out_plan");
    return tessera::Plan::broadcast_to(in.shape, in.strides, itemsize, t, o);
  });
}

tessera_status tessera_plan_create_expand(int ndim, const int64_t* shape, const int64_t* strides, size_t itemsize,
                                          int target_ndim, const int64_t* target, const tessera_options* options,
                                          tessera_plan** out_plan) {
  return create_plan(out_plan, [&] {
    const Input in(ndim, shape, strides);
    const tessera::Dims t = c_dims(target_ndim, target, "target", "target_ndim");
    const tessera::Options o = tessera::detail::c_options(options);
    c_require(out_plan, "out_plan");
    return tessera::Plan::expand(in.shape, in.strides, itemsize, t, o);
  });
}

tessera_status tessera_plan_create_repeat(int ndim, const int64_t* shape, const int64_t* strides, size_t itemsize,
                                          int64_t nrepeats, const int64_t* repeats, int axis,
                                          const tessera_options* options, tessera_plan** out_plan) {
  return create_plan(out_plan, [&] {
    const Input in(ndim, shape, strides);
    const tessera::Repeats r = tessera::detail::c_repeats(nrepeats, repeats);
    const tessera::Options o = tessera::detail::c_options(options);
    c_require(out_plan, "out_plan");
    return tessera::Plan::repeat(in.shape, in.strides, itemsize, r, tessera::detail::c_axis(axis), o);
  });
}

static_assert(TESSERA_UINT64 == static_cast<int>(tessera::DType::uint64), "tessera_dtype mirrors tessera::DType");

tessera_status tessera_tile_backward(const void* grad_out, int ndim, const int64_t* shape, const int64_t* strides,
                                     int dtype, int in_ndim, const int64_t* in_shape, int nreps, const int64_t* reps,
                                     void* grad_in, size_t grad_in_bytes) {
  return tessera_tile_backward_ex(grad_out, ndim, shape, strides, dtype, in_ndim, in_shape, nreps, reps, grad_in,
                                  grad_in_bytes, nullptr);
}

tessera_status tessera_tile_backward_ex(const void* grad_out, int ndim, const int64_t* shape, const int64_t* strides,
                                        int dtype, int in_ndim, const int64_t* in_shape, int nreps,
                                        const int64_t* reps, void* grad_in, size_t grad_in_bytes,
                                        const tessera_options* options) {
  return c_guarded([&] {
    const Input in(ndim, shape, strides);
    const tessera::DType dt = tessera::detail::c_dtype(dtype);
    const tessera::Dims s = c_dims(in_ndim, in_shape, "in_shape", "in_ndim");
    const tessera::Dims r = c_dims(nreps, reps, "reps", "nreps");
    const tessera::Options o = tessera::detail::c_options(options);
    tessera::tile_backward(grad_out, in.shape, in.strides, dt, s, r, grad_in, grad_in_bytes, o);
  });
}

tessera_status tessera_sum_to_shape(const void* src, int ndim, const int64_t* shape, const int64_t* strides, int dtype,
                                    int target_ndim, const int64_t* target, void* dst, size_t dst_bytes) {
  return tessera_sum_to_shape_ex(src, ndim, shape, strides, dtype, target_ndim, target, dst, dst_bytes, nullptr);
}

tessera_status tessera_sum_to_shape_ex(const void* src, int ndim, const int64_t* shape, const int64_t* strides,
                                       int dtype, int target_ndim, const int64_t* target, void* dst, size_t dst_bytes,
                                       const tessera_options* options) {
  return c_guarded([&] {
    const Input in(ndim, shape, strides);
    const tessera::DType dt = tessera::detail::c_dtype(dtype);
    const tessera::Dims t = c_dims(target_ndim, target, "target", "target_ndim");
    const tessera::Options o = tessera::detail::c_options(options);
    tessera::sum_to_shape(src, in.shape, in.strides, dt, t, dst, dst_bytes, o);
  });
}

tessera_status tessera_repeat_backward(const void* grad_out, int ndim, const int64_t* shape, const int64_t* strides,
                                       int dtype, int in_ndim, const int64_t* in_shape, int64_t nrepeats,
                                       const int64_t* repeats, int axis, void* grad_in, size_t grad_in_bytes) {
  return tessera_repeat_backward_ex(grad_out, ndim, shape, strides, dtype, in_ndim, in_shape, nrepeats, repeats, axis,
                                    grad_in, grad_in_bytes, nullptr);
}

tessera_status tessera_repeat_backward_ex(const void* grad_out, int ndim, const int64_t* shape,
                                          const int64_t* strides, int dtype, int in_ndim, const int64_t* in_shape,
                                          int64_t nrepeats, const int64_t* repeats, int axis, void* grad_in,
                                          size_t grad_in_bytes, const tessera_options* options) {
  return c_guarded([&] {
    const Input in(ndim, shape, strides);
    const tessera::DType dt = tessera::detail::c_dtype(dtype);
    const tessera::Dims s = c_dims(in_ndim, in_shape, "in_shape", "in_ndim");
    const tessera::Repeats r = tessera::detail::c_repeats(nrepeats, repeats);
    const tessera::Options o = tessera::detail::c_options(options);
    tessera::repeat_backward(grad_out, in.shape, in.strides, dt, s, r, tessera::detail::c_axis(axis), grad_in, grad_in_bytes, o);
  });
}

tessera_status tessera_plan_create_tile_backward(int ndim, const int64_t* shape, const int64_t* strides, int dtype,
                                                 int in_ndim, const int64_t* in_shape, int nreps, const int64_t* reps,
                                                 const tessera_options* options, tessera_plan** out_plan) {
  return create_plan(out_plan, [&] {
    const Input in(ndim, shape, strides);
    const tessera::DType dt = tessera::detail::c_dtype(dtype);
    const tessera::Dims s = c_dims(in_ndim, in_shape, "in_shape", "in_ndim");
    const tessera::Dims r = c_dims(nreps, reps, "reps", "nreps");
    const tessera::Options o = tessera::detail::c_options(options);
    c_require(out_plan, "out_plan");
    return tessera::Plan::tile_backward(in.shape, in.strides, dt, s, r, o);
  });
}

tessera_status tessera_plan_create_sum_to_shape(int ndim, const int64_t* shape, const int64_t* strides, int dtype,
                                                int target_ndim, const int64_t* target, const tessera_options* options,
                                                tessera_plan** out_plan) {
  return create_plan(out_plan, [&] {
    const Input in(ndim, shape, strides);
    const tessera::DType dt = tessera::detail::c_dtype(dtype);
    const tessera::Dims t = c_dims(target_ndim, target, "target", "target_ndim");
    const tessera::Options o = tessera::detail::c_options(options);
    c_require(out_plan, "out_plan");
    return tessera::Plan::sum_to_shape(in.shape, in.strides, dt, t, o);
  });
}

tessera_status tessera_plan_create_repeat_backward(int ndim, const int64_t* shape, const int64_t* strides, int dtype,
                                                   int in_ndim, const int64_t* in_shape, int64_t nrepeats,
                                                   const int64_t* repeats, int axis, const tessera_options* options,
                                                   tessera_plan** out_plan) {
  return create_plan(out_plan, [&] {
    const Input in(ndim, shape, strides);
    const tessera::DType dt = tessera::detail::c_dtype(dtype);
    const tessera::Dims s = c_dims(in_ndim, in_shape, "in_shape", "in_ndim");
    const tessera::Repeats r = tessera::detail::c_repeats(nrepeats, repeats);
    const tessera::Options o = tessera::detail::c_options(options);
    c_require(out_plan, "out_plan");
    return tessera::Plan::repeat_backward(in.shape, in.strides, dt, s, r, tessera::detail::c_axis(axis), o);
  });
}

size_t tessera_dtype_itemsize(int dtype) {
  return dtype >= 0 && dtype <= TESSERA_UINT64 ? tessera::itemsize_of(static_cast<tessera::DType>(dtype)) : 0;
}

const char* tessera_dtype_name(int dtype) {
  return dtype >= 0 && dtype <= TESSERA_UINT64 ? tessera::dtype_name(static_cast<tessera::DType>(dtype)) : "";
}

size_t tessera_plan_output_bytes(const tessera_plan* plan) { return plan ? plan->plan.nbytes() : 0; }

tessera_status tessera_plan_output_shape(const tessera_plan* plan, int* out_ndim, int64_t out_shape[TESSERA_MAX_NDIM]) {
  return c_guarded([&] {
    c_require(plan, "plan");
    c_require(out_ndim, "out_ndim");
    c_require(out_shape, "out_shape");
    c_write_shape(plan->plan.shape(), out_ndim, out_shape);
  });
}

tessera_status tessera_plan_execute(const tessera_plan* plan, const void* src, void* dst, size_t dst_bytes) {
  return c_guarded([&] {
    c_require(plan, "plan");
    plan->plan.execute(src, dst, dst_bytes);
  });
}

tessera_status tessera_plan_execute_region(const tessera_plan* plan, const void* src, const int64_t* start,
                                           const int64_t* extent, void* dst, size_t dst_bytes) {
  return c_guarded([&] {
    c_require(plan, "plan");
    const int n = plan->plan.ndim();
    const tessera::Dims st = c_dims(n, start, "start", "the plan's output ndim");
    const tessera::Dims ex = c_dims(n, extent, "extent", "the plan's output ndim");
    plan->plan.execute_region(src, st, ex, dst, dst_bytes);
  });
}

const char* tessera_plan_describe(const tessera_plan* plan) {
  return plan ? plan->description.c_str() : "";
}

void tessera_plan_destroy(tessera_plan* plan) { delete plan; }

const char* tessera_last_error(void) { return last_error.c_str(); }

const char* tessera_version(void) {
#define TESSERA_STR2(x) #x
#define TESSERA_STR(x) TESSERA_STR2(x)
  return TESSERA_STR(TESSERA_VERSION_MAJOR) "." TESSERA_STR(TESSERA_VERSION_MINOR) "." TESSERA_STR(TESSERA_VERSION_PATCH);
#undef TESSERA_STR
#undef TESSERA_STR2
}

const char* tessera_active_target(void) { return tessera::active_target(); }

tessera_status tessera_set_block_cache_limit(size_t bytes) {
  return c_guarded([&] { tessera::set_block_cache_limit(bytes); });
}

tessera_status tessera_set_block_cache_max_age(double seconds) {
  return c_guarded([&] { tessera::set_block_cache_max_age(seconds); });
}

}  // extern "C"
