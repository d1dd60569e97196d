// tessera_probes: plain kernels of the access patterns where the tables' targets are missed, each
// timed beside tessera's plan of the same case in one process, on one thread, in alternating
// rounds: what the plainest code of the same reads and writes achieves on this machine (docs,
// performance page). A reference, not a limit: a faster kernel may exist. x86-64 with AVX-512F/BW/
// VL/DQ only (each probe is compiled for it by a target attribute; the program checks the CPU).
//
// Usage: tessera_probes [--rounds N] [--probe NAME]...   (default: every probe, 11 rounds)
//   rep_counts  repeat of 8 Mi float32 by per-element counts 0-4 (as the rep_counts case):
//               tessera's plan; the placement alone (the source and counts read, 16-byte splat
//               stores into ~64 KiB of output reused, so that no output goes to memory);
//               staged 4 KiB blocks streamed out, with
//               16-byte splats or 64-byte permutes of four elements; whole lines assembled in
//               registers and streamed directly; the plan of its first 1/128 (output in L2)
//               run 128 times (the plan's instructions without the memory); and as a bound the
//               bytes it moves with the fewest instructions (read_stream_double); then at two
//               threads (each a half): the limit, the bound and the plan
//   strided     tile of a transposed float32 (1024, 4096) view by (2, 2) (the strided case):
//               tessera's plan; 16x16 register transposes streamed as 64-byte pieces (with and
//               without prefetching the next block) or staged into 256-byte rows; as bounds, the
//               loads and streams of 16, 32 or 64 rows per tile in 64-byte to 1 KiB pieces without
//               the shuffles (the bytes in the gather's order: tessera's plan takes 32 rows, 256-byte
//               pieces), and the source read in memory order with each line streamed 4 times;
//               then at two threads (a tbb::task_arena of 2, each thread a half): the limit, the
//               plan, the staged transposes of 32 rows and the bounds of 32 and 64 rows and of
//               the source read in order
//   inner_bwd   tile_backward of (2048, 8192) float32 to (2048, 2048) (the inner_bwd case), and
//   rep_mid_bwd repeat_backward of (64, 1024, 256) float32 by 4 along axis 1 (the rep_mid_bwd case;
//               the same sums of four rows, of 1 KiB): tessera's plan; the read alone in the plain
//               loop's order (across the four rows, float sums, nothing written); the plain loop
//               (four addend rows in double, streamed); the same prefetching 4 KiB ahead; each
//               gradient row read whole into an L1 row; 128-column blocks, each row's piece read
//               in order into registers; two rows at a time through an L1 row
//   nchw_bwd    tile_backward of (64, 4, 256, 256) float32 by (1, 1, 2, 2) (the nchw_bwd case):
//               tessera's plan; the plain loop (16 columns of the four addends, two rows 128 KiB
//               apart, in double, streamed), also prefetching 1 or 4 KiB ahead; each plane read in
//               memory order, its first half's sums kept in an L2 block of doubles
//   bc_rows_bwd sum_to_shape of (4096, 4096) float32 to (1, 4096) (the bc_rows_bwd case): tessera's
//               plan; the plain loop (each row added into a row of doubles); the same eight
//               rows at a time (their sums in registers); 128-column blocks summed down all rows
//               in registers, of doubles (tessera's width) or of floats
//   bc_cols_bwd sum_to_shape of (4096, 4096) float32 to (4096, 1) (the bc_cols_bwd case: each row
//               summed): tessera's plan, from memory and (its first 1/128 of rows, 128 times) from
//               L2; the plain loop (each 64-byte block widened into two chains of doubles, as
//               tessera's), with eight chains, and prefetching 4 or 16 KiB ahead
//   narrow_bwd  tile_backward of (131072, 120) float32 to (131072, 3) (the narrow_bwd case: 40
//               runs of 3 per row summed): tessera's plan, from memory and from L2 (as above); the
//               plain loop (each row's 15 vectors of doubles into three registers, folded by
//               channel), also prefetching 4 KiB ahead
//   rep_counts_bwd  repeat_backward of rep_counts' gradient (8 Mi segments of 0-4 float32, 64 MiB
//               read): tessera's plan, from memory and (its first 1/128, 128 times) from L2; a segment
//               a step (one masked load, its addends added in order);
//               16 segments a step by four masked AVX-512 gathers, streamed; the plan's vector
//               work alone (its step's loads, permutations, conversions and additions on fixed
//               offsets, no counts: segments_vector_work), prefetched as the plan does (4 KiB
//               ahead) and 16 KiB ahead, from memory and from L2
//   rep_ragged_bwd  repeat_backward of rep_ragged_bwd's gradient (32768 segments of 0-4 rows of
//               1 KiB float32): tessera's plan, from memory and (its first 1/128, 128 times) from
//               L2; the plain loop (a segment's rows added 16 columns at a time in double,
//               streamed); the rows read in memory order into an L1 row of doubles; the plain
//               loop with each segment's rows prefetched 4 KiB ahead, also 8 columns a step with
//               32-byte streams and 16 columns with two 32-byte streams; the plain loop with each
//               load's line prefetched 2, 4, 8 or 16 KiB ahead into L2 (spread among the loads);
//               128-column blocks of a segment summed in registers, each row's block read in
//               order, without and with the prefetch; the prefetching loop from L2
// Limits in the same rounds: `stream` (non-temporal fill of the output) and `read` (a sum of the
// gradient, eight accumulators, its copies taken in turn, as many as keep the one read out of L3,
// whose size is read from sysfs); and for the two gradients of half-size results,
// read_stream_half: the gradient read in memory order and half its bytes streamed in the same pass
// with the fewest instructions (tile_bench's `stream` limit of a reduction, sum_stream, measures
// the same); for the three of quarter-size results the same with a quarter streamed
// (read_stream_quarter).
// Prints per row the median time and its ratio to the probe's limit. Each kernel's output is
// compared with tessera's before timing (the prefetching variants share their stores with the
// kernel compared; the placement writes no output); a difference stops the program (exit 1).

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <sys/mman.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tessera/tessera.h>

#include "limit_loops.h"  // last_level_cache_bytes(), rotation_copies()

#define PROBE_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

namespace {

struct Row {
  std::string name;
  std::function<void()> run;
  std::vector<double> ms;
};

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "tessera_probes: %s\n", message.c_str());
  std::exit(1);
}

void check(tessera_status s, const char* what) {
  if (s != TESSERA_OK) die(std::string(what) + " failed: " + tessera_last_error());
}

// tessera's options for one thread (the probes' plans run where the plain loops do).
tessera_options one_thread() {
  tessera_options o;
  tessera_options_init(&o);
  o.max_threads = 1;
  return o;
}

// n elements of T, 2 MiB aligned, advised transparent huge pages (as tile_bench's buffers and
// tessera's large outputs are: the page kind moves these speeds by ~20%), touched.
template <class T>
T* alloc_touched(std::size_t n) {
  const std::size_t bytes = (n * sizeof(T) + (2u << 20) - 1) / (2u << 20) * (2u << 20);
  T* p = static_cast<T*>(std::aligned_alloc(2u << 20, bytes));
  if (p == nullptr) die("out of memory");
  madvise(p, bytes, MADV_HUGEPAGE);  // advice only: no huge pages is not an error
  std::memset(static_cast<void*>(p), 0, bytes);
  return p;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs every row once per round (in the order given, rotated each round), `rounds` rounds; prints
// the medians, each as a share of the row named `limit` (its time / the row's); `threads` names
// the threads every row uses.
void report(const char* title, std::vector<Row>& rows, const std::string& limit, int rounds, int threads = 1) {
  for (Row& r : rows) r.run();  // warm-up: pages touched, caches and predictors trained
  for (int k = 0; k < rounds; ++k)
    for (std::size_t j = 0; j < rows.size(); ++j) {
      Row& r = rows[(j + static_cast<std::size_t>(k)) % rows.size()];
      const double t0 = now_ms();
      r.run();
      r.ms.push_back(now_ms() - t0);
    }
  double limit_ms = 0;
  for (Row& r : rows) {
    std::sort(r.ms.begin(), r.ms.end());
    if (r.name == limit) limit_ms = r.ms[r.ms.size() / 2];
  }
  std::printf("\n%s (%d thread%s, medians of %d alternating rounds)\n", title, threads, threads == 1 ? "" : "s",
              rounds);
  std::printf("%-52s %10s %12s\n", "", "ms", "% of limit");
  for (const Row& r : rows) {
    const double m = r.ms[r.ms.size() / 2];
    std::printf("%-52s %10.3f %11.0f%%\n", r.name.c_str(), m, 100.0 * limit_ms / m);
  }
}

PROBE_TARGET void stream_fill(uint8_t* out, std::size_t bytes) {
  const __m512i v = _mm512_set1_epi32(0x3f800000);
  for (std::size_t b = 0; b + 64 <= bytes; b += 64) _mm512_stream_si512(reinterpret_cast<__m512i*>(out + b), v);
  _mm_sfence();
}

PROBE_TARGET void stream_lines(uint8_t* out, const uint8_t* stage, std::size_t bytes) {
  for (std::size_t b = 0; b < bytes; b += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + b), _mm512_load_si512(stage + b));
}

// Runs half(0) and half(1) as two tasks in `arena` (of two threads), as bench/compare runs the
// plans at two threads (the simple_partitioner does not pin them to different threads, the
// arena's two take them).
void halves(tbb::task_arena& arena, const std::function<void(int)>& half) {
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<int>(0, 2, 1), [&](const tbb::blocked_range<int>& r) {
      for (int h = r.begin(); h < r.end(); ++h) half(h);
    }, tbb::simple_partitioner());
  });
}

// ---- rep_counts --------------------------------------------------------------------------------

struct Quads {  // four counts 0-4 (key c0 + 5 c1 + 25 c2 + 125 c3): lane sources and total
  alignas(64) uint8_t lane[625][16];
  uint8_t total[625];
  Quads() {
    for (int k = 0; k < 625; ++k) {
      const int c[4] = {k % 5, k / 5 % 5, k / 25 % 5, k / 125};
      int s = 0;
      std::memset(lane[k], 0, 16);
      for (int j = 0; j < 4; ++j)
        for (int r = 0; r < c[j]; ++r) lane[k][s++] = static_cast<uint8_t>(j);
      total[k] = static_cast<uint8_t>(s);
    }
  }
};

// Elements i ... i + 3 placed from buf + at bytes on: a 16-byte splat store each, `at` moved by
// each one's count (the four counts read before the stores: a store through uint8_t* may alias
// them; tessera's loop reads them first too).
PROBE_TARGET inline void place_four(uint8_t* buf, int64_t& at, const float* src, const uint8_t* c8, int64_t i) {
  const int64_t c0 = c8[i], c1 = c8[i + 1], c2 = c8[i + 2], c3 = c8[i + 3];
  _mm_storeu_ps(reinterpret_cast<float*>(buf + at), _mm_set1_ps(src[i]));
  at += 4 * c0;
  _mm_storeu_ps(reinterpret_cast<float*>(buf + at), _mm_set1_ps(src[i + 1]));
  at += 4 * c1;
  _mm_storeu_ps(reinterpret_cast<float*>(buf + at), _mm_set1_ps(src[i + 2]));
  at += 4 * c2;
  _mm_storeu_ps(reinterpret_cast<float*>(buf + at), _mm_set1_ps(src[i + 3]));
  at += 4 * c3;
}

// Element i's count copies at the running position: one 16-byte splat store each (the next
// overwrites the rest), into `stage`, which is streamed out each time kStage bytes are complete.
template <bool kQuads>
PROBE_TARGET void staged_counts(uint8_t* out, const float* src, const uint8_t* c8, int64_t n, const Quads& q) {
  constexpr int64_t kStage = 4096;
  alignas(64) static uint8_t stage[kStage + 256];
  int64_t at = 0;  // bytes staged
  for (int64_t i = 0; i < n; i += 4) {
    if constexpr (kQuads) {
      const int k = c8[i] + 5 * c8[i + 1] + 25 * (c8[i + 2] + 5 * c8[i + 3]);
      const __m512 a = _mm512_broadcast_f32x4(_mm_loadu_ps(src + i));
      const __m512i idx = _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(q.lane[k])));
      _mm512_storeu_ps(stage + at, _mm512_permutexvar_ps(idx, a));
      at += 4 * q.total[k];
    } else {
      place_four(stage, at, src, c8, i);
    }
    if (at >= kStage) {
      stream_lines(out, stage, kStage);
      out += kStage;
      at -= kStage;
      std::memcpy(stage, stage + kStage, static_cast<std::size_t>(at));
    }
  }
  std::memcpy(out, stage, static_cast<std::size_t>(at));
  _mm_sfence();
}

// The placement alone: the 16-byte splat stores into ~64 KiB of output (counts 0-4: 8 bytes per
// element on average) reused, repeated to place all n elements.
PROBE_TARGET void placement_in_cache(const float* src, const uint8_t* c8, int64_t n) {
  constexpr int64_t kChunk = 8192;  // elements per pass: ~64 KiB of output
  alignas(64) static uint8_t buf[kChunk * 16 + 64];
  for (int64_t b = 0; b < n; b += kChunk) {
    int64_t at = 0;
    for (int64_t i = b; i < b + kChunk && i < n; i += 4) {  // n and kChunk: multiples of 4
      place_four(buf, at, src, c8, i);
    }
    asm volatile("" : : "r"(buf) : "memory");
  }
}

// Whole lines assembled in registers: each quad's permuted vector merged into the line being
// filled (two-table permutes), the line streamed when full; a data-dependent branch per quad.
PROBE_TARGET void direct_lines(float* out, const float* src, const uint8_t* c8, int64_t n, const Quads& q) {
  alignas(64) static int32_t below[16][16], above[16][16];
  for (int f = 0; f < 16; ++f)
    for (int j = 0; j < 16; ++j) {
      below[f][j] = j < f ? j : 16 + (j - f);  // lanes < f from the line, then the quad's
      above[f][j] = (j + 16 - f) & 15;          // the quad's lanes that did not fit
    }
  __m512 line = _mm512_setzero_ps();
  int f = 0;
  for (int64_t i = 0; i < n; i += 4) {
    const int k = c8[i] + 5 * c8[i + 1] + 25 * (c8[i + 2] + 5 * c8[i + 3]);
    const int t = q.total[k];
    const __m512 a = _mm512_broadcast_f32x4(_mm_loadu_ps(src + i));
    const __m512 v = _mm512_permutexvar_ps(
        _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(q.lane[k]))), a);
    const __m512 merged = _mm512_permutex2var_ps(line, _mm512_load_si512(below[f]), v);
    if (f + t >= 16) {
      _mm512_stream_ps(out, merged);
      out += 16;
      line = _mm512_permutexvar_ps(_mm512_load_si512(above[f]), v);
      f = f + t - 16;
    } else {
      line = merged;
      f += t;
    }
  }
  alignas(64) float rest[16];
  _mm512_store_ps(rest, line);
  std::memcpy(out, rest, static_cast<std::size_t>(f) * 4);
  _mm_sfence();
}

// The bytes rep_counts' plan moves, with the fewest instructions, in one pass: n floats and n
// one-byte counts read in memory order, 2n floats streamed (the counts' mean is 2): each line of
// the source streamed twice, each line of counts (four source lines' worth) or-ed into a sink.
PROBE_TARGET uint64_t read_stream_double(const float* src, const uint8_t* c8, float* out, int64_t n) {
  __m512i sink = _mm512_setzero_si512();
  for (int64_t i = 0; i < n; i += 64) {
    sink = _mm512_or_si512(sink, _mm512_loadu_si512(c8 + i));
    for (int k = 0; k < 4; ++k) {
      const __m512 v = _mm512_loadu_ps(src + i + 16 * k);
      _mm512_stream_ps(out + 2 * (i + 16 * k), v);
      _mm512_stream_ps(out + 2 * (i + 16 * k) + 16, v);
    }
  }
  _mm_sfence();
  return static_cast<uint64_t>(_mm512_reduce_or_epi64(sink));
}

void probe_rep_counts(int rounds) {
  const int64_t n = int64_t{8} << 20;
  std::mt19937 rng(1);
  std::vector<float> src(static_cast<std::size_t>(n));
  std::vector<uint8_t> c8(static_cast<std::size_t>(n));
  std::vector<int64_t> counts(static_cast<std::size_t>(n));
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    src[i] = static_cast<float>(i);
    c8[i] = static_cast<uint8_t>(rng() % 5);
    counts[i] = c8[i];
    total += c8[i];
  }
  const std::size_t bytes = static_cast<std::size_t>(total) * 4;
  uint8_t* out = alloc_touched<uint8_t>(bytes + 64);
  uint8_t* ref = alloc_touched<uint8_t>(bytes + 64);
  static const Quads q;
  const tessera_options o = one_thread();
  tessera_plan* plan = nullptr;
  const int64_t shape[1] = {n};
  check(tessera_plan_create_repeat(1, shape, nullptr, 4, n, counts.data(), 0, &o, &plan), "the repeat plan");
  check(tessera_plan_execute(plan, src.data(), ref, bytes), "the repeat plan's execution");
  const auto same = [&](const char* what) {
    if (std::memcmp(out, ref, bytes) != 0) die(std::string("rep_counts: ") + what + " differs from tessera's output");
  };
  // The plan's instructions without the memory: a plan of the first n/128 elements (~0.5 MiB
  // out, in L2), run 128 times.
  const int64_t n_part = n / 128;
  int64_t part_total = 0;
  for (int64_t i = 0; i < n_part; ++i) part_total += counts[static_cast<std::size_t>(i)];
  const std::size_t part_bytes = static_cast<std::size_t>(part_total) * 4;
  tessera_plan* part = nullptr;
  const int64_t part_shape[1] = {n_part};
  check(tessera_plan_create_repeat(1, part_shape, nullptr, 4, n_part, counts.data(), 0, &o, &part),
        "the repeat plan of a part");
  check(tessera_plan_execute(part, src.data(), out, part_bytes), "the part's execution");
  if (std::memcmp(out, ref, part_bytes) != 0) die("rep_counts: the part differs from the whole's start");
  staged_counts<false>(out, src.data(), c8.data(), n, q);
  same("staged splats");
  staged_counts<true>(out, src.data(), c8.data(), n, q);
  same("staged quads");
  direct_lines(reinterpret_cast<float*>(out), src.data(), c8.data(), n, q);
  same("direct lines");
  volatile uint64_t sink = 0;
  const int64_t n_even = std::min<int64_t>(n, total / 2) / 64 * 64;  // 2 n_even floats fit in out
  std::vector<Row> rows = {
      {"stream (limit)", [&] { stream_fill(out, bytes); }, {}},
      {"read source and counts, stream 2x, in one pass", [&] { sink = read_stream_double(src.data(), c8.data(), reinterpret_cast<float*>(out), n_even); }, {}},
      {"tessera plan (segments.nt.direct)", [&] { tessera_plan_execute(plan, src.data(), out, bytes); }, {}},
      {"tessera plan, output in L2 (n/128 elements, 128x)", [&] {
         for (int k = 0; k < 128; ++k) tessera_plan_execute(part, src.data(), out, part_bytes);
       }, {}},
      {"placement alone, output cached (16-byte splats)", [&] { placement_in_cache(src.data(), c8.data(), n); }, {}},
      {"staged 4 KiB, 16-byte splats, streamed", [&] { staged_counts<false>(out, src.data(), c8.data(), n, q); }, {}},
      {"staged 4 KiB, 64-byte quad permutes, streamed", [&] { staged_counts<true>(out, src.data(), c8.data(), n, q); }, {}},
      {"lines assembled in registers, streamed", [&] { direct_lines(reinterpret_cast<float*>(out), src.data(), c8.data(), n, q); }, {}},
  };
  static_cast<void>(sink);
  report("rep_counts: repeat of 8 Mi float32 by counts 0-4 (64 MiB out)", rows, "stream (limit)", rounds);

  // Two threads, each a half of the bytes (the stream's halves on 64-byte boundaries; the bound's
  // elements in halves of whole 64-element blocks).
  tessera_options o2 = o;
  o2.max_threads = 2;
  tessera_plan* plan2 = nullptr;
  check(tessera_plan_create_repeat(1, shape, nullptr, 4, n, counts.data(), 0, &o2, &plan2), "the repeat plan at 2 threads");
  tbb::task_arena arena(2);
  const std::size_t half_bytes = bytes / 2 / 64 * 64;
  const int64_t half_n = n_even / 128 * 64;
  volatile uint64_t sinks[2] = {0, 0};  // one per half
  std::vector<Row> rows2 = {
      {"stream (limit), 2 threads", [&] { halves(arena, [&](int h) { stream_fill(out + h * half_bytes, h == 0 ? half_bytes : bytes - half_bytes); }); }, {}},
      {"read source and counts, stream 2x, in one pass, 2 threads", [&] { halves(arena, [&](int h) {
         const int64_t b = h * half_n;
         sinks[h] = read_stream_double(src.data() + b, c8.data() + b, reinterpret_cast<float*>(out) + 2 * b, h == 0 ? half_n : n_even - half_n);
       }); }, {}},
      {"tessera plan (segments.nt.direct), 2 threads", [&] { arena.execute([&] { tessera_plan_execute(plan2, src.data(), out, bytes); }); }, {}},
  };
  check(tessera_plan_execute(plan2, src.data(), out, bytes), "the repeat plan's execution at 2 threads");
  same("the plan at 2 threads");
  report("rep_counts: the same at two threads (each a half of the bytes)", rows2, "stream (limit), 2 threads", rounds, 2);
  tessera_plan_destroy(plan2);
  tessera_plan_destroy(plan);
  tessera_plan_destroy(part);
  std::free(out);
  std::free(ref);
}

// ---- strided -----------------------------------------------------------------------------------

PROBE_TARGET inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xDD);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
    r[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
    r[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xDD);
  }
}

// out (2I, 2J) = tile of A (I, J), A[i][j] = base[j * I + i], by (2, 2): 16x16 blocks transposed
// in registers, kBlocks of them along a row staged, each staged row streamed to the four replicas
// in pieces of kBlocks * 64 bytes (kBlocks = 1: 64-byte pieces; 4: 256-byte pieces). Without
// kTranspose, the same loads, stores and streams in the same order with the 16x16 block's shuffles
// left out (a wrong output): what the gather's bytes in its order cost without its instructions.
// kRowBlocks 16-row blocks per tile (kRowBlocks = 2: 32 rows, two lines of each source column).
// Rows [i_begin, i_end) of A only (their four replicas), i_end = -1: all of them.
template <int kBlocks, bool kTranspose = true, int kRowBlocks = 1>
PROBE_TARGET void transpose_tile(const float* base, float* out, int64_t I, int64_t J, bool prefetch,
                                 int64_t i_begin = 0, int64_t i_end = -1) {
  const int64_t ow = 2 * J;
  constexpr int kRows = 16 * kRowBlocks;
  alignas(64) float stage[kRows][16 * kBlocks];
  for (int64_t i0 = i_begin; i0 < (i_end < 0 ? I : i_end); i0 += kRows)
    for (int64_t j0 = 0; j0 < J; j0 += 16 * kBlocks) {
      for (int b = 0; b < kBlocks; ++b)
        for (int rb = 0; rb < kRowBlocks; ++rb) {
          __m512 r[16];
          const int64_t j = j0 + 16 * b, i = i0 + 16 * rb;
          if (prefetch && j + 16 < J)
            for (int k = 0; k < 16; ++k) _mm_prefetch(reinterpret_cast<const char*>(base + (j + 16 + k) * I + i), _MM_HINT_T0);
          for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_ps(base + (j + k) * I + i);
          if constexpr (kTranspose) transpose16(r);
          for (int m = 0; m < 16; ++m) _mm512_store_ps(&stage[16 * rb + m][16 * b], r[m]);
        }
      for (int m = 0; m < kRows; ++m)
        for (int rep = 0; rep < 4; ++rep) {
          float* o = out + (i0 + m + (rep & 2 ? I : 0)) * ow + j0 + (rep & 1 ? J : 0);
          for (int b = 0; b < kBlocks; ++b) _mm512_stream_ps(o + 16 * b, _mm512_load_ps(&stage[m][16 * b]));
        }
    }
  _mm_sfence();
}

// The bytes of a (2, 2) tile of n floats with the fewest instructions: the source read once in
// memory order, each 64-byte line streamed to the same place in the output's four quarters (a
// different output: the bytes read and written, not the tile's order).
// Elements [begin, end) of the source (end = -1: all n).
PROBE_TARGET void read_stream_four(const float* src, float* out, int64_t n, int64_t begin = 0, int64_t end = -1) {
  for (int64_t i = begin; i < (end < 0 ? n : end); i += 16) {
    const __m512 v = _mm512_loadu_ps(src + i);
    for (int q = 0; q < 4; ++q) _mm512_stream_ps(out + q * n + i, v);
  }
  _mm_sfence();
}

void probe_strided(int rounds) {
  const int64_t I = 1024, J = 4096;
  float* base = alloc_touched<float>(static_cast<std::size_t>(I * J));
  for (int64_t k = 0; k < I * J; ++k) base[k] = static_cast<float>(k);
  const std::size_t bytes = static_cast<std::size_t>(4 * I * J) * 4;
  float* out = alloc_touched<float>(bytes / 4);
  float* ref = alloc_touched<float>(bytes / 4);
  const tessera_options o = one_thread();
  const int64_t shape[2] = {I, J}, strides[2] = {4, I * 4}, reps[2] = {2, 2};
  tessera_plan* plan = nullptr;
  check(tessera_plan_create_ex(2, shape, strides, 4, 2, reps, &o, &plan), "the strided plan");
  check(tessera_plan_execute(plan, base, ref, bytes), "the strided plan's execution");
  const auto same = [&](const char* what) {
    if (std::memcmp(out, ref, bytes) != 0) die(std::string("strided: ") + what + " differs from tessera's output");
  };
  transpose_tile<1>(base, out, I, J, false);
  same("16x16 transposes");
  transpose_tile<4>(base, out, I, J, false);
  same("staged 16x16 transposes");
  std::vector<Row> rows = {
      {"stream (limit)", [&] { stream_fill(reinterpret_cast<uint8_t*>(out), bytes); }, {}},
      {"tessera plan (gather.4.nt)", [&] { tessera_plan_execute(plan, base, out, bytes); }, {}},
      {"16x16 transposes, 64-byte pieces", [&] { transpose_tile<1>(base, out, I, J, false); }, {}},
      {"16x16 transposes, 64-byte pieces, prefetch", [&] { transpose_tile<1>(base, out, I, J, true); }, {}},
      {"16x16 transposes staged, 256-byte pieces", [&] { transpose_tile<4>(base, out, I, J, false); }, {}},
      {"bound: 64-byte pieces' loads and streams, no shuffles", [&] { transpose_tile<1, false>(base, out, I, J, false); }, {}},
      {"bound: 256-byte pieces' loads and streams, no shuffles", [&] { transpose_tile<4, false>(base, out, I, J, false); }, {}},
      {"bound: 512-byte pieces' loads and streams, no shuffles", [&] { transpose_tile<8, false>(base, out, I, J, false); }, {}},
      {"bound: 1 KiB pieces' loads and streams, no shuffles", [&] { transpose_tile<16, false>(base, out, I, J, false); }, {}},
      {"bound: 32 rows, 256-byte pieces, no shuffles", [&] { transpose_tile<4, false, 2>(base, out, I, J, false); }, {}},
      {"bound: 64 rows, 256-byte pieces, no shuffles", [&] { transpose_tile<4, false, 4>(base, out, I, J, false); }, {}},
      {"bound: 64 rows, 64-byte pieces, no shuffles", [&] { transpose_tile<1, false, 4>(base, out, I, J, false); }, {}},
      {"bound: source read in order, streamed to 4 quarters", [&] { read_stream_four(base, out, I * J); }, {}},
  };
  report("strided: tile of a transposed (1024, 4096) float32 by (2, 2) (64 MiB out)", rows, "stream (limit)",
         rounds);

  // Two threads, each a half: the limit's bytes, the tile's rows of A (their replicas), in one
  // tbb::task_arena of two threads (halves()).
  tessera_options o2 = o;
  o2.max_threads = 2;
  tessera_plan* plan2 = nullptr;
  check(tessera_plan_create_ex(2, shape, strides, 4, 2, reps, &o2, &plan2), "the strided plan at 2 threads");
  tbb::task_arena arena(2);
  std::vector<Row> rows2 = {
      {"stream (limit), 2 threads", [&] { halves(arena, [&](int h) { stream_fill(reinterpret_cast<uint8_t*>(out) + h * bytes / 2, bytes / 2); }); }, {}},
      {"tessera plan (gather.4.nt), 2 threads", [&] { arena.execute([&] { tessera_plan_execute(plan2, base, out, bytes); }); }, {}},
      {"16x16 transposes staged, 32 rows, 256-byte pieces", [&] { halves(arena, [&](int h) { transpose_tile<4, true, 2>(base, out, I, J, false, h * I / 2, (h + 1) * I / 2); }); }, {}},
      {"bound: 32 rows, 256-byte pieces, no shuffles", [&] { halves(arena, [&](int h) { transpose_tile<4, false, 2>(base, out, I, J, false, h * I / 2, (h + 1) * I / 2); }); }, {}},
      {"bound: 64 rows, 256-byte pieces, no shuffles", [&] { halves(arena, [&](int h) { transpose_tile<4, false, 4>(base, out, I, J, false, h * I / 2, (h + 1) * I / 2); }); }, {}},
      {"bound: source read in order, streamed to 4 quarters", [&] { halves(arena, [&](int h) { read_stream_four(base, out, I * J, h * I * J / 2, (h + 1) * I * J / 2); }); }, {}},
  };
  halves(arena, [&](int h) { transpose_tile<4, true, 2>(base, out, I, J, false, h * I / 2, (h + 1) * I / 2); });
  same("staged 16x16 transposes of 32 rows at 2 threads");
  check(tessera_plan_execute(plan2, base, out, bytes), "the strided plan's execution at 2 threads");
  same("the plan at 2 threads");
  report("strided: the same at two threads (each a half of the bytes: of the output, of A's rows)", rows2,
         "stream (limit), 2 threads", rounds, 2);
  tessera_plan_destroy(plan2);
  tessera_plan_destroy(plan);
  std::free(base);
  std::free(out);
  std::free(ref);
}

// ---- inner_bwd ---------------------------------------------------------------------------------

PROBE_TARGET float read_sum(const float* a, int64_t n) {
  __m512 s[8];
  for (auto& v : s) v = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 128)
    for (int k = 0; k < 8; ++k) s[k] = _mm512_add_ps(s[k], _mm512_load_ps(a + i + 16 * k));
  for (int k = 1; k < 8; ++k) s[0] = _mm512_add_ps(s[0], s[k]);
  return _mm512_reduce_add_ps(s[0]);
}

// read_sum's bytes widened to float64 and summed in 16 accumulators of doubles (tessera's
// accumulation width for float32): the limit's memory order with the conversions of a sum in double.
PROBE_TARGET double read_sum_double(const float* a, int64_t n) {
  __m512d s[16];
  for (auto& v : s) v = _mm512_setzero_pd();
  for (int64_t i = 0; i < n; i += 128)
    for (int k = 0; k < 16; ++k) s[k] = _mm512_add_pd(s[k], _mm512_cvtps_pd(_mm256_load_ps(a + i + 8 * k)));
  for (int k = 1; k < 16; ++k) s[0] = _mm512_add_pd(s[0], s[k]);
  return _mm512_reduce_add_pd(s[0]);
}

// read_sum_double with each line's line `ahead` bytes on prefetched into L2 as it is read (the
// kernels' PrefetchLine), while that lies in the n floats.
PROBE_TARGET double read_sum_double_prefetched(const float* a, int64_t n, int64_t ahead) {
  __m512d s[16];
  for (auto& v : s) v = _mm512_setzero_pd();
  const int64_t skip = ahead / 4;
  int64_t i = 0;
  for (; i + skip + 128 <= n; i += 128) {
    for (int k = 0; k < 8; ++k) _mm_prefetch(reinterpret_cast<const char*>(a + i + skip + 16 * k), _MM_HINT_T1);
    for (int k = 0; k < 16; ++k) s[k] = _mm512_add_pd(s[k], _mm512_cvtps_pd(_mm256_load_ps(a + i + 8 * k)));
  }
  for (; i < n; i += 128)
    for (int k = 0; k < 16; ++k) s[k] = _mm512_add_pd(s[k], _mm512_cvtps_pd(_mm256_load_ps(a + i + 8 * k)));
  for (int k = 1; k < 16; ++k) s[0] = _mm512_add_pd(s[0], s[k]);
  return _mm512_reduce_add_pd(s[0]);
}

// The fewest instructions that read n floats and stream n / 2 in one pass, in memory order: each
// pair of adjacent lines added and streamed as one line (the bytes a gradient of half its input's
// size moves: rep2_bwd, rep_counts_bwd, rep_ragged_bwd).
PROBE_TARGET void read_stream_half(const float* a, float* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 128, out += 64)
    for (int k = 0; k < 4; ++k)
      _mm512_stream_ps(out + 16 * k, _mm512_add_ps(_mm512_load_ps(a + i + 32 * k), _mm512_load_ps(a + i + 32 * k + 16)));
  _mm_sfence();
}

// The same for a result of a quarter of the gradient's size (inner_bwd, nchw_bwd, rep_mid_bwd):
// each four adjacent lines added and streamed as one line.
PROBE_TARGET void read_stream_quarter(const float* a, float* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 256, out += 64)
    for (int k = 0; k < 4; ++k) {
      const float* q = a + i + 64 * k;
      const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_load_ps(q), _mm512_load_ps(q + 16)),
                                     _mm512_add_ps(_mm512_load_ps(q + 32), _mm512_load_ps(q + 48)));
      _mm512_stream_ps(out + 16 * k, s);
    }
  _mm_sfence();
}

PROBE_TARGET inline __m512 demote(__m512d lo, __m512d hi) {
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
}

// out[r][j] = sum over k < K of g[r][k W + j], in double from 0 (tessera's bits), streamed.
PROBE_TARGET void inner_plain(const float* g, float* out, int64_t R, int64_t W, int K, int64_t prefetch_bytes) {
  for (int64_t r = 0; r < R; ++r) {
    const float* row = g + r * W * K;
    for (int64_t j = 0; j < W; j += 16) {
      if (prefetch_bytes > 0)
        for (int k = 0; k < K; ++k)
          _mm_prefetch(reinterpret_cast<const char*>(row + k * W + j) + prefetch_bytes, _MM_HINT_T0);
      __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
      for (int k = 0; k < K; ++k) {
        lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm256_loadu_ps(row + k * W + j)));
        hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_loadu_ps(row + k * W + j + 8)));
      }
      _mm512_stream_ps(out + r * W + j, demote(lo, hi));
    }
  }
  _mm_sfence();
}

// Each gradient row (K W floats) read from its start to its end, its sums in an L1 row of doubles.
PROBE_TARGET void inner_rows_whole(const float* g, float* out, int64_t R, int64_t W, int K) {
  static std::vector<double> acc_row;
  acc_row.assign(static_cast<std::size_t>(W), 0.0);
  double* acc = acc_row.data();
  for (int64_t r = 0; r < R; ++r) {
    const float* row = g + r * W * K;
    for (int64_t j = 0; j < W; j += 8)
      _mm512_storeu_pd(acc + j, _mm512_add_pd(_mm512_setzero_pd(), _mm512_cvtps_pd(_mm256_loadu_ps(row + j))));
    for (int k = 1; k < K; ++k)
      for (int64_t j = 0; j < W; j += 8)
        _mm512_storeu_pd(acc + j, _mm512_add_pd(_mm512_loadu_pd(acc + j), _mm512_cvtps_pd(_mm256_loadu_ps(row + k * W + j))));
    for (int64_t j = 0; j < W; j += 16)
      _mm512_stream_ps(out + r * W + j, demote(_mm512_loadu_pd(acc + j), _mm512_loadu_pd(acc + j + 8)));
  }
  _mm_sfence();
}

// out[r][j] = sum over k < K of g[r][k W + j], 128 columns at a time: the K rows' 512-byte pieces
// read one after another into 16 registers of doubles, streamed (W a multiple of 128).
PROBE_TARGET void inner_blocks_in_registers(const float* g, float* out, int64_t R, int64_t W, int K) {
  for (int64_t r = 0; r < R; ++r) {
    const float* row = g + r * W * K;
    for (int64_t j = 0; j < W; j += 128) {
      __m512d a[16];
      for (int v = 0; v < 16; ++v) a[v] = _mm512_cvtps_pd(_mm256_loadu_ps(row + j + 8 * v));
      for (int k = 1; k < K; ++k)
        for (int v = 0; v < 16; ++v) a[v] = _mm512_add_pd(a[v], _mm512_cvtps_pd(_mm256_loadu_ps(row + k * W + j + 8 * v)));
      for (int v = 0; v < 16; v += 2) _mm512_stream_ps(out + r * W + j + 8 * v, demote(a[v], a[v + 1]));
    }
  }
  _mm_sfence();
}

// Copies of a float32 gradient of `padded` elements, its first `filled` k % 7 / 8 (their sums are
// exact in any order, so every loop's result has tessera's bits), the rest 0; as many as
// rotation_copies() gives for the last-level cache read from sysfs (limit_loops.h), so that next(),
// which takes them in turn, reads a copy that the cache does not hold: the copies read since its
// last turn span twice the cache (2 of 64 MiB where L3 is 32 MiB, 11 where it is 300 MiB).
struct GradientCopies {
  GradientCopies(int64_t padded, int64_t filled) {
    std::size_t llc = 0;
    try {
      llc = tessera::bench::last_level_cache_bytes();
    } catch (const std::exception& e) {
      die(std::string("the last-level cache's size, which the gradients' copies are sized by: ") + e.what());
    }
    const std::size_t count = tessera::bench::rotation_copies(static_cast<std::size_t>(padded) * 4, llc);
    for (std::size_t c = 0; c < count; ++c) {
      float* b = alloc_touched<float>(static_cast<std::size_t>(padded));
      for (int64_t i = 0; i < filled; ++i) b[i] = static_cast<float>(i % 7) * 0.125f;
      g.push_back(b);
    }
  }
  GradientCopies(const GradientCopies&) = delete;
  GradientCopies& operator=(const GradientCopies&) = delete;
  ~GradientCopies() {
    for (float* b : g) std::free(b);
  }
  float* first() const { return g[0]; }  // the copy the loops' results are checked on
  const float* next() { return g[turn++ % g.size()]; }
  std::vector<float*> g;
  std::size_t turn = 0;
};

// A gradient of n elements in copies (GradientCopies), a result of `bytes` bytes (`out`) and
// tessera's plan's result (`ref`), which same() compares `out` with (exits on a difference, naming
// the probe `name` and the loop).
struct Gradients {
  Gradients(const char* name, int64_t n, std::size_t bytes, tessera_plan* plan)
      : name(name), bytes(bytes), copies(n, n) {
    out = alloc_touched<float>(bytes / 4);
    ref = alloc_touched<float>(bytes / 4);
    check(tessera_plan_execute(plan, first(), ref, bytes), "the plan's execution");
  }
  Gradients(const Gradients&) = delete;
  Gradients& operator=(const Gradients&) = delete;
  ~Gradients() {
    std::free(out);
    std::free(ref);
  }
  float* first() const { return copies.first(); }
  const float* next() { return copies.next(); }
  void same(const char* what) const {
    if (std::memcmp(out, ref, bytes) != 0) die(std::string(name) + ": " + what + " differs from tessera's output");
  }
  const char* name;
  std::size_t bytes;
  GradientCopies copies;
  float* out = nullptr;
  float* ref = nullptr;
};

// The read alone in the plain loop's order: 32 columns a step across the K rows of each
// gradient row (K streams W floats apart), summed in float into eight accumulators.
PROBE_TARGET float read_sum_across(const float* g, int64_t R, int64_t W, int K) {
  __m512 s[8];
  for (auto& v : s) v = _mm512_setzero_ps();
  for (int64_t r = 0; r < R; ++r) {
    const float* row = g + r * W * K;
    for (int64_t j = 0; j < W; j += 32)
      for (int k = 0; k < K; ++k) {
        s[(2 * k) & 7] = _mm512_add_ps(s[(2 * k) & 7], _mm512_load_ps(row + k * W + j));
        s[(2 * k + 1) & 7] = _mm512_add_ps(s[(2 * k + 1) & 7], _mm512_load_ps(row + k * W + j + 16));
      }
  }
  for (int k = 1; k < 8; ++k) s[0] = _mm512_add_ps(s[0], s[k]);
  return _mm512_reduce_add_ps(s[0]);
}

// Two rows at a time: the first two of each gradient row summed into an L1 row of doubles, the
// last two added to it and streamed (two streams at a time where the plain loop keeps K).
PROBE_TARGET void inner_pairs(const float* g, float* out, int64_t R, int64_t W, int K) {
  static std::vector<double> acc_row;
  acc_row.assign(static_cast<std::size_t>(W), 0.0);
  double* acc = acc_row.data();
  for (int64_t r = 0; r < R; ++r) {
    const float* row = g + r * W * K;
    for (int64_t j = 0; j < W; j += 8)
      _mm512_storeu_pd(acc + j, _mm512_add_pd(_mm512_cvtps_pd(_mm256_loadu_ps(row + j)),
                                              _mm512_cvtps_pd(_mm256_loadu_ps(row + W + j))));
    for (int64_t j = 0; j < W; j += 16) {
      __m512d lo = _mm512_loadu_pd(acc + j), hi = _mm512_loadu_pd(acc + j + 8);
      for (int k = 2; k < K; ++k) {
        lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm256_loadu_ps(row + k * W + j)));
        hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_loadu_ps(row + k * W + j + 8)));
      }
      _mm512_stream_ps(out + r * W + j, demote(lo, hi));
    }
  }
  _mm_sfence();
}

// A gradient of R rows of K W floats summed to R rows of W (out[r][j] = sum over k of
// g[r][k W + j]: inner_bwd, and rep_mid_bwd's 4 neighbouring rows of a row each), `plan` being
// tessera's plan of it (one thread), `kernel` its kernel's name.
void probe_lanes(const char* title, const char* name, const char* kernel, tessera_plan* plan, int64_t R, int64_t W,
                 int K, int rounds) {
  const int64_t n = R * W * K;
  Gradients G(name, n, static_cast<std::size_t>(R * W) * 4, plan);
  float* const out = G.out;
  inner_plain(G.first(), out, R, W, K, 0);
  G.same("the plain loop");
  inner_rows_whole(G.first(), out, R, W, K);
  G.same("rows read whole");
  inner_blocks_in_registers(G.first(), out, R, W, K);
  G.same("128-column blocks in registers");
  inner_pairs(G.first(), out, R, W, K);
  G.same("two rows at a time");
  volatile float sink = 0;
  std::vector<Row> rows = {
      {"read (limit)", [&] { sink = read_sum(G.next(), n); }, {}},
      {"read, a quarter streamed, in one pass", [&] { read_stream_quarter(G.next(), out, n / 256 * 256); }, {}},
      {"read, summed in double", [&] { sink = static_cast<float>(read_sum_double(G.next(), n)); }, {}},
      {"read, summed in double, 2 KiB ahead prefetched", [&] { sink = static_cast<float>(read_sum_double_prefetched(G.next(), n, 2048)); }, {}},
      {"read, summed in double, 4 KiB ahead prefetched", [&] { sink = static_cast<float>(read_sum_double_prefetched(G.next(), n, 4096)); }, {}},
      {"read across the rows as the plain loop, float sums", [&] { sink = read_sum_across(G.next(), R, W, K); }, {}},
      {std::string("tessera plan (") + kernel + ")", [&] { tessera_plan_execute(plan, G.next(), out, G.bytes); }, {}},
      {"plain loop, " + std::to_string(K) + " rows in double, streamed", [&] { inner_plain(G.next(), out, R, W, K, 0); }, {}},
      {"the same, prefetching 4 KiB ahead", [&] { inner_plain(G.next(), out, R, W, K, 4096); }, {}},
      {"each " + std::to_string(W * K / 256) + " KiB row read whole into an L1 row", [&] { inner_rows_whole(G.next(), out, R, W, K); }, {}},
      {"128-column blocks, the rows' pieces in order, in registers", [&] { inner_blocks_in_registers(G.next(), out, R, W, K); }, {}},
      {"two rows at a time, through an L1 row", [&] { inner_pairs(G.next(), out, R, W, K); }, {}},
  };
  static_cast<void>(sink);
  report(title, rows, "read (limit)", rounds);
}

void probe_inner_bwd(int rounds) {
  const int64_t R = 2048, W = 2048;
  const int K = 4;
  const tessera_options o = one_thread();
  const int64_t shape[2] = {R, W * K}, in_shape[2] = {R, W}, reps[2] = {1, K};
  tessera_plan* plan = nullptr;
  check(tessera_plan_create_tile_backward(2, shape, nullptr, TESSERA_FLOAT32, 2, in_shape, 2, reps, &o, &plan),
        "the tile_backward plan");
  probe_lanes("inner_bwd: tile_backward (2048, 8192) -> (2048, 2048) float32 (64 MiB read)", "inner_bwd",
              "reduce.lanes.reg.leaf", plan, R, W, K, rounds);
  tessera_plan_destroy(plan);
}

void probe_rep_mid_bwd(int rounds) {
  const int64_t R = 64 * 256, W = 256;
  const int K = 4;
  const tessera_options o = one_thread();
  const int64_t shape[3] = {64, 1024, 256}, in_shape[3] = {64, 256, 256};
  const int64_t repeats = K;
  tessera_plan* plan = nullptr;
  check(tessera_plan_create_repeat_backward(3, shape, nullptr, TESSERA_FLOAT32, 3, in_shape, 1, &repeats, 1, &o, &plan),
        "the repeat_backward plan");
  probe_lanes("rep_mid_bwd: repeat_backward (64, 1024, 256) by 4 along axis 1 -> (64, 256, 256) float32 (64 MiB read)",
              "rep_mid_bwd", "reduce.lanes.reg.leaf, rows in scratch", plan, R, W, K, rounds);
  tessera_plan_destroy(plan);
}

// ---- nchw_bwd ----------------------------------------------------------------------------------

// out[p][h][w] = the sum of g[p][h + a H][w + b W] over a, b in {0, 1} (P planes of 2H x 2W
// floats summed to H x W; nchw_bwd's 2x2 spatial replicas), 16 columns at a time across the four
// addends (two rows 2W floats apart, each at w and w + W), in double, streamed; the addends'
// lines optionally prefetched `prefetch_bytes` ahead.
PROBE_TARGET void nchw_plain(const float* g, float* out, int64_t P, int64_t H, int64_t W, int64_t prefetch_bytes) {
  for (int64_t p = 0; p < P; ++p)
    for (int64_t h = 0; h < H; ++h) {
      const float* r0 = g + (p * 2 * H + h) * 2 * W;
      const float* r1 = r0 + H * 2 * W;
      float* o = out + (p * H + h) * W;
      for (int64_t w = 0; w < W; w += 16) {
        if (prefetch_bytes > 0) {
          _mm_prefetch(reinterpret_cast<const char*>(r0 + w) + prefetch_bytes, _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(r1 + w) + prefetch_bytes, _MM_HINT_T0);
        }
        __m512d lo = _mm512_cvtps_pd(_mm256_loadu_ps(r0 + w)), hi = _mm512_cvtps_pd(_mm256_loadu_ps(r0 + w + 8));
        lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm256_loadu_ps(r0 + w + W)));
        hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_loadu_ps(r0 + w + W + 8)));
        lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm256_loadu_ps(r1 + w)));
        hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_loadu_ps(r1 + w + 8)));
        lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm256_loadu_ps(r1 + w + W)));
        hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_loadu_ps(r1 + w + W + 8)));
        _mm512_stream_ps(o + w, demote(lo, hi));
      }
    }
  _mm_sfence();
}

// The same sums with each plane read in memory order: its first H rows' halves summed into an
// H x W row block of doubles (L2), the last H rows' added to it and streamed (one stream of
// reads where the loop above keeps two).
PROBE_TARGET void nchw_planes_in_order(const float* g, float* out, int64_t P, int64_t H, int64_t W) {
  static std::vector<double> block;
  block.assign(static_cast<std::size_t>(H * W), 0.0);
  double* b = block.data();
  for (int64_t p = 0; p < P; ++p) {
    const float* plane = g + p * 4 * H * W;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; w += 8)
        _mm512_storeu_pd(b + h * W + w, _mm512_add_pd(_mm512_cvtps_pd(_mm256_loadu_ps(plane + h * 2 * W + w)),
                                                      _mm512_cvtps_pd(_mm256_loadu_ps(plane + h * 2 * W + w + W))));
    for (int64_t h = 0; h < H; ++h) {
      const float* r = plane + (H + h) * 2 * W;
      float* o = out + (p * H + h) * W;
      for (int64_t w = 0; w < W; w += 16) {
        const __m512d lo = _mm512_add_pd(_mm512_add_pd(_mm512_loadu_pd(b + h * W + w), _mm512_cvtps_pd(_mm256_loadu_ps(r + w))),
                                         _mm512_cvtps_pd(_mm256_loadu_ps(r + w + W)));
        const __m512d hi = _mm512_add_pd(_mm512_add_pd(_mm512_loadu_pd(b + h * W + w + 8), _mm512_cvtps_pd(_mm256_loadu_ps(r + w + 8))),
                                         _mm512_cvtps_pd(_mm256_loadu_ps(r + w + W + 8)));
        _mm512_stream_ps(o + w, demote(lo, hi));
      }
    }
  }
  _mm_sfence();
}

void probe_nchw_bwd(int rounds) {
  const int64_t P = 64 * 4, H = 128, W = 128;
  const int64_t n = P * 4 * H * W;
  const tessera_options o = one_thread();
  const int64_t shape[4] = {64, 4, 2 * H, 2 * W}, in_shape[4] = {64, 4, H, W}, reps[4] = {1, 1, 2, 2};
  tessera_plan* plan = nullptr;
  check(tessera_plan_create_tile_backward(4, shape, nullptr, TESSERA_FLOAT32, 4, in_shape, 4, reps, &o, &plan),
        "the tile_backward plan");
  {
    Gradients G("nchw_bwd", n, static_cast<std::size_t>(P * H * W) * 4, plan);
    float* const out = G.out;
    nchw_plain(G.first(), out, P, H, W, 0);
    G.same("the plain loop");
    nchw_planes_in_order(G.first(), out, P, H, W);
    G.same("the planes in memory order");
    volatile float sink = 0;
    std::vector<Row> rows = {
        {"read (limit)", [&] { sink = read_sum(G.next(), n); }, {}},
        {"read, a quarter streamed, in one pass", [&] { read_stream_quarter(G.next(), out, n); }, {}},
        {"tessera plan (reduce.lanes.reg.leaf, rows whole)", [&] { tessera_plan_execute(plan, G.next(), out, G.bytes); }, {}},
        {"plain loop, 4 addends in double, streamed", [&] { nchw_plain(G.next(), out, P, H, W, 0); }, {}},
        {"the same, prefetching 1 KiB ahead", [&] { nchw_plain(G.next(), out, P, H, W, 1024); }, {}},
        {"the same, prefetching 4 KiB ahead", [&] { nchw_plain(G.next(), out, P, H, W, 4096); }, {}},
        {"each plane in memory order, its sums in L2", [&] { nchw_planes_in_order(G.next(), out, P, H, W); }, {}},
    };
    static_cast<void>(sink);
    report("nchw_bwd: tile_backward (64, 4, 256, 256) -> (64, 4, 128, 128) float32 (64 MiB read)", rows,
           "read (limit)", rounds);
  }
  tessera_plan_destroy(plan);
}

// ---- bc_rows_bwd -------------------------------------------------------------------------------

// out[j] = sum over r < R of g[r][j] (R rows of W floats), row by row into a row of W doubles
// (32 KiB for W = 4096: L1's size here). In the rows' order, where tessera sums leaves of eight
// rows pairwise: the same bits only because this data's sums are exact in any order.
PROBE_TARGET void rows_into_row(const float* g, float* out, int64_t R, int64_t W) {
  static std::vector<double> acc_row;
  acc_row.assign(static_cast<std::size_t>(W), 0.0);
  double* acc = acc_row.data();
  for (int64_t r = 0; r < R; ++r)
    for (int64_t j = 0; j < W; j += 8)
      _mm512_storeu_pd(acc + j, _mm512_add_pd(_mm512_loadu_pd(acc + j), _mm512_cvtps_pd(_mm256_loadu_ps(g + r * W + j))));
  for (int64_t j = 0; j < W; j += 16) _mm512_storeu_ps(out + j, demote(_mm512_loadu_pd(acc + j), _mm512_loadu_pd(acc + j + 8)));
}

// The same, eight rows at a time: their sums in registers (16 columns a step, eight sequential
// streams), added to the row of doubles once per eight rows. kPf: kNone, no prefetch; kAlong, each
// of the eight rows' lines `ahead` bytes on prefetched into L2 as the row is read, while that line
// lies in the row (tessera's long rows along themselves); kIntoNext, the same and past that the
// next eight's row from its start (tessera's long rows into the next item's), or with ahead = 0
// the same line of the same row of the next eight (the next leaf along its rows, 128 KiB on for
// W = 4096).
enum EightRowsPf { kNone, kAlong, kIntoNext };
template <EightRowsPf kPf>
PROBE_TARGET void eight_rows(const float* g, float* out, int64_t R, int64_t W, int64_t ahead = 0) {
  static std::vector<double> acc_row;
  acc_row.assign(static_cast<std::size_t>(W), 0.0);
  double* acc = acc_row.data();
  const int64_t skip = ahead / 4, pf_end = kPf == kIntoNext && ahead == 0 ? 0 : W - skip;
  for (int64_t r = 0; r < R; r += 8)
    for (int64_t j = 0; j < W; j += 16) {
      if constexpr (kPf == kAlong) {
        if (j < pf_end)
          for (int k = 0; k < 8; ++k) _mm_prefetch(reinterpret_cast<const char*>(g + (r + k) * W + j + skip), _MM_HINT_T1);
      } else if constexpr (kPf == kIntoNext) {
        if (r + 8 < R || j < pf_end) {
          const float* at = j < pf_end ? g + r * W + j + skip : g + (r + 8) * W + j + skip - W;
          for (int k = 0; k < 8; ++k) _mm_prefetch(reinterpret_cast<const char*>(at + k * W), _MM_HINT_T1);
        }
      }
      __m512d lo = _mm512_loadu_pd(acc + j), hi = _mm512_loadu_pd(acc + j + 8);
      for (int k = 0; k < 8; ++k) {
        lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm256_loadu_ps(g + (r + k) * W + j)));
        hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_loadu_ps(g + (r + k) * W + j + 8)));
      }
      _mm512_storeu_pd(acc + j, lo);
      _mm512_storeu_pd(acc + j + 8, hi);
    }
  for (int64_t j = 0; j < W; j += 16) _mm512_storeu_ps(out + j, demote(_mm512_loadu_pd(acc + j), _mm512_loadu_pd(acc + j + 8)));
}

// Columns [j, j + 128) of the sums down all R rows in 16 registers of doubles; ahead > 0: each
// row's 512-byte piece `ahead` rows on prefetched (into L1) as the row is read.
PROBE_TARGET void column_block_double(const float* g, float* out, int64_t R, int64_t W, int64_t j, int64_t ahead) {
  __m512d a[16];
  for (auto& v : a) v = _mm512_setzero_pd();
  for (int64_t r = 0; r < R; ++r) {
    if (ahead > 0 && r + ahead < R)
      for (int k = 0; k < 8; ++k) _mm_prefetch(reinterpret_cast<const char*>(g + (r + ahead) * W + j + 16 * k), _MM_HINT_T0);
    for (int k = 0; k < 16; ++k) a[k] = _mm512_add_pd(a[k], _mm512_cvtps_pd(_mm256_loadu_ps(g + r * W + j + 8 * k)));
  }
  for (int k = 0; k < 16; k += 2) _mm512_storeu_ps(out + j + 8 * k, demote(a[k], a[k + 1]));
}

// The same sums, a block of 128 columns at a time down all R rows, in 16 registers of doubles
// (kDouble) or 8 of floats (the sums of this data are exact in either: the same bits).
template <bool kDouble>
PROBE_TARGET void column_blocks(const float* g, float* out, int64_t R, int64_t W) {
  for (int64_t j = 0; j < W; j += 128) {
    if constexpr (kDouble) {
      column_block_double(g, out, R, W, j, 0);
    } else {
      __m512 a[8];
      for (auto& v : a) v = _mm512_setzero_ps();
      for (int64_t r = 0; r < R; ++r)
        for (int k = 0; k < 8; ++k) a[k] = _mm512_add_ps(a[k], _mm512_loadu_ps(g + r * W + j + 16 * k));
      for (int k = 0; k < 8; ++k) _mm512_storeu_ps(out + j + 16 * k, a[k]);
    }
  }
}

// The double sums of column_blocks<true>, each line loaded once (a vector of 16 floats) and its
// two halves widened from the register: half the loads for the same conversions and additions.
PROBE_TARGET void column_blocks_one_load(const float* g, float* out, int64_t R, int64_t W) {
  for (int64_t j = 0; j < W; j += 128) {
    __m512d a[16];
    for (auto& v : a) v = _mm512_setzero_pd();
    for (int64_t r = 0; r < R; ++r)
      for (int k = 0; k < 8; ++k) {
        const __m512 v = _mm512_loadu_ps(g + r * W + j + 16 * k);
        a[2 * k] = _mm512_add_pd(a[2 * k], _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
        a[2 * k + 1] = _mm512_add_pd(a[2 * k + 1], _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
      }
    for (int k = 0; k < 16; k += 2) _mm512_storeu_ps(out + j + 8 * k, demote(a[k], a[k + 1]));
  }
}

// column_blocks<true>, with each row's 512-byte piece `ahead` rows on prefetched (into L1).
PROBE_TARGET void column_blocks_prefetched(const float* g, float* out, int64_t R, int64_t W, int64_t ahead) {
  for (int64_t j = 0; j < W; j += 128) column_block_double(g, out, R, W, j, ahead);
}

void probe_bc_rows_bwd(int rounds) {
  const int64_t R = 4096, W = 4096, n = R * W;
  const tessera_options o = one_thread();
  const int64_t shape[2] = {R, W}, target[2] = {1, W};
  tessera_plan* plan = nullptr;
  check(tessera_plan_create_sum_to_shape(2, shape, nullptr, TESSERA_FLOAT32, 2, target, &o, &plan),
        "the sum_to_shape plan");
  {
    Gradients G("bc_rows_bwd", n, static_cast<std::size_t>(W) * 4, plan);
    float* const out = G.out;
    rows_into_row(G.first(), out, R, W);
    G.same("the rows into a row of doubles");
    eight_rows<kNone>(G.first(), out, R, W);
    G.same("eight rows at a time into a row of doubles");
    eight_rows<kAlong>(G.first(), out, R, W, 2048);
    G.same("eight rows at a time, prefetched along them");
    eight_rows<kIntoNext>(G.first(), out, R, W, 0);
    G.same("eight rows at a time, the next eight prefetched");
    eight_rows<kIntoNext>(G.first(), out, R, W, 2048);
    G.same("eight rows at a time, prefetched along them into the next eight");
    column_blocks<true>(G.first(), out, R, W);
    G.same("the column blocks in double");
    column_blocks<false>(G.first(), out, R, W);
    G.same("the column blocks in float");
    column_blocks_one_load(G.first(), out, R, W);
    G.same("the column blocks in double, one load per line");
    column_blocks_prefetched(G.first(), out, R, W, 4);
    G.same("the column blocks in double, prefetched");
    volatile float sink = 0;
    std::vector<Row> rows = {
        {"read (limit)", [&] { sink = read_sum(G.next(), n); }, {}},
        {"read, summed in double", [&] { sink = static_cast<float>(read_sum_double(G.next(), n)); }, {}},
        {"read, summed in double, 2 KiB ahead prefetched", [&] { sink = static_cast<float>(read_sum_double_prefetched(G.next(), n, 2048)); }, {}},
        {"read, summed in double, 4 KiB ahead prefetched", [&] { sink = static_cast<float>(read_sum_double_prefetched(G.next(), n, 4096)); }, {}},
        {"tessera plan (reduce.lanes.leaves)", [&] { tessera_plan_execute(plan, G.next(), out, G.bytes); }, {}},
        {"plain loop, rows into a row of doubles", [&] { rows_into_row(G.next(), out, R, W); }, {}},
        {"eight rows at a time in registers, into the row", [&] { eight_rows<kNone>(G.next(), out, R, W); }, {}},
        {"the same, each row 2 KiB along it prefetched", [&] { eight_rows<kAlong>(G.next(), out, R, W, 2048); }, {}},
        {"the same, each row 4 KiB along it prefetched", [&] { eight_rows<kAlong>(G.next(), out, R, W, 4096); }, {}},
        {"the same, the next eight rows' line prefetched", [&] { eight_rows<kIntoNext>(G.next(), out, R, W, 0); }, {}},
        {"the same, 2 KiB along each row, into the next eight's", [&] { eight_rows<kIntoNext>(G.next(), out, R, W, 2048); }, {}},
        {"the same, 4 KiB along each row, into the next eight's", [&] { eight_rows<kIntoNext>(G.next(), out, R, W, 4096); }, {}},
        {"128-column blocks, 16 registers of doubles", [&] { column_blocks<true>(G.next(), out, R, W); }, {}},
        {"128-column blocks, 8 registers of floats", [&] { column_blocks<false>(G.next(), out, R, W); }, {}},
        {"128-column blocks in double, one load per line", [&] { column_blocks_one_load(G.next(), out, R, W); }, {}},
        {"128-column blocks in double, 4 rows ahead prefetched", [&] { column_blocks_prefetched(G.next(), out, R, W, 4); }, {}},
        {"128-column blocks in double, 8 rows ahead prefetched", [&] { column_blocks_prefetched(G.next(), out, R, W, 8); }, {}},
    };
    static_cast<void>(sink);
    report("bc_rows_bwd: sum_to_shape (4096, 4096) -> (1, 4096) float32 (64 MiB read)", rows, "read (limit)",
           rounds);
  }
  tessera_plan_destroy(plan);
}

// ---- bc_cols_bwd and narrow_bwd: the periodic path ------------------------------------------------

// out[r] = the sum of row r's W floats (R rows), in double: each 64-byte block's 16 floats widened
// into `K` pairs of accumulators of 8 doubles (K = 1: the two chains of additions tessera's
// RegPeriodic16 keeps), taken in turn block by block; `ahead` > 0: each block's line `ahead` bytes
// on prefetched first. The sums' order differs from tessera's (which sums leaves of blocks
// pairwise): the same bits only because this data's sums are exact in any order. W: a multiple of
// 16 K.
template <int K>
PROBE_TARGET void rows_to_values(const float* g, float* out, int64_t R, int64_t W, int64_t ahead) {
  const int64_t skip = ahead / 4;
  for (int64_t r = 0; r < R; ++r) {
    const float* row = g + r * W;
    __m512d lo[K], hi[K];
    for (int k = 0; k < K; ++k) lo[k] = hi[k] = _mm512_setzero_pd();
    for (int64_t j = 0; j < W; j += 16 * K)
      for (int k = 0; k < K; ++k) {
        if (skip > 0) _mm_prefetch(reinterpret_cast<const char*>(row + j + 16 * k + skip), _MM_HINT_T0);
        lo[k] = _mm512_add_pd(lo[k], _mm512_cvtps_pd(_mm256_load_ps(row + j + 16 * k)));
        hi[k] = _mm512_add_pd(hi[k], _mm512_cvtps_pd(_mm256_load_ps(row + j + 16 * k + 8)));
      }
    for (int k = 1; k < K; ++k) {
      lo[0] = _mm512_add_pd(lo[0], lo[k]);
      hi[0] = _mm512_add_pd(hi[0], hi[k]);
    }
    out[r] = static_cast<float>(_mm512_reduce_add_pd(_mm512_add_pd(lo[0], hi[0])));
  }
}

// A sum_to_shape or tile_backward plan of the first R / 128 rows (a gradient that fits in L2)
// executed 128 times on one copy: the plan's instructions without the memory.
struct PartPlan {
  tessera_plan* plan = nullptr;
  std::size_t bytes = 0;  // its result's
  ~PartPlan() { tessera_plan_destroy(plan); }
  void run(const float* g, float* out) const {
    for (int k = 0; k < 128; ++k) tessera_plan_execute(plan, g, out, bytes);
  }
};

void probe_bc_cols_bwd(int rounds) {
  const int64_t R = 4096, W = 4096, n = R * W;
  const tessera_options o = one_thread();
  const int64_t shape[2] = {R, W}, target[2] = {R, 1};
  tessera_plan* plan = nullptr;
  check(tessera_plan_create_sum_to_shape(2, shape, nullptr, TESSERA_FLOAT32, 2, target, &o, &plan),
        "the sum_to_shape plan");
  PartPlan part;
  const int64_t part_shape[2] = {R / 128, W}, part_target[2] = {R / 128, 1};
  part.bytes = static_cast<std::size_t>(R / 128) * 4;
  check(tessera_plan_create_sum_to_shape(2, part_shape, nullptr, TESSERA_FLOAT32, 2, part_target, &o, &part.plan),
        "the sum_to_shape plan of a part");
  {
    Gradients G("bc_cols_bwd", n, static_cast<std::size_t>(R) * 4, plan);
    float* const out = G.out;
    rows_to_values<1>(G.first(), out, R, W, 0);
    G.same("the rows in two chains of doubles");
    rows_to_values<4>(G.first(), out, R, W, 0);
    G.same("the rows in eight chains of doubles");
    rows_to_values<1>(G.first(), out, R, W, 16384);
    G.same("the rows in two chains, prefetched");
    part.run(G.first(), out);
    if (std::memcmp(out, G.ref, part.bytes) != 0) die("bc_cols_bwd: the part's plan differs from the whole's start");
    volatile float sink = 0;
    std::vector<Row> rows = {
        {"read (limit)", [&] { sink = read_sum(G.next(), n); }, {}},
        {"tessera plan (reduce.periodic, reg16)", [&] { tessera_plan_execute(plan, G.next(), out, G.bytes); }, {}},
        {"tessera plan, gradient in L2 (R/128 rows, 128x)", [&] { part.run(G.first(), out); }, {}},
        {"plain loop, each row in 2 chains of doubles", [&] { rows_to_values<1>(G.next(), out, R, W, 0); }, {}},
        {"the same, 8 chains", [&] { rows_to_values<4>(G.next(), out, R, W, 0); }, {}},
        {"the same, 2 chains, prefetching 4 KiB ahead", [&] { rows_to_values<1>(G.next(), out, R, W, 4096); }, {}},
        {"the same, 2 chains, prefetching 16 KiB ahead", [&] { rows_to_values<1>(G.next(), out, R, W, 16384); }, {}},
    };
    static_cast<void>(sink);
    report("bc_cols_bwd: sum_to_shape (4096, 4096) -> (4096, 1) float32 (64 MiB read)", rows, "read (limit)",
           rounds);
  }
  tessera_plan_destroy(plan);
}

// out[r][c] = the sum of row r's 40 elements c, c + 3, ... (c < 3) of its 120, in double: the
// row's 15 vectors of 8 doubles summed into three registers (vector v into v % 3: lane l of
// register k then holds only channel (8 k + l) % 3), whose 24 lanes are folded by channel;
// `ahead` > 0: the lines of the row `ahead` bytes on prefetched first. Exact data, any order (as
// above).
PROBE_TARGET void narrow_rows(const float* g, float* out, int64_t R, int64_t ahead) {
  const int64_t skip = ahead / 4;
  for (int64_t r = 0; r < R; ++r) {
    const float* row = g + r * 120;
    if (skip > 0)  // the eight lines a row of 480 bytes touches at most
      for (int64_t b = 0; b < 480; b += 64) _mm_prefetch(reinterpret_cast<const char*>(row + skip) + b, _MM_HINT_T0);
    __m512d acc[3] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd()};
    for (int v = 0; v < 15; ++v) acc[v % 3] = _mm512_add_pd(acc[v % 3], _mm512_cvtps_pd(_mm256_loadu_ps(row + 8 * v)));
    // acc[k] lane l holds elements 24 u + 8 k + l: channel (8 k + l) % 3.
    alignas(64) double lanes[24];
    for (int k = 0; k < 3; ++k) _mm512_store_pd(lanes + 8 * k, acc[k]);
    double s[3] = {0, 0, 0};
    for (int i = 0; i < 24; ++i) s[i % 3] += lanes[i];
    for (int c = 0; c < 3; ++c) out[r * 3 + c] = static_cast<float>(s[c]);
  }
}

void probe_narrow_bwd(int rounds) {
  const int64_t R = 131072, n = R * 120;
  const tessera_options o = one_thread();
  const int64_t shape[2] = {R, 120}, in_shape[2] = {R, 3}, reps[2] = {1, 40};
  tessera_plan* plan = nullptr;
  check(tessera_plan_create_tile_backward(2, shape, nullptr, TESSERA_FLOAT32, 2, in_shape, 2, reps, &o, &plan),
        "the tile_backward plan");
  PartPlan part;
  const int64_t part_shape[2] = {R / 128, 120}, part_in[2] = {R / 128, 3};
  part.bytes = static_cast<std::size_t>(R / 128) * 12;
  check(tessera_plan_create_tile_backward(2, part_shape, nullptr, TESSERA_FLOAT32, 2, part_in, 2, reps, &o, &part.plan),
        "the tile_backward plan of a part");
  {
    Gradients G("narrow_bwd", n, static_cast<std::size_t>(R) * 12, plan);
    float* const out = G.out;
    narrow_rows(G.first(), out, R, 0);
    G.same("the rows' 15 vectors of doubles");
    part.run(G.first(), out);
    if (std::memcmp(out, G.ref, part.bytes) != 0) die("narrow_bwd: the part's plan differs from the whole's start");
    volatile float sink = 0;
    std::vector<Row> rows = {
        {"read (limit)", [&] { sink = read_sum(G.next(), n); }, {}},
        {"tessera plan (reduce.periodic, w = 3)", [&] { tessera_plan_execute(plan, G.next(), out, G.bytes); }, {}},
        {"tessera plan, gradient in L2 (R/128 rows, 128x)", [&] { part.run(G.first(), out); }, {}},
        {"plain loop, 15 vectors of doubles per row", [&] { narrow_rows(G.next(), out, R, 0); }, {}},
        {"the same, prefetching 4 KiB ahead", [&] { narrow_rows(G.next(), out, R, 4096); }, {}},
    };
    static_cast<void>(sink);
    report("narrow_bwd: tile_backward (131072, 120) -> (131072, 3) float32 (60 MiB read)", rows, "read (limit)",
           rounds);
  }
  tessera_plan_destroy(plan);
}

// repeat_backward plans of float32 by the per-element `counts` on one thread: of all of them
// (`whole`) and of the first n/128 (`part`: a gradient that fits in L2, run 128 times), the
// segments rows of W elements (W = 0: single elements). Exits on an error.
struct CountPlans {
  tessera_plan* whole = nullptr;
  tessera_plan* part = nullptr;
  int64_t n_part = 0;
};
CountPlans count_plans(const std::vector<int64_t>& counts, int64_t W) {
  const tessera_options o = one_thread();
  const int ndim = W > 0 ? 2 : 1;
  CountPlans r;
  const int64_t n = static_cast<int64_t>(counts.size());
  r.n_part = n / 128;
  for (const int64_t segments : {n, r.n_part}) {
    int64_t total = 0;
    for (int64_t i = 0; i < segments; ++i) total += counts[static_cast<std::size_t>(i)];
    const int64_t shape[2] = {total, W}, in_shape[2] = {segments, W};
    tessera_plan*& plan = segments == n ? r.whole : r.part;
    check(tessera_plan_create_repeat_backward(ndim, shape, nullptr, TESSERA_FLOAT32, ndim, in_shape, segments,
                                              counts.data(), 0, &o, &plan),
          segments == n ? "the repeat_backward plan" : "the repeat_backward plan of a part");
  }
  return r;
}

// ---- rep_counts_bwd ----------------------------------------------------------------------------

// out[i] = the sum of element i's c8[i] (0-4) consecutive gradient elements, in double from 0 in
// their order (tessera's bits for this data, whose sums are exact), one segment at a time:
// its up to four addends by one masked 16-byte load (no branch on the count, which would be
// mispredicted at random), widened and added in order.
PROBE_TARGET void segments_scalar(const float* g, float* out, const uint8_t* c8, int64_t n) {
  int64_t p = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = c8[i];
    const __m256d v = _mm256_cvtps_pd(_mm_maskz_loadu_ps(static_cast<__mmask8>((1u << c) - 1), g + p));
    const __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
    const double s = ((_mm_cvtsd_f64(lo) + _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo))) + _mm_cvtsd_f64(hi)) +
                     _mm_cvtsd_f64(_mm_unpackhi_pd(hi, hi));
    out[i] = static_cast<float>(s);
    p += c;
  }
}

// Sixteen segments a step: their starts from a prefix sum of the counts in a register, the k-th
// addend of each (k < 4) by a masked gather, the sums in two registers of doubles, streamed. g
// must be readable for 64 elements past the last segment's start (the gathers' masked lanes read
// nothing, but the probe pads anyway).
PROBE_TARGET void segments_gather(const float* g, float* out, const uint8_t* c8, int64_t n) {
  const __m512i zero = _mm512_setzero_si512();
  int64_t p = 0;
  for (int64_t i = 0; i < n; i += 16) {
    const __m512i c = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c8 + i)));
    __m512i incl = c;
    incl = _mm512_add_epi32(incl, _mm512_alignr_epi32(incl, zero, 15));
    incl = _mm512_add_epi32(incl, _mm512_alignr_epi32(incl, zero, 14));
    incl = _mm512_add_epi32(incl, _mm512_alignr_epi32(incl, zero, 12));
    incl = _mm512_add_epi32(incl, _mm512_alignr_epi32(incl, zero, 8));
    const __m512i start = _mm512_sub_epi32(incl, c);
    const float* base = g + p;
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    for (int k = 0; k < 4; ++k) {
      const __mmask16 m = _mm512_cmpgt_epi32_mask(c, _mm512_set1_epi32(k));
      const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, _mm512_add_epi32(start, _mm512_set1_epi32(k)), base, 4);
      lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
      hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
    }
    _mm512_stream_ps(out + i, demote(lo, hi));
    p += _mm_extract_epi32(_mm512_extracti32x4_epi32(incl, 3), 3);
  }
  _mm_sfence();
}

// The segment groups' vector work alone (reduce.cpp's SegmentGroupsC with C = 4 on AVX-512) over
// 2 n floats read and n streamed, as if every step's 16 segments spanned 32 floats: per step two
// windows of two vectors (group B's from 16 floats on), two masked two-table permutations for
// elements 0-1 and two for 2-3 of fixed offsets, eight widenings to double (four of upper halves),
// eight additions, two narrowings and an insert, one line streamed; with the plan's prefetch of
// four lines `ahead` elements on (0: none). None of the plan's bookkeeping (the counts, their
// offsets and masks): what the memory gives this core's vector work of the design. n: a multiple
// of 16; g readable for 2 n + 16 floats (the prefetches clamped to its last one).
PROBE_TARGET void segments_vector_work(const float* g, float* out, int64_t n, int64_t ahead) {
  const float* const last = g + 2 * n + 15;
  const __m512i offs = _mm512_set_epi32(8, 7, 6, 5, 4, 3, 2, 1, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i two = _mm512_set1_epi32(2);
  for (int64_t i = 0; i < n; i += 16, out += 16) {
    const float* a = g + 2 * i;
    if (ahead > 0)
      for (int64_t j = 0; j < 4; ++j)
        _mm_prefetch(reinterpret_cast<const char*>(a + std::min(ahead + 16 * j, last - a)), _MM_HINT_T0);
    const __m512 wa0 = _mm512_loadu_ps(a), wa1 = _mm512_loadu_ps(a + 16);
    const __m512 wb0 = _mm512_loadu_ps(a + 16), wb1 = _mm512_loadu_ps(a + 32);
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    for (int s = 0; s < 4; s += 2) {
      const __m512i at = s == 0 ? offs : _mm512_add_epi32(offs, two);
      const __mmask16 live = s == 0 ? 0xffff : 0x0f0f;
      const __m512 xa = _mm512_maskz_permutex2var_ps(live, wa0, at, wa1);
      const __m512 xb = _mm512_maskz_permutex2var_ps(live, wb0, at, wb1);
      lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(xa)));
      hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm512_castps512_ps256(xb)));
      lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_extractf32x8_ps(xa, 1)));
      hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(xb, 1)));
    }
    _mm512_stream_ps(out, demote(lo, hi));
  }
  _mm_sfence();
}

void probe_rep_counts_bwd(int rounds) {
  const int64_t n = int64_t{8} << 20;  // segments (the result's elements); a multiple of 16
  std::mt19937 rng(1);
  std::vector<uint8_t> c8(static_cast<std::size_t>(n));
  std::vector<int64_t> counts(static_cast<std::size_t>(n));
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    c8[i] = static_cast<uint8_t>(rng() % 5);
    counts[i] = c8[i];
    total += c8[i];
  }
  const int64_t padded = (total + 64 + 127) / 128 * 128;  // read_sum's step; the gathers' slack
  GradientCopies copies(padded, total);
  float* const g0 = copies.first();
  const std::size_t bytes = static_cast<std::size_t>(n) * 4;
  float* out = alloc_touched<float>(static_cast<std::size_t>(n));
  float* ref = alloc_touched<float>(static_cast<std::size_t>(n));
  // The same plan's work on a gradient held in L2 (`part`: ~0.5 MiB of gradient, ~0.25 MiB of
  // result, written with ordinary stores at that size).
  const CountPlans plans = count_plans(counts, 0);
  tessera_plan* const plan = plans.whole;
  tessera_plan* const part = plans.part;
  const int64_t n_part = plans.n_part;
  check(tessera_plan_execute(plan, g0, ref, bytes), "the repeat_backward plan's execution");
  const auto same = [&](const char* what) {
    if (std::memcmp(out, ref, bytes) != 0) die(std::string("rep_counts_bwd: ") + what + " differs from tessera's output");
  };
  const std::size_t part_bytes = static_cast<std::size_t>(n_part) * 4;
  check(tessera_plan_execute(part, g0, out, part_bytes), "the part's execution");
  if (std::memcmp(out, ref, part_bytes) != 0) die("rep_counts_bwd: the part differs from the whole's start");
  segments_scalar(g0, out, c8.data(), n);
  same("a segment a step");
  segments_gather(g0, out, c8.data(), n);
  same("the gathers");
  const auto next = [&] { return copies.next(); };  // each call reads a copy L3 does not hold
  // segments_vector_work's segments: as many as its 2 n + 16 floats fit in the padded copies.
  const int64_t work_n = std::min<int64_t>(n, (padded - 16) / 2) / 16 * 16;
  volatile float sink = 0;
  std::vector<Row> rows = {
      {"read (limit)", [&] { sink = read_sum(next(), padded); }, {}},
      {"stream of the result (32 MiB)", [&] { stream_fill(reinterpret_cast<uint8_t*>(out), bytes); }, {}},
      {"read, half of it streamed, in one pass (read_stream_half)", [&] {
         read_stream_half(next(), out, std::min<int64_t>(padded, 2 * n) / 128 * 128);
       }, {}},
      {"tessera plan (reduce.segments)", [&] { tessera_plan_execute(plan, next(), out, bytes); }, {}},
      {"tessera plan, gradient in L2 (n/128 segments, 128x)", [&] {
         for (int k = 0; k < 128; ++k) tessera_plan_execute(part, g0, out, part_bytes);
       }, {}},
      {"a segment a step, one masked load, added in order", [&] { segments_scalar(next(), out, c8.data(), n); }, {}},
      {"16 segments a step, four masked gathers, streamed", [&] { segments_gather(next(), out, c8.data(), n); }, {}},
      {"the plan's vector work alone, prefetched 4 KiB ahead", [&] {
         segments_vector_work(next(), out, work_n, 1024);
       }, {}},
      {"the plan's vector work alone, prefetched 16 KiB ahead", [&] {
         segments_vector_work(next(), out, work_n, 4096);
       }, {}},
      {"the plan's vector work alone, in L2 (n/128 segments, 128x)", [&] {
         for (int k = 0; k < 128; ++k) segments_vector_work(g0, out, n_part / 16 * 16, 0);
       }, {}},
  };
  static_cast<void>(sink);
  report("rep_counts_bwd: repeat_backward of 16.8 Mi float32 by counts 0-4 (64 MiB read)", rows, "read (limit)",
         rounds);
  tessera_plan_destroy(plan);
  tessera_plan_destroy(part);
  std::free(out);
  std::free(ref);
}

// ---- rep_ragged_bwd ----------------------------------------------------------------------------

// Every line of the `floats` floats at row prefetched 4 KiB ahead (a segment's rows, before they
// are summed).
PROBE_TARGET inline void prefetch_ahead(const float* row, int64_t floats) {
  for (int64_t k = 0; k < floats; k += 16) _mm_prefetch(reinterpret_cast<const char*>(row + k) + 4096, _MM_HINT_T0);
}

// lo, hi += v's lower and upper 8 floats, as doubles.
PROBE_TARGET inline void add_promoted(__m512d& lo, __m512d& hi, __m512 v) {
  lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
  hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
}

// out row j (W floats) = the sum of segment j's c8[j] (0-4) consecutive gradient rows, in double
// from 0 in their order (tessera's bits), 16 columns at a time across the rows, streamed; a
// segment of 0 rows streams zeros. kPrefetch: each segment's rows prefetched 4 KiB ahead first;
// kHalves: the sums streamed as two 32-byte halves instead of one 64-byte store.
template <bool kPrefetch, bool kHalves>
PROBE_TARGET void ragged_rows(const float* g, float* out, const uint8_t* c8, int64_t n, int64_t W) {
  const float* row = g;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t c = c8[j];
    float* o = out + j * W;
    if (kPrefetch) prefetch_ahead(row, c * W);
    for (int64_t x = 0; x < W; x += 16) {
      __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
      for (int64_t k = 0; k < c; ++k) add_promoted(lo, hi, _mm512_loadu_ps(row + k * W + x));
      if (kHalves) {
        _mm256_stream_ps(o + x, _mm512_cvtpd_ps(lo));
        _mm256_stream_ps(o + x + 8, _mm512_cvtpd_ps(hi));
      } else {
        _mm512_stream_ps(o + x, demote(lo, hi));
      }
    }
    row += c * W;
  }
  _mm_sfence();
}

// The plain loop with each load's line prefetched kAhead bytes further along the gradient (into
// L2: prefetcht1), spread among the loads instead of a burst per segment.
template <int kAhead>
PROBE_TARGET void ragged_rows_spread(const float* g, float* out, const uint8_t* c8, int64_t n, int64_t W) {
  const float* row = g;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t c = c8[j];
    float* o = out + j * W;
    for (int64_t x = 0; x < W; x += 16) {
      __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
      for (int64_t k = 0; k < c; ++k) {
        _mm_prefetch(reinterpret_cast<const char*>(row + k * W + x) + kAhead, _MM_HINT_T1);
        add_promoted(lo, hi, _mm512_loadu_ps(row + k * W + x));
      }
      _mm512_stream_ps(o + x, demote(lo, hi));
    }
    row += c * W;
  }
  _mm_sfence();
}

// The same sums with the reads in memory order: each row of the segment added in turn into a row
// of W doubles in L1 (the same additions per column, so the same bits), then demoted and streamed.
PROBE_TARGET void ragged_rows_in_order(const float* g, float* out, const uint8_t* c8, int64_t n, int64_t W) {
  alignas(64) double acc[1024];  // W <= 1024
  const float* row = g;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t c = c8[j];
    float* o = out + j * W;
    for (int64_t x = 0; x < W; x += 8) _mm512_store_pd(acc + x, _mm512_setzero_pd());
    for (int64_t k = 0; k < c; ++k, row += W)
      for (int64_t x = 0; x < W; x += 16) {
        const __m512 v = _mm512_loadu_ps(row + x);
        _mm512_store_pd(acc + x, _mm512_add_pd(_mm512_load_pd(acc + x), _mm512_cvtps_pd(_mm512_castps512_ps256(v))));
        _mm512_store_pd(acc + x + 8,
                        _mm512_add_pd(_mm512_load_pd(acc + x + 8), _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1))));
      }
    for (int64_t x = 0; x < W; x += 16) _mm512_stream_ps(o + x, demote(_mm512_load_pd(acc + x), _mm512_load_pd(acc + x + 8)));
  }
  _mm_sfence();
}

// Blocks of 128 columns (16 registers of doubles, 512 bytes of each row) with each row's block
// read in memory order: the in-order loop's reads without its row of doubles in memory.
// kPrefetch: each segment's rows prefetched 4 KiB ahead first.
template <bool kPrefetch>
PROBE_TARGET void ragged_rows_blocks(const float* g, float* out, const uint8_t* c8, int64_t n, int64_t W) {
  const float* row = g;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t c = c8[j];
    float* o = out + j * W;
    if (kPrefetch) prefetch_ahead(row, c * W);
    for (int64_t x = 0; x < W; x += 128) {
      __m512d acc[16];
      for (int v = 0; v < 16; ++v) acc[v] = _mm512_setzero_pd();
      for (int64_t k = 0; k < c; ++k)
        for (int v = 0; v < 16; v += 2) add_promoted(acc[v], acc[v + 1], _mm512_loadu_ps(row + k * W + x + v * 8));
      for (int v = 0; v < 16; v += 2) _mm512_stream_ps(o + x + v * 8, demote(acc[v], acc[v + 1]));
    }
    row += c * W;
  }
  _mm_sfence();
}

// The prefetching loop 8 columns at a time (one register of doubles per step, 32-byte streams).
PROBE_TARGET void ragged_rows_prefetch8(const float* g, float* out, const uint8_t* c8, int64_t n, int64_t W) {
  const float* row = g;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t c = c8[j];
    float* o = out + j * W;
    prefetch_ahead(row, c * W);
    for (int64_t x = 0; x < W; x += 8) {
      __m512d acc = _mm512_setzero_pd();
      for (int64_t k = 0; k < c; ++k) acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm256_loadu_ps(row + k * W + x)));
      _mm256_stream_ps(o + x, _mm512_cvtpd_ps(acc));
    }
    row += c * W;
  }
  _mm_sfence();
}

void probe_rep_ragged_bwd(int rounds) {
  const int64_t n = 32768, W = 256;  // segments (the result's rows) of W float32 (1 KiB)
  std::mt19937 rng(2);
  std::vector<uint8_t> c8(static_cast<std::size_t>(n));
  std::vector<int64_t> counts(static_cast<std::size_t>(n));
  int64_t total = 0;
  for (int64_t j = 0; j < n; ++j) {
    c8[j] = static_cast<uint8_t>(rng() % 5);
    counts[j] = c8[j];
    total += c8[j];
  }
  const int64_t elems = total * W, padded = (elems + 127) / 128 * 128;  // read_sum's step
  GradientCopies copies(padded, elems);
  float* const g0 = copies.first();
  const std::size_t bytes = static_cast<std::size_t>(n * W) * 4;
  float* out = alloc_touched<float>(static_cast<std::size_t>(n * W));
  float* ref = alloc_touched<float>(static_cast<std::size_t>(n * W));
  // The plan's work on a gradient held in L2 (`part`: ~0.5 MiB of gradient).
  const CountPlans plans = count_plans(counts, W);
  tessera_plan* const plan = plans.whole;
  tessera_plan* const part = plans.part;
  const int64_t n_part = plans.n_part;
  check(tessera_plan_execute(plan, g0, ref, bytes), "the repeat_backward plan's execution");
  const auto same = [&](const char* what) {
    if (std::memcmp(out, ref, bytes) != 0) die(std::string("rep_ragged_bwd: ") + what + " differs from tessera's output");
  };
  const std::size_t part_bytes = static_cast<std::size_t>(n_part * W) * 4;
  check(tessera_plan_execute(part, g0, out, part_bytes), "the part's execution");
  if (std::memcmp(out, ref, part_bytes) != 0) die("rep_ragged_bwd: the part differs from the whole's start");
  ragged_rows<false, false>(g0, out, c8.data(), n, W);
  same("the plain loop");
  ragged_rows_in_order(g0, out, c8.data(), n, W);
  same("the loop in memory order");
  ragged_rows<true, false>(g0, out, c8.data(), n, W);
  same("the prefetching loop");
  ragged_rows_prefetch8(g0, out, c8.data(), n, W);
  same("the prefetching loop of 8 columns");
  ragged_rows_blocks<false>(g0, out, c8.data(), n, W);
  same("the loop of 128-column blocks");
  ragged_rows_blocks<true>(g0, out, c8.data(), n, W);
  same("the prefetching loop of 128-column blocks");
  ragged_rows<true, true>(g0, out, c8.data(), n, W);
  same("the prefetching loop of 32-byte streams");
  ragged_rows_spread<4096>(g0, out, c8.data(), n, W);
  same("the loop prefetching each load's line");
  const auto next = [&] { return copies.next(); };  // each call reads a copy L3 does not hold
  volatile float sink = 0;
  std::vector<Row> rows = {
      {"read (limit)", [&] { sink = read_sum(next(), padded); }, {}},
      {"stream of the result (32 MiB)", [&] { stream_fill(reinterpret_cast<uint8_t*>(out), bytes); }, {}},
      {"read, half of it streamed, in one pass (read_stream_half)", [&] {
         read_stream_half(next(), out, std::min<int64_t>(padded, 2 * n * W) / 128 * 128);
       }, {}},
      {"tessera plan (reduce.segments)", [&] { tessera_plan_execute(plan, next(), out, bytes); }, {}},
      {"tessera plan, gradient in L2 (n/128 segments, 128x)", [&] {
         for (int k = 0; k < 128; ++k) tessera_plan_execute(part, g0, out, part_bytes);
       }, {}},
      {"plain loop: a segment's rows added 16 columns at a time", [&] {
         ragged_rows<false, false>(next(), out, c8.data(), n, W);
       }, {}},
      {"rows in memory order into an L1 row of doubles", [&] {
         ragged_rows_in_order(next(), out, c8.data(), n, W);
       }, {}},
      {"plain loop, the rows prefetched 4 KiB ahead", [&] {
         ragged_rows<true, false>(next(), out, c8.data(), n, W);
       }, {}},
      {"plain loop, each load's line prefetched 2 KiB ahead (L2)", [&] {
         ragged_rows_spread<2048>(next(), out, c8.data(), n, W);
       }, {}},
      {"plain loop, each load's line prefetched 4 KiB ahead (L2)", [&] {
         ragged_rows_spread<4096>(next(), out, c8.data(), n, W);
       }, {}},
      {"plain loop, each load's line prefetched 8 KiB ahead (L2)", [&] {
         ragged_rows_spread<8192>(next(), out, c8.data(), n, W);
       }, {}},
      {"plain loop, each load's line prefetched 16 KiB ahead (L2)", [&] {
         ragged_rows_spread<16384>(next(), out, c8.data(), n, W);
       }, {}},
      {"the same, 8 columns a step, 32-byte streams", [&] {
         ragged_rows_prefetch8(next(), out, c8.data(), n, W);
       }, {}},
      {"the same, 16 columns a step, two 32-byte streams", [&] {
         ragged_rows<true, true>(next(), out, c8.data(), n, W);
       }, {}},
      {"blocks of 128 columns in registers, each row's block in order", [&] {
         ragged_rows_blocks<false>(next(), out, c8.data(), n, W);
       }, {}},
      {"blocks of 128 columns, the rows prefetched 4 KiB ahead", [&] {
         ragged_rows_blocks<true>(next(), out, c8.data(), n, W);
       }, {}},
      {"the prefetching loop (16 columns), gradient in L2 (n/128, 128x)", [&] {
         for (int k = 0; k < 128; ++k) ragged_rows<true, false>(g0, out, c8.data(), n_part, W);
       }, {}},
  };
  static_cast<void>(sink);
  report("rep_ragged_bwd: repeat_backward of 32768 segments of 0-4 rows of 1 KiB float32 (~64 MiB read)", rows,
         "read (limit)", rounds);
  tessera_plan_destroy(plan);
  tessera_plan_destroy(part);
  std::free(out);
  std::free(ref);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 11;
  std::vector<std::string> probes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
      if (rounds < 1) die("--rounds needs a positive count");
    } else if (a == "--probe" && i + 1 < argc) {
      probes.push_back(argv[++i]);
    } else {
      die("unknown argument '" + a + "' (usage: tessera_probes [--rounds N] [--probe rep_counts|strided|inner_bwd|rep_mid_bwd|nchw_bwd|bc_rows_bwd|bc_cols_bwd|narrow_bwd|rep_counts_bwd|rep_ragged_bwd]...)");
    }
  }
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512dq"))
    die("this CPU lacks AVX-512F/BW/VL/DQ, which the probes are written for");
  if (probes.empty()) probes = {"rep_counts", "strided", "inner_bwd", "rep_mid_bwd", "nchw_bwd", "bc_rows_bwd", "bc_cols_bwd", "narrow_bwd", "rep_counts_bwd", "rep_ragged_bwd"};
  std::printf("tessera %s, target %s\n", tessera_version(), tessera_active_target());
  for (const std::string& p : probes) {
    if (p == "rep_counts") probe_rep_counts(rounds);
    else if (p == "strided") probe_strided(rounds);
    else if (p == "inner_bwd") probe_inner_bwd(rounds);
    else if (p == "rep_mid_bwd") probe_rep_mid_bwd(rounds);
    else if (p == "nchw_bwd") probe_nchw_bwd(rounds);
    else if (p == "bc_rows_bwd") probe_bc_rows_bwd(rounds);
    else if (p == "bc_cols_bwd") probe_bc_cols_bwd(rounds);
    else if (p == "narrow_bwd") probe_narrow_bwd(rounds);
    else if (p == "rep_counts_bwd") probe_rep_counts_bwd(rounds);
    else if (p == "rep_ragged_bwd") probe_rep_ragged_bwd(rounds);
    else die("unknown probe '" + p + "'");
  }
  return 0;
}
