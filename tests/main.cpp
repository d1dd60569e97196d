// doctest main for tessera_tests. Finalizes the TBB scheduler before exit so that worker threads
// are joined and sanitizer builds report no false leaks from them.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <tbb/global_control.h>

#include <new>

#if defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define TESSERA_TESTS_ASAN 1
#  endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TESSERA_TESTS_ASAN)
#  define TESSERA_TESTS_ASAN 1
#endif

#ifdef TESSERA_TESTS_ASAN
// The out-of-memory test (test_errors.cpp) asks for 2^60 bytes: under ASan that must return null,
// as the C library does, rather than abort with an allocation-size-too-big report (ASan still
// prints one "WARNING: AddressSanitizer failed to allocate" line per refusal: expected). ASAN_OPTIONS
// from the environment still apply on top of these defaults.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

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
