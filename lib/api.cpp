// The C++ API (tessera.hpp): a thin layer over the planner and the executor. Plans are made by the
// planner's steps (planner.hpp); what only an execution knows (pointers, buffer size, regions) is
// checked by the executor's entry points (executor.hpp) before anything is written.
#include "allocator.hpp"
#include "executor.hpp"
#include "kernels/kernels.hpp"
#include "planner.hpp"
#include "reduce.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tessera {
namespace detail {

// The allocating calls: allocate the plan's output, tell the planner whether its pages are fresh
// (the path may change: ordinary stores into just-zeroed pages), run it.
struct ArrayAccess {
  static Array run(PlanData&& plan, const void* src) {
    if (src == nullptr && plan.input_size > 0)
      throw InvalidArgument("tessera: src is null but the input has " + std::to_string(plan.input_size) +
                            " elements");
    Array out;
    if (plan.nbytes > 0) {
      bool fresh = false;
      out.data_.reset(allocate_output(plan.nbytes, &fresh));
      if (fresh && !plan.reduce) plan_for_fresh_output(plan);
      execute_checked(plan, src, out.data_.get(), plan.nbytes);  // first touch: by the executor's threads
    }
    out.shape_ = plan.out_shape;
    out.itemsize_ = plan.itemsize;
    out.nbytes_ = plan.nbytes;
    return out;
  }
  // One region into a new array: the region checked (a dry run into no buffer throws for a bad
  // one, naming the axis) before anything is allocated.
  static Array run_region(const PlanData& plan, const void* src, const Dims& start, const Dims& extent) {
    const Dims& shape = plan.out_shape;
    bool ok = start.size() == shape.size() && extent.size() == shape.size(), empty = false;
    for (int i = 0; ok && i < extent.size(); ++i) {
      ok = extent[i] >= 0 && start[i] >= 0 && start[i] <= shape[i] - extent[i];
      empty = empty || extent[i] == 0;
    }
    if (!ok) execute_region_checked(plan, src, start, extent, nullptr, 0);  // throws, naming the axis
    int64_t count = empty ? 0 : 1;  // a non-empty region lies inside the output: its count fits int64
    for (int i = 0; i < extent.size() && !empty; ++i) count *= extent[i];
    Array out;
    out.nbytes_ = static_cast<std::size_t>(count) * plan.itemsize;
    if (out.nbytes_ > 0) {
      bool fresh = false;
      out.data_.reset(allocate_output(out.nbytes_, &fresh));
      execute_region_checked(plan, src, start, extent, out.data_.get(), out.nbytes_);
    } else {
      execute_region_checked(plan, src, start, extent, nullptr, 0);  // still checks src
    }
    out.shape_ = extent;
    out.itemsize_ = plan.itemsize;
    return out;
  }
};

namespace {

// A reduction's plan as a PlanData: the accessors' fields, and the reduction.
PlanData reduce_plan(ReduceData&& r, const Options& options) {
  PlanData p;
  p.options = options;
  p.itemsize = itemsize_of(r.dtype);
  p.out_shape = r.out_shape;
  p.out_size = count_of(r.out_shape);  // both checked by the reduction's planner
  p.nbytes = static_cast<std::size_t>(p.out_size) * p.itemsize;
  p.input_size = count_of(r.grad_shape);
  p.reduce = std::make_shared<const ReduceData>(std::move(r));
  return p;
}

// The allocating reductions write a new array: nothing to accumulate into.
Options no_accumulate(Options o) {
  o.accumulate = false;
  return o;
}

// A shape-only plan (steps 1-3): the input's shape with 1-byte elements.
PlanData shape_plan(const Dims& shape, const Options& options) {
  PlanData p;
  init_input(p, shape, Dims(), 1, options);
  return p;
}

}  // namespace
}  // namespace detail

Dims tile_shape(const Dims& shape, const Dims& reps) { return tile_shape(shape, reps, Options()); }

Dims tile_shape(const Dims& shape, const Dims& reps, const Options& options) {
  detail::PlanData p = detail::shape_plan(shape, options);
  detail::nest_tile(p, reps);
  return detail::output_shape_only(std::move(p));
}

Dims broadcast_shape(const Dims& shape, const Dims& target) {
  detail::PlanData p = detail::shape_plan(shape, Options());
  detail::nest_broadcast(p, target, false);
  return detail::output_shape_only(std::move(p));
}

Dims expand_shape(const Dims& shape, const Dims& target) {
  detail::PlanData p = detail::shape_plan(shape, Options());
  detail::nest_broadcast(p, target, true);
  return detail::output_shape_only(std::move(p));
}

Dims repeat_shape(const Dims& shape, const Repeats& repeats, std::optional<int> axis) {
  return repeat_shape(shape, repeats, axis, Options());
}

Dims repeat_shape(const Dims& shape, const Repeats& repeats, std::optional<int> axis, const Options& options) {
  detail::PlanData p = detail::shape_plan(shape, options);
  detail::nest_repeat(p, repeats.data(), repeats.size(), axis.has_value(), axis.value_or(0));
  return detail::output_shape_only(std::move(p));
}

Plan::Plan(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, const Options& options)
    : data_(std::make_shared<const detail::PlanData>(detail::make_tile_plan(shape, strides, itemsize, reps, options))) {}

Plan Plan::broadcast_to(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
                        const Options& options) {
  return Plan(std::make_shared<const detail::PlanData>(
      detail::make_broadcast_plan(shape, strides, itemsize, target, false, options)));
}

Plan Plan::expand(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
                  const Options& options) {
  return Plan(std::make_shared<const detail::PlanData>(
      detail::make_broadcast_plan(shape, strides, itemsize, target, true, options)));
}

Plan Plan::repeat(const Dims& shape, const Dims& strides, std::size_t itemsize, const Repeats& repeats,
                  std::optional<int> axis, const Options& options) {
  return Plan(std::make_shared<const detail::PlanData>(detail::make_repeat_plan(
      shape, strides, itemsize, repeats.data(), repeats.size(), axis.has_value(), axis.value_or(0), options)));
}

Plan Plan::tile_backward(const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape, const Dims& reps,
                         const Options& options) {
  return Plan(std::make_shared<const detail::PlanData>(
      detail::reduce_plan(detail::make_tile_backward(shape, strides, dtype, in_shape, reps, options), options)));
}

Plan Plan::sum_to_shape(const Dims& shape, const Dims& strides, DType dtype, const Dims& target,
                        const Options& options) {
  return Plan(std::make_shared<const detail::PlanData>(
      detail::reduce_plan(detail::make_sum_to_shape(shape, strides, dtype, target, options), options)));
}

Plan Plan::repeat_backward(const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                           const Repeats& repeats, std::optional<int> axis, const Options& options) {
  return Plan(std::make_shared<const detail::PlanData>(detail::reduce_plan(
      detail::make_repeat_backward(shape, strides, dtype, in_shape, repeats.data(), repeats.size(),
                                   axis.has_value(), axis.value_or(0), options),
      options)));
}

bool Plan::is_reduction() const noexcept { return data_->reduce != nullptr; }

int Plan::ndim() const noexcept { return data_->out_shape.size(); }
const Dims& Plan::shape() const noexcept { return data_->out_shape; }
int64_t Plan::size() const noexcept { return data_->out_size; }
std::size_t Plan::nbytes() const noexcept { return data_->nbytes; }
std::size_t Plan::itemsize() const noexcept { return data_->itemsize; }
int64_t Plan::input_size() const noexcept { return data_->input_size; }
const Options& Plan::options() const noexcept { return data_->options; }
std::string Plan::describe() const {
  return data_->reduce ? detail::describe_reduce(*data_->reduce) : detail::describe(*data_);
}
const char* Plan::kernel_name() const noexcept {
  return data_->reduce ? "reduce" : detail::kernel_name(data_->kernel());
}
const char* Plan::kernel_path() const noexcept {
  return data_->reduce ? detail::kReducePathNames[static_cast<int>(data_->reduce->problem.path)]
                       : detail::path_info(data_->path).name;
}
std::vector<std::string> Plan::kernel_paths() {
  std::vector<std::string> paths;
  for (const detail::PathInfo& info : detail::kPathInfo) paths.emplace_back(info.name);
  for (int i = 1; i < detail::kReducePathCount; ++i) paths.emplace_back(detail::kReducePathNames[i]);
  return paths;
}

void Plan::execute(const void* src, void* dst, std::size_t dst_bytes) const {
  detail::execute_checked(*data_, src, dst, dst_bytes);
}

Array Plan::execute(const void* src) const {
  // A copy of the plan: the allocating call may re-choose its path for fresh pages.
  if (data_->reduce && data_->reduce->accumulate)
    throw InvalidArgument("tessera: Plan::execute(src) allocates a new array: a plan made with accumulate = true "
                          "needs the output to add into (execute(src, dst, dst_bytes))");
  return detail::ArrayAccess::run(detail::PlanData(*data_), src);
}

void Plan::execute_region(const void* src, const Dims& start, const Dims& extent, void* dst,
                          std::size_t dst_bytes) const {
  detail::execute_region_checked(*data_, src, start, extent, dst, dst_bytes);
}

Array Plan::execute_region(const void* src, const Dims& start, const Dims& extent) const {
  return detail::ArrayAccess::run_region(*data_, src, start, extent);
}

// One-shot calls: the plan lives on the stack (a one-shot call allocates nothing, but the prefix
// sums of per-element repeat counts).

void tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, void* dst,
          std::size_t dst_bytes) {
  tile(src, shape, strides, itemsize, reps, dst, dst_bytes, Options());
}

void tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, void* dst,
          std::size_t dst_bytes, const Options& options) {
  detail::execute_checked(detail::make_tile_plan(shape, strides, itemsize, reps, options), src, dst, dst_bytes);
}

Array tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps) {
  return tile(src, shape, strides, itemsize, reps, Options());
}

Array tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps,
           const Options& options) {
  return detail::ArrayAccess::run(detail::make_tile_plan(shape, strides, itemsize, reps, options), src);
}

void broadcast_to(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
                  void* dst, std::size_t dst_bytes, const Options& options) {
  detail::execute_checked(detail::make_broadcast_plan(shape, strides, itemsize, target, false, options), src, dst,
                          dst_bytes);
}

Array broadcast_to(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
                   const Options& options) {
  return detail::ArrayAccess::run(detail::make_broadcast_plan(shape, strides, itemsize, target, false, options), src);
}

void expand(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
            void* dst, std::size_t dst_bytes, const Options& options) {
  detail::execute_checked(detail::make_broadcast_plan(shape, strides, itemsize, target, true, options), src, dst,
                          dst_bytes);
}

Array expand(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
             const Options& options) {
  return detail::ArrayAccess::run(detail::make_broadcast_plan(shape, strides, itemsize, target, true, options), src);
}

void repeat(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Repeats& repeats,
            std::optional<int> axis, void* dst, std::size_t dst_bytes, const Options& options) {
  detail::execute_checked(detail::make_repeat_plan(shape, strides, itemsize, repeats.data(), repeats.size(),
                                                   axis.has_value(), axis.value_or(0), options),
                          src, dst, dst_bytes);
}

Array repeat(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Repeats& repeats,
             std::optional<int> axis, const Options& options) {
  return detail::ArrayAccess::run(detail::make_repeat_plan(shape, strides, itemsize, repeats.data(), repeats.size(),
                                                           axis.has_value(), axis.value_or(0), options),
                                  src);
}

void tile_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                   const Dims& reps, void* grad_in, std::size_t grad_in_bytes, const Options& options) {
  detail::execute_checked(
      detail::reduce_plan(detail::make_tile_backward(shape, strides, dtype, in_shape, reps, options), options),
      grad_out, grad_in, grad_in_bytes);
}

Array tile_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                    const Dims& reps, const Options& options) {
  const Options o = detail::no_accumulate(options);
  return detail::ArrayAccess::run(
      detail::reduce_plan(detail::make_tile_backward(shape, strides, dtype, in_shape, reps, o), o), grad_out);
}

void sum_to_shape(const void* src, const Dims& shape, const Dims& strides, DType dtype, const Dims& target,
                  void* dst, std::size_t dst_bytes, const Options& options) {
  detail::execute_checked(
      detail::reduce_plan(detail::make_sum_to_shape(shape, strides, dtype, target, options), options), src, dst,
      dst_bytes);
}

Array sum_to_shape(const void* src, const Dims& shape, const Dims& strides, DType dtype, const Dims& target,
                   const Options& options) {
  const Options o = detail::no_accumulate(options);
  return detail::ArrayAccess::run(detail::reduce_plan(detail::make_sum_to_shape(shape, strides, dtype, target, o), o),
                                  src);
}

void repeat_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                     const Repeats& repeats, std::optional<int> axis, void* grad_in, std::size_t grad_in_bytes,
                     const Options& options) {
  detail::execute_checked(
      detail::reduce_plan(detail::make_repeat_backward(shape, strides, dtype, in_shape, repeats.data(),
                                                       repeats.size(), axis.has_value(), axis.value_or(0), options),
                          options),
      grad_out, grad_in, grad_in_bytes);
}

Array repeat_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                      const Repeats& repeats, std::optional<int> axis, const Options& options) {
  const Options o = detail::no_accumulate(options);
  return detail::ArrayAccess::run(
      detail::reduce_plan(detail::make_repeat_backward(shape, strides, dtype, in_shape, repeats.data(), repeats.size(),
                                                       axis.has_value(), axis.value_or(0), o),
                          o),
      grad_out);
}

std::size_t itemsize_of(DType dtype) {
  static constexpr std::size_t sizes[] = {4, 8, 2, 2, 8, 16, 1, 2, 4, 8, 1, 2, 4, 8};
  const int v = static_cast<int>(dtype);
  if (v < 0 || v > static_cast<int>(DType::uint64))
    throw InvalidArgument("tessera: dtype " + std::to_string(v) +
                          " is not a tessera_dtype (float32, float64, float16, bfloat16, complex64, complex128, "
                          "int8-int64, uint8-uint64: 0-13)");
  return sizes[v];
}

const char* dtype_name(DType dtype) {
  static constexpr const char* names[] = {"float32", "float64", "float16", "bfloat16", "complex64",
                                          "complex128", "int8",  "int16",   "int32",    "int64",
                                          "uint8",   "uint16",  "uint32",  "uint64"};
  itemsize_of(dtype);  // throws for a value that is not a DType
  return names[static_cast<int>(dtype)];
}

const char* active_target() noexcept { return detail::dispatch_target_name(); }

const char* version() noexcept { return tessera_version(); }

}  // namespace tessera
