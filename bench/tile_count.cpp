// Instruction counts of tessera's executor per case, for valgrind's callgrind (bench/instructions
// runs it). Builds the case's plan (of its op: tile, broadcast_to, expand or repeat) with
// max_threads 1, executes it once outside the measurement (first touch, lazy initialisation), then
// executes it --calls times with callgrind's collection switched on around those calls only.
// Prints the case, the output bytes and the calls; callgrind writes the instruction count.
// Outside valgrind the client requests do nothing.
//
// Usage: tile_count --case=NAME [--calls=N] [--cases=FILE] [--dst-offset=BYTES]

#include <tessera/tessera.hpp>
#include <valgrind/callgrind.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "bench_config.h"  // TESSERA_BENCH_CASES
#include "case_plan.h"
#include "cases.h"

int main(int argc, char** argv) {
  std::string name, file = TESSERA_BENCH_CASES;
  long calls = 10;
  long dst_offset = 0;  // bytes past the 64-byte aligned output (--dst-offset, 0..63)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--case=", 0) == 0) {
      name = a.substr(7);
    } else if (a.rfind("--dst-offset=", 0) == 0) {
      dst_offset = std::strtol(a.c_str() + 13, nullptr, 10);
      if (dst_offset < 0 || dst_offset > 63) {
        std::fprintf(stderr, "tile_count: --dst-offset must be in [0, 63]\n");
        return 2;
      }
    } else if (a.rfind("--calls=", 0) == 0) {
      calls = std::strtol(a.c_str() + 8, nullptr, 10);
    } else if (a.rfind("--cases=", 0) == 0) {
      file = a.substr(8);
    } else {
      std::fprintf(stderr, "usage: tile_count --case=NAME [--calls=N] [--cases=FILE] [--dst-offset=BYTES]\n");
      return 2;
    }
  }
  if (calls < 1) {
    std::fprintf(stderr, "tile_count: --calls must be at least 1\n");
    return 2;
  }
  try {
    for (const tessera::bench::Case& c : tessera::bench::load_cases(file)) {
      if (c.name != name) continue;
      std::vector<unsigned char> input(c.input_bytes);
      for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<unsigned char>(i * 131 + 7);
      // 64-byte aligned, as the benchmark's buffers (an output that is not line-aligned takes the
      // staged path where a line-aligned one streams directly).
      const std::size_t out_alloc = (c.out_bytes + 63) / 64 * 64 + 64;
      std::unique_ptr<unsigned char, decltype(&std::free)> out_buffer(
          static_cast<unsigned char*>(std::aligned_alloc(64, out_alloc)), &std::free);
      if (!out_buffer) throw std::bad_alloc();
      unsigned char* out = out_buffer.get() + dst_offset;
      tessera::Options options;
      options.max_threads = 1;  // one thread: the count does not depend on scheduling
      const tessera::Plan plan = tessera::bench::make_plan(c, options);
      plan.execute(input.data(), out, c.out_bytes);
      CALLGRIND_TOGGLE_COLLECT;
      for (long k = 0; k < calls; ++k) plan.execute(input.data(), out, c.out_bytes);
      CALLGRIND_TOGGLE_COLLECT;
      std::printf("case %s output_bytes %zu calls %ld path %s target %s\n", c.name.c_str(), c.out_bytes, calls,
                  plan.kernel_path(), tessera::active_target());
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tile_count: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "tile_count: no case named '%s' in %s\n", name.c_str(), file.c_str());
  return 1;
}
