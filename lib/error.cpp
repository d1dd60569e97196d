// The exception types' out-of-line destructors, which anchor their vtables and typeinfo in the
// library (a catch in the caller's code then matches what the library throws across the
// shared-object boundary), and the message helpers (error.hpp).
#include "error.hpp"

namespace tessera {

Error::~Error() = default;
InvalidArgument::~InvalidArgument() = default;
Overflow::~Overflow() = default;
BufferTooSmall::~BufferTooSmall() = default;

namespace detail {

void invalid(const std::string& what) { throw InvalidArgument("tessera: " + what); }

void overflow(const std::string& what) { throw Overflow("tessera: " + what); }

std::string dims_str(int n, const int64_t* v) {
  std::string s = "(";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (n == 1 ? ",)" : ")");
}

std::string dims_str(const Dims& d) { return dims_str(d.size(), d.data()); }

}  // namespace detail
}  // namespace tessera
