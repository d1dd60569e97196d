// Storage and accessors of the executed-path counters (kernels/path_counters.hpp). Compiled only
// with -Dpath_counters=true (lib/meson.build), the test build: a normal library has neither the
// counters nor these symbols.
#include "kernels/path_counters.hpp"

#if !TESSERA_PATH_COUNTERS
#error "kernels/path_counters.cpp is built only with TESSERA_PATH_COUNTERS=1 (meson -Dpath_counters=true)"
#endif

namespace tessera::detail {

std::atomic<uint64_t> g_exec_path_counts[kExecTargetSlots][kPathCount];
std::atomic<uint64_t> g_exec_reduce_counts[kExecTargetSlots][kReduceKernelCount];
std::atomic<uint64_t> g_exec_variant_counts[kExecTargetSlots][kVariantCount];
thread_local VariantTally t_variant_tally{};

void flush_variant_tally(int slot) noexcept {
  VariantTally& t = t_variant_tally;
  for (int v = 0; v < kVariantCount; ++v) {
    if (t.n[v] == 0) continue;
    g_exec_variant_counts[slot][v].fetch_add(t.n[v], std::memory_order_relaxed);
    t.n[v] = 0;
  }
}

uint64_t compiled_variants() noexcept { return row_variants() | reduce_variants(); }

uint64_t executed_variant_count(int64_t target, int variant) noexcept {
  if (target == 0 || variant < 0 || variant >= kVariantCount) return 0;
  return g_exec_variant_counts[ExecTargetSlot(target)][variant].load(std::memory_order_relaxed);
}

uint64_t executed_reduce_kernel_count(int64_t target, int kernel) noexcept {
  if (target == 0 || kernel < 0 || kernel >= kReduceKernelCount) return 0;
  return g_exec_reduce_counts[ExecTargetSlot(target)][kernel].load(std::memory_order_relaxed);
}

uint64_t executed_reduce_path_count(int64_t target, int path) noexcept {
  if (target == 0 || path < 0 || path >= kReducePathCount) return 0;
  uint64_t n = 0;
  for (int k = 0; k < kReduceKernelCount; ++k)
    if (static_cast<int>(kReduceKernels[k].path) == path) n += executed_reduce_kernel_count(target, k);
  return n;
}

uint64_t executed_path_count(int64_t target, int path) noexcept {
  if (target == 0 || path < 0 || path >= kPathCount) return 0;
  return g_exec_path_counts[ExecTargetSlot(target)][path].load(std::memory_order_relaxed);
}

void reset_executed_path_counts() noexcept {
  for (auto& slot : g_exec_path_counts)
    for (auto& n : slot) n.store(0, std::memory_order_relaxed);
  for (auto& slot : g_exec_reduce_counts)
    for (auto& n : slot) n.store(0, std::memory_order_relaxed);
  for (auto& slot : g_exec_variant_counts)
    for (auto& n : slot) n.store(0, std::memory_order_relaxed);
}

}  // namespace tessera::detail
