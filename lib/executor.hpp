// The executors' entry points: check what only an execution knows (pointers, buffer sizes, output
// regions), then run a plan — a copy plan by the copy executor (executor.cpp: the whole output
// split into chunks over TBB, or one region serially), a reduce plan by the reduce executor
// (reduce_executor.cpp). Nothing here allocates memory proportional to the output.
#ifndef TESSERA_LIB_EXECUTOR_HPP
#define TESSERA_LIB_EXECUTOR_HPP

#include "plan.hpp"

#include <cstddef>

namespace tessera::detail {

/// Plan::execute: checks the pointers and the buffer size (throws InvalidArgument /
/// BufferTooSmall before writing anything), then runs the plan by its executor.
void execute_checked(const PlanData& plan, const void* src, void* dst, std::size_t dst_bytes);
void execute_checked(const CopyPlan& plan, const void* src, void* dst, std::size_t dst_bytes);
void execute_checked(const ReducePlan& plan, const void* src, void* dst, std::size_t dst_bytes);

/// The checks of execute_checked, the same for both kinds of plan: src may be null only for an
/// empty input, dst only for an empty output, and dst_bytes must hold the output (throws
/// InvalidArgument / BufferTooSmall naming the value).
void check_buffers(const PlanBase& plan, const void* src, const void* dst, std::size_t dst_bytes);

/// Runs the copy plan: writes all out_size elements to dst. Preconditions (execute_checked):
/// out_size > 0, src and dst valid.
void execute(const CopyPlan& plan, const unsigned char* src, unsigned char* dst);

/// Runs the reduce plan (reduce_executor.cpp): in = the gradient (as planned), out = the result
/// (out_size elements, C-contiguous). Preconditions (execute_checked): out_size > 0, pointers valid.
void execute(const ReducePlan& plan, const unsigned char* in, unsigned char* out);

/// Plan::execute_region: checks the region, the pointers and the buffer size (throws
/// InvalidArgument / BufferTooSmall before writing anything), then runs it. A reduce plan has no
/// regions (InvalidArgument).
void execute_region_checked(const PlanData& plan, const void* src, const Dims& start, const Dims& extent, void* dst,
                            std::size_t dst_bytes);
void execute_region_checked(const CopyPlan& plan, const void* src, const Dims& start, const Dims& extent, void* dst,
                            std::size_t dst_bytes);

}  // namespace tessera::detail

#endif  // TESSERA_LIB_EXECUTOR_HPP
