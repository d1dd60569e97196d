// How the executors (executor.cpp, reduce_executor.cpp) split work over TBB. Internal.
#ifndef TESSERA_LIB_PARALLEL_HPP
#define TESSERA_LIB_PARALLEL_HPP

#include <cstdint>

namespace tessera::detail {

/// Below this many output bytes (a reduction: input bytes) one thread finishes before a task could
/// be woken: no TBB call at all.
inline constexpr int64_t kParallelMinBytes = 512 * 1024;
/// Smallest chunk handed to a task, and how many chunks per thread (for load balance).
inline constexpr int64_t kMinChunkBytes = 128 * 1024;
inline constexpr int64_t kChunksPerThread = 4;

}  // namespace tessera::detail

#endif  // TESSERA_LIB_PARALLEL_HPP
