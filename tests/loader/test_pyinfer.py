#!/usr/bin/env python3
"""test_pyinfer.py - sheaf-launch infers --python-prefix (issue 26 item 7).

    test_pyinfer.py --launch SHEAF_LAUNCH --work DIR

Makes a venv (python3 -m venv --without-pip) and a script that prints the
Python directories the clients serve (SHEAF_LD_PYDIRS, in the environment
with --no-boot; SHEAF_LD_PREFIXES for --python-prefix), and asserts:
  - `python script.py` of the venv, PYTHONPATH set by `env` in the launch
    line (an absolute and a relative entry) and in the launcher's
    environment: the script's directory, every PYTHONPATH entry (made
    absolute), the venv's lib/pythonX.Y (sys.prefix) and the base
    interpreter's lib/pythonX.Y (sys.base_prefix) are served;
  - a `.py` executable whose "#!" line names the venv's python: its directory
    and the venv's lib/pythonX.Y;
  - `python -c`: no script directory, the interpreter's directories;
  - in an inferred directory a module file is served from the node-local
    copy and a data file is not (it is read from the original: fstat's inode
    is the original's), so a script next to a large input does not copy it;
  - an explicit --python-prefix is taken as given (nothing inferred);
    --no-python-infer and a program that is not Python: nothing served.
Every run prints the script's own line (the program ran). Exit 0, 1 on a
failed assertion, 77 when venv cannot be made.
"""
import argparse
import os
import shutil
import subprocess
import sys
import sysconfig

failures = []
# prints whether helper.py and data.bin next to it were opened from a copy
# (fstat's inode differs from the original's, which stat reports), the
# --python-prefix list and, last, the inferred directories
PROG = """import os, sys
d = os.path.dirname(os.path.abspath(sys.argv[0]))
for name in ("helper.py", "data.bin"):
    p = os.path.join(d, name)
    with open(p, "rb") as f:
        print("COPY", name, int(os.fstat(f.fileno()).st_ino != os.stat(p).st_ino))
print("GIVEN", os.environ.get("SHEAF_LD_PREFIXES", ""))
print("PREFIXES", os.environ.get("SHEAF_LD_PYDIRS", ""))
"""


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what), flush=True)
    if not cond:
        failures.append(what)


def served(args, line, env=None, cwd=None, opts=()):
    p = subprocess.run([args.launch, "--no-boot"] + list(opts) + ["--"] + line, env=env or dict(os.environ),
                       cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    out = p.stdout.strip().splitlines()
    got = out[-1] if out else ""
    if p.returncode != 0 or not got.startswith("PREFIXES"):
        check(False, "%s: rc %d out %r err %r" % (line, p.returncode, p.stdout, p.stderr[-800:]))
        return None
    served.last = out
    return [x for x in got[len("PREFIXES "):].split(":") if x]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launch", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    args.launch = os.path.abspath(args.launch)
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "app"))
    venv = os.path.join(work, "venv")
    r = subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    if r.returncode != 0:
        print("SKIP: cannot make a venv: %s" % r.stdout.strip()[-300:])
        return 77
    ver = "python%d.%d" % sys.version_info[:2]
    vpy = os.path.join(venv, "bin", "python")
    vlib = os.path.join(venv, "lib", ver)
    base = os.path.join(os.path.realpath(sys.base_prefix), "lib", ver)
    app = os.path.join(work, "app")
    prog = os.path.join(app, "prog.py")
    with open(prog, "w") as f:
        f.write(PROG)
    for name in ("helper.py", "data.bin"):
        with open(os.path.join(app, name), "wb") as f:
            f.write(os.urandom(5000))
    run = os.path.join(app, "run.py")
    with open(run, "w") as f:
        f.write("#!%s\nimport os\nprint('PREFIXES', os.environ.get('SHEAF_LD_PYDIRS', ''))\n" % vpy)
    os.chmod(run, 0o755)
    pp1, rel = os.path.join(work, "pp1"), os.path.join(work, "rel")
    env = dict(os.environ, PYTHONPATH=os.path.join(work, "pp2"))

    got = served(args, ["env", "PYTHONPATH=%s:rel" % pp1, vpy, prog], env=env, cwd=work)
    if got is not None:
        want = [app, pp1, rel, os.path.join(work, "pp2"), vlib, base]
        check(all(w in got for w in want), "venv python script.py: served %s (want %s)" % (got, want))
    got = served(args, [run], cwd=app)
    if got is not None:
        check(app in got and vlib in got and base in got,
              "a '#!' .py executable: its directory and the venv's: %s" % got)
    got = served(args, [vpy, "-c", "import os; print('PREFIXES', os.environ.get('SHEAF_LD_PYDIRS', ''))"],
                  cwd=work)
    if got is not None:
        check(app not in got and vlib in got and base in got, "python -c: the interpreter's only: %s" % got)
    got = served(args, [vpy, prog], cwd=work)
    if got is not None:
        copied = dict(w.split()[1:] for w in served.last if w.startswith("COPY "))
        check(copied == {"helper.py": "1", "data.bin": "0"},
              "an inferred directory: the module file served from the copy, the data file not: %s" % copied)
    got = served(args, [vpy, prog], opts=["--python-prefix", pp1], cwd=work)
    if got is not None:
        check(got == [] and "GIVEN %s" % pp1 in served.last,
              "explicit --python-prefix: taken as given, nothing inferred: %s %s" % (got, served.last))
    got = served(args, [vpy, prog], opts=["--no-python-infer"], cwd=work)
    if got is not None:
        check(got == [], "--no-python-infer: nothing served: %s" % got)
    got = served(args, ["/bin/sh", "-c", "echo PREFIXES $SHEAF_LD_PYDIRS"], cwd=work)
    if got is not None:
        check(got == [], "not Python (/bin/sh): nothing inferred: %s" % got)
    print("%d failures (%s, base %s)" % (len(failures), sysconfig.get_python_version(), base))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
