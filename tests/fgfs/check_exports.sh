#!/bin/sh
# check_exports.sh LIB... - every dynamic symbol a library defines is public
# API (sheaf_fgfs_*): the internals (fgfs_*) are hidden.
rc=0
for lib in "$@"; do
    [ -n "$lib" ] || continue
    bad=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^sheaf_fgfs_' | grep -v '^_' || true)
    n=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -c '^sheaf_fgfs_')
    if [ -n "$bad" ]; then
        echo "$lib exports internal symbols:"; echo "$bad"; rc=1
    else
        echo "$lib: $n symbols, all sheaf_fgfs_*"
    fi
done
exit $rc
