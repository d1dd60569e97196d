"""The extension's DLPack path (the one torch tensors take) on capsules built here with ctypes, so
that a tensor torch would never make can be given: byte strides that overflow int64 must be an
error naming the stride (lib/dlpack.cpp's translation, tessera::dlpack_view), not a wrapped
stride that reads the wrong bytes. The capsules are handed to the private entry point
tessera._ext.call_dlpack, as tessera's torch path hands its own."""
import ctypes

import numpy as np
import pytest

import tessera

_ext = tessera._ext


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

K_DL_CPU, K_DL_FLOAT = 1, 2


def capsule(array, strides=None):
    """A "dltensor" capsule over a float32 ndarray's memory with the given element strides (None:
    NULL, C-contiguous), and the ctypes objects it points into (kept alive by the caller)."""
    assert array.dtype == np.float32
    shape = (ctypes.c_int64 * array.ndim)(*array.shape)
    strides_c = None if strides is None else (ctypes.c_int64 * array.ndim)(*strides)
    managed = DLManagedTensor()
    managed.dl_tensor = DLTensor(array.ctypes.data, DLDevice(K_DL_CPU, 0), array.ndim, DLDataType(K_DL_FLOAT, 32, 1),
                                 shape, strides_c, 0)
    return _capsule_new(ctypes.addressof(managed), b"dltensor", None), (managed, shape, strides_c, array)


def call(op, src, dst, in_shape, arg):
    _ext.call_dlpack(tessera._OP[op], src, dst, in_shape, arg, None, None, None, None, "error", False)


def test_a_capsule_built_here_runs():
    a = np.arange(3, dtype=np.float32)
    out = np.zeros(6, dtype=np.float32)
    (s, keep_s), (d, keep_d) = capsule(a, (1,)), capsule(out)
    call("tile", s, d, None, (2,))
    assert out.tolist() == [0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("op, in_shape, arg, out_len", [("tile", None, (2,), 4), ("expand", None, (2,), 2),
                                                         ("tile_backward", (1,), (2,), 1)])
def test_byte_strides_that_overflow_int64_are_an_error(op, in_shape, arg, out_len):
    a = np.zeros(2, dtype=np.float32)
    out = np.full(out_len, 7, dtype=np.float32)
    # 2**62 elements of 4 bytes: a byte stride of 2**64, which wraps to 0 without the check
    (s, keep_s), (d, keep_d) = capsule(a, (2**62,)), capsule(out)
    with pytest.raises(ValueError, match=r"strides\[0\] = 4611686018427387904 elements of 4 bytes overflows int64"):
        call(op, s, d, in_shape, arg)
    assert (out == 7).all()  # nothing written
