// Helpers shared by the C entry points (c_api.cpp, and dlpack.cpp for <tessera/tessera_dlpack.h>):
// every entry point runs its body through guarded(), which turns whatever it throws into a
// tessera_status plus this thread's tessera_last_error() message. Internal.
#ifndef TESSERA_LIB_C_API_HPP
#define TESSERA_LIB_C_API_HPP

#include <tessera/tessera.h>
#include <tessera/tessera.hpp>

#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <string>

namespace tessera::detail {

/// Records `message` as this thread's last error (tessera_last_error) and returns `status`.
tessera_status c_fail(tessera_status status, const char* message) noexcept;

/// Runs `body` and maps whatever it throws to a status.
template <class Body>
tessera_status c_guarded(const Body& body) noexcept {
  try {
    body();
    return TESSERA_OK;
  } catch (const Error& e) {
    return c_fail(static_cast<tessera_status>(e.status()), e.what());
  } catch (const std::bad_alloc&) {
    return c_fail(TESSERA_OUT_OF_MEMORY, "tessera: out of memory");
  } catch (const std::exception& e) {
    try {
      return c_fail(TESSERA_INTERNAL, (std::string("tessera: internal error: ") + e.what()).c_str());
    } catch (...) {
      return TESSERA_INTERNAL;
    }
  } catch (...) {
    return c_fail(TESSERA_INTERNAL, "tessera: internal error: unknown exception");
  }
}

/// A (count, pointer) pair from C as Dims; `what` and `count_name` name them in the message.
/// Throws InvalidArgument for a count outside [0, TESSERA_MAX_NDIM] or a NULL pointer with count > 0.
Dims c_dims(int count, const int64_t* values, const char* what, const char* count_name);

/// Throws InvalidArgument "tessera: <name> is NULL" if p is null.
void c_require(const void* p, const char* name);

/// The caller's options: the fields within its sizeof_options, defaults for the rest (NULL: the
/// defaults). Throws InvalidArgument for a sizeof_options that is 0, too small for max_threads or
/// larger than this version's struct, and for an accumulate other than 0 or 1; the enum fields and
/// max_threads are validated by the planner.
Options c_options(const tessera_options* options);

/// repeat's counts from C: nrepeats values (one for every element, or one per element along the
/// axis). Throws InvalidArgument for a negative nrepeats, then for a NULL repeats with nrepeats > 0.
Repeats c_repeats(int64_t nrepeats, const int64_t* repeats);

/// repeat's axis from C: std::nullopt for TESSERA_AXIS_NONE (the flattened input), else the value
/// (checked by the planner).
std::optional<int> c_axis(int axis);

/// A tessera_dtype value from C as a DType; throws InvalidArgument naming a value that is not one.
DType c_dtype(int dtype);

/// Writes shape's size to *out_ndim and its values to out_shape.
void c_write_shape(const Dims& shape, int* out_ndim, int64_t* out_shape) noexcept;

}  // namespace tessera::detail

#endif  // TESSERA_LIB_C_API_HPP
