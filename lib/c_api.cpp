// The C API (tessera.h): validates raw pointers and counts, calls the C++ API, and turns every
// exception into a tessera_status plus a thread-local message. No exception crosses this file.
#include "plan.hpp"

#include <cstring>
#include <new>

struct tessera_plan {
  tessera::Plan plan;
  std::string description;  // built once, so tessera_plan_describe's string lives with the plan
};

namespace {

thread_local std::string last_error;

tessera_status fail(tessera_status status, const char* message) {
  last_error = message;
  return status;
}

// Runs `body` and maps whatever it throws to a status.
template <class Body>
tessera_status guarded(const Body& body) noexcept {
  try {
    body();
    return TESSERA_OK;
  } catch (const tessera::Error& e) {
    return fail(static_cast<tessera_status>(e.status()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(TESSERA_OUT_OF_MEMORY, "tessera: out of memory");
  } catch (const std::exception& e) {
    try {
      return fail(TESSERA_INTERNAL, (std::string("tessera: internal error: ") + e.what()).c_str());
    } catch (...) {
      return TESSERA_INTERNAL;
    }
  } catch (...) {
    return fail(TESSERA_INTERNAL, "tessera: internal error: unknown exception");
  }
}

// A (count, pointer) pair from C as Dims; `what` names it in the message.
tessera::Dims to_dims(int count, const int64_t* values, const char* what, const char* count_name) {
  if (count < 0 || count > TESSERA_MAX_NDIM)
    throw tessera::InvalidArgument(std::string("tessera: ") + count_name + " = " + std::to_string(count) +
                                   " is out of range [0, " + std::to_string(TESSERA_MAX_NDIM) + "]");
  if (count > 0 && values == nullptr)
    throw tessera::InvalidArgument(std::string("tessera: ") + what + " is NULL but " + count_name + " = " +
                                   std::to_string(count));
  return count == 0 ? tessera::Dims() : tessera::Dims(values, static_cast<std::size_t>(count));
}

tessera::Dims to_strides(int ndim, const int64_t* strides) {
  return strides == nullptr ? tessera::Dims() : to_dims(ndim, strides, "strides", "ndim");
}

void require(const void* p, const char* name) {
  if (p == nullptr) throw tessera::InvalidArgument(std::string("tessera: ") + name + " is NULL");
}

void write_shape(const tessera::Dims& shape, int* out_ndim, int64_t* out_shape) {
  *out_ndim = shape.size();
  if (shape.size() > 0) std::memcpy(out_shape, shape.data(), sizeof(int64_t) * static_cast<std::size_t>(shape.size()));
}

}  // namespace

extern "C" {

tessera_status tessera_tile_shape(int ndim, const int64_t* shape, int nreps, const int64_t* reps, int* out_ndim,
                                  int64_t out_shape[TESSERA_MAX_NDIM]) {
  return guarded([&] {
    const tessera::Dims s = to_dims(ndim, shape, "shape", "ndim");
    const tessera::Dims r = to_dims(nreps, reps, "reps", "nreps");
    require(out_ndim, "out_ndim");
    require(out_shape, "out_shape");
    write_shape(tessera::tile_shape(s, r), out_ndim, out_shape);
  });
}

tessera_status tessera_tile(const void* src, int ndim, const int64_t* shape, const int64_t* strides, size_t itemsize,
                            int nreps, const int64_t* reps, void* dst, size_t dst_bytes) {
  return guarded([&] {
    tessera::tile(src, to_dims(ndim, shape, "shape", "ndim"), to_strides(ndim, strides), itemsize,
                  to_dims(nreps, reps, "reps", "nreps"), dst, dst_bytes);
  });
}

tessera_status tessera_tile_alloc(const void* src, int ndim, const int64_t* shape, const int64_t* strides,
                                  size_t itemsize, int nreps, const int64_t* reps, void** out_data, size_t* out_bytes,
                                  int* out_ndim, int64_t out_shape[TESSERA_MAX_NDIM]) {
  return guarded([&] {
    require(out_data, "out_data");
    require(out_bytes, "out_bytes");
    require(out_ndim, "out_ndim");
    require(out_shape, "out_shape");
    tessera::Array a = tessera::tile(src, to_dims(ndim, shape, "shape", "ndim"), to_strides(ndim, strides), itemsize,
                                     to_dims(nreps, reps, "reps", "nreps"));
    write_shape(a.shape(), out_ndim, out_shape);
    *out_bytes = a.nbytes();
    *out_data = a.nbytes() > 0 ? a.release() : nullptr;
  });
}

tessera_status tessera_plan_create(int ndim, const int64_t* shape, const int64_t* strides, size_t itemsize, int nreps,
                                   const int64_t* reps, tessera_plan** out_plan) {
  return guarded([&] {
    require(out_plan, "out_plan");
    tessera::Plan plan(to_dims(ndim, shape, "shape", "ndim"), to_strides(ndim, strides), itemsize,
                       to_dims(nreps, reps, "reps", "nreps"));
    std::string description = plan.describe();
    *out_plan = new tessera_plan{std::move(plan), std::move(description)};
  });
}

size_t tessera_plan_output_bytes(const tessera_plan* plan) { return plan ? plan->plan.nbytes() : 0; }

tessera_status tessera_plan_output_shape(const tessera_plan* plan, int* out_ndim, int64_t out_shape[TESSERA_MAX_NDIM]) {
  return guarded([&] {
    require(plan, "plan");
    require(out_ndim, "out_ndim");
    require(out_shape, "out_shape");
    write_shape(plan->plan.shape(), out_ndim, out_shape);
  });
}

tessera_status tessera_plan_execute(const tessera_plan* plan, const void* src, void* dst, size_t dst_bytes) {
  return guarded([&] {
    require(plan, "plan");
    plan->plan.execute(src, dst, dst_bytes);
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

}  // extern "C"
