// The planner: (shape, strides, itemsize, reps, options) -> PlanData.
//
// 0. Options are validated and kept in the plan; under NegativeReps::clamp_to_zero (OpenVINO
//    Tile-1) negative reps become 0 before anything else looks at them.
// 1. Promote: the shorter of shape and reps gets 1s prepended (numpy.tile).
// 2. Validate with checked arithmetic: no negative extent or rep; every output extent, the
//    element count and the byte size fit int64_t (and size_t) — before anything is allocated.
// 3. Simplify. Output axis i is the nest (rep_i, dim_i): the rep loop has source stride 0 and the
//    dim loop the input's stride, and the whole interleaved list rep_0, dim_0, rep_1, dim_1, ...
//    walks the output C-contiguously. Entries of extent 1 are dropped, and an outer entry is
//    merged into the inner one when the pair is one affine loop (outer stride == inner stride *
//    inner extent) — this folds the reps of size-1 input axes together and joins contiguous axes.
//    (OpenVINO's CPU plugin simplifies the same interleaved list.)
// 4. The innermost one or two entries become the row kernel; the rest are the row loops.
#include "plan.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tessera::detail {
namespace {

// Bytes of the highest-level data or unified cache CPU 0 has (Linux sysfs), 0 if unknown.
int64_t last_level_cache_bytes() {
  int64_t best = 0;
  int best_level = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) break;
    if (type == "Instruction" || level < best_level) continue;
    char* end = nullptr;
    const long long n = std::strtoll(size.c_str(), &end, 10);
    const int64_t unit = *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : *end == 'G' ? int64_t{1} << 30 : 1;
    if (n > 0 && n < (int64_t{1} << 40) / unit) {
      best = n * unit;
      best_level = level;
    }
  }
  return best;
}

struct Entry {
  int64_t extent;
  int64_t stride;  // source bytes
};

[[noreturn]] void invalid(const std::string& what) { throw InvalidArgument("tessera: " + what); }
[[noreturn]] void overflow(const std::string& what) { throw Overflow("tessera: " + what); }

std::string join(const Dims& d) {
  std::string s = "(";
  for (int i = 0; i < d.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(d[i]);
  }
  if (d.size() == 1) s += ",";
  return s + ")";
}

void check_lengths(const Dims& shape, const Dims& reps) {
  // Dims already caps its length at max_ndim; repeat the check for lists built elsewhere.
  if (shape.size() > max_ndim) invalid("ndim " + std::to_string(shape.size()) + " exceeds TESSERA_MAX_NDIM");
  if (reps.size() > max_ndim) invalid("len(reps) " + std::to_string(reps.size()) + " exceeds TESSERA_MAX_NDIM");
  for (int i = 0; i < shape.size(); ++i)
    if (shape[i] < 0) invalid("shape[" + std::to_string(i) + "] = " + std::to_string(shape[i]) + " is negative");
  for (int i = 0; i < reps.size(); ++i)
    if (reps[i] < 0)
      invalid("reps[" + std::to_string(i) + "] = " + std::to_string(reps[i]) + " is negative (numpy.tile needs reps >= 0)");
}

}  // namespace

int64_t stream_min_bytes() {
  static const int64_t bytes = [] {
    if (const char* env = std::getenv("TESSERA_STREAM_MIN_BYTES")) {
      char* end = nullptr;
      const long long n = std::strtoll(env, &end, 10);
      if (end != env && *end == '\0' && n > 0) return static_cast<int64_t>(n);
    }
    const int64_t llc = last_level_cache_bytes();
    if (llc <= 0) return kStreamMinBytes;
    const int64_t half = llc / 2;
    return half < kStreamMinClamp[0] ? kStreamMinClamp[0] : half > kStreamMinClamp[1] ? kStreamMinClamp[1] : half;
  }();
  return bytes;
}

const char* kernel_name(Kernel k) noexcept {
  switch (k) {
    case Kernel::copy: return "copy";
    case Kernel::pattern: return "pattern";
    case Kernel::fill: return "fill";
    case Kernel::gather: return "gather";
    case Kernel::none: break;
  }
  return "none";
}

void validate_options(const Options& options) {
  const int nt = static_cast<int>(options.nontemporal);
  if (nt < 0 || nt > 2)
    invalid("options.nontemporal = " + std::to_string(nt) + " is not automatic (0), always (1) or never (2)");
  const int neg = static_cast<int>(options.negative_reps);
  if (neg < 0 || neg > 1)
    invalid("options.negative_reps = " + std::to_string(neg) + " is not error (0) or clamp_to_zero (1)");
  if (options.max_threads < 0)
    invalid("options.max_threads = " + std::to_string(options.max_threads) +
            " is negative (0 lets the caller's TBB arena decide; N > 0 allows at most N threads)");
}

Dims effective_reps(const Dims& reps, const Options& options) {
  if (options.negative_reps != NegativeReps::clamp_to_zero) return reps;
  int64_t r[max_ndim];
  for (int i = 0; i < reps.size(); ++i) r[i] = reps[i] < 0 ? 0 : reps[i];
  return Dims(r, static_cast<std::size_t>(reps.size()));
}

Dims checked_output_shape(const Dims& shape, const Dims& reps, int64_t* out_size) {
  check_lengths(shape, reps);
  const int n = shape.size() > reps.size() ? shape.size() : reps.size();
  const int shape_pad = n - shape.size(), reps_pad = n - reps.size();
  int64_t out[max_ndim];
  bool empty = false;
  for (int i = 0; i < n; ++i) {
    const int64_t s = i < shape_pad ? 1 : shape[i - shape_pad];
    const int64_t r = i < reps_pad ? 1 : reps[i - reps_pad];
    if (__builtin_mul_overflow(s, r, &out[i]))
      overflow("output extent of axis " + std::to_string(i) + " = " + std::to_string(s) + " * " + std::to_string(r) +
               " overflows int64");
    empty = empty || out[i] == 0;
  }
  int64_t size = 1;
  if (empty) {
    size = 0;
  } else {
    for (int i = 0; i < n; ++i)
      if (__builtin_mul_overflow(size, out[i], &size))
        overflow("output element count overflows int64 at axis " + std::to_string(i) + " (extent " +
                 std::to_string(out[i]) + ")");
  }
  if (out_size) *out_size = size;
  return Dims(out, static_cast<std::size_t>(n));
}

PlanData make_plan(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& given_reps,
                   const Options& options) {
  PlanData p;
  validate_options(options);
  p.options = options;
  const Dims reps = effective_reps(given_reps, options);
  if (itemsize == 0) invalid("itemsize = 0; it must be a positive byte count");
  if (itemsize > static_cast<std::size_t>(INT64_MAX)) overflow("itemsize " + std::to_string(itemsize) + " overflows int64");
  if (!strides.empty() && strides.size() != shape.size())
    invalid("strides has " + std::to_string(strides.size()) + " values but shape has " + std::to_string(shape.size()) +
            " (give one byte stride per axis, or none for C-contiguous)");
  p.out_shape = checked_output_shape(shape, reps, &p.out_size);
  const int64_t isz = static_cast<int64_t>(itemsize);
  int64_t bytes = 0;
  if (__builtin_mul_overflow(p.out_size, isz, &bytes))
    overflow("output byte size " + std::to_string(p.out_size) + " elements * " + std::to_string(itemsize) +
             " bytes overflows int64/size_t");
  p.nbytes = static_cast<std::size_t>(bytes);
  p.itemsize = itemsize;
  p.reps = reps;
  p.in_shape = shape;

  // Input element count and, if omitted, C-contiguous strides (only for a non-empty input).
  int64_t in_size = 1;
  for (int i = 0; i < shape.size(); ++i) in_size = shape[i] == 0 ? 0 : in_size;
  if (in_size != 0)
    for (int i = 0; i < shape.size(); ++i)
      if (__builtin_mul_overflow(in_size, shape[i], &in_size))
        overflow("input element count overflows int64 at axis " + std::to_string(i));
  p.input_size = in_size;
  if (strides.empty()) {
    int64_t st[max_ndim];
    int64_t s = isz;
    for (int i = shape.size() - 1; i >= 0; --i) {
      st[i] = in_size == 0 ? 0 : s;
      if (in_size != 0 && __builtin_mul_overflow(s, shape[i], &s))
        overflow("input byte size overflows int64 at axis " + std::to_string(i));
    }
    p.in_strides = Dims(st, static_cast<std::size_t>(shape.size()));
  } else {
    p.in_strides = strides;
  }
  if (p.out_size == 0) return p;

  // Interleaved (rep, dim) entries over the promoted axes, outermost first, extent-1 dropped.
  const int n = p.out_shape.size();
  const int shape_pad = n - shape.size(), reps_pad = n - reps.size();
  Entry e[kMaxLoops];
  int ne = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t r = i < reps_pad ? 1 : reps[i - reps_pad];
    const int64_t s = i < shape_pad ? 1 : shape[i - shape_pad];
    const int64_t st = i < shape_pad ? 0 : p.in_strides[i - shape_pad];
    if (r != 1) e[ne++] = {r, 0};
    if (s != 1) e[ne++] = {s, st};
  }
  // Merge from the inside out: outer (a) folds into inner (b) when a.stride == b.stride * b.extent.
  Entry m[kMaxLoops];
  int nm = 0;
  for (int k = ne - 1; k >= 0; --k) {
    int64_t span = 0;
    if (nm > 0 && !__builtin_mul_overflow(m[nm - 1].stride, m[nm - 1].extent, &span) && span == e[k].stride) {
      m[nm - 1].extent *= e[k].extent;  // cannot overflow: bounded by the output's element count
    } else {
      m[nm++] = e[k];
    }
  }
  // m is innermost first. A single element (0-d input, all extents 1) is a copy of one element.
  if (nm == 0) m[nm++] = {1, isz};

  int used = 1;
  if (m[0].stride == isz) {
    if (nm > 1 && m[1].stride == 0) {
      p.kernel = Kernel::pattern;
      p.run_bytes = m[0].extent * isz;
      p.count = m[1].extent;
      p.row_elems = m[0].extent * m[1].extent;
      used = 2;
    } else {
      p.kernel = Kernel::copy;
      p.row_elems = m[0].extent;
    }
  } else if (m[0].stride == 0) {
    p.kernel = Kernel::fill;
    p.count = p.row_elems = m[0].extent;
  } else {
    p.kernel = Kernel::gather;
    p.count = p.row_elems = m[0].extent;
    p.inner_stride = m[0].stride;
  }

  // Streaming stores, and the executor path: the kernel and the variant kernels/dispatch.cpp takes.
  p.stream = options.nontemporal == NonTemporal::always ||
             (options.nontemporal == NonTemporal::automatic && static_cast<int64_t>(p.nbytes) >= stream_min_bytes());
  // Huge elements are not worth staging. Gathers stream only through the blocked path's tile
  // (see kBlockedGatherStride); rows gathered one by one are bound by their strided reads.
  const bool blocked_gather = p.kernel == Kernel::gather && nm - used > 0 && isz <= kBlockedGatherMaxItem &&
                              (p.inner_stride >= kBlockedGatherStride || p.inner_stride <= -kBlockedGatherStride);
  if (isz > kStageBytes / 4 || (p.kernel == Kernel::gather && !blocked_gather)) p.stream = false;
  const bool fill_lines = p.kernel == Kernel::fill && (isz == 1 || isz == 2 || isz == 4 || isz == 8 || isz == 16) &&
                          p.row_elems * isz % kLineBytes == 0;
  p.stream_direct = p.stream && ((p.kernel == Kernel::copy && p.row_elems * isz >= kDirectStreamBytes) ||
                                 (p.kernel == Kernel::pattern && p.run_bytes >= kDirectStreamBytes) || fill_lines);
  // Variant: row of kKernelPaths (its element-size variants are in the order 1, 2, 4, 8, 16, any).
  const int size_variant = isz == 1 ? 0 : isz == 2 ? 1 : isz == 4 ? 2 : isz == 8 ? 3 : isz == 16 ? 4 : 5;
  int variant = 0;
  switch (p.kernel) {
    case Kernel::copy: variant = 0; break;
    case Kernel::pattern:
      p.shuffle = p.run_bytes <= kShuffleRunBytes && static_cast<int64_t>(p.nbytes) >= kShuffleMinBytes;
      variant = p.run_bytes >= kLongRunBytes ? 3 : p.shuffle ? 1 : 2;
      break;
    case Kernel::fill: variant = 4 + size_variant; break;
    case Kernel::gather: variant = 10 + size_variant; break;
    case Kernel::none: break;
  }
  p.path = kKernelPaths[variant][p.stream ? (p.stream_direct ? 2 : 1) : 0];

  // Row loops, outermost first, with C-contiguous destination strides.
  p.nloops = nm - used;
  int64_t dst_stride = p.row_elems * isz;
  p.nrows = 1;
  for (int k = used; k < nm; ++k) {
    Loop& l = p.loops[nm - 1 - k];
    l = {m[k].extent, m[k].stride, dst_stride};
    dst_stride *= m[k].extent;
    p.nrows *= m[k].extent;
  }

  return p;
}

std::string describe(const PlanData& p) {
  if (p.out_size == 0)
    return "tile plan: empty output " + join(p.out_shape) + "; nothing to write\n  kernel: none\n";
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  std::ostringstream os;
  os << "tile plan: input " << join(p.in_shape) << " strides " << join(p.in_strides) << " B, itemsize " << p.itemsize
     << " B, reps " << join(p.reps) << " -> output " << join(p.out_shape) << ", " << p.nbytes << " B";
  if (p.options.max_threads > 0) os << ", at most " << p.options.max_threads << " thread(s)";
  os << "\n";
  for (int k = 0; k < p.nloops; ++k)
    os << "  loop " << k << ": " << p.loops[k].extent << " x (src stride " << p.loops[k].src_stride
       << " B, dst stride " << p.loops[k].dst_stride << " B)\n";
  os << "  kernel: " << kernel_name(p.kernel) << " [" << p.path << "]";
  switch (p.kernel) {
    case Kernel::copy: os << " run of " << p.row_elems * isz << " B"; break;
    case Kernel::pattern: os << " run of " << p.run_bytes << " B repeated " << p.count << "x"; break;
    case Kernel::fill: os << " 1 element of " << isz << " B repeated " << p.count << "x"; break;
    case Kernel::gather: os << " " << p.count << " elements at src stride " << p.inner_stride << " B"; break;
    case Kernel::none: break;
  }
  os << " (row " << p.row_elems * isz << " B, " << p.nrows << " rows)\n";
  return os.str();
}

}  // namespace tessera::detail
