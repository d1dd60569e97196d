"""numpy's own TestTile (numpy/lib/tests/test_shape_base.py, as Debian installs it), run with the
file's `tile` replaced by tessera.tile. The file is imported from numpy, not copied."""
import numpy as np
import numpy.lib.tests.test_shape_base as numpy_tests
import pytest

import tessera

METHODS = sorted(name for name in vars(numpy_tests.TestTile) if name.startswith("test_"))


def test_testtile_is_numpys_own():
    assert numpy_tests.__file__.startswith(str(np.__path__[0]))
    # numpy 1.24: test_basic, test_tile_one_repetition_on_array_gh4679, test_empty, test_kroncompare
    assert len(METHODS) >= 4, METHODS
    assert numpy_tests.tile is np.tile


@pytest.mark.parametrize("name", METHODS)
def test_numpy_testtile(name, monkeypatch):
    calls = []

    def tile(A, reps):
        calls.append(reps)
        return tessera.tile(A, reps)

    monkeypatch.setattr(numpy_tests, "tile", tile)
    getattr(numpy_tests.TestTile(), name)()
    assert calls, f"numpy's TestTile.{name} did not call tile"
