// doctest main for tessera_tests. Finalizes the TBB scheduler before exit so that worker threads
// are joined and sanitizer builds report no false leaks from them.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <tbb/global_control.h>

#include <cstdio>
#include <new>

#include "util.hpp"

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

namespace {

// Counts the test cases that ran, so that a run whose filters match nothing fails instead of
// passing with "0 test cases" (a renamed test case would otherwise empty a filtered run).
int test_cases_run = 0;

struct CountingListener : doctest::IReporter {
  explicit CountingListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { ++test_cases_run; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("count_test_cases", 1, CountingListener);

}  // namespace

int main(int argc, char** argv) {
  tbb::task_scheduler_handle handle{tbb::attach{}};
  int result = 0;
  bool listing = false;
  {
    doctest::Context context(argc, argv);
    result = context.run();
    listing = context.shouldExit() && test_cases_run == 0;  // --help, --list-test-cases, ...
  }
  if (!listing)
    std::printf("tessera_tests: %d test cases ran; TESSERA_TEST_SCALE = %d (randomized sweeps and lists of large "
                "cases at 1/%d; TESSERA_TEST_SCALE_OFFSET = %d)\n",
                test_cases_run, test::test_scale(), test::test_scale(), test::test_scale_offset());
  if (!listing && !test::skipped_targets().empty())
    std::printf("tessera_tests: the per-target loops left out %s (TESSERA_TEST_SKIP_TARGETS: another run tests them)\n",
                test::skipped_targets().c_str());
  if (result == 0 && test_cases_run == 0 && !listing) {
    std::fprintf(stderr, "tessera_tests: no test case ran (do the --test-case filters match any?)\n");
    result = 1;
  }
  // Joins TBB's workers; false only if some other thread still uses the scheduler.
  tbb::finalize(handle, std::nothrow);
  return result;
}
