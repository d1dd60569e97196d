#!/usr/bin/python3
"""The mutants of tests/mutants/run: deliberate bugs, each one exact text replacement in one file.

Every mutant names the file and function it changes, the text it replaces and the text it puts
there. `apply` fails loudly (exit 1) unless the text occurs exactly once in that file, so a
refactor that moves or rewrites the code makes the mutation run fail instead of silently testing
nothing; the replacement keeps the file's line count (asserts and HWY_ASSERT carry __LINE__, so a
mutant build that differs from the clean one differs in code, not in line numbers).

Usage (from tests/mutants/run):
  mutants.py list                      ids, one a line, in the order the run builds them
  mutants.py show ID                   file, function and what the mutant does (tab-separated)
  mutants.py apply ID SRC_DIR          applies mutant ID to the tree at SRC_DIR
  mutants.py sync FROM_DIR TO_DIR      makes TO_DIR a copy of FROM_DIR, rewriting only the files
                                       that differ (unchanged files keep their mtime: an
                                       incremental rebuild recompiles only what changed)
"""
import filecmp
import os
import pathlib
import shutil
import sys

# (id, file, function, what it changes, old text, new text). Ordered by file so that consecutive
# builds recompile as little as possible (planner/executor are seconds, region.cpp tens of seconds,
# dispatch.cpp and row_kernels-inl.h -- compiled for every Highway target -- the most).
MUTANTS = [
    # --- (5) the region merge and other region_of slips (lib/executor.cpp, seconds to rebuild)
    ('region-merge-off-by-one', 'lib/executor.cpp', 'region_of',
     'an inner axis covering one element less than its period is merged as if it covered the whole period',
     'if (in.start == 0 && in.extent == in.period &&',
     'if (in.start == 0 && in.extent >= in.period - 1 &&'),
    ('region-unwrapped-index', 'lib/executor.cpp', 'region_of',
     'an axis of extent 1 takes its source index unwrapped (start, not start % period)',
     'r.src_offset += first * stride;  // a constant source index on this axis',
     'r.src_offset += start[i] * stride;  // a constant source index on this axis'),
    # --- (3) a stride's sign lost
    ('region-stride-abs', 'lib/executor.cpp', 'region_of',
     'a negative input stride is walked as positive by the region kernel',
     'const int64_t stride = period == 1 ? 0 : plan.in_strides[i - pad];',
     'const int64_t stride = period == 1 ? 0 : (plan.in_strides[i - pad] < 0 ? -plan.in_strides[i - pad] : plan.in_strides[i - pad]);'),
    # --- (1) a tail not written: the executor's last partial chunk
    ('chunk-tail-dropped', 'lib/executor.cpp', 'execute',
     'the threaded executor rounds the chunk count down: the last partial chunk is not written',
     'const int64_t nchunks = (total + chunk - 1) / chunk;',
     'const int64_t nchunks = total / chunk;'),
    # --- (3) a stride's sign lost in the planner
    ('planner-merge-stride-abs', 'lib/planner.cpp', 'make_plan',
     'axes merge when |outer stride| == |inner stride * extent|: a reversed axis merges with a forward one',
     '&span) && span == e[k].stride) {',
     '&span) && (span < 0 ? -span : span) == (e[k].stride < 0 ? -e[k].stride : e[k].stride)) {'),
    # --- (5) off by one in the region kernel's period (lib/kernels/region.cpp)
    ('region-period-off-by-one', 'lib/kernels/region.cpp', 'RegionAxisFill',
     'an outer region axis longer than its period replicates period + 1 steps instead of period',
     'const int64_t first = a.extent < a.period ? a.extent : a.period;\n  int64_t idx = a.start;',
     'const int64_t first = a.extent <= a.period ? a.extent : a.period + 1;\n  int64_t idx = a.start;'),
    # --- (1) tail vectors skipped (lib/kernels/row_kernels-inl.h: rebuilds dispatch.cpp and region.cpp)
    ('copy-tail-vector', 'lib/kernels/row_kernels-inl.h', 'CopyBytes',
     'the last, partial vector of a contiguous copy is not stored',
     'if (i < n) hn::StoreU(hn::LoadU(d, src + n - N), d, dst + n - N);',
     'if (false && i < n) hn::StoreU(hn::LoadU(d, src + n - N), d, dst + n - N);'),
    ('fill-tail-vector', 'lib/kernels/row_kernels-inl.h', 'StoreRepeated',
     'the last, partial vector of an element fill is not stored',
     'if (i < nbytes) hn::StoreU(v, d, reinterpret_cast<T*>(dst + nbytes - vbytes));',
     'if (false && i < nbytes) hn::StoreU(v, d, reinterpret_cast<T*>(dst + nbytes - vbytes));'),
    ('stream-tail', 'lib/kernels/row_kernels-inl.h', 'CopyStream',
     'the ordinary-store tail after the streamed (non-temporal) body of a piece is not written',
     '  CopyBytes(dst + i, src + i, n - i);\n#endif\n}',
     '  (void)0;  // MUTANT: CopyBytes(dst + i, src + i, n - i) dropped\n#endif\n}'),
    # --- (2) one replica not written
    ('pattern-replica-skipped', 'lib/kernels/row_kernels-inl.h', 'FillPattern',
     'a long-run pattern row leaves one replica of its run unwritten (when two or more follow the first)',
     'size_t done = first;',
     'size_t done = first + (nbytes - first >= 2 * run_bytes ? run_bytes : 0);'),
    # --- lib/kernels/dispatch.cpp
    ('walk-last-outer-replica', 'lib/kernels/dispatch.cpp', 'WalkRows',
     'the whole-output loop of a shallow plan (small outputs) skips its last outer iteration',
     'for (int64_t i = 0; i < e0; ++i) {  // offsets, not pointers',
     'for (int64_t i = 0; i < e0 - (e0 > 1); ++i) {  // offsets, not pointers'),
    ('gather-last-replica', 'lib/kernels/dispatch.cpp', 'ExecuteGather',
     'the blocked gather writes its gathered tile to every replica but the last',
     'for (int64_t e = 0; e < copies; ++e, d += copy_bytes) {',
     'for (int64_t e = 0; e < (copies > 1 ? copies - 1 : 1); ++e, d += copy_bytes) {'),
    ('staged-stream-last-block', 'lib/kernels/dispatch.cpp', 'ExecuteStagedStream',
     'the last, partly filled staging block of a streamed range is not written out',
     '  CopyStream(out, stage, fill * isz);\n}',
     '  (void)0;  // MUTANT: CopyStream(out, stage, fill * isz) dropped\n}'),
    # --- (4) the streaming fence
    ('stream-no-fence', 'lib/kernels/dispatch.cpp', 'ExecuteStreamOrRows',
     'no hwy::FlushStream() (sfence) after a range written with non-temporal stores',
     '  hwy::FlushStream();  // order the streaming stores before the range is reported done',
     '  // MUTANT: hwy::FlushStream() dropped'),
]

BY_ID = {m[0]: m for m in MUTANTS}
assert len(BY_ID) == len(MUTANTS), 'duplicate mutant id'


def fail(msg):
    print(f'mutants.py: {msg}', file=sys.stderr)
    sys.exit(1)


def apply(mid, src_dir):
    if mid not in BY_ID:
        fail(f'no mutant {mid!r}')
    _, rel, func, _, old, new = BY_ID[mid]
    path = pathlib.Path(src_dir) / rel
    if not path.is_file():
        fail(f'{mid}: {rel} does not exist in {src_dir}')
    text = path.read_text()
    count = text.count(old)
    if count != 1:
        fail(f'{mid}: the text to mutate occurs {count} times in {rel} (expected exactly once; '
             f'{func} was changed? update tests/mutants/mutants.py):\n  {old!r}')
    if old.count('\n') != new.count('\n'):
        fail(f'{mid}: the replacement changes the line count')
    path.write_text(text.replace(old, new))  # a new mtime: ninja recompiles what includes it


def sync(from_dir, to_dir):
    src, dst = pathlib.Path(from_dir), pathlib.Path(to_dir)
    want = {p.relative_to(src) for p in src.rglob('*') if p.is_file() or p.is_symlink()}
    have = {p.relative_to(dst) for p in dst.rglob('*') if p.is_file() or p.is_symlink()} if dst.exists() else set()
    changed = 0
    for rel in sorted(have - want):
        (dst / rel).unlink()
        changed += 1
    for rel in sorted(want):
        a, b = src / rel, dst / rel
        if b.exists() and not a.is_symlink() and not b.is_symlink() and filecmp.cmp(a, b, shallow=False):
            continue
        b.parent.mkdir(parents=True, exist_ok=True)
        if b.exists() or b.is_symlink():
            b.unlink()
        if a.is_symlink():
            os.symlink(os.readlink(a), b)
        else:
            shutil.copy(a, b)  # content and mode; the mtime is now
        changed += 1
    print(changed)


def main(argv):
    if len(argv) == 2 and argv[1] == 'list':
        for m in MUTANTS:
            print(m[0])
    elif len(argv) == 3 and argv[1] == 'show':
        m = BY_ID.get(argv[2]) or fail(f'no mutant {argv[2]!r}')
        print(f'{m[1]}\t{m[2]}\t{m[3]}')
    elif len(argv) == 4 and argv[1] == 'apply':
        apply(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == 'sync':
        sync(argv[2], argv[3])
    else:
        fail('usage: mutants.py list | show ID | apply ID SRC_DIR | sync FROM_DIR TO_DIR')


if __name__ == '__main__':
    main(sys.argv)
