/*
 * <tessera/tessera_dlpack.h> used from C99 (test_dlpack.cpp runs c_dlpack_check): a transposed
 * float64 view, given with element strides and a byte_offset, tiled into a compact tensor.
 */
#include <tessera/tessera_dlpack.h>

int c_dlpack_check(void);

int c_dlpack_check(void) {
  /* a = [[1, 2, 3], [4, 5, 6]]; src views its transpose (3, 2) behind one padding element. */
  double storage[7] = {-1, 1, 2, 3, 4, 5, 6};
  int64_t src_shape[2] = {3, 2}, src_strides[2] = {1, 3};
  int64_t reps[1] = {2};
  int64_t out_shape[TESSERA_MAX_NDIM];
  double out[12];
  int out_ndim = 0, i, j;
  DLTensor src, dst;

  src.data = storage;
  src.byte_offset = sizeof(double);
  src.device.device_type = kDLCPU;
  src.device.device_id = 0;
  src.ndim = 2;
  src.dtype.code = kDLFloat;
  src.dtype.bits = 64;
  src.dtype.lanes = 1;
  src.shape = src_shape;
  src.strides = src_strides;

  if (tessera_tile_dlpack_shape(&src, 1, reps, &out_ndim, out_shape) != TESSERA_OK) return 1;
  if (out_ndim != 2 || out_shape[0] != 3 || out_shape[1] != 4) return 2;

  dst = src;
  dst.data = out;
  dst.byte_offset = 0;
  dst.shape = out_shape;
  dst.strides = NULL;
  if (tessera_tile_dlpack(&src, 1, reps, &dst) != TESSERA_OK) return 3;
  for (i = 0; i < 3; ++i)
    for (j = 0; j < 4; ++j)
      if (out[i * 4 + j] != (double)(1 + i + 3 * (j % 2))) return 4;

  dst.device.device_type = kDLCUDA; /* rejected, with a message */
  if (tessera_tile_dlpack(&src, 1, reps, &dst) != TESSERA_INVALID_ARGUMENT) return 5;
  if (tessera_last_error()[0] == '\0') return 6;
  return 0;
}
