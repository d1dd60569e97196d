# The "fence" suite of tests/mutants/run, a gdb script (x86-64):
#
#   FENCE_LIB=<build>/lib/libtessera.so.0 FENCE_PATHS_HPP=<src>/lib/paths.hpp \
#     gdb -batch -nx -x fence_check.py --args <fence_driver>
#
# No output test can see a missing store fence after non-temporal stores on x86: the thread that
# wrote them reads them back in order, and the threads of a parallel call hand their ranges over
# through oneTBB's locked instructions. So this checks the instruction stream instead: it puts a
# breakpoint on every non-temporal store (movnt*) and every store fence (sfence, mfence) in
# libtessera and tracks, per thread, whether a non-temporal store is still unfenced; when the
# driver's call returns (fence_mark), no thread may have one. Each case must also have executed
# at least one non-temporal store (otherwise it checked nothing), and every streaming executor path
# that paths.hpp's kPathInfo lists (the names with ".nt") must have had a case (a new streaming path
# without one fails the check, naming it). Prints one line per case and "fence check: OK" or
# "fence check: FAILED".
import os
import re
import subprocess

import gdb

LIB = os.environ['FENCE_LIB']
PATHS_HPP = os.environ['FENCE_PATHS_HPP']
NT = re.compile(r'^v?movnt')
FENCE = ('sfence', 'mfence')

nt_sites, fence_sites = [], []
dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', LIB], check=True, capture_output=True, text=True).stdout
for line in dis.splitlines():
    m = re.match(r'\s*([0-9a-f]+):\s+(\S+)', line)
    if not m:
        continue
    if NT.match(m.group(2)):
        nt_sites.append(int(m.group(1), 16))
    elif m.group(2) in FENCE:
        fence_sites.append(int(m.group(1), 16))
nm = subprocess.run(['nm', '-D', '--defined-only', LIB], check=True, capture_output=True, text=True).stdout
anchor = next(int(l.split()[0], 16) for l in nm.splitlines() if l.split()[-1].startswith('tessera_tile_ex'))

# The streaming paths the library has: paths.hpp's kPathInfo entries {"name", Kernel::..., ...}.
with open(PATHS_HPP) as f:
    streaming = sorted({m.group(1) for m in re.finditer(r'\{"([a-z0-9.]+)", Kernel::', f.read()) if '.nt' in m.group(1)})
covered = set()

pending = {}      # thread number -> a non-temporal store not yet followed by a fence
stores = [0]      # non-temporal stores since the last mark
fences = [0]
failures = []
cases = [0]


class Nt(gdb.Breakpoint):
    def stop(self):
        pending[gdb.selected_thread().num] = True
        stores[0] += 1
        return False


class Fence(gdb.Breakpoint):
    def stop(self):
        pending[gdb.selected_thread().num] = False
        fences[0] += 1
        return False


class Mark(gdb.Breakpoint):
    def stop(self):
        case = int(gdb.parse_and_eval('(int)$rdi'))  # fence_mark(case_id, path): the driver has no debug info
        path = gdb.parse_and_eval('(const char *)$rsi').string()
        if case >= 0:
            cases[0] += 1
            covered.add(path)
            unfenced = sorted(t for t, p in pending.items() if p)
            verdict = 'ok'
            if stores[0] == 0:
                verdict = 'NO NON-TEMPORAL STORE (the check saw nothing)'
            elif unfenced:
                verdict = f'UNFENCED non-temporal stores on thread(s) {unfenced}'
            if verdict != 'ok':
                failures.append(f'case {case} {path}: {verdict}')
            print(f'fence: case {case:2d} {path:24s} {stores[0]:6d} nt stores, {fences[0]:4d} fences: {verdict}')
        else:
            base = int(gdb.parse_and_eval('(long)&tessera_tile_ex')) - anchor
            for a in nt_sites:
                Nt(f'*{base + a:#x}', internal=True)
            for a in fence_sites:
                Fence(f'*{base + a:#x}', internal=True)
            print(f'fence: {len(nt_sites)} non-temporal store sites, {len(fence_sites)} fence sites in {LIB}')
        pending.clear()
        stores[0] = fences[0] = 0
        return False


gdb.execute('set pagination off')
gdb.execute('set confirm off')
gdb.execute('set print thread-events off')
gdb.execute('set startup-with-shell off')
Mark('fence_mark', internal=True)
try:
    gdb.execute('run')
    code = int(gdb.parse_and_eval('$_exitcode'))
except gdb.error as e:
    code = -1
    failures.append(f'the driver did not exit normally: {e}')
if code != 0:
    failures.append(f'fence_driver exited with status {code}')
if not nt_sites or not fence_sites:
    failures.append(f'{len(nt_sites)} non-temporal store sites and {len(fence_sites)} fences in the library')
if cases[0] == 0:
    failures.append('no case ran')
if not streaming:
    failures.append(f'no streaming path found in {PATHS_HPP} (its kPathInfo table changed? update fence_check.py)')
for path in streaming:
    if path not in covered:
        failures.append(f'streaming path {path} (lib/paths.hpp) had no case that ran: add one to tests/mutants/fence_driver.c')
for f in failures:
    print(f'fence: {f}')
print(f'fence check: {"FAILED" if failures else "OK"} ({cases[0]} cases)')
