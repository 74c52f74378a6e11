#!/bin/sh
# run_tool_fuse.sh SHEAF_FGFS: FUSE file systems are named by more than their
# fsname. Synthetic mount tables (SHEAF_FGFS_MOUNTINFO, one per simulated
# node through --sim-tables): DAOS dfuse mounts of different containers at
# one path are 2 servers (it used to say "unique": every dfuse mount is named
# "dfuse"); of the same container (other device numbers, option order) 1;
# without pool/container options, mounts with different device numbers are 2.
tool=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
root='1 0 8:1 / / rw - ext4 /dev/sda1 rw'
mk() { # file dev superoptions
    printf '%s\n54 1 %s / /mnt/dfuse rw,nosuid,nodev - fuse.daos dfuse %s\n' "$root" "$2" "$3" > "$dir/$1"
}
mk c1 0:54 rw,user_id=0,group_id=0,default_permissions,pool=p1,container=c1
mk c2 0:54 rw,user_id=0,group_id=0,default_permissions,pool=p1,container=c2
mk c1b 0:77 rw,container=c1,allow_other,pool=p1,user_id=0,group_id=0
mk d54 0:54 rw,user_id=0,group_id=0,default_permissions
mk d55 0:55 rw,user_id=0,group_id=0,default_permissions
fail=0
expect() { # what tables want-class want-groups
    c=$(SHEAF_FGFS_HOST=n timeout 60 "$tool" --sim 4 --sim-tables "$2" classify /mnt/dfuse/lib/x.so) ||
        { echo "FAIL: $1: classify exited $?"; fail=1; return; }
    g=$(SHEAF_FGFS_HOST=n timeout 60 "$tool" --sim 4 --sim-tables "$2" groups /mnt/dfuse/lib/x.so) ||
        { echo "FAIL: $1: groups exited $?"; fail=1; return; }
    case "$c" in *" $3 "*) ;; *) echo "FAIL: $1: $c (want $3)"; fail=1; return ;; esac
    case "$g" in *" $4 group(s)"*) echo "ok: $1: $3, $4 group(s)" ;; *) echo "FAIL: $1: $g (want $4 groups)"; fail=1 ;; esac
}
expect "containers c1, c2" "$dir/c1,$dir/c2" poorly-distributed 2
expect "container c1 twice (other device, option order)" "$dir/c1,$dir/c1b" unique 1
expect "no container option, devices 0:54 and 0:55" "$dir/d54,$dir/d55" poorly-distributed 2
expect "no container option, device 0:54 everywhere" "$dir/d54,$dir/d54" unique 1
exit $fail
