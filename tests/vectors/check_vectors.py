#!/usr/bin/env python3
"""Read every SIONlib-written vector through the sheaf C API (the vecread
helper) and compare each task's length and SHA-256 with MANIFEST.json.

usage: check_vectors.py <vecread> <vectors-dir>

For each vector (except keyval3, which needs the key-value API, and unclosed4):
whole-container open and sion_open_rank, with several piece sizes, and all
tasks at once (-1). unclosed4 must fail with "never closed" on stderr.
Also checks each file's SHA-256 so a modified vector is noticed.
Exits 77 (a skip for ctest) when the directory has no MANIFEST.json."""
import hashlib
import json
import os
import subprocess
import sys

PIECES = [1, 7, 4096, 70001]


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    vecread, vdir = sys.argv[1], sys.argv[2]
    if not os.path.isfile(os.path.join(vdir, "MANIFEST.json")):
        # a skip, said out loud: ctest counts it (SKIP_RETURN_CODE 77)
        print(f"SKIP: no MANIFEST.json in {vdir} (the SIONlib vectors, ../shared/vectors/sionlib-1.7.6;"
              " set SHEAF_VECTORS_DIR)")
        return 77
    with open(os.path.join(vdir, "MANIFEST.json")) as f:
        manifest = json.load(f)
    failures = []
    checked = 0

    def fail(msg):
        failures.append(msg)
        print("FAIL:", msg)

    for name, vec in sorted(manifest["vectors"].items()):
        for fname, sha in vec.get("file_sha256", {}).items():
            with open(os.path.join(vdir, fname), "rb") as f:
                if hashlib.sha256(f.read()).hexdigest() != sha:
                    fail(f"{fname}: vector file does not match its manifest sha256")
        path = os.path.join(vdir, vec["files"][0])
        if name == "keyval3":
            continue
        if name == "unclosed4":
            for args in ([path, "-1"], [path, "0", "100", "rank"]):
                r = run([vecread] + args)
                checked += 1
                if r.returncode == 0:
                    fail(f"unclosed4: vecread {args[1:]} succeeded, expected failure")
                elif b"never closed" not in r.stderr:
                    fail(f"unclosed4: stderr lacks 'never closed': {r.stderr.decode(errors='replace')!r}")
                elif path.encode() not in r.stderr:
                    fail(f"unclosed4: stderr does not name the file: {r.stderr.decode(errors='replace')!r}")
            continue
        tasks = vec["tasks"]
        if len(tasks) != vec["ntasks"]:
            fail(f"{name}: manifest lists {len(tasks)} tasks, ntasks {vec['ntasks']}")
        for t in tasks:
            for piece in PIECES:
                for rank_mode in (False, True):
                    args = [vecread, path, str(t["task"]), str(piece)] + (["rank"] if rank_mode else [])
                    r = run(args)
                    checked += 1
                    how = f"{name} task {t['task']} piece {piece} {'open_rank' if rank_mode else 'open'}"
                    if r.returncode != 0:
                        fail(f"{how}: vecread exit {r.returncode}: {r.stderr.decode(errors='replace').strip()}")
                        continue
                    if len(r.stdout) != t["bytes"]:
                        fail(f"{how}: {len(r.stdout)} bytes, manifest says {t['bytes']}")
                    elif hashlib.sha256(r.stdout).hexdigest() != t["sha256"]:
                        fail(f"{how}: sha256 differs from the manifest")
        # all tasks in one run: concatenation in task order
        r = run([vecread, path, "-1", "333"])
        checked += 1
        want = sum(t["bytes"] for t in tasks)
        if r.returncode != 0 or len(r.stdout) != want:
            fail(f"{name} all tasks: exit {r.returncode}, {len(r.stdout)} bytes, expected {want}")
        else:
            off = 0
            for t in tasks:
                part = r.stdout[off:off + t["bytes"]]
                off += t["bytes"]
                if hashlib.sha256(part).hexdigest() != t["sha256"]:
                    fail(f"{name} all tasks: task {t['task']} sha256 differs")
        # a task index past the end fails in open_rank mode
        r = run([vecread, path, str(len(tasks)), "100", "rank"])
        checked += 1
        if r.returncode == 0:
            fail(f"{name}: open_rank of task {len(tasks)} succeeded")
    print(f"{checked} vecread runs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
