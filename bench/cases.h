// The benchmark cases, read from a JSON file (bench/cases.json by default).
//
// Each case is an object: "name", "dtype" (float32, float64, uint8, ...), "shape" (the input's
// extents), "reps", optional "note", and optional "transpose_of": the input is then the transposed
// (axes reversed) view of a C-contiguous array of that shape, so "shape" must be its reverse.
#ifndef TESSERA_BENCH_CASES_H
#define TESSERA_BENCH_CASES_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::bench {

struct Case {
  std::string name;
  std::string dtype;
  std::string note;
  std::size_t itemsize = 0;
  std::vector<int64_t> shape;    // input extents (elements)
  std::vector<int64_t> strides;  // input byte strides
  std::vector<int64_t> reps;
  std::size_t input_bytes = 0;  // size of the buffer that holds the input

  // Expected output, by numpy.tile's rule (computed here, independently of tessera).
  std::vector<int64_t> out_shape;
  std::size_t out_bytes = 0;
};

// Reads and validates the cases in `path`. Throws std::runtime_error naming the file and the
// problem (bad JSON, unknown dtype, negative extent, ...).
std::vector<Case> load_cases(const std::string& path);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_CASES_H
