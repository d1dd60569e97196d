// The benchmark cases, read from a JSON file (bench/cases.json by default).
//
// Each case is an object: "name", "dtype" (float32, float64, uint8, ...), "shape" (the input's
// extents), optional "note", optional "transpose_of": the input is then the transposed (axes
// reversed) view of a C-contiguous array of that shape, so "shape" must be its reverse; and
// optional "op", the operation (default "tile"), with its arguments:
//   "tile"          "reps"                               numpy.tile(A, reps)
//   "broadcast_to"  "target"                             numpy.broadcast_to(A, target).copy()
//   "expand"        "target"                             ONNX Expand: the numpy broadcast of both shapes
//   "repeat"        "repeats", optional "axis"           numpy.repeat(A, repeats, axis): "axis" an
//                   integer (negative from the end) or null / absent (the flattened input);
//                   "repeats" an integer (every element), a list (one count per element along the
//                   axis), or {"random": [LO, HI], "seed": S}: one count per element, drawn
//                   uniformly from [LO, HI] by random_counts() below.
// The reductions (the gradients of the ops above; "dtype" then names the element type summed,
// one of tessera::DType's) read a gradient of "shape" and write a C-contiguous result:
//   "tile_backward"    "in_shape", "reps"               the gradient of tile: "shape" must be
//                                                       numpy.tile's output shape for them; the
//                                                       result has "in_shape"
//   "sum_to_shape"     "target"                         torch.Tensor.sum_to_size(target), the
//                                                       gradient of broadcast_to / expand
//   "repeat_backward"  "in_shape", "repeats", "axis"    the gradient of repeat ("repeats" and
//                                                       "axis" as for repeat, of "in_shape"):
//                                                       "shape" must be repeat's output shape
#ifndef TESSERA_BENCH_CASES_H
#define TESSERA_BENCH_CASES_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::bench {

enum class Op { tile, broadcast_to, expand, repeat, tile_backward, sum_to_shape, repeat_backward };

const char* op_name(Op op);

// Whether `op` is a reduction (tile_backward, sum_to_shape, repeat_backward): it reads the
// gradient (the input) and writes a smaller result (the output).
bool is_reduction(Op op);

struct Case {
  std::string name;
  std::string dtype;
  std::string note;
  Op op = Op::tile;
  std::size_t itemsize = 0;
  std::vector<int64_t> shape;    // input extents (elements)
  std::vector<int64_t> strides;  // input byte strides
  std::vector<int64_t> base;     // the C-contiguous array the input views ("transpose_of", else shape)
  bool transposed = false;       // the input is base's reversed-axes view
  std::size_t input_bytes = 0;   // size of the buffer that holds the input

  std::vector<int64_t> reps;      // tile, tile_backward
  std::vector<int64_t> target;    // broadcast_to, expand, sum_to_shape
  std::vector<int64_t> in_shape;  // tile_backward, repeat_backward: the forward op's input (= out_shape)
  std::vector<int64_t> repeats;   // repeat, repeat_backward: one count, or one per element along the axis
  std::optional<int> axis;        // repeat(_backward): normalised to [0, ndim); none = the flattened input
  std::string repeats_text;       // repeat(_backward): the counts as written in the file (for tables)

  // Expected output, by numpy's rule for the op (computed here, independently of tessera). For a
  // reduction, the shape of the forward op's input.
  std::vector<int64_t> out_shape;
  std::size_t out_bytes = 0;

  // repeat(_backward): the end (exclusive) of each element's run along the repeated axis (or the
  // flattened output), i.e. the prefix sums of the counts; empty for a single count.
  std::vector<int64_t> repeat_ends;

  // The operation's arguments in one line, e.g. "reps [2, 2]", "target [4096, 4096]",
  // "repeats 2, axis -1" (for tables and --describe).
  std::string arguments() const;
};

// Reads and validates the cases in `path`. Throws std::runtime_error naming the file and the
// problem (bad JSON, unknown dtype or op, negative extent, shapes that do not broadcast, ...).
std::vector<Case> load_cases(const std::string& path);

// The input index (one value per input axis) whose element the output element at `out_index`
// (one value per output axis) holds, by the case's op. Not for reductions (see summands).
std::vector<int64_t> source_index(const Case& c, const std::vector<int64_t>& out_index);

// A reduction: the gradient indices whose elements the result element at `out_index` (one value
// per result axis) sums, as one list of values per gradient axis (the sum runs over their
// cartesian product): the replicas the forward op made of that element.
std::vector<std::vector<int64_t>> summands(const Case& c, const std::vector<int64_t>& out_index);

// `count` counts drawn uniformly from [lo, hi]: count i is lo + splitmix64_i % (hi - lo + 1),
// splitmix64_i the i-th output (from 0) of SplitMix64 started at `seed`. bench/python_bench.py
// draws the same counts (random_counts there).
std::vector<int64_t> random_counts(int64_t count, int64_t lo, int64_t hi, uint64_t seed);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_CASES_H
