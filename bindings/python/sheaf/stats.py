"""Read the logs of sheaf's job I/O monitor (``sheaf stats run``) as tables.

::

    import sheaf.stats
    t = sheaf.stats.read("job.mon")       # the log directory, or one .smon file
    t.files        # per file (and folded aggregate), summed over processes
    t.ranks        # per rank (a process without a rank is a row of its own)
    t.processes    # per process
    t.totals       # dict: the job's counters and counts
    t.targets      # per storage target: None, this log format has none

Tables are pandas DataFrames when pandas can be imported (``pandas=False``
asks for the fallback), else numpy structured arrays. Counter columns are
the names of ``sheaf stats summary --json`` (:data:`COUNTERS`), unsigned 64-bit.

The log (doc/monitor.md, "The log") is one sheaf container per process with a
stream of fixed 512-byte little-endian records (HEAD, NAME, FILE, SNAP). It is
read through the container reader (:func:`sheaf.open`) and every record is
checked as the C reader checks it (magic, type, version, ids against the
budget the head declares, name segments, kinds); a truncated or hostile log
raises :class:`LogError` naming the file and the record, and memory stays
bounded by the log's size. A log whose process was killed was never closed:
:class:`sheaf.UnclosedError` (``sheaf stats summary --recover LOG`` closes it).

Command line (used by ``sheaf stats export --format parquet``)::

    python3 -m sheaf.stats export --format parquet|csv LOG -o OUT

writes the same table as ``sheaf stats export --format csv``: one row per
file, per rank and the total (column ``level``); Parquet through pyarrow.
"""
from __future__ import annotations

import argparse
import csv
import os
import struct
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .errors import FormatError, UnclosedError
from .reader import Container

__all__ = ["read", "StatsTables", "LogError", "COUNTERS", "export"]

#: the counters of a record, in the log's order (src/monitor/record.c)
COUNTERS: Tuple[str, ...] = (
    "opens", "reads", "writes", "seeks", "stats", "fsyncs", "mmaps", "flushes", "stdio_ops", "bytes_read",
    "bytes_written", "mmap_bytes", "max_byte_read", "max_byte_written", "seq_reads", "seq_writes", "consec_reads",
    "consec_writes", "rw_switches", "file_not_aligned", "mem_not_aligned", "read_ns", "write_ns", "meta_ns",
    "first_ns", "last_ns", "files",
    "read_0_100", "read_100_1K", "read_1K_10K", "read_10K_100K", "read_100K_1M", "read_1M_4M", "read_4M_10M",
    "read_10M_100M", "read_100M_1G", "read_1G_plus",
    "write_0_100", "write_100_1K", "write_1K_10K", "write_10K_100K", "write_100K_1M", "write_1M_4M",
    "write_4M_10M", "write_10M_100M", "write_100M_1G", "write_1G_plus")
_NC = len(COUNTERS)
_MAX = {"max_byte_read", "max_byte_written", "last_ns"}
_MIN = {"first_ns"}
_REC = 512
_MAGIC = 0x4E4F4D53
_VERSION = 2
_VERSION_MIN = 1  # version 1: no storage targets
_TGT_MAX = 4096
_TGT_KINDS = ("local", "pseudo", "nfs", "cifs", "lustre", "gpfs", "beegfs", "ceph", "fuse", "image", "panfs")
_NAME_SEG = 480
_NAME_MAX = 4096
_IDS_MAX = 1 << 20
_KINDS = {1: "file", 2: "dir", 3: "other"}


class LogError(FormatError):
    """A monitor log that is not one: truncated, or a record out of bounds."""


@dataclass
class _Proc:
    log: str
    rank: int = -1
    pid: int = 0
    ppid: int = 0
    start_ns: int = 0
    host: str = ""
    exe: str = ""
    limit: int = 0
    max_files: int = 0
    max_dirs: int = 0
    snapshots: int = 0
    clean_end: bool = False
    names: Dict[int, bytearray] = field(default_factory=dict)
    counters: Dict[int, Tuple[int, List[int]]] = field(default_factory=dict)  # id -> (snap, counters)
    max_targets: int = 0
    version: int = 0
    targets: Dict[int, Tuple[str, str, str]] = field(default_factory=dict)  # id -> (name, fstype, kind)
    file_tgt: Dict[int, int] = field(default_factory=dict)  # record id -> target id + 1


@dataclass
class StatsTables:
    """The tables of a job's monitor log (see the module's documentation)."""

    files: Any
    ranks: Any
    processes: Any
    totals: Dict[str, int]
    targets: Any = None


def _kind_of(p: _Proc, rid: int) -> int:
    return 1 if rid < p.max_files else 2 if rid < p.max_files + p.max_dirs else 3


def _head(p: _Proc, rec: bytes) -> None:
    version, rank, mf, md, pid, ppid, start, _interval, _align = struct.unpack_from("<IiIIQQQQQ", rec, 8)
    if not _VERSION_MIN <= version <= _VERSION:
        raise ValueError(f"log version {version}, this reader knows {_VERSION_MIN} to {_VERSION}")
    p.version = version
    p.max_targets = struct.unpack_from("<I", rec, 256)[0] if version >= 2 else 0
    if p.max_targets > _TGT_MAX:
        raise ValueError(f"head record: {p.max_targets} storage targets is past the limit {_TGT_MAX}")
    if mf >= _IDS_MAX or md >= _IDS_MAX:
        raise ValueError(f"head record: budget {mf} files / {md} dirs is past the limit {_IDS_MAX}")
    p.rank, p.pid, p.ppid, p.start_ns, p.max_files, p.max_dirs = rank, pid, ppid, start, mf, md
    p.limit = mf + md + 1
    p.host = rec[64:128].split(b"\0", 1)[0].decode("utf-8", "replace")
    p.exe = rec[128:256].split(b"\0", 1)[0].decode("utf-8", "replace")


def _name(p: _Proc, rec: bytes) -> None:
    rid, off, total, ln = struct.unpack_from("<IIII", rec, 8)
    if rid >= _IDS_MAX or total == 0 or total >= _NAME_MAX or ln > _NAME_SEG or off > total or ln > total - off:
        raise ValueError(f"name record: id {rid}, segment {off}+{ln} of {total} out of bounds")
    if rid >= p.limit:
        raise ValueError(f"record id {rid} past the log's budget of {p.limit} records")
    buf = p.names.setdefault(rid, bytearray(total))
    if len(buf) != total:
        raise ValueError(f"name of record {rid}: length {total}, earlier {len(buf)}")
    buf[off:off + ln] = rec[24:24 + ln]


def _file(p: _Proc, rec: bytes) -> None:
    rid, kind, snap = struct.unpack_from("<IIQ", rec, 8)
    if rid >= _IDS_MAX or kind not in _KINDS:
        raise ValueError(f"file record: id {rid} kind {kind} out of bounds")
    if rid >= p.limit:
        raise ValueError(f"record id {rid} past the log's budget of {p.limit} records")
    if kind != _kind_of(p, rid):
        raise ValueError(f"record {rid}: kind {kind} where the budget says {_kind_of(p, rid)}")
    tgt = struct.unpack_from("<I", rec, 24 + 8 * _NC)[0] if p.version >= 2 else 0
    if p.version >= 2 and (tgt == 0 or tgt > p.max_targets + 1 or tgt - 1 not in p.targets):
        raise ValueError(f"record {rid}: storage target {tgt} not declared before it")
    if p.file_tgt.get(rid, tgt) != tgt:
        raise ValueError(f"record {rid}: target {tgt - 1}, earlier {p.file_tgt[rid] - 1}")
    p.file_tgt[rid] = tgt
    old = p.counters.get(rid)
    if old is None or snap >= old[0]:
        p.counters[rid] = (snap, list(struct.unpack_from(f"<{_NC}Q", rec, 24)))


def _tgt(p: _Proc, rec: bytes) -> None:
    tid, kind = struct.unpack_from("<II", rec, 8)
    fstype, name = rec[16:48], rec[48:488]
    if tid > p.max_targets or (kind >= 64 and kind != 255) or b"\0" not in fstype or b"\0" not in name \
            or name[:1] == b"\0":
        raise ValueError(f"target record: id {tid} kind {kind}, or its names not terminated")
    p.targets[tid] = (name.split(b"\0", 1)[0].decode("utf-8", "replace"),
                      fstype.split(b"\0", 1)[0].decode("utf-8", "replace"),
                      _TGT_KINDS[kind] if kind < len(_TGT_KINDS) else "unknown")


def _parse(p: _Proc, data: bytes) -> None:
    if len(data) % _REC:
        raise LogError(f"{p.log}: {len(data)} bytes is not a whole number of {_REC}-byte records (truncated)")
    have_head = False
    for i in range(0, len(data), _REC):
        rec = data[i:i + _REC]
        try:
            magic, typ = struct.unpack_from("<IH", rec, 0)
            if magic != _MAGIC:
                raise ValueError(f"not a monitor record (magic 0x{magic:08x})")
            if typ == 1:
                if have_head:
                    raise ValueError("a second head record")
                _head(p, rec)
                have_head = True
            elif typ not in (2, 3, 4, 5) or (typ == 5 and p.version < 2):
                raise ValueError(f"unknown record type {typ}")
            elif not have_head:
                raise ValueError("the log does not start with a head record")
            elif typ == 2:
                _name(p, rec)
            elif typ == 3:
                _file(p, rec)
            elif typ == 5:
                _tgt(p, rec)
            else:
                _snap, _time, nfile, final = struct.unpack_from("<QQQQ", rec, 8)
                if nfile > p.limit:
                    raise ValueError(f"snapshot claims {nfile} records, the budget is {p.limit}")
                p.snapshots += 1
                p.clean_end = final != 0
        except ValueError as e:
            raise LogError(f"{p.log}: record {i // _REC} (byte {i}): {e}", filename=p.log) from None
    if data and not have_head:
        raise LogError(f"{p.log}: no head record", filename=p.log)


def _read_log(path: str) -> Optional[_Proc]:
    try:
        with Container(path) as c:
            if c.ntasks != 1:
                raise LogError(f"{path}: {c.ntasks} tasks, a monitor log has one", filename=path)
            data = c.read_task(0)
    except UnclosedError as e:
        raise UnclosedError(f"{path} was never closed (its process was killed, or still runs): run "
                            f"`sheaf stats summary --recover` or `sheaf recover` on it first ({e})", e.code,
                            path) from None
    p = _Proc(log=path)
    _parse(p, data)
    return p if data else None


def _merge(dst: List[int], src: Sequence[int]) -> None:
    for i, name in enumerate(COUNTERS):
        if name in _MAX:
            dst[i] = max(dst[i], src[i])
        elif name in _MIN:
            dst[i] = src[i] if dst[i] == 0 or (src[i] and src[i] < dst[i]) else dst[i]
        else:
            dst[i] += src[i]


def _procs(path: str) -> List[_Proc]:
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if n.endswith(".smon"))
        if not names:
            raise LogError(f"{path}: no monitor logs (*.smon) in it", filename=path)
        logs = [os.path.join(path, n) for n in names]
    elif os.path.exists(path):
        logs = [path]
    else:
        raise FileNotFoundError(f"{path}: no such monitor log")
    return [p for p in (_read_log(x) for x in logs) if p is not None]


def _row_key(p: _Proc) -> Tuple[int, int, int]:
    # a rank's processes share a row; a process without a rank is a row of its own (after the ranks)
    return (0, p.rank, 0) if p.rank >= 0 else (1, 0, p.pid)


def _table(rows: List[Dict[str, Any]], cols: List[Tuple[str, str]], pandas: Optional[bool]) -> Any:
    if pandas is not False:
        try:
            import pandas as pd  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            if pandas:
                raise
        else:
            df = pd.DataFrame({c: [r[c] for r in rows] for c, _ in cols})
            for c, t in cols:
                if t == "u8":
                    df[c] = df[c].astype("uint64")
            return df
    width = {c: max([len(r[c]) for r in rows] + [1]) for c, t in cols if t == "U"}
    arr = np.zeros(len(rows), dtype=[(c, f"U{width[c]}" if t == "U" else t) for c, t in cols])
    for i, r in enumerate(rows):
        arr[i] = tuple(r[c] for c, _ in cols)
    return arr


_Rows = List[Dict[str, Any]]


def _tables(procs: List[_Proc]) -> Tuple[_Rows, _Rows, _Rows, Dict[str, int], _Rows]:
    files: Dict[Tuple[str, str], Dict[str, Any]] = {}
    ranks: Dict[Tuple[int, int, int], Dict[str, Any]] = {}
    per_file_rank: Dict[Tuple[str, str], Dict[Tuple[int, int, int], int]] = {}
    prows: List[Dict[str, Any]] = []
    tgts: Dict[str, Dict[str, Any]] = {}
    for p in procs:
        key = _row_key(p)
        rr = ranks.setdefault(key, {"rank": p.rank, "pid": p.pid, "processes": 0, "c": [0] * _NC})
        rr["processes"] += 1
        pc = [0] * _NC
        for rid, (_snap, c) in sorted(p.counters.items()):
            kind = _KINDS[_kind_of(p, rid)]
            # a name ends at its first NUL (segments missing from a cut log leave zeros), as in C
            nm = bytes(p.names[rid]).split(b"\0", 1)[0].decode("utf-8", "replace") if rid in p.names \
                else "(unnamed)"
            f = files.setdefault((kind, nm), {"kind": kind, "name": nm, "processes": 0, "c": [0] * _NC})
            f["processes"] += 1
            _merge(f["c"], c)
            _merge(rr["c"], c)
            _merge(pc, c)
            moved = c[9] + c[10]
            fr = per_file_rank.setdefault((kind, nm), {})
            fr[key] = fr.get(key, 0) + moved
            tid1 = p.file_tgt.get(rid, 0)
            if tid1:
                tn, tf, tk = p.targets[tid1 - 1]
                tr = tgts.setdefault(tn, {"target": tn, "fstype": tf, "fskind": tk, "procset": set(), "records": 0,
                                          "c": [0] * _NC})
                tr["procset"].add(id(p))
                tr["records"] += 1
                _merge(tr["c"], c)
        prows.append({"rank": p.rank, "pid": p.pid, "ppid": p.ppid, "host": p.host, "exe": p.exe, "log": p.log,
                      "snapshots": p.snapshots, "clean_end": p.clean_end, "c": pc})
    tot = [0] * _NC
    frows = sorted(files.values(), key=lambda f: (-(f["c"][9] + f["c"][10]), f["name"]))
    for f in frows:
        _merge(tot, f["c"])
        f["ranks_with_io"] = sum(1 for v in per_file_rank[(f["kind"], f["name"])].values() if v)
    rrows = [ranks[k] for k in sorted(ranks)]
    for r in rrows:
        r["ranks_with_io"] = int(r["c"][9] + r["c"][10] != 0)
    totals = dict(zip(COUNTERS, tot))
    # per-rank statistics are over the processes with a rank when the job has any (a launcher
    # or shell without one does not count), as in `sheaf stats report|export`
    ranked = [r for r in rrows if r["rank"] >= 0] or rrows
    totals.update(processes_count=len(procs), ranks_count=len(ranked),
                  ranks_with_io=sum(r["ranks_with_io"] for r in ranked),
                  files_count=sum(1 for f in frows if f["kind"] == "file"),
                  folded_opens=sum(f["c"][26] for f in frows if f["kind"] != "file"))
    trows = sorted(tgts.values(), key=lambda t: (-(t["c"][9] + t["c"][10]), t["target"]))
    for t in trows:
        t["processes"] = len(t.pop("procset"))
    return frows, rrows, prows, totals, trows


def _flat(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    out = []
    for r in rows:
        d = {k: v for k, v in r.items() if k != "c"}
        d.update(zip(COUNTERS, r["c"]))
        out.append(d)
    return out


_CC = [(c, "u8") for c in COUNTERS]


def read(log: "str | os.PathLike[str]", *, pandas: Optional[bool] = None) -> StatsTables:
    """Read a job's monitor log (its directory, or one ``.smon`` file) into tables.

    Args:
        log: the directory ``sheaf stats run -o`` named, or one of its ``.smon`` files.
        pandas: None: DataFrames when pandas imports, else numpy structured arrays;
            False: numpy always; True: pandas (ImportError without it).

    Returns:
        :class:`StatsTables`: ``files`` (kind, name, processes, ranks_with_io and the
        counters), ``ranks`` (rank, pid of its first process, processes, ranks_with_io,
        counters), ``processes`` (rank, pid, ppid, host, exe, log, snapshots,
        clean_end, counters), ``totals`` (a dict), ``targets`` (target: the storage
        target's global name, fstype, fskind, processes, records and the counters,
        summed by name over the processes; None for version 1 logs, which have none).

    Raises:
        LogError: a truncated or malformed log (names the file and the record).
        sheaf.UnclosedError: a log whose process was killed and that was not recovered.
        FileNotFoundError: no such path.
    """
    procs = _procs(os.fspath(log))
    frows, rrows, prows, totals, trows = _tables(procs)
    files = _table(_flat(frows), [("kind", "U"), ("name", "U"), ("processes", "u4"), ("ranks_with_io", "u4")] + _CC,
                   pandas)
    ranks = _table(_flat(rrows), [("rank", "i4"), ("pid", "u8"), ("processes", "u4"), ("ranks_with_io", "u4")]
                   + _CC, pandas)
    processes = _table(_flat(prows), [("rank", "i4"), ("pid", "u8"), ("ppid", "u8"), ("host", "U"), ("exe", "U"),
                                      ("log", "U"), ("snapshots", "u8"), ("clean_end", "?")] + _CC, pandas)
    targets = _table(_flat(trows), [("target", "U"), ("fstype", "U"), ("fskind", "U"), ("processes", "u4"),
                                    ("records", "u8")] + _CC, pandas) if trows else None
    return StatsTables(files=files, ranks=ranks, processes=processes, totals=totals, targets=targets)


def _export_rows(log: str) -> List[Dict[str, Any]]:
    """The rows of ``sheaf stats export --format csv``: level file, rank, total."""
    frows, rrows, prows, totals, _trows = _tables(_procs(log))
    rows: List[Dict[str, Any]] = []
    for f in frows:
        rows.append({"level": "file", "rank": None, "pid": None, "kind": f["kind"], "name": f["name"],
                     "processes": f["processes"], "ranks_with_io": f["ranks_with_io"], "c": f["c"]})
    for r in rrows:
        rows.append({"level": "rank", "rank": r["rank"], "pid": r["pid"], "kind": None, "name": None,
                     "processes": r["processes"], "ranks_with_io": r["ranks_with_io"], "c": r["c"]})
    rows.append({"level": "total", "rank": None, "pid": None, "kind": None, "name": None,
                 "processes": totals["processes_count"], "ranks_with_io": totals["ranks_with_io"],
                 "c": [totals[c] for c in COUNTERS]})
    return _flat(rows)


def export(log: "str | os.PathLike[str]", out: "str | os.PathLike[str]", fmt: str = "parquet") -> int:
    """Write the export table (see the module's documentation) as ``parquet`` or ``csv``; returns its rows.

    Parquet needs pyarrow (``pip install pyarrow``): ImportError with that hint otherwise."""
    rows = _export_rows(os.fspath(log))
    head = ["level", "rank", "pid", "kind", "name", "processes", "ranks_with_io", *COUNTERS]
    if fmt == "csv":
        with open(out, "w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_MINIMAL)
            w.writerow(head)
            for r in rows:
                w.writerow(["" if r[h] is None else r[h] for h in head])
        return len(rows)
    if fmt != "parquet":
        raise ValueError(f"format {fmt!r}: parquet or csv")
    try:
        import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]
        import pyarrow.parquet as pq  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as e:
        raise ImportError(f"--format parquet needs pyarrow (pip install pyarrow): {e}") from None
    types = {"level": pa.string(), "rank": pa.int32(), "pid": pa.uint64(), "kind": pa.string(),
             "name": pa.string(), "processes": pa.uint32(), "ranks_with_io": pa.uint32()}
    schema = pa.schema([(h, types.get(h, pa.uint64())) for h in head])
    table = pa.Table.from_pydict({h: [r[h] for r in rows] for h in head}, schema=schema)
    pq.write_table(table, os.fspath(out))
    return len(rows)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m sheaf.stats", description="sheaf job I/O monitor logs")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("export", help="write the export table (parquet through pyarrow, or csv)")
    ex.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    ex.add_argument("-o", "--output", required=True)
    ex.add_argument("log")
    a = ap.parse_args(argv)
    try:
        n = export(a.log, a.output, a.format)
    except (ImportError, OSError, FormatError, ValueError) as e:
        print(f"sheaf.stats: {e}", file=sys.stderr)
        return 1
    print(f"sheaf.stats: {n} rows to {a.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
