#!/usr/bin/env python3
"""check_funclen.py - no long functions and no long files in src/ and tools/ (doc/design.md "Size").

Usage: check_funclen.py SOURCE_DIR        check SOURCE_DIR/src and SOURCE_DIR/tools
       check_funclen.py --selftest        check the parser on small snippets

Every .c and .h file under SOURCE_DIR/src and SOURCE_DIR/tools (TREES; the
library and the programs alike) is read by a small C scanner that
knows comments (/* */ and //), string and character literals (with escapes)
and preprocessor lines (with their backslash continuations, so a macro that
defines functions is not mistaken for one), and matches braces outside them.
A function definition is a '{' at brace depth 0 whose preceding code ends in
')' (after the parameter list) and does not start with struct/union/enum/
typedef or contain '='. Its length is counted from the line of its name to the
line of its closing brace, both included.

The rule (doc/design.md, "Size"):
- a function longer than MAX_FUNC (80) lines needs a comment right above it
  (between the previous declaration and this one) that says why:
      /* long: <reason> */
  the reason at least a few words;
- a file longer than MAX_FILE (800) lines needs, in its first 40 lines, a
      /* long file: <reason> */
  comment.
Everything found is listed (file, line, name, length), the ones without a
reason first. Exit status 0 when every long function and file carries a
reason, 1 otherwise, 2 on a usage error or a file the scanner cannot balance.
"""
import os
import re
import sys

MAX_FUNC = 80
MAX_FILE = 800
MIN_REASON = 10  # characters: "long: x" is not a reason
FUNC_MARK = re.compile(r"\blong:\s*(.*?)\s*(\*/)?\s*$", re.S)
FILE_MARK = re.compile(r"\blong file:\s*(\S.*)", re.S)
TREES = ("src", "tools")
NOT_FUNC = re.compile(r"^\s*(struct|union|enum|typedef)\b")


class ScanError(Exception):
    pass


def scan(text):
    """Split C text into tokens of interest.

    Returns (code, comments): code is a list of (line, char) for every
    character outside comments, literals and preprocessor lines (literals
    are kept as a placeholder '"' so that `f("{")` still ends in ')');
    comments is a list of (first_line, last_line, text, code_index) where
    code_index is the number of code characters seen before the comment."""
    code = []
    comments = []
    i, n, line = 0, len(text), 1
    at_line_start = True  # only whitespace so far on this line
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            at_line_start = True
            code.append((line - 1, "\n"))
            i += 1
            continue
        if at_line_start and c == "#":
            # preprocessor line, with continuations; comments inside end it as usual
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    line += 1
                    i += 2
                    continue
                if text.startswith("/*", i):
                    j = text.find("*/", i + 2)
                    if j < 0:
                        raise ScanError("line %d: unterminated comment" % line)
                    line += text.count("\n", i, j)
                    i = j + 2
                    continue
                i += 1
            continue
        if c in " \t\r\f\v":
            code.append((line, " "))
            i += 1
            continue
        at_line_start = False
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise ScanError("line %d: unterminated comment" % line)
            first = line
            line += text.count("\n", i, j)
            comments.append((first, line, text[i:j + 2], len(code)))
            i = j + 2
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append((line, line, text[i:j], len(code)))
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    raise ScanError("line %d: newline in a literal" % line)
                j += 1
            if j >= n:
                raise ScanError("line %d: unterminated literal" % line)
            code.append((line, '"'))
            i = j + 1
            continue
        code.append((line, c))
        i += 1
    return code, comments


def functions(text):
    """[(name, first_line, last_line, marker_reason_or_None)] of the function definitions."""
    code, comments = scan(text)
    out = []
    depth = 0
    stmt_start = 0  # index in code where the current top-level declaration starts
    open_at = None  # (name, name_line, marker) of the function whose body is open
    body_start = None
    for k, (line, c) in enumerate(code):
        if c == "{":
            if depth == 0:
                head = "".join(ch for _, ch in code[stmt_start:k])
                open_at = None
                stripped = head.rstrip()
                if stripped.endswith(")") and not NOT_FUNC.match(head) and "=" not in head:
                    name, name_line = func_name(code, stmt_start, k)
                    if name:
                        marker = find_marker(comments, code, stmt_start)
                        open_at = (name, name_line, marker)
                body_start = k
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                raise ScanError("line %d: '}' without '{'" % line)
            if depth == 0:
                if open_at:
                    out.append((open_at[0], open_at[1], line, open_at[2]))
                open_at = None
                stmt_start = k + 1
        elif c == ";" and depth == 0:
            stmt_start = k + 1
    if depth != 0:
        raise ScanError("unbalanced braces at end of file (depth %d)" % depth)
    return out


def func_name(code, start, brace):
    """The identifier before the parameter list's '(' (matching the last ')')."""
    k = brace - 1
    while k >= start and code[k][1].isspace():
        k -= 1
    if k < start or code[k][1] != ")":
        return None, None
    level = 0
    while k >= start:
        ch = code[k][1]
        if ch == ")":
            level += 1
        elif ch == "(":
            level -= 1
            if level == 0:
                break
        k -= 1
    if k < start:
        return None, None
    k -= 1
    while k >= start and code[k][1].isspace():
        k -= 1
    end = k
    while k >= start and (code[k][1].isalnum() or code[k][1] == "_"):
        k -= 1
    if end == k:
        return None, None
    return "".join(ch for _, ch in code[k + 1:end + 1]), code[end][0]


def find_marker(comments, code, stmt_start):
    """The reason of a `long:` comment between the previous declaration and this one."""
    # the first code character of the declaration (skip the newlines before it)
    first = stmt_start
    while first < len(code) and code[first][1].isspace():
        first += 1
    prev_end = stmt_start  # comments whose code_index lies in [stmt_start, first] are "right above"
    for (_, _, text, idx) in comments:
        if prev_end <= idx <= first:
            body = text[2:-2] if text.startswith("/*") else text[2:]
            m = FUNC_MARK.search(body)
            if m and not re.search(r"\blong file:", body):
                reason = " ".join(m.group(1).replace("*", " ").split())
                if len(reason) >= MIN_REASON:
                    return reason
    return None


def file_reason(text):
    head = "\n".join(text.split("\n")[:40])
    m = FILE_MARK.search(head)
    if not m:
        return None
    reason = " ".join(m.group(1).split("*/")[0].replace("*", " ").split())
    return reason if len(reason) >= MIN_REASON else None


def check_tree(src):
    long_funcs, long_files, errors = [], [], []
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, os.path.dirname(src))
            with open(path, encoding="utf-8", errors="replace") as fp:
                text = fp.read()
            nlines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            if nlines > MAX_FILE:
                long_files.append((rel, nlines, file_reason(text)))
            try:
                for name, first, last, reason in functions(text):
                    length = last - first + 1
                    if length > MAX_FUNC:
                        long_funcs.append((rel, first, name, length, reason))
            except ScanError as e:
                errors.append("%s: %s" % (rel, e))
    return long_funcs, long_files, errors


def report(long_funcs, long_files, errors):
    bad_funcs = [x for x in long_funcs if not x[4]]
    bad_files = [x for x in long_files if not x[2]]
    for e in errors:
        print("cannot parse " + e)
    if bad_funcs:
        print("functions over %d lines without a `/* long: <reason> */` comment above them (%d):"
              % (MAX_FUNC, len(bad_funcs)))
        for rel, first, name, length, _ in sorted(bad_funcs, key=lambda x: (x[0], x[1])):
            print("  %-32s %5d lines  %s (line %d)" % (rel, length, name, first))
    if bad_files:
        print("files over %d lines without a `/* long file: <reason> */` comment (%d):"
              % (MAX_FILE, len(bad_files)))
        for rel, n, _ in bad_files:
            print("  %-32s %5d lines" % (rel, n))
    ok_funcs = [x for x in long_funcs if x[4]]
    if ok_funcs:
        print("long functions with a reason (%d):" % len(ok_funcs))
        for rel, first, name, length, reason in ok_funcs:
            print("  %-32s %5d lines  %s: %s" % (rel, length, name, reason))
    for rel, n, reason in long_files:
        if reason:
            print("long file with a reason: %s (%d lines): %s" % (rel, n, reason))
    if errors:
        return 2
    if bad_funcs or bad_files:
        return 1
    print("every function is at most %d lines and every file at most %d (or says why)" % (MAX_FUNC, MAX_FILE))
    return 0


def selftest():
    body = "\n".join("  x++;" for _ in range(85))
    cases = [
        # (text, expected [(name, length, has_reason)])
        ("int f(void) {\n  return 1;\n}\n", [("f", 3, False)]),
        ("static int\ng(int a,\n  int b)\n{\n  return a;\n}\n", [("g", 5, False)]),
        # braces inside strings, chars and comments do not count
        ('void h(void) {\n  puts("{{{");\n  char c = \'{\';\n  /* } */ // }\n  c = \'\\\'\';\n}\n'
         "int k(void) { return '}'; }\n", [("h", 6, False), ("k", 1, False)]),
        # initializers, structs and prototypes are not functions
        ("struct s { int a; };\nstatic const int t[] = { 1, 2 };\nint p(void);\n"
         "enum e { A, B };\nint q(void) { return 0; }\n", [("q", 1, False)]),
        # a macro that defines a function is a preprocessor line, not a function
        ("#define M(n) \\\n  int n(void) { \\\n    return 0; }\nM(a)\nint r(void) { if (1) { } return 1; }\n",
         [("r", 1, False)]),
        # the marker right above, and one that is too far away
        ("/* long: one table of all the opcodes, kept in one place */\nint big(void) {\n" + body + "\n}\n",
         [("big", 87, True)]),
        ("/* long: a reason that belongs to nothing */\nint a(void) { return 0; }\nint big(void) {\n"
         + body + "\n}\n", [("a", 1, True), ("big", 87, False)]),
        ("/* long: x */\nint big(void) {\n" + body + "\n}\n", [("big", 87, False)]),
    ]
    fails = 0
    for i, (text, want) in enumerate(cases):
        got = [(n, last - first + 1, bool(r)) for n, first, last, r in functions(text)]
        if got != want:
            print("selftest case %d: got %r, want %r" % (i, got, want))
            fails += 1
    for bad in ["int f(void) {\n", "int f(void) { }\n}\n", 'int f(void) { puts("x); }\n', "/* open"]:
        try:
            functions(bad)
            print("selftest: no error for %r" % bad)
            fails += 1
        except ScanError:
            pass
    if file_reason("/* long file: the generated opcode table, one entry per line */\n") is None:
        print("selftest: file marker not found")
        fails += 1
    print("selftest: %d failures" % fails)
    return 1 if fails else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--selftest":
        return selftest()
    if len(argv) != 2 or not os.path.isdir(os.path.join(argv[1], "src")):
        print(__doc__.split("\n\n")[1])
        return 2
    found = ([], [], [])
    for tree in TREES:
        path = os.path.join(argv[1], tree)
        if os.path.isdir(path):
            for acc, more in zip(found, check_tree(path)):
                acc.extend(more)
    print("read: " + ", ".join(t + "/" for t in TREES if os.path.isdir(os.path.join(argv[1], t))))
    return report(*found)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
