#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read and rewrite dupscan hash caches for the tests (format in dupscan(1),
HASH CACHE), with a valid checksum, so a test can forge one.

usage: cachetool.py dump FILE
       cachetool.py forge FILE FROM TO   # TO's entry claims FROM's hashes and proof
       cachetool.py v1 FILE OUT          # the same entries as a version 1 file
"""
import ctypes
import ctypes.util
import struct
import sys

HEADER = struct.Struct("<8sIIQQQQ")
ENTRY = struct.Struct("<QQQqqQQQqII")
ENTRY_V1 = struct.Struct("<QQQqqQQII")

_xxh = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
_xxh.XXH64.restype = ctypes.c_uint64
_xxh.XXH64.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]


def load(path):
    data = open(path, "rb").read()
    magic, version, esize, count, nstrings, _, _ = HEADER.unpack_from(data, 0)
    assert magic == b"DUPSCANH" and version == 3 and esize == ENTRY.size, (magic, version, esize)
    entries = [list(ENTRY.unpack_from(data, HEADER.size + i * esize)) for i in range(count)]
    strings = data[HEADER.size + count * esize:]
    assert len(strings) == nstrings
    return entries, strings


def path_of(strings, off):
    return strings[off:strings.index(b"\0", off)].decode("utf-8", "surrogateescape")


def save(path, entries, strings, version=3):
    ent = ENTRY if version >= 2 else ENTRY_V1
    if version >= 2:
        body = b"".join(ent.pack(*e) for e in entries)
    else:  # no proof fields, the full-hash flag only
        body = b"".join(ent.pack(*(e[:7] + [e[9] & 1, e[10]])) for e in entries)
    body += strings
    head = HEADER.pack(b"DUPSCANH", version, ent.size, len(entries), len(strings),
                       _xxh.XXH64(body, len(body), 0), 0)
    with open(path, "wb") as f:
        f.write(head + body)


def find(entries, strings, suffix):
    hits = [e for e in entries if path_of(strings, e[10]).endswith("/" + suffix)]
    if len(hits) != 1:
        sys.exit(f"cachetool: {len(hits)} entries end with /{suffix}")
    return hits[0]


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    entries, strings = load(path)
    if cmd == "dump":
        for e in entries:
            print(*e[:10], path_of(strings, e[10]))
    elif cmd == "forge":
        src, dst = find(entries, strings, sys.argv[3]), find(entries, strings, sys.argv[4])
        dst[5:10] = src[5:10]  # partial, full, class, proof time, flags
        save(path, entries, strings)
    elif cmd == "v1":
        save(sys.argv[3], entries, strings, version=1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
