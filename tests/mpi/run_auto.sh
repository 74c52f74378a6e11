#!/bin/sh
# run_auto.sh - files=auto (sion_paropen_mpi) on 2 simulated nodes x 2 ranks.
#   run_auto.sh injected DIR MPIEXEC NPFLAG TEST
#       no root needed: each rank gets its node's mount table and host name
#       (SHEAF_FGFS_MOUNTINFO, SHEAF_FGFS_HOST) and runs in its node's
#       directory DIR/nodeK; "local" there is declared a tmpfs (node-local
#       storage: a relative name local/c.sion is different storage on each
#       node), DIR/share an NFS export srvA:/share seen by both nodes.
#   run_auto.sh bed DIR MPIEXEC NPFLAG TEST BEDSCRIPT FUSESRV
#       the namespace test bed (scripts/fgfs-testbed.sh): each node its own
#       mount namespace and host name with its own tmpfs at DIR/mnt/local (the
#       same path on every node); exit 77 when the bed is not permitted.
#   run_auto.sh nofgfs DIR MPIEXEC NPFLAG TEST
#       TEST built without FGFS: files=auto fails on every rank.
# TEST is tests/mpi/mpi_auto_test. Exit status 0 when every step passed.
mode=$1 dir=$2 mpiexec=$3 npflag=$4 test=$5
fails=0
step() { # step NAME CMD...
    name=$1; shift
    echo "== $name"
    if "$@"; then echo "-- ok: $name"; else echo "-- FAILED: $name"; fails=$((fails + 1)); fi
}
# members NODEDIR BASE EXPECTED...: the members of BASE in NODEDIR are exactly EXPECTED
members() {
    d=$1 b=$2; shift 2
    got=$(cd "$d" && ls -1 | grep "^$b" | sort | tr '\n' ' ')
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    echo "   $d: $got"
    [ "$got" = "$want" ] || { echo "   expected: $want"; return 1; }
}

case "$mode" in
injected)
    rm -rf "$dir"
    mkdir -p "$dir/share" "$dir/node0/local" "$dir/node1/local" || exit 1
    for k in 0 1; do
        { cat /proc/self/mountinfo
          echo "9101 1 0:911 / $dir/share rw - nfs srvA:/share rw"
          echo "9102 1 0:92$k / $dir/node$k/local rw - tmpfs tmpfs rw"
        } > "$dir/node$k.mountinfo"
    done
    # a table in which no mount covers the container's directory
    echo "9201 1 0:5 / /proc rw - proc proc rw" > "$dir/bad.mountinfo"
    # wrap.sh LAYOUT CMD...: block (rank/2), rr (rank%2), swap (1-rank/2),
    # badtable (block, rank 3 with bad.mountinfo)
    cat > "$dir/wrap.sh" <<EOW
#!/bin/sh
r=\${PMI_RANK:-\${OMPI_COMM_WORLD_RANK:-0}}
lay=\$1; shift
case \$lay in
    rr) k=\$(( r % 2 )) ;;
    swap) k=\$(( 1 - r / 2 )) ;;
    *) k=\$(( r / 2 )) ;;
esac
t=$dir/node\$k.mountinfo
[ "\$lay" = badtable ] && [ "\$r" = 3 ] && t=$dir/bad.mountinfo
cd $dir/node\$k || exit 1
SHEAF_FGFS_MOUNTINFO=\$t SHEAF_FGFS_HOST=node\$k exec "\$@"
EOW
    chmod +x "$dir/wrap.sh"
    run() { lay=$1; shift; "$mpiexec" $npflag 4 "$dir/wrap.sh" "$lay" "$test" "$@"; }
    step "shared storage: one physical file" run block write "$dir/share/c.sion" files=1 expect=shared
    step "shared storage: the set on disk" members "$dir/share" c.sion c.sion
    step "shared storage: read back" run block read "$dir/share/c.sion" files=1
    step "shared storage, numFiles=2 asked: 2 files" run block write "$dir/share/d.sion" files=2 numfiles=2 \
        expect=shared
    step "shared storage, numFiles=2: the set on disk" members "$dir/share" d.sion d.sion d.sion.000001
    step "shared storage, numFiles=2: read back" run block read "$dir/share/d.sion" files=2
    step "shared storage, another placement (rank % 2): read back" run rr read "$dir/share/d.sion" files=2
    step "node-local storage: one physical file per node" run block write local/c.sion files=2 expect=local
    step "node-local storage: node 0 holds file 0 only" members "$dir/node0/local" c.sion c.sion
    step "node-local storage: node 1 holds file 1 only" members "$dir/node1/local" c.sion c.sion.000001
    step "node-local storage: read back" run block read local/c.sion files=2
    step "node-local, numFiles=4 asked: 2 files per node" run block write local/f.sion files=4 numfiles=4 \
        expect=local
    step "node-local, numFiles=4: node 0 holds files 0 and 1" members "$dir/node0/local" f.sion f.sion \
        f.sion.000001
    step "node-local, numFiles=4: node 1 holds files 2 and 3" members "$dir/node1/local" f.sion f.sion.000002 \
        f.sion.000003
    step "node-local, numFiles=4: read back" run block read local/f.sion files=4
    step "node-local, other placement (rank % 2): refused" run rr fail local/c.sion mode=br,files=auto \
        "expect=are in different storage groups"
    step "node-local, nodes swapped: refused" run swap fail local/c.sion mode=br,files=auto \
        "expect=rank 0 cannot read the first physical file"
    step "FGFS cannot classify the directory (rank 3): refused" run badtable fail local/e.sion \
        mode=bw,files=auto "expect=FGFS cannot tell which ranks share the storage"
    step "files=auto elsewhere, disagreement, buddy: refused" run block others "$dir/share/o.sion"
    rm -rf "$dir"
    ;;
bed)
    bed=$6 srv=$7
    [ -n "$srv" ] && [ -x "$srv" ] || { echo "SKIPPED: no fusesrv (tests/fgfs not built)"; exit 77; }
    "$bed" down "$dir" 2>/dev/null
    "$bed" up "$dir" 2 "$srv"
    rc=$?
    if [ $rc -ne 0 ]; then "$bed" down "$dir" 2>/dev/null; exit $rc; fi
    # inrank LAYOUT CMD...: rank r into node r/2 (block), r%2 (rr) or 1-r/2 (swap)
    cat > "$dir/inrank.sh" <<EOW
#!/bin/sh
r=\${PMI_RANK:-\${OMPI_COMM_WORLD_RANK:-0}}
lay=\$1; shift
case \$lay in
    rr) k=\$(( r % 2 )) ;;
    swap) k=\$(( 1 - r / 2 )) ;;
    *) k=\$(( r / 2 )) ;;
esac
exec nsenter --mount=$dir/ns/node\$k.mnt --uts=$dir/ns/node\$k.uts --wd="\$PWD" "\$@"
EOW
    chmod +x "$dir/inrank.sh"
    run() { lay=$1; shift; "$mpiexec" $npflag 4 "$dir/inrank.sh" "$lay" "$test" "$@"; }
    innode() { k=$1; shift; nsenter --mount="$dir/ns/node$k.mnt" --uts="$dir/ns/node$k.uts" "$@"; }
    c=$dir/mnt/local/c.sion
    step "node-local tmpfs per node: one physical file per node" run block write "$c" files=2 expect=local
    # node_holds K MEMBER: the members of c.sion in DIR/mnt/local, as node K sees it, are MEMBER alone
    node_holds() {
        got=$(innode "$1" ls -1 "$dir/mnt/local" | grep '^c\.sion' | tr '\n' ' ')
        echo "   node$1: $got"
        [ "$got" = "$2 " ]
    }
    host_holds_none() { ! ls -1 "$dir/mnt/local" | grep -q '^c\.sion'; }
    step "node 0's tmpfs holds file 0 only" node_holds 0 c.sion
    step "node 1's tmpfs holds file 1 only" node_holds 1 c.sion.000001
    step "the host's directory holds none" host_holds_none
    step "node-local: read back" run block read "$c" files=2
    step "other placement (rank % 2): refused" run rr fail "$c" mode=br,files=auto \
        "expect=are in different storage groups"
    step "nodes swapped: refused" run swap fail "$c" mode=br,files=auto \
        "expect=rank 0 cannot read the first physical file"
    "$bed" down "$dir"
    ;;
nofgfs)
    rm -rf "$dir"; mkdir -p "$dir" || exit 1
    step "without FGFS, write: refused" "$mpiexec" $npflag 2 "$test" fail "$dir/c.sion" mode=bw,files=auto \
        "expect=files=auto needs FGFS"
    step "without FGFS, read: refused" "$mpiexec" $npflag 2 "$test" fail "$dir/c.sion" mode=br,files=auto \
        "expect=files=auto needs FGFS"
    rm -rf "$dir"
    ;;
*)
    echo "usage: $0 injected|bed|nofgfs DIR MPIEXEC NPFLAG TEST [BEDSCRIPT FUSESRV]" >&2
    exit 2 ;;
esac
echo "$fails step(s) failed"
[ "$fails" -eq 0 ]
