#!/usr/bin/env python3
"""Writes the hand-made seed corpus of fuzz_tile (tests/fuzz/corpus/), one small file per case.

The byte format is documented at the top of fuzz_tile.cpp; each seed names what it exercises.
Every executor path of Plan::kernel_paths() has a seed that takes it (path_* seeds, and the plain
and streaming variants of the older seeds), so that each fuzz run reaches every path while it
loads the corpus; tests/run checks that it did (the union of its two runs: default dispatch and
HWY_SCALAR, which has no vector or streaming path). Every operation of the family (tile,
broadcast_to, expand, repeat with one count or per-element counts, with and without an axis) has
seeds for its successes, regions, DLPack call and errors; so has every reduction (tile_backward,
sum_to_shape, repeat_backward: every dtype, accumulate, threads, each reduce.* path, DLPack), and
plans of gradients too large to exist whose planning must not overflow. Seeds marked rare=True
get trailing salt bytes that make their FNV-1a hash 0 mod 64, the fuzzer's gate for outputs over
1 MiB (up to 40 MiB) and for out-of-memory requests.

Rerun after changing the format: tests/fuzz/make_corpus.py (standard library only).
  tests/fuzz/make_corpus.py --check build/sanitize   also runs the fuzzer over the seeds alone
                                                 (-runs=0) under both dispatches and fails
                                                 unless every listed executor path and every
                                                 sub-kernel of the targets' code is reached
                                                 by one of them (or listed as an exception)
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

# Rep codes: 0..5 stand for themselves (kSmallReps); other values index kSpecialReps, copied here
# in the same order as in fuzz_tile.cpp.
INT64_MAX, INT64_MIN = 2**63 - 1, -2**63
INT_MIN = -2**31
SIZE_MAX = 2**64 - 1
SPECIAL_REPS = [6, 7, 8, 9, 16, 31, 100, 1000, 65536, 1 << 20,
                (1 << 31) - 1, 1 << 31, 1 << 32, 1 << 40, 1 << 61,
                1 << 62, INT64_MAX // 3, INT64_MAX // 2, INT64_MAX - 1, INT64_MAX,
                -1, -2, -7, -(1 << 62), INT64_MIN + 1, INT64_MIN,
                0, 1, 2, 3,
                3037000499,
                3037000500]
assert len(SPECIAL_REPS) == 32
# kManyCounts (ndim / nreps codes 0xF0-0xFF) and kBigItems (itemsize codes 0xF0-0xFF).
MANY_COUNTS = [7, 8, 9, 10, 12, 16, 24, 32, 48, 63, 64, 64, 65, 100, -1, INT_MIN]
BIG_ITEMS = [41, 47, 48, 64, 100, 128, 255, 256, 1000, 1024, 1025, 4097, 65536, 1 << 32, 1 << 63, SIZE_MAX]
THREADS = [0, 1, 2, 3, 4, 0, -1, INT_MIN]  # kThreads
BAD_ENUM = [3, -1, 100, INT_MIN]           # kBadEnum

# flags (byte 3)
NULL_STRIDES, NULL_SRC, NEG_EXTENT, ZERO_ITEMSIZE, BIG = 1, 2, 32, 64, 128
DST_EXACT, DST_SLACK, DST_SHORT, DST_ZERO, DST_NULL, DST_HUGE_CLAIM = (m << 2 for m in range(6))
# [api] byte
API_NULL_OPTIONS, API_OPTIONS, API_REGION, API_DLPACK, API_NULL_ARG, API_ARENA, API_HUGE = 1, 2, 4, 8, 16, 32, 0xC0
# [null] byte: which pointer (NullArg), + 8 for the alternative
NULL_SHAPE, NULL_REPS, NULL_OUT_NDIM, NULL_OUT_SHAPE, NULL_OUT_PTR, NULL_PLAN, NULL_TENSOR, NULL_REGION = range(8)
ALT = 8
# [dl] byte: dtype form (0 widest lane, 1 byte lanes, 2 16-bit lanes, 3 not whole bytes), fault << 2
DL_SRC_DEVICE, DL_DST_DEVICE, DL_DTYPE_MISMATCH, DL_DST_SHAPE = (f << 2 for f in (4, 5, 6, 7))
DL_DST_STRIDES, DL_DST_NONCOMPACT, DL_STRIDE_OVERFLOW = 32, 64, 128
# region codes: start byte (code % 4: 0 zero, 1 small k, 2 near the end, 3 special), extent byte
# (0 the rest of the axis, 1 small k, 2 one, 3 special); k = (b >> 2) % 8
def start_zero(): return 0
def start_at(k): return 1 | (k << 2)
def start_near_end(k=0): return 2 | (k << 2)
def start_special(k): return 3 | (k << 2)  # -1, -7, INT64_MIN, INT64_MAX, 2^40, 3, extent, extent/2
def ext_rest(): return 0
def ext_of(k): return 1 | (k << 2)
def ext_one(): return 2
def ext_special(k): return 3 | (k << 2)    # -1, 0, INT64_MAX, INT64_MIN, 2^40, 2, extent, extent/2+1


# stride codes (one per axis): parent axis with `gap` extra elements, positive/negative/zero, or raw
def pos(gap=0): return [gap << 2]
def neg(gap=0): return [(gap << 2) | 2]
def zero(): return [3]
def raw(byte_stride): return [0xE0, byte_stride & 0xFF]


def rep(r):
    return r if 0 <= r <= 5 else 0xE0 + SPECIAL_REPS.index(r)


def count_code(n, few):
    return n if 0 <= n <= few else 0xF0 + MANY_COUNTS.index(n)


def itemsize_code(n):
    return n - 1 if 1 <= n <= 40 else 0xF0 + BIG_ITEMS.index(n)


def options(nontemporal=0, clamp=False, threads=0, bad_nontemporal=None, bad_negative_reps=None):
    """The [opt] byte. nontemporal: 0 AUTO, 1 ALWAYS, 2 NEVER."""
    b = (4 if clamp else 0) | (THREADS.index(threads) << 3)
    if bad_nontemporal is not None:
        return b | 3 | (BAD_ENUM.index(bad_nontemporal) << 6)
    if bad_negative_reps is not None:
        return b | nontemporal | ({2: 2, -1: 3}[bad_negative_reps] << 6)
    return b | nontemporal


def fnv1a(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


OPS = {'tile': 0, 'broadcast_to': 1, 'expand': 2, 'repeat': 3}
SMALL_TARGETS = [2, 3, 4, 5, 6, 7, 8, 0]  # kSmallTargets
NONE = 'none'  # repeat's axis argument TESSERA_AXIS_NONE (the flattened input)


def axis_code(axis, ndim):
    """The operation byte's axis bits for repeat (fuzz_tile.cpp [0])."""
    if axis == NONE:
        return 0
    if isinstance(axis, str):  # 'ndim', '-ndim-1', 'INT_MAX', 'INT_MIN+1': out of range
        k = {'ndim': 12, '-ndim-1': 13, 'INT_MAX': 14, 'INT_MIN+1': 15}[axis]
    elif 0 <= axis <= 5:
        k = axis
    else:
        assert -6 <= axis <= -1
        k = axis + 12
    return ((k << 2) | 1) << 2


def target_code(value, i, shape, ntarget):
    """A broadcast_to / expand target extent's byte: the aligned input extent, 1, a small value or
    a special one (fuzz_tile.cpp: the list's values)."""
    ax = i - (ntarget - len(shape))
    if 0 <= ax < len(shape):
        if value == shape[ax]:
            return 0
    elif 1 <= value <= 4:
        return (value - 1) << 3
    if value == 1:
        return 4
    if value in SMALL_TARGETS:
        return 5 | (SMALL_TARGETS.index(value) << 3)
    return 0xE0 + SPECIAL_REPS.index(value)


def case(shape, reps, itemsize, strides=None, flags=0, perm=0, src_mis=0, dst_mis=0, slack=0, pitch_gap=0,
         ndim=None, nreps=None, api=None, opt=None, opt_size=0, null=None, dl=None, region=None, rare=False,
         op='tile', axis=NONE, nrepeats=None):
    """One input. op: 'tile' (reps), 'broadcast_to' or 'expand' (reps is the target), 'repeat'
    (reps is the list of counts, along `axis`: NONE, an axis, or an out-of-range code; nrepeats:
    'one' / 'each' / 'zero' / 'extent+1' or a count of kManyCounts, by default 'one' for a single
    count, else 'each'). ndim / nreps default to len(shape) / len(reps) (give them for counts out of
    range); api: the [api] byte (options mode from `opt`: an [opt] byte, or 'null' for NULL
    options; opt_size: the [optsize] byte); null: the [null] byte; dl: the [dl] byte; region:
    (mode, [start, extent codes...])."""
    ndim = len(shape) if ndim is None else ndim
    nreps = len(reps) if nreps is None else nreps
    strides = strides or [pos() for _ in shape]
    for e in shape:
        assert 0 <= e <= 8
    opbyte = OPS[op]
    if op == 'repeat':
        opbyte |= axis_code(axis, len(shape))
        if nrepeats is None:
            nrepeats = 'one' if len(reps) == 1 else 'each'
        if nrepeats == 'one':
            count_byte = 0
        elif nrepeats == 'each':
            count_byte = 1
        elif nrepeats == 'zero':
            count_byte = 7
        elif nrepeats == 'extent+1':
            count_byte = 7 | 8
        else:
            count_byte = 0xF0 + MANY_COUNTS.index(nrepeats)
    else:
        count_byte = count_code(nreps, 7)
    out = [opbyte, count_code(ndim, 6), count_byte, itemsize_code(itemsize), flags, perm, src_mis, dst_mis, slack,
           pitch_gap]
    out += shape  # codes 0-8 are the extents themselves (and < 0x40, as many axes need)
    for s in strides:
        out += s
    if op in ('broadcast_to', 'expand'):
        out += [target_code(v, i, shape, len(reps)) for i, v in enumerate(reps)]
    else:
        out += [rep(r) for r in reps]
    out += trailing(api, opt, opt_size, null, dl, region)
    data = bytes(out)
    if rare:  # trailing salt (read by nothing) that puts the hash in the gate
        for salt in range(1 << 16):
            salted = data + bytes([salt & 0xFF, salt >> 8])
            if fnv1a(salted) % 64 == 0:
                return salted
        raise AssertionError('no salt')
    return data


def trailing(api, opt, opt_size, null, dl, region):
    """The optional trailing fields: [api], [opt] [optsize], [null], [dl], [region]."""
    out = []
    if api is not None or opt is not None or null is not None or dl is not None or region is not None:
        a = api or 0
        if opt == 'null':
            a |= API_NULL_OPTIONS
        elif opt is not None:
            a |= API_OPTIONS
        if null is not None:
            a |= API_NULL_ARG
        if dl is not None:
            a |= API_DLPACK
        if region is not None:
            a |= API_REGION
        out.append(a)
        if opt not in (None, 'null'):
            out += [opt, opt_size]
        if null is not None:
            out.append(null)
        if dl is not None:
            out.append(dl)
        if region is not None:
            mode, codes = region
            out.append(mode)
            out += codes
    return out


def bcast(shape, target, itemsize, **kw):
    return case(shape, target, itemsize, op='broadcast_to', **kw)


def expand(shape, target, itemsize, **kw):
    return case(shape, target, itemsize, op='expand', **kw)


def repeat(shape, counts, itemsize, axis=NONE, **kw):
    return case(shape, counts, itemsize, op='repeat', axis=axis, **kw)


# The reductions ([0] >= 0x80, [0] % 4: 0 tile_backward, 1 sum_to_shape, 2 repeat_backward).
ROPS = {'tile_backward': 0, 'sum_to_shape': 1, 'repeat_backward': 2}
DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'complex64', 'complex128', 'int8', 'int16', 'int32', 'int64',
          'uint8', 'uint16', 'uint32', 'uint64']  # tessera_dtype's values, in order
DL_NOT_ADDED = 3  # [dl] bits 0-1: a DLPack dtype the reductions do not add


def reduction(op, shape, lst, dtype, axis=NONE, accumulate=False, bad_accumulate=False, grad_fault=False,
              strides=None, flags=0, perm=0, src_mis=0, dst_mis=0, slack=0, pitch=0, ndim=None, nlist=None,
              nrepeats=None, api=None, opt=None, opt_size=0, null=None, dl=None, region=None):
    """One reduction input (fuzz_tile.cpp, "a reduction"). op: 'tile_backward' (shape: A's, lst: the
    reps), 'sum_to_shape' (shape: the gradient's, lst: the target), 'repeat_backward' (shape: A's,
    lst: the counts along `axis`; nrepeats as for repeat). dtype: a name of DTYPES, or 14 / -1 (not a
    tessera_dtype). The gradient of tile_backward / repeat_backward is the forward output (made wrong
    by grad_fault); strides: one code per GRADIENT axis (default pos()); pitch: the pitch byte
    (floats: pitch = itemsize * (1 + pitch % 2); integers: itemsize + pitch % 8; a raw stride is in
    elements for floats, bytes for integers). accumulate: options->accumulate = 1 (bad_accumulate:
    2), through the case's options. ndim / nlist: counts out of range. The rest as case()."""
    ndim = len(shape) if ndim is None else ndim
    nlist = len(lst) if nlist is None else nlist
    code = DTYPES.index(dtype) if isinstance(dtype, str) else {14: 14, -1: 15}[dtype]
    r = code | (0x10 if accumulate or bad_accumulate else 0) | (0x60 if bad_accumulate else 0)
    r |= 0x80 if grad_fault else 0
    a = axis_code(axis, len(shape)) >> 2 if op == 'repeat_backward' else 0
    if op == 'tile_backward':
        count_byte = count_code(nlist, 7)
        gdim = max(len(shape), len(lst))
    elif op == 'sum_to_shape':
        count_byte = nlist if 0 <= nlist <= min(7, ndim + 1) else 0xF0 + MANY_COUNTS.index(nlist)
        gdim = len(shape)
    else:
        if nrepeats is None:
            nrepeats = 'one' if len(lst) == 1 else 'each'
        count_byte = {'one': 0, 'each': 1, 'zero': 7, 'extent+1': 7 | 8}.get(nrepeats)
        if count_byte is None:
            count_byte = 0xF0 + MANY_COUNTS.index(nrepeats)
        gdim = len(shape) if axis != NONE and len(shape) > 0 else 1
    if grad_fault and ((slack & 2) or gdim == 0):
        gdim += 1
    strides = strides or [pos() for _ in range(gdim)]
    assert len(strides) == gdim, (len(strides), gdim)
    for e in shape:
        assert 0 <= e <= 8
    out = [0x80 | ROPS[op], r, a, count_code(ndim, 6), count_byte, flags, perm, src_mis, dst_mis, slack, pitch]
    out += shape
    if op == 'sum_to_shape':
        out += [target_code(v, i, shape, len(lst)) for i, v in enumerate(lst)]
    else:
        out += [rep(v) for v in lst]
    for st in strides:
        out += st
    out += trailing(api, opt, opt_size, null, dl, region)
    return bytes(out)


def tile_back(shape, reps, dtype, **kw):
    return reduction('tile_backward', shape, reps, dtype, **kw)


def sum_to(shape, target, dtype, **kw):
    return reduction('sum_to_shape', shape, target, dtype, **kw)


def repeat_back(shape, counts, dtype, axis=NONE, **kw):
    return reduction('repeat_backward', shape, counts, dtype, axis=axis, **kw)


# [optsize] byte (after [opt]): sizeof_options
OPT_SIZE_FULL, OPT_SIZE_ZERO, OPT_SIZE_THREADS_ONLY, OPT_SIZE_NO_NONTEMPORAL, OPT_SIZE_TOO_LARGE = 0, 4, 5, 6, 7
OPT_SIZE_TOO_SMALL = 8


def gather_nt(itemsize):
    # An inner source stride of 64 bytes or more, elements of at most 16 bytes and a row loop: the
    # blocked gather, which streams under NonTemporal::always.
    return case([6, 5], [2, 1], itemsize, strides=[raw(-80), raw(64)])


SEEDS = {
    # successful tiles, one or more per executor path (ordinary: plans; ".nt": the C++ plan with
    # non-temporal stores forced)
    "copy_2d_row_gaps": case([3, 4], [2, 1], 4, strides=[pos(), pos(1)]),
    "pattern_short_2d": case([3, 4], [2, 3], 4, dst_mis=3),
    "pattern_long_8x8x4B": case([8, 8], [3, 1, 1], 4),
    "pattern_shuffle_12B_run": case([3], [100, 4], 4, dst_mis=9),
    "pattern_4KiB_run_nt_direct": case([8, 8, 8], [3, 1, 1, 1], 8, dst_mis=1),
    "copy_4KiB_rows_nt_direct": case([2, 8, 8, 8], [2, 1, 1, 1], 8, strides=[pos(), pos(1), pos(), pos()]),
    # the same with pieces of 16 KiB (past StreamJoin's kRotateMinBytes) into a destination 4 bytes
    # off its 16-byte boundaries (the source on them): the source lies whole 4-byte lanes off its
    # vectors where dst's lines start (StreamJoin:rotated)
    "pattern_16KiB_run_nt_direct_rotated": case([8, 8, 8], [2, 1, 1, 1], 32, dst_mis=4),
    "copy_16KiB_rows_nt_direct_rotated": case([2, 8, 8, 8], [1, 1, 1, 1], 32, strides=[pos(1), pos(), pos(), pos()],
                                              dst_mis=4),
    "fill_1B_broadcast": case([5], [4, 3], 1, strides=[zero()]),
    "fill_2B": case([1], [6, 3], 2),
    "fill_8B_broadcast": case([4], [2], 8, strides=[zero()], dst_mis=7),
    "fill_16B": case([1, 1], [7, 5], 16),
    "fill_odd_itemsize": case([1], [9], 7),
    "gather_1B_reversed": case([5, 3], [2, 1], 1, strides=[pos(), neg()]),
    "gather_4B_transposed": case([4, 3], [1, 2], 4, perm=1),
    "gather_16B_pitch_gap": case([3, 2], [2, 2], 16, pitch_gap=1),
    "gather_transposed_8B": case([3, 4, 2], [2, 1, 2], 8, perm=5, src_mis=5),
    "gather_negative_stride_2B": case([6, 3], [1, 2], 2, strides=[pos(), neg(1)]),
    "gather_gaps_any": case([4, 5], [2, 2], 13, strides=[pos(2), pos(3)], pitch_gap=3),
    "raw_overlapping_strides": case([4, 3], [3, 2], 8, strides=[raw(-3), raw(5)], src_mis=7, dst_mis=1),
    "zero_d_input": case([], [2, 3], 4),
    # fills whose rows are whole cache lines stream from a register (fill.N.nt.direct); others
    # stage (fill.N.nt); the path_fill_*_lines seeds' rows are one line each: fill.N.lines with
    # ordinary stores
    "path_fill_1_lines": case([1], [4, 16], 1),
    "path_fill_2_lines": case([1], [2, 16], 2),
    "path_fill_4_lines": case([1], [16], 4),
    "path_fill_8_lines": case([1], [8], 8),
    "path_fill_8_staged": case([1], [3], 8),
    "path_fill_16_lines": case([1], [4], 16),
    # blocked gathers (gather.N.nt)
    "path_gather_1_nt": gather_nt(1),
    "path_gather_2_nt": gather_nt(2),
    "path_gather_4_nt": gather_nt(4),
    "path_gather_8_nt": gather_nt(8),
    "path_gather_16_nt": gather_nt(16),
    "path_gather_any_nt": gather_nt(3),
    # outputs of 0.5-1 MiB run threaded: chunks start and end inside rows
    "big_threaded_pattern": case([3, 5], [6, 100, 100], 1, flags=BIG),
    "big_threaded_gather": case([7, 3], [100, 3, 31], 3, strides=[pos(), neg(1)], flags=BIG, dst_mis=5),
    "no_reps_copy": case([2, 3, 2], [], 40, strides=[pos(), neg(), pos()]),
    "null_strides_6d": case([2, 1, 2, 1, 2, 3], [1, 2], 3, flags=NULL_STRIDES),
    "empty_input": case([0, 3], [2, 2], 4, flags=DST_SLACK, slack=9),
    "zero_rep_with_huge_rep": case([1, 1], [0, 1 << 62], 8),
    "dst_slack": case([3], [2, 2], 5, flags=DST_SLACK, slack=17),
    "dst_huge_claim": case([2, 2], [3], 4, flags=DST_HUGE_CLAIM),
    # rejections: each must leave dst untouched
    "negative_rep": case([2, 3], [2, -1], 4),
    "negative_extent": case([2, 3], [2], 4, flags=NEG_EXTENT, slack=1),
    "itemsize_zero": case([2], [2], 1, flags=ZERO_ITEMSIZE),
    "count_overflow_int64max": case([2], [INT64_MAX], 1),
    "negative_rep_int64min": case([3], [INT64_MIN], 1),
    "extent_overflow_beside_zero_rep": case([1, 2], [0, 1 << 62], 8),  # overflow wins over empty
    "count_overflow_sqrt": case([1, 1], [3037000500, 3037000500], 1),
    "byte_overflow": case([1], [1 << 61], 8),
    "huge_valid_output": case([1, 1], [1 << 40, 100], 2),
    "dst_short": case([4, 4], [2, 2], 4, flags=DST_SHORT, slack=3),
    "dst_zero": case([3], [3], 8, flags=DST_ZERO),
    "null_dst": case([3], [3], 8, flags=DST_NULL),
    "null_src": case([3], [3], 8, flags=NULL_SRC),
    "null_src_empty_input": case([0], [3], 8, flags=NULL_SRC),

    # the _ex calls and their options
    "ex_null_options": case([3, 4], [2, 3], 4, opt='null'),
    "ex_defaults": case([3, 4], [2, 3], 4, opt=options()),
    "ex_nontemporal_always": case([8, 8], [3, 1, 1], 4, opt=options(nontemporal=1)),
    "ex_nontemporal_never": case([2, 8, 8, 8], [2, 1, 1, 1], 8, strides=[pos(), pos(1), pos(), pos()],
                                 opt=options(nontemporal=2)),
    "ex_clamp_negative_rep": case([2, 3], [2, -1], 4, opt=options(clamp=True)),
    "ex_clamp_int64min": case([3], [INT64_MIN], 1, opt=options(clamp=True), flags=DST_SLACK, slack=5),
    "ex_clamp_no_negative": case([2, 3], [2, 2], 4, opt=options(clamp=True, nontemporal=1)),
    "ex_clamp_negative_extent": case([2, 3], [2, -1], 4, flags=NEG_EXTENT, slack=1, opt=options(clamp=True)),
    "ex_max_threads_1_big": case([3, 5], [6, 100, 100], 1, flags=BIG, opt=options(threads=1)),
    "ex_max_threads_2_arena4": case([7, 3], [100, 3, 31], 3, strides=[pos(), neg(1)], flags=BIG,
                                    opt=options(threads=2), api=API_ARENA),
    "ex_max_threads_3_arena4_nt": case([3, 5], [6, 100, 100], 1, flags=BIG, opt=options(threads=3, nontemporal=1),
                                       api=API_ARENA),
    "ex_max_threads_4_big": case([4, 4], [100, 4, 31], 4, flags=BIG, opt=options(threads=4)),
    "arena4_default_options_big": case([3, 5], [6, 100, 100], 1, flags=BIG, api=API_ARENA),
    "ex_bad_nontemporal_3": case([3], [2], 4, opt=options(bad_nontemporal=3)),
    "ex_bad_nontemporal_min": case([3], [2], 4, opt=options(bad_nontemporal=INT_MIN)),
    "ex_bad_negative_reps_2": case([3], [2], 4, opt=options(bad_negative_reps=2)),
    "ex_bad_negative_reps_minus1": case([3], [-1], 4, opt=options(bad_negative_reps=-1)),
    "ex_bad_max_threads": case([3], [2], 4, opt=options(threads=-1)),
    "ex_bad_max_threads_min_with_overflow": case([2], [INT64_MAX], 1, opt=options(threads=INT_MIN)),

    # output regions (tessera_plan_execute_region)
    "region_whole": case([3, 4], [2, 3], 4, region=(DST_EXACT >> 2, [])),
    "region_whole_big_threaded": case([3, 5], [6, 100, 100], 1, flags=BIG, region=(0, [])),
    "region_part_3d": case([3, 4, 2], [2, 3, 1], 4, perm=3, region=(0, [start_at(1), ext_of(2), start_at(2), ext_rest(),
                                                                        start_zero(), ext_one()])),
    "region_part_gather": case([5, 3], [2, 3], 8, strides=[pos(), neg()], dst_mis=3,
                               region=(1, [start_at(3), ext_of(4), start_near_end(1), ext_rest()])),
    "region_part_of_huge_output": case([2, 3], [1 << 40, 100, 2], 2,
                                       region=(0, [start_near_end(2), ext_rest(), start_at(7), ext_of(5),
                                                   start_near_end(2), ext_rest()])),
    "region_single_element": case([4, 4], [3, 3], 16, region=(0, [start_near_end(0), ext_one(), start_at(5), ext_one()])),
    "region_zero_d": case([], [], 4, region=(0, [])),
    "region_empty_extent": case([3, 4], [2, 3], 4, region=(0, [start_at(2), ext_special(1), start_zero(), ext_rest()])),
    "region_past_end": case([3, 4], [2, 3], 4, region=(0, [start_at(5), ext_of(4), start_zero(), ext_rest()])),
    "region_negative_start": case([3, 4], [2, 3], 4, region=(0, [start_special(0), ext_one(), start_zero(), ext_rest()])),
    "region_negative_extent": case([3, 4], [2, 3], 4, region=(0, [start_zero(), ext_special(0), start_zero(), ext_rest()])),
    "region_int64_extents": case([3, 4], [2, 3], 4, region=(0, [start_special(3), ext_special(2), start_zero(),
                                                                ext_special(3)])),
    "region_dst_short": case([3, 4], [2, 3], 4, slack=2, region=(DST_SHORT >> 2, [start_at(1), ext_of(3)])),
    "region_dst_zero": case([3, 4], [2, 3], 4, region=(DST_ZERO >> 2, [])),
    "region_dst_null": case([3, 4], [2, 3], 4, region=(DST_NULL >> 2, [start_at(1), ext_one()])),
    "region_dst_huge_claim": case([3, 4], [2, 3], 4, region=(DST_HUGE_CLAIM >> 2, [start_at(1), ext_of(2)])),
    "region_null_src": case([3, 4], [2, 3], 4, flags=NULL_SRC, region=(0, [])),
    "region_null_start": case([3, 4], [2, 3], 4, null=NULL_REGION, region=(0, [])),
    "region_null_extent": case([3, 4], [2, 3], 4, null=NULL_REGION | ALT, region=(0, [])),
    "region_null_plan": case([3, 4], [2, 3], 4, null=NULL_PLAN, region=(0, [])),
    "region_clamped_empty_axis": case([3, 4], [2, -1], 4, opt=options(clamp=True),
                                      region=(0, [start_zero(), ext_rest(), start_zero(), ext_rest()])),

    # DLPack (tessera_tile_dlpack, tessera_tile_dlpack_shape)
    "dlpack_transposed_f64": case([3, 2], [1, 2], 8, perm=1, src_mis=8, dl=0),
    "dlpack_byte_lanes": case([4, 3], [2, 2], 6, dl=1, dst_mis=2),
    "dlpack_16bit_lanes_strides": case([3, 4], [2, 1, 2], 12, dl=2 | DL_DST_STRIDES),
    "dlpack_negative_strides": case([5, 3], [2, 1], 4, strides=[pos(), neg()], dl=0),
    "dlpack_null_strides": case([2, 3], [3], 2, flags=NULL_STRIDES, dl=0),
    "dlpack_empty_output": case([3], [0], 4, dl=0),
    "dlpack_big_output": case([3, 5], [6, 100, 100], 1, flags=BIG, dl=0),
    "dlpack_src_device": case([2, 3], [2], 4, dl=DL_SRC_DEVICE),
    "dlpack_dst_device": case([2, 3], [2], 4, dl=DL_DST_DEVICE),
    "dlpack_dtype_mismatch": case([2, 3], [2], 4, dl=DL_DTYPE_MISMATCH),
    "dlpack_dst_shape_extent": case([2, 3], [2], 4, dl=DL_DST_SHAPE),
    "dlpack_dst_shape_ndim": case([2, 3], [2], 4, dl=DL_DST_SHAPE, slack=2),
    "dlpack_dst_not_compact": case([2, 3], [2, 2], 4, dl=DL_DST_NONCOMPACT),
    "dlpack_stride_overflow": case([2, 3], [2], 4, dl=DL_STRIDE_OVERFLOW),
    "dlpack_stride_overflow_beats_negative_rep": case([2, 3], [-1], 4, dl=DL_STRIDE_OVERFLOW),
    "dlpack_dtype_4_bits": case([2, 3], [2], 4, dl=3),
    "dlpack_dtype_0_bits": case([2, 3], [2], 4, dl=3, slack=1),
    "dlpack_null_src_tensor": case([2, 3], [2], 4, dl=0, null=NULL_TENSOR),
    "dlpack_null_dst_tensor": case([2, 3], [2], 4, dl=0, null=NULL_TENSOR | ALT),
    "dlpack_null_src_data": case([2, 3], [2], 4, flags=NULL_SRC, dl=0),
    "dlpack_null_dst_data": case([2, 3], [2], 4, flags=DST_NULL, dl=0),
    "dlpack_huge_output_refused": case([1, 1], [1 << 40, 100], 2, dl=0),
    "dlpack_many_dims": case([1, 2, 1, 1, 3, 1, 1, 2, 1, 1, 1, 2], [2, 1, 1], 2, dl=1),

    # NULL pointers (each must be refused, except a list whose count is 0)
    "null_shape": case([2, 3], [2], 4, null=NULL_SHAPE),
    "null_shape_ndim_0": case([], [2, 3], 4, null=NULL_SHAPE),
    "null_reps": case([2, 3], [2], 4, null=NULL_REPS),
    "null_reps_nreps_0": case([2, 3], [], 4, null=NULL_REPS),
    "null_out_ndim": case([2, 3], [2], 4, null=NULL_OUT_NDIM, dl=0),
    "null_out_shape": case([2, 3], [2], 4, null=NULL_OUT_SHAPE, dl=0),
    "null_out_plan_and_data": case([2, 3], [2], 4, null=NULL_OUT_PTR),
    "null_out_bytes": case([2, 3], [2], 4, null=NULL_OUT_PTR | ALT),
    "null_plan": case([2, 3], [2], 4, null=NULL_PLAN),

    # more axes than 6, up to TESSERA_MAX_NDIM = 64, and past it
    "ndim_7": case([2, 1, 3, 1, 1, 2, 2], [2, 1], 4),
    "ndim_12_gather": case([1, 2, 1, 1, 3, 1, 1, 2, 1, 1, 1, 2], [2, 1, 1], 2, perm=77),
    "ndim_16_nt": case([1] * 5 + [2] + [1] * 9 + [3], [3, 1], 8, opt=options(nontemporal=1)),
    "ndim_64": case([1] * 30 + [2] + [1] * 31 + [3, 2], [2, 2], 4),
    "ndim_64_null_strides": case([1] * 61 + [2, 3, 2], [2], 1, flags=NULL_STRIDES),
    "nreps_64": case([2, 3], [1] * 40 + [2] + [1] * 21 + [3, 2], 4),
    "nreps_10_zero": case([2, 3], [1, 2, 1, 1, 0, 1, 1, 1, 2, 1], 4),
    "ndim_65": case([1] * 64, [2], 4, ndim=65),
    "nreps_65": case([2], [1] * 64, 4, nreps=65),
    "ndim_100": case([1] * 64, [2], 4, ndim=100),
    "ndim_negative": case([], [2], 4, ndim=-1),
    "nreps_int_min": case([2], [], 4, nreps=INT_MIN),
    "ndim_64_zero_rep_input_overflow": case([8] * 22 + [1] * 42, [0], 1, flags=NULL_STRIDES),

    # itemsizes past 40 bytes
    "itemsize_41": case([3, 2], [2, 3], 41),
    "itemsize_64_fill": case([1], [5, 3], 64, opt=options(nontemporal=1)),
    "itemsize_128_gather": case([3, 2], [2, 2], 128, perm=1),
    "itemsize_1024_nt": case([2, 3], [2, 2], 1024, opt=options(nontemporal=1)),
    "itemsize_1025_not_streamed": case([2, 3], [2, 2], 1025, opt=options(nontemporal=1)),
    "itemsize_4097": case([3], [2, 2], 4097),
    "itemsize_65536_dlpack": case([1], [2], 65536, flags=BIG, dl=2),
    "itemsize_2p32_overflow": case([1], [1 << 31, 2], 1 << 32),
    "itemsize_2p63_overflow": case([1], [1], 1 << 63),
    "itemsize_size_max_overflow_beats_negative": case([1], [-1], SIZE_MAX),

    # a source span over 64 KiB: only the calls that must fail, or have nothing to read, run
    "large_span_negative_rep": case([8, 8, 8, 8, 8, 8], [2, -1], 4, strides=[pos(7)] * 6),
    "large_span_empty_output": case([8, 8, 8, 8, 8, 8], [0, 1], 4, strides=[pos(7)] * 6, region=(0, []), dl=0),
    "large_span_dst_short": case([8, 8, 8, 8, 8, 8], [2], 4, strides=[pos(7)] * 6, flags=DST_SHORT),
    "large_span_null_src": case([8, 8, 8, 8, 8, 8], [2], 4, strides=[pos(7)] * 6, flags=NULL_SRC, dl=0),
    "large_span_big_item_overflow": case([8, 8], [INT64_MAX // 3], 65536),

    # rare (hash-gated): outputs over 1 MiB, and a request too large for any allocator
    "rare_3MiB_auto_streaming": case([8, 8], [100, 100, 1, 1], 4, flags=BIG, api=API_HUGE, rare=True),
    "rare_3MiB_fill_auto_streaming": case([1], [1000, 1000], 3, flags=BIG, api=API_HUGE, rare=True),
    "rare_2MiB_gather_auto_streaming_arena4": case([6, 5], [100, 100, 1], 8, strides=[raw(-80), raw(64)], flags=BIG,
                                                   api=API_HUGE | API_ARENA, opt=options(threads=3), rare=True),
    "rare_32MiB_alloc_fresh_then_reused": case([8, 8, 8], [65536, 1, 1, 1], 1, flags=BIG | DST_SLACK, slack=11,
                                                api=API_HUGE, rare=True),
    "rare_out_of_memory": case([1], [1 << 61], 1, api=API_HUGE, rare=True),
    "rare_out_of_memory_ex": case([1, 1], [1 << 40, 1 << 20], 4, opt=options(nontemporal=2), rare=True),

    # sizeof_options: fields past it take their defaults; 0, too small or too large is refused
    "ex_options_size_zero": case([3, 4], [2, 3], 4, opt=options(), opt_size=OPT_SIZE_ZERO),
    "ex_options_size_too_small": case([3, 4], [2, 3], 4, opt=options(), opt_size=OPT_SIZE_TOO_SMALL),
    "ex_options_size_too_large": case([3, 4], [2, 3], 4, opt=options(), opt_size=OPT_SIZE_TOO_LARGE),
    "ex_options_threads_only_ignores_clamp": case([2, 3], [2, -1], 4, opt=options(clamp=True, threads=2),
                                                  opt_size=OPT_SIZE_THREADS_ONLY),
    "ex_options_no_nontemporal_ignores_bad_value": case([3], [2], 4, opt=options(bad_nontemporal=3),
                                                        opt_size=OPT_SIZE_NO_NONTEMPORAL),

    # broadcast_to (numpy.broadcast_to(...).copy()) and expand (ONNX Expand)
    "broadcast_new_and_stretched_axes": bcast([3, 1], [2, 3, 5], 4),  # a 4-byte element 5 times: repeat.shuffle
    "broadcast_rows_pattern": bcast([4], [3, 4], 2),
    "broadcast_fill_1B": bcast([1], [100], 1),
    "broadcast_zero_d": bcast([], [], 4),
    "broadcast_zero_d_to_2d": bcast([], [3, 4], 8, region=(0, [start_at(1), ext_of(2), start_at(1), ext_of(3)])),
    "broadcast_transposed_gather": bcast([3, 4], [2, 3, 4], 8, perm=1),
    "broadcast_empty_target": bcast([3, 1], [0, 3, 5], 4),
    "broadcast_63_axes": bcast([2, 3], [1] * 60 + [2, 2, 3], 4),
    "broadcast_not_broadcastable": bcast([2, 3], [2, 4], 4),
    "broadcast_fewer_axes": bcast([2, 3], [3], 4),
    "broadcast_negative_target": bcast([2, 3], [2, -1], 4),
    "broadcast_count_overflow": bcast([1, 1], [1 << 62, 1 << 62], 1),
    "broadcast_byte_overflow": bcast([1], [1 << 61], 8),
    "broadcast_target_65": bcast([2], [1] * 64, 4, nreps=65),
    "broadcast_null_target": bcast([2, 3], [2, 3], 4, null=NULL_REPS),
    "broadcast_ex_threads_big": bcast([1, 8], [1000, 9, 8], 8, flags=BIG, opt=options(threads=2), api=API_ARENA),
    "expand_both_ways": expand([4, 1], [1, 5], 8),  # an 8-byte element 5 times: repeat.shuffle
    "expand_shorter_target": expand([2, 3], [3], 4),
    "expand_zero_d": expand([], [2, 2], 4),
    "expand_empty": expand([0, 1], [3], 4),
    "expand_one_keeps_extent": expand([3, 4], [1, 1, 1], 2, strides=[neg(), pos(1)]),
    "expand_not_broadcastable": expand([2, 3], [4, 3], 4),
    "expand_negative_target": expand([2], [-1], 4),
    "expand_count_overflow": expand([1, 1], [1 << 62, 4], 1),
    "expand_null_target": expand([2], [3, 2], 4, null=NULL_REPS),
    "expand_nt_always": expand([3, 1], [3, 16], 4, opt=options(nontemporal=1)),

    # repeat (numpy.repeat): one count or per-element counts, along an axis or the flattened input
    "path_repeat_shuffle_4B": repeat([2, 8], [3], 4),
    "path_repeat_shuffle_1B_axis": repeat([4, 8], [2], 1, axis=1),
    "path_repeat_shuffle_8B_nt": repeat([8], [8], 8, opt=options(nontemporal=1)),
    # repeat.shuffle.nt.direct (4-byte elements, a row of 8 KiB) into a destination 2 bytes off
    # its elements: the piece through StreamJoin (RepeatStream's "spilled")
    "path_repeat_shuffle_4B_nt_direct_spilled": repeat([8, 8, 4], [8], 4, opt=options(nontemporal=1), dst_mis=2),
    "path_repeat_elements_3B": repeat([5], [2], 3),
    "path_repeat_elements_strided": repeat([6, 3], [4], 2, axis=-1, strides=[pos(), neg()]),
    "path_repeat_elements_9_copies": repeat([7], [9], 1),
    "path_segments_1d": repeat([6], [1, 0, 2, 3, 1, 2], 2),
    "path_segments_flat_2d": repeat([2, 3], [1, 2, 0, 3, 1, 1], 8, perm=1),
    "path_segments_strided_axis": repeat([3, 5], [4, 0, 1, 2, 5], 4, axis=1, strides=[pos(), pos(1)]),
    # segments.nt.direct: one-byte counts (0-4 of 4-byte elements) in a row of ~32 KiB, streamed
    # through the kernel's own small stage, into a destination off its lines
    "path_segments_4B_nt_direct": repeat([8, 8, 8, 8], [k % 5 for k in range(4096)], 4, opt=options(nontemporal=1),
                                         dst_mis=20),
    "repeat_rows_axis0_counts": repeat([3, 4], [2, 0, 3], 4, axis=0),
    "repeat_fill_per_element": repeat([3], [31], 8),
    "repeat_all_counts_equal": repeat([4], [2, 2, 2, 2], 2),  # per-element counts that are one count
    "repeat_zero_counts": repeat([2, 2], [0, 0, 0, 0], 4),
    "repeat_zero_d": repeat([], [3], 4),
    "repeat_zero_d_axis_0": repeat([], [3], 4, axis=0),  # numpy.repeat takes 0 and -1 for a 0-d input
    "repeat_zero_d_axis_minus1": repeat([], [2], 2, axis=-1),
    "repeat_zero_d_axis_1": repeat([], [2], 2, axis=1),
    "repeat_axis_ndim": repeat([2, 3], [2], 4, axis='ndim'),
    "repeat_axis_minus_ndim_minus_1": repeat([2, 3], [2], 4, axis='-ndim-1'),
    "repeat_axis_int_max": repeat([2, 3], [2], 4, axis='INT_MAX'),
    "repeat_axis_int_min_plus_1": repeat([2, 3], [2], 4, axis='INT_MIN+1'),
    "repeat_no_counts_for_3": repeat([2, 3], [], 4, axis=1, nrepeats='zero'),
    "repeat_counts_extent_plus_1": repeat([2, 3], [1, 1, 1, 1], 4, axis=1, nrepeats='extent+1'),
    "repeat_7_counts_for_6": repeat([2, 3], [1] * 7, 4, nrepeats=7),
    "repeat_nrepeats_negative": repeat([2, 3], [], 4, nrepeats=-1),
    "repeat_nrepeats_int_min": repeat([2, 3], [], 4, nrepeats=INT_MIN),
    "repeat_negative_count": repeat([3], [1, -1, 2], 4),
    "repeat_negative_count_clamped": repeat([3], [1, -1, 2], 4, opt=options(clamp=True)),
    "repeat_negative_scalar_clamped": repeat([3], [-2], 4, opt=options(clamp=True), flags=DST_SLACK, slack=3),
    "repeat_count_sum_overflow": repeat([2], [INT64_MAX, 1], 1),
    "repeat_scalar_overflow": repeat([4], [INT64_MAX // 3], 1),
    "repeat_output_count_overflow": repeat([2, 8], [1 << 61], 1, axis=0),
    "repeat_byte_overflow": repeat([2], [1 << 61], 8),
    "repeat_null_counts": repeat([3], [2], 4, null=NULL_REPS),
    "repeat_null_counts_none": repeat([0], [], 4, nrepeats='zero', null=NULL_REPS),
    "repeat_huge_valid_output": repeat([2], [1 << 40], 2, axis=0),
    "repeat_ex_never_threads_big": repeat([8, 8, 8], [1000], 2, flags=BIG, opt=options(threads=3, nontemporal=2),
                                          api=API_ARENA),
    "repeat_big_threaded_segments": repeat([8, 8], [1000, 100] * 32, 16, flags=BIG),
    "repeat_many_axes": repeat([1, 2, 1, 1, 3, 1, 1, 2, 1], [2], 4, axis=-5),

    # the family's regions (the flattened repeat's region is a range of its 1-d output)
    "region_repeat_segments_range": repeat([6], [1, 0, 2, 3, 1, 2], 2, region=(0, [start_at(2), ext_of(5)])),
    "region_repeat_axis_counts": repeat([3, 4], [2, 0, 3], 4, axis=0,
                                        region=(0, [start_at(1), ext_of(3), start_at(1), ext_of(2)])),
    "region_repeat_scalar_phase": repeat([3, 4], [3], 2, axis=1, dst_mis=5,
                                         region=(1, [start_zero(), ext_rest(), start_at(2), ext_of(7)])),
    "region_broadcast": bcast([3, 1], [2, 3, 5], 4, region=(0, [start_at(1), ext_one(), start_at(1), ext_of(2),
                                                              start_at(1), ext_of(3)])),
    "region_expand": expand([4, 1], [1, 5], 8, region=(1, [start_at(1), ext_of(2), start_near_end(1), ext_rest()])),
    "region_part_of_huge_repeat": repeat([2, 3], [1 << 40], 2, axis=0,
                                         region=(0, [start_near_end(2), ext_of(5), start_at(1), ext_rest()])),
    "region_part_of_huge_broadcast": bcast([2, 1], [1 << 40, 2, 3], 2,
                                           region=(0, [start_near_end(3), ext_of(2), start_zero(), ext_rest(),
                                                       start_at(1), ext_of(2)])),
    "region_repeat_null_start": repeat([3], [2], 4, null=NULL_REGION, region=(0, [])),
    "region_repeat_past_end": repeat([3], [2], 4, region=(0, [start_at(5), ext_of(4)])),

    # DLPack: tessera_broadcast_to_dlpack (dst's shape is the target), _expand_, _repeat_
    "dlpack_broadcast_to": bcast([3, 1], [2, 3, 5], 4, dl=0, src_mis=3),
    "dlpack_broadcast_prepended_axis": bcast([3, 1], [3, 5], 4, dl=DL_DST_SHAPE, slack=2),
    "dlpack_broadcast_negative_extent": bcast([3, 1], [3, 5], 4, dl=DL_DST_SHAPE),
    "dlpack_broadcast_null_shape_0d": bcast([], [], 4, dl=DL_DST_SHAPE, null=NULL_REPS),
    "dlpack_broadcast_not_compact": bcast([3, 1], [3, 5], 4, dl=DL_DST_NONCOMPACT),
    "dlpack_expand": expand([4, 1], [1, 5], 8, dl=1 | DL_DST_STRIDES),
    "dlpack_expand_dst_shape": expand([4, 1], [1, 5], 8, dl=DL_DST_SHAPE),
    "dlpack_expand_src_device": expand([4, 1], [1, 5], 8, dl=DL_SRC_DEVICE),
    "dlpack_repeat_counts": repeat([6], [1, 0, 2, 3, 1, 2], 2, dl=2),
    "dlpack_repeat_axis": repeat([3, 4], [2], 4, axis=-2, dl=0, perm=1),
    "dlpack_repeat_dtype_mismatch": repeat([3, 4], [2], 4, axis=0, dl=DL_DTYPE_MISMATCH),
    "dlpack_repeat_stride_overflow": repeat([2, 3], [2], 4, axis=0, dl=DL_STRIDE_OVERFLOW),
    "dlpack_repeat_nrepeats_beats_stride_overflow": repeat([2, 3], [], 4, nrepeats=-1, dl=DL_STRIDE_OVERFLOW),
    "dlpack_repeat_null_counts": repeat([2, 3], [1, 2], 4, axis=0, dl=0, null=NULL_REPS),

    # rare: family outputs over 1 MiB (streamed under automatic), 32 MiB allocations, out of memory
    "rare_repeat_4MiB_auto_streaming": repeat([8, 8], [65536], 1, flags=BIG, api=API_HUGE, rare=True),
    "rare_broadcast_37MiB_alloc_fresh_then_reused": bcast([1], [65536, 100], 6, flags=BIG, api=API_HUGE, rare=True),
    "rare_repeat_out_of_memory": repeat([1], [1 << 61], 1, api=API_HUGE, rare=True),

    # The reductions (the gradients): one seed per reduction path at least (the paths do not depend
    # on the SIMD target), every dtype, accumulate, threads, errors, DLPack.
    "reduce_path_zeros_tile_rep_0": tile_back([3], [0], 'float32'),
    "reduce_path_zeros_sum_empty_rows": sum_to([0, 3], [3], 'int16', accumulate=True),
    "reduce_path_lanes_tile_rows": tile_back([3, 8], [4, 1], 'float32'),
    "reduce_path_lanes_sum_to_row": sum_to([5, 4, 6], [1, 4, 6], 'bfloat16', src_mis=3, dst_mis=5),
    "reduce_path_strided_transposed": sum_to([8, 6], [1, 6], 'float64', perm=1),
    "reduce_path_strided_pitch_gap": tile_back([5], [3], 'int32', pitch=3),
    "reduce_path_interleaved_repeat_2": repeat_back([8], [2], 'int32', axis=0),
    "reduce_path_interleaved_repeat_3_rows": repeat_back([4, 8], [3], 'float32', axis=-1),
    "reduce_path_periodic_sum_to_scalar": sum_to([8, 8, 8], [], 'float32'),
    "reduce_path_periodic_narrow_tile": tile_back([2, 3], [1, 31], 'float16'),
    "reduce_path_periodic_column": sum_to([6, 8, 8], [6, 1, 1], 'uint16'),
    "reduce_path_segments_flat": repeat_back([4], [1, 0, 2, 3], 'uint8'),
    "reduce_path_segments_axis": repeat_back([2, 5], [2, 0, 1, 4, 1], 'complex64', axis=1, perm=1),
    # sub-kernels inside the paths (lib/kernels/path_counters.hpp, Variant): short contiguous runs
    # of a column, N items at a time and the rest (ShortRun1N, ShortRun1); a narrow tile's w = 3
    # rows (ShortRun3N, or ShortRun3x8 on 8-lane accumulators); a count-1 segment of a transposed
    # gradient, whose outputs are a row apart (LeafRows with a destination stride); w = 5 (ShortRun<80>);
    # 100 addends in 13 leaves (RegTree)
    "reduce_variant_short_runs_8_items": repeat_back([8], [16], 'float32', axis=0),
    "reduce_variant_short_runs_7_items": repeat_back([7], [16], 'float64', axis=0),
    "reduce_variant_narrow_w3_float64": tile_back([8, 3], [1, 31], 'float64'),
    "reduce_variant_narrow_w3_float32": tile_back([8, 3], [1, 31], 'float32'),
    "reduce_variant_segment_dst_stride": repeat_back([8, 5], [1, 2, 1, 3, 1], 'float32', axis=1, perm=1),
    # reduce.segments.runs with N segments per vector (N <= 8 lanes of float64 accumulators)
    "reduce_variant_segment_runs_float32": repeat_back([8], [1, 0, 2, 3, 1, 4, 2, 16], 'float32', axis=0),
    "reduce_variant_segment_runs_float64": repeat_back([2, 8], [3, 1, 0, 2, 5, 1, 4, 2], 'float64', axis=1,
                                                       accumulate=True),
    "reduce_variant_narrow_w5": tile_back([2, 5], [1, 16], 'float32'),
    "reduce_variant_13_leaves": tile_back([2, 8], [100, 1], 'float32'),
    # 3 addend rows of 512 elements (the kept axes merged): read a row at a time through the
    # scratch row (lanes:RegTreeItem<K>.rows_scratch, rows longer than 16 vectors)
    "reduce_variant_rows_scratch": tile_back([8, 8, 8], [3, 1, 1], 'float32'),
    # 64 float32 counts of 0-4 (the flattened A): segments_runs sums them in groups from the
    # one-byte counts (segments.runs:groups; 2N segments a step, 16 with AVX-512)
    "reduce_variant_segment_groups": repeat_back([8, 8], [(k * 7 + 3) % 5 for k in range(64)], 'float32'),
    # prefetched along the gradient where the reductions prefetch along the rows (an Intel mesh L3,
    # or TESSERA_PREFETCH_BYTES): 21 rows of 256 bytes in segments of 0-5 (segments:SegmentItems.ahead),
    # one item of 4096 float32 pairs, 32 KiB (interleaved:PairRowF32.ahead), and 8 items of 3 rows
    # of 256 bytes read whole, each prefetched along its rows (lanes:RegTreeItem<K>.rows_along)
    "reduce_variant_segments_ahead": repeat_back([8, 8, 8], [3, 2, 0, 4, 1, 2, 4, 5], 'float32', axis=0),
    "reduce_variant_pairs_float32_ahead": repeat_back([8, 8, 8, 8], [2], 'float32', axis=-1),
    "reduce_variant_rows_along": tile_back([8, 8, 8], [1, 3, 1], 'float32'),
    # 8 items of 16 addend rows of 256 bytes (two leaves: reduce.lanes.reg.tree4, each row read
    # whole where 8 vectors of accumulators hold 64 float32: AVX-512), each prefetched along its
    # rows where short rows are prefetched (lanes:RegTreeItem<0,NL>.rows_along)
    "reduce_variant_tree_rows_along": tile_back([8, 8, 8], [1, 16, 1], 'float32'),
    # where the reductions prefetch a periodic item's rows (reduce_prefetch_bytes() > 0): 128 items
    # of 16 rows of w = 5 (the folded row needs 64 elements or more: 320 bytes), each item's lines
    # fetched ahead one by one by reduce.periodic.rows, at once or spread among its loads as the
    # policy plans (periodic.rows/reg16:prefetch_at_once or :prefetch_spread)
    "reduce_variant_periodic_rows_ahead": sum_to([8, 8, 2, 8, 2, 5], [8, 8, 2, 1, 1, 5], 'float32'),
    # 2 items of three addend rows of 8 KiB (the lanes path's long rows, read across the rows;
    # 48 KiB in all, within kMaxBytes): each row's lines prefetched along it where
    # reduce_prefetch_long_rows_bytes() > 0 (lanes:Item.long_rows_ahead), the first item's last
    # ones the second's first (lanes:Item.long_rows_next)
    "reduce_variant_long_rows_ahead": sum_to([2, 3, 8, 8, 8, 4], [2, 1, 8, 8, 8, 4], 'float32'),
    # 147 addend rows of 5120 bytes (19 leaves of reduce.lanes.leaves, a big gradient of 750 KiB):
    # each leaf's rows prefetched along themselves and on into the next leaf's where
    # reduce_prefetch_long_rows_bytes() > 0 (LanesLeaves:LeafRows.ahead, .next)
    "reduce_variant_leaves_long_rows": sum_to([3, 7, 7, 5, 8, 8, 8, 2], [1, 1, 1, 5, 8, 8, 8, 2], 'uint8', flags=BIG),

    # every dtype (sum over the leading axis of a transposed (3, 5)), half of them accumulating
    **{f"reduce_dtype_{name}": sum_to([3, 5], [1, 5], name, accumulate=i % 2 == 1, perm=1)
       for i, name in enumerate(DTYPES)},
    "reduce_float16_sums_round": tile_back([1], [100, 8], 'float16', accumulate=True),
    "reduce_bfloat16_sums_round": sum_to([8, 8, 8], [1, 1, 8], 'bfloat16', strides=[zero(), pos(), pos()]),
    "reduce_complex128_reversed": tile_back([3, 2], [2, 2], 'complex128', strides=[neg(), pos(1)]),
    "reduce_int8_wraps_raw_strides": sum_to([6, 5], [1, 5], 'int8', strides=[raw(-7), raw(3)], src_mis=1),
    "reduce_uint64_zero_strides": tile_back([4], [8, 2], 'uint64', strides=[zero(), pos()]),
    "reduce_repeat_no_axis_2d": repeat_back([2, 3], [2], 'int64'),
    "reduce_repeat_zero_d": repeat_back([], [3], 'float64', axis=0),
    "reduce_repeat_zero_counts": repeat_back([3, 2], [0], 'float32', axis=0, accumulate=True),
    "reduce_tile_promoted_axes": tile_back([3], [2, 4, 1], 'int16'),
    "reduce_tile_0d": tile_back([], [5], 'float32'),
    "reduce_sum_same_shape": sum_to([2, 3, 4], [2, 3, 4], 'complex64', accumulate=True),
    "reduce_null_strides": tile_back([2, 3], [3, 2], 'float64', flags=NULL_STRIDES),
    "reduce_empty_result": tile_back([0, 3], [2, 2], 'float32'),
    "reduce_empty_result_null_dst": sum_to([3, 0], [3, 0], 'int8', flags=DST_NULL),
    # threaded (0.5 MiB of work or more): over the result's items, over the replicas, segments
    "reduce_big_threaded_over_items": tile_back([8, 8, 8], [6, 6, 6], 'float64', flags=BIG),
    "reduce_big_threaded_over_replicas": sum_to([8] * 6, [], 'float32', flags=BIG),
    "reduce_big_threaded_zero_strides_accumulate": sum_to([8] * 6, [8], 'float64', accumulate=True, flags=BIG,
                                                          strides=[zero(), zero(), pos(), pos(), pos(), pos()]),
    "reduce_big_threaded_interleaved": repeat_back([8, 8, 8, 8, 8], [2], 'float64', axis=-1, flags=BIG),
    "reduce_big_threaded_segments": repeat_back([4], [65536, 1000, 65536, 100], 'float32', axis=0, flags=BIG),
    "reduce_big_threads_2_arena": sum_to([8] * 6, [8, 8, 1], 'int32', flags=BIG, opt=options(threads=2),
                                         api=API_ARENA),
    # options
    "reduce_ex_null_options": tile_back([3, 4], [2, 2], 'float32', opt='null'),
    "reduce_nt_always": sum_to([4, 8, 8], [1, 8, 8], 'float32', opt=options(nontemporal=1), accumulate=True),
    "reduce_nt_never_clamp": tile_back([3], [-2, 2], 'float32', opt=options(nontemporal=2, clamp=True)),
    "reduce_accumulate_0_1_caller": tile_back([3], [4], 'float32', accumulate=True, opt=options(),
                                              opt_size=OPT_SIZE_NO_NONTEMPORAL),
    "reduce_accumulate_2": tile_back([3], [4], 'int32', bad_accumulate=True),
    "reduce_options_size_zero": sum_to([3, 4], [4], 'float32', opt=options(), opt_size=OPT_SIZE_ZERO),
    "reduce_bad_nontemporal": repeat_back([3], [2], 'float32', opt=options(bad_nontemporal=3)),
    # rejections: the result untouched
    "reduce_dtype_14": tile_back([3], [2], 14),
    "reduce_dtype_minus_1": sum_to([3], [1], -1),
    "reduce_dtype_bad_after_forward_overflow": tile_back([3, 3], [3037000500] * 3, -1),
    "reduce_gradient_shape_wrong_extent": tile_back([3, 2], [2, 2], 'float32', grad_fault=True),
    "reduce_gradient_shape_extra_axis": repeat_back([3], [2], 'int8', axis=0, grad_fault=True, slack=2),
    "reduce_tile_negative_rep": tile_back([3], [-1], 'float32'),
    "reduce_tile_count_overflow": tile_back([2, 2], [1 << 62, 4], 'float32'),
    "reduce_sum_target_too_many_axes": sum_to([3], [1, 3], 'float32'),
    "reduce_sum_target_not_broadcast": sum_to([3, 4], [2, 4], 'float32'),
    "reduce_sum_negative_target": sum_to([3, 4], [-1, 4], 'float32'),
    "reduce_sum_gradient_count_overflow": sum_to([8] * 64, [], 'float32'),
    "reduce_gradient_bytes_overflow": tile_back([1], [1 << 61], 'float32', flags=NULL_STRIDES),
    "reduce_result_bytes_overflow": tile_back([8] * 20 + [1] * 4, [], 'float64'),
    "reduce_huge_gradient_not_read": tile_back([1], [1 << 61], 'float32'),
    "reduce_repeat_axis_out_of_range": repeat_back([3], [2], 'float32', axis='ndim'),
    "reduce_repeat_counts_sum_overflow": repeat_back([2], [INT64_MAX, 1], 'float32', axis=0),
    "reduce_repeat_negative_nrepeats": repeat_back([3], [], 'float32', axis=0, nrepeats=-1),
    "reduce_repeat_wrong_nrepeats": repeat_back([3], [], 'float32', axis=0, nrepeats='extent+1'),
    "reduce_negative_extent": tile_back([3, 2], [2], 'float32', flags=NEG_EXTENT, slack=1),
    "reduce_ndim_65": sum_to([1] * 64, [], 'float32', ndim=65),
    "reduce_null_gradient_shape": tile_back([3], [2], 'float32', null=NULL_SHAPE),
    "reduce_null_in_shape": tile_back([3], [2], 'float32', null=NULL_SHAPE | ALT),
    "reduce_null_list": repeat_back([3], [1, 2, 3], 'float32', axis=0, null=NULL_REPS),
    "reduce_null_out_plan": sum_to([3, 4], [4], 'float32', null=NULL_OUT_PTR),
    "reduce_null_plan": sum_to([3, 4], [4], 'float32', null=NULL_PLAN),
    "reduce_null_out_shape": sum_to([3, 4], [4], 'float32', null=NULL_OUT_SHAPE),
    "reduce_null_src": tile_back([3], [2], 'float32', flags=NULL_SRC),
    "reduce_null_src_empty_gradient": tile_back([3], [0], 'float32', flags=NULL_SRC),
    "reduce_null_dst": tile_back([3], [2], 'float32', flags=DST_NULL),
    "reduce_dst_short": tile_back([3, 4], [2], 'float64', flags=DST_SHORT, slack=5),
    "reduce_dst_zero": tile_back([3], [2], 'float32', flags=DST_ZERO),
    "reduce_dst_slack": tile_back([3], [2], 'uint16', flags=DST_SLACK, slack=9),
    "reduce_dst_huge_claim": tile_back([3], [2], 'uint32', flags=DST_HUGE_CLAIM),
    "reduce_region_refused": tile_back([3, 4], [2, 1], 'float32', region=(0, [start_zero(), ext_rest()] * 2)),
    # DLPack: tessera_tile_backward_dlpack, _sum_to_shape_, _repeat_backward_ (the result's shape is
    # the call's shape argument)
    "reduce_dlpack_tile": tile_back([3, 4], [2, 2], 'float32', dl=0, src_mis=2),
    "reduce_dlpack_sum_accumulate": sum_to([4, 3, 5], [3, 1], 'float16', dl=DL_DST_STRIDES, accumulate=True),
    "reduce_dlpack_repeat_counts": repeat_back([5], [1, 0, 2, 3, 1], 'int64', dl=0),
    "reduce_dlpack_repeat_axis_options": repeat_back([3, 4], [2], 'complex128', axis=-1, dl=0,
                                                     opt=options(threads=1)),
    "reduce_dlpack_not_added_dtype": tile_back([3], [2], 'float32', dl=DL_NOT_ADDED, slack=1),
    "reduce_dlpack_bad_dtype_code": tile_back([3], [2], 14, dl=0),
    "reduce_dlpack_dtype_mismatch": sum_to([3, 4], [4], 'int32', dl=DL_DTYPE_MISMATCH),
    "reduce_dlpack_stride_overflow": tile_back([3], [2], 'float64', dl=DL_STRIDE_OVERFLOW),
    "reduce_dlpack_stride_overflow_beats_options": tile_back([3], [2], 'float64', dl=DL_STRIDE_OVERFLOW,
                                                             bad_accumulate=True),
    "reduce_dlpack_result_shape_off": tile_back([3, 4], [2, 2], 'float32', dl=DL_DST_SHAPE),
    "reduce_dlpack_result_shape_leading_1": tile_back([3], [2, 2], 'float32', dl=DL_DST_SHAPE, slack=2),
    "reduce_dlpack_not_compact": sum_to([2, 3, 4], [3, 4], 'float32', dl=DL_DST_NONCOMPACT),
    "reduce_dlpack_src_device": repeat_back([3], [2], 'float32', dl=DL_SRC_DEVICE),
    "reduce_dlpack_null_result": sum_to([3, 4], [4], 'float32', dl=0, null=NULL_TENSOR | ALT),
    "reduce_dlpack_big_not_read": tile_back([1], [1 << 40], 'float32', dl=0),
    # plans of gradients too large to exist (or empty ones beside huge extents): valid requests
    # whose planning must not overflow (UBSan: signed integer overflow in reduce_planner.cpp)
    "reduce_plan_huge_count_times_stride": repeat_back([1], [INT64_MAX // 2], 'float32', axis=0),
    "reduce_plan_reduced_extents_of_empty_result": tile_back([0], [1 << 61, 1 << 40], 'float32'),
    "reduce_plan_empty_target_huge_extents": sum_to([2, 3, 4], [0, 3037000500, 3037000500], 'float32'),
    "reduce_plan_empty_result_huge_bytes": tile_back([8] * 20 + [0, 1, 1, 1], [], 'float64'),
    "reduce_plan_periodic_run_near_int64_max": tile_back([1], [INT64_MAX - 1], 'int8', flags=NULL_STRIDES),
    "reduce_plan_leaves_near_int64_max": tile_back([1], [INT64_MAX], 'int8', pitch=1),
    "reduce_plan_merge_extent_times_stride": tile_back([1, 1], [2, 1 << 61], 'float32'),
    # an empty gradient beside extents whose product overflows: its element count is 0, as the
    # family counts it (tessera_tile_shape takes the same shape)
    "reduce_empty_gradient_huge_extents": sum_to([8] * 22 + [0, 1], [0, 1], 'float32'),
    "reduce_negative_extent_after_huge_extents": sum_to([8] * 22 + [1, 1], [1], 'float32', flags=NEG_EXTENT,
                                                        slack=23),
    # Found by the fuzzer: a float32 repeat_backward by 2 (reduce.interleaved's float32
    # pairs) whose result is off its elements' alignment — the scalar ends stored through a float*.
    "found_reduce_pairs_f32_misaligned": bytes.fromhex("8200010101800000525252525202010000"),
    # Found by CI's fuzzer (at 74b14d1): a complex128 repeat_backward gradient of INT64_MAX - 1
    # elements at stride 16 (a NULL source): its real parts, twice as many, overflowed int64 in the
    # planner; a gradient's byte size must now fit int64 whatever its strides (OVERFLOW).
    "found_reduce_complex_real_parts_overflow": bytes.fromhex("f2250000206e6f6e650c74f2250000206e6f"),
}


def check(build_dir):
    """Runs the fuzzer over the seeds alone under both dispatches (as tests/run does); fails unless
    every listed executor path is reached by one of them, or named in tests/fuzz/unreached-paths, and
    every sub-kernel of the targets' code (path_counters.hpp, Variant) likewise, or named in
    tests/fuzz/unreached-subkernels."""
    exe = pathlib.Path(build_dir) / "tests" / "fuzz" / "fuzz_tile"
    here = pathlib.Path(__file__).resolve().parent
    corpus = here / "corpus"
    def names(file):
        return {line.split("#")[0].split()[0] for line in (here / file).read_text().splitlines()
                if line.split("#")[0].split()}
    excepted, sub_excepted = names("unreached-paths"), names("unreached-subkernels")
    ok = True
    reached, listed = set(), []
    sub_reached, sub_missed = set(), set()
    for target in ("", "SCALAR"):
        with tempfile.TemporaryDirectory() as scratch:
            env = dict(os.environ, TESSERA_FUZZ_PATHS="1", TESSERA_FUZZ_TARGET=target)
            r = subprocess.run([str(exe), "-runs=0", f"-artifact_prefix={scratch}/", str(corpus)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        log = r.stdout
        got = re.search(r"^fuzz_tile: executor paths reached:(.*)$", log, re.M)
        lst = re.search(r"^fuzz_tile: executor paths listed:(.*)$", log, re.M)
        missed = re.search(r"^fuzz_tile: executor paths not reached:(.*)$", log, re.M)
        features = re.search(r"^fuzz_tile: features reached:(.*)$", log, re.M)
        name = target or "default"
        if r.returncode != 0 or got is None or lst is None:
            print(log[-3000:])
            print(f"{name}: the fuzzer failed (exit {r.returncode})")
            ok = False
            continue
        reached |= {w.split("=")[0] for w in got.group(1).split()}
        sub_got = re.search(r"^fuzz_tile: sub-kernels reached:(.*)$", log, re.M)
        sub_not = re.search(r"^fuzz_tile: sub-kernels not reached:(.*)$", log, re.M)
        if sub_got is None or sub_not is None:  # a build without -Dpath_counters=true counts nothing
            print(f"{name}: the fuzzer printed no sub-kernel counts (build with -Dpath_counters=true)")
            ok = False
            continue
        sub_reached |= {w.split("=")[0] for w in sub_got.group(1).split()}
        sub_missed |= set(sub_not.group(1).split())
        listed = lst.group(1).split()
        print(f"{name}: paths not reached by the seeds:{missed.group(1) or ' none'}")
        print(f"{name}: features:{features.group(1) if features else ' ?'}")
    missing = [p for p in listed if p not in reached and p not in excepted]
    print(f"both runs: {len([p for p in listed if p in reached])} of {len(listed)} listed paths reached; "
          f"not reached:{' ' + ' '.join(missing) if missing else ' none'}"
          f"{' (exceptions: ' + ' '.join(sorted(excepted)) + ')' if excepted else ''}")
    sub_missing = sorted(sub_missed - sub_reached - sub_excepted)
    stale = sorted(sub_excepted - sub_missed - sub_reached)
    if stale:
        print(f"tests/fuzz/unreached-subkernels names sub-kernels the fuzzer does not report: {' '.join(stale)}")
    print(f"both runs: {len(sub_reached)} sub-kernels reached; not reached:"
          f"{' ' + ' '.join(sub_missing) if sub_missing else ' none'}"
          f"{' (exceptions: ' + ' '.join(sorted(sub_excepted)) + ')' if sub_excepted else ''}")
    return ok and bool(listed) and not missing and not sub_missing and not stale


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(0 if check(sys.argv[2]) else 1)
    out = pathlib.Path(__file__).resolve().parent / "corpus"
    out.mkdir(exist_ok=True)
    for old in out.iterdir():
        old.unlink()
    for name, data in SEEDS.items():
        (out / name).write_bytes(data)
    print(f"wrote {len(SEEDS)} seeds to {out}")


if __name__ == "__main__":
    main()
