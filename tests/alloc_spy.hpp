// Watches the allocating tile's allocator: counts the calls to aligned_alloc (lib/allocator.cpp's
// std::aligned_alloc, outputs below 32 MiB) and the mappings of 32 MiB or more (its mmap of a
// large block, map_block) made on the calling thread, with the last size asked for and whether it
// was refused. alloc_spy.cpp defines aligned_alloc and mmap in the test executable; the dynamic
// linker binds the library's calls to them ahead of libc's (or a sanitizer's), and each forwards
// the call to that next definition. A test checks the spy against a successful allocation before
// relying on a count of 0.
#ifndef TESSERA_TESTS_ALLOC_SPY_HPP
#define TESSERA_TESTS_ALLOC_SPY_HPP

#include <cstddef>
#include <vector>

namespace test {

struct AllocCalls {
  std::size_t calls = 0;      // aligned_alloc and large mmap calls on this thread since the spy was made
  std::size_t last_size = 0;  // size of the last call (an mmap's: the block, its alignment slack and guard)
  bool last_refused = false;  // the last call returned null (MAP_FAILED)
  std::size_t large = 0;      // calls of 32 MiB or more (lib/allocator.hpp kHugeMinBytes): fresh large blocks
  std::size_t mapped = 0;     // mmap calls of 4 MiB or more (kPlanCacheMinBytes): new blocks of any kind
};

/// Records the aligned_alloc calls of this thread while it lives (scopes do not nest).
class AllocSpy {
 public:
  AllocSpy();
  ~AllocSpy();
  AllocSpy(const AllocSpy&) = delete;
  AllocSpy& operator=(const AllocSpy&) = delete;
  AllocCalls seen() const;
};

/// Takes every kept block (lib/allocator.cpp) an allocating call of `nbytes` (32 MiB or more)
/// could reuse: allocates outputs of that size (a 1-byte fill) until one is fresh, holding them
/// all, so that the next allocating call of that size gets a fresh block too. Frees them (the
/// allocator keeps them again) when it goes out of scope. Fails the test case if 64 in a row
/// were kept blocks.
class HoldKeptBlocks {
 public:
  explicit HoldKeptBlocks(std::size_t nbytes);
  ~HoldKeptBlocks();
  HoldKeptBlocks(const HoldKeptBlocks&) = delete;
  HoldKeptBlocks& operator=(const HoldKeptBlocks&) = delete;

 private:
  std::vector<void*> blocks_;
};

}  // namespace test

#endif  // TESSERA_TESTS_ALLOC_SPY_HPP
