/*
 * A C99 consumer of tessera (tests/consumer): tiles a real array through the C API — one-shot,
 * a plan with options, an output region — and checks every element. Prints one line; exits
 * non-zero on any wrong result.
 */
#include <stdio.h>
#include <string.h>

#include <tessera/tessera.h>

static int failures = 0;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "tile_c: FAILED: %s (%s)\n", what, tessera_last_error());
    ++failures;
  }
}

int main(void) {
  /* a = [[1, 2, 3], [4, 5, 6]] (int32), tiled by (2, 2): a 4 x 6 output. */
  const int32_t a[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const int64_t shape[2] = {2, 3}, reps[2] = {2, 2};
  int32_t out[4][6];
  int i, j;
  char version[32];

  snprintf(version, sizeof version, "%d.%d.%d", TESSERA_VERSION_MAJOR, TESSERA_VERSION_MINOR, TESSERA_VERSION_PATCH);
  expect(strcmp(version, tessera_version()) == 0, "tessera_version() matches the header");

  memset(out, 0, sizeof out);
  expect(tessera_tile(a, 2, shape, NULL, sizeof(int32_t), 2, reps, out, sizeof out) == TESSERA_OK, "tessera_tile");
  for (i = 0; i < 4; ++i)
    for (j = 0; j < 6; ++j) expect(out[i][j] == a[i % 2][j % 3], "tessera_tile output");

  {
    /* A plan with options: one thread, negative reps act as 0 (OpenVINO Tile-1), ordinary stores. */
    tessera_options options;
    tessera_plan *plan = NULL;
    const int64_t clamp_reps[3] = {-1, 2, 2};
    int ndim = 0;
    int64_t out_shape[TESSERA_MAX_NDIM];
    tessera_options_init(&options);
    options.max_threads = 1;
    options.negative_reps = TESSERA_NEGATIVE_REPS_CLAMP_TO_ZERO;
    options.nontemporal = TESSERA_NONTEMPORAL_NEVER;
    expect(tessera_plan_create_ex(2, shape, NULL, sizeof(int32_t), 3, clamp_reps, &options, &plan) == TESSERA_OK,
           "tessera_plan_create_ex");
    if (plan != NULL) {
      expect(tessera_plan_output_shape(plan, &ndim, out_shape) == TESSERA_OK && ndim == 3 && out_shape[0] == 0 &&
                 out_shape[1] == 4 && out_shape[2] == 6 && tessera_plan_output_bytes(plan) == 0,
             "clamped output shape (0, 4, 6)");
      tessera_plan_destroy(plan);
    }
    expect(tessera_tile_ex(a, 2, shape, NULL, sizeof(int32_t), 3, clamp_reps, NULL, 0, NULL) ==
               TESSERA_INVALID_ARGUMENT,
           "a negative rep is an error by default");
  }

  {
    /* An output region: rows 1..2, columns 2..5 of the 4 x 6 output. */
    tessera_plan *plan = NULL;
    const int64_t start[2] = {1, 2}, extent[2] = {2, 4};
    int32_t region[2][4];
    expect(tessera_plan_create(2, shape, NULL, sizeof(int32_t), 2, reps, &plan) == TESSERA_OK, "tessera_plan_create");
    if (plan != NULL) {
      expect(tessera_plan_execute_region(plan, a, start, extent, region, sizeof region) == TESSERA_OK,
             "tessera_plan_execute_region");
      for (i = 0; i < 2; ++i)
        for (j = 0; j < 4; ++j) expect(region[i][j] == out[1 + i][2 + j], "region output");
      tessera_plan_destroy(plan);
    }
  }

  if (failures != 0) return 1;
  printf("tile_c: OK (tessera %s, SIMD target %s): 2x3 int32 tiled by (2, 2) -> 4x6, row 3 = %d %d %d %d %d %d\n",
         tessera_version(), tessera_active_target(), out[3][0], out[3][1], out[3][2], out[3][3], out[3][4], out[3][5]);
  return 0;
}
