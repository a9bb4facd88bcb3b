#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The library's folders stand in the order docs/design.md states (its line
"layers, bottom first: ..."): a file of a folder includes only its own
folder's headers and those of folders below it; src/lib's top (scan.c,
internal.h) drives the stages and may include any. Prints each include that
runs up or across the order, or names a folder the order lacks, and exits 1
when there is one (TAP for meson).

usage: layers.py SRC/src/lib SRC/docs/design.md"""
import os
import re
import sys


def main():
    lib, design = sys.argv[1], sys.argv[2]
    m = re.search(r"^\s*layers, bottom first: (.+)$", open(design, encoding="utf-8").read(), re.M)
    if not m:
        print("not ok 1 - docs/design.md states no order ('layers, bottom first: ...')")
        print("1..1")
        return 1
    order = m.group(1).split()
    rank = {name: i for i, name in enumerate(order)}
    folders = sorted(d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d)))
    bad = ["folder %s/ is in no layer of docs/design.md" % d for d in folders if d not in rank]
    bad += ["the order names %s, which is no folder of src/lib" % d for d in order if d not in folders]
    for d in folders:
        for name in sorted(os.listdir(os.path.join(lib, d))):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(lib, d, name)
            for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                inc = re.match(r'\s*#\s*include\s+"([a-z_]+)/[^"]+"', line)
                if not inc or inc.group(1) == d:
                    continue
                t = inc.group(1)
                if t not in rank or d not in rank or rank[t] > rank[d]:
                    bad.append("%s/%s:%d: %s/ includes %s (%s)" % (d, name, n, d, line.split('"')[1],
                               "runs up" if t in rank and d in rank else "a folder in no layer"))
    print(("not ok 1 - " if bad else "ok 1 - ") + "the library's %d folders stand in the order %s" %
          (len(folders), " < ".join(order)))
    for b in bad:
        print("# " + b)
    print("1..1")
    return 1 if bad else 0


sys.exit(main())
