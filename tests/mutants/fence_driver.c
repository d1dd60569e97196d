/* The program tests/mutants/fence_check.py runs under gdb: one small tile per streaming executor
 * path (TESSERA_NONTEMPORAL_ALWAYS, so a few KiB stream), serially, plus one threaded case; after
 * each call it calls fence_mark(), where the gdb script checks that every thread that executed a
 * non-temporal store executed a store fence after its last one. Each output is also compared with a
 * plain C reference (a wrong output exits 1), and each plan's path (tessera_plan_describe) must be
 * the one this file expects, so that a planner change cannot quietly move a case off its path.
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

typedef struct {
  const char *path; /* expected kernel path */
  int ndim;
  int64_t shape[3];
  int64_t strides[3]; /* in elements of the backing buffer; reversed axes are negative */
  size_t itemsize;
  int nreps;
  int64_t reps[3];
  int threads; /* max_threads */
} Case;

/* Strides are in itemsize units here (converted to bytes below); the view's first element sits
 * where every reversed (negative-stride) axis starts at its far end. */
static const Case kCases[] = {
    {"copy.nt.direct", 2, {2, 1100}, {1250, 1}, 4, 2, {1, 1}, 1},
    {"copy.nt", 2, {3, 100}, {125, 1}, 4, 2, {1, 1}, 1},
    {"pattern.long.nt.direct", 1, {1100}, {1}, 4, 1, {3}, 1},
    {"pattern.long.nt", 1, {100}, {1}, 4, 1, {8}, 1},
    {"pattern.short.nt", 1, {10}, {1}, 4, 1, {100}, 1},
    {"pattern.shuffle.nt", 1, {3}, {1}, 4, 1, {2000}, 1},
    {"fill.1.nt.direct", 2, {4, 1}, {1, 1}, 1, 2, {1, 256}, 1},
    {"fill.2.nt.direct", 2, {4, 1}, {1, 1}, 2, 2, {1, 128}, 1},
    {"fill.4.nt.direct", 2, {4, 1}, {1, 1}, 4, 2, {1, 64}, 1},
    {"fill.8.nt.direct", 2, {4, 1}, {1, 1}, 8, 2, {1, 32}, 1},
    {"fill.16.nt.direct", 2, {4, 1}, {1, 1}, 16, 2, {1, 16}, 1},
    {"fill.4.nt", 2, {4, 1}, {1, 1}, 4, 2, {1, 10}, 1},
    {"fill.any.nt", 2, {4, 1}, {1, 1}, 3, 2, {1, 100}, 1},
    /* transposed views (a source stride of 64 bytes or more along the row), rows of 256+ bytes:
       the blocked gather streams its tile's rows */
    {"gather.1.nt", 2, {64, 256}, {1, 64}, 1, 2, {2, 1}, 1},
    {"gather.2.nt", 2, {32, 128}, {1, 32}, 2, 2, {2, 1}, 1},
    {"gather.4.nt", 2, {16, 64}, {1, 16}, 4, 2, {2, 1}, 1},
    {"gather.8.nt", 2, {8, 32}, {1, 8}, 8, 2, {2, 1}, 1},
    {"gather.16.nt", 2, {4, 16}, {1, 4}, 16, 2, {2, 1}, 1},
    {"gather.any.nt", 2, {8, 22}, {1, 8}, 12, 2, {2, 1}, 1},
    {"gather.4.nt", 2, {16, 64}, {1, -16}, 4, 2, {2, 1}, 1}, /* reversed rows */
    /* threaded: 1.3 MiB (over the executor's 512 KiB), at most 2 threads */
    {"pattern.long.nt.direct", 1, {1100}, {1}, 4, 1, {300}, 2},
};

/* The element at multi-index idx of the view (C order over shape), by hand. */
static const unsigned char *element(const unsigned char *first, const Case *c, const int64_t *idx) {
  int64_t off = 0;
  for (int i = 0; i < c->ndim; ++i) off += idx[i] * c->strides[i] * (int64_t)c->itemsize;
  return first + off;
}

static int run_case(int id, const Case *c) {
  /* The backing buffer: big enough for every stride used above, with the view's first element
   * placed so that negative strides stay inside it. */
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < c->ndim; ++i) {
    const int64_t span = (c->shape[i] - 1) * c->strides[i];
    if (span < 0) lo += span; else hi += span;
  }
  const size_t n_backing = (size_t)(hi - lo + 1) * c->itemsize;
  unsigned char *backing = malloc(n_backing);
  for (size_t i = 0; i < n_backing; ++i) backing[i] = (unsigned char)(i * 131u + 7u);
  const unsigned char *first = backing + (size_t)(-lo) * c->itemsize;

  int64_t strides[3];
  for (int i = 0; i < c->ndim; ++i) strides[i] = c->strides[i] * (int64_t)c->itemsize;
  tessera_options opt;
  tessera_options_init(&opt);
  opt.nontemporal = TESSERA_NONTEMPORAL_ALWAYS;
  opt.max_threads = c->threads;
  tessera_plan *plan = NULL;
  if (tessera_plan_create_ex(c->ndim, c->shape, strides, c->itemsize, c->nreps, c->reps, &opt, &plan) != TESSERA_OK) {
    fprintf(stderr, "fence_driver: case %d: plan: %s\n", id, tessera_last_error());
    return 1;
  }
  const char *d = tessera_plan_describe(plan);
  const char *open = strstr(d, "kernel: ");
  open = open ? strchr(open, '[') : NULL;
  char path[64] = "";
  if (open) sscanf(open + 1, "%63[^]]", path);
  if (strcmp(path, c->path) != 0) {
    fprintf(stderr, "fence_driver: case %d takes path '%s', not '%s' (update fence_driver.c)\n%s", id, path,
            c->path, d);
    return 1;
  }
  const size_t nbytes = tessera_plan_output_bytes(plan);
  unsigned char *out = aligned_alloc(64, (nbytes + 63) / 64 * 64);
  memset(out, 0xCD, nbytes);
  const int status = tessera_plan_execute(plan, first, out, nbytes);
  fence_mark(id, c->path);
  if (status != TESSERA_OK) {
    fprintf(stderr, "fence_driver: case %d: execute: %s\n", id, tessera_last_error());
    return 1;
  }
  /* Reference: out[j0, j1, ...] = in[j0 % shape0, j1 % shape1, ...] over the promoted shape. */
  int out_ndim = 0;
  int64_t out_shape[TESSERA_MAX_NDIM];
  tessera_plan_output_shape(plan, &out_ndim, out_shape);
  const int pad = out_ndim - c->ndim;
  int64_t oidx[TESSERA_MAX_NDIM] = {0};
  int bad = 0;
  for (size_t e = 0; e < nbytes / c->itemsize; ++e) {
    int64_t idx[3];
    for (int i = 0; i < c->ndim; ++i) idx[i] = oidx[pad + i] % c->shape[i];
    if (memcmp(out + e * c->itemsize, element(first, c, idx), c->itemsize) != 0) {
      fprintf(stderr, "fence_driver: case %d (%s): output element %zu is wrong\n", id, c->path, e);
      bad = 1;
      break;
    }
    for (int i = out_ndim - 1; i >= 0 && ++oidx[i] == out_shape[i]; --i) oidx[i] = 0;
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
  printf("fence_driver: %d cases, target %s: %s\n", n, tessera_active_target(), failed ? "FAILED" : "ran");
  return failed;
}
