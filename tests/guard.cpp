#include "guard.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace test {

std::size_t GuardPage::page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

GuardPage::GuardPage(std::size_t capacity) {
  const std::size_t page = page_size();
  capacity_ = (capacity + page - 1) / page * page;
  if (capacity_ == 0) capacity_ = page;
  mapped_ = 2 * capacity_ + page;
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error(std::string("GuardPage: mmap failed: ") + std::strerror(errno));
  base_ = static_cast<unsigned char*>(p);
  if (mprotect(base_ + capacity_, page, PROT_NONE) != 0) {
    const int err = errno;
    munmap(base_, mapped_);
    throw std::runtime_error(std::string("GuardPage: mprotect failed: ") + std::strerror(err));
  }
}

GuardPage::~GuardPage() { munmap(base_, mapped_); }

unsigned char* GuardPage::area(GuardSide side) const {
  return side == GuardSide::end ? base_ : base_ + capacity_ + page_size();
}

unsigned char* GuardPage::place(GuardSide side, std::size_t bytes, std::size_t gap) const {
  if (bytes + gap > capacity_)
    throw std::logic_error("GuardPage::place: " + std::to_string(bytes) + " + " + std::to_string(gap) +
                           " bytes exceed the capacity " + std::to_string(capacity_));
  unsigned char* guard_page = base_ + capacity_;
  return side == GuardSide::end ? guard_page - gap - bytes : guard_page + page_size() + gap;
}

int run_in_child(int (*body)(const void* arg), const void* arg) {
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("run_in_child: fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: the default action for SIGSEGV/SIGBUS (a sanitizer may have installed its own
    // reporting handler), no report on the test's stderr.
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 2);
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    _exit(body(arg));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("run_in_child: waitpid failed: ") + std::strerror(errno));
  }
  return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
}

namespace {
struct Access {
  const unsigned char* address;
  bool write;
};
int do_access(const void* arg) {
  const auto* a = static_cast<const Access*>(arg);
  auto* p = const_cast<volatile unsigned char*>(a->address);
  if (a->write)
    *p = 0x5A;
  else
    (void)*p;
  return 0;
}
}  // namespace

bool access_faults(const unsigned char* address, bool write) {
  const Access a{address, write};
  return run_in_child(&do_access, &a) != 0;
}

}  // namespace test
