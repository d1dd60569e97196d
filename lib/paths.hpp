// The copy paths: every row kernel, its size variants and store routes (one Path each, named and
// described by one table), and the thresholds the planner chooses them by. Internal; no Highway,
// no TBB here. The row kernels (copy_plan.hpp says what a row is):
//
//   copy      the row is one contiguous source run of row_elems elements
//   pattern   a contiguous source run of run_bytes bytes repeated `count` times (tile's rep loop)
//   fill      one source element repeated `count` times (broadcast of an element)
//   gather    `count` elements read with source byte stride `inner_stride`
//   repeat    `count` elements at `inner_stride`, each repeated `reps` times (numpy.repeat)
//   segments  `count` elements at `inner_stride`, element i repeated counts[i] times
//   none      the output is empty; nothing runs
#ifndef TESSERA_LIB_PATHS_HPP
#define TESSERA_LIB_PATHS_HPP

#include <cstdint>

namespace tessera::detail {

/// The row kernels (see the file comment).
enum class Kernel : uint8_t { none, copy, pattern, fill, gather, repeat, segments };

/// How a path's rows reach the output: ordinary stores, non-temporal stores of blocks staged in
/// L1 ("….nt"), or non-temporal stores straight from the source or a register ("….nt.direct").
enum class Route : uint8_t { plain, staged, direct };

/// Every executor path, decided once by the planner (choose_path, by find_path): an index into
/// kPathInfo, whose entry says what the path is (kernel, variant, store route) and names it
/// (Plan::kernel_path()); the kernels dispatch on those fields. ".N" is the element size the
/// kernel is specialised for ("any": every other size); gathers are rows gathered one by one, or
/// whole rows through a blocked transpose in L1 (".blocked", streamed out as ".nt"); fills whose
/// rows are each one cache line (kLineBytes) with ordinary stores are ".lines" (streamed, such
/// rows take the direct route, which writes whole lines anyway).
enum class Path : uint8_t { none = 0 };

/// The variant of a row kernel a path runs: the element size it is specialised for (fill and
/// gather: 1, 2, 4, 8, 16 bytes, "any" for every other size), or how a pattern or repeat row is
/// generated (pattern: shuffle, short, long runs — see kLongRunBytes — and runs of
/// kMemcpyRunBytes or more written by the C library's memcpy; repeat: byte shuffles or element by
/// element); `none` for kernels with one variant.
enum class PathVariant : uint8_t { none, b1, b2, b4, b8, b16, any, shuffle, short_run, long_run, elements, memcpy };
inline constexpr const char* kPathVariantNames[] = {"", "1", "2", "4", "8", "16", "any", "shuffle", "short", "long",
                                                    "elements", "memcpy"};

/// What a path is: its name, row kernel, variant and store route; `blocked` for the gathers that
/// copy whole rows through a blocked transpose in L1; `lines` for the fills whose rows are one
/// cache line each (one broadcast and the line's stores per row, no per-row length checks);
/// `stage_near` for the staged paths whose stage lies at the output's own page offset (rounded
/// down to a line) wherever the output lies, not half a page from it (ExecuteStagedStream).
struct PathInfo {
  const char* name;
  Kernel kernel;
  PathVariant variant;
  Route route;
  bool blocked;
  bool lines = false;
  bool stage_near = false;
};
inline constexpr PathInfo kPathInfo[] = {
    {"none", Kernel::none, PathVariant::none, Route::plain, false},
    {"copy", Kernel::copy, PathVariant::none, Route::plain, false},
    {"copy.nt", Kernel::copy, PathVariant::none, Route::staged, false},
    {"copy.nt.direct", Kernel::copy, PathVariant::none, Route::direct, false},
    {"pattern.shuffle", Kernel::pattern, PathVariant::shuffle, Route::plain, false},
    {"pattern.shuffle.nt", Kernel::pattern, PathVariant::shuffle, Route::staged, false},
    {"pattern.shuffle.nt.direct", Kernel::pattern, PathVariant::shuffle, Route::direct, false},
    {"pattern.short", Kernel::pattern, PathVariant::short_run, Route::plain, false},
    {"pattern.short.nt", Kernel::pattern, PathVariant::short_run, Route::staged, false},
    {"pattern.long", Kernel::pattern, PathVariant::long_run, Route::plain, false},
    {"pattern.long.nt", Kernel::pattern, PathVariant::long_run, Route::staged, false},
    {"pattern.long.nt.direct", Kernel::pattern, PathVariant::long_run, Route::direct, false},
    {"pattern.memcpy", Kernel::pattern, PathVariant::memcpy, Route::plain, false},
    {"fill.1", Kernel::fill, PathVariant::b1, Route::plain, false},
    {"fill.1.nt", Kernel::fill, PathVariant::b1, Route::staged, false},
    {"fill.1.nt.direct", Kernel::fill, PathVariant::b1, Route::direct, false},
    {"fill.2", Kernel::fill, PathVariant::b2, Route::plain, false},
    {"fill.2.nt", Kernel::fill, PathVariant::b2, Route::staged, false},
    {"fill.2.nt.direct", Kernel::fill, PathVariant::b2, Route::direct, false},
    {"fill.4", Kernel::fill, PathVariant::b4, Route::plain, false},
    {"fill.4.nt", Kernel::fill, PathVariant::b4, Route::staged, false},
    {"fill.4.nt.direct", Kernel::fill, PathVariant::b4, Route::direct, false},
    {"fill.8", Kernel::fill, PathVariant::b8, Route::plain, false},
    {"fill.8.nt", Kernel::fill, PathVariant::b8, Route::staged, false},
    {"fill.8.nt.direct", Kernel::fill, PathVariant::b8, Route::direct, false},
    {"fill.16", Kernel::fill, PathVariant::b16, Route::plain, false},
    {"fill.16.nt", Kernel::fill, PathVariant::b16, Route::staged, false},
    {"fill.16.nt.direct", Kernel::fill, PathVariant::b16, Route::direct, false},
    {"fill.1.lines", Kernel::fill, PathVariant::b1, Route::plain, false, true},
    {"fill.2.lines", Kernel::fill, PathVariant::b2, Route::plain, false, true},
    {"fill.4.lines", Kernel::fill, PathVariant::b4, Route::plain, false, true},
    {"fill.8.lines", Kernel::fill, PathVariant::b8, Route::plain, false, true},
    {"fill.any", Kernel::fill, PathVariant::any, Route::plain, false},
    {"fill.any.nt", Kernel::fill, PathVariant::any, Route::staged, false},
    {"gather.1", Kernel::gather, PathVariant::b1, Route::plain, false},
    {"gather.1.blocked", Kernel::gather, PathVariant::b1, Route::plain, true},
    {"gather.1.nt", Kernel::gather, PathVariant::b1, Route::staged, true},
    {"gather.2", Kernel::gather, PathVariant::b2, Route::plain, false},
    {"gather.2.blocked", Kernel::gather, PathVariant::b2, Route::plain, true},
    {"gather.2.nt", Kernel::gather, PathVariant::b2, Route::staged, true},
    {"gather.4", Kernel::gather, PathVariant::b4, Route::plain, false},
    {"gather.4.blocked", Kernel::gather, PathVariant::b4, Route::plain, true},
    {"gather.4.nt", Kernel::gather, PathVariant::b4, Route::staged, true},
    {"gather.8", Kernel::gather, PathVariant::b8, Route::plain, false},
    {"gather.8.blocked", Kernel::gather, PathVariant::b8, Route::plain, true},
    {"gather.8.nt", Kernel::gather, PathVariant::b8, Route::staged, true},
    {"gather.16", Kernel::gather, PathVariant::b16, Route::plain, false},
    {"gather.16.blocked", Kernel::gather, PathVariant::b16, Route::plain, true},
    {"gather.16.nt", Kernel::gather, PathVariant::b16, Route::staged, true},
    {"gather.any", Kernel::gather, PathVariant::any, Route::plain, false},
    {"gather.any.blocked", Kernel::gather, PathVariant::any, Route::plain, true},
    {"gather.any.nt", Kernel::gather, PathVariant::any, Route::staged, true},
    {"repeat.shuffle", Kernel::repeat, PathVariant::shuffle, Route::plain, false},
    {"repeat.shuffle.nt", Kernel::repeat, PathVariant::shuffle, Route::staged, false},
    {"repeat.shuffle.nt.direct", Kernel::repeat, PathVariant::shuffle, Route::direct, false},
    {"repeat.elements", Kernel::repeat, PathVariant::elements, Route::plain, false},
    {"repeat.elements.nt", Kernel::repeat, PathVariant::elements, Route::staged, false},
    {"segments", Kernel::segments, PathVariant::none, Route::plain, false},
    {"segments.nt", Kernel::segments, PathVariant::none, Route::staged, false, /*lines=*/false, /*stage_near=*/true},
    {"segments.nt.direct", Kernel::segments, PathVariant::none, Route::direct, false},
};
inline constexpr int kPathCount = static_cast<int>(sizeof(kPathInfo) / sizeof(kPathInfo[0]));

/// The fill variants that have a ".lines" path (FillLineRows: elements of 1, 2, 4 or 8 bytes).
constexpr bool has_line_rows(PathVariant v) noexcept {
  return v == PathVariant::b1 || v == PathVariant::b2 || v == PathVariant::b4 || v == PathVariant::b8;
}

namespace paths_check {
constexpr const char* kKernelNames[] = {"none", "copy", "pattern", "fill", "gather", "repeat", "segments"};
// Whether `name` starts at position `at` with `part`; returns the position after it, or -1.
constexpr int match(const char* name, int at, const char* part) {
  for (int i = 0; part[i] != '\0'; ++i, ++at)
    if (name[at] != part[i]) return -1;
  return at;
}
// Whether the entry's name is "<kernel>[.<variant>][.blocked|.lines][.nt[.direct]]" of its own fields.
constexpr bool name_matches(const PathInfo& e) {
  int at = match(e.name, 0, kKernelNames[static_cast<int>(e.kernel)]);
  if (at >= 0 && e.variant != PathVariant::none) at = match(e.name, match(e.name, at, "."), kPathVariantNames[static_cast<int>(e.variant)]);
  if (at >= 0 && e.blocked && e.route == Route::plain) at = match(e.name, at, ".blocked");
  if (at >= 0 && e.lines) at = match(e.name, at, ".lines");
  if (at >= 0 && e.route != Route::plain) at = match(e.name, at, ".nt");
  if (at >= 0 && e.route == Route::direct) at = match(e.name, at, ".direct");
  return at >= 0 && e.name[at] == '\0';
}
constexpr bool same_fields(const PathInfo& a, const PathInfo& b) {
  return a.kernel == b.kernel && a.variant == b.variant && a.route == b.route && a.blocked == b.blocked &&
         a.lines == b.lines;
}
// Every entry named by its fields, and no two with the same fields (fallbacks_ok below checks that
// each streamed entry has an entry of ordinary stores to fall back to); `lines` only on plain fills.
constexpr bool table_ok() {
  for (int i = 0; i < kPathCount; ++i) {
    if (!name_matches(kPathInfo[i])) return false;
    const PathInfo& e = kPathInfo[i];
    if (e.lines && (e.kernel != Kernel::fill || e.route != Route::plain || !has_line_rows(e.variant))) return false;
    if (e.stage_near && e.route != Route::staged) return false;  // only a staged path has a stage
    for (int j = 0; j < i; ++j)
      if (same_fields(kPathInfo[i], kPathInfo[j])) return false;
  }
  return true;
}
}  // namespace paths_check
static_assert(paths_check::table_ok(),
              "kPathInfo: every name made of its fields, every entry's fields unique, stage_near only where staged");

inline constexpr const PathInfo& path_info(Path p) noexcept { return kPathInfo[static_cast<int>(p)]; }

/// The path of these fields, or Path::none if there is none (e.g. fill.any has no direct route).
constexpr Path find_path(Kernel kernel, PathVariant variant, Route route, bool blocked = false,
                         bool lines = false) noexcept {
  for (int i = 0; i < kPathCount; ++i) {
    const PathInfo& e = kPathInfo[i];
    if (e.kernel == kernel && e.variant == variant && e.route == route && e.blocked == blocked && e.lines == lines)
      return static_cast<Path>(i);
  }
  return Path::none;
}

/// The same kernel and variant with ordinary stores ("gather.N.nt" -> "gather.N.blocked"), never
/// a ".lines" path: whether a streamed fill's rows are one line each is the plan's to say (the
/// planner sets CopyPlan::plain_path, which the kernels run; this serves the table's checks).
constexpr Path without_streaming(Path p) noexcept {
  const PathInfo& e = path_info(p);
  return find_path(e.kernel, e.variant, Route::plain, e.blocked);
}

namespace paths_check {
// Every streamed path has a path of ordinary stores to fall back to, and every fill of 1-8 byte
// elements a ".lines" one (the planner's plain path for rows of one line).
constexpr bool fallbacks_ok() {
  for (int i = 0; i < kPathCount; ++i) {
    if (i != 0 && without_streaming(static_cast<Path>(i)) == Path::none) return false;
    const PathInfo& e = kPathInfo[i];
    if (e.kernel == Kernel::fill && has_line_rows(e.variant) &&
        find_path(e.kernel, e.variant, Route::plain, false, true) == Path::none)
      return false;
  }
  return true;
}
}  // namespace paths_check
static_assert(paths_check::fallbacks_ok(), "kPathInfo: every streamed path has a plain one");

/// Name of a kernel as describe() prints it.
const char* kernel_name(Kernel k) noexcept;

/// Runs at least this long are repeated by copying from the source run again ("pattern.long");
/// shorter runs are replicated from the output already written ("pattern.short"), and runs of at
/// most kShuffleRunBytes are generated in vector registers by byte shuffles ("pattern.shuffle").
inline constexpr int64_t kLongRunBytes = 256;
inline constexpr int64_t kShuffleRunBytes = 16;
/// Runs at least this long written with ordinary stores are each one std::memcpy from the source
/// run ("pattern.memcpy"): the C library's copy is tuned per CPU (glibc's on x86-64 moves such runs
/// by `rep movsb` where the CPU has fast strings). On 2 vCPUs of a Xeon reporting family 6 model
/// 167 (2026-12-07, tessera_compare against dc80e9b): tile(A, (4, 1)) of a 16 KiB source 1.04-1.10x
/// faster (with its planning 1.08-1.14x), of a 512 KiB source 1.02-1.06x / 1.09-1.11x at one / two
/// threads, of a 1 MiB source 0.99-1.01x / 1.04-1.07x; in a C loop there, 4-8 KiB runs copied as
/// fast or faster by the vector loop (pattern.long), which they keep. Streamed runs keep their own
/// kernels.
inline constexpr int64_t kMemcpyRunBytes = 16 << 10;
/// pattern.shuffle's index table costs about a vector store per entry: only outputs of at least
/// this many bytes take it (repeat.shuffle's tables are r vectors, built per range).
inline constexpr int64_t kShuffleMinBytes = 4096;
/// Element repeats of fewer than kRepeatMaxBytes bytes per source element (reps * itemsize), and
/// every repeat "repeat.shuffle" takes (contiguous sources of 1-, 2-, 4- and 8-byte elements
/// repeated 2 to kRepeatShuffleMaxReps times), are a repeat kernel over whole source rows; longer
/// ones are fills, one row per source element.
inline constexpr int64_t kRepeatMaxBytes = 64;
inline constexpr int64_t kRepeatShuffleMaxReps = 8;

/// With NonTemporal::automatic, outputs of at least stream_min_bytes() use streaming stores: the
/// environment variable TESSERA_STREAM_MIN_BYTES (a positive number of bytes) if set, else three
/// quarters of the last-level cache that CPU 0 shares (Linux sysfs: an output that fits there
/// with room to spare stays cached, and ordinary stores beat streaming it; glibc's memcpy draws
/// its non-temporal line at the same share), clamped to [kStreamMinClamp[0], kStreamMinClamp[1]],
/// else kStreamMinBytes. Read once. The measurement behind the share: CHANGELOG.md.
/// Except on Intel CPUs with a last-level cache over kMeshL3MinBytes (the Xeon Scalable parts'
/// L3 on a mesh, shared by the whole socket): there four times the L2, clamped the same way. On 2
/// vCPUs of a Xeon of family 6 model 207 (L3 300 MiB, L2 2 MiB; KVM guest, 2026-11-29), tiles
/// into a rewritten out= streamed at 1.09-2.55x the speed of ordinary stores from 4 MiB on
/// (outer; column 0.85-1.34x at 4-24 MiB, 1.15-2.42x from 32 MiB) and at 0.58-0.96x at 1-2
/// MiB, at one and at two threads (bench/stream_threshold.py): a core writes that L3 no faster
/// than it streams to DRAM, and 3/4 of it (225 MiB) left such outputs up to 2.5x slower
/// (bench/compare: the 64 MiB tile and broadcast cases 1.31-3.44x faster streamed). From twice
/// the L2 (4 MiB), the medium case (4 MiB) ran 0.75-0.86x and mixed3d_bwd (a 4 MiB result)
/// 0.88-0.95x: four times.
inline constexpr int64_t kStreamMinBytes = int64_t{16} << 20;
inline constexpr int64_t kStreamMinClamp[2] = {int64_t{4} << 20, int64_t{256} << 20};
inline constexpr int64_t kMeshL3MinBytes = int64_t{64} << 20;
int64_t stream_min_bytes();

/// The x86 CPU's vendor, family and model from CPUID (the family with its extended bits: 25 for
/// AMD's Zen 4, 6 for Intel's cores; the model with its extended bits where the family is 6 or
/// 15, as Linux's /proc/cpuinfo prints it: 207 for a Xeon of family 6 model 0xCF); {other, 0, 0}
/// on other vendors and other ISAs.
struct CpuKind {
  enum class Vendor { other, intel, amd } vendor = Vendor::other;
  unsigned family = 0;
  unsigned model = 0;
};
CpuKind cpu_kind() noexcept;

/// Whether this is an Intel CPU (cpu_kind) whose last-level cache is over kMeshL3MinBytes (Linux
/// sysfs, as stream_min_bytes reads it): a Xeon Scalable part, its L3 on a mesh shared by the
/// socket. Its hardware prefetchers and its L3 set stream_min_bytes() and reduce_prefetch_bytes()
/// apart from other cores'. Read once.
bool intel_mesh_l3() noexcept;

/// With NonTemporal::automatic, a reduction's result of at least reduce_stream_min_bytes() bytes
/// (2/3 of stream_min_bytes(), rounded up: half the last-level cache where the copies' line is 3/4
/// of it) uses streaming stores: the gradient streaming through the cache beside it evicts the
/// result before it is read again. Measured: a 16 MiB result under a 64 MiB gradient (32 MiB L3)
/// written with ordinary stores ran nchw_bwd 12-18% and outer_bwd 8% slower than streamed.
int64_t reduce_stream_min_bytes();

/// Whether an output (a copy's, or a reduction's result: `reduction`) of `bytes` bytes reaches
/// its streaming line: bytes >= stream_min_bytes() (or reduce_stream_min_bytes()). Below the
/// lowest line the cache sizes allow (kStreamMinClamp[0], or 2/3 of it), with
/// TESSERA_STREAM_MIN_BYTES unset, false without reading the cache sizes: their sysfs reads (15
/// files, ~45 system calls) took 0.2-0.4 ms of a fresh process's first small call.
bool reaches_stream_min(int64_t bytes, bool reduction);

/// The value of environment variable `name` where it is set to a whole decimal integer (strtoll's
/// syntax, nothing after the digits), else `fallback`. The settings read once per process
/// (TESSERA_STREAM_MIN_BYTES, TESSERA_PREFETCH_BYTES) parse theirs with it and check the range.
int64_t env_int64(const char* name, int64_t fallback) noexcept;

/// Streaming plans whose contiguous source pieces (copy rows, pattern runs) are at least this
/// long stream them directly ("….nt.direct"), and so do fills of 1-16 byte elements whose rows are
/// whole cache lines (kLineBytes); others stage blocks of kStageBytes in L1 ("….nt").
inline constexpr int64_t kDirectStreamBytes = 4096;
/// Rows of short runs ("pattern.shuffle") of at least this many bytes stream straight from
/// registers ("pattern.shuffle.nt.direct"): most of their lines whole vectors, the vector they
/// share with the next row completed in registers (PatternStream). Shorter rows keep the stage:
/// there the direct route's work per row cost more (rows of 72-168 bytes 0.6-0.8x the staged
/// route's speed, 216 bytes even, 192, 240, 264 and 480 bytes 1.2-1.6x; a Xeon reporting family 6
/// model 167, 173ed08, 2026-12-05, bench/results/2026-12-05-xeon-f6m167/experiments.txt).
inline constexpr int64_t kShuffleDirectRowBytes = 256;
inline constexpr int64_t kStageBytes = 4096;
/// segments.nt.direct (per-element counts walked as one-byte counts, rows of at least
/// kSegmentsDirectRowBytes) computes into a stage of this many bytes, streamed each time the next
/// store would start past it (SegmentsRing; rows that continue one another continue in it).
/// rep_counts (float32, counts 0-4) in a program of its own: stages of 4 KiB 4.61-4.76 ms, 1 KiB
/// 4.32-4.43, 512 bytes 4.29-4.82, 256 bytes 4.57-4.77; with the source and counts prefetched
/// 2-4 KiB ahead, 512 bytes 4.00-4.17 ms, 1 KiB 4.07-4.25 (`stream` 2.5-2.8 ms; a Xeon reporting
/// family 6 model 167, 2026-12-05). Through the staged route's blocks (the row function called per
/// block, each ending exactly; with the prefetches, against caa7c35's 4 KiB blocks without them)
/// 4 KiB blocks ran at 1.03 / 1.01 (1 / 2 threads), 1 KiB at 1.00 / 0.97, 512 bytes at 0.80 / 0.73.
inline constexpr int64_t kSegmentsRingBytes = 512;
/// segments.nt.direct takes rows of at least this many bytes; shorter rows keep the staged route.
/// Against the staged route (caa7c35; float32 counts 0-4 along the last axis, 64 MiB out, the same
/// Xeon, 2026-12-05, 1 / 2 threads): rows of ~2 KiB 1.18-1.24 / 1.19-1.23, ~256 bytes 1.17-1.27 /
/// 1.17-1.22; rows of ~32 bytes 1.10-1.22 / 1.18-1.23 in some processes and 0.87 / 1.20 in others
/// (bimodal at one thread, not found why), ~16 bytes of 1-byte elements 0.85-1.13 / 1.07-1.14.
inline constexpr int64_t kSegmentsDirectRowBytes = 256;
inline constexpr int64_t kLineBytes = 64;

/// The first element index d in [0, 64) whose byte address dst + d * itemsize is a multiple of
/// kLineBytes, or 0 if none is (elements that straddle cache lines wherever they start): where
/// the executor's chunks and the replica steps start their lines.
inline int64_t first_line_start(const void* dst, int64_t itemsize) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(dst);
  for (int64_t d = 0; d < 64; ++d)
    if ((a + static_cast<uintptr_t>(d * itemsize)) % kLineBytes == 0) return d;
  return 0;
}

/// Gathers whose source stride is at least kBlockedGatherStride bytes (magnitude), with elements
/// of at most kBlockedGatherMaxItem bytes and at least one row loop, copy whole rows in blocks
/// through a tile in L1 (a blocked transpose; kernels/gather-inl.h). Only these gathers stream.
inline constexpr int64_t kBlockedGatherStride = 64;
inline constexpr int64_t kBlockedGatherMaxItem = 16;

/// What the dispatched SIMD target can do (kernels/kernels.hpp asks the target).
struct KernelCaps {
  bool vectors;         // byte shuffles and vector fills (not HWY_SCALAR)
  bool stream_stores;   // non-temporal stores (not HWY_SCALAR)
};

}  // namespace tessera::detail

#endif  // TESSERA_LIB_PATHS_HPP
