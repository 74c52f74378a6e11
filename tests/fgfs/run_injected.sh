#!/bin/sh
# run_injected.sh DIR CHECK LAUNCHER... - 2 simulated nodes x 2 ranks whose
# mount tables are injected per rank (SHEAF_FGFS_MOUNTINFO, SHEAF_FGFS_HOST):
# the host's own table plus nfs mounts of srvA/srvB at DIR/mnt/*. Works
# without namespaces; consistency of different bytes is left to the bed.
# LAUNCHER: the tree's MPI command for 4 ranks (mpiexec -n 4 and its flags).
dir=$1 check=$2; shift 2
rm -rf "$dir"; mkdir -p "$dir/mnt/local/sub" "$dir/mnt/bind" "$dir/mnt/one" "$dir/mnt/half-same" "$dir/mnt/half-diff"
echo data > "$dir/mnt/one/data"; echo x > "$dir/mnt/local/sub/f"
for k in 0 1; do
    s=srvA; [ $k -ge 1 ] && s=srvB
    { cat /proc/self/mountinfo
      echo "9001 1 0:901 / $dir/mnt/local rw - tmpfs tmpfs rw"
      echo "9002 1 0:901 /sub $dir/mnt/bind rw - tmpfs tmpfs rw"
      echo "9003 1 0:903 / $dir/mnt/one rw - nfs srvA:/one rw"
      echo "9004 1 0:904 / $dir/mnt/half-same rw - nfs $s:/same rw"
      echo "9005 1 0:905 / $dir/mnt/half-diff rw - nfs $s:/diff rw"
    } > "$dir/node$k.mountinfo"
done
cat > "$dir/wrap.sh" <<EOW
#!/bin/sh
k=\$(( \${PMI_RANK:-\${OMPI_COMM_WORLD_RANK:-0}} / 2 ))
SHEAF_FGFS_MOUNTINFO=$dir/node\$k.mountinfo SHEAF_FGFS_HOST=node\$k exec "\$@"
EOW
chmod +x "$dir/wrap.sh"
"$@" "$dir/wrap.sh" "$check" 2 2 "$dir/mnt" injected
rc=$?
rm -rf "$dir"
exit $rc
