// The Eigen Tensor broadcast and sum peers (eigen_peer.h). Compiled with TESSERA_BENCH_EIGEN when Eigen was
// found (bench/meson.build), and then with -mavx where the build machine has AVX (TensorFlow's
// x86-64 release builds have required AVX since 1.6; bench/meson.build checks, and tile_bench
// checks the running CPU again before it calls in here); otherwise a stub.
#include "eigen_peer.h"

#ifdef TESSERA_BENCH_EIGEN
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include <array>
#include <map>
#include <mutex>
#include <vector>
#endif

namespace tessera::bench {

#ifdef TESSERA_BENCH_EIGEN
namespace {

// One pool and device per thread count, for the whole process (TensorFlow's intra-op pool).
Eigen::ThreadPoolDevice& device(int threads) {
  struct Pool {
    explicit Pool(int n) : pool(n), device(&pool, n) {}
    Eigen::ThreadPool pool;
    Eigen::ThreadPoolDevice device;
  };
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<Pool>> pools;
  std::lock_guard<std::mutex> lock(mutex);
  auto& pool = pools[threads];
  if (!pool) pool = std::make_unique<Pool>(threads);
  return pool->device;
}

std::string join(const int64_t* v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return "[" + s + "]";
}

template <int R>
using Sizes = Eigen::DSizes<Eigen::DenseIndex, R>;

// TensorFlow's BroadcastTo: out.device(d) = in.reshape(x_reshape).broadcast(x_bcast) on the
// reduced shapes (the reshape is the input map's own shape here), or a copy.
template <class T, int R>
class Reduced final : public EigenPeer {
 public:
  Reduced(const std::vector<int64_t>& in, const std::vector<int64_t>& bcast) {
    for (int i = 0; i < R; ++i) {
      in_[i] = in[i];
      bcast_[i] = bcast[i];
      out_[i] = in[i] * bcast[i];
      copy_ = copy_ && bcast[i] == 1;
    }
  }
  void run(const void* src, void* dst, int threads) const override {
    Eigen::TensorMap<Eigen::Tensor<const T, R, Eigen::RowMajor>, Eigen::Aligned> in(static_cast<const T*>(src), in_);
    Eigen::TensorMap<Eigen::Tensor<T, R, Eigen::RowMajor>, Eigen::Aligned> out(static_cast<T*>(dst), out_);
    if (copy_)
      out.device(device(threads)) = in;
    else
      out.device(device(threads)) = in.broadcast(bcast_);
  }
  std::string describe() const override {
    std::array<int64_t, R> in, bcast;
    for (int i = 0; i < R; ++i) in[i] = in_[i], bcast[i] = bcast_[i];
    if (copy_) return "copy " + join(in.data(), R);
    return "reshape " + join(in.data(), R) + " broadcast " + join(bcast.data(), R);
  }

 private:
  Sizes<R> in_, bcast_, out_;
  bool copy_ = true;
};

// A transposed input: out = base.shuffle(reversed axes).broadcast(bcast), base the C-contiguous
// array the input views.
template <class T, int R>
class Shuffled final : public EigenPeer {
 public:
  Shuffled(const std::vector<int64_t>& base, const std::vector<int64_t>& bcast) {
    for (int i = 0; i < R; ++i) {
      base_[i] = base[i];
      shuffle_[i] = R - 1 - i;
      bcast_[i] = bcast[i];
      out_[i] = base[R - 1 - i] * bcast[i];
    }
  }
  void run(const void* src, void* dst, int threads) const override {
    Eigen::TensorMap<Eigen::Tensor<const T, R, Eigen::RowMajor>, Eigen::Aligned> base(static_cast<const T*>(src),
                                                                                       base_);
    Eigen::TensorMap<Eigen::Tensor<T, R, Eigen::RowMajor>, Eigen::Aligned> out(static_cast<T*>(dst), out_);
    out.device(device(threads)) = base.shuffle(shuffle_).broadcast(bcast_);
  }
  std::string describe() const override {
    std::array<int64_t, R> base, bcast;
    for (int i = 0; i < R; ++i) base[i] = base_[i], bcast[i] = bcast_[i];
    return "shuffle(reversed) of " + join(base.data(), R) + " broadcast " + join(bcast.data(), R);
  }

 private:
  Sizes<R> base_, bcast_, out_;
  Eigen::array<int, R> shuffle_;
};

// TensorFlow's reduce_sum on the simplified shape: out.device(d) = in.sum(summed axes), the summed
// and kept axes alternating (the simplification merged neighbours of one kind), the first summed if
// kFirstSummed. The kept axes, in order, are the C-contiguous result.
template <class T, int R, bool kFirstSummed>
class Sum final : public EigenPeer {
 public:
  static constexpr int kSummed = kFirstSummed ? (R + 1) / 2 : R / 2;
  static constexpr int kKept = R - kSummed;

  explicit Sum(const std::vector<int64_t>& dims) {
    int s = 0, k = 0;
    for (int i = 0; i < R; ++i) {
      in_[i] = dims[i];
      if ((i % 2 == 0) == kFirstSummed)
        axes_[s++] = i;
      else
        out_[k++] = dims[i];
    }
  }
  void run(const void* src, void* dst, int threads) const override {
    Eigen::TensorMap<Eigen::Tensor<const T, R, Eigen::RowMajor>, Eigen::Aligned> in(static_cast<const T*>(src), in_);
    Eigen::TensorMap<Eigen::Tensor<T, kKept, Eigen::RowMajor>, Eigen::Aligned> out(static_cast<T*>(dst), out_);
    out.device(device(threads)) = in.sum(axes_);
  }
  std::string describe() const override {
    std::array<int64_t, R> in;
    std::array<int64_t, kSummed> axes;
    for (int i = 0; i < R; ++i) in[i] = in_[i];
    for (int i = 0; i < kSummed; ++i) axes[i] = axes_[i];
    return "reshape " + join(in.data(), R) + " sum " + join(axes.data(), kSummed);
  }

 private:
  Sizes<R> in_;
  Sizes<kKept> out_;
  Eigen::array<Eigen::DenseIndex, kSummed> axes_;
};

template <int R>
std::unique_ptr<EigenPeer> make_sum(const std::vector<int64_t>& dims, bool first_summed) {
  if (first_summed) return std::make_unique<Sum<float, R, true>>(dims);
  if constexpr (R > 1) return std::make_unique<Sum<float, R, false>>(dims);
  return nullptr;  // one kept axis: nothing to sum
}

template <class T, template <class, int> class Kind>
std::unique_ptr<EigenPeer> make(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  switch (a.size()) {
    case 1: return std::make_unique<Kind<T, 1>>(a, b);
    case 2: return std::make_unique<Kind<T, 2>>(a, b);
    case 3: return std::make_unique<Kind<T, 3>>(a, b);
    case 4: return std::make_unique<Kind<T, 4>>(a, b);
    case 5: return std::make_unique<Kind<T, 5>>(a, b);
    default: return nullptr;
  }
}

template <template <class, int> class Kind>
std::unique_ptr<EigenPeer> make_typed(std::size_t itemsize, const std::vector<int64_t>& a,
                                           const std::vector<int64_t>& b) {
  switch (itemsize) {
    case 1: return make<uint8_t, Kind>(a, b);
    case 2: return make<uint16_t, Kind>(a, b);
    case 4: return make<float, Kind>(a, b);
    case 8: return make<double, Kind>(a, b);
    default: return nullptr;
  }
}

}  // namespace

std::unique_ptr<EigenPeer> make_eigen_broadcast(const Case& c) {
  if (c.op != Op::broadcast_to && c.op != Op::expand) return nullptr;
  const std::size_t nd = c.out_shape.size(), n = c.shape.size();
  std::vector<int64_t> in(nd, 1);  // the input's extents aligned with the output's axes
  for (std::size_t i = 0; i < n; ++i) in[nd - n + i] = c.shape[i];
  if (c.transposed) {
    if (n != nd) return nullptr;
    std::vector<int64_t> bcast(nd);
    for (std::size_t i = 0; i < nd; ++i) bcast[i] = c.out_shape[i] / in[i];
    return make_typed<Shuffled>(c.itemsize, c.base, bcast);
  }
  // tensorflow::BCast with fewer_dims_optimization: drop output axes of extent 1, merge
  // neighbouring axes in the same state (copied: extents equal; broadcast: input extent 1).
  std::vector<int64_t> x_reshape, x_bcast;
  int previous = -1;
  for (std::size_t i = 0; i < nd; ++i) {
    if (c.out_shape[i] == 1) continue;
    const int state = in[i] == c.out_shape[i] ? 0 : 1;
    if (state != previous) {
      x_reshape.push_back(1);
      x_bcast.push_back(1);
      previous = state;
    }
    if (state == 0)
      x_reshape.back() *= in[i];
    else
      x_bcast.back() *= c.out_shape[i];
  }
  if (x_reshape.empty()) x_reshape = x_bcast = {1};
  return make_typed<Reduced>(c.itemsize, x_reshape, x_bcast);
}

std::unique_ptr<EigenPeer> make_eigen_sum(const Case& c) {
  if (!is_reduction(c.op) || c.transposed || c.dtype != "float32") return nullptr;
  // The gradient's axes as (extent, summed) pairs: interleaved replica and element axes.
  std::vector<std::pair<int64_t, bool>> axes;
  const std::size_t nd = c.shape.size(), n = c.out_shape.size();
  if (c.op == Op::repeat_backward) {
    if (c.repeats.size() != 1 || c.repeats[0] == 0) return nullptr;
    const int64_t r = c.repeats[0];
    if (!c.axis) {
      axes = {{c.shape[0] / r, false}, {r, true}};
    } else {
      for (std::size_t i = 0; i < nd; ++i) {
        axes.push_back({c.out_shape[i], false});
        if (static_cast<int>(i) == *c.axis) axes.push_back({r, true});
      }
    }
  } else {
    for (std::size_t j = 0; j < nd; ++j) {
      const int64_t s = j < nd - n ? 1 : c.out_shape[j - (nd - n)];
      if (s == 0) return nullptr;
      axes.push_back({c.shape[j] / s, true});
      axes.push_back({s, false});
    }
  }
  // tensorflow::ReductionHelper::Simplify: extent-1 axes dropped, neighbours of one kind merged.
  std::vector<int64_t> dims;
  bool first_summed = false, previous = false;
  for (const auto& [extent, summed] : axes) {
    if (extent == 1) continue;
    if (dims.empty() || summed != previous) {
      if (dims.empty()) first_summed = summed;
      dims.push_back(extent);
      previous = summed;
    } else {
      dims.back() *= extent;
    }
  }
  switch (dims.size()) {
    case 1: return make_sum<1>(dims, first_summed);
    case 2: return make_sum<2>(dims, first_summed);
    case 3: return make_sum<3>(dims, first_summed);
    case 4: return make_sum<4>(dims, first_summed);
    case 5: return make_sum<5>(dims, first_summed);
    case 6: return make_sum<6>(dims, first_summed);
    default: return nullptr;
  }
}

std::string eigen_info() {
  return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION) +
#if defined(__AVX512F__)
         ", AVX-512"
#elif defined(__AVX2__)
         ", AVX2"
#elif defined(__AVX__)
         ", AVX"
#else
         ", SSE2"
#endif
         " packets, ThreadPoolDevice";
}

#else  // !TESSERA_BENCH_EIGEN

std::unique_ptr<EigenPeer> make_eigen_broadcast(const Case&) { return nullptr; }
std::unique_ptr<EigenPeer> make_eigen_sum(const Case&) { return nullptr; }
std::string eigen_info() { return {}; }

#endif

std::unique_ptr<EigenPeer> make_eigen_peer(const Case& c) {
  return is_reduction(c.op) ? make_eigen_sum(c) : make_eigen_broadcast(c);
}

}  // namespace tessera::bench
