#!/usr/bin/env python3
"""Writes the hand-made seed corpus of fuzz_tile (tests/fuzz/corpus/), one small file per case.

The byte format is documented at the top of fuzz_tile.cpp; each seed names what it exercises.
Rerun after changing the format: tests/fuzz/make_corpus.py (standard library only).
"""
import pathlib

# Rep codes: 0..5 stand for themselves (kSmallReps); other values index kSpecialReps, copied here
# in the same order as in fuzz_tile.cpp.
INT64_MAX, INT64_MIN = 2**63 - 1, -2**63
SPECIAL_REPS = [6, 7, 8, 9, 16, 31, 100, 1000, 65536, 1 << 20,
                (1 << 31) - 1, 1 << 31, 1 << 32, 1 << 40, 1 << 61,
                1 << 62, INT64_MAX // 3, INT64_MAX // 2, INT64_MAX - 1, INT64_MAX,
                -1, -2, -7, -(1 << 62), INT64_MIN + 1, INT64_MIN,
                0, 1, 2, 3,
                3037000499,
                3037000500]
assert len(SPECIAL_REPS) == 32

# flags (byte 3)
NULL_STRIDES, NULL_SRC, NEG_EXTENT, ZERO_ITEMSIZE, BIG = 1, 2, 32, 64, 128
DST_EXACT, DST_SLACK, DST_SHORT, DST_ZERO, DST_NULL, DST_HUGE_CLAIM = (m << 2 for m in range(6))

# stride codes (one per axis): parent axis with `gap` extra elements, positive/negative/zero, or raw
def pos(gap=0): return [gap << 2]
def neg(gap=0): return [(gap << 2) | 2]
def zero(): return [3]
def raw(byte_stride): return [0xE0, byte_stride & 0xFF]


def rep(r):
    return r if 0 <= r <= 5 else 0xE0 + SPECIAL_REPS.index(r)


def case(shape, reps, itemsize, strides=None, flags=0, perm=0, src_mis=0, dst_mis=0, slack=0, pitch_gap=0):
    strides = strides or [pos() for _ in shape]
    out = [len(shape), len(reps), itemsize - 1, flags, perm, src_mis, dst_mis, slack, pitch_gap]
    out += shape
    for s in strides:
        out += s
    out += [rep(r) for r in reps]
    return bytes(out)


SEEDS = {
    # successful tiles, one or more per executor path
    "copy_2d_row_gaps": case([3, 4], [2, 1], 4, strides=[pos(), pos(1)]),
    "pattern_short_2d": case([3, 4], [2, 3], 4, dst_mis=3),
    "pattern_long_8x8x4B": case([8, 8], [3, 1, 1], 4),
    "pattern_shuffle_12B_run": case([3], [100, 4], 4, dst_mis=9),
    "pattern_4KiB_run_nt_direct": case([8, 8, 8], [3, 1, 1, 1], 8, dst_mis=1),
    "copy_4KiB_rows_nt_direct": case([2, 8, 8, 8], [2, 1, 1, 1], 8, strides=[pos(), pos(1), pos(), pos()]),
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
}


def main():
    out = pathlib.Path(__file__).resolve().parent / "corpus"
    out.mkdir(exist_ok=True)
    for old in out.iterdir():
        old.unlink()
    for name, data in SEEDS.items():
        (out / name).write_bytes(data)
    print(f"wrote {len(SEEDS)} seeds to {out}")


if __name__ == "__main__":
    main()
