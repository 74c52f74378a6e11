#!/usr/bin/env python3
"""docs.site: build the documentation site from doc/ (mkdocs.yml at the top of
the source tree) with warnings as errors, and check what it holds.

usage: check_site.py SOURCE_DIR OUT_DIR   (run with an interpreter that has mkdocs)

`mkdocs build --strict` fails on a link to a page or anchor that does not
exist, a page of doc/ missing from the navigation, an absolute link. Then every
doc/*.md must have become a page (OUT_DIR/<name>.html) that names its first
heading, and the index must link to every page of the navigation.
Exit 0 when all holds, 1 otherwise."""
import glob
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    src, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", os.path.join(src, "mkdocs.yml"),
                        "-d", out], capture_output=True, text=True, timeout=600)
    print(r.stderr.strip())
    if r.returncode != 0:
        print(f"docs.site: FAILED: mkdocs build --strict exited {r.returncode}")
        return 1
    bad = 0
    pages = sorted(glob.glob(os.path.join(src, "doc", "*.md")))
    for md in pages:
        name = os.path.splitext(os.path.basename(md))[0]
        html = os.path.join(out, name + ".html")
        with open(md, encoding="utf-8") as f:
            m = re.search(r"^# (.+)$", f.read(), re.M)
        title = m.group(1).strip() if m else None
        if not os.path.exists(html):
            print(f"docs.site: FAILED: doc/{name}.md has no page {name}.html")
            bad += 1
            continue
        with open(html, encoding="utf-8") as f:
            text = f.read()
        if title and re.sub(r"[`*]", "", title).split()[0] not in text:
            print(f"docs.site: FAILED: {name}.html lacks its heading '{title}'")
            bad += 1
    with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
        index = f.read()
    for md in pages:
        name = os.path.splitext(os.path.basename(md))[0]
        if name != "index" and f'href="{name}.html"' not in index:
            print(f"docs.site: FAILED: index.html does not link {name}.html")
            bad += 1
    if bad:
        return 1
    print(f"docs.site: OK ({len(pages)} pages, built with warnings as errors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
