// doctest main for tessera_tests. Finalizes the TBB scheduler before exit so that worker threads
// are joined and sanitizer builds report no false leaks from them.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <tbb/global_control.h>

#include <new>

int main(int argc, char** argv) {
  tbb::task_scheduler_handle handle{tbb::attach{}};
  int result = 0;
  {
    doctest::Context context(argc, argv);
    result = context.run();
  }
  // Joins TBB's workers; false only if some other thread still uses the scheduler.
  tbb::finalize(handle, std::nothrow);
  return result;
}
