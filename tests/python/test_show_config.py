"""tessera.show_config(): the report's sections, keys and types, and its values checked against
sources independent of tessera's own accessors: the package's version and simd_target, the CPU's
flags, the process's affinity mask (os.sched_getaffinity, in a child process whose mask is narrowed
before oneTBB starts), the files the process maps (/proc/self/maps) and their sonames, the running
numpy's own headers and C version, the plans' streaming paths, the environment variables that
override tessera's defaults (in child processes), and Python's platform module."""
import inspect
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tessera
from conftest import BUILD_PYTHONPATH, ROOT, child_env

MIB = 1 << 20

# Every section and its keys with their types, in the order the report gives them.
LAYOUT = {
    "tessera": {"version": str},
    "SIMD Extensions": {"compiled": list, "supported": list, "dispatched": str, "highway_compiled_version": str},
    "oneTBB": {"version": str, "interface_version": int, "compiled_version": str,
               "compiled_interface_version": int, "default_concurrency": int, "max_concurrency": int},
    "Memory": {"streaming_threshold_bytes": int, "reduce_prefetch_bytes": int, "block_cache_limit_bytes": int,
               "block_cache_max_age_seconds": float},
    "Native Libraries": {"_tessera": str, "libtbb": str, "libhwy": str},
    "numpy": {"version": str, "runtime_abi_version": str, "runtime_api_version": str,
              "compiled_abi_version": str, "compiled_api_version": str, "target_api_version": str},
    "Python Information": {"version": str, "implementation": str, "executable": str},
}


def config():
    return tessera.show_config(mode="dicts")


def child_config(env_changes=None, before_import=""):
    """The dicts of show_config() in a new interpreter (this one, the build under test first on its
    path), with `env_changes` applied to the environment (None: unset) and `before_import` run
    before tessera is imported; also the files that child maps, from its /proc/self/maps."""
    env = child_env(env_changes)
    code = (before_import + "\n"
            "import json, tessera\n"
            "c = tessera.show_config(mode='dicts')\n"
            "rows = [line.split(None, 5) for line in open('/proc/self/maps')]\n"
            "maps = sorted({row[5].strip() for row in rows if len(row) == 6})\n"
            "print(json.dumps({'config': c, 'maps': maps, 'file': tessera.__file__}))\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    assert Path(result["file"]).resolve().parent == BUILD_PYTHONPATH / "tessera"
    return result["config"], set(result["maps"])


def mapped_files():
    """The files this process maps (the kernel's real paths)."""
    with open("/proc/self/maps") as f:
        return {parts[5].strip() for parts in (line.split(None, 5) for line in f) if len(parts) == 6}


def soname_version(path):
    """(major, minor or None) of a shared library's file name: libtbb.so.12.8 -> (12, 8); also a
    wheel's renamed copy, libtbb-1a2b3c4d.so.12.8."""
    m = re.search(r"\.so\.(\d+)(?:\.(\d+))?", os.path.basename(path))
    assert m, path
    return int(m.group(1)), (int(m.group(2)) if m.group(2) is not None else None)


def numpy_header_define(name):
    """The value of `#define name 0x...` in the running numpy's own headers."""
    inc = Path(np.get_include()) / "numpy"
    for header in ("_numpyconfig.h", "numpyconfig.h"):
        m = re.search(rf"^#define {name} (0x[0-9a-fA-F]+)\s*$", (inc / header).read_text(), re.M)
        if m:
            return int(m.group(1), 16)
    raise AssertionError(f"{name} is not in {inc}'s headers")


def test_signature_and_export():
    assert "show_config" in tessera.__all__
    assert str(inspect.signature(tessera.show_config)) == "(mode='stdout')"


def test_sections_keys_and_types():
    c = config()
    assert list(c) == list(LAYOUT)
    for section, keys in LAYOUT.items():
        assert list(c[section]) == list(keys), section
        for key, kind in keys.items():
            value = c[section][key]
            assert type(value) is kind, (section, key, value)
            if kind is list:
                assert value and all(type(v) is str and v for v in value), (section, key, value)
            if kind is str:
                assert value, (section, key)
    # A new dict each call: a caller may change it.
    c["tessera"]["version"] = "x"
    assert config()["tessera"]["version"] == tessera.__version__


def test_version_and_targets():
    c = config()
    assert c["tessera"]["version"] == tessera.__version__
    simd = c["SIMD Extensions"]
    assert simd["dispatched"] == tessera.simd_target()
    assert simd["dispatched"] in simd["supported"]  # usually the first (not SVE2_128 under Highway 1.0.3)
    # supported: the compiled targets this CPU has, in the same (best first) order.
    compiled = simd["compiled"]
    assert len(set(compiled)) == len(compiled)
    assert [t for t in compiled if t in simd["supported"]] == simd["supported"]
    assert "Unknown" not in compiled
    expect = os.environ.get("TESSERA_EXPECT_TARGET")  # tests/run's reading of /proc/cpuinfo
    if expect:
        assert simd["dispatched"] == expect
    # The CPU's own flags: a target supported needs its instructions.
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith(("flags", "Features")):
                flags = set(line.split(":", 1)[1].split())
                break
    needs = {"AVX3": {"avx512f", "avx512vl", "avx512dq", "avx512bw"}, "AVX2": {"avx2", "fma", "bmi2", "f16c"},
             "SSE4": {"sse4_1", "sse4_2", "pclmulqdq", "aes"}, "SSSE3": {"ssse3"}, "SVE": {"sve"}, "SVE2": {"sve2"}}
    for target in simd["supported"]:
        if target in needs and platform.machine() in ("x86_64", "aarch64"):
            assert needs[target] <= flags, (target, needs[target] - flags)
    # Highway's major version is libhwy's soname major.
    assert soname_version(c["Native Libraries"]["libhwy"])[0] == int(simd["highway_compiled_version"].split(".")[0])


def test_native_libraries_are_the_mapped_files():
    c = config()
    libs = c["Native Libraries"]
    maps = mapped_files()
    for name, path in libs.items():
        assert os.path.isabs(path) and os.path.isfile(path), (name, path)
        assert os.path.realpath(path) == path, (name, path)
        assert path in maps, (name, path)
    assert libs["_tessera"] == os.path.realpath(tessera._tessera.__file__)
    assert os.path.basename(libs["libtbb"]).startswith(("libtbb.so", "libtbb-"))
    assert os.path.basename(libs["libhwy"]).startswith(("libhwy.so", "libhwy-"))


def test_the_only_tbb_and_highway_a_fresh_process_maps():
    c, maps = child_config()
    libs = c["Native Libraries"]
    tbbs = {m for m in maps if re.match(r"libtbb(-[0-9a-f]+)?\.so", os.path.basename(m))}
    hwys = {m for m in maps if re.match(r"libhwy(-[0-9a-f]+)?\.so", os.path.basename(m))}
    assert tbbs == {libs["libtbb"]}
    assert hwys == {libs["libhwy"]}


def test_tbb_version_is_the_mapped_library():
    tbb = config()["oneTBB"]
    path = config()["Native Libraries"]["libtbb"]
    major, minor = soname_version(path)
    # oneTBB's interface version is soname major * 1000 + minor * 10 (12080: libtbb.so.12.8, 2021.8).
    assert tbb["interface_version"] // 1000 == major
    if minor is not None:
        assert tbb["interface_version"] % 1000 // 10 == minor
        assert int(tbb["version"].split(".")[1]) == minor
    assert re.fullmatch(r"\d{4}\.\d+(\.\d+)?\S*", tbb["version"])
    # The library runs code compiled against its headers: the same major, no older than them.
    assert tbb["compiled_interface_version"] // 1000 == major
    assert tbb["interface_version"] >= tbb["compiled_interface_version"]


def test_tbb_default_concurrency_is_the_affinity_mask():
    # oneTBB (2021) counts the CPUs of the process's affinity mask when it first starts (cgroup CPU
    # quotas are not counted), and keeps that number; nothing in this process narrows the mask.
    tbb = config()["oneTBB"]
    cpus = len(os.sched_getaffinity(0))
    assert tbb["default_concurrency"] == cpus
    assert tbb["max_concurrency"] == cpus  # this thread is in no arena of its own: the default's


def test_tbb_default_concurrency_of_a_narrowed_mask():
    # One CPU of this process's mask, set before tessera (and so oneTBB) is imported: oneTBB sees one.
    cpu = min(os.sched_getaffinity(0))
    c, _ = child_config(before_import=f"import os; os.sched_setaffinity(0, {{{cpu}}})")
    assert c["oneTBB"]["default_concurrency"] == 1
    assert c["oneTBB"]["max_concurrency"] == 1


def cache_sizes():
    """CPU 0's data or unified caches in Linux sysfs: (the highest level's bytes, level 2's bytes),
    0 where it does not say."""
    best, best_level, level2 = 0, 0, 0
    for index in range(8):
        d = Path(f"/sys/devices/system/cpu/cpu0/cache/index{index}")
        try:
            level, kind, size = (int((d / "level").read_text()), (d / "type").read_text().strip(),
                                 (d / "size").read_text().strip())
        except (OSError, ValueError):
            break
        if kind == "Instruction":
            continue
        unit = {"K": 1024, "M": MIB, "G": 1024 * MIB}.get(size[-1], 1)
        if level == 2:
            level2 = int(size.rstrip("KMG")) * unit
        if level >= best_level:
            best, best_level = int(size.rstrip("KMG")) * unit, level
    return best, level2


def cpuinfo(key):
    """The first value of `key` in Linux's /proc/cpuinfo (vendor_id, cpu family: a source other
    than the library's CPUID), "" where it does not say."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.split(":", 1)[0].strip() == key:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def cpu_vendor():
    """The CPU's vendor as Linux reports it, "" where it does not say."""
    return cpuinfo("vendor_id")


def intel_mesh_l3():
    """An Intel CPU whose last-level cache is over 64 MiB (a Xeon's mesh L3), per Linux."""
    return cpu_vendor() == "GenuineIntel" and cache_sizes()[0] > 64 * MIB


def test_streaming_threshold_is_where_plans_stream():
    t = config()["Memory"]["streaming_threshold_bytes"]
    if "TESSERA_STREAM_MIN_BYTES" not in os.environ:
        # 3/4 of the last-level cache (where an output still stays cached), clamped to 4-256 MiB;
        # on Intel CPUs whose last-level cache is over 64 MiB (a Xeon's mesh L3) four times the L2,
        # clamped the same way; 16 MiB where sysfs does not say.
        llc, l2 = cache_sizes()
        line = 4 * l2 if intel_mesh_l3() else llc // 4 * 3
        assert t == (min(max(line, 4 * MIB), 256 * MIB) if llc else 16 * MIB)

    def streams(n):
        return ".nt" in tessera.Plan((n,), 1, np.uint8).kernel_path

    assert streams(t) and streams(t + 4096)
    assert not streams(t - 1)
    c, _ = child_config({"TESSERA_STREAM_MIN_BYTES": "65536"})
    assert c["Memory"]["streaming_threshold_bytes"] == 65536


def test_reduce_prefetch_is_what_gradient_plans_prefetch():
    # show_config's distance and three gradient plans' prefetch in a new interpreter: nchw_bwd's
    # shape, smaller (lanes items of 4 rows of 512 B, 2 KiB, read row by row: prefetched
    # ceil(bytes / 2 KiB) items ahead where short rows take it, ceil(4 KiB / 2 KiB) along their
    # rows on Intel CPUs with a mesh L3),
    # column_bwd's (periodic items of one 64 B run:
    # ceil(bytes / 64) items ahead, wherever the distance is not 0) and bc_cols_bwd's, smaller
    # (periodic items of one 16 KiB run: ceil(bytes / 16 KiB) items ahead, where long runs take it).
    code = ("import re, tessera\n"
            "def ahead(d):\n"
            "    m = re.search(r'prefetched (\\d+) items ahead', d)\n"
            "    return m and m.group(1)\n"
            "nchw = tessera.Plan.tile_backward((8, 4, 256, 256), (8, 4, 128, 128), (1, 1, 2, 2), 'float32')\n"
            "column = tessera.Plan.tile_backward((4096, 16), (4096, 1), (1, 16), 'float32')\n"
            "bc_cols = tessera.Plan.sum_to_shape((256, 4096), (256, 1), 'float32')\n"
            "print(tessera.show_config(mode='dicts')['Memory']['reduce_prefetch_bytes'],\n"
            "      ahead(nchw.describe()), ahead(column.describe()), ahead(bc_cols.describe()),\n"
            "      re.search(r'items of up to (\\d+) elements', nchw.describe()).group(1))\n")

    item = []  # nchw's item in bytes: 4 rows of its strip (128 float32, or 64 where the target's
    # registers hold fewer: the planner's strips, kSplitRowBytes in lib/reduce.hpp)

    def child(value):  # value: TESSERA_PREFETCH_BYTES, None for unset
        out = subprocess.run([sys.executable, "-c", code], env=child_env({"TESSERA_PREFETCH_BYTES": value}),
                             check=True, capture_output=True, text=True).stdout.split()
        item.append(16 * int(out[-1]))
        return out[:-1]

    def nchw_ahead(distance):
        return str(-(-distance // item[-1]))

    assert child("0") == ["0", "None", "None", "None"]
    assert child("4096") == ["4096", nchw_ahead(4096), "64", "1"]  # the variable's distance for every kind of item
    # 16 KiB on AMD family 26 (short rows and runs) and on Intel CPUs with a mesh L3 (short and
    # long runs; short items read row by row 4 KiB ahead, along their rows), else none
    amd26 = cpu_vendor() == "AuthenticAMD" and int(cpuinfo("cpu family") or 0) >= 26
    got = child(None)
    expected = (["16384", nchw_ahead(16384), "256", "None"] if amd26 else
                ["16384", nchw_ahead(4096), "256", "1"] if intel_mesh_l3() else ["0", "None", "None", "None"])
    assert got == expected
    if "TESSERA_PREFETCH_BYTES" not in os.environ:
        assert config()["Memory"]["reduce_prefetch_bytes"] == int(expected[0])


def test_block_cache_limit_from_the_environment():
    limit = config()["Memory"]["block_cache_limit_bytes"]
    env = os.environ.get("TESSERA_ALLOC_CACHE_BYTES")
    if not env:
        assert limit == 256 * MIB  # the documented default
    c, _ = child_config({"TESSERA_ALLOC_CACHE_BYTES": "41943040"})
    assert c["Memory"]["block_cache_limit_bytes"] == 40 * MIB
    c, _ = child_config({"TESSERA_ALLOC_CACHE_BYTES": "0"})
    assert c["Memory"]["block_cache_limit_bytes"] == 0
    c, _ = child_config({"TESSERA_ALLOC_CACHE_BYTES": None})
    assert c["Memory"]["block_cache_limit_bytes"] == 256 * MIB


def test_numpy_versions():
    n = config()["numpy"]
    assert n["version"] == np.__version__
    for key in ("runtime_abi_version", "runtime_api_version", "compiled_abi_version", "compiled_api_version",
                "target_api_version"):
        assert re.fullmatch(r"0x[0-9a-f]{8}", n[key]), (key, n[key])
    v = {key: int(value, 16) for key, value in n.items() if key != "version"}
    # The running numpy's: its own headers say the same, and so does its C version call.
    assert v["runtime_abi_version"] == numpy_header_define("NPY_ABI_VERSION")
    assert v["runtime_api_version"] == numpy_header_define("NPY_API_VERSION")
    try:
        from numpy._core import _multiarray_umath
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath
    assert v["runtime_abi_version"] == _multiarray_umath._get_ndarray_c_version()
    assert v["runtime_abi_version"] >> 24 == int(np.__version__.split(".")[0])
    # The module's target: the NPY_TARGET_VERSION _tessera.cpp sets, as the running numpy's headers
    # define it; no newer than the headers it was compiled with or the numpy it runs on.
    source = (ROOT / "lib" / "python" / "tessera" / "_tessera.cpp").read_text()
    target_macro = re.search(r"^#define NPY_TARGET_VERSION (NPY_\w+)\s*$", source, re.M).group(1)
    assert v["target_api_version"] == numpy_header_define(target_macro)
    assert v["target_api_version"] <= v["compiled_api_version"]
    assert v["target_api_version"] <= v["runtime_api_version"]
    # Compiled against numpy 1.x's headers, a module does not import under numpy 2.
    assert v["compiled_abi_version"] >> 24 >= v["runtime_abi_version"] >> 24


def test_python_information():
    p = config()["Python Information"]
    assert p["version"] == platform.python_version() == "%d.%d.%d" % sys.version_info[:3]
    assert p["implementation"] == platform.python_implementation()
    assert p["executable"] == sys.executable


def parse_report(text):
    """The printed report read back: {section: {key: str, or list of str}}."""
    out, section, key = {}, None, None
    for line in text.splitlines():
        if not line.startswith(" "):
            assert line.endswith(":"), line
            section = out.setdefault(line[:-1], {})
        elif line.startswith("  - "):
            section[key].append(line[4:])
        else:
            m = re.fullmatch(r"  ([\w]+):(?: (.*?))?(?:  # (.*))?", line)
            assert m, line
            key = m.group(1)
            section[key] = m.group(2) if m.group(2) is not None else []
    return out


def test_stdout_prints_every_section_and_returns_none(capsys):
    assert tessera.show_config() is None
    printed = capsys.readouterr().out
    assert tessera.show_config("stdout") is None
    assert capsys.readouterr().out == printed
    report = parse_report(printed)
    c = config()
    assert list(report) == list(c)
    for section, values in c.items():
        assert list(report[section]) == list(values), section
        for key, value in values.items():
            if isinstance(value, list):
                assert report[section][key] == value, (section, key)
            else:
                assert report[section][key] == ("null" if value is None else str(value)), (section, key)
    assert re.search(r"^  streaming_threshold_bytes: \d+  # [\d.]+ MiB$", printed, re.M)


@pytest.mark.parametrize("mode", ["DICTS", "dict", "", None, 1, "json"])
def test_bad_mode_raises_naming_it(mode, capsys):
    with pytest.raises(ValueError) as e:
        tessera.show_config(mode)
    assert repr(mode) in str(e.value)
    assert capsys.readouterr().out == ""
