// The element types (DType, tessera.hpp): one table of their names, sizes, numpy kinds and DLPack
// codes, which every lookup below reads (the C and DLPack entry points and the Python extension
// call these lookups, and keep no map of their own).
#include <tessera/tessera.hpp>

#include <cstdint>
#include <string>

namespace tessera {
namespace {

// DLPack's type codes (DLDataTypeCode, dlpack.h), which this file does not include: dlpack.h is
// optional (lib/meson.build), the table is not.
constexpr uint8_t kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5;

// One element type: its name (tessera_dtype_name), size in bytes, numpy's dtype.kind ('\0': numpy
// has no such type) and DLPack dtype (one lane of `dlpack_code`, `dlpack_bits` bits).
struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t itemsize;
  char numpy_kind;
  uint8_t dlpack_code;
  uint8_t dlpack_bits;
};

// Indexed by the DType's value (checked below).
constexpr DTypeInfo kTypes[] = {
    {DType::float32, "float32", 4, 'f', kDLFloat, 32},
    {DType::float64, "float64", 8, 'f', kDLFloat, 64},
    {DType::float16, "float16", 2, 'f', kDLFloat, 16},
    {DType::bfloat16, "bfloat16", 2, '\0', kDLBfloat, 16},
    {DType::complex64, "complex64", 8, 'c', kDLComplex, 64},
    {DType::complex128, "complex128", 16, 'c', kDLComplex, 128},
    {DType::int8, "int8", 1, 'i', kDLInt, 8},
    {DType::int16, "int16", 2, 'i', kDLInt, 16},
    {DType::int32, "int32", 4, 'i', kDLInt, 32},
    {DType::int64, "int64", 8, 'i', kDLInt, 64},
    {DType::uint8, "uint8", 1, 'u', kDLUInt, 8},
    {DType::uint16, "uint16", 2, 'u', kDLUInt, 16},
    {DType::uint32, "uint32", 4, 'u', kDLUInt, 32},
    {DType::uint64, "uint64", 8, 'u', kDLUInt, 64},
};
constexpr int kCount = static_cast<int>(sizeof kTypes / sizeof kTypes[0]);

constexpr bool indexed_by_value() {
  for (int v = 0; v < kCount; ++v)
    if (static_cast<int>(kTypes[v].dtype) != v || kTypes[v].itemsize * 8 != kTypes[v].dlpack_bits) return false;
  return kCount == static_cast<int>(DType::uint64) + 1;
}
static_assert(indexed_by_value(), "kTypes lists every DType once, in the order of its values, bits = 8 * itemsize");

// The table's entry for `dtype`; InvalidArgument naming the value if it is not a DType.
const DTypeInfo& info(DType dtype) {
  const int v = static_cast<int>(dtype);
  if (v < 0 || v >= kCount)
    throw InvalidArgument("tessera: dtype " + std::to_string(v) +
                          " is not a tessera_dtype (float32, float64, float16, bfloat16, complex64, complex128, "
                          "int8-int64, uint8-uint64: 0-13)");
  return kTypes[v];
}

}  // namespace

std::size_t itemsize_of(DType dtype) { return info(dtype).itemsize; }

const char* dtype_name(DType dtype) { return info(dtype).name; }

std::optional<DType> dtype_from_numpy(char kind, std::size_t itemsize) {
  for (const DTypeInfo& t : kTypes)
    if (kind != '\0' && t.numpy_kind == kind && t.itemsize == itemsize) return t.dtype;
  return std::nullopt;
}

std::optional<DType> dtype_from_dlpack(int code, int bits, int lanes) {
  for (const DTypeInfo& t : kTypes)
    if (lanes == 1 && t.dlpack_code == code && t.dlpack_bits == bits) return t.dtype;
  return std::nullopt;
}

std::optional<DType> dtype_named(const std::string& name) {
  for (const DTypeInfo& t : kTypes)
    if (name == t.name) return t.dtype;
  return std::nullopt;
}

}  // namespace tessera
