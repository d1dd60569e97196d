// The allocating calls' outputs (allocator.hpp): 64-byte aligned blocks, and for large outputs
// 2 MiB aligned blocks with transparent huge pages advised, kept after tessera_free for reuse.
#include "allocator.hpp"

#include <tessera/tessera.h>  // tessera_free

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sys/mman.h>
#endif

namespace tessera::detail {

namespace {

// Large outputs freed by tessera_free are kept for the next allocating call (and the prefix
// sums' buffers of plans of per-element counts, from kPlanCacheMinBytes, for the next plan). A
// fresh output's cost is its page faults: each new page is mapped, zeroed and, on a virtual
// machine that hands freed memory back to its host (virtio-balloon free page reporting, as on this
// project's machines), backed by the host again — measured at 1.4–6.7 GB/s for a 64 MiB output
// when numpy and tessera alternate, against 30–40 GB/s into pages already backed
// (bench/python_interference.py). A kept block takes no fault and is written like a caller's
// buffer (streaming stores where the plan says so).
//
// Bounded: at most `limit` bytes are kept (TESSERA_ALLOC_CACHE_BYTES, default 256 MiB, or
// set_block_cache_limit; 0 keeps none); a block is reused only for an output that needs at least
// 4/5 of it; a block unused for `max_age` (10 s unless set) is released on time by the reaper, a
// thread started when a block is kept and ended when none is (as jemalloc's background thread
// purges), which sleeps until the oldest kept block's age is up. Kept blocks are advised
// MADV_FREE, so the kernel may take their pages back under memory pressure (a later reuse then
// faults again, nothing else changes) — but until it is short of memory they stay resident and
// count in the process's RSS, which a Dask nanny or a container limit watches: a released block is
// therefore unmapped (each large block is a mapping of its own, map_block), and its pages leave
// the process at once.
//
// fork(): the child inherits the kept blocks but not the reaper; the atfork handlers, registered
// when the cache is made, hold the cache's mutex across fork() (no child inherits it locked) and
// reset the child's thread state, so the child's next allocating call or tessera_free starts its
// own reaper. At exit (or when the library is unloaded) the reaper is stopped and joined and the
// kept blocks are released; the cache itself is never destroyed, since tessera_free may run later
// still (then it keeps nothing).
using Clock = std::chrono::steady_clock;

struct CachedBlock {
  void* p;
  std::size_t bytes;
  Clock::time_point freed;
};

// TESSERA_ALLOC_CACHE_BYTES: decimal digits only (a count of bytes); unset or empty: the default.
// Anything else is reported on stderr, naming the value, and the default taken: a bad environment
// variable should not make every large allocating call of the process fail, nor pass unnoticed.
std::size_t limit_from_environment() {
  const char* v = std::getenv("TESSERA_ALLOC_CACHE_BYTES");
  if (v == nullptr || *v == '\0') return kBlockCacheDefaultBytes;
  std::size_t n = 0;
  bool ok = true;
  for (const char* s = v; *s != '\0' && ok; ++s)
    ok = *s >= '0' && *s <= '9' && !__builtin_mul_overflow(n, std::size_t{10}, &n) &&
         !__builtin_add_overflow(n, static_cast<std::size_t>(*s - '0'), &n);
  if (ok) return n;
  std::fprintf(stderr,
               "tessera: warning: TESSERA_ALLOC_CACHE_BYTES=\"%s\" is not a number of bytes (decimal digits, at "
               "most %zu); the block cache keeps at most the default, %zu bytes\n",
               v, SIZE_MAX, kBlockCacheDefaultBytes);
  return kBlockCacheDefaultBytes;
}

constexpr std::size_t kHuge = std::size_t{2} << 20;  // a transparent huge page
constexpr std::size_t kGuardBytes = 4096;              // PROT_NONE after a mapped block

// A new large block of `bytes` (a multiple of kHuge): a mapping of its own, 2 MiB aligned, its
// pages advised to be huge, followed by a guard page (a kernel's overrun past the block faults);
// null if the system has no memory for it. Not from malloc: glibc serves a request below its mmap
// threshold from its heap, and the threshold rises to the size of the largest mapped chunk freed
// (up to 32 MiB): after a process's 4 MiB outputs, a plan's 4 and 8 MiB prefix buffers came from
// heap memory those outputs had touched as 4 KiB pages, which the huge-page advice does not
// change: `rep_counts`' `tessera.repeat(out=)` ran at 82-101% of the C API's speed, below 95% in
// four of eight such processes (98-101% in three with glibc's threshold fixed by
// GLIBC_TUNABLES=glibc.malloc.mmap_threshold, 100-102% in four with this; a Xeon reporting
// family 6 model 167, 2026-12-06: bench/results/2026-12-06-xeon-f6m167/rep-counts-long-process.txt).
void* map_block(std::size_t bytes) noexcept {
#if defined(__linux__)
  const std::size_t len = bytes + kHuge + kGuardBytes;
  void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const uintptr_t base = reinterpret_cast<uintptr_t>(m);
  const uintptr_t p = (base + kHuge - 1) / kHuge * kHuge;
  const uintptr_t end = p + bytes + kGuardBytes;  // <= base + len
  if (p > base) munmap(m, p - base);
  if (base + len > end) munmap(reinterpret_cast<void*>(end), base + len - end);
  mprotect(reinterpret_cast<void*>(p + bytes), kGuardBytes, PROT_NONE);  // best effort
#if defined(MADV_HUGEPAGE)
  madvise(reinterpret_cast<void*>(p), bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  return reinterpret_cast<void*>(p);
#else
  return std::aligned_alloc(kHuge, bytes);
#endif
}

// Gives a block (of map_block) back to the system: its pages leave the process at once.
void release_block(const CachedBlock& b) noexcept {
#if defined(__linux__)
  munmap(b.p, b.bytes + kGuardBytes);
#else
  std::free(b.p);
#endif
}

void release_all(const std::vector<CachedBlock>& blocks) noexcept {
  for (const CachedBlock& b : blocks) release_block(b);
}

struct BlockCache {
  std::mutex mutex;
  std::condition_variable wake;  // the reaper: the bounds changed, or stop
  std::thread reaper;            // joinable from its start until joined (by the next start, or at exit)
  std::unordered_map<void*, std::size_t> live;  // large blocks handed out -> their padded size
  std::vector<CachedBlock> kept;                // freed blocks, most recently freed last
  std::size_t kept_bytes = 0;
  std::size_t limit = limit_from_environment();
  Clock::duration max_age = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(kBlockCacheDefaultMaxAge));
  bool reaper_running = false;  // the reaper's loop runs (false: it ended, or never started)
  bool fork_handlers = false;   // pthread_atfork registered them: a reaper may start
  bool stopping = false;  // exit (or unloading) began: nothing is kept any more, no reaper starts

  // Moves to `release` the kept blocks of max_age or older, and the oldest while more than `limit`
  // bytes are kept. Caller holds the mutex; `release` has room (reserved before).
  void trim(std::vector<CachedBlock>* release) {
    const auto now = Clock::now();
    std::size_t i = 0;
    while (i < kept.size() && (kept_bytes > limit || now - kept[i].freed >= max_age)) {
      release->push_back(kept[i]);
      kept_bytes -= kept[i].bytes;
      ++i;
    }
    kept.erase(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(i));
  }

  void ensure_reaper();
};

void before_fork();
void after_fork_parent();
void after_fork_child();

std::atomic<bool> cache_made{false};

BlockCache& cache() {
  static BlockCache* c = [] {
    auto* made = new BlockCache;  // never destroyed: tessera_free may run at exit
#if defined(__linux__)
    // Registered before any thread can hold the mutex for the cache: no child inherits it locked.
    made->fork_handlers = pthread_atfork(before_fork, after_fork_parent, after_fork_child) == 0;
#else
    made->fork_handlers = true;
#endif
    cache_made.store(true, std::memory_order_release);
    return made;
  }();
  return *c;
}

// The reaper: sleeps until the oldest kept block is due, releases what is due, ends when nothing
// is kept (or at exit).
void reap() noexcept {
  BlockCache& c = cache();
  std::vector<CachedBlock> release;
  std::unique_lock<std::mutex> lock(c.mutex);
  while (!c.stopping && !c.kept.empty()) {
    const Clock::time_point due = c.kept.front().freed + c.max_age;
    if (Clock::now() < due) {
      c.wake.wait_until(lock, due);
      continue;
    }
    try {
      release.reserve(c.kept.size());
    } catch (...) {  // no memory for the list: try again soon (the calls trim too)
      c.wake.wait_for(lock, std::chrono::milliseconds(100));
      continue;
    }
    c.trim(&release);
    lock.unlock();
    release_all(release);
    release.clear();
    lock.lock();
  }
  c.reaper_running = false;  // under the mutex: whoever takes it next may join this thread
}

void before_fork() { cache().mutex.lock(); }
void after_fork_parent() { cache().mutex.unlock(); }
void after_fork_child() {
  BlockCache& c = cache();
  // The parent's reaper does not exist here, and it may have been waiting on `wake`: a fresh
  // condition variable (no phantom waiter) and a fresh, empty thread handle (the inherited one
  // names a thread of the parent; it is overwritten, never joined or destroyed); the next call
  // starts a reaper.
  new (&c.wake) std::condition_variable;
  new (&c.reaper) std::thread;
  c.reaper_running = false;
  c.mutex.unlock();
}

// Starts the reaper if blocks are kept and none runs. Caller holds the mutex. Without a thread
// (pthread_create failed), blocks still expire at the next allocating call or tessera_free.
void BlockCache::ensure_reaper() {
  if (reaper_running || stopping || kept.empty() || !fork_handlers) return;
  // A reaper that ended set reaper_running under this mutex and takes it no more: joined at once.
  if (reaper.joinable()) reaper.join();
  try {
    reaper = std::thread(reap);
    reaper_running = true;
  } catch (...) {
  }
}

// At exit or dlclose: the reaper is stopped and joined (it may be sleeping for seconds; joined, it
// runs none of this library's code any more when the library goes), and the kept blocks are
// released (an unloaded library leaks none).
struct StopReaperAtExit {
  StopReaperAtExit() = default;
  StopReaperAtExit(const StopReaperAtExit&) = delete;
  StopReaperAtExit& operator=(const StopReaperAtExit&) = delete;
  ~StopReaperAtExit() {
    if (!cache_made.load(std::memory_order_acquire)) return;
    BlockCache& c = cache();
    std::thread reaper;
    std::vector<CachedBlock> release;
    {
      std::lock_guard<std::mutex> lock(c.mutex);
      c.stopping = true;
      c.wake.notify_all();
      reaper = std::move(c.reaper);
      release.swap(c.kept);
      c.kept_bytes = 0;
    }
    if (reaper.joinable()) reaper.join();
    release_all(release);
  }
} stop_reaper_at_exit;

}  // namespace

std::size_t block_cache_limit() {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.limit;
}

double block_cache_max_age() {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return std::chrono::duration<double>(c.max_age).count();
}

namespace {

// Sets a bound under the mutex, then releases what is past it (on the calling thread) and wakes
// the reaper (its next due time may have moved).
template <class Set>
void set_bound(const Set& set) {
  BlockCache& c = cache();
  std::vector<CachedBlock> release;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    release.reserve(c.kept.size());
    set(c);
    c.trim(&release);
    c.wake.notify_all();
  }
  release_all(release);
}

}  // namespace

void set_block_cache_limit(std::size_t bytes) {
  set_bound([&](BlockCache& c) { c.limit = bytes; });
}

void set_block_cache_max_age(double seconds) {
  set_bound([&](BlockCache& c) {
    c.max_age = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  });
}

void* allocate_output(std::size_t nbytes, bool* fresh, std::size_t cached_from) {
  // Large outputs: mappings of their own (map_block), 2 MiB aligned and advised to use
  // transparent huge pages, so that the first touch costs one fault per 2 MiB instead of one per
  // 4 KiB (page faults bound a fresh output). Outputs only from 32 MiB (cached_from's default),
  // glibc's largest mmap threshold: smaller blocks are recycled by malloc (already touched, no
  // fault at all), which huge-page mappings of their own would prevent. A plan's prefix buffers
  // from 4 MiB (kPlanCacheMinBytes): a one-shot call's plan dies with it, and malloc mapped such
  // buffers afresh call after call in a Python process (2026-11-29).
  const bool large = nbytes >= cached_from;
  const std::size_t align = large ? kHuge : 64;
  const std::size_t padded = (nbytes + align - 1) / align * align;  // aligned_alloc wants a multiple
  if (padded < nbytes || (large && padded > SIZE_MAX - kHuge - kGuardBytes)) throw std::bad_alloc();
  *fresh = false;
  if (!large) {
    void* p = std::aligned_alloc(align, padded);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // From 4 MiB, the whole 2 MiB pages inside the block advised to be huge (numpy advises its
    // own arrays from 4 MiB the same way): a block malloc maps afresh then takes one fault per
    // 2 MiB where it can; one malloc recycles is already backed and the advice changes nothing.
    if (nbytes >= kHugeAdviseMinBytes) {
      const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) / kHuge * kHuge;
      const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + padded) / kHuge * kHuge;
      if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only
    }
#endif
    return p;
  }
  BlockCache& c = cache();
  std::vector<CachedBlock> release;
  void* hit = nullptr;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    release.reserve(c.kept.size());
    c.trim(&release);
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
    c.ensure_reaper();  // a fork child's inherited blocks
  }
  release_all(release);
  if (hit != nullptr) {
    *fresh = false;
    return hit;
  }
  void* p = map_block(padded);
  if (p == nullptr) throw std::bad_alloc();
  *fresh = true;  // a mapping of its own: the kernel zeroes its pages on first touch
  try {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.live.emplace(p, padded);
  } catch (...) {
    release_block({p, padded, {}});
    throw;
  }
  return p;
}

void free_output(void* p) noexcept {
  if (p == nullptr) return;
  BlockCache& c = cache();
  std::vector<CachedBlock> release;
  bool large = false, kept = false;
  std::size_t bytes = 0;
  try {
    std::lock_guard<std::mutex> lock(c.mutex);
    const auto it = c.live.find(p);
    if (it != c.live.end()) {
      large = true;
      bytes = it->second;
      c.live.erase(it);
      if (bytes <= c.limit && !c.stopping) {
        if (release.capacity() < c.kept.size() + 1) release.reserve(c.kept.size() + 1);
        c.kept.push_back({p, bytes, Clock::now()});
        c.kept_bytes += bytes;
        kept = true;
#if defined(__linux__) && defined(MADV_FREE)
        madvise(p, bytes, MADV_FREE);  // the kernel may reclaim the pages under pressure
#endif
        c.trim(&release);  // may release p itself (a max age of 0)
        c.ensure_reaper();
      }
    }
  } catch (...) {  // no memory for the bookkeeping (the block is not in `kept`): release it
    kept = false;
  }
  release_all(release);
  if (!kept) {
    if (large)
      release_block({p, bytes, {}});
    else
      std::free(p);
  }
}

}  // namespace tessera::detail

extern "C" void tessera_free(void* data) { tessera::detail::free_output(data); }
