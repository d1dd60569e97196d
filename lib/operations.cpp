// The operation table (operations.hpp) and each copying operation's nest step (planner.hpp's
// step 2): the operation's promotion rule and checks, which give the output shape and one NestAxis
// per output axis.
#include "operations.hpp"

#include "error.hpp"
#include "kernels/kernels.hpp"
#include "operation_info.hpp"
#include "parallel.hpp"
#include "planner.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <type_traits>
#include <vector>

namespace tessera::detail {

// ---- The nest steps -------------------------------------------------------------------------

void nest_tile(CopyPlan& p, const Dims& given_reps) {
  p.op = Operation::tile;
  int64_t r[max_ndim];
  for (int i = 0; i < given_reps.size(); ++i) {
    r[i] = given_reps[i];
    if (r[i] < 0 && p.options.negative_reps == NegativeReps::clamp_to_zero) r[i] = 0;
    if (r[i] < 0)
      invalid("reps[" + std::to_string(i) + "] = " + std::to_string(r[i]) + " is negative (numpy.tile needs reps >= 0)");
  }
  p.reps = Dims(r, static_cast<std::size_t>(given_reps.size()));
  const Dims& shape = p.in_shape;
  const int n = std::max(shape.size(), p.reps.size());
  const int shape_pad = n - shape.size(), reps_pad = n - p.reps.size();
  int64_t out[max_ndim];
  for (int i = 0; i < n; ++i) {
    const int64_t s = i < shape_pad ? 1 : shape[i - shape_pad];
    const int64_t st = i < shape_pad ? 0 : p.in_strides[i - shape_pad];
    const int64_t rep = i < reps_pad ? 1 : p.reps[i - reps_pad];
    if (__builtin_mul_overflow(s, rep, &out[i]))
      overflow("output extent of axis " + std::to_string(i) + " = " + std::to_string(s) + " * " + std::to_string(rep) +
               " overflows int64");
    p.nest[i] = {s, st, rep, false};
  }
  p.nest_size = n;
  p.out_shape = Dims(out, static_cast<std::size_t>(n));
}

void nest_broadcast(CopyPlan& p, const Dims& target, bool bidirectional) {
  p.op = bidirectional ? Operation::expand : Operation::broadcast_to;
  p.target = target;
  const char* op = bidirectional ? "expand" : "broadcast_to";
  const Dims& shape = p.in_shape;
  for (int i = 0; i < target.size(); ++i)
    if (target[i] < 0)
      invalid(std::string(op) + ": shape[" + std::to_string(i) + "] = " + std::to_string(target[i]) + " is negative");
  if (!bidirectional && target.size() < shape.size())
    invalid("broadcast_to: the input has " + std::to_string(shape.size()) + " axes but shape " + dims_str(target) +
            " has " + std::to_string(target.size()) + " (it needs at least as many)");
  const int n = std::max(shape.size(), target.size());
  const int shape_pad = n - shape.size(), target_pad = n - target.size();
  int64_t out[max_ndim];
  for (int i = 0; i < n; ++i) {
    const int64_t a = i < shape_pad ? 1 : shape[i - shape_pad];
    const int64_t st = i < shape_pad ? 0 : p.in_strides[i - shape_pad];
    const int64_t t = i < target_pad ? 1 : target[i - target_pad];
    if (a == t || (bidirectional && t == 1)) {
      out[i] = a;
      p.nest[i] = {a, st, 1, false};
    } else if (a == 1) {
      out[i] = t;
      p.nest[i] = {1, 0, t, false};
    } else {
      invalid(std::string(op) + ": input axis " + std::to_string(i - shape_pad) + " has extent " + std::to_string(a) +
              " but shape[" + std::to_string(i - target_pad) + "] = " + std::to_string(t) + " (output axis " +
              std::to_string(i) + "; the input's extent must be 1 or equal" + (bidirectional ? ", or shape's 1)" : ")"));
    }
  }
  p.nest_size = n;
  p.out_shape = Dims(out, static_cast<std::size_t>(n));
}

namespace {

// repeat's axis, normalized (-1: the flattened input). A 0-d input repeats along axis 0 or -1 as
// numpy.repeat repeats it: as its flattened one element.
int repeat_axis(const Dims& shape, bool has_axis, int axis) {
  const int nd = shape.size();
  if (!has_axis || (nd == 0 && (axis == 0 || axis == -1))) return -1;
  if (axis < -nd || axis >= nd)
    invalid("repeat: axis " + std::to_string(axis) + " is out of range for an input of " + std::to_string(nd) +
            " axes (it needs " + std::to_string(-nd) + " <= axis < " + std::to_string(nd) + ")");
  return axis < 0 ? axis + nd : axis;
}

// The first negative of `count` counts of type T, `stride` bytes apart, named (unless clamp).
template <class T>
void check_negative(const unsigned char* base, std::ptrdiff_t stride, int64_t count, bool clamp) {
  for (int64_t i = 0; i < count && !clamp; ++i) {
    const int64_t v = *reinterpret_cast<const T*>(base + i * stride);
    if (v < 0)
      invalid("repeat: repeats[" + std::to_string(i) + "] = " + std::to_string(v) +
              " is negative (numpy.repeat needs counts >= 0)");
  }
}

[[noreturn]] void sum_overflows(int64_t i) {
  overflow("repeat: the sum of the counts overflows int64 at repeats[" + std::to_string(i) + "]");
}

// The sum of `count` counts of type T, `stride` bytes apart (output_shape's: no prefix sums), with
// prefix_sums' checks.
template <class T>
int64_t count_sum(const unsigned char* base, std::ptrdiff_t stride, int64_t count, bool clamp) {
  int64_t total = 0;
  bool negative = false;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t v = *reinterpret_cast<const T*>(base + i * stride);
    negative |= v < 0;
    if (__builtin_add_overflow(total, v < 0 ? 0 : v, &total)) {
      check_negative<T>(base, stride, count, clamp);
      sum_overflows(i);
    }
  }
  if (negative) check_negative<T>(base, stride, count, clamp);
  return total;
}

// prefix_sums' pass: out[0..count] and, kC8, c8[0..count) (each count as one byte, 255 for more).
template <class T, bool kC8>
int64_t prefix_sums_into(CopyPlan& p, const unsigned char* base, std::ptrdiff_t stride, int64_t count, bool clamp,
                         int64_t* out, uint8_t* c8) {
  out[0] = 0;
  int64_t total = 0, max_count = 0;
  bool negative = false;
  const auto overflowed = [&](int64_t i) {
    check_negative<T>(base, stride, count, clamp);  // a negative count is named before any overflow
    sum_overflows(i);
  };
  const auto one = [&](int64_t i, int64_t v) {
    negative |= v < 0;
    const int64_t k = v < 0 ? 0 : v;
    if (__builtin_add_overflow(total, k, &total)) overflowed(i);
    max_count = k > max_count ? k : max_count;
    out[i + 1] = total;
    if constexpr (kC8) c8[i] = static_cast<uint8_t>(k < 255 ? k : 255);
  };
  if (stride == static_cast<std::ptrdiff_t>(sizeof(T))) {
    const T* c = reinterpret_cast<const T*>(base);
    for (int64_t i = 0; i < count; ++i) one(i, c[i]);
  } else {
    for (int64_t i = 0; i < count; ++i) one(i, *reinterpret_cast<const T*>(base + i * stride));
  }
  if (negative) check_negative<T>(base, stride, count, clamp);
  p.prefix.set_size(static_cast<std::size_t>(count) + 1);
  p.seg_max_count = max_count;  // the planner keeps or drops the one-byte counts (choose_path)
  return total;
}

// prefix_sums' compact pass (Prefix::compact): the one-byte counts and every kSparseStep-th prefix
// sum. Returns false, having written part of them, at a block with a count above
// p.compact_max_count (at most 254; the caller then makes the whole sums); else the same checks and
// results as prefix_sums_into. Blocks of kCompactBlock counts: contiguous ones narrowed to bytes by
// the per-target scan (kernels/counts.cpp), strided ones by a scalar loop, while their bits are
// or-ed (a negative one: the sign) and those of count + 255 - max above the byte (a count above
// max; a negative one may wrap there, but shows in the sign); such a block goes again, count by
// count. Then the bytes' largest, and their sums kSparseStep at a time. Contiguous counts of
// kParallelMinBytes or more are split into parts of whole blocks over the threads planning_threads
// gives (parallel.hpp: the arena, max_threads and the first-call rule decide): each part's sparse
// sums start from 0 and get the parts' totals before it added after; the results are the same
// bytes whatever the threads.
template <class T>
bool compact_prefix_sums(CopyPlan& p, const unsigned char* base, std::ptrdiff_t stride, int64_t count, bool clamp,
                         int64_t* sparse, uint8_t* c8, int64_t* sum) {
  using U = std::make_unsigned_t<T>;
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "scan_counts takes int32 or int64 counts");
  constexpr int64_t kStep = Prefix::kSparseStep, kCompactBlock = 32 * kStep;
  const int64_t limit = p.compact_max_count;  // in [1, 254]
  const U lift = static_cast<U>(255 - limit);
  const bool contiguous = stride == static_cast<std::ptrdiff_t>(sizeof(T));
  const auto count_at = [&](int64_t i) {
    return contiguous ? reinterpret_cast<const T*>(base)[i] : *reinterpret_cast<const T*>(base + i * stride);
  };
  // One part's blocks [b0, b1) (in counts; b0 a multiple of kCompactBlock). Below 255 each, the
  // counts of an array in memory (fewer than 2^48) sum to less than 2^56: nothing to check on the
  // way.
  struct Part {
    int64_t total = 0;
    uint8_t max_count = 0;
    bool negative = false;
  };
  std::atomic<bool> above_any{false};
  const auto scan_part = [&](int64_t b0, int64_t b1, Part& part) {
    // Sums in locals (sparse's stores could alias a Part's), kept in `part` at the end.
    int64_t total = 0;
    uint8_t max_count = 0;
    bool negative = false;
    for (int64_t b = b0; b < b1; b += kCompactBlock) {
      if (above_any.load(std::memory_order_relaxed)) return;  // another part found one: no use going on
      const int64_t n = std::min(kCompactBlock, b1 - b);
      uint8_t* const bytes = c8 + b;
      U bits = 0, above = 0;
      if (contiguous) {
        uint64_t bits64 = 0, above64 = 0;
        scan_counts(reinterpret_cast<const T*>(base) + b, static_cast<int>(sizeof(T)), n, lift, bytes, &bits64,
                    &above64);
        bits = static_cast<U>(bits64);
        above = static_cast<U>(above64);
      } else {
        for (int64_t i = 0; i < n; ++i) {
          const U v = static_cast<U>(count_at(b + i));
          bits |= v;
          above |= (v + lift) >> 8;
          bytes[i] = static_cast<uint8_t>(v);
        }
      }
      if (static_cast<T>(bits) < 0 || above != 0) {  // a negative count, or one above the limit
        for (int64_t i = 0; i < n; ++i) {
          const T v = count_at(b + i);
          if (v > limit) {
            above_any.store(true, std::memory_order_relaxed);
            return;
          }
          negative |= v < 0;
          bytes[i] = static_cast<uint8_t>(v < 0 ? 0 : v);
        }
      }
      static_assert(kStep == 16, "count_bytes_sums sums 16 bytes at a time");
      uint32_t sums[kCompactBlock / kStep];
      const uint8_t block_max = count_bytes_sums(bytes, n, sums);
      max_count = block_max > max_count ? block_max : max_count;
      int64_t i = 0;
      for (; i + kStep <= n; i += kStep) {
        total += sums[i / kStep];
        sparse[(b + i + kStep) / kStep] = total;  // the part's sum up to b + i + kStep (offset below)
      }
      for (; i < n; ++i) total += bytes[i];  // the last block's rest: no sum kept there
    }
    part.total = total;
    part.max_count = max_count;
    part.negative = negative;
  };
  const int64_t nblocks = (count + kCompactBlock - 1) / kCompactBlock;
  const int threads = contiguous ? planning_threads(count * static_cast<int64_t>(sizeof(T)), p.options.max_threads) : 1;
  const int nparts = std::max(1, static_cast<int>(std::min<int64_t>(threads, nblocks)));
  const auto part_begin = [&](int k) { return std::min(count, nblocks * k / nparts * kCompactBlock); };
  std::vector<Part> parts(static_cast<std::size_t>(nparts));
  sparse[0] = 0;
  // One part runs on the calling thread (run_parts: no TBB call).
  run_parts(nparts, [&](int k) { scan_part(part_begin(k), part_begin(k + 1), parts[static_cast<std::size_t>(k)]); });
  if (above_any.load(std::memory_order_relaxed)) return false;
  int64_t total = 0;
  uint8_t max_count = 0;
  bool negative = false;
  for (int k = 0; k < static_cast<int>(parts.size()); ++k) {
    const Part& part = parts[static_cast<std::size_t>(k)];
    if (total != 0) {  // the parts before this one's total added to its sparse sums
      const int64_t j0 = part_begin(k) / kStep + 1, j1 = part_begin(k + 1) / kStep, offset = total;
      int64_t* const kept = sparse;  // locals: the stores cannot alias the bounds
      for (int64_t j = j0; j <= j1; ++j) kept[j] += offset;
    }
    total += part.total;
    max_count = part.max_count > max_count ? part.max_count : max_count;
    negative |= part.negative;
  }
  if (negative) check_negative<T>(base, stride, count, clamp);
  p.prefix.set_size(static_cast<std::size_t>(count) + 1);
  p.prefix.set_total(total);
  p.seg_max_count = max_count;
  *sum = total;
  return true;
}

// The prefix sums of `count` per-element counts of type T, `stride` bytes apart, in one pass over
// them: p.prefix (count + 1 values from 0, and the one-byte counts if p.with_counts8) and
// p.seg_max_count. A negative count is an error naming the first one (nothing is written to any
// output), or 0 under clamp_to_zero.
// With p.shape_only the counts are only summed (same checks, no prefix sums written); returns the sum.
template <class T>
int64_t prefix_sums(CopyPlan& p, const unsigned char* base, std::ptrdiff_t stride, int64_t count, bool clamp) {
  if (p.shape_only) return count_sum<T>(base, stride, count, clamp);
  // The one-byte counts only where the segments kernel may walk them (the largest count is not
  // known yet; choose_path drops them where it is too large, or where the walk is not the row's).
  const bool with_counts8 = p.with_counts8 && segments_may_walk_bytes(static_cast<int64_t>(p.itemsize));
  if (with_counts8 && p.compact_max_count > 0) {
    p.prefix.reserve(static_cast<std::size_t>(count) + 1, true, true);
    int64_t total = 0;
    if (p.prefix.compact() &&
        compact_prefix_sums<T>(p, base, stride, count, clamp, p.prefix.mutable_data(), p.prefix.mutable_counts8(),
                               &total))
      return total;
  }
  p.prefix.reserve(static_cast<std::size_t>(count) + 1, with_counts8);  // no zero fill: written once
  int64_t* out = p.prefix.mutable_data();
  uint8_t* const c8 = p.prefix.mutable_counts8();  // null without them
  if (c8 == nullptr) return prefix_sums_into<T, false>(p, base, stride, count, clamp, out, c8);
  return prefix_sums_into<T, true>(p, base, stride, count, clamp, out, c8);
}

// repeat's counts for `extent` elements: p.repeats (one count for all: given once, or every count
// equal after clamping), or kSegmentReps and p.prefix, p.seg_max_count. Per-element counts that
// differ are read once (the scan for equality stops at the first that differs). Returns the
// output's extent along the axis.
int64_t read_counts(CopyPlan& p, const Repeats& repeats, int64_t extent) {
  const int64_t count = repeats.size();
  if (count < 0) invalid("repeat: the number of counts " + std::to_string(count) + " is negative");
  if (count > 0 && repeats.bytes() == nullptr)
    invalid("repeat: repeats is null but has " + std::to_string(count) + " counts");
  if (count != 1 && count != extent)
    invalid("repeat: " + std::to_string(count) + " counts for " + std::to_string(extent) + " elements along " +
            (p.axis >= 0 ? "axis " + std::to_string(p.axis) : std::string("the flattened input")) +
            " (give one count, or one per element)");
  const bool clamp = p.options.negative_reps == NegativeReps::clamp_to_zero;
  const auto at = [&](int64_t i) {
    const int64_t v = repeats.at(i);
    return v < 0 && clamp ? int64_t{0} : v;
  };
  // One count for all? (Equal after clamping; unclamped, equal and the first not negative.)
  const int64_t first = count == 0 ? 0 : at(0);
  int64_t i = 1;
  while (i < count && at(i) == first) ++i;
  int64_t total = 0;
  if (i >= count) {
    if (first < 0)
      invalid("repeat: repeats[0] = " + std::to_string(first) + " is negative (numpy.repeat needs counts >= 0)");
    p.repeats = first;
    if (__builtin_mul_overflow(extent, p.repeats, &total))
      overflow("repeat: " + std::to_string(extent) + " elements * " + std::to_string(p.repeats) +
               " repeats overflows int64");
    return total;
  }
  const auto* base = static_cast<const unsigned char*>(repeats.bytes());
  p.repeats = kSegmentReps;
  if (repeats.itemsize() == static_cast<int>(sizeof(int32_t)))
    return prefix_sums<int32_t>(p, base, repeats.stride(), count, clamp);
  return prefix_sums<int64_t>(p, base, repeats.stride(), count, clamp);
}

// Per-element counts of the flattened input: one segment axis over the input's axes (merged where
// affine, extent-1 axes dropped), which the segments kernel walks in C order.
void flattened_segments(CopyPlan& p) {
  const Dims& shape = p.in_shape;
  p.nest_size = 1;
  p.nest[0] = {p.input_size, 0, kSegmentReps, true};
  int ns = 0;
  Entry merged[max_ndim];  // innermost first
  for (int i = shape.size() - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    int64_t extent = 0;  // merged; an empty input's axes may have a product beyond int64: not merged
    if (ns > 0 && affine_pair(p.in_strides[i], merged[ns - 1].stride, merged[ns - 1].extent) &&
        !__builtin_mul_overflow(merged[ns - 1].extent, shape[i], &extent)) {
      merged[ns - 1].extent = extent;
    } else {
      merged[ns++] = {shape[i], p.in_strides[i], false};
    }
  }
  if (ns == 0) merged[ns++] = {1, 0, false};
  p.seg_naxes = ns;
  for (int k = 0; k < ns; ++k) p.seg_axes[k] = merged[ns - 1 - k];
  p.nest[0].stride = ns == 1 ? p.seg_axes[0].stride : 0;
}

}  // namespace

void nest_repeat(CopyPlan& p, const Repeats& repeats, bool has_axis, int axis) {
  p.op = Operation::repeat;
  const Dims& shape = p.in_shape;
  const int nd = shape.size();
  p.axis = repeat_axis(shape, has_axis, axis);
  const int64_t total = read_counts(p, repeats, p.axis >= 0 ? shape[p.axis] : p.input_size);
  const bool segments = p.repeats == kSegmentReps;
  if (p.axis >= 0) {
    int64_t out[max_ndim];
    for (int i = 0; i < nd; ++i) {
      out[i] = i == p.axis ? total : shape[i];
      p.nest[i] = {shape[i], p.in_strides[i], i == p.axis ? p.repeats : 1, i == p.axis};
    }
    p.nest_size = nd;
    p.out_shape = Dims(out, static_cast<std::size_t>(nd));
    if (segments) {
      p.seg_naxes = 1;
      p.seg_axes[0] = {shape[p.axis], p.in_strides[p.axis], false};
    }
    return;
  }
  p.flattened = true;
  p.out_shape = Dims({total});
  if (segments) {
    flattened_segments(p);
    return;
  }
  // One count: the input's axes in C order, the last one's elements repeated (0-d: one element).
  for (int i = 0; i < nd; ++i) p.nest[i] = {shape[i], p.in_strides[i], i == nd - 1 ? p.repeats : 1, i == nd - 1};
  if (nd == 0) p.nest[0] = {1, 0, p.repeats, true};
  p.nest_size = nd == 0 ? 1 : nd;
}

// ---- The table ------------------------------------------------------------------------------

namespace {

void nest_tile_row(CopyPlan& p, const Arguments& a) { nest_tile(p, a.dims); }
void nest_broadcast_to_row(CopyPlan& p, const Arguments& a) { nest_broadcast(p, a.dims, false); }
void nest_expand_row(CopyPlan& p, const Arguments& a) { nest_broadcast(p, a.dims, true); }
void nest_repeat_row(CopyPlan& p, const Arguments& a) {
  // Per-element counts, compact (Prefix::compact) where the copy's segments kernel will walk them
  // as bytes: segments of single elements (no axis, or nothing inside the axis), each count within
  // one 16-byte store of the walk (segments_walk_max_count). choose_path expands them where it picks
  // another path.
  // (Whether every axis inside is 1, not their product: an empty input may have axes whose
  // product overflows int64.)
  const int axis = repeat_axis(p.in_shape, a.axis.has_value(), a.axis.value_or(0));
  bool single = true;
  for (int i = axis + 1; axis >= 0 && i < static_cast<int>(p.in_shape.size()); ++i) single = single && p.in_shape[i] == 1;
  if (single) p.compact_max_count = segments_walk_max_count(static_cast<int64_t>(p.itemsize));
  nest_repeat(p, a.repeats, a.axis.has_value(), a.axis.value_or(0));
}

ReducePlan tile_backward_row(const Dims& shape, const Dims& strides, DType dtype, const Arguments& a,
                             const Options& options) {
  return make_tile_backward(shape, strides, dtype, a.in_shape, a.dims, options);
}
ReducePlan sum_to_shape_row(const Dims& shape, const Dims& strides, DType dtype, const Arguments& a,
                            const Options& options) {
  return make_sum_to_shape(shape, strides, dtype, a.dims, options);
}
ReducePlan repeat_backward_row(const Dims& shape, const Dims& strides, DType dtype, const Arguments& a,
                               const Options& options) {
  return make_repeat_backward(shape, strides, dtype, a.in_shape, a.repeats,
                              a.axis.has_value(), a.axis.value_or(0), options);
}

// In the order of Operation, each with its row of kOperationInfo (checked below).
constexpr OperationRow kOperations[operation_count] = {
    {kOperationInfo[0], nest_tile_row, nullptr},
    {kOperationInfo[1], nest_broadcast_to_row, nullptr},
    {kOperationInfo[2], nest_expand_row, nullptr},
    {kOperationInfo[3], nest_repeat_row, nullptr},
    {kOperationInfo[4], nullptr, tile_backward_row},
    {kOperationInfo[5], nullptr, sum_to_shape_row},
    {kOperationInfo[6], nullptr, repeat_backward_row},
};

constexpr bool table_ok() {
  for (int i = 0; i < operation_count; ++i) {
    const OperationRow& r = kOperations[i];
    if (static_cast<int>(r.info.op) != i || (r.nest == nullptr) != r.info.reduction ||
        (r.reduce == nullptr) == r.info.reduction)
      return false;
  }
  return true;
}
static_assert(table_ok(), "kOperations: row i is Operation i; a copy has a nest step, a reduction a planner");

// "tile, broadcast_to, ...": every operation's name, for messages.
std::string operation_names() {
  std::string s;
  for (const OperationInfo& info : kOperationInfo) s += (s.empty() ? "" : ", ") + std::string(info.name);
  return s;
}

// The row of a copying (reduction = false) or reducing operation.
const OperationRow& row_of_kind(Operation op, bool reduction) {
  const OperationRow& r = operation_row(op);
  if (r.info.reduction != reduction)
    invalid(std::string("operation '") + r.info.name + "' is " + (reduction ? "not a reduction" : "a reduction"));
  return r;
}

}  // namespace

const OperationRow& operation_row(Operation op) {
  const int v = static_cast<int>(op);
  if (v < 0 || v >= operation_count)
    invalid("operation " + std::to_string(v) + " is not a tessera operation (0-" + std::to_string(operation_count - 1) +
            ": " + operation_names() + ")");
  return kOperations[v];
}

void make_copy_plan(CopyPlan& p, Operation op, const Dims& shape, const Dims& strides, std::size_t itemsize,
                    const Arguments& args, const Options& options) {
  const OperationRow& row = row_of_kind(op, false);
  init_input(p, shape, strides, itemsize, options);
  row.nest(p, args);
  finish_plan(p);
}

CopyPlan make_copy_plan(Operation op, const Dims& shape, const Dims& strides, std::size_t itemsize,
                        const Arguments& args, const Options& options) {
  CopyPlan p;
  make_copy_plan(p, op, shape, strides, itemsize, args, options);
  return p;
}

ReducePlan make_reduce_plan(Operation op, const Dims& shape, const Dims& strides, DType dtype, const Arguments& args,
                            const Options& options) {
  return row_of_kind(op, true).reduce(shape, strides, dtype, args, options);
}

PlanData make_plan(Operation op, const Dims& shape, const Dims& strides, std::size_t itemsize, const Arguments& args,
                   const Options& options) {
  const OperationRow& row = operation_row(op);
  if (!row.info.reduction) return make_copy_plan(op, shape, strides, itemsize, args, options);
  if (!args.dtype)
    invalid(std::string(row.info.name) + " sums: give its element type (Arguments::dtype)");
  if (itemsize_of(*args.dtype) != itemsize)
    invalid(std::string(row.info.name) + ": itemsize = " + std::to_string(itemsize) + " but dtype " +
            dtype_name(*args.dtype) + " has " + std::to_string(itemsize_of(*args.dtype)) + " bytes");
  return make_reduce_plan(op, shape, strides, *args.dtype, args, options);
}

Dims shape_only(Operation op, const Dims& shape, const Arguments& args, const Options& options) {
  const OperationRow& row = operation_row(op);
  if (row.info.reduction) {  // the byte sizes are checked as the plan checks them: for its dtype
    if (!args.dtype) invalid(std::string(row.info.name) + " sums: give its element type (Arguments::dtype)");
    return row.reduce(shape, Dims(), *args.dtype, args, options).out_shape;
  }
  CopyPlan p;
  p.shape_only = true;
  init_input(p, shape, Dims(), 1, options);
  row.nest(p, args);
  return output_shape_only(std::move(p));
}

}  // namespace tessera::detail

namespace tessera {

const OperationInfo& operation_info(Operation op) { return detail::operation_row(op).info; }

Dims output_shape(Operation op, const Dims& shape, const Arguments& args, const Options& options) {
  return detail::shape_only(op, shape, args, options);
}

}  // namespace tessera
