#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The access tree of test_access.sh, and what it checks.

access_tree.py make DIR SETS      a tree of SETS sets of copies whose files mix
                                  owners, groups, modes, ACLs and security
                                  labels (root only)
access_tree.py snap DIR           per path: what it resolves to (owner, group,
                                  mode, ACL, security.* attributes) and its
                                  content's digest, one line each
access_tree.py classes DIR        per set and class of equal access: how many
                                  inodes its paths resolve to (1: linked)
access_tree.py readable DIR       the contents (digests) this user can read
"""
import hashlib
import os
import stat
import struct
import sys

NOBODY = 65534
LABEL = "security.dupscan-test"


def acl(user_obj, named):
    """A system.posix_acl_access value: owner rwx bits, named users' read."""
    entries = [(0x01, user_obj, 0xFFFFFFFF)]
    entries += [(0x02, 4, uid) for uid in named]
    entries += [(0x04, 4, 0xFFFFFFFF), (0x10, 4, 0xFFFFFFFF), (0x20, 4, 0xFFFFFFFF)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i) for t, p, i in entries)


# (owner, group, mode, acl, label): the first is the common one
PROFILES = [
    (0, 0, 0o644, None, None),
    (NOBODY, 0, 0o644, None, None),           # another owner
    (0, 0, 0o600, None, None),                # private
    (0, NOBODY, 0o644, None, None),           # another group
    (0, 0, 0o640, acl(6, [NOBODY]), None),    # nobody may read by ACL
    (0, 0, 0o644, None, b"red"),              # a security label
]


def profile_of(s, k):
    """Set s, file k: most sets all alike, some mixed, some with the first odd."""
    kind = s % 5
    if kind in (0, 1):
        return 0 if kind == 0 else s % len(PROFILES)
    if kind == 2:
        return (k + s) % len(PROFILES)             # mixed
    if kind == 3:
        return 2 if k == 0 else 1                  # the first is the odd one
    return 0 if k < 2 else 1 + (s % 5)             # a pair alike and others


def make(top, sets, labels):
    for s in range(sets):
        n = 2 + s % 3
        content = f"set {s} ".encode() * (1 + s % 7)
        for k in range(n):
            d = os.path.join(top, f"d{k % 3}", f"s{s % 10}")
            os.makedirs(d, exist_ok=True)
            os.chmod(d, 0o755)
            p = os.path.join(d, f"f{s}-{k}")
            with open(p, "wb") as f:
                f.write(content)
            uid, gid, mode, a, label = PROFILES[profile_of(s, k)]
            os.chown(p, uid, gid)
            os.chmod(p, mode)
            if a:
                os.setxattr(p, "system.posix_acl_access", a)
            if label and labels:
                os.setxattr(p, LABEL, label)
    for d in ["d0", "d1", "d2"]:
        os.chmod(os.path.join(top, d), 0o755)


def attrs(p):
    out = []
    try:
        names = sorted(os.listxattr(p))
    except OSError:
        names = []
    for n in names:
        if n == "system.posix_acl_access" or n.startswith("security."):
            out.append(f"{n}={os.getxattr(p, n).hex()}")
    return " ".join(out)


def files(top):
    for d, dirs, names in os.walk(top):
        dirs.sort()
        for n in sorted(names):
            yield os.path.join(d, n)


def snap(top):
    for p in files(top):
        st = os.stat(p)
        digest = hashlib.sha256(open(p, "rb").read()).hexdigest()[:12]
        print(f"{os.path.relpath(p, top)} {st.st_uid}:{st.st_gid} {oct(st.st_mode & 0o7777)} {attrs(p)} {digest}")


def classes(top):
    groups = {}
    for p in files(top):
        st = os.stat(p)
        s = os.path.basename(p).split("-")[0]
        key = (s, st.st_uid, st.st_gid, st.st_mode & 0o7777, attrs(p))
        groups.setdefault(key, set()).add((st.st_dev, st.st_ino))
    for key, inodes in sorted(groups.items()):
        print(f"{key[0]} {key[1]}:{key[2]} {oct(key[3])} {len(inodes)}")


def readable(top):
    seen = set()
    for p in files(top):
        try:
            seen.add(hashlib.sha256(open(p, "rb").read()).hexdigest()[:12])
        except OSError:
            pass
    print("\n".join(sorted(seen)))


def main():
    cmd, top = sys.argv[1], sys.argv[2]
    if cmd == "make":
        labels = True
        probe = os.path.join(top, ".probe")
        os.makedirs(top, exist_ok=True)
        open(probe, "w").close()
        try:
            os.setxattr(probe, LABEL, b"x")
        except OSError:
            labels = False
        os.unlink(probe)
        make(top, int(sys.argv[3]), labels)
        print("labels" if labels else "no labels")
    elif cmd == "snap":
        snap(top)
    elif cmd == "classes":
        classes(top)
    elif cmd == "readable":
        readable(top)


if __name__ == "__main__":
    main()
