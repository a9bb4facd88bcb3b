#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The library's folders stand in the order docs/design.md states (its line
"layers, bottom first: ..."), and each stage holds only its own state:

1. a file of a folder includes only its own folder's headers and those of
   folders below it;
2. internal.h, the core every stage holds, includes no folder's header;
3. the whole scan (struct dupscan_scan, defined in scan.h alone) reaches, through any chain of
   includes, only the drivers docs/design.md names on its line
   "drivers: ...";
4. no stage calls a library call (dupscan_*) defined in a folder above its
   own or at the top of src/lib (the public header declares them all, so
   no include shows such a call).

Prints each include that breaks a rule, or a folder or driver the design page
names wrongly, and exits 1 when there is one (TAP for meson).

usage: layers.py SRC/src/lib SRC/docs/design.md"""
import os
import re
import sys

INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')


def includes(lib, path):
    """The files of src/lib that path includes, as paths below lib."""
    out = []
    here = os.path.dirname(os.path.join(lib, path))
    for n, line in enumerate(open(os.path.join(lib, path), encoding="utf-8", errors="replace"), 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        for base in (lib, here):
            if os.path.isfile(os.path.join(base, m.group(1))):
                out.append((n, os.path.relpath(os.path.join(base, m.group(1)), lib)))
                break
    return out


def closure(lib, path, seen):
    for _, inc in includes(lib, path):
        if inc not in seen:
            seen.add(inc)
            closure(lib, inc, seen)
    return seen


def calls_up(lib, files, rank, drivers):
    """Rule 4: each stage's calls of a dupscan_* defined above it."""
    where = {}
    for path in files:
        if path.endswith(".c"):
            for m in re.finditer(r"^DUPSCAN_API[^(]*?\b(dupscan_\w+)\(", open(os.path.join(lib, path)).read(), re.M):
                where[m.group(1)] = path
    bad = []
    for path in files:
        folder = path.split("/")[0] if "/" in path else None
        if not path.endswith(".c") or folder not in rank or path in drivers:
            continue
        text = re.sub(r"/\*.*?\*/", "", open(os.path.join(lib, path)).read(), flags=re.S)
        for name in sorted(set(re.findall(r"\b(dupscan_\w+)\s*\(", text))):
            home = where.get(name)
            top = home.split("/")[0] if home and "/" in home else None
            if home and top != folder and (top is None or rank.get(top, -1) > rank[folder]):
                bad.append("%s: calls %s, defined above it in %s" % (path, name, home))
    return bad


def main():
    lib, design = sys.argv[1], sys.argv[2]
    text = open(design, encoding="utf-8").read()
    m = re.search(r"^\s*layers, bottom first: (.+)$", text, re.M)
    d = re.search(r"^\s*drivers: (.+)$", text, re.M)
    if not m or not d:
        print("not ok 1 - docs/design.md states no order ('layers, bottom first: ...') or no drivers ('drivers: ...')")
        print("1..1")
        return 1
    order = m.group(1).split()
    drivers = set(d.group(1).split())
    rank = {name: i for i, name in enumerate(order)}
    folders = sorted(x for x in os.listdir(lib) if os.path.isdir(os.path.join(lib, x)))
    bad = ["folder %s/ is in no layer of docs/design.md" % x for x in folders if x not in rank]
    bad += ["the order names %s, which is no folder of src/lib" % x for x in order if x not in folders]
    bad += ["the drivers name %s, which is no file of src/lib" % x for x in sorted(drivers)
            if not os.path.isfile(os.path.join(lib, x))]
    files = [name for name in os.listdir(lib) if name.endswith((".c", ".h"))]
    for x in folders:
        files += [os.path.join(x, name) for name in sorted(os.listdir(os.path.join(lib, x)))
                  if name.endswith((".c", ".h"))]
    for path in sorted(files):
        folder = path.split("/")[0] if "/" in path else None
        for n, inc in includes(lib, path):
            t = inc.split("/")[0] if "/" in inc else None
            if folder is None:
                if path == "internal.h" and t is not None:
                    bad.append("internal.h:%d: includes %s (the core includes no folder's header)" % (n, inc))
                continue
            if t is None or t == folder:
                continue
            if t not in rank or folder not in rank or rank[t] > rank[folder]:
                bad.append("%s:%d: %s/ includes %s (%s)" % (path, n, folder, inc,
                           "runs up" if t in rank and folder in rank else "a folder in no layer"))
        if path != "scan.h" and re.search(r"^struct dupscan_scan \{", open(os.path.join(lib, path)).read(), re.M):
            bad.append("%s: defines struct dupscan_scan (its one place is scan.h)" % path)
        if path.endswith(".c") and path not in drivers and "scan.h" in closure(lib, path, set()):
            bad.append("%s: sees the whole scan (scan.h) and is no driver" % path)
    bad += calls_up(lib, files, rank, drivers)
    print(("not ok 1 - " if bad else "ok 1 - ") + "the library's %d folders stand in the order %s, "
          "and only %d drivers see the whole scan" % (len(folders), " < ".join(order), len(drivers)))
    for b in bad:
        print("# " + b)
    print("1..1")
    return 1 if bad else 0


sys.exit(main())
