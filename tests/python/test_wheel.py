"""The wheel: `python3 -m build --wheel --no-isolation` (meson-python, offline) makes a wheel that
installs into a `python3 -m venv --system-site-packages` venv and imports there, from the venv."""
import os
import shutil
import subprocess
import sys
import textwrap

from conftest import ROOT


def run(cmd, **kwargs):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TESSERA_PYTHONPATH")}
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, **kwargs)
    assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def test_wheel_installs_and_imports_in_a_venv(tmp_path):
    dist = tmp_path / "dist"
    # build/wheel keeps meson-python's build directory between runs (incremental rebuilds).
    # meson-python 0.12 reconfigures (instead of setting up) whenever its native file
    # (.mesonpy-native-file.ini, beside pyproject.toml) is already there: without a configured
    # build/wheel, remove both so that it sets up anew.
    builddir = ROOT / "build" / "wheel"
    if not (builddir / "meson-private" / "coredata.dat").exists():
        shutil.rmtree(builddir, ignore_errors=True)
        (ROOT / ".mesonpy-native-file.ini").unlink(missing_ok=True)
    run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist,
         f"-Cbuilddir={builddir}", ROOT], cwd=tmp_path)
    wheels = list(dist.glob("tessera-*.whl"))
    assert len(wheels) == 1, wheels
    names = subprocess.run([sys.executable, "-m", "zipfile", "-l", wheels[0]], capture_output=True, text=True).stdout
    assert "tessera/__init__.py" in names and "tessera/_tessera." in names
    assert "tessera/torch.py" in names  # tessera.torch
    assert "tessera/dask.py" in names  # tessera.dask
    assert "tessera.h" not in names and "libtessera.so" not in names  # the wheel is the module only

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    python = venv / "bin" / "python"
    run([python, "-m", "pip", "install", "--no-index", "--no-deps", "--no-build-isolation", wheels[0]])
    out = run([python, "-c", textwrap.dedent("""
        import numpy as np, tessera
        a = np.arange(6, dtype=np.int32).reshape(2, 3)
        assert np.array_equal(tessera.tile(a.T, (2, 2)), np.tile(a.T, (2, 2)))
        import torch, tessera.torch
        x = torch.ones(2, 3, requires_grad=True)
        tessera.torch.tile(x, (2, 1)).sum().backward()
        assert torch.equal(x.grad, torch.full((2, 3), 2.0))
        assert tessera.torch.__file__.startswith(tessera.__path__[0])
        print(tessera.__file__)
        print(tessera.__version__)
    """)], cwd=tmp_path)
    where, version = out.split()
    assert where.startswith(str(venv)), where
    import tessera
    assert version == tessera.__version__
