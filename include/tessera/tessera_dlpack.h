/*
 * tessera — tile, broadcast_to, expand and repeat, and their gradients (the reductions), for DLPack
 * tensors (C99; for C++17 also tessera::dlpack_view, at the end). A separate header, so that
 * <tessera/tessera.h> does not need <dlpack/dlpack.h>; available when tessera was built with DLPack
 * (Debian: libdlpack-dev).
 *
 * DLPack (https://dmlc.github.io/dlpack/latest/) is how NumPy, PyTorch, JAX and CuPy hand arrays
 * across library boundaries. A DLTensor describes its array as here:
 *   data + byte_offset   the address of element (0, ..., 0)
 *   device               must be the CPU (kDLCPU); any other device is TESSERA_INVALID_ARGUMENT
 *                        naming it (tessera reads and writes host memory only)
 *   ndim, shape          extents in elements (0 <= ndim <= TESSERA_MAX_NDIM)
 *   strides              in ELEMENTS (DLPack's convention, any sign), or NULL for C-contiguous;
 *                        tessera multiplies them by the itemsize to get its byte strides
 *   dtype                the element: itemsize = dtype.bits * dtype.lanes / 8 bytes, any type
 *                        code (bool, int, uint, float, bfloat16, complex, ...: tessera only
 *                        moves bytes); bits * lanes must be a positive multiple of 8, else
 *                        TESSERA_INVALID_ARGUMENT. The reductions (below) add, so they take only
 *                        the types of tessera_dtype, with one lane: kDLFloat 16/32/64, kDLBfloat
 *                        16, kDLComplex 64/128, kDLInt and kDLUInt 8/16/32/64
 * Semantics, promotion and errors are those of the calls of <tessera/tessera.h> (tessera_tile,
 * tessera_broadcast_to, tessera_expand, tessera_repeat), with their default options; the
 * reductions' (further down) are those of tessera_tile_backward_ex, tessera_sum_to_shape_ex and
 * tessera_repeat_backward_ex, with the options given.
 *
 * Every call of the family that writes takes the output as a DLTensor dst, which must be: a CPU
 * tensor with exactly src's dtype (code, bits and lanes), exactly the output's shape, and
 * C-contiguous (strides NULL, or the compact row-major strides in elements; the stride of an axis
 * of extent 1 is not looked at, nor are any strides of an empty output); its data + byte_offset
 * must hold the whole output (data may be NULL only when the output is empty, src's only when the
 * input is). The arguments are checked in this order, and the first bad one is reported: src and dst not
 * NULL, their devices, src's dtype, dst's dtype, src's ndim and shape, the call's own arguments
 * (reps, target, nrepeats and repeats; broadcast_to: dst's ndim and shape), src's strides (element strides times the itemsize must fit int64_t:
 * TESSERA_OVERFLOW), the planning (as the tessera.h call), dst's shape, dst's strides, the data
 * pointers. On any error nothing is written to dst, and tessera_last_error() names the problem.
 */
#ifndef TESSERA_TESSERA_DLPACK_H
#define TESSERA_TESSERA_DLPACK_H

#include <dlpack/dlpack.h>
#include <tessera/tessera.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Output shape of tile(src, reps): as tessera_tile_shape for src->ndim and src->shape (the only
 * fields read; src's data, device and dtype are not checked here). On success writes
 * *out_ndim = max(src->ndim, nreps) and out_shape[0 .. *out_ndim) — the shape to give dst.
 * Errors: TESSERA_INVALID_ARGUMENT (NULL src, out_ndim or out_shape; NULL src->shape with
 * src->ndim > 0; a count out of range; a negative extent or rep), TESSERA_OVERFLOW. Arguments are
 * checked in order (src, src->ndim and src->shape, reps, out_ndim, out_shape): the first bad one
 * is reported.
 */
TESSERA_API tessera_status tessera_tile_dlpack_shape(const DLTensor *src, int nreps, const int64_t *reps,
                                                     int *out_ndim, int64_t out_shape[TESSERA_MAX_NDIM]);

/**
 * Writes tile(src, reps) into dst.
 *
 * src:  a CPU tensor as described above (strided in any way, byte_offset honoured).
 * reps: nreps repetition counts (may be NULL when nreps == 0), as in tessera_tile.
 * dst:  a CPU tensor with exactly src's dtype (code, bits and lanes), exactly the output shape
 *       (tessera_tile_dlpack_shape), and C-contiguous: strides NULL, or the compact row-major
 *       strides (the stride of an axis of extent 1 is not looked at); its data + byte_offset must
 *       hold the whole output.
 * Errors: TESSERA_INVALID_ARGUMENT (NULL src or dst; a device other than the CPU; a dtype that is
 * not a whole number of bytes; a dst whose dtype, ndim, shape or strides do not match — the
 * message says which and shows both; NULL data with a non-empty tensor; and every error of
 * tessera_tile), TESSERA_OVERFLOW, TESSERA_OUT_OF_MEMORY, TESSERA_INTERNAL. On any error nothing
 * is written to dst.
 */
TESSERA_API tessera_status tessera_tile_dlpack(const DLTensor *src, int nreps, const int64_t *reps, DLTensor *dst);

/**
 * Writes broadcast_to(src, dst->shape) into dst — numpy.broadcast_to(src, dst.shape).copy(): the
 * output's shape is dst's own (dst->ndim >= src->ndim axes; src's axes, aligned with dst's trailing
 * axes, must each have extent 1 or dst's).
 *
 * src:  a CPU tensor as described above.
 * dst:  as described above; its shape is the target (any extents >= 0, dst->ndim <= TESSERA_MAX_NDIM).
 * Errors: TESSERA_INVALID_ARGUMENT (NULL src or dst; a device other than the CPU; a dtype that is
 * not a whole number of bytes, or dst's differing from src's; a count out of range or a NULL shape
 * with ndim > 0 in either tensor; dst->ndim < src->ndim, a negative extent, an axis that does not
 * broadcast — the message names the axis and both extents; dst's strides not C-contiguous; NULL
 * data with a non-empty tensor), TESSERA_OVERFLOW (src's byte strides, or the output's element
 * count or byte size, do not fit int64_t), TESSERA_OUT_OF_MEMORY, TESSERA_INTERNAL. On any error
 * nothing is written to dst.
 */
TESSERA_API tessera_status tessera_broadcast_to_dlpack(const DLTensor *src, DLTensor *dst);

/**
 * Writes expand(src, target) into dst — ONNX Expand: the numpy broadcast of src->shape and target
 * (the shorter promoted by prepending 1s; on each axis equal extents, or one of them 1). dst must
 * have exactly tessera_expand_shape(src->ndim, src->shape, target_ndim, target)'s shape.
 *
 * src:    a CPU tensor as described above.
 * target: target_ndim extents in elements (0 <= target_ndim <= TESSERA_MAX_NDIM; may be NULL when
 *         target_ndim == 0).
 * dst:    as described above, of the expanded shape.
 * Errors: TESSERA_INVALID_ARGUMENT (NULL src or dst; a device other than the CPU; a dtype that is
 * not a whole number of bytes, or dst's differing from src's; a count out of range or a NULL list
 * with a count > 0 — src's shape, target, dst's shape; a negative extent; an axis that does not
 * broadcast — the message names it; a dst whose shape or strides do not match — the message shows
 * both; NULL data with a non-empty tensor), TESSERA_OVERFLOW (src's byte strides, or the output's
 * element count or byte size, do not fit int64_t), TESSERA_OUT_OF_MEMORY, TESSERA_INTERNAL. On any
 * error nothing is written to dst.
 */
TESSERA_API tessera_status tessera_expand_dlpack(const DLTensor *src, int target_ndim, const int64_t *target,
                                                 DLTensor *dst);

/**
 * Writes repeat(src, repeats, axis) into dst — numpy.repeat, torch.repeat_interleave: each element
 * along `axis` written repeats times in a row. dst must have exactly
 * tessera_repeat_shape(src->ndim, src->shape, nrepeats, repeats, axis)'s shape.
 *
 * src:      a CPU tensor as described above.
 * repeats:  nrepeats counts in elements (nrepeats >= 0; repeats may be NULL when nrepeats == 0):
 *           one count for every element (nrepeats == 1), or one per element along the axis (the
 *           flattened input's size with no axis); each count >= 0.
 * axis:     in [-src->ndim, src->ndim) (negative counts from the end), or TESSERA_AXIS_NONE: the
 *           flattened input (C order), a 1-d output. A 0-d src also takes 0 and -1, as
 *           numpy.repeat does (its one element, flattened).
 * dst:      as described above, of the repeated shape.
 * Errors: TESSERA_INVALID_ARGUMENT (NULL src or dst; a device other than the CPU; a dtype that is
 * not a whole number of bytes, or dst's differing from src's; a count out of range or a NULL shape
 * with ndim > 0 in either tensor; a negative nrepeats, a NULL repeats with nrepeats > 0; an axis
 * out of range, nrepeats neither 1 nor the axis' extent, a negative count — each naming the value;
 * a dst whose shape or strides do not match — the message shows both; NULL data with a non-empty
 * tensor), TESSERA_OVERFLOW (src's byte strides, the sum of the counts, or the output's element
 * count or byte size, do not fit int64_t), TESSERA_OUT_OF_MEMORY, TESSERA_INTERNAL. On any error
 * nothing is written to dst.
 */
TESSERA_API tessera_status tessera_repeat_dlpack(const DLTensor *src, int64_t nrepeats, const int64_t *repeats,
                                                 int axis, DLTensor *dst);

/* ---------------------------------------------------------------------------------------------
 * The reductions (the gradients; tessera.h, "The reductions"): tessera_tile_backward,
 * tessera_sum_to_shape and tessera_repeat_backward for DLPack tensors. The gradient in (grad_out,
 * src) is a CPU tensor as described at the top, strided in any way; the result (grad_in, dst) is a
 * CPU tensor whose SHAPE IS THE CALL'S SHAPE ARGUMENT — in_shape of tessera_tile_backward and
 * tessera_repeat_backward, the target of tessera_sum_to_shape — with exactly the gradient's dtype,
 * C-contiguous (strides NULL, or the compact row-major strides in elements; the stride of an axis
 * of extent 1 is not looked at, nor are any strides of an empty result); its data + byte_offset
 * must hold the whole result (data may be NULL only when the result is empty, the gradient's only
 * when the gradient is). The dtype is one of the reductions' (see dtype above); it gives the
 * tessera_dtype:
 *   kDLFloat 16, 32, 64 -> TESSERA_FLOAT16, _FLOAT32, _FLOAT64      kDLBfloat 16 -> TESSERA_BFLOAT16
 *   kDLComplex 64, 128  -> TESSERA_COMPLEX64, _COMPLEX128
 *   kDLInt 8 .. 64      -> TESSERA_INT8 .. _INT64                   kDLUInt 8 .. 64 -> TESSERA_UINT8 .. _UINT64
 * (lanes 1); any other (kDLBool, kDLOpaqueHandle, lanes > 1, other bits) is
 * TESSERA_INVALID_ARGUMENT naming it. Accuracy, determinism and accumulate are those of tessera.h.
 *
 * options: NULL (the defaults) or a tessera_options as in tessera.h; max_threads, nontemporal and
 * accumulate apply (accumulate = 1 adds the result into what the result tensor holds);
 * negative_reps applies to tile_backward's reps and repeat_backward's counts, as in the forward call.
 *
 * The arguments are checked in this order, and the first bad one is reported: the two tensors not
 * NULL, their devices, the gradient's dtype (one of the reductions'), the result's dtype (the
 * same), the gradient's ndim and shape, the call's own list (reps; nrepeats and repeats), the
 * result's ndim and shape (0 <= ndim <= TESSERA_MAX_NDIM, shape not NULL when ndim > 0), the
 * gradient's strides (element strides times the itemsize must fit int64_t: TESSERA_OVERFLOW),
 * options (sizeof_options and accumulate; its other fields are the planning's first check), the
 * planning (as the tessera.h call: the forward operation's arguments, then the gradient's shape
 * against the forward output's), the result's strides, the data pointers. On any error nothing is
 * written to the result, and tessera_last_error() names the problem.
 * ------------------------------------------------------------------------------------------- */

/**
 * Writes the gradient of tile into grad_in: grad_in[i] = the sum of grad_out[j] over every j that
 * tile(A, reps) copied from A[i], A of grad_in's shape (tessera_tile_backward with
 * in_shape = grad_in->shape).
 *
 * grad_out: a CPU tensor of a reductions' dtype, strided in any way (byte_offset honoured); its
 *           shape must be tile_shape(grad_in->shape, reps) (tessera_tile_dlpack_shape of grad_in).
 * reps:     nreps repetition counts (may be NULL when nreps == 0), as in tessera_tile.
 * grad_in:  the result as described above; its shape is in_shape (grad_in->ndim axes; numpy.tile's
 *           promotion: leading axes of grad_out beyond it are summed away).
 * options:  NULL or as described above.
 * Errors: TESSERA_INVALID_ARGUMENT (NULL grad_out or grad_in; a device other than the CPU; a dtype
 * that is not a reductions' type, or grad_in's differing from grad_out's; a count out of range or a
 * NULL list with a count > 0 — grad_out's shape, reps, grad_in's shape; a negative extent or rep;
 * grad_out's shape not tile_shape(grad_in->shape, reps) — the message names the axis and both
 * extents; an invalid option; grad_in's strides not C-contiguous; NULL data with a non-empty
 * tensor), TESSERA_OVERFLOW (grad_out's byte strides, an element count or byte size that does not
 * fit int64_t), TESSERA_OUT_OF_MEMORY, TESSERA_INTERNAL. On any error nothing is written to grad_in.
 */
TESSERA_API tessera_status tessera_tile_backward_dlpack(const DLTensor *grad_out, int nreps, const int64_t *reps,
                                                        DLTensor *grad_in, const tessera_options *options);

/**
 * Writes sum_to_shape(src, dst->shape) into dst — torch.Tensor.sum_to_size, the gradient of
 * broadcast_to / expand (tessera_sum_to_shape with target = dst->shape): src summed over its leading
 * axes beyond dst's and over every axis where dst has extent 1 and src does not.
 *
 * src:     a CPU tensor of a reductions' dtype, strided in any way (byte_offset honoured).
 * dst:     the result as described above; its shape is the target (dst->ndim <= src->ndim axes,
 *          aligned with src's trailing axes, each extent equal to src's or 1).
 * options: NULL or as described above (negative_reps does not apply).
 * Errors: TESSERA_INVALID_ARGUMENT (NULL src or dst; a device other than the CPU; a dtype that is
 * not a reductions' type, or dst's differing from src's; a count out of range or a NULL shape with
 * ndim > 0 in either tensor; a negative extent; dst->ndim > src->ndim; an axis of dst that is
 * neither src's extent nor 1 — the message names the axis and both extents; an invalid option;
 * dst's strides not C-contiguous; NULL data with a non-empty tensor), TESSERA_OVERFLOW (src's byte
 * strides, an element count or byte size that does not fit int64_t), TESSERA_OUT_OF_MEMORY,
 * TESSERA_INTERNAL. On any error nothing is written to dst.
 */
TESSERA_API tessera_status tessera_sum_to_shape_dlpack(const DLTensor *src, DLTensor *dst,
                                                       const tessera_options *options);

/**
 * Writes the gradient of repeat into grad_in: grad_in[..., k, ...] = the sum of the repeats[k] (or
 * repeats[0]) consecutive elements of grad_out along `axis` that repeat wrote from A[..., k, ...],
 * A of grad_in's shape (tessera_repeat_backward with in_shape = grad_in->shape).
 *
 * grad_out: a CPU tensor of a reductions' dtype, strided in any way (byte_offset honoured); its
 *           shape must be tessera_repeat_shape(grad_in->ndim, grad_in->shape, nrepeats, repeats,
 *           axis) (1-d with TESSERA_AXIS_NONE).
 * repeats:  nrepeats counts (nrepeats >= 0; repeats may be NULL when nrepeats == 0), as in
 *           tessera_repeat_dlpack: one for every element, or one per element along the axis.
 * axis:     in [-grad_in->ndim, grad_in->ndim), or TESSERA_AXIS_NONE (the flattened A; a 0-d A also
 *           takes 0 and -1), as in tessera_repeat_dlpack.
 * grad_in:  the result as described above; its shape is in_shape.
 * options:  NULL or as described above.
 * Errors: TESSERA_INVALID_ARGUMENT (NULL grad_out or grad_in; a device other than the CPU; a dtype
 * that is not a reductions' type, or grad_in's differing from grad_out's; a count out of range or a
 * NULL shape with ndim > 0 in either tensor; a negative nrepeats, a NULL repeats with nrepeats > 0;
 * a negative extent; an axis out of range, nrepeats neither 1 nor the axis' extent, a negative
 * count — each naming the value; grad_out's shape not the repeated shape — naming the axis and
 * both extents; an invalid option; grad_in's strides not C-contiguous; NULL data with a non-empty
 * tensor), TESSERA_OVERFLOW (grad_out's byte strides, the sum of the counts, an element count or
 * byte size that does not fit int64_t), TESSERA_OUT_OF_MEMORY, TESSERA_INTERNAL. On any error
 * nothing is written to grad_in.
 */
TESSERA_API tessera_status tessera_repeat_backward_dlpack(const DLTensor *grad_out, int64_t nrepeats,
                                                          const int64_t *repeats, int axis, DLTensor *grad_in,
                                                          const tessera_options *options);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* C++17 (tessera.hpp): the translation above for other bindings, as a function. */
#if defined(__cplusplus) && __cplusplus >= 201703L
#include <tessera/tessera.hpp>

namespace tessera {

/// One DLTensor as tessera's C++ calls take it (the translation the entry points above make).
struct DLPackView {
  const void* data;       ///< data + byte_offset: the address of element (0, ..., 0); nullptr when data is NULL
  Dims shape;             ///< ndim extents, in elements
  Dims strides;           ///< byte strides (DLPack's element strides times itemsize); empty when the tensor's
                          ///< strides are NULL or it has no axis: C-contiguous
  std::size_t itemsize;   ///< bytes per element: dtype.bits * dtype.lanes / 8
  DLDataType dtype;       ///< as the tensor gives it; dtype_from_dlpack (tessera.hpp) maps it to a DType
};

/// Reads the DLTensor `t` as the entry points above read theirs, checking in this order: its
/// device (kDLCPU), its dtype (bits * lanes a positive multiple of 8), its ndim (0 to
/// TESSERA_MAX_NDIM) and shape (not NULL when ndim > 0), its byte strides (each element stride
/// times the itemsize must fit int64_t). `name` names the tensor in the messages ("src", "A",
/// ...), `function` the caller ("... reads and writes CPU memory only"). Throws InvalidArgument
/// (device, dtype, ndim, NULL shape) or Overflow (a byte stride), naming the field and its value;
/// the extents themselves are checked by the planning that takes the view.
TESSERA_API DLPackView dlpack_view(const DLTensor& t, const char* name, const char* function);

}  // namespace tessera
#endif

#endif /* TESSERA_TESSERA_DLPACK_H */
