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

/// With NonTemporal::automatic, outputs of at least this many bytes use streaming stores.
inline constexpr int64_t kStreamMinBytes = int64_t{16} << 20;

/// Streaming plans whose contiguous source pieces (copy rows, pattern runs) are at least this
/// long stream them directly ("….nt.direct"); others stage blocks of kStageBytes in L1 ("….nt").
inline constexpr int64_t kDirectStreamBytes = 4096;
inline constexpr int64_t kStageBytes = 8192;

/// Every executor path a plan can take ("kernel.variant[.nt[.direct]]"), in a fixed order; see
/// Plan::kernel_path.
inline constexpr const char* kKernelPaths[] = {
    "copy",       "pattern.shuffle", "pattern.short", "pattern.long", "fill.1",     "fill.2",      "fill.4",
    "fill.8",     "fill.16",       "fill.any",     "gather.1",   "gather.2",    "gather.4",
    "gather.8",   "gather.16",     "gather.any",   "copy.nt",    "pattern.shuffle.nt", "pattern.short.nt", "pattern.long.nt",
    "fill.1.nt",  "fill.2.nt",     "fill.4.nt",    "fill.8.nt",  "fill.16.nt",  "fill.any.nt",
    "gather.1.nt", "gather.2.nt",  "gather.4.nt",  "gather.8.nt", "gather.16.nt", "gather.any.nt",
    "copy.nt.direct", "pattern.long.nt.direct", "none"};

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
  Dims reps;        // as given (not promoted)
  std::size_t itemsize = 0;
  int64_t input_size = 0;  // input elements

  // The output.
  Dims out_shape;
  int64_t out_size = 0;    // elements
  std::size_t nbytes = 0;  // bytes; fits int64_t

  // The loops and the kernel.
  Kernel kernel = Kernel::none;
  int nloops = 0;
  Loop loops[kMaxLoops] = {};
  int64_t nrows = 0;
  int64_t row_elems = 0;     // elements per row
  int64_t run_bytes = 0;     // pattern: bytes of the repeated run
  int64_t count = 0;         // pattern: runs per row; fill, gather: elements per row
  int64_t inner_stride = 0;  // gather: source byte stride between elements
  bool stream = false;         // write with non-temporal stores
  bool stream_direct = false;  // ... straight from long source pieces, not staged in L1
  const char* path = "none";  // one of kKernelPaths: the kernel, its element-size variant, .nt

  std::string description;
};

/// Validates, promotes and simplifies; throws InvalidArgument / Overflow (see tessera.hpp).
/// An empty `strides` means C-contiguous.
PlanData make_plan(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps,
                   const Options& options);

/// Output shape only (tile_shape), with the same checks as make_plan except itemsize.
Dims checked_output_shape(const Dims& shape, const Dims& reps, int64_t* out_size);

/// Runs the plan: writes all out_size elements to dst. Preconditions (checked by the API layer):
/// out_size > 0, src and dst valid.
void execute(const PlanData& plan, const unsigned char* src, unsigned char* dst);

/// Writes output elements [begin, end) of the plan to dst (dst is the whole output's start).
/// Serial; dispatched to the best Highway target. Defined in kernels/dispatch.cpp.
void execute_range(const PlanData& plan, const unsigned char* src, unsigned char* dst, int64_t begin, int64_t end);

/// Name of the Highway target execute_range dispatches to now.
const char* dispatch_target_name();

}  // namespace tessera::detail

#endif  // TESSERA_LIB_PLAN_HPP
