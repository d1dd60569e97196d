// tessera_compare: two builds of libtessera in one process, timed alternately case by case
// (bench/compare builds the revision and runs this; see its --help).
//
// Both libraries are loaded with dlopen(RTLD_NOW | RTLD_LOCAL) from different files: neither puts
// its symbols into the global scope, so each one's calls bind to its own definitions (this program
// does not link libtessera, and libtessera exports only its C/C++ API). They share the process's
// one oneTBB runtime (libtbb.so.12) and libhwy, as two versions would in an application; both run
// in the same tbb::task_arena of T threads, so the thread pool and its warm-up are the same for
// both. (dlmopen(LM_ID_NEWLM) would give each its own libtbb — two schedulers, two pools of worker
// threads competing for the same cores — and its own libstdc++, so it is not used.)
//
// Only the stable C API is called, resolved with dlsym, so an old revision that lacks an operation
// (c41cc67 has tile only) shows "n/a" for that case instead of failing; options are never passed
// (NULL: the defaults), since the struct's layout changed (0.2 prepended sizeof_options).
//
// What is timed, as bench/run's tile_bench: tessera_plan_execute of the case's plan into a
// preallocated, touched output (the copying ops and the reductions alike), at 1 thread and at all
// threads; for outputs of at most 64 KiB also the one-shot C call (tessera_tile, ...) with its
// planning. Before timing, both libraries' outputs must be byte-identical (the inputs are small
// integers, so the reductions' sums are exact in any order); a difference stops the run. With
// --dst-offset N, B's output starts N bytes past a 64-byte boundary and A's on one: given the same
// library twice, the rows measure what an unaligned destination costs (numpy's large arrays start
// 16 bytes into a line). With --src-offset N, B's input starts N bytes past a 64-byte boundary and
// A's on one (both offsets 16: a numpy array tiled into another).
//
// The timing alternates at fine grain: a round is one batch of each library (ABBA order over two
// rounds, so neither always runs first; the two output buffers traded every two rounds, so neither
// library always writes the same one; a reduction's input rotates among copies that span twice the
// last-level cache, so that every call reads it from DRAM); a batch is enough calls to take about
// 1 ms. The ratio of a round is time(A) / time(B) of its two adjacent batches; a row prints each
// library's median time per call, the median of the rounds' ratios and its 95% confidence
// interval (order statistics of the rounds' ratios, distribution-free), and the summary the
// geometric mean of the rows' ratios and the rows beyond ±5%.
#include <dlfcn.h>
#include <sys/mman.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "cases.h"
#include "limit_loops.h"

namespace {

using tessera::bench::Case;
using tessera::bench::Op;

using Status = int;
struct PlanT;
using PlanCreate = Status (*)(int, const int64_t*, const int64_t*, size_t, int, const int64_t*, PlanT**);
using PlanCreateTarget = Status (*)(int, const int64_t*, const int64_t*, size_t, int, const int64_t*, const void*,
                                    PlanT**);
using PlanCreateRepeat = Status (*)(int, const int64_t*, const int64_t*, size_t, int64_t, const int64_t*, int,
                                    const void*, PlanT**);
using PlanCreateTileBwd = Status (*)(int, const int64_t*, const int64_t*, int, int, const int64_t*, int,
                                     const int64_t*, const void*, PlanT**);
using PlanCreateSumTo = Status (*)(int, const int64_t*, const int64_t*, int, int, const int64_t*, const void*,
                                   PlanT**);
using PlanCreateRepBwd = Status (*)(int, const int64_t*, const int64_t*, int, int, const int64_t*, int64_t,
                                    const int64_t*, int, const void*, PlanT**);
using PlanExecute = Status (*)(const PlanT*, const void*, void*, size_t);
using PlanDestroy = void (*)(PlanT*);
using TileOneShot = Status (*)(const void*, int, const int64_t*, const int64_t*, size_t, int, const int64_t*, void*,
                               size_t);
using TargetOneShot = TileOneShot;  // broadcast_to, expand: target in place of reps
using RepeatOneShot = Status (*)(const void*, int, const int64_t*, const int64_t*, size_t, int64_t, const int64_t*,
                                 int, void*, size_t);
using TileBwdOneShot = Status (*)(const void*, int, const int64_t*, const int64_t*, int, int, const int64_t*, int,
                                  const int64_t*, void*, size_t);
using SumToOneShot = Status (*)(const void*, int, const int64_t*, const int64_t*, int, int, const int64_t*, void*,
                                size_t);
using RepBwdOneShot = Status (*)(const void*, int, const int64_t*, const int64_t*, int, int, const int64_t*, int64_t,
                                 const int64_t*, int, void*, size_t);
using CString = const char* (*)();

constexpr int kAxisNone = -2147483647 - 1;  // TESSERA_AXIS_NONE

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "tessera_compare: %s\n", message.c_str());
  std::exit(2);
}

// One libtessera, its C functions resolved by name (null where that revision lacks one).
struct Lib {
  std::string label, path;
  void* handle = nullptr;
  CString version = nullptr, last_error = nullptr;
  PlanCreate plan_create = nullptr;
  PlanCreateTarget plan_broadcast_to = nullptr, plan_expand = nullptr;
  PlanCreateRepeat plan_repeat = nullptr;
  PlanCreateTileBwd plan_tile_backward = nullptr;
  PlanCreateSumTo plan_sum_to_shape = nullptr;
  PlanCreateRepBwd plan_repeat_backward = nullptr;
  PlanExecute plan_execute = nullptr;
  PlanDestroy plan_destroy = nullptr;
  TileOneShot tile = nullptr;
  TargetOneShot broadcast_to = nullptr, expand = nullptr;
  RepeatOneShot repeat = nullptr;
  TileBwdOneShot tile_backward = nullptr;
  SumToOneShot sum_to_shape = nullptr;
  RepBwdOneShot repeat_backward = nullptr;

  template <typename F>
  void get(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(handle, name));
  }

  void open() {
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) die("cannot load " + path + ": " + dlerror());
    get(version, "tessera_version");
    get(last_error, "tessera_last_error");
    get(plan_create, "tessera_plan_create");
    get(plan_broadcast_to, "tessera_plan_create_broadcast_to");
    get(plan_expand, "tessera_plan_create_expand");
    get(plan_repeat, "tessera_plan_create_repeat");
    get(plan_tile_backward, "tessera_plan_create_tile_backward");
    get(plan_sum_to_shape, "tessera_plan_create_sum_to_shape");
    get(plan_repeat_backward, "tessera_plan_create_repeat_backward");
    get(plan_execute, "tessera_plan_execute");
    get(plan_destroy, "tessera_plan_destroy");
    get(tile, "tessera_tile");
    get(broadcast_to, "tessera_broadcast_to");
    get(expand, "tessera_expand");
    get(repeat, "tessera_repeat");
    get(tile_backward, "tessera_tile_backward");
    get(sum_to_shape, "tessera_sum_to_shape");
    get(repeat_backward, "tessera_repeat_backward");
    if (!plan_create || !plan_execute || !plan_destroy || !tile || !last_error)
      die(path + " lacks tessera_plan_create / _execute / _destroy / tessera_tile: not a libtessera");
  }

  std::string error() const { return last_error ? last_error() : "?"; }
};

int dtype_code(const Case& c) {
  static const char* const names[] = {"float32", "float64", "float16", "bfloat16", "complex64", "complex128", "int8",
                                      "int16",   "int32",   "int64",   "uint8",    "uint16",    "uint32",     "uint64"};
  for (int d = 0; d < 14; ++d)
    if (c.dtype == names[d]) return d;
  die("case " + c.name + ": dtype " + c.dtype + " is not a reduction's type");
}

int axis_of(const Case& c) { return c.axis ? *c.axis : kAxisNone; }

// The case's plan in `lib`, or null when that revision has no such operation. A planning error
// is fatal (the case file and the library disagree).
PlanT* make_plan(const Lib& lib, const Case& c) {
  const int ndim = static_cast<int>(c.shape.size());
  const int in_ndim = static_cast<int>(c.in_shape.size());
  const int64_t* sh = c.shape.data();
  const int64_t* st = c.strides.data();
  PlanT* plan = nullptr;
  Status s = 0;
  switch (c.op) {
    case Op::tile:
      s = lib.plan_create(ndim, sh, st, c.itemsize, static_cast<int>(c.reps.size()), c.reps.data(), &plan);
      break;
    case Op::broadcast_to:
    case Op::expand: {
      const PlanCreateTarget f = c.op == Op::expand ? lib.plan_expand : lib.plan_broadcast_to;
      if (!f) return nullptr;
      s = f(ndim, sh, st, c.itemsize, static_cast<int>(c.target.size()), c.target.data(), nullptr, &plan);
      break;
    }
    case Op::repeat:
      if (!lib.plan_repeat) return nullptr;
      s = lib.plan_repeat(ndim, sh, st, c.itemsize, static_cast<int64_t>(c.repeats.size()), c.repeats.data(),
                          axis_of(c), nullptr, &plan);
      break;
    case Op::tile_backward:
      if (!lib.plan_tile_backward) return nullptr;
      s = lib.plan_tile_backward(ndim, sh, st, dtype_code(c), in_ndim, c.in_shape.data(),
                                 static_cast<int>(c.reps.size()), c.reps.data(), nullptr, &plan);
      break;
    case Op::sum_to_shape:
      if (!lib.plan_sum_to_shape) return nullptr;
      s = lib.plan_sum_to_shape(ndim, sh, st, dtype_code(c), static_cast<int>(c.target.size()), c.target.data(),
                                nullptr, &plan);
      break;
    case Op::repeat_backward:
      if (!lib.plan_repeat_backward) return nullptr;
      s = lib.plan_repeat_backward(ndim, sh, st, dtype_code(c), in_ndim, c.in_shape.data(),
                                   static_cast<int64_t>(c.repeats.size()), c.repeats.data(), axis_of(c), nullptr,
                                   &plan);
      break;
  }
  if (s != 0) die(lib.label + ": planning case " + c.name + " failed: " + lib.error());
  return plan;
}

// A callable of the one-shot C call of the case in `lib`, or an empty one when it lacks it.
struct OneShot {
  const Lib* lib = nullptr;
  const Case* c = nullptr;
  bool available() const {
    switch (c->op) {
      case Op::tile: return lib->tile != nullptr;
      case Op::broadcast_to: return lib->broadcast_to != nullptr;
      case Op::expand: return lib->expand != nullptr;
      case Op::repeat: return lib->repeat != nullptr;
      case Op::tile_backward: return lib->tile_backward != nullptr;
      case Op::sum_to_shape: return lib->sum_to_shape != nullptr;
      case Op::repeat_backward: return lib->repeat_backward != nullptr;
    }
    return false;
  }
  Status operator()(const void* src, void* dst, size_t bytes) const {
    const Case& k = *c;
    const int ndim = static_cast<int>(k.shape.size());
    const int in_ndim = static_cast<int>(k.in_shape.size());
    switch (k.op) {
      case Op::tile:
        return lib->tile(src, ndim, k.shape.data(), k.strides.data(), k.itemsize, static_cast<int>(k.reps.size()),
                         k.reps.data(), dst, bytes);
      case Op::broadcast_to:
      case Op::expand:
        return (k.op == Op::expand ? lib->expand : lib->broadcast_to)(src, ndim, k.shape.data(), k.strides.data(),
                                                                       k.itemsize, static_cast<int>(k.target.size()),
                                                                       k.target.data(), dst, bytes);
      case Op::repeat:
        return lib->repeat(src, ndim, k.shape.data(), k.strides.data(), k.itemsize,
                           static_cast<int64_t>(k.repeats.size()), k.repeats.data(), axis_of(k), dst, bytes);
      case Op::tile_backward:
        return lib->tile_backward(src, ndim, k.shape.data(), k.strides.data(), dtype_code(k), in_ndim,
                                  k.in_shape.data(), static_cast<int>(k.reps.size()), k.reps.data(), dst, bytes);
      case Op::sum_to_shape:
        return lib->sum_to_shape(src, ndim, k.shape.data(), k.strides.data(), dtype_code(k),
                                 static_cast<int>(k.target.size()), k.target.data(), dst, bytes);
      case Op::repeat_backward:
        return lib->repeat_backward(src, ndim, k.shape.data(), k.strides.data(), dtype_code(k), in_ndim,
                                    k.in_shape.data(), static_cast<int64_t>(k.repeats.size()), k.repeats.data(),
                                    axis_of(k), dst, bytes);
    }
    return -1;
  }
};

// A buffer of `bytes` bytes and `slack` more (room for an output placed past the start), touched
// (every page written): 64-byte aligned, and from 1 MiB up 2 MiB aligned and advised huge pages,
// as tile_bench's buffers and tessera's own large outputs are (the page kind moves these speeds by
// ~20%, and a large copy's speed on 4 KiB pages swings more from run to run).
struct Buffer {
  unsigned char* p = nullptr;
  size_t n = 0;
  explicit Buffer(size_t bytes, size_t slack = 0) : n(bytes) {
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t need = std::max<size_t>(64, bytes + slack);
    const size_t align = need >= kHuge / 2 ? kHuge : 64;
    const size_t length = (need + align - 1) / align * align;
    p = static_cast<unsigned char*>(std::aligned_alloc(align, length));
    if (!p) die("out of memory (" + std::to_string(length) + " bytes)");
    if (align == kHuge) madvise(p, length, MADV_HUGEPAGE);  // advice only: no huge pages is not an error
    std::memset(p, 0, length);
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// The input: small integers (0..12) in the case's element type, so that every sum is exact.
void fill_input(const Case& c, Buffer& b) {
  const size_t n = b.n / c.itemsize;
  for (size_t i = 0; i < n; ++i) {
    const int v = static_cast<int>((i * 7 + i / 13) % 13);
    unsigned char* e = b.p + i * c.itemsize;
    if (c.dtype == "float32") {
      const float f = static_cast<float>(v);
      std::memcpy(e, &f, 4);
    } else if (c.dtype == "float64") {
      const double d = v;
      std::memcpy(e, &d, 8);
    } else {
      std::memset(e, 0, c.itemsize);
      e[0] = static_cast<unsigned char>(v);  // little-endian integers; any bytes for the copies
    }
  }
}

double now_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Row {
  std::string name, mode;
  int threads = 0;
  bool na = false;
  std::string na_reason;
  double a_ns = 0, b_ns = 0, ratio = 1, lo = 1, hi = 1;  // ratio: time(A) / time(B) = speed of B over A
  int rounds = 0;
  long batch = 0;
};

// Times f_a and f_b alternately (see the file's comment) for about `seconds`; before each round,
// swap(round / 2 % 2): the two libraries trade output buffers every two rounds, so that where a
// buffer lies (its page offsets against the input's, its cache sets) favours neither.
template <typename FA, typename FB, typename Swap>
void measure(Row& row, FA&& f_a, FB&& f_b, Swap&& swap, double seconds) {
  swap(0);
  for (int i = 0; i < 3; ++i) f_a(), f_b();  // warm: caches, pages, the arena's threads
  // The batch: enough calls of the slower one for ~1 ms.
  long batch = 1;
  for (;;) {
    double t0 = now_ns();
    for (long i = 0; i < batch; ++i) f_a();
    double t1 = now_ns();
    for (long i = 0; i < batch; ++i) f_b();
    double t2 = now_ns();
    if (std::max(t1 - t0, t2 - t1) >= 1e6 || batch >= (1L << 24)) break;
    batch *= 2;
  }
  std::vector<double> ta, tb, ratios;
  const double end = now_ns() + seconds * 1e9;
  for (int round = 0; round < 15 || (now_ns() < end && round < 100000); ++round) {
    swap(round / 2 % 2);
    double a = 0, b = 0;
    if (round % 2 == 0) {
      double t0 = now_ns();
      for (long i = 0; i < batch; ++i) f_a();
      double t1 = now_ns();
      for (long i = 0; i < batch; ++i) f_b();
      double t2 = now_ns();
      a = t1 - t0, b = t2 - t1;
    } else {
      double t0 = now_ns();
      for (long i = 0; i < batch; ++i) f_b();
      double t1 = now_ns();
      for (long i = 0; i < batch; ++i) f_a();
      double t2 = now_ns();
      b = t1 - t0, a = t2 - t1;
    }
    ta.push_back(a / batch), tb.push_back(b / batch), ratios.push_back(a / b);
  }
  row.a_ns = median(ta), row.b_ns = median(tb);
  row.rounds = static_cast<int>(ratios.size());
  row.batch = batch;
  std::sort(ratios.begin(), ratios.end());
  row.ratio = median(ratios);
  // 95% interval of the median: the order statistics n/2 -+ 1.96 sqrt(n)/2 (binomial, normal approx.).
  const double n = ratios.size(), h = 0.98 * std::sqrt(n);
  const long lo = std::max(0L, static_cast<long>(std::floor(n / 2 - h)));
  const long hi = std::min(static_cast<long>(n) - 1, static_cast<long>(std::ceil(n / 2 + h)));
  row.lo = ratios[lo], row.hi = ratios[hi];
}

std::string fmt_time(double ns) {
  char buf[32];
  if (ns < 1e3)
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (ns < 1e6)
    std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  return buf;
}

void usage(FILE* f) {
  std::fprintf(f,
               "tessera_compare --a LIB --b LIB --cases FILE [--label-a NAME] [--label-b NAME] [--filter REGEX]\n"
               "                [--threads LIST] [--seconds S] [--dst-offset N] [--src-offset N] [--offset-both]\n"
               "  Loads two libtessera builds in one process and times them alternately, case by case.\n"
               "  --a, --b LIB       the two libraries (A: the baseline, B: the one compared with it)\n"
               "  --cases FILE       the cases (bench/cases.json)\n"
               "  --filter REGEX     only the cases whose name REGEX matches (ECMAScript, substring)\n"
               "  --threads LIST     comma-separated thread counts (default: 1 and all of this machine's)\n"
               "  --seconds S        time per row and library (default 0.25)\n"
               "  --dst-offset N     B's output starts N bytes (0-4095) past a 64-byte boundary, A's on one\n"
               "                     (with --a and --b the same library: the cost of an unaligned output)\n"
               "  --src-offset N     B's input starts N bytes (0-4095) past a 64-byte boundary, A's on one\n"
               "  --offset-both      A's output and input at the same offsets as B's (two libraries compared\n"
               "                     into dst + 16, say)\n"
               "Prints per row each one's median time per call and B's speed over A (time(A)/time(B) per\n"
               "round: > 1 means B is faster) with its 95%% interval, then the geometric mean.\n");
}

}  // namespace

int main(int argc, char** argv) {
  Lib a, b;
  a.label = "A", b.label = "B";
  std::string cases_path, filter;
  std::vector<int> threads;
  double seconds = 0.25;
  long dst_offset = 0;  // B's output: this many bytes past a 64-byte boundary (A's: on one)
  long src_offset = 0;  // B's input: this many bytes past a 64-byte boundary (A's: on one)
  bool offset_both = false;  // A's input and output at the same offsets as B's
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--a") a.path = value();
    else if (arg == "--b") b.path = value();
    else if (arg == "--label-a") a.label = value();
    else if (arg == "--label-b") b.label = value();
    else if (arg == "--cases") cases_path = value();
    else if (arg == "--filter") filter = value();
    else if (arg == "--seconds") seconds = std::atof(value().c_str());
    else if (arg == "--offset-both") offset_both = true;
    else if (arg == "--dst-offset" || arg == "--src-offset") {
      const std::string v = value();
      char* end = nullptr;
      long& offset = arg == "--dst-offset" ? dst_offset : src_offset;
      offset = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || offset < 0 || offset > 4095)
        die(arg + ": '" + v + "' is not a byte count from 0 to 4095");
    }
    else if (arg == "--threads") {
      const std::string list = value();
      size_t pos = 0;
      while (pos <= list.size()) {
        const size_t comma = std::min(list.find(',', pos), list.size());
        const int t = std::atoi(list.substr(pos, comma - pos).c_str());
        if (t <= 0) die("--threads: bad count in '" + list + "'");
        threads.push_back(t);
        pos = comma + 1;
      }
    } else if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      die("unknown argument " + arg);
    }
  }
  if (a.path.empty() || b.path.empty() || cases_path.empty()) {
    usage(stderr);
    die("--a, --b and --cases are required");
  }
  if (threads.empty()) {
    threads.push_back(1);
    const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (all > 1) threads.push_back(all);
  }
  a.open(), b.open();
  std::printf("A = %s: %s (tessera %s)\nB = %s: %s (tessera %s)\n", a.label.c_str(), a.path.c_str(),
              a.version ? a.version() : "?", b.label.c_str(), b.path.c_str(), b.version ? b.version() : "?");
  if (dst_offset != 0 && offset_both)
    std::printf("Both outputs start %ld bytes past a 64-byte boundary.\n", dst_offset);
  else if (dst_offset != 0)
    std::printf("A's output starts on a 64-byte boundary, B's %ld bytes past one.\n", dst_offset);
  if (src_offset != 0 && offset_both)
    std::printf("Both inputs start %ld bytes past a 64-byte boundary.\n", src_offset);
  else if (src_offset != 0)
    std::printf("A's input starts on a 64-byte boundary, B's %ld bytes past one.\n", src_offset);
  std::printf("ratio = time(A) / time(B), the median of %g s of ABBA rounds per row: > 1 means B is faster;\n"
              "[lo, hi] its 95%% interval. `plan`: tessera_plan_execute into a touched output; `one-shot`: the\n"
              "C call with its planning (outputs <= 64 KiB).\n\n",
              seconds);

  size_t llc = 0;  // the last-level cache's bytes (sysfs): a reduction's input copies span twice it
  std::vector<Case> cases;
  try {
    llc = tessera::bench::last_level_cache_bytes();
    cases = tessera::bench::load_cases(cases_path);
  } catch (const std::exception& e) {
    die(e.what());
  }
  if (!filter.empty()) {
    const std::regex re(filter);
    cases.erase(std::remove_if(cases.begin(), cases.end(), [&](const Case& c) { return !std::regex_search(c.name, re); }),
                cases.end());
    if (cases.empty()) die("no case name matches --filter " + filter);
  }

  std::printf("%-14s %-9s %3s %11s %11s %7s %17s %7s\n", "case", "mode", "thr", a.label.substr(0, 11).c_str(),
              b.label.substr(0, 11).c_str(), "ratio", "95% interval", "rounds");
  std::fflush(stdout);
  std::vector<Row> rows;
  for (const Case& c : cases) {
    // A reduction's input rotates among rotation_copies() copies (limit_loops.h), as tile_bench's:
    // every call reads its gradient from DRAM, none from what the last call left in the L3.
    std::vector<std::unique_ptr<Buffer>> srcs;
    srcs.push_back(std::make_unique<Buffer>(c.input_bytes));
    fill_input(c, *srcs[0]);
    const size_t ncopies =
        tessera::bench::is_reduction(c.op) ? tessera::bench::rotation_copies(c.input_bytes, llc) : 1;
    while (srcs.size() < ncopies) {
      srcs.push_back(std::make_unique<Buffer>(c.input_bytes));
      std::memcpy(srcs.back()->p, srcs[0]->p, c.input_bytes);
    }
    // B's copies of the input, --src-offset bytes past a 64-byte boundary (without it, A's own).
    const size_t soff = static_cast<size_t>(src_offset);
    std::vector<std::unique_ptr<Buffer>> srcs_b;
    for (size_t k = 0; soff != 0 && k < ncopies; ++k) {
      srcs_b.push_back(std::make_unique<Buffer>(c.input_bytes, soff));
      std::memcpy(srcs_b.back()->p + soff, srcs[0]->p, c.input_bytes);
    }
    size_t next_src = 0;
    const auto src = [&] { return srcs[next_src++ % srcs.size()]->p; };  // the next copy, for either library
    const auto src_b = [&] { return soff == 0 ? src() : srcs_b[next_src++ % srcs_b.size()]->p + soff; };
    // Both buffers have room for B's offset: they are traded between A and B (see measure()), and
    // each library keeps its own place in whichever it writes.
    const size_t off = static_cast<size_t>(dst_offset), off_a = offset_both ? off : 0;
    const auto src_a = [&] { return offset_both ? src_b() : src(); };
    Buffer dst_a(c.out_bytes, off), dst_b(c.out_bytes, off);
    PlanT* pa = make_plan(a, c);
    PlanT* pb = make_plan(b, c);
    const bool oneshot = c.out_bytes <= (64u << 10);
    for (int t : threads) {
      tbb::task_arena arena(t);
      for (int mode = 0; mode < (oneshot ? 2 : 1); ++mode) {
        Row row;
        row.name = c.name, row.mode = mode == 0 ? "plan" : "one-shot", row.threads = t;
        const OneShot oa{&a, &c}, ob{&b, &c};
        if (mode == 0 && (!pa || !pb)) {
          row.na = true, row.na_reason = std::string(!pa ? a.label : b.label) + " has no " + op_name(c.op) + " plan";
        } else if (mode == 1 && (!oa.available() || !ob.available())) {
          row.na = true, row.na_reason = std::string(!oa.available() ? a.label : b.label) + " has no one-shot " +
                                         op_name(c.op);
        }
        if (!row.na) {
          arena.execute([&] {
            unsigned char* out_a = dst_a.p + off_a;
            unsigned char* out_b = dst_b.p + off;
            auto run_a = [&] {
              unsigned char* in = src_a();
              const Status s = mode == 0 ? a.plan_execute(pa, in, out_a, c.out_bytes) : oa(in, out_a, c.out_bytes);
              if (s != 0) die(a.label + ": case " + c.name + " failed: " + a.error());
            };
            auto run_b = [&] {
              unsigned char* in = src_b();
              const Status s = mode == 0 ? b.plan_execute(pb, in, out_b, c.out_bytes) : ob(in, out_b, c.out_bytes);
              if (s != 0) die(b.label + ": case " + c.name + " failed: " + b.error());
            };
            auto swap = [&](int swapped) {
              out_a = (swapped ? dst_b.p : dst_a.p) + off_a;
              out_b = (swapped ? dst_a.p : dst_b.p) + off;
            };
            std::memset(dst_a.p, 0xa5, c.out_bytes + off);
            std::memset(dst_b.p, 0x5a, c.out_bytes + off);
            run_a(), run_b();
            if (std::memcmp(dst_a.p + off_a, dst_b.p + off, c.out_bytes) != 0)
              die("case " + c.name + " (" + row.mode + ", " + std::to_string(t) + " threads): the outputs of " +
                  a.label + " and " + b.label + " differ");
            measure(row, run_a, run_b, swap, seconds);
          });
        }
        if (row.na) {
          std::printf("%-14s %-9s %3d %11s %11s %7s   (%s)\n", row.name.c_str(), row.mode.c_str(), t, "n/a", "n/a",
                      "", row.na_reason.c_str());
        } else {
          const bool beyond = row.ratio < 0.95 || row.ratio > 1.05;
          char interval[40];
          std::snprintf(interval, sizeof interval, "[%.3f, %.3f]", row.lo, row.hi);
          std::printf("%-14s %-9s %3d %11s %11s %7.3f %17s %7d%s\n", row.name.c_str(), row.mode.c_str(), t,
                      fmt_time(row.a_ns).c_str(), fmt_time(row.b_ns).c_str(), row.ratio, interval, row.rounds,
                      beyond ? (row.lo > 1 || row.hi < 1 ? "  <<" : "  < (interval spans 1)") : "");
        }
        std::fflush(stdout);
        rows.push_back(row);
      }
    }
    if (pa) a.plan_destroy(pa);
    if (pb) b.plan_destroy(pb);
  }

  double log_sum = 0;
  int n = 0;
  std::vector<const Row*> faster, slower;
  for (const Row& r : rows) {
    if (r.na) continue;
    log_sum += std::log(r.ratio), ++n;
    if (r.ratio > 1.05) faster.push_back(&r);
    if (r.ratio < 0.95) slower.push_back(&r);
  }
  std::printf("\nsummary: %d rows", n);
  if (n > 0) std::printf(", geometric mean of time(%s)/time(%s) = %.3f", a.label.c_str(), b.label.c_str(),
                         std::exp(log_sum / n));
  std::printf("\n");
  auto list = [](const char* what, const std::vector<const Row*>& v) {
    std::printf("  %s: %zu%s", what, v.size(), v.empty() ? "\n" : "\n");
    for (const Row* r : v)
      std::printf("    %-14s %-9s %d thr  %.3f [%.3f, %.3f]%s\n", r->name.c_str(), r->mode.c_str(), r->threads,
                  r->ratio, r->lo, r->hi, r->lo <= 1 && r->hi >= 1 ? "  (interval spans 1: noise)" : "");
  };
  list(("B faster by more than 5% (" + b.label + ")").c_str(), faster);
  list(("B slower by more than 5% (" + b.label + ")").c_str(), slower);
  return 0;
}
