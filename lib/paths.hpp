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

/// Every executor path, decided once by the planner (choose_path); the executor switches on it and
/// Plan::kernel_path() names it from kPathInfo. ".N" is the element size the kernel is
/// specialised for ("any": every other size); gathers are rows gathered one by one, or whole rows
/// through a blocked transpose in L1 (".blocked", streamed out as ".nt").
enum class Path : uint8_t {
  none,
  copy, copy_nt, copy_nt_direct,
  pattern_shuffle, pattern_shuffle_nt,
  pattern_short, pattern_short_nt,
  pattern_long, pattern_long_nt, pattern_long_nt_direct,
  fill_1, fill_1_nt, fill_1_nt_direct,
  fill_2, fill_2_nt, fill_2_nt_direct,
  fill_4, fill_4_nt, fill_4_nt_direct,
  fill_8, fill_8_nt, fill_8_nt_direct,
  fill_16, fill_16_nt, fill_16_nt_direct,
  fill_any, fill_any_nt,
  gather_1, gather_1_blocked, gather_1_nt,
  gather_2, gather_2_blocked, gather_2_nt,
  gather_4, gather_4_blocked, gather_4_nt,
  gather_8, gather_8_blocked, gather_8_nt,
  gather_16, gather_16_blocked, gather_16_nt,
  gather_any, gather_any_blocked, gather_any_nt,
  repeat_shuffle, repeat_shuffle_nt,
  repeat_elements, repeat_elements_nt,
  segments, segments_nt,
  count_  // the number of paths
};
inline constexpr int kPathCount = static_cast<int>(Path::count_);

/// What a path is: its name, row kernel and store route; `blocked` for the blocked gathers.
struct PathInfo {
  const char* name;
  Kernel kernel;
  Route route;
  bool blocked;
};
inline constexpr PathInfo kPathInfo[kPathCount] = {
    {"none", Kernel::none, Route::plain, false},
    {"copy", Kernel::copy, Route::plain, false},
    {"copy.nt", Kernel::copy, Route::staged, false},
    {"copy.nt.direct", Kernel::copy, Route::direct, false},
    {"pattern.shuffle", Kernel::pattern, Route::plain, false},
    {"pattern.shuffle.nt", Kernel::pattern, Route::staged, false},
    {"pattern.short", Kernel::pattern, Route::plain, false},
    {"pattern.short.nt", Kernel::pattern, Route::staged, false},
    {"pattern.long", Kernel::pattern, Route::plain, false},
    {"pattern.long.nt", Kernel::pattern, Route::staged, false},
    {"pattern.long.nt.direct", Kernel::pattern, Route::direct, false},
    {"fill.1", Kernel::fill, Route::plain, false},
    {"fill.1.nt", Kernel::fill, Route::staged, false},
    {"fill.1.nt.direct", Kernel::fill, Route::direct, false},
    {"fill.2", Kernel::fill, Route::plain, false},
    {"fill.2.nt", Kernel::fill, Route::staged, false},
    {"fill.2.nt.direct", Kernel::fill, Route::direct, false},
    {"fill.4", Kernel::fill, Route::plain, false},
    {"fill.4.nt", Kernel::fill, Route::staged, false},
    {"fill.4.nt.direct", Kernel::fill, Route::direct, false},
    {"fill.8", Kernel::fill, Route::plain, false},
    {"fill.8.nt", Kernel::fill, Route::staged, false},
    {"fill.8.nt.direct", Kernel::fill, Route::direct, false},
    {"fill.16", Kernel::fill, Route::plain, false},
    {"fill.16.nt", Kernel::fill, Route::staged, false},
    {"fill.16.nt.direct", Kernel::fill, Route::direct, false},
    {"fill.any", Kernel::fill, Route::plain, false},
    {"fill.any.nt", Kernel::fill, Route::staged, false},
    {"gather.1", Kernel::gather, Route::plain, false},
    {"gather.1.blocked", Kernel::gather, Route::plain, true},
    {"gather.1.nt", Kernel::gather, Route::staged, true},
    {"gather.2", Kernel::gather, Route::plain, false},
    {"gather.2.blocked", Kernel::gather, Route::plain, true},
    {"gather.2.nt", Kernel::gather, Route::staged, true},
    {"gather.4", Kernel::gather, Route::plain, false},
    {"gather.4.blocked", Kernel::gather, Route::plain, true},
    {"gather.4.nt", Kernel::gather, Route::staged, true},
    {"gather.8", Kernel::gather, Route::plain, false},
    {"gather.8.blocked", Kernel::gather, Route::plain, true},
    {"gather.8.nt", Kernel::gather, Route::staged, true},
    {"gather.16", Kernel::gather, Route::plain, false},
    {"gather.16.blocked", Kernel::gather, Route::plain, true},
    {"gather.16.nt", Kernel::gather, Route::staged, true},
    {"gather.any", Kernel::gather, Route::plain, false},
    {"gather.any.blocked", Kernel::gather, Route::plain, true},
    {"gather.any.nt", Kernel::gather, Route::staged, true},
    {"repeat.shuffle", Kernel::repeat, Route::plain, false},
    {"repeat.shuffle.nt", Kernel::repeat, Route::staged, false},
    {"repeat.elements", Kernel::repeat, Route::plain, false},
    {"repeat.elements.nt", Kernel::repeat, Route::staged, false},
    {"segments", Kernel::segments, Route::plain, false},
    {"segments.nt", Kernel::segments, Route::staged, false},
};
static_assert(kPathInfo[kPathCount - 1].kernel == Kernel::segments, "a PathInfo for every Path");

inline const PathInfo& path_info(Path p) noexcept { return kPathInfo[static_cast<int>(p)]; }
inline Path path_at(Path first, int offset) noexcept { return static_cast<Path>(static_cast<int>(first) + offset); }
/// The same kernel and variant with ordinary stores (every path's streamed routes follow its
/// plain one in Path, in the order staged, direct).
inline Path without_streaming(Path p) noexcept { return path_at(p, -static_cast<int>(path_info(p).route)); }

/// Name of a kernel as describe() prints it.
const char* kernel_name(Kernel k) noexcept;

/// Runs at least this long are repeated by copying from the source run again ("pattern.long");
/// shorter runs are replicated from the output already written ("pattern.short"), and runs of at
/// most kShuffleRunBytes are generated in vector registers by byte shuffles ("pattern.shuffle").
inline constexpr int64_t kLongRunBytes = 256;
inline constexpr int64_t kShuffleRunBytes = 16;
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
/// environment variable TESSERA_STREAM_MIN_BYTES (a positive number of bytes) if set, else half
/// the last-level cache that CPU 0 shares (Linux sysfs; outputs larger than that do not stay
/// cached), clamped to [kStreamMinClamp[0], kStreamMinClamp[1]], else kStreamMinBytes. Read once.
inline constexpr int64_t kStreamMinBytes = int64_t{16} << 20;
inline constexpr int64_t kStreamMinClamp[2] = {int64_t{4} << 20, int64_t{256} << 20};
int64_t stream_min_bytes();

/// Streaming plans whose contiguous source pieces (copy rows, pattern runs) are at least this
/// long stream them directly ("….nt.direct"), and so do fills of 1-16 byte elements whose rows are
/// whole cache lines (kLineBytes); others stage blocks of kStageBytes in L1 ("….nt").
inline constexpr int64_t kDirectStreamBytes = 4096;
inline constexpr int64_t kStageBytes = 4096;
inline constexpr int64_t kLineBytes = 64;

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
