/*
 * tessera — a SIMD + multithreaded CPU kernel for the array tile operation.
 *
 * C99 interface. No C++ exception ever crosses it: every call that can fail returns a
 * tessera_status, and tessera_last_error() gives the message of the last failure on the calling
 * thread.
 *
 * The replication family: tile (below), broadcast_to, expand and repeat (further down).
 *
 * Semantics of tile (numpy.tile; also mx.nd.tile, OpenVINO Tile-1, ONNX Tile, torch.tile):
 *   - out_ndim = max(ndim, nreps). The shorter of shape and reps is promoted by PREPENDING 1s:
 *     shape (2,3) with reps (2,2,2) acts as shape (1,2,3); reps (2,2) on a 4-d array acts as
 *     (1,1,2,2).
 *   - out_shape[i] = shape[i] * reps[i];  out[i0, i1, ...] = src[i0 % shape[0], i1 % shape[1], ...].
 *   - A zero rep gives an empty output (valid; nothing is written). A negative rep is an error.
 *   - nreps == 0 gives a copy of the input; a 0-d input (ndim == 0) is one element.
 *
 * Units: shapes, reps and element counts are in ELEMENTS; strides, itemsize and buffer sizes are
 * in BYTES (numpy's convention for strides). Strides may be negative or zero.
 *
 * What the caller must guarantee (tessera cannot check it): for every in-range index, the byte
 * address src + sum(index[i] * strides[i]) .. + itemsize lies inside the caller's source buffer;
 * dst points to at least dst_bytes writable bytes; src and dst do not overlap.
 *
 * On any error, nothing is written to dst.
 *
 * Options (tessera_options, the *_ex calls) choose the number of threads, what a negative rep
 * means (numpy's error, or OpenVINO Tile-1's "acts as 0") and whether the output is written with
 * non-temporal stores. The calls without _ex use the defaults. Output regions
 * (tessera_plan_execute_region) compute one hyper-rectangle of a plan's output. DLPack tensors
 * are accepted by the separate header <tessera/tessera_dlpack.h>.
 */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(TESSERA_SHARED)
#  if defined(TESSERA_BUILDING)
#    define TESSERA_API __declspec(dllexport)
#  else
#    define TESSERA_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define TESSERA_API __attribute__((visibility("default")))
#else
#  define TESSERA_API
#endif

#define TESSERA_VERSION_MAJOR 0
#define TESSERA_VERSION_MINOR 1
#define TESSERA_VERSION_PATCH 0

/** Largest number of axes of an input, of reps, and so of an output. */
#define TESSERA_MAX_NDIM 64

#ifdef __cplusplus
extern "C" {
#endif

/** Result of every fallible call. */
typedef enum tessera_status {
  TESSERA_OK = 0,
  TESSERA_INVALID_ARGUMENT = 1,  /* negative reps or extents, itemsize 0, ndim/nreps out of range, null pointer */
  TESSERA_OVERFLOW = 2,          /* output element count or byte size does not fit int64_t / size_t */
  TESSERA_BUFFER_TOO_SMALL = 3,  /* dst_bytes is less than the output's byte size */
  TESSERA_OUT_OF_MEMORY = 4,
  TESSERA_INTERNAL = 5
} tessera_status;

/** What a negative rep means (tessera_options.negative_reps). */
typedef enum tessera_negative_reps {
  TESSERA_NEGATIVE_REPS_ERROR = 0,        /* TESSERA_INVALID_ARGUMENT naming the axis (numpy.tile; the default) */
  TESSERA_NEGATIVE_REPS_CLAMP_TO_ZERO = 1 /* a negative rep acts as 0: that output axis is empty (OpenVINO Tile-1) */
} tessera_negative_reps;

/**
 * Whether the output is written with non-temporal (streaming) stores, which bypass the caches: a
 * win when the output is much larger than the last-level cache and is not read again soon
 * (tessera_options.nontemporal; the same values as tessera::NonTemporal). The bytes written are
 * the same either way.
 */
typedef enum tessera_nontemporal {
  TESSERA_NONTEMPORAL_AUTO = 0,   /* streaming stores for outputs of at least 3/4 of the last-level
                                     cache, clamped to 4-256 MiB (four times the L2 on Intel CPUs with
                                     a last-level cache over 64 MiB, a Xeon's mesh L3; 16 MiB where
                                     Linux sysfs does not say; the environment variable
                                     TESSERA_STREAM_MIN_BYTES, read once, overrides) (the default);
                                     the allocating calls write new outputs of 32 MiB or more in
                                     fresh pages with ordinary stores (just zeroed, still cached),
                                     and in pages kept by tessera_free as tessera_tile does */
  TESSERA_NONTEMPORAL_ALWAYS = 1, /* streaming stores whatever the size */
  TESSERA_NONTEMPORAL_NEVER = 2   /* ordinary stores whatever the size */
} tessera_nontemporal;

/**
 * Options of the *_ex calls and of the plans. Fill the defaults with tessera_options_init, then set
 * the fields to change; a NULL options pointer means the defaults (numpy's behaviour).
 *
 * sizeof_options: sizeof(tessera_options) as the caller was compiled (set by tessera_options_init,
 *                which is inline in this header, so it is the caller's size): fields may be
 *                appended in later versions without breaking the ABI — tessera reads the fields
 *                that lie within sizeof_options and takes the defaults for the rest. 0 (a struct
 *                not initialized), a size too small for max_threads, or one larger than this
 *                version's is TESSERA_INVALID_ARGUMENT naming the value (libdeflate's convention).
 * max_threads:   0 (default): the caller's oneTBB task arena decides how many threads write the
 *                output. N > 0: the executor splits the output into at most N chunks, run as tasks
 *                in the caller's arena, so at most N threads (the caller's included) take part;
 *                N = 1 runs serially on the calling thread. Negative: TESSERA_INVALID_ARGUMENT.
 *                (Outputs under 512 KiB always run serially on the calling thread, and so does
 *                a process's first call that could use threads, below 16 MiB (starting oneTBB's
 *                workers costs about as much as writing 1 MiB) and, into the fresh pages of an
 *                allocating call, below 256 MiB; the next such call starts them.)
 *                Planning per-element repeat counts of 512 KiB or more reads them over the same
 *                threads, under the same rules.
 * negative_reps: a tessera_negative_reps value (default TESSERA_NEGATIVE_REPS_ERROR); applies to
 *                tile's reps and repeat's counts.
 * nontemporal:   a tessera_nontemporal value (default TESSERA_NONTEMPORAL_AUTO).
 * accumulate:    the reductions only: 0 writes the result, 1 adds it to what the output holds
 *                (a caller compiled against 0.1, whose sizeof_options — 24, padding included —
 *                ends before it, gets 0; `reserved0` keeps it clear of that padding).
 * The enum fields are ints so that any value a caller stores can be checked: one that is not a
 * value of its enum is TESSERA_INVALID_ARGUMENT, with a message naming the field.
 */
typedef struct tessera_options {
  size_t sizeof_options;
  int max_threads;
  int negative_reps; /* tessera_negative_reps */
  int nontemporal;   /* tessera_nontemporal */
  int reserved0;     /* where 0.1's struct had padding (its sizeof is 24): never read; 0 */
  int accumulate;    /* the reductions (tessera_tile_backward ...): 0 (default) overwrites the output,
                        1 adds the result into it (grad_in += ...); other values are
                        TESSERA_INVALID_ARGUMENT. Ignored by the copying calls. Appended in 0.2. */
} tessera_options;

/**
 * Sets *options to the defaults: sizeof_options = sizeof(tessera_options) (the caller's), max_threads
 * 0, TESSERA_NEGATIVE_REPS_ERROR, TESSERA_NONTEMPORAL_AUTO, accumulate 0. NULL is a no-op.
 */
static inline void tessera_options_init(tessera_options *options) {
  if (options == NULL) return;
  options->sizeof_options = sizeof(tessera_options);
  options->max_threads = 0;
  options->negative_reps = TESSERA_NEGATIVE_REPS_ERROR;
  options->nontemporal = TESSERA_NONTEMPORAL_AUTO;
  options->reserved0 = 0;
  options->accumulate = 0;
}

/**
 * Output shape of tile(A, reps) (numpy.tile's rule, see above), without touching any data.
 *
 * shape: ndim extents in elements (0 <= ndim <= TESSERA_MAX_NDIM; may be NULL when ndim == 0).
 * reps:  nreps repetition counts (0 <= nreps <= TESSERA_MAX_NDIM; may be NULL when nreps == 0).
 * On success writes *out_ndim = max(ndim, nreps) and out_shape[0 .. *out_ndim).
 * Returns TESSERA_INVALID_ARGUMENT (negative extent or rep, count out of range, NULL pointer) or
 * TESSERA_OVERFLOW (an extent or the element count does not fit int64_t; the byte count depends on
 * the itemsize, which this call does not take: tessera_tile and tessera_plan_create check it).
 * Arguments are checked in order (shape, reps, out_ndim, out_shape): the first bad one is reported.
 */
TESSERA_API tessera_status tessera_tile_shape(int ndim, const int64_t *shape, int nreps, const int64_t *reps,
                                              int *out_ndim, int64_t out_shape[TESSERA_MAX_NDIM]);

/**
 * tessera_tile_shape with options (NULL = defaults): under TESSERA_NEGATIVE_REPS_CLAMP_TO_ZERO a
 * negative rep gives an extent of 0. Also TESSERA_INVALID_ARGUMENT for an invalid option value.
 * Arguments are checked in order (shape, reps, options, out_ndim, out_shape).
 */
TESSERA_API tessera_status tessera_tile_shape_ex(int ndim, const int64_t *shape, int nreps, const int64_t *reps,
                                                 const tessera_options *options, int *out_ndim,
                                                 int64_t out_shape[TESSERA_MAX_NDIM]);

/**
 * One-shot tile: writes tile(src, reps) C-contiguously into dst.
 *
 * src:      the input's first element (index 0, ... 0). May be NULL only if the input has no element.
 * shape:    ndim extents in elements. strides: ndim byte strides, or NULL for C-contiguous.
 * itemsize: bytes per element, any positive count.
 * reps:     nreps repetition counts (any non-negative value).
 * dst:      dst_bytes writable bytes; may be NULL only if the output is empty.
 * Errors: TESSERA_INVALID_ARGUMENT, TESSERA_OVERFLOW, TESSERA_BUFFER_TOO_SMALL (dst_bytes less than
 * the output's byte size), TESSERA_OUT_OF_MEMORY, TESSERA_INTERNAL. On error dst is untouched.
 * When several arguments are bad, the one reported follows the order of the checks, the same in
 * every call of this header: the arrays' counts and pointers (shape, strides, reps or repeats) and
 * the options first, then the input (itemsize, extents, strides, src) and the values of the
 * operation's arguments, then the output (dst, dst_bytes; the allocating calls' output pointers).
 */
TESSERA_API tessera_status tessera_tile(const void *src, int ndim, const int64_t *shape, const int64_t *strides,
                                        size_t itemsize, int nreps, const int64_t *reps, void *dst,
                                        size_t dst_bytes);

/** tessera_tile with options (NULL = defaults; see tessera_options). Errors as tessera_tile. */
TESSERA_API tessera_status tessera_tile_ex(const void *src, int ndim, const int64_t *shape, const int64_t *strides,
                                           size_t itemsize, int nreps, const int64_t *reps, void *dst,
                                           size_t dst_bytes, const tessera_options *options);

/**
 * Allocating tile: like tessera_tile, but allocates the output (64-byte aligned) itself.
 * On success *out_data owns *out_bytes bytes (free it with tessera_free; it may be NULL when the
 * output is empty), and *out_ndim / out_shape receive the output shape (as tessera_tile_shape).
 * On error nothing is allocated and *out_data is left unchanged. Arguments are checked in the
 * order: the arrays' counts and pointers (shape, strides, reps) and the options, the four output
 * pointers, then the input (itemsize, extents, strides, src) and the values of reps.
 */
TESSERA_API tessera_status tessera_tile_alloc(const void *src, int ndim, const int64_t *shape,
                                              const int64_t *strides, size_t itemsize, int nreps,
                                              const int64_t *reps, void **out_data, size_t *out_bytes,
                                              int *out_ndim, int64_t out_shape[TESSERA_MAX_NDIM]);

/** tessera_tile_alloc with options (NULL = defaults; see tessera_options). Errors as tessera_tile_alloc. */
TESSERA_API tessera_status tessera_tile_alloc_ex(const void *src, int ndim, const int64_t *shape,
                                                 const int64_t *strides, size_t itemsize, int nreps,
                                                 const int64_t *reps, const tessera_options *options,
                                                 void **out_data, size_t *out_bytes, int *out_ndim,
                                                 int64_t out_shape[TESSERA_MAX_NDIM]);

/**
 * Frees memory returned by tessera_tile_alloc (or owned by a tessera::Array). NULL is a no-op.
 * An output of 32 MiB or more may be kept, mapped, for a later allocating call of about its size
 * (one that fills at least 4/5 of it), which then takes no page fault (the block cache): at most
 * tessera_set_block_cache_limit's bytes, else TESSERA_ALLOC_CACHE_BYTES's (environment variable,
 * decimal digits, read once; default 268435456 = 256 MiB, also where the value is not a count of
 * bytes: a warning naming it goes to stderr; 0 keeps nothing), each for at most 10 s unused
 * (tessera_set_block_cache_max_age). A library thread, started when a block is kept and ended
 * when none is, releases each block on time; a released block's pages leave the process's
 * resident memory at once (each block is a mapping of its own, unmapped). Kept blocks are advised
 * MADV_FREE, so the kernel may also reclaim them under memory pressure. After fork() the child keeps its copy of the
 * kept blocks; their expiry resumes at the child's next allocating call or tessera_free. The
 * prefix sums a plan of per-element repeat counts holds (from 4 MiB) live in the same blocks and
 * are kept the same way when the plan is destroyed, so that planning as many counts again takes
 * no page fault; they count against the same bound and age.
 */
TESSERA_API void tessera_free(void *data);

/**
 * Bounds the block cache (see tessera_free) to `bytes` bytes from now on, for the whole process;
 * 0 disables it (overrides TESSERA_ALLOC_CACHE_BYTES). Shrinking releases the kept blocks past the
 * bound, oldest first, before it returns. Thread-safe. Returns TESSERA_OK, or
 * TESSERA_OUT_OF_MEMORY (nothing changed) if the first call could not set the cache up.
 */
TESSERA_API tessera_status tessera_set_block_cache_limit(size_t bytes);

/**
 * Sets how long the block cache keeps a freed block unused: `seconds`, 0 <= seconds <= 86400
 * (default 10; 0 releases each block when it is freed). Blocks already kept that long are released
 * before it returns. Thread-safe. Returns TESSERA_OK, TESSERA_INVALID_ARGUMENT for a negative,
 * larger or non-finite value (tessera_last_error names it), or TESSERA_OUT_OF_MEMORY; on error
 * nothing has changed.
 */
TESSERA_API tessera_status tessera_set_block_cache_max_age(double seconds);

/**
 * An immutable, reusable tiling plan: the loops that tile an input of a given shape, byte strides
 * and itemsize by given reps. Safe to execute from many threads at once; not tied to data pointers.
 */
typedef struct tessera_plan tessera_plan;

/**
 * Plans tile(A, reps) for an input described as in tessera_tile. On success *out_plan receives a
 * plan to release with tessera_plan_destroy. Errors as tessera_tile_shape, plus
 * TESSERA_INVALID_ARGUMENT for itemsize 0 or a NULL out_plan, and TESSERA_OUT_OF_MEMORY.
 */
TESSERA_API tessera_status tessera_plan_create(int ndim, const int64_t *shape, const int64_t *strides,
                                               size_t itemsize, int nreps, const int64_t *reps,
                                               tessera_plan **out_plan);

/**
 * tessera_plan_create with options (NULL = defaults), which the plan keeps: every execution of it
 * follows them. Errors as tessera_plan_create, plus TESSERA_INVALID_ARGUMENT for an invalid option.
 */
TESSERA_API tessera_status tessera_plan_create_ex(int ndim, const int64_t *shape, const int64_t *strides,
                                                  size_t itemsize, int nreps, const int64_t *reps,
                                                  const tessera_options *options, tessera_plan **out_plan);

/** Byte size of the plan's output (0 for an empty output or a NULL plan). */
TESSERA_API size_t tessera_plan_output_bytes(const tessera_plan *plan);

/**
 * Output shape of the plan: *out_ndim and out_shape[0 .. *out_ndim). Returns
 * TESSERA_INVALID_ARGUMENT on a NULL argument.
 */
TESSERA_API tessera_status tessera_plan_output_shape(const tessera_plan *plan, int *out_ndim,
                                                     int64_t out_shape[TESSERA_MAX_NDIM]);

/**
 * Runs the plan: reads the input at src (laid out as planned), writes the output to dst.
 * Errors: TESSERA_INVALID_ARGUMENT (NULL plan; NULL src with a non-empty input; NULL dst with a
 * non-empty output), TESSERA_BUFFER_TOO_SMALL, TESSERA_INTERNAL. On error dst is untouched.
 */
TESSERA_API tessera_status tessera_plan_execute(const tessera_plan *plan, const void *src, void *dst,
                                                size_t dst_bytes);

/**
 * Runs the plan for one hyper-rectangular region of its output only, written C-contiguously to
 * dst: for each output axis i (i < out_ndim, the plan's output rank) the region covers indices
 * [start[i], start[i] + extent[i]), so region element [j0, j1, ...] is
 * out[start[0] + j0, start[1] + j1, ...] = src[(start[0] + j0) % shape[0], ...] (shape promoted as
 * in tessera_tile). Nothing outside the region is computed or written: this is how a chunked
 * array produces one chunk of a tiled array. The region needs prod(extent) * itemsize bytes.
 *
 * start, extent: out_ndim values each, in elements (may be NULL when out_ndim == 0); need
 *                0 <= start[i], 0 <= extent[i], start[i] + extent[i] <= out_shape[i].
 * Runs serially on the calling thread (a region that is the whole output runs as
 * tessera_plan_execute, in parallel), with ordinary stores whatever the plan's nontemporal option.
 * Errors: TESSERA_INVALID_ARGUMENT (NULL plan; NULL start/extent with out_ndim > 0; a negative
 * start or extent, or one past the output's extent, naming the axis; NULL src with a non-empty
 * input; NULL dst with a non-empty region), TESSERA_BUFFER_TOO_SMALL (dst_bytes less than the
 * region's byte size). On error dst is untouched.
 */
TESSERA_API tessera_status tessera_plan_execute_region(const tessera_plan *plan, const void *src,
                                                       const int64_t *start, const int64_t *extent, void *dst,
                                                       size_t dst_bytes);

/**
 * Human-readable description of the loops the plan runs, ending with the innermost kernel's name.
 * The string lives as long as the plan. Returns "" for a NULL plan.
 */
TESSERA_API const char *tessera_plan_describe(const tessera_plan *plan);

/** Releases a plan. NULL is a no-op. */
TESSERA_API void tessera_plan_destroy(tessera_plan *plan);

/* ---------------------------------------------------------------------------------------------
 * broadcast_to, expand, repeat: the rest of the replication family, planned and executed as tile
 * is (the same executor, options, regions and guarantees; the input described as in tessera_tile).
 * -------------------------------------------------------------------------------------------- */

/** repeat's axis argument for "no axis": repeat the flattened input (C order), a 1-d output. */
#define TESSERA_AXIS_NONE (-2147483647 - 1)

/**
 * Output shape of broadcast_to(A, target) — numpy.broadcast_to(A, target).copy(): target itself,
 * after checking that the input's axes, aligned with target's trailing axes, each have extent 1
 * or target's. target: target_ndim extents (target_ndim >= ndim). Writes *out_ndim = target_ndim
 * and out_shape. Errors: TESSERA_INVALID_ARGUMENT (target_ndim < ndim, a negative extent, an axis
 * that does not broadcast — the message names the axis and both extents; counts out of range;
 * NULL pointers), TESSERA_OVERFLOW (the element count does not fit int64_t).
 */
TESSERA_API tessera_status tessera_broadcast_shape(int ndim, const int64_t *shape, int target_ndim,
                                                   const int64_t *target, int *out_ndim,
                                                   int64_t out_shape[TESSERA_MAX_NDIM]);

/**
 * One-shot broadcast_to: writes numpy.broadcast_to(src, target).copy() C-contiguously into dst.
 * Arguments as tessera_tile with target in place of reps; errors as tessera_broadcast_shape and
 * tessera_tile. On error dst is untouched.
 */
TESSERA_API tessera_status tessera_broadcast_to(const void *src, int ndim, const int64_t *shape,
                                                const int64_t *strides, size_t itemsize, int target_ndim,
                                                const int64_t *target, void *dst, size_t dst_bytes);
/** tessera_broadcast_to with options (NULL = defaults). */
TESSERA_API tessera_status tessera_broadcast_to_ex(const void *src, int ndim, const int64_t *shape,
                                                   const int64_t *strides, size_t itemsize, int target_ndim,
                                                   const int64_t *target, void *dst, size_t dst_bytes,
                                                   const tessera_options *options);

/**
 * Output shape of expand(A, target) — ONNX Expand, OpenVINO Broadcast-3 "bidirectional": the numpy
 * broadcast of shape and target (the shorter promoted by prepending 1s; on each axis equal
 * extents, or one of them 1). Errors as tessera_broadcast_shape (any target_ndim is valid).
 */
TESSERA_API tessera_status tessera_expand_shape(int ndim, const int64_t *shape, int target_ndim,
                                                const int64_t *target, int *out_ndim,
                                                int64_t out_shape[TESSERA_MAX_NDIM]);

/** One-shot expand into dst (as tessera_broadcast_to, with tessera_expand_shape's output). */
TESSERA_API tessera_status tessera_expand(const void *src, int ndim, const int64_t *shape, const int64_t *strides,
                                          size_t itemsize, int target_ndim, const int64_t *target, void *dst,
                                          size_t dst_bytes);
/** tessera_expand with options (NULL = defaults). */
TESSERA_API tessera_status tessera_expand_ex(const void *src, int ndim, const int64_t *shape,
                                             const int64_t *strides, size_t itemsize, int target_ndim,
                                             const int64_t *target, void *dst, size_t dst_bytes,
                                             const tessera_options *options);

/**
 * Output shape of repeat(A, repeats, axis) — numpy.repeat, torch.repeat_interleave: each element
 * along `axis` written repeats times in a row.
 *
 * repeats:  nrepeats counts, in elements: nrepeats == 1 repeats every element repeats[0] times;
 *           otherwise nrepeats must equal the axis' extent (the flattened input's size with no
 *           axis) and element i is written repeats[i] times.
 * axis:     in [-ndim, ndim) (negative counts from the end), or TESSERA_AXIS_NONE: the flattened
 *           input (C order), a 1-d output. A 0-d input also takes 0 and -1, as numpy.repeat does
 *           (its one element, flattened).
 * Writes *out_ndim (ndim, or 1 with no axis) and out_shape: the axis' extent is the sum of the
 * counts. Errors: TESSERA_INVALID_ARGUMENT (an axis out of range, nrepeats neither 1 nor the
 * extent, a negative count — each naming the value; NULL pointers), TESSERA_OVERFLOW.
 */
TESSERA_API tessera_status tessera_repeat_shape(int ndim, const int64_t *shape, int64_t nrepeats,
                                                const int64_t *repeats, int axis, int *out_ndim,
                                                int64_t out_shape[TESSERA_MAX_NDIM]);

/**
 * One-shot repeat: writes repeat(src, repeats, axis) C-contiguously into dst. The input as in
 * tessera_tile; repeats and axis as in tessera_repeat_shape. Errors as tessera_repeat_shape and
 * tessera_tile. On error dst is untouched.
 */
TESSERA_API tessera_status tessera_repeat(const void *src, int ndim, const int64_t *shape, const int64_t *strides,
                                          size_t itemsize, int64_t nrepeats, const int64_t *repeats, int axis,
                                          void *dst, size_t dst_bytes);
/** tessera_repeat with options (NULL = defaults; negative_reps applies to the counts). */
TESSERA_API tessera_status tessera_repeat_ex(const void *src, int ndim, const int64_t *shape,
                                             const int64_t *strides, size_t itemsize, int64_t nrepeats,
                                             const int64_t *repeats, int axis, void *dst, size_t dst_bytes,
                                             const tessera_options *options);

/**
 * Plans for the family (options may be NULL: the defaults), used like tessera_plan_create's:
 * tessera_plan_execute, tessera_plan_execute_region, tessera_plan_describe, tessera_plan_destroy.
 * Errors as the one-shot calls' planning errors, TESSERA_INVALID_ARGUMENT for a NULL out_plan,
 * TESSERA_OUT_OF_MEMORY. A repeat plan copies the counts (their prefix sums).
 */
TESSERA_API tessera_status tessera_plan_create_broadcast_to(int ndim, const int64_t *shape, const int64_t *strides,
                                                            size_t itemsize, int target_ndim, const int64_t *target,
                                                            const tessera_options *options,
                                                            tessera_plan **out_plan);
TESSERA_API tessera_status tessera_plan_create_expand(int ndim, const int64_t *shape, const int64_t *strides,
                                                      size_t itemsize, int target_ndim, const int64_t *target,
                                                      const tessera_options *options, tessera_plan **out_plan);
TESSERA_API tessera_status tessera_plan_create_repeat(int ndim, const int64_t *shape, const int64_t *strides,
                                                      size_t itemsize, int64_t nrepeats, const int64_t *repeats,
                                                      int axis, const tessera_options *options,
                                                      tessera_plan **out_plan);

/* ---------------------------------------------------------------------------------------------
 * The reductions: the gradients of the family (the way back). Each sums the elements of a
 * strided input over the replicas that tile / broadcast_to / repeat made of each source element,
 * into a C-contiguous output of the source's shape. They are tessera's only calls that add, so
 * they take an element type (tessera_dtype) instead of an itemsize.
 *
 * Accuracy: floating-point sums are blocked and pairwise, never one long running sum: per output
 * element the addends (in the order of the reduced axes, outer first) are summed in leaves of 8
 * and the leaves combined by a binary tree; a reduced run that is contiguous in memory (at least
 * 16 elements) is summed in 16 interleaved partial sums of blocks, again leaves of 8 blocks and a
 * binary tree, the 16 then added by a halving tree. float32 and complex64 are accumulated in
 * float64, float16 and bfloat16 in float32, float64 and complex128 in float64; the sum is rounded
 * to the element type once (to nearest even). Integers wrap modulo 2^bits (C unsigned arithmetic,
 * exact whatever the order). A sum of only -0.0 values is +0.0, as numpy's and torch's sums give
 * (they start from +0.0; so does every result here, a copy of one addend included).
 * Determinism: the order of the additions is a function of the plan (shapes, strides, dtype)
 * only: the same bits for every thread count, max_threads, run and SIMD target (the partial sums
 * are laid out in 16 lanes whatever the vector width; there is no fused multiply-add).
 * Accumulate (tessera_options.accumulate = 1): out = round(out + sum), the sum added once.
 * Sizes: the input's element count times its itemsize must fit int64_t whatever its strides (as
 * numpy requires of every array, a zero-stride view included), else TESSERA_OVERFLOW.
 * A reduction over no element (a replica count of 0) gives 0 (or leaves out unchanged when
 * accumulating).
 * ------------------------------------------------------------------------------------------- */

/** Element types of the reductions (values of the `dtype` arguments). */
typedef enum tessera_dtype {
  TESSERA_FLOAT32 = 0,
  TESSERA_FLOAT64 = 1,
  TESSERA_FLOAT16 = 2,   /* IEEE binary16 */
  TESSERA_BFLOAT16 = 3,  /* the upper 16 bits of a float32 */
  TESSERA_COMPLEX64 = 4, /* two float32: real, imaginary */
  TESSERA_COMPLEX128 = 5,
  TESSERA_INT8 = 6,
  TESSERA_INT16 = 7,
  TESSERA_INT32 = 8,
  TESSERA_INT64 = 9,
  TESSERA_UINT8 = 10,
  TESSERA_UINT16 = 11,
  TESSERA_UINT32 = 12,
  TESSERA_UINT64 = 13
} tessera_dtype;

/** Bytes per element of a tessera_dtype value, 0 for a value that is not one. */
TESSERA_API size_t tessera_dtype_itemsize(int dtype);
/** Name of a tessera_dtype value ("float32", "bfloat16", ...), "" for a value that is not one. */
TESSERA_API const char *tessera_dtype_name(int dtype);

/**
 * Gradient of tile: grad_in[i] = the sum of grad_out[j] over every j that tile(A, reps) copied from
 * A[i] — grad_out.reshape(r0, s0, r1, s1, ...).sum(axis=(0, 2, ...)) with numpy.tile's promotion
 * (leading promoted axes are summed away). torch.tile's backward.
 *
 * grad_out: the input, ndim axes of shape (elements) and byte strides (NULL = C-contiguous, any
 *           sign, zero allowed), elements of `dtype`; its shape must be tile_shape(in_shape, reps).
 * in_shape: in_ndim extents: the shape of A, and of grad_in. reps: nreps counts (>= 0).
 * grad_in:  grad_in_bytes writable bytes, C-contiguous, prod(in_shape) * itemsize(dtype) needed.
 * Errors: TESSERA_INVALID_ARGUMENT (a dtype that is not a tessera_dtype, naming it; a negative rep
 * or extent; grad_out's shape not tile_shape(in_shape, reps), naming the axis and both extents;
 * counts out of range; NULL pointers), TESSERA_OVERFLOW, TESSERA_BUFFER_TOO_SMALL,
 * TESSERA_OUT_OF_MEMORY. On error grad_in is untouched.
 */
TESSERA_API tessera_status tessera_tile_backward(const void *grad_out, int ndim, const int64_t *shape,
                                                 const int64_t *strides, int dtype, int in_ndim,
                                                 const int64_t *in_shape, int nreps, const int64_t *reps,
                                                 void *grad_in, size_t grad_in_bytes);
/** tessera_tile_backward with options (NULL = defaults; max_threads, nontemporal, accumulate). */
TESSERA_API tessera_status tessera_tile_backward_ex(const void *grad_out, int ndim, const int64_t *shape,
                                                    const int64_t *strides, int dtype, int in_ndim,
                                                    const int64_t *in_shape, int nreps, const int64_t *reps,
                                                    void *grad_in, size_t grad_in_bytes,
                                                    const tessera_options *options);

/**
 * Gradient of broadcast_to / expand: torch.Tensor.sum_to_size(target) — sums src over its leading
 * axes beyond target's and over every axis where target has extent 1 and src does not; the result
 * has shape target (target_ndim <= ndim; aligned with src's trailing axes, each target extent
 * must equal src's or be 1).
 * Errors: TESSERA_INVALID_ARGUMENT (target_ndim > ndim; an axis where target is neither src's
 * extent nor 1, naming the axis and both extents; a bad dtype; NULL pointers), TESSERA_OVERFLOW,
 * TESSERA_BUFFER_TOO_SMALL, TESSERA_OUT_OF_MEMORY. On error dst is untouched.
 */
TESSERA_API tessera_status tessera_sum_to_shape(const void *src, int ndim, const int64_t *shape,
                                                const int64_t *strides, int dtype, int target_ndim,
                                                const int64_t *target, void *dst, size_t dst_bytes);
/** tessera_sum_to_shape with options (NULL = defaults). */
TESSERA_API tessera_status tessera_sum_to_shape_ex(const void *src, int ndim, const int64_t *shape,
                                                   const int64_t *strides, int dtype, int target_ndim,
                                                   const int64_t *target, void *dst, size_t dst_bytes,
                                                   const tessera_options *options);

/**
 * Gradient of repeat (numpy.repeat, torch.repeat_interleave): grad_in[..., k, ...] = the sum of
 * the repeats[k] (or repeats[0]) consecutive elements of grad_out along `axis` that repeat wrote
 * from A[..., k, ...]; with TESSERA_AXIS_NONE grad_out is the 1-d repeat of the flattened A and
 * grad_in has in_shape. repeats, axis as in tessera_repeat_shape; grad_out's shape must be
 * tessera_repeat_shape(in_shape, repeats, axis) (checked, naming the axis).
 * Errors as tessera_tile_backward and tessera_repeat_shape. On error grad_in is untouched.
 */
TESSERA_API tessera_status tessera_repeat_backward(const void *grad_out, int ndim, const int64_t *shape,
                                                   const int64_t *strides, int dtype, int in_ndim,
                                                   const int64_t *in_shape, int64_t nrepeats,
                                                   const int64_t *repeats, int axis, void *grad_in,
                                                   size_t grad_in_bytes);
/** tessera_repeat_backward with options (NULL = defaults). */
TESSERA_API tessera_status tessera_repeat_backward_ex(const void *grad_out, int ndim, const int64_t *shape,
                                                      const int64_t *strides, int dtype, int in_ndim,
                                                      const int64_t *in_shape, int64_t nrepeats,
                                                      const int64_t *repeats, int axis, void *grad_in,
                                                      size_t grad_in_bytes, const tessera_options *options);

/**
 * Plans of the reductions (options may be NULL), used with tessera_plan_execute (src = the
 * gradient in, dst = the result), tessera_plan_output_bytes, tessera_plan_output_shape,
 * tessera_plan_describe and tessera_plan_destroy. tessera_plan_execute_region is not available for
 * them (TESSERA_INVALID_ARGUMENT). Errors as the one-shot calls' planning errors.
 */
TESSERA_API tessera_status tessera_plan_create_tile_backward(int ndim, const int64_t *shape, const int64_t *strides,
                                                             int dtype, int in_ndim, const int64_t *in_shape,
                                                             int nreps, const int64_t *reps,
                                                             const tessera_options *options,
                                                             tessera_plan **out_plan);
TESSERA_API tessera_status tessera_plan_create_sum_to_shape(int ndim, const int64_t *shape, const int64_t *strides,
                                                            int dtype, int target_ndim, const int64_t *target,
                                                            const tessera_options *options,
                                                            tessera_plan **out_plan);
TESSERA_API tessera_status tessera_plan_create_repeat_backward(int ndim, const int64_t *shape,
                                                               const int64_t *strides, int dtype, int in_ndim,
                                                               const int64_t *in_shape, int64_t nrepeats,
                                                               const int64_t *repeats, int axis,
                                                               const tessera_options *options,
                                                               tessera_plan **out_plan);

/** Message of the last failed call on this thread ("" if none failed yet). Valid until the next call. */
TESSERA_API const char *tessera_last_error(void);

/** The library's version, "MAJOR.MINOR.PATCH". */
TESSERA_API const char *tessera_version(void);

/** Name of the SIMD target that tessera's kernels dispatch to on this CPU now (e.g. "AVX2"). */
TESSERA_API const char *tessera_active_target(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_TESSERA_H */
