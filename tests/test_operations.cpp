// The operation table (tessera::Operation, operation_info, Plan::make, output_shape): every row
// says what it is, and planning an operation through the table gives the same plan, the same
// output shape and the same bytes as its named factory; bad operations and element types are
// errors naming the value.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

using tessera::Arguments;
using tessera::Dims;
using tessera::DType;
using tessera::Operation;
using tessera::Plan;

Operation op_at(int i) { return static_cast<Operation>(i); }

// One call of each operation on a 2x3 float32 input (its gradient: on the forward output), both
// through its named factory and through Plan::make with the same arguments.
struct Case {
  Operation op;
  Dims shape;  // the input of the call (a gradient for the reductions)
  Arguments args;
  Plan named;
};

std::vector<Case> cases() {
  const Dims in{2, 3};
  static const std::vector<int64_t> counts{1, 0, 2};  // Repeats is a view: the counts outlive the cases
  std::vector<Case> v;
  const auto add = [&](Operation op, const Dims& shape, Arguments a, Plan named) {
    v.push_back({op, shape, a, std::move(named)});
  };
  Arguments a;
  a.dims = Dims{2, 1, 2};
  add(Operation::tile, in, a, Plan(in, {}, 4, a.dims));
  a = Arguments();
  a.dims = Dims{4, 2, 3};
  add(Operation::broadcast_to, in, a, Plan::broadcast_to(in, {}, 4, a.dims));
  a.dims = Dims{4, 1, 1};
  add(Operation::expand, in, a, Plan::expand(in, {}, 4, a.dims));
  a = Arguments();
  a.repeats = counts;
  a.axis = -1;
  add(Operation::repeat, in, a, Plan::repeat(in, {}, 4, counts, -1));
  a = Arguments();
  a.dims = Dims{2, 1, 2};
  a.in_shape = in;
  a.dtype = DType::float32;
  add(Operation::tile_backward, Dims{2, 2, 6}, a, Plan::tile_backward({2, 2, 6}, {}, DType::float32, in, a.dims));
  a = Arguments();
  a.dims = Dims{1, 3};
  a.dtype = DType::float32;
  add(Operation::sum_to_shape, Dims{4, 2, 3}, a, Plan::sum_to_shape({4, 2, 3}, {}, DType::float32, a.dims));
  a = Arguments();
  a.repeats = counts;
  a.axis = 1;
  a.in_shape = in;
  a.dtype = DType::float32;
  add(Operation::repeat_backward, Dims{2, 3}, a, Plan::repeat_backward({2, 3}, {}, DType::float32, in, counts, 1));
  return v;
}

}  // namespace

TEST_CASE("operations: every row of the table is its operation's, named once, with a gradient of the other kind") {
  std::set<std::string> names;
  for (int i = 0; i < tessera::operation_count; ++i) {
    const tessera::OperationInfo& info = tessera::operation_info(op_at(i));
    CAPTURE(info.name);
    CHECK(static_cast<int>(info.op) == i);
    CHECK(names.insert(info.name).second);
    CHECK(std::strlen(info.source) > 0);
    const tessera::OperationInfo& grad = tessera::operation_info(info.gradient);
    CHECK(grad.reduction != info.reduction);
    CHECK(grad.arg == info.arg);  // a gradient takes its forward operation's kind of argument
    CHECK(info.in_shape == (info.reduction && info.arg != tessera::ArgKind::shape));
    CHECK(std::string(info.input) == (info.in_shape ? "grad_out" : "A"));
  }
  CHECK(names == std::set<std::string>{"tile", "broadcast_to", "expand", "repeat", "tile_backward", "sum_to_shape",
                                      "repeat_backward"});
  CHECK(tessera::operation_info(Operation::tile).gradient == Operation::tile_backward);
  CHECK(tessera::operation_info(Operation::expand).gradient == Operation::sum_to_shape);
  CHECK(tessera::operation_info(Operation::repeat_backward).gradient == Operation::repeat);
  for (int bad : {-1, tessera::operation_count, 1000}) {
    CAPTURE(bad);
    const std::string want = "operation " + std::to_string(bad) + " is not a tessera operation";
    CHECK_THROWS_WITH_AS(tessera::operation_info(op_at(bad)), doctest::Contains(want.c_str()),
                         tessera::InvalidArgument);
  }
}

TEST_CASE("operations: Plan::make and output_shape give what each named factory and shape function gives") {
  const std::vector<Case> all = cases();
  REQUIRE(all.size() == static_cast<std::size_t>(tessera::operation_count));
  std::vector<unsigned char> src(4 * 2 * 4 * 6);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
  for (const Case& c : all) {
    CAPTURE(tessera::operation_info(c.op).name);
    const Plan made = Plan::make(c.op, c.shape, {}, 4, c.args);
    CHECK(made.operation() == c.op);
    CHECK(c.named.operation() == c.op);
    CHECK(made.is_reduction() == tessera::operation_info(c.op).reduction);
    CHECK(made.shape() == c.named.shape());
    CHECK(made.describe() == c.named.describe());
    CHECK(std::string(made.kernel_path()) == c.named.kernel_path());
    CHECK(tessera::output_shape(c.op, c.shape, c.args) == c.named.shape());
    std::vector<unsigned char> a(made.nbytes() + 1, 0xAB), b(made.nbytes() + 1, 0xCD);
    made.execute(src.data(), a.data(), made.nbytes());
    c.named.execute(src.data(), b.data(), c.named.nbytes());
    CHECK(std::memcmp(a.data(), b.data(), made.nbytes()) == 0);
    CHECK(a.back() == 0xAB);  // nothing past the output
  }
  // The named shape functions agree with output_shape (they are written through it; this pins
  // their arguments' order).
  Arguments a;
  a.dims = Dims{3};
  CHECK(tessera::output_shape(Operation::tile, {2, 5}, a) == tessera::tile_shape({2, 5}, {3}));
  CHECK(tessera::output_shape(Operation::tile, {2, 5}, a) == Dims{2, 15});
}

TEST_CASE("operations: a reduction through Plan::make needs its dtype, of the itemsize given") {
  Arguments a;
  a.dims = Dims{1, 3};
  CHECK_THROWS_WITH_AS(Plan::make(Operation::sum_to_shape, {2, 3}, {}, 4, a),
                       doctest::Contains("sum_to_shape sums: give its element type"), tessera::InvalidArgument);
  a.dtype = DType::float64;
  CHECK_THROWS_WITH_AS(Plan::make(Operation::sum_to_shape, {2, 3}, {}, 4, a),
                       doctest::Contains("itemsize = 4 but dtype float64 has 8 bytes"), tessera::InvalidArgument);
  CHECK_THROWS_WITH_AS(Plan::make(op_at(9), {2, 3}, {}, 4, a), doctest::Contains("operation 9 is not"),
                       tessera::InvalidArgument);
  CHECK_THROWS_WITH_AS(Plan::make(op_at(9), {2, 3}, {}, 4, a), doctest::Contains("tile, broadcast_to, expand"),
                       tessera::InvalidArgument);
  // output_shape asks for the dtype too: a reduction's byte sizes are checked for its elements
  Arguments no_dtype;
  no_dtype.dims = Dims{1};
  CHECK_THROWS_WITH_AS(tessera::output_shape(Operation::sum_to_shape, {int64_t{1} << 61}, no_dtype),
                       doctest::Contains("sum_to_shape sums: give its element type"), tessera::InvalidArgument);
  no_dtype.dtype = DType::float64;
  CHECK_THROWS_AS(tessera::output_shape(Operation::sum_to_shape, {int64_t{1} << 61}, no_dtype), tessera::Overflow);
  // a copy ignores the dtype: it moves bytes of any itemsize
  a.dims = Dims{2};
  CHECK(Plan::make(Operation::tile, {2, 3}, {}, 3, a).nbytes() == 2 * 6 * 3);
}
