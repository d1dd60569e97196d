// Out-of-line destructors anchor the exception types' vtables and typeinfo in the library, so a
// catch in the caller's code matches what the library throws across the shared-object boundary.
#include <tessera/tessera.hpp>

namespace tessera {

Error::~Error() = default;
InvalidArgument::~InvalidArgument() = default;
Overflow::~Overflow() = default;
BufferTooSmall::~BufferTooSmall() = default;

}  // namespace tessera
