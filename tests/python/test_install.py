#!/usr/bin/env python3
"""python.install: the package as a user gets it.

usage: test_install.py SRCDIR WORKDIR VECTORS_DIR   (run by the test env's python)

1. `pip wheel --no-build-isolation --no-deps SRCDIR` with this interpreter
   (which has scikit-build-core; no download: offline once python.env ran),
   i.e. scikit-build-core running the repository's CMake;
2. a fresh venv (--system-site-packages only for numpy: nothing of sheaf is
   visible there), `pip install --no-index` of that wheel;
3. in that venv, from a neutral directory, without SHEAF_LIBRARY/PYTHONPATH:
   `import sheaf` (no mpi4py imported), the library loaded is the wheel's, and
   a vector read back with the manifest's SHA-256.
Prints each step; exit 0 on success."""
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    if r.returncode != 0:
        print(r.stdout[-4000:], r.stderr[-4000:])
        sys.exit(f"FAIL: exit {r.returncode}")
    return r.stdout


def main():
    src, work, vdir = (os.path.abspath(a) for a in sys.argv[1:4])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = {k: v for k, v in os.environ.items() if k not in ("SHEAF_LIBRARY", "PYTHONPATH")}
    wheels = os.path.join(work, "wheels")
    # a build directory kept between runs (beside WORKDIR): a rerun rebuilds only what changed
    bdir = work.rstrip("/") + "-skbuild"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
         f"--config-settings=build-dir={bdir}", "-w", wheels, src], env=env, cwd=work)
    whl = glob.glob(os.path.join(wheels, "sheaf-*.whl"))
    assert len(whl) == 1, whl
    print("wheel:", os.path.basename(whl[0]))
    venv = os.path.join(work, "venv")
    base = json.load(open(os.path.join(os.path.dirname(os.path.dirname(sys.executable)), "..", "info.json")))["base"]
    run([base, "-m", "venv", "--system-site-packages", venv], env=env)
    py = os.path.join(venv, "bin", "python")
    if subprocess.run([py, "-c", "import numpy"], capture_output=True).returncode != 0:
        run([py, "-m", "pip", "install", "-q", "numpy"], env=env)  # the base has none: from the registry
    run([py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", whl[0]], env=env)
    man = json.load(open(os.path.join(vdir, "MANIFEST.json")))["vectors"]["multi6"]
    code = f"""
import hashlib, os, sys, sheaf
assert os.path.dirname(sheaf._lib.lib()._name) == os.path.dirname(sheaf.__file__), sheaf._lib.lib()._name
assert sheaf.__file__.startswith({venv!r}), sheaf.__file__
with sheaf.open({os.path.join(vdir, 'multi6.sion')!r}) as c:
    got = [hashlib.sha256(c.read_task(t)).hexdigest() for t in range(c.ntasks)]
assert got == {[t['sha256'] for t in man['tasks']]!r}, got
assert not [m for m in sys.modules if m.startswith('mpi4py')]
print('import sheaf ok:', sheaf.__version__, sheaf.library_version())
"""
    print(run([py, "-c", code], env=env, cwd=work).strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
