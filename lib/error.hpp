// The library's message helpers: each message starts "tessera: " and names shapes the same way
// (the planners throw through them; the executors and entry points build a few messages of their
// own, with the same prefix). Internal.
#ifndef TESSERA_LIB_ERROR_HPP
#define TESSERA_LIB_ERROR_HPP

#include <tessera/tessera.hpp>

#include <cstdint>
#include <string>

namespace tessera::detail {

/// Throws InvalidArgument("tessera: " + what).
[[noreturn]] void invalid(const std::string& what);
/// Throws Overflow("tessera: " + what).
[[noreturn]] void overflow(const std::string& what);
/// A shape as Python prints a tuple: "(2, 3)", "(4,)", "()".
std::string dims_str(const Dims& d);
/// The same for n values at v.
std::string dims_str(int n, const int64_t* v);

}  // namespace tessera::detail

#endif  // TESSERA_LIB_ERROR_HPP
