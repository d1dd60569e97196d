// Which threads read a buffer: its pages start PROT_NONE, the first read of each page faults, a
// SIGSEGV handler records the reading thread's id (gettid) and makes the page readable, and the
// read resumes. For tests that prove a call was read by two threads or more (test_concurrency,
// test_reduce_bits). One recorder at a time; Linux only.
#ifndef TESSERA_TESTS_TOUCH_RECORDER_HPP
#define TESSERA_TESTS_TOUCH_RECORDER_HPP

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>
#include <vector>

namespace test {

/// The calling thread's kernel id (gettid).
inline long this_thread_tid() { return static_cast<long>(syscall(SYS_gettid)); }

class TouchRecorder {
 public:
  /// `bytes` copied onto whole pages (the last one's tail zero), every page recorded.
  /// Throws std::runtime_error if mmap, sigaction or mprotect fails.
  explicit TouchRecorder(std::vector<unsigned char> bytes)
      : page_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))),
        pages_((bytes.size() + page_ - 1) / page_),
        contents_(std::move(bytes)) {
    void* p = mmap(nullptr, pages_ * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("TouchRecorder: mmap failed");
    base_ = static_cast<unsigned char*>(p);
    if (!contents_.empty()) std::memcpy(base_, contents_.data(), contents_.size());
    touchers_ = std::make_unique<std::atomic<long>[]>(pages_);
    for (std::size_t i = 0; i < pages_; ++i) touchers_[i].store(0);
    active_ = this;
    struct sigaction sa {};
    sa.sa_sigaction = &TouchRecorder::on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &previous_) != 0) throw std::runtime_error("TouchRecorder: sigaction failed");
    if (mprotect(base_, pages_ * page_, PROT_NONE) != 0) throw std::runtime_error("TouchRecorder: mprotect failed");
  }
  ~TouchRecorder() {
    sigaction(SIGSEGV, &previous_, nullptr);
    active_ = nullptr;
    munmap(base_, pages_ * page_);
  }
  TouchRecorder(const TouchRecorder&) = delete;
  TouchRecorder& operator=(const TouchRecorder&) = delete;

  const unsigned char* data() const { return base_; }
  /// The recorded bytes (whole pages).
  std::size_t bytes() const { return pages_ * page_; }
  std::size_t pages() const { return pages_; }
  /// Thread id of the first reader of page p, 0 if nobody read it.
  long toucher(std::size_t p) const { return touchers_[p].load(); }
  /// The ids of the threads that first read some page.
  std::set<long> readers() const {
    std::set<long> s;
    for (std::size_t i = 0; i < pages_; ++i)
      if (touchers_[i].load() != 0) s.insert(touchers_[i].load());
    return s;
  }
  /// The contents given (read from ordinary memory, without touching the recorded pages).
  const std::vector<unsigned char>& contents() const { return contents_; }

 private:
  static void on_fault(int, siginfo_t* info, void*) {
    TouchRecorder* r = active_;
    auto* address = static_cast<unsigned char*>(info->si_addr);
    if (r != nullptr && address >= r->base_ && address < r->base_ + r->pages_ * r->page_) {
      const std::size_t p = static_cast<std::size_t>(address - r->base_) / r->page_;
      long expected = 0;
      r->touchers_[p].compare_exchange_strong(expected, this_thread_tid());
      mprotect(r->base_ + p * r->page_, r->page_, PROT_READ);
      return;  // the faulting read runs again and succeeds
    }
    // Not ours: put the previous handler back; the access faults again and reaches it.
    if (r != nullptr) sigaction(SIGSEGV, &r->previous_, nullptr);
  }

  static inline TouchRecorder* active_ = nullptr;
  std::size_t page_, pages_;
  std::vector<unsigned char> contents_;
  unsigned char* base_ = nullptr;
  std::unique_ptr<std::atomic<long>[]> touchers_;
  struct sigaction previous_ {};
};

}  // namespace test

#endif  // TESSERA_TESTS_TOUCH_RECORDER_HPP
