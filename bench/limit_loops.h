// The SIMD loops behind the benchmark's limits (limit_loops.cpp, Highway dynamic dispatch): the fastest
// plain ways to write and read bytes, against which the throughput of tile and its family (writes)
// and of the reductions (reads) is compared.
#ifndef TESSERA_BENCH_LIMIT_LOOPS_H
#define TESSERA_BENCH_LIMIT_LOOPS_H

#include <cstddef>
#include <cstdint>

namespace tessera::bench {

// Writes `value` to dst[0, bytes) with non-temporal (streaming) stores, then flushes them.
// dst must be 64-byte aligned.
void stream_fill(void* dst, std::size_t bytes, uint8_t value);

// Writes `value` to dst[0, bytes) with regular (cache-allocating) vector stores.
// dst must be 64-byte aligned.
void store_fill(void* dst, std::size_t bytes, uint8_t value);

// Returns the sum of the bytes src[0, bytes) (any alignment), reading each byte once.
uint64_t sum_bytes(const void* src, std::size_t bytes);

// Returns the float32 sum of src[0, count) (4-byte aligned), reading each element once: eight
// independent vector accumulators, so that the adds never wait on each other and the loop runs at
// the speed of the loads. The `read` limit of the reductions.
float sum_floats(const float* src, std::size_t count);

// sum_floats of src[0, count) with `value` written to dst[0, out_bytes) by non-temporal stores in
// the same pass (then flushed): after each few lines of input, the output up to the same fraction
// of it. The `stream` limit of the reductions: their gradient read and their result written the
// way tessera's plans do both, in one pass, with the fewest instructions. dst must be 64-byte
// aligned. Returns the sum.
float sum_stream(const float* src, std::size_t count, void* dst, std::size_t out_bytes, uint8_t value);

// Name of the Highway target these loops dispatch to (e.g. "AVX2").
const char* limits_target();

// The size in bytes of the last-level cache (the highest `level` of the data or unified caches) of
// cpu0, read from sysfs: /sys/devices/system/cpu/cpu0/cache/index*/{level,type,size} (size as
// "32768K"). sysconf(_SC_LEVEL3_CACHE_SIZE) is not used: glibc reports the whole package's L3 there
// (384 MiB on a 12-CCD EPYC) where one core can use only its CCX's (32 MiB). Throws
// std::runtime_error naming the directory when no cache size can be read: a limit that cannot be
// checked against the cache must not be reported.
std::size_t last_level_cache_bytes();

// How many copies of a `bytes`-byte buffer to rotate among so that none is read from the last-level
// cache of `llc_bytes`: the other copies read since a copy's previous read span at least twice the
// cache (at least 2 copies; 1 from 8x the cache up, where the buffer itself is a reuse distance
// of twice that of two alternating 64 MiB buffers in a 32 MiB L3, which read at DRAM's speed).
// Every input of the `read` limit and of the reductions (tessera's plan, Eigen, numpy, torch)
// rotates among this many copies.
std::size_t rotation_copies(std::size_t bytes, std::size_t llc_bytes);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_LIMIT_LOOPS_H
