#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare duplicate-set listings (jdupes' format: paths one per line, a blank
line between sets) modulo order and hard links: each set becomes the set of
inodes it names, and sets naming fewer than two inodes are ignored.

usage: setcmp.py [--root DIR] A B     exit 0 when equal, 1 when not (with a diff summary)
"""
import os
import sys


def load(path, root):
    sets, cur = [], []
    with open(path, "rb") as f:
        for line in f.read().split(b"\n"):
            if line == b"":
                if cur:
                    sets.append(cur)
                cur = []
            else:
                cur.append(line)
    if cur:
        sets.append(cur)
    out = set()
    for s in sets:
        inodes = set()
        for p in s:
            full = os.path.join(root, p) if root else p
            st = os.lstat(full)
            inodes.add((st.st_dev, st.st_ino))
        if len(inodes) >= 2:
            out.add(frozenset(inodes))
    return out


def main():
    args = sys.argv[1:]
    root = b""
    if args and args[0] == "--root":
        root = os.fsencode(args[1])
        args = args[2:]
    a, b = load(args[0], root), load(args[1], root)
    if a == b:
        print(f"same {len(a)} sets")
        return 0
    print(f"differ: {len(a)} vs {len(b)} sets; {len(a - b)} only in first, {len(b - a)} only in second")
    return 1


if __name__ == "__main__":
    sys.exit(main())
