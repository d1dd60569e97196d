"""pytest set-up for tessera's Python tests (tests/run's 'python' suite).

The module under test is the one tests/run built: TESSERA_PYTHONPATH (default: build/tests/lib/python
of this checkout) goes first on sys.path, and the tests check that `tessera` came from there.
"""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD_PYTHONPATH = Path(os.environ.get("TESSERA_PYTHONPATH", ROOT / "build" / "tests" / "lib" / "python")).resolve()
sys.path.insert(0, str(BUILD_PYTHONPATH))


def pytest_report_header(config):
    import tessera
    return [f"tessera {tessera.__version__} from {Path(tessera.__file__).parent}, SIMD target {tessera.simd_target()}"]


def pytest_configure(config):
    # Markers of numpy's own test files that test_family.py imports (numpy's conftest.py, not
    # installed by Debian, registers them), so that importing them does not warn.
    for marker in ("slow", "valgrind_error", "leaks_references"):
        config.addinivalue_line("markers", f"{marker}: a marker of numpy's own tests")
    config.addinivalue_line("markers", "cluster: starts a dask.distributed LocalCluster (-m 'not cluster' skips them)")
