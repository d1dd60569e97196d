// libFuzzer target for tessera's replication family: decodes one problem from the input bytes —
// tile, broadcast_to, expand or repeat (one count, or one per element; along an axis, or of the
// flattened input) — runs it through every C entry point of its operation — the shape call
// (tessera_tile_shape(_ex), tessera_broadcast_shape, tessera_expand_shape, tessera_repeat_shape),
// the one-shot call (and its _ex form), the plan (tessera_plan_create(_ex),
// tessera_plan_create_broadcast_to, _expand, _repeat) + tessera_plan_execute and
// tessera_plan_execute_region, the allocating call (tessera_tile_alloc(_ex); the C++ allocating
// tessera::broadcast_to, expand and repeat), and with DLPack tessera_tile_dlpack_shape,
// tessera_tile_dlpack, tessera_broadcast_to_dlpack, tessera_expand_dlpack and
// tessera_repeat_dlpack — plus a C++ plan with non-temporal stores forced
// (tessera::NonTemporal::always) and its Plan::execute_region; or one of the reductions (the
// gradients: tile_backward, sum_to_shape, repeat_backward, of a dtype, from a strided gradient,
// accumulating or not) through tessera_tile_backward(_ex), tessera_sum_to_shape(_ex),
// tessera_repeat_backward(_ex), their plans (tessera_plan_create_tile_backward, _sum_to_shape,
// _repeat_backward; tessera_plan_execute_region refused), a C++ plan with non-temporal stores
// forced, the C++ allocating calls and tessera_tile_backward_dlpack, _sum_to_shape_dlpack,
// _repeat_backward_dlpack (see "The reductions" below for their values and reference) — and
// checks against an independent model:
//   - the status class each call must return, derived here from the documented rules (and, where
//     several errors apply at once, the order in which the library checks them);
//   - on success, the output byte for byte against a reference (tile: the tests' scalar reference,
//     tests/reference.cpp; broadcast_to, expand, repeat: element by element from the definitions
//     written here, source_offset; outputs over 64 KiB: block references written here from the
//     same definitions; a region: the reference output's box, or for a region of an output too
//     large to build, the region computed element by element from the definition) and the output
//     shape against the model (and, for tile, ref::tile_shape);
//   - on every rejection, the destination untouched (pre-filled pattern), a non-empty
//     tessera_last_error(), and no plan / allocation handed out;
//   - always, a sentinel after the destination's end untouched.
// Any disagreement prints the case and calls __builtin_trap().
//
// Sizes are capped so that one execution stays fast: a source span of at most kMaxBytes (64 KiB)
// is allocated (a larger one is replaced by a poisoned stand-in: only calls that must fail before
// reading it, or whose output is empty, run), and an output of at most kMaxBytes, or kMaxBigBytes
// (1 MiB) when the input asks for it — past the executor's threshold for running threaded, so
// chunks that start and end inside rows are fuzzed too. Rarely (when the input asks and its hash
// is 0 mod kRareOneIn = 64) the cap is kMaxStreamBytes (4 MiB): outputs that stream under
// NonTemporal::automatic (TESSERA_STREAM_MIN_BYTES is set to 2 MiB at start-up unless given), and
// from 32 MiB to kMaxHugeBytes (40 MiB) for the allocating calls alone (fresh 2 MiB-aligned pages,
// then the block tessera_free kept, reused by a second call). A valid output too large to
// allocate anywhere (2^57 bytes or more) must make the allocating call return
// TESSERA_OUT_OF_MEMORY (the C++ calls: std::bad_alloc) with *out_data unchanged (checked for rare
// inputs only: ASan prints a warning for each such request; allocator_may_return_null=1).
//
// Input format (bytes read front to back; a missing byte reads as 0, or as 1 for an extent, rep,
// target or count, so that truncated inputs are not mostly empty outputs):
//   [0] operation: b >= 0x80 with b % 4 != 3: a reduction (its format below). Else b % 4: 0 tile,
//       1 broadcast_to, 2 expand, 3 repeat (the other bits unused but by repeat). For repeat, a = b >> 2:
//       a % 4 == 0: no axis (the flattened input; TESSERA_AXIS_NONE); else the axis for
//       k = a >> 2: 0-5 itself, 6-11 k - 12 (-6 .. -1), 12 ndim, 13 -ndim - 1 (ndim clamped to
//       [0, 64]), 14 INT_MAX,
//       15 INT_MIN + 1 (the last four out of range)
//   [1] ndim: b < 0xF0: b % 7; else kManyCounts[b - 0xF0] (7 .. 100, and negative)
//   [2] the list's count — tile: nreps, broadcast_to / expand: the target's ndim: b < 0xF0: b % 8;
//       else kManyCounts[b - 0xF0]. repeat: nrepeats: b < 0xF0: b % 8 in {0, 2, 4, 6} one count,
//       {1, 3, 5} one per element (the axis' extent, or the input's element count without an
//       axis; one count if that is unknown or over kMaxCounts), 7 a wrong count (0, or the extent
//       + 1 if bit 3); else kManyCounts[b - 0xF0]
//   [3] itemsize: b < 0xF0: 1 + b % 40; else kBigItems[b - 0xF0] (41 .. SIZE_MAX)
//   [4] flags: bit0 strides NULL (C-contiguous source), bit1 src NULL, bits2-4 destination mode
//       (see DstMode), bit5 one negative extent, bit6 itemsize 0, bit7 big output allowed
//   [5] axis permutation of the parent buffer (transposed layouts)
//   [6] source misalignment (b % 64)   [7] destination misalignment (b % 64)
//   [8] slack / shortfall of dst_bytes  [9] element pitch: itemsize + b % 8 bytes (gaps)
//   min(ndim, 64) x extent byte: kExtents[b % 16] (0-8; an empty axis is 1 in 16); with more than
//       6 axes, 1 unless b < 0x40
//   min(ndim, 64) x stride byte: if b >= 0xE0, the next byte as an int8 is the raw byte stride
//       (any value: misaligned, overlapping, zero, negative); else axis of a parent buffer whose
//       extent is extent + (b >> 2) % 8 (gaps), negated if b % 4 == 2, zero (broadcast) if b % 4 == 3
//   the list's values, one byte each (at most 64; repeat: at most kMaxCounts):
//     tile reps, repeat counts: b < 0xE0 gives kSmallReps[b % 8] (0-5), else kSpecialReps[b - 0xE0]
//       (huge, negative, ...); tile with more than 7 reps: 0x40 <= b < 0xE0 gives 1
//     broadcast_to / expand target extents (aligned with the input's trailing axes): b >= 0xE0
//       kSpecialReps[b - 0xE0]; else b % 8: 0-3 the aligned input extent (a prepended axis:
//       1 + (b >> 3) % 4), 4 one, 5-7 kSmallTargets[(b >> 3) % 8]; with more than 7 values,
//       0x40 <= b < 0xE0 gives the aligned extent (or 1)
//   then, each optional (missing: the calls without _ex, nothing else):
//   [api] bits0-1 options: 0 the calls without _ex, 1 the _ex calls with NULL options, 2-3 the
//       _ex calls with [opt]; bit2 output region [region]; bit3 DLPack [dl]; bit4 one NULL
//       pointer [null]; bit5 run in a task arena of 4 slots (so max_threads 2 and 3 cap the
//       threads); bits6-7 == 3 with flags bit7: huge output allowed (for rare inputs, see above)
//   [opt] (if api options >= 2) bits0-1 nontemporal AUTO/ALWAYS/NEVER/invalid (kBadEnum[b >> 6]),
//       bit2 clamp_to_zero, bits3-5 max_threads kThreads[..], bits6-7 (nontemporal valid) 2:
//       negative_reps 2, 3: negative_reps -1 (invalid)
//   [optsize] (after [opt]) sizeof_options: b % 8 in 0-3 sizeof(tessera_options), 4 zero, 5 just
//       max_threads (the rest: defaults), 6 up to negative_reps (nontemporal: default), 7 one byte
//       more than sizeof(tessera_options); bit3 with 0-3: one byte short of max_threads
//   [null] (if api bit4) which pointer is NULL: see NullArg (b % 8); bit3 picks between two
//   [dl] (if api bit3) bits0-1 dtype form: 0 the widest lane (bits up to 248), 1 byte lanes, 2
//       16-bit lanes, 3 not whole bytes (0 or 4 bits, by slack bit0); bits2-4 one fault (see
//       DlFault; the wrong dst shape has one more axis if slack bit1, else a last extent off by
//       one — broadcast_to, whose dst shape is the target: one more axis of extent 1, else a
//       negative last extent); bit5 dst strides given (compact), bit6 dst strides not compact,
//       bit7 a src element stride whose byte stride overflows int64. The dtype code is slack % 7.
//   [region] (if api bit2) bits0-2 region destination mode (DstMode), then per output axis a start
//       byte and an extent byte (see region_start, region_extent; missing: the whole output)
//
// A reduction (b = [0] >= 0x80, b % 4 != 3): b % 4: 0 tile_backward, 1 sum_to_shape, 2 repeat_backward.
//   [1] bits0-3 dtype: 0-13 the tessera_dtype, 14 the value 14, 15 the value -1 (not dtypes);
//       bit4 accumulate (options->accumulate = 1, or 2 if bits5-6 == 3: the calls take the case's
//       options, the defaults but it if [api] gave none); bit7 the gradient's shape made wrong (one
//       more leading axis of extent 1 if slack bit 1 or 0-d, else its last extent off by one)
//   [2] repeat_backward's axis: b % 4 == 0 none, else the code (b >> 2) % 16 as repeat's k
//   [3] ndim as [1] above: A's (the result's: tile_backward, repeat_backward) or the gradient's
//       (sum_to_shape)
//   [4] the list's count: tile_backward nreps and repeat_backward nrepeats as tile's and repeat's
//       [2]; sum_to_shape the target's ndim: b < 0xF0: (b % 8) % (ndim + 2) (ndim + 1: one too
//       many), else kManyCounts[b - 0xF0]
//   [5] flags as [4] above, but bit6 unused and bit7: a big gradient allowed (kMaxBigGradElems
//       elements, kMaxBigBytes of span: enough work for threads)
//   [6] axis permutation  [7] source misalignment  [8] destination misalignment  [9] slack
//   [10] pitch: floats (strides in whole elements): itemsize * (1 + b % 2); integers: itemsize + b % 8
//   min(ndim, 64) x extent byte as above (A's, or the gradient's)
//   the list's values as above: reps as tile's, counts as repeat's, sum_to_shape's target as
//   broadcast_to's (aligned with the gradient's trailing axes)
//   the gradient's shape: tile_backward, repeat_backward: the forward output's (reps and counts
//   clamped to 0), with [1] bit7's fault; one stride byte per gradient axis as above (a raw stride
//   is in elements for floats)
//   then the trailing fields as above; [region]: tessera_plan_execute_region must refuse the plan;
//   [dl]: bits0-1 == 3 a DLPack dtype the reductions do not add (else the dtype's own), bits2-4 one
//   fault (kDstShape: the result's shape, made wrong as the gradient's above), bits5-7 as above.
//
// Environment: TESSERA_FUZZ_TARGET=<Highway target name, e.g. SCALAR> forces that target at
// start-up and checks that tessera dispatches to it. TESSERA_FUZZ_PATHS=1 prints at exit how often
// each executor path ran — built with -Dpath_counters=true (tests/run does), as the kernels
// counted it (reached_paths); the plans' paths (the "[path]" that tessera_plan_describe names — a
// reduction's "kernel: reduce.<path>" —, and Plan::kernel_path() of the C++ plans with streaming
// stores forced) are printed too —, every path Plan::kernel_paths() lists, those not reached, the
// sub-kernels run, and how often the rarer kinds of input succeeded or were rejected (Feature);
// tests/run fails unless every listed path (but those in tests/fuzz/unreached-paths) was reached
// by one of its two runs (the planner chooses paths per SIMD target: HWY_SCALAR has no vector or
// streaming path), every sub-kernel a run's target has ran in one of them (but those in
// tests/fuzz/unreached-subkernels), and each run reached every feature at least once (but those
// tests/fuzz/unreached-features names for it). tests/fuzz/make_corpus.py writes the seeds (one
// per executor path among them, and for the rarer sub-kernels).
#include <tessera/tessera.h>
#include <tessera/tessera.hpp>
#if TESSERA_FUZZ_DLPACK
#include <tessera/tessera_dlpack.h>
#endif

#include <hwy/targets.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "reference.hpp"
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
#include "kernels/path_counters.hpp"  // lib/ (tests/fuzz/meson.build with -Dpath_counters=true)
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define FUZZ_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define FUZZ_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
// A request of 2^57 bytes or more must fail as TESSERA_OUT_OF_MEMORY, not abort the process.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif
#endif
#ifndef FUZZ_POISON
#define FUZZ_POISON(p, n) ((void)(p), (void)(n))
#define FUZZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int kCap = TESSERA_MAX_NDIM;  // values decoded per list (counts may be larger: rejected)
constexpr int kFewDims = 6;             // ndim = b % 7 for the common codes
constexpr int kFewReps = 7;             // nreps = b % 8
constexpr int64_t kMaxCounts = 65536;   // repeat: most per-element counts decoded
// Largest source span and largest output that are really allocated and compared.
constexpr int64_t kMaxBytes = 64 * 1024;
constexpr int64_t kMaxBigBytes = 1024 * 1024;
constexpr int64_t kMaxHugeBytes = int64_t{40} << 20;
// Rare outputs past this size and below kAllocHugeBytes gain nothing over this size (they stream
// from TESSERA_STREAM_MIN_BYTES = 2 MiB): not allocated (too large), and those from
// kAllocHugeBytes on run the allocating calls only, where that size matters. A unit of many calls
// on 32-40 MiB outputs took 3 s on SCALAR under ASan and coverage here (its byte copies), and CI's
// default run met the 10 s timeout on such a unit (2026-12-06).
constexpr int64_t kMaxStreamBytes = int64_t{4} << 20;
constexpr uint32_t kRareOneIn = 64;  // huge outputs and out-of-memory requests: inputs whose hash is 0 mod this
// A valid output at least this large cannot be allocated on any machine (57-bit address spaces).
constexpr int64_t kUnallocatable = int64_t{1} << 57;
constexpr int64_t kAllocHugeBytes = int64_t{32} << 20;  // the allocating calls' mapped, reusable outputs
// Destination capacity used when a valid output is too large to allocate (a too-small buffer).
constexpr size_t kSmallCapacity = 256;
constexpr size_t kSentinel = 64;
constexpr unsigned char kDstFill = 0xA5;

constexpr int64_t kExtents[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 1, 2, 3};  // codes 0-8: the value
constexpr int64_t kSmallReps[8] = {0, 1, 2, 3, 4, 5, 1, 2};  // codes 0-5 are the value itself
constexpr int64_t kSmallTargets[8] = {2, 3, 4, 5, 6, 7, 8, 0};
constexpr int64_t kSpecialReps[32] = {
    6, 7, 8, 9, 16, 31, 100, 1000, 65536, int64_t{1} << 20,
    (int64_t{1} << 31) - 1, int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 40, int64_t{1} << 61,
    int64_t{1} << 62, kInt64Max / 3, kInt64Max / 2, kInt64Max - 1, kInt64Max,
    -1, -2, -7, -(int64_t{1} << 62), kInt64Min + 1, kInt64Min,
    0, 1, 2, 3,
    3037000499,  // floor(sqrt(INT64_MAX)): its square fits int64, the next one's does not
    3037000500};
// ndim / nreps for codes 0xF0-0xFF: many axes, the limit TESSERA_MAX_NDIM = 64, past it, negative.
constexpr int kManyCounts[16] = {7, 8, 9, 10, 12, 16, 24, 32, 48, 63, 64, 64, 65, 100, -1, INT_MIN};
// itemsize for codes 0xF0-0xFF: past the vector paths' sizes, past the streaming limit (1 KiB),
// and sizes whose byte counts overflow (2^63 and SIZE_MAX do not fit int64_t: OVERFLOW).
constexpr size_t kBigItems[16] = {41,   47,   48,   64,   100,  128,   255,                  256,
                                  1000, 1024, 1025, 4097, 65536, size_t{1} << 32, size_t{1} << 63, SIZE_MAX};
constexpr int kThreads[8] = {0, 1, 2, 3, 4, 0, -1, INT_MIN};  // max_threads
constexpr int kBadEnum[4] = {3, -1, 100, INT_MIN};           // invalid nontemporal values

// The operation ([0] % 4).
enum Op : unsigned { kTile = 0, kBroadcastTo = 1, kExpand = 2, kRepeat = 3 };
constexpr const char* kOpNames[4] = {"tile", "broadcast_to", "expand", "repeat"};

// The reductions ([0] >= kReduceOpMin with [0] % 4 != 3: [0] % 4).
enum ROp : int { kTileBackward = 0, kSumToShape = 1, kRepeatBackward = 2 };
constexpr const char* kROpNames[3] = {"tile_backward", "sum_to_shape", "repeat_backward"};
constexpr uint8_t kReduceOpMin = 0x80;
// tessera_dtype's values, their bytes, and the values of the dtype code that are not one.
constexpr int kDtypes = 14;
constexpr int64_t kDtypeBytes[kDtypes] = {4, 8, 2, 2, 8, 16, 1, 2, 4, 8, 1, 2, 4, 8};
constexpr int kBadDtypes[2] = {14, -1};
// Most gradient elements a reduction reads (the reference adds each): big inputs get more, past
// the executor's threshold for threads (512 KiB of work).
constexpr int64_t kMaxGradElems = int64_t{1} << 16;
constexpr int64_t kMaxBigGradElems = int64_t{1} << 20;

// How dst / dst_bytes are passed.
enum DstMode : unsigned {
  kExact = 0,      // dst_bytes == output bytes
  kSlack = 1,      // dst_bytes larger than needed (and really available)
  kShort = 2,      // dst_bytes smaller than needed by 1 .. 256
  kZero = 3,       // dst_bytes == 0
  kNullDst = 4,    // dst == NULL, dst_bytes == output bytes
  kHugeClaim = 5,  // dst_bytes == SIZE_MAX (only the output's bytes are really there)
  // 6, 7: exact again (the common case weighs more)
};

// How the C calls take options.
enum OptMode : unsigned { kPlain = 0, kNullOptions = 1, kOptions = 2 };

// Which pointer argument is NULL ([null] byte, b % 8; `alt` is bit 3).
enum NullArg : int {
  kNoNull = -1,
  kNullShape = 0,     // shape (and a DLTensor's shape): INVALID_ARGUMENT unless ndim == 0
  kNullReps = 1,      // the list (reps, target, repeats; broadcast_to DLPack: dst's shape): INVALID_ARGUMENT unless empty
  kNullOutNdim = 2,   // out_ndim of the shape calls, plan_output_shape, tile_alloc, tile_dlpack_shape
  kNullOutShape = 3,  // out_shape of the same calls
  kNullOutPtr = 4,    // out_plan of the plan calls; alt: out_bytes, else out_data, of tile_alloc
  kNullPlan = 5,      // the plan given to plan_execute(_region), output_shape/bytes, describe
  kNullTensor = 6,    // alt: dst, else src DLTensor of the DLPack calls (src of tile_dlpack_shape)
  kNullRegion = 7,    // alt: extent, else start of plan_execute_region: INVALID_ARGUMENT unless out_ndim == 0
};

// DLPack faults ([dl] bits 2-4); 0-3: none.
enum DlFault : unsigned { kSrcDevice = 4, kDstDevice = 5, kDtypeMismatch = 6, kDstShape = 7 };

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t next(uint8_t missing = 0) { return pos_ < size_ ? data_[pos_++] : missing; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

struct Case {
  unsigned op = kTile;
  int ndim = 0;
  int nreps = 0;  // the list's count: tile's nreps, broadcast_to's / expand's target ndim
  int naxes = 0;  // values of shape / strides decoded: ndim clamped to [0, kCap]
  int nrepv = 0;  // values of the list decoded
  size_t itemsize = 1;
  bool null_strides = false;
  bool null_src = false;
  bool big = false;
  unsigned dst_mode = kExact;
  size_t src_misalign = 0;
  size_t dst_misalign = 0;
  size_t slack = 0;
  int64_t shape[kCap] = {};
  int64_t strides[kCap] = {};
  int64_t reps[kCap] = {};  // tile: reps; broadcast_to, expand: the target
  // repeat: the axis (has_axis false: TESSERA_AXIS_NONE) and nrepeats counts (all decoded when
  // nrepeats >= 0; at most kMaxCounts).
  bool has_axis = false;
  int axis = 0;
  int64_t nrepeats = 0;
  std::vector<int64_t> counts;
  // Trailing, optional fields.
  unsigned opt_mode = kPlain;
  tessera_options opt{sizeof(tessera_options), 0, TESSERA_NEGATIVE_REPS_ERROR, TESSERA_NONTEMPORAL_AUTO, 0, 0};
  bool region = false, dlpack = false, arena = false, huge_asked = false;
  // A reduction (rop >= 0; see ROp): shape, strides, ndim and naxes above describe the gradient
  // (the input read); itemsize is the dtype's. tile_backward and repeat_backward: the result's
  // shape (A's) in in_shape (in_ndim axes, in_naxes decoded), reps / counts and the axis as for
  // tile / repeat; sum_to_shape: the target in reps (nreps axes, nrepv decoded).
  int rop = -1;
  int dtype = 0;        // a tessera_dtype value, or one that is not (14, -1)
  int acc_value = 0;    // options->accumulate as stored (1, or the invalid 2; 0: not asked)
  bool grad_fault = false;  // the gradient's shape made not the forward output's
  int in_ndim = 0, in_naxes = 0;
  int64_t in_shape[kCap] = {};
  int null_arg = kNoNull;
  bool null_alt = false;
  uint8_t dl = 0;
  unsigned region_mode = kExact;
  uint8_t region_codes[2 * kCap] = {};  // start, extent code per output axis
  bool rare = false;                    // hash gate passed (set by the caller)
};

// The options tessera reads from `o` (the fields within sizeof_options, defaults for the rest),
// and whether it accepts them.
struct Effective {
  bool valid = false;
  tessera::Options options;
};

Effective effective(const tessera_options& o) {
  Effective e;
  const size_t size = o.sizeof_options;
  const auto has = [size](size_t offset) { return size >= offset + sizeof(int); };
  if (!has(offsetof(tessera_options, max_threads)) || size > sizeof(tessera_options)) return e;
  e.options.max_threads = o.max_threads;
  const int neg = has(offsetof(tessera_options, negative_reps)) ? o.negative_reps : TESSERA_NEGATIVE_REPS_ERROR;
  const int nt = has(offsetof(tessera_options, nontemporal)) ? o.nontemporal : TESSERA_NONTEMPORAL_AUTO;
  const int acc = has(offsetof(tessera_options, accumulate)) ? o.accumulate : 0;
  e.options.negative_reps = static_cast<tessera::NegativeReps>(neg);
  e.options.nontemporal = static_cast<tessera::NonTemporal>(nt);
  e.options.accumulate = acc == 1;
  e.valid = o.max_threads >= 0 && nt >= 0 && nt <= 2 && neg >= 0 && neg <= 1 && (acc == 0 || acc == 1);
  return e;
}

std::string list(const int64_t* v, int n) {
  std::string s = "(";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (n == 1 ? ",)" : ")");
}

std::string counts_text(const Case& c) {
  const int n = static_cast<int>(std::min<size_t>(c.counts.size(), 16));
  return list(c.counts.data(), n) + (c.counts.size() > 16 ? " ..." : "");
}

[[noreturn]] void fail(const Case& c, const char* api, const std::string& what) {
  std::string op = c.rop >= 0 ? kROpNames[c.rop] : kOpNames[c.op];
  if (c.rop >= 0)
    op += std::string(" dtype ") + std::to_string(c.dtype) + " (" + tessera_dtype_name(c.dtype) + "), accumulate " +
          std::to_string(c.opt.accumulate) + (c.grad_fault ? ", gradient shape fault" : "") +
          (c.rop == kSumToShape ? std::string() : ", in_ndim " + std::to_string(c.in_ndim) + " in_shape " +
                                                      list(c.in_shape, c.in_naxes)) +
          "; below: shape and strides are the gradient's" + (c.rop == kSumToShape ? ", list the target" : "");
  if (c.op == kRepeat)
    op += " nrepeats " + std::to_string(c.nrepeats) + " counts " + counts_text(c) + " axis " +
          (c.has_axis ? std::to_string(c.axis) : std::string("none"));
  std::fprintf(stderr,
               "fuzz_tile MISMATCH [%s] %s\n  %s\n  ndim %d shape %s strides %s%s itemsize %zu nreps %d list %s\n"
               "  src %s misalign %zu, dst mode %u misalign %zu slack %zu, target %s\n"
               "  options mode %u {sizeof %zu, max_threads %d, negative_reps %d, nontemporal %d}, region %d (mode %u), "
               "dlpack %d (0x%02x), null arg %d%s, arena %d, huge %d\n  last error: %s\n",
               api, what.c_str(), op.c_str(), c.ndim, list(c.shape, c.naxes).c_str(), list(c.strides, c.naxes).c_str(),
               c.null_strides ? " (passed as NULL)" : "", c.itemsize, c.nreps, list(c.reps, c.nrepv).c_str(),
               c.null_src ? "NULL" : "buffer", c.src_misalign, c.dst_mode, c.dst_misalign, c.slack,
               tessera_active_target(), c.opt_mode, c.opt.sizeof_options, c.opt.max_threads, c.opt.negative_reps,
               c.opt.nontemporal, c.region, c.region_mode, c.dlpack, c.dl, c.null_arg, c.null_alt ? " (alt)" : "",
               c.arena, c.huge_asked && c.rare, tessera_last_error());
  __builtin_trap();
}

const char* status_name(tessera_status s) {
  switch (s) {
    case TESSERA_OK: return "OK";
    case TESSERA_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case TESSERA_OVERFLOW: return "OVERFLOW";
    case TESSERA_BUFFER_TOO_SMALL: return "BUFFER_TOO_SMALL";
    case TESSERA_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case TESSERA_INTERNAL: return "INTERNAL";
  }
  return "?";
}

void expect_status(const Case& c, const char* api, tessera_status got, tessera_status want) {
  if (got != want)
    fail(c, api, std::string("status ") + status_name(got) + ", expected " + status_name(want));
  if (got != TESSERA_OK && tessera_last_error()[0] == '\0') fail(c, api, "failed with an empty tessera_last_error()");
}

// a * b for a, b >= 0, saturated at `cap`.
int64_t sat_mul(int64_t a, int64_t b, int64_t cap) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) || r > cap ? cap : r;
}

// Number of output axes of the case's operation (for the region codes), valid or not.
int output_axes(const Case& c) {
  if (c.rop >= 0) return c.rop == kSumToShape ? c.nrepv : c.in_naxes;  // the result's (sum_to_shape: the target's)
  switch (c.op) {
    case kTile:
    case kExpand: return std::max(c.naxes, c.nrepv);
    case kBroadcastTo: return c.nrepv;
    default: return c.has_axis ? c.naxes : 1;
  }
}

// Parent-buffer byte sizes saturate at 2^48 (huge itemsizes, many axes): such a source span is
// never allocated, and the strides stay far from overflow.
constexpr int64_t kSat = int64_t{1} << 48;

// The stride bytes of c.naxes axes of c.shape (see the format): parent-buffer axes in the order
// perm_code picks, each of `pitch` bytes per element and the extent plus a gap, positive,
// negative or zero; a raw stride byte is in units of `raw_unit` bytes. NULL strides (c.null_strides):
// the C-contiguous strides of `item`-byte elements (as the library assumes for NULL strides).
void decode_strides(Reader& in, Case& c, uint8_t perm_code, int64_t item, int64_t pitch, int64_t raw_unit) {
  // Parent-buffer axis order (innermost first): a permutation picked by perm_code.
  int order[kCap];
  for (int i = 0; i < c.naxes; ++i) order[i] = c.naxes - 1 - i;  // C order
  for (int i = 0; i < c.naxes; ++i) {
    const int j = i + perm_code % (c.naxes - i);
    perm_code = static_cast<uint8_t>(perm_code / (c.naxes - i));  // 0 is C order
    std::swap(order[i], order[j]);
  }
  uint8_t stride_code[kCap];
  int64_t raw[kCap];
  for (int i = 0; i < c.naxes; ++i) {
    stride_code[i] = in.next();
    raw[i] = stride_code[i] >= 0xE0 ? static_cast<int8_t>(in.next()) * raw_unit : 0;
  }
  int64_t running = pitch;
  for (int k = 0; k < c.naxes; ++k) {
    const int ax = order[k];
    const uint8_t b = stride_code[ax];
    const int64_t parent_extent = (c.shape[ax] > 0 ? std::min(c.shape[ax], kSat) : 1) + (b >> 2) % 8;
    int64_t s = running;
    running = sat_mul(running, parent_extent, kSat);
    if (b >= 0xE0) s = raw[ax];
    else if (b % 4 == 2) s = -s;
    else if (b % 4 == 3) s = 0;
    c.strides[ax] = s;
  }
  if (c.null_strides) {  // C-contiguous, as the library assumes for NULL strides
    int64_t s = item;
    for (int i = c.naxes - 1; i >= 0; --i) {
      c.strides[i] = s;
      s = sat_mul(s, c.shape[i] > 0 ? c.shape[i] : 1, kSat);
    }
  }
}

// tile's reps (c.nrepv values).
void decode_reps(Reader& in, Case& c) {
  const bool many_reps = c.nrepv > kFewReps;
  for (int i = 0; i < c.nrepv; ++i) {
    const uint8_t b = in.next(1);
    c.reps[i] = b >= 0xE0 ? kSpecialReps[b - 0xE0] : !many_reps || b < 0x40 ? kSmallReps[b % 8] : 1;
  }
}

// broadcast_to's / expand's target (c.nrepv values), aligned with c.shape's trailing axes.
void decode_target(Reader& in, Case& c) {
  const bool many_values = c.nrepv > kFewReps;
  for (int i = 0; i < c.nrepv; ++i) {
    const uint8_t b = in.next(1);
    const int ax = i - (c.nrepv - c.naxes);  // the aligned input axis, if any
    const int64_t same = ax >= 0 && ax < c.naxes ? c.shape[ax] : 1 + (b >> 3) % 4;
    if (b >= 0xE0) c.reps[i] = kSpecialReps[b - 0xE0];
    else if (many_values && b >= 0x40) c.reps[i] = ax >= 0 && ax < c.naxes ? c.shape[ax] : 1;
    else if (b % 8 < 4) c.reps[i] = same;
    else if (b % 8 == 4) c.reps[i] = 1;
    else c.reps[i] = kSmallTargets[(b >> 3) % 8];
  }
}

// repeat's nrepeats (from the list count byte nr) and counts, for an input of `shape` (ndim axes,
// naxes decoded) and the case's axis.
void decode_counts(Reader& in, Case& c, uint8_t nr, const int64_t* shape, int ndim, int naxes) {
  // The extent the counts go along: the axis' (in range), or the input's element count.
  int64_t extent = -1;
  bool known = ndim >= 0 && ndim <= kCap;
  for (int i = 0; i < naxes; ++i) known = known && shape[i] >= 0;
  const bool flat = !c.has_axis || (ndim == 0 && (c.axis == 0 || c.axis == -1));
  if (known && !flat && c.axis >= -ndim && c.axis < ndim) {
    extent = shape[c.axis < 0 ? c.axis + ndim : c.axis];
  } else if (known && flat) {
    extent = 1;
    for (int i = 0; i < naxes; ++i) extent = sat_mul(extent, shape[i], kMaxCounts + 1);
  }
  if (nr >= 0xF0) c.nrepeats = kManyCounts[nr - 0xF0];
  else if (nr % 8 == 7) c.nrepeats = (nr & 8) && extent >= 0 ? extent + 1 : 0;
  else if (nr % 2 == 1 && extent >= 0 && extent <= kMaxCounts) c.nrepeats = extent;
  else c.nrepeats = 1;
  if (c.nrepeats > kMaxCounts) c.nrepeats = 1;
  c.counts.resize(static_cast<size_t>(std::max<int64_t>(c.nrepeats, 0)));
  for (int64_t& v : c.counts) {
    const uint8_t b = in.next(1);
    v = b >= 0xE0 ? kSpecialReps[b - 0xE0] : kSmallReps[b % 8];
  }
}

// Trailing fields: entry points and options.
void decode_trailing(Reader& in, Case& c) {
  const uint8_t api = in.next();
  c.opt_mode = (api & 3) >= 2 ? kOptions : (api & 3);
  c.region = api & 4;
  c.dlpack = api & 8;
  const bool null_arg = api & 16;
  c.arena = api & 32;
  c.huge_asked = (api >> 6) == 3 && c.big;
  if (c.opt_mode == kOptions) {
    const uint8_t o = in.next();
    const int nt = o & 3, high = o >> 6;
    c.opt.nontemporal = nt < 3 ? nt : kBadEnum[high];
    c.opt.negative_reps = (o & 4) ? TESSERA_NEGATIVE_REPS_CLAMP_TO_ZERO : TESSERA_NEGATIVE_REPS_ERROR;
    if (nt < 3 && high >= 2) c.opt.negative_reps = high == 2 ? 2 : -1;
    c.opt.max_threads = kThreads[(o >> 3) & 7];
    const uint8_t sz = in.next();
    const size_t just_threads = offsetof(tessera_options, max_threads) + sizeof(int);
    switch (sz % 8) {
      case 4: c.opt.sizeof_options = 0; break;
      case 5: c.opt.sizeof_options = just_threads; break;
      case 6: c.opt.sizeof_options = offsetof(tessera_options, nontemporal); break;
      case 7: c.opt.sizeof_options = sizeof(tessera_options) + 1; break;
      default: c.opt.sizeof_options = (sz & 8) ? just_threads - 1 : sizeof(tessera_options); break;
    }
  }
  if (c.rop >= 0 && c.acc_value != 0) {  // accumulate: through options (the defaults but it, if [api] gave none)
    if (c.opt_mode != kOptions) c.opt_mode = kOptions;
    c.opt.accumulate = c.acc_value;
  }
  if (null_arg) {
    const uint8_t b = in.next();
    c.null_arg = b % 8;
    c.null_alt = b & 8;
  }
  if (c.dlpack) c.dl = in.next();
  if (c.region) {
    c.region_mode = in.next() & 7;
    const int n_out = output_axes(c);
    for (int i = 0; i < 2 * n_out; ++i) c.region_codes[i] = in.next();
  }
}

void reduce_gradient_shape(Case& c);  // below, with the model: the gradient's shape

// A reduction's bytes after [0] (see the input format).
Case decode_reduction(Reader& in, uint8_t opb) {
  Case c;
  c.rop = opb % 4;
  c.op = c.rop == kRepeatBackward ? kRepeat : kTile;  // (what the forward operation is)
  const uint8_t r = in.next(), a = in.next();
  const int code = r % 16;
  c.dtype = code < kDtypes ? code : kBadDtypes[code - kDtypes];
  if (r & 16) c.acc_value = ((r >> 5) & 3) == 3 ? 2 : 1;
  c.grad_fault = r & 128;
  const bool valid_dtype = c.dtype >= 0 && c.dtype < kDtypes;
  const bool is_float = valid_dtype && c.dtype <= TESSERA_COMPLEX128;
  c.itemsize = static_cast<size_t>(valid_dtype ? kDtypeBytes[c.dtype] : 4);
  if (c.rop == kRepeatBackward) {
    c.has_axis = a % 4 != 0;
    c.axis = (a >> 2) % 16;  // the code, until ndim is known
  }
  const uint8_t nd = in.next(), nr = in.next();
  const int ndim = nd < 0xF0 ? nd % (kFewDims + 1) : kManyCounts[nd - 0xF0];
  const int naxes = std::clamp(ndim, 0, kCap);
  const uint8_t flags = in.next();
  c.null_strides = flags & 1;
  c.null_src = flags & 2;
  c.dst_mode = (flags >> 2) & 7;
  const bool negative_extent = flags & 32;
  c.big = flags & 128;
  const uint8_t perm_code = in.next();
  c.src_misalign = in.next() % 64;
  c.dst_misalign = in.next() % 64;
  c.slack = in.next();
  const int64_t item = static_cast<int64_t>(c.itemsize);
  const uint8_t pb = in.next();
  const int64_t pitch = is_float ? item * (1 + pb % 2) : item + pb % 8;
  // The decoded shape: A's (tile_backward, repeat_backward) or the gradient's (sum_to_shape).
  int64_t* shape = c.rop == kSumToShape ? c.shape : c.in_shape;
  const bool many = naxes > kFewDims;
  for (int i = 0; i < naxes; ++i) {
    const uint8_t b = in.next(1);
    shape[i] = !many || b < 0x40 ? kExtents[b % 16] : 1;
  }
  if (negative_extent && naxes > 0) shape[c.slack % naxes] = -1 - static_cast<int64_t>(c.slack % 3);
  if (c.rop == kSumToShape) {
    c.ndim = ndim;
    c.naxes = naxes;
    c.nreps = nr >= 0xF0 ? kManyCounts[nr - 0xF0] : ndim >= 0 && ndim <= kCap ? (nr % 8) % (ndim + 2) : nr % 8;
    c.nrepv = std::clamp(c.nreps, 0, kCap);
    decode_target(in, c);
  } else {
    c.in_ndim = ndim;
    c.in_naxes = naxes;
    if (c.rop == kTileBackward) {
      c.nreps = nr < 0xF0 ? nr % (kFewReps + 1) : kManyCounts[nr - 0xF0];
      c.nrepv = std::clamp(c.nreps, 0, kCap);
      decode_reps(in, c);
    } else {
      if (c.has_axis) {
        const int k = c.axis;
        c.axis = k < 6 ? k : k < 12 ? k - 12 : k == 12 ? naxes : k == 13 ? -naxes - 1 : k == 14 ? INT_MAX : INT_MIN + 1;
      }
      decode_counts(in, c, nr, c.in_shape, ndim, naxes);
    }
    reduce_gradient_shape(c);
  }
  decode_strides(in, c, perm_code, item, pitch, is_float ? item : 1);
  decode_trailing(in, c);
  return c;
}

Case decode(const uint8_t* data, size_t size) {
  Reader in(data, size);
  const uint8_t opb = in.next();
  if (opb >= kReduceOpMin && opb % 4 != kRepeat) return decode_reduction(in, opb);
  Case c;
  c.op = opb % 4;
  if (c.op == kRepeat) {
    const unsigned a = opb >> 2, k = a >> 2;
    c.has_axis = a % 4 != 0;
    c.axis = 0;  // set once ndim is known
    if (c.has_axis) c.axis = static_cast<int>(k);  // code for now
  }
  const uint8_t nd = in.next(), nr = in.next(), is = in.next();
  c.ndim = nd < 0xF0 ? nd % (kFewDims + 1) : kManyCounts[nd - 0xF0];
  c.nreps = nr < 0xF0 ? nr % (kFewReps + 1) : kManyCounts[nr - 0xF0];
  c.itemsize = is < 0xF0 ? 1 + is % 40 : kBigItems[is - 0xF0];
  c.naxes = std::clamp(c.ndim, 0, kCap);
  if (c.op == kRepeat) {
    const int k = c.axis;
    if (c.has_axis)
      c.axis = k < 6 ? k : k < 12 ? k - 12 : k == 12 ? c.naxes : k == 13 ? -c.naxes - 1 : k == 14 ? INT_MAX : INT_MIN + 1;
    c.nreps = 0;
  }
  c.nrepv = c.op == kRepeat ? 0 : std::clamp(c.nreps, 0, kCap);
  const uint8_t flags = in.next();
  c.null_strides = flags & 1;
  c.null_src = flags & 2;
  c.dst_mode = (flags >> 2) & 7;
  const bool negative_extent = flags & 32;
  const bool zero_itemsize = flags & 64;
  c.big = flags & 128;
  uint8_t perm_code = in.next();
  c.src_misalign = in.next() % 64;
  c.dst_misalign = in.next() % 64;
  c.slack = in.next();
  const int64_t item = static_cast<int64_t>(std::min<size_t>(c.itemsize, kSat));
  const int64_t pitch = item + in.next() % 8;

  const bool many = c.naxes > kFewDims;
  for (int i = 0; i < c.naxes; ++i) {
    const uint8_t b = in.next(1);
    c.shape[i] = !many || b < 0x40 ? kExtents[b % 16] : 1;
  }

  decode_strides(in, c, perm_code, item, pitch, 1);
  if (negative_extent && c.naxes > 0) c.shape[c.slack % c.naxes] = -1 - static_cast<int64_t>(c.slack % 3);

  // The list's values.
  if (c.op == kTile) decode_reps(in, c);
  else if (c.op != kRepeat) decode_target(in, c);
  else decode_counts(in, c, nr, c.shape, c.ndim, c.naxes);
  if (zero_itemsize) c.itemsize = 0;
  decode_trailing(in, c);
  return c;
}

// What the planner must answer, from the documented rules (tessera.h, tessera.hpp), in 128-bit
// arithmetic; where several errors apply, in the order the planner checks them: options,
// itemsize, the input's shape (a negative extent, then its element count overflowing), the
// operation's own arguments (tile: negative reps, then an output extent overflowing;
// broadcast_to / expand: a negative target extent, too few target axes (broadcast_to), an axis
// that does not broadcast; repeat: the axis, the number of counts, a negative count, then their
// sum overflowing), the output's element count, its byte size and, for C-contiguous (NULL)
// strides, the input's byte size. Preconditions: the list and ndim counts are in range (a count
// out of range, or a NULL list, is INVALID_ARGUMENT before any of this; c_status).
struct Model {
  tessera_status shape_status = TESSERA_OK;  // the shape calls (no itemsize)
  tessera_status plan_status = TESSERA_OK;   // the plan calls and the planning part of the others
  bool input_nonempty = false;
  int out_ndim = 0;                          // valid when shape_status == OK
  int64_t out_shape[kCap] = {};
  int64_t output_bytes = 0;  // valid when plan_status == OK
  // repeat (valid when shape_status == OK): the repeated axis (-1: the flattened input), one count
  // for all (scalar >= 0) or the prefix sums of the per-element counts (negative ones clamped).
  int axis = -1;
  int64_t scalar = -1;
  std::vector<int64_t> prefix;
};

// Step 2 of the model: the operation's own checks and the output extents (ext[0 .. *n)).
tessera_status nest_model(const Case& c, bool clamp, bool list_null, int64_t in_count, Model& m, __int128 ext[kCap],
                          int* n_out) {
  const int nd = c.ndim, nr = c.nreps;
  switch (c.op) {
    case kTile: {
      int64_t reps[kCap];
      for (int i = 0; i < nr; ++i) {
        reps[i] = clamp && c.reps[i] < 0 ? 0 : c.reps[i];
        if (reps[i] < 0) return TESSERA_INVALID_ARGUMENT;
      }
      const int n = nd > nr ? nd : nr;
      bool overflow = false;
      for (int i = 0; i < n; ++i) {
        const int64_t s = i < n - nd ? 1 : c.shape[i - (n - nd)];
        const int64_t r = i < n - nr ? 1 : reps[i - (n - nr)];
        ext[i] = static_cast<__int128>(s) * r;
        overflow = overflow || ext[i] > kInt64Max;
      }
      *n_out = n;
      return overflow ? TESSERA_OVERFLOW : TESSERA_OK;
    }
    case kBroadcastTo:
    case kExpand: {
      const bool bidirectional = c.op == kExpand;
      for (int i = 0; i < nr; ++i)
        if (c.reps[i] < 0) return TESSERA_INVALID_ARGUMENT;
      if (!bidirectional && nr < nd) return TESSERA_INVALID_ARGUMENT;
      const int n = nd > nr ? nd : nr;
      for (int i = 0; i < n; ++i) {
        const int64_t a = i < n - nd ? 1 : c.shape[i - (n - nd)];
        const int64_t t = i < n - nr ? 1 : c.reps[i - (n - nr)];
        if (a == t || (bidirectional && t == 1)) ext[i] = a;
        else if (a == 1) ext[i] = t;
        else return TESSERA_INVALID_ARGUMENT;
      }
      *n_out = n;
      return TESSERA_OK;
    }
    default: break;
  }
  // repeat (a 0-d input takes axis 0 and -1 as numpy.repeat does: its one element, flattened)
  const bool has_axis = c.has_axis && !(nd == 0 && (c.axis == 0 || c.axis == -1));
  if (has_axis && (c.axis < -nd || c.axis >= nd)) return TESSERA_INVALID_ARGUMENT;
  const int axis = has_axis ? (c.axis < 0 ? c.axis + nd : c.axis) : -1;
  const int64_t extent = has_axis ? c.shape[axis] : in_count;
  const int64_t count = c.nrepeats;
  if (count < 0 || (count > 0 && list_null) || (count != 1 && count != extent)) return TESSERA_INVALID_ARGUMENT;
  std::vector<int64_t> r(c.counts);
  bool same = true;
  for (int64_t& v : r) {
    if (v < 0 && !clamp) return TESSERA_INVALID_ARGUMENT;
    v = v < 0 ? 0 : v;
    same = same && v == r[0];
  }
  __int128 total = 0;
  m.axis = axis;
  m.prefix.clear();
  if (same) {  // one count (given once, or every count equal)
    m.scalar = count == 0 ? 0 : r[0];
    total = static_cast<__int128>(extent) * m.scalar;
  } else {
    m.scalar = -1;
    m.prefix.assign(1, 0);
    for (int64_t v : r) {
      total += v;
      if (total > kInt64Max) return TESSERA_OVERFLOW;
      m.prefix.push_back(static_cast<int64_t>(total));
    }
  }
  if (total > kInt64Max) return TESSERA_OVERFLOW;
  if (has_axis) {
    for (int i = 0; i < nd; ++i) ext[i] = i == axis ? total : c.shape[i];
    *n_out = nd;
  } else {
    ext[0] = total;
    *n_out = 1;
  }
  return TESSERA_OK;
}

// `list_null`: the list pointer is NULL (repeat: the C++ calls reach the planner with it).
Model model(const Case& c, bool valid_options, bool clamp, bool contiguous, bool list_null) {
  Model m;
  const int nd = c.ndim;
  bool negative = false, input_empty = false;
  __int128 in_count = 1;
  for (int i = 0; i < nd; ++i) {
    negative = negative || c.shape[i] < 0;
    input_empty = input_empty || c.shape[i] <= 0;
  }
  for (int i = 0; i < nd && !input_empty; ++i)  // saturated at 2^63 (already an overflow), so that * itemsize fits
    in_count = std::min<__int128>(in_count * c.shape[i], static_cast<__int128>(kInt64Max) + 1);
  if (input_empty) in_count = 0;
  m.input_nonempty = !input_empty;
  if (!valid_options) {
    m.shape_status = m.plan_status = TESSERA_INVALID_ARGUMENT;
    return m;
  }
  __int128 extents[kCap];
  int n = 0;
  tessera_status s = TESSERA_OK;
  if (negative) s = TESSERA_INVALID_ARGUMENT;
  else if (in_count > kInt64Max) s = TESSERA_OVERFLOW;
  else s = nest_model(c, clamp, list_null, static_cast<int64_t>(in_count), m, extents, &n);
  __int128 count = 1;
  if (s == TESSERA_OK) {
    for (int i = 0; i < n; ++i)
      if (extents[i] == 0) count = 0;
    for (int i = 0; i < n && count != 0; ++i) {
      count *= extents[i];
      if (count > kInt64Max) {
        s = TESSERA_OVERFLOW;
        break;
      }
    }
  }
  m.shape_status = s;
  if (s == TESSERA_OK) {
    m.out_ndim = n;
    for (int i = 0; i < n; ++i) m.out_shape[i] = static_cast<int64_t>(extents[i]);
  }
  const __int128 isz = c.itemsize;
  if (c.itemsize == 0) m.plan_status = TESSERA_INVALID_ARGUMENT;
  else if (isz > kInt64Max) m.plan_status = TESSERA_OVERFLOW;
  else if (s != TESSERA_OK) m.plan_status = s;
  else if (count * isz > kInt64Max) m.plan_status = TESSERA_OVERFLOW;
  else if (!input_empty && contiguous && in_count * isz > kInt64Max)
    m.plan_status = TESSERA_OVERFLOW;  // (an empty output: a zero rep beside a huge input)
  else m.output_bytes = static_cast<int64_t>(count * isz);
  return m;
}

// The status of an execution whose planning answered `plan_status`.
tessera_status exec_expect(tessera_status plan_status, bool src_null, bool input_nonempty, bool dst_null,
                           size_t dst_bytes, size_t nbytes) {
  if (plan_status != TESSERA_OK) return plan_status;
  if (src_null && input_nonempty) return TESSERA_INVALID_ARGUMENT;
  if (dst_null && nbytes > 0) return TESSERA_INVALID_ARGUMENT;
  if (dst_bytes < nbytes) return TESSERA_BUFFER_TOO_SMALL;
  return TESSERA_OK;
}

// ---- References ---------------------------------------------------------------------------
// The input promoted to the output's axes (tile, broadcast_to, expand): prepended axes of extent
// 1; reps[k] copies of axis k (tile's reps; a broadcast axis' target extent; else 1).
struct Promoted {
  int n = 0;
  int64_t shape[kCap], stride[kCap], reps[kCap];
};

Promoted promote(const Case& c, const Model& m) {
  Promoted p;
  p.n = m.out_ndim;
  for (int i = 0; i < p.n; ++i) {
    const bool in_shape = i >= p.n - c.ndim;
    p.shape[i] = in_shape ? c.shape[i - (p.n - c.ndim)] : 1;
    p.stride[i] = in_shape ? c.strides[i - (p.n - c.ndim)] : 0;
    p.reps[i] = p.shape[i] > 0 ? m.out_shape[i] / p.shape[i] : 0;
  }
  return p;
}

// Source index along a repeated axis of output index j: i with prefix[i] <= j < prefix[i + 1].
int64_t repeat_source(const Model& m, int64_t j) {
  if (m.scalar >= 0) return j / m.scalar;
  return std::upper_bound(m.prefix.begin(), m.prefix.end(), j) - m.prefix.begin() - 1;
}

// The source byte offset of output element `j` (out_ndim indices), from the definitions:
//   tile          out[j] = A[j % shape] on the promoted axes
//   broadcast_to, expand  out[j] = A[j, with 0 on A's axes of extent 1] (aligned to the end)
//   repeat        along the axis, source index i for prefix[i] <= j < prefix[i + 1] (j / r for
//                 one count r); without an axis, the i-th element of A in C order
int64_t source_offset(const Case& c, const Model& m, const int64_t* j) {
  int64_t off = 0;
  if (c.op == kRepeat) {
    if (m.axis >= 0) {
      for (int k = 0; k < c.ndim; ++k) off += (k == m.axis ? repeat_source(m, j[k]) : j[k]) * c.strides[k];
      return off;
    }
    int64_t flat = repeat_source(m, j[0]);
    for (int k = c.ndim - 1; k >= 0; --k) {
      off += (flat % c.shape[k]) * c.strides[k];
      flat /= c.shape[k];
    }
    return off;
  }
  const int n = m.out_ndim, pad = n - c.ndim;
  for (int k = 0; k < c.ndim; ++k) {
    const int64_t i = c.op == kTile ? j[pad + k] % c.shape[k] : c.shape[k] == 1 ? 0 : j[pad + k];
    off += i * c.strides[k];
  }
  return off;
}

// The output element by element (small outputs): `nbytes` bytes.
void elementwise_reference(const Case& c, const Model& m, const unsigned char* first, unsigned char* out,
                           size_t nbytes) {
  int64_t j[kCap] = {};
  const int n = m.out_ndim;
  for (size_t at = 0; at < nbytes; at += c.itemsize) {
    std::memcpy(out + at, first + source_offset(c, m, j), c.itemsize);
    for (int k = n - 1; k >= 0; --k) {
      if (++j[k] < m.out_shape[k]) break;
      j[k] = 0;
    }
  }
}

// Copies the `unit` bytes at out to follow them `copies - 1` times more (doubling memcpys).
void replicate(unsigned char* out, size_t unit, int64_t copies) {
  for (int64_t done = 1; done < copies;) {
    const int64_t more = done < copies - done ? done : copies - done;
    std::memcpy(out + static_cast<size_t>(done) * unit, out, static_cast<size_t>(more) * unit);
    done += more;
  }
}

// A second, faster reference for the big outputs, written from the definitions by blocks rather
// than by elements. tile, broadcast_to, expand: the output block of axes k.. at source position
// `src` is the blocks of axes k+1.. for the input's extent along axis k, the whole repeated
// reps[k] times. Cost: one memcpy per input element plus O(output bytes) in doubling copies.
// Returns the bytes written.
size_t block(const Promoted& p, size_t itemsize, int k, const unsigned char* src, unsigned char* out) {
  if (k == p.n) {
    std::memcpy(out, src, itemsize);
    return itemsize;
  }
  size_t unit = 0;
  for (int64_t j = 0; j < p.shape[k]; ++j) unit += block(p, itemsize, k + 1, src + j * p.stride[k], out + unit);
  replicate(out, unit, p.reps[k]);
  return unit * static_cast<size_t>(p.reps[k]);
}

// repeat along an axis: the block of axes k.. is, on the repeated axis, each source index's block
// of axes k+1.. written count(i) times in a row.
size_t repeat_block(const Case& c, const Model& m, int k, const unsigned char* src, unsigned char* out) {
  if (k == c.ndim) {
    std::memcpy(out, src, c.itemsize);
    return c.itemsize;
  }
  size_t written = 0;
  for (int64_t i = 0; i < c.shape[k]; ++i) {
    const int64_t copies = k != m.axis ? 1 : m.scalar >= 0 ? m.scalar : m.prefix[i + 1] - m.prefix[i];
    if (copies == 0) continue;
    const size_t unit = repeat_block(c, m, k + 1, src + i * c.strides[k], out + written);
    replicate(out + written, unit, copies);
    written += unit * static_cast<size_t>(copies);
  }
  return written;
}

// repeat without an axis: the input's elements in C order, element i count(i) times.
size_t repeat_flat(const Case& c, const Model& m, const unsigned char* first, unsigned char* out) {
  int64_t j[kCap] = {};
  size_t written = 0;
  int64_t total = 1;  // the input's elements (a non-empty input: the output is not empty)
  for (int k = 0; k < c.ndim; ++k) total *= c.shape[k];
  for (int64_t i = 0; i < total; ++i) {
    int64_t off = 0;
    for (int k = 0; k < c.ndim; ++k) off += j[k] * c.strides[k];
    const int64_t copies = m.scalar >= 0 ? m.scalar : m.prefix[i + 1] - m.prefix[i];
    if (copies > 0) {
      std::memcpy(out + written, first + off, c.itemsize);
      replicate(out + written, c.itemsize, copies);
      written += c.itemsize * static_cast<size_t>(copies);
    }
    for (int k = c.ndim - 1; k >= 0; --k) {
      if (++j[k] < c.shape[k]) break;
      j[k] = 0;
    }
  }
  return written;
}

size_t block_reference(const Case& c, const Model& m, const unsigned char* first, unsigned char* out) {
  if (c.op != kRepeat) return block(promote(c, m), c.itemsize, 0, first, out);
  return m.axis >= 0 ? repeat_block(c, m, 0, first, out) : repeat_flat(c, m, first, out);
}
// The source: exactly the bytes the strides address (plus a poisoned misalignment prefix).
struct Source {
  std::unique_ptr<unsigned char[]> buf;
  size_t prefix = 0, bytes = 0;
  const unsigned char* first = nullptr;  // element (0, ..., 0)
  ~Source() {
    if (buf) FUZZ_UNPOISON(buf.get(), prefix + bytes);
  }
};

// A stand-in for a source too large to allocate: poisoned, so that a call which reads it where
// it must have failed (or had nothing to read) is an ASan report.
const unsigned char* poisoned_source() {
  static unsigned char* block = [] {
    auto* p = new unsigned char[256];
    FUZZ_POISON(p, 256);
    return p;
  }();
  return block + 128;
}

// Returns false if the source span exceeds max_bytes (at most kMaxBigBytes; nothing is allocated
// then).
bool make_source(const Case& c, Source* s, int64_t max_bytes = kMaxBytes) {
  __int128 lo = 0, hi = 0;
  const size_t isz = c.itemsize > 0 ? c.itemsize : 1;
  bool empty = false;
  for (int i = 0; i < c.naxes; ++i) {
    if (c.shape[i] <= 0) {
      empty = true;
      continue;
    }
    const __int128 reach = static_cast<__int128>(c.shape[i] - 1) * c.strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  const __int128 span = empty ? 0 : hi - lo + isz;
  if (span > max_bytes) return false;
  s->prefix = c.src_misalign;
  s->bytes = static_cast<size_t>(span);
  s->buf.reset(new unsigned char[s->prefix + s->bytes + 1]);
  static const std::vector<unsigned char> pattern = [] {  // distinct neighbours: misplacements show
    std::vector<unsigned char> v(kMaxBigBytes);
    for (size_t i = 0; i < v.size(); ++i) {
      uint32_t x = static_cast<uint32_t>(i) * 0x9E3779B1u;
      x ^= x >> 15;
      v[i] = static_cast<unsigned char>(x ^ (x >> 8) ^ (x >> 24));
    }
    return v;
  }();
  unsigned char* data = s->buf.get() + s->prefix;
  if (s->bytes > 0) std::memcpy(data, pattern.data(), s->bytes);
  // Everything outside [data, data + bytes) is off limits, also when the input is empty.
  FUZZ_POISON(s->buf.get(), s->prefix);
  FUZZ_POISON(data + s->bytes, 1);
  s->first = empty ? data : data - static_cast<int64_t>(lo);  // (an empty input's other axes may be huge)
  return true;
}

// A destination: [poisoned misalignment][capacity bytes][sentinel], all pre-filled.
struct Dest {
  std::unique_ptr<unsigned char[]> buf;
  size_t prefix = 0, capacity = 0;
  unsigned char* data() { return buf.get() + prefix; }
  Dest(size_t misalign, size_t cap) : buf(new unsigned char[misalign + cap + kSentinel]), prefix(misalign), capacity(cap) {
    FUZZ_POISON(buf.get(), prefix);
    refill();
  }
  ~Dest() { FUZZ_UNPOISON(buf.get(), prefix); }
  Dest(const Dest&) = delete;
  Dest& operator=(const Dest&) = delete;
  void refill() { std::memcpy(data(), fill_pattern(), capacity + kSentinel); }
  // Bytes [from, capacity + kSentinel) still hold the fill.
  bool untouched_from(size_t from, size_t* where) {
    const unsigned char* fill = fill_pattern();
    if (std::memcmp(data() + from, fill + from, capacity + kSentinel - from) == 0) return true;
    *where = from;
    while (data()[*where] == fill[*where]) ++*where;
    return false;
  }
  // The destination fill, byte i = kDstFill ^ (7 * i), for the largest destination.
  static const unsigned char* fill_pattern() {
    static const std::vector<unsigned char> fill = [] {
      std::vector<unsigned char> v(kMaxHugeBytes + 256 + kSentinel);  // + the largest slack
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(kDstFill ^ (i * 7));
      return v;
    }();
    return fill.data();
  }
};

// Checks dst after a call that returned `got` (already matched against the expectation).
void check_output(const Case& c, const char* api, tessera_status got, Dest& dst, const std::vector<unsigned char>& want,
                  size_t nbytes) {
  size_t where = 0;
  if (got != TESSERA_OK) {
    if (!dst.untouched_from(0, &where))
      fail(c, api, "rejected call (" + std::string(status_name(got)) + ") wrote dst byte " + std::to_string(where));
    return;
  }
  if (want.size() != nbytes) fail(c, api, "succeeded where the model expects a rejection");
  if (!want.empty() && std::memcmp(dst.data(), want.data(), want.size()) != 0) {
    size_t i = 0;
    while (dst.data()[i] == want[i]) ++i;
    fail(c, api, "output byte " + std::to_string(i) + " (element " + std::to_string(i / c.itemsize) + ") is " +
                     std::to_string(dst.data()[i]) + ", reference " + std::to_string(want[i]));
  }
  if (!dst.untouched_from(want.size(), &where))
    fail(c, api, "wrote past the output's " + std::to_string(want.size()) + " bytes: byte " + std::to_string(where) +
                     (where >= dst.capacity ? " (sentinel)" : ""));
}

// A destination as DstMode `mode` hands it over for an output of `nbytes` (0 when planning fails;
// `fits`: the output may really be allocated).
struct DstPlan {
  size_t capacity = 0, dst_bytes = 0;
  bool null_dst = false;
};

DstPlan dst_plan(unsigned mode, bool planned, bool fits, size_t nbytes, size_t slack) {
  DstPlan d;
  if (mode > kHugeClaim) mode = kExact;
  if (planned && !fits && (mode == kExact || mode == kSlack || mode == kHugeClaim))
    mode = kShort;  // too large to allocate: hand over a small buffer, which must be refused
  switch (mode) {
    case kExact: d.capacity = d.dst_bytes = nbytes; break;
    case kSlack: d.capacity = d.dst_bytes = nbytes + slack; break;
    case kShort:
      if (!fits) d.capacity = d.dst_bytes = kSmallCapacity;
      else d.capacity = d.dst_bytes = nbytes > 0 ? nbytes - 1 - slack % nbytes : 0;
      break;
    case kZero: d.capacity = fits ? nbytes : kSmallCapacity; d.dst_bytes = 0; break;
    case kNullDst: d.null_dst = true; d.dst_bytes = nbytes; break;
    case kHugeClaim: d.capacity = nbytes; d.dst_bytes = std::numeric_limits<size_t>::max(); break;
  }
  return d;
}

// Executor paths of the plans executed successfully, for TESSERA_FUZZ_PATHS.
std::map<std::string, long>& path_counts() {
  static auto* counts = new std::map<std::string, long>;  // never destroyed: read at exit
  return *counts;
}

// The executor path a plan's description names: the "[path]" after "kernel: " (the family), or
// the reductions' kernel, "kernel: reduce.<path> (<kernel>: ...)" (the path alone when it has no
// kernel call: none, zeros, segments).
std::string described_path(const char* description) {
  const char* k = std::strstr(description, "kernel: ");
  if (k != nullptr && std::strncmp(k + 8, "reduce.", 7) == 0) {
    const char* end = k + 8;
    while (*end != '\0' && *end != ' ' && *end != '\n') ++end;
    if (std::strncmp(end, " (reduce.", 9) != 0) return std::string(k + 8, end);  // none, zeros, segments
    const char* kernel = end + 2;  // "<path> (<kernel>: <layout>)"
    const char* colon = std::strchr(kernel, ':');
    return colon ? std::string(kernel, colon) : std::string(k + 8, end);
  }
  const char* open = k ? std::strchr(k, '[') : nullptr;
  const char* close = open ? std::strchr(open, ']') : nullptr;
  return close ? std::string(open + 1, close) : std::string(k ? "none" : "?");
}

void count_path(const char* description) { ++path_counts()[described_path(description)]; }

// What the inputs reached beyond the executor paths (printed with them): successful calls per
// operation, entry point and kind of input, and the documented errors of the rarer kinds.
enum Feature : int {
  kTileOk, kBroadcastToOk, kExpandOk, kRepeatOk, kRepeatCountsOk, kRepeatNoAxisOk, kExOk, kClampOk,
  kOptionsPartOk, kOptionsSizeErr, kThreadsBigOk, kArenaBigOk, kNtNeverOk, kAutoStreamOk, kRegionOk, kRegionPartOk,
  kRegionWholeOk, kRegionErr, kCppRegionOk, kCppAllocOk, kDlpackOk, kDlpackErr, kDlpackShapeOk, kNullArgErr,
  kManyDimsOk, kTooManyDimsErr, kBigItemOk, kOverflowErr, kOutput1MiBOk, kAlloc32MiBOk, kOutOfMemoryErr,
  kNoSourceCalls, kTileBackwardOk, kSumToShapeOk, kRepeatBackwardOk, kRepeatBackwardCountsOk, kReduceFloatOk,
  kReduceIntOk, kAccumulateOk, kReduceThreadedOk, kReduceRejected, kReduceDlpackOk, kReduceDlpackErr, kFeatures
};
constexpr const char* kFeatureNames[kFeatures] = {
    "tile_ok", "broadcast_to_ok", "expand_ok", "repeat_ok", "repeat_counts_ok", "repeat_no_axis_ok", "ex_ok",
    "clamp_to_zero_ok", "options_partial_size_ok", "options_size_rejected", "max_threads_threaded_ok",
    "arena4_threaded_ok", "nontemporal_never_ok", "auto_streaming_ok", "region_ok", "region_part_ok",
    "region_whole_ok", "region_rejected", "cpp_region_ok", "cpp_alloc_ok", "dlpack_ok", "dlpack_rejected",
    "dlpack_shape_ok", "null_pointer_rejected", "ndim_over_6_ok", "ndim_over_64_rejected", "itemsize_over_40_ok",
    "overflow_rejected", "output_over_1MiB_ok", "alloc_32MiB_ok", "out_of_memory_rejected", "calls_without_source",
    "tile_backward_ok", "sum_to_shape_ok", "repeat_backward_ok", "repeat_backward_counts_ok", "reduce_float_ok",
    "reduce_int_ok", "accumulate_ok", "reduce_threaded_ok", "reduce_rejected", "reduce_dlpack_ok",
    "reduce_dlpack_rejected"};
long g_features[kFeatures] = {};
void note(Feature f) { ++g_features[f]; }

// The executor paths reached: with the executed-path counters (-Dpath_counters=true, as tests/run
// builds it), the ranges and kernel calls the kernels counted, over every target; the paths that
// run no kernel of their own — "none" and "reduce.zeros" (an empty output, a zero extent: nothing
// to add) and "reduce.segments" (whose sub-problems the kernels count under their own paths) —
// from the plans that executed successfully. Without the counters, every path from the plans.
std::map<std::string, long> reached_paths() {
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
  namespace td = tessera::detail;
  std::map<std::string, long> reached;
  const auto all_targets = [](const auto& count) {
    uint64_t n = 0;
    for (int bit = 0; bit < 63; ++bit) n += count(int64_t{1} << bit);
    return static_cast<long>(n);
  };
  for (int i = 0; i < td::kPathCount; ++i)
    if (const long n = all_targets([&](int64_t t) { return td::executed_path_count(t, i); }); n > 0)
      reached[td::kPathInfo[i].name] = n;
  for (int i = 0; i < td::kReduceKernelCount; ++i)
    if (const long n = all_targets([&](int64_t t) { return td::executed_reduce_kernel_count(t, i); }); n > 0)
      reached[td::kReduceKernels[i].name] = n;
  for (const char* planned : {"none", "reduce.none", "reduce.zeros", "reduce.segments"})
    if (const auto it = path_counts().find(planned); it != path_counts().end()) reached[planned] = it->second;
  return reached;
#else
  return path_counts();
#endif
}

void print_paths() {
  const std::map<std::string, long> reached = reached_paths();
  std::string line = "fuzz_tile: executor paths reached:";
  for (const auto& [path, n] : reached) line += " " + path + "=" + std::to_string(n);
  std::string planned = "fuzz_tile: executor paths planned (plans executed successfully):";
  for (const auto& [path, n] : path_counts()) planned += " " + path + "=" + std::to_string(n);
  std::string listed = "fuzz_tile: executor paths listed:", missed = "fuzz_tile: executor paths not reached:";
  for (const std::string& path : tessera::Plan::kernel_paths()) {
    listed += " " + path;
    if (reached.count(path) == 0) missed += " " + path;
  }
  std::string features = "fuzz_tile: features reached:";
  for (int f = 0; f < kFeatures; ++f) features += std::string(" ") + kFeatureNames[f] + "=" + std::to_string(g_features[f]);
  std::string counted = "fuzz_tile: executed-path counters: ";
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
  // The sub-kernels (lib/kernels/path_counters.hpp, Variant) the kernels ran, over every target,
  // and those the dispatched target's code has but that did not run.
  namespace td = tessera::detail;
  counted += "on";
  std::string variants = "fuzz_tile: sub-kernels reached:", unreached = "fuzz_tile: sub-kernels not reached:";
  const uint64_t compiled = td::compiled_variants();
  for (int v = 0; v < td::kVariantCount; ++v) {
    uint64_t n = 0;
    for (int bit = 0; bit < 63; ++bit) n += td::executed_variant_count(int64_t{1} << bit, v);
    if (n > 0) variants += std::string(" ") + td::kVariantNames[v] + "=" + std::to_string(n);
    else if ((compiled >> v) & 1) unreached += std::string(" ") + td::kVariantNames[v];
  }
  std::fprintf(stderr, "%s\n%s\n", variants.c_str(), unreached.c_str());
#else
  counted += "off (paths from the plans)";
#endif
  std::fprintf(stderr, "%s\n%s\n%s\n%s\n%s\n%s\n", counted.c_str(), line.c_str(), planned.c_str(), listed.c_str(),
               missed.c_str(), features.c_str());
}

uint32_t fnv1a(const uint8_t* data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  return h;
}

tbb::task_arena& arena4() {
  static auto* arena = new tbb::task_arena(4);  // never destroyed
  return *arena;
}

// Region values for output axis extent `ext` (see the [region] bytes).
int64_t region_start(uint8_t b, int64_t ext) {
  const int k = (b >> 2) % 8;
  static constexpr int64_t kSpecial[8] = {-1, -7, kInt64Min, kInt64Max, int64_t{1} << 40, 3, 0, 0};
  switch (b % 4) {
    case 0: return 0;
    case 1: return k;                   // may pass the end
    case 2: return ext - 1 - k % 4;     // near the end (negative on short axes)
    default: return k == 6 ? ext : k == 7 ? ext / 2 : kSpecial[k];
  }
}

int64_t region_extent(uint8_t b, int64_t ext, int64_t start) {
  const int k = (b >> 2) % 8;
  static constexpr int64_t kSpecial[8] = {-1, 0, kInt64Max, kInt64Min, int64_t{1} << 40, 2, 0, 0};
  switch (b % 4) {
    case 0: return start >= 0 && start <= ext ? ext - start : 1;  // the rest of the axis: all of it from 0
    case 1: return k;                                            // may pass the end
    case 2: return 1;
    default: return k == 6 ? ext : k == 7 ? ext / 2 + 1 : kSpecial[k];
  }
}


// One region call: tessera_plan_execute_region, or Plan::execute_region of a C++ plan.
using RegionCall = std::function<tessera_status(const int64_t* start, const int64_t* extent, void* dst, size_t bytes)>;

// Runs `call` (`api`; plan_ok false: a NULL plan, which must be rejected; `ok` is noted on
// success) for the region the
// [region] bytes pick on the output `m` describes, and checks it against the reference output's
// box. `first`: the source's element (0, ..., 0), NULL where the source was not allocated;
// `want`: the reference output, if there is one.
void check_region(const Case& c, const char* api, Feature ok, bool plan_ok, const RegionCall& call, const Model& m,
                  const void* src_ptr, const unsigned char* first, const std::vector<unsigned char>& want, int64_t cap) {
  const int n = m.out_ndim;
  int64_t start[kCap], extent[kCap];
  bool bad = false, empty = false;
  for (int i = 0; i < n; ++i) {
    start[i] = region_start(c.region_codes[2 * i], m.out_shape[i]);
    extent[i] = region_extent(c.region_codes[2 * i + 1], m.out_shape[i], start[i]);
    bad = bad || start[i] < 0 || extent[i] < 0 || static_cast<__int128>(start[i]) + extent[i] > m.out_shape[i];
    empty = empty || extent[i] == 0;
  }
  int64_t count = bad || empty ? 0 : 1;
  for (int i = 0; i < n && count > 0; ++i) count *= extent[i];  // at most the output's count: no overflow
  const size_t isz = c.itemsize;
  const size_t rbytes = static_cast<size_t>(count) * isz;
  // The expected region is taken from the reference output by rows where there is one (then at
  // most 1 MiB), else computed from the definition element by element (at most 64 KiB).
  const int64_t rcap = want.empty() ? kMaxBytes : std::min(cap, kMaxBigBytes);
  const DstPlan rp = dst_plan(c.region_mode, !bad, !bad && static_cast<int64_t>(rbytes) <= rcap, rbytes, c.slack);
  const int64_t* start_arg = c.null_arg == kNullRegion && !c.null_alt ? nullptr : start;
  const int64_t* extent_arg = c.null_arg == kNullRegion && c.null_alt ? nullptr : extent;
  tessera_status want_st = TESSERA_OK;
  if (!plan_ok || ((start_arg == nullptr || extent_arg == nullptr) && n > 0) || bad ||
      (src_ptr == nullptr && m.input_nonempty) || (rp.null_dst && rbytes > 0))
    want_st = TESSERA_INVALID_ARGUMENT;
  else if (rp.dst_bytes < rbytes)
    want_st = TESSERA_BUFFER_TOO_SMALL;
  if (want_st == TESSERA_OK && rbytes > 0 && first == nullptr) return;  // it would read a source not allocated
  std::vector<unsigned char> rwant;
  if (want_st == TESSERA_OK && rbytes > 0) {
    rwant.resize(rbytes);
    int64_t j[kCap] = {};  // index in the region
    if (!want.empty()) {   // rows of the reference output, whose innermost axis is contiguous
      int64_t ostride[kCap];  // the output's C-contiguous element strides (it was allocated: no overflow)
      for (int i = n - 1; i >= 0; --i) ostride[i] = i == n - 1 ? 1 : ostride[i + 1] * m.out_shape[i + 1];
      const size_t row = (n > 0 ? static_cast<size_t>(extent[n - 1]) : 1) * isz;
      for (size_t at = 0; at < rbytes; at += row) {
        int64_t flat = 0;
        for (int i = 0; i < n; ++i) flat += (start[i] + j[i]) * ostride[i];
        std::memcpy(rwant.data() + at, want.data() + flat * static_cast<int64_t>(isz), row);
        for (int i = n - 2; i >= 0; --i) {
          if (++j[i] < extent[i]) break;
          j[i] = 0;
        }
      }
    } else {  // element by element from the definition (source_offset)
      int64_t index[kCap];
      for (size_t at = 0; at < rbytes; at += isz) {
        for (int i = 0; i < n; ++i) index[i] = start[i] + j[i];
        std::memcpy(rwant.data() + at, first + source_offset(c, m, index), isz);
        for (int i = n - 1; i >= 0; --i) {
          if (++j[i] < extent[i]) break;
          j[i] = 0;
        }
      }
    }
  }
  Dest dst(c.dst_misalign, rp.capacity);
  const tessera_status st = call(start_arg, extent_arg, rp.null_dst ? nullptr : dst.data(), rp.dst_bytes);
  expect_status(c, api, st, want_st);
  check_output(c, api, st, dst, rwant, rbytes);
  if (st != TESSERA_OK) note(kRegionErr);
  else if (rbytes > 0) note(rbytes == static_cast<size_t>(m.output_bytes) ? kRegionWholeOk : kRegionPartOk);
  if (st == TESSERA_OK) note(ok);
  if (first == nullptr) note(kNoSourceCalls);
}

// Runs a C++ call and returns the status class of what it threw (TESSERA_OK if nothing).
template <class F>
tessera_status cpp_status(const Case& c, const char* api, F&& f) {
  try {
    f();
    return TESSERA_OK;
  } catch (const tessera::Error& e) {
    return static_cast<tessera_status>(e.status());
  } catch (const std::bad_alloc&) {
    return TESSERA_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    fail(c, api, std::string("threw a non-tessera exception: ") + e.what());
  }
}

#if TESSERA_FUZZ_DLPACK
// The DLPack calls for the same problem as DLTensors (element strides, byte_offset; default
// options, as these calls take none): tessera_tile_dlpack_shape and tessera_tile_dlpack,
// tessera_broadcast_to_dlpack (whose target is dst's shape), tessera_expand_dlpack,
// tessera_repeat_dlpack. The [dl] byte picks the dtype's form and at most one fault. `first`: the
// source's element (0, ..., 0) (the poisoned stand-in where `base`, the start of the allocated
// source, is NULL). `args_ok`: the C calls' own argument checks pass.
void check_dlpack(const Case& c, const Model& md, bool args_ok, bool list_ptr_null, const unsigned char* first,
                  const unsigned char* base, const std::vector<unsigned char>& want, int64_t cap) {
  const uint8_t d = c.dl;
  const unsigned fault = (d >> 2) & 7;
  const size_t isz = c.itemsize;
  const int64_t* shape_ptr = c.null_arg == kNullShape ? nullptr : c.shape;
  const int64_t* list_ptr = list_ptr_null ? nullptr : c.op == kRepeat ? c.counts.data() : c.reps;
  const auto c_status = [&](tessera_status s) { return args_ok ? s : TESSERA_INVALID_ARGUMENT; };

  // dtype: itemsize = bits * lanes / 8, as one wide lane, byte lanes or 16-bit lanes.
  DLDataType dtype{static_cast<uint8_t>(c.slack % 7), 8, 1};
  const bool dtype_ok = (d & 3) != 3 && isz > 0;
  bool representable = true;
  if (!dtype_ok) {
    dtype.bits = (c.slack & 1) ? 0 : 4;  // 0 or 4 bits per element: not a positive whole number of bytes
  } else {
    const auto fits_lanes = [&](size_t k) { return isz % k == 0 && isz / k <= 65535; };
    size_t m = 0;
    if ((d & 3) == 0)
      for (size_t k = 31; k >= 1 && m == 0; --k)
        if (fits_lanes(k)) m = k;
    if ((d & 3) == 2 && fits_lanes(2)) m = 2;
    for (size_t k = 1; k <= 31 && m == 0; ++k)
      if (fits_lanes(k)) m = k;
    representable = m > 0;
    if (representable) {
      dtype.bits = static_cast<uint8_t>(8 * m);
      dtype.lanes = static_cast<uint16_t>(isz / m);
    }
  }

  // tessera_tile_dlpack_shape reads only src's ndim and shape.
  if (c.op == kTile) {
    DLTensor s{};
    s.device = {kDLCPU, 0};
    s.ndim = c.ndim;
    s.shape = const_cast<int64_t*>(shape_ptr);
    s.dtype = dtype;
    int out_ndim = -7;
    int64_t out_shape[TESSERA_MAX_NDIM];
    int* ndim_arg = c.null_arg == kNullOutNdim ? nullptr : &out_ndim;
    int64_t* shape_arg = c.null_arg == kNullOutShape ? nullptr : out_shape;
    const bool null_t = c.null_arg == kNullTensor;
    const tessera_status want_st =
        null_t || !ndim_arg || !shape_arg ? TESSERA_INVALID_ARGUMENT : c_status(md.shape_status);
    const tessera_status st = tessera_tile_dlpack_shape(null_t ? nullptr : &s, c.nreps, list_ptr, ndim_arg, shape_arg);
    expect_status(c, "tessera_tile_dlpack_shape", st, want_st);
    if (st == TESSERA_OK) note(kDlpackShapeOk);
    if (st == TESSERA_OK && (out_ndim != md.out_ndim || !std::equal(out_shape, out_shape + out_ndim, md.out_shape)))
      fail(c, "tessera_tile_dlpack_shape", "shape " + list(out_shape, out_ndim > 0 ? out_ndim : 0) + ", model " +
                                               list(md.out_shape, md.out_ndim));
  }
  if (!representable) return;

  // Element strides: DLPack can say the case's byte strides only where they are whole elements.
  int64_t el[kCap] = {};
  bool whole = true;
  if (!c.null_strides && dtype_ok)
    for (int i = 0; i < c.naxes; ++i) {
      whole = whole && c.strides[i] % static_cast<int64_t>(isz) == 0;
      el[i] = c.strides[i] / static_cast<int64_t>(isz);
    }
  const bool stride_overflow = (d & 128) && !c.null_strides && c.naxes > 0 && isz >= 2 && dtype_ok;
  if (stride_overflow) el[0] = kInt64Max / static_cast<int64_t>(isz) + 1;  // times isz: past INT64_MAX

  // The status, in the order the DLPack calls check: pointers, devices, dtypes, src's shape, the
  // call's own list (broadcast_to: dst's shape), stride conversion, planning, dst's shape and
  // strides, the data pointers.
  const bool null_src_t = c.null_arg == kNullTensor && !c.null_alt;
  const bool null_dst_t = c.null_arg == kNullTensor && c.null_alt;
  const bool dst_data_null = c.dst_mode == kNullDst;
  const bool pre_invalid = null_src_t || null_dst_t || fault == kSrcDevice || fault == kDstDevice || !dtype_ok ||
                           fault == kDtypeMismatch || !args_ok;
  tessera_status want_st = pre_invalid ? TESSERA_INVALID_ARGUMENT : stride_overflow ? TESSERA_OVERFLOW : md.plan_status;
  // An output that would really be written must fit the cap and have its source (as the case
  // describes it): else dst's shape is made wrong, which must be refused before anything is read.
  const bool writable = md.output_bytes <= cap && base != nullptr && whole;
  const bool forced = want_st == TESSERA_OK && md.output_bytes > 0 && !dst_data_null && !writable;
  bool shape_fault = fault == kDstShape || forced;
  int64_t dshape[kCap + 1] = {}, dstr[kCap + 1] = {};
  int dndim = 0;
  Model mb;  // broadcast_to: the model of the target dst's shape says
  const Model* m = &md;
  if (c.op == kBroadcastTo) {
    // dst's shape is the target: one more leading axis of extent 1 (where the target is valid: the
    // same output) or, where the call must fail, a negative last extent (an ndim of -1 for a 0-d
    // or NULL target).
    dndim = c.nreps;
    for (int i = 0; i < c.nrepv; ++i) dshape[i] = c.reps[i];
    if (shape_fault && !pre_invalid) {
      if ((c.slack & 2) && !forced && md.plan_status == TESSERA_OK && !list_ptr_null) {  // valid: the same output
        for (int i = dndim; i > 0; --i) dshape[i] = dshape[i - 1];
        dshape[0] = 1;
        ++dndim;
      } else if (list_ptr_null || dndim == 0) {
        dndim = -1;
      } else {
        dshape[dndim - 1] = -1;
      }
    }
    if (!pre_invalid) {
      if (dndim < 0 || dndim > kCap) {
        want_st = TESSERA_INVALID_ARGUMENT;
      } else if (!stride_overflow) {
        Case c2 = c;
        c2.nreps = c2.nrepv = dndim;
        std::copy(dshape, dshape + dndim, c2.reps);
        mb = model(c2, true, false, c.null_strides, false);
        m = &mb;
        want_st = mb.plan_status;
      }
    }
    shape_fault = false;  // (any fault is in the model now)
  } else {
    dndim = md.shape_status == TESSERA_OK ? md.out_ndim : c.naxes;
    for (int i = 0; i < dndim; ++i) dshape[i] = md.shape_status == TESSERA_OK ? md.out_shape[i] : 1;
    if (shape_fault) {
      if ((c.slack & 2) || dndim == 0) {  // one more (leading) axis
        for (int i = dndim; i > 0; --i) dshape[i] = dshape[i - 1];
        dshape[0] = 1;
        ++dndim;
      } else {  // the last extent off by one
        dshape[dndim - 1] += dshape[dndim - 1] < kInt64Max ? 1 : -1;
      }
    }
  }
  const int sdim = std::clamp(dndim, 0, kCap + 1);
  const size_t dl_bytes = want_st == TESSERA_OK ? static_cast<size_t>(m->output_bytes) : 0;
  for (int i = sdim - 1; i >= 0; --i)  // compact element strides (saturated where dst is refused anyway)
    dstr[i] = i == sdim - 1 ? 1 : sat_mul(dstr[i + 1], std::max<int64_t>(dshape[i + 1], 1), kInt64Max);
  bool noncompact = false;
  if ((d & 64) && dl_bytes > 0)
    for (int i = 0; i < sdim && !noncompact; ++i)
      if (dshape[i] > 1) dstr[i] ^= 1, noncompact = true;
  if (want_st == TESSERA_OK) {
    if (shape_fault || noncompact) want_st = TESSERA_INVALID_ARGUMENT;
    else if (c.null_src && md.input_nonempty) want_st = TESSERA_INVALID_ARGUMENT;
    else if (dst_data_null && dl_bytes > 0) want_st = TESSERA_INVALID_ARGUMENT;
  }
  if (want_st == TESSERA_OK && dl_bytes > 0 && !writable) fail(c, "model", "a DLPack call would read or write out of bounds");

  Dest dst(c.dst_misalign, want_st == TESSERA_OK ? dl_bytes : kSmallCapacity);
  unsigned char* sbase = const_cast<unsigned char*>(base != nullptr ? base : first - 128);
  DLTensor s{};
  s.data = c.null_src ? nullptr : sbase;
  s.byte_offset = static_cast<uint64_t>(first - sbase);
  s.device = {fault == kSrcDevice ? kDLCUDA : kDLCPU, 0};
  s.ndim = c.ndim;
  s.shape = const_cast<int64_t*>(shape_ptr);
  s.dtype = dtype;
  s.strides = c.null_strides ? nullptr : el;
  DLTensor t{};
  t.data = dst_data_null ? nullptr : dst.buf.get();
  t.byte_offset = c.dst_misalign;
  t.device = {fault == kDstDevice ? kDLOpenCL : kDLCPU, 0};
  t.ndim = dndim;
  t.shape = c.op == kBroadcastTo && list_ptr_null ? nullptr : dshape;
  t.dtype = dtype;
  if (fault == kDtypeMismatch) t.dtype.code = static_cast<uint8_t>(t.dtype.code ^ 1);
  t.strides = (d & (32 | 64)) ? dstr : nullptr;
  const std::vector<unsigned char> none;
  const std::vector<unsigned char>& dwant = want_st == TESSERA_OK ? want : none;
  if (dwant.size() != (want_st == TESSERA_OK ? dl_bytes : 0)) fail(c, "DLPack", "no reference output");
  const DLTensor* sp = null_src_t ? nullptr : &s;
  DLTensor* tp = null_dst_t ? nullptr : &t;
  tessera_status st = TESSERA_OK;
  const char* api = "";
  switch (c.op) {
    case kTile: api = "tessera_tile_dlpack", st = tessera_tile_dlpack(sp, c.nreps, list_ptr, tp); break;
    case kBroadcastTo: api = "tessera_broadcast_to_dlpack", st = tessera_broadcast_to_dlpack(sp, tp); break;
    case kExpand: api = "tessera_expand_dlpack", st = tessera_expand_dlpack(sp, c.nreps, list_ptr, tp); break;
    default:
      api = "tessera_repeat_dlpack";
      st = tessera_repeat_dlpack(sp, c.nrepeats, list_ptr, c.has_axis ? c.axis : TESSERA_AXIS_NONE, tp);
      break;
  }
  expect_status(c, api, st, want_st);
  check_output(c, api, st, dst, dwant, want_st == TESSERA_OK ? dl_bytes : 0);
  note(st == TESSERA_OK ? kDlpackOk : kDlpackErr);
}
#endif

// ---- The reductions ------------------------------------------------------------------------
// tile_backward, sum_to_shape and repeat_backward: the gradient (the source, strided as above)
// summed into a C-contiguous result of the forward input's shape (tile_backward, repeat_backward)
// or of the target (sum_to_shape). Checked like the family: the status against reduce_model (the
// documented rules in the planner's order), the result against sums computed here from the
// definitions, the result untouched on rejection, the sentinel after it always.
//
// Values: integer gradients are the source's byte pattern (any bits; the sums wrap modulo 2^bits,
// exact in any order). Floating-point gradients (strides in whole elements) hold small integers
// in [-8, 8] (each real or imaginary part), and the result's prior contents too: every partial sum
// is an integer of at most 2^23 in magnitude (at most kMaxBigGradElems addends), exact in every
// accumulator (float32 for float16 / bfloat16), so the result is the exact sum (plus the prior
// value under accumulate) rounded once to the element type, to nearest even: written here from the
// IEEE formats (ieee_from_int), bit for bit.

// The forward operation of a tile_backward / repeat_backward case for A of `shape` (ndim axes):
// a tile or repeat case of 1-byte elements, C-contiguous.
Case forward_case(const Case& c, const int64_t* shape, int ndim) {
  Case f;
  f.op = c.rop == kTileBackward ? kTile : kRepeat;
  f.ndim = ndim;
  f.naxes = std::clamp(ndim, 0, kCap);
  std::copy(shape, shape + f.naxes, f.shape);
  f.itemsize = 1;
  f.null_strides = true;
  if (c.rop == kTileBackward) {
    f.nreps = c.nreps;
    f.nrepv = c.nrepv;
    std::copy(c.reps, c.reps + c.nrepv, f.reps);
  } else {
    f.has_axis = c.has_axis;
    f.axis = c.axis;
    f.nrepeats = c.nrepeats;
    f.counts = c.counts;
  }
  return f;
}

// tile_backward, repeat_backward: the gradient's shape is the forward output's (negative reps
// and counts clamped to 0, so that it is the right one under clamp_to_zero too); where the forward
// operation fails, A's shape (the call fails before looking at it). With grad_fault, one more
// leading axis of extent 1 (slack bit 1, or a 0-d gradient) or the last extent off by one.
void reduce_gradient_shape(Case& c) {
  int n = -1;
  int64_t g[kCap] = {};
  if (c.in_ndim >= 0 && c.in_ndim <= kCap && (c.rop != kTileBackward || (c.nreps >= 0 && c.nreps <= kCap))) {
    const Model f = model(forward_case(c, c.in_shape, c.in_ndim), true, true, true, false);
    if (f.shape_status == TESSERA_OK) {
      n = f.out_ndim;
      std::copy(f.out_shape, f.out_shape + n, g);
    }
  }
  if (n < 0) {
    n = c.in_naxes;
    std::copy(c.in_shape, c.in_shape + n, g);
  }
  if (c.grad_fault) {
    if (((c.slack & 2) && n < kCap) || n == 0) {
      for (int i = n; i > 0; --i) g[i] = g[i - 1];
      g[0] = 1;
      ++n;
    } else {
      g[n - 1] += g[n - 1] < kInt64Max ? 1 : -1;
    }
  }
  c.ndim = c.naxes = n;
  std::copy(g, g + n, c.shape);
}

// What a reduction's planning answers (reduce_planner.cpp, documented in tessera.h), for the
// result shape `res` (res_ndim axes, in range: A's shape or the target) and the gradient of the
// case, in the planner's order: the options; the forward operation's own checks (tile_shape,
// repeat_shape: the family's model); the dtype (the C calls check it before planning:
// dtype_first); the gradient's shape (as the family's input: a negative extent, then the element
// count — 0 if an extent is 0 — overflowing), with NULL strides its byte size; the result's
// shape (the same rules) and byte size; then the shapes against each other (sum_to_shape: at most the gradient's
// axes, each target extent the gradient's or 1; the others: the gradient's shape is the forward
// output's). Preconditions: the counts of the C calls are in range (else INVALID_ARGUMENT first).
struct RModel {
  tessera_status plan_status = TESSERA_OK;
  bool grad_nonempty = false;
  int64_t grad_count = 0;  // saturated at INT64_MAX
  int out_ndim = 0;
  int64_t out_shape[kCap] = {};
  int64_t out_count = 0, out_bytes = 0;  // valid when plan_status == OK
  Model fwd;                             // the forward operation's (repeat: the axis and counts)
};

RModel reduce_model(const Case& c, const int64_t* res, int res_ndim, bool valid_options, bool clamp,
                    bool dtype_first = true) {
  RModel m;
  bool empty = false;
  __int128 count = 1;
  for (int i = 0; i < c.naxes; ++i) {
    empty = empty || c.shape[i] <= 0;
    count = std::min<__int128>(count * std::max<int64_t>(c.shape[i], 0), kInt64Max);
  }
  m.grad_nonempty = !empty;
  m.grad_count = empty ? 0 : static_cast<int64_t>(count);
  m.out_ndim = res_ndim;
  std::copy(res, res + res_ndim, m.out_shape);
  const auto done = [&](tessera_status s) {
    m.plan_status = s;
    return m;
  };
  const bool bad_dtype = c.dtype < 0 || c.dtype >= kDtypes;
  if (!valid_options || (dtype_first && bad_dtype)) return done(TESSERA_INVALID_ARGUMENT);
  if (c.rop != kSumToShape) {
    m.fwd = model(forward_case(c, res, res_ndim), true, clamp, true, false);
    if (m.fwd.plan_status != TESSERA_OK) return done(m.fwd.plan_status);
  }
  if (bad_dtype) return done(TESSERA_INVALID_ARGUMENT);
  const int64_t isz = kDtypeBytes[c.dtype];
  // A shape's element count as the family counts it: negative extents first, then 0 if an
  // extent is 0, else the product (OVERFLOW past INT64_MAX).
  const auto count_of = [](const int64_t* shape, int n, int64_t* count) {
    for (int i = 0; i < n; ++i)
      if (shape[i] < 0) return TESSERA_INVALID_ARGUMENT;
    *count = 1;
    for (int i = 0; i < n; ++i)
      if (shape[i] == 0) return *count = 0, TESSERA_OK;
    for (int i = 0; i < n; ++i)
      if (__builtin_mul_overflow(*count, shape[i], count)) return TESSERA_OVERFLOW;
    return TESSERA_OK;
  };
  int64_t n = 0, k = 0;
  if (const tessera_status s = count_of(c.shape, c.ndim, &n); s != TESSERA_OK) return done(s);
  if (n > kInt64Max / isz) return done(TESSERA_OVERFLOW);  // the gradient's bytes, whatever its strides
  if (const tessera_status s = count_of(res, res_ndim, &k); s != TESSERA_OK) return done(s);
  if (k > kInt64Max / isz) return done(TESSERA_OVERFLOW);
  if (c.rop == kSumToShape) {
    if (res_ndim > c.ndim) return done(TESSERA_INVALID_ARGUMENT);
    for (int i = 0; i < c.ndim; ++i) {
      const int j = i - (c.ndim - res_ndim);
      const int64_t t = j >= 0 ? res[j] : 1;
      if (t != c.shape[i] && t != 1) return done(TESSERA_INVALID_ARGUMENT);
    }
  } else {
    if (c.ndim != m.fwd.out_ndim || !std::equal(c.shape, c.shape + c.ndim, m.fwd.out_shape))
      return done(TESSERA_INVALID_ARGUMENT);
  }
  m.out_count = k;
  m.out_bytes = k * isz;
  return m;
}

bool float_dtype(int dtype) { return dtype >= TESSERA_FLOAT32 && dtype <= TESSERA_COMPLEX128; }
int parts_of(int dtype) { return dtype == TESSERA_COMPLEX64 || dtype == TESSERA_COMPLEX128 ? 2 : 1; }

// The IEEE binary format with `mant` fraction bits and `ebits` exponent bits nearest to the
// integer v (ties to even; infinity past the largest finite value): its bits.
uint64_t ieee_from_int(int64_t v, int mant, int ebits) {
  const uint64_t sign = v < 0 ? uint64_t{1} << (mant + ebits) : 0;
  uint64_t a = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (a == 0) return 0;  // +0: an exact sum of 0 is +0 under round-to-nearest
  int e = 63 - __builtin_clzll(a);  // a in [2^e, 2^(e+1))
  uint64_t q;
  if (e <= mant) {
    q = a << (mant - e);
  } else {
    const int sh = e - mant;
    q = a >> sh;
    const uint64_t rem = a & ((uint64_t{1} << sh) - 1), half = uint64_t{1} << (sh - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    if (q >> (mant + 1)) {
      q >>= 1;
      ++e;
    }
  }
  const int bias = (1 << (ebits - 1)) - 1, emax_field = (1 << ebits) - 1;
  if (e + bias >= emax_field) return sign | (static_cast<uint64_t>(emax_field) << mant);
  return sign | (static_cast<uint64_t>(e + bias) << mant) | (q & ((uint64_t{1} << mant) - 1));
}

// One real part of a floating-point dtype holding the integer v (rounded as above).
void put_float(int dtype, int64_t v, unsigned char* out) {
  uint64_t bits = 0;
  size_t bytes = 0;
  switch (dtype) {
    case TESSERA_FLOAT32: case TESSERA_COMPLEX64: bits = ieee_from_int(v, 23, 8), bytes = 4; break;
    case TESSERA_FLOAT64: case TESSERA_COMPLEX128: bits = ieee_from_int(v, 52, 11), bytes = 8; break;
    case TESSERA_FLOAT16: bits = ieee_from_int(v, 10, 5), bytes = 2; break;
    default: bits = ieee_from_int(v, 7, 8), bytes = 2; break;  // bfloat16
  }
  std::memcpy(out, &bits, bytes);  // little-endian
}

// A small integer in [-8, 8] from an index (gradient values, prior result values).
int64_t small_value(uint64_t i, uint64_t salt) {
  uint64_t x = (i + salt) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return static_cast<int64_t>(x % 17) - 8;
}

// The result's destination: [poisoned misalignment][capacity bytes][sentinel], holding `init`
// before every call: the fuzzer's fill pattern, with small integers in the first `prior_bytes`
// for floating-point dtypes (accumulate adds to them).
struct RDest {
  std::unique_ptr<unsigned char[]> buf;
  size_t prefix = 0, capacity = 0;
  std::vector<unsigned char> init;
  RDest(const Case& c, size_t misalign, size_t cap, size_t prior_bytes)
      : buf(new unsigned char[misalign + cap + kSentinel]), prefix(misalign), capacity(cap) {
    FUZZ_POISON(buf.get(), prefix);
    init.assign(Dest::fill_pattern(), Dest::fill_pattern() + capacity + kSentinel);
    if (float_dtype(c.dtype)) {
      const size_t part = static_cast<size_t>(kDtypeBytes[c.dtype]) / static_cast<size_t>(parts_of(c.dtype));
      for (size_t k = 0; (k + 1) * part <= std::min(prior_bytes, capacity); ++k)
        put_float(c.dtype, small_value(k, 77), init.data() + k * part);
    }
    reset();
  }
  ~RDest() { FUZZ_UNPOISON(buf.get(), prefix); }
  RDest(const RDest&) = delete;
  RDest& operator=(const RDest&) = delete;
  unsigned char* data() { return buf.get() + prefix; }
  void reset() { std::memcpy(data(), init.data(), init.size()); }
};

// After a call that returned `got` (already matched against the expectation): rejected, the
// destination as it was; accepted, `want` (nbytes) then the rest as it was.
void check_result(const Case& c, const char* api, tessera_status got, RDest& d, const std::vector<unsigned char>& want,
                  size_t nbytes) {
  const size_t from = got == TESSERA_OK ? nbytes : 0;
  if (got == TESSERA_OK) {
    if (want.size() != nbytes) fail(c, api, "succeeded where the model has no reference");
    if (nbytes > 0 && std::memcmp(d.data(), want.data(), nbytes) != 0) {
      size_t i = 0;
      while (d.data()[i] == want[i]) ++i;
      const size_t isz = c.itemsize;
      std::string got_hex, want_hex;
      for (size_t b = i / isz * isz; b < i / isz * isz + isz; ++b) {
        char h[8];
        std::snprintf(h, sizeof h, "%02x", d.data()[b]);
        got_hex = h + got_hex;
        std::snprintf(h, sizeof h, "%02x", want[b]);
        want_hex = h + want_hex;
      }
      fail(c, api, "result element " + std::to_string(i / isz) + " is 0x" + got_hex + ", reference 0x" + want_hex);
    }
  }
  if (std::memcmp(d.data() + from, d.init.data() + from, d.init.size() - from) != 0) {
    size_t i = from;
    while (d.data()[i] == d.init[i]) ++i;
    fail(c, api, std::string(got == TESSERA_OK ? "wrote past the result: byte " : "rejected call wrote byte ") +
                     std::to_string(i) + (i >= d.capacity ? " (sentinel)" : ""));
  }
}

// The sums of a reduction the model accepted, per result element and part, from the
// definitions: grad_out's element j adds into A's element (tile_backward) j % in_shape on the
// trailing axes; (sum_to_shape) j's trailing axes, 0 where the target has extent 1; (repeat_backward)
// j with the source index of j along the axis (or of the flattened A). Integers wrap modulo 2^64
// (cut to the element's bytes when written); floats are exact (small integers). `first`: the
// gradient's element (0, ..., 0); `vals`: floats, the value of each part of the source buffer
// from `data` on.
std::vector<uint64_t> reduce_sums(const Case& c, const RModel& m, const unsigned char* first, const unsigned char* data,
                                  const std::vector<int64_t>& vals) {
  const int parts = parts_of(c.dtype);
  const size_t part = c.itemsize / static_cast<size_t>(parts);
  const bool is_float = float_dtype(c.dtype);
  std::vector<uint64_t> sums(static_cast<size_t>(m.out_count * parts), 0);
  if (!m.grad_nonempty || m.out_count == 0) return sums;
  const int D = c.ndim, n = m.out_ndim;
  int64_t rstride[kCap];
  for (int k = n - 1; k >= 0; --k) rstride[k] = k == n - 1 ? 1 : rstride[k + 1] * m.out_shape[k + 1];
  int64_t j[kCap] = {};
  int64_t off = 0;  // bytes from first
  for (int64_t e = 0; e < m.grad_count; ++e) {
    int64_t o = 0;
    if (c.rop == kTileBackward) {
      for (int k = 0; k < n; ++k) o += j[k + D - n] % m.out_shape[k] * rstride[k];
    } else if (c.rop == kSumToShape) {
      for (int k = 0; k < n; ++k) o += (m.out_shape[k] == 1 ? 0 : j[k + D - n]) * rstride[k];
    } else if (m.fwd.axis >= 0) {
      for (int k = 0; k < n; ++k) o += (k == m.fwd.axis ? repeat_source(m.fwd, j[k]) : j[k]) * rstride[k];
    } else {
      o = repeat_source(m.fwd, j[0]);
    }
    for (int p = 0; p < parts; ++p) {
      const unsigned char* at = first + off + p * static_cast<int64_t>(part);
      uint64_t v = 0;
      if (is_float) v = static_cast<uint64_t>(vals[static_cast<size_t>(at - data) / part]);
      else std::memcpy(&v, at, part);  // little-endian
      sums[static_cast<size_t>(o * parts + p)] += v;
    }
    for (int k = D - 1; k >= 0; --k) {
      off += c.strides[k];
      if (++j[k] < c.shape[k]) break;
      off -= j[k] * c.strides[k];
      j[k] = 0;
    }
  }
  return sums;
}

// The result's bytes: the sums (plus, accumulating, the prior contents: RDest's) as the dtype.
std::vector<unsigned char> reduce_expected(const Case& c, const std::vector<uint64_t>& sums, bool accumulate) {
  const int parts = parts_of(c.dtype);
  const size_t part = c.itemsize / static_cast<size_t>(parts);
  std::vector<unsigned char> out(sums.size() * part);
  for (size_t k = 0; k < sums.size(); ++k) {
    if (float_dtype(c.dtype)) {
      const int64_t prior = accumulate ? small_value(k, 77) : 0;
      put_float(c.dtype, static_cast<int64_t>(sums[k]) + prior, out.data() + k * part);
    } else {
      uint64_t prior = 0;
      if (accumulate) std::memcpy(&prior, Dest::fill_pattern() + k * part, part);
      const uint64_t v = sums[k] + prior;
      std::memcpy(out.data() + k * part, &v, part);
    }
  }
  return out;
}

// A destination as DstMode `mode` hands it over for a result of `nbytes`: where the call must not
// run (a result over the cap, a gradient not allocated or too long to add up here), one too
// small, which must be refused before anything is read.
DstPlan reduce_dst_plan(unsigned mode, bool planned, bool out_fits, bool readable, size_t nbytes, size_t slack) {
  if (mode > kHugeClaim) mode = kExact;
  if (planned && nbytes > 0 && (!out_fits || !readable) && (mode == kExact || mode == kSlack || mode == kHugeClaim))
    mode = kShort;
  DstPlan d;
  switch (mode) {
    case kExact: d.capacity = d.dst_bytes = nbytes; break;
    case kSlack: d.capacity = d.dst_bytes = nbytes + slack; break;
    case kShort:
      if (!out_fits) d.capacity = d.dst_bytes = kSmallCapacity;
      else d.capacity = d.dst_bytes = nbytes > 0 ? nbytes - 1 - slack % nbytes : 0;
      break;
    case kZero: d.capacity = out_fits ? nbytes : kSmallCapacity; d.dst_bytes = 0; break;
    case kNullDst: d.null_dst = true; d.dst_bytes = nbytes; break;
    case kHugeClaim: d.capacity = nbytes; d.dst_bytes = std::numeric_limits<size_t>::max(); break;
  }
  return d;
}

#if TESSERA_FUZZ_DLPACK
// The DLPack dtype of each tessera_dtype, and types the reductions do not add.
const DLDataType kDlTypes[kDtypes] = {
    {kDLFloat, 32, 1},   {kDLFloat, 64, 1}, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1}, {kDLComplex, 64, 1},
    {kDLComplex, 128, 1}, {kDLInt, 8, 1},    {kDLInt, 16, 1},   {kDLInt, 32, 1},    {kDLInt, 64, 1},
    {kDLUInt, 8, 1},     {kDLUInt, 16, 1},  {kDLUInt, 32, 1},  {kDLUInt, 64, 1}};
const DLDataType kDlNotAdded[5] = {{6, 8, 1} /* kDLBool */, {kDLFloat, 32, 2}, {kDLFloat, 8, 1}, {kDLInt, 24, 1},
                                   {kDLOpaqueHandle, 64, 1}};

// The reduction's DLPack call (tessera_tile_backward_dlpack, tessera_sum_to_shape_dlpack,
// tessera_repeat_backward_dlpack; the case's options): the result's shape is the call's shape
// argument. The [dl] byte: bits 0-1 == 3 a dtype the reductions do not add (slack % 5 picks it;
// also for a dtype code that is not one), bits 2-4 one fault (DlFault; kDstShape: the result's
// shape with one more leading axis of extent 1 if slack bit 1 or 0-d, else its last extent off by
// one — valid or not, as reduce_model says), bit 5 result strides given (compact), bit 6 result
// strides not compact, bit 7 a gradient element stride whose byte stride overflows. Where the
// call would succeed but its gradient was not allocated (or is too long to add up here), or its
// result is over the cap, a NULL data pointer makes it fail first. `reference(m, accumulate)`: the
// expected bytes of a result the model accepts. Skipped where the gradient's byte strides are not
// whole elements (integer dtypes), which DLPack cannot say.
void check_reduce_dlpack(const Case& c, const tessera_options* opt_ptr, const Effective& eff, bool clamp,
                         bool readable, int64_t cap, const unsigned char* first, const unsigned char* base,
                         const int64_t* grad_shape_ptr, const int64_t* res_ptr, int res_ndim, const int64_t* list_ptr,
                         const std::function<std::vector<unsigned char>(const RModel&, bool)>& reference) {
  const uint8_t d = c.dl;
  const unsigned fault = (d >> 2) & 7;
  const bool valid_dtype = c.dtype >= 0 && c.dtype < kDtypes;
  const bool dtype_ok = valid_dtype && (d & 3) != 3;
  const DLDataType dtype = dtype_ok ? kDlTypes[c.dtype] : kDlNotAdded[c.slack % 5];
  const int64_t isz = static_cast<int64_t>(c.itemsize);
  int64_t el[kCap] = {};
  bool whole = true;
  if (!c.null_strides)
    for (int i = 0; i < c.naxes; ++i) {
      whole = whole && c.strides[i] % isz == 0;
      el[i] = c.strides[i] / isz;
    }
  const bool stride_overflow = (d & 128) && !c.null_strides && c.naxes > 0 && isz >= 2 && dtype_ok;
  if (stride_overflow) el[0] = kInt64Max / isz + 1;

  // The result's shape, with the fault.
  int rn = res_ndim;
  int64_t rshape[kCap + 1] = {};
  const bool res_null = res_ptr == nullptr && res_ndim > 0;
  if (!res_null && rn >= 0 && rn <= kCap) std::copy(res_ptr, res_ptr + rn, rshape);
  if (fault == kDstShape && !res_null && rn >= 0 && rn <= kCap) {
    if (((c.slack & 2) || rn == 0) && rn < kCap) {
      for (int i = rn; i > 0; --i) rshape[i] = rshape[i - 1];
      rshape[0] = 1;
      ++rn;
    } else if (rn > 0) {
      rshape[rn - 1] += rshape[rn - 1] < kInt64Max ? 1 : -1;
    }
  }
  const bool null_src_t = c.null_arg == kNullTensor && !c.null_alt;
  const bool null_dst_t = c.null_arg == kNullTensor && c.null_alt;
  const bool list_ok = c.rop == kTileBackward   ? c.nreps >= 0 && c.nreps <= kCap && (list_ptr || c.nreps == 0)
                       : c.rop == kRepeatBackward ? c.nrepeats >= 0 && (list_ptr || c.nrepeats == 0)
                                                  : true;
  const bool pre_invalid = null_src_t || null_dst_t || fault == kSrcDevice || fault == kDstDevice || !dtype_ok ||
                           fault == kDtypeMismatch || c.ndim < 0 || c.ndim > kCap ||
                           (grad_shape_ptr == nullptr && c.ndim > 0) || !list_ok || rn < 0 || rn > kCap || res_null;
  if (!whole && !pre_invalid) return;
  tessera_status want_st = pre_invalid       ? TESSERA_INVALID_ARGUMENT
                           : stride_overflow ? TESSERA_OVERFLOW
                                             : TESSERA_OK;
  RModel m;
  if (want_st == TESSERA_OK) {
    m = reduce_model(c, rshape, rn, eff.valid, clamp);
    want_st = m.plan_status;
  }
  const size_t nbytes = want_st == TESSERA_OK ? static_cast<size_t>(m.out_bytes) : 0;
  const bool out_fits = want_st == TESSERA_OK && m.out_bytes <= cap;
  bool grad_data_null = c.null_src, res_data_null = c.dst_mode == kNullDst;
  if (want_st == TESSERA_OK && nbytes > 0) {
    if (!out_fits) res_data_null = true;  // refused before anything is read or written
    else if (!readable && m.grad_nonempty) grad_data_null = true;
  }
  int64_t rstr[kCap + 1] = {};
  const int rdims = std::clamp(rn, 0, kCap + 1);
  for (int i = rdims - 1; i >= 0; --i)  // compact element strides (saturated where refused anyway)
    rstr[i] = i == rdims - 1 ? 1 : sat_mul(rstr[i + 1], std::max<int64_t>(rshape[i + 1], 1), kInt64Max);
  bool noncompact = false;
  if ((d & 64) && nbytes > 0)
    for (int i = 0; i < rdims && !noncompact; ++i)
      if (rshape[i] > 1) rstr[i] ^= 1, noncompact = true;
  if (want_st == TESSERA_OK) {
    if (noncompact) want_st = TESSERA_INVALID_ARGUMENT;
    else if (grad_data_null && m.grad_nonempty) want_st = TESSERA_INVALID_ARGUMENT;
    else if (res_data_null && nbytes > 0) want_st = TESSERA_INVALID_ARGUMENT;
  }
  const bool accumulate = opt_ptr != nullptr && eff.valid && eff.options.accumulate;
  std::vector<unsigned char> want;
  if (want_st == TESSERA_OK) want = reference(m, accumulate);
  RDest dst(c, c.dst_misalign, want_st == TESSERA_OK ? nbytes : kSmallCapacity, nbytes);
  unsigned char* sbase = const_cast<unsigned char*>(base != nullptr ? base : first - 128);
  DLTensor s{};
  s.data = grad_data_null ? nullptr : sbase;
  s.byte_offset = static_cast<uint64_t>(first - sbase);
  s.device = {fault == kSrcDevice ? kDLCUDA : kDLCPU, 0};
  s.ndim = c.ndim;
  s.shape = const_cast<int64_t*>(grad_shape_ptr);
  s.dtype = dtype;
  s.strides = c.null_strides ? nullptr : el;
  DLTensor t{};
  t.data = res_data_null ? nullptr : dst.buf.get();
  t.byte_offset = c.dst_misalign;
  t.device = {fault == kDstDevice ? kDLOpenCL : kDLCPU, 0};
  t.ndim = rn;
  t.shape = res_null ? nullptr : rshape;
  t.dtype = dtype;
  if (fault == kDtypeMismatch) t.dtype.code = static_cast<uint8_t>(t.dtype.code ^ 1);
  t.strides = (d & (32 | 64)) ? rstr : nullptr;
  const DLTensor* sp = null_src_t ? nullptr : &s;
  DLTensor* tp = null_dst_t ? nullptr : &t;
  tessera_status st = TESSERA_OK;
  const char* api = "";
  switch (c.rop) {
    case kTileBackward:
      api = "tessera_tile_backward_dlpack";
      st = tessera_tile_backward_dlpack(sp, c.nreps, list_ptr, tp, opt_ptr);
      break;
    case kSumToShape:
      api = "tessera_sum_to_shape_dlpack";
      st = tessera_sum_to_shape_dlpack(sp, tp, opt_ptr);
      break;
    default:
      api = "tessera_repeat_backward_dlpack";
      st = tessera_repeat_backward_dlpack(sp, c.nrepeats, list_ptr, c.has_axis ? c.axis : TESSERA_AXIS_NONE, tp,
                                          opt_ptr);
      break;
  }
  expect_status(c, api, st, want_st);
  check_result(c, api, st, dst, want, nbytes);
  note(st == TESSERA_OK ? kReduceDlpackOk : kReduceDlpackErr);
}
#endif

// One reduction input through every entry point of its operation: the C one-shot call (or its
// _ex form with the case's options), the C plan (tessera_plan_create_tile_backward, _sum_to_shape,
// _repeat_backward) + tessera_plan_output_bytes / _output_shape / _describe / _execute (twice) and
// tessera_plan_execute_region (refused for a reduction), a C++ plan with non-temporal stores
// forced, the C++ allocating call, and with DLPack the DLPack call.
// A plan's output bytes and shape (tessera_plan_output_bytes / _output_shape, with the case's
// NULL arguments) against the model's; true if the shape was read (every argument given) into
// out_ndim and out_shape (TESSERA_MAX_NDIM values).
template <class M>
bool check_plan_output(const Case& c, tessera_plan* use, size_t nbytes, const M& mo, int& out_ndim,
                       int64_t* out_shape) {
  if (tessera_plan_output_bytes(use) != (use ? nbytes : 0))
    fail(c, "tessera_plan_output_bytes", std::to_string(tessera_plan_output_bytes(use)) + " bytes, expected " +
                                             std::to_string(use ? nbytes : 0));
  out_ndim = -7;
  int* ndim_arg = c.null_arg == kNullOutNdim ? nullptr : &out_ndim;
  int64_t* shape_arg = c.null_arg == kNullOutShape ? nullptr : out_shape;
  const bool shape_args = use != nullptr && ndim_arg != nullptr && shape_arg != nullptr;
  expect_status(c, "tessera_plan_output_shape", tessera_plan_output_shape(use, ndim_arg, shape_arg),
                shape_args ? TESSERA_OK : TESSERA_INVALID_ARGUMENT);
  if (shape_args && (out_ndim != mo.out_ndim || !std::equal(out_shape, out_shape + out_ndim, mo.out_shape)))
    fail(c, "tessera_plan_output_shape", "shape " + list(out_shape, out_ndim > 0 ? out_ndim : 0) + ", model " +
                                             list(mo.out_shape, mo.out_ndim));
  return shape_args;
}

void run_reduction(const Case& c) {
  const bool sum = c.rop == kSumToShape, rep = c.rop == kRepeatBackward;
  const int res_ndim = sum ? c.nreps : c.in_ndim;  // the result's shape: A's, or the target
  const int64_t* grad_shape_ptr = c.null_arg == kNullShape && !(c.null_alt && !sum) ? nullptr : c.shape;
  const int64_t* in_shape_ptr = c.null_arg == kNullShape && c.null_alt && !sum ? nullptr : c.in_shape;
  const int64_t* list_ptr = c.null_arg == kNullReps ? nullptr : rep ? c.counts.data() : c.reps;
  const int64_t* res_ptr = sum ? list_ptr : in_shape_ptr;
  const int64_t list_count = rep ? c.nrepeats : c.nreps;
  const int axis_c = c.has_axis ? c.axis : TESSERA_AXIS_NONE;
  const std::optional<int> axis_cpp = c.has_axis ? std::optional<int>(c.axis) : std::nullopt;
  // The C calls' own checks (all INVALID_ARGUMENT, before the planning): counts in range, NULL
  // pointers with counts > 0, a negative nrepeats; the dtype and the options are the model's.
  const bool dims_ok = c.ndim >= 0 && c.ndim <= kCap && res_ndim >= 0 && res_ndim <= kCap &&
                       (c.rop != kTileBackward || (c.nreps >= 0 && c.nreps <= kCap));
  const bool args_ok = dims_ok && (grad_shape_ptr != nullptr || c.ndim == 0) &&
                       (res_ptr != nullptr || res_ndim == 0) && (list_ptr != nullptr || list_count <= 0) &&
                       (!rep || c.nrepeats >= 0);
  const bool ex = c.opt_mode != kPlain;
  tessera_options options = c.opt;
  const tessera_options* opt_ptr = c.opt_mode == kOptions ? &options : nullptr;
  const Effective eff = opt_ptr != nullptr ? effective(c.opt) : Effective{true, {}};
  const bool clamp = eff.valid && eff.options.negative_reps == tessera::NegativeReps::clamp_to_zero;
  const bool accumulate = eff.valid && eff.options.accumulate;
  // The C++ calls' options: the case's where valid (else the defaults), non-temporal stores forced
  // for the plan.
  tessera::Options cpp_options = eff.valid ? eff.options : tessera::Options();
  const tessera::DType dt = static_cast<tessera::DType>(c.dtype);
  RModel mo, mc;  // under the case's options (the C calls, DLPack), and the C++ calls'
  if (dims_ok) {
    const int64_t* res = sum ? c.reps : c.in_shape;
    mo = reduce_model(c, res, res_ndim, eff.valid, clamp);
    mc = reduce_model(c, res, res_ndim, true, clamp, /*dtype_first=*/false);
  } else {
    mo.plan_status = mc.plan_status = TESSERA_INVALID_ARGUMENT;
  }
  const auto c_status = [&](tessera_status s) { return args_ok ? s : TESSERA_INVALID_ARGUMENT; };

  // The gradient: allocated where its span is at most the cap, read where it has at most
  // kMaxGradElems elements (kMaxBigGradElems for big inputs). Floating-point values: small integers.
  const int64_t span_cap = c.big ? kMaxBigBytes : kMaxBytes;
  Source src;
  const bool have_src = dims_ok && make_source(c, &src, span_cap);
  const RModel& mg = mo;  // (the gradient's count does not depend on the options)
  const bool readable = have_src && mg.grad_count <= (c.big ? kMaxBigGradElems : kMaxGradElems);
  std::vector<int64_t> vals;
  if (have_src && float_dtype(c.dtype)) {
    const size_t part = c.itemsize / static_cast<size_t>(parts_of(c.dtype));
    unsigned char* data = src.buf.get() + src.prefix;
    vals.resize(src.bytes / part);
    for (size_t k = 0; k < vals.size(); ++k) {
      vals[k] = small_value(k, src.bytes);
      put_float(c.dtype, vals[k], data + k * part);
    }
  }
  const unsigned char* first = have_src ? src.first : poisoned_source();
  const unsigned char* data = have_src ? src.buf.get() + src.prefix : nullptr;
  const void* src_ptr = c.null_src ? nullptr : first;
  const int64_t* strides = c.null_strides ? nullptr : c.strides;

  // The result, where some call may succeed (both models agree where both accept).
  const bool planned = mo.plan_status == TESSERA_OK || mc.plan_status == TESSERA_OK;
  const RModel& mr = mo.plan_status == TESSERA_OK ? mo : mc;
  const size_t nbytes = planned ? static_cast<size_t>(mr.out_bytes) : 0;
  const int64_t cap = c.big ? kMaxBigBytes : kMaxBytes;
  const bool out_fits = planned && mr.out_bytes <= cap;
  const DstPlan dp = reduce_dst_plan(c.dst_mode, planned, out_fits, readable, nbytes, c.slack);
  RDest dst(c, c.dst_misalign, dp.capacity, nbytes);
  void* dst_ptr = dp.null_dst ? nullptr : dst.data();
  std::vector<uint64_t> sums;
  const bool have_sums = planned && out_fits && readable && nbytes > 0;
  if (have_sums) sums = reduce_sums(c, mr, first, data, vals);
  // The expected result of a call (accumulating or not): where it may succeed.
  const auto expected = [&](bool acc) {
    return have_sums ? reduce_expected(c, sums, acc) : std::vector<unsigned char>();
  };
  const std::vector<unsigned char> want_plain = expected(false), want_acc = expected(true);
  const auto exec_status = [&](const RModel& m) {
    return c_status(exec_expect(m.plan_status, c.null_src, m.grad_nonempty, dp.null_dst, dp.dst_bytes, nbytes));
  };
  // A call that succeeds with a non-empty result reads the gradient: only where it is readable.
  const auto may_call = [&](tessera_status want) {
    if (want == TESSERA_OK && nbytes > 0 && !have_sums) fail(c, "model", "a call would read an unreadable gradient");
    return true;
  };
  const auto noted = [&](tessera_status st, bool acc) {
    if (st != TESSERA_OK) {
      note(kReduceRejected);
      return;
    }
    note(static_cast<Feature>(kTileBackwardOk + c.rop));
    if (rep && mr.fwd.scalar < 0) note(kRepeatBackwardCountsOk);
    note(float_dtype(c.dtype) ? kReduceFloatOk : kReduceIntOk);
    if (acc) note(kAccumulateOk);
    if (mr.grad_count * static_cast<int64_t>(c.itemsize) >= 512 * 1024) note(kReduceThreadedOk);
  };

  // One-shot.
  {
    const tessera_status want_st = exec_status(mo);
    may_call(want_st);
    const bool acc = ex && accumulate;
    dst.reset();
    tessera_status st = TESSERA_OK;
    const char* api = "";
    switch (c.rop) {
      case kTileBackward:
        api = ex ? "tessera_tile_backward_ex" : "tessera_tile_backward";
        st = ex ? tessera_tile_backward_ex(src_ptr, c.ndim, grad_shape_ptr, strides, c.dtype, c.in_ndim, in_shape_ptr,
                                           c.nreps, list_ptr, dst_ptr, dp.dst_bytes, opt_ptr)
                : tessera_tile_backward(src_ptr, c.ndim, grad_shape_ptr, strides, c.dtype, c.in_ndim, in_shape_ptr,
                                        c.nreps, list_ptr, dst_ptr, dp.dst_bytes);
        break;
      case kSumToShape:
        api = ex ? "tessera_sum_to_shape_ex" : "tessera_sum_to_shape";
        st = ex ? tessera_sum_to_shape_ex(src_ptr, c.ndim, grad_shape_ptr, strides, c.dtype, c.nreps, list_ptr, dst_ptr,
                                          dp.dst_bytes, opt_ptr)
                : tessera_sum_to_shape(src_ptr, c.ndim, grad_shape_ptr, strides, c.dtype, c.nreps, list_ptr, dst_ptr,
                                       dp.dst_bytes);
        break;
      default:
        api = ex ? "tessera_repeat_backward_ex" : "tessera_repeat_backward";
        st = ex ? tessera_repeat_backward_ex(src_ptr, c.ndim, grad_shape_ptr, strides, c.dtype, c.in_ndim,
                                             in_shape_ptr, c.nrepeats, list_ptr, axis_c, dst_ptr, dp.dst_bytes, opt_ptr)
                : tessera_repeat_backward(src_ptr, c.ndim, grad_shape_ptr, strides, c.dtype, c.in_ndim, in_shape_ptr,
                                          c.nrepeats, list_ptr, axis_c, dst_ptr, dp.dst_bytes);
        break;
    }
    expect_status(c, api, st, want_st);
    check_result(c, api, st, dst, acc ? want_acc : want_plain, nbytes);
    noted(st, acc);
    if (!have_src) note(kNoSourceCalls);
  }

  // Plan.
  {
    tessera_plan* plan = nullptr;
    tessera_plan** out_plan = c.null_arg == kNullOutPtr ? nullptr : &plan;
    const tessera_status want_st = out_plan == nullptr ? TESSERA_INVALID_ARGUMENT : c_status(mo.plan_status);
    tessera_status st = TESSERA_OK;
    const char* api = "";
    switch (c.rop) {
      case kTileBackward:
        api = "tessera_plan_create_tile_backward";
        st = tessera_plan_create_tile_backward(c.ndim, grad_shape_ptr, strides, c.dtype, c.in_ndim, in_shape_ptr,
                                               c.nreps, list_ptr, opt_ptr, out_plan);
        break;
      case kSumToShape:
        api = "tessera_plan_create_sum_to_shape";
        st = tessera_plan_create_sum_to_shape(c.ndim, grad_shape_ptr, strides, c.dtype, c.nreps, list_ptr, opt_ptr,
                                              out_plan);
        break;
      default:
        api = "tessera_plan_create_repeat_backward";
        st = tessera_plan_create_repeat_backward(c.ndim, grad_shape_ptr, strides, c.dtype, c.in_ndim, in_shape_ptr,
                                                 c.nrepeats, list_ptr, axis_c, opt_ptr, out_plan);
        break;
    }
    expect_status(c, api, st, want_st);
    if (st != TESSERA_OK) {
      if (plan != nullptr) fail(c, api, "failed but handed out a plan");
    } else {
      std::unique_ptr<tessera_plan, void (*)(tessera_plan*)> owner(plan, tessera_plan_destroy);
      tessera_plan* use = c.null_arg == kNullPlan ? nullptr : plan;
      int out_ndim;
      int64_t out_shape[TESSERA_MAX_NDIM];
      check_plan_output(c, use, nbytes, mo, out_ndim, out_shape);
      const char* description = tessera_plan_describe(plan);
      const std::string opname = std::string(kROpNames[c.rop]) + " plan: ";
      if (std::strncmp(description, opname.c_str(), opname.size()) != 0)
        fail(c, "tessera_plan_describe", "description does not start with \"" + opname + "\"");
      const std::string path = described_path(description);
      static const std::vector<std::string> paths = tessera::Plan::kernel_paths();
      if (!(path == "reduce.none" && nbytes == 0) && std::find(paths.begin(), paths.end(), path) == paths.end())
        fail(c, "tessera_plan_describe", "path \"" + path + "\" is not listed by Plan::kernel_paths()");
      const tessera_status want_ex = use == nullptr ? TESSERA_INVALID_ARGUMENT : exec_status(mo);
      for (int run = 0; run < 2 && may_call(want_ex); ++run) {  // a plan is reusable
        dst.reset();
        const tessera_status ex_st = tessera_plan_execute(use, src_ptr, dst_ptr, dp.dst_bytes);
        expect_status(c, "tessera_plan_execute", ex_st, want_ex);
        check_result(c, "tessera_plan_execute", ex_st, dst, accumulate ? want_acc : want_plain, nbytes);
        if (ex_st == TESSERA_OK && run == 0) count_path(description);
      }
      if (c.region) {  // not available for a reduction's plan
        dst.reset();
        const int64_t zeros[kCap] = {};
        const tessera_status rs = tessera_plan_execute_region(use, src_ptr, zeros, mo.out_shape, dst_ptr, dp.dst_bytes);
        expect_status(c, "tessera_plan_execute_region", rs, TESSERA_INVALID_ARGUMENT);
        check_result(c, "tessera_plan_execute_region", rs, dst, want_plain, nbytes);
      }
    }
  }

  if (!args_ok) {  // (the C++ Dims and Repeats would take what the C calls refuse)
#if TESSERA_FUZZ_DLPACK
    if (c.dlpack)
      check_reduce_dlpack(c, opt_ptr, eff, clamp, readable, cap, first, have_src ? src.buf.get() : nullptr,
                          grad_shape_ptr, res_ptr, res_ndim, list_ptr,
                          [&](const RModel&, bool) { return std::vector<unsigned char>(); });
#endif
    return;
  }
  const auto cpp_shape = [&] { return tessera::Dims(c.shape, static_cast<size_t>(c.ndim)); };
  const auto cpp_strides = [&] {
    return c.null_strides ? tessera::Dims() : tessera::Dims(c.strides, static_cast<size_t>(c.ndim));
  };
  const auto cpp_res = [&] { return tessera::Dims(sum ? c.reps : c.in_shape, static_cast<size_t>(res_ndim)); };
  const tessera::Repeats counts(c.counts.data(), c.counts.size());

  // C++ plan, non-temporal stores forced.
  {
    tessera::Options o = cpp_options;
    o.nontemporal = tessera::NonTemporal::always;
    const tessera_status want_st =
        exec_expect(mc.plan_status, c.null_src, mc.grad_nonempty, dp.null_dst, dp.dst_bytes, nbytes);
    may_call(want_st);
    dst.reset();
    const tessera_status st = cpp_status(c, "tessera::Plan (reduction, nt)", [&] {
      const tessera::Plan plan =
          c.rop == kTileBackward ? tessera::Plan::tile_backward(cpp_shape(), cpp_strides(), dt, cpp_res(),
                                                                tessera::Dims(c.reps, static_cast<size_t>(c.nreps)), o)
          : sum ? tessera::Plan::sum_to_shape(cpp_shape(), cpp_strides(), dt, cpp_res(), o)
                : tessera::Plan::repeat_backward(cpp_shape(), cpp_strides(), dt, cpp_res(), counts, axis_cpp, o);
      if (!plan.is_reduction() || plan.nbytes() != nbytes || plan.itemsize() != c.itemsize)
        fail(c, "tessera::Plan (reduction, nt)", "is_reduction / nbytes / itemsize");
      const std::string path = plan.kernel_path();
      static const std::vector<std::string> paths = tessera::Plan::kernel_paths();
      if (!(path == "reduce.none" && nbytes == 0) && std::find(paths.begin(), paths.end(), path) == paths.end())
        fail(c, "tessera::Plan (reduction, nt)", "kernel_path() \"" + path + "\" is not listed by Plan::kernel_paths()");
      if (path != described_path(plan.describe().c_str()))
        fail(c, "tessera::Plan (reduction, nt)", "kernel_path() \"" + path + "\" but describe() names another");
      plan.execute(src_ptr, dst_ptr, dp.dst_bytes);
      if (want_st == TESSERA_OK) ++path_counts()[path];
    });
    if (st != want_st)
      fail(c, "tessera::Plan (reduction, nt)", std::string("status ") + status_name(st) + ", expected " +
                                                   status_name(want_st));
    check_result(c, "tessera::Plan (reduction, nt)", st, dst, o.accumulate ? want_acc : want_plain, nbytes);
    noted(st, o.accumulate);
  }

  // C++ allocating call (accumulate does not apply: a new array).
  {
    const char* api = "tessera allocating reduction";
    tessera_status want_st = mc.plan_status;
    if (want_st == TESSERA_OK && c.null_src && mc.grad_nonempty) want_st = TESSERA_INVALID_ARGUMENT;
    if (want_st != TESSERA_OK || nbytes == 0 || (out_fits && readable)) {
      tessera::Array a;
      const tessera_status st = cpp_status(c, api, [&] {
        const tessera::Dims shape = cpp_shape(), st_ = cpp_strides();
        switch (c.rop) {
          case kTileBackward:
            a = tessera::tile_backward(src_ptr, shape, st_, dt, cpp_res(),
                                       tessera::Dims(c.reps, static_cast<size_t>(c.nreps)), cpp_options);
            break;
          case kSumToShape: a = tessera::sum_to_shape(src_ptr, shape, st_, dt, cpp_res(), cpp_options); break;
          default: a = tessera::repeat_backward(src_ptr, shape, st_, dt, cpp_res(), counts, axis_cpp, cpp_options); break;
        }
      });
      if (st != want_st) fail(c, api, std::string("status ") + status_name(st) + ", expected " + status_name(want_st));
      if (st == TESSERA_OK) {
        if (a.nbytes() != nbytes || want_plain.size() != nbytes)
          fail(c, api, "nbytes " + std::to_string(a.nbytes()) + ", expected " + std::to_string(nbytes));
        if (nbytes > 0 && std::memcmp(a.data(), want_plain.data(), nbytes) != 0)
          fail(c, api, "the array differs from the reference");
        if (a.itemsize() != c.itemsize || a.ndim() != mc.out_ndim ||
            !std::equal(a.shape().begin(), a.shape().end(), mc.out_shape))
          fail(c, api, "shape " + list(a.shape().data(), a.ndim()) + ", model " + list(mc.out_shape, mc.out_ndim));
        note(kCppAllocOk);
      } else if (a.data() != nullptr || a.nbytes() != 0) {
        fail(c, api, "failed but returned an array");
      }
    }
  }

#if TESSERA_FUZZ_DLPACK
  if (c.dlpack)
    check_reduce_dlpack(c, opt_ptr, eff, clamp, readable, cap, first, have_src ? src.buf.get() : nullptr,
                        grad_shape_ptr, res_ptr, res_ndim, list_ptr, [&](const RModel& m, bool acc) {
                          // The case's result where the shapes agree; else its own sums.
                          if (m.out_ndim == mr.out_ndim && std::equal(m.out_shape, m.out_shape + m.out_ndim, mr.out_shape))
                            return acc ? want_acc : want_plain;
                          if (!(readable && m.out_bytes <= cap)) return std::vector<unsigned char>();
                          return reduce_expected(c, reduce_sums(c, m, first, data, vals), acc);
                        });
#endif
}

// Everything one input runs; see LLVMFuzzerTestOneInput.
void run(const Case& c) {
  if (c.rop >= 0) {
    run_reduction(c);
    return;
  }
  const bool repeat = c.op == kRepeat;
  const int64_t list_count = repeat ? c.nrepeats : c.nreps;
  const bool dims_ok = c.ndim >= 0 && c.ndim <= kCap && (repeat || (c.nreps >= 0 && c.nreps <= kCap));
  const int64_t* shape_ptr = c.null_arg == kNullShape ? nullptr : c.shape;
  const int64_t* list_ptr = c.null_arg == kNullReps ? nullptr : repeat ? c.counts.data() : c.reps;
  const bool list_null = c.null_arg == kNullReps && list_count > 0;
  const int axis_c = c.has_axis ? c.axis : TESSERA_AXIS_NONE;
  const std::optional<int> axis_cpp = c.has_axis ? std::optional<int>(c.axis) : std::nullopt;
  // Every C call (and the C++ Dims) rejects a count out of range or a NULL list with values first;
  // the C calls also a negative nrepeats (the C++ repeat calls reach the planner with it, and
  // with a NULL list of counts).
  const bool shape_ok = dims_ok && (shape_ptr != nullptr || c.ndim == 0);
  const bool args_ok = shape_ok && !list_null && list_count >= 0;
  const bool cpp_args_ok = repeat ? shape_ok : args_ok;
  const bool ex = c.opt_mode != kPlain;
  tessera_options options;  // the case's options over tessera_options_init's defaults
  options.sizeof_options = 1;
  options.max_threads = options.negative_reps = options.nontemporal = -99;
  tessera_options_init(&options);
  tessera_options_init(nullptr);  // a no-op
  if (options.sizeof_options != sizeof(tessera_options) || options.max_threads != 0 ||
      options.negative_reps != TESSERA_NEGATIVE_REPS_ERROR || options.nontemporal != TESSERA_NONTEMPORAL_AUTO)
    fail(c, "tessera_options_init", "not the documented defaults");
  options = c.opt;
  const tessera_options* opt_ptr = c.opt_mode == kOptions ? &options : nullptr;
  const Effective eff = opt_ptr != nullptr ? effective(c.opt) : Effective{true, {}};
  const bool size_ok = opt_ptr == nullptr || (c.opt.sizeof_options >= offsetof(tessera_options, max_threads) + sizeof(int) &&
                                              c.opt.sizeof_options <= sizeof(tessera_options));
  const bool clamp = opt_ptr != nullptr && eff.valid && eff.options.negative_reps == tessera::NegativeReps::clamp_to_zero;
  Model md, mo;  // under the default options (C++ plan, DLPack), under the case's options (C calls)
  if (dims_ok) {
    md = model(c, true, false, c.null_strides, list_null);
    mo = model(c, eff.valid, clamp, c.null_strides, list_null);
  } else {
    md.shape_status = md.plan_status = mo.shape_status = mo.plan_status = TESSERA_INVALID_ARGUMENT;
  }
  auto c_status = [&](tessera_status s) { return args_ok ? s : TESSERA_INVALID_ARGUMENT; };
  auto cpp_status_of = [&](tessera_status s) { return cpp_args_ok ? s : TESSERA_INVALID_ARGUMENT; };

  Source src;
  const bool have_src = make_source(c, &src);
  const unsigned char* first = have_src ? src.first : poisoned_source();
  const void* src_ptr = c.null_src ? nullptr : first;
  const int64_t* strides = c.null_strides ? nullptr : c.strides;
  // A call that succeeds with a non-empty output reads the source: only where it exists.
  auto may_call = [&](tessera_status expect, size_t out_bytes) {
    return have_src || expect != TESSERA_OK || out_bytes == 0;
  };

  // Output shape.
  {
    int out_ndim = -7;
    int64_t out_shape[TESSERA_MAX_NDIM];
    int* ndim_arg = c.null_arg == kNullOutNdim ? nullptr : &out_ndim;
    int64_t* shape_arg = c.null_arg == kNullOutShape ? nullptr : out_shape;
    const Model& m = c.op == kTile ? mo : md;  // only tile's shape call takes options
    const tessera_status want_st =
        ndim_arg == nullptr || shape_arg == nullptr ? TESSERA_INVALID_ARGUMENT : c_status(m.shape_status);
    tessera_status st = TESSERA_OK;
    const char* api = "";
    switch (c.op) {
      case kTile:
        api = ex ? "tessera_tile_shape_ex" : "tessera_tile_shape";
        st = ex ? tessera_tile_shape_ex(c.ndim, shape_ptr, c.nreps, list_ptr, opt_ptr, ndim_arg, shape_arg)
                : tessera_tile_shape(c.ndim, shape_ptr, c.nreps, list_ptr, ndim_arg, shape_arg);
        break;
      case kBroadcastTo:
        api = "tessera_broadcast_shape";
        st = tessera_broadcast_shape(c.ndim, shape_ptr, c.nreps, list_ptr, ndim_arg, shape_arg);
        break;
      case kExpand:
        api = "tessera_expand_shape";
        st = tessera_expand_shape(c.ndim, shape_ptr, c.nreps, list_ptr, ndim_arg, shape_arg);
        break;
      default:
        api = "tessera_repeat_shape";
        st = tessera_repeat_shape(c.ndim, shape_ptr, c.nrepeats, list_ptr, axis_c, ndim_arg, shape_arg);
        break;
    }
    expect_status(c, api, st, want_st);
    if (st == TESSERA_OK) {
      if (out_ndim != m.out_ndim || !std::equal(out_shape, out_shape + out_ndim, m.out_shape))
        fail(c, api, "shape " + list(out_shape, out_ndim > 0 ? out_ndim : 0) + ", model " + list(m.out_shape, m.out_ndim));
      if (c.op == kTile) {
        std::vector<int64_t> reps(c.reps, c.reps + c.nreps);
        for (int64_t& r : reps) r = clamp && r < 0 ? 0 : r;
        const ref::Shape want = ref::tile_shape({c.shape, c.shape + c.ndim}, reps);
        if (out_ndim != static_cast<int>(want.size()) || !std::equal(want.begin(), want.end(), out_shape))
          fail(c, api, "shape " + list(out_shape, out_ndim > 0 ? out_ndim : 0) + ", reference " +
                           list(want.data(), static_cast<int>(want.size())));
      }
    }
  }

  // The output both models agree on where both succeed (a negative rep clamped to 0 changes it).
  const bool planned = mo.plan_status == TESSERA_OK || md.plan_status == TESSERA_OK;
  const Model& mr = mo.plan_status == TESSERA_OK ? mo : md;
  const int64_t out_bytes = mr.output_bytes;
  const size_t nbytes = planned ? static_cast<size_t>(out_bytes) : 0;
  const bool huge = c.huge_asked && c.rare;
  const int64_t cap = huge ? kMaxHugeBytes : c.big ? kMaxBigBytes : kMaxBytes;
  const bool fits = planned && out_bytes <= cap && (out_bytes <= kMaxStreamBytes || out_bytes >= kAllocHugeBytes);
  const bool large = fits && out_bytes > kMaxBigBytes;           // fewer calls for these (time)
  const bool alloc_only = fits && out_bytes > kMaxStreamBytes;  // only the allocating calls (time)
  const DstPlan dp = dst_plan(c.dst_mode, planned, fits, nbytes, c.slack);
  const bool readable = !(c.null_src && md.input_nonempty);
  auto exec_status = [&](const Model& m) {
    return c_status(exec_expect(m.plan_status, c.null_src, m.input_nonempty, dp.null_dst, dp.dst_bytes, nbytes));
  };

  // The reference output, wherever some call may succeed (the allocating calls ignore dst). (Skipped
  // for empty outputs, whose other extents may be huge.)
  std::vector<unsigned char> want;
  if (fits && readable && nbytes > 0 && have_src) {
    if (c.op == kTile && out_bytes <= kMaxBytes) {
      want = ref::tile(src.first, {c.shape, c.shape + c.ndim}, {c.strides, c.strides + c.ndim}, c.itemsize,
                       {c.reps, c.reps + c.nreps});
    } else if (out_bytes <= kMaxBytes) {
      want.resize(nbytes);
      elementwise_reference(c, mr, src.first, want.data(), nbytes);
    } else {  // element by element is too slow for a megabyte under ASan
      want.resize(nbytes);
      if (block_reference(c, mr, src.first, want.data()) != nbytes) fail(c, "model", "block reference size");
    }
    if (want.size() != nbytes) fail(c, "model", "reference size disagrees with the model");
  }

  Dest dst(c.dst_misalign, dp.capacity);
  void* dst_ptr = dp.null_dst ? nullptr : dst.data();

  // One-shot.
  if (const tessera_status want_st = exec_status(mo); !alloc_only && may_call(want_st, nbytes)) {
    tessera_status st = TESSERA_OK;
    const char* api = "";
    switch (c.op) {
      case kTile:
        api = ex ? "tessera_tile_ex" : "tessera_tile";
        st = ex ? tessera_tile_ex(src_ptr, c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, dst_ptr,
                                  dp.dst_bytes, opt_ptr)
                : tessera_tile(src_ptr, c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, dst_ptr, dp.dst_bytes);
        break;
      case kBroadcastTo:
        api = ex ? "tessera_broadcast_to_ex" : "tessera_broadcast_to";
        st = ex ? tessera_broadcast_to_ex(src_ptr, c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, dst_ptr,
                                          dp.dst_bytes, opt_ptr)
                : tessera_broadcast_to(src_ptr, c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, dst_ptr,
                                       dp.dst_bytes);
        break;
      case kExpand:
        api = ex ? "tessera_expand_ex" : "tessera_expand";
        st = ex ? tessera_expand_ex(src_ptr, c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, dst_ptr,
                                    dp.dst_bytes, opt_ptr)
                : tessera_expand(src_ptr, c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, dst_ptr,
                                 dp.dst_bytes);
        break;
      default:
        api = ex ? "tessera_repeat_ex" : "tessera_repeat";
        st = ex ? tessera_repeat_ex(src_ptr, c.ndim, shape_ptr, strides, c.itemsize, c.nrepeats, list_ptr, axis_c,
                                    dst_ptr, dp.dst_bytes, opt_ptr)
                : tessera_repeat(src_ptr, c.ndim, shape_ptr, strides, c.itemsize, c.nrepeats, list_ptr, axis_c, dst_ptr,
                                 dp.dst_bytes);
        break;
    }
    expect_status(c, api, st, want_st);
    check_output(c, api, st, dst, want, nbytes);
    if (!have_src) note(kNoSourceCalls);
    if (st == TESSERA_OK) {
      note(static_cast<Feature>(kTileOk + c.op));
      if (repeat && mr.scalar < 0) note(kRepeatCountsOk);
      if (repeat && !c.has_axis) note(kRepeatNoAxisOk);
      if (ex) note(kExOk);
      if (clamp) note(kClampOk);
      if (opt_ptr && c.opt.sizeof_options < sizeof(tessera_options)) note(kOptionsPartOk);
      if (c.ndim > kFewDims) note(kManyDimsOk);
      if (c.itemsize > 40) note(kBigItemOk);
      if (nbytes > static_cast<size_t>(kMaxBigBytes)) note(kOutput1MiBOk);
      if (eff.options.max_threads > 0 && nbytes >= 512 * 1024) note(kThreadsBigOk);
      if (c.arena && nbytes >= 512 * 1024) note(kArenaBigOk);
    } else {
      if (c.null_arg != kNoNull) note(kNullArgErr);
      if (c.ndim > kCap || c.nreps > kCap) note(kTooManyDimsErr);
      if (st == TESSERA_OVERFLOW) note(kOverflowErr);
      if (!size_ok && args_ok) note(kOptionsSizeErr);
    }
  }

  // Plan, its executions and an output region.
  {
    dst.refill();
    tessera_plan* plan = nullptr;
    tessera_plan** out_plan = c.null_arg == kNullOutPtr ? nullptr : &plan;
    const tessera_status want_st = out_plan == nullptr ? TESSERA_INVALID_ARGUMENT : c_status(mo.plan_status);
    tessera_status st = TESSERA_OK;
    const char* api = "";
    switch (c.op) {
      case kTile:
        api = ex ? "tessera_plan_create_ex" : "tessera_plan_create";
        st = ex ? tessera_plan_create_ex(c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, opt_ptr, out_plan)
                : tessera_plan_create(c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, out_plan);
        break;
      case kBroadcastTo:
        api = "tessera_plan_create_broadcast_to";
        st = tessera_plan_create_broadcast_to(c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, opt_ptr,
                                              out_plan);
        break;
      case kExpand:
        api = "tessera_plan_create_expand";
        st = tessera_plan_create_expand(c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, opt_ptr, out_plan);
        break;
      default:
        api = "tessera_plan_create_repeat";
        st = tessera_plan_create_repeat(c.ndim, shape_ptr, strides, c.itemsize, c.nrepeats, list_ptr, axis_c, opt_ptr,
                                        out_plan);
        break;
    }
    expect_status(c, api, st, want_st);
    if (st != TESSERA_OK) {
      if (plan != nullptr) fail(c, api, "failed but handed out a plan");
    } else {
      std::unique_ptr<tessera_plan, void (*)(tessera_plan*)> owner(plan, tessera_plan_destroy);
      tessera_plan* use = c.null_arg == kNullPlan ? nullptr : plan;  // a NULL plan: rejected, nothing read
      if (use == nullptr) {
        tessera_plan_destroy(nullptr);  // no-ops
        tessera_free(nullptr);
      }
      int out_ndim;
      int64_t out_shape[TESSERA_MAX_NDIM];
      const bool shape_args = check_plan_output(c, use, nbytes, mo, out_ndim, out_shape);
      if (shape_args && c.op == kTile) {
        std::vector<int64_t> reps(c.reps, c.reps + c.nreps);
        for (int64_t& r : reps) r = clamp && r < 0 ? 0 : r;
        const ref::Shape ws = ref::tile_shape({c.shape, c.shape + c.ndim}, reps);
        if (out_ndim != static_cast<int>(ws.size()) || !std::equal(ws.begin(), ws.end(), out_shape))
          fail(c, "tessera_plan_output_shape", "shape " + list(out_shape, out_ndim > 0 ? out_ndim : 0));
      }
      if (std::strstr(tessera_plan_describe(plan), "kernel: ") == nullptr)
        fail(c, "tessera_plan_describe", "description names no kernel");
      if (std::strncmp(tessera_plan_describe(plan), kOpNames[c.op], std::strlen(kOpNames[c.op])) != 0)
        fail(c, "tessera_plan_describe", std::string("description does not start with ") + kOpNames[c.op]);
      if (tessera_plan_describe(nullptr)[0] != '\0') fail(c, "tessera_plan_describe", "NULL plan: not \"\"");
      const tessera_status want_ex = use == nullptr ? TESSERA_INVALID_ARGUMENT : exec_status(mo);
      const int runs = alloc_only ? 0 : large ? 1 : 2;  // a plan is reusable
      for (int run = 0; run < runs && may_call(want_ex, nbytes); ++run) {
        dst.refill();
        const tessera_status ex_st = tessera_plan_execute(use, src_ptr, dst_ptr, dp.dst_bytes);
        expect_status(c, "tessera_plan_execute", ex_st, want_ex);
        check_output(c, "tessera_plan_execute", ex_st, dst, want, nbytes);
        if (ex_st == TESSERA_OK && run == 0) {
          count_path(tessera_plan_describe(plan));
          if (opt_ptr && eff.options.nontemporal == tessera::NonTemporal::never) note(kNtNeverOk);
          if ((!opt_ptr || eff.options.nontemporal == tessera::NonTemporal::automatic) &&
              std::strstr(tessera_plan_describe(plan), ".nt"))
            note(kAutoStreamOk);
        }
      }

      // Output region: start/extent per output axis from the region codes.
      if (c.region && !alloc_only)
        check_region(c, "tessera_plan_execute_region", kRegionOk, use != nullptr,
                     [&](const int64_t* start, const int64_t* extent, void* d, size_t bytes) {
                       return tessera_plan_execute_region(use, src_ptr, start, extent, d, bytes);
                     },
                     mo, src_ptr, have_src ? src.first : nullptr, want, cap);
    }
  }

  // C++ plan with streaming stores forced: the ".nt" executor paths (and its regions, which use
  // ordinary stores). Same statuses as the one-shot under the default options (the Dims reject a
  // count out of range or a NULL list; Repeats reach the planner).
  const auto cpp_shape = [&] { return tessera::Dims(shape_ptr, static_cast<size_t>(c.ndim)); };
  const auto cpp_strides = [&] {
    return c.null_strides ? tessera::Dims() : tessera::Dims(c.strides, static_cast<size_t>(c.ndim));
  };
  const auto cpp_plan = [&](const tessera::Options& o) {
    const tessera::Dims shape = cpp_shape(), st = cpp_strides();
    switch (c.op) {
      case kTile: return tessera::Plan(shape, st, c.itemsize, tessera::Dims(list_ptr, static_cast<size_t>(c.nreps)), o);
      case kBroadcastTo:
        return tessera::Plan::broadcast_to(shape, st, c.itemsize, tessera::Dims(list_ptr, static_cast<size_t>(c.nreps)), o);
      case kExpand:
        return tessera::Plan::expand(shape, st, c.itemsize, tessera::Dims(list_ptr, static_cast<size_t>(c.nreps)), o);
      default:
        return tessera::Plan::repeat(shape, st, c.itemsize,
                                     tessera::Repeats(list_ptr, static_cast<size_t>(c.nrepeats)), axis_cpp, o);
    }
  };
  const tessera_status want_cpp =
      cpp_status_of(exec_expect(md.plan_status, c.null_src, md.input_nonempty, dp.null_dst, dp.dst_bytes, nbytes));
  if (!large && may_call(want_cpp, nbytes)) {
    dst.refill();
    std::optional<tessera::Plan> plan;
    const tessera_status st = cpp_status(c, "tessera::Plan(nt)", [&] {
      plan.emplace(cpp_plan(tessera::Options{tessera::NonTemporal::always}));
      if (plan->nbytes() != nbytes) fail(c, "tessera::Plan(nt)", "nbytes " + std::to_string(plan->nbytes()));
      const std::string path = plan->kernel_path();
      static const std::vector<std::string> paths = tessera::Plan::kernel_paths();
      if (std::find(paths.begin(), paths.end(), path) == paths.end())
        fail(c, "tessera::Plan(nt)", "kernel_path() \"" + path + "\" is not listed by Plan::kernel_paths()");
      plan->execute(src_ptr, dst_ptr, dp.dst_bytes);
      if (want_cpp == TESSERA_OK) ++path_counts()[path];
    });
    if (st != want_cpp)
      fail(c, "tessera::Plan(nt)", std::string("status ") + status_name(st) + ", expected " + status_name(want_cpp));
    check_output(c, "tessera::Plan(nt)", st, dst, want, nbytes);
    if (c.region && plan)
      check_region(c, "tessera::Plan::execute_region", kCppRegionOk, true,
                   [&](const int64_t* start, const int64_t* extent, void* d, size_t bytes) {
                     const int n = plan->ndim();
                     return cpp_status(c, "tessera::Plan::execute_region", [&] {
                       plan->execute_region(src_ptr, tessera::Dims(start, static_cast<size_t>(n)),
                                            tessera::Dims(extent, static_cast<size_t>(n)), d, bytes);
                     });
                   },
                   md, src_ptr, have_src ? src.first : nullptr, want, cap);
  }

  // Allocating call — tile: tessera_tile_alloc(_ex); the others: the C++ allocating call with the
  // options the C calls read (defaults where sizeof_options is refused). Where it cannot allocate
  // an output larger than the caps: an output that fits, or a failure before allocating, or one
  // of 2^57 bytes or more (OUT_OF_MEMORY; rare inputs only). From 32 MiB on, twice: a fresh
  // mapping, then the block tessera_free kept.
  if (c.op == kTile) {
    const char* api = ex ? "tessera_tile_alloc_ex" : "tessera_tile_alloc";
    int marker = 0;
    void* out = &marker;  // must stay as is on failure
    size_t out_size = 12345;
    int out_ndim = -7;
    int64_t out_shape[TESSERA_MAX_NDIM];
    void** data_arg = c.null_arg == kNullOutPtr && !c.null_alt ? nullptr : &out;
    size_t* bytes_arg = c.null_arg == kNullOutPtr && c.null_alt ? nullptr : &out_size;
    int* ndim_arg = c.null_arg == kNullOutNdim ? nullptr : &out_ndim;
    int64_t* shape_arg = c.null_arg == kNullOutShape ? nullptr : out_shape;
    tessera_status want_st = mo.plan_status;
    if (want_st == TESSERA_OK && !readable) want_st = TESSERA_INVALID_ARGUMENT;
    const bool oom = want_st == TESSERA_OK && out_bytes >= kUnallocatable;
    if (oom) want_st = TESSERA_OUT_OF_MEMORY;
    want_st = c_status(want_st);
    if (!data_arg || !bytes_arg || !ndim_arg || !shape_arg) want_st = TESSERA_INVALID_ARGUMENT;
    const bool callable = want_st != TESSERA_OK ? (want_st != TESSERA_OUT_OF_MEMORY || c.rare)
                                                : (fits || nbytes == 0) && may_call(want_st, nbytes);
    for (int round = 0; callable && round < (want_st == TESSERA_OK && out_bytes >= kAllocHugeBytes ? 2 : 1); ++round) {
      out = &marker;
      const tessera_status st =
          ex ? tessera_tile_alloc_ex(src_ptr, c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, opt_ptr,
                                     data_arg, bytes_arg, ndim_arg, shape_arg)
             : tessera_tile_alloc(src_ptr, c.ndim, shape_ptr, strides, c.itemsize, c.nreps, list_ptr, data_arg,
                                  bytes_arg, ndim_arg, shape_arg);
      expect_status(c, api, st, want_st);
      if (st == TESSERA_OUT_OF_MEMORY) note(kOutOfMemoryErr);
      if (st == TESSERA_OK && out_bytes >= kAllocHugeBytes) note(kAlloc32MiBOk);
      if (st != TESSERA_OK) {
        if (out != &marker) fail(c, api, "failed but changed *out_data");
      } else {
        if (out == &marker) fail(c, api, "succeeded but did not set *out_data");
        std::unique_ptr<void, void (*)(void*)> owner(out, tessera_free);
        if (out_size != nbytes || want.size() != nbytes)
          fail(c, api, "out_bytes " + std::to_string(out_size) + ", expected " + std::to_string(nbytes));
        if (nbytes > 0 && (out == nullptr || std::memcmp(out, want.data(), nbytes) != 0))
          fail(c, api, "output differs from the reference");
        if (nbytes > 0 && reinterpret_cast<uintptr_t>(out) % 64 != 0) fail(c, api, "not 64-byte aligned");
        if (out_ndim != mo.out_ndim || !std::equal(out_shape, out_shape + out_ndim, mo.out_shape))
          fail(c, api, "shape " + list(out_shape, out_ndim > 0 ? out_ndim : 0) + ", model " +
                           list(mo.out_shape, mo.out_ndim));
      }
    }
  } else {
    const char* api = c.op == kBroadcastTo ? "tessera::broadcast_to (allocating)"
                      : c.op == kExpand    ? "tessera::expand (allocating)"
                                           : "tessera::repeat (allocating)";
    const Model& ma = opt_ptr != nullptr && size_ok ? mo : md;
    const tessera::Options o = opt_ptr != nullptr && size_ok ? eff.options : tessera::Options();
    tessera_status want_st = ma.plan_status;
    if (want_st == TESSERA_OK && !readable) want_st = TESSERA_INVALID_ARGUMENT;
    const bool oom = want_st == TESSERA_OK && ma.output_bytes >= kUnallocatable;
    if (oom) want_st = TESSERA_OUT_OF_MEMORY;
    want_st = cpp_status_of(want_st);
    const size_t abytes = want_st == TESSERA_OK ? static_cast<size_t>(ma.output_bytes) : 0;
    const bool callable = want_st != TESSERA_OK ? (want_st != TESSERA_OUT_OF_MEMORY || c.rare)
                                                : (fits || abytes == 0) && may_call(want_st, abytes);
    for (int round = 0; callable && round < (want_st == TESSERA_OK && ma.output_bytes >= kAllocHugeBytes ? 2 : 1);
         ++round) {
      tessera::Array a;
      const tessera_status st = cpp_status(c, api, [&] {
        const tessera::Dims shape = cpp_shape(), st_ = cpp_strides();
        switch (c.op) {
          case kBroadcastTo:
            a = tessera::broadcast_to(src_ptr, shape, st_, c.itemsize, tessera::Dims(list_ptr, static_cast<size_t>(c.nreps)), o);
            break;
          case kExpand:
            a = tessera::expand(src_ptr, shape, st_, c.itemsize, tessera::Dims(list_ptr, static_cast<size_t>(c.nreps)), o);
            break;
          default:
            a = tessera::repeat(src_ptr, shape, st_, c.itemsize,
                                tessera::Repeats(list_ptr, static_cast<size_t>(c.nrepeats)), axis_cpp, o);
            break;
        }
      });
      if (st != want_st) fail(c, api, std::string("status ") + status_name(st) + ", expected " + status_name(want_st));
      if (st == TESSERA_OUT_OF_MEMORY) note(kOutOfMemoryErr);
      if (st != TESSERA_OK) {
        if (a.data() != nullptr || a.nbytes() != 0) fail(c, api, "failed but returned an array");
        continue;
      }
      note(kCppAllocOk);
      if (ma.output_bytes >= kAllocHugeBytes) note(kAlloc32MiBOk);
      if (a.nbytes() != abytes || want.size() != abytes)
        fail(c, api, "nbytes " + std::to_string(a.nbytes()) + ", expected " + std::to_string(abytes));
      if (abytes > 0 && (a.data() == nullptr || std::memcmp(a.data(), want.data(), abytes) != 0))
        fail(c, api, "output differs from the reference");
      if (abytes > 0 && reinterpret_cast<uintptr_t>(a.data()) % 64 != 0) fail(c, api, "not 64-byte aligned");
      if (a.itemsize() != c.itemsize || a.ndim() != ma.out_ndim ||
          !std::equal(a.shape().begin(), a.shape().end(), ma.out_shape))
        fail(c, api, "shape " + list(a.shape().data(), a.ndim()) + ", model " + list(ma.out_shape, ma.out_ndim));
    }
  }

#if TESSERA_FUZZ_DLPACK
  if (c.dlpack && !alloc_only)
    check_dlpack(c, md, args_ok, c.null_arg == kNullReps, first, have_src ? src.buf.get() : nullptr, want, cap);
#endif
}

}  // namespace
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Outputs of 2 MiB or more stream under NonTemporal::automatic, so that the rare large outputs
  // (up to kMaxHugeBytes) reach that choice whatever this machine's last-level cache.
  setenv("TESSERA_STREAM_MIN_BYTES", "2097152", /*overwrite=*/0);
  if (const char* p = std::getenv("TESSERA_FUZZ_PATHS"); p != nullptr && p[0] != '\0' && p[0] != '0')
    std::atexit(print_paths);
  const char* want = std::getenv("TESSERA_FUZZ_TARGET");
  if (want != nullptr && want[0] != '\0') {
    int64_t chosen = 0;
    for (int64_t t : hwy::SupportedAndGeneratedTargets())
      if (std::strcmp(hwy::TargetName(t), want) == 0) chosen = t;
    if (chosen == 0) {
      std::fprintf(stderr, "fuzz_tile: TESSERA_FUZZ_TARGET=%s is not a target compiled in and supported here\n", want);
      std::abort();
    }
    hwy::SetSupportedTargetsForTest(chosen);
    if (std::strcmp(tessera_active_target(), want) != 0) {
      std::fprintf(stderr, "fuzz_tile: forced %s but tessera dispatches to %s\n", want, tessera_active_target());
      std::abort();
    }
  }
  std::fprintf(stderr, "fuzz_tile: tessera %s dispatches to %s (TESSERA_STREAM_MIN_BYTES=%s)\n", tessera_version(),
               tessera_active_target(), std::getenv("TESSERA_STREAM_MIN_BYTES"));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Case c = decode(data, size);
  c.rare = fnv1a(data, size) % kRareOneIn == 0;
  if (c.arena) arena4().execute([&] { run(c); });
  else run(c);
  return 0;
}
