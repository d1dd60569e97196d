// Guard pages (tests/guard.hpp): source and destination placed against a PROT_NONE page — their
// ends in one pass, their starts in a second — so that any read or write outside the caller's
// buffers faults. Swept over itemsizes 1..32, outputs of 0..192 bytes (around vector widths),
// every misalignment (0..63 bytes from the guard) of source and destination, and every executor
// path (Plan::kernel_path), on every Highway target this machine runs; plus outputs large enough
// for the parallel (TBB) path, whose chunks split rows. The bytes are compared with the reference,
// bytes next to the buffers (between them and the guard, and before them) must keep their canary.
// The cases are tile's, broadcast_to's and repeat's (scalar and per-element counts). Every case's
// plan must take the path the case predicts (Plan::kernel_path(), decided once by the planner: on a
// target without vectors, HWY_SCALAR, the vector and streaming paths become their plain scalar
// ones — on_target below), and on every target the cases together reach every path it plans. In
// a build with -Dpath_counters=true (tests/run's build/tests) the suite also asserts on what the
// kernels EXECUTED (lib/kernels/path_counters.hpp counts the path of each range per target): each
// case's calls ran exactly its planned path, nothing else, on the forced target only; and it prints
// the executed paths per target.
// The reductions (tile_backward, sum_to_shape, repeat_backward) have their own test case: every
// reduction path, every dtype, gradients and results against the guard page (negative strides
// included), small and threaded, overwriting and accumulating, checked the same way (see "The
// reductions" below).
#include <doctest/doctest.h>

#include <hwy/targets.h>
#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "guard.hpp"
#include "reduce_data.hpp"
#include "reference.hpp"
#include "util.hpp"

#if TESSERA_PATH_COUNTERS
#include "kernels/path_counters.hpp"  // lib/, on the include path with -Dpath_counters=true
#endif

namespace {

using test::GuardPage;
using test::GuardSide;
using test::reduce_path_of;
using test::Shape;
using test::TargetGuard;

enum class Op { tile, broadcast_to, repeat };

// One input layout with its operation (tile by reps, broadcast_to a target, repeat by counts along
// an axis), and the executor path its plan must take on a target with vectors.
struct Case {
  std::string family;
  Shape shape;
  Shape strides;  // bytes; empty = C-contiguous
  std::size_t itemsize;
  Shape reps;        // tile: reps; broadcast_to: the target shape; repeat: the counts
  std::string path;  // expected Plan::kernel_path()
  tessera::NonTemporal nontemporal = tessera::NonTemporal::automatic;
  Op op = Op::tile;
  std::optional<int> axis = std::nullopt;  // repeat
  std::string plain_path = {};  // streamed(): the path before, which a target without streaming stores takes
};

Case repeat_case(std::string family, Shape shape, Shape strides, std::size_t itemsize, Shape counts,
                 std::optional<int> axis, std::string path) {
  Case c{std::move(family), std::move(shape), std::move(strides), itemsize, std::move(counts), std::move(path)};
  c.op = Op::repeat;
  c.axis = axis;
  return c;
}

Case broadcast_case(std::string family, Shape shape, std::size_t itemsize, Shape target, std::string path) {
  Case c{std::move(family), std::move(shape), {}, itemsize, std::move(target), std::move(path)};
  c.op = Op::broadcast_to;
  return c;
}

tessera::Plan plan_of(const Case& c, const tessera::Options& options) {
  switch (c.op) {
    case Op::tile: return tessera::Plan(c.shape, c.strides, c.itemsize, c.reps, options);
    case Op::broadcast_to: return tessera::Plan::broadcast_to(c.shape, c.strides, c.itemsize, c.reps, options);
    case Op::repeat: break;
  }
  return tessera::Plan::repeat(c.shape, c.strides, c.itemsize, c.reps, c.axis, options);
}

// The path a case's plan takes on `target`: the planner gives HWY_SCALAR (no vectors, no streaming
// stores) the plain scalar path in place of each vector or streaming one.
std::string on_target(std::string path, const std::string& target) {
  if (target != "SCALAR") return path;
  const auto strip = [&](const std::string& suffix) {
    if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
      path.resize(path.size() - suffix.size());
  };
  if (path.rfind("gather.", 0) == 0 && path.find(".nt") != std::string::npos) return path.substr(0, path.size() - 3) + ".blocked";
  strip(".nt.direct");
  strip(".nt");
  if (path == "pattern.shuffle") return "pattern.short";
  if (path == "fill.16") return "fill.any";
  if (path == "repeat.shuffle") return "repeat.elements";
  return path;
}

// The same case written with streaming stores (staged through L1 unless `direct`): path "….nt".
// The path is predicted from the case's last input axis, which is the plan's innermost entry for
// every case this file builds (a case whose innermost axes merge may need `direct` given).
Case streamed(Case c, bool direct = false) {
  c.family += direct ? " [streamed directly]" : " [streamed]";
  c.plain_path = c.path;
  c.nontemporal = tessera::NonTemporal::always;
  // Only blocked gathers stream ("gather.N.blocked" -> "gather.N.nt"); other gather rows are bound
  // by their strided reads and keep their path.
  const bool gather = c.path.rfind("gather", 0) == 0;
  const std::string blocked = ".blocked";
  const bool is_blocked = gather && c.path.size() > blocked.size() &&
                          c.path.compare(c.path.size() - blocked.size(), blocked.size(), blocked) == 0;
  // Fills of 1-16 byte elements whose rows are whole cache lines stream directly from a register
  // (tile cases: the row is the output's last axis).
  // (tile and broadcast_to: the output's last axis; a repeat's fill rows: one element's copies).
  const int64_t row = c.op == Op::tile           ? ref::tile_shape(c.shape, c.reps).back()
                      : c.op == Op::broadcast_to ? c.reps.back()
                                                 : c.reps[0];
  const bool fill_lines = c.path.rfind("fill.", 0) == 0 && c.path != "fill.any" &&
                          row * static_cast<int64_t>(c.itemsize) % 64 == 0;
  // Rows of short runs of 256 bytes or more (kShuffleDirectRowBytes) stream from registers too.
  const bool shuffle_rows = c.path == "pattern.shuffle" && row * static_cast<int64_t>(c.itemsize) >= 256;
  // Segments whose counts are walked as one byte each (each count's copies within a 16-byte
  // store of a 1-8 byte element) in rows of 256 bytes or more (kSegmentsDirectRowBytes; the
  // cases' rows: the counts' total along the last axis) stream through the kernel's own small
  // stage.
  const int64_t isz = static_cast<int64_t>(c.itemsize);
  const bool segment_bytes = c.path == "segments" && c.op == Op::repeat &&
                             (isz == 1 || isz == 2 || isz == 4 || isz == 8) &&
                             *std::max_element(c.reps.begin(), c.reps.end()) * isz <= 16 &&
                             std::accumulate(c.reps.begin(), c.reps.end(), int64_t{0}) * isz >= 256;
  const std::string lines = ".lines";  // rows of one line: fill.N.lines with ordinary stores
  if (c.path.size() > lines.size() && c.path.compare(c.path.size() - lines.size(), lines.size(), lines) == 0)
    c.path.resize(c.path.size() - lines.size());
  if (is_blocked) {
    c.path = c.path.substr(0, c.path.size() - blocked.size()) + ".nt";
  } else if (c.path != "none" && !gather) {
    c.path += direct || fill_lines || shuffle_rows || segment_bytes ? ".nt.direct" : ".nt";
  }
  return c;
}

// The path a case's plan takes on `target`: a streamed case's plain path on HWY_SCALAR (which has
// no streaming stores: a fill of one-line rows is fill.N.lines there, not fill.N), else on_target's.
std::string path_on(const Case& c, const std::string& target) {
  return on_target(target == "SCALAR" && !c.plain_path.empty() ? c.plain_path : c.path, target);
}

// A repeat's counts, at most the first 16 of them (a failure's message stays readable).
std::string brief(const Shape& v) {
  if (v.size() <= 16) return test::to_string(v);
  std::string head = test::to_string(Shape(v.begin(), v.begin() + 16));
  head.pop_back();  // ")"
  return head + ", ... (" + std::to_string(v.size()) + " values))";
}

std::string describe(const Case& c) {
  const std::string args = c.op == Op::tile           ? " reps " + test::to_string(c.reps)
                           : c.op == Op::broadcast_to ? " broadcast_to " + test::to_string(c.reps)
                                                      : " repeat " + brief(c.reps) + " axis " +
                                                            (c.axis ? std::to_string(*c.axis) : std::string("None"));
  return c.family + ": input " + test::to_string(c.shape) + " strides " +
         (c.strides.empty() ? std::string("C-contiguous") : test::to_string(c.strides)) + " itemsize " +
         std::to_string(c.itemsize) + args;
}

// The element-size variant of the fill and gather paths.
std::string variant(std::size_t itemsize) {
  return itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8 || itemsize == 16
             ? std::to_string(itemsize)
             : "any";
}

// [low, high): the bytes the input addresses, relative to element (0, ..., 0); {0, 0} if empty.
std::pair<int64_t, int64_t> input_span(const Case& c) {
  if (ref::count(c.shape) == 0) return {0, 0};
  const Shape strides = c.strides.empty() ? ref::contiguous_strides(c.shape, c.itemsize) : c.strides;
  int64_t low = 0, high = static_cast<int64_t>(c.itemsize);
  for (std::size_t k = 0; k < c.shape.size(); ++k) {
    const int64_t reach = (c.shape[k] - 1) * strides[k];
    (reach < 0 ? low : high) += reach;
  }
  return {low, high};
}

// The path of `reps` copies of each `itemsize`-byte element in a row (numpy.repeat's kernel, or a
// tile of an (n, 1) array along its last axis): byte shuffles for a contiguous source of 1-8 byte
// elements and 2-8 copies, else element by element under 64 bytes per element, else fills (of
// rows of one cache line each, "fill.N.lines", for 1-8 byte elements).
std::string repeat_path(std::size_t itemsize, int64_t reps, bool contiguous) {
  const int64_t is = static_cast<int64_t>(itemsize);
  const bool shuffle = contiguous && (is == 1 || is == 2 || is == 4 || is == 8) && reps >= 2 && reps <= 8;
  if (shuffle) return "repeat.shuffle";
  if (reps * is < 64) return "repeat.elements";
  return "fill." + variant(itemsize) + (reps * is == 64 && is <= 8 ? ".lines" : "");
}

// The gather path of rows whose elements are `stride` bytes apart, with a row loop or not:
// whole rows through the blocked transpose for strides of a cache line or more.
std::string gather_path(std::size_t itemsize, int64_t stride, bool row_loop) {
  const bool blocked = row_loop && itemsize <= 16 && (stride >= 64 || stride <= -64);
  return "gather." + variant(itemsize) + (blocked ? ".blocked" : "");
}

// The pattern path of a run of `run_bytes` under 256 bytes in an output of `out_bytes`.
std::string pattern_path(int64_t run_bytes, int64_t out_bytes) {
  return run_bytes <= 16 && out_bytes >= 4096 ? "pattern.shuffle" : "pattern.short";
}

// Every layout family with an output of exactly n elements of s bytes (the families that cannot
// make n elements, e.g. a repeated run when n is prime, are skipped for that n).
void add_small_cases(std::vector<Case>& out, std::size_t s, int64_t n) {
  const int64_t is = static_cast<int64_t>(s);
  const std::string v = variant(s);
  // A fill of the whole output as one row: of one cache line, fill.N.lines (1-8 byte elements).
  const std::string fill_row = "fill." + v + (n * is == 64 && is <= 8 ? ".lines" : "");
  if (n == 0) {
    out.push_back({"empty: zero rep", {3}, {}, s, {0}, "none"});
    out.push_back({"empty: zero extent", {0}, {}, s, {4}, "none"});
    return;
  }
  out.push_back({"copy: contiguous", {n}, {}, s, {1}, "copy"});
  if (n == 1) return;
  out.push_back({"fill: one element repeated", {1}, {}, s, {n}, fill_row});
  out.push_back({"fill: broadcast axis (stride 0)", {n}, {0}, s, {1}, fill_row});
  out.push_back({"gather: reversed", {n}, {-is}, s, {1}, "gather." + v});
  out.push_back({"gather: stepped (every other element)", {n}, {2 * is}, s, {1}, "gather." + v});
  // Factorisations n = a * b with a, b >= 2: the most and the least balanced.
  std::vector<std::pair<int64_t, int64_t>> factors;
  for (int64_t a = 2; a * 2 <= n; ++a)
    if (n % a == 0) factors.emplace_back(a, n / a);
  if (factors.empty()) return;
  std::vector<std::pair<int64_t, int64_t>> picks = {factors.front()};
  if (factors.size() > 1) picks.push_back(factors[factors.size() / 2]);
  for (const auto& [a, b] : picks) {
    // A run of a elements repeated b times (pattern), short by construction (n * s <= 192).
    out.push_back({"pattern: run repeated", {a}, {}, s, {b}, pattern_path(a * is, n * is)});
    // The transpose of a C-contiguous (b, a) array: a gather with a row loop.
    out.push_back({"gather: transposed", {a, b}, {is, a * is}, s, {1, 1}, gather_path(s, a * is, true)});
    // a rows of one element each, every row's element repeated b times: the repeat kernel (or
    // fills, one row per element, when the copies are long).
    out.push_back({"repeat: a column tiled", {a, 1}, {}, s, {1, b}, repeat_path(s, b, true)});
    // numpy.repeat of a elements by b, from a contiguous and from a reversed source.
    out.push_back(repeat_case("repeat: elements", {a}, {}, s, {b}, 0, repeat_path(s, b, true)));
    out.push_back(repeat_case("repeat: reversed elements", {a}, {-is}, s, {b}, -1, repeat_path(s, b, false)));
    // Rows repeated by b (axis 0): a pattern of one row.
    out.push_back(repeat_case("repeat: rows", {1, a}, {}, s, {b}, 0, pattern_path(a * is, n * is)));
  }
  // Per-element counts (segments): 0, 2, 2, ..., 2 (and a 1 if n is odd) sum to n, contiguous and
  // reversed; with two columns, a segment loop over rows of 2 elements (a copy of each row).
  {
    Shape counts = {0};
    for (int64_t k = 0; k < n / 2; ++k) counts.push_back(2);
    if (n % 2) counts.push_back(1);
    const int64_t k = static_cast<int64_t>(counts.size());
    out.push_back(repeat_case("segments: counts 0, 2, 2, ...", {k}, {}, s, counts, 0, "segments"));
    out.push_back(repeat_case("segments: reversed, flattened", {k}, {-is}, s, counts, std::nullopt, "segments"));
    if (n % 2 == 0) {
      Shape half = {0};
      for (int64_t r = 0; r < n / 4; ++r) half.push_back(2);
      if ((n / 2) % 2) half.push_back(1);
      out.push_back(repeat_case("segments: rows of two", {static_cast<int64_t>(half.size()), 2}, {}, s, half, 0, "copy"));
    }
  }
  // broadcast_to: a row to n / 2 rows (a pattern of one row) and an element to n (a fill).
  if (n % 2 == 0) out.push_back(broadcast_case("broadcast_to: rows", {1, 2}, s, {n / 2, 2}, pattern_path(2 * is, n * is)));
  out.push_back(broadcast_case("broadcast_to: an element", {}, s, {n}, fill_row));
  if (n % 4 == 0 && n / 4 >= 2) {
    // (2, k) x (2, r) with k * r = n / 4, k >= 2: a repeated run inside row loops (with r == 1 the
    // two input axes merge into one run of 2k elements, still repeated twice).
    const int64_t m = n / 4, k = m % 2 == 0 && m >= 4 ? 2 : m;
    // The run is k elements, or 2k when r == 1 merges the two input axes.
    out.push_back({"pattern: 2-d, rows", {2, k}, {}, s, {2, m / k}, pattern_path((m / k == 1 ? 2 * k : k) * is, n * is)});
  }
}

// A run of 256..448 bytes (k elements) repeated `r` times: the long-run pattern path.
void add_long_pattern_cases(std::vector<Case>& out, std::size_t s) {
  const int64_t is = static_cast<int64_t>(s);
  for (int64_t k = (256 + is - 1) / is; k * is <= 256 + 3 * 64; ++k)
    out.push_back({"pattern: long run repeated", {k}, {}, s, {k % 3 == 0 ? 3 : 2}, "pattern.long"});
}

// Outputs of 4 KiB and a little more with runs of 1..16 bytes: the shuffle path, with rows that
// start at every phase of the vector.
void add_shuffle_cases(std::vector<Case>& out, std::size_t s) {
  const int64_t is = static_cast<int64_t>(s);
  for (int64_t k = 2; k * is <= 16; ++k) {  // k = 1 would be a fill
    const int64_t reps = (4096 + k * is - 1) / (k * is);
    out.push_back({"pattern: short run, 4 KiB output", {k}, {}, s, {reps}, "pattern.shuffle"});
    out.push_back({"pattern: short run, rows", {3, k}, {}, s, {1, reps / 3 + 1}, "pattern.shuffle"});
  }
}

// Counts 0, 1, 2, 3, 0, 1, ... for n elements.
Shape counts_0123(int64_t n) {
  Shape counts(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) counts[static_cast<std::size_t>(i)] = i % 4;
  return counts;
}

// Outputs over 512 KiB: the executor splits them into chunks that run in parallel, with chunk
// boundaries inside rows (so the pattern kernels start mid-run).
std::vector<Case> large_cases() {
  return {
      {"large copy", {600 * 1024 + 7}, {}, 1, {1}, "copy"},
      {"large shuffled pattern (one row split across chunks)", {3}, {}, 4, {52433}, "pattern.shuffle"},
      {"large short pattern", {7}, {}, 4, {20011}, "pattern.short"},
      {"large long pattern", {101}, {}, 3, {2111}, "pattern.long"},
      // Runs of kMemcpyRunBytes (16 KiB) or more: one memcpy per run (the large one in parallel
      // chunks that start mid-run).
      {"memcpy pattern", {4097}, {}, 4, {3}, "pattern.memcpy"},
      {"large memcpy pattern", {5473}, {}, 3, {40}, "pattern.memcpy"},
      {"large fill", {1}, {}, 8, {80003}, "fill.8"},
      {"large fill, rows", {7, 1}, {}, 12, {1, 7507}, "fill.any"},
      {"large gather, reversed", {320003}, {-2}, 2, {1}, "gather.2"},
      {"large gather, transposed", {331, 401}, {5, 331 * 5}, 5, {1, 1}, "gather.any.blocked"},
      // Blocked gathers: source stride of a cache line or more, whole rows in groups.
      {"large blocked gather, transposed, tiled", {133, 451}, {4, 133 * 4}, 4, {2, 2}, "gather.4.blocked"},
      {"large blocked gather, transposed 16-byte", {70, 233}, {16, 70 * 16}, 16, {1, 3}, "gather.16.blocked"},
      {"large blocked gather, reversed columns", {300, 437}, {2, -600}, 2, {1, 1}, "gather.2.blocked"},
      {"blocked gather, transposed 1-byte", {301, 397}, {1, 301}, 1, {2, 1}, "gather.1.blocked"},
      {"blocked gather, transposed 8-byte", {97, 211}, {8, 97 * 8}, 8, {3, 1}, "gather.8.blocked"},
      // Serial (under 512 KiB): the outer replicas are written from one gathered tile.
      {"blocked gather, transposed, outer replicas", {40, 37}, {4, 160}, 4, {3, 2}, "gather.4.blocked"},
      {"blocked gather, 8-byte, reversed, outer replicas", {33, 29}, {-8, 33 * 8}, 8, {2, 1, 3}, "gather.8.blocked"},
      streamed({"blocked gather, transposed, outer replicas", {40, 37}, {4, 160}, 4, {3, 2}, "gather.4.blocked"}),
      // Repeats: threaded chunks start inside elements' runs and inside segments.
      repeat_case("large repeat by 3", {50003}, {}, 4, {3}, 0, "repeat.shuffle"),
      repeat_case("large repeat of 3-byte elements by 2", {100003}, {}, 3, {2}, 0, "repeat.elements"),
      repeat_case("large segments", {60001}, {}, 8, counts_0123(60001), std::nullopt, "segments"),
      streamed(repeat_case("large repeat by 8", {40001}, {}, 2, {8}, 0, "repeat.shuffle")),
      streamed(repeat_case("large repeat of 3-byte elements by 2", {100003}, {}, 3, {2}, 0, "repeat.elements")),
      streamed(repeat_case("large segments", {60001}, {}, 8, counts_0123(60001), std::nullopt, "segments")),
      // One-byte counts (each within a 16-byte store) in rows of 256 bytes or more stream through
      // the kernel's own small stage (segments.nt.direct, SegmentsRing), into outputs off their
      // lines; rows of 18 KiB and of 1.8 KiB (720 KiB in all) in threaded chunks that start inside
      // rows and segments, the rows continuing one another in the stage; rows of 6 bytes staged.
      streamed(repeat_case("large segments of 4-byte elements", {60001}, {}, 4, counts_0123(60001), std::nullopt,
                           "segments"),
               true),
      streamed(repeat_case("large segments of 2-byte elements", {90001}, {}, 2, counts_0123(90001), 0, "segments"),
               true),
      streamed(repeat_case("large segments of 1-byte elements", {200003}, {}, 1, counts_0123(200003), 0, "segments"),
               true),
      streamed(repeat_case("segments in rows of 18 KiB", {40, 3001}, {}, 4, counts_0123(3001), 1, "segments"), true),
      streamed(repeat_case("segments in rows of 1.8 KiB", {400, 301}, {}, 4, counts_0123(301), 1, "segments"), true),
      streamed(repeat_case("segments in rows of 6 bytes", {60000, 4}, {}, 1, {1, 2, 0, 3}, 1, "segments")),
      // Rows of short runs: under 256 bytes staged (pattern.shuffle.nt), from 256 bytes
      // (kShuffleDirectRowBytes) streamed from registers, the line two rows share joined; runs of
      // 12 bytes (rows of 120 and 480 bytes, neither whole lines) and of 9 bytes (3-byte elements).
      streamed({"rows of a 12-byte run, 120 bytes each", {300, 3}, {}, 4, {1, 10}, "pattern.shuffle"}),
      streamed({"rows of a 12-byte run, 480 bytes each", {300, 3}, {}, 4, {1, 40}, "pattern.shuffle"}),
      streamed({"rows of a 9-byte run, 360 bytes each", {200, 3}, {}, 3, {1, 40}, "pattern.shuffle"}),
      // Repeats of 4- and 8-byte elements in rows of kDirectStreamBytes or more stream from
      // registers (repeat.shuffle.nt.direct): chunks start inside elements' runs, rows apart in
      // the source share lines in the output.
      streamed(repeat_case("large repeat by 3", {50003}, {}, 4, {3}, 0, "repeat.shuffle"), true),
      streamed(repeat_case("large repeat of 8-byte elements by 5", {20011}, {}, 8, {5}, 0, "repeat.shuffle"), true),
      streamed(repeat_case("rows of 8240 B, their sources 4400 B apart, each element twice", {9, 1030}, {4400, 4}, 4,
                           {2}, 1, "repeat.shuffle"),
               true),
      streamed(repeat_case("rows of 8-byte elements, each 8x", {3, 70}, {8 * 75, 8}, 8, {8}, 1, "repeat.shuffle"), true),
      broadcast_case("large broadcast of a column", {2053, 1}, 4, {2053, 65}, "fill.4"),
      // Fills of rows of one cache line each (fill.N.lines), chunks split across threads inside
      // rows (a line holds the end of one row and the start of the next unless dst is aligned).
      {"large column tiled, rows of one line, 1-byte", {9001, 1}, {}, 1, {1, 64}, "fill.1.lines"},
      {"large column tiled, rows of one line, 2-byte", {9001, 1}, {}, 2, {1, 32}, "fill.2.lines"},
      broadcast_case("large broadcast of a column to one line", {9001, 1}, 4, {9001, 16}, "fill.4.lines"),
      // (8-byte: a strided column, whose 8 copies the repeat kernel's shuffles do not take)
      {"large column tiled, rows of one line, 8-byte", {9001, 1}, {16, 8}, 8, {1, 8}, "fill.8.lines"},
      // Direct fills of rows of whole lines into any destination alignment, chunks split across
      // threads (a line holds the end of one row and the start of the next unless dst is aligned).
      streamed({"large column tiled, rows of two lines", {5003, 1}, {}, 4, {1, 32}, "fill.4"}),
      streamed({"large column tiled, 16-byte rows of two lines", {3001, 1}, {}, 16, {1, 8}, "fill.16"}),
      // Streamed straight from source pieces of at least 4 KiB (copy rows, pattern runs).
      streamed({"large copy, rows of 4 KiB + 3", {150, 4099}, {}, 1, {1, 1}, "copy"}, true),
      streamed({"large long pattern, 4 KiB + 5 run", {4101}, {}, 1, {2, 70}, "pattern.long"}, true),
      streamed({"large shuffled pattern, rows of a 12-byte run x 40", {1700, 3}, {}, 4, {1, 40}, "pattern.shuffle"}),
      streamed({"large gather, transposed", {331, 401}, {5, 331 * 5}, 5, {1, 1}, "gather.any.blocked"}),
      streamed({"large gather, reversed", {320003}, {-2}, 2, {1}, "gather.2"}),
      // Staged streaming splits rows at the end of each stage block.
      streamed({"large copy, rows of 3 KiB + 1 with gaps", {200, 3 * 1024 + 1}, {4000, 1}, 1, {1, 1}, "copy"}),
      streamed({"large short pattern", {7}, {}, 4, {20011}, "pattern.short"}),
      streamed({"large long pattern", {101}, {}, 3, {2111}, "pattern.long"}),
      streamed({"large fill, rows", {7, 1}, {}, 12, {1, 7507}, "fill.any"}),
      streamed({"large fill, rows of 100 bytes", {3001, 1}, {}, 4, {1, 25}, "fill.4"}),
      // Streamed blocked gathers, every element-size variant, with replicated rows.
      streamed({"large blocked gather, transposed 1-byte", {301, 397}, {1, 301}, 1, {2, 1}, "gather.1.blocked"}),
      streamed({"large blocked gather, reversed columns", {300, 437}, {2, -600}, 2, {1, 1}, "gather.2.blocked"}),
      streamed({"large blocked gather, transposed, tiled", {133, 451}, {4, 133 * 4}, 4, {2, 2}, "gather.4.blocked"}),
      streamed({"large blocked gather, transposed 8-byte", {97, 211}, {8, 97 * 8}, 8, {3, 1}, "gather.8.blocked"}),
      streamed({"large blocked gather, transposed 16-byte", {70, 233}, {16, 70 * 16}, 16, {1, 3}, "gather.16.blocked"}),
      // Rows of whole lines longer than a tile block: into a destination off its lines, the line
      // each row shares with the next is assembled from both and streamed (with and without
      // replicas of each row).
      streamed({"large blocked gather, transposed, rows of 640 bytes", {500, 160}, {4, 2000}, 4, {2, 1}, "gather.4.blocked"}),
      streamed({"large blocked gather, transposed, tiled, rows of 384 bytes", {260, 96}, {4, 1040}, 4, {2, 2}, "gather.4.blocked"}),
      // Streamed blocked gathers whose rows fit one tile block: a group's rows go out as one run,
      // whole vectors at aligned addresses joined across the rows' ends.
      streamed({"blocked gather, transposed, rows of 200 bytes", {300, 50}, {4, 1200}, 4, {3, 1}, "gather.4.blocked"}),
      streamed({"large blocked gather, transposed, rows of 200 bytes", {700, 50}, {4, 2800}, 4, {4, 1}, "gather.4.blocked"}),
      streamed({"large blocked gather, transposed, rows of 64 bytes", {4000, 16}, {4, 16000}, 4, {3, 1}, "gather.4.blocked"}),
      streamed({"blocked gather, transposed, rows of 52 bytes", {600, 13}, {4, 2400}, 4, {1, 1}, "gather.4.blocked"}),
      streamed({"blocked gather, transposed 8-byte, rows of 248 bytes", {400, 31}, {8, 3200}, 8, {2, 1}, "gather.8.blocked"}),
      streamed({"blocked gather, transposed 1-byte, rows of 200 bytes", {900, 200}, {1, 900}, 1, {1, 1}, "gather.1.blocked"}),
      streamed([] {  // bc_transposed's pattern: each gathered row of 256 bytes written 9 times
        Case c{"large blocked broadcast of transposed rows", {256, 1, 64}, {4, 4, 1024}, 4, {256, 9, 64}, "gather.4.blocked"};
        c.op = Op::broadcast_to;
        return c;
      }()),
  };
}


// Every misalignment 0..63 for the fixed-size itemsizes and short outputs; a spread of 16 for the
// rest (still every residue class mod 4, and 0, 1, 31, 32, 33, 63).
const std::vector<std::size_t>& all_gaps() {
  static const std::vector<std::size_t> gaps = [] {
    std::vector<std::size_t> g(64);
    for (std::size_t i = 0; i < 64; ++i) g[i] = i;
    return g;
  }();
  return gaps;
}
const std::vector<std::size_t>& sampled_gaps() {
  static const std::vector<std::size_t> gaps = {0, 1, 2, 3, 7, 13, 15, 16, 17, 30, 31, 32, 33, 47, 62, 63};
  return gaps;
}

// A canary image for each area of a GuardPage: bytes around a buffer are reset from it before a
// call and must still equal it afterwards.
struct Canary {
  explicit Canary(const GuardPage& page) : low(page.capacity()), high(page.capacity()) {
    test::fill_pattern(low.data(), low.size(), 0xC0FFEE);
    test::fill_pattern(high.data(), high.size(), 0xBEEF);
  }
  std::vector<unsigned char> low, high;
};

// Runs one case with its source and destination at every gap in `gaps`, on both sides of the
// guard page, checking bytes, canaries and the untouched source. Returns "" or the first failure.
class Runner {
 public:
  Runner(const GuardPage& src_mem, const GuardPage& dst_mem)
      : src_mem_(src_mem), dst_mem_(dst_mem), canary_(dst_mem) {}

  int executions = 0;

  // `made`: a plan of the case made before (for another target, say) to execute in place of one
  // planned here for `target`; its path is then not checked against `target`'s.
  std::string run(const Case& c, const std::vector<std::size_t>& gaps, uint64_t seed, const std::string& target,
                  const tessera::Plan* made = nullptr) {
    tessera::Options options;
    options.nontemporal = c.nontemporal;
    const tessera::Plan plan = made != nullptr ? *made : plan_of(c, options);
    const std::string path = path_on(c, target);
    if (made == nullptr && plan.kernel_path() != path)
      return describe(c) + ": plan took path " + plan.kernel_path() + ", expected " + path + "\n" + plan.describe();

    const auto [low, high] = input_span(c);
    const std::size_t span = static_cast<std::size_t>(high - low);
    std::vector<unsigned char> image(span);
    test::fill_pattern(image.data(), image.size(), seed);
    Shape repeat_shape;
    const std::vector<unsigned char> expected =
        c.op == Op::tile ? ref::tile(image.data() - low, c.shape, c.strides, c.itemsize, c.reps)
        : c.op == Op::broadcast_to
            ? ref::broadcast_to(image.data() - low, c.shape, c.strides, c.itemsize, c.reps)
            : ref::repeat(image.data() - low, c.shape, c.strides, c.itemsize, c.reps,
                          c.axis ? (*c.axis < 0 ? *c.axis + static_cast<int>(c.shape.size()) : *c.axis) : -1,
                          &repeat_shape);
    if (plan.nbytes() != expected.size()) return describe(c) + ": nbytes " + std::to_string(plan.nbytes());
    const std::size_t nbytes = expected.size();
    std::vector<unsigned char> complement(nbytes);
    for (std::size_t i = 0; i < nbytes; ++i) complement[i] = static_cast<unsigned char>(~expected[i]);

    const std::size_t g = gaps.size();
    for (GuardSide side : {GuardSide::end, GuardSide::start}) {
      for (std::size_t i = 0; i < g; ++i) {
        // Every gap for the source and (in another order) every gap for the destination.
        const std::size_t src_gap = gaps[i], dst_gap = gaps[(i * 37 + 11) % g];
        unsigned char* src = src_mem_.place(side, span, src_gap);
        if (span) std::memcpy(src, image.data(), span);
        const unsigned char* origin = src - low;

        unsigned char* dst = dst_mem_.place(side, nbytes, dst_gap);
        // Canary window: 64 bytes before the buffer to the guard (side end), or from the guard to
        // 64 bytes after the buffer (side start).
        unsigned char* area = dst_mem_.area(side);
        const std::vector<unsigned char>& image_bytes = side == GuardSide::end ? canary_.low : canary_.high;
        unsigned char* w_begin = side == GuardSide::end ? dst - std::min<std::size_t>(64, dst - area) : area;
        unsigned char* w_end = side == GuardSide::end
                                   ? area + dst_mem_.capacity()
                                   : std::min(dst + nbytes + 64, area + dst_mem_.capacity());
        std::memcpy(w_begin, image_bytes.data() + (w_begin - area), static_cast<std::size_t>(w_end - w_begin));
        if (nbytes) std::memcpy(dst, complement.data(), nbytes);

        // Mostly the plan; every eighth call the one-shot C API with the case's options (plans
        // again, the same path).
        if (i % 8 == 0) {
          tessera_options copt;
          tessera_options_init(&copt);
          copt.nontemporal = static_cast<int>(c.nontemporal);
          const int nd = static_cast<int>(c.shape.size());
          const int64_t* strides = c.strides.empty() ? nullptr : c.strides.data();
          const tessera_status s =
              c.op == Op::tile ? tessera_tile_ex(origin, nd, c.shape.data(), strides, c.itemsize,
                                                 static_cast<int>(c.reps.size()), c.reps.data(), dst, nbytes, &copt)
              : c.op == Op::broadcast_to
                  ? tessera_broadcast_to_ex(origin, nd, c.shape.data(), strides, c.itemsize,
                                            static_cast<int>(c.reps.size()), c.reps.data(), dst, nbytes, &copt)
                  : tessera_repeat_ex(origin, nd, c.shape.data(), strides, c.itemsize,
                                      static_cast<int64_t>(c.reps.size()), c.reps.data(),
                                      c.axis ? *c.axis : TESSERA_AXIS_NONE, dst, nbytes, &copt);
          if (s != TESSERA_OK) return where(c, side, src_gap, dst_gap) + "one-shot C call failed: " + tessera_last_error();
        } else {
          plan.execute(origin, dst, nbytes);
        }
        ++executions;

        if (nbytes && std::memcmp(dst, expected.data(), nbytes) != 0) {
          std::size_t first = 0;
          while (dst[first] == expected[first]) ++first;
          return where(c, side, src_gap, dst_gap) + "output byte " + std::to_string(first) + " of " +
                 std::to_string(nbytes) + " differs from the reference\n" + plan.describe();
        }
        const unsigned char* canary = image_bytes.data() + (w_begin - area);  // the canary of w_begin
        if (std::memcmp(w_begin, canary, static_cast<std::size_t>(dst - w_begin)) != 0 ||
            std::memcmp(dst + nbytes, canary + (dst + nbytes - w_begin), static_cast<std::size_t>(w_end - dst - nbytes)) != 0) {
          for (unsigned char* p = w_begin; p < w_end; ++p) {
            if (p >= dst && p < dst + nbytes) continue;
            if (*p != canary[p - w_begin])
              return where(c, side, src_gap, dst_gap) + "wrote outside the destination: " +
                     (p < dst ? std::to_string(dst - p) + " bytes before its start"
                              : std::to_string(p - (dst + nbytes)) + " bytes past its end") +
                     "\n" + plan.describe();
          }
        }
        if (span && std::memcmp(src, image.data(), span) != 0)
          return where(c, side, src_gap, dst_gap) + "the source was modified";
      }
    }
    return "";
  }

 private:
  static std::string where(const Case& c, GuardSide side, std::size_t src_gap, std::size_t dst_gap) {
    return describe(c) + ", buffers' " + (side == GuardSide::end ? "ends" : "starts") + " at the guard page, src gap " +
           std::to_string(src_gap) + ", dst gap " + std::to_string(dst_gap) + ": ";
  }

  const GuardPage& src_mem_;
  const GuardPage& dst_mem_;
  Canary canary_;
};

// ---- The reductions (the gradients) ----------------------------------------------------------
//
// tile_backward, sum_to_shape and repeat_backward with the gradient (the input) and the result
// each placed against a guard page — the gradient's last byte right before it, or (second pass)
// its first byte right after it, which with negative strides is the element walked last — for
// every reduction path (lib/reduce.hpp: zeros, lanes, strided, interleaved, periodic, segments),
// every dtype whose exact sums the case allows, small gradients (serial) and gradients of 0.5 MiB
// and more (threaded: over the output and over the replicas). Values are small integers (ints:
// any bits, wrapping), so the sums are exact and the reference below, in 64-bit integer units, is
// compared bit for bit, overwriting and accumulating (out = init + sum).

enum class ROp { tile_backward, sum_to_shape, repeat_backward };

struct ReduceCase {
  std::string family;
  ROp op = ROp::tile_backward;
  Shape grad;   // the gradient's shape
  Shape steps;  // its strides in elements (empty: C-contiguous); bytes = steps * itemsize
  Shape arg;    // tile_backward, repeat_backward: the input's shape; sum_to_shape: the target
  Shape reps;   // tile_backward: reps; repeat_backward: the counts
  std::optional<int> axis;
  std::string path;  // the plan's kernel_path()
  // The paths the kernels count for the case's calls (lib/kernels/path_counters.hpp), when they
  // are not {path}: a segments plan runs (and counts) one sub-problem per source index, each
  // planned as lanes, strided, interleaved or periodic; a zeros plan writes its zeros in the
  // executor, no kernel runs.
  std::set<std::string> executed;
  tessera::DType dtype = tessera::DType::float32;
  bool for_complex = false;  // a geometry for the complex dtypes (whose parts add as an innermost
                             // contiguous kept axis of 2: never strided nor interleaved), or the others
};

const std::vector<tessera::DType>& reduce_dtypes() {
  using tessera::DType;
  static const std::vector<DType> d = {DType::float32, DType::float64,    DType::float16, DType::bfloat16,
                                       DType::complex64, DType::complex128, DType::int8,    DType::int16,
                                       DType::int32,   DType::int64,      DType::uint8,   DType::uint16,
                                       DType::uint32,  DType::uint64};
  return d;
}

bool is_complex(tessera::DType d) { return d == tessera::DType::complex64 || d == tessera::DType::complex128; }
bool is_integer(tessera::DType d) { return static_cast<int>(d) >= static_cast<int>(tessera::DType::int8); }

Shape byte_strides(const ReduceCase& c) {
  const int64_t is = static_cast<int64_t>(tessera::itemsize_of(c.dtype));
  Shape s = c.steps.empty() ? ref::contiguous_strides(c.grad, 1) : c.steps;
  for (int64_t& v : s) v *= is;
  return s;
}

// The most addends of one output element.
int64_t addends(const ReduceCase& c) {
  const int64_t out = ref::count(c.arg), in = ref::count(c.grad);
  if (c.op != ROp::repeat_backward) return out == 0 ? 0 : in / out;
  return *std::max_element(c.reps.begin(), c.reps.end());
}

// The largest |value| (units) of the data: float16 and bfloat16 results (the sum of `n` values
// onto an initial value) exact in `d` (integers up to 2048 and 256: encode writes them exactly);
// float32 and complex64 values any float32 integer up to 2^24 whose sums are exact in float64
// (their accumulator), so that a result is the exact sum rounded once (encode rounds it) while a
// float32 running sum rounds: a float32 accumulator fails here (test_reduce_bits.cpp tests the
// accumulation width of every dtype); float64 up to 1000. 0 when not even +-1 values would do.
// Integers take any bits.
int64_t value_bound(tessera::DType d, int64_t n) {
  using tessera::DType;
  int64_t limit = int64_t{1} << 52, most = 1000;
  if (d == DType::float16) limit = 2048;
  if (d == DType::bfloat16) limit = 256;
  if (d == DType::float32 || d == DType::complex64) limit = int64_t{1} << 52, most = int64_t{1} << 24;
  return std::min<int64_t>(most, limit / (n + 1));
}

// IEEE binary16 of an integer |v| <= 2048 (exact).
uint16_t half_of(int64_t v) {
  if (v == 0) return 0;
  const uint64_t a = static_cast<uint64_t>(v < 0 ? -v : v);
  int e = 0;
  while ((a >> (e + 1)) != 0) ++e;
  const uint64_t mant = e <= 10 ? a << (10 - e) : a >> (e - 10);
  return static_cast<uint16_t>((v < 0 ? 0x8000 : 0) | ((e + 15) << 10) | (mant & 0x3FF));
}

// Element (re, im) in units as `d`'s bytes at p (im ignored unless complex; ints: the low bits).
void encode(tessera::DType d, int64_t re, int64_t im, unsigned char* p) {
  using tessera::DType;
  switch (d) {
    case DType::float32: { const float v = static_cast<float>(re); std::memcpy(p, &v, 4); return; }
    case DType::float64: { const double v = static_cast<double>(re); std::memcpy(p, &v, 8); return; }
    case DType::complex64: {
      const float v[2] = {static_cast<float>(re), static_cast<float>(im)};
      std::memcpy(p, v, 8);
      return;
    }
    case DType::complex128: {
      const double v[2] = {static_cast<double>(re), static_cast<double>(im)};
      std::memcpy(p, v, 16);
      return;
    }
    case DType::float16: { const uint16_t h = half_of(re); std::memcpy(p, &h, 2); return; }
    case DType::bfloat16: {
      const float f = static_cast<float>(re);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      const uint16_t h = static_cast<uint16_t>(b >> 16);  // exact: |re| <= 256
      std::memcpy(p, &h, 2);
      return;
    }
    default: { const uint64_t u = static_cast<uint64_t>(re); std::memcpy(p, &u, tessera::itemsize_of(d)); return; }
  }
}

// For each element of the gradient (C order), the flat index of the output element it adds to.
std::vector<int64_t> destinations(const ReduceCase& c) {
  const Shape& g = c.grad;
  const Shape& out = c.arg;
  const int D = static_cast<int>(g.size());
  std::vector<int64_t> dest;
  dest.reserve(static_cast<std::size_t>(ref::count(g)));
  if (ref::count(g) == 0) return dest;
  Shape prefix = {0};  // repeat_backward: the counts' prefix sums along the axis (or flattened)
  int axis = -1;
  if (c.op == ROp::repeat_backward) {
    const bool flat = !c.axis || out.empty();
    axis = flat ? -1 : (*c.axis < 0 ? *c.axis + static_cast<int>(out.size()) : *c.axis);
    const int64_t n = flat ? ref::count(out) : out[static_cast<std::size_t>(axis)];
    for (int64_t k = 0; k < n; ++k)
      prefix.push_back(prefix.back() + (c.reps.size() == 1 ? c.reps[0] : c.reps[static_cast<std::size_t>(k)]));
  }
  const auto source_of = [&](int64_t j) {  // the source index of position j along the repeat axis
    return static_cast<int64_t>(std::upper_bound(prefix.begin(), prefix.end(), j) - prefix.begin()) - 1;
  };
  const Shape ostr = ref::contiguous_strides(out, 1);
  Shape idx(g.size(), 0);
  for (int64_t e = 0; e < ref::count(g); ++e) {
    int64_t o = 0;
    if (c.op == ROp::tile_backward) {
      const int n = static_cast<int>(out.size());
      for (int i = D - n; i < D; ++i) o += idx[i] % out[i - (D - n)] * ostr[i - (D - n)];
    } else if (c.op == ROp::sum_to_shape) {
      const int k = static_cast<int>(out.size());
      for (int j = 0; j < k; ++j) o += (out[j] == 1 ? 0 : idx[j + D - k]) * ostr[j];
    } else if (axis < 0) {
      o = source_of(e);
    } else {
      for (int i = 0; i < D; ++i) o += (i == axis ? source_of(idx[i]) : idx[i]) * ostr[i];
    }
    dest.push_back(o);
    for (int i = D - 1; i >= 0; --i) {
      if (++idx[i] < g[i]) break;
      idx[i] = 0;
    }
  }
  return dest;
}

tessera::Plan reduce_plan(const ReduceCase& c, const Shape& strides, bool accumulate) {
  tessera::Options o;
  o.accumulate = accumulate;
  switch (c.op) {
    case ROp::tile_backward: return tessera::Plan::tile_backward(c.grad, strides, c.dtype, c.arg, c.reps, o);
    case ROp::sum_to_shape: return tessera::Plan::sum_to_shape(c.grad, strides, c.dtype, c.arg, o);
    case ROp::repeat_backward: break;
  }
  return tessera::Plan::repeat_backward(c.grad, strides, c.dtype, c.arg, c.reps, c.axis, o);
}

tessera_status reduce_c(const ReduceCase& c, const void* origin, const Shape& strides, void* dst, std::size_t bytes,
                        bool accumulate) {
  tessera_options o;
  tessera_options_init(&o);
  o.accumulate = accumulate ? 1 : 0;
  const int nd = static_cast<int>(c.grad.size()), dt = static_cast<int>(c.dtype);
  const int na = static_cast<int>(c.arg.size());
  switch (c.op) {
    case ROp::tile_backward:
      return tessera_tile_backward_ex(origin, nd, c.grad.data(), strides.data(), dt, na, c.arg.data(),
                                      static_cast<int>(c.reps.size()), c.reps.data(), dst, bytes, &o);
    case ROp::sum_to_shape:
      return tessera_sum_to_shape_ex(origin, nd, c.grad.data(), strides.data(), dt, na, c.arg.data(), dst, bytes, &o);
    case ROp::repeat_backward: break;
  }
  return tessera_repeat_backward_ex(origin, nd, c.grad.data(), strides.data(), dt, na, c.arg.data(),
                                    static_cast<int64_t>(c.reps.size()), c.reps.data(),
                                    c.axis ? *c.axis : TESSERA_AXIS_NONE, dst, bytes, &o);
}

std::string describe(const ReduceCase& c) {
  std::string op;
  switch (c.op) {
    case ROp::tile_backward:
      op = "tile_backward to " + test::to_string(c.arg) + " reps " + test::to_string(c.reps);
      break;
    case ROp::sum_to_shape:
      op = "sum_to_shape to " + test::to_string(c.arg);
      break;
    case ROp::repeat_backward:
      op = "repeat_backward to " + test::to_string(c.arg) + " counts " +
           (c.reps.size() > 8 ? std::to_string(c.reps.size()) + " values" : test::to_string(c.reps)) + " axis " +
           (c.axis ? std::to_string(*c.axis) : std::string("None"));
      break;
  }
  return c.family + " [" + tessera::dtype_name(c.dtype) + "]: gradient " + test::to_string(c.grad) + " strides " +
         (c.steps.empty() ? std::string("C-contiguous") : test::to_string(byte_strides(c)) + " B") + ", " + op;
}

// The geometries, each then instantiated for every dtype its sums allow (small gradients, serial)
// or given one (large ones). Strides in elements.
std::vector<ReduceCase> reduce_geometries_small() {
  std::vector<ReduceCase> v;
  bool for_complex = false;
  const auto add = [&](std::string family, ROp op, Shape grad, Shape steps, Shape arg, Shape reps,
                       std::optional<int> axis, std::string path,
                       std::optional<std::set<std::string>> executed = std::nullopt) {
    const std::set<std::string> ran = executed.value_or(std::set<std::string>{path});
    v.push_back({std::move(family), op, std::move(grad), std::move(steps), std::move(arg), std::move(reps), axis,
                 std::move(path), ran, tessera::DType::float32, for_complex});
  };
  const ROp T = ROp::tile_backward, S = ROp::sum_to_shape, R = ROp::repeat_backward;
  const std::set<std::string> nothing;
  for (const bool cplx : {false, true}) {
    for_complex = cplx;
    // zeros: a reduced extent of 0 (an empty gradient; the result is 0, or untouched when
    // accumulating). none: an empty result.
    add("zeros: reps 0", T, {0, 8}, {}, {3, 4}, {0, 2}, std::nullopt, "reduce.zeros", nothing);
    add("zeros: repeat by 0", R, {3, 0}, {}, {3, 4}, {0}, 1, "reduce.zeros", nothing);
    add("zeros: sum of no rows", S, {0, 5}, {}, {1, 5}, {}, std::nullopt, "reduce.zeros", nothing);
    add("none: empty result", T, {6, 0}, {}, {3, 0}, {2, 2}, std::nullopt, "reduce.none", nothing);
  }
  // The real dtypes.
  for_complex = false;
  // lanes: rows of w contiguous elements summed (tails around every vector width).
  for (int64_t w : {2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65}) {
    add("lanes: rows to one row", S, {3, w}, {}, {1, w}, {}, std::nullopt, "reduce.lanes");
    add("lanes: reversed rows to one row", S, {9, w}, {-w, 1}, {1, w}, {}, std::nullopt, "reduce.lanes");
  }
  add("lanes: tile 2x2", T, {6, 70}, {}, {3, 35}, {2, 2}, std::nullopt, "reduce.lanes");
  add("lanes: tile 2x2, reversed rows", T, {6, 70}, {-70, 1}, {3, 35}, {2, 2}, std::nullopt, "reduce.lanes");
  add("lanes: repeat rows by 3", R, {12, 10}, {}, {4, 10}, {3}, 0, "reduce.lanes");
  // strided: the kept axis is not contiguous (gathers), or only reduced axes.
  for (int64_t w : {2, 5, 8, 17}) {
    add("strided: transposed rows to one row", S, {9, w}, {1, 9}, {1, w}, {}, std::nullopt, "reduce.strided");
    add("strided: transposed rows to a column", S, {w, 9}, {1, w}, {w, 1}, {}, std::nullopt, "reduce.strided");
    add("strided: reversed transposed rows", S, {9, w}, {-1, -9}, {1, w}, {}, std::nullopt, "reduce.strided");
  }
  add("strided: broadcast columns (stride 0)", T, {6, 4}, {1, 0}, {3, 2}, {2, 2}, std::nullopt, "reduce.strided");
  add("strided: a short run to a scalar", S, {5}, {}, {}, {}, std::nullopt, "reduce.strided");
  add("strided: a reversed short run", S, {7}, {-1}, {}, {}, std::nullopt, "reduce.strided");
  // interleaved: repeat-by-2..4 gradients.
  for (int64_t r : {2, 3, 4}) {
    for (int64_t n : {3, 8, 17, 40}) add("interleaved: repeat", R, {n * r}, {}, {n}, {r}, 0, "reduce.interleaved");
  }
  add("interleaved: repeat by 2, reversed rows", R, {5, 40}, {-40, 1}, {5, 20}, {2}, 1, "reduce.interleaved");
  add("interleaved: repeat by 3 along the last axis", R, {4, 18}, {}, {4, 6}, {3}, -1, "reduce.interleaved");
  // periodic: contiguous reduced runs of 64 and more, and narrow rows folded.
  for (int64_t run : {64, 67, 100, 129, 300}) {
    add("periodic: rows to a column", S, {3, run}, {}, {3, 1}, {}, std::nullopt, "reduce.periodic");
  }
  add("periodic: reversed rows to a column", S, {3, 100}, {-100, 1}, {3, 1}, {}, std::nullopt, "reduce.periodic");
  add("periodic: all to a scalar", S, {200}, {}, {}, {}, std::nullopt, "reduce.periodic");
  for (int64_t w : {2, 3, 5, 8, 15}) {
    const int64_t r = 64 / w + 1;
    add("periodic: narrow rows folded", T, {5, w * r}, {}, {5, w}, {1, r}, std::nullopt, "reduce.periodic");
    add("periodic: narrow rows folded, reversed rows", T, {5, w * r}, {-(w * r), 1}, {5, w}, {1, r}, std::nullopt,
        "reduce.periodic");
  }
  // segments: per-element counts, each source index a sub-problem.
  add("segments: counts", R, {81}, {}, {6}, {0, 2, 1, 3, 70, 5}, 0, "reduce.segments",
      std::set<std::string>{"reduce.strided", "reduce.periodic"});
  add("segments: reversed, flattened", R, {81}, {-1}, {6}, {0, 2, 1, 3, 70, 5}, std::nullopt, "reduce.segments",
      std::set<std::string>{"reduce.strided"});
  add("segments: rows", R, {6, 6}, {}, {4, 6}, {0, 1, 2, 3}, 0, "reduce.segments",
      std::set<std::string>{"reduce.lanes"});
  add("segments: columns", R, {5, 6}, {}, {5, 4}, {1, 2, 0, 3}, 1, "reduce.segments",
      std::set<std::string>{"reduce.strided"});
  add("segments: reversed rows", R, {6, 6}, {-6, -1}, {4, 6}, {0, 1, 2, 3}, 0, "reduce.segments",
      std::set<std::string>{"reduce.strided"});
  // The complex dtypes: the real and imaginary parts are an innermost kept axis (2, contiguous),
  // so their plans are lanes (the parts, or rows of them), or periodic with the parts folded.
  for_complex = true;
  for (int64_t w : {1, 2, 3, 8, 9, 17}) {
    add("lanes: rows to one row", S, {3, w}, {}, {1, w}, {}, std::nullopt, "reduce.lanes");
    add("lanes: transposed rows to one row", S, {9, w}, {1, 9}, {1, w}, {}, std::nullopt, "reduce.lanes");
    add("lanes: reversed transposed rows", S, {9, w}, {-1, -9}, {1, w}, {}, std::nullopt, "reduce.lanes");
  }
  add("lanes: repeat by 2", R, {34}, {}, {17}, {2}, 0, "reduce.lanes");
  add("lanes: a short run to a scalar", S, {7}, {-1}, {}, {}, std::nullopt, "reduce.lanes");
  for (int64_t run : {32, 33, 100}) {
    add("periodic: rows to a column, the parts folded", S, {3, run}, {}, {3, 1}, {}, std::nullopt, "reduce.periodic");
  }
  add("periodic: reversed rows to a column", S, {3, 100}, {-100, 1}, {3, 1}, {}, std::nullopt, "reduce.periodic");
  add("periodic: all to a scalar", S, {200}, {}, {}, {}, std::nullopt, "reduce.periodic");
  add("segments: counts", R, {81}, {}, {6}, {0, 2, 1, 3, 70, 5}, 0, "reduce.segments",
      std::set<std::string>{"reduce.lanes", "reduce.periodic"});
  add("segments: reversed rows", R, {6, 6}, {-6, -1}, {4, 6}, {0, 1, 2, 3}, 0, "reduce.segments",
      std::set<std::string>{"reduce.lanes"});
  return v;
}

// Gradients of 0.5 MiB and more: threaded, over the output or over the replicas.
std::vector<ReduceCase> reduce_cases_large() {
  using tessera::DType;
  std::vector<ReduceCase> v;
  const auto add = [&](std::string family, DType d, ROp op, Shape grad, Shape steps, Shape arg, Shape reps,
                       std::optional<int> axis, std::string path,
                       std::optional<std::set<std::string>> executed = std::nullopt) {
    const std::set<std::string> ran = executed.value_or(std::set<std::string>{path});
    v.push_back({std::move(family), op, std::move(grad), std::move(steps), std::move(arg), std::move(reps), axis,
                 std::move(path), ran, d, is_complex(d)});
  };
  const ROp T = ROp::tile_backward, S = ROp::sum_to_shape, R = ROp::repeat_backward;
  add("large zeros", DType::float64, T, {0, 70001}, {}, {1, 70001}, {0, 1}, std::nullopt, "reduce.zeros",
      std::set<std::string>{});
  add("large lanes over the replicas", DType::float32, S, {1024, 160}, {}, {1, 160}, {}, std::nullopt, "reduce.lanes");
  add("large lanes over the replicas, reversed", DType::int16, S, {1031, 257}, {-257, 1}, {1, 257}, {}, std::nullopt,
      "reduce.lanes");
  add("large lanes over the output", DType::int32, S, {2, 300, 401}, {}, {1, 300, 401}, {}, std::nullopt,
      "reduce.lanes");
  add("large strided", DType::float32, S, {160, 1024}, {1, 160}, {160, 1}, {}, std::nullopt, "reduce.strided");
  add("large strided, reversed", DType::float32, S, {1024, 160}, {-1, -1024}, {1, 160}, {}, std::nullopt,
      "reduce.strided");
  add("large interleaved", DType::float32, R, {160002}, {}, {80001}, {2}, 0, "reduce.interleaved");
  add("large interleaved, reversed rows", DType::uint8, R, {1500, 400}, {-400, 1}, {1500, 100}, {4}, 1,
      "reduce.interleaved");
  add("large periodic over the replicas", DType::float32, S, {200003}, {}, {}, {}, std::nullopt, "reduce.periodic");
  add("large periodic over the output", DType::float64, S, {512, 301}, {}, {512, 1}, {}, std::nullopt,
      "reduce.periodic");
  add("large periodic, the parts folded", DType::complex128, S, {16, 4096}, {}, {16, 1}, {}, std::nullopt,
      "reduce.periodic");
  add("large periodic, narrow rows folded, reversed", DType::float32, T, {1000, 150}, {-150, 1}, {1000, 3}, {1, 50},
      std::nullopt, "reduce.periodic");
  const auto total = [](const Shape& counts) { return std::accumulate(counts.begin(), counts.end(), int64_t{0}); };
  add("large segments", DType::float32, R, {total(counts_0123(133334))}, {}, {133334}, counts_0123(133334),
      std::nullopt, "reduce.segments", std::set<std::string>{"reduce.strided"});
  add("large segments, reversed", DType::int64, R, {total(counts_0123(66667))}, {-1}, {66667}, counts_0123(66667), 0,
      "reduce.segments",
      std::set<std::string>{"reduce.strided"});
  return v;
}

// The [low, high) bytes a case's gradient addresses, relative to element (0, ..., 0).
std::pair<int64_t, int64_t> grad_span(const ReduceCase& c) {
  if (ref::count(c.grad) == 0) return {0, 0};
  const Shape st = byte_strides(c);
  int64_t low = 0, high = static_cast<int64_t>(tessera::itemsize_of(c.dtype));
  for (std::size_t k = 0; k < c.grad.size(); ++k) {
    const int64_t reach = (c.grad[k] - 1) * st[k];
    (reach < 0 ? low : high) += reach;
  }
  return {low, high};
}

// One case, prepared: the gradient's bytes, and the results expected overwriting and accumulating.
struct ReduceRun {
  ReduceCase c;
  Shape strides;
  int64_t low = 0;
  std::vector<unsigned char> image;  // the gradient's span [low, high)
  std::vector<unsigned char> init;   // the output's initial values when accumulating
  std::vector<unsigned char> sum, accumulated;
  const std::vector<std::size_t>* gaps = nullptr;
};

ReduceRun prepare(const ReduceCase& c, uint64_t seed, const std::vector<std::size_t>* gaps) {
  ReduceRun r;
  r.c = c;
  r.gaps = gaps;
  r.strides = byte_strides(c);
  const auto [low, high] = grad_span(c);
  r.low = low;
  const std::size_t is = tessera::itemsize_of(c.dtype);
  const int parts = is_complex(c.dtype) ? 2 : 1;
  const int64_t bound = value_bound(c.dtype, addends(c));
  test::Rng rng(seed);
  const auto value = [&] {
    if (!is_integer(c.dtype)) return rng.uniform(-bound, bound);
    const uint64_t hi = static_cast<uint64_t>(rng.uniform(0, 0xFFFFFFFF));
    const uint64_t lo = static_cast<uint64_t>(rng.uniform(0, 0xFFFFFFFF));
    return static_cast<int64_t>(hi << 32 | lo);  // any bits: the sums wrap
  };
  // Every element slot of the span (the strides are whole elements): its units, its bytes.
  const std::size_t slots = static_cast<std::size_t>(high - low) / is;
  std::vector<int64_t> units(slots * parts);
  for (int64_t& u : units) u = value();
  r.image.resize(slots * is);
  for (std::size_t k = 0; k < slots; ++k)
    encode(c.dtype, units[k * parts], parts == 2 ? units[k * parts + 1] : 0, &r.image[k * is]);
  // The sums in units (uint64: integers wrap; the float values are exact).
  const int64_t nout = ref::count(c.arg);
  std::vector<uint64_t> sums(static_cast<std::size_t>(nout) * parts, 0), start(sums.size());
  const std::vector<int64_t> dest = destinations(c);
  Shape idx(c.grad.size(), 0);
  for (std::size_t e = 0; e < dest.size(); ++e) {
    int64_t off = -low;
    for (std::size_t i = 0; i < idx.size(); ++i) off += idx[i] * r.strides[i];
    const std::size_t slot = static_cast<std::size_t>(off) / is;
    for (int p = 0; p < parts; ++p)
      sums[static_cast<std::size_t>(dest[e]) * parts + p] += static_cast<uint64_t>(units[slot * parts + p]);
    for (int i = static_cast<int>(idx.size()) - 1; i >= 0; --i) {
      if (++idx[i] < c.grad[i]) break;
      idx[i] = 0;
    }
  }
  for (uint64_t& s : start) s = static_cast<uint64_t>(value());
  const std::size_t nbytes = static_cast<std::size_t>(nout) * is;
  r.sum.resize(nbytes);
  r.init.resize(nbytes);
  r.accumulated.resize(nbytes);
  for (int64_t o = 0; o < nout; ++o) {
    const std::size_t a = static_cast<std::size_t>(o) * parts, b = a + parts - 1;
    unsigned char* at = &r.sum[static_cast<std::size_t>(o) * is];
    encode(c.dtype, static_cast<int64_t>(sums[a]), static_cast<int64_t>(sums[b]), at);
    encode(c.dtype, static_cast<int64_t>(start[a]), static_cast<int64_t>(start[b]),
           &r.init[static_cast<std::size_t>(o) * is]);
    encode(c.dtype, static_cast<int64_t>(start[a] + sums[a]), static_cast<int64_t>(start[b] + sums[b]),
           &r.accumulated[static_cast<std::size_t>(o) * is]);
  }
  return r;
}

// Runs a prepared case on the forced target with the gradient and the result at every gap of its
// list on both sides of the guard pages, overwriting and accumulating (the plan; every fourth
// call the one-shot C call). Returns "" or the first failure.
class ReduceRunner {
 public:
  ReduceRunner(const GuardPage& src_mem, const GuardPage& dst_mem)
      : src_mem_(src_mem), dst_mem_(dst_mem), canary_(dst_mem) {}

  int executions = 0;

  std::string run(const ReduceRun& r) {
    const ReduceCase& c = r.c;
    const tessera::Plan plan = reduce_plan(c, r.strides, false);
    const tessera::Plan plan_acc = reduce_plan(c, r.strides, true);
    if (reduce_path_of(plan.kernel_path()) != c.path || reduce_path_of(plan_acc.kernel_path()) != c.path)
      return describe(c) + ": plan took path " + plan.kernel_path() + ", expected " + c.path + "\n" + plan.describe();
    if (plan.nbytes() != r.sum.size()) return describe(c) + ": nbytes " + std::to_string(plan.nbytes());
    const std::size_t span = r.image.size(), nbytes = r.sum.size();
    const std::vector<std::size_t>& gaps = *r.gaps;
    const std::size_t g = gaps.size();
    for (GuardSide side : {GuardSide::end, GuardSide::start}) {
      for (std::size_t i = 0; i < 2 * g; ++i) {
        const bool accumulate = i % 2 == 1;
        // Every gap for the gradient, twice; the result's in another order (the first call has
        // both against the guard page).
        const std::size_t src_gap = gaps[i / 2], dst_gap = gaps[(i / 2 * 37 + i % 2 * 11) % g];
        unsigned char* src = src_mem_.place(side, span, src_gap);
        if (span) std::memcpy(src, r.image.data(), span);
        const unsigned char* origin = src - r.low;
        unsigned char* dst = dst_mem_.place(side, nbytes, dst_gap);
        unsigned char* area = dst_mem_.area(side);
        const std::vector<unsigned char>& image_bytes = side == GuardSide::end ? canary_.low : canary_.high;
        unsigned char* w_begin = dst - std::min<std::size_t>(64, static_cast<std::size_t>(dst - area));
        unsigned char* w_end = std::min(dst + nbytes + 64, area + dst_mem_.capacity());
        std::memcpy(w_begin, image_bytes.data() + (w_begin - area), static_cast<std::size_t>(w_end - w_begin));
        const std::vector<unsigned char>& expected = accumulate ? r.accumulated : r.sum;
        if (nbytes) {
          if (accumulate) {
            std::memcpy(dst, r.init.data(), nbytes);
          } else {
            for (std::size_t k = 0; k < nbytes; ++k) dst[k] = static_cast<unsigned char>(~expected[k]);
          }
        }
        if (i % 4 == 0 || i % 4 == 3) {
          const tessera_status s = reduce_c(c, origin, r.strides, dst, nbytes, accumulate);
          if (s != TESSERA_OK)
            return where(c, side, src_gap, dst_gap, accumulate) + "one-shot C call failed: " + tessera_last_error();
        } else {
          (accumulate ? plan_acc : plan).execute(origin, dst, nbytes);
        }
        ++executions;
        if (nbytes && std::memcmp(dst, expected.data(), nbytes) != 0) {
          std::size_t first = 0;
          while (dst[first] == expected[first]) ++first;
          const std::size_t is = tessera::itemsize_of(c.dtype);
          return where(c, side, src_gap, dst_gap, accumulate) + "output element " + std::to_string(first / is) +
                 " of " + std::to_string(nbytes / is) + " differs from the reference\n" + plan.describe();
        }
        const unsigned char* canary = image_bytes.data() + (w_begin - area);
        for (unsigned char* p = w_begin; p < w_end; ++p) {
          if (p >= dst && p < dst + nbytes) continue;
          if (*p != canary[p - w_begin])
            return where(c, side, src_gap, dst_gap, accumulate) + "wrote outside the result: " +
                   (p < dst ? std::to_string(dst - p) + " bytes before its start"
                            : std::to_string(p - (dst + nbytes)) + " bytes past its end") +
                   "\n" + plan.describe();
        }
        if (span && std::memcmp(src, r.image.data(), span) != 0)
          return where(c, side, src_gap, dst_gap, accumulate) + "the gradient was modified";
      }
    }
    return "";
  }

 private:
  static std::string where(const ReduceCase& c, GuardSide side, std::size_t src_gap, std::size_t dst_gap,
                           bool accumulate) {
    return describe(c) + (accumulate ? ", accumulating" : "") + ", buffers' " +
           (side == GuardSide::end ? "ends" : "starts") + " at the guard page, gradient gap " +
           std::to_string(src_gap) + ", result gap " + std::to_string(dst_gap) + ": ";
  }

  const GuardPage& src_mem_;
  const GuardPage& dst_mem_;
  Canary canary_;
};

// The paths a reduction case's calls must have counted (ran: the paths whose counters moved).
// The counters count kernel calls: a zeros plan's executor writes its zeros without one, a
// segments plan's kernels count its segments' own paths. Should the library count those two
// as reduce.zeros / reduce.segments, that passes too.
bool executed_as_planned(const ReduceCase& c, const std::set<std::string>& ran) {
  if (ran == c.executed) return true;
  if (c.path == "reduce.zeros") return ran == std::set<std::string>{"reduce.zeros"};
  if (c.path == "reduce.segments") {
    std::set<std::string> with = c.executed;
    with.insert("reduce.segments");
    return ran == with || ran == std::set<std::string>{"reduce.segments"};
  }
  return false;
}

}  // namespace

TEST_CASE("guard pages: the allocator faults exactly outside the buffer") {
  const GuardPage page(4096);
  const unsigned char* end_buf = page.place(GuardSide::end, 100, 0);
  const unsigned char* start_buf = page.place(GuardSide::start, 100, 0);
  CHECK(end_buf + 100 == page.guard());
  CHECK(start_buf == page.guard() + GuardPage::page_size());
  // Inside: no fault (the control). One byte past the end / before the start: a fault.
  CHECK_FALSE(test::access_faults(end_buf + 99, true));
  CHECK_FALSE(test::access_faults(start_buf, false));
  CHECK(test::access_faults(end_buf + 100, false));
  CHECK(test::access_faults(end_buf + 100, true));
  CHECK(test::access_faults(start_buf - 1, false));
  CHECK(test::access_faults(start_buf - 1, true));
  // A gap moves the buffer away from the guard by exactly that many bytes.
  CHECK(page.place(GuardSide::end, 10, 7) + 17 == page.guard());
  CHECK(page.place(GuardSide::start, 10, 7) == page.guard() + GuardPage::page_size() + 7);
}

TEST_CASE("guard pages: every itemsize, size, misalignment and executor path on every Highway target") {
  TargetGuard guard;
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<int64_t> targets = test::targets_to_test();
  REQUIRE(!targets.empty());

  // The cases, built once: itemsizes 1..32, outputs of 0..192 bytes; long runs; large outputs.
  struct Planned {
    Case c;
    const std::vector<std::size_t>* gaps;
  };
  std::vector<Planned> small, large;
  for (std::size_t s = 1; s <= 32; ++s) {
    const bool fixed = variant(s) != "any";
    std::vector<Case> cases;
    for (int64_t n = 0; n * static_cast<int64_t>(s) <= 3 * 64; ++n) add_small_cases(cases, s, n);
    for (const Case& c : cases) {
      const bool short_output = plan_of(c, tessera::Options()).nbytes() <= 64;
      small.push_back({c, fixed || short_output ? &all_gaps() : &sampled_gaps()});
      if (c.path != "none") {
        // Direct fills (whole-line rows from a register, the line across two rows blended): every
        // destination misalignment, as the ordinary paths.
        const Case sc = streamed(c);
        const bool direct_fill = sc.path.rfind("fill.", 0) == 0 && sc.path.find(".nt.direct") != std::string::npos;
        small.push_back({sc, direct_fill ? &all_gaps() : &sampled_gaps()});
      }
    }
    std::vector<Case> long_runs;
    add_long_pattern_cases(long_runs, s);
    add_shuffle_cases(long_runs, s);
    for (const Case& c : long_runs) {
      small.push_back({c, fixed ? &all_gaps() : &sampled_gaps()});
      small.push_back({streamed(c), &sampled_gaps()});
    }
  }
  static const std::vector<std::size_t> large_gaps = {0, 27};
  // Direct fills, repeats and short-run rows and streamed blocked gathers: element-aligned
  // destinations off the line too (numpy's dst + 16, say).
  static const std::vector<std::size_t> large_fill_gaps = {0, 4, 16, 27, 48, 60};
  for (const Case& c : large_cases()) {
    const bool direct = (c.path.rfind("fill.", 0) == 0 || c.path.rfind("repeat.", 0) == 0 ||
                         c.path.rfind("pattern.shuffle", 0) == 0 || c.path.rfind("segments.", 0) == 0) &&
                        c.path.find(".nt.direct") != std::string::npos;
    const bool streamed_gather = c.path.rfind("gather.", 0) == 0 && c.path.find(".nt") != std::string::npos;
    large.push_back({c, direct || streamed_gather ? &large_fill_gaps : &large_gaps});
  }

  const GuardPage small_src(8192), small_dst(8192);
  const GuardPage large_src(1 << 20), large_dst(1 << 20);

  // The copying paths: the reductions' ("reduce.*") have their own test case below.
  std::vector<std::string> all_paths;
  for (const std::string& path : tessera::Plan::kernel_paths())
    if (path.rfind("reduce.", 0) != 0) all_paths.push_back(path);
  std::map<std::string, std::map<std::string, int>> table;  // planned path -> target -> executions
  std::vector<std::string> target_names;
#if TESSERA_PATH_COUNTERS
  namespace td = tessera::detail;
  const auto path_index = [&](const std::string& path) {
    for (int i = 0; i < td::kPathCount; ++i)
      if (path == td::kPathInfo[i].name) return i;
    return -1;
  };
  // executed[target][path]: the counters of this test case's calls only.
  std::map<std::string, std::vector<uint64_t>> executed;
  const auto snapshot = [&](int64_t t) {
    std::vector<uint64_t> v(td::kPathCount);
    for (int i = 0; i < td::kPathCount; ++i) v[static_cast<std::size_t>(i)] = td::executed_path_count(t, i);
    return v;
  };
  td::reset_executed_path_counts();
#endif

  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string name = hwy::TargetName(target);
    CAPTURE(name);
    REQUIRE(std::string(tessera::active_target()) == name);
    target_names.push_back(name);

#if TESSERA_PATH_COUNTERS
    std::map<int64_t, std::vector<uint64_t>> others;  // the other targets' counters: must not move
    for (int64_t t : targets)
      if (t != target) others[t] = snapshot(t);
    const std::vector<uint64_t> start = snapshot(target);
#endif
    std::set<std::string> seen;
    int failures = 0;
    uint64_t seed = 1;
    for (auto* group : {&small, &large}) {
      Runner runner(group == &small ? small_src : large_src, group == &small ? small_dst : large_dst);
      for (const Planned& p : *group) {
        const int before = runner.executions;
        const std::string path = path_on(p.c, name);
#if TESSERA_PATH_COUNTERS
        const std::vector<uint64_t> counts_before = snapshot(target);
#endif
        std::string err;
        try {
          err = runner.run(p.c, *p.gaps, seed++, name);
        } catch (const std::exception& e) {
          err = describe(p.c) + ": threw " + e.what();
        }
#if TESSERA_PATH_COUNTERS
        // What the kernels executed for this case's calls: its planned path and nothing else.
        if (err.empty()) {
          const std::vector<uint64_t> counts_after = snapshot(target);
          const int want = path == "none" ? -1 : path_index(path);  // an empty output runs nothing
          for (int i = 0; i < td::kPathCount; ++i) {
            const uint64_t n = counts_after[static_cast<std::size_t>(i)] - counts_before[static_cast<std::size_t>(i)];
            if ((i == want) != (n > 0)) {
              err = describe(p.c) + ": planned " + path + " but the kernels ran " + td::kPathInfo[i].name + " " +
                    std::to_string(n) + " times";
              break;
            }
          }
        }
#endif
        CHECK_MESSAGE(err.empty(), name << ": " << err);
        if (!err.empty()) {
          if (++failures >= 5) break;  // enough to diagnose; keep the log short
          continue;
        }
        seen.insert(path);  // run() checked that the plan took exactly this path
        table[path][name] += runner.executions - before;
      }
    }
    // The suite reached every path the planner gives this target.
    std::set<std::string> plannable;
    for (const std::string& path : all_paths) plannable.insert(on_target(path, name));
    CHECK(seen == plannable);
    for (const std::string& path : plannable)
      CHECK_MESSAGE(seen.count(path) == 1, "path " << path << " was not reached on " << name);

#if TESSERA_PATH_COUNTERS
    std::vector<uint64_t>& counts = executed[name];
    counts = snapshot(target);
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] -= start[i];
    for (const auto& other : others)  // (no structured binding: clang's C++17 cannot capture one)
      CHECK_MESSAGE(snapshot(other.first) == other.second,
                    "code of target " << hwy::TargetName(other.first) << " ran while " << name << " was forced");
#endif
  }

  std::ostringstream os;
#if TESSERA_PATH_COUNTERS
  // The closing note's table: ranges each path ran, counted by the kernels, per Highway target;
  // "-": a path the planner does not give that target.
  os << "executed paths (ranges run; lib/kernels/path_counters.hpp) per Highway target (columns):\n";
  os << std::left << std::setw(24) << "executed path";
  for (const auto& t : target_names) os << std::right << std::setw(10) << t;
  os << "\n";
  for (int i = 0; i < td::kPathCount; ++i) {
    os << std::left << std::setw(24) << td::kPathInfo[i].name;
    for (const auto& t : target_names) {
      const uint64_t n = executed[t].empty() ? 0 : executed[t][static_cast<std::size_t>(i)];
      if (on_target(td::kPathInfo[i].name, t) != td::kPathInfo[i].name && n == 0) {
        os << std::right << std::setw(10) << "-";
      } else {
        os << std::right << std::setw(10) << n;
      }
    }
    os << "\n";
  }
  os << "\n";
#else
  MESSAGE("executed-path counters are off in this build (configure with -Dpath_counters=true, as tests/run's "
          "build/tests does): only the planned paths were checked, not what the kernels executed");
#endif
  // Executions (case x side x misalignment) per planned path and target.
  os << "guard-page executions per planned path (Plan::kernel_path) and Highway target (columns):\n";
  os << std::left << std::setw(24) << "path";
  for (const auto& t : target_names) os << std::right << std::setw(10) << t;
  os << "\n";
  for (const std::string& path : all_paths) {
    os << std::left << std::setw(24) << path;
    for (const auto& t : target_names) os << std::right << std::setw(10) << table[path][t];
    os << "\n";
  }
  MESSAGE(os.str());
}

TEST_CASE("guard pages: streamed plans made for the best target, executed on every target") {
  // A plan keeps the path its planner chose for the target of that moment; dispatch at execution
  // may go elsewhere (a process that forces its targets between the two, as Highway's tests do).
  // On a target without that path's code (SCALAR: no vectors, no streaming stores) each kernel
  // then runs its own rows; the direct routes of the element repeats and the per-element counts
  // (repeat.shuffle.nt.direct, segments.nt.direct) once wrote nothing there. Every large streamed
  // case, planned once for the best target, executed on every target into destinations at and
  // off the line. (Under emulation, TESSERA_TEST_SCALE > 1: the list's cases scale_takes keeps,
  // two destinations.)
  TargetGuard guard;
  hwy::SetSupportedTargetsForTest(0);
  const bool vectors = std::string(tessera::active_target()) != "SCALAR";
  const std::vector<int64_t> targets = test::targets_to_test();
  REQUIRE(!targets.empty());
  const GuardPage src(1 << 20), dst(1 << 20);
  Runner runner(src, dst);
  const std::vector<std::size_t> gaps =
      test::test_scale() > 1 ? std::vector<std::size_t>{0, 16} : std::vector<std::size_t>{0, 16, 27};
  std::set<std::string> planned;
  uint64_t seed = 20261205;
  int cases = 0, index = 0;
  for (const Case& c : large_cases()) {
    if (c.nontemporal != tessera::NonTemporal::always || !test::scale_takes(index++)) continue;
    hwy::SetSupportedTargetsForTest(0);
    tessera::Options options;
    options.nontemporal = c.nontemporal;
    const tessera::Plan plan = plan_of(c, options);
    planned.insert(plan.kernel_path());
    ++cases;
    for (const int64_t target : targets) {
      hwy::SetSupportedTargetsForTest(target);
      const std::string name = hwy::TargetName(target);
      std::string err;
      try {
        err = runner.run(c, gaps, seed++, name, &plan);
      } catch (const std::exception& e) {
        err = describe(c) + ": threw " + e.what();
      }
      CHECK_MESSAGE(err.empty(),
                    "planned for " << std::string(plan.kernel_path()) << ", executed on " << name << ": " << err);
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  CHECK(cases >= 20 / test::test_scale());
  INFO("paths planned: " << [&] {
    std::string all;
    for (const std::string& p : planned) all += p + " ";
    return all;
  }());
  if (vectors && test::test_scale() == 1) {  // the direct routes are among the plans run elsewhere
    CHECK(planned.count("segments.nt.direct") == 1);
    CHECK(planned.count("repeat.shuffle.nt.direct") == 1);
    CHECK(planned.count("pattern.shuffle.nt.direct") == 1);
  }
}

TEST_CASE("guard pages: the reductions, every path, dtype and misalignment on every Highway target") {
  TargetGuard guard;
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<int64_t> targets = test::targets_to_test();
  REQUIRE(!targets.empty());

  // The cases, prepared once (their gradients and expected results): every small geometry for
  // every dtype whose exact sums it allows; the large ones as given.
  // (Under emulation, TESSERA_TEST_SCALE > 1: four misalignments of the small cases.)
  static const std::vector<std::size_t> small_gaps =
      test::test_scale() > 1 ? std::vector<std::size_t>{0, 1, 3, 33}
                             : std::vector<std::size_t>{0, 1, 2, 3, 5, 8, 13, 16, 27, 31, 33, 63};
  static const std::vector<std::size_t> large_gaps = {0, 27};
  std::vector<ReduceRun> small, large;
  uint64_t seed = 1;
  for (const ReduceCase& geometry : reduce_geometries_small()) {
    for (const tessera::DType d : reduce_dtypes()) {
      if (is_complex(d) != geometry.for_complex) continue;
      ReduceCase c = geometry;
      c.dtype = d;
      if (!is_integer(d) && value_bound(d, addends(c)) < 1) continue;  // its sums would round
      small.push_back(prepare(c, seed++, &small_gaps));
    }
  }
  for (const ReduceCase& c : reduce_cases_large()) {
    REQUIRE_MESSAGE(value_bound(c.dtype, addends(c)) >= 1, describe(c));
    large.push_back(prepare(c, seed++, &large_gaps));
    // Large enough to run threaded (lib/executor.cpp: kParallelMinBytes of gradient), but zeros.
    if (c.path != "reduce.zeros") CHECK_MESSAGE(large.back().image.size() >= (512u << 10), describe(c));
  }
  const auto capacity = [](const std::vector<ReduceRun>& runs, bool src) {
    std::size_t n = 0;
    for (const ReduceRun& r : runs) n = std::max(n, (src ? r.image.size() : r.sum.size()) + 64);
    return n;
  };
  const GuardPage small_src(capacity(small, true)), small_dst(capacity(small, false));
  const GuardPage large_src(capacity(large, true)), large_dst(capacity(large, false));

  // Every reduction path Plan::kernel_paths() names, and reduce.none (an empty result).
  std::vector<std::string> planned_paths = {"reduce.none"};
  for (const std::string& kernel : tessera::Plan::kernel_paths()) {
    const std::string path = reduce_path_of(kernel);
    if (kernel.rfind("reduce.", 0) == 0 && std::find(planned_paths.begin(), planned_paths.end(), path) == planned_paths.end())
      planned_paths.push_back(path);
  }
  CHECK(planned_paths.size() == 7);  // none, zeros, lanes, strided, interleaved, periodic, segments
  std::map<std::string, std::map<std::string, int>> table;  // planned path -> target -> executions
  std::vector<std::string> target_names;
#if TESSERA_PATH_COUNTERS
  namespace td = tessera::detail;
  const auto snapshot = [&](int64_t t) {
    std::vector<uint64_t> v(td::kReducePathCount);
    for (int i = 0; i < td::kReducePathCount; ++i)
      v[static_cast<std::size_t>(i)] = td::executed_reduce_path_count(t, i);
    return v;
  };
  std::map<std::string, std::vector<uint64_t>> executed;  // target -> this test case's counts per ReducePath
#endif

  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string name = hwy::TargetName(target);
    CAPTURE(name);
    REQUIRE(std::string(tessera::active_target()) == name);
    target_names.push_back(name);
#if TESSERA_PATH_COUNTERS
    std::map<int64_t, std::vector<uint64_t>> others;  // the other targets' counters: must not move
    for (int64_t t : targets)
      if (t != target) others[t] = snapshot(t);
    const std::vector<uint64_t> start = snapshot(target);
#endif
    std::set<std::string> seen;
    int failures = 0;
    for (auto* group : {&small, &large}) {
      ReduceRunner runner(group == &small ? small_src : large_src, group == &small ? small_dst : large_dst);
      for (const ReduceRun& r : *group) {
        const int before = runner.executions;
#if TESSERA_PATH_COUNTERS
        const std::vector<uint64_t> counts_before = snapshot(target);
#endif
        std::string err;
        try {
          err = runner.run(r);
        } catch (const std::exception& e) {
          err = describe(r.c) + ": threw " + e.what();
        }
#if TESSERA_PATH_COUNTERS
        // What the kernels executed for this case's calls: what its plan says (see
        // executed_as_planned), nothing else.
        if (err.empty()) {
          const std::vector<uint64_t> counts_after = snapshot(target);
          std::set<std::string> ran;
          std::string ran_text;
          for (int i = 0; i < td::kReducePathCount; ++i) {
            const uint64_t n = counts_after[static_cast<std::size_t>(i)] - counts_before[static_cast<std::size_t>(i)];
            if (n == 0) continue;
            ran.insert(td::kReducePathNames[i]);
            ran_text += std::string(" ") + td::kReducePathNames[i] + " x" + std::to_string(n);
          }
          if (!executed_as_planned(r.c, ran)) {
            std::string want;
            for (const std::string& path : r.c.executed) want += " " + path;
            err = describe(r.c) + ": planned " + r.c.path + ", expected the kernels to run" +
                  (want.empty() ? std::string(" nothing") : want) + ", but they ran" +
                  (ran_text.empty() ? std::string(" nothing") : ran_text);
          }
        }
#endif
        CHECK_MESSAGE(err.empty(), name << ": " << err);
        if (!err.empty()) {
          if (++failures >= 5) break;  // enough to diagnose; keep the log short
          continue;
        }
        seen.insert(r.c.path);
        table[r.c.path][name] += runner.executions - before;
      }
    }
    // Every reduction path was planned (and, with the counters, executed) on this target.
    for (const std::string& path : planned_paths)
      CHECK_MESSAGE(seen.count(path) == 1, "reduction path " << path << " was not reached on " << name);
#if TESSERA_PATH_COUNTERS
    std::vector<uint64_t>& counts = executed[name];
    counts = snapshot(target);
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] -= start[i];
    for (const char* path : {"reduce.lanes", "reduce.strided", "reduce.interleaved", "reduce.periodic"}) {
      for (int i = 0; i < td::kReducePathCount; ++i)
        if (path == std::string(td::kReducePathNames[i]))
          CHECK_MESSAGE(counts[static_cast<std::size_t>(i)] > 0, "the kernels never ran " << path << " on " << name);
    }
    for (const auto& other : others)
      CHECK_MESSAGE(snapshot(other.first) == other.second,
                    "reduction code of target " << hwy::TargetName(other.first) << " ran while " << name
                                                << " was forced");
#endif
  }

  std::ostringstream os;
#if TESSERA_PATH_COUNTERS
  os << "reductions: kernel calls counted per path (lib/kernels/path_counters.hpp) and Highway target (columns):\n";
  os << std::left << std::setw(24) << "executed path";
  for (const auto& t : target_names) os << std::right << std::setw(10) << t;
  os << "\n";
  for (int i = 0; i < td::kReducePathCount; ++i) {
    os << std::left << std::setw(24) << td::kReducePathNames[i];
    for (const auto& t : target_names)
      os << std::right << std::setw(10) << (executed[t].empty() ? 0 : executed[t][static_cast<std::size_t>(i)]);
    os << "\n";
  }
  os << "\n";
#else
  MESSAGE("executed-path counters are off in this build (configure with -Dpath_counters=true, as tests/run's "
          "build/tests does): only the reductions' planned paths were checked, not what the kernels executed");
#endif
  os << "reductions: guard-page executions per planned path and Highway target (columns), " << small.size()
     << " small and " << large.size() << " large cases:\n";
  os << std::left << std::setw(24) << "path";
  for (const auto& t : target_names) os << std::right << std::setw(10) << t;
  os << "\n";
  for (const std::string& path : planned_paths) {
    os << std::left << std::setw(24) << path;
    for (const auto& t : target_names) os << std::right << std::setw(10) << table[path][t];
    os << "\n";
  }
  MESSAGE(os.str());
}
