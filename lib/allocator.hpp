// The allocating calls' outputs (tessera_free releases them). Internal.
#ifndef TESSERA_LIB_ALLOCATOR_HPP
#define TESSERA_LIB_ALLOCATOR_HPP

#include <cstddef>

namespace tessera::detail {

/// Outputs of at least this many bytes are 2 MiB aligned, advised to use transparent huge pages,
/// and kept by free_output for reuse (allocator.cpp: the block cache and its bounds).
inline constexpr std::size_t kHugeMinBytes = std::size_t{32} << 20;
/// Smaller outputs of at least this many bytes come from malloc with the whole 2 MiB pages inside
/// them advised to use transparent huge pages (numpy's threshold for the same advice).
inline constexpr std::size_t kHugeAdviseMinBytes = std::size_t{4} << 20;

/// The block cache's default bound in bytes (256 MiB) and a kept block's default most age (10 s).
inline constexpr std::size_t kBlockCacheDefaultBytes = std::size_t{256} << 20;
inline constexpr double kBlockCacheDefaultMaxAge = 10.0;
/// The largest max age set_block_cache_max_age accepts (seconds: one day).
inline constexpr double kBlockCacheMaxAgeLimit = 86400.0;

/// Planners' buffers (the prefix sums of per-element counts) come from the block cache from this
/// many bytes: a one-shot call's plan dies with the call, and its next one then reuses the pages
/// instead of faulting in fresh ones (malloc maps such blocks afresh once freed ones were returned).
inline constexpr std::size_t kPlanCacheMinBytes = kHugeAdviseMinBytes;

/// Allocates an output of nbytes > 0 (64-byte aligned; from `cached_from` bytes, kHugeMinBytes
/// unless given, 2 MiB aligned: a block free_output kept, or a new block, a mapping of its own
/// whose pages the kernel zeroes on first touch, for which *fresh is set). Throws std::bad_alloc.
void* allocate_output(std::size_t nbytes, bool* fresh, std::size_t cached_from = kHugeMinBytes);

/// The block cache's bound in bytes: set_block_cache_limit's last value, else
/// TESSERA_ALLOC_CACHE_BYTES (read once; a value that is not a decimal count of bytes is reported on
/// stderr and the default taken), else kBlockCacheDefaultBytes. tessera::block_cache_limit_bytes().
std::size_t block_cache_limit();

/// Sets the bound; the kept blocks past it (oldest first) are released before it returns.
/// Throws std::bad_alloc.
void set_block_cache_limit(std::size_t bytes);

/// A kept block's most age in seconds (kBlockCacheDefaultMaxAge unless set).
double block_cache_max_age();

/// Sets the most age (0 <= seconds <= kBlockCacheMaxAgeLimit, checked by the caller): the kept
/// blocks older than it are released before it returns, the others when they reach it.
/// Throws std::bad_alloc.
void set_block_cache_max_age(double seconds);

/// Releases an output of allocate_output (tessera_free): a large one may be kept for reuse. Any
/// other pointer of malloc's goes to std::free. Null is a no-op.
void free_output(void* p) noexcept;

}  // namespace tessera::detail

#endif  // TESSERA_LIB_ALLOCATOR_HPP
