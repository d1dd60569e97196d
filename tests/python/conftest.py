"""pytest set-up for tessera's Python tests (tests/run's 'python' suite).

The module under test is the one tests/run built: TESSERA_PYTHONPATH (default: build/tests/lib/python
of this checkout) goes first on sys.path, and the tests check that `tessera` came from there.
Installed mode (TESSERA_INSTALLED=1, tests/run's 'wheel' suite): nothing is prepended; `tessera` must
be the one installed in the running interpreter's site-packages (platlib), which BUILD_PYTHONPATH
then names, so the same checks assert that the installed copy is the one under test.

No silent skips: a test may skip only if tests/python/expected-skips lists it (with the reason);
any other skip (a test's or a whole module's) makes the run fail, after pytest's summary names it.
"""
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
INSTALLED = os.environ.get("TESSERA_INSTALLED") == "1"
if INSTALLED:
    import importlib.util
    import sysconfig

    assert "TESSERA_PYTHONPATH" not in os.environ, "TESSERA_INSTALLED=1 tests the installed tessera: unset TESSERA_PYTHONPATH"
    BUILD_PYTHONPATH = Path(sysconfig.get_paths()["platlib"]).resolve()
    _spec = importlib.util.find_spec("tessera")
    assert _spec is not None and _spec.origin is not None, f"TESSERA_INSTALLED=1: no tessera installed for {sys.executable}"
    assert Path(_spec.origin).resolve().parent == BUILD_PYTHONPATH / "tessera", \
        f"TESSERA_INSTALLED=1: tessera found at {_spec.origin}, not in {BUILD_PYTHONPATH}"
else:
    BUILD_PYTHONPATH = Path(os.environ.get("TESSERA_PYTHONPATH", ROOT / "build" / "tests" / "lib" / "python")).resolve()
    sys.path.insert(0, str(BUILD_PYTHONPATH))


#: numpy's AxisError: numpy.exceptions.AxisError from numpy 1.25 on (numpy.AxisError is gone in numpy 2).
AxisError = getattr(np, "exceptions", np).AxisError


def child_env(env_changes=None):
    """The environment for a child interpreter testing this build: os.environ with the build's
    module first on PYTHONPATH and `env_changes` applied (a value of None unsets the name)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(BUILD_PYTHONPATH)] + [p for p in [env.get("PYTHONPATH")] if p])
    for k, v in (env_changes or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def longest_pause_during(call, times=2):
    """Runs `call()` `times` times in another thread while this thread loops; returns (the longest
    pause between this thread's iterations, the calls' durations), in seconds. With the GIL held
    through a call, this thread stops for the whole call; released, only for the GIL's switch
    interval (5 ms)."""
    import threading
    import time

    done = threading.Event()
    durations = []

    def worker():
        for _ in range(times):
            t0 = time.perf_counter()
            call()
            durations.append(time.perf_counter() - t0)
        done.set()

    t = threading.Thread(target=worker)
    last = time.perf_counter()
    longest = 0.0
    t.start()
    while not done.is_set():
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    t.join()
    return longest, durations


def assert_gil_released(call, times=2, rounds=3, after_round=None):
    """Runs `call()` `times` times in another thread while this thread loops (longest_pause_during),
    up to `rounds` rounds: each call must be long enough (15 ms) to tell a held GIL from scheduling
    noise, and in one round this thread must never pause for half of the shortest call. With the GIL
    held through a call, every round pauses for a whole call and the assertion fails; one quiet
    round suffices because on a loaded 2-core machine the scheduler alone can pause a thread for
    10 ms or more. `after_round()`, if given, runs after each round, outside the timing (to check
    and free the round's results)."""
    seen = []
    for _ in range(rounds):
        longest, durations = longest_pause_during(call, times)
        if after_round is not None:
            after_round()
        assert len(durations) == times and min(durations) > 0.015, durations
        if longest < min(durations) / 2:
            return
        seen.append((longest, durations))
    raise AssertionError(f"this thread paused for half a call or more in each of {rounds} rounds "
                         f"(longest pause, call durations in s): {seen}")


def pytest_report_header(config):
    import tessera
    return [f"tessera {tessera.__version__} from {Path(tessera.__file__).parent}, SIMD target {tessera.simd_target()}"]


def pytest_configure(config):
    # Markers of numpy's own test files that test_family.py imports (numpy's conftest.py, not
    # installed by Debian, registers them), so that importing them does not warn.
    for marker in ("slow", "valgrind_error", "leaks_references", "thread_unsafe"):
        config.addinivalue_line("markers", f"{marker}: a marker of numpy's own tests")
    # Deprecation warnings of Debian's Dask 2022.12 and tornado, raised inside them.
    for message in ("distutils Version classes are deprecated", "make_current is deprecated"):
        config.addinivalue_line("filterwarnings", f"ignore:{message}:DeprecationWarning")
    config.addinivalue_line("markers", "cluster: starts a dask.distributed LocalCluster (-m 'not cluster' skips them)")


def read_expected_skips(path=HERE / "expected-skips"):
    """The listed skips: {test id relative to tests/python: reason}."""
    expected = {}
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            test_id, _, reason = line.strip().partition("  ")
            assert reason.strip(), f"expected-skips: {test_id} has no reason"
            expected[test_id] = reason.strip()
    return expected


def relative_id(nodeid):
    """A pytest node id relative to tests/python, wherever pytest was started."""
    marker = "tests/python/"
    return nodeid[nodeid.index(marker) + len(marker):] if marker in nodeid else nodeid


_skipped = []


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append(relative_id(report.nodeid))


def pytest_collectreport(report):
    if report.skipped:  # a whole module skipped (pytest.importorskip, a module-level skip)
        _skipped.append(relative_id(report.nodeid))


def unexpected_skips():
    expected = read_expected_skips()
    return [s for s in _skipped if s not in expected]


def pytest_terminal_summary(terminalreporter):
    unexpected = unexpected_skips()
    terminalreporter.write_line(f"skips: {len(_skipped) - len(unexpected)} listed in tests/python/expected-skips, "
                                f"{len(unexpected)} not listed")
    for s in unexpected:
        terminalreporter.write_line(f"UNEXPECTED SKIP (not in tests/python/expected-skips): {s}", red=True)


def pytest_sessionfinish(session, exitstatus):
    import pytest

    if unexpected_skips() and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
