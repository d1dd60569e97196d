// The C++ API (tessera.hpp): a thin layer over the planner and the executor that checks the
// arguments only known at execution (pointers, buffer size) before anything is written.
#include "plan.hpp"

#include <cstdlib>
#include <new>

namespace tessera {

Dims tile_shape(const Dims& shape, const Dims& reps) {
  int64_t size = 0;
  return detail::checked_output_shape(shape, reps, &size);
}

Plan::Plan(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, const Options& options)
    : data_(std::make_shared<const detail::PlanData>(detail::make_plan(shape, strides, itemsize, reps, options))) {}

int Plan::ndim() const noexcept { return data_->out_shape.size(); }
const Dims& Plan::shape() const noexcept { return data_->out_shape; }
int64_t Plan::size() const noexcept { return data_->out_size; }
std::size_t Plan::nbytes() const noexcept { return data_->nbytes; }
std::size_t Plan::itemsize() const noexcept { return data_->itemsize; }
int64_t Plan::input_size() const noexcept { return data_->input_size; }
std::string Plan::describe() const { return data_->description; }
const char* Plan::kernel_name() const noexcept { return detail::kernel_name(data_->kernel); }
const char* Plan::kernel_path() const noexcept { return data_->path; }
std::vector<std::string> Plan::kernel_paths() { return {std::begin(detail::kKernelPaths), std::end(detail::kKernelPaths)}; }

void Plan::execute(const void* src, void* dst, std::size_t dst_bytes) const {
  const detail::PlanData& p = *data_;
  if (src == nullptr && p.input_size > 0)
    throw InvalidArgument("tessera: src is null but the input has " + std::to_string(p.input_size) + " elements");
  if (dst == nullptr && p.nbytes > 0)
    throw InvalidArgument("tessera: dst is null but the output has " + std::to_string(p.nbytes) + " bytes");
  if (dst_bytes < p.nbytes)
    throw BufferTooSmall("tessera: dst_bytes = " + std::to_string(dst_bytes) + " but the output needs " +
                         std::to_string(p.nbytes) + " bytes");
  if (p.out_size == 0) return;
  detail::execute(p, static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst));
}

void tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, void* dst,
          std::size_t dst_bytes) {
  Plan(shape, strides, itemsize, reps).execute(src, dst, dst_bytes);
}

Array tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps) {
  const Plan plan(shape, strides, itemsize, reps);
  if (src == nullptr && plan.input_size() > 0)
    throw InvalidArgument("tessera: src is null but the input has " + std::to_string(plan.input_size()) +
                          " elements");
  Array out;
  if (plan.nbytes() > 0) {
    // 64-byte aligned; aligned_alloc wants a size that is a multiple of the alignment.
    const std::size_t padded = (plan.nbytes() + 63) / 64 * 64;
    if (padded < plan.nbytes()) throw std::bad_alloc();
    out.data_.reset(std::aligned_alloc(64, padded));
    if (!out.data_) throw std::bad_alloc();
    plan.execute(src, out.data_.get(), plan.nbytes());
  }
  out.shape_ = plan.shape();
  out.itemsize_ = plan.itemsize();
  out.nbytes_ = plan.nbytes();
  return out;
}

const char* active_target() noexcept { return detail::dispatch_target_name(); }

const char* version() noexcept { return tessera_version(); }

}  // namespace tessera

extern "C" void tessera_free(void* data) { std::free(data); }
