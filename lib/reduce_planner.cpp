// The reductions' planner: a gradient's arguments -> ReducePlan (reduce.hpp). The forward
// planner's steps check the forward operation's arguments and give the shape the gradient must
// have (nest_tile, nest_repeat); then the gradient's axes become the problem's kept and reduced
// axes, and the steps simplify_reduce, choose_reduce_path, lay_out_reduce and choose_reduce_kernel
// (the last asks the dispatched target what it can do, reduce_caps) plan the work once.
#include "reduce.hpp"

#include "error.hpp"
#include "operation_info.hpp"
#include "kernels/kernels.hpp"
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
int64_t stride_product(int64_t a, int64_t b) {
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
ReducePlan init_reduce(Operation op, const Dims& shape, const Dims& strides, DType dtype, const Dims& out_shape,
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

// A segment plan's sub-problems (ReducePlan::seg_one, seg_many): the problem with the segment axis
// of extent 1 and the reduced axis of extent 1 or 2, simplified (a count of 2 or more simplifies
// alike: the reduced axis, the only one, merges with no kept axis).
void lay_out_segments(ReducePlan& r) {
  ReduceProblem& p = r.problem;
  p.path = ReducePath::segments;
  p.kernel = ReduceKernel::segments;
  p.out_elems = 1;
  for (int i = 0; i < p.naxes; ++i)
    if (p.axes[i].kept) p.out_elems *= p.axes[i].extent;  // the output's count: fits (checked)
  for (int count = 1; count <= 2; ++count) {
    ReduceProblem& sub = count == 1 ? r.seg_one : r.seg_many;
    sub = p;
    sub.axes[r.seg_axis].extent = 1;
    sub.axes[r.seg_red].extent = count;
    simplify_reduce(sub);
  }
  for (int i = 0; i < r.seg_many.naxes; ++i)
    if (!r.seg_many.axes[i].kept) r.seg_red_at = i;  // the only reduced axis
  auto planned = std::make_shared<std::vector<ReduceProblem>>(
      static_cast<std::size_t>(std::min(r.seg_max_count, kSegPlannedCounts)));
  for (std::size_t c = 0; c < planned->size(); ++c) segment_problem(r, static_cast<int64_t>(c) + 1, (*planned)[c]);
  // Every segment a contiguous run of at most kSegRunMax elements summed to one output element
  // (of each row of an outer kept axis, if any): all of them by one kernel, segments_runs, when
  // the sub-problems are the two it adds as they do — the strided path for fewer than 16 addends
  // (at most two leaves), one leaf of the periodic path (w = 1) from 16 on (a contiguous reduced
  // run of 16 or more always takes it). Otherwise each segment runs its planned sub-problem.
  const ReduceProblem& m = r.seg_many;
  bool runs = m.naxes >= 1 && m.naxes <= 2 && r.seg_red_at == m.naxes - 1 &&
              m.axes[r.seg_red_at].src_stride == static_cast<int64_t>(m.elsize) && (m.naxes == 1 || m.axes[0].kept) &&
              r.seg_max_count <= kSegRunMax &&
              reduce_kernel_planned(ReduceKernel::segments_runs, r.caps.fixed_width,
                                    r.caps.acc_lanes[static_cast<int>(m.elem)]);
  for (const ReduceProblem& sub : *planned) {
    const bool periodic = sub.nred >= kPeriodicSlots;
    runs = runs && sub.path == (periodic ? ReducePath::periodic : ReducePath::strided) &&
           (!periodic || (sub.width == 1 && sub.slots == kPeriodicSlots && sub.nreduced == 0));
  }
  if (runs) p.kernel = ReduceKernel::segments_runs;
  // Segments run one by one, each one item of reduce.lanes.reg.leaf (at most kLeaf addend rows,
  // read whole, or one row) whose rows lie back to back (a row's bytes are the segment axis'
  // stride: the segments read the gradient as one stream): where the reductions prefetch along the
  // rows (reduce_prefetch_rows_along), each line is prefetched as the line
  // reduce_prefetch_along_bytes() before it is read (the following segments'), and the rows are
  // read a vector at a time across them, not whole (rows_whole: the prefetch, not the order of the
  // reads, now keeps the lines coming; the sums stay in registers instead of a scratch row).
  // rep_ragged_bwd's segments of 0-4 rows of 1 KiB (tessera_probes --probe rep_ragged_bwd,
  // 2026-12-02, the Xeon reporting family 6 model 167; bench/results/2026-12-02-xeon-f6m167/):
  // the plan read at 69% of `read` without, 84% so with its rows read whole, 86% across them (a
  // plain loop prefetching each load's line 2 KiB ahead 77%, 4-16 KiB 90-91%, all of a segment's
  // lines before it 72%); bench/compare: 1.21x (1 thread) and 1.24x (2) faster.
  // (Rows of at least a line, items of at most kWholeRowsItemBytes, a gradient longer than the
  // distance.)
  const int64_t distance = reduce_prefetch_along_bytes();
  bool ahead = !runs && reduce_prefetch_rows_along() && distance > 0 && !planned->empty() &&
               r.seg_stride > 0 && r.prefix.back() > distance / r.seg_stride;
  for (const ReduceProblem& sub : *planned) {
    const int64_t row_bytes = sub.width * static_cast<int64_t>(sub.elsize);
    ahead = ahead && sub.kernel == ReduceKernel::lanes_reg_leaf && sub.nitems == 1 && sub.strip == sub.width &&
            sub.inner_stride == static_cast<int64_t>(sub.elsize) && row_bytes == r.seg_stride &&
            row_bytes >= kPrefetchLineBytes && row_bytes <= kPrefetchRowBytes &&
            sub.nred * row_bytes <= kWholeRowsItemBytes;
  }
  r.seg_prefetch_bytes = ahead ? distance : 0;
  if (ahead)
    for (ReduceProblem& sub : *planned) sub.rows_whole = false;
  r.seg_planned = std::move(planned);
  // Counts of at most kSegGroupMaxCount float32 elements into contiguous outputs: summed in groups
  // from the one-byte counts (ReduceProblem::seg_group_count), on fixed-width targets of two or
  // more accumulator lanes (the kernel's groups are half a float vector each). The counts' bytes
  // are freed where nothing reads them.
  const bool groups = runs && m.elem == Elem::f32 && r.seg_max_count >= 1 && r.seg_max_count <= kSegGroupMaxCount &&
                      p.axes[r.seg_axis].dst_stride == 1 && r.prefix.counts8() != nullptr &&
                      reduce_seg_groups(r.caps.fixed_width, r.caps.acc_lanes[static_cast<int>(Elem::f32)]);
  // The groups' steps run many instructions per line of the gradient (rep_counts_bwd's, counts 0-4:
  // about 130 for 16 segments, 2 lines, with their prefetches and stores), too many for the
  // hardware prefetchers to keep enough lines in flight: wherever the reductions prefetch
  // (reduce_prefetch_bytes() > 0), the kernel prefetches the row kPrefetchAlongBytes ahead of its
  // step (or the variable's distance, if shorter), the lines a step reads at most each step
  // (ReduceProblem::prefetch_items: elements, here). On the Xeon reporting family 6 model 167
  // (tessera_probes --probe rep_counts_bwd, 2026-12-02,
  // bench/results/2026-12-02-xeon-f6m167/probes-rep_counts_bwd-prefetch.txt) the plan read at 41%
  // of `read` without, 56% 4 KiB and 57% 2 KiB ahead; 1.43x / 1.46x faster than without
  // (bench/compare, the same file's directory). With two steps per permutation and the prefetch a
  // step's lines into L1 (3087f7c; bench/prefetch_distance.py, 2026-12-03,
  // bench/results/2026-12-03-xeon-f6m167/prefetch-distance-rep_counts_bwd-f6288ad.txt), 2, 4 and 8
  // KiB ahead ran within 2% of each other, 1 KiB 2-3% slower.
  if (groups) {
    r.seg_many.seg_group_count = r.seg_max_count;
    const int64_t bytes = std::min(reduce_prefetch_bytes(), kPrefetchAlongBytes);
    r.seg_many.prefetch_items = bytes > 0 ? ceil_div(bytes, static_cast<int64_t>(r.seg_many.elsize)) : 0;
    // ... and the counts kSegCountsAheadBytes ahead: a stream of their own beside the gradient's
    // (16 bytes a step on AVX-512). tessera_probes --probe rep_counts_bwd (249dde5): the groups'
    // vector work alone read at 91-94% of `read`, in variants that also read counts from memory
    // at 56-65% (a std::vector's 4 KiB pages) and 83-85% (a huge-page buffer, as the plan's own
    // counts8 are advised); bench/results/2026-12-04-xeon-f6m167/experiments-rep_counts_bwd.txt.
    // rep_counts_bwd on the Xeon reporting family 6 model 167 (bench/compare db8f493, 2 s,
    // 2026-12-04, bench/results/2026-12-04-xeon-f6m167/compare-counts-ahead.txt): 1.040-1.043x
    // faster at 4 KiB ahead (1 and 2 threads), 1.026-1.035x at 2, 8 and 16 KiB, 1.016-1.018x at
    // 512 bytes.
    r.seg_many.seg_counts_ahead_bytes = bytes > 0 ? kSegCountsAheadBytes : 0;
  } else
    r.prefix.drop_counts8();
}

// The problem's plan: the planner's steps for the target the kernels dispatch to now, or the
// segments' sub-problems and their kernel (lay_out_segments).
ReducePlan finish(ReducePlan&& r) {
  finish_axes(r);
  // The result's size against the reductions' own streaming line (reduce_stream_min_bytes).
  const int64_t out_bytes = static_cast<int64_t>(itemsize_of(r.dtype)) * count_of(r.out_shape);  // checked
  r.problem.stream = r.options.nontemporal == NonTemporal::always ||
                     (r.options.nontemporal == NonTemporal::automatic && reaches_stream_min(out_bytes, true));
  r.caps = reduce_caps();
  if (count_of(r.out_shape) == 0) {
    r.problem.out_elems = 0;
    r.problem.path = ReducePath::none;
    r.problem.kernel = ReduceKernel::none;
  } else if (r.seg_axis >= 0) {
    lay_out_segments(r);
  } else {
    plan_problem(r.problem, r.caps, r.options.accumulate);
  }
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

// AMD CPU family 26 (Zen 5) or later (cpu_kind: CPUID); false elsewhere (other vendors, other ISAs).
bool amd_family_26_or_later() noexcept {
  const CpuKind k = cpu_kind();
  return k.vendor == CpuKind::Vendor::amd && k.family >= 0x1a;
}

// Which items the reduction kernels prefetch, and how far ahead (reduce_prefetch_bytes,
// reduce_prefetch_short_rows, reduce_prefetch_long_runs and, along the rows,
// reduce_prefetch_along_bytes): the variable's distance for every such item, else by the kind of
// core. How the periodic runs' lines are prefetched (reduce_prefetch_runs_spread): spread among
// the loads only on the Intel cores reporting family 6 model 167 (with a mesh L3), where that way
// read bc_cols_bwd at 97-108% of `read` and each leaf at once at 73-76% (2026-12-02,
// bench/results/2026-12-02-xeon-f6m167/); each item or leaf at once elsewhere: on a Xeon
// reporting family 6 model 207 the spread prefetches read bc_cols_bwd and narrow_bwd as none at
// all (52-55% of `read`), at once 1.37-1.62x faster (70-87%; 2026-12-06,
// bench/results/2026-12-06-xeon-f6m207/prefetch-spread.txt), and AMD family 26 was measured so.
// TESSERA_PREFETCH_SPREAD (0 or 1; any other value is ignored) overrides it. The lanes path's
// short rows (reduce_prefetch_short_rows_bytes): 4 KiB ahead on the Intel cores with a mesh L3
// but the model 167 (on the model 207 mixed3d_bwd 1.09-1.18x faster so, against none, and
// slower 16 KiB ahead: bench/results/2026-12-06-xeon-f6m207/), not at all on the model 167,
// where that was not measured.
struct PrefetchPolicy {
  int64_t bytes = 0;
  int64_t short_rows_bytes = 0;  // the distance of the lanes path's short rows; 0: none
  bool long_runs = false;
  int64_t along_bytes = 0;   // the distance along the rows; 0: not along the rows
  int64_t long_rows_bytes = 0;  // the distance along reg.leaf's long rows; 0: none
  bool runs_spread = false;  // the periodic runs' lines spread among the loads (else at once)
};
constexpr unsigned kIntelModel167 = 167;
const PrefetchPolicy& prefetch_policy() noexcept {
  static const PrefetchPolicy policy = [] {
    // The variable's distance, at most kPrefetchMaxBytes (the kernels add it to addresses).
    const int64_t n = std::min(env_int64("TESSERA_PREFETCH_BYTES", -1), kPrefetchMaxBytes);
    PrefetchPolicy policy;
    const CpuKind cpu = cpu_kind();
    const bool model167 = intel_mesh_l3() && cpu.family == 6 && cpu.model == kIntelModel167;
    if (n >= 0) policy = PrefetchPolicy{n, n, true, n, n};
    else if (amd_family_26_or_later()) policy = PrefetchPolicy{kPrefetchAheadBytes, kPrefetchAheadBytes, false, 0, 0};
    else if (intel_mesh_l3())
      policy = PrefetchPolicy{kPrefetchAheadBytes, model167 ? 0 : kPrefetchShortRowsBytes, true, kPrefetchAlongBytes,
                              model167 ? 0 : kPrefetchLongRowsBytes};
    policy.runs_spread = model167;
    const int64_t spread = env_int64("TESSERA_PREFETCH_SPREAD", -1);
    if (spread == 0 || spread == 1) policy.runs_spread = spread == 1;
    return policy;
  }();
  return policy;
}

}  // namespace

int64_t reduce_prefetch_bytes() noexcept { return prefetch_policy().bytes; }
bool reduce_prefetch_short_rows() noexcept { return prefetch_policy().short_rows_bytes > 0; }
int64_t reduce_prefetch_short_rows_bytes() noexcept { return prefetch_policy().short_rows_bytes; }
bool reduce_prefetch_long_runs() noexcept { return prefetch_policy().long_runs; }
bool reduce_prefetch_rows_along() noexcept { return prefetch_policy().along_bytes > 0; }
int64_t reduce_prefetch_along_bytes() noexcept { return prefetch_policy().along_bytes; }
int64_t reduce_prefetch_long_rows_bytes() noexcept { return prefetch_policy().long_rows_bytes; }
bool reduce_prefetch_runs_spread() noexcept { return prefetch_policy().runs_spread; }

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

void simplify_reduce(ReduceProblem& p) noexcept {
  // Drop extent-1 axes; an extent-0 axis empties the output (kept) or the sums (reduced).
  bool kept_empty = false, reduced_empty = false;
  for (int i = 0; i < p.naxes; ++i) (p.axes[i].kept ? kept_empty : reduced_empty) |= p.axes[i].extent == 0;
  if (kept_empty || reduced_empty) {  // no product of the reduced extents: they may be anything
    p.out_elems = 0;
    if (!kept_empty) {
      p.out_elems = 1;
      for (int i = 0; i < p.naxes; ++i)
        if (p.axes[i].kept) p.out_elems *= p.axes[i].extent;  // the output's count: fits (checked)
    }
    p.nred = 0;
    p.path = kept_empty ? ReducePath::none : ReducePath::zeros;
    return;
  }
  int n = 0;
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
  p.path = ReducePath::lanes;  // chosen by choose_reduce_path
}

void choose_reduce_path(ReduceProblem& p) noexcept {
  if (p.path == ReducePath::none || p.path == ReducePath::zeros) return;
  const int n = p.naxes;
  const int64_t es = static_cast<int64_t>(p.elsize);
  const RAxis* last = n > 0 ? &p.axes[n - 1] : nullptr;
  const RAxis* before = n > 1 ? &p.axes[n - 2] : nullptr;
  p.width = 1;
  if (last && last->kept && last->src_stride == es && last->extent < kFoldMaxWidth && before && !before->kept &&
      before->src_stride == last->extent * es && before->extent * last->extent >= 4 * kPeriodicSlots) {
    p.path = ReducePath::periodic;  // a narrow kept row folded: the run is the axis before it
    p.width = last->extent;
  } else if (last && !last->kept && last->src_stride == es && last->extent >= kPeriodicSlots) {
    p.path = ReducePath::periodic;  // a contiguous reduced run: the innermost axis
  } else if (last && last->kept && last->src_stride == es) {
    p.path = ReducePath::lanes;
  } else if (last && !last->kept && last->src_stride == es && last->extent >= 2 && last->extent <= 4 && before &&
             before->kept && before->src_stride == last->extent * es && p.nred == last->extent) {
    p.path = ReducePath::interleaved;
  } else {
    p.path = ReducePath::strided;
  }
}

namespace {

// lay_out_reduce for the periodic path: the run (the axis before a folded row, or the innermost),
// the slots P = lcm(w, 16), the leaves of blocks and one item per output row.
void lay_out_periodic(ReduceProblem& p) noexcept {
  const int n = p.naxes;
  const int run_axis = p.width > 1 ? n - 2 : n - 1;
  const int inner_kept = p.width > 1 ? n - 1 : -1;
  for (int i = 0; i < n; ++i) {
    if (i == run_axis || i == inner_kept) continue;
    if (p.axes[i].kept) p.outer[p.nouter++] = i;
    else p.reduced[p.nreduced++] = i;
  }
  p.run = p.axes[run_axis].extent;
  p.run_stride = p.axes[run_axis].src_stride;
  p.inner_stride = static_cast<int64_t>(p.elsize);
  p.slots = kPeriodicSlots;
  while (p.slots % p.width != 0) p.slots += kPeriodicSlots;  // lcm(w, 16)
  const int64_t blocks = ceil_div(p.run * p.width, p.slots) * (p.nred / p.run);
  p.nleaves = ceil_div(blocks, kLeaf);
  p.strip = p.width;
  p.inner_dst_stride = p.width > 1 ? p.axes[n - 1].dst_stride : 1;
  p.nitems = p.out_elems / p.width;
  // Items of one dense run (no other reduced axis: the run's w-element rows follow each other),
  // prefetched items ahead: runs of one leaf and at most kPrefetchRowBytes along one kept axis
  // (reduce.periodic.rows.w1's and reduce.periodic.rows' items) wherever the distance is not 0;
  // runs of single elements (w = 1) of more than one leaf, summed in registers
  // (reduce.periodic.reg16's items: bc_cols_bwd's rows, the item prefetch_items on prefetched leaf
  // by leaf as each leaf is summed), where reduce_prefetch_long_runs(). On the Intel Xeon of
  // family 6 model 207, rows of 16 KiB summed in a plain loop of the kernel's instructions read at
  // 66% of `read` and at 88-89% prefetching 4 or 16 KiB ahead; tessera's plan at 61%, and at 179%
  // with its gradient in L2 (tessera_probes --probe bc_cols_bwd, 2026-12-02); narrow_bwd's rows of
  // 40 runs of w = 3 at 62% without and 86% 16 KiB ahead, 187-198% in L2 (--probe narrow_bwd,
  // 2026-12-02, bench/results/2026-12-02-xeon-f6m207/probes-narrow-prefetch.txt; an earlier
  // measurement of the deinterleaving kernel, ShortRun3N, had found them the same with and
  // without). Long runs of w = 2, 4, 8 in reg16 were not measured.
  const int64_t item_bytes = p.run * p.width * static_cast<int64_t>(p.elsize);
  const bool dense = p.nreduced == 0 && p.run_stride == p.width * static_cast<int64_t>(p.elsize) && p.nitems > 1 &&
                     reduce_prefetch_bytes() > 0;
  const bool short_run = p.nleaves == 1 && p.nouter == 1 && item_bytes <= kPrefetchRowBytes;
  const bool long_run = p.width == 1 && p.nleaves > 1 && reduce_prefetch_long_runs();
  if (dense && (short_run || long_run)) p.prefetch_items = ceil_div(reduce_prefetch_bytes(), item_bytes);
  p.prefetch_spread = p.prefetch_items > 0 && reduce_prefetch_runs_spread();
}

// Levels of the binary counter over `leaves` leaves: bit_width(leaves).
int counter_levels(int64_t leaves) noexcept {
  int levels = 0;
  for (uint64_t l = static_cast<uint64_t>(leaves); l; l >>= 1) ++levels;
  return levels;
}

// A lanes item's strip and the items the problem has of it (out_elems / width rows of the output,
// each in ceil(width / strip) strips).
void set_strip(ReduceProblem& p, int64_t strip) noexcept {
  p.strip = strip;
  p.nitems = p.out_elems / p.width * ceil_div(p.width, p.strip);
}

// How many lanes items (nred rows of strip elements) cover `bytes`: the prefetch distance in items.
int64_t items_ahead(const ReduceProblem& p, int64_t bytes) noexcept {
  return ceil_div(bytes, p.nred * p.strip * static_cast<int64_t>(p.elsize));
}

// The items ahead of short rows: along the rows as they are read (prefetch_along_rows) or all of an
// item's lines before it.
int64_t short_rows_items_ahead(const ReduceProblem& p) noexcept {
  return items_ahead(p, p.prefetch_along_rows ? reduce_prefetch_along_bytes() : reduce_prefetch_short_rows_bytes());
}

}  // namespace

void lay_out_reduce(ReduceProblem& p) noexcept {
  p.nouter = p.nreduced = 0;
  p.scratch_bytes = 0;
  p.prefetch_items = 0;
  p.prefetch_ahead_bytes = 0;
  p.rows_whole = false;
  p.prefetch_along_rows = false;
  p.prefetch_spread = false;
  if (p.path == ReducePath::none || p.path == ReducePath::zeros) return;
  if (p.path == ReducePath::periodic) {
    lay_out_periodic(p);
  } else {
    const int n = p.naxes;
    int inner = -1;  // the innermost kept axis: the item's strip runs along it
    for (int i = n - 1; i >= 0 && inner < 0; --i)
      if (p.axes[i].kept) inner = i;
    for (int i = 0; i < n; ++i) {
      if (i == inner) continue;
      if (p.axes[i].kept) p.outer[p.nouter++] = i;
      else p.reduced[p.nreduced++] = i;
    }
    p.width = inner < 0 ? 1 : p.axes[inner].extent;
    p.inner_stride = inner < 0 ? static_cast<int64_t>(p.elsize) : p.axes[inner].src_stride;
    p.inner_dst_stride = inner < 0 ? 1 : p.axes[inner].dst_stride;
    p.nleaves = ceil_div(p.nred, kLeaf);
    if (p.path == ReducePath::interleaved) {
      p.run = p.axes[n - 1].extent;
      p.nleaves = 1;
    }
    // Strip: long, so that each addend row streams (prefetchers follow long sequential runs), with
    // the counter's rows (bit_width(nleaves) + 3 of them) in 512 KiB of L2.
    const int rows = counter_levels(p.nleaves) + 3;
    int64_t strip = (int64_t{512} << 10) / (rows * static_cast<int64_t>(acc_size(p.elem)));
    strip = std::clamp<int64_t>(strip / 64 * 64, 64, int64_t{1} << 16);
    set_strip(p, std::min(strip, p.width));
    // Short rows: on some cores the hardware prefetchers do not run ahead of an item's few lines
    // per page (AMD family 26: each item waited for DRAM, nchw_bwd's 512-byte rows read at a
    // quarter of the read limit), and there the kernels prefetch the rows of the item
    // prefetch_items ahead (reduce_prefetch_short_rows_bytes(), where reduce_prefetch_short_rows()).
    const int64_t row_bytes = p.strip * static_cast<int64_t>(p.elsize);
    // Short items read a row at a time (ReduceProblem::rows_whole; strip <= 2^16 elements, so no
    // overflow).
    p.rows_whole = p.path == ReducePath::lanes && p.nred > 1 && p.nred <= kLeaf &&
                   p.nred * row_bytes <= kWholeRowsItemBytes;
    // Short rows (both kinds of item): all of the item's lines before each item where
    // reduce_prefetch_short_rows(); rows_whole items line by line as they are read where
    // reduce_prefetch_rows_along() (ReduceProblem::prefetch_along_rows).
    const bool short_rows = p.path == ReducePath::lanes && p.nred <= kRegLeaves * kLeaf &&
                            row_bytes <= kPrefetchRowBytes && p.nitems > 1 && reduce_prefetch_bytes() > 0;
    p.prefetch_along_rows = short_rows && p.rows_whole && reduce_prefetch_rows_along();
    if (p.prefetch_along_rows || (short_rows && reduce_prefetch_short_rows())) p.prefetch_items = short_rows_items_ahead(p);
  }
  // The counter's levels (bit_width(nleaves) and a spare), a leaf row and a result row.
  const int64_t row = p.path == ReducePath::periodic ? p.slots : p.strip;
  p.scratch_bytes = (counter_levels(p.nleaves) + 3) * row * static_cast<int64_t>(acc_size(p.elem));
}

namespace {

// choose_reduce_kernel for the lanes path: the register trees on fixed-width targets (items of at
// most kRegLeaves leaves, written to their own contiguous output), else one leaf or any.
ReduceKernel lanes_kernel(const ReduceProblem& p, bool fixed_width) noexcept {
  if (fixed_width && p.nleaves <= kRegLeaves && p.inner_dst_stride == 1) {
    if (p.nred <= kLeaf) return ReduceKernel::lanes_reg_leaf;
    return p.nleaves <= kUnrolledLeaves ? ReduceKernel::lanes_reg_tree4 : ReduceKernel::lanes_reg_tree16;
  }
  if (p.nleaves == 1) return p.inner_dst_stride == 1 ? ReduceKernel::lanes_leaf : ReduceKernel::lanes_leaf_dst_stride;
  return ReduceKernel::lanes_leaves;
}

// choose_reduce_kernel for the periodic path: with the slots in vectors (fixed_slots), short runs
// (one leaf, no other reduced axis, 16, 48 or 80 slots) along one kept axis in a tight loop, or
// item by item; one run of 16 slots in registers; else the slots in memory.
ReduceKernel periodic_kernel(const ReduceProblem& p, bool fixed_slots) noexcept {
  const bool short_slots = p.slots == 16 || p.slots == 48 || p.slots == 80;
  if (fixed_slots && p.nreduced == 0 && p.nleaves == 1 && short_slots) {
    if (p.nouter != 1) return ReduceKernel::periodic_shortrun;
    return p.width == 1 ? ReduceKernel::periodic_rows_w1 : ReduceKernel::periodic_rows;
  }
  if (fixed_slots && p.nreduced == 0 && p.slots == kPeriodicSlots) return ReduceKernel::periodic_reg16;
  return ReduceKernel::periodic_leaves;
}

}  // namespace

void choose_reduce_kernel(ReduceProblem& p, const ReduceCaps& caps, bool accumulate) noexcept {
  const int lanes = caps.acc_lanes[static_cast<int>(p.elem)];
  switch (p.path) {
    case ReducePath::none: p.kernel = ReduceKernel::none; break;
    case ReducePath::zeros: p.kernel = ReduceKernel::zeros; break;
    case ReducePath::lanes: p.kernel = lanes_kernel(p, caps.fixed_width); break;
    case ReducePath::strided: p.kernel = ReduceKernel::strided; break;
    case ReducePath::interleaved:
      p.kernel = p.elem == Elem::f32 && p.run == 2 && !accumulate && p.inner_dst_stride == 1
                     ? ReduceKernel::interleaved_pair_f32
                     : ReduceKernel::interleaved_row;
      break;
    case ReducePath::periodic:
      p.kernel = periodic_kernel(p, reduce_kernel_planned(ReduceKernel::periodic_reg16, caps.fixed_width, lanes));
      break;
    default: p.kernel = ReduceKernel::segments; break;
  }
  // The float32 pairs prefetch their item's source along it where the reductions prefetch along
  // the rows (ReduceProblem::prefetch_ahead_bytes).
  p.prefetch_ahead_bytes = p.kernel == ReduceKernel::interleaved_pair_f32 && reduce_prefetch_rows_along()
                               ? reduce_prefetch_along_bytes()
                               : 0;
  // lay_out_reduce chose the items to prefetch by their shape; a kernel without a prefetch (the
  // table's column: reduce.periodic.leaves where a target has neither reduce.periodic.rows.w1 nor
  // reduce.periodic.reg16, on scalable targets and for accumulators of more than 16 lanes) reads
  // them unprefetched, and the plan says so (describe()).
  if (!kReduceKernels[static_cast<int>(p.kernel)].prefetches) p.prefetch_items = 0;
  // Only reduce.periodic.rows (its items one by one) and reduce.periodic.reg16 spread the lines.
  if (p.prefetch_items == 0 || (p.kernel != ReduceKernel::periodic_rows && p.kernel != ReduceKernel::periodic_reg16))
    p.prefetch_spread = false;
  // Only reduce.lanes.reg.leaf reads rows_whole items row by row with the prefetch along them;
  // another kernel prefetches them all at once where short rows take that, else not at all.
  if (p.prefetch_along_rows && p.kernel != ReduceKernel::lanes_reg_leaf) {
    p.prefetch_along_rows = false;
    p.prefetch_items = reduce_prefetch_short_rows() ? short_rows_items_ahead(p) : 0;
  }
  // reduce.lanes.reg.tree4 reads items of at most kTreeRowVecs vectors a row a row at a time
  // (rows_whole), and where short rows are prefetched, along those rows as reg.leaf's rows_whole
  // items are, not all of an item's lines at once: mixed3d_bwd (items of 16 rows of 256 bytes in
  // four runs of 1 KiB) read 1.06x / 1.06x faster so (1 / 2 threads; bench/compare against
  // 9d9b311, 2026-12-06, the Xeon reporting family 6 model 207: reduce_prefetch_rows_along()).
  if (p.kernel == ReduceKernel::lanes_reg_tree4 && p.strip <= kTreeRowVecs * lanes) {
    p.rows_whole = true;
    if (p.prefetch_items > 0 && reduce_prefetch_rows_along()) {
      p.prefetch_along_rows = true;
      p.prefetch_items = short_rows_items_ahead(p);
    }
  }
  // reduce.lanes.reg.leaf's items of long rows, read a vector at a time across the rows (not
  // rows_whole, no items prefetched ahead): each row's line that far on as the row is read
  // (reduce_prefetch_long_rows_bytes()), where the rows are longer than the distance.
  const int64_t row_bytes = p.strip * static_cast<int64_t>(p.elsize);
  const int64_t long_rows = reduce_prefetch_long_rows_bytes();
  if (p.kernel == ReduceKernel::lanes_reg_leaf && !p.rows_whole && p.prefetch_items == 0 && long_rows > 0 &&
      row_bytes > kPrefetchRowBytes && row_bytes > long_rows)
    p.prefetch_ahead_bytes = long_rows;
  // ... and reduce.lanes.leaves' contiguous rows, a leaf of up to kLeaf of them at a time.
  if (p.kernel == ReduceKernel::lanes_leaves && p.inner_stride == static_cast<int64_t>(p.elsize) && long_rows > 0 &&
      row_bytes > kPrefetchRowBytes && row_bytes > long_rows)
    p.prefetch_ahead_bytes = long_rows;
}

void plan_problem(ReduceProblem& p, const ReduceCaps& caps, bool accumulate) noexcept {
  simplify_reduce(p);
  choose_reduce_path(p);
  lay_out_reduce(p);
  choose_reduce_kernel(p, caps, accumulate);
  const int lanes = caps.acc_lanes[static_cast<int>(p.elem)];
  // reduce.lanes.reg.leaf's rows_whole items of short rows (at most kSplitRowBytes) longer than
  // its registers hold (kLeafRowVecs vectors) in strips they hold: the sums stay in registers, not
  // in the scratch row (kLeafRowVecs in reduce.hpp: measured). Not the segments' sub-problems,
  // planned by segment_problem with their items as they are.
  if (p.kernel == ReduceKernel::lanes_reg_leaf && p.rows_whole && lanes > 0 && p.strip > kLeafRowVecs * lanes &&
      p.strip * static_cast<int64_t>(p.elsize) <= kSplitRowBytes) {
    set_strip(p, kLeafRowVecs * lanes);
    if (p.prefetch_items > 0) p.prefetch_items = short_rows_items_ahead(p);  // the same bytes, in the new items
  }
}

void segment_problem(const ReducePlan& r, int64_t count, ReduceProblem& out) noexcept {
  if (count == 1) {
    out = r.seg_one;
  } else {
    out = r.seg_many;
    out.axes[r.seg_red_at].extent = count;
    out.nred = count;
  }
  choose_reduce_path(out);
  lay_out_reduce(out);
  choose_reduce_kernel(out, r.caps, r.options.accumulate);
}

ReducePlan make_tile_backward(const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                              const Dims& reps, const Options& options) {
  Options forward = options;
  forward.accumulate = false;
  CopyPlan f;  // the forward tile's checks and output shape (the planner's steps 1-3)
  init_input(f, in_shape, Dims(), 1, forward);
  nest_tile(f, reps);
  const Dims expected = output_shape_only(std::move(f));
  ReducePlan r = init_reduce(Operation::tile_backward, shape, strides, dtype, in_shape, options);
  check_grad_shape(shape, expected, "tile_backward");
  r.reps = reps;
  const int D = expected.size(), n = in_shape.size(), d = reps.size();
  int64_t dst[max_ndim];
  contiguous(in_shape, dst);
  for (int i = 0; i < D; ++i) {
    const int64_t s = i - (D - n) >= 0 ? in_shape[i - (D - n)] : 1;
    int64_t rep = i - (D - d) >= 0 ? reps[i - (D - d)] : 1;
    if (rep < 0) rep = 0;  // clamp_to_zero (nest_tile has checked the policy)
    const int64_t g = r.grad_strides[i];
    if (rep != 1) push(r.problem, rep, rep > 1 && s > 0 ? stride_product(s, g) : 0, 0, false);
    if (i - (D - n) >= 0) push(r.problem, s, g, dst[i - (D - n)], true);
  }
  return finish(std::move(r));
}

ReducePlan make_sum_to_shape(const Dims& shape, const Dims& strides, DType dtype, const Dims& target,
                             const Options& options) {
  ReducePlan r = init_reduce(Operation::sum_to_shape, shape, strides, dtype, target, options);
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
                                const Repeats& repeats, bool has_axis, int axis,
                                const Options& options) {
  Options forward = options;
  forward.accumulate = false;
  CopyPlan f;  // the forward repeat's checks, output shape and counts
  f.with_counts8 = true;  // read by segments_runs' groups (lay_out_segments keeps them there only)
  // Where the groups may sum float32 segments, the prefix sums compact (Prefix::compact): the groups
  // read the one-byte counts and a prefix sum where a range starts; lay_out_segments expands them
  // where it does not choose the groups.
  const ReduceCaps caps = reduce_caps();
  if (dtype == DType::float32 && reduce_seg_groups(caps.fixed_width, caps.acc_lanes[static_cast<int>(Elem::f32)]))
    f.compact_max_count = 254;  // the groups take counts below 255
  init_input(f, in_shape, Dims(), 1, forward);
  nest_repeat(f, repeats, has_axis, axis);
  size_output(f);
  ReducePlan r = init_reduce(Operation::repeat_backward, shape, strides, dtype, in_shape, options);
  check_grad_shape(shape, f.out_shape, "repeat_backward");
  r.axis = f.axis;
  r.repeats = f.repeats;
  const bool segments = f.repeats == kSegmentReps;
  if (segments) {
    r.prefix = f.prefix;
    r.seg_max_count = f.seg_max_count;
  }
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
      push(r.problem, extent, f.repeats > 1 && extent > 0 ? stride_product(f.repeats, g) : g, dst_stride, true);
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
  return kReduceKernels[static_cast<int>(r.problem.kernel)].name;
}

std::vector<const char*> reduce_path_names() {
  std::vector<const char*> names;
  for (int k = 1; k < kReduceKernelCount; ++k) names.push_back(kReduceKernels[k].name);
  return names;
}

std::string describe_reduce(const ReducePlan& r) {
  std::ostringstream s;
  s << info_of(r.op).name << " plan: gradient " << dims_str(r.grad_shape) << " strides "
    << dims_str(r.grad_strides) << " B, dtype " << dtype_name(r.dtype);
  if (r.op == Operation::tile_backward) s << ", reps " << dims_str(r.reps);
  if (r.op == Operation::repeat_backward) {
    if (r.repeats == kSegmentReps)
      s << ", " << r.prefix.size() - 1 << " per-element repeats"
        << (r.prefix.compact() ? " (one-byte counts, every " + std::to_string(Prefix::kSparseStep) + "th prefix sum)"
                               : std::string());
    else s << ", repeats " << r.repeats;
    s << (r.axis < 0 ? std::string(" of the flattened input") : " along axis " + std::to_string(r.axis));
  }
  s << " -> result " << dims_str(r.out_shape) << (r.options.accumulate ? " (accumulated)" : "")
    << (r.problem.stream ? ", streamed" : "") << "\n";
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
  // The path first (tests/oracle and bench/python_bench.py read the word after "kernel: "), then
  // the kernel that runs it (Plan::kernel_path()) and its layout.
  const char* kernel = kReduceKernels[static_cast<int>(p.kernel)].name;
  const std::string prefetch =
      p.prefetch_items > 0 ? ", prefetched " + std::to_string(p.prefetch_items) + " items ahead" +
                                 (p.prefetch_along_rows ? " along the rows" : "") +
                                 (p.prefetch_spread ? ", spread among the loads" : "")
      : p.prefetch_ahead_bytes > 0 ? ", prefetched " + std::to_string(p.prefetch_ahead_bytes) + " bytes ahead along the rows"
                                   : std::string();
  s << "  kernel: " << kReducePathNames[static_cast<int>(p.path)];
  if (p.path == ReducePath::periodic)
    s << " (" << kernel << ": runs of " << p.run << (p.width > 1 ? " rows of " + std::to_string(p.width) : std::string())
      << ", " << p.slots << " slots, " << p.nleaves << " leaves of " << kLeaf << " blocks per output" << prefetch
      << ")";
  else if (p.path == ReducePath::segments) {
    const ReduceProblem& g = r.seg_many;  // the groups' problem (segments_runs)
    const std::string groups_prefetch =
        g.prefetch_items <= 0 ? std::string()
        : ", prefetched " + std::to_string(g.prefetch_items) + " elements ahead" +
              (g.seg_counts_ahead_bytes > 0 ? ", the counts " + std::to_string(g.seg_counts_ahead_bytes) + " bytes ahead"
                                            : std::string());
    s << " (" << kernel << ": " << p.axes[r.seg_axis].extent << " segments, counts up to " << r.seg_max_count
      << (p.kernel != ReduceKernel::segments_runs
              ? ", each by the sub-problem planned for its count" +
                    (r.seg_prefetch_bytes > 0
                         ? ", prefetched " + std::to_string(r.seg_prefetch_bytes) + " bytes ahead along the rows"
                         : std::string())
          : r.seg_many.seg_group_count > 0
              ? ", runs summed two groups of segments at a time from one-byte counts" + groups_prefetch
              : ", runs summed a vector of segments at a time")
      << ")";
  } else if (p.path != ReducePath::none && p.path != ReducePath::zeros)
    s << " (" << kernel << ": " << p.nred << " addends per output element, " << p.nleaves << " leaves, " << p.nitems
      << " items of up to " << p.strip << " elements" << (p.rows_whole ? ", each row read whole" : "") << prefetch
      << ")";
  return s.str();
}

}  // namespace tessera::detail
