/* C99 user of tessera's C API; see c_api_check.h. Compiled as C, so it also proves tessera.h is
 * valid C99. */
#include "c_api_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_string(char *dst, size_t cap, const char *src) {
  size_t n = src ? strlen(src) : 0;
  if (n >= cap) n = cap - 1;
  if (n) memcpy(dst, src, n);
  dst[n] = '\0';
}

void c_tile(const void *src, size_t itemsize, int ndim, const int64_t *shape, const int64_t *strides, int nreps,
            const int64_t *reps, void *out, size_t out_capacity, c_tile_info *info) {
  size_t count = 1;
  int i;
  void *dst;
  memset(info, 0, sizeof *info);
  info->shape_status = tessera_tile_shape(ndim, shape, nreps, reps, &info->ndim, info->shape);
  if (info->shape_status != TESSERA_OK) {
    info->status = info->shape_status;
    return;
  }
  for (i = 0; i < info->ndim; ++i) count *= (size_t)info->shape[i];
  info->nbytes = count * itemsize;
  /* malloc(0) may return NULL; tessera accepts a NULL dst for an empty output. */
  dst = info->nbytes ? malloc(info->nbytes) : NULL;
  if (info->nbytes && !dst) {
    info->status = TESSERA_OUT_OF_MEMORY;
    return;
  }
  info->status = tessera_tile(src, ndim, shape, strides, itemsize, nreps, reps, dst, info->nbytes);
  if (info->status == TESSERA_OK && info->nbytes <= out_capacity && info->nbytes) memcpy(out, dst, info->nbytes);
  free(dst);
}

void c_tile_alloc(const void *src, size_t itemsize, int ndim, const int64_t *shape, const int64_t *strides, int nreps,
                  const int64_t *reps, void *out, size_t out_capacity, c_tile_info *info) {
  void *data = NULL;
  memset(info, 0, sizeof *info);
  info->shape_status = TESSERA_OK;
  info->status = tessera_tile_alloc(src, ndim, shape, strides, itemsize, nreps, reps, &data, &info->nbytes, &info->ndim,
                                    info->shape);
  if (info->status != TESSERA_OK) return;
  info->aligned64 = ((uintptr_t)data % 64u) == 0;
  if (info->nbytes <= out_capacity && info->nbytes) memcpy(out, data, info->nbytes);
  tessera_free(data);
}

void c_plan_run(const void *src0, const void *src1, size_t itemsize, int ndim, const int64_t *shape,
                const int64_t *strides, int nreps, const int64_t *reps, void *dst0, void *dst1, size_t dst_bytes,
                c_plan_info *info) {
  tessera_plan *plan = NULL;
  memset(info, 0, sizeof *info);
  info->shape_status = info->execute_status[0] = info->execute_status[1] = -1;
  info->create_status = tessera_plan_create(ndim, shape, strides, itemsize, nreps, reps, &plan);
  if (info->create_status != TESSERA_OK) return;
  info->output_bytes = tessera_plan_output_bytes(plan);
  info->shape_status = tessera_plan_output_shape(plan, &info->ndim, info->shape);
  copy_string(info->describe, sizeof info->describe, tessera_plan_describe(plan));
  info->execute_status[0] = tessera_plan_execute(plan, src0, dst0, dst_bytes);
  info->execute_status[1] = tessera_plan_execute(plan, src1, dst1, dst_bytes);
  tessera_plan_destroy(plan);
}

void c_tile_expect_error(const void *src, size_t itemsize, int ndim, const int64_t *shape, int nreps,
                         const int64_t *reps, void *dst, size_t dst_bytes, c_error_info *info) {
  size_t i;
  memset(info, 0, sizeof *info);
  if (dst) memset(dst, 0x5A, dst_bytes);
  info->status = tessera_tile(src, ndim, shape, NULL, itemsize, nreps, reps, dst, dst_bytes);
  copy_string(info->message, sizeof info->message, tessera_last_error());
  info->dst_untouched = 1;
  if (dst) {
    const unsigned char *bytes = (const unsigned char *)dst;
    for (i = 0; i < dst_bytes; ++i)
      if (bytes[i] != 0x5A) info->dst_untouched = 0;
  }
}

void c_negative_rep_scenario(c_error_info *info) {
  const int16_t a[3] = {1, 2, 3};
  const int64_t shape[1] = {3};
  const int64_t reps[2] = {2, -3};
  int16_t dst[64];
  c_tile_expect_error(a, sizeof a[0], 1, shape, 2, reps, dst, sizeof dst, info);
}

const char *c_version(void) { return tessera_version(); }

int c_version_matches_macros(void) {
  char expected[64];
  snprintf(expected, sizeof expected, "%d.%d.%d", TESSERA_VERSION_MAJOR, TESSERA_VERSION_MINOR, TESSERA_VERSION_PATCH);
  return strcmp(expected, tessera_version()) == 0;
}

const char *c_active_target(void) { return tessera_active_target(); }

const char *c_last_error(void) { return tessera_last_error(); }
