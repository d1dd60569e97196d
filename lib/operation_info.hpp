// The operation table's rows as the bindings see them (tessera::OperationInfo, one per
// tessera::Operation, in its order): data only, so that the planners and describe() read an
// operation's name and argument kind without the table's planning functions (operations.hpp pairs
// each row with them). Internal.
#ifndef TESSERA_LIB_OPERATION_INFO_HPP
#define TESSERA_LIB_OPERATION_INFO_HPP

#include <tessera/tessera.hpp>

namespace tessera::detail {

inline constexpr OperationInfo kOperationInfo[operation_count] = {
    {Operation::tile, "tile", ArgKind::reps, false, Operation::tile_backward, "numpy.tile", "A", false},
    {Operation::broadcast_to, "broadcast_to", ArgKind::shape, false, Operation::sum_to_shape, "numpy.broadcast_to",
     "A", false},
    {Operation::expand, "expand", ArgKind::shape, false, Operation::sum_to_shape, "ONNX Expand", "A", false},
    {Operation::repeat, "repeat", ArgKind::repeats, false, Operation::repeat_backward, "numpy.repeat", "A", false},
    {Operation::tile_backward, "tile_backward", ArgKind::reps, true, Operation::tile, "the gradient of numpy.tile",
     "grad_out", true},
    {Operation::sum_to_shape, "sum_to_shape", ArgKind::shape, true, Operation::broadcast_to,
     "torch.Tensor.sum_to_size", "A", false},
    {Operation::repeat_backward, "repeat_backward", ArgKind::repeats, true, Operation::repeat,
     "the gradient of numpy.repeat", "grad_out", true},
};

namespace operation_info_check {
constexpr bool rows_ok() {
  for (int i = 0; i < operation_count; ++i) {
    const OperationInfo& r = kOperationInfo[i];
    if (static_cast<int>(r.op) != i || kOperationInfo[static_cast<int>(r.gradient)].reduction == r.reduction ||
        r.in_shape != (r.input[0] == 'g'))
      return false;
  }
  return true;
}
}  // namespace operation_info_check
static_assert(operation_info_check::rows_ok(), "kOperationInfo: row i is Operation i, each one's gradient is of the "
                                               "other kind, and a grad_out input goes with in_shape");

/// The row of `op`, a valid Operation (a plan's; operation_row checks a caller's value).
inline const OperationInfo& info_of(Operation op) noexcept { return kOperationInfo[static_cast<int>(op)]; }

}  // namespace tessera::detail

#endif  // TESSERA_LIB_OPERATION_INFO_HPP
