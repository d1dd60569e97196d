// tessera._tessera — the CPython extension behind `import tessera` (lib/python/tessera/__init__.py,
// which holds the documented front end). numpy arrays are read through numpy's C API (shape, byte
// strides, dtype as they are: no copy of the input, whatever its layout or byte order); torch
// tensors arrive as DLPack capsules. Every argument is checked, and the output allocated, before
// tessera writes a byte; the GIL is released while it copies.
//
// The operations (tessera's operation table, exported as `operations`; the Python side passes
// their ids): the replication family (tile, broadcast_to, expand, repeat) and its gradients, the
// reductions (tile_backward, sum_to_shape, repeat_backward), which add, and so take the element
// type too (numpy's or DLPack's dtype mapped to tessera::DType by tessera's dtype table), and may
// add into out=. All seven share the readers, the planning (tessera::Plan::make), the out= checks
// and the writers below: one entry point for numpy arrays (call), two for torch tensors (prepare,
// call_dlpack; DLTensors read by tessera::dlpack_view, lib/dlpack.cpp's translation), and Plan.
//
// Errors: tessera::Error (a bad value, an output too big) -> ValueError; repeat's axis out of
// range -> numpy.exceptions.AxisError; a bad type -> TypeError; an allocation failure -> MemoryError.
// Messages name the bad value.
#define PY_SSIZE_T_CLEAN
#include <pybind11/pybind11.h>

// One build for numpy 1.x and 2.x (numpy's documented way): compiled against numpy 2's headers with
// NPY_TARGET_VERSION at the oldest numpy supported (1.24, Debian 12's), the module imports under
// both; what changed between them is read at run time (numpy_max_ndim). Built against numpy 1.x's
// headers it runs on numpy 1.x only (NPY_TARGET_VERSION is then ignored).
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define NPY_TARGET_VERSION NPY_1_24_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tessera_PyArray_API
#include <numpy/arrayobject.h>
#if NPY_ABI_VERSION < 0x02000000  // numpy 1.x's headers (numpy 2's npy_2_compat.h has it, an inline function)
#define PyDataType_ELSIZE(descr) ((descr)->elsize)
#endif

#include <tessera/tessera.hpp>
#include <tessera/tessera_dlpack.h>

#include <hwy/highway.h>  // HWY_MAJOR, HWY_MINOR, HWY_PATCH; hwy::SupportedTargets (config)
#include <tbb/info.h>
#include <tbb/task_arena.h>
#include <tbb/version.h>

#include <dlfcn.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace {

// Outputs of at least this many bytes are copied with the GIL released (smaller ones take less
// time than handing the GIL over; numpy's own copies draw the same line at 500 elements).
constexpr std::size_t kReleaseGilBytes = std::size_t{16} << 10;
// New outputs of at least this many bytes come from tessera's allocating call (allocator.hpp):
// from 32 MiB (kHugeMinBytes, the C++ API's line) 2 MiB-aligned blocks of transparent huge pages,
// first touched by the executor's threads and kept for reuse when freed; below it malloc's blocks,
// recycled and already mapped as numpy's are, but starting on a 64-byte line. numpy's own start
// 16 bytes into one wherever malloc maps a block afresh (from 128 KiB, until its threshold moves)
// and on any 16-byte boundary inside its heap, and a line's worth of stores then straddles two
// lines: tessera.tile's column of 256 KiB and 1 MiB (a column by 16) wrote at 0.65-0.70x its
// aligned speed into such an output (bench/results/2026-12-07-xeon-f6m167/dst16-in-cache-f12ff69.txt),
// and the sweep's warm column at 256 KiB-1 MiB fell below torch's. Smaller outputs keep numpy's
// allocator: adopting tessera's memory costs a capsule per call, more than a misaligned line there.
constexpr std::size_t kFreshMinBytes = std::size_t{256} << 10;

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
    // An int or a numpy integer: no user-defined __index__ runs (see call_dlpack).
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

// The byte strides of a C-contiguous array of `shape` with elements of `itemsize` bytes (a
// stride that would pass int64 stays at the last one that fits: only an empty array has such a
// shape, and its strides are never stepped along).
tessera::Dims c_strides(const tessera::Dims& shape, std::size_t itemsize) {
  int64_t s[tessera::max_ndim];
  int64_t next = static_cast<int64_t>(itemsize);
  for (int i = shape.size() - 1; i >= 0; --i) {
    s[i] = next;
    next = shape[i] > 0 && next <= INT64_MAX / shape[i] ? next * shape[i] : next;
  }
  return tessera::Dims(s, static_cast<std::size_t>(shape.size()));
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

// The most axes the running numpy's arrays may have: 64 from numpy 2 on, 32 before (NPY_MAXDIMS
// of numpy 2's headers is 64 whatever numpy runs).
int numpy_max_ndim() {
#if NPY_ABI_VERSION >= 0x02000000
  return PyArray_RUNTIME_VERSION >= NPY_2_0_API_VERSION ? NPY_MAXDIMS : NPY_MAXDIMS_LEGACY_ITERS;
#else
  return NPY_MAXDIMS;
#endif
}

// An output shape must be one numpy can hold: at most numpy_max_ndim() axes and a byte size that
// fits Py_ssize_t ("array is too big", as numpy says) — checked before anything is allocated.
void check_numpy_output(const tessera::Dims& shape, std::size_t nbytes, std::size_t itemsize) {
  if (shape.size() > numpy_max_ndim())
    throw py::value_error("tessera: the output would have " + std::to_string(shape.size()) +
                          " axes; numpy arrays have at most " + std::to_string(numpy_max_ndim()));
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

// A planned call's new result (plan.shape(), checked by check_numpy_output): from the allocating
// C++ call (GIL released) for kFreshMinBytes or more, else a numpy array written by execute_into.
py::object new_result(const tessera::Plan& plan, const char* src, PyArray_Descr* descr) {
  if (plan.nbytes() >= kFreshMinBytes) {
    tessera::Array result;
    try {
      py::gil_scoped_release release;
      result = plan.execute(src);  // the plan made once (from 32 MiB re-chosen for fresh pages)
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

// A planned call's result: written into `out` (checked first), or a new one (new_result).
py::object write_result(const tessera::Plan& plan, const char* src, const tessera::Dims& shape,
                        const tessera::Dims& strides, std::size_t itemsize, PyArray_Descr* descr, py::handle out) {
  check_numpy_output(plan.shape(), plan.nbytes(), itemsize);
  if (!out.is_none()) {
    PyArrayObject* o = check_out(out.ptr(), descr, plan.shape(), "the result");
    execute_into(plan, src, span_of(src, shape, strides, itemsize), static_cast<char*>(PyArray_DATA(o)));
    return py::reinterpret_borrow<py::object>(out);
  }
  return new_result(plan, src, descr);
}

// tessera.tile_shape(shape, reps, negative_reps)
py::tuple tile_shape(py::handle shape, py::handle reps, py::handle negative_reps) {
  const tessera::Options options = to_options(Py_None, Py_None, negative_reps.ptr());
  const tessera::Dims s = to_dims(shape.ptr(), "shape", "is too large");
  return to_tuple(tessera::tile_shape(s, to_reps(reps.ptr(), options), options));
}

// ---------------------------------------------------------------------------------------------
// The operations: the replication family (tile, broadcast_to, expand, repeat), which copies, and
// its gradients, the reductions (tile_backward, sum_to_shape, repeat_backward), which add. Every
// entry point below takes the operation as its id (a tessera::Operation; the module exports
// tessera's operation table as `operations`, from which __init__.py, torch.py and dask.py take
// their ids) and goes through the same steps: the options, the arguments (read once, before the
// data), the plan (tessera::Plan::make).

using tessera::ArgKind;
using Op = tessera::Operation;

// The operation's row of tessera's table.
const tessera::OperationInfo& info(Op op) { return tessera::operation_info(op); }
const char* op_name(Op op) { return info(op).name; }
bool is_reduction(Op op) { return info(op).reduction; }

// The operation whose id the Python side passes (a value of tessera::Operation; ValueError naming
// another); checked to be a copying one (is_copy) or a reduction (!is_copy) where only one kind is
// taken.
Op to_op(py::handle id, std::optional<bool> is_copy = std::nullopt) {
  const Op op = static_cast<Op>(py::cast<int>(id));
  if (is_copy && is_reduction(op) == *is_copy)  // info throws for a value that is not an Operation
    throw py::value_error(std::string("tessera: '") + op_name(op) + "' is " +
                          (*is_copy ? "a reduction" : "not a reduction"));
  return op;
}

// The module's `operations`: per row of tessera's table (id, name, argument kind, reduction,
// gradient's id, input's name), in the order of the ids.
py::tuple operations_table() {
  static constexpr const char* kArgNames[] = {"reps", "shape", "repeats"};
  py::tuple t(tessera::operation_count);
  for (int i = 0; i < tessera::operation_count; ++i) {
    const tessera::OperationInfo& o = info(static_cast<Op>(i));
    t[i] = py::make_tuple(static_cast<int>(o.op), o.name, kArgNames[static_cast<int>(o.arg)], o.reduction,
                          static_cast<int>(o.gradient), o.input);
  }
  return t;
}

constexpr const char* kCountTooBig = "is too large: the output would not fit in memory (array is too big)";

// An operation's arguments, read once, before A (reading them may run Python code: __index__,
// __iter__): tile's reps, broadcast_to's and expand's target shape, repeat's counts, axis and
// output_size; the reductions' in_shape (tile_backward, repeat_backward), tile_backward's reps,
// sum_to_shape's shape, repeat_backward's counts and axis.
struct OpArgs {
  Op op = Op::tile;
  tessera::Dims dims;           // ArgKind::reps: the reps; ArgKind::shape: the target shape
  tessera::Dims in_shape;       // tile_backward, repeat_backward: the forward input's shape (the result's)
  std::vector<int64_t> counts;  // ArgKind::repeats: one count (for every element), or one per element
  bool scalar = true;           // ArgKind::repeats: the counts were one integer, not a sequence
  // ArgKind::repeats given as a 1-d int32 or int64 ndarray (native byte order, aligned): the counts
  // read in place through `view` (no copy, no conversion), `counts_array` keeping the array alive;
  // `counts` is then empty.
  py::object counts_array;
  tessera::Repeats view = int64_t{0};
  py::object axis;              // ArgKind::repeats: None, or the axis as a Python int (named by AxisError)
  int64_t axis_value = 0;       // its value (INT64_MIN / INT64_MAX beyond int64: out of range)
  bool has_output_size = false;
  int64_t output_size = 0;

  tessera::Repeats repeats() const {
    return counts_array ? view : tessera::Repeats(counts.data(), counts.size());
  }
};

// A reduction whose argument is not its result's shape (tile_backward, repeat_backward) also
// takes in_shape, the forward input's shape.
bool takes_in_shape(Op op) { return info(op).in_shape; }

// repeat's counts as numpy.repeat reads them: an integer (numpy integers and bools included); a
// 1-d int32 or int64 ndarray (native byte order, aligned, any stride: a torch tensor's numpy view
// too) read in place by the planner through *view, *array keeping it alive (no copy, no cast;
// the planner names a negative count); another integer or bool ndarray of at most 1 axis (read
// through numpy's cast to int64, uint64 values checked); any other sequence or iterable of integers, copied into a tuple first (so an item's
// __index__ cannot change what is read). Non-integers are a TypeError naming the first one
// (numpy 1.24 truncates floats; tessera, as for reps, does not guess).
std::vector<int64_t> to_counts(PyObject* obj, bool* scalar, py::object* array, tessera::Repeats* view) {
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
    const int isz = static_cast<int>(PyArray_ITEMSIZE(arr));
    if (kind == 'i' && (isz == 4 || isz == 8) && PyArray_NDIM(arr) == 1 && PyArray_ISALIGNED(arr) &&
        PyArray_ISNOTSWAPPED(arr)) {  // read in place by the planner (which names a negative count)
      const auto n = static_cast<std::size_t>(PyArray_DIM(arr, 0));
      const std::ptrdiff_t stride = PyArray_STRIDE(arr, 0);
      *view = isz == 4 ? tessera::Repeats(static_cast<const int32_t*>(PyArray_DATA(arr)), n, stride)
                       : tessera::Repeats(static_cast<const int64_t*>(PyArray_DATA(arr)), n, stride);
      *array = py::reinterpret_borrow<py::object>(obj);
      return v;
    }
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

// The arguments of `op`, in this order: in_shape (the reductions that take it), `arg` as its kind
// says, then repeat's axis and output_size (None where the operation has none).
OpArgs read_args(Op op, py::handle in_shape, py::handle arg, py::handle axis, py::handle output_size,
                 const tessera::Options& options) {
  OpArgs a;
  a.op = op;
  if (takes_in_shape(op)) a.in_shape = to_dims(in_shape.ptr(), "in_shape", "is too large");
  switch (info(op).arg) {
    case ArgKind::reps:
      a.dims = to_reps(arg.ptr(), options);
      break;
    case ArgKind::shape:
      a.dims = to_dims(arg.ptr(), "shape", "is too large");
      break;
    case ArgKind::repeats:
      a.counts = to_counts(arg.ptr(), &a.scalar, &a.counts_array, &a.view);
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

// repeat's axis for an input of `ndim` axes (repeat_backward's: of in_shape): numpy.exceptions.AxisError (a
// ValueError and an IndexError) naming it and ndim when out of range. A 0-d input is read as 1-d,
// as numpy.repeat reads it: axis 0 or -1 repeats its one element (std::nullopt: the flattened input).
std::optional<int> resolve_axis(const OpArgs& a, int ndim) {
  if (info(a.op).arg != ArgKind::repeats || a.axis.is_none()) return std::nullopt;
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

constexpr const char* kSummable =
    "float16, float32, float64, complex64, complex128, int8, int16, int32, int64, uint8, uint16, uint32, uint64 "
    "and torch.bfloat16";

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

// The options of `op`: max_threads, nontemporal and negative_reps (the operations without reps
// are passed "error"); a reduction's also accumulate, which needs an output to add into.
tessera::Options read_options(Op op, py::handle max_threads, py::handle nontemporal, py::handle negative_reps,
                              py::handle accumulate, bool has_out) {
  if (is_reduction(op)) return reduce_options(op, max_threads, nontemporal, negative_reps, accumulate, has_out);
  return to_options(max_threads.ptr(), nontemporal.ptr(), negative_reps.ptr());
}

// The arguments as tessera::Arguments, repeat's axis resolved (numpy.exceptions.AxisError when out of range)
// for an input of `shape` (repeat_backward: of in_shape); `dtype` is a reduction's element type.
tessera::Arguments arguments(const OpArgs& a, const tessera::Dims& shape, std::optional<tessera::DType> dtype) {
  tessera::Arguments args;
  args.dims = a.dims;
  if (info(a.op).arg == ArgKind::repeats) {
    args.repeats = a.repeats();
    args.axis = resolve_axis(a, takes_in_shape(a.op) ? a.in_shape.size() : shape.size());
  }
  args.in_shape = a.in_shape;
  args.dtype = dtype;
  return args;
}

// The plan of `a` on an input of `shape` and byte `strides` (empty: C-contiguous): a copy of
// elements of `itemsize` bytes, or a reduction of elements of `dtype` (of that itemsize).
//
// The thread's last plan is kept with what it was made from (plans are immutable and shared): a call
// with the same operation, shape, strides, itemsize, dtype, arguments and options (a loop of small
// calls) takes it instead of planning again. Not kept: per-element repeat counts (their values are
// not compared).
struct LastPlan {
  bool valid = false;
  Op op = Op::tile;
  tessera::Dims shape, strides, dims, in_shape;
  std::size_t itemsize = 0;
  std::optional<tessera::DType> dtype;
  int64_t count = 0;
  std::optional<int> axis;
  tessera::Options options;
  std::optional<tessera::Plan> plan;

  bool matches(const OpArgs& a, const tessera::Arguments& args, const tessera::Dims& sh, const tessera::Dims& st,
               std::size_t isz, std::optional<tessera::DType> dt, const tessera::Options& o) const {
    return valid && op == a.op && itemsize == isz && dtype == dt && args.repeats.size() == 1 &&
           args.repeats.bytes() != nullptr &&
           args.repeats.at(0) == count && axis == args.axis && shape == sh && strides == st && dims == a.dims &&
           in_shape == a.in_shape && options.nontemporal == o.nontemporal && options.max_threads == o.max_threads &&
           options.negative_reps == o.negative_reps && options.accumulate == o.accumulate;
  }
};

// The calling thread's LastPlan, looked up once a call: GCC 12 (-fPIC) computed a thread_local's
// address again (a call of __tls_get_addr) after the calls its function made, from 21 places in
// plan_for when it held LastPlan itself (as libtessera's one-shot slot, lib/api.cpp).
[[gnu::noinline]] LastPlan& this_thread_last_plan() {
  thread_local LastPlan last;
  return last;
}

tessera::Plan plan_for(const OpArgs& a, const tessera::Dims& shape, const tessera::Dims& strides,
                       std::size_t itemsize, std::optional<tessera::DType> dtype, const tessera::Options& options) {
  LastPlan& last = this_thread_last_plan();
  const tessera::Arguments args = arguments(a, shape, dtype);
  if (last.matches(a, args, shape, strides, itemsize, dtype, options)) {
    check_output_size(a, last.plan->shape(), args.axis);
    return *last.plan;
  }
  tessera::Plan plan = tessera::Plan::make(a.op, shape, strides, itemsize, args, options);
  check_output_size(a, plan.shape(), args.axis);
  if (args.repeats.size() == 1 && args.repeats.bytes() != nullptr) {
    last.valid = false;
    last.plan = plan;
    last.op = a.op;
    last.shape = shape;
    last.strides = strides;
    last.dims = a.dims;
    last.in_shape = a.in_shape;
    last.itemsize = itemsize;
    last.dtype = dtype;
    last.count = args.repeats.at(0);
    last.axis = args.axis;
    last.options = options;
    last.valid = true;
  }
  return plan;
}

// A copy's output shape alone (an input of itemsize 0, or a torch output to allocate).
tessera::Dims shape_for(const OpArgs& a, const tessera::Dims& shape, const tessera::Options& options) {
  const tessera::Arguments args = arguments(a, shape, std::nullopt);
  tessera::Dims out = tessera::output_shape(a.op, shape, args, options);
  check_output_size(a, out, args.axis);
  return out;
}

// What a reduction reads: grad_out (tile_backward, repeat_backward), or A.
const char* input_name(Op op) { return info(op).input; }

[[noreturn]] void not_summable(Op op, const std::string& dtype, const std::string& why = "") {
  throw py::type_error(std::string("tessera: ") + op_name(op) + ": " + input_name(op) + " has dtype " + dtype +
                       ", which tessera cannot sum" + why + " (the reductions take " + kSummable + ")");
}

// A reduction's element type from numpy's dtype (tessera::dtype_from_numpy: kind and itemsize),
// TypeError naming it when tessera cannot sum it.
tessera::DType dtype_of(PyArray_Descr* d, Op op) {
  if (!PyDataType_ISNOTSWAPPED(d))
    not_summable(op, repr(reinterpret_cast<PyObject*>(d)),
                 ": its bytes are in non-native order (convert it first: A.astype(A.dtype.newbyteorder('=')))");
  std::optional<tessera::DType> t;
  if (!PyDataType_HASFIELDS(d) && !PyDataType_HASSUBARRAY(d))
    t = tessera::dtype_from_numpy(d->kind, static_cast<std::size_t>(PyDataType_ELSIZE(d)));
  if (!t) not_summable(op, repr(reinterpret_cast<PyObject*>(d)));
  return *t;
}

// A reduction's element type from DLPack's dtype (tessera::dtype_from_dlpack).
tessera::DType dtype_of(DLDataType t, Op op) {
  const std::optional<tessera::DType> d = tessera::dtype_from_dlpack(t.code, t.bits, t.lanes);
  if (!d)
    not_summable(op, "DLPack (code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " +
                         std::to_string(t.lanes) + ")");
  return *d;
}

// A reduction's element type from a torch dtype as __init__.py names it (str(tensor.dtype):
// "torch.float32", "torch.bool", ...; tessera::dtype_named).
tessera::DType dtype_named(const std::string& name, Op op) {
  const std::optional<tessera::DType> d = tessera::dtype_named(name.rfind("torch.", 0) == 0 ? name.substr(6) : name);
  if (!d) not_summable(op, name);
  return *d;
}

// tessera's operations for anything but a torch tensor (see __init__.py for the contracts): the
// options and arguments first (reading them may run Python code: __index__, __iter__); then A's
// dtype, shape, strides and data, read together (nothing runs Python code between then and the
// write) and in place, whatever the layout; out= checked before a byte is written (and added into
// under accumulate), new outputs of kFreshMinBytes or more from the allocating C++ call. A copy
// takes any dtype whose bytes can be copied; a reduction tessera's element types.
py::object call(py::handle op, py::handle A, py::handle in_shape, py::handle arg, py::handle axis,
                py::handle output_size, py::handle out, py::handle max_threads, py::handle nontemporal,
                py::handle negative_reps, py::handle accumulate) {
  const Op o = to_op(op);
  const tessera::Options options =
      read_options(o, max_threads, nontemporal, negative_reps, accumulate, !out.is_none());
  const OpArgs args = read_args(o, in_shape, arg, axis, output_size, options);
  py::object holder;
  PyArrayObject* a = as_array(A.ptr(), &holder);
  const py::object descr_ref = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(PyArray_DESCR(a)));
  PyArray_Descr* descr = PyArray_DESCR(a);
  std::optional<tessera::DType> dtype;
  if (is_reduction(o))
    dtype = dtype_of(descr, o);
  else
    check_copyable(descr, "A");
  const tessera::Dims shape = dims_of(a), strides = strides_of(a);
  const std::size_t itemsize = static_cast<std::size_t>(PyArray_ITEMSIZE(a));
  const char* src = static_cast<const char*>(PyArray_DATA(a));

  if (itemsize == 0) {  // a copy of e.g. dtype([]) or 'V0': no bytes to move, only a shape to make
    const tessera::Dims oshape = shape_for(args, shape, options);
    check_numpy_output(oshape, 0, 0);
    if (out.is_none()) return new_array(descr, oshape);
    check_out(out.ptr(), descr, oshape, "the result");
    return py::reinterpret_borrow<py::object>(out);
  }

  const tessera::Plan plan = plan_for(args, shape, strides, itemsize, dtype, options);
  return write_result(plan, src, shape, strides, itemsize, descr, out);
}

// repeat's counts as a plain Python value: an int (one count) or a new int64 ndarray of their own.
// Counts read in place (a.counts_array, maybe the memory of the caller's tensor) are copied here:
// the value is kept (tessera.torch's autograd saves it for the backward) and must not change when
// the caller's counts do afterwards.
py::object counts_value(const OpArgs& a) {
  if (a.counts_array) {
    PyObject* copy = PyArray_CastToType(reinterpret_cast<PyArrayObject*>(a.counts_array.ptr()),
                                        PyArray_DescrFromType(NPY_INT64), 0);
    if (copy == nullptr) throw_python();
    return py::reinterpret_steal<py::object>(copy);
  }
  if (a.scalar) return py::int_(a.counts[0]);
  npy_intp n = static_cast<npy_intp>(a.counts.size());
  PyObject* arr = PyArray_SimpleNew(1, &n, NPY_INT64);
  if (arr == nullptr) throw_python();
  py::object value = py::reinterpret_steal<py::object>(arr);
  if (n > 0) std::memcpy(PyArray_DATA(reinterpret_cast<PyArrayObject*>(arr)), a.counts.data(), a.counts.size() * 8);
  return value;
}

// The arguments as plain Python values that run no code when read again (the torch path reads
// them once more after the tensors' pointers): in_shape (or None), the argument (a tuple of ints:
// reps or a shape; an int or an int64 ndarray: repeat's counts), axis and output_size (an int or
// None).
py::tuple canonical(const OpArgs& a) {
  const py::object value = info(a.op).arg == ArgKind::repeats ? counts_value(a) : py::object(to_tuple(a.dims));
  return py::make_tuple(takes_in_shape(a.op) ? py::object(to_tuple(a.in_shape)) : py::object(py::none()), value,
                        a.axis ? a.axis : py::none(),
                        a.has_output_size ? py::object(py::int_(a.output_size)) : py::object(py::none()));
}

// A copy's argument, axis and output_size read once (canonical's last three values), the options
// checked first (tessera.torch and tessera.dask read repeat's counts with it).
py::tuple canonical_args(py::handle op, py::handle arg, py::handle axis, py::handle output_size,
                         py::handle max_threads, py::handle nontemporal) {
  const tessera::Options options = to_options(max_threads.ptr(), nontemporal.ptr(), py::str("error").ptr());
  const py::tuple c = canonical(read_args(to_op(op, true), py::none(), arg, axis, output_size, options));
  return py::make_tuple(c[1], c[2], c[3]);
}

// The torch path's first step: the options checked (a reduction's accumulate needs out), the
// arguments read once, and the whole call checked for a C-contiguous input of `shape` and, for a
// reduction, the tensor's dtype (`dtype`: its name, e.g. "torch.float32"), so that every error is
// raised before the torch output is allocated. Returns canonical's four values and the output's
// shape.
py::tuple prepare(py::handle op, py::handle shape, py::handle dtype, py::handle in_shape, py::handle arg,
                  py::handle axis, py::handle output_size, py::handle max_threads, py::handle nontemporal,
                  py::handle negative_reps, py::handle accumulate, bool has_out) {
  const Op o = to_op(op);
  const tessera::Options options = read_options(o, max_threads, nontemporal, negative_reps, accumulate, has_out);
  const OpArgs a = read_args(o, in_shape, arg, axis, output_size, options);
  tessera::Dims out_shape;
  if (is_reduction(o)) {
    const tessera::DType dt = dtype_named(py::cast<std::string>(py::str(dtype)), o);
    const tessera::Dims s = to_dims(shape.ptr(), "the gradient's shape", "is too large");
    out_shape = plan_for(a, s, tessera::Dims(), tessera::itemsize_of(dt), dt, options).shape();
  } else {
    out_shape = shape_for(a, to_dims(shape.ptr(), "A.shape", "is too large"), options);
  }
  const py::tuple c = canonical(a);
  return py::make_tuple(c[0], c[1], c[2], c[3], to_tuple(out_shape));
}

// ---------------------------------------------------------------------------------------------
// DLPack (torch tensors)

// A DLPack capsule's tensor as tessera::dlpack_view reads it (device, dtype, axes and byte strides
// checked, `what` naming it), with its byte strides made explicit (C-contiguous ones when the
// tensor gives none).
tessera::DLPackView dl_view(py::handle capsule, const char* what) {
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (m == nullptr) throw_python();
  tessera::DLPackView v = tessera::dlpack_view(m->dl_tensor, what, "tessera");
  if (v.strides.size() != v.shape.size()) v.strides = c_strides(v.shape, v.itemsize);
  return v;
}

// Runs `plan` from the tensor s into the tensor d, after checking d against it in bytes: A's
// DLPack dtype, the plan's shape, C-contiguous.
void execute_dlpack(const tessera::Plan& plan, const tessera::DLPackView& s, const tessera::DLPackView& d) {
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
  const char* src = static_cast<const char*>(s.data);
  execute_into(plan, src, span_of(src, s.shape, s.strides, s.itemsize), static_cast<char*>(const_cast<void*>(d.data)));
}

// tessera's operations for torch tensors: src and dst are DLPack capsules of the input and of an
// output the caller allocated (torch.empty of prepare's shape, or the user's out=, checked by
// __init__.py for device, dtype, shape and contiguity; checked here again in bytes); the
// arguments as prepare returned them (no Python code runs after the capsules' pointers are read).
void call_dlpack(py::handle op, py::handle src_capsule, py::handle dst_capsule, py::handle in_shape, py::handle arg,
                 py::handle axis, py::handle output_size, py::handle max_threads, py::handle nontemporal,
                 py::handle negative_reps, py::handle accumulate) {
  const Op o = to_op(op);
  const tessera::Options options = read_options(o, max_threads, nontemporal, negative_reps, accumulate, true);
  const OpArgs args = read_args(o, in_shape, arg, axis, output_size, options);
  const tessera::DLPackView s = dl_view(src_capsule, input_name(o));
  const tessera::DLPackView d = dl_view(dst_capsule, "out");
  std::optional<tessera::DType> dtype;
  if (is_reduction(o)) dtype = dtype_of(s.dtype, o);
  execute_dlpack(plan_for(args, s.shape, s.strides, s.itemsize, dtype, options), s, d);
}

// ---------------------------------------------------------------------------------------------
// tessera.Plan

class PyPlan {
 public:
  // Plans the copy `op` (the id of tile, broadcast_to, expand or repeat) on an input of `shape`,
  // `dtype` and byte `strides` (None: C-contiguous); `arg` is tile's reps, broadcast_to's or
  // expand's target shape, or repeat's counts; `axis` is repeat's (None otherwise).
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
    const OpArgs args = read_args(op_, py::none(), arg, axis, py::none(), options);
    plan_ = plan_for(args, shape_, strides.is_none() ? tessera::Dims() : strides_,
                     static_cast<std::size_t>(PyDataType_ELSIZE(descr)), std::nullopt, options);
    check_numpy_output(plan_->shape(), plan_->nbytes(), plan_->itemsize());
  }

  // Plans the reduction `op` (the id of tile_backward, sum_to_shape or repeat_backward) of a
  // gradient of `shape`, `dtype` and byte `strides` (None: C-contiguous); `in_shape` is
  // tile_backward's and repeat_backward's (None for sum_to_shape), `arg` tile_backward's reps,
  // sum_to_shape's shape or repeat_backward's counts, `axis` repeat_backward's (None otherwise).
  PyPlan(py::handle op, py::handle shape, py::handle in_shape, py::handle arg, py::handle dtype, py::handle strides,
         py::handle axis, py::handle max_threads, py::handle nontemporal, py::handle negative_reps,
         py::handle accumulate) {
    op_ = to_op(op, false);
    const tessera::Options options = reduce_options(op_, max_threads, nontemporal, negative_reps, accumulate, true);
    const tessera::DType dt = dtype_of(read_dtype(dtype), op_);
    read_layout(shape, strides);
    const OpArgs args = read_args(op_, in_shape, arg, axis, py::none(), options);
    plan_ = plan_for(args, shape_, strides.is_none() ? tessera::Dims() : strides_, tessera::itemsize_of(dt), dt,
                     options);
    check_numpy_output(plan_->shape(), plan_->nbytes(), plan_->itemsize());
  }

  py::object call(py::handle A, py::handle out) const {
    if (plan_->options().accumulate && out.is_none())
      throw py::value_error(std::string("tessera: this ") + op_name(op_) +
                            " plan accumulates (accumulate=True): call it with out=, the array to add into");
    PyArrayObject* a = check_input(A);
    const char* src = static_cast<const char*>(PyArray_DATA(a));
    if (!out.is_none()) {
      PyArrayObject* o = check_out(out.ptr(), descr(), plan_->shape(), "the plan's output");
      execute_into(*plan_, src, span_of(src, shape_, strides_of(a), plan_->itemsize()),
                   static_cast<char*>(PyArray_DATA(o)));
      return py::reinterpret_borrow<py::object>(out);
    }
    return new_result(*plan_, src, descr());  // the functions' allocation: on a line, huge pages from 32 MiB
  }

  py::object execute_region(py::handle A, py::handle start, py::handle extent, py::handle out) const {
    if (plan_->is_reduction())
      throw py::value_error(std::string("tessera: a ") + op_name(op_) +
                            " plan has no regions: each output element sums many input elements; call the plan");
    const tessera::Dims st = to_dims(start.ptr(), "start", "is past the output"),
                        ex = to_dims(extent.ptr(), "extent", "is past the output");
    PyArrayObject* a = check_input(A);  // after start and extent, whose __index__ may run Python code
    const std::size_t itemsize = plan_->itemsize();
    // Validate the region (tessera's checks, naming the axis) before anything is allocated: a
    // zero-byte dry run against a null dst reports a bad start or extent first.
    bool ok = st.size() == plan_->ndim() && ex.size() == plan_->ndim(), empty = false;
    for (int i = 0; ok && i < ex.size(); ++i) {
      ok = ex[i] >= 0 && st[i] >= 0 && st[i] <= plan_->shape()[i] - ex[i];
      empty = empty || ex[i] == 0;
    }
    if (!ok) plan_->execute_region(PyArray_DATA(a), st, ex, nullptr, 0);  // throws InvalidArgument naming the axis
    int64_t count = empty ? 0 : 1;  // a non-empty region lies inside the output: its count fits int64
    for (int i = 0; i < ex.size() && !empty; ++i) count *= ex[i];
    const std::size_t nbytes = static_cast<std::size_t>(count) * itemsize;
    const char* src = static_cast<const char*>(PyArray_DATA(a));
    py::object result;
    char* dst;
    if (out.is_none() && nbytes >= kFreshMinBytes) {
      // tessera's allocator: lines whole, and from 32 MiB huge pages and the blocks of chunks
      // already freed (a Dask worker making chunk after chunk reuses their pages instead of
      // faulting in new ones).
      tessera::Array region;
      try {
        py::gil_scoped_release release;
        region = plan_->execute_region(src, st, ex);
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
               [&](char* to) { plan_->execute_region(src, st, ex, to, nbytes); });
    return result;
  }

  py::tuple out_shape() const { return to_tuple(plan_->shape()); }
  py::tuple shape() const { return to_tuple(shape_); }
  py::tuple strides() const { return to_tuple(strides_); }
  py::object dtype() const { return dtype_; }
  int ndim() const { return plan_->ndim(); }
  std::size_t nbytes() const { return plan_->nbytes(); }
  std::size_t itemsize() const { return plan_->itemsize(); }
  std::string kernel_path() const { return plan_->kernel_path(); }
  std::string describe() const { return plan_->describe(); }
  std::string operation() const { return op_name(op_); }
  bool accumulate() const { return plan_->options().accumulate; }

  std::string repr_str() const {
    const std::string kind = op_ == Op::tile ? "" : std::string(".") + op_name(op_);
    return "tessera.Plan" + kind + "(shape=" + shape_str(shape_) + ", dtype=" + repr(dtype_.ptr()) + ", out_shape=" +
           shape_str(plan_->shape()) + ", kernel_path='" + plan_->kernel_path() + "')";
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
      strides_ = c_strides(shape_, static_cast<std::size_t>(PyDataType_ELSIZE(descr())));
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
  std::optional<tessera::Plan> plan_;  // set by every constructor that returns
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

// The file the dynamic linker mapped the code at `address` from (dladdr), as its real path (the
// symlinks resolved, as /proc/self/maps names it); None if dladdr does not know the address.
py::object mapped_file(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr || *info.dli_fname == '\0') return py::none();
  char* real = realpath(info.dli_fname, nullptr);
  const std::string path = real != nullptr ? real : info.dli_fname;
  std::free(real);
  return py::str(path);
}

std::string hex_version(unsigned long v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%08lx", v);
  return buf;
}

// tessera.show_config()'s native facts, read from the running library and the libraries this process
// mapped: {section: {key: value}}. The front end (__init__.py) adds what Python itself knows.
py::dict config() {
  py::dict tessera_section;
  tessera_section["version"] = std::string(tessera::version());

  py::dict simd;
  const auto names = [](const std::vector<std::string>& v) {
    py::list l;
    for (const std::string& n : v) l.append(py::str(n));
    return l;
  };
  simd["compiled"] = names(tessera::compiled_targets());
  simd["supported"] = names(tessera::supported_targets());
  simd["dispatched"] = std::string(tessera::active_target());
  simd["highway_compiled_version"] =
      std::to_string(HWY_MAJOR) + "." + std::to_string(HWY_MINOR) + "." + std::to_string(HWY_PATCH);

  py::dict tbb_section;
  tbb_section["version"] = std::string(TBB_runtime_version());  // the mapped libtbb's
  tbb_section["interface_version"] = TBB_runtime_interface_version();
  tbb_section["compiled_version"] = std::string(TBB_VERSION_STRING);  // the headers'
  tbb_section["compiled_interface_version"] = TBB_INTERFACE_VERSION;
  tbb_section["default_concurrency"] = tbb::info::default_concurrency();
  tbb_section["max_concurrency"] = tbb::this_task_arena::max_concurrency();

  py::dict memory;
  memory["streaming_threshold_bytes"] = tessera::streaming_threshold_bytes();
  memory["reduce_prefetch_bytes"] = tessera::reduce_prefetch_bytes();
  memory["block_cache_limit_bytes"] = tessera::block_cache_limit_bytes();
  memory["block_cache_max_age_seconds"] = tessera::block_cache_max_age_seconds();

  // A function of each object: this module's own, oneTBB's and Highway's (the Highway and TBB code
  // linked into this module calls them). A static link would name this module.
  py::dict libraries;
  libraries["_tessera"] = mapped_file(reinterpret_cast<const void*>(&mapped_file));
  libraries["libtbb"] = mapped_file(reinterpret_cast<const void*>(&TBB_runtime_version));
  libraries["libhwy"] = mapped_file(reinterpret_cast<const void*>(&hwy::SupportedTargets));

  py::dict numpy_section;
  numpy_section["runtime_abi_version"] = hex_version(PyArray_GetNDArrayCVersion());
  numpy_section["runtime_api_version"] = hex_version(PyArray_GetNDArrayCFeatureVersion());
  numpy_section["compiled_abi_version"] = hex_version(NPY_ABI_VERSION);
  numpy_section["compiled_api_version"] = hex_version(NPY_API_VERSION);
  numpy_section["target_api_version"] = hex_version(NPY_FEATURE_VERSION);  // NPY_TARGET_VERSION when set

  py::dict out;
  out["tessera"] = tessera_section;
  out["SIMD Extensions"] = simd;
  out["oneTBB"] = tbb_section;
  out["Memory"] = memory;
  out["Native Libraries"] = libraries;
  out["numpy"] = numpy_section;
  return out;
}

// The Python error of the C++ exception being handled, as pybind11's dispatcher sets it (its
// standard translations, and this module's: tessera::Error is a ValueError). For the entry points
// called as plain CPython functions below.
void set_python_error() noexcept {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const tessera::Error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::domain_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::length_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::out_of_range& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const std::range_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::overflow_error& e) {
    PyErr_SetString(PyExc_OverflowError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "tessera: an unknown C++ exception");
  }
}

// F(args[0], ..., args[N - 1]) of N handles: its result as a new reference (None for void), or
// null with the Python error set.
template <auto F, std::size_t... I>
PyObject* invoke_handles(PyObject* const* args, std::index_sequence<I...>) {
  if constexpr (std::is_void_v<decltype(F(((void)I, py::handle())...))>) {
    F(py::handle(args[I])...);
    Py_RETURN_NONE;
  } else {
    return F(py::handle(args[I])...).release().ptr();
  }
}

// F, a function of N py::handle arguments, as a vectorcall (METH_FASTCALL) function of N positional
// arguments. The entry points every operation goes through are these, not pybind11 functions:
// pybind11's general dispatcher (its argument vector, loaders and call record) took ~130 of the
// ~510 ns of a tiny tessera.tile (2026-11-28, AMD EPYC family 25, Debian's CPython 3.11). The same
// functions, arguments and errors.
template <auto F, std::size_t N>
PyObject* fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs) noexcept {
  if (nargs != static_cast<Py_ssize_t>(N)) {
    PyErr_Format(PyExc_TypeError, "tessera._tessera: takes %zd positional arguments (%zd given)",
                 static_cast<Py_ssize_t>(N), nargs);
    return nullptr;
  }
  try {
    return invoke_handles<F>(args, std::make_index_sequence<N>());
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

template <auto F, std::size_t N>
PyCFunction as_fastcall() {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fastcall<F, N>));
}

// prepare's has_out as the handle of a bool, so that it is a function of handles only.
py::tuple prepare_handles(py::handle op, py::handle shape, py::handle dtype, py::handle in_shape, py::handle arg,
                          py::handle axis, py::handle output_size, py::handle max_threads, py::handle nontemporal,
                          py::handle negative_reps, py::handle accumulate, py::handle has_out) {
  const int truth = PyObject_IsTrue(has_out.ptr());
  if (truth < 0) throw_python();
  return prepare(op, shape, dtype, in_shape, arg, axis, output_size, max_threads, nontemporal, negative_reps,
                 accumulate, truth != 0);
}

// The vectorcall entry points (static: the module's functions keep pointers to them).
PyMethodDef fastcall_defs[] = {
    {"call", as_fastcall<&call, 11>(), METH_FASTCALL,
     "call(op, A, in_shape, arg, axis, output_size, out, max_threads, nontemporal, negative_reps, accumulate)\n--\n\n"
     "One of tessera's operations (an id of `operations`) on anything but a torch tensor."},
    {"prepare", as_fastcall<&prepare_handles, 12>(), METH_FASTCALL,
     "prepare(op, shape, dtype, in_shape, arg, axis, output_size, max_threads, nontemporal, negative_reps, "
     "accumulate, has_out)\n--\n\n"
     "An operation's options and arguments checked and read once, and its output shape (the torch path)."},
    {"call_dlpack", as_fastcall<&call_dlpack, 11>(), METH_FASTCALL,
     "call_dlpack(op, src, dst, in_shape, arg, axis, output_size, max_threads, nontemporal, negative_reps, "
     "accumulate)\n--\n\n"
     "One of tessera's operations between DLPack capsules (torch tensors)."},
};

}  // namespace

PYBIND11_MODULE(_tessera, m) {
  if (_import_array() < 0) throw py::error_already_set();
  m.doc() = "tessera's extension module; use the documented functions of the tessera package.";

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tessera::Error&) {
      set_python_error();  // a ValueError, as from the vectorcall entry points
    }
  });

  // The process's one-time set-up, done at import (as numpy detects its CPU features at import)
  // rather than inside a user's first call: Highway's choice of SIMD target (a few CPUID
  // instructions, each a trap to the hypervisor in a virtual machine: 15-20 us), oneTBB's scheduler
  // state (the default concurrency, its allocator's loading: 150-180 us) and the last-level cache's
  // size behind the streaming threshold (sysfs: ~100 us). Measured on a KVM guest on 2026-11-28;
  // in a fresh process the first 4 KiB call took 62-70 us before, ~30 us after. No thread starts
  // here: oneTBB's workers start with the first parallel call (a fork after the import stays safe).
  tessera::active_target();
  tbb::this_task_arena::max_concurrency();
  tessera::streaming_threshold_bytes();

  m.attr("operations") = operations_table();
  for (PyMethodDef& def : fastcall_defs) {
    PyObject* fn = PyCFunction_NewEx(&def, nullptr, m.attr("__name__").ptr());
    if (fn == nullptr) throw py::error_already_set();
    m.add_object(def.ml_name, py::reinterpret_steal<py::object>(fn));
  }
  m.def("canonical_args", &canonical_args,
        "A copy's argument, axis and output_size read once, as a shape tuple, an int or int64 ndarray.");
  m.def("tile_shape", &tile_shape, "See tessera.tile_shape.");
  m.def("reps_tuple",
        [](py::handle reps, py::handle negative_reps) {
          return to_tuple(to_reps(reps.ptr(), to_options(Py_None, Py_None, negative_reps.ptr())));
        },
        "reps read once as tessera reads them (int, sequence, iterable, ndarray), as a tuple of ints.");
  m.def("simd_target", [] { return std::string(tessera::active_target()); }, "See tessera.simd_target.");
  m.def("version", [] { return std::string(tessera::version()); }, "The C library's version.");
  m.def("config", &config, "tessera.show_config()'s facts from the native code, {section: {key: value}}.");
  // The block cache's bounds (the front end checks the arguments; the C++ calls check again).
  m.def("set_block_cache_limit", &tessera::set_block_cache_limit, py::arg("nbytes"),
        py::call_guard<py::gil_scoped_release>(), "See tessera.set_block_cache_limit.");
  m.def("set_block_cache_max_age", &tessera::set_block_cache_max_age, py::arg("seconds"),
        py::call_guard<py::gil_scoped_release>(), "See tessera.set_block_cache_max_age.");
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
