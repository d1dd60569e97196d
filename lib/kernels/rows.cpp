// Per-target execution of a range of output elements by the plan's Path: the row walk
// (kernels/walk-inl.h) calls the path's row function (kernels/row_kernels-inl.h, gathers in
// kernels/gather-inl.h) with ordinary stores, or streams the rows out (staged in L1, or directly).
// Compiled once per Highway target (foreach_target.h); execute_range() dispatches to the best
// target this CPU supports. TBB stays outside: the executor calls execute_range() from each task.
//
// Every decision was made by the planner (the Path); the only choices left here are per piece of
// a row (a row's first partial run or element, a range of fewer than two whole rows for the
// blocked gather). TESSERA_COUNT_PATH (kernels/path_counters.hpp) counts each range's path per
// target in test builds, TESSERA_COUNT_VARIANT the choices left here (kernels/gather-inl.h's too).

// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/rows.cpp"  // this file, relative to lib/
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
// clang-format on

#include "kernels/kernels.hpp"
#include "kernels/path_counters.hpp"
#include "kernels/row_kernels-inl.h"
#include "kernels/walk-inl.h"
#include "kernels/gather-inl.h"

#include <hwy/cache_control.h>

HWY_BEFORE_NAMESPACE();
namespace tessera::detail::HWY_NAMESPACE {
namespace {
namespace hn = hwy::HWY_NAMESPACE;

// Row functions are called once per row: inlined into the row walk even where they are large
// (the sanitizer build defines it empty, as TESSERA_ROW_INLINE: tests/run's setup_asan_config).
#ifndef TESSERA_INLINE_LAMBDA
#define TESSERA_INLINE_LAMBDA __attribute__((always_inline))
#endif

/// Calls body(row) with the ordinary-store row function of the plan's (non-gather) path:
/// row(src_row, first_elem, n_elems, out) writes elements [first_elem, first_elem + n_elems) of the
/// row whose source is src_row to out.
template <class Body>
HWY_INLINE void WithRowFn(const CopyPlan& p, Path path, const Body& body) {
  const size_t isz = p.itemsize;
  switch (p.kernel()) {
    case Kernel::copy:
      body([isz](const uint8_t* s, size_t off, size_t n, uint8_t* d) { CopyBytes(d, s + off * isz, n * isz); });
      return;
    case Kernel::pattern: {
      const size_t run = static_cast<size_t>(p.run_bytes);
      if (path_info(path).variant == PathVariant::shuffle) {
        const ShortPatternTable table(run);
        const size_t N = hn::Lanes(hn::ScalableTag<uint8_t>());
        body([isz, run, N, &table](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
          const size_t phase = off == 0 ? 0 : off * isz % run;
          if (phase == 0 && n * isz >= N) {
            TESSERA_COUNT_VARIANT(pattern_shuffle_table);
            FillShortPattern(d, n * isz, s, run, table);
          } else {  // a row piece that starts mid-run or is shorter than a vector
            TESSERA_COUNT_VARIANT(pattern_shuffle_fallback);
            FillPattern(d, n * isz, s, run, phase);
          }
        });
        return;
      }
      if (path_info(path).variant == PathVariant::memcpy) {  // pattern.memcpy: runs of kMemcpyRunBytes or more
        body([isz, run](const uint8_t* s, size_t off, size_t n, uint8_t* d) TESSERA_INLINE_LAMBDA {
          FillPatternMemcpy(d, n * isz, s, run, off == 0 ? 0 : off * isz % run);
        });
        return;
      }
      // FillPattern's own branch: long runs are copied again from the source, short ones replicated.
      body([isz, run](const uint8_t* s, size_t off, size_t n, uint8_t* d) TESSERA_INLINE_LAMBDA {
        FillPattern(d, n * isz, s, run, off == 0 ? 0 : off * isz % run);
      });
      return;
    }
    case Kernel::fill:
      if (path_info(path).variant == PathVariant::any) {
        body([isz](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillPattern(d, n * isz, s, isz, 0); });
        return;
      }
      switch (isz) {
        case 1: body([](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint8_t>(d, s, n); }); return;
        case 2: body([](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint16_t>(d, s, n); }); return;
        case 4: body([](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint32_t>(d, s, n); }); return;
        case 8: body([](const uint8_t* s, size_t, size_t n, uint8_t* d) { FillElement<uint64_t>(d, s, n); }); return;
        default: body([](const uint8_t* s, size_t, size_t n, uint8_t* d) { Fill16(d, s, n); }); return;
      }
    case Kernel::repeat: {
      const size_t reps = static_cast<size_t>(p.inner_reps);
      const int64_t st = p.inner_stride;
      if (path_info(path).variant == PathVariant::shuffle) {
        const RepeatShuffleTable table(isz, reps);
        const auto with = [&](auto size) {
          constexpr size_t kSize = decltype(size)::value;
          body([reps, &table](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
            RepeatShuffleRow<kSize>(d, s, reps, off, n, table);
          });
        };
        switch (isz) {
          case 1: with(std::integral_constant<size_t, 1>()); return;
          case 2: with(std::integral_constant<size_t, 2>()); return;
          case 4: with(std::integral_constant<size_t, 4>()); return;
          default: with(std::integral_constant<size_t, 8>()); return;
        }
      }
      const auto with = [&](auto size) {
        constexpr size_t kSize = decltype(size)::value;
        body([reps, st, isz](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
          RepeatRow<kSize>(d, s, st, reps, off, n, isz);
        });
      };
      switch (isz) {
        case 1: with(std::integral_constant<size_t, 1>()); return;
        case 2: with(std::integral_constant<size_t, 2>()); return;
        case 4: with(std::integral_constant<size_t, 4>()); return;
        case 8: with(std::integral_constant<size_t, 8>()); return;
        case 16: with(std::integral_constant<size_t, 16>()); return;
        default: with(std::integral_constant<size_t, 0>()); return;
      }
    }
    case Kernel::segments: {
      SegmentHint hint;  // this range's own (the row function runs on one thread)
      const auto with = [&](auto size) {
        constexpr size_t kSize = decltype(size)::value;
        body([&p, &hint](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
          SegmentsRow<kSize>(d, s, p, off, n, hint);
        });
      };
      switch (isz) {
        case 1: with(std::integral_constant<size_t, 1>()); return;
        case 2: with(std::integral_constant<size_t, 2>()); return;
        case 4: with(std::integral_constant<size_t, 4>()); return;
        case 8: with(std::integral_constant<size_t, 8>()); return;
        case 16: with(std::integral_constant<size_t, 16>()); return;
        default: with(std::integral_constant<size_t, 0>()); return;
      }
    }
    case Kernel::gather:  // see ExecuteGathers
    case Kernel::none:
      return;
  }
}

/// The gather paths: rows one by one, or blocked (streamed out if `stream`).
void ExecuteGathers(const CopyPlan& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end, bool blocked,
                    bool stream, int64_t copies) {
  switch (p.itemsize) {
    case 1: ExecuteGather(p, src, out, begin, end, GatherElem<1>(), blocked, stream, copies); return;
    case 2: ExecuteGather(p, src, out, begin, end, GatherElem<2>(), blocked, stream, copies); return;
    case 4: ExecuteGather(p, src, out, begin, end, GatherElem<4>(), blocked, stream, copies); return;
    case 8: ExecuteGather(p, src, out, begin, end, GatherElem<8>(), blocked, stream, copies); return;
    case 16: ExecuteGather(p, src, out, begin, end, GatherElem<16>(), blocked, stream, copies); return;
    default: ExecuteGather(p, src, out, begin, end, GatherElem<0>{p.itemsize}, blocked, stream, copies); return;
  }
}

/// The direct fills: rows of one element each, written by FillRowsStream (the row function
/// inlined into the walk: one call per row cost as much as the line it writes).
template <size_t kSize>
void FillRows(const CopyPlan& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end) {
  FillRowsStream<kSize> w;
  constexpr size_t kLineElems = static_cast<size_t>(kLineBytes) / kSize;
  if (p.row_elems == static_cast<int64_t>(kLineElems)) {
    // Rows of one line: LineRow for the whole ones on a line, ShiftedLineRow for those that
    // continue a held piece (an output off the line: every row after the first).
    WalkRows(p, src, out, begin, end, [&w](const uint8_t* s, size_t, size_t n, uint8_t* d) TESSERA_ROW_INLINE {
      if (n == kLineElems && (w.LineRow(d, s) || w.ShiftedLineRow(d, s))) return;
      w.Row(d, s, n);
    });
  } else {
    WalkRows(p, src, out, begin, end,
             [&w](const uint8_t* s, size_t, size_t n, uint8_t* d) TESSERA_ROW_INLINE { w.Row(d, s, n); });
  }
  w.Finish();
}

/// fill.N.lines, the plain fills whose rows are one cache line each (a column broadcast across 64
/// bytes: `column` below the streaming threshold): each row one broadcast and the line's stores,
/// with no per-row length checks (the direct path's FillRows takes such rows by LineRow the same
/// way); a row piece (a range that starts or ends inside a row) through FillElement. The general
/// row function's checks of the row's length took ~5 cycles a row, 2.8x a plain loop of the same
/// stores (AMD family 25, 256 KiB in L2, 2026-11-29).
template <typename T>
void FillLineRows(const CopyPlan& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end) {
  constexpr size_t kLineElems = static_cast<size_t>(kLineBytes) / sizeof(T);
  const hn::CappedTag<T, kLineElems> d;
  const size_t N = hn::Lanes(d);
  WalkRows(p, src, out, begin, end, [&d, N](const uint8_t* s, size_t, size_t n, uint8_t* o) TESSERA_ROW_INLINE {
    if (n == kLineElems) {  // N lanes of T divide the line (CappedTag: at most kLineElems, a power of two)
      T value;
      std::memcpy(&value, s, sizeof(T));
      const auto v = hn::Set(d, value);
      for (size_t i = 0; i < kLineElems; i += N) hn::StoreU(v, d, reinterpret_cast<T*>(o) + i);
      return;
    }
    FillElement<T>(o, s, n);
  });
}

/// Streaming straight to the output (the ".nt.direct" paths): copy rows or pattern runs of at
/// least kDirectStreamBytes from the source (joined where they continue one another: StreamJoin),
/// fills of whole cache lines from a register, rows of short runs (PatternStream) and element
/// repeats (RepeatStream) from byte and lane shuffles in registers, segments of one-byte counts
/// through the kernel's own small stage (SegmentsRing). On SCALAR, which has no streaming route,
/// a plan made for a vector target runs the ordinary rows of its kernel.
void ExecuteDirectStream(const CopyPlan& p, Path path, const uint8_t* src, uint8_t* out, int64_t begin,
                         int64_t end) {
  const size_t isz = p.itemsize;
  switch (p.kernel()) {
    case Kernel::copy: {
      StreamJoin join;
      WalkRows(p, src, out, begin, end, [isz, &join](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
        join.Put(d, s + off * isz, n * isz);
      });
      join.Finish();
      return;
    }
    case Kernel::fill:
      switch (isz) {
        case 1: FillRows<1>(p, src, out, begin, end); return;
        case 2: FillRows<2>(p, src, out, begin, end); return;
        case 4: FillRows<4>(p, src, out, begin, end); return;
        case 8: FillRows<8>(p, src, out, begin, end); return;
        default: FillRows<16>(p, src, out, begin, end); return;
      }
    case Kernel::repeat: {  // repeat.shuffle.nt.direct: 4- and 8-byte elements (the planner's choose_route)
#if HWY_TARGET != HWY_SCALAR
      const size_t reps = static_cast<size_t>(p.inner_reps);
      const size_t src_elems = static_cast<size_t>(p.row_elems) / reps;
      HWY_DASSERT(isz == 4 || isz == 8);
      StreamJoin join;
      const auto run = [&](auto& w) {
        WalkRows(p, src, out, begin, end, [&w, &join](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
          w.Put(join, d, s, off, n);
        });
      };
      if (isz == 4) {
        RepeatStream<4> w(reps, src_elems);
        run(w);
      } else {
        RepeatStream<8> w(reps, src_elems);
        run(w);
      }
      join.Finish();
#else  // a plan made for a vector target run here: the ordinary repeat rows
      WithRowFn(p, path, [&](const auto& row) { WalkRows(p, src, out, begin, end, row); });
#endif
      return;
    }
    case Kernel::segments: {  // segments.nt.direct: the one-byte counts' walk (the planner's choose_route)
#if HWY_TARGET != HWY_SCALAR
      SegmentHint hint;  // this range's own
      SegmentsRing ring;
      const auto run = [&](auto size) {
        constexpr size_t kSize = decltype(size)::value;
        WalkRows(p, src, out, begin, end, [&p, &hint, &ring](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
          ring.Hold(SegmentsRowBytes<kSize>(ring.Start(d), s, p, off, n, hint, ring), d + n * kSize);
        });
        ring.Finish();
      };
      HWY_DASSERT(p.prefix.counts8() != nullptr && (isz == 1 || isz == 2 || isz == 4 || isz == 8));
      switch (isz) {
        case 1: run(std::integral_constant<size_t, 1>()); return;
        case 2: run(std::integral_constant<size_t, 2>()); return;
        case 4: run(std::integral_constant<size_t, 4>()); return;
        default: run(std::integral_constant<size_t, 8>()); return;
      }
#else  // a plan made for a vector target run here: the ordinary segments rows
      WithRowFn(p, path, [&](const auto& row) { WalkRows(p, src, out, begin, end, row); });
      return;
#endif
    }
    default: {  // pattern.long.nt.direct, pattern.shuffle.nt.direct
      const size_t run = static_cast<size_t>(p.run_bytes);
#if HWY_TARGET != HWY_SCALAR  // (no streaming route there)
      if (path_info(path).variant == PathVariant::shuffle) {
        PatternStream w(run);
        WalkRows(p, src, out, begin, end, [isz, &w](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
          w.Put(d, s, off * isz, n * isz);
        });
        w.Finish();
        return;
      }
#endif
      StreamJoin join;
      WalkRows(p, src, out, begin, end, [isz, run, &join](const uint8_t* s, size_t off, size_t n, uint8_t* d) {
        FillPatternStream(join, d, n * isz, s, run, off * isz % run);
      });
      join.Finish();
      return;
    }
  }
}

/// Streaming through L1 (the ".nt" paths but the gathers'): one walk over the rows writes them
/// with the ordinary row functions into a stack buffer of kStageBytes (splitting rows at its end),
/// which is streamed to the output each time it fills (StageStream). Small blocks keep the memory
/// busy while the next block is generated. Where a block leaves bytes past its last vector
/// boundary (an output off the vectors), the next block fills a second stage, the page after.
/// Where the stage starts in its page decides how fast the staged paths run. rep_counts
/// (segments.nt) took 4.5 ms with the stage at page offset 0 and up to 7.6 ms at others, in steps of 256 bytes
/// (tessera_probes, one process per offset, its output at offset 0, 2026-11-28), so the stack's
/// place, which the OS randomizes, decided its speed from one process to the next; the stage was
/// then put at the output's own page offset, which fixed that for page-aligned outputs only. With
/// the output elsewhere (numpy's arrays start 16 bytes into a page; any slice), `rep3` ran at
/// 0.56-0.82 of its page-aligned speed and `rep_counts` at 0.78, and at the output's own offset in
/// its line every vector the row functions stored into the stage straddled two lines (`promote`,
/// `mixed3d`, `nchw` into dst + 16 at 0.60-0.66). With the stage at page offset 0, `rep3` runs as
/// fast (0.97-1.07) with the source and the output at any of the offsets tried (bench/compare
/// --dst-offset 16, 64, 2048 and a program placing both, 2026-11-29). Since StageStream (the
/// stages' bytes joined across blocks), an output off its lines ran slower with the stage at page
/// offset 0: `promote` into dst + 16 at 0.89-0.90 of its aligned speed, `mixed3d` and `nchw`
/// 0.92-0.95, the cost following the output's page offset (dst + 64 and + 128 at 0.94, + 1024 and
/// + 2048 at 1.00). The CPU compares a load's address with the stores in flight by its low 12 bits
/// first, so the stages now start half a page from the output's page offset (rounded down to a
/// line), but at page offset 0 for an output on a page boundary (the placement the AMD EPYC's
/// measurements above chose; on the Xeon below, aligned outputs with the stages at 2048 instead
/// had run every case of bench/compare within 3%): one thread into dst + 16 then runs `promote`,
/// `mixed3d` and `nchw` at 0.99-1.00 of their aligned speed; at two threads they stay at
/// 0.90-0.95 (the Xeon reporting family 6 model 167, 2026-12-03,
/// bench/results/2026-12-03-xeon-f6m167/compare-dst16-stage-apart.txt). There the later chunks
/// (which start on absolute lines, 48 bytes into the plan's rows) filled a stage at line offset 0
/// with the rows' stores across lines; the stage now also lies as far into its line as the range
/// lies from the output's start (the rows' place in a line where their bytes are whole lines), so
/// the row functions store on its lines and only the streaming loads straddle: `promote`,
/// `mixed3d` and `nchw` into dst + 16 at two threads from 0.97, 0.91, 0.94 (c95e63f) to 0.99-1.01
/// of their aligned speed (30f9852, the same machine, 2026-12-03, compare-dst16-c95e63f.txt and
/// compare-dst16-stage-phase.txt). `rep_counts` (segments.nt, whose quads store ~2 vectors into
/// the stage per line streamed) runs slower with the stage anywhere but near the output's own page
/// offset: with an aligned output and the stage at page offset 2048, 0.92-0.95 of its speed with
/// the stage at 0; into dst + 16 with the stage half a page apart 0.90 of its aligned speed, at
/// page offset 1024 0.94, at 0 0.98-0.99, while `promote` at two threads into dst + 16 fell to
/// 0.92 there. The path table says where a path's stage lies (PathInfo::stage_near): segments.nt's
/// at the output's page offset, rounded down to a line (into dst + 16, 64, 2048, and with the
/// source at + 16 too: 0.96-1.01 of its aligned speed; the same machine, 2026-12-05; not measured
/// on the AMD EPYC). (rep_counts now takes segments.nt.direct, whose own small stage,
/// SegmentsRing, lies at the output's page offset too; segments.nt keeps the segments whose counts
/// are not walked as one-byte counts.)
void ExecuteStagedStream(const CopyPlan& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end) {
  constexpr uintptr_t kPage = 4096, kSlack = HWY_MAX_BYTES;  // StageStream reads a vector either side
  static_assert(kStageBytes % kPage == 0, "the second stage at the first's page offset");
  HWY_ALIGN uint8_t frame[kSlack + 2 * kStageBytes + 2 * kPage + kSlack];
  // Half a page from the output's own page offset (rounded down to a line); at page offset 0 for an
  // output on a page boundary, as measured on both kinds of core; at the output's own page offset
  // where the path says so (stage_near); plus the range's start from the output's, in a line
  // (`phase`). apart < kPage: the frame's two spare pages hold it and to_page.
  const uintptr_t at = reinterpret_cast<uintptr_t>(out) % kPage;
  constexpr uintptr_t kLine = static_cast<uintptr_t>(kLineBytes);
  const uintptr_t phase = static_cast<uintptr_t>(begin) * p.itemsize % kLine;
  const uintptr_t page_at = path_info(p.path).stage_near ? at : (at == 0 ? 0 : (at + kPage / 2) % kPage);
  const uintptr_t apart = page_at / kLine * kLine + phase;
  const uintptr_t to_page = (kPage - reinterpret_cast<uintptr_t>(frame + kSlack) % kPage) % kPage;
  uint8_t* const stages = frame + kSlack + to_page + apart;
  uint8_t* stage = stages;  // the next block fills the other stage where this one left bytes (StageStream)
  StageStream blocks;
  const size_t isz = p.itemsize;
  const size_t cap = kStageBytes / isz;  // elements per block
  size_t fill = 0;                        // elements staged
  WithRowFn(p, p.path, [&](const auto& row) {
    WalkRows(p, src, out, begin, end, [&](const uint8_t* s, size_t off, size_t n, uint8_t*) {
      while (n > 0) {
        const size_t take = n < cap - fill ? n : cap - fill;
        row(s, off, take, stage + fill * isz);
        fill += take;
        off += take;
        n -= take;
        if (fill == cap) {
          blocks.Put(out, stage, cap * isz);
          out += cap * isz;
          fill = 0;
          if (blocks.holding()) stage = stage == stages ? stages + kStageBytes : stages;
        }
      }
    });
  });
  blocks.Put(out, stage, fill * isz);
  blocks.Finish();
}

}  // namespace

/// Writes output elements [begin, end) of the plan to `out` by `path` (not a blocked gather's
/// replicas), without the streaming stores' fence.
HWY_INLINE void RangeOnce(const CopyPlan& p, Path path, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end) {
  const PathInfo& info = path_info(path);
  if (info.kernel == Kernel::gather) {
    ExecuteGathers(p, src, out, begin, end, info.blocked, info.route != Route::plain, 1);
  } else if (info.route == Route::plain) {
    if (info.lines) {  // fill.N.lines: N = 1, 2, 4, 8 (kPathInfo)
      switch (p.itemsize) {
        case 1: FillLineRows<uint8_t>(p, src, out, begin, end); return;
        case 2: FillLineRows<uint16_t>(p, src, out, begin, end); return;
        case 4: FillLineRows<uint32_t>(p, src, out, begin, end); return;
        default: FillLineRows<uint64_t>(p, src, out, begin, end); return;
      }
    }
    WithRowFn(p, path, [&](const auto& row) { WalkRows(p, src, out, begin, end, row); });
  } else if (info.route == Route::direct) {
    ExecuteDirectStream(p, path, src, out, begin, end);
  } else {
    ExecuteStagedStream(p, src, out, begin, end);
  }
}

/// Writes output elements [begin, end) of the first replica to `out` and to the next copies - 1
/// replicas in steps (CopyPlan::replica_step_elems): each step's source is read from memory for
/// the first replica and from the cache for the others. Step boundaries on absolute lines of the
/// first replica where the element size allows (the first step up to one), and of every replica
/// where a replica's bytes are whole lines.
HWY_NOINLINE void ReplicaSteps(const CopyPlan& p, Path path, const uint8_t* src, uint8_t* out, int64_t begin,
                               int64_t end, int64_t copies) {
  HWY_DASSERT(p.replica_step_elems > 0 && p.replica_elems > 0);
  TESSERA_COUNT_VARIANT(range_replica_steps);
  const int64_t isz = static_cast<int64_t>(p.itemsize), step = p.replica_step_elems;
  int64_t e = begin + first_line_start(out, isz);
  if (e == begin) e += step;
  for (int64_t b = begin; b < end; b = e, e += step) {
    e = std::min(e, end);
    for (int64_t k = 0; k < copies; ++k) {
      const int64_t shift = k * p.replica_elems;
      RangeOnce(p, path, src, out + (b - begin + shift) * isz, b + shift, e + shift);
    }
  }
}

/// Writes output elements [begin, end) of the plan to `out`, and to `copies` - 1 more replicas
/// (execute_range).
void ExecuteRange(const CopyPlan& p, const uint8_t* src, uint8_t* out, int64_t begin, int64_t end,
                  bool ordinary_stores, int64_t copies) {
  const Path path = ordinary_stores ? p.plain_path : p.path;
  TESSERA_COUNT_PATH(path);
  TESSERA_VARIANT_SCOPE();
  const PathInfo& info = path_info(path);
  if (info.kernel == Kernel::gather && info.blocked) {
    ExecuteGathers(p, src, out, begin, end, true, info.route != Route::plain, copies);
  } else if (copies > 1) {
    ReplicaSteps(p, path, src, out, begin, end, copies);
  } else {
    RangeOnce(p, path, src, out, begin, end);
  }
  if (info.route != Route::plain) hwy::FlushStream();  // order the streaming stores before the range is reported done
}

KernelCaps Caps() {
  return {HWY_TARGET != HWY_SCALAR, HWY_TARGET != HWY_SCALAR};
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
// The copying variants (kernels/path_counters.hpp) this target's code can take: pattern.shuffle
// and the direct element repeats (RepeatStream) are vector paths (the planner gives them no
// HWY_SCALAR plan, Caps()).
uint64_t RowVariants() {
  const auto bit = [](Variant v) { return uint64_t{1} << static_cast<int>(v); };
  uint64_t m = bit(Variant::gather_blocked_tiles) | bit(Variant::gather_blocked_replicas) |
               bit(Variant::gather_blocked_rows) | bit(Variant::fill_pattern_few_runs) |
               bit(Variant::fill_pattern_long_runs) | bit(Variant::fill_pattern_doubling) |
               bit(Variant::range_replica_steps);
  if (Caps().vectors)
    m |= bit(Variant::pattern_shuffle_table) | bit(Variant::pattern_shuffle_fallback) |
         bit(Variant::repeat_stream_spilled);
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
  m |= bit(Variant::stream_join_rotated);  // StreamVectorsRotated (scalable vectors: unaligned loads)
#endif
  return m;
}
#endif

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace tessera::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::detail {

HWY_EXPORT(ExecuteRange);
HWY_EXPORT(Caps);
HWY_EXPORT(TargetName);
#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
HWY_EXPORT(RowVariants);
uint64_t row_variants() noexcept { return HWY_DYNAMIC_DISPATCH(RowVariants)(); }
#endif

void execute_range(const CopyPlan& plan, const unsigned char* src, unsigned char* out, int64_t begin, int64_t end,
                   bool ordinary_stores, int64_t copies) {
  HWY_DYNAMIC_DISPATCH(ExecuteRange)(plan, src, out, begin, end, ordinary_stores, copies);
}

KernelCaps kernel_caps() { return HWY_DYNAMIC_DISPATCH(Caps)(); }

const char* dispatch_target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

std::vector<std::string> target_names(bool supported_only) {
  // Highway's target bits: the lower the bit, the better the target (the lowest supported one is
  // what HWY_DYNAMIC_DISPATCH chooses).
  const int64_t mask = supported_only ? (hwy::SupportedTargets() & HWY_TARGETS) : int64_t{HWY_TARGETS};
  std::vector<std::string> names;
  for (int64_t bits = mask; bits != 0; bits &= bits - 1) names.emplace_back(hwy::TargetName(bits & -bits));
  return names;
}

}  // namespace tessera::detail
#endif  // HWY_ONCE
