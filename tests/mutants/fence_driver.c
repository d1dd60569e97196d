/* The program tests/mutants/fence_check.py runs under gdb: one small call per streaming executor
 * path (TESSERA_NONTEMPORAL_ALWAYS, so a few KiB stream), serially, plus one threaded case and
 * three streamed reductions; after each call it calls fence_mark(), where the gdb script checks that every
 * thread that executed a non-temporal store executed a store fence after its last one. Each output
 * is also compared with a plain C reference (a wrong output exits 1), and each plan's path
 * (tessera_plan_describe) must be the one its case names: every case says which planner rule puts
 * it on its path, and a planner change that moves a case elsewhere fails with that rule, the path
 * taken and the plan's description, never silently. Every case runs (a wrong one does not stop the
 * others); fence_check.py also fails unless every streaming path paths.hpp lists has a case here.
 *
 * Build: cc -std=c11 -O1 -I<src>/include fence_driver.c -L<build>/lib -ltessera -Wl,-rpath,<build>/lib
 * Exit status 0 if every case ran, with its expected path and output.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

/* Where the gdb script stops after each call (case_id -1: before the first). */
__attribute__((noinline, used)) void fence_mark(int case_id, const char *path) {
  __asm__ volatile("" ::"r"(case_id), "r"(path) : "memory");
}

enum Op { TILE, REPEAT, TILE_BACKWARD, REPEAT_BACKWARD };

typedef struct {
  const char *path; /* expected kernel path (tessera_plan_describe's "kernel: ... [path]") */
  const char *why;  /* the planner's rule that puts this case on that path */
  enum Op op;
  int ndim;
  int64_t shape[3];
  int64_t strides[3]; /* in elements of the backing buffer; reversed axes are negative */
  size_t itemsize;
  int nreps;
  int64_t reps[1200]; /* TILE: reps; REPEAT: the counts along axis 0 of a 1-d input (nreps of them);
                         TILE_BACKWARD: the forward tile's reps (float32 gradient of shape * reps);
                         REPEAT_BACKWARD: the forward repeat's counts (float32 gradient of their sum) */
  int threads;        /* max_threads */
} Case;

/* Strides are in itemsize units here (converted to bytes below); the view's first element sits
 * where every reversed (negative-stride) axis starts at its far end. The planner's rules quoted
 * below are lib/planner.cpp's choose_kernel / choose_path (kRepeatMaxBytes 64, kRepeatShuffleMaxReps
 * 8, kDirectStreamBytes 4096, kShuffleDirectRowBytes 256, kLineBytes 64, kLongRunBytes). */
static const Case kCases[] = {
    {"copy.nt.direct", "contiguous rows of 4400 B >= kDirectStreamBytes", TILE, 2, {2, 1100}, {1250, 1}, 4, 2, {1, 1}, 1},
    {"copy.nt", "contiguous rows of 400 B < kDirectStreamBytes: staged", TILE, 2, {3, 100}, {125, 1}, 4, 2, {1, 1}, 1},
    {"pattern.long.nt.direct", "a run of 4400 B >= kDirectStreamBytes repeated", TILE, 1, {1100}, {1}, 4, 1, {3}, 1},
    {"pattern.long.nt", "a long run of 400 B repeated: staged", TILE, 1, {100}, {1}, 4, 1, {8}, 1},
    {"pattern.short.nt", "a run of 40 B (too long for a shuffle) repeated 100x", TILE, 1, {10}, {1}, 4, 1, {100}, 1},
    {"pattern.shuffle.nt", "rows of a 12 B run, 120 B each (< kShuffleDirectRowBytes 256): staged", TILE, 2, {300, 3},
     {3, 1}, 4, 2, {1, 10}, 1},
    {"pattern.shuffle.nt.direct", "a run of 12 B repeated into 24 KB (a row >= kShuffleDirectRowBytes)", TILE, 1, {3},
     {1}, 4, 1, {2000}, 1},
    /* fills: an element repeated into >= kRepeatMaxBytes (64 B) of output, 1-16 B elements; rows of
       whole cache lines stream straight from a register (.direct), other rows are staged */
    {"fill.1.nt.direct", "1 B x 256 = 4 lines per row", TILE, 2, {4, 1}, {1, 1}, 1, 2, {1, 256}, 1},
    {"fill.2.nt.direct", "2 B x 128 = 4 lines per row", TILE, 2, {4, 1}, {1, 1}, 2, 2, {1, 128}, 1},
    {"fill.4.nt.direct", "4 B x 64 = 4 lines per row", TILE, 2, {4, 1}, {1, 1}, 4, 2, {1, 64}, 1},
    {"fill.8.nt.direct", "8 B x 32 = 4 lines per row", TILE, 2, {4, 1}, {1, 1}, 8, 2, {1, 32}, 1},
    {"fill.16.nt.direct", "16 B x 16 = 4 lines per row", TILE, 2, {4, 1}, {1, 1}, 16, 2, {1, 16}, 1},
    {"fill.1.nt", "1 B x 100 = 100 B >= 64 B, not whole lines", TILE, 2, {4, 1}, {1, 1}, 1, 2, {1, 100}, 1},
    {"fill.2.nt", "2 B x 50 = 100 B >= 64 B, not whole lines", TILE, 2, {4, 1}, {1, 1}, 2, 2, {1, 50}, 1},
    {"fill.4.nt", "4 B x 20 = 80 B >= 64 B, not whole lines", TILE, 2, {4, 1}, {1, 1}, 4, 2, {1, 20}, 1},
    {"fill.8.nt", "8 B x 10 = 80 B >= 64 B (10 > 8 reps: no shuffle), not whole lines", TILE, 2, {4, 1}, {1, 1}, 8, 2,
     {1, 10}, 1},
    {"fill.16.nt", "16 B x 5 = 80 B (16 B elements never shuffle), not whole lines", TILE, 2, {4, 1}, {1, 1}, 16, 2,
     {1, 5}, 1},
    {"fill.any.nt", "3 B elements x 100 (no fill.3)", TILE, 2, {4, 1}, {1, 1}, 3, 2, {1, 100}, 1},
    /* element repeats shorter than kRepeatMaxBytes: whole source rows repeated element-wise */
    {"repeat.elements.nt", "a tile repeating each 4 B element 10x = 40 B < 64 B (10 > 8 reps: no shuffle)", TILE, 2,
     {4, 1}, {1, 1}, 4, 2, {1, 10}, 1},
    {"repeat.shuffle.nt", "contiguous 2 B elements, each repeated 4x (2-8 reps of 1-8 B: shuffle tables; 1-2 B staged)",
     REPEAT, 1, {1000}, {1}, 2, 1, {4}, 1},
    {"repeat.shuffle.nt.direct", "contiguous 4 B elements, each repeated 4x: a row of 16000 B >= kDirectStreamBytes",
     REPEAT, 1, {1000}, {1}, 4, 1, {4}, 1},
    {"repeat.elements.nt", "contiguous 2 B elements, each repeated 12x = 24 B < 64 B (12 > 8 reps)", REPEAT, 1,
     {300}, {1}, 2, 1, {12}, 1},
    {"segments.nt", "per-element counts (0, 1, 2, 3, 0, 1, ...)", REPEAT, 1, {12}, {1}, 4, 12,
     {0, 1, 2, 3, 0, 1, 2, 3, 5, 7, 11, 13}, 1},
    /* transposed views (a source stride of 64 bytes or more along the row), rows of 256+ bytes:
       the blocked gather streams its tile's rows */
    {"gather.1.nt", "1 B elements 64 B apart along the row", TILE, 2, {64, 256}, {1, 64}, 1, 2, {2, 1}, 1},
    {"gather.2.nt", "2 B elements 64 B apart along the row", TILE, 2, {32, 128}, {1, 32}, 2, 2, {2, 1}, 1},
    {"gather.4.nt", "4 B elements 64 B apart along the row", TILE, 2, {16, 64}, {1, 16}, 4, 2, {2, 1}, 1},
    {"gather.8.nt", "8 B elements 64 B apart along the row", TILE, 2, {8, 32}, {1, 8}, 8, 2, {2, 1}, 1},
    {"gather.16.nt", "16 B elements 64 B apart along the row", TILE, 2, {4, 16}, {1, 4}, 16, 2, {2, 1}, 1},
    {"gather.any.nt", "12 B elements 96 B apart along the row", TILE, 2, {8, 22}, {1, 8}, 12, 2, {2, 1}, 1},
    {"gather.4.nt", "4 B elements 64 B apart along the row, reversed rows", TILE, 2, {16, 64}, {1, -16}, 4, 2,
     {2, 1}, 1},
    /* threaded: 1.3 MiB (over the executor's 512 KiB), at most 2 threads */
    {"pattern.long.nt.direct", "a run of 4400 B repeated 300x, 2 threads", TILE, 1, {1100}, {1}, 4, 1, {300}, 2},
    /* a reduction whose result (4 KiB of float32) is streamed: 8 addends per element, a contiguous
       innermost kept axis */
    {"reduce.lanes", "the gradient of a (1, 1024) float32 tiled (8, 1): 8 contiguous addend rows", TILE_BACKWARD, 2,
     {1, 1024}, {1024, 1}, 4, 2, {8, 1}, 1},
    /* per-element counts of at most 4 float32 elements: segments_runs' groups stream their results */
    {"reduce.segments", "the gradient of a (40,) float32 repeated by counts 0-4: segment groups", REPEAT_BACKWARD, 1,
     {40}, {1}, 4, 40, {0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2,
                        0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2}, 1},
    /* per-element counts of rows: each segment by its own sub-problem, the range fenced once */
    {"reduce.segments", "the gradient of a (4, 64) float32 repeated by counts (2, 0, 3, 1) along axis 0: rows",
     REPEAT_BACKWARD, 2, {4, 64}, {64, 1}, 4, 4, {2, 0, 3, 1}, 1},
};

/* The element at multi-index idx of the view (C order over shape), by hand. */
static const unsigned char *element(const unsigned char *first, const Case *c, const int64_t *idx) {
  int64_t off = 0;
  for (int i = 0; i < c->ndim; ++i) off += idx[i] * c->strides[i] * (int64_t)c->itemsize;
  return first + off;
}

/* The plan of case c over the view at `first` (with byte strides), or NULL (reported). */
static tessera_plan *plan_case(int id, const Case *c, const int64_t *strides, const tessera_options *opt) {
  tessera_plan *plan = NULL;
  tessera_status st = TESSERA_OK;
  if (c->op == TILE) {
    st = tessera_plan_create_ex(c->ndim, c->shape, strides, c->itemsize, c->nreps, c->reps, opt, &plan);
  } else if (c->op == REPEAT) {
    st = tessera_plan_create_repeat(c->ndim, c->shape, strides, c->itemsize, c->nreps, c->reps, 0, opt, &plan);
  } else if (c->op == REPEAT_BACKWARD) {  /* along axis 0 */
    int64_t grad[3] = {0, c->ndim > 1 ? c->shape[1] : 0, 0};
    for (int k = 0; k < c->nreps; ++k) grad[0] += c->reps[k];
    st = tessera_plan_create_repeat_backward(c->ndim, grad, NULL, TESSERA_FLOAT32, c->ndim, c->shape, c->nreps, c->reps,
                                             0, opt, &plan);
  } else {
    int64_t grad[3];
    for (int i = 0; i < c->ndim; ++i) grad[i] = c->shape[i] * c->reps[i];
    st = tessera_plan_create_tile_backward(c->ndim, grad, NULL, TESSERA_FLOAT32, c->ndim, c->shape, c->nreps, c->reps,
                                           opt, &plan);
  }
  if (st != TESSERA_OK) {
    fprintf(stderr, "fence_driver: case %d (%s: %s): plan: %s\n", id, c->path, c->why, tessera_last_error());
    return NULL;
  }
  return plan;
}

/* The path in a plan's description: "kernel: <kernel> [<path>]" for the copying operations,
 * "kernel: <path> (...)" for a reduction. */
static void path_of(const char *d, char *path, size_t size) {
  path[0] = '\0';
  const char *k = strstr(d, "kernel: ");
  if (!k) return;
  k += strlen("kernel: ");
  const char *open = strchr(k, '[');
  const char *eol = strchr(k, '\n');
  if (open && (!eol || open < eol)) {
    sscanf(open + 1, "%63[^]]", path);
  } else {
    sscanf(k, "%63[^ (\n]", path);
  }
  (void)size;
}

/* Compares out (nbytes) with the reference of case c; returns 0 if equal. */
static int check_output(int id, const Case *c, const unsigned char *first, const unsigned char *out, size_t nbytes,
                        const tessera_plan *plan) {
  const size_t isz = c->itemsize;
  if (c->op == REPEAT) {  /* 1-d, contiguous: element k repeated reps[k] times (one count: each) */
    size_t e = 0;
    for (int64_t k = 0; k < c->shape[0]; ++k) {
      const int64_t r = c->nreps == 1 ? c->reps[0] : c->reps[k];
      for (int64_t t = 0; t < r; ++t, ++e)
        if (e * isz >= nbytes || memcmp(out + e * isz, first + k * isz, isz) != 0) goto wrong;
    }
    if (e * isz != nbytes) goto wrong;
    return 0;
  }
  if (c->op == TILE_BACKWARD) {  /* out[j] = the sum of the reps' replicas of element j (small integers: exact) */
    const float *g = (const float *)first;
    const int64_t w = c->shape[c->ndim - 1];
    for (int64_t j = 0; j < (int64_t)(nbytes / 4); ++j) {
      float want = 0.0f, got;
      for (int64_t q = 0; q < c->reps[0]; ++q) want += g[q * w + j];
      memcpy(&got, out + j * 4, 4);
      if (got != want) goto wrong;
    }
    return 0;
  }
  if (c->op == REPEAT_BACKWARD) {  /* out[k, j] = the sum of segment k's rows' element j (small integers: exact) */
    const float *g = (const float *)first;
    const int64_t w = c->ndim > 1 ? c->shape[1] : 1;
    int64_t at = 0;  /* segment k's first row */
    for (int64_t k = 0; k < c->shape[0]; ++k) {
      for (int64_t j = 0; j < w; ++j) {
        float want = 0.0f, got;
        for (int64_t t = 0; t < c->reps[k]; ++t) want += g[(at + t) * w + j];
        memcpy(&got, out + (k * w + j) * 4, 4);
        if ((size_t)(k * w + j + 1) * 4 > nbytes || got != want) goto wrong;
      }
      at += c->reps[k];
    }
    return 0;
  }
  /* TILE: out[j0, j1, ...] = in[j0 % shape0, j1 % shape1, ...] over the promoted shape. */
  int out_ndim = 0;
  int64_t out_shape[TESSERA_MAX_NDIM];
  tessera_plan_output_shape(plan, &out_ndim, out_shape);
  const int pad = out_ndim - c->ndim;
  int64_t oidx[TESSERA_MAX_NDIM] = {0};
  for (size_t e = 0; e < nbytes / isz; ++e) {
    int64_t idx[3];
    for (int i = 0; i < c->ndim; ++i) idx[i] = oidx[pad + i] % c->shape[i];
    if (memcmp(out + e * isz, element(first, c, idx), isz) != 0) goto wrong;
    for (int i = out_ndim - 1; i >= 0 && ++oidx[i] == out_shape[i]; --i) oidx[i] = 0;
  }
  return 0;
wrong:
  fprintf(stderr, "fence_driver: case %d (%s: %s): the output is wrong\n", id, c->path, c->why);
  return 1;
}

static int run_case(int id, const Case *c) {
  /* The backing buffer: big enough for every stride used above (a tile_backward's: its whole
   * gradient), with the view's first element placed so that negative strides stay inside it. */
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < c->ndim; ++i) {
    int64_t extent = c->op == TILE_BACKWARD ? c->shape[i] * c->reps[i] : c->shape[i];
    if (c->op == REPEAT_BACKWARD && i == 0)
      for (int k = extent = 0; k < c->nreps; ++k) extent += c->reps[k];
    const int64_t span = (extent - 1) * c->strides[i];
    if (span < 0) lo += span; else hi += span;
  }
  const size_t n_backing = (size_t)(hi - lo + 1) * c->itemsize;
  unsigned char *backing = malloc(n_backing);
  if (c->op == TILE_BACKWARD || c->op == REPEAT_BACKWARD) {
    float *f = (float *)backing;
    for (size_t i = 0; i < n_backing / 4; ++i) f[i] = (float)((int)(i * 37u % 101u) - 50);
  } else {
    for (size_t i = 0; i < n_backing; ++i) backing[i] = (unsigned char)(i * 131u + 7u);
  }
  const unsigned char *first = backing + (size_t)(-lo) * c->itemsize;

  int64_t strides[3];
  for (int i = 0; i < c->ndim; ++i) strides[i] = c->strides[i] * (int64_t)c->itemsize;
  tessera_options opt;
  tessera_options_init(&opt);
  opt.nontemporal = TESSERA_NONTEMPORAL_ALWAYS;
  opt.max_threads = c->threads;
  tessera_plan *plan = plan_case(id, c, strides, &opt);
  if (!plan) {
    free(backing);
    return 1;
  }
  const char *d = tessera_plan_describe(plan);
  char path[64];
  path_of(d, path, sizeof path);
  if (strcmp(path, c->path) != 0) {
    fprintf(stderr,
            "fence_driver: case %d is meant for path '%s' (%s) but takes '%s': the planner's rules changed; "
            "change the case so that it takes '%s' again (or name the path it now checks)\n%s\n",
            id, c->path, c->why, path, c->path, d);
    tessera_plan_destroy(plan);
    free(backing);
    return 1;
  }
  const size_t nbytes = tessera_plan_output_bytes(plan);
  unsigned char *out = aligned_alloc(64, (nbytes + 63) / 64 * 64);
  memset(out, 0xCD, nbytes);
  const int status = tessera_plan_execute(plan, first, out, nbytes);
  fence_mark(id, c->path);
  int bad = 0;
  if (status != TESSERA_OK) {
    fprintf(stderr, "fence_driver: case %d (%s): execute: %s\n", id, c->path, tessera_last_error());
    bad = 1;
  } else {
    bad = check_output(id, c, first, out, nbytes, plan);
  }
  free(out);
  free(backing);
  tessera_plan_destroy(plan);
  return bad;
}

int main(void) {
  fence_mark(-1, "");
  int failed = 0;
  const int n = (int)(sizeof kCases / sizeof kCases[0]);
  for (int i = 0; i < n; ++i) failed |= run_case(i, &kCases[i]);
  /* One more with its counts filled in here (too many to list): 1100 counts 0, 1, 2, 3, 4, 0, ... */
  static Case many = {"segments.nt.direct",
                      "per-element counts 0-4 of 4 B elements, walked as one-byte counts: a row of 8800 B",
                      REPEAT, 1, {1100}, {1}, 4, 1100, {0}, 1};
  for (int k = 0; k < many.nreps; ++k) many.reps[k] = k % 5;
  failed |= run_case(n, &many);
  printf("fence_driver: %d cases, target %s: %s\n", n + 1, tessera_active_target(), failed ? "FAILED" : "ran");
  return failed;
}
