// The element types (DType, tessera.hpp): their names and sizes, in one table.
#include <tessera/tessera.hpp>

#include <string>

namespace tessera {

std::size_t itemsize_of(DType dtype) {
  static constexpr std::size_t sizes[] = {4, 8, 2, 2, 8, 16, 1, 2, 4, 8, 1, 2, 4, 8};
  const int v = static_cast<int>(dtype);
  if (v < 0 || v > static_cast<int>(DType::uint64))
    throw InvalidArgument("tessera: dtype " + std::to_string(v) +
                          " is not a tessera_dtype (float32, float64, float16, bfloat16, complex64, complex128, "
                          "int8-int64, uint8-uint64: 0-13)");
  return sizes[v];
}

const char* dtype_name(DType dtype) {
  static constexpr const char* names[] = {"float32", "float64", "float16", "bfloat16", "complex64",
                                          "complex128", "int8",  "int16",   "int32",    "int64",
                                          "uint8",   "uint16",  "uint32",  "uint64"};
  itemsize_of(dtype);  // throws for a value that is not a DType
  return names[static_cast<int>(dtype)];
}

}  // namespace tessera
