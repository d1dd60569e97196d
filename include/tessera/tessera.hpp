// tessera — C++17 interface. Semantics, units and caller guarantees are those of tessera.h: the
// replication family — tile (numpy.tile), broadcast_to (numpy.broadcast_to(...).copy()), expand
// (ONNX Expand) and repeat (numpy.repeat / torch.repeat_interleave); extents, reps, repeats and
// counts in ELEMENTS; strides, itemsize and buffer sizes in BYTES; the output is C-contiguous.
//
// Every failure throws a tessera::Error subclass whose what() names the bad value:
//   InvalidArgument  (TESSERA_INVALID_ARGUMENT)  negative rep/extent, itemsize 0, too many axes, null pointer
//   Overflow         (TESSERA_OVERFLOW)          output count or byte size does not fit int64_t / size_t
//   BufferTooSmall   (TESSERA_BUFFER_TOO_SMALL)  destination smaller than the output
// std::bad_alloc may escape from the allocating calls. On any error nothing is written to dst.
//
// Options (threads, negative reps policy, non-temporal stores) are per plan or per call; output
// regions (Plan::execute_region) compute one hyper-rectangle of a plan's output.
#ifndef TESSERA_TESSERA_HPP
#define TESSERA_TESSERA_HPP

#include <tessera/tessera.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tessera {

/// Largest number of axes of an input, of reps, and of an output.
inline constexpr int max_ndim = TESSERA_MAX_NDIM;

/// Mirrors tessera_status.
enum class Status : int {
  ok = TESSERA_OK,
  invalid_argument = TESSERA_INVALID_ARGUMENT,
  overflow = TESSERA_OVERFLOW,
  buffer_too_small = TESSERA_BUFFER_TOO_SMALL,
  out_of_memory = TESSERA_OUT_OF_MEMORY,
  internal = TESSERA_INTERNAL,
};

/// Base of every exception tessera throws; status() tells the class of error.
class TESSERA_API Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  ~Error() override;
  Status status() const noexcept { return status_; }

 private:
  Status status_;
};

/// A bad argument: negative rep or extent, itemsize 0, too many axes, a rep that does not fit
/// int64_t, mismatched strides length, or a null pointer where data is needed.
class TESSERA_API InvalidArgument : public Error {
 public:
  explicit InvalidArgument(const std::string& message) : Error(Status::invalid_argument, message) {}
  ~InvalidArgument() override;
};

/// The output's element count or byte size (or an input's implied byte size) overflows
/// int64_t or size_t. Raised before anything is allocated or written.
class TESSERA_API Overflow : public Error {
 public:
  explicit Overflow(const std::string& message) : Error(Status::overflow, message) {}
  ~Overflow() override;
};

/// The destination buffer holds fewer bytes than the output needs.
class TESSERA_API BufferTooSmall : public Error {
 public:
  explicit BufferTooSmall(const std::string& message) : Error(Status::buffer_too_small, message) {}
  ~BufferTooSmall() override;
};

namespace detail {
// Whether R is a contiguous range (std::data and std::size apply), or any other range
// (std::begin and std::end apply): the two ways Dims reads a range.
template <class R, class = void>
struct IsContiguousRange : std::false_type {};
template <class R>
struct IsContiguousRange<R, std::void_t<decltype(std::data(std::declval<const R&>())),
                                        decltype(std::size(std::declval<const R&>()))>> : std::true_type {};
template <class R, class = void>
struct IsIterableRange : std::false_type {};
template <class R>
struct IsIterableRange<R, std::void_t<decltype(std::begin(std::declval<const R&>())),
                                      decltype(std::end(std::declval<const R&>()))>> : std::true_type {};
}  // namespace detail

/// A list of at most max_ndim int64_t values: a shape (elements), byte strides, or reps.
///
/// Built from an initializer list, a pointer + count, a contiguous range with std::data/std::size
/// (std::vector, std::array, C array, std::initializer_list, a span-like view, ...) or any other
/// range with std::begin/std::end (std::deque, std::list, ...) of ANY integer type (int8_t ...
/// uint64_t, char, long, size_t, ...), as OpenVINO's Tile accepts repeats of any integer type.
/// Throws InvalidArgument if there are more than max_ndim values or an unsigned value exceeds
/// INT64_MAX (naming its index and value). Negative values are kept; whether they are allowed is
/// decided where the list is used (an error, or 0 under NegativeReps::clamp_to_zero).
class Dims {
 public:
  Dims() noexcept {}  // NOLINT: values_ past size_ are never read, so they are left unset
  Dims(const Dims& other) noexcept { *this = other; }
  Dims& operator=(const Dims& other) noexcept {  // copies only the values in use
    size_ = other.size_;
    for (int i = 0; i < size_; ++i) values_[i] = other.values_[i];
    return *this;
  }
  Dims(std::initializer_list<int64_t> values) { assign(values.begin(), values.size()); }
  template <class Int, class = std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>>>
  Dims(const Int* values, std::size_t count) {
    assign(values, count);
  }
  /// From a range of integers: contiguous (std::data and std::size: a vector, an array, a span)
  /// or only iterable (a list, a set); at most TESSERA_MAX_NDIM values, else InvalidArgument.
  template <class Range, std::enable_if_t<(detail::IsContiguousRange<Range>::value ||
                                           detail::IsIterableRange<Range>::value) &&
                                              !std::is_same_v<std::decay_t<Range>, Dims>, int> = 0>
  Dims(const Range& values) {  // NOLINT(google-explicit-constructor): lists convert implicitly
    if constexpr (detail::IsContiguousRange<Range>::value) {
      assign(std::data(values), std::size(values));
    } else {
      int n = 0;
      for (const auto& v : values) {
        if (n == max_ndim)
          throw InvalidArgument("tessera: more than " + std::to_string(max_ndim) +
                                " values exceed TESSERA_MAX_NDIM (" + std::to_string(max_ndim) + ")");
        store(v, n++);
      }
      size_ = n;
    }
  }

  /// Number of values (an array's ndim, or len(reps)).
  int size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const int64_t* data() const noexcept { return values_; }
  const int64_t* begin() const noexcept { return values_; }
  const int64_t* end() const noexcept { return values_ + size_; }
  int64_t operator[](int i) const noexcept { return values_[i]; }
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }
  friend bool operator==(const Dims& a, const Dims& b) noexcept {
    if (a.size_ != b.size_) return false;
    for (int i = 0; i < a.size_; ++i)
      if (a.values_[i] != b.values_[i]) return false;
    return true;
  }
  friend bool operator!=(const Dims& a, const Dims& b) noexcept { return !(a == b); }

 private:
  template <class Int>
  void assign(const Int* values, std::size_t count) {
    static_assert(std::is_integral_v<Int> && !std::is_same_v<Int, bool>, "Dims holds integers");
    if (count > static_cast<std::size_t>(max_ndim))
      throw InvalidArgument("tessera: " + std::to_string(count) + " values exceed TESSERA_MAX_NDIM (" +
                            std::to_string(max_ndim) + ")");
    if (count > 0 && values == nullptr)
      throw InvalidArgument("tessera: a null pointer with " + std::to_string(count) + " values");
    for (std::size_t i = 0; i < count; ++i) store(values[i], static_cast<int>(i));
    size_ = static_cast<int>(count);
  }
  template <class Int>
  void store(Int value, int i) {
    static_assert(std::is_integral_v<Int> && !std::is_same_v<Int, bool>, "Dims holds integers");
    if constexpr (std::is_unsigned_v<Int> && sizeof(Int) >= sizeof(int64_t)) {
      if (value > static_cast<Int>(std::numeric_limits<int64_t>::max()))
        throw InvalidArgument("tessera: value " + std::to_string(value) + " at index " + std::to_string(i) +
                              " does not fit int64_t");
    }
    values_[i] = static_cast<int64_t>(value);
  }

  int size_ = 0;
  int64_t values_[max_ndim];
};

/// Output shape of tile(A, reps) for an input of the given shape (numpy.tile's rule:
/// max(ndim, len(reps)) axes, the shorter list promoted by prepending 1s; out[i] = shape[i] * reps[i]).
/// Throws InvalidArgument (negative extent or rep) or Overflow (an extent, the element count, or
/// the element count times 1 byte does not fit int64_t).
TESSERA_API Dims tile_shape(const Dims& shape, const Dims& reps);

/// Whether a plan writes its output with non-temporal (streaming) stores, which bypass the caches:
/// a win when the output is much larger than the last-level cache and is not read again soon.
enum class NonTemporal : int {
  automatic = 0,  ///< streaming stores for outputs of at least 3/4 of the last-level cache, clamped to
                  ///< 4-256 MiB (four times the L2 on Intel CPUs with a last-level cache over 64 MiB,
                  ///< a Xeon's mesh L3; 16 MiB where Linux sysfs does not say; the environment
                  ///< variable TESSERA_STREAM_MIN_BYTES, read once, overrides) (the default); the allocating
                  ///< tile writes new outputs of 32 MiB or more in fresh pages with ordinary stores
                  ///< (just zeroed, still cached), and in pages kept by tessera_free (see tessera.h)
                  ///< as execute does
  always = 1,     ///< streaming stores whatever the size
  never = 2,      ///< ordinary stores whatever the size
};

/// What a negative rep means.
enum class NegativeReps : int {
  error = TESSERA_NEGATIVE_REPS_ERROR,                  ///< InvalidArgument naming the axis (numpy.tile; the default)
  clamp_to_zero = TESSERA_NEGATIVE_REPS_CLAMP_TO_ZERO,  ///< acts as 0: that output axis is empty (OpenVINO Tile-1)
};

/// Options of a plan (or of a one-shot call). The defaults give numpy.tile's behaviour. Mirrors
/// tessera_options; a value outside its enum, or a negative max_threads, is InvalidArgument.
struct Options {
  /// Non-temporal stores for the output (the bytes written are the same either way).
  NonTemporal nontemporal = NonTemporal::automatic;
  /// 0: the caller's oneTBB task arena decides how many threads write the output. N > 0: the
  /// executor splits the output into at most N chunks, run as tasks in the caller's arena, so at
  /// most N threads (the caller's included) take part; 1 runs serially on the calling thread.
  /// (Outputs under 512 KiB always run serially on the calling thread, and so does a process's
  /// first call that could use threads, below 16 MiB (starting oneTBB's workers costs about as
  /// much as writing 1 MiB) and, into the fresh pages of an allocating call, below 256 MiB; the
  /// next such call starts them.)
  int max_threads = 0;
  /// Negative reps: an error (numpy) or 0 (OpenVINO Tile-1).
  NegativeReps negative_reps = NegativeReps::error;
  /// The reductions (tile_backward, sum_to_shape, repeat_backward) only: false writes the result,
  /// true adds it into what the output holds (out = round(out + sum); frameworks accumulate
  /// gradients). The copying operations ignore it.
  bool accumulate = false;
};

/// Element types of the reductions (the gradients below; mirrors tessera_dtype). The copying
/// operations move bytes and take an itemsize instead.
enum class DType : int {
  float32 = TESSERA_FLOAT32,
  float64 = TESSERA_FLOAT64,
  float16 = TESSERA_FLOAT16,    ///< IEEE binary16, accumulated in float32
  bfloat16 = TESSERA_BFLOAT16,  ///< the upper half of a float32, accumulated in float32
  complex64 = TESSERA_COMPLEX64,    ///< (float32 real, float32 imaginary), accumulated in float64
  complex128 = TESSERA_COMPLEX128,  ///< (float64, float64)
  int8 = TESSERA_INT8,
  int16 = TESSERA_INT16,
  int32 = TESSERA_INT32,
  int64 = TESSERA_INT64,
  uint8 = TESSERA_UINT8,
  uint16 = TESSERA_UINT16,
  uint32 = TESSERA_UINT32,
  uint64 = TESSERA_UINT64,
};

/// Bytes per element of `dtype`. Throws InvalidArgument naming the value if it is not a DType.
TESSERA_API std::size_t itemsize_of(DType dtype);
/// Name of `dtype` ("float32", "bfloat16", ...). Throws InvalidArgument naming the value if it is
/// not a DType.
TESSERA_API const char* dtype_name(DType dtype);
/// The DType of a numpy dtype given by its kind character and its itemsize in bytes (numpy.dtype's
/// `kind` and `itemsize`): 'f' 2/4/8 -> float16/32/64, 'c' 8/16 -> complex64/128, 'i' and 'u'
/// 1/2/4/8 -> int8-int64 and uint8-uint64. std::nullopt for any other pair (numpy has no bfloat16;
/// bool is kind 'b'); byte order, fields and subarrays are the caller's to check.
TESSERA_API std::optional<DType> dtype_from_numpy(char kind, std::size_t itemsize);
/// The DType of a DLPack dtype (DLDataType's code, bits and lanes; dlpack.h): one lane of kDLFloat
/// 16/32/64, kDLBfloat 16, kDLComplex 64/128, kDLInt or kDLUInt 8/16/32/64 (tessera_dlpack.h's
/// list). std::nullopt for any other (kDLBool, kDLOpaqueHandle, lanes other than 1, other bits).
TESSERA_API std::optional<DType> dtype_from_dlpack(int code, int bits, int lanes);
/// The DType that dtype_name names `name` ("float32", "bfloat16", ...: also torch's dtype names
/// without their "torch." prefix). std::nullopt for any other string.
TESSERA_API std::optional<DType> dtype_named(const std::string& name);

/// tile_shape under `options`: with NegativeReps::clamp_to_zero a negative rep gives an extent
/// of 0. Also throws InvalidArgument for an invalid option value.
TESSERA_API Dims tile_shape(const Dims& shape, const Dims& reps, const Options& options);

/// Output shape of broadcast_to(A, target) (numpy.broadcast_to): `target` itself, after checking
/// that the input's axes, aligned with target's trailing axes, each have extent 1 or target's.
/// Throws InvalidArgument (target has fewer axes than the input, a negative extent, or an axis
/// that does not broadcast — the message names the axis and both extents) or Overflow (the
/// element count does not fit int64_t).
TESSERA_API Dims broadcast_shape(const Dims& shape, const Dims& target);

/// Output shape of expand(A, shape) (ONNX Expand, OpenVINO Broadcast-3 "bidirectional"): the numpy
/// broadcast of both shapes (the shorter promoted by prepending 1s; on each axis the extents must
/// be equal or one of them 1). Throws as broadcast_shape.
TESSERA_API Dims expand_shape(const Dims& shape, const Dims& target);

/// The counts of repeat(): one count for every element (an integer), or one per element along the
/// repeated axis. A view, like std::string_view: per-element counts are not copied, so the vector
/// or array they live in must outlive the Repeats (pass it straight to the call; a plan keeps
/// their prefix sums, not the view). Counts are in elements, read as numpy.repeat and
/// torch.repeat_interleave read theirs: each must be >= 0 (a negative one is InvalidArgument naming
/// its index and value, before anything is written; or 0 under NegativeReps::clamp_to_zero).
///
/// Per-element counts may be int64 or int32 values at any byte stride (a numpy array or torch
/// tensor of either dtype, strided or not, read in place: no copy, no conversion pass).
class Repeats {
 public:
  /// Every element `count` times.
  Repeats(int64_t count) noexcept : scalar_(count), data_(&scalar_), size_(1) {}  // NOLINT: implicit
  /// Element i `counts[i]` times (size 1: the same count for all).
  Repeats(const int64_t* counts, std::size_t size) noexcept : data_(counts), size_(static_cast<int64_t>(size)) {}
  Repeats(const std::vector<int64_t>& counts) noexcept  // NOLINT: implicit
      : data_(counts.data()), size_(static_cast<int64_t>(counts.size())) {}
  /// Element i `*(counts + i * stride_bytes)` times, `size` int64 counts `stride_bytes` bytes apart
  /// (any sign; sizeof(int64_t) = contiguous).
  Repeats(const int64_t* counts, std::size_t size, std::ptrdiff_t stride_bytes) noexcept
      : data_(counts), size_(static_cast<int64_t>(size)), stride_(stride_bytes) {}
  /// Element i `*(counts + i * stride_bytes)` times, `size` int32 counts `stride_bytes` bytes apart
  /// (any sign; sizeof(int32_t), the default, = contiguous).
  Repeats(const int32_t* counts, std::size_t size, std::ptrdiff_t stride_bytes = sizeof(int32_t)) noexcept
      : data_(counts), size_(static_cast<int64_t>(size)), stride_(stride_bytes), itemsize_(sizeof(int32_t)) {}
  Repeats(const Repeats& other) noexcept { *this = other; }
  Repeats& operator=(const Repeats& other) noexcept {
    scalar_ = other.scalar_;
    size_ = other.size_;
    stride_ = other.stride_;
    itemsize_ = other.itemsize_;
    data_ = other.data_ == &other.scalar_ ? &scalar_ : other.data_;
    return *this;
  }
  /// The counts as contiguous int64 values, or nullptr when they are int32 or strided (read them
  /// with at(), or through bytes(), itemsize() and stride()).
  const int64_t* data() const noexcept {
    return itemsize_ == sizeof(int64_t) && stride_ == static_cast<std::ptrdiff_t>(sizeof(int64_t))
               ? static_cast<const int64_t*>(data_)
               : nullptr;
  }
  /// The number of counts.
  int64_t size() const noexcept { return size_; }
  /// The first count's address, the counts' byte size (4: int32, 8: int64) and byte stride.
  const void* bytes() const noexcept { return data_; }
  int itemsize() const noexcept { return itemsize_; }
  std::ptrdiff_t stride() const noexcept { return stride_; }
  /// Count i (0 <= i < size(); not checked), as int64.
  int64_t at(int64_t i) const noexcept {
    const unsigned char* p = static_cast<const unsigned char*>(data_) + i * stride_;
    if (itemsize_ == sizeof(int32_t)) return *reinterpret_cast<const int32_t*>(p);
    return *reinterpret_cast<const int64_t*>(p);
  }

 private:
  int64_t scalar_ = 0;
  const void* data_ = nullptr;
  int64_t size_ = 0;
  std::ptrdiff_t stride_ = sizeof(int64_t);
  int itemsize_ = sizeof(int64_t);
};

/// Output shape of repeat(A, repeats, axis) (numpy.repeat): with an axis (negative counts from the
/// end), shape with that axis' extent replaced by the sum of the counts (extent * count for one
/// count); without (std::nullopt), the 1-d shape (sum of the counts over the flattened input,
/// C order). Throws InvalidArgument (an axis out of range, a count list whose length is neither 1
/// nor the axis' extent, a negative count — naming the value) or Overflow.
TESSERA_API Dims repeat_shape(const Dims& shape, const Repeats& repeats, std::optional<int> axis = std::nullopt);

/// repeat_shape under `options`: with NegativeReps::clamp_to_zero a negative count acts as 0. Also
/// throws InvalidArgument for an invalid option value.
TESSERA_API Dims repeat_shape(const Dims& shape, const Repeats& repeats, std::optional<int> axis,
                              const Options& options);

/// The family's operations and their gradients: the rows of tessera's operation table, in its
/// order. The values are stable: bindings may pass them as integers (the Python module does).
enum class Operation : int {
  tile = 0,             ///< numpy.tile, torch.tile, ONNX Tile, OpenVINO Tile-1
  broadcast_to = 1,     ///< numpy.broadcast_to, torch.broadcast_to
  expand = 2,           ///< ONNX Expand, OpenVINO Broadcast-3 "bidirectional"
  repeat = 3,           ///< numpy.repeat, torch.repeat_interleave
  tile_backward = 4,    ///< the gradient of tile: a sum over the replicas
  sum_to_shape = 5,     ///< torch.Tensor.sum_to_size: the gradient of broadcast_to and expand
  repeat_backward = 6,  ///< the gradient of repeat
};
/// Number of operations (the values of Operation are 0 .. operation_count - 1).
inline constexpr int operation_count = 7;

/// What an operation's argument is (Arguments says where each lives).
enum class ArgKind : int {
  reps = 0,     ///< tile, tile_backward: reps (Arguments::dims)
  shape = 1,    ///< broadcast_to, expand, sum_to_shape: the target shape (Arguments::dims)
  repeats = 2,  ///< repeat, repeat_backward: counts and an optional axis (Arguments::repeats, axis)
};

/// One row of the operation table, as the bindings see it.
struct OperationInfo {
  Operation op;         ///< its value
  const char* name;     ///< its name, as the C++ function is called ("tile", "sum_to_shape", ...)
  ArgKind arg;          ///< what its argument is
  bool reduction;       ///< a gradient (sums; takes a DType), or a copy (moves bytes; any itemsize)
  Operation gradient;   ///< the operation that computes its gradient (tile <-> tile_backward,
                        ///< broadcast_to and expand -> sum_to_shape -> broadcast_to, repeat <-> repeat_backward)
  const char* source;   ///< where its semantics come from ("numpy.tile", ...)
  const char* input;    ///< its input's name in messages: "A", or "grad_out" for a gradient that takes the
                        ///< forward input's shape
  bool in_shape;        ///< takes the forward input's shape (Arguments::in_shape): tile_backward, repeat_backward
};

/// The row of `op`. Throws InvalidArgument naming the value if it is not an Operation.
TESSERA_API const OperationInfo& operation_info(Operation op);

/// An operation's arguments besides its input, for Plan::make and output_shape. Each operation
/// reads the fields its ArgKind names, and the reductions in_shape (OperationInfo::in_shape) and
/// dtype; it ignores the others. `repeats` is a view (see Repeats): the counts it points to must
/// outlive every call that reads these Arguments — assign it from a named vector or array, not a
/// temporary. It defaults to one count of 1.
struct Arguments {
  Dims dims;                 ///< tile, tile_backward: reps; broadcast_to, expand, sum_to_shape: the target shape
  Repeats repeats = int64_t{1};  ///< repeat, repeat_backward: one count, or one per element along the axis (a view)
  std::optional<int> axis;   ///< repeat, repeat_backward: the axis (negative: from the end); none: flattened
  Dims in_shape;             ///< tile_backward, repeat_backward: the forward operation's input shape
  std::optional<DType> dtype;  ///< the reductions: the element type (required, also by output_shape; its itemsize
                               ///< must be the one given to Plan::make)
};

/// Output shape of `op` for an input of `shape` (elements) — tile_shape, broadcast_shape,
/// expand_shape, repeat_shape; a reduction's is its result's (in_shape, or sum_to_shape's target),
/// after checking that `shape` is the forward output's. Throws as that function or plan does (a
/// reduction without args.dtype: InvalidArgument, as Plan::make).
TESSERA_API Dims output_shape(Operation op, const Dims& shape, const Arguments& args, const Options& options = {});

namespace detail {
struct PlanData;
struct ArrayAccess;
}

/// An immutable, reusable plan for one call of the family — tile(A, reps) (the constructor),
/// broadcast_to, expand or repeat (the static factories): nested copy loops over the C-contiguous
/// output ending in one row kernel (see describe()). O(ndim) in size (a per-element repeat adds
/// its counts' prefix sums), independent of data pointers, cheap to copy (shared), and safe to
/// execute from many threads at once.
class Array;

class TESSERA_API Plan {
 public:
  /// Plans tiling an input of `shape` (elements) with byte `strides` (empty = C-contiguous; else
  /// exactly shape.size() values, any sign) and `itemsize` bytes per element by `reps`, under
  /// `options` (kept by the plan: every execution follows them).
  /// Throws InvalidArgument (negative extent, negative rep under NegativeReps::error, itemsize 0,
  /// strides of the wrong length, an invalid option) or Overflow (output count or byte size, or
  /// the implied contiguous input size, overflows).
  Plan(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, const Options& options = {});

  /// Plans broadcast_to(A, target) materialised — numpy.broadcast_to(A, target).copy(): an output
  /// of shape `target`. The input as for the constructor. Throws as broadcast_shape and the
  /// constructor (itemsize, strides, options). Options.negative_reps does not apply.
  static Plan broadcast_to(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
                           const Options& options = {});
  /// Plans expand(A, target) — ONNX Expand: an output of expand_shape(shape, target). Throws as
  /// expand_shape and the constructor.
  static Plan expand(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
                     const Options& options = {});
  /// Plans repeat(A, repeats, axis) — numpy.repeat, torch.repeat_interleave: each element along
  /// `axis` (or of the flattened input, std::nullopt) written repeats times in a row; output shape
  /// repeat_shape. Per-element counts are copied into the plan (their prefix sums, computed once).
  /// Under NegativeReps::clamp_to_zero a negative count acts as 0. Throws as repeat_shape and the
  /// constructor.
  static Plan repeat(const Dims& shape, const Dims& strides, std::size_t itemsize, const Repeats& repeats,
                     std::optional<int> axis = std::nullopt, const Options& options = {});

  /// Plans the gradient of tile (torch.tile's backward): the sum of `grad_out` over the replicas,
  /// an output of `in_shape` — grad_out.reshape(r0, s0, r1, s1, ...).sum(axis=(0, 2, ...)) with
  /// numpy.tile's promotion (leading promoted axes summed away). grad_out is described by
  /// `shape` (elements; must equal tile_shape(in_shape, reps)), byte `strides` (empty =
  /// C-contiguous; any sign, zero) and `dtype`. Accuracy, determinism and options.accumulate: see
  /// tessera.h ("The reductions"). Throws InvalidArgument (a dtype not in DType; shape not
  /// tile_shape(in_shape, reps), naming the axis and both extents; as tile_shape) or Overflow
  /// (as tile_shape, or grad_out's element count times its itemsize does not fit int64_t, whatever
  /// its strides).
  static Plan tile_backward(const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                            const Dims& reps, const Options& options = {});
  /// Plans sum_to_shape(A, target) — torch.Tensor.sum_to_size, the gradient of broadcast_to and
  /// expand: A summed over its leading axes beyond target's and over every axis where target has
  /// 1 and A does not; an output of shape `target`. Throws InvalidArgument (target has more axes
  /// than A; an axis whose target extent is neither A's nor 1, naming the axis and both extents;
  /// a bad dtype) or Overflow.
  static Plan sum_to_shape(const Dims& shape, const Dims& strides, DType dtype, const Dims& target,
                           const Options& options = {});
  /// Plans the gradient of repeat (numpy.repeat, torch.repeat_interleave's backward): each output
  /// element the sum of the grad_out elements that repeat wrote from it; an output of `in_shape`.
  /// grad_out's `shape` must equal repeat_shape(in_shape, repeats, axis). Per-element counts are
  /// copied (their prefix sums). Throws as repeat_shape and tile_backward.
  static Plan repeat_backward(const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                              const Repeats& repeats, std::optional<int> axis = std::nullopt,
                              const Options& options = {});

  /// Plans any operation of the table: the constructor or the factory of that name, with its
  /// arguments read from `args` (see Arguments). `itemsize` is bytes per element; a reduction
  /// needs args.dtype, whose itemsize it must be. Throws InvalidArgument (`op` not an Operation;
  /// a reduction without a dtype, or with another itemsize, naming both) or as that factory.
  static Plan make(Operation op, const Dims& shape, const Dims& strides, std::size_t itemsize, const Arguments& args,
                   const Options& options = {});
  /// The operation the plan was made for.
  Operation operation() const noexcept;

  /// Number of output axes (tile: max(shape.size(), reps.size())).
  int ndim() const noexcept;
  /// Output shape in elements.
  const Dims& shape() const noexcept;
  /// Output element count.
  int64_t size() const noexcept;
  /// Output byte size: size() * itemsize().
  std::size_t nbytes() const noexcept;
  /// Bytes per element.
  std::size_t itemsize() const noexcept;
  /// Input element count (0 if the input is empty).
  int64_t input_size() const noexcept;
  /// The options the plan was made with.
  const Options& options() const noexcept;

  /// Whether the plan is a reduction (tile_backward, sum_to_shape, repeat_backward): then
  /// itemsize() is its dtype's, input_size() counts the gradient's elements, and execute_region is
  /// not available.
  bool is_reduction() const noexcept;
  /// Multi-line description: the operation and its arguments ("tile plan: …", "repeat plan: …"),
  /// one line per row loop (extent, source and destination byte strides), then the row kernel and
  /// its path ("kernel: copy|pattern|fill|gather|repeat|segments [path] ...").
  std::string describe() const;
  /// Name of the row kernel: "copy", "pattern", "fill", "gather", "repeat", "segments", or "none"
  /// (empty output).
  const char* kernel_name() const noexcept;
  /// The executor path the plan runs, decided once by the planner: the kernel and its variant, e.g.
  /// "fill.4" (4-byte element broadcast), "fill.4.lines" (the same with rows of one 64-byte cache
  /// line each), "pattern.short" (a run under 256 B replicated from the
  /// output), "pattern.memcpy" (runs of 16 KiB or more, each one memcpy), "gather.4.blocked",
  /// "repeat.shuffle"; with ".nt" when the plan writes with
  /// non-temporal stores (see NonTemporal), ".nt.direct" when it streams straight from the source.
  /// The same on every CPU of a SIMD target (a target without vectors, HWY_SCALAR, gets no vector
  /// or streaming path).
  const char* kernel_path() const noexcept;
  /// Every path kernel_path() can return, so that tests can show each one is exercised (the
  /// reductions' paths, "reduce.*", included).
  static std::vector<std::string> kernel_paths();

  /// Writes the output C-contiguously to dst (dst_bytes bytes available). Parallel (TBB, in the
  /// caller's task arena) for large outputs, serial on the calling thread for small ones.
  /// Throws InvalidArgument (null src with a non-empty input, null dst with a non-empty output)
  /// or BufferTooSmall (dst_bytes < nbytes()); then dst is untouched.
  void execute(const void* src, void* dst, std::size_t dst_bytes) const;

  /// Allocates the output (as the allocating tile(): see Array) and writes it: a new Array of
  /// shape(). Into a fresh mapping of 32 MiB or more, under NonTemporal::automatic, with ordinary
  /// stores (its pages were just zeroed and are cached). Throws InvalidArgument (null src with a
  /// non-empty input) or std::bad_alloc.
  Array execute(const void* src) const;

  /// Writes one hyper-rectangular region of the output, C-contiguously, to dst: for each output
  /// axis i the output indices [start[i], start[i] + extent[i]), so region element [j0, j1, ...]
  /// is out[start[0] + j0, start[1] + j1, ...] (for tile: src[(start[0] + j0) % shape[0], ...]).
  /// Nothing outside the
  /// region is computed or written (one chunk of a chunked array). The region is
  /// prod(extent) * itemsize() bytes; start and extent hold ndim() values each, in elements.
  /// Serial on the calling thread (a region that is the whole output runs as execute(), in
  /// parallel), with ordinary stores whatever options().nontemporal says.
  /// Throws InvalidArgument (start or extent not ndim() values; a negative start or extent, or
  /// start + extent past the output's extent, naming the axis; null src with a non-empty input;
  /// null dst with a non-empty region) or BufferTooSmall (dst_bytes less than the region's
  /// bytes); then dst is untouched.
  void execute_region(const void* src, const Dims& start, const Dims& extent, void* dst,
                      std::size_t dst_bytes) const;

  /// Allocates one region of the output (as the allocating tile(): see Array) and writes it, as
  /// execute_region(src, start, extent, dst, dst_bytes): a new Array of shape `extent` — from
  /// tessera's allocator, so a region of 32 MiB or more gets 2 MiB-aligned, huge-page-advised
  /// memory or a block tessera_free kept (chunks made one after another reuse their pages). Serial
  /// on the calling thread. Throws InvalidArgument as execute_region (checked before anything is
  /// allocated) or std::bad_alloc.
  Array execute_region(const void* src, const Dims& start, const Dims& extent) const;

  /// Implementation access for the library itself.
  const detail::PlanData& data() const noexcept { return *data_; }

 private:
  explicit Plan(std::shared_ptr<const detail::PlanData> data) noexcept : data_(std::move(data)) {}
  std::shared_ptr<const detail::PlanData> data_;
};

/// An owning, 64-byte aligned, C-contiguous output of an allocating call (tile, broadcast_to,
/// expand, repeat, Plan::execute(src), Plan::execute_region(src, start, extent)). Move-only.
class TESSERA_API Array {
 public:
  Array() noexcept = default;
  Array(Array&&) noexcept = default;
  Array& operator=(Array&&) noexcept = default;

  /// Output shape in elements.
  const Dims& shape() const noexcept { return shape_; }
  int ndim() const noexcept { return shape_.size(); }
  /// Element count.
  int64_t size() const noexcept { return itemsize_ ? static_cast<int64_t>(nbytes_ / itemsize_) : 0; }
  std::size_t itemsize() const noexcept { return itemsize_; }
  /// Byte size.
  std::size_t nbytes() const noexcept { return nbytes_; }
  /// The bytes (null when the array is empty).
  void* data() noexcept { return data_.get(); }
  const void* data() const noexcept { return data_.get(); }
  /// The bytes viewed as T (the caller picks a T of size itemsize()).
  template <class T>
  T* data_as() noexcept {
    return static_cast<T*>(data_.get());
  }
  template <class T>
  const T* data_as() const noexcept {
    return static_cast<const T*>(data_.get());
  }
  /// Gives up ownership of the bytes (the caller frees them with tessera_free) and leaves the
  /// array empty (shape (), no bytes).
  void* release() noexcept {
    shape_ = Dims();
    itemsize_ = nbytes_ = 0;
    return data_.release();
  }

 private:
  struct Free {
    void operator()(void* p) const noexcept { tessera_free(p); }
  };
  friend struct detail::ArrayAccess;
  std::unique_ptr<void, Free> data_;
  Dims shape_;
  std::size_t itemsize_ = 0;
  std::size_t nbytes_ = 0;
};

/// One-shot tile into the caller's buffer: plans and executes (see Plan). Throws as Plan's
/// constructor and Plan::execute.
TESSERA_API void tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps,
                      void* dst, std::size_t dst_bytes);

/// One-shot tile under `options` (see Options). Throws as the one-shot tile, and InvalidArgument
/// for an invalid option.
TESSERA_API void tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps,
                      void* dst, std::size_t dst_bytes, const Options& options);

/// Allocating tile: returns a new Array holding tile(src, reps). Outputs of 32 MiB or more are 2 MiB
/// aligned with transparent huge pages advised, or reuse a block an earlier Array or
/// tessera_free released (see tessera_free in tessera.h). Throws as the one-shot tile, and
/// std::bad_alloc if the output cannot be allocated.
TESSERA_API Array tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize,
                       const Dims& reps);

/// Allocating tile under `options` (see Options). Throws as the allocating tile, and
/// InvalidArgument for an invalid option.
TESSERA_API Array tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize,
                       const Dims& reps, const Options& options);

/// One-shot broadcast_to into the caller's buffer (see Plan::broadcast_to and Plan::execute).
TESSERA_API void broadcast_to(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize,
                              const Dims& target, void* dst, std::size_t dst_bytes, const Options& options = {});
/// Allocating broadcast_to: a new Array (allocated as by the allocating tile).
TESSERA_API Array broadcast_to(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize,
                               const Dims& target, const Options& options = {});

/// One-shot expand into the caller's buffer (see Plan::expand and Plan::execute).
TESSERA_API void expand(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize,
                        const Dims& target, void* dst, std::size_t dst_bytes, const Options& options = {});
/// Allocating expand: a new Array (allocated as by the allocating tile).
TESSERA_API Array expand(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize,
                         const Dims& target, const Options& options = {});

/// One-shot repeat into the caller's buffer (see Plan::repeat and Plan::execute).
TESSERA_API void repeat(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize,
                        const Repeats& repeats, std::optional<int> axis, void* dst, std::size_t dst_bytes,
                        const Options& options = {});
/// Allocating repeat: a new Array (allocated as by the allocating tile).
TESSERA_API Array repeat(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize,
                         const Repeats& repeats, std::optional<int> axis = std::nullopt, const Options& options = {});

/// One-shot gradient of tile into the caller's buffer (see Plan::tile_backward): grad_in receives
/// prod(in_shape) elements of dtype, C-contiguous (grad_in_bytes available). Throws as
/// Plan::tile_backward and Plan::execute; on error grad_in is untouched.
TESSERA_API void tile_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype,
                               const Dims& in_shape, const Dims& reps, void* grad_in, std::size_t grad_in_bytes,
                               const Options& options = {});
/// Allocating gradient of tile: a new Array of in_shape (options.accumulate does not apply).
TESSERA_API Array tile_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype,
                                const Dims& in_shape, const Dims& reps, const Options& options = {});
/// One-shot sum_to_shape into the caller's buffer (see Plan::sum_to_shape).
TESSERA_API void sum_to_shape(const void* src, const Dims& shape, const Dims& strides, DType dtype,
                              const Dims& target, void* dst, std::size_t dst_bytes, const Options& options = {});
/// Allocating sum_to_shape: a new Array of shape target.
TESSERA_API Array sum_to_shape(const void* src, const Dims& shape, const Dims& strides, DType dtype,
                               const Dims& target, const Options& options = {});
/// One-shot gradient of repeat into the caller's buffer (see Plan::repeat_backward).
TESSERA_API void repeat_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype,
                                 const Dims& in_shape, const Repeats& repeats, std::optional<int> axis,
                                 void* grad_in, std::size_t grad_in_bytes, const Options& options = {});
/// Allocating gradient of repeat: a new Array of in_shape.
TESSERA_API Array repeat_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype,
                                  const Dims& in_shape, const Repeats& repeats,
                                  std::optional<int> axis = std::nullopt, const Options& options = {});

/// Name of the SIMD target the kernels dispatch to now (e.g. "AVX2", "SSE4", "SCALAR").
TESSERA_API const char* active_target() noexcept;

/// The library's version, "MAJOR.MINOR.PATCH".
TESSERA_API const char* version() noexcept;

/// The Highway targets tessera's kernels were compiled for (HWY_TARGETS of the library's build,
/// which the compiler, its flags and Highway's defaults decide), best first, by Highway's names
/// (hwy::TargetName: "AVX3", "AVX2", "SSE4", "SSSE3", "SCALAR", "NEON", "SVE", ...). Never empty.
/// Throws std::bad_alloc.
TESSERA_API std::vector<std::string> compiled_targets();

/// Those of compiled_targets() this CPU and OS support now (hwy::SupportedTargets(), from the
/// CPU's feature bits; narrowed by hwy::DisableTargets and hwy::SetSupportedTargetsForTest), best
/// first by Highway's order. Dispatch (active_target()) takes one of them, usually the first: not
/// always (Highway 1.0.3 takes SVE2 over SVE2_128 on a 128-bit SVE2 CPU). Never empty. Throws
/// std::bad_alloc.
TESSERA_API std::vector<std::string> supported_targets();

/// Bytes: the smallest output NonTemporal::automatic writes with streaming stores (Plan::execute
/// and execute_region; the allocating calls' new outputs of 32 MiB or more excepted, see
/// NonTemporal; a reduction's result streams from 2/3 of it, the gradient streaming through the
/// cache beside it). 3/4 of the last-level cache of CPU 0 (Linux sysfs), clamped to 4-256 MiB, 16 MiB
/// where sysfs does not say; on Intel CPUs with a last-level cache over 64 MiB (a Xeon's mesh L3,
/// which one core writes no faster than it streams to DRAM) four times the L2 instead, clamped
/// the same way; the environment variable TESSERA_STREAM_MIN_BYTES (a positive integer)
/// overrides. Computed on the first call (or first plan) and fixed for the process; that first
/// call reads sysfs and may throw std::bad_alloc.
TESSERA_API int64_t streaming_threshold_bytes();

/// Bytes of gradient the reductions (tile_backward, sum_to_shape, repeat_backward) prefetch ahead
/// of the item they are summing, where an item is one dense run of at most 4 KiB summed to one
/// output element or to a row of a few (on some cores also longer runs of single elements,
/// prefetched as they are summed) or, on some cores, the output rows' strips of at most 4 KiB;
/// 0: none, the hardware prefetchers alone. A property of the core, measured per kind: 16384 on
/// AMD CPU family 26 (Zen 5), whose prefetchers stop at each item's few lines per page (short
/// runs and strips), and on Intel CPUs with a last-level cache over 64 MiB (a Xeon's mesh L3:
/// short and long runs, and the strips of 2-8 short rows read one row after another, each line
/// prefetched as the same line of an earlier item is read, those 4096 bytes ahead instead; other
/// strips of short rows, all of a strip's lines 4096 bytes ahead, but on the cores reporting
/// family 6 model 167, where they are not prefetched); 0 on every other CPU (on
/// AMD family 25 any distance was slower). On those Intel CPUs but the ones reporting family 6
/// model 167, strips of rows longer than 4 KiB read a vector at a time across up to 8 rows also
/// have each row's line 2048 bytes on prefetched as the row is read, while that line lies in the
/// row, then the same row of the next strip from its start, and sums of more than 128 such
/// contiguous rows so 8 rows at a time, each 8 on into the next 8 (describe(): "prefetched 2048
/// bytes ahead along the rows"; the variable sets this distance too). Runs of per-element counts
/// summed in groups (float32 counts of at most 4) are prefetched min(this, 4096) bytes ahead, wherever this is not 0, into
/// L1; every other prefetch brings its line into L2. A plan's describe() says "prefetched N items ahead" where it prefetches, followed by
/// " along the rows" where it prefetches a strip's rows line by line, and ", spread among the
/// loads" where a periodic item's (or a long run's) lines are prefetched block by block as the
/// same block of the item summed is read, instead of an item or a leaf at once before it (only
/// on Intel cores reporting family 6 model 167, where that was measured faster; the variable
/// TESSERA_PREFETCH_SPREAD, 0 or 1, overrides it). The environment variable
/// TESSERA_PREFETCH_BYTES (decimal digits: a count of bytes, 0 for none) overrides, for every
/// kind of item (strips read row by row then prefetched along the rows on every core). Read on
/// the first call (or the first reduction plan) and fixed for the process; plans keep the
/// distance they were made with. Neither value changes a result's bits. Never throws.
TESSERA_API int64_t reduce_prefetch_bytes() noexcept;

/// Bytes: the most the allocating calls' block cache keeps of the outputs tessera_free released,
/// for reuse by the next allocating calls (only outputs of 32 MiB or more go to it; see
/// tessera_free in tessera.h). The last value of set_block_cache_limit, else the environment
/// variable TESSERA_ALLOC_CACHE_BYTES (decimal digits: a count of bytes), read once, on the first
/// allocating call or the first call of these block cache functions; 256 MiB where it is unset or
/// empty, and where it is not a count of bytes (then a warning naming the value goes to stderr);
/// 0: nothing is kept. The first call sets the cache up and may throw std::bad_alloc.
TESSERA_API std::size_t block_cache_limit_bytes();

/// Sets the block cache's bound to `bytes` (any value; 0 disables the cache) for the whole process,
/// from now on (block_cache_limit_bytes() returns it; TESSERA_ALLOC_CACHE_BYTES no longer counts).
/// Shrinking releases the kept blocks past the new bound, oldest first, before it returns: their
/// pages leave the process's resident memory at once. Blocks in use are not affected. Thread-safe.
/// Throws std::bad_alloc (the first call sets the cache up; nothing has changed then).
TESSERA_API void set_block_cache_limit(std::size_t bytes);

/// Seconds: how long the block cache keeps a freed block unused before it releases it (its pages
/// leave the process's resident memory). 10 unless set_block_cache_max_age changed it. Throws
/// std::bad_alloc (as block_cache_limit_bytes).
TESSERA_API double block_cache_max_age_seconds();

/// Sets how long a freed block is kept unused, in seconds: 0 <= seconds <= 86400 (one day); 0
/// releases every block when it is freed. Applies to the blocks already kept too: those at least
/// that old are released before it returns, the others when they reach it (a background thread of
/// the library sleeps until the oldest kept block's time, without waiting for a call). Thread-safe.
/// Throws InvalidArgument naming the value for a negative, too large or non-finite (NaN, infinite)
/// one, std::bad_alloc as set_block_cache_limit; nothing has changed then.
TESSERA_API void set_block_cache_max_age(double seconds);

}  // namespace tessera

#endif  // TESSERA_TESSERA_HPP
