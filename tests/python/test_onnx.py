"""ONNX's node test data for Tile (Debian libonnx-testdata), read with onnx.numpy_helper: each data
set's inputs through tessera.tile must give its expected output, dtype and shape included."""
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import tessera

NODE_DATA = Path("/usr/share/libonnx-testdata/data/node")
DATA_SETS = sorted(NODE_DATA.glob("test_tile*/test_data_set_*"))


def read_tensor(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def test_onnx_tile_data_found():
    assert {p.parent.name for p in DATA_SETS} >= {"test_tile", "test_tile_precomputed"}


@pytest.mark.parametrize("data_set", DATA_SETS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_onnx_tile(data_set):
    model = onnx.load(str(data_set.parent / "model.onnx"))
    assert [node.op_type for node in model.graph.node] == ["Tile"]
    inputs = [read_tensor(p) for p in sorted(data_set.glob("input_*.pb"))]
    expected = read_tensor(data_set / "output_0.pb")
    assert len(inputs) == 2 and inputs[1].dtype == np.int64
    got = tessera.tile(inputs[0], inputs[1])
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert got.size > 0
