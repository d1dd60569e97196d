// Guard pages (tests/guard.hpp): source and destination placed against a PROT_NONE page — their
// ends in one pass, their starts in a second — so that any read or write outside the caller's
// buffers faults. Swept over itemsizes 1..32, outputs of 0..192 bytes (around vector widths),
// every misalignment (0..63 bytes from the guard) of source and destination, and every executor
// path (Plan::kernel_path), on every Highway target this machine runs; plus outputs large enough
// for the parallel (TBB) path, whose chunks split rows. The bytes are compared with the reference,
// bytes next to the buffers (between them and the guard, and before them) must keep their canary.
// Every case's plan must take the path the case predicts (the planner's label, Plan::kernel_path(),
// the same on every target), and the cases together cover every label. What the kernels then
// EXECUTED can differ per target and per buffer (a direct fill stages where the destination is not
// line-aligned, a `.nt` gather walks rows, the shuffle falls back to FillPattern, SCALAR aliases
// several kernels): in a build with -Dpath_counters=true (tests/run's build/tests) the suite asserts
// on the counters the kernels keep where each path is chosen (lib/kernels/path_counters.hpp) —
// every executed path a target implements ran on it, the aliases below never did — and prints the
// executed paths per target.
#include <doctest/doctest.h>

#include <hwy/targets.h>
#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <map>
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

// One input layout with its reps, and the executor path its plan must take.
struct Case {
  std::string family;
  Shape shape;
  Shape strides;  // bytes; empty = C-contiguous
  std::size_t itemsize;
  Shape reps;
  std::string path;  // expected Plan::kernel_path()
  tessera::NonTemporal nontemporal = tessera::NonTemporal::automatic;
};

// The same case written with streaming stores (staged through L1 unless `direct`): path "….nt".
// The path is predicted from the case's last input axis, which is the plan's innermost entry for
// every case this file builds (a case whose innermost axes merge may need `direct` given).
Case streamed(Case c, bool direct = false) {
  c.family += direct ? " [streamed directly]" : " [streamed]";
  c.nontemporal = tessera::NonTemporal::always;
  // Only blocked gathers stream (a source stride of a cache line or more, elements of at most 16
  // bytes, a row loop); other gather rows are bound by their strided reads and keep their path.
  const bool gather = c.path.rfind("gather", 0) == 0;
  const bool blocked = gather && c.shape.size() >= 2 && c.itemsize <= 16 && !c.strides.empty() &&
                       std::abs(c.strides.back()) >= 64;
  // Fills of 1-16 byte elements whose rows are whole cache lines stream directly from a register.
  const bool fill_lines = c.path.rfind("fill.", 0) == 0 && c.path != "fill.any" &&
                          ref::tile_shape(c.shape, c.reps).back() * static_cast<int64_t>(c.itemsize) % 64 == 0;
  if (c.path != "none" && (!gather || blocked)) c.path += direct || fill_lines ? ".nt.direct" : ".nt";
  return c;
}

std::string describe(const Case& c) {
  return c.family + ": input " + test::to_string(c.shape) + " strides " +
         (c.strides.empty() ? std::string("C-contiguous") : test::to_string(c.strides)) + " itemsize " +
         std::to_string(c.itemsize) + " reps " + test::to_string(c.reps);
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
    out.push_back({"gather: transposed", {a, b}, {is, a * is}, s, {1, 1}, "gather." + v});
    // a rows of one element each, every row's element repeated b times: a fill with a row loop.
    out.push_back({"fill: rows of one element", {a, 1}, {}, s, {1, b}, "fill." + v});
  }
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
      {"large gather, transposed", {331, 401}, {5, 331 * 5}, 5, {1, 1}, "gather.any"},
      // Blocked gathers: source stride of a cache line or more, whole rows in groups.
      {"large blocked gather, transposed, tiled", {133, 451}, {4, 133 * 4}, 4, {2, 2}, "gather.4"},
      {"large blocked gather, transposed 16-byte", {70, 233}, {16, 70 * 16}, 16, {1, 3}, "gather.16"},
      {"large blocked gather, reversed columns", {300, 437}, {2, -600}, 2, {1, 1}, "gather.2"},
      {"blocked gather, transposed 1-byte", {301, 397}, {1, 301}, 1, {2, 1}, "gather.1"},
      // Serial (under 512 KiB): the outer replicas are written from one gathered tile.
      {"blocked gather, transposed, outer replicas", {40, 37}, {4, 160}, 4, {3, 2}, "gather.4"},
      {"blocked gather, 8-byte, reversed, outer replicas", {33, 29}, {-8, 33 * 8}, 8, {2, 1, 3}, "gather.8"},
      streamed({"blocked gather, transposed, outer replicas", {40, 37}, {4, 160}, 4, {3, 2}, "gather.4"}),
      // Streamed straight from source pieces of at least 4 KiB (copy rows, pattern runs).
      streamed({"large copy, rows of 4 KiB + 3", {150, 4099}, {}, 1, {1, 1}, "copy"}, true),
      streamed({"large long pattern, 4 KiB + 5 run", {4101}, {}, 1, {2, 70}, "pattern.long"}, true),
      streamed({"large shuffled pattern, rows of a 12-byte run x 40", {1700, 3}, {}, 4, {1, 40}, "pattern.shuffle"}),
      streamed({"large gather, transposed", {331, 401}, {5, 331 * 5}, 5, {1, 1}, "gather.any"}),
      streamed({"large gather, reversed", {320003}, {-2}, 2, {1}, "gather.2"}),
      // Staged streaming splits rows at the end of each stage block.
      streamed({"large copy, rows of 3 KiB + 1 with gaps", {200, 3 * 1024 + 1}, {4000, 1}, 1, {1, 1}, "copy"}),
      streamed({"large short pattern", {7}, {}, 4, {20011}, "pattern.short"}),
      streamed({"large long pattern", {101}, {}, 3, {2111}, "pattern.long"}),
      streamed({"large fill, rows", {7, 1}, {}, 12, {1, 7507}, "fill.any"}),
      streamed({"large fill, rows of 100 bytes", {3001, 1}, {}, 4, {1, 25}, "fill.4"}),
      // Streamed blocked gathers, every element-size variant, with replicated rows.
      streamed({"large blocked gather, transposed 1-byte", {301, 397}, {1, 301}, 1, {2, 1}, "gather.1"}),
      streamed({"large blocked gather, reversed columns", {300, 437}, {2, -600}, 2, {1, 1}, "gather.2"}),
      streamed({"large blocked gather, transposed, tiled", {133, 451}, {4, 133 * 4}, 4, {2, 2}, "gather.4"}),
      streamed({"large blocked gather, transposed 8-byte", {97, 211}, {8, 97 * 8}, 8, {3, 1}, "gather.8"}),
      streamed({"large blocked gather, transposed 16-byte", {70, 233}, {16, 70 * 16}, 16, {1, 3}, "gather.16"}),
  };
}

#if TESSERA_PATH_COUNTERS
// Executed paths (kExecPathNames) a Highway target does not implement, and the path that runs in
// their place there, by the kernels' compile-time branches (#if HWY_TARGET == HWY_SCALAR in
// lib/kernels/row_kernels-inl.h and dispatch.cpp). On that target the path's counter must stay 0
// and the substitute's must not. Every other executed path must have run on every target.
// (SCALAR's staged `.nt` paths are not aliases: the L1 stage and its row splitting run as on
// every target, only its copy-out, CopyStream, uses ordinary stores.)
struct Alias {
  const char* target;
  const char* path;
  const char* runs_as;
  const char* why;
};
const Alias kAliases[] = {
    {"SCALAR", "pattern.shuffle", "pattern.short", "no byte shuffle: FillShortPattern is FillPattern"},
    {"SCALAR", "pattern.shuffle.nt", "pattern.short.nt", "no byte shuffle: FillShortPattern is FillPattern"},
    {"SCALAR", "fill.16", "fill.any", "Fill16 is FillPattern with a 16-byte run"},
    {"SCALAR", "fill.16.nt", "fill.any.nt", "Fill16 is FillPattern with a 16-byte run"},
    {"SCALAR", "fill.16.nt.direct", "fill.any", "no streaming stores: FillElementStream is Fill16, i.e. FillPattern"},
    {"SCALAR", "fill.1.nt.direct", "fill.1", "no streaming stores: FillElementStream is FillElement"},
    {"SCALAR", "fill.2.nt.direct", "fill.2", "no streaming stores: FillElementStream is FillElement"},
    {"SCALAR", "fill.4.nt.direct", "fill.4", "no streaming stores: FillElementStream is FillElement"},
    {"SCALAR", "fill.8.nt.direct", "fill.8", "no streaming stores: FillElementStream is FillElement"},
    {"SCALAR", "copy.nt.direct", "copy", "no streaming stores: CopyStream is CopyBytes"},
    {"SCALAR", "pattern.long.nt.direct", "pattern.long", "no streaming stores: FillPatternStream copies run by run"},
    {"SCALAR", "gather.1.nt", "gather.1.blocked", "no streaming stores: the tile's rows go out with CopyBytes"},
    {"SCALAR", "gather.2.nt", "gather.2.blocked", "no streaming stores: the tile's rows go out with CopyBytes"},
    {"SCALAR", "gather.4.nt", "gather.4.blocked", "no streaming stores: the tile's rows go out with CopyBytes"},
    {"SCALAR", "gather.8.nt", "gather.8.blocked", "no streaming stores: the tile's rows go out with CopyBytes"},
    {"SCALAR", "gather.16.nt", "gather.16.blocked", "no streaming stores: the tile's rows go out with CopyBytes"},
    {"SCALAR", "gather.any.nt", "gather.any.blocked", "no streaming stores: the tile's rows go out with CopyBytes"},
    {"SCALAR", "gather.4.transposed", "gather.4.blocked", "no vectors: GatherTile copies element by element"},
    {"SCALAR", "gather.8.transposed", "gather.8.blocked", "no vectors: GatherTile copies element by element"},
};

const Alias* alias_of(const std::string& target, const std::string& path) {
  for (const Alias& a : kAliases)
    if (target == a.target && path == a.path) return &a;
  return nullptr;
}

int exec_path_index(const std::string& path) {
  for (int i = 0; i < tessera::detail::kPathCount; ++i)
    if (path == tessera::detail::kPathInfo[i].name) return i;
  return -1;
}
#endif

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

  std::string run(const Case& c, const std::vector<std::size_t>& gaps, uint64_t seed) {
    tessera::Options options;
    options.nontemporal = c.nontemporal;
    const tessera::Plan plan(c.shape, c.strides, c.itemsize, c.reps, options);
    if (plan.kernel_path() != c.path)
      return describe(c) + ": plan took path " + plan.kernel_path() + ", expected " + c.path + "\n" + plan.describe();

    const auto [low, high] = input_span(c);
    const std::size_t span = static_cast<std::size_t>(high - low);
    std::vector<unsigned char> image(span);
    test::fill_pattern(image.data(), image.size(), seed);
    const std::vector<unsigned char> expected =
        ref::tile(image.data() - low, c.shape, c.strides, c.itemsize, c.reps);
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
          const tessera_status s = tessera_tile_ex(
              origin, static_cast<int>(c.shape.size()), c.shape.data(), c.strides.empty() ? nullptr : c.strides.data(),
              c.itemsize, static_cast<int>(c.reps.size()), c.reps.data(), dst, nbytes, &copt);
          if (s != TESSERA_OK) return where(c, side, src_gap, dst_gap) + "tessera_tile_ex failed: " + tessera_last_error();
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
      const bool short_output = ref::count(ref::tile_shape(c.shape, c.reps)) * static_cast<int64_t>(s) <= 64;
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
  for (const Alias& a : kAliases) {  // the list names real paths
    REQUIRE_MESSAGE(exec_path_index(a.path) >= 0, a.path);
    REQUIRE_MESSAGE(exec_path_index(a.runs_as) >= 0, a.runs_as);
  }
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
    const std::vector<uint64_t> before = snapshot(target);
#endif
    std::set<std::string> seen;
    int failures = 0;
    uint64_t seed = 1;
    for (auto* group : {&small, &large}) {
      Runner runner(group == &small ? small_src : large_src, group == &small ? small_dst : large_dst);
      for (const Planned& p : *group) {
        const int before = runner.executions;
        std::string err;
        try {
          err = runner.run(p.c, *p.gaps, seed++);
        } catch (const std::exception& e) {
          err = describe(p.c) + ": threw " + e.what();
        }
        CHECK_MESSAGE(err.empty(), name << ": " << err);
        if (!err.empty()) {
          if (++failures >= 5) break;  // enough to diagnose; keep the log short
          continue;
        }
        seen.insert(p.c.path);  // run() checked that the plan took exactly this path
        table[p.c.path][name] += runner.executions - before;
      }
    }
    // The suite reached every executor path on this target.
    CHECK(std::vector<std::string>(seen.begin(), seen.end()) ==
          [&] {
            std::vector<std::string> sorted = all_paths;
            std::sort(sorted.begin(), sorted.end());
            return sorted;
          }());
    for (const std::string& path : all_paths)
      CHECK_MESSAGE(seen.count(path) == 1, "path " << path << " was not reached on " << name);

#if TESSERA_PATH_COUNTERS
    // What the kernels executed while this target was forced: every path it implements ran, the
    // paths it aliases never did (their substitutes did), and no other target's code ran.
    std::vector<uint64_t>& counts = executed[name];
    counts = snapshot(target);
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] -= before[i];
    for (int i = 0; i < td::kPathCount; ++i) {
      const std::string path = td::kPathInfo[i].name;
      const uint64_t n = counts[static_cast<std::size_t>(i)];
      if (const Alias* a = alias_of(name, path)) {
        CHECK_MESSAGE(n == 0, name << " executed " << path << " " << n << " times; listed as an alias of " << a->runs_as
                                   << " there (" << a->why << ")");
        CHECK_MESSAGE(counts[static_cast<std::size_t>(exec_path_index(a->runs_as))] > 0,
                      name << ": " << a->runs_as << ", which runs in place of " << path << ", never executed");
      } else {
        CHECK_MESSAGE(n > 0, "executed path " << path << " never ran on " << name
                                                  << " (the planner's labels were all reached: a kernel took another branch)");
      }
    }
    for (const auto& other : others)  // (no structured binding: clang's C++17 cannot capture one)
      CHECK_MESSAGE(snapshot(other.first) == other.second,
                    "code of target " << hwy::TargetName(other.first) << " ran while " << name << " was forced");
#endif
  }

  std::ostringstream os;
#if TESSERA_PATH_COUNTERS
  // The closing note's table: how often each executed path was chosen (per range, or per row
  // where the kernels choose per row), counted by the kernels themselves, per Highway target.
  os << "executed paths (rows; lib/kernels/path_counters.hpp) per Highway target (columns), counted where the "
        "kernels take each branch; \"alias\": not implemented on that target (0 runs), listed below:\n";
  os << std::left << std::setw(24) << "executed path";
  for (const auto& t : target_names) os << std::right << std::setw(10) << t;
  os << "\n";
  for (int i = 0; i < td::kPathCount; ++i) {
    os << std::left << std::setw(24) << td::kPathInfo[i].name;
    for (const auto& t : target_names) {
      const uint64_t n = executed[t].empty() ? 0 : executed[t][static_cast<std::size_t>(i)];
      if (alias_of(t, td::kPathInfo[i].name) != nullptr && n == 0) {
        os << std::right << std::setw(10) << "alias";
      } else {
        os << std::right << std::setw(10) << n;
      }
    }
    os << "\n";
  }
  os << "aliases:\n";
  for (const Alias& a : kAliases)
    os << "  " << a.target << ": " << std::left << std::setw(22) << a.path << " runs as " << std::setw(18) << a.runs_as
       << " (" << a.why << ")\n";
  os << "\n";
#else
  MESSAGE("executed-path counters are off in this build (configure with -Dpath_counters=true, as tests/run's "
          "build/tests does): only the planner's labels were checked, not what the kernels executed");
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
