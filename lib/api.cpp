// The C++ API (tessera.hpp): a thin layer over the planner and the executor that checks the
// arguments only known at execution (pointers, buffer size, output regions) before anything is
// written.
#include "plan.hpp"

#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tessera {
namespace detail {

void* allocate_output(std::size_t nbytes) {
  // Large outputs: 2 MiB aligned and advised to use transparent huge pages, so that the first
  // touch costs one fault per 2 MiB instead of one per 4 KiB (page faults bound a fresh output).
  // Only from 32 MiB, glibc's largest mmap threshold: smaller blocks are recycled by malloc
  // (already touched, no fault at all), which huge-page mappings of their own would prevent.
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const std::size_t align = nbytes >= kHugeMinBytes ? kHuge : 64;
  const std::size_t padded = (nbytes + align - 1) / align * align;  // aligned_alloc wants a multiple
  if (padded < nbytes) throw std::bad_alloc();
  void* p = std::aligned_alloc(align, padded);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (align == kHuge) madvise(p, padded, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  return p;
}

}  // namespace detail

Dims tile_shape(const Dims& shape, const Dims& reps) {
  int64_t size = 0;
  return detail::checked_output_shape(shape, reps, &size);
}

Dims tile_shape(const Dims& shape, const Dims& reps, const Options& options) {
  detail::validate_options(options);
  int64_t size = 0;
  return detail::checked_output_shape(shape, detail::effective_reps(reps, options), &size);
}

Plan::Plan(const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, const Options& options)
    : data_(std::make_shared<const detail::PlanData>(detail::make_plan(shape, strides, itemsize, reps, options))) {}

int Plan::ndim() const noexcept { return data_->out_shape.size(); }
const Dims& Plan::shape() const noexcept { return data_->out_shape; }
int64_t Plan::size() const noexcept { return data_->out_size; }
std::size_t Plan::nbytes() const noexcept { return data_->nbytes; }
std::size_t Plan::itemsize() const noexcept { return data_->itemsize; }
int64_t Plan::input_size() const noexcept { return data_->input_size; }
const Options& Plan::options() const noexcept { return data_->options; }
std::string Plan::describe() const { return detail::describe(*data_); }
const char* Plan::kernel_name() const noexcept { return detail::kernel_name(data_->kernel); }
const char* Plan::kernel_path() const noexcept { return data_->path; }
std::vector<std::string> Plan::kernel_paths() {
  std::vector<std::string> paths;
  for (const auto& variants : detail::kKernelPaths)
    for (const char* path : variants)
      if (path != nullptr) paths.emplace_back(path);
  paths.emplace_back(detail::kNonePath);
  return paths;
}

namespace detail {

void execute_checked(const PlanData& p, const void* src, void* dst, std::size_t dst_bytes) {
  if (src == nullptr && p.input_size > 0)
    throw InvalidArgument("tessera: src is null but the input has " + std::to_string(p.input_size) + " elements");
  if (dst == nullptr && p.nbytes > 0)
    throw InvalidArgument("tessera: dst is null but the output has " + std::to_string(p.nbytes) + " bytes");
  if (dst_bytes < p.nbytes)
    throw BufferTooSmall("tessera: dst_bytes = " + std::to_string(dst_bytes) + " but the output needs " +
                         std::to_string(p.nbytes) + " bytes");
  if (p.out_size == 0) return;
  execute(p, static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst));
}

void execute_region_checked(const PlanData& p, const void* src, const Dims& start, const Dims& extent, void* dst,
                            std::size_t dst_bytes) {
  const int n = p.out_shape.size();
  if (start.size() != n || extent.size() != n)
    throw InvalidArgument("tessera: region start has " + std::to_string(start.size()) + " values and extent " +
                          std::to_string(extent.size()) + " but the output has " + std::to_string(n) +
                          " axes (give one per output axis)");
  bool whole = true, empty = false;
  for (int i = 0; i < n; ++i) {
    const std::string axis = "region axis " + std::to_string(i) + ": ";
    if (start[i] < 0) throw InvalidArgument("tessera: " + axis + "start " + std::to_string(start[i]) + " is negative");
    if (extent[i] < 0)
      throw InvalidArgument("tessera: " + axis + "extent " + std::to_string(extent[i]) + " is negative");
    if (start[i] > p.out_shape[i] - extent[i])  // no overflow: both sides are in [-INT64_MAX, INT64_MAX]
      throw InvalidArgument("tessera: " + axis + "start " + std::to_string(start[i]) + " + extent " +
                            std::to_string(extent[i]) + " exceeds the output's extent " +
                            std::to_string(p.out_shape[i]));
    whole = whole && extent[i] == p.out_shape[i];
    empty = empty || extent[i] == 0;
  }
  int64_t count = empty ? 0 : 1;
  for (int i = 0; i < n && !empty; ++i) count *= extent[i];  // at most the output's count, which fits int64
  const std::size_t bytes = static_cast<std::size_t>(count) * p.itemsize;  // at most nbytes
  if (src == nullptr && p.input_size > 0)
    throw InvalidArgument("tessera: src is null but the input has " + std::to_string(p.input_size) + " elements");
  if (dst == nullptr && bytes > 0)
    throw InvalidArgument("tessera: dst is null but the region has " + std::to_string(bytes) + " bytes");
  if (dst_bytes < bytes)
    throw BufferTooSmall("tessera: dst_bytes = " + std::to_string(dst_bytes) + " but the region needs " +
                         std::to_string(bytes) + " bytes");
  if (count == 0) return;
  if (whole) {  // the whole output: the (parallel) executor
    execute(p, static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst));
    return;
  }
  execute_region(p, static_cast<const unsigned char*>(src), start, extent, static_cast<unsigned char*>(dst));
}

}  // namespace detail

void Plan::execute(const void* src, void* dst, std::size_t dst_bytes) const {
  detail::execute_checked(*data_, src, dst, dst_bytes);
}

void Plan::execute_region(const void* src, const Dims& start, const Dims& extent, void* dst,
                          std::size_t dst_bytes) const {
  detail::execute_region_checked(*data_, src, start, extent, dst, dst_bytes);
}

void tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, void* dst,
          std::size_t dst_bytes) {
  // The plan lives on the stack: a one-shot call allocates nothing.
  detail::execute_checked(detail::make_plan(shape, strides, itemsize, reps, Options()), src, dst, dst_bytes);
}

void tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps, void* dst,
          std::size_t dst_bytes, const Options& options) {
  detail::execute_checked(detail::make_plan(shape, strides, itemsize, reps, options), src, dst, dst_bytes);
}

Array tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps) {
  return tile(src, shape, strides, itemsize, reps, Options());
}

Array tile(const void* src, const Dims& shape, const Dims& strides, std::size_t itemsize, const Dims& reps,
           const Options& options) {
  Plan plan(shape, strides, itemsize, reps, options);
  // An output of kHugeMinBytes or more is a fresh mapping, written right after the kernel zeroed
  // each page, while the page is still in the cache: ordinary stores hit it there, streaming
  // stores would send it to memory a second time. So `automatic` means ordinary stores there.
  if (options.nontemporal == NonTemporal::automatic && plan.nbytes() >= detail::kHugeMinBytes) {
    Options fresh = options;
    fresh.nontemporal = NonTemporal::never;
    plan = Plan(shape, strides, itemsize, reps, fresh);
  }
  if (src == nullptr && plan.input_size() > 0)
    throw InvalidArgument("tessera: src is null but the input has " + std::to_string(plan.input_size()) +
                          " elements");
  Array out;
  if (plan.nbytes() > 0) {
    out.data_.reset(detail::allocate_output(plan.nbytes()));
    plan.execute(src, out.data_.get(), plan.nbytes());  // first touch: by the executor's threads
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
