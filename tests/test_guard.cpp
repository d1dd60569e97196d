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
#include <doctest/doctest.h>

#include <hwy/targets.h>
#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "guard.hpp"
#include "reference.hpp"
#include "util.hpp"

#if TESSERA_PATH_COUNTERS
#include "kernels/path_counters.hpp"  // lib/, on the include path with -Dpath_counters=true
#endif

namespace {

using test::GuardPage;
using test::GuardSide;
using test::Shape;

// Restores Highway's normal target choice even when a REQUIRE throws out of the loop.
struct TargetGuard {
  TargetGuard() = default;
  TargetGuard(const TargetGuard&) = delete;
  TargetGuard& operator=(const TargetGuard&) = delete;
  ~TargetGuard() { hwy::SetSupportedTargetsForTest(0); }
};

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
  if (is_blocked) {
    c.path = c.path.substr(0, c.path.size() - blocked.size()) + ".nt";
  } else if (c.path != "none" && !gather) {
    c.path += direct || fill_lines ? ".nt.direct" : ".nt";
  }
  return c;
}

std::string describe(const Case& c) {
  const std::string args = c.op == Op::tile           ? " reps " + test::to_string(c.reps)
                           : c.op == Op::broadcast_to ? " broadcast_to " + test::to_string(c.reps)
                                                      : " repeat " + test::to_string(c.reps) + " axis " +
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
// elements and 2-8 copies, else element by element under 64 bytes per element, else fills.
std::string repeat_path(std::size_t itemsize, int64_t reps, bool contiguous) {
  const int64_t is = static_cast<int64_t>(itemsize);
  const bool shuffle = contiguous && (is == 1 || is == 2 || is == 4 || is == 8) && reps >= 2 && reps <= 8;
  if (shuffle) return "repeat.shuffle";
  if (reps * is < 64) return "repeat.elements";
  return "fill." + variant(itemsize);
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
  if (n == 0) {
    out.push_back({"empty: zero rep", {3}, {}, s, {0}, "none"});
    out.push_back({"empty: zero extent", {0}, {}, s, {4}, "none"});
    return;
  }
  out.push_back({"copy: contiguous", {n}, {}, s, {1}, "copy"});
  if (n == 1) return;
  out.push_back({"fill: one element repeated", {1}, {}, s, {n}, "fill." + v});
  out.push_back({"fill: broadcast axis (stride 0)", {n}, {0}, s, {1}, "fill." + v});
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
  out.push_back(broadcast_case("broadcast_to: an element", {}, s, {n}, "fill." + v));
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
      broadcast_case("large broadcast of a column", {2053, 1}, 4, {2053, 65}, "fill.4"),
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

  std::string run(const Case& c, const std::vector<std::size_t>& gaps, uint64_t seed, const std::string& target) {
    tessera::Options options;
    options.nontemporal = c.nontemporal;
    const tessera::Plan plan = plan_of(c, options);
    const std::string path = on_target(c.path, target);
    if (plan.kernel_path() != path)
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
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
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
      if (c.path != "none") small.push_back({streamed(c), &sampled_gaps()});
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
  for (const Case& c : large_cases()) large.push_back({c, &large_gaps});

  const GuardPage small_src(8192), small_dst(8192);
  const GuardPage large_src(1 << 20), large_dst(1 << 20);

  const std::vector<std::string> all_paths = tessera::Plan::kernel_paths();
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
        const std::string path = on_target(p.c.path, name);
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
