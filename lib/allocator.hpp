// The allocating calls' outputs (tessera_free releases them). Internal.
#ifndef TESSERA_LIB_ALLOCATOR_HPP
#define TESSERA_LIB_ALLOCATOR_HPP

#include <cstddef>

namespace tessera::detail {

/// Outputs of at least this many bytes are 2 MiB aligned, advised to use transparent huge pages,
/// and kept by free_output for reuse (allocator.cpp: the block cache and its bounds).
inline constexpr std::size_t kHugeMinBytes = std::size_t{32} << 20;

/// Allocates an output of nbytes > 0 (64-byte aligned; from kHugeMinBytes a block free_output kept,
/// or a fresh mapping, which sets *fresh: its pages will be zeroed by the kernel on first touch).
/// Throws std::bad_alloc.
void* allocate_output(std::size_t nbytes, bool* fresh);

/// The block cache's bound in bytes (TESSERA_ALLOC_CACHE_BYTES, default 256 MiB; allocator.cpp):
/// tessera::block_cache_limit_bytes().
std::size_t block_cache_limit();

/// Releases an output of allocate_output (tessera_free): a large one may be kept for reuse. Any
/// other pointer of malloc's goes to std::free. Null is a no-op.
void free_output(void* p) noexcept;

}  // namespace tessera::detail

#endif  // TESSERA_LIB_ALLOCATOR_HPP
