#!/usr/bin/env python3
"""genload.py - Pynamic-like loading workloads for the loader measurement bed.

    genload.py OUT [--libs N] [--lib-dirs D] [--chain K] [--lib-kb KB]
                   [--ext M] [--py M] [--py-dirs P] [--python EXE] [-j J] [--force]

Builds, with cc, under OUT/tree (the directory a test mounts through countfs):
  lib/d0 .. lib/d{D-1}/libldb{i}.so  N shared libraries; library i lives in
        directory i % D; library i calls library i-1 unless i % K == 0
        (dependency chains of length K, recorded as DT_NEEDED); each has a
        function ldb{i}() the driver calls, so every library is really loaded
  lib/d{D-1}/libldbdl.so               loaded with dlopen after main
  bin/cdriver                           linked against all N libraries
  py/p0 .. py/p{P-1}/ldbext{i}<EXT> and ldbpy{i}.py (+ compiled .pyc)
        M C extension modules and M pure modules, module i in directory i % P
  bin/pydriver.py                       imports all of them, calls each
and OUT/manifest.json: the parameters, LD_LIBRARY_PATH and PYTHONPATH (as
paths relative to the tree), every file with its size and home directory,
and the expected sums the drivers print. Sources and objects go to OUT/src.
Nothing is rebuilt when OUT/manifest.json has the same parameters (unless
--force). Exit 0, or 1 with a message.
"""
import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys

GEN_VERSION = 3  # changes when the generated sources change (forces a rebuild)

CDRIVER = r'''
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
%(decls)s
static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
int main(void)
{
    long long t_main = now_ns();
    unsigned long long sum = 0;
%(calls)s
    void *h = dlopen("libldbdl.so", RTLD_NOW);
    unsigned long long (*f)(void) = h ? (unsigned long long (*)(void))dlsym(h, "ldbdl") : NULL;
    if (!f) {
        fprintf(stderr, "cdriver: dlopen libldbdl.so: %%s\n", dlerror());
        return 1;
    }
    unsigned long long dl = f();
    /* one write: the lines of concurrent processes on one pipe stay whole */
    char line[256];
    int n = snprintf(line, sizeof line, "LDBED pid=%%d main_ns=%%lld done_ns=%%lld sum=%%llu dl=%%llu\n",
                     (int)getpid(), t_main, now_ns(), sum, dl);
    return write(1, line, (size_t)n) == n ? 0 : 1;
}
'''

PYDRIVER = r'''import os, sys, time
t_main = time.time_ns()
import importlib
n_ext, n_py = %(n_ext)d, %(n_py)d
s = 0
for i in range(n_ext):
    s += importlib.import_module("ldbext%%d" %% i).f()
for i in range(n_py):
    s += importlib.import_module("ldbpy%%d" %% i).f()
# one write: the lines of concurrent processes on one pipe stay whole
os.write(1, ("LDBED pid=%%d main_ns=%%d done_ns=%%d sum=%%d\n"
             %% (os.getpid(), t_main, time.time_ns(), s)).encode())
'''

EXTMOD = r'''#define PY_SSIZE_T_CLEAN
#include <Python.h>
static PyObject *f(PyObject *self, PyObject *args) { return PyLong_FromLong(%(v)d); }
static PyMethodDef methods[] = {{"f", f, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "ldbext%(i)d", NULL, -1, methods};
PyMODINIT_FUNC PyInit_ldbext%(i)d(void) { return PyModule_Create(&mod); }
'''


def lib_value(i):
    return 1000 + i


def lib_source(i, dep, kb):
    pad = ""
    if kb:
        pad = "const unsigned char ldb%d_pad[%d] = {1};\n" % (i, kb * 1024)
    body = "%dULL" % lib_value(i)
    decl = ""
    if dep is not None:
        decl = "unsigned long long ldb%d(void);\n" % dep
        body += " + ldb%d()" % dep
    return "%s%sunsigned long long ldb%d(void) { return %s; }\n" % (pad, decl, i, body)


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s\n%s" % (" ".join(cmd), r.stdout))


def build_libs(a, src, tree, pool):
    """the N libraries in dependency order (a library links its dependency)"""
    cc = os.environ.get("CC", "cc")
    dirs = ["lib/d%d" % k for k in range(a.lib_dirs)]
    for d in dirs:
        os.makedirs(os.path.join(tree, d), exist_ok=True)
    home = [i % a.lib_dirs for i in range(a.libs)]
    dep = [None if i % a.chain == 0 else i - 1 for i in range(a.libs)]

    def one(i):
        c = os.path.join(src, "libldb%d.c" % i)
        with open(c, "w") as f:
            f.write(lib_source(i, dep[i], a.lib_kb))
        cmd = [cc, "-O1", "-fPIC", "-shared", "-o",
               os.path.join(tree, dirs[home[i]], "libldb%d.so" % i), c]
        if dep[i] is not None:
            cmd += ["-L" + os.path.join(tree, dirs[home[dep[i]]]), "-lldb%d" % dep[i]]
        run(cmd)
    # chains are independent of each other: build chain heads' levels in waves
    for level in range(a.chain):
        list(pool.map(one, [i for i in range(a.libs) if i % a.chain == level]))
    c = os.path.join(src, "libldbdl.c")
    with open(c, "w") as f:
        f.write("unsigned long long ldbdl(void) { return 7ULL; }\n")
    run([cc, "-O1", "-fPIC", "-shared", "-o",
         os.path.join(tree, dirs[-1], "libldbdl.so"), c])
    os.makedirs(os.path.join(tree, "bin"), exist_ok=True)
    c = os.path.join(src, "cdriver.c")
    with open(c, "w") as f:
        f.write(CDRIVER % {
            "decls": "".join("unsigned long long ldb%d(void);\n" % i for i in range(a.libs)),
            "calls": "".join("    sum += ldb%d();\n" % i for i in range(a.libs))})
    cmd = [cc, "-O1", "-o", os.path.join(tree, "bin", "cdriver"), c]
    cmd += ["-L" + os.path.join(tree, d) for d in dirs]
    cmd += ["-Wl,--no-as-needed"] + ["-lldb%d" % i for i in range(a.libs)] + ["-ldl"]
    run(cmd)
    total = 0
    for i in range(a.libs):
        j = i
        while j is not None:
            total += lib_value(j)
            j = dep[j]
    files = [{"path": "%s/libldb%d.so" % (dirs[home[i]], i), "name": "libldb%d.so" % i,
              "dir": home[i], "dep": dep[i]} for i in range(a.libs)]
    files.append({"path": "%s/libldbdl.so" % dirs[-1], "name": "libldbdl.so",
                  "dir": a.lib_dirs - 1, "dep": None, "dlopen": True})
    return {"lib_dirs": dirs, "libs": files, "c_sum": total, "c_dl": 7}


def py_info(python):
    out = subprocess.run([python, "-c",
                          "import sysconfig,sys;print(sysconfig.get_paths()['include']);"
                          "print(sysconfig.get_config_var('EXT_SUFFIX'));"
                          "print(sys.implementation.cache_tag);print(sys.executable)"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout.split("\n")
    return out[0], out[1], out[2], out[3]


def build_py(a, src, tree, pool):
    """M extension modules and M .py modules (compiled to .pyc) over P dirs"""
    cc = os.environ.get("CC", "cc")
    # the interpreter itself, not a wrapper script such as a pyenv shim (which
    # would start helper processes that search LD_LIBRARY_PATH too)
    inc, suffix, tag, exe = py_info(a.python)
    if not os.path.exists(os.path.join(inc, "Python.h")):
        raise RuntimeError("%s: no Python.h for %s (install python3-dev)" % (inc, a.python))
    dirs = ["py/p%d" % k for k in range(a.py_dirs)]
    for d in dirs:
        os.makedirs(os.path.join(tree, d), exist_ok=True)

    def one(i):
        c = os.path.join(src, "ldbext%d.c" % i)
        with open(c, "w") as f:
            f.write(EXTMOD % {"i": i, "v": 2000 + i})
        run([cc, "-O1", "-fPIC", "-shared", "-I" + inc, "-o",
             os.path.join(tree, dirs[i % a.py_dirs], "ldbext%d%s" % (i, suffix)), c])
    list(pool.map(one, range(a.ext)))
    for i in range(a.py):
        with open(os.path.join(tree, dirs[i % a.py_dirs], "ldbpy%d.py" % i), "w") as f:
            f.write("def f():\n    return %d\n" % (3000 + i))
    os.makedirs(os.path.join(tree, "bin"), exist_ok=True)
    with open(os.path.join(tree, "bin", "pydriver.py"), "w") as f:
        f.write(PYDRIVER % {"n_ext": a.ext, "n_py": a.py})
    # the tree is mounted read-only: compile every .pyc now, with this interpreter
    run([a.python, "-m", "compileall", "-q"] + [os.path.join(tree, d) for d in dirs])
    files = [{"path": "%s/ldbext%d%s" % (dirs[i % a.py_dirs], i, suffix), "dir": i % a.py_dirs}
             for i in range(a.ext)]
    files += [{"path": "%s/ldbpy%d.py" % (dirs[i % a.py_dirs], i), "dir": i % a.py_dirs,
               "pyc": "%s/__pycache__/ldbpy%d.%s.pyc" % (dirs[i % a.py_dirs], i, tag)}
              for i in range(a.py)]
    s = sum(2000 + i for i in range(a.ext)) + sum(3000 + i for i in range(a.py))
    return {"py_dirs": dirs, "py_files": files, "py_sum": s, "python": exe or a.python,
            "ext_suffix": suffix}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--libs", type=int, default=100)
    p.add_argument("--lib-dirs", type=int, default=10)
    p.add_argument("--chain", type=int, default=5, help="dependency chain length")
    p.add_argument("--lib-kb", type=int, default=0, help="padding per library (KiB)")
    p.add_argument("--ext", type=int, default=100)
    p.add_argument("--py", type=int, default=100)
    p.add_argument("--py-dirs", type=int, default=5)
    p.add_argument("--python", default=sys.executable)
    p.add_argument("-j", type=int, default=2)
    p.add_argument("--force", action="store_true")
    a = p.parse_args()
    for k in ("libs", "lib_dirs", "chain", "py_dirs", "j"):
        if getattr(a, k) < 1:
            p.error("--%s must be at least 1" % k.replace("_", "-"))
    for k in ("lib_kb", "ext", "py"):
        if getattr(a, k) < 0:
            p.error("--%s must not be negative" % k.replace("_", "-"))
    a.python = shutil.which(a.python) or a.python
    params = {"generator": GEN_VERSION}
    params.update({k: getattr(a, k) for k in ("libs", "lib_dirs", "chain", "lib_kb", "ext", "py",
                                         "py_dirs", "python")})
    man_path = os.path.join(a.out, "manifest.json")
    if not a.force and os.path.exists(man_path):
        with open(man_path) as f:
            if json.load(f).get("params") == params:
                print("genload: %s is up to date" % a.out)
                return 0
    tree, src = os.path.join(a.out, "tree"), os.path.join(a.out, "src")
    for d in (tree, src):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    try:
        with cf.ThreadPoolExecutor(a.j) as pool:
            man = {"params": params}
            man.update(build_libs(a, src, tree, pool))
            man.update(build_py(a, src, tree, pool))
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print("genload: %s" % e, file=sys.stderr)
        return 1
    for f in man["libs"] + man["py_files"]:
        f["size"] = os.path.getsize(os.path.join(tree, f["path"]))
        if "pyc" in f:
            f["pyc_size"] = os.path.getsize(os.path.join(tree, f["pyc"]))
    man["ld_library_path"] = man["lib_dirs"]
    man["pythonpath"] = man["py_dirs"]
    with open(man_path + ".tmp", "w") as f:
        json.dump(man, f, indent=1)
    os.replace(man_path + ".tmp", man_path)
    print("genload: %d libraries in %d directories, %d extension + %d .py modules in %d "
          "directories under %s" % (a.libs, a.lib_dirs, a.ext, a.py, a.py_dirs, tree))
    return 0


if __name__ == "__main__":
    sys.exit(main())
