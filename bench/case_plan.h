// A case's tessera calls, by its op (bench/cases.h): the plan, the allocating call and the one-shot
// C call; for the reductions also the element type. Shared by tile_bench and tile_count.
#ifndef TESSERA_BENCH_CASE_PLAN_H
#define TESSERA_BENCH_CASE_PLAN_H

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <stdexcept>
#include <string>

#include "cases.h"

namespace tessera::bench {

inline tessera::Repeats repeats_of(const Case& c) { return tessera::Repeats(c.repeats.data(), c.repeats.size()); }

// The reductions' element type of the case's "dtype" (the names of tessera::dtype_name).
inline tessera::DType dtype_of(const Case& c) {
  for (int d = TESSERA_FLOAT32; d <= TESSERA_UINT64; ++d)
    if (c.dtype == tessera::dtype_name(static_cast<tessera::DType>(d))) return static_cast<tessera::DType>(d);
  throw std::invalid_argument("case \"" + c.name + "\": dtype " + c.dtype + " is not a type the reductions sum");
}

// Plan, Plan::broadcast_to, Plan::expand, Plan::repeat or a reduction's plan with the case's arguments.
inline tessera::Plan make_plan(const Case& c, const tessera::Options& options = {}) {
  const tessera::Dims shape(c.shape), strides(c.strides);
  switch (c.op) {
    case Op::tile_backward:
      return tessera::Plan::tile_backward(shape, strides, dtype_of(c), c.in_shape, c.reps, options);
    case Op::sum_to_shape: return tessera::Plan::sum_to_shape(shape, strides, dtype_of(c), c.target, options);
    case Op::repeat_backward:
      return tessera::Plan::repeat_backward(shape, strides, dtype_of(c), c.in_shape, repeats_of(c), c.axis, options);
    case Op::broadcast_to: return tessera::Plan::broadcast_to(shape, strides, c.itemsize, c.target, options);
    case Op::expand: return tessera::Plan::expand(shape, strides, c.itemsize, c.target, options);
    case Op::repeat: return tessera::Plan::repeat(shape, strides, c.itemsize, repeats_of(c), c.axis, options);
    case Op::tile: break;
  }
  return tessera::Plan(shape, strides, c.itemsize, c.reps, options);
}

// The allocating call (tessera::tile, broadcast_to, expand, repeat or a reduction) with default options.
inline tessera::Array make_array(const Case& c, const void* src) {
  const tessera::Dims shape(c.shape), strides(c.strides);
  switch (c.op) {
    case Op::tile_backward: return tessera::tile_backward(src, shape, strides, dtype_of(c), c.in_shape, c.reps);
    case Op::sum_to_shape: return tessera::sum_to_shape(src, shape, strides, dtype_of(c), c.target);
    case Op::repeat_backward:
      return tessera::repeat_backward(src, shape, strides, dtype_of(c), c.in_shape, repeats_of(c), c.axis);
    case Op::broadcast_to: return tessera::broadcast_to(src, shape, strides, c.itemsize, c.target);
    case Op::expand: return tessera::expand(src, shape, strides, c.itemsize, c.target);
    case Op::repeat: return tessera::repeat(src, shape, strides, c.itemsize, repeats_of(c), c.axis);
    case Op::tile: break;
  }
  return tessera::tile(src, shape, strides, c.itemsize, c.reps);
}

// The one-shot C call (tessera_tile, tessera_broadcast_to, tessera_expand, tessera_repeat,
// tessera_tile_backward, tessera_sum_to_shape, tessera_repeat_backward).
inline tessera_status c_one_shot(const Case& c, const void* src, void* dst, std::size_t dst_bytes) {
  const int ndim = static_cast<int>(c.shape.size());
  const int in_ndim = static_cast<int>(c.in_shape.size());
  switch (c.op) {
    case Op::tile_backward:
      return tessera_tile_backward(src, ndim, c.shape.data(), c.strides.data(), static_cast<int>(dtype_of(c)), in_ndim,
                                   c.in_shape.data(), static_cast<int>(c.reps.size()), c.reps.data(), dst, dst_bytes);
    case Op::sum_to_shape:
      return tessera_sum_to_shape(src, ndim, c.shape.data(), c.strides.data(), static_cast<int>(dtype_of(c)),
                                  static_cast<int>(c.target.size()), c.target.data(), dst, dst_bytes);
    case Op::repeat_backward:
      return tessera_repeat_backward(src, ndim, c.shape.data(), c.strides.data(), static_cast<int>(dtype_of(c)),
                                     in_ndim, c.in_shape.data(), static_cast<int64_t>(c.repeats.size()),
                                     c.repeats.data(), c.axis ? *c.axis : TESSERA_AXIS_NONE, dst, dst_bytes);
    case Op::broadcast_to:
      return tessera_broadcast_to(src, ndim, c.shape.data(), c.strides.data(), c.itemsize,
                                  static_cast<int>(c.target.size()), c.target.data(), dst, dst_bytes);
    case Op::expand:
      return tessera_expand(src, ndim, c.shape.data(), c.strides.data(), c.itemsize, static_cast<int>(c.target.size()),
                            c.target.data(), dst, dst_bytes);
    case Op::repeat:
      return tessera_repeat(src, ndim, c.shape.data(), c.strides.data(), c.itemsize,
                            static_cast<int64_t>(c.repeats.size()), c.repeats.data(),
                            c.axis ? *c.axis : TESSERA_AXIS_NONE, dst, dst_bytes);
    case Op::tile: break;
  }
  return tessera_tile(src, ndim, c.shape.data(), c.strides.data(), c.itemsize, static_cast<int>(c.reps.size()),
                      c.reps.data(), dst, dst_bytes);
}

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_CASE_PLAN_H
