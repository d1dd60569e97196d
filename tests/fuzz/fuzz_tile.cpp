// libFuzzer target for tessera: decodes one tile problem from the input bytes, runs it through
// the one-shot C call (tessera_tile), a plan (tessera_plan_create + tessera_plan_execute), the
// allocating call (tessera_tile_alloc) and a C++ plan with non-temporal stores forced
// (tessera::NonTemporal::always: the C API streams only outputs of 16 MiB or more, far past the
// caps here), and checks against an independent model:
//   - the status class each call must return, derived here from the documented rules;
//   - on success, the output byte for byte against the scalar reference (tests/reference.cpp)
//     and the output shape against ref::tile_shape;
//   - on every rejection, the destination untouched (pre-filled pattern), a non-empty
//     tessera_last_error(), and no plan / allocation handed out;
//   - always, a sentinel after the destination's end untouched.
// Any disagreement prints the case and calls __builtin_trap(). Sizes are capped so that one
// execution stays fast: source span and output at most kMaxBytes (64 KiB), or an output up to
// kMaxBigBytes (1 MiB) when the input asks for it, which is past the executor's threshold for
// running threaded, so chunks that start and end inside rows are fuzzed too.
//
// Input format (bytes read front to back; a missing byte reads as 0, or as 1 for an extent or rep,
// so that truncated inputs are not mostly empty outputs):
//   [0] ndim = b % 7            [1] nreps = b % 8          [2] itemsize = 1 + b % 40
//   [3] flags: bit0 strides NULL (C-contiguous source), bit1 src NULL, bits2-4 destination mode
//       (see DstMode), bit5 one negative extent, bit6 itemsize 0, bit7 big output allowed
//   [4] axis permutation of the parent buffer (transposed layouts)
//   [5] source misalignment (b % 64)   [6] destination misalignment (b % 64)
//   [7] slack / shortfall of dst_bytes  [8] element pitch: itemsize + b % 8 bytes (gaps)
//   ndim x extent byte: kExtents[b % 16] (0-8; an empty axis is 1 in 16)
//   ndim x stride byte: if b >= 0xE0, the next byte as an int8 is the raw byte stride (any value:
//       misaligned, overlapping, zero, negative); else axis of a parent buffer whose extent is
//       extent + (b >> 2) % 8 (gaps), negated if b % 4 == 2, zero (broadcast) if b % 4 == 3
//   nreps x rep byte: b < 0xE0 gives kSmallReps[b % 8] (0-5), else kSpecialReps[b - 0xE0] (huge,
//       negative, ...)
//
// Environment: TESSERA_FUZZ_TARGET=<Highway target name, e.g. SCALAR> forces that target at
// start-up and checks that tessera dispatches to it. TESSERA_FUZZ_PATHS=1 prints at exit how many
// executed plans took each executor path (the "[path]" that tessera_plan_describe names, and
// Plan::kernel_path() of the streaming C++ plans).
#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <hwy/targets.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reference.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define FUZZ_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define FUZZ_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#endif
#endif
#ifndef FUZZ_POISON
#define FUZZ_POISON(p, n) ((void)(p), (void)(n))
#define FUZZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int kMaxDims = 6;
constexpr int kMaxReps = 7;
// Largest source span and largest output that are really allocated and compared.
constexpr int64_t kMaxBytes = 64 * 1024;
constexpr int64_t kMaxBigBytes = 1024 * 1024;
// Destination capacity used when a valid output is too large to allocate (a too-small buffer).
constexpr size_t kSmallCapacity = 256;
constexpr size_t kSentinel = 64;
constexpr unsigned char kDstFill = 0xA5;

constexpr int64_t kExtents[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 1, 2, 3};  // codes 0-8: the value
constexpr int64_t kSmallReps[8] = {0, 1, 2, 3, 4, 5, 1, 2};  // codes 0-5 are the value itself
constexpr int64_t kSpecialReps[32] = {
    6, 7, 8, 9, 16, 31, 100, 1000, 65536, int64_t{1} << 20,
    (int64_t{1} << 31) - 1, int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 40, int64_t{1} << 61,
    int64_t{1} << 62, kInt64Max / 3, kInt64Max / 2, kInt64Max - 1, kInt64Max,
    -1, -2, -7, -(int64_t{1} << 62), kInt64Min + 1, kInt64Min,
    0, 1, 2, 3,
    3037000499,  // floor(sqrt(INT64_MAX)): its square fits int64, the next one's does not
    3037000500};

// How dst / dst_bytes are passed.
enum DstMode : unsigned {
  kExact = 0,      // dst_bytes == output bytes
  kSlack = 1,      // dst_bytes larger than needed (and really available)
  kShort = 2,      // dst_bytes smaller than needed by 1 .. 256
  kZero = 3,       // dst_bytes == 0
  kNullDst = 4,    // dst == NULL, dst_bytes == output bytes
  kHugeClaim = 5,  // dst_bytes == SIZE_MAX (only the output's bytes are really there)
  // 6, 7: exact again (the common case weighs more)
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t next(uint8_t missing = 0) { return pos_ < size_ ? data_[pos_++] : missing; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

struct Case {
  int ndim = 0;
  int nreps = 0;
  size_t itemsize = 1;
  bool null_strides = false;
  bool null_src = false;
  bool big = false;
  unsigned dst_mode = kExact;
  size_t src_misalign = 0;
  size_t dst_misalign = 0;
  size_t slack = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  int64_t reps[kMaxReps] = {};
};

std::string list(const int64_t* v, int n) {
  std::string s = "(";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (n == 1 ? ",)" : ")");
}

[[noreturn]] void fail(const Case& c, const char* api, const std::string& what) {
  std::fprintf(stderr,
               "fuzz_tile MISMATCH [%s] %s\n  shape %s strides %s%s itemsize %zu reps %s\n"
               "  src %s misalign %zu, dst mode %u misalign %zu slack %zu, target %s\n  last error: %s\n",
               api, what.c_str(), list(c.shape, c.ndim).c_str(), list(c.strides, c.ndim).c_str(),
               c.null_strides ? " (passed as NULL)" : "", c.itemsize, list(c.reps, c.nreps).c_str(),
               c.null_src ? "NULL" : "buffer", c.src_misalign, c.dst_mode, c.dst_misalign, c.slack,
               tessera_active_target(), tessera_last_error());
  __builtin_trap();
}

const char* status_name(tessera_status s) {
  switch (s) {
    case TESSERA_OK: return "OK";
    case TESSERA_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case TESSERA_OVERFLOW: return "OVERFLOW";
    case TESSERA_BUFFER_TOO_SMALL: return "BUFFER_TOO_SMALL";
    case TESSERA_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case TESSERA_INTERNAL: return "INTERNAL";
  }
  return "?";
}

void expect_status(const Case& c, const char* api, tessera_status got, tessera_status want) {
  if (got != want)
    fail(c, api, std::string("status ") + status_name(got) + ", expected " + status_name(want));
  if (got != TESSERA_OK && tessera_last_error()[0] == '\0') fail(c, api, "failed with an empty tessera_last_error()");
}

Case decode(const uint8_t* data, size_t size) {
  Reader in(data, size);
  Case c;
  c.ndim = in.next() % (kMaxDims + 1);
  c.nreps = in.next() % (kMaxReps + 1);
  c.itemsize = 1 + in.next() % 40;
  const uint8_t flags = in.next();
  c.null_strides = flags & 1;
  c.null_src = flags & 2;
  c.dst_mode = (flags >> 2) & 7;
  const bool negative_extent = flags & 32;
  const bool zero_itemsize = flags & 64;
  c.big = flags & 128;
  uint8_t perm_code = in.next();
  c.src_misalign = in.next() % 64;
  c.dst_misalign = in.next() % 64;
  c.slack = in.next();
  const int64_t pitch = static_cast<int64_t>(c.itemsize) + in.next() % 8;

  for (int i = 0; i < c.ndim; ++i) c.shape[i] = kExtents[in.next(1) % 16];

  // Parent-buffer axis order (innermost first): a permutation picked by perm_code.
  int order[kMaxDims];
  for (int i = 0; i < c.ndim; ++i) order[i] = c.ndim - 1 - i;  // C order
  for (int i = 0; i < c.ndim; ++i) {
    const int j = i + perm_code % (c.ndim - i);
    perm_code = static_cast<uint8_t>(perm_code / (c.ndim - i));  // 0 is C order
    const int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  uint8_t stride_code[kMaxDims];
  int64_t raw[kMaxDims];
  for (int i = 0; i < c.ndim; ++i) {
    stride_code[i] = in.next();
    raw[i] = stride_code[i] >= 0xE0 ? static_cast<int8_t>(in.next()) : 0;
  }
  int64_t running = pitch;
  for (int k = 0; k < c.ndim; ++k) {
    const int ax = order[k];
    const uint8_t b = stride_code[ax];
    const int64_t parent_extent = (c.shape[ax] > 0 ? c.shape[ax] : 1) + (b >> 2) % 8;
    int64_t s = running;
    running *= parent_extent;  // at most 47 * 15^6: no overflow
    if (b >= 0xE0) s = raw[ax];
    else if (b % 4 == 2) s = -s;
    else if (b % 4 == 3) s = 0;
    c.strides[ax] = s;
  }
  for (int i = 0; i < c.nreps; ++i) {
    const uint8_t b = in.next(1);
    c.reps[i] = b < 0xE0 ? kSmallReps[b % 8] : kSpecialReps[b - 0xE0];
  }
  if (c.null_strides) {  // C-contiguous, as the library assumes for NULL strides
    int64_t s = static_cast<int64_t>(c.itemsize);
    for (int i = c.ndim - 1; i >= 0; --i) {
      c.strides[i] = s;
      s *= c.shape[i] > 0 ? c.shape[i] : 1;
    }
  }
  if (negative_extent && c.ndim > 0) c.shape[c.slack % c.ndim] = -1 - static_cast<int64_t>(c.slack % 3);
  if (zero_itemsize) c.itemsize = 0;
  return c;
}

// What planning must answer, from the documented rules (tessera.h), in 128-bit arithmetic.
struct Model {
  tessera_status shape_status = TESSERA_OK;  // tessera_tile_shape (no itemsize)
  tessera_status plan_status = TESSERA_OK;   // tessera_plan_create and the planning part of tessera_tile
  int64_t input_count = 0;
  int64_t output_bytes = 0;  // valid when plan_status == OK
};

Model model(const Case& c) {
  Model m;
  bool negative = false;
  for (int i = 0; i < c.ndim; ++i) negative = negative || c.shape[i] < 0;
  for (int i = 0; i < c.nreps; ++i) negative = negative || c.reps[i] < 0;
  m.input_count = 1;
  for (int i = 0; i < c.ndim; ++i) m.input_count *= c.shape[i] > 0 ? c.shape[i] : 0;
  if (negative) {
    m.shape_status = TESSERA_INVALID_ARGUMENT;
    m.plan_status = TESSERA_INVALID_ARGUMENT;
    return m;
  }
  const int n = c.ndim > c.nreps ? c.ndim : c.nreps;
  __int128 extents[kMaxReps];
  bool overflow = false, empty = false;
  for (int i = 0; i < n; ++i) {
    const int64_t s = i < n - c.ndim ? 1 : c.shape[i - (n - c.ndim)];
    const int64_t r = i < n - c.nreps ? 1 : c.reps[i - (n - c.nreps)];
    extents[i] = static_cast<__int128>(s) * r;
    overflow = overflow || extents[i] > kInt64Max;
    empty = empty || extents[i] == 0;
  }
  __int128 count = empty ? 0 : 1;
  for (int i = 0; i < n && !overflow && !empty; ++i) {
    count *= extents[i];
    overflow = count > kInt64Max;
  }
  if (overflow) {
    m.shape_status = TESSERA_OVERFLOW;
    m.plan_status = c.itemsize == 0 ? TESSERA_INVALID_ARGUMENT : TESSERA_OVERFLOW;
    return m;
  }
  if (c.itemsize == 0) {
    m.plan_status = TESSERA_INVALID_ARGUMENT;
    return m;
  }
  const __int128 bytes = count * static_cast<__int128>(c.itemsize);
  if (bytes > kInt64Max) {
    m.plan_status = TESSERA_OVERFLOW;
    return m;
  }
  m.output_bytes = static_cast<int64_t>(bytes);
  return m;
}

// A second, faster reference for the big outputs, written from the definition by blocks rather
// than by elements: the output block of axes k.. at source position `src` is the blocks of axes
// k+1.. for the input's extent along axis k, the whole repeated reps[k] times. Cost: one memcpy
// per input element plus O(output bytes) in doubling copies. Returns the bytes written.
struct Promoted {
  int n = 0;
  int64_t shape[kMaxReps], stride[kMaxReps], reps[kMaxReps];
};

size_t block(const Promoted& p, size_t itemsize, int k, const unsigned char* src, unsigned char* out) {
  if (k == p.n) {
    std::memcpy(out, src, itemsize);
    return itemsize;
  }
  size_t unit = 0;
  for (int64_t j = 0; j < p.shape[k]; ++j) unit += block(p, itemsize, k + 1, src + j * p.stride[k], out + unit);
  size_t written = unit;
  for (int64_t done = 1; done < p.reps[k];) {  // replicate by doubling
    const int64_t copies = done < p.reps[k] - done ? done : p.reps[k] - done;
    std::memcpy(out + written, out, static_cast<size_t>(copies) * unit);
    written += static_cast<size_t>(copies) * unit;
    done += copies;
  }
  return written;
}

size_t block_reference(const Case& c, const unsigned char* src, unsigned char* out) {
  Promoted p;
  p.n = c.ndim > c.nreps ? c.ndim : c.nreps;
  for (int i = 0; i < p.n; ++i) {
    const bool in_shape = i >= p.n - c.ndim, in_reps = i >= p.n - c.nreps;
    p.shape[i] = in_shape ? c.shape[i - (p.n - c.ndim)] : 1;
    p.stride[i] = in_shape ? c.strides[i - (p.n - c.ndim)] : 0;
    p.reps[i] = in_reps ? c.reps[i - (p.n - c.nreps)] : 1;
  }
  return block(p, c.itemsize, 0, src, out);
}

// The source: exactly the bytes the strides address (plus a poisoned misalignment prefix).
struct Source {
  std::unique_ptr<unsigned char[]> buf;
  size_t prefix = 0, bytes = 0;
  const unsigned char* first = nullptr;  // element (0, ..., 0)
  ~Source() {
    if (buf) FUZZ_UNPOISON(buf.get(), prefix + bytes);
  }
};

// Returns false if the source span exceeds kMaxBytes (the case is skipped).
bool make_source(const Case& c, Source* s) {
  int64_t lo = 0, hi = 0;
  const size_t isz = c.itemsize > 0 ? c.itemsize : 1;
  bool empty = false;
  for (int i = 0; i < c.ndim; ++i) {
    if (c.shape[i] <= 0) {
      empty = true;
      continue;
    }
    const int64_t reach = (c.shape[i] - 1) * c.strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  const int64_t span = empty ? 0 : hi - lo + static_cast<int64_t>(isz);
  if (span > kMaxBytes) return false;
  s->prefix = c.src_misalign;
  s->bytes = static_cast<size_t>(span);
  s->buf.reset(new unsigned char[s->prefix + s->bytes + 1]);
  static const std::vector<unsigned char> pattern = [] {  // distinct neighbours: misplacements show
    std::vector<unsigned char> v(kMaxBytes);
    for (size_t i = 0; i < v.size(); ++i) {
      uint32_t x = static_cast<uint32_t>(i) * 0x9E3779B1u;
      x ^= x >> 15;
      v[i] = static_cast<unsigned char>(x ^ (x >> 8) ^ (x >> 24));
    }
    return v;
  }();
  unsigned char* data = s->buf.get() + s->prefix;
  if (s->bytes > 0) std::memcpy(data, pattern.data(), s->bytes);
  // Everything outside [data, data + bytes) is off limits, also when the input is empty.
  FUZZ_POISON(s->buf.get(), s->prefix);
  FUZZ_POISON(data + s->bytes, 1);
  s->first = data - lo;
  return true;
}

// A destination: [poisoned misalignment][capacity bytes][sentinel], all pre-filled.
struct Dest {
  std::unique_ptr<unsigned char[]> buf;
  size_t prefix = 0, capacity = 0;
  unsigned char* data() { return buf.get() + prefix; }
  Dest(size_t misalign, size_t cap) : buf(new unsigned char[misalign + cap + kSentinel]), prefix(misalign), capacity(cap) {
    FUZZ_POISON(buf.get(), prefix);
    refill();
  }
  ~Dest() { FUZZ_UNPOISON(buf.get(), prefix); }
  Dest(const Dest&) = delete;
  Dest& operator=(const Dest&) = delete;
  void refill() { std::memcpy(data(), fill_pattern(), capacity + kSentinel); }
  // Bytes [from, capacity + kSentinel) still hold the fill.
  bool untouched_from(size_t from, size_t* where) {
    const unsigned char* fill = fill_pattern();
    if (std::memcmp(data() + from, fill + from, capacity + kSentinel - from) == 0) return true;
    *where = from;
    while (data()[*where] == fill[*where]) ++*where;
    return false;
  }
  // The destination fill, byte i = kDstFill ^ (7 * i), for the largest destination.
  static const unsigned char* fill_pattern() {
    static const std::vector<unsigned char> fill = [] {
      std::vector<unsigned char> v(kMaxBigBytes + 256 + kSentinel);  // + the largest slack
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(kDstFill ^ (i * 7));
      return v;
    }();
    return fill.data();
  }
};

// Checks dst after a call that returned `got` (already matched against the expectation).
void check_output(const Case& c, const char* api, tessera_status got, Dest& dst, const std::vector<unsigned char>& want,
                  size_t nbytes) {
  size_t where = 0;
  if (got != TESSERA_OK) {
    if (!dst.untouched_from(0, &where))
      fail(c, api, "rejected call (" + std::string(status_name(got)) + ") wrote dst byte " + std::to_string(where));
    return;
  }
  if (want.size() != nbytes) fail(c, api, "succeeded where the model expects a rejection");
  if (!want.empty() && std::memcmp(dst.data(), want.data(), want.size()) != 0) {
    size_t i = 0;
    while (dst.data()[i] == want[i]) ++i;
    fail(c, api, "output byte " + std::to_string(i) + " (element " + std::to_string(i / c.itemsize) + ") is " +
                     std::to_string(dst.data()[i]) + ", reference " + std::to_string(want[i]));
  }
  if (!dst.untouched_from(want.size(), &where))
    fail(c, api, "wrote past the output's " + std::to_string(want.size()) + " bytes: byte " + std::to_string(where) +
                     (where >= dst.capacity ? " (sentinel)" : ""));
}

// Executor paths of the plans executed successfully, for TESSERA_FUZZ_PATHS.
std::map<std::string, long>& path_counts() {
  static auto* counts = new std::map<std::string, long>;  // never destroyed: read at exit
  return *counts;
}

void count_path(const char* description) {
  const char* k = std::strstr(description, "kernel: ");
  const char* open = k ? std::strchr(k, '[') : nullptr;
  const char* close = open ? std::strchr(open, ']') : nullptr;
  ++path_counts()[close ? std::string(open + 1, close) : std::string(k ? "none" : "?")];
}

void print_paths() {
  std::string line = "fuzz_tile: executor paths reached:";
  for (const auto& [path, n] : path_counts()) line += " " + path + "=" + std::to_string(n);
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* p = std::getenv("TESSERA_FUZZ_PATHS"); p != nullptr && p[0] != '\0' && p[0] != '0')
    std::atexit(print_paths);
  const char* want = std::getenv("TESSERA_FUZZ_TARGET");
  if (want != nullptr && want[0] != '\0') {
    int64_t chosen = 0;
    for (int64_t t : hwy::SupportedAndGeneratedTargets())
      if (std::strcmp(hwy::TargetName(t), want) == 0) chosen = t;
    if (chosen == 0) {
      std::fprintf(stderr, "fuzz_tile: TESSERA_FUZZ_TARGET=%s is not a target compiled in and supported here\n", want);
      std::abort();
    }
    hwy::SetSupportedTargetsForTest(chosen);
    if (std::strcmp(tessera_active_target(), want) != 0) {
      std::fprintf(stderr, "fuzz_tile: forced %s but tessera dispatches to %s\n", want, tessera_active_target());
      std::abort();
    }
  }
  std::fprintf(stderr, "fuzz_tile: tessera %s dispatches to %s\n", tessera_version(), tessera_active_target());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Case c = decode(data, size);
  const Model m = model(c);
  Source src;
  if (!make_source(c, &src)) return 0;
  const void* src_ptr = c.null_src ? nullptr : src.first;
  const int64_t* strides = c.null_strides ? nullptr : c.strides;

  // Output shape.
  {
    int out_ndim = -7;
    int64_t out_shape[TESSERA_MAX_NDIM];
    const tessera_status st = tessera_tile_shape(c.ndim, c.shape, c.nreps, c.reps, &out_ndim, out_shape);
    expect_status(c, "tile_shape", st, m.shape_status);
    if (st == TESSERA_OK) {
      const ref::Shape want = ref::tile_shape({c.shape, c.shape + c.ndim}, {c.reps, c.reps + c.nreps});
      if (out_ndim != static_cast<int>(want.size()) || !std::equal(want.begin(), want.end(), out_shape))
        fail(c, "tile_shape", "shape " + list(out_shape, out_ndim > 0 ? out_ndim : 0) + ", reference " +
                                  list(want.data(), static_cast<int>(want.size())));
    }
  }

  // Destination and the status execution must give once planning succeeded.
  const size_t nbytes = m.plan_status == TESSERA_OK ? static_cast<size_t>(m.output_bytes) : 0;
  const bool fits = m.plan_status == TESSERA_OK && m.output_bytes <= (c.big ? kMaxBigBytes : kMaxBytes);
  unsigned mode = c.dst_mode > kHugeClaim ? kExact : c.dst_mode;
  if (m.plan_status == TESSERA_OK && !fits && (mode == kExact || mode == kSlack || mode == kHugeClaim))
    mode = kShort;  // too large to allocate: hand over a small buffer, which must be refused
  size_t capacity = 0, dst_bytes = 0;
  bool null_dst = false;
  switch (mode) {
    case kExact: capacity = dst_bytes = nbytes; break;
    case kSlack: capacity = dst_bytes = nbytes + c.slack; break;
    case kShort:
      if (!fits) capacity = dst_bytes = kSmallCapacity;
      else capacity = dst_bytes = nbytes > 0 ? nbytes - 1 - c.slack % nbytes : 0;
      break;
    case kZero: capacity = fits ? nbytes : kSmallCapacity; dst_bytes = 0; break;
    case kNullDst: null_dst = true; dst_bytes = nbytes; break;
    case kHugeClaim: capacity = nbytes; dst_bytes = std::numeric_limits<size_t>::max(); break;
  }
  tessera_status exec_status = m.plan_status;
  if (exec_status == TESSERA_OK) {
    if (c.null_src && m.input_count > 0) exec_status = TESSERA_INVALID_ARGUMENT;
    else if (null_dst && nbytes > 0) exec_status = TESSERA_INVALID_ARGUMENT;
    else if (dst_bytes < nbytes) exec_status = TESSERA_BUFFER_TOO_SMALL;
  }
  // The reference output, wherever some call may succeed (the allocating call ignores dst).
  std::vector<unsigned char> want;
  const bool readable = !(c.null_src && m.input_count > 0);
  // (ref::tile multiplies the output extents unchecked: skip it for empty outputs, whose other
  // extents may be huge.)
  if (fits && readable && nbytes > 0) {
    if (m.output_bytes <= kMaxBytes) {
      want = ref::tile(src.first, {c.shape, c.shape + c.ndim}, {c.strides, c.strides + c.ndim}, c.itemsize,
                       {c.reps, c.reps + c.nreps});
    } else {  // ref::tile walks element by element: too slow for a megabyte under ASan
      want.resize(nbytes);
      if (block_reference(c, src.first, want.data()) != nbytes) fail(c, "model", "block reference size");
    }
    if (want.size() != nbytes) fail(c, "model", "reference size disagrees with the model");
  }

  Dest dst(c.dst_misalign, capacity);
  void* dst_ptr = null_dst ? nullptr : dst.data();

  // One-shot.
  {
    const tessera_status st =
        tessera_tile(src_ptr, c.ndim, c.shape, strides, c.itemsize, c.nreps, c.reps, dst_ptr, dst_bytes);
    expect_status(c, "tessera_tile", st, exec_status);
    check_output(c, "tessera_tile", st, dst, want, nbytes);
  }

  // Plan.
  {
    dst.refill();
    tessera_plan* plan = nullptr;
    const tessera_status st = tessera_plan_create(c.ndim, c.shape, strides, c.itemsize, c.nreps, c.reps, &plan);
    expect_status(c, "tessera_plan_create", st, m.plan_status);
    if (st != TESSERA_OK) {
      if (plan != nullptr) fail(c, "tessera_plan_create", "failed but handed out a plan");
    } else {
      std::unique_ptr<tessera_plan, void (*)(tessera_plan*)> owner(plan, tessera_plan_destroy);
      if (tessera_plan_output_bytes(plan) != nbytes)
        fail(c, "tessera_plan_output_bytes", std::to_string(tessera_plan_output_bytes(plan)) + " bytes, expected " +
                                                 std::to_string(nbytes));
      int out_ndim = -7;
      int64_t out_shape[TESSERA_MAX_NDIM];
      expect_status(c, "tessera_plan_output_shape", tessera_plan_output_shape(plan, &out_ndim, out_shape), TESSERA_OK);
      const ref::Shape ws = ref::tile_shape({c.shape, c.shape + c.ndim}, {c.reps, c.reps + c.nreps});
      if (out_ndim != static_cast<int>(ws.size()) || !std::equal(ws.begin(), ws.end(), out_shape))
        fail(c, "tessera_plan_output_shape", "shape " + list(out_shape, out_ndim > 0 ? out_ndim : 0));
      if (std::strstr(tessera_plan_describe(plan), "kernel: ") == nullptr)
        fail(c, "tessera_plan_describe", "description names no kernel");
      for (int run = 0; run < 2; ++run) {  // a plan is reusable
        dst.refill();
        const tessera_status ex = tessera_plan_execute(plan, src_ptr, dst_ptr, dst_bytes);
        expect_status(c, "tessera_plan_execute", ex, exec_status);
        check_output(c, "tessera_plan_execute", ex, dst, want, nbytes);
        if (ex == TESSERA_OK && run == 0) count_path(tessera_plan_describe(plan));
      }
    }
  }

  // C++ plan with streaming stores forced: the ".nt" executor paths. Same statuses as the one-shot.
  {
    dst.refill();
    tessera_status st = TESSERA_OK;
    try {
      const tessera::Plan plan(tessera::Dims(c.shape, static_cast<size_t>(c.ndim)),
                               c.null_strides ? tessera::Dims() : tessera::Dims(c.strides, static_cast<size_t>(c.ndim)),
                               c.itemsize, tessera::Dims(c.reps, static_cast<size_t>(c.nreps)),
                               tessera::Options{tessera::NonTemporal::always});
      if (plan.nbytes() != nbytes) fail(c, "tessera::Plan(nt)", "nbytes " + std::to_string(plan.nbytes()));
      const std::string path = plan.kernel_path();
      static const std::vector<std::string> paths = tessera::Plan::kernel_paths();
      if (std::find(paths.begin(), paths.end(), path) == paths.end())
        fail(c, "tessera::Plan(nt)", "kernel_path() \"" + path + "\" is not listed by Plan::kernel_paths()");
      plan.execute(src_ptr, dst_ptr, dst_bytes);
      if (exec_status == TESSERA_OK) ++path_counts()[path];
    } catch (const tessera::Error& e) {
      st = static_cast<tessera_status>(e.status());
    } catch (const std::exception& e) {
      fail(c, "tessera::Plan(nt)", std::string("threw a non-tessera exception: ") + e.what());
    }
    if (st != exec_status)
      fail(c, "tessera::Plan(nt)", std::string("status ") + status_name(st) + ", expected " + status_name(exec_status));
    check_output(c, "tessera::Plan(nt)", st, dst, want, nbytes);
  }

  // Allocating call: only where it cannot try to allocate an output larger than the caps.
  if (m.plan_status != TESSERA_OK || fits || !readable) {
    tessera_status alloc_status = m.plan_status;
    if (alloc_status == TESSERA_OK && !readable) alloc_status = TESSERA_INVALID_ARGUMENT;
    int marker = 0;
    void* out = &marker;  // must stay as is on failure
    size_t out_bytes = 12345;
    int out_ndim = -7;
    int64_t out_shape[TESSERA_MAX_NDIM];
    const tessera_status st = tessera_tile_alloc(src_ptr, c.ndim, c.shape, strides, c.itemsize, c.nreps, c.reps, &out,
                                                 &out_bytes, &out_ndim, out_shape);
    expect_status(c, "tessera_tile_alloc", st, alloc_status);
    if (st != TESSERA_OK) {
      if (out != &marker) fail(c, "tessera_tile_alloc", "failed but changed *out_data");
    } else {
      std::unique_ptr<void, void (*)(void*)> owner(out, tessera_free);
      if (out_bytes != nbytes || want.size() != nbytes)
        fail(c, "tessera_tile_alloc", "out_bytes " + std::to_string(out_bytes) + ", expected " + std::to_string(nbytes));
      if (nbytes > 0 && (out == nullptr || std::memcmp(out, want.data(), nbytes) != 0))
        fail(c, "tessera_tile_alloc", "output differs from the reference");
      if (nbytes > 0 && reinterpret_cast<uintptr_t>(out) % 64 != 0) fail(c, "tessera_tile_alloc", "not 64-byte aligned");
    }
  }
  return 0;
}
