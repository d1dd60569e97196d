// The plan: what the planner (planner.hpp) produces and the executor (executor.hpp) runs.
// Internal; no Highway, no TBB here.
//
// Every operation of the family (tile, broadcast_to, expand, repeat) is "replicate a strided input
// into a C-contiguous output", described by a nest: one NestAxis per output axis (a flattening
// repeat has several for its one output axis), each a source axis with an extent and a byte
// stride, replicated `reps` times either as a whole (tile: the rep loop outside the axis) or
// element by element (repeat: the rep loop inside it). At most one axis repeats its elements by
// per-element counts (a segment axis, whose counts' prefix sums the plan keeps).
//
// The planner turns the nest into row loops and one row kernel. The output is seen as `nrows`
// rows of `row_elems` elements; the rows are enumerated by `loops` (outermost first), an odometer
// whose per-loop source byte stride moves the row's source pointer. Each row is written by the
// row kernel of the plan's Path:
//
//   copy      the row is one contiguous source run of row_elems elements
//   pattern   a contiguous source run of run_bytes bytes repeated `count` times (tile's rep loop)
//   fill      one source element repeated `count` times (broadcast of an element)
//   gather    `count` elements read with source byte stride `inner_stride`
//   repeat    `count` elements at `inner_stride`, each repeated `reps` times (numpy.repeat)
//   segments  `count` elements at `inner_stride`, element i repeated counts[i] times
//   none      the output is empty; nothing runs
#ifndef TESSERA_LIB_PLAN_HPP
#define TESSERA_LIB_PLAN_HPP

#include <tessera/tessera.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "allocator.hpp"

namespace tessera::detail {

struct ReduceData;  // reduce.hpp: a reduction's plan

/// The operation a plan was made for (describe() and regions need it; the kernels do not).
enum class Operation : uint8_t { tile, broadcast_to, expand, repeat };

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

/// The prefix sums of per-element repeat counts: immutable once planned, shared by copies of the
/// plan. Held in an output block of the allocator (allocator.hpp): large ones get transparent huge
/// pages and are kept for reuse after the plan dies, so planning millions of counts again does not
/// fault in fresh pages each time.
class Prefix {
 public:
  /// Room for n values (once, before the push_backs). Throws std::bad_alloc.
  void reserve(std::size_t n) {
    bool fresh = false;
    buf_.reset(static_cast<int64_t*>(allocate_output(n * sizeof(int64_t), &fresh)), free_output);
  }
  void push_back(int64_t v) noexcept { buf_.get()[size_++] = v; }  // within the reserved room
  const int64_t* data() const noexcept { return buf_.get(); }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  int64_t back() const noexcept { return buf_.get()[size_ - 1]; }

 private:
  std::shared_ptr<int64_t> buf_;
  std::size_t size_ = 0;
};

/// One axis of the nest (see the file comment): the source axis' `extent` (elements) and byte
/// `stride`, replicated `reps` times — as a whole when !elementwise (tile, broadcast), element by
/// element when elementwise (repeat). A segment axis (elementwise, reps == kSegmentReps) repeats
/// element i counts[i] times (PlanData::prefix).
struct NestAxis {
  int64_t extent;
  int64_t stride;
  int64_t reps;
  bool elementwise;
};
inline constexpr int64_t kSegmentReps = -1;

/// One entry of the interleaved loop nest (the planner's steps 3-4): `extent` iterations moving
/// the source by `stride` bytes; a segment entry is the segment axis (stride per source index).
struct Entry {
  int64_t extent;
  int64_t stride;
  bool segment;
};

/// One loop over rows: `extent` iterations, moving the source by `src_stride` bytes and the
/// destination by `dst_stride` bytes per iteration. A segment loop (at most one per plan) is the
/// segment axis: its iteration t reads source index i with prefix[i] <= t < prefix[i + 1].
struct Loop {
  int64_t extent;
  int64_t src_stride;
  int64_t dst_stride;
  bool segment;
};

/// Two loops per nest axis at most.
inline constexpr int kMaxLoops = 2 * max_ndim;

struct PlanData {
  // What was asked.
  Operation op = Operation::tile;
  Dims in_shape;
  Dims in_strides;  // bytes, after filling in C-contiguous strides
  Dims reps;        // tile: as given (negative ones 0 under NegativeReps::clamp_to_zero); else empty
  Dims target;      // broadcast_to, expand: the shape asked for; else empty
  int axis = -1;    // repeat: the normalized axis, or -1 for none (the flattened input)
  int64_t repeats = 0;                // repeat: the scalar count, or kSegmentReps for per-element counts
  std::size_t itemsize = 0;
  int64_t input_size = 0;  // input elements
  Options options;         // validated; the executor reads max_threads
  bool fresh_output = false;  // planned for pages the kernel has just zeroed (see choose_path)
  int in_bytes_overflow_axis = -1;  // init_input: the axis where C-contiguous strides overflow

  // The output.
  Dims out_shape;
  int64_t out_size = 0;    // elements
  std::size_t nbytes = 0;  // bytes; fits int64_t

  // The nest (planner's step 1): one axis per output axis, unless `flattened` (a repeat with no
  // axis: one output axis for all the input's axes).
  int nest_size = 0;
  NestAxis nest[max_ndim];
  bool flattened = false;
  Prefix prefix;                // segment axis: extent + 1 prefix sums of the counts (prefix[0] = 0)
  int64_t seg_max_count = 0;    // segment axis: the largest count
  // The segment axis' source as the segments kernel walks it: one axis, or a flattened input's
  // axes (outermost first) in C order.
  int seg_naxes = 0;
  Entry seg_axes[max_ndim];

  // The simplified nest (step 4), innermost first: what choose_path turns into loops and a path.
  int nentries = 0;
  Entry entries[kMaxLoops];

  // The loops and the path.
  Path path = Path::none;
  int nloops = 0;
  Loop loops[kMaxLoops];  // the first nloops are set
  int64_t nrows = 0;
  int64_t row_elems = 0;     // elements per row
  int64_t run_bytes = 0;     // pattern: bytes of the repeated run
  int64_t count = 0;         // pattern: runs per row; fill: elements per row; gather, repeat, segments: source elements per row
  int64_t inner_stride = 0;  // gather, repeat, segments: source byte stride between elements
  int64_t inner_reps = 0;    // repeat: copies of each element

  // A reduction (the gradients): its plan, which the executor runs instead of the loops above;
  // out_shape, out_size, nbytes, itemsize and input_size are set for Plan's accessors.
  std::shared_ptr<const ReduceData> reduce;

  Kernel kernel() const noexcept { return path_info(path).kernel; }
  /// Source elements of the segment axis (0 if none).
  int64_t count_segments() const noexcept { return prefix.empty() ? 0 : static_cast<int64_t>(prefix.size()) - 1; }
  Route route() const noexcept { return path_info(path).route; }
};

/// One axis of an output region, as the region kernel walks it: the region covers `extent`
/// consecutive output indices starting at one whose source index is `start` (in [0, period));
/// source index k is at byte offset k * stride. Along a whole-axis (tile) axis, reps == 0, the
/// indices wrap at `period` (the input's extent on that axis, 1 for a promoted axis); along an
/// elementwise axis each source index holds for `reps` consecutive output indices (the first for
/// reps - phase of them), or for counts[k] = prefix[k + 1] - prefix[k] (reps == kSegmentReps).
/// `step_bytes` is the region's byte size of one step along this axis (the product of the inner
/// axes' extents times the itemsize).
struct RegionAxis {
  int64_t period;
  int64_t stride;
  int64_t start;
  int64_t extent;
  int64_t step_bytes;
  int64_t reps = 0;
  int64_t phase = 0;  // elementwise: output steps already taken by the first source index
};

/// A non-empty output region reduced for the kernel (planner.cpp, plan_region): axes of extent 1
/// folded into src_offset, and an outer axis merged into the inner one when the inner axis covers
/// exactly one whole period and the pair is one affine walk of the source. naxes may be 0 (a
/// single element at src + src_offset).
struct Region {
  int naxes = 0;
  RegionAxis axes[max_ndim];  // outermost first
  std::size_t itemsize = 0;
  int64_t src_offset = 0;  // bytes
  const int64_t* prefix = nullptr;  // the plan's segment prefix sums, if an axis has reps == kSegmentReps
  // A flattened plan's region (its output is 1-d) is the output range [begin, end): the executor
  // runs it as a range of the plan, not through the region kernel.
  bool as_range = false;
  int64_t begin = 0, end = 0;
};

}  // namespace tessera::detail

#endif  // TESSERA_LIB_PLAN_HPP
