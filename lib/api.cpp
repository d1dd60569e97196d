// The C++ API (tessera.hpp): a thin layer over the planner and the executor. Plans are made by the
// planner's steps (planner.hpp); what only an execution knows (pointers, buffer size, regions) is
// checked by the executor's entry points (executor.hpp) before anything is written.
#include "allocator.hpp"
#include "executor.hpp"
#include "kernels/kernels.hpp"
#include "operation_info.hpp"
#include "operations.hpp"
#include "planner.hpp"
#include "reduce.hpp"
#include "this_thread.hpp"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessera {
namespace detail {

// The allocating calls: allocate the plan's output, tell the planner whether its pages are fresh
// (the path may change: ordinary stores into just-zeroed pages), run it.
struct ArrayAccess {
  static Array run(PlanData&& data, const void* src) {
    const PlanBase& plan = data.base();
    if (src == nullptr && plan.input_size > 0)
      throw InvalidArgument("tessera: src is null but the input has " + std::to_string(plan.input_size) +
                            " elements");
    Array out;
    if (plan.nbytes > 0) {
      bool fresh = false;
      out.data_.reset(allocate_output(plan.nbytes, &fresh));
      if (fresh) std::visit(Overloaded{[](CopyPlan& c) { plan_for_fresh_output(c); }, [](ReducePlan&) {}}, data.plan);
      execute_checked(data, src, out.data_.get(), plan.nbytes);  // first touch: by the executor's threads
    }
    out.shape_ = plan.out_shape;
    out.itemsize_ = plan.itemsize;
    out.nbytes_ = plan.nbytes;
    return out;
  }
  // One region into a new array: the region checked (a dry run into no buffer throws for a bad
  // one, naming the axis) before anything is allocated.
  static Array run_region(const PlanData& data, const void* src, const Dims& start, const Dims& extent) {
    const PlanBase& plan = data.base();
    const Dims& shape = plan.out_shape;
    bool ok = start.size() == shape.size() && extent.size() == shape.size(), empty = false;
    for (int i = 0; ok && i < extent.size(); ++i) {
      ok = extent[i] >= 0 && start[i] >= 0 && start[i] <= shape[i] - extent[i];
      empty = empty || extent[i] == 0;
    }
    if (!ok) execute_region_checked(data, src, start, extent, nullptr, 0);  // throws, naming the axis
    int64_t count = empty ? 0 : 1;  // a non-empty region lies inside the output: its count fits int64
    for (int i = 0; i < extent.size() && !empty; ++i) count *= extent[i];
    Array out;
    out.nbytes_ = static_cast<std::size_t>(count) * plan.itemsize;
    if (out.nbytes_ > 0) {
      bool fresh = false;
      out.data_.reset(allocate_output(out.nbytes_, &fresh));
      execute_region_checked(data, src, start, extent, out.data_.get(), out.nbytes_);
    } else {
      execute_region_checked(data, src, start, extent, nullptr, 0);  // still checks src
    }
    out.shape_ = extent;
    out.itemsize_ = plan.itemsize;
    return out;
  }
};

namespace {

using O = Operation;

// A plan of either kind behind a Plan.
std::shared_ptr<const PlanData> shared(PlanData&& plan) { return std::make_shared<const PlanData>(std::move(plan)); }

// The allocating reductions write a new array: nothing to accumulate into.
Options no_accumulate(Options o) {
  o.accumulate = false;
  return o;
}

// The Arguments of each argument kind (operations.hpp reads the fields of the operation's kind).
Arguments dims_args(const Dims& dims, const Dims& in_shape = Dims()) {
  Arguments a;
  a.dims = dims;
  a.in_shape = in_shape;
  return a;
}
Arguments repeat_args(const Repeats& repeats, std::optional<int> axis, const Dims& in_shape = Dims()) {
  Arguments a;
  a.repeats = repeats;
  a.axis = axis;
  a.in_shape = in_shape;
  return a;
}

// The one-shot calls: the plan lives on the stack (a one-shot call allocates nothing but the
// prefix sums of per-element repeat counts), then the caller's buffer or a new Array.
//
// A thread's last one-shot copy plan is kept with the arguments it was planned from: a call with the
// same operation, shape, strides, itemsize, arguments and options (a loop of small calls) executes
// it without planning again — the planner's checks passed for exactly these arguments, and what
// depends on the call (pointers, the buffer's size) is checked by execute_checked as always. Not
// kept: per-element repeat counts (their values are not compared). A call made while the slot's
// plan is executing (a nested call on a TBB worker that stole a task) plans on its stack.
struct OneShotSlot {
  bool valid = false;  // plan and key are a successful planning's
  bool busy = false;   // plan is executing
  O op = O::tile;
  std::size_t itemsize = 0;
  Dims shape, strides, dims;
  int64_t count = 0;  // repeat's one count
  std::optional<int> axis;
  Options options;
  std::optional<CopyPlan> plan;

  static bool same_options(const Options& a, const Options& b) noexcept {
    return a.nontemporal == b.nontemporal && a.max_threads == b.max_threads && a.negative_reps == b.negative_reps &&
           a.accumulate == b.accumulate;
  }
  bool matches(O o, const Dims& sh, const Dims& st, std::size_t isz, const Arguments& a, const Options& opt) const {
    return valid && !busy && op == o && itemsize == isz && a.repeats.size() == 1 &&
           a.repeats.bytes() != nullptr &&
           a.repeats.at(0) == count &&
           axis == a.axis && shape == sh && strides == st && dims == a.dims && same_options(options, opt);
  }
};

struct BusyGuard {
  bool& busy;
  explicit BusyGuard(bool& b) noexcept : busy(b) { busy = true; }
  ~BusyGuard() { busy = false; }
  BusyGuard(const BusyGuard&) = delete;
  BusyGuard& operator=(const BusyGuard&) = delete;
};

void copy_into(O op, const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize,
               const Arguments& args, void* dst, std::size_t dst_bytes, const Options& options) {
  OneShotSlot& slot = this_thread<OneShotSlot>();  // looked up once a call
  if (slot.matches(op, shape, strides, itemsize, args, options)) {
    const BusyGuard guard(slot.busy);
    execute_checked(*slot.plan, src, dst, dst_bytes);
    return;
  }
  // Nested, or per-element counts (or none): planned on the stack.
  if (slot.busy || args.repeats.size() != 1 || args.repeats.bytes() == nullptr) {
    execute_checked(make_copy_plan(op, shape, strides, itemsize, args, options), src, dst, dst_bytes);
    return;
  }
  slot.valid = false;
  slot.plan.emplace();
  make_copy_plan(*slot.plan, op, shape, strides, itemsize, args, options);
  slot.op = op;
  slot.itemsize = itemsize;
  slot.shape = shape;
  slot.strides = strides;
  slot.dims = args.dims;
  slot.count = args.repeats.at(0);
  slot.axis = args.axis;
  slot.options = options;
  slot.valid = true;
  const BusyGuard guard(slot.busy);
  execute_checked(*slot.plan, src, dst, dst_bytes);
}
Array copy_new(O op, const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize,
               const Arguments& args, const Options& options) {
  return ArrayAccess::run(make_copy_plan(op, shape, strides, itemsize, args, options), src);
}
void reduce_into(O op, const void* src, const Dims& shape, const Dims& strides, DType dtype, const Arguments& args,
                 void* dst, std::size_t dst_bytes, const Options& options) {
  execute_checked(make_reduce_plan(op, shape, strides, dtype, args, options), src, dst, dst_bytes);
}
Array reduce_new(O op, const void* src, const Dims& shape, const Dims& strides, DType dtype, const Arguments& args,
                 const Options& options) {
  const Options o = no_accumulate(options);
  return ArrayAccess::run(make_reduce_plan(op, shape, strides, dtype, args, o), src);
}

}  // namespace
}  // namespace detail

using detail::dims_args;
using detail::repeat_args;

Dims tile_shape(const Dims& shape, const Dims& reps) { return tile_shape(shape, reps, Options()); }

Dims tile_shape(const Dims& shape, const Dims& reps, const Options& options) {
  return output_shape(Operation::tile, shape, dims_args(reps), options);
}

Dims broadcast_shape(const Dims& shape, const Dims& target) {
  return output_shape(Operation::broadcast_to, shape, dims_args(target));
}

Dims expand_shape(const Dims& shape, const Dims& target) {
  return output_shape(Operation::expand, shape, dims_args(target));
}

Dims repeat_shape(const Dims& shape, const Repeats& repeats, std::optional<int> axis) {
  return repeat_shape(shape, repeats, axis, Options());
}

Dims repeat_shape(const Dims& shape, const Repeats& repeats, std::optional<int> axis, const Options& options) {
  return output_shape(Operation::repeat, shape, repeat_args(repeats, axis), options);
}

Plan Plan::make(Operation op, const Dims& shape, const Dims& strides, std::size_t itemsize, const Arguments& args,
                const Options& options) {
  return Plan(detail::shared(detail::make_plan(op, shape, strides, itemsize, args, options)));
}

Plan::Plan(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, const Options& options)
    : data_(detail::shared(
          detail::make_copy_plan(Operation::tile, shape, strides, itemsize, dims_args(reps), options))) {}

Plan Plan::broadcast_to(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
                        const Options& options) {
  return Plan(detail::shared(
      detail::make_copy_plan(Operation::broadcast_to, shape, strides, itemsize, dims_args(target), options)));
}

Plan Plan::expand(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
                  const Options& options) {
  return Plan(
      detail::shared(detail::make_copy_plan(Operation::expand, shape, strides, itemsize, dims_args(target), options)));
}

Plan Plan::repeat(const Dims& shape, const Dims& strides, std::size_t itemsize, const Repeats& repeats,
                  std::optional<int> axis, const Options& options) {
  return Plan(detail::shared(
      detail::make_copy_plan(Operation::repeat, shape, strides, itemsize, repeat_args(repeats, axis), options)));
}

Plan Plan::tile_backward(const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape, const Dims& reps,
                         const Options& options) {
  return Plan(detail::shared(
      detail::make_reduce_plan(Operation::tile_backward, shape, strides, dtype, dims_args(reps, in_shape), options)));
}

Plan Plan::sum_to_shape(const Dims& shape, const Dims& strides, DType dtype, const Dims& target,
                        const Options& options) {
  return Plan(detail::shared(
      detail::make_reduce_plan(Operation::sum_to_shape, shape, strides, dtype, dims_args(target), options)));
}

Plan Plan::repeat_backward(const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                           const Repeats& repeats, std::optional<int> axis, const Options& options) {
  return Plan(detail::shared(detail::make_reduce_plan(Operation::repeat_backward, shape, strides, dtype,
                                                      repeat_args(repeats, axis, in_shape), options)));
}


bool Plan::is_reduction() const noexcept { return detail::info_of(operation()).reduction; }

int Plan::ndim() const noexcept { return data_->base().out_shape.size(); }
const Dims& Plan::shape() const noexcept { return data_->base().out_shape; }
int64_t Plan::size() const noexcept { return data_->base().out_size; }
std::size_t Plan::nbytes() const noexcept { return data_->base().nbytes; }
std::size_t Plan::itemsize() const noexcept { return data_->base().itemsize; }
int64_t Plan::input_size() const noexcept { return data_->base().input_size; }
const Options& Plan::options() const noexcept { return data_->base().options; }
Operation Plan::operation() const noexcept { return data_->base().op; }
std::string Plan::describe() const {
  return std::visit(detail::Overloaded{[](const detail::CopyPlan& c) { return detail::describe(c); },
                                       [](const detail::ReducePlan& r) { return detail::describe_reduce(r); }},
                    data_->plan);
}
const char* Plan::kernel_name() const noexcept {
  return std::visit(detail::Overloaded{[](const detail::CopyPlan& c) { return detail::kernel_name(c.kernel()); },
                                       [](const detail::ReducePlan&) { return "reduce"; }},
                    data_->plan);
}
const char* Plan::kernel_path() const noexcept {
  return std::visit(detail::Overloaded{[](const detail::CopyPlan& c) { return detail::path_info(c.path).name; },
                                       [](const detail::ReducePlan& r) { return detail::reduce_path_name(r); }},
                    data_->plan);
}
std::vector<std::string> Plan::kernel_paths() {
  std::vector<std::string> paths;
  for (const detail::PathInfo& info : detail::kPathInfo) paths.emplace_back(info.name);
  for (const char* name : detail::reduce_path_names()) paths.emplace_back(name);
  return paths;
}

void Plan::execute(const void* src, void* dst, std::size_t dst_bytes) const {
  detail::execute_checked(*data_, src, dst, dst_bytes);
}

Array Plan::execute(const void* src) const {
  // A copy of the plan: the allocating call may re-choose its path for fresh pages.
  if (is_reduction() && options().accumulate)
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

// One-shot calls (detail::copy_into, copy_new, reduce_into, reduce_new).

void tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, void* dst,
          std::size_t dst_bytes) {
  tile(src, shape, strides, itemsize, reps, dst, dst_bytes, Options());
}

void tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, void* dst,
          std::size_t dst_bytes, const Options& options) {
  detail::copy_into(Operation::tile, src, shape, strides, itemsize, dims_args(reps), dst, dst_bytes, options);
}

Array tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps) {
  return tile(src, shape, strides, itemsize, reps, Options());
}

Array tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps,
           const Options& options) {
  return detail::copy_new(Operation::tile, src, shape, strides, itemsize, dims_args(reps), options);
}

void broadcast_to(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
                  void* dst, std::size_t dst_bytes, const Options& options) {
  detail::copy_into(Operation::broadcast_to, src, shape, strides, itemsize, dims_args(target), dst, dst_bytes,
                    options);
}

Array broadcast_to(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
                   const Options& options) {
  return detail::copy_new(Operation::broadcast_to, src, shape, strides, itemsize, dims_args(target), options);
}

void expand(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
            void* dst, std::size_t dst_bytes, const Options& options) {
  detail::copy_into(Operation::expand, src, shape, strides, itemsize, dims_args(target), dst, dst_bytes, options);
}

Array expand(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& target,
             const Options& options) {
  return detail::copy_new(Operation::expand, src, shape, strides, itemsize, dims_args(target), options);
}

void repeat(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Repeats& repeats,
            std::optional<int> axis, void* dst, std::size_t dst_bytes, const Options& options) {
  detail::copy_into(Operation::repeat, src, shape, strides, itemsize, repeat_args(repeats, axis), dst, dst_bytes,
                    options);
}

Array repeat(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Repeats& repeats,
             std::optional<int> axis, const Options& options) {
  return detail::copy_new(Operation::repeat, src, shape, strides, itemsize, repeat_args(repeats, axis), options);
}

void tile_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                   const Dims& reps, void* grad_in, std::size_t grad_in_bytes, const Options& options) {
  detail::reduce_into(Operation::tile_backward, grad_out, shape, strides, dtype, dims_args(reps, in_shape), grad_in,
                      grad_in_bytes, options);
}

Array tile_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                    const Dims& reps, const Options& options) {
  return detail::reduce_new(Operation::tile_backward, grad_out, shape, strides, dtype, dims_args(reps, in_shape),
                            options);
}

void sum_to_shape(const void* src, const Dims& shape, const Dims& strides, DType dtype, const Dims& target,
                  void* dst, std::size_t dst_bytes, const Options& options) {
  detail::reduce_into(Operation::sum_to_shape, src, shape, strides, dtype, dims_args(target), dst, dst_bytes,
                      options);
}

Array sum_to_shape(const void* src, const Dims& shape, const Dims& strides, DType dtype, const Dims& target,
                   const Options& options) {
  return detail::reduce_new(Operation::sum_to_shape, src, shape, strides, dtype, dims_args(target), options);
}

void repeat_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                     const Repeats& repeats, std::optional<int> axis, void* grad_in, std::size_t grad_in_bytes,
                     const Options& options) {
  detail::reduce_into(Operation::repeat_backward, grad_out, shape, strides, dtype,
                      repeat_args(repeats, axis, in_shape), grad_in, grad_in_bytes, options);
}

Array repeat_backward(const void* grad_out, const Dims& shape, const Dims& strides, DType dtype, const Dims& in_shape,
                      const Repeats& repeats, std::optional<int> axis, const Options& options) {
  return detail::reduce_new(Operation::repeat_backward, grad_out, shape, strides, dtype,
                            repeat_args(repeats, axis, in_shape), options);
}

const char* active_target() noexcept { return detail::dispatch_target_name(); }

const char* version() noexcept { return tessera_version(); }

std::vector<std::string> compiled_targets() { return detail::target_names(false); }

std::vector<std::string> supported_targets() { return detail::target_names(true); }

int64_t streaming_threshold_bytes() { return detail::stream_min_bytes(); }
int64_t reduce_prefetch_bytes() noexcept { return detail::reduce_prefetch_bytes(); }

std::size_t block_cache_limit_bytes() { return detail::block_cache_limit(); }

void set_block_cache_limit(std::size_t bytes) { detail::set_block_cache_limit(bytes); }

double block_cache_max_age_seconds() { return detail::block_cache_max_age(); }

void set_block_cache_max_age(double seconds) {
  if (!(seconds >= 0 && seconds <= detail::kBlockCacheMaxAgeLimit)) {  // NaN fails both
    char value[64];
    std::snprintf(value, sizeof value, "%.17g", seconds);
    throw InvalidArgument(std::string("tessera: block cache max age ") + value +
                          " s is not a number of seconds in [0, 86400]");
  }
  detail::set_block_cache_max_age(seconds);
}

}  // namespace tessera
