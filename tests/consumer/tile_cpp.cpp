// A C++17 consumer of tessera (tests/consumer): tiles a real array through the C++ API —
// allocating, with reps of another integer type, a plan with Options, an output region — checks
// every element, and catches a tessera::InvalidArgument thrown inside the library (the exception
// classes are exported). Prints one line; exits non-zero on any wrong result.
#include <tessera/tessera.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "tile_cpp: FAILED: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  // a = [[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]] (float), tiled by (3, 1) given as uint16_t: 6 x 3.
  const std::array<float, 6> a = {1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f};
  const std::vector<uint16_t> reps = {3, 1};
  const tessera::Array out = tessera::tile(a.data(), {2, 3}, {}, sizeof(float), reps);
  expect(out.shape() == tessera::Dims{6, 3}, "output shape (6, 3)");
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 3; ++j) expect(out.data_as<float>()[i * 3 + j] == a[(i % 2) * 3 + j], "tile output");

  // The transpose (strides in bytes) under options, and one region of its output.
  tessera::Options options;
  options.max_threads = 2;
  options.nontemporal = tessera::NonTemporal::always;
  const tessera::Plan plan({3, 2}, {sizeof(float), 3 * sizeof(float)}, sizeof(float), {2, 2}, options);
  std::vector<float> whole(static_cast<std::size_t>(plan.size()));
  plan.execute(a.data(), whole.data(), whole.size() * sizeof(float));
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) expect(whole[static_cast<std::size_t>(i * 4 + j)] == a[(j % 2) * 3 + i % 3], "transposed");
  float region[3][2];
  plan.execute_region(a.data(), {2, 1}, {3, 2}, region, sizeof region);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) expect(region[i][j] == whole[static_cast<std::size_t>((2 + i) * 4 + 1 + j)], "region");

  // A negative rep: the library throws, the caller catches the exported type.
  bool caught = false;
  try {
    (void)tessera::tile(a.data(), {6}, {}, sizeof(float), std::array<int8_t, 1>{-2});
  } catch (const tessera::InvalidArgument& e) {
    caught = std::strstr(e.what(), "reps[0] = -2") != nullptr && e.status() == tessera::Status::invalid_argument;
  }
  expect(caught, "tessera::InvalidArgument caught across the library boundary");
  tessera::Options clamp;
  clamp.negative_reps = tessera::NegativeReps::clamp_to_zero;
  expect(tessera::tile_shape({6}, std::array<int8_t, 1>{-2}, clamp) == tessera::Dims{0}, "clamp_to_zero");

  if (failures != 0) return 1;
  std::printf("tile_cpp: OK (tessera %s, SIMD target %s): 2x3 float tiled by (3, 1) -> 6x3, last row = %g %g %g\n",
              tessera::version(), tessera::active_target(), out.data_as<float>()[15], out.data_as<float>()[16],
              out.data_as<float>()[17]);
  return 0;
}
