// tessera's benchmark. For each case of cases.json, at 1 thread and at all hardware threads, with
// <op> the case's operation (tile, broadcast_to, expand or repeat; cases.h):
//   <op>/<case>/threads:<T>          Plan::execute into a preallocated, already touched output
//   <op>_alloc/<case>/threads:<T>    the allocating call, e.g. tessera::tile (the Array is freed each time)
//   <op>_c/<case>/threads:<T>        the one-shot C call, e.g. tessera_tile, into the preallocated output
//                                    (outputs of at most 64 KiB)
//   <op>_dst16/<case>/threads:<T>    Plan::execute into the same output 16 bytes on (outputs of 60 MiB+)
//   peer/eigen/<case>/threads:<T>    broadcast_to and expand cases: Eigen's Tensor broadcast, as
//                                    TensorFlow's CPU BroadcastTo kernel runs it, into the same output
//                                    (eigen_peer.h; when Eigen was found at build time)
//   limit/<kind>/<case>/threads:<T>  the same output byte count written the fastest plain ways:
//     stream     non-temporal stores, plus one read of the input's bytes
//     store      regular stores
//     memcpy     memcpy from a second touched buffer (for reference)
//     fresh      memset into freshly mmapped 4 KiB pages (MADV_NOHUGEPAGE), then munmap
//     fresh_thp  the same on a 2 MiB aligned mapping advised MADV_HUGEPAGE
// The reductions (tile_backward, sum_to_shape, repeat_backward: the gradients) read a large input
// and write a small result; for them:
//   <op>/<case>/threads:<T>          Plan::execute into a preallocated, already touched result
//   peer/eigen/<case>/threads:<T>    Eigen's Tensor sum over the reshaped gradient, as TensorFlow's
//                                    reduce_sum runs it (eigen_peer.h)
//   limit/read/<case>/threads:<T>    the input's bytes read once from DRAM: a float32 vector sum with
//                                    eight independent accumulators (sum_floats, limit_loops.h)
//   limit/stream/<case>/threads:<T>  the input read once (the float32 sum of `read`) and the result
//                                    streamed in the same pass, a few lines of output after each few
//                                    lines of input (sum_stream): the bytes a plan moves, both ways
//                                    at once. A gradient of results half its size (rep2_bwd,
//                                    rep_counts_bwd, rep_ragged_bwd) cannot read at `read`'s speed
//                                    while it writes them; this limit says how fast it can.
// Every copying case also has limit/read: its output's byte count read once from DRAM, beside
// `stream` (the tables print both on every row).
//
// Reading from DRAM (the `read` limit and the reductions): a reduction's input, and the buffers of
// every `read` limit, are rotation_copies() copies (limit_loops.h: the copies read since a copy's last
// read span at least twice the last-level cache, read from sysfs; the program stops if it cannot be
// read), and each timed call reads the next copy — tessera's plan, the Eigen peer, `read` and the
// reductions' `stream` alike. Re-reading one 64 MiB buffer, as before, kept part of it in the 32 MiB
// L3 and reported up to 165 GB/s from two cores. So every ratio against `read` (and every reduction's
// GB/s) is now of bytes that come from DRAM, not partly from the cache: the ratios of runs before
// this change mean something else. The copies sit in one mapping advised MADV_HUGEPAGE (huge pages
// change the read speed by ~20% on Zen 5), the kind of pages numpy gives its arrays of 4 MiB and more
// and that bench/python_bench.py's copies therefore have too.
// Every benchmark runs inside a tbb::task_arena of T threads (Eigen: its own pool of T threads) and
// reports bytes_per_second = bytes of output written (reductions: bytes of input read). Before a
// case is timed, its output (and Eigen's) is checked on sampled indices against the op's index
// mapping (source_index in cases.h, e.g. out[i] = in[i % shape] for tile; for a reduction, the
// exact sum of the elements summands() names, the input being multiples of 1/8 whose sums are
// exact in any order); a wrong output stops the program.
//
// Usage: tile_bench [--cases=FILE] [--case_filter=REGEX] [--target=NAME] [--describe] [Google Benchmark flags]
// --target=NAME forces the Highway target tessera and the limit loops dispatch to (a target compiled
// in and supported by this CPU, e.g. AVX2 on an AVX-512 machine: the other kernels' table on one
// machine); the run stops if tessera then dispatches elsewhere.

#include <benchmark/benchmark.h>
#include <hwy/targets.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#include <tessera/tessera.h>
#include <tessera/tessera.hpp>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_config.h"  // TESSERA_BENCH_CASES: the default cases file; TESSERA_BENCH_EIGEN_NEEDS_AVX
#include "case_plan.h"
#include "cases.h"
#include "eigen_peer.h"
#include "limit_loops.h"

namespace tessera::bench {
namespace {

constexpr std::size_t kAlign = 64;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// A limit below this many bytes runs on the calling thread: it is done before a worker wakes up
// (tessera's executor likewise runs small outputs serially).
constexpr std::size_t kParallelMinBytes = std::size_t{256} << 10;
constexpr uint8_t kFillByte = 0x5a;
// The destination offset of the <op>_dst16 runs (bytes past a 64-byte line), and the outputs
// that get one (the 64 MiB cases: issue 24's "any destination alignment").
constexpr std::size_t kDstOffset = 16;
constexpr std::size_t kDstOffsetMinBytes = std::size_t{60} << 20;
constexpr int kSamples = 64;  // output elements checked per case, plus the first and the last

// Google Benchmark flags applied unless given on the command line (later flags win): about
// 10 minutes for the 33 cases on 2 cores (470 benchmarks).
const char* const kDefaultFlags[] = {
    "--benchmark_min_time=0.1",
    "--benchmark_repetitions=7",
    "--benchmark_enable_random_interleaving=true",
    "--benchmark_display_aggregates_only=true",
};

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "tile_bench: %s\n", message.c_str());
  std::exit(EXIT_FAILURE);
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Deterministic input bytes, never 0 (so neither a zeroed page nor the 0 poison passes the check).
void fill_input(unsigned char* p, std::size_t n) {
  uint64_t x = 0x2545f4914f6cdd1dULL;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    p[i] = static_cast<unsigned char>(1 + (x >> 33) % 255);
  }
}

// A reduction's input: elements k / 8 with k in [-16, 16] (float32 or float64), so that every sum
// of up to 2^18 of them is exact in float32 whatever the order of the additions: the results of
// tessera and of Eigen are compared with the exact sum bit for bit.
void fill_gradient(unsigned char* p, const Case& c) {
  const std::size_t count = c.input_bytes / c.itemsize;
  uint64_t x = 0x2545f4914f6cdd1dULL;
  for (std::size_t i = 0; i < count; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const double v = (static_cast<double>((x >> 33) % 33) - 16) / 8;
    if (c.dtype == "float32") {
      const float f = static_cast<float>(v);
      std::memcpy(p + 4 * i, &f, 4);
    } else if (c.dtype == "float64") {
      std::memcpy(p + 8 * i, &v, 8);
    } else {
      die("case \"" + c.name + "\": the benchmark's reductions sum float32 or float64, not " + c.dtype);
    }
  }
}

// The float32 or float64 element at offset_bytes of p, as a double.
double element(const unsigned char* p, const Case& c, int64_t offset_bytes) {
  if (c.itemsize == 4) {
    float f;
    std::memcpy(&f, p + offset_bytes, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p + offset_bytes, 8);
  return d;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return "[" + s + "]";
}

std::string hex(const unsigned char* p, std::size_t n) {
  std::string s;
  char byte[4];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(byte, sizeof byte, "%02x", p[i]);
    s += byte;
  }
  return s;
}

// Output pieces of a limit: n = 1 for small outputs, else one per thread; piece k covers
// [begin(k), begin(k+1)) with begins on 64-byte boundaries.
std::size_t piece_count(std::size_t bytes, int threads) { return bytes < kParallelMinBytes ? 1 : threads; }
std::size_t piece_begin(std::size_t bytes, std::size_t k, std::size_t n) {
  return k >= n ? bytes : bytes / n * k / kAlign * kAlign;
}

// Runs f(k, n) for each piece k of n, across the current arena's threads.
template <class F>
void for_each_piece(std::size_t bytes, int threads, const F& f) {
  const std::size_t n = piece_count(bytes, threads);
  if (n == 1) return f(0, 1);
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, n, 1),
      [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t k = r.begin(); k < r.end(); ++k) f(k, n);
      },
      tbb::static_partitioner());
}

// Whether the Eigen peer can run on this CPU (it may have been compiled with -mavx).
bool eigen_runs_here() {
#if TESSERA_BENCH_EIGEN_NEEDS_AVX
  return __builtin_cpu_supports("avx");
#else
  return true;
#endif
}

// The bytes a case's throughput counts: the output written, or for a reduction the input read.
std::size_t counted_bytes(const Case& c) { return is_reduction(c.op) ? c.input_bytes : c.out_bytes; }

// `count` copies of `bytes` bytes in one anonymous mapping advised MADV_HUGEPAGE (each copy 64-byte
// aligned, 2 MiB aligned from 1 MiB up), touched; next() cycles through them.
class Copies {
 public:
  Copies(std::size_t bytes, std::size_t count)
      : bytes_(bytes),
        stride_(round_up(std::max<std::size_t>(bytes, 1), bytes >= (kHugePage >> 1) ? kHugePage : kAlign)),
        count_(count),
        length_(stride_ * count + kHugePage) {
    map_ = mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map_ == MAP_FAILED)
      die("out of memory mapping " + std::to_string(count) + " copies of " + std::to_string(bytes) + " bytes");
    base_ = reinterpret_cast<unsigned char*>(round_up(reinterpret_cast<std::uintptr_t>(map_), kHugePage));
    if (madvise(base_, stride_ * count_, MADV_HUGEPAGE) != 0) die("madvise(MADV_HUGEPAGE) failed");
  }
  Copies(const Copies&) = delete;
  Copies& operator=(const Copies&) = delete;
  ~Copies() { munmap(map_, length_); }

  // Fills copy 0 with fill(p), then copies it to every other copy.
  template <class F>
  void fill(const F& f) {
    f(base_);
    for (std::size_t i = 1; i < count_; ++i) std::memcpy(at(i), base_, bytes_);
  }
  unsigned char* at(std::size_t i) const { return base_ + i % count_ * stride_; }
  unsigned char* next() { return at(next_++); }
  std::size_t count() const { return count_; }

 private:
  std::size_t bytes_, stride_, count_, length_;
  void* map_ = nullptr;
  unsigned char* base_ = nullptr;
  std::size_t next_ = 0;
};

// A copying case's input and the shared output: `bytes` bytes on the pages of the gradient copies
// (Copies: a mapping 2 MiB aligned and advised MADV_HUGEPAGE — the pages numpy gives its
// arrays of 4 MiB and more, and bench/compare's buffers), so that the tables' results, limits and
// peers all write the kind of pages a user's arrays have.
class Buffer {
 public:
  explicit Buffer(std::size_t bytes) : copies_(bytes, 1) {}
  unsigned char* data() const { return copies_.at(0); }

 private:
  Copies copies_;
};

// The last-level cache's size (sysfs), once; the program stops if it cannot be read.
std::size_t llc_bytes() {
  static const std::size_t bytes = [] {
    try {
      return last_level_cache_bytes();
    } catch (const std::exception& e) {
      die(std::string("the last-level cache's size, which the read limit is checked against: ") + e.what());
    }
  }();
  return bytes;
}

// One case, ready to run: its input (a reduction: rotation_copies() copies of it), plan and Eigen
// peer, built and checked on first use.
struct Prepared {
  explicit Prepared(const Case& c_) : c(c_), input(is_reduction(c_.op) ? 0 : c_.input_bytes) {
    if (is_reduction(c.op)) {
      grads.emplace(c.input_bytes, rotation_copies(c.input_bytes, llc_bytes()));
      grads->fill([&](unsigned char* p) { fill_gradient(p, c); });
    } else {
      fill_input(input.data(), c.input_bytes);
    }
  }
  // The input (a reduction: its first copy), as checked.
  const unsigned char* in() const { return grads ? grads->at(0) : input.data(); }
  // The input of the next timed call: a reduction's next copy, else the one input.
  const unsigned char* next_in() { return grads ? grads->next() : input.data(); }
  const Case& c;
  Buffer input;                 // a copying case's input
  std::optional<Copies> grads;  // a reduction's input copies
  std::optional<tessera::Plan> plan;
  std::unique_ptr<EigenPeer> eigen;  // broadcast_to, expand and reduction cases, when built
};

class Bench {
 public:
  Bench(std::vector<Case> cases, std::vector<int> threads) : cases_(std::move(cases)), threads_(std::move(threads)) {
    prepared_.resize(cases_.size());
    for (int t : threads_) arenas_.push_back(std::make_unique<tbb::task_arena>(t));
    for (const Case& c : cases_) max_out_bytes_ = std::max(max_out_bytes_, c.out_bytes);
  }

  const std::vector<Case>& cases() const { return cases_; }
  const std::vector<int>& threads() const { return threads_; }

  // The arena of `threads` threads. One per thread count for the whole run: creating and
  // destroying arenas per benchmark left oneTBB 2021.8's worker outside the new arenas.
  tbb::task_arena& arena(int threads) {
    for (std::size_t i = 0; i < threads_.size(); ++i)
      if (threads_[i] == threads) return *arenas_[i];
    die("no arena of " + std::to_string(threads) + " threads");
  }

  // The case's input and plan; the first call checks tessera's output for it at every thread count.
  Prepared& prepare(std::size_t index) {
    if (!prepared_[index]) {
      auto p = std::make_unique<Prepared>(cases_[index]);
      try {
        p->plan.emplace(make_plan(p->c));
      } catch (const std::exception& e) {
        die("case \"" + p->c.name + "\": tessera::Plan for " + op_name(p->c.op) + " failed: " + e.what());
      }
      if (eigen_runs_here()) p->eigen = make_eigen_peer(p->c);
      check(*p);
      prepared_[index] = std::move(p);
    }
    return *prepared_[index];
  }

  // The shared output buffer, touched: every case and limit writes these same pages.
  unsigned char* output() { return touched(output_); }
  // A second touched buffer, the source of the memcpy limit.
  unsigned char* copy_source() { return touched(copy_source_); }
  // The copies a copying case's `read` limit reads `bytes` of, shared by the cases of that size.
  Copies& read_copies(std::size_t bytes) {
    auto& copies = read_copies_[bytes];
    if (!copies) {
      copies = std::make_unique<Copies>(bytes, rotation_copies(bytes, llc_bytes()));
      copies->fill([&](unsigned char* p) { std::memset(p, kFillByte, bytes); });
    }
    return *copies;
  }

 private:
  unsigned char* touched(std::optional<Buffer>& buffer) {
    if (!buffer) {
      buffer.emplace(max_out_bytes_ + kDstOffset);  // room for the dst + kDstOffset runs
      std::memset(buffer->data(), kFillByte, max_out_bytes_ + kDstOffset);
    }
    return buffer->data();
  }

  void check(Prepared& p) {
    const Case& c = p.c;
    const tessera::Plan& plan = *p.plan;
    if (plan.shape().to_vector() != c.out_shape || plan.nbytes() != c.out_bytes)
      die("case \"" + c.name + "\": plan output shape " + join(plan.shape().to_vector()) + " (" +
          std::to_string(plan.nbytes()) + " bytes), expected " + join(c.out_shape) + " (" +
          std::to_string(c.out_bytes) + " bytes)");
    unsigned char* out = output();
    if (is_reduction(c.op)) return check_reduction(p, out);
    for (int t : threads_) {
      tbb::task_arena& arena = this->arena(t);
      std::memset(out, 0, c.out_bytes);  // poison: input bytes are never 0
      arena.execute([&] { plan.execute(p.in(), out, c.out_bytes); });
      check_samples(p, out, op_name(c.op), t);

      const std::string alloc = std::string(op_name(c.op)) + "_alloc";
      tessera::Array array;
      arena.execute([&] { array = make_array(c, p.in()); });
      if (array.shape().to_vector() != c.out_shape || array.nbytes() != c.out_bytes)
        die("case \"" + c.name + "\": " + alloc + " returned shape " + join(array.shape().to_vector()) + " (" +
            std::to_string(array.nbytes()) + " bytes), expected " + join(c.out_shape));
      if (reinterpret_cast<std::uintptr_t>(array.data()) % kAlign != 0)
        die("case \"" + c.name + "\": " + alloc + " output is not 64-byte aligned");
      check_samples(p, static_cast<const unsigned char*>(array.data()), alloc.c_str(), t);

      if (p.eigen) {
        std::memset(out, 0, c.out_bytes);
        p.eigen->run(p.in(), out, t);
        check_samples(p, out, "the Eigen peer", t);
      }
    }
  }

  // A reduction: the plan's result and Eigen's at every thread count, poisoned with NaNs first.
  void check_reduction(const Prepared& p, unsigned char* out) {
    for (int t : threads_) {
      std::memset(out, 0xff, p.c.out_bytes);
      arena(t).execute([&] { p.plan->execute(p.in(), out, p.c.out_bytes); });
      check_sums(p, out, op_name(p.c.op), t);
      if (p.eigen) {
        std::memset(out, 0xff, p.c.out_bytes);
        p.eigen->run(p.in(), out, t);
        check_sums(p, out, "the Eigen peer", t);
      }
    }
  }

  // Compares sampled result elements of a reduction with the exact sums of their summands.
  static void check_sums(const Prepared& p, const unsigned char* out, const char* what, int threads) {
    const Case& c = p.c;
    const auto count = static_cast<int64_t>(c.out_bytes / c.itemsize);
    const std::size_t n = c.out_shape.size(), nd = c.shape.size();
    uint64_t rng = std::hash<std::string>{}(c.name);
    for (int s = 0; s < kSamples + 2 && count > 0; ++s) {
      const int64_t k = s == 0 ? 0 : s == 1 ? count - 1 : static_cast<int64_t>(splitmix64(rng) % count);
      std::vector<int64_t> out_index(n);
      int64_t rest = k;
      for (std::size_t i = n; i-- > 0;) {
        out_index[i] = rest % c.out_shape[i];
        rest /= c.out_shape[i];
      }
      // The exact sum over the cartesian product of the summands' indices, an odometer.
      const std::vector<std::vector<int64_t>> axes = summands(c, out_index);
      double want = 0;
      std::vector<std::size_t> at(nd, 0);
      bool empty = false;
      for (const auto& a : axes) empty = empty || a.empty();
      while (!empty) {
        int64_t offset = 0;
        for (std::size_t j = 0; j < nd; ++j) offset += axes[j][at[j]] * c.strides[j];
        want += element(p.in(), c, offset);
        std::size_t j = nd;
        while (j-- > 0 && ++at[j] == axes[j].size()) at[j] = 0;
        if (j == static_cast<std::size_t>(-1)) break;
      }
      const double got = element(out, c, k * static_cast<int64_t>(c.itemsize));
      if (got != want)
        die("WRONG OUTPUT: case \"" + c.name + "\", " + what + " at " + std::to_string(threads) +
            " thread(s): result " + join(out_index) + " is " + std::to_string(got) + ", the exact sum is " +
            std::to_string(want) + ". The plan:\n" + p.plan->describe());
    }
  }

  // Compares sampled output elements with the input elements the index mapping names.
  static void check_samples(const Prepared& p, const unsigned char* out, const char* what, int threads) {
    const Case& c = p.c;
    const auto count = static_cast<int64_t>(c.out_bytes / c.itemsize);
    const std::size_t nd = c.out_shape.size();
    uint64_t rng = std::hash<std::string>{}(c.name);
    for (int s = 0; s < kSamples + 2 && count > 0; ++s) {
      const int64_t k = s == 0 ? 0 : s == 1 ? count - 1 : static_cast<int64_t>(splitmix64(rng) % count);
      std::vector<int64_t> out_index(nd);
      int64_t rest = k;
      for (std::size_t i = nd; i-- > 0;) {
        out_index[i] = rest % c.out_shape[i];
        rest /= c.out_shape[i];
      }
      const std::vector<int64_t> in_index = source_index(c, out_index);
      int64_t offset = 0;
      for (std::size_t i = 0; i < c.shape.size(); ++i) offset += in_index[i] * c.strides[i];
      const unsigned char* got = out + k * c.itemsize;
      const unsigned char* want = p.in() + offset;
      if (std::memcmp(got, want, c.itemsize) != 0)
        die("WRONG OUTPUT: case \"" + c.name + "\", " + what + " at " + std::to_string(threads) +
            " thread(s): output " + join(out_index) + " holds 0x" + hex(got, c.itemsize) + ", input " + join(in_index) +
            " is 0x" + hex(want, c.itemsize) + ". The plan:\n" + p.plan->describe());
    }
  }

  std::vector<Case> cases_;
  std::vector<int> threads_;
  std::vector<std::unique_ptr<tbb::task_arena>> arenas_;
  std::vector<std::unique_ptr<Prepared>> prepared_;
  std::size_t max_out_bytes_ = 0;
  std::optional<Buffer> output_, copy_source_;
  std::map<std::size_t, std::unique_ptr<Copies>> read_copies_;
};

void report_bytes(benchmark::State& state, const Case& c) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(counted_bytes(c)));
  state.counters["output_bytes"] = static_cast<double>(c.out_bytes);
  state.counters["input_bytes"] = static_cast<double>(c.input_bytes);
}

void run_tile(benchmark::State& state, Bench& bench, std::size_t index, int threads) {
  Prepared& p = bench.prepare(index);
  unsigned char* out = bench.output();
  tbb::task_arena& arena = bench.arena(threads);
  arena.execute([&] {
    for (auto _ : state) p.plan->execute(p.next_in(), out, p.c.out_bytes);
  });
  state.SetLabel(p.plan->kernel_path());
  report_bytes(state, p.c);
}

// Plan::execute into the same output kDstOffset bytes on (numpy's large arrays start 16 bytes
// into a page): registered for outputs of kDstOffsetMinBytes or more, beside the aligned run.
void run_tile_dst_offset(benchmark::State& state, Bench& bench, std::size_t index, int threads) {
  Prepared& p = bench.prepare(index);
  unsigned char* out = bench.output() + kDstOffset;
  tbb::task_arena& arena = bench.arena(threads);
  arena.execute([&] {
    for (auto _ : state) p.plan->execute(p.input.data(), out, p.c.out_bytes);
  });
  state.SetLabel(p.plan->kernel_path());
  report_bytes(state, p.c);
}

void run_tile_alloc(benchmark::State& state, Bench& bench, std::size_t index, int threads) {
  Prepared& p = bench.prepare(index);
  tbb::task_arena& arena = bench.arena(threads);
  arena.execute([&] {
    for (auto _ : state) {
      tessera::Array array = make_array(p.c, p.in());
      benchmark::DoNotOptimize(array.data());
    }
  });
  report_bytes(state, p.c);
}

// The Eigen peer into the preallocated output, on its own pool of `threads` threads.
void run_eigen(benchmark::State& state, Bench& bench, std::size_t index, int threads) {
  Prepared& p = bench.prepare(index);
  unsigned char* out = bench.output();
  if (!p.eigen) {
    state.SkipWithError("no Eigen peer for this case");
    return;
  }
  for (auto _ : state) {
    p.eigen->run(p.next_in(), out, threads);
    benchmark::ClobberMemory();
  }
  state.SetLabel(p.eigen->describe());
  report_bytes(state, p.c);
}

// The one-shot C call (e.g. tessera_tile: plan and execute in one call) into the preallocated output;
// registered for outputs of at most kOneShotMaxBytes, where its fixed cost shows.
constexpr std::size_t kOneShotMaxBytes = std::size_t{64} << 10;

void run_tile_c(benchmark::State& state, Bench& bench, std::size_t index, int threads) {
  Prepared& p = bench.prepare(index);
  unsigned char* out = bench.output();
  tbb::task_arena& arena = bench.arena(threads);
  const Case& c = p.c;
  tessera_status status = TESSERA_OK;
  arena.execute([&] {
    for (auto _ : state) {
      status = c_one_shot(c, p.in(), out, c.out_bytes);
      benchmark::DoNotOptimize(status);
    }
  });
  if (status != TESSERA_OK) state.SkipWithError(tessera_last_error());
  report_bytes(state, c);
}

// The limits of the copying ops (all six) and of a reduction (read and stream).
enum class Limit { stream, store, memcpy, fresh, fresh_thp, read };

const char* limit_name(Limit kind) {
  switch (kind) {
    case Limit::stream: return "stream";
    case Limit::store: return "store";
    case Limit::memcpy: return "memcpy";
    case Limit::fresh: return "fresh";
    case Limit::fresh_thp: return "fresh_thp";
    case Limit::read: return "read";
  }
  return "?";
}

// memset of `bytes` fresh anonymous pages, split over the arena's threads; false if mmap or
// madvise failed.
bool memset_fresh(std::size_t bytes, int threads, bool huge_pages) {
  const std::size_t length = std::max<std::size_t>(bytes, 1) + (huge_pages ? kHugePage : 0);
  void* map = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return false;
  auto* p = static_cast<unsigned char*>(map);
  bool ok;
  if (huge_pages) {
    p = reinterpret_cast<unsigned char*>(round_up(reinterpret_cast<std::uintptr_t>(p), kHugePage));
    ok = madvise(p, std::max<std::size_t>(bytes, 1), MADV_HUGEPAGE) == 0;
  } else {
    ok = madvise(p, length, MADV_NOHUGEPAGE) == 0;
  }
  if (ok) {
    for_each_piece(bytes, threads, [&](std::size_t k, std::size_t n) {
      const std::size_t begin = piece_begin(bytes, k, n), end = piece_begin(bytes, k + 1, n);
      std::memset(p + begin, kFillByte, end - begin);
    });
    benchmark::ClobberMemory();
  }
  munmap(map, length);
  return ok;
}

void run_limit(benchmark::State& state, Bench& bench, std::size_t index, int threads, Limit kind) {
  Prepared& p = bench.prepare(index);
  const std::size_t bytes = p.c.out_bytes, in_bytes = p.c.input_bytes;
  unsigned char* out = bench.output();
  const unsigned char* in = p.in();
  // `read`: a reduction's input copies, else copies of the output's byte count.
  const std::size_t read_bytes = counted_bytes(p.c);
  Copies* read_from = kind != Limit::read ? nullptr : p.grads ? &*p.grads : &bench.read_copies(read_bytes);
  const unsigned char* copy_src = kind == Limit::memcpy ? bench.copy_source() : nullptr;
  const char* error = nullptr;
  std::vector<float> sums(static_cast<std::size_t>(threads), 0.0f);
  tbb::task_arena& arena = bench.arena(threads);
  arena.execute([&] {
    for (auto _ : state) {
      switch (kind) {
        case Limit::read: {
          const unsigned char* src = read_from->next();
          for_each_piece(read_bytes, threads, [&](std::size_t k, std::size_t n) {
            const std::size_t begin = piece_begin(read_bytes, k, n), end = piece_begin(read_bytes, k + 1, n);
            sums[k] = sum_floats(reinterpret_cast<const float*>(src + begin), (end - begin) / sizeof(float));
          });
          benchmark::DoNotOptimize(sums.data());
          break;
        }
        case Limit::stream: {
          if (p.grads) {  // a reduction: its gradient from DRAM, summed as its result is streamed
            const float* g = reinterpret_cast<const float*>(p.grads->next());
            for_each_piece(in_bytes, threads, [&](std::size_t k, std::size_t n) {
              const std::size_t in_begin = piece_begin(in_bytes, k, n), in_end = piece_begin(in_bytes, k + 1, n);
              const std::size_t begin = piece_begin(bytes, k, n), end = piece_begin(bytes, k + 1, n);
              sums[k] = sum_stream(g + in_begin / sizeof(float), (in_end - in_begin) / sizeof(float), out + begin,
                                   end - begin, kFillByte);
            });
            benchmark::DoNotOptimize(sums.data());
            break;
          }
          std::atomic<uint64_t> sum{0};
          // Split by the larger of input and output (a reduction's result may be small).
          for_each_piece(std::max(bytes, in_bytes), threads, [&](std::size_t k, std::size_t n) {
            // Read this piece's share of the input once, then stream this piece of the output.
            const std::size_t in_begin = piece_begin(in_bytes, k, n), in_end = piece_begin(in_bytes, k + 1, n);
            sum += sum_bytes(in + in_begin, in_end - in_begin);
            const std::size_t begin = piece_begin(bytes, k, n), end = piece_begin(bytes, k + 1, n);
            stream_fill(out + begin, end - begin, kFillByte);
          });
          benchmark::DoNotOptimize(sum.load());
          break;
        }
        case Limit::store:
          for_each_piece(bytes, threads, [&](std::size_t k, std::size_t n) {
            const std::size_t begin = piece_begin(bytes, k, n), end = piece_begin(bytes, k + 1, n);
            store_fill(out + begin, end - begin, kFillByte);
          });
          break;
        case Limit::memcpy:
          for_each_piece(bytes, threads, [&](std::size_t k, std::size_t n) {
            const std::size_t begin = piece_begin(bytes, k, n), end = piece_begin(bytes, k + 1, n);
            std::memcpy(out + begin, copy_src + begin, end - begin);
          });
          break;
        case Limit::fresh:
        case Limit::fresh_thp:
          if (!memset_fresh(bytes, threads, kind == Limit::fresh_thp)) error = "mmap or madvise failed";
          break;
      }
      benchmark::ClobberMemory();
      if (error) break;
    }
  });
  if (error) state.SkipWithError(error);
  report_bytes(state, p.c);
}

void register_benchmarks(Bench& bench) {
  for (std::size_t i = 0; i < bench.cases().size(); ++i) {
    const Case& c = bench.cases()[i];
    const std::string& name = c.name;
    const std::string op = op_name(c.op);
    // Whether the case has an Eigen peer (without building the case's input yet).
    const bool eigen = eigen_runs_here() && make_eigen_peer(c) != nullptr;
    for (int t : bench.threads()) {
      const std::string suffix = name + "/threads:" + std::to_string(t);
      Bench* b = &bench;
      benchmark::RegisterBenchmark((op + "/" + suffix).c_str(), [=](benchmark::State& s) {
        run_tile(s, *b, i, t);
      })->UseRealTime();
      if (is_reduction(c.op)) {  // the plan, Eigen's sum and the read limit
        if (eigen)
          benchmark::RegisterBenchmark(("peer/eigen/" + suffix).c_str(), [=](benchmark::State& s) {
            run_eigen(s, *b, i, t);
          })->UseRealTime();
        for (Limit kind : {Limit::read, Limit::stream})
          benchmark::RegisterBenchmark(("limit/" + std::string(limit_name(kind)) + "/" + suffix).c_str(),
                                       [=](benchmark::State& s) { run_limit(s, *b, i, t, kind); })
              ->UseRealTime();
        continue;
      }
      benchmark::RegisterBenchmark((op + "_alloc/" + suffix).c_str(), [=](benchmark::State& s) {
        run_tile_alloc(s, *b, i, t);
      })->UseRealTime();
      if (c.out_bytes >= kDstOffsetMinBytes)
        benchmark::RegisterBenchmark((op + "_dst16/" + suffix).c_str(), [=](benchmark::State& s) {
          run_tile_dst_offset(s, *b, i, t);
        })->UseRealTime();
      if (c.out_bytes <= kOneShotMaxBytes)
        benchmark::RegisterBenchmark((op + "_c/" + suffix).c_str(), [=](benchmark::State& s) {
          run_tile_c(s, *b, i, t);
        })->UseRealTime();
      if (eigen)
        benchmark::RegisterBenchmark(("peer/eigen/" + suffix).c_str(), [=](benchmark::State& s) {
          run_eigen(s, *b, i, t);
        })->UseRealTime();
      for (Limit kind : {Limit::stream, Limit::store, Limit::memcpy, Limit::fresh, Limit::fresh_thp, Limit::read})
        benchmark::RegisterBenchmark(("limit/" + std::string(limit_name(kind)) + "/" + suffix).c_str(),
                                     [=](benchmark::State& s) { run_limit(s, *b, i, t, kind); })
            ->UseRealTime();
    }
  }
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  return std::getline(in, line) ? line : "unavailable";
}

// Seconds of CPU time all CPUs have been busy (or stolen by the hypervisor), from /proc/stat.
double machine_busy_seconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return cpu == "cpu" ? static_cast<double>(user + nice + system + irq + softirq + steal) / sysconf(_SC_CLK_TCK) : 0;
}

// Seconds of CPU time this process has used, all threads.
double own_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Runs the registered benchmarks, then warns if other processes used a noticeable share of the
// CPUs meanwhile: on a 2-core machine one busy neighbour halves what 2 threads can do.
void run_benchmarks() {
  const double busy0 = machine_busy_seconds(), own0 = own_cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  benchmark::RunSpecifiedBenchmarks();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double others = (machine_busy_seconds() - busy0) - (own_cpu_seconds() - own0);
  const double share = others / (wall * std::max(1u, std::thread::hardware_concurrency()));
  if (share > 0.05)
    std::fprintf(
        stderr,
        "tile_bench: warning: other processes used %.0f%% of the CPUs during the run; the numbers are disturbed\n",
        100 * share);
}

// Prints each case's output shape, the plan tessera chose for it and the Eigen peer's expression.
void describe(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    std::printf("%s: %s %s %s%s, %s -> %s\n", c.name.c_str(), op_name(c.op), c.dtype.c_str(), join(c.shape).c_str(),
                c.transposed ? " (transposed view)" : "", c.arguments().c_str(), join(c.out_shape).c_str());
    try {
      std::string plan = make_plan(c).describe();
      while (!plan.empty() && plan.back() == '\n') plan.pop_back();
      std::printf("%s\n", plan.c_str());
    } catch (const std::exception& e) {
      std::printf("  error: %s\n", e.what());
    }
    if (const auto eigen = eigen_runs_here() ? make_eigen_peer(c) : nullptr)
      std::printf("Eigen peer: %s\n", eigen->describe().c_str());
    std::printf("\n");
  }
}

// --target=NAME: every later dispatch (tessera's, the limit loops') goes to Highway target NAME, or
// the program stops naming the targets it could force.
void force_target(const std::string& name) {
  int64_t chosen = 0;
  std::string names;
  for (int64_t t : hwy::SupportedAndGeneratedTargets()) {
    names += std::string(names.empty() ? "" : ", ") + hwy::TargetName(t);
    if (name == hwy::TargetName(t)) chosen = t;
  }
  if (chosen == 0) die("--target=" + name + ": not a Highway target compiled in and supported here (" + names + ")");
  hwy::SetSupportedTargetsForTest(chosen);
  if (name != tessera::active_target())
    die("--target=" + name + ": forced, but tessera dispatches to " + tessera::active_target());
}

int bench_main(int argc, char** argv) {
  std::string cases_path = TESSERA_BENCH_CASES, case_filter, target;
  bool describe_only = false;
  std::vector<char*> args = {argv[0]};
  for (const char* flag : kDefaultFlags) args.push_back(const_cast<char*>(flag));
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.rfind("--cases=", 0) == 0) {
      cases_path = arg.substr(8);
    } else if (arg.rfind("--case_filter=", 0) == 0) {
      case_filter = arg.substr(14);
    } else if (arg.rfind("--target=", 0) == 0) {
      target = arg.substr(9);
    } else if (arg == "--describe") {
      describe_only = true;
    } else {
      if (arg == "--help")
        std::printf(
            "tile_bench [--cases=FILE] [--case_filter=REGEX] [--target=NAME] [--describe] [benchmark flags]\n"
            "  --cases=FILE         the cases (default %s)\n"
            "  --case_filter=REGEX  only the cases whose name REGEX matches (ECMAScript, substring)\n"
            "  --target=NAME        force tessera's (and the limits') Highway target, e.g. AVX2\n"
            "  --describe           print each case's tessera plan and exit\n\n",
            TESSERA_BENCH_CASES);
      args.push_back(argv[i]);  // later flags override the defaults
    }
  }
  int nargs = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&nargs, args.data());
  if (benchmark::ReportUnrecognizedArguments(nargs, args.data())) return EXIT_FAILURE;
  if (!target.empty()) force_target(target);  // before any plan is made (--describe's too)

  std::vector<Case> cases;
  try {
    cases = load_cases(cases_path);
    if (!case_filter.empty()) {
      const std::regex re(case_filter);
      cases.erase(
          std::remove_if(cases.begin(), cases.end(), [&](const Case& c) { return !std::regex_search(c.name, re); }),
          cases.end());
      if (cases.empty()) die("no case name matches --case_filter=" + case_filter);
    }
  } catch (const std::exception& e) {
    die(e.what());
  }
  if (describe_only) {
    describe(cases);
    return EXIT_SUCCESS;
  }

  const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> threads = {1};
  if (all > 1) threads.push_back(all);

  std::string names, thread_list;
  for (const Case& c : cases) names += (names.empty() ? "" : ",") + c.name;
  for (int t : threads) thread_list += (thread_list.empty() ? "" : ",") + std::to_string(t);
  benchmark::AddCustomContext("tessera_version", tessera::version());
  benchmark::AddCustomContext("tessera_target", tessera::active_target());
  benchmark::AddCustomContext("limits_target", limits_target());
  benchmark::AddCustomContext("cpu_model", cpu_model());
  benchmark::AddCustomContext("transparent_hugepage", first_line("/sys/kernel/mm/transparent_hugepage/enabled"));
  benchmark::AddCustomContext("tbb_default_concurrency", std::to_string(tbb::info::default_concurrency()));
  benchmark::AddCustomContext("cases_file", cases_path);
  benchmark::AddCustomContext("eigen_peer", eigen_runs_here() ? eigen_info() : "");
  benchmark::AddCustomContext("cases", names);
  benchmark::AddCustomContext("threads", thread_list);
  benchmark::AddCustomContext("last_level_cache_bytes", std::to_string(llc_bytes()));

  Bench bench(std::move(cases), threads);
  register_benchmarks(bench);
  run_benchmarks();
  benchmark::Shutdown();
  return EXIT_SUCCESS;
}

}  // namespace
}  // namespace tessera::bench

int main(int argc, char** argv) { return tessera::bench::bench_main(argc, argv); }
