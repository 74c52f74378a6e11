#!/usr/bin/env bash
# demo.sh - sheaf in one go: install missing packages, build, then
#   A. an MPI checkpoint/restart: 8 ranks write their state into one container
#      and restart from it, side by side with one file per rank, printing the
#      files created and the time of each phase  (examples/checkpoint)
#   B. the container tools on it                 (sheaf dump, sheaf verify)
#   C. a directory of 64 task-local files packed into one container and back:
#      1. write 64 files of varied sizes, as 64 tasks of an application would
#      2. pack them into one container        (examples/pack_dir.c)
#      3. list the container                  (sheaf dump, sheaf verify)
#      4. extract it twice and compare bytes  (pack_dir unpack; sheaf split)
#   5. FGFS's view of the paths; then, each when it is built, numbered from 6:
#      passive locks (lock_bench), the MPI-IO layer's stale-read demonstration
#      (per-call realms vs Persistent File Realms), python3 under sheaf-launch
#      (libraries and modules from a node cache), the loader bed (libraries
#      loaded by 1 and 4 processes from countfs, a counting FUSE file system, plain
#      and under sheaf-launch; root and /dev/fuse), a Fortran particle checkpoint
#      by 4 ranks restarted by 3 (examples/mp2c), the checkpoint strategies (coio
#      vs rbio, sheaf ckpt), the checkpoint job under job I/O monitoring (sheaf
#      stats run, then sheaf stats summary and sheaf stats report), the container read
#      from Python (bindings/python)
# Works from any directory. Files go to $SHEAF_BUILD/demo (kept for a look).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

"$SHEAF_ROOT/scripts/install-deps.sh"

echo "== build ($SHEAF_BUILD)"
sheaf_configure >/dev/null
targets=(pack_dir)
for t in sheaf_cli sheaf_monitor_preload sheaf_fgfs_cli ckpt_demo lock_bench mp2c_checkpoint sheaf-ckpt-bench mpiio_pfr_test dache_test sheaf_launch; do
    if cmake --build "$SHEAF_BUILD" --target help 2>/dev/null | grep -q "^$t:"; then
        targets+=("$t")
    fi
done
cmake --build "$SHEAF_BUILD" -j "$SHEAF_JOBS" --target "${targets[@]}"
pack_dir=$SHEAF_BUILD/examples/pack_dir
sheaf=$SHEAF_BUILD/tools/sheaf
[ -x "$sheaf" ] || sheaf=""

work=$SHEAF_BUILD/demo
rm -rf "$work"
mkdir -p "$work/tasks"
ntasks=64
status=0
part=5  # parts 6 and on are numbered as they run (each needs its part built)

# part_title TITLE [LINE...]: the next numbered part's header, its lines indented
part_title() {
    echo
    part=$((part + 1)); echo "== $part. $1"
    shift
    local line
    for line in "$@"; do echo "   $line"; done
}
# part_run WHAT CMD [ARG...]: runs CMD, its output indented; when it fails,
# prints "FAIL: WHAT", sets status=1 and returns 1
part_run() {
    local what=$1
    shift
    if "$@" | sed 's/^/   /'; then
        return 0
    fi
    echo "   FAIL: $what"
    status=1
    return 1
}

ckpt=$SHEAF_BUILD/examples/checkpoint/ckpt_demo
# the build tree's launcher: its own MPI (not whatever `mpiexec` is now) with
# that MPI's settings (Open MPI: --oversubscribe, root allowed)
export MPIEXEC=$SHEAF_BUILD/sheaf-mpiexec
if [ -x "$ckpt" ] && [ -x "$MPIEXEC" ]; then
    echo
    echo "== A. MPI checkpoint/restart: 8 ranks, one container vs one file per rank"
    echo "   mpiexec -n 8 ckpt_demo -s 2 -d $work/ckpt"
    if "$MPIEXEC" -n 8 "$ckpt" -s 2 -d "$work/ckpt" | sed 's/^/   /'; then
        :
    else
        echo "   FAIL: checkpoint/restart"
        status=1
    fi
    if [ -n "$sheaf" ] && [ -f "$work/ckpt/state.sion" ]; then
        echo
        echo "== B. the container, as the tools see it"
        "$sheaf" dump "$work/ckpt/state.sion" | sed -n '1,22p' | sed 's/^/   /'
        "$sheaf" verify "$work/ckpt/state.sion" | sed 's/^/   /' || status=1
    fi
    echo
    echo "== C. a crash before the close: sion_flush made the data durable, sheaf recover brings it back"
    "$SHEAF_ROOT/examples/checkpoint/crash_restart.sh" "$ckpt" "$sheaf" "$work/crash" 4 || {
        echo "   FAIL: crash/recover/restart"
        status=1
    }
    echo
    echo "== D. task-local files packed into a container and back"
else
    echo "   (MPI not available: skipping the checkpoint/restart part)"
fi

echo
echo "== 1. $ntasks task-local files in $work/tasks"
# Sizes from 0 bytes to ~1.2 MiB, deterministic; contents random.
total=0
for ((i = 0; i < ntasks; i++)); do
    size=$(( (i * i * 7919 + i * 104729) % 300000 ))
    [ $i -eq 7 ] && size=0
    [ $i -eq 42 ] && size=$((1200 * 1024 + 17))
    head -c "$size" /dev/urandom >"$work/tasks/$(printf 'out.%05d' "$i")"
    total=$((total + size))
done
echo "   $ntasks files, $total bytes (out.00000 ... out.00063)"

echo
echo "== 2. pack into one container"
"$pack_dir" pack "$work/tasks" "$work/tasks.sion" | sed 's/^/   /'
echo "   container: $work/tasks.sion, $(stat -c %s "$work/tasks.sion") bytes" \
     "(one task per file, plus task $ntasks: the list of file names)"

echo
echo "== 3. list the container"
if [ -n "$sheaf" ]; then
    # the per-task table is long: show its start and its end
    "$sheaf" dump "$work/tasks.sion" | awk '{ line[NR] = $0 }
        END { for (i = 1; i <= NR; i++)
                  if (i <= 18 || i > NR - 3) print "   " line[i];
                  else if (i == 19) print "   ..." }'
    "$sheaf" verify "$work/tasks.sion" | sed 's/^/   /'
else
    echo "   ($SHEAF_BUILD/tools/sheaf not built; using pack_dir list)"
fi
"$pack_dir" list "$work/tasks.sion" | awk 'NR <= 6 { print "   " $0 }'
echo "   ..."

echo
echo "== 4a. extract with pack_dir unpack and compare"
"$pack_dir" unpack "$work/tasks.sion" "$work/unpacked" | sed 's/^/   /'
if diff -r "$work/tasks" "$work/unpacked" >/dev/null; then
    echo "   OK: all $ntasks files identical to the originals"
else
    echo "   FAIL: extracted files differ:"; diff -rq "$work/tasks" "$work/unpacked" || true
    status=1
fi

if [ -n "$sheaf" ]; then
    echo
    echo "== 4b. extract with sheaf split (one file per task, named by task number)"
    mkdir "$work/split"
    "$sheaf" split "$work/tasks.sion" "$work/split/" | sed 's/^/   /'
    bad=0
    for ((i = 0; i < ntasks; i++)); do
        cmp -s "$work/tasks/$(printf 'out.%05d' "$i")" "$work/split/$(printf '%05d' "$i")" || bad=$((bad + 1))
    done
    if [ $bad -eq 0 ] && [ "$(cat "$work/split/$(printf '%05d' "$ntasks")")" = \
                             "$(cd "$work/tasks" && LC_ALL=C ls)" ]; then
        echo "   OK: split task i == i-th original file for all $ntasks; task $ntasks == the file list"
    else
        echo "   FAIL: $bad split files differ from the originals (or the file list differs)"
        status=1
    fi
fi

fgfs=$SHEAF_BUILD/tools/fgfs/sheaf-fgfs
if [ -x "$fgfs" ] && [ -x "$MPIEXEC" ]; then
    echo
    echo "== 5. global file status (FGFS): which of 4 ranks share a path, from the mount table"
    echo "   mpiexec -n 4 sheaf-fgfs classify $work /usr/lib /proc"
    if "$MPIEXEC" -n 4 "$fgfs" classify "$work" /usr/lib /proc | sed 's/^/   /'; then
        :
    else
        echo "   FAIL: sheaf-fgfs classify"
        status=1
    fi
    echo "   (one machine: every path is on storage of this node; the namespace test bed,"
    echo "    scripts/fgfs-testbed.sh, makes simulated nodes with their own mounts: ctest -R fgfs)"
fi

lockb=$SHEAF_BUILD/bench/lock/lock_bench
if [ -x "$lockb" ] && [ -x "$MPIEXEC" ]; then
    part_title "passive locks (libsheaf_lock): 4 ranks take one lock 30 times each (100 us), each time" \
        "incrementing a counter at the lock's home; then one lock per rank (uncontended)" \
        "mpiexec -n 4 lock_bench progress=shared n=30 hold=100 kinds=flags,mcs,poll"
    if part_run lock_bench "$MPIEXEC" -n 4 "$lockb" progress=shared n=30 hold=100 kinds=flags,mcs,poll; then
        echo "   OK: every counter = 4 x 30 (RMA operations per acquire+release: constant for"
        echo "   flags and MCS; polling's grow with the waiters: ctest -R lock.handoff)"
    fi
fi

pfrt=$SHEAF_BUILD/tests/mpiio/mpiio_pfr_test
if [ -x "$pfrt" ] && [ -x "$MPIEXEC" ]; then
    part_title "MPI-IO layer: stale reads under a non-coherent client cache (NFS-like fixture)" \
        "read_all whole file, interleaved write_all of its first half, read_all whole file, 4 ranks"
    if part_run "mpiio_pfr_test stale" "$MPIEXEC" -n 4 "$pfrt" stale "$work"; then
        echo "   (per-call realms, as ROMIO: stale bytes; Persistent File Realms and no-caching: none)"
    fi
fi

dachet=$SHEAF_BUILD/tests/mpiio/dache_test
if [ -x "$dachet" ] && [ -x "$MPIEXEC" ]; then
    part_title "DACHe: one coherent cache over 4 ranks (sheaf_cache=dache), same NFS-like fixture" \
        "random small independent reads/writes + collective strided writes, 3 slots of 64 B per rank," \
        "every read checked against a model; then the same with the single-copy logic switched off"
    dache_demo() {
        "$MPIEXEC" -n 4 "$dachet" coherence "$work" auto mcs 3 15 &&
            "$MPIEXEC" -n 4 "$dachet" coherence "$work" auto mcs 3 broken 10 | grep -v '^coherence: ok'
    }
    if part_run "dache_test coherence" dache_demo; then
        echo "   (DACHe: 0 mismatches; without the single-copy rule: stale reads and duplicate pages)"
    fi
fi

launch=$SHEAF_BUILD/tools/loader/sheaf-launch
if [ -x "$launch" ] && command -v python3 >/dev/null 2>&1; then
    echo
    part=$((part + 1)); echo "== $part. scalable loading: python3 under sheaf-launch, its libraries and modules from a node cache"
    echo "   sheaf-launch --stats -- python3 -c 'import json, email.parser; print(...)'"
    py=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
    if out=$("$launch" --stats --cache-dir "$work" -- "$py" -c \
            'import json, email.parser; print("   imported", json.__name__, email.parser.__name__)' 2>&1); then
        echo "$out" | grep -E "imported|listings|stats |reads|hits" | sed 's/^sheaf-launch: /   server: /'
    else
        echo "$out" | sed 's/^/   /'
        echo "   FAIL: sheaf-launch"
        status=1
    fi
fi

# the loader across nodes (issue 15, doc/loader.md "Across nodes"): two
# simulated nodes on loopback, servers started through an rsh-like wrapper
if [ -x "$launch" ] && [ -x "$SHEAF_BUILD/tools/loader/sheaf-ld-server" ] && command -v python3 >/dev/null 2>&1; then
    echo
    part=$((part + 1)); echo "== $part. loading across nodes: 2 load servers in an authenticated overlay (loopback), the program on node 1"
    echo "   sheaf-launch --hosts 127.0.0.1:P0,127.0.0.1:P1 --rsh <local wrapper> --overlay push -- python3 -c ..."
    printf '#!/bin/sh\nshift\nexec "$@"\n' > "$work/localrsh"; chmod +x "$work/localrsh"
    ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(",".join("127.0.0.1:%d" % x.getsockname()[1] for x in s))')
    py=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
    if out=$(SHEAF_LD_RANK=1 "$launch" --hosts "$ports" --rsh "$work/localrsh" --overlay push \
            --socket "$work/ovnode%r/sock" --secret-file "$work/ov.secret" --stats --cache-dir "$work" -- "$py" -c \
            'import json, email.parser; print("   imported", json.__name__, email.parser.__name__, "on node 1")' 2>&1); then
        echo "$out" | grep -E "imported|requests|reads |net_objs" | sed 's/^sheaf-launch: /   node 1: /'
        echo "   (node 1 read nothing itself: every listing and file came from rank 0 over the overlay)"
    else
        echo "$out" | sed 's/^/   /'
        echo "   FAIL: sheaf-launch across nodes"
        status=1
    fi
fi

# loader bed (tests/loader/bed, doc/loader-bed.md): what starting a dynamically
# linked program costs a shared file system, at 1 and 4 processes
if cmake --build "$SHEAF_BUILD" --target countfs >/dev/null 2>&1 && [ -e /dev/fuse ] &&
   [ "$(id -u)" -eq 0 ]; then
    echo
    part=$((part + 1)); echo "== $part. loading from a shared file system (loader bed): 12 libraries in 3 LD_LIBRARY_PATH"
    echo "   directories on countfs (a counting FUSE file system, no lookup caching), 1 and 4 processes"
    bed=$SHEAF_ROOT/tests/loader/bed
    lrc=0
    python3 "$bed/genload.py" "$work/ldbed" --libs 12 --lib-dirs 3 --ext 0 --py 0 >/dev/null || lrc=1
    for np in 1 4; do
        [ $lrc -eq 0 ] || break
        python3 "$bed/ldbed_run.py" --countfs "$SHEAF_BUILD/tests/loader/countfs" \
            --work "$work/ldbed" --driver c --np "$np" | sed 's/^/   /' || lrc=$?
    done
    if [ $lrc -eq 0 ] && [ -x "$launch" ] && [ -x "$MPIEXEC" ]; then
        echo "   the same 4 processes under sheaf-launch (driver processes: first=0 rest=0):"
        python3 "$bed/ldbed_run.py" --countfs "$SHEAF_BUILD/tests/loader/countfs" \
            --work "$work/ldbed" --driver c --np 4 --launch mpi --mpiexec "$MPIEXEC" \
            --wrapper "$launch --" | sed 's/^/   /; s/\[[^]]*\] //' || lrc=$?
    fi
    if [ $lrc -eq 0 ]; then
        echo "   (plain: each process repeats every failed search; under the loader only the node's"
        echo "    server reads the tree, once, whatever the number of processes)"
    elif [ $lrc -eq 77 ]; then
        echo "   (skipped: FUSE cannot be mounted here)"
    else
        echo "   FAIL: loader bed"
        status=1
    fi
fi

mp2c=$SHEAF_BUILD/examples/mp2c/mp2c_checkpoint
if [ -x "$mp2c" ] && [ -x "$MPIEXEC" ]; then
    part_title "Fortran (SIONlib's sion_f90_mpi): particles checkpointed by 4 ranks, restarted by 3" \
        "mpiexec -n 4 mp2c_checkpoint write ...; mpiexec -n 3 mp2c_checkpoint restart ... (examples/mp2c)"
    mkdir -p "$work/mp2c"
    mp2c_demo() {
        (cd "$work/mp2c" && "$MPIEXEC" -n 4 "$mp2c" write particles.sion 10000 2 &&
            "$MPIEXEC" -n 3 "$mp2c" restart particles.sion)
    }
    part_run "mp2c checkpoint/restart" mp2c_demo || :
fi

ckb=$SHEAF_BUILD/bench/ckpt/sheaf-ckpt-bench
if [ -x "$ckb" ] && [ -n "$sheaf" ] && [ -x "$MPIEXEC" ]; then
    part_title "checkpoint strategies (libsheaf_ckpt): 4 ranks, coio vs rbio (np:ng = 2:1), then sheaf ckpt" \
        "mpiexec -n 4 sheaf-ckpt-bench --npng 2 --bytes 256K --steps 2 --reps 1 --strategies coio,rbio --verify"
    ckpt_strategies_demo() {
        "$MPIEXEC" -n 4 "$ckb" --dir "$work/ckpt6" --npng 2 --nf 1 --bytes 256K --steps 2 --reps 1 --compute-ms 100 \
            --strategies coio,rbio --verify | cut -c1-157 &&
            "$sheaf" ckpt list "$work/ckpt6/rep00-rbio" &&
            "$sheaf" ckpt verify "$work/ckpt6/rep00-rbio"
    }
    part_run "checkpoint strategies" ckpt_strategies_demo || :
fi

# job I/O monitoring (src/monitor): the checkpoint job again, under `sheaf stats run`
# (every process's POSIX and stdio I/O per file, a log per process), then its summary
if [ -n "$sheaf" ] && [ -f "$SHEAF_BUILD/src/monitor/libsheaf_monitor_preload.so" ]; then
    if [ -x "$ckpt" ] && [ -x "$MPIEXEC" ]; then
        mon_cmd=("$MPIEXEC" -n 4 "$ckpt" -s 2 -d "$work/ckpt-mon")
        mon_what="mpiexec -n 4 ckpt_demo -s 2"
    else
        mon_cmd=(sh -c "mkdir -p '$work/mon' && seq 100000 > '$work/mon/a' && sort -n '$work/mon/a' > '$work/mon/b'")
        mon_what="sh -c 'seq 100000 > a && sort -n a > b'"
    fi
    part_title "job I/O monitoring: a job under sheaf stats run, then sheaf stats summary and report" \
        "sheaf stats run -o stats.mon -- $mon_what; sheaf stats summary stats.mon; sheaf stats report stats.mon -o stats.html"
    monitor_demo() {
        "$sheaf" stats run -o "$work/stats.mon" -- "${mon_cmd[@]}" >/dev/null &&
            "$sheaf" stats summary "$work/stats.mon" >"$work/stats.txt" &&
            sed -n '1,9p' "$work/stats.txt" && echo "..." && sed -n '/^per process/,$p' "$work/stats.txt" &&
            "$sheaf" stats report "$work/stats.mon" -o "$work/stats.html" &&
            echo "report: $work/stats.html (one self-contained page; findings:" \
                "$(grep -o 'data-finding="[a-z-]*"' "$work/stats.html" | sed 's/data-finding=//; s/"//g' | tr '\n' ' '))"
    }
    part_run "job I/O monitoring" monitor_demo || :
fi

# the same container from Python (bindings/python): with the tests' venv if
# ctest made one, else a python3 that has numpy
py=$SHEAF_BUILD/tests/python/env/venv/bin/python
[ -x "$py" ] || py=/usr/bin/python3
if [ -f "$SHEAF_BUILD/src/libsheaf.so" ] && "$py" -c "import numpy" 2>/dev/null; then
    echo
    part=$((part + 1)); echo "== $part. the container from Python: import sheaf (no MPI, no compiler), numpy, a file per task"
    SHEAF_LIBRARY=$SHEAF_BUILD/src/libsheaf.so PYTHONPATH=$SHEAF_ROOT/bindings/python \
        "$py" "$SHEAF_ROOT/examples/python/demo.py" "$work/tasks.sion" "$work/tasks" || {
        echo "   FAIL: Python reader"; status=1; }
fi

echo
if [ $status -eq 0 ]; then echo "demo: OK"; else echo "demo: FAIL"; fi
exit $status
