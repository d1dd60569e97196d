// DLPack entry points (<tessera/tessera_dlpack.h>) for tile, broadcast_to, expand and repeat: a
// DLTensor is translated into what the C++ API takes — data + byte_offset, the shape, byte strides
// (DLPack's element strides times the itemsize) and the itemsize (dtype.bits * dtype.lanes / 8) —
// the operation is planned (tessera::Plan), and dst is checked against the plan's output (CPU
// device, same dtype, exactly the output shape, C-contiguous) before anything is written. Every
// entry point checks its arguments in the order the header documents (check_tensors, the
// operation's own arguments, byte_strides, the plan, execute_into).
// The reductions (tile_backward, sum_to_shape, repeat_backward) take the DLPack dtype as a
// tessera::DType (dtype_from_dlpack: lib/dtype.cpp's table) and the result's shape as the call's
// shape argument (in_shape, target), and the options (c_options); the same order
// (check_reduce_tensors, the operation's own arguments, the result's shape, byte_strides, the
// options, the plan, execute_reduce_into).
// Each entry point is one call of a driver per kind, copy_dlpack or reduce_dlpack, which read the
// operation's row of the table (its name, its argument kind) and plan it with Plan::make.
// tessera::dlpack_view (the header's C++ part) is the same translation of one tensor in one call,
// for other bindings (the Python extension).
// Compiled only when tessera is built with DLPack (lib/meson.build).
#include <tessera/tessera_dlpack.h>

#include "c_api.hpp"
#include "error.hpp"

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

namespace tessera::detail {
namespace {

std::string device_name(int32_t type) {
  switch (type) {  // DLDeviceType (dlpack.h 0.6 and later)
    case 1: return "CPU";
    case 2: return "CUDA";
    case 3: return "CUDAHost";
    case 4: return "OpenCL";
    case 7: return "Vulkan";
    case 8: return "Metal";
    case 9: return "VPI";
    case 10: return "ROCM";
    case 11: return "ROCMHost";
    case 12: return "ExtDev";
    case 13: return "CUDAManaged";
    case 14: return "OneAPI";
    case 15: return "WebGPU";
    case 16: return "Hexagon";
    default: return "unknown";
  }
}

std::string dtype_name(const DLDataType& t) {
  static const char* const kCodes[] = {"int", "uint", "float", "opaque handle", "bfloat", "complex", "bool"};
  std::string s = t.code < sizeof kCodes / sizeof kCodes[0] ? kCodes[t.code] : "code " + std::to_string(t.code);
  s += std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

// The device type as stored. A C caller may store any value (newer DLPack versions add device
// types past the range of this header's enum), which C++ must not load as a DLDeviceType.
int32_t device_type(const DLDevice& d) {
  static_assert(sizeof d.device_type == sizeof(int32_t), "DLDeviceType is stored as a 32-bit int");
  int32_t v;
  std::memcpy(&v, &d.device_type, sizeof v);
  return v;
}

void check_cpu(const DLTensor& t, const char* which, const char* function) {
  const int32_t type = device_type(t.device);
  if (type != kDLCPU)
    invalid(std::string(which) + " is on device " + device_name(type) + " (device_type " + std::to_string(type) +
            ", device_id " + std::to_string(t.device.device_id) + "); " + function +
            " reads and writes CPU memory only (kDLCPU)");
}

std::size_t itemsize_of(const DLDataType& t, const char* which) {
  const uint32_t bits = uint32_t{t.bits} * t.lanes;
  if (bits == 0 || bits % 8 != 0)
    invalid(std::string(which) + " dtype " + dtype_name(t) + " has " + std::to_string(bits) +
            " bits per element, not a positive whole number of bytes");
  return bits / 8;
}

Dims shape_of(const DLTensor& t, const char* which) {
  return c_dims(t.ndim, t.shape, (std::string(which) + "->shape").c_str(), (std::string(which) + "->ndim").c_str());
}

/// Address of element (0, ..., 0): data + byte_offset (data may be null only for an empty tensor,
/// which the executor checks).
template <class Byte>
Byte* origin(Byte* data, uint64_t byte_offset) {
  return data == nullptr ? nullptr : data + byte_offset;
}

// src's element size (bytes) and shape (elements).
struct Source {
  std::size_t itemsize;
  Dims shape;
};

// What every entry point checks first, in this order: both tensors given, both on the CPU, src's
// dtype a whole number of bytes and dst's the same; then src's ndim and shape.
Source check_tensors(const DLTensor* src, const DLTensor* dst, const char* function) {
  c_require(src, "src");
  c_require(dst, "dst");
  check_cpu(*src, "src", function);
  check_cpu(*dst, "dst", function);
  const std::size_t itemsize = itemsize_of(src->dtype, "src");
  if (dst->dtype.code != src->dtype.code || dst->dtype.bits != src->dtype.bits || dst->dtype.lanes != src->dtype.lanes)
    invalid("dst dtype " + dtype_name(dst->dtype) + " differs from src dtype " + dtype_name(src->dtype));
  return {itemsize, shape_of(*src, "src")};
}

// src's element strides as byte strides (empty: C-contiguous); Overflow naming the axis (`which`
// names the tensor).
Dims byte_strides(const DLTensor& src, const Source& in, const char* which = "src") {
  if (src.strides == nullptr || in.shape.size() == 0) return Dims();
  int64_t bytes[TESSERA_MAX_NDIM];
  for (int i = 0; i < in.shape.size(); ++i)
    if (__builtin_mul_overflow(src.strides[i], static_cast<int64_t>(in.itemsize), &bytes[i]))
      throw Overflow("tessera: " + std::string(which) + "->strides[" + std::to_string(i) + "] = " +
                     std::to_string(src.strides[i]) + " elements of " + std::to_string(in.itemsize) +
                     " bytes overflows int64");
  return Dims(bytes, static_cast<std::size_t>(in.shape.size()));
}

// A non-empty output of the plan's shape must be C-contiguous in `dst` (`which` names it).
void check_compact(const Plan& plan, const DLTensor& dst, const char* which) {
  const Dims& out = plan.shape();
  if (dst.strides == nullptr || plan.size() == 0) return;  // an empty output has no layout to check
  int64_t expected[TESSERA_MAX_NDIM];
  int64_t step = 1;
  bool compact = true;
  for (int i = out.size() - 1; i >= 0; --i) {
    expected[i] = step;
    compact = compact && (out[i] <= 1 || dst.strides[i] == step);  // an extent-1 axis' stride is never used
    step *= out[i];  // at most the output's element count
  }
  if (!compact)
    invalid(std::string(which) + " is not C-contiguous: strides " + dims_str(out.size(), dst.strides) +
            " (elements) but shape " + dims_str(out.size(), out.data()) + " needs " + dims_str(out.size(), expected) +
            " or NULL");
}

// dst must be exactly the plan's output, C-contiguous (`op` names the operation in the message,
// e.g. "tile(src, reps)"); then the plan runs from src's data into dst's.
void execute_into(const Plan& plan, const DLTensor& src, const DLTensor& dst, const char* op) {
  const Dims& out = plan.shape();
  const Dims dst_shape = shape_of(dst, "dst");
  if (dst_shape != out)
    invalid("dst has shape " + dims_str(dst_shape.size(), dst_shape.data()) + " but " + op + " has shape " +
            dims_str(out.size(), out.data()));
  check_compact(plan, dst, "dst");
  plan.execute(origin(static_cast<const unsigned char*>(src.data), src.byte_offset),
               origin(static_cast<unsigned char*>(dst.data), dst.byte_offset), plan.nbytes());
}

// ---- The reductions ----------------------------------------------------------------------------

// The gradient in: its tessera_dtype, and its itemsize and shape.
struct Gradient {
  DType dtype;
  Source src;
};

// What every reduction checks first, in this order: both tensors given, both on the CPU, the
// gradient's dtype one of the reductions' and the result's the same; then the gradient's ndim and
// shape.
Gradient check_reduce_tensors(const DLTensor* in, const DLTensor* out, const char* in_name, const char* out_name,
                              const char* function) {
  c_require(in, in_name);
  c_require(out, out_name);
  check_cpu(*in, in_name, function);
  check_cpu(*out, out_name, function);
  const std::optional<DType> dtype = dtype_from_dlpack(in->dtype.code, in->dtype.bits, in->dtype.lanes);
  if (!dtype)
    invalid(std::string(in_name) + " dtype " + dtype_name(in->dtype) + " (code " + std::to_string(in->dtype.code) +
            ", bits " + std::to_string(in->dtype.bits) + ", lanes " + std::to_string(in->dtype.lanes) +
            ") is not a type " + function +
            " adds: one lane of kDLFloat 16/32/64, kDLBfloat 16, kDLComplex 64/128, kDLInt or kDLUInt 8/16/32/64");
  if (out->dtype.code != in->dtype.code || out->dtype.bits != in->dtype.bits || out->dtype.lanes != in->dtype.lanes)
    invalid(std::string(out_name) + " dtype " + dtype_name(out->dtype) + " differs from " + in_name + " dtype " +
            dtype_name(in->dtype));
  return {*dtype, {itemsize_of(*dtype), shape_of(*in, in_name)}};
}

// The result of a reduction plan: C-contiguous in `out` (its shape is the plan's by construction),
// both data pointers present where their tensors are not empty; then the plan runs from in's data
// into out's (adding into it under options.accumulate).
void execute_reduce_into(const Plan& plan, const DLTensor& in, const DLTensor& out, const char* in_name,
                         const char* out_name) {
  check_compact(plan, out, out_name);
  if (in.data == nullptr && plan.input_size() > 0)
    invalid(std::string(in_name) + "->data is NULL but " + in_name + " has " + std::to_string(plan.input_size()) +
            " elements");
  if (out.data == nullptr && plan.nbytes() > 0)
    invalid(std::string(out_name) + "->data is NULL but the result has " + std::to_string(plan.nbytes()) + " bytes");
  plan.execute(origin(static_cast<const unsigned char*>(in.data), in.byte_offset),
               origin(static_cast<unsigned char*>(out.data), out.byte_offset), plan.nbytes());
}

// ---- One driver per kind, for every row of the operation table ----------------------------------

// The entry point's name for messages: "tessera_<operation>_dlpack".
std::string entry_point(Operation op) { return std::string("tessera_") + operation_info(op).name + "_dlpack"; }

// A copy (tile, broadcast_to, expand, repeat) from src into dst, in the header's order:
// check_tensors, the call's own arguments (`read_args`, returning them as Arguments), src's byte
// strides, the plan (Plan::make), execute_into (`call` names the operation in its messages).
template <class ReadArgs>
void copy_dlpack(Operation op, const DLTensor* src, DLTensor* dst, const ReadArgs& read_args, const char* call) {
  const Source in = check_tensors(src, dst, entry_point(op).c_str());
  const Arguments args = read_args();
  const Dims strides = byte_strides(*src, in);
  execute_into(Plan::make(op, in.shape, strides, in.itemsize, args), *src, *dst, call);
}

// A reduction (tile_backward, sum_to_shape, repeat_backward) from the gradient `in` into the
// result `out`, in the header's order: check_reduce_tensors, the call's own list (`read_args`),
// the result's shape (the target of an operation whose argument is a shape, else in_shape), the
// gradient's byte strides, the options, the plan (Plan::make), execute_reduce_into. The tensors
// are "src" and "dst" where the result's shape is the argument, else "grad_out" and "grad_in".
template <class ReadArgs>
void reduce_dlpack(Operation op, const DLTensor* in, DLTensor* out, const tessera_options* options,
                   const ReadArgs& read_args) {
  const bool to_target = operation_info(op).arg == ArgKind::shape;
  const char* in_name = to_target ? "src" : "grad_out";
  const char* out_name = to_target ? "dst" : "grad_in";
  const Gradient g = check_reduce_tensors(in, out, in_name, out_name, entry_point(op).c_str());
  Arguments args = read_args();
  (to_target ? args.dims : args.in_shape) = shape_of(*out, out_name);
  const Dims strides = byte_strides(*in, g.src, in_name);
  const Options o = c_options(options);
  args.dtype = g.dtype;
  execute_reduce_into(Plan::make(op, g.src.shape, strides, g.src.itemsize, args, o), *in, *out, in_name, out_name);
}

// The Arguments of reps (`nreps` values at `reps`), or of repeat counts and an axis.
Arguments reps_arguments(int nreps, const int64_t* reps) {
  Arguments a;
  a.dims = c_dims(nreps, reps, "reps", "nreps");
  return a;
}
Arguments repeat_arguments(int64_t nrepeats, const int64_t* repeats, int axis) {
  Arguments a;
  a.repeats = c_repeats(nrepeats, repeats);
  a.axis = c_axis(axis);
  return a;
}

}  // namespace
}  // namespace tessera::detail

namespace tessera {

DLPackView dlpack_view(const DLTensor& t, const char* name, const char* function) {
  using namespace detail;
  check_cpu(t, name, function);
  const Source in{itemsize_of(t.dtype, name), shape_of(t, name)};
  Dims strides = byte_strides(t, in, name);
  return {origin(static_cast<const unsigned char*>(t.data), t.byte_offset), in.shape, std::move(strides), in.itemsize,
          t.dtype};
}

}  // namespace tessera

using tessera::detail::c_dims;
using tessera::detail::c_guarded;
using tessera::detail::c_require;
using tessera::detail::c_write_shape;

extern "C" {

tessera_status tessera_tile_dlpack_shape(const DLTensor* src, int nreps, const int64_t* reps, int* out_ndim,
                                         int64_t out_shape[TESSERA_MAX_NDIM]) {
  return c_guarded([&] {
    c_require(src, "src");
    const tessera::Dims shape = tessera::detail::shape_of(*src, "src");
    const tessera::Dims r = c_dims(nreps, reps, "reps", "nreps");
    c_require(out_ndim, "out_ndim");
    c_require(out_shape, "out_shape");
    c_write_shape(tessera::tile_shape(shape, r), out_ndim, out_shape);
  });
}

tessera_status tessera_tile_dlpack(const DLTensor* src, int nreps, const int64_t* reps, DLTensor* dst) {
  using namespace tessera::detail;
  return c_guarded([&] {
    copy_dlpack(tessera::Operation::tile, src, dst, [&] { return reps_arguments(nreps, reps); }, "tile(src, reps)");
  });
}

tessera_status tessera_broadcast_to_dlpack(const DLTensor* src, DLTensor* dst) {
  using namespace tessera::detail;
  return c_guarded([&] {
    const auto target = [&] {
      tessera::Arguments a;
      a.dims = shape_of(*dst, "dst");
      return a;
    };
    copy_dlpack(tessera::Operation::broadcast_to, src, dst, target, "broadcast_to(src, dst->shape)");
  });
}

tessera_status tessera_expand_dlpack(const DLTensor* src, int target_ndim, const int64_t* target, DLTensor* dst) {
  using namespace tessera::detail;
  return c_guarded([&] {
    const auto read = [&] {
      tessera::Arguments a;
      a.dims = c_dims(target_ndim, target, "target", "target_ndim");
      return a;
    };
    copy_dlpack(tessera::Operation::expand, src, dst, read, "expand(src, target)");
  });
}

tessera_status tessera_repeat_dlpack(const DLTensor* src, int64_t nrepeats, const int64_t* repeats, int axis,
                                     DLTensor* dst) {
  using namespace tessera::detail;
  return c_guarded([&] {
    copy_dlpack(tessera::Operation::repeat, src, dst, [&] { return repeat_arguments(nrepeats, repeats, axis); },
                axis == TESSERA_AXIS_NONE ? "repeat(src, repeats) (no axis)" : "repeat(src, repeats, axis)");
  });
}

tessera_status tessera_tile_backward_dlpack(const DLTensor* grad_out, int nreps, const int64_t* reps,
                                            DLTensor* grad_in, const tessera_options* options) {
  using namespace tessera::detail;
  return c_guarded([&] {
    reduce_dlpack(tessera::Operation::tile_backward, grad_out, grad_in, options,
                  [&] { return reps_arguments(nreps, reps); });
  });
}

tessera_status tessera_sum_to_shape_dlpack(const DLTensor* src, DLTensor* dst, const tessera_options* options) {
  using namespace tessera::detail;
  return c_guarded(
      [&] { reduce_dlpack(tessera::Operation::sum_to_shape, src, dst, options, [] { return tessera::Arguments(); }); });
}

tessera_status tessera_repeat_backward_dlpack(const DLTensor* grad_out, int64_t nrepeats, const int64_t* repeats,
                                              int axis, DLTensor* grad_in, const tessera_options* options) {
  using namespace tessera::detail;
  return c_guarded([&] {
    reduce_dlpack(tessera::Operation::repeat_backward, grad_out, grad_in, options,
                  [&] { return repeat_arguments(nrepeats, repeats, axis); });
  });
}

}  // extern "C"
