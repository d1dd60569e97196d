// What every plan has, copy (copy_plan.hpp) or reduce (reduce.hpp): what tessera::Plan's
// accessors return. Internal.
#ifndef TESSERA_LIB_PLAN_BASE_HPP
#define TESSERA_LIB_PLAN_BASE_HPP

#include <tessera/tessera.hpp>

#include <cstddef>
#include <cstdint>

namespace tessera::detail {

struct PlanBase {
  Operation op = Operation::tile;  // the operation it was made for (set by its planner)
  Dims out_shape;
  int64_t out_size = 0;      // output elements
  std::size_t nbytes = 0;    // output bytes; fits int64_t
  std::size_t itemsize = 0;  // bytes per element
  int64_t input_size = 0;    // input elements
  Options options;           // validated; the executors read max_threads (and the reduce one accumulate)
};

}  // namespace tessera::detail

#endif  // TESSERA_LIB_PLAN_BASE_HPP
