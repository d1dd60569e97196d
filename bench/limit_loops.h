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

// Name of the Highway target these loops dispatch to (e.g. "AVX2").
const char* limits_target();

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_LIMIT_LOOPS_H
