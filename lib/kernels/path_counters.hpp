// Executed-path counters (test builds only: meson configure -Dpath_counters=true, which defines
// TESSERA_PATH_COUNTERS=1 for the library and the test suite; tests/run turns it on for
// build/tests). The planner decides a plan's Path once (plan.hpp); kernels/rows.cpp counts the
// Path each range of output elements actually ran, per Highway target — once per range, never per
// row or element — so that the guard suite can show every path ran on every target that plans it
// and that what ran is what Plan::kernel_path() said.
//
// Without TESSERA_PATH_COUNTERS, TESSERA_COUNT_PATH expands to nothing (its argument is not
// evaluated) and nothing else is declared: a normal build carries no counter.
//
// Included by kernels/rows.cpp (the counting site), kernels/path_counters.cpp (the storage and
// the accessors) and tests/test_guard.cpp (the accessors).
#ifndef TESSERA_LIB_KERNELS_PATH_COUNTERS_HPP
#define TESSERA_LIB_KERNELS_PATH_COUNTERS_HPP

#include <tessera/tessera.h>  // TESSERA_API

#include <cstdint>

#include "plan.hpp"
#include "reduce.hpp"

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
#include <atomic>

namespace tessera::detail {

/// The counters' slot of a Highway target (a single HWY_* bit): its bit number.
constexpr int ExecTargetSlot(int64_t target) {
  int slot = 0;
  for (uint64_t t = static_cast<uint64_t>(target); t > 1; t >>= 1) ++slot;
  return slot;
}
inline constexpr int kExecTargetSlots = 64;

/// [target slot][Path]; relaxed increments (only the totals matter, read after the calls return).
extern std::atomic<uint64_t> g_exec_path_counts[kExecTargetSlots][kPathCount];

/// How many ranges ran `path` (a Path's index) on Highway target `target` (an HWY_* bit) since
/// the last reset.
TESSERA_API uint64_t executed_path_count(int64_t target, int path) noexcept;
/// Sets every counter of every target to 0 (the reductions' too).
TESSERA_API void reset_executed_path_counts() noexcept;

/// The reductions' counters: [target slot][ReducePath], one count per kernel call (a range of
/// items, or one leaf range of an item).
extern std::atomic<uint64_t> g_exec_reduce_counts[kExecTargetSlots][kReducePathCount];
/// How many kernel calls ran reduction path `path` (a ReducePath's index) on `target`.
TESSERA_API uint64_t executed_reduce_path_count(int64_t target, int path) noexcept;

}  // namespace tessera::detail

// Counted by the per-target code: HWY_TARGET is the target being compiled.
#define TESSERA_COUNT_PATH(path)                                                                          \
  ::tessera::detail::g_exec_path_counts[::tessera::detail::ExecTargetSlot(HWY_TARGET)][static_cast<int>(path)] \
      .fetch_add(1, std::memory_order_relaxed)

#define TESSERA_COUNT_REDUCE_PATH(path)                                                        \
  ::tessera::detail::g_exec_reduce_counts[::tessera::detail::ExecTargetSlot(HWY_TARGET)]             \
                                         [static_cast<int>(path)]                                    \
                                             .fetch_add(1, std::memory_order_relaxed)

#else
#define TESSERA_COUNT_PATH(path) static_cast<void>(0)
#define TESSERA_COUNT_REDUCE_PATH(path) static_cast<void>(0)
#endif

#endif  // TESSERA_LIB_KERNELS_PATH_COUNTERS_HPP
