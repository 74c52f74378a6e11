#!/usr/bin/env python3
"""check_exports.py - sheaf's shared libraries export their API and nothing else.

Usage: check_exports.py SOURCE_DIR LIBDIR...

The allowlist is read from the headers, not kept by hand: every declaration
marked SHEAF_API in SOURCE_DIR/include/*.h, plus the internal interfaces
between sheaf's libraries, whose names must start with "sheaf__": the binding
interface the parallel libraries use (SHEAF_API declarations in
src/par/binding.h, libsheaf.so) and the checkpoints' one error record
(src/ckpt/errrec.h, libsheaf_ckpt_read.so, which libsheaf_ckpt.so writes to).

Each header belongs to one library: include/sion_<part>.h,
include/sion_datatypes_<part>.h and include/sheaf_<part>*.h to
libsheaf_<part>.so, for every add_library(sheaf_<part> SHARED ...) or
sheaf_add_part_library(sheaf_<part> ...) (cmake/SheafPart.cmake) in the
CMakeLists.txt files under src/ (the longest <part> that fits wins:
sheaf_fgfs_mpi.h is libsheaf_fgfs_mpi's; checked only when this build made
the library: not sion_omp.h in a build without OpenMP); every other header,
and src/par/binding.h, to libsheaf.so.

For every libsheaf*.so found under the LIBDIRs (searched recursively; the
build's src/ directory holds them all), `nm -D --defined-only` must list
  - nothing that is not declared SHEAF_API in one of its own headers
    (an internal name leaking, or another library's API copied in), and
  - everything that is (a public function whose definition lost the marker
    would be hidden, and programs would fail to link).
The Fortran libraries (libsheaf_f90.so, libsheaf_f90_<layer>.so, found the
same way; pass the build's bindings/ directory too) are read from their
sources in SOURCE_DIR/bindings/fortran: libsheaf_<part>.so's user module is
sion_<part> (sion_<part>.f90); it holds that module and the internal modules
(sheaf_*) the user module uses. It must export exactly
__<module>_MOD_<procedure> for every procedure defined in one of those
modules that the user module makes public (a re-export like fsion_fwrite_key,
defined in sheaf_f90_keyval, counts): no internal helper (sheaf_f90_c's
c_str, paropen_comm, ...; the compiler's derived-type helpers) and no C glue.
The Fortran 77 libraries (libsheaf_f77.so, libsheaf_f77_<layer>.so) must export
exactly the external procedures of sion_<part>.f90 and the untyped calls of
f77_data.c (the collective ones in libsheaf_f77_mpi.so), as lfsion_*_.

NM in the environment names the nm to use (default: nm).
Exit status 0 when every library passes, 1 otherwise (each offending name is
printed), 2 on a usage or tool error.
"""
import os
import re
import subprocess
import sys

# names the toolchain puts into every shared object
TOOLCHAIN = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def api_names(path):
    """Names declared with SHEAF_API in one header (functions and objects)."""
    with open(path, encoding="utf-8") as f:
        text = strip_comments(f.read())
    # preprocessor lines (the marker's own #define) are not declarations
    text = re.sub(r"^\s*#[^\n]*(\\\n[^\n]*)*", " ", text, flags=re.M)
    names = []
    for m in re.finditer(r"\bSHEAF_API\b([^;{]*)", text):
        decl = m.group(1)
        f = re.search(r"\b([A-Za-z_]\w*)\s*\(", decl)   # first name followed by '(' is the function
        if f and not re.match(r"\(\s*\*", decl[f.end() - 1:]):
            names.append(f.group(1))
            continue
        v = re.search(r"\b([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*$", decl.strip())  # an object
        if not v:
            raise SystemExit(f"check_exports: cannot read the SHEAF_API declaration in {path}: {decl.strip()}")
        names.append(v.group(1))
    return names


def library_parts(src):
    """The <part> of every libsheaf_<part>.so the sources can build: each
    add_library(sheaf_<part> SHARED ...) or sheaf_add_part_library(sheaf_<part>
    ...) in a CMakeLists.txt under src/."""
    parts = set()
    for root, _, files in os.walk(os.path.join(src, "src")):
        if "CMakeLists.txt" in files:
            with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
                text = f.read()
            parts.update(re.findall(r"add_library\(\s*sheaf_(\w+)\s+SHARED\b", text))
            parts.update(re.findall(r"sheaf_add_part_library\(\s*sheaf_(\w+)\b", text))
    return parts


def library_of(header, parts):
    """The part ("" = libsheaf) of the library that exports what `header` declares."""
    base = os.path.basename(header)
    for part in sorted(parts, key=len, reverse=True):
        if base in (f"sion_{part}.h", f"sion_datatypes_{part}.h") or base.startswith(f"sheaf_{part}"):
            return part
    return ""


def exported(lib):
    try:
        out = subprocess.run([os.environ.get("NM") or "nm", "-D", "--defined-only", lib], check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"check_exports: nm -D {lib} failed: {e}")
    names = set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[1] not in ("U", "w", "v"):
            names.add(fields[2].split("@")[0])
    return names - TOOLCHAIN


def fortran77_names(fdir, part):
    """{symbol: file} that libsheaf_<part>.so (part f77 or f77_<layer>) may export: the
    external procedures of sion_<part>.f90 and, from f77_data.c, the untyped calls
    (the collective ones, named *_coll_*, in f77_mpi); GNU mangling (lower case + '_')."""
    names = {}
    fn = os.path.join(fdir, f"sion_{part}.f90")
    with open(fn, encoding="utf-8") as f:
        text = re.sub(r"!.*", "", f.read().lower())
    for m in re.finditer(r"^\s*(?:integer\(\d\)\s+)?(?:subroutine|function)\s+(\w+)", text, re.M):
        names[m.group(1) + "_"] = f"bindings/fortran/sion_{part}.f90"
    with open(os.path.join(fdir, "f77_data.c"), encoding="utf-8") as f:
        for m in re.finditer(r"^(?:F77_\w+\(|F77_API void FC_GLOBAL_\()(lfsion_\w+),", f.read(), re.M):
            coll = "_coll_" in m.group(1)
            if (part == "f77" and not coll) or (part == "f77_mpi" and coll):
                names[m.group(1) + "_"] = "bindings/fortran/f77_data.c"
    return names


def fortran_modules(fdir):
    """{module: {"file", "public": set|None (None: default public), "private",
    "uses", "procs"}} of the .f90 files in fdir (names lower case)."""
    mods = {}
    for fn in sorted(os.listdir(fdir)) if os.path.isdir(fdir) else []:
        if not fn.endswith(".f90"):
            continue
        with open(os.path.join(fdir, fn), encoding="utf-8") as f:
            text = f.read().lower()
        text = re.sub(r"!.*", "", text)                 # comments (no '!' in our strings)
        text = re.sub(r"&\s*\n\s*&?", " ", text)       # continuation lines
        cur, after_contains, depth = None, False, 0
        for line in text.splitlines():
            line = line.strip()
            m = re.match(r"module\s+(\w+)$", line)
            if m and m.group(1) != "procedure":
                cur = mods.setdefault(m.group(1), {"file": fn, "public": set(), "private": set(), "uses": set(),
                                                   "procs": set(), "default_public": False})
                after_contains, depth = False, 0
                continue
            if cur is None:
                continue
            if re.match(r"end\s+module\b", line):
                cur = None
                continue
            u = re.match(r"use\b(?:\s*,\s*intrinsic)?\s*(?:::)?\s*(\w+)", line)
            if u and not after_contains:
                cur["uses"].add(u.group(1))
                continue
            if line == "contains":
                after_contains = True
                continue
            if not after_contains:
                if line == "public":
                    cur["default_public"] = True
                a = re.match(r"(public|private)\s*::\s*(.*)$", line)
                if a:
                    cur[a.group(1)].update(n.strip() for n in a.group(2).split(",") if n.strip())
                d = re.match(r"[^:]*,\s*public\s*::\s*(.*)$", line)
                if d:
                    cur["public"].update(re.match(r"\s*(\w+)", n).group(1) for n in d.group(1).split(",")
                                         if re.match(r"\s*(\w+)", n))
                continue
            if re.match(r"end\s+(function|subroutine)\b", line):
                depth -= 1
                continue
            p = re.match(r"(?:[\w(), =*]*\s)?(function|subroutine)\s+(\w+)", line)
            if p and not line.startswith("end"):
                if depth == 0:
                    cur["procs"].add(p.group(2))
                depth += 1
    return mods


def fortran_allowed(part, mods):
    """(allowed, expected) export names of libsheaf_<part>.so, or None when
    its user module sion_<part> is not in the sources."""
    user = mods.get("sion_" + part)
    if user is None:
        return None
    inside = ["sion_" + part] + sorted(u for u in user["uses"] if u.startswith("sheaf_") and u in mods)
    names = set()
    for m in inside:
        for proc in mods[m]["procs"]:
            if m == "sion_" + part:
                public = (user["default_public"] and proc not in user["private"]) or proc in user["public"]
            else:  # another module's procedure: only when the user module names it public
                public = proc in user["public"]
            if public:
                names.add("__%s_MOD_%s" % (m, proc))
    return names


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    src, libdirs = argv[1], argv[2:]
    libs = {}   # part ("" = libsheaf) -> path of the shared object
    for d in libdirs:
        for root, _, files in os.walk(d):
            for fn in files:
                m = re.fullmatch(r"libsheaf(?:_(\w+))?\.so", fn)
                if m:
                    libs[m.group(1) or ""] = os.path.join(root, fn)
    if "" not in libs:
        print(f"check_exports: no libsheaf.so under {' '.join(libdirs)}", file=sys.stderr)
        return 2

    parts = library_parts(src)
    allowed = {part: {} for part in libs}   # part -> name -> header
    incdir = os.path.join(src, "include")
    headers = sorted(os.path.join(incdir, h) for h in os.listdir(incdir) if h.endswith(".h"))
    # internal interfaces between sheaf's own libraries: (header, library part)
    internal = {os.path.join(src, "src", "par", "binding.h"): "",
                os.path.join(src, "src", "ckpt", "errrec.h"): "ckpt_read"}
    for h in headers + [i for i in internal if os.path.exists(i)]:
        part = internal[h] if h in internal else library_of(h, parts)
        if part not in allowed:
            continue   # e.g. sion_mpi.h in a build without MPI
        for n in api_names(h):
            if h in internal and not n.startswith("sheaf__"):
                print(f"check_exports: {h}: internal export {n} must be named sheaf__*", file=sys.stderr)
                return 1
            allowed[part][n] = os.path.relpath(h, src)

    fmods = fortran_modules(os.path.join(src, "bindings", "fortran"))
    for part in libs:
        if part == "f90" or part.startswith("f90_"):
            names = fortran_allowed(part, fmods)
            if names is None:
                print(f"check_exports: {libs[part]}: no module sion_{part} in bindings/fortran", file=sys.stderr)
                return 2
            allowed[part] = {n: f"bindings/fortran/{fmods['sion_' + part]['file']}" for n in names}

    for part in libs:
        if part == "f77" or part.startswith("f77_"):
            allowed[part] = fortran77_names(os.path.join(src, "bindings", "fortran"), part)

    failed = 0
    for part in sorted(libs):
        lib = libs[part]
        names = exported(lib)
        extra = sorted(names - set(allowed[part]))
        missing = sorted(set(allowed[part]) - names)
        what = f"public in sion_{part}" if part == "f90" or part.startswith("f90_") else "declared SHEAF_API"
        if part == "f77" or part.startswith("f77_"):
            what = f"LFSION_* routines of sion_{part}.f90 / f77_data.c"
        print(f"{os.path.basename(lib)}: {len(names)} exported, {len(allowed[part])} {what}, "
              f"{len(extra)} not in the API, {len(missing)} not exported")
        for n in extra:
            print(f"  NOT IN THE API: {n}")
        for n in missing:
            print(f"  NOT EXPORTED:   {n} (declared in {allowed[part][n]})")
        failed |= bool(extra or missing)
    print("check_exports: " + ("FAILED" if failed else "OK"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
