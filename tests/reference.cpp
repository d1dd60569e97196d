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

namespace {

// The byte offset of element `index` of an array with byte `strides`.
int64_t offset_of(const Shape& index, const Shape& strides) {
  int64_t off = 0;
  for (std::size_t k = 0; k < index.size(); ++k) off += index[k] * strides[k];
  return off;
}

// Calls f(index) for every index of `shape` in C order.
template <class F>
void for_each_index(const Shape& shape, F f) {
  if (count(shape) == 0) return;
  Shape index(shape.size(), 0);
  for (;;) {
    f(index);
    std::size_t k = shape.size();
    while (k > 0 && ++index[k - 1] == shape[k - 1]) index[--k] = 0;
    if (k == 0) return;
  }
}

}  // namespace

std::vector<unsigned char> broadcast_to(const void* src, const Shape& shape, const Shape& strides_in,
                                        std::size_t itemsize, const Shape& target) {
  const Shape strides = strides_in.empty() ? contiguous_strides(shape, itemsize) : strides_in;
  const std::size_t pad = target.size() - shape.size();
  std::vector<unsigned char> out;
  out.reserve(static_cast<std::size_t>(count(target)) * itemsize);
  const auto* s = static_cast<const unsigned char*>(src);
  for_each_index(target, [&](const Shape& j) {
    int64_t off = 0;
    for (std::size_t k = 0; k < shape.size(); ++k) off += (shape[k] == 1 ? 0 : j[pad + k]) * strides[k];
    out.insert(out.end(), s + off, s + off + static_cast<int64_t>(itemsize));
  });
  return out;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, bool* ok) {
  const std::size_t n = a.size() > b.size() ? a.size() : b.size();
  Shape out(n);
  *ok = true;
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) {
      *ok = false;
      return {};
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

std::vector<unsigned char> repeat(const void* src, const Shape& shape, const Shape& strides_in, std::size_t itemsize,
                                  const Shape& counts, int axis, Shape* out_shape) {
  const Shape strides = strides_in.empty() ? contiguous_strides(shape, itemsize) : strides_in;
  const auto* s = static_cast<const unsigned char*>(src);
  // The input's elements along the repeated axis, each as a list of byte offsets: the flattened
  // input is one axis of all elements.
  std::vector<unsigned char> out;
  const auto count_of = [&](int64_t i) { return counts.size() == 1 ? counts[0] : counts[static_cast<std::size_t>(i)]; };
  if (axis < 0) {
    std::vector<int64_t> offsets;
    for_each_index(shape, [&](const Shape& j) { offsets.push_back(offset_of(j, strides)); });
    int64_t total = 0;
    for (std::size_t i = 0; i < offsets.size(); ++i)
      for (int64_t c = 0; c < count_of(static_cast<int64_t>(i)); ++c, ++total)
        out.insert(out.end(), s + offsets[i], s + offsets[i] + static_cast<int64_t>(itemsize));
    *out_shape = {total};
    return out;
  }
  const std::size_t a = static_cast<std::size_t>(axis);
  // out index -> source index along the axis.
  std::vector<int64_t> source;
  for (int64_t i = 0; i < shape[a]; ++i)
    for (int64_t c = 0; c < count_of(i); ++c) source.push_back(i);
  *out_shape = shape;
  (*out_shape)[a] = static_cast<int64_t>(source.size());
  for_each_index(*out_shape, [&](const Shape& j) {
    Shape index = j;
    index[a] = source[static_cast<std::size_t>(j[a])];
    const int64_t off = offset_of(index, strides);
    out.insert(out.end(), s + off, s + off + static_cast<int64_t>(itemsize));
  });
  return out;
}

std::vector<unsigned char> box(const std::vector<unsigned char>& whole, const Shape& shape, std::size_t itemsize,
                               const Shape& start, const Shape& extent) {
  const Shape strides = contiguous_strides(shape, itemsize);
  std::vector<unsigned char> out;
  for_each_index(extent, [&](const Shape& j) {
    Shape index = j;
    for (std::size_t k = 0; k < j.size(); ++k) index[k] += start[k];
    const int64_t off = offset_of(index, strides);
    out.insert(out.end(), whole.begin() + off, whole.begin() + off + static_cast<int64_t>(itemsize));
  });
  return out;
}

}  // namespace ref
