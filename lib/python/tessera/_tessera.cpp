// tessera._tessera — the CPython extension behind `import tessera` (lib/python/tessera/__init__.py,
// which holds the documented front end). numpy arrays are read through numpy's C API (shape, byte
// strides, dtype as they are: no copy of the input, whatever its layout or byte order); torch
// tensors arrive as DLPack capsules. Every argument is checked, and the output allocated, before
// tessera writes a byte; the GIL is released while it copies.
//
// The operations: tile, and the rest of the replication family (broadcast_to, expand, repeat),
// which share the readers, out= checks and writers below; and the family's gradients, the
// reductions (tile_backward, sum_to_shape, repeat_backward), which add, and so take the element
// type too (numpy's or DLPack's dtype mapped to tessera::DType), and may add into out=.
//
// Errors: tessera::Error (a bad value, an output too big) -> ValueError; repeat's axis out of
// range -> numpy.AxisError; a bad type -> TypeError; an allocation failure -> MemoryError.
// Messages name the bad value.
#define PY_SSIZE_T_CLEAN
#include <pybind11/pybind11.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tessera_PyArray_API
#include <numpy/arrayobject.h>
#ifndef PyDataType_ELSIZE  // numpy < 2 (npy_2_compat.h defines it from numpy 2 on)
#define PyDataType_ELSIZE(descr) ((descr)->elsize)
#endif

#include <dlpack/dlpack.h>
#include <tessera/tessera.hpp>

#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// Outputs of at least this many bytes are copied with the GIL released (smaller ones take less
// time than handing the GIL over; numpy's own copies draw the same line at 500 elements).
constexpr std::size_t kReleaseGilBytes = std::size_t{16} << 10;
// New outputs of at least this many bytes come from tessera's allocating tile (tessera.hpp: 2 MiB
// aligned, transparent huge pages advised, first touched by the executor's threads, written with
// ordinary stores while the freshly zeroed pages are still cached); smaller ones from numpy's
// allocator, whose recycled blocks are already mapped. The same line as the C++ API's.
constexpr std::size_t kFreshMinBytes = std::size_t{32} << 20;

[[noreturn]] void throw_python() { throw py::error_already_set(); }

std::string repr(PyObject* o) {
  PyObject* r = PyObject_Repr(o);
  if (r == nullptr) {
    PyErr_Clear();
    return "<unprintable>";
  }
  const char* s = PyUnicode_AsUTF8(r);
  std::string out = s ? s : "<unprintable>";
  Py_DECREF(r);
  if (out.size() > 80) out = out.substr(0, 77) + "...";
  return out;
}

std::string type_name(PyObject* o) { return Py_TYPE(o)->tp_name; }

std::string shape_str(const tessera::Dims& d) {
  std::string s = "(";
  for (int i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + (d.size() == 1 ? ",)" : ")");
}

// One integer of a list the user gave (reps, a shape, strides, start, extent): anything with
// __index__ (int, numpy integers; bool only where numpy takes it, `bool_ok`: reps and repeat
// counts, not shapes); TypeError naming it otherwise. A value beyond int64 is
// `too_big` (ValueError naming it) when positive; when negative it is INT64_MIN if `negative_ok`
// (reps: an error naming the axis later, or 0 under negative_reps="clamp_to_zero"), else a
// ValueError naming it.
int64_t to_int64(PyObject* item, const char* what, int i, const char* too_big, bool negative_ok,
                 bool bool_ok = false) {
  if (!bool_ok && (PyBool_Check(item) || PyArray_IsScalar(item, Bool)))
    throw py::type_error(std::string("tessera: ") + what + "[" + std::to_string(i) + "] = " + repr(item) + " (" +
                         type_name(item) + ") is a bool, not an integer");
  PyObject* idx = PyNumber_Index(item);
  if (idx == nullptr) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw_python();
    PyErr_Clear();
    throw py::type_error(std::string("tessera: ") + what + "[" + std::to_string(i) + "] = " + repr(item) + " (" +
                         type_name(item) + ") is not an integer");
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
  const std::string value = overflow ? repr(idx) : std::string();
  Py_DECREF(idx);
  if (overflow > 0)
    throw py::value_error(std::string("tessera: ") + what + "[" + std::to_string(i) + "] = " + value + " " + too_big);
  if (overflow < 0) {
    if (negative_ok) return INT64_MIN;
    throw py::value_error(std::string("tessera: ") + what + "[" + std::to_string(i) + "] = " + value + " is negative");
  }
  if (v == -1 && PyErr_Occurred()) throw_python();
  return v;
}

// A list of integers as numpy.tile reads reps: an int (one value), a sequence or iterable of ints,
// or an ndarray (0-d: one value; 1-d: its items). At most tessera::max_ndim values (ValueError).
// Lists and iterables are first copied into a tuple, which holds its items: an item's __index__
// cannot change what is being read.
tessera::Dims to_dims(PyObject* obj, const char* what, const char* too_big, bool negative_ok = false,
                      bool bool_ok = false) {
  int64_t values[tessera::max_ndim];
  int n = 0;
  auto too_many = [&] {
    return py::value_error(std::string("tessera: ") + what + " has more than " + std::to_string(tessera::max_ndim) +
                           " values: tessera supports at most " + std::to_string(tessera::max_ndim) + " axes");
  };
  auto add_all = [&](PyObject* tuple) {
    const Py_ssize_t len = PyTuple_GET_SIZE(tuple);
    if (len > tessera::max_ndim) throw too_many();
    for (Py_ssize_t i = 0; i < len; ++i, ++n)
      values[n] = to_int64(PyTuple_GET_ITEM(tuple, i), what, n, too_big, negative_ok, bool_ok);
  };
  if (PyLong_Check(obj)) {
    values[n] = to_int64(obj, what, 0, too_big, negative_ok, bool_ok);
    ++n;
  } else if (PyTuple_Check(obj)) {
    add_all(obj);
  } else if (PyArray_Check(obj)) {
    auto* arr = reinterpret_cast<PyArrayObject*>(obj);
    if (PyArray_NDIM(arr) > 1)
      throw py::value_error(std::string("tessera: ") + what + " is a " + std::to_string(PyArray_NDIM(arr)) +
                            "-d array; give an integer or a 1-d sequence of integers");
    if (PyArray_SIZE(arr) > tessera::max_ndim) throw too_many();
    py::object list = py::reinterpret_steal<py::object>(PyArray_ToList(arr));
    if (!list) throw_python();
    if (PyList_Check(list.ptr())) {
      py::object tuple = py::reinterpret_steal<py::object>(PyList_AsTuple(list.ptr()));
      if (!tuple) throw_python();
      add_all(tuple.ptr());
    } else {
      values[n] = to_int64(list.ptr(), what, 0, too_big, negative_ok, bool_ok);  // a 0-d array: one value
      ++n;
    }
  } else {
    // numpy.tile: tuple(reps), or (reps,) when reps is not iterable.
    py::object tuple = py::reinterpret_steal<py::object>(PySequence_Tuple(obj));
    if (!tuple) {
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw_python();
      PyErr_Clear();
      values[n] = to_int64(obj, what, 0, too_big, negative_ok, bool_ok);
      ++n;
    } else {
      add_all(tuple.ptr());
    }
  }
  return tessera::Dims(values, static_cast<std::size_t>(n));
}

constexpr const char* kRepTooBig = "is too large: the output would not fit in memory (array is too big)";

// reps as tessera reads them: negative values kept, judged by the planner (an error naming the
// axis, or 0 under negative_reps="clamp_to_zero"); one beyond int64 is an error naming it unless
// it is clamped.
tessera::Dims to_reps(PyObject* obj, const tessera::Options& options) {
  return to_dims(obj, "reps", kRepTooBig, options.negative_reps == tessera::NegativeReps::clamp_to_zero, true);
}

py::tuple to_tuple(const tessera::Dims& d) {
  py::tuple t(d.size());
  for (int i = 0; i < d.size(); ++i) t[i] = py::int_(d[i]);
  return t;
}

tessera::Options to_options(PyObject* max_threads, PyObject* nontemporal, PyObject* negative_reps) {
  tessera::Options o;
  if (max_threads != Py_None) {
    // An int or a numpy integer: no user-defined __index__ runs (see tile_dlpack).
    if (PyBool_Check(max_threads) || !(PyLong_Check(max_threads) || PyArray_IsScalar(max_threads, Integer)))
      throw py::type_error("tessera: max_threads = " + repr(max_threads) + " (" + type_name(max_threads) +
                           "); give an int >= 1 or None");
    const int64_t v = to_int64(max_threads, "max_threads", 0, "is too large", true);
    if (v < 1 || v > INT_MAX)
      throw py::value_error("tessera: max_threads = " + std::to_string(v) +
                            "; give N >= 1 (at most N threads write the output) or None (the task arena decides)");
    o.max_threads = static_cast<int>(v);
  }
  if (nontemporal == Py_True) {
    o.nontemporal = tessera::NonTemporal::always;
  } else if (nontemporal == Py_False) {
    o.nontemporal = tessera::NonTemporal::never;
  } else if (nontemporal != Py_None) {
    throw py::type_error("tessera: nontemporal = " + repr(nontemporal) + " (" + type_name(nontemporal) +
                         "); give None (automatic), True or False");
  }
  if (!PyUnicode_Check(negative_reps))
    throw py::type_error("tessera: negative_reps = " + repr(negative_reps) + " (" + type_name(negative_reps) +
                         "); give 'error' or 'clamp_to_zero'");
  if (PyUnicode_CompareWithASCIIString(negative_reps, "clamp_to_zero") == 0) {
    o.negative_reps = tessera::NegativeReps::clamp_to_zero;
  } else if (PyUnicode_CompareWithASCIIString(negative_reps, "error") != 0) {
    throw py::value_error("tessera: negative_reps = " + repr(negative_reps) + "; give 'error' or 'clamp_to_zero'");
  }
  return o;
}

// Where a strided operand's bytes lie: [lo, hi) (empty when the operand has no element).
struct ByteSpan {
  const char* lo = nullptr;
  const char* hi = nullptr;
};

ByteSpan span_of(const char* data, const tessera::Dims& shape, const tessera::Dims& strides, std::size_t itemsize) {
  ByteSpan s;
  for (int i = 0; i < shape.size(); ++i)
    if (shape[i] == 0) return s;
  int64_t lo = 0, hi = 0;
  bool overflow = false;
  for (int i = 0; i < shape.size(); ++i) {
    int64_t reach = 0;
    overflow = overflow || __builtin_mul_overflow(shape[i] - 1, strides[i], &reach) ||
               __builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi);
  }
  if (overflow) {  // only arrays made with as_strided reach this far: assume they overlap anything
    s.lo = reinterpret_cast<const char*>(std::uintptr_t{1});
    s.hi = reinterpret_cast<const char*>(UINTPTR_MAX);
    return s;
  }
  s.lo = data + lo;
  s.hi = data + hi + static_cast<int64_t>(itemsize);
  return s;
}

bool overlaps(ByteSpan a, const char* b, std::size_t nbytes) {
  return nbytes > 0 && a.lo != a.hi && a.lo < b + nbytes && b < a.hi;
}

// Calls write(dst) to write nbytes bytes: through a temporary, then copied, when dst overlaps the
// source's bytes (so the source is read whole before dst is written; under `accumulate` the
// temporary starts as a copy of dst, which the write adds into), with the GIL released for writes
// of kReleaseGilBytes or more (always for regions: release_gil).
template <class Write>
void write_into(ByteSpan src_span, char* dst, std::size_t nbytes, bool release_gil, const Write& write,
                bool accumulate = false) {
  if (nbytes == 0) return;
  const bool overlap = overlaps(src_span, dst, nbytes);
  std::unique_ptr<py::gil_scoped_release> release;
  if (release_gil || overlap || nbytes >= kReleaseGilBytes) release = std::make_unique<py::gil_scoped_release>();
  if (!overlap) {
    write(dst);
    return;
  }
  std::unique_ptr<char[]> tmp(new char[nbytes]);
  if (accumulate) std::memcpy(tmp.get(), dst, nbytes);
  write(tmp.get());
  std::memcpy(dst, tmp.get(), nbytes);
}

// Runs the plan into dst (the plan's nbytes), as write_into. A reduction's work is its input, not
// its (often tiny) output: the GIL is released when either is kReleaseGilBytes or more.
void execute_into(const tessera::Plan& plan, const char* src, ByteSpan src_span, char* dst) {
  const bool big_input = plan.is_reduction() &&
                         static_cast<std::size_t>(plan.input_size()) * plan.itemsize() >= kReleaseGilBytes;
  write_into(src_span, dst, plan.nbytes(), big_input,
             [&](char* to) { plan.execute(src, to, plan.nbytes()); }, plan.options().accumulate);
}

// ---------------------------------------------------------------------------------------------
// numpy arrays

PyArrayObject* as_array(PyObject* obj, py::object* holder) {
  if (PyArray_Check(obj)) return reinterpret_cast<PyArrayObject*>(obj);
  PyObject* arr = PyArray_FromAny(obj, nullptr, 0, 0, 0, nullptr);  // numpy.asarray
  if (arr == nullptr) throw_python();
  *holder = py::reinterpret_steal<py::object>(arr);
  return reinterpret_cast<PyArrayObject*>(arr);
}

void check_copyable(PyArray_Descr* descr, const char* who) {
  if (PyDataType_REFCHK(descr))
    throw py::type_error(std::string("tessera: ") + who + " has dtype " + repr(reinterpret_cast<PyObject*>(descr)) +
                         ", which holds Python objects: tessera copies bytes, and copying object pointers would "
                         "break their reference counts (use numpy.tile)");
}

tessera::Dims dims_of(PyArrayObject* a) {
  return tessera::Dims(PyArray_DIMS(a), static_cast<std::size_t>(PyArray_NDIM(a)));
}
tessera::Dims strides_of(PyArrayObject* a) {
  return tessera::Dims(PyArray_STRIDES(a), static_cast<std::size_t>(PyArray_NDIM(a)));
}

// An output shape must be one numpy can hold: at most NPY_MAXDIMS axes and a byte size that fits
// Py_ssize_t ("array is too big", as numpy says) — checked before anything is allocated.
void check_numpy_output(const tessera::Dims& shape, std::size_t nbytes, std::size_t itemsize) {
  if (shape.size() > NPY_MAXDIMS)
    throw py::value_error("tessera: the output would have " + std::to_string(shape.size()) +
                          " axes; numpy arrays have at most " + std::to_string(NPY_MAXDIMS));
  // numpy also refuses an empty shape whose other extents would overflow (its "as if not empty" rule).
  int64_t size = static_cast<int64_t>(itemsize > 0 ? itemsize : 1);
  bool overflow = false;
  for (int i = 0; i < shape.size(); ++i)
    overflow = overflow || (shape[i] != 0 && __builtin_mul_overflow(size, shape[i], &size));
  if (overflow || nbytes > static_cast<std::size_t>(PY_SSIZE_T_MAX)) {
    bool empty = false;
    for (int i = 0; i < shape.size(); ++i) empty = empty || shape[i] == 0;
    if (empty)  // 0 bytes: numpy's rule, not the byte count, is what fails
      throw py::value_error("tessera: the output " + shape_str(shape) +
                            " has no element, but the product of its nonzero extents and the itemsize overflows "
                            "(numpy refuses such a shape: array is too big)");
    throw py::value_error("tessera: the output " + shape_str(shape) + " would be " +
                          (overflow ? std::string("more than 2**63") : std::to_string(nbytes)) +
                          " bytes: array is too big");
  }
}

py::object new_array(PyArray_Descr* descr, const tessera::Dims& shape, void* data = nullptr) {
  npy_intp dims[NPY_MAXDIMS];
  for (int i = 0; i < shape.size(); ++i) dims[i] = static_cast<npy_intp>(shape[i]);
  Py_INCREF(descr);  // PyArray_NewFromDescr steals it
  PyObject* arr = PyArray_NewFromDescr(&PyArray_Type, descr, shape.size(), dims, nullptr, data,
                                       data ? NPY_ARRAY_CARRAY : 0, nullptr);
  if (arr == nullptr) throw_python();
  return py::reinterpret_steal<py::object>(arr);
}

// A numpy array over memory from tessera's allocator, freed (tessera_free) with the array.
py::object adopt(tessera::Array&& result, PyArray_Descr* descr) {
  const tessera::Dims shape = result.shape();
  void* data = result.release();
  PyObject* owner = PyCapsule_New(data, "tessera.output", [](PyObject* capsule) {
    tessera_free(PyCapsule_GetPointer(capsule, "tessera.output"));
  });
  if (owner == nullptr) {
    tessera_free(data);
    throw_python();
  }
  py::object arr;
  try {
    arr = new_array(descr, shape, data);
  } catch (...) {
    Py_DECREF(owner);
    throw;
  }
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(arr.ptr()), owner) < 0) throw_python();  // steals owner
  return arr;
}

// Checks `out` for an output of `shape` and dtype `descr`: a C-contiguous, writeable ndarray of
// exactly that shape and dtype (byte order included). TypeError / ValueError naming what differs.
PyArrayObject* check_out(PyObject* out, PyArray_Descr* descr, const tessera::Dims& shape, const char* what) {
  if (!PyArray_Check(out))
    throw py::type_error(std::string("tessera: out must be a numpy.ndarray, got ") + type_name(out));
  auto* o = reinterpret_cast<PyArrayObject*>(out);
  const tessera::Dims oshape = dims_of(o);
  if (oshape != shape)
    throw py::value_error("tessera: out has shape " + shape_str(oshape) + " but " + what + " has shape " +
                          shape_str(shape));
  if (!PyArray_EquivTypes(PyArray_DESCR(o), descr))
    throw py::value_error("tessera: out has dtype " + repr(reinterpret_cast<PyObject*>(PyArray_DESCR(o))) +
                          " but " + what + " has dtype " + repr(reinterpret_cast<PyObject*>(descr)));
  if (!PyArray_IS_C_CONTIGUOUS(o)) throw py::value_error("tessera: out is not C-contiguous");
  if (!PyArray_ISWRITEABLE(o)) throw py::value_error("tessera: out is read-only");
  return o;
}

// A planned call's result: written into `out` (checked first), or into a new array — from the
// allocating C++ call (the plan made once, GIL released) for kFreshMinBytes or more.
py::object write_result(const tessera::Plan& plan, const char* src, const tessera::Dims& shape,
                        const tessera::Dims& strides, std::size_t itemsize, PyArray_Descr* descr, py::handle out) {
  check_numpy_output(plan.shape(), plan.nbytes(), itemsize);
  if (!out.is_none()) {
    PyArrayObject* o = check_out(out.ptr(), descr, plan.shape(), "the result");
    execute_into(plan, src, span_of(src, shape, strides, itemsize), static_cast<char*>(PyArray_DATA(o)));
    return py::reinterpret_borrow<py::object>(out);
  }
  if (plan.nbytes() >= kFreshMinBytes) {
    tessera::Array result;
    try {
      py::gil_scoped_release release;
      result = plan.execute(src);  // the plan made once, re-chosen for fresh pages
    } catch (const std::bad_alloc&) {
      PyErr_Format(PyExc_MemoryError, "tessera: cannot allocate %zu bytes for an output of shape %s", plan.nbytes(),
                   shape_str(plan.shape()).c_str());
      throw_python();
    }
    return adopt(std::move(result), descr);
  }
  py::object result = new_array(descr, plan.shape());
  execute_into(plan, src, ByteSpan{}, static_cast<char*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(result.ptr()))));
  return result;
}

// tessera.tile for anything but a torch tensor (see __init__.py for the contract).
py::object tile(py::handle A, py::handle reps, py::handle out, py::handle max_threads, py::handle nontemporal,
                py::handle negative_reps) {
  // The arguments that may run Python code (reps' __index__ or __iter__) are read first; A's
  // dtype, shape, strides and data are read after, together, and nothing runs Python code
  // between then and the copy.
  const tessera::Options options = to_options(max_threads.ptr(), nontemporal.ptr(), negative_reps.ptr());
  const tessera::Dims r = to_reps(reps.ptr(), options);
  py::object holder;
  PyArrayObject* a = as_array(A.ptr(), &holder);
  const py::object descr_ref = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(PyArray_DESCR(a)));
  PyArray_Descr* descr = PyArray_DESCR(a);
  check_copyable(descr, "A");
  const tessera::Dims shape = dims_of(a), strides = strides_of(a);
  const std::size_t itemsize = static_cast<std::size_t>(PyArray_ITEMSIZE(a));
  const char* src = static_cast<const char*>(PyArray_DATA(a));

  if (itemsize == 0) {  // e.g. dtype([]) or 'V0': no bytes to move, only a shape to make
    const tessera::Dims oshape = tessera::tile_shape(shape, r, options);
    check_numpy_output(oshape, 0, 0);
    if (out.is_none()) return new_array(descr, oshape);
    check_out(out.ptr(), descr, oshape, "the result");
    return py::reinterpret_borrow<py::object>(out);
  }

  const tessera::Plan plan(shape, strides, itemsize, r, options);
  return write_result(plan, src, shape, strides, itemsize, descr, out);
}

// tessera.tile_shape(shape, reps, negative_reps)
py::tuple tile_shape(py::handle shape, py::handle reps, py::handle negative_reps) {
  const tessera::Options options = to_options(Py_None, Py_None, negative_reps.ptr());
  const tessera::Dims s = to_dims(shape.ptr(), "shape", "is too large");
  return to_tuple(tessera::tile_shape(s, to_reps(reps.ptr(), options), options));
}

// ---------------------------------------------------------------------------------------------
// The replication family: broadcast_to, expand, repeat (numpy arrays here; torch tensors below;
// tile's own entry points are above, and Plan takes every operation), and the family's gradients,
// the reductions (further down), which share the argument readers.

enum class Op { tile, broadcast_to, expand, repeat, tile_backward, sum_to_shape, repeat_backward };

bool is_reduction(Op op) { return op == Op::tile_backward || op == Op::sum_to_shape || op == Op::repeat_backward; }

// The operation's name as __init__.py passes it.
Op to_op(py::handle name) {
  const std::string s = py::cast<std::string>(name);
  if (s == "tile") return Op::tile;
  if (s == "broadcast_to") return Op::broadcast_to;
  if (s == "expand") return Op::expand;
  if (s == "repeat") return Op::repeat;
  if (s == "tile_backward") return Op::tile_backward;
  if (s == "sum_to_shape") return Op::sum_to_shape;
  if (s == "repeat_backward") return Op::repeat_backward;
  throw py::value_error("tessera: unknown operation '" + s + "'");
}

const char* op_name(Op op);

// The operation's name as __init__.py passes it, checked to be a copying one (is_copy) or a
// reduction (!is_copy).
Op to_op(py::handle name, bool is_copy) {
  const Op op = to_op(name);
  if (is_reduction(op) == is_copy)
    throw py::value_error(std::string("tessera: '") + op_name(op) + "' is " +
                          (is_copy ? "a reduction" : "not a reduction"));
  return op;
}

const char* op_name(Op op) {
  switch (op) {
    case Op::tile: return "tile";
    case Op::broadcast_to: return "broadcast_to";
    case Op::expand: return "expand";
    case Op::repeat: return "repeat";
    case Op::tile_backward: return "tile_backward";
    case Op::sum_to_shape: return "sum_to_shape";
    case Op::repeat_backward: return "repeat_backward";
  }
  return "?";
}

constexpr const char* kCountTooBig = "is too large: the output would not fit in memory (array is too big)";

// An operation's arguments, read once, before A (reading them may run Python code: __index__,
// __iter__): tile's reps, broadcast_to's and expand's target shape, repeat's counts, axis and
// output_size; the reductions' result shape, tile_backward's reps, repeat_backward's counts and axis.
struct OpArgs {
  Op op = Op::tile;
  tessera::Dims dims;           // tile, tile_backward: reps; broadcast_to, expand: the target shape
  tessera::Dims result;         // the reductions: the result's shape (in_shape, or sum_to_shape's shape)
  std::vector<int64_t> counts;  // repeat(_backward): one count (for every element), or one per element
  bool scalar = true;           // repeat(_backward): the counts were one integer, not a sequence
  py::object axis;              // repeat(_backward): None, or the axis as a Python int (named by AxisError)
  int64_t axis_value = 0;       // its value (INT64_MIN / INT64_MAX beyond int64: out of range)
  bool has_output_size = false;
  int64_t output_size = 0;

  tessera::Repeats repeats() const { return tessera::Repeats(counts.data(), counts.size()); }
};

// repeat's counts as numpy.repeat reads them: an integer (numpy integers and bools included); an
// integer or bool ndarray of at most 1 axis (read through numpy's cast to int64, uint64 values
// checked); any other sequence or iterable of integers, copied into a tuple first (so an item's
// __index__ cannot change what is read). Non-integers are a TypeError naming the first one
// (numpy 1.24 truncates floats; tessera, as for reps, does not guess).
std::vector<int64_t> to_counts(PyObject* obj, bool* scalar) {
  std::vector<int64_t> v;
  *scalar = false;
  const auto one = [&](PyObject* item) {
    v.push_back(to_int64(item, "repeats", 0, kCountTooBig, false, true));
    *scalar = true;
    return v;
  };
  if (PyLong_Check(obj) || PyArray_IsScalar(obj, Integer) || PyArray_IsScalar(obj, Bool)) return one(obj);
  py::object holder;
  if (PyArray_Check(obj)) {
    auto* arr = reinterpret_cast<PyArrayObject*>(obj);
    if (PyArray_NDIM(arr) > 1)
      throw py::value_error("tessera: repeats is a " + std::to_string(PyArray_NDIM(arr)) +
                            "-d array; give an integer or a 1-d sequence of integers (one per element along the axis)");
    const char kind = PyArray_DESCR(arr)->kind;
    if (kind == 'b' || kind == 'i' || kind == 'u') {
      PyObject* c = PyArray_FROMANY(obj, NPY_INT64, 0, 1, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST);
      if (c == nullptr) throw_python();
      const py::object cast = py::reinterpret_steal<py::object>(c);
      const auto* p = static_cast<const int64_t*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(c)));
      v.assign(p, p + PyArray_SIZE(reinterpret_cast<PyArrayObject*>(c)));
      if (kind == 'u')  // a uint64 beyond int64 reads as negative after the cast
        for (std::size_t i = 0; i < v.size(); ++i)
          if (v[i] < 0)
            throw py::value_error("tessera: repeats[" + std::to_string(i) + "] = " +
                                  std::to_string(static_cast<uint64_t>(v[i])) + " " + kCountTooBig);
      *scalar = PyArray_NDIM(arr) == 0;
      return v;
    }
    // object, float, string ... arrays: item by item, so that a non-integer is named
    holder = py::reinterpret_steal<py::object>(PyArray_ToList(arr));
    if (!holder) throw_python();
    if (PyArray_NDIM(arr) == 0) return one(holder.ptr());
    obj = holder.ptr();
  }
  const py::object tuple = py::reinterpret_steal<py::object>(PySequence_Tuple(obj));
  if (!tuple) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw_python();
    PyErr_Clear();
    return one(obj);  // not iterable: one integer (TypeError naming it otherwise)
  }
  const Py_ssize_t n = PyTuple_GET_SIZE(tuple.ptr());
  v.resize(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyTuple_GET_ITEM(tuple.ptr(), i);
    // a nested sequence is a count list of more than one axis (numpy: ValueError), not a bad count
    if (PyList_Check(item) || PyTuple_Check(item) ||
        (PyArray_Check(item) && PyArray_NDIM(reinterpret_cast<PyArrayObject*>(item)) > 0))
      throw py::value_error("tessera: repeats[" + std::to_string(i) + "] = " + repr(item) +
                            " is a sequence: repeats is nested; give an integer or a 1-d sequence of integers "
                            "(one per element along the axis)");
    v[static_cast<std::size_t>(i)] = to_int64(item, "repeats", static_cast<int>(i), kCountTooBig, false, true);
  }
  return v;
}

// An integer argument other than a list (axis, output_size): anything with __index__; TypeError
// naming it otherwise. The value is clamped to int64 (out of range either way).
py::object to_index(PyObject* obj, const char* what, int64_t* value) {
  if (PyBool_Check(obj) || PyArray_IsScalar(obj, Bool))  // numpy and torch: TypeError
    throw py::type_error(std::string("tessera: ") + what + " = " + repr(obj) + " (" + type_name(obj) +
                         ") is a bool, not an integer or None");
  PyObject* idx = PyNumber_Index(obj);
  if (idx == nullptr) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw_python();
    PyErr_Clear();
    throw py::type_error(std::string("tessera: ") + what + " = " + repr(obj) + " (" + type_name(obj) +
                         ") is not an integer or None");
  }
  py::object index = py::reinterpret_steal<py::object>(idx);
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
  *value = overflow > 0 ? INT64_MAX : overflow < 0 ? INT64_MIN : v;
  return index;
}

OpArgs read_args(Op op, py::handle arg, py::handle axis, py::handle output_size, const tessera::Options& options) {
  OpArgs a;
  a.op = op;
  switch (op) {
    case Op::tile:
    case Op::tile_backward:
      a.dims = to_reps(arg.ptr(), options);
      break;
    case Op::broadcast_to:
    case Op::expand:
      a.dims = to_dims(arg.ptr(), "shape", "is too large");
      break;
    case Op::sum_to_shape:
      break;
    case Op::repeat:
    case Op::repeat_backward:
      a.counts = to_counts(arg.ptr(), &a.scalar);
      a.axis = py::none();
      if (!axis.is_none()) a.axis = to_index(axis.ptr(), "axis", &a.axis_value);
      if (!output_size.is_none()) {
        to_index(output_size.ptr(), "output_size", &a.output_size);
        a.has_output_size = true;
      }
      break;
  }
  return a;
}

// repeat's axis for an input of `ndim` axes (repeat_backward's: of in_shape): numpy.AxisError (a
// ValueError and an IndexError) naming it and ndim when out of range. A 0-d input is read as 1-d,
// as numpy.repeat reads it: axis 0 or -1 repeats its one element (std::nullopt: the flattened input).
std::optional<int> resolve_axis(const OpArgs& a, int ndim) {
  if ((a.op != Op::repeat && a.op != Op::repeat_backward) || a.axis.is_none()) return std::nullopt;
  const int n = ndim == 0 ? 1 : ndim;
  if (a.axis_value < -n || a.axis_value >= n) {
    const py::module_ np = py::module_::import("numpy");
    const py::object exceptions = py::getattr(np, "exceptions", py::none());
    const py::object cls = !exceptions.is_none() && py::hasattr(exceptions, "AxisError") ? exceptions.attr("AxisError")
                                                                                      : np.attr("AxisError");
    const py::object error = cls(a.axis, n, std::string("tessera: ") + op_name(a.op));
    PyErr_SetObject(cls.ptr(), error.ptr());
    throw_python();
  }
  if (ndim == 0) return std::nullopt;
  return static_cast<int>(a.axis_value < 0 ? a.axis_value + n : a.axis_value);
}

// output_size (torch.repeat_interleave's): the output's extent along the axis, checked.
void check_output_size(const OpArgs& a, const tessera::Dims& out_shape, std::optional<int> axis) {
  if (!a.has_output_size) return;
  const int k = axis.value_or(0);
  if (out_shape[k] != a.output_size)
    throw py::value_error("tessera: output_size = " + std::to_string(a.output_size) + " but the result has " +
                          std::to_string(out_shape[k]) + " elements " +
                          (axis ? "along axis " + std::to_string(k) : std::string("(the flattened input repeated)")) +
                          ", shape " + shape_str(out_shape));
}

tessera::Plan plan_for(const OpArgs& a, const tessera::Dims& shape, const tessera::Dims& strides,
                       std::size_t itemsize, const tessera::Options& options) {
  switch (a.op) {
    case Op::tile: return tessera::Plan(shape, strides, itemsize, a.dims, options);
    case Op::broadcast_to: return tessera::Plan::broadcast_to(shape, strides, itemsize, a.dims, options);
    case Op::expand: return tessera::Plan::expand(shape, strides, itemsize, a.dims, options);
    case Op::repeat: break;
    default: throw py::value_error(std::string("tessera: '") + op_name(a.op) + "' is a reduction");
  }
  const std::optional<int> axis = resolve_axis(a, shape.size());
  tessera::Plan plan = tessera::Plan::repeat(shape, strides, itemsize, a.repeats(), axis, options);
  check_output_size(a, plan.shape(), axis);
  return plan;
}

// The output shape alone (an input of itemsize 0, or a torch output to allocate).
tessera::Dims shape_for(const OpArgs& a, const tessera::Dims& shape, const tessera::Options& options) {
  switch (a.op) {
    case Op::tile: return tessera::tile_shape(shape, a.dims, options);
    case Op::broadcast_to: return tessera::broadcast_shape(shape, a.dims);
    case Op::expand: return tessera::expand_shape(shape, a.dims);
    case Op::repeat: break;
    default: throw py::value_error(std::string("tessera: '") + op_name(a.op) + "' is a reduction");
  }
  const std::optional<int> axis = resolve_axis(a, shape.size());
  tessera::Dims out = tessera::repeat_shape(shape, a.repeats(), axis);
  check_output_size(a, out, axis);
  return out;
}

// tessera.broadcast_to, expand and repeat for anything but a torch tensor (see __init__.py for
// the contracts), as tile: the arguments first, then A read in place, out= checked before a byte
// is written, new outputs of kFreshMinBytes or more from the allocating C++ call.
py::object family(py::handle op, py::handle A, py::handle arg, py::handle axis, py::handle output_size, py::handle out,
                  py::handle max_threads, py::handle nontemporal) {
  const tessera::Options options = to_options(max_threads.ptr(), nontemporal.ptr(), py::str("error").ptr());
  const OpArgs args = read_args(to_op(op, true), arg, axis, output_size, options);
  py::object holder;
  PyArrayObject* a = as_array(A.ptr(), &holder);
  const py::object descr_ref = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(PyArray_DESCR(a)));
  PyArray_Descr* descr = PyArray_DESCR(a);
  check_copyable(descr, "A");
  const tessera::Dims shape = dims_of(a), strides = strides_of(a);
  const std::size_t itemsize = static_cast<std::size_t>(PyArray_ITEMSIZE(a));
  const char* src = static_cast<const char*>(PyArray_DATA(a));

  if (itemsize == 0) {  // no bytes to move, only a shape to make
    const tessera::Dims oshape = shape_for(args, shape, options);
    check_numpy_output(oshape, 0, 0);
    if (out.is_none()) return new_array(descr, oshape);
    check_out(out.ptr(), descr, oshape, "the result");
    return py::reinterpret_borrow<py::object>(out);
  }

  const tessera::Plan plan = plan_for(args, shape, strides, itemsize, options);
  return write_result(plan, src, shape, strides, itemsize, descr, out);
}

// The output shape of an operation on an input of `shape` (the torch path allocates it).
py::tuple family_shape(py::handle op, py::handle shape, py::handle arg, py::handle axis, py::handle output_size) {
  const tessera::Options options;
  const OpArgs args = read_args(to_op(op, true), arg, axis, output_size, options);
  return to_tuple(shape_for(args, to_dims(shape.ptr(), "A.shape", "is too large"), options));
}

// repeat's counts as a plain Python value: an int (one count) or an int64 ndarray.
py::object counts_value(const OpArgs& a) {
  if (a.scalar) return py::int_(a.counts[0]);
  npy_intp n = static_cast<npy_intp>(a.counts.size());
  PyObject* arr = PyArray_SimpleNew(1, &n, NPY_INT64);
  if (arr == nullptr) throw_python();
  py::object value = py::reinterpret_steal<py::object>(arr);
  if (n > 0) std::memcpy(PyArray_DATA(reinterpret_cast<PyArrayObject*>(arr)), a.counts.data(), a.counts.size() * 8);
  return value;
}

// An operation's argument, axis and output_size read once, as plain Python values that run no
// code when read again (the torch path reads them once more after the tensors' pointers): a tuple
// of ints (a shape), an int or an int64 ndarray (repeat's counts), an int or None. The options
// are checked too (first, as the numpy path checks them), before the torch output is allocated.
py::tuple canonical_args(py::handle op, py::handle arg, py::handle axis, py::handle output_size,
                         py::handle max_threads, py::handle nontemporal) {
  const tessera::Options options = to_options(max_threads.ptr(), nontemporal.ptr(), py::str("error").ptr());
  const OpArgs a = read_args(to_op(op, true), arg, axis, output_size, options);
  const py::object value = a.op != Op::repeat ? py::object(to_tuple(a.dims)) : counts_value(a);
  return py::make_tuple(value, a.axis ? a.axis : py::none(),
                        a.has_output_size ? py::object(py::int_(a.output_size)) : py::object(py::none()));
}

// ---------------------------------------------------------------------------------------------
// DLPack (torch tensors)

struct DLView {
  const char* data;
  tessera::Dims shape, strides;  // strides in bytes
  std::size_t itemsize;
  DLDataType dtype;
};

DLView dl_view(py::handle capsule, const char* what) {
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (m == nullptr) throw_python();
  const DLTensor& t = m->dl_tensor;
  if (t.device.device_type != kDLCPU)
    throw py::value_error(std::string("tessera: ") + what + " is on DLPack device type " +
                          std::to_string(t.device.device_type) + "; tessera works on CPU memory only");
  const uint64_t bits = uint64_t{t.dtype.bits} * t.dtype.lanes;
  if (bits == 0 || bits % 8 != 0)
    throw py::value_error(std::string("tessera: ") + what + " has elements of " + std::to_string(bits) +
                          " bits, not a whole number of bytes");
  if (t.ndim < 0 || t.ndim > tessera::max_ndim)
    throw py::value_error(std::string("tessera: ") + what + " has " + std::to_string(t.ndim) + " axes");
  DLView v{static_cast<const char*>(t.data) + t.byte_offset, tessera::Dims(t.shape, static_cast<std::size_t>(t.ndim)),
           {}, static_cast<std::size_t>(bits / 8), t.dtype};
  int64_t s[tessera::max_ndim];
  int64_t next = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    const int64_t elems = t.strides ? t.strides[i] : next;
    next *= t.shape[i];
    s[i] = elems * static_cast<int64_t>(v.itemsize);  // tensors that exist have byte strides that fit
  }
  v.strides = tessera::Dims(s, static_cast<std::size_t>(t.ndim));
  return v;
}

// Runs `plan` from the tensor s into the tensor d, after checking d against it in bytes: A's
// DLPack dtype, the plan's shape, C-contiguous.
void execute_dlpack(const tessera::Plan& plan, const DLView& s, const DLView& d) {
  if (s.dtype.code != d.dtype.code || s.dtype.bits != d.dtype.bits || s.dtype.lanes != d.dtype.lanes)
    throw py::value_error("tessera: out's DLPack dtype differs from A's");
  if (d.shape != plan.shape())
    throw py::value_error("tessera: out has shape " + shape_str(d.shape) + " but the result has shape " +
                          shape_str(plan.shape()));
  int64_t expect = static_cast<int64_t>(s.itemsize);
  for (int i = d.shape.size() - 1; i >= 0 && plan.size() > 0; --i) {  // an empty out has no layout
    if (d.shape[i] != 1 && d.strides[i] != expect) throw py::value_error("tessera: out is not C-contiguous");
    expect *= d.shape[i];
  }
  execute_into(plan, s.data, span_of(s.data, s.shape, s.strides, s.itemsize), const_cast<char*>(d.data));
}

// tessera.tile for torch tensors: src and dst are DLPack capsules of the input and of an output
// the caller allocated (torch.empty of tile_shape, or the user's out=, checked by __init__.py for
// device, dtype, shape and contiguity; checked here again in bytes).
void tile_dlpack(py::handle src_capsule, py::handle reps, py::handle dst_capsule, py::handle max_threads,
                 py::handle nontemporal, py::handle negative_reps) {
  // Options and reps first (__init__.py passes reps as a tuple of ints and max_threads as an int:
  // no Python code runs after the capsules' pointers are read).
  const tessera::Options options = to_options(max_threads.ptr(), nontemporal.ptr(), negative_reps.ptr());
  const tessera::Dims r = to_reps(reps.ptr(), options);
  const DLView s = dl_view(src_capsule, "A");
  const DLView d = dl_view(dst_capsule, "out");
  execute_dlpack(tessera::Plan(s.shape, s.strides, s.itemsize, r, options), s, d);
}

// tessera.broadcast_to, expand and repeat for torch tensors, as tile_dlpack (__init__.py passes
// the arguments as canonical_args made them: no Python code runs after the capsules are read).
void family_dlpack(py::handle op, py::handle src_capsule, py::handle arg, py::handle axis, py::handle output_size,
                   py::handle dst_capsule, py::handle max_threads, py::handle nontemporal) {
  const tessera::Options options = to_options(max_threads.ptr(), nontemporal.ptr(), py::str("error").ptr());
  const OpArgs args = read_args(to_op(op, true), arg, axis, output_size, options);
  const DLView s = dl_view(src_capsule, "A");
  const DLView d = dl_view(dst_capsule, "out");
  execute_dlpack(plan_for(args, s.shape, s.strides, s.itemsize, options), s, d);
}

// ---------------------------------------------------------------------------------------------
// The reductions: tile_backward, sum_to_shape, repeat_backward (the family's gradients). They add,
// so they take tessera's element type (tessera::DType), mapped from numpy's dtype or DLPack's; an
// element type they cannot sum (bool, object, datetime, float128, non-native byte order, ...) is
// a TypeError naming it. Under accumulate they add into out=, which must then be given.

constexpr const char* kSummable =
    "float16, float32, float64, complex64, complex128, int8, int16, int32, int64, uint8, uint16, uint32, uint64 "
    "and torch.bfloat16";

// What the reduction reads: grad_out, or sum_to_shape's A.
const char* input_name(Op op) { return op == Op::sum_to_shape ? "A" : "grad_out"; }

[[noreturn]] void not_summable(Op op, const std::string& dtype, const std::string& why = "") {
  throw py::type_error(std::string("tessera: ") + op_name(op) + ": " + input_name(op) + " has dtype " + dtype +
                       ", which tessera cannot sum" + why + " (the reductions take " + kSummable + ")");
}

tessera::DType dtype_of(PyArray_Descr* d, Op op) {
  if (!PyDataType_ISNOTSWAPPED(d))
    not_summable(op, repr(reinterpret_cast<PyObject*>(d)),
                 ": its bytes are in non-native order (convert it first: A.astype(A.dtype.newbyteorder('=')))");
  const auto size = PyDataType_ELSIZE(d);
  if (!PyDataType_HASFIELDS(d) && !PyDataType_HASSUBARRAY(d)) {
    switch (d->kind) {
      case 'f':
        if (size == 2) return tessera::DType::float16;
        if (size == 4) return tessera::DType::float32;
        if (size == 8) return tessera::DType::float64;
        break;
      case 'c':
        if (size == 8) return tessera::DType::complex64;
        if (size == 16) return tessera::DType::complex128;
        break;
      case 'i':
      case 'u': {
        const bool u = d->kind == 'u';
        if (size == 1) return u ? tessera::DType::uint8 : tessera::DType::int8;
        if (size == 2) return u ? tessera::DType::uint16 : tessera::DType::int16;
        if (size == 4) return u ? tessera::DType::uint32 : tessera::DType::int32;
        if (size == 8) return u ? tessera::DType::uint64 : tessera::DType::int64;
        break;
      }
      default:
        break;
    }
  }
  not_summable(op, repr(reinterpret_cast<PyObject*>(d)));
}

tessera::DType dtype_of(DLDataType t, Op op) {
  if (t.lanes == 1) {
    switch (t.code) {
      case kDLFloat:
        if (t.bits == 16) return tessera::DType::float16;
        if (t.bits == 32) return tessera::DType::float32;
        if (t.bits == 64) return tessera::DType::float64;
        break;
      case kDLBfloat:
        if (t.bits == 16) return tessera::DType::bfloat16;
        break;
      case kDLComplex:
        if (t.bits == 64) return tessera::DType::complex64;
        if (t.bits == 128) return tessera::DType::complex128;
        break;
      case kDLInt:
      case kDLUInt: {
        const bool u = t.code == kDLUInt;
        if (t.bits == 8) return u ? tessera::DType::uint8 : tessera::DType::int8;
        if (t.bits == 16) return u ? tessera::DType::uint16 : tessera::DType::int16;
        if (t.bits == 32) return u ? tessera::DType::uint32 : tessera::DType::int32;
        if (t.bits == 64) return u ? tessera::DType::uint64 : tessera::DType::int64;
        break;
      }
      default:
        break;
    }
  }
  not_summable(op, "DLPack (code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " +
                       std::to_string(t.lanes) + ")");
}

// A torch dtype as __init__.py names it (str(tensor.dtype): "torch.float32", "torch.bool", ...).
tessera::DType dtype_named(const std::string& name, Op op) {
  const std::string bare = name.rfind("torch.", 0) == 0 ? name.substr(6) : name;
  for (int v = TESSERA_FLOAT32; v <= TESSERA_UINT64; ++v)
    if (bare == tessera::dtype_name(static_cast<tessera::DType>(v))) return static_cast<tessera::DType>(v);
  not_summable(op, name);
}

// The options of a reduction: tile's (negative_reps is tile_backward's; the others pass "error")
// and accumulate (True or False), which needs an output to add into.
tessera::Options reduce_options(Op op, py::handle max_threads, py::handle nontemporal, py::handle negative_reps,
                                py::handle accumulate, bool has_out) {
  tessera::Options o = to_options(max_threads.ptr(), nontemporal.ptr(), negative_reps.ptr());
  if (accumulate.ptr() == Py_True) {
    o.accumulate = true;
  } else if (accumulate.ptr() != Py_False) {
    throw py::type_error("tessera: accumulate = " + repr(accumulate.ptr()) + " (" + type_name(accumulate.ptr()) +
                         "); give True (add into out) or False");
  }
  if (o.accumulate && !has_out)
    throw py::value_error(std::string("tessera: ") + op_name(op) +
                          ": accumulate=True adds the result into out, and no out was given (pass out=, or "
                          "accumulate=False for a new array)");
  return o;
}

// A reduction's arguments, read once: the result's shape (in_shape, or sum_to_shape's shape)
// first, then tile_backward's reps or repeat_backward's counts and axis.
OpArgs read_reduce_args(Op op, py::handle shape, py::handle arg, py::handle axis, const tessera::Options& options) {
  const tessera::Dims result = to_dims(shape.ptr(), op == Op::sum_to_shape ? "shape" : "in_shape", "is too large");
  OpArgs a = read_args(op, arg, axis, py::none(), options);
  a.result = result;
  return a;
}

tessera::Plan reduce_plan(const OpArgs& a, const tessera::Dims& shape, const tessera::Dims& strides,
                          tessera::DType dtype, const tessera::Options& options) {
  switch (a.op) {
    case Op::tile_backward: return tessera::Plan::tile_backward(shape, strides, dtype, a.result, a.dims, options);
    case Op::sum_to_shape: return tessera::Plan::sum_to_shape(shape, strides, dtype, a.result, options);
    case Op::repeat_backward:
      return tessera::Plan::repeat_backward(shape, strides, dtype, a.result, a.repeats(),
                                            resolve_axis(a, a.result.size()), options);
    default: throw py::value_error(std::string("tessera: '") + op_name(a.op) + "' is not a reduction");
  }
}

// tessera.tile_backward, sum_to_shape and repeat_backward for anything but a torch tensor (see
// __init__.py for the contracts), as family: the options and arguments first, then A read in
// place (any strides), its dtype mapped to tessera's, out= checked before a byte is written (and
// added into under accumulate), new results of kFreshMinBytes or more from the allocating C++ call.
py::object reduce(py::handle op, py::handle A, py::handle shape, py::handle arg, py::handle axis, py::handle out,
                  py::handle max_threads, py::handle nontemporal, py::handle negative_reps, py::handle accumulate) {
  const Op o = to_op(op, false);
  const tessera::Options options =
      reduce_options(o, max_threads, nontemporal, negative_reps, accumulate, !out.is_none());
  const OpArgs args = read_reduce_args(o, shape, arg, axis, options);
  py::object holder;
  PyArrayObject* a = as_array(A.ptr(), &holder);
  const py::object descr_ref = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(PyArray_DESCR(a)));
  PyArray_Descr* descr = PyArray_DESCR(a);
  const tessera::DType dtype = dtype_of(descr, o);
  const tessera::Dims gshape = dims_of(a), gstrides = strides_of(a);
  const char* src = static_cast<const char*>(PyArray_DATA(a));
  const tessera::Plan plan = reduce_plan(args, gshape, gstrides, dtype, options);
  return write_result(plan, src, gshape, gstrides, plan.itemsize(), descr, out);
}

// The torch path's first step: a reduction's options checked (accumulate needs out), its arguments
// read once as plain Python values (as canonical_args), and the whole call planned for a
// C-contiguous gradient of `grad_shape` and the tensor's dtype (`dtype`: its name, e.g.
// "torch.float32"), so that every error is raised before the torch output is allocated.
// Returns (result shape, reps / counts / None, axis, the output's shape).
py::tuple reduce_prepare(py::handle op, py::handle grad_shape, py::handle dtype, py::handle shape, py::handle arg,
                         py::handle axis, py::handle max_threads, py::handle nontemporal, py::handle negative_reps,
                         py::handle accumulate, bool has_out) {
  const Op o = to_op(op, false);
  const tessera::Options options = reduce_options(o, max_threads, nontemporal, negative_reps, accumulate, has_out);
  const OpArgs a = read_reduce_args(o, shape, arg, axis, options);
  const tessera::DType dt = dtype_named(py::cast<std::string>(py::str(dtype)), o);
  const tessera::Plan plan = reduce_plan(a, to_dims(grad_shape.ptr(), "the gradient's shape", "is too large"),
                                         tessera::Dims(), dt, options);
  py::object value = py::none();
  if (o == Op::tile_backward) value = to_tuple(a.dims);
  if (o == Op::repeat_backward) value = counts_value(a);
  return py::make_tuple(to_tuple(a.result), value, a.axis ? a.axis : py::none(), to_tuple(plan.shape()));
}

// The reductions for torch tensors: src and dst are DLPack capsules of the gradient and of the
// output (torch.empty of the result's shape, or the user's out=, checked by __init__.py and again
// here in bytes); the arguments as reduce_prepare returned them (no Python code runs after the
// capsules' pointers are read).
void reduce_dlpack(py::handle op, py::handle src_capsule, py::handle shape, py::handle arg, py::handle axis,
                   py::handle dst_capsule, py::handle max_threads, py::handle nontemporal, py::handle negative_reps,
                   py::handle accumulate) {
  const Op o = to_op(op, false);
  const tessera::Options options = reduce_options(o, max_threads, nontemporal, negative_reps, accumulate, true);
  const OpArgs args = read_reduce_args(o, shape, arg, axis, options);
  const DLView s = dl_view(src_capsule, input_name(o));
  const DLView d = dl_view(dst_capsule, "out");
  execute_dlpack(reduce_plan(args, s.shape, s.strides, dtype_of(s.dtype, o), options), s, d);
}

// ---------------------------------------------------------------------------------------------
// tessera.Plan

class PyPlan {
 public:
  // Plans `op` ("tile", "broadcast_to", "expand", "repeat") on an input of `shape`, `dtype` and
  // byte `strides` (None: C-contiguous); `arg` is tile's reps, broadcast_to's or expand's target
  // shape, or repeat's counts; `axis` is repeat's (None otherwise).
  PyPlan(py::handle op, py::handle shape, py::handle arg, py::handle dtype, py::handle strides, py::handle axis,
         py::handle max_threads, py::handle nontemporal, py::handle negative_reps) {
    const tessera::Options options = to_options(max_threads.ptr(), nontemporal.ptr(), negative_reps.ptr());
    op_ = to_op(op, true);
    PyArray_Descr* descr = read_dtype(dtype);
    if (PyDataType_HASSUBARRAY(descr))
      throw py::type_error("tessera: dtype " + repr(dtype_.ptr()) +
                           " is a subarray dtype; plan for its base dtype with the subarray's axes in the shape");
    check_copyable(descr, "the dtype");
    if (PyDataType_ELSIZE(descr) == 0)
      throw py::value_error("tessera: dtype " + repr(dtype_.ptr()) + " has itemsize 0: there is nothing to plan");
    read_layout(shape, strides);
    const OpArgs args = read_args(op_, arg, axis, py::none(), options);
    plan_ = plan_for(args, shape_, strides.is_none() ? tessera::Dims() : strides_,
                     static_cast<std::size_t>(PyDataType_ELSIZE(descr)), options);
    check_numpy_output(plan_.shape(), plan_.nbytes(), plan_.itemsize());
  }

  // Plans the reduction `op` ("tile_backward", "sum_to_shape", "repeat_backward") of a gradient of
  // `shape`, `dtype` and byte `strides` (None: C-contiguous) to `result` (in_shape, or
  // sum_to_shape's shape); `arg` is tile_backward's reps or repeat_backward's counts, `axis`
  // repeat_backward's (None otherwise).
  PyPlan(py::handle op, py::handle shape, py::handle result, py::handle arg, py::handle dtype, py::handle strides,
         py::handle axis, py::handle max_threads, py::handle nontemporal, py::handle negative_reps,
         py::handle accumulate) {
    op_ = to_op(op, false);
    const tessera::Options options = reduce_options(op_, max_threads, nontemporal, negative_reps, accumulate, true);
    const tessera::DType dt = dtype_of(read_dtype(dtype), op_);
    read_layout(shape, strides);
    const OpArgs args = read_reduce_args(op_, result, arg, axis, options);
    plan_ = reduce_plan(args, shape_, strides.is_none() ? tessera::Dims() : strides_, dt, options);
    check_numpy_output(plan_.shape(), plan_.nbytes(), plan_.itemsize());
  }

  py::object call(py::handle A, py::handle out) const {
    if (plan_.options().accumulate && out.is_none())
      throw py::value_error(std::string("tessera: this ") + op_name(op_) +
                            " plan accumulates (accumulate=True): call it with out=, the array to add into");
    PyArrayObject* a = check_input(A);
    const char* src = static_cast<const char*>(PyArray_DATA(a));
    if (!out.is_none()) {
      PyArrayObject* o = check_out(out.ptr(), descr(), plan_.shape(), "the plan's output");
      execute_into(plan_, src, span_of(src, shape_, strides_of(a), plan_.itemsize()),
                   static_cast<char*>(PyArray_DATA(o)));
      return py::reinterpret_borrow<py::object>(out);
    }
    py::object result = new_array(descr(), plan_.shape());
    execute_into(plan_, src, ByteSpan{}, static_cast<char*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(result.ptr()))));
    return result;
  }

  py::object execute_region(py::handle A, py::handle start, py::handle extent, py::handle out) const {
    if (plan_.is_reduction())
      throw py::value_error(std::string("tessera: a ") + op_name(op_) +
                            " plan has no regions: each output element sums many input elements; call the plan");
    const tessera::Dims st = to_dims(start.ptr(), "start", "is past the output"),
                        ex = to_dims(extent.ptr(), "extent", "is past the output");
    PyArrayObject* a = check_input(A);  // after start and extent, whose __index__ may run Python code
    const std::size_t itemsize = plan_.itemsize();
    // Validate the region (tessera's checks, naming the axis) before anything is allocated: a
    // zero-byte dry run against a null dst reports a bad start or extent first.
    bool ok = st.size() == plan_.ndim() && ex.size() == plan_.ndim(), empty = false;
    for (int i = 0; ok && i < ex.size(); ++i) {
      ok = ex[i] >= 0 && st[i] >= 0 && st[i] <= plan_.shape()[i] - ex[i];
      empty = empty || ex[i] == 0;
    }
    if (!ok) plan_.execute_region(PyArray_DATA(a), st, ex, nullptr, 0);  // throws InvalidArgument naming the axis
    int64_t count = empty ? 0 : 1;  // a non-empty region lies inside the output: its count fits int64
    for (int i = 0; i < ex.size() && !empty; ++i) count *= ex[i];
    const std::size_t nbytes = static_cast<std::size_t>(count) * itemsize;
    const char* src = static_cast<const char*>(PyArray_DATA(a));
    py::object result;
    char* dst;
    if (out.is_none() && nbytes >= kFreshMinBytes) {
      // tessera's allocator: huge pages, and the blocks of chunks already freed (a Dask worker
      // making chunk after chunk reuses their pages instead of faulting in new ones).
      tessera::Array region;
      try {
        py::gil_scoped_release release;
        region = plan_.execute_region(src, st, ex);
      } catch (const std::bad_alloc&) {
        PyErr_Format(PyExc_MemoryError, "tessera: cannot allocate %zu bytes for a region of shape %s", nbytes,
                     shape_str(ex).c_str());
        throw_python();
      }
      return adopt(std::move(region), descr());
    }
    if (out.is_none()) {
      result = new_array(descr(), ex);
      dst = static_cast<char*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(result.ptr())));
    } else {
      PyArrayObject* o = check_out(out.ptr(), descr(), ex, "the region");
      result = py::reinterpret_borrow<py::object>(out);
      dst = static_cast<char*>(PyArray_DATA(o));
    }
    write_into(span_of(src, shape_, strides_of(a), itemsize), dst, nbytes, true,
               [&](char* to) { plan_.execute_region(src, st, ex, to, nbytes); });
    return result;
  }

  py::tuple out_shape() const { return to_tuple(plan_.shape()); }
  py::tuple shape() const { return to_tuple(shape_); }
  py::tuple strides() const { return to_tuple(strides_); }
  py::object dtype() const { return dtype_; }
  int ndim() const { return plan_.ndim(); }
  std::size_t nbytes() const { return plan_.nbytes(); }
  std::size_t itemsize() const { return plan_.itemsize(); }
  std::string kernel_path() const { return plan_.kernel_path(); }
  std::string describe() const { return plan_.describe(); }
  std::string operation() const { return op_name(op_); }
  bool accumulate() const { return plan_.options().accumulate; }

  std::string repr_str() const {
    const std::string kind = op_ == Op::tile ? "" : std::string(".") + op_name(op_);
    return "tessera.Plan" + kind + "(shape=" + shape_str(shape_) + ", dtype=" + repr(dtype_.ptr()) + ", out_shape=" +
           shape_str(plan_.shape()) + ", kernel_path='" + plan_.kernel_path() + "')";
  }

 private:
  PyArray_Descr* descr() const { return reinterpret_cast<PyArray_Descr*>(dtype_.ptr()); }

  // The planned dtype (anything numpy.dtype takes), kept in dtype_.
  PyArray_Descr* read_dtype(py::handle dtype) {
    PyArray_Descr* d = nullptr;
    if (!PyArray_DescrConverter(dtype.ptr(), &d)) throw_python();
    dtype_ = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(d));
    return d;
  }

  // The planned input's shape and byte strides (None: C-contiguous for the dtype), into shape_ and strides_.
  void read_layout(py::handle shape, py::handle strides) {
    shape_ = to_dims(shape.ptr(), "shape", "is too large");
    if (strides.is_none()) {
      int64_t s[tessera::max_ndim];
      int64_t next = PyDataType_ELSIZE(descr());
      for (int i = shape_.size() - 1; i >= 0; --i) {
        s[i] = next;
        next = shape_[i] > 0 && next <= INT64_MAX / shape_[i] ? next * shape_[i] : next;
      }
      strides_ = tessera::Dims(s, static_cast<std::size_t>(shape_.size()));
    } else {
      strides_ = to_dims(strides.ptr(), "strides", "is too large");
    }
  }

  // A must be an ndarray of the planned shape and dtype with the planned byte strides (on every
  // axis of extent > 1: the others are never stepped along).
  PyArrayObject* check_input(py::handle A) const {
    if (!PyArray_Check(A.ptr()))
      throw py::type_error("tessera: a Plan runs on a numpy.ndarray, got " + type_name(A.ptr()));
    auto* a = reinterpret_cast<PyArrayObject*>(A.ptr());
    const tessera::Dims shape = dims_of(a), strides = strides_of(a);
    if (shape != shape_)
      throw py::value_error("tessera: A has shape " + shape_str(shape) + " but the plan was made for shape " +
                            shape_str(shape_));
    if (!PyArray_EquivTypes(PyArray_DESCR(a), descr()))
      throw py::value_error("tessera: A has dtype " + repr(reinterpret_cast<PyObject*>(PyArray_DESCR(a))) +
                            " but the plan was made for dtype " + repr(dtype_.ptr()));
    bool empty = false;
    for (int i = 0; i < shape.size(); ++i) empty = empty || shape[i] == 0;
    for (int i = 0; i < shape.size() && !empty; ++i)
      if (shape[i] > 1 && strides[i] != strides_[i])
        throw py::value_error("tessera: A has strides " + shape_str(strides) + " but the plan was made for strides " +
                              shape_str(strides_) + " (bytes; they differ on axis " + std::to_string(i) + ")");
    return a;
  }

  Op op_ = Op::tile;
  tessera::Plan plan_{tessera::Dims{}, tessera::Dims{}, 1, tessera::Dims{}};
  tessera::Dims shape_, strides_;
  py::object dtype_;
};

// The PyPlan of `self` if its __init__ completed, nullptr if it raised or never ran (an object made
// by Plan.__new__(Plan), or kept by a traceback after a failed constructor); TypeError when self is
// not a Plan at all.
const PyPlan* initialised_plan(py::handle self) {
  const py::detail::type_info* info = py::detail::get_type_info(typeid(PyPlan));
  if (info == nullptr || !PyObject_TypeCheck(self.ptr(), info->type))
    throw py::type_error("tessera: expected a tessera.Plan, got " + type_name(self.ptr()));
  auto* inst = reinterpret_cast<py::detail::instance*>(self.ptr());
  const py::detail::value_and_holder vh = inst->get_value_and_holder(info, false);
  if (!vh || !vh.holder_constructed()) return nullptr;
  return vh.value_ptr<PyPlan>();
}

const PyPlan& plan_of(py::handle self) {
  const PyPlan* p = initialised_plan(self);
  if (p == nullptr)
    throw py::value_error("tessera: this " + type_name(self.ptr()) +
                          " is not initialised (its __init__ raised or never ran); make a new plan with "
                          "tessera.Plan(...) or one of its constructors (Plan.repeat, Plan.tile_backward, ...)");
  return *p;
}

// A PyPlan method as a function of `self` checked by plan_of.
template <typename R, typename... Args>
auto checked(R (PyPlan::*method)(Args...) const) {
  return [method](py::handle self, Args... args) -> R { return (plan_of(self).*method)(args...); };
}

}  // namespace

PYBIND11_MODULE(_tessera, m) {
  if (_import_array() < 0) throw py::error_already_set();
  m.doc() = "tessera's extension module; use the documented functions of the tessera package.";

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tessera::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  m.def("tile", &tile, "See tessera.tile.");
  m.def("tile_shape", &tile_shape, "See tessera.tile_shape.");
  m.def("reps_tuple",
        [](py::handle reps, py::handle negative_reps) {
          return to_tuple(to_reps(reps.ptr(), to_options(Py_None, Py_None, negative_reps.ptr())));
        },
        "reps read once as tessera reads them (int, sequence, iterable, ndarray), as a tuple of ints.");
  m.def("tile_dlpack", &tile_dlpack, "tile between DLPack capsules (tessera.tile for torch tensors).");
  m.def("family", &family, "See tessera.broadcast_to, tessera.expand, tessera.repeat.");
  m.def("family_shape", &family_shape, "The output shape of broadcast_to, expand or repeat.");
  m.def("canonical_args", &canonical_args,
        "An operation's argument, axis and output_size read once, as a shape tuple, an int or int64 ndarray.");
  m.def("family_dlpack", &family_dlpack, "broadcast_to, expand or repeat between DLPack capsules (torch tensors).");
  m.def("reduce", &reduce, "See tessera.tile_backward, tessera.sum_to_shape, tessera.repeat_backward.");
  m.def("reduce_prepare", &reduce_prepare,
        "A reduction's options and arguments checked and read once, and its output shape (the torch path).");
  m.def("reduce_dlpack", &reduce_dlpack, "A reduction between DLPack capsules (torch tensors).");
  m.def("simd_target", [] { return std::string(tessera::active_target()); }, "See tessera.simd_target.");
  m.def("version", [] { return std::string(tessera::version()); }, "The C library's version.");
  m.attr("max_ndim") = tessera::max_ndim;

  // Every method and property goes through plan_of(self), which raises instead of reading a Plan
  // whose __init__ raised or never ran (Plan.__new__(Plan)): pybind11 would hand the method
  // uninitialised memory.
  py::class_<PyPlan>(m, "Plan")
      .def(py::init<py::handle, py::handle, py::handle, py::handle, py::handle, py::handle, py::handle, py::handle,
                    py::handle>())
      .def(py::init<py::handle, py::handle, py::handle, py::handle, py::handle, py::handle, py::handle, py::handle,
                    py::handle, py::handle, py::handle>())
      .def("__call__", checked(&PyPlan::call))
      .def("execute_region", checked(&PyPlan::execute_region))
      .def_property_readonly("out_shape", checked(&PyPlan::out_shape))
      .def_property_readonly("shape", checked(&PyPlan::shape))
      .def_property_readonly("strides", checked(&PyPlan::strides))
      .def_property_readonly("dtype", checked(&PyPlan::dtype))
      .def_property_readonly("ndim", checked(&PyPlan::ndim))
      .def_property_readonly("nbytes", checked(&PyPlan::nbytes))
      .def_property_readonly("itemsize", checked(&PyPlan::itemsize))
      .def_property_readonly("kernel_path", checked(&PyPlan::kernel_path))
      .def("describe", checked(&PyPlan::describe))
      .def_property_readonly("operation", checked(&PyPlan::operation))
      .def_property_readonly("accumulate", checked(&PyPlan::accumulate))
      .def("__repr__", [](py::handle self) {
        const PyPlan* p = initialised_plan(self);
        if (p != nullptr) return p->repr_str();
        return "<" + type_name(self.ptr()) + " object, not initialised (its __init__ raised or never ran)>";
      });
}
