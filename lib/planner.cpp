// The planner's steps (planner.hpp). Output axis i of every operation is a nest of two loops:
// the source axis (extent, byte stride) and its rep loop (reps, source stride 0) — the rep loop
// outside for tile and broadcast (the whole axis again), inside for repeat (each element again).
// The interleaved list of all those loops, outermost first, walks the output C-contiguously;
// simplify drops the loops of extent 1 and merges each affine pair (OpenVINO's CPU plugin
// simplifies the same interleaved list), and choose_path turns the innermost one or two entries
// into the row kernel and the rest into row loops.
#include "planner.hpp"

#include "error.hpp"
#include "operation_info.hpp"
#include "kernels/kernels.hpp"

#include <fcntl.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace tessera::detail {
namespace {

// The first line of a small sysfs file into buf (NUL-terminated), false if it cannot be read.
// POSIX calls rather than std::ifstream: a stream's first use sets up its locale, and the whole
// scan took 240-300 us that way in a fresh process (100-130 us like this; KVM guest, 2026-11-28).
bool read_small_file(const char* path, char* buf, std::size_t size) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::read(fd, buf, size - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

// Bytes of CPU 0's data or unified caches (Linux sysfs): the highest level's and level 2's, 0
// where unknown. Read once (stream_min_bytes and intel_mesh_l3 both need them; the scan takes
// 0.2-0.4 ms).
struct CacheSizes {
  int64_t last_level = 0;
  int64_t level2 = 0;
};
CacheSizes scan_cache_sizes() {
  CacheSizes c;
  int best_level = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    char level[16], type[32], size[32];
    if (!read_small_file((dir + "level").c_str(), level, sizeof level) ||
        !read_small_file((dir + "type").c_str(), type, sizeof type))
      break;
    const int lv = std::atoi(level);
    if (std::strncmp(type, "Instruction", 11) == 0) continue;
    if (!read_small_file((dir + "size").c_str(), size, sizeof size)) break;
    char* end = nullptr;
    const long long n = std::strtoll(size, &end, 10);
    const int64_t unit = *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : *end == 'G' ? int64_t{1} << 30 : 1;
    if (n > 0 && n < (int64_t{1} << 40) / unit) {
      if (lv == 2) c.level2 = n * unit;
      if (lv >= best_level) {
        c.last_level = n * unit;
        best_level = lv;
      }
    }
  }
  return c;
}
const CacheSizes& cache_sizes() {
  static const CacheSizes c = scan_cache_sizes();
  return c;
}

// Whether "repeat.shuffle" takes element repeats of `reps` copies of `isz`-byte elements at source
// stride `stride` (a contiguous source of 1-, 2-, 4-, 8-byte elements, 2..8 copies).
bool repeat_shuffles(int64_t isz, int64_t reps, int64_t stride) {
  return stride == isz && (isz == 1 || isz == 2 || isz == 4 || isz == 8) && reps >= 2 && reps <= kRepeatShuffleMaxReps;
}

int64_t checked_product(const Dims& shape, const char* what) {
  int64_t n = 1;
  for (int i = 0; i < shape.size(); ++i)
    if (shape[i] == 0) return 0;
  for (int i = 0; i < shape.size(); ++i)
    if (__builtin_mul_overflow(n, shape[i], &n))
      overflow(std::string(what) + " overflows int64 at axis " + std::to_string(i) + " (extent " +
               std::to_string(shape[i]) + ")");
  return n;
}

}  // namespace

int64_t stream_min_bytes() {
  static const int64_t bytes = [] {
    const int64_t n = env_int64("TESSERA_STREAM_MIN_BYTES", 0);
    if (n > 0) return n;
    const CacheSizes c = cache_sizes();
    if (c.last_level <= 0) return kStreamMinBytes;
    if (intel_mesh_l3())
      return std::clamp(4 * c.level2, kStreamMinClamp[0], kStreamMinClamp[1]);
    return std::clamp(c.last_level / 4 * 3, kStreamMinClamp[0], kStreamMinClamp[1]);
  }();
  return bytes;
}

CpuKind cpu_kind() noexcept {
  CpuKind k;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return k;
  if (b == 0x756e6547u && d == 0x49656e69u && c == 0x6c65746eu) k.vendor = CpuKind::Vendor::intel;  // "GenuineIntel"
  if (b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u) k.vendor = CpuKind::Vendor::amd;    // "AuthenticAMD"
  if (!__get_cpuid(1, &a, &b, &c, &d)) return k;
  k.family = (a >> 8) & 0xf;
  k.model = (a >> 4) & 0xf;
  if (k.family == 0x6 || k.family == 0xf) k.model += ((a >> 16) & 0xf) << 4;
  if (k.family == 0xf) k.family += (a >> 20) & 0xff;
#endif
  return k;
}

bool intel_mesh_l3() noexcept {
  static const bool mesh = [] {
    if (cpu_kind().vendor != CpuKind::Vendor::intel) return false;
    try {
      return cache_sizes().last_level > kMeshL3MinBytes;
    } catch (...) {  // the sysfs paths' strings (bad_alloc): an unknown cache
      return false;
    }
  }();
  return mesh;
}

int64_t env_int64(const char* name, int64_t fallback) noexcept {
  const char* env = std::getenv(name);
  if (env == nullptr) return fallback;
  char* end = nullptr;
  const long long n = std::strtoll(env, &end, 10);
  return end != env && *end == '\0' ? static_cast<int64_t>(n) : fallback;
}

int64_t reduce_stream_min_bytes() {
  const int64_t s = stream_min_bytes();
  return s / 3 * 2 + s % 3;  // ceil(2s / 3), without forming 2s
}

bool reaches_stream_min(int64_t bytes, bool reduction) {
  static const bool from_env = env_int64("TESSERA_STREAM_MIN_BYTES", 0) > 0;
  const int64_t lowest = reduction ? kStreamMinClamp[0] / 3 * 2 : kStreamMinClamp[0];  // <= any line
  if (!from_env && bytes < lowest) return false;
  return bytes >= (reduction ? reduce_stream_min_bytes() : stream_min_bytes());
}

const char* kernel_name(Kernel k) noexcept {
  switch (k) {
    case Kernel::copy: return "copy";
    case Kernel::pattern: return "pattern";
    case Kernel::fill: return "fill";
    case Kernel::gather: return "gather";
    case Kernel::repeat: return "repeat";
    case Kernel::segments: return "segments";
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

// ---- Step 1 ---------------------------------------------------------------------------------

void init_input(CopyPlan& p, const Dims& shape, const Dims& strides, std::size_t itemsize, const Options& options) {
  validate_options(options);
  p.options = options;
  if (itemsize == 0) invalid("itemsize = 0; it must be a positive byte count");
  if (itemsize > static_cast<std::size_t>(INT64_MAX)) overflow("itemsize " + std::to_string(itemsize) + " overflows int64");
  p.itemsize = itemsize;
  for (int i = 0; i < shape.size(); ++i)
    if (shape[i] < 0) invalid("shape[" + std::to_string(i) + "] = " + std::to_string(shape[i]) + " is negative");
  if (!strides.empty() && strides.size() != shape.size())
    invalid("strides has " + std::to_string(strides.size()) + " values but shape has " + std::to_string(shape.size()) +
            " (give one byte stride per axis, or none for C-contiguous)");
  p.in_shape = shape;
  p.input_size = checked_product(shape, "input element count");
  if (!strides.empty()) {
    p.in_strides = strides;
    return;
  }
  // (An input whose byte size overflows is reported after the output's sizes: see finish.)
  int64_t st[max_ndim];
  int64_t s = static_cast<int64_t>(itemsize);
  for (int i = shape.size() - 1; i >= 0; --i) {
    st[i] = p.input_size == 0 ? 0 : s;
    if (p.input_size != 0 && p.in_bytes_overflow_axis < 0 && __builtin_mul_overflow(s, shape[i], &s))
      p.in_bytes_overflow_axis = i;
  }
  p.in_strides = Dims(st, static_cast<std::size_t>(shape.size()));
}

// ---- Step 2: the operation's nest step (operations.cpp) ----------------------------------------

// ---- Step 3 ---------------------------------------------------------------------------------

void size_output(CopyPlan& p) {
  p.out_size = checked_product(p.out_shape, "output element count");
  int64_t bytes = 0;
  if (__builtin_mul_overflow(p.out_size, static_cast<int64_t>(p.itemsize), &bytes))
    overflow("output byte size " + std::to_string(p.out_size) + " elements * " + std::to_string(p.itemsize) +
             " bytes overflows int64/size_t");
  p.nbytes = static_cast<std::size_t>(bytes);
}

// ---- Step 4 ---------------------------------------------------------------------------------

void simplify(CopyPlan& p) {
  // Interleave, outermost first, dropping entries of extent 1 (never a segment entry: its first
  // output index may read a source index other than 0).
  Entry e[kMaxLoops];
  int ne = 0;
  const auto add = [&](Entry x) {
    if (x.extent != 1 || x.segment) e[ne++] = x;
  };
  for (int i = 0; i < p.nest_size; ++i) {
    const NestAxis& a = p.nest[i];
    if (a.reps == kSegmentReps) {
      add({p.prefix.back(), a.stride, true});
    } else if (a.elementwise) {
      add({a.extent, a.stride, false});
      add({a.reps, 0, false});
    } else {
      add({a.reps, 0, false});
      add({a.extent, a.stride, false});
    }
  }
  // Merge from the inside out: outer (a) folds into inner (b) when the pair is one affine walk.
  int nm = 0;
  for (int k = ne - 1; k >= 0; --k) {
    Entry& in = p.entries[nm - 1 < 0 ? 0 : nm - 1];
    if (nm > 0 && !in.segment && !e[k].segment && affine_pair(e[k].stride, in.stride, in.extent)) {
      in.extent *= e[k].extent;  // cannot overflow: bounded by the output's element count
    } else {
      p.entries[nm++] = e[k];
    }
  }
  // A single element (all extents 1) is a copy of one element.
  if (nm == 0) p.entries[nm++] = {1, static_cast<int64_t>(p.itemsize), false};
  p.nentries = nm;
}

// ---- Step 5 ---------------------------------------------------------------------------------

namespace {

// Replicas of paths other than the blocked gather (choose_path): walked in steps where the
// source (read whole by every replica) and each replica are at least half of L2
// (kReplicaUnknownL2Bytes where sysfs does not say; never at or below kReplicaFloorBytes, which
// also spares a small first call the sysfs scan): the source and the replica written after it no
// longer both stay in L2, and each replica read its source again from the last level. A smaller
// source is read again from L2: `medium` (4 replicas of 1 MiB from a 256 KiB source, output in
// the cache) was 6% slower in steps. The step's source stays in L1 while it is written to every
// replica: `outer` was 1.04-1.05x faster in steps of 32 KiB than of 64 KiB, 0.99x of 256 KiB (a
// Xeon reporting family 6 model 167, 48 KiB of L1d, 2026-12-04:
// bench/results/2026-12-04-xeon-f6m167/experiments-replica-steps.txt). From half of L2 rather
// than all of it: 4 replicas of a 1 MiB source (L2 2 MiB) 1.11x / 1.18x faster at 1 / 2 threads,
// of a 2 MiB source 1.30x / 1.12x, 8 of a 1 MiB source 1.06x / 1.05x, `medium` within 2%, every
// case of bench/cases.json within 5% (the same Xeon, 2026-12-06, bench/compare --cases
// bench/cases-in-cache.json: bench/results/2026-12-06-xeon-f6m167/
// compare-68f7e51-replicas-half-l2.txt).
constexpr int64_t kReplicaFloorBytes = int64_t{256} << 10;
constexpr int64_t kReplicaUnknownL2Bytes = int64_t{1} << 20;
constexpr int64_t kReplicaStepBytes = int64_t{32} << 10;

// Whether n elements of isz bytes are at least half of L2's bytes (replicas in steps), without
// overflow.
bool beyond_l2(int64_t n, int64_t isz) {
  if (n <= kReplicaFloorBytes / isz) return false;
  const int64_t l2 = cache_sizes().level2;
  return n >= (l2 > 0 ? l2 : kReplicaUnknownL2Bytes) / 2 / isz;
}

// choose_path's first part: the row kernel and the row's fields from the innermost one or two
// entries; returns how many entries the row takes (the rest become row loops).
int choose_row(CopyPlan& p, Kernel* kernel) {
  const Entry* m = p.entries;  // innermost first
  const int nm = p.nentries;
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  p.run_bytes = p.count = p.inner_stride = p.inner_reps = 0;
  if (m[0].segment) {
    *kernel = Kernel::segments;
    p.row_elems = m[0].extent;
    p.count = static_cast<int64_t>(p.prefix.size()) - 1;
    p.inner_stride = m[0].stride;
    return 1;
  }
  if (m[0].stride == isz && nm > 1 && m[1].stride == 0 && !m[1].segment) {
    *kernel = Kernel::pattern;
    p.run_bytes = m[0].extent * isz;
    p.count = m[1].extent;
    p.row_elems = m[0].extent * m[1].extent;
    return 2;
  }
  if (m[0].stride == isz) {
    *kernel = Kernel::copy;
    p.row_elems = m[0].extent;
    return 1;
  }
  if (m[0].stride == 0 && nm > 1 && !m[1].segment && m[1].stride != 0 &&
      (m[0].extent * isz < kRepeatMaxBytes ||  // no overflow: at most the output's bytes
       repeat_shuffles(isz, m[0].extent, m[1].stride))) {
    *kernel = Kernel::repeat;  // short element repeats: whole source rows, not one fill per element
    p.inner_reps = m[0].extent;
    p.count = m[1].extent;
    p.inner_stride = m[1].stride;
    p.row_elems = m[0].extent * m[1].extent;
    return 2;
  }
  *kernel = m[0].stride == 0 ? Kernel::fill : Kernel::gather;
  p.count = p.row_elems = m[0].extent;
  if (*kernel == Kernel::gather) p.inner_stride = m[0].stride;
  return 1;
}

// The entries past the row's become row loops, outermost first, with C-contiguous destination
// strides.
void lay_out_loops(CopyPlan& p, int used) {
  const int nm = p.nentries;
  p.nloops = nm - used;
  int64_t dst_stride = p.row_elems * static_cast<int64_t>(p.itemsize);
  p.nrows = 1;
  for (int k = used; k < nm; ++k) {
    const Entry& e = p.entries[k];
    p.loops[nm - 1 - k] = {e.extent, e.stride, dst_stride, e.segment};
    dst_stride *= e.extent;
    p.nrows *= e.extent;
  }
}

// The element-size variant of the fill and gather paths.
PathVariant size_variant(int64_t isz) {
  switch (isz) {
    case 1: return PathVariant::b1;
    case 2: return PathVariant::b2;
    case 4: return PathVariant::b4;
    case 8: return PathVariant::b8;
    case 16: return PathVariant::b16;
    default: return PathVariant::any;
  }
}

// The kernel's variant (what the target can do permitting) and whether its rows are gathered
// through the blocked transpose.
PathVariant choose_variant(const CopyPlan& p, Kernel kernel, const KernelCaps& caps, bool* blocked) {
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  const int64_t st = p.inner_stride;
  *blocked = kernel == Kernel::gather && p.nloops > 0 && isz <= kBlockedGatherMaxItem &&
             (st >= kBlockedGatherStride || st <= -kBlockedGatherStride);
  switch (kernel) {
    case Kernel::pattern:
      if (p.run_bytes >= kLongRunBytes) return PathVariant::long_run;
      return caps.vectors && p.run_bytes <= kShuffleRunBytes && static_cast<int64_t>(p.nbytes) >= kShuffleMinBytes
                 ? PathVariant::shuffle
                 : PathVariant::short_run;
    case Kernel::fill: {
      const PathVariant v = size_variant(isz);
      return v == PathVariant::b16 && !caps.vectors ? PathVariant::any : v;  // Fill16 needs vectors
    }
    case Kernel::gather: return size_variant(isz);
    case Kernel::repeat:
      return caps.vectors && repeat_shuffles(isz, p.inner_reps, st) ? PathVariant::shuffle : PathVariant::elements;
    default: return PathVariant::none;
  }
}

// Whether the segments kernel walks the one-byte counts (Prefix::counts8) of plan `p` whose
// kernel is `kernel`: one segment axis, every count within one 16-byte store, a vector target.
bool keeps_counts8(const CopyPlan& p, Kernel kernel, const KernelCaps& caps) {
  return kernel == Kernel::segments && p.seg_naxes == 1 && p.prefix.counts8() != nullptr &&
         segments_walk_bytes(static_cast<int64_t>(p.itemsize), p.seg_max_count, caps);
}

// The store route. Streaming stores: asked for, or automatic for large outputs — except into fresh
// pages (just zeroed by the kernel, still cached: ordinary stores hit them there) and on targets
// without them. Huge elements are not worth staging. Gathers stream only through the blocked
// path's tile; rows gathered one by one are bound by their strided reads. Contiguous source
// pieces of kDirectStreamBytes or more, fills whose rows are whole cache lines, rows of short runs
// of kShuffleDirectRowBytes or more, and element repeats of 4- and 8-byte elements by lane
// permutations in rows of kDirectStreamBytes or more, and segments whose one-byte counts are
// walked in rows of kSegmentsDirectRowBytes or more (through the kernel's own small stage,
// SegmentsRing), stream directly; the rest through blocks staged in L1.
Route choose_route(const CopyPlan& p, Kernel kernel, PathVariant variant, bool blocked, const KernelCaps& caps) {
  const NonTemporal nt = p.options.nontemporal;
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  const bool stream = caps.stream_stores && isz <= kStageBytes / 4 && (kernel != Kernel::gather || blocked) &&
                      (nt == NonTemporal::always || (nt == NonTemporal::automatic && !p.fresh_output &&
                                                     reaches_stream_min(static_cast<int64_t>(p.nbytes), false)));
  if (!stream) return Route::plain;
  const int64_t row_bytes = p.row_elems * isz;
  switch (kernel) {
    case Kernel::copy: return row_bytes >= kDirectStreamBytes ? Route::direct : Route::staged;
    case Kernel::pattern:
      if (variant == PathVariant::shuffle) return row_bytes >= kShuffleDirectRowBytes ? Route::direct : Route::staged;
      return variant == PathVariant::long_run && p.run_bytes >= kDirectStreamBytes ? Route::direct : Route::staged;
    case Kernel::fill:
      return variant != PathVariant::any && row_bytes % kLineBytes == 0 ? Route::direct : Route::staged;
    case Kernel::repeat:  // RepeatStream: lane permutations of 4- and 8-byte elements
      return variant == PathVariant::shuffle && (isz == 4 || isz == 8) && row_bytes >= kDirectStreamBytes
                 ? Route::direct
                 : Route::staged;
    case Kernel::segments:  // SegmentsRing: where the one-byte counts are walked (keeps_counts8)
      return keeps_counts8(p, kernel, caps) && row_bytes >= kSegmentsDirectRowBytes ? Route::direct : Route::staged;
    default: return Route::staged;
  }
}

}  // namespace

int64_t segments_walk_max_count(int64_t isz) noexcept {
  return isz == 1 || isz == 2 || isz == 4 || isz == 8 ? 16 / isz : 0;
}

bool segments_walk_bytes(int64_t isz, int64_t max_count, const KernelCaps& caps) noexcept {
  const int64_t most = segments_walk_max_count(isz);
  return caps.vectors && most > 0 && max_count <= most;
}

bool segments_may_walk_bytes(int64_t isz) { return segments_walk_bytes(isz, 1, kernel_caps()); }

void choose_path(CopyPlan& p, const KernelCaps& caps) {
  if (p.out_size == 0) {
    p.path = p.plain_path = Path::none;
    p.prefix.drop_counts8();
    return;
  }
  Kernel kernel = Kernel::none;
  lay_out_loops(p, choose_row(p, &kernel));
  bool blocked = false;
  PathVariant variant = choose_variant(p, kernel, caps, &blocked);
  // Fills whose rows are one cache line each, with ordinary stores: ".lines" (streamed, such rows
  // take the direct route).
  const bool lines = kernel == Kernel::fill && has_line_rows(variant) &&
                     p.row_elems * static_cast<int64_t>(p.itemsize) == kLineBytes;
  const Route route = choose_route(p, kernel, variant, blocked, caps);
  // Runs of kMemcpyRunBytes or more written with ordinary stores: the C library's memcpy, run by
  // run ("pattern.memcpy"; streamed, they keep pattern.long.nt[.direct]).
  if (variant == PathVariant::long_run && route == Route::plain && p.run_bytes >= kMemcpyRunBytes)
    variant = PathVariant::memcpy;
  p.path = find_path(kernel, variant, route, blocked, lines && route == Route::plain);
  p.plain_path = find_path(kernel, variant, Route::plain, blocked, lines);
  // Replicas: an output that is `replicas` copies of its first replica (an outermost loop of
  // source stride 0, as tile's reps on the leading axis; or one row that is a pattern of whole
  // runs). The executor splits the first replica among the threads and each range is written to
  // every replica. A blocked gather's replicas (a transposed view): contiguous chunks of the whole
  // output made every thread gather the source again (`strided` at 2 threads read 32 MiB for 64 MiB
  // out, not 16). Other paths take replicas where the source (read whole by each replica) and
  // each replica are at least half of L2 (beyond_l2), walked in steps of kReplicaStepBytes, each
  // written to every replica before the next (CopyPlan::replica_step_elems): one replica after another,
  // each read its whole source again, from memory once it is larger than the caches (`outer`, 4
  // replicas of a 16 MiB source, at 1 thread read 64 MiB for 64 MiB out and wrote at 70% of
  // `stream`).
  p.replica_elems = 0;
  p.replicas = 1;
  p.replica_step_elems = 0;
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  if (p.nloops >= (blocked ? 2 : 1) && p.loops[0].src_stride == 0 && !p.loops[0].segment && p.loops[0].extent > 1) {
    p.replicas = p.loops[0].extent;
    p.replica_elems = p.nrows / p.replicas * p.row_elems;
  } else if (!blocked && p.nloops == 0 && kernel == Kernel::pattern && p.count > 1 && p.run_bytes % isz == 0 &&
             p.count * p.run_bytes == p.row_elems * isz) {
    p.replicas = p.count;
    p.replica_elems = p.run_bytes / isz;
  }
  if (!blocked && p.replica_elems != 0) {
    if (beyond_l2(p.replica_elems, isz) && beyond_l2(p.input_size, isz)) {
      // About kReplicaStepBytes: at least 64 elements, at most the replica.
      p.replica_step_elems = std::min(p.replica_elems, std::max<int64_t>(64, kReplicaStepBytes / isz / 64 * 64));
    } else {
      p.replicas = 1;
      p.replica_elems = 0;
    }
  }
  // A blocked gather's chunks hold whole rows: at line boundaries into an output off the lines
  // (dst + 16), every chunk began and ended inside a row, whose pieces were gathered element by
  // element (`strided` at 2 threads 0.91 of its aligned speed; 1.00 with whole rows: 2026-12-03,
  // a Xeon reporting family 6 model 167, bench/results/2026-12-03-xeon-f6m167/
  // compare-dst16-stage-phase-only.txt and compare-dst16-stage-phase.txt).
  p.chunk_rows_elems = blocked ? p.row_elems : 0;
  // The one-byte counts (Prefix::counts8) stay where the segments kernel walks them. That walk
  // reads a byte per element instead of the 8-byte prefix sums: rep_counts (float32 counts 0-4)
  // has 104 MiB to move instead of 160.
  if (!keeps_counts8(p, kernel, caps)) p.prefix.drop_counts8();
}

void finish_plan(CopyPlan& p) {
  size_output(p);
  if (p.in_bytes_overflow_axis >= 0)
    overflow("input byte size overflows int64 at axis " + std::to_string(p.in_bytes_overflow_axis));
  if (p.out_size > 0) {
    simplify(p);
    choose_path(p, kernel_caps());
  } else {
    p.prefix.drop_counts8();  // nothing to walk
  }
}

void plan_for_fresh_output(CopyPlan& p) {
  if (p.out_size == 0) return;
  p.fresh_output = true;  // (also the executor's threads: threads_for)
  if (p.options.nontemporal == NonTemporal::automatic) choose_path(p, kernel_caps());
}

Dims output_shape_only(CopyPlan&& p) {
  size_output(p);
  return p.out_shape;
}

// ---- Regions ------------------------------------------------------------------------------

namespace {

// Nest axis i of the plan as the region kernel walks the region [start, start + extent) on it.
RegionAxis region_axis(const CopyPlan& plan, int i, int64_t start, int64_t extent) {
  const NestAxis& a = plan.nest[i];
  const int64_t period = a.extent;  // > 0: the output is not empty
  RegionAxis x{period, period == 1 ? 0 : a.stride, 0, extent, 0, 0, 0};
  if (!a.elementwise || a.reps == 1) {
    x.start = start % period;
  } else if (a.reps == kSegmentReps) {  // the source index whose segment holds `start`
    int64_t seg_start;
    x.start = plan.prefix.segment_of(start, &seg_start);
    x.reps = kSegmentReps;
    x.phase = start - seg_start;
  } else {
    x.start = start / a.reps;
    x.reps = a.reps;
    x.phase = start % a.reps;
  }
  return x;
}

// Merges whole-axis axes (outermost first) from the inside out into r.axes. An outer axis `o`
// folds into the inner axis `in` when `in` covers exactly one whole period starting at 0 and o's
// source step is one whole period of `in` (or o has a single source index): then the pair walks
// source indices o_k * in.period + in_k with in_k over [0, in.period) — one axis of period
// o.period * in.period.
void merge_region_axes(const RegionAxis* axes, int na, Region& r) {
  RegionAxis m[max_ndim];  // innermost first
  int nm = 0;
  for (int k = na - 1; k >= 0; --k) {
    const RegionAxis& o = axes[k];
    if (nm > 0 && o.reps == 0 && m[nm - 1].reps == 0) {
      RegionAxis& in = m[nm - 1];
      if (in.start == 0 && in.extent == in.period && (o.period == 1 || affine_pair(o.stride, in.stride, in.period))) {
        in.start = o.start * in.period;
        in.extent *= o.extent;  // bounded by the output's element count
        in.period *= o.period;  // bounded by the input's element count
        continue;
      }
    }
    m[nm++] = o;
  }
  r.naxes = nm;
  for (int k = 0; k < nm; ++k) r.axes[k] = m[nm - 1 - k];
}

}  // namespace

Region plan_region(const CopyPlan& plan, const Dims& start, const Dims& extent) {
  Region r;
  r.itemsize = plan.itemsize;
  r.prefix = plan.prefix.empty() ? nullptr : &plan.prefix;
  if (plan.flattened) {  // a 1-d output: the region is a range of it
    r.as_range = true;
    r.begin = start[0];
    r.end = start[0] + extent[0];
    return r;
  }
  RegionAxis axes[max_ndim];
  int na = 0;
  for (int i = 0; i < plan.nest_size; ++i) {
    const RegionAxis x = region_axis(plan, i, start[i], extent[i]);
    if (extent[i] == 1) {
      r.src_offset += x.start * x.stride;  // a constant source index on this axis
    } else {
      axes[na++] = x;
    }
  }
  merge_region_axes(axes, na, r);
  int64_t step = static_cast<int64_t>(plan.itemsize);
  for (int k = r.naxes - 1; k >= 0; --k) {
    r.axes[k].step_bytes = step;
    step *= r.axes[k].extent;
  }
  return r;
}

// ---- describe -----------------------------------------------------------------------------

std::string describe(const CopyPlan& p) {
  std::ostringstream os;
  os << info_of(p.op).name << " plan: input " << dims_str(p.in_shape);
  if (p.out_size > 0) os << " strides " << dims_str(p.in_strides) << " B";
  os << ", itemsize " << p.itemsize << " B";
  switch (info_of(p.op).arg) {
    case ArgKind::reps: os << ", reps " << dims_str(p.reps); break;
    case ArgKind::shape: os << ", shape " << dims_str(p.target); break;
    case ArgKind::repeats:
      if (p.repeats == kSegmentReps) {
        os << ", " << p.prefix.size() - 1 << " per-element repeats (total " << p.prefix.back() << ")";
      } else {
        os << ", repeats " << p.repeats;
      }
      os << (p.axis >= 0 ? " along axis " + std::to_string(p.axis) : std::string(" of the flattened input"));
      break;
  }
  os << " -> output " << dims_str(p.out_shape) << ", " << p.nbytes << " B";
  if (p.out_size == 0) {
    os << "; nothing to write\n  kernel: none\n";
    return os.str();
  }
  if (p.options.max_threads > 0) os << ", at most " << p.options.max_threads << " thread(s)";
  if (p.fresh_output) os << ", into fresh pages";
  os << "\n";
  const int64_t isz = static_cast<int64_t>(p.itemsize);
  for (int k = 0; k < p.nloops; ++k) {
    const Loop& l = p.loops[k];
    os << "  loop " << k << ": " << l.extent << " x (src stride " << l.src_stride << " B"
       << (l.segment ? " per source index, segments of the counts" : "") << ", dst stride " << l.dst_stride << " B)\n";
  }
  if (p.replica_elems != 0) {
    os << "  replicas: " << p.replicas << " of " << p.replica_elems * isz << " B";
    if (p.replica_step_elems != 0) os << " in steps of " << p.replica_step_elems * isz << " B";
    os << ", each range of the first written to all (when the first is long enough to split)\n";
  }
  if (p.chunk_rows_elems != 0)
    os << "  chunks: whole rows of " << p.chunk_rows_elems * isz
       << " B (where there are enough rows for the threads' chunks)\n";
  os << "  kernel: " << kernel_name(p.kernel()) << " [" << path_info(p.path).name << "]";
  switch (p.kernel()) {
    case Kernel::copy: os << " run of " << p.row_elems * isz << " B"; break;
    case Kernel::pattern: os << " run of " << p.run_bytes << " B repeated " << p.count << "x"; break;
    case Kernel::fill: os << " 1 element of " << isz << " B repeated " << p.count << "x"; break;
    case Kernel::gather: os << " " << p.count << " elements at src stride " << p.inner_stride << " B"; break;
    case Kernel::repeat:
      os << " " << p.count << " elements at src stride " << p.inner_stride << " B, each repeated " << p.inner_reps << "x";
      break;
    case Kernel::segments:
      os << " " << p.count << " elements";
      if (p.seg_naxes == 1) os << " at src stride " << p.inner_stride << " B";
      else os << " over " << p.seg_naxes << " source axes";
      os << ", element i repeated counts[i] times";
      if (p.prefix.compact())
        os << " (one-byte counts, every " << Prefix::kSparseStep << "th prefix sum)";
      else if (p.prefix.counts8() != nullptr)
        os << " (one-byte counts)";
      break;
    case Kernel::none: break;
  }
  os << " (row " << p.row_elems * isz << " B, " << p.nrows << " rows)\n";
  return os.str();
}

}  // namespace tessera::detail
