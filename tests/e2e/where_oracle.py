#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The figures of --summary=dirs and --overlap, computed from a tree alone
(test_where.sh): the files read and grouped by their bytes here, every pair
of directories tried, the rules of dupscan(1) applied as the man page words
them. Prints the rows as dupscan --format=json gives them, for comparison.

usage: where_oracle.py TOP PERCENT [-z]   (the scan is dupscan -r -H [-z] TOP)
"""
import json
import os
import sys


def walk(top, zero):
    """{dir: parent}, [(path, dir, size, content)] as dupscan -r -H walks top."""
    dirs, files = {top: None}, []
    for d, subdirs, names in os.walk(top):
        subdirs.sort()
        for s in subdirs:
            p = os.path.join(d, s)
            if not os.path.islink(p):
                dirs[p] = d
        for n in names:
            p = os.path.join(d, n)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            data = open(p, "rb").read()
            if data or zero:
                files.append((p, d, len(data), data))
    return dirs, files


def ancestors(dirs, d):
    while d is not None:
        yield d
        d = dirs[d]


def share_at_least(part, whole, pct):
    return part * 100 >= whole * pct


def main():
    top, pct, zero = os.fsencode(sys.argv[1]), int(sys.argv[2]), "-z" in sys.argv[3:]
    dirs, files = walk(top, zero)
    by_content = {}
    for f in files:
        by_content.setdefault(f[3], []).append(f)
    copied = {f[0] for group in by_content.values() if len(group) > 1 for f in group}
    tally = {d: [0, 0, 0, 0] for d in dirs}  # files, bytes, dup files, dup bytes
    for path, d, size, _ in files:
        for a in ancestors(dirs, d):
            t = tally[a]
            t[0] += 1
            t[1] += size
            if path in copied:
                t[2] += 1
                t[3] += size
    depth = {d: len(list(ancestors(dirs, d))) - 1 for d in dirs}
    under = {d: [f for f in files if d in ancestors(dirs, f[1])] for d in dirs}
    # shared[a, b]: a's files (count, bytes) with a copy under b, a and b unrelated
    shared = {}
    for a in dirs:
        for b in dirs:
            if a == b or a in ancestors(dirs, b) or b in ancestors(dirs, a):
                continue
            inb = {f[3] for f in under[b]}
            mine = [f for f in under[a] if f[3] in inb]
            if mine:
                shared[a, b] = (len(mine), sum(f[2] for f in mine))
    sel = {k for k, v in shared.items() if share_at_least(v[1], tally[k[0]][1], pct) and tally[k[0]][1] > 0}
    # a directory whose files all lie under one of its subdirectories
    wrapper = {p for d, p in dirs.items() if p is not None and 0 < tally[d][0] == tally[p][0]}
    hidden = set()
    for a, b in sel:
        if a in wrapper or b in wrapper:
            hidden.add((a, b))  # the subdirectory it wraps is named
        pb = dirs[b]
        def far_closer(x, near, far):
            # far is the copy: more of its own bytes have a copy in x (a pair
            # below the share counts as less), then its size is closer to x's
            sn, sf = (near, x) in sel, (far, x) in sel
            if sn != sf:
                return sf
            if sn:
                lhs, rhs = shared[far, x][1] * tally[near][1], shared[near, x][1] * tally[far][1]
                if lhs != rhs:
                    return lhs > rhs
            return abs(tally[far][1] - tally[x][1]) < abs(tally[near][1] - tally[x][1])
        def hide_row(x, y):
            hidden.add((x, y)); hidden.add((y, x))
        if pb is not None and (a, pb) in sel and shared[a, pb][1] == shared[a, b][1]:
            # a subdirectory of pb holds as much of a: named, unless pb's size is closer to a's
            hide_row(a, b) if far_closer(a, b, pb) else hide_row(a, pb)
        pa0 = dirs[a]
        if pa0 is not None and (pa0, b) in sel and shared[pa0, b][1] == shared[a, b][1]:
            # a subdirectory of a's parent has as many bytes in b: the same, the other way round
            hide_row(a, b) if far_closer(b, a, pa0) else hide_row(pa0, b)
        pa = dirs[a]
        while pa is not None and pa in wrapper:
            pa = dirs[pa]  # past the folders that only wrap a
        pbp = dirs[b]
        while pbp is not None and pbp in wrapper:
            pbp = dirs[pbp]  # past the folders that only wrap b
        for y in (b, pb, pbp):
            if pa is not None and y is not None and (pa, y) in sel and \
                    shared[pa, y][1] * tally[a][1] >= shared[a, b][1] * tally[pa][1]:
                hidden.add((a, b))  # a's parent has as large a share
        for y in list(ancestors(dirs, b))[1:]:
            if (a, y) in shared and shared[a, y][1] > shared[a, b][1]:
                hidden.add((a, b))  # a folder above b holds more of a
    # two folders that are whole copies of each other: every pair inside them
    whole = {(a, b) for a, b in sel if (b, a) in sel and shared[a, b][1] == tally[a][1] and shared[b, a][1] == tally[b][1]
             and a not in wrapper and b not in wrapper}
    for a, b in sel:
        if any((x, y) in whole for x in list(ancestors(dirs, a))[1:] for y in list(ancestors(dirs, b))[1:]):
            hidden.add((a, b))
    shown = sel - hidden
    rows, done = [], set()
    for a, b in sorted(shown):
        if (b, a) in done:
            continue
        done.add((a, b))
        sides = [(a, shared[a, b]), (b, shared.get((b, a), (0, 0)))]
        if sides[1][1][1] > sides[0][1][1] or (sides[1][1][1] == sides[0][1][1] and sides[1][0] < sides[0][0]):
            sides.reverse()
        rows.append(sides)
    rows.sort(key=lambda r: (-r[0][1][1], r[0][0], r[1][0]))

    def name(d):
        return os.fsdecode(d if d.endswith(b"/") else d + b"/")

    def side(d, s):
        return {"path": name(d), "percent": next(p for p in range(100, -1, -1) if share_at_least(s[1], tally[d][1], p)),
                "files": s[0], "filesTotal": tally[d][0], "bytes": s[1], "bytesTotal": tally[d][1]}
    out = {"overlaps": [{"a": side(r[0][0], r[0][1]), "b": side(r[1][0], r[1][1])} for r in rows],
           "directories": sorted(({"path": name(d), "depth": depth[d], "files": t[0], "bytes": t[1], "dupFiles": t[2],
                                   "dupBytes": t[3],
                                   "percent": next(p for p in range(100, -1, -1) if share_at_least(t[3], t[1], p))}
                                  for d, t in tally.items() if t[2] > 0),
                                 key=lambda e: (-e["dupBytes"], os.fsencode(e["path"])))}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


main()
