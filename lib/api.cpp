// The C++ API (tessera.hpp): a thin layer over the planner and the executor that checks the
// arguments only known at execution (pointers, buffer size, output regions) before anything is
// written.
#include "plan.hpp"

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tessera {
namespace detail {

namespace {

// Large outputs freed by tessera_free are kept for the next allocating call. A fresh output's cost
// is its page faults: each new page is mapped, zeroed and, on a virtual machine that hands freed
// memory back to its host (virtio-balloon free page reporting, as on this project's machines),
// backed by the host again — measured at 1.4–6.7 GB/s for a 64 MiB output when numpy and tessera
// alternate, against 30–40 GB/s into pages already backed (bench/python_interference.py). A kept
// block takes no fault and is written like a caller's buffer (streaming stores where the plan
// says so).
//
// Bounded: at most TESSERA_ALLOC_CACHE_BYTES bytes are kept (read once; default 256 MiB; 0 keeps
// none); a block is reused only for an output that needs at least 4/5 of it; a block unused for
// kCacheMaxAge is released at the next allocating call or tessera_free; kept blocks are advised
// MADV_FREE, so the kernel may take their pages back under memory pressure (a later reuse then
// faults again, nothing else changes).
constexpr auto kCacheMaxAge = std::chrono::seconds(10);

struct CachedBlock {
  void* p;
  std::size_t bytes;
  std::chrono::steady_clock::time_point freed;
};

struct BlockCache {
  std::mutex mutex;
  std::unordered_map<void*, std::size_t> live;  // large blocks handed out -> their padded size
  std::vector<CachedBlock> kept;                // freed blocks, most recently freed last
  std::size_t kept_bytes = 0;
  const std::size_t budget = [] {
    const char* v = std::getenv("TESSERA_ALLOC_CACHE_BYTES");
    return v && *v ? static_cast<std::size_t>(std::strtoull(v, nullptr, 10)) : std::size_t{256} << 20;
  }();

  // Moves to `release` the kept blocks past their age, and the oldest while more than `limit`
  // bytes are kept. Caller holds the mutex; `release` has room (reserved before locking).
  void trim(std::size_t limit, std::vector<void*>* release) {
    const auto now = std::chrono::steady_clock::now();
    std::size_t i = 0;
    while (i < kept.size() && (kept_bytes > limit || now - kept[i].freed > kCacheMaxAge)) {
      release->push_back(kept[i].p);
      kept_bytes -= kept[i].bytes;
      ++i;
    }
    kept.erase(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(i));
  }
};

BlockCache& cache() {
  static BlockCache* c = new BlockCache;  // never destroyed: tessera_free may run at exit
  return *c;
}

}  // namespace

void* allocate_output(std::size_t nbytes, bool* fresh) {
  // Large outputs: 2 MiB aligned and advised to use transparent huge pages, so that the first
  // touch costs one fault per 2 MiB instead of one per 4 KiB (page faults bound a fresh output).
  // Only from 32 MiB, glibc's largest mmap threshold: smaller blocks are recycled by malloc
  // (already touched, no fault at all), which huge-page mappings of their own would prevent.
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const bool large = nbytes >= kHugeMinBytes;
  const std::size_t align = large ? kHuge : 64;
  const std::size_t padded = (nbytes + align - 1) / align * align;  // aligned_alloc wants a multiple
  if (padded < nbytes) throw std::bad_alloc();
  *fresh = large;
  if (!large) {
    void* p = std::aligned_alloc(align, padded);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  BlockCache& c = cache();
  std::vector<void*> release;
  void* hit = nullptr;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    release.reserve(c.kept.size());
    c.trim(c.budget, &release);
    // The most recently freed block of at least `padded` bytes that the output fills to 4/5.
    for (std::size_t i = c.kept.size(); i-- > 0;) {
      const CachedBlock b = c.kept[i];
      if (b.bytes >= padded && b.bytes - padded <= b.bytes / 5) {
        c.live.emplace(b.p, b.bytes);  // may throw: then nothing has changed
        c.kept_bytes -= b.bytes;
        c.kept.erase(c.kept.begin() + static_cast<std::ptrdiff_t>(i));
        hit = b.p;
        break;
      }
    }
  }
  for (void* p : release) std::free(p);
  if (hit != nullptr) {
    *fresh = false;
    return hit;
  }
  void* p = std::aligned_alloc(align, padded);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(p, padded, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  try {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.live.emplace(p, padded);
  } catch (...) {
    std::free(p);
    throw;
  }
  return p;
}

void free_output(void* p) noexcept {
  if (p == nullptr) return;
  BlockCache& c = cache();
  std::vector<void*> release;
  bool kept = false;
  try {
    release.reserve(8);
    std::lock_guard<std::mutex> lock(c.mutex);
    const auto it = c.live.find(p);
    if (it != c.live.end()) {
      const std::size_t bytes = it->second;
      c.live.erase(it);
      if (bytes <= c.budget) {
        c.kept.push_back({p, bytes, std::chrono::steady_clock::now()});
        c.kept_bytes += bytes;
        kept = true;
#if defined(__linux__) && defined(MADV_FREE)
        madvise(p, bytes, MADV_FREE);  // the kernel may reclaim the pages under pressure
#endif
        if (release.capacity() < c.kept.size()) release.reserve(c.kept.size());
        c.trim(c.budget, &release);
      }
    }
  } catch (...) {  // no memory for the bookkeeping: release the block itself
  }
  for (void* q : release) std::free(q);
  if (!kept) std::free(p);
}

}  // namespace detail

Dims tile_shape(const Dims& shape, const Dims& reps) {
  int64_t size = 0;
  return detail::checked_output_shape(shape, reps, &size);
}

Dims tile_shape(const Dims& shape, const Dims& reps, const Options& options) {
  detail::validate_options(options);
  int64_t size = 0;
  return detail::checked_output_shape(shape, detail::effective_reps(reps, options), &size);
}

Plan::Plan(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, const Options& options)
    : data_(std::make_shared<const detail::PlanData>(detail::make_plan(shape, strides, itemsize, reps, options))) {}

int Plan::ndim() const noexcept { return data_->out_shape.size(); }
const Dims& Plan::shape() const noexcept { return data_->out_shape; }
int64_t Plan::size() const noexcept { return data_->out_size; }
std::size_t Plan::nbytes() const noexcept { return data_->nbytes; }
std::size_t Plan::itemsize() const noexcept { return data_->itemsize; }
int64_t Plan::input_size() const noexcept { return data_->input_size; }
const Options& Plan::options() const noexcept { return data_->options; }
std::string Plan::describe() const { return detail::describe(*data_); }
const char* Plan::kernel_name() const noexcept { return detail::kernel_name(data_->kernel); }
const char* Plan::kernel_path() const noexcept { return data_->path; }
std::vector<std::string> Plan::kernel_paths() {
  std::vector<std::string> paths;
  for (const auto& variants : detail::kKernelPaths)
    for (const char* path : variants)
      if (path != nullptr) paths.emplace_back(path);
  paths.emplace_back(detail::kNonePath);
  return paths;
}

namespace detail {

void execute_checked(const PlanData& p, const void* src, void* dst, std::size_t dst_bytes) {
  if (src == nullptr && p.input_size > 0)
    throw InvalidArgument("tessera: src is null but the input has " + std::to_string(p.input_size) + " elements");
  if (dst == nullptr && p.nbytes > 0)
    throw InvalidArgument("tessera: dst is null but the output has " + std::to_string(p.nbytes) + " bytes");
  if (dst_bytes < p.nbytes)
    throw BufferTooSmall("tessera: dst_bytes = " + std::to_string(dst_bytes) + " but the output needs " +
                         std::to_string(p.nbytes) + " bytes");
  if (p.out_size == 0) return;
  execute(p, static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst));
}

void execute_region_checked(const PlanData& p, const void* src, const Dims& start, const Dims& extent, void* dst,
                            std::size_t dst_bytes) {
  const int n = p.out_shape.size();
  if (start.size() != n || extent.size() != n)
    throw InvalidArgument("tessera: region start has " + std::to_string(start.size()) + " values and extent " +
                          std::to_string(extent.size()) + " but the output has " + std::to_string(n) +
                          " axes (give one per output axis)");
  bool whole = true, empty = false;
  for (int i = 0; i < n; ++i) {
    const std::string axis = "region axis " + std::to_string(i) + ": ";
    if (start[i] < 0) throw InvalidArgument("tessera: " + axis + "start " + std::to_string(start[i]) + " is negative");
    if (extent[i] < 0)
      throw InvalidArgument("tessera: " + axis + "extent " + std::to_string(extent[i]) + " is negative");
    if (start[i] > p.out_shape[i] - extent[i])  // no overflow: both sides are in [-INT64_MAX, INT64_MAX]
      throw InvalidArgument("tessera: " + axis + "start " + std::to_string(start[i]) + " + extent " +
                            std::to_string(extent[i]) + " exceeds the output's extent " +
                            std::to_string(p.out_shape[i]));
    whole = whole && extent[i] == p.out_shape[i];
    empty = empty || extent[i] == 0;
  }
  int64_t count = empty ? 0 : 1;
  for (int i = 0; i < n && !empty; ++i) count *= extent[i];  // at most the output's count, which fits int64
  const std::size_t bytes = static_cast<std::size_t>(count) * p.itemsize;  // at most nbytes
  if (src == nullptr && p.input_size > 0)
    throw InvalidArgument("tessera: src is null but the input has " + std::to_string(p.input_size) + " elements");
  if (dst == nullptr && bytes > 0)
    throw InvalidArgument("tessera: dst is null but the region has " + std::to_string(bytes) + " bytes");
  if (dst_bytes < bytes)
    throw BufferTooSmall("tessera: dst_bytes = " + std::to_string(dst_bytes) + " but the region needs " +
                         std::to_string(bytes) + " bytes");
  if (count == 0) return;
  if (whole) {  // the whole output: the (parallel) executor
    execute(p, static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst));
    return;
  }
  execute_region(p, static_cast<const unsigned char*>(src), start, extent, static_cast<unsigned char*>(dst));
}

}  // namespace detail

void Plan::execute(const void* src, void* dst, std::size_t dst_bytes) const {
  detail::execute_checked(*data_, src, dst, dst_bytes);
}

void Plan::execute_region(const void* src, const Dims& start, const Dims& extent, void* dst,
                          std::size_t dst_bytes) const {
  detail::execute_region_checked(*data_, src, start, extent, dst, dst_bytes);
}

void tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, void* dst,
          std::size_t dst_bytes) {
  // The plan lives on the stack: a one-shot call allocates nothing.
  detail::execute_checked(detail::make_plan(shape, strides, itemsize, reps, Options()), src, dst, dst_bytes);
}

void tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, void* dst,
          std::size_t dst_bytes, const Options& options) {
  detail::execute_checked(detail::make_plan(shape, strides, itemsize, reps, options), src, dst, dst_bytes);
}

Array tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps) {
  return tile(src, shape, strides, itemsize, reps, Options());
}

Array tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps,
           const Options& options) {
  Plan plan(shape, strides, itemsize, reps, options);
  if (src == nullptr && plan.input_size() > 0)
    throw InvalidArgument("tessera: src is null but the input has " + std::to_string(plan.input_size()) +
                          " elements");
  Array out;
  if (plan.nbytes() > 0) {
    bool fresh = false;
    out.data_.reset(detail::allocate_output(plan.nbytes(), &fresh));
    // A fresh mapping (kHugeMinBytes or more, not from the cache) is written right after the
    // kernel zeroed each page, while the page is still in the cache: ordinary stores hit it
    // there, streaming stores would send it to memory a second time. So `automatic` means
    // ordinary stores there; a recycled block takes the plan's own choice (streaming).
    if (fresh && options.nontemporal == NonTemporal::automatic) {
      Options o = options;
      o.nontemporal = NonTemporal::never;
      plan = Plan(shape, strides, itemsize, reps, o);
    }
    plan.execute(src, out.data_.get(), plan.nbytes());  // first touch: by the executor's threads
  }
  out.shape_ = plan.shape();
  out.itemsize_ = plan.itemsize();
  out.nbytes_ = plan.nbytes();
  return out;
}

const char* active_target() noexcept { return detail::dispatch_target_name(); }

const char* version() noexcept { return tessera_version(); }

}  // namespace tessera

extern "C" void tessera_free(void* data) { tessera::detail::free_output(data); }
