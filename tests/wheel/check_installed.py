"""The repaired wheel, installed (tests/run's 'wheel' suite runs this with the fresh venv's python,
LD_LIBRARY_PATH unset, from outside the source tree):

  python check_installed.py WHEEL

- WHEEL's name and the installed dist-info's WHEEL file carry manylinux tags only;
- the installed extension tessera/_tessera*.so has $ORIGIN/../tessera.libs in its RUNPATH (or RPATH)
  and needs oneTBB and Highway by the names auditwheel gave its copies, which are in tessera.libs/;
- after `import tessera` and a call (checked against numpy.tile, large enough to start oneTBB's
  workers), every libtbb* and libhwy* this process maps (/proc/self/maps) is a file inside
  site-packages/tessera.libs, at least one of each, none from /usr/lib or /lib;
- the check can fail: a child that loads the system's libtbb.so.12 (ctypes) before `import tessera`
  must be reported by the same maps check (two oneTBB copies in one process, each its own pool).

`--maps-only` runs the import, the call and the maps check alone (the child of the last step).
Exits non-zero, with the reason, on the first failed check.
"""
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

SITE = Path(sysconfig.get_paths()["platlib"]).resolve()
LIBS = SITE / "tessera.libs"
MANYLINUX = re.compile(r"manylinux_\d+_\d+_x86_64|manylinux(1|2010|2014)_x86_64")


def fail(msg):
    print(f"check_installed: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def maps_check():
    """Imports tessera, runs one call, then checks the libtbb*/libhwy* this process maps."""
    import numpy as np

    import tessera

    if Path(tessera.__file__).resolve().parent != SITE / "tessera":
        fail(f"tessera came from {tessera.__file__}, not from {SITE / 'tessera'}")
    a = np.arange(4096 * 64, dtype=np.float32).reshape(4096, 64)
    if not np.array_equal(tessera.tile(a, (8, 4)), np.tile(a, (8, 4))):
        fail("tessera.tile differs from numpy.tile")
    mapped = set()
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split(None, 5)
            if len(fields) == 6 and fields[5].startswith("/"):
                mapped.add(fields[5].strip())
    native = sorted(p for p in mapped if re.match(r"lib(tbb|hwy)", Path(p).name))
    print("mapped oneTBB/Highway:", *native, sep="\n  ")
    for kind in ("libtbb", "libhwy"):
        if not any(Path(p).name.startswith(kind) for p in native):
            fail(f"no {kind}* among the mapped files")
    outside = [p for p in native if Path(p).resolve().parent != LIBS]
    if outside:
        fail(f"mapped from outside {LIBS}: {outside}")
    system = [p for p in mapped if p.startswith(("/usr/lib", "/lib")) and re.search(r"lib(tbb|hwy)", Path(p).name)]
    if system:
        fail(f"the system's oneTBB/Highway mapped: {system}")


def main(wheel):
    if "LD_LIBRARY_PATH" in os.environ:
        fail("LD_LIBRARY_PATH is set")
    # the tags: the file's name and the installed WHEEL metadata
    platforms = Path(wheel).name[:-len(".whl")].split("-")[-1].split(".")
    print("wheel:", Path(wheel).name, "platform tags:", platforms)
    if not all(MANYLINUX.fullmatch(p) for p in platforms):
        fail(f"{Path(wheel).name}: platform tags {platforms}, not all manylinux")
    from importlib.metadata import distribution

    dist = distribution("tessera")
    tags = [line.split(":", 1)[1].strip() for line in dist.read_text("WHEEL").splitlines() if line.startswith("Tag:")]
    print("installed tags:", tags)
    if not tags or not all(MANYLINUX.fullmatch(t.split("-")[-1]) for t in tags):
        fail(f"installed dist-info WHEEL tags {tags}, not all manylinux")
    # the wheel holds the package, the copied libraries and its metadata only: no C/C++ headers, no
    # libtessera (the module links tessera in; `meson install` installs the C/C++ library)
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    stray = [n for n in names if not n.startswith(("tessera/", "tessera.libs/", "tessera-"))
             or n.endswith((".h", ".hpp")) or "libtessera" in n]
    if stray or not any(n.startswith("tessera-") and ".dist-info/" in n for n in names):
        fail(f"{Path(wheel).name}: files beyond tessera/, tessera.libs/ and the dist-info: {stray or names}")

    # the extension's RUNPATH and needed libraries
    exts = list((SITE / "tessera").glob("_tessera*.so"))
    if len(exts) != 1:
        fail(f"extension modules in {SITE / 'tessera'}: {exts}")
    dyn = subprocess.run(["readelf", "-d", str(exts[0])], check=True, capture_output=True, text=True).stdout
    paths = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[(.*)\]", dyn)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", dyn)
    print(f"{exts[0].name}: RUNPATH/RPATH {paths}, NEEDED {needed}")
    if not any("$ORIGIN/../tessera.libs" in p.split(":") for p in paths):
        fail(f"{exts[0].name}: RUNPATH/RPATH {paths} lacks $ORIGIN/../tessera.libs")
    for kind in ("libtbb", "libhwy"):
        grafted = [n for n in needed if n.startswith(kind + "-")]  # auditwheel's renamed copy: libtbb-<hash>.so.12
        if not grafted:
            fail(f"{exts[0].name} needs no renamed {kind} (NEEDED {needed})")
        for n in grafted:
            if not (LIBS / n).is_file():
                fail(f"{n} is not in {LIBS}")
    print("tessera.libs:", *sorted(p.name for p in LIBS.iterdir()))

    maps_check()

    # the maps check fails when a system oneTBB is in the process
    code = "import ctypes; ctypes.CDLL('libtbb.so.12'); import runpy, sys; sys.argv = [sys.argv[0], '--maps-only']; " \
           f"runpy.run_path({__file__!r}, run_name='__main__')"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=SITE.anchor)
    if child.returncode == 0 or "the system's oneTBB/Highway mapped" not in child.stderr and "mapped from outside" not in child.stderr:
        fail(f"control: a process that loaded the system's libtbb.so.12 passed the maps check:\n{child.stdout}{child.stderr}")
    print("control (system libtbb.so.12 loaded first) fails the maps check as it must:", child.stderr.strip().splitlines()[-1])
    print("check_installed: PASS")


if __name__ == "__main__":
    if sys.argv[1:] == ["--maps-only"]:
        maps_check()
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        fail("usage: check_installed.py WHEEL | --maps-only")
