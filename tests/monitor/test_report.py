#!/usr/bin/env python3
"""test_report.py - `sheaf stats report` and `sheaf stats export` on a known job
(mon_job.c: 4 ranks, known files, sizes and operations; doc/monitor.md, "Reports").

usage: test_report.py CASE SHEAF BINDIR WORKDIR [PYTHON]
CASE:
  report   the HTML page opened in a real headless browser (Chromium from Debian,
           --dump-dom and --screenshot): the plots' SVG elements and the job's known
           numbers are in the DOM; 77 if chromium is absent
  csv      --format csv and --format llview: every known number read back
  parquet  --format parquet (python3 -m sheaf.stats with PYTHON, pyarrow): read back
           with pyarrow; 77 if PYTHON has no pyarrow
  bad      a truncated and a hostile log, missing arguments: clear errors, exit 1/2
Exit 0 pass, 1 fail, 77 skip.
"""
import csv
import html.parser
import io
import json
import os
import shutil
import subprocess
import sys

FAILS = []
# what mon_job does (mon_job.c)
MiB = 1 << 20
WRITTEN = {0: MiB + 10000, 1: 0, 2: MiB, 3: 4 * MiB}
READ = {0: 0, 1: 0, 2: MiB, 3: 0}
FILES = {"part.3": (0, 4 * MiB), "part.2": (MiB, MiB), "part.0": (0, MiB), "small.log": (0, 10000),
         "meta.cfg": (0, 0)}
TOTAL = sum(WRITTEN.values()) + sum(READ.values())  # 7350032


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def eq(got, want, what):
    check(got == want, "%s: got %r, want %r" % (what, got, want))


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, **kw)


def job_log(sheaf, bindir, work):
    d = os.path.join(work, "data")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(d)
    log = os.path.join(work, "job.mon")
    p = run(sheaf, "stats", "run", "-o", log, "--interval-ms", "50", "--", os.path.join(bindir, "mon_job"), d)
    if p.returncode != 0:
        raise SystemExit("mon_job under sheaf stats run failed: %d %s" % (p.returncode, p.stderr))
    return log


class Dom(html.parser.HTMLParser):
    """the elements of the DOM Chromium dumped: tag, attributes, and the text under each id"""

    def __init__(self):
        super().__init__()
        self.elems, self.stack, self.text = [], [], {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elems.append((tag, a))
        if tag not in ("rect", "br", "meta", "path"):
            self.stack.append(a.get("id"))

    def handle_endtag(self, tag):
        if tag not in ("rect", "br", "meta", "path") and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        for i in self.stack:
            if i:
                self.text[i] = self.text.get(i, "") + data

    def find(self, tag=None, cls=None, **attrs):
        out = []
        for t, a in self.elems:
            if tag and t != tag:
                continue
            if cls and cls not in (a.get("class") or "").split():
                continue
            if all(a.get(k.replace("_", "-")) == v for k, v in attrs.items()):
                out.append(a)
        return out


def chromium():
    for c in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(c):
            return shutil.which(c)
    return None


def browser(exe, work, *args):
    return run(exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--user-data-dir=" + os.path.join(work, "chrome-profile"), *args, timeout=180)


def case_report(sheaf, bindir, work, _py):
    exe = chromium()
    if not exe:
        print("SKIP: no chromium (Debian: apt-get install chromium; scripts/install-deps.sh installs it)")
        return 77
    log = job_log(sheaf, bindir, work)
    page = os.path.join(work, "job.html")
    p = run(sheaf, "stats", "report", log, "-o", page, "--top", "3")
    eq(p.returncode, 0, "report exit (%s)" % p.stderr.strip())
    src = open(page).read()
    check("<script" not in src and "http://" not in src.replace('xmlns="http://www.w3.org/2000/svg"', "")
          and "https://" not in src, "self-contained: no script, nothing fetched")
    d = browser(exe, work, "--dump-dom", "file://" + page)
    eq(d.returncode, 0, "chromium --dump-dom exit (%s)" % d.stderr[-500:])
    dom = Dom()
    dom.feed(d.stdout)
    # the heat map: cells whose bytes add up to every byte the job moved
    hm = dom.find("svg", id="heatmap")
    eq(len(hm), 1, "one heat map svg")
    cells = dom.find("rect", cls="hm-cell")
    check(len(cells) >= 4, "heat map cells: %d" % len(cells))
    eq(sum(int(c["data-bytes"]) for c in cells), TOTAL, "heat map cells' bytes")
    eq(hm[0].get("data-total") if hm else None, str(TOTAL), "heat map total")
    eq(hm[0].get("data-rows") if hm else None, "4", "heat map rows (ranks)")
    # bytes per rank
    bars = dom.find("g", cls="rank-bar")
    eq([(b["data-rank"], int(b["data-bytes"])) for b in bars],
       [("rank %d" % r, WRITTEN[r] + READ[r]) for r in range(4)], "rank bars")
    eq(dom.text.get("ranks-io"), "3", "ranks with non-zero I/O")
    eq(dom.text.get("worst-rank"), "rank 3", "worst rank")
    eq(dom.text.get("worst-bytes"), str(4 * MiB), "worst rank's bytes")
    eq(dom.text.get("imbalance"), "%.2f" % (4 * MiB / (TOTAL / 4)), "imbalance")
    # bytes per storage target (log version 2): every byte of the job on a target named by its
    # global name, the bars' bytes add up to the job's, as `sheaf stats summary --json` says
    tbars = dom.find("g", cls="target-bar")
    check(len(tbars) >= 1, "target bars: %d" % len(tbars))
    eq(sum(int(b["data-bytes-read"]) for b in tbars), MiB, "target bars' bytes read")
    eq(sum(int(b["data-bytes-written"]) for b in tbars), sum(WRITTEN.values()), "target bars' bytes written")
    sj = json.loads(run(sheaf, "stats", "summary", "--json", log).stdout)
    eq(sorted(b["data-target"] for b in tbars), sorted(t["name"] for t in sj.get("targets", [])),
       "target bars name the summary's targets")
    # access sizes: 1000 writes of 10 B, 96 of 64 KiB; 16 reads of 64 KiB
    hist = {(a.get("data-bucket"), a.get("data-count")) for a in dom.find("g", cls="hist-bar")}
    eq(len(dom.find("g", cls="hist-bar")), 20, "histogram bars")
    check(("0-100", "1000") in hist and ("10K-100K", "96") in hist and ("10K-100K", "16") in hist,
          "histogram counts: %r" % sorted(hist))
    eq(len(dom.find("svg", id="hist-read")) + len(dom.find("svg", id="hist-write")), 2, "two histograms")
    # totals and findings with their numbers
    eq(dom.text.get("t-read"), str(MiB), "bytes read")
    eq(dom.text.get("t-written"), str(sum(WRITTEN.values())), "bytes written")
    found = {a["data-finding"] for a in dom.find("li", cls="finding")}
    for f in ("small-requests", "unaligned", "hot-file", "metadata-storm", "imbalance"):
        check(f in found, "finding %s in %r" % (f, sorted(found)))
    text = dom.text.get("findings", "")
    for s in ("1000 of 1112", "999 of 1112", "moved 4194304 of %d bytes (57.1%%)" % TOTAL,
              "600 metadata operations", "300 opens, 300 stats", "rank 3 moved 4194304 bytes, 2.28x"):
        check(s in text, "findings say %r" % s)
    # the file table: top 3 and the folded rest
    ft = dom.text.get("files", "")
    check("part.3" in ft and "part.2" in ft and "part.0" in ft and "(2 more files)" in ft,
          "file table: top 3 + (2 more files)")
    check("small.log" not in ft and "meta.cfg" not in ft, "the rest is folded")
    shot = os.path.join(work, "job.png")
    s = browser(exe, work, "--screenshot=" + shot, "--window-size=1200,1800", "file://" + page)
    eq(s.returncode, 0, "chromium --screenshot exit")
    check(os.path.exists(shot) and open(shot, "rb").read(8) == b"\x89PNG\r\n\x1a\n" and
          os.path.getsize(shot) > 20000, "a PNG screenshot")
    return 0


def case_csv(sheaf, bindir, work, _py):
    log = job_log(sheaf, bindir, work)
    p = run(sheaf, "stats", "export", "--format", "csv", log)
    eq(p.returncode, 0, "csv export exit (%s)" % p.stderr.strip())
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    files = {os.path.basename(r["name"]): r for r in rows if r["level"] == "file"}
    eq(sorted(files), sorted(FILES), "csv files")
    for n, (rd, wr) in FILES.items():
        eq((int(files[n]["bytes_read"]), int(files[n]["bytes_written"])), (rd, wr), "csv " + n)
    eq((int(files["meta.cfg"]["opens"]), int(files["meta.cfg"]["stats"]), files["meta.cfg"]["ranks_with_io"]),
       (300, 300, "0"), "csv meta.cfg")
    eq(int(files["small.log"]["write_0_100"]), 1000, "csv small.log write_0_100")
    ranks = {int(r["rank"]): r for r in rows if r["level"] == "rank"}
    eq(sorted(ranks), [0, 1, 2, 3], "csv ranks")
    for r in range(4):
        eq((int(ranks[r]["bytes_read"]), int(ranks[r]["bytes_written"])), (READ[r], WRITTEN[r]), "csv rank %d" % r)
    tot = [r for r in rows if r["level"] == "total"]
    eq(len(tot), 1, "one total row")
    eq((int(tot[0]["bytes_read"]) + int(tot[0]["bytes_written"]), tot[0]["ranks_with_io"], tot[0]["processes"]),
       (TOTAL, "3", "4"), "csv total")
    out = os.path.join(work, "job.csv")
    eq(run(sheaf, "stats", "export", "--format", "csv", log, "-o", out).returncode, 0, "csv -o")
    eq(open(out).read(), p.stdout, "csv -o equals stdout")
    ll = run(sheaf, "stats", "export", "--format", "llview", log)
    eq(ll.returncode, 0, "llview exit")
    j = json.loads(ll.stdout)
    eq((j["bytes_read"], j["bytes_written"], j["nranks"], j["ranks_with_io"], j["nfiles"], j["worst_rank_bytes"]),
       (MiB, sum(WRITTEN.values()), 4, 3, 5, 4 * MiB), "llview numbers")
    eq([(r["rank"], r["bytes_written"]) for r in j["ranks"]], [(r, WRITTEN[r]) for r in range(4)], "llview ranks")
    return 0


def case_parquet(sheaf, bindir, work, py):
    if not py or run(py, "-c", "import pyarrow").returncode != 0:
        print("SKIP: no pyarrow in %s (pip install pyarrow; tests/python/setup_env.py installs it)" % py)
        return 77
    log = job_log(sheaf, bindir, work)
    out = os.path.join(work, "job.parquet")
    env = dict(os.environ, SHEAF_PYTHON=py)
    p = run(sheaf, "stats", "export", "--format", "parquet", log, "-o", out, env=env)
    eq(p.returncode, 0, "parquet export exit (%s)" % p.stderr.strip())
    code = ("import json, sys, pyarrow.parquet as pq; t = pq.read_table(sys.argv[1]); "
            "print(json.dumps({'schema': {f.name: str(f.type) for f in t.schema}, 'rows': t.to_pylist()}))")
    r = run(py, "-c", code, out)
    eq(r.returncode, 0, "read back with pyarrow (%s)" % r.stderr[-300:])
    got = json.loads(r.stdout)
    eq((got["schema"]["bytes_written"], got["schema"]["name"], got["schema"]["rank"]), ("uint64", "string", "int32"),
       "parquet types")
    rows = got["rows"]
    files = {os.path.basename(x["name"]): x for x in rows if x["level"] == "file"}
    for n, (rd, wr) in FILES.items():
        eq((files[n]["bytes_read"], files[n]["bytes_written"]), (rd, wr), "parquet " + n)
    ranks = {x["rank"]: x for x in rows if x["level"] == "rank"}
    for k in range(4):
        eq((ranks[k]["bytes_read"], ranks[k]["bytes_written"]), (READ[k], WRITTEN[k]), "parquet rank %d" % k)
    # the same table as the C tool's CSV, value for value
    c = list(csv.DictReader(io.StringIO(run(sheaf, "stats", "export", "--format", "csv", log).stdout)))
    eq(len(c), len(rows), "parquet rows = csv rows")
    for a, b in zip(c, rows):
        eq({k: v for k, v in a.items() if k not in ("level", "kind", "name", "rank", "pid")},
           {k: str(b[k]) for k in a if k not in ("level", "kind", "name", "rank", "pid")}, "row %s" % a["name"])
    # with a python that has numpy but no pyarrow: a clear error
    other = [c for c in ("/usr/bin/python3", shutil.which("python3")) if c and os.path.exists(c) and
             run(c, "-c", "import numpy").returncode == 0 and run(c, "-c", "import pyarrow").returncode != 0]
    if other:
        q = run(sheaf, "stats", "export", "--format", "parquet", log, "-o", out + ".x",
                env=dict(env, SHEAF_PYTHON=other[0]))
        eq(q.returncode, 1, "parquet without pyarrow fails")
        check("needs pyarrow (pip install pyarrow)" in q.stderr and "Traceback" not in q.stderr,
              "message names pyarrow: " + q.stderr)
        check(not os.path.exists(out + ".x"), "no output without pyarrow")
    else:
        print("note: no python with numpy and without pyarrow here: the missing-pyarrow message is not checked")
    return 0


def case_bad(sheaf, bindir, work, _py):
    log = job_log(sheaf, bindir, work)
    html_out = os.path.join(work, "x.html")
    for args, code, what in ((["report", log], 2, "report without -o"), (["report", "-o", html_out], 2, "no log"),
                             (["report", log, "-o", html_out, "--top", "0"], 2, "--top 0"),
                             (["export", "--format", "xml", log], 2, "unknown format"),
                             (["export", "--format", "parquet", log], 2, "parquet without -o"),
                             (["report", os.path.join(work, "nope"), "-o", html_out], 1, "missing log")):
        p = run(sheaf, "stats", *args)
        eq(p.returncode, code, what + " (%s)" % p.stderr.strip())
    # a log with a hostile record id (changed in place) and a log file cut short
    logs = sorted(os.path.join(log, n) for n in os.listdir(log) if n.endswith(".smon"))
    raw = open(logs[0], "rb").read()
    at = raw.find(b"SMON\x03\x00")  # the first FILE record (magic, type 3)
    check(at > 0, "a FILE record in the log")
    for name, payload, msg in (("hostile", raw[:at + 8] + b"\xff\xff\xff\x7f" + raw[at + 12:], "out of bounds"),
                               ("cut", raw[:3000], "")):
        d = os.path.join(work, name)
        os.makedirs(d)
        open(os.path.join(d, "x.smon"), "wb").write(payload)
        for cmd in (["report", d, "-o", html_out], ["export", "--format", "csv", d], ["summary", d]):
            p = run(sheaf, "stats", *cmd)
            eq(p.returncode, 1, "%s on the %s log" % (cmd[0], name))
            check(msg in p.stderr and "x.smon" in p.stderr and "Traceback" not in p.stderr,
                  "%s: message names the file and the cause: %s" % (name, p.stderr.strip()))
    return 0


def main():
    if len(sys.argv) not in (5, 6):
        print(__doc__)
        return 2
    case, sheaf, bindir, work = sys.argv[1:5]
    py = sys.argv[5] if len(sys.argv) == 6 else None
    if os.environ.get("SHEAF_SANITIZE_BUILD") == "1":
        print("SKIP: the interposition library is not used in a sanitizer build")
        return 77
    fn = {"report": case_report, "csv": case_csv, "parquet": case_parquet, "bad": case_bad}.get(case)
    if not fn:
        print(__doc__)
        return 2
    rc = fn(sheaf, bindir, os.path.abspath(work), py)
    if rc == 77:
        return 77
    print("%d passed, %d failed" % (0 if FAILS else 1, 1 if FAILS else 0))
    return 1 if FAILS else rc


if __name__ == "__main__":
    sys.exit(main())
