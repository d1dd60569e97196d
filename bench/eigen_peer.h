// The C++ peer of the broadcast and reduction cases: Eigen's Tensor broadcast and sum
// (unsupported/Eigen/CXX11/Tensor), the expressions TensorFlow's CPU BroadcastTo and Sum kernels
// evaluate, on an Eigen::ThreadPoolDevice as TensorFlow's intra-op pool. Built when Debian's
// libeigen3-dev is installed (eigen_peer.cpp).
#ifndef TESSERA_BENCH_EIGEN_PEER_H
#define TESSERA_BENCH_EIGEN_PEER_H

#include <cstddef>
#include <memory>
#include <string>

#include "cases.h"

namespace tessera::bench {

// An Eigen expression of one case (a broadcast or a sum), ready to evaluate into any output buffer.
class EigenPeer {
 public:
  virtual ~EigenPeer() = default;
  // Writes the case's output (C-contiguous, out_bytes) to dst, reading src (the case's input
  // buffer), on `threads` threads (an Eigen::ThreadPoolDevice of that many threads, one pool per
  // count for the whole process).
  virtual void run(const void* src, void* dst, int threads) const = 0;
  // The expression, e.g. "reshape [1, 4096] broadcast [4096, 1]", "reshape [4, 4194304] sum [0]".
  virtual std::string describe() const = 0;
};

// The case's Eigen peer: make_eigen_broadcast or make_eigen_sum by its op; null if it has none.
std::unique_ptr<EigenPeer> make_eigen_peer(const Case& c);

// The Eigen broadcast of a broadcast_to or expand case as TensorFlow runs it: the shapes reduced as
// tensorflow::BCast(fewer_dims_optimization) does (output axes of extent 1 dropped, neighbouring
// axes merged while they are both broadcast or both copied), then
// out.device(pool) = in.reshape(x_reshape).broadcast(x_bcast), or a plain copy when nothing is
// broadcast. A transposed input (TensorFlow would first run a Transpose op) is read through a
// fused in.shuffle(reversed axes), unreduced. Null when Eigen was not built in, for another op, an
// itemsize other than 1, 2, 4 or 8, or more than 5 axes after the reduction.
std::unique_ptr<EigenPeer> make_eigen_broadcast(const Case& c);

// The Eigen sum of a reduction case (tile_backward, sum_to_shape, repeat_backward) as TensorFlow's
// reduce_sum runs the gradient: the C-contiguous gradient reshaped to the interleaved (replica,
// element) axes — (r0, s0, r1, s1, ...) for tile and sum_to_shape, (..., s_axis, r, ...) for a
// scalar repeat — simplified as tensorflow::ReductionHelper does (axes of extent 1 dropped,
// neighbouring axes merged while both are summed or both kept), then
// out.device(pool) = in.reshape(dims).sum(summed axes). Null when Eigen was not built in, for a
// transposed gradient, per-element repeat counts, a dtype other than float32, nothing to sum, or
// more than 6 axes after the simplification.
std::unique_ptr<EigenPeer> make_eigen_sum(const Case& c);

// How the Eigen peer was built ("Eigen 3.4.0, -mavx"), or why it was not; empty when it was not.
std::string eigen_info();

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_EIGEN_PEER_H
