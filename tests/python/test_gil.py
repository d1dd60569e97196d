"""The GIL is released while tessera works, on the paths docs/python.md names: a region of a Plan
(`Plan.execute_region`, with and without ``out``), which is what every tessera.dask task runs, and
a tessera.dask chunk computed on Dask's synchronous scheduler.

Each test runs one call of 15 ms or more in a worker thread while this thread loops, timing the
longest pause between its iterations: with the GIL held through the call, this thread would stop
for the whole call; released, it stops only for the GIL's switch interval (5 ms).
"""
import numpy as np

import tessera
import tessera.dask as td

from conftest import assert_gil_released

ROWS, COLS, REPS = 8, 1024, 16384  # a 32 KiB source tiled into a 512 MiB output


def source():
    return np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)


def test_gil_is_released_by_execute_region_into_out():
    src = source()
    plan = tessera.Plan(src.shape, (REPS, 1), np.float32, max_threads=1)
    out = np.empty((ROWS * REPS - 3, COLS), dtype=np.float32)
    np.copyto(out, 0)  # mapped before timing
    assert_gil_released(lambda: plan.execute_region(src, (3, 0), out.shape, out=out))
    assert np.array_equal(out[:ROWS - 3], src[3:]) and np.array_equal(out[-ROWS:], src)


def test_gil_is_released_by_execute_region_without_out():
    src = source()
    plan = tessera.Plan(src.shape, (REPS, 1), np.float32, max_threads=1)
    results = []

    def check_and_free():  # each result is 512 MiB
        assert results and all(r.shape == (ROWS * REPS, COLS) and np.array_equal(r[-ROWS:], src) for r in results)
        results.clear()

    assert_gil_released(lambda: results.append(plan.execute_region(src, (0, 0), (ROWS * REPS, COLS))),
                        after_round=check_and_free)


def test_gil_is_released_by_a_dask_task():
    src = source()
    x = td.tile(src, (REPS, 1), chunks=(ROWS * REPS, COLS))  # one output chunk: one task
    assert x.numblocks == (1, 1)
    results = []

    def check_and_free():  # each result is 512 MiB
        assert results and all(np.array_equal(r[-ROWS:], src) for r in results)
        results.clear()

    assert_gil_released(lambda: results.append(x.compute(scheduler="synchronous")), after_round=check_and_free)
