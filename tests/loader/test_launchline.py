#!/usr/bin/env python3
"""test_launchline.py - where sheaf-launch puts its bootstrapper in a launch
line whose launcher options take executables as values (issue 26 item 6:
hydra's `-launcher-exec RSH` made RSH "the executable", and hydra failed
with rc 255 on `--socket`).

    test_launchline.py --launch SHEAF_LAUNCH --work DIR [--mpiexec MPICH_MPIEXEC]

Asserts:
  - argument rewriting (a fake launcher named mpirun that records its argv,
    then runs what follows `-n N`): for `-launcher-exec RSH`, `-bootstrap-exec
    RSH`, `--mca plm_rsh_agent RSH`, `-env NAME RSH`, `--launch-agent RSH` and
    `-launcher ssh` the launcher's words reach it unchanged and sheaf-boot
    comes right before the program, which runs from the server's copy
    (`reads` >= 1) and prints its line;
  - (with --mpiexec, an MPICH hydra) across two simulated hosts through a fake
    rsh: `sheaf-launch -- mpiexec -launcher ssh -launcher-exec FAKERSH -hosts
    nodea,nodeb -n 2 PROG`: rc 0, both ranks print their line, the fake rsh was
    asked for both hosts, the server answered the program.
Exit 0, 1 on a failed assertion, 77 when cc is missing.
"""
import argparse
import os
import shutil
import subprocess
import sys

failures = []
FAKERSH = """#!/bin/sh
# an ssh for one machine: options dropped, the host logged, the command run here
while [ $# -gt 0 ]; do case "$1" in -[lpoiF]) shift 2;; -*) shift;; *) break;; esac; done
h=$1; shift
echo "$h" >> "$FAKERSH_LOG"
exec sh -c "$*"
"""
FAKELAUNCHER = """#!/bin/sh
# records its argv (one word a line), then runs what follows -n N
printf '%s\\n' "$@" > "$ARGV_LOG"
while [ $# -gt 0 ]; do case "$1" in -n) shift 2; break;; *) shift;; esac; done
exec "$@"
"""


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what), flush=True)
    if not cond:
        failures.append(what)


def stats(path):
    try:
        with open(path) as f:
            return {k: int(v) for k, v in (l.split() for l in f if len(l.split()) == 2)}
    except (OSError, ValueError):
        return {}


def rewriting(a, work, prog, rsh):
    fake = os.path.join(work, "bin", "mpirun")
    os.makedirs(os.path.dirname(fake))
    with open(fake, "w") as f:
        f.write(FAKELAUNCHER)
    os.chmod(fake, 0o755)
    argv_log, st = os.path.join(work, "argv"), os.path.join(work, "st")
    for opts in (["-launcher-exec", rsh], ["-bootstrap-exec", rsh], ["--mca", "plm_rsh_agent", rsh],
                 ["-env", "RSH", rsh], ["--launch-agent", rsh], ["-launcher", "ssh", "-launcher-exec", rsh],
                 ["-u", "-l"]):  # flags (srun's): they take no word
        for f in (argv_log, st):
            if os.path.exists(f):
                os.unlink(f)
        line = [fake] + opts + ["-n", "1", prog]
        p = subprocess.run([a.launch, "--stats-file", st, "--"] + line, env=dict(os.environ, ARGV_LOG=argv_log),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        got = open(argv_log).read().split("\n")[:-1] if os.path.exists(argv_log) else []
        boot = [i for i, w in enumerate(got) if w.endswith("/sheaf-boot")]
        ok = (p.returncode == 0 and "PROG ok" in p.stdout and got[:len(opts) + 2] == opts + ["-n", "1"]
              and boot == [len(opts) + 2] and got[-1] == prog and stats(st).get("reads", 0) >= 1)
        check(ok, "%s: the launcher's words unchanged, sheaf-boot right before the program, served "
              "(rc %d, argv %s, err %r)" % (" ".join(opts[-2:]), p.returncode, got[:len(opts) + 4], p.stderr[-300:]))


def hydra(a, work, prog, rsh):
    v = subprocess.run([a.mpiexec, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=60)
    if "HYDRA" not in v.stdout:
        print("hydra: %s is not MPICH's hydra: not checked" % a.mpiexec)
        return
    log, st = os.path.join(work, "rsh.log"), os.path.join(work, "hydra.st")
    line = [a.mpiexec, "-launcher", "ssh", "-launcher-exec", rsh, "-hosts", "nodea,nodeb", "-n", "2", prog]
    p = subprocess.run([a.launch, "--stats-file", st, "--"] + line, env=dict(os.environ, FAKERSH_LOG=log),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=200)
    hosts = sorted(open(log).read().split()) if os.path.exists(log) else []
    check(p.returncode == 0 and p.stdout.count("PROG ok") == 2 and hosts == ["nodea", "nodeb"]
          and stats(st).get("requests", 0) >= 2,
          "hydra -launcher-exec FAKERSH across 2 hosts: rc %d, %d ranks ran, rsh asked for %s, server "
          "requests %s (before: rc 255, 'unrecognized argument socket'); err %r"
          % (p.returncode, p.stdout.count("PROG ok"), hosts, stats(st).get("requests"), p.stderr[-400:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launch", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mpiexec")
    a = ap.parse_args()
    a.launch = os.path.abspath(a.launch)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if not shutil.which("cc"):
        print("SKIP: no cc")
        return 77
    src, prog = os.path.join(work, "prog.c"), os.path.join(work, "prog")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\n#include <unistd.h>\n'
                'int main(void) { printf("PROG ok %d\\n", (int)getpid()); return 0; }\n')
    subprocess.run(["cc", "-o", prog, src], check=True)
    rsh = os.path.join(work, "fakersh")
    with open(rsh, "w") as f:
        f.write(FAKERSH)
    os.chmod(rsh, 0o755)
    rewriting(a, work, prog, rsh)
    if a.mpiexec:
        hydra(a, work, prog, rsh)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
