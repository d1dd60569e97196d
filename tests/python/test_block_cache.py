"""The block cache of freed large outputs (lib/allocator.cpp) from Python: after the last allocating
call, the process's resident memory (/proc/self/statm) returns to where it was within seconds,
without another call; set_block_cache_limit bounds and disables the cache (show_config reports the
bound); set_block_cache_max_age and both setters' argument errors; a bad TESSERA_ALLOC_CACHE_BYTES
is reported, naming the value. Each measurement runs in a fresh interpreter, so that nothing else
of the test session is resident or kept."""
import json
import subprocess
import sys

import numpy as np
import pytest

import tessera
from conftest import child_env

MIB = 1 << 20


def run_child(code, env_changes=None):
    """Runs `code` in a new interpreter (the build under test first on its path); returns
    (the JSON it printed last on stdout, its stderr)."""
    env = child_env(env_changes)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


PRELUDE = """
import json, os, time
import numpy as np
import tessera
PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1 << 20
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE
def memory():
    return tessera.show_config(mode="dicts")["Memory"]
one = np.ones(MIB, np.uint8)
tessera.tile(one, 36)  # oneTBB's threads started, the cache set up
tessera.set_block_cache_limit(0)
tessera.set_block_cache_limit(256 * MIB)
"""


def test_resident_memory_returns_after_the_last_call():
    # 60 allocating calls of 36-196 MiB (a few alive at once), then no call: with a max age of
    # 1 s the kept blocks are released on time and the resident set returns to the baseline.
    out, _ = run_child(PRELUDE + """
tessera.set_block_cache_max_age(1)
base = rss()
alive, peak = [], 0
for i in range(60):
    alive.append(tessera.tile(one, 36 + i * 37 % 161))
    alive = alive[-3:]
    peak = max(peak, rss())
del alive
after = rss()
t0 = time.monotonic()
samples = []
while time.monotonic() - t0 < 15:
    samples.append((round(time.monotonic() - t0, 2), rss()))
    if samples[-1][1] <= base + 6 * MIB:
        break
    time.sleep(0.05)
print(json.dumps({"base": base, "peak": peak, "after": after, "samples": samples}))
""")
    base, after, samples = out["base"], out["after"], out["samples"]
    assert out["peak"] > base + 200 * MIB
    assert after > base + 64 * MIB, out  # blocks were kept and resident: the measure sees them
    t, settled = samples[-1]
    assert settled <= base + 6 * MIB, (base / MIB, after / MIB, samples[-5:])
    assert t <= 15


def test_limit_bounds_and_disables_the_cache():
    out, _ = run_child(PRELUDE + """
tessera.set_block_cache_max_age(60)
base = rss()
a = [tessera.tile(one, 40) for _ in range(3)]
del a
kept3 = rss()
tessera.set_block_cache_limit(100 * MIB)  # two of the three 40 MiB blocks fit
kept2 = rss()
limit2 = memory()["block_cache_limit_bytes"]
tessera.set_block_cache_limit(0)  # released before it returns
none = rss()
a = tessera.tile(one, 40); del a  # disabled: released at once
disabled = rss()
print(json.dumps({"base": base, "kept3": kept3, "kept2": kept2, "none": none, "disabled": disabled,
                  "limit2": limit2, "limit0": memory()["block_cache_limit_bytes"],
                  "age": memory()["block_cache_max_age_seconds"]}))
""")
    mib = {k: (v - out["base"]) / MIB for k, v in out.items() if k in ("kept3", "kept2", "none", "disabled")}
    assert mib["kept3"] > 110, mib
    assert 74 < mib["kept2"] < 86, mib
    assert mib["none"] < 6, mib
    assert mib["disabled"] < 6, mib
    assert out["limit2"] == 100 * MIB
    assert out["limit0"] == 0
    assert out["age"] == 60.0


def test_setters_report_through_show_config_and_check_their_arguments():
    memory = tessera.show_config(mode="dicts")["Memory"]
    limit, age = memory["block_cache_limit_bytes"], memory["block_cache_max_age_seconds"]
    assert age == 10.0  # the documented default
    try:
        tessera.set_block_cache_limit(np.int64(48 * MIB))
        tessera.set_block_cache_max_age(np.float32(2.5))
        memory = tessera.show_config(mode="dicts")["Memory"]
        assert memory["block_cache_limit_bytes"] == 48 * MIB
        assert memory["block_cache_max_age_seconds"] == 2.5
        for bad in (-1, 2**64):
            with pytest.raises(ValueError, match=str(bad)):
                tessera.set_block_cache_limit(bad)
        for bad in (1.5, "1", None, True):
            with pytest.raises(TypeError, match="nbytes"):
                tessera.set_block_cache_limit(bad)
        for bad in (-0.5, 86401, float("nan"), float("inf")):
            with pytest.raises(ValueError, match=repr(float(bad))):
                tessera.set_block_cache_max_age(bad)
        for bad in ("1", None, 1j, False):
            with pytest.raises(TypeError, match="seconds"):
                tessera.set_block_cache_max_age(bad)
        memory = tessera.show_config(mode="dicts")["Memory"]
        assert memory["block_cache_limit_bytes"] == 48 * MIB  # unchanged by the errors
        assert memory["block_cache_max_age_seconds"] == 2.5
    finally:
        tessera.set_block_cache_limit(limit)
        tessera.set_block_cache_max_age(age)


@pytest.mark.parametrize("value", ["256MiB", "-1", "1e9", "99999999999999999999999"])
def test_a_bad_environment_value_is_reported_and_the_default_taken(value):
    out, err = run_child("import json, tessera\n"
                         "print(json.dumps(tessera.show_config(mode='dicts')['Memory']))",
                         {"TESSERA_ALLOC_CACHE_BYTES": value})
    assert out["block_cache_limit_bytes"] == 256 * MIB
    assert f'TESSERA_ALLOC_CACHE_BYTES="{value}"' in err and "warning" in err, err


def test_a_fork_child_allocates():
    out, _ = run_child(PRELUDE + """
tessera.set_block_cache_max_age(1)
a = tessera.tile(one, 40); del a  # kept: the reaper sleeps on it
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    ok = False
    try:
        signal = __import__("signal"); signal.alarm(60)
        b = tessera.tile(one, 48, max_threads=1)
        ok = b.shape == (48 * MIB,) and bool((b[::4096] == 1).all())
        del b
        base = rss()
        t0 = time.monotonic()
        while rss() > base - 40 * MIB and time.monotonic() - t0 < 15:
            time.sleep(0.05)
        ok = ok and rss() <= base - 40 * MIB
    finally:
        os.write(w, b"1" if ok else b"0")
        os._exit(0)
_, status = os.waitpid(pid, 0)
print(json.dumps({"child": os.read(r, 1).decode(), "status": status}))
""")
    assert out == {"child": "1", "status": 0}
