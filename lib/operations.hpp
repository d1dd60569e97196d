// The operation table: one row per operation of the family and per gradient (tessera::Operation,
// in its order), holding everything that differs between operations — the row the bindings see
// (OperationInfo: name, argument kind, whether it sums, its gradient, its semantics' source) and
// how it is planned: a copying operation's nest step (step 2 of the planner, planner.hpp), a
// reduction's planner (reduce.hpp). Every entry point — the C++ API, the C API, the DLPack entry
// points, the Python module — reaches the planners through this table (make_plan, shape_only);
// docs/adding-an-operation.md lists what a new row needs. Internal.
#ifndef TESSERA_LIB_OPERATIONS_HPP
#define TESSERA_LIB_OPERATIONS_HPP

#include <tessera/tessera.hpp>

#include <cstddef>

#include "plan.hpp"

namespace tessera::detail {

/// A row of the table.
struct OperationRow {
  OperationInfo info;
  /// A copying operation's nest step (planner.hpp, step 2): its promotion and checks, the output
  /// shape and the nest; null for a reduction.
  void (*nest)(CopyPlan& p, const Arguments& args);
  /// A reduction's planner: the gradient `shape` (elements), byte `strides` (empty: C-contiguous)
  /// and `dtype` -> its plan; null for a copying operation.
  ReducePlan (*reduce)(const Dims& shape, const Dims& strides, DType dtype, const Arguments& args,
                       const Options& options);
};

/// The row of `op`. Throws InvalidArgument naming the value if `op` is not an Operation.
const OperationRow& operation_row(Operation op);

/// A copying operation's plan: steps 1, 2 (the row's nest step) and 3-5 of the planner. Throws
/// InvalidArgument / Overflow naming the bad value (a reduction's `op`: InvalidArgument).
CopyPlan make_copy_plan(Operation op, const Dims& shape, const Dims& strides, std::size_t itemsize,
                        const Arguments& args, const Options& options);
/// make_copy_plan into `p`, a default-constructed plan (no copy of the plan's arrays).
void make_copy_plan(CopyPlan& p, Operation op, const Dims& shape, const Dims& strides, std::size_t itemsize,
                    const Arguments& args, const Options& options);

/// A reduction's plan, by the row's planner. Throws as that planner (a copying `op`:
/// InvalidArgument).
ReducePlan make_reduce_plan(Operation op, const Dims& shape, const Dims& strides, DType dtype, const Arguments& args,
                            const Options& options);

/// Either kind of plan (Plan::make): a reduction needs args.dtype, of `itemsize` bytes. Throws
/// InvalidArgument (`op` not an Operation; a reduction without args.dtype, or with a dtype of
/// another itemsize, naming both) or as the operation's planner.
PlanData make_plan(Operation op, const Dims& shape, const Dims& strides, std::size_t itemsize, const Arguments& args,
                   const Options& options);

/// The output shape only (tessera::output_shape): a copying operation's steps 1-3 without data; a
/// reduction's plan (args.dtype required, as make_plan requires it).
Dims shape_only(Operation op, const Dims& shape, const Arguments& args, const Options& options);

}  // namespace tessera::detail

#endif  // TESSERA_LIB_OPERATIONS_HPP
