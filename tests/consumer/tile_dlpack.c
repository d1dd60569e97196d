/*
 * A C99 consumer of tessera's DLPack entry points (tests/consumer; <tessera/tessera_dlpack.h>,
 * which needs <dlpack/dlpack.h>: Debian libdlpack-dev): tiles a real int32 array given as a
 * DLTensor — a transposed view with element strides and a byte_offset — and a C-contiguous float
 * one, and checks every element. Prints one line; exits non-zero on any wrong result.
 */
#include <stdio.h>

#include <tessera/tessera_dlpack.h>

static int failures = 0;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "tile_dlpack: FAILED: %s (%s)\n", what, tessera_last_error());
    ++failures;
  }
}

static DLTensor tensor(void *data, uint64_t byte_offset, uint8_t code, int ndim, int64_t *shape, int64_t *strides) {
  DLTensor t;
  t.data = data;
  t.byte_offset = byte_offset;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype.code = code;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = strides;
  return t;
}

int main(void) {
  /* storage = [pad, 1, 2, 3, 4, 5, 6]: a = [[1, 2, 3], [4, 5, 6]] behind one padding element;
     src views a's transpose (3 x 2, element strides (1, 3)), tiled by (2, 3): 6 x 6. */
  int32_t storage[7] = {-1, 1, 2, 3, 4, 5, 6};
  int64_t src_shape[2] = {3, 2}, src_strides[2] = {1, 3}, reps[2] = {2, 3};
  int64_t out_shape[TESSERA_MAX_NDIM];
  int32_t out[6][6];
  int out_ndim = 0, i, j;
  DLTensor src = tensor(storage, sizeof(int32_t), kDLInt, 2, src_shape, src_strides), dst;

  expect(tessera_tile_dlpack_shape(&src, 2, reps, &out_ndim, out_shape) == TESSERA_OK && out_ndim == 2 &&
             out_shape[0] == 6 && out_shape[1] == 6,
         "tessera_tile_dlpack_shape (6, 6)");
  for (i = 0; i < 6; ++i)
    for (j = 0; j < 6; ++j) out[i][j] = -7;
  dst = tensor(out, 0, kDLInt, 2, out_shape, NULL);
  expect(tessera_tile_dlpack(&src, 2, reps, &dst) == TESSERA_OK, "tessera_tile_dlpack (int32 view)");
  for (i = 0; i < 6; ++i)
    for (j = 0; j < 6; ++j) expect(out[i][j] == 1 + i % 3 + 3 * (j % 2), "tessera_tile_dlpack output");

  {
    /* A C-contiguous float32 vector [0.5, 1.5, 2.5, 3.5] tiled by 3 with a leading axis of 2: 2 x 12. */
    float v[4] = {0.5f, 1.5f, 2.5f, 3.5f}, w[2][12];
    int64_t v_shape[1] = {4}, w_shape[2] = {2, 12}, wreps[2] = {2, 3};
    DLTensor vs = tensor(v, 0, kDLFloat, 1, v_shape, NULL), ws = tensor(w, 0, kDLFloat, 2, w_shape, NULL);
    expect(tessera_tile_dlpack(&vs, 2, wreps, &ws) == TESSERA_OK, "tessera_tile_dlpack (float32)");
    for (i = 0; i < 2; ++i)
      for (j = 0; j < 12; ++j) expect(w[i][j] == v[j % 4], "tessera_tile_dlpack float output");

    /* A dst of the wrong dtype is rejected, with a message, and left untouched. */
    ws.dtype.code = kDLInt;
    expect(tessera_tile_dlpack(&vs, 2, wreps, &ws) == TESSERA_INVALID_ARGUMENT && tessera_last_error()[0] != '\0',
           "a dst of another dtype is TESSERA_INVALID_ARGUMENT");
  }

  if (failures != 0) return 1;
  printf("tile_dlpack: OK (tessera %s, SIMD target %s): 3x2 int32 DLTensor view tiled by (2, 3) -> 6x6, "
         "row 5 = %d %d %d %d %d %d\n",
         tessera_version(), tessera_active_target(), (int)out[5][0], (int)out[5][1], (int)out[5][2], (int)out[5][3],
         (int)out[5][4], (int)out[5][5]);
  return 0;
}
