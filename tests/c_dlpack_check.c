/*
 * <tessera/tessera_dlpack.h> used from C99 (test_dlpack.cpp runs c_dlpack_check): a transposed
 * float64 view, given with element strides and a byte_offset, tiled into a compact tensor, then
 * broadcast, expanded and repeated (per-element counts, with and without an axis); then the same
 * view as a gradient: tile_backward, sum_to_shape and repeat_backward, with options (accumulate),
 * and a dtype the reductions do not add.
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
  int64_t col_shape[2] = {3, 1}, bshape[2] = {3, 4}, target[1] = {4}, counts[3] = {2, 0, 1}, flat[1] = {18};
  int64_t rshape[2] = {3, 2};
  int64_t counts6[6] = {1, 2, 3, 4, 5, 3};

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
  dst.device.device_type = kDLCPU;

  /* broadcast_to(src[:, :1], (3, 4)) and expand(src[:, :1], (4,)): column 0 of the view, 1 2 3. */
  src.shape = col_shape;
  dst.shape = bshape;
  dst.ndim = 2;
  if (tessera_broadcast_to_dlpack(&src, &dst) != TESSERA_OK) return 7;
  for (i = 0; i < 12; ++i)
    if (out[i] != (double)(1 + i / 4)) return 8;
  for (i = 0; i < 12; ++i) out[i] = 0;
  if (tessera_expand_dlpack(&src, 1, target, &dst) != TESSERA_OK) return 9;
  for (i = 0; i < 12; ++i)
    if (out[i] != (double)(1 + i / 4)) return 10;

  /* repeat(view, (2, 0, 1), axis 0): rows 0, 0, 2 of [[1, 4], [2, 5], [3, 6]]. */
  src.shape = src_shape;
  dst.shape = rshape;
  if (tessera_repeat_dlpack(&src, 3, counts, 0, &dst) != TESSERA_OK) return 11;
  if (out[0] != 1 || out[1] != 4 || out[2] != 1 || out[3] != 4 || out[4] != 3 || out[5] != 6) return 12;
  /* repeat of the flattened view 1 4 2 5 3 6 by 1 2 3 4 5 3: 18 elements. */
  {
    double all[18];
    const double want[18] = {1, 4, 4, 2, 2, 2, 5, 5, 5, 5, 3, 3, 3, 3, 3, 6, 6, 6};
    dst.data = all;
    dst.ndim = 1;
    dst.shape = flat;
    if (tessera_repeat_dlpack(&src, 6, counts6, TESSERA_AXIS_NONE, &dst) != TESSERA_OK) return 13;
    for (i = 0; i < 18; ++i)
      if (all[i] != want[i]) return 14;
    /* a wrong dst shape is refused */
    flat[0] = 17;
    if (tessera_repeat_dlpack(&src, 6, counts6, TESSERA_AXIS_NONE, &dst) != TESSERA_INVALID_ARGUMENT) return 15;
  }
  /* The view [[1, 4], [2, 5], [3, 6]] as a gradient. */
  {
    double g[3];
    int64_t in31[2] = {3, 1}, in12[2] = {1, 2}, in22[2] = {2, 2};
    const int64_t reps12[2] = {1, 2}, counts21[2] = {2, 1};
    tessera_options options;
    src.shape = src_shape;
    dst = src;
    dst.data = g;
    dst.byte_offset = 0;
    dst.strides = NULL;
    /* tile_backward to (3, 1) by (1, 2): the row sums 5 7 9; accumulated: twice that. */
    dst.shape = in31;
    if (tessera_tile_backward_dlpack(&src, 2, reps12, &dst, NULL) != TESSERA_OK) return 16;
    if (g[0] != 5 || g[1] != 7 || g[2] != 9) return 17;
    tessera_options_init(&options);
    options.accumulate = 1;
    if (tessera_tile_backward_dlpack(&src, 2, reps12, &dst, &options) != TESSERA_OK) return 18;
    if (g[0] != 10 || g[1] != 14 || g[2] != 18) return 19;
    /* sum_to_shape to (1, 2): the column sums 6 15. */
    dst.shape = in12;
    if (tessera_sum_to_shape_dlpack(&src, &dst, NULL) != TESSERA_OK) return 20;
    if (g[0] != 6 || g[1] != 15) return 21;
    /* repeat_backward of repeat(A (2, 2), (2, 1), axis 0): rows 0 + 1, then row 2. */
    {
      double r[4];
      dst.data = r;
      dst.shape = in22;
      if (tessera_repeat_backward_dlpack(&src, 2, counts21, 0, &dst, NULL) != TESSERA_OK) return 22;
      if (r[0] != 3 || r[1] != 9 || r[2] != 3 || r[3] != 6) return 23;
    }
    /* A dtype the reductions do not add: refused, with a message. */
    dst.data = g;
    dst.shape = in31;
    src.dtype.lanes = 2;
    dst.dtype.lanes = 2;
    src.dtype.bits = 32;
    dst.dtype.bits = 32;
    if (tessera_tile_backward_dlpack(&src, 2, reps12, &dst, NULL) != TESSERA_INVALID_ARGUMENT) return 24;
    if (tessera_last_error()[0] == '\0') return 25;
    if (g[0] != 6 || g[1] != 15 || g[2] != 18) return 26; /* untouched: what the calls above left */
  }
  return 0;
}
