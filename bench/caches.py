"""The last-level cache's size and the copies that keep a benchmark's reads out of it; the CPU's
name for the tables' headers (cpu_model).

bench/python_bench.py and bench/sweep.py rotate each timed call among rotation_copies() copies of
its input (made by copies()), as tile_bench does (bench/limit_loops.h: the same rule and the same
sysfs files), so that the `read` limit, tessera and its peers all read their input from DRAM.
"""
import os
import platform

SYSFS_CACHE = "/sys/devices/system/cpu/cpu0/cache"
UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


def parse_size(text):
    """Bytes of a sysfs cache size such as '32768K' (units K, M, G of 1024); ValueError if not one."""
    text = text.strip()
    digits = text.rstrip("KMG")
    if not digits.isdigit() or text[len(digits):] not in UNITS:
        raise ValueError(f"not a cache size: {text!r}")
    return int(digits) * UNITS[text[len(digits):]]


def last_level_cache_bytes(root=SYSFS_CACHE):
    """The size in bytes of the highest-level data or unified cache of cpu0, from root/index*/{level,
    type,size}. sysconf's LEVEL3_CACHE_SIZE is not used: glibc gives the whole package's L3 there (384
    MiB on a 12-CCD EPYC) where a core uses its CCX's 32 MiB. RuntimeError naming root if none can be
    read: a limit that cannot be checked against the cache must not be reported."""
    best_level, best = 0, 0
    try:
        names = sorted(n for n in os.listdir(root) if n.startswith("index"))
    except OSError as e:
        raise RuntimeError(f"cannot list {root}: {e}") from e
    for name in names:
        d = os.path.join(root, name)
        try:
            with open(os.path.join(d, "level")) as f:
                level = int(f.read())
            with open(os.path.join(d, "type")) as f:
                kind = f.read().strip()
            with open(os.path.join(d, "size")) as f:
                size = parse_size(f.read())
        except (OSError, ValueError) as e:
            raise RuntimeError(f"cannot read the cache description in {d}: {e}") from e
        if kind != "Instruction" and level > best_level:
            best_level, best = level, size
    if not best:
        raise RuntimeError(f"no data or unified cache size in {root}/index*/")
    return best


def rotation_copies(nbytes, llc_bytes):
    """Copies of an nbytes input to rotate among so that the others, read since a copy's previous read,
    span at least twice the last-level cache (at least 2); 1 from 8x the cache up, where a byte's
    reuse distance (the buffer itself) is already twice that of two alternating 64 MiB buffers in a
    32 MiB cache, which read at DRAM's speed (and two 4 GiB copies would not fit beside the rest)."""
    if nbytes >= 8 * llc_bytes:
        return 1
    if nbytes <= 0:
        return 2
    return max(2, -(-2 * llc_bytes // nbytes) + 1)


def copies(np, a, count):
    """count C-contiguous copies of array a, views of one array (numpy advises MADV_HUGEPAGE for arrays
    of 4 MiB and more, so the copies are on the pages of the kind the C++ benchmark's are)."""
    block = np.empty((count,) + a.shape, dtype=a.dtype)
    block[...] = a
    return [block[i] for i in range(count)]


def cpu_model():
    """The CPU's name as Linux reports it (/proc/cpuinfo's model name), else platform's, else "?"."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"
