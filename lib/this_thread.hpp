// The calling thread's own object of a type, for the library's per-thread state (the one-shot
// calls' reused plan, the reductions' scratch and per-segment state).
#ifndef TESSERA_LIB_THIS_THREAD_HPP
#define TESSERA_LIB_THIS_THREAD_HPP

namespace tessera::detail {

/// The calling thread's T (one per thread and type: value-initialized at the thread's first call,
/// destroyed when the thread exits; T may be an array type). Not inlined, so that a caller holds a
/// plain reference: GCC 12 (-fPIC) computed a function-local thread_local's address again (a call
/// of __tls_get_addr) after each call its function made, 12 times in a one-shot `tessera_tile` of
/// 96 bytes (19% of its time; callgrind and perf on a Xeon reporting family 6 model 167,
/// 2026-12-04) and from 38 places in `repeat_backward`'s per-segment loop.
template <class T>
[[gnu::noinline]] T& this_thread() {
  thread_local T value{};
  return value;
}

}  // namespace tessera::detail

#endif  // TESSERA_LIB_THIS_THREAD_HPP
