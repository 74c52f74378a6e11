#!/usr/bin/env python3
"""run_loader.py - the loader's end-to-end tests (ctest label `loader`).

Usage: run_loader.py CASE --launch SHEAF_LAUNCH --work DIR [--cc CC]
                     [--mpicc MPICC --mpiexec "WORDS..."]
CASE:
  solib    generated libraries in 4 LD_LIBRARY_PATH dirs (dependency chain,
           $ORIGIN, symlinked soname, dlopen after start, a missing library),
           lazy and BIND_NOW builds, fork+exec, a #! script: output identical
           with and without the loader; every mapped .so of the tree comes from
           the cache (oracle: /proc/<pid>/maps); missing files: same errno
  python   a driver importing generated .py modules, a package and C extension
           modules: identical output; with strace, every successful open of a
           .so/.py/.pyc comes from the cache
  fallback the server killed (SIGKILL) or stopped (SIGSTOP) mid-run: the client
           falls back to the file system, same output, no hang
  counts   the server's reads of the shared tree are one listing per directory
           and one read per file, the same for 1 and 4 processes
  mpi      an MPI program under the given launcher (1 and 2 ranks): identical
           output, oracle, equal tree reads
Exit 0 pass, 1 fail, 77 skip.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(cmd, env=None, timeout=120, check=True, cwd=None):
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    if check and p.returncode != 0:
        fail(f"{cmd!r} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def cc(args, compiler):
    run([compiler, "-O1", "-w"] + args)


def gen_tree(work, compiler):
    """d0 (empty), d1, d2, d3 on LD_LIBRARY_PATH; od reached through $ORIGIN."""
    t = os.path.join(work, "tree")
    if os.path.isdir(t):
        shutil.rmtree(t)
    for d in ("d0", "d1", "d2", "d3", "od"):
        os.makedirs(os.path.join(t, d))

    def lib(d, name, code, extra=(), soname=None):
        src = os.path.join(t, d, name + ".c")
        with open(src, "w") as f:
            f.write(code)
        out = os.path.join(t, d, soname or f"lib{name}.so")
        cc(["-shared", "-fPIC", "-o", out, src] + list(extra), compiler)
        os.unlink(src)
        return out

    p = lambda d: os.path.join(t, d)
    lib("d3", "chain2", "int chain2(void){return 2;}\n")
    lib("d2", "chain1", "int chain2(void); int chain1(void){return chain2()+10;}\n", ["-L" + p("d3"), "-lchain2"])
    lib("d1", "chain0", "int chain1(void); int chain_top(void){return chain1()+100;}\n",
        ["-L" + p("d2"), "-lchain1", "-Wl,-rpath-link," + p("d3")])
    lib("od", "odep", "int odep(void){return 7;}\n")
    lib("d1", "origin", "int odep(void); int origin_user(void){return odep()*6;}\n",
        ["-L" + p("od"), "-lodep", "-Wl,-rpath,$ORIGIN/../od"])
    lib("d3", "plug", "int plug(void){return 5;}\n", ["-Wl,-soname,libplug.so.1"], soname="libplug.so.1")
    os.symlink("libplug.so.1", os.path.join(t, "d3", "libplug.so"))
    with open(os.path.join(t, "d2", "mod.py"), "w") as f:
        f.write("X = 1\n")
    link = ["-L" + p("d1"), "-lchain0", "-lorigin", "-ldl",
            "-Wl,-rpath-link," + p("d2") + ":" + p("d3") + ":" + p("od")]
    cc(["-o", os.path.join(t, "ldapp"), os.path.join(HERE, "ldapp.c")] + link, compiler)
    # -z now, and _FORTIFY_SOURCE: realpath with a known buffer is __realpath_chk
    cc(["-o", os.path.join(t, "ldapp_now"), os.path.join(HERE, "ldapp.c"), "-Wl,-z,now",
        "-D_FORTIFY_SOURCE=2"] + link, compiler)
    with open(os.path.join(t, "script.sh"), "w") as f:
        f.write(f"#!/bin/sh\nexec {t}/ldapp child\n")
    os.chmod(os.path.join(t, "script.sh"), 0o755)
    return t


def env_for(t, oracle=None):
    e = dict(os.environ)
    e["LD_LIBRARY_PATH"] = ":".join(os.path.join(t, d) for d in ("d0", "d1", "d2", "d3"))
    e["LDAPP_TREE"] = t
    e.pop("LD_AUDIT", None)
    if oracle:
        e["LDAPP_ORACLE"] = oracle
    return e


def stats(path):
    with open(path) as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def launch(args, line, env, timeout=120, check=True, work=None, tag="run", cwd=None):
    sf = os.path.join(work, tag + ".stats")
    cmd = [args.launch, "--cache-dir", os.path.join(work, "cache"), "--stats-file", sf] + line
    p = run(cmd, env=env, timeout=timeout, check=check, cwd=cwd)
    return p, (stats(sf) if os.path.exists(sf) else {})


def oracle_check(path, t, cache, want_exe=True):
    """every mapped .so of the tree (and the bootstrapped executable) is a cache copy"""
    n_cache = 0
    bad = []
    with open(path) as f:
        for line in f:
            parts = line.split(" ", 1)
            if len(parts) != 2:
                fail(f"malformed oracle line {line!r} in {path}")
            m = parts[1].strip()
            if m.startswith(cache):
                n_cache += 1
            elif m.startswith(t + "/") and ".so" in m:
                bad.append(m)
    if bad:
        fail("mapped from the shared tree, not the cache: " + ", ".join(sorted(set(bad))))
    if n_cache == 0:
        fail("nothing was mapped from the cache")
    return n_cache


def case_solib(args, work):
    t = gen_tree(work, args.cc)
    cache = os.path.join(work, "cache")
    os.makedirs(cache, exist_ok=True)
    # lazy binding, a -z now build, and LD_BIND_NOW=1 in the environment
    for app, bindnow in (("ldapp", False), ("ldapp_now", False), ("ldapp", True)):
        envp = env_for(t)
        if bindnow:
            envp["LD_BIND_NOW"] = "1"
        plain = run([os.path.join(t, app)], env=envp)
        tag = app + ("_envnow" if bindnow else "")
        orc = os.path.join(work, tag + ".oracle")
        if os.path.exists(orc):
            os.unlink(orc)
        log = os.path.join(work, tag + ".log")
        envl = dict(envp, LDAPP_ORACLE=orc)
        p, st = launch(args, ["--log", log, "--", os.path.join(t, app)], envl, work=work, tag=tag)
        # the symbol-binding redirection works (lazy and BIND_NOW): the probes'
        # open/fopen of d2/mod.py were served from the cache, the missing .py by ENOENT
        served = [l.split() for l in open(log)]
        if not any(w[1] == "open" and w[2] == os.path.join(t, "d2/mod.py") and w[3].startswith(cache)
                   for w in served):
            fail(f"{app}: open of d2/mod.py was not redirected (client log {log})")
        if not any(w[1] == "open" and w[2] == os.path.join(t, "d2/nothere.py") and w[3] == "ENOENT"
                   for w in served):
            fail(f"{app}: the missing d2/nothere.py was not answered from the listing")
        # realpath of the soname link answered by the server, a missing .py too
        if not any(w[1] == "realpath" and w[2] == os.path.join(t, "d3/libplug.so") and
                   w[3] == os.path.join(t, "d3/libplug.so.1") for w in served):
            fail(f"{app}: realpath of d3/libplug.so was not answered by the server")
        if not any(w[1] == "realpath" and w[2] == os.path.join(t, "d1/libnothere.so") and
                   w[3] == "ENOENT" for w in served):
            fail(f"{app}: realpath of the missing d1/libnothere.so was not answered")
        if p.stdout != plain.stdout:
            fail(f"{app}: output differs\nplain:\n{plain.stdout}\nloader:\n{p.stdout}")
        n = oracle_check(orc, t, cache)
        if not any(os.path.join("f" + t, app) in l for l in open(orc)):
            fail(f"{app}: the executable itself was not served from the cache")
        if st.get("reads", 0) == 0 or st.get("listings", 0) == 0:
            fail(f"{app}: server counters {st}")
        print(f"{tag}: output identical ({len(plain.stdout.splitlines())} lines), "
              f"{n} cache mappings, server {st}")
    # --preload (ldd output) pushes the files before the start: the same reads,
    # output and oracle; --strip=no keeps whole copies (no file stripped)
    app = os.path.join(t, "ldapp")
    base = stats(os.path.join(work, "ldapp.stats"))
    ldd = run(["ldd", app], env=env_for(t)).stdout
    pre = os.path.join(work, "preload.txt")
    with open(pre, "w") as f:
        f.write(ldd)
    for opt, tag in ((["--preload", pre], "preload"), (["--strip=no"], "nostrip")):
        orc = os.path.join(work, tag + ".oracle")
        p, st = launch(args, opt + ["--", app], env_for(t, orc), work=work, tag=tag)
        if p.stdout != run([app], env=env_for(t)).stdout:
            fail(f"{tag}: output differs")
        oracle_check(orc, t, cache)
        # ldd also lists ld.so itself, which the kernel maps (one more file read)
        if tag == "preload" and st["reads"] != base["reads"] + 1:
            fail(f"preload changed the tree reads: {st} vs {base}")
        if tag == "nostrip" and (st["stripped"] != 0 or st["bytes"] < base["bytes"]):
            fail(f"--strip=no: {st}")
        print(f"{tag}: identical output, oracle holds, server {st}")
    # empty LD_LIBRARY_PATH entries are the working directory (issue 26): a
    # trailing ':' run elsewhere (a miss there: the client searches on itself),
    # and a leading one run in d1, whose libraries then come from "./" (a hit in
    # a relative directory goes back to ld.so): output identical to plain loading
    for pre, post, cwd, tag in (("", ":", work, "colon_tail"), (":", "", os.path.join(t, "d1"), "colon_head")):
        envc = env_for(t)
        envc["LD_LIBRARY_PATH"] = pre + envc["LD_LIBRARY_PATH"] + post
        plain = run([app], env=envc, cwd=cwd)
        orc = os.path.join(work, tag + ".oracle")
        p, st = launch(args, ["--", app], dict(envc, LDAPP_ORACLE=orc), work=work, tag=tag, cwd=cwd)
        if p.stdout != plain.stdout:
            fail(f"{tag}: output differs\nplain:\n{plain.stdout}\nloader:\n{p.stdout}")
        print(f"{tag}: LD_LIBRARY_PATH {pre!r}...{post!r} in {cwd}: identical output, server {st}")
    # a #! script: the interpreter runs with the client, the program it starts too
    orc = os.path.join(work, "script.oracle")
    plain = run([os.path.join(t, "script.sh")], env=env_for(t))
    p, st = launch(args, ["--", os.path.join(t, "script.sh")], env_for(t, orc), work=work, tag="script")
    if p.stdout != plain.stdout or "child 112" not in p.stdout:
        fail(f"script: output {p.stdout!r} vs {plain.stdout!r}")
    oracle_check(orc, t, cache)
    print("script: identical output, libraries from the cache")
    leftovers = [d for d in os.listdir(cache) if d.startswith("sheaf-ld.")]
    if leftovers:
        fail(f"cache directories left: {leftovers}")


PY_MODULES = 12


def gen_python(work, compiler):
    t = os.path.join(work, "pytree")
    if os.path.isdir(t):
        shutil.rmtree(t)
    for d in ("a", "b", "a/pkg"):
        os.makedirs(os.path.join(t, d))
    for i in range(PY_MODULES):
        d = "a" if i % 2 else "b"
        with open(os.path.join(t, d, f"m{i}.py"), "w") as f:
            f.write(f"V = {i} * 3\ndef f():\n    return 'm{i}'\n")
    with open(os.path.join(t, "a/pkg/__init__.py"), "w") as f:
        f.write("from . import sub\n")
    with open(os.path.join(t, "a/pkg/sub.py"), "w") as f:
        f.write("W = 'sub'\n")
    inc = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    have_ext = os.path.exists(os.path.join(inc, "Python.h"))
    if have_ext:
        for i in range(3):
            src = os.path.join(t, f"ext{i}.c")
            with open(src, "w") as f:
                f.write("#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n"
                        f"static PyObject *v(PyObject *s, PyObject *a) {{ return PyLong_FromLong({i} + 40); }}\n"
                        "static PyMethodDef M[] = {{\"v\", v, METH_NOARGS, 0}, {0}};\n"
                        f"static struct PyModuleDef D = {{PyModuleDef_HEAD_INIT, \"ext{i}\", 0, -1, M}};\n"
                        f"PyMODINIT_FUNC PyInit_ext{i}(void) {{ return PyModule_Create(&D); }}\n")
            cc(["-shared", "-fPIC", "-I" + inc, "-o", os.path.join(t, "b", f"ext{i}{suffix}"), src], compiler)
            os.unlink(src)
    drv = os.path.join(t, "driver.py")
    with open(drv, "w") as f:
        f.write(f"""import sys, os, importlib
sys.path[:0] = [{os.path.join(t, 'a')!r}, {os.path.join(t, 'b')!r}]
out = []
for i in range({PY_MODULES}):
    m = importlib.import_module('m%d' % i)
    out.append((m.V, m.f()))
import pkg, json
out.append(pkg.sub.W)
if {have_ext!r}:
    for i in range(3):
        out.append(importlib.import_module('ext%d' % i).v())
try:
    import not_a_module_anywhere
except ImportError as e:
    out.append(str(e))
print(out)
print(sorted(os.listdir({os.path.join(t, 'a')!r})))
st = os.stat({os.path.join(t, 'a', 'm1.py')!r})
print(st.st_size, oct(st.st_mode), st.st_ino, st.st_dev)
for p in [{os.path.join(t, 'a', 'nothere.py')!r}, {os.path.join(t, 'nodir', 'x.py')!r}]:
    try:
        open(p)
    except OSError as e:
        print(type(e).__name__, e.errno)
print(os.path.exists({os.path.join(t, 'b', 'm0.py')!r}))
""")
    run([sys.executable, "-m", "compileall", "-q", t])
    return t, drv, have_ext


def case_python(args, work):
    t, drv, have_ext = gen_python(work, args.cc)
    cache = os.path.join(work, "cache")
    os.makedirs(cache, exist_ok=True)
    py = os.path.realpath(sys.executable)
    env = dict(os.environ)
    env.pop("LD_AUDIT", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    plain = run([py, drv], env=env)
    p, st = launch(args, ["--python-prefix", t, "--", py, drv], env, work=work, tag="py")
    if p.stdout != plain.stdout:
        fail(f"python: output differs\nplain:\n{plain.stdout}\nloader:\n{p.stdout}\n{p.stderr}")
    print(f"python: output identical ({len(plain.stdout)} bytes){'' if have_ext else ' (no Python.h: no extension modules)'}; server {st}")
    # 1 and 2 processes started by a script (the same way, so the same files):
    # the second process adds no operation on the shared tree
    res = {}
    for n in (1, 2):
        fan = os.path.join(work, f"py{n}.sh")
        with open(fan, "w") as f:
            f.write("#!/bin/sh\n" + "".join(f"{py} {drv} > {work}/py{n}.{i} &\n" for i in range(n)) + "wait\n")
        os.chmod(fan, 0o755)
        _, res[n] = launch(args, ["--python-prefix", t, "--", fan], env, work=work, tag=f"py{n}")
        # sheaf-boot has the server read the launched #! script too (it checks the
        # copy for '#!'): the scripts for 1 and 2 processes differ in size
        res[n]["bytes"] -= os.path.getsize(fan)
        for i in range(n):
            if open(os.path.join(work, f"py{n}.{i}")).read() != plain.stdout:
                fail(f"python, {n} processes: output of process {i} differs")
    keys = ("listings", "stats", "reads", "bytes", "realpaths")
    one, two = ({k: res[n][k] for k in keys} for n in (1, 2))
    if one != two:
        fail(f"python: the second process reached the shared tree: 1 process {one}, 2 processes {two}")
    print(f"python, 1 and 2 processes: identical output, identical shared-tree operations {two}")
    strace = shutil.which("strace")
    if not strace:
        print("python: strace not installed: oracle of the opens not checked")
        return
    tr = os.path.join(work, "py.strace")
    p, st = launch(args, ["--python-prefix", t, "--exe", py, "--", strace, "-f", "-qq", "-o", tr,
                          "-e", "trace=open,openat", py, drv], env, work=work, tag="pystrace", check=False)
    if p.returncode != 0:
        print(f"python: strace does not run here ({p.stderr.strip()[:200]}): oracle not checked")
        return
    bad, good = [], 0
    for line in open(tr):
        m = re.search(r'open(?:at)?\((?:AT_FDCWD|\d+), "([^"]+)", [^)]*\) = (\d+)', line) or \
            re.search(r'open\("([^"]+)", [^)]*\) = (\d+)', line)
        if not m:
            continue
        path = m.group(1)
        if not re.search(r"(\.so(\.[0-9.]+)?|\.py|\.pyc)$", path):
            continue
        if path.startswith(cache):
            good += 1
        elif "libsheaf_audit" in path or re.search(r"/(libc\.so\.6|ld-linux[-a-z0-9_]*\.so\.2)$", path):
            continue    # the auditor and its own libc, loaded before auditing starts
        else:
            bad.append(path)
    if bad:
        fail("opened outside the cache: " + ", ".join(sorted(set(bad))[:20]))
    if good < PY_MODULES:
        fail(f"only {good} opens from the cache")
    print(f"python oracle: {good} successful .so/.py/.pyc opens, all from the cache")


def case_fallback(args, work):
    t = gen_tree(work, args.cc)
    plain = run([os.path.join(t, "ldapp")], env=env_for(t))
    for how in ("kill", "stop"):
        t0 = time.time()
        p, st = launch(args, ["--timeout", "1000", "--", os.path.join(t, "ldapp"), "kill", how],
                       env_for(t), work=work, tag="fb" + how, timeout=60)
        dt = time.time() - t0
        if p.stdout != plain.stdout:
            fail(f"{how}: output differs\nplain:\n{plain.stdout}\nloader:\n{p.stdout}\n{p.stderr}")
        print(f"server {how}ed mid-run: client fell back, identical output, {dt:.1f} s")
    # no server at all (the socket does not exist): the client falls back at once
    audit = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(args.launch)),
                                          "../../src/loader/libsheaf_audit.so"))
    if os.path.exists(audit):
        e = env_for(t)
        e.update(LD_AUDIT=audit, SHEAF_LD_SOCKET=os.path.join(work, "no-such-dir", "sock"))
        t0 = time.time()
        p = run([os.path.join(t, "ldapp")], env=e, timeout=60)
        if p.stdout != plain.stdout:
            fail(f"unreachable server: output differs\n{p.stdout}\n{p.stderr}")
        print(f"unreachable server: identical output, {time.time() - t0:.1f} s")
    # the cache of the killed server is removed by the next start
    cache = os.path.join(work, "cache")
    launch(args, ["--", "/bin/true"], env_for(t), work=work, tag="after")
    left = [d for d in os.listdir(cache) if d.startswith("sheaf-ld.")]
    if left:
        fail(f"stale cache directories not removed: {left}")
    print("the killed server's cache was removed at the next start")


def fan_out(args, work, np, t):
    """np processes of ldapp under the loader: through the MPI launcher if given"""
    if args.mpiexec:
        return args.mpiexec.split() + [str(np)] if args.mpiexec.endswith("-n") else args.mpiexec.split()
    return None


def case_counts(args, work):
    t = gen_tree(work, args.cc)
    cache = os.path.join(work, "cache")
    res = {}
    for np in (1, 4):
        orc = os.path.join(work, f"c{np}.oracle")
        if os.path.exists(orc):
            os.unlink(orc)
        # np processes through a #! script that starts them (no MPI needed)
        fan = os.path.join(work, f"fan{np}.sh")
        with open(fan, "w") as f:
            f.write("#!/bin/sh\n" + "".join(f"{t}/ldapp > {work}/out{np}.{i} &\n" for i in range(np)) + "wait\n")
        os.chmod(fan, 0o755)
        p, st = launch(args, ["--", fan], env_for(t, orc), work=work, tag=f"c{np}")
        oracle_check(orc, t, cache, want_exe=False)
        # one read per distinct file: the mapped copies plus d2/mod.py (opened by the probes)
        files = {l.split(" ", 1)[1].strip() for l in open(orc) if " " + cache in l}
        files = {re.sub(r"^.*/sheaf-ld\.[0-9.]+/f", "", f) for f in files}
        # + ldapp (executed by the script) + the script (read by the server for
        # sheaf-boot's '#!' check; its size depends on np)
        if st["reads"] != len(files) + 2:
            fail(f"{np} processes: {st['reads']} reads of the shared tree for {len(files)} + 2 files")
        st["bytes"] -= os.path.getsize(fan)
        res[np] = st
        print(f"{np} processes: server {st}")
    keys = ("listings", "stats", "reads", "bytes", "realpaths")
    a, b = ({k: res[n][k] for k in keys} for n in (1, 4))
    if a != b:
        fail(f"reads of the shared tree depend on the process count: 1: {a} 4: {b}")
    if res[4]["requests"] <= res[1]["requests"]:
        fail("4 processes made no more requests than 1")
    print(f"shared-tree operations identical for 1 and 4 processes: {a}")


def case_mpi(args, work):
    if not args.mpicc or not args.mpiexec:
        print("SKIP: no MPI compiler or launcher given")
        sys.exit(SKIP)
    t = gen_tree(work, args.cc)
    src = os.path.join(HERE, "ldmpi.c")
    exe = os.path.join(t, "mpihello")
    run([args.mpicc, "-o", exe, src, "-L" + os.path.join(t, "d1"), "-lchain0",
         "-Wl,-rpath-link," + os.path.join(t, "d2") + ":" + os.path.join(t, "d3")])
    cache = os.path.join(work, "cache")
    res = {}
    for np in (1, 2):
        line = args.mpiexec.split() + [str(np)] + args.mpiflags.split() + [exe]
        plain = run(line, env=env_for(t), timeout=180)
        orc = os.path.join(work, f"mpi{np}.oracle")
        if os.path.exists(orc):
            os.unlink(orc)
        p, st = launch(args, ["--exe", exe, "--"] + line, env_for(t, orc), work=work, tag=f"mpi{np}", timeout=180)
        if sorted(p.stdout.splitlines()) != sorted(plain.stdout.splitlines()):
            fail(f"np {np}: output differs\nplain:\n{plain.stdout}\nloader:\n{p.stdout}\n{p.stderr}")
        n = oracle_check(orc, t, cache)
        res[np] = st
        print(f"np {np}: identical output, {n} cache mappings, server {st}")
    keys = ("listings", "reads", "bytes")
    if any(res[1][k] != res[2][k] for k in keys):
        fail(f"tree reads depend on the rank count: {res}")
    print("shared-tree reads identical for 1 and 2 ranks")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--launch", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--mpicc")
    ap.add_argument("--mpiexec", help="launcher words up to and including the -n flag")
    ap.add_argument("--mpiflags", default="")
    args = ap.parse_args()
    if sys.platform != "linux":
        print("SKIP: the loader is Linux only")
        sys.exit(SKIP)
    if os.environ.get("SHEAF_LD_SKIP_REASON"):
        print("SKIP:", os.environ["SHEAF_LD_SKIP_REASON"])
        sys.exit(SKIP)
    work = os.path.abspath(args.work)
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(os.path.join(work, "cache"))
    {"solib": case_solib, "python": case_python, "fallback": case_fallback,
     "counts": case_counts, "mpi": case_mpi}[args.case](args, work)
    print("PASS")


if __name__ == "__main__":
    main()
