#include "alloc_spy.hpp"

#include <doctest/doctest.h>
#include <dlfcn.h>
#include <tessera/tessera.h>

#include <sys/mman.h>
#include <sys/types.h>

#include <atomic>
#include <cstdlib>

namespace {

// Per thread and constant-initialized: no allocation or TLS set-up inside the allocator.
thread_local bool recording = false;
thread_local test::AllocCalls record;

using AlignedAlloc = void* (*)(std::size_t, std::size_t);
using Mmap = void* (*)(void*, std::size_t, int, int, int, off_t);

}  // namespace

// AddressSanitizer's own aligned_alloc and mmap, where a sanitizer runtime is linked in. clang
// links its runtime into the executable, beside these definitions, so RTLD_NEXT would skip it and
// find libc's: blocks that ASan never saw, and a "bad-free" when they are freed. (g++'s runtime is
// a shared library after the executable, where RTLD_NEXT finds it; the names are the same there.)
extern "C" void* __interceptor_aligned_alloc(std::size_t, std::size_t) __attribute__((weak));
extern "C" void* __interceptor_mmap(void*, std::size_t, int, int, int, off_t) __attribute__((weak));

namespace {

// The definition of `name` after this executable's: the sanitizer's `interceptor` where it is
// linked in, else the next one the dynamic linker finds; looked up once and kept in `next`.
template <class F>
F next_definition(std::atomic<F>& next, F interceptor, const char* name) {
  F f = next.load(std::memory_order_acquire);
  if (f == nullptr) {
    f = interceptor != nullptr ? interceptor : reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
    next.store(f, std::memory_order_release);
  }
  return f;
}

std::atomic<AlignedAlloc> next_aligned_alloc{nullptr};
std::atomic<Mmap> next_mmap{nullptr};

}  // namespace

extern "C" void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  const AlignedAlloc next = next_definition(next_aligned_alloc, __interceptor_aligned_alloc, "aligned_alloc");
  void* p = next(alignment, size);
  if (recording) {
    ++record.calls;
    record.last_size = size;
    record.last_refused = p == nullptr;
    if (size >= (std::size_t{32} << 20)) ++record.large;
  }
  return p;
}

// The library maps its large blocks with mmap (lib/allocator.cpp map_block). Only mappings of 4
// MiB or more are recorded (`mapped`; from 32 MiB as calls too): the library's blocks (with their
// alignment slack and guard page), not the tests' own guard-page buffers (tests/guard.cpp) or a
// runtime's small mappings.
extern "C" void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) noexcept {
  const Mmap next = next_definition(next_mmap, __interceptor_mmap, "mmap");
  void* p = next(addr, length, prot, flags, fd, offset);
  if (recording && length >= (std::size_t{4} << 20)) {
    ++record.mapped;
    if (length >= (std::size_t{32} << 20)) {
      ++record.calls;
      record.last_size = length;
      record.last_refused = p == MAP_FAILED;
      ++record.large;
    }
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

HoldKeptBlocks::HoldKeptBlocks(std::size_t nbytes) {
  const unsigned char byte = 1;
  const int64_t shape[1] = {1};
  const int64_t reps[1] = {static_cast<int64_t>(nbytes)};
  for (int i = 0; i < 64; ++i) {
    void* data = nullptr;
    std::size_t bytes = 0;
    int out_ndim = 0;
    int64_t out_shape[TESSERA_MAX_NDIM];
    AllocSpy spy;
    REQUIRE(tessera_tile_alloc(&byte, 1, shape, nullptr, 1, 1, reps, &data, &bytes, &out_ndim, out_shape) ==
            TESSERA_OK);
    blocks_.push_back(data);
    if (spy.seen().large == 1) return;  // fresh: no kept block of this size is left
  }
  FAIL("the allocator kept handing out kept blocks");
}

HoldKeptBlocks::~HoldKeptBlocks() {
  for (void* p : blocks_) tessera_free(p);
}

}  // namespace test
