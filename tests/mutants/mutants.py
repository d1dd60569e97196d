#!/usr/bin/python3
"""The mutants of tests/mutants/run: deliberate bugs, each one exact text replacement in one file.

Every mutant names the file and function it changes, the text it replaces and the text it puts
there, and the suites of tests/mutants/run that run on it (in that order; the first that fails
catches it): the C suites (unit, oracle, fence) and the Python suite (python) by default, only
python for a mutant of the Python module (its C++ or its .py files), which no C suite loads. `apply` fails loudly (exit 1) unless the text occurs exactly once in that file, so a
refactor that moves or rewrites the code makes the mutation run fail instead of silently testing
nothing; the replacement keeps the file's line count (asserts and HWY_ASSERT carry __LINE__, so a
mutant build that differs from the clean one differs in code, not in line numbers).

Usage (from tests/mutants/run):
  mutants.py list                      ids, one a line, in the order the run builds them
  mutants.py count                     how many mutants there are
  mutants.py show ID                   file, function, what the mutant does and its suites
                                       (comma-separated; tab-separated fields)
  mutants.py apply ID SRC_DIR          applies mutant ID to the tree at SRC_DIR
  mutants.py check SRC_DIR             checks that every mutant applies to the tree at SRC_DIR (its
                                       text occurs exactly once, its file exists), changing nothing
  mutants.py sync FROM_DIR TO_DIR      makes TO_DIR a copy of FROM_DIR, rewriting only the files
                                       that differ (unchanged files keep their mtime: an
                                       incremental rebuild recompiles only what changed)
"""
import filecmp
import os
import pathlib
import shutil
import sys

# The suites a mutant runs: the default, and a Python module's mutants' (the C suites never load it).
ALL = ('unit', 'oracle', 'fence', 'python')
PYTHON = ('python',)

# (id, file, function, what it changes, old text, new text[, suites]). Ordered by file so that
# consecutive builds recompile as little as possible (planner/executor are seconds, region.cpp a
# minute, rows.cpp and row_kernels-inl.h, reduce.cpp and reduce_scalar.hpp -- compiled for every
# Highway target -- several minutes each, and again for the next mutant once restored; a Python
# file, nothing), the cheap ones first, then the reductions' kernels before the copying ones: a run
# cut short has then tried the newest code.
MUTANTS = [
    # --- (5) region planning slips (lib/planner.cpp, seconds to rebuild)
    ('region-merge-off-by-one', 'lib/planner.cpp', 'plan_region',
     'an inner axis covering one element less than its period is merged as if it covered the whole period',
     'if (in.start == 0 && in.extent == in.period &&',
     'if (in.start == 0 && in.extent >= in.period - 1 &&'),
    ('region-unwrapped-index', 'lib/planner.cpp', 'plan_region',
     'an axis of extent 1 takes its source index unwrapped (start, not start % period)',
     'r.src_offset += x.start * x.stride;  // a constant source index on this axis',
     'r.src_offset += start[i] * x.stride;  // a constant source index on this axis'),
    # --- a planner decision: where replicas are written in steps
    ('replica-steps-whole-l2', 'lib/planner.cpp', 'beyond_l2',
     'replicas are walked in steps only from a source larger than all of L2 (not half of it)',
     'return n >= (l2 > 0 ? l2 : kReplicaUnknownL2Bytes) / 2 / isz;',
     'return n > (l2 > 0 ? l2 : kReplicaUnknownL2Bytes) / isz;'),
    # --- a planner decision: from which run length a pattern's runs are one memcpy each
    ('pattern-memcpy-from-32k', 'lib/planner.cpp', 'choose_path',
     'runs are copied by memcpy (pattern.memcpy) only from 32 KiB, not from kMemcpyRunBytes (16 KiB)',
     'p.run_bytes >= kMemcpyRunBytes)',
     'p.run_bytes >= 2 * kMemcpyRunBytes)'),
    # --- (3) a stride's sign lost
    ('region-stride-abs', 'lib/planner.cpp', 'region_axis',
     'a negative input stride is walked as positive by the region kernel',
     'RegionAxis x{period, period == 1 ? 0 : a.stride, 0, extent, 0, 0, 0};',
     'RegionAxis x{period, period == 1 ? 0 : (a.stride < 0 ? -a.stride : a.stride), 0, extent, 0, 0, 0};'),
    ('planner-merge-stride-abs', 'lib/planner.hpp', 'affine_pair',
     'walks merge when |outer stride| == |inner stride * extent|: a reversed axis merges with a forward one',
     'return !__builtin_mul_overflow(inner_stride, inner_extent, &span) && span == outer_stride;',
     'return !__builtin_mul_overflow(inner_stride, inner_extent, &span) && (span < 0 ? -span : span) == (outer_stride < 0 ? -outer_stride : outer_stride);'),
    # --- the reductions' planner (lib/reduce_planner.cpp)
    ('reduce-complex-parts', 'lib/reduce_planner.cpp', 'finish_axes',
     "a complex gradient's two parts are both read from its real part (the parts axis' source stride lost): "
     'each result element gets the sum of the real parts as its imaginary part',
     'push(p, 2, static_cast<int64_t>(p.elsize), 1, true);',
     'push(p, 2, static_cast<int64_t>(0 * p.elsize), 1, true);'),
    ('reduce-segment-groups-counts-unprefetched', 'lib/reduce_planner.cpp', 'lay_out_segments',
     "the planner leaves segments_runs' one-byte counts unprefetched where it prefetches the gradient "
     '(rep_counts_bwd 1.04-1.09x slower on the Xeon reporting family 6 model 167)',
     'r.seg_many.seg_counts_ahead_bytes = bytes > 0 ? kSegCountsAheadBytes : 0;',
     'r.seg_many.seg_counts_ahead_bytes = 0;'),
    # --- the threads of a call (lib/parallel.hpp, inlined into both executors)
    ('max-threads-ignored', 'lib/parallel.hpp', 'threads_for',
     "max_threads is ignored: a copy or a reduction runs on every thread of the arena",
     'const int threads = max_threads > 0 && max_threads < arena ? max_threads : arena;',
     'const int threads = max_threads > 0 && max_threads < 0 ? max_threads : arena;'),
    ('first-call-rule-dropped', 'lib/parallel.hpp', 'threads_for',
     "the process's first call below 16 MiB starts the worker threads (the first-call rule dropped)",
     'if (threads > 1 && first_call && work_bytes < serial_below) return 1;',
     'if (threads > 1 && first_call && work_bytes < 0) return 1;'),
    ('fresh-first-call-rule-dropped', 'lib/parallel.hpp', 'threads_for',
     "the process's first call into an allocating call's fresh pages takes the threads from 16 MiB "
     '(not from 256 MiB)',
     'const int64_t serial_below = fresh_output ? kFreshParallelMinBytes : kColdParallelMinBytes;',
     'const int64_t serial_below = kColdParallelMinBytes;'),
    # --- (1) a tail not written: the executor's last chunk
    ('chunk-tail-dropped', 'lib/executor.cpp', 'execute',
     "the threaded executor's last chunk ends one element short of the output",
     'return k == 0 ? int64_t{0} : k == nchunks ? total : first + k * chunk;',
     'return k == 0 ? int64_t{0} : k == nchunks ? total - 1 : first + k * chunk;'),
    ('executor-replicas-once', 'lib/executor.cpp', 'execute',
     "the executor's chunks of a plan with replicas split the first replica but write it alone",
     'execute_range(plan, src, dst + begin * isz, begin, end, false, copies);',
     'execute_range(plan, src, dst + begin * isz, begin, end, false, 1);'),
    # --- the reduce executor (lib/reduce_executor.cpp) and its combine (kernels/reduce.cpp)
    ('reduce-split-wrong-chunk', 'lib/kernels/reduce.cpp', 'Kernels::Combine',
     "the replica split combines its first chunk's sum in place of its last (the last chunk of leaves lost, the "
     'first counted twice)',
     'counter.Push(reinterpret_cast<const A*>(rows + static_cast<std::size_t>(c) * row_bytes));',
     'counter.Push(reinterpret_cast<const A*>(rows + static_cast<std::size_t>(c + 1 < nchunks ? c : 0) * row_bytes));'),
    ('reduce-zeros-accumulate', 'lib/reduce_executor.cpp', 'run_problem',
     'accumulate ignores the initial value of out on the zeros path (a replica count of 0): out is zeroed '
     'instead of left as it is (the sum of no addends added to it)',
     'if (!accumulate) std::memset(out, 0, static_cast<std::size_t>(p.out_elems) * p.elsize);',
     'if (accumulate || !accumulate) std::memset(out, 0, static_cast<std::size_t>(p.out_elems) * p.elsize);'),
    # --- the allocating calls' block cache (lib/allocator.cpp)
    ('alloc-no-fit-rule', 'lib/allocator.cpp', 'allocate_output',
     'a kept block is reused for any output it can hold (the 4/5 rule dropped): a 34 MiB output takes a kept '
     '256 MiB block',
     'if (b.bytes >= padded && b.bytes - padded <= b.bytes / 5) {',
     'if (b.bytes >= padded) {'),
    ('alloc-fresh-not-said', 'lib/allocator.cpp', 'allocate_output',
     'a fresh block is not reported fresh: the allocating call is not re-planned for fresh pages (it streams '
     'into pages the kernel has just zeroed)',
     '*fresh = true;  // a mapping of its own: the kernel zeroes its pages on first touch',
     '*fresh = false;  // a mapping of its own: the kernel zeroes its pages on first touch'),
    # --- an error path that writes (lib/dlpack.cpp)
    ('dlpack-reduce-writes-before-check', 'lib/dlpack.cpp', 'execute_reduce_into',
     "a DLPack reduction checks the result's layout after writing it: a non-C-contiguous result is written, then "
     'refused',
     '  check_compact(plan, out, out_name);\n'
     '  if (in.data == nullptr && plan.input_size() > 0)\n'
     '    invalid(std::string(in_name) + "->data is NULL but " + in_name + " has " + std::to_string(plan.input_size()) +\n'
     '            " elements");\n'
     '  if (out.data == nullptr && plan.nbytes() > 0)\n'
     '    invalid(std::string(out_name) + "->data is NULL but the result has " + std::to_string(plan.nbytes()) + " bytes");\n'
     '  plan.execute(origin(static_cast<const unsigned char*>(in.data), in.byte_offset),\n'
     '               origin(static_cast<unsigned char*>(out.data), out.byte_offset), plan.nbytes());\n',
     '  if (in.data == nullptr && plan.input_size() > 0)\n'
     '    invalid(std::string(in_name) + "->data is NULL but " + in_name + " has " + std::to_string(plan.input_size()) +\n'
     '            " elements");\n'
     '  if (out.data == nullptr && plan.nbytes() > 0)\n'
     '    invalid(std::string(out_name) + "->data is NULL but the result has " + std::to_string(plan.nbytes()) + " bytes");\n'
     '  if (out.data != nullptr) plan.execute(origin(static_cast<const unsigned char*>(in.data), in.byte_offset),\n'
     '               origin(static_cast<unsigned char*>(out.data), out.byte_offset), plan.nbytes());\n'
     '  check_compact(plan, out, out_name);\n'),
    # --- the Python module (lib/python/tessera): only the Python suite loads it
    ('dask-tile-region-reps', 'lib/python/tessera/dask.py', '_Localizer.task',
     "a tile task's local problem from a Dask input has one replica too few when its region ends one element "
     'into a period (the ceiling rounded one short)',
     'local_reps.append(-(-(a % s + n) // s))',
     'local_reps.append(-(-(a % s + n - 1) // s))',
     PYTHON),
    ('python-gil-held', 'lib/python/tessera/_tessera.cpp', 'write_into',
     'the GIL is never released while tessera writes (copies, regions, sums)',
     'if (release_gil || overlap || nbytes >= kReleaseGilBytes) release = std::make_unique<py::gil_scoped_release>();',
     'if (false && (release_gil || overlap || nbytes >= kReleaseGilBytes)) release = std::make_unique<py::gil_scoped_release>();',
     PYTHON),
    # --- the reductions' kernels (lib/reduce_scalar.hpp: rebuilds reduce.cpp;
    # lib/kernels/reduce.cpp), compiled for every Highway target
    ('reduce-order-largest-first', 'lib/kernels/reduce.cpp', 'CounterResult',
     "the binary counter adds its subtrees largest first instead of smallest first (the leaves' sums associated "
     'the other way: the same terms, other bits)',
     'for (int lvl = 0; lvl < kLevels; ++lvl) {',
     'for (int lvl = kLevels - 1; lvl >= 0; --lvl) {'),
    ('reduce-minus-zero-kept', 'lib/reduce_scalar.hpp', 'plus_zero',
     'a result of only -0.0 addends is stored as -0.0 (numpy and torch give +0.0) where a result is finished '
     'element by element (float16, bfloat16, the tails of vectors)',
     'if constexpr (std::is_floating_point_v<A>) return a + A(0);',
     'if constexpr (std::is_floating_point_v<A>) return a;'),
    ('reduce-narrow-accumulator', 'lib/kernels/reduce.cpp', 'Kernels::AddRow',
     "every sum of two leaves' (or subtrees') accumulators is rounded to the element type: float32 summed in "
     'float32, float16 and bfloat16 in their own type, between leaves',
     'for (; j < n; ++j) dst[j] = acc_add(a[j], b[j]);',
     'for (; j < n; ++j) dst[j] = acc_add(a[j], b[j]); for (int64_t k = 0; k < n; ++k) dst[k] = to_acc<E>(from_acc<E>(dst[k]));'),
    ('reduce-prefetch-spread-ignored', 'lib/kernels/reduce.cpp', 'Kernels::RowsW',
     "reduce.periodic.rows' items one by one always spread their prefetch among the loads, whatever the "
     "plan's prefetch_spread (the kernel deciding again what the planner decided)",
     '          if (p.prefetch_spread) {\n            TESSERA_COUNT_VARIANT(periodic_prefetch_spread);',
     '          if (true) {\n            TESSERA_COUNT_VARIANT(periodic_prefetch_spread);'),
    ('reduce-prefetch-spread-inverted-n-items', 'lib/kernels/reduce.cpp', 'Kernels::RowsW',
     "reduce.periodic.rows' items of w = 3, N at a time (AVX2, SSE4), prefetch at once where the plan says "
     "spread and spread where it says at once (the kernel deciding again what the planner decided)",
     '              if (p.prefetch_spread) {\n                TESSERA_COUNT_VARIANT(periodic_prefetch_spread);',
     '              if (!p.prefetch_spread) {\n                TESSERA_COUNT_VARIANT(periodic_prefetch_spread);'),
    ('reduce-long-rows-prefetch-unplanned', 'lib/kernels/reduce.cpp', 'Kernels::Item',
     "reduce.lanes.reg.leaf prefetches every item's rows along themselves, whatever the plan's "
     'prefetch_ahead_bytes (the kernel deciding again what the planner decided)',
     'if (ahead == nullptr && p.prefetch_ahead_bytes > 0 && k == ReduceKernel::lanes_reg_leaf) {',
     'if (ahead == nullptr && k == ReduceKernel::lanes_reg_leaf) {'),
    ('reduce-long-rows-next-past-task', 'lib/kernels/reduce.cpp', 'Kernels::Items',
     "the last item of a task of long rows prefetched along themselves prefetches on into the item "
     'after the task (past the caller\'s gradient at the last task)',
     'for (; item + 1 < end; ++item, cursor.Next(), next.Next())',
     'for (; item < end; ++item, cursor.Next(), next.Next())'),
    ('reduce-leaves-prefetch-unplanned', 'lib/kernels/reduce.cpp', 'Kernels::LanesLeaves',
     "reduce.lanes.leaves prefetches every leaf's contiguous rows along themselves, whatever the plan's "
     'prefetch_ahead_bytes (the kernel deciding again what the planner decided)',
     'const int64_t ahead = contiguous ? p.prefetch_ahead_bytes : 0;',
     'const int64_t ahead = contiguous ? kPrefetchLongRowsBytes : 0;'),
    ('reduce-skew-odd-vector-dropped', 'lib/kernels/reduce.cpp', 'Kernels::RegTreeItem',
     'a short item read whole into registers and streamed into an output off its vectors leaves its '
     'last vector of sums unstored where their count is odd (rows of 40 float32 on AVX-512)',
     '                } else if (v < nv) {\n                  hn::Store(hn::DemoteTo(dh, PlusZero(acc[v])), dh, part + v * N);',
     '                } else if (false && v < nv) {\n                  hn::Store(hn::DemoteTo(dh, PlusZero(acc[v])), dh, part + v * N);'),
    ('reduce-tree-along-at-once', 'lib/kernels/reduce.cpp', 'Kernels::Items',
     "reduce.lanes.reg.tree4's items planned along their rows are prefetched all at once instead (the "
     'kernel not obeying the plan: its rows are then never prefetched along themselves)',
     'p.prefetch_along_rows && (k == ReduceKernel::lanes_reg_leaf || k == ReduceKernel::lanes_reg_tree4);',
     'p.prefetch_along_rows && k == ReduceKernel::lanes_reg_leaf;'),
    ('reduce-rows-scratch-drops-a-row', 'lib/kernels/reduce.cpp', 'Kernels::RegTreeItem',
     'an item read a row at a time through the scratch row leaves out its next-to-last addend row '
     '(items of 3-8 rows longer than 16 vectors)',
     'for (int t = 1; t + 1 < K; ++t)',
     'for (int t = 1; t + 2 < K; ++t)'),
    ('reduce-segment-groups-offsets', 'lib/kernels/reduce.cpp', 'Kernels::GroupOffsets',
     "segments_runs' groups take each segment's offset in its window as the inclusive sum of the counts "
     '(the segment after it: every segment of a group but empty ones sums the wrong elements)',
     'return G == 8 ? inclusive << 8 : (inclusive << 8) & ((uint64_t{1} << (8 * G)) - 1);',
     'return G == 8 ? inclusive : inclusive & ((uint64_t{1} << (8 * G)) - 1);'),
    ('reduce-segment-groups-live-upper', 'lib/kernels/reduce.cpp', 'Kernels::Live',
     "segments_runs' groups on AVX-512 take the upper step's lanes (step i + 1) as live where count > i "
     '(a segment adds the element after its last)',
     'const uint64_t steps = (0x6666666600000000ull | 0x77777777ull)',
     'const uint64_t steps = (0x7777777700000000ull | 0x77777777ull)'),
    ('reduce-segment-groups-live-upper-lanes', 'lib/kernels/reduce.cpp', 'Kernels::Live',
     "segments_runs' groups on targets without AVX-512 compare the upper step's lanes with step i, not "
     'i + 1 (a segment adds the element after its last)',
     'hn::Set(di, i), hn::Set(di, i + 1));',
     'hn::Set(di, i), hn::Set(di, i));'),
    ('reduce-segment-groups-odd-step', 'lib/kernels/reduce.cpp', 'Kernels::SegmentGroupsC',
     "segments_runs' groups leave out the upper step of the last pair (C even: step C - 1 never added)",
     'if (i + 1 < C) {',
     'if (i + 2 < C) {'),
    ('repeat-compact-segment-of', 'lib/prefix.hpp', 'Prefix::segment_of',
     'compact prefix sums: a position at the end of a segment is taken to be inside it (the walk of '
     'the one-byte counts stops one segment early: a region starting there copies the wrong elements)',
     'while (s + c8[i] <= t) s += c8[i++];',
     'while (s + c8[i] < t) s += c8[i++];'),
    ('reduce-segment-groups-rows-live', 'lib/kernels/reduce.cpp', 'Kernels::kLive',
     "segments_runs' groups on AVX2 take all four elements of a segment of three as live (it adds the "
     'element after its last)',
     '{~0ull, ~0ull, ~0ull, 0}, {~0ull, ~0ull, ~0ull, ~0ull}};',
     '{~0ull, ~0ull, ~0ull, ~0ull}, {~0ull, ~0ull, ~0ull, ~0ull}};'),
    ('reduce-segment-groups-rows-order', 'lib/kernels/reduce.cpp', 'Kernels::GroupSumsByRows',
     "segments_runs' groups on AVX2 add a segment of four as (x0 + x1) + (x2 + x3), not in order "
     '(the same sum but for the rounding)',
     '    if constexpr (C > 2) sum = _mm256_add_pd(sum, _mm256_permute2f128_pd(t0, t2, 0x31));\n'
     '    if constexpr (C > 3) sum = _mm256_add_pd(sum, _mm256_permute2f128_pd(t1, t3, 0x31));',
     '    if constexpr (C == 3) sum = _mm256_add_pd(sum, _mm256_permute2f128_pd(t0, t2, 0x31));\n'
     '    if constexpr (C > 3) sum = _mm256_add_pd(sum, _mm256_add_pd(_mm256_permute2f128_pd(t0, t2, 0x31), _mm256_permute2f128_pd(t1, t3, 0x31)));'),
    ('reduce-segment-groups-accumulate-counts', 'lib/kernels/reduce.cpp', 'Kernels::SegmentGroupsC',
     "segments_runs' groups adding into their output take each segment's count from the next segment's "
     'byte (an empty segment overwrites its output with its sum, a non-empty one may keep the old value)',
     'const auto counts = hn::PromoteTo(di, hn::LoadU(d8, c8 + k));',
     'const auto counts = hn::PromoteTo(di, hn::LoadU(d8, c8 + k + 1));'),
    ('reduce-strips-short-rows-unsplit', 'lib/reduce.hpp', 'kSplitRowBytes',
     "the planner leaves reduce.lanes.reg.leaf's items of short rows longer than its registers hold "
     'whole (their sums in the scratch row: nchw_bwd on AVX2 1.22-1.32x slower)',
     'inline constexpr int64_t kSplitRowBytes = 512;',
     'inline constexpr int64_t kSplitRowBytes = 0;'),
    ('reduce-segment-groups-no-fence', 'lib/kernels/reduce.cpp', 'Kernels::SegmentGroups',
     "no hwy::FlushStream() (sfence) after segments_runs' groups streamed their results",
     'if (nt || skew != 0) hwy::FlushStream();',
     '(void)nt, (void)skew;  // MUTANT: hwy::FlushStream() dropped'),
    ('reduce-segment-groups-skew-head-short', 'lib/kernels/reduce.cpp', 'Kernels::SegmentGroupsC',
     "segments_runs' groups streamed into an output off a vector's boundary leave the last of the "
     "first step's elements before the first boundary unwritten",
     'std::memcpy(o + k, part, static_cast<std::size_t>(NF - skew) * sizeof(float));',
     'std::memcpy(o + k, part, static_cast<std::size_t>(NF - skew - 1) * sizeof(float));'),
    ('reduce-segments-range-no-fence', 'lib/reduce_executor.cpp', 'run_segments',
     "no store fence after a range of segments whose sub-problems streamed their results unfenced",
     'if (base.stream) reduce_fence();',
     '(void)0;  // MUTANT: reduce_fence() dropped'),
    ('reduce-stream-no-fence', 'lib/kernels/reduce.cpp', 'Kernels::Items',
     'no hwy::FlushStream() (sfence) after a reduction result written with non-temporal stores',
     'if (p.stream && fence) hwy::FlushStream();  // the streamed output is visible before the task returns',
     '(void)0;  // MUTANT: hwy::FlushStream() dropped'),
    ('reduce-segment-zeros-head', 'lib/kernels/reduce.cpp', 'Kernels::ZeroBytes',
     "a streamed segment of count 0 leaves its outputs before the first aligned vector unwritten",
     '      if (head > 0) std::memset(d, 0, head);\n      d += head;',
     '      (void)0;  // MUTANT: std::memset(d, 0, head) dropped\n      d += head;'),
    ('reduce-leaf-push-merge-skipped', 'lib/kernels/reduce.cpp', 'Kernels::LeafRowsK',
     "a leaf summed into the counter's levels skips the merge with level 0 (vectors)",
     '      for (int l = 0; l < m; ++l) acc = hn::Add(hn::LoadU(da, levels + l * n + at), acc);',
     '      for (int l = 1; l < m; ++l) acc = hn::Add(hn::LoadU(da, levels + l * n + at), acc);'),
    ('reduce-stream-demoted-half', 'lib/kernels/reduce.cpp', 'Kernels::StreamDemoted',
     "float32 sums demoted to half a 128-bit register are streamed (Highway's Stream writes the whole "
     'register: 8 bytes past the lanes, needing 16-byte alignment)',
     'if constexpr (hn::MaxLanes(DF()) * sizeof(float) >= 16) {',
     'if constexpr (true) {'),
    # --- (5) off by one in the region kernel's period (lib/kernels/region.cpp)
    ('region-period-off-by-one', 'lib/kernels/region.cpp', 'RegionAxisFill',
     'an outer region axis longer than its period replicates period + 1 steps instead of period',
     'const int64_t first = a.extent < a.period ? a.extent : a.period;\n  int64_t idx = a.start;',
     'const int64_t first = a.extent <= a.period ? a.extent : a.period + 1;\n  int64_t idx = a.start;'),
    # --- (1) tail vectors skipped (lib/kernels/row_kernels-inl.h: rebuilds rows.cpp and region.cpp)
    ('copy-tail-vector', 'lib/kernels/row_kernels-inl.h', 'CopyBytes',
     'the last, partial vector of a contiguous copy is not stored',
     'if (i < n) hn::StoreU(hn::LoadU(d, src + n - N), d, dst + n - N);',
     'if (false && i < n) hn::StoreU(hn::LoadU(d, src + n - N), d, dst + n - N);'),
    ('fill-tail-vector', 'lib/kernels/row_kernels-inl.h', 'StoreRepeated',
     'the last, partial vector of an element fill is not stored',
     'if (i < nbytes) hn::StoreU(v, d, reinterpret_cast<T*>(dst + nbytes - vbytes));',
     'if (false && i < nbytes) hn::StoreU(v, d, reinterpret_cast<T*>(dst + nbytes - vbytes));'),
    ('stream-tail', 'lib/kernels/row_kernels-inl.h', 'CopyStream',
     'the ordinary-store tail after the streamed (non-temporal) body of a blocked gather\'s row is not written',
     '  CopyBytes(dst + i, src + i, n - i);\n#endif\n}',
     '  (void)0;  // MUTANT: CopyBytes(dst + i, src + i, n - i) dropped\n#endif\n}'),
    ('stage-stream-held-dropped', 'lib/kernels/row_kernels-inl.h', 'StageStream::Finish',
     "the bytes a staged streaming range's last block leaves past its last vector boundary (an "
     'output off the vectors) are not written',
     '    if (at_ != nullptr) CopyBytes(at_, held_, t_);',
     '    if (false && at_ != nullptr) CopyBytes(at_, held_, t_);'),
    ('stage-stream-join-shift', 'lib/kernels/row_kernels-inl.h', 'StageStream::Put',
     "the vector two staged blocks share takes the next block's bytes one byte late",
     'hn::LoadU(d, held_), hn::LoadU(d, src - t_)), d, at_);',
     'hn::LoadU(d, held_), hn::LoadU(d, src - t_ + 1)), d, at_);'),
    ('stream-rotated-blend', 'lib/kernels/row_kernels-inl.h', 'StreamVectorsRotated',
     "a streamed source off its vectors (loaded on them, rotated) takes every second vector's lanes "
     'from the wrong aligned vector (the blend of the step\'s two swapped)',
     'hn::Stream(hn::BitCast(d, hn::IfThenElse(from_prev, cur0, cur1)), d, dst + (k + 1) * N);',
     'hn::Stream(hn::BitCast(d, hn::IfThenElse(from_prev, cur1, cur0)), d, dst + (k + 1) * N);'),
    ('copy-boundaries-head-dropped', 'lib/kernels/row_kernels-inl.h', 'CopyBytesToBoundaries',
     'a long run copied into an output off its vectors leaves the bytes before its first vector '
     'boundary unwritten',
     '  hn::StoreU(hn::LoadU(d, src), d, dst);  // the first vector, past the first boundary',
     '  (void)0;  // MUTANT: the first vector not stored'),
    # --- (2) one replica not written
    ('pattern-replica-skipped', 'lib/kernels/row_kernels-inl.h', 'FillPattern',
     'a long-run pattern row leaves one replica of its run unwritten (when two or more follow the first)',
     'size_t done = first;',
     'size_t done = first + (nbytes - first >= 2 * run_bytes ? run_bytes : 0);'),
    # --- the repeat kernels
    ('segments-hint-one-ahead', 'lib/kernels/row_kernels-inl.h', 'SegmentsRowBytes',
     "a range's next piece of a one-byte-counts segments row goes on one segment too far when the last "
     'piece ended on a segment boundary (the hint names the segment after the one starting there)',
     '  hint = {end, i, at};  // segment i starts',
     '  hint = {end, i + 1, at};  // segment i starts'),
    ('repeat-shuffle-bytes', 'lib/kernels/row_kernels-inl.h', 'RepeatShuffleTable',
     'the shuffle tables of repeat.shuffle rotate the bytes within each element (elements of 2 or more bytes)',
     'idx[q][b] = static_cast<uint8_t>(at / itemsize / reps * itemsize + at % itemsize);',
     'idx[q][b] = static_cast<uint8_t>(at / itemsize / reps * itemsize + (at + 1) % itemsize);'),
    ('segment-boundary', 'lib/kernels/row_kernels-inl.h', 'SegmentOf',
     'an output index on a segment boundary is given the previous source index',
     'if (prefix[mid] <= t) lo = mid; else hi = mid;',
     'if (prefix[mid] < t) lo = mid; else hi = mid;'),
    ('fill-line-row-wrong-element', 'lib/kernels/row_kernels-inl.h', 'FillRowsStream::LineRow',
     "a direct fill's row of one whole line streams the row's neighbour element's value (the next "
     'source element) instead of its own',
     'const auto v = Splat(d, elem);\n    for (size_t j = 0; j < kLine; j += N) hn::Stream(v, d, dst + j);\n    return true;',
     'const auto v = Splat(d, elem + kSize);\n    for (size_t j = 0; j < kLine; j += N) hn::Stream(v, d, dst + j);\n    return true;'),
    ('fill-shifted-line-held-element', 'lib/kernels/row_kernels-inl.h', 'FillRowsStream::ShiftedLineRow',
     "a direct fill's rows of one line into an output off the line: the piece each row holds for the "
     "next line keeps the first row's element instead of its own",
     '    held_at_ += kLine;\n    held_elem_ = elem;\n    return true;',
     '    held_at_ += kLine;\n    held_elem_ = held_elem_;\n    return true;'),
    ('stream-join-finish-dropped', 'lib/kernels/row_kernels-inl.h', 'StreamJoin::Finish',
     'the bytes a joined stream (direct copies and long patterns) holds at the end of a range are not '
     'written',
     '    if (at_ != nullptr) CopySmall(at_, line_, held_);',
     '    if (false && at_ != nullptr) CopySmall(at_, line_, held_);'),
    ('reduce-scratch-pair-swapped', 'lib/kernels/reduce.cpp', 'Kernels::RegTreeItem',
     "a streamed item of float32 sums written two vectors per store (read a row at a time through "
     'the scratch row, or one leaf across its rows) writes each pair in the wrong order (the second '
     'vector first)',
     'hn::Stream(hn::Combine(df, hn::DemoteTo(dh, s1), hn::DemoteTo(dh, s0)), df, dst + j);',
     'hn::Stream(hn::Combine(df, hn::DemoteTo(dh, s0), hn::DemoteTo(dh, s1)), df, dst + j);'),
    ('reduce-pair-head-dropped', 'lib/kernels/reduce.cpp', 'Kernels::RegTreeItem',
     'a streamed item of float32 sums written two vectors per store, whose output is half a vector '
     'off a whole one, skips the sums of its first vector',
     '            finish(sum(j), j);\n            j += N;',
     '            (void)0;  // MUTANT: finish(sum(j), j) dropped\n            j += N;'),
    ('reduce-skewed-blend-swapped', 'lib/kernels/reduce.cpp', 'Kernels::StreamSkewed',
     'a streamed line of float32 sums assembled from two vectors (an output off the lines) takes each '
     'part from the wrong one',
     'hn::Stream(hn::IfThenElse(from_prev, prev, cur), df, line);',
     'hn::Stream(hn::IfThenElse(from_prev, cur, prev), df, line);'),
    ('reduce-skew-carry-unflushed', 'lib/kernels/reduce.cpp', 'Kernels::Items',
     "the sums an item's last streamed line left for the next item (an output off the lines) are not "
     'written at the end of a range of items',
     '    for (; item < end; ++item, cursor.Next()) Item(p, k, cursor.pos, src, out, accumulate, s, qoff, carry);\n    carry.Flush();',
     '    for (; item < end; ++item, cursor.Next()) Item(p, k, cursor.pos, src, out, accumulate, s, qoff, carry);\n    (void)0;  // MUTANT: carry.Flush() dropped'),
    ('reduce-segment-skew-carry-unflushed', 'lib/kernels/reduce.cpp', 'Kernels::SegmentItems',
     "the sums a segment's last streamed line left for the next segment (an output off the lines) are "
     'not written at the end of a range of segments',
     '    carry.Flush();\n    *first_io = first;',
     '    (void)0;  // MUTANT: carry.Flush() dropped\n    *first_io = first;'),
    # --- lib/kernels/walk-inl.h, gather-inl.h, rows.cpp
    ('walk-last-outer-replica', 'lib/kernels/walk-inl.h', 'WalkRows',
     'the whole-output loop of a shallow plan (small outputs) skips its last outer iteration',
     'for (int64_t i = 0; i < e0; ++i) {  // offsets, not pointers',
     'for (int64_t i = 0; i < e0 - (e0 > 1); ++i) {  // offsets, not pointers'),
    ('segment-loop-early', 'lib/kernels/walk-inl.h', 'RowOdometer::Advance',
     'a segment row loop moves on to the next source index one output row early',
     'while (prefix[seg + 1] <= idx[l]) {  // the next non-empty segment',
     'while (prefix[seg + 1] <= idx[l] + 1) {  // the next non-empty segment'),
    ('transpose-wide-block-swapped', 'lib/kernels/gather-inl.h', 'TransposeWide',
     "a transposed view's rows 4..7 of each 16 x 16 block (AVX-512) get blocks of the wrong rows",
     '      store(4 + k, hn::ConcatLowerLower(d, ce_odd, ab_odd));',
     '      store(4 + k, hn::ConcatLowerLower(d, ce_even, ab_odd));'),
    ('transpose-wide-8-halves-swapped', 'lib/kernels/gather-inl.h', 'TransposeWide',
     "a transposed view's rows 4..7 of each 8 x 8 block (AVX2) get the lower halves in place of the upper",
     '      store(4 + k, hn::ConcatUpperUpper(d, t[4 + k], t[k]));',
     '      store(4 + k, hn::ConcatLowerLower(d, t[4 + k], t[k]));'),
    ('gather-row-join-wrong-head', 'lib/kernels/gather-inl.h', 'ExecuteGather',
     "a streamed gather row's last line, shared with the next row (an output off its lines), takes "
     "the row's own first bytes in place of the next row's",
     '              std::memcpy(line + tail_bytes, heads + which[k + 1] * kLineBytes, head_bytes);',
     '              std::memcpy(line + tail_bytes, heads + which[k] * kLineBytes, head_bytes);'),
    ('gather-replica-rows-first-only', 'lib/kernels/gather-inl.h', 'ExecuteGather',
     "the rows a range's ends cut (walked one by one) go to the first replica only, each time over",
     'WalkRows(p, src, to + k * copy_bytes, b + k * span, e + k * span, row_fn);',
     'WalkRows(p, src, to, b + k * span, e + k * span, row_fn);'),
    ('gather-inner-replicas-one-over', 'lib/kernels/gather-inl.h', 'ExecuteGather',
     "a group takes an inner zero-stride loop's replicas left in its extent and the next row too, as a replica",
     'inner_replicas ? std::min(p.loops[inner].extent - at.idx[inner], std::min(r1 - r, kMaxGroup) - g) : 1;',
     'inner_replicas ? std::min(p.loops[inner].extent - at.idx[inner] + 1, std::min(r1 - r, kMaxGroup) - g) : 1;'),
    ('gather-last-replica', 'lib/kernels/gather-inl.h', 'ExecuteGather',
     'the blocked gather writes its gathered tile to every replica but the last',
     'for (int64_t e = 0; e < copies; ++e, d += copy_bytes) {',
     'for (int64_t e = 0; e < (copies > 1 ? copies - 1 : 1); ++e, d += copy_bytes) {'),
    ('gather-joined-rows-shift', 'lib/kernels/gather-inl.h', 'StreamJoinedRows',
     'a streamed vector that joins the end of one gathered row and the start of the next takes the '
     "next row's bytes one byte late",
     'hn::LoadU(d8, next - have)), d8, o);',
     'hn::LoadU(d8, next - have + 1)), d8, o);'),
    ('staged-stream-last-block', 'lib/kernels/rows.cpp', 'ExecuteStagedStream',
     'the last, partly filled staging block of a streamed range is not written out',
     '  blocks.Put(out, stage, fill * isz);\n  blocks.Finish();',
     '  (void)0;  // MUTANT: blocks.Put(out, stage, fill * isz) dropped\n  blocks.Finish();'),
    ('replica-steps-last-skipped', 'lib/kernels/rows.cpp', 'ReplicaSteps',
     "a range of a plan with replicas in steps writes each step to every replica but the last",
     '    for (int64_t k = 0; k < copies; ++k) {\n      const int64_t shift = k * p.replica_elems;',
     '    for (int64_t k = 0; k < copies - 1; ++k) {\n      const int64_t shift = k * p.replica_elems;'),
    ('replica-steps-short-step', 'lib/kernels/rows.cpp', 'ReplicaSteps',
     "the replica steps' boundaries advance one element past the step written (an element of the "
     'first replica left unwritten at each boundary)',
     '  for (int64_t b = begin; b < end; b = e, e += step) {',
     '  for (int64_t b = begin; b < end; b = e + 1, e += step + 1) {'),
    ('segment-quads-key-order', 'lib/kernels/row_kernels-inl.h', 'SegmentsRowBytes',
     "the per-element counts' quads on AVX-512 read their key's counts in reverse (the first "
     "segment's count taken as the fourth's: the lanes of another quad, the same length)",
     '        const uint32_t key = _pext_u32(four, 0x07070707u);',
     '        const uint32_t key = _pext_u32(__builtin_bswap32(four), 0x07070707u);'),
    ('segment-quads-short-advance', 'lib/kernels/row_kernels-inl.h', 'SegmentsRowBytes',
     "the per-element counts' quads on AVX-512 advance one element short where a quad's counts "
     'sum to 16 (the next quad overwrites the last copy of the fourth element)',
     '        at += (four * 0x01010101u) >> 24;',
     '        at += ((four * 0x01010101u) >> 24) - (four == 0x04040404u);'),
    ('segments-ring-carry-shifted', 'lib/kernels/row_kernels-inl.h', 'SegmentsRing',
     "the bytes a step wrote past the per-element counts' small stage move to its start from four "
     'bytes further on (segments.nt.direct)',
     '    for (size_t k = 0; k < kLine; k += hn::Lanes(d)) hn::Store(hn::Load(d, stage_ + kBytes + k), d, stage_ + k);',
     '    for (size_t k = 0; k < kLine; k += hn::Lanes(d)) hn::Store(hn::LoadU(d, stage_ + kBytes + k + 4), d, stage_ + k);'),
    ('segments-ring-tail-short', 'lib/kernels/row_kernels-inl.h', 'SegmentsRing',
     "the last partial line of a run of rows out of the per-element counts' small stage is written "
     'four bytes short (segments.nt.direct)',
     '    if (j < n) CopyBytes(line_ + j, stage_ + j, n - j);',
     '    if (j + 4 < n) CopyBytes(line_ + j, stage_ + j, n - j - 4);'),
    ('scalar-direct-segments-nothing', 'lib/kernels/rows.cpp', 'ExecuteDirectStream',
     'on SCALAR a plan made for a vector target with the direct route of the per-element counts '
     '(segments.nt.direct) writes nothing',
     '#else  // a plan made for a vector target run here: the ordinary segments rows\n'
     '      WithRowFn(p, path, [&](const auto& row) { WalkRows(p, src, out, begin, end, row); });',
     '#else  // MUTANT: nothing written\n'
     '      static_cast<void>(path);'),
    ('pattern-stream-join-phase', 'lib/kernels/row_kernels-inl.h', 'PatternStream',
     "the vector two rows of short runs share takes the next row's bytes from the pattern at the "
     "row's first byte instead of the vector's (shifted by the pending bytes)",
     '          hn::IfThenElse(hn::FirstN(d_, pend_n_), hn::Load(d_, pend_), At(v, (j + run_ - pend_n_ % run_) % run_));',
     '          hn::IfThenElse(hn::FirstN(d_, pend_n_), hn::Load(d_, pend_), At(v, j));'),
    ('pattern-stream-pending-lost', 'lib/kernels/row_kernels-inl.h', 'PatternStream',
     'a row piece of short runs that does not continue the pending vector drops it (its bytes never written)',
     '    if (pend_at_ != nullptr) CopySmall(pend_at_, pend_, pend_n_);',
     '    (void)0;  // MUTANT: the pending bytes dropped'),
    ('repeat-stream-phase', 'lib/kernels/row_kernels-inl.h', 'RepeatStream',
     "the direct element repeats' vectors take the period's first phase for every vector (lanes off by "
     'the phase after the first vector of a period)',
     '        hn::Stream(hn::TableLookupLanes(v, hn::SetTableIndices(d_, lanes_[phase[q]])), d_, o + q * V);',
     '        hn::Stream(hn::TableLookupLanes(v, hn::SetTableIndices(d_, lanes_[phase[0]])), d_, o + q * V);'),
    ('repeat-stream-tail-dropped', 'lib/kernels/row_kernels-inl.h', 'RepeatStream',
     "the direct element repeats drop the elements after a piece's last whole period",
     '    Spill(join, dst + done * kSize, s, off + done, n - done);',
     '    (void)0;  // MUTANT: the tail after the last period dropped'),
    # --- (4) the streaming fence
    ('stream-no-fence', 'lib/kernels/rows.cpp', 'ExecuteRange',
     'no hwy::FlushStream() (sfence) after a range written with non-temporal stores',
     '  if (info.route != Route::plain) hwy::FlushStream();  // order the streaming stores before the range is reported done',
     '  // MUTANT: hwy::FlushStream() dropped'),
]

BY_ID = {m[0]: m for m in MUTANTS}
SUITES = ('unit', 'oracle', 'fence', 'python')


def suites_of(m):
    suites = m[6] if len(m) > 6 else ALL
    assert suites and all(x in SUITES for x in suites), f'{m[0]}: unknown suites {suites}'
    return suites

assert len(BY_ID) == len(MUTANTS), 'duplicate mutant id'


def fail(msg):
    print(f'mutants.py: {msg}', file=sys.stderr)
    sys.exit(1)


def mutated(mid, src_dir):
    """The path mutant `mid` changes in the tree at src_dir and its mutated text, or an error message."""
    if mid not in BY_ID:
        return None, None, f'no mutant {mid!r}'
    _, rel, func, _, old, new = BY_ID[mid][:6]
    path = pathlib.Path(src_dir) / rel
    if not path.is_file():
        return None, None, f'{mid}: {rel} does not exist in {src_dir}'
    text = path.read_text()
    count = text.count(old)
    if count != 1:
        return None, None, (f'{mid}: the text to mutate occurs {count} times in {rel} (expected exactly once; '
                            f'{func} was changed? update tests/mutants/mutants.py):\n  {old!r}')
    if old.count('\n') != new.count('\n'):
        return None, None, f'{mid}: the replacement changes the line count'
    if old == new:
        return None, None, f'{mid}: the replacement is the text itself'
    return path, text.replace(old, new), None


def apply(mid, src_dir):
    path, text, error = mutated(mid, src_dir)
    if error:
        fail(error)
    path.write_text(text)  # a new mtime: ninja recompiles what includes it


def check(src_dir):
    errors = [e for e in (mutated(m[0], src_dir)[2] for m in MUTANTS) if e]
    for e in errors:
        print(f'mutants.py: {e}', file=sys.stderr)
    print(f'mutants.py: {len(MUTANTS) - len(errors)} of {len(MUTANTS)} mutants apply to {src_dir}')
    if errors:
        sys.exit(1)


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
    elif len(argv) == 2 and argv[1] == 'count':
        print(len(MUTANTS))
    elif len(argv) == 3 and argv[1] == 'show':
        m = BY_ID.get(argv[2]) or fail(f'no mutant {argv[2]!r}')
        print(f'{m[1]}\t{m[2]}\t{m[3]}\t{",".join(suites_of(m))}')
    elif len(argv) == 4 and argv[1] == 'apply':
        apply(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == 'check':
        check(argv[2])
    elif len(argv) == 4 and argv[1] == 'sync':
        sync(argv[2], argv[3])
    else:
        fail('usage: mutants.py list | count | show ID | apply ID SRC_DIR | check SRC_DIR | sync FROM_DIR TO_DIR')


if __name__ == '__main__':
    main(sys.argv)
