// Guard-page memory for the tests: buffers placed flush against (or a chosen gap away from) a
// PROT_NONE page, so that an access one byte past a buffer's end — or, placed on the other side,
// one byte before its start — faults at once instead of silently touching a neighbour.
// (libdeflate's programs/test_util.c, alloc_guarded_buffer, does the same.)
#ifndef TESSERA_TESTS_GUARD_HPP
#define TESSERA_TESTS_GUARD_HPP

#include <cstddef>

namespace test {

/// Which end of a buffer touches the guard page.
enum class GuardSide {
  end,    // the buffer ends `gap` bytes before the guard page: overruns fault
  start,  // the buffer starts `gap` bytes after the guard page: underruns fault
};

/// One anonymous mapping laid out as
///   [ low: capacity bytes | guard: one PROT_NONE page | high: capacity bytes ]
/// (capacity rounded up to whole pages). place() hands out buffers against the guard page; the
/// caller may reuse the same memory for every case. Not copyable. Throws std::runtime_error if
/// mmap or mprotect fails.
class GuardPage {
 public:
  explicit GuardPage(std::size_t capacity);
  ~GuardPage();
  GuardPage(const GuardPage&) = delete;
  GuardPage& operator=(const GuardPage&) = delete;

  /// A buffer of `bytes` bytes whose end (GuardSide::end) lies `gap` bytes before the guard page,
  /// or whose start (GuardSide::start) lies `gap` bytes after it. Requires bytes + gap <= capacity().
  /// A zero-byte buffer at gap 0 points exactly at the guard page's first byte (side end) or at
  /// the first byte after it (side start).
  unsigned char* place(GuardSide side, std::size_t bytes, std::size_t gap) const;

  /// The accessible bytes on `side` of the guard page: [first, first + capacity()).
  unsigned char* area(GuardSide side) const;
  std::size_t capacity() const { return capacity_; }
  /// The PROT_NONE page.
  const unsigned char* guard() const { return base_ + capacity_; }
  static std::size_t page_size();

 private:
  unsigned char* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t mapped_ = 0;
};

/// Runs `body` in a forked child process (stderr to /dev/null, SIGSEGV and SIGBUS at their default
/// action) and returns its exit code, or -N if signal N killed it. The child runs only `body`
/// (then _exit), so it must not need other threads (no parallel tessera call). A sanitizer that
/// catches a fault itself exits non-zero.
int run_in_child(int (*body)(const void* arg), const void* arg);

/// Runs one byte access at `address` (a read, or a write of a byte when `write`) in a child process
/// (run_in_child) and reports whether the child died of it rather than exiting normally. Used to
/// show that the guard page really faults and that the last byte of a buffer really does not.
bool access_faults(const unsigned char* address, bool write);

}  // namespace test

#endif  // TESSERA_TESTS_GUARD_HPP
