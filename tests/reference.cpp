#include "reference.hpp"

#include <algorithm>
#include <cstring>

namespace ref {

Shape tile_shape(const Shape& shape, const Shape& reps) {
  const std::size_t n = std::max(shape.size(), reps.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Axis i of the output is axis i - (n - size) of the shorter list, or a prepended 1.
    const std::size_t shape_pad = n - shape.size();
    const std::size_t reps_pad = n - reps.size();
    const int64_t extent = i < shape_pad ? 1 : shape[i - shape_pad];
    const int64_t rep = i < reps_pad ? 1 : reps[i - reps_pad];
    out[i] = extent * rep;
  }
  return out;
}

int64_t count(const Shape& shape) {
  for (int64_t e : shape)
    if (e == 0) return 0;  // an empty axis: the other extents may be huge
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

Shape contiguous_strides(const Shape& shape, std::size_t itemsize) {
  Shape strides(shape.size());
  int64_t stride = static_cast<int64_t>(itemsize);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i] > 0 ? shape[i] : 1;  // as numpy: an empty axis does not zero the outer strides
  }
  return strides;
}

std::vector<unsigned char> tile(const void* src, const Shape& shape, const Shape& strides, std::size_t itemsize,
                                const Shape& reps) {
  const Shape out_shape = tile_shape(shape, reps);
  const std::size_t n = out_shape.size();
  const int64_t total = count(out_shape);
  std::vector<unsigned char> out(static_cast<std::size_t>(total) * itemsize);
  if (total == 0) return out;

  // Promote the input to n axes: prepended axes have extent 1 (stride irrelevant).
  const Shape in_strides = strides.empty() ? contiguous_strides(shape, itemsize) : strides;
  Shape in_shape(n, 1), in_stride(n, 0);
  const std::size_t pad = n - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i) {
    in_shape[pad + i] = shape[i];
    in_stride[pad + i] = in_strides[i];
  }

  // Walk the output in C order with an odometer; the source offset is recomputed from scratch
  // for every element, the most literal form of out[i...] = A[i % shape ...].
  const auto* base = static_cast<const unsigned char*>(src);
  Shape index(n, 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t offset = 0;
    for (std::size_t i = 0; i < n; ++i) offset += (index[i] % in_shape[i]) * in_stride[i];
    std::memcpy(out.data() + static_cast<std::size_t>(flat) * itemsize, base + offset, itemsize);
    for (std::size_t i = n; i-- > 0;) {
      if (++index[i] < out_shape[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

}  // namespace ref
