"""tessera's types: the stubs (lib/python/tessera/*.pyi, with py.typed) as the build directory holds
them (TESSERA_PYTHONPATH, where meson copies them beside the module), checked three ways:

- `mypy --strict` on tests/python/typed_user.py -- a typed user's code over every public function,
  numpy arrays, array-likes, torch tensors, out=, plans, tessera.torch and tessera.dask, whose
  `assert_type`s state what the stubs must give -- passes with no error, and mypy read tessera,
  tessera.torch and tessera.dask from the build directory's .pyi files (its -v log says which);
- `mypy --strict` on tests/python/typed_user_errors.py reports errors on exactly the lines marked
  `# E: <code>`, with that code (so the stubs are precise, not Any);
- `python -m mypy.stubtest tessera` (which also checks the submodules tessera.torch and
  tessera.dask) finds every public name of the runtime in the stubs and the same signatures
  (tests/python/stubtest-allowlist: what it may report, each with its reason) -- and fails on stubs
  with a parameter misnamed in each module;

and typed_user.py is run, checking that each result is what its static type says.

Installed mode (TESSERA_INSTALLED=1, tests/run's 'wheel' suite): the stubs are the installed ones
in site-packages, where mypy and stubtest find them as a user's mypy does (PEP 561: py.typed), with
no MYPYPATH (mypy refuses site-packages there).

Both stacks run all of it: the newest (mypy 2, numpy 2, torch 2) and Debian's (mypy 1.0.1, numpy
1.24, torch 1.13). Each mypy run analyses numpy's and torch's own types, the bulk of the time: the
two mypy runs share a cache of this run's own (the first pays: about 10 s on the newest stack, 35 s
on Debian's), each stubtest run pays again (about 40 s each on Debian's stack): stubtest reads the
stubs' own definitions, which a module fresh in mypy's cache does not keep, so it runs uncached.
The two stubtest runs start at once, in their own processes, when the module's first test starts,
and run beside the mypy runs (2 cores: 145 s for the module on Debian's stack one after another).
"""
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import mypy.api
import pytest

from conftest import BUILD_PYTHONPATH, INSTALLED

HERE = Path(__file__).resolve().parent
USER = HERE / "typed_user.py"
USER_ERRORS = HERE / "typed_user_errors.py"
ALLOWLIST = HERE / "stubtest-allowlist"
STUBS = {"tessera": "__init__.pyi", "tessera.torch": "torch.pyi", "tessera.dask": "dask.pyi"}


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("mypy-cache")


def run_mypy(path, cache, *flags):
    """mypy --strict on `path`, with this interpreter's packages and the build directory's tessera
    (MYPYPATH; installed mode: the installed one, no MYPYPATH); returns (stdout, stderr, exit status)."""
    old = os.environ.pop("MYPYPATH", None)
    if not INSTALLED:
        os.environ["MYPYPATH"] = str(BUILD_PYTHONPATH)
    try:
        return mypy.api.run(["--strict", "--no-pretty", "--no-color-output", "--no-error-summary",
                             "--python-executable", sys.executable, "--cache-dir", str(cache), *flags, str(path)])
    finally:
        os.environ.pop("MYPYPATH", None)
        if old is not None:
            os.environ["MYPYPATH"] = old


def errors_by_line(stdout, path):
    """{line: [error code, ...]} of mypy's errors in `path` (notes left out)."""
    found = {}
    for line in stdout.splitlines():
        m = re.match(r"(.*?):(\d+): error: .*\[([a-z-]+)\]$", line)
        if m:
            assert Path(m.group(1)).resolve() == path, line  # no error from another file (the stubs)
            found.setdefault(int(m.group(2)), []).append(m.group(3))
        else:
            assert ": note: " in line or not line.strip(), line
    return found


def test_typed_user_passes_mypy_strict_against_the_build_stubs(mypy_cache):
    stdout, stderr, status = run_mypy(USER, mypy_cache, "-v")
    assert status == 0 and stdout == "", stdout
    # Where mypy read each module from: "Parsing <file> (<module>)", or from its cache "Metadata
    # fresh for <module>: file <file>".
    for module, stub in STUBS.items():
        read = re.findall(rf"Parsing (\S+) \({re.escape(module)}\)|Metadata fresh for {re.escape(module)}: file (\S+)",
                          stderr)
        assert read, f"mypy's log does not say where it read {module} from"
        assert {Path(a or b).resolve() for a, b in read} == {BUILD_PYTHONPATH / "tessera" / stub}, (module, read)


def test_typed_user_errors_are_exactly_the_marked_lines(mypy_cache):
    expected = {}
    for number, line in enumerate(USER_ERRORS.read_text().splitlines(), 1):
        m = re.search(r"# E: ([a-z-]+)", line)
        if m:
            expected[number] = m.group(1)
    assert len(expected) >= 20
    stdout, _, status = run_mypy(USER_ERRORS, mypy_cache)
    assert status == 1
    found = errors_by_line(stdout, USER_ERRORS)
    assert sorted(found) == sorted(expected), stdout
    # One marked error per line; newer mypy may say more than one thing about it (a keyword that no
    # overload takes: "Unexpected keyword argument" and "No overload variant"), with the same code.
    assert {n: set(codes) for n, codes in found.items()} == {n: {code} for n, code in expected.items()}, stdout


def test_typed_user_runs():
    # At run time each result is checked against its static type (typed_user.expect).
    import tessera

    assert Path(tessera.__file__).resolve().parent == BUILD_PYTHONPATH / "tessera"
    runpy.run_path(str(USER), run_name="__main__")


def start_stubtest(package_dir, cwd):
    """Starts python -m mypy.stubtest tessera, with the runtime module and the stubs both from
    `package_dir` (a directory holding tessera/; in installed mode, site-packages: as installed);
    returns the running process (stdout and stderr piped)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    if not (INSTALLED and package_dir == BUILD_PYTHONPATH):
        env.update(PYTHONPATH=str(package_dir), MYPYPATH=str(package_dir))
    return subprocess.Popen([sys.executable, "-m", "mypy.stubtest", "--allowlist", str(ALLOWLIST), "tessera"],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# The copy of the package for test_stubtest_fails_on_a_wrong_stub: its stubs misname one parameter
# in each module. {stub file: (text, replacement)}
WRONG_STUBS = {"__init__.pyi": ("def tile_shape(shape: _Ints,", "def tile_shape(shap: _Ints,"),
               "torch.pyi": ("def broadcast_to(x: _torch.Tensor, shape:", "def broadcast_to(x: _torch.Tensor, size:"),
               "dask.pyi": ("def repeat(x: ArrayLike | _DaskArray, repeats:",
                            "def repeat(x: ArrayLike | _DaskArray, counts:")}


def wrong_stub_package(root):
    """Copies the build's package to root/site/tessera with WRONG_STUBS applied; returns root/site."""
    package = root / "site" / "tessera"
    shutil.copytree(BUILD_PYTHONPATH / "tessera", package, ignore=shutil.ignore_patterns("*.p", "__pycache__"))
    if (BUILD_PYTHONPATH / "tessera.libs").is_dir():  # a repaired wheel's libraries (RUNPATH $ORIGIN/../tessera.libs)
        shutil.copytree(BUILD_PYTHONPATH / "tessera.libs", package.parent / "tessera.libs")
    for name, (old, new) in WRONG_STUBS.items():
        text = (package / name).read_text()
        assert text.count(old) == 1, (name, old)
        (package / name).write_text(text.replace(old, new))
    return package.parent


@pytest.fixture(scope="module", autouse=True)
def stubtests(tmp_path_factory):
    """The two stubtest runs, started before the module's first test: {"build": on the build's
    package, "wrong": on wrong_stub_package}. Any still running at the module's end is killed."""
    wrong = tmp_path_factory.mktemp("stubtest-wrong")
    wrong_site = wrong_stub_package(wrong)  # before either starts: a failed copy leaves no process behind
    runs = {"build": start_stubtest(BUILD_PYTHONPATH, tmp_path_factory.mktemp("stubtest-build")),
            "wrong": start_stubtest(wrong_site, wrong)}
    yield runs
    for run in runs.values():
        if run.poll() is None:
            run.kill()
            run.communicate()


def finished(run):
    """(exit status, stdout, stderr) of a process of start_stubtest, waiting up to 10 minutes."""
    stdout, stderr = run.communicate(timeout=600)
    return run.returncode, stdout, stderr


def test_stubtest(stubtests):
    status, stdout, stderr = finished(stubtests["build"])
    assert status == 0, stdout + stderr
    # tessera, tessera.torch, tessera.dask (the stubs' modules) and tessera._tessera (private)
    assert re.search(r"Success: no issues found in 4 modules", stdout), stdout


def test_stubtest_fails_on_a_wrong_stub(stubtests):
    """The same check on a copy of the package whose stubs misname one parameter in each module
    (WRONG_STUBS): stubtest reports exactly those (so it does check tessera.torch and tessera.dask too)."""
    status, stdout, stderr = finished(stubtests["wrong"])
    assert status == 1, stdout + stderr
    reported = re.findall(r"^error: (\S+) is inconsistent", stdout, re.MULTILINE)
    assert sorted(reported) == ["tessera.dask.repeat", "tessera.tile_shape", "tessera.torch.broadcast_to"], stdout
