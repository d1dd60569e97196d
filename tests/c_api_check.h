/*
 * Functions of tests/c_api_check.c, a C99 translation unit that uses tessera's C API the way a C
 * program would. They do the calls and return what they saw; the doctest cases check the results.
 */
#ifndef TESSERA_TESTS_C_API_CHECK_H
#define TESSERA_TESTS_C_API_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <tessera/tessera.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a tiling call reported. */
typedef struct c_tile_info {
  int status;                      /* of the first call that failed, or TESSERA_OK */
  int shape_status;                /* of tessera_tile_shape */
  int ndim;                        /* output rank from tessera_tile_shape (or the alloc call) */
  int64_t shape[TESSERA_MAX_NDIM]; /* output shape */
  size_t nbytes;                   /* output bytes */
  int aligned64;                   /* tessera_tile_alloc only: data was 64-byte aligned (or NULL) */
} c_tile_info;

/* tessera_tile_shape, then tessera_tile into a malloc'ed buffer of exactly the output's size, then
 * copies the output into out (at most out_capacity bytes). strides may be NULL. */
void c_tile(const void *src, size_t itemsize, int ndim, const int64_t *shape, const int64_t *strides, int nreps,
            const int64_t *reps, void *out, size_t out_capacity, c_tile_info *info);

/* tessera_tile_alloc, copies the output into out, then tessera_free. */
void c_tile_alloc(const void *src, size_t itemsize, int ndim, const int64_t *shape, const int64_t *strides, int nreps,
                  const int64_t *reps, void *out, size_t out_capacity, c_tile_info *info);

/* What one plan's life reported. */
typedef struct c_plan_info {
  int create_status;
  int shape_status;
  int execute_status[2];
  size_t output_bytes;
  int ndim;
  int64_t shape[TESSERA_MAX_NDIM];
  char describe[2048]; /* copy of tessera_plan_describe (truncated) */
} c_plan_info;

/* tessera_plan_create, output_bytes, output_shape, describe, then executes the plan twice (src0 into
 * dst0, src1 into dst1, each dst_bytes long), then tessera_plan_destroy. */
void c_plan_run(const void *src0, const void *src1, size_t itemsize, int ndim, const int64_t *shape,
                const int64_t *strides, int nreps, const int64_t *reps, void *dst0, void *dst1, size_t dst_bytes,
                c_plan_info *info);

/* What a failing call reported. */
typedef struct c_error_info {
  int status;
  int dst_untouched; /* 1 if every byte of dst equals what it held before the call */
  char message[512]; /* copy of tessera_last_error() after the call */
} c_error_info;

/* tessera_tile on a buffer pre-filled with 0x5A, expecting a failure: reports the status, the
 * message and whether dst kept its contents. dst may be NULL (then dst_untouched is 1). */
void c_tile_expect_error(const void *src, size_t itemsize, int ndim, const int64_t *shape, int nreps,
                         const int64_t *reps, void *dst, size_t dst_bytes, c_error_info *info);

/* A fixed scenario: tile the C array {1, 2, 3} (int16) by reps (2, -3). Reports as above. */
void c_negative_rep_scenario(c_error_info *info);

/* tessera_version(), and whether it equals "MAJOR.MINOR.PATCH" built from the TESSERA_VERSION_*
 * macros (1 or 0). */
const char *c_version(void);
int c_version_matches_macros(void);

/* tessera_active_target() and tessera_last_error() seen from C. */
const char *c_active_target(void);
const char *c_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESTS_C_API_CHECK_H */
