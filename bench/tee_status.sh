# tee_status.sh - sourced by the benchmark scripts (POSIX sh; not run on its own).
# tee_status FILE CMD...: CMD's output shown and appended to FILE, the exit
# status CMD's own. POSIX sh has no pipefail: `CMD | tee` takes tee's status,
# so a crashing benchmark would be masked (set -e never sees it).
tee_status() {
    _ts_file=$1
    shift
    _ts_st=$(mktemp) || exit 1
    { if "$@"; then _ts_rc=0; else _ts_rc=$?; fi; echo "$_ts_rc" >"$_ts_st"; } | tee -a "$_ts_file"
    _ts_rc=$(cat "$_ts_st")
    rm -f "$_ts_st"
    return "${_ts_rc:-1}"
}
