// Executed-path counters (test builds only: meson configure -Dpath_counters=true, which defines
// TESSERA_PATH_COUNTERS=1 for the library and the test suite; tests/run turns it on for
// build/tests). Plan::kernel_path() is the planner's label, the same on every target; these
// counters record what the per-target kernels in kernels/dispatch.cpp actually ran, counted where
// the branch is taken: once per range where the executor picks the route and the row function,
// once per row where the choice is made per row (the shuffle's FillPattern rows, a direct fill's
// rows), once per tile for the gathers' register transposes. Never per element.
//
// Without TESSERA_PATH_COUNTERS, TESSERA_COUNT_PATH expands to nothing (its argument is not
// evaluated) and nothing below the name table is declared: a normal build carries no counter.
//
// Included by kernels/dispatch.cpp (the counting sites), kernels/path_counters.cpp (the storage
// and the accessors) and tests/test_guard.cpp (the accessors and the names).
#ifndef TESSERA_LIB_KERNELS_PATH_COUNTERS_HPP
#define TESSERA_LIB_KERNELS_PATH_COUNTERS_HPP

#include <tessera/tessera.h>  // TESSERA_API

#include <cstddef>
#include <cstdint>

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS
#include <atomic>
#endif

namespace tessera::detail {

/// How a range's rows reach the output: ordinary stores, streamed through an L1 stage (".nt"), or
/// streamed directly from the source or a register (".nt.direct").
enum PathRoute : int { kRoutePlain = 0, kRouteStaged = 1, kRouteDirect = 2 };

/// The executed paths, named like the planner's kKernelPaths (plan.hpp) where they are the code
/// that label stands for, plus refinements the planner's labels do not tell apart:
///   gather.N          rows gathered one by one with ordinary stores (short source strides, fewer
///                     than two whole rows, large elements; and `.nt` plans that fall back to it)
///   gather.N.blocked  whole rows through the blocked-transpose tile, ordinary stores
///   gather.N.nt       whole rows through the tile, written out with streaming stores
///   gather.4.transposed / gather.8.transposed   tiles with at least one block transposed in
///                     vector registers (GatherTile), on top of the range's gather.N path
enum ExecPath : int {
  kExecCopy = 0,            // + route
  kExecShuffle = 3,         // + route (plain, staged)
  kExecShort = 5,           // + route (plain, staged)
  kExecLong = 7,            // + route
  kExecFill = 10,           // + 3 * (0..4 for 1, 2, 4, 8, 16 bytes) + route
  kExecFillAny = 25,        // + route (plain, staged)
  kExecGather = 27,         // + 3 * (0..5 for 1, 2, 4, 8, 16, any bytes) + kGather*
  kExecGather4Transposed = 45,
  kExecGather8Transposed = 46,
  kExecPathCount = 47,
};
enum GatherExec : int { kGatherRows = 0, kGatherBlocked = 1, kGatherStreamed = 2 };

inline constexpr const char* kExecPathNames[kExecPathCount] = {
    "copy", "copy.nt", "copy.nt.direct",
    "pattern.shuffle", "pattern.shuffle.nt",
    "pattern.short", "pattern.short.nt",
    "pattern.long", "pattern.long.nt", "pattern.long.nt.direct",
    "fill.1", "fill.1.nt", "fill.1.nt.direct",
    "fill.2", "fill.2.nt", "fill.2.nt.direct",
    "fill.4", "fill.4.nt", "fill.4.nt.direct",
    "fill.8", "fill.8.nt", "fill.8.nt.direct",
    "fill.16", "fill.16.nt", "fill.16.nt.direct",
    "fill.any", "fill.any.nt",
    "gather.1", "gather.1.blocked", "gather.1.nt",
    "gather.2", "gather.2.blocked", "gather.2.nt",
    "gather.4", "gather.4.blocked", "gather.4.nt",
    "gather.8", "gather.8.blocked", "gather.8.nt",
    "gather.16", "gather.16.blocked", "gather.16.nt",
    "gather.any", "gather.any.blocked", "gather.any.nt",
    "gather.4.transposed", "gather.8.transposed",
};

static_assert(kExecPathNames[kExecPathCount - 1] != nullptr, "a name for every executed path");
static_assert(kExecShuffle == kExecCopy + 3 && kExecShort == kExecShuffle + 2 && kExecLong == kExecShort + 2 &&
                  kExecFill == kExecLong + 3 && kExecFillAny == kExecFill + 15 && kExecGather == kExecFillAny + 2 &&
                  kExecGather4Transposed == kExecGather + 18,
              "the ExecPath offsets follow kExecPathNames");

/// Index 0..4 of a fixed element size 1, 2, 4, 8, 16; 5 for any other.
constexpr int ExecSizeIndex(std::size_t itemsize) {
  return itemsize == 1 ? 0 : itemsize == 2 ? 1 : itemsize == 4 ? 2 : itemsize == 8 ? 3 : itemsize == 16 ? 4 : 5;
}
/// fill.N[.nt[.direct]] of an element size (fill.any has no direct route).
constexpr int ExecFillPath(std::size_t itemsize, int route) {
  return ExecSizeIndex(itemsize) == 5 ? kExecFillAny + route : kExecFill + 3 * ExecSizeIndex(itemsize) + route;
}
/// gather.N, gather.N.blocked or gather.N.nt of an element size.
constexpr int ExecGatherPath(std::size_t itemsize, int how) { return kExecGather + 3 * ExecSizeIndex(itemsize) + how; }

/// The counters' slot of a Highway target (a single HWY_* bit): its bit number.
constexpr int ExecTargetSlot(int64_t target) {
  int slot = 0;
  for (uint64_t t = static_cast<uint64_t>(target); t > 1; t >>= 1) ++slot;
  return slot;
}
inline constexpr int kExecTargetSlots = 64;

#if defined(TESSERA_PATH_COUNTERS) && TESSERA_PATH_COUNTERS

/// [target slot][path]; relaxed increments (only the totals matter, read after the calls return).
extern std::atomic<uint64_t> g_exec_path_counts[kExecTargetSlots][kExecPathCount];

/// How often `path` ran on Highway target `target` (an HWY_* bit) since the last reset.
TESSERA_API uint64_t executed_path_count(int64_t target, int path) noexcept;
/// Sets every counter of every target to 0.
TESSERA_API void reset_executed_path_counts() noexcept;

// Counted by the per-target code: HWY_TARGET is the target being compiled.
#define TESSERA_COUNT_PATH(path)                                                                   \
  ::tessera::detail::g_exec_path_counts[::tessera::detail::ExecTargetSlot(HWY_TARGET)][(path)].fetch_add( \
      1, std::memory_order_relaxed)

#else
#define TESSERA_COUNT_PATH(path) static_cast<void>(0)
#endif

}  // namespace tessera::detail

#endif  // TESSERA_LIB_KERNELS_PATH_COUNTERS_HPP
