// The plan: what the planner produces and the executor runs. Internal; no Highway, no TBB here.
//
// The output is C-contiguous and is seen as `nrows` rows of `row_elems` elements each. The rows
// are enumerated by `loops` (outermost first), an odometer whose per-loop source byte stride
// moves the row's source pointer. Each row is written by one innermost kernel:
//
//   copy     the row is one contiguous source run of row_elems elements
//   pattern  a contiguous source run of run_bytes bytes repeated `count` times (stride-0 loop)
//   fill     one source element repeated `count` times (element broadcast)
//   gather   `count` elements read with source byte stride `inner_stride` (non-contiguous input)
//   none     the output is empty; nothing runs
#ifndef TESSERA_LIB_PLAN_HPP
#define TESSERA_LIB_PLAN_HPP

#include <tessera/tessera.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::detail {

enum class Kernel : uint8_t { none, copy, pattern, fill, gather };

/// Name of a kernel as describe() prints it.
const char* kernel_name(Kernel k) noexcept;

/// Runs at least this long are repeated by copying from the source run again ("pattern.long");
/// shorter runs are replicated from the output already written ("pattern.short"), and runs of at
/// most kShuffleRunBytes are generated in vector registers by byte shuffles ("pattern.shuffle").
inline constexpr int64_t kLongRunBytes = 256;
inline constexpr int64_t kShuffleRunBytes = 16;
/// The shuffle path's index table costs about a vector store per entry: only outputs of at least
/// this many bytes take it.
inline constexpr int64_t kShuffleMinBytes = 4096;

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
/// through a tile in L1 (a blocked transpose; kernels/dispatch.cpp). Only these gathers stream.
inline constexpr int64_t kBlockedGatherStride = 64;
inline constexpr int64_t kBlockedGatherMaxItem = 16;

/// Every executor path a plan can take: [kernel variant][ordinary, streamed (staged through L1;
/// gathers: from their tile), streamed directly (from the source; fills: from a register, where
/// the output is line-aligned, else staged)] ("kernel.variant[.nt[.direct]]"; null where a
/// combination cannot occur), plus "none".
/// See Plan::kernel_path.
inline constexpr int kPathVariants = 16;
inline constexpr const char* kKernelPaths[kPathVariants][3] = {
    {"copy", "copy.nt", "copy.nt.direct"},
    {"pattern.shuffle", "pattern.shuffle.nt", nullptr},
    {"pattern.short", "pattern.short.nt", nullptr},
    {"pattern.long", "pattern.long.nt", "pattern.long.nt.direct"},
    {"fill.1", "fill.1.nt", "fill.1.nt.direct"},
    {"fill.2", "fill.2.nt", "fill.2.nt.direct"},
    {"fill.4", "fill.4.nt", "fill.4.nt.direct"},
    {"fill.8", "fill.8.nt", "fill.8.nt.direct"},
    {"fill.16", "fill.16.nt", "fill.16.nt.direct"},
    {"fill.any", "fill.any.nt", nullptr},
    {"gather.1", "gather.1.nt", nullptr},
    {"gather.2", "gather.2.nt", nullptr},
    {"gather.4", "gather.4.nt", nullptr},
    {"gather.8", "gather.8.nt", nullptr},
    {"gather.16", "gather.16.nt", nullptr},
    {"gather.any", "gather.any.nt", nullptr},
};
inline constexpr const char* kNonePath = "none";

/// One loop over rows: `extent` iterations, moving the source by `src_stride` bytes and the
/// destination by `dst_stride` bytes per iteration.
struct Loop {
  int64_t extent;
  int64_t src_stride;
  int64_t dst_stride;
};

/// Interleaved (rep, axis) entries: at most two per output axis.
inline constexpr int kMaxLoops = 2 * max_ndim;

struct PlanData {
  // What was asked.
  Dims in_shape;
  Dims in_strides;  // bytes, after filling in C-contiguous strides
  Dims reps;        // as given (not promoted; negative ones 0 under NegativeReps::clamp_to_zero)
  std::size_t itemsize = 0;
  int64_t input_size = 0;  // input elements
  Options options;         // validated; the executor reads max_threads

  // The output.
  Dims out_shape;
  int64_t out_size = 0;    // elements
  std::size_t nbytes = 0;  // bytes; fits int64_t

  // The loops and the kernel.
  Kernel kernel = Kernel::none;
  int nloops = 0;
  Loop loops[kMaxLoops];  // the first nloops are set
  int64_t nrows = 0;
  int64_t row_elems = 0;     // elements per row
  int64_t run_bytes = 0;     // pattern: bytes of the repeated run
  int64_t count = 0;         // pattern: runs per row; fill, gather: elements per row
  int64_t inner_stride = 0;  // gather: source byte stride between elements
  bool shuffle = false;        // pattern rows generated by byte shuffles ("pattern.shuffle")
  bool stream = false;         // write with non-temporal stores
  bool stream_direct = false;  // ... straight from long source pieces, not staged in L1
  const char* path = kNonePath;  // from kKernelPaths: the kernel, its element-size variant, .nt

};

/// Multi-line description of the plan's loops and kernel (Plan::describe).
std::string describe(const PlanData& plan);

/// Validates, promotes and simplifies; throws InvalidArgument / Overflow (see tessera.hpp).
/// An empty `strides` means C-contiguous.
PlanData make_plan(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps,
                   const Options& options);

/// Output shape only (tile_shape), with the same checks as make_plan except itemsize. `reps`
/// must already have been through effective_reps.
Dims checked_output_shape(const Dims& shape, const Dims& reps, int64_t* out_size);

/// Throws InvalidArgument naming the field if an option is out of range.
void validate_options(const Options& options);

/// The reps a plan uses: `reps` itself, or with negative values replaced by 0 under
/// NegativeReps::clamp_to_zero (OpenVINO Tile-1).
Dims effective_reps(const Dims& reps, const Options& options);

/// Plan::execute: checks the pointers and the buffer size (throws InvalidArgument /
/// BufferTooSmall before writing anything), then runs the plan.
void execute_checked(const PlanData& plan, const void* src, void* dst, std::size_t dst_bytes);

/// Runs the plan: writes all out_size elements to dst. Preconditions (checked by the API layer):
/// out_size > 0, src and dst valid.
void execute(const PlanData& plan, const unsigned char* src, unsigned char* dst);

/// Writes output elements [begin, end) of the plan to dst (dst is the whole output's start).
/// Serial; dispatched to the best Highway target. Defined in kernels/dispatch.cpp.
void execute_range(const PlanData& plan, const unsigned char* src, unsigned char* dst, int64_t begin, int64_t end);

/// One axis of an output region, as the region kernel walks it: the region covers `extent`
/// consecutive output indices starting at one whose source index is `start` (in [0, period));
/// source index k is at byte offset k * stride, and the indices wrap at `period` (the input's
/// extent on that axis, 1 for a promoted axis). `step_bytes` is the region's byte size of one
/// step along this axis (the product of the inner axes' extents times the itemsize).
struct RegionAxis {
  int64_t period;
  int64_t stride;
  int64_t start;
  int64_t extent;
  int64_t step_bytes;
};

/// A non-empty output region reduced for the kernel (executor.cpp, region_of): axes of extent 1
/// folded into src_offset, and an outer axis merged into the inner one when the inner axis covers
/// exactly one whole period and the pair is one affine walk of the source. naxes may be 0 (a
/// single element at src + src_offset).
struct Region {
  int naxes = 0;
  RegionAxis axes[max_ndim];  // outermost first
  std::size_t itemsize = 0;
  int64_t src_offset = 0;  // bytes
};

/// Plan::execute_region: checks the region, the pointers and the buffer size (throws
/// InvalidArgument / BufferTooSmall before writing anything), then runs it.
void execute_region_checked(const PlanData& plan, const void* src, const Dims& start, const Dims& extent, void* dst,
                            std::size_t dst_bytes);

/// Writes the region of output elements [start, start + extent) of the plan C-contiguously to dst.
/// Preconditions (checked by execute_region_checked): a valid, non-empty region; src and dst valid.
void execute_region(const PlanData& plan, const unsigned char* src, const Dims& start, const Dims& extent,
                    unsigned char* dst);

/// Writes `region` to dst. Serial; dispatched to the best Highway target. Defined in
/// kernels/region.cpp.
void execute_region_kernel(const Region& region, const unsigned char* src, unsigned char* dst);

/// Allocates an output of nbytes > 0 (64-byte aligned; from kHugeMinBytes 2 MiB aligned with
/// transparent huge pages advised: a block free_output kept, or a fresh mapping, which sets
/// *fresh) that tessera_free releases. Throws std::bad_alloc.
inline constexpr std::size_t kHugeMinBytes = std::size_t{32} << 20;
void* allocate_output(std::size_t nbytes, bool* fresh);
/// Releases an output of allocate_output (tessera_free): a large one may be kept for reuse
/// (api.cpp: the block cache and its bounds). Any other pointer of malloc's goes to std::free.
void free_output(void* p) noexcept;

/// Name of the Highway target execute_range dispatches to now.
const char* dispatch_target_name();

}  // namespace tessera::detail

#endif  // TESSERA_LIB_PLAN_HPP
