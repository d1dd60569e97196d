"""A fresh process's first calls (lib/parallel.hpp threads_for, lib/allocator.cpp): the first call
that could use threads runs on the calling thread alone below 16 MiB of work, and into an
allocating call's fresh pages below 256 MiB; the next one starts oneTBB's workers (the threads of
the process, /proc/self/task, counted in a fresh interpreter); the results equal numpy's either
way. Allocating calls of 4 to 32 MiB have the whole 2 MiB pages inside their output advised for
transparent huge pages (the mapping's VmFlags in /proc/self/smaps show ``hg``), as numpy advises
its own arrays."""
import json
import os
import subprocess
import sys

import pytest

from conftest import child_env


def run_child(code):
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


THREADS = """
import json, os, time
import numpy as np
import tessera
def threads():
    return len(os.listdir("/proc/self/task"))
A = np.arange(64 * 1024, dtype=np.float32).reshape(256, 256)   # 256 KiB
G = np.ones((1024, 256), np.float32)                          # 1 MiB of gradient
at_import = threads()
first = tessera.{first}
after_first = threads()
second = tessera.tile(A, (4, 1))                              # 1 MiB output: may use threads now
deadline = time.monotonic() + 5
while threads() == after_first and time.monotonic() < deadline:
    time.sleep(0.01)
ok = bool(np.array_equal(second, np.tile(A, (4, 1))) and np.array_equal(first, {expected}))
print(json.dumps({{"at_import": at_import, "after_first": after_first, "after_second": threads(), "ok": ok}}))
"""


@pytest.mark.parametrize("first, expected", [
    ("tile(A, (4, 1))", "np.tile(A, (4, 1))"),
    ("sum_to_shape(G, (1, 256))", "G.sum(0, keepdims=True)"),
    # 1 MiB of per-element counts, read in parts where threads may run (planning) and a 1 MiB
    # output: planning does not end the first call's rule, nor start threads under it.
    ("repeat(np.arange(131072, dtype=np.float32), np.arange(131072) % 5)",
     "np.repeat(np.arange(131072, dtype=np.float32), np.arange(131072) % 5)"),
])
def test_first_call_below_16_mib_starts_no_thread(first, expected):
    r = run_child(THREADS.format(first=first, expected=expected))
    assert r["ok"]
    assert r["after_first"] == r["at_import"], r
    if len(os.sched_getaffinity(0)) >= 2:
        assert r["after_second"] > r["after_first"], r   # the second call started the workers
    else:
        assert r["after_second"] == r["after_first"], r  # an arena of one: no workers ever


def test_first_call_of_16_mib_or_more_starts_the_workers():
    code = """
import json, os
import numpy as np
import tessera
before = len(os.listdir("/proc/self/task"))
A = np.ones((1024, 2048), np.float32)          # 8 MiB
out = tessera.tile(A, (3, 1))                  # 24 MiB: threads from the first call on
print(json.dumps({"before": before, "after": len(os.listdir("/proc/self/task")),
                  "ok": bool(np.array_equal(out, np.tile(A, (3, 1))))}))
"""
    r = run_child(code)
    assert r["ok"]
    if len(os.sched_getaffinity(0)) >= 2:
        assert r["after"] > r["before"], r
    else:
        assert r["after"] == r["before"], r


FRESH = """
import json, os, time
import numpy as np
import tessera
def threads():
    return len(os.listdir("/proc/self/task"))
A = np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024)
expected = np.tile(A, (4, 4))                                 # 64 MiB (numpy's: no tessera call)
before = threads()
if {fresh}:
    first = tessera.tile(A, (4, 4))                           # a new output: fresh pages
else:
    first = tessera.tile(A, (4, 4), out=np.ones_like(expected))  # pages numpy has touched
after_first = threads()
second = tessera.tile(A, (4, 4), out=np.zeros_like(expected))
deadline = time.monotonic() + 5
while threads() == after_first and time.monotonic() < deadline:
    time.sleep(0.01)
ok = bool(np.array_equal(first, expected) and np.array_equal(second, expected))
print(json.dumps({{"before": before, "after_first": after_first, "after_second": threads(), "ok": ok}}))
"""


@pytest.mark.parametrize("fresh", [True, False])
def test_first_call_into_fresh_pages_starts_no_thread(fresh):
    # A first call into an allocating call's fresh pages runs on the calling thread below 256 MiB
    # (two threads touching fresh pages first collapsed on KVM guests: threads_for); into pages
    # already touched it takes the threads from 16 MiB. The next call starts them either way.
    r = run_child(FRESH.format(fresh=fresh))
    assert r["ok"]
    two = len(os.sched_getaffinity(0)) >= 2
    if fresh or not two:
        assert r["after_first"] == r["before"], r
    else:
        assert r["after_first"] > r["before"], r
    if two:
        assert r["after_second"] > r["before"], r


def test_outputs_from_4_mib_are_advised_huge_pages():
    code = """
import json
import numpy as np
import tessera
def vmflags(address):
    lo = hi = None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and ":" not in head:
                lo, hi = (int(x, 16) for x in head.split("-"))
            elif line.startswith("VmFlags:") and lo <= address < hi:
                return line.split()[1:]
    return None
HUGE = 2 << 20
flags = {}
for mib in (4, 6, 16, 31):
    A = np.ones((mib * 1024, 256), np.uint8)
    out = tessera.tile(A, (1, 4))                       # mib * 1 MiB
    inside = (out.ctypes.data + HUGE - 1) // HUGE * HUGE
    assert inside + HUGE <= out.ctypes.data + out.nbytes
    flags[mib] = "hg" in vmflags(inside)
print(json.dumps(flags))
"""
    r = run_child(code)
    assert r == {"4": True, "6": True, "16": True, "31": True}
