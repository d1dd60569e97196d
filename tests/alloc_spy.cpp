#include "alloc_spy.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>

namespace {

// Per thread and constant-initialized: no allocation or TLS set-up inside the allocator.
thread_local bool recording = false;
thread_local test::AllocCalls record;

using AlignedAlloc = void* (*)(std::size_t, std::size_t);

AlignedAlloc next_aligned_alloc() {
  static std::atomic<AlignedAlloc> next{nullptr};
  AlignedAlloc f = next.load(std::memory_order_acquire);
  if (f == nullptr) {
    f = reinterpret_cast<AlignedAlloc>(dlsym(RTLD_NEXT, "aligned_alloc"));
    next.store(f, std::memory_order_release);
  }
  return f;
}

}  // namespace

extern "C" void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  void* p = next_aligned_alloc()(alignment, size);
  if (recording) {
    ++record.calls;
    record.last_size = size;
    record.last_refused = p == nullptr;
    if (size >= (std::size_t{32} << 20)) ++record.large;
  }
  return p;
}

namespace test {

AllocSpy::AllocSpy() {
  record = AllocCalls{};
  recording = true;
}

AllocSpy::~AllocSpy() { recording = false; }

AllocCalls AllocSpy::seen() const { return record; }

}  // namespace test
