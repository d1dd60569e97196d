// The executor's entry points: check what only an execution knows (pointers, buffer sizes, output
// regions), then run a plan — the whole output split into chunks over TBB, or one region serially.
// Nothing here allocates memory proportional to the output.
#ifndef TESSERA_LIB_EXECUTOR_HPP
#define TESSERA_LIB_EXECUTOR_HPP

#include "plan.hpp"

#include <cstddef>

namespace tessera::detail {

/// Plan::execute: checks the pointers and the buffer size (throws InvalidArgument /
/// BufferTooSmall before writing anything), then runs the plan (a reduction's by execute_reduce).
void execute_checked(const PlanData& plan, const void* src, void* dst, std::size_t dst_bytes);

/// Runs the plan: writes all out_size elements to dst. Preconditions (execute_checked):
/// out_size > 0, src and dst valid.
void execute(const PlanData& plan, const unsigned char* src, unsigned char* dst);

/// Plan::execute_region: checks the region, the pointers and the buffer size (throws
/// InvalidArgument / BufferTooSmall before writing anything), then runs it.
void execute_region_checked(const PlanData& plan, const void* src, const Dims& start, const Dims& extent, void* dst,
                            std::size_t dst_bytes);

}  // namespace tessera::detail

#endif  // TESSERA_LIB_EXECUTOR_HPP
