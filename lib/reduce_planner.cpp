// The reductions' planner: a gradient's arguments -> ReducePlan (reduce.hpp). The forward
// planner's steps check the forward operation's arguments and give the shape the gradient must
// have (tile_shape, repeat_shape); then the gradient's axes become the problem's kept and reduced
// axes, and plan_problem simplifies them and chooses the path and the work items.
#include "reduce.hpp"

#include "error.hpp"
#include "planner.hpp"

#include <algorithm>
#include <sstream>
#include <string>

namespace tessera::detail {
namespace {

// The element count of a shape, as the family counts it: a negative extent is an error naming it;
// a 0 anywhere gives 0 whatever the other extents; otherwise an overflow is an error.
int64_t product(const Dims& shape, const char* what) {
  for (int i = 0; i < shape.size(); ++i)
    if (shape[i] < 0) invalid(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(shape[i]) + " is negative");
  for (int i = 0; i < shape.size(); ++i)
    if (shape[i] == 0) return 0;
  int64_t n = 1;
  for (int i = 0; i < shape.size(); ++i)
    if (__builtin_mul_overflow(n, shape[i], &n)) overflow(std::string(what) + " " + dims_str(shape) + ": the element count overflows int64");
  return n;
}

// a * b for a stride, wrapping: a gradient whose byte span overflows int64 cannot exist in memory,
// so the value is never used to address data (the caller's guarantee, tessera.h); a plan of such a
// shape is still a valid plan (it fails later, e.g. on the buffer's size), as the family's are.
int64_t stride_product(int64_t a, int64_t b, const char*) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// ceil(x / d) for x >= 0, d > 0, without overflow.
int64_t ceil_div(int64_t x, int64_t d) { return x == 0 ? 0 : (x - 1) / d + 1; }

// C-contiguous element strides of a shape.
void contiguous(const Dims& shape, int64_t* st) {
  const bool empty = count_of(shape) == 0;  // then the strides are never used: any values do
  int64_t s = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    st[i] = empty ? 0 : s;
    if (!empty) s *= shape[i];  // the count fits int64 (checked)
  }
}

// The gradient in: its shape, byte strides (C-contiguous if empty) and dtype; the result's shape.
ReducePlan init_reduce(ReduceOp op, const Dims& shape, const Dims& strides, DType dtype, const Dims& out_shape,
                       const Options& options) {
  validate_options(options);
  const std::size_t isz = itemsize_of(dtype);  // throws for a bad dtype
  ReducePlan r;
  r.op = op;
  r.dtype = dtype;
  r.options = options;
  r.itemsize = isz;
  const int64_t in_count = product(shape, "the gradient's shape");
  // Its byte size must fit int64 whatever its strides (numpy asks the same of every array, a
  // zero-stride view included): the planner then multiplies counts of real parts (a complex
  // element is two) without overflow.
  int64_t in_bytes = 0;
  if (__builtin_mul_overflow(in_count, static_cast<int64_t>(isz), &in_bytes))
    overflow("the gradient's byte size " + dims_str(shape) + " x " + std::to_string(isz) + " B overflows int64");
  if (!strides.empty() && strides.size() != shape.size())
    invalid("strides has " + std::to_string(strides.size()) + " values but shape has " +
            std::to_string(shape.size()) + " (give one byte stride per axis, or none for C-contiguous)");
  r.grad_shape = shape;
  if (strides.empty()) {
    int64_t st[max_ndim];
    contiguous(shape, st);
    for (int i = 0; i < shape.size(); ++i) st[i] *= static_cast<int64_t>(isz);  // within in_bytes (checked)
    r.grad_strides = Dims(st, static_cast<std::size_t>(shape.size()));
  } else if (in_count == 0) {  // an empty gradient's strides are never used: any values are valid
    r.grad_strides = Dims(std::vector<int64_t>(static_cast<std::size_t>(shape.size()), 0));
  } else {
    r.grad_strides = strides;
  }
  r.input_size = in_count;
  r.out_shape = out_shape;
  r.out_size = product(out_shape, "the result's shape");
  int64_t bytes = 0;
  if (__builtin_mul_overflow(r.out_size, static_cast<int64_t>(isz), &bytes))
    overflow("the result's byte size " + dims_str(out_shape) + " x " + std::to_string(isz) + " B overflows int64");
  r.nbytes = static_cast<std::size_t>(bytes);
  r.problem.elem = elem_of(dtype);
  r.problem.elsize = (dtype == DType::complex64 || dtype == DType::complex128) ? isz / 2 : isz;
  return r;
}


void push(ReduceProblem& p, int64_t extent, int64_t src_stride, int64_t dst_stride, bool kept) {
  p.axes[p.naxes++] = RAxis{extent, src_stride, dst_stride, kept};
}

// A complex element: its real parts along an innermost kept axis of 2; the kept axes' output
// strides count real parts.
void finish_axes(ReducePlan& r) {
  if (r.dtype != DType::complex64 && r.dtype != DType::complex128) return;
  ReduceProblem& p = r.problem;
  for (int i = 0; i < p.naxes; ++i) p.axes[i].dst_stride *= 2;
  push(p, 2, static_cast<int64_t>(p.elsize), 1, true);
}

// Plans the problem unless it is a segment plan (the executor plans each segment).
ReducePlan finish(ReducePlan&& r) {
  finish_axes(r);
  const int64_t out_bytes = static_cast<int64_t>(itemsize_of(r.dtype)) * count_of(r.out_shape);  // checked
  r.problem.stream = r.options.nontemporal == NonTemporal::always ||
                     (r.options.nontemporal == NonTemporal::automatic && out_bytes >= stream_min_bytes());
  if (r.seg_axis < 0) plan_problem(r.problem);
  else r.problem.path = ReducePath::segments;
  r.problem.out_elems = count_of(r.out_shape) * ((r.dtype == DType::complex64 || r.dtype == DType::complex128) ? 2 : 1);
  if (r.problem.out_elems == 0) r.problem.path = ReducePath::none;
  return r;
}

void check_grad_shape(const Dims& grad, const Dims& expected, const char* op) {
  if (grad.size() != expected.size())
    invalid(std::string(op) + ": the gradient has " + std::to_string(grad.size()) + " axes " + dims_str(grad) +
            " but the forward output has " + std::to_string(expected.size()) + " " + dims_str(expected));
  for (int i = 0; i < grad.size(); ++i)
    if (grad[i] != expected[i])
      invalid(std::string(op) + ": the gradient's axis " + std::to_string(i) + " has extent " +
              std::to_string(grad[i]) + " but the forward output's has " + std::to_string(expected[i]) + " " +
              dims_str(expected));
}

}  // namespace

Elem elem_of(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32: case DType::complex64: return Elem::f32;
    case DType::float64: case DType::complex128: return Elem::f64;
    case DType::float16: return Elem::f16;
    case DType::bfloat16: return Elem::bf16;
    case DType::int8: case DType::uint8: return Elem::u8;
    case DType::int16: case DType::uint16: return Elem::u16;
    case DType::int32: case DType::uint32: return Elem::u32;
    case DType::int64: case DType::uint64: return Elem::u64;
  }
  return Elem::u8;
}

std::size_t acc_size(Elem elem) noexcept {
  switch (elem) {
    case Elem::f32: case Elem::f64: case Elem::u64: return 8;
    case Elem::f16: case Elem::bf16: case Elem::u32: return 4;
    case Elem::u16: return 2;
    case Elem::u8: return 1;
  }
  return 8;
}

void plan_problem(ReduceProblem& p) {
  // Drop extent-1 axes; an extent-0 axis empties the output (kept) or the sums (reduced).
  int n = 0;
  bool kept_empty = false, reduced_empty = false;
  for (int i = 0; i < p.naxes; ++i) (p.axes[i].kept ? kept_empty : reduced_empty) |= p.axes[i].extent == 0;
  if (kept_empty || reduced_empty) {  // no multiplication: the other extents may be anything
    p.out_elems = kept_empty ? 0 : 1;
    p.nred = 0;
    p.path = kept_empty ? ReducePath::none : ReducePath::zeros;
    return;
  }
  p.out_elems = 1;
  p.nred = 1;
  for (int i = 0; i < p.naxes; ++i) {  // both products divide the gradient's count, which fits
    const RAxis a = p.axes[i];
    (a.kept ? p.out_elems : p.nred) *= a.extent;
    if (a.extent != 1) p.axes[n++] = a;
  }
  p.naxes = n;
  // Merge an outer axis into its inner neighbour of the same kind when together they are one
  // affine walk (the lexicographic order of the reduced addends is unchanged by a merge).
  n = 0;
  for (int i = 0; i < p.naxes; ++i) {
    const RAxis a = p.axes[i];
    if (n > 0) {
      RAxis& o = p.axes[n - 1];
      int64_t span = 0;
      if (o.kept == a.kept && !__builtin_mul_overflow(a.extent, a.src_stride, &span) && o.src_stride == span &&
          (!a.kept || o.dst_stride == a.extent * a.dst_stride)) {  // dst: within the output's count
        o = RAxis{o.extent * a.extent, a.src_stride, a.dst_stride, a.kept};
        continue;
      }
    }
    p.axes[n++] = a;
  }
  p.naxes = n;
  const int64_t es = static_cast<int64_t>(p.elsize);
  const RAxis* last = n > 0 ? &p.axes[n - 1] : nullptr;
  const RAxis* before = n > 1 ? &p.axes[n - 2] : nullptr;
  int run_axis = -1;  // periodic: the run's axis
  p.width = 1;
  if (last && last->kept && last->src_stride == es && last->extent < kFoldMaxWidth && before && !before->kept &&
      before->src_stride == last->extent * es && before->extent * last->extent >= 4 * kPeriodicSlots) {
    p.path = ReducePath::periodic;  // a narrow kept row folded
    p.width = last->extent;
    run_axis = n - 2;
  } else if (last && !last->kept && last->src_stride == es && last->extent >= kPeriodicSlots) {
    p.path = ReducePath::periodic;  // a contiguous reduced run
    run_axis = n - 1;
  } else if (last && last->kept && last->src_stride == es) {
    p.path = ReducePath::lanes;
  } else if (last && !last->kept && last->src_stride == es && last->extent >= 2 && last->extent <= 4 && before &&
             before->kept && before->src_stride == last->extent * es && p.nred == last->extent) {
    p.path = ReducePath::interleaved;
  } else {
    p.path = ReducePath::strided;
  }
  p.nouter = p.nreduced = 0;
  if (p.path == ReducePath::periodic) {
    const int inner_kept = p.width > 1 ? n - 1 : -1;
    for (int i = 0; i < n; ++i) {
      if (i == run_axis || i == inner_kept) continue;
      if (p.axes[i].kept) p.outer[p.nouter++] = i;
      else p.reduced[p.nreduced++] = i;
    }
    p.run = p.axes[run_axis].extent;
    p.run_stride = p.axes[run_axis].src_stride;
    p.inner_stride = es;
    p.slots = kPeriodicSlots;
    while (p.slots % p.width != 0) p.slots += kPeriodicSlots;  // lcm(w, 16)
    const int64_t blocks = ceil_div(p.run * p.width, p.slots) * (p.nred / p.run);
    p.nleaves = ceil_div(blocks, kLeaf);
    p.strip = p.width;
    p.inner_dst_stride = p.width > 1 ? p.axes[n - 1].dst_stride : 1;
    p.nitems = p.out_elems / p.width;
    return;
  }
  int inner = -1;  // the innermost kept axis: the item's strip runs along it
  for (int i = n - 1; i >= 0 && inner < 0; --i)
    if (p.axes[i].kept) inner = i;
  for (int i = 0; i < n; ++i) {
    if (i == inner) continue;
    if (p.axes[i].kept) p.outer[p.nouter++] = i;
    else p.reduced[p.nreduced++] = i;
  }
  p.width = inner < 0 ? 1 : p.axes[inner].extent;
  p.inner_stride = inner < 0 ? es : p.axes[inner].src_stride;
  p.inner_dst_stride = inner < 0 ? 1 : p.axes[inner].dst_stride;
  p.nleaves = ceil_div(p.nred, kLeaf);
  if (p.path == ReducePath::interleaved) {
    p.run = last->extent;
    p.nleaves = 1;
  }
  // Strip: long, so that each addend row streams (prefetchers follow long sequential runs), with
  // the counter's rows (bit_width(nleaves) + 3 of them) in 512 KiB of L2.
  int rows = 3;
  for (uint64_t l = static_cast<uint64_t>(p.nleaves); l; l >>= 1) ++rows;
  int64_t strip = (int64_t{512} << 10) / (rows * static_cast<int64_t>(acc_size(p.elem)));
  strip = std::clamp<int64_t>(strip / 64 * 64, 64, int64_t{1} << 16);
  p.strip = std::min(strip, p.width);
  p.nitems = p.out_elems / p.width * ceil_div(p.width, p.strip);
}

ReducePlan make_tile_backward(const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                              const Dims& reps, const Options& options) {
  Options forward = options;
  forward.accumulate = false;
  const Dims expected = tile_shape(in_shape, reps, forward);  // checks in_shape and reps
  ReducePlan r = init_reduce(ReduceOp::tile_backward, shape, strides, dtype, in_shape, options);
  check_grad_shape(shape, expected, "tile_backward");
  r.reps = reps;
  const int D = expected.size(), n = in_shape.size(), d = reps.size();
  int64_t dst[max_ndim];
  contiguous(in_shape, dst);
  for (int i = 0; i < D; ++i) {
    const int64_t s = i - (D - n) >= 0 ? in_shape[i - (D - n)] : 1;
    int64_t rep = i - (D - d) >= 0 ? reps[i - (D - d)] : 1;
    if (rep < 0) rep = 0;  // clamp_to_zero (tile_shape has checked the policy)
    const int64_t g = r.grad_strides[i];
    if (rep != 1) push(r.problem, rep, rep > 1 && s > 0 ? stride_product(s, g, "tile_backward: a replica's byte stride") : 0, 0, false);
    if (i - (D - n) >= 0) push(r.problem, s, g, dst[i - (D - n)], true);
  }
  return finish(std::move(r));
}

ReducePlan make_sum_to_shape(const Dims& shape, const Dims& strides, DType dtype, const Dims& target,
                             const Options& options) {
  ReducePlan r = init_reduce(ReduceOp::sum_to_shape, shape, strides, dtype, target, options);
  r.target = target;
  const int m = shape.size(), k = target.size();
  if (k > m)
    invalid("sum_to_shape: the target " + dims_str(target) + " has " + std::to_string(k) +
            " axes, more than the input's " + std::to_string(m) + " " + dims_str(shape));
  int64_t dst[max_ndim];
  contiguous(target, dst);
  for (int i = 0; i < m; ++i) {
    const int j = i - (m - k);
    const int64_t t = j >= 0 ? target[j] : 1;
    if (t == shape[i]) {
      push(r.problem, shape[i], r.grad_strides[i], j >= 0 ? dst[j] : 0, true);
    } else if (t == 1) {
      push(r.problem, shape[i], r.grad_strides[i], 0, false);
    } else {
      invalid("sum_to_shape: target axis " + std::to_string(j) + " has extent " + std::to_string(t) +
              " but the input's axis " + std::to_string(i) + " has " + std::to_string(shape[i]) +
              " (it must be equal, or 1 to sum over) — input " + dims_str(shape) + ", target " +
              dims_str(target));
    }
  }
  return finish(std::move(r));
}

ReducePlan make_repeat_backward(const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                                const int64_t* repeats, int64_t count, bool has_axis, int axis,
                                const Options& options) {
  Options forward = options;
  forward.accumulate = false;
  CopyPlan f;  // the forward repeat's checks, output shape and counts
  init_input(f, in_shape, Dims(), 1, forward);
  nest_repeat(f, repeats, count, has_axis, axis);
  size_output(f);
  ReducePlan r = init_reduce(ReduceOp::repeat_backward, shape, strides, dtype, in_shape, options);
  check_grad_shape(shape, f.out_shape, "repeat_backward");
  r.axis = f.axis;
  r.repeats = f.repeats;
  const bool segments = f.repeats == kSegmentReps;
  if (segments) r.prefix = f.prefix;
  int64_t dst[max_ndim];
  contiguous(in_shape, dst);
  const auto push_axis = [&](int64_t extent, int64_t g, int64_t dst_stride) {
    if (segments) {
      r.seg_axis = r.problem.naxes;
      push(r.problem, extent, 0, dst_stride, true);
      r.seg_red = r.problem.naxes;
      push(r.problem, 0, g, 0, false);
      r.seg_stride = g;
    } else {
      push(r.problem, extent, f.repeats > 1 && extent > 0 ? stride_product(f.repeats, g, "repeat_backward: an element's byte stride") : g, dst_stride, true);
      push(r.problem, f.repeats, g, 0, false);
    }
  };
  if (f.axis < 0) {  // the flattened input: one axis of input_size elements
    push_axis(f.input_size, r.grad_strides.size() ? r.grad_strides[0] : 0, 1);
  } else {
    for (int i = 0; i < in_shape.size(); ++i) {
      if (i == f.axis) push_axis(in_shape[i], r.grad_strides[i], dst[i]);
      else push(r.problem, in_shape[i], r.grad_strides[i], dst[i], true);
    }
  }
  return finish(std::move(r));
}

const char* reduce_path_name(const ReducePlan& r) noexcept {
  return kReducePathNames[static_cast<int>(r.problem.path)];
}

std::vector<const char*> reduce_path_names() {
  return std::vector<const char*>(kReducePathNames + 1, kReducePathNames + kReducePathCount);
}

std::string describe_reduce(const ReducePlan& r) {
  std::ostringstream s;
  static const char* const ops[] = {"tile_backward", "sum_to_shape", "repeat_backward"};
  s << ops[static_cast<int>(r.op)] << " plan: gradient " << dims_str(r.grad_shape) << " strides "
    << dims_str(r.grad_strides) << " B, dtype " << dtype_name(r.dtype);
  if (r.op == ReduceOp::tile_backward) s << ", reps " << dims_str(r.reps);
  if (r.op == ReduceOp::repeat_backward) {
    if (r.repeats == kSegmentReps) s << ", " << r.prefix.size() - 1 << " per-element repeats";
    else s << ", repeats " << r.repeats;
    s << (r.axis < 0 ? std::string(" of the flattened input") : " along axis " + std::to_string(r.axis));
  }
  s << " -> result " << dims_str(r.out_shape) << (r.options.accumulate ? " (accumulated)" : "") << "\n";
  const ReduceProblem& p = r.problem;
  for (int i = 0; i < p.naxes; ++i) {
    const RAxis& a = p.axes[i];
    if (r.seg_axis == i) {
      s << "  kept " << a.extent << " x (segments of the counts, dst stride " << a.dst_stride << ")\n";
    } else if (r.seg_red == i) {
      s << "  summed: each segment's count x (src stride " << a.src_stride << " B)\n";
    } else {
      s << "  " << (a.kept ? "kept " : "summed ") << a.extent << " x (src stride " << a.src_stride << " B"
        << (a.kept ? ", dst stride " + std::to_string(a.dst_stride) : std::string()) << ")\n";
    }
  }
  s << "  kernel: " << kReducePathNames[static_cast<int>(p.path)];
  if (p.path == ReducePath::periodic)
    s << " (runs of " << p.run << (p.width > 1 ? " rows of " + std::to_string(p.width) : std::string())
      << ", " << p.slots << " slots, " << p.nleaves << " leaves of " << kLeaf << " blocks per output)";
  else if (p.path != ReducePath::none && p.path != ReducePath::zeros && p.path != ReducePath::segments)
    s << " (" << p.nred << " addends per output element, " << p.nleaves << " leaves, " << p.nitems
      << " items of up to " << p.strip << " elements)";
  return s.str();
}

}  // namespace tessera::detail
