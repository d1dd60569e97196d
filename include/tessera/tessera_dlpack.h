/*
 * tessera — tile for DLPack tensors (C99). A separate header, so that <tessera/tessera.h> does not
 * need <dlpack/dlpack.h>; available when tessera was built with DLPack (Debian: libdlpack-dev).
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
 *                        code (bool, int, uint, float, bfloat16, complex, ...: tile only moves
 *                        bytes); bits * lanes must be a positive multiple of 8, else
 *                        TESSERA_INVALID_ARGUMENT
 * Semantics, promotion and errors are those of tessera_tile (numpy.tile; see tessera.h).
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
 * src->ndim > 0; a count out of range; a negative extent or rep), TESSERA_OVERFLOW.
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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_TESSERA_DLPACK_H */
