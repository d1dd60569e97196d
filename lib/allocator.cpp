// The allocating calls' outputs (allocator.hpp): 64-byte aligned blocks, and for large outputs
// 2 MiB aligned blocks with transparent huge pages advised, kept after tessera_free for reuse.
#include "allocator.hpp"

#include <tessera/tessera.h>  // tessera_free

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tessera::detail {

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

std::size_t block_cache_limit() { return cache().budget; }

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

}  // namespace tessera::detail

extern "C" void tessera_free(void* data) { tessera::detail::free_output(data); }
