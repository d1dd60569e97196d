// A plain scalar reference for tile, written from the definition and independent of lib/:
//   promote the shorter of shape and reps by prepending 1s;
//   out_shape[i] = shape[i] * reps[i];
//   out[i0, i1, ...] = A[i0 % shape[0], i1 % shape[1], ...]
// reading each element through byte strides and writing a C-contiguous byte vector.
// Used only by the tests; no overflow checks (tests keep sizes small).
#ifndef TESSERA_TESTS_REFERENCE_HPP
#define TESSERA_TESTS_REFERENCE_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ref {

using Shape = std::vector<int64_t>;

/// numpy.tile's output shape.
Shape tile_shape(const Shape& shape, const Shape& reps);

/// Product of the extents (1 for a 0-d shape).
int64_t count(const Shape& shape);

/// C-contiguous byte strides of `shape` for `itemsize`-byte elements.
Shape contiguous_strides(const Shape& shape, std::size_t itemsize);

/// tile(A, reps) as C-contiguous bytes. `src` points at element (0, ..., 0); `strides` are in
/// bytes (empty means C-contiguous).
std::vector<unsigned char> tile(const void* src, const Shape& shape, const Shape& strides, std::size_t itemsize,
                                const Shape& reps);

/// numpy.broadcast_to(A, target).copy() as C-contiguous bytes: out[j] = A[j aligned to A's
/// trailing axes, 0 where A's extent is 1]. Preconditions: the shapes broadcast.
std::vector<unsigned char> broadcast_to(const void* src, const Shape& shape, const Shape& strides,
                                        std::size_t itemsize, const Shape& target);

/// The numpy broadcast of two shapes (ONNX Expand's output shape); an empty result and *ok false
/// if they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, bool* ok);

/// numpy.repeat(A, counts, axis) as C-contiguous bytes (axis < 0: the flattened input, C order;
/// counts of size 1 apply to every element) and its shape in *out_shape. Preconditions: valid
/// counts (non-negative, 1 or one per element).
std::vector<unsigned char> repeat(const void* src, const Shape& shape, const Shape& strides, std::size_t itemsize,
                                  const Shape& counts, int axis, Shape* out_shape);

/// The C-contiguous box [start, start + extent) of a C-contiguous array of `shape`.
std::vector<unsigned char> box(const std::vector<unsigned char>& whole, const Shape& shape, std::size_t itemsize,
                               const Shape& start, const Shape& extent);

}  // namespace ref

#endif  // TESSERA_TESTS_REFERENCE_HPP
