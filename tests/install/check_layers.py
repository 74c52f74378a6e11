#!/usr/bin/env python3
"""check_layers.py - sheaf's layers depend in one direction, and no folder has cycles.

Usage: check_layers.py SOURCE_DIR [OBJECT_DIR]

(a) Layers. Every #include "..." of every .c/.h file under SOURCE_DIR/src
(and of the public-API-only folders below) is resolved the way the compiler
does (relative to the file, then SOURCE_DIR/include). An include that reaches
a header of another folder must be allowed by the including folder's row of
LAYERS: the target folder (or that one file) is in its `may` list, and it has
a lower rank (never climbing, never sideways). Public headers (include/) are
allowed everywhere. A folder may also forbid system headers (no MPI or OpenMP
in the serial layers).

(b) Cycles. In every folder of LAYERS (tools/ included), modules (files with
the same name without extension: format.c + format.h are module "format"; a
file in a subfolder is "sub/name") must not depend on each other in a cycle
("dispatch on top, helpers below"). A dependency is an #include of the other
module's header. When OBJECT_DIR is given (the build tree, or a folder in
it), every CMake object file under it (<build>/<dir>/CMakeFiles/<target>.dir/
<source>.o) whose source is in one of those folders is read with nm as
well, and a call from one module to a function defined in another object of
the same target is a dependency too (this catches a function declared in a
third module's header). Folders in PENDING_CYCLES (circles being broken on
other branches) are exempt unless their row says `acyclic`: their cycles are
printed and not counted, and one with none left is pointed out.

The table is data: a folder the table does not know is listed (and its
includes are not checked), so branches adding parts (src/ckpt, src/lock, ...)
still pass until their row is added. A row whose folder is missing is fine.
NM in the environment names the nm to use (default: nm).
Exit status 0 when everything holds, 1 on a violation (each one printed),
2 on a usage error.
"""
import os
import re
import subprocess
import sys

PARALLEL_SYS = ["mpi.h", "omp.h"]

# The layer order (doc/design.md "Layers"): a folder may include the headers
# of the folders (or single files "folder/file.h") in `may`, each of which
# must have a lower rank. may=None: any folder of lower rank.
LAYERS = {
    # serial container: C library, POSIX, public headers only
    "src/core":   {"rank": 0, "may": [], "forbid": PARALLEL_SYS, "acyclic": True},
    # the table of open sids and the parallel layer's hooks
    "src/sid":    {"rank": 1, "may": ["src/core"], "forbid": PARALLEL_SYS, "acyclic": True},
    # the collective layer: a library of its own (MPI only in comm_mpi.c, its own library)
    "src/comm":   {"rank": 0, "may": [], "forbid": [], "acyclic": True},
    # header-only helpers every part may use (byte order on the wire): C library only
    "src/base":   {"rank": 0, "may": [], "forbid": PARALLEL_SYS},
    # global file status: a library of its own, uses no other folder but the base
    "src/fgfs":   {"rank": 1, "may": ["src/base"], "forbid": []},
    # passive lock managers on MPI RMA: a library of its own, below the MPI-IO layer
    "src/lock":   {"rank": 1, "may": [], "forbid": [], "acyclic": True},
    # the public sion_* API
    "src/api":    {"rank": 2, "may": ["src/core", "src/sid"], "forbid": PARALLEL_SYS, "acyclic": True},
    # the generic parallel layer (reaches src/api only through the public API)
    "src/par":    {"rank": 3, "may": ["src/core", "src/sid"], "forbid": PARALLEL_SYS},
    # bindings: public API plus the one internal table
    "src/mpi":    {"rank": 4, "may": ["src/par/binding.h"], "forbid": [], "acyclic": True},
    "src/omp":    {"rank": 4, "may": ["src/par/binding.h"], "forbid": []},
    "src/ompi":   {"rank": 5, "may": ["src/par/binding.h", "src/omp/teamcomm.h", "src/mpi/commcache.h"], "forbid": [], "acyclic": True},
    # parts on top (other branches): anything below them
    "src/ckpt":   {"rank": 6, "may": None, "forbid": [], "acyclic": True},
    "src/mpiio":  {"rank": 6, "may": None, "forbid": [], "acyclic": True},
    "src/loader": {"rank": 6, "may": None, "forbid": []},
    # job I/O monitoring: the containers' public API (its log is a sheaf
    # container) and FGFS's (sheaf_fgfs.h: storage targets); it never includes
    # the parts it observes
    "src/monitor": {"rank": 7, "may": [], "forbid": ["mpi.h", "omp.h"]},
    # programs and bindings to other languages: the public API only
    "tools":      {"rank": 9, "may": [], "forbid": []},
    "examples":   {"rank": 9, "may": [], "forbid": []},
    "bindings":   {"rank": 9, "may": [], "forbid": []},
}

# Folders whose modules still call each other in a circle (issue 29, "Dispatch
# on top, helpers below"): every other folder of LAYERS is checked for cycles.
# Each entry is owned by work in progress on another branch; that branch takes
# its folder out of this set (or sets its row's "acyclic": True, which wins
# over this set) when its circles are broken. A pending folder's cycles are
# still printed, and one that has none left is pointed out. Do not add to it.
PENDING_CYCLES = set()   # empty: the last one, src/loader, is acyclic (issue 29)

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
SOURCE_EXT = (".c", ".h")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def folder_of(rel):
    """The LAYERS row a path (relative to SOURCE_DIR) belongs to: the longest
    matching key, else its first two components under src/, else None."""
    best = None
    for key in LAYERS:
        if rel == key or rel.startswith(key + "/"):
            if best is None or len(key) > len(best):
                best = key
    if best:
        return best
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return "src/" + parts[1]
    return None


def source_files(root, top):
    base = os.path.join(root, top)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(SOURCE_EXT):
                yield os.path.join(dirpath, f)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = strip_comments(fh.read())
    for m in INCLUDE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        yield m.group(1), m.group(2), line


def resolve(root, path, name):
    """Where #include "name" of path lands: a path relative to root, 'public'
    for include/, or None when it is nowhere in the tree."""
    cand = os.path.normpath(os.path.join(os.path.dirname(path), name))
    if os.path.isfile(cand):
        return os.path.relpath(cand, root)
    if os.path.isfile(os.path.join(root, "include", name)):
        return "public"
    return None


def allowed(src_folder, target_rel, target_folder):
    row = LAYERS[src_folder]
    trow = LAYERS.get(target_folder)
    may = row["may"]
    if may is None:
        return trow is not None and trow["rank"] < row["rank"]
    if target_folder not in may and target_rel not in may:
        return False
    return trow is not None and trow["rank"] < row["rank"]


def check_layers(root, problems):
    unknown = set()
    graphs = {}  # folder -> module -> set(modules) (every folder of the table)
    tops = sorted({k.split("/")[0] for k in LAYERS})
    for top in tops:
        for path in source_files(root, top):
            rel = os.path.relpath(path, root)
            folder = folder_of(rel)
            if folder is None:
                continue
            row = LAYERS.get(folder)
            if row is None:
                unknown.add(folder)
                continue
            mod = module_of(rel, folder)
            graphs.setdefault(folder, {}).setdefault(mod, set())
            for kind, name, line in includes(path):
                where = "%s:%d: #include %s%s%s" % (rel, line, kind, name, ">" if kind == "<" else '"')
                if kind == "<":
                    if os.path.basename(name) in row["forbid"]:
                        problems.append("%s: %s may not use %s" % (where, folder, name))
                    continue
                target = resolve(root, path, name)
                if target is None:
                    if "../" in name:
                        problems.append("%s: not found in the tree" % where)
                    continue
                if target == "public":
                    continue
                tfolder = folder_of(target)
                if tfolder == folder:
                    tmod = module_of(target, folder)
                    if tmod != mod:
                        graphs[folder][mod].add(tmod)
                    continue
                if tfolder is None or not allowed(folder, target, tfolder):
                    trank = LAYERS.get(tfolder, {}).get("rank")
                    how = ("climbs to a higher layer" if trank is not None and trank > row["rank"]
                           else "reaches sideways" if trank == row["rank"]
                           else "is not in the folder's list")
                    problems.append("%s: %s (rank %d) -> %s %s (allowed: %s)" % (
                        where, folder, row["rank"], target, how,
                        "any lower layer" if row["may"] is None else ", ".join(row["may"]) or "public headers"))
    return unknown, graphs


def build_root(objdir):
    """The top of the build tree objdir lies in (the directory holding
    CMakeCache.txt), else objdir itself."""
    d = os.path.abspath(objdir)
    while True:
        if os.path.isfile(os.path.join(d, "CMakeCache.txt")):
            return d
        up = os.path.dirname(d)
        if up == d:
            return os.path.abspath(objdir)
        d = up


def object_sources(root, objdir):
    """{target directory: {object path: source path relative to root}} for
    every CMake object under objdir whose source still exists (a build tree
    keeps the objects of files since moved away). CMake puts the object of
    DIR/x.c built by a target of the CMakeLists.txt in SUB at
    BUILD/SUB/CMakeFiles/<target>.dir/<x.c relative to SUB>.o, a '..' in
    that path spelled '__'."""
    top = build_root(objdir)
    out = {}
    for dirpath, dirnames, filenames in os.walk(objdir):
        dirnames.sort()
        rel = os.path.relpath(dirpath, top).replace(os.sep, "/")
        m = re.match(r"^(?:(.*)/)?CMakeFiles/[^/]+\.dir(?:/(.*))?$", rel)
        if not m:
            continue
        sub, inner = m.group(1) or "", m.group(2) or ""
        tdir = os.path.join(top, sub, "CMakeFiles", rel.split("CMakeFiles/", 1)[1].split("/")[0])
        for f in sorted(filenames):
            if not f.endswith(".c.o"):
                continue
            parts = [".." if c == "__" else c for c in (sub.split("/") if sub else []) + (inner.split("/") if inner else [])]
            src = os.path.normpath(os.path.join(*(parts + [f[:-2]]))) if parts else f[:-2]
            if src.startswith("..") or not os.path.isfile(os.path.join(root, src)):
                continue
            out.setdefault(tdir, {})[os.path.join(dirpath, f)] = src.replace(os.sep, "/")
    return out


def module_of(rel, folder):
    """A file's module inside its folder: its path below the folder without
    the extension (format.c and format.h are module "format"; a file in a
    subfolder, tools/loader/launch_net.c, is "loader/launch_net")."""
    return os.path.splitext(rel[len(folder) + 1:])[0]


def nm_symbols(nm, paths):
    """{path: (defined, used)} of object files, from one run of nm (-A names
    the file on every line; one process for all, as forking nm per object is
    slow on a busy machine)."""
    out = {p: (set(), set()) for p in paths}
    for k in range(0, len(paths), 200):
        chunk = paths[k:k + 200]
        text = subprocess.run([nm, "-A"] + chunk, capture_output=True, text=True, check=True).stdout
        for ln in text.splitlines():
            path, sep, rest = ln.partition(":")
            if not sep or path not in out:
                continue
            parts = rest.split()
            if len(parts) == 2 and parts[0] == "U":
                out[path][1].add(parts[1])
            elif len(parts) == 3 and parts[1] in "TDBRCV":
                out[path][0].add(parts[2])
    return out


def object_graphs(root, objdir, folders, nm):
    """folder -> module -> set(modules) from the undefined/defined symbols of
    the objects of each folder in `folders`. Symbols are matched inside one
    CMake target (the objects linked together), so two programs of one folder
    that each define main() or the same helper do not depend on each other; a
    call from an object of one folder to a function of another folder is a
    layer matter, not a cycle, and is left out."""
    graphs = {f: {} for f in folders}
    targets = {}
    for tdir, objs in sorted(object_sources(root, objdir).items()):
        mine = {o: (folder_of(src), module_of(src, folder_of(src))) for o, src in objs.items()
                if folder_of(src) in graphs}
        if mine:
            targets[tdir] = mine
    syms = nm_symbols(nm, sorted(o for mine in targets.values() for o in mine))
    for tdir, mine in sorted(targets.items()):
        defined = {}
        for obj, mod in sorted(mine.items()):
            graphs[mod[0]].setdefault(mod[1], set())
            for name in sorted(syms[obj][0]):
                defined.setdefault(name, mod)
        for obj, mod in sorted(mine.items()):
            for name in syms[obj][1]:
                d = defined.get(name)
                if d and d != mod and d[0] == mod[0]:
                    graphs[mod[0]][mod[1]].add(d[1])
    return graphs


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def describe(graph, comp):
    edges = ["%s->%s" % (a, b) for a in comp for b in sorted(graph[a]) if b in comp]
    return "{%s}: %s" % (", ".join(comp), " ".join(edges))


def main(argv):
    if len(argv) not in (2, 3) or not os.path.isdir(os.path.join(argv[1], "src")):
        sys.stderr.write(__doc__)
        return 2
    root = os.path.abspath(argv[1])
    objdir = argv[2] if len(argv) == 3 else None
    problems = []
    unknown, graphs = check_layers(root, problems)
    ogs = {}
    if objdir and os.path.isdir(objdir):
        ogs = object_graphs(root, objdir, sorted(graphs), os.environ.get("NM", "nm"))
    for folder, graph in sorted(graphs.items()):
        pending = folder in PENDING_CYCLES and not LAYERS[folder].get("acyclic")
        found = ["include cycle between modules " + describe(graph, c) for c in cycles(graph)]
        og = ogs.get(folder)
        if og is not None:
            found += ["call cycle between modules (object files) " + describe(og, c) for c in cycles(og)]
            counts = "%d modules, %d include dependencies, %d objects, %d call dependencies" % (
                len(graph), sum(len(v) for v in graph.values()), len(og), sum(len(v) for v in og.values()))
        else:
            counts = "%d modules, %d include dependencies (no objects read)" % (
                len(graph), sum(len(v) for v in graph.values()))
        if pending:
            state = ("PENDING, %d cycle(s) not counted" % len(found) if found else
                     "PENDING, no include cycle (calls not read)" if og is None else
                     "PENDING but acyclic now: take it out of PENDING_CYCLES")
            for f in found:
                print("  pending %s: %s" % (folder, f))
        else:
            state = "acyclic: %s" % ("no" if found else "yes")
            problems += ["%s: %s" % (folder, f) for f in found]
        print("%s: %s, %s" % (folder, counts, state))
    present = sorted(k for k in LAYERS if os.path.isdir(os.path.join(root, k)))
    print("layers checked: " + ", ".join("%s(%d)" % (k, LAYERS[k]["rank"]) for k in present))
    if unknown:
        print("folders not in the table (includes not checked; add a row to LAYERS): " + ", ".join(sorted(unknown)))
    for p in problems:
        print("LAYER VIOLATION: " + p)
    if problems:
        print("%d violation(s)" % len(problems))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
