"""Promises every entry point keeps, checked across the whole public surface rather than case by case.

- `import tessera` alone reaches `tessera.dask` and `tessera.torch` (a fresh interpreter each);
- every public object's repr and methods in every state it can be in (a `Plan` made, never
  initialised, whose constructor raised, initialised twice) raise a clear error or answer: never crash
  (run in a child interpreter, so that a crash fails the test instead of ending the run);
- inputs (A, reps, counts, shapes given as arrays) keep their flags and bytes after every call, good or bad;
- `out=` is untouched on every error path: numpy read-only and wrong outs, torch inference tensors
  and tensors that cannot be written in place, with and without ``accumulate=True``;
- integer arguments as numpy reads them: a bool is not a shape entry, an axis or an output_size
  (TypeError, as numpy and torch), but is a rep or a count (as numpy); a 2-d tensor of reps and
  nested counts are ValueErrors, as the 2-d ndarray is;
- error messages quote what is wrong (the empty output that overflows is not "2**64-1 bytes");
- the extension's entry points (vectorcall functions, not pybind11's) take exactly their positional
  arguments, and an error thrown in C++ reaches Python as the type pybind11 would have made of it.
"""
import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import dask.array as da
import numpy as np
import pytest
import torch

import tessera
import tessera.dask as td
from conftest import BUILD_PYTHONPATH


def name_id(v):
    """A parametrized case's id: its name, and nothing for its other values."""
    return v if isinstance(v, str) else ""


def run_child(code):
    """Run `code` in a fresh interpreter that imports the tessera under test; its stdout, stderr and
    return code (negative: killed by that signal)."""
    prelude = f"import sys; sys.path.insert(0, {str(BUILD_PYTHONPATH)!r})\n"
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300)
    return proc


# --- import tessera alone ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, call", [
    ("dask", "tessera.dask.tile(np.arange(3), 2, chunks=2).compute().tolist()"),
    ("torch", "tessera.torch.tile(torch.arange(3), (2,)).tolist()"),
])
def test_submodules_through_import_tessera_alone(name, call):
    proc = run_child(f"""
        import json
        import numpy as np
        import tessera
        assert "tessera.{name}" not in sys.modules  # imported on first use, not by `import tessera`
        mod = tessera.{name}
        import torch
        print(json.dumps([mod.__name__, mod.__file__, {call}]))
    """)
    assert proc.returncode == 0, proc.stderr
    got_name, got_file, value = json.loads(proc.stdout)
    assert got_name == f"tessera.{name}" and got_file.startswith(str(BUILD_PYTHONPATH))
    assert value == [0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("name, nargs", [("call", 11), ("prepare", 12), ("call_dlpack", 11)])
def test_extension_entry_points_take_exactly_their_arguments(name, nargs):
    fn = getattr(tessera._tessera, name)
    assert len(inspect.signature(fn).parameters) == nargs
    for given in (0, nargs - 1, nargs + 1):
        with pytest.raises(TypeError, match=rf"takes {nargs} positional arguments \({given} given\)"):
            fn(*[None] * given)


def test_errors_thrown_in_cpp_keep_their_python_types():
    # tessera::Error, thrown by the library (lib/operations.cpp), is a ValueError naming the value;
    # pybind11's value_error and type_error (the binding's own checks) keep their types; a Python
    # error raised inside (an __index__ that raises) is re-raised as it was.
    with pytest.raises(ValueError, match=r"input axis 0 has extent 3 but shape\[0\] = 4"):
        tessera.broadcast_to(np.ones(3), (4,))
    with pytest.raises(ValueError, match=r"reps\[0\] = -1 is negative"):
        tessera.tile(np.ones(3), -1)
    with pytest.raises(TypeError, match=r"reps\[0\] = 'x' \(str\) is not an integer"):
        tessera.tile(np.ones(3), "x")

    class Bad:
        def __index__(self):
            raise ZeroDivisionError("from __index__")

    with pytest.raises(ZeroDivisionError, match="from __index__"):
        tessera.tile(np.ones(3), [Bad()])
    with pytest.raises(ZeroDivisionError, match="from __index__"):
        tessera.tile(torch.ones(3), [Bad()])


def test_unknown_attribute_is_attributeerror():
    with pytest.raises(AttributeError, match="no attribute 'dask2'"):
        tessera.dask2


# --- every public object's repr and methods, in every state -----------------------------------------

STATES_SCRIPT = """
import copy, json, pickle, traceback
import numpy as np
import tessera
from tessera import _tessera

def failed_plan(make):
    try:
        make()
    except Exception as e:
        tb = e.__traceback__
        while tb.tb_next is not None and "self" not in tb.tb_frame.f_locals:
            tb = tb.tb_next
        frames = []
        while tb is not None:
            frames.append(tb.tb_frame.f_locals)
            tb = tb.tb_next
        for f in frames:
            for v in list(f.values()):
                if isinstance(v, _tessera.Plan):
                    return v
    raise AssertionError("no plan left in the traceback")

def reinitialised():
    p = tessera.Plan((2, 3), (2, 2), np.float32)
    p.__init__((5,), 3, np.int8)  # a second __init__ must not change (or break) a plan
    return p

states = {
    "made": lambda: tessera.Plan((2, 3), (2, 2), np.float32),
    "made repeat": lambda: tessera.Plan.repeat((2, 3), [1, 2, 0], np.int16, axis=1),
    "made tile_backward": lambda: tessera.Plan.tile_backward((4, 6), (2, 3), (2, 2), np.float32),
    "new, never initialised": lambda: tessera.Plan.__new__(tessera.Plan),
    "extension's, never initialised": lambda: _tessera.Plan.__new__(_tessera.Plan),
    "constructor raised": lambda: failed_plan(lambda: tessera.Plan((2, 3), -1, np.float32)),
    "classmethod constructor raised": lambda: failed_plan(lambda: tessera.Plan.repeat((2, 3), [1, 2], np.int8, 1)),
    "initialised twice": reinitialised,
}
a = np.zeros((2, 3), np.float32)
calls = {
    "repr": lambda p: repr(p),
    "str": lambda p: str(p),
    "describe": lambda p: p.describe(),
    "call": lambda p: p(a, None),  # positional: the extension's methods take no keywords
    "call out": lambda p: p(a, np.zeros((4, 6), np.float32)),
    "execute_region": lambda p: p.execute_region(a, (0, 0), (1, 1), None),
    "copy": lambda p: copy.copy(p),
    "pickle": lambda p: pickle.dumps(p),
}
for name in ("out_shape", "shape", "strides", "dtype", "ndim", "nbytes", "itemsize", "kernel_path", "operation",
             "accumulate"):
    calls[name] = (lambda n: lambda p: getattr(p, n))(name)
# every public name of Plan is called or read above
public = {n for n in dir(tessera.Plan) if not n.startswith("_")} - {"broadcast_to", "expand", "repeat",
          "tile_backward", "sum_to_shape", "repeat_backward"}
assert public <= set(calls), sorted(public - set(calls))
results = {}
for s, make in states.items():
    p = make()
    for c, f in calls.items():
        try:
            v = f(p)
            results[f"{s} / {c}"] = ["ok", repr(v)[:200]]
        except Exception as e:
            results[f"{s} / {c}"] = [type(e).__name__, str(e)]
print(json.dumps(results))
"""


def test_plan_in_every_state_never_crashes():
    proc = run_child(STATES_SCRIPT)
    assert proc.returncode == 0, f"the child died ({proc.returncode}): {proc.stderr[-2000:]}"
    results = json.loads(proc.stdout)
    uninitialised = ("new, never initialised", "extension's, never initialised", "constructor raised",
                     "classmethod constructor raised")
    for key, (outcome, text) in results.items():
        state, call = key.split(" / ")
        if call in ("copy", "pickle"):  # a copy would be a plan never initialised: refused
            assert outcome == "TypeError" and "cannot pickle" in text, (key, outcome, text)
        elif state in uninitialised:
            if call in ("repr", "str"):
                assert outcome == "ok" and "not initialised" in text, (key, outcome, text)
            else:
                assert outcome == "ValueError" and "is not initialised" in text, (key, outcome, text)
        elif state == "initialised twice":  # the first plan, unchanged
            want = {"repr": "shape=(2, 3)", "shape": "(2, 3)", "out_shape": "(4, 6)", "call": "array("}
            if call in want:
                assert outcome == "ok" and want[call] in text, (key, outcome, text)
        elif call in ("repr", "str", "describe", "shape", "out_shape", "kernel_path"):
            assert outcome == "ok", (key, outcome, text)


def test_a_traceback_with_a_failed_plan_in_its_locals_prints():
    # pytest -l, IPython's verbose tracebacks and error reporters print each frame's locals (repr)
    proc = run_child("""
        import traceback
        import numpy as np
        import tessera, tessera.dask
        for make in (lambda: tessera.Plan((2, 3), -1, np.float32),
                     lambda: tessera.dask.tile(np.zeros(3), (2, -1))):
            try:
                make()
            except ValueError as e:
                text = "".join(traceback.TracebackException.from_exception(e, capture_locals=True).format())
                assert "not initialised" in text and "negative" in text, text
        print("printed")
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == "printed", proc.stderr[-2000:]


def test_plan_methods_refuse_other_objects():
    with pytest.raises(TypeError, match="expected a tessera.Plan"):
        tessera._tessera.Plan.describe(object())


# --- integers as numpy reads them -------------------------------------------------------------------

def numpy_and_tessera(np_call, ts_call):
    """The exception type numpy raises (None: none) and tessera's, and tessera's message."""
    outcomes = []
    for f in (np_call, ts_call):
        try:
            f()
            outcomes.append((None, ""))
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            outcomes.append((type(e), str(e)))
    return outcomes


BOOL_CASES = [  # (numpy's call, tessera's call) on the same arguments
    ("shape entry", lambda: np.broadcast_to(np.ones(3), (True, 3)),
     lambda: tessera.broadcast_to(np.ones(3), (True, 3))),
    ("numpy bool shape", lambda: np.broadcast_to(np.ones(3), (np.True_, 3)),
     lambda: tessera.broadcast_to(np.ones(3), (np.True_, 3))),
    ("expand shape", lambda: np.ones((True, 3)), lambda: tessera.expand(np.ones(3), (True, 3))),
    ("axis", lambda: np.repeat(np.ones(3), 2, axis=False), lambda: tessera.repeat(np.ones(3), 2, axis=False)),
    ("numpy bool axis", lambda: np.repeat(np.ones(3), 2, axis=np.False_),
     lambda: tessera.repeat(np.ones(3), 2, axis=np.False_)),
    ("in_shape", lambda: np.ones((True, 3)), lambda: tessera.tile_backward(np.ones((2, 3)), (True, 3), (2, 1))),
    ("sum_to_shape shape", lambda: np.ones((True, 3)), lambda: tessera.sum_to_shape(np.ones((2, 3)), (True, 3))),
    ("tile_shape shape", lambda: np.ones((True, 3)), lambda: tessera.tile_shape((True, 3), 2)),
    ("plan shape", lambda: np.ones((True, 3)), lambda: tessera.Plan((True, 3), 2, np.int8)),
    ("region start", lambda: np.ones((True, 3)),
     lambda: tessera.Plan((3,), 2, np.int8).execute_region(np.ones(3, np.int8), (True,), (2,))),
    ("rep", lambda: np.tile(np.ones(3), (True, 2)), lambda: tessera.tile(np.ones(3), (True, 2))),
    ("reps", lambda: np.tile(np.ones(3), True), lambda: tessera.tile(np.ones(3), True)),
    ("counts", lambda: np.repeat(np.ones(2), [True, False]), lambda: tessera.repeat(np.ones(2), [True, False])),
    ("count", lambda: np.repeat(np.ones(2), True), lambda: tessera.repeat(np.ones(2), True)),
    ("nested counts", lambda: np.repeat(np.ones(2), [[1], [2]]), lambda: tessera.repeat(np.ones(2), [[1], [2]])),
    ("nested counts row", lambda: np.repeat(np.ones(2), [[1, 2]]), lambda: tessera.repeat(np.ones(2), [[1, 2]])),
    ("nested tuple counts", lambda: np.repeat(np.ones(2), ((1,), (2,))),
     lambda: tessera.repeat(np.ones(2), ((1,), (2,)))),
    ("2-d ndarray reps", lambda: np.tile(np.ones(2), np.ones((2, 2), int)),
     lambda: tessera.tile(np.ones(2), np.ones((2, 2), int))),
]


@pytest.mark.parametrize("what, np_call, ts_call", BOOL_CASES, ids=[c[0] for c in BOOL_CASES])
def test_integer_arguments_as_numpy_reads_them(what, np_call, ts_call):
    (np_error, _), (ts_error, message) = numpy_and_tessera(np_call, ts_call)
    assert ts_error is np_error, (what, np_error, ts_error, message)
    if ts_error is not None:
        assert message.startswith("tessera:"), message


def test_bool_output_size_is_typeerror_as_torch():
    with pytest.raises(TypeError):
        torch.repeat_interleave(torch.ones(1), 1, output_size=True)
    for A in (np.ones(1), torch.ones(1)):
        with pytest.raises(TypeError, match=r"output_size = True \(bool\) is a bool"):
            tessera.repeat(A, 1, output_size=True)


@pytest.mark.parametrize("call", [
    lambda r: tessera.tile(np.ones(2), r),
    lambda r: tessera.tile(torch.ones(2), r),
    lambda r: tessera.tile_shape((2,), r),
    lambda r: tessera.tile_backward(np.ones((2, 2)), (2,), r),
    lambda r: tessera.Plan((2,), r, np.int8),
])
def test_a_2d_tensor_of_reps_is_a_valueerror_as_the_2d_ndarray(call):
    for reps in (np.ones((2, 2), np.int64), torch.ones(2, 2, dtype=torch.int64)):
        with pytest.raises(ValueError, match="reps is a 2-d array"):
            call(reps)
    # a 1-d tensor is read as the 1-d array
    assert np.array_equal(tessera.tile(np.arange(2), torch.tensor([2, 1])), np.tile(np.arange(2), [2, 1]))


def test_a_2d_tensor_as_a_shape_is_a_valueerror():
    for shape in (np.ones((1, 2), np.int64), torch.ones(1, 2, dtype=torch.int64)):
        for call in (lambda: tessera.broadcast_to(np.ones(2), shape), lambda: tessera.expand(np.ones(2), shape),
                     lambda: tessera.sum_to_shape(np.ones((2, 2)), shape)):
            with pytest.raises(ValueError, match="2-d array"):
                call()


# --- messages ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: tessera.tile(np.ones((0, 1, 1)), (1, 2**40, 2**40)),
    lambda: tessera.broadcast_to(np.ones((1, 1)), (0, 2**62, 2**62)),
    lambda: tessera.expand(np.ones((1, 1)), (0, 2**62, 2**62)),
    lambda: tessera.repeat(np.empty((0, 2**31, 1), np.int8), 2**40, axis=2),
    lambda: tessera.Plan((0, 1, 1), (1, 2**40, 2**40), np.float64),
    lambda: tessera.Plan.repeat((0, 2**31, 1), 2**40, np.int8, axis=2),
])
def test_an_empty_output_that_numpy_refuses_is_named_as_such(call):
    with pytest.raises(ValueError, match="array is too big"):
        np.empty((0, 2**40, 2**40))  # numpy's rule: the nonzero extents' product must fit
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert "has no element" in message and "too big" in message
    assert str(2**64 - 1) not in message and "bytes" not in message


# --- inputs unchanged after every call ------------------------------------------------------------

def snapshot(x):
    if isinstance(x, np.ndarray):
        flags = {k: x.flags[k] for k in ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED",
                                         "WRITEBACKIFCOPY")}
        return ("ndarray", flags, x.tobytes(), x.strides)
    if isinstance(x, torch.Tensor):
        return ("tensor", x._version, x.clone(), x.requires_grad, x.is_inference())
    return ("other", repr(x))


def same_snapshot(a, b):
    if a[0] == "tensor":
        return a[1] == b[1] and torch.equal(a[2], b[2]) and a[3:] == b[3:]
    return a == b


def readonly(x):
    x = np.array(x)
    x.flags.writeable = False
    return x


def entry_calls():
    """(name, function of fresh arguments, arguments): every entry point, with arrays as every
    argument that may be one; some calls are errors (the arguments must be unchanged either way)."""
    f32 = np.arange(6, dtype=np.float32).reshape(2, 3)
    for A in (f32, readonly(f32), np.asfortranarray(f32), f32[:, ::-1], f32.astype(">f4")):
        yield "tile", tessera.tile, (A, np.array([2, 1]))
        yield "tile bad", tessera.tile, (A, np.array([2, -1]))
        yield "broadcast_to", tessera.broadcast_to, (A, np.array([2, 2, 3]))
        yield "expand", tessera.expand, (A, np.array([2, 1, 1]))
        yield "repeat", tessera.repeat, (A, np.array([1, 0, 2]), 1)
        yield "repeat C int64 counts", tessera.repeat, (A, np.array([1, 0, 2], dtype=np.int64), 1)
        yield "repeat bad", tessera.repeat, (A, np.array([1, -1, 2]), 1)
        yield "tile_shape", tessera.tile_shape, (np.array(A.shape), np.array([2, 2]))
    g = np.arange(12, dtype=np.float32).reshape(2, 6)
    for G in (g, readonly(g), g[:, ::-1]):
        yield "tile_backward", tessera.tile_backward, (G, np.array([2, 3]), np.array([1, 2]))
        yield "sum_to_shape", tessera.sum_to_shape, (G, np.array([1, 6]))
        yield "repeat_backward", tessera.repeat_backward, (G, np.array([2, 3]), np.array([1, 2, 3]), 1)
        yield "repeat_backward bad", tessera.repeat_backward, (G, np.array([2, 3]), np.array([1, 2, 2]), 1)
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    yield "tile tensor", tessera.tile, (t, torch.tensor([2, 1]))
    yield "repeat tensor", tessera.repeat, (t, torch.tensor([1, 0, 2]), 1)
    yield "tile_backward tensor", tessera.tile_backward, (torch.ones(2, 6), torch.tensor([2, 3]), (1, 2))
    for x in (f32.astype(">f4"), da.from_array(f32, chunks=1)):
        yield "dask tile", td.tile, (x, np.array([2, 1]))
        yield "dask broadcast_to", td.broadcast_to, (x, np.array([2, 2, 3]))
        yield "dask repeat", td.repeat, (x, np.array([1, 0, 2], dtype=np.int64), 1)
        yield "dask repeat bad", td.repeat, (x, np.array([1, 0, -2], dtype=np.int64), 1)
    p = tessera.Plan((2, 3), (2, 1), np.float32)
    yield "plan call", p, (f32,)
    yield "plan region", p.execute_region, (readonly(f32), np.array([1, 0]), np.array([2, 3]))
    yield "Plan.repeat", tessera.Plan.repeat, (np.array([2, 3]), np.array([1, 0, 2]), np.float32, 1)


@pytest.mark.parametrize("name, function, args", list(entry_calls()), ids=name_id)
def test_inputs_unchanged_after_every_call(name, function, args):
    before = [snapshot(a) for a in args]
    try:
        function(*args)
    except (ValueError, TypeError):
        assert "bad" in name, name
    else:
        assert "bad" not in name, name
    after = [snapshot(a) for a in args]
    for i, (b, a) in enumerate(zip(before, after)):
        assert same_snapshot(b, a), (name, i, b[:2], a[:2])


# --- out= untouched on every error path -----------------------------------------------------------

def bad_calls(lib):
    """(op, args, kwargs) calls that fail for a reason other than `out` (a bad argument), each with an
    out= a good call would accept; lib is np or torch."""
    f = (lambda a: torch.from_numpy(np.ascontiguousarray(a))) if lib is torch else (lambda a: a)
    A = f(np.arange(6, dtype=np.float32).reshape(2, 3))
    G = f(np.ones((2, 6), np.float32))
    yield "tile", (A, (2, -2)), {}, (4, 6)
    yield "broadcast_to", (A, (2, 3, 4)), {}, (2, 2, 3)
    yield "expand", (A, (3, 3)), {}, (2, 3)
    yield "repeat", (A, [1, -1, 1], 1), {}, (2, 6)
    yield "repeat", (A, 2, 1), dict(output_size=5), (2, 6)
    yield "tile", (A, (2, 2)), dict(max_threads=0), (4, 6)
    yield "tile_backward", (G, (2, 3), (1, 3)), {}, (2, 3)
    yield "tile_backward", (G, (2, 3), (1, 2)), dict(accumulate=True, negative_reps="no"), (2, 3)
    yield "sum_to_shape", (G, (2, 5)), dict(accumulate=True), (2, 5)
    yield "repeat_backward", (G, (2, 3), [1, 2, 2], 1), dict(accumulate=True), (2, 3)


@pytest.mark.parametrize("op, args, kwargs, shape", list(bad_calls(np)), ids=name_id)
def test_numpy_out_untouched_on_a_bad_argument(op, args, kwargs, shape):
    out = np.full(shape, 7, np.float32)
    with pytest.raises((ValueError, TypeError)):
        getattr(tessera, op)(*args, out=out, **kwargs)
    assert (out == 7).all()


def torch_outs(shape):
    """Tensors tessera must refuse to write (name, make, message): an inference tensor outside
    inference mode, a view made in no_grad mode of a tensor that requires grad."""
    def inference():
        with torch.inference_mode():
            return torch.full(shape, 7.0)

    def no_grad_view():
        base = torch.full(shape, 7.0, requires_grad=True)
        with torch.no_grad():
            return base[:]

    yield "inference tensor", inference, "inference"
    yield "no_grad view of a tensor that requires grad", no_grad_view, "requires grad"


GOOD_TORCH_CALLS = [  # (op, args, kwargs, out shape): calls that succeed with a writeable out
    ("tile", lambda: (torch.ones(2, 3), (2, 2)), {}, (4, 6)),
    ("broadcast_to", lambda: (torch.ones(3), (2, 3)), {}, (2, 3)),
    ("expand", lambda: (torch.ones(3, 1), (1, 4)), {}, (3, 4)),
    ("repeat", lambda: (torch.ones(2, 3), [1, 2, 0], 1), {}, (2, 3)),
    ("tile_backward", lambda: (torch.ones(2, 6), (2, 3), (1, 2)), {}, (2, 3)),
    ("tile_backward", lambda: (torch.ones(2, 6), (2, 3), (1, 2)), dict(accumulate=True), (2, 3)),
    ("sum_to_shape", lambda: (torch.ones(2, 6), (1, 6)), dict(accumulate=True), (1, 6)),
    ("repeat_backward", lambda: (torch.ones(2, 6), (2, 3), [1, 2, 3], 1), dict(accumulate=True), (2, 3)),
]


@pytest.mark.parametrize("op, make_args, kwargs, shape", GOOD_TORCH_CALLS, ids=name_id)
def test_torch_out_that_cannot_be_written_is_refused_before_writing(op, make_args, kwargs, shape):
    for what, make_out, match in torch_outs(shape):
        out = make_out()
        with pytest.raises(ValueError, match=match):
            getattr(tessera, op)(*make_args(), out=out, **kwargs)
        with torch.inference_mode():
            assert (out == 7).all(), what
        # a retry after fixing nothing fails the same way and still writes nothing (a sum added twice
        # is what an accumulating out= written before the error would give)
        with pytest.raises(ValueError, match=match):
            getattr(tessera, op)(*make_args(), out=out, **kwargs)
        with torch.inference_mode():
            assert (out == 7).all(), what
    # inside inference mode an inference tensor is an ordinary out=
    with torch.inference_mode():
        out = torch.full(shape, 7.0)
        assert getattr(tessera, op)(*make_args(), out=out, **kwargs) is out
        assert not (out == 7).all()


@pytest.mark.parametrize("op, args, kwargs, shape", list(bad_calls(torch)), ids=name_id)
def test_torch_out_untouched_on_a_bad_argument(op, args, kwargs, shape):
    for out in (torch.full(shape, 7.0), ):
        version = out._version
        with pytest.raises((ValueError, TypeError)):
            getattr(tessera, op)(*args, out=out, **kwargs)
        assert (out == 7).all()
        # nor marked as written: a graph that saved out still works after a failed call
        assert out._version == version


@pytest.mark.parametrize("op, make_args, kwargs, shape", GOOD_TORCH_CALLS, ids=name_id)
def test_torch_out_written_is_marked_written(op, make_args, kwargs, shape):
    out = torch.full(shape, 7.0)
    version = out._version
    assert getattr(tessera, op)(*make_args(), out=out, **kwargs) is out
    assert out._version > version
    # autograd sees the write: a graph that saved out refuses to use the new values
    w = torch.ones(shape, requires_grad=True)
    y = (w * out).sum()
    getattr(tessera, op)(*make_args(), out=out, **kwargs)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


# --- no silent skips ------------------------------------------------------------------------------

def run_pytest_on(tmp_path, files):
    """pytest on `files` ({name: source}) in tmp_path, with tests/python/conftest.py's hooks."""
    for name, source in files.items():
        (tmp_path / name).write_text(textwrap.dedent(source))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                           "--rootdir", str(tmp_path), *files], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


def test_a_skip_not_in_expected_skips_fails_the_run(tmp_path):
    proc = run_pytest_on(tmp_path, {"test_skipping.py": """
        import pytest
        def test_runs():
            assert True
        def test_skips():
            pytest.skip("a module it needs is missing")
    """})
    assert proc.returncode == 1, proc.stdout
    assert "UNEXPECTED SKIP (not in tests/python/expected-skips): test_skipping.py::test_skips" in proc.stdout
    assert "1 passed, 1 skipped" in proc.stdout
    proc = run_pytest_on(tmp_path, {"test_module_skip.py": """
        import pytest
        pytest.importorskip("a_module_that_does_not_exist")
        def test_never():
            assert True
    """})
    assert proc.returncode == 1 and "UNEXPECTED SKIP" in proc.stdout, proc.stdout


def test_a_listed_skip_passes_the_run(tmp_path):
    proc = run_pytest_on(tmp_path, {"test_family.py": """
        import pytest
        @pytest.mark.parametrize("name", ["test_writeable"])
        def test_numpy_broadcast_to_tests(name):
            pytest.skip("listed")
    """})
    assert proc.returncode == 0, proc.stdout
    assert "skips: 1 listed in tests/python/expected-skips, 0 not listed" in proc.stdout


def test_every_listed_skip_names_a_test_and_a_reason():
    from conftest import read_expected_skips
    expected = read_expected_skips()
    assert expected, "tests/python/expected-skips lists nothing"
    for test_id, reason in expected.items():
        file, _, name = test_id.partition("::")
        assert (Path(__file__).parent / file).is_file() and name, test_id
        assert len(reason) > 20, (test_id, reason)


GOOD_NUMPY_CALLS = [  # (op, args, kwargs, out shape): calls that succeed with a writeable out
    ("tile", (np.ones((2, 3)), (2, 2)), {}, (4, 6)),
    ("broadcast_to", (np.ones(3), (2, 3)), {}, (2, 3)),
    ("expand", (np.ones((3, 1)), (1, 4)), {}, (3, 4)),
    ("repeat", (np.ones((2, 3)), [1, 2, 0], 1), {}, (2, 3)),
    ("tile_backward", (np.ones((2, 6)), (2, 3), (1, 2)), {}, (2, 3)),
    ("tile_backward", (np.ones((2, 6)), (2, 3), (1, 2)), dict(accumulate=True), (2, 3)),
    ("sum_to_shape", (np.ones((2, 6)), (1, 6)), dict(accumulate=True), (1, 6)),
    ("repeat_backward", (np.ones((2, 6)), (2, 3), [1, 2, 3], 1), dict(accumulate=True), (2, 3)),
]


@pytest.mark.parametrize("op, args, kwargs, shape", GOOD_NUMPY_CALLS, ids=name_id)
def test_numpy_read_only_out_is_refused_before_writing(op, args, kwargs, shape):
    out = np.full(shape, 7.0)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        getattr(tessera, op)(*args, out=out, **kwargs)
    assert (out == 7).all()
    view = np.full(shape, 7.0)
    readonly_view = view[...]
    readonly_view.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        getattr(tessera, op)(*args, out=readonly_view, **kwargs)
    assert (view == 7).all()
    # the same call with a writeable out succeeds: the refusal is the out's
    out = np.full(shape, 7.0)
    assert getattr(tessera, op)(*args, out=out, **kwargs) is out and not (out == 7).all()
